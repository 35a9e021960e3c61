//! Full-replay throughput of the audit, signatures excluded (they are `verify`'s business): chain
//! entries of simulated table rounds (`casino-sim`: one table of every game, honest play, the
//! standard session without its slot floor), pre-built and encoded as ledgerd stores them, fed to
//!
//! * `replayer`: `Replayer::apply` alone (decode and convert each entry, the auditor's round
//!   bookkeeping, every game's rule engine, the table jackpots' accounts);
//! * `follower`: the same through `Follower::apply_all` into a (temporary) audit store, as
//!   `ledgerctl audit --from-genesis` runs it: plus the commits of rounds and findings.
//!
//! Throughput is in chain entries (events) per second; rounds per second = events/s ÷ the events
//! per round printed at the start.
//!
//! `detail`: the jackpot queries over the audit store, on a floor of [`FLOOR_MACHINES`] machines
//! read every 15 minutes for [`FLOOR_DAYS`] days (a book handing its detail out, committed as
//! the follower commits it): one machine's return over a day, a week and the whole month (whole
//! days from their totals), the month again with every increase read one by one (a period by
//! ledger index), and a page of every machine's return over the month. It also prints what the
//! book's JSON (a snapshot's jackpot part) weighs at the end, handing out and holding.
//!
//! Run: `cargo bench -p ledger-audit --bench replay`.

use std::collections::BTreeMap;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use ledger_audit::live::{FollowError, Follower};
use ledger_audit::replay::{Replayer, settings};
use ledger_audit::store::AuditStore;
use ledger_proto::v1;
use prost::Message;

/// Rounds per table (16 tables).
const ROUNDS: usize = 250;

/// The allocator the binaries use (ledgerctl, ledgerd).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The chain entries of the tables' session, in time order, and the number of rounds.
pub fn table_entries(rounds: usize) -> (Vec<v1::ChainEntry>, usize) {
    let mut plan = casino_sim::standard_plan(2026, 1_767_225_600_000, rounds, false, "op", "reg");
    plan.floor = Default::default();
    plan.hit_odds.clear();
    let s = casino_sim::generate(&plan).expect("a session");
    let mut seq: BTreeMap<&str, u64> = BTreeMap::new();
    let entries = s
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let n = seq.entry(e.device_id.as_str()).or_insert(0);
            *n += 1;
            v1::ChainEntry {
                format: 1,
                index: i as u64 + 1,
                received_at_ms: e.occurred_at_ms,
                kind: v1::RecordKind::Event as i32,
                body: v1::EventBody {
                    device_id: e.device_id.clone(),
                    sequence: *n,
                    occurred_at_ms: e.occurred_at_ms,
                    payload: Some(e.payload.clone()),
                }
                .encode_to_vec(),
                signature: vec![0x5a; 64],
                ..Default::default()
            }
        })
        .collect();
    (entries, s.rounds)
}

fn replay(c: &mut Criterion) {
    let (entries, rounds) = table_entries(ROUNDS);
    eprintln!(
        "{} entries, {rounds} rounds ({:.1} events a round)",
        entries.len(),
        entries.len() as f64 / rounds as f64
    );
    // Sanity: an honest session gives no finding.
    let mut r = Replayer::new(settings(false));
    let findings: usize = entries.iter().map(|e| r.apply(e).findings.len()).sum();
    assert_eq!(findings, 0, "the honest session gives no finding");

    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.bench_function("replayer", |b| {
        b.iter(|| {
            let mut r = Replayer::new(settings(false));
            for e in &entries {
                std::hint::black_box(r.apply(e));
            }
            r.position()
        })
    });
    g.bench_function("follower", |b| {
        b.iter_batched(
            || {
                Follower::with_store(AuditStore::temporary().expect("a store"), false)
                    .expect("a follower")
            },
            |mut f| {
                f.apply_all(entries.iter().cloned().map(Ok::<_, FollowError>), |_| {})
                    .expect("replay");
                f // dropped (the temporary store deleted) outside the measurement
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// Machines on the floor of the `detail` benches.
const FLOOR_MACHINES: usize = 200;
/// Days of readings, every 15 minutes.
const FLOOR_DAYS: i64 = 30;

fn detail(c: &mut Criterion) {
    use jackpot::{
        Book, COIN_IN, COIN_OUT, DetailSource, Event, EventCtx, GAMES_PLAYED, MachineRegistered,
        Meter, MeterReading, ModelApproved, Period, TOTAL_DROP,
    };
    const DAY: i64 = 86_400_000;
    let start = 1_767_225_600_000i64; // 2026-01-01T00:00Z
    let store = AuditStore::temporary().expect("a store");
    let mut book = Book::new();
    book.hand_out_detail();
    let mut held = Book::new();
    let mut index = 0u64;
    let mut apply = |book: &mut Book, held: &mut Book, e: Event, at_ms: i64| {
        index += 1;
        let ctx = EventCtx {
            ledger_index: index,
            at_ms,
        };
        book.apply(&e, ctx).expect("applies");
        held.apply(&e, ctx).expect("applies");
    };
    let model = Event::ModelApproved(ModelApproved {
        model_id: "M".into(),
        theoretical_rtp_bp: 9_200,
        bet_values_cents: vec![100],
        approval_ref: String::new(),
    });
    apply(&mut book, &mut held, model, start);
    let id = |m: usize| format!("m{m:04}");
    for m in 0..FLOOR_MACHINES {
        let e = Event::MachineRegistered(MachineRegistered {
            machine_id: id(m).into(),
            casino_id: "C".into(),
            model_id: "M".into(),
            bet_values_cents: vec![100],
        });
        apply(&mut book, &mut held, e, start);
    }
    let readings = FLOOR_DAYS * 96;
    for r in 0..=readings {
        let at = start + r * 15 * 60_000;
        for m in 0..FLOOR_MACHINES {
            let played = (r as u64) * (1_000 + m as u64);
            let e = Event::MeterReading(MeterReading {
                machine_id: id(m).into(),
                meters: vec![
                    Meter::new(COIN_IN, played * 100, 0),
                    Meter::new(COIN_OUT, played * 92, 0),
                    Meter::new(TOTAL_DROP, played * 30, 0),
                    Meter::new(GAMES_PLAYED, played, 0),
                ],
            });
            apply(&mut book, &mut held, e, at);
        }
        store
            .commit(&[], &[], &book.take_detail(), None)
            .expect("commit");
    }
    let json = |b: &Book| serde_json::to_vec(b).map(|v| v.len()).unwrap_or(0);
    eprintln!(
        "{FLOOR_MACHINES} machines, {} readings each over {FLOOR_DAYS} days: the book's JSON \
         {} bytes handing its detail out, {} bytes holding it",
        readings + 1,
        json(&book),
        json(&held)
    );
    let month = Period::Times {
        from_ms: start,
        to_ms: start + FLOOR_DAYS * DAY,
    };
    let m = id(7);
    let want = held.machine_return(&m, month).expect("a return");
    assert_eq!(
        book.machine_return_from(&store, &m, month)
            .expect("a return"),
        want
    );
    let mut g = c.benchmark_group("detail");
    g.sample_size(20);
    for (name, period) in [
        (
            "one machine, a day",
            Period::Times {
                from_ms: start + 3 * DAY + 3_600_000,
                to_ms: start + 4 * DAY + 3_600_000,
            },
        ),
        (
            "one machine, a week",
            Period::Times {
                from_ms: start + 3 * DAY + 3_600_000,
                to_ms: start + 10 * DAY + 3_600_000,
            },
        ),
        ("one machine, the month", month),
        (
            "one machine, the month, every increase read",
            Period::Indexes {
                from: 0,
                to: u64::MAX,
            },
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| store.delta_sum(&m, period).expect("a sum"))
        });
    }
    g.bench_function("every machine's return, the month", |b| {
        b.iter(|| {
            book.machine_overviews_page(&store, month, None, FLOOR_MACHINES)
                .expect("a page")
                .len()
        })
    });
    g.finish();
}

criterion_group!(benches, replay, detail);
criterion_main!(benches);
