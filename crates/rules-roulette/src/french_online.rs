//! # French roulette online (`roulette_french_online`): Regulamento 807/2015
//!
//! A real-time virtual table reproducing a physical French roulette table (R807/2015 r.2): 37
//! numbers, French numbering (r.6(a)(c)), the layout of r.6(d), the bets of r.7 with every
//! possible combination (r.10), optional "call bets" defined by the operator's approved specific
//! rules (r.8; delib. 2.º-3.º), minimum and maximum per chance per round (r.3(b)(c)), individual
//! or multi-player wheels with one common result (r.4, r.5).
//!
//! The seed copy of R807/2015 stops after Annex r.10: it has no payout table, no zero rule, no
//! limit proportions and no call-bet compositions (digest section 10). Those are **table
//! settings** (the operator's specific rules), never guesses.
//!
//! ## Vocabulary
//!
//! **Bet types**: `straight`, `split`, `street`, `corner`, `line`, `dozen`, `column`,
//! `dozen_split`, `column_split`, `even`, `odd`, `low`, `high`, `red`, `black` (selections as in
//! [`crate::american`]; R807/2015 r.7, r.10), and the call bets (r.8), each `RLO_CALL_BET_NOT_OFFERED`
//! (net 0) unless the set-up offers it:
//!
//! | id | coverage (r.8) | `selection` | `chips` |
//! |---|---|---|---|
//! | `series_grande` | série 0-2-3 / voisins du zéro, 17 numbers from 22 to 25 (r.8(a)) | empty | a whole multiple of the composition's chips |
//! | `series_pequena` | série 5-8 / tiers du cylindre, 27 to 33 (r.8(b)) | empty | same |
//! | `series_orfaos` | orphelins, the other 8 (r.8(c)) | empty | same |
//! | `neighbours` | a number and 2, 4 or 6 neighbours (r.8(d)) | `[n]` | 3, 5 or 7 (one straight chip per number) |
//! | `finals` | the numbers ending in d (r.8(e)) | `[d]`, d 0-9 | a whole multiple of the count (3 or 4), one straight chip per number per unit |
//!
//! Each chip of a call bet is an ordinary bet (straight, split, street, corner or line) paid at
//! the table's payout for that bet; the other chips lose. `attrs` are not used.
//!
//! **Events**: as American roulette; `launch` is accepted but the land procedure checks
//! (direction, ball, dealer, relaunch) do not apply online. **Void reasons**: `malfunction`
//! (the operator voids the game round; no rule of the seed: bets returned).
//! **Roles**: none required (`dealer`, `spinner` accepted, informational).
//! **Procedures**: `result_shown` (what the platform showed a player: `seat` = the player's
//! position, `value` = pocket) checked against the common result on multi-player wheels (r.5).
//! **Faults**: none.
//!
//! **Settings** (the operator's approved specific rules, delib. 2.º-3.º):
//! * `zero_rule` (text, **required**): `lose` (outside bets lose outright on 0) or `la_partage`
//!   (simple chances lose half on 0, dozens and columns lose);
//! * `payout_straight`, `payout_split`, `payout_street`, `payout_corner`, `payout_line`,
//!   `payout_dozen`, `payout_column`, `payout_dozen_split`, `payout_column_split`,
//!   `payout_even_money` (list `[numerator, denominator]`, default the land French table of
//!   P217/2007 T.I C.I S.II r.18, which the online game reproduces, r.2);
//! * `call_series_grande`, `call_series_pequena`, `call_series_orfaos` (list: the composition,
//!   as consecutive groups `chips, count, n1 .. n_count`, e.g. `[1, 1, 1, 1, 2, 6, 9, ...]`;
//!   each group a legal layout combination of 1, 2, 3, 4 or 6 numbers; together covering exactly
//!   the r.8 numbers; absent = not offered);
//! * `call_neighbours`, `call_finals` (bool, default false: offered);
//! * `multi_player` (bool, default false: a multi-player wheel, r.4, r.5);
//! * `zero_corner_allowed` (bool, default false), `wheel` (optional, `french`), `pockets` (37).
//!
//! Limits: `min_bet_cents`, `max_bet_cents`, per-chance `limits` (also for call bets), checked
//! against what one player stakes on each chance (position) in one round (r.3(b)(c)); no ratio
//! checks. Accepted `regulation`: absent or `R807/2015`.

use rules_core::{ConfigError, Configured, TableConfig};

use crate::bets::{self, Class, Comp, Kind, Series};
use crate::core::Cites;
use crate::tables::{
    ORPHELINS, TIERS, VOISINS, corner_mask, line_mask, mask, split_mask, street_mask,
};
use crate::{RouletteConfig, ZeroRule, base_config, payout_setting};

/// Every setting the online engine reads.
pub const SETTINGS: &[&str] = &[
    "zero_rule",
    "payout_straight",
    "payout_split",
    "payout_street",
    "payout_corner",
    "payout_line",
    "payout_dozen",
    "payout_column",
    "payout_dozen_split",
    "payout_column_split",
    "payout_even_money",
    "call_series_grande",
    "call_series_pequena",
    "call_series_orfaos",
    "call_neighbours",
    "call_finals",
    "multi_player",
    "zero_corner_allowed",
    "wheel",
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
    Kind::Finals,
];

const SPECIFIC: &str = "R807/2015 r.2; operator specific rules (delib. 2.º-3.º)";

pub(crate) const CITES: Cites = Cites {
    wrong_payout: SPECIFIC,
    bets: "R807/2015 r.7",
    combos: "R807/2015 r.6(d), r.7, r.10",
    pay_multiple: SPECIFIC,
    pay_simple: SPECIFIC,
    pay_series: "R807/2015 r.8; operator specific rules (delib. 2.º-3.º)",
    pay_neighbours: "R807/2015 r.8(d); operator specific rules (delib. 2.º-3.º)",
    zero: "operator specific rules (delib. 2.º-3.º): zero_rule",
    late: "R807/2015 r.3(d)",
    void: "operator specific rules (delib. 2.º-3.º)",
    direction: "R807/2015 r.2",
    collect: "R807/2015 r.3(d)",
    order: "R807/2015 r.3(d)",
    dealer: "R807/2015 r.2",
    ball: "R807/2015 r.2",
    spin_before: "R807/2015 r.3(d)",
    limits: "R807/2015 r.3(b), r.3(c)",
    series_chips: "R807/2015 r.8; operator specific rules (delib. 2.º-3.º)",
    neighbours_chips: "R807/2015 r.8(d)",
    neighbours_max: "R807/2015 r.3(b)",
    series_wheel: "R807/2015 r.6(c)",
};

const CALL_SETTINGS: [(&str, &[u8]); 3] = [
    ("call_series_grande", &VOISINS),
    ("call_series_pequena", &TIERS),
    ("call_series_orfaos", &ORPHELINS),
];

/// Parse a call-bet composition: groups `chips, count, n1 .. n_count`, each a legal layout
/// combination, covering exactly the numbers R807/2015 r.8 fixes for the bet.
fn composition(
    name: &str,
    list: &[i64],
    cover: &[u8],
    zero_corner: bool,
) -> Result<Series, ConfigError> {
    let err = |why: String| ConfigError::setting(name, why);
    let mut comps = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let (Some(&chips), Some(&count)) = (list.get(i), list.get(i + 1)) else {
            return Err(err("a group must be `chips, count, numbers...`".into()));
        };
        if !(1..=100).contains(&chips) {
            return Err(err(format!(
                "group at {i}: chips must be 1..=100, got {chips}"
            )));
        }
        let count = usize::try_from(count).unwrap_or(0);
        let Some(nums) = list.get(i + 2..i + 2 + count) else {
            return Err(err(format!("group at {i}: fewer than {count} numbers")));
        };
        let mut sel = [0u8; 6];
        if !(1..=6).contains(&count) {
            return Err(err(format!("group at {i}: count must be 1, 2, 3, 4 or 6")));
        }
        for (k, n) in nums.iter().enumerate() {
            sel[k] = u8::try_from(*n)
                .ok()
                .filter(|n| *n <= 36)
                .ok_or_else(|| err(format!("group at {i}: {n} is not a pocket")))?;
        }
        let sel = &sel[..count];
        let m = match count {
            1 => Some(1u64 << sel[0]),
            2 => split_mask(sel),
            3 => street_mask(sel),
            4 => corner_mask(sel, zero_corner),
            6 => line_mask(sel),
            _ => None,
        }
        .ok_or_else(|| {
            err(format!(
                "group at {i}: {sel:?} is not a combination of the layout (R807/2015 r.6(d))"
            ))
        })?;
        let class =
            Class::from_size(count).ok_or_else(|| err(format!("group at {i}: bad size")))?;
        comps.push(Comp {
            chips: chips as u32,
            mask: m,
            class,
        });
        i += 2 + count;
    }
    if comps.is_empty() {
        return Err(err("is empty".into()));
    }
    let coverage = comps.iter().fold(0, |m, c| m | c.mask);
    if coverage != mask(cover) {
        return Err(err(format!(
            "must cover exactly the numbers {cover:?} (R807/2015 r.8)"
        )));
    }
    Ok(Series {
        base_chips: comps.iter().map(|c| c.chips).sum(),
        comps,
        coverage,
    })
}

pub(crate) fn configure(table: &TableConfig) -> Result<Configured<RouletteConfig>, ConfigError> {
    table.only_settings(SETTINGS)?;
    let mut cfg = base_config(table, "R807/2015", KINDS)?;
    // French numbering only (R807/2015 r.6(c)).
    match table.text_setting("wheel")? {
        None | Some("french") => {}
        Some(_) => {
            return Err(ConfigError::setting(
                "wheel",
                "online French roulette has the French numbering only (R807/2015 r.6(c))",
            ));
        }
    }
    // Zero rule: not in the seed; an operator setting, never assumed (digest section 10, N11).
    cfg.zero_rule = match table.text_setting("zero_rule")? {
        Some("lose") => ZeroRule::Lose,
        Some("la_partage") => ZeroRule::LaPartage,
        Some(other) => {
            return Err(ConfigError::setting(
                "zero_rule",
                format!(
                    "must be `lose` or `la_partage`, got `{}`",
                    other.chars().take(40).collect::<String>()
                ),
            ));
        }
        None => {
            return Err(ConfigError::setting(
                "zero_rule",
                "is required for roulette_french_online (`lose` or `la_partage`): R807/2015 has no zero rule; it is the operator's specific rule",
            ));
        }
    };
    for (i, name) in bets::PAYOUT_SETTINGS.iter().enumerate() {
        cfg.payouts[i] = payout_setting(table, name, bets::LAND_PAYOUTS[i])?;
    }
    for (slot, (name, cover)) in CALL_SETTINGS.iter().enumerate() {
        if let Some(list) = table.list_setting(name)? {
            cfg.series[slot] = Some(composition(name, list, cover, cfg.zero_corner_allowed)?);
        }
    }
    cfg.call_neighbours = table.bool_setting("call_neighbours", false)?;
    cfg.call_finals = table.bool_setting("call_finals", false)?;
    cfg.announced_bets = true;
    cfg.multi_player = table.bool_setting("multi_player", false)?;
    // No limit proportions online (R807/2015 r.3(b)(c)).
    Ok(Configured {
        config: cfg,
        violations: Vec::new(),
    })
}
