//! Machines' significant events end to end: signed `MachineEvent`s (and the operator's
//! `MachineChangeAuthorized` / `ProgramApproved`) go over gRPC into the real ledgerd; the live
//! audit replays them and its findings are read back (Audit.ListFindings), one test per check;
//! the significant-events report is read over gRPC (Jackpots.GetMachineEvents) and through
//! `ledgerctl jackpot events`.

use e2e::slots::*;
use e2e::*;
use ledger_core::proto::{self as v1, event_body::Payload as P, jackpots_client::JackpotsClient};
use v1::machine_event::Event as K;

/// An honest floor after its set-up and two rounds of play: no finding yet.
async fn start(seed: u64) -> SlotFloor {
    let s = SlotFloor::start(plan(), seed, 2, 25).await;
    s.caught_up().await;
    let f = s.findings().await;
    assert!(f.is_empty(), "an honest floor has no finding: {f:?}");
    s
}

fn ev(machine: &str, source_code: &str, event: K) -> P {
    P::MachineEvent(v1::MachineEvent {
        machine_id: machine.into(),
        source_code: source_code.into(),
        detail: String::new(),
        event: Some(event),
    })
}

fn door(d: v1::Door, a: v1::DoorAction) -> K {
    K::Door(v1::DoorEvent {
        door: d as i32,
        action: a as i32,
    })
}

fn power(a: v1::PowerAction) -> K {
    K::Power(v1::PowerEvent { action: a as i32 })
}

/// Send `events` as `machine`, in order; their receipts.
async fn send(s: &mut SlotFloor, machine: &str, events: Vec<K>) -> Vec<v1::Receipt> {
    let mut out = Vec::new();
    for e in events {
        out.push(s.send_payload(machine, ev(machine, "", e)).await);
    }
    out
}

/// The machine's meters as the floor last read them, with `coin_in` up by `more` cents and
/// `games_played` by `games`, and `hand_paid` at `hand_paid` (absent: left out).
fn reading(s: &SlotFloor, machine: &str, more: u64, games: u64, hand_paid: Option<u64>) -> P {
    let mut meters: Vec<v1::Meter> = s
        .floor
        .book()
        .machine(machine)
        .expect("machine")
        .meters
        .iter()
        .map(|(n, m)| {
            let v = match n.as_str() {
                jackpot::COIN_IN => m.value + more,
                jackpot::GAMES_PLAYED => m.value + games,
                _ => m.value,
            };
            v1::Meter {
                name: n.clone(),
                value: v,
                rollover: m.rollover,
            }
        })
        .collect();
    if let Some(h) = hand_paid {
        meters.push(v1::Meter {
            name: jackpot::HAND_PAID.into(),
            value: h,
            rollover: 0,
        });
    }
    P::MeterReading(v1::MeterReading {
        machine_id: machine.into(),
        meters,
    })
}

async fn new_findings(s: &SlotFloor, before: usize) -> Vec<v1::Finding> {
    s.caught_up().await;
    let f = s.findings().await;
    f[before..].to_vec()
}

async fn jackpots(s: &SlotFloor) -> JackpotsClient<tonic::transport::Channel> {
    JackpotsClient::new(s.channel().await)
}

#[tokio::test]
async fn the_significant_events_report_over_grpc_and_the_cli() {
    let mut s = start(21).await;
    let sent = send(
        &mut s,
        "B2",
        vec![
            door(v1::Door::Main, v1::DoorAction::Opened),
            door(v1::Door::Main, v1::DoorAction::Closed),
            power(v1::PowerAction::Off),
            door(v1::Door::Logic, v1::DoorAction::OpenedWhilePoweredOff),
            power(v1::PowerAction::On),
            K::DeviceFault(v1::DeviceFault {
                device: "printer".into(),
                code: "paper_low".into(),
                cleared: false,
                disables_play: false,
            }),
            K::GameEnded(v1::GameEnded {
                game_number: 7,
                wager_cents: 100,
                win_cents: 0,
            }),
            door(v1::Door::CashBox, v1::DoorAction::Opened),
        ],
    )
    .await;
    s.caught_up().await;
    let mut j = jackpots(&s).await;
    let get = |kinds: Vec<&str>, after: Option<u64>, limit: u32| v1::MachineEventsRequest {
        machine_id: "B2".into(),
        from_ms: None,
        to_ms: None,
        kinds: kinds.into_iter().map(String::from).collect(),
        after_index: after,
        limit,
    };
    let doc = j
        .get_machine_events(get(vec![], None, 0))
        .await
        .unwrap()
        .into_inner();
    let r: jackpot::EventsReport = serde_json::from_str(&doc.json).unwrap();
    assert_eq!(r.machine_id.as_ref(), "B2");
    assert_eq!(r.casino_id.as_ref(), "C2");
    assert_eq!(
        r.events.iter().map(|e| e.index).collect::<Vec<_>>(),
        sent.iter().map(|x| x.index).collect::<Vec<_>>()
    );
    assert_eq!(r.counts["door"], 4);
    assert_eq!(r.next_after, None);
    let status = r.status.unwrap();
    assert_eq!(
        status.doors_open.keys().copied().collect::<Vec<_>>(),
        [jackpot::Door::CashBox]
    );
    assert_eq!(status.powered_off, None);
    assert!(status.faults.contains_key("printer/paper_low"));
    // Pages of three, in order, without a gap; a kind filter; the games recall.
    let mut after = None;
    let mut seen = Vec::new();
    loop {
        let doc = j
            .get_machine_events(get(vec![], after, 3))
            .await
            .unwrap()
            .into_inner();
        let p: jackpot::EventsReport = serde_json::from_str(&doc.json).unwrap();
        assert!(p.events.len() <= 3);
        seen.extend(p.events.iter().map(|e| e.index));
        match p.next_after {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(seen.len(), sent.len());
    let doc = j
        .get_machine_events(get(vec!["power", "game_ended"], None, 0))
        .await
        .unwrap()
        .into_inner();
    let p: jackpot::EventsReport = serde_json::from_str(&doc.json).unwrap();
    assert_eq!(p.events.len(), 3);
    assert_eq!(p.counts.len(), 2);
    // Bad requests: a kind that does not exist, an unknown machine, a backwards period.
    let e = j
        .get_machine_events(get(vec!["doors"], None, 0))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("kinds"), "{}", e.message());
    let mut unknown = get(vec![], None, 0);
    unknown.machine_id = "Z9".into();
    assert_eq!(
        j.get_machine_events(unknown).await.unwrap_err().code(),
        tonic::Code::NotFound
    );
    let mut backwards = get(vec![], None, 0);
    backwards.from_ms = Some(10);
    backwards.to_ms = Some(5);
    assert_eq!(
        j.get_machine_events(backwards).await.unwrap_err().code(),
        tonic::Code::InvalidArgument
    );
    // A period that holds none of them.
    let mut early = get(vec![], None, 0);
    early.from_ms = Some(0);
    early.to_ms = Some(1);
    let doc = j.get_machine_events(early).await.unwrap().into_inner();
    let p: jackpot::EventsReport = serde_json::from_str(&doc.json).unwrap();
    assert!(p.events.is_empty());

    // The CLI: human and JSON.
    let url = s.url.clone();
    let (code, out, err) = ledgerctl(&["jackpot", "events", "B2", "--server", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Machine B2 (casino C2"), "{out}");
    assert!(out.contains("cash box door open since entry"), "{out}");
    assert!(
        out.contains("logic door was opened while powered off"),
        "{out}"
    );
    assert!(out.contains("8 event(s)"), "{out}");
    let (code, out, err) = ledgerctl(&[
        "--json", "jackpot", "events", "B2", "--kind", "door", "--last", "2", "--server", &url,
    ]);
    assert_eq!(code, 0, "{err}");
    let p: jackpot::EventsReport = serde_json::from_str(&out).unwrap();
    assert_eq!(p.events.len(), 2);
    assert_eq!(p.events[1].index, sent.last().unwrap().index);
    let (code, _, err) = ledgerctl(&[
        "jackpot", "events", "B2", "--kind", "nope", "--server", &url,
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--kind nope"), "{err}");
    let (code, out, _) = ledgerctl(&["jackpot", "events", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("last-games"), "{out}");
}

/// Findings of `codes` only (the test's own), each about `machine`, for review where the
/// Portuguese text is silent.
fn only<'a>(f: &'a [v1::Finding], code: &str) -> &'a v1::Finding {
    assert_eq!(codes(f), [code], "{f:?}");
    &f[0]
}

#[tokio::test]
async fn meters_that_move_while_the_machine_is_powered_off_are_flagged() {
    let mut s = start(22).await;
    let off = send(&mut s, "B2", vec![power(v1::PowerAction::Off)]).await;
    let r0 = reading(&s, "B2", 0, 0, None);
    s.send_payload("B2", r0).await;
    let r1 = reading(&s, "B2", 500, 0, None);
    let read = s.send_payload("B2", r1).await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_METERS_MOVED_OUT_OF_SERVICE");
    assert_eq!((x.machine_id.as_str(), x.casino_id.as_str()), ("B2", "C2"));
    assert!(x.for_review, "the Portuguese text is silent: for review");
    assert!(x.citation.contains("25 CFR 547.10"), "{}", x.citation);
    assert!(x.message.contains("powered off"), "{}", x.message);
    assert!(x.evidence.contains(&off[0].index));
    assert_eq!(x.evidence.last(), Some(&read.index));
    // Powered on: play is explained.
    send(&mut s, "B2", vec![power(v1::PowerAction::On)]).await;
    let r2 = reading(&s, "B2", 900, 0, None);
    s.send_payload("B2", r2).await;
    assert_eq!(new_findings(&s, 1).await.len(), 0);
}

#[tokio::test]
async fn meters_that_move_under_an_open_door_are_flagged() {
    let mut s = start(23).await;
    send(
        &mut s,
        "B2",
        vec![door(v1::Door::Main, v1::DoorAction::Opened)],
    )
    .await;
    let r0 = reading(&s, "B2", 0, 0, None);
    s.send_payload("B2", r0).await;
    let r1 = reading(&s, "B2", 500, 0, None);
    s.send_payload("B2", r1).await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_METERS_MOVED_DOOR_OPEN");
    assert!(x.message.contains("main door open"), "{}", x.message);
    assert!(x.for_review);
}

#[tokio::test]
async fn meters_that_move_without_the_games_that_explain_them_are_flagged() {
    let mut s = start(24).await;
    send(
        &mut s,
        "B2",
        vec![
            K::GameStarted(v1::GameStarted {
                game_number: 1,
                wager_cents: 100,
            }),
            K::GameEnded(v1::GameEnded {
                game_number: 1,
                wager_cents: 100,
                win_cents: 0,
            }),
        ],
    )
    .await;
    let r0 = reading(&s, "B2", 100, 1, None);
    s.send_payload("B2", r0).await;
    assert!(new_findings(&s, 0).await.is_empty());
    let r1 = reading(&s, "B2", 400, 3, None);
    s.send_payload("B2", r1).await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_METERS_WITHOUT_GAMES");
    assert!(x.message.contains("coin_in +300"), "{}", x.message);
    assert_eq!(
        x.citation,
        "P217/2007 T.III r.9, r.14 (reading: the machine's records must explain its meters)"
    );
}

#[tokio::test]
async fn a_hand_pay_without_its_meter_increase_is_flagged_with_both_amounts() {
    let mut s = start(25).await;
    let hand_pay = |amount| {
        K::HandPay(v1::HandPay {
            state: v1::HandPayState::Reset as i32,
            kind: v1::HandPayKind::CancelledCredits as i32,
            handpay_id: String::new(),
            amount_cents: amount,
        })
    };
    send(&mut s, "B2", vec![K::BatteryLow(v1::BatteryLow {})]).await;
    // The meter's first reading is its baseline.
    let r0 = reading(&s, "B2", 0, 0, Some(1_000));
    s.send_payload("B2", r0).await;
    send(&mut s, "B2", vec![hand_pay(50_000)]).await;
    let r1 = reading(&s, "B2", 0, 0, Some(1_000));
    s.send_payload("B2", r1).await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_HANDPAY_METER_MISMATCH");
    assert_eq!((x.due_cents, x.reported_cents), (Some(50_000), Some(0)));
    assert!(x.citation.contains("r.13, r.14"), "{}", x.citation);
    // Paid and metered: nothing.
    send(&mut s, "B2", vec![hand_pay(300)]).await;
    let r2 = reading(&s, "B2", 0, 0, Some(1_300));
    s.send_payload("B2", r2).await;
    assert_eq!(new_findings(&s, 0).await.len(), 1);
}

#[tokio::test]
async fn a_progressive_hit_without_award_and_an_award_without_hit_are_flagged() {
    let mut s = start(26).await;
    let hit = |cents| {
        K::ProgressiveHit(v1::ProgressiveHit {
            pool_id: "JP-B1".into(),
            amount_cents: cents,
            level: 1,
        })
    };
    let reset = || {
        K::ProgressiveReset(v1::ProgressiveReset {
            pool_id: "JP-B1".into(),
        })
    };
    let captive = s.captive_e4("JP-B1").await / 10_000;
    let sent = send(&mut s, "B1", vec![hit(captive as i64), reset()]).await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD");
    assert_eq!(x.pool_id, "JP-B1");
    assert!(!x.for_review, "r.5: certain");
    assert_eq!(x.evidence, [sent[0].index, sent[1].index]);
    // An award the machine never recorded a hit for.
    let award = |cents: i64| {
        P::JackpotAwarded(v1::JackpotAwarded {
            pool_id: "JP-B1".into(),
            machine_id: "B1".into(),
            amount_cents: cents,
            winner: "ticket-1".into(),
            game_number: 0,
        })
    };
    s.send_payload("B1", award(captive as i64)).await;
    let f = new_findings(&s, 1).await;
    let x = only(&f, "SLOT_AWARD_WITHOUT_HIT");
    assert!(x.for_review);
    // Hit, award, reset: nothing.
    let captive = s.captive_e4("JP-B1").await / 10_000;
    send(&mut s, "B1", vec![hit(captive as i64)]).await;
    s.send_payload("B1", award(captive as i64)).await;
    send(&mut s, "B1", vec![reset()]).await;
    assert_eq!(new_findings(&s, 2).await.len(), 0);
}

#[tokio::test]
async fn lost_events_are_a_finding_never_silent() {
    let mut s = start(27).await;
    let r = s
        .send_payload(
            "A1",
            ev(
                "A1",
                "SAS:70",
                K::EventsLost(v1::EventsLost {
                    reporter: v1::EventsLostReporter::Machine as i32,
                    count: 31,
                    from_ms: 0,
                    to_ms: 0,
                }),
            ),
        )
        .await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_EVENTS_LOST");
    assert!(x.message.contains("31 event(s)"), "{}", x.message);
    assert_eq!(x.evidence, [r.index]);
    assert_eq!(x.severity, v1::Severity::High as i32);
}

#[tokio::test]
async fn software_authentication_failures_and_unapproved_signatures_are_flagged() {
    let mut s = start(28).await;
    s.send_payload(
        "operator-1",
        P::ProgramApproved(v1::ProgramApproved {
            model_id: "K".into(),
            component: "game".into(),
            algorithm: "sha1".into(),
            signature: "a1b2c3".into(),
            approval_ref: "IGJ-K/sw".into(),
        }),
    )
    .await;
    let auth = |sig: &str, passed| {
        K::SoftwareAuthenticated(v1::SoftwareAuthenticated {
            component: "game".into(),
            algorithm: "sha1".into(),
            signature: sig.into(),
            passed,
        })
    };
    send(&mut s, "A2", vec![auth("a1b2c3", true)]).await;
    assert!(new_findings(&s, 0).await.is_empty());
    send(&mut s, "A2", vec![auth("ffff", true)]).await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_SOFTWARE_SIGNATURE_MISMATCH");
    assert!(x.message.contains("model `K`"), "{}", x.message);
    send(&mut s, "A2", vec![auth("a1b2c3", false)]).await;
    let f = new_findings(&s, 1).await;
    only(&f, "SLOT_SOFTWARE_AUTH_FAILED");
    // Ingest refuses a signature that is not lowercase hex, naming the field.
    let env = s.sign_payload("A2", ev("A2", "", auth("XYZ", true)));
    let r = submit(&s.url, &[env]).await;
    assert_ne!(r[0].status, v1::ReceiptStatus::Accepted as i32);
    assert!(
        r[0].detail
            .contains("machine_event.software_authenticated.signature"),
        "{}",
        r[0].detail
    );
}

#[tokio::test]
async fn a_configuration_change_without_an_operator_authorisation_is_flagged() {
    let mut s = start(29).await;
    let change = |auth: &str| {
        K::ConfigurationChanged(v1::ConfigurationChanged {
            changes: vec![v1::OptionChange {
                option: "max_bet".into(),
                old_value: "200".into(),
                new_value: "500".into(),
            }],
            authorization_id: auth.into(),
        })
    };
    send(&mut s, "A2", vec![change("")]).await;
    let f = new_findings(&s, 0).await;
    let x = only(&f, "SLOT_CONFIG_CHANGE_UNAUTHORIZED");
    assert!(
        x.message.contains("no operator authorisation"),
        "{}",
        x.message
    );
    let auth = s
        .send_payload(
            "operator-1",
            P::MachineChangeAuthorized(v1::MachineChangeAuthorized {
                authorization_id: "CH-7".into(),
                machine_id: "A2".into(),
                detail: "max bet 2 → 5 euros".into(),
            }),
        )
        .await;
    send(&mut s, "A2", vec![change("CH-7")]).await;
    assert_eq!(new_findings(&s, 1).await.len(), 0);
    // An authorisation serves one change.
    send(&mut s, "A2", vec![change("CH-7")]).await;
    let f = new_findings(&s, 1).await;
    let x = only(&f, "SLOT_CONFIG_CHANGE_UNAUTHORIZED");
    assert!(x.message.contains("already used"), "{}", x.message);
    assert!(x.evidence.contains(&auth.index));
    // A machine cannot sign the operator's authorisation.
    let env = s.sign_payload(
        "A2",
        P::MachineChangeAuthorized(v1::MachineChangeAuthorized {
            authorization_id: "CH-8".into(),
            machine_id: "A2".into(),
            detail: String::new(),
        }),
    );
    let r = submit(&s.url, &[env]).await;
    assert_ne!(r[0].status, v1::ReceiptStatus::Accepted as i32);
}

#[tokio::test]
async fn a_floor_that_reports_its_events_is_honest_and_its_planted_mistakes_are_found() {
    let mut s = SlotFloor::start_reporting(plan(), 30, 8, 60, "", &["A2", "B1"]).await;
    s.caught_up().await;
    let f = s.findings().await;
    assert!(f.is_empty(), "an honest floor has no finding: {f:?}");
    let mut j = jackpots(&s).await;
    let doc = j
        .get_machine_events(v1::MachineEventsRequest {
            machine_id: "A2".into(),
            kinds: vec![],
            limit: 10_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let r: jackpot::EventsReport = serde_json::from_str(&doc.json).unwrap();
    for k in [
        "software_authenticated",
        "door",
        "power",
        "game_ended",
        "hand_pay",
    ] {
        assert!(r.counts.contains_key(k), "no {k}: {:?}", r.counts);
    }
    // The planted mistakes.
    let mut ev = s.floor.lose_events(&"B1".into(), 12);
    ev.extend(s.floor.unmetered_hand_pay(&"A2".into(), 25_000));
    ev.extend(s.floor.play(10));
    s.send(&ev).await;
    s.caught_up().await;
    let f = s.findings().await;
    let mut got: Vec<(String, String)> = f
        .iter()
        .map(|x| (x.code.clone(), x.machine_id.clone()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("SLOT_EVENTS_LOST".to_string(), "B1".to_string()),
            ("SLOT_HANDPAY_METER_MISMATCH".to_string(), "A2".to_string())
        ]
    );
}
