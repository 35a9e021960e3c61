//! The trait every game engine implements, and the errors it may return.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{Adjudication, GameId, Round, TableConfig, Violation};

/// How much to produce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Fill [`Adjudication::notes`] with a rule-by-rule explanation (what a compliance officer
    /// reads on a disputed hand). Off on the replay hot path.
    pub explain: bool,
}

/// A table configuration checked and compiled for one engine, with the violations the
/// configuration itself shows (a limit ratio above the regulation's, a jackpot start value below
/// its minimum, ...).
#[derive(Clone, Debug)]
pub struct Configured<C> {
    pub config: C,
    pub violations: Vec<Violation>,
}

/// A game engine: pure, deterministic, no I/O.
///
/// Contract (held by every implementation and by the tests in each engine crate):
/// * the same inputs give the same output, byte for byte once serialised, on every machine;
/// * no input panics: a record the engine cannot make sense of is a [`RoundError`] naming the
///   event or bet, and a record that breaks a rule is a [`Violation`] in the adjudication;
/// * on `Err`, `state` is left exactly as it was;
/// * money is integer cents; any rounding is the regulation's and is documented where applied.
pub trait Engine {
    /// The configuration compiled once per table configuration.
    type Config: Clone + Debug + Send + Sync + 'static;
    /// What the engine carries from one round of a table to the next (the previous number, the
    /// craps point and open bets, the cards already seen in the shoe, the bank in chemin de fer,
    /// ...). `Default` is the state of a table that has just opened.
    type State: Clone
        + Debug
        + Default
        + PartialEq
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;

    /// The games this engine adjudicates.
    fn games() -> &'static [GameId];

    /// Check and compile a table configuration.
    fn configure(table: &TableConfig) -> Result<Configured<Self::Config>, ConfigError>;

    /// Adjudicate one round of a table configured with `config`, whose state before the round is
    /// `state` (updated in place on success).
    fn adjudicate(
        config: &Self::Config,
        state: &mut Self::State,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError>;
}

/// A table configuration an engine cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("table config field `{field}` {reason}")]
    Field { field: String, reason: String },
    #[error("table setting `{name}` {reason}")]
    Setting { name: String, reason: String },
    #[error("game `{game}` is not adjudicated by the {engine} engine")]
    WrongGame { game: GameId, engine: &'static str },
    #[error("regulation `{regulation}` is not implemented for {game} (implemented: {implemented})")]
    Regulation {
        game: GameId,
        regulation: String,
        implemented: &'static str,
    },
}

impl ConfigError {
    pub fn field(field: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::Field {
            field: field.to_string(),
            reason: reason.into(),
        }
    }

    pub fn setting(name: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::Setting {
            name: name.to_string(),
            reason: reason.into(),
        }
    }
}

/// A round record an engine cannot make sense of. Always names the event or bet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoundError {
    #[error("round {round}: event {index}: {reason}")]
    Event {
        round: String,
        index: usize,
        reason: String,
    },
    #[error("round {round}: bet `{bet_id}`: {reason}")]
    Bet {
        round: String,
        bet_id: String,
        reason: String,
    },
    #[error("round {round}: {reason}")]
    Round { round: String, reason: String },
    #[error("table state does not belong to {game}: {reason}")]
    State { game: GameId, reason: String },
}

impl RoundError {
    pub fn event(round: &Round, index: usize, reason: impl Into<String>) -> RoundError {
        RoundError::Event {
            round: round.round_id.to_string(),
            index,
            reason: reason.into(),
        }
    }

    pub fn bet(round: &Round, bet_id: &str, reason: impl Into<String>) -> RoundError {
        RoundError::Bet {
            round: round.round_id.to_string(),
            bet_id: bet_id.to_string(),
            reason: reason.into(),
        }
    }

    pub fn round(round: &Round, reason: impl Into<String>) -> RoundError {
        RoundError::Round {
            round: round.round_id.to_string(),
            reason: reason.into(),
        }
    }
}

/// One document of the JSON round format read by `ledgerctl adjudicate`: the table configuration
/// in force, optionally the table state before the round (as the engine serialises it; absent =
/// a freshly opened table), and the round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundInput {
    pub table: TableConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<serde_json::Value>,
    pub round: Round,
}
