//! # rules: every rule engine behind one entry point
//!
//! The audit, the CLI and the simulator do not care which engine serves a game. They call
//! [`ConfiguredTable::new`] with the table configuration in force, keep a [`TableState`] per
//! table, and call [`ConfiguredTable::adjudicate`] per round. This crate dispatches on the game id
//! to the engine crates (`rules-roulette`, `rules-dice`, `rules-blackjack`,
//! `rules-poker-sem-descarte`, `rules-baccarat`, `rules-poker`).
//!
//! Adding an engine is one line in the `engines!` invocation below.

use rules_core::{
    Adjudication, ConfigError, Engine, GameId, Id, MistakeSpec, Options, Round, RoundError,
    RoundInput, SimError, SimRng, Simulate, TableConfig, Violation,
};
use serde::{Deserialize, Serialize};

pub mod explain;

macro_rules! engines {
    ($( $variant:ident => $engine:ty ),* $(,)?) => {
        /// A table configuration compiled for its engine.
        #[derive(Clone, Debug)]
        enum Compiled {
            $( $variant(Box<<$engine as Engine>::Config>), )*
        }

        /// The state one table carries from round to round, for whichever engine serves it.
        /// Serialised as `{"engine": "...", "state": ...}`.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "engine", content = "state", rename_all = "snake_case")]
        pub enum TableState {
            $( $variant(Box<<$engine as Engine>::State>), )*
        }

        /// The games some engine adjudicates.
        pub fn has_engine(game: GameId) -> bool {
            false $( || <$engine as Engine>::games().contains(&game) )*
        }

        fn compile(table: &TableConfig) -> Result<(Compiled, Vec<Violation>), ConfigError> {
            $(
                if <$engine as Engine>::games().contains(&table.game) {
                    let c = <$engine as Engine>::configure(table)?;
                    return Ok((Compiled::$variant(Box::new(c.config)), c.violations));
                }
            )*
            Err(ConfigError::field(
                "game",
                format!("{} has no rule engine", table.game),
            ))
        }

        impl Compiled {
            fn fresh_state(&self) -> TableState {
                match *self {
                    $( Compiled::$variant(_) => TableState::$variant(Box::default()), )*
                }
            }

            fn adjudicate(
                &self,
                game: GameId,
                state: &mut TableState,
                round: &Round,
                options: &Options,
            ) -> Result<Adjudication, RoundError> {
                #[allow(unreachable_patterns)]
                match (self, state) {
                    $(
                        (Compiled::$variant(c), TableState::$variant(s)) => {
                            <$engine as Engine>::adjudicate(c, s.as_mut(), round, options)
                        }
                    )*
                    _ => Err(RoundError::State {
                        game,
                        reason: "the table state belongs to another engine".to_string(),
                    }),
                }
            }

            fn state_from_json(
                &self,
                game: GameId,
                value: serde_json::Value,
            ) -> Result<TableState, RoundError> {
                let bad = |e: serde_json::Error| RoundError::State {
                    game,
                    reason: e.to_string(),
                };
                match *self {
                    $(
                        Compiled::$variant(_) => Ok(TableState::$variant(Box::new(
                            serde_json::from_value(value).map_err(bad)?,
                        ))),
                    )*
                }
            }
        }

        impl TableState {
            /// The engine's own state as JSON (the `state` field of a [`RoundInput`]).
            pub fn to_json(&self) -> serde_json::Value {
                match self {
                    $( TableState::$variant(s) => serde_json::to_value(s).unwrap_or_default(), )*
                }
            }
        }
    };
}

engines! {
    Roulette => rules_roulette::RouletteEngine,
    Dice => rules_dice::DiceEngine,
    Poker => rules_poker::PokerEngine,
    Baccarat => rules_baccarat::BaccaratEngine,
    Blackjack => rules_blackjack::BlackjackEngine,
    PokerSemDescarte => rules_poker_sem_descarte::PokerSemDescarteEngine,
}

macro_rules! simulators {
    ($( $variant:ident => $engine:ty ),* $(,)?) => {
        /// The mistakes a simulated table of `game` can be told to make.
        pub fn mistakes(game: GameId) -> Vec<&'static MistakeSpec> {
            $(
                if <$engine as Engine>::games().contains(&game) {
                    return <$engine as Simulate>::mistakes_for(game);
                }
            )*
            Vec::new()
        }

        /// A typical approved configuration of `game`, if a simulator plays it.
        pub fn example_table(game: GameId) -> Option<TableConfig> {
            $(
                if <$engine as Engine>::games().contains(&game) {
                    return Some(<$engine as Simulate>::example_table(game));
                }
            )*
            None
        }

        /// Whether a simulator plays `game`.
        pub fn has_simulator(game: GameId) -> bool {
            false $( || <$engine as Engine>::games().contains(&game) )*
        }

        impl ConfiguredTable {
            /// Play one round of this table by the rules from `state` (not modified), honestly
            /// or with `mistake`. See [`rules_core::Simulate`].
            pub fn simulate(
                &self,
                state: &TableState,
                round_id: Id,
                start_ms: i64,
                rng: &mut SimRng,
                mistake: Option<&str>,
            ) -> Result<Round, SimError> {
                self.simulate_with_jackpot(state, round_id, start_ms, rng, mistake, None)
            }

            /// [`ConfiguredTable::simulate`] at a table whose jackpot stands at
            /// `jackpot_before_cents` before the round (from the caller's pool accounts).
            pub fn simulate_with_jackpot(
                &self,
                state: &TableState,
                round_id: Id,
                start_ms: i64,
                rng: &mut SimRng,
                mistake: Option<&str>,
                jackpot_before_cents: Option<rules_core::Cents>,
            ) -> Result<Round, SimError> {
                #[allow(unreachable_patterns)]
                match (&self.compiled, state) {
                    $(
                        (Compiled::$variant(c), TableState::$variant(s)) => {
                            <$engine as Simulate>::simulate_with_jackpot(
                                &self.table, c, s, round_id, start_ms, rng, mistake,
                                jackpot_before_cents,
                            )
                        }
                    )*
                    _ => Err(SimError::NoSimulator(self.table.game)),
                }
            }
        }
    };
}

simulators! {
    Roulette => rules_roulette::RouletteEngine,
    Dice => rules_dice::DiceEngine,
    Poker => rules_poker::PokerEngine,
    Baccarat => rules_baccarat::BaccaratEngine,
    Blackjack => rules_blackjack::BlackjackEngine,
    PokerSemDescarte => rules_poker_sem_descarte::PokerSemDescarteEngine,
}

/// A table configuration checked and compiled for its engine.
#[derive(Clone, Debug)]
pub struct ConfiguredTable {
    table: TableConfig,
    compiled: Compiled,
    violations: Vec<Violation>,
}

impl ConfiguredTable {
    /// Check and compile `table` for its game's engine.
    pub fn new(table: TableConfig) -> Result<ConfiguredTable, ConfigError> {
        let (compiled, violations) = compile(&table)?;
        Ok(ConfiguredTable {
            table,
            compiled,
            violations,
        })
    }

    pub fn game(&self) -> GameId {
        self.table.game
    }

    pub fn config(&self) -> &TableConfig {
        &self.table
    }

    /// What the configuration itself breaks (limit ratios, jackpot start values, ...).
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// The state of a table that has just opened.
    pub fn fresh_state(&self) -> TableState {
        self.compiled.fresh_state()
    }

    /// A table state from the engine's JSON form.
    pub fn state_from_json(&self, value: serde_json::Value) -> Result<TableState, RoundError> {
        self.compiled.state_from_json(self.table.game, value)
    }

    /// Adjudicate one round (state updated on success, unchanged on error).
    pub fn adjudicate(
        &self,
        state: &mut TableState,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError> {
        self.compiled
            .adjudicate(self.table.game, state, round, options)
    }
}

/// Why a [`RoundInput`] document could not be adjudicated.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Round(#[from] RoundError),
}

/// The result of adjudicating one [`RoundInput`] document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputResult {
    /// Violations of the table configuration itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_violations: Vec<Violation>,
    pub adjudication: Adjudication,
    /// The table state after the round (feed it to the next round's `state`).
    pub state_after: serde_json::Value,
}

/// Adjudicate one document of the JSON round format.
pub fn adjudicate_input(input: &RoundInput, options: &Options) -> Result<InputResult, InputError> {
    let table = ConfiguredTable::new(input.table.clone())?;
    let mut state = match &input.state {
        Some(v) => table.state_from_json(v.clone())?,
        None => table.fresh_state(),
    };
    let adjudication = table.adjudicate(&mut state, &input.round, options)?;
    Ok(InputResult {
        config_violations: table.violations().to_vec(),
        adjudication,
        state_after: state.to_json(),
    })
}
