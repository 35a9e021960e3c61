//! Every code of both digests' "What an auditor can check" tables is produced by at least one
//! record, and an honest coup produces none.

mod common;
use common::*;
use rules_baccarat::{BaccaratEngine, BaccaratState};
use rules_core::{Bet, Engine, EventKind, Round, Setting, TableConfig};
use std::collections::BTreeSet;

/// PB digest section 8.
const PB_CODES: &[&str] = &[
    "PB_PONTO_DREW_AGAINST_TABLEAU",
    "PB_BANCA_DREW_AGAINST_TABLEAU",
    "PB_PONTO_NOT_DRAWN",
    "PB_BANCA_NOT_DRAWN",
    "PB_TOO_MANY_CARDS",
    "PB_DEAL_ORDER",
    "PB_BURN_MISSING",
    "PB_COUP_AFTER_LAST_OF_SHOE",
    "PB_UNCORRECTABLE_LAPSE",
    "PB_WRONG_PAYOUT",
    "PB_COMMISSION_OPTION_INVALID",
    "PB_PAIR_NOT_OFFERED",
    "PB_BET_ABOVE_MAX",
    "PB_BET_BELOW_MIN",
    "PB_LIMIT_RATIO_INVALID",
    "PB_STANDING_BET_AGAINST_SEAT",
    "PB_STANDING_COMPLEMENT_EXCEEDS_MAX",
    "PB_STANDING_OVER_CAPACITY",
    "PB_LATE_BET",
    "PB_MACAU_BOTH_SIDES_DIFF_BELOW_MIN",
    "PB_MACAU_EXPOSURE_EXCEEDED",
    "PB_MACAU_TIE_TOTAL_EXCEEDED",
    "PB_MACAU_PAIR_TOTAL_EXCEEDED",
];

/// CdF digest section 6 (the CF_BANKER_* / CF_PONTO_* / CF_DEALER_* / CF_CARDS_* row expanded
/// to the codes of section 5).
const CF_CODES: &[&str] = &[
    "CF_PUNTER_FALSE_DRAW",
    "CF_BANKER_FALSE_DRAW",
    "CF_BANKER_BACARA_NO_DRAW",
    "CF_OPTION_USED_WHEN_FORCED",
    "CF_PONTO_DRAWN_AFTER_BANKER_ABATE",
    "CF_EMPLOYEE_WRONG_ADVICE",
    "CF_EMPLOYEE_ADVISED_DRAW_ON_5",
    "CF_CARDS_TO_UNKNOWING_PONTO",
    "CF_CARDS_TO_WRONG_PONTO",
    "CF_BANKER_WITHDREW_AFTER_DRAW",
    "CF_BANKER_EXPOSED_PONTO_CARD",
    "CF_STUCK_CARDS",
    "CF_BANKER_EXTRA_CARD_IN_DEAL",
    "CF_BANKER_DREW_TWO_CARDS",
    "CF_FIFTH_CARD_IN_DEAL",
    "CF_PONTO_THREE_CARDS_IN_DEAL",
    "CF_PONTO_FOUR_CARDS",
    "CF_PONTO_CARD_DROPPED",
    "CF_PONTO_CARD_DISCARDED_BY_BANKER",
    "CF_CARD_DROPPED",
    "CF_BANKER_DREW_AGAINST_INDICATION",
    "CF_PUNTER_FAILED_TO_ABATE",
    "CF_PUNTER_CHANGED_ANNOUNCEMENT",
    "CF_PUNTER_DELAY",
    "CF_DEALER_EXPOSED_CARD",
    "CF_DEALER_FALSE_CARTA",
    "CF_DEALER_CARD_FAULT",
    "CF_LAST_COUP_TOO_FEW_CARDS",
    "CF_CARDS_DISCARDED_BY_PLAYER",
    "CF_CARDS_DISCARDED_BY_DEALER",
    "CF_CARD_RETURNED_TO_SHOE",
    "CF_LATE_BET",
    "CF_BET_NOT_MULTIPLE_OF_MIN",
    "CF_BANK_BELOW_MIN",
    "CF_BETS_EXCEED_BANK",
    "CF_BANCO_AVEC_LA_TABLE_UNDER_HALF",
    "CF_BANCO_PRIORITY",
    "CF_POOLED_BETS",
    "CF_BANK_LEVEL_INVALID",
    "CF_PASSED_HAND_LEVEL",
    "CF_AUCTION_INELIGIBLE_BIDDER",
    "CF_AUCTION_AWARD",
    "CF_HAND_ORDER",
    "CF_TOO_FEW_SEATED",
    "CF_COUP_AFTER_LAST_OF_SHOE",
    "CF_WRONG_PAYOUT",
    "CF_REMEDY_NOT_APPLIED",
];

fn collect(into: &mut BTreeSet<String>, a: &rules_core::Adjudication) {
    for v in &a.violations {
        into.insert(v.code.to_string());
    }
    for d in &a.discrepancies {
        into.insert(d.code.to_string());
    }
}

fn pb_round(bets: Vec<EventKind>, spec: &str) -> Round {
    let mut ev = bets;
    ev.push(nmb());
    ev.extend(cards(spec));
    round(ev)
}

#[test]
fn every_pb_code_is_triggered() {
    let mut seen = BTreeSet::new();
    let honest = "p:7D b:2H p:KC b:4S";
    let p = |id: &str, ty: &str, a: i64| bet(id, ty, a);
    // Tableau and deal.
    for spec in [
        "p:9S b:2H p:KC b:3S p:4D",
        "p:5C b:6D p:2S b:KH b:3H",
        "p:2S b:5H p:KC b:2D",
        "p:7S b:2H p:KC b:3D",
        "p:2S b:7H p:KC b:KD p:3C p:4C",
        "p:7S p:KC b:2H b:4S",
    ] {
        collect(
            &mut seen,
            &run(&pb("none"), &pb_round(vec![p("p", "ponto", 1000)], spec)),
        );
    }
    // Shoe.
    let mut st = BaccaratState::default();
    let short = round(cat(vec![
        vec![proc_("shuffle")],
        cards("x:2C"),
        vec![p("p", "ponto", 1000), nmb()],
        cards(honest),
        vec![proc_("warning_card")],
    ]));
    collect(&mut seen, &run_state(&pb("none"), &mut st, &short));
    collect(
        &mut seen,
        &run_state(
            &pb("none"),
            &mut st,
            &pb_round(vec![p("p", "ponto", 1000)], honest),
        ),
    );
    // Null coup.
    collect(
        &mut seen,
        &run(
            &pb("none"),
            &round(cat(vec![
                vec![p("p", "ponto", 1000), nmb()],
                cards("p:7S"),
                vec![void("uncorrectable_lapse")],
            ])),
        ),
    );
    // Payout and commission.
    let r = with_settlement(
        pb_round(vec![p("b", "banca", 4000)], "p:3S b:4D p:AH b:AS p:4C b:4H"),
        &[("b", 3800)],
    );
    collect(&mut seen, &run(&pb("none"), &r));
    for v in BaccaratEngine::configure(&pb("both")).unwrap().violations {
        seen.insert(v.code.to_string());
    }
    // Limits and bets.
    let mut lim = pb("none");
    lim.min_bet_cents = Some(500);
    lim.max_bet_cents = Some(50_000);
    lim.seats = Some(2);
    for v in BaccaratEngine::configure(&lim).unwrap().violations {
        seen.insert(v.code.to_string());
    }
    let standing = |id: &str, ty: &str, a: i64| {
        bet_full(
            Bet::new(id, ty, a)
                .seat(3)
                .player(id)
                .attr("standing", "true"),
        )
    };
    let r = pb_round(
        vec![
            p("pp", "pair_ponto", 1000),
            p("lo", "ponto", 100),
            bet_at("s", "ponto", 49_000, 3),
            standing("x", "banca", 1000),
            standing("y", "ponto", 2000),
            p("hi", "banca", 60_000),
        ],
        honest,
    );
    collect(&mut seen, &run(&lim, &r));
    collect(
        &mut seen,
        &run(
            &pb("none"),
            &round(cat(vec![vec![nmb(), p("l", "ponto", 1000)], cards(honest)])),
        ),
    );
    // Macau.
    let mut m = set(macau("none", 100_000), "pairs_offered", Setting::Bool(true));
    m.min_bet_cents = Some(1000);
    let r = pb_round(
        vec![
            bet_at("a", "ponto", 150_000, 2),
            bet_at("b", "banca", 150_500, 2),
            p("c", "ponto", 200_000),
            p("t", "tie", 20_000),
            p("pp", "pair_ponto", 9_000),
        ],
        honest,
    );
    collect(&mut seen, &run(&m, &r));
    let missing: Vec<&str> = PB_CODES
        .iter()
        .copied()
        .filter(|c| !seen.contains(*c))
        .collect();
    assert!(missing.is_empty(), "codes never triggered: {missing:?}");
}

fn cf_table() -> TableConfig {
    let mut t = cdf();
    t.min_bet_cents = Some(10_000);
    t.settings
        .insert("min_bank_cents".into(), Setting::Int(100_000));
    t
}

fn cf(
    pre: Vec<EventKind>,
    bets: Vec<Bet>,
    deal: &str,
    mid: Vec<EventKind>,
    draw: &str,
    post: Vec<EventKind>,
) -> Round {
    let mut ev = pre;
    ev.push(bet_at("bank", "bank", 200_000, 1));
    ev.extend(bets.into_iter().map(bet_full));
    ev.push(nmb());
    ev.extend(cards(deal));
    ev.extend(mid);
    ev.extend(cards(draw));
    ev.extend(post);
    round(ev)
}

#[test]
fn every_cf_code_is_triggered() {
    let t = cf_table();
    let mut seen = BTreeSet::new();
    let pon = || vec![Bet::new("p", "ponto", 100_000).seat(3)];
    let banco = || vec![Bet::new("p", "banco", 200_000).seat(3)];
    let d = |a: &str| vec![decide(3, a)];
    let with = |mut v: Vec<EventKind>, a: &str| {
        v.push(decide(3, a));
        v
    };
    let rounds = vec![
        cf(
            vec![],
            pon(),
            "p:6S b:KD p:KC b:4S",
            d("carta"),
            "p:3D b:9C",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:6D p:KC b:KS",
            d("nao"),
            "b:3H",
            vec![],
        ),
        cf(vec![], banco(), "p:7S b:KD p:KC b:QS", d("nao"), "", vec![]),
        cf(
            vec![proc_("banker_plays_by_table")],
            pon(),
            "p:2S b:AD p:AC b:2S",
            d("carta"),
            "p:9H",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:2S b:8D p:AC b:KS",
            d("carta"),
            "p:6H",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:6D p:KC b:KS",
            d("nao"),
            "",
            cat(vec![
                vec![proc_seat("advice", Some("carta"), 1)],
                cards("b:2H"),
            ]),
        ),
        cf(
            vec![],
            pon(),
            "p:2S b:4D p:3C b:AS",
            with(vec![proc_seat("advice", Some("carta"), 3)], "carta"),
            "p:4H",
            vec![],
        ),
        cf(
            vec![
                proc_seat("unknowing_ponto", None, 3),
                role("card_holder", 3),
            ],
            pon(),
            "p:7S b:7D p:KC b:KS",
            d("nao"),
            "",
            vec![],
        ),
        cf(
            vec![role("card_holder", 5)],
            pon(),
            "p:7S b:7D p:KC b:KS",
            d("nao"),
            "",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:7D p:KC b:KS",
            with(
                vec![
                    fault("CF_BANKER_WITHDREW_AFTER_DRAW"),
                    fault("CF_CARD_DROPPED"),
                    fault("CF_PUNTER_DELAY"),
                    fault("CF_CARD_RETURNED_TO_SHOE"),
                ],
                "nao",
            ),
            "",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:2S b:4D p:3C b:AS",
            with(vec![fault("CF_BANKER_EXPOSED_PONTO_CARD")], "carta"),
            "p:4H",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:2S b:7D p:KC b:KS",
            d("carta"),
            "p:3H p:4H",
            vec![void("stuck_cards")],
        ),
        cf(
            vec![],
            pon(),
            "p:4S b:9D p:4C b:9S b:KS",
            d("abate"),
            "b:9H",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:KH b:2S p:QC b:2H",
            d("carta"),
            "p:5D b:8C b:3D",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:9D p:KC b:KS b:2H",
            with(vec![fault("CF_FIFTH_CARD_IN_DEAL")], "nao"),
            "",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:3S b:7D p:KC p:5H b:KS",
            d("nao"),
            "",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:2S b:7D p:AC b:KS",
            d("carta"),
            "p:4H p:2D",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:2S b:7D p:AC b:KS",
            vec![fault("CF_PONTO_CARD_DROPPED")],
            "",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:2S b:4D p:AC b:4S",
            d("carta"),
            "d:5H b:AH",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:6D p:KC b:KS",
            d("nao"),
            "",
            cat(vec![
                vec![proc_seat("advice", Some("nao"), 1)],
                cards("b:3H"),
            ]),
        ),
        cf(vec![], pon(), "p:4S b:4D p:5C b:4S", d("nao"), "", vec![]),
        cf(
            vec![],
            pon(),
            "p:2S b:7D p:3C b:KS",
            vec![decide(3, "carta"), decide(3, "nao")],
            "p:4H",
            vec![],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:2D pu:KC b:4S",
            with(vec![fault("CF_DEALER_EXPOSED_CARD")], "nao"),
            "p:3H b:9C",
            vec![],
        ),
        with_settlement(
            cf(
                vec![],
                banco(),
                "p:2H b:KD p:4C b:3S",
                d("nao"),
                "p:7C b:2D",
                vec![],
            ),
            &[("p", -200_000), ("bank", 200_000)],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:2D p:KC b:4S",
            d("nao"),
            "",
            vec![void("dealer_card_fault")],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:2D p:KC b:4S",
            d("nao"),
            "",
            vec![void("last_coup_too_few_cards")],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:9D p:KC b:KS",
            d("nao"),
            "",
            vec![fault_d(
                "CF_CARDS_DISCARDED_BY_PLAYER",
                None,
                Some("banker"),
            )],
        ),
        cf(
            vec![],
            pon(),
            "p:7S b:2D p:KC b:KS",
            d("nao"),
            "",
            vec![fault("CF_CARDS_DISCARDED_BY_DEALER")],
        ),
        with_settlement(
            cf(
                vec![],
                pon(),
                "p:KH b:2S p:QC b:2H",
                d("carta"),
                "p:5D b:8C b:3D",
                vec![],
            ),
            &[("p", 0), ("bank", 0)],
        ),
        // Bets.
        cf(
            vec![],
            vec![
                Bet::new("a", "ponto", 150_000).seat(3),
                Bet::new("b", "ponto", 60_000).seat(4).on_bet("a"),
                Bet::new("c", "ponto", 15_000).seat(5),
            ],
            "p:7S b:2D p:KC b:4S",
            d("nao"),
            "",
            vec![],
        ),
        cf(
            vec![],
            vec![Bet::new("a", "banco_avec_la_table", 90_000).seat(3)],
            "p:7S b:2D p:KC b:4S",
            d("nao"),
            "",
            vec![],
        ),
        cf(
            vec![decide(5, "banco"), decide(2, "banco")],
            vec![Bet::new("b", "banco", 200_000).seat(5)],
            "p:7S b:2D p:KC b:4S",
            d("nao"),
            "",
            vec![],
        ),
        round(cat(vec![
            vec![
                bet_at("bank", "bank", 50_000, 1),
                bet_at("p", "ponto", 10_000, 3),
                nmb(),
            ],
            cards("p:7S b:2D p:KC b:4S"),
            vec![bet_at("late", "ponto", 10_000, 4)],
        ])),
        cf(
            vec![role("seated", 1), role("seated", 3), role("seated", 5)],
            pon(),
            "p:7S b:2D p:KC b:4S",
            d("nao"),
            "",
            vec![],
        ),
    ];
    for r in &rounds {
        collect(&mut seen, &run(&t, r));
    }
    // State-dependent codes: the bank, the hand, the shoe.
    let win = |bank: i64, seat: u8, pre: Vec<EventKind>, post: Vec<EventKind>| {
        let mut ev = pre;
        ev.push(bet_at("bank", "bank", bank, seat));
        ev.push(bet_at("p", "ponto", 100_000, 3));
        ev.push(nmb());
        ev.extend(cards("p:7S b:9D p:KC b:KS"));
        ev.push(decide(3, "nao"));
        ev.extend(post);
        round(ev)
    };
    let mut st = BaccaratState::default();
    run_state(&t, &mut st, &win(200_000, 1, vec![], vec![]));
    collect(
        &mut seen,
        &run_state(&t, &mut st.clone(), &win(250_000, 1, vec![], vec![])),
    );
    collect(
        &mut seen,
        &run_state(&t, &mut st.clone(), &win(200_000, 5, vec![], vec![])),
    );
    let mut passed = st.clone();
    run_state(
        &t,
        &mut passed,
        &win(
            300_000,
            1,
            vec![],
            vec![decide(1, "pass_hand"), proc_("warning_card")],
        ),
    );
    collect(
        &mut seen,
        &run_state(&t, &mut passed.clone(), &win(300_000, 2, vec![], vec![])),
    );
    collect(
        &mut seen,
        &run_state(
            &t,
            &mut passed.clone(),
            &win(
                500_000,
                1,
                vec![proc_("auction"), decide_amount(1, "bid", 500_000)],
                vec![],
            ),
        ),
    );
    collect(
        &mut seen,
        &run_state(
            &t,
            &mut passed.clone(),
            &win(
                200_000,
                4,
                vec![
                    proc_("auction"),
                    decide_amount(4, "bid", 200_000),
                    decide_amount(5, "bid", 300_000),
                ],
                vec![],
            ),
        ),
    );
    let missing: Vec<&str> = CF_CODES
        .iter()
        .copied()
        .filter(|c| !seen.contains(*c))
        .collect();
    assert!(missing.is_empty(), "codes never triggered: {missing:?}");
}

#[test]
fn honest_coups_trigger_nothing() {
    let honest_pb = [
        "p:7D b:2H p:KC b:4S",
        "p:3S b:4D p:AH b:AS p:4C b:4H",
        "p:9S b:4C p:2H b:AS p:3C",
        "p:8S b:9C p:KC b:KS",
        "p:2S b:KH p:3C b:QD p:AH b:8C",
    ];
    for spec in honest_pb {
        for t in [pb("5pct"), macau("half_on_5", 1_000_000)] {
            let a = run(
                &t,
                &pb_round(
                    vec![
                        bet("p", "ponto", 1000),
                        bet("b", "banca", 2000),
                        bet("t", "tie", 500),
                    ],
                    spec,
                ),
            );
            assert!(a.violations.is_empty(), "{spec}: {:?}", a.violations);
        }
    }
    let t = cf_table();
    for (deal, call, draw) in [
        ("p:QS b:AD p:3D b:2C", "carta", "p:9H b:6S"),
        ("p:7S b:6D p:KC b:KS", "nao", ""),
        ("p:9S b:2D p:KC b:4S", "abate", ""),
        ("p:2S b:4D p:3C b:AS", "nao", "b:5H"),
    ] {
        let a = run(
            &t,
            &cf(
                vec![],
                vec![Bet::new("p", "ponto", 100_000).seat(3)],
                deal,
                vec![decide(3, call)],
                draw,
                vec![],
            ),
        );
        assert!(a.violations.is_empty(), "{deal}: {:?}", a.violations);
    }
}
