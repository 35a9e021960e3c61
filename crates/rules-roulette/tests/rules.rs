//! One test per rule (named after its citation), the digest's worked examples, and every
//! violation code of roulette.md section 12.
mod common;
use common::*;
use rules_core::*;
use rules_roulette::{RouletteEngine, RouletteState};

// ---- Worked examples (roulette.md section 13) ----

/// Example 1: P217/2007 T.I C.I S.I r.25(a), r.27(c).
#[test]
fn example_1_serie_grande_18_chips_ball_26() {
    let a = run(
        &american(),
        vec![
            chips_bet("g", "series_grande", &[], 9000, 18),
            nmb(),
            ball(26),
        ],
    );
    assert_eq!(net(&a, "g"), 9000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// Example 2: P217/2007 T.I C.I S.II r.18(a), r.19.
#[test]
fn example_2_french_ball_0() {
    let a = run(
        &french(),
        vec![
            bet("red", "red", &[], 2000),
            bet("dz", "dozen", &[1], 1000),
            bet("sp", "split", &[0, 3], 1000),
            bet("st", "street", &[0, 1, 2], 500),
            nmb(),
            ball(0),
        ],
    );
    assert_eq!(net(&a, "red"), -2000);
    assert_eq!(net(&a, "dz"), -1000);
    assert_eq!(net(&a, "sp"), 17000);
    assert_eq!(net(&a, "st"), 5500);
}

/// Example 3: P217/2007 T.I C.I S.I r.25(b), r.27(d).
#[test]
fn example_3_19_and_2_neighbours_ball_21() {
    let a = run(
        &american(),
        vec![
            chips_bet("n", "neighbours", &[19], 1250, 5),
            nmb(),
            ball(21),
        ],
    );
    assert_eq!(net(&a, "n"), 7750);
}

/// Example 4: P217/2007 T.I C.I S.I r.32(b).
#[test]
fn example_4_limit_ratio() {
    let mut t = table(GameId::RouletteAmerican, &[("wheel", text("french"))]);
    t.min_bet_cents = Some(200);
    t.limits = vec![
        ChanceLimit {
            chance: "straight".into(),
            min_cents: None,
            max_cents: Some(6000),
        },
        ChanceLimit {
            chance: "red".into(),
            min_cents: None,
            max_cents: Some(120_000),
        },
    ];
    let c = RouletteEngine::configure(&t).unwrap();
    assert_eq!(c.violations.len(), 1, "{:?}", c.violations);
    assert_eq!(c.violations[0].code, "RL_LIMIT_RATIO");
    assert_eq!(c.violations[0].citation, "P217/2007 T.I C.I S.I r.32(b)");
}

/// Example 5: layout geometry, P217/2007 T.I C.I S.I r.24(a), r.26.
#[test]
fn example_5_geometry() {
    let a = run(
        &french(),
        vec![
            bet("a", "split", &[3, 4], 100),
            bet("b", "split", &[3, 6], 100),
            bet("c", "corner", &[2, 3, 5, 6], 100),
            bet("d", "corner", &[3, 4, 6, 7], 100),
            nmb(),
            ball(6),
        ],
    );
    assert_eq!(net(&a, "a"), 0);
    assert_eq!(a.bet("a").unwrap().outcome, Outcome::Void);
    assert_eq!(net(&a, "b"), 1700);
    assert_eq!(net(&a, "c"), 800);
    assert_eq!(net(&a, "d"), 0);
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RL_ILLEGAL_BET")
            .count(),
        2
    );
}

// ---- Rules ----

/// P217/2007 T.I C.I S.I r.27(a): every multiple.
#[test]
fn r27a_multiples() {
    let a = run(
        &american(),
        vec![
            bet("p", "straight", &[17], 100),
            bet("c", "split", &[17, 20], 100),
            bet("r", "street", &[16, 17, 18], 100),
            bet("q", "corner", &[13, 14, 16, 17], 100),
            bet("l", "line", &[13, 14, 15, 16, 17, 18], 100),
            bet("dz", "dozen", &[2], 100),
            bet("co", "column", &[2], 100),
            bet("dzs", "dozen_split", &[1, 2], 100),
            bet("cos", "column_split", &[2, 3], 100),
            nmb(),
            ball(17),
        ],
    );
    for (id, n) in [
        ("p", 3500),
        ("c", 1700),
        ("r", 1100),
        ("q", 800),
        ("l", 500),
        ("dz", 200),
        ("co", 200),
        ("dzs", 50),
        ("cos", 50),
    ] {
        assert_eq!(net(&a, id), n, "{id}");
        assert_eq!(a.bet(id).unwrap().citation, "P217/2007 T.I C.I S.I r.27(a)");
    }
}

/// P217/2007 T.I C.I S.I r.27(b), r.24(b): simple chances at even money.
#[test]
fn r27b_simple_chances() {
    let a = run(
        &american(),
        vec![
            bet("e", "even", &[], 100),
            bet("o", "odd", &[], 100),
            bet("lo", "low", &[], 100),
            bet("hi", "high", &[], 100),
            bet("r", "red", &[], 100),
            bet("b", "black", &[], 100),
            nmb(),
            ball(17),
        ],
    );
    for (id, n) in [
        ("e", -100),
        ("o", 100),
        ("lo", 100),
        ("hi", -100),
        ("r", -100),
        ("b", 100),
    ] {
        assert_eq!(net(&a, id), n, "{id}");
        assert_eq!(a.bet(id).unwrap().citation, "P217/2007 T.I C.I S.I r.27(b)");
    }
}

/// P217/2007 T.I C.I S.I r.28: 0 makes the outside bets lose outright.
#[test]
fn r28_zero_rule() {
    let a = run(
        &american(),
        vec![
            bet("e", "even", &[], 100),
            bet("co", "column", &[1], 100),
            bet("cs", "column_split", &[1, 2], 100),
            bet("p", "straight", &[0], 100),
            bet("t", "street", &[0, 2, 3], 100),
            nmb(),
            ball(0),
        ],
    );
    assert_eq!(net(&a, "e"), -100);
    assert_eq!(net(&a, "co"), -100);
    assert_eq!(net(&a, "cs"), -100);
    assert_eq!(a.bet("cs").unwrap().citation, "P217/2007 T.I C.I S.I r.28");
    assert_eq!(net(&a, "p"), 3500);
    assert_eq!(net(&a, "t"), 1100);
}

/// Digest note N4: corner 0-1-2-3 only when the set-up allows it.
#[test]
fn n4_zero_corner() {
    let a = run(
        &french(),
        vec![bet("q", "corner", &[0, 1, 2, 3], 100), nmb(), ball(0)],
    );
    assert_eq!(net(&a, "q"), 0);
    assert!(a.has_violation("RL_ILLEGAL_BET"));
    let c = RouletteEngine::configure(&table(
        GameId::RouletteFrench,
        &[("zero_corner_allowed", Setting::Bool(true))],
    ))
    .unwrap()
    .config;
    let a = run(
        &c,
        vec![bet("q", "corner", &[0, 1, 2, 3], 100), nmb(), ball(0)],
    );
    assert_eq!(net(&a, "q"), 800);
}

/// P217/2007 T.I C.I S.I r.25(a), r.27(c): série pequena and órfãos per unit (digest 5.1).
#[test]
fn r25a_series_nets() {
    let c = american();
    for (p, n) in [(5u8, 12), (36, 12), (0, -6)] {
        let a = run(
            &c,
            vec![
                chips_bet("s", "series_pequena", &[], 600, 6),
                nmb(),
                ball(p),
            ],
        );
        assert_eq!(net(&a, "s"), n * 100, "pequena {p}");
    }
    for (p, n) in [(1u8, 31), (17, 31), (6, 13), (0, -5)] {
        let a = run(
            &c,
            vec![chips_bet("s", "series_orfaos", &[], 500, 5), nmb(), ball(p)],
        );
        assert_eq!(net(&a, "s"), n * 100, "orfaos {p}");
    }
    for (p, n) in [(0u8, 15), (25, 9), (32, 9), (1, -9)] {
        let a = run(
            &c,
            vec![chips_bet("s", "series_grande", &[], 900, 9), nmb(), ball(p)],
        );
        assert_eq!(net(&a, "s"), n * 100, "grande {p}");
    }
}

/// P217/2007 T.I C.I S.I r.25: series only on a French-numbered wheel.
#[test]
fn r25_series_wrong_wheel() {
    let c = RouletteEngine::configure(&table(
        GameId::RouletteAmerican,
        &[("wheel", text("american"))],
    ))
    .unwrap()
    .config;
    let a = run(
        &c,
        vec![
            chips_bet("s", "series_orfaos", &[], 500, 5),
            chips_bet("n", "neighbours", &[4], 300, 3),
            nmb(),
            ball(1),
        ],
    );
    assert_eq!(net(&a, "s"), 0);
    assert_eq!(net(&a, "n"), 0);
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RL_SERIES_WRONG_WHEEL")
            .count(),
        2
    );
}

/// P217/2007 T.I C.I S.I r.32(c): series chip counts.
#[test]
fn r32c_series_chips() {
    let a = run(
        &american(),
        vec![
            chips_bet("s", "series_grande", &[], 1000, 10),
            chips_bet("t", "series_orfaos", &[], 5500, 55),
            nmb(),
            ball(1),
        ],
    );
    assert_eq!(net(&a, "s"), 0);
    assert_eq!(net(&a, "t"), 31 * 11 * 100);
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RL_SERIES_CHIPS")
            .count(),
        2
    );
}

/// P217/2007 T.I C.I S.I r.32(c): the series' maxima, 135, 120 and 50 chips, are allowed; one
/// unit more is a finding (the bet still settles as played).
#[test]
fn r32c_series_chip_maxima() {
    for (id, max, base, p, units_won) in [
        ("series_grande", 135, 9, 26, 9),
        ("series_pequena", 120, 6, 5, 12),
        ("series_orfaos", 50, 5, 1, 31),
    ] {
        for (chips, finding) in [(max, false), (max + base, true)] {
            let a = run(
                &american(),
                vec![
                    chips_bet("s", id, &[], 100 * chips, chips as u32),
                    nmb(),
                    ball(p),
                ],
            );
            assert_eq!(
                a.has_violation("RL_SERIES_CHIPS"),
                finding,
                "{id} {chips}: {:?}",
                a.violations
            );
            assert_eq!(net(&a, "s"), units_won * 100 * chips / base, "{id} {chips}");
        }
    }
}

/// P217/2007 T.I C.I S.I r.25(b): neighbours of 3, 5 or 7 chips only.
#[test]
fn r25b_neighbours_chips() {
    let a = run(
        &american(),
        vec![chips_bet("n", "neighbours", &[19], 400, 4), nmb(), ball(19)],
    );
    assert_eq!(net(&a, "n"), 0);
    assert!(a.has_violation("RL_NEIGHBOURS_CHIPS"));
    let a = run(
        &american(),
        vec![chips_bet("n", "neighbours", &[0], 700, 7), nmb(), ball(35)],
    );
    assert_eq!(net(&a, "n"), 3500 - 600);
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.I S.I r.32(d), digest note N7: per number.
#[test]
fn r32d_neighbours_over_pleno_max() {
    let mut t = table(GameId::RouletteAmerican, &[("wheel", text("french"))]);
    t.limits = vec![ChanceLimit {
        chance: "straight".into(),
        min_cents: Some(100),
        max_cents: Some(1000),
    }];
    let c = RouletteEngine::configure(&t).unwrap().config;
    let mk = |sb: Cents| {
        vec![
            EventKind::Bet(
                Bet::new("n", "neighbours", 1500)
                    .selection(&[19])
                    .chips(3)
                    .player("p1"),
            )
            .into(),
            EventKind::Bet(Bet::new("s", "straight", sb).selection(&[19]).player("p1")).into(),
            nmb(),
            ball(2),
        ]
    };
    let a = run(&c, mk(500));
    assert!(
        !a.has_violation("RL_NEIGHBOURS_OVER_PLENO_MAX"),
        "{:?}",
        a.violations
    );
    let a = run(&c, mk(600));
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "RL_NEIGHBOURS_OVER_PLENO_MAX")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
}

/// P217/2007 T.I C.I S.I r.32(d), digest note N7: only the player's own live stakes on the
/// number itself count: not another number's straight, another player's straight, a withdrawn
/// straight, or another neighbours bet that does not cover the number.
#[test]
fn r32d_neighbours_max_counts_only_the_players_stakes_on_the_number() {
    let mut t = table(GameId::RouletteAmerican, &[("wheel", text("french"))]);
    t.limits = vec![ChanceLimit {
        chance: "straight".into(),
        min_cents: None,
        max_cents: Some(1000),
    }];
    let c = RouletteEngine::configure(&t).unwrap().config;
    let p1 = |b: Bet| -> RoundEvent { EventKind::Bet(b.player("p1")).into() };
    let a = run(
        &c,
        vec![
            // 19 with 15 and 4 (500 a chip); 2 with 21 and 25 (600 a chip)
            p1(Bet::new("n19", "neighbours", 1500)
                .selection(&[19])
                .chips(3)),
            p1(Bet::new("n2", "neighbours", 1800).selection(&[2]).chips(3)),
            p1(Bet::new("s1", "straight", 1200).selection(&[1])),
            p1(Bet::new("w19", "straight", 600).selection(&[19])),
            EventKind::BetWithdrawn {
                bet_id: "w19".into(),
            }
            .into(),
            EventKind::Bet(
                Bet::new("q19", "straight", 600)
                    .selection(&[19])
                    .player("p2"),
            )
            .into(),
            nmb(),
            ball(7),
        ],
    );
    assert!(
        a.has_violation("RL_BET_ABOVE_MAX"),
        "s1 is above the straight maximum"
    );
    assert!(
        !a.has_violation("RL_NEIGHBOURS_OVER_PLENO_MAX"),
        "{:?}",
        a.violations
    );
}

/// P217/2007 T.I C.I S.I r.26, r.32; S.II r.17, r.24: per-chance limits.
#[test]
fn r26_limits() {
    let mut t = table(GameId::RouletteFrench, &[]);
    t.min_bet_cents = Some(200);
    t.max_bet_cents = Some(6000);
    let c = RouletteEngine::configure(&t).unwrap().config;
    let a = run(
        &c,
        vec![
            bet("a", "straight", &[1], 100),
            bet("b", "straight", &[2], 7000),
            nmb(),
            ball(3),
        ],
    );
    assert!(a.has_violation("RL_BET_BELOW_MIN"));
    assert!(a.has_violation("RL_BET_ABOVE_MAX"));
    assert_eq!(net(&a, "b"), -7000, "settled as played");
    // the minimum and the maximum themselves are within the limits
    let a = run(
        &c,
        vec![
            bet("a", "straight", &[1], 200),
            bet("b", "straight", &[2], 6000),
            nmb(),
            ball(3),
        ],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // aggregated per player and position
    let a = run(
        &c,
        vec![
            EventKind::Bet(Bet::new("a", "straight", 4000).selection(&[1]).seat(1)).into(),
            EventKind::Bet(Bet::new("b", "straight", 4000).selection(&[1]).seat(1)).into(),
            nmb(),
            ball(3),
        ],
    );
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RL_BET_ABOVE_MAX")
            .count(),
        1
    );
}

/// P217/2007 T.I C.I S.I r.9: a colour's value.
#[test]
fn r9_chip_value() {
    let mut t = table(GameId::RouletteAmerican, &[("wheel", text("french"))]);
    t.min_bet_cents = Some(100);
    t.limits = vec![ChanceLimit {
        chance: "straight".into(),
        min_cents: None,
        max_cents: Some(3000),
    }];
    let c = RouletteEngine::configure(&t).unwrap().config;
    let proc_ = |v: Cents| -> RoundEvent {
        EventKind::Procedure {
            name: "colour_value".into(),
            value: Some("green".into()),
            seat: Some(2),
            amount_cents: Some(v),
        }
        .into()
    };
    let a = run(
        &c,
        vec![proc_(3000), bet("a", "red", &[], 100), nmb(), ball(1)],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run(
        &c,
        vec![proc_(3100), bet("a", "red", &[], 100), nmb(), ball(1)],
    );
    assert!(a.has_violation("RL_CHIP_VALUE_OUT_OF_RANGE"));
    let a = run(
        &c,
        vec![proc_(50), bet("a", "red", &[], 100), nmb(), ball(1)],
    );
    assert!(a.has_violation("RL_CHIP_VALUE_OUT_OF_RANGE"));
}

/// P217/2007 T.I C.I S.I r.16: face-value chips only outside, unless marked sets.
#[test]
fn r16_face_value_chips() {
    let fv = |t: &str, sel: &[u8], kind: &str| -> RoundEvent {
        EventKind::Bet(Bet::new("a", t, 100).selection(sel).attr("chip_kind", kind)).into()
    };
    let a = run(
        &american(),
        vec![fv("straight", &[5], "face_value"), nmb(), ball(5)],
    );
    assert!(a.has_violation("RL_FACE_VALUE_CHIP_INSIDE"));
    assert_eq!(net(&a, "a"), 3500);
    let a = run(
        &american(),
        vec![fv("dozen", &[1], "face_value"), nmb(), ball(5)],
    );
    assert!(a.violations.is_empty());
    let a = run(
        &american(),
        vec![fv("straight", &[5], "marked_value"), nmb(), ball(5)],
    );
    assert!(a.has_violation("RL_FACE_VALUE_CHIP_INSIDE"));
    let c = RouletteEngine::configure(&table(
        GameId::RouletteAmerican,
        &[
            ("wheel", text("french")),
            ("marked_value_chips", Setting::Bool(true)),
        ],
    ))
    .unwrap()
    .config;
    let a = run(
        &c,
        vec![fv("straight", &[5], "marked_value"), nmb(), ball(5)],
    );
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.I S.I r.15: late colour chips at the table minimum.
#[test]
fn r15_late_chips_value() {
    let mut t = table(GameId::RouletteAmerican, &[("wheel", text("french"))]);
    t.min_bet_cents = Some(100);
    let c = RouletteEngine::configure(&t).unwrap().config;
    let ex = |paid: Cents| -> RoundEvent {
        EventKind::Procedure {
            name: "late_chip_exchange".into(),
            value: Some("10".into()),
            seat: Some(3),
            amount_cents: Some(paid),
        }
        .into()
    };
    let a = run(&c, vec![ex(1000), nmb(), ball(1)]);
    assert!(a.violations.is_empty());
    let a = run(&c, vec![ex(2500), nmb(), ball(1)]);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "RL_LATE_CHIPS_VALUE")
        .unwrap();
    assert_eq!(v.severity, Severity::High);
}

/// P217/2007 T.I C.I S.I r.20; S.II r.12: no bets after "Jogo feito. Nada mais.".
#[test]
fn r20_late_bet() {
    let a = run(
        &french(),
        vec![
            bet("a", "red", &[], 100),
            nmb(),
            bet("b", "black", &[], 100),
            EventKind::BetChanged {
                bet_id: "a".into(),
                amount_cents: 300,
            }
            .into(),
            ball(1),
        ],
    );
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RL_LATE_BET")
            .count(),
        2
    );
    assert_eq!(net(&a, "a"), 300, "settled as played");
    assert_eq!(net(&a, "b"), -100);
    assert_eq!(a.violations[0].citation, "P217/2007 T.I C.I S.II r.12");
}

fn launch(dir: Direction, wheel: Direction, from: Option<u8>) -> RoundEvent {
    EventKind::Launch {
        ball_direction: Some(dir),
        wheel_direction: Some(wheel),
        from_pocket: from,
        ball_id: None,
    }
    .into()
}
fn void() -> RoundEvent {
    EventKind::Void {
        reason: "chip_fell".into(),
    }
    .into()
}
use Direction::{Clockwise as CW, Counterclockwise as CCW};

/// P217/2007 T.I C.I S.I r.22; S.II r.14: a void spin decides nothing; relaunch.
#[test]
fn r22_void_spin_and_relaunch() {
    let c = french();
    let mut st = RouletteState {
        last_number: Some(7),
        ..Default::default()
    };
    // void, relaunched from 7, result 9
    let r = round(vec![
        bet("a", "straight", &[9], 100),
        nmb(),
        launch(CW, CCW, None),
        ball(9),
        void(),
        launch(CCW, CW, Some(7)),
        ball(9),
    ]);
    let a = run_round(&c, &mut st, &r);
    assert_eq!(net(&a, "a"), 3500);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(st.last_number, Some(9));
    // relaunched from the wrong pocket
    let r = round(vec![
        bet("a", "red", &[], 100),
        nmb(),
        launch(CW, CCW, None),
        void(),
        launch(CCW, CW, Some(3)),
        ball(1),
    ]);
    let a = run_round(&c, &mut st, &r);
    assert!(a.has_violation("RL_RELAUNCH_NOT_FROM_PREVIOUS"));
    // a void spin not relaunched: round void; settling it is a violation
    let r = settled(
        vec![
            bet("a", "red", &[], 100),
            nmb(),
            launch(CW, CCW, None),
            void(),
        ],
        &[("a", 100)],
    );
    let a = run_round(&c, &mut st, &r);
    assert!(a.void.is_some());
    assert_eq!(net(&a, "a"), 0);
    assert!(a.has_violation("RL_VOID_SPIN_SETTLED"));
    // One breach, one finding (issue 38; rules-core): the void-spin finding is the finding, no
    // RL_WRONG_PAYOUT for the same bet.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    assert_eq!(
        st.last_number,
        Some(1),
        "a void spin leaves the previous number"
    );
}

/// P217/2007 T.I C.I S.I r.21; S.II r.13: alternate launches, wheel against the ball.
#[test]
fn r21_launch_direction() {
    let c = american();
    let mut st = RouletteState {
        last_ball_direction: Some(CW),
        ..Default::default()
    };
    let a = run_round(
        &c,
        &mut st,
        &round(vec![nmb(), launch(CW, CCW, None), ball(1)]),
    );
    assert!(a.has_violation("RL_LAUNCH_DIRECTION"));
    let a = run_round(
        &c,
        &mut st,
        &round(vec![nmb(), launch(CCW, CCW, None), ball(1)]),
    );
    assert!(a.has_violation("RL_LAUNCH_DIRECTION"));
    let a = run_round(
        &c,
        &mut st,
        &round(vec![nmb(), launch(CW, CCW, None), ball(1)]),
    );
    assert!(a.violations.is_empty());
}

fn pay(id: &str) -> RoundEvent {
    EventKind::Pay {
        bet_id: id.into(),
        amount_cents: 0,
    }
    .into()
}
fn collect(ids: &[&str]) -> RoundEvent {
    EventKind::Collect {
        bet_ids: ids.iter().map(|s| (*s).into()).collect(),
    }
    .into()
}
fn pbet(id: &str, t: &str, sel: &[u8], player: &str) -> RoundEvent {
    EventKind::Bet(Bet::new(id, t, 100).selection(sel).player(player)).into()
}

/// P217/2007 T.I C.I S.I r.29; S.II r.20: collect first, then pay in order.
#[test]
fn r29_collection_and_payment_order() {
    let c = american();
    let base = vec![
        pbet("col", "column", &[1], "A"),
        pbet("pl", "straight", &[1], "B"),
        pbet("red", "red", &[], "C"),
        pbet("lost", "black", &[], "D"),
        nmb(),
        ball(1),
    ];
    let mut ok = base.clone();
    ok.extend([collect(&["lost"]), pay("col"), pay("red"), pay("pl")]);
    assert!(run(&c, ok).violations.is_empty());
    let mut bad = base.clone();
    bad.extend([pay("col"), collect(&["lost"]), pay("pl"), pay("red")]);
    let a = run(&c, bad);
    assert!(a.has_violation("RL_PAID_BEFORE_COLLECTING"));
    // found once, at the payment that went back in the order (event 9: red after the straight)
    let order: Vec<_> = a
        .violations
        .iter()
        .filter(|v| v.code == "RL_PAYOUT_ORDER")
        .collect();
    assert_eq!(order.len(), 1, "{order:?}");
    assert_eq!(order[0].bet_id.as_deref(), Some("red"));
    assert_eq!(order[0].event_index, Some(9));
    assert_eq!(order[0].confidence, Confidence::Certain);
    // S.II r.20: French order is columns, dozens, simple chances...
    let f = french();
    let mut fr = vec![
        pbet("dz", "dozen", &[1], "A"),
        pbet("red", "red", &[], "B"),
        nmb(),
        ball(1),
    ];
    fr.extend([pay("red"), pay("dz")]);
    assert!(run(&f, fr).has_violation("RL_PAYOUT_ORDER"));
    // S.I r.30 / S.II r.21: one player's prizes together
    let mut same = vec![
        pbet("col", "column", &[1], "A"),
        pbet("pl", "straight", &[1], "A"),
        pbet("red", "red", &[], "B"),
        nmb(),
        ball(1),
    ];
    same.extend([pay("col"), pay("pl"), pay("red")]);
    assert!(run(&c, same).violations.is_empty());
}

fn timed(t: i64, e: EventKind) -> RoundEvent {
    RoundEvent::at(t, e)
}

/// P217/2007 T.I C.I S.I r.33; S.II r.25: spinner at most one hour.
#[test]
fn r33_dealer_over_one_hour() {
    let c = french();
    let mut st = RouletteState::default();
    let role = EventKind::Role {
        role: "spinner".into(),
        seat: None,
        player: Some("d1".into()),
    };
    let l = || EventKind::Launch {
        ball_direction: None,
        wheel_direction: None,
        from_pocket: None,
        ball_id: None,
    };
    let a = run_round(
        &c,
        &mut st,
        &round(vec![timed(0, role.clone()), timed(10, l()), ball(1)]),
    );
    assert!(a.violations.is_empty());
    assert_eq!(st.spinner.as_deref(), Some("d1"));
    // one hour exactly is still allowed
    let a = run_round(&c, &mut st, &round(vec![timed(3_600_000, l()), ball(2)]));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run_round(&c, &mut st, &round(vec![timed(3_600_001, l()), ball(2)]));
    assert!(a.has_violation("RL_DEALER_OVER_ONE_HOUR"));
    let role2 = EventKind::Role {
        role: "spinner".into(),
        seat: None,
        player: Some("d2".into()),
    };
    let a = run_round(
        &c,
        &mut st,
        &round(vec![
            timed(3_700_000, role2),
            timed(3_700_001, l()),
            ball(2),
        ]),
    );
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.I S.I r.17; S.II r.9: balls alternate hourly.
#[test]
fn r17_ball_alternation() {
    let c = american();
    let mut st = RouletteState::default();
    let l = |b: &str| EventKind::Launch {
        ball_direction: None,
        wheel_direction: None,
        from_pocket: None,
        ball_id: Some(b.into()),
    };
    run_round(&c, &mut st, &round(vec![timed(0, l("A")), ball(1)]));
    let a = run_round(&c, &mut st, &round(vec![timed(3_000_000, l("A")), ball(1)]));
    assert!(a.violations.is_empty());
    // one hour exactly is still allowed
    let a = run_round(&c, &mut st, &round(vec![timed(3_600_000, l("A")), ball(1)]));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run_round(&c, &mut st, &round(vec![timed(3_600_001, l("A")), ball(1)]));
    assert!(a.has_violation("RL_BALL_NOT_ALTERNATED"));
    let a = run_round(&c, &mut st, &round(vec![timed(3_600_002, l("B")), ball(1)]));
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.I S.I r.19; S.II r.11: launch after the previous payments.
#[test]
fn r19_spin_before_payments() {
    let c = french();
    let mut st = RouletteState::default();
    let l = || EventKind::Launch {
        ball_direction: None,
        wheel_direction: None,
        from_pocket: None,
        ball_id: None,
    };
    run_round(
        &c,
        &mut st,
        &round(vec![
            bet("a", "red", &[], 100),
            nmb(),
            timed(100, l()),
            ball(1),
            timed(
                200,
                EventKind::Pay {
                    bet_id: "a".into(),
                    amount_cents: 200,
                },
            ),
        ]),
    );
    assert_eq!(st.last_payment_at_ms, Some(200));
    let a = run_round(&c, &mut st, &round(vec![timed(150, l()), ball(1)]));
    assert!(a.has_violation("RL_SPIN_BEFORE_PAYMENTS"));
    // at the very time of the last payment is not before it
    let a = run_round(&c, &mut st, &round(vec![timed(200, l()), ball(1)]));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run_round(&c, &mut st, &round(vec![timed(250, l()), ball(1)]));
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.I S.I r.27, r.28: wrong payout is a discrepancy with both amounts.
#[test]
fn r27_wrong_payout() {
    let r = settled(
        vec![
            bet("a", "red", &[], 100),
            bet("b", "straight", &[0], 100),
            nmb(),
            ball(0),
        ],
        &[("a", 0), ("b", 3500)],
    );
    let a = RouletteEngine::adjudicate(
        &french(),
        &mut RouletteState::default(),
        &r,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(a.discrepancies.len(), 1);
    assert_eq!(a.discrepancies[0].code, "RL_WRONG_PAYOUT");
    assert_eq!(a.discrepancies[0].due_net_cents, -100);
    assert_eq!(a.discrepancies[0].reported_net_cents, Some(0));
}

/// Digest note N10: announced bets at French land tables.
#[test]
fn n10_french_announced_bets() {
    let a = run(
        &french(),
        vec![chips_bet("g", "series_grande", &[], 900, 9), nmb(), ball(0)],
    );
    assert_eq!(net(&a, "g"), 1500);
    let c = RouletteEngine::configure(&table(
        GameId::RouletteFrench,
        &[("announced_bets", Setting::Bool(false))],
    ))
    .unwrap()
    .config;
    let a = run(
        &c,
        vec![chips_bet("g", "series_grande", &[], 900, 9), nmb(), ball(0)],
    );
    assert_eq!(net(&a, "g"), 0);
    assert!(a.has_violation("RL_ILLEGAL_BET"));
}

// ---- Online (R807/2015) ----

fn grande_composition() -> Setting {
    Setting::List(vec![
        2, 3, 0, 2, 3, 1, 2, 4, 7, 1, 2, 12, 15, 1, 2, 18, 21, 1, 2, 19, 22, 2, 4, 25, 26, 28, 29,
        1, 2, 32, 35,
    ])
}

/// R807/2015 r.8: call bets only where the specific rules offer them.
#[test]
fn r807_r8_call_bets() {
    let a = run(
        &online(),
        vec![
            chips_bet("g", "series_grande", &[], 900, 9),
            chips_bet("f", "finals", &[7], 300, 3),
            nmb(),
            ball(0),
        ],
    );
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RLO_CALL_BET_NOT_OFFERED")
            .count(),
        2
    );
    assert_eq!(net(&a, "g"), 0);
    let c = RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[
            ("zero_rule", text("lose")),
            ("call_series_grande", grande_composition()),
            ("call_finals", Setting::Bool(true)),
            ("call_neighbours", Setting::Bool(true)),
        ],
    ))
    .unwrap()
    .config;
    let a = run(
        &c,
        vec![
            chips_bet("g", "series_grande", &[], 900, 9),
            chips_bet("f", "finals", &[7], 300, 3),
            chips_bet("n", "neighbours", &[0], 500, 5),
            nmb(),
            ball(17),
        ],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "g"), -900);
    assert_eq!(net(&a, "f"), 3500 - 200);
    assert_eq!(net(&a, "n"), -500);
    // composition must cover exactly r.8(a)'s numbers
    let bad = RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[
            ("zero_rule", text("lose")),
            ("call_series_grande", Setting::List(vec![1, 1, 0])),
        ],
    ));
    assert!(bad.is_err());
}

/// R807/2015 (digest section 10): payouts and zero rule are table settings.
#[test]
fn r807_operator_payouts_and_zero_rule() {
    assert!(
        RouletteEngine::configure(&table(GameId::RouletteFrenchOnline, &[])).is_err(),
        "zero_rule is required"
    );
    let c = RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[
            ("zero_rule", text("la_partage")),
            ("payout_straight", Setting::List(vec![35, 1])),
        ],
    ))
    .unwrap()
    .config;
    let a = run(
        &c,
        vec![
            bet("r", "red", &[], 101),
            bet("d", "dozen", &[1], 100),
            nmb(),
            ball(0),
        ],
    );
    assert_eq!(net(&a, "r"), -51);
    assert_eq!(net(&a, "d"), -100);
    let c = RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[
            ("zero_rule", text("lose")),
            ("payout_straight", Setting::List(vec![34, 1])),
        ],
    ))
    .unwrap()
    .config;
    let a = run(&c, vec![bet("p", "straight", &[3], 100), nmb(), ball(3)]);
    assert_eq!(net(&a, "p"), 3400);
}

/// R807/2015 r.8: each chip of a call bet is paid at the table's payout for its ordinary bet,
/// fractions included (operator payouts, digest section 10): orphelins' split 6-9 at 35/2 to 1,
/// the neighbours' straight at 71/2 to 1, rounded down to the cent.
#[test]
fn r807_r8_call_bets_paid_at_fractional_operator_payouts() {
    let c = RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[
            ("zero_rule", text("lose")),
            ("payout_split", Setting::List(vec![35, 2])),
            ("payout_straight", Setting::List(vec![71, 2])),
            (
                "call_series_orfaos",
                Setting::List(vec![
                    1, 1, 1, 1, 2, 6, 9, 1, 2, 14, 17, 1, 2, 17, 20, 1, 2, 31, 34,
                ]),
            ),
            ("call_neighbours", Setting::Bool(true)),
        ],
    ))
    .unwrap()
    .config;
    let a = run(
        &c,
        vec![
            chips_bet("o", "series_orfaos", &[], 505, 5),
            chips_bet("n", "neighbours", &[6], 303, 3),
            nmb(),
            ball(6),
        ],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // 101 a chip: 101 × 35 / 2 = 1767 (rounded down), four chips lost.
    assert_eq!(net(&a, "o"), 1767 - 4 * 101);
    // 101 × 71 / 2 = 3585, the two neighbours' chips lost.
    assert_eq!(net(&a, "n"), 3585 - 2 * 101);
}

/// R807/2015 (digest section 10): an operator payout is `[numerator, denominator]`, both
/// 1..=1000000; a zero, negative or oversized term, on either side, is refused.
#[test]
fn r807_payout_setting_terms_in_range() {
    let cfg = |v: Vec<i64>| {
        RouletteEngine::configure(&table(
            GameId::RouletteFrenchOnline,
            &[
                ("zero_rule", text("lose")),
                ("payout_split", Setting::List(v)),
            ],
        ))
    };
    let c = cfg(vec![1_000_000, 1_000_000]).unwrap().config;
    let a = run(&c, vec![bet("s", "split", &[1, 2], 100), nmb(), ball(2)]);
    assert_eq!(net(&a, "s"), 100);
    for bad in [
        vec![17, 0],
        vec![0, 1],
        vec![-17, 1],
        vec![17, -1],
        vec![1_000_001, 1],
        vec![17, 1_000_001],
        vec![17],
        vec![17, 1, 1],
    ] {
        let e = cfg(bad.clone()).unwrap_err().to_string();
        assert!(e.contains("payout_split"), "{bad:?}: {e}");
    }
}

/// R807/2015 r.5: one common result on a multi-player wheel.
#[test]
fn r807_r5_common_result() {
    let c = RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[
            ("zero_rule", text("lose")),
            ("multi_player", Setting::Bool(true)),
        ],
    ))
    .unwrap()
    .config;
    let shown = |s: u8, v: &str| -> RoundEvent {
        EventKind::Procedure {
            name: "result_shown".into(),
            value: Some(v.into()),
            seat: Some(s),
            amount_cents: None,
        }
        .into()
    };
    let a = run(
        &c,
        vec![
            bet("a", "red", &[], 100),
            nmb(),
            ball(1),
            shown(1, "1"),
            shown(2, "2"),
        ],
    );
    assert_eq!(a.violations.len(), 1);
    assert_eq!(a.violations[0].code, "RLO_RESULT_NOT_COMMON");
    assert_eq!(net(&a, "a"), 100);
}

/// R807/2015 r.3(b)(c): per chance per round.
#[test]
fn r807_r3_limits() {
    let mut t = table(GameId::RouletteFrenchOnline, &[("zero_rule", text("lose"))]);
    t.min_bet_cents = Some(10);
    t.limits = vec![ChanceLimit {
        chance: "straight".into(),
        min_cents: None,
        max_cents: Some(500),
    }];
    let c = RouletteEngine::configure(&t).unwrap();
    assert!(c.violations.is_empty(), "no ratio checks online");
    let pb = |id: &str, a: Cents| -> RoundEvent {
        EventKind::Bet(Bet::new(id, "straight", a).selection(&[7]).player("p")).into()
    };
    let a = run(
        &c.config,
        vec![
            pb("a", 300),
            pb("b", 300),
            bet("c", "red", &[], 5),
            nmb(),
            ball(7),
        ],
    );
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RL_BET_ABOVE_MAX")
            .count(),
        1
    );
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "RL_BET_BELOW_MIN")
            .count(),
        1
    );
    assert_eq!(a.violations[0].citation, "R807/2015 r.3(b), r.3(c)");
}

// ---- Configuration ----

/// The engine adjudicates exactly the three roulette games: American (P217/2007 T.I C.I S.I),
/// French (S.II) and online French (R807/2015).
#[test]
fn engine_games_are_the_three_roulettes() {
    assert_eq!(
        RouletteEngine::games(),
        &[
            GameId::RouletteAmerican,
            GameId::RouletteFrench,
            GameId::RouletteFrenchOnline
        ]
    );
}

/// A minimum equal to the maximum is a valid limit; one above it is refused, for the table
/// (P217/2007 T.I C.I S.I r.26) and for one chance (r.32).
#[test]
fn limits_equal_min_and_max_accepted_min_above_max_refused() {
    let mut t = table(GameId::RouletteFrench, &[]);
    t.min_bet_cents = Some(500);
    t.max_bet_cents = Some(500);
    let c = RouletteEngine::configure(&t).unwrap().config;
    assert_eq!((c.table_min, c.straight_max), (Some(500), Some(500)));
    t.min_bet_cents = Some(501);
    let e = RouletteEngine::configure(&t).unwrap_err().to_string();
    assert!(e.contains("max_bet_cents") && e.contains("below"), "{e}");

    let mut t = table(GameId::RouletteFrench, &[]);
    let limit = |min, max| ChanceLimit {
        chance: "red".into(),
        min_cents: Some(min),
        max_cents: Some(max),
    };
    t.limits = vec![limit(700, 700)];
    let c = RouletteEngine::configure(&t).unwrap().config;
    let red = rules_roulette::bets::Kind::Red as usize;
    assert_eq!(
        (c.limits[red].min, c.limits[red].max),
        (Some(700), Some(700))
    );
    t.limits = vec![limit(701, 700)];
    let e = RouletteEngine::configure(&t).unwrap_err().to_string();
    assert!(e.contains("limits[0]") && e.contains("below"), "{e}");
}

#[test]
fn config_errors_name_the_field() {
    let e = RouletteEngine::configure(&table(GameId::RouletteAmerican, &[]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("wheel"), "{e}");
    let e = RouletteEngine::configure(&table(GameId::RouletteFrench, &[("weel", text("french"))]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("weel"), "{e}");
    let e = RouletteEngine::configure(&table(
        GameId::RouletteFrench,
        &[("pockets", Setting::Int(38))],
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("pockets"), "{e}");
    let mut t = table(GameId::RouletteFrench, &[]);
    t.regulation = Some("P1/1999".into());
    assert!(matches!(
        RouletteEngine::configure(&t),
        Err(ConfigError::Regulation { .. })
    ));
    let mut t = table(GameId::RouletteFrench, &[]);
    t.limits = vec![ChanceLimit {
        chance: "plein".into(),
        min_cents: None,
        max_cents: None,
    }];
    assert!(
        RouletteEngine::configure(&t)
            .unwrap_err()
            .to_string()
            .contains("plein")
    );
    assert!(matches!(
        RouletteEngine::configure(&TableConfig::new(GameId::Craps)),
        Err(ConfigError::WrongGame { .. })
    ));
}

// ---- Record errors ----

#[test]
fn unreadable_records_are_round_errors_and_leave_state() {
    let c = french();
    let st0 = RouletteState {
        last_number: Some(5),
        ..Default::default()
    };
    for events in [
        vec![
            bet("a", "red", &[], 100),
            bet("a", "black", &[], 100),
            ball(1),
        ],
        vec![bet("a", "red", &[], 0), ball(1)],
        vec![bet("a", "red", &[], MAX_AMOUNT_CENTS + 1), ball(1)],
        vec![bet("a", "straight", &[37], 100), ball(1)],
        vec![bet("a", "red", &[], 100), ball(37)],
        vec![bet("a", "red", &[], 100)],
        vec![bet("a", "red", &[], 100), ball(1), ball(2)],
        vec![
            EventKind::BetWithdrawn {
                bet_id: "zz".into(),
            }
            .into(),
            ball(1),
        ],
        vec![pay("zz"), ball(1)],
        vec![chips_bet("g", "series_grande", &[], 901, 9), ball(1)],
        vec![chips_bet("g", "series_grande", &[], 900, 0), ball(1)],
        vec![
            chips_bet("g", "series_grande", &[], 900, 9),
            EventKind::BetChanged {
                bet_id: "g".into(),
                amount_cents: 901,
            }
            .into(),
            ball(1),
        ],
        vec![bet("g", "series_grande", &[], 900), ball(1)],
        vec![
            EventKind::Void {
                reason: "bored".into(),
            }
            .into(),
            ball(1),
        ],
        vec![
            EventKind::Dice {
                dice: vec![1, 2],
                chosen_from: None,
            }
            .into(),
            ball(1),
        ],
    ] {
        let mut st = st0.clone();
        assert!(
            RouletteEngine::adjudicate(&c, &mut st, &round(events.clone()), &Options::default())
                .is_err(),
            "{events:?}"
        );
        assert_eq!(st, st0);
    }
}

#[test]
fn honest_round_has_no_findings_and_explains() {
    let mut t = table(GameId::RouletteFrench, &[]);
    t.min_bet_cents = Some(100);
    t.max_bet_cents = Some(3000);
    t.limits = vec![ChanceLimit {
        chance: "red".into(),
        min_cents: None,
        max_cents: Some(54_000),
    }];
    let c = RouletteEngine::configure(&t).unwrap().config;
    let r = settled(
        vec![
            bet("a", "red", &[], 1000),
            bet("b", "straight", &[17], 500),
            nmb(),
            ball(17),
            collect(&["a"]),
            pay("b"),
        ],
        &[("a", -1000), ("b", 17500)],
    );
    let mut st = RouletteState::default();
    let a = RouletteEngine::adjudicate(&c, &mut st, &r, &Options { explain: true }).unwrap();
    assert!(
        a.violations.is_empty() && a.discrepancies.is_empty(),
        "{a:?}"
    );
    assert!(a.notes.len() >= 3);
    let quiet =
        RouletteEngine::adjudicate(&c, &mut RouletteState::default(), &r, &Options::default())
            .unwrap();
    assert!(quiet.notes.is_empty());
}

// ---- Outcomes, explanations, faults ----

/// P217/2007 T.I C.I S.I r.27(c), r.27(d): a series or neighbours bet is won when its
/// components net a gain, lost when they net a loss.
#[test]
fn r27cd_announced_bets_outcome_follows_their_net() {
    for (p, outcome, reason) in [
        (26u8, Outcome::Won, "winning component paid"),
        (1, Outcome::Lost, "every chip lost"),
    ] {
        let a = run(
            &american(),
            vec![
                chips_bet("g", "series_grande", &[], 900, 9),
                chips_bet("n", "neighbours", &[26], 300, 3),
                nmb(),
                ball(p),
            ],
        );
        for id in ["g", "n"] {
            let b = a.bet(id).unwrap();
            assert_eq!(b.outcome, outcome, "{id} on {p}");
            assert_eq!(b.due_net_cents.signum(), if p == 1 { -1 } else { 1 });
        }
        assert!(a.bet("g").unwrap().reason.contains(reason), "{p}");
    }
}

/// P217/2007 T.I C.I S.I r.6: the explanation names the pocket's colour, 0 having none.
#[test]
fn r6_explanation_names_the_colour() {
    for (p, colour) in [
        (0u8, "zero"),
        (32, "red"),
        (1, "red"),
        (36, "red"),
        (2, "black"),
        (35, "black"),
    ] {
        let r = round(vec![bet("a", "red", &[], 100), nmb(), ball(p)]);
        let a = RouletteEngine::adjudicate(
            &french(),
            &mut RouletteState::default(),
            &r,
            &Options { explain: true },
        )
        .unwrap();
        let want = format!("the ball rested in {p} ({colour})");
        assert!(
            a.notes.iter().any(|n| n.text == want),
            "{want}: {:?}",
            a.notes
        );
    }
}

/// Land faults (a damaged or lost ball, S.I r.18; disturbed bets, S.I r.31) are informational;
/// any other fault, and any fault online (R807/2015 has none), is a record error.
#[test]
fn faults_land_informational_others_refused() {
    let fault = |code: &str| -> RoundEvent {
        EventKind::Fault {
            code: code.into(),
            seat: None,
            detail: None,
        }
        .into()
    };
    for code in ["ball_damaged", "ball_lost", "bets_disturbed"] {
        for cfg in [american(), french()] {
            let a = run(
                &cfg,
                vec![bet("a", "red", &[], 100), fault(code), nmb(), ball(1)],
            );
            assert!(a.violations.is_empty(), "{code}");
            assert_eq!(net(&a, "a"), 100);
        }
        let r = round(vec![bet("a", "red", &[], 100), fault(code), nmb(), ball(1)]);
        let e = RouletteEngine::adjudicate(
            &online(),
            &mut RouletteState::default(),
            &r,
            &Options::default(),
        );
        assert!(e.is_err(), "online {code}");
    }
    let r = round(vec![
        bet("a", "red", &[], 100),
        fault("ball_dropped"),
        nmb(),
        ball(1),
    ]);
    let e = RouletteEngine::adjudicate(
        &french(),
        &mut RouletteState::default(),
        &r,
        &Options::default(),
    );
    assert!(e.is_err());
}

/// P217/2007 T.I C.I S.I r.25(a), r.27(c): a series whose stake is changed before the call
/// settles at its new stake, a whole number of its chips.
#[test]
fn r27c_changed_series_settles_at_its_new_stake() {
    let a = run(
        &american(),
        vec![
            chips_bet("g", "series_grande", &[], 900, 9),
            EventKind::BetChanged {
                bet_id: "g".into(),
                amount_cents: 1800,
            }
            .into(),
            nmb(),
            ball(26),
        ],
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "g"), 1800);
}

/// P217/2007 T.I C.I S.I r.33: a spinner recorded by seat is kept as `seat:N`, and the same
/// seat named again does not restart its hour.
#[test]
fn r33_spinner_by_seat() {
    let c = american();
    let mut st = RouletteState::default();
    let seat = || EventKind::Role {
        role: "spinner".into(),
        seat: Some(3),
        player: None,
    };
    let l = || EventKind::Launch {
        ball_direction: None,
        wheel_direction: None,
        from_pocket: None,
        ball_id: None,
    };
    let a = run_round(
        &c,
        &mut st,
        &round(vec![timed(0, seat()), timed(10, l()), ball(1)]),
    );
    assert!(a.violations.is_empty());
    assert_eq!(st.spinner.as_deref(), Some("seat:3"));
    assert_eq!(st.spinner_since_ms, Some(0));
    let a = run_round(
        &c,
        &mut st,
        &round(vec![
            timed(3_000_000, seat()),
            timed(3_600_001, l()),
            ball(2),
        ]),
    );
    assert!(
        a.has_violation("RL_DEALER_OVER_ONE_HOUR"),
        "{:?}",
        a.violations
    );
    assert_eq!(st.spinner_since_ms, Some(0));
}

/// The colour-chip procedures exist only in American roulette (P217/2007 T.I C.I S.I r.9-r.15),
/// `result_shown` only online (R807/2015 r.5): elsewhere each is a record error.
#[test]
fn procedures_only_in_their_game() {
    let proc_ = |name: &str, value: &str| -> RoundEvent {
        EventKind::Procedure {
            name: name.into(),
            value: Some(value.into()),
            seat: Some(1),
            amount_cents: Some(100),
        }
        .into()
    };
    let adjudicate = |cfg: &rules_roulette::RouletteConfig, e: RoundEvent| {
        RouletteEngine::adjudicate(
            cfg,
            &mut RouletteState::default(),
            &round(vec![bet("a", "red", &[], 100), e, nmb(), ball(1)]),
            &Options::default(),
        )
    };
    for (name, value) in [
        ("colour_value", "blue"),
        ("late_chip_exchange", "1"),
        ("colour_lost", "blue"),
    ] {
        assert!(
            adjudicate(&american(), proc_(name, value)).is_ok(),
            "{name}"
        );
        assert!(adjudicate(&french(), proc_(name, value)).is_err(), "{name}");
        assert!(adjudicate(&online(), proc_(name, value)).is_err(), "{name}");
    }
    // a late exchange names 1 to 1,000,000 chips (S.I r.15)
    for chips in ["0", "-1", "1000001", "x"] {
        assert!(
            adjudicate(&american(), proc_("late_chip_exchange", chips)).is_err(),
            "{chips}"
        );
    }
    assert!(adjudicate(&american(), proc_("late_chip_exchange", "1000000")).is_ok());
    assert!(adjudicate(&online(), proc_("result_shown", "1")).is_ok());
    assert!(adjudicate(&french(), proc_("result_shown", "1")).is_err());
    assert!(adjudicate(&american(), proc_("result_shown", "1")).is_err());
}

/// P217/2007 T.I C.I S.II r.20: the French payment order, category by category (columns,
/// dozens, simple chances, lines, streets, corners, splits, straights): in order is clean, any
/// two neighbouring categories paid the other way round is a finding.
#[test]
fn s2_r20_french_payment_order_every_category() {
    let order: [(&str, &[u8]); 8] = [
        ("column", &[1]),
        ("dozen", &[1]),
        ("red", &[]),
        ("line", &[1, 2, 3, 4, 5, 6]),
        ("street", &[1, 2, 3]),
        ("corner", &[1, 2, 4, 5]),
        ("split", &[1, 2]),
        ("straight", &[1]),
    ];
    let players = ["A", "B", "C", "D", "E", "F", "G", "H"];
    let mut bets: Vec<RoundEvent> = order
        .iter()
        .zip(players)
        .map(|((t, sel), p)| pbet(t, t, sel, p))
        .collect();
    bets.extend([nmb(), ball(1)]);
    let mut ok = bets.clone();
    ok.extend(order.iter().map(|(t, _)| pay(t)));
    let a = run(&french(), ok);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    for i in 0..order.len() - 1 {
        let mut swapped = bets.clone();
        let mut ids: Vec<&str> = order.iter().map(|(t, _)| *t).collect();
        ids.swap(i, i + 1);
        swapped.extend(ids.iter().map(|t| pay(t)));
        let a = run(&french(), swapped);
        assert!(
            a.has_violation("RL_PAYOUT_ORDER"),
            "{} before {}",
            ids[i],
            ids[i + 1]
        );
    }
}

/// R807/2015 r.6(d), r.10: a line (two rows) is a legal layout combination for a call-bet
/// group; it covers numbers outside orphelins, so it is refused for the coverage of r.8(c),
/// not as an impossible combination (six numbers that are not two rows are).
#[test]
fn r807_r8_composition_line_group() {
    let orfaos = |extra: &[i64]| {
        let mut v = vec![
            1, 1, 1, 1, 2, 6, 9, 1, 2, 14, 17, 1, 2, 17, 20, 1, 2, 31, 34,
        ];
        v.extend_from_slice(extra);
        RouletteEngine::configure(&table(
            GameId::RouletteFrenchOnline,
            &[
                ("zero_rule", text("lose")),
                ("call_series_orfaos", Setting::List(v)),
            ],
        ))
    };
    assert!(orfaos(&[]).is_ok());
    let e = orfaos(&[1, 6, 1, 2, 3, 4, 5, 6]).unwrap_err().to_string();
    assert!(e.contains("must cover exactly"), "{e}");
    let e = orfaos(&[1, 6, 1, 2, 3, 4, 5, 7]).unwrap_err().to_string();
    assert!(e.contains("not a combination of the layout"), "{e}");
}
