//! Every worked example of the ponto e banca digest (section 9), in exact cents.

mod common;
use common::*;
use rules_core::{GameId, Setting};

/// Example 1 (S.III, 5pct): ponto 7 stands, banca 6 stands because the ponto took no card
/// (P217/2007 T.I C.III S.III r.13); ponto 7 beats 6 (r.17); 7D KC is no pair (r.19).
#[test]
fn example_1_ponto_seven_beats_six() {
    let t = set(pb("5pct"), "pairs_offered", Setting::Bool(true));
    let r = round(cat(vec![
        vec![
            bet("p", "ponto", 2500),
            bet("b", "banca", 5000),
            bet("pp", "pair_ponto", 500),
            nmb(),
        ],
        cards("p:7D b:2H p:KC b:4S"),
    ]));
    let a = run(&t, &r);
    assert_eq!(net(&a, "p"), 2500);
    assert_eq!(net(&a, "b"), -5000);
    assert_eq!(net(&a, "pp"), -500);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// Example 2 (S.III, 5pct): banca 5 against a third card of 4 must draw (r.13), wins 9-8;
/// 5% of the prize deducted (r.20(a)).
#[test]
fn example_2_banca_five_draws_on_four_and_pays_commission() {
    let r = round(cat(vec![
        vec![
            bet("b", "banca", 4000),
            bet("t", "tie", 1000),
            bet("p", "ponto", 2000),
            nmb(),
        ],
        cards("p:3S b:4D p:AH b:AS p:4C b:4H"),
    ]));
    let a = run(&pb("5pct"), &r);
    assert_eq!(net(&a, "b"), 3800);
    assert_eq!(net(&a, "t"), -1000);
    assert_eq!(net(&a, "p"), -2000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// Example 3 (S.IV, half_on_5): banca 5 against 3 stands and wins with 5: half the prize
/// (P217/2007 T.I C.III S.IV r.20(b)); with 6 it would be the full prize.
#[test]
fn example_3_macau_half_on_five() {
    let t = macau("half_on_5", 1_000_000);
    let r = round(cat(vec![
        vec![bet("b", "banca", 6000), nmb()],
        cards("p:9S b:4C p:2H b:AS p:3C"),
    ]));
    let a = run(&t, &r);
    assert_eq!(net(&a, "b"), 3000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Had the banca won with 6 (same coup, banca 4C 2S = 6 stands against 3): full prize.
    let r6 = round(cat(vec![
        vec![bet("b", "banca", 6000), nmb()],
        cards("p:9S b:4C p:2H b:2S p:3C"),
    ]));
    assert_eq!(net(&run(&t, &r6), "b"), 6000);
}

/// Example 4 (5pct): the banca drew against the tableau; the card is removed (r.14) and ponto 7
/// beats banca 6. The casino settled the dealt hand: PB_BANCA_DREW_AGAINST_TABLEAU and
/// PB_WRONG_PAYOUT.
#[test]
fn example_4_card_against_tableau_removed() {
    let r = with_settlement(
        round(cat(vec![
            vec![bet("p", "ponto", 1000), bet("b", "banca", 1000), nmb()],
            cards("p:5C b:6D p:2S b:KH b:3H"),
        ])),
        &[("p", -1000), ("b", 950)],
    );
    let a = run(&pb("5pct"), &r);
    assert_eq!(net(&a, "p"), 1000);
    assert_eq!(net(&a, "b"), -1000);
    assert_eq!(codes(&a), vec!["PB_BANCA_DREW_AGAINST_TABLEAU"]);
    assert_eq!(a.discrepancies.len(), 2);
    assert!(a.discrepancies.iter().all(|d| d.code == "PB_WRONG_PAYOUT"));
    let v = &a.violations[0];
    assert_eq!(v.citation, "P217/2007 T.I C.III S.III r.13");
    assert_eq!(v.event_index, Some(7));
}

/// Example 5 (S.IV, M = 10 000 €): exposure 7000 ≤ M; ties 1100 € > 10% of M
/// (P217/2007 T.I C.III S.IV r.24); banca pair 700 € ≤ 8% of M; no individual maximum (r.21).
#[test]
fn example_5_macau_limits() {
    let mut t = macau("5pct", 1_000_000);
    t.settings
        .insert("pairs_offered".into(), Setting::Bool(true));
    t.max_bet_cents = Some(100); // ignored in Macau (S.IV r.21)
    let r = round(cat(vec![
        vec![
            bet("p1", "ponto", 300_000),
            bet("p2", "ponto", 200_000),
            bet("b1", "banca", 1_200_000),
            bet("t1", "tie", 60_000),
            bet("t2", "tie", 50_000),
            bet("bp", "pair_banca", 70_000),
            nmb(),
        ],
        cards("p:7D b:2H p:KC b:4S"),
    ]));
    let a = run(&t, &r);
    assert_eq!(codes(&a), vec!["PB_MACAU_TIE_TOTAL_EXCEEDED"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.I C.III S.IV r.24");
    assert_eq!(t.game, GameId::BaccaratMacau);
}
