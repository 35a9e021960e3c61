//! Domain → proto → chain entry → domain is the identity on everything a device can say: every
//! event of simulated rounds of every game, and every event of a simulated slot floor.

use audit::AuditInput;
use jackpot::sim::{Floor, FloorMachine, FloorPlan};
use ledger_convert::{Routed, route, route_parts_timed, to_proto};
use ledger_proto::v1::{self, event_body::Payload as P};
use prost::Message;
use rules_core::{GameId, Options, RoundEvent, SimRng, TableConfig};

fn entry(index: u64, at_ms: i64, payload: P) -> v1::ChainEntry {
    let body = v1::EventBody {
        device_id: "dev-1".into(),
        sequence: index,
        occurred_at_ms: at_ms,
        payload: Some(payload),
    };
    v1::ChainEntry {
        format: 1,
        index,
        received_at_ms: at_ms,
        kind: v1::RecordKind::Event as i32,
        body: body.encode_to_vec(),
        ..Default::default()
    }
}

fn back(index: u64, at_ms: i64, payload: P) -> Routed {
    let e = entry(index, at_ms, payload);
    // The replay's reader: the same routing, and the event's own time from the same decoding.
    let timed = route_parts_timed(e.index, e.received_at_ms, e.kind, &e.body);
    assert_eq!(timed, (Some(at_ms), route(&e)));
    let (meta, routed) = route(&e).expect("routes");
    assert_eq!(meta.index, index);
    assert_eq!(meta.signer, "dev-1");
    routed
}

#[test]
fn every_round_event_of_every_game_survives_the_trip() {
    let mut index = 0;
    for game in GameId::ALL {
        let Some(mut config) = rules::example_table(game) else {
            continue;
        };
        config.table_id = Some("T1".into());
        config.casino_id = Some("C1".into());
        index += 1;
        match back(index, 0, to_proto::table_configured("T1", "C1", &config)) {
            Routed::Audit(AuditInput::TableConfigured {
                table_id,
                config: c,
            }) => {
                assert_eq!(table_id, "T1");
                assert_eq!(c, config, "{game}");
            }
            other => panic!("{game}: {other:?}"),
        }
        let table = rules::ConfiguredTable::new(config.clone()).unwrap();
        let mut state = table.fresh_state();
        let mut rng = SimRng::new(9);
        let mut ms = 1_767_225_600_000;
        for i in 0..60 {
            let round_id = format!("{game}-{i}");
            let round = table
                .simulate(&state, round_id.clone().into(), ms, &mut rng, None)
                .unwrap();
            table
                .adjudicate(&mut state, &round, &Options::default())
                .unwrap();
            index += 1;
            assert_eq!(
                back(index, ms, to_proto::round_opened("T1", &round_id)),
                Routed::Audit(AuditInput::RoundOpened {
                    table_id: "T1".into(),
                    round_id: round_id.clone(),
                })
            );
            for e in &round.events {
                index += 1;
                let at = e.at_ms.unwrap_or(ms);
                match back(index, at, to_proto::round_event("T1", &round_id, e)) {
                    Routed::Audit(AuditInput::RoundEvent {
                        table_id,
                        round_id: r,
                        event,
                    }) => {
                        assert_eq!((table_id.as_str(), r.as_str()), ("T1", round_id.as_str()));
                        assert_eq!(event, RoundEvent::at(at, e.kind.clone()), "{game}");
                    }
                    other => panic!("{game}: {other:?}"),
                }
            }
            let s = round.settlement.clone().unwrap();
            index += 1;
            match back(
                index,
                ms,
                to_proto::round_settled("T1", &round_id, &s, "void"),
            ) {
                Routed::Audit(AuditInput::RoundSettled { settlement, .. }) => {
                    assert_eq!(settlement, s, "{game}")
                }
                Routed::Audit(AuditInput::RoundVoided { .. }) => {
                    assert!(s.void && s.results.is_empty())
                }
                other => panic!("{game}: {other:?}"),
            }
            ms = round
                .events
                .iter()
                .filter_map(|e| e.at_ms)
                .max()
                .unwrap_or(ms)
                + 10_000;
        }
    }
    assert!(index > 5_000, "{index}");
}

#[test]
fn every_slot_floor_event_survives_the_trip() {
    let machine = |id: &str, model: &str| FloorMachine {
        machine_id: id.into(),
        casino_id: "C1".into(),
        model_id: model.into(),
        bet_values_cents: vec![50, 100],
        rollover: 100_000_000,
        initial_coin_in: 99_000_000,
        report_games: true,
    };
    let plan = FloorPlan {
        models: vec![jackpot::ModelApproved {
            model_id: "K".into(),
            theoretical_rtp_bp: 9000,
            bet_values_cents: vec![50, 100],
            approval_ref: "IGJ".into(),
        }],
        machines: vec![machine("M1", "K"), machine("M2", "K")],
        pools: vec![jackpot::PoolConfigured {
            pool_id: "JP1".into(),
            kind: jackpot::PoolKind::Jackpot,
            casino_ids: vec!["C1".into()],
            member_machine_ids: vec!["M1".into()],
            member_table_ids: vec![],
            contribution_bp: 100,
            start_value_cents: 10_000,
            reset_value_cents: 10_000,
        }],
    };
    let mut floor = Floor::new(plan, 1, 1_767_225_600_000);
    floor.set_hit_odds("JP1", 50);
    let mut events = floor.setup();
    events.extend(floor.play(100));
    events.extend(floor.fail(&"M1".into(), "destroyed", true));
    events.extend(floor.authorize("A1", "JP1", "JP1"));
    events.extend(floor.transfer("X1", "JP1", "JP1", Some("A1")));
    let mut n = 0;
    for (i, e) in events.iter().enumerate() {
        let p = to_proto::jackpot_event(&e.event).expect("every floor event is signed");
        match back(i as u64 + 1, e.at_ms, p) {
            Routed::Jackpot(j) => assert_eq!(j, e.event),
            other => panic!("{other:?}"),
        }
        n += 1;
    }
    assert!(n > 100);
    assert!(
        events
            .iter()
            .any(|e| matches!(e.event, jackpot::Event::JackpotAwarded(_)))
    );
}

#[test]
fn an_unknown_game_is_routed_as_such() {
    let mut c = TableConfig::new(GameId::Craps);
    c.min_bet_cents = Some(100);
    let P::TableConfigured(mut m) = to_proto::table_configured("T9", "C1", &c) else {
        unreachable!()
    };
    m.game = "bingo".into();
    match back(1, 0, P::TableConfigured(m)) {
        Routed::Audit(AuditInput::UnknownGame { game, .. }) => assert_eq!(game, "bingo"),
        other => panic!("{other:?}"),
    }
}

/// Every kind of significant event, the change authorisation and the program approval come
/// back as they went out.
#[test]
fn every_significant_event_survives_the_trip() {
    use jackpot::{
        ChangeAuthorized, Door, DoorAction, Event, HandPayKind, HandPayState, LostReporter,
        MachineEvent, OptionChange, ProgramApproved, Significant as S,
    };
    let kinds = vec![
        S::Door {
            door: Door::CashBox,
            action: DoorAction::Opened,
        },
        S::Door {
            door: Door::Logic,
            action: DoorAction::OpenedWhilePoweredOff,
        },
        S::Door {
            door: Door::TopBox,
            action: DoorAction::Closed,
        },
        S::Power { on: false },
        S::Power { on: true },
        S::MemoryError,
        S::BatteryLow,
        S::HandPay {
            state: HandPayState::Pending,
            pay_kind: HandPayKind::CancelledCredits,
            handpay_id: "hp-7".into(),
            amount_cents: 125_000,
        },
        S::HandPay {
            state: HandPayState::Reset,
            pay_kind: HandPayKind::Progressive,
            handpay_id: String::new(),
            amount_cents: 1,
        },
        S::ProgressiveHit {
            pool_id: "JP-1".into(),
            amount_cents: 51_234,
            level: 2,
        },
        S::ProgressiveReset {
            pool_id: "JP-1".into(),
        },
        S::DeviceFault {
            device: "printer".into(),
            code: "paper_out".into(),
            cleared: false,
            disables_play: true,
        },
        S::Link { up: false },
        S::Link { up: true },
        S::EventsLost {
            reporter: LostReporter::Agent,
            count: 17,
            from_ms: 1_767_225_600_000,
            to_ms: 1_767_225_660_000,
        },
        S::SoftwareAuthenticated {
            component: "game".into(),
            algorithm: "sha256".into(),
            signature: "00ab".into(),
            passed: false,
        },
        S::ConfigurationChanged {
            changes: vec![OptionChange {
                option: "denomination".into(),
                old_value: "1".into(),
                new_value: "2".into(),
            }],
            authorization_id: Some("CH-1".into()),
        },
        S::ConfigurationChanged {
            changes: vec![OptionChange {
                option: "sound".into(),
                old_value: String::new(),
                new_value: "off".into(),
            }],
            authorization_id: None,
        },
        S::GameStarted {
            game_number: 41,
            wager_cents: 50,
        },
        S::GameEnded {
            game_number: 41,
            wager_cents: 50,
            win_cents: 0,
        },
    ];
    let mut events: Vec<Event> = kinds
        .into_iter()
        .enumerate()
        .map(|(i, event)| {
            Event::MachineEvent(MachineEvent {
                machine_id: "M-1".into(),
                source_code: if i % 2 == 0 {
                    format!("SAS:{i:02x}")
                } else {
                    String::new()
                },
                detail: if i % 3 == 0 {
                    "at the machine".into()
                } else {
                    String::new()
                },
                event,
            })
        })
        .collect();
    events.push(Event::ChangeAuthorized(ChangeAuthorized {
        authorization_id: "CH-1".into(),
        machine_id: "M-1".into(),
        detail: "denomination".into(),
    }));
    events.push(Event::ProgramApproved(ProgramApproved {
        model_id: "K".into(),
        component: "game".into(),
        algorithm: "sha256".into(),
        signature: "00ab".into(),
        approval_ref: "IGJ-9".into(),
    }));
    for (i, e) in events.into_iter().enumerate() {
        let p = to_proto::jackpot_event(&e).expect("signed");
        let index = i as u64 + 1;
        match back(index, 1_767_225_600_000, p) {
            Routed::Jackpot(got) => assert_eq!(got, e),
            other => panic!("{e:?}: {other:?}"),
        }
    }
}

/// Where an entry has no event time to read, or does not route, the timed reader says so as
/// `route_parts` does.
#[test]
fn the_timed_reader_gives_no_time_where_there_is_none_and_the_same_errors() {
    let kind = v1::RecordKind::Event as i32;
    // Not an EventBody at all: no time, and the routing's own error.
    let junk = [0xff_u8, 0xff, 0xff];
    let (at, routed) = route_parts_timed(7, 1, kind, &junk);
    assert_eq!(at, None);
    let err = routed.unwrap_err();
    assert_eq!(
        err,
        ledger_convert::route_parts(7, 1, kind, &junk).unwrap_err()
    );
    assert!(err.reason.contains("not an EventBody"), "{err}");
    // An EventBody the ledger would refuse (sequence 0): its time, and the check's error.
    let mut e = entry(
        8,
        1_767_225_600_123,
        P::BetsClosed(v1::BetsClosed {
            table_id: "T1".into(),
            round_id: "R1".into(),
        }),
    );
    let mut body = v1::EventBody::decode(e.body.as_slice()).unwrap();
    body.sequence = 0;
    e.body = body.encode_to_vec();
    let (at, routed) = route_parts_timed(e.index, e.received_at_ms, e.kind, &e.body);
    assert_eq!(at, Some(1_767_225_600_123));
    assert_eq!(routed, route(&e));
    assert!(routed.unwrap_err().reason.contains("sequence"));
    // A ledger record has no signer's clock.
    let genesis = v1::LedgerRecordBody {
        record: Some(v1::ledger_record_body::Record::Genesis(Default::default())),
        ..Default::default()
    };
    let lk = v1::RecordKind::Ledger as i32;
    let b = genesis.encode_to_vec();
    assert_eq!(
        route_parts_timed(0, 5, lk, &b),
        (None, ledger_convert::route_parts(0, 5, lk, &b))
    );
    assert_eq!(
        route_parts_timed(0, 5, lk, &b).1.unwrap().0.signer,
        "ledger"
    );
}

/// A machine's registration opens its account in the jackpot book (its machine id, or its
/// device id when it names none); a table device's registration is only time passing.
#[test]
fn a_machines_registration_reaches_the_jackpot_book_and_a_tables_does_not() {
    let reg = |kind: v1::DeviceKind, machine_id: &str| {
        P::DeviceRegistered(v1::DeviceRegistered {
            device_id: "agent-7".into(),
            // The ed25519 base point: a valid public key.
            public_key: [vec![0x58], vec![0x66; 31]].concat(),
            kind: kind as i32,
            casino_id: "lisboa".into(),
            table_ids: if kind == v1::DeviceKind::Table {
                vec!["T1".into()]
            } else {
                vec![]
            },
            machine_id: machine_id.into(),
            model_id: "K-1".into(),
            bet_values_cents: vec![50, 100],
            ..Default::default()
        })
    };
    let want = |machine: &str| {
        Routed::Jackpot(jackpot::Event::MachineRegistered(
            jackpot::MachineRegistered {
                machine_id: machine.into(),
                casino_id: "lisboa".into(),
                model_id: "K-1".into(),
                bet_values_cents: vec![50, 100],
            },
        ))
    };
    assert_eq!(back(1, 5, reg(v1::DeviceKind::Machine, "M-9")), want("M-9"));
    assert_eq!(
        back(2, 5, reg(v1::DeviceKind::Machine, "")),
        want("agent-7")
    );
    assert_eq!(back(3, 5, reg(v1::DeviceKind::Table, "")), Routed::Tick);
}

/// The ledger's own equivocation record reaches the audit as a security finding naming the
/// device, both sequence numbers' entries and the detail; other ledger records are time passing.
#[test]
fn an_equivocation_record_reaches_the_audit() {
    let lk = v1::RecordKind::Ledger as i32;
    let record = v1::LedgerRecordBody {
        record: Some(v1::ledger_record_body::Record::SecurityFinding(
            v1::SecurityFinding {
                code: "equivocation".into(),
                device_id: "table-7".into(),
                sequence: 12,
                original_index: 40,
                detail: "bodies differ".into(),
                ..Default::default()
            },
        )),
        ..Default::default()
    };
    let (meta, routed) = ledger_convert::route_parts(55, 9, lk, &record.encode_to_vec()).unwrap();
    assert_eq!(
        (meta.index, meta.received_at_ms, meta.signer.as_str()),
        (55, 9, "ledger")
    );
    assert_eq!(
        routed,
        Routed::Audit(AuditInput::Security {
            code: "SECURITY_EQUIVOCATION".into(),
            device_id: "table-7".into(),
            message: "device table-7 signed two different events with sequence 12 (the first is entry 40): bodies differ".into(),
            evidence: vec![40],
        })
    );
}

/// The floor events a simulated session may not produce (a contribution reported by a machine,
/// a restored machine, a RAM clear) come back as they went out.
#[test]
fn contributions_restorations_and_ram_clears_survive_the_trip() {
    use jackpot::{Event, JackpotContribution, MachineRestored, Meter, RamClear};
    let meter = |name: &str, value| Meter {
        name: name.into(),
        value,
        rollover: 100_000_000,
    };
    let events = [
        Event::JackpotContribution(JackpotContribution {
            pool_id: "JP1".into(),
            machine_id: "M1".into(),
            amount_cents: 37,
        }),
        Event::MachineRestored(MachineRestored {
            machine_id: "M1".into(),
            detail: "board replaced".into(),
            pool_ids: vec!["JP1".into(), "SJ".into()],
        }),
        Event::RamClear(RamClear {
            machine_id: "M1".into(),
            before: vec![meter("coin_in", 1_000), meter("coin_out", 900)],
            after: vec![meter("coin_in", 0)],
        }),
    ];
    for (i, e) in events.into_iter().enumerate() {
        let p = to_proto::jackpot_event(&e).expect("signed");
        assert_eq!(back(i as u64 + 1, 5, p), Routed::Jackpot(e));
    }
}

/// A void declaration comes back as one, with its reason.
#[test]
fn a_void_declaration_survives_the_trip() {
    let s = rules_core::Settlement {
        void: true,
        results: vec![],
        house_cents: None,
    };
    assert_eq!(
        back(1, 5, to_proto::round_settled("T1", "R1", &s, "wheel fault")),
        Routed::Audit(AuditInput::RoundVoided {
            table_id: "T1".into(),
            round_id: "R1".into(),
            reason: "wheel fault".into(),
        })
    );
}
