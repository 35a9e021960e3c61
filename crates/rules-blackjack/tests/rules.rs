//! More rule tests, each named after its citation, and the record errors.

mod common;
use common::*;
use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::{Adjudication, Engine, Options, RoundError};

const P217: &str = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6}"#;
const CONT: &str = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":4,"settings":{"shuffler":"continuous"}}"#;

fn try_run(t: &str, st: &mut BlackjackState, s: &str) -> Result<Adjudication, RoundError> {
    let cfg = BlackjackEngine::configure(&table(t)).unwrap().config;
    BlackjackEngine::adjudicate(&cfg, st, &round(s), &Options::default())
}

fn run(t: &str, s: &str) -> Adjudication {
    try_run(t, &mut BlackjackState::default(), s).unwrap()
}

fn deal1(a: &str, b: &str, u: &str, h: &str) -> String {
    format!(
        "bet b1 main 1 1000; card seat:1 {a}; card dealer {u}; card seat:1 {b}; card dealer {h} down;"
    )
}

/// P217/2007 T.I C.III S.I r.23, r.25: closer to 21 wins 1:1; dealer over 21 loses (13.2).
#[test]
fn r23_r25_wins() {
    assert_eq!(
        net(
            &run(
                P217,
                &format!("{} dec 1 stand", deal1("TH", "9S", "TD", "7S"))
            ),
            "b1"
        ),
        1000
    );
    assert_eq!(
        net(
            &run(
                P217,
                &format!(
                    "{} dec 1 stand; card dealer 8C",
                    deal1("TH", "2S", "TD", "6S")
                )
            ),
            "b1"
        ),
        1000
    );
}

/// r.24: equal totals: null.
#[test]
fn r24_tie() {
    assert_eq!(
        net(
            &run(
                P217,
                &format!("{} dec 1 stand", deal1("TH", "8S", "TD", "8C"))
            ),
            "b1"
        ),
        0
    );
}

/// r.27: re-split a further card of the same value (hand 3 is created).
#[test]
fn r27_resplit() {
    let s = format!(
        "{} dec 1 split; card seat:1 8D; dec 1 split; card seat:1 TC; dec 1 stand; card seat:1/3 9C; dec 1/3 stand; card seat:1/2 QD; dec 1/2 stand",
        deal1("8H", "8S", "TS", "7S")
    );
    let a = run(P217, &s);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Three hands of 1000: 18, 17, 18 against 17: +1000 +0 +1000.
    assert_eq!(net(&a, "b1"), 2000);
    assert_eq!(a.bet("b1").unwrap().stake_cents, 3000);
}

/// r.20, r.26: both hands of split aces are split hands: an ace and a ten on either is 21, not
/// a blackjack, and each takes one card only (the second hand as much as the first).
#[test]
fn r20_r26_split_aces_both_hands() {
    let s = format!(
        "{} dec 1 split; card seat:1 KD; card seat:1/2 QC",
        deal1("AH", "AS", "TS", "7S")
    );
    let a = run(P217, &s);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Two hands of 1000 at 21 against 17, paid 1:1 each (not 3:2).
    assert_eq!(net(&a, "b1"), 2000);
    let hit = format!("{s}; dec 1/2 hit; card seat:1/2 5C");
    let v: Vec<_> = run(P217, &hit)
        .violations
        .iter()
        .map(|v| (v.code.to_string(), v.citation.to_string()))
        .collect();
    assert_eq!(
        v,
        [(
            "BJ_HIT_AFTER_SPLIT_ACES".to_string(),
            "P217/2007 T.I C.III S.I r.26".to_string()
        )]
    );
}

/// r.15: complementary bettors insure freely; r.28 applied to a vacant seat's follower (r.16).
#[test]
fn r15_r16_r28_followers() {
    let s = "bet p1 main 2 2000; bet p2 complementary 2 1000 on=p1; card seat:2 TH; card dealer AS; card seat:2 9H; card dealer KD down;
             bet i2 insurance 2 500 on=p2; dec 2 stand";
    let a = run(P217, s);
    assert_eq!(net(&a, "i2"), 1000);
    assert_eq!(net(&a, "p1"), -2000);
    assert_eq!(net(&a, "p2"), -1000);
    let s = "bet v1 vacant 4 3000 home=1; bet v2 vacant 4 1000 home=2; card seat:4 8H; card dealer 6S; card seat:4 8C; card dealer TD down;
             dec 4 split 3000; dec 4 split 1000 bet=v2; card seat:4 TC; dec 4 stand; card seat:4/2 2C; dec 4/2 hit; card seat:4/2 9D; dec 4/2 stand; card dealer 9C";
    let a = run(P217, s);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Dealer 6+T+9 = 25: both hands win; v1 decides (largest bet), v2 followed the split.
    assert_eq!(net(&a, "v1"), 6000);
    assert_eq!(net(&a, "v2"), 2000);
}

/// r.55: the shuffler is emptied with a fiscal-chefe present.
#[test]
fn r55_unload_needs_fiscal_chefe() {
    assert!(run(CONT, "proc shuffler_unload").has_violation("BJ_SHUFFLER_LOAD_IRREGULAR"));
    assert!(
        run(CONT, "role fiscal_chefe; proc shuffler_unload")
            .violations
            .is_empty()
    );
}

/// r.59, r.60: a continuous shuffler takes the round's cards back (the count restarts), unless
/// they could not be inserted, in which case they still count in the next round.
#[test]
fn r59_r60_continuous_shuffler_count() {
    let r = "bet b1 main 1 1000; card seat:1 AS; card dealer AS; card seat:1 AS; card dealer 7S down; dec 1 hit; card seat:1 9S; dec 1 stand";
    let mut st = BlackjackState::default();
    for _ in 0..5 {
        assert!(try_run(CONT, &mut st, r).unwrap().violations.is_empty());
    }
    let left = format!("{r}; proc cards_not_inserted");
    assert!(try_run(CONT, &mut st, &left).unwrap().violations.is_empty());
    assert!(st.cards_left_out);
    assert!(
        try_run(CONT, &mut st, r)
            .unwrap()
            .has_violation("BJ_SHOE_CARD_OVERCOUNT")
    );
}

/// P1364/2001 r.43, reading 13.9: three aces with two alike fit neither three-ace line; the
/// first two cards decide (two aces of one suit: 100 x).
#[test]
fn p1364_r43_mixed_three_aces() {
    let t = r#"{"game":"blackjack","regulation":"P1364/2001","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,
        "jackpot":{"bet_amount_cents":200,"increment_bp":7500,"start_value_cents":2000000}}"#;
    let s = "jackpot 2000000; bet b1 main 1 1000; bet j1 jackpot 1 200; card seat:1 AS; card dealer 9D; card seat:1 AS; card dealer 7S down; dec 1 hit; card seat:1 AH; dec 1 hit; card seat:1 5C";
    let a = run(t, s);
    assert_eq!(a.jackpot_wins[0].combination, "two_aces_same_suit");
    assert_eq!(net(&a, "j1"), 100 * 200 - 200);
}

/// Whole and percentage awards need the jackpot's value: without it the record cannot be
/// priced (a RoundError, state unchanged).
#[test]
fn jackpot_needs_its_value() {
    let t = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,"jackpot":{"bet_amount_cents":200,"increment_bp":7500,"start_value_cents":2000000,
        "paytable":[{"combination":"two_aces","award":{"kind":"whole"}}]}}"#;
    let s = "bet b1 main 1 1000; bet j1 jackpot 1 200; card seat:1 AS; card dealer 9D; card seat:1 AH; card dealer 7S down; dec 1 stand";
    let mut st = BlackjackState::default();
    let before = st.clone();
    assert!(try_run(t, &mut st, s).is_err());
    assert_eq!(st, before);
    // Without a winner the value is not needed.
    let s = s.replace("card seat:1 AH", "card seat:1 KH");
    assert!(try_run(t, &mut st, &s).is_ok());
}

/// Records the engine cannot make sense of are RoundErrors naming the event or bet, and leave
/// the state unchanged.
#[test]
fn record_errors() {
    let cases = [
        "bet b1 main 1 1000; bet b1 main 2 1000",
        "bet b1 main 1 0",
        "bet b1 main 1 1000000000001",
        "bet b1 main 1 1000; dec 3 hit",
        "bet b1 main 1 1000; dec 1/4 hit",
        "bet b1 main 1 1000; card seat:1 TH; dec 1 fold",
        "bet b1 main 1 1000; bet c1 complementary 1 1000 on=zz",
        "bet b1 main 1 1000; change zz 1000",
        "bet b1 main 1 1000; card ponto TH",
        "bet b1 main 1 1000; proc bogus",
        "bet b1 main 1 1000; bet j1 jackpot 1 200",
        "bet b1 main 1 1000; bet b2 main 1 1000",
    ];
    for s in cases {
        let mut st = BlackjackState::default();
        st.shoe.add("AS".parse().unwrap());
        let before = st.clone();
        let e = try_run(P217, &mut st, s);
        assert!(e.is_err(), "{s}");
        assert_eq!(st, before, "{s}");
        let msg = e.unwrap_err().to_string();
        assert!(msg.contains("round r1"), "{msg}");
    }
}
