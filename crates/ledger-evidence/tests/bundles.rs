//! `build` and `build_device` against a fake ledgerd (tests/support), and `verify` of what they
//! give and of bundles a ledgerd would never give: the documented example is built again byte
//! for byte, a device's bundle proves its rotated keys, and what the ledger withholds or a forger
//! changes is named.

mod support;

use ledger_core::note::{self, SignedNote};
use ledger_evidence::{Verified, build, build_device, checked_note, verify};
use support::*;

fn ok(b: &serde_json::Value, key: &ed25519_dalek::VerifyingKey) -> Verified {
    verify(b, key, &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(b: &serde_json::Value, key: &ed25519_dalek::VerifyingKey) -> String {
    verify(b, key, &[]).unwrap_err().to_string()
}

fn events(from: u64, to: u64) -> Vec<(u64, String)> {
    (from..=to).map(|i| (i, "event".to_string())).collect()
}

fn with(v: &[(u64, &str)]) -> Vec<(u64, String)> {
    v.iter().map(|(i, r)| (*i, r.to_string())).collect()
}

/// The example's round, asked of a ledgerd that holds it, is the example again: the same
/// entries with the same roles, bytes and proofs, the same checkpoint, summary, adjudication and
/// findings, whether the table is named or not.
#[tokio::test]
async fn the_documented_example_is_built_again_from_the_ledger() {
    let ch = Fake::example().serve().await;
    let want = example();
    for table in ["", EXAMPLE_TABLE] {
        let got = build(&ch, table, EXAMPLE_ROUND, false).await.unwrap();
        assert_eq!(roles(&got), roles(&want), "table {table:?}");
        assert_eq!(got, want, "table {table:?}");
    }
    let got = build(&ch, "", EXAMPLE_ROUND, false).await.unwrap();
    let v = ok(&got, &example_key());
    assert_eq!((v.entries, v.signatures), (22, 22));
    assert_eq!(v.round_id, EXAMPLE_ROUND);
}

/// With `cosigned`, the bundle is under the latest checkpoint the witnesses cosigned, and
/// verifies with the witness's key; without, under the latest one.
#[tokio::test]
async fn a_cosigned_bundle_is_under_the_cosigned_checkpoint() {
    let mut f = Fake::example();
    let (plain, size) = f.checkpoint.clone().unwrap();
    let mut n = SignedNote::parse(&plain).unwrap();
    let w = key(9);
    let line = note::cosign(&n.text, "witness.example/w1", &w, 1_795_900_000).unwrap();
    n.add_signatures(&[line]);
    let cosigned = n.encode();
    assert_ne!(cosigned, plain);
    f.cosigned = Some((cosigned.clone(), size));
    let ch = f.serve().await;
    let b = build(&ch, "", EXAMPLE_ROUND, true).await.unwrap();
    assert_eq!(b["checkpoint"], cosigned.as_str());
    let witness = ledger_evidence::parse_witness_vkey(&note::cosigner_vkey(
        "witness.example/w1",
        &w.verifying_key(),
    ))
    .unwrap();
    let v = verify(&b, &example_key(), std::slice::from_ref(&witness)).unwrap();
    assert_eq!(
        v.witnesses,
        vec![("witness.example/w1".to_string(), 1_795_900_000)]
    );
    let b = build(&ch, "", EXAMPLE_ROUND, false).await.unwrap();
    assert_eq!(b["checkpoint"], plain.as_str());
    let e = verify(&b, &example_key(), &[witness]).unwrap_err();
    assert!(
        e.to_string()
            .contains("not cosigned by witness witness.example/w1"),
        "{e}"
    );
}

/// What the ledger does not give is named in the error, and nothing is built.
#[tokio::test]
async fn building_names_what_the_ledger_withholds() {
    async fn fails(f: Fake, table: &str, round: &str, cosigned: bool) -> String {
        let ch = f.serve().await;
        build(&ch, table, round, cosigned)
            .await
            .unwrap_err()
            .to_string()
    }
    let e = fails(Fake::example(), "", "T02-roulette-french-00009", false).await;
    assert!(
        e.contains("round T02-roulette-french-00009") && e.contains("no round"),
        "{e}"
    );
    let e = fails(Fake::example(), "T05-craps", EXAMPLE_ROUND, false).await;
    assert!(e.contains(&format!("round {EXAMPLE_ROUND}")), "{e}");

    let mut f = Fake::example();
    f.rounds[0].1.summary_json = "{\"round_id\":".into();
    let e = fails(f, "", EXAMPLE_ROUND, false).await;
    assert!(e.contains("the round's summary"), "{e}");

    let mut f = Fake::example();
    f.devices.remove(EXAMPLE_DEVICE);
    let e = fails(f, "", EXAMPLE_ROUND, false).await;
    assert!(
        e.contains(&format!("device {EXAMPLE_DEVICE}")) && e.contains("no device or principal"),
        "{e}"
    );

    let mut f = Fake::example();
    f.devices.remove("operator-1");
    let e = fails(f, "", EXAMPLE_ROUND, false).await;
    assert!(e.contains("principal operator-1"), "{e}");

    // The registration (asked for its signer) and an event (asked for its proof).
    for index in [3, 1071] {
        let mut f = Fake::example();
        f.entries.remove(&index);
        let e = fails(f, "", EXAMPLE_ROUND, false).await;
        assert!(
            e.contains(&format!("the proof of entry {index}"))
                && e.contains(&format!("entry {index} is missing")),
            "{e}"
        );
    }
    let mut f = Fake::example();
    f.proofs_without_entry = true;
    let e = fails(f, "", EXAMPLE_ROUND, false).await;
    assert!(
        e.contains("the ledger did not return its registration entry 3 as an event"),
        "{e}"
    );

    // Without a checkpoint, no proof: of the registration, or of the bundle's entries.
    let mut f = Fake::example();
    f.checkpoint = None;
    let e = fails(f.clone(), "", EXAMPLE_ROUND, false).await;
    assert!(
        e.contains("the proof of entry 3") && e.contains("no checkpoint yet"),
        "{e}"
    );
    let ch = f.serve().await;
    let e = build_device(&ch, "operator-1", 2, 2, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the latest checkpoint: ") && e.contains("no checkpoint yet"),
        "{e}"
    );
    let e = fails(Fake::example(), "", EXAMPLE_ROUND, true).await;
    assert!(
        e.contains("the latest checkpoint") && e.contains("no witnesses configured"),
        "{e}"
    );
    let mut f = Fake::example();
    f.checkpoint.as_mut().unwrap().0 = String::new();
    let e = fails(f, "", EXAMPLE_ROUND, false).await;
    assert!(e.contains("no tree head"), "{e}");
}

/// A device's events from the example's ledger: the events asked for, the registration of the
/// device, the principals' declaration of the operator that registered it, the genesis; each
/// entry and proof as in the example. An operator's own events need only the declaration.
#[tokio::test]
async fn device_bundles_of_the_example_ledger_are_built_and_verify() {
    let ch = Fake::example().serve().await;
    let want = example();
    let head = with(&[(0, "genesis"), (1, "principals"), (3, "registration")]);

    let b = build_device(&ch, EXAMPLE_DEVICE, 61, 78, false)
        .await
        .unwrap();
    let mut roles_want = head.clone();
    roles_want.extend(events(1068, 1082));
    roles_want.extend(with(&[(1307, "event"), (1309, "event"), (1311, "event")]));
    assert_eq!(roles(&b), roles_want);
    assert_eq!(b["checkpoint"], want["checkpoint"]);
    for item in b["entries"].as_array().unwrap() {
        let same = want["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["index"] == item["index"])
            .unwrap();
        assert_eq!(
            (&item["entry"], &item["proof"]),
            (&same["entry"], &same["proof"])
        );
    }
    assert_eq!(
        (
            &b["format"],
            &b["kind"],
            &b["device_id"],
            &b["from_sequence"],
            &b["to_sequence"]
        ),
        (
            &ledger_evidence::FORMAT.into(),
            &"device".into(),
            &EXAMPLE_DEVICE.into(),
            &61.into(),
            &78.into()
        )
    );
    let v = ok(&b, &example_key());
    assert_eq!(v.device, Some((EXAMPLE_DEVICE.to_string(), 61, 78)));
    assert_eq!((v.entries, v.signatures), (21, 21));
    assert_eq!(
        (v.tree_size, v.origin.as_str()),
        (16339, "casino-ledger/casino-ledger-demo")
    );

    // Inside the events: the ledger's next one (78) is not taken.
    let b = build_device(&ch, EXAMPLE_DEVICE, 62, 77, false)
        .await
        .unwrap();
    let mut roles_want = head.clone();
    roles_want.extend(events(1069, 1082));
    roles_want.extend(with(&[(1307, "event"), (1309, "event")]));
    assert_eq!(roles(&b), roles_want);
    let v = ok(&b, &example_key());
    assert_eq!(v.device, Some((EXAMPLE_DEVICE.to_string(), 62, 77)));

    // One event, before a gap in what the ledger holds (its next is 61).
    let b = build_device(&ch, EXAMPLE_DEVICE, 1, 1, false)
        .await
        .unwrap();
    let mut roles_want = head.clone();
    roles_want.push((46, "event".into()));
    assert_eq!(roles(&b), roles_want);
    ok(&b, &example_key());

    // An operator signs with a declared key: no registration to prove.
    let b = build_device(&ch, "operator-1", 2, 2, false).await.unwrap();
    assert_eq!(
        roles(&b),
        with(&[(0, "genesis"), (1, "principals"), (3, "event")])
    );
    let v = ok(&b, &example_key());
    assert_eq!(v.device, Some(("operator-1".to_string(), 2, 2)));
    assert_eq!((v.entries, v.signatures), (3, 3));
}

/// Ranges are checked before the ledger is asked, and the ledger's answers against them.
#[tokio::test]
async fn device_ranges_are_checked() {
    let ch = Fake::example().serve().await;
    let fails = |from: u64, to: u64| {
        let ch = ch.clone();
        async move {
            build_device(&ch, EXAMPLE_DEVICE, from, to, false)
                .await
                .unwrap_err()
                .to_string()
        }
    };
    for (from, to) in [(0, 5), (0, 0), (5, 3), (62, 61)] {
        let e = fails(from, to).await;
        assert!(
            e.contains(&format!(
                "sequences {from}..{to}: the first is 1 or more and the last not before it"
            )),
            "{from}..{to}: {e}"
        );
    }
    // At most MAX_DEVICE_EVENTS: 10,000 is asked of the ledger (which lacks some), 10,001 not.
    assert_eq!(ledger_evidence::MAX_DEVICE_EVENTS, 10_000);
    for (from, to) in [(1, 10_001), (5, 10_005), (61, 20_000)] {
        let e = fails(from, to).await;
        assert!(
            e.contains(&format!(
                "sequences {from}..{to}: at most 10000 events a bundle"
            )),
            "{from}..{to}: {e}"
        );
    }
    let e = fails(1, 10_000).await;
    assert!(
        e.contains(&format!(
            "the ledger gave sequence 61 of device {EXAMPLE_DEVICE} where 2 was due"
        )),
        "{e}"
    );
    let e = fails(5, 10_004).await;
    assert!(e.contains("gave sequence 61"), "{e}");
    assert!(e.contains("where 5 was due"), "{e}");
    let e = fails(61, 80).await;
    assert!(
        e.contains(&format!(
            "device {EXAMPLE_DEVICE} has no event of sequence 79 in the ledger (its events 61..80 were asked)"
        )),
        "{e}"
    );
    let e = build_device(&ch, "table-nowhere", 1, 2, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no event of sequence 1"), "{e}");
}

/// A device bundle (from the example's ledger) is refused when its events are not exactly the
/// device's sequences it claims, or when it holds entries a device bundle has no use for.
#[tokio::test]
async fn a_device_bundle_must_hold_exactly_the_events_it_claims() {
    let ch = Fake::example().serve().await;
    let b = build_device(&ch, EXAMPLE_DEVICE, 61, 78, false)
        .await
        .unwrap();
    let key = example_key();
    ok(&b, &key);
    let at = |b: &serde_json::Value, index: u64| {
        b["entries"]
            .as_array()
            .unwrap()
            .iter()
            .position(|e| e["index"] == index)
            .unwrap()
    };
    let claim = |from: u64, to: u64| {
        let mut x = b.clone();
        x["from_sequence"] = from.into();
        x["to_sequence"] = to.into();
        refused(&x, &key)
    };
    for (from, to) in [(0, 78), (0, 0), (70, 65), (79, 78)] {
        let e = claim(from, to);
        assert!(
            e.contains(&format!("sequences {from}..{to} are not a range")),
            "{e}"
        );
    }
    let e = claim(61, 79);
    assert!(
        e.contains(&format!(
            "the bundle holds {EXAMPLE_DEVICE}'s events 61..78, not up to 79"
        )),
        "{e}"
    );
    let e = claim(61, 77);
    assert!(e.contains("events 61..78, not up to 77"), "{e}");
    let e = claim(60, 78);
    assert!(
        e.contains(&format!(
            "entry 1068 is {EXAMPLE_DEVICE}'s sequence 61, where 60 was due"
        )),
        "{e}"
    );
    let e = claim(62, 78);
    assert!(e.contains("sequence 61, where 62 was due"), "{e}");

    let mut x = b.clone();
    let i = at(&x, 1070);
    x["entries"].as_array_mut().unwrap().remove(i);
    let e = refused(&x, &key);
    assert!(
        e.contains("entry 1071 is") && e.contains("sequence 64, where 63 was due"),
        "{e}"
    );

    let mut x = b.clone();
    let i = at(&x, 1068);
    x["entries"][i]["role"] = "opening".into();
    let e = refused(&x, &key);
    assert!(
        e.contains("entry 1068: the role \"opening\" has no place in a device bundle"),
        "{e}"
    );
    // Another signer's entry as one of the events.
    let mut x = b.clone();
    let i = at(&x, 3);
    x["entries"][i]["role"] = "event".into();
    let e = refused(&x, &key);
    assert!(
        e.contains(&format!(
            "entry 3 is operator-1's event, not {EXAMPLE_DEVICE}'s"
        )),
        "{e}"
    );
    for field in ["device_id", "from_sequence", "to_sequence"] {
        let mut x = b.clone();
        x.as_object_mut().unwrap().remove(field);
        let e = refused(&x, &key);
        assert!(e.contains(&format!("no \"{field}\"")), "{e}");
    }
}

/// A ledger where table-1's key is rotated twice by the operator (and table-2's once): a bundle
/// of table-1's events proves each key they are signed with by the rotations before the last
/// one, and holds no other rotation.
fn rotated() -> (Ledger, [u64; 3]) {
    let mut l = Ledger::new("synth");
    let op = key(2);
    let (t1a, t1b, t1c, t2) = (key(11), key(12), key(13), key(21));
    assert_eq!(l.register("operator-1", &op, "table-1", &t1a), 2);
    assert_eq!(l.register("operator-1", &op, "table-2", &t2), 3);
    for _ in 0..4 {
        l.reading("table-1", &t1a); // sequences 1..=4: entries 4, 6, 8, 10
        l.reading("table-2", &t2);
    }
    assert_eq!(l.rotate("operator-1", &op, "table-2", &key(22)), 12);
    let r1 = l.rotate("operator-1", &op, "table-1", &t1b);
    for _ in 0..3 {
        l.reading("table-1", &t1b); // 5..=7: entries 14, 15, 16
    }
    let r2 = l.rotate("operator-1", &op, "table-1", &t1c);
    let last = l.reading("table-1", &t1c); // 8: entry 18
    (l, [r1, r2, last])
}

#[tokio::test]
async fn a_device_bundle_proves_each_rotated_key() {
    let (l, [r1, r2, last]) = rotated();
    assert_eq!((r1, r2, last), (13, 17, 18));
    let ch = l.fake().serve().await;
    let head = with(&[(0, "genesis"), (1, "principals"), (2, "registration")]);

    let b = build_device(&ch, "table-1", 3, 7, false).await.unwrap();
    let mut want = head.clone();
    want.extend(with(&[
        (8, "event"),
        (10, "event"),
        (13, "rotation"),
        (14, "event"),
        (15, "event"),
        (16, "event"),
    ]));
    assert_eq!(roles(&b), want);
    let v = ok(&b, &l.key.verifying_key());
    assert_eq!(v.device, Some(("table-1".to_string(), 3, 7)));
    assert_eq!((v.entries, v.signatures, v.tree_size), (9, 9, 19));
    assert_eq!(v.origin, "casino-ledger/synth");

    let b = build_device(&ch, "table-1", 1, 8, false).await.unwrap();
    let mut want = head.clone();
    want.extend(with(&[
        (4, "event"),
        (6, "event"),
        (8, "event"),
        (10, "event"),
        (13, "rotation"),
        (14, "event"),
        (15, "event"),
        (16, "event"),
        (17, "rotation"),
        (18, "event"),
    ]));
    assert_eq!(roles(&b), want);
    ok(&b, &l.key.verifying_key());

    // Without a rotation, the events after it are not the device's as far as the bundle shows.
    let mut x = b.clone();
    x["entries"]
        .as_array_mut()
        .unwrap()
        .retain(|e| e["index"] != 17);
    let e = refused(&x, &l.key.verifying_key());
    assert!(
        e.contains("entry 18 (event): the signature is not table-1's"),
        "{e}"
    );
}

/// The checkpoint must cover the last entry; the message says what to do.
#[tokio::test]
async fn a_checkpoint_that_does_not_cover_the_entries_is_named() {
    let (l, [.., last]) = rotated();
    let mut f = l.fake();
    f.checkpoint = Some((l.note(last), last));
    f.cosigned = Some((l.note(last), last));
    let ch = f.serve().await;
    let e = build_device(&ch, "table-1", 1, 8, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the latest checkpoint covers 18 entries, not entry 18: ask for a new one"),
        "{e}"
    );
    let e = build_device(&ch, "table-1", 1, 8, true)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the latest cosigned checkpoint covers 18 entries, not entry 18"),
        "{e}"
    );
    // Up to the entry before: covered.
    let b = build_device(&ch, "table-1", 1, 7, false).await.unwrap();
    assert_eq!(b["checkpoint"], l.note(last).as_str());
    ok(&b, &l.key.verifying_key());

    // An operator's events are proven without asking for it by the operator's registration.
    let mut f = l.fake();
    f.proofs_without_entry = true;
    let ch = f.serve().await;
    let e = build_device(&ch, "operator-1", 1, 1, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("the ledger sent no entry"), "{e}");
}

/// Only a principal registers a device or rotates its key: a device that registers another, or
/// rotates a key itself, proves nothing.
#[test]
fn keys_are_proven_only_by_principals() {
    let op = key(2);
    let t1 = key(11);
    let mut l = Ledger::new("synth");
    l.register("operator-1", &op, "table-1", &t1); // 2
    l.register("table-1", &t1, "table-9", &key(19)); // 3: table-1's sequence 1
    l.reading("table-9", &key(19)); // 4
    let n = l.note(5);
    let b = l.device_bundle(
        &n,
        "table-9",
        1,
        1,
        &[
            (0, "genesis"),
            (1, "principals"),
            (2, "registration"),
            (3, "registration"),
            (4, "event"),
        ],
    );
    let e = refused(&b, &l.key.verifying_key());
    assert!(
        e.contains("entry 4 (event) is signed by table-9, whose key the bundle does not prove"),
        "{e}"
    );

    let mut l = Ledger::new("synth");
    l.register("operator-1", &op, "table-1", &t1); // 2
    l.reading("table-1", &t1); // 3: sequence 1
    l.rotate("table-1", &t1, "table-1", &key(12)); // 4: sequence 2
    l.reading("table-1", &key(12)); // 5: sequence 3
    let n = l.note(6);
    let items = [
        (0, "genesis"),
        (1, "principals"),
        (2, "registration"),
        (3, "event"),
        (4, "event"),
        (5, "event"),
    ];
    let b = l.device_bundle(&n, "table-1", 1, 3, &items);
    let e = refused(&b, &l.key.verifying_key());
    assert!(
        e.contains("entry 5 (event): the signature is not table-1's"),
        "{e}"
    );
    // The same two events before it are table-1's.
    let b = l.device_bundle(&n, "table-1", 1, 2, &items[..5]);
    ok(&b, &l.key.verifying_key());
}

/// The genesis must be entry 0, name the key the bundle is checked with, and the ledger the
/// checkpoint is of.
#[test]
fn the_genesis_must_be_this_ledgers() {
    let op = key(2);
    let t1 = key(11);
    let items = [
        (0, "genesis"),
        (1, "principals"),
        (2, "registration"),
        (3, "event"),
    ];
    let mut l = Ledger::new("synth");
    l.register("operator-1", &op, "table-1", &t1);
    l.reading("table-1", &t1);
    let good = l.device_bundle(&l.note(4), "table-1", 1, 1, &items);
    ok(&good, &l.key.verifying_key());

    // A checkpoint of another ledger, signed with the same key.
    let other = l.note_as("casino-ledger/other", 4);
    let b = l.device_bundle(&other, "table-1", 1, 1, &items);
    let e = refused(&b, &l.key.verifying_key());
    assert!(
        e.contains(
            "the checkpoint is of \"casino-ledger/other\", the genesis names ledger \"synth\""
        ),
        "{e}"
    );

    // A second genesis, later in the chain.
    let mut l2 = Ledger::new("synth");
    l2.register("operator-1", &op, "table-1", &t1);
    let again = l2.genesis("synth", &l2.key.verifying_key().to_bytes());
    l2.reading("table-1", &t1);
    let b = l2.device_bundle(
        &l2.note(5),
        "table-1",
        1,
        1,
        &[
            (0, "genesis"),
            (1, "principals"),
            (2, "registration"),
            (again, "genesis"),
            (4, "event"),
        ],
    );
    let e = refused(&b, &l2.key.verifying_key());
    assert!(
        e.contains(&format!(
            "entry {again}: a genesis that is not this ledger's first entry"
        )),
        "{e}"
    );

    // A genesis that names another key (signed with the ledger's).
    let mut l3 = Ledger::empty("synth");
    l3.genesis("synth", &key(7).verifying_key().to_bytes());
    l3.declare(&[("operator-1", &op)]);
    l3.register("operator-1", &op, "table-1", &t1);
    l3.reading("table-1", &t1);
    let b = l3.device_bundle(&l3.note(4), "table-1", 1, 1, &items);
    let e = refused(&b, &l3.key.verifying_key());
    assert!(
        e.contains("entry 0: a genesis that is not this ledger's first entry"),
        "{e}"
    );
}

/// `checked_note`: the ledger's signature, and the origin, of a ledger or of the one named.
#[test]
fn checked_note_checks_the_origin_and_the_signature() {
    let (l, [.., last]) = rotated();
    let n = l.note(last + 1);
    let k = l.key.verifying_key();
    let t = checked_note(&n, &k, None, "cp").unwrap();
    assert_eq!((t.origin.as_str(), t.size), ("casino-ledger/synth", 19));
    assert_eq!(checked_note(&n, &k, Some("synth"), "cp").unwrap(), t);
    let e = checked_note(&n, &k, Some("casino-lisboa"), "cp")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "cp: the note is of log \"casino-ledger/synth\", not \"casino-ledger/casino-lisboa\""
    );
    let e = checked_note(&n, &key(5).verifying_key(), None, "cp")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cp: not signed by the ledger key you gave"),
        "{e}"
    );
    let foreign = l.note_as("example.com/log", last + 1);
    let e = checked_note(&foreign, &k, None, "cp")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "cp: origin \"example.com/log\" is not a ledger's");
    let e = checked_note("not a note", &k, None, "cp")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("cp: "), "{e}");
}
