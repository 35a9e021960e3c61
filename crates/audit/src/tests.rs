//! Tests of the audit state machine with a toy engine (straight-up roulette bets only).

use proptest::prelude::*;
use rules_core::*;

use crate::*;

/// A toy engine: French roulette, straight bets only, 35 to 1; counts rounds in its state; flags
/// bets after "no more bets" as TOY_LATE_BET; refuses any other bet type; refuses a table whose
/// `min_bet_cents` is 0 or absent. A late bet's findings are for review. It takes American roulette and cussec tables as French ones.
struct Toy;

impl Adjudicator for Toy {
    type Table = i64;
    type State = u32;

    fn has_engine(&self, game: GameId) -> bool {
        // Two more games than it plays: to change a table's game, and for the cussec dice.
        matches!(
            game,
            GameId::RouletteFrench | GameId::RouletteAmerican | GameId::Cussec
        )
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
        let mut late = Vec::new();
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
                                .event(i)
                                .review(),
                        );
                        late.push(b.id.to_string());
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
        for b in &late {
            adj.mark_review(b);
        }
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

fn config_for(game: GameId) -> TableConfig {
    let mut c = config(100, 3000);
    c.game = game;
    c
}

fn summaries(a: &mut Auditor<Toy>, from: u64, inputs: Vec<AuditInput>) -> Output {
    let mut all = Output::default();
    for (i, input) in inputs.into_iter().enumerate() {
        let out = a.apply(&meta(from + i as u64), input);
        all.findings.extend(out.findings);
        all.rounds.extend(out.rounds);
        all.adjudications.extend(out.adjudications);
    }
    all
}

/// Settings stored before a field existed take the field's documented default.
#[test]
fn settings_without_the_later_fields_take_their_defaults() {
    let s: AuditSettings =
        serde_json::from_str(r#"{"round_timeout_ms":5,"closed_rounds_remembered":7}"#).unwrap();
    assert_eq!(
        s,
        AuditSettings {
            round_timeout_ms: 5,
            closed_rounds_remembered: 7,
            keep_round_states: false,
            max_open_rounds: 64,
            max_round_events: 10_000,
            device_clock_drift_ms: 60_000,
        }
    );
    let d = AuditSettings::default();
    assert_eq!(
        (
            d.max_open_rounds,
            d.max_round_events,
            d.device_clock_drift_ms
        ),
        (64, 10_000, 60_000)
    );
}

/// The auditor's accessors report what it holds.
#[test]
fn the_accessors_report_position_digest_settings_open_rounds_and_configuration() {
    let settings = AuditSettings {
        round_timeout_ms: 1_234_567,
        ..Default::default()
    };
    let mut a = Auditor::new(Toy, settings.clone());
    assert_eq!(a.position(), None);
    assert_eq!(a.settings(), &settings);
    assert_eq!(a.digest(), FindingsDigest::default());
    let mut c0 = config(100, 3000);
    c0.min_bet_cents = None;
    let out = summaries(
        &mut a,
        1,
        vec![
            configured("t1", config(100, 3000)),
            configured("t2", c0),
            opened("t1", "r1"),
            opened("t1", "r2"),
            opened("t3", "r1"),
        ],
    );
    assert_eq!(a.position(), Some(5));
    assert_eq!(a.open_rounds(), 3);
    assert_eq!(a.table_config("t1"), Some(&config(100, 3000)));
    assert_eq!(a.table_config("t2"), None, "refused");
    assert_eq!(a.table_config("t9"), None, "unknown");
    let mut want = FindingsDigest::default();
    for f in &out.findings {
        want.add(f);
    }
    assert_eq!(
        codes_of(&out.findings),
        [codes::TABLE_CONFIG_REJECTED, codes::TABLE_NOT_CONFIGURED]
    );
    assert_eq!(a.digest(), want);
    assert_ne!(a.digest(), FindingsDigest::default());
}

/// A table forgets its oldest settled round ids past `closed_rounds_remembered`: an event for a
/// remembered one is "after settlement", for a forgotten one "outside any round", and a
/// forgotten id may be opened again.
#[test]
fn settled_rounds_are_remembered_up_to_the_limit() {
    let mut a = Auditor::new(
        Toy,
        AuditSettings {
            closed_rounds_remembered: 2,
            ..Default::default()
        },
    );
    let mut inputs = vec![configured("t1", config(100, 3000))];
    for r in ["r1", "r2", "r3"] {
        inputs.push(opened("t1", r));
        inputs.push(settle("t1", r, &[]));
    }
    assert!(summaries(&mut a, 1, inputs).findings.is_empty());
    let out = summaries(
        &mut a,
        8,
        vec![
            ev("t1", "r3", EventKind::NoMoreBets),
            ev("t1", "r2", EventKind::NoMoreBets),
            ev("t1", "r1", EventKind::NoMoreBets),
        ],
    );
    assert_eq!(
        codes_of(&out.findings),
        [
            codes::EVENT_AFTER_SETTLEMENT,
            codes::EVENT_AFTER_SETTLEMENT,
            codes::EVENT_OUTSIDE_ROUND
        ]
    );
    let out = summaries(&mut a, 11, vec![opened("t1", "r1"), opened("t1", "r2")]);
    assert_eq!(codes_of(&out.findings), [codes::ROUND_REOPENED]);
    assert_eq!(out.findings[0].round_id.as_deref(), Some("r2"));
}

/// A device clock drift finding, whole; none when the check is off, and none for an entry the
/// audit has already passed.
#[test]
fn a_device_clock_ahead_is_one_whole_finding() {
    let at = |index: u64, received: i64| EntryMeta {
        index,
        received_at_ms: received,
        signer: "table-9".into(),
    };
    let mut a = Auditor::new(Toy, AuditSettings::default());
    assert!(
        a.device_clock(&at(1, 1_000_000), 1_060_000)
            .findings
            .is_empty(),
        "a minute exactly is within the threshold"
    );
    a.apply(&at(1, 1_000_000), AuditInput::Tick);
    assert!(
        a.device_clock(&at(1, 1_000_000), 9_000_000)
            .findings
            .is_empty(),
        "an entry already applied"
    );
    let out = a.device_clock(&at(2, 1_000_000), 1_060_001);
    let mut want = Finding {
        seq: 0,
        severity: Severity::Low,
        code: codes::DEVICE_CLOCK_DRIFT.to_string(),
        citation: crate::finding::CLOCK_CITATION.to_string(),
        device_id: Some("table-9".into()),
        evidence: vec![2],
        at_ms: 1_000_000,
        message: "table-9's clock is ahead: its event occurred 60001 ms after the ledger received it (threshold 60000 ms)".into(),
        ..Finding::default()
    };
    want.id = out.findings[0].id.clone();
    assert_eq!(out.findings, vec![want]);
    assert_eq!(a.digest().count, 1);

    let mut off = Auditor::new(
        Toy,
        AuditSettings {
            device_clock_drift_ms: 0,
            ..Default::default()
        },
    );
    assert!(
        off.device_clock(&at(1, 1_000_000), 9_000_000)
            .findings
            .is_empty(),
        "0: not checked"
    );
}

/// A device clock behind, whole: both entries of the episode are its evidence.
#[test]
fn a_device_clock_behind_names_where_its_episode_began() {
    let at = |index: u64, received: i64| EntryMeta {
        index,
        received_at_ms: received,
        signer: "dev-2".into(),
    };
    let mut a = Auditor::new(
        Toy,
        AuditSettings {
            device_clock_drift_ms: 1_000,
            ..Default::default()
        },
    );
    let mut found = Vec::new();
    for i in 0..5u64 {
        let received = 100_000 + i as i64 * 600;
        found.extend(
            a.device_clock(&at(i + 1, received), received - 5_000)
                .findings,
        );
    }
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.code, codes::DEVICE_CLOCK_DRIFT);
    assert_eq!(f.evidence.first(), Some(&1));
    assert!(
        f.message.starts_with("dev-2's clock is behind"),
        "{}",
        f.message
    );
}

/// The finding for a table of a game that is not a game of the regulations, whole.
#[test]
fn an_unknown_game_is_one_whole_finding() {
    let mut a = Auditor::new(Toy, AuditSettings::default());
    a.apply(&meta(1), configured("t1", config(100, 3000)));
    let out = a.apply(
        &meta(2),
        AuditInput::UnknownGame {
            table_id: "t1".into(),
            casino_id: "casino-9".into(),
            game: "pachinko".into(),
        },
    );
    let mut want = Finding {
        seq: 0,
        severity: Severity::High,
        code: codes::NO_ENGINE.to_string(),
        citation: crate::finding::RECORD_INTEGRITY.to_string(),
        casino_id: Some("casino-9".into()),
        table_id: Some("t1".into()),
        evidence: vec![2],
        at_ms: meta(2).received_at_ms,
        message: "table t1 is configured for `pachinko`, which is not a game of the regulations: no rule engine".into(),
        ..Finding::default()
    };
    want.id = out.findings[0].id.clone();
    assert_eq!(out.findings, vec![want]);
    assert_eq!(
        a.table_config("t1"),
        None,
        "the table's configuration is gone"
    );
}

/// The ledger's security findings, whole.
#[test]
fn a_security_finding_is_whole() {
    let mut a = Auditor::new(Toy, AuditSettings::default());
    let out = a.apply(
        &meta(4),
        AuditInput::Security {
            code: "SECURITY_EQUIVOCATION".into(),
            device_id: "table-7".into(),
            message: "two different events with sequence 12".into(),
            evidence: vec![4, 2, 2],
        },
    );
    let mut want = Finding {
        severity: Severity::Critical,
        code: "SECURITY_EQUIVOCATION".into(),
        citation: "casino-ledger ingest: one event per device sequence number".into(),
        device_id: Some("table-7".into()),
        evidence: vec![2, 4],
        at_ms: meta(4).received_at_ms,
        message: "two different events with sequence 12".into(),
        ..Finding::default()
    };
    want.id = out.findings[0].id.clone();
    assert_eq!(out.findings, vec![want]);
}

/// A finding made elsewhere joins the audit's sequence and digest.
#[test]
fn an_external_finding_joins_the_sequence_and_the_digest() {
    let mut a = Auditor::new(Toy, AuditSettings::default());
    a.apply(&meta(1), configured("t1", config(100, 0)));
    let f = Finding {
        code: "JP_TRANSFER_TARGET_INVALID".into(),
        citation: "P217/2007 T.III r.6".into(),
        pool_id: Some("pool-1".into()),
        evidence: vec![9, 3],
        ..a.blank(&meta(9))
    };
    let got = a.record_external(f.clone());
    assert_eq!(got.seq, 0);
    assert_eq!(got.evidence, vec![3, 9]);
    assert_eq!(got.pool_id.as_deref(), Some("pool-1"));
    assert!(!got.id.is_empty());
    assert_eq!(a.digest().count, 1);
    assert_eq!(a.record_external(f).seq, 1);
}

/// A table finding carries the table's casino and game from the configuration it names.
#[test]
fn a_refused_configuration_is_one_whole_finding() {
    let mut c = config_for(GameId::RouletteAmerican);
    c.min_bet_cents = Some(0);
    let mut a = Auditor::new(Toy, AuditSettings::default());
    let out = a.apply(&meta(1), configured("t1", c));
    assert_eq!(out.findings.len(), 1);
    let f = &out.findings[0];
    let mut want = Finding {
        severity: Severity::High,
        code: codes::TABLE_CONFIG_REJECTED.to_string(),
        citation: crate::finding::RECORD_INTEGRITY.to_string(),
        casino_id: Some("casino-1".into()),
        table_id: Some("t1".into()),
        game: Some(GameId::RouletteAmerican),
        evidence: vec![1],
        at_ms: meta(1).received_at_ms,
        message: f.message.clone(),
        ..Finding::default()
    };
    want.id = f.id.clone();
    assert_eq!(f, &want);
    assert!(f.message.starts_with("table t1: configuration refused: "));
}

/// A discrepancy finding carries the game of the table's configuration.
#[test]
fn a_wrong_payout_names_the_game() {
    let (_, fs, _) = run(vec![
        configured("t1", config_for(GameId::RouletteAmerican)),
        opened("t1", "r1"),
        ev("t1", "r1", bet("b1", 17, 100)),
        ev("t1", "r1", EventKind::Ball { pocket: 17 }),
        settle("t1", "r1", &[("b1", 100)]),
    ]);
    assert_eq!(codes_of(&fs), ["TOY_WRONG_PAYOUT"]);
    assert_eq!(fs[0].game, Some(GameId::RouletteAmerican));
    assert_eq!(fs[0].citation, "toy r.3");
}

/// A voided round is adjudicated as void: nothing due, no handle, whatever was recorded.
#[test]
fn a_voided_round_is_adjudicated_as_void() {
    let (_, fs, rs) = run(vec![
        configured("t1", config(100, 3000)),
        opened("t1", "r1"),
        ev("t1", "r1", bet("b1", 17, 100)),
        ev("t1", "r1", EventKind::Ball { pocket: 17 }),
        AuditInput::RoundVoided {
            table_id: "t1".into(),
            round_id: "r1".into(),
            reason: "wheel fault".into(),
        },
    ]);
    assert!(fs.is_empty(), "{fs:#?}");
    assert_eq!(rs.len(), 1);
    assert!(rs[0].void);
    assert_eq!(
        (rs[0].bets, rs[0].handle_cents, rs[0].due_player_net_cents),
        (1, 0, 0)
    );
}

/// A table keeps its engine state across configurations of the same game and starts afresh
/// when its game changes (the state before each round is kept to show it).
#[test]
fn a_table_state_survives_a_new_configuration_of_its_game_not_a_new_game() {
    let settings = AuditSettings {
        keep_round_states: true,
        ..Default::default()
    };
    let mut a = Auditor::new(Toy, settings);
    let round = |r: &str| vec![opened("t1", r), settle("t1", r, &[])];
    let mut inputs = vec![configured("t1", config(100, 3000))];
    inputs.extend(round("r1"));
    inputs.push(configured("t1", config(200, 3000)));
    inputs.extend(round("r2"));
    inputs.push(configured("t1", config_for(GameId::RouletteAmerican)));
    inputs.extend(round("r3"));
    let out = summaries(&mut a, 1, inputs);
    let states: Vec<_> = out
        .rounds
        .iter()
        .map(|r| r.state_before.as_deref())
        .collect();
    assert_eq!(states, [Some("0"), Some("1"), Some("0")]);
}

/// The audit flags a bet after the outcome only where no "no more bets" was called (the engines
/// flag the others), and knows each game's outcome: the ball at roulette, the dice at cussec.
#[test]
fn a_bet_after_the_outcome_is_the_audits_only_without_a_call() {
    let play = |game: GameId, call: bool, outcome: EventKind| {
        let mut inputs = vec![configured("t1", config_for(game)), opened("t1", "r1")];
        if call {
            inputs.push(ev("t1", "r1", EventKind::NoMoreBets));
        }
        inputs.push(ev("t1", "r1", outcome));
        inputs.push(ev("t1", "r1", bet("b1", 3, 100)));
        let (_, fs, _) = run(inputs);
        codes_of(&fs)
            .into_iter()
            .filter(|c| c.starts_with("AUDIT_"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let ball = || EventKind::Ball { pocket: 3 };
    let dice = || EventKind::Dice {
        dice: vec![1, 2, 3],
        chosen_from: None,
    };
    assert_eq!(
        play(GameId::RouletteFrench, false, ball()),
        [codes::BET_AFTER_OUTCOME]
    );
    assert_eq!(
        play(GameId::RouletteAmerican, false, ball()),
        [codes::BET_AFTER_OUTCOME]
    );
    assert!(play(GameId::RouletteFrench, true, ball()).is_empty());
    assert_eq!(
        play(GameId::Cussec, false, dice()),
        [codes::BET_AFTER_OUTCOME]
    );
    assert!(
        play(GameId::Cussec, false, ball()).is_empty(),
        "a ball is no cussec outcome"
    );
    assert!(
        play(GameId::RouletteFrench, false, dice()).is_empty(),
        "dice are no roulette outcome"
    );
}

/// An engine's violation and discrepancy become whole findings: the engine's code, severity,
/// confidence and citation, the bet, the evidence (this entry and the bet's placement) and a
/// message naming the amounts; the round summary counts them.
#[test]
fn an_engines_violation_and_discrepancy_are_whole_findings() {
    let (_, fs, rs) = run(vec![
        configured("t1", config(100, 3000)),               // 1
        opened("t1", "r1"),                                // 2
        ev("t1", "r1", bet("b0", 5, 100)),                 // 3
        ev("t1", "r1", EventKind::NoMoreBets),             // 4
        ev("t1", "r1", bet("b1", 17, 100)),                // 5: late
        ev("t1", "r1", EventKind::Ball { pocket: 17 }),    // 6
        settle("t1", "r1", &[("b0", -100), ("b1", 3000)]), // 7
    ]);
    let base = Finding {
        casino_id: Some("casino-1".into()),
        table_id: Some("t1".into()),
        game: Some(GameId::RouletteFrench),
        round_id: Some("r1".into()),
        bet_id: Some("b1".into()),
        at_ms: meta(7).received_at_ms,
        ..Finding::default()
    };
    let mut late = Finding {
        seq: 0,
        severity: Severity::Medium,
        confidence: Confidence::Review,
        code: "TOY_LATE_BET".into(),
        citation: "toy r.2".into(),
        evidence: vec![5, 7],
        message: "late".into(),
        ..base.clone()
    };
    let mut wrong = Finding {
        seq: 1,
        severity: Severity::High,
        confidence: Confidence::Review,
        code: "TOY_WRONG_PAYOUT".into(),
        citation: "toy r.3".into(),
        due_cents: Some(3500),
        reported_cents: Some(3000),
        evidence: vec![5, 7],
        message: "bet b1 in round r1 at table t1: 3500 cents due, 3000 cents reported".into(),
        ..base
    };
    assert_eq!(fs.len(), 2, "{fs:#?}");
    late.id = fs[0].id.clone();
    wrong.id = fs[1].id.clone();
    assert_eq!(fs, vec![late, wrong]);
    assert_eq!(rs[0].findings, 2);
    assert_eq!(rs[0].bets, 2);
    assert_eq!(rs[0].discrepancies, 1);
}

/// A round with one violation and no discrepancy counts one finding.
#[test]
fn a_round_summary_counts_violations_without_discrepancies() {
    let (_, fs, rs) = run(vec![
        configured("t1", config(100, 3000)),
        opened("t1", "r1"),
        ev("t1", "r1", EventKind::NoMoreBets),
        ev("t1", "r1", bet("b1", 17, 100)),
        ev("t1", "r1", EventKind::Ball { pocket: 2 }),
        settle("t1", "r1", &[("b1", -100)]),
    ]);
    assert_eq!(codes_of(&fs), ["TOY_LATE_BET"]);
    assert_eq!((rs[0].findings, rs[0].discrepancies), (1, 0));
}

/// Restored from a snapshot, a refused configuration stays refused (it is not compiled), and a
/// round opened under a configuration later given again keeps the first one's index.
#[test]
fn a_snapshot_keeps_refused_configurations_and_each_rounds_configuration() {
    let mut refused = config(100, 3000);
    refused.min_bet_cents = None;
    let mut a = Auditor::new(Toy, AuditSettings::default());
    summaries(
        &mut a,
        1,
        vec![
            configured("t1", config(100, 3000)), // 1
            opened("t1", "r1"),                  // 2
            configured("t1", config(100, 3000)), // 3: the same, again
            configured("t2", refused),           // 4
        ],
    );
    let json = serde_json::to_string(&a.snapshot()).unwrap();
    let mut a = Auditor::restore(Toy, serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(a.table_config("t2"), None);
    let out = summaries(
        &mut a,
        5,
        vec![
            opened("t2", "r1"),
            ev("t1", "r1", EventKind::Ball { pocket: 2 }),
            settle("t1", "r1", &[]),
            opened("t1", "r2"),
            settle("t1", "r2", &[]),
        ],
    );
    assert_eq!(codes_of(&out.findings), [codes::TABLE_NOT_CONFIGURED]);
    assert_eq!(out.findings[0].evidence, vec![4, 5]);
    assert!(out.findings[0].message.contains("was refused"));
    let indexes: Vec<_> = out.rounds.iter().map(|r| r.config_index).collect();
    assert_eq!(indexes, [1, 3]);
}

/// A snapshot is a file and may say anything: two tables whose configurations claim the same
/// ledger index each get their own configuration back, not the other's compiled one.
#[test]
fn a_restored_table_gets_its_own_configuration_even_under_a_shared_index() {
    let mut c2 = config(100, 3000);
    c2.casino_id = Some("casino-2".into());
    let mut a = Auditor::new(Toy, AuditSettings::default());
    summaries(
        &mut a,
        1,
        vec![configured("t1", config(100, 3000)), configured("t2", c2)],
    );
    let mut snap = serde_json::to_value(a.snapshot()).unwrap();
    snap["tables"]["t2"]["config_index"] = 1.into();
    let mut a = Auditor::restore(Toy, serde_json::from_value(snap).unwrap()).unwrap();
    let out = summaries(&mut a, 3, vec![opened("t2", "r1"), settle("t2", "r1", &[])]);
    assert_eq!(out.rounds.len(), 1);
    assert_eq!(out.rounds[0].casino_id.as_deref(), Some("casino-2"));
}
