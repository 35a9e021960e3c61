//! Every check of the digest's "What an auditor can check" table (blackjack.md section 12),
//! each triggered by at least one scenario; rule tests name their citation.

mod common;
use common::*;
use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::{Adjudication, Engine, Options, Outcome, Severity};

const P217: &str = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6}"#;
const P1364: &str = r#"{"game":"blackjack","regulation":"P1364/2001","min_bet_cents":1000,"max_bet_cents":30000,"decks":6}"#;
const JP: &str = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,
  "jackpot":{"bet_amount_cents":200,"increment_bp":7500,"start_value_cents":2000000,
  "paytable":[{"combination":"four_aces_same_colour","award":{"kind":"whole"}},
              {"combination":"two_aces","award":{"kind":"multiple","times":25}},
              {"combination":"suited_blackjack","award":{"kind":"percent","bp":1000}}]}}"#;
const ONLINE: &str =
    r#"{"game":"blackjack_online","min_bet_cents":100,"max_bet_cents":10000,"decks":6,"seats":7}"#;

fn run_st(t: &str, st: &mut BlackjackState, script: &str) -> Adjudication {
    let cfg = BlackjackEngine::configure(&table(t)).unwrap();
    BlackjackEngine::adjudicate(&cfg.config, st, &round(script), &explain()).unwrap()
}

fn run(t: &str, script: &str) -> Adjudication {
    run_st(t, &mut BlackjackState::default(), script)
}

fn config_codes(t: &str) -> Vec<String> {
    BlackjackEngine::configure(&table(t))
        .unwrap()
        .violations
        .iter()
        .map(|v| v.code.to_string())
        .collect()
}

/// A standard one-seat deal: seat 1 gets a, b; dealer up u, hole h.
fn deal1(a: &str, b: &str, u: &str, h: &str) -> String {
    format!(
        "bet b1 main 1 1000; card seat:1 {a}; card dealer {u}; card seat:1 {b}; card dealer {h} down;"
    )
}

fn has(a: &Adjudication, code: &str) -> bool {
    a.has_violation(code)
}

const ALL: &[&str] = &[
    "BJ_DECK_COUNT_INVALID",
    "BJ_SHOE_CARD_OVERCOUNT",
    "BJ_SEAT_INVALID",
    "BJ_BET_BELOW_MIN",
    "BJ_BET_NOT_MULTIPLE_OF_MIN",
    "BJ_BET_ABOVE_MAX",
    "BJ_SEAT_TOTAL_OVER_MAX",
    "BJ_TABLE_MAX_OVER_30X_MIN",
    "BJ_TABLE_MAX_NOT_30X_MIN",
    "BJ_LATE_BET",
    "BJ_DEAL_ORDER",
    "BJ_HOLE_CARD_EXPOSED",
    "BJ_CARD_DEALT_WITHOUT_REQUEST",
    "BJ_STOOD_ON_11_OR_LESS",
    "BJ_HIT_ON_21",
    "BJ_DEALER_DREW_ON_17",
    "BJ_DEALER_STOOD_BELOW_17",
    "BJ_DEALER_DREW_AFTER_ALL_OUT",
    "BJ_SPLIT_NOT_PAIR",
    "BJ_SPLIT_AMOUNT_NOT_EQUAL",
    "BJ_HIT_AFTER_SPLIT_ACES",
    "BJ_DOUBLE_NOT_ALLOWED",
    "BJ_DOUBLE_AMOUNT_NOT_EQUAL",
    "BJ_EXTRA_CARD_AFTER_DOUBLE",
    "BJ_INSURANCE_NOT_ACE",
    "BJ_INSURANCE_OVER_HALF",
    "BJ_EVEN_MONEY_NOT_ACE",
    "BJ_SURRENDER_VS_ACE",
    "BJ_SURRENDER_AFTER_DRAW",
    "BJ_WRONG_PAYOUT",
    "BJ_JACKPOT_WITHOUT_MAIN_BET",
    "BJ_JACKPOT_WRONG_AMOUNT",
    "BJ_JACKPOT_BET_LATE",
    "BJ_JACKPOT_DISPLAY_MISMATCH",
    "BJ_JACKPOT_START_BELOW_MIN",
    "BJ_PLAYED_PAST_WARNING_CARD",
    "BJ_CUT_WITH_SHUFFLER",
    "BJ_SHUFFLER_LOAD_IRREGULAR",
    "BJ_COMPLAINT_AFTER_INSERTION",
    "BJO_VOID_ROUND_SETTLED",
    "BJO_ROUND_WRONGLY_VOIDED",
    "BJO_SESSION_ENDED_WITHOUT_WARNING",
];

/// Every code of the table is produced by the scenarios below (collected by running them).
#[test]
fn every_code_is_triggered() {
    let mut seen: Vec<String> = Vec::new();
    for f in SCENARIOS {
        for c in f() {
            if !seen.contains(&c) {
                seen.push(c);
            }
        }
    }
    for code in ALL {
        assert!(seen.iter().any(|s| s == code), "{code} never triggered");
    }
}

type Scenario = fn() -> Vec<String>;
const SCENARIOS: &[Scenario] = &[
    || config_codes(r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":5}"#),
    || config_codes(r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":40000,"decks":6}"#),
    || {
        config_codes(
            r#"{"game":"blackjack","regulation":"P1364/2001","min_bet_cents":1000,"max_bet_cents":20000,"decks":6}"#,
        )
    },
    || {
        config_codes(
            r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,"jackpot":{"bet_amount_cents":200,"increment_bp":7500,"start_value_cents":100000,"paytable":[{"combination":"two_aces","award":{"kind":"multiple","times":25}}]}}"#,
        )
    },
    || codes(&shoe_overcount()),
    || codes(&run(P217, &limits_round())),
    || {
        codes(&run(
            P217,
            "bet b1 main 1 1000; card seat:1 9H; bet b3 main 3 1000; card seat:3 5H; card dealer 5S; card seat:1 TH; card seat:3 6H; card dealer 6D down; dec 1 stand; dec 3 hit; card seat:3 TC; card dealer TS",
        ))
    },
    || {
        codes(&run(
            P217,
            "bet b1 main 1 1000; card dealer 5S; card seat:1 9H; card seat:1 TH; card dealer 6D down; dec 1 stand; card dealer TS",
        ))
    },
    || codes(&hole_exposed()),
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 stand; card seat:1 5C; card dealer 2C",
                deal1("TH", "5S", "TD", "6S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!("{} dec 1 stand", deal1("5H", "6S", "TD", "7S")),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 hit; card seat:1 6D; dec 1 hit; card seat:1 2C",
                deal1("TH", "5S", "TD", "7S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 stand; card dealer 3C",
                deal1("TH", "8S", "TD", "7S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!("{} dec 1 stand", deal1("TH", "8S", "TD", "5S")),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 hit; card seat:1 9C; card dealer 4C",
                deal1("TH", "5S", "5D", "6S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 split 2000; card seat:1 TD; dec 1 stand; card seat:1/2 TC; dec 1/2 stand",
                deal1("8H", "9S", "TS", "7S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 split; card seat:1 5D; dec 1 hit; card seat:1 3C; card seat:1/2 KC",
                deal1("AH", "AS", "TS", "7S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 double 500; card seat:1 5D; dec 1 hit; card seat:1 2C",
                deal1("TH", "2S", "TS", "7S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            "bet b1 main 1 1000; card seat:1 TH; card dealer TS; card seat:1 9H; card dealer 7S down; bet i1 insurance 1 600 on=b1; dec 1 stand",
        ))
    },
    || {
        codes(&run(
            P217,
            "bet b1 main 1 1000; card seat:1 TH; card dealer AS; card seat:1 9H; card dealer 7S down; bet i1 insurance 1 600 on=b1; dec 1 stand",
        ))
    },
    || {
        codes(&run(
            P217,
            &format!("{} dec 1 even_money", deal1("AH", "KS", "TS", "7S")),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!("{} dec 1 surrender", deal1("TH", "6S", "AS", "7S")),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} dec 1 hit; card seat:1 2C; dec 1 surrender",
                deal1("TH", "3S", "9S", "7S")
            ),
        ))
    },
    || wrong_payout(),
    || {
        codes(&run(
            JP,
            "jackpot 2000000; bet b1 main 1 1000; bet j2 jackpot 2 200; bet j1 jackpot 1 300; nmb; bet j3 jackpot 1 200; display 12345; card seat:1 9H; card dealer 5S; card seat:1 TH; card dealer 6D down; dec 1 stand; card dealer 8C",
        ))
    },
    || warning_card_codes(),
    || {
        codes(&run(
            r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,"settings":{"shuffler":"batch"}}"#,
            "proc cut; proc shuffler_load 1; proc shuffler_load 2",
        ))
    },
    || {
        codes(&run(
            r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,"settings":{"shuffler":"continuous"}}"#,
            &format!(
                "{} dec 1 stand; proc cards_to_shuffler; proc complaint upheld",
                deal1("TH", "8S", "TD", "7S")
            ),
        ))
    },
    || {
        codes(&run(
            ONLINE,
            "bet b1 main 1 1000; card seat:1 9H; fault malfunction; settle b1 1000",
        ))
    },
    || {
        codes(&run(
            ONLINE,
            &format!(
                "{} fault player_connection; dec 1 stand; void player_connection; settle_void",
                deal1("TH", "8S", "TD", "7S")
            ),
        ))
    },
    || {
        codes(&run(
            ONLINE,
            "proc session_start seat=2; proc session_ended inactivity seat=2",
        ))
    },
];

fn limits_round() -> String {
    let mut s = String::from(
        "bet b1 main 8 1000; bet b2 main 1 500; bet b3 main 2 1500; bet b4 main 3 40000; bet b5 main 4 20000; bet c5 complementary 4 15000 on=b5;",
    );
    for seat in [1, 2, 3, 4, 8] {
        s.push_str(&format!("card seat:{seat} TH;"));
    }
    s.push_str("card dealer TD;");
    for seat in [1, 2, 3, 4, 8] {
        s.push_str(&format!("card seat:{seat} 8H;"));
    }
    s.push_str("card dealer 7D down;");
    for seat in [1, 2, 3, 4, 8] {
        s.push_str(&format!("dec {seat} stand;"));
    }
    s
}

fn shoe_overcount() -> Adjudication {
    let t = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":4}"#;
    run(
        t,
        "bet b1 main 1 1000; card seat:1 AS; card dealer AS; card seat:1 AS; card dealer AS down; dec 1 hit; card seat:1 AS; dec 1 stand; card dealer TS; card dealer 5C",
    )
}

fn hole_exposed() -> Adjudication {
    run(
        P217,
        "bet b1 main 1 1000; card seat:1 TH; card dealer TD; card seat:1 8H; card dealer TS; card dealer 6C down; dec 1 stand; card dealer 9C; settle b1 1000",
    )
}

fn wrong_payout() -> Vec<String> {
    let a = run(
        P217,
        &format!("{} dec 1 stand; settle b1 0", deal1("TH", "8S", "TD", "7S")),
    );
    a.discrepancies.iter().map(|d| d.code.to_string()).collect()
}

fn warning_card_codes() -> Vec<String> {
    let mut st = BlackjackState::default();
    let r1 = "bet b1 main 1 1000; card seat:1 TH; card dealer TD; proc warning_card; card seat:1 8S; card dealer 7S down; dec 1 stand";
    let a = run_st(P217, &mut st, r1);
    assert!(a.violations.is_empty());
    let a = run_st(
        P217,
        &mut st,
        &format!("{} dec 1 stand", deal1("TH", "9S", "TD", "7C")),
    );
    codes(&a)
}

/// P217/2007 T.I C.III S.I r.3: a card cannot leave a 4-deck shoe five times; the count carries
/// across rounds and a shuffle clears it.
#[test]
fn r3_shoe_overcount_across_rounds() {
    let a = shoe_overcount();
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "BJ_SHOE_CARD_OVERCOUNT")
        .unwrap();
    assert_eq!(v.severity, Severity::High);
    let t = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":4}"#;
    let mut st = BlackjackState::default();
    let r = "bet b1 main 1 1000; card seat:1 AS; card dealer AS; card seat:1 9S; card dealer 7S down; dec 1 stand";
    assert!(run_st(t, &mut st, r).violations.is_empty());
    assert!(run_st(t, &mut st, r).violations.is_empty());
    assert!(has(&run_st(t, &mut st, r), "BJ_SHOE_CARD_OVERCOUNT"));
    let shuffled = format!("proc shuffle; {r}");
    assert!(run_st(t, &mut st, &shuffled).violations.is_empty());
}

/// r.2, r.14, r.15, r.16: seats and limits.
#[test]
fn r14_r15_limits() {
    let a = run(P217, &limits_round());
    for c in [
        "BJ_SEAT_INVALID",
        "BJ_BET_BELOW_MIN",
        "BJ_BET_NOT_MULTIPLE_OF_MIN",
        "BJ_BET_ABOVE_MAX",
        "BJ_SEAT_TOTAL_OVER_MAX",
    ] {
        assert!(has(&a, c), "{c}");
    }
}

/// r.37 in both versions.
#[test]
fn r37_table_maximum() {
    assert_eq!(
        config_codes(
            r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":40000,"decks":6}"#
        ),
        vec!["BJ_TABLE_MAX_OVER_30X_MIN"]
    );
    assert!(
        config_codes(
            r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":20000,"decks":6}"#
        )
        .is_empty()
    );
    assert_eq!(
        config_codes(
            r#"{"game":"blackjack","regulation":"P1364/2001","min_bet_cents":1000,"max_bet_cents":20000,"decks":6}"#
        ),
        vec!["BJ_TABLE_MAX_NOT_30X_MIN"]
    );
    assert!(config_codes(P1364).is_empty());
}

/// r.13: P217 before the deal begins; P1364 before the seat's own first card.
#[test]
fn r13_late_bets_by_version() {
    let s = "bet b1 main 1 1000; card seat:1 9H; bet b3 main 3 1000; card seat:3 5H; card dealer 5S; card seat:1 TH; card seat:3 6H; card dealer 6D down; dec 1 stand; dec 3 hit; card seat:3 TC; card dealer TS";
    assert!(has(&run(P217, s), "BJ_LATE_BET"));
    assert!(!has(&run(P1364, s), "BJ_LATE_BET"));
    let late = s.replace(
        "bet b3 main 3 1000; card seat:3 5H;",
        "card seat:3 5H; bet b3 main 3 1000;",
    );
    assert!(has(&run(P1364, &late), "BJ_LATE_BET"));
}

/// P1364/2001 r.13 ("Cada jogador deve marcar a sua aposta antes de chegar o momento de, na
/// respectiva ordem, lhe caber a distribuição da primeira carta") and r.17 ("uma carta a cada
/// jogador que tenha oportunamente marcado aposta"): a bet placed after the deal began but before
/// the seat's own first card is timely, and its seat is part of the expected deal order: no
/// BJ_DEAL_ORDER, and the hand is settled. Under P217/2007 r.13 the same bet is late.
#[test]
fn p1364_r13_r17_timely_bet_joins_the_deal_order() {
    let s = "bet b1 main 1 1000; card seat:1 9H; bet b3 main 3 1000; card seat:3 5H; card dealer 5S; card seat:1 TH; card seat:3 6H; card dealer 6D down; dec 1 stand; dec 3 hit; card seat:3 TC; card dealer 9S";
    let a = run(P1364, s);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(a.bet("b3").unwrap().outcome, Outcome::Won);
    let a = run(P217, s);
    assert!(has(&a, "BJ_LATE_BET"));
    // P1364: the moment of seat 2's first card has passed once seat 3 has had its card.
    let passed = "bet b1 main 1 1000; bet b3 main 3 1000; card seat:1 9H; card seat:3 5H; bet b2 main 2 1000; card seat:2 8H; card dealer 5S; card seat:1 TH; card seat:2 6C; card seat:3 6H; card dealer 6D down; dec 1 stand; dec 2 stand; dec 3 hit; card seat:3 TC; card dealer TS";
    assert!(has(&run(P1364, passed), "BJ_LATE_BET"));
}

/// r.17: deal order; P217 exposed hole card discarded and replaced (it does not count).
#[test]
fn r17_hole_card_exposed_is_replaced() {
    let a = hole_exposed();
    assert!(has(&a, "BJ_HOLE_CARD_EXPOSED"));
    // The exposed TS does not count: dealer TD 6C draws 9C = 25, the player's 18 wins.
    assert_eq!(net(&a, "b1"), 1000);
    assert!(a.discrepancies.is_empty());
    // P1364 has no remedy: the card counts (TD TS = 20) and the deal is flagged.
    let t = P1364;
    let a = run(
        t,
        "bet b1 main 1 1000; card seat:1 TH; card dealer TD; card seat:1 8H; card dealer TS; dec 1 stand",
    );
    assert!(has(&a, "BJ_DEAL_ORDER"));
    assert_eq!(net(&a, "b1"), -1000);
}

/// r.18: an unrequested card seen is annulled; unseen goes to the next player who asks.
#[test]
fn r18_unrequested_cards() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 stand; card seat:1 5C; card dealer 2C",
            deal1("TH", "5S", "TD", "6S")
        ),
    );
    assert!(has(&a, "BJ_CARD_DEALT_WITHOUT_REQUEST"));
    // Seat 1 stays on 15; dealer 16 + 2 = 18 wins.
    assert_eq!(net(&a, "b1"), -1000);
    // Unseen: goes to seat 2, who asks next; the record re-reports it there.
    let s = "bet b1 main 1 1000; bet b2 main 2 1000; card seat:1 TH; card seat:2 TC; card dealer TD; card seat:1 8S; card seat:2 4C; card dealer 7S down;
             dec 1 stand; card seat:1 7H down; dec 2 hit; card seat:2 7H; dec 2 stand";
    let a = run(P217, s);
    assert!(has(&a, "BJ_CARD_DEALT_WITHOUT_REQUEST"));
    assert_eq!(net(&a, "b1"), 1000); // 18 v 17
    assert_eq!(net(&a, "b2"), 1000); // 21 v 17
    // Nobody asks: it is the dealer's card.
    let s = "bet b1 main 1 1000; card seat:1 TH; card dealer TD; card seat:1 8S; card dealer 5S down; dec 1 stand; card seat:1 4H down";
    let a = run(P217, s);
    assert_eq!(net(&a, "b1"), -1000); // dealer 15 + 4 = 19
}

/// r.18: no stand on 11 or less; no card at 21.
#[test]
fn r18_stand_and_hit_limits() {
    assert!(has(
        &run(
            P217,
            &format!("{} dec 1 stand", deal1("5H", "6S", "TD", "7S"))
        ),
        "BJ_STOOD_ON_11_OR_LESS"
    ));
    let a = run(
        P217,
        &format!(
            "{} dec 1 hit; card seat:1 6D; dec 1 hit; card seat:1 2C",
            deal1("TH", "5S", "TD", "7S")
        ),
    );
    assert!(has(&a, "BJ_HIT_ON_21"));
    assert_eq!(net(&a, "b1"), -1000); // settled as played: 23
}

/// r.19, r.6(a): dealer must stand on 17 (soft included) and draw to 17.
#[test]
fn r19_dealer_draw_checks() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 stand; card dealer 3C",
            deal1("TH", "8S", "AD", "6S")
        ),
    );
    assert!(has(&a, "BJ_DEALER_DREW_ON_17")); // soft 17
    assert_eq!(net(&a, "b1"), 1000);
    let a = run(
        P217,
        &format!("{} dec 1 stand", deal1("TH", "8S", "TD", "5S")),
    );
    assert!(has(&a, "BJ_DEALER_STOOD_BELOW_17"));
    assert_eq!(net(&a, "b1"), 1000); // settled as played: 18 v 15
}

/// r.22: every player out: the dealer does not draw.
#[test]
fn r22_round_ends_early() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 hit; card seat:1 9C",
            deal1("TH", "5S", "5D", "6S")
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "b1"), -1000);
    let a = run(
        P217,
        &format!(
            "{} dec 1 hit; card seat:1 9C; card dealer 4C",
            deal1("TH", "5S", "5D", "6S")
        ),
    );
    assert!(has(&a, "BJ_DEALER_DREW_AFTER_ALL_OUT"));
    // Surrender also takes the player out.
    let a = run(
        P217,
        &format!("{} dec 1 surrender", deal1("TH", "6S", "5D", "6C")),
    );
    assert!(a.violations.is_empty());
    assert_eq!(net(&a, "b1"), -500);
}

/// r.20, r.26: ace + ten on a split hand is 21, not blackjack; split aces one card.
#[test]
fn r20_r26_split_aces() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 split; card seat:1 KD; card seat:1/2 9C",
            deal1("AH", "AS", "TS", "QS")
        ),
    );
    // Dealer TS QS = 20: hand 1 A+K = 21 (not blackjack) wins 1:1, hand 2 A+9 = 20 ties.
    assert_eq!(net(&a, "b1"), 1000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run(
        P217,
        &format!(
            "{} dec 1 split; card seat:1 5D; dec 1 hit; card seat:1 3C; card seat:1/2 KC",
            deal1("AH", "AS", "TS", "7S")
        ),
    );
    assert!(has(&a, "BJ_HIT_AFTER_SPLIT_ACES"));
}

/// r.26: split only a pair; equal stake. Reading 13.5: K+Q flagged for review.
#[test]
fn r26_split_checks() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 split 2000; card seat:1 TD; dec 1 stand; card seat:1/2 TC; dec 1/2 stand",
            deal1("8H", "9S", "TS", "7S")
        ),
    );
    assert!(has(&a, "BJ_SPLIT_NOT_PAIR") && has(&a, "BJ_SPLIT_AMOUNT_NOT_EQUAL"));
    // Settled as played: 18 (1000) + 19 (2000) v 17.
    assert_eq!(net(&a, "b1"), 3000);
    let a = run(
        P217,
        &format!(
            "{} dec 1 split; card seat:1 9D; dec 1 stand; card seat:1/2 8C; dec 1/2 stand",
            deal1("KH", "QS", "TS", "7S")
        ),
    );
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "BJ_SPLIT_NOT_PAIR")
        .unwrap();
    assert_eq!(v.confidence, rules_core::Confidence::Review);
    assert_eq!(v.severity, Severity::Info);
}

/// r.29, r.31, r.32: doubles.
#[test]
fn r29_r32_doubles() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 double 500; card seat:1 5D; dec 1 hit; card seat:1 2C",
            deal1("TH", "2S", "TS", "7S")
        ),
    );
    for c in [
        "BJ_DOUBLE_NOT_ALLOWED",
        "BJ_DOUBLE_AMOUNT_NOT_EQUAL",
        "BJ_EXTRA_CARD_AFTER_DOUBLE",
    ] {
        assert!(has(&a, c), "{c}");
    }
    // r.32: A+8 doubled as 9, third card 2: total 11, not 21.
    let a = run(
        P217,
        &format!(
            "{} dec 1 double; card seat:1 2D",
            deal1("AH", "8S", "TS", "7S")
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "b1"), -2000);
    // r.31: double after split.
    let a = run(
        P217,
        &format!(
            "{} dec 1 split; card seat:1 3D; dec 1 double; card seat:1 TC; card seat:1/2 9C; dec 1/2 stand; card dealer 2D",
            deal1("8H", "8S", "6S", "TS")
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Hand 1: 8+3+T = 21 on 2000 wins; hand 2: 8+9 = 17 on 1000 loses to 18.
    assert_eq!(net(&a, "b1"), 1000);
}

/// 13.3: no peek: a dealer blackjack takes the full doubled stake.
#[test]
fn no_peek_dealer_blackjack_takes_doubles() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 double; card seat:1 TD",
            deal1("5H", "6S", "AS", "KD")
        ),
    );
    assert_eq!(net(&a, "b1"), -2000);
}

/// r.21: blackjack 3:2, paid at once; blackjack against blackjack null; rounding of odd cents.
#[test]
fn r21_blackjack_payouts() {
    let a = run(
        P217,
        "bet b1 main 1 1000; card seat:1 AH; card dealer 9S; card seat:1 KS; card dealer 7S down",
    );
    assert_eq!(net(&a, "b1"), 1500);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run(
        P217,
        "bet b1 main 1 1000; card seat:1 AH; card dealer TS; card seat:1 KS; card dealer AD down",
    );
    assert_eq!(net(&a, "b1"), 0);
    // An odd stake (off the multiples of the minimum, flagged) pays the whole cents of 3:2.
    let t = r#"{"game":"blackjack","min_bet_cents":1,"max_bet_cents":30,"decks":6}"#;
    let a = run(
        t,
        "bet b1 main 1 7; card seat:1 AH; card dealer 9S; card seat:1 KS; card dealer 7S down",
    );
    assert_eq!(net(&a, "b1"), 10); // 10.5 truncated
}

/// r.33, r.34: insurance and even money limits.
#[test]
fn r33_r34_insurance_even_money() {
    let a = run(
        P217,
        "bet b1 main 1 1000; card seat:1 TH; card dealer TS; card seat:1 9H; card dealer 7S down; bet i1 insurance 1 600 on=b1; dec 1 stand",
    );
    assert!(has(&a, "BJ_INSURANCE_NOT_ACE") && has(&a, "BJ_INSURANCE_OVER_HALF"));
    assert_eq!(net(&a, "i1"), -600);
    let a = run(
        P217,
        &format!("{} dec 1 even_money", deal1("AH", "KS", "TS", "7S")),
    );
    assert!(has(&a, "BJ_EVEN_MONEY_NOT_ACE"));
    assert_eq!(net(&a, "b1"), 1000);
}

/// r.35: the special prize, besides the hand's result (also against a dealer blackjack).
#[test]
fn r35_special_prize_in_a_round() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 hit; card seat:1 8H; dec 1 stand",
            deal1("6H", "7H", "TS", "7S")
        ),
    );
    assert_eq!(net(&a, "b1"), 1000 + 3000);
    let a = run(
        P217,
        &format!(
            "{} dec 1 hit; card seat:1 7D; dec 1 stand",
            deal1("7H", "7S", "AS", "KD")
        ),
    );
    assert_eq!(net(&a, "b1"), -1000 + 3000);
}

/// r.36: surrender, not against an ace, before drawing.
#[test]
fn r36_surrender() {
    assert!(has(
        &run(
            P217,
            &format!("{} dec 1 surrender", deal1("TH", "6S", "AS", "7S"))
        ),
        "BJ_SURRENDER_VS_ACE"
    ));
    let a = run(
        P217,
        &format!(
            "{} dec 1 hit; card seat:1 2C; dec 1 surrender",
            deal1("TH", "3S", "9S", "7S")
        ),
    );
    assert!(has(&a, "BJ_SURRENDER_AFTER_DRAW"));
    assert_eq!(net(&a, "b1"), -500);
    // P1364 preamble: after an additional card to another seat: for review.
    let s = "bet b1 main 1 1000; bet b2 main 2 1000; card seat:1 TH; card seat:2 TC; card dealer 9D; card seat:1 3S; card seat:2 6C; card dealer 7S down;
             dec 1 hit; card seat:1 8C; dec 1 stand; dec 2 surrender";
    let a = run(P1364, s);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "BJ_SURRENDER_AFTER_DRAW")
        .unwrap();
    assert_eq!(v.confidence, rules_core::Confidence::Review);
    assert!(!has(&run(P217, s), "BJ_SURRENDER_AFTER_DRAW"));
}

/// r.16: the largest bet on a vacant seat decides; equal bets: the lowest home seat.
#[test]
fn r16_vacant_seat_decider() {
    let cfg = BlackjackEngine::configure(&table(P217)).unwrap().config;
    let s = "bet v1 vacant 5 2000 home=3; bet v2 vacant 5 2000 home=2; card seat:5 9H; card dealer 9S; card seat:5 2H; card dealer 7S down;
             dec 5 double 2000; card seat:5 TC";
    let a =
        BlackjackEngine::adjudicate(&cfg, &mut BlackjackState::default(), &round(s), &explain())
            .unwrap();
    // v2 (home seat 2) decides: its double applies; v1 follows without doubling.
    assert_eq!(net(&a, "v2"), 4000);
    assert_eq!(net(&a, "v1"), 2000);
    assert!(
        a.notes
            .iter()
            .any(|n| n.text.contains("bet `v2`") && n.text.contains("vacant"))
    );
}

/// r.30: a complementary bettor doubles his own bet with the titular.
#[test]
fn r30_follower_double() {
    let s = "bet p1 main 3 2000; bet p2 complementary 3 1000 on=p1; card seat:3 6H; card dealer 9S; card seat:3 4H; card dealer 7S down;
             dec 3 double; dec 3 double bet=p2; card seat:3 9C; card dealer 2C";
    let a = run(P217, s);
    assert_eq!(net(&a, "p1"), 4000);
    assert_eq!(net(&a, "p2"), 2000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Reading 13.19: a follower cannot double alone.
    let s = s.replace("dec 3 double; ", "dec 3 hit; ");
    assert!(has(&run(P217, &s), "BJ_DOUBLE_NOT_ALLOWED"));
}

/// r.45, r.47, r.48, r.40, r.41: jackpot chip checks; chips that are no jackpot bet are returned.
#[test]
fn r45_r48_jackpot_chips() {
    let mut a = run(
        JP,
        "jackpot 2000000; bet b1 main 1 1000; bet j2 jackpot 2 200; bet j1 jackpot 1 300; nmb; bet j3 jackpot 1 200; display 12345; card seat:1 9H; card dealer 5S; card seat:1 TH; card dealer 6D down; dec 1 stand; card dealer 8C",
    );
    for c in [
        "BJ_JACKPOT_WITHOUT_MAIN_BET",
        "BJ_JACKPOT_WRONG_AMOUNT",
        "BJ_JACKPOT_BET_LATE",
        "BJ_JACKPOT_DISPLAY_MISMATCH",
    ] {
        assert!(has(&a, c), "{c}");
    }
    // j2 (no main bet, r.45) and j3 (a second chip for seat 1's hand, r.47) are returned; j1,
    // of the wrong amount, is settled as played (issue 38).
    for id in ["j2", "j3"] {
        assert_eq!(net(&a, id), 0);
        assert_eq!(a.bet(id).unwrap().outcome, Outcome::Withdrawn);
    }
    assert_eq!(net(&a, "j1"), -300);
    a.violations
        .retain(|v| v.code == "BJ_JACKPOT_DISPLAY_MISMATCH");
    assert_eq!(a.violations.len(), 1);
}

/// P217/2007 T.I C.III S.I r.47 ("a aposta no jackpot é constituída apenas por uma ficha por
/// cada jogador, no montante previamente definido") and r.48 ("deverão ser colocadas antes de o
/// pagador iniciar a distribuição das cartas"): neither prescribes a consequence, so a chip of
/// the wrong amount, or placed late, is flagged and settled as played (not returned): it
/// contributes, loses its amount, or wins the prize of its combination.
#[test]
fn r47_r48_wrong_or_late_chip_settled_as_played() {
    let s = "jackpot 2000000; bet b1 main 1 1000; bet b2 main 2 1000; bet j1 jackpot 1 300; nmb; bet j2 jackpot 2 200;
             card seat:1 AH; card seat:2 AS; card dealer 9S; card seat:1 KH; card seat:2 AC; card dealer 7S down; dec 2 stand";
    let a = run(JP, s);
    assert!(has(&a, "BJ_JACKPOT_WRONG_AMOUNT") && has(&a, "BJ_JACKPOT_BET_LATE"));
    let cite = |c: &str| {
        a.violations
            .iter()
            .find(|v| v.code == c)
            .map(|v| v.citation.to_string())
    };
    assert_eq!(
        cite("BJ_JACKPOT_BET_LATE").as_deref(),
        Some("P217/2007 T.I C.III S.I r.48")
    );
    // j1 (300, suited blackjack) wins its line; j2 (late, two aces) 25 x 200.
    assert_eq!(a.bet("j1").unwrap().outcome, Outcome::Won);
    assert_eq!(a.bet("j2").unwrap().outcome, Outcome::Won);
    assert_eq!(net(&a, "j2"), 5_000 - 200);
    // A losing late chip loses its amount.
    let s = "bet b1 main 1 1000; card seat:1 9H; bet j1 jackpot 1 200; card dealer 5S; card seat:1 TH; card dealer 6D down; dec 1 stand; card dealer 8C";
    let a = run(JP, s);
    assert!(has(&a, "BJ_JACKPOT_BET_LATE"));
    assert_eq!(net(&a, "j1"), -200);
    assert_eq!(a.bet("j1").unwrap().outcome, Outcome::Lost);
}

/// r.43, r.50: configured table with a percentage line and a whole line in one round.
#[test]
fn r43_r50_configured_table() {
    let s = "jackpot 2000000; bet b1 main 1 1000; bet b2 main 2 1000; bet j1 jackpot 1 200; bet j2 jackpot 2 200; nmb;
             card seat:1 AH; card seat:2 AS; card dealer 9S; card seat:1 KH; card seat:2 AC; card dealer 7S down; dec 2 stand";
    let a = run(JP, s);
    // j1 suited blackjack: 10% of 2,000,300 = 200,030; j2 two aces 25 x 200 = 5,000.
    assert_eq!(net(&a, "j1"), 200_030 - 200);
    assert_eq!(net(&a, "j2"), 5_000 - 200);
    let acc = a.jackpot.unwrap();
    assert_eq!(acc.value_after_e4, (2_000_300 - 205_030) * 10_000);
    assert!(!acc.reset);
}

/// r.11: warning card: the next round is the last only if it came out before it.
#[test]
fn r11_warning_card() {
    assert_eq!(warning_card_codes(), vec!["BJ_PLAYED_PAST_WARNING_CARD"]);
    let mut st = BlackjackState::default();
    let after_last = format!(
        "{} dec 1 stand; proc warning_card",
        deal1("TH", "8S", "TD", "7S")
    );
    assert!(run_st(P217, &mut st, &after_last).violations.is_empty());
    let next = format!("{} dec 1 stand", deal1("TH", "9S", "TD", "7C"));
    assert!(run_st(P217, &mut st, &next).violations.is_empty());
    assert!(has(
        &run_st(P217, &mut st, &next),
        "BJ_PLAYED_PAST_WARNING_CARD"
    ));
    let shuffled = format!("proc shuffle; {next}");
    assert!(run_st(P217, &mut st, &shuffled).violations.is_empty());
}

/// r.52, r.54, r.61: shuffler procedures.
#[test]
fn r52_r54_r61_shuffler() {
    let t = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,"settings":{"shuffler":"batch"}}"#;
    let a = run(t, "proc cut; proc shuffler_load 1; proc shuffler_load 2");
    assert!(has(&a, "BJ_CUT_WITH_SHUFFLER") && has(&a, "BJ_SHUFFLER_LOAD_IRREGULAR"));
    let mut st = BlackjackState::default();
    assert!(
        run_st(
            t,
            &mut st,
            "proc table_open; role fiscal_chefe; proc shuffler_load 2"
        )
        .violations
        .is_empty()
    );
    assert!(has(
        &run_st(t, &mut st, "role fiscal_chefe; proc shuffler_load 2"),
        "BJ_SHUFFLER_LOAD_IRREGULAR"
    ));
    assert!(
        run_st(
            t,
            &mut st,
            "proc table_close; proc table_open; role fiscal_chefe; proc shuffler_load 3"
        )
        .violations
        .is_empty()
    );
    let t = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,"settings":{"shuffler":"continuous"}}"#;
    let r = format!(
        "{} dec 1 stand; proc complaint upheld; proc cards_to_shuffler; proc complaint upheld",
        deal1("TH", "8S", "TD", "7S")
    );
    let a = run(t, &r);
    assert_eq!(codes(&a), vec!["BJ_COMPLAINT_AFTER_INSERTION"]);
}

/// ROBJ/2015 r.27-r.30: void rounds.
#[test]
fn robj_void_rules() {
    let a = run(
        ONLINE,
        "bet b1 main 1 1000; card seat:1 9H; fault malfunction; settle b1 1000",
    );
    assert!(has(&a, "BJO_VOID_ROUND_SETTLED"));
    assert!(a.void.is_some());
    // One breach, one finding (issue 38; rules-core): no BJ_WRONG_PAYOUT for the same bet.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    let a = run(
        ONLINE,
        &format!(
            "{} fault player_connection; dec 1 stand; void player_connection; settle_void",
            deal1("TH", "8S", "TD", "7S")
        ),
    );
    assert!(has(&a, "BJO_ROUND_WRONGLY_VOIDED"));
    assert_eq!(net(&a, "b1"), 1000);
    // The bet returned (reported 0) is the wrongly-voided finding, not also a wrong payout.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    // A malfunction after the result was determined does not void the round.
    let a = run(
        ONLINE,
        &format!(
            "{} dec 1 stand; fault malfunction; void malfunction",
            deal1("TH", "8S", "TD", "7S")
        ),
    );
    assert!(has(&a, "BJO_ROUND_WRONGLY_VOIDED"));
    assert!(a.void.is_none());
}

/// ROBJ/2015 r.35, r.36: inactivity sessions.
#[test]
fn robj_sessions() {
    assert!(has(
        &run(
            ONLINE,
            "proc session_start seat=2; proc session_ended inactivity seat=2"
        ),
        "BJO_SESSION_ENDED_WITHOUT_WARNING"
    ));
    let cfg = BlackjackEngine::configure(&table(ONLINE)).unwrap().config;
    let mut st = BlackjackState::default();
    let play = |st: &mut BlackjackState, s: &str| {
        BlackjackEngine::adjudicate(&cfg, st, &round(s), &Options::default()).unwrap()
    };
    play(&mut st, "proc session_start seat=2");
    let idle = format!(
        "proc shuffle; {} dec 1 stand",
        deal1("TH", "8S", "TD", "7S")
    );
    for _ in 0..6 {
        play(&mut st, &idle);
    }
    assert_eq!(
        st.online_seats
            .iter()
            .find(|s| s.seat == 2)
            .unwrap()
            .idle_rounds,
        7
    );
    let warned = format!("proc session_warning seat=2; {idle}");
    assert!(play(&mut st, &warned).violations.is_empty());
    let a = play(
        &mut st,
        &format!("{idle}; proc session_ended inactivity seat=2"),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(st.online_seats.iter().all(|s| s.seat != 2));
    // Warned too early (after 2 idle rounds).
    let mut st = BlackjackState::default();
    play(&mut st, "proc session_start seat=2");
    play(&mut st, &idle);
    play(&mut st, &warned);
    assert!(has(
        &play(
            &mut st,
            &format!("{idle}; proc session_ended inactivity seat=2")
        ),
        "BJO_SESSION_ENDED_WITHOUT_WARNING"
    ));
    // Single-player table: 3 minutes, then one more.
    let t = r#"{"game":"blackjack_online","decks":6,"seats":1,"settings":{"single_player_table":true}}"#;
    let cfg = BlackjackEngine::configure(&table(t)).unwrap().config;
    let mut st = BlackjackState::default();
    let mut go = |s: &str| {
        BlackjackEngine::adjudicate(&cfg, &mut st, &round(s), &Options::default()).unwrap()
    };
    go("@0 proc session_start seat=1; @1000 proc session_warning seat=1");
    assert!(has(
        &go("@70000 proc session_ended inactivity seat=1"),
        "BJO_SESSION_ENDED_WITHOUT_WARNING"
    ));
    let mut st = BlackjackState::default();
    let mut go = |s: &str| {
        BlackjackEngine::adjudicate(&cfg, &mut st, &round(s), &Options::default()).unwrap()
    };
    go("@0 proc session_start seat=1; @200000 proc session_warning seat=1");
    assert!(
        go("@260000 proc session_ended inactivity seat=1")
            .violations
            .is_empty()
    );
}

/// ROBJ/2015 r.35(b), r.36: a seat that bets with no recorded session start is followed under
/// its own number, so its idle rounds count from its own last bet.
#[test]
fn robj_r35_a_seat_that_bets_is_followed_under_its_own_number() {
    let cfg = BlackjackEngine::configure(&table(ONLINE)).unwrap().config;
    let mut st = BlackjackState::default();
    let bet = format!(
        "proc shuffle; {} dec 1 stand",
        deal1("TH", "8S", "TD", "7S")
    );
    BlackjackEngine::adjudicate(&cfg, &mut st, &round(&bet), &Options::default()).unwrap();
    let seats: Vec<_> = st
        .online_seats
        .iter()
        .map(|s| (s.seat, s.idle_rounds))
        .collect();
    assert_eq!(seats, [(1, 0)]);
}

/// ROBJ/2015 r.25(h) read literally (setting): 21 against blackjack ties; r.25(f) insurance.
#[test]
fn robj_payout_settings() {
    let t = r#"{"game":"blackjack_online","decks":6,"settings":{"online_blackjack_beats_21":false,"blackjack_pays":[6,5]}}"#;
    let s = "bet b1 main 1 1000; card seat:1 7H; card dealer AS; card seat:1 7D; card dealer KD down; dec 1 hit; card seat:1 7C; dec 1 stand";
    let a = run(t, s);
    // three 7s: tie on 21 (r.25(h) literal) plus the special prize (r.25(i)).
    assert_eq!(net(&a, "b1"), 3000);
    let a = run(ONLINE, s);
    assert_eq!(net(&a, "b1"), -1000 + 3000);
    let a = run(
        t,
        "bet b1 main 1 1000; card seat:1 AH; card dealer 9S; card seat:1 KS; card dealer 7S down",
    );
    assert_eq!(net(&a, "b1"), 1200);
}

/// Honest rounds trigger nothing, and a wrong settlement is a discrepancy with both amounts.
#[test]
fn honest_round_and_wrong_payout() {
    let a = run(
        P217,
        &format!(
            "{} dec 1 stand; settle b1 1000",
            deal1("TH", "8S", "TD", "7S")
        ),
    );
    assert!(a.violations.is_empty() && a.discrepancies.is_empty());
    let d = wrong_payout();
    assert_eq!(d, vec!["BJ_WRONG_PAYOUT"]);
}
