//! The digest's worked examples (blackjack.md section 15), exact cents.

mod common;
use common::*;
use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::{Engine, Options, Outcome};

const P217: &str = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6}"#;

fn run(table_json: &str, script: &str) -> rules_core::Adjudication {
    let cfg = BlackjackEngine::configure(&table(table_json)).unwrap();
    assert!(cfg.violations.is_empty(), "{:?}", cfg.violations);
    let mut st = BlackjackState::default();
    let a = BlackjackEngine::adjudicate(&cfg.config, &mut st, &round(script), &explain()).unwrap();
    // explain off gives the same verdict without notes
    let mut st2 = BlackjackState::default();
    let b = BlackjackEngine::adjudicate(&cfg.config, &mut st2, &round(script), &Options::default())
        .unwrap();
    assert!(b.notes.is_empty());
    assert_eq!(a.bets, b.bets);
    assert!(!a.notes.is_empty());
    a
}

/// Example A: soft 17, double and surrender (P217 r.6(a), r.19, r.29, r.36).
#[test]
fn example_a_soft_17_double_surrender() {
    let a = run(
        P217,
        "bet b2 main 2 5000; bet b4 main 4 3000;
         card seat:2 9D; card seat:4 TC; card dealer 7S; card seat:2 2C; card seat:4 6H; card dealer AC down;
         dec 2 double 5000; card seat:2 8H; dec 4 surrender;
         settle b2 10000; settle b4 -1500",
    );
    assert_eq!(net(&a, "b2"), 10_000);
    assert_eq!(net(&a, "b4"), -1_500);
    assert_eq!(a.bet("b2").unwrap().stake_cents, 10_000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty());
}

/// Example B: complementary bettor and split (r.15, r.26, r.28).
#[test]
fn example_b_complementary_and_split() {
    let script = "bet p1 main 3 4000 player=P1; bet p2 complementary 3 2000 on=p1 player=P2;
         card seat:3 8S; card dealer 9H; card seat:3 8C; card dealer 7C down;
         dec 3 split 4000; card seat:3 5D; dec 3 hit; card seat:3 JS; card seat:3/2 QD; dec 3/2 stand;
         card dealer 4S";
    let a = run(P217, script);
    assert_eq!(net(&a, "p1"), -8_000);
    assert_eq!(net(&a, "p2"), -2_000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Had P2 followed the split he would lose 2,000 on each hand.
    let followed = script.replace(
        "dec 3 split 4000;",
        "dec 3 split 4000; dec 3 split 2000 bet=p2;",
    );
    let a = run(P217, &followed);
    assert_eq!(net(&a, "p2"), -4_000);
    assert_eq!(a.bet("p2").unwrap().stake_cents, 4_000);
}

/// Example C: jackpot round under P1364/2001 (r.43, r.50).
#[test]
fn example_c_jackpot_p1364() {
    let t = r#"{"game":"blackjack","regulation":"P1364/2001","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,
        "jackpot":{"bet_amount_cents":200,"increment_bp":7500,"start_value_cents":2000000}}"#;
    let a = run(
        t,
        "jackpot 1500000; display 1500000;
         bet m1 main 1 1000; bet m2 main 2 1000; bet m5 main 5 1000; bet m6 main 6 1000;
         bet j1 jackpot 1 200; bet j2 jackpot 2 200; bet j5 jackpot 5 200; bet j6 jackpot 6 200;
         nmb; display 1500600;
         card seat:1 TS; card seat:2 AH; card seat:5 AD; card seat:6 9C; card dealer 6S;
         card seat:1 9S; card seat:2 AC; card seat:5 AH; card seat:6 8C; card dealer TD down;
         dec 1 stand; dec 2 stand; dec 5 split 1000; card seat:5 AD; card seat:5/2 AH; dec 6 stand;
         card dealer 2S; display 2000000;
         settle j2 4800; settle j5 1495400; settle j1 -200; settle j6 -200;
         settle m1 1000; settle m2 -1000; settle m5 -2000; settle m6 -1000",
    );
    assert_eq!(net(&a, "j2"), 4_800);
    assert_eq!(net(&a, "j5"), 1_495_400);
    assert_eq!(net(&a, "j1"), -200);
    assert_eq!(net(&a, "j6"), -200);
    let acc = a.jackpot.as_ref().unwrap();
    assert_eq!(acc.contributions_e4, 600 * 10_000);
    assert!(acc.reset);
    assert_eq!(acc.value_after_e4, 2_000_000 * 10_000);
    assert_eq!(acc.prizes_cents, 1_500_600);
    assert_eq!(a.jackpot_wins.len(), 2);
    assert_eq!(a.jackpot_wins[0].combination, "two_aces_different_suits");
    assert_eq!(a.jackpot_wins[1].combination, "four_aces_same_colour");
    // Main bets: 19 v 18 wins, 12 v 18 loses, the split aces lose twice, 17 loses.
    assert_eq!(net(&a, "m1"), 1_000);
    assert_eq!(net(&a, "m2"), -1_000);
    assert_eq!(net(&a, "m5"), -2_000);
    assert_eq!(net(&a, "m6"), -1_000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty());
}

/// Example D: insurance and even money (r.33, r.34).
#[test]
fn example_d_insurance_even_money() {
    let script = "bet b1 main 1 6000; bet b6 main 6 4000;
         card seat:1 KH; card seat:6 AD; card dealer AS; card seat:1 9C; card seat:6 QC; card dealer HOLE down;
         bet i1 insurance 1 3000 on=b1; dec 6 even_money; dec 1 stand; DRAW";
    let a = run(
        P217,
        &script
            .replace("HOLE", "3D")
            .replace("DRAW", "card dealer 6C"),
    );
    assert_eq!(net(&a, "i1"), -3_000);
    assert_eq!(net(&a, "b1"), -6_000);
    assert_eq!(net(&a, "b6"), 4_000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run(P217, &script.replace("HOLE", "KS").replace("DRAW", ""));
    assert_eq!(net(&a, "i1"), 6_000);
    assert_eq!(net(&a, "b1"), -6_000);
    assert_eq!(net(&a, "b6"), 4_000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// Example E: dealer over-draw (r.19): the card does not count.
#[test]
fn example_e_dealer_overdraw() {
    let a = run(
        P217,
        "bet b1 main 1 1000; bet b2 main 2 1000;
         card seat:1 TH; card seat:2 TS; card dealer TD; card seat:1 8H; card seat:2 7C; card dealer 7S down;
         dec 1 stand; dec 2 stand; card dealer 3C;
         settle b1 -1000; settle b2 -1000",
    );
    assert_eq!(net(&a, "b1"), 1_000);
    assert_eq!(net(&a, "b2"), 0);
    assert_eq!(a.bet("b2").unwrap().outcome, Outcome::Push);
    assert_eq!(codes(&a), vec!["BJ_DEALER_DREW_ON_17"]);
    assert_eq!(a.discrepancies.len(), 2);
    assert!(a.discrepancies.iter().all(|d| d.code == "BJ_WRONG_PAYOUT"));
}

/// Example F: online void (ROBJ/2015 r.27-r.30).
#[test]
fn example_f_online_void() {
    let t = r#"{"game":"blackjack_online","min_bet_cents":100,"max_bet_cents":10000,"decks":6,"seats":1}"#;
    let cfg = BlackjackEngine::configure(&table(t)).unwrap().config;
    let mut st = BlackjackState::default();
    let a = BlackjackEngine::adjudicate(
        &cfg,
        &mut st,
        &round(
            "bet b1 main 1 1000; card seat:1 9H; fault malfunction; void malfunction; settle_void",
        ),
        &explain(),
    )
    .unwrap();
    assert!(a.void.is_some());
    assert_eq!(net(&a, "b1"), 0);
    assert_eq!(a.bet("b1").unwrap().outcome, Outcome::Void);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // The player's connection drops: the round goes on and is settled.
    let a = BlackjackEngine::adjudicate(
        &cfg,
        &mut st,
        &round(
            "bet b1 main 1 1000; card seat:1 9H; fault player_connection; card dealer 8S; card seat:1 TH;
             card dealer 9D down; dec 1 stand; settle b1 1000",
        ),
        &Options::default(),
    )
    .unwrap();
    assert!(a.void.is_none());
    assert_eq!(net(&a, "b1"), 1_000);
    assert!(
        a.violations.is_empty() && a.discrepancies.is_empty(),
        "{:?} {:?}",
        a.violations,
        a.discrepancies
    );
}
