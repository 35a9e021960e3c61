//! Machines' significant events end to end: signed `MachineEvent`s (and the operator's
//! `MachineChangeAuthorized` / `ProgramApproved`) go over gRPC into the real ledgerd; the live
//! audit replays them and its findings are read back (Audit.ListFindings), one test per check;
//! the significant-events report is read over gRPC (Jackpots.GetMachineEvents) and through
//! `ledgerctl jackpot events`.

use e2e::slots::*;
use e2e::*;
use jackpot::Meter;
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

/// The machine's meters as the floor last read them, with `coin_in` moved by `more` cents and
/// `hand_paid` at `hand_paid` (absent: left out).
fn reading(s: &SlotFloor, machine: &str, more: u64, hand_paid: Option<u64>) -> P {
    let mut meters: Vec<v1::Meter> = s
        .floor
        .book()
        .machine(machine)
        .expect("machine")
        .meters
        .iter()
        .map(|(n, m)| {
            let v = if n == jackpot::COIN_IN {
                m.value + more
            } else {
                m.value
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
    let _: Option<Meter> = None;
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
    let _ = new_findings(&s, 0).await;
    let _ = reading(&s, "B2", 0, None);
}
