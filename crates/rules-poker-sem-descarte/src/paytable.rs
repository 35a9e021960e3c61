//! The fixed pay table of the second bet (P217/2007 T.I C.III S.II r.6(a)-(j); P461/2001 r.6),
//! and P461/2001's fixed jackpot table (Anexo I r.9).

use rules_core::Award;

use crate::eval::Category;

/// r.6: the multiple of the second bet for each category, indexed by [`Category`] (lowest
/// first): high card 1, pair 1, two pairs 2, three of a kind 3, straight 4, flush 5, full house
/// 7, four of a kind 20, straight flush 50, royal flush 100.
pub const MULTIPLE: [i64; 10] = [1, 1, 2, 3, 4, 5, 7, 20, 50, 100];

/// The r.6 citation of each category's line.
pub const LINE: [&str; 10] = [
    "6(j)", "6(i)", "6(h)", "6(g)", "6(f)", "6(e)", "6(d)", "6(c)", "6(b)", "6(a)",
];

pub fn multiple(c: Category) -> i64 {
    MULTIPLE[c as usize]
}

/// P461/2001 Anexo I r.9: royal flush the whole jackpot (or the remainder), straight flush 10%,
/// four of a kind 500 x, full house 100 x, flush 50 x the jackpot bet.
pub const P461_JACKPOT: [(Category, Award, &str); 5] = [
    (
        Category::RoyalFlush,
        Award::Whole,
        "P461/2001 Anexo I r.9(a)",
    ),
    (
        Category::StraightFlush,
        Award::Percent { bp: 1000 },
        "P461/2001 Anexo I r.9(b)",
    ),
    (
        Category::Quads,
        Award::Multiple { times: 500 },
        "P461/2001 Anexo I r.9(c)",
    ),
    (
        Category::FullHouse,
        Award::Multiple { times: 100 },
        "P461/2001 Anexo I r.9(d)",
    ),
    (
        Category::Flush,
        Award::Multiple { times: 50 },
        "P461/2001 Anexo I r.9(e)",
    ),
];
