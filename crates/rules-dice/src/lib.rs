//! # rules-dice: banca francesa, craps and cussec
//!
//! Rule engines for the dice games of Portaria 217/2007, Título I, Capítulo II, behind one
//! [`DiceEngine`] implementing [`rules_core::Engine`]:
//!
//! * [`banca_francesa`]: S.I (three dice thrown through the horn; aces, small, big, line bets);
//! * [`craps`]: S.II (two of five dice; the come-out/point series; bets that live over several
//!   throws and several rounds);
//! * [`cussec`]: S.III (three dice shaken in a closed bell; every round decides every bet);
//! * [`sim`]: the simulator ([`rules_core::Simulate`]): plays whole rounds of the three games by
//!   the rules, honest or with one chosen mistake.
//!
//! Each game module documents its complete vocabulary (bet types, selections, `on_bet`, attrs,
//! roles, procedures, faults, void reasons, settings, regulation values) and its state fields.
//! Pure: no I/O, no floats, deterministic output.
//!
//! ## Table state ([`DiceState`])
//! One enum, tagged by game (`{"game": "craps", ...}`); `Fresh` (the default) is a table that
//! has just opened and becomes the game's state on its first round. A state of another game is a
//! [`RoundError::State`].

pub mod banca_francesa;
pub mod craps;
pub mod cussec;
pub mod sim;

use rules_core::{
    Adjudication, Cents, ConfigError, Configured, Engine, GameId, Id, Options, Round, RoundError,
    TableConfig,
};
use serde::{Deserialize, Serialize};

/// The dice engine (all three games).
pub struct DiceEngine;

/// A compiled dice table configuration.
#[derive(Clone, Debug)]
pub enum DiceConfig {
    BancaFrancesa(banca_francesa::BancaConfig),
    Craps(craps::CrapsConfig),
    Cussec(cussec::CussecConfig),
}

/// What a dice table carries from one round to the next.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "game", rename_all = "snake_case")]
pub enum DiceState {
    /// A table that has just opened.
    #[default]
    Fresh,
    BancaFrancesa(banca_francesa::BancaState),
    Craps(craps::CrapsState),
    Cussec(cussec::CussecState),
}

const GAMES: [GameId; 3] = [GameId::BancaFrancesa, GameId::Craps, GameId::Cussec];

impl Engine for DiceEngine {
    type Config = DiceConfig;
    type State = DiceState;

    fn games() -> &'static [GameId] {
        &GAMES
    }

    fn configure(table: &TableConfig) -> Result<Configured<DiceConfig>, ConfigError> {
        match table.game {
            GameId::BancaFrancesa => banca_francesa::configure(table).map(|c| Configured {
                config: DiceConfig::BancaFrancesa(c.config),
                violations: c.violations,
            }),
            GameId::Craps => craps::configure(table).map(|c| Configured {
                config: DiceConfig::Craps(c.config),
                violations: c.violations,
            }),
            GameId::Cussec => cussec::configure(table).map(|c| Configured {
                config: DiceConfig::Cussec(c.config),
                violations: c.violations,
            }),
            game => Err(ConfigError::WrongGame {
                game,
                engine: "dice",
            }),
        }
    }

    fn adjudicate(
        config: &DiceConfig,
        state: &mut DiceState,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError> {
        macro_rules! run {
            ($cfg:expr, $variant:ident, $module:ident, $game:expr) => {{
                match state {
                    DiceState::$variant(s) => $module::adjudicate($cfg, s, round, options),
                    DiceState::Fresh => {
                        let mut s = Default::default();
                        let adj = $module::adjudicate($cfg, &mut s, round, options)?;
                        *state = DiceState::$variant(s);
                        Ok(adj)
                    }
                    _ => Err(RoundError::State {
                        game: $game,
                        reason: "the table state is another game's".into(),
                    }),
                }
            }};
        }
        match config {
            DiceConfig::BancaFrancesa(c) => {
                run!(c, BancaFrancesa, banca_francesa, GameId::BancaFrancesa)
            }
            DiceConfig::Craps(c) => run!(c, Craps, craps, GameId::Craps),
            DiceConfig::Cussec(c) => run!(c, Cussec, cussec, GameId::Cussec),
        }
    }
}

pub(crate) const HOUR_MS: i64 = 3_600_000;

/// `amount × num / den`, rounded down to the cent (the regulation fixes no rounding; payouts
/// such as 7 to 6 leave a fraction only on stakes that are not multiples of the bet's minimum).
pub(crate) fn mul_div(amount: Cents, num: i64, den: i64) -> Cents {
    let v = i128::from(amount) * i128::from(num) / i128::from(den.max(1));
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn event_time(round: &Round, at: Option<i64>) -> Option<i64> {
    at.or(round.opened_at_ms)
}

/// Check the common regulation field: only P217/2007 is implemented for these games.
pub(crate) fn check_regulation(table: &TableConfig) -> Result<(), ConfigError> {
    match table.regulation.as_deref() {
        None | Some("P217/2007") => Ok(()),
        Some(r) => Err(ConfigError::Regulation {
            game: table.game,
            regulation: r.chars().take(64).collect(),
            implemented: "P217/2007",
        }),
    }
}

/// Check the table min/max fields.
pub(crate) fn check_table_limits(table: &TableConfig) -> Result<(), ConfigError> {
    for (name, v) in [
        ("min_bet_cents", table.min_bet_cents),
        ("max_bet_cents", table.max_bet_cents),
    ] {
        if let Some(v) = v
            && !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&v)
        {
            return Err(ConfigError::field(
                name,
                format!("must be 1..={}, got {v}", rules_core::MAX_AMOUNT_CENTS),
            ));
        }
    }
    if let (Some(a), Some(b)) = (table.min_bet_cents, table.max_bet_cents)
        && a > b
    {
        return Err(ConfigError::field(
            "max_bet_cents",
            format!("{b} is below min_bet_cents {a}"),
        ));
    }
    for (i, l) in table.limits.iter().enumerate() {
        for v in [l.min_cents, l.max_cents].into_iter().flatten() {
            if !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&v) {
                return Err(ConfigError::field(
                    &format!("limits[{i}]"),
                    format!("amount {v} out of range"),
                ));
            }
        }
        if let (Some(a), Some(b)) = (l.min_cents, l.max_cents)
            && a > b
        {
            return Err(ConfigError::field(
                &format!("limits[{i}]"),
                format!("max {b} is below min {a}"),
            ));
        }
    }
    Ok(())
}

/// A bet still standing on the table after a round (banca francesa, craps), kept in the state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenBet {
    /// The bet's id, unique for its whole life on the table.
    pub id: Id,
    /// The bet-type id (the game module's vocabulary).
    pub bet_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<Id>,
    /// The stake in play (banca line bets: half the in-play value, S.I r.11).
    pub stake_cents: Cents,
    /// Banca line bets: the value of the chips placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed_cents: Option<Cents>,
    /// Craps: the number the bet is on (place / place-to-lose), or the number a come / don't
    /// come bet moved to (r.10.3, r.10.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u8>,
    /// Craps odds: the pass / don't pass / come / don't come bet they ride on (r.11.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_bet: Option<Id>,
    /// Valid throws the bet has seen (craps r.10.9: come / don't come are fixed after their
    /// first throw).
    #[serde(default)]
    pub throws: u32,
}

impl OpenBet {
    /// Check what the table state carries over from an earlier round: the stake (and a banca
    /// line bet's placed value) in 1..=[`rules_core::MAX_AMOUNT_CENTS`], as when it was placed.
    pub(crate) fn check(&self, round: &rules_core::Round) -> Result<(), rules_core::RoundError> {
        rules_core::check_carried_amount(round, &self.id, "stake_cents", self.stake_cents)?;
        if let Some(p) = self.placed_cents {
            rules_core::check_carried_amount(round, &self.id, "placed_cents", p)?;
        }
        Ok(())
    }
}

/// Parse a dice event's faces: every value 1-6.
pub(crate) fn check_faces(round: &Round, i: usize, dice: &[u8]) -> Result<(), RoundError> {
    if let Some(d) = dice.iter().find(|d| !(1..=6).contains(*d)) {
        return Err(RoundError::event(
            round,
            i,
            format!("die value {d} is not 1-6"),
        ));
    }
    Ok(())
}
