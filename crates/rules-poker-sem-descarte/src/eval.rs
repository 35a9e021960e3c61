//! Hand ranking and comparison (P217/2007 T.I C.III S.II r.1, r.6, r.7; P461/2001 alike).
//!
//! * r.1: ranks A, K, Q, J, 10 ... 2 (ace high).
//! * r.6: the ten categories, highest first: royal flush, straight flush, four of a kind, full
//!   house, flush, straight, three of a kind, two pairs, one pair, high card.
//! * r.7: same category: four of a kind by the four's rank (a); full house by the three's (b);
//!   straights of any kind by the top card, A-2-3-4-5 counting the ace 1 (c); flush by the
//!   highest card (d); three of a kind by the three's rank (e); two pairs: top pair, other pair,
//!   odd card (f); one pair: the pair, then "the highest card" (g).
//! * r.6(j): high card compared card by card downwards; five equal ranks: the hand with three
//!   cards of the same "cor" wins (reading 10.4: suit).
//!
//! Readings (10.5, 10.6): after the card the text names (flush: the highest; pair: the highest
//! odd card), the comparison goes on card by card as in r.6(j); no wrap-around straight. A
//! comparison decided beyond what the text names is reported as resting on a reading.

use rules_core::{Card, Rank};

/// The ten categories of r.6, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    HighCard = 0,
    Pair = 1,
    TwoPair = 2,
    Trips = 3,
    Straight = 4,
    Flush = 5,
    FullHouse = 6,
    Quads = 7,
    StraightFlush = 8,
    RoyalFlush = 9,
}

impl Category {
    pub const ALL: [Category; 10] = [
        Category::HighCard,
        Category::Pair,
        Category::TwoPair,
        Category::Trips,
        Category::Straight,
        Category::Flush,
        Category::FullHouse,
        Category::Quads,
        Category::StraightFlush,
        Category::RoyalFlush,
    ];

    /// The combination id (pay tables, jackpot tables, reports).
    pub const fn id(self) -> &'static str {
        match self {
            Category::HighCard => "high_card",
            Category::Pair => "pair",
            Category::TwoPair => "two_pair",
            Category::Trips => "three_of_a_kind",
            Category::Straight => "straight",
            Category::Flush => "flush",
            Category::FullHouse => "full_house",
            Category::Quads => "four_of_a_kind",
            Category::StraightFlush => "straight_flush",
            Category::RoyalFlush => "royal_flush",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL.iter().copied().find(|c| c.id() == s)
    }
}

/// A ranked hand: category and the ranks in order of significance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranked {
    pub category: Category,
    /// Ranks in comparison order (unused slots 0).
    pub key: [u8; 5],
    /// High card only: three or more cards of one suit (r.6(j), reading 10.4).
    pub three_suited: bool,
}

/// How many leading key positions the text names for each category (r.7, r.6(j)); a decision
/// beyond them rests on reading 10.5.
const fn named(c: Category) -> usize {
    match c {
        // r.7(a), (b), (e): the rank of the four / three only (equal ranks need two decks).
        Category::Quads | Category::FullHouse | Category::Trips => 1,
        // r.7(c), (d): the top card.
        Category::Straight | Category::StraightFlush | Category::RoyalFlush | Category::Flush => 1,
        // r.7(g): the pair, then "the highest card".
        Category::Pair => 2,
        // r.7(f): both pairs and the odd card; r.6(j): every card.
        Category::TwoPair | Category::HighCard => 5,
    }
}

/// Rank five cards.
pub fn rank(cards: &[Card; 5]) -> Ranked {
    let mut counts = [0u8; 15];
    let mut suits = [0u8; 4];
    for c in cards {
        counts[c.rank.order() as usize] += 1;
        suits[c.suit as usize] += 1;
    }
    let flush = suits.contains(&5);
    let three_suited = suits.iter().any(|&n| n >= 3);
    // Groups ordered by (count desc, rank desc).
    let mut groups: [(u8, u8); 5] = [(0, 0); 5];
    let mut n = 0;
    for r in (2..=14u8).rev() {
        if counts[r as usize] > 0 {
            groups[n] = (counts[r as usize], r);
            n += 1;
        }
    }
    groups[..n].sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut key = [0u8; 5];
    for (k, g) in groups[..n].iter().enumerate() {
        key[k] = g.1;
    }
    let straight_top = if n == 5 {
        if groups[0].1 - groups[4].1 == 4 {
            Some(groups[0].1)
        } else if groups[0].1 == 14 && groups[1].1 == 5 {
            Some(5) // A-2-3-4-5: the ace counts 1 (r.7(c))
        } else {
            None
        }
    } else {
        None
    };
    let category = match (straight_top, flush, groups[0].0, groups[1].0) {
        (Some(14), true, _, _) => Category::RoyalFlush,
        (Some(_), true, _, _) => Category::StraightFlush,
        (_, _, 4, _) => Category::Quads,
        (_, _, 3, 2) => Category::FullHouse,
        (_, true, _, _) => Category::Flush,
        (Some(_), false, _, _) => Category::Straight,
        (_, _, 3, _) => Category::Trips,
        (_, _, 2, 2) => Category::TwoPair,
        (_, _, 2, _) => Category::Pair,
        _ => Category::HighCard,
    };
    if let Some(top) = straight_top {
        key = [top, 0, 0, 0, 0];
    }
    Ranked {
        category,
        key,
        three_suited: category == Category::HighCard && three_suited,
    }
}

/// The result of comparing a player's hand with the dealer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparison {
    pub ordering: std::cmp::Ordering,
    /// Decided by a reading (10.4 three-suited tie-break, 10.5 cards beyond those named).
    pub reading: Option<&'static str>,
}

/// Compare two ranked hands (r.6, r.7), with the r.6(j) tie-break on three cards of one suit
/// (reading 10.4).
pub fn compare(a: &Ranked, b: &Ranked) -> Comparison {
    compare_with(a, b, true)
}

/// Compare two ranked hands; `suit_tiebreak` false reads "três delas da mesma cor" literally as
/// colour, which every five-card hand satisfies: equal high cards then tie.
pub fn compare_with(a: &Ranked, b: &Ranked, suit_tiebreak: bool) -> Comparison {
    use std::cmp::Ordering::*;
    if a.category != b.category {
        return Comparison {
            ordering: a.category.cmp(&b.category),
            reading: None,
        };
    }
    for i in 0..5 {
        if a.key[i] != b.key[i] {
            return Comparison {
                ordering: a.key[i].cmp(&b.key[i]),
                reading: (i >= named(a.category)).then_some("10.5"),
            };
        }
    }
    if suit_tiebreak && a.category == Category::HighCard && a.three_suited != b.three_suited {
        return Comparison {
            ordering: if a.three_suited { Greater } else { Less },
            reading: Some("10.4"),
        };
    }
    Comparison {
        ordering: Equal,
        reading: None,
    }
}

/// r.18: the bank plays only with an ace and a king, or a better combination (reading 10.3).
pub fn qualifies(r: &Ranked) -> bool {
    r.category > Category::HighCard || (r.key[0] == Rank::Ace as u8 && r.key[1] == Rank::King as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> [Card; 5] {
        let v: Vec<Card> = s.split_whitespace().map(|c| c.parse().unwrap()).collect();
        v.try_into().unwrap()
    }

    fn r(s: &str) -> Ranked {
        rank(&h(s))
    }

    /// r.6(a)-(j): one hand of each category.
    #[test]
    fn r6_categories() {
        assert_eq!(r("AS KS QS JS TS").category, Category::RoyalFlush);
        assert_eq!(r("9S KS QS JS TS").category, Category::StraightFlush);
        assert_eq!(r("AH 2H 3H 4H 5H").category, Category::StraightFlush);
        assert_eq!(r("9S 9H 9D 9C TS").category, Category::Quads);
        assert_eq!(r("9S 9H 9D TC TS").category, Category::FullHouse);
        assert_eq!(r("2S 9S QS JS TS").category, Category::Flush);
        assert_eq!(r("AS KH QS JS TS").category, Category::Straight);
        assert_eq!(r("9S 9H 9D 2C TS").category, Category::Trips);
        assert_eq!(r("9S 9H 2D 2C TS").category, Category::TwoPair);
        assert_eq!(r("9S 9H 3D 2C TS").category, Category::Pair);
        assert_eq!(r("9S 7H 3D 2C TS").category, Category::HighCard);
        // 10.6: no wrap-around.
        assert_eq!(r("KS AH 2D 3C 4S").category, Category::HighCard);
    }

    /// r.7(c): A-2-3-4-5 is the lowest straight; equal tops tie.
    #[test]
    fn r7c_wheel_is_lowest() {
        let wheel = r("AS 2S 3D 4C 5H");
        assert_eq!(
            compare(&r("3H 4H 5D 6C 7S"), &wheel).ordering,
            std::cmp::Ordering::Greater
        );
        assert_eq!(
            compare(&r("2H 3H 4D 5C 6S"), &wheel).ordering,
            std::cmp::Ordering::Greater
        );
        assert_eq!(
            compare(&r("2H 3D 4D 5C 6S"), &r("2S 3S 4S 5S 6D")).ordering,
            std::cmp::Ordering::Equal
        );
    }

    /// r.7(f), r.7(g), reading 10.5.
    #[test]
    fn r7_kickers() {
        let c = compare(&r("9S 9H 2D 2C TS"), &r("9D 9C 2H 2S 8S"));
        assert_eq!((c.ordering, c.reading), (std::cmp::Ordering::Greater, None));
        let c = compare(&r("9S 9H KD 3C 2S"), &r("9D 9C QH 8S 7S"));
        assert_eq!((c.ordering, c.reading), (std::cmp::Ordering::Greater, None));
        let c = compare(&r("9S 9H KD 4C 2S"), &r("9D 9C KH 3S 2D"));
        assert_eq!(
            (c.ordering, c.reading),
            (std::cmp::Ordering::Greater, Some("10.5"))
        );
        let c = compare(&r("AS 9S 7S 4S 2S"), &r("AH 9H 7H 3H 2H"));
        assert_eq!(c.reading, Some("10.5"));
    }

    /// r.6(j), reading 10.4: equal high cards, three of one suit wins.
    #[test]
    fn r6j_three_suited_tie_break() {
        let c = compare(&r("KS 9S 7S 4H 2D"), &r("KH 9D 7C 4S 2H"));
        assert_eq!(
            (c.ordering, c.reading),
            (std::cmp::Ordering::Greater, Some("10.4"))
        );
        let c = compare(&r("KS 9S 7S 4H 2D"), &r("KH 9H 7H 4S 2C"));
        assert_eq!(c.ordering, std::cmp::Ordering::Equal);
    }

    /// r.18, reading 10.3: qualification.
    #[test]
    fn r18_qualification() {
        assert!(qualifies(&r("AC KD 7H 4S 2C")));
        assert!(qualifies(&r("AC KD 4H 3S 2C")));
        assert!(!qualifies(&r("AC QD JH 9S 8C")));
        assert!(qualifies(&r("2C 2D 7H 4S 9C")));
        assert!(qualifies(&r("AC 2D 3H 4S 5C")));
    }
}
