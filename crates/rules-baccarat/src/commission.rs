//! Deductions from prizes in exact integer cents: the ponto e banca commission on banca wins
//! (P217/2007 T.I C.III S.III r.20, S.IV r.20) and the chemin de fer cagnotte (T.II S.I r.47).
//!
//! Neither regulation fixes a rounding rule. The engine keeps the deduction exact when it is
//! integral and otherwise applies the table's documented rounding mode to the **deduction** (not
//! to the prize), reporting the case as an interpretation issue. The default is [`Rounding::Down`]:
//! a deduction rounded down never takes more than the percentage r.20 allows.

use rules_core::Cents;

/// The commission option of a ponto e banca table (P217/2007 T.I C.III S.III r.20, S.IV r.20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commission {
    /// No deduction: banca wins pay 1 to 1 (r.17). Table value `none` (the default).
    None,
    /// r.20(a): 5% off the prize of every coup the banca wins. Table value `5pct`.
    FivePct,
    /// r.20(b): 50% off the prize of a coup the banca wins with a score of 5. Table value
    /// `half_on_5`.
    HalfOn5,
}

impl Commission {
    /// The table value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Commission::None => "none",
            Commission::FivePct => "5pct",
            Commission::HalfOn5 => "half_on_5",
        }
    }

    /// The deduction rate as a fraction `(num, den)` for a banca win with `banca_score`, or
    /// `None` when nothing is deducted.
    pub const fn rate(self, banca_score: u8) -> Option<(i128, i128)> {
        match self {
            Commission::None => None,
            Commission::FivePct => Some((5, 100)),
            Commission::HalfOn5 if banca_score == 5 => Some((1, 2)),
            Commission::HalfOn5 => None,
        }
    }
}

/// How a non-integral deduction is rounded to whole cents (table settings
/// `commission_rounding` and `cagnotte_rounding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rounding {
    /// `down` (default): the deduction is rounded toward zero; the player keeps the fraction.
    #[default]
    Down,
    /// `up`: the deduction is rounded up; the house keeps the fraction.
    Up,
    /// `half_up`: to the nearest cent, halves up.
    HalfUp,
    /// `half_even`: to the nearest cent, halves to the even cent (banker's rounding).
    HalfEven,
}

impl Rounding {
    /// Parse a setting value.
    pub fn parse(s: &str) -> Option<Rounding> {
        Some(match s {
            "down" => Rounding::Down,
            "up" => Rounding::Up,
            "half_up" => Rounding::HalfUp,
            "half_even" => Rounding::HalfEven,
            _ => return None,
        })
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Rounding::Down => "down",
            Rounding::Up => "up",
            Rounding::HalfUp => "half_up",
            Rounding::HalfEven => "half_even",
        }
    }
}

/// `amount × num / den` rounded by `rounding`, and whether it was integral. `amount` is at most
/// `MAX_AMOUNT_CENTS` in practice; the arithmetic is done in `i128` so that no input overflows.
pub fn deduction(amount: Cents, num: i128, den: i128, rounding: Rounding) -> (Cents, bool) {
    let p = i128::from(amount.max(0)) * num;
    let (q, r) = (p / den, p % den);
    if r == 0 {
        return (clamp(q), true);
    }
    let twice = 2 * r;
    let up = match rounding {
        Rounding::Down => false,
        Rounding::Up => true,
        Rounding::HalfUp => twice >= den,
        Rounding::HalfEven => twice > den || (twice == den && q % 2 == 1),
    };
    (clamp(if up { q + 1 } else { q }), false)
}

fn clamp(v: i128) -> Cents {
    Cents::try_from(v).unwrap_or(Cents::MAX)
}

/// The net of a winning banca bet of `stake` under `commission` when the banca won with
/// `banca_score`: the prize (equal to the stake, r.17) minus the deduction of r.20. Returns the
/// net and whether the deduction was integral.
pub fn banca_win_net(
    stake: Cents,
    commission: Commission,
    banca_score: u8,
    rounding: Rounding,
) -> (Cents, bool) {
    match commission.rate(banca_score) {
        None => (stake, true),
        Some((n, d)) => {
            let (c, exact) = deduction(stake, n, d, rounding);
            (stake - c, exact)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// P217/2007 T.I C.III S.III r.20(a): 5% of the prize; exact on multiples of 20 cents.
    #[test]
    fn r20a_five_percent() {
        assert_eq!(
            banca_win_net(4000, Commission::FivePct, 9, Rounding::Down),
            (3800, true)
        );
        assert_eq!(
            banca_win_net(4000, Commission::FivePct, 5, Rounding::Down),
            (3800, true)
        );
        // 5% of 1010 = 50.5 cents.
        assert_eq!(
            banca_win_net(1010, Commission::FivePct, 7, Rounding::Down),
            (960, false)
        );
        assert_eq!(
            banca_win_net(1010, Commission::FivePct, 7, Rounding::Up),
            (959, false)
        );
        assert_eq!(
            banca_win_net(1010, Commission::FivePct, 7, Rounding::HalfUp),
            (959, false)
        );
        assert_eq!(
            banca_win_net(1010, Commission::FivePct, 7, Rounding::HalfEven),
            (960, false)
        );
        // 5% of 1030 = 51.5: half-even rounds to 52.
        assert_eq!(
            banca_win_net(1030, Commission::FivePct, 7, Rounding::HalfEven),
            (978, false)
        );
    }

    /// P217/2007 T.I C.III S.III r.20(b): 50% only on a banca win with 5.
    #[test]
    fn r20b_half_on_five() {
        assert_eq!(
            banca_win_net(6000, Commission::HalfOn5, 5, Rounding::Down),
            (3000, true)
        );
        assert_eq!(
            banca_win_net(6000, Commission::HalfOn5, 6, Rounding::Down),
            (6000, true)
        );
        assert_eq!(
            banca_win_net(101, Commission::HalfOn5, 5, Rounding::Down),
            (51, false)
        );
        assert_eq!(
            banca_win_net(101, Commission::HalfOn5, 5, Rounding::Up),
            (50, false)
        );
    }

    /// P217/2007 T.I C.III S.III r.17: no option, even money.
    #[test]
    fn r17_no_commission() {
        assert_eq!(
            banca_win_net(777, Commission::None, 5, Rounding::Down),
            (777, true)
        );
    }

    /// The table values of the rounding modes and commission options: each mode is read back
    /// from its own name, and nothing else is a mode (a misspelt setting is a configuration
    /// error, never a silent default).
    #[test]
    fn rounding_modes_and_options_are_read_by_their_table_values() {
        let modes = [
            (Rounding::Down, "down"),
            (Rounding::Up, "up"),
            (Rounding::HalfUp, "half_up"),
            (Rounding::HalfEven, "half_even"),
        ];
        for (mode, name) in modes {
            assert_eq!(mode.as_str(), name);
            assert_eq!(Rounding::parse(name), Some(mode), "{name}");
        }
        for other in ["", "Down", "half-up", "halfeven", "nearest", "down "] {
            assert_eq!(Rounding::parse(other), None, "{other:?}");
        }
        assert_eq!(Rounding::default(), Rounding::Down);
        assert_eq!(Commission::None.as_str(), "none");
        assert_eq!(Commission::FivePct.as_str(), "5pct");
        assert_eq!(Commission::HalfOn5.as_str(), "half_on_5");
    }

    /// r.20's rates, for every banca score.
    #[test]
    fn commission_rates_by_banca_score() {
        for score in 0..=9u8 {
            assert_eq!(Commission::None.rate(score), None);
            assert_eq!(Commission::FivePct.rate(score), Some((5, 100)));
            let half = (score == 5).then_some((1, 2));
            assert_eq!(Commission::HalfOn5.rate(score), half, "score {score}");
        }
    }

    proptest! {
        /// `deduction` against its definition, with no division in the oracle: the exact value
        /// is `amount × num / den`; down is the largest whole cent not above it, up the smallest
        /// not below it, half_up and half_even the nearest (ties up, ties to the even cent).
        #[test]
        fn deduction_is_the_exact_value_rounded_by_the_mode(
            amount in prop_oneof![0i64..=100_000, 0..=rules_core::MAX_AMOUNT_CENTS],
            (num, den) in prop_oneof![
                Just((5i128, 100i128)),
                Just((1, 2)),
                (1i128..=7, 1i128..=40).prop_filter("a rate", |(n, d)| n <= d),
            ],
        ) {
            let exact = i128::from(amount) * num; // the value, times den
            let modes = [Rounding::Down, Rounding::Up, Rounding::HalfUp, Rounding::HalfEven];
            for mode in modes {
                let (c, integral) = deduction(amount, num, den, mode);
                let c = i128::from(c);
                prop_assert_eq!(integral, exact % den == 0);
                // Twice the distance from the rounded value to the exact one, in 1/den cents.
                let twice_off = 2 * (c * den - exact);
                let ok = match mode {
                    Rounding::Down => c * den <= exact && exact < (c + 1) * den,
                    Rounding::Up => (c - 1) * den < exact && exact <= c * den,
                    Rounding::HalfUp => -den < twice_off && twice_off <= den,
                    Rounding::HalfEven => {
                        twice_off.abs() < den || (twice_off.abs() == den && c % 2 == 0)
                    }
                };
                prop_assert!(ok, "{:?}: {} × {}/{} gave {}", mode, amount, num, den, c);
            }
        }
    }

    #[test]
    fn deduction_never_overflows() {
        let (c, _) = deduction(Cents::MAX, 5, 100, Rounding::Up);
        assert!(c > 0);
    }
}
