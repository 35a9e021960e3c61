//! Card values and scores, shared by the three games.
//!
//! * Ponto e banca and Macau (P217/2007 T.I C.III S.III/S.IV r.9): ace 1; king, queen, jack and
//!   ten 0; every other card its face value. When the sum passes 10 or 20 only the excess
//!   counts, so a side's score is the sum modulo 10 (an exact 10 or 20 scores 0: digest note 1).
//! * Chemin de fer (P217/2007 T.II S.I r.9-r.11): ace 1; king, queen, jack 0; every other card
//!   its pips, so the ten counts 10. r.10 drops the tens of the sum and r.11 names 0, 10 and 20
//!   "bacará": the score is again the sum modulo 10, and the ten behaves exactly as a court card.
//!
//! Both games therefore use [`score`]; [`cf_points`] keeps the chemin de fer pip count for the
//! explanation and for the test that proves the two readings give the same scores.

use rules_core::{Card, Rank};

/// Point value of a rank in ponto e banca (P217/2007 T.I C.III S.III r.9, S.IV r.9).
pub const fn value(rank: Rank) -> u8 {
    match rank {
        Rank::Ace => 1,
        Rank::Two => 2,
        Rank::Three => 3,
        Rank::Four => 4,
        Rank::Five => 5,
        Rank::Six => 6,
        Rank::Seven => 7,
        Rank::Eight => 8,
        Rank::Nine => 9,
        Rank::Ten | Rank::Jack | Rank::Queen | Rank::King => 0,
    }
}

/// Pips of a rank in chemin de fer (P217/2007 T.II S.I r.9): the ten counts 10.
pub const fn cf_points(rank: Rank) -> u8 {
    match rank {
        Rank::Ten => 10,
        r => value(r),
    }
}

/// Value of one card (see [`value`]).
#[inline]
pub const fn card_value(card: Card) -> u8 {
    value(card.rank)
}

/// Score of a hand: the sum of the values with the tens dropped, 0-9
/// (P217/2007 T.I C.III S.III r.9; T.II S.I r.10, r.11).
#[inline]
pub fn score(cards: &[Card]) -> u8 {
    let mut s = 0u8;
    for c in cards {
        s = (s + value(c.rank)) % 10;
    }
    s
}

/// Score of the cards an iterator yields (see [`score`]).
#[inline]
pub fn score_of(cards: impl IntoIterator<Item = Card>) -> u8 {
    let mut s = 0u8;
    for c in cards {
        s = (s + value(c.rank)) % 10;
    }
    s
}

/// A two-card 8 or 9: the natural that is announced at once ("anuncia imediatamente",
/// P217/2007 T.I C.III S.III r.13) or abated ("abater", T.II S.I r.64(a), r.67(a)).
#[inline]
pub const fn is_natural(score: u8) -> bool {
    score >= 8
}

/// Two cards of the same denomination (rank), suits irrelevant: a ponto or banca pair
/// (P217/2007 T.I C.III S.III r.19). K+K is a pair; K+Q is not although both are worth 0.
#[inline]
pub fn is_pair(a: Card, b: Card) -> bool {
    a.rank == b.rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules_core::Suit;

    fn c(s: &str) -> Card {
        s.parse().unwrap()
    }

    /// P217/2007 T.I C.III S.III r.9: ace 1, court cards and ten 0, others face value.
    #[test]
    fn r9_card_values() {
        assert_eq!(value(Rank::Ace), 1);
        for r in [Rank::Ten, Rank::Jack, Rank::Queen, Rank::King] {
            assert_eq!(value(r), 0);
        }
        for (i, r) in Rank::ALL[..8].iter().enumerate() {
            assert_eq!(value(*r) as usize, i + 2);
        }
    }

    /// P217/2007 T.I C.III S.III r.9 and digest note 1: only the excess over 10 or 20 counts.
    #[test]
    fn r9_score_drops_tens() {
        assert_eq!(score(&[c("7D"), c("KC")]), 7);
        assert_eq!(score(&[c("5C"), c("5D")]), 0);
        assert_eq!(score(&[c("9S"), c("9H"), c("2C")]), 0);
        assert_eq!(score(&[c("9S"), c("8H"), c("9C")]), 6);
        assert_eq!(score(&[]), 0);
    }

    /// P217/2007 T.II S.I r.9-r.11: the ten counts 10 but the score is the same modulo 10.
    #[test]
    fn cf_r9_r11_ten_counts_ten_same_score() {
        for r in Rank::ALL {
            assert_eq!(cf_points(r) % 10, value(r));
        }
        assert_eq!(cf_points(Rank::Ten), 10);
        assert_eq!(cf_points(Rank::King), 0);
    }

    /// P217/2007 T.I C.III S.III r.19: same denomination, suits irrelevant.
    #[test]
    fn r19_pairs_are_same_rank() {
        assert!(is_pair(c("KS"), c("KH")));
        assert!(!is_pair(c("KS"), c("QS")));
        assert!(!is_pair(c("TS"), c("KS")));
        assert!(is_pair(
            Card::new(Rank::Four, Suit::Spades),
            Card::new(Rank::Four, Suit::Spades)
        ));
    }

    #[test]
    fn naturals() {
        assert!(is_natural(8) && is_natural(9) && !is_natural(7));
    }
}
