//! # rules-baccarat
//!
//! Rule engines for bacará ponto e banca (`baccarat_punto_banco`, P217/2007 T.I C.III S.III),
//! ponto e banca/Macau (`baccarat_macau`, T.I C.III S.IV) and chemin de fer
//! (`baccarat_chemin_de_fer`, T.II S.I). Pure: no I/O, no floats, no hash-ordered output.
//!
//! [`BaccaratEngine`] implements [`rules_core::Engine`] for the three game ids.
//!
//! | module | owns |
//! |---|---|
//! | [`cards`] | card values and scores (S.III/S.IV r.9; T.II S.I r.9-r.11) |
//! | [`tableau`] | the ponto e banca tableau and the chemin de fer banker's table, as constant matrices |
//! | [`commission`] | commission options and rounding of deductions in exact cents |
//! | [`punto_banco`] | both ponto e banca variants: vocabulary, deal, tableau, r.14 corrections, payouts |
//! | [`limits`] | the variants' limits side by side (S.III r.12, r.21; S.IV r.11, r.12, r.21-r.25) |
//! | [`chemin_de_fer`] | coup play, faults and reconstruction, bank money and the hand |
//! | [`shoe`] | what the shoe carries between coups (shuffle, burn, warning card) |
//! | [`sim`] | playing the three games by the rules ([`rules_core::Simulate`]): honest coups and coups with a known mistake |
//!
//! The vocabulary of the record (bet types, actions, roles, procedures, faults, void reasons,
//! settings) is documented in [`punto_banco`] and [`chemin_de_fer`].

pub mod cards;
pub mod chemin_de_fer;
pub mod commission;
pub mod limits;
pub mod punto_banco;
pub mod shoe;
pub mod sim;
pub mod tableau;
mod util;

use rules_core::{
    Adjudication, ConfigError, Configured, Engine, GameId, Options, Round, RoundError, TableConfig,
};
use serde::{Deserialize, Serialize};

pub use chemin_de_fer::{CfConfig, CfTableState};
pub use punto_banco::{PbConfig, Variant};
pub use shoe::ShoeState;

/// The baccarat engine: ponto e banca, Macau, chemin de fer.
pub struct BaccaratEngine;

/// A compiled table configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaccaratConfig {
    /// `baccarat_punto_banco` or `baccarat_macau`.
    PuntoBanco(PbConfig),
    /// `baccarat_chemin_de_fer`.
    CheminDeFer(CfConfig),
}

/// What a baccarat table carries from one coup to the next.
///
/// * `shoe`: the shoe in use (both games): shuffle seen, coups and cards out, initial burn,
///   warning card. See [`ShoeState`].
/// * `hand`: chemin de fer only: the banker, his bank and its level, won coups, garage,
///   associate, suivi right, banco avec la table, passed hand and auction, seats, hand order.
///   See [`CfTableState`]. Left at its default by ponto e banca.
///
/// `Default` is a table that has just opened: the shoe is unknown until a `shuffle` is recorded
/// and no banker holds the hand.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BaccaratState {
    pub shoe: ShoeState,
    #[serde(skip_serializing_if = "CfTableState::is_default")]
    pub hand: CfTableState,
}

const GAMES: [GameId; 3] = [
    GameId::BaccaratPuntoBanco,
    GameId::BaccaratMacau,
    GameId::BaccaratCheminDeFer,
];

impl Engine for BaccaratEngine {
    type Config = BaccaratConfig;
    type State = BaccaratState;

    fn games() -> &'static [GameId] {
        &GAMES
    }

    fn configure(table: &TableConfig) -> Result<Configured<BaccaratConfig>, ConfigError> {
        match table.regulation.as_deref() {
            None | Some("P217/2007") => {}
            Some(other) => {
                return Err(ConfigError::Regulation {
                    game: table.game,
                    regulation: util::clip(other),
                    implemented: "P217/2007",
                });
            }
        }
        match table.game {
            GameId::BaccaratPuntoBanco | GameId::BaccaratMacau => {
                let variant = if table.game == GameId::BaccaratMacau {
                    Variant::Macau
                } else {
                    Variant::Plain
                };
                let c = punto_banco::configure(table, variant)?;
                Ok(Configured {
                    config: BaccaratConfig::PuntoBanco(c.config),
                    violations: c.violations,
                })
            }
            GameId::BaccaratCheminDeFer => {
                let c = chemin_de_fer::configure(table)?;
                Ok(Configured {
                    config: BaccaratConfig::CheminDeFer(c.config),
                    violations: c.violations,
                })
            }
            game => Err(ConfigError::WrongGame {
                game,
                engine: "baccarat",
            }),
        }
    }

    fn adjudicate(
        config: &BaccaratConfig,
        state: &mut BaccaratState,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError> {
        match config {
            BaccaratConfig::PuntoBanco(c) => {
                if state.hand.banker.is_some() || state.hand.census_known {
                    return Err(RoundError::State {
                        game: c.variant.game(),
                        reason: "the state holds a chemin de fer hand".to_string(),
                    });
                }
                punto_banco::adjudicate(c, &mut state.shoe, round, options)
            }
            BaccaratConfig::CheminDeFer(c) => chemin_de_fer::adjudicate(c, state, round, options),
        }
    }
}
