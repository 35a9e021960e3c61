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
//! card) but not the order of its cards, and a simulator has no memory of its own between coups.
//! Each coup's cards are therefore drawn without replacement from a full shoe of the table's
//! decks (every card of the coup, burns included, is a distinct physical card), while the shoe's
//! procedures follow the real position the state records. Over a whole shoe a card may thus come
//! out more often than the decks hold; no rule of the engines checks that.

pub mod chemin_de_fer;
pub mod punto_banco;

use rules_core::{
    Card, Cents, EventKind, GameId, Id, MistakeSpec, Rank, Recipient, Round, RoundError,
    RoundEvent, SimError, SimRng, Simulate, Suit, TableConfig,
};

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

/// The coup's cards: distinct physical cards of a full shoe of `decks` decks (see the module
/// docs).
pub(crate) struct Deck {
    total: u64,
    used: Vec<u16>,
}

impl Deck {
    pub fn new(decks: u8) -> Deck {
        Deck {
            total: u64::from(decks.clamp(1, 8)) * 52,
            used: Vec::with_capacity(24),
        }
    }

    fn card_at(i: u16) -> Card {
        Card::new(
            Rank::ALL[usize::from(i % 13)],
            Suit::ALL[usize::from((i / 13) % 4)],
        )
    }

    /// A card uniformly among those not yet used in this coup.
    pub fn draw(&mut self, rng: &mut SimRng) -> Card {
        loop {
            let i = rng.below(self.total) as u16;
            if !self.used.contains(&i) {
                self.used.push(i);
                return Deck::card_at(i);
            }
        }
    }

    /// A card uniformly among the unused ones that satisfy `pred`, if there is one.
    pub fn draw_where(&mut self, rng: &mut SimRng, pred: impl Fn(Card) -> bool) -> Option<Card> {
        // Every rank is 1/13 of the shoe: a few hundred tries find any rank that is left.
        for _ in 0..600 {
            let i = rng.below(self.total) as u16;
            if !self.used.contains(&i) && pred(Deck::card_at(i)) {
                self.used.push(i);
                return Some(Deck::card_at(i));
            }
        }
        let start = rng.below(self.total) as u16;
        let total = self.total as u16;
        (0..total)
            .map(|k| (start + k) % total)
            .find(|i| !self.used.contains(i) && pred(Deck::card_at(*i)))
            .map(|i| {
                self.used.push(i);
                Deck::card_at(i)
            })
    }

    /// A point to come back to ([`Deck::rewind`]) when a drawn coup is not the one wanted.
    pub fn mark(&self) -> usize {
        self.used.len()
    }

    pub fn rewind(&mut self, mark: usize) {
        self.used.truncate(mark);
    }
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
