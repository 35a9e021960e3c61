//! Ponto e banca and ponto e banca/Macau (P217/2007 T.I C.III S.III, S.IV), played by the rules.
//!
//! * **The shoe** (r.4-r.7, r.13 ¶2): 8 decks on a double table, 6 on a simple one (or the
//!   table's `decks`). A new shoe is shuffled and cut, its first 8 cards are burned; the warning
//!   card sits 12 cards from the end; when it comes out the coup is the last of the shoe and the
//!   next coup starts with a reshuffle. Every later coup burns one card after "nada mais". With a
//!   continuous shuffler (r.5): a shuffle when the table opens, no cut, no 8-card burn, no
//!   warning card, one card burned before every coup (r.13 ¶2, digest note 10) and the cards back
//!   to the shuffler after the coup.
//! * **Bets** (r.11, r.12, r.21; S.IV r.11, r.21-r.25): 3 to 9 seated players (player `p<seat>`)
//!   on ponto or banca, now and then a tie or a pair (where offered), in whole chips between the
//!   chance's minimum and maximum; banca stakes in multiples of 20 cents so that every commission
//!   is a whole number of cents. Plain tables: up to three standing bettors (`w<n>`), each
//!   complementing a seated ponto or banca bet on the same chance, the seat's total within the
//!   maximum, never more than the table's standing capacity. Macau: no maximum per bet, standing
//!   bettors bet freely, some players on both ponto and banca with a difference of at least the
//!   table minimum, and every bet kept within M (|Σponto − Σbanca|), 10% of M (ties) and 8% of
//!   M (each pair). Now and then a bet is changed, or a tie or pair withdrawn, before the call.
//! * **The coup** (r.9, r.13): P, B, P, B, then the ponto's third card and the banca's exactly
//!   by the tableau; naturals stop the drawing.
//!
//! Every bet is checked, as placed, against the same limits the engine applies
//! (`limit_findings`); an honest coup adjudicates with no finding at all.

use rules_core::{
    Bet, Card, Cents, EventKind, Id, Options, Recipient, ReportedNet, Round, SimError, SimRng,
    TableConfig, honest_settlement,
};

use super::{Ctx, Deck, Mistake, ShoePos, Step, ladder, not_applicable, plan, wrong_state};
use crate::BaccaratState;
use crate::cards::{card_value, is_natural, is_pair, score};
use crate::commission::Commission;
use crate::punto_banco::{Chance, CoupScores, PbConfig, Variant, due_net};
use crate::tableau::{pb_banca_draws, pb_ponto_draws};

/// The warning card's distance from the end of the shoe (r.6: "cerca de 12 cartas").
const WARNING_FROM_END: u32 = 12;
/// Banca stakes are whole multiples of this (5% of it is a whole cent, and so is 50%).
const STEP: Cents = 20;

/// Who bets: a seated player (by seat) or the n-th standing bettor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bettor {
    Seated(u8),
    Standing(u8),
}

impl Bettor {
    fn id(self) -> Id {
        match self {
            Bettor::Seated(s) => format!("p{s}"),
            Bettor::Standing(n) => format!("w{n}"),
        }
        .into()
    }
}

/// A bet as planned. Its id is `b<position + 1>`: bets are numbered in the order placed.
#[derive(Clone, Copy, Debug)]
struct Planned {
    chance: Chance,
    /// The seat, or for a standing bettor the seat he stands by (r.12).
    seat: u8,
    who: Bettor,
    /// The seated bet a standing bet complements (its position).
    on_bet: Option<usize>,
    amount: Cents,
    withdrawn: bool,
}

fn bet_id(position: usize) -> Id {
    format!("b{}", position + 1).into()
}

impl Planned {
    fn bet(&self, position: usize) -> Bet {
        let mut b = Bet::new(&bet_id(position), self.chance.as_str(), self.amount)
            .seat(self.seat)
            .player(&self.who.id());
        if matches!(self.who, Bettor::Standing(_)) {
            b = b.attr("standing", "true");
        }
        if let Some(on) = self.on_bet {
            b = b.on_bet(&bet_id(on));
        }
        b
    }

    fn standing(&self) -> bool {
        matches!(self.who, Bettor::Standing(_))
    }
}

/// The limit codes [`limit_findings`] knows, one bit each.
const LIMIT_CODES: [&str; 11] = [
    "PB_PAIR_NOT_OFFERED",
    "PB_BET_BELOW_MIN",
    "PB_BET_ABOVE_MAX",
    "PB_COMMISSION_ROUNDING",
    "PB_STANDING_BET_AGAINST_SEAT",
    "PB_STANDING_COMPLEMENT_EXCEEDS_MAX",
    "PB_STANDING_OVER_CAPACITY",
    "PB_MACAU_BOTH_SIDES_DIFF_BELOW_MIN",
    "PB_MACAU_EXPOSURE_EXCEEDED",
    "PB_MACAU_TIE_TOTAL_EXCEEDED",
    "PB_MACAU_PAIR_TOTAL_EXCEEDED",
];

fn code_bit(code: &str) -> u16 {
    LIMIT_CODES
        .iter()
        .position(|c| *c == code)
        .map_or(0, |i| 1 << i)
}

/// The codes the engine's limit checks (P217/2007 T.I C.III S.III r.11, r.12, r.21; S.IV r.11,
/// r.12, r.22-r.25) would give `bets`, as bits of [`LIMIT_CODES`]: what the simulator keeps at
/// zero, or at the one breach a mistake asks for. Allocation-free: it runs at every bet placed.
fn limit_findings(cfg: &PbConfig, capacity: Option<u32>, bets: &[Planned]) -> u16 {
    let l = &cfg.limits;
    let mut out = 0u16;
    let mut add = |c: &str| out |= code_bit(c);
    let live = || bets.iter().filter(|b| !b.withdrawn);
    let mut sums = [0i128; 5];
    let mut standing = 0u64;
    // Per bettor (seats up to 48, standing bettors up to 15): ponto and banca stakes.
    let mut sides: [(i128, i128); 64] = [(0, 0); 64];
    for b in live() {
        let i = b.chance as usize;
        sums[i] += i128::from(b.amount);
        let slot = match b.who {
            Bettor::Seated(s) => usize::from(s.min(48)),
            Bettor::Standing(n) => 48 + usize::from(n.min(15)),
        };
        match b.chance {
            Chance::Ponto => sides[slot].0 += i128::from(b.amount),
            Chance::Banca => sides[slot].1 += i128::from(b.amount),
            _ => {}
        }
        if b.chance.is_pair() && !cfg.pairs_offered {
            add("PB_PAIR_NOT_OFFERED");
        }
        if l.min[i].is_some_and(|m| b.amount < m) {
            add("PB_BET_BELOW_MIN");
        }
        if cfg.variant == Variant::Plain && l.max[i].is_some_and(|m| b.amount > m) {
            add("PB_BET_ABOVE_MAX");
        }
        if b.chance == Chance::Banca && cfg.commission != Commission::None && b.amount % STEP != 0 {
            add("PB_COMMISSION_ROUNDING");
        }
        if let Bettor::Standing(n) = b.who {
            standing |= 1 << n.min(63);
        }
        if cfg.variant == Variant::Plain && b.standing() {
            // r.12: never against the adjacent seat, and within the maximum with it.
            let opposite = match b.chance {
                Chance::Ponto => Some(Chance::Banca),
                Chance::Banca => Some(Chance::Ponto),
                _ => None,
            };
            if let Some(opp) = opposite {
                let against = match b.on_bet {
                    Some(on) => bets
                        .get(on)
                        .is_some_and(|o| !o.withdrawn && o.chance == opp),
                    None => live().any(|o| !o.standing() && o.seat == b.seat && o.chance == opp),
                };
                if against {
                    add("PB_STANDING_BET_AGAINST_SEAT");
                }
            }
            if let Some(max) = l.max[i] {
                let total: Cents = live()
                    .filter(|o| o.seat == b.seat && o.chance == b.chance)
                    .map(|o| o.amount)
                    .sum();
                if total > max {
                    add("PB_STANDING_COMPLEMENT_EXCEEDS_MAX");
                }
            }
        }
    }
    if capacity.is_some_and(|c| standing.count_ones() > c) {
        add("PB_STANDING_OVER_CAPACITY");
    }
    if cfg.variant == Variant::Macau {
        // S.IV r.11: one player on both sides keeps a difference of at least the minimum.
        if let Some(min) = l.table_min
            && sides
                .iter()
                .any(|(p, q)| *p > 0 && *q > 0 && (p - q).abs() < i128::from(min))
        {
            add("PB_MACAU_BOTH_SIDES_DIFF_BELOW_MIN");
        }
        if let Some(m) = l.max_exposure {
            let m = i128::from(m);
            if (sums[Chance::Ponto as usize] - sums[Chance::Banca as usize]).abs() > m {
                add("PB_MACAU_EXPOSURE_EXCEEDED");
            }
            if sums[Chance::Tie as usize] * 100 > m * 10 {
                add("PB_MACAU_TIE_TOTAL_EXCEEDED");
            }
            for c in [Chance::PairPonto, Chance::PairBanca] {
                if sums[c as usize] * 100 > m * 8 {
                    add("PB_MACAU_PAIR_TOTAL_EXCEEDED");
                }
            }
        }
    }
    out
}

/// The bets of one coup, placed one by one, each kept only if the limits still hold.
struct Book<'c> {
    cfg: &'c PbConfig,
    capacity: Option<u32>,
    bets: Vec<Planned>,
    /// Default chip for tables without a minimum.
    unit: Cents,
}

impl Book<'_> {
    fn min(&self, c: Chance) -> Cents {
        self.cfg.limits.min[c as usize].unwrap_or(self.unit).max(1)
    }

    /// The most a single bet on `c` may be (Macau has no maximum: players keep to a few
    /// hundred minimums, the exposure caps do the rest).
    fn max(&self, c: Chance) -> Cents {
        match self.cfg.variant {
            Variant::Plain => self.cfg.limits.max[c as usize].unwrap_or(self.min(c) * 70),
            Variant::Macau => self.min(c) * 200,
        }
    }

    /// A stake on `c` of about `want`, in whole steps, within the chance's limits.
    fn fit(&self, c: Chance, want: Cents, cap: Cents) -> Option<Cents> {
        let min = self.min(c);
        let lo = (min + STEP - 1) / STEP * STEP;
        let hi = self.max(c).min(cap) / STEP * STEP;
        if lo > hi {
            return None;
        }
        Some(((want + STEP - 1) / STEP * STEP).clamp(lo, hi))
    }

    /// A stake a player would put on `c`.
    fn amount(&self, rng: &mut SimRng, c: Chance) -> Option<Cents> {
        let want = ladder(rng, self.min(c));
        self.fit(c, want, Cents::MAX)
    }

    fn findings(&self) -> u16 {
        limit_findings(self.cfg, self.capacity, &self.bets)
    }

    /// Place a bet if the limits still hold with it; its position.
    fn place(
        &mut self,
        chance: Chance,
        seat: u8,
        who: Bettor,
        on_bet: Option<usize>,
        amount: Cents,
    ) -> Option<usize> {
        if chance.is_pair() && !self.cfg.pairs_offered {
            return None;
        }
        self.bets.push(Planned {
            chance,
            seat,
            who,
            on_bet,
            amount,
            withdrawn: false,
        });
        if self.findings() == 0 {
            Some(self.bets.len() - 1)
        } else {
            self.bets.pop();
            None
        }
    }

    fn has_live(&self, c: Chance) -> bool {
        self.bets.iter().any(|b| !b.withdrawn && b.chance == c)
    }

    /// Make sure some bet on `c` is placed (a mistake needs it): a seated player adds one.
    fn ensure(&mut self, rng: &mut SimRng, c: Chance, seated: &[u8]) -> bool {
        if self.has_live(c) {
            return true;
        }
        let mut order = seated.to_vec();
        rng.shuffle(&mut order);
        for seat in order {
            let min = self.min(c);
            for want in [min, min * 2, min * 5, min * 11] {
                let Some(a) = self.fit(c, want, Cents::MAX) else {
                    continue;
                };
                if self.place(c, seat, Bettor::Seated(seat), None, a).is_some() {
                    return true;
                }
            }
        }
        false
    }
}

/// Who wins a coup: 1 ponto, -1 banca, 0 tie.
fn winner(ponto: u8, banca: u8) -> i8 {
    match ponto.cmp(&banca) {
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
    }
}

/// A coup dealt by the tableau (r.13): the ponto's and the banca's cards.
fn deal(deck: &mut Deck, rng: &mut SimRng) -> (Vec<Card>, Vec<Card>) {
    let p1 = deck.draw(rng);
    let b1 = deck.draw(rng);
    let p2 = deck.draw(rng);
    let b2 = deck.draw(rng);
    let mut p = vec![p1, p2];
    let mut b = vec![b1, b2];
    let (ps, bs) = (score(&p), score(&b));
    if is_natural(ps) || is_natural(bs) {
        return (p, b);
    }
    let mut third = None;
    if pb_ponto_draws(ps) {
        let c = deck.draw(rng);
        third = Some(card_value(c));
        p.push(c);
    }
    if pb_banca_draws(bs, third) {
        b.push(deck.draw(rng));
    }
    (p, b)
}

/// The coup the tableau (r.13) deals from cards of the values `seq` lists, in dealing order (P,
/// B, P, B, then the third cards): the ponto's and the banca's values, `None` while it needs
/// another card. Values left over after the coup are not part of it.
fn tableau_values(seq: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let total = |v: &[u8]| v.iter().sum::<u8>() % 10;
    if seq.len() < 4 {
        return None;
    }
    let mut p = vec![seq[0], seq[2]];
    let mut b = vec![seq[1], seq[3]];
    let (ps, bs) = (total(&p), total(&b));
    if is_natural(ps) || is_natural(bs) {
        return Some((p, b));
    }
    let mut third = None;
    if pb_ponto_draws(ps) {
        let v = *seq.get(4)?;
        third = Some(v);
        p.push(v);
    }
    if pb_banca_draws(bs, third) {
        b.push(*seq.get(p.len() + 2)?);
    }
    Some((p, b))
}

/// A [`plan`] step.
type Want = Box<dyn Fn(&[u8]) -> Step>;

/// The coup a mistake needs, as a [`plan`] step over the values dealt (the coup, then for
/// `third_card_against_tableau` the banca's forbidden card); `None` when any coup will do.
fn wanted(m: Mistake, commission: Commission) -> Option<Want> {
    let total = |v: &[u8]| v.iter().sum::<u8>() % 10;
    // A complete coup whose final scores satisfy `f`.
    let coup = move |f: fn(u8, u8, Commission) -> bool| -> Want {
        Box::new(move |seq: &[u8]| match tableau_values(seq) {
            None => Step::More,
            Some((p, b)) => {
                Step::Done(seq.len() == p.len() + b.len() && f(total(&p), total(&b), commission))
            }
        })
    };
    match m {
        Mistake::TiePaid9To1 => Some(coup(|p, b, _| p == b)),
        Mistake::BancaCommissionWrong => Some(coup(|p, b, c| b > p && c.rate(b).is_some())),
        Mistake::CommissionOnPonto => Some(coup(|p, b, _| p > b)),
        Mistake::ThirdCardAgainstTableau => Some(Box::new(move |seq: &[u8]| {
            // The banca stood (or a natural ended the coup) and one more card to her would turn
            // the result.
            let Some((p, b)) = tableau_values(seq) else {
                return Step::More;
            };
            let n = p.len() + b.len();
            if b.len() == 3 {
                return Step::Done(false);
            }
            let Some(&x) = seq.get(n) else {
                return Step::More;
            };
            let (ps, bs) = (total(&p), total(&b));
            Step::Done(seq.len() == n + 1 && winner(ps, (bs + x) % 10) != winner(ps, bs))
        })),
        _ => None,
    }
}

/// The cards of a coup `want` accepts, in dealing order: dealt at random from the shoe until one
/// is (a few thousand tries), else found by a complete search of the values left ([`plan`]).
/// `None` only if the cards left offer no such coup.
fn steered(deck: &mut Deck, rng: &mut SimRng, want: &dyn Fn(&[u8]) -> Step) -> Option<Vec<Card>> {
    let mark = deck.mark();
    for _ in 0..5_000 {
        let mut cards: Vec<Card> = Vec::with_capacity(7);
        let mut values: Vec<u8> = Vec::with_capacity(7);
        loop {
            match want(&values) {
                Step::Done(true) => return Some(cards),
                Step::Done(false) => break,
                Step::More => {
                    let c = deck.draw(rng);
                    values.push(card_value(c));
                    cards.push(c);
                }
            }
        }
        deck.rewind(mark);
    }
    let values = plan(&deck.values_left(), rng.below(10) as u8, want)?;
    deck.draw_values(rng, &values)
}

/// Cards in dealing order split as the tableau deals them: the ponto's, the banca's, and any
/// card after the coup.
fn split(cards: &[Card]) -> (Vec<Card>, Vec<Card>, Option<Card>) {
    let values: Vec<u8> = cards.iter().map(|c| card_value(*c)).collect();
    let (p, b) = tableau_values(&values).unwrap_or_default();
    let mut ponto = vec![cards[0], cards[2]];
    let mut banca = vec![cards[1], cards[3]];
    if p.len() == 3 {
        ponto.push(cards[4]);
    }
    if b.len() == 3 {
        banca.push(cards[ponto.len() + 2]);
    }
    let extra = cards.get(p.len() + b.len()).copied();
    (ponto, banca, extra)
}

/// Whether the cards left in the shoe can give the coup mistake `m` needs.
fn offers(deck: &Deck, m: Option<Mistake>, commission: Commission) -> bool {
    m.and_then(|m| wanted(m, commission))
        .is_none_or(|w| plan(&deck.values_left(), 0, w).is_some())
}

/// Play one coup. See the module docs.
pub(crate) fn simulate(
    table: &TableConfig,
    cfg: &PbConfig,
    state: &BaccaratState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    m: Option<Mistake>,
) -> Result<Round, SimError> {
    if state.hand.banker.is_some() || state.hand.census_known {
        return Err(wrong_state(
            cfg.variant.game(),
            "the state holds a chemin de fer hand",
        ));
    }
    let double = table.bool_setting("double_table", false).unwrap_or(false);
    let decks = table
        .decks
        .unwrap_or(if double { 8 } else { 6 })
        .clamp(1, 8);
    let seats = table.seats.unwrap_or(if double { 14 } else { 9 }).max(3);
    let csm = cfg.continuous_shuffler;
    let total = u32::from(decks) * 52;
    let shoe = state.shoe;
    let reshuffle = !shoe.known
        || shoe.coups == 0
        || (!csm
            && ((shoe.warning_out && shoe.coups_since_warning >= 1)
                || total.saturating_sub(shoe.cards_out) < 7));
    let mut deck = if reshuffle || csm {
        Deck::new(decks)
    } else {
        Deck::after(decks, &shoe.seen)
    };
    // Late in a shoe the cards left may not give the coup a mistake needs: the coup then opens a
    // new shoe, as when the decks are replaced before the warning card (r.3, r.4, r.6; see the
    // module docs of `sim`).
    let reshuffle = reshuffle || !offers(&deck, m, cfg.commission);
    if reshuffle {
        deck = Deck::new(decks);
    }
    let mut pos = ShoePos {
        out: if reshuffle { 0 } else { shoe.cards_out },
        warning_at: (!csm).then_some(total - WARNING_FROM_END),
        warning_out: !reshuffle && shoe.warning_out,
    };
    let mut ctx = Ctx::new(rng, start_ms);
    let skip_burn = m == Some(Mistake::BurnMissing);

    // --- A new shoe (r.4, r.6; r.5 with a continuous shuffler).
    if reshuffle {
        let dealer: Id = format!("dealer-{}", 1 + ctx.rng.below(4)).into();
        ctx.push(EventKind::Role {
            role: "dealer".into(),
            seat: None,
            player: Some(dealer),
        });
        ctx.procedure("shuffle");
        ctx.wait(60_000, 150_000);
        if !csm {
            ctx.procedure("cut");
            ctx.wait(5_000, 15_000);
            // r.6: the first 8 cards to the discard holder.
            for _ in 0..(if skip_burn { 7 } else { 8 }) {
                let c = deck.draw(ctx.rng);
                ctx.card(&mut pos, Recipient::Burn, c, false);
            }
        }
    }

    // --- Bets (r.11, r.12, r.21; S.IV r.11, r.21-r.25).
    let n_seated = ctx.rng.range(3, u64::from(seats.min(9))) as usize;
    let mut all: Vec<u8> = (1..=seats).collect();
    ctx.rng.shuffle(&mut all);
    let mut seated: Vec<u8> = all[..n_seated].to_vec();
    seated.sort_unstable();
    let mut book = Book {
        cfg,
        capacity: cfg.limits.standing_capacity,
        bets: Vec::with_capacity(24),
        unit: 1_000,
    };
    for &seat in &seated {
        let me = Bettor::Seated(seat);
        let r = ctx.rng.below(100);
        if r >= 8 {
            let both = cfg.variant == Variant::Macau && r < 14;
            let side = if ctx.rng.chance(1, 2) {
                Chance::Banca
            } else {
                Chance::Ponto
            };
            if let Some(a) = book.amount(ctx.rng, side) {
                book.place(side, seat, me, None, a);
                if both {
                    // S.IV r.11: the other side, at least the table minimum apart.
                    let other = if side == Chance::Banca {
                        Chance::Ponto
                    } else {
                        Chance::Banca
                    };
                    let gap = book.min(other).max(cfg.limits.table_min.unwrap_or(0));
                    let want = if ctx.rng.chance(1, 2) && a - gap >= book.min(other) {
                        a - gap - ladder(ctx.rng, STEP * 5)
                    } else {
                        a + gap + ladder(ctx.rng, STEP * 5)
                    };
                    if let Some(b) = book.fit(other, want, Cents::MAX) {
                        book.place(other, seat, me, None, b);
                    }
                }
            }
        }
        if ctx.rng.chance(12, 100)
            && let Some(a) = book.amount(ctx.rng, Chance::Tie)
        {
            book.place(Chance::Tie, seat, me, None, a);
        }
        for pair in [Chance::PairPonto, Chance::PairBanca] {
            if cfg.pairs_offered
                && ctx.rng.chance(8, 100)
                && let Some(a) = book.amount(ctx.rng, pair)
            {
                book.place(pair, seat, me, None, a);
            }
        }
    }
    // Standing bettors (r.12): on a plain table they complement a seated bet on its chance.
    let mut standing_no = 0;
    for _ in 0..ctx.rng.below(4) {
        standing_no += 1;
        let me = Bettor::Standing(standing_no);
        match cfg.variant {
            Variant::Plain => {
                let mains: Vec<(usize, Chance, u8)> = book
                    .bets
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| {
                        !b.standing() && matches!(b.chance, Chance::Ponto | Chance::Banca)
                    })
                    .map(|(k, b)| (k, b.chance, b.seat))
                    .collect();
                let Some((on, chance, seat)) = ctx.rng.pick(&mains).copied() else {
                    break;
                };
                let used: Cents = book
                    .bets
                    .iter()
                    .filter(|b| !b.withdrawn && b.seat == seat && b.chance == chance)
                    .map(|b| b.amount)
                    .sum();
                let room = book.max(chance) - used;
                let want = ladder(ctx.rng, book.min(chance));
                if let Some(a) = book.fit(chance, want, room) {
                    book.place(chance, seat, me, Some(on), a);
                }
            }
            Variant::Macau => {
                let seat = seated[ctx.rng.below(seated.len() as u64) as usize];
                let chance = match ctx.rng.below(10) {
                    0 => Chance::Tie,
                    1 if cfg.pairs_offered => Chance::PairBanca,
                    2 if cfg.pairs_offered => Chance::PairPonto,
                    3..=5 => Chance::Ponto,
                    _ => Chance::Banca,
                };
                if let Some(a) = book.amount(ctx.rng, chance) {
                    book.place(chance, seat, me, None, a);
                }
            }
        }
    }
    // What the mistake needs on the table.
    let need = match m {
        Some(Mistake::BancaCommissionWrong) => Some(Chance::Banca),
        Some(Mistake::CommissionOnPonto) => Some(Chance::Ponto),
        Some(Mistake::TiePaid9To1) => Some(Chance::Tie),
        _ => None,
    };
    if !book.has_live(Chance::Ponto) && !book.has_live(Chance::Banca) {
        let side = if ctx.rng.chance(1, 2) {
            Chance::Banca
        } else {
            Chance::Ponto
        };
        if !book.ensure(ctx.rng, side, &seated) && m == Some(Mistake::ThirdCardAgainstTableau) {
            return Err(not_applicable(
                Mistake::ThirdCardAgainstTableau,
                "no ponto or banca bet fits the table's limits",
            ));
        }
    }
    if let Some(c) = need
        && !book.ensure(ctx.rng, c, &seated)
    {
        return Err(not_applicable(
            m.unwrap_or(Mistake::TiePaid9To1),
            format!("no {} bet fits the table's limits", c.as_str()),
        ));
    }
    if m == Some(Mistake::BancaCommissionWrong) && cfg.commission == Commission::None {
        return Err(not_applicable(
            Mistake::BancaCommissionWrong,
            "the table takes no commission on banca wins",
        ));
    }
    for (k, b) in book.bets.iter().enumerate() {
        ctx.push(EventKind::Bet(b.bet(k)));
        ctx.wait(1_000, 4_000);
    }
    // Second thoughts before the call: a stake changed, a side bet taken back.
    if ctx.rng.chance(6, 100) {
        let k = ctx.rng.below(book.bets.len() as u64) as usize;
        let c = book.bets[k].chance;
        if !book.bets[k].standing()
            && let Some(a) = book.amount(ctx.rng, c)
            && a != book.bets[k].amount
        {
            let before = book.bets[k].amount;
            book.bets[k].amount = a;
            if book.findings() == 0 {
                ctx.push(EventKind::BetChanged {
                    bet_id: bet_id(k),
                    amount_cents: a,
                });
                ctx.wait(1_000, 3_000);
            } else {
                book.bets[k].amount = before;
            }
        }
    }
    if ctx.rng.chance(5, 100)
        && let Some(k) = book.bets.iter().position(|b| {
            matches!(
                b.chance,
                Chance::Tie | Chance::PairPonto | Chance::PairBanca
            ) && need != Some(b.chance)
        })
    {
        book.bets[k].withdrawn = true;
        ctx.push(EventKind::BetWithdrawn { bet_id: bet_id(k) });
        ctx.wait(1_000, 3_000);
    }
    if m == Some(Mistake::ExposureExceeded) {
        exceed_exposure(&mut book, &mut ctx, &seated)?;
    }
    debug_assert_eq!(
        book.findings(),
        if m == Some(Mistake::ExposureExceeded) {
            code_bit("PB_MACAU_EXPOSURE_EXCEEDED")
        } else {
            0
        }
    );

    // --- "Jogo feito. Nada mais." (r.12), the burn (r.13 ¶2) and the coup (r.13).
    ctx.wait(3_000, 10_000);
    ctx.push(EventKind::NoMoreBets);
    ctx.wait(1_000, 3_000);
    // The coup's cards are taken before the burn card only so that a coup a mistake needs can be
    // looked for among all the cards left; every card is uniform among those left either way.
    let (ponto, banca) = match m.and_then(|m| Some((m, wanted(m, cfg.commission)?))) {
        Some((m, want)) => {
            let cards = steered(&mut deck, ctx.rng, &*want)
                .ok_or_else(|| not_applicable(m, "no coup of the shoe offers it"))?;
            let (ponto, mut banca, extra) = split(&cards);
            // third_card_against_tableau: the banca's forbidden card.
            banca.extend(extra);
            (ponto, banca)
        }
        None => deal(&mut deck, ctx.rng),
    };
    if (csm || !reshuffle) && !skip_burn {
        let c = deck.draw(ctx.rng);
        ctx.card(&mut pos, Recipient::Burn, c, false);
    }
    // The order of r.13: P, B, P, B, the ponto's third card, the banca's.
    for k in 0..2 {
        ctx.card(&mut pos, Recipient::Ponto, ponto[k], true);
        ctx.card(&mut pos, Recipient::Banca, banca[k], true);
    }
    if let Some(c) = ponto.get(2) {
        ctx.wait(1_000, 3_000);
        ctx.card(&mut pos, Recipient::Ponto, *c, true);
    }
    if let Some(c) = banca.get(2) {
        ctx.wait(1_000, 3_000);
        ctx.card(&mut pos, Recipient::Banca, *c, true);
    }

    // --- The honest settlement: the engine itself, on a copy of the state.
    let mut round = Round {
        round_id,
        opened_at_ms: Some(start_ms),
        jackpot_before_cents: None,
        events: std::mem::take(&mut ctx.events),
        settlement: None,
    };
    let mut shoe_after = state.shoe;
    let adj = crate::punto_banco::adjudicate(cfg, &mut shoe_after, &round, &Options::default())?;
    let mut settlement = honest_settlement(&adj);
    let set = |s: &mut rules_core::Settlement, id: &Id, net: Cents| match s
        .results
        .iter_mut()
        .find(|r| r.bet_id == *id)
    {
        Some(r) => r.net_cents = net,
        None => s.results.push(ReportedNet {
            bet_id: id.clone(),
            net_cents: net,
        }),
    };
    // A bet on `c` that won (the adjudication lists the bets in the order placed).
    let won = |c: Chance| {
        book.bets
            .iter()
            .enumerate()
            .find(|(k, b)| {
                !b.withdrawn
                    && b.chance == c
                    && adj.bets.get(*k).is_some_and(|o| o.due_net_cents > 0)
            })
            .map(|(k, b)| (k, *b))
    };
    match m {
        Some(Mistake::ThirdCardAgainstTableau) => {
            // Settled as dealt: the banca's forbidden card counted.
            let dealt = CoupScores {
                ponto: score(&ponto),
                banca: score(&banca),
                ponto_pair: is_pair(ponto[0], ponto[1]),
                banca_pair: is_pair(banca[0], banca[1]),
                cards_used: ponto.len() + banca.len(),
            };
            for (k, b) in book.bets.iter().enumerate().filter(|(_, b)| !b.withdrawn) {
                set(
                    &mut settlement,
                    &bet_id(k),
                    due_net(cfg, b.chance, b.amount, &dealt),
                );
            }
        }
        Some(Mistake::BancaCommissionWrong) => {
            let (k, b) = won(Chance::Banca)
                .ok_or_else(|| not_applicable(Mistake::BancaCommissionWrong, "no banca bet won"))?;
            set(&mut settlement, &bet_id(k), b.amount);
        }
        Some(Mistake::CommissionOnPonto) => {
            let (k, b) = won(Chance::Ponto)
                .ok_or_else(|| not_applicable(Mistake::CommissionOnPonto, "no ponto bet won"))?;
            set(&mut settlement, &bet_id(k), b.amount - b.amount / 20);
        }
        Some(Mistake::TiePaid9To1) => {
            let (k, b) = won(Chance::Tie)
                .ok_or_else(|| not_applicable(Mistake::TiePaid9To1, "no tie bet won"))?;
            set(&mut settlement, &bet_id(k), 9 * b.amount);
        }
        _ => {}
    }

    // --- Losing bets collected, prizes paid; the cards back to a continuous shuffler.
    let mut tail = Vec::new();
    let losers: Vec<Id> = settlement
        .results
        .iter()
        .filter(|r| r.net_cents < 0)
        .map(|r| r.bet_id.clone())
        .collect();
    if !losers.is_empty() {
        tail.push(EventKind::Collect { bet_ids: losers });
    }
    for r in settlement.results.iter().filter(|r| r.net_cents > 0) {
        tail.push(EventKind::Pay {
            bet_id: r.bet_id.clone(),
            amount_cents: r.net_cents,
        });
    }
    if csm {
        tail.push(EventKind::Procedure {
            name: "cards_to_shuffler".into(),
            value: None,
            seat: None,
            amount_cents: None,
        });
    }
    ctx.wait(3_000, 8_000);
    for k in tail {
        ctx.push(k);
        ctx.wait(1_500, 4_000);
    }
    round.events.append(&mut ctx.events);
    round.settlement = Some(settlement);
    Ok(round)
}

/// S.IV r.22, r.23 broken on purpose: a seated player adds to the heavier side until the
/// difference between the ponto and banca totals passes M. Any seated player may: one who is on
/// the other side too stakes enough that his own two stakes stay at least the table minimum apart
/// (S.IV r.11), so that the exposure is the coup's only breach.
fn exceed_exposure(book: &mut Book<'_>, ctx: &mut Ctx<'_>, seated: &[u8]) -> Result<(), SimError> {
    let m = Mistake::ExposureExceeded;
    let cap = book
        .cfg
        .limits
        .max_exposure
        .ok_or_else(|| not_applicable(m, "the table has no exposure cap"))?;
    let stakes = |book: &Book<'_>, c: Chance, who: Option<Bettor>| -> Cents {
        book.bets
            .iter()
            .filter(|b| !b.withdrawn && b.chance == c && who.is_none_or(|w| b.who == w))
            .map(|b| b.amount)
            .sum()
    };
    let diff = stakes(book, Chance::Ponto, None) - stakes(book, Chance::Banca, None);
    let side = if diff >= 0 {
        Chance::Ponto
    } else {
        Chance::Banca
    };
    let other = if side == Chance::Ponto {
        Chance::Banca
    } else {
        Chance::Ponto
    };
    let want = cap - diff.abs() + STEP * (1 + ctx.rng.below(50) as i64) * 5;
    // In whole chips of the table minimum (itself rounded to the commission step).
    let chip = (book.min(side) + STEP - 1) / STEP * STEP;
    let gap = book.cfg.limits.table_min.unwrap_or(0);
    // Players not on the other side first, in random order, then those who are.
    let mut order = seated.to_vec();
    ctx.rng.shuffle(&mut order);
    order.sort_by_key(|s| stakes(book, other, Some(Bettor::Seated(*s))) > 0);
    for seat in order {
        let me = Bettor::Seated(seat);
        // S.IV r.11: above his other-side stake by at least the table minimum.
        let apart = stakes(book, other, Some(me)) - stakes(book, side, Some(me)) + gap;
        let at_least = if stakes(book, other, Some(me)) > 0 {
            want.max(apart)
        } else {
            want
        };
        let amount = (at_least.max(chip) + chip - 1) / chip * chip;
        book.bets.push(Planned {
            chance: side,
            seat,
            who: me,
            on_bet: None,
            amount,
            withdrawn: false,
        });
        if book.findings() == code_bit("PB_MACAU_EXPOSURE_EXCEEDED") {
            let k = book.bets.len() - 1;
            ctx.push(EventKind::Bet(book.bets[k].bet(k)));
            ctx.wait(1_000, 3_000);
            return Ok(());
        }
        book.bets.pop();
    }
    Err(not_applicable(
        m,
        "no seated player's bet breaks the cap without breaking another limit",
    ))
}
