//! The póquer sem descarte jackpot (P217/2007 T.I C.III S.II r.3, r.4, r.8-r.12; P461/2001
//! Anexo I r.3, r.4, r.8-r.12).
//!
//! * r.3, r.8: bet amount and increment percentage fixed by the inspectorate (configuration;
//!   under P461 r.8 "the percentage the casino may charge" is read as the complement of the
//!   increment, reading 10.14);
//! * r.9: paid whether or not the bank qualifies; P461 fixes the table ([`crate::paytable`]),
//!   P217 reads the approved one;
//! * r.10: start value at least 10,000 x the jackpot bet;
//! * r.12(a): prizes paid from the smallest to the largest, the remainder to the top
//!   combination (P461: the royal flush; P217: the combination with the maximum prize);
//!   (b) equal top winners divide it; (c) P461: several straight flushes divide the 10%; P217:
//!   several players with the same paying combination divide that prize (fixed multiples too,
//!   reading 10.11).
//!
//! Model (readings 10.8-10.11): contributions (chip x increment, exact in 1/10,000 cent) come
//! before the deal, so percentage prizes are taken on the value after them and before any
//! other prize; smaller prizes come out of the pool; a shared prize is divided equally, each
//! share truncated to whole cents (the rules fix no rounding: the indivisible residue stays in
//! the pool, or is not paid when the display restarts at its start value). The chip is never
//! returned.

use rules_core::{Award, Cents, JackpotAccount};

use crate::cite::Regulation;
use crate::config::JackpotRules;

pub const E4: i128 = 10_000;
pub const NEED_VALUE: &str =
    "a whole or percentage jackpot award needs jackpot_before_cents (the value before the round)";

pub struct Payout {
    pub prizes: Vec<Cents>,
    pub account: Option<JackpotAccount>,
    /// A percentage prize and another prize in one round: order unclear (10.10).
    pub order_reading: bool,
    /// A fixed prize divided under P217 r.12(c) (reading 10.11).
    pub divided_fixed: bool,
}

/// Price the round's winners (pay-table line index per winner).
pub fn payout(
    rules: &JackpotRules,
    reg: Regulation,
    before: Option<Cents>,
    contributions_e4: i128,
    winners: &[usize],
) -> Result<Payout, &'static str> {
    let pool = before.map(|b| b as i128 * E4 + contributions_e4);
    let mut prizes = vec![0i128; winners.len()];
    let mut small: i128 = 0;
    let mut top = 0usize;
    let mut has_percent = false;
    let mut divided_fixed = false;
    for (k, &li) in winners.iter().enumerate() {
        let Some(line) = rules.lines.get(li) else {
            continue;
        };
        let sharing = winners.iter().filter(|&&w| w == li).count() as i128;
        match line.award {
            Award::Whole => top += 1,
            Award::Percent { bp } => {
                has_percent = true;
                let p = pool.ok_or(NEED_VALUE)?.max(0) * bp as i128 / (E4 * E4);
                // P461 r.12(c) divides the straight flush's 10%; P217 r.12(c) any prize.
                prizes[k] = p / sharing;
            }
            Award::Multiple { times } => {
                let p = times as i128 * rules.chip as i128;
                prizes[k] = if reg == Regulation::P217 {
                    if sharing > 1 {
                        divided_fixed = true;
                    }
                    p / sharing
                } else {
                    p
                };
            }
        }
        small += prizes[k];
    }
    let mut reset = false;
    if top > 0 {
        let pool = pool.ok_or(NEED_VALUE)?;
        let share = (pool - small * E4).max(0) / (E4 * top as i128);
        for (k, &li) in winners.iter().enumerate() {
            if rules.lines.get(li).is_some_and(|l| l.award == Award::Whole) {
                prizes[k] = share;
            }
        }
        reset = true;
    }
    let total: i128 = prizes.iter().sum();
    let to64 = |v: i128| i64::try_from(v).map_err(|_| "jackpot amounts out of range");
    let account = match pool {
        Some(p) => Some(JackpotAccount {
            value_before_cents: before.unwrap_or(0),
            contributions_e4: to64(contributions_e4)?,
            prizes_cents: to64(total)?,
            reset,
            value_after_e4: to64(if reset {
                rules.start as i128 * E4
            } else {
                p - total * E4
            })?,
        }),
        None => None,
    };
    Ok(Payout {
        prizes: prizes.into_iter().map(to64).collect::<Result<_, _>>()?,
        account,
        order_reading: has_percent && winners.len() > 1,
        divided_fixed,
    })
}

/// A display reading matches an exact value if it is that value truncated or rounded up to the
/// cent.
pub fn display_matches(display_cents: Cents, exact_e4: i128) -> bool {
    let d = display_cents as i128 * E4;
    d > exact_e4 - E4 && d < exact_e4 + E4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Line;
    use crate::eval::Category;
    use crate::paytable::P461_JACKPOT;

    fn p461() -> JackpotRules {
        JackpotRules {
            chip: 100,
            increment_bp: 8000,
            start: 1_000_000,
            lines: P461_JACKPOT
                .iter()
                .map(|&(category, award, citation)| Line {
                    category,
                    award,
                    citation,
                })
                .collect(),
            manual: false,
        }
    }

    /// P461 r.12(a): example D of the digest.
    #[test]
    fn r12a_smaller_first_remainder_to_royal() {
        let p = payout(
            &p461(),
            Regulation::P461,
            Some(1_800_000),
            3 * 100 * 8000,
            &[2, 0],
        )
        .unwrap();
        assert_eq!(p.prizes, vec![50_000, 1_750_240]);
        assert!(p.account.unwrap().reset);
    }

    /// P461 r.12(a), example D: the account of the round (contributions, prizes, the display
    /// restarting at the start value); no percentage prize, no divided fixed prize.
    #[test]
    fn r12a_example_d_account() {
        let p = payout(
            &p461(),
            Regulation::P461,
            Some(1_800_000),
            2_400_000,
            &[2, 0],
        )
        .unwrap();
        let a = p.account.unwrap();
        assert_eq!(a.value_before_cents, 1_800_000);
        assert_eq!(a.contributions_e4, 2_400_000);
        assert_eq!(a.prizes_cents, 1_800_240);
        assert!(a.reset);
        assert_eq!(a.value_after_e4, 1_000_000 * E4 as i64);
        assert!(!p.order_reading && !p.divided_fixed);
    }

    /// P461 r.9(b), reading 10.9: the straight flush's 10% is of the value after this round's
    /// chips, truncated to the cent; the rest stays in the pool, exact to 1/10,000 cent.
    #[test]
    fn r9b_percent_of_the_value_after_the_chips() {
        let p = payout(&p461(), Regulation::P461, Some(1_000_000), 2_400_000, &[1]).unwrap();
        assert_eq!(p.prizes, vec![100_024]);
        let a = p.account.unwrap();
        assert_eq!((a.prizes_cents, a.reset), (100_024, false));
        assert_eq!(a.value_after_e4, (1_000_240 - 100_024) * E4 as i64);
        assert!(!p.order_reading);
        let p = payout(&p461(), Regulation::P461, Some(1_000_000), 8_000, &[1]).unwrap();
        assert_eq!(p.prizes, vec![100_000]);
        assert_eq!(p.account.unwrap().value_after_e4, 9_000_008_000);
        // Three straight flushes divide it (r.12(c)), each share truncated.
        let p = payout(&p461(), Regulation::P461, Some(1_000_010), 0, &[1, 1, 1]).unwrap();
        assert_eq!(p.prizes, vec![33_333, 33_333, 33_333]);
        assert_eq!(
            p.account.unwrap().value_after_e4,
            (1_000_010 - 99_999) * E4 as i64
        );
    }

    /// Reading 10.10: a percentage prize with another prize in the round rests on a reading;
    /// r.12(a) the fixed prize comes out of the pool too.
    #[test]
    fn r12a_percent_and_fixed_in_one_round() {
        let p = payout(&p461(), Regulation::P461, Some(1_000_000), 0, &[1, 2]).unwrap();
        assert_eq!(p.prizes, vec![100_000, 50_000]);
        assert!(p.order_reading);
        assert_eq!(p.account.unwrap().value_after_e4, 850_000 * E4 as i64);
        let p = payout(&p461(), Regulation::P461, Some(1_000_000), 0, &[2, 3]).unwrap();
        assert_eq!(p.prizes, vec![50_000, 10_000]);
        assert!(!p.order_reading);
    }

    /// r.12(b): equal top winners divide the remainder after the smaller prizes (truncated to
    /// the cent); a remainder below nothing is nothing.
    #[test]
    fn r12b_top_winners_divide_the_remainder() {
        let p = payout(&p461(), Regulation::P461, Some(1_000_001), 0, &[0, 4, 0]).unwrap();
        assert_eq!(p.prizes, vec![497_500, 5_000, 497_500]);
        let a = p.account.unwrap();
        assert_eq!(a.prizes_cents, 1_000_000);
        assert_eq!(a.value_after_e4, 1_000_000 * E4 as i64);
        let p = payout(&p461(), Regulation::P461, Some(10_000), 0, &[2, 0]).unwrap();
        assert_eq!(p.prizes, vec![50_000, 0]);
    }

    /// P217 r.12(c), reading 10.11: a fixed prize held by one player is whole and not marked
    /// divided; P461 never divides it.
    #[test]
    fn r12c_fixed_prize_of_one_winner() {
        let p = payout(&p461(), Regulation::P217, Some(1_000_000), 0, &[2, 3]).unwrap();
        assert_eq!(p.prizes, vec![50_000, 10_000]);
        assert!(!p.divided_fixed);
        let p = payout(&p461(), Regulation::P461, Some(1_000_000), 0, &[3, 3]).unwrap();
        assert_eq!(p.prizes, vec![10_000, 10_000]);
        assert!(!p.divided_fixed);
        // Without the value before the round: fixed prizes are priced, no account; a whole or
        // percentage award cannot be.
        let p = payout(&p461(), Regulation::P461, None, 0, &[3]).unwrap();
        assert_eq!(p.prizes, vec![10_000]);
        assert!(p.account.is_none());
        assert_eq!(
            payout(&p461(), Regulation::P461, None, 0, &[1]).err(),
            Some(NEED_VALUE)
        );
        assert_eq!(
            payout(&p461(), Regulation::P461, None, 0, &[0]).err(),
            Some(NEED_VALUE)
        );
    }

    /// A display matches a value truncated or rounded up to the cent, nothing further.
    #[test]
    fn display_truncated_or_rounded_up() {
        for (shown, ok) in [(1233, false), (1234, true), (1235, true), (1236, false)] {
            assert_eq!(display_matches(shown, 12_345_678), ok, "{shown}");
        }
        for (shown, ok) in [(1233, false), (1234, true), (1235, false)] {
            assert_eq!(display_matches(shown, 12_340_000), ok, "{shown}");
        }
    }

    /// P461 r.12(c): two straight flushes divide the 10%; fixed prizes are not divided.
    #[test]
    fn r12c_p461_division() {
        let p = payout(&p461(), Regulation::P461, Some(1_000_000), 0, &[1, 1, 2, 2]).unwrap();
        assert_eq!(p.prizes, vec![50_000, 50_000, 50_000, 50_000]);
        let p = payout(&p461(), Regulation::P217, Some(1_000_000), 0, &[2, 2]).unwrap();
        assert_eq!(p.prizes, vec![25_000, 25_000]);
        assert!(p.divided_fixed);
        let _ = Category::Flush;
    }
}
