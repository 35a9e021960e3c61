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

/// A small, fixed pseudo-random source (splitmix64): the mutations below are the same on every
/// machine, so a failure names a case that can be replayed.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One body changed as a faulty or hostile device might change it: bits flipped, a byte set,
/// a run of bytes from another event spliced in, or a tail cut off.
fn mutate(body: &[u8], donor: &[u8], m: &mut Mix) -> Vec<u8> {
    let mut b = body.to_vec();
    match m.below(4) {
        0 => {
            for _ in 0..1 + m.below(3) {
                let i = m.below(b.len());
                b[i] ^= 1 << m.below(8);
            }
        }
        1 => {
            let i = m.below(b.len());
            b[i] = m.next() as u8;
        }
        2 => {
            let (from, at) = (m.below(donor.len()), m.below(b.len()));
            let len = (1 + m.below(12)).min(donor.len() - from);
            b.splice(
                at..(at + len).min(b.len()),
                donor[from..from + len].iter().copied(),
            );
        }
        _ => b.truncate(m.below(b.len())),
    }
    b
}

/// Whatever a device sends that ingest accepts (a body that decodes and passes the checks of
/// `Event::from_proto`; nothing says its contents make sense) goes to the audit. Here the
/// standard session is sent with a share of its bodies mutated (ids, amounts, cards, positions,
/// times, payload kinds), the mutants ingest would refuse kept as they were, and some events
/// left out. The audit must not panic on any of it, must give the same findings and digest when
/// run again, and must give them too when resumed from a snapshot (through JSON) taken at any
/// point.
#[test]
fn mutated_sessions_never_panic_the_audit_and_replay_identically() {
    let start = 1_767_225_600_000;
    let plan = standard_plan(11, start, 40, true, "operator", "regulator");
    let clean = chain(&generate(&plan).unwrap(), start);
    let mut m = Mix(2026);
    let mut mutated_total = 0;
    for (case, per_mille) in [5u64, 10, 20, 20, 50, 80, 150, 300, 500]
        .into_iter()
        .enumerate()
    {
        let mut entries = Vec::with_capacity(clean.len());
        for e in &clean {
            let roll = m.next() % 1000;
            if roll < per_mille / 4 {
                continue; // the device never sent it
            }
            let mut e = e.clone();
            if roll < per_mille {
                let donor = &clean[m.below(clean.len())].body;
                let body = mutate(&e.body, donor, &mut m);
                if ledger_core::Event::decode(&body).is_ok() {
                    e.body = body;
                    mutated_total += 1;
                }
            }
            e.index = entries.len() as u64 + 1;
            entries.push(e);
        }
        let run = |cut: Option<usize>| {
            let mut r = Replayer::new(settings(false));
            let mut out = Vec::new();
            for (i, e) in entries.iter().enumerate() {
                if cut == Some(i) {
                    let json = serde_json::to_string(&r.snapshot()).unwrap();
                    r = Replayer::restore(serde_json::from_str(&json).unwrap()).unwrap();
                }
                let step = r.apply(e);
                out.extend(step.findings.iter().map(|f| f.canonical_bytes()));
                out.extend(step.rounds.iter().map(|s| serde_json::to_vec(s).unwrap()));
            }
            (out, r.digest())
        };
        let first = run(None);
        assert_eq!(run(None), first, "case {case}: a second replay differs");
        let cut = m.below(entries.len());
        assert_eq!(
            run(Some(cut)),
            first,
            "case {case}: resumed at entry {cut}, the replay differs"
        );
    }
    // The mutants ingest accepts must be a real share of the bodies, or the test tests nothing.
    assert!(
        mutated_total > 3000,
        "only {mutated_total} mutated bodies decoded"
    );
}
