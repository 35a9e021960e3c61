//! # American roulette (`roulette_american`): Portaria 217/2007, Título I, Capítulo I, Secção I
//!
//! 37 pockets, 0-36, no double zero (r.2); French or American numbering (r.2(a)(b)); colour chips
//! without face value whose value the player fixes (r.7-r.15); face-value chips on the outside
//! bets (r.16); series and number-and-neighbours bets on a French-numbered wheel only (r.25).
//!
//! ## Vocabulary
//!
//! **Bet types** (`bet_type`; `amount_cents` is the stake; for announced bets the total of the
//! chips, `chips` their count, so the chip value is `amount_cents / chips`):
//!
//! | id | `selection` | pays (r.27) |
//! |---|---|---|
//! | `straight` | `[n]`, n 0-36 | 35 to 1 |
//! | `split` | two adjacent numbers, e.g. `[17, 20]`, `[0, 2]` | 17 to 1 |
//! | `street` | a row `[13, 14, 15]`, or `[0, 1, 2]`, `[0, 2, 3]` | 11 to 1 |
//! | `corner` | `[n, n+1, n+3, n+4]` (n not in the third column); `[0,1,2,3]` only with `zero_corner_allowed` | 8 to 1 |
//! | `line` | two adjacent rows, six numbers | 5 to 1 |
//! | `dozen` | `[1]` (1-12), `[2]` (13-24) or `[3]` (25-36) | 2 to 1 |
//! | `column` | `[1]` (the column ending at 34), `[2]` (35) or `[3]` (36) | 2 to 1 |
//! | `dozen_split` | `[1, 2]` (1-24) or `[2, 3]` (13-36) | 1/2 to 1 (rounded down to the cent) |
//! | `column_split` | `[1, 2]` or `[2, 3]` (two adjacent columns) | 1/2 to 1 |
//! | `even`, `odd`, `low`, `high`, `red`, `black` | empty | 1 to 1 |
//! | `series_grande` | empty; `chips` 9-135, multiple of 9 (r.25(a), r.32(c)) | components as ordinary bets (r.27(c)) |
//! | `series_pequena` | empty; `chips` 6-120, multiple of 6 | same |
//! | `series_orfaos` | empty; `chips` 5-50, multiple of 5 | same |
//! | `neighbours` | `[n]`, the centre; `chips` 3, 5 or 7 (1, 2 or 3 neighbours each side in French wheel order, r.25(b)) | the chip on the number at 35 to 1, the rest lose (r.27(d)) |
//!
//! On 0 the simple chances, dozens, columns and their splits lose outright (r.28).
//!
//! Bet `attrs`: `chip_kind` = `colour` (default: colour chips without face value, r.7),
//! `face_value` (the casino's face-value chips: outside bets only, r.16) or `marked_value` (the
//! table's marked-value sets: any bet when the table provides them, r.16). `on_bet` is not used.
//!
//! **Events**: `bet`, `bet_changed`, `bet_withdrawn`, `no_more_bets` ("Jogo feito. Nada mais.",
//! r.20), `launch` (`ball_direction`, `wheel_direction`, `from_pocket`, `ball_id`), `ball`
//! (`pocket` 0-36), `void`, `collect`, `pay`, `role`, `procedure`, `fault`. Any other event kind
//! (cards, dice, decisions, jackpot) is a [`rules_core::RoundError`].
//!
//! **Void reasons** (r.22: something fell into the wheel between launch and rest; the spin is
//! void and the ball is relaunched from the previous number): `chip_fell`, `ball_fell`,
//! `object_fell`. A round whose last spin is void is void as a whole (every bet net 0).
//!
//! **Roles**: `spinner` (the dealer who spins the ball; `player` is the dealer's id, else
//! `seat`), `dealer` (informational).
//!
//! **Procedures**: `ball_change` (announced hourly change of ball, r.17; `value` = new ball id),
//! `colour_value` (a colour's chip value recorded on the display, r.9/r.13: `seat`, `value` =
//! colour, `amount_cents`), `late_chip_exchange` (colour chips presented late, r.15: `value` =
//! number of chips, `amount_cents` = what was paid for them), `colour_lost` (r.12,
//! informational).
//!
//! **Faults**: `ball_damaged`, `ball_lost` (r.18, a replacement ball follows), `bets_disturbed`
//! (r.31, bets rebuilt), informational.
//!
//! **Settings**: `wheel` (text, **required**: `french` or `american`, r.2, r.25);
//! `zero_corner_allowed` (bool, default false, digest note N4); `marked_value_chips` (bool,
//! default false: the table provides marked-value chip sets, r.16); `pockets` (int, default 37;
//! anything else is refused, r.2). Limits: `min_bet_cents`, `max_bet_cents` and per-chance
//! `limits` with the bet-type ids above (r.26, r.32). Accepted `regulation`: absent or
//! `P217/2007`.
//!
//! **Checks**: every code of the digest's section 12 except the online ones; payment order
//! (r.29): columns, simple chances, dozens, numbers-and-neighbours, series, lines, streets,
//! corners, splits, straights (dozen/column splits with dozens/columns, note N13).

use rules_core::{ConfigError, Configured, TableConfig};

use crate::bets::{Kind, Series};
use crate::core::Cites;
use crate::tables::{SERIES_GRANDE, SERIES_ORFAOS, SERIES_PEQUENA};
use crate::{RouletteConfig, WheelOrder, base_config, limit_ratio_violations};

/// Every setting the American engine reads.
pub const SETTINGS: &[&str] = &[
    "wheel",
    "zero_corner_allowed",
    "marked_value_chips",
    "pockets",
];

pub(crate) const KINDS: &[Kind] = &[
    Kind::Straight,
    Kind::Split,
    Kind::Street,
    Kind::Corner,
    Kind::Line,
    Kind::Dozen,
    Kind::Column,
    Kind::DozenSplit,
    Kind::ColumnSplit,
    Kind::Even,
    Kind::Odd,
    Kind::Low,
    Kind::High,
    Kind::Red,
    Kind::Black,
    Kind::SeriesGrande,
    Kind::SeriesPequena,
    Kind::SeriesOrfaos,
    Kind::Neighbours,
];

pub(crate) const CITES: Cites = Cites {
    wrong_payout: "P217/2007 T.I C.I S.I r.27, r.28",
    bets: "P217/2007 T.I C.I S.I r.24",
    combos: "P217/2007 T.I C.I S.I r.24(a), r.26",
    pay_multiple: "P217/2007 T.I C.I S.I r.27(a)",
    pay_simple: "P217/2007 T.I C.I S.I r.27(b)",
    pay_series: "P217/2007 T.I C.I S.I r.25(a), r.27(c)",
    pay_neighbours: "P217/2007 T.I C.I S.I r.25(b), r.27(d)",
    zero: "P217/2007 T.I C.I S.I r.28",
    late: "P217/2007 T.I C.I S.I r.20",
    void: "P217/2007 T.I C.I S.I r.22",
    direction: "P217/2007 T.I C.I S.I r.21",
    collect: "P217/2007 T.I C.I S.I r.29",
    order: "P217/2007 T.I C.I S.I r.29, r.30",
    dealer: "P217/2007 T.I C.I S.I r.33",
    ball: "P217/2007 T.I C.I S.I r.17",
    spin_before: "P217/2007 T.I C.I S.I r.19",
    limits: "P217/2007 T.I C.I S.I r.26, r.32",
    series_chips: "P217/2007 T.I C.I S.I r.32(c)",
    neighbours_chips: "P217/2007 T.I C.I S.I r.25(b)",
    neighbours_max: "P217/2007 T.I C.I S.I r.32(d)",
    series_wheel: "P217/2007 T.I C.I S.I r.25",
};

/// Payment order rank (P217/2007 T.I C.I S.I r.29): columns, simple chances, dozens,
/// numbers-and-neighbours, series, lines, streets, corners, splits, straights.
pub(crate) fn pay_rank(k: Kind) -> Option<u8> {
    Some(match k {
        Kind::Column | Kind::ColumnSplit => 0,
        Kind::Even | Kind::Odd | Kind::Low | Kind::High | Kind::Red | Kind::Black => 1,
        Kind::Dozen | Kind::DozenSplit => 2,
        Kind::Neighbours => 3,
        Kind::SeriesGrande | Kind::SeriesPequena | Kind::SeriesOrfaos => 4,
        Kind::Line => 5,
        Kind::Street => 6,
        Kind::Corner => 7,
        Kind::Split => 8,
        Kind::Straight => 9,
        Kind::Finals => return None,
    })
}

pub(crate) fn configure(table: &TableConfig) -> Result<Configured<RouletteConfig>, ConfigError> {
    table.only_settings(SETTINGS)?;
    let mut cfg = base_config(table, "P217/2007", KINDS)?;
    // The set-up must say which numbering the wheel has: series and neighbours bets exist only
    // on the French numbering (P217/2007 T.I C.I S.I r.2, r.25).
    cfg.wheel = match table.text_setting("wheel")? {
        Some("french") => WheelOrder::French,
        Some("american") => WheelOrder::American,
        Some(other) => {
            return Err(ConfigError::setting(
                "wheel",
                format!(
                    "must be `french` or `american`, got `{}`",
                    other.chars().take(40).collect::<String>()
                ),
            ));
        }
        None => {
            return Err(ConfigError::setting(
                "wheel",
                "is required for roulette_american: `french` or `american` (P217/2007 T.I C.I S.I r.2, r.25)",
            ));
        }
    };
    cfg.marked_value_chips = table.bool_setting("marked_value_chips", false)?;
    cfg.announced_bets = cfg.wheel == WheelOrder::French;
    cfg.series = [
        Some(Series::from_table(&SERIES_GRANDE)),
        Some(Series::from_table(&SERIES_PEQUENA)),
        Some(Series::from_table(&SERIES_ORFAOS)),
    ];
    let violations = limit_ratio_violations(
        &cfg,
        "P217/2007 T.I C.I S.I r.32(a)",
        "P217/2007 T.I C.I S.I r.32(b)",
    );
    Ok(Configured {
        config: cfg,
        violations,
    })
}
