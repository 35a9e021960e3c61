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
    let push = |device: &str, at: i64, payload, out: &mut Vec<v1::ChainEntry>| {
        out.push(v1::ChainEntry {
            format: 1,
            index: out.len() as u64 + 1,
            received_at_ms: at,
            kind: v1::RecordKind::Event as i32,
            body: v1::EventBody {
                device_id: device.to_string(),
                sequence: 0,
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
                    public_key: vec![0; 32],
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
