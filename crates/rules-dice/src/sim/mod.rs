//! # Simulation: playing the dice games by the rules ([`rules_core::Simulate`])
//!
//! [`DiceEngine`] plays one complete round of any configured banca francesa, craps or cussec
//! table; each game's module documents what it simulates:
//!
//! * [`banca`]: the staff thrower relieved and the three dice sets rotated every 50 minutes
//!   (r.18, r.4), aces / small / big and line bets within the chance limits (r.11, r.17),
//!   throws until one decides (at most four per round; undecided bets carry over in the state),
//!   void throws (about 1 in 100) with the set replaced after a void of r.8(b), losing chips
//!   collected from the aces first, then prizes (r.12, r.15);
//! * [`craps`]: one to three throws per round by the shooter (two of five dice), line bets,
//!   odds after the point, come bets after the point, place bets in multiples of their minimums,
//!   field, hardways and the one-throw propositions; bets carry over between rounds through the
//!   state; the dice change hands after a seven-out (r.8(b)); void throws about 1 in 150;
//! * [`cussec`]: the dome covered after the previous round's payments, the lever pressed three
//!   times, every bet of r.7, "Nada mais. Vou abrir.", stacked dice (about 1 round in 200)
//!   reshaken with bets kept, changed or withdrawn (r.6), losing bets collected, prizes paid.
//!
//! The outcome always comes from [`SimRng::die`]; the settlement is the honest one, computed by
//! the engine itself ([`rules_core::honest_settlement`]), with the requested mistake applied.
//! A mistake the drawn round does not offer is forced (a bet added, a throw steered), never
//! skipped. Bet ids are `<round_id>/b<n>`: unique for a bet's whole life on the table.

pub mod banca;
pub mod craps;
pub mod cussec;

use rules_core::{
    Bet, Cents, EventKind, GameId, Id, MistakeSpec, ReportedNet, Round, RoundError, RoundEvent,
    Settlement, SimError, SimRng, Simulate, TableConfig,
};

use crate::{DiceConfig, DiceEngine, DiceState};

/// Staff and dice sets are changed a little before the hour the rules allow.
pub(crate) const ROTATE_AFTER_MS: i64 = 50 * 60_000;

/// The mistakes a simulated dice table can be told to make. Each belongs to one game (its codes
/// are that game's); asking another game for it is [`SimError::MistakeNotApplicable`].
pub const MISTAKES: &[MistakeSpec] = &[
    // craps
    MistakeSpec {
        id: "odds_paid_even_money",
        description: "craps: odds on a 6 or 8 paid 1 to 1 instead of 6 to 5",
        codes: &["CR_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "odds_over_flat",
        description: "craps: odds accepted above their pass / come bet",
        codes: &["CR_ODDS_OVER_FLAT"],
    },
    MistakeSpec {
        id: "shooter_not_changed",
        description: "craps: the shooter keeps the dice after sevening out",
        codes: &["CR_SHOOTER_NOT_CHANGED"],
    },
    MistakeSpec {
        id: "come_before_point",
        description: "craps: a come bet accepted on a come-out throw",
        codes: &["CR_COME_BEFORE_POINT"],
    },
    MistakeSpec {
        id: "place_not_multiple_of_min",
        description: "craps: a place bet on 6 or 8 that is not a multiple of its minimum",
        codes: &["CR_PLACE_NOT_MULTIPLE_OF_MIN"],
    },
    // cussec
    MistakeSpec {
        id: "small_paid_on_triple",
        description: "cussec: a small bet paid on a triple",
        codes: &["CS_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "late_bet",
        description: "cussec: a bet accepted after \"Nada mais. Vou abrir.\"",
        codes: &["CS_LATE_BET"],
    },
    MistakeSpec {
        id: "lever_not_three_times",
        description: "cussec: the lever pressed twice before betting opened",
        codes: &["CS_LEVER_NOT_THREE_TIMES"],
    },
    // banca francesa
    MistakeSpec {
        id: "aces_short_paid",
        description: "banca francesa: aces paid 60 to 1 instead of 61 to 1",
        codes: &["BF_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "void_throw_settled",
        description: "banca francesa: a bet paid on a void throw",
        codes: &["BF_VOID_THROW_SETTLED"],
    },
    MistakeSpec {
        id: "collection_not_from_aces",
        description: "banca francesa: losing chips collected without starting with the aces",
        codes: &["BF_COLLECTION_NOT_FROM_ACES"],
    },
    MistakeSpec {
        id: "dice_touched_before_announce",
        description: "banca francesa: the dealer touched the dice before announcing the chance",
        codes: &["BF_DICE_TOUCHED_BEFORE_ANNOUNCE"],
    },
];

/// A parsed mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mistake {
    OddsPaidEvenMoney,
    OddsOverFlat,
    ShooterNotChanged,
    ComeBeforePoint,
    PlaceNotMultipleOfMin,
    SmallPaidOnTriple,
    LateBet,
    LeverNotThreeTimes,
    AcesShortPaid,
    VoidThrowSettled,
    CollectionNotFromAces,
    DiceTouchedBeforeAnnounce,
}

impl Mistake {
    fn parse(id: &str) -> Option<Mistake> {
        Some(match id {
            "odds_paid_even_money" => Mistake::OddsPaidEvenMoney,
            "odds_over_flat" => Mistake::OddsOverFlat,
            "shooter_not_changed" => Mistake::ShooterNotChanged,
            "come_before_point" => Mistake::ComeBeforePoint,
            "place_not_multiple_of_min" => Mistake::PlaceNotMultipleOfMin,
            "small_paid_on_triple" => Mistake::SmallPaidOnTriple,
            "late_bet" => Mistake::LateBet,
            "lever_not_three_times" => Mistake::LeverNotThreeTimes,
            "aces_short_paid" => Mistake::AcesShortPaid,
            "void_throw_settled" => Mistake::VoidThrowSettled,
            "collection_not_from_aces" => Mistake::CollectionNotFromAces,
            "dice_touched_before_announce" => Mistake::DiceTouchedBeforeAnnounce,
            _ => return None,
        })
    }

    pub fn id(self) -> &'static str {
        match self {
            Mistake::OddsPaidEvenMoney => "odds_paid_even_money",
            Mistake::OddsOverFlat => "odds_over_flat",
            Mistake::ShooterNotChanged => "shooter_not_changed",
            Mistake::ComeBeforePoint => "come_before_point",
            Mistake::PlaceNotMultipleOfMin => "place_not_multiple_of_min",
            Mistake::SmallPaidOnTriple => "small_paid_on_triple",
            Mistake::LateBet => "late_bet",
            Mistake::LeverNotThreeTimes => "lever_not_three_times",
            Mistake::AcesShortPaid => "aces_short_paid",
            Mistake::VoidThrowSettled => "void_throw_settled",
            Mistake::CollectionNotFromAces => "collection_not_from_aces",
            Mistake::DiceTouchedBeforeAnnounce => "dice_touched_before_announce",
        }
    }

    fn game(self) -> GameId {
        match self {
            Mistake::OddsPaidEvenMoney
            | Mistake::OddsOverFlat
            | Mistake::ShooterNotChanged
            | Mistake::ComeBeforePoint
            | Mistake::PlaceNotMultipleOfMin => GameId::Craps,
            Mistake::SmallPaidOnTriple | Mistake::LateBet | Mistake::LeverNotThreeTimes => {
                GameId::Cussec
            }
            _ => GameId::BancaFrancesa,
        }
    }
}

/// The mistakes `game` can make (their ids, in [`MISTAKES`] order).
pub fn mistakes_of(game: GameId) -> Vec<&'static str> {
    MISTAKES
        .iter()
        .filter(|m| Mistake::parse(m.id).is_some_and(|x| x.game() == game))
        .map(|m| m.id)
        .collect()
}

/// The round being built: events with their times, bet ids.
pub(crate) struct Ctx<'a> {
    pub rng: &'a mut SimRng,
    pub round_id: &'a Id,
    pub events: Vec<RoundEvent>,
    pub t: i64,
    next_bet: u32,
}

impl<'a> Ctx<'a> {
    pub fn new(rng: &'a mut SimRng, round_id: &'a Id, t: i64) -> Ctx<'a> {
        Ctx {
            rng,
            round_id,
            events: Vec::with_capacity(40),
            t,
            next_bet: 0,
        }
    }

    pub fn push(&mut self, kind: EventKind) {
        self.events.push(RoundEvent::at(self.t, kind));
    }

    pub fn wait(&mut self, lo: i64, hi: i64) {
        self.t += lo + self.rng.below((hi - lo + 1) as u64) as i64;
    }

    pub fn bet_id(&mut self) -> Id {
        self.next_bet += 1;
        format!("{}/b{}", self.round_id, self.next_bet).into()
    }

    pub fn procedure(&mut self, name: &str, value: Option<String>) {
        self.push(EventKind::Procedure {
            name: name.into(),
            value,
            seat: None,
            amount_cents: None,
        });
    }

    /// The round so far, without a settlement (the events move into it: no copy).
    pub fn take_round(&mut self, opened: i64) -> Round {
        Round {
            round_id: self.round_id.clone(),
            opened_at_ms: Some(opened),
            jackpot_before_cents: None,
            events: std::mem::take(&mut self.events),
            settlement: None,
        }
    }

    /// `f` on the round so far, the events then given back.
    pub fn with_round<T>(&mut self, opened: i64, f: impl FnOnce(&Round) -> T) -> T {
        let round = self.take_round(opened);
        let out = f(&round);
        self.events = round.events;
        out
    }

    /// `k` chips of `unit`, `k` drawn from `mults`, within `min..=max` (whole units).
    pub fn amount(&mut self, unit: Cents, min: Cents, max: Cents, mults: &[i64]) -> Option<Cents> {
        let unit = unit.max(1);
        let lo = ((min + unit - 1) / unit).max(1);
        let hi = max / unit;
        if lo > hi {
            return None;
        }
        let k = (lo * self.rng.pick(mults).copied().unwrap_or(1)).min(hi);
        Some(k * unit)
    }
}

/// The mistake cannot be made at this table (its limits admit no bet it needs, ...).
pub(crate) fn not_applicable(m: Option<Mistake>, why: &str) -> SimError {
    SimError::MistakeNotApplicable {
        mistake: m.map_or("", Mistake::id).to_string(),
        reason: why.to_string(),
    }
}

/// A player at seat `seat`.
pub(crate) fn player_id(seat: u8) -> Id {
    format!("p{seat}").into()
}

pub(crate) fn new_bet(id: &Id, bet_type: &str, amount: Cents, seat: u8) -> Bet {
    Bet::new(id, bet_type, amount)
        .seat(seat)
        .player(&player_id(seat))
}

/// Set the reported net of `id` (adding it when the settlement leaves it out).
pub(crate) fn report(s: &mut Settlement, id: &Id, net: Cents) {
    match s.results.iter_mut().find(|r| &r.bet_id == id) {
        Some(r) => r.net_cents = net,
        None => s.results.push(ReportedNet {
            bet_id: id.clone(),
            net_cents: net,
        }),
    }
}

/// Two dice summing to `total` (2-12), uniformly among the ways.
pub(crate) fn two_dice_for(rng: &mut SimRng, total: u8) -> [u8; 2] {
    let lo = total.saturating_sub(6).max(1);
    let hi = (total - 1).min(6);
    let a = rng.range(u64::from(lo), u64::from(hi)) as u8;
    [a, total - a]
}

/// The next name of a rotation after `cur` (the first when there is none).
pub(crate) fn next_of<'s>(list: &[&'s str], cur: Option<&str>) -> &'s str {
    let i = cur
        .and_then(|c| list.iter().position(|x| *x == c))
        .map_or(0, |i| (i + 1) % list.len());
    list[i]
}

fn example_table(game: GameId) -> TableConfig {
    use rules_core::{ChanceLimit, Setting};
    let mut t = TableConfig::new(game);
    t.regulation = Some("P217/2007".into());
    match game {
        GameId::BancaFrancesa => {
            // €5 minimum; aces up to 6 × (r.17(a)), small and big up to 200 × (r.17(b)).
            t.min_bet_cents = Some(500);
            t.max_bet_cents = Some(100_000);
            t.limits = vec![ChanceLimit {
                chance: "aces".into(),
                min_cents: Some(500),
                max_cents: Some(3_000),
            }];
            t.seats = Some(12);
        }
        GameId::Craps => {
            // Bar 12; number-box minimums that pay whole cents (7:6 on 6/8 in €6, 10:13 in
            // €13, ...); customary lay payouts on the don't side (note C1); a legal maximum
            // for odds payments (note C8).
            t.min_bet_cents = Some(500);
            t.max_bet_cents = Some(200_000);
            t.seats = Some(12);
            t.settings.insert("bar".into(), Setting::Int(12));
            t.settings.insert(
                "place_min".into(),
                Setting::List(vec![500, 500, 600, 600, 500, 500]),
            );
            t.settings.insert(
                "place_to_lose_min".into(),
                Setting::List(vec![1_100, 800, 1_300, 1_300, 800, 1_100]),
            );
            t.settings
                .insert("dont_odds_payout".into(), Setting::Text("lay".into()));
            t.settings
                .insert("odds_max_payout_cents".into(), Setting::Int(1_000_000));
        }
        _ => {
            t.min_bet_cents = Some(200);
            t.max_bet_cents = Some(50_000);
            t.seats = Some(10);
        }
    }
    t
}

impl Simulate for DiceEngine {
    fn mistakes() -> &'static [MistakeSpec] {
        MISTAKES
    }

    fn mistakes_for(game: GameId) -> Vec<&'static MistakeSpec> {
        let ids = mistakes_of(game);
        Self::mistakes()
            .iter()
            .filter(|m| ids.contains(&m.id))
            .collect()
    }

    fn example_table(game: GameId) -> TableConfig {
        example_table(game)
    }

    fn simulate(
        table: &TableConfig,
        config: &DiceConfig,
        state: &DiceState,
        round_id: Id,
        start_ms: i64,
        rng: &mut SimRng,
        mistake: Option<&str>,
    ) -> Result<Round, SimError> {
        let game = match config {
            DiceConfig::BancaFrancesa(_) => GameId::BancaFrancesa,
            DiceConfig::Craps(_) => GameId::Craps,
            DiceConfig::Cussec(_) => GameId::Cussec,
        };
        let m = match mistake {
            None => None,
            Some(id) => {
                let m = Mistake::parse(id).ok_or_else(|| SimError::UnknownMistake(id.into()))?;
                if m.game() != game {
                    return Err(SimError::MistakeNotApplicable {
                        mistake: id.into(),
                        reason: format!("a {} mistake; this table plays {game}", m.game()),
                    });
                }
                Some(m)
            }
        };
        let wrong_state = || {
            SimError::Round(RoundError::State {
                game,
                reason: "the table state is another game's".into(),
            })
        };
        match config {
            DiceConfig::BancaFrancesa(c) => {
                let st = match state {
                    DiceState::BancaFrancesa(s) => std::borrow::Cow::Borrowed(s),
                    DiceState::Fresh => std::borrow::Cow::Owned(Default::default()),
                    _ => return Err(wrong_state()),
                };
                banca::simulate(table, c, &st, round_id, start_ms, rng, m)
            }
            DiceConfig::Craps(c) => {
                let st = match state {
                    DiceState::Craps(s) => std::borrow::Cow::Borrowed(s),
                    DiceState::Fresh => std::borrow::Cow::Owned(Default::default()),
                    _ => return Err(wrong_state()),
                };
                craps::simulate(table, c, &st, round_id, start_ms, rng, m)
            }
            DiceConfig::Cussec(c) => {
                let st = match state {
                    DiceState::Cussec(s) => std::borrow::Cow::Borrowed(s),
                    DiceState::Fresh => std::borrow::Cow::Owned(Default::default()),
                    _ => return Err(wrong_state()),
                };
                cussec::simulate(table, c, &st, round_id, start_ms, rng, m)
            }
        }
    }
}
