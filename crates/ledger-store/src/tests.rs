//! Store tests: the writer's decisions, durability bookkeeping, reopen checks, rebuild.

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use ledger_core::proto::{self as v1, event_body::Payload as P};
use ledger_core::signing::{EVENT_DOMAIN, sign};
use ledger_core::{ChainVerifier, SignerRole, TimePolicy};
use prost::Message;

use crate::*;

const NOW: i64 = 1_800_000_000_000;

struct Dev {
    id: String,
    key: SigningKey,
    seq: u64,
}

impl Dev {
    fn new(id: &str, seed: u8) -> Dev {
        Dev {
            id: id.into(),
            key: SigningKey::from_bytes(&[seed; 32]),
            seq: 0,
        }
    }
    fn env(&mut self, p: P) -> v1::Envelope {
        self.seq += 1;
        self.env_at(self.seq, p)
    }
    fn env_at(&self, seq: u64, p: P) -> v1::Envelope {
        let body = v1::EventBody {
            device_id: self.id.clone(),
            sequence: seq,
            occurred_at_ms: NOW,
            payload: Some(p),
        }
        .encode_to_vec();
        let signature = sign(&self.key, EVENT_DOMAIN, &body).to_bytes().to_vec();
        v1::Envelope { body, signature }
    }
}

fn register(d: &Dev) -> P {
    P::DeviceRegistered(v1::DeviceRegistered {
        device_id: d.id.clone(),
        public_key: d.key.verifying_key().as_bytes().to_vec(),
        kind: v1::DeviceKind::Table as i32,
        casino_id: "lisboa".into(),
        table_ids: vec!["t1".into()],
        ..Default::default()
    })
}

fn bet(n: u32) -> P {
    P::BetPlaced(v1::BetPlaced {
        table_id: "t1".into(),
        round_id: "r1".into(),
        bet_id: format!("b{n}"),
        bet_type: "straight".into(),
        selection: vec![17],
        amount_cents: 500,
        ..Default::default()
    })
}

fn cfg(op: &Dev) -> OpenConfig {
    OpenConfig {
        cache_capacity_bytes: 16 << 20,
        ledger_id: "test".into(),
        principals: vec![PrincipalConfig {
            id: op.id.clone(),
            role: SignerRole::Operator,
            key: op.key.verifying_key(),
        }],
    }
}

fn submit(a: &mut Appender, envs: Vec<v1::Envelope>) -> Vec<v1::Receipt> {
    let store = a.store().clone();
    let mut items: Vec<PreOutcome> = envs
        .into_iter()
        .map(|e| precheck(&store, e, 65536, &TimePolicy::default(), NOW))
        .collect();
    verify_prechecked(&mut items);
    let (r, _) = a.apply(items, NOW).unwrap();
    store.sync().unwrap();
    r
}

fn status(r: &v1::Receipt) -> (v1::ReceiptStatus, v1::RejectReason) {
    (
        v1::ReceiptStatus::try_from(r.status).unwrap(),
        v1::RejectReason::try_from(r.reason).unwrap(),
    )
}

fn verify_all(store: &Store) -> ledger_core::Summary {
    let mut v = ChainVerifier::new(None);
    for cp in store.all_checkpoints().unwrap() {
        v.add_checkpoint(&cp).unwrap();
    }
    let mut checks = Vec::new();
    for e in store.entries(0, u64::MAX) {
        checks.extend(v.check_entry(&e.unwrap()).unwrap());
    }
    let ok = ledger_core::verify_many(&checks.iter().map(|c| c.check.clone()).collect::<Vec<_>>());
    assert!(ok.iter().all(|&b| b));
    v.finish().unwrap()
}

fn setup() -> (tempfile::TempDir, Dev, Arc<Store>, Appender) {
    let dir = tempfile::tempdir().unwrap();
    let op = Dev::new("operator-1", 1);
    let (store, a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    (dir, op, store, a)
}

use v1::{ReceiptStatus as St, RejectReason as Why};

/// A signature that cannot be valid (s + l: the same value mod l, not canonical) is refused when
/// it is prepared, and the honest envelopes around it in the same group still pass the batch.
#[test]
fn a_malleated_signature_is_refused_and_its_group_still_verifies() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let reg = op.env(register(&t));
    assert_eq!(status(&submit(&mut a, vec![reg])[0]).0, St::Accepted);
    let first = t.env(bet(1));
    let honest = t.env(bet(2));
    let mut malleated = honest.clone();
    // l = 2^252 + 27742317777372353535851937790883648493, little-endian, added to s.
    let l: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let mut carry = 0u16;
    for (b, l) in malleated.signature[32..].iter_mut().zip(l) {
        let v = *b as u16 + l as u16 + carry;
        *b = v as u8;
        carry = v >> 8;
    }
    let third = t.env(bet(3));
    let r = submit(&mut a, vec![first, malleated, honest, third]);
    let got: Vec<_> = r.iter().map(status).collect();
    assert_eq!(
        got,
        vec![
            (St::Accepted, Why::Unspecified),
            (St::Rejected, Why::BadSignature),
            (St::Accepted, Why::Unspecified),
            (St::Accepted, Why::Unspecified),
        ]
    );
    verify_all(&store);
}

/// A device's record is written when the registry changes, not with every group: its last
/// sequence comes from its sequence runs, for queries and after a restart.
#[test]
fn a_device_record_is_not_rewritten_for_its_events() {
    let (d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    let written = store.tree.get(crate::store::device_key("table-1")).unwrap();
    for g in 0..3 {
        submit(&mut a, (0..4).map(|n| t.env(bet(g * 4 + n))).collect());
    }
    assert_eq!(
        store.tree.get(crate::store::device_key("table-1")).unwrap(),
        written,
        "the record stays as the registration wrote it"
    );
    let s = store.signer("table-1").unwrap().unwrap();
    assert_eq!(s.last_sequence, 12);
    assert_eq!(s.last_index, store.head().unwrap().unwrap().0);
    drop((a, store));
    let (store, mut a) = Store::open_writer(d.path(), &cfg(&op)).unwrap();
    assert_eq!(store.signer("table-1").unwrap().unwrap().last_sequence, 12);
    let r = submit(&mut a, vec![t.env_at(14, bet(99)), t.env(bet(12))]);
    assert_eq!(status(&r[0]), (St::Rejected, Why::SequenceGap));
    assert_eq!(r[0].expected_sequence, 13);
    assert_eq!(status(&r[1]).0, St::Accepted);
}

#[test]
fn genesis_principals_registration_and_events() {
    let (_d, mut op, store, mut a) = setup();
    assert_eq!(store.head().unwrap().unwrap().0, 1, "genesis + principals");
    let mut t = Dev::new("table-1", 2);
    let reg = op.env(register(&t));
    let mut batch = vec![reg];
    for n in 0..5 {
        batch.push(t.env(bet(n)));
    }
    let r = submit(&mut a, batch);
    assert!(r.iter().all(|r| status(r).0 == St::Accepted), "{r:?}");
    assert_eq!(r.last().unwrap().index, 7);
    let s = verify_all(&store);
    assert_eq!((s.entries, s.events, s.signers), (8, 6, 2));
    assert_eq!(store.signer("table-1").unwrap().unwrap().last_sequence, 5);
    assert_eq!(store.device_entries("table-1", 3).count(), 3);
}

/// Two devices interleaved in the same groups share chunks; each device's reading decodes a
/// chunk once for all its entries there (and settles sled's cache past 8 chunks), and still
/// gives exactly its own entries, in sequence order, with their bodies, from any starting
/// sequence.
#[test]
fn a_device_reading_gives_its_own_entries_from_shared_chunks() {
    let (_d, mut op, store, mut a) = setup();
    let (mut t1, mut t2) = (Dev::new("table-1", 2), Dev::new("table-2", 3));
    submit(&mut a, vec![op.env(register(&t1)), op.env(register(&t2))]);
    let mut expected: [Vec<(u64, Vec<u8>)>; 2] = Default::default();
    for g in 0..12 {
        let mut batch = Vec::new();
        for n in 0..150 {
            let (who, d) = if n % 3 == 0 {
                (1, &mut t2)
            } else {
                (0, &mut t1)
            };
            batch.push((who, d.env(bet(g * 150 + n))));
        }
        let (whos, envs): (Vec<usize>, Vec<_>) = batch.into_iter().unzip();
        let bodies: Vec<Vec<u8>> = envs.iter().map(|e| e.body.clone()).collect();
        let r = submit(&mut a, envs);
        for ((who, body), r) in whos.into_iter().zip(bodies).zip(r) {
            assert_eq!(status(&r).0, St::Accepted);
            expected[who].push((r.index, body));
        }
    }
    // More chunks than a reading loads before it settles sled's cache (8).
    assert!(
        chunk_keys(&store).len() > 12,
        "the groups span several chunks"
    );
    for (device, want) in ["table-1", "table-2"].iter().zip(&expected) {
        for from in [1, 2, 97, want.len() as u64] {
            let got: Vec<(u64, Vec<u8>)> = store
                .device_entries(device, from)
                .map(|e| e.map(|e| (e.index, e.body)).unwrap())
                .collect();
            assert_eq!(got, want[from as usize - 1..], "{device} from {from}");
        }
        assert_eq!(
            store.device_entries(device, want.len() as u64 + 1).count(),
            0
        );
    }
}

#[test]
fn rejections_store_nothing() {
    let (_d, mut op, store, mut a) = setup();
    let t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    let head = store.head().unwrap();
    let stranger = Dev::new("stranger", 3);
    let mut forged = t.env_at(1, bet(1));
    forged.signature[5] ^= 1;
    let mut too_big = t.env_at(1, bet(1));
    too_big.body.extend(std::iter::repeat_n(0u8, 70_000));
    let future = {
        let body = v1::EventBody {
            device_id: "table-1".into(),
            sequence: 1,
            occurred_at_ms: NOW + 3_600_000,
            payload: Some(bet(1)),
        }
        .encode_to_vec();
        let signature = sign(&t.key, EVENT_DOMAIN, &body).to_bytes().to_vec();
        v1::Envelope { body, signature }
    };
    let meter = t.env_at(
        1,
        P::MeterReading(v1::MeterReading {
            machine_id: "m".into(),
            meters: vec![v1::Meter {
                name: "coin_in".into(),
                value: 1,
                rollover: 0,
            }],
        }),
    );
    let wrong_table = t.env_at(
        1,
        P::RoundOpened(v1::RoundOpened {
            table_id: "t9".into(),
            round_id: "r".into(),
        }),
    );
    let r = submit(
        &mut a,
        vec![
            forged,
            stranger.env_at(1, bet(1)),
            t.env_at(2, bet(1)),
            v1::Envelope {
                body: vec![0xff; 10],
                signature: vec![0; 64],
            },
            too_big,
            future,
            meter,
            wrong_table,
            t.env_at(1, register(&stranger)),
        ],
    );
    let got: Vec<_> = r.iter().map(status).collect();
    assert_eq!(
        got,
        vec![
            (St::Rejected, Why::BadSignature),
            (St::Rejected, Why::UnknownDevice),
            (St::Rejected, Why::SequenceGap),
            (St::Rejected, Why::Malformed),
            (St::Rejected, Why::TooLarge),
            (St::Rejected, Why::TimeOutOfRange),
            (St::Rejected, Why::Unauthorized),
            (St::Rejected, Why::Unauthorized),
            (St::Rejected, Why::Unauthorized),
        ]
    );
    assert_eq!(r[2].expected_sequence, 1);
    // Each names the envelope it answers, when its body could be read, and says why.
    let named: Vec<(&str, u64)> = r
        .iter()
        .map(|r| (r.device_id.as_str(), r.sequence))
        .collect();
    let t1 = ("table-1", 1);
    assert_eq!(
        named,
        [
            t1,
            ("stranger", 1),
            ("table-1", 2),
            ("", 0),
            ("", 0),
            t1,
            t1,
            t1,
            t1
        ],
        "the malformed and the oversized body name nothing"
    );
    assert!(r.iter().all(|r| !r.detail.is_empty()), "{r:?}");
    assert_eq!(store.head().unwrap(), head, "nothing stored");
}

#[test]
fn duplicates_return_the_original_receipt_and_equivocation_is_recorded_once() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let e1 = t.env(bet(1));
    let r = submit(&mut a, vec![op.env(register(&t)), e1.clone(), e1.clone()]);
    assert_eq!(status(&r[2]).0, St::Duplicate, "duplicate within one group");
    assert_eq!(
        (r[2].index, &r[2].entry_hash),
        (r[1].index, &r[1].entry_hash)
    );
    let again = submit(&mut a, vec![e1.clone()]);
    assert_eq!(
        (
            status(&again[0]).0,
            again[0].index,
            &again[0].entry_hash,
            again[0].received_at_ms
        ),
        (
            St::Duplicate,
            r[1].index,
            &r[1].entry_hash,
            r[1].received_at_ms
        )
    );
    let other = t.env_at(1, bet(99));
    let q = submit(&mut a, vec![other.clone(), other.clone()]);
    assert_eq!(status(&q[0]).0, St::Equivocation);
    assert_eq!(
        q[1].index, q[0].index,
        "one finding per conflicting envelope"
    );
    let s = verify_all(&store);
    assert_eq!(s.security_findings, 1);
    assert_eq!(
        store.signer("table-1").unwrap().unwrap().last_sequence,
        1,
        "the finding changes no device state"
    );
    // Revocation, then the device is refused.
    let rv = submit(
        &mut a,
        vec![
            op.env(P::DeviceRevoked(v1::DeviceRevoked {
                device_id: "table-1".into(),
                reason: "stolen".into(),
            })),
            t.env(bet(2)),
        ],
    );
    assert_eq!(status(&rv[0]).0, St::Accepted);
    assert_eq!(status(&rv[1]), (St::Rejected, Why::RevokedDevice));

    // Every receipt names the envelope it answers; one for a stored entry (accepted, duplicate,
    // equivocation) carries that entry's index, hash and received time; a duplicate and an
    // equivocation say what they are.
    let names = |rs: &[v1::Receipt]| -> Vec<(String, u64)> {
        rs.iter()
            .map(|r| (r.device_id.clone(), r.sequence))
            .collect()
    };
    let n = |d: &str, s: u64| (d.to_string(), s);
    assert_eq!(
        names(&r),
        [n("operator-1", 1), n("table-1", 1), n("table-1", 1)]
    );
    assert_eq!(names(&again), [n("table-1", 1)]);
    assert_eq!(names(&q), [n("table-1", 1), n("table-1", 1)]);
    assert_eq!(names(&rv), [n("operator-1", 2), n("table-1", 2)]);
    for x in [&r[0], &r[1], &r[2], &again[0], &q[0], &q[1], &rv[0]] {
        let e = store.entry(x.index).unwrap().unwrap();
        assert_eq!(
            (&x.entry_hash, x.received_at_ms),
            (&e.entry_hash, e.received_at_ms),
            "{x:?}"
        );
        assert_eq!(x.received_at_ms, NOW);
    }
    assert!(
        r[2].detail.contains("original receipt"),
        "{:?}",
        r[2].detail
    );
    assert!(q[0].detail.contains("equivocation"), "{:?}", q[0].detail);
    // Re-registering a revoked id is refused.
    let rr = submit(&mut a, vec![op.env(register(&t))]);
    assert_eq!(status(&rr[0]), (St::Rejected, Why::RegistrationRefused));
    verify_all(&store);
}

/// A table device registered without its tables is refused at ingest (it could otherwise sign
/// for every table); registered with them, it signs for those tables only.
#[test]
fn a_table_device_needs_its_tables_and_signs_only_for_them() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let P::DeviceRegistered(mut bare) = register(&t) else {
        unreachable!()
    };
    bare.table_ids.clear();
    let r = submit(&mut a, vec![op.env(P::DeviceRegistered(bare))]);
    assert_eq!(status(&r[0]), (St::Rejected, Why::RegistrationRefused));
    assert!(r[0].detail.contains("no table_ids"), "{:?}", r[0].detail);
    assert!(store.signer("table-1").unwrap().is_none());
    op.seq -= 1; // the refused event took no sequence number
    let r = submit(&mut a, vec![op.env(register(&t)), t.env(bet(1))]);
    assert_eq!(status(&r[0]).0, St::Accepted);
    assert_eq!(status(&r[1]).0, St::Accepted);
    let P::BetPlaced(mut elsewhere) = bet(2) else {
        unreachable!()
    };
    elsewhere.table_id = "t2".into();
    let r = submit(&mut a, vec![t.env(P::BetPlaced(elsewhere))]);
    assert_eq!(status(&r[0]), (St::Rejected, Why::Unauthorized));
    verify_all(&store);
}

/// A conflicting envelope sent again later (after a reconnect) gets the receipt it got the first
/// time: the finding's entry, with that entry's received time.
#[test]
fn an_equivocation_sent_again_later_gets_the_same_receipt() {
    let (_d, mut op, _store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t)), t.env(bet(1))]);
    let other = t.env_at(1, bet(99));
    let first = submit(&mut a, vec![other.clone()]).remove(0);
    assert_eq!(status(&first).0, St::Equivocation);
    let later = submit_at(&mut a, vec![other], &TimePolicy::default(), NOW + 5_000).remove(0);
    assert_eq!(later, first);
}

/// [`submit`] under another time policy, at another time.
fn submit_at(
    a: &mut Appender,
    envs: Vec<v1::Envelope>,
    time: &TimePolicy,
    now: i64,
) -> Vec<v1::Receipt> {
    let store = a.store().clone();
    let mut items: Vec<PreOutcome> = envs
        .into_iter()
        .map(|e| precheck(&store, e, 65536, time, now))
        .collect();
    verify_prechecked(&mut items);
    let (r, _) = a.apply(items, now).unwrap();
    store.sync().unwrap();
    r
}

/// The original receipt, for comparing a duplicate's with.
fn original(r: &v1::Receipt) -> (St, u64, Vec<u8>, i64) {
    (status(r).0, r.index, r.entry_hash.clone(), r.received_at_ms)
}

/// A device that resends after an outage longer than `max_past_ms` gets the original receipt of
/// what was stored: the window applies to events not yet stored. An event outside the window
/// that is not an identical resend (nor an equivocation: see
/// `an_equivocation_outside_the_time_window_is_recorded`) is still refused, with the window's
/// reason, and nothing is stored for it.
#[test]
fn an_identical_resend_outside_the_time_window_gets_the_original_receipt() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let e1 = t.env(bet(1));
    let r = submit(&mut a, vec![op.env(register(&t)), e1.clone()]);
    assert_eq!(status(&r[1]).0, St::Accepted);
    let head = store.head().unwrap();
    let time = TimePolicy {
        max_past_ms: 3_600_000,
        ..TimePolicy::default()
    };
    let later = NOW + 2 * 3_600_000;
    let window = time.check(NOW, later).expect_err("outside the window");
    let mut forged = e1.clone();
    forged.signature[5] ^= 1;
    let got = submit_at(
        &mut a,
        vec![
            e1.clone(),
            forged,        // the same body, another signature
            t.env(bet(2)), // not stored yet
        ],
        &time,
        later,
    );
    assert_eq!(
        original(&got[0]),
        (
            St::Duplicate,
            r[1].index,
            r[1].entry_hash.clone(),
            r[1].received_at_ms
        )
    );
    for g in &got[1..] {
        assert_eq!(status(g), (St::Rejected, Why::TimeOutOfRange));
        assert_eq!(g.detail, window);
    }
    assert_eq!(store.head().unwrap(), head, "nothing stored");
    assert_eq!(verify_all(&store).security_findings, 0);
}

/// A revoked device's identical resend of a stored event gets the original receipt (the agent
/// may have lost it in a disconnect just before the revocation); anything else it sends but an
/// equivocation (`an_equivocation_from_a_revoked_device_is_recorded`) is refused as before.
#[test]
fn an_identical_resend_from_a_revoked_device_gets_the_original_receipt() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let mut envs = vec![op.env(register(&t))];
    envs.extend((1..=3).map(|n| t.env(bet(n))));
    let r = submit(&mut a, envs);
    let revoke = op.env(P::DeviceRevoked(v1::DeviceRevoked {
        device_id: "table-1".into(),
        reason: "stolen".into(),
    }));
    assert_eq!(status(&submit(&mut a, vec![revoke])[0]).0, St::Accepted);
    let head = store.head().unwrap();
    let mut forged = t.env_at(2, bet(2));
    forged.signature[5] ^= 1;
    let got = submit(&mut a, vec![t.env_at(2, bet(2)), forged, t.env(bet(4))]);
    assert_eq!(
        original(&got[0]),
        (
            St::Duplicate,
            r[2].index,
            r[2].entry_hash.clone(),
            r[2].received_at_ms
        )
    );
    for g in &got[1..] {
        assert_eq!(status(g), (St::Rejected, Why::RevokedDevice));
    }
    assert_eq!(store.head().unwrap(), head, "nothing stored");
    assert_eq!(verify_all(&store).security_findings, 0);
}

/// An equivocation is evidence that the device's key signed two different events with one
/// sequence number, and only that key can make it. Neither the time window (which keeps events
/// with an implausible time out of the chain) nor a revocation (which stops accepting the
/// device's events) makes it less so: the finding is recorded as for any other equivocation,
/// once, and a resend of the conflicting envelope gets the same receipt; the device's state does
/// not change. Another body under a signature that does not verify is refused as before.
fn an_equivocation_is_recorded_whatever_the_window_or_revocation(
    store: &Store,
    a: &mut Appender,
    t: &Dev,
    seq: u64,
    time: &TimePolicy,
    now: i64,
    refused: Why,
) {
    let head = store.head().unwrap().unwrap();
    let last = store.signer(&t.id).unwrap().unwrap().last_sequence;
    let findings = verify_all(store).security_findings;
    let other = t.env_at(seq, bet(99));
    let mut forged = t.env_at(seq, bet(98));
    forged.signature[5] ^= 1;
    let got = submit_at(a, vec![forged, other.clone(), other.clone()], time, now);
    assert_eq!(status(&got[0]), (St::Rejected, refused));
    assert_eq!(status(&got[1]).0, St::Equivocation, "{:?}", got[1]);
    assert!(got[1].detail.contains("security finding recorded"));
    assert_eq!(got[1].index, head.0 + 1, "the finding is the next entry");
    assert_eq!(got[2], got[1], "one finding per device and sequence");
    assert_eq!(
        store.head().unwrap().unwrap().0,
        head.0 + 1,
        "the finding only"
    );
    let again = submit_at(a, vec![other], time, now + 5_000);
    assert_eq!(again[0], got[1]);
    assert_eq!(store.head().unwrap().unwrap().0, head.0 + 1);
    assert_eq!(store.signer(&t.id).unwrap().unwrap().last_sequence, last);
    assert_eq!(verify_all(store).security_findings, findings + 1);
}

#[test]
fn an_equivocation_outside_the_time_window_is_recorded() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t)), t.env(bet(1))]);
    let time = TimePolicy {
        max_past_ms: 3_600_000,
        ..TimePolicy::default()
    };
    let later = NOW + 2 * 3_600_000;
    assert!(time.check(NOW, later).is_err(), "outside the window");
    an_equivocation_is_recorded_whatever_the_window_or_revocation(
        &store,
        &mut a,
        &t,
        1,
        &time,
        later,
        Why::TimeOutOfRange,
    );
}

#[test]
fn an_equivocation_from_a_revoked_device_is_recorded() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let mut envs = vec![op.env(register(&t))];
    envs.extend((1..=3).map(|n| t.env(bet(n))));
    submit(&mut a, envs);
    let revoke = op.env(P::DeviceRevoked(v1::DeviceRevoked {
        device_id: "table-1".into(),
        reason: "stolen".into(),
    }));
    assert_eq!(status(&submit(&mut a, vec![revoke])[0]).0, St::Accepted);
    an_equivocation_is_recorded_whatever_the_window_or_revocation(
        &store,
        &mut a,
        &t,
        2,
        &TimePolicy::default(),
        NOW,
        Why::RevokedDevice,
    );
}

/// After an operator's key changes (or its role, so that it may no longer sign what it signed),
/// its identical resend of a stored event gets the original receipt, although the stored
/// signature no longer verifies with the current key. The same body under another signature is
/// decided as before: refused unless the current key signed it, and then a duplicate.
#[test]
fn an_identical_resend_after_an_operator_key_or_role_change_gets_the_original_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let t = Dev::new("table-1", 2);
    let reg = op.env(register(&t));
    let r = {
        let (_store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        submit(&mut a, vec![reg.clone()])
    };
    assert_eq!(status(&r[0]).0, St::Accepted);
    let want = (
        St::Duplicate,
        r[0].index,
        r[0].entry_hash.clone(),
        r[0].received_at_ms,
    );
    // The key changes.
    let mut op2 = Dev::new("operator-1", 9);
    op2.seq = op.seq;
    let reg2 = op2.env(register(&Dev::new("table-2", 3)));
    let signed_now;
    {
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op2)).unwrap();
        let head = store.head().unwrap();
        let mut forged = reg.clone();
        forged.signature[5] ^= 1;
        let got = submit(&mut a, vec![reg.clone(), forged, op.env_at(1, bet(1))]);
        assert_eq!(original(&got[0]), want);
        assert_eq!(status(&got[1]), (St::Rejected, Why::BadSignature));
        assert_eq!(status(&got[2]), (St::Rejected, Why::BadSignature));
        assert_eq!(store.head().unwrap(), head, "nothing stored");
        // The same body signed with the current key: a duplicate, as it was.
        let resigned = op2.env_at(1, register(&t));
        assert_ne!(resigned.signature, reg.signature);
        assert_eq!(original(&submit(&mut a, vec![resigned])[0]), want);
        signed_now = submit(&mut a, vec![reg2.clone()]);
        assert_eq!(status(&signed_now[0]).0, St::Accepted);
    }
    // The role changes: operator-1 may no longer sign registry events, even with its key.
    let mut regulator = cfg(&op2);
    regulator.principals[0].role = SignerRole::Regulator;
    let (store, mut a) = Store::open_writer(dir.path(), &regulator).unwrap();
    let head = store.head().unwrap();
    let got = submit(
        &mut a,
        vec![reg2, reg, op2.env_at(1, register(&t)), op2.env(bet(1))],
    );
    let s = &signed_now[0];
    assert_eq!(
        original(&got[0]),
        (
            St::Duplicate,
            s.index,
            s.entry_hash.clone(),
            s.received_at_ms
        )
    );
    assert_eq!(original(&got[1]), want);
    assert_eq!(status(&got[2]), (St::Rejected, Why::Unauthorized));
    assert_eq!(status(&got[3]), (St::Rejected, Why::Unauthorized));
    assert_eq!(store.head().unwrap(), head, "nothing stored");
    verify_all(&store);
}

/// Apply one group (prechecked and batch-verified like ledgerd does) without syncing; the
/// error, if any, is the appender's.
fn apply_group(
    store: &Store,
    a: &mut Appender,
    envs: Vec<v1::Envelope>,
) -> Result<Vec<v1::Receipt>, StoreError> {
    let mut items: Vec<PreOutcome> = envs
        .into_iter()
        .map(|e| precheck(store, e, 65536, &TimePolicy::default(), NOW))
        .collect();
    verify_prechecked(&mut items);
    let (rs, _) = a.apply(items, NOW)?;
    store.sync()?;
    Ok(rs)
}

/// A group larger than `SEQ_RUN_MAX` (`ingest.max_batch` above its default) holds more than one
/// sequence run of a device; a resend of a sequence in a run that is already complete, later in
/// the same group, is still a duplicate with the original receipt (not a corrupt index, which
/// would stop ledgerd).
#[test]
fn a_resend_in_a_group_past_a_full_sequence_run_is_a_duplicate() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    assert_eq!(
        status(&submit(&mut a, vec![op.env(register(&t))])[0]).0,
        St::Accepted
    );
    let n = crate::store::SEQ_RUN_MAX as u32 + 1;
    let mut envs: Vec<v1::Envelope> = (1..=n).map(|i| t.env(bet(i))).collect();
    envs.push(t.env_at(1, bet(1))); // identical resend of sequence 1
    let rs = apply_group(&store, &mut a, envs).expect("a plain resend must not fail the group");
    let (first, resend) = (&rs[0], rs.last().unwrap());
    assert_eq!(status(resend).0, St::Duplicate);
    assert_eq!(
        (resend.index, &resend.entry_hash, resend.received_at_ms),
        (first.index, &first.entry_hash, first.received_at_ms)
    );
    verify_all(&store);
}

/// The same position with a different body: an equivocation, recorded as a security finding as
/// it is when the device's run did not fill up in the group.
#[test]
fn an_equivocation_in_a_group_past_a_full_sequence_run_is_recorded() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    let n = crate::store::SEQ_RUN_MAX as u32 + 1;
    let mut envs: Vec<v1::Envelope> = (1..=n).map(|i| t.env(bet(i))).collect();
    envs.push(t.env_at(1, bet(99))); // sequence 1, another body
    let rs = apply_group(&store, &mut a, envs).expect("an equivocation must not fail the group");
    let r = rs.last().unwrap();
    assert_eq!(status(r).0, St::Equivocation);
    assert!(
        r.detail.contains(&format!("(entry {})", rs[0].index)),
        "{r:?}"
    );
    assert_eq!(r.index, store.head().unwrap().unwrap().0, "the finding");
    assert_eq!(verify_all(&store).security_findings, 1);
    assert_eq!(
        store.signer("table-1").unwrap().unwrap().last_sequence,
        n as u64,
        "the finding changes no device state"
    );
}

/// Every sequence appended earlier in a group is found, whatever the runs it falls in: the full
/// runs, the last one, and after the group is written (as runs of at most `SEQ_RUN_MAX`).
#[test]
fn every_sequence_of_a_group_is_found_whatever_run_it_fell_in() {
    let (d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    let max = crate::store::SEQ_RUN_MAX as u64;
    let n = 2 * max + 1;
    let mut envs: Vec<v1::Envelope> = (1..=n).map(|i| t.env(bet(i as u32))).collect();
    let probes = [1, max, max + 1, 2 * max, n];
    envs.extend(probes.iter().map(|&s| t.env_at(s, bet(s as u32))));
    envs.push(t.env_at(max + 2, bet(0)));
    let rs = apply_group(&store, &mut a, envs).unwrap();
    let accepted = &rs[..n as usize];
    assert!(accepted.iter().all(|r| status(r).0 == St::Accepted));
    for (k, &s) in probes.iter().enumerate() {
        let (r, orig) = (&rs[n as usize + k], &accepted[s as usize - 1]);
        assert_eq!(status(r).0, St::Duplicate, "sequence {s}");
        assert_eq!((r.index, &r.entry_hash), (orig.index, &orig.entry_hash));
    }
    assert_eq!(status(rs.last().unwrap()).0, St::Equivocation);
    // Written as runs of at most SEQ_RUN_MAX, each found by its sequences.
    let runs: Vec<_> = store
        .tree
        .scan_prefix(&crate::store::seq_key("table-1", 0)[..2 + "table-1".len()])
        .map(|r| r.unwrap().1.len() / 8)
        .collect();
    assert_eq!(runs, vec![max as usize, max as usize, 1]);
    for (i, r) in accepted.iter().enumerate() {
        assert_eq!(
            store.index_of("table-1", i as u64 + 1).unwrap(),
            Some(r.index)
        );
    }
    // And in a later group, and after a restart.
    let again = submit(
        &mut a,
        probes.iter().map(|&s| t.env_at(s, bet(s as u32))).collect(),
    );
    assert!(
        again.iter().all(|r| status(r).0 == St::Duplicate),
        "{again:?}"
    );
    drop((a, store));
    let (store, mut a) = Store::open_writer(d.path(), &cfg(&op)).unwrap();
    let r = submit(
        &mut a,
        vec![t.env_at(max + 1, bet(max as u32 + 1)), t.env(bet(0))],
    );
    assert_eq!(
        (status(&r[0]).0, r[0].index),
        (St::Duplicate, accepted[max as usize].index)
    );
    assert_eq!(status(&r[1]).0, St::Accepted);
    assert_eq!(verify_all(&store).security_findings, 1);
}

#[test]
fn reopen_checks_the_tail_and_rebuild_gives_the_same_derived_state() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    let before;
    {
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        let mut envs = vec![op.env(register(&t))];
        envs.extend((0..50).map(|n| t.env(bet(n))));
        submit(&mut a, envs);
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW, "test").unwrap();
        submit(&mut a, vec![t.env(bet(100))]);
        before = store.signers().unwrap();
        store.rebuild_derived().unwrap();
        assert_eq!(store.signers().unwrap(), before);
    }
    let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    assert_eq!(store.signers().unwrap(), before);
    let r = submit(&mut a, vec![t.env(bet(101))]);
    assert_eq!(status(&r[0]).0, St::Accepted);
    let s = verify_all(&store);
    assert_eq!(s.checkpoints, 1);
    assert_eq!(
        store.checkpoint_log().unwrap(),
        store.checkpoints().unwrap()
    );
}

/// A store written in the first key layout (head `Mhead`, runs `S`, devices `D`): readers find
/// its head; the writer moves the head, rebuilds the derived state under the current keys, leaves
/// no record of the old layout, and carries on (same devices, sequences, device queries, chain).
#[test]
fn a_store_in_the_first_key_layout_is_read_and_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    let (head, signers, seq_runs) = {
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        let mut envs = vec![op.env(register(&t))];
        envs.extend((0..40).map(|n| t.env(bet(n))));
        submit(&mut a, envs);
        submit(&mut a, (40..60).map(|n| t.env(bet(n))).collect());
        let head = store.head().unwrap().unwrap();
        let signers = store.signers().unwrap();
        // Rewrite the derived keys as the first layout had them (it had no undo record).
        let tree = &store.tree;
        let mut batch = sled::Batch::default();
        batch.remove(b"@pending");
        batch.remove(b"@pools");
        let mut seq_runs = 0;
        for r in tree.iter() {
            let (k, v) = r.unwrap();
            let old: Option<Vec<u8>> = match k[0] {
                _ if &k[..] == b"@pending" || &k[..] == b"@pools" => None,
                b'@' => Some([b"M".as_slice(), &k[1..]].concat()),
                b'A' => Some([b"S".as_slice(), &k[1..]].concat()),
                b'B' => Some([b"D".as_slice(), &k[1..]].concat()),
                _ => None,
            };
            if let Some(old) = old {
                seq_runs += usize::from(k[0] == b'A');
                batch.remove(k);
                batch.insert(old, v);
            }
        }
        tree.apply_batch(batch).unwrap();
        store.sync().unwrap();
        assert!(seq_runs >= 2, "runs of two groups");
        (head, signers, seq_runs)
    };
    let reader = Store::open_existing(dir.path()).unwrap();
    assert_eq!(
        reader.head().unwrap(),
        Some(head),
        "readers find the old head"
    );
    drop(reader);
    let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    assert_eq!(store.head().unwrap(), Some(head));
    assert_eq!(store.signers().unwrap(), signers);
    for r in store.tree.iter() {
        let k = r.unwrap().0;
        assert!(
            !matches!(k[0], b'M' | b'S' | b'D'),
            "a record of the old layout is left: {:?}",
            String::from_utf8_lossy(&k)
        );
    }
    assert!(seq_runs > 0);
    let by_device: Vec<u64> = store
        .device_entries("table-1", 1)
        .map(|e| e.unwrap().index)
        .collect();
    assert_eq!(
        by_device.len(),
        60,
        "every event of the device, found by its runs"
    );
    let r = submit(&mut a, vec![t.env(bet(60)), t.env_at(60, bet(59))]);
    assert_eq!(status(&r[0]).0, St::Accepted, "the sequence carries on");
    assert_eq!(
        status(&r[1]).0,
        St::Duplicate,
        "and remembers what came before"
    );
    verify_all(&store);
}

/// A configuration for another ledger (another `ledger_id`) is refused: it would serve this
/// chain under another name.
#[test]
fn a_data_dir_is_refused_to_a_configuration_of_another_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let op = Dev::new("operator-1", 1);
    drop(Store::open_writer(dir.path(), &cfg(&op)).unwrap());
    let other = OpenConfig {
        ledger_id: "casino-porto".into(),
        ..cfg(&op)
    };
    let err = Store::open_writer(dir.path(), &other).err().unwrap();
    assert!(
        err.to_string().contains("\"test\"") && err.to_string().contains("casino-porto"),
        "{err}"
    );
    assert!(Store::open_writer(dir.path(), &cfg(&op)).is_ok());
}

#[test]
fn a_changed_operator_key_is_declared_in_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let op = Dev::new("operator-1", 1);
    drop(Store::open_writer(dir.path(), &cfg(&op)).unwrap());
    let op2 = Dev::new("operator-1", 9);
    let (store, _a) = Store::open_writer(dir.path(), &cfg(&op2)).unwrap();
    assert_eq!(store.head().unwrap().unwrap().0, 2);
    assert_eq!(
        store.signer("operator-1").unwrap().unwrap().key,
        op2.key.verifying_key()
    );
    verify_all(&store);
}

#[test]
fn a_checkpoint_beyond_the_store_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let op = Dev::new("operator-1", 1);
    {
        let (store, _a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        let key = load_ledger_key(dir.path(), false).unwrap();
        // A checkpoint of an entry the store does not have: as if sled lost acknowledged entries.
        let cp = ledger_core::record::sign_checkpoint(&key, 1, 99, &[1; 32], NOW, "test");
        let line = format!(
            "{{\"body\":\"{}\",\"signature\":\"{}\"}}\n",
            hex::encode(&cp.body),
            hex::encode(&cp.signature)
        );
        std::fs::write(store.dir().join(CHECKPOINT_LOG), line).unwrap();
    }
    let err = Store::open_writer(dir.path(), &cfg(&op)).err().unwrap();
    assert!(
        err.to_string().contains("acknowledged entries are missing"),
        "{err}"
    );
}

/// The mirror file's readable fields (number, index, head_hash) are for people reading it: an
/// edit that makes one of them say something other than the signed body is refused, by the
/// readers (verify) and by the writer's start, with the line and the field named. The same
/// line with its readable fields left out is still read.
#[test]
fn a_mirror_line_whose_readable_fields_were_edited_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let op = Dev::new("operator-1", 1);
    {
        let (store, _a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW, "test").unwrap();
    }
    let log = dir.path().join(CHECKPOINT_LOG);
    let good = std::fs::read_to_string(&log).unwrap();
    let v: serde_json::Value = serde_json::from_str(good.lines().next().unwrap()).unwrap();
    let other_hash = hex::encode([7u8; 32]);
    for (field, value, said) in [
        ("number", serde_json::json!(2), "number 2"),
        ("index", serde_json::json!(5), "index 5"),
        ("head_hash", serde_json::json!(other_hash), "head_hash \""),
        ("head_hash", serde_json::json!("zz"), "head_hash: "),
    ] {
        let mut edited = v.clone();
        edited[field] = value;
        std::fs::write(&log, format!("{edited}\n")).unwrap();
        let store = Store::open_existing(dir.path()).unwrap();
        let err = store.all_checkpoints().unwrap_err().to_string();
        assert!(
            err.contains("line 1") && err.contains(said),
            "{field}: {err}"
        );
        drop(store);
        let err = Store::open_writer(dir.path(), &cfg(&op)).err().unwrap();
        assert!(err.to_string().contains(said), "{field}: {err}");
    }
    let mut bare = v.clone();
    for f in ["number", "index", "head_hash"] {
        bare.as_object_mut().unwrap().remove(f);
    }
    std::fs::write(&log, format!("{bare}\n")).unwrap();
    let store = Store::open_existing(dir.path()).unwrap();
    assert_eq!(
        store.checkpoint_log().unwrap(),
        store.checkpoints().unwrap()
    );
    drop(store);
    std::fs::write(&log, good).unwrap();
    let store = Store::open_existing(dir.path()).unwrap();
    assert_eq!(store.all_checkpoints().unwrap().len(), 1);
}

/// A crash between a checkpoint's two writes (sled, then the mirror file) leaves the file
/// behind: a line missing, a line cut short, or no file at all. A disk that lost synced data can
/// leave sled behind instead. The next writer's start makes the two one list again, so later
/// checkpoints still agree position by position and the ledger starts again and again.
#[test]
fn a_crash_between_a_checkpoints_two_writes_is_mended_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    let log = dir.path().join(CHECKPOINT_LOG);
    // Open, append one event, sign a checkpoint of the new head; return the checkpoints.
    let mut step = |n: u32, damage: &dyn Fn(&Store)| -> Vec<v1::Checkpoint> {
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        let all = store.all_checkpoints().unwrap();
        assert_eq!(store.checkpoints().unwrap(), all, "sled mended");
        assert_eq!(store.checkpoint_log().unwrap(), all, "the file mended");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(text.is_empty() || text.ends_with('\n'), "no line cut short");
        let env = if n == 0 {
            op.env(register(&t))
        } else {
            t.env(bet(n))
        };
        assert_eq!(status(&submit(&mut a, vec![env])[0]).0, St::Accepted);
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW, "test").unwrap();
        damage(&store);
        store.sync().unwrap();
        all
    };
    let drop_last_line = |_: &Store| {
        let text = std::fs::read_to_string(&log).unwrap();
        let keep: Vec<&str> = text.lines().collect();
        std::fs::write(&log, keep[..keep.len() - 1].join("\n") + "\n").unwrap();
    };
    let cut_last_line = |_: &Store| {
        let len = std::fs::metadata(&log).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&log)
            .unwrap()
            .set_len(len - 20)
            .unwrap();
    };
    let lose_the_file = |_: &Store| std::fs::remove_file(&log).unwrap();
    let sled_loses_the_last = |s: &Store| {
        let (k, _) = s.tree.scan_prefix([b'C']).last().unwrap().unwrap();
        s.tree.remove(k).unwrap();
    };
    assert!(step(0, &lose_the_file).is_empty());
    assert_eq!(step(1, &drop_last_line).len(), 1);
    assert_eq!(step(2, &cut_last_line).len(), 2);
    assert_eq!(step(3, &sled_loses_the_last).len(), 3);
    assert_eq!(step(4, &|_: &Store| {}).len(), 4);
    let (store, _a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    let all = store.all_checkpoints().unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(
        (
            store.checkpoints().unwrap(),
            store.checkpoint_log().unwrap()
        ),
        (all.clone(), all)
    );
}

/// The latest checkpoint is kept in memory once read: it is always the last of the two lists.
#[test]
fn the_latest_checkpoint_is_the_last_written() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    for n in 1..=3u32 {
        submit(&mut a, vec![t.env(bet(n))]);
        let (i, h) = store.head().unwrap().unwrap();
        let cp = store.write_checkpoint(i, &h, NOW, "test").unwrap();
        let (latest, info) = store.latest_checkpoint().unwrap().unwrap();
        assert_eq!((&latest, info.number, info.index), (&cp, n as u64, i));
        assert_eq!(store.all_checkpoints().unwrap().last(), Some(&cp));
        // The same head again: the same checkpoint, no new one.
        assert_eq!(store.write_checkpoint(i, &h, NOW, "again").unwrap(), cp);
    }
}

/// A ledger whose key file is gone does not start with a new key, and leaves none behind.
#[test]
fn a_ledger_without_its_key_file_asks_for_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let op = Dev::new("operator-1", 1);
    drop(Store::open_writer(dir.path(), &cfg(&op)).unwrap());
    let key = dir.path().join(LEDGER_KEY_FILE);
    std::fs::remove_file(&key).unwrap();
    let err = Store::open_writer(dir.path(), &cfg(&op))
        .err()
        .expect("refused");
    assert!(err.to_string().contains("restore its key"), "{err}");
    assert!(!key.exists(), "no new key was made");
}

/// A head record naming entry `u64::MAX` (no chain gets there) is corruption, not an index that
/// readers could step past.
#[test]
fn a_head_record_at_the_last_index_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let op = Dev::new("operator-1", 1);
    let (store, _a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    let mut v = u64::MAX.to_be_bytes().to_vec();
    v.extend([0u8; 32]);
    store.tree.insert(crate::store::K_HEAD, v).unwrap();
    let err = store.head().expect_err("refused");
    assert!(err.to_string().contains("no chain can reach"), "{err}");
    assert!(store.unfinished_group().is_err());
}

/// Tampering that sled's own checksums cannot see (an entry rewritten through sled, with a valid
/// CRC) is found by the verifier at its index, and a rewritten tail makes ledgerd's startup refuse.
#[test]
fn an_entry_rewritten_through_sled_is_found_at_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    {
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        let mut envs = vec![op.env(register(&t))];
        envs.extend((0..20).map(|n| t.env(bet(n))));
        submit(&mut a, envs);
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW, "test").unwrap();
        submit(&mut a, vec![t.env(bet(100))]);
        for index in [10u64, i + 1] {
            let mut e = store.entry(index).unwrap().unwrap();
            e.body[6] ^= 1;
            // Rewrite the chunk holding it, through sled (valid sled checksums).
            let (k, v) = store
                .tree
                .range(crate::store::entry_key(0)..=crate::store::entry_key(index))
                .next_back()
                .unwrap()
                .unwrap();
            let first = crate::store::u64_of(&k[1..]).unwrap();
            let mut chunk = crate::store::decode_chunk(first, &v).unwrap();
            chunk[(index - first) as usize] = e;
            let (_, bytes) = crate::store::encode_chunks(&chunk).remove(0);
            store.tree.insert(k, bytes).unwrap();
            let mut v = ChainVerifier::new(None);
            let err = store
                .entries(0, u64::MAX)
                .map(|e| v.check_entry(&e.unwrap()).map(|_| ()))
                .find_map(|r| r.err())
                .unwrap();
            assert_eq!(err.index, Some(10), "the first broken index: {err}");
        }
        store.sync().unwrap();
    }
    // The entry after the last checkpoint was rewritten: startup refuses to serve.
    let err = Store::open_writer(dir.path(), &cfg(&op))
        .err()
        .expect("refused");
    assert!(err.to_string().contains("entry 23"), "{err}");
}

/// sled never fsyncs blob files; pages must stay below its blob threshold even with the largest
/// envelopes the ingest accepts (64 KiB bodies).
#[test]
fn the_largest_envelopes_leave_no_unsynced_blob_files() {
    let (d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    let big = |n: usize| {
        P::BetsCollected(v1::BetsCollected {
            table_id: "t1".into(),
            round_id: format!("r{n}"),
            bet_ids: (0..500).map(|i| format!("{i:0>120}")).collect(),
        })
    };
    for g in 0..3 {
        let envs: Vec<_> = (0..40).map(|n| t.env(big(g * 100 + n))).collect();
        assert!(envs[0].body.len() > 60_000 && envs[0].body.len() <= 65_536);
        let r = submit(&mut a, envs);
        assert!(r.iter().all(|r| status(r).0 == St::Accepted), "{:?}", r[0]);
    }
    let blobs = std::fs::read_dir(d.path().join("blobs"))
        .map(|r| r.count())
        .unwrap_or(0);
    assert_eq!(blobs, 0, "sled wrote blob files");
    verify_all(&store);
}

mod entry_view {
    use super::*;
    use proptest::prelude::*;

    fn entry() -> impl Strategy<Value = v1::ChainEntry> {
        (
            any::<u32>(),
            any::<u64>(),
            any::<i64>(),
            any::<i32>(),
            proptest::collection::vec(any::<u8>(), 0..300),
            proptest::collection::vec(any::<u8>(), 0..70),
            proptest::collection::vec(any::<u8>(), 0..40),
        )
            .prop_map(
                |(format, index, at, kind, body, sig, hash)| v1::ChainEntry {
                    format,
                    index,
                    received_at_ms: at,
                    kind,
                    body,
                    signature: sig,
                    prev_hash: hash.clone(),
                    entry_hash: hash,
                },
            )
    }

    /// If the strict reader accepts bytes, prost accepts them too, with the same fields.
    fn agrees(bytes: &[u8]) -> Result<(), TestCaseError> {
        if let Some(view) = EntryView::parse(bytes) {
            let e = v1::ChainEntry::decode(bytes);
            prop_assert!(e.is_ok(), "prost refuses what the view read: {e:?}");
            let e = e.unwrap();
            prop_assert_eq!(
                (view.index, view.received_at_ms, view.kind, &view.body[..]),
                (e.index, e.received_at_ms, e.kind, &e.body[..])
            );
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn reads_every_encoded_entry_as_prost_does(e in entry()) {
            let bytes = e.encode_to_vec();
            let view = EntryView::parse(&bytes);
            prop_assert!(view.is_some(), "a well-formed entry is read without prost");
            agrees(&bytes)?;
        }

        #[test]
        fn never_accepts_what_prost_refuses(
            e in entry(),
            cut in any::<prop::sample::Index>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            junk in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let mut bytes = e.encode_to_vec();
            for (at, x) in flips {
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    bytes[i] ^= x;
                }
            }
            agrees(&bytes)?;
            if !bytes.is_empty() {
                bytes.truncate(cut.index(bytes.len()));
                agrees(&bytes)?;
            }
            bytes.extend_from_slice(&junk);
            agrees(&bytes)?;
            agrees(&junk)?;
        }
    }

    #[test]
    fn odd_encodings_fall_back_to_prost_with_the_same_result() {
        // Unknown fields of every plain wire type, a repeated field (the last wins), a group.
        let mut b = v1::ChainEntry {
            index: 7,
            body: vec![1, 2],
            ..Default::default()
        }
        .encode_to_vec();
        b.extend_from_slice(&[(10 << 3) as u8, 1]); // field 10, varint
        b.extend_from_slice(&[(11 << 3 | 1) as u8, 0, 0, 0, 0, 0, 0, 0, 0]); // fixed64
        b.extend_from_slice(&[(12 << 3 | 5) as u8, 0, 0, 0, 0]); // fixed32
        b.extend_from_slice(&[(2 << 3) as u8, 9]); // index again: 9
        let v = EntryView::parse(&b).expect("plain unknown fields are skipped");
        assert_eq!((v.index, &v.body[..]), (9, &[1u8, 2][..]));
        assert_eq!(v1::ChainEntry::decode(&b[..]).unwrap().index, 9);
        // A group: the view leaves it to prost.
        let mut g = b.clone();
        g.extend_from_slice(&[(13 << 3 | 3) as u8, (13 << 3 | 4) as u8]);
        assert!(EntryView::parse(&g).is_none());
        // A known field with the wrong wire type.
        let w = [(5 << 3) as u8, 1];
        assert!(EntryView::parse(&w).is_none());
        assert!(v1::ChainEntry::decode(&w[..]).is_err());
    }

    /// A store holding a registration and three groups of 300 events (several chunks each).
    pub(super) fn three_groups_of_300() -> (tempfile::TempDir, Arc<Store>) {
        groups(3, 300)
    }

    /// A store holding a registration and `n` groups of `per` events.
    pub(super) fn groups(n: usize, per: usize) -> (tempfile::TempDir, Arc<Store>) {
        let (d, mut op, store, mut a) = setup();
        let mut t = Dev::new("table-1", 2);
        submit(&mut a, vec![op.env(register(&t))]);
        for g in 0..n {
            let envs: Vec<_> = (0..per)
                .map(|n| {
                    t.env(P::RoundOpened(v1::RoundOpened {
                        table_id: "t1".into(),
                        round_id: format!("r{g}-{n}"),
                    }))
                })
                .collect();
            submit(&mut a, envs);
        }
        (d, store)
    }

    #[test]
    fn chunk_views_are_the_decoded_entries() {
        let (_d, store) = three_groups_of_300();
        let mut n = 0;
        let (mut order, chunks) = store.chunks(0, u64::MAX);
        for c in chunks {
            let c = c.unwrap();
            order.check(c.first).unwrap();
            let (decoded, views) = (c.decode().unwrap(), c.views().unwrap());
            assert_eq!(decoded.len(), views.len());
            for (e, v) in decoded.iter().zip(&views) {
                assert_eq!(
                    (e.index, e.received_at_ms, e.kind, &e.body[..]),
                    (v.index, v.received_at_ms, v.kind, &v.body[..])
                );
                assert!(matches!(v.body, std::borrow::Cow::Borrowed(_)));
            }
            n += views.len();
            order.advance(c.first, views.len());
        }
        assert_eq!(n as u64, store.head().unwrap().unwrap().0 + 1);
        assert!(n > 900);
    }

    /// The stored chunks of a store of two groups of 300 events, each in the linked form the
    /// writer writes and in the first format (built once for the cases below).
    fn both_chunk_formats() -> &'static [(u64, Vec<u8>)] {
        static CHUNKS: std::sync::OnceLock<Vec<(u64, Vec<u8>)>> = std::sync::OnceLock::new();
        CHUNKS.get_or_init(|| {
            let (_d, store) = groups(2, 300);
            let (_, chunks) = store.chunks(0, u64::MAX);
            let mut out = Vec::new();
            for c in chunks {
                let c = c.unwrap();
                assert_eq!(c.bytes()[0], 1, "the writer writes linked chunks");
                for (first, v) in crate::store::encode_chunks(&c.decode().unwrap()) {
                    assert_eq!(first, c.first);
                    assert_ne!(v[0], 1, "the first format");
                    out.push((first, v));
                }
                out.push((c.first, c.bytes().to_vec()));
            }
            out
        })
    }

    /// [`Chunk::stored_entries`] and [`Chunk::decode`] on the same bytes: the same error, or the
    /// same entries field for field, each read in place with its encoding as its leaf.
    fn reads_as_decode(first: u64, bytes: &[u8]) -> Result<(), TestCaseError> {
        let c = Chunk {
            first,
            bytes: bytes.into(),
        };
        match (c.decode(), c.stored_entries()) {
            (Ok(decoded), Ok(stored)) => {
                prop_assert_eq!(decoded.len(), stored.len());
                for (e, s) in decoded.iter().zip(&stored) {
                    prop_assert_eq!(&s.fields().to_entry(), e);
                    if let StoredItem::InPlace(s) = s {
                        prop_assert_eq!(s.encoded(), e.encode_to_vec());
                        prop_assert_eq!(
                            s.leaf_hash(),
                            ledger_core::merkle::leaf_hash(&e.encode_to_vec())
                        );
                    }
                }
            }
            (Err(a), Err(b)) => prop_assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (a, b) => prop_assert!(false, "decode {:?}, in place {:?}", a.err(), b.err()),
        }
        Ok(())
    }

    #[test]
    fn stored_entries_are_read_in_place_and_are_the_decoded_entries() {
        let chunks = both_chunk_formats();
        assert!(chunks.len() >= 6);
        for (first, bytes) in chunks {
            reads_as_decode(*first, bytes).unwrap();
            let c = Chunk {
                first: *first,
                bytes: bytes.as_slice().into(),
            };
            let items = c.stored_entries().unwrap();
            assert!(
                items.iter().all(|i| matches!(i, StoredItem::InPlace(_))),
                "the writer's entries are all read in place"
            );
            // A chunk said to start elsewhere: refused at its first entry, as decode does.
            reads_as_decode(first + 1, bytes).unwrap();
            assert!(c.stored_entries().is_ok());
            assert!(
                Chunk {
                    first: first + 1,
                    bytes: bytes.as_slice().into()
                }
                .stored_entries()
                .is_err()
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Changed, cut or added bytes anywhere in a chunk of either format: the reading in
        /// place gives what decoding gives (the same error, or the same entries).
        #[test]
        fn stored_entries_agree_with_decode_on_damaged_chunks(
            which in any::<prop::sample::Index>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in proptest::option::of(any::<prop::sample::Index>()),
            insert in proptest::option::of((any::<prop::sample::Index>(), proptest::collection::vec(any::<u8>(), 1..8))),
        ) {
            let chunks = both_chunk_formats();
            let (first, bytes) = &chunks[which.index(chunks.len())];
            let mut bytes = bytes.clone();
            for (at, x) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
            if let Some((at, extra)) = insert {
                let i = at.index(bytes.len());
                bytes.splice(i..i, extra);
            }
            if let Some(at) = cut {
                bytes.truncate(at.index(bytes.len()));
            }
            reads_as_decode(*first, &bytes)?;
        }
    }

    /// A scan of more chunks than `SETTLE_AFTER_CHUNKS` re-reads each later chunk's key (to make
    /// sled evict as it goes): it still gives every entry once and in order, from any start, and
    /// still finds a chunk missing after that point.
    #[test]
    fn a_long_scan_that_settles_the_cache_reads_every_entry_once_in_order() {
        let (_d, store) = groups(40, 20);
        let keys = chunk_keys(&store);
        assert!(
            keys.len() >= 40,
            "one chunk per group at least: {}",
            keys.len()
        );
        let head = store.head().unwrap().unwrap().0;
        let all: Vec<u64> = store
            .entries(0, u64::MAX)
            .map(|e| e.unwrap().index)
            .collect();
        assert_eq!(all, (0..=head).collect::<Vec<_>>());
        let some: Vec<u64> = store.entries(37, 700).map(|e| e.unwrap().index).collect();
        assert_eq!(some, (37..=700.min(head)).collect::<Vec<_>>());
        let after = crate::store::u64_of(&keys[2][1..]).unwrap();
        let rest: Vec<u64> = store
            .chunks_after(after, u64::MAX)
            .flat_map(|c| c.unwrap().decode().unwrap())
            .map(|e| e.index)
            .collect();
        let next = crate::store::u64_of(&keys[3][1..]).unwrap();
        assert_eq!(rest, (next..=head).collect::<Vec<_>>());
        // A gap after the first chunks is still found where it is.
        let (gone, err) = remove_chunk(&store, &keys, 30);
        assert!(
            matches!(&err, StoreError::CorruptEntry { index, .. } if *index == gone),
            "{err}"
        );
    }

    /// Remove the `n`th stored chunk: the index it started at, and the error reading the whole
    /// chain then stops at.
    fn remove_chunk(store: &Store, keys: &[sled::IVec], n: usize) -> (u64, StoreError) {
        let gone = crate::store::u64_of(&keys[n][1..]).unwrap();
        store.tree.remove(&keys[n]).unwrap();
        let err = store
            .entries(0, u64::MAX)
            .find_map(|e| e.err())
            .expect("the gap is found");
        (gone, err)
    }

    #[test]
    fn a_missing_chunk_is_named_by_the_index_expected() {
        let (_d, store) = three_groups_of_300();
        // Drop the second chunk of the second group.
        let keys = chunk_keys(&store);
        let after = crate::store::u64_of(&keys[5][1..]).unwrap();
        let (gone, err) = remove_chunk(&store, &keys, 4);
        assert!(
            matches!(&err, StoreError::CorruptEntry { index, detail } if *index == gone && detail.contains(&format!("starts at entry {after}"))),
            "{err}"
        );
        // The same through the chunk reader's order check.
        let (mut order, chunks) = store.chunks(0, u64::MAX);
        let err = chunks
            .map(|c| order.accept(c, |c| c.views().map(|v| v.len()), |n| *n))
            .find_map(|r| r.err())
            .expect("the gap is found");
        assert!(
            matches!(err, StoreError::CorruptEntry { index, .. } if index == gone),
            "{err}"
        );
    }
}

mod windowed {
    use super::*;

    /// A stopped ledger of a registration and three groups of 300 events, and its entries as
    /// one reading of the store gives them.
    fn stopped() -> (tempfile::TempDir, Vec<v1::ChainEntry>) {
        let (d, store) = entry_view::three_groups_of_300();
        let all: Vec<_> = store.entries(0, u64::MAX).map(Result::unwrap).collect();
        drop(store);
        (d, all)
    }

    fn read(dir: &std::path::Path, from: u64, to: u64, window: usize) -> Vec<v1::ChainEntry> {
        windowed_entries_with(dir, from, to, window)
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn every_entry_comes_once_and_in_order_whatever_the_window() {
        let (d, all) = stopped();
        assert!(all.len() > 900);
        // 1 byte: one chunk per opening; then a few chunks; then all in one.
        for window in [1, 40_000, 100_000, WINDOW_BYTES] {
            assert_eq!(read(d.path(), 0, u64::MAX, window), all, "window {window}");
        }
        // A range inside the chain, across chunk and window boundaries.
        assert_eq!(read(d.path(), 250, 650, 1), all[250..=650].to_vec());
        assert_eq!(read(d.path(), 298, 302, 1), all[298..=302].to_vec());
        // Past the end, and an empty range.
        assert!(read(d.path(), all.len() as u64, u64::MAX, 100).is_empty());
        assert!(read(d.path(), 10, 9, 100).is_empty());
    }

    /// Remove the fifth stored chunk of the stopped ledger in `dir`; the index it started at.
    fn remove_fifth_chunk(dir: &std::path::Path) -> u64 {
        let store = Store::open_existing(dir).unwrap();
        let keys = chunk_keys(&store);
        store.tree.remove(&keys[4]).unwrap();
        store.db.flush().unwrap();
        crate::store::u64_of(&keys[4][1..]).unwrap()
    }

    #[test]
    fn a_missing_chunk_stops_the_reading_at_the_index_expected() {
        let (d, all) = stopped();
        let gone = remove_fifth_chunk(d.path());
        // The gap inside a window, where a window starts, and where the reading starts.
        for (from, window) in [(0, WINDOW_BYTES), (0, 1), (gone, WINDOW_BYTES)] {
            let got: Vec<_> = windowed_entries_with(d.path(), from, u64::MAX, window)
                .unwrap()
                .collect();
            let (ok, rest): (Vec<_>, Vec<_>) = got.into_iter().partition(Result::is_ok);
            assert_eq!(rest.len(), 1, "one error, then nothing");
            let err = rest.into_iter().next().unwrap().unwrap_err();
            assert!(
                matches!(&err, StoreError::CorruptEntry { index, .. } if *index == gone),
                "{err}"
            );
            assert_eq!(
                ok.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
                all[from as usize..gone as usize].to_vec()
            );
        }
    }

    /// Every chunk's entries through the order check, as a reader on other threads takes them.
    fn through_order(
        mut order: ChunkOrder,
        chunks: impl Iterator<Item = Result<Chunk, StoreError>>,
        from: u64,
        to: u64,
    ) -> Result<Vec<v1::ChainEntry>, StoreError> {
        let mut out = Vec::new();
        for c in chunks {
            let c = c?;
            order.check(c.first)?;
            let es = c.decode()?;
            order.advance(c.first, es.len());
            out.extend(es.into_iter().filter(|e| e.index >= from && e.index <= to));
        }
        Ok(out)
    }

    #[test]
    fn windowed_chunks_are_the_chunks_of_one_reading_whatever_the_window() {
        let (d, all) = stopped();
        let one: Vec<u64> = {
            let store = Store::open_existing(d.path()).unwrap();
            store
                .chunks(0, u64::MAX)
                .1
                .map(|c| c.unwrap().first)
                .collect()
        };
        assert!(one.len() > 4);
        // 1 byte: one chunk per opening; then a few chunks; then all in one.
        for window in [1, 40_000, 100_000, WINDOW_BYTES] {
            let (_, chunks) =
                WindowedChunks::open_with_window(d.path(), 0, u64::MAX, window).unwrap();
            let firsts: Vec<u64> = chunks.map(|c| c.unwrap().first).collect();
            assert_eq!(firsts, one, "window {window}");
            let (order, chunks) =
                WindowedChunks::open_with_window(d.path(), 0, u64::MAX, window).unwrap();
            assert_eq!(through_order(order, chunks, 0, u64::MAX).unwrap(), all);
        }
        // A range that starts and ends inside chunks.
        let (order, chunks) = WindowedChunks::open_with_window(d.path(), 250, 650, 1).unwrap();
        assert_eq!(
            through_order(order, chunks, 250, 650).unwrap(),
            all[250..=650].to_vec()
        );
    }

    #[test]
    fn a_chunk_missing_at_a_window_boundary_is_found_by_the_order_check() {
        let (d, _all) = stopped();
        let gone = remove_fifth_chunk(d.path());
        for window in [1, WINDOW_BYTES] {
            let (order, chunks) =
                WindowedChunks::open_with_window(d.path(), 0, u64::MAX, window).unwrap();
            let err = through_order(order, chunks, 0, u64::MAX).unwrap_err();
            assert!(
                matches!(&err, StoreError::CorruptEntry { index, .. } if *index == gone),
                "window {window}: {err}"
            );
        }
    }

    #[test]
    fn a_ledger_in_use_is_an_error_not_a_wait_forever() {
        let (d, _op, _store, _a) = setup();
        let err = windowed_entries(d.path(), 0, u64::MAX)
            .err()
            .expect("refused");
        assert!(err.to_string().contains("in use"), "{err}");
        let err = WindowedChunks::open(d.path(), 0, u64::MAX)
            .err()
            .expect("refused");
        assert!(err.to_string().contains("in use"), "{err}");
    }
}

/// The keys of the stored entry chunks, in order.
fn chunk_keys(store: &Store) -> Vec<sled::IVec> {
    store
        .tree
        .scan_prefix([crate::store::entry_key(0)[0]])
        .keys()
        .map(|k| k.unwrap())
        .collect()
}

/// What the tree holds, except the undo record.
fn records(store: &Store) -> Vec<(sled::IVec, sled::IVec)> {
    store
        .tree
        .iter()
        .map(|r| r.unwrap())
        .filter(|(k, _)| &k[..] != b"@pending")
        .collect()
}

/// A crash can stop a group's writes after any one of them (sled recovers a prefix of its log,
/// in the order the appender wrote it). At every such point: readers take the chain up to the
/// head record and pass verification; the writer's next start undoes the group, leaving every
/// record exactly as it was before the group; and the same envelopes are then decided as they
/// are by a ledger that never crashed. The group covers every kind of record: entries, sequence
/// runs, a new device, a revoked one (a record overwritten), a security finding, the head.
#[test]
fn a_group_cut_short_by_a_crash_is_undone_at_the_next_start() {
    let first_group = |op: &mut Dev, t: &mut Dev, u: &mut Dev| {
        let mut envs = vec![op.env(register(t)), op.env(register(u))];
        envs.extend((0..5).map(|n| t.env(bet(n))));
        envs.extend((0..3).map(|n| u.env(bet(n))));
        envs
    };
    let cut_group = |op: &mut Dev, t: &mut Dev, v: &Dev| {
        let mut envs: Vec<v1::Envelope> = (5..10).map(|n| t.env(bet(n))).collect();
        envs.push(t.env_at(3, bet(99))); // equivocation: a security finding
        envs.push(op.env(P::DeviceRevoked(v1::DeviceRevoked {
            device_id: "table-2".into(),
            reason: "retired".into(),
        })));
        envs.push(op.env(register(v)));
        envs
    };
    let decide = |a: &mut Appender, envs: Vec<v1::Envelope>| {
        let store = a.store().clone();
        let items = envs
            .into_iter()
            .map(|e| precheck(&store, e, 65536, &TimePolicy::default(), NOW))
            .collect::<Vec<_>>();
        let mut items = items;
        verify_prechecked(&mut items);
        a.apply(items, NOW)
    };
    let outcome = |r: &[v1::Receipt]| -> Vec<(i32, i32, u64)> {
        r.iter().map(|r| (r.status, r.reason, r.index)).collect()
    };

    // A ledger after the first group; the devices of the cut group.
    let ledger_after_first_group = || {
        let (dir, mut op, store, mut a) = setup();
        let (mut t, mut u) = (Dev::new("table-1", 2), Dev::new("table-2", 3));
        submit(&mut a, first_group(&mut op, &mut t, &mut u));
        (dir, store, a, op, t, Dev::new("table-3", 4))
    };

    // The reference: a ledger that never crashed.
    let expected = {
        let (_dir, _store, mut a, mut op, mut t, v) = ledger_after_first_group();
        let r = decide(&mut a, cut_group(&mut op, &mut t, &v)).unwrap().0;
        assert_eq!(status(&r[5]).0, St::Equivocation);
        outcome(&r)
    };

    for stop in 0u64.. {
        let (dir, store, mut a, mut op, mut t, v) = ledger_after_first_group();
        let before = records(&store);
        let head = store.head().unwrap().unwrap();
        let envs = cut_group(&mut op, &mut t, &v);
        store
            .crash_before_write
            .store(stop, std::sync::atomic::Ordering::SeqCst);
        if decide(&mut a, envs.clone()).is_ok() {
            assert!(
                stop >= 9,
                "a group of this kind makes at least 9 writes, not {stop}"
            );
            break;
        }
        // What sled had written reaches its file, as after a kill -9; then the process is gone.
        store.db.flush().unwrap();
        drop((a, store));

        let reader = Store::open_existing(dir.path()).unwrap();
        assert_eq!(reader.head().unwrap(), Some(head), "stop {stop}");
        assert_eq!(
            reader.unfinished_group().unwrap(),
            (stop > 0).then_some(head.0 + 1),
            "stop {stop}: the undo record is the group's first write"
        );
        drop(reader);

        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        assert_eq!(store.unfinished_group().unwrap(), None);
        assert!(
            records(&store) == before,
            "stop {stop}: the store is not as it was before the group"
        );
        let r = decide(&mut a, envs).unwrap().0;
        store.sync().unwrap();
        assert_eq!(outcome(&r), expected, "stop {stop}");
        verify_all(&store);
    }
}

/// Entries after the head record with no unfinished group to explain them are refused at startup
/// (nothing the writer does leaves them).
#[test]
fn entries_after_the_head_record_are_refused() {
    let (dir, op, store, a) = setup();
    let (head, _) = store.head().unwrap().unwrap();
    let (k, chunk) = store
        .tree
        .range(crate::store::entry_key(0)..)
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(k[0], b'E');
    store
        .tree
        .insert(crate::store::entry_key(head + 1), chunk)
        .unwrap();
    store.sync().unwrap();
    drop((a, store));
    match Store::open_writer(dir.path(), &cfg(&op)) {
        Err(StoreError::CorruptEntry { index, detail }) => {
            assert_eq!(index, head + 1);
            assert!(detail.contains("after the head record"), "{detail}");
        }
        other => panic!("opened: {:?}", other.err()),
    }
}

/// Every record of the tree, the undo record included.
fn every_record(store: &Store) -> Vec<(sled::IVec, sled::IVec)> {
    store.tree.iter().map(|r| r.unwrap()).collect()
}

/// A disk that lost synced data can leave sled's log ending partway through a group that was
/// acknowledged and checkpointed: its undo record and entry chunks survive, its derived records,
/// its head record and the checkpoint in sled do not (`checkpoints.log` keeps the checkpoint).
/// Startup refuses (the checkpoint covers entries the head record does not reach), and it does
/// so before it changes anything: undoing the group first would delete the entries that
/// survived, the evidence of what was lost, and copying the checkpoint back would change sled.
#[test]
fn a_store_refused_at_startup_is_left_as_it_was() {
    let (dir, mut op, store, mut a) = setup();
    let (mut t, mut u) = (Dev::new("table-1", 2), Dev::new("table-2", 3));
    submit(&mut a, vec![op.env(register(&t)), op.env(register(&u))]);
    let before_group = store.head().unwrap().unwrap();
    let mut envs: Vec<_> = (0..5).map(|n| t.env(bet(n))).collect();
    envs.extend((0..3).map(|n| u.env(bet(n))));
    submit(&mut a, envs);
    let (i, h) = store.head().unwrap().unwrap();
    store.write_checkpoint(i, &h, NOW, "test").unwrap();

    // sled's log, cut after the group's entry chunks.
    let undo = crate::commit::Undo::decode(&store.tree.get(b"@pending").unwrap().unwrap()).unwrap();
    assert_eq!(undo.first, before_group.0 + 1);
    for (k, old) in &undo.before {
        match old {
            Some(v) => store.tree.insert(k.as_slice(), v.as_slice()).unwrap(),
            None => store.tree.remove(k.as_slice()).unwrap(),
        };
    }
    store
        .tree
        .insert(
            crate::store::K_HEAD,
            crate::commit::head_value(before_group.0, &before_group.1),
        )
        .unwrap();
    for k in store.tree.scan_prefix([b'C']).keys() {
        store.tree.remove(k.unwrap()).unwrap();
    }
    store.sync().unwrap();
    assert_eq!(store.unfinished_group().unwrap(), Some(undo.first));
    let kept = every_record(&store);
    let log_path = dir.path().join(CHECKPOINT_LOG);
    let log = std::fs::read(&log_path).unwrap();
    drop((a, store));

    let err = Store::open_writer(dir.path(), &cfg(&op))
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("acknowledged entries are missing"),
        "{err}"
    );
    let reader = Store::open_existing(dir.path()).unwrap();
    assert!(
        every_record(&reader) == kept,
        "the refused store was changed"
    );
    assert_eq!(std::fs::read(&log_path).unwrap(), log);
}

/// A device whose id is `MAX_ID_LEN` bytes long, the `n`th.
fn long_id_dev(n: usize) -> Dev {
    let mut seed = [7u8; 32];
    seed[..8].copy_from_slice(&(n as u64).to_be_bytes());
    Dev {
        id: format!("{n:0>width$}", width = ledger_core::event::MAX_ID_LEN),
        key: SigningKey::from_bytes(&seed),
        seq: 0,
    }
}

/// The undo record stays at most `UNDO_MAX` bytes, however many devices a group holds
/// (`ingest.max_batch` may be far above its default): the most devices with ids of the longest
/// length that fit are written as one group, one more closes the group before it.
#[test]
fn a_group_is_closed_early_before_its_undo_record_outgrows_its_bound() {
    use crate::commit::{UNDO_HEADER, UNDO_MAX, undo_item_len};
    let (_d, mut op, store, mut a) = setup();
    let per_device = undo_item_len(crate::store::seq_key(&long_id_dev(0).id, 1).len(), None);
    let base = UNDO_HEADER + undo_item_len(crate::store::K_DERIVED.len(), Some(8));
    let fit = (UNDO_MAX - base) / per_device;
    let mut devs: Vec<Dev> = (0..=fit).map(long_id_dev).collect();
    for part in devs.chunks(1000) {
        let regs = part.iter().map(|d| op.env(register(d))).collect();
        assert!(
            submit(&mut a, regs)
                .iter()
                .all(|r| status(r).0 == St::Accepted)
        );
    }

    // `fit` devices: one group, its undo record as large as it may be.
    a.undo_written.clear();
    let envs = devs[..fit].iter_mut().map(|d| d.env(bet(1))).collect();
    let r = submit(&mut a, envs);
    assert!(r.iter().all(|r| status(r).0 == St::Accepted));
    assert_eq!(a.undo_written, vec![(r[0].index, base + fit * per_device)]);
    assert!(base + (fit + 1) * per_device > UNDO_MAX);

    // One more: the group is closed before the last device's event.
    a.undo_written.clear();
    let envs = devs.iter_mut().map(|d| d.env(bet(2))).collect();
    let r = submit(&mut a, envs);
    assert!(r.iter().all(|r| status(r).0 == St::Accepted));
    assert_eq!(
        a.undo_written,
        vec![
            (r[0].index, base + fit * per_device),
            (r[fit].index, base + per_device)
        ]
    );
    assert_eq!(r[fit].index, r[fit - 1].index + 1, "one chain");
    verify_all(&store);
}

/// Registry events can name device records of up to a registration's body (64 KiB): a group
/// revoking many of them would have an undo record of megabytes, which sled writes to a blob
/// file it never fsyncs. The group is closed early instead, and nothing goes to a blob.
#[test]
fn revoking_many_large_device_records_leaves_no_blob_files() {
    let (d, mut op, store, mut a) = setup();
    let large = |n: usize| {
        let t = long_id_dev(n);
        let mut reg = register(&t);
        if let P::DeviceRegistered(r) = &mut reg {
            r.table_ids = (0..500).map(|i| format!("{n}-{i:0>120}")).collect();
        }
        op.env(reg)
    };
    let regs: Vec<_> = (0..40).map(large).collect();
    let len = regs[0].body.len();
    assert!(len > 60_000 && len <= 65_536, "{len}");
    for part in regs.chunks(10) {
        let r = submit(&mut a, part.to_vec());
        assert!(r.iter().all(|r| status(r).0 == St::Accepted), "{:?}", r[0]);
    }
    a.undo_written.clear();
    let revocations = (0..40)
        .map(|n| {
            op.env(P::DeviceRevoked(v1::DeviceRevoked {
                device_id: long_id_dev(n).id,
                reason: "retired".into(),
            }))
        })
        .collect();
    let r = submit(&mut a, revocations);
    assert!(r.iter().all(|r| status(r).0 == St::Accepted), "{:?}", r[0]);
    assert!(a.undo_written.len() > 1, "{:?}", a.undo_written);
    assert!(
        a.undo_written
            .iter()
            .all(|&(_, len)| len <= crate::commit::UNDO_MAX),
        "{:?}",
        a.undo_written
    );
    let blobs = std::fs::read_dir(d.path().join("blobs"))
        .map(|r| r.count())
        .unwrap_or(0);
    assert_eq!(blobs, 0, "sled wrote blob files");
    assert!(
        store
            .signer(&long_id_dev(39).id)
            .unwrap()
            .unwrap()
            .revoked_at_index
            .is_some()
    );
    verify_all(&store);
}

/// `signers_after` pages the registry in id order from any id, known or not, and reads no
/// record of another kind (the checkpoint records sort right after the devices').
#[test]
fn signers_are_read_in_id_order_after_any_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let devs: Vec<Dev> = ["t-b", "t-a", "t-d", "t-c"]
        .iter()
        .enumerate()
        .map(|(i, id)| Dev::new(id, 10 + i as u8))
        .collect();
    let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    let envs: Vec<_> = devs.iter().map(|d| op.env(register(d))).collect();
    submit(&mut a, envs);
    let (i, h) = store.head().unwrap().unwrap();
    store.write_checkpoint(i, &h, NOW, "test").unwrap();
    let ids = |after: Option<&str>| -> Vec<String> {
        store
            .signers_after(after)
            .map(|s| s.unwrap().id.to_string())
            .collect()
    };
    assert_eq!(ids(None), ["operator-1", "t-a", "t-b", "t-c", "t-d"]);
    assert_eq!(ids(Some("t-b")), ["t-c", "t-d"]);
    assert_eq!(ids(Some("t-bb")), ["t-c", "t-d"]);
    assert_eq!(ids(Some("a")), ids(None));
    assert!(ids(Some("t-d")).is_empty());
    assert!(ids(Some("~")).is_empty());
    let all: Vec<String> = store
        .signers()
        .unwrap()
        .iter()
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(all, ids(None));
}

/// Untrusted envelopes (from a source that has not shown it holds a key) are batch-checked in a
/// call of their own: a spoiled signature among them fails their batch, not the trusted ones'
/// (whose check stays one call). Every verdict is the signature's own, wherever it was checked.
#[test]
fn untrusted_signatures_are_checked_apart_from_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    submit(&mut a, vec![op.env(register(&t))]);
    let mut envs: Vec<v1::Envelope> = (0..6).map(|n| t.env(bet(n))).collect();
    // The sixth is an adversary's copy of the fifth with s spoiled (still canonical).
    let mut spoiled = envs[4].clone();
    spoiled.signature[40] ^= 1;
    envs.insert(5, spoiled);
    let untrusted = [false, false, true, false, false, true, true];
    let mut items: Vec<PreOutcome> = envs
        .into_iter()
        .zip(untrusted)
        .map(|(e, u)| {
            let mut p = precheck(&store, e, 65536, &TimePolicy::default(), NOW);
            if u {
                p.mark_untrusted();
            }
            p
        })
        .collect();
    let mut calls = Vec::new();
    append::verify_prechecked_with(&mut items, |batch| {
        let verdicts = ledger_core::signing::verify_prepared(batch);
        calls.push(verdicts.clone());
        verdicts
    });
    assert_eq!(
        calls,
        [vec![true, true, true, true], vec![true, false, true]],
        "the trusted four in one call, the untrusted three in another"
    );
    let receipts = a.apply(items, NOW).unwrap().0;
    let got: Vec<_> = receipts.iter().map(status).collect();
    let ok = (St::Accepted, Why::Unspecified);
    assert_eq!(got[..5], [ok; 5]);
    assert_eq!(got[5], (St::Rejected, Why::BadSignature));
    assert_eq!(got[6], ok);
}

/// Apply one group as ledgerd does (precheck, batch verification, one `apply`), without a sync;
/// the receipts and what `apply` says it appended.
fn apply_counted(a: &mut Appender, envs: Vec<v1::Envelope>) -> (Vec<v1::Receipt>, Applied) {
    let store = a.store().clone();
    let mut items: Vec<PreOutcome> = envs
        .into_iter()
        .map(|e| precheck(&store, e, 65536, &TimePolicy::default(), NOW))
        .collect();
    verify_prechecked(&mut items);
    a.apply(items, NOW).unwrap()
}

/// A group is split exactly where its undo record could first pass the bound, counting for a
/// registry event the record of the device it names (unless the group already writes that
/// record): each part is written whole, and `apply` reports every entry of every part. The
/// bound is lowered so that a few envelopes reach it; the sizes are those of `commit::Undo`.
#[test]
fn a_group_past_its_undo_bound_is_split_before_the_envelope_that_could_pass_it() {
    use crate::commit::{UNDO_HEADER, undo_item_len};
    use crate::store::{K_DERIVED, device_key, seq_key};
    let (_d, mut op, store, mut a) = setup();
    let base = UNDO_HEADER + undo_item_len(K_DERIVED.len(), Some(8));
    // What one envelope of each kind adds to an undo record: the operator's sequence run (new
    // in a part) and the record of a device not yet registered.
    let op_run = undo_item_len(seq_key(&op.id, 1).len(), None);
    let new_device = |id: &str| undo_item_len(device_key(id).len(), None);
    let (t1, t2, t3) = (
        Dev::new("t-1", 11),
        Dev::new("t-2", 12),
        Dev::new("t-3", 13),
    );
    // Room for one registration and a little more, not for a second one counted in full (the
    // operator's run and the new record) but for a second one counted without its record.
    a.undo_max = base + (op_run + new_device(&t1.id)) + op_run + 5;
    assert!(base + 2 * (op_run + new_device(&t1.id)) > a.undo_max);
    let before = store.head().unwrap().unwrap().0;
    let envs = vec![
        op.env(register(&t1)),
        op.env(register(&t2)),
        op.env(register(&t3)),
    ];
    a.undo_written.clear();
    let (r, applied) = apply_counted(&mut a, envs);
    assert!(r.iter().all(|r| status(r).0 == St::Accepted), "{r:?}");
    let one = base + op_run + new_device(&t1.id);
    assert_eq!(
        a.undo_written,
        vec![(r[0].index, one), (r[1].index, one), (r[2].index, one)],
        "one part per registration"
    );
    assert_eq!(applied.appended, 3, "every part's entries");
    assert_eq!(applied.head_index, before + 3);
    assert_eq!(
        (applied.head_index, applied.head_hash),
        store.head().unwrap().unwrap()
    );

    // A device registered and revoked in one group: the revocation names a record the group
    // already writes, so it adds no more than the operator's run, and both fit in one part.
    let t4 = Dev::new("t-4", 14);
    a.undo_max = base + op_run + new_device(&t4.id) + op_run;
    a.undo_written.clear();
    let revoke = P::DeviceRevoked(v1::DeviceRevoked {
        device_id: t4.id.clone(),
        reason: "retired".into(),
    });
    let (r, applied) = apply_counted(&mut a, vec![op.env(register(&t4)), op.env(revoke)]);
    assert!(r.iter().all(|r| status(r).0 == St::Accepted), "{r:?}");
    assert_eq!(
        a.undo_written,
        vec![(r[0].index, base + op_run + new_device(&t4.id))]
    );
    assert_eq!(applied.appended, 2);

    // Room for exactly two registrations counted in full: one part, whose record holds the
    // operator's run once and both new records.
    let (t5, t6) = (Dev::new("t-5", 15), Dev::new("t-6", 16));
    a.undo_max = base + 2 * (op_run + new_device(&t5.id));
    a.undo_written.clear();
    let (r, applied) = apply_counted(&mut a, vec![op.env(register(&t5)), op.env(register(&t6))]);
    assert!(r.iter().all(|r| status(r).0 == St::Accepted), "{r:?}");
    assert_eq!(
        a.undo_written,
        vec![(r[0].index, base + op_run + 2 * new_device(&t5.id))]
    );
    assert_eq!(applied.appended, 2);
    store.sync().unwrap();
    verify_all(&store);
}

/// A copy of a stopped ledger's data directory (sled's files, the key, the checkpoint list).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A group split in parts by its undo bound, cut short by a crash after any one of its writes:
/// the parts written before the crash stay whole (the head is at the end of one of them, never
/// inside), the part being written is undone at the next start, and the same envelopes sent
/// again get, for the parts that stayed, their original receipts as duplicates, and for the
/// rest what a ledger that never crashed gave them; the store is then, record for record, that
/// ledger's store. This is the all-or-nothing of a group across a crash, part by part.
#[test]
fn a_group_split_in_parts_and_cut_short_by_a_crash_keeps_whole_parts_only() {
    // Small enough that the group below is written in three parts: the bets and the finding, the
    // revocation (it names a device record written before the group), the registration with
    // the new device's bets and the last bet.
    const UNDO_BOUND: usize = 150;

    // One ledger after a first group, stopped; every run below starts from a copy of it.
    let template = tempfile::tempdir().unwrap();
    let (op, envs) = {
        let mut op = Dev::new("operator-1", 1);
        let (_store, mut a) = Store::open_writer(template.path(), &cfg(&op)).unwrap();
        let (mut t, mut u, mut v) = (
            Dev::new("table-1", 2),
            Dev::new("table-2", 3),
            Dev::new("table-3", 4),
        );
        let mut first = vec![op.env(register(&t)), op.env(register(&u))];
        first.extend((0..5).map(|n| t.env(bet(n))));
        first.extend((0..3).map(|n| u.env(bet(n))));
        submit(&mut a, first);
        let mut envs: Vec<v1::Envelope> = (5..9).map(|n| t.env(bet(n))).collect();
        envs.push(t.env_at(3, bet(99))); // equivocation: a security finding
        envs.push(op.env(P::DeviceRevoked(v1::DeviceRevoked {
            device_id: "table-2".into(),
            reason: "retired".into(),
        })));
        envs.push(op.env(register(&v)));
        envs.extend((0..3).map(|n| v.env(bet(n))));
        envs.push(t.env(bet(9)));
        (op, envs)
    };
    let start_from_template = || {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(template.path(), dir.path());
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        a.undo_max = UNDO_BOUND;
        (dir, store, a)
    };
    let outcome = |r: &[v1::Receipt]| -> Vec<(St, u64)> {
        r.iter()
            .map(|r| (St::try_from(r.status).unwrap(), r.index))
            .collect()
    };

    // The reference: the ledger that never crashed; where its parts end.
    let (start, expected, expected_records, part_ends) = {
        let (_dir, store, mut a) = start_from_template();
        let (start, _) = store.head().unwrap().unwrap();
        a.undo_written.clear();
        let (r, applied) = apply_counted(&mut a, envs.clone());
        store.sync().unwrap();
        let parts = a.undo_written.clone();
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert!(parts.iter().all(|&(_, len)| len <= UNDO_BOUND), "{parts:?}");
        assert_eq!(
            applied.appended,
            r.len() as u64,
            "every envelope is one entry"
        );
        assert_eq!(status(&r[4]).0, St::Equivocation);
        let mut ends: Vec<u64> = parts.iter().skip(1).map(|&(first, _)| first - 1).collect();
        ends.push(applied.head_index);
        (start, outcome(&r), records(&store), ends)
    };

    let mut heads_seen = std::collections::BTreeSet::new();
    for stop in 0u64.. {
        let (dir, store, mut a) = start_from_template();
        store
            .crash_before_write
            .store(stop, std::sync::atomic::Ordering::SeqCst);
        let mut items: Vec<PreOutcome> = envs
            .iter()
            .cloned()
            .map(|e| precheck(&store, e, 65536, &TimePolicy::default(), NOW))
            .collect();
        verify_prechecked(&mut items);
        if a.apply(items, NOW).is_ok() {
            assert!(
                stop as usize >= part_ends.len() * 4,
                "a part makes at least 4 writes; the whole group only {stop}"
            );
            break;
        }
        // What sled had written reaches its file, as after a kill -9; then the process is gone.
        store.db.flush().unwrap();
        drop((a, store));

        let reader = Store::open_existing(dir.path()).unwrap();
        let (head, _) = reader.head().unwrap().unwrap();
        assert!(
            head == start || part_ends.contains(&head),
            "stop {stop}: head {head} is inside a part (parts end at {part_ends:?})"
        );
        heads_seen.insert(head);
        drop(reader);

        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        assert_eq!(store.unfinished_group().unwrap(), None);
        assert_eq!(store.head().unwrap().unwrap().0, head, "stop {stop}");
        a.undo_max = UNDO_BOUND;
        let (r, _) = apply_counted(&mut a, envs.clone());
        store.sync().unwrap();
        let want: Vec<(St, u64)> = expected
            .iter()
            .map(|&(st, index)| match st {
                St::Accepted if index <= head => (St::Duplicate, index),
                other => (other, index),
            })
            .collect();
        assert_eq!(outcome(&r), want, "stop {stop} (head {head})");
        assert!(
            records(&store) == expected_records,
            "stop {stop}: the store differs from the one of the ledger that never crashed"
        );
        verify_all(&store);
    }
    // The crashes stopped the group at every part boundary: before the first part, and after
    // each part but the last (after the last one, the apply succeeded).
    let mut want: std::collections::BTreeSet<u64> = part_ends.iter().copied().collect();
    want.remove(part_ends.last().unwrap());
    want.insert(start);
    assert_eq!(heads_seen, want);
}

/// Signed receipts: every ACCEPTED receipt of a group, split into several commits by a small
/// undo limit, proves its envelope's entry against the group head the ledger signed, whose tree
/// root is the store's; other receipts carry nothing; with signing off no receipt is signed.
#[test]
fn accepted_receipts_carry_the_signed_group_head_and_their_path() {
    use ledger_core::receipt::verify_receipt;
    let (_d, mut op, store, mut a) = setup();
    let key = store.ledger_public_key().unwrap();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    let unsigned = submit(&mut a, vec![t.env(bet(0))]);
    assert!(unsigned[0].group.is_none() && unsigned[0].group_path.is_empty());
    a.sign_receipts(true);
    let mut u = Dev::new("table-2", 3);
    let first = submit(&mut a, vec![op.env(register(&u)), t.env(bet(1))]);
    let mut envs: Vec<v1::Envelope> = (2..40).map(|n| t.env(bet(n))).collect();
    envs.push(t.env_at(2, bet(2))); // a resend: DUPLICATE
    envs.push(t.env_at(99, bet(99))); // a gap: REJECTED
    envs.extend((0..30).map(|n| u.env(bet(n))));
    a.undo_max = 400; // several commits in this one apply
    let rs = submit(&mut a, envs.clone());
    assert!(
        a.undo_written.len() > 3,
        "the group was split: {:?}",
        a.undo_written
    );
    let mut heads = std::collections::HashSet::new();
    for (e, r) in envs.iter().zip(&rs) {
        if status(r).0 != St::Accepted {
            assert!(r.group.is_none() && r.group_path.is_empty(), "{r:?}");
            continue;
        }
        let c = verify_receipt(r, e, &key).unwrap_or_else(|e| panic!("{r:?}: {e}"));
        assert_eq!(store.tree_root(c.tree_size).unwrap(), c.tree_root);
        assert_eq!(
            store.entry(c.index).unwrap().unwrap().entry_hash,
            r.entry_hash
        );
        heads.insert(r.group.clone().unwrap().body);
    }
    assert_eq!(heads.len(), 1, "one signed head for the whole apply");
    let c = verify_receipt(&rs[0], &envs[0], &key).unwrap();
    assert_eq!(c.tree_size, store.head().unwrap().unwrap().0 + 1);
    // The earlier group's receipts verify with their own head.
    let env0 = op.env_at(op.seq, register(&u));
    verify_receipt(&first[0], &env0, &key).unwrap();
    verify_all(&store);
}

/// The Merkle tree kept with the chain (`crate::tree`): its root and proofs against the entries
/// as read back, across tiles, a restart and a reader of a stopped ledger.
mod merkle_tree {
    use super::*;
    use crate::tree::tile_key;
    use ledger_core::merkle::{
        Frontier, TreeHash, leaf_hash, verify_consistency, verify_inclusion,
    };

    /// Bets of one table, in groups of 2,000, to 66,000 and more entries: the first full tile of
    /// level 1 (65,536 entries) is completed inside a group.
    fn big_ledger() -> (tempfile::TempDir, Dev, Dev, Arc<Store>, Appender) {
        let (dir, mut op, store, mut a) = setup();
        let mut t = Dev::new("table-1", 2);
        submit(&mut a, vec![op.env(register(&t))]);
        for g in 0..33u32 {
            submit(
                &mut a,
                (0..2000).map(|i| t.env(bet(g * 2000 + i))).collect(),
            );
        }
        (dir, op, t, store, a)
    }

    /// The roots of every size, from the entries as a reader gets them (ChainEntry encodings).
    fn roots_from_entries(store: &Store) -> Vec<TreeHash> {
        let mut f = Frontier::new();
        let mut roots = vec![f.root()];
        for e in store.entries(0, u64::MAX) {
            f.push(leaf_hash(&e.unwrap().encode_to_vec()));
            roots.push(f.root());
        }
        roots
    }

    fn check_proofs(store: &Store, roots: &[TreeHash]) {
        let n = roots.len() as u64 - 1;
        for m in [0, 1, 255, 256, 65_535, 65_536, 65_537, n - 1] {
            let leaf = leaf_hash(&store.entry(m).unwrap().unwrap().encode_to_vec());
            for size in [m + 1, 65_536.max(m + 1), n] {
                let p = store.inclusion_proof(m, size).unwrap();
                verify_inclusion(&leaf, m, size, &p, &roots[size as usize])
                    .unwrap_or_else(|e| panic!("entry {m} in {size}: {e}"));
            }
        }
        for from in [1, 2, 300, 65_535, 65_536, 65_537, n - 3, n] {
            let p = store.consistency_proof(from, n).unwrap();
            verify_consistency(from, n, &p, &roots[from as usize], &roots[n as usize])
                .unwrap_or_else(|e| panic!("{from} to {n}: {e}"));
        }
        assert!(store.inclusion_proof(n, n).is_err());
        assert!(store.inclusion_proof(0, n + 1).is_err());
        assert!(store.consistency_proof(0, n).is_err());
        assert!(store.consistency_proof(5, 4).is_err());
    }

    #[test]
    fn the_tree_follows_the_groups_and_its_proofs_verify_after_a_restart_and_for_a_reader() {
        let (dir, op, mut t, store, a) = big_ledger();
        let roots = roots_from_entries(&store);
        let n = roots.len() as u64 - 1;
        assert_eq!(n, 66_003);
        assert_eq!(store.tree_root(n).unwrap(), roots[n as usize]);
        assert_eq!(store.tree_root(1000).unwrap(), roots[1000]);
        assert!(store.tree.contains_key(tile_key(1, 0)).unwrap());
        assert!(!store.tree.contains_key(tile_key(1, 1)).unwrap());
        check_proofs(&store, &roots);

        // A checkpoint signs the tree head; verify checks it against the entries.
        let (index, hash) = store.head().unwrap().unwrap();
        let cp = store.write_checkpoint(index, &hash, NOW, "test").unwrap();
        let info =
            ledger_core::record::check_checkpoint(&cp, store.ledger_public_key().as_ref()).unwrap();
        let tree = info.tree.expect("a tree head");
        assert_eq!((tree.size, tree.root), (n, roots[n as usize]));
        assert_eq!(tree.origin, "casino-ledger/test");
        let s = verify_all(&store);
        assert_eq!(s.tree_checkpoints, 1);
        assert_eq!(s.tree_root, Some(roots[n as usize]));

        // After a restart the right edge is rebuilt from the tiles and the entries after them,
        // and the next groups extend it.
        drop((a, store));
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        check_proofs(&store, &roots);
        submit(&mut a, (0..300).map(|i| t.env(bet(100_000 + i))).collect());
        let roots = roots_from_entries(&store);
        check_proofs(&store, &roots);
        drop((a, store));

        // A reader of the stopped ledger (no right edge in memory) gives the same.
        let reader = Store::open_existing(dir.path()).unwrap();
        check_proofs(&reader, &roots);
    }

    /// The tiles we serve, read by a third-party tlog-tiles client (`tlog_tiles::TileHashReader`,
    /// which authenticates every tile it loads against the tree's root): proofs it builds from
    /// them check, and the entry bundles hold the entries whose leaf hashes the tiles hold.
    #[test]
    fn tiles_and_entry_bundles_are_read_by_a_third_party_client() {
        use ledger_core::tiles::TilePath;
        struct Reader<'a>(&'a Store, u64);
        impl tlog_tiles::TileReader for Reader<'_> {
            fn height(&self) -> u8 {
                8
            }
            fn read_tiles(
                &self,
                tiles: &[tlog_tiles::Tile],
            ) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
                Ok(tiles
                    .iter()
                    .map(|t| {
                        let p = TilePath {
                            level: Some(t.level()),
                            n: t.level_index(),
                            width: t.width() as u16,
                        };
                        self.0.tile_data(&p, self.1).unwrap()
                    })
                    .collect())
            }
            fn save_tiles(&self, _: &[tlog_tiles::Tile], _: &[Vec<u8>]) {}
        }
        let (_dir, _op, _t, store, _a) = big_ledger();
        let roots = roots_from_entries(&store);
        for size in [70u64, 256, 257, 65_536, 66_003] {
            let root = tlog_tiles::Hash(roots[size as usize]);
            let tiles = Reader(&store, size);
            let r = tlog_tiles::TileHashReader::new(size, root, &tiles);
            assert_eq!(
                tlog_tiles::tree_hash(size, &r).unwrap(),
                root,
                "size {size}"
            );
            for m in [0, size / 2, size - 1] {
                let p = tlog_tiles::prove_record(size, m, &r).unwrap();
                let leaf =
                    tlog_tiles::record_hash(&store.entry(m).unwrap().unwrap().encode_to_vec());
                tlog_tiles::check_record(&p, size, root, m, leaf).unwrap();
            }
        }
        // An entry bundle: the entries themselves, whose hashes are the level-0 tile's.
        let size = 66_003;
        let bundle = store
            .tile_data(
                &TilePath {
                    level: None,
                    n: 257,
                    width: 211,
                },
                size,
            )
            .unwrap();
        let hashes = store
            .tile_data(
                &TilePath {
                    level: Some(0),
                    n: 257,
                    width: 211,
                },
                size,
            )
            .unwrap();
        let mut at = 0;
        let mut i = 0;
        while at < bundle.len() {
            let len = u16::from_be_bytes([bundle[at], bundle[at + 1]]) as usize;
            let entry = &bundle[at + 2..at + 2 + len];
            assert_eq!(&leaf_hash(entry)[..], &hashes[i * 32..(i + 1) * 32]);
            let e = v1::ChainEntry::decode(entry).unwrap();
            assert_eq!(e.index, 257 * 256 + i as u64);
            at += 2 + len;
            i += 1;
        }
        assert_eq!(i, 211);
        // Beyond the tree: a full tile not yet full, a level above, a width past the end.
        for t in [
            TilePath {
                level: Some(0),
                n: 257,
                width: 256,
            },
            TilePath {
                level: Some(2),
                n: 0,
                width: 2,
            },
            TilePath {
                level: None,
                n: 257,
                width: 212,
            },
        ] {
            assert!(store.tile_data(&t, size).is_err(), "{}", t.path());
        }
        assert!(
            store
                .tile_data(
                    &TilePath {
                        level: Some(1),
                        n: 0,
                        width: 256
                    },
                    size
                )
                .is_ok()
        );
    }

    /// Witnesses' cosignatures are kept beside the checkpoints, served in their notes, and the
    /// newest checkpoint cosigned by enough of them is found; a cosignature by an unknown key
    /// does not count.
    #[test]
    fn cosignatures_are_kept_and_the_newest_cosigned_checkpoint_is_found() {
        let (_dir, mut op, store, mut a) = setup();
        let mut t = Dev::new("table-1", 2);
        submit(&mut a, vec![op.env(register(&t))]);
        let (i1, h1) = store.head().unwrap().unwrap();
        let cp1 = store.write_checkpoint(i1, &h1, NOW, "test").unwrap();
        submit(&mut a, vec![t.env(bet(1))]);
        let (i2, h2) = store.head().unwrap().unwrap();
        let cp2 = store.write_checkpoint(i2, &h2, NOW, "test").unwrap();
        let (w1, w2) = (
            SigningKey::from_bytes(&[21; 32]),
            SigningKey::from_bytes(&[22; 32]),
        );
        let ws = vec![
            ("w1".to_string(), vec![w1.verifying_key().into()]),
            ("w2".to_string(), vec![w2.verifying_key().into()]),
        ];
        let text =
            |cp: &v1::Checkpoint| ledger_core::note::SignedNote::parse(&cp.note).unwrap().text;
        assert_eq!(store.latest_cosigned(&ws, 1).unwrap(), None);
        let c = |cp: &v1::Checkpoint, name: &str, k: &SigningKey| {
            ledger_core::note::cosign(&text(cp), name, k, 1_764_000_000).unwrap()
        };
        store.add_cosignature(1, &c(&cp1, "w1", &w1)).unwrap();
        store.add_cosignature(1, &c(&cp1, "w2", &w2)).unwrap();
        // A line under w1's name by another key, on the newer checkpoint: not w1's.
        store.add_cosignature(2, &c(&cp2, "w1", &w2)).unwrap();
        let got = store.latest_cosigned(&ws, 2).unwrap().unwrap();
        assert_eq!(got.body, cp1.body);
        let n = ledger_core::note::SignedNote::parse(&got.note).unwrap();
        assert!(n.cosigned_by("w1", w1.verifying_key()).is_ok());
        assert!(n.cosigned_by("w2", w2.verifying_key()).is_ok());
        assert_eq!(
            store.latest_cosigned(&ws, 1).unwrap().unwrap().body,
            cp1.body
        );
        store.add_cosignature(2, &c(&cp2, "w2", &w2)).unwrap();
        assert_eq!(
            store.latest_cosigned(&ws, 1).unwrap().unwrap().body,
            cp2.body
        );
        assert_eq!(
            store.latest_cosigned(&ws, 2).unwrap().unwrap().body,
            cp1.body
        );
        // The checkpoint itself is unchanged; its note gains the lines when read.
        assert_eq!(store.latest_checkpoint().unwrap().unwrap().0, cp2);
        assert_eq!(
            ledger_core::note::SignedNote::parse(
                &store.with_cosignatures(cp2.clone()).unwrap().note
            )
            .unwrap()
            .signatures
            .len(),
            3
        );
    }

    /// A witness with an ed25519 and an ML-DSA-44 key keeps two lines per checkpoint, and it
    /// counts only when both verify; a cosignature kept under the old key (`W` ‖ number ‖ name,
    /// before ML-DSA-44) still reads, once.
    #[test]
    fn two_cosignatures_per_witness_and_the_old_layout_still_reads() {
        use ledger_core::note::{self, CosignerKey, SignedNote};
        let (_dir, mut op, store, mut a) = setup();
        let t = Dev::new("table-1", 2);
        submit(&mut a, vec![op.env(register(&t))]);
        let (i1, h1) = store.head().unwrap().unwrap();
        let cp1 = store.write_checkpoint(i1, &h1, NOW, "test").unwrap();
        let text = SignedNote::parse(&cp1.note).unwrap().text;
        let ed = SigningKey::from_bytes(&[21; 32]);
        let ml = note::ml_dsa_44_from_seed(&[22; 32]);
        let ml_key = CosignerKey::from(note::ml_dsa_44_public(&ml));
        let old = note::cosign(&text, "w1", &ed, 1_764_000_000).unwrap();
        let mut k = vec![b'W'];
        k.extend_from_slice(&1u64.to_be_bytes());
        k.extend_from_slice(b"w1");
        store
            .tree
            .insert(k, [old.key_id.to_vec(), old.signature.clone()].concat())
            .unwrap();
        assert_eq!(store.cosignatures(1).unwrap(), vec![old.clone()]);
        let ws = vec![(
            "w1".to_string(),
            vec![CosignerKey::from(ed.verifying_key()), ml_key.clone()],
        )];
        let ed_only = vec![("w1".to_string(), vec![ed.verifying_key().into()])];
        assert_eq!(
            store.latest_cosigned(&ed_only, 1).unwrap().unwrap().body,
            cp1.body
        );
        assert_eq!(
            store.latest_cosigned(&ws, 1).unwrap(),
            None,
            "its ML-DSA-44 line is missing"
        );
        let new = note::cosign_ml_dsa_44(&text, "w1", &ml, 1_764_000_001).unwrap();
        store.add_cosignature(1, &new).unwrap();
        // The ed25519 line again, now in the new layout: still one line in the note.
        store.add_cosignature(1, &old).unwrap();
        let got = store.latest_cosigned(&ws, 1).unwrap().unwrap();
        let n = SignedNote::parse(&got.note).unwrap();
        assert_eq!(n.signatures.len(), 3, "the ledger's and the witness's two");
        assert_eq!(n.cosigned_by("w1", ml_key), Ok(1_764_000_001));
        assert_eq!(n.cosigned_by("w1", ed.verifying_key()), Ok(1_764_000_000));
        let mut bad = old.clone();
        bad.name = "w+1".into();
        assert!(store.add_cosignature(1, &bad).is_err());
    }

    fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let dest = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &dest);
            } else {
                std::fs::copy(e.path(), dest).unwrap();
            }
        }
    }

    /// A group that completes a tile and is cut short by a crash before its head record leaves
    /// no tile behind; written again, it stores the tile, and the root is the entries' root.
    #[test]
    fn a_tile_goes_with_the_group_that_completed_it_when_a_crash_cuts_it_short() {
        let (dir, mut op, store, mut a) = setup();
        let mut t = Dev::new("table-1", 2);
        submit(&mut a, vec![op.env(register(&t))]);
        for g in 0..32u32 {
            submit(
                &mut a,
                (0..2040).map(|i| t.env(bet(g * 2040 + i))).collect(),
            );
        }
        // 65,283 entries: the next 1,000 complete the first tile.
        assert_eq!(store.head().unwrap().unwrap().0, 65_282);
        drop((a, store));
        let next: Vec<v1::Envelope> = (0..1000).map(|i| t.env(bet(900_000 + i))).collect();
        for stop in 0u64.. {
            let copy = tempfile::tempdir().unwrap();
            copy_dir(dir.path(), copy.path());
            let (store, mut a) = Store::open_writer(copy.path(), &cfg(&op)).unwrap();
            let head = store.head().unwrap().unwrap();
            store
                .crash_before_write
                .store(stop, std::sync::atomic::Ordering::SeqCst);
            let store2 = store.clone();
            let items: Vec<PreOutcome> = next
                .iter()
                .cloned()
                .map(|e| precheck(&store2, e, 65536, &TimePolicy::default(), NOW))
                .collect();
            let mut items = items;
            verify_prechecked(&mut items);
            if a.apply(items, NOW).is_ok() {
                assert!(store.tree.contains_key(tile_key(1, 0)).unwrap());
                break;
            }
            store.db.flush().unwrap();
            drop((a, store, store2));
            let (store, mut a) = Store::open_writer(copy.path(), &cfg(&op)).unwrap();
            assert_eq!(store.head().unwrap(), Some(head), "stop {stop}");
            assert!(
                !store.tree.contains_key(tile_key(1, 0)).unwrap(),
                "stop {stop}: the tile outlived its group"
            );
            let roots = roots_from_entries(&store);
            assert_eq!(store.tree_root(head.0 + 1).unwrap(), *roots.last().unwrap());
            let store2 = store.clone();
            let mut items: Vec<PreOutcome> = next
                .iter()
                .cloned()
                .map(|e| precheck(&store2, e, 65536, &TimePolicy::default(), NOW))
                .collect();
            verify_prechecked(&mut items);
            a.apply(items, NOW).unwrap();
            store.sync().unwrap();
            assert!(
                store.tree.contains_key(tile_key(1, 0)).unwrap(),
                "stop {stop}"
            );
            let roots = roots_from_entries(&store);
            let n = roots.len() as u64 - 1;
            assert_eq!(
                store.tree_root(n).unwrap(),
                roots[n as usize],
                "stop {stop}"
            );
        }
    }

    /// A ledger written before the tree (no tiles, checkpoints without a tree head, as main
    /// wrote them before it) gets its tiles at its writer's next start, with the same root; its
    /// checkpoints continue with tree heads and the whole history verifies. A damaged tile is
    /// refused at start against the latest checkpoint's root.
    #[test]
    fn an_older_ledger_is_upgraded_in_place_and_a_damaged_tile_is_refused() {
        let (dir, op, mut t, store, a) = big_ledger();
        // Make it as the code before the tree left it: no tiles, two checkpoints of the old form.
        let key = store.key.as_ref().unwrap();
        let mut lines = String::new();
        for (number, index) in [(1u64, 1_000u64), (2, store.head().unwrap().unwrap().0)] {
            let e = store.entry(index).unwrap().unwrap();
            let hash: [u8; 32] = e.entry_hash.as_slice().try_into().unwrap();
            let cp = ledger_core::record::try_sign_checkpoint(
                key, number, index, &hash, NOW, "periodic",
            )
            .unwrap();
            let info = ledger_core::record::check_checkpoint(&cp, None).unwrap();
            assert!(info.tree.is_none());
            store
                .tree
                .insert(crate::store::checkpoint_key(number), cp.encode_to_vec())
                .unwrap();
            lines.push_str(&crate::store::checkpoint_line(&cp, &info));
        }
        std::fs::write(dir.path().join("checkpoints.log"), lines).unwrap();
        store.tree.remove(tile_key(1, 0)).unwrap();
        store.sync().unwrap();
        drop((a, store));

        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        assert!(store.tree.contains_key(tile_key(1, 0)).unwrap());
        submit(&mut a, (0..10).map(|i| t.env(bet(200_000 + i))).collect());
        let roots = roots_from_entries(&store);
        let n = roots.len() as u64 - 1;
        assert_eq!(store.tree_root(n).unwrap(), roots[n as usize]);
        let (index, hash) = store.head().unwrap().unwrap();
        let cp = store.write_checkpoint(index, &hash, NOW, "test").unwrap();
        assert!(!cp.note.is_empty());
        let s = verify_all(&store);
        assert_eq!((s.checkpoints, s.tree_checkpoints), (3, 1));
        let mut tile = store.tree.get(tile_key(1, 0)).unwrap().unwrap().to_vec();
        tile[100] ^= 1;
        store.tree.insert(tile_key(1, 0), tile).unwrap();
        store.sync().unwrap();
        drop((a, store));
        match Store::open_writer(dir.path(), &cfg(&op)) {
            Err(StoreError::Corrupt(m)) => assert!(m.contains("Merkle root"), "{m}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a damaged tile was not noticed"),
        }
    }
}

fn rotate(device: &str, to: &Dev) -> P {
    P::DeviceKeyRotated(v1::DeviceKeyRotated {
        device_id: device.into(),
        public_key: to.key.verifying_key().as_bytes().to_vec(),
        reason: "terminal replaced".into(),
    })
}

/// A device's key rotated by the operator: in the rotation's own group the old key signs before
/// it and the new one after it (its signature was prepared with the old key ahead of the
/// appender, and is checked again); the old key is refused from then on; the sequence goes on;
/// a reopened store, and one whose derived state is rebuilt, keep the new key; the chain verifies.
#[test]
fn a_rotated_device_key_signs_from_the_rotation_on() {
    let (d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let reg = op.env(register(&t));
    assert_eq!(status(&submit(&mut a, vec![reg])[0]).0, St::Accepted);
    let mut new = Dev::new("table-1", 3);
    let before = t.env(bet(1));
    let rotation = op.env(rotate("table-1", &new));
    new.seq = 1;
    let after = new.env(bet(2));
    let r = submit(&mut a, vec![before, rotation, after]);
    for x in &r {
        assert_eq!(status(x).0, St::Accepted, "{x:?}");
    }
    t.seq = 2;
    let old = t.env(bet(3));
    assert_eq!(
        status(&submit(&mut a, vec![old])[0]),
        (St::Rejected, Why::BadSignature)
    );
    // Refused: the key it already has, an unknown device, a device signing its own rotation.
    let same = op.env_at(op.seq + 1, rotate("table-1", &new));
    let unknown = op.env_at(op.seq + 1, rotate("table-9", &t));
    let own = new.env_at(3, rotate("table-1", &t));
    let r = submit(&mut a, vec![same, unknown, own]);
    assert_eq!(status(&r[0]), (St::Rejected, Why::RegistrationRefused));
    assert!(
        r[0].detail.contains("already has this key"),
        "{}",
        r[0].detail
    );
    assert_eq!(status(&r[1]), (St::Rejected, Why::RegistrationRefused));
    assert_eq!(status(&r[2]), (St::Rejected, Why::Unauthorized));
    let s = store.signer("table-1").unwrap().unwrap();
    assert_eq!((s.key, s.last_sequence), (new.key.verifying_key(), 2));
    verify_all(&store);

    drop(a);
    drop(store);
    let (store, mut a) = Store::open_writer(d.path(), &cfg(&op)).unwrap();
    assert_eq!(
        status(&submit(&mut a, vec![new.env_at(3, bet(3))])[0]).0,
        St::Accepted
    );
    t.seq = 3;
    assert_eq!(
        status(&submit(&mut a, vec![t.env(bet(4))])[0]),
        (St::Rejected, Why::BadSignature)
    );
    store.rebuild_derived().unwrap();
    let s = store.signer("table-1").unwrap().unwrap();
    assert_eq!((s.key, s.last_sequence), (new.key.verifying_key(), 3));
    assert_eq!(
        verify_all(&store).payloads.get("device_key_rotated"),
        Some(&1)
    );
}

fn machine(d: &Dev) -> P {
    P::DeviceRegistered(v1::DeviceRegistered {
        device_id: d.id.clone(),
        public_key: d.key.verifying_key().as_bytes().to_vec(),
        kind: v1::DeviceKind::Machine as i32,
        casino_id: "lisboa".into(),
        machine_id: d.id.clone(),
        model_id: "K".into(),
        bet_values_cents: vec![100],
        ..Default::default()
    })
}

fn pool(id: &str, machines: &[&str]) -> P {
    P::PoolConfigured(v1::PoolConfigured {
        pool_id: id.into(),
        kind: v1::PoolKind::Jackpot as i32,
        casino_ids: vec!["lisboa".into()],
        member_machine_ids: machines.iter().map(|m| m.to_string()).collect(),
        contribution_bp: 100,
        ..Default::default()
    })
}

fn captive(pool: &str, value_cents: i64) -> P {
    P::CaptiveValueReported(v1::CaptiveValueReported {
        pool_id: pool.into(),
        value_cents,
    })
}

/// A machine speaks for its own pools only: a captive value or contribution naming a pool that
/// does not list it (or is not configured) is refused with NOT_POOL_MEMBER; the
/// operator may report any captive value; a pool reconfigured without the machine refuses it
/// from then on; the members survive a reopen and a rebuild, a store without them (an older
/// version's) rebuilds them, and the chain verifies.
#[test]
fn a_machine_reports_only_for_the_pools_it_is_a_member_of() {
    let (d, mut op, store, mut a) = setup();
    let mut m1 = Dev::new("slot-1", 5);
    let mut m2 = Dev::new("slot-2", 6);
    let r = submit(
        &mut a,
        vec![
            op.env(machine(&m1)),
            op.env(machine(&m2)),
            op.env(pool("P1", &["slot-1"])),
        ],
    );
    assert!(r.iter().all(|x| status(x).0 == St::Accepted), "{r:?}");
    let r = submit(
        &mut a,
        vec![
            m1.env(captive("P1", 500)),
            m2.env_at(1, captive("P1", 500)),
            m2.env_at(1, captive("P9", 500)),
            m2.env_at(
                1,
                P::JackpotContribution(v1::JackpotContribution {
                    pool_id: "P1".into(),
                    machine_id: "slot-2".into(),
                    amount_cents: 100,
                }),
            ),
            op.env(captive("P1", 510)),
        ],
    );
    assert_eq!(status(&r[0]).0, St::Accepted, "{:?}", r[0]);
    assert_eq!(status(&r[1]), (St::Rejected, Why::NotPoolMember));
    assert_eq!(
        r[1].detail,
        "machine slot-2 (device slot-2) is not a member of pool P1"
    );
    assert_eq!(status(&r[2]), (St::Rejected, Why::NotPoolMember));
    assert_eq!(r[2].detail, "pool P9 is not configured");
    assert_eq!(status(&r[3]), (St::Rejected, Why::NotPoolMember));
    assert_eq!(status(&r[4]).0, St::Accepted, "{:?}", r[4]);
    // An award on a machine outside the pool happened: it is recorded (the audit finds it).
    let award = P::JackpotAwarded(v1::JackpotAwarded {
        pool_id: "P1".into(),
        machine_id: "slot-2".into(),
        amount_cents: 100,
        ..Default::default()
    });
    let r = submit(&mut a, vec![m2.env(award)]);
    assert_eq!(status(&r[0]).0, St::Accepted, "{:?}", r[0]);

    // Reconfigured: slot-2 in, slot-1 out.
    let r = submit(
        &mut a,
        vec![
            op.env(pool("P1", &["slot-2"])),
            m2.env(captive("P1", 520)),
            m1.env_at(2, captive("P1", 520)),
        ],
    );
    assert_eq!(status(&r[0]).0, St::Accepted);
    assert_eq!(status(&r[1]).0, St::Accepted, "{:?}", r[1]);
    assert_eq!(status(&r[2]), (St::Rejected, Why::NotPoolMember));
    verify_all(&store);

    let check = |a: &mut Appender, m1: &Dev, m2: &mut Dev| {
        let r = submit(a, vec![m1.env_at(2, captive("P1", 530))]);
        assert_eq!(status(&r[0]), (St::Rejected, Why::NotPoolMember));
        let r = submit(a, vec![m2.env(captive("P1", 530))]);
        assert_eq!(status(&r[0]).0, St::Accepted);
    };
    drop(a);
    drop(store);
    let (store, mut a) = Store::open_writer(d.path(), &cfg(&op)).unwrap();
    check(&mut a, &m1, &mut m2);
    store.rebuild_derived().unwrap();
    drop(a);
    drop(store);
    let (store, mut a) = Store::open_writer(d.path(), &cfg(&op)).unwrap();
    check(&mut a, &m1, &mut m2);
    // An older version's store: no pool records, no marker; rebuilt at the writer's start.
    store.tree.remove(crate::store::K_POOLS_DERIVED).unwrap();
    store.tree.remove(crate::store::pool_key("P1")).unwrap();
    store.sync().unwrap();
    drop(a);
    drop(store);
    let (store, mut a) = Store::open_writer(d.path(), &cfg(&op)).unwrap();
    check(&mut a, &m1, &mut m2);
    verify_all(&store);
}

/// A mirror's copy (entries appended verbatim in groups cut differently from the source's, the
/// source's checkpoints copied) holds the same chain, derived state, Merkle tree and
/// checkpoints, and the key in force after the source's key was rotated; it reopens as a
/// mirror, and with the source's key it opens as the source's writer and carries on (a
/// restore).
#[test]
fn a_verbatim_copy_holds_what_the_source_holds_and_can_become_the_source() {
    let src_dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    let mut u = Dev::new("table-2", 3);
    {
        let (store, mut a) = Store::open_writer(src_dir.path(), &cfg(&op)).unwrap();
        let mut envs = vec![op.env(register(&t)), op.env(register(&u))];
        envs.extend((0..300).map(|n| t.env(bet(n))));
        submit(&mut a, envs);
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW, "test").unwrap();
        // An equivocation (a security finding) and a revocation.
        let other = t.env_at(1, bet(999));
        submit(&mut a, vec![other, u.env(bet(1))]);
        submit(
            &mut a,
            vec![op.env(P::DeviceRevoked(v1::DeviceRevoked {
                device_id: u.id.clone(),
                reason: "test".into(),
            }))],
        );
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW + 1, "test").unwrap();
    }
    // The operator's key changes: a principals record. Then the ledger's key is rotated.
    let op2 = Dev::new("operator-1", 9);
    {
        let (_s, mut a) = Store::open_writer(src_dir.path(), &cfg(&op2)).unwrap();
        submit(&mut a, (0..20).map(|n| t.env(bet(1000 + n))).collect());
    }
    let keys_dir = tempfile::tempdir().unwrap();
    let new_key = KeySource::File(keys_dir.path().join("new.key"));
    Store::rotate_ledger_key(src_dir.path(), &cfg(&op2), &KeySource::DataDir, &new_key).unwrap();
    {
        let (s, mut a) =
            Store::open_writer_with_signer(src_dir.path(), &cfg(&op2), &new_key).unwrap();
        submit(&mut a, (0..5).map(|n| t.env(bet(2000 + n))).collect());
        let (i, h) = s.head().unwrap().unwrap();
        s.write_checkpoint(i, &h, NOW + 2, "test").unwrap();
    }
    let src = Store::open_existing(src_dir.path()).unwrap();
    let entries: Vec<_> = src.entries(0, u64::MAX).map(|e| e.unwrap()).collect();
    let cps = src.all_checkpoints().unwrap();
    let genesis_key = verify_all(&src).ledger_key.unwrap();

    let m_dir = tempfile::tempdir().unwrap();
    {
        let (m, mut a) = Store::open_mirror(m_dir.path(), 16 << 20, "test", &genesis_key).unwrap();
        let mut rest = entries.as_slice();
        let mut size = 1;
        while !rest.is_empty() {
            let n = size.min(rest.len());
            a.append_verbatim(rest[..n].to_vec()).unwrap();
            m.sync().unwrap();
            rest = &rest[n..];
            size = size * 3 + 1;
        }
        for cp in &cps {
            assert!(m.copy_checkpoint(cp).unwrap());
            assert!(
                !m.copy_checkpoint(cp).unwrap(),
                "a copy held already changes nothing"
            );
        }
        // An entry that does not extend the head is refused, and nothing is written.
        let head = m.head().unwrap();
        assert!(a.append_verbatim(vec![entries[5].clone()]).is_err());
        assert_eq!(m.head().unwrap(), head);
    }
    // Reopened as a mirror: the same checks a writer's start makes pass.
    let (m, _a) = Store::open_mirror(m_dir.path(), 16 << 20, "test", &genesis_key).unwrap();
    assert_eq!(m.head().unwrap(), src.head().unwrap());
    let mut a_s = src.signers().unwrap();
    let mut a_m = m.signers().unwrap();
    a_s.sort_by(|x, y| x.id.cmp(&y.id));
    a_m.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(a_m, a_s);
    assert_eq!(m.ledger_keys().unwrap(), src.ledger_keys().unwrap());
    assert_eq!(m.ledger_keys().unwrap().len(), 2);
    for d in [&t, &u] {
        for seq in 1..=d.seq + 1 {
            assert_eq!(
                m.index_of(&d.id, seq).unwrap(),
                src.index_of(&d.id, seq).unwrap()
            );
        }
    }
    let size = entries.len() as u64;
    for n in [1, 2, 255, 256, 257, size - 1, size] {
        assert_eq!(
            m.tree_root(n).unwrap(),
            src.tree_root(n).unwrap(),
            "root of {n}"
        );
    }
    assert_eq!(m.all_checkpoints().unwrap(), cps);
    assert_eq!(m.checkpoint_log().unwrap(), cps);
    assert_eq!(verify_all(&m).entries, size);
    drop(m);
    drop(_a);
    let e = Store::open_mirror(m_dir.path(), 16 << 20, "other", &genesis_key)
        .err()
        .expect("another ledger id is refused");
    assert!(e.to_string().contains("not \"other\""), "{e}");
    // With the source's key in force, the copy is the source's store: its writer carries on.
    drop(src);
    let (w, mut a) = Store::open_writer_with_signer(m_dir.path(), &cfg(&op2), &new_key).unwrap();
    let r = submit(&mut a, vec![t.env(bet(5000))]);
    assert_eq!(status(&r[0]).0, St::Accepted);
    assert_eq!(r[0].index, size);
    let (i, h) = w.head().unwrap().unwrap();
    w.write_checkpoint(i, &h, NOW + 3, "test").unwrap();
    assert_eq!(verify_all(&w).checkpoints, cps.len() as u64 + 1);
}

#[test]
fn alarms_are_kept_outside_the_chain_in_order() {
    let (_d, _op, store, _a) = setup();
    let head = store.head().unwrap();
    for n in 0..3 {
        store
            .record_alarm(&Alarm {
                at_ms: NOW + n,
                kind: "entry_unverified".into(),
                index: Some(n as u64),
                detail: format!("alarm {n}"),
            })
            .unwrap();
    }
    let got = store.alarms().unwrap();
    assert_eq!(
        got.iter().map(|a| a.detail.as_str()).collect::<Vec<_>>(),
        ["alarm 0", "alarm 1", "alarm 2"]
    );
    assert_eq!(store.head().unwrap(), head);
    verify_all(&store);
}

/// A record of the ledger's own appended on a service's request (a finding review) is the next
/// entry, named by its receipt, signed when receipts are, and a chain holding it verifies.
#[test]
fn a_record_appended_for_a_service_is_the_next_entry_and_verifies() {
    let (_dir, mut op, store, mut a) = setup();
    a.sign_receipts(true);
    submit(&mut a, vec![op.env(register(&Dev::new("t1", 2)))]);
    let before = a.head().unwrap().0;
    let record = v1::ledger_record_body::Record::FindingReviewed(v1::FindingReviewed {
        finding_id: "abc".into(),
        action: v1::FindingAction::Acknowledge as i32,
        principal: "compliance-lx".into(),
        previous_status: v1::FindingStatus::Open as i32,
        ..Default::default()
    });
    let (receipt, applied) = a.append_record(record.clone(), NOW + 5).unwrap();
    store.sync().unwrap();
    assert_eq!(receipt.index, before + 1);
    assert_eq!(applied.head_index, receipt.index);
    assert_eq!(receipt.entry_hash, applied.head_hash.to_vec());
    assert!(receipt.group.is_some(), "signed like any accepted receipt");
    let e = store.entry(receipt.index).unwrap().unwrap();
    let body = ledger_core::record::decode_ledger_record(&e.body).unwrap();
    assert_eq!(body.record, Some(record));
    assert_eq!(verify_all(&store).finding_reviews, 1);
}

/// A key file for the ledger's rotation tests, outside the data directory.
fn key_file(dir: &std::path::Path, name: &str) -> KeySource {
    KeySource::File(dir.join(name))
}

/// The ledger's key rotated offline: the record is signed by the old key, the key in force is
/// derived state that a restart reads and a rebuild gives again, the old key is refused at
/// the next start (naming the new one) and signs nothing more in the rotating process, the
/// new key signs later records and checkpoints, and the whole chain verifies with the genesis
/// key as its identity.
#[test]
fn the_ledger_key_is_rotated_and_the_new_key_signs_from_then_on() {
    let dir = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (old, new) = (
        key_file(keys.path(), "old.key"),
        key_file(keys.path(), "new.key"),
    );
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    let (genesis_key, before) = {
        let (store, mut a) = Store::open_writer_with_signer(&data, &cfg(&op), &old).unwrap();
        submit(&mut a, vec![op.env(register(&t)), t.env(bet(0))]);
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW, "test").unwrap();
        (store.ledger_public_key().unwrap(), i)
    };

    let r = Store::rotate_ledger_key(&data, &cfg(&op), &old, &new).unwrap();
    assert_eq!((r.index, r.old), (before + 1, genesis_key));
    assert_ne!(r.new, genesis_key);

    let err = Store::open_writer_with_signer(&data, &cfg(&op), &old)
        .err()
        .expect("the old key is refused");
    assert!(
        err.to_string().contains(&format!(
            "which entry {} rotated to {}",
            r.index,
            hex::encode(r.new.as_bytes())
        )),
        "{err}"
    );
    let stranger = key_file(keys.path(), "stranger.key");
    crate::keyfile::load_or_create_at(&keys.path().join("stranger.key"), true).unwrap();
    let err = Store::open_writer_with_signer(&data, &cfg(&op), &stranger)
        .err()
        .expect("another key is refused");
    assert!(err.to_string().contains("not the key in force"), "{err}");

    let (store, mut a) = Store::open_writer_with_signer(&data, &cfg(&op), &new).unwrap();
    assert_eq!(store.genesis_public_key().unwrap(), genesis_key);
    assert_eq!(store.ledger_public_key(), Some(r.new));
    let want = vec![(0, genesis_key), (r.index, r.new)];
    assert_eq!(store.ledger_keys().unwrap(), want);
    submit(&mut a, vec![t.env(bet(1))]);
    let (i, h) = store.head().unwrap().unwrap();
    let cp = store.write_checkpoint(i, &h, NOW, "test").unwrap();
    let info = ledger_core::record::check_checkpoint(&cp, None).unwrap();
    assert_eq!(info.ledger_public_key, r.new);
    let s = verify_all(&store);
    assert_eq!(
        (s.ledger_key, s.current_ledger_key, s.ledger_key_rotations),
        (Some(genesis_key), Some(r.new), 1)
    );
    // Rotating to the key in force is refused; rebuilt derived state gives the same keys.
    assert!(a.rotate_ledger_key(r.new).is_err());
    store.tree.remove(crate::store::K_LEDGER_KEYS).unwrap();
    store.rebuild_derived().unwrap();
    assert_eq!(store.ledger_keys().unwrap(), want);
    drop((a, store));

    // A restart with the new key checks the tail against the new key's checkpoint.
    let (store, mut a) = Store::open_writer_with_signer(&data, &cfg(&op), &new).unwrap();
    submit(&mut a, vec![t.env(bet(2))]);
    verify_all(&store);
}

/// In the process that rotated, the old key signs nothing more: no record, no checkpoint.
#[test]
fn after_a_rotation_the_old_key_signs_nothing() {
    let (_d, mut op, store, mut a) = setup();
    let new = ed25519_dalek::SigningKey::from_bytes(&[42; 32]).verifying_key();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    a.rotate_ledger_key(new).unwrap();
    let (i, h) = store.head().unwrap().unwrap();
    let err = store.write_checkpoint(i, &h, NOW, "test").unwrap_err();
    assert!(err.to_string().contains("rotated to"), "{err}");
    let mut items = vec![precheck(
        &store,
        t.env(bet(0)),
        65536,
        &TimePolicy::default(),
        NOW,
    )];
    verify_prechecked(&mut items);
    a.sign_receipts(true);
    assert!(
        a.apply(items, NOW).is_err(),
        "a signed group head would be the old key's"
    );
}

/// A rotation cut short by a crash (its group written up to any point before its head record)
/// is undone: the old key is still the key in force at the next start, the new one is refused.
#[test]
fn a_rotation_cut_short_by_a_crash_leaves_the_old_key_in_force() {
    let keys = tempfile::tempdir().unwrap();
    let new_key = ed25519_dalek::SigningKey::from_bytes(&[42; 32]);
    let new_path = keys.path().join("new.key");
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&new_path)
            .unwrap();
        std::io::Write::write_all(
            &mut f,
            ledger_core::signing::secret_key_pem(&new_key).as_bytes(),
        )
        .unwrap();
    }
    let mut cut = 0;
    for stop in 0u64.. {
        let dir = tempfile::tempdir().unwrap();
        let op = Dev::new("operator-1", 1);
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        let old = store.ledger_public_key().unwrap();
        store
            .crash_before_write
            .store(stop, std::sync::atomic::Ordering::SeqCst);
        if a.rotate_ledger_key(new_key.verifying_key()).is_ok() {
            break;
        }
        cut += 1;
        store.db.flush().unwrap();
        drop((a, store));
        let err = Store::open_writer_with_signer(
            dir.path(),
            &cfg(&op),
            &KeySource::File(new_path.clone()),
        )
        .err()
        .expect("the new key is not in force");
        assert!(
            err.to_string()
                .contains("not the key this ledger was created with"),
            "{err}"
        );
        let (store, _a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        assert_eq!(store.ledger_keys().unwrap(), vec![(0, old)], "stop {stop}");
        verify_all(&store);
    }
    assert!(
        cut >= 3,
        "the rotation's group makes at least 4 writes; cut {cut} times"
    );
}

/// A table's configuration naming jackpot pool `pool` (empty: no jackpot).
fn table_config(pool: &str) -> P {
    P::TableConfigured(v1::TableConfigured {
        table_id: "t1".into(),
        casino_id: "lisboa".into(),
        game: "blackjack".into(),
        jackpot: Some(v1::TableJackpot {
            pool_id: pool.into(),
            bet_amount_cents: 100,
            increment_bp: 7_500,
            ..Default::default()
        }),
        ..Default::default()
    })
}

fn table_pool(id: &str, tables: &[&str]) -> P {
    P::PoolConfigured(v1::PoolConfigured {
        pool_id: id.into(),
        kind: v1::PoolKind::TableJackpot as i32,
        casino_ids: vec!["lisboa".into()],
        member_table_ids: tables.iter().map(|t| t.to_string()).collect(),
        contribution_bp: 7_500,
        ..Default::default()
    })
}

/// A table device configures its table only with a jackpot pool whose latest `PoolConfigured`
/// lists the table: another table's pool, or one not configured, is refused with
/// NOT_POOL_MEMBER (nothing stored); no jackpot needs no pool; once the pool lists the table
/// it is accepted, and the chain verifies.
#[test]
fn a_table_feeds_only_a_jackpot_pool_that_lists_it() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    let r = submit(
        &mut a,
        vec![op.env(register(&t)), op.env(table_pool("TJ", &["t2"]))],
    );
    assert!(r.iter().all(|x| status(x).0 == St::Accepted), "{r:?}");
    let head = store.head().unwrap().unwrap().0;
    let r = submit(
        &mut a,
        vec![
            t.env_at(1, table_config("TJ")),
            t.env_at(1, table_config("TX")),
        ],
    );
    assert_eq!(status(&r[0]), (St::Rejected, Why::NotPoolMember));
    assert_eq!(
        r[0].detail,
        "table t1 (device table-1) is not a member of pool TJ"
    );
    assert_eq!(status(&r[1]), (St::Rejected, Why::NotPoolMember));
    assert_eq!(r[1].detail, "pool TX is not configured");
    assert_eq!(store.head().unwrap().unwrap().0, head, "nothing stored");
    let r = submit(&mut a, vec![t.env(table_config(""))]);
    assert_eq!(status(&r[0]).0, St::Accepted, "{:?}", r[0]);
    let r = submit(
        &mut a,
        vec![
            op.env(table_pool("TJ", &["t2", "t1"])),
            t.env(table_config("TJ")),
        ],
    );
    assert!(r.iter().all(|x| status(x).0 == St::Accepted), "{r:?}");
    verify_all(&store);
}

/// `live_bytes` counts every record once, by kind, with its key and value bytes, and creates
/// nothing in a store it reads.
#[test]
fn live_bytes_count_every_record_by_kind() {
    let (d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    for g in 0..3 {
        submit(&mut a, (0..5).map(|n| t.env(bet(g * 5 + n))).collect());
    }
    let mut want: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for r in store.tree.iter() {
        let (k, v) = r.unwrap();
        let label = if k[0] == b'@' {
            "@".to_string()
        } else {
            (k[0] as char).to_string()
        };
        let e = want.entry(label).or_default();
        e.0 += 1;
        e.1 += (k.len() + v.len()) as u64;
    }
    let got = store.live_bytes().unwrap();
    let got_map: std::collections::BTreeMap<String, (u64, u64)> =
        got.iter().map(|(l, n, b)| (l.clone(), (*n, *b))).collect();
    assert_eq!(got_map, want);
    // Entry chunks: one per group here; they hold every entry's bytes.
    let (chunks, chunk_bytes) = got_map["E"];
    assert!(
        chunks >= 4,
        "the registration's group and three more: {chunks}"
    );
    let stored: u64 = store
        .entries(0, u64::MAX)
        .map(|e| 4 + e.unwrap().encoded_len() as u64)
        .sum();
    // Every chunk linked: a marker byte each, 34 bytes fewer for every entry but a chunk's first.
    let entries = store.entries(0, u64::MAX).count() as u64;
    assert_eq!(chunk_bytes, stored + 10 * chunks - 34 * (entries - chunks));
    assert!(got_map.contains_key("A") && got_map.contains_key("B"));
    drop((a, store));
    let reader = Store::open_existing(d.path()).unwrap();
    let before = reader.db.tree_names();
    assert_eq!(reader.live_bytes().unwrap(), got);
    assert_eq!(reader.db.tree_names(), before, "no tree created by reading");
}

/// Linked chunks (`store::link_chunk`): the bytes read back are the bytes the writer encoded,
/// 34 bytes an entry fewer are stored, and a chunk whose entries do not link is stored as it is.
#[test]
fn a_linked_chunk_gives_back_every_entrys_bytes_and_stores_fewer() {
    let (_d, mut op, store, mut a) = setup();
    let mut t = Dev::new("table-1", 2);
    submit(&mut a, vec![op.env(register(&t))]);
    submit(&mut a, (0..40).map(|n| t.env(bet(n))).collect());
    let entries: Vec<v1::ChainEntry> = store.entries(0, u64::MAX).map(|e| e.unwrap()).collect();
    let n = entries.len() as u64;
    for (first, raw) in crate::store::encode_chunks(&entries) {
        let linked = crate::store::link_chunk(raw.clone());
        let count = crate::store::decode_chunk(first, &raw).unwrap().len();
        assert_eq!(linked[0], 1, "linked");
        assert_eq!(linked.len(), raw.len() + 1 - 34 * (count - 1));
        assert_eq!(
            crate::store::decode_chunk(first, &linked).unwrap(),
            crate::store::decode_chunk(first, &raw).unwrap()
        );
        assert_eq!(
            crate::store::leaf_hashes_of(first, &linked).unwrap(),
            crate::store::leaf_hashes_of(first, &raw).unwrap()
        );
        let c = |bytes: Vec<u8>| Chunk {
            first,
            bytes: bytes.into(),
        };
        let (l, r) = (c(linked.clone()), c(raw.clone()));
        assert_eq!(l.views().unwrap(), r.views().unwrap());
        assert_eq!(l.record_count(), count);
        let mut from_linked = Vec::new();
        l.each_entry_bytes(|i, b| {
            from_linked.push((i, b.to_vec()));
            Ok(())
        })
        .unwrap();
        let mut from_raw = Vec::new();
        r.each_entry_bytes(|i, b| {
            from_raw.push((i, b.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(from_linked, from_raw);
        // A linked chunk cut short is refused.
        for cut in [5, linked.len() - 1] {
            assert!(
                crate::store::decode_chunk(first, &linked[..cut]).is_err(),
                "cut at {cut}"
            );
        }
    }
    // An entry whose prev_hash is not the entry before's hash: the chunk is kept as it is.
    let mut broken = entries.clone();
    broken[n as usize - 1].prev_hash[0] ^= 1;
    let (first, raw) = crate::store::encode_chunks(&broken[1..]).remove(0);
    assert_eq!(crate::store::link_chunk(raw.clone()), raw);
    assert_eq!(
        crate::store::decode_chunk(first, &raw).unwrap(),
        broken[1..].to_vec()
    );
}

/// A ledger written before linked chunks (every chunk in the first format) opens, verifies and
/// grows in the new one; readers take both, and the Merkle tree and checkpoints hold across.
#[test]
fn a_ledger_of_the_first_chunk_format_opens_verifies_and_grows_linked() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = Dev::new("operator-1", 1);
    let mut t = Dev::new("table-1", 2);
    crate::commit::LEGACY_CHUNKS.with(|l| l.set(true));
    {
        let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
        submit(&mut a, vec![op.env(register(&t))]);
        for g in 0..5 {
            submit(&mut a, (0..30).map(|n| t.env(bet(g * 30 + n))).collect());
        }
        let (i, h) = store.head().unwrap().unwrap();
        store.write_checkpoint(i, &h, NOW, "before").unwrap();
        assert!(chunk_values(&store).iter().all(|v| v[0] == 0));
    }
    crate::commit::LEGACY_CHUNKS.with(|l| l.set(false));
    let (store, mut a) = Store::open_writer(dir.path(), &cfg(&op)).unwrap();
    let before = verify_all(&store);
    for g in 5..10 {
        submit(&mut a, (0..30).map(|n| t.env(bet(g * 30 + n))).collect());
    }
    let (i, h) = store.head().unwrap().unwrap();
    store.write_checkpoint(i, &h, NOW, "after").unwrap();
    let firsts: Vec<u8> = chunk_values(&store).iter().map(|v| v[0]).collect();
    assert!(firsts.contains(&0) && firsts.contains(&1), "{firsts:?}");
    let after = verify_all(&store);
    assert_eq!(after.entries, before.entries + 150);
    assert_eq!(after.checkpoints, 2);
    assert_eq!(
        after.tree_checkpoints, 2,
        "both tree heads match the entries' bytes"
    );
    // A proof over entries of both formats checks against the latest checkpoint's root.
    drop((a, store));
    let reader = Store::open_existing(dir.path()).unwrap();
    assert_eq!(reader.entries(0, u64::MAX).count() as u64, after.entries);
}

/// The stored chunk values, in order.
fn chunk_values(store: &Store) -> Vec<sled::IVec> {
    store
        .tree
        .scan_prefix([crate::store::entry_key(0)[0]])
        .values()
        .map(|v| v.unwrap())
        .collect()
}
