//! Table configuration: parsed and checked once (P217/2007 T.I C.III S.I r.2, r.3, r.14, r.37,
//! r.40, r.43, r.44; P1364/2001 r.37, r.43; ROBJ/2015 r.32).

use rules_core::{Award, Cents, ConfigError, Configured, GameId, Severity, TableConfig, Violation};

use crate::cite::{self, Regulation};
use crate::jackpot::{Combo, JackpotRules, Line, P1364_TABLE};

/// Which automatic shuffler the table uses (P217/2007 T.I C.III S.I r.51-61).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shuffler {
    /// Manual shoe: cut card and warning card (r.8-r.11).
    None,
    /// Batch automatic shuffler: no cut, no warning card (r.52).
    Batch,
    /// Continuous shuffler: also no "last round" announcement, cards reinserted after every
    /// round (r.56-r.60).
    Continuous,
}

/// The compiled configuration of a blackjack table.
#[derive(Clone, Debug)]
pub struct BlackjackConfig {
    pub game: GameId,
    pub regulation: Regulation,
    /// Table minimum and maximum (required on land tables; optional online).
    pub min: Option<Cents>,
    pub max: Option<Cents>,
    /// Decks in the shoe (r.3: 4 or 6 on land tables).
    pub decks: u8,
    /// Seats at the table (r.2: 6 or 7; online 1 to 7).
    pub seats: u8,
    pub shuffler: Shuffler,
    /// Reading 13.5: ten-value cards of different ranks may be split (default true).
    pub split_unlike_tens: bool,
    pub jackpot: Option<JackpotRules>,
    /// Blackjack payout as numerator/denominator (land: 3/2 by r.21; online: setting).
    pub bj_num: i64,
    pub bj_den: i64,
    /// Online: a blackjack beats a multi-card 21 (land r.20); false = ROBJ/2015 r.25(h) read
    /// literally (equal totals tie).
    pub bj_beats_21: bool,
    /// Online: the dealer draws on soft 17.
    pub hits_soft_17: bool,
    /// Online: single-player table (ROBJ/2015 r.35(a)) rather than multi-player (r.35(b)).
    pub single_player: bool,
}

impl BlackjackConfig {
    pub fn online(&self) -> bool {
        self.regulation == Regulation::Robj2015
    }
    pub fn cite(&self, c: cite::Cite) -> &'static str {
        c.get(self.regulation)
    }
}

/// Settings of land tables.
pub const LAND_SETTINGS: &[&str] = &["shuffler", "split_unlike_tens"];
/// Settings of online tables.
pub const ONLINE_SETTINGS: &[&str] = &[
    "split_unlike_tens",
    "blackjack_pays",
    "online_blackjack_beats_21",
    "dealer_hits_soft_17",
    "single_player_table",
];

pub fn configure(table: &TableConfig) -> Result<Configured<BlackjackConfig>, ConfigError> {
    let game = table.game;
    let online = match game {
        GameId::Blackjack => false,
        GameId::BlackjackOnline => true,
        other => {
            return Err(ConfigError::WrongGame {
                game: other,
                engine: "blackjack",
            });
        }
    };
    let regulation = match (online, table.regulation.as_deref()) {
        (false, None | Some("P217/2007")) => Regulation::P217,
        (false, Some("P1364/2001")) => Regulation::P1364,
        (true, None | Some("ROBJ/2015")) => Regulation::Robj2015,
        (_, Some(other)) => {
            return Err(ConfigError::Regulation {
                game,
                regulation: other.chars().take(64).collect(),
                implemented: if online {
                    "ROBJ/2015"
                } else {
                    "P217/2007, P1364/2001"
                },
            });
        }
    };
    table.only_settings(if online {
        ONLINE_SETTINGS
    } else {
        LAND_SETTINGS
    })?;
    let mut violations = Vec::new();

    // Limits: r.14, r.37.
    let (min, max) = if online {
        (
            opt_positive(table.min_bet_cents, "min_bet_cents")?,
            opt_positive(table.max_bet_cents, "max_bet_cents")?,
        )
    } else {
        (Some(table.require_min()?), Some(table.require_max()?))
    };
    for v in [min, max].into_iter().flatten() {
        if v > rules_core::MAX_AMOUNT_CENTS {
            return Err(ConfigError::field(
                "min_bet_cents/max_bet_cents",
                "is above MAX_AMOUNT_CENTS",
            ));
        }
    }
    if let (Some(mn), Some(mx)) = (min, max) {
        if mx < mn {
            return Err(ConfigError::field(
                "max_bet_cents",
                "is below min_bet_cents",
            ));
        }
        match regulation {
            // P217/2007 r.37: the maximum is *up to* 30 times the minimum.
            Regulation::P217 if mx > 30 * mn => violations.push(Violation::new(
                "BJ_TABLE_MAX_OVER_30X_MIN",
                Severity::Medium,
                cite::R37.p217,
                format!("table maximum {mx} is above 30 x the minimum {mn}"),
            )),
            // P1364/2001 r.37: the maximum is *equal to* 30 times the minimum.
            Regulation::P1364 if mx != 30 * mn => violations.push(Violation::new(
                "BJ_TABLE_MAX_NOT_30X_MIN",
                Severity::Medium,
                cite::R37.p1364,
                format!("table maximum {mx} is not 30 x the minimum {mn}"),
            )),
            _ => {}
        }
    }

    // Decks: r.3 (4 or 6 decks of 52 cards).
    let decks = match table.decks {
        Some(0) => return Err(ConfigError::field("decks", "must be at least 1")),
        Some(d) => d,
        None => {
            return Err(ConfigError::field(
                "decks",
                "is required for blackjack (r.3: 4 or 6)",
            ));
        }
    };
    if !online && decks != 4 && decks != 6 {
        violations.push(Violation::new(
            "BJ_DECK_COUNT_INVALID",
            Severity::High,
            cite::R3.get(regulation),
            format!("table configured with {decks} decks; the rule allows 4 or 6"),
        ));
    }
    if online && decks > 8 {
        return Err(ConfigError::field(
            "decks",
            "online tables use 1 to 8 decks",
        ));
    }

    // Seats: r.2 (6 or 7 seats; default 7). Online 1 to 7 (ROBJ/2015 r.35 single or multi).
    let seats = table.seats.unwrap_or(7);
    if !online && seats != 6 && seats != 7 {
        return Err(ConfigError::field(
            "seats",
            "a blackjack table has 6 or 7 seats (r.2)",
        ));
    }
    if online && !(1..=7).contains(&seats) {
        return Err(ConfigError::field(
            "seats",
            "online tables have 1 to 7 seats",
        ));
    }

    let shuffler = match table.text_setting("shuffler")? {
        None | Some("none") => Shuffler::None,
        Some("batch") => Shuffler::Batch,
        Some("continuous") => Shuffler::Continuous,
        Some(_) => {
            return Err(ConfigError::setting(
                "shuffler",
                "must be none, batch or continuous",
            ));
        }
    };
    let split_unlike_tens = table.bool_setting("split_unlike_tens", true)?;
    let (bj_num, bj_den) = match table.list_setting("blackjack_pays")? {
        None => (3, 2),
        Some([n, d]) if *n > 0 && *d > 0 && *n <= 100 && *d <= 100 => (*n, *d),
        Some(_) => {
            return Err(ConfigError::setting(
                "blackjack_pays",
                "must be [numerator, denominator], each 1 to 100 (e.g. [3, 2])",
            ));
        }
    };
    let bj_beats_21 = table.bool_setting("online_blackjack_beats_21", true)?;
    let hits_soft_17 = table.bool_setting("dealer_hits_soft_17", false)?;
    let single_player = table.bool_setting("single_player_table", false)?;

    // Jackpot: r.38-r.50.
    let jackpot = match &table.jackpot {
        None => None,
        Some(_) if online => {
            return Err(ConfigError::field(
                "jackpot",
                "the online blackjack regulation (ROBJ/2015, as seeded) has no jackpot",
            ));
        }
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
                    "must be at most 10000 (100%)",
                ));
            }
            if j.start_value_cents < 0 || j.start_value_cents > rules_core::MAX_AMOUNT_CENTS {
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
            // r.44: start value at least 10,000 x the jackpot bet.
            if j.start_value_cents < 10_000 * j.bet_amount_cents {
                violations.push(Violation::new(
                    "BJ_JACKPOT_START_BELOW_MIN",
                    Severity::Medium,
                    cite::R44.get(regulation),
                    format!(
                        "jackpot start value {} is below 10,000 x the jackpot bet {}",
                        j.start_value_cents, j.bet_amount_cents
                    ),
                ));
            }
            let mut lines = Vec::new();
            for p in &j.paytable {
                let Some(combo) = Combo::parse(&p.combination) else {
                    return Err(ConfigError::field(
                        "jackpot.paytable",
                        format!(
                            "unknown combination `{}` (known: {})",
                            p.combination.chars().take(64).collect::<String>(),
                            Combo::ALL
                                .iter()
                                .map(|c| c.id())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                };
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
                if lines.iter().any(|l: &Line| l.combo == combo) {
                    return Err(ConfigError::field(
                        "jackpot.paytable",
                        format!("combination `{}` listed twice", combo.id()),
                    ));
                }
                lines.push(Line {
                    combo,
                    award: p.award,
                    citation: cite::R43.get(regulation),
                });
            }
            match regulation {
                // P1364/2001 r.43 fixes the table: an empty paytable means that table; a configured
                // one must be the same.
                Regulation::P1364 => {
                    let fixed: Vec<Line> = P1364_TABLE.to_vec();
                    if !lines.is_empty() {
                        let same = lines.len() == fixed.len()
                            && fixed.iter().all(|f| {
                                lines
                                    .iter()
                                    .any(|l| l.combo == f.combo && l.award == f.award)
                            });
                        if !same {
                            return Err(ConfigError::field(
                                "jackpot.paytable",
                                "P1364/2001 r.43 fixes the jackpot table; leave it empty or list exactly that table",
                            ));
                        }
                    }
                    lines = fixed;
                }
                _ => {
                    if lines.is_empty() {
                        return Err(ConfigError::field(
                            "jackpot.paytable",
                            "P217/2007 r.43: the approved combinations and proportions must be configured",
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
        config: BlackjackConfig {
            game,
            regulation,
            min,
            max,
            decks,
            seats,
            shuffler,
            split_unlike_tens,
            jackpot,
            bj_num,
            bj_den,
            bj_beats_21,
            hits_soft_17,
            single_player,
        },
        violations,
    })
}

fn opt_positive(v: Option<Cents>, field: &str) -> Result<Option<Cents>, ConfigError> {
    match v {
        Some(x) if x <= 0 => Err(ConfigError::field(field, "must be positive")),
        other => Ok(other),
    }
}
