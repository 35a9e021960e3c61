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
        store.commit(&later, &later_rounds, None).unwrap();
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

/// The jackpot book's per-event detail kept for a number of days of ledger time: over a chain
/// stretched across several days, a replay that keeps one day gives exactly the findings and
/// digest of one that keeps everything, holds no detail from before its horizon, and carries
/// its schedule through a snapshot.
#[test]
fn detail_retention_bounds_the_book_and_changes_no_finding() {
    let mut entries = entries();
    let start = entries[0].received_at_ms;
    let span = entries.last().unwrap().received_at_ms - start;
    assert!(span > 0);
    // About five days from the first entry to the last.
    let k = (5 * 86_400_000) / span + 1;
    for e in &mut entries {
        e.received_at_ms = start + (e.received_at_ms - start) * k;
    }
    let replay = |days: u32| {
        let mut r = Replayer::new(settings(false));
        r.set_detail_days(days);
        let mut found = Vec::new();
        for e in &entries {
            found.extend(r.apply(e).findings);
        }
        (r, found)
    };
    let (all, want) = replay(0);
    let (one, got) = replay(1);
    assert!(want.len() >= 5, "the mistakes are found: {}", want.len());
    assert_eq!(got, want, "retention changes no finding");
    assert_eq!(one.digest(), all.digest());
    let horizon = one
        .book()
        .detail_from()
        .expect("days went by: detail was cut");
    assert!(all.book().detail_from().is_none());
    let last_day = entries
        .last()
        .unwrap()
        .received_at_ms
        .div_euclid(86_400_000);
    assert_eq!(
        horizon.at_ms,
        (last_day - 1) * 86_400_000,
        "one whole day kept"
    );
    // Nothing older than the horizon is held; everything after it is, as without retention:
    // (meter increases, pool history lines) in all, and at or after the horizon.
    let detail = |r: &Replayer, from: u64| -> (usize, usize) {
        let b = r.book();
        let deltas = b
            .machine_overviews(jackpot::Period::All)
            .iter()
            .map(|m| {
                let m = b.machine(&m.machine.id).unwrap();
                m.deltas.iter().filter(|d| d.index >= from).count()
            })
            .sum();
        let lines = b
            .captive_values()
            .iter()
            .map(|c| {
                let p = b.pool(&c.pool_id).unwrap();
                p.history.iter().filter(|e| e.index >= from).count()
            })
            .sum();
        (deltas, lines)
    };
    let (everything, kept) = (detail(&all, 0), detail(&all, horizon.index));
    assert!(
        everything.0 + everything.1 > kept.0 + kept.1,
        "some detail was older than a day: {everything:?} {kept:?}"
    );
    assert_eq!(detail(&one, 0), kept);
    // Captive values and lifetime figures do not depend on it.
    assert_eq!(one.book().captive_values(), all.book().captive_values());
    // The schedule travels with the snapshot; a snapshot without it (older) reads as "off".
    let snap = one.snapshot();
    let json = serde_json::to_value(&snap).unwrap();
    assert!(json.get("detail").is_some());
    let back: ledger_audit::replay::ReplayerSnapshot = serde_json::from_value(json).unwrap();
    assert_eq!(back.detail, snap.detail);
    let mut old = serde_json::to_value(all.snapshot()).unwrap();
    assert!(old.get("detail").is_none(), "no retention, nothing written");
    old.as_object_mut().unwrap().remove("detail");
    let back: ledger_audit::replay::ReplayerSnapshot = serde_json::from_value(old).unwrap();
    assert_eq!(back.detail, Default::default());
}
