//! The evaluator against exhaustive enumeration and independent brute force.

use proptest::prelude::*;
use rules_core::{Card, Rank, Suit};
use rules_poker::eval::{
    self, CardSet, Category, Deck, HandValue, Ranking, SINTETICO_ORDER, STANDARD_ORDER, Selection,
};

fn for_each_five(deck: &[Card], mut f: impl FnMut([Card; 5])) {
    let n = deck.len();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    for e in d + 1..n {
                        f([deck[a], deck[b], deck[c], deck[d], deck[e]]);
                    }
                }
            }
        }
    }
}

/// r.17 / Reg806 r.29: every five-card hand of the 52-card deck, by category.
#[test]
fn exhaustive_52_card_category_counts() {
    let deck = Deck::Standard52.cards();
    let mut counts = [0u64; 12];
    for_each_five(&deck, |h| {
        counts[eval::eval_standard(CardSet::from_cards(&h)).category() as usize] += 1;
    });
    let want = [
        (Category::RoyalFlush, 4),
        (Category::StraightFlush, 36),
        (Category::FourOfAKind, 624),
        (Category::FullHouse, 3744),
        (Category::Flush, 5108),
        (Category::Straight, 10_200),
        (Category::ThreeOfAKind, 54_912),
        (Category::TwoPair, 123_552),
        (Category::OnePair, 1_098_240),
        (Category::HighCard, 1_302_540),
    ];
    for (cat, n) in want {
        assert_eq!(counts[cat as usize], n, "{cat:?}");
    }
    assert_eq!(counts.iter().sum::<u64>(), 2_598_960);
    assert_eq!(counts[Category::FigurasSimples as usize], 0);
}

// ---- an independent brute-force classifier ----

/// (category, tie-break ranks) computed the slow, obvious way.
fn brute(h: &[Card; 5], sintetico: bool) -> (Category, Vec<u8>) {
    let mut ranks: Vec<u8> = h.iter().map(|c| c.rank as u8).collect();
    ranks.sort_unstable_by(|a, b| b.cmp(a));
    let flush = h.iter().all(|c| c.suit == h[0].suit);
    // straights listed explicitly, highest first, with their top card
    let seqs: Vec<(Vec<u8>, u8)> = if sintetico {
        vec![
            (vec![14, 13, 12, 11, 10], 14),
            (vec![13, 12, 11, 10, 9], 13),
            (vec![12, 11, 10, 9, 8], 12),
            (vec![14, 11, 10, 9, 8], 11),
        ]
    } else {
        let mut v: Vec<(Vec<u8>, u8)> =
            (6..=14).map(|t| ((t - 4..=t).rev().collect(), t)).collect();
        v.push((vec![14, 5, 4, 3, 2], 5));
        v
    };
    let straight = seqs.iter().find(|(s, _)| {
        let mut a = s.clone();
        a.sort_unstable();
        let mut b = ranks.clone();
        b.sort_unstable();
        a == b
    });
    // groups: (count, rank) sorted by count desc then rank desc
    let mut groups: Vec<(usize, u8)> = Vec::new();
    for &r in &ranks {
        if !groups.iter().any(|g| g.1 == r) {
            groups.push((ranks.iter().filter(|&&x| x == r).count(), r));
        }
    }
    groups.sort_unstable_by(|a, b| b.cmp(a));
    let shape: Vec<usize> = groups.iter().map(|g| g.0).collect();
    let by_group: Vec<u8> = groups.iter().map(|g| g.1).collect();
    let figures = ranks.iter().all(|&r| r >= 11);
    if let Some((_, top)) = straight
        && flush
    {
        return if *top == 14 {
            (Category::RoyalFlush, vec![14])
        } else {
            (Category::StraightFlush, vec![*top])
        };
    }
    if shape == [4, 1] {
        return (Category::FourOfAKind, by_group);
    }
    if sintetico && flush {
        return (Category::Flush, ranks);
    }
    if shape == [3, 2] {
        return (Category::FullHouse, by_group);
    }
    if flush {
        return (Category::Flush, ranks);
    }
    if let Some((_, top)) = straight {
        return (Category::Straight, vec![*top]);
    }
    if shape == [3, 1, 1] {
        return (Category::ThreeOfAKind, by_group);
    }
    if shape == [2, 2, 1] {
        return (
            if sintetico && figures {
                Category::FigurasComPares
            } else {
                Category::TwoPair
            },
            by_group,
        );
    }
    if shape == [2, 1, 1, 1] {
        return (
            if sintetico && figures {
                Category::FigurasSimples
            } else {
                Category::OnePair
            },
            by_group,
        );
    }
    (Category::HighCard, ranks)
}

fn strength(cat: Category, sintetico: bool) -> usize {
    let order: &[Category] = if sintetico {
        &SINTETICO_ORDER
    } else {
        &STANDARD_ORDER
    };
    order.iter().position(|&c| c == cat).unwrap()
}

fn brute_key(h: &[Card; 5], sintetico: bool) -> (usize, Vec<u8>) {
    let (c, r) = brute(h, sintetico);
    (strength(c, sintetico), r)
}

/// r.95, r.103, r.105 (P461 r.4, r.24-r.37): every five-card hand of the 28-card deck, category
/// by category against the brute-force classifier, and the totals.
#[test]
fn exhaustive_28_card_sintetico_against_brute_force() {
    let deck = Deck::Sintetico28.cards();
    assert_eq!(deck.len(), 28);
    let mut counts = [0u64; 12];
    let mut brute_counts = [0u64; 12];
    let mut all: Vec<(HandValue, (usize, Vec<u8>))> = Vec::with_capacity(98_280);
    for_each_five(&deck, |h| {
        let v = eval::eval_sintetico5(CardSet::from_cards(&h));
        let (bc, br) = brute(&h, true);
        assert_eq!(v.category(), bc, "{h:?}");
        counts[v.category() as usize] += 1;
        brute_counts[bc as usize] += 1;
        all.push((v, (strength(bc, true), br)));
    });
    assert_eq!(counts, brute_counts);
    assert_eq!(counts.iter().sum::<u64>(), 98_280);
    // The categories of the 28-card deck (combinatorics: trips 7*4*C(6,2)*16, figuras simples
    // 4*6*4^3, two pairs C(7,2)*36*20 - 1728, high card 17 rank sets * (4^5 - 4), ...).
    let expect = [
        (Category::RoyalFlush, 4),
        (Category::StraightFlush, 12),
        (Category::FourOfAKind, 168),
        (Category::Flush, 68),
        (Category::FullHouse, 1008),
        (Category::Straight, 4080),
        (Category::ThreeOfAKind, 6720),
        (Category::FigurasComPares, 1728),
        (Category::FigurasSimples, 1536),
        (Category::TwoPair, 13_392),
        (Category::OnePair, 52_224),
        (Category::HighCard, 17_340),
    ];
    for (cat, n) in expect {
        assert_eq!(counts[cat as usize], n, "{cat:?}");
    }
    // The evaluator's order is the brute-force order: sort by one, check the other is sorted.
    all.sort_by_key(|a| a.0);
    for w in all.windows(2) {
        assert!(w[0].1 <= w[1].1, "{:?} vs {:?}", w[0], w[1]);
        assert_eq!(w[0].0 == w[1].0, w[0].1 == w[1].1);
    }
}

/// The 52-card evaluator's order against the brute-force order on a sample of every 7th hand.
#[test]
fn standard_order_matches_brute_force() {
    let deck = Deck::Standard52.cards();
    let mut all: Vec<(HandValue, (usize, Vec<u8>))> = Vec::new();
    let mut k = 0u32;
    for_each_five(&deck, |h| {
        k += 1;
        if k.is_multiple_of(7) {
            all.push((
                eval::eval_standard(CardSet::from_cards(&h)),
                brute_key(&h, false),
            ));
        }
    });
    all.sort_by_key(|a| a.0);
    for w in all.windows(2) {
        assert!(w[0].1 <= w[1].1, "{:?} vs {:?}", w[0], w[1]);
        assert_eq!(w[0].0 == w[1].0, w[0].1 == w[1].1);
    }
}

fn distinct_cards(deck: Deck, n: usize) -> impl Strategy<Value = Vec<Card>> {
    let cards = deck.cards();
    Just(cards)
        .prop_shuffle()
        .prop_map(move |v| v[..n].to_vec())
}

fn brute_two_plus_three(ranking: Ranking, hole: &[Card], board: &[Card]) -> HandValue {
    let all: Vec<(Card, bool)> = hole
        .iter()
        .map(|&c| (c, true))
        .chain(board.iter().map(|&c| (c, false)))
        .collect();
    let mut best = HandValue(0);
    let n = all.len();
    for mask in 0u32..(1 << n) {
        if mask.count_ones() != 5 {
            continue;
        }
        let pick: Vec<(Card, bool)> = (0..n)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| all[i])
            .collect();
        if pick.iter().filter(|p| p.1).count() != 2 {
            continue;
        }
        let cs: Vec<Card> = pick.iter().map(|p| p.0).collect();
        let v = eval::eval5(ranking, CardSet::from_cards(&cs));
        best = best.max(v);
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// r.94; Reg806 r.26: the 7-card evaluator equals the best of the 21 five-card subsets.
    #[test]
    fn holdem_seven_equals_best_of_21(cards in distinct_cards(Deck::Standard52, 7)) {
        let fast = eval::best_hand(Ranking::Standard, Selection::BestOfAll, &cards[..2], &cards[2..]).unwrap();
        let mut best = HandValue(0);
        for skip1 in 0..7 {
            for skip2 in skip1 + 1..7 {
                let five: Vec<Card> = (0..7).filter(|&i| i != skip1 && i != skip2).map(|i| cards[i]).collect();
                best = best.max(eval::eval_standard(CardSet::from_cards(&five)));
            }
        }
        prop_assert_eq!(fast, best);
        // and the 5-card values agree with the independent classifier
        let five: [Card; 5] = [cards[0], cards[1], cards[2], cards[3], cards[4]];
        prop_assert_eq!(eval::eval_standard(CardSet::from_cards(&five)).category(), brute(&five, false).0);
    }

    /// r.73: omaha takes exactly two of four hole cards and three of five common cards.
    #[test]
    fn omaha_two_plus_three_equals_brute_force(cards in distinct_cards(Deck::Standard52, 9)) {
        let fast = eval::best_hand(Ranking::Standard, Selection::TwoPlusThree, &cards[..4], &cards[4..]).unwrap();
        prop_assert_eq!(fast, brute_two_plus_three(Ranking::Standard, &cards[..4], &cards[4..]));
        let (v, five) = eval::best_five_cards(Ranking::Standard, Selection::TwoPlusThree, &cards[..4], &cards[4..]).unwrap();
        prop_assert_eq!(v, fast);
        prop_assert_eq!(five.iter().filter(|c| cards[..4].contains(c)).count(), 2);
    }

    /// r.97; P461 r.1: sintético takes exactly the two hole cards and three common cards.
    #[test]
    fn sintetico_two_plus_three_equals_brute_force(cards in distinct_cards(Deck::Sintetico28, 7)) {
        let fast = eval::best_hand(Ranking::Sintetico, Selection::TwoPlusThree, &cards[..2], &cards[2..]).unwrap();
        prop_assert_eq!(fast, brute_two_plus_three(Ranking::Sintetico, &cards[..2], &cards[2..]));
    }
}

#[test]
fn every_card_once_in_each_deck() {
    let all: Vec<Card> = Card::deck().collect();
    assert_eq!(Deck::Standard52.cards(), all);
    let s = Deck::Sintetico28.cards();
    for c in &s {
        assert!(c.rank >= Rank::Eight);
    }
    assert!(!Deck::Sintetico28.contains(Card::new(Rank::Seven, Suit::Hearts)));
}
