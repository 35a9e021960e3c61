//! # French roulette (`roulette_french`): Portaria 217/2007, Título I, Capítulo I, Secção II
//!
//! 37 pockets, 0-36, French numbering only (r.2); face-value chips; the ordinary bets of r.16;
//! payouts r.18; zero rule r.19; limits r.24; payment order r.20-r.22.
//!
//! ## Vocabulary
//!
//! **Bet types**: as American roulette ([`crate::american`]): `straight`, `split`, `street`,
//! `corner`, `line`, `dozen`, `column`, `dozen_split`, `column_split`, `even`, `odd`, `low`,
//! `high`, `red`, `black`, same selections, same payouts (r.18), same zero rule (r.19).
//! S.II lists no announced bets; a `series_grande` / `series_pequena` / `series_orfaos` /
//! `neighbours` bet recorded at a French table is settled as its component ordinary bets with
//! the compositions of S.I r.25 (the payout is identical; digest note N10), and is
//! `RL_ILLEGAL_BET` (net 0) only when the set-up says `announced_bets: false`. `chips` must be a
//! whole multiple of the series' base chips (else `RL_SERIES_CHIPS`, net 0); the chip-count
//! ranges of S.I r.32(c) do not apply. `attrs` are not used.
//!
//! **Events, void reasons, roles, procedures, faults**: as American roulette, except that the
//! colour-chip procedures (`colour_value`, `late_chip_exchange`, `colour_lost`) do not exist.
//!
//! **Settings**: `wheel` (text, optional, must be `french`); `zero_corner_allowed` (bool,
//! default false, note N4); `announced_bets` (bool, default true, note N10); `pockets` (int,
//! default 37). Limits: `min_bet_cents`, `max_bet_cents`, per-chance `limits` (r.17, r.24).
//! Accepted `regulation`: absent or `P217/2007`.
//!
//! **Payment order** (r.20, r.21): columns, dozens, simple chances, lines, streets, corners,
//! splits, straights; several prizes of one player are paid together.

use rules_core::{ConfigError, Configured, TableConfig};

use crate::bets::{Kind, Series};
use crate::core::Cites;
use crate::tables::{SERIES_GRANDE, SERIES_ORFAOS, SERIES_PEQUENA};
use crate::{RouletteConfig, base_config, limit_ratio_violations};

/// Every setting the French engine reads.
pub const SETTINGS: &[&str] = &["wheel", "zero_corner_allowed", "announced_bets", "pockets"];

pub(crate) const CITES: Cites = Cites {
    wrong_payout: "P217/2007 T.I C.I S.II r.18, r.19",
    bets: "P217/2007 T.I C.I S.II r.16",
    combos: "P217/2007 T.I C.I S.II r.16(a), r.17",
    pay_multiple: "P217/2007 T.I C.I S.II r.18(a)",
    pay_simple: "P217/2007 T.I C.I S.II r.18(b)",
    pay_series: "P217/2007 T.I C.I S.II r.18(a); S.I r.25(a) (digest note N10)",
    pay_neighbours: "P217/2007 T.I C.I S.II r.18(a); S.I r.25(b) (digest note N10)",
    zero: "P217/2007 T.I C.I S.II r.19",
    late: "P217/2007 T.I C.I S.II r.12",
    void: "P217/2007 T.I C.I S.II r.14",
    direction: "P217/2007 T.I C.I S.II r.13",
    collect: "P217/2007 T.I C.I S.II r.20",
    order: "P217/2007 T.I C.I S.II r.20, r.21",
    dealer: "P217/2007 T.I C.I S.II r.25",
    ball: "P217/2007 T.I C.I S.II r.9",
    spin_before: "P217/2007 T.I C.I S.II r.11",
    limits: "P217/2007 T.I C.I S.II r.17, r.24",
    series_chips: "P217/2007 T.I C.I S.I r.25(a) (digest note N10)",
    neighbours_chips: "P217/2007 T.I C.I S.I r.25(b) (digest note N10)",
    neighbours_max: "P217/2007 T.I C.I S.II r.24",
    series_wheel: "P217/2007 T.I C.I S.II r.2",
};

/// Payment order rank (P217/2007 T.I C.I S.II r.20): columns, dozens, simple chances, lines,
/// streets, corners, splits, straights. Announced bets are not in S.II: not ranked.
pub(crate) fn pay_rank(k: Kind) -> Option<u8> {
    Some(match k {
        Kind::Column | Kind::ColumnSplit => 0,
        Kind::Dozen | Kind::DozenSplit => 1,
        Kind::Even | Kind::Odd | Kind::Low | Kind::High | Kind::Red | Kind::Black => 2,
        Kind::Line => 3,
        Kind::Street => 4,
        Kind::Corner => 5,
        Kind::Split => 6,
        Kind::Straight => 7,
        _ => return None,
    })
}

pub(crate) fn configure(table: &TableConfig) -> Result<Configured<RouletteConfig>, ConfigError> {
    table.only_settings(SETTINGS)?;
    let mut cfg = base_config(table, "P217/2007", crate::american::KINDS)?;
    // Only the French numbering (P217/2007 T.I C.I S.II r.2).
    match table.text_setting("wheel")? {
        None | Some("french") => {}
        Some(_) => {
            return Err(ConfigError::setting(
                "wheel",
                "French roulette wheels have the French numbering only (P217/2007 T.I C.I S.II r.2)",
            ));
        }
    }
    cfg.announced_bets = table.bool_setting("announced_bets", true)?;
    cfg.series = [
        Some(Series::from_table(&SERIES_GRANDE)),
        Some(Series::from_table(&SERIES_PEQUENA)),
        Some(Series::from_table(&SERIES_ORFAOS)),
    ];
    let violations = limit_ratio_violations(
        &cfg,
        "P217/2007 T.I C.I S.II r.24(a)",
        "P217/2007 T.I C.I S.II r.24(b)",
    );
    Ok(Configured {
        config: cfg,
        violations,
    })
}
