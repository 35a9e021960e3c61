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
//! per round printed at the start. Run: `cargo bench -p ledger-audit --bench replay`.

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

criterion_group!(benches, replay);
criterion_main!(benches);
