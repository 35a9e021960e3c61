//! Exact money.
//!
//! Contributions are a percentage of wagers ("determinada percentagem dos montantes jogados",
//! P217/2007 T.III r.3, r.4) and the rules fix no rounding (machines.md M7), so the book keeps
//! every pool in **1/10,000 cent** ([`E4`]), the unit the table rule engines already use for
//! their jackpot accounts (`rules_core::JackpotAccount::*_e4`). A contribution of `bp` basis
//! points on a wager of `w` cents is exactly `w × bp` e4: no rounding ever happens inside the
//! book. `i128` leaves room for 10^20 maximal contributions: sums are still checked.
//!
//! Rounding happens only when a value is shown in cents, and is documented where it happens:
//! * held money (captive values, liabilities) is shown **floored** to the whole cent
//!   ([`floor_cents`]): the cents that can actually be paid; the fraction stays in the exact
//!   figure beside it;
//! * ratios and variances (return to player in basis points, variance in cents) are rounded
//!   **half away from zero** ([`round_div`]).
//!
//! Declared values (captive reports, awards, transfers) are in whole cents and are compared with
//! the exact value with a tolerance **strictly below one cent** ([`TOLERANCE_E4`], M7): a machine
//! that shows 490.00 for an exact 490.0045 or 490.9999 is right; 489.99 or 491.00 is not.

use rules_core::Cents;

use crate::error::ApplyError;

/// An amount in 1/10,000 cent.
pub type E4 = i128;

/// 1/10,000 cent per cent.
pub const E4_PER_CENT: E4 = 10_000;

/// Largest accepted difference between a declared amount in cents and the exact value: strictly
/// below one cent (machines.md M7).
pub const TOLERANCE_E4: u128 = 9_999;

/// Cents to e4. Exact: |i64| × 10^4 < 2^78, so the saturation can never happen.
pub fn e4(cents: Cents) -> E4 {
    E4::from(cents).saturating_mul(E4_PER_CENT)
}

/// The contribution of `bp` basis points on `base_cents` wagered, exactly, in e4
/// (`base × bp / 10,000` cents = `base × bp` e4). Exact: < 2^64 × 2^32.
pub fn contribution_e4(base_cents: u64, bp: u32) -> E4 {
    E4::from(base_cents).saturating_mul(E4::from(bp))
}

/// Whole cents held, rounded down (toward minus infinity).
pub fn floor_cents(v: E4) -> E4 {
    v.div_euclid(E4_PER_CENT)
}

/// [`floor_cents`] as [`Cents`]. Saturates at the `i64` bounds, which no amount the book accepts
/// can reach (that would be 9.2 × 10^18 cents).
pub fn to_cents(v: E4) -> Cents {
    let c = floor_cents(v);
    Cents::try_from(c).unwrap_or(if c < 0 { Cents::MIN } else { Cents::MAX })
}

/// True when a declared amount in cents is within [`TOLERANCE_E4`] of the exact value `due`.
pub fn within_tolerance(reported_cents: Cents, due: E4) -> bool {
    e4(reported_cents).abs_diff(due) <= TOLERANCE_E4
}

/// `num / den` rounded to the nearest integer, halves away from zero. `None` when `den` is 0
/// (or on an overflow no caller can produce).
pub fn round_div(num: i128, den: i128) -> Option<i128> {
    if den == 0 {
        return None;
    }
    let q = num.checked_div(den)?;
    let r = num.checked_rem(den)?;
    let twice = r.unsigned_abs().checked_mul(2)?;
    if twice >= den.unsigned_abs() {
        if (num < 0) != (den < 0) {
            q.checked_sub(1)
        } else {
            q.checked_add(1)
        }
    } else {
        Some(q)
    }
}

/// Checked addition naming what overflowed.
pub(crate) fn add(a: E4, b: E4, what: &str) -> Result<E4, ApplyError> {
    a.checked_add(b).ok_or_else(|| ApplyError::overflow(what))
}

/// Checked subtraction naming what overflowed.
pub(crate) fn sub(a: E4, b: E4, what: &str) -> Result<E4, ApplyError> {
    a.checked_sub(b).ok_or_else(|| ApplyError::overflow(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_and_tolerance() {
        assert_eq!(floor_cents(4_900_045), 490);
        assert_eq!(floor_cents(-1), -1);
        assert_eq!(to_cents(4_909_999), 490);
        assert!(within_tolerance(490, 4_900_045));
        assert!(within_tolerance(491, 4_909_999));
        assert!(within_tolerance(490, 4_909_999));
        assert!(!within_tolerance(489, 4_900_045));
        assert!(!within_tolerance(491, 4_900_000));
        assert!(within_tolerance(490, 4_900_000));
    }

    #[test]
    fn contribution_is_exact() {
        // W1: 1.2% of 750,000 cents = 9,000 cents.
        assert_eq!(contribution_e4(750_000, 120), e4(9_000));
        // 0.8% of 1 cent = 0.008 cent = 80 e4.
        assert_eq!(contribution_e4(1, 80), 80);
        assert_eq!(
            contribution_e4(u64::MAX, u32::MAX),
            i128::from(u64::MAX) * i128::from(u32::MAX)
        );
    }

    #[test]
    fn rounding_half_away_from_zero() {
        assert_eq!(round_div(5, 2), Some(3));
        assert_eq!(round_div(-5, 2), Some(-3));
        assert_eq!(round_div(4, 3), Some(1));
        assert_eq!(round_div(-4, 3), Some(-1));
        assert_eq!(round_div(5, -2), Some(-3));
        assert_eq!(round_div(1, 0), None);
        assert_eq!(round_div(i128::MIN, -1), None);
    }
}
