//! Exhaustive enumerations: the tableau against the known probabilities (infinite deck and an
//! 8-deck shoe, exact rational arithmetic), the exact expected return of every bet under every
//! commission option, and the chemin de fer banker's table against the ponto e banca tableau.

mod common;
use common::*;
use rules_baccarat::punto_banco::{Chance, CoupScores, due_net, play_from_shoe};
use rules_baccarat::tableau::{
    CF_BANKER, Cf, CfPonto, NO_THIRD, PB_BANCA, Pb, cf_ponto, pb_ponto_draws,
};
use rules_baccarat::{BaccaratConfig, PbConfig};
use rules_core::Card;

/// One representative card per value 0-9.
fn rep(v: usize) -> Card {
    c(["KS", "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S"][v])
}

/// Enumerate every coup by card value. `weight(counts_taken, v)` gives the weight of drawing a
/// card of value `v` given how many of each value were already drawn; `tail(used)` normalises a
/// coup that used fewer than 6 cards. Calls `f(scores, weight)`.
fn enumerate(
    weight: &dyn Fn(&[u32; 10], usize) -> u128,
    tail: &dyn Fn(usize) -> u128,
    f: &mut dyn FnMut(&CoupScores, u128),
) {
    let mut taken = [0u32; 10];
    let mut seq = [0usize; 6];
    fn go(
        depth: usize,
        w: u128,
        seq: &mut [usize; 6],
        taken: &mut [u32; 10],
        weight: &dyn Fn(&[u32; 10], usize) -> u128,
        tail: &dyn Fn(usize) -> u128,
        f: &mut dyn FnMut(&CoupScores, u128),
    ) {
        if depth >= 4 {
            let shoe: Vec<Card> = seq[..depth].iter().map(|v| rep(*v)).collect();
            if let Some(s) = play_from_shoe(&shoe) {
                if s.cards_used == depth {
                    f(&s, w * tail(depth));
                    return;
                }
                assert!(s.cards_used > depth);
            }
        }
        if depth == 6 {
            unreachable!("a coup takes at most 6 cards");
        }
        for v in 0..10 {
            let wv = weight(taken, v);
            if wv == 0 {
                continue;
            }
            seq[depth] = v;
            taken[v] += 1;
            go(depth + 1, w * wv, seq, taken, weight, tail, f);
            taken[v] -= 1;
        }
    }
    go(0, 1, &mut seq, &mut taken, weight, tail, f);
}

#[derive(Default, Debug)]
struct Tally {
    total: u128,
    ponto: u128,
    banca: u128,
    tie: u128,
    banca_on_5: u128,
}

fn tally(weight: &dyn Fn(&[u32; 10], usize) -> u128, tail: &dyn Fn(usize) -> u128) -> Tally {
    let mut t = Tally::default();
    enumerate(weight, tail, &mut |s, w| {
        t.total += w;
        match s.ponto.cmp(&s.banca) {
            std::cmp::Ordering::Greater => t.ponto += w,
            std::cmp::Ordering::Less => {
                t.banca += w;
                if s.banca == 5 {
                    t.banca_on_5 += w;
                }
            }
            std::cmp::Ordering::Equal => t.tie += w,
        }
    });
    t
}

/// `num / den` rounded to 6 decimal places, as an integer of millionths.
fn six_places(num: u128, den: u128) -> u128 {
    (num * 2_000_000 + den) / (2 * den)
}

fn infinite() -> Tally {
    // Each rank 1/13: value 0 has four ranks (10, J, Q, K).
    tally(&|_, v| if v == 0 { 4 } else { 1 }, &|used| {
        13u128.pow(6 - used as u32)
    })
}

fn eight_decks() -> Tally {
    // 8 decks: 128 zero-valued cards (10, J, Q, K) and 32 of each other value, 416 in all,
    // drawn without replacement; a coup of k cards is weighted by the ways to draw the rest.
    let count = |v: usize| if v == 0 { 128u128 } else { 32 };
    let t = tally(
        &move |t, v| count(v).saturating_sub(t[v] as u128),
        &move |used| ((used as u128)..6).map(|i| 416 - i).product::<u128>(),
    );
    assert_eq!(t.total, (0..6u128).map(|i| 416 - i).product::<u128>());
    t
}

/// P217/2007 T.I C.III S.III r.13: the tableau reproduces the infinite-deck probabilities
/// ponto 0.446147, banca 0.458428, tie 0.095426 (exact rationals over 13^6).
#[test]
fn tableau_infinite_deck_probabilities() {
    let t = infinite();
    assert_eq!(t.total, 13u128.pow(6));
    assert_eq!((t.ponto, t.banca, t.tie), (2_153_464, 2_212_744, 460_601));
    assert_eq!(six_places(t.ponto, t.total), 446_147);
    assert_eq!(six_places(t.banca, t.total), 458_428);
    assert_eq!(six_places(t.tie, t.total), 95_426);
    assert_eq!(t.ponto + t.banca + t.tie, t.total);
}

/// The same tableau dealt from a full 8-deck shoe without replacement (exact combinatorics by
/// value with multiplicities): ponto 0.446247, banca 0.458597, tie 0.095156.
#[test]
fn tableau_eight_deck_shoe_probabilities() {
    let t = eight_decks();
    assert_eq!(t.ponto, 2_230_518_282_592_256);
    assert_eq!(t.banca, 2_292_252_566_437_888);
    assert_eq!(t.tie, 475_627_426_473_216);
    assert_eq!(six_places(t.ponto, t.total), 446_247);
    assert_eq!(six_places(t.banca, t.total), 458_597);
    assert_eq!(six_places(t.tie, t.total), 95_156);
}

fn pb_config(commission: &str) -> PbConfig {
    match config(&pb(commission)) {
        BaccaratConfig::PuntoBanco(c) => c,
        _ => unreachable!(),
    }
}

/// Σ weight × due net for `chance` with `stake`, over every coup.
fn expected(
    cfg: &PbConfig,
    chance: Chance,
    stake: i64,
    weight: &dyn Fn(&[u32; 10], usize) -> u128,
    tail: &dyn Fn(usize) -> u128,
) -> i128 {
    let mut sum: i128 = 0;
    enumerate(weight, tail, &mut |s, w| {
        sum += w as i128 * due_net(cfg, chance, stake, s) as i128
    });
    sum
}

/// P217/2007 T.I C.III S.III r.17, r.18, r.20: the exact expected return of ponto, banca (each
/// commission option) and tie equals the analytic value from the probabilities; house edges
/// for 8 decks: ponto 1.2351%, banca 5% 1.0579%, tie 14.3596%.
#[test]
fn exact_expected_returns_of_every_bet() {
    let stake = 2000; // a multiple of 20 cents: every commission is exact
    for (name, t, weight, tail) in [
        (
            "infinite",
            infinite(),
            Box::new(|_: &[u32; 10], v: usize| if v == 0 { 4u128 } else { 1 })
                as Box<dyn Fn(&[u32; 10], usize) -> u128>,
            Box::new(|used: usize| 13u128.pow(6 - used as u32)) as Box<dyn Fn(usize) -> u128>,
        ),
        (
            "8 decks",
            eight_decks(),
            Box::new(|t: &[u32; 10], v: usize| {
                (if v == 0 { 128u128 } else { 32 }).saturating_sub(t[v] as u128)
            }),
            Box::new(|used: usize| ((used as u128)..6).map(|i| 416 - i).product::<u128>()),
        ),
    ] {
        let (p, b, ti, b5, n) = (
            t.ponto as i128,
            t.banca as i128,
            t.tie as i128,
            t.banca_on_5 as i128,
            t.total as i128,
        );
        let s = stake as i128;
        let none = pb_config("none");
        assert_eq!(
            expected(&none, Chance::Ponto, stake, &*weight, &*tail),
            s * (p - b),
            "{name} ponto"
        );
        assert_eq!(
            expected(&none, Chance::Banca, stake, &*weight, &*tail),
            s * (b - p),
            "{name} banca none"
        );
        assert_eq!(
            expected(&pb_config("5pct"), Chance::Banca, stake, &*weight, &*tail),
            s * 95 / 100 * b - s * p,
            "{name} banca 5pct"
        );
        assert_eq!(
            expected(
                &pb_config("half_on_5"),
                Chance::Banca,
                stake,
                &*weight,
                &*tail
            ),
            s * b - s / 2 * b5 - s * p,
            "{name} banca half_on_5"
        );
        assert_eq!(
            expected(&none, Chance::Tie, stake, &*weight, &*tail),
            s * (8 * ti - (n - ti)),
            "{name} tie"
        );
        if name == "8 decks" {
            // House edges to 4 decimal places of a percent (in millionths of the stake).
            let edge = |num: i128| (-num * 1_000_000 * 2 / (s * n) + 1) / 2;
            assert_eq!(
                edge(expected(&none, Chance::Ponto, stake, &*weight, &*tail)),
                12_351
            );
            assert_eq!(
                edge(expected(
                    &pb_config("5pct"),
                    Chance::Banca,
                    stake,
                    &*weight,
                    &*tail
                )),
                10_579
            );
            assert_eq!(
                edge(expected(&none, Chance::Tie, stake, &*weight, &*tail)),
                143_596
            );
        }
    }
}

/// P217/2007 T.I C.III S.III r.19: pairs pay 11 to 1 on the first two cards of a side; the
/// exact return is 11·P(pair) − (1 − P(pair)): −1/13 with an infinite deck and −43/415 with 8
/// decks (P(pair) = 31/415), enumerated by rank.
#[test]
fn pair_bets_expected_return() {
    let cfg = pb_config("5pct");
    let ranks: Vec<Card> = [
        "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS",
    ]
    .iter()
    .map(|s| c(s))
    .collect();
    for chance in [Chance::PairPonto, Chance::PairBanca] {
        // Infinite deck: 13 × 13 equally likely rank pairs.
        let mut inf: i128 = 0;
        // 8 decks: 32 cards of each rank out of 416, without replacement.
        let mut fin: i128 = 0;
        for (i, _) in ranks.iter().enumerate() {
            for (j, _) in ranks.iter().enumerate() {
                let pair = i == j;
                let scores = CoupScores {
                    ponto: 0,
                    banca: 0,
                    ponto_pair: pair,
                    banca_pair: pair,
                    cards_used: 4,
                };
                let net = due_net(&cfg, chance, 100, &scores) as i128;
                inf += net;
                fin += net * 32 * if pair { 31 } else { 32 };
            }
        }
        // Σ over 169 equally likely rank pairs = −169/13 stakes.
        assert_eq!(inf, -100 * 169 / 13, "−1/13 of the stake");
        // Σ over 416 × 415 ordered pairs of cards = −43/415 stakes.
        assert_eq!(fin, -43 * 100 * 416, "−43/415 of the stake");
    }
}

/// P217/2007 T.II S.I r.64, r.67 against T.I C.III S.III r.13, enumerated cell by cell: the
/// chemin de fer tables equal the ponto e banca tableau except the banker's two options (3 v 9,
/// 5 v 4) and the ponto's free choice on 5.
#[test]
fn cf_tables_against_pb_tableau() {
    let mut diffs = Vec::new();
    for s in 0..10u8 {
        let pb_ponto = if s >= 8 {
            None
        } else {
            Some(pb_ponto_draws(s))
        };
        match (cf_ponto(s), pb_ponto) {
            (CfPonto::Abate, None) => {}
            (CfPonto::Draw, Some(true)) | (CfPonto::Stand, Some(false)) => {}
            (CfPonto::Free, Some(true)) => diffs.push(format!("ponto {s}")),
            other => panic!("ponto {s}: {other:?}"),
        }
        for col in 0..=NO_THIRD {
            match (CF_BANKER[s as usize][col], PB_BANCA[s as usize][col]) {
                (Cf::T, Pb::D) | (Cf::F, Pb::S) => {}
                (Cf::O, Pb::D) => diffs.push(format!("banker {s} v {col}")),
                other => panic!("{s}/{col}: {other:?}"),
            }
        }
    }
    diffs.sort();
    assert_eq!(diffs, vec!["banker 3 v 9", "banker 5 v 4", "ponto 5"]);
}
