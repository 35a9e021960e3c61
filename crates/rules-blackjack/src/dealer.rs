//! The dealer's drawing rule (P217/2007 T.I C.III S.I r.6(a), r.19, r.22).
//!
//! * r.19: with 17 or more on his two cards the dealer must not draw; a card drawn anyway does not
//!   count and goes to the discard. With 16 or less he must draw until he has at least 17.
//! * r.6(a): the dealer's ace counts 11 whenever that gives 17 to 21, so the dealer **stands on
//!   soft 17** (digest 13.1).
//! * r.22 (second paragraph, new in P1364/2001): when every player has lost or surrendered the
//!   dealer does not draw a third card.
//!
//! Online (ROBJ/2015) the drawing rule is not in the seed: the land rule applies unless the
//! table setting `dealer_hits_soft_17` says the operator's approved rules draw on soft 17.

use crate::hand::Count;

/// Whether the dealer must draw another card with `count` (r.19, r.6(a)); `hits_soft_17` is the
/// online table setting (always false on land tables).
#[inline]
pub fn must_draw(count: &Count, hits_soft_17: bool) -> bool {
    let t = count.dealer_total();
    t < 17 || (hits_soft_17 && t == 17 && count.dealer_soft_17())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules_core::{Card, Rank, Suit};

    fn card(rank: Rank) -> Card {
        Card::new(rank, Suit::Spades)
    }

    /// Infinite-deck weight of a rank, out of 13: ten-value cards 4 (10, J, Q, K share one
    /// value), every other value 1.
    const VALUES: [(Rank, u128); 10] = [
        (Rank::Ace, 1),
        (Rank::Two, 1),
        (Rank::Three, 1),
        (Rank::Four, 1),
        (Rank::Five, 1),
        (Rank::Six, 1),
        (Rank::Seven, 1),
        (Rank::Eight, 1),
        (Rank::Nine, 1),
        (Rank::Ten, 4),
    ];

    /// Depth of the common denominator 13^DEPTH; no dealer hand needs more cards than this.
    const DEPTH: u32 = 14;

    /// Final-total distribution: index 0..=4 = 17..=21, 5 = bust, 6 = blackjack; numerators
    /// over 13^DEPTH.
    #[derive(Default)]
    struct Dist {
        p: [u128; 7],
    }

    /// Enumerate every drawing sequence from `cards` with the rule under test, checking on every
    /// path that the dealer never stands below 17 and never draws at 17 or more (soft 17
    /// included), r.19 and r.6(a).
    fn walk(cards: &mut Vec<Card>, weight: u128, depth: u32, d: &mut Dist, paths: &mut u64) {
        let k = crate::hand::count(cards);
        if cards.len() >= 2 && !must_draw(&k, false) {
            let t = k.dealer_total();
            assert!(t >= 17, "stood below 17 on {cards:?}");
            *paths += 1;
            let share = weight * 13u128.pow(DEPTH - depth);
            let idx = if cards.len() == 2 && crate::hand::is_ace_ten(cards) {
                6
            } else if t > 21 {
                5
            } else {
                (t - 17) as usize
            };
            d.p[idx] += share;
            return;
        }
        if cards.len() >= 2 {
            assert!(k.dealer_total() < 17, "drew at 17+ on {cards:?}");
        }
        assert!(depth < DEPTH, "path deeper than the denominator");
        for (rank, w) in VALUES {
            cards.push(card(rank));
            walk(cards, weight * w, depth + 1, d, paths);
            cards.pop();
        }
    }

    fn dist(up: Rank) -> (Dist, u64) {
        let mut d = Dist::default();
        let mut paths = 0;
        walk(&mut vec![card(up)], 1, 0, &mut d, &mut paths);
        (d, paths)
    }

    /// Independent computation: recursion on (hard total, has ace, cards) with the plain
    /// textbook rule "count one ace as 11 if that stays <= 21; stand on 17 or more".
    fn reference(hard: u32, ace: bool, n: u32, weight: u128, depth: u32, out: &mut [u128; 7]) {
        let best = if ace && hard + 10 <= 21 {
            hard + 10
        } else {
            hard
        };
        if n >= 2 && best >= 17 {
            let share = weight * 13u128.pow(DEPTH - depth);
            let idx = if n == 2 && ace && hard == 11 {
                6
            } else if best > 21 {
                5
            } else {
                (best - 17) as usize
            };
            out[idx] += share;
            return;
        }
        for v in 1..=10u32 {
            let w = if v == 10 { 4 } else { 1 };
            reference(hard + v, ace || v == 1, n + 1, weight * w, depth + 1, out);
        }
    }

    /// P217/2007 T.I C.III S.I r.19, r.6(a): exhaustive enumeration of every dealer drawing
    /// sequence from every up-card (infinite deck, exact rational probabilities over 13^14).
    /// The probabilities sum to exactly 1, the dealer never stands below 17 and never draws at
    /// 17+ (soft 17 included), and the distribution equals an independent computation.
    #[test]
    fn r19_dealer_distribution_exhaustive() {
        let one = 13u128.pow(DEPTH);
        for (up, _) in VALUES {
            let (d, paths) = dist(up);
            assert!(paths > 10, "{up:?}");
            let total: u128 = d.p.iter().sum();
            assert_eq!(total, one, "probabilities from {up:?} must sum to 1");
            let mut r = [0u128; 7];
            let v = crate::hand::value(up);
            reference(v, v == 1, 1, 1, 0, &mut r);
            assert_eq!(d.p, r, "{up:?}");
            // Blackjack only with an ace or ten-value up-card.
            if !matches!(up, Rank::Ace | Rank::Ten) {
                assert_eq!(d.p[6], 0);
            }
        }
        // Known value: with a 6 up (stand on soft 17, infinite deck) the dealer busts 42.32%.
        let (d, _) = dist(Rank::Six);
        let bust = d.p[5];
        assert!(bust * 10_000 >= 4231 * one && bust * 10_000 <= 4233 * one);
        // Ace up: blackjack probability is exactly 4/13.
        let (d, _) = dist(Rank::Ace);
        assert_eq!(d.p[6] * 13, 4 * one);
    }

    /// r.6(a), r.19: the dealer stands on soft 17 (A+6) and on hard 17; draws on 16 and on
    /// soft 16 (A+5); online setting `dealer_hits_soft_17` draws on soft 17 only.
    #[test]
    fn r19_soft_17() {
        let k = |s: &[Rank]| {
            let v: Vec<Card> = s.iter().map(|&r| card(r)).collect();
            crate::hand::count(&v)
        };
        assert!(!must_draw(&k(&[Rank::Ace, Rank::Six]), false));
        assert!(!must_draw(&k(&[Rank::Ten, Rank::Seven]), false));
        assert!(must_draw(&k(&[Rank::Ten, Rank::Six]), false));
        assert!(must_draw(&k(&[Rank::Ace, Rank::Five]), false));
        assert!(!must_draw(
            &k(&[Rank::Ace, Rank::Three, Rank::Three]),
            false
        ));
        assert!(must_draw(&k(&[Rank::Ace, Rank::Six]), true));
        assert!(!must_draw(&k(&[Rank::Ten, Rank::Seven]), true));
    }
}
