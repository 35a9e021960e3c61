//! The hand evaluator shared by every variant.
//!
//! * Standard ranking of the 52-card deck (P217/2007 T.II S.II SS.I r.17, r.18; Reg806/2015
//!   r.29–r.32): royal flush > straight flush > four of a kind > full house > flush > straight >
//!   three of a kind > two pairs > one pair > high card, the ace high (A-K-Q-J-10) or low
//!   (A-2-3-4-5, five high) in straights (SS.II r.72; Reg806 r.31).
//! * Póquer sintético ranking of the 28-card deck (SS.IV r.95, r.103, r.105; P461/2001 II r.4,
//!   r.24–r.37): flush **above** full house, two extra categories "figuras com pares" and
//!   "figuras simples" above two pairs, and the low straight A-8-9-10-J (jack high).
//!
//! A [`HandValue`] is a `u32` whose integer order is the ranking order of the variant it was
//! computed for: bits 24–27 hold the category's strength in that variant
//! ([`STANDARD_ORDER`], [`SINTETICO_ORDER`]), bits 20–23 the [`Category`] id, bits 0–19 five
//! 4-bit ranks (2–14) in tie-break order. Suits never break ties (r.18).
//!
//! Hands are selected per variant ([`Selection`]): hold'em takes the best five of the seven cards
//! (SS.III r.94; Reg806 r.26), omaha and sintético exactly two hole cards and three common cards
//! (SS.II r.73; SS.IV r.97; P461 r.1).

use rules_core::{Card, Rank, Suit};

/// A hand category. The discriminant is a stable id (not the strength: see the order tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Category {
    /// "Carta maior" (r.17(j); r.103(m); P461 r.25).
    HighCard = 0,
    /// "Par" (r.17(i); r.103(l); P461 r.37).
    OnePair = 1,
    /// "Dois pares" (r.17(h); r.103(j); P461 r.36).
    TwoPair = 2,
    /// Sintético "figuras simples" (r.105(b); P461 r.35): five figures (A, K, Q, J) with exactly
    /// one pair (digest N12: the P217 wording "without pairs" is impossible with four figure
    /// ranks; P461 r.35 "without trio or full").
    FigurasSimples = 3,
    /// Sintético "figuras com pares" (r.105(a); P461 r.34): five figures forming two pairs.
    FigurasComPares = 4,
    /// "Trio" (r.17(g); P461 r.33).
    ThreeOfAKind = 5,
    /// "Sequência" (r.17(f); P461 r.32).
    Straight = 6,
    /// "Cor" (r.17(e); P461 r.30).
    Flush = 7,
    /// "Fullen" (r.17(d); P461 r.31).
    FullHouse = 8,
    /// "Póquer" (r.17(c); P461 r.29).
    FourOfAKind = 9,
    /// "Sequência da cor" (r.17(b); P461 r.28).
    StraightFlush = 10,
    /// "Sequência máxima da cor" A-K-Q-J-10 of one suit (r.17(a); P461 r.27).
    RoyalFlush = 11,
}

impl Category {
    pub const ALL: [Category; 12] = [
        Category::HighCard,
        Category::OnePair,
        Category::TwoPair,
        Category::FigurasSimples,
        Category::FigurasComPares,
        Category::ThreeOfAKind,
        Category::Straight,
        Category::Flush,
        Category::FullHouse,
        Category::FourOfAKind,
        Category::StraightFlush,
        Category::RoyalFlush,
    ];

    /// English name (stable, used in notes).
    pub const fn name(self) -> &'static str {
        match self {
            Category::HighCard => "high card",
            Category::OnePair => "one pair",
            Category::TwoPair => "two pairs",
            Category::FigurasSimples => "figuras simples",
            Category::FigurasComPares => "figuras com pares",
            Category::ThreeOfAKind => "three of a kind",
            Category::Straight => "straight",
            Category::Flush => "flush",
            Category::FullHouse => "full house",
            Category::FourOfAKind => "four of a kind",
            Category::StraightFlush => "straight flush",
            Category::RoyalFlush => "royal flush",
        }
    }

    /// Snake-case id.
    pub const fn id(self) -> &'static str {
        match self {
            Category::HighCard => "high_card",
            Category::OnePair => "one_pair",
            Category::TwoPair => "two_pairs",
            Category::FigurasSimples => "figuras_simples",
            Category::FigurasComPares => "figuras_com_pares",
            Category::ThreeOfAKind => "three_of_a_kind",
            Category::Straight => "straight",
            Category::Flush => "flush",
            Category::FullHouse => "full_house",
            Category::FourOfAKind => "four_of_a_kind",
            Category::StraightFlush => "straight_flush",
            Category::RoyalFlush => "royal_flush",
        }
    }

    const fn from_id(v: u32) -> Category {
        match v {
            1 => Category::OnePair,
            2 => Category::TwoPair,
            3 => Category::FigurasSimples,
            4 => Category::FigurasComPares,
            5 => Category::ThreeOfAKind,
            6 => Category::Straight,
            7 => Category::Flush,
            8 => Category::FullHouse,
            9 => Category::FourOfAKind,
            10 => Category::StraightFlush,
            11 => Category::RoyalFlush,
            _ => Category::HighCard,
        }
    }
}

/// Which ranking a hand is valued under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ranking {
    /// r.17, r.18 (omaha, hold'em); Reg806 r.29–r.32 (online).
    Standard,
    /// r.103–r.105 (sintético); P461 r.24–r.37.
    Sintetico,
}

/// The standard categories, lowest first (P217/2007 T.II S.II SS.I r.17(a)–(j) read upwards;
/// Reg806/2015 r.29).
pub const STANDARD_ORDER: [Category; 10] = [
    Category::HighCard,
    Category::OnePair,
    Category::TwoPair,
    Category::ThreeOfAKind,
    Category::Straight,
    Category::Flush,
    Category::FullHouse,
    Category::FourOfAKind,
    Category::StraightFlush,
    Category::RoyalFlush,
];

/// The sintético categories, lowest first (P217/2007 T.II S.II SS.IV r.103(a)–(m) read upwards;
/// P461/2001 II r.24, r.25): flush above full house; figuras com pares and figuras simples above
/// two pairs.
pub const SINTETICO_ORDER: [Category; 12] = [
    Category::HighCard,
    Category::OnePair,
    Category::TwoPair,
    Category::FigurasSimples,
    Category::FigurasComPares,
    Category::ThreeOfAKind,
    Category::Straight,
    Category::FullHouse,
    Category::Flush,
    Category::FourOfAKind,
    Category::StraightFlush,
    Category::RoyalFlush,
];

const fn strength_table(order: &[Category]) -> [u8; 12] {
    let mut t = [0xFF; 12];
    let mut i = 0;
    while i < order.len() {
        t[order[i] as usize] = i as u8;
        i += 1;
    }
    t
}

const STANDARD_STRENGTH: [u8; 12] = strength_table(&STANDARD_ORDER);
const SINTETICO_STRENGTH: [u8; 12] = strength_table(&SINTETICO_ORDER);

/// The value of a five-card hand under one ranking: greater is better, equal is a tie.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HandValue(pub u32);

impl HandValue {
    fn new(ranking: Ranking, cat: Category, ranks: [u8; 5]) -> HandValue {
        let strength = match ranking {
            Ranking::Standard => STANDARD_STRENGTH[cat as usize],
            Ranking::Sintetico => SINTETICO_STRENGTH[cat as usize],
        } as u32;
        let mut v = (strength << 24) | ((cat as u32) << 20);
        let mut i = 0;
        while i < 5 {
            v |= ((ranks[i] & 0xF) as u32) << (16 - 4 * i);
            i += 1;
        }
        HandValue(v)
    }

    pub fn category(self) -> Category {
        Category::from_id((self.0 >> 20) & 0xF)
    }

    /// The tie-break ranks (2–14; 0 = unused), most significant first.
    pub fn ranks(self) -> [u8; 5] {
        let mut r = [0u8; 5];
        for (i, x) in r.iter_mut().enumerate() {
            *x = ((self.0 >> (16 - 4 * i)) & 0xF) as u8;
        }
        r
    }

    /// The value under the literal "top card only" reading of r.18(d) (flush) and r.17(j)
    /// (high card) (digest N11): the cards below the top one are ignored.
    pub fn top_card_only(self) -> HandValue {
        match self.category() {
            Category::Flush | Category::HighCard => HandValue(self.0 & 0xFFFF_0000),
            _ => self,
        }
    }

    /// The value if figuras simples were only "one pair" (the alternative to the digest's N12
    /// reading), for sintético values.
    pub fn figuras_simples_as_pair(self) -> HandValue {
        if self.category() == Category::FigurasSimples {
            let rest = self.0 & 0x000F_FFFF;
            HandValue(
                ((SINTETICO_STRENGTH[Category::OnePair as usize] as u32) << 24)
                    | ((Category::OnePair as u32) << 20)
                    | rest,
            )
        } else {
            self
        }
    }
}

/// A set of cards as a bit mask: bit `suit * 16 + (rank - 2)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CardSet(pub u64);

impl CardSet {
    pub const EMPTY: CardSet = CardSet(0);

    pub const fn bit(card: Card) -> u64 {
        1u64 << ((card.suit as u32) * 16 + (card.rank as u32 - 2))
    }

    pub fn from_cards(cards: &[Card]) -> CardSet {
        let mut m = 0;
        for &c in cards {
            m |= Self::bit(c);
        }
        CardSet(m)
    }

    pub const fn with(self, card: Card) -> CardSet {
        CardSet(self.0 | Self::bit(card))
    }

    pub const fn contains(self, card: Card) -> bool {
        self.0 & Self::bit(card) != 0
    }

    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The 13-bit rank mask of one suit lane (bit `rank - 2`).
    #[inline]
    const fn lane(self, suit: u32) -> u32 {
        ((self.0 >> (suit * 16)) & 0x1FFF) as u32
    }
}

/// Which deck a variant plays with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deck {
    /// 52 cards, A K Q J 10 9 … 2 in four suits (r.72; Reg806 r.4(b)).
    Standard52,
    /// 28 cards, A K Q J 10 9 8 in four suits (r.95; P461 r.4).
    Sintetico28,
}

impl Deck {
    /// True if `card` belongs to this deck.
    pub const fn contains(self, card: Card) -> bool {
        match self {
            Deck::Standard52 => true,
            Deck::Sintetico28 => card.rank as u8 >= 8,
        }
    }

    /// Every card of the deck, in `Card::index` order.
    pub fn cards(self) -> Vec<Card> {
        Card::deck().filter(|c| self.contains(*c)).collect()
    }
}

/// How a player's five cards are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Any five of the hole and common cards (hold'em: SS.III r.94; Reg806 r.26).
    BestOfAll,
    /// Exactly two hole cards and exactly three common cards (omaha SS.II r.73; sintético
    /// SS.IV r.97; P461 r.1).
    TwoPlusThree,
}

#[inline]
fn top_bit(mask: u32) -> u8 {
    // rank of the highest set bit; mask != 0
    (31 - mask.leading_zeros()) as u8 + 2
}

#[inline]
fn top_ranks(mut mask: u32, n: usize, out: &mut [u8; 5], from: usize) {
    let mut i = from;
    let end = (from + n).min(5);
    while i < end && mask != 0 {
        let r = top_bit(mask);
        out[i] = r;
        mask &= !(1 << (r - 2));
        i += 1;
    }
}

/// Highest straight in a 13-bit rank mask with the ace also low below the 2 (five high).
#[inline]
fn straight_top_standard(mask: u32) -> Option<u8> {
    let m = (mask << 1) | ((mask >> 12) & 1);
    let s = m & (m >> 1) & (m >> 2) & (m >> 3) & (m >> 4);
    if s == 0 {
        None
    } else {
        Some((31 - s.leading_zeros()) as u8 + 5)
    }
}

/// Highest straight in a 13-bit rank mask of the sintético deck, the ace also low below the 8
/// (A-8-9-10-J, jack high) (r.95; P461 r.4).
#[inline]
fn straight_top_sintetico(mask: u32) -> Option<u8> {
    let m = mask | (((mask >> 12) & 1) << 5);
    let s = m & (m >> 1) & (m >> 2) & (m >> 3) & (m >> 4);
    if s == 0 {
        None
    } else {
        Some((31 - s.leading_zeros()) as u8 + 6)
    }
}

/// Ranks J, Q, K, A: the "figuras" of r.105 / P461 r.34 (ás, rei, dama, valete).
const FIGURES: u32 = 0b1111 << 9;

/// Evaluate 5 to 7 cards under the standard ranking: the value of the best five-card hand among
/// them (r.17, r.18; Reg806 r.29–r.32). With fewer than five cards the missing ranks are 0.
pub fn eval_standard(set: CardSet) -> HandValue {
    let s0 = set.lane(0);
    let s1 = set.lane(1);
    let s2 = set.lane(2);
    let s3 = set.lane(3);
    let any = s0 | s1 | s2 | s3;
    let rk = Ranking::Standard;
    // Flush and straight flush (at most one suit can hold five of seven cards).
    let mut flush = 0u32;
    for s in [s0, s1, s2, s3] {
        if s.count_ones() >= 5 {
            if let Some(top) = straight_top_standard(s) {
                return if top == 14 {
                    HandValue::new(rk, Category::RoyalFlush, [14, 0, 0, 0, 0])
                } else {
                    HandValue::new(rk, Category::StraightFlush, [top, 0, 0, 0, 0])
                };
            }
            flush = s;
        }
    }
    let a2 = (s0 & s1) | (s0 & s2) | (s0 & s3) | (s1 & s2) | (s1 & s3) | (s2 & s3);
    let a3 = (s0 & s1 & s2) | (s0 & s1 & s3) | (s0 & s2 & s3) | (s1 & s2 & s3);
    let a4 = s0 & s1 & s2 & s3;
    let mut r = [0u8; 5];
    if a4 != 0 {
        let q = top_bit(a4);
        r[0] = q;
        top_ranks(any & !(1 << (q - 2)), 1, &mut r, 1);
        return HandValue::new(rk, Category::FourOfAKind, r);
    }
    if a3 != 0 {
        let t = top_bit(a3);
        let pairs = a2 & !(1 << (t - 2));
        if pairs != 0 {
            return HandValue::new(rk, Category::FullHouse, [t, top_bit(pairs), 0, 0, 0]);
        }
    }
    if flush != 0 {
        top_ranks(flush, 5, &mut r, 0);
        return HandValue::new(rk, Category::Flush, r);
    }
    if let Some(top) = straight_top_standard(any) {
        return HandValue::new(rk, Category::Straight, [top, 0, 0, 0, 0]);
    }
    if a3 != 0 {
        let t = top_bit(a3);
        r[0] = t;
        top_ranks(any & !(1 << (t - 2)), 2, &mut r, 1);
        return HandValue::new(rk, Category::ThreeOfAKind, r);
    }
    if a2 != 0 {
        let p1 = top_bit(a2);
        let rest = a2 & !(1 << (p1 - 2));
        if rest != 0 {
            let p2 = top_bit(rest);
            r[0] = p1;
            r[1] = p2;
            top_ranks(any & !(1 << (p1 - 2)) & !(1 << (p2 - 2)), 1, &mut r, 2);
            return HandValue::new(rk, Category::TwoPair, r);
        }
        r[0] = p1;
        top_ranks(any & !(1 << (p1 - 2)), 3, &mut r, 1);
        return HandValue::new(rk, Category::OnePair, r);
    }
    top_ranks(any, 5, &mut r, 0);
    HandValue::new(rk, Category::HighCard, r)
}

/// Evaluate exactly five cards under the sintético ranking (r.103–r.105; P461 r.24–r.37).
pub fn eval_sintetico5(set: CardSet) -> HandValue {
    let s0 = set.lane(0);
    let s1 = set.lane(1);
    let s2 = set.lane(2);
    let s3 = set.lane(3);
    let any = s0 | s1 | s2 | s3;
    let rk = Ranking::Sintetico;
    let flush = [s0, s1, s2, s3]
        .into_iter()
        .find(|s| s.count_ones() >= 5)
        .unwrap_or(0);
    let straight = if any.count_ones() >= 5 {
        straight_top_sintetico(any)
    } else {
        None
    };
    let mut r = [0u8; 5];
    if flush != 0
        && let Some(top) = straight_top_sintetico(flush)
    {
        return if top == 14 {
            HandValue::new(rk, Category::RoyalFlush, [14, 0, 0, 0, 0])
        } else {
            HandValue::new(rk, Category::StraightFlush, [top, 0, 0, 0, 0])
        };
    }
    let a2 = (s0 & s1) | (s0 & s2) | (s0 & s3) | (s1 & s2) | (s1 & s3) | (s2 & s3);
    let a3 = (s0 & s1 & s2) | (s0 & s1 & s3) | (s0 & s2 & s3) | (s1 & s2 & s3);
    let a4 = s0 & s1 & s2 & s3;
    if a4 != 0 {
        let q = top_bit(a4);
        r[0] = q;
        top_ranks(any & !(1 << (q - 2)), 1, &mut r, 1);
        return HandValue::new(rk, Category::FourOfAKind, r);
    }
    // r.103(d) before (e): the flush ranks above the full house.
    if flush != 0 {
        top_ranks(flush, 5, &mut r, 0);
        return HandValue::new(rk, Category::Flush, r);
    }
    if a3 != 0 {
        let t = top_bit(a3);
        let pairs = a2 & !(1 << (t - 2));
        if pairs != 0 {
            return HandValue::new(rk, Category::FullHouse, [t, top_bit(pairs), 0, 0, 0]);
        }
    }
    if let Some(top) = straight {
        return HandValue::new(rk, Category::Straight, [top, 0, 0, 0, 0]);
    }
    if a3 != 0 {
        let t = top_bit(a3);
        r[0] = t;
        top_ranks(any & !(1 << (t - 2)), 2, &mut r, 1);
        return HandValue::new(rk, Category::ThreeOfAKind, r);
    }
    let all_figures = any & !FIGURES == 0;
    if a2 != 0 {
        let p1 = top_bit(a2);
        let rest = a2 & !(1 << (p1 - 2));
        if rest != 0 {
            let p2 = top_bit(rest);
            r[0] = p1;
            r[1] = p2;
            top_ranks(any & !(1 << (p1 - 2)) & !(1 << (p2 - 2)), 1, &mut r, 2);
            // r.105(a): five figures forming two pairs.
            let cat = if all_figures {
                Category::FigurasComPares
            } else {
                Category::TwoPair
            };
            return HandValue::new(rk, cat, r);
        }
        r[0] = p1;
        top_ranks(any & !(1 << (p1 - 2)), 3, &mut r, 1);
        // r.105(b) read as N12: five figures with exactly one pair.
        let cat = if all_figures {
            Category::FigurasSimples
        } else {
            Category::OnePair
        };
        return HandValue::new(rk, cat, r);
    }
    top_ranks(any, 5, &mut r, 0);
    HandValue::new(rk, Category::HighCard, r)
}

/// Evaluate five cards under `ranking`.
pub fn eval5(ranking: Ranking, set: CardSet) -> HandValue {
    match ranking {
        Ranking::Standard => eval_standard(set),
        Ranking::Sintetico => eval_sintetico5(set),
    }
}

/// The best hand a player can make from `hole` and `board` under `selection` and `ranking`,
/// with the five cards used. `None` when the cards cannot form a five-card hand of the variant
/// (fewer than two hole or three common cards for [`Selection::TwoPlusThree`], fewer than five
/// cards in all for [`Selection::BestOfAll`]).
pub fn best_hand(
    ranking: Ranking,
    selection: Selection,
    hole: &[Card],
    board: &[Card],
) -> Option<HandValue> {
    match selection {
        Selection::BestOfAll => {
            if hole.len() + board.len() < 5 {
                return None;
            }
            if ranking == Ranking::Standard && hole.len() + board.len() <= 7 {
                let set = CardSet(CardSet::from_cards(hole).0 | CardSet::from_cards(board).0);
                return Some(eval_standard(set));
            }
            let all: Vec<Card> = hole.iter().chain(board.iter()).copied().collect();
            best_of_subsets(ranking, &all)
        }
        Selection::TwoPlusThree => {
            if hole.len() < 2 || board.len() < 3 {
                return None;
            }
            let mut best = HandValue(0);
            for i in 0..hole.len() {
                for j in i + 1..hole.len() {
                    let h = CardSet::bit(hole[i]) | CardSet::bit(hole[j]);
                    for a in 0..board.len() {
                        for b in a + 1..board.len() {
                            for c in b + 1..board.len() {
                                let set = CardSet(
                                    h | CardSet::bit(board[a])
                                        | CardSet::bit(board[b])
                                        | CardSet::bit(board[c]),
                                );
                                let v = eval5(ranking, set);
                                if v > best {
                                    best = v;
                                }
                            }
                        }
                    }
                }
            }
            Some(best)
        }
    }
}

/// Best five-card value over every five-card subset of `cards` (brute force).
pub fn best_of_subsets(ranking: Ranking, cards: &[Card]) -> Option<HandValue> {
    best_five(ranking, cards).map(|(v, _)| v)
}

/// Best five-card value and the five cards, over every five-card subset of `cards`.
pub fn best_five(ranking: Ranking, cards: &[Card]) -> Option<(HandValue, [Card; 5])> {
    let n = cards.len();
    if n < 5 {
        return None;
    }
    let mut best: Option<(HandValue, [Card; 5])> = None;
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    for e in d + 1..n {
                        let five = [cards[a], cards[b], cards[c], cards[d], cards[e]];
                        let v = eval5(ranking, CardSet::from_cards(&five));
                        if best.is_none_or(|(bv, _)| v > bv) {
                            best = Some((v, five));
                        }
                    }
                }
            }
        }
    }
    best
}

/// The five cards of the best hand under `selection` (for explanations; slow path).
pub fn best_five_cards(
    ranking: Ranking,
    selection: Selection,
    hole: &[Card],
    board: &[Card],
) -> Option<(HandValue, [Card; 5])> {
    match selection {
        Selection::BestOfAll => {
            let all: Vec<Card> = hole.iter().chain(board.iter()).copied().collect();
            best_five(ranking, &all)
        }
        Selection::TwoPlusThree => {
            let mut best: Option<(HandValue, [Card; 5])> = None;
            for i in 0..hole.len() {
                for j in i + 1..hole.len() {
                    for a in 0..board.len() {
                        for b in a + 1..board.len() {
                            for c in b + 1..board.len() {
                                let five = [hole[i], hole[j], board[a], board[b], board[c]];
                                let v = eval5(ranking, CardSet::from_cards(&five));
                                if best.is_none_or(|(bv, _)| v > bv) {
                                    best = Some((v, five));
                                }
                            }
                        }
                    }
                }
            }
            best
        }
    }
}

/// Human-readable description of a value, e.g. "full house, 7s over Ks".
pub fn describe(v: HandValue) -> String {
    let r = v.ranks();
    let n = |x: u8| Rank::from_order(x).map(|r| r.symbol()).unwrap_or('?');
    let cat = v.category();
    let used: Vec<String> = r
        .iter()
        .filter(|&&x| x != 0)
        .map(|&x| n(x).to_string())
        .collect();
    format!("{} ({})", cat.name(), used.join(" "))
}

/// Short text of five cards, e.g. "AS KS QS JS TS".
pub fn cards_text(cards: &[Card]) -> String {
    cards
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A card from rank order and suit (helper for tests and tables).
pub fn card(rank: u8, suit: Suit) -> Option<Card> {
    Rank::from_order(rank).map(|r| Card::new(r, suit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cs(s: &str) -> Vec<Card> {
        s.split_whitespace().map(|c| c.parse().unwrap()).collect()
    }

    fn v(s: &str) -> HandValue {
        eval_standard(CardSet::from_cards(&cs(s)))
    }

    fn vs(s: &str) -> HandValue {
        eval_sintetico5(CardSet::from_cards(&cs(s)))
    }

    /// r.17(a)–(j): one hand of each category, in order.
    #[test]
    fn r17_category_order() {
        let hands = [
            "2S 5H 7D 9C JS",
            "2S 2H 7D 9C JS",
            "2S 2H 7D 7C JS",
            "2S 2H 2D 9C JS",
            "5S 6H 7D 8C 9S",
            "2S 5S 7S 9S JS",
            "2S 2H 2D 9C 9S",
            "2S 2H 2D 2C 9S",
            "5S 6S 7S 8S 9S",
            "TS JS QS KS AS",
        ];
        for (i, h) in hands.iter().enumerate() {
            assert_eq!(v(h).category(), STANDARD_ORDER[i], "{h}");
            if i > 0 {
                assert!(v(h) > v(hands[i - 1]), "{h}");
            }
        }
    }

    /// r.72, r.18(c): the wheel is five high and loses to 6-high.
    #[test]
    fn r72_ace_low_straight() {
        assert_eq!(v("AS 2H 3D 4C 5S").category(), Category::Straight);
        assert_eq!(v("AS 2H 3D 4C 5S").ranks()[0], 5);
        assert!(v("2S 3H 4D 5C 6S") > v("AS 2H 3D 4C 5S"));
        assert_eq!(v("AS 2S 3S 4S 5S").category(), Category::StraightFlush);
        assert_eq!(v("QS KH AD 2C 3S").category(), Category::HighCard);
    }

    /// r.18(a)–(g): tie-breaks with kickers; suits never break ties.
    #[test]
    fn r18_tie_breaks() {
        assert!(v("9S 9H 9D 9C AS") > v("9S 9H 9D 9C KS"));
        assert!(v("TS TH TD TC 2S") > v("9S 9H 9D 9C AS"));
        assert!(v("9S 9H 9D 3C 3S") > v("8S 8H 8D AC AS"));
        assert!(v("9S 9H 9D AC AS") > v("9S 9H 9D KC KS"));
        assert!(v("AS KS 9S 5S 3S") > v("AS QS JS TS 8S"));
        assert!(v("AS KS 9S 5S 3S") > v("AH KH 9H 5H 2H"));
        assert!(v("7S 7H 7D AC 3S") > v("7S 7H 7D KC QS"));
        assert!(v("7S 7H 7D AC 4S") > v("7S 7H 7D AC 3S"));
        assert!(v("KS KH 3D 3C 2S") > v("QS QH JD JC AS"));
        assert!(v("KS KH 4D 4C 2S") > v("KS KH 3D 3C AS"));
        assert!(v("KS KH 4D 4C 5S") > v("KS KH 4D 4C 2S"));
        assert!(v("KS KH AD 4C 3S") > v("KS KH QD JC TS"));
        assert!(v("KS KH AD 4C 3S") > v("KS KH AD 4C 2S"));
        assert!(v("AS QH 9D 5C 3S") > v("AS QH 9D 5C 2S"));
        assert_eq!(v("AS KH 9D 5C 3S"), v("AH KD 9C 5S 3H"));
    }

    /// r.94: hold'em takes the best five of seven, the board alone allowed.
    #[test]
    fn r94_best_five_of_seven() {
        let h = best_hand(
            Ranking::Standard,
            Selection::BestOfAll,
            &cs("2C 3D"),
            &cs("TS JS QS KS AS"),
        )
        .unwrap();
        assert_eq!(h.category(), Category::RoyalFlush);
        // two pairs out of three pairs keeps the best kicker
        let h = v("KS KH 9D 9C 5S 5H AD");
        assert_eq!(h.category(), Category::TwoPair);
        assert_eq!(h.ranks(), [13, 9, 14, 0, 0]);
        // two trips make a full house
        let h = v("KS KH KD 9C 9S 9H AD");
        assert_eq!(h.category(), Category::FullHouse);
        assert_eq!(h.ranks()[..2], [13, 9]);
    }

    /// E3 — r.73: omaha uses exactly two hole cards and three common cards.
    #[test]
    fn e3_omaha_hand_reading() {
        let board = cs("KS QS 7S 2S 7D");
        let x = best_hand(
            Ranking::Standard,
            Selection::TwoPlusThree,
            &cs("AS 9H 9C 3D"),
            &board,
        )
        .unwrap();
        let y = best_hand(
            Ranking::Standard,
            Selection::TwoPlusThree,
            &cs("JS TS 5H 4H"),
            &board,
        )
        .unwrap();
        assert_eq!(x.category(), Category::TwoPair);
        assert_eq!(x.ranks(), [9, 7, 13, 0, 0]);
        assert_eq!(y.category(), Category::Flush);
        assert_eq!(y.ranks()[0], 13);
        assert!(y > x);
        // a hold'em-style reading would give X an ace-high flush
        let wrong = best_hand(
            Ranking::Standard,
            Selection::BestOfAll,
            &cs("AS 9H 9C 3D"),
            &board,
        )
        .unwrap();
        assert_eq!(wrong.category(), Category::Flush);
    }

    /// r.95, r.103: sintético ranking, the low straight A-8-9-10-J and the flush over the full.
    #[test]
    fn r95_r103_sintetico_order() {
        assert_eq!(vs("AS 8H 9D TC JS").category(), Category::Straight);
        assert_eq!(vs("AS 8H 9D TC JS").ranks()[0], 11);
        assert!(vs("8S 9H TD JC QS") > vs("AS 8H 9D TC JS"));
        assert_eq!(vs("AS 8S 9S TS JS").category(), Category::StraightFlush);
        assert_eq!(vs("TS JS QS KS AS").category(), Category::RoyalFlush);
        assert!(vs("AS KS 9S 8S JS") > vs("AS AH AD KC KS"));
        assert!(vs("8S 8H 8D 9C 9S") > vs("AS KH QD JC TS"));
        // r.105(a) figuras com pares above (b) figuras simples above two pairs
        assert_eq!(vs("KS KH QD QC AS").category(), Category::FigurasComPares);
        assert_eq!(vs("KS KH QD QC 9S").category(), Category::TwoPair);
        assert_eq!(vs("AS AH KD QC JS").category(), Category::FigurasSimples);
        assert!(vs("JS JH QD QC KS") > vs("AS AH KD QC JS"));
        assert!(vs("JS JH KD QC AS") > vs("AS AH KD KC TS"));
        assert!(vs("AS AH KD KC TS") > vs("AS AH KD QC TS"));
        assert!(vs("AS AH KD QC TS") > vs("AS KH QD JC 9S"));
        assert!(vs("AS AH AD QC JS") > vs("KS KH QD QC AS"));
    }

    /// E4 — r.95, r.97, r.103.
    #[test]
    fn e4_sintetico_ranking() {
        let board = cs("AH KH 9H 9C 8D");
        let sel = |h: &str| {
            best_hand(Ranking::Sintetico, Selection::TwoPlusThree, &cs(h), &board).unwrap()
        };
        let x = sel("QH JH");
        let y = sel("9D 8C");
        let z = sel("TS JC");
        assert_eq!(x.category(), Category::Flush);
        assert_eq!(y.category(), Category::FullHouse);
        assert_eq!(z.category(), Category::Straight);
        assert!(x > y && y > z);
    }

    #[test]
    fn n11_and_n12_alternatives() {
        let a = v("AS KS 9S 5S 3S");
        let b = v("AH QH 9H 5H 3H");
        assert!(a > b);
        assert_eq!(a.top_card_only(), b.top_card_only());
        let fs = vs("AS AH KD QC JS");
        let tp = vs("9S 9H 8D 8C AS");
        assert!(fs > tp);
        assert!(fs.figuras_simples_as_pair() < tp);
    }
}
