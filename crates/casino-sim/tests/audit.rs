//! A whole simulated session, as chain entries, replayed by the real audit: exactly the injected
//! mistakes are found, nothing else; an honest session gives no finding at all.

use std::collections::BTreeMap;

use casino_sim::{Expected, Session, generate, standard_plan};
use ledger_audit::replay::{Replayer, settings};
use ledger_core::DeviceKind;
use ledger_proto::v1::{self, event_body::Payload as P};
use prost::Message;

fn registration(d: &casino_sim::DeviceSpec, n: u8) -> P {
    let key = ed25519_dalek::SigningKey::from_bytes(&[n.wrapping_add(7); 32]);
    P::DeviceRegistered(v1::DeviceRegistered {
        device_id: d.device_id.clone(),
        public_key: key.verifying_key().to_bytes().to_vec(),
        kind: match d.kind {
            DeviceKind::Table => v1::DeviceKind::Table,
            DeviceKind::Machine => v1::DeviceKind::Machine,
        } as i32,
        casino_id: d.casino_id.clone(),
        table_ids: d.table_ids.clone(),
        machine_id: d.machine_id.clone(),
        model_id: d.model_id.clone(),
        bet_values_cents: d.bet_values_cents.clone(),
        description: d.description.clone(),
    })
}

/// The session as the chain would hold it (signatures are `verify`'s business, not the audit's).
fn chain(s: &Session, start_ms: i64) -> Vec<v1::ChainEntry> {
    let mut seq: BTreeMap<String, u64> = BTreeMap::new();
    let mut entries = Vec::new();
    let mut add = |device: &str, at: i64, payload: P, entries: &mut Vec<v1::ChainEntry>| {
        let n = seq.entry(device.to_string()).or_insert(0);
        *n += 1;
        let body = v1::EventBody {
            device_id: device.to_string(),
            sequence: *n,
            occurred_at_ms: at,
            payload: Some(payload),
        };
        // What the simulator makes, mistakes included, is what ingest accepts: a malformed
        // body would be refused before the audit saw the mistake.
        if let Err(e) = ledger_core::Event::from_proto(body.clone()) {
            panic!("the simulator made a malformed event: {e}\n{body:?}");
        }
        let index = entries.len() as u64 + 1;
        entries.push(v1::ChainEntry {
            format: 1,
            index,
            received_at_ms: at,
            kind: v1::RecordKind::Event as i32,
            body: body.encode_to_vec(),
            ..Default::default()
        });
    };
    for (i, d) in s.devices.iter().enumerate() {
        add("operator", start_ms, registration(d, i as u8), &mut entries);
    }
    for e in &s.events {
        add(
            &e.device_id,
            e.occurred_at_ms,
            e.payload.clone(),
            &mut entries,
        );
    }
    entries
}

fn found(entries: &[v1::ChainEntry]) -> (Vec<Expected>, Replayer) {
    let mut r = Replayer::new(settings(false));
    let mut out = Vec::new();
    for e in entries {
        for f in r.apply(e).findings {
            out.push(Expected {
                subject: f
                    .table_id
                    .clone()
                    .filter(|_| f.round_id.is_some())
                    .or(f.pool_id.clone())
                    .or(f.machine_id.clone())
                    .or(f.table_id.clone())
                    .unwrap_or_default(),
                round_id: f.round_id.clone(),
                because: f.message.clone(),
                code: f.code,
            });
        }
    }
    (out, r)
}

fn key(e: &Expected) -> (String, String, Option<String>) {
    (e.code.clone(), e.subject.clone(), e.round_id.clone())
}

#[test]
fn the_standard_session_gives_exactly_the_injected_findings() {
    let start = 1_767_225_600_000;
    let plan = standard_plan(2026, start, 60, true, "operator", "regulator");
    let s = generate(&plan).unwrap();
    assert_eq!(s.rounds, 16 * 60);
    assert_eq!(s.honest_rounds, 16 * 60 - 6);
    let entries = chain(&s, start);
    let (got, replayer) = found(&entries);
    let mut got_keys: Vec<_> = got.iter().map(key).collect();
    got_keys.sort();
    got_keys.dedup();
    let mut want: Vec<_> = s.expected.iter().map(key).collect();
    want.sort();
    want.dedup();
    assert_eq!(
        got_keys,
        want,
        "\nfound:\n{}",
        got.iter()
            .map(|e| format!("  {} {} {:?}: {}", e.code, e.subject, e.round_id, e.because))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The money held in trust is conserved, to the cent.
    assert!(replayer.book().conservation().holds);
    // The ineligible transfer moved nothing; the eligible one moved everything.
    let t = replayer.book().transfers();
    assert!(t.len() >= 2, "{t:?}");
}

#[test]
fn an_honest_session_gives_no_finding() {
    let start = 1_767_225_600_000;
    let plan = standard_plan(7, start, 150, false, "operator", "regulator");
    let s = generate(&plan).unwrap();
    assert!(s.expected.is_empty());
    let (got, _) = found(&chain(&s, start));
    assert!(
        got.is_empty(),
        "{}",
        got.iter()
            .take(20)
            .map(|e| format!("  {} {} {:?}: {}", e.code, e.subject, e.round_id, e.because))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Other seeds, with the mistakes: every event is well formed and the findings are exactly the
/// injected ones.
#[test]
fn other_seeds_give_exactly_the_injected_findings() {
    let start = 1_767_225_600_000;
    for seed in 1..=6 {
        let plan = standard_plan(seed, start, 25, true, "operator", "regulator");
        let s = generate(&plan).unwrap();
        let (got, replayer) = found(&chain(&s, start));
        let mut got_keys: Vec<_> = got.iter().map(key).collect();
        got_keys.sort();
        got_keys.dedup();
        let mut want: Vec<_> = s.expected.iter().map(key).collect();
        want.sort();
        want.dedup();
        assert_eq!(got_keys, want, "seed {seed}");
        assert!(replayer.book().conservation().holds, "seed {seed}");
    }
}
