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
    // P217/2007 T.III r.5: the ineligible transfer the casino carried out is booked as carried
    // out (the whole value moved, flagged), and the target's later declarations are clean.
    let t = replayer.book().transfers();
    assert_eq!(t.len(), 1, "{t:?}");
    assert!(t[0].booked && t[0].route.is_none());
    assert_eq!(t[0].codes, ["SLOT_TRANSFER_TARGET_INVALID"]);
    let sjp = replayer.book().pool("SJP-TEJO").unwrap();
    assert!(sjp.totals.transferred_in_e4 == t[0].due_e4 && t[0].due_e4 > 0);
    assert_eq!(replayer.book().pool("JP-LX-02").unwrap().captive_e4, 0);
    // P217/2007 T.III r.6: M-ES-04's link to the superjackpot was lost and restored (force
    // majeure of its part in that pool only), with no finding and the machine in service.
    let link = |restored: bool| {
        s.events.iter().any(|e| match &e.payload {
            P::MachineFault(f) => {
                !restored && f.machine_id == "M-ES-04" && f.pool_ids == ["SJP-TEJO"]
            }
            P::MachineRestored(r) => {
                restored && r.machine_id == "M-ES-04" && r.pool_ids == ["SJP-TEJO"]
            }
            _ => false,
        })
    };
    assert!(link(false) && link(true));
    let m = replayer.book().machine("M-ES-04").unwrap();
    assert!(m.pool_force_majeure.is_empty() && m.out_of_service.is_none());
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

/// A protobuf field as it is on the wire, just enough to rewrite a message's leaves without
/// knowing its schema.
enum Wire {
    Varint(u64),
    Fixed64(u64),
    Bytes(Vec<u8>),
    Fixed32(u32),
}

fn read_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The fields of `b` if it is a well-formed message (groups aside), else `None`.
fn wire_fields(b: &[u8]) -> Option<Vec<(u64, Wire)>> {
    let (mut at, mut out) = (0, Vec::new());
    while at < b.len() {
        let key = read_varint(b, &mut at)?;
        let (field, value) = (
            key >> 3,
            match key & 7 {
                0 => Wire::Varint(read_varint(b, &mut at)?),
                1 => {
                    let v = b.get(at..at + 8)?;
                    at += 8;
                    Wire::Fixed64(u64::from_le_bytes(v.try_into().ok()?))
                }
                2 => {
                    let n = usize::try_from(read_varint(b, &mut at)?).ok()?;
                    let v = b.get(at..at.checked_add(n)?)?.to_vec();
                    at += n;
                    Wire::Bytes(v)
                }
                5 => {
                    let v = b.get(at..at + 4)?;
                    at += 4;
                    Wire::Fixed32(u32::from_le_bytes(v.try_into().ok()?))
                }
                _ => return None,
            },
        );
        if field == 0 {
            return None;
        }
        out.push((field, value));
    }
    Some(out)
}

fn wire_encode(fields: &[(u64, Wire)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (field, value) in fields {
        let kind = match value {
            Wire::Varint(_) => 0,
            Wire::Fixed64(_) => 1,
            Wire::Bytes(_) => 2,
            Wire::Fixed32(_) => 5,
        };
        put_varint(&mut out, field << 3 | kind);
        match value {
            Wire::Varint(v) => put_varint(&mut out, *v),
            Wire::Fixed64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Wire::Bytes(v) => {
                put_varint(&mut out, v.len() as u64);
                out.extend_from_slice(v);
            }
            Wire::Fixed32(v) => out.extend_from_slice(&v.to_le_bytes()),
        }
    }
    out
}

/// Text a device could put in any string field: empty, ASCII, multi-byte characters where one
/// byte is expected, the forms the parsers know with something off, long.
fn odd_text(m: &mut Mix) -> String {
    const WHOLE: [&str; 14] = [
        "",
        "é",
        "€",
        "1é",
        "10é",
        "Té",
        "😀",
        "seat:1",
        "seat:255/0",
        "seat:+3",
        "dealer",
        "AS",
        "10H",
        "\u{0}",
    ];
    const CHARS: [char; 16] = [
        'A', 'T', '1', '0', 'S', 'H', 'é', '€', '😀', ':', '/', '-', ' ', '\n', 'x', '9',
    ];
    match m.below(3) {
        0 => WHOLE[m.below(WHOLE.len())].to_string(),
        1 => (0..1 + m.below(4))
            .map(|_| CHARS[m.below(CHARS.len())])
            .collect(),
        _ => "x".repeat(1 + m.below(400)),
    }
}

/// Rewrite one leaf of the message `b` (or of a message inside it): a number set to an edge
/// value, a string to odd text, bytes to random bytes, a field dropped or repeated. Varints
/// take values at the edges of every integer type the schema uses.
fn rewrite(b: &[u8], m: &mut Mix, depth: u32) -> Vec<u8> {
    let Some(mut fields) = wire_fields(b) else {
        return b.to_vec();
    };
    if fields.is_empty() {
        return b.to_vec();
    }
    let i = m.below(fields.len());
    match m.below(10) {
        0 => {
            fields.remove(i);
        }
        1 => {
            let (f, v) = &fields[i];
            let copy = match v {
                Wire::Varint(x) => Wire::Varint(*x),
                Wire::Fixed64(x) => Wire::Fixed64(*x),
                Wire::Bytes(x) => Wire::Bytes(x.clone()),
                Wire::Fixed32(x) => Wire::Fixed32(*x),
            };
            fields.push((*f, copy));
        }
        _ => {
            let v = &mut fields[i].1;
            match v {
                Wire::Varint(x) => {
                    const EDGES: [u64; 14] = [
                        0,
                        1,
                        2,
                        255,
                        256,
                        i32::MAX as u64,
                        1 << 31,
                        u32::MAX as u64,
                        1 << 32,
                        i64::MAX as u64,
                        1 << 63,
                        u64::MAX,
                        u64::MAX - 1,
                        1_000_000_000_000,
                    ];
                    *x = match m.below(3) {
                        0 => x.wrapping_add(1),
                        1 => x.wrapping_sub(1),
                        _ => EDGES[m.below(EDGES.len())],
                    };
                }
                Wire::Fixed64(x) => *x = m.next(),
                Wire::Fixed32(x) => *x = m.next() as u32,
                Wire::Bytes(x) => {
                    let nested = depth < 4 && m.below(3) > 0 && wire_fields(x).is_some();
                    *x = if nested {
                        rewrite(x, m, depth + 1)
                    } else if std::str::from_utf8(x).is_ok() {
                        odd_text(m).into_bytes()
                    } else {
                        (0..m.below(40)).map(|_| m.next() as u8).collect()
                    };
                }
            }
        }
    }
    wire_encode(&fields)
}

/// One body changed as a faulty or hostile device might change it: bits flipped, a byte set,
/// a run of bytes from another event spliced in, a tail cut off, or (half of the time) one of
/// its fields rewritten on the wire (`rewrite`).
fn mutate(body: &[u8], donor: &[u8], m: &mut Mix) -> Vec<u8> {
    if m.below(2) == 0 {
        return rewrite(body, m, 0);
    }
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

/// Every body of the session, each rewritten on the wire 40 times (`rewrite`): whatever a
/// device puts in any field, decoding it (as ingest does, before the signature is checked) and
/// converting it for the audit answer or refuse; nothing panics. A decoded body re-encodes to a
/// body that decodes to the same event.
#[test]
fn rewritten_bodies_decode_or_are_refused() {
    let start = 1_767_225_600_000;
    let plan = standard_plan(5, start, 4, true, "operator", "regulator");
    let clean = chain(&generate(&plan).unwrap(), start);
    let mut m = Mix(217);
    let (mut accepted, mut refused) = (0, 0);
    for e in &clean {
        for _ in 0..40 {
            let body = rewrite(&e.body, &mut m, 0);
            match ledger_core::Event::decode(&body) {
                Ok(ev) => {
                    accepted += 1;
                    let canonical = v1::EventBody::decode(body.as_slice()).unwrap();
                    let again = ledger_core::Event::decode(&canonical.encode_to_vec()).unwrap();
                    assert_eq!(
                        (&again.device_id, again.sequence, &again.payload),
                        (&ev.device_id, ev.sequence, &ev.payload)
                    );
                    let mut entry = e.clone();
                    entry.body = body;
                    let _ = ledger_audit::replay::Prepared::of(&entry);
                }
                Err(_) => refused += 1,
            }
        }
    }
    assert!(
        accepted > 10_000 && refused > 10_000,
        "{accepted} accepted, {refused} refused"
    );
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
