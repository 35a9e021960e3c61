//! One test per rule (named after its citation), the digest's worked examples, and every
//! violation code of dice.md sections 1.7, 2.7 and 3.4.
mod common;
use common::*;
use rules_core::*;
use rules_dice::{DiceEngine, DiceState};

// ---- Worked examples (dice.md section 5) ----

/// Example 1: P217/2007 T.I C.II S.I r.9, r.13.
#[test]
fn example_1_banca_2_2_2() {
    let a = run(
        &banca(),
        vec![
            bet("s", "small", &[], 5000),
            bet("a", "aces", &[], 1000),
            bet("b", "big", &[], 2000),
            dice(&[2, 2, 2]),
        ],
    );
    assert_eq!(
        (net(&a, "s"), net(&a, "a"), net(&a, "b")),
        (5000, -1000, -2000)
    );
    assert!(a.violations.is_empty());
}

/// Example 2: P217/2007 T.I C.II S.I r.10(a), r.11.
#[test]
fn example_2_banca_line_bet() {
    let mut t = table(GameId::BancaFrancesa, &[]);
    t.min_bet_cents = Some(500);
    t.max_bet_cents = Some(100_000);
    t.limits = vec![ChanceLimit {
        chance: "aces".into(),
        min_cents: Some(500),
        max_cents: Some(3000),
    }];
    let c = DiceEngine::configure(&t).unwrap();
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    let a = run(
        &c.config,
        vec![bet("l", "small_line", &[], 4500), dice(&[6, 5, 3])],
    );
    assert_eq!(net(&a, "l"), -2000);
    assert_eq!(a.bet("l").unwrap().stake_cents, 2000);
    assert_eq!(a.violations.len(), 1);
    assert_eq!(a.violations[0].code, "BF_LINE_BET_NOT_MULTIPLE_10");
}

/// Example 3: P217/2007 T.I C.II S.II r.10.1, r.11.1.
#[test]
fn example_3_craps_pass_and_odds() {
    let c = craps();
    let mut st = DiceState::default();
    let a = run_st(
        &c,
        &mut st,
        vec![bet("p", "pass_line", &[], 1000), dice(&[5, 3])],
    );
    assert_eq!(outcome(&a, "p"), Outcome::Open);
    let a = run_st(
        &c,
        &mut st,
        vec![odds("o", "p", 1000), dice(&[2, 2]), dice(&[5, 3])],
    );
    assert_eq!(net(&a, "p"), 1000);
    assert_eq!(net(&a, "o"), 1200);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(a.bets[0].bet_id.as_ref(), "p", "carried bets first");
}

/// Example 4: P217/2007 T.I C.II S.II r.12.
#[test]
fn example_4_place_to_lose_4() {
    let c = cfg(&table(
        GameId::Craps,
        &[
            ("bar", Setting::Int(12)),
            ("dont_odds_payout", Setting::Text("lay".into())),
            ("place_to_lose_min", Setting::Int(100)),
        ],
    ));
    let a = run(
        &c,
        vec![bet("p", "place_to_lose", &[4], 1100), dice(&[3, 4])],
    );
    assert_eq!(net(&a, "p"), 500);
    assert!(a.violations.is_empty());
}

/// Example 5: P217/2007 T.I C.II S.III r.8, r.9.
#[test]
fn example_5_cussec_3_3_3() {
    let a = run(
        &cussec(),
        vec![
            levers(),
            bet("s", "small", &[], 1000),
            bet("o", "single", &[3], 1000),
            bet("d", "double", &[3], 1000),
            bet("t", "triple", &[3], 500),
            bet("a", "any_triple", &[], 1000),
            bet("n", "total", &[9], 1000),
            nmb(),
            dice(&[3, 3, 3]),
        ],
    );
    for (id, n) in [
        ("s", -1000),
        ("o", 3000),
        ("d", 30000),
        ("t", 95000),
        ("a", 32000),
        ("n", 7000),
    ] {
        assert_eq!(net(&a, id), n, "{id}");
    }
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

// ---- Banca francesa ----

/// P217/2007 T.I C.II S.I r.9, note B1: other totals decide nothing; bets carry over.
#[test]
fn bf_r9_undecided_totals_carry() {
    let c = banca();
    let mut st = DiceState::default();
    let a = run_st(
        &c,
        &mut st,
        vec![
            bet("s", "small", &[], 1000),
            bet("x", "aces", &[], 100),
            dice(&[4, 4, 2]),
        ],
    );
    assert_eq!(outcome(&a, "s"), Outcome::Open);
    let a = run_st(&c, &mut st, vec![dice(&[1, 1, 1])]);
    assert_eq!(net(&a, "s"), -1000);
    assert_eq!(net(&a, "x"), 6100);
    assert_eq!(st, DiceState::BancaFrancesa(Default::default()));
}

/// P217/2007 T.I C.II S.I r.7(d), note B4: winners paid, no other chance loses.
#[test]
fn bf_r7d_dice_touched() {
    let a = run(
        &banca(),
        vec![
            bet("s", "small", &[], 1000),
            bet("b", "big", &[], 1000),
            dice(&[1, 2, 3]),
            EventKind::Fault {
                code: "dice_touched_before_announce".into(),
                seat: None,
                detail: None,
            }
            .into(),
        ],
    );
    assert_eq!(net(&a, "s"), 1000);
    assert_eq!(net(&a, "b"), 0);
    assert!(a.has_violation("BF_DICE_TOUCHED_BEFORE_ANNOUNCE"));
}

/// P217/2007 T.I C.II S.I r.8: a void recorded after the next throw voids that throw, not the
/// earlier one, which stands.
#[test]
fn bf_r8_a_void_concerns_the_throw_before_it_only() {
    let a = run(
        &banca(),
        vec![
            bet("s", "small", &[], 1000),
            dice(&[1, 2, 3]),
            bet("t", "small", &[], 1000),
            dice(&[2, 2, 2]),
            void("die_off_table"),
        ],
    );
    assert_eq!(net(&a, "s"), 1000, "the first throw stands");
    assert_eq!(net(&a, "t"), 0, "the voided throw decides nothing");
    // Two throws in a row, then the void: the second is void, the first decided.
    let a = run(
        &banca(),
        vec![
            bet("s", "small", &[], 1000),
            dice(&[1, 2, 3]),
            dice(&[2, 2, 2]),
            void("die_off_table"),
        ],
    );
    assert_eq!(net(&a, "s"), 1000, "the first throw stands");
}

/// P217/2007 T.I C.II S.I r.8, r.7(b): void throws decide nothing; settling them is flagged.
#[test]
fn bf_r8_void_throw() {
    let r = settled(
        vec![
            bet("s", "small", &[], 1000),
            dice(&[1, 2, 3]),
            void("foreign_object"),
        ],
        &[("s", 1000)],
    );
    let a = DiceEngine::adjudicate(&banca(), &mut DiceState::default(), &r, &Options::default())
        .unwrap();
    assert_eq!(outcome(&a, "s"), Outcome::Open);
    assert!(a.has_violation("BF_VOID_THROW_SETTLED"));
    // One breach, one finding (issue 38; rules-core): no BF_WRONG_PAYOUT for the same bet.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
}

/// P217/2007 T.I C.II S.I r.8(c)(d): a void for a throw that showed no dice (a die left in the
/// cup), recorded after an earlier throw of the round was decided and settled, voids only that
/// throw, never the decided one before it. (Regression: the void was attached to the last
/// recorded dice, turning the paid small bet into a loss.)
#[test]
fn bf_r8_void_without_dice_after_a_decided_throw() {
    let r = settled(
        vec![
            bet("s", "small", &[], 1000),
            dice(&[2, 2, 1]),
            EventKind::Pay {
                bet_id: "s".into(),
                amount_cents: 1000,
            }
            .into(),
            bet("b", "big", &[], 1000),
            nmb(),
            void("die_in_cup"),
            dice(&[6, 5, 4]),
        ],
        &[("s", 1000), ("b", 1000)],
    );
    let a = DiceEngine::adjudicate(&banca(), &mut DiceState::default(), &r, &Options::default())
        .unwrap();
    assert_eq!((outcome(&a, "s"), net(&a, "s")), (Outcome::Won, 1000));
    assert_eq!((outcome(&a, "b"), net(&a, "b")), (Outcome::Won, 1000));
    assert!(
        a.violations.is_empty() && a.discrepancies.is_empty(),
        "{a:?}"
    );
    // Right after its dice, the void still voids the throw.
    let a = run(
        &banca(),
        vec![
            bet("s", "small", &[], 1000),
            dice(&[2, 2, 1]),
            void("not_flat"),
        ],
    );
    assert_eq!(outcome(&a, "s"), Outcome::Open);
}

/// P217/2007 T.I C.II S.I r.8(b): the set is replaced at once.
#[test]
fn bf_r8b_set_replaced() {
    let c = banca();
    let a = run(
        &c,
        vec![
            proc_("dice_set", Some("A")),
            bet("s", "small", &[], 1000),
            dice(&[1, 2, 3]),
            void("die_off_table"),
            dice(&[1, 2, 3]),
        ],
    );
    assert!(a.has_violation("BF_DICE_SET_NOT_REPLACED"));
    let a = run(
        &c,
        vec![
            proc_("dice_set", Some("A")),
            bet("s", "small", &[], 1000),
            dice(&[1, 2, 3]),
            void("die_off_table"),
            proc_("dice_set", Some("B")),
            dice(&[1, 2, 3]),
        ],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "s"), 1000);
}

/// P217/2007 T.I C.II S.I r.4 and r.18: sets rotated hourly, thrower at most an hour.
#[test]
fn bf_r4_r18_hourly() {
    let c = banca();
    let mut st = DiceState::default();
    let role = EventKind::Role {
        role: "thrower".into(),
        seat: None,
        player: Some("t1".into()),
    };
    run_st(
        &c,
        &mut st,
        vec![
            RoundEvent::at(0, role),
            RoundEvent::at(
                0,
                EventKind::Procedure {
                    name: "dice_set".into(),
                    value: Some("A".into()),
                    seat: None,
                    amount_cents: None,
                },
            ),
            bet("s", "small", &[], 100),
            RoundEvent::at(
                1,
                EventKind::Dice {
                    dice: vec![1, 2, 3],
                    chosen_from: None,
                },
            ),
        ],
    );
    let a = run_st(
        &c,
        &mut st,
        vec![
            bet("s2", "small", &[], 100),
            RoundEvent::at(
                3_600_001,
                EventKind::Dice {
                    dice: vec![1, 2, 3],
                    chosen_from: None,
                },
            ),
        ],
    );
    assert!(a.has_violation("BF_DICE_SET_NOT_ROTATED"));
    assert!(a.has_violation("BF_THROWER_OVER_ONE_HOUR"));
}

/// P217/2007 T.I C.II S.I r.4, r.18: one hour exactly is still within the hour.
#[test]
fn bf_r4_r18_one_hour_exactly_is_allowed() {
    let c = banca();
    let mut st = DiceState::default();
    let throw = |at: i64| {
        RoundEvent::at(
            at,
            EventKind::Dice {
                dice: vec![1, 2, 3],
                chosen_from: None,
            },
        )
    };
    let role = EventKind::Role {
        role: "thrower".into(),
        seat: None,
        player: Some("t1".into()),
    };
    let set = EventKind::Procedure {
        name: "dice_set".into(),
        value: Some("A".into()),
        seat: None,
        amount_cents: None,
    };
    run_st(
        &c,
        &mut st,
        vec![
            RoundEvent::at(0, role),
            RoundEvent::at(0, set),
            bet("s", "small", &[], 100),
            throw(1),
        ],
    );
    let a = run_st(
        &c,
        &mut st,
        vec![bet("s2", "small", &[], 100), throw(3_600_000)],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.I C.II S.I r.18: a thrower is named by player or, failing that, by seat.
#[test]
fn bf_r18_a_thrower_by_seat() {
    let thrower = |seat: Option<u8>| -> RoundEvent {
        EventKind::Role {
            role: "thrower".into(),
            seat,
            player: None,
        }
        .into()
    };
    let round_with = |e: RoundEvent| {
        DiceEngine::adjudicate(
            &banca(),
            &mut DiceState::default(),
            &round(vec![e, bet("s", "small", &[], 100), dice(&[1, 2, 3])]),
            &Options::default(),
        )
    };
    assert_eq!(net(&round_with(thrower(Some(3))).unwrap(), "s"), 100);
    let e = round_with(thrower(None)).unwrap_err().to_string();
    assert!(e.contains("thrower role without player or seat"), "{e}");
}

/// P217/2007 T.I C.II S.I r.11: a line bet of exactly twice the maximum is in range.
#[test]
fn bf_r11_line_bet_at_twice_the_maximum() {
    let mut t = table(GameId::BancaFrancesa, &[]);
    t.min_bet_cents = Some(500);
    t.max_bet_cents = Some(100_000);
    let c = DiceEngine::configure(&t).unwrap().config;
    let line = |amount: i64| {
        run(
            &c,
            vec![bet("l", "small_line", &[], amount), dice(&[1, 2, 3])],
        )
    };
    assert!(!line(200_000).has_violation("BF_LINE_BET_OUT_OF_RANGE"));
    assert!(line(201_000).has_violation("BF_LINE_BET_OUT_OF_RANGE"));
}

/// P217/2007 T.I C.II S.I r.9, r.10, r.11, r.13: each winning chance with its own reason and
/// paragraph; a line bet is paid as a line bet.
#[test]
fn bf_r13_each_win_with_its_reason() {
    let reason = |a: &Adjudication, id: &str| {
        let b = a.bet(id).unwrap();
        (b.reason.to_string(), b.citation.to_string())
    };
    let r = |s: &str, c: &str| (s.to_string(), c.to_string());
    let a = run(
        &banca(),
        vec![
            bet("s", "small", &[], 1000),
            bet("l", "small_line", &[], 2000),
            dice(&[1, 2, 3]),
        ],
    );
    assert_eq!(
        reason(&a, "s"),
        r(
            "small (5, 6, 7) won at even money",
            "P217/2007 T.I C.II S.I r.9(b), r.13(b)"
        )
    );
    assert_eq!(
        reason(&a, "l"),
        r(
            "small line won at even money on half the in-play value",
            "P217/2007 T.I C.II S.I r.10(a), r.11, r.13(b)"
        )
    );
    let a = run(
        &banca(),
        vec![
            bet("b", "big", &[], 1000),
            bet("l", "big_line", &[], 2000),
            dice(&[6, 5, 4]),
        ],
    );
    assert!(
        reason(&a, "b").0.starts_with("big (14, 15, 16) won"),
        "{:?}",
        reason(&a, "b")
    );
    assert_eq!(
        reason(&a, "l"),
        r(
            "big line won at even money on half the in-play value",
            "P217/2007 T.I C.II S.I r.10(b), r.11, r.13(c)"
        )
    );
    assert_eq!((net(&a, "b"), net(&a, "l")), (1000, 1000));
}

/// P217/2007 T.I C.II S.I r.11: line bet range.
#[test]
fn bf_r11_line_range() {
    let mut t = table(GameId::BancaFrancesa, &[]);
    t.min_bet_cents = Some(500);
    t.max_bet_cents = Some(2000);
    let c = cfg(&t);
    let a = run(&c, vec![bet("l", "big_line", &[], 5000), dice(&[6, 5, 3])]);
    assert!(a.has_violation("BF_LINE_BET_OUT_OF_RANGE"));
    assert_eq!(net(&a, "l"), 2500);
}

/// P217/2007 T.I C.II S.I r.17: limits and their proportions.
#[test]
fn bf_r17_limits() {
    let mut t = table(GameId::BancaFrancesa, &[]);
    t.min_bet_cents = Some(500);
    t.max_bet_cents = Some(100_000);
    let c = DiceEngine::configure(&t).unwrap();
    assert_eq!(c.violations.len(), 1, "aces 6x: {:?}", c.violations);
    assert_eq!(c.violations[0].code, "BF_LIMIT_RATIO");
    let a = run(
        &c.config,
        vec![
            bet("a", "aces", &[], 100),
            bet("b", "big", &[], 200_000),
            dice(&[1, 2, 3]),
        ],
    );
    assert!(a.has_violation("BF_BET_BELOW_MIN"));
    assert!(a.has_violation("BF_BET_ABOVE_MAX"));
}

/// P217/2007 T.I C.II S.I r.12, r.15: collect from the aces first, then pay.
#[test]
fn bf_r12_r15_collection() {
    let col = |ids: &[&str]| -> RoundEvent {
        EventKind::Collect {
            bet_ids: ids.iter().map(|s| (*s).into()).collect(),
        }
        .into()
    };
    let pay = |id: &str| -> RoundEvent {
        EventKind::Pay {
            bet_id: id.into(),
            amount_cents: 0,
        }
        .into()
    };
    let base = || {
        vec![
            bet("a", "aces", &[], 100),
            bet("b", "big", &[], 100),
            bet("s", "small", &[], 100),
            dice(&[1, 2, 3]),
        ]
    };
    let mut ok = base();
    ok.extend([col(&["a", "b"]), pay("s")]);
    assert!(run(&banca(), ok).violations.is_empty());
    let mut bad = base();
    bad.extend([pay("s"), col(&["b", "a"])]);
    let a = run(&banca(), bad);
    assert!(a.has_violation("BF_COLLECTION_NOT_FROM_ACES"));
    assert!(a.has_violation("BF_PAID_BEFORE_COLLECTING"));
}

/// P217/2007 T.I C.II S.I r.17(a), (b): each chance's maximum against its own factor (aces 6 ×
/// the minimum, small and big 200 ×), at the bound and one past it, with the paragraph cited.
#[test]
fn bf_r17_limit_ratio_per_chance() {
    let ratio = |chance: &str, min: i64, max: i64| {
        let mut t = table(GameId::BancaFrancesa, &[]);
        t.limits = vec![ChanceLimit {
            chance: chance.into(),
            min_cents: Some(min),
            max_cents: Some(max),
        }];
        DiceEngine::configure(&t)
            .unwrap()
            .violations
            .into_iter()
            .map(|v| (v.code.to_string(), v.citation.to_string()))
            .collect::<Vec<_>>()
    };
    let breach = |paragraph: &str| {
        vec![(
            "BF_LIMIT_RATIO".to_string(),
            format!("P217/2007 T.I C.II S.I r.17({paragraph})"),
        )]
    };
    assert!(ratio("aces", 500, 3000).is_empty());
    assert_eq!(ratio("aces", 500, 3001), breach("a"));
    for chance in ["small", "big"] {
        assert!(ratio(chance, 500, 100_000).is_empty(), "{chance}");
        assert_eq!(ratio(chance, 500, 100_001), breach("b"), "{chance}");
    }
}

/// A bet changed before its decision is decided on its new amount (a line bet on half of it,
/// r.11); a bet withdrawn is not decided at all; a change or withdrawal of a bet that is not
/// open is an error naming it.
#[test]
fn bf_bets_changed_and_withdrawn_before_the_throw() {
    let changed = |id: &str, amount: i64| -> RoundEvent {
        EventKind::BetChanged {
            bet_id: id.into(),
            amount_cents: amount,
        }
        .into()
    };
    let withdrawn =
        |id: &str| -> RoundEvent { EventKind::BetWithdrawn { bet_id: id.into() }.into() };
    let a = run(
        &banca(),
        vec![
            bet("s", "small", &[], 5000),
            bet("b", "big", &[], 2000),
            bet("l", "small_line", &[], 4000),
            bet("w", "small", &[], 3000),
            changed("s", 7000),
            changed("b", 1000),
            changed("l", 6000),
            withdrawn("w"),
            dice(&[1, 2, 3]),
        ],
    );
    assert_eq!(
        (net(&a, "s"), net(&a, "b"), net(&a, "l"), net(&a, "w")),
        (7000, -1000, 3000, 0)
    );
    assert_eq!(a.bet("s").unwrap().stake_cents, 7000);
    assert_eq!(a.bet("l").unwrap().stake_cents, 3000);
    assert_eq!(outcome(&a, "w"), Outcome::Withdrawn);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // After its decision a bet can no longer be changed or withdrawn.
    let late = |e: RoundEvent| {
        DiceEngine::adjudicate(
            &banca(),
            &mut DiceState::default(),
            &round(vec![bet("s", "small", &[], 5000), dice(&[1, 2, 3]), e]),
            &Options::default(),
        )
        .unwrap_err()
        .to_string()
    };
    assert!(late(changed("s", 100)).contains("bet_changed names unknown or decided bet `s`"));
    assert!(late(withdrawn("s")).contains("bet_withdrawn names unknown or decided bet `s`"));
}

#[test]
fn bf_illegal_bet() {
    let a = run(
        &banca(),
        vec![bet("x", "total_9", &[], 100), dice(&[1, 2, 3])],
    );
    assert!(a.has_violation("BF_ILLEGAL_BET"));
    assert_eq!(net(&a, "x"), 0);
}

// ---- Craps ----

/// P217/2007 T.I C.II S.II r.10.2: don't pass, the bar, and note C3.
#[test]
fn cr_r10_2_dont_pass_bar() {
    let a = run(
        &craps(),
        vec![
            bet("d", "dont_pass", &[], 1000),
            bet("p", "pass_line", &[], 1000),
            dice(&[6, 6]),
        ],
    );
    assert_eq!(outcome(&a, "d"), Outcome::Push);
    assert_eq!(net(&a, "p"), -1000);
    let bar2 = cfg(&table(GameId::Craps, &[("bar", Setting::Int(2))]));
    let a = run(&bar2, vec![bet("d", "dont_pass", &[], 1000), dice(&[6, 6])]);
    assert_eq!(net(&a, "d"), 1000);
    let a = run(&bar2, vec![bet("d", "dont_pass", &[], 1000), dice(&[1, 1])]);
    assert_eq!(net(&a, "d"), 0);
}

/// P217/2007 T.I C.II S.II r.10.3, r.10.4: come bets move and are decided on their number.
#[test]
fn cr_r10_3_come_moves() {
    let c = craps();
    let mut st = DiceState::default();
    run_st(
        &c,
        &mut st,
        vec![bet("p", "pass_line", &[], 1000), dice(&[2, 2])],
    );
    let a = run_st(
        &c,
        &mut st,
        vec![
            bet("c", "come", &[], 1000),
            bet("dc", "dont_come", &[], 1000),
            dice(&[5, 5]),
            odds("oc", "c", 1000),
            dice(&[4, 6]),
        ],
    );
    assert_eq!(net(&a, "c"), 1000);
    assert_eq!(net(&a, "oc"), 2000);
    assert_eq!(net(&a, "dc"), -1000);
    assert_eq!(outcome(&a, "p"), Outcome::Open);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // seven-out: pass loses
    let a = run_st(&c, &mut st, vec![dice(&[3, 4])]);
    assert_eq!(net(&a, "p"), -1000);
    let DiceState::Craps(s) = &st else { panic!() };
    assert!(s.open_bets.is_empty() && s.point.is_none());
}

/// P217/2007 T.I C.II S.II r.10.5-r.10.8, r.11.2-r.11.8, r.13.1: one-throw and number bets.
#[test]
fn cr_r11_multiple_chances() {
    let c = craps();
    let a = run(
        &c,
        vec![
            bet("f", "field", &[], 100),
            bet("ac", "any_craps", &[], 100),
            bet("t12", "total_12", &[], 100),
            bet("h6", "hard_6", &[], 100),
            bet("u", "under_7", &[], 100),
            bet("o", "over_7", &[], 100),
            bet("s", "any_seven", &[], 100),
            dice(&[6, 6]),
        ],
    );
    for (id, n) in [
        ("f", 200),
        ("ac", 700),
        ("t12", 3000),
        ("u", -100),
        ("o", 100),
        ("s", -100),
    ] {
        assert_eq!(net(&a, id), n, "{id}");
    }
    assert_eq!(outcome(&a, "h6"), Outcome::Open);
    let a = run(
        &c,
        vec![
            bet("h6", "hard_6", &[], 100),
            bet("h8", "hard_8", &[], 100),
            bet("b6", "big_6", &[], 100),
            bet("pl", "place", &[6], 600),
            dice(&[3, 3]),
        ],
    );
    assert_eq!(
        (net(&a, "h6"), net(&a, "b6"), net(&a, "pl")),
        (900, 100, 700)
    );
    assert_eq!(outcome(&a, "h8"), Outcome::Open);
    let a = run(
        &c,
        vec![
            bet("h4", "hard_4", &[], 100),
            bet("t3", "total_3", &[], 100),
            dice(&[1, 3]),
        ],
    );
    assert_eq!((net(&a, "h4"), net(&a, "t3")), (-100, -100));
}

/// P217/2007 T.I C.II S.II r.11.1: odds rules.
#[test]
fn cr_r11_1_odds_checks() {
    let c = craps();
    let mut st = DiceState::default();
    let a = run_st(
        &c,
        &mut st,
        vec![
            bet("p", "pass_line", &[], 1000),
            odds("o", "p", 500),
            dice(&[4, 1]),
        ],
    );
    assert!(a.has_violation("CR_ODDS_WITHOUT_BASE"));
    let a = run_st(&c, &mut st, vec![odds("o2", "p", 1000), dice(&[2, 3])]);
    assert!(a.has_violation("CR_ODDS_OVER_FLAT"));
    assert_eq!(net(&a, "o"), 750);
    assert_eq!(net(&a, "o2"), 1500);
    let a = run(
        &c,
        vec![
            EventKind::Bet(Bet::new("x", "odds", 100)).into(),
            dice(&[1, 2]),
        ],
    );
    assert!(a.has_violation("CR_ODDS_WITHOUT_BASE"));
    let e = DiceEngine::adjudicate(
        &c,
        &mut DiceState::default(),
        &round(vec![odds("x", "nope", 100)]),
        &Options::default(),
    );
    assert!(e.is_err());
    // legal maximum payment (note C8)
    let cm = cfg(&table(
        GameId::Craps,
        &[
            ("bar", Setting::Int(12)),
            ("odds_max_payout_cents", Setting::Int(1000)),
        ],
    ));
    let mut st = DiceState::default();
    run_st(
        &cm,
        &mut st,
        vec![bet("p", "pass_line", &[], 1000), dice(&[2, 2])],
    );
    let a = run_st(&cm, &mut st, vec![odds("o", "p", 1000), dice(&[1, 3])]);
    assert!(a.has_violation("CR_ODDS_OVER_LEGAL_MAX"));
}

/// Note C1: don't-side odds per the set-up.
#[test]
fn c1_dont_odds_setting() {
    let literal =
        DiceEngine::configure(&table(GameId::Craps, &[("bar", Setting::Int(12))])).unwrap();
    assert_eq!(literal.violations[0].code, "CR_DONT_ODDS_PAYOUT");
    for (c, want) in [(literal.config, 2000), (craps(), 500)] {
        let mut st = DiceState::default();
        run_st(
            &c,
            &mut st,
            vec![bet("d", "dont_pass", &[], 1000), dice(&[2, 2])],
        );
        let a = run_st(&c, &mut st, vec![odds("o", "d", 1000), dice(&[3, 4])]);
        assert_eq!(net(&a, "d"), 1000);
        assert_eq!(net(&a, "o"), want);
    }
}

/// P217/2007 T.I C.II S.II r.10.3, r.10.4: come only after the point.
#[test]
fn cr_come_before_point() {
    let a = run(&craps(), vec![bet("c", "come", &[], 100), dice(&[5, 6])]);
    assert!(a.has_violation("CR_COME_BEFORE_POINT"));
    assert_eq!(net(&a, "c"), 100);
}

/// P217/2007 T.I C.II S.II r.10.9: line bets fixed after the come-out.
#[test]
fn cr_r10_9_line_bet_withdrawn() {
    let c = craps();
    let mut st = DiceState::default();
    run_st(
        &c,
        &mut st,
        vec![bet("p", "pass_line", &[], 1000), dice(&[2, 2])],
    );
    let a = run_st(
        &c,
        &mut st,
        vec![EventKind::BetWithdrawn { bet_id: "p".into() }.into()],
    );
    assert!(a.has_violation("CR_LINE_BET_WITHDRAWN"));
    assert_eq!(outcome(&a, "p"), Outcome::Withdrawn);
    // before the come-out a pass bet may be withdrawn
    let a = run(
        &c,
        vec![
            bet("p", "pass_line", &[], 1000),
            EventKind::BetWithdrawn { bet_id: "p".into() }.into(),
        ],
    );
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.II S.II r.12: multiples of the minimum.
#[test]
fn cr_r12_place_multiple() {
    let c = cfg(&table(
        GameId::Craps,
        &[
            ("bar", Setting::Int(12)),
            ("dont_odds_payout", Setting::Text("lay".into())),
            (
                "place_min",
                Setting::List(vec![500, 500, 600, 600, 500, 500]),
            ),
        ],
    ));
    let a = run(&c, vec![bet("p", "place", &[6], 700), dice(&[3, 3])]);
    assert!(a.has_violation("CR_PLACE_NOT_MULTIPLE_OF_MIN"));
    assert_eq!(net(&a, "p"), 816, "7 to 6 rounded down");
}

fn shooter(p: &str) -> RoundEvent {
    EventKind::Role {
        role: "shooter".into(),
        seat: None,
        player: Some(p.into()),
    }
    .into()
}

/// P217/2007 T.I C.II S.II r.5, r.8: shooters.
#[test]
fn cr_r8_shooters() {
    let c = craps();
    let mut st = DiceState::default();
    let pb = |id: &str, p: &str| -> RoundEvent {
        EventKind::Bet(Bet::new(id, "pass_line", 1000).player(p)).into()
    };
    let a = run_st(
        &c,
        &mut st,
        vec![shooter("A"), pb("a1", "A"), dice(&[2, 2]), dice(&[3, 4])],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run_st(&c, &mut st, vec![pb("a2", "A"), dice(&[2, 2])]);
    assert!(a.has_violation("CR_SHOOTER_NOT_CHANGED"));
    let a = run_st(&c, &mut st, vec![shooter("B"), dice(&[3, 4])]);
    assert!(a.has_violation("CR_SHOOTER_WITHOUT_BET"));
    assert!(!a.has_violation("CR_SHOOTER_NOT_CHANGED"));
}

/// P217/2007 T.I C.II S.II r.8(b) ("Os dados mudam de mão [...] Quando saia o total 7 que faça
/// perder as apostas existentes no pass-line"): handing the dice back to the shooter who
/// sevened out is the breach, flagged at the handover (the role event), even if he never throws
/// again; and once only, not again at his next throw.
#[test]
fn cr_r8b_handover_to_same_shooter() {
    let c = craps();
    let mut st = DiceState::default();
    let pb = |id: &str, p: &str| -> RoundEvent {
        EventKind::Bet(Bet::new(id, "pass_line", 1000).player(p)).into()
    };
    let a = run_st(
        &c,
        &mut st,
        vec![shooter("A"), pb("a1", "A"), dice(&[2, 2]), dice(&[3, 4])],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // The dice handed back to A; no throw in this round.
    let a = run_st(&c, &mut st, vec![shooter("A"), pb("a2", "A")]);
    let v: Vec<_> = a
        .violations
        .iter()
        .filter(|v| v.code == "CR_SHOOTER_NOT_CHANGED")
        .collect();
    assert_eq!(v.len(), 1, "{:?}", a.violations);
    assert_eq!(v[0].event_index, Some(0), "flagged at the handover");
    assert_eq!(v[0].citation, "P217/2007 T.I C.II S.II r.8(b)");
    // A's next throw is not a second finding.
    let a = run_st(&c, &mut st, vec![dice(&[2, 2])]);
    assert!(
        !a.has_violation("CR_SHOOTER_NOT_CHANGED"),
        "{:?}",
        a.violations
    );
}

/// P217/2007 T.I C.II S.II r.2, r.4, r.7.
#[test]
fn cr_r4_r7_dice_and_voids() {
    let c = craps();
    let a = run(
        &c,
        vec![
            bet("f", "field", &[], 100),
            EventKind::Dice {
                dice: vec![1, 2, 3],
                chosen_from: None,
            }
            .into(),
            EventKind::Dice {
                dice: vec![1, 1],
                chosen_from: Some(4),
            }
            .into(),
        ],
    );
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "CR_WRONG_DICE_COUNT")
            .count(),
        2
    );
    assert_eq!(net(&a, "f"), 200);
    let r = settled(
        vec![
            bet("f", "field", &[], 100),
            dice(&[1, 1]),
            void("short_throw"),
        ],
        &[("f", 200)],
    );
    let a = DiceEngine::adjudicate(&c, &mut DiceState::default(), &r, &Options::default()).unwrap();
    assert!(a.has_violation("CR_VOID_THROW_SETTLED"));
    // One breach, one finding (issue 38; rules-core): no CR_WRONG_PAYOUT for the same bet.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
}

/// P217/2007 T.I C.II S.II r.7: a void recorded after the table moved on from a throw (its
/// winners paid, new bets) is the void of a later throw that showed no dice; it does not undo
/// the decided throw. Right after its dice, a void still voids the throw.
#[test]
fn cr_r7_void_without_dice_after_a_decided_throw() {
    let r = settled(
        vec![
            bet("f", "field", &[], 100),
            dice(&[1, 1]),
            EventKind::Pay {
                bet_id: "f".into(),
                amount_cents: 200,
            }
            .into(),
            bet("g", "field", &[], 100),
            void("die_off_table"),
            dice(&[3, 4]),
        ],
        &[("f", 200), ("g", -100)],
    );
    let a = DiceEngine::adjudicate(&craps(), &mut DiceState::default(), &r, &Options::default())
        .unwrap();
    assert_eq!(net(&a, "f"), 200, "the paid throw stands: {a:?}");
    assert_eq!(net(&a, "g"), -100, "{a:?}");
    assert!(
        a.violations.is_empty() && a.discrepancies.is_empty(),
        "{a:?}"
    );
    let a = run(
        &craps(),
        vec![
            bet("f", "field", &[], 100),
            dice(&[1, 1]),
            void("short_throw"),
        ],
    );
    assert_eq!(outcome(&a, "f"), Outcome::Open);
}

#[test]
fn cr_illegal_bet_and_config() {
    let a = run(&craps(), vec![bet("x", "place", &[7], 100), dice(&[1, 2])]);
    assert!(a.has_violation("CR_ILLEGAL_BET"));
    assert!(
        DiceEngine::configure(&table(GameId::Craps, &[]))
            .unwrap_err()
            .to_string()
            .contains("bar")
    );
    assert!(DiceEngine::configure(&table(GameId::Craps, &[("bar", Setting::Int(3))])).is_err());
    assert!(
        DiceEngine::configure(&table(GameId::Craps, &[("barr", Setting::Int(12))]))
            .unwrap_err()
            .to_string()
            .contains("barr")
    );
}

// ---- Cussec ----

/// P217/2007 T.I C.II S.III r.7: illegal bets.
#[test]
fn cs_r7_illegal_bets() {
    let a = run(
        &cussec(),
        vec![
            levers(),
            bet("a", "total", &[3], 100),
            bet("b", "two_dice_combo", &[2, 2], 100),
            bet("c", "single", &[7], 100),
            nmb(),
            dice(&[1, 1, 1]),
        ],
    );
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "CS_ILLEGAL_BET")
            .count(),
        3
    );
    assert!(a.bets.iter().all(|b| b.due_net_cents == 0));
}

/// P217/2007 T.I C.II S.III r.7(d), note S1: the combination pays once.
#[test]
fn cs_r8d_combo_once() {
    let a = run(
        &cussec(),
        vec![
            levers(),
            bet("c", "two_dice_combo", &[2, 1], 100),
            bet("s", "single", &[2], 100),
            nmb(),
            dice(&[1, 2, 2]),
        ],
    );
    assert_eq!(net(&a, "c"), 500);
    assert_eq!(net(&a, "s"), 200);
}

/// P217/2007 T.I C.II S.III r.5: no bets after "Nada mais. Vou abrir.".
#[test]
fn cs_r5_late_bet() {
    let a = run(
        &cussec(),
        vec![
            levers(),
            bet("a", "big", &[], 100),
            nmb(),
            bet("b", "small", &[], 100),
            dice(&[1, 2, 3]),
        ],
    );
    assert!(a.has_violation("CS_LATE_BET"));
    assert_eq!(net(&a, "b"), 100);
}

/// P217/2007 T.I C.II S.III r.6: stacked dice; bets may change; settling the void is flagged.
#[test]
fn cs_r6_stacked_dice() {
    let c = cussec();
    let a = run(
        &c,
        vec![
            levers(),
            bet("a", "big", &[], 100),
            nmb(),
            dice(&[1, 2, 3]),
            void("stacked_dice"),
            levers(),
            EventKind::BetChanged {
                bet_id: "a".into(),
                amount_cents: 300,
            }
            .into(),
            nmb(),
            dice(&[6, 6, 5]),
        ],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "a"), 300);
    let r = settled(
        vec![
            levers(),
            bet("a", "big", &[], 100),
            nmb(),
            dice(&[1, 2, 3]),
            void("stacked_dice"),
        ],
        &[("a", -100)],
    );
    let a = DiceEngine::adjudicate(&c, &mut DiceState::default(), &r, &Options::default()).unwrap();
    assert!(a.void.is_some());
    assert!(a.has_violation("CS_VOID_SETTLED"));
    // One breach, one finding (issue 38; rules-core): no CS_WRONG_PAYOUT for the same bet.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
}

/// P217/2007 T.I C.II S.III r.4: the lever three times.
#[test]
fn cs_r4_lever() {
    let a = run(
        &cussec(),
        vec![
            proc_("lever_press", None),
            proc_("lever_press", None),
            bet("a", "big", &[], 100),
            nmb(),
            dice(&[1, 2, 3]),
        ],
    );
    assert!(a.has_violation("CS_LEVER_NOT_THREE_TIMES"));
}

/// P217/2007 T.I C.II S.III r.11: the dome is covered only after every prize is paid.
#[test]
fn cs_r11_covered_before_payments() {
    let pay = |id: &str| -> RoundEvent {
        EventKind::Pay {
            bet_id: id.into(),
            amount_cents: 100,
        }
        .into()
    };
    let a = run(
        &cussec(),
        vec![
            levers(),
            bet("a", "small", &[], 100),
            nmb(),
            dice(&[1, 2, 3]),
            proc_("dome_covered", None),
            pay("a"),
        ],
    );
    assert!(a.has_violation("CS_COVERED_BEFORE_PAYMENTS"));
    let c = cussec();
    let mut st = DiceState::default();
    run_st(
        &c,
        &mut st,
        vec![
            levers(),
            bet("a", "small", &[], 100),
            nmb(),
            dice(&[1, 2, 3]),
            RoundEvent::at(
                500,
                EventKind::Pay {
                    bet_id: "a".into(),
                    amount_cents: 100,
                },
            ),
        ],
    );
    let a = run_st(
        &c,
        &mut st,
        vec![
            RoundEvent::at(
                400,
                EventKind::Procedure {
                    name: "dome_covered".into(),
                    value: None,
                    seat: None,
                    amount_cents: None,
                },
            ),
            levers(),
            bet("b", "small", &[], 100),
            nmb(),
            dice(&[1, 2, 3]),
        ],
    );
    assert!(a.has_violation("CS_COVERED_BEFORE_PAYMENTS"));
}

// ---- Records ----

#[test]
fn unreadable_records_are_round_errors_and_leave_state() {
    for (c, events) in [
        (
            banca(),
            vec![bet("a", "small", &[], 100), bet("a", "big", &[], 100)],
        ),
        (banca(), vec![bet("a", "small", &[], 100), dice(&[1, 2, 7])]),
        (banca(), vec![bet("a", "small", &[], 0)]),
        (banca(), vec![dice(&[1, 2])]),
        (craps(), vec![dice(&[0, 2])]),
        (
            craps(),
            vec![EventKind::BetWithdrawn { bet_id: "q".into() }.into()],
        ),
        (craps(), vec![EventKind::Ball { pocket: 3 }.into()]),
        (
            cussec(),
            vec![
                levers(),
                bet("a", "small", &[], MAX_AMOUNT_CENTS + 1),
                dice(&[1, 2, 3]),
            ],
        ),
        (cussec(), vec![levers(), bet("a", "small", &[], 100)]),
        (cussec(), vec![dice(&[1, 2, 3]), dice(&[1, 2, 3])]),
    ] {
        let mut st = DiceState::default();
        assert!(
            DiceEngine::adjudicate(&c, &mut st, &round(events.clone()), &Options::default())
                .is_err(),
            "{events:?}"
        );
        assert_eq!(st, DiceState::default());
    }
    // a state of another game
    let mut st = DiceState::Cussec(Default::default());
    assert!(matches!(
        DiceEngine::adjudicate(&craps(), &mut st, &round(vec![]), &Options::default()),
        Err(RoundError::State { .. })
    ));
}

#[test]
fn honest_rounds_have_no_findings_and_explain() {
    for (c, events, res) in [
        (
            banca(),
            vec![bet("a", "small", &[], 100), dice(&[1, 2, 3])],
            vec![("a", 100)],
        ),
        (
            craps(),
            vec![bet("a", "pass_line", &[], 100), dice(&[3, 4])],
            vec![("a", 100)],
        ),
        (
            cussec(),
            vec![
                levers(),
                bet("a", "small", &[], 100),
                nmb(),
                dice(&[1, 2, 3]),
            ],
            vec![("a", 100)],
        ),
    ] {
        let r = settled(events, &res);
        let a = DiceEngine::adjudicate(
            &c,
            &mut DiceState::default(),
            &r,
            &Options { explain: true },
        )
        .unwrap();
        assert!(
            a.violations.is_empty() && a.discrepancies.is_empty(),
            "{a:?}"
        );
        assert!(!a.notes.is_empty());
    }
}
