//! Playing a simulated casino session (`casino-sim`) against the real ledgerd over gRPC, and
//! reading the live audit back. Included by the audit end-to-end tests (`#[path]` module).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use casino_play::session::{self, Keys, SignOptions, SignedSession};
use casino_play::sim;
use e2e::*;
use ledger_core::proto::{self as v1, audit_client::AuditClient, event_body::Payload as P};
use prost::Message;

pub const OPERATOR: &str = "operator-1";

/// Derive the devices' keys from `seed` and sign the whole session (on every core), dated so
/// that it ends a minute ago.
pub fn sign(session: &sim::Session, seed: u64) -> SignedSession {
    let op = operator_key();
    let keys = Keys::derive(seed, &session.devices, &[(OPERATOR, &op)], OPERATOR);
    let offset = now_ms() - session.end_ms - 60_000;
    session::sign_session(
        session,
        &keys,
        &SignOptions {
            offset_ms: offset,
            registered_at_ms: offset,
            operator_next_sequence: 1,
            threads: 0,
        },
    )
    .expect("sign the session")
}

fn assert_stored(what: &str, receipts: &[v1::Receipt]) {
    if let Some(bad) = session::first_refused(receipts) {
        panic!("{what}: refused: {bad:?}");
    }
}

/// Register every device, then stream the session's opening (alone, in time order).
pub async fn register_and_open(url: &str, signed: &SignedSession) {
    let r = ledger_agent::submit_all(url, &signed.registrations, &Default::default())
        .await
        .expect("register");
    assert_stored("registration", &r);
    let r = ledger_agent::submit_shared(url, signed.opening.envelopes.clone(), &Default::default())
        .await
        .expect("opening");
    assert_stored("opening", &r);
}

/// Agents that keep going through server restarts.
pub fn patient() -> ledger_agent::ClientOptions {
    ledger_agent::ClientOptions {
        max_attempts: 400,
        backoff: Duration::from_millis(50),
        ..Default::default()
    }
}

/// Stream every group concurrently (one agent each); every envelope must be stored.
pub async fn stream(url: &str, signed: &SignedSession, opts: &ledger_agent::ClientOptions) {
    let receipts = session::stream_groups(url, &signed.groups, opts)
        .await
        .expect("stream the session");
    for (g, r) in signed.groups.iter().zip(&receipts) {
        assert_eq!(r.len(), g.envelopes.len(), "{}", g.name);
        assert_stored(&g.name, r);
    }
}

pub async fn status(url: &str) -> v1::AuditStatus {
    let ch = ledger_agent::connect(url).await.expect("connect");
    AuditClient::new(ch)
        .get_status(v1::AuditStatusRequest {})
        .await
        .expect("GetStatus")
        .into_inner()
}

/// Wait until the live audit has committed everything up to the head.
pub async fn wait_caught_up(url: &str, timeout: Duration) -> v1::AuditStatus {
    let deadline = Instant::now() + timeout;
    loop {
        let s = status(url).await;
        assert!(s.halted.is_empty(), "the live audit stopped: {}", s.halted);
        if s.position >= 0 && s.position as u64 >= s.head && !s.findings_digest.is_empty() {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "the live audit did not catch up: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every finding, over gRPC (paged).
pub async fn findings(url: &str) -> Vec<v1::Finding> {
    let ch = ledger_agent::connect(url).await.expect("connect");
    let mut client = AuditClient::new(ch).max_decoding_message_size(64 << 20);
    let mut req = v1::ListFindingsRequest {
        limit: 1000,
        ..Default::default()
    };
    let mut out = Vec::new();
    loop {
        let page = client
            .list_findings(req.clone())
            .await
            .expect("ListFindings")
            .into_inner();
        out.extend(page.findings);
        match page.next_after_seq {
            Some(s) => req.after_seq = Some(s),
            None => return out,
        }
    }
}

/// The findings' sequence numbers are 0, 1, 2, … and their ids are all different.
pub fn assert_contiguous_and_unique(found: &[v1::Finding]) {
    for (i, f) in found.iter().enumerate() {
        assert_eq!(
            f.seq, i as u64,
            "finding sequence numbers run from 0 without a gap"
        );
    }
    let mut ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), found.len(), "no finding twice");
}

/// What a finding is about, as `casino_sim::Expected` names it.
pub fn subject(f: &v1::Finding) -> String {
    [
        if f.round_id.is_empty() {
            ""
        } else {
            &f.table_id
        },
        &f.pool_id,
        &f.machine_id,
        &f.table_id,
        &f.device_id,
    ]
    .into_iter()
    .find(|s| !s.is_empty())
    .unwrap_or_default()
    .to_string()
}

pub type Key = (String, String, Option<String>);

pub fn key(f: &v1::Finding) -> Key {
    (
        f.code.clone(),
        subject(f),
        (!f.round_id.is_empty()).then(|| f.round_id.clone()),
    )
}

pub fn expected_keys(expected: &[sim::Expected]) -> Vec<Key> {
    let mut v: Vec<Key> = expected
        .iter()
        .map(|e| (e.code.clone(), e.subject.clone(), e.round_id.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

pub fn describe(found: &[v1::Finding]) -> String {
    found
        .iter()
        .map(|f| {
            format!(
                "  #{} {} {} {:?} bet {:?} due {:?} reported {:?}: {}",
                f.seq,
                f.code,
                subject(f),
                f.round_id,
                f.bet_id,
                f.due_cents,
                f.reported_cents,
                f.message
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The session as the chain would hold it, in the session's own time order (as
/// `casino-sim`'s library-level test builds it): the oracle the ledger's findings are compared
/// with. Signatures are `verify`'s business, not the audit's.
pub fn library_findings(s: &sim::Session) -> Vec<audit::Finding> {
    let mut seq: BTreeMap<String, u64> = BTreeMap::new();
    let mut replayer = ledger_audit::replay::Replayer::new(ledger_audit::replay::settings(false));
    let mut index = 0u64;
    let mut out = Vec::new();
    let mut add = |device: &str, at: i64, payload: P| {
        let n = seq.entry(device.to_string()).or_insert(0);
        *n += 1;
        index += 1;
        let entry = v1::ChainEntry {
            format: 1,
            index,
            received_at_ms: at,
            kind: v1::RecordKind::Event as i32,
            body: v1::EventBody {
                device_id: device.to_string(),
                sequence: *n,
                occurred_at_ms: at,
                payload: Some(payload),
            }
            .encode_to_vec(),
            ..Default::default()
        };
        out.extend(replayer.apply(&entry).findings);
    };
    for d in &s.devices {
        let key = casino_play::session::derived_key(0, &d.device_id);
        add(
            OPERATOR,
            0,
            casino_play::registration(d, &key.verifying_key()),
        );
    }
    for e in &s.events {
        add(&e.device_id, e.occurred_at_ms, e.payload.clone());
    }
    out
}

/// Run `ledgerctl audit …--json` and return its JSON document.
pub fn ledgerctl_audit(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json", "audit"];
    all.extend_from_slice(args);
    let (code, out, err) = ledgerctl(&all);
    assert_eq!(code, 0, "ledgerctl {all:?}: {out}{err}");
    serde_json::from_str(out.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("ledgerctl {all:?} printed no JSON ({e}): {out}"))
}

pub fn digest_of(doc: &serde_json::Value) -> (u64, String) {
    (
        doc["findings"].as_u64().expect("findings"),
        doc["findings_digest"]
            .as_str()
            .expect("findings_digest")
            .to_string(),
    )
}
