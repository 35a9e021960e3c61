//! # Simulation: playing baccarat by the rules ([`rules_core::Simulate`])
//!
//! [`BaccaratEngine`] plays one complete coup of any configured ponto e banca, Macau or chemin
//! de fer table; each game's module documents what it simulates:
//!
//! * [`punto_banco`] (both variants): the shoe prepared by the rules (shuffle, cut, the first 8
//!   cards burned, the warning card about 12 cards from the end, the last coup, a reshuffle; with
//!   a continuous shuffler only the per-coup burn and the cards back to the shuffler), bets by 3
//!   to 9 seated players and a few standing ones within every limit of the variant, "nada mais",
//!   the burn card, the deal P, B, P, B and the third cards exactly by the tableau;
//! * [`chemin_de_fer`]: at least four seated players, the hand and the bank carried over by the
//!   state (the hand to the right after a loss, continued, halved or passed after a win, passed
//!   hands taken at their level or auctioned), bancos, banco suivi, banco avec la table and
//!   partial covers, the ponto's calls, the banker's table with his two options chosen at random,
//!   the cagnotte, null coups; the shoe shuffled, cut and burned by value, the warning card 7
//!   cards from the end.
//!
//! The settlement is always the honest one, computed by the engine itself on a copy of the state
//! ([`rules_core::honest_settlement`]), with the requested mistake applied. A mistake is steered
//! into the coup (the cards it needs are picked, a bet it needs is added), never skipped.
//!
//! **The shoe.** The engine's state knows where the shoe stands (cards out, coups, the warning
//! card) and which cards have left it since the shuffle, but not the order of the cards left. For
//! a shuffled shoe that order is uniform given the cards seen, so each coup is dealt uniformly
//! from the decks minus the cards seen ([`Deck::after`]): over a whole shoe no card comes out more
//! often than the decks hold. A continuous shuffler returns the cards after every coup, so its
//! coups are dealt from full decks.
//!
//! A mistake that needs particular cards (a tie, a banca win on 5, a banker on 3 against a
//! ponto's 2, ...) is looked for among the cards left: first by dealing at random, then by a
//! complete search of the values still in the shoe ([`plan`]). Late in a shoe the cards left may
//! offer no such coup at all; the coup then opens a new shoe (shuffle, cut, burn), as when the
//! decks are replaced before the warning card comes out (ponto e banca S.III/S.IV r.3: as soon
//! as they are no longer in perfect condition; chemin de fer T.II S.I r.5: when any card is
//! imperfect), so that the mistake asked for is made in the coup asked for. Honest coups always
//! play a shoe to its warning card.

pub mod chemin_de_fer;
pub mod punto_banco;

use rules_core::{
    Card, CardCounts, Cents, EventKind, GameId, Id, MistakeSpec, Rank, Recipient, Round,
    RoundError, RoundEvent, SimError, SimRng, Simulate, Suit, TableConfig,
};

use crate::cards::card_value;
use crate::{BaccaratConfig, BaccaratEngine, BaccaratState};

/// The mistakes a simulated baccarat table can be told to make. [`mistakes_of`] says which
/// game each belongs to; asking another game for it is [`SimError::MistakeNotApplicable`].
///
/// `codes` is the set of codes the coup's adjudication then contains, violations and
/// discrepancies together, and nothing else. A wrong payout is one discrepancy per bet paid
/// wrongly, so `PB_WRONG_PAYOUT` / `CF_WRONG_PAYOUT` may occur several times (and
/// `CF_WRONG_PAYOUT` also as the violation on a wrongly reported cagnotte).
pub const MISTAKES: &[MistakeSpec] = &[
    // Ponto e banca and Macau.
    MistakeSpec {
        id: "third_card_against_tableau",
        description: "ponto e banca: the banca draws a third card the tableau forbids and the casino settles the coup as dealt",
        codes: &["PB_BANCA_DREW_AGAINST_TABLEAU", "PB_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "banca_commission_wrong",
        description: "ponto e banca: a winning banca bet paid 1 to 1 without the table's commission (5%, or 50% on a win with 5)",
        codes: &["PB_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "commission_on_ponto",
        description: "ponto e banca: a winning ponto bet paid less a 5% commission",
        codes: &["PB_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "tie_paid_9_to_1",
        description: "ponto e banca: a winning tie bet paid 9 to 1 instead of 8 to 1",
        codes: &["PB_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "burn_missing",
        description: "ponto e banca: no card burned before a coup (7 instead of 8 at the start of a shoe)",
        codes: &["PB_BURN_MISSING"],
    },
    MistakeSpec {
        id: "exposure_exceeded",
        description: "Macau: a bet accepted that takes |Σponto − Σbanca| above the IGJ's cap M",
        codes: &["PB_MACAU_EXPOSURE_EXCEEDED"],
    },
    // Chemin de fer.
    MistakeSpec {
        id: "dealer_false_carta",
        description: "chemin de fer: the dealer calls \"carta\" although the ponto said \"não\", and the casino settles the coup as dealt instead of rebuilding it",
        codes: &["CF_DEALER_FALSE_CARTA", "CF_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "banker_wrong_draw",
        description: "chemin de fer: without a full banco, the banker on 3 stands against a ponto's third card of 2 (his table says draw)",
        codes: &["CF_BANKER_FALSE_DRAW"],
    },
    MistakeSpec {
        id: "late_bet",
        description: "chemin de fer: a ponto bet accepted after \"nada mais\"",
        codes: &["CF_LATE_BET"],
    },
];

/// A parsed mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mistake {
    ThirdCardAgainstTableau,
    BancaCommissionWrong,
    CommissionOnPonto,
    TiePaid9To1,
    BurnMissing,
    ExposureExceeded,
    DealerFalseCarta,
    BankerWrongDraw,
    LateBet,
}

impl Mistake {
    fn parse(id: &str) -> Option<Mistake> {
        Some(match id {
            "third_card_against_tableau" => Mistake::ThirdCardAgainstTableau,
            "banca_commission_wrong" => Mistake::BancaCommissionWrong,
            "commission_on_ponto" => Mistake::CommissionOnPonto,
            "tie_paid_9_to_1" => Mistake::TiePaid9To1,
            "burn_missing" => Mistake::BurnMissing,
            "exposure_exceeded" => Mistake::ExposureExceeded,
            "dealer_false_carta" => Mistake::DealerFalseCarta,
            "banker_wrong_draw" => Mistake::BankerWrongDraw,
            "late_bet" => Mistake::LateBet,
            _ => return None,
        })
    }

    pub(crate) fn id(self) -> &'static str {
        match self {
            Mistake::ThirdCardAgainstTableau => "third_card_against_tableau",
            Mistake::BancaCommissionWrong => "banca_commission_wrong",
            Mistake::CommissionOnPonto => "commission_on_ponto",
            Mistake::TiePaid9To1 => "tie_paid_9_to_1",
            Mistake::BurnMissing => "burn_missing",
            Mistake::ExposureExceeded => "exposure_exceeded",
            Mistake::DealerFalseCarta => "dealer_false_carta",
            Mistake::BankerWrongDraw => "banker_wrong_draw",
            Mistake::LateBet => "late_bet",
        }
    }

    /// Whether a table of `game` can make this mistake.
    fn applies_to(self, game: GameId) -> bool {
        match self {
            Mistake::ExposureExceeded => game == GameId::BaccaratMacau,
            Mistake::DealerFalseCarta | Mistake::BankerWrongDraw | Mistake::LateBet => {
                game == GameId::BaccaratCheminDeFer
            }
            _ => matches!(game, GameId::BaccaratPuntoBanco | GameId::BaccaratMacau),
        }
    }
}

/// The mistakes a table of `game` can make (their ids, in [`MISTAKES`] order).
pub fn mistakes_of(game: GameId) -> Vec<&'static str> {
    MISTAKES
        .iter()
        .filter(|m| Mistake::parse(m.id).is_some_and(|x| x.applies_to(game)))
        .map(|m| m.id)
        .collect()
}

/// The mistake cannot be made in this coup or at this table.
pub(crate) fn not_applicable(m: Mistake, why: impl Into<String>) -> SimError {
    SimError::MistakeNotApplicable {
        mistake: m.id().to_string(),
        reason: why.into(),
    }
}

/// A typical approved configuration of each game.
fn example_table(game: GameId) -> TableConfig {
    use rules_core::{ChanceLimit, Setting};
    let mut t = TableConfig::new(game);
    t.regulation = Some("P217/2007".into());
    let limit = |chance: &str, min: Cents, max: Cents| ChanceLimit {
        chance: chance.into(),
        min_cents: Some(min),
        max_cents: Some(max),
    };
    match game {
        GameId::BaccaratPuntoBanco => {
            // A double table (8 decks, 7 seats a side), the 5% commission, pairs offered, every
            // chance's maximum at exactly its S.III r.21 proportion of its minimum.
            t.commission = Some("5pct".into());
            t.decks = Some(8);
            t.seats = Some(14);
            t.min_bet_cents = Some(1_000);
            t.max_bet_cents = Some(70_000);
            t.limits = vec![
                limit("ponto", 1_000, 70_000),
                limit("banca", 1_000, 70_000),
                limit("tie", 500, 7_500),
                limit("pair_ponto", 500, 4_000),
                limit("pair_banca", 500, 4_000),
            ];
            t.settings
                .insert("pairs_offered".into(), Setting::Bool(true));
            t.settings
                .insert("double_table".into(), Setting::Bool(true));
        }
        GameId::BaccaratMacau => {
            // A simple table (6 decks, 9 seats), 50% off banca wins with 5, pairs offered, a
            // €25 table minimum and the IGJ's cap M = €50 000 (ties ≤ €5 000, pairs ≤ €4 000).
            t.commission = Some("half_on_5".into());
            t.decks = Some(6);
            t.seats = Some(9);
            t.min_bet_cents = Some(2_500);
            t.settings
                .insert("pairs_offered".into(), Setting::Bool(true));
            t.settings
                .insert("max_exposure_cents".into(), Setting::Int(5_000_000));
        }
        _ => {
            // 9 seats, 6 decks, €100 minimum bet, €1 000 minimum bank, a 5% cagnotte on the
            // bank's winnings, auctions from €1 000 by €100.
            t.decks = Some(6);
            t.seats = Some(9);
            t.min_bet_cents = Some(10_000);
            t.settings
                .insert("min_bank_cents".into(), Setting::Int(100_000));
            t.settings.insert("cagnotte_bp".into(), Setting::Int(500));
            t.settings
                .insert("cagnotte_rounding".into(), Setting::Text("down".into()));
            t.settings
                .insert("auction_base_cents".into(), Setting::Int(100_000));
            t.settings
                .insert("auction_increment_cents".into(), Setting::Int(10_000));
        }
    }
    t
}

/// The round being built: its events with their times.
pub(crate) struct Ctx<'a> {
    pub rng: &'a mut SimRng,
    pub events: Vec<RoundEvent>,
    pub t: i64,
}

impl<'a> Ctx<'a> {
    pub fn new(rng: &'a mut SimRng, t: i64) -> Ctx<'a> {
        Ctx {
            rng,
            events: Vec::with_capacity(48),
            t,
        }
    }

    pub fn push(&mut self, kind: EventKind) {
        self.events.push(RoundEvent::at(self.t, kind));
    }

    /// Let `lo..=hi` milliseconds pass.
    pub fn wait(&mut self, lo: i64, hi: i64) {
        self.t += lo + self.rng.below((hi - lo + 1).max(1) as u64) as i64;
    }

    pub fn procedure(&mut self, name: &str) {
        self.push(EventKind::Procedure {
            name: name.into(),
            value: None,
            seat: None,
            amount_cents: None,
        });
    }

    /// A card out of the shoe to `to`. When the shoe reaches its warning card, the warning card
    /// comes out first (`warning_card` procedure).
    pub fn card(&mut self, pos: &mut ShoePos, to: Recipient, card: Card, face_up: bool) {
        if !pos.warning_out && pos.warning_at.is_some_and(|w| pos.out >= w) {
            pos.warning_out = true;
            self.procedure("warning_card");
        }
        self.push(EventKind::Card { to, card, face_up });
        pos.out += 1;
        self.wait(700, 1_800);
    }
}

/// Where the shoe stands during the coup, as the engine counts it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShoePos {
    /// Cards out of the shoe so far.
    pub out: u32,
    /// The warning card comes out before the card that would take `out` past this value.
    pub warning_at: Option<u32>,
    pub warning_out: bool,
}

/// The shoe a coup is dealt from: distinct physical cards of `decks` decks, less those that left
/// the shoe before the coup (see the module docs).
pub(crate) struct Deck {
    total: u64,
    /// `taken[i]`: physical card `i` is out of the shoe (seen before this coup, or drawn in it).
    taken: Vec<bool>,
    /// The cards drawn in this coup, in order (what [`Deck::rewind`] puts back).
    used: Vec<u16>,
}

impl Deck {
    /// A full shoe of `decks` decks (a new shoe, or a continuous shuffler's).
    pub fn new(decks: u8) -> Deck {
        let total = u64::from(decks.clamp(1, 8)) * 52;
        Deck {
            total,
            taken: vec![false; total as usize],
            used: Vec::with_capacity(24),
        }
    }

    /// The shoe as the state leaves it: the decks minus every card `seen` since the shuffle.
    /// For a shuffled shoe the order of the cards left is uniform given those seen, so drawing
    /// uniformly from them is exactly dealing on from the shoe.
    pub fn after(decks: u8, seen: &CardCounts) -> Deck {
        let mut d = Deck::new(decks);
        let copies = d.total / 52;
        for i in 0..52u16 {
            let out = u64::from(seen.get(Deck::card_at(i))).min(copies);
            for k in 0..out {
                d.taken[usize::from(i) + 52 * k as usize] = true;
            }
        }
        d
    }

    fn card_at(i: u16) -> Card {
        Card::new(
            Rank::ALL[usize::from(i % 13)],
            Suit::ALL[usize::from((i / 13) % 4)],
        )
    }

    fn take(&mut self, i: u16) -> Card {
        self.taken[usize::from(i)] = true;
        self.used.push(i);
        Deck::card_at(i)
    }

    /// A card uniformly among those left (the simulators reshuffle before a shoe runs short).
    pub fn draw(&mut self, rng: &mut SimRng) -> Card {
        if let Some(c) = self.draw_where(rng, |_| true) {
            return c;
        }
        // Only a state from elsewhere gets here (the simulators reshuffle before a shoe runs
        // short): deal on from the decks less this coup's cards rather than fail.
        self.taken.iter_mut().for_each(|t| *t = false);
        for &i in &self.used {
            self.taken[usize::from(i)] = true;
        }
        self.draw_where(rng, |_| true)
            .unwrap_or_else(|| Deck::card_at(0))
    }

    /// A card uniformly among those left that satisfy `pred`, if there is one.
    pub fn draw_where(&mut self, rng: &mut SimRng, pred: impl Fn(Card) -> bool) -> Option<Card> {
        // Every rank is 1/13 of a full shoe: a few hundred tries find any rank that is left.
        for _ in 0..600 {
            let i = rng.below(self.total) as u16;
            if !self.taken[usize::from(i)] && pred(Deck::card_at(i)) {
                return Some(self.take(i));
            }
        }
        let start = rng.below(self.total) as u16;
        let total = self.total as u16;
        let i = (0..total)
            .map(|k| (start + k) % total)
            .find(|i| !self.taken[usize::from(*i)] && pred(Deck::card_at(*i)))?;
        Some(self.take(i))
    }

    /// How many cards of each value are left ([`Values`]).
    pub fn values_left(&self) -> Values {
        let mut left = [0u16; 10];
        for (i, taken) in self.taken.iter().enumerate() {
            if !taken {
                left[usize::from(card_value(Deck::card_at(i as u16)))] += 1;
            }
        }
        left
    }

    /// Cards of the values `plan` lists, in order, each uniformly among those left of its
    /// value; `None` (nothing drawn) if the shoe does not hold them.
    pub fn draw_values(&mut self, rng: &mut SimRng, plan: &[u8]) -> Option<Vec<Card>> {
        let mark = self.mark();
        let mut cards = Vec::with_capacity(plan.len());
        for &v in plan {
            match self.draw_where(rng, |c| card_value(c) == v) {
                Some(c) => cards.push(c),
                None => {
                    self.rewind(mark);
                    return None;
                }
            }
        }
        Some(cards)
    }

    /// A point to come back to ([`Deck::rewind`]) when a drawn coup is not the one wanted.
    pub fn mark(&self) -> usize {
        self.used.len()
    }

    pub fn rewind(&mut self, mark: usize) {
        for i in self.used.drain(mark.min(self.used.len())..) {
            self.taken[usize::from(i)] = false;
        }
    }
}

/// How many cards of each value (0-9: tens and court cards are 0, P217/2007 T.I C.III S.III
/// r.9; T.II S.I r.9-r.11) a shoe holds.
pub(crate) type Values = [u16; 10];

/// What [`plan`] makes of the values dealt so far.
pub(crate) enum Step {
    /// The coup needs another card.
    More,
    /// The coup is complete: whether it is the one wanted.
    Done(bool),
}

/// The values of a coup, in dealing order, that can be dealt from the cards `left` and that
/// `step` accepts; `None` if no order of the cards left gives one. A complete search (a coup
/// takes at most a handful of cards), each card's values tried from `start` on, so that
/// different calls find different coups.
pub(crate) fn plan(left: &Values, start: u8, step: impl Fn(&[u8]) -> Step) -> Option<Vec<u8>> {
    fn go(left: &mut Values, seq: &mut Vec<u8>, start: u8, step: &impl Fn(&[u8]) -> Step) -> bool {
        match step(seq) {
            Step::Done(ok) => return ok,
            Step::More => {}
        }
        for k in 0..10u8 {
            let v = (start + k) % 10;
            if left[usize::from(v)] == 0 {
                continue;
            }
            left[usize::from(v)] -= 1;
            seq.push(v);
            if go(left, seq, start, step) {
                return true;
            }
            seq.pop();
            left[usize::from(v)] += 1;
        }
        false
    }
    let mut left = *left;
    let mut seq = Vec::with_capacity(8);
    go(&mut left, &mut seq, start % 10, &step).then_some(seq)
}

/// `k × unit` for a `k` drawn from the multiples players like to bet.
pub(crate) fn ladder(rng: &mut SimRng, unit: Cents) -> Cents {
    const K: [i64; 20] = [
        1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 5, 6, 8, 10, 10, 12, 15, 20, 25, 30,
    ];
    unit * K[rng.below(K.len() as u64) as usize]
}

/// The state is another game's.
pub(crate) fn wrong_state(game: GameId, reason: &str) -> SimError {
    SimError::Round(RoundError::State {
        game,
        reason: reason.to_string(),
    })
}

impl Simulate for BaccaratEngine {
    fn mistakes() -> &'static [MistakeSpec] {
        MISTAKES
    }

    fn mistakes_for(game: GameId) -> Vec<&'static MistakeSpec> {
        let ids = mistakes_of(game);
        MISTAKES.iter().filter(|m| ids.contains(&m.id)).collect()
    }

    fn example_table(game: GameId) -> TableConfig {
        example_table(game)
    }

    fn simulate(
        table: &TableConfig,
        config: &BaccaratConfig,
        state: &BaccaratState,
        round_id: Id,
        start_ms: i64,
        rng: &mut SimRng,
        mistake: Option<&str>,
    ) -> Result<Round, SimError> {
        let game = match config {
            BaccaratConfig::PuntoBanco(c) => c.variant.game(),
            BaccaratConfig::CheminDeFer(_) => GameId::BaccaratCheminDeFer,
        };
        let m = match mistake {
            None => None,
            Some(id) => {
                let m = Mistake::parse(id).ok_or_else(|| SimError::UnknownMistake(id.into()))?;
                if !m.applies_to(game) {
                    return Err(not_applicable(
                        m,
                        format!("not a mistake of {game} (see mistakes_of)"),
                    ));
                }
                Some(m)
            }
        };
        match config {
            BaccaratConfig::PuntoBanco(c) => {
                punto_banco::simulate(table, c, state, round_id, start_ms, rng, m)
            }
            BaccaratConfig::CheminDeFer(c) => {
                chemin_de_fer::simulate(table, c, state, round_id, start_ms, rng, m)
            }
        }
    }
}
