//! # rules-roulette: American, French and online French roulette
//!
//! Rule engines for `roulette_american` (P217/2007 T.I C.I S.I), `roulette_french` (P217/2007
//! T.I C.I S.II) and `roulette_french_online` (R807/2015), behind one [`RouletteEngine`]
//! implementing [`rules_core::Engine`]. Pure: no I/O, no floats, no hash-order in outputs.
//!
//! * [`tables`]: wheel orders, colours, layout geometry, series compositions (constant tables,
//!   exhaustively tested);
//! * [`bets`]: the bet types and their payouts;
//! * [`american`], [`french`], [`french_online`]: one module per game, each documenting the
//!   complete vocabulary the engine understands for that game (bet types, selections, chips,
//!   attrs, roles, procedures, faults, void reasons, settings, regulation values);
//! * `core`: the adjudication shared by the three games (each rule next to its citation);
//! * [`sim`]: the simulator ([`rules_core::Simulate`]): plays whole spins by the rules, honest or
//!   with one chosen mistake.
//!
//! ## Table state ([`RouletteState`])
//! What one spin leaves for the next: the previous winning number (relaunch after a void spin,
//! r.22 / r.14), the direction of the last launch (r.21 / r.13), the ball in use and since when
//! (r.17 / r.9), the spinning dealer and since when (r.33 / r.25), and when the previous round's
//! last payment was made (r.19 / r.11).

pub mod american;
pub mod bets;
mod core;
pub mod french;
pub mod french_online;
pub mod sim;
pub mod tables;

use rules_core::{
    Adjudication, Cents, ConfigError, Configured, Direction, Engine, GameId, Options, Round,
    RoundError, TableConfig, Violation,
};
use serde::{Deserialize, Serialize};

use crate::bets::{Class, Kind, N_CLASSES, N_KINDS, Series};

/// The roulette engine (all three games).
pub struct RouletteEngine;

/// Which numbering the wheel has (P217/2007 T.I C.I S.I r.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WheelOrder {
    French,
    American,
}

/// What happens to the outside bets (simple chances, dozens, columns and their splits) when 0
/// comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroRule {
    /// They lose outright (P217/2007 T.I C.I S.I r.28; S.II r.19; online setting `lose`).
    Lose,
    /// Online only, setting `la_partage`: the simple chances lose half (half the stake, rounded
    /// down to the cent, is returned); dozens and columns lose outright.
    LaPartage,
}

/// Per-chance limits in force (the chance's own limit, else the table's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limit {
    pub min: Option<Cents>,
    pub max: Option<Cents>,
}

/// A roulette table configuration, compiled once.
#[derive(Clone, Debug)]
pub struct RouletteConfig {
    pub game: GameId,
    pub wheel: WheelOrder,
    /// Payout per pay class as (numerator, denominator) to 1.
    pub payouts: [(i64, i64); N_CLASSES],
    pub zero_rule: ZeroRule,
    pub zero_corner_allowed: bool,
    /// American: marked-value chip sets are provided (P217/2007 T.I C.I S.I r.16).
    pub marked_value_chips: bool,
    /// Announced (series / neighbours) bets accepted (French land, digest note N10).
    pub announced_bets: bool,
    /// Limits per bet type (index = [`Kind`] as usize).
    pub limits: [Limit; N_KINDS],
    pub table_min: Option<Cents>,
    /// The straight-up maximum (r.9, r.32(d)).
    pub straight_max: Option<Cents>,
    /// Série grande, pequena, órfãos (land: P217 S.I r.25(a); online: the operator's).
    pub series: [Option<Series>; 3],
    /// Online: number-and-neighbours / finals call bets offered (R807/2015 r.8(d)(e)).
    pub call_neighbours: bool,
    pub call_finals: bool,
    /// Online: multi-player wheel (R807/2015 r.4, r.5).
    pub multi_player: bool,
}

impl RouletteConfig {
    pub(crate) fn land(&self) -> bool {
        self.game != GameId::RouletteFrenchOnline
    }
    pub(crate) fn payout(&self, c: Class) -> (i64, i64) {
        self.payouts[c as usize]
    }
}

/// What the engine carries from one spin of a table to the next. `Default` = a table just opened.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouletteState {
    /// Winning number of the last valid spin: after a void spin the ball must be relaunched
    /// from it (P217/2007 T.I C.I S.I r.22; S.II r.14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_number: Option<u8>,
    /// Direction of the last launch: launches alternate (S.I r.21; S.II r.13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_ball_direction: Option<Direction>,
    /// Ball in use (the `ball_id` of the launches) and the time of the first launch with it
    /// (balls alternate hourly, S.I r.17; S.II r.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ball_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ball_since_ms: Option<i64>,
    /// Spinning dealer (the `spinner` role's player, or `seat:N`) and since when (at most one
    /// hour, S.I r.33; S.II r.25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spinner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spinner_since_ms: Option<i64>,
    /// Time of the previous round's last collection or payment: the next launch must come
    /// after it (S.I r.19; S.II r.11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_payment_at_ms: Option<i64>,
}

const GAMES: [GameId; 3] = [
    GameId::RouletteAmerican,
    GameId::RouletteFrench,
    GameId::RouletteFrenchOnline,
];

impl Engine for RouletteEngine {
    type Config = RouletteConfig;
    type State = RouletteState;

    fn games() -> &'static [GameId] {
        &GAMES
    }

    fn configure(table: &TableConfig) -> Result<Configured<RouletteConfig>, ConfigError> {
        match table.game {
            GameId::RouletteAmerican => american::configure(table),
            GameId::RouletteFrench => french::configure(table),
            GameId::RouletteFrenchOnline => french_online::configure(table),
            game => Err(ConfigError::WrongGame {
                game,
                engine: "roulette",
            }),
        }
    }

    fn adjudicate(
        config: &RouletteConfig,
        state: &mut RouletteState,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError> {
        core::adjudicate(config, state, round, options)
    }
}

/// Common configuration parsing: regulation, pockets, limits.
pub(crate) fn base_config(
    table: &TableConfig,
    regulation: &'static str,
    kinds: &[Kind],
) -> Result<RouletteConfig, ConfigError> {
    match table.regulation.as_deref() {
        None => {}
        Some(r) if r == regulation => {}
        Some(r) => {
            return Err(ConfigError::Regulation {
                game: table.game,
                regulation: r.chars().take(64).collect(),
                implemented: regulation,
            });
        }
    }
    // Only 37-pocket wheels, 0 to 36 (P217/2007 T.I C.I S.I r.2; S.II r.2; R807/2015 r.6(a)).
    let pockets = table.int_setting("pockets", 37)?;
    if pockets != 37 {
        return Err(ConfigError::setting(
            "pockets",
            format!("must be 37 (0-36, no double zero: P217/2007 T.I C.I S.I r.2), got {pockets}"),
        ));
    }
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
    let mut limits = [Limit::default(); N_KINDS];
    for k in kinds {
        if k.class().is_some() {
            limits[*k as usize] = Limit {
                min: table.min_bet_cents,
                max: table.max_bet_cents,
            };
        }
    }
    for (i, l) in table.limits.iter().enumerate() {
        let field = format!("limits[{i}]");
        let Some(kind) = Kind::parse(&l.chance).filter(|k| kinds.contains(k)) else {
            return Err(ConfigError::field(
                &field,
                format!(
                    "chance `{}` is not a bet type of {}",
                    l.chance.chars().take(40).collect::<String>(),
                    table.game
                ),
            ));
        };
        if table.limits[..i].iter().any(|p| p.chance == l.chance) {
            return Err(ConfigError::field(
                &field,
                format!("chance `{}` is listed twice", l.chance),
            ));
        }
        for v in [l.min_cents, l.max_cents].into_iter().flatten() {
            if !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&v) {
                return Err(ConfigError::field(
                    &field,
                    format!("amount {v} out of range"),
                ));
            }
        }
        if let (Some(a), Some(b)) = (l.min_cents, l.max_cents)
            && a > b
        {
            return Err(ConfigError::field(
                &field,
                format!("max {b} is below min {a}"),
            ));
        }
        let slot = &mut limits[kind as usize];
        if l.min_cents.is_some() {
            slot.min = l.min_cents;
        }
        if l.max_cents.is_some() {
            slot.max = l.max_cents;
        }
    }
    let zero_corner_allowed = table.bool_setting("zero_corner_allowed", false)?;
    Ok(RouletteConfig {
        game: table.game,
        wheel: WheelOrder::French,
        payouts: bets::LAND_PAYOUTS,
        zero_rule: ZeroRule::Lose,
        zero_corner_allowed,
        marked_value_chips: false,
        announced_bets: false,
        straight_max: limits[Kind::Straight as usize].max,
        table_min: table.min_bet_cents,
        limits,
        series: [None, None, None],
        call_neighbours: false,
        call_finals: false,
        multi_player: false,
    })
}

/// RL_LIMIT_RATIO: for each chance, max ≤ k × min (P217/2007 T.I C.I S.I r.32(a)(b); S.II r.24).
/// "Até 30 vezes superior" read as max ≤ 30 × min (digest note N2); each chance's own minimum
/// is used where it has one (note N3).
pub(crate) fn limit_ratio_violations(
    cfg: &RouletteConfig,
    cite_multiple: &'static str,
    cite_simple: &'static str,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, id) in bets::KIND_IDS.iter().enumerate() {
        let Some(kind) = Kind::parse(id) else {
            continue;
        };
        let Some(class) = kind.class() else { continue };
        let l = cfg.limits[i];
        let (Some(min), Some(max)) = (l.min, l.max) else {
            continue;
        };
        let k = bets::LIMIT_RATIO[class as usize];
        if max > min.saturating_mul(k) {
            let cite = if class == Class::EvenMoney {
                cite_simple
            } else {
                cite_multiple
            };
            out.push(Violation::new(
                "RL_LIMIT_RATIO",
                rules_core::Severity::Medium,
                cite,
                format!("{id}: maximum {max} cents is more than {k} × the minimum {min} cents"),
            ));
        }
    }
    out
}

/// Parse an online payout setting `[numerator, denominator]`.
pub(crate) fn payout_setting(
    table: &TableConfig,
    name: &str,
    default: (i64, i64),
) -> Result<(i64, i64), ConfigError> {
    match table.list_setting(name)? {
        None => Ok(default),
        Some([n, d]) if (1..=1_000_000).contains(n) && (1..=1_000_000).contains(d) => Ok((*n, *d)),
        Some(_) => Err(ConfigError::setting(
            name,
            "must be [numerator, denominator] with both in 1..=1000000 (e.g. [35, 1])",
        )),
    }
}
