//! Tests of the audit state machine with a toy engine (straight-up roulette bets only).

use proptest::prelude::*;
use rules_core::*;

use crate::*;

/// A toy engine: French roulette, straight bets only, 35 to 1; counts rounds in its state; flags
/// bets after "no more bets" as TOY_LATE_BET; refuses any other bet type; refuses a table whose
/// `min_bet_cents` is 0 or absent.
struct Toy;

impl Adjudicator for Toy {
    type Table = i64;
    type State = u32;

    fn has_engine(&self, game: GameId) -> bool {
        game == GameId::RouletteFrench
    }

    fn configure(&self, config: &TableConfig) -> Result<(i64, Vec<Violation>), ConfigError> {
        let min = config.require_min()?;
        let mut v = Vec::new();
        if config.max_bet_cents.is_some_and(|m| m > 30 * min) {
            v.push(Violation::new(
                "TOY_LIMIT_RATIO",
                Severity::Low,
                "toy r.1",
                "max above 30x min",
            ));
        }
        Ok((min, v))
    }

    fn fresh_state(&self, _: &i64) -> u32 {
        0
    }

    fn adjudicate(
        &self,
        _min: &i64,
        state: &mut u32,
        round: &Round,
    ) -> Result<Adjudication, RoundError> {
        let mut adj = Adjudication::new(GameId::RouletteFrench, round.round_id.clone());
        let pocket = round.events.iter().find_map(|e| match e.kind {
            EventKind::Ball { pocket } => Some(pocket),
            _ => None,
        });
        let mut closed = false;
        for (i, e) in round.events.iter().enumerate() {
            match &e.kind {
                EventKind::NoMoreBets => closed = true,
                EventKind::Bet(b) => {
                    if b.bet_type != "straight" {
                        return Err(RoundError::bet(round, &b.id, "unknown bet type"));
                    }
                    if closed {
                        adj.violation(
                            Violation::new("TOY_LATE_BET", Severity::Medium, "toy r.2", "late")
                                .bet(&b.id)
                                .event(i),
                        );
                    }
                    let void = round.settlement.as_ref().is_some_and(|s| s.void);
                    let (net, outcome) = match pocket {
                        _ if void => (0, Outcome::Void),
                        Some(p) if b.selection == [p] => (35 * b.amount_cents, Outcome::Won),
                        Some(_) => (-b.amount_cents, Outcome::Lost),
                        None => (0, Outcome::Void),
                    };
                    adj.bets.push(BetOutcome {
                        bet_id: b.id.clone(),
                        seat: b.seat,
                        stake_cents: b.amount_cents,
                        due_net_cents: net,
                        outcome,
                        reported_net_cents: None,
                        reason: "toy".into(),
                        citation: "toy r.3".into(),
                    });
                }
                _ => {}
            }
        }
        adj.reconcile(round.settlement.as_ref(), "TOY_WRONG_PAYOUT", "toy r.3");
        *state += 1;
        Ok(adj)
    }
}

fn meta(index: u64) -> EntryMeta {
    EntryMeta {
        index,
        received_at_ms: 1_000_000 + index as i64 * 1000,
        signer: "dev".into(),
    }
}

fn config(min: i64, max: i64) -> TableConfig {
    let mut c = TableConfig::new(GameId::RouletteFrench);
    c.casino_id = Some("casino-1".into());
    c.min_bet_cents = Some(min);
    c.max_bet_cents = Some(max);
    c
}

fn ev(table: &str, round: &str, kind: EventKind) -> AuditInput {
    AuditInput::RoundEvent {
        table_id: table.into(),
        round_id: round.into(),
        event: RoundEvent::new(kind),
    }
}

fn bet(id: &str, n: u8, amount: i64) -> EventKind {
    EventKind::Bet(Bet::new(id, "straight", amount).selection(&[n]))
}

fn settle(table: &str, round: &str, results: &[(&str, i64)]) -> AuditInput {
    AuditInput::RoundSettled {
        table_id: table.into(),
        round_id: round.into(),
        settlement: Settlement {
            void: false,
            results: results
                .iter()
                .map(|(b, n)| ReportedNet {
                    bet_id: (*b).into(),
                    net_cents: *n,
                })
                .collect(),
            house_cents: None,
        },
    }
}

fn opened(table: &str, round: &str) -> AuditInput {
    AuditInput::RoundOpened {
        table_id: table.into(),
        round_id: round.into(),
    }
}

fn configured(table: &str, c: TableConfig) -> AuditInput {
    AuditInput::TableConfigured {
        table_id: table.into(),
        config: c,
    }
}

/// Run inputs from index 1 and collect every output.
fn run(inputs: Vec<AuditInput>) -> (Auditor<Toy>, Vec<Finding>, Vec<RoundSummary>) {
    let mut a = Auditor::new(Toy, AuditSettings::default());
    let (mut fs, mut rs) = (Vec::new(), Vec::new());
    for (i, input) in inputs.into_iter().enumerate() {
        let out = a.apply(&meta(i as u64 + 1), input);
        fs.extend(out.findings);
        rs.extend(out.rounds);
    }
    (a, fs, rs)
}

fn codes_of(fs: &[Finding]) -> Vec<&str> {
    fs.iter().map(|f| f.code.as_str()).collect()
}

#[test]
fn honest_round_gives_no_finding_and_a_summary() {
    let (a, fs, rs) = run(vec![
        configured("t1", config(100, 3000)),
        opened("t1", "r1"),
        ev("t1", "r1", bet("b1", 17, 100)),
        ev("t1", "r1", bet("b2", 5, 200)),
        ev("t1", "r1", EventKind::NoMoreBets),
        ev("t1", "r1", EventKind::Ball { pocket: 17 }),
        settle("t1", "r1", &[("b1", 3500), ("b2", -200)]),
    ]);
    assert!(fs.is_empty(), "{fs:#?}");
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!(
        (
            r.handle_cents,
            r.due_player_net_cents,
            r.reported_player_net_cents
        ),
        (300, 3300, 3300)
    );
    assert_eq!(r.casino_id.as_deref(), Some("casino-1"));
    assert_eq!((r.opened_index, r.closed_index, r.config_index), (2, 7, 1));
    assert_eq!(r.event_indexes, vec![3, 4, 5, 6]);
    assert_eq!(a.digest().count, 0);
    assert_eq!(a.open_rounds(), 0);
    assert_eq!(a.rounds_closed(), 1);
}

#[test]
fn wrong_payout_is_a_finding_with_both_amounts_and_evidence() {
    let (_, fs, rs) = run(vec![
        configured("t1", config(100, 3000)),
        opened("t1", "r1"),
        ev("t1", "r1", bet("b1", 17, 100)),
        ev("t1", "r1", EventKind::Ball { pocket: 17 }),
        settle("t1", "r1", &[("b1", 3600)]),
    ]);
    assert_eq!(codes_of(&fs), ["TOY_WRONG_PAYOUT"]);
    let f = &fs[0];
    assert_eq!((f.due_cents, f.reported_cents), (Some(3500), Some(3600)));
    assert_eq!(f.evidence, vec![3, 5]);
    assert_eq!(f.bet_id.as_deref(), Some("b1"));
    assert_eq!(
        (f.table_id.as_deref(), f.round_id.as_deref()),
        (Some("t1"), Some("r1"))
    );
    assert_eq!(f.casino_id.as_deref(), Some("casino-1"));
    assert_eq!(f.severity, Severity::High);
    assert_eq!(rs[0].discrepancy_abs_cents, 100);
}

#[test]
fn interleaved_tables_and_the_configuration_in_force_at_opening() {
    let (_, fs, rs) = run(vec![
        configured("t1", config(100, 3000)),
        configured("t2", config(100, 3000)),
        opened("t1", "r1"),
        opened("t2", "r1"),
        ev("t2", "r1", bet("x", 1, 100)),
        ev("t1", "r1", bet("y", 2, 100)),
        // A new configuration for t1 (with a ratio violation) does not change the open round.
        configured("t1", config(100, 9000)),
        ev("t1", "r1", EventKind::Ball { pocket: 2 }),
        ev("t2", "r1", EventKind::Ball { pocket: 3 }),
        settle("t2", "r1", &[("x", -100)]),
        settle("t1", "r1", &[("y", 3500)]),
        opened("t1", "r2"),
        settle("t1", "r2", &[]),
    ]);
    assert_eq!(codes_of(&fs), ["TOY_LIMIT_RATIO"]);
    assert_eq!(fs[0].evidence, vec![7]);
    assert_eq!(rs.len(), 3);
    assert_eq!(
        rs[1].config_index, 1,
        "round r1 opened under the first configuration"
    );
    assert_eq!(rs[2].config_index, 7, "round r2 opened under the second");
}

#[test]
fn lifecycle_findings() {
    let mut c0 = config(100, 3000);
    c0.min_bet_cents = None;
    let (_, fs, _) = run(vec![
        opened("t0", "r1"),                                // 1: no configuration
        configured("t1", config(100, 3000)),               // 2
        ev("t1", "zz", bet("b", 1, 100)),                  // 3: outside any round
        opened("t1", "r1"),                                // 4
        opened("t1", "r1"),                                // 5: reopened
        ev("t1", "r1", EventKind::Ball { pocket: 1 }),     // 6
        ev("t1", "r1", bet("late", 1, 100)),               // 7: bet after the outcome
        settle("t1", "r1", &[("late", 3500)]),             // 8
        ev("t1", "r1", EventKind::Ball { pocket: 2 }),     // 9: after settlement
        settle("t1", "r1", &[]),                           // 10: second settlement
        configured("t2", c0),                              // 11: refused
        opened("t2", "r1"),                                // 12: unusable table
        configured("t3", TableConfig::new(GameId::Craps)), // 13: no engine (toy)
        opened("t1", "r2"),                                // 14
        ev("t1", "r2", EventKind::Bet(Bet::new("odd", "split", 100))), // 15
        settle("t1", "r2", &[]),                           // 16: engine cannot read it
    ]);
    assert_eq!(
        codes_of(&fs),
        [
            codes::TABLE_NOT_CONFIGURED,
            codes::EVENT_OUTSIDE_ROUND,
            codes::ROUND_REOPENED,
            codes::BET_AFTER_OUTCOME,
            codes::EVENT_AFTER_SETTLEMENT,
            codes::EVENT_AFTER_SETTLEMENT,
            codes::TABLE_CONFIG_REJECTED,
            codes::TABLE_NOT_CONFIGURED,
            codes::NO_ENGINE,
            codes::ROUND_UNREADABLE,
        ]
    );
    assert!(fs[6].message.contains("min_bet_cents"), "{}", fs[6].message);
    assert_eq!(fs[7].evidence, vec![11, 12]);
    assert!(fs[9].message.contains("unknown bet type"));
    // seq numbers are the digest's order
    for (i, f) in fs.iter().enumerate() {
        assert_eq!(f.seq, i as u64);
    }
}

#[test]
fn a_round_not_settled_in_time_is_flagged_once_and_still_adjudicated_later() {
    let mut a = Auditor::new(
        Toy,
        AuditSettings {
            round_timeout_ms: 10_000,
            ..Default::default()
        },
    );
    let at = |index: u64, ms: i64| EntryMeta {
        index,
        received_at_ms: ms,
        signer: "d".into(),
    };
    assert!(
        a.apply(&at(1, 0), configured("t1", config(100, 3000)))
            .findings
            .is_empty()
    );
    a.apply(&at(2, 0), opened("t1", "r1"));
    a.apply(&at(3, 5_000), ev("t1", "r1", bet("b1", 3, 100)));
    assert!(
        a.apply(&at(4, 10_000), AuditInput::Tick)
            .findings
            .is_empty(),
        "deadline not yet passed"
    );
    let out = a.apply(&at(5, 10_001), AuditInput::Tick);
    assert_eq!(codes_of(&out.findings), [codes::ROUND_NOT_SETTLED]);
    assert_eq!(out.findings[0].evidence, vec![2]);
    assert!(
        a.apply(&at(6, 99_000), AuditInput::Tick)
            .findings
            .is_empty(),
        "flagged once"
    );
    a.apply(
        &at(7, 99_001),
        ev("t1", "r1", EventKind::Ball { pocket: 4 }),
    );
    let out = a.apply(&at(8, 99_002), settle("t1", "r1", &[("b1", -100)]));
    assert!(out.findings.is_empty());
    assert_eq!(out.rounds.len(), 1);
}

#[test]
fn replaying_an_applied_index_changes_nothing() {
    let mut a = Auditor::new(Toy, AuditSettings::default());
    a.apply(&meta(1), configured("t1", config(100, 3000)));
    a.apply(&meta(2), opened("t1", "r1"));
    let before = serde_json::to_string(&a.snapshot()).unwrap();
    let out = a.apply(&meta(2), opened("t1", "r1"));
    assert!(out.findings.is_empty());
    assert_eq!(serde_json::to_string(&a.snapshot()).unwrap(), before);
}

#[test]
fn security_findings_are_critical_and_carry_their_evidence() {
    let (_, fs, _) = run(vec![AuditInput::Security {
        code: "SECURITY_EQUIVOCATION".into(),
        device_id: "table-7".into(),
        message: "two different events with sequence 12".into(),
        evidence: vec![0],
    }]);
    assert_eq!(fs[0].severity, Severity::Critical);
    assert_eq!(fs[0].evidence, vec![0, 1]);
    assert_eq!(fs[0].device_id.as_deref(), Some("table-7"));
}

/// A table with `max_open_rounds` open that opens another abandons the one opened first: one
/// finding, no adjudication, its deadline forgotten; whatever comes for it later is flagged with
/// the same code, its id cannot be opened again, and the other rounds play on.
#[test]
fn a_table_with_too_many_rounds_open_abandons_its_oldest() {
    let settings = AuditSettings {
        round_timeout_ms: 60_000,
        max_open_rounds: 3,
        ..Default::default()
    };
    let mut a = Auditor::new(Toy, settings);
    let i = std::cell::Cell::new(0);
    let apply = |a: &mut Auditor<Toy>, input| {
        i.set(i.get() + 1);
        a.apply(&meta(i.get()), input)
    };
    apply(&mut a, configured("t1", config(100, 3000)));
    for r in ["r1", "r2", "r3"] {
        assert!(apply(&mut a, opened("t1", r)).findings.is_empty());
    }
    // Another table's rounds do not count.
    assert!(
        apply(&mut a, configured("t2", config(100, 3000)))
            .findings
            .is_empty()
    );
    assert!(apply(&mut a, opened("t2", "r1")).findings.is_empty());
    let out = apply(&mut a, opened("t1", "r4"));
    assert_eq!(codes_of(&out.findings), [codes::ROUND_ABANDONED]);
    let f = &out.findings[0];
    assert_eq!(f.round_id.as_deref(), Some("r1"));
    assert_eq!(f.evidence, vec![2, 7]);
    assert_eq!(f.citation, crate::finding::RECORD_INTEGRITY);
    assert!(f.message.contains("3 rounds open"), "{}", f.message);
    // r1 is gone: its bet and its settlement are flagged as the abandoned round's, and its id
    // cannot be opened again.
    let out = apply(&mut a, ev("t1", "r1", bet("b1", 3, 100)));
    assert_eq!(codes_of(&out.findings), [codes::ROUND_ABANDONED]);
    assert!(out.findings[0].message.contains("abandoned unsettled"));
    let out = apply(&mut a, settle("t1", "r1", &[("b1", -100)]));
    assert_eq!(codes_of(&out.findings), [codes::ROUND_ABANDONED]);
    assert!(out.rounds.is_empty());
    let out = apply(&mut a, opened("t1", "r1"));
    assert_eq!(codes_of(&out.findings), [codes::ROUND_REOPENED]);
    // The others play on; r1's deadline is not flagged, r2's and r3's are.
    apply(&mut a, ev("t1", "r4", bet("b9", 3, 100)));
    apply(&mut a, ev("t1", "r4", EventKind::Ball { pocket: 3 }));
    let out = apply(&mut a, settle("t1", "r4", &[("b9", 3500)]));
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    assert_eq!(out.rounds.len(), 1);
    i.set(i.get() + 100);
    let out = apply(&mut a, AuditInput::Tick);
    let late: Vec<_> = out
        .findings
        .iter()
        .map(|f| {
            assert_eq!(f.code, codes::ROUND_NOT_SETTLED);
            (f.table_id.clone().unwrap(), f.round_id.clone().unwrap())
        })
        .collect();
    let want = [("t1", "r2"), ("t1", "r3"), ("t2", "r1")];
    assert_eq!(late.len(), want.len(), "{late:?}");
    for (t, r) in want {
        assert!(late.contains(&(t.to_string(), r.to_string())), "{late:?}");
    }
}

/// A round with more than `max_round_events` events: the audit holds the first ones, flags the
/// round when it passes the limit and again when it closes, and does not adjudicate it; the
/// count survives a snapshot.
#[test]
fn a_round_with_too_many_events_is_flagged_and_not_adjudicated() {
    let settings = AuditSettings {
        max_round_events: 4,
        ..Default::default()
    };
    let mut a = Auditor::new(Toy, settings);
    a.apply(&meta(1), configured("t1", config(100, 3000)));
    a.apply(&meta(2), opened("t1", "r1"));
    for n in 0..4u64 {
        let out = a.apply(&meta(3 + n), ev("t1", "r1", bet(&format!("b{n}"), 3, 100)));
        assert!(out.findings.is_empty());
    }
    let out = a.apply(&meta(7), ev("t1", "r1", bet("b4", 3, 100)));
    assert_eq!(codes_of(&out.findings), [codes::ROUND_TOO_LONG]);
    assert_eq!(out.findings[0].evidence, vec![2, 7]);
    assert!(out.findings[0].message.contains("more than 4 events"));
    // Flagged once while it goes on; resumed from a snapshot, it still knows.
    let snap = serde_json::to_string(&a.snapshot()).unwrap();
    let mut a = Auditor::restore(Toy, serde_json::from_str(&snap).unwrap()).unwrap();
    let out = a.apply(&meta(8), ev("t1", "r1", EventKind::Ball { pocket: 3 }));
    assert!(out.findings.is_empty());
    let out = a.apply(&meta(9), settle("t1", "r1", &[("b0", 3500)]));
    assert_eq!(codes_of(&out.findings), [codes::ROUND_TOO_LONG]);
    assert!(
        out.findings[0]
            .message
            .contains("closed with 6 events, of which the audit held 4"),
        "{}",
        out.findings[0].message
    );
    assert!(out.rounds.is_empty());
    assert_eq!(a.rounds_closed(), 0);
    // It is closed: what comes after is after settlement.
    let out = a.apply(&meta(10), ev("t1", "r1", bet("b5", 3, 100)));
    assert_eq!(codes_of(&out.findings), [codes::EVENT_AFTER_SETTLEMENT]);
}

/// A random stream of table inputs over a few tables and rounds, honest or not.
fn arb_inputs() -> impl Strategy<Value = Vec<AuditInput>> {
    let table = prop::sample::select(vec!["t1", "t2", "t3"]);
    let round = prop::sample::select(vec!["r1", "r2", "r3", "r4"]);
    let one = (table, round, 0u8..9, 0u8..37, 1i64..5).prop_map(|(t, r, kind, n, a)| match kind {
        0 => configured(t, config(100, if n > 30 { 9000 } else { 3000 })),
        1 | 2 => opened(t, r),
        3 | 4 => ev(t, r, bet(&format!("b{n}"), n, a * 100)),
        5 => ev(t, r, EventKind::Ball { pocket: n }),
        6 => settle(t, r, &[("b1", 3500), ("b2", -200)]),
        7 => ev(t, r, EventKind::NoMoreBets),
        _ => AuditInput::Tick,
    });
    prop::collection::vec(one, 0..80)
}

proptest! {
    /// Resuming from a snapshot taken anywhere gives exactly the findings, summaries and digest
    /// of an uninterrupted run (replay is resumable), and a snapshot survives JSON.
    #[test]
    fn snapshot_restore_anywhere_is_invisible(
        inputs in arb_inputs(),
        cut in 0usize..80,
        small in any::<bool>(),
    ) {
        // Small limits, to abandon rounds and stop holding events too.
        let settings = if small {
            AuditSettings { round_timeout_ms: 20_000, max_open_rounds: 2, max_round_events: 3, ..Default::default() }
        } else {
            AuditSettings { round_timeout_ms: 20_000, ..Default::default() }
        };
        let mut whole = Auditor::new(Toy, settings.clone());
        let mut expected = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            let out = whole.apply(&meta(i as u64 + 1), input.clone());
            expected.extend(out.findings.into_iter().map(|f| f.canonical_bytes()));
            expected.extend(out.rounds.into_iter().map(|r| serde_json::to_vec(&r).unwrap()));
        }
        let mut part = Auditor::new(Toy, settings);
        let mut got = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            if i == cut.min(inputs.len()) {
                let json = serde_json::to_string(&part.snapshot()).unwrap();
                let snap: AuditorSnapshot<u32> = serde_json::from_str(&json).unwrap();
                part = Auditor::restore(Toy, snap).unwrap();
            }
            let out = part.apply(&meta(i as u64 + 1), input.clone());
            got.extend(out.findings.into_iter().map(|f| f.canonical_bytes()));
            got.extend(out.rounds.into_iter().map(|r| serde_json::to_vec(&r).unwrap()));
        }
        prop_assert_eq!(got, expected);
        prop_assert_eq!(part.digest(), whole.digest());
        prop_assert_eq!(serde_json::to_string(&part.snapshot()).unwrap(), serde_json::to_string(&whole.snapshot()).unwrap());
    }
}
