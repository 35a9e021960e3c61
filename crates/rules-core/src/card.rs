//! Playing cards of the standard 52-card French deck, written as two characters: rank
//! (`2`-`9`, `T`, `J`, `Q`, `K`, `A`) and suit (`S` spades, `H` hearts, `D` diamonds, `C`
//! clubs), e.g. `"AS"`, `"TD"`, `"7H"`. Parsing also accepts `10` for the ten and lower-case
//! letters; display is always the canonical two-character form. There are no jokers in any game
//! of the regulations.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Card rank. The discriminant is the rank's poker order (2 = 2 ... ace = 14); games give ranks
/// their own point values (baccarat, blackjack) in their engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Rank {
    Two = 2,
    Three = 3,
    Four = 4,
    Five = 5,
    Six = 6,
    Seven = 7,
    Eight = 8,
    Nine = 9,
    Ten = 10,
    Jack = 11,
    Queen = 12,
    King = 13,
    Ace = 14,
}

impl Rank {
    /// All ranks, lowest first.
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    /// Poker order value: 2..=14 (ace high).
    pub const fn order(self) -> u8 {
        self as u8
    }

    /// The rank with poker order `v` (2..=14).
    pub fn from_order(v: u8) -> Option<Rank> {
        if (2..=14).contains(&v) {
            Some(Rank::ALL[(v - 2) as usize])
        } else {
            None
        }
    }

    /// Canonical character.
    pub const fn symbol(self) -> char {
        match self {
            Rank::Two => '2',
            Rank::Three => '3',
            Rank::Four => '4',
            Rank::Five => '5',
            Rank::Six => '6',
            Rank::Seven => '7',
            Rank::Eight => '8',
            Rank::Nine => '9',
            Rank::Ten => 'T',
            Rank::Jack => 'J',
            Rank::Queen => 'Q',
            Rank::King => 'K',
            Rank::Ace => 'A',
        }
    }

    /// Ten, jack, queen or king: the "figures and ten" that many games value alike.
    pub const fn is_ten_or_face(self) -> bool {
        matches!(self, Rank::Ten | Rank::Jack | Rank::Queen | Rank::King)
    }
}

/// Card suit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Suit {
    Spades = 0,
    Hearts = 1,
    Diamonds = 2,
    Clubs = 3,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

    pub const fn symbol(self) -> char {
        match self {
            Suit::Spades => 'S',
            Suit::Hearts => 'H',
            Suit::Diamonds => 'D',
            Suit::Clubs => 'C',
        }
    }

    /// Hearts and diamonds are red; spades and clubs black.
    pub const fn is_red(self) -> bool {
        matches!(self, Suit::Hearts | Suit::Diamonds)
    }
}

/// One card.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card {
    pub rank: Rank,
    pub suit: Suit,
}

impl Card {
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card { rank, suit }
    }

    /// Dense index 0..52 (suit-major), for counting cards in a shoe.
    pub const fn index(self) -> usize {
        (self.suit as usize) * 13 + (self.rank as usize - 2)
    }

    /// Inverse of [`Card::index`].
    pub fn from_index(i: usize) -> Option<Card> {
        if i >= 52 {
            return None;
        }
        Some(Card {
            suit: Suit::ALL[i / 13],
            rank: Rank::ALL[i % 13],
        })
    }

    /// The 52 cards of one deck, in index order.
    pub fn deck() -> impl Iterator<Item = Card> {
        (0..52).filter_map(Card::from_index)
    }
}

/// Why a card string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{input}` is not a card: {reason} (write rank 2-9/T/J/Q/K/A then suit S/H/D/C, e.g. \"TD\")"
)]
pub struct CardParseError {
    pub input: String,
    pub reason: &'static str,
}

impl FromStr for Card {
    type Err = CardParseError;

    fn from_str(s: &str) -> Result<Card, CardParseError> {
        let err = |reason| CardParseError {
            input: s.chars().take(16).collect(),
            reason,
        };
        let t = s.trim();
        // Ranks and suits are ASCII; anything else is refused before the string is cut by
        // bytes (a cut inside a multi-byte character would panic).
        if !t.is_ascii() {
            return Err(err("not ASCII"));
        }
        let (rank_part, suit_part) = match t.len() {
            2 => t.split_at(1),
            3 if t.starts_with("10") => t.split_at(2),
            _ => return Err(err("wrong length")),
        };
        let rank = match rank_part.to_ascii_uppercase().as_str() {
            "2" => Rank::Two,
            "3" => Rank::Three,
            "4" => Rank::Four,
            "5" => Rank::Five,
            "6" => Rank::Six,
            "7" => Rank::Seven,
            "8" => Rank::Eight,
            "9" => Rank::Nine,
            "T" | "10" => Rank::Ten,
            "J" => Rank::Jack,
            "Q" => Rank::Queen,
            "K" => Rank::King,
            "A" => Rank::Ace,
            _ => return Err(err("unknown rank")),
        };
        let suit = match suit_part.to_ascii_uppercase().as_str() {
            "S" => Suit::Spades,
            "H" => Suit::Hearts,
            "D" => Suit::Diamonds,
            "C" => Suit::Clubs,
            _ => return Err(err("unknown suit")),
        };
        Ok(Card { rank, suit })
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank.symbol(), self.suit.symbol())
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let buf = [self.rank.symbol() as u8, self.suit.symbol() as u8];
        // Both symbols are ASCII.
        s.serialize_str(std::str::from_utf8(&buf).unwrap_or("??"))
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Card, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// How many times each of the 52 cards has been seen, e.g. in one shoe. Used to detect a card
/// that cannot be in the shoe (seen more often than there are decks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CardCounts([u16; 52]);

impl Default for CardCounts {
    fn default() -> Self {
        CardCounts([0; 52])
    }
}

impl CardCounts {
    /// Count one more `card`; returns the new count.
    pub fn add(&mut self, card: Card) -> u16 {
        let c = &mut self.0[card.index()];
        *c = c.saturating_add(1);
        *c
    }

    pub fn get(&self, card: Card) -> u16 {
        self.0[card.index()]
    }

    pub fn total(&self) -> u32 {
        self.0.iter().map(|&c| c as u32).sum()
    }

    pub fn clear(&mut self) {
        self.0 = [0; 52];
    }
}

impl Serialize for CardCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.as_slice().serialize(s)
    }
}

impl<'de> Deserialize<'de> for CardCounts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CardCounts, D::Error> {
        let v = Vec::<u16>::deserialize(d)?;
        let arr: [u16; 52] = v
            .try_into()
            .map_err(|_| serde::de::Error::custom("card counts must have 52 entries"))?;
        Ok(CardCounts(arr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip_every_card() {
        for c in Card::deck() {
            let s = c.to_string();
            assert_eq!(s.len(), 2);
            assert_eq!(s.parse::<Card>().unwrap(), c);
            assert_eq!(Card::from_index(c.index()), Some(c));
        }
        assert_eq!(Card::deck().count(), 52);
    }

    #[test]
    fn accepts_ten_and_lower_case() {
        assert_eq!("10h".parse::<Card>().unwrap().to_string(), "TH");
        assert_eq!(
            "as".parse::<Card>().unwrap(),
            Card::new(Rank::Ace, Suit::Spades)
        );
    }

    #[test]
    fn refuses_garbage_with_a_reason() {
        for bad in ["", "1S", "AX", "ZZZ", "10", "joker", "1000H"] {
            let e = bad.parse::<Card>().unwrap_err();
            assert!(e.to_string().contains("is not a card"), "{e}");
        }
    }

    /// Cards come from the network (a `CardDealt` event's `card`, decoded at ingest before the
    /// signature is checked) and from files: no string may panic the parser. Multi-byte
    /// characters where a rank or a suit belongs are refused, not cut.
    #[test]
    fn refuses_non_ascii_without_panicking() {
        for bad in ["é", "Té", "éS", "1é", "10é", "€", "1€", "\u{10348}", " é "] {
            let e = bad.parse::<Card>().unwrap_err();
            assert!(e.to_string().contains("is not a card"), "{bad:?}: {e}");
        }
    }

    proptest::proptest! {
        /// Any string of up to four characters (ASCII, Latin, CJK, emoji) either parses to a
        /// card whose display parses back to it, or is refused; nothing panics.
        #[test]
        fn any_short_string_parses_or_is_refused(s in "\\PC{0,4}") {
            if let Ok(c) = s.parse::<Card>() {
                proptest::prop_assert_eq!(c.to_string().parse::<Card>().unwrap(), c);
            }
        }
    }

    #[test]
    fn serde_is_the_two_character_form() {
        let c: Card = serde_json::from_str("\"QC\"").unwrap();
        assert_eq!(serde_json::to_string(&c).unwrap(), "\"QC\"");
        assert!(serde_json::from_str::<Card>("\"QX\"").is_err());
    }

    #[test]
    fn ranks_orders_and_colours() {
        for (i, r) in Rank::ALL.into_iter().enumerate() {
            assert_eq!(r.order(), i as u8 + 2);
            assert_eq!(Rank::from_order(r.order()), Some(r));
            assert_eq!(
                r.is_ten_or_face(),
                matches!(r.symbol(), 'T' | 'J' | 'Q' | 'K'),
                "{r:?}"
            );
        }
        for v in [0, 1, 15, 255] {
            assert_eq!(Rank::from_order(v), None, "{v}");
        }
        let red: Vec<_> = Suit::ALL.into_iter().filter(|s| s.is_red()).collect();
        assert_eq!(red, [Suit::Hearts, Suit::Diamonds]);
    }

    #[test]
    fn counts() {
        let mut k = CardCounts::default();
        let c = Card::new(Rank::Seven, Suit::Hearts);
        assert_eq!(k.add(c), 1);
        assert_eq!(k.add(c), 2);
        assert_eq!(k.total(), 2);
        assert_eq!(k.get(c), 2);
        assert_eq!(k.get(Card::new(Rank::Seven, Suit::Spades)), 0);
        let j = serde_json::to_string(&k).unwrap();
        assert_eq!(serde_json::from_str::<CardCounts>(&j).unwrap(), k);
        k.clear();
        assert_eq!((k.get(c), k.total()), (0, 0));
        assert_eq!(k, CardCounts::default());
    }

    /// The deck is the 52 different cards, each at its own index.
    #[test]
    fn the_deck_is_52_cards_each_at_its_index() {
        let deck: Vec<Card> = Card::deck().collect();
        assert_eq!(deck.len(), 52);
        for (i, c) in deck.iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(Card::from_index(i), Some(*c));
        }
        let distinct: std::collections::BTreeSet<_> = deck.iter().collect();
        assert_eq!(distinct.len(), 52);
        assert_eq!(Card::from_index(52), None);
    }

    /// Three characters are a card only as `10` and a suit.
    #[test]
    fn three_characters_must_start_with_10() {
        assert_eq!(
            "10h".parse::<Card>(),
            Ok(Card::new(Rank::Ten, Suit::Hearts))
        );
        for s in ["AHH", "2HS", "T10"] {
            assert_eq!(s.parse::<Card>().unwrap_err().reason, "wrong length", "{s}");
        }
    }
}
