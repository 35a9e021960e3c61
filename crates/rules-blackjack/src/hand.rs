//! Card values and hand totals (P217/2007 T.I C.III S.I r.1, r.6, r.20, r.32, r.35).
//!
//! * r.6: ace 1 or 11; king, queen, jack 10; other cards their face value.
//! * r.6(a): a **player** counts his ace as he prefers: the engine takes the best total not above
//!   21 (digest 2, reading 13.4), except for aces locked at 1 by a double (r.32).
//! * r.6(a): the **dealer's** ace counts 11 whenever that gives a total from 17 to 21, otherwise 1
//!   (so the dealer stands on soft 17: see [`crate::dealer`]).
//! * r.1(a), r.20: a blackjack is the first two cards of a hand, an ace and a ten-value card, on a
//!   hand that does not come from a split.
//! * r.35: the special prize for 6-7-8 of one suit or three 7s.

use rules_core::{Card, Rank};

/// Point value of a rank with the ace counted 1 (r.6).
#[inline]
pub const fn value(rank: Rank) -> u32 {
    match rank {
        Rank::Ace => 1,
        Rank::Ten | Rank::Jack | Rank::Queen | Rank::King => 10,
        r => r as u32,
    }
}

/// Ten-value card: 10, J, Q, K (r.1(a), r.6(b)).
#[inline]
pub const fn is_ten_value(rank: Rank) -> bool {
    rank.is_ten_or_face()
}

/// Running count of a hand: total with every ace as 1, and the aces that may still count 11.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Total with aces as 1 (saturating; far beyond 21 it no longer matters).
    pub hard: u32,
    /// Aces in the hand.
    pub aces: u32,
    /// Aces locked at 1 by a double on A+8 / A+9 (r.32).
    pub locked: u32,
}

impl Count {
    #[inline]
    pub fn add(&mut self, card: Card) {
        self.hard = self.hard.saturating_add(value(card.rank));
        if card.rank == Rank::Ace {
            self.aces += 1;
        }
    }

    /// A player's total: the best total not above 21, an unlocked ace counting 11 when that
    /// does not exceed 21 (r.6(a), digest 13.4; r.32 lock).
    #[inline]
    pub fn player_total(&self) -> u32 {
        if self.aces > self.locked && self.hard.saturating_add(10) <= 21 {
            self.hard.saturating_add(10)
        } else {
            self.hard
        }
    }

    /// True when the player's best total counts an ace as 11 ("soft" total).
    #[inline]
    pub fn is_soft(&self) -> bool {
        self.aces > self.locked && self.hard.saturating_add(10) <= 21
    }

    /// The dealer's total (r.6(a)): an ace counts 11 when that gives 17 to 21, otherwise 1.
    #[inline]
    pub fn dealer_total(&self) -> u32 {
        if self.aces > 0 && (17..=21).contains(&(self.hard.saturating_add(10))) {
            self.hard.saturating_add(10)
        } else {
            self.hard
        }
    }

    /// The dealer's total is a soft 17 (ace counted 11).
    #[inline]
    pub fn dealer_soft_17(&self) -> bool {
        self.aces > 0 && self.hard.saturating_add(10) == 17
    }
}

/// Count of a list of cards.
#[inline]
pub fn count(cards: &[Card]) -> Count {
    let mut c = Count::default();
    for &card in cards {
        c.add(card);
    }
    c
}

/// Ace and ten-value card (r.1(a)). Whether it is a *blackjack* also depends on the hand not
/// coming from a split (r.20): see [`crate::play::Hand::is_blackjack`].
#[inline]
pub fn is_ace_ten(cards: &[Card]) -> bool {
    match cards {
        [a, b] => {
            (a.rank == Rank::Ace && is_ten_value(b.rank))
                || (b.rank == Rank::Ace && is_ten_value(a.rank))
        }
        _ => false,
    }
}

/// The two kinds of special prize of r.35 (ROBJ/2015 r.25(i) online).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialPrize {
    /// 6, 7 and 8 of one suit, in any order (digest 13.8).
    Suited678,
    /// Three 7s of any suits.
    ThreeSevens,
}

/// r.35: a hand of exactly three cards that are 6-7-8 of one suit, or three 7s. Both total 21,
/// so the hand is exactly the three cards (digest 13.8).
#[inline]
pub fn special_prize(cards: &[Card]) -> Option<SpecialPrize> {
    let [a, b, c] = cards else { return None };
    if a.rank == Rank::Seven && b.rank == Rank::Seven && c.rank == Rank::Seven {
        return Some(SpecialPrize::ThreeSevens);
    }
    let mut v = [a.rank as u8, b.rank as u8, c.rank as u8];
    v.sort_unstable();
    if v == [6, 7, 8] && a.suit == b.suit && b.suit == c.suit {
        return Some(SpecialPrize::Suited678);
    }
    None
}

/// Two cards of the same value (r.26 "o mesmo valor", suits may differ). With
/// `unlike_tens` false, ten-value cards must also be of the same rank (reading 13.5).
#[inline]
pub fn same_value(a: Card, b: Card, unlike_tens: bool) -> bool {
    if unlike_tens {
        value(a.rank) == value(b.rank)
    } else {
        a.rank == b.rank
    }
}

/// Two ten-value cards of different ranks (K+Q): the case reading 13.5 leaves open.
#[inline]
pub fn unlike_tens(a: Card, b: Card) -> bool {
    is_ten_value(a.rank) && is_ten_value(b.rank) && a.rank != b.rank
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Card {
        s.parse().unwrap()
    }

    fn cards(s: &str) -> Vec<Card> {
        s.split_whitespace().map(c).collect()
    }

    /// P217/2007 T.I C.III S.I r.6: values of every rank.
    #[test]
    fn r6_card_values() {
        let expected = [2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 1];
        for (rank, v) in Rank::ALL.iter().zip(expected) {
            assert_eq!(value(*rank), v, "{rank:?}");
        }
    }

    /// r.6(a): the player's ace counts 11 when it does not bust the hand.
    #[test]
    fn r6a_player_best_total() {
        assert_eq!(count(&cards("AS 6H")).player_total(), 17);
        assert_eq!(count(&cards("AS 6H TD")).player_total(), 17);
        assert_eq!(count(&cards("AS AH 9D")).player_total(), 21);
        assert_eq!(count(&cards("AS AH")).player_total(), 12);
        assert!(count(&cards("AS 6H")).is_soft());
        assert!(!count(&cards("AS 6H TD")).is_soft());
    }

    /// r.6(a): the dealer's ace counts 11 only for totals 17-21.
    #[test]
    fn r6a_dealer_ace() {
        assert_eq!(count(&cards("AS 6H")).dealer_total(), 17);
        assert!(count(&cards("AS 6H")).dealer_soft_17());
        assert_eq!(count(&cards("AS 5H")).dealer_total(), 6);
        assert_eq!(count(&cards("AS 5H 5D")).dealer_total(), 21);
        assert_eq!(count(&cards("AS 5H 5D 9C")).dealer_total(), 20);
    }

    /// r.32: an ace locked at 1 after doubling A+8.
    #[test]
    fn r32_ace_lock() {
        let mut k = count(&cards("AS 8H"));
        k.locked = 1;
        k.add(c("2D"));
        assert_eq!(k.player_total(), 11);
        // A second ace, received as the double card, may count 11 (reading 13.4).
        let mut k = count(&cards("AS 9H"));
        k.locked = 1;
        k.add(c("AD"));
        assert_eq!(k.player_total(), 21);
    }

    /// r.1(a): ace + ten-value.
    #[test]
    fn r1a_ace_ten() {
        assert!(is_ace_ten(&cards("AS KH")));
        assert!(is_ace_ten(&cards("TD AC")));
        assert!(!is_ace_ten(&cards("AS 9H")));
        assert!(!is_ace_ten(&cards("AS KH 2C")));
    }

    /// r.35: the special prize combinations.
    #[test]
    fn r35_special_prize() {
        assert_eq!(
            special_prize(&cards("6H 8H 7H")),
            Some(SpecialPrize::Suited678)
        );
        assert_eq!(
            special_prize(&cards("7S 7H 7D")),
            Some(SpecialPrize::ThreeSevens)
        );
        assert_eq!(special_prize(&cards("6H 7H 8D")), None);
        assert_eq!(special_prize(&cards("7H 7H")), None);
        assert_eq!(special_prize(&cards("7H 7H 7H 7H")), None);
    }

    /// r.26 and reading 13.5: same value.
    #[test]
    fn r26_same_value() {
        assert!(same_value(c("8S"), c("8C"), true));
        assert!(same_value(c("KS"), c("QC"), true));
        assert!(!same_value(c("KS"), c("QC"), false));
        assert!(!same_value(c("8S"), c("9C"), true));
        assert!(unlike_tens(c("KS"), c("QC")));
    }

    /// r.6(a), digest 5: a soft 17 is a 17 counting an ace as 11, so the hand holds an ace and
    /// its other cards make 6: every count of up to four aces and any hard total.
    #[test]
    fn r6a_dealer_soft_17_exactly() {
        for aces in 0..=4 {
            for hard in 0..=40 {
                let k = Count {
                    hard,
                    aces,
                    locked: 0,
                };
                assert_eq!(
                    k.dealer_soft_17(),
                    aces >= 1 && hard == 7,
                    "{aces} aces, hard {hard}"
                );
            }
        }
        assert!(!count(&cards("5H 2D TC")).dealer_soft_17(), "hard 17");
        assert!(count(&cards("AS AH 5D")).dealer_soft_17());
    }
}
