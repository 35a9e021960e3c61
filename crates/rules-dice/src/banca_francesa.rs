//! # Banca francesa (`banca_francesa`): Portaria 217/2007, Título I, Capítulo II, Secção I
//!
//! Three dice thrown together from a leather cup through the horn onto the track (r.7(a)); the
//! players bet on aces (total 3), small (5, 6, 7) or big (14, 15, 16) (r.9), or on the lines of
//! small and big (r.10, r.11). Winning bets stay the player's (r.14).
//!
//! ## Rounds
//! A round holds the bets placed and one or more throws. A throw of any other total (4, 8-13,
//! 17, 18) decides nothing and the bets stay (digest note B1); a void or invalid throw decides
//! nothing (r.7(b), r.8; note B3). A bet not decided at the end of the round is reported
//! `Outcome::Open` (net 0) and kept in the state; a later round's throws decide it, and it then
//! appears in that round's adjudication under its original id. Every carried bet appears in each
//! round's adjudication (decided or still open), before the round's own bets.
//!
//! ## Vocabulary
//!
//! **Bet types** (`selection` empty; `on_bet`, `chips`, `attrs` unused):
//!
//! | id | wins on | pays | rule |
//! |---|---|---|---|
//! | `aces` | 3 | 61 to 1 | r.9(a), r.13(a) |
//! | `small` | 5, 6, 7 | 1 to 1 | r.9(b), r.13(b) |
//! | `big` | 14, 15, 16 | 1 to 1 | r.9(c), r.13(c) |
//! | `small_line` | as small; `amount_cents` = value of the chips placed on the outer line | 1 to 1 on half the in-play value | r.10(a), r.11 |
//! | `big_line` | as big; chips on the inner line | same | r.10(b), r.11 |
//!
//! Each chance loses on the other chances' totals. Line bets: only whole multiples of €10 of the
//! placed value are in play, the stake is half of that (r.11; note B2). Any other bet type is
//! `BF_ILLEGAL_BET` (engine code, net 0).
//!
//! **Events**: `bet`, `bet_changed`, `bet_withdrawn`, `no_more_bets` (informational), `dice`
//! (three faces 1-6), `void`, `fault`, `procedure`, `role`, `collect`, `pay`. Others are a
//! [`rules_core::RoundError`].
//!
//! **Void reasons** (apply to the throw just recorded, or to a throw with no dice event: a void
//! that comes after a throw's dice but before anything else (bets, `no_more_bets`, `collect`,
//! `pay`) voids that throw; one recorded after those voids a next throw that showed no dice):
//! `foreign_object` (r.8(a)); `die_off_table`, `die_damaged`, `foreign_substance` (r.8(b): the
//! set must be replaced at once); `not_all_dice_in_cup` (r.8(c)); `die_in_cup` (r.8(d));
//! `not_flat` (a die not resting flat on its own on the track, r.7(b)).
//!
//! **Faults**: `dice_touched_before_announce` (r.7(d): the dealer lifted, moved or touched the
//! dice before announcing; applies to the last throw: the winning chance is paid and no other
//! chance loses).
//!
//! **Procedures**: `dice_set` (`value` = the id of the set ("terno") now in use: rotation
//! hourly, r.4, and replacement after r.8(b)); `dice_seized` (r.5, informational).
//!
//! **Roles**: `thrower` (the "deitador de dados", `player` or `seat`; at most one hour, r.18),
//! `dealer` (informational).
//!
//! **Settings**: none. Limits: `min_bet_cents`, `max_bet_cents`, per-chance `limits` for `aces`,
//! `small`, `big` (r.17); line bets use the `small` / `big` limits (else the table's) for the
//! 2 × min .. 2 × max range of r.11. Accepted `regulation`: absent or `P217/2007`.
//!
//! **Checks**: BF_WRONG_PAYOUT (discrepancies), BF_VOID_THROW_SETTLED, BF_DICE_SET_NOT_REPLACED,
//! BF_DICE_TOUCHED_BEFORE_ANNOUNCE, BF_LINE_BET_OUT_OF_RANGE, BF_LINE_BET_NOT_MULTIPLE_10,
//! BF_BET_BELOW_MIN, BF_BET_ABOVE_MAX, BF_LIMIT_RATIO (configuration), BF_PAID_BEFORE_COLLECTING,
//! BF_COLLECTION_NOT_FROM_ACES, BF_DICE_SET_NOT_ROTATED, BF_THROWER_OVER_ONE_HOUR; and the engine
//! code BF_ILLEGAL_BET.

use std::borrow::Cow;

use rules_core::{
    Adjudication, BetOutcome, Cents, ChanceLimit, ConfigError, Configured, EventKind, GameId, Id,
    Options, Outcome, Round, RoundError, Severity, TableConfig, Violation, check_stake,
};
use serde::{Deserialize, Serialize};

use crate::{HOUR_MS, OpenBet, check_faces, event_time};

/// Bet types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Aces,
    Small,
    Big,
    SmallLine,
    BigLine,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "aces" => Kind::Aces,
            "small" => Kind::Small,
            "big" => Kind::Big,
            "small_line" => Kind::SmallLine,
            "big_line" => Kind::BigLine,
            _ => return None,
        })
    }
    pub fn id(self) -> &'static str {
        match self {
            Kind::Aces => "aces",
            Kind::Small => "small",
            Kind::Big => "big",
            Kind::SmallLine => "small_line",
            Kind::BigLine => "big_line",
        }
    }
}

/// Which chance a total brings out (r.9): `None` for 4, 8-13, 17, 18 (note B1).
pub fn chance_of(total: u8) -> Option<Kind> {
    match total {
        3 => Some(Kind::Aces),
        5..=7 => Some(Kind::Small),
        14..=16 => Some(Kind::Big),
        _ => None,
    }
}

/// A compiled banca francesa configuration.
#[derive(Clone, Debug)]
pub struct BancaConfig {
    /// (min, max) for aces, small, big: the chance's own limit, else the table's.
    pub limits: [(Option<Cents>, Option<Cents>); 3],
}

/// What a banca francesa table carries between rounds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BancaState {
    /// Bets not yet decided (no aces, small or big total yet), with their stake in play.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_bets: Vec<OpenBet>,
    /// The set of dice in use (`dice_set` procedure) and since when (rotated hourly, r.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dice_set: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dice_set_since_ms: Option<i64>,
    /// A void under r.8(b) requires the set to be replaced before the next throw.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_dice_set: bool,
    /// The dice thrower and since when (at most one hour, r.18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thrower: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thrower_since_ms: Option<i64>,
}

const CHANCES: [&str; 3] = ["aces", "small", "big"];

pub(crate) fn configure(table: &TableConfig) -> Result<Configured<BancaConfig>, ConfigError> {
    table.only_settings(&[])?;
    crate::check_regulation(table)?;
    crate::check_table_limits(table)?;
    let mut limits = [(table.min_bet_cents, table.max_bet_cents); 3];
    for (i, l) in table.limits.iter().enumerate() {
        let Some(k) = CHANCES.iter().position(|c| *c == l.chance) else {
            return Err(ConfigError::field(
                &format!("limits[{i}]"),
                format!(
                    "chance `{}` is not aces, small or big",
                    l.chance.chars().take(40).collect::<String>()
                ),
            ));
        };
        let ChanceLimit {
            min_cents,
            max_cents,
            ..
        } = l;
        if min_cents.is_some() {
            limits[k].0 = *min_cents;
        }
        if max_cents.is_some() {
            limits[k].1 = *max_cents;
        }
    }
    // Aces max ≤ 6 × min; small and big max ≤ 200 × min (P217/2007 T.I C.II S.I r.17).
    let mut violations = Vec::new();
    for (k, (min, max)) in limits.iter().enumerate() {
        let factor = if k == 0 { 6 } else { 200 };
        if let (Some(min), Some(max)) = (min, max)
            && *max > min.saturating_mul(factor)
        {
            violations.push(Violation::new(
                "BF_LIMIT_RATIO",
                Severity::Medium,
                if k == 0 {
                    "P217/2007 T.I C.II S.I r.17(a)"
                } else {
                    "P217/2007 T.I C.II S.I r.17(b)"
                },
                format!(
                    "{}: maximum {max} cents is more than {factor} × the minimum {min} cents",
                    CHANCES[k]
                ),
            ));
        }
    }
    Ok(Configured {
        config: BancaConfig { limits },
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
    placed: Option<Cents>,
    withdrawn: bool,
    result: Option<Res>,
    /// Index of the throw (event) that decided it.
    decided_at: Option<usize>,
}

const VOID_REASONS: [(&str, bool); 7] = [
    ("foreign_object", false),
    ("die_off_table", true),
    ("die_damaged", true),
    ("foreign_substance", true),
    ("not_all_dice_in_cup", false),
    ("die_in_cup", false),
    ("not_flat", false),
];

fn line_stake(placed: Cents) -> Cents {
    // Only whole multiples of €10 are in play; the bet is half of that (r.11).
    (placed / 1000) * 1000 / 2
}

pub(crate) fn adjudicate(
    cfg: &BancaConfig,
    state: &mut BancaState,
    round: &Round,
    options: &Options,
) -> Result<Adjudication, RoundError> {
    let mut adj = Adjudication::new(GameId::BancaFrancesa, round.round_id.clone());
    let st: &BancaState = state;
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
            placed: o.placed_cents,
            withdrawn: false,
            result: None,
            decided_at: None,
        });
    }
    let mut dice_set: Option<(&str, Option<i64>)> =
        st.dice_set.as_deref().map(|s| (s, st.dice_set_since_ms));
    let mut set_changed = false;
    let mut replace = st.replace_dice_set;
    let mut new_thrower: Option<(String, Option<i64>)> = None;
    let mut rotated_flagged = false;
    let mut thrower_flagged = false;
    let mut any_void = false;
    // Collection/payment tracking per decision: (aces lost at this decision, collected yet, paid yet)
    let mut seg_aces_lost = false;
    let mut seg_collected = false;
    let mut seg_paid = false;
    let mut seg_flag_collect = false;
    let mut seg_flag_paid = false;
    let mut last_dice: Option<usize> = None;

    for (i, ev) in round.events.iter().enumerate() {
        let t = event_time(round, ev.at_ms);
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
                if kind.is_none() || !b.selection.is_empty() {
                    // Only the chances of r.9 and r.10 exist.
                    adj.violation(
                        Violation::new(
                            "BF_ILLEGAL_BET",
                            Severity::Medium,
                            "P217/2007 T.I C.II S.I r.9, r.10",
                            format!(
                                "bet {}: `{}` {:?} is not a bet of banca francesa",
                                b.id,
                                b.bet_type.chars().take(40).collect::<String>(),
                                b.selection
                            ),
                        )
                        .bet(&b.id)
                        .event(i),
                    );
                    kind = None;
                }
                let (stake, placed) = match kind {
                    Some(Kind::SmallLine | Kind::BigLine) => {
                        (line_stake(b.amount_cents), Some(b.amount_cents))
                    }
                    _ => (b.amount_cents, None),
                };
                check_bet_limits(cfg, &mut adj, &b.id, i, kind, b.amount_cents);
                live.push(Live {
                    id: &b.id,
                    kind,
                    seat: b.seat,
                    player: b.player.as_ref(),
                    stake,
                    placed,
                    withdrawn: false,
                    result: None,
                    decided_at: None,
                });
            }
            EventKind::BetChanged {
                bet_id,
                amount_cents,
            } => {
                let k = find_open(&live, bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_changed names unknown or decided bet `{bet_id}`"),
                    )
                })?;
                check_stake(round, bet_id, *amount_cents)?;
                let kind = live[k].kind;
                check_bet_limits(cfg, &mut adj, bet_id, i, kind, *amount_cents);
                if let Some(Kind::SmallLine | Kind::BigLine) = kind {
                    live[k].placed = Some(*amount_cents);
                    live[k].stake = line_stake(*amount_cents);
                } else {
                    live[k].stake = *amount_cents;
                }
            }
            EventKind::BetWithdrawn { bet_id } => {
                let k = find_open(&live, bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_withdrawn names unknown or decided bet `{bet_id}`"),
                    )
                })?;
                live[k].withdrawn = true;
            }
            EventKind::NoMoreBets => {}
            EventKind::Dice { dice, .. } => {
                check_faces(round, i, dice)?;
                if dice.len() != 3 {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("banca francesa throws three dice, got {}", dice.len()),
                    ));
                }
                last_dice = Some(i);
                // Does a void or the r.7(d) fault follow this throw (before the next one)? A void
                // recorded once the table has moved on from this throw (bets, the call, the
                // collection or a payment came after it) is the void of a next throw that showed
                // no dice (r.8(c)(d)): it does not undo this one.
                let mut voided = false;
                let mut touched = false;
                let mut moved_on = false;
                for e in &round.events[i + 1..] {
                    match &e.kind {
                        EventKind::Dice { .. } => break,
                        EventKind::Bet(_)
                        | EventKind::BetChanged { .. }
                        | EventKind::BetWithdrawn { .. }
                        | EventKind::NoMoreBets
                        | EventKind::Collect { .. }
                        | EventKind::Pay { .. } => moved_on = true,
                        EventKind::Void { .. } if !moved_on => voided = true,
                        EventKind::Fault { code, .. } if code == "dice_touched_before_announce" => {
                            touched = true
                        }
                        _ => {}
                    }
                }
                // The set must be replaced at once after r.8(b) (P217/2007 T.I C.II S.I r.8(b)).
                if replace {
                    adj.violation(Violation::new("BF_DICE_SET_NOT_REPLACED", Severity::Medium, "P217/2007 T.I C.II S.I r.8(b)", format!("throw at event {i} with the set {} that a void under r.8(b) required to replace", dice_set.map_or("?", |d| d.0))).event(i));
                    replace = false;
                }
                // Each set is rotated hourly (r.4).
                if let (Some((id, Some(since))), Some(t)) = (dice_set, t)
                    && t.saturating_sub(since) > HOUR_MS
                    && !rotated_flagged
                {
                    rotated_flagged = true;
                    adj.violation(
                        Violation::new(
                            "BF_DICE_SET_NOT_ROTATED",
                            Severity::Low,
                            "P217/2007 T.I C.II S.I r.4",
                            format!(
                                "dice set {id} in use since {since}, more than one hour at {t}"
                            ),
                        )
                        .event(i),
                    );
                }
                // The thrower stays at most one hour (r.18).
                let thrower = match &new_thrower {
                    Some((s, since)) => Some((s.as_str(), *since)),
                    None => st.thrower.as_deref().map(|s| (s, st.thrower_since_ms)),
                };
                if let (Some((who, Some(since))), Some(t)) = (thrower, t)
                    && t.saturating_sub(since) > HOUR_MS
                    && !thrower_flagged
                {
                    thrower_flagged = true;
                    adj.violation(Violation::new("BF_THROWER_OVER_ONE_HOUR", Severity::Low, "P217/2007 T.I C.II S.I r.18", format!("thrower {who} on the table since {since}, more than one hour at {t}")).event(i));
                }
                if voided {
                    any_void = true;
                    continue;
                }
                let total: u8 = dice.iter().sum();
                let Some(came) = chance_of(total) else {
                    continue;
                };
                seg_aces_lost = false;
                seg_collected = false;
                seg_paid = false;
                for l in live.iter_mut() {
                    if l.result.is_some() || l.withdrawn {
                        continue;
                    }
                    let Some(kind) = l.kind else { continue };
                    let chance = match kind {
                        Kind::SmallLine => Kind::Small,
                        Kind::BigLine => Kind::Big,
                        k => k,
                    };
                    let res: Res = if chance == came {
                        // The winning chance is paid: aces 61 times, small and big even money
                        // (r.13, r.14); line bets on half the in-play value (r.11).
                        match chance {
                            Kind::Aces => (
                                l.stake.saturating_mul(61),
                                Outcome::Won,
                                "aces (3) won at 61 to 1",
                                "P217/2007 T.I C.II S.I r.9(a), r.13(a)",
                            ),
                            Kind::Small if kind == Kind::SmallLine => (
                                l.stake,
                                Outcome::Won,
                                "small line won at even money on half the in-play value",
                                "P217/2007 T.I C.II S.I r.10(a), r.11, r.13(b)",
                            ),
                            Kind::Big if kind == Kind::BigLine => (
                                l.stake,
                                Outcome::Won,
                                "big line won at even money on half the in-play value",
                                "P217/2007 T.I C.II S.I r.10(b), r.11, r.13(c)",
                            ),
                            Kind::Small => (
                                l.stake,
                                Outcome::Won,
                                "small (5, 6, 7) won at even money",
                                "P217/2007 T.I C.II S.I r.9(b), r.13(b)",
                            ),
                            _ => (
                                l.stake,
                                Outcome::Won,
                                "big (14, 15, 16) won at even money",
                                "P217/2007 T.I C.II S.I r.9(c), r.13(c)",
                            ),
                        }
                    } else if touched {
                        // Dice touched before the announcement: the throw is valid, the winners
                        // are paid and no other chance loses (r.7(d); note B4).
                        (
                            0,
                            Outcome::Push,
                            "dice touched before the announcement: no other chance loses",
                            "P217/2007 T.I C.II S.I r.7(d)",
                        )
                    } else {
                        if chance == Kind::Aces {
                            seg_aces_lost = true;
                        }
                        (
                            -l.stake,
                            Outcome::Lost,
                            "another chance came out",
                            "P217/2007 T.I C.II S.I r.9, r.7(d)",
                        )
                    };
                    l.result = Some(res);
                    l.decided_at = Some(i);
                }
            }
            EventKind::Void { reason } => {
                let Some((_, replace_set)) = VOID_REASONS.iter().find(|(r, _)| r == reason) else {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "void reason `{}` is not one of {}",
                            reason.chars().take(40).collect::<String>(),
                            VOID_REASONS
                                .iter()
                                .map(|r| r.0)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                };
                any_void = true;
                if *replace_set {
                    replace = true;
                }
            }
            EventKind::Fault { code, .. } => {
                if code != "dice_touched_before_announce" {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "fault `{}` is not a banca francesa fault (dice_touched_before_announce)",
                            code.chars().take(40).collect::<String>()
                        ),
                    ));
                }
                if last_dice.is_none() {
                    return Err(RoundError::event(
                        round,
                        i,
                        "dice_touched_before_announce without a throw before it",
                    ));
                }
                adj.violation(Violation::new("BF_DICE_TOUCHED_BEFORE_ANNOUNCE", Severity::Medium, "P217/2007 T.I C.II S.I r.7(d)", format!("the dealer touched the dice of the throw at event {} before announcing the chance: winners paid, no other chance loses", last_dice.unwrap_or(0))).event(i));
            }
            EventKind::Procedure { name, value, .. } => match name.as_str() {
                "dice_set" => {
                    let Some(v) = value.as_deref() else {
                        return Err(RoundError::event(
                            round,
                            i,
                            "dice_set needs value = the set's id",
                        ));
                    };
                    if dice_set.map(|d| d.0) != Some(v) {
                        dice_set = Some((v, t));
                        set_changed = true;
                        replace = false;
                    }
                }
                "dice_seized" => {}
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "procedure `{}` is not a banca francesa procedure (dice_set, dice_seized)",
                            other.chars().take(40).collect::<String>()
                        ),
                    ));
                }
            },
            EventKind::Role { role, seat, player } => match role.as_str() {
                "thrower" => {
                    let name: Cow<'_, str> = match (player, seat) {
                        (Some(p), _) => Cow::Borrowed(&**p),
                        (None, Some(s)) => Cow::Owned(format!("seat:{s}")),
                        _ => {
                            return Err(RoundError::event(
                                round,
                                i,
                                "thrower role without player or seat",
                            ));
                        }
                    };
                    let cur = new_thrower
                        .as_ref()
                        .map(|x| x.0.as_str())
                        .or(st.thrower.as_deref());
                    if cur != Some(name.as_ref()) {
                        new_thrower = Some((name.into_owned(), t));
                    }
                }
                "dealer" => {}
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "role `{}` is not a banca francesa role (thrower, dealer)",
                            other.chars().take(40).collect::<String>()
                        ),
                    ));
                }
            },
            EventKind::Collect { bet_ids } => {
                for (n, id) in bet_ids.iter().enumerate() {
                    let Some(k) = live.iter().position(|l| l.id == id) else {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!("collect names unknown bet `{id}`"),
                        ));
                    };
                    // Collection counter-clockwise, always starting with the aces (r.12).
                    if n == 0
                        && !seg_collected
                        && seg_aces_lost
                        && live[k].kind != Some(Kind::Aces)
                        && !seg_flag_collect
                    {
                        seg_flag_collect = true;
                        adj.violation(Violation::new("BF_COLLECTION_NOT_FROM_ACES", Severity::Low, "P217/2007 T.I C.II S.I r.12", format!("losing chips collected starting with bet {id}, not with the aces")).bet(id).event(i));
                    }
                }
                if seg_paid && !seg_flag_paid {
                    seg_flag_paid = true;
                    adj.violation(
                        Violation::new(
                            "BF_PAID_BEFORE_COLLECTING",
                            Severity::Low,
                            "P217/2007 T.I C.II S.I r.15",
                            format!("losing chips collected at event {i} after a prize was paid"),
                        )
                        .event(i),
                    );
                }
                seg_collected = true;
            }
            EventKind::Pay { bet_id, .. } => {
                if !live.iter().any(|l| l.id == bet_id) {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("pay names unknown bet `{bet_id}`"),
                    ));
                }
                seg_paid = true;
            }
            _ => {
                return Err(RoundError::event(
                    round,
                    i,
                    "banca francesa has no such event",
                ));
            }
        }
    }

    // Output: carried bets first, then the round's, each decided, withdrawn or still open.
    adj.bets.reserve_exact(live.len());
    for l in &live {
        let (net, outcome, reason, cite): Res = if let Some(r) = l.result {
            r
        } else if l.withdrawn {
            (
                0,
                Outcome::Withdrawn,
                "withdrawn before a decision",
                "P217/2007 T.I C.II S.I r.9",
            )
        } else if l.kind.is_none() {
            (
                0,
                Outcome::Void,
                "not a bet of banca francesa: no payout rule",
                "P217/2007 T.I C.II S.I r.9, r.10",
            )
        } else {
            (
                0,
                Outcome::Open,
                "no aces, small or big total yet: the bet stays",
                "P217/2007 T.I C.II S.I r.9 (digest note B1)",
            )
        };
        if options.explain {
            adj.note(
                cite,
                format!(
                    "bet {} ({}, stake {} cents): {} → {:+} cents",
                    l.id,
                    l.kind.map_or("illegal", Kind::id),
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
        for (i, ev) in round.events.iter().enumerate() {
            if let EventKind::Dice { dice, .. } = &ev.kind {
                let total: u8 = dice.iter().sum();
                adj.note(
                    "P217/2007 T.I C.II S.I r.9",
                    format!(
                        "throw at event {i}: {dice:?} = {total}: {}",
                        chance_of(total).map_or("no chance decided (note B1)", Kind::id)
                    ),
                );
            }
        }
    }
    // A bet reported with a non-zero net on a void throw (r.7(b), r.8).
    if any_void {
        flag_void_settled(
            &mut adj,
            round,
            "BF_VOID_THROW_SETTLED",
            "P217/2007 T.I C.II S.I r.7(b), r.8",
        );
    }
    adj.reconcile(
        round.settlement.as_ref(),
        "BF_WRONG_PAYOUT",
        "P217/2007 T.I C.II S.I r.9, r.11, r.13, r.7(d)",
    );

    // Commit.
    let open: Vec<OpenBet> = live
        .iter()
        .filter(|l| l.result.is_none() && !l.withdrawn && l.kind.is_some())
        .map(|l| OpenBet {
            id: l.id.clone(),
            bet_type: l.kind.map_or("", Kind::id).to_string(),
            seat: l.seat,
            player: l.player.cloned(),
            stake_cents: l.stake,
            placed_cents: l.placed,
            number: None,
            on_bet: None,
            throws: 0,
        })
        .collect();
    let new_set = set_changed
        .then(|| dice_set.map(|(s, since)| (s.to_string(), since)))
        .flatten();
    drop(live);
    state.open_bets = open;
    state.replace_dice_set = replace;
    if let Some((s, since)) = new_set {
        state.dice_set = Some(s);
        state.dice_set_since_ms = since;
    }
    if let Some((s, since)) = new_thrower {
        state.thrower = Some(s);
        state.thrower_since_ms = since;
    }
    Ok(adj)
}

fn find_open(live: &[Live<'_>], id: &str) -> Option<usize> {
    live.iter()
        .position(|l| &**l.id == id && l.result.is_none() && !l.withdrawn)
}

/// Limits (r.17) for aces, small, big; the placed-value range and €10 multiples for line bets
/// (r.11).
fn check_bet_limits(
    cfg: &BancaConfig,
    adj: &mut Adjudication,
    id: &Id,
    i: usize,
    kind: Option<Kind>,
    amount: Cents,
) {
    let Some(kind) = kind else { return };
    let (k, line) = match kind {
        Kind::Aces => (0, false),
        Kind::Small => (1, false),
        Kind::Big => (2, false),
        Kind::SmallLine => (1, true),
        Kind::BigLine => (2, true),
    };
    let (min, max) = cfg.limits[k];
    if line {
        // Placed value between twice the minimum and twice the maximum (r.11).
        let lo = min.map(|m| m.saturating_mul(2));
        let hi = max.map(|m| m.saturating_mul(2));
        if lo.is_some_and(|lo| amount < lo) || hi.is_some_and(|hi| amount > hi) {
            adj.violation(
                Violation::new(
                    "BF_LINE_BET_OUT_OF_RANGE",
                    Severity::Medium,
                    "P217/2007 T.I C.II S.I r.11",
                    format!(
                        "bet {id}: {amount} cents placed on the line, outside {lo:?} .. {hi:?}"
                    ),
                )
                .bet(id)
                .event(i),
            );
        }
        // Whole multiples of €10; the excess is not in play (r.11).
        if amount % 1000 != 0 {
            adj.violation(Violation::new("BF_LINE_BET_NOT_MULTIPLE_10", Severity::Low, "P217/2007 T.I C.II S.I r.11", format!("bet {id}: {amount} cents placed on the line is not a multiple of €10: {} cents not in play", amount % 1000)).bet(id).event(i));
        }
        return;
    }
    if let Some(min) = min
        && amount < min
    {
        adj.violation(
            Violation::new(
                "BF_BET_BELOW_MIN",
                Severity::Medium,
                "P217/2007 T.I C.II S.I r.17",
                format!(
                    "bet {id}: {amount} cents on {} is below the minimum {min}",
                    kind.id()
                ),
            )
            .bet(id)
            .event(i),
        );
    }
    if let Some(max) = max
        && amount > max
    {
        adj.violation(
            Violation::new(
                "BF_BET_ABOVE_MAX",
                Severity::Medium,
                "P217/2007 T.I C.II S.I r.17",
                format!(
                    "bet {id}: {amount} cents on {} is above the maximum {max}",
                    kind.id()
                ),
            )
            .bet(id)
            .event(i),
        );
    }
}

/// Bets still open or void in a round with a void throw must not be reported with a net.
pub(crate) fn flag_void_settled(
    adj: &mut Adjudication,
    round: &Round,
    code: &'static str,
    cite: &'static str,
) {
    let Some(s) = &round.settlement else { return };
    let mut found = Vec::new();
    for r in &s.results {
        if r.net_cents != 0
            && adj
                .bets
                .iter()
                .any(|b| b.bet_id == r.bet_id && matches!(b.outcome, Outcome::Open | Outcome::Void))
        {
            found.push(
                Violation::new(
                    code,
                    Severity::High,
                    cite,
                    format!(
                        "bet {} reported {} cents although the void throw decided nothing",
                        r.bet_id, r.net_cents
                    ),
                )
                .bet(&r.bet_id),
            );
        }
    }
    adj.violations.extend(found);
}
