//! The simulated shoe: the cards still in it, drawn uniformly.
//!
//! The table state keeps only how many times each card has left the shoe since the last
//! shuffle ([`rules_core::CardCounts`]), not the order of the cards. For a properly shuffled
//! shoe the order of the cards still in it is uniformly random given the cards already seen, so
//! drawing uniformly from what is left is exactly a shuffled shoe: no card ever leaves the shoe
//! more often than there are decks (r.3).

use rules_core::{Card, CardCounts, Rank, SimRng};

use crate::hand::{is_ten_value, value};

/// A card the simulation wants at a given place (steering a mistake's round).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// This rank.
    Rank(Rank),
    /// A ten-value card (10, J, Q, K).
    Ten,
    /// A card whose value (ace 1) is in `lo..=hi`.
    Value(u32, u32),
}

impl Pick {
    pub fn fits(self, c: Card) -> bool {
        match self {
            Pick::Rank(r) => c.rank == r,
            Pick::Ten => is_ten_value(c.rank),
            Pick::Value(lo, hi) => (lo..=hi).contains(&value(c.rank)),
        }
    }
}

/// The cards still in the shoe, and how many have left it since the shuffle.
#[derive(Clone, Debug)]
pub struct Shoe {
    cards: Vec<Card>,
    /// Cards out since the last shuffle: the engine's count ([`CardCounts::total`]).
    pub out: u32,
}

impl Shoe {
    /// A freshly shuffled shoe of `decks` decks.
    pub fn fresh(decks: u8) -> Shoe {
        let mut cards = Vec::with_capacity(52 * usize::from(decks));
        for _ in 0..decks {
            cards.extend(Card::deck());
        }
        Shoe { cards, out: 0 }
    }

    /// The shoe as the state leaves it: every card not yet seen since the shuffle.
    pub fn from_counts(counts: &CardCounts, decks: u8) -> Shoe {
        let mut cards = Vec::with_capacity(52 * usize::from(decks));
        for c in Card::deck() {
            let left = u16::from(decks).saturating_sub(counts.get(c));
            for _ in 0..left {
                cards.push(c);
            }
        }
        Shoe {
            cards,
            out: counts.total(),
        }
    }

    /// A shoe refilled with every card but `on_table` (a reshuffle of the discards while
    /// cards are still on the table).
    pub fn refilled(decks: u8, on_table: &[Card]) -> Shoe {
        let mut s = Shoe::fresh(decks);
        for c in on_table {
            if let Some(i) = s.cards.iter().position(|x| x == c) {
                s.cards.swap_remove(i);
            }
        }
        s
    }

    #[cfg(test)]
    pub fn remaining(&self) -> usize {
        self.cards.len()
    }

    /// The next card (uniform among the cards left), `None` when the shoe is empty.
    pub fn draw(&mut self, rng: &mut SimRng) -> Option<Card> {
        if self.cards.is_empty() {
            return None;
        }
        let i = rng.below(self.cards.len() as u64) as usize;
        self.out += 1;
        Some(self.cards.swap_remove(i))
    }

    /// A card that fits `pick`, uniform among those left (`None` if none is left).
    pub fn take(&mut self, rng: &mut SimRng, pick: Pick) -> Option<Card> {
        let n = self.cards.iter().filter(|c| pick.fits(**c)).count();
        if n == 0 {
            return None;
        }
        let k = rng.below(n as u64) as usize;
        let i = self
            .cards
            .iter()
            .enumerate()
            .filter(|(_, c)| pick.fits(**c))
            .nth(k)
            .map(|(i, _)| i)?;
        self.out += 1;
        Some(self.cards.swap_remove(i))
    }

    /// How many cards left fit `pick`.
    #[cfg(test)]
    pub fn count(&self, pick: Pick) -> usize {
        self.cards.iter().filter(|c| pick.fits(**c)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_respected() {
        let mut counts = CardCounts::default();
        let ace = Card::new(Rank::Ace, rules_core::Suit::Spades);
        for _ in 0..6 {
            counts.add(ace);
        }
        let mut s = Shoe::from_counts(&counts, 6);
        assert_eq!(s.remaining(), 6 * 52 - 6);
        assert_eq!(s.out, 6);
        let mut rng = SimRng::new(1);
        let mut seen = CardCounts::default();
        while let Some(c) = s.draw(&mut rng) {
            assert_ne!(c, ace);
            seen.add(c);
        }
        assert_eq!(seen.total(), 6 * 52 - 6);
        assert_eq!(s.out, 6 * 52);
    }

    #[test]
    fn take_fits() {
        let mut s = Shoe::fresh(1);
        let mut rng = SimRng::new(2);
        for _ in 0..16 {
            assert!(is_ten_value(s.take(&mut rng, Pick::Ten).unwrap().rank));
        }
        assert_eq!(s.take(&mut rng, Pick::Ten), None);
        assert_eq!(s.count(Pick::Value(1, 1)), 4);
    }
}
