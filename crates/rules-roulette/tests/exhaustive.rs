//! Exhaustive enumeration: for every bet type, every legal selection and every pocket, the sum
//! of the due nets over the 37 pockets equals the analytic value exactly: −1 stake unit per
//! chip for every bet of P217/2007 T.I C.I S.I r.27 / S.II r.18 (the bank's edge is 1/37).
mod common;
use common::*;
use rules_core::*;
use rules_roulette::{RouletteConfig, RouletteEngine, RouletteState};

fn sum_over_pockets(cfg: &RouletteConfig, b: RoundEvent) -> Cents {
    let mut total = 0;
    for p in 0..=36u8 {
        let r = round(vec![b.clone(), nmb(), ball(p)]);
        let a =
            RouletteEngine::adjudicate(cfg, &mut RouletteState::default(), &r, &Options::default())
                .unwrap();
        assert!(a.violations.is_empty(), "{:?}", a.violations);
        total += a.bets[0].due_net_cents;
    }
    total
}

fn subsets(k: usize) -> Vec<Vec<u8>> {
    fn rec(start: u8, k: usize, cur: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for x in start..37 {
            cur.push(x);
            rec(x + 1, k, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    rec(0, k, &mut Vec::new(), &mut out);
    out
}

/// Every legal inside combination (found by trying every subset against the engine's layout),
/// and every outside bet, on the three games: Σ over 37 pockets = −stake.
#[test]
fn every_ordinary_bet_returns_minus_one_stake_over_37_pockets() {
    let zc = RouletteEngine::configure(&table(
        GameId::RouletteFrench,
        &[("zero_corner_allowed", Setting::Bool(true))],
    ))
    .unwrap()
    .config;
    for cfg in [american(), french(), online(), zc] {
        let stake = 200;
        let mut counted = 0;
        for (kind, k) in [
            ("straight", 1),
            ("split", 2),
            ("street", 3),
            ("corner", 4),
            ("line", 6),
        ] {
            let candidates: Vec<Vec<u8>> = if k <= 4 {
                subsets(k)
            } else {
                (0..=31u8).map(|n| (n..n + 6).collect()).collect()
            };
            for sel in candidates {
                let probe = round(vec![bet("b", kind, &sel, stake), nmb(), ball(0)]);
                let a = RouletteEngine::adjudicate(
                    &cfg,
                    &mut RouletteState::default(),
                    &probe,
                    &Options::default(),
                )
                .unwrap();
                if a.has_violation("RL_ILLEGAL_BET") {
                    continue;
                }
                counted += 1;
                assert_eq!(
                    sum_over_pockets(&cfg, bet("b", kind, &sel, stake)),
                    -stake,
                    "{kind} {sel:?}"
                );
            }
        }
        let zero_corner = cfg.zero_corner_allowed as usize;
        assert_eq!(counted, 37 + 60 + 14 + 22 + zero_corner + 11);
        for (kind, sels) in [
            ("dozen", vec![vec![1u8], vec![2], vec![3]]),
            ("column", vec![vec![1], vec![2], vec![3]]),
            ("dozen_split", vec![vec![1, 2], vec![2, 3]]),
            ("column_split", vec![vec![1, 2], vec![2, 3]]),
            ("even", vec![vec![]]),
            ("odd", vec![vec![]]),
            ("low", vec![vec![]]),
            ("high", vec![vec![]]),
            ("red", vec![vec![]]),
            ("black", vec![vec![]]),
        ] {
            for sel in sels {
                assert_eq!(
                    sum_over_pockets(&cfg, bet("b", kind, &sel, stake)),
                    -stake,
                    "{kind} {sel:?}"
                );
            }
        }
    }
}

/// Series (P217/2007 T.I C.I S.I r.25(a), r.27(c)) at every legal size, and every
/// number-and-neighbours bet (r.25(b), r.27(d)): Σ over 37 pockets = −(chips × chip value).
#[test]
fn every_announced_bet_returns_minus_one_chip_per_chip() {
    let cfg = american();
    let v = 250;
    for (kind, base, max) in [
        ("series_grande", 9u32, 135u32),
        ("series_pequena", 6, 120),
        ("series_orfaos", 5, 50),
    ] {
        for chips in (base..=max).step_by(base as usize) {
            let amount = i64::from(chips) * v;
            assert_eq!(
                sum_over_pockets(&cfg, chips_bet("b", kind, &[], amount, chips)),
                -amount,
                "{kind} {chips}"
            );
        }
    }
    for center in 0..=36u8 {
        for chips in [3u32, 5, 7] {
            let amount = i64::from(chips) * v;
            assert_eq!(
                sum_over_pockets(&cfg, chips_bet("b", "neighbours", &[center], amount, chips)),
                -amount
            );
        }
    }
}

/// Online call bets with the customary compositions and finals (R807/2015 r.8): Σ = −stake;
/// la partage (operator zero rule) on simple chances: Σ = −stake/2.
#[test]
fn online_call_bets_and_la_partage() {
    let cfg = RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[
            ("zero_rule", text("la_partage")),
            (
                "call_series_grande",
                Setting::List(vec![
                    2, 3, 0, 2, 3, 1, 2, 4, 7, 1, 2, 12, 15, 1, 2, 18, 21, 1, 2, 19, 22, 2, 4, 25,
                    26, 28, 29, 1, 2, 32, 35,
                ]),
            ),
            (
                "call_series_pequena",
                Setting::List(vec![
                    1, 2, 5, 8, 1, 2, 10, 11, 1, 2, 13, 16, 1, 2, 23, 24, 1, 2, 27, 30, 1, 2, 33,
                    36,
                ]),
            ),
            (
                "call_series_orfaos",
                Setting::List(vec![
                    1, 1, 1, 1, 2, 6, 9, 1, 2, 14, 17, 1, 2, 17, 20, 1, 2, 31, 34,
                ]),
            ),
            ("call_finals", Setting::Bool(true)),
            ("call_neighbours", Setting::Bool(true)),
        ],
    ))
    .unwrap()
    .config;
    for (kind, chips) in [
        ("series_grande", 18u32),
        ("series_pequena", 6),
        ("series_orfaos", 10),
    ] {
        let amount = i64::from(chips) * 100;
        assert_eq!(
            sum_over_pockets(&cfg, chips_bet("b", kind, &[], amount, chips)),
            -amount,
            "{kind}"
        );
    }
    for d in 0..=9u8 {
        let n = if d <= 6 { 4 } else { 3 };
        let amount = i64::from(n) * 200;
        assert_eq!(
            sum_over_pockets(&cfg, chips_bet("b", "finals", &[d], amount, n * 2)),
            -amount,
            "finals {d}"
        );
    }
    for kind in ["even", "odd", "low", "high", "red", "black"] {
        assert_eq!(
            sum_over_pockets(&cfg, bet("b", kind, &[], 200)),
            -100,
            "{kind}"
        );
    }
    assert_eq!(sum_over_pockets(&cfg, bet("b", "dozen", &[1], 200)), -200);
}
