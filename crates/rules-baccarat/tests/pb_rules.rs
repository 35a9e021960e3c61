//! Ponto e banca and Macau: one test per rule (named with its citation) and every code of the
//! digest's "What an auditor can check" table (section 8).

mod common;
use common::*;
use rules_baccarat::{BaccaratEngine, BaccaratState};
use rules_core::{
    Bet, ChanceLimit, Confidence, Engine, EventKind, Outcome, Setting, Severity, TableConfig,
};

fn coup(bets: Vec<EventKind>, spec: &str) -> rules_core::Round {
    let mut ev = bets;
    ev.push(nmb());
    ev.extend(cards(spec));
    round(ev)
}

fn plain_with_limits() -> TableConfig {
    let mut t = pb("5pct");
    t.min_bet_cents = Some(500);
    t.max_bet_cents = Some(35_000);
    t.limits = vec![
        ChanceLimit {
            chance: "tie".into(),
            min_cents: Some(500),
            max_cents: Some(7_500),
        },
        ChanceLimit {
            chance: "pair_ponto".into(),
            min_cents: Some(500),
            max_cents: Some(4_000),
        },
        ChanceLimit {
            chance: "pair_banca".into(),
            min_cents: Some(500),
            max_cents: Some(4_000),
        },
    ];
    t.settings
        .insert("pairs_offered".into(), Setting::Bool(true));
    t
}

// ---------------------------------------------------------------- the coup (r.9, r.13, r.14)

/// P217/2007 T.I C.III S.III r.13, r.14 (digest note 2): a card after a natural is removed.
#[test]
fn r13_ponto_card_after_natural_removed() {
    let r = coup(
        vec![bet("p", "ponto", 1000), bet("b", "banca", 1000)],
        "p:9S b:2H p:KC b:3S p:4D",
    );
    let a = run(&pb("none"), &r);
    assert_eq!(codes(&a), vec!["PB_PONTO_DREW_AGAINST_TABLEAU"]);
    assert_eq!(net(&a, "p"), 1000, "ponto 9 beats 5 once the 4D is removed");
    assert_eq!(a.violations[0].severity, Severity::High);
}

/// P217/2007 T.I C.III S.III r.13: ponto on 6 stands; his card is removed; the banca's decision
/// is judged against the card on the table when it was taken.
#[test]
fn r13_ponto_six_stands() {
    // Banca 7 stands either way.
    let r = coup(vec![bet("p", "ponto", 1000)], "p:6S b:4H p:KC b:3S p:2D");
    let a = run(&pb("none"), &r);
    assert_eq!(codes(&a), vec!["PB_PONTO_DREW_AGAINST_TABLEAU"]);
    assert_eq!(net(&a, "p"), -1000, "ponto 6 loses to banca 7");
}

/// Digest section 5: when the ponto's wrong card is removed the banca's card falls with it if
/// the banca must now stand, reported under the ponto's code only.
#[test]
fn r14_consequential_removal_reported_once() {
    // Ponto 7 drew 6D (wrong). Banca 6 against a 6 draws (right, given the card): 9C.
    // Corrected: ponto 7 stood, banca 6 stands: ponto 7 beats 6.
    let r = coup(
        vec![bet("p", "ponto", 1000)],
        "p:7S b:6H p:KC b:KS p:6D b:9C",
    );
    let a = run(&pb("none"), &r);
    assert_eq!(codes(&a), vec!["PB_PONTO_DREW_AGAINST_TABLEAU"]);
    assert_eq!(net(&a, "p"), 1000);
}

/// P217/2007 T.I C.III S.III r.13: ponto on 0-5 must draw; a missing card cannot be supplied
/// without the casino's correction (digest note 3): settled as played, for review.
#[test]
fn r13_ponto_not_drawn() {
    let r = coup(vec![bet("p", "ponto", 1000)], "p:2S b:5H p:KC b:2D");
    let a = run(&pb("none"), &r);
    assert_eq!(codes(&a), vec!["PB_PONTO_NOT_DRAWN"]);
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    assert_eq!(net(&a, "p"), -1000);
}

/// P217/2007 T.I C.III S.III r.13: banca 5 against a ponto who stood must draw.
#[test]
fn r13_banca_not_drawn() {
    let r = coup(vec![bet("b", "banca", 1000)], "p:7S b:2H p:KC b:3D");
    let a = run(&pb("none"), &r);
    assert_eq!(codes(&a), vec!["PB_BANCA_NOT_DRAWN"]);
}

/// P217/2007 T.I C.III S.III r.13 ¶3: only one more card per side.
#[test]
fn r13_too_many_cards() {
    let r = coup(
        vec![bet("p", "ponto", 1000)],
        "p:2S b:7H p:KC b:KD p:3C p:4C",
    );
    let a = run(&pb("none"), &r);
    assert_eq!(codes(&a), vec!["PB_TOO_MANY_CARDS"]);
    assert_eq!(net(&a, "p"), -1000, "ponto 5 (the 4C removed) loses to 7");
}

/// P217/2007 T.I C.III S.III r.13: P, B, P, B, the ponto's card first.
#[test]
fn r13_deal_order() {
    let a = run(
        &pb("none"),
        &coup(vec![bet("p", "ponto", 1000)], "p:7S p:KC b:2H b:4S"),
    );
    assert_eq!(codes(&a), vec!["PB_DEAL_ORDER"]);
    assert_eq!(a.violations[0].severity, Severity::Low);
    let a = run(
        &pb("none"),
        &coup(
            vec![bet("p", "ponto", 1000)],
            "p:2S b:5H p:KC b:KD b:3C p:4C",
        ),
    );
    assert!(has(&a, "PB_DEAL_ORDER"));
}

/// P217/2007 T.I C.III S.III r.14: the casino's recorded correction is followed and checked.
#[test]
fn r14_recorded_correction() {
    // Ponto 7 wrongly drew 8D; with the ponto standing banca 3 must draw: the casino moves the
    // 8D to the banca (3 + 8 = 1). Ponto 7 beats 1.
    let ev = cat(vec![
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7S b:2H p:KC b:AS p:8D"),
        vec![proc_v("card_to_banca", "8D")],
    ]);
    let a = run(&pb("none"), &round(ev));
    assert_eq!(codes(&a), vec!["PB_PONTO_DREW_AGAINST_TABLEAU"]);
    assert_eq!(a.violations[0].confidence, Confidence::Certain);
    assert_eq!(net(&a, "p"), 1000);
    // Without a correction the banca lacks its card: the finding goes to review.
    let a = run(
        &pb("none"),
        &coup(vec![bet("p", "ponto", 1000)], "p:7S b:2H p:KC b:AS p:8D"),
    );
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    // A correction that breaks the tableau itself is reported.
    let ev = cat(vec![
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7S b:2H p:KC b:5S p:8D"),
        vec![proc_v("card_to_banca", "8D")],
    ]);
    let a = run(&pb("none"), &round(ev));
    assert_eq!(
        codes(&a),
        vec![
            "PB_BANCA_DREW_AGAINST_TABLEAU",
            "PB_PONTO_DREW_AGAINST_TABLEAU"
        ]
    );
    assert_eq!(
        net(&a, "p"),
        0,
        "the 8D removed: ponto 7 ties banca 2+5 = 7"
    );
}

/// P217/2007 T.I C.III S.III r.14: a coup null for an uncorrectable lapse returns every bet.
#[test]
fn r14_uncorrectable_lapse() {
    let ev = cat(vec![
        vec![bet("p", "ponto", 1000), bet("t", "tie", 500), nmb()],
        cards("p:7S b:2H"),
        vec![void("uncorrectable_lapse")],
    ]);
    let a = run(&pb("none"), &round(ev));
    assert_eq!(codes(&a), vec!["PB_UNCORRECTABLE_LAPSE"]);
    assert!(a.void.is_some());
    assert!(
        a.bets
            .iter()
            .all(|b| b.due_net_cents == 0 && b.outcome == Outcome::Void)
    );
}

/// P217/2007 T.I C.III S.III r.8: a card found face up in the shoe is valid.
#[test]
fn r8_face_up_card_is_valid() {
    let a = run(
        &pb("none"),
        &coup(vec![bet("p", "ponto", 1000)], "p:7D b:2H pu:KC b:4S"),
    );
    assert!(a.violations.is_empty());
    assert_eq!(net(&a, "p"), 1000);
}

// ---------------------------------------------------------------- payouts (r.17-r.20)

/// P217/2007 T.I C.III S.III r.17, r.18: a tie pays 8 to 1 and leaves ponto and banca standing.
#[test]
fn r18_tie() {
    let a = run(
        &pb("5pct"),
        &coup(
            vec![
                bet("p", "ponto", 1000),
                bet("b", "banca", 1000),
                bet("t", "tie", 1000),
            ],
            "p:7D b:7H p:KC b:KS",
        ),
    );
    assert_eq!((net(&a, "p"), net(&a, "b"), net(&a, "t")), (0, 0, 8000));
    assert_eq!(a.bet("p").unwrap().outcome, Outcome::Push);
}

/// P217/2007 T.I C.III S.III r.19: pairs pay 11 to 1, in addition to r.17/r.18.
#[test]
fn r19_pairs() {
    let t = set(pb("5pct"), "pairs_offered", Setting::Bool(true));
    let a = run(
        &t,
        &coup(
            vec![bet("pp", "pair_ponto", 1000), bet("bp", "pair_banca", 1000)],
            "p:4D b:QH p:4C b:KS",
        ),
    );
    assert_eq!((net(&a, "pp"), net(&a, "bp")), (11_000, -1000));
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.III S.III r.20: a non-integral commission is rounded by the table's setting
/// and reported for review (digest note 4); within the tolerance the casino's rounding is no
/// wrong payout.
#[test]
fn r20_commission_rounding() {
    let r = with_settlement(
        coup(
            vec![bet("b", "banca", 1010)],
            "p:3S b:4D p:AH b:AS p:4C b:4H",
        ),
        &[("b", 959)],
    );
    let a = run(&pb("5pct"), &r);
    assert_eq!(net(&a, "b"), 960);
    assert_eq!(codes(&a), vec!["PB_COMMISSION_ROUNDING"]);
    assert_eq!(a.discrepancies.len(), 1);
    let t = set(
        set(pb("5pct"), "commission_tolerance_cents", Setting::Int(1)),
        "commission_rounding",
        Setting::Text("half_even".into()),
    );
    let a = run(&t, &r);
    assert_eq!(net(&a, "b"), 960);
    assert!(a.discrepancies.is_empty());
}

/// P217/2007 T.I C.III S.III r.20: a deduction applied without the option, and a table
/// configured with both deductions.
#[test]
fn r20_commission_option_invalid() {
    let r = with_settlement(
        coup(
            vec![bet("b", "banca", 4000)],
            "p:3S b:4D p:AH b:AS p:4C b:4H",
        ),
        &[("b", 3800)],
    );
    let a = run(&pb("none"), &r);
    assert!(has(&a, "PB_COMMISSION_OPTION_INVALID"));
    assert_eq!(a.discrepancies.len(), 1);
    let mut t = pb("5pct+half_on_5");
    t.commission = Some("5pct+half_on_5".into());
    let c = BaccaratEngine::configure(&t).unwrap();
    assert_eq!(c.violations.len(), 1);
    assert_eq!(c.violations[0].code, "PB_COMMISSION_OPTION_INVALID");
    assert!(BaccaratEngine::configure(&pb("10pct")).is_err());
}

/// Digest note 5: pair prizes are never reduced; a deduction is flagged for review.
#[test]
fn r20_pair_prize_not_reduced() {
    let t = set(pb("5pct"), "pairs_offered", Setting::Bool(true));
    // Banca pair 4D 4H, banca wins (8 against 7).
    let r = with_settlement(
        coup(vec![bet("bp", "pair_banca", 1000)], "p:7S b:4D p:KC b:4H"),
        &[("bp", 10_450)],
    );
    let a = run(&t, &r);
    assert_eq!(net(&a, "bp"), 11_000);
    assert!(has(&a, "PB_PAIR_COMMISSION_DEDUCTED"));
    assert_eq!(a.discrepancies.len(), 1);
}

// ---------------------------------------------------------------- shoe (r.5-r.7, r.13 ¶2)

/// P217/2007 T.I C.III S.III r.6, r.13 ¶2: the first 8 cards burned, then one per coup.
#[test]
fn r6_r13_burns() {
    let t = pb("none");
    let mut st = BaccaratState::default();
    let first = round(cat(vec![
        vec![proc_("shuffle"), proc_("cut")],
        cards("x:2C x:3C x:4C x:5C x:6C x:7C x:8C x:9C"),
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7D b:2H p:KC b:4S"),
    ]));
    assert!(run_state(&t, &mut st, &first).violations.is_empty());
    let second = round(cat(vec![
        vec![bet("p", "ponto", 1000), nmb()],
        cards("x:2D p:7D b:2H p:KC b:4S"),
    ]));
    assert!(
        run_state(&t, &mut st.clone(), &second)
            .violations
            .is_empty()
    );
    let no_burn = round(cat(vec![
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7D b:2H p:KC b:4S"),
    ]));
    let a = run_state(&t, &mut st.clone(), &no_burn);
    assert_eq!(codes(&a), vec!["PB_BURN_MISSING"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.I C.III S.III r.13");
    // Only 3 cards burned after the shuffle.
    let mut st = BaccaratState::default();
    let short = round(cat(vec![
        vec![proc_("shuffle")],
        cards("x:2C x:3C x:4C"),
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7D b:2H p:KC b:4S"),
    ]));
    let a = run_state(&t, &mut st, &short);
    assert_eq!(codes(&a), vec!["PB_BURN_MISSING"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.I C.III S.III r.6");
}

/// P217/2007 T.I C.III S.III r.5: with a continuous shuffler a missing burn is informational.
#[test]
fn r5_continuous_shuffler_burn_informational() {
    let t = set(pb("none"), "continuous_shuffler", Setting::Bool(true));
    let a = run(
        &t,
        &coup(vec![bet("p", "ponto", 1000)], "p:7D b:2H p:KC b:4S"),
    );
    assert_eq!(codes(&a), vec!["PB_BURN_MISSING"]);
    assert_eq!(a.violations[0].severity, Severity::Info);
}

/// P217/2007 T.I C.III S.III r.7: no coup after the warning-card coup without a reshuffle.
#[test]
fn r7_coup_after_last_of_shoe() {
    let t = pb("none");
    let mut st = BaccaratState::default();
    let last = round(cat(vec![
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7D b:2H"),
        vec![proc_("warning_card")],
        cards("p:KC b:4S"),
    ]));
    assert!(run_state(&t, &mut st, &last).violations.is_empty());
    let after = coup(vec![bet("p", "ponto", 1000)], "p:7D b:2H p:KC b:4S");
    let a = run_state(&t, &mut st.clone(), &after);
    assert_eq!(codes(&a), vec!["PB_COUP_AFTER_LAST_OF_SHOE"]);
    // After a reshuffle (and its 8 burns) it is fine.
    let fresh = round(cat(vec![
        vec![proc_("shuffle")],
        cards("x:2C x:3C x:4C x:5C x:6C x:7C x:8C x:9C"),
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7D b:2H p:KC b:4S"),
    ]));
    assert!(run_state(&t, &mut st, &fresh).violations.is_empty());
}

// ---------------------------------------------------------------- bets and limits

/// P217/2007 T.I C.III S.III r.11: pairs only where the operator offers them.
#[test]
fn r11_pair_not_offered() {
    let a = run(
        &pb("none"),
        &coup(vec![bet("pp", "pair_ponto", 1000)], "p:7D b:2H p:KC b:4S"),
    );
    assert_eq!(codes(&a), vec!["PB_PAIR_NOT_OFFERED"]);
    assert_eq!(net(&a, "pp"), -1000, "settled as accepted");
}

/// P217/2007 T.I C.III S.III r.12: a bet after "nada mais" is flagged and settled.
#[test]
fn r12_late_bet() {
    let ev = cat(vec![
        vec![nmb(), bet("p", "ponto", 1000)],
        cards("p:7D b:2H p:KC b:4S"),
    ]);
    let a = run(&pb("none"), &round(ev));
    assert_eq!(codes(&a), vec!["PB_LATE_BET"]);
    assert_eq!(net(&a, "p"), 1000);
    let ev = cat(vec![
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7D b:2H"),
        vec![EventKind::BetChanged {
            bet_id: "p".into(),
            amount_cents: 5000,
        }],
        cards("p:KC b:4S"),
    ]);
    let a = run(&pb("none"), &round(ev));
    assert_eq!(codes(&a), vec!["PB_LATE_BET"]);
    assert_eq!(net(&a, "p"), 5000);
}

/// P217/2007 T.I C.III S.III r.21: minimum and maximum per chance.
#[test]
fn r21_min_max() {
    let t = plain_with_limits();
    let a = run(
        &t,
        &coup(
            vec![
                bet("p", "ponto", 400),
                bet("b", "banca", 40_000),
                bet("t", "tie", 8000),
            ],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert_eq!(
        codes(&a),
        vec!["PB_BET_ABOVE_MAX", "PB_BET_ABOVE_MAX", "PB_BET_BELOW_MIN"]
    );
    assert_eq!(net(&a, "b"), -40_000, "settled as accepted (note 7)");
}

/// P217/2007 T.I C.III S.III r.21: 70 ×, 15 ×, 8 × (digest note 8: a cap; below is a note).
#[test]
fn r21_limit_ratios() {
    assert!(
        BaccaratEngine::configure(&plain_with_limits())
            .unwrap()
            .violations
            .is_empty()
    );
    let mut t = plain_with_limits();
    t.max_bet_cents = Some(50_000);
    let v = BaccaratEngine::configure(&t).unwrap().violations;
    assert_eq!(v.len(), 2);
    assert!(
        v.iter()
            .all(|v| v.code == "PB_LIMIT_RATIO_INVALID" && v.severity == Severity::Medium)
    );
    t.max_bet_cents = Some(30_000);
    let v = BaccaratEngine::configure(&t).unwrap().violations;
    assert!(
        v.iter()
            .all(|v| v.severity == Severity::Low && v.confidence == Confidence::Review)
    );
    // Macau has no maximum (S.IV r.21): no ratio check.
    let mut m = macau("none", 100_000);
    m.min_bet_cents = Some(500);
    m.max_bet_cents = Some(1_000_000);
    assert!(BaccaratEngine::configure(&m).unwrap().violations.is_empty());
}

/// P217/2007 T.I C.III S.III r.12: a standing bettor never bets against the adjacent seat and
/// complements it only up to the maximum.
#[test]
fn r12_standing_bettors_plain() {
    let t = plain_with_limits();
    let standing = |id: &str, ty: &str, amount: i64| {
        bet_full(
            Bet::new(id, ty, amount)
                .seat(3)
                .player(id)
                .attr("standing", "true"),
        )
    };
    let a = run(
        &t,
        &coup(
            vec![
                bet_at("s", "ponto", 30_000, 3),
                standing("x", "banca", 1000),
            ],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert_eq!(codes(&a), vec!["PB_STANDING_BET_AGAINST_SEAT"]);
    let a = run(
        &t,
        &coup(
            vec![
                bet_at("s", "ponto", 30_000, 3),
                standing("x", "ponto", 10_000),
            ],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert_eq!(codes(&a), vec!["PB_STANDING_COMPLEMENT_EXCEEDS_MAX"]);
    let a = run(
        &t,
        &coup(
            vec![
                bet_at("s", "ponto", 30_000, 3),
                standing("x", "ponto", 5_000),
            ],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Digest note 9: a standing tie bet next to a ponto seat is not "against" it.
    let a = run(
        &t,
        &coup(
            vec![bet_at("s", "ponto", 30_000, 3), standing("x", "tie", 1_000)],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.I C.III S.III/S.IV r.2, r.12: standing bettors only in the gaps between seats.
#[test]
fn r12_standing_capacity() {
    let mut t = pb("none");
    t.seats = Some(7);
    let mut bets: Vec<EventKind> = (0..7)
        .map(|i| {
            bet_full(
                Bet::new(&format!("x{i}"), "ponto", 1000)
                    .seat(1 + i as u8)
                    .player(&format!("s{i}"))
                    .attr("standing", "true"),
            )
        })
        .collect();
    let a = run(&t, &coup(bets.clone(), "p:7D b:2H p:KC b:4S"));
    assert_eq!(codes(&a), vec!["PB_STANDING_OVER_CAPACITY"]);
    bets.pop();
    assert!(
        run(&t, &coup(bets, "p:7D b:2H p:KC b:4S"))
            .violations
            .is_empty()
    );
}

/// P217/2007 T.I C.III S.IV r.12: in Macau standing players may bet freely, even against the
/// seat.
#[test]
fn s4_r12_standing_bets_free() {
    let t = macau("none", 1_000_000);
    let a = run(
        &t,
        &coup(
            vec![
                bet_at("s", "ponto", 30_000, 3),
                bet_full(
                    Bet::new("x", "banca", 29_000)
                        .seat(3)
                        .attr("standing", "true"),
                ),
            ],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.I C.III S.IV r.11: one player on both ponto and banca keeps a difference of at
/// least the table minimum.
#[test]
fn s4_r11_both_sides() {
    let mut t = macau("none", 1_000_000);
    t.min_bet_cents = Some(1000);
    let a = run(
        &t,
        &coup(
            vec![bet_at("p", "ponto", 5000, 2), bet_at("b", "banca", 5500, 2)],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert_eq!(codes(&a), vec!["PB_MACAU_BOTH_SIDES_DIFF_BELOW_MIN"]);
    let a = run(
        &t,
        &coup(
            vec![bet_at("p", "ponto", 5000, 2), bet_at("b", "banca", 6000, 2)],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert!(a.violations.is_empty());
}

/// P217/2007 T.I C.III S.IV r.22-r.25: exposure, ties and pairs against M.
#[test]
fn s4_r22_r25_exposure_caps() {
    let t = set(macau("none", 100_000), "pairs_offered", Setting::Bool(true));
    let a = run(
        &t,
        &coup(
            vec![bet("p", "ponto", 150_000), bet("b", "banca", 40_000)],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert_eq!(codes(&a), vec!["PB_MACAU_EXPOSURE_EXCEEDED"]);
    let a = run(
        &t,
        &coup(
            vec![
                bet("pp", "pair_ponto", 8_001),
                bet("bp", "pair_banca", 8_000),
                bet("t", "tie", 10_000),
            ],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert_eq!(
        codes(&a),
        vec!["PB_MACAU_PAIR_TOTAL_EXCEEDED"],
        "per pair chance (note 6), ties at exactly 10%"
    );
    assert!(BaccaratEngine::configure(&macau("none", 0)).is_err());
    assert!(
        BaccaratEngine::configure(&table(rules_core::GameId::BaccaratMacau)).is_err(),
        "M is required"
    );
}

// ---------------------------------------------------------------- records that make no sense

#[test]
fn round_errors_name_the_event_or_bet() {
    let t = pb("none");
    let e = run_err(
        &t,
        &coup(
            vec![bet("p", "ponto", 1000), bet("p", "banca", 1000)],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert!(e.to_string().contains("duplicate"), "{e}");
    let e = run_err(&t, &coup(vec![bet("p", "ponto", 0)], "p:7D b:2H p:KC b:4S"));
    assert!(e.to_string().contains("`p`"), "{e}");
    let e = run_err(
        &t,
        &coup(
            vec![bet("p", "ponto", rules_core::MAX_AMOUNT_CENTS + 1)],
            "p:7D b:2H p:KC b:4S",
        ),
    );
    assert!(e.to_string().contains("ceiling"), "{e}");
    let e = run_err(
        &t,
        &coup(vec![bet("p", "straight", 1000)], "p:7D b:2H p:KC b:4S"),
    );
    assert!(e.to_string().contains("straight"), "{e}");
    let e = run_err(&t, &coup(vec![bet("p", "ponto", 1000)], "p:7D b:2H p:KC"));
    assert!(e.to_string().contains("incomplete"), "{e}");
    let ev = cat(vec![
        vec![
            bet("p", "ponto", 1000),
            EventKind::BetWithdrawn {
                bet_id: "zz".into(),
            },
            nmb(),
        ],
        cards("p:7D b:2H p:KC b:4S"),
    ]);
    let e = run_err(&t, &round(ev));
    assert!(
        e.to_string().contains("zz") && e.to_string().contains("event 1"),
        "{e}"
    );
    let ev = cat(vec![
        vec![bet("p", "ponto", 1000), nmb(), decide(1, "hit")],
        cards("p:7D b:2H p:KC b:4S"),
    ]);
    assert!(run_err(&t, &round(ev)).to_string().contains("decision"));
    let ev = cat(vec![
        vec![bet("p", "ponto", 1000), nmb()],
        cards("p:7D b:2H p:KC b:4S"),
        vec![proc_v("card_annulled", "AS")],
    ]);
    assert!(run_err(&t, &round(ev)).to_string().contains("AS"));
}

/// Configuration errors name the field or setting.
#[test]
fn config_errors() {
    let t = set(pb("none"), "pairs", Setting::Bool(true));
    assert!(
        BaccaratEngine::configure(&t)
            .unwrap_err()
            .to_string()
            .contains("pairs")
    );
    let mut t = pb("none");
    t.regulation = Some("P817/2005".into());
    assert!(BaccaratEngine::configure(&t).is_err());
    let mut t = pb("none");
    t.limits = vec![ChanceLimit {
        chance: "dragon".into(),
        min_cents: None,
        max_cents: None,
    }];
    assert!(
        BaccaratEngine::configure(&t)
            .unwrap_err()
            .to_string()
            .contains("dragon")
    );
}
