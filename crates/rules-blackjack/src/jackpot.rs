//! The blackjack jackpot ("prémio acumulado"): P217/2007 T.I C.III S.I r.38-r.50, P1364/2001
//! r.38-r.50.
//!
//! * r.40: the jackpot bet amount, the increment percentage and the conditions are fixed by the
//!   inspectorate: they are [`rules_core::JackpotConfig`].
//! * r.42, r.46: only the first two, three or four cards originally dealt to the player count,
//!   including the cards of split pairs: the seat's cards **in dealing order** across its hands.
//! * r.43: the combinations are paid whatever the main bet did (lost, surrendered, tied). Under
//!   P1364/2001 the table is fixed ([`P1364_TABLE`]); under P217/2007 it is the approved one.
//! * r.44: start value at least 10,000 x the jackpot bet (checked in configuration).
//! * r.45: only a player with a main bet may bet on the jackpot; r.47: one chip of the preset
//!   amount per player per hand; r.48: placed before the deal.
//! * r.50: several winning combinations in a round: prizes are paid from the smallest to the
//!   largest and the remainder goes to the top combination (a), divided among equal top winners
//!   (b).
//!
//! Engine model (digest 8 and readings 13.9-13.14):
//! * a jackpot bet wins only the **highest** line its first cards form (13.9): a whole-jackpot
//!   line ranks above every other; other lines rank by their prize this round;
//! * contributions (chip x increment, exact in 1/10,000 cent) come before awards (13.11);
//! * percentage prizes are taken on the value after this round's contributions and before any
//!   other prize of the round (13.14 leaves the order open: reading);
//! * smaller prizes come out of the pool (13.12); the top winners share the remainder, each
//!   receiving `floor(remainder / n)` in whole cents; the fraction of a cent and the indivisible
//!   residue are not paid and do not carry over, since the display restarts at the configured
//!   start value after a whole-jackpot award (13.13, 13.14: the rules fix no rounding);
//! * the chip is never returned (13.10): a jackpot bet nets `prize - chip`.

use rules_core::{Award, Card, Cents, JackpotAccount, Rank, Suit};

use crate::hand::is_ten_value;

/// A jackpot combination, judged on the first 2, 3 or 4 cards of the seat (r.42).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combo {
    /// First four cards aces, all red or all black (P1364/2001 r.43(a)).
    FourAcesSameColour,
    /// First four cards aces of one suit.
    FourAcesSameSuit,
    /// First four cards aces.
    FourAces,
    /// First three cards aces of the same suit (P1364/2001 r.43(b)).
    ThreeAcesSameSuit,
    /// First three cards aces of the same colour.
    ThreeAcesSameColour,
    /// First three cards aces of pairwise different suits (P1364/2001 r.43(c), reading 13.9).
    ThreeAcesDifferentSuits,
    /// First three cards aces.
    ThreeAces,
    /// First two cards aces of the same suit (P1364/2001 r.43(d)).
    TwoAcesSameSuit,
    /// First two cards aces of the same colour.
    TwoAcesSameColour,
    /// First two cards aces of different suits (P1364/2001 r.43(e)).
    TwoAcesDifferentSuits,
    /// First two cards aces.
    TwoAces,
    /// First two cards an ace and a ten-value card of the same suit.
    SuitedBlackjack,
    /// First two cards an ace and a ten-value card.
    Blackjack,
    /// First three cards 6, 7, 8 of one suit.
    Suited678,
    /// First three cards 7s of one suit.
    ThreeSevensSameSuit,
    /// First three cards 7s.
    ThreeSevens,
}

impl Combo {
    pub const ALL: [Combo; 16] = [
        Combo::FourAcesSameColour,
        Combo::FourAcesSameSuit,
        Combo::FourAces,
        Combo::ThreeAcesSameSuit,
        Combo::ThreeAcesSameColour,
        Combo::ThreeAcesDifferentSuits,
        Combo::ThreeAces,
        Combo::TwoAcesSameSuit,
        Combo::TwoAcesSameColour,
        Combo::TwoAcesDifferentSuits,
        Combo::TwoAces,
        Combo::SuitedBlackjack,
        Combo::Blackjack,
        Combo::Suited678,
        Combo::ThreeSevensSameSuit,
        Combo::ThreeSevens,
    ];

    /// The combination id used in [`rules_core::JackpotPrize::combination`].
    pub const fn id(self) -> &'static str {
        match self {
            Combo::FourAcesSameColour => "four_aces_same_colour",
            Combo::FourAcesSameSuit => "four_aces_same_suit",
            Combo::FourAces => "four_aces",
            Combo::ThreeAcesSameSuit => "three_aces_same_suit",
            Combo::ThreeAcesSameColour => "three_aces_same_colour",
            Combo::ThreeAcesDifferentSuits => "three_aces_different_suits",
            Combo::ThreeAces => "three_aces",
            Combo::TwoAcesSameSuit => "two_aces_same_suit",
            Combo::TwoAcesSameColour => "two_aces_same_colour",
            Combo::TwoAcesDifferentSuits => "two_aces_different_suits",
            Combo::TwoAces => "two_aces",
            Combo::SuitedBlackjack => "suited_blackjack",
            Combo::Blackjack => "blackjack",
            Combo::Suited678 => "suited_678",
            Combo::ThreeSevensSameSuit => "three_sevens_same_suit",
            Combo::ThreeSevens => "three_sevens",
        }
    }

    pub fn parse(s: &str) -> Option<Combo> {
        Combo::ALL.iter().copied().find(|c| c.id() == s)
    }

    /// Whether the seat's first cards (in dealing order, up to four) form this combination.
    pub fn matches(self, first: &[Card]) -> bool {
        let aces = |n: usize| first.len() >= n && first[..n].iter().all(|c| c.rank == Rank::Ace);
        let same_suit = |n: usize| first[..n].iter().all(|c| c.suit == first[0].suit);
        let same_colour = |n: usize| {
            first[..n]
                .iter()
                .all(|c| c.suit.is_red() == first[0].suit.is_red())
        };
        let distinct =
            |n: usize| (0..n).all(|i| (i + 1..n).all(|j| first[i].suit != first[j].suit));
        match self {
            Combo::FourAcesSameColour => aces(4) && same_colour(4),
            Combo::FourAcesSameSuit => aces(4) && same_suit(4),
            Combo::FourAces => aces(4),
            Combo::ThreeAcesSameSuit => aces(3) && same_suit(3),
            Combo::ThreeAcesSameColour => aces(3) && same_colour(3),
            Combo::ThreeAcesDifferentSuits => aces(3) && distinct(3),
            Combo::ThreeAces => aces(3),
            Combo::TwoAcesSameSuit => aces(2) && same_suit(2),
            Combo::TwoAcesSameColour => aces(2) && same_colour(2),
            Combo::TwoAcesDifferentSuits => aces(2) && distinct(2),
            Combo::TwoAces => aces(2),
            Combo::SuitedBlackjack => {
                first.len() >= 2 && crate::hand::is_ace_ten(&first[..2]) && same_suit(2)
            }
            Combo::Blackjack => first.len() >= 2 && crate::hand::is_ace_ten(&first[..2]),
            Combo::Suited678 => {
                first.len() >= 3 && {
                    let mut v = [
                        first[0].rank as u8,
                        first[1].rank as u8,
                        first[2].rank as u8,
                    ];
                    v.sort_unstable();
                    v == [6, 7, 8] && same_suit(3)
                }
            }
            Combo::ThreeSevensSameSuit => sevens(first) && same_suit(3),
            Combo::ThreeSevens => sevens(first),
        }
    }
}

fn sevens(first: &[Card]) -> bool {
    first.len() >= 3 && first[..3].iter().all(|c| c.rank == Rank::Seven)
}

/// One line of the pay table in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub combo: Combo,
    pub award: Award,
    pub citation: &'static str,
}

/// P1364/2001 r.43: the fixed table.
pub const P1364_TABLE: [Line; 5] = [
    Line {
        combo: Combo::FourAcesSameColour,
        award: Award::Whole,
        citation: "P1364/2001 r.43(a)",
    },
    Line {
        combo: Combo::ThreeAcesSameSuit,
        award: Award::Multiple { times: 2500 },
        citation: "P1364/2001 r.43(b)",
    },
    Line {
        combo: Combo::ThreeAcesDifferentSuits,
        award: Award::Multiple { times: 250 },
        citation: "P1364/2001 r.43(c)",
    },
    Line {
        combo: Combo::TwoAcesSameSuit,
        award: Award::Multiple { times: 100 },
        citation: "P1364/2001 r.43(d)",
    },
    Line {
        combo: Combo::TwoAcesDifferentSuits,
        award: Award::Multiple { times: 25 },
        citation: "P1364/2001 r.43(e)",
    },
];

/// The jackpot rules of a table.
#[derive(Clone, Debug)]
pub struct JackpotRules {
    /// The one jackpot chip value (r.40, r.47).
    pub chip: Cents,
    /// Share of each chip credited to the display, in basis points (r.40).
    pub increment_bp: u32,
    /// Start and reset value (r.44).
    pub start: Cents,
    pub lines: Vec<Line>,
    /// Manual collection (r.41(b)) rather than automatic.
    pub manual: bool,
}

/// 1/10,000 cent per cent.
pub const E4: i128 = 10_000;

/// Prize of a non-whole line this round; percentages on `pool_e4` (value after contributions),
/// truncated to whole cents.
fn line_prize(rules: &JackpotRules, line: &Line, pool_e4: Option<i128>) -> Option<i128> {
    match line.award {
        Award::Whole => None,
        Award::Multiple { times } => Some(times as i128 * rules.chip as i128),
        Award::Percent { bp } => pool_e4.map(|v| (v.max(0) * bp as i128) / (E4 * E4)),
    }
}

/// Why a jackpot round cannot be priced.
pub const NEED_VALUE: &str =
    "a whole or percentage jackpot award needs jackpot_before_cents (the value before the round)";

/// The highest line the first cards form (reading 13.9). `Err` when a percentage line must be
/// priced without the jackpot value.
pub fn best_line(
    rules: &JackpotRules,
    first: &[Card],
    pool_e4: Option<i128>,
) -> Result<Option<usize>, &'static str> {
    let mut best: Option<(usize, Option<i128>)> = None;
    for (i, line) in rules.lines.iter().enumerate() {
        if !line.combo.matches(first) {
            continue;
        }
        if matches!(line.award, Award::Percent { .. }) && pool_e4.is_none() {
            return Err(NEED_VALUE);
        }
        let p = line_prize(rules, line, pool_e4);
        let better = match (&best, p) {
            (None, _) => true,
            // Whole ranks above everything; first listed wins among equals.
            (Some((_, None)), _) => false,
            (Some((_, Some(_))), None) => true,
            (Some((_, Some(b))), Some(x)) => x > *b,
        };
        if better {
            best = Some((i, p));
        }
    }
    Ok(best.map(|(i, _)| i))
}

/// Prizes of the round's winners (in the order given) and the jackpot's movement.
pub struct Payout {
    pub prizes: Vec<Cents>,
    pub account: Option<JackpotAccount>,
    /// A percentage prize fell in the same round as another prize: order unclear (13.14).
    pub order_reading: bool,
    /// Several winners shared the top line.
    pub shared_top: bool,
}

/// Price the winners `(line index)` of a round (r.50) given the value before the round and the
/// round's contributions in 1/10,000 cent.
pub fn payout(
    rules: &JackpotRules,
    before: Option<Cents>,
    contributions_e4: i128,
    winners: &[usize],
) -> Result<Payout, &'static str> {
    let pool_e4 = before.map(|b| b as i128 * E4 + contributions_e4);
    let mut prizes = vec![0i128; winners.len()];
    let mut small: i128 = 0;
    let mut top = 0usize;
    let mut has_percent = false;
    for (k, &li) in winners.iter().enumerate() {
        let Some(line) = rules.lines.get(li) else {
            continue;
        };
        match line.award {
            Award::Whole => top += 1,
            Award::Percent { .. } => {
                has_percent = true;
                let p = line_prize(rules, line, pool_e4).ok_or(NEED_VALUE)?;
                prizes[k] = p;
                small += p;
            }
            Award::Multiple { .. } => {
                let p = line_prize(rules, line, pool_e4).unwrap_or(0);
                prizes[k] = p;
                small += p;
            }
        }
    }
    let mut reset = false;
    let mut account = None;
    if top > 0 {
        let pool = pool_e4.ok_or(NEED_VALUE)?;
        let remainder = (pool - small * E4).max(0);
        let share = remainder / (E4 * top as i128);
        for (k, &li) in winners.iter().enumerate() {
            if rules.lines.get(li).is_some_and(|l| l.award == Award::Whole) {
                prizes[k] = share;
            }
        }
        reset = true;
    }
    let total: i128 = prizes.iter().sum();
    if let Some(pool) = pool_e4 {
        let after = if reset {
            rules.start as i128 * E4
        } else {
            pool - total * E4
        };
        let to64 = |v: i128| i64::try_from(v).map_err(|_| "jackpot amounts out of range");
        account = Some(JackpotAccount {
            value_before_cents: before.unwrap_or(0),
            contributions_e4: to64(contributions_e4)?,
            prizes_cents: to64(total)?,
            reset,
            value_after_e4: to64(after)?,
        });
    }
    let prizes = prizes
        .into_iter()
        .map(|p| i64::try_from(p).map_err(|_| "jackpot prize out of range"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Payout {
        prizes,
        account,
        order_reading: has_percent && winners.len() > 1,
        shared_top: top > 1,
    })
}

/// A display reading matches an exact value (1/10,000 cent) if it is that value truncated or
/// rounded up to the cent (the rules fix no rounding, 13.14).
pub fn display_matches(display_cents: Cents, exact_e4: i128) -> bool {
    let d = display_cents as i128 * E4;
    d > exact_e4 - E4 && d < exact_e4 + E4
}

/// Suit colour helper for tests and docs.
pub fn colour(s: Suit) -> &'static str {
    if s.is_red() { "red" } else { "black" }
}

/// Ten-value helper re-exported for the combination docs.
pub fn ten(c: Card) -> bool {
    is_ten_value(c.rank)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules_core::Suit;

    fn rules(lines: &[Line]) -> JackpotRules {
        JackpotRules {
            chip: 200,
            increment_bp: 7500,
            start: 2_000_000,
            lines: lines.to_vec(),
            manual: false,
        }
    }

    /// P1364/2001 r.43, r.42 and reading 13.9: every ordered sequence of the first four cards
    /// (52^4 sequences, an infinite deck) is classified by its highest line, and each line's
    /// count equals the analytic count.
    #[test]
    fn p1364_r43_table_over_every_first_four_cards() {
        let r = rules(&P1364_TABLE);
        let deck: Vec<Card> = Card::deck().collect();
        let mut counts = [0u64; 6];
        for a in &deck {
            for b in &deck {
                for c in &deck {
                    for d in &deck {
                        let first = [*a, *b, *c, *d];
                        let k = best_line(&r, &first, Some(0)).unwrap().unwrap_or(5);
                        counts[k] += 1;
                    }
                }
            }
        }
        let n = 52u64;
        // (a) four aces of one colour: 2 colours x 2^4 suit choices.
        let four_colour = 2 * 16;
        // (b) three aces of one suit (4 x 52 fourth cards) less those whose fourth card is an
        // ace of the same colour (line (a)).
        let three_same = 4 * n - 4 * 2;
        // (c) three aces of pairwise different suits (4 x 3 x 2 ordered) x 52; never one colour.
        let three_diff = 24 * n;
        // (d) two aces of one suit, less: third card that ace again (line (a)/(b), 4 x 52), and
        // (s, s, other suit of the colour, ace of the colour) = line (a), 4 x 1 x 2.
        let two_same = 4 * n * n - 4 * n - 8;
        // (e) two aces of different suits, less: third an ace of a third suit (line (c),
        // 12 x 2 x 52) and four aces of one colour starting with two suits of that colour
        // (4 ordered pairs x 2 x 2).
        let two_diff = 12 * n * n - 12 * 2 * n - 16;
        assert_eq!(counts[0], four_colour);
        assert_eq!(counts[1], three_same);
        assert_eq!(counts[2], three_diff);
        assert_eq!(counts[3], two_same);
        assert_eq!(counts[4], two_diff);
        assert_eq!(counts.iter().sum::<u64>(), n.pow(4));
        // Expected fixed-prize return per chip over an infinite deck (whole line excluded):
        // (2500 x 200 + 250 x 1248 + 100 x 10600 + 25 x 31184) / 52^4 chips.
        let fixed: u64 = 2500 * counts[1] + 250 * counts[2] + 100 * counts[3] + 25 * counts[4];
        assert_eq!(fixed, 2500 * 200 + 250 * 1248 + 100 * 10600 + 25 * 31184);
    }

    /// P1364/2001 r.43(a)-(e): the digest's worked example C prices (two different-suit aces
    /// 25 x 200; four red aces take the remainder).
    #[test]
    fn r50_smaller_first_then_remainder() {
        let r = rules(&P1364_TABLE);
        let p = payout(&r, Some(1_500_000), 4 * 200 * 7500, &[4, 0]).unwrap();
        assert_eq!(p.prizes, vec![5_000, 1_495_600]);
        let a = p.account.unwrap();
        assert!(a.reset);
        assert_eq!(a.value_after_e4, 2_000_000 * 10_000);
        assert_eq!(a.prizes_cents, 1_500_600);
    }

    /// r.50(b): equal top winners divide the remainder.
    #[test]
    fn r50b_top_winners_divide() {
        let r = rules(&P1364_TABLE);
        let p = payout(&r, Some(1_000_001), 0, &[0, 0]).unwrap();
        assert_eq!(p.prizes, vec![500_000, 500_000]);
        assert!(p.shared_top);
    }

    #[test]
    fn display_tolerance() {
        assert!(display_matches(100, 1_000_000));
        assert!(display_matches(100, 1_005_000));
        assert!(display_matches(101, 1_005_000));
        assert!(!display_matches(102, 1_005_000));
    }

    #[test]
    fn combos_parse_and_suits() {
        for c in Combo::ALL {
            assert_eq!(Combo::parse(c.id()), Some(c));
        }
        let a = |s| Card::new(Rank::Ace, s);
        assert!(Combo::ThreeAcesDifferentSuits.matches(&[
            a(Suit::Spades),
            a(Suit::Hearts),
            a(Suit::Clubs)
        ]));
        assert!(!Combo::ThreeAcesDifferentSuits.matches(&[
            a(Suit::Spades),
            a(Suit::Spades),
            a(Suit::Clubs)
        ]));
        assert_eq!(colour(Suit::Hearts), "red");
        assert!(ten(Card::new(Rank::King, Suit::Clubs)));
    }

    /// r.42, r.46 (P1364/2001 r.43(a)-(e), digest 8): every combination against an oracle
    /// written from its definition with suit and colour *sets*, over every sequence of up to
    /// four cards drawn (with repetition, as from a multi-deck shoe) from the ranks that matter
    /// (ace, 6, 7, 8, two ten-values) in every suit, and a fifth card after each (only the first
    /// four cards count).
    #[test]
    fn r42_combinations_against_their_definitions() {
        let ranks = [
            Rank::Ace,
            Rank::Six,
            Rank::Seven,
            Rank::Eight,
            Rank::Ten,
            Rank::King,
        ];
        let deck: Vec<Card> = ranks
            .iter()
            .flat_map(|&r| Suit::ALL.map(|s| Card::new(r, s)))
            .collect();
        // The set of suits (a bit each) and of colours (bit 0 black, bit 1 red) of some cards.
        let suits = |cs: &[Card]| cs.iter().fold(0u8, |m, c| m | 1 << (c.suit as u8));
        let colours = |cs: &[Card]| {
            cs.iter()
                .fold(0u8, |m, c| m | 1 << u8::from(c.suit.is_red()))
        };
        let all = |cs: &[Card], r: Rank| cs.iter().all(|c| c.rank == r);
        let oracle = |combo: Combo, first: &[Card]| -> bool {
            let take = |n: usize| first.get(..n);
            let one_suit = |cs: &[Card]| suits(cs).count_ones() == 1;
            let aces_where = |n: usize, cond: &dyn Fn(&[Card]) -> bool| {
                take(n).is_some_and(|cs| all(cs, Rank::Ace) && cond(cs))
            };
            let any = |_: &[Card]| true;
            let one_colour = |cs: &[Card]| colours(cs).count_ones() == 1;
            let n_suits = |n: u32| move |cs: &[Card]| suits(cs).count_ones() == n;
            let ace_ten = |cs: &[Card]| {
                let tens = cs.iter().filter(|c| c.rank.is_ten_or_face()).count();
                let aces = cs.iter().filter(|c| c.rank == Rank::Ace).count();
                (tens, aces) == (1, 1)
            };
            let ranks_678 = |cs: &[Card]| {
                let mut v = [0u8; 3];
                for (x, c) in v.iter_mut().zip(cs) {
                    *x = c.rank as u8;
                }
                v.sort_unstable();
                v == [6, 7, 8]
            };
            match combo {
                Combo::FourAcesSameColour => aces_where(4, &one_colour),
                Combo::FourAcesSameSuit => aces_where(4, &one_suit),
                Combo::FourAces => aces_where(4, &any),
                Combo::ThreeAcesSameSuit => aces_where(3, &one_suit),
                Combo::ThreeAcesSameColour => aces_where(3, &one_colour),
                Combo::ThreeAcesDifferentSuits => aces_where(3, &n_suits(3)),
                Combo::ThreeAces => aces_where(3, &any),
                Combo::TwoAcesSameSuit => aces_where(2, &one_suit),
                Combo::TwoAcesSameColour => aces_where(2, &one_colour),
                Combo::TwoAcesDifferentSuits => aces_where(2, &n_suits(2)),
                Combo::TwoAces => aces_where(2, &any),
                Combo::SuitedBlackjack => take(2).is_some_and(|cs| ace_ten(cs) && one_suit(cs)),
                Combo::Blackjack => take(2).is_some_and(ace_ten),
                Combo::Suited678 => take(3).is_some_and(|cs| ranks_678(cs) && one_suit(cs)),
                Combo::ThreeSevensSameSuit => {
                    take(3).is_some_and(|cs| all(cs, Rank::Seven) && one_suit(cs))
                }
                Combo::ThreeSevens => take(3).is_some_and(|cs| all(cs, Rank::Seven)),
            }
        };
        let mut hits = [0u32; Combo::ALL.len()];
        let mut check = |seq: &[Card]| {
            for (k, combo) in Combo::ALL.into_iter().enumerate() {
                let want = oracle(combo, seq);
                assert_eq!(combo.matches(seq), want, "{combo:?} on {seq:?}");
                hits[k] += u32::from(want);
            }
        };
        check(&[]);
        for &a in &deck {
            check(&[a]);
            for &b in &deck {
                check(&[a, b]);
                for &c in &deck {
                    check(&[a, b, c]);
                    for &d in &deck {
                        check(&[a, b, c, d]);
                        check(&[a, b, c, d, deck[4]]);
                    }
                }
            }
        }
        assert!(
            hits.iter().all(|&h| h > 0),
            "every combination occurs: {hits:?}"
        );
    }
}
