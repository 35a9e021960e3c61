//! Every slot-machine and jackpot check of the machines digest's "What an auditor can check"
//! table (shared/rules/machines.md §10, plus the meter-fault and RAM-clear checks the jackpot
//! book adds), end to end: a simulated floor's machines, the operator and the inspectorate sign
//! events, they go over gRPC into the real ledgerd, and the live audit's findings are read back
//! over gRPC (Audit.ListFindings) with their code, subject and amounts. Transfers are also
//! checked against the accounts (Jackpots.ListPools): every transfer the casino carried out is
//! booked as carried out (P217/2007 T.III r.5: the source restarts at 0, the target holds the
//! whole captive value), the ineligible ones flagged.

use e2e::slots::*;
use jackpot::sim::FloorEvent;
use jackpot::{Event, Meter};
use ledger_core::proto::{self as v1, event_body::Payload as P};

/// An honest floor after its set-up and two rounds of play: no finding yet.
async fn start(seed: u64) -> SlotFloor {
    start_with(plan(), seed).await
}

async fn start_with(plan: jackpot::sim::FloorPlan, seed: u64) -> SlotFloor {
    let s = SlotFloor::start(plan, seed, 2, 25).await;
    s.caught_up().await;
    let f = s.findings().await;
    assert!(f.is_empty(), "an honest floor has no finding: {f:?}");
    s
}

/// Send, wait for the audit, and return the findings recorded since the honest start.
async fn check(s: &mut SlotFloor, events: &[FloorEvent]) -> (Vec<v1::Receipt>, Vec<v1::Finding>) {
    let r = s.send(events).await;
    s.caught_up().await;
    (r, s.findings().await)
}

/// The machine's meters as the floor last read them.
fn last_meters(s: &SlotFloor, machine: &str) -> Vec<Meter> {
    s.floor
        .book()
        .machine(machine)
        .expect("machine")
        .meters
        .iter()
        .map(|(n, m)| Meter::new(n, m.value, m.rollover))
        .collect()
}

fn meters_proto(ms: &[Meter]) -> Vec<v1::Meter> {
    ms.iter()
        .map(|m| v1::Meter {
            name: m.name.clone(),
            value: m.value,
            rollover: m.rollover,
        })
        .collect()
}

fn transfer(id: &str, from: &str, to: &str, amount: i64, auth: &str) -> P {
    P::JackpotTransfer(v1::JackpotTransfer {
        transfer_id: id.into(),
        from_pool_id: from.into(),
        to_pool_id: to.into(),
        amount_cents: amount,
        reason: "force majeure".into(),
        authorization_id: auth.into(),
    })
}

#[tokio::test]
async fn a_meter_that_goes_back_without_a_ram_clear_is_flagged_a_documented_ram_clear_is_not() {
    let mut s = start(1).await;
    let ev = s.floor.backwards_reading(&"A2".into(), 10_000);
    let (r, f) = check(&mut s, &ev).await;
    assert_eq!(codes(&f), ["SLOT_METER_DECREASED"], "{f:?}");
    let x = &f[0];
    assert_eq!((x.machine_id.as_str(), x.casino_id.as_str()), ("A2", "C1"));
    assert_eq!(x.citation, "P217/2007 T.III r.9, r.14");
    assert!(x.message.contains("coin_in"), "{}", x.message);
    assert_eq!(x.evidence.last(), Some(&r.last().unwrap().index));
    assert_eq!(x.severity, v1::Severity::High as i32);

    // B2's meters are cleared with a documented RAM clear (every meter before and after), and
    // then read lower than before: a re-baselining, not a decrease.
    let before = last_meters(&s, "B2");
    let after: Vec<Meter> = before
        .iter()
        .map(|m| Meter::new(&m.name, 0, m.rollover))
        .collect();
    s.send_payload(
        "B2",
        P::RamClear(v1::RamClear {
            machine_id: "B2".into(),
            before: meters_proto(&before),
            after: meters_proto(&after),
        }),
    )
    .await;
    let reading: Vec<Meter> = after
        .iter()
        .map(|m| {
            Meter::new(
                &m.name,
                if m.name == "games_played" { 3 } else { 150 },
                m.rollover,
            )
        })
        .collect();
    s.send_payload(
        "B2",
        P::MeterReading(v1::MeterReading {
            machine_id: "B2".into(),
            meters: meters_proto(&reading),
        }),
    )
    .await;
    s.caught_up().await;
    assert_eq!(
        s.findings().await.len(),
        1,
        "the RAM clear and the reading are in order"
    );
}

#[tokio::test]
async fn a_ram_clear_without_readings_is_flagged() {
    let mut s = start(2).await;
    let r = s
        .send_payload(
            "B2",
            P::RamClear(v1::RamClear {
                machine_id: "B2".into(),
                before: vec![],
                after: vec![],
            }),
        )
        .await;
    s.caught_up().await;
    let f = s.findings().await;
    assert_eq!(codes(&f), ["SLOT_RAM_CLEAR_UNDOCUMENTED"], "{f:?}");
    assert_eq!(
        (f[0].machine_id.as_str(), f[0].casino_id.as_str()),
        ("B2", "C2")
    );
    assert!(
        f[0].message
            .contains("'before' lacks coin_in, coin_out, total_drop")
    );
    assert!(f[0].message.contains("'after' lacks"));
    assert_eq!(f[0].evidence.last(), Some(&r.index));
}

/// P217/2007 T.III r.9: a reading without a mandatory meter is flagged; the play inside it is
/// not "played with a faulty meter" (nobody could know yet), the play after it is.
#[tokio::test]
async fn a_machine_played_with_a_meter_missing_is_flagged() {
    let mut s = start(3).await;
    // B2 reports a reading with bets on it but without its drop meter.
    let reading = |extra: u64, drop: bool| -> Vec<Meter> {
        last_meters(&s, "B2")
            .into_iter()
            .filter(|m| drop || m.name != "total_drop")
            .map(|m| {
                let v = if m.name == "coin_in" {
                    m.value + extra
                } else {
                    m.value
                };
                Meter::new(&m.name, v, m.rollover)
            })
            .collect()
    };
    let (first, second) = (reading(1_000, false), reading(3_000, true));
    let r = s
        .send_payload(
            "B2",
            P::MeterReading(v1::MeterReading {
                machine_id: "B2".into(),
                meters: meters_proto(&first),
            }),
        )
        .await;
    s.caught_up().await;
    let f = s.findings().await;
    assert_eq!(codes(&f), ["SLOT_METER_MISSING"], "{f:?}");
    let missing = &f[0];
    assert_eq!(missing.machine_id, "B2");
    assert_eq!(missing.evidence.last(), Some(&r.index));
    assert_eq!(missing.citation, "P217/2007 T.III r.9");
    assert!(
        missing.message.contains("total_drop"),
        "{}",
        missing.message
    );
    // Played after that reading, before a restore: now it is.
    let r2 = s
        .send_payload(
            "B2",
            P::MeterReading(v1::MeterReading {
                machine_id: "B2".into(),
                meters: meters_proto(&second),
            }),
        )
        .await;
    s.caught_up().await;
    let f = s.findings().await;
    assert_eq!(
        codes(&f),
        ["SLOT_METER_MISSING", "SLOT_PLAYED_WITH_FAULTY_METER"],
        "{f:?}"
    );
    let played = &f[1];
    assert_eq!(played.machine_id, "B2");
    assert_eq!(played.citation, "P217/2007 T.III r.9");
    assert!(played.evidence.contains(&r.index), "the faulty reading");
    assert_eq!(played.evidence.last(), Some(&r2.index));
    assert!(played.for_review, "a reading of r.9: for review");
}

#[tokio::test]
async fn a_machine_played_after_a_meter_fault_is_flagged_until_restored() {
    let mut s = start(4).await;
    let fault = s
        .send_payload(
            "B2",
            P::MachineFault(v1::MachineFault {
                machine_id: "B2".into(),
                code: "meter_fault".into(),
                out_of_service: false,
                force_majeure: false,
                detail: "drop meter stuck".into(),
                pool_ids: vec![],
            }),
        )
        .await;
    // The floor keeps playing B2 (the fault does not take it out of service).
    let ev = s.floor.play(10);
    let (r, f) = check(&mut s, &ev).await;
    assert_eq!(codes(&f), ["SLOT_PLAYED_WITH_FAULTY_METER"], "{f:?}");
    let x = &f[0];
    assert_eq!((x.machine_id.as_str(), x.casino_id.as_str()), ("B2", "C2"));
    assert!(x.message.contains("meter_fault"), "{}", x.message);
    assert!(x.evidence.contains(&fault.index), "the fault is evidence");
    assert!(x.evidence.last().unwrap() <= &r.last().unwrap().index);
    // Once per episode; after a restore, play is fine again.
    s.send_payload(
        "B2",
        P::MachineRestored(v1::MachineRestored {
            machine_id: "B2".into(),
            detail: "meters verified".into(),
            pool_ids: vec![],
        }),
    )
    .await;
    let ev = s.floor.play(10);
    let (_, f) = check(&mut s, &ev).await;
    assert_eq!(f.len(), 1, "{f:?}");
}

#[tokio::test]
async fn a_declared_captive_value_that_differs_from_the_accounts_is_flagged_with_both_amounts() {
    let mut s = start(5).await;
    let ev = s.floor.report_captive("JP-A2", 500);
    let declared = match &ev.last().unwrap().event {
        Event::CaptiveValueReported(c) => c.value_cents,
        e => panic!("{e:?}"),
    };
    let due = s.floor.captive_cents("JP-A2").unwrap();
    assert_eq!(declared, due + 500);
    let (r, f) = check(&mut s, &ev).await;
    assert_eq!(codes(&f), ["SLOT_JACKPOT_CAPTIVE_MISMATCH"], "{f:?}");
    let x = &f[0];
    assert_eq!(x.pool_id, "JP-A2");
    assert_eq!(
        (x.due_cents, x.reported_cents),
        (Some(due), Some(due + 500))
    );
    assert_eq!(x.citation, "P217/2007 T.III r.3, r.4, r.5");
    assert_eq!(x.evidence.last(), Some(&r.last().unwrap().index));
    // The ledger's accounts are the floor's (an independent computation of the same events).
    assert_eq!(
        s.captive_e4("JP-A2").await,
        s.floor.book().pool("JP-A2").unwrap().captive_e4
    );
    // An honest declaration reconciles.
    let ev = s.floor.report_captive("JP-A2", 0);
    let (_, f) = check(&mut s, &ev).await;
    assert_eq!(f.len(), 1);
    let pools = s.pools().await;
    let p = pools.pools.iter().find(|p| p.pool_id == "JP-A2").unwrap();
    assert!(p.reconciled);
    assert_eq!(p.last_reported_cents, Some(due));
}

#[tokio::test]
async fn an_award_that_is_not_the_whole_captive_value_is_flagged_and_the_pool_restarts() {
    let mut s = start(6).await;
    let ev = s.floor.award_events("JP-A2", &"A2".into(), 77, 300);
    let paid = ev
        .iter()
        .find_map(|e| match &e.event {
            Event::JackpotAwarded(a) => Some(a.amount_cents),
            _ => None,
        })
        .unwrap();
    let (_, f) = check(&mut s, &ev).await;
    assert_eq!(codes(&f), ["SLOT_JACKPOT_AWARD_MISMATCH"], "{f:?}");
    let x = &f[0];
    assert_eq!((x.pool_id.as_str(), x.machine_id.as_str()), ("JP-A2", "A2"));
    assert_eq!(
        (x.due_cents, x.reported_cents),
        (Some(paid + 300), Some(paid))
    );
    assert_eq!(x.citation, "P217/2007 T.III r.5 (r.3, r.4)");
    // The award released the whole captive value; the pool restarts at its reset value.
    let pools = s.pools().await;
    assert_eq!(captive_e4(&pools, "JP-A2"), 40_000 * 10_000);
    assert!(pools.conservation_holds);
}

#[tokio::test]
async fn an_award_on_a_machine_outside_the_pool_is_flagged() {
    let mut s = start(7).await;
    // JP-A2 is A2's own jackpot; B1 pays it.
    let ev = s.floor.award_events("JP-A2", &"B1".into(), 12, 0);
    let (_, f) = check(&mut s, &ev).await;
    assert_eq!(codes(&f), ["SLOT_AWARD_MACHINE_NOT_IN_POOL"], "{f:?}");
    let x = &f[0];
    assert_eq!((x.pool_id.as_str(), x.machine_id.as_str()), ("JP-A2", "B1"));
    assert_eq!(x.citation, "P217/2007 T.III r.3, r.4");
    assert!(x.message.contains("B1"), "{}", x.message);
}

#[tokio::test]
async fn a_transfer_without_force_majeure_is_flagged_and_booked_as_carried_out() {
    let mut s = start(8).await;
    let before = s.pools().await;
    let ev = s.floor.transfer("T-unforced", "JP-A2", "JP-B1", None);
    let (r, f) = check(&mut s, &ev).await;
    assert_eq!(codes(&f), ["SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE"], "{f:?}");
    let x = &f[0];
    assert_eq!((x.pool_id.as_str(), x.machine_id.as_str()), ("JP-A2", "A2"));
    assert_eq!(x.citation, "P217/2007 T.III r.5, r.6");
    assert_eq!(x.evidence.last(), Some(&r[0].index));
    let after = s.pools().await;
    let (a2, b1) = (captive_e4(&before, "JP-A2"), captive_e4(&before, "JP-B1"));
    assert_eq!(captive_e4(&after, "JP-A2"), 0);
    assert_eq!(captive_e4(&after, "JP-B1"), b1 + a2);
    assert!(after.conservation_holds);
    // The casino's later declarations of the target count the value: nothing more to flag.
    let ev = s.floor.report_captive("JP-B1", 0);
    let (_, f) = check(&mut s, &ev).await;
    assert_eq!(f.len(), 1, "{f:?}");
}

#[tokio::test]
async fn a_transfer_to_an_ineligible_target_is_flagged_and_booked_as_carried_out() {
    let mut s = start(9).await;
    let ev = s.floor.fail(&"A2".into(), "destroyed", true);
    s.send(&ev).await;
    s.caught_up().await;
    let before = s.pools().await;
    // SJP groups machines of two models while K machines of the same bets exist (B1): r.6 says
    // same model and bets first.
    let ev = s.floor.transfer("T-bad", "JP-A2", "SJP", None);
    let (r, f) = check(&mut s, &ev).await;
    assert_eq!(codes(&f), ["SLOT_TRANSFER_TARGET_INVALID"], "{f:?}");
    let x = &f[0];
    assert_eq!((x.pool_id.as_str(), x.casino_id.as_str()), ("JP-A2", "C1"));
    assert_eq!(x.citation, "P217/2007 T.III r.6");
    assert!(x.message.contains("SJP"), "{}", x.message);
    assert_eq!(x.evidence.last(), Some(&r[0].index));
    let after = s.pools().await;
    let (a2, sjp) = (captive_e4(&before, "JP-A2"), captive_e4(&before, "SJP"));
    assert_eq!(captive_e4(&after, "JP-A2"), 0);
    assert_eq!(captive_e4(&after, "SJP"), sjp + a2);
    assert!(after.conservation_holds);
    // One breach, one finding: the superjackpot's later declarations are clean.
    let ev = s.floor.play(5);
    let (_, f) = check(&mut s, &ev).await;
    assert_eq!(f.len(), 1, "{f:?}");
}

#[tokio::test]
async fn a_transfer_of_less_than_the_whole_captive_value_is_flagged_with_both_amounts() {
    let mut s = start(10).await;
    let ev = s.floor.fail(&"A2".into(), "destroyed", true);
    s.send(&ev).await;
    let due = s.floor.captive_cents("JP-A2").unwrap();
    let r = s
        .send_payload(
            "operator-1",
            transfer("T-short", "JP-A2", "JP-B1", due - 1_000, ""),
        )
        .await;
    s.caught_up().await;
    let f = s.findings().await;
    assert_eq!(codes(&f), ["SLOT_TRANSFER_AMOUNT_MISMATCH"], "{f:?}");
    let x = &f[0];
    assert_eq!(x.pool_id, "JP-A2");
    assert_eq!(
        (x.due_cents, x.reported_cents),
        (Some(due), Some(due - 1_000))
    );
    assert_eq!(x.citation, "P217/2007 T.III r.5, r.6");
    assert_eq!(x.evidence.last(), Some(&r.index));
    // Booked with the whole value due (r.5), not the amount declared.
    let pools = s.pools().await;
    assert_eq!(captive_e4(&pools, "JP-A2"), 0);
    assert_eq!(
        captive_e4(&pools, "JP-B1"),
        s.floor.book().pool("JP-B1").unwrap().captive_e4
            + s.floor.book().pool("JP-A2").unwrap().captive_e4,
        "the target holds the whole value"
    );
    assert!(pools.conservation_holds);
}

#[tokio::test]
async fn a_valid_transfer_moves_the_whole_captive_value() {
    let mut s = start(11).await;
    let ev = s.floor.fail(&"A2".into(), "destroyed", true);
    s.send(&ev).await;
    s.caught_up().await;
    let before = s.pools().await;
    let (a2, b1) = (captive_e4(&before, "JP-A2"), captive_e4(&before, "JP-B1"));
    assert!(a2 >= 40_000 * 10_000);
    let ev = s.floor.transfer("T-ok", "JP-A2", "JP-B1", None);
    let (_, f) = check(&mut s, &ev).await;
    assert!(f.is_empty(), "{f:?}");
    let after = s.pools().await;
    assert_eq!(captive_e4(&after, "JP-A2"), 0);
    assert_eq!(
        captive_e4(&after, "JP-B1"),
        b1 + a2,
        "exactly, to the 1/10,000 cent"
    );
    assert!(after.conservation_holds);
    // The same as the floor's own accounts.
    for p in ["JP-A2", "JP-B1"] {
        assert_eq!(
            captive_e4(&after, p),
            s.floor.book().pool(p).unwrap().captive_e4
        );
    }
}

#[tokio::test]
async fn the_inspectorates_route_needs_its_authorisation_and_no_machine_of_the_same_model() {
    // B2 is the only machine of model L and has its own jackpot.
    let mut p = plan();
    p.pools.push(jackpot::PoolConfigured {
        pool_id: "JP-B2".into(),
        kind: jackpot::PoolKind::Jackpot,
        casino_ids: vec!["C2".into()],
        member_machine_ids: vec!["B2".into()],
        member_table_ids: vec![],
        contribution_bp: 150,
        start_value_cents: 20_000,
        reset_value_cents: 20_000,
    });
    let mut s = start_with(p, 12).await;
    let ev = s.floor.fail(&"B2".into(), "destroyed", true);
    s.send(&ev).await;
    s.caught_up().await;
    // To JP-B1 (model K) without an authorisation: not eligible (Jackpots.ValidateTransfer;
    // carried out, it would be booked and flagged).
    let due = s.floor.captive_cents("JP-B2").unwrap();
    let P::JackpotTransfer(noauth) = transfer("T-noauth", "JP-B2", "JP-B1", due, "") else {
        unreachable!()
    };
    let v = ledger_core::proto::jackpots_client::JackpotsClient::new(s.channel().await)
        .validate_transfer(noauth)
        .await
        .unwrap()
        .into_inner();
    assert!(!v.accepted, "{v:?}");
    assert_eq!(v.findings.len(), 1, "{v:?}");
    assert_eq!(v.findings[0].code, "SLOT_TRANSFER_TARGET_INVALID");
    assert!(
        v.findings[0].message.contains("not authorised"),
        "{}",
        v.findings[0].message
    );
    // The inspectorate authorises it (regulator-signed); the same transfer is then valid.
    let ev = s.floor.authorize("IGJ-7", "JP-B2", "JP-B1");
    s.send(&ev).await;
    let before = s.pools().await;
    let ev = s.floor.transfer("T-auth", "JP-B2", "JP-B1", Some("IGJ-7"));
    let (_, f) = check(&mut s, &ev).await;
    assert!(f.is_empty(), "no finding: {f:?}");
    let after = s.pools().await;
    assert_eq!(captive_e4(&after, "JP-B2"), 0);
    assert_eq!(
        captive_e4(&after, "JP-B1"),
        captive_e4(&before, "JP-B1") + captive_e4(&before, "JP-B2")
    );
}

#[tokio::test]
async fn a_pay_table_approved_below_80_percent_is_flagged() {
    let mut s = start(13).await;
    let r = s
        .send_payload(
            "operator-1",
            P::MachineModelApproved(v1::MachineModelApproved {
                model_id: "STINGY-1".into(),
                theoretical_rtp_bp: 7_900,
                bet_values_cents: vec![100],
                approval_ref: "IGJ-X".into(),
            }),
        )
        .await;
    s.caught_up().await;
    let f = s.findings().await;
    assert_eq!(codes(&f), ["SLOT_PAYTABLE_RETURN_BELOW_80"], "{f:?}");
    let x = &f[0];
    assert!(
        x.message.contains("STINGY-1") && x.message.contains("7900"),
        "{}",
        x.message
    );
    assert_eq!(x.citation, "P217/2007 T.III r.2 (r.3, r.4)");
    assert!(!x.for_review, "below 80% on the pay table alone: certain");
    assert_eq!(x.evidence.last(), Some(&r.index));
    // At 80% exactly the model is fine.
    s.send_payload(
        "operator-1",
        P::MachineModelApproved(v1::MachineModelApproved {
            model_id: "FAIR-1".into(),
            theoretical_rtp_bp: 8_000,
            bet_values_cents: vec![100],
            approval_ref: "IGJ-Y".into(),
        }),
    )
    .await;
    s.caught_up().await;
    assert_eq!(s.findings().await.len(), 1);
}

/// P217/2007 T.III r.6: force majeure of a pool (its link, controller or server), reported by
/// each member for that pool only (`MachineFault.pool_ids`), through ingest and the live audit:
/// the members stay in service, and the superjackpot may go to a pool of the same model and
/// bets.
#[tokio::test]
async fn a_superjackpot_whose_link_is_lost_may_be_transferred_and_its_machines_play_on() {
    let mut s = start(14).await;
    let ev = s
        .floor
        .pool_link_lost("SJP", "superjackpot controller destroyed");
    assert!(ev.iter().any(|e| matches!(
        &e.event,
        Event::MachineFault(f) if f.pool_ids.iter().map(|p| &**p).eq(["SJP"]) && !f.out_of_service
    )));
    let ev2 = s.floor.play(5);
    let (_, f) = check(&mut s, &[ev, ev2].concat()).await;
    assert!(f.is_empty(), "the members play on: {f:?}");
    let before = s.pools().await;
    let ev = s.floor.transfer("T-link", "SJP", "JP-A2", None);
    let (_, f) = check(&mut s, &ev).await;
    assert!(f.is_empty(), "{f:?}");
    let after = s.pools().await;
    assert_eq!(captive_e4(&after, "SJP"), 0);
    assert_eq!(
        captive_e4(&after, "JP-A2"),
        captive_e4(&before, "JP-A2") + captive_e4(&before, "SJP")
    );
    assert!(after.conservation_holds);
}
