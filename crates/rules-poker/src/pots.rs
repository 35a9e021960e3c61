//! Pots, side pots, split pots, odd chips and the per-payment commission.
//!
//! * Layered pots (digest section 5 and N8; P217 r.38, r.49, r.50; Reg806 r.41, r.42, r.63): the
//!   uncalled part of the largest contribution goes back to its owner; the rest is cut at each
//!   distinct total of the players still in; each layer holds every player's chips between the
//!   two levels (folded players' chips stay in as dead money) plus, for the main pot, the dead
//!   money (missed blinds r.90, a P461 pó carried in); a layer is contested by the players still
//!   in who reached its level.
//! * Each layer goes to its best eligible hand; equal hands share it (r.66; Reg806 r.33, r.62):
//!   the parts are counted in units of the table minimum at land tables, one cent online, the
//!   extra units one each to the winners in order from the mão clockwise, the remainder below one
//!   unit to the first of them (r.67; P461 r.56; digest N10). Sintético ties from full house to
//!   one pair: each tied player keeps his stake in the layer and the losing bets are divided
//!   equally (r.104; P461 r.26), in the same units.
//! * Commission (per-hand mode): `rate × payment`, rounded down to the cent (r.7(a) "até 5%"),
//!   taken from each payment (r.65; P461 r.55; Reg806 r.19); with a cap, the hand's total is
//!   capped and each payment's part reduced pro rata, rounded down, the cents left one each to
//!   the payments in order (digest N7).

use rules_core::Cents;

use crate::eval::{Category, HandValue, Ranking};
use crate::hand::{SEAT_SLOTS, mul_bp};

/// A reading the result rests on (digest section 10); the due result is low-confidence where
/// the regulation's text could give another.
pub mod reading {
    /// N7: a binding commission cap shared between several payments.
    pub const N7_CAP: u8 = 1;
    /// N8: side pots where the P217 proportional formula (r.49, r.50) and layered pots differ.
    pub const N8_SIDE_POTS: u8 = 2;
    /// N9/N13: a tie between players with different stakes.
    pub const N9_UNEQUAL_TIE: u8 = 4;
    /// N10: a split that is not an exact division in units of the minimum.
    pub const N10_ODD_CHIPS: u8 = 8;
    /// N11: a flush or high-card tie decided below the top card.
    pub const N11_TOP_CARD: u8 = 16;
    /// N12: the pot turns on the figuras simples category.
    pub const N12_FIGURAS: u8 = 32;
    /// P461 r.49 pó.
    pub const PO: u8 = 64;

    /// Names of the readings in `flags`.
    pub fn names(flags: u8) -> Vec<&'static str> {
        let all = [
            (N7_CAP, "N7 (commission cap shared between payments)"),
            (
                N8_SIDE_POTS,
                "N8 (layered side pots vs the proportional formula of r.49-r.50)",
            ),
            (N9_UNEQUAL_TIE, "N9 (tie between unequal stakes)"),
            (N10_ODD_CHIPS, "N10 (odd chips of an inexact split)"),
            (
                N11_TOP_CARD,
                "N11 (flush/high-card tie-break below the top card)",
            ),
            (N12_FIGURAS, "N12 (figuras simples)"),
            (PO, "P461 r.49 pó"),
        ];
        all.iter()
            .filter(|(f, _)| flags & f != 0)
            .map(|(_, n)| *n)
            .collect()
    }
}

/// One payment out of a pot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payment {
    pub seat: u8,
    /// Chips of the pot paid to the seat, before commission.
    pub gross: Cents,
    /// Commission taken from this payment.
    pub commission: Cents,
}

/// One pot (main pot first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pot {
    pub amount: Cents,
    /// The contribution level that closes it.
    pub level: Cents,
    /// Seats eligible (bit per seat).
    pub eligible: u16,
    /// Seats sharing it (bit per seat).
    pub winners: u16,
    pub payments: Vec<Payment>,
}

/// The input of the pot computation.
pub struct PotsIn<'a> {
    /// Live chips per seat (blinds, antes, bets; dead money excluded).
    pub contrib: [Cents; SEAT_SLOTS],
    /// Dead money for the main pot.
    pub dead: Cents,
    /// Seats still in (not folded), bit per seat.
    pub live: u16,
    /// Hand values of the live seats (ignored when only one seat is live).
    pub values: [HandValue; SEAT_SLOTS],
    pub ranking: Ranking,
    /// Every seat of the hand in clockwise order starting at the mão (odd-chip priority).
    pub order: &'a [u8],
    /// Odd-chip unit (r.67: the table minimum; online one cent).
    pub unit: Cents,
    /// Commission rate per payment, when due.
    pub bp: Option<u32>,
    pub cap: Option<Cents>,
    /// Sintético r.104 ties (stakes kept, losing bets divided).
    pub sintetico_ties: bool,
    /// Check the P217 proportional formula (N8) at land tables.
    pub land: bool,
}

/// The pots and who is paid what.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PotsOut {
    /// Uncalled excess returned to its owner (not a pot).
    pub excess: Option<(u8, Cents)>,
    pub pots: Vec<Pot>,
    /// Readings the result rests on ([`reading`]).
    pub readings: u8,
    /// Total commission.
    pub commission: Cents,
}

#[inline]
fn bit(s: u8) -> u16 {
    1u16 << s
}

/// Split `amount` into `k` parts in units of `unit`: equal units, the extra units one each to
/// the first parts, the remainder below a unit to the first part (r.67; digest N10).
pub fn split(amount: Cents, k: usize, unit: Cents, out: &mut Vec<Cents>) {
    out.clear();
    if k == 0 {
        return;
    }
    let unit = unit.max(1);
    let units = amount / unit;
    let rem = amount % unit;
    let k64 = k as i64;
    let base = units / k64;
    let extra = units % k64;
    for i in 0..k64 {
        let mut p = base * unit;
        if i < extra {
            p += unit;
        }
        if i == 0 {
            p += rem;
        }
        out.push(p);
    }
}

/// True for the r.104 tie categories (full house down to one pair, sintético).
fn r104(cat: Category) -> bool {
    matches!(
        cat,
        Category::FullHouse
            | Category::Straight
            | Category::ThreeOfAKind
            | Category::FigurasComPares
            | Category::FigurasSimples
            | Category::TwoPair
            | Category::OnePair
    )
}

fn winners_of(
    elig: &[u8],
    values: &[HandValue; SEAT_SLOTS],
    f: impl Fn(HandValue) -> HandValue,
) -> u16 {
    let best = elig
        .iter()
        .map(|&s| f(values[s as usize]))
        .max()
        .unwrap_or_default();
    elig.iter()
        .filter(|&&s| f(values[s as usize]) == best)
        .fold(0u16, |m, &s| m | bit(s))
}

/// Compute the pots of a hand.
pub fn compute(p: &PotsIn) -> PotsOut {
    let mut out = PotsOut::default();
    let mut c = p.contrib;
    let live = |s: u8| p.live & bit(s) != 0;
    // 1. The uncalled excess of the largest contribution.
    let mut top: Option<u8> = None;
    for &s in p.order {
        if top.is_none_or(|t| c[s as usize] > c[t as usize]) {
            top = Some(s);
        }
    }
    if let Some(t) = top {
        let second = p
            .order
            .iter()
            .filter(|&&s| s != t)
            .map(|&s| c[s as usize])
            .max()
            .unwrap_or(0);
        if c[t as usize] > second && live(t) {
            let ex = c[t as usize] - second;
            c[t as usize] = second;
            out.excess = Some((t, ex));
        }
    }
    // 2. Levels at the distinct totals of the players still in.
    let mut levels: Vec<Cents> = p
        .order
        .iter()
        .filter(|&&s| live(s) && c[s as usize] > 0)
        .map(|&s| c[s as usize])
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let all_live: u16 = p
        .order
        .iter()
        .filter(|&&s| live(s))
        .fold(0, |m, &s| m | bit(s));
    if levels.is_empty() {
        let total: Cents = p.order.iter().map(|&s| c[s as usize]).sum::<Cents>() + p.dead;
        if total > 0 {
            out.pots.push(Pot {
                amount: total,
                level: 0,
                eligible: all_live,
                winners: 0,
                payments: Vec::new(),
            });
        }
    } else {
        let mut prev = 0;
        for (k, &l) in levels.iter().enumerate() {
            let mut amount: Cents = p
                .order
                .iter()
                .map(|&s| c[s as usize].min(l) - c[s as usize].min(prev))
                .sum();
            if k == 0 {
                amount += p.dead;
            }
            let eligible = p
                .order
                .iter()
                .filter(|&&s| live(s) && c[s as usize] >= l)
                .fold(0u16, |m, &s| m | bit(s));
            out.pots.push(Pot {
                amount,
                level: l,
                eligible,
                winners: 0,
                payments: Vec::new(),
            });
            prev = l;
        }
        // Chips of folded players above the top level (only in irregular records).
        let left: Cents = p
            .order
            .iter()
            .map(|&s| c[s as usize] - c[s as usize].min(prev))
            .sum();
        if left > 0
            && let Some(last) = out.pots.last_mut()
        {
            last.amount += left;
        }
    }
    // 3. Award each pot.
    let top_level = levels.last().copied().unwrap_or(0);
    let folded_chips = p.dead > 0 || p.order.iter().any(|&s| !live(s) && c[s as usize] > 0);
    let mut elig: Vec<u8> = Vec::with_capacity(11);
    let mut parts: Vec<Cents> = Vec::with_capacity(11);
    let mut prev_level = 0;
    for pot in &mut out.pots {
        elig.clear();
        elig.extend(
            p.order
                .iter()
                .copied()
                .filter(|&s| pot.eligible & bit(s) != 0),
        );
        if elig.is_empty() {
            continue;
        }
        let winners = if elig.len() == 1 {
            bit(elig[0])
        } else {
            let w = winners_of(&elig, &p.values, |v| v);
            if winners_of(&elig, &p.values, HandValue::top_card_only) != w {
                out.readings |= reading::N11_TOP_CARD;
            }
            if p.ranking == Ranking::Sintetico
                && winners_of(&elig, &p.values, HandValue::figuras_simples_as_pair) != w
            {
                out.readings |= reading::N12_FIGURAS;
            }
            w
        };
        pot.winners = winners;
        let ws: Vec<u8> = elig
            .iter()
            .copied()
            .filter(|&s| winners & bit(s) != 0)
            .collect();
        if ws.len() == 1 {
            pot.payments.push(Payment {
                seat: ws[0],
                gross: pot.amount,
                commission: 0,
            });
        } else {
            let cat = p.values[ws[0] as usize].category();
            let stakes_differ = ws
                .iter()
                .any(|&s| p.contrib[s as usize] != p.contrib[ws[0] as usize]);
            if stakes_differ {
                out.readings |= reading::N9_UNEQUAL_TIE;
            }
            if p.sintetico_ties && r104(cat) {
                // r.104: each keeps his stake; the losing bets are divided equally.
                let stake = |s: u8| c[s as usize].min(pot.level) - c[s as usize].min(prev_level);
                let kept: Cents = ws.iter().map(|&s| stake(s)).sum();
                let losing = (pot.amount - kept).max(0);
                split(losing, ws.len(), p.unit, &mut parts);
                if losing % (p.unit.max(1) * ws.len() as i64) != 0 {
                    out.readings |= reading::N10_ODD_CHIPS;
                }
                for (k, &s) in ws.iter().enumerate() {
                    pot.payments.push(Payment {
                        seat: s,
                        gross: stake(s) + parts[k],
                        commission: 0,
                    });
                }
            } else {
                split(pot.amount, ws.len(), p.unit, &mut parts);
                if pot.amount % (p.unit.max(1) * ws.len() as i64) != 0 {
                    out.readings |= reading::N10_ODD_CHIPS;
                }
                for (k, &s) in ws.iter().enumerate() {
                    pot.payments.push(Payment {
                        seat: s,
                        gross: parts[k],
                        commission: 0,
                    });
                }
            }
        }
        // N8: an all-in winner where the proportional formula differs from the layers.
        if p.land
            && levels.len() >= 2
            && ws.iter().any(|&s| c[s as usize] < top_level)
            && (folded_chips || levels.len() >= 3)
        {
            out.readings |= reading::N8_SIDE_POTS;
        }
        prev_level = pot.level;
    }
    // 4. Commission from each payment.
    if let Some(bp) = p.bp {
        let mut total = 0;
        let mut n_paid = 0;
        for pot in &mut out.pots {
            let split_pot = pot.payments.len() > 1;
            for pay in &mut pot.payments {
                pay.commission = mul_bp(pay.gross, bp);
                total += pay.commission;
                if pay.commission > 0 {
                    n_paid += 1;
                }
                if split_pot && p.unit > 1 && (pay.gross - pay.commission) % p.unit != 0 {
                    out.readings |= reading::N10_ODD_CHIPS;
                }
            }
        }
        if let Some(cap) = p.cap
            && total > cap
        {
            // N7: cap the hand, reduce each payment pro rata.
            if n_paid >= 2 {
                out.readings |= reading::N7_CAP;
            }
            let mut sum = 0;
            for pot in &mut out.pots {
                for pay in &mut pot.payments {
                    let orig = pay.commission;
                    pay.commission = ((orig as i128 * cap as i128) / total as i128) as Cents;
                    sum += pay.commission;
                }
            }
            let mut left = cap - sum;
            'outer: for pot in &mut out.pots {
                for pay in &mut pot.payments {
                    if left == 0 {
                        break 'outer;
                    }
                    if mul_bp(pay.gross, bp) > pay.commission {
                        pay.commission += 1;
                        left -= 1;
                    }
                }
            }
            total = cap;
        }
        out.commission = total;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r67_split_in_units_largest_to_the_mao() {
        let mut v = Vec::new();
        split(5500, 2, 1000, &mut v);
        assert_eq!(v, vec![3500, 2000]);
        split(6000, 3, 1000, &mut v);
        assert_eq!(v, vec![2000, 2000, 2000]);
        split(7000, 3, 1000, &mut v);
        assert_eq!(v, vec![3000, 2000, 2000]);
        split(101, 2, 1, &mut v);
        assert_eq!(v, vec![51, 50]);
    }
}
