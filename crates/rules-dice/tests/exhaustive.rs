//! Exhaustive enumeration with exact fractions: every dice combination (216 for three dice, 36
//! for two) and, for craps bets that live over several throws, the exact probability of each
//! resolution, solved from the engine's own one-throw decisions (a Markov chain over the table
//! point and the bet's number, solved with rational arithmetic), compared with the analytic
//! expected return.
mod common;
use common::*;
use rules_core::*;
use rules_dice::craps::CrapsState;
use rules_dice::{DiceConfig, DiceState, OpenBet};

/// An exact fraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Q(i128, i128);
fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}
impl Q {
    fn new(n: i128, d: i128) -> Q {
        let g = gcd(n, d).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Q(s * n / g, s * d / g)
    }
    fn add(self, o: Q) -> Q {
        Q::new(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
    fn div(self, k: i128) -> Q {
        Q::new(self.0, self.1 * k)
    }
}

// ---- Banca francesa: 216 combinations ----

/// P217/2007 T.I C.II S.I r.9, r.13, note B1: 63 deciding throws of 216; each chance returns
/// exactly −1 stake over them (the bank's edge is 1/63 of the stake per decided bet).
#[test]
fn banca_every_bet_over_216_throws() {
    let c = banca();
    for kind in ["aces", "small", "big", "small_line", "big_line"] {
        let (mut sum, mut decided) = (0i64, 0);
        for a in 1..=6 {
            for b in 1..=6 {
                for d in 1..=6 {
                    let r = run(&c, vec![bet("x", kind, &[], 2000), dice(&[a, b, d])]);
                    let o = r.bet("x").unwrap();
                    if o.outcome != Outcome::Open {
                        decided += 1;
                        sum += o.due_net_cents;
                    }
                }
            }
        }
        let stake = if kind.ends_with("line") { 1000 } else { 2000 };
        assert_eq!(decided, 63, "{kind}");
        assert_eq!(sum, -stake, "{kind}");
    }
}

// ---- Cussec: 216 combinations ----

/// P217/2007 T.I C.II S.III r.7-r.9: Σ over the 216 throws of the net per unit stake, derived by
/// counting: small/big 105 wins − 111 losses = −6; single 75×1 + 15×2 + 1×3 − 125 = −17; two-dice
/// combination 30×5 − 186 = −36; double 15×10 + 1×30 − 200 = −20; triple 190 − 215 = −25; any
/// triple 6×32 − 210 = −18; total t: N(t)×k − (216 − N(t)).
#[test]
fn cussec_every_bet_over_216_throws() {
    let c = cussec();
    let sum = |t: &str, sel: &[u8]| -> i64 {
        let mut s = 0;
        for a in 1..=6 {
            for b in 1..=6 {
                for d in 1..=6 {
                    let r = run(
                        &c,
                        vec![levers(), bet("x", t, sel, 100), nmb(), dice(&[a, b, d])],
                    );
                    assert!(r.violations.is_empty());
                    s += r.bet("x").unwrap().due_net_cents;
                }
            }
        }
        s / 100
    };
    assert_eq!(sum("small", &[]), -6);
    assert_eq!(sum("big", &[]), -6);
    for f in 1..=6 {
        assert_eq!(sum("single", &[f]), -17);
        assert_eq!(sum("double", &[f]), -20);
        assert_eq!(sum("triple", &[f]), -25);
        for g in f + 1..=6 {
            assert_eq!(sum("two_dice_combo", &[f, g]), -36);
        }
    }
    assert_eq!(sum("any_triple", &[]), -18);
    let ways = [
        0, 0, 0, 1, 3, 6, 10, 15, 21, 25, 27, 27, 25, 21, 15, 10, 6, 3, 1,
    ];
    let pays = [0, 0, 0, 0, 65, 32, 19, 12, 8, 7, 6, 6, 7, 8, 12, 19, 32, 65];
    for t in 4..=17u8 {
        let n: i64 = ways[t as usize];
        assert_eq!(
            sum("total", &[t]),
            n * pays[t as usize] - (216 - n),
            "total {t}"
        );
    }
}

// ---- Craps: exact solution of the series ----

fn key(s: &DiceState) -> (Option<u8>, Vec<(String, Option<u8>)>) {
    let DiceState::Craps(c) = s else { panic!() };
    // The table point matters only to pass / don't pass bets (and the odds on them).
    let point_matters = c
        .open_bets
        .iter()
        .any(|b| b.bet_type == "pass_line" || b.bet_type == "dont_pass");
    (
        c.point.filter(|_| point_matters),
        c.open_bets
            .iter()
            .map(|b| (b.id.to_string(), b.number))
            .collect(),
    )
}

/// Expected net (in cents, exact) of bet `id` standing in `state`, solved from the engine's
/// one-throw decisions: V(s) = (Σ decided nets + Σ V(moved-to states)) / (36 − throws that
/// leave s unchanged).
fn value(c: &DiceConfig, state: &DiceState, id: &str, depth: u32) -> Q {
    assert!(depth < 5, "the chain must settle within a few moves");
    let k0 = key(state);
    let (mut acc, mut stay) = (Q(0, 1), 0i128);
    for a in 1..=6u8 {
        for b in 1..=6u8 {
            let mut s = state.clone();
            let r = run_st(c, &mut s, vec![dice(&[a, b])]);
            let o = r.bet(id).unwrap();
            if o.outcome != Outcome::Open {
                acc = acc.add(Q::new(o.due_net_cents as i128, 1));
            } else if key(&s) == k0 {
                stay += 1;
            } else {
                acc = acc.add(value(c, &s, id, depth + 1));
            }
        }
    }
    acc.div(36 - stay)
}

fn open(id: &str, t: &str, stake: Cents, number: Option<u8>, on_bet: Option<&str>) -> OpenBet {
    OpenBet {
        id: id.into(),
        bet_type: t.into(),
        seat: None,
        player: None,
        stake_cents: stake,
        placed_cents: None,
        number,
        on_bet: on_bet.map(Into::into),
        throws: 0,
    }
}

fn state(point: Option<u8>, bets: Vec<OpenBet>) -> DiceState {
    DiceState::Craps(CrapsState {
        point,
        shooter: None,
        seven_out_by: None,
        open_bets: bets,
    })
}

/// P217/2007 T.I C.II S.II r.10-r.13: exact expected returns, per unit stake.
#[test]
fn craps_exact_expected_returns() {
    let stake = 60_060_000; // divisible by every denominator below, so cent rounding never bites
    let c = craps();
    let ev = |t: &str, number: Option<u8>, point: Option<u8>| {
        value(
            &c,
            &state(point, vec![open("x", t, stake, number, None)]),
            "x",
            0,
        )
        .div(stake as i128)
    };
    // pass line −7/495, don't pass (bar 12) −3/220 (r.10.1, r.10.2)
    assert_eq!(ev("pass_line", None, None), Q::new(-7, 495));
    assert_eq!(ev("dont_pass", None, None), Q::new(-3, 220));
    // come / don't come from their first throw, with a point on (r.10.3, r.10.4)
    assert_eq!(ev("come", None, Some(6)), Q::new(-7, 495));
    assert_eq!(ev("dont_come", None, Some(6)), Q::new(-3, 220));
    // big 6/8: 5/11 − 6/11 (r.10.5, r.10.6)
    assert_eq!(ev("big_6", None, None), Q::new(-1, 11));
    assert_eq!(ev("big_8", None, Some(4)), Q::new(-1, 11));
    // hardways: 4/10 at 7:1 → −1/9; 6/8 at 9:1 → −1/11 (r.11.3)
    assert_eq!(ev("hard_4", None, None), Q::new(-1, 9));
    assert_eq!(ev("hard_10", None, None), Q::new(-1, 9));
    assert_eq!(ev("hard_6", None, None), Q::new(-1, 11));
    assert_eq!(ev("hard_8", None, None), Q::new(-1, 11));
    // place: 4/10 −1/15, 5/9 −1/25, 6/8 −1/66; place to lose: −1/33, −1/40, −5/143 (r.12)
    for (n, p, l) in [
        (4, Q::new(-1, 15), Q::new(-1, 33)),
        (5, Q::new(-1, 25), Q::new(-1, 40)),
        (6, Q::new(-1, 66), Q::new(-5, 143)),
        (8, Q::new(-1, 66), Q::new(-5, 143)),
        (9, Q::new(-1, 25), Q::new(-1, 40)),
        (10, Q::new(-1, 15), Q::new(-1, 33)),
    ] {
        assert_eq!(ev("place", Some(n), None), p, "place {n}");
        assert_eq!(ev("place_to_lose", Some(n), None), l, "place to lose {n}");
    }
    // one-throw bets (r.10.7, r.10.8, r.11.2, r.11.4-r.11.8, r.13.1)
    for (t, q) in [
        ("under_7", Q::new(-1, 6)),
        ("over_7", Q::new(-1, 6)),
        ("any_craps", Q::new(-1, 9)),
        ("any_seven", Q::new(-1, 6)),
        ("total_2", Q::new(-5, 36)),
        ("total_3", Q::new(-1, 9)),
        ("total_11", Q::new(-1, 9)),
        ("total_12", Q::new(-5, 36)),
        ("field", Q::new(-1, 18)),
    ] {
        assert_eq!(ev(t, None, None), q, "{t}");
    }
    // odds at true odds on every point: exactly 0 (r.11.1), pass and come sides; lay odds too
    for p in [4u8, 5, 6, 8, 9, 10] {
        let s = state(
            Some(p),
            vec![
                open("b", "pass_line", stake, None, None),
                open("o", "odds", stake, None, Some("b")),
            ],
        );
        assert_eq!(value(&c, &s, "o", 0), Q(0, 1), "pass odds {p}");
        let s = state(
            Some(4),
            vec![
                open("b", "come", stake, Some(p), None),
                open("o", "odds", stake, None, Some("b")),
            ],
        );
        assert_eq!(value(&c, &s, "o", 0), Q(0, 1), "come odds {p}");
        let s = state(
            Some(p),
            vec![
                open("b", "dont_pass", stake, None, None),
                open("o", "odds", stake, None, Some("b")),
            ],
        );
        assert_eq!(value(&c, &s, "o", 0), Q(0, 1), "lay odds {p}");
    }
}
