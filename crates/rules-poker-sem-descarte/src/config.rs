//! Table configuration (P217/2007 T.I C.III S.II r.3, r.5, r.8-r.10, r.13-r.16; P461/2001).

use rules_core::{Award, Cents, ConfigError, Configured, GameId, Severity, TableConfig, Violation};

use crate::cite::{self, Regulation};
use crate::eval::Category;
use crate::paytable::P461_JACKPOT;

/// One jackpot line in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub category: Category,
    pub award: Award,
    pub citation: &'static str,
}

/// Jackpot rules of a table (r.3, r.4, r.8-r.12).
#[derive(Clone, Debug)]
pub struct JackpotRules {
    pub chip: Cents,
    pub increment_bp: u32,
    pub start: Cents,
    pub lines: Vec<Line>,
    pub manual: bool,
}

/// The compiled configuration.
#[derive(Clone, Debug)]
pub struct PsdConfig {
    pub regulation: Regulation,
    pub min: Cents,
    pub max: Cents,
    /// Boxes marked on the table (r.5: at most 7 players).
    pub seats: u8,
    /// Homologated automatic shuffler (r.16: no cut, five cards at a time).
    pub shuffler: bool,
    /// r.6(j) "três delas da mesma cor" read as suit (reading 10.4, default) rather than colour.
    pub suit_tiebreak: bool,
    /// The bank's maximum prizes per coup (r.15), if configured.
    pub prize_cap: Option<Cents>,
    pub jackpot: Option<JackpotRules>,
}

impl PsdConfig {
    pub fn c(&self, c: cite::Cite) -> &'static str {
        c.get(self.regulation)
    }
}

pub const SETTINGS: &[&str] = &["shuffler", "prize_cap_cents", "high_card_suit_tiebreak"];

pub fn configure(table: &TableConfig) -> Result<Configured<PsdConfig>, ConfigError> {
    if table.game != GameId::PokerSemDescarte {
        return Err(ConfigError::WrongGame {
            game: table.game,
            engine: "poker_sem_descarte",
        });
    }
    let regulation = match table.regulation.as_deref() {
        None | Some("P217/2007") => Regulation::P217,
        Some("P461/2001") => Regulation::P461,
        Some(other) => {
            return Err(ConfigError::Regulation {
                game: table.game,
                regulation: other.chars().take(64).collect(),
                implemented: "P217/2007, P461/2001",
            });
        }
    };
    table.only_settings(SETTINGS)?;
    let min = table.require_min()?;
    let max = table.require_max()?;
    if min > rules_core::MAX_AMOUNT_CENTS || max > rules_core::MAX_AMOUNT_CENTS {
        return Err(ConfigError::field(
            "max_bet_cents",
            "is above MAX_AMOUNT_CENTS",
        ));
    }
    if max < min {
        return Err(ConfigError::field(
            "max_bet_cents",
            "is below min_bet_cents",
        ));
    }
    let mut violations = Vec::new();
    // r.14: the maximum ante is at most 25 x the minimum.
    if max > 25 * min {
        violations.push(Violation::new(
            "PSD_TABLE_MAX_OVER_25X_MIN",
            Severity::Medium,
            cite::R14.get(regulation),
            format!("table maximum ante {max} is above 25 x the minimum {min}"),
        ));
    }
    let seats = table.seats.unwrap_or(7);
    if seats == 0 {
        return Err(ConfigError::field("seats", "must be at least 1"));
    }
    if table.decks.is_some_and(|d| d != 1) {
        return Err(ConfigError::field(
            "decks",
            "póquer sem descarte uses one 52-card deck (r.1)",
        ));
    }
    let shuffler = table.bool_setting("shuffler", false)?;
    let suit_tiebreak = table.bool_setting("high_card_suit_tiebreak", true)?;
    let prize_cap = match table.opt_int_setting("prize_cap_cents")? {
        Some(v) if v <= 0 => {
            return Err(ConfigError::setting("prize_cap_cents", "must be positive"));
        }
        other => other,
    };
    let jackpot = match &table.jackpot {
        None => None,
        Some(j) => {
            if j.bet_amount_cents <= 0 || j.bet_amount_cents > rules_core::MAX_AMOUNT_CENTS {
                return Err(ConfigError::field(
                    "jackpot.bet_amount_cents",
                    "must be positive and at most MAX_AMOUNT_CENTS",
                ));
            }
            if j.increment_bp > 10_000 {
                return Err(ConfigError::field(
                    "jackpot.increment_bp",
                    "must be at most 10000",
                ));
            }
            if !(0..=rules_core::MAX_AMOUNT_CENTS).contains(&j.start_value_cents) {
                return Err(ConfigError::field(
                    "jackpot.start_value_cents",
                    "must be 0 to MAX_AMOUNT_CENTS",
                ));
            }
            let manual = match j.collection.as_deref() {
                None | Some("automatic") => false,
                Some("manual") => true,
                Some(_) => {
                    return Err(ConfigError::field(
                        "jackpot.collection",
                        "must be automatic or manual",
                    ));
                }
            };
            // r.10: start value at least 10,000 x the jackpot bet.
            if j.start_value_cents < 10_000 * j.bet_amount_cents {
                violations.push(Violation::new(
                    "PSD_JACKPOT_START_BELOW_MIN",
                    Severity::Medium,
                    cite::R10.get(regulation),
                    format!(
                        "jackpot start value {} is below 10,000 x the jackpot bet {}",
                        j.start_value_cents, j.bet_amount_cents
                    ),
                ));
            }
            let mut lines: Vec<Line> = Vec::new();
            for p in &j.paytable {
                let category = Category::parse(&p.combination)
                    .filter(|c| *c != Category::HighCard)
                    .ok_or_else(|| {
                        ConfigError::field(
                            "jackpot.paytable",
                            format!(
                                "unknown combination `{}` (royal_flush, straight_flush, four_of_a_kind, full_house, flush, straight, three_of_a_kind, two_pair, pair)",
                                p.combination.chars().take(64).collect::<String>()
                            ),
                        )
                    })?;
                match p.award {
                    Award::Percent { bp } if bp == 0 || bp > 10_000 => {
                        return Err(ConfigError::field(
                            "jackpot.paytable",
                            "percent awards are 1 to 10000 bp",
                        ));
                    }
                    Award::Multiple { times } if times == 0 || times > 1_000_000 => {
                        return Err(ConfigError::field(
                            "jackpot.paytable",
                            "multiples are 1 to 1,000,000",
                        ));
                    }
                    _ => {}
                }
                if lines.iter().any(|l| l.category == category) {
                    return Err(ConfigError::field(
                        "jackpot.paytable",
                        format!("`{}` listed twice", category.id()),
                    ));
                }
                lines.push(Line {
                    category,
                    award: p.award,
                    citation: cite::R9.p217,
                });
            }
            let fixed: Vec<Line> = P461_JACKPOT
                .iter()
                .map(|&(category, award, citation)| Line {
                    category,
                    award,
                    citation,
                })
                .collect();
            match regulation {
                // P461/2001 r.9 fixes the table.
                Regulation::P461 => {
                    let same = lines.len() == fixed.len()
                        && fixed.iter().all(|f| {
                            lines
                                .iter()
                                .any(|l| l.category == f.category && l.award == f.award)
                        });
                    if !lines.is_empty() && !same {
                        return Err(ConfigError::field(
                            "jackpot.paytable",
                            "P461/2001 r.9 fixes the jackpot table; leave it empty or list exactly that table",
                        ));
                    }
                    lines = fixed;
                }
                Regulation::P217 => {
                    if lines.is_empty() {
                        return Err(ConfigError::field(
                            "jackpot.paytable",
                            "P217/2007 r.9: the approved combinations and proportions must be configured",
                        ));
                    }
                }
            }
            Some(JackpotRules {
                chip: j.bet_amount_cents,
                increment_bp: j.increment_bp,
                start: j.start_value_cents,
                lines,
                manual,
            })
        }
    };
    Ok(Configured {
        config: PsdConfig {
            regulation,
            min,
            max,
            seats,
            shuffler,
            suit_tiebreak,
            prize_cap,
            jackpot,
        },
        violations,
    })
}
