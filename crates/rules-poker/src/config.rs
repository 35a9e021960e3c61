//! The table configuration, parsed and checked once ([`crate::PokerEngine`]'s `configure`).
//!
//! Typed fields of [`rules_core::TableConfig`] read:
//! * `game`: `poker_holdem`, `poker_omaha`, `poker_sintetico` or `poker_holdem_online`;
//! * `regulation`: `"P217/2007"` (default for the land games), `"P461/2001"` (sintético only),
//!   `"Reg806/2015"` (default and only value for hold'em online);
//! * `min_bet_cents` (required): the table minimum: big blind (r.83; Reg806 r.22), twice the
//!   small blind at P217 tables (r.82, so it must be even there), the sintético ante (r.102; P461
//!   r.38), the minimum opening bet (r.20; Reg806 r.23) and raise increment (r.86), the odd-chip
//!   unit at land tables (r.67);
//! * `max_bet_cents` (optional): the table maximum (base of the session fee when
//!   `session_fee_base` is `table_max`; a fee charged on it at a table without one is
//!   POKER_SESSION_FEE_BASE_MISSING when it arises, the configuration is not refused);
//! * `commission`: `per_hand` (r.7(a); Reg806 r.17(a); P461 r.55), `per_session` (P217 r.7(b)),
//!   `buy_in` (Reg806 r.17(b)) or `none` (= `per_hand` at 0, legal only at P217 tables, "até
//!   5%"). Required except at P461 tables, where it defaults to `per_hand` at 3%;
//! * `seats`: seats at the table (default 10, sintético 11; at most 10, sintético 11, online
//!   2–10: r.6, r.99; Reg806 r.4(a));
//! * `decks`: absent or 1.
//!
//! Settings (`TableConfig::settings`):
//!
//! | name | type | default | meaning |
//! |---|---|---|---|
//! | `commission_bp` | int | required unless `none` (P461: 300) | rate in basis points (500 = 5%) |
//! | `commission_cap_cents` | int | none | P217 per-hand cap per hand (r.7(a)) |
//! | `session_fee_base` | text | `table_max` | `table_max` or `cave`: base of the P217 session fee (r.7(b); digest N23) |
//! | `limit` | text | `no_limit` | `limit` (half the pot), `pot_limit`, `no_limit` (r.21; Reg806 r.24) |
//! | `max_raises` | int | none | raises per betting round (sintético r.47; online Reg806 r.38); refused for omaha/hold'em, fixed at 3 by r.87 |
//! | `small_blind_cents` | int | none (not checked) | online small blind set by the operator (Reg806 r.22) |
//! | `stardilho` | bool | false | sintético estardilho/restardilho allowed by the concessionaire (r.106; P461 r.43) |
//!
//! Config violations: `POKER_COMMISSION_RATE_ILLEGAL` when the rate is outside the legal range
//! (P217 per hand above 5%, per session outside 5–20%; P461 other than 3% of the pot; online per
//! hand outside 1–5%, buy-in outside 5–20%). The engine still computes the configured rate.

use rules_core::{
    Cents, ConfigError, Configured, GameId, MAX_AMOUNT_CENTS, Severity, TableConfig, Violation,
};

use crate::codes;
use crate::variant::{
    Cites, HOLDEM_CITES, OMAHA_CITES, ONLINE_CITES, SINTETICO_CITES, SINTETICO_P461_CITES,
    VariantRules,
};
use crate::{holdem, holdem_online, omaha, sintetico};

/// Every setting name this engine reads.
pub const SETTINGS: [&str; 7] = [
    "commission_bp",
    "commission_cap_cents",
    "session_fee_base",
    "limit",
    "max_raises",
    "small_blind_cents",
    "stardilho",
];

/// The regulation a table plays under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regulation {
    /// Portaria 217/2007 (land omaha, hold'em, sintético).
    P217,
    /// Portaria 461/2001 part II (sintético before March 2007).
    P461,
    /// Regulamento 806/2015 (hold'em online).
    Reg806,
}

/// Base of the P217 per-session fee (r.7(b) "do máximo da mesa ou da cave").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeeBase {
    TableMax,
    Cave,
}

/// How the house takes its share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commission {
    /// A percentage of each pot payment (P217 r.7(a), r.65; P461 r.55; Reg806 r.17(a), r.19),
    /// optionally capped per hand (P217 r.7(a) only).
    PerHand { bp: u32, cap: Option<Cents> },
    /// A fee per player per session, nothing from the pots (P217 r.7(b)).
    PerSession { bp: u32, base: FeeBase },
    /// A fee on each buy-in and rebuy, nothing from the pots (Reg806 r.17(b)).
    BuyIn { bp: u32 },
}

impl Commission {
    pub fn bp(self) -> u32 {
        match self {
            Commission::PerHand { bp, .. }
            | Commission::PerSession { bp, .. }
            | Commission::BuyIn { bp } => bp,
        }
    }
}

/// The maximum-bet regime (r.21; Reg806 r.24).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// "Com limite": the maximum bet is half the pot.
    Limit,
    /// "Com limite de pote": the maximum bet is the pot.
    PotLimit,
    /// "Pote sem limite": the player's cave.
    NoLimit,
}

/// A checked table configuration.
#[derive(Clone, Debug)]
pub struct PokerConfig {
    pub rules: VariantRules,
    pub cites: Cites,
    pub regulation: Regulation,
    pub min_bet: Cents,
    pub max_bet: Option<Cents>,
    /// Small blind amount to check, if known (P217: half the minimum; online: the setting).
    pub small_blind: Option<Cents>,
    pub commission: Commission,
    pub limit: Limit,
    /// Configured raise cap (sintético, online).
    pub max_raises: Option<u32>,
    pub stardilho: bool,
    pub seats: u8,
}

impl PokerConfig {
    /// Unit of the odd-chip split: the table minimum at land tables (r.67; P461 r.56), one cent
    /// online ("até ao valor mínimo suscetível de divisão", Reg806 r.62).
    pub fn split_unit(&self) -> Cents {
        if self.rules.land { self.min_bet } else { 1 }
    }
}

fn regulation_name(r: Regulation) -> &'static str {
    match r {
        Regulation::P217 => "P217/2007",
        Regulation::P461 => "P461/2001",
        Regulation::Reg806 => "Reg806/2015",
    }
}

/// Parse and check `table`.
pub fn configure(table: &TableConfig) -> Result<Configured<PokerConfig>, ConfigError> {
    let rules = match table.game {
        GameId::PokerHoldem => holdem::RULES,
        GameId::PokerOmaha => omaha::RULES,
        GameId::PokerSintetico => sintetico::RULES,
        GameId::PokerHoldemOnline => holdem_online::RULES,
        game => {
            return Err(ConfigError::WrongGame {
                game,
                engine: "poker",
            });
        }
    };
    table.only_settings(&SETTINGS)?;
    let implemented = match table.game {
        GameId::PokerSintetico => "P217/2007, P461/2001",
        GameId::PokerHoldemOnline => "Reg806/2015",
        _ => "P217/2007",
    };
    let regulation = match (table.game, table.regulation.as_deref()) {
        (GameId::PokerHoldemOnline, None | Some("Reg806/2015")) => Regulation::Reg806,
        (GameId::PokerHoldemOnline, _) => {
            return Err(ConfigError::Regulation {
                game: table.game,
                regulation: table.regulation.clone().unwrap_or_default(),
                implemented,
            });
        }
        (GameId::PokerSintetico, Some("P461/2001")) => Regulation::P461,
        (_, None | Some("P217/2007")) => Regulation::P217,
        (_, Some(other)) => {
            return Err(ConfigError::Regulation {
                game: table.game,
                regulation: other.chars().take(32).collect(),
                implemented,
            });
        }
    };
    let cites = match (table.game, regulation) {
        (GameId::PokerHoldem, _) => HOLDEM_CITES,
        (GameId::PokerOmaha, _) => OMAHA_CITES,
        (GameId::PokerSintetico, Regulation::P461) => SINTETICO_P461_CITES,
        (GameId::PokerSintetico, _) => SINTETICO_CITES,
        _ => ONLINE_CITES,
    };
    let min_bet = table.require_min()?;
    if min_bet > MAX_AMOUNT_CENTS {
        return Err(ConfigError::field(
            "min_bet_cents",
            "is above the ledger's ceiling",
        ));
    }
    let max_bet = match table.max_bet_cents {
        None => None,
        Some(_) => {
            let m = table.require_max()?;
            if m < min_bet || m > MAX_AMOUNT_CENTS {
                return Err(ConfigError::field(
                    "max_bet_cents",
                    "must be at least min_bet_cents and at most the ledger's ceiling",
                ));
            }
            Some(m)
        }
    };
    if rules.forced == crate::variant::Forced::MaoBlinds && min_bet % 2 != 0 {
        return Err(ConfigError::field(
            "min_bet_cents",
            "must be even: the small blind is half the table minimum (P217/2007 T.II S.II SS.II r.82)",
        ));
    }
    if let Some(d) = table.decks
        && d != 1
    {
        return Err(ConfigError::field("decks", "must be 1 (one deck per hand)"));
    }
    let seats = table.seats.unwrap_or(rules.default_seats);
    if seats < 2 || seats > rules.max_seats {
        return Err(ConfigError::field(
            "seats",
            format!(
                "must be between 2 and {} for {}",
                rules.max_seats, table.game
            ),
        ));
    }

    // Commission.
    let mut violations = Vec::new();
    let bp_setting = table.opt_int_setting("commission_bp")?;
    let bp = match bp_setting {
        None => None,
        Some(v) if (0..=10_000).contains(&v) => Some(v as u32),
        Some(_) => {
            return Err(ConfigError::setting(
                "commission_bp",
                "must be between 0 and 10000 basis points",
            ));
        }
    };
    let need_bp = |bp: Option<u32>| {
        bp.ok_or_else(|| {
            ConfigError::setting(
                "commission_bp",
                "is required with this commission mode (the rate is fixed before each game)",
            )
        })
    };
    let mode = match (table.commission.as_deref(), regulation) {
        (None, Regulation::P461) => "per_hand",
        (None, _) => {
            return Err(ConfigError::field(
                "commission",
                "is required (per_hand, per_session, buy_in or none): the house percentage is fixed before each game (P217/2007 T.II S.II SS.I r.7; Reg806/2015 r.17)",
            ));
        }
        (Some(m), _) => m,
    };
    let cap = table.opt_int_setting("commission_cap_cents")?;
    let commission = match mode {
        "per_hand" => {
            let bp = if regulation == Regulation::P461 {
                bp.unwrap_or(300)
            } else {
                need_bp(bp)?
            };
            let cap = match cap {
                None => None,
                Some(c) if regulation == Regulation::P217 && c > 0 && c <= MAX_AMOUNT_CENTS => {
                    Some(c)
                }
                Some(_) if regulation != Regulation::P217 => {
                    return Err(ConfigError::setting(
                        "commission_cap_cents",
                        "applies only to the P217/2007 per-hand commission (r.7(a))",
                    ));
                }
                Some(_) => {
                    return Err(ConfigError::setting(
                        "commission_cap_cents",
                        "must be positive and at most the ledger's ceiling",
                    ));
                }
            };
            Commission::PerHand { bp, cap }
        }
        "none" => {
            if bp.is_some_and(|b| b != 0) {
                return Err(ConfigError::setting(
                    "commission_bp",
                    "must be absent or 0 with commission `none`",
                ));
            }
            if cap.is_some() {
                return Err(ConfigError::setting(
                    "commission_cap_cents",
                    "makes no sense with commission `none`",
                ));
            }
            Commission::PerHand { bp: 0, cap: None }
        }
        "per_session" if regulation != Regulation::Reg806 => {
            let base = match table.text_setting("session_fee_base")? {
                None | Some("table_max") => FeeBase::TableMax,
                Some("cave") => FeeBase::Cave,
                Some(_) => {
                    return Err(ConfigError::setting(
                        "session_fee_base",
                        "must be `table_max` or `cave`",
                    ));
                }
            };
            // A table maximum missing here is not a reason to refuse the table: only a session
            // fee actually charged needs it, and that case is flagged when it arises
            // (POKER_SESSION_FEE_BASE_MISSING).
            Commission::PerSession {
                bp: need_bp(bp)?,
                base,
            }
        }
        "buy_in" if regulation == Regulation::Reg806 => Commission::BuyIn { bp: need_bp(bp)? },
        other => {
            return Err(ConfigError::field(
                "commission",
                format!(
                    "`{}` is not a commission mode of {} under {} (per_hand, {}none)",
                    other.chars().take(32).collect::<String>(),
                    table.game,
                    regulation_name(regulation),
                    if regulation == Regulation::Reg806 {
                        "buy_in, "
                    } else {
                        "per_session, "
                    }
                ),
            ));
        }
    };
    if cap.is_some() && !matches!(commission, Commission::PerHand { .. }) {
        return Err(ConfigError::setting(
            "commission_cap_cents",
            "applies only to the per-hand commission (r.7(a))",
        ));
    }
    if table.text_setting("session_fee_base")?.is_some()
        && !matches!(commission, Commission::PerSession { .. })
    {
        return Err(ConfigError::setting(
            "session_fee_base",
            "applies only to the per-session commission (r.7(b))",
        ));
    }
    // r.7; P461 r.55; Reg806 r.17: legal ranges.
    let pct = |bp: u32| format!("{}.{:02}%", bp / 100, bp % 100);
    let illegal = match (regulation, commission) {
        (Regulation::P217, Commission::PerHand { bp, .. }) if bp > 500 => Some(format!(
            "per-hand commission {} is above the 5% of r.7(a)",
            pct(bp)
        )),
        (Regulation::P217, Commission::PerSession { bp, .. }) if !(500..=2000).contains(&bp) => {
            Some(format!(
                "per-session commission {} is outside the 5%-20% of r.7(b)",
                pct(bp)
            ))
        }
        (Regulation::P461, Commission::PerHand { bp: 300, .. }) => None,
        (Regulation::P461, c) => Some(format!(
            "P461/2001 r.55 fixes 3% of the POT; the table takes {} {}",
            pct(c.bp()),
            if matches!(c, Commission::PerHand { .. }) {
                "per hand"
            } else {
                "per session"
            }
        )),
        (Regulation::Reg806, Commission::PerHand { bp, .. }) if !(100..=500).contains(&bp) => {
            Some(format!(
                "per-hand commission {} is outside the 1%-5% of Reg806 r.17(a)",
                pct(bp)
            ))
        }
        (Regulation::Reg806, Commission::BuyIn { bp }) if !(500..=2000).contains(&bp) => {
            Some(format!(
                "buy-in commission {} is outside the 5%-20% of Reg806 r.17(b)",
                pct(bp)
            ))
        }
        _ => None,
    };
    if let Some(msg) = illegal {
        violations.push(Violation::new(
            codes::COMMISSION_RATE_ILLEGAL,
            Severity::High,
            cites.commission_rate,
            msg,
        ));
    }

    let limit = match table.text_setting("limit")? {
        None | Some("no_limit") => Limit::NoLimit,
        Some("pot_limit") => Limit::PotLimit,
        Some("limit") => Limit::Limit,
        Some(_) => {
            return Err(ConfigError::setting(
                "limit",
                "must be `limit`, `pot_limit` or `no_limit`",
            ));
        }
    };
    let max_raises = match table.opt_int_setting("max_raises")? {
        None => None,
        Some(_) if rules.fixed_raise_cap.is_some() => {
            return Err(ConfigError::setting(
                "max_raises",
                "is fixed at three per betting round for omaha and hold'em (P217/2007 T.II S.II SS.II r.87)",
            ));
        }
        Some(v) if (1..=1000).contains(&v) => Some(v as u32),
        Some(_) => {
            return Err(ConfigError::setting(
                "max_raises",
                "must be between 1 and 1000",
            ));
        }
    };
    let small_blind = match (regulation, table.opt_int_setting("small_blind_cents")?) {
        (Regulation::Reg806, None) => None,
        (Regulation::Reg806, Some(v)) if v > 0 && v <= min_bet => Some(v),
        (Regulation::Reg806, Some(_)) => {
            return Err(ConfigError::setting(
                "small_blind_cents",
                "must be positive and at most the minimum bet (the big blind)",
            ));
        }
        (_, Some(_)) => {
            return Err(ConfigError::setting(
                "small_blind_cents",
                "applies only online: at P217 tables the small blind is half the minimum (r.82)",
            ));
        }
        (_, None) if rules.forced == crate::variant::Forced::MaoBlinds => Some(min_bet / 2),
        (_, None) => None,
    };
    let stardilho = table.bool_setting("stardilho", false)?;
    if table.setting("stardilho").is_some() && table.game != GameId::PokerSintetico {
        return Err(ConfigError::setting(
            "stardilho",
            "applies only to póquer sintético (r.106)",
        ));
    }
    Ok(Configured {
        config: PokerConfig {
            rules,
            cites,
            regulation,
            min_bet,
            max_bet,
            small_blind,
            commission,
            limit,
            max_raises,
            stardilho,
            seats,
        },
        violations,
    })
}
