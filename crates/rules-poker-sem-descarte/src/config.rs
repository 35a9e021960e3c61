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

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: i64 = rules_core::MAX_AMOUNT_CENTS;

    fn try_table(fields: &str) -> Result<Configured<PsdConfig>, ConfigError> {
        configure(
            &serde_json::from_str(&format!(r#"{{"game":"poker_sem_descarte",{fields}}}"#)).unwrap(),
        )
    }

    fn ok(fields: &str) -> Configured<PsdConfig> {
        try_table(fields).unwrap_or_else(|e| panic!("{fields}: {e}"))
    }

    /// The error's text (field or setting and reason).
    fn err(fields: &str) -> String {
        match try_table(fields) {
            Ok(c) => panic!("{fields}: configured {:?}", c.config),
            Err(e) => e.to_string(),
        }
    }

    fn codes(c: &Configured<PsdConfig>) -> Vec<&str> {
        c.violations.iter().map(|v| &*v.code).collect()
    }

    const LIMITS: &str = r#""min_bet_cents":1000,"max_bet_cents":25000"#;

    /// A P217 jackpot of a 100-cent chip with `fields` and a flush line unless `fields` names a
    /// pay table.
    fn jackpot(fields: &str) -> String {
        let table = if fields.contains("paytable") {
            String::new()
        } else {
            r#","paytable":[{"combination":"flush","award":{"kind":"multiple","times":50}}]"#
                .to_string()
        };
        format!(r#"{LIMITS},"jackpot":{{{fields}{table}}}"#)
    }

    const CHIP: &str = r#""bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000"#;

    /// The engine's game, its regulations, and the defaults of what a table leaves out.
    #[test]
    fn game_regulation_and_defaults() {
        let e = configure(
            &serde_json::from_str(
                r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":25000}"#,
            )
            .unwrap(),
        )
        .unwrap_err();
        assert!(matches!(e, ConfigError::WrongGame { .. }), "{e}");
        assert!(err(&format!(r#""regulation":"P999/2020",{LIMITS}"#)).contains("P999/2020"));
        let c = ok(LIMITS);
        assert!(c.violations.is_empty());
        let c = c.config;
        assert_eq!(c.regulation, Regulation::P217);
        assert_eq!((c.min, c.max, c.seats), (1000, 25000, 7));
        assert!(!c.shuffler && c.suit_tiebreak);
        assert_eq!(c.prize_cap, None);
        assert!(c.jackpot.is_none());
        let c = ok(&format!(
            r#""regulation":"P461/2001",{LIMITS},"seats":5,"decks":1,"settings":{{"shuffler":true,"high_card_suit_tiebreak":false,"prize_cap_cents":1}}"#
        ))
        .config;
        assert_eq!(c.regulation, Regulation::P461);
        assert_eq!(c.seats, 5);
        assert!(c.shuffler && !c.suit_tiebreak);
        assert_eq!(c.prize_cap, Some(1));
        assert!(err(&format!(r#"{LIMITS},"settings":{{"bogus":true}}"#)).contains("bogus"));
    }

    /// r.13, r.14: the ante's limits; amounts within MAX_AMOUNT_CENTS; the maximum at most 25 x
    /// the minimum (a finding, the table still configures).
    #[test]
    fn r13_r14_limits() {
        assert_eq!(
            ok(&format!(r#""min_bet_cents":{MAX},"max_bet_cents":{MAX}"#))
                .config
                .max,
            MAX
        );
        for (min, max) in [(1000, MAX + 1), (MAX + 1, MAX + 1), (MAX + 1, MAX)] {
            assert!(
                err(&format!(r#""min_bet_cents":{min},"max_bet_cents":{max}"#))
                    .contains("is above MAX_AMOUNT_CENTS"),
                "{min} {max}"
            );
        }
        assert!(
            err(r#""min_bet_cents":1000,"max_bet_cents":999"#).contains("is below min_bet_cents")
        );
        assert!(codes(&ok(r#""min_bet_cents":1000,"max_bet_cents":1000"#)).is_empty());
        assert!(codes(&ok(r#""min_bet_cents":1000,"max_bet_cents":25000"#)).is_empty());
        assert!(codes(&ok(r#""min_bet_cents":40,"max_bet_cents":1000"#)).is_empty());
        assert_eq!(
            codes(&ok(r#""min_bet_cents":1000,"max_bet_cents":25001"#)),
            ["PSD_TABLE_MAX_OVER_25X_MIN"]
        );
        assert_eq!(
            codes(&ok(r#""min_bet_cents":40,"max_bet_cents":1001"#)),
            ["PSD_TABLE_MAX_OVER_25X_MIN"]
        );
    }

    /// r.5 boxes, r.1 one deck, r.15 the bank's cap: what a table may configure.
    #[test]
    fn boxes_deck_and_cap() {
        assert!(err(&format!(r#"{LIMITS},"seats":0"#)).contains("seats"));
        assert_eq!(ok(&format!(r#"{LIMITS},"seats":1"#)).config.seats, 1);
        assert!(err(&format!(r#"{LIMITS},"decks":2"#)).contains("decks"));
        assert!(err(&format!(r#"{LIMITS},"decks":0"#)).contains("decks"));
        for v in [0, -1] {
            assert!(
                err(&format!(r#"{LIMITS},"settings":{{"prize_cap_cents":{v}}}"#))
                    .contains("prize_cap_cents"),
                "{v}"
            );
        }
        let c = ok(&format!(r#"{LIMITS},"settings":{{"prize_cap_cents":2}}"#));
        assert_eq!(c.config.prize_cap, Some(2));
    }

    /// r.3, r.8, r.10: the jackpot chip, the increment, the start value (at least 10,000 x the
    /// chip: a finding below it), the collection (r.4).
    #[test]
    fn r3_r4_r8_r10_jackpot_fields() {
        let j = ok(&jackpot(CHIP)).config.jackpot.unwrap();
        assert_eq!((j.chip, j.increment_bp, j.start), (100, 8000, 1_000_000));
        assert!(!j.manual);
        assert_eq!(
            j.lines,
            [Line {
                category: Category::Flush,
                award: Award::Multiple { times: 50 },
                citation: "P217/2007 T.I C.III S.II r.9",
            }]
        );
        for chip in [0, -1, MAX + 1] {
            assert!(
                err(&jackpot(&format!(
                    r#""bet_amount_cents":{chip},"increment_bp":8000,"start_value_cents":{MAX}"#
                )))
                .contains("jackpot.bet_amount_cents"),
                "{chip}"
            );
        }
        let j = ok(&jackpot(&format!(
            r#""bet_amount_cents":1,"increment_bp":10000,"start_value_cents":{MAX}"#
        )));
        assert!(j.violations.is_empty());
        assert_eq!(j.config.jackpot.unwrap().increment_bp, 10_000);
        assert!(
            ok(&jackpot(&format!(
                r#""bet_amount_cents":{MAX},"increment_bp":0,"start_value_cents":{MAX}"#
            )))
            .config
            .jackpot
            .is_some()
        );
        assert!(
            err(&jackpot(
                r#""bet_amount_cents":100,"increment_bp":10001,"start_value_cents":1000000"#
            ))
            .contains("jackpot.increment_bp")
        );
        for start in [-1, MAX + 1] {
            assert!(
                err(&jackpot(&format!(
                    r#""bet_amount_cents":100,"increment_bp":8000,"start_value_cents":{start}"#
                )))
                .contains("jackpot.start_value_cents"),
                "{start}"
            );
        }
        // r.10: exactly 10,000 x the chip is enough; a cent less is a finding.
        let below = ok(&jackpot(
            r#""bet_amount_cents":100,"increment_bp":8000,"start_value_cents":999999"#,
        ));
        assert_eq!(codes(&below), ["PSD_JACKPOT_START_BELOW_MIN"]);
        assert_eq!(
            below.violations[0].citation,
            "P217/2007 T.I C.III S.II r.10"
        );
        assert_eq!(below.config.jackpot.unwrap().start, 999_999);
        assert_eq!(
            codes(&ok(&jackpot(
                r#""bet_amount_cents":100,"increment_bp":8000,"start_value_cents":0"#
            ))),
            ["PSD_JACKPOT_START_BELOW_MIN"]
        );
        for (collection, manual) in [("automatic", false), ("manual", true)] {
            let j = ok(&jackpot(&format!(r#"{CHIP},"collection":"{collection}""#)));
            assert_eq!(j.config.jackpot.unwrap().manual, manual);
        }
        assert!(
            err(&jackpot(&format!(r#"{CHIP},"collection":"by_hand""#)))
                .contains("jackpot.collection")
        );
    }

    /// r.9: P217's approved pay table, line by line.
    #[test]
    fn r9_p217_pay_table() {
        let line = |c: &str, award: &str| {
            jackpot(&format!(
                r#"{CHIP},"paytable":[{{"combination":"{c}","award":{award}}}]"#
            ))
        };
        for (award, good) in [
            (r#"{"kind":"percent","bp":0}"#, false),
            (r#"{"kind":"percent","bp":1}"#, true),
            (r#"{"kind":"percent","bp":10000}"#, true),
            (r#"{"kind":"percent","bp":10001}"#, false),
            (r#"{"kind":"multiple","times":0}"#, false),
            (r#"{"kind":"multiple","times":1}"#, true),
            (r#"{"kind":"multiple","times":1000000}"#, true),
            (r#"{"kind":"multiple","times":1000001}"#, false),
            (r#"{"kind":"whole"}"#, true),
        ] {
            let r = try_table(&line("pair", award));
            assert_eq!(r.is_ok(), good, "{award}");
        }
        assert!(
            err(&line("high_card", r#"{"kind":"whole"}"#))
                .contains("unknown combination `high_card`")
        );
        assert!(err(&line("two_pairs", r#"{"kind":"whole"}"#)).contains("unknown combination"));
        let twice = jackpot(&format!(
            r#"{CHIP},"paytable":[{{"combination":"pair","award":{{"kind":"whole"}}}},{{"combination":"pair","award":{{"kind":"multiple","times":2}}}}]"#
        ));
        assert!(err(&twice).contains("`pair` listed twice"));
        // P217 r.9: the table must be configured.
        assert!(err(&jackpot(&format!(r#"{CHIP},"paytable":[]"#))).contains("P217/2007 r.9"));
    }

    /// P461/2001 Anexo I r.9 fixes the jackpot table: empty or exactly that table (any order).
    #[test]
    fn r9_p461_fixed_table() {
        let fixed: Vec<Line> = P461_JACKPOT
            .iter()
            .map(|&(category, award, citation)| Line {
                category,
                award,
                citation,
            })
            .collect();
        let p461 = |paytable: &str| {
            format!(
                r#""regulation":"P461/2001",{LIMITS},"jackpot":{{{CHIP},"paytable":[{paytable}]}}"#
            )
        };
        assert_eq!(ok(&p461("")).config.jackpot.unwrap().lines, fixed);
        let all = r#"{"combination":"flush","award":{"kind":"multiple","times":50}},
            {"combination":"full_house","award":{"kind":"multiple","times":100}},
            {"combination":"four_of_a_kind","award":{"kind":"multiple","times":500}},
            {"combination":"straight_flush","award":{"kind":"percent","bp":1000}},
            {"combination":"royal_flush","award":{"kind":"whole"}}"#;
        assert_eq!(ok(&p461(all)).config.jackpot.unwrap().lines, fixed);
        // One line short, one award changed, one line more: not the fixed table.
        let short = format!("{}}}", all.rsplit_once("},").unwrap().0);
        assert!(err(&p461(&short)).contains("P461/2001 r.9"));
        let changed = all.replace("\"times\":50", "\"times\":60");
        assert!(err(&p461(&changed)).contains("P461/2001 r.9"));
        let more = format!(
            r#"{all},{{"combination":"straight","award":{{"kind":"multiple","times":20}}}}"#
        );
        assert!(err(&p461(&more)).contains("P461/2001 r.9"));
    }
}
