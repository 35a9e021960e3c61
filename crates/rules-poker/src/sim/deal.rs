//! The cards of a simulated hand: a shuffled deck dealt as the rules deal it, or a shuffle
//! steered so that two players hold hands of equal value (a split pot).

use rules_core::{Card, SimRng, Suit};

use crate::eval::{self, CardSet, HandValue};
use crate::variant::{Streets, VariantRules};

/// The cards of one hand.
#[derive(Clone, Debug, Default)]
pub struct Deal {
    /// Hole cards by ring position (index into the hand's seats, ascending), in the order the
    /// seat receives them.
    pub hole: Vec<Vec<Card>>,
    /// The five common cards in the order they come.
    pub board: Vec<Card>,
    /// Burn cards before flop, turn and river (empty where the game does not burn).
    pub burns: Vec<Card>,
    /// The cards left in the stub (replacements come from here).
    pub stub: Vec<Card>,
}

/// A properly shuffled deck dealt by the rules: hole cards one per seat per pass from the top,
/// starting with ring position `start` (r.35, r.77; Reg806 r.49, r.50; P461 r.42); at hold'em
/// and omaha a burn from the top before each street (r.41, r.43, r.45); at sintético the common
/// cards from the bottom (r.107, r.108).
pub fn shuffled(rng: &mut SimRng, rules: &VariantRules, n: usize, start: usize) -> Deal {
    let mut deck = rules.deck.cards();
    rng.shuffle(&mut deck);
    let mut hole = vec![Vec::with_capacity(rules.hole_cards); n];
    let mut top = 0;
    for _ in 0..rules.hole_cards {
        for k in 0..n {
            hole[(start + k) % n].push(deck[top]);
            top += 1;
        }
    }
    let mut board = Vec::with_capacity(5);
    let mut burns = Vec::with_capacity(3);
    let mut bottom = deck.len();
    match rules.streets {
        Streets::OneByOne => {
            for _ in 0..5 {
                bottom -= 1;
                board.push(deck[bottom]);
            }
        }
        Streets::FlopTurnRiver => {
            for street in [3usize, 1, 1] {
                if rules.burns {
                    burns.push(deck[top]);
                    top += 1;
                }
                board.extend_from_slice(&deck[top..top + street]);
                top += street;
            }
        }
    }
    Deal {
        hole,
        board,
        burns,
        stub: deck[top..bottom].to_vec(),
    }
}

/// The value of each ring position's hand on the full board.
pub fn values(rules: &VariantRules, deal: &Deal) -> Vec<HandValue> {
    deal.hole
        .iter()
        .map(|h| {
            eval::best_hand(rules.ranking, rules.selection, h, &deal.board).unwrap_or_default()
        })
        .collect()
}

/// A shuffle steered to a tie: ring positions `p` and `q` hold the same ranks in other suits,
/// the board has at most two cards of a suit (so no flush is possible: the two hands are equal
/// under every variant's selection), and no other player holds a better hand. `None` when no
/// such deal was found in a few hundred shuffles.
pub fn tied(rng: &mut SimRng, rules: &VariantRules, n: usize, p: usize, q: usize) -> Option<Deal> {
    let h = rules.hole_cards;
    let deck = rules.deck.cards();
    let mut d = deck.clone();
    for _ in 0..400 {
        d.copy_from_slice(&deck);
        rng.shuffle(&mut d);
        let hp: Vec<Card> = d[..h].to_vec();
        let mut used = CardSet::from_cards(&hp);
        let mut hq = Vec::with_capacity(h);
        for c in &hp {
            let mut suits = Suit::ALL;
            rng.shuffle(&mut suits);
            if let Some(x) = suits
                .iter()
                .map(|&s| Card::new(c.rank, s))
                .find(|&x| !used.contains(x))
            {
                used = used.with(x);
                hq.push(x);
            }
        }
        if hq.len() < h {
            continue;
        }
        let mut per_suit = [0u8; 4];
        let mut board = Vec::with_capacity(5);
        for &c in &d[h..] {
            if board.len() == 5 {
                break;
            }
            if !used.contains(c) && per_suit[c.suit as usize] < 2 {
                per_suit[c.suit as usize] += 1;
                used = used.with(c);
                board.push(c);
            }
        }
        let mut rest = d[h..].iter().copied().filter(|&c| !used.contains(c));
        let mut hole = Vec::with_capacity(n);
        for i in 0..n {
            hole.push(if i == p {
                hp.clone()
            } else if i == q {
                hq.clone()
            } else {
                rest.by_ref().take(h).collect()
            });
        }
        let burns: Vec<Card> = if rules.burns {
            rest.by_ref().take(3).collect()
        } else {
            Vec::new()
        };
        let stub: Vec<Card> = rest.collect();
        let deal = Deal {
            hole,
            board,
            burns,
            stub,
        };
        if deal.board.len() < 5 || deal.hole.iter().any(|x| x.len() != h) {
            continue;
        }
        let v = values(rules, &deal);
        let best = v.iter().copied().max().unwrap_or_default();
        if v[p] == v[q] && v[p] == best {
            return Some(deal);
        }
    }
    None
}
