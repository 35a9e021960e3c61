//! The follower (commits on their own thread, snapshots, resume): a replay interrupted after a
//! snapshot and resumed gives exactly the findings and digest of one uninterrupted replay, and
//! what is committed after the last snapshot is replayed again, never duplicated.

use std::time::Duration;

use ledger_audit::live::{FollowError, Follower};
use ledger_audit::replay::{Replayer, settings};
use ledger_audit::store::{AuditStore, FindingFilter};
use ledger_proto::v1;
use prost::Message;

/// The standard session (with its mistakes) as chain entries, in time order.
fn entries() -> Vec<v1::ChainEntry> {
    let plan = casino_sim::standard_plan(5, 1_767_225_600_000, 40, true, "op", "reg");
    let s = casino_sim::generate(&plan).unwrap();
    let mut out = Vec::new();
    // Each device's events are numbered from 1, as ingest requires.
    let mut sequences = std::collections::HashMap::<String, u64>::new();
    let mut push = |device: &str, at: i64, payload, out: &mut Vec<v1::ChainEntry>| {
        let sequence = sequences.entry(device.to_string()).or_default();
        *sequence += 1;
        out.push(v1::ChainEntry {
            format: 1,
            index: out.len() as u64 + 1,
            received_at_ms: at,
            kind: v1::RecordKind::Event as i32,
            body: v1::EventBody {
                device_id: device.to_string(),
                sequence: *sequence,
                occurred_at_ms: at,
                payload: Some(payload),
            }
            .encode_to_vec(),
            ..Default::default()
        });
    };
    for d in &s.devices {
        if d.kind == ledger_core::DeviceKind::Machine {
            push(
                "op",
                plan.start_ms,
                v1::event_body::Payload::DeviceRegistered(v1::DeviceRegistered {
                    device_id: d.device_id.clone(),
                    // The base point's encoding: a key of large order (a weak one is refused).
                    public_key: [&[0x58u8][..], &[0x66; 31]].concat(),
                    kind: v1::DeviceKind::Machine as i32,
                    casino_id: d.casino_id.clone(),
                    machine_id: d.machine_id.clone(),
                    model_id: d.model_id.clone(),
                    bet_values_cents: d.bet_values_cents.clone(),
                    ..Default::default()
                }),
                &mut out,
            );
        }
    }
    for e in &s.events {
        push(&e.device_id, e.occurred_at_ms, e.payload.clone(), &mut out);
    }
    out
}

fn ok(
    entries: &[v1::ChainEntry],
) -> impl Iterator<Item = Result<v1::ChainEntry, FollowError>> + '_ {
    entries.iter().cloned().map(Ok)
}

#[test]
fn an_interrupted_replay_resumes_from_its_snapshot_without_duplicates_or_gaps() {
    let entries = entries();
    // The reference: one replayer, no store.
    let mut r = Replayer::new(settings(false));
    let (mut want, mut rounds) = (Vec::new(), Vec::new());
    for e in &entries {
        let step = r.apply(e);
        want.extend(step.findings);
        rounds.extend(step.rounds);
    }
    assert!(want.len() >= 5, "the mistakes are found: {}", want.len());
    let digest = r.digest();

    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let half = entries.len() / 2;
    let snapshot_at = entries[half - 1].index;
    {
        let mut f = Follower::open(dir.path(), false).unwrap();
        f.set_snapshot_every(Duration::ZERO);
        f.apply_all(ok(&entries[..half]), |_| {}).unwrap();
    }
    // The live audit went on and committed more findings and rounds, then died before its next
    // snapshot.
    {
        let store = AuditStore::open(dir.path()).unwrap();
        let later: Vec<_> = want
            .iter()
            .filter(|f| f.evidence.last().is_some_and(|i| *i > snapshot_at))
            .cloned()
            .collect();
        assert!(!later.is_empty(), "findings after the snapshot");
        let later_rounds: Vec<_> = rounds
            .iter()
            .filter(|r| r.closed_index > snapshot_at)
            .cloned()
            .collect();
        store.commit(&later, &later_rounds, &[], None).unwrap();
        store.flush().unwrap();
        assert_eq!(store.finding_count().unwrap(), want.len() as u64);
    }
    let mut f = Follower::open(dir.path(), false).unwrap();
    assert_eq!(
        f.position(),
        Some(snapshot_at),
        "resumes from the snapshot, not from what was committed after it"
    );
    f.apply_all(ok(&entries), |_| {}).unwrap();
    let got = f
        .store()
        .findings(&FindingFilter::default(), None, usize::MAX)
        .unwrap();
    assert_eq!(
        got, want,
        "the same findings, seq 0.. without a gap or a duplicate"
    );
    let replayer = f.replayer();
    assert_eq!(replayer.read().unwrap().digest(), digest);
    assert_eq!(
        *f.committed().read().unwrap(),
        entries.last().map(|e| e.index)
    );
    drop(replayer);
    // Reopened after a clean end: nothing left to replay.
    drop(f);
    let f = Follower::with_store(AuditStore::open(dir.path()).unwrap(), false).unwrap();
    assert_eq!(f.position(), entries.last().map(|e| e.index));
}

#[test]
fn a_replay_that_keeps_no_rounds_still_commits_every_finding() {
    let entries = entries();
    let mut r = Replayer::new(settings(false));
    let want: Vec<_> = entries.iter().flat_map(|e| r.apply(e).findings).collect();
    let mut f = Follower::with_store(AuditStore::temporary().unwrap(), false).unwrap();
    f.set_keep_rounds(false);
    f.apply_all(ok(&entries), |_| {}).unwrap();
    let store = f.store();
    let got = store
        .findings(&FindingFilter::default(), None, usize::MAX)
        .unwrap();
    assert_eq!(got, want);
    let all = audit::Period {
        from_ms: i64::MIN,
        to_ms: i64::MAX,
    };
    assert_eq!(store.rounds_in(all).unwrap(), vec![]);
    assert_eq!(f.replayer().read().unwrap().digest(), r.digest());
}

/// The jackpot book's per-event detail goes to the derived store, not into the book: over a
/// chain stretched across five days (so that day totals are written), replayed with an
/// interruption and a resume, every machine's increases summed by the store over a period
/// (whole days from their totals) equal the sum of the increases the replayer handed out, one
/// by one; every pool's history read from the store is the lines handed out; and the book,
/// hence its snapshot, holds none of it.
#[test]
fn the_books_detail_goes_to_the_store_and_the_queries_read_it_there() {
    use jackpot::{DeltaSum, Detail, DetailSource, Period};
    let mut entries = entries();
    let start = entries[0].received_at_ms;
    let span = entries.last().unwrap().received_at_ms - start;
    assert!(span > 0);
    let k = (5 * 86_400_000) / span + 1;
    for e in &mut entries {
        e.received_at_ms = start + (e.received_at_ms - start) * k;
    }
    // What the replayer hands out, entry by entry.
    let mut r = Replayer::new(settings(false));
    let mut deltas = Vec::new();
    let mut lines = std::collections::BTreeMap::new();
    let mut day_totals = 0;
    for e in &entries {
        for d in r.apply(e).detail {
            match d {
                Detail::Delta { machine_id, delta } => deltas.push((machine_id, delta)),
                Detail::PoolLine {
                    pool_id,
                    position,
                    entry,
                } => {
                    assert!(lines.insert((pool_id, position), entry).is_none());
                }
                Detail::DayTotal { .. } => day_totals += 1,
                Detail::Event { .. } => {}
            }
        }
    }
    assert!(deltas.len() > 20 && lines.len() > 20 && day_totals > 5);
    let book = r.book();
    assert!(book.pools().all(|p| p.history.is_empty()));
    assert!(book.machines().all(|m| m.deltas.is_empty()));
    assert!(book.findings().is_empty());
    // The same through the follower and its store, interrupted after a snapshot and resumed.
    let dir = tempfile::tempdir().unwrap();
    {
        let mut f = Follower::open(dir.path(), false).unwrap();
        f.set_snapshot_every(Duration::ZERO);
        f.apply_all(ok(&entries[..entries.len() / 2]), |_| {})
            .unwrap();
    }
    let mut f = Follower::open(dir.path(), false).unwrap();
    f.apply_all(ok(&entries), |_| {}).unwrap();
    let store = f.store();
    let replayer = f.replayer();
    let replayer = replayer.read().unwrap();
    assert_eq!(replayer.digest(), r.digest());
    let book = replayer.book();
    let day = 86_400_000;
    let first_day = start.div_euclid(day);
    let end = entries.last().unwrap().received_at_ms;
    let periods = [
        Period::All,
        Period::Times {
            from_ms: start,
            to_ms: end + 1,
        },
        Period::Times {
            from_ms: (first_day + 1) * day,
            to_ms: (first_day + 4) * day,
        },
        Period::Times {
            from_ms: start + day / 2,
            to_ms: end - day / 3,
        },
        Period::Indexes {
            from: 50,
            to: entries.len() as u64 / 2,
        },
    ];
    for m in book.machines() {
        for period in periods {
            let mut naive = DeltaSum::default();
            for (id, d) in &deltas {
                if *id == m.id && period.contains(d.index, d.at_ms) {
                    naive.add(d);
                }
            }
            assert_eq!(
                store.delta_sum(&m.id, period).unwrap(),
                naive,
                "machine {}, {period:?}",
                m.id
            );
            let r = book.machine_return_from(&store, &m.id, period).unwrap();
            assert_eq!(r.readings, naive.readings);
            assert_eq!(r.coin_in_cents, naive.coin_in);
        }
    }
    for p in book.pools() {
        let want: Vec<_> = lines
            .range((p.id.clone(), 0)..)
            .take_while(|((id, _), _)| *id == p.id)
            .map(|(_, e)| e.clone())
            .collect();
        let page = book
            .pool_history_page_from(&store, &p.id, None, usize::MAX)
            .unwrap();
        assert_eq!(page.first, 0);
        assert_eq!(page.history, want, "pool {}", p.id);
        assert_eq!(page.pool.history_lines, want.len() as u64);
        let newest = book.pool_history_page_from(&store, &p.id, None, 2).unwrap();
        assert_eq!(newest.history, want[want.len().saturating_sub(2)..]);
    }
}

/// A device whose clock runs five minutes ahead: one drift finding for the whole episode,
/// however many events it sends, found alike by every replay (from the chain alone); none with
/// a threshold above the drift, none with the check off, none for the honest session.
#[test]
fn a_device_clock_ahead_is_one_finding_per_episode() {
    use ledger_audit::replay::settings_with;
    let honest = entries();
    let device_of = |e: &v1::ChainEntry| v1::EventBody::decode(e.body.as_slice()).unwrap();
    let dev = device_of(&honest[honest.len() / 2]).device_id;
    let mut ahead = honest.clone();
    let mut shifted = 0;
    for e in &mut ahead {
        let mut b = device_of(e);
        if b.device_id == dev {
            b.occurred_at_ms += 5 * 60_000;
            e.body = b.encode_to_vec();
            shifted += 1;
        }
    }
    assert!(shifted > 3, "{dev} sends {shifted} events");
    let drift = |entries: &[v1::ChainEntry], s| {
        let mut r = Replayer::new(s);
        entries
            .iter()
            .flat_map(|e| r.apply(e).findings)
            .filter(|f| f.code == audit::codes::DEVICE_CLOCK_DRIFT)
            .collect::<Vec<_>>()
    };
    let found = drift(&ahead, settings(false));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].device_id.as_deref(), Some(dev.as_str()));
    assert!(found[0].message.contains("ahead"), "{}", found[0].message);
    assert_eq!(drift(&ahead, settings(false)), found, "every replay alike");
    assert!(drift(&ahead, settings_with(false, 10 * 60_000)).is_empty());
    assert!(drift(&ahead, settings_with(false, 0)).is_empty());
    assert!(drift(&honest, settings(false)).is_empty());
}
