//! # Craps (`craps`): Portaria 217/2007, Título I, Capítulo II, Secção II
//!
//! Two dice chosen by the shooter from five (r.2, r.4), thrown by a player who has a bet (r.5);
//! the series of come-out and point (r.10.1); simple, multiple and mixed chances (r.9-r.13).
//! Winning bets stay the player's (r.13.2).
//!
//! ## Rounds and bets across rounds
//! A craps **round** is any run of events a table reports together: one throw per round or
//! several. Bets placed in a round are adjudicated over the throws that follow them in that
//! round. A bet not decided at the end of the round is reported with `Outcome::Open` (net 0) and
//! kept in the state ([`CrapsState::open_bets`]) with its moved-to number, its throws and what it
//! rides on; a later round's `dice` events decide it, and it then appears in that round's
//! adjudication `bets` under its original id with its due net. Every carried bet appears in each
//! round's adjudication (decided or still open) before the round's own bets; the settlement of a
//! round lists the bets decided in it. Bets of a round may reference carried bets (`on_bet`),
//! and `bet_changed` / `bet_withdrawn` / `collect` / `pay` may name them.
//!
//! ## Vocabulary
//!
//! **Bet types** (`chips`, `attrs` unused):
//!
//! | id | `selection` | `on_bet` | wins / loses | pays | rule |
//! |---|---|---|---|---|---|
//! | `pass_line` | empty | - | come-out 7, 11 / 2, 3, 12; then the point / 7 | 1 to 1 | r.10.1 |
//! | `dont_pass` | empty | - | come-out 2, 3 (bar 12) or 3, 12 (bar 2) / 7, 11, bar total push; then 7 / the point | 1 to 1 | r.10.2 |
//! | `come` | empty | - | next throw 7, 11 / 2, 3, 12, else moves to the total; then its number / 7 | 1 to 1 | r.10.3 |
//! | `dont_come` | empty | - | next throw 2, 3 / 3, 12 / 7, 11, bar push (note C2), else moves; then 7 / its number | 1 to 1 | r.10.4 |
//! | `big_6`, `big_8` | empty | - | 6 (8) / 7 | 1 to 1 | r.10.5, r.10.6 |
//! | `under_7`, `over_7` | empty | - | 2-6 / 7-12; 8-12 / 2-7 (one throw) | 1 to 1 | r.10.7, r.10.8 |
//! | `odds` | empty | the pass / don't pass / come / don't come bet | with its base bet | 6:5 (6, 8), 3:2 (5, 9), 2:1 (4, 10); don't side per `dont_odds_payout` | r.11.1 |
//! | `any_craps` | empty | - | 2, 3, 12 (one throw) | 7 to 1 | r.11.2 |
//! | `hard_4`, `hard_10` | empty | - | 2-2 / 5-5; lose on 7 or the easy way | 7 to 1 | r.11.3 |
//! | `hard_6`, `hard_8` | empty | - | 3-3 / 4-4; same | 9 to 1 | r.11.3 |
//! | `any_seven` | empty | - | 7 (one throw) | 4 to 1 | r.11.4 |
//! | `total_2`, `total_12` | empty | - | the total (one throw) | 30 to 1 | r.11.5, r.11.8 |
//! | `total_3`, `total_11` | empty | - | the total (one throw) | 15 to 1 | r.11.6, r.11.7 |
//! | `place` | `[n]`, n 4, 5, 6, 8, 9, 10 | - | n before 7 | 9:5 (4, 10), 7:5 (5, 9), 7:6 (6, 8) | r.12 (1st) |
//! | `place_to_lose` | `[n]` | - | 7 before n | 5:11 (4, 10), 5:8 (5, 9), 10:13 (6, 8) | r.12 (2nd) |
//! | `field` | empty | - | 3, 4, 9, 10, 11 at 1:1; 2, 12 at 2:1; loses 5-8 | | r.13.1 |
//!
//! Fractions of a cent are rounded down. Multi-throw bets are always working (note C4). A bet
//! type or selection not in this table is `CR_ILLEGAL_BET` (engine code), net 0.
//!
//! **Events**: `bet`, `bet_changed`, `bet_withdrawn`, `no_more_bets` (informational), `dice`
//! (two faces 1-6, `chosen_from` 5), `void`, `role`, `procedure`, `collect`, `pay`. Others are a
//! [`rules_core::RoundError`].
//!
//! **Void reasons** (apply to the throw just recorded): `die_off_table` (r.7(a)), `short_throw`
//! (the dice did not pass the middle of the table without hitting a rail, r.7(b)).
//!
//! **Roles**: `shooter` (`player` and/or `seat`: who throws from now on, r.5, r.8; handing the
//! dice back to the shooter who sevened out is CR_SHOOTER_NOT_CHANGED at this event), `stickman`,
//! `dealer` (informational). **Procedures**: `announcement`, `last_round` (r.13.3),
//! `die_replaced` (r.7(a)), informational. **Faults**: none.
//!
//! **Settings**: `bar` (int, **required**: 12 or 2, r.10.2); `place_min`, `place_to_lose_min`
//! (int, or list of six ints for 4, 5, 6, 8, 9, 10; default the table minimum; r.12);
//! `dont_odds_payout` (text: `r11_table`, the only table of r.11.1 applied literally, or `lay`:
//! 1:2, 2:3, 5:6; default `r11_table` with an Info configuration finding CR_DONT_ODDS_PAYOUT,
//! note C1); `odds_max_payout_cents` (int, the legal maximum payment of an odds bet, note C8).
//! Accepted `regulation`: absent or `P217/2007`.
//!
//! **Checks**: CR_WRONG_PAYOUT (discrepancies), CR_VOID_THROW_SETTLED, CR_ODDS_OVER_FLAT,
//! CR_ODDS_WITHOUT_BASE, CR_COME_BEFORE_POINT, CR_LINE_BET_WITHDRAWN,
//! CR_PLACE_NOT_MULTIPLE_OF_MIN, CR_SHOOTER_NOT_CHANGED, CR_SHOOTER_WITHOUT_BET,
//! CR_WRONG_DICE_COUNT; engine codes CR_ILLEGAL_BET, CR_ODDS_OVER_LEGAL_MAX, CR_DONT_ODDS_PAYOUT.

use std::borrow::Cow;

use rules_core::{
    Adjudication, BetOutcome, Cents, ConfigError, Configured, EventKind, GameId, Id, Options,
    Outcome, Round, RoundError, Setting, Severity, TableConfig, Violation, check_stake,
};
use serde::{Deserialize, Serialize};

use crate::{OpenBet, check_faces, mul_div};

/// Bet types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    PassLine,
    DontPass,
    Come,
    DontCome,
    Big6,
    Big8,
    Under7,
    Over7,
    Odds,
    AnyCraps,
    Hard(u8),
    AnySeven,
    Total(u8),
    Place,
    PlaceToLose,
    Field,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "pass_line" => Kind::PassLine,
            "dont_pass" => Kind::DontPass,
            "come" => Kind::Come,
            "dont_come" => Kind::DontCome,
            "big_6" => Kind::Big6,
            "big_8" => Kind::Big8,
            "under_7" => Kind::Under7,
            "over_7" => Kind::Over7,
            "odds" => Kind::Odds,
            "any_craps" => Kind::AnyCraps,
            "hard_4" => Kind::Hard(4),
            "hard_6" => Kind::Hard(6),
            "hard_8" => Kind::Hard(8),
            "hard_10" => Kind::Hard(10),
            "any_seven" => Kind::AnySeven,
            "total_2" => Kind::Total(2),
            "total_3" => Kind::Total(3),
            "total_11" => Kind::Total(11),
            "total_12" => Kind::Total(12),
            "place" => Kind::Place,
            "place_to_lose" => Kind::PlaceToLose,
            "field" => Kind::Field,
            _ => return None,
        })
    }
    fn line(self) -> bool {
        matches!(
            self,
            Kind::PassLine | Kind::DontPass | Kind::Come | Kind::DontCome
        )
    }
    fn dont(self) -> bool {
        matches!(self, Kind::DontPass | Kind::DontCome)
    }
}

const POINTS: [u8; 6] = [4, 5, 6, 8, 9, 10];

fn point_index(n: u8) -> Option<usize> {
    POINTS.iter().position(|p| *p == n)
}

/// Don't-side odds payouts (note C1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DontOdds {
    /// The r.11.1 table as written (6:5, 3:2, 2:1) applied to the don't side too.
    R11Table,
    /// Lay odds: 5:6, 2:3, 1:2.
    Lay,
}

/// A compiled craps configuration.
#[derive(Clone, Debug)]
pub struct CrapsConfig {
    /// The barred total for don't pass / don't come: 12 or 2 (r.10.2).
    pub bar: u8,
    /// Minimum (and unit) of place and place-to-lose bets per number 4, 5, 6, 8, 9, 10 (r.12).
    pub place_min: [Option<Cents>; 6],
    pub place_to_lose_min: [Option<Cents>; 6],
    pub dont_odds: DontOdds,
    /// The legal maximum payment of an odds bet (r.11.1; note C8).
    pub odds_max_payout: Option<Cents>,
}

/// Who throws.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shooter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
}

/// What a craps table carries between rounds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrapsState {
    /// The table's point (`None` = the next throw is a come-out), r.10.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<u8>,
    /// The current shooter (r.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shooter: Option<Shooter>,
    /// The shooter who sevened out and must hand over the dice (r.8(b)); cleared when another
    /// shooter takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seven_out_by: Option<Shooter>,
    /// Every bet still standing, in the order placed: its type, stake, moved-to number (come /
    /// don't come) or box number (place), the bet odds ride on, and how many throws it has seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_bets: Vec<OpenBet>,
}

fn per_number(table: &TableConfig, name: &str) -> Result<[Option<Cents>; 6], ConfigError> {
    let ok = |v: i64| (1..=rules_core::MAX_AMOUNT_CENTS).contains(&v);
    match table.setting(name) {
        None => Ok([table.min_bet_cents; 6]),
        Some(Setting::Int(v)) if ok(*v) => Ok([Some(*v); 6]),
        Some(Setting::List(l)) if l.len() == 6 && l.iter().all(|v| ok(*v)) => {
            let mut out = [None; 6];
            for (o, v) in out.iter_mut().zip(l) {
                *o = Some(*v);
            }
            Ok(out)
        }
        Some(_) => Err(ConfigError::setting(
            name,
            "must be a positive amount in cents or a list of six (for 4, 5, 6, 8, 9, 10)",
        )),
    }
}

pub(crate) fn configure(table: &TableConfig) -> Result<Configured<CrapsConfig>, ConfigError> {
    table.only_settings(&[
        "bar",
        "place_min",
        "place_to_lose_min",
        "dont_odds_payout",
        "odds_max_payout_cents",
    ])?;
    crate::check_regulation(table)?;
    crate::check_table_limits(table)?;
    if let Some(l) = table.limits.first() {
        return Err(ConfigError::field(
            "limits[0]",
            format!(
                "craps has no per-chance limits in P217/2007 (got `{}`)",
                l.chance.chars().take(40).collect::<String>()
            ),
        ));
    }
    // The bar is the pair of sixes or the pair of aces (r.10.2).
    let bar = match table.opt_int_setting("bar")? {
        Some(12) => 12,
        Some(2) => 2,
        Some(v) => {
            return Err(ConfigError::setting(
                "bar",
                format!("must be 12 or 2 (P217/2007 T.I C.II S.II r.10.2), got {v}"),
            ));
        }
        None => {
            return Err(ConfigError::setting(
                "bar",
                "is required for craps: 12 or 2 (P217/2007 T.I C.II S.II r.10.2)",
            ));
        }
    };
    let mut violations = Vec::new();
    let dont_odds = match table.text_setting("dont_odds_payout")? {
        Some("r11_table") => DontOdds::R11Table,
        Some("lay") => DontOdds::Lay,
        Some(v) => {
            return Err(ConfigError::setting(
                "dont_odds_payout",
                format!(
                    "must be `r11_table` or `lay`, got `{}`",
                    v.chars().take(40).collect::<String>()
                ),
            ));
        }
        None => {
            violations.push(
                Violation::new("CR_DONT_ODDS_PAYOUT", Severity::Info, "P217/2007 T.I C.II S.II r.11.1", "dont_odds_payout not set: don't-side odds are paid by the r.11.1 table as written (6:5, 3:2, 2:1), above the true odds; set `r11_table` or `lay` (digest note C1)")
                    .review(),
            );
            DontOdds::R11Table
        }
    };
    let odds_max_payout = table.opt_int_setting("odds_max_payout_cents")?;
    if odds_max_payout.is_some_and(|v| v <= 0) {
        return Err(ConfigError::setting(
            "odds_max_payout_cents",
            "must be positive",
        ));
    }
    Ok(Configured {
        config: CrapsConfig {
            bar,
            place_min: per_number(table, "place_min")?,
            place_to_lose_min: per_number(table, "place_to_lose_min")?,
            dont_odds,
            odds_max_payout,
        },
        violations,
    })
}

type Res = (Cents, Outcome, &'static str, &'static str);

struct Live<'a> {
    id: &'a Id,
    kind: Option<Kind>,
    seat: Option<u8>,
    player: Option<&'a Id>,
    stake: Cents,
    number: Option<u8>,
    on_bet: Option<&'a Id>,
    throws: u32,
    withdrawn: bool,
    result: Option<Res>,
    decided_at: Option<usize>,
}

enum Step {
    Win(i64, i64, &'static str, &'static str),
    Lose(&'static str, &'static str),
    Push(&'static str, &'static str),
    Move(u8),
    Stay,
}

const R101: &str = "P217/2007 T.I C.II S.II r.10.1";
const R102: &str = "P217/2007 T.I C.II S.II r.10.2";
const R103: &str = "P217/2007 T.I C.II S.II r.10.3";
const R104: &str = "P217/2007 T.I C.II S.II r.10.4";
const R12: &str = "P217/2007 T.I C.II S.II r.12";

/// One throw of total `t` (hard when both dice equal) against a bet, with the table's point `p`
/// before the throw.
fn step(kind: Kind, number: Option<u8>, p: Option<u8>, t: u8, hard: bool, bar: u8) -> Step {
    let dont_wins = |t: u8| {
        if bar == 12 {
            t == 2 || t == 3
        } else {
            t == 3 || t == 12
        }
    };
    match kind {
        // Pass line (r.10.1).
        Kind::PassLine => match p {
            None if t == 7 || t == 11 => Step::Win(1, 1, "pass line: come-out 7 or 11", R101),
            None if matches!(t, 2 | 3 | 12) => Step::Lose("pass line: come-out 2, 3 or 12", R101),
            None => Step::Stay,
            Some(p) if t == p => Step::Win(1, 1, "pass line: the point repeated", R101),
            Some(_) if t == 7 => Step::Lose("pass line: 7 before the point", R101),
            Some(_) => Step::Stay,
        },
        // Don't pass (r.10.2); on the bar total the bets neither win nor lose.
        Kind::DontPass => match p {
            None if t == bar => Step::Push("don't pass: the barred total on the come-out", R102),
            None if dont_wins(t) => Step::Win(1, 1, "don't pass: come-out craps", R102),
            None if t == 7 || t == 11 => Step::Lose("don't pass: come-out 7 or 11", R102),
            None => Step::Stay,
            Some(_) if t == 7 => Step::Win(1, 1, "don't pass: 7 before the point", R102),
            Some(p) if t == p => Step::Lose("don't pass: the point repeated", R102),
            Some(_) => Step::Stay,
        },
        // Come (r.10.3).
        Kind::Come => match number {
            None if t == 7 || t == 11 => Step::Win(1, 1, "come: next throw 7 or 11", R103),
            None if matches!(t, 2 | 3 | 12) => Step::Lose("come: next throw 2, 3 or 12", R103),
            None => Step::Move(t),
            Some(n) if t == n => Step::Win(1, 1, "come: its number repeated", R103),
            Some(_) if t == 7 => Step::Lose("come: 7 before its number", R103),
            Some(_) => Step::Stay,
        },
        // Don't come (r.10.4); the bar total a push by analogy with r.10.2 (note C2).
        Kind::DontCome => match number {
            None if t == bar => Step::Push("don't come: the barred total (note C2)", R104),
            None if dont_wins(t) => Step::Win(1, 1, "don't come: next throw craps", R104),
            None if t == 7 || t == 11 => Step::Lose("don't come: next throw 7 or 11", R104),
            None => Step::Move(t),
            Some(_) if t == 7 => Step::Win(1, 1, "don't come: 7 before its number", R104),
            Some(n) if t == n => Step::Lose("don't come: its number repeated", R104),
            Some(_) => Step::Stay,
        },
        Kind::Big6 | Kind::Big8 => {
            let (n, cite) = if kind == Kind::Big6 {
                (6, "P217/2007 T.I C.II S.II r.10.5")
            } else {
                (8, "P217/2007 T.I C.II S.II r.10.6")
            };
            if t == n {
                Step::Win(1, 1, "big 6/8: the number came", cite)
            } else if t == 7 {
                Step::Lose("big 6/8: 7 came", cite)
            } else {
                Step::Stay
            }
        }
        Kind::Under7 if t < 7 => Step::Win(1, 1, "under 7: 2-6", "P217/2007 T.I C.II S.II r.10.7"),
        Kind::Under7 => Step::Lose("under 7: 7-12", "P217/2007 T.I C.II S.II r.10.7"),
        Kind::Over7 if t > 7 => Step::Win(1, 1, "over 7: 8-12", "P217/2007 T.I C.II S.II r.10.8"),
        Kind::Over7 => Step::Lose("over 7: 2-7", "P217/2007 T.I C.II S.II r.10.8"),
        Kind::AnyCraps if matches!(t, 2 | 3 | 12) => Step::Win(
            7,
            1,
            "craps: 2, 3 or 12 at 7 to 1",
            "P217/2007 T.I C.II S.II r.11.2",
        ),
        Kind::AnyCraps => Step::Lose("craps: no 2, 3 or 12", "P217/2007 T.I C.II S.II r.11.2"),
        Kind::Hard(n) => {
            let cite = "P217/2007 T.I C.II S.II r.11.3";
            let k = if n == 4 || n == 10 { 7 } else { 9 };
            if t == n && hard {
                Step::Win(k, 1, "hardway: the pair came", cite)
            } else if t == n || t == 7 {
                Step::Lose("hardway: 7 or the number the easy way", cite)
            } else {
                Step::Stay
            }
        }
        Kind::AnySeven if t == 7 => {
            Step::Win(4, 1, "total 7 at 4 to 1", "P217/2007 T.I C.II S.II r.11.4")
        }
        Kind::AnySeven => Step::Lose("total 7: another total", "P217/2007 T.I C.II S.II r.11.4"),
        Kind::Total(n) => {
            let (k, cite) = match n {
                2 => (30, "P217/2007 T.I C.II S.II r.11.5"),
                3 => (15, "P217/2007 T.I C.II S.II r.11.6"),
                11 => (15, "P217/2007 T.I C.II S.II r.11.7"),
                _ => (30, "P217/2007 T.I C.II S.II r.11.8"),
            };
            if t == n {
                Step::Win(k, 1, "the total came", cite)
            } else {
                Step::Lose("another total", cite)
            }
        }
        Kind::Place => {
            let n = number.unwrap_or(0);
            let (a, b) = match n {
                4 | 10 => (9, 5),
                5 | 9 => (7, 5),
                _ => (7, 6),
            };
            if t == n {
                Step::Win(a, b, "place: the number before 7", R12)
            } else if t == 7 {
                Step::Lose("place: 7 before the number", R12)
            } else {
                Step::Stay
            }
        }
        Kind::PlaceToLose => {
            let n = number.unwrap_or(0);
            let (a, b) = match n {
                4 | 10 => (5, 11),
                5 | 9 => (5, 8),
                _ => (10, 13),
            };
            if t == 7 {
                Step::Win(a, b, "place to lose: 7 before the number", R12)
            } else if t == n {
                Step::Lose("place to lose: the number before 7", R12)
            } else {
                Step::Stay
            }
        }
        Kind::Field => match t {
            2 | 12 => Step::Win(
                2,
                1,
                "field: 2 or 12 at 2 to 1",
                "P217/2007 T.I C.II S.II r.13.1",
            ),
            3 | 4 | 9 | 10 | 11 => Step::Win(
                1,
                1,
                "field: 3, 4, 9, 10, 11 at even money",
                "P217/2007 T.I C.II S.II r.13.1",
            ),
            _ => Step::Lose("field: 5, 6, 7 or 8", "P217/2007 T.I C.II S.II r.13.1"),
        },
        Kind::Odds => Step::Stay,
    }
}

/// Odds payout on `n` (r.11.1): 6:5 on 6/8, 3:2 on 5/9, 2:1 on 4/10; the don't side per the
/// set-up (note C1).
fn odds_payout(n: u8, dont: bool, cfg: &CrapsConfig) -> (i64, i64) {
    let (a, b) = match n {
        6 | 8 => (6, 5),
        5 | 9 => (3, 2),
        _ => (2, 1),
    };
    if dont && cfg.dont_odds == DontOdds::Lay {
        (b, a)
    } else {
        (a, b)
    }
}

/// The same person: by player id when both name one, else by seat.
fn same_shooter(a: &Shooter, b: &Shooter) -> bool {
    match (&a.player, &b.player) {
        (Some(p), Some(q)) => p == q,
        _ => a.seat.is_some() && a.seat == b.seat,
    }
}

fn shooter_name(sh: &Shooter) -> String {
    sh.player
        .as_deref()
        .map_or_else(|| format!("seat {:?}", sh.seat), String::from)
}

fn is_shooter(sh: &Shooter, player: Option<&Id>, seat: Option<u8>) -> bool {
    match &sh.player {
        Some(p) => player.is_some_and(|q| **q == **p),
        None => sh.seat.is_some() && sh.seat == seat,
    }
}

pub(crate) fn adjudicate(
    cfg: &CrapsConfig,
    state: &mut CrapsState,
    round: &Round,
    options: &Options,
) -> Result<Adjudication, RoundError> {
    let mut adj = Adjudication::new(GameId::Craps, round.round_id.clone());
    let st: &CrapsState = state;
    let n_new = round
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Bet(_)))
        .count();
    let mut live: Vec<Live<'_>> = Vec::with_capacity(st.open_bets.len() + n_new);
    for o in &st.open_bets {
        o.check(round)?;
        live.push(Live {
            id: &o.id,
            kind: Kind::parse(&o.bet_type),
            seat: o.seat,
            player: o.player.as_ref(),
            stake: o.stake_cents,
            number: o.number,
            on_bet: o.on_bet.as_ref(),
            throws: o.throws,
            withdrawn: false,
            result: None,
            decided_at: None,
        });
    }
    let mut point = st.point;
    let mut shooter: Option<Shooter> = None; // set when a role event changes it
    let mut seven_out_by: Option<Option<Shooter>> = None; // Some(new value) when changed
    let mut any_void = false;
    let mut not_changed_flagged = false;
    let mut without_bet_flagged = false;

    for (i, ev) in round.events.iter().enumerate() {
        match &ev.kind {
            EventKind::Bet(b) => {
                check_stake(round, &b.id, b.amount_cents)?;
                if live.iter().any(|l| l.id == &b.id) {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("duplicate bet id `{}`", b.id),
                    ));
                }
                let mut kind = Kind::parse(&b.bet_type);
                let mut number = None;
                match kind {
                    Some(Kind::Place | Kind::PlaceToLose) => match b.selection[..] {
                        [n] if point_index(n).is_some() => number = Some(n),
                        _ => kind = None,
                    },
                    Some(_) if !b.selection.is_empty() => kind = None,
                    _ => {}
                }
                if kind.is_none() {
                    adj.violation(
                        Violation::new(
                            "CR_ILLEGAL_BET",
                            Severity::Medium,
                            "P217/2007 T.I C.II S.II r.9-r.13",
                            format!(
                                "bet {}: `{}` {:?} is not a bet of craps",
                                b.id,
                                b.bet_type.chars().take(40).collect::<String>(),
                                b.selection
                            ),
                        )
                        .bet(&b.id)
                        .event(i),
                    );
                }
                if b.on_bet.is_some() && kind != Some(Kind::Odds) {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "only odds bets ride on another bet (on_bet)",
                    ));
                }
                match kind {
                    // Come and don't come only after the point is established (r.10.3, r.10.4).
                    Some(Kind::Come | Kind::DontCome) if point.is_none() => {
                        adj.violation(
                            Violation::new(
                                "CR_COME_BEFORE_POINT",
                                Severity::Medium,
                                if kind == Some(Kind::Come) { R103 } else { R104 },
                                format!(
                                    "bet {}: {} placed before a point is established",
                                    b.id, b.bet_type
                                ),
                            )
                            .bet(&b.id)
                            .event(i),
                        );
                    }
                    // Number-box bets in whole multiples of the fixed minimums (r.12).
                    Some(k @ (Kind::Place | Kind::PlaceToLose)) => {
                        check_place_multiple(cfg, &mut adj, &b.id, i, k, number, b.amount_cents)
                    }
                    Some(Kind::Odds) => {
                        let Some(base_id) = &b.on_bet else {
                            adj.violation(
                                Violation::new(
                                    "CR_ODDS_WITHOUT_BASE",
                                    Severity::Medium,
                                    "P217/2007 T.I C.II S.II r.11.1",
                                    format!("bet {}: odds without a base bet (on_bet)", b.id),
                                )
                                .bet(&b.id)
                                .event(i),
                            );
                            live.push(Live {
                                id: &b.id,
                                kind: None,
                                seat: b.seat,
                                player: b.player.as_ref(),
                                stake: b.amount_cents,
                                number: None,
                                on_bet: None,
                                throws: 0,
                                withdrawn: false,
                                result: None,
                                decided_at: None,
                            });
                            continue;
                        };
                        let Some(k) = live.iter().position(|l| l.id == base_id) else {
                            return Err(RoundError::bet(
                                round,
                                &b.id,
                                format!("odds on unknown bet `{base_id}`"),
                            ));
                        };
                        let base = &live[k];
                        // Odds only on a standing pass / don't pass (point established) or a
                        // come / don't come bet that has moved to a number (r.11.1).
                        let why = match base.kind {
                            _ if base.result.is_some() || base.withdrawn => {
                                Some("its base bet is no longer standing")
                            }
                            Some(Kind::PassLine | Kind::DontPass) if point.is_none() => {
                                Some("placed before the point is established")
                            }
                            Some(Kind::Come | Kind::DontCome) if base.number.is_none() => {
                                Some("its come / don't come bet has not moved to a number")
                            }
                            Some(k) if k.line() => None,
                            _ => Some("its base is not a pass, don't pass, come or don't come bet"),
                        };
                        if let Some(why) = why {
                            adj.violation(
                                Violation::new(
                                    "CR_ODDS_WITHOUT_BASE",
                                    Severity::Medium,
                                    "P217/2007 T.I C.II S.II r.11.1",
                                    format!("bet {}: odds on {base_id}: {why}", b.id),
                                )
                                .bet(&b.id)
                                .event(i),
                            );
                            if base.result.is_some()
                                || base.withdrawn
                                || !base.kind.is_some_and(Kind::line)
                            {
                                kind = None;
                            }
                        }
                    }
                    _ => {}
                }
                live.push(Live {
                    id: &b.id,
                    kind,
                    seat: b.seat,
                    player: b.player.as_ref(),
                    stake: b.amount_cents,
                    number,
                    on_bet: b.on_bet.as_ref(),
                    throws: 0,
                    withdrawn: false,
                    result: None,
                    decided_at: None,
                });
                if kind == Some(Kind::Odds) {
                    check_odds_over_flat(&mut adj, &live, live.len() - 1, i);
                }
            }
            EventKind::BetChanged {
                bet_id,
                amount_cents,
            } => {
                let k = find_standing(&live, bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_changed names unknown or decided bet `{bet_id}`"),
                    )
                })?;
                check_stake(round, bet_id, *amount_cents)?;
                check_locked(&mut adj, &live[k], point, i, "changed");
                live[k].stake = *amount_cents;
                match live[k].kind {
                    Some(Kind::Odds) => check_odds_over_flat(&mut adj, &live, k, i),
                    Some(kd @ (Kind::Place | Kind::PlaceToLose)) => check_place_multiple(
                        cfg,
                        &mut adj,
                        bet_id,
                        i,
                        kd,
                        live[k].number,
                        *amount_cents,
                    ),
                    _ => {}
                }
            }
            EventKind::BetWithdrawn { bet_id } => {
                let k = find_standing(&live, bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_withdrawn names unknown or decided bet `{bet_id}`"),
                    )
                })?;
                check_locked(&mut adj, &live[k], point, i, "withdrawn");
                live[k].withdrawn = true;
                // Odds go with their base bet.
                let id = live[k].id;
                for l in live.iter_mut() {
                    if l.on_bet == Some(id) && l.result.is_none() {
                        l.withdrawn = true;
                    }
                }
            }
            EventKind::NoMoreBets => {}
            EventKind::Dice { dice, chosen_from } => {
                check_faces(round, i, dice)?;
                // Two dice chosen from the five offered (r.2, r.4).
                if dice.len() != 2 || chosen_from.is_some_and(|n| n != 5) {
                    adj.violation(
                        Violation::new(
                            "CR_WRONG_DICE_COUNT",
                            if dice.len() != 2 {
                                Severity::Medium
                            } else {
                                Severity::Low
                            },
                            "P217/2007 T.I C.II S.II r.2, r.4",
                            format!(
                                "throw of {} dice chosen from {:?} (two from five)",
                                dice.len(),
                                chosen_from
                            ),
                        )
                        .event(i),
                    );
                }
                let [d1, d2] = dice[..] else { continue };
                // A void right after these dice voids this throw. A void recorded once the table
                // has moved on from it (bets, the call, a collection or a payment came after it)
                // is the void of a next throw that showed no dice (a die off the table): it does
                // not undo this one (P217/2007 T.I C.II S.II r.7).
                let voided = round.events[i + 1..]
                    .iter()
                    .take_while(|e| {
                        !matches!(
                            e.kind,
                            EventKind::Dice { .. }
                                | EventKind::Bet(_)
                                | EventKind::BetChanged { .. }
                                | EventKind::BetWithdrawn { .. }
                                | EventKind::NoMoreBets
                                | EventKind::Collect { .. }
                                | EventKind::Pay { .. }
                        )
                    })
                    .any(|e| matches!(e.kind, EventKind::Void { .. }));
                if voided {
                    // A void throw decides nothing (r.7).
                    any_void = true;
                    continue;
                }
                let cur: Option<&Shooter> = match &shooter {
                    Some(s) => Some(s),
                    None => st.shooter.as_ref(),
                };
                let so: Option<&Shooter> = match &seven_out_by {
                    Some(v) => v.as_ref(),
                    None => st.seven_out_by.as_ref(),
                };
                if let Some(sh) = cur {
                    // After a seven-out the dice change hands (r.8(b)).
                    // (No handover recorded: the breach shows at his next throw.)
                    if so.is_some_and(|o| same_shooter(o, sh)) && !not_changed_flagged {
                        not_changed_flagged = true;
                        adj.violation(
                            Violation::new(
                                "CR_SHOOTER_NOT_CHANGED",
                                Severity::Low,
                                "P217/2007 T.I C.II S.II r.8(b)",
                                format!(
                                    "shooter {} throws again after sevening out",
                                    shooter_name(sh)
                                ),
                            )
                            .event(i),
                        );
                        seven_out_by = Some(None);
                    }
                    // Only a player who has a bet throws (r.5, r.8(a)).
                    if !without_bet_flagged
                        && !live.iter().any(|l| {
                            !l.withdrawn
                                && (l.result.is_none() || l.decided_at.is_some())
                                && is_shooter(sh, l.player, l.seat)
                        })
                    {
                        without_bet_flagged = true;
                        adj.violation(
                            Violation::new(
                                "CR_SHOOTER_WITHOUT_BET",
                                Severity::Low,
                                "P217/2007 T.I C.II S.II r.5, r.8(a)",
                                format!(
                                    "the dice are with {:?}, who has no bet",
                                    sh.player.as_deref().map_or_else(
                                        || format!("seat {:?}", sh.seat),
                                        String::from
                                    )
                                ),
                            )
                            .event(i),
                        );
                    }
                }
                let t = d1 + d2;
                let hard = d1 == d2;
                // Base bets first, then odds with their base's decision.
                for l in live.iter_mut() {
                    if l.result.is_some() || l.withdrawn {
                        continue;
                    }
                    let Some(kind) = l.kind else { continue };
                    if kind == Kind::Odds {
                        continue;
                    }
                    let res = match step(kind, l.number, point, t, hard, cfg.bar) {
                        Step::Win(a, b, r, c) => Some((mul_div(l.stake, a, b), Outcome::Won, r, c)),
                        Step::Lose(r, c) => Some((-l.stake, Outcome::Lost, r, c)),
                        Step::Push(r, c) => Some((0, Outcome::Push, r, c)),
                        Step::Move(n) => {
                            l.number = Some(n);
                            None
                        }
                        Step::Stay => None,
                    };
                    if res.is_some() {
                        l.result = res;
                        l.decided_at = Some(i);
                    }
                }
                for k in 0..live.len() {
                    if live[k].kind != Some(Kind::Odds)
                        || live[k].result.is_some()
                        || live[k].withdrawn
                    {
                        continue;
                    }
                    let Some(b) = live[k]
                        .on_bet
                        .and_then(|id| live.iter().position(|l| l.id == id))
                    else {
                        continue;
                    };
                    if live[b].decided_at != Some(i) {
                        continue;
                    }
                    let base_kind = live[b].kind.unwrap_or(Kind::PassLine);
                    let n = match base_kind {
                        Kind::PassLine | Kind::DontPass => point,
                        _ => live[b].number,
                    };
                    let (_, outcome, _, _) = live[b].result.unwrap_or((0, Outcome::Push, "", ""));
                    let stake = live[k].stake;
                    let cite = "P217/2007 T.I C.II S.II r.11.1";
                    // Odds are decided with their base bet (r.11.1).
                    let res: Res = match (outcome, n) {
                        (Outcome::Won, Some(n)) => {
                            let (a, d) = odds_payout(n, base_kind.dont(), cfg);
                            let pay = mul_div(stake, a, d);
                            if let Some(max) = cfg.odds_max_payout
                                && pay > max
                            {
                                adj.violation(Violation::new("CR_ODDS_OVER_LEGAL_MAX", Severity::Medium, cite, format!("bet {}: odds pay {pay} cents, above the legal maximum {max}", live[k].id)).bet(live[k].id).event(i));
                            }
                            (pay, Outcome::Won, "odds won with their base bet", cite)
                        }
                        (Outcome::Lost, _) => {
                            (-stake, Outcome::Lost, "odds lost with their base bet", cite)
                        }
                        _ => (
                            0,
                            Outcome::Push,
                            "odds returned: their base bet was decided without a number",
                            cite,
                        ),
                    };
                    live[k].result = Some(res);
                    live[k].decided_at = Some(i);
                }
                for l in live.iter_mut() {
                    if l.result.is_none() && !l.withdrawn {
                        l.throws = l.throws.saturating_add(1);
                    }
                }
                // The series (r.10.1, r.8(b)).
                match point {
                    None if point_index(t).is_some() => point = Some(t),
                    None => {}
                    Some(p) if t == p => point = None,
                    Some(_) if t == 7 => {
                        point = None;
                        seven_out_by = Some(cur.cloned());
                    }
                    Some(_) => {}
                }
            }
            EventKind::Void { reason } => {
                if !matches!(reason.as_str(), "die_off_table" | "short_throw") {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "void reason `{}` is not die_off_table or short_throw (P217/2007 T.I C.II S.II r.7)",
                            reason.chars().take(40).collect::<String>()
                        ),
                    ));
                }
                any_void = true;
            }
            EventKind::Role { role, seat, player } => match role.as_str() {
                "shooter" => {
                    if player.is_none() && seat.is_none() {
                        return Err(RoundError::event(
                            round,
                            i,
                            "shooter role without player or seat",
                        ));
                    }
                    let new = Shooter {
                        player: player.as_deref().map(String::from),
                        seat: *seat,
                    };
                    let so: Option<&Shooter> = match &seven_out_by {
                        Some(v) => v.as_ref(),
                        None => st.seven_out_by.as_ref(),
                    };
                    if let Some(out) = so {
                        // After a seven-out the dice change hands (r.8(b)): handing them back to
                        // the shooter who sevened out is the breach, flagged at the handover.
                        // Flagged once: his throws that follow are not a second breach.
                        if same_shooter(out, &new) && !not_changed_flagged {
                            not_changed_flagged = true;
                            adj.violation(
                                Violation::new(
                                    "CR_SHOOTER_NOT_CHANGED",
                                    Severity::Low,
                                    "P217/2007 T.I C.II S.II r.8(b)",
                                    format!(
                                        "the dice are handed back to {}, who sevened out",
                                        shooter_name(&new)
                                    ),
                                )
                                .event(i),
                            );
                        }
                        seven_out_by = Some(None);
                    }
                    shooter = Some(new);
                }
                "stickman" | "dealer" => {}
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "role `{}` is not a craps role (shooter, stickman, dealer)",
                            other.chars().take(40).collect::<String>()
                        ),
                    ));
                }
            },
            EventKind::Procedure { name, .. }
                if matches!(
                    name.as_str(),
                    "announcement" | "last_round" | "die_replaced"
                ) => {}
            EventKind::Collect { bet_ids } => {
                if let Some(id) = bet_ids.iter().find(|id| !live.iter().any(|l| l.id == *id)) {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("collect names unknown bet `{id}`"),
                    ));
                }
            }
            EventKind::Pay { bet_id, .. } => {
                if !live.iter().any(|l| l.id == bet_id) {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("pay names unknown bet `{bet_id}`"),
                    ));
                }
            }
            _ => return Err(RoundError::event(round, i, "craps has no such event")),
        }
    }

    adj.bets.reserve_exact(live.len());
    for l in &live {
        let (net, outcome, reason, cite): Res = if let Some(r) = l.result {
            r
        } else if l.withdrawn {
            (
                0,
                Outcome::Withdrawn,
                "withdrawn",
                "P217/2007 T.I C.II S.II r.10.9, r.11.1",
            )
        } else if l.kind.is_none() {
            (
                0,
                Outcome::Void,
                "not a bet of craps (or odds without a base): no payout rule",
                "P217/2007 T.I C.II S.II r.9-r.13",
            )
        } else {
            (
                0,
                Outcome::Open,
                "still standing",
                "P217/2007 T.I C.II S.II r.10-r.12",
            )
        };
        if options.explain {
            adj.note(
                cite,
                format!(
                    "bet {} ({}{}, stake {} cents): {} → {:+} cents",
                    l.id,
                    kind_id(l.kind),
                    l.number.map_or(String::new(), |n| format!(" on {n}")),
                    l.stake,
                    reason,
                    net
                ),
            );
        }
        adj.bets.push(BetOutcome {
            bet_id: l.id.clone(),
            seat: l.seat,
            stake_cents: l.stake,
            due_net_cents: net,
            outcome,
            reported_net_cents: None,
            reason: Cow::Borrowed(reason),
            citation: Cow::Borrowed(cite),
        });
    }
    if options.explain {
        adj.note(R101, format!("point after the round: {point:?}"));
    }
    if any_void {
        crate::banca_francesa::flag_void_settled(
            &mut adj,
            round,
            "CR_VOID_THROW_SETTLED",
            "P217/2007 T.I C.II S.II r.7",
        );
    }
    adj.reconcile(
        round.settlement.as_ref(),
        "CR_WRONG_PAYOUT",
        "P217/2007 T.I C.II S.II r.10-r.13",
    );

    // Commit.
    let open: Vec<OpenBet> = live
        .iter()
        .filter(|l| l.result.is_none() && !l.withdrawn && l.kind.is_some())
        .map(|l| OpenBet {
            id: l.id.clone(),
            bet_type: kind_id(l.kind).to_string(),
            seat: l.seat,
            player: l.player.cloned(),
            stake_cents: l.stake,
            placed_cents: None,
            number: l.number,
            on_bet: l.on_bet.cloned(),
            throws: l.throws,
        })
        .collect();
    drop(live);
    state.open_bets = open;
    state.point = point;
    if let Some(s) = shooter {
        state.shooter = Some(s);
    }
    if let Some(v) = seven_out_by {
        state.seven_out_by = v;
    }
    Ok(adj)
}

fn kind_id(k: Option<Kind>) -> &'static str {
    match k {
        Some(Kind::PassLine) => "pass_line",
        Some(Kind::DontPass) => "dont_pass",
        Some(Kind::Come) => "come",
        Some(Kind::DontCome) => "dont_come",
        Some(Kind::Big6) => "big_6",
        Some(Kind::Big8) => "big_8",
        Some(Kind::Under7) => "under_7",
        Some(Kind::Over7) => "over_7",
        Some(Kind::Odds) => "odds",
        Some(Kind::AnyCraps) => "any_craps",
        Some(Kind::Hard(4)) => "hard_4",
        Some(Kind::Hard(6)) => "hard_6",
        Some(Kind::Hard(8)) => "hard_8",
        Some(Kind::Hard(_)) => "hard_10",
        Some(Kind::AnySeven) => "any_seven",
        Some(Kind::Total(2)) => "total_2",
        Some(Kind::Total(3)) => "total_3",
        Some(Kind::Total(11)) => "total_11",
        Some(Kind::Total(_)) => "total_12",
        Some(Kind::Place) => "place",
        Some(Kind::PlaceToLose) => "place_to_lose",
        Some(Kind::Field) => "field",
        None => "",
    }
}

fn find_standing(live: &[Live<'_>], id: &str) -> Option<usize> {
    live.iter()
        .position(|l| &**l.id == id && l.result.is_none() && !l.withdrawn)
}

/// Pass and don't pass may not be withdrawn or changed after the series' come-out; come and
/// don't come after their first throw (r.10.9).
fn check_locked(adj: &mut Adjudication, l: &Live<'_>, point: Option<u8>, i: usize, what: &str) {
    let locked = match l.kind {
        Some(Kind::PassLine | Kind::DontPass) => point.is_some() || l.throws > 0,
        Some(Kind::Come | Kind::DontCome) => l.throws > 0,
        _ => false,
    };
    if locked {
        adj.violation(
            Violation::new(
                "CR_LINE_BET_WITHDRAWN",
                Severity::Medium,
                "P217/2007 T.I C.II S.II r.10.9",
                format!("bet {} {what} after its come-out / first throw", l.id),
            )
            .bet(l.id)
            .event(i),
        );
    }
}

/// Odds may not exceed the base bet (r.11.1).
fn check_odds_over_flat(adj: &mut Adjudication, live: &[Live<'_>], k: usize, i: usize) {
    let Some(base_id) = live[k].on_bet else {
        return;
    };
    let Some(base) = live.iter().find(|l| l.id == base_id) else {
        return;
    };
    let total: Cents = live
        .iter()
        .filter(|l| {
            l.on_bet == Some(base_id)
                && !l.withdrawn
                && l.result.is_none()
                && l.kind == Some(Kind::Odds)
        })
        .map(|l| l.stake)
        .sum();
    if total > base.stake {
        adj.violation(
            Violation::new(
                "CR_ODDS_OVER_FLAT",
                Severity::Medium,
                "P217/2007 T.I C.II S.II r.11.1",
                format!(
                    "bet {}: odds of {total} cents on {base_id} exceed its {} cents",
                    live[k].id, base.stake
                ),
            )
            .bet(live[k].id)
            .event(i),
        );
    }
}

/// Number-box bets must be whole multiples of the minimums fixed for them (r.12).
fn check_place_multiple(
    cfg: &CrapsConfig,
    adj: &mut Adjudication,
    id: &Id,
    i: usize,
    kind: Kind,
    number: Option<u8>,
    amount: Cents,
) {
    let Some(idx) = number.and_then(point_index) else {
        return;
    };
    let min = if kind == Kind::Place {
        cfg.place_min[idx]
    } else {
        cfg.place_to_lose_min[idx]
    };
    if let Some(min) = min
        && amount % min != 0
    {
        adj.violation(
            Violation::new(
                "CR_PLACE_NOT_MULTIPLE_OF_MIN",
                Severity::Medium,
                R12,
                format!(
                    "bet {id}: {amount} cents is not a whole multiple of the minimum {min} on {}",
                    number.unwrap_or(0)
                ),
            )
            .bet(id)
            .event(i),
        );
    }
}
