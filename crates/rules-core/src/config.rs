//! The table configuration in force for a round.
//!
//! Common fields (limits, commission option, decks, seats, jackpot) are typed; everything a single
//! game needs beyond them (the roulette wheel order, the craps bar, the Macau exposure cap, the
//! poker commission mode, ...) is a named [`Setting`] that the game's engine documents and parses
//! once, in [`crate::Engine::configure`], with an error naming the setting when it is wrong.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::ConfigError;
use crate::{Cents, GameId};

/// Table configuration, as set on the ledger by a table-configuration event and in force from
/// that event on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableConfig {
    /// Which game the table plays.
    pub game: GameId,
    /// The table's identifier (informational for the engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_id: Option<String>,
    /// The casino (informational for the engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub casino_id: Option<String>,
    /// The regulation the table was approved under, e.g. `"P217/2007"` (the default for land
    /// games), `"P1364/2001"` (older blackjack), `"P461/2001"` (older póquer sem descarte and
    /// sintético). Engines reject a regulation they do not implement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regulation: Option<String>,
    /// Table minimum bet in cents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_bet_cents: Option<Cents>,
    /// Table maximum bet in cents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bet_cents: Option<Cents>,
    /// Per-chance limits where the game has them (roulette chances, baccarat tie/pairs, ...).
    /// The chance names are the engine's bet-type ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<ChanceLimit>,
    /// Commission option where the game has one (baccarat: `none`, `5pct`, `half_on_5`; poker:
    /// see the poker engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commission: Option<String>,
    /// Number of decks in the shoe, for card games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decks: Option<u8>,
    /// Number of seats at the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seats: Option<u8>,
    /// Jackpot ("prémio acumulado") settings, for tables that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jackpot: Option<JackpotConfig>,
    /// Game-specific settings, by name. Each engine documents the names it reads.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, Setting>,
}

impl TableConfig {
    /// A configuration with only the game set.
    pub fn new(game: GameId) -> TableConfig {
        TableConfig {
            game,
            table_id: None,
            casino_id: None,
            regulation: None,
            min_bet_cents: None,
            max_bet_cents: None,
            limits: Vec::new(),
            commission: None,
            decks: None,
            seats: None,
            jackpot: None,
            settings: BTreeMap::new(),
        }
    }

    /// The per-chance limit for `chance`, if configured.
    pub fn limit(&self, chance: &str) -> Option<&ChanceLimit> {
        self.limits.iter().find(|l| l.chance == chance)
    }

    /// The table minimum, or an error naming the field.
    pub fn require_min(&self) -> Result<Cents, ConfigError> {
        match self.min_bet_cents {
            Some(v) if v > 0 => Ok(v),
            Some(_) => Err(ConfigError::field("min_bet_cents", "must be positive")),
            None => Err(ConfigError::field(
                "min_bet_cents",
                "is required for this game",
            )),
        }
    }

    /// The table maximum, or an error naming the field.
    pub fn require_max(&self) -> Result<Cents, ConfigError> {
        match self.max_bet_cents {
            Some(v) if v > 0 => Ok(v),
            Some(_) => Err(ConfigError::field("max_bet_cents", "must be positive")),
            None => Err(ConfigError::field(
                "max_bet_cents",
                "is required for this game",
            )),
        }
    }

    /// Raw setting.
    pub fn setting(&self, name: &str) -> Option<&Setting> {
        self.settings.get(name)
    }

    /// Integer setting, `default` when absent, an error naming it when of the wrong kind.
    pub fn int_setting(&self, name: &str, default: i64) -> Result<i64, ConfigError> {
        match self.settings.get(name) {
            None => Ok(default),
            Some(Setting::Int(v)) => Ok(*v),
            Some(other) => Err(ConfigError::setting(
                name,
                format!("must be an integer, got {}", other.kind()),
            )),
        }
    }

    /// Optional integer setting.
    pub fn opt_int_setting(&self, name: &str) -> Result<Option<i64>, ConfigError> {
        match self.settings.get(name) {
            None => Ok(None),
            Some(Setting::Int(v)) => Ok(Some(*v)),
            Some(other) => Err(ConfigError::setting(
                name,
                format!("must be an integer, got {}", other.kind()),
            )),
        }
    }

    /// Boolean setting, `default` when absent.
    pub fn bool_setting(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.settings.get(name) {
            None => Ok(default),
            Some(Setting::Bool(v)) => Ok(*v),
            Some(other) => Err(ConfigError::setting(
                name,
                format!("must be true or false, got {}", other.kind()),
            )),
        }
    }

    /// Text setting, `None` when absent.
    pub fn text_setting(&self, name: &str) -> Result<Option<&str>, ConfigError> {
        match self.settings.get(name) {
            None => Ok(None),
            Some(Setting::Text(v)) => Ok(Some(v.as_str())),
            Some(other) => Err(ConfigError::setting(
                name,
                format!("must be a string, got {}", other.kind()),
            )),
        }
    }

    /// List-of-integers setting, `None` when absent.
    pub fn list_setting(&self, name: &str) -> Result<Option<&[i64]>, ConfigError> {
        match self.settings.get(name) {
            None => Ok(None),
            Some(Setting::List(v)) => Ok(Some(v.as_slice())),
            Some(other) => Err(ConfigError::setting(
                name,
                format!("must be a list of integers, got {}", other.kind()),
            )),
        }
    }

    /// Error if any setting is not in `known` (catches misspelt settings, which would otherwise
    /// silently fall back to a default).
    pub fn only_settings(&self, known: &[&str]) -> Result<(), ConfigError> {
        for name in self.settings.keys() {
            if !known.contains(&name.as_str()) {
                return Err(ConfigError::setting(
                    name,
                    format!(
                        "is not a setting of {} (known: {})",
                        self.game,
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Minimum and maximum stake for one chance (bet type).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChanceLimit {
    /// The engine's bet-type id, e.g. `"straight"`, `"tie"`.
    pub chance: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cents: Option<Cents>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cents: Option<Cents>,
}

/// A value of a game-specific setting. In JSON: `true`, `12`, `"french"` or `[600, 1300]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Setting {
    Bool(bool),
    Int(i64),
    Text(String),
    List(Vec<i64>),
}

impl Setting {
    fn kind(&self) -> &'static str {
        match self {
            Setting::Bool(_) => "a boolean",
            Setting::Int(_) => "an integer",
            Setting::Text(_) => "a string",
            Setting::List(_) => "a list",
        }
    }
}

/// Table jackpot ("prémio acumulado") settings: approved by the inspectorate on the casino's
/// proposal (P217/2007 T.I C.III S.I r.40; S.II r.3, r.8), so they are configuration, not code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JackpotConfig {
    /// The ledger's pool id for this jackpot (the jackpot crate keeps its accounts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_id: Option<String>,
    /// The one fixed jackpot chip value, in cents.
    pub bet_amount_cents: Cents,
    /// Share of each chip credited to the jackpot display, in basis points (7500 = 75%).
    pub increment_bp: u32,
    /// Start (and reset) value of the display, in cents.
    pub start_value_cents: Cents,
    /// Approved pay table. Empty means the regulation's own fixed table where it has one
    /// (P1364/2001 r.43 for blackjack, P461/2001 r.9 for póquer sem descarte).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paytable: Vec<JackpotPrize>,
    /// `automatic` or `manual` collection (P217/2007 T.I C.III S.I r.41).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
}

/// One line of a jackpot pay table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JackpotPrize {
    /// The engine's combination id (e.g. `"four_aces_same_colour"`, `"royal_flush"`).
    pub combination: String,
    pub award: Award,
}

/// What a jackpot combination wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Award {
    /// The whole jackpot (or what is left after the round's smaller prizes).
    Whole,
    /// A share of the jackpot, in basis points (1000 = 10%).
    Percent { bp: u32 },
    /// A fixed multiple of the jackpot chip.
    Multiple { times: u32 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_by_kind_and_errors_name_the_setting() {
        let cfg: TableConfig = serde_json::from_str(
            r#"{"game":"craps","settings":{"bar":12,"wheel":"french","on":true,"mins":[600,1300]}}"#,
        )
        .unwrap();
        assert_eq!(cfg.int_setting("bar", 2).unwrap(), 12);
        assert_eq!(cfg.int_setting("absent", 7).unwrap(), 7);
        assert_eq!(cfg.text_setting("wheel").unwrap(), Some("french"));
        assert!(cfg.bool_setting("on", false).unwrap());
        assert_eq!(cfg.list_setting("mins").unwrap(), Some(&[600, 1300][..]));
        let e = cfg.int_setting("wheel", 0).unwrap_err().to_string();
        assert!(e.contains("`wheel`") && e.contains("integer"), "{e}");
        let e = cfg.only_settings(&["bar"]).unwrap_err().to_string();
        assert!(e.contains("is not a setting of craps"), "{e}");
    }

    /// Minimum and maximum must be present and positive; each error names its field.
    #[test]
    fn the_table_limits_are_required_and_positive() {
        let mut c = TableConfig::new(GameId::Craps);
        let field = |r: Result<Cents, ConfigError>| match r {
            Err(ConfigError::Field { field, reason }) => format!("{field}: {reason}"),
            other => format!("{other:?}"),
        };
        assert_eq!(
            field(c.require_min()),
            "min_bet_cents: is required for this game"
        );
        assert_eq!(
            field(c.require_max()),
            "max_bet_cents: is required for this game"
        );
        for bad in [-5, 0] {
            c.min_bet_cents = Some(bad);
            c.max_bet_cents = Some(bad);
            assert_eq!(field(c.require_min()), "min_bet_cents: must be positive");
            assert_eq!(field(c.require_max()), "max_bet_cents: must be positive");
        }
        c.min_bet_cents = Some(1);
        c.max_bet_cents = Some(2);
        assert_eq!(c.require_min(), Ok(1));
        assert_eq!(c.require_max(), Ok(2));
    }

    /// Each typed accessor: the value, its default when absent, an error naming the setting
    /// and the kind it found when of another kind; the per-chance limits by chance.
    #[test]
    fn typed_settings_and_chance_limits() {
        let cfg: TableConfig = serde_json::from_str(
            r#"{"game":"craps","limits":[{"chance":"pass","max_cents":500},{"chance":"field","min_cents":5}],
                "settings":{"bar":12,"wheel":"french","on":false,"mins":[600]}}"#,
        )
        .unwrap();
        assert_eq!(cfg.limit("field").unwrap().min_cents, Some(5));
        assert_eq!(cfg.limit("pass").unwrap().max_cents, Some(500));
        assert!(cfg.limit("any").is_none());
        assert_eq!(cfg.setting("bar"), Some(&Setting::Int(12)));
        assert_eq!(cfg.setting("none"), None);
        assert_eq!(cfg.opt_int_setting("bar"), Ok(Some(12)));
        assert_eq!(cfg.opt_int_setting("none"), Ok(None));
        assert!(!cfg.bool_setting("on", true).unwrap());
        assert!(cfg.bool_setting("none", true).unwrap());
        assert_eq!(cfg.text_setting("none"), Ok(None));
        assert_eq!(cfg.list_setting("none"), Ok(None));
        let err = |r: Result<(), ConfigError>| r.unwrap_err().to_string();
        let kinds = [
            (
                err(cfg.opt_int_setting("on").map(|_| ())),
                "`on`",
                "got a boolean",
            ),
            (
                err(cfg.bool_setting("bar", true).map(|_| ())),
                "`bar`",
                "got an integer",
            ),
            (
                err(cfg.text_setting("mins").map(|_| ())),
                "`mins`",
                "got a list",
            ),
            (
                err(cfg.list_setting("wheel").map(|_| ())),
                "`wheel`",
                "got a string",
            ),
            (
                err(cfg.int_setting("mins", 0).map(|_| ())),
                "`mins`",
                "got a list",
            ),
        ];
        for (e, name, kind) in kinds {
            assert!(e.contains(name) && e.contains(kind), "{e}");
        }
        assert_eq!(cfg.only_settings(&["bar", "wheel", "on", "mins"]), Ok(()));
        let e = err(cfg.only_settings(&[]));
        assert!(e.contains("(known: none)"), "{e}");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let e = serde_json::from_str::<TableConfig>(r#"{"game":"craps","minbet":5}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("minbet"), "{e}");
    }

    #[test]
    fn awards_serde() {
        let a: Award = serde_json::from_str(r#"{"kind":"percent","bp":1000}"#).unwrap();
        assert_eq!(a, Award::Percent { bp: 1000 });
        let a: Award = serde_json::from_str(r#"{"kind":"whole"}"#).unwrap();
        assert_eq!(a, Award::Whole);
    }
}
