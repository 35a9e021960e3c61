//! The digest's worked examples (poker-sem-descarte.md section 12), exact cents.

mod common;
use common::*;
use rules_core::{Engine, Options, Outcome};
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdState};

pub const P217: &str =
    r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000}"#;

fn run(t: &str, s: &str) -> rules_core::Adjudication {
    let cfg = PokerSemDescarteEngine::configure(&table(t)).unwrap();
    assert!(cfg.violations.is_empty(), "{:?}", cfg.violations);
    let a = PokerSemDescarteEngine::adjudicate(
        &cfg.config,
        &mut PsdState::default(),
        &round(s),
        &explain(),
    )
    .unwrap();
    let b = PokerSemDescarteEngine::adjudicate(
        &cfg.config,
        &mut PsdState::default(),
        &round(s),
        &Options::default(),
    )
    .unwrap();
    assert!(b.notes.is_empty() && !a.notes.is_empty());
    assert_eq!(a.bets, b.bets);
    a
}

/// Deal five cards to each listed seat (by hand: one at a time, bank last, fifth bank card up).
pub fn deal(hands: &[(u8, &str)], bank: &str) -> String {
    let hs: Vec<(u8, Vec<&str>)> = hands
        .iter()
        .map(|(s, h)| (*s, h.split_whitespace().collect()))
        .collect();
    let b: Vec<&str> = bank.split_whitespace().collect();
    let mut out = String::new();
    for r in 0..5 {
        for (s, h) in &hs {
            out.push_str(&format!("card seat:{s} {} down;", h[r]));
        }
        out.push_str(&format!(
            "card dealer {}{};",
            b[r],
            if r == 4 { "" } else { " down" }
        ));
    }
    out
}

/// Example A: mixed table, qualifying bank (r.6(g), r.17, r.18).
#[test]
fn example_a_qualifying_bank() {
    let s = format!(
        "bet a1 ante 1 2000; bet a4 ante 4 3000; bet a6 ante 6 2000; nmb; {} dec 1 pass; bet c4 call 4 6000 on=a4; bet c6 call 6 4000 on=a6;
         settle a1 -2000; settle a4 3000; settle c4 18000; settle a6 -2000; settle c6 -4000",
        deal(&[(1, "9S 8D 5H 4D 2S"), (4, "7C 7D 7S JH 2D"), (6, "AC KD 9H 6C 3H")], "KS KH QD 5S 4C")
    );
    let a = run(P217, &s);
    assert_eq!(net(&a, "a1"), -2000);
    assert_eq!(net(&a, "a4"), 3000);
    assert_eq!(net(&a, "c4"), 18000);
    assert_eq!(net(&a, "a6"), -2000);
    assert_eq!(net(&a, "c6"), -4000);
    assert!(
        a.violations.is_empty() && a.discrepancies.is_empty(),
        "{:?} {:?}",
        a.violations,
        a.discrepancies
    );
}

/// Example B: the bank does not qualify (r.18, reading 10.2).
#[test]
fn example_b_bank_does_not_qualify() {
    let s = format!(
        "bet a1 ante 1 5000; bet a2 ante 2 5000; {} bet c1 call 1 10000 on=a1; bet c2 call 2 10000 on=a2",
        deal(
            &[(1, "9S 9D 5H 5D 2S"), (2, "JC 8D 6H 4C 3D")],
            "AH QS TD 8C 3S"
        )
    );
    let a = run(P217, &s);
    assert_eq!(net(&a, "a1"), 5000);
    assert_eq!(net(&a, "c1"), 0);
    assert_eq!(net(&a, "a2"), 5000);
    assert_eq!(net(&a, "c2"), 0);
    assert_eq!(a.bet("c2").unwrap().outcome, Outcome::Push);
}

/// Example C: straights, the ace low in A-2-3-4-5 (r.7(c)).
#[test]
fn example_c_straights() {
    let s = format!(
        "bet a1 ante 1 1000; {} bet c1 call 1 2000 on=a1",
        deal(&[(1, "AS 2S 3D 4C 5H")], "6S 6D 6H JC 9D")
    );
    let a = run(P217, &s);
    assert_eq!(net(&a, "a1"), 1000);
    assert_eq!(net(&a, "c1"), 8000);
    let s = format!(
        "bet a1 ante 1 1000; {} bet c1 call 1 2000 on=a1",
        deal(&[(1, "AS 2S 3D 4C 5H")], "3H 4H 5D 6C 7S")
    );
    let a = run(P217, &s);
    assert_eq!(net(&a, "a1"), -1000);
    assert_eq!(net(&a, "c1"), -2000);
}

/// Example D: jackpot round under P461/2001 (r.9, r.12(a)).
#[test]
fn example_d_jackpot_p461() {
    let t = r#"{"game":"poker_sem_descarte","regulation":"P461/2001","min_bet_cents":1000,"max_bet_cents":25000,
        "jackpot":{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000}}"#;
    let s = format!(
        "jackpot 1800000; bet a2 ante 2 1000; bet a3 ante 3 1000; bet a5 ante 5 1000; bet j2 jackpot 2 100; bet j3 jackpot 3 100; bet j5 jackpot 5 100; nmb; display 1800240;
         {} bet c2 call 2 2000 on=a2; bet c3 call 3 2000 on=a3; bet c5 call 5 2000 on=a5",
        deal(&[(2, "9S 9D 9H 9C 2S"), (3, "JC 8D 6H 4C 3D"), (5, "AH KH QH JH TH")], "AS QS TD 8C 3S")
    );
    let a = run(t, &s);
    assert_eq!(net(&a, "j2"), 49_900);
    assert_eq!(net(&a, "j5"), 1_750_140);
    assert_eq!(net(&a, "j3"), -100);
    let acc = a.jackpot.as_ref().unwrap();
    assert!(acc.reset);
    assert_eq!(acc.value_after_e4, 1_000_000 * 10_000);
    assert_eq!(acc.contributions_e4, 240 * 10_000);
    // The bank does not qualify (no king): antes paid 1:1, calls returned.
    assert_eq!(net(&a, "a5"), 1000);
    assert_eq!(net(&a, "c5"), 0);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// Example E: P217 r.12(c) divides a fixed prize; P461 pays each in full.
#[test]
fn example_e_division_by_version() {
    let jp = |reg: &str| {
        format!(
            r#"{{"game":"poker_sem_descarte","regulation":"{reg}","min_bet_cents":1000,"max_bet_cents":25000,
            "jackpot":{{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000{}}}}}"#,
            if reg == "P217/2007" {
                r#","paytable":[{"combination":"four_of_a_kind","award":{"kind":"multiple","times":500}}]"#
            } else {
                ""
            }
        )
    };
    let s = format!(
        "jackpot 1000000; bet a1 ante 1 1000; bet a2 ante 2 1000; bet j1 jackpot 1 100; bet j2 jackpot 2 100; nmb;
         {} bet c1 call 1 2000 on=a1; bet c2 call 2 2000 on=a2",
        deal(&[(1, "9S 9D 9H 9C 2S"), (2, "5C 5D 5H 5S 3D")], "AS KS TD 8C 3S")
    );
    let a = run(&jp("P217/2007"), &s);
    assert_eq!(net(&a, "j1"), 25_000 - 100);
    assert_eq!(net(&a, "j2"), 25_000 - 100);
    let a = run(&jp("P461/2001"), &s);
    assert_eq!(net(&a, "j1"), 50_000 - 100);
    assert_eq!(net(&a, "j2"), 50_000 - 100);
}
