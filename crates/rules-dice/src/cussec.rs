//! # Cussec (`cussec`): Portaria 217/2007, Título I, Capítulo II, Secção III
//!
//! One set of three dice shaken in a closed bell (r.1, r.2): the dealer covers the glass dome,
//! latches the cover and presses the lever three times; a light opens the betting (r.4); "Nada
//! mais. Vou abrir." closes it; the upper faces are the result (r.5). Stacked dice make a void
//! round: the shaking is repeated and players may keep, withdraw or change their bets (r.6).
//! Every round decides every bet (there is no undecided total). A round ends when every prize
//! is paid; only then may the dome be covered again (r.11). Winning bets stay the player's
//! (r.10).
//!
//! ## Vocabulary
//!
//! **Bet types** (`chips`, `on_bet`, `attrs` unused):
//!
//! | id | `selection` | wins | pays | rule |
//! |---|---|---|---|---|
//! | `small` | empty | total 4-10, not a triple | 1 to 1 | r.7(a), r.8(a), r.9 |
//! | `big` | empty | total 11-17, not a triple | 1 to 1 | r.7(b), r.8(b), r.9 |
//! | `single` | `[f]`, f 1-6 | f on 1 / 2 / 3 dice | 1 / 2 / 3 to 1 | r.7(c), r.8(c) |
//! | `two_dice_combo` | `[a, b]`, a ≠ b | both show | 5 to 1 (once) | r.7(d), r.8(d) |
//! | `double` | `[f]` | f on at least two dice | 10 to 1; 30 to 1 on all three | r.7(e), r.8(e) |
//! | `triple` | `[f]` | f on all three | 190 to 1 | r.7(f), r.8(f) |
//! | `any_triple` | empty | any triple | 32 to 1 | r.7(g), r.8(g) |
//! | `total` | `[t]`, t 4-17 | the sum is t | 65 (4/17), 32 (5/16), 19 (6/15), 12 (7/14), 8 (8/13), 7 (9/12), 6 (10/11) to 1 | r.7(h), r.8(h) |
//!
//! Any other bet (total 3 or 18, a combination of two equal faces, a face outside 1-6, an
//! unknown type or a wrong selection) is `CS_ILLEGAL_BET`, net 0.
//!
//! **Events**: `bet`, `bet_changed`, `bet_withdrawn`, `no_more_bets` ("Nada mais. Vou abrir.",
//! r.5), `dice` (three faces 1-6; one valid result per round), `void`, `procedure`, `role`,
//! `collect`, `pay`. Others are a [`rules_core::RoundError`].
//!
//! **Void reasons**: `stacked_dice` (two or three dice stacked when the cover is lifted, r.6;
//! applies to the throw just recorded; betting reopens).
//!
//! **Procedures**: `dome_covered` (the dome is covered for a round, r.4, r.11), `lever_press`
//! (one press, or `value` = the number of consecutive presses, r.4), `betting_open` (the light,
//! informational).
//!
//! **Roles**: `dealer` (informational). **Faults**: none.
//!
//! **Settings**: none. No limit proportions exist for cussec. Accepted `regulation`: absent or
//! `P217/2007`.
//!
//! **State** ([`CussecState`]): the time of the previous round's last payment (r.11).

use std::borrow::Cow;

use rules_core::{
    Adjudication, BetOutcome, Cents, ConfigError, Configured, EventKind, GameId, Options, Outcome,
    Round, RoundError, Severity, TableConfig, Violation, VoidInfo, check_stake,
};
use serde::{Deserialize, Serialize};

use crate::{check_faces, event_time};

/// A compiled cussec configuration (cussec has no settings).
#[derive(Clone, Debug, Default)]
pub struct CussecConfig {}

/// What a cussec table carries between rounds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CussecState {
    /// Time of the previous round's last payment: the dome may be covered for the next round
    /// only after it (r.11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_payment_at_ms: Option<i64>,
}

pub(crate) fn configure(table: &TableConfig) -> Result<Configured<CussecConfig>, ConfigError> {
    table.only_settings(&[])?;
    crate::check_regulation(table)?;
    crate::check_table_limits(table)?;
    if let Some(l) = table.limits.first() {
        return Err(ConfigError::field(
            "limits[0]",
            format!(
                "cussec has no per-chance limits (got `{}`)",
                l.chance.chars().take(40).collect::<String>()
            ),
        ));
    }
    Ok(Configured {
        config: CussecConfig {},
        violations: Vec::new(),
    })
}

/// A parsed cussec bet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Small,
    Big,
    Single(u8),
    TwoDiceCombo(u8, u8),
    Double(u8),
    Triple(u8),
    AnyTriple,
    Total(u8),
}

/// Parse a bet type and selection; `None` is not a bet of r.7.
pub fn parse(bet_type: &str, sel: &[u8]) -> Option<Kind> {
    let face = |f: u8| (1..=6).contains(&f);
    Some(match (bet_type, sel) {
        ("small", []) => Kind::Small,
        ("big", []) => Kind::Big,
        ("single", [f]) if face(*f) => Kind::Single(*f),
        ("two_dice_combo", [a, b]) if face(*a) && face(*b) && a != b => {
            Kind::TwoDiceCombo(*a.min(b), *a.max(b))
        }
        ("double", [f]) if face(*f) => Kind::Double(*f),
        ("triple", [f]) if face(*f) => Kind::Triple(*f),
        ("any_triple", []) => Kind::AnyTriple,
        ("total", [t]) if (4..=17).contains(t) => Kind::Total(*t),
        _ => return None,
    })
}

/// The bet as a compliance officer reads it, e.g. `two_dice_combo 1-2`, `total 9`.
fn describe(k: Kind) -> String {
    match k {
        Kind::Small => "small".to_string(),
        Kind::Big => "big".to_string(),
        Kind::Single(f) => format!("single {f}"),
        Kind::TwoDiceCombo(a, b) => format!("two_dice_combo {a}-{b}"),
        Kind::Double(f) => format!("double {f}"),
        Kind::Triple(f) => format!("triple {f}"),
        Kind::AnyTriple => "any_triple".to_string(),
        Kind::Total(t) => format!("total {t}"),
    }
}

/// Total bet payouts, index = total (r.8(h)).
pub const TOTAL_PAYS: [i64; 18] = [0, 0, 0, 0, 65, 32, 19, 12, 8, 7, 6, 6, 7, 8, 12, 19, 32, 65];

/// Net of a bet of `stake` on the three faces `d` (r.8, r.9).
pub fn settle(kind: Kind, stake: Cents, d: [u8; 3]) -> (Cents, &'static str, &'static str) {
    let total = d[0] + d[1] + d[2];
    let triple = d[0] == d[1] && d[1] == d[2];
    let count = |f: u8| d.iter().filter(|x| **x == f).count() as i64;
    let win = |k: i64| stake.saturating_mul(k);
    match kind {
        // Small and big lose on every triple (r.9).
        Kind::Small if (4..=10).contains(&total) && !triple => (
            win(1),
            "small (4-10) won at even money",
            "P217/2007 T.I C.II S.III r.7(a), r.8(a)",
        ),
        Kind::Big if (11..=17).contains(&total) && !triple => (
            win(1),
            "big (11-17) won at even money",
            "P217/2007 T.I C.II S.III r.7(b), r.8(b)",
        ),
        Kind::Small | Kind::Big if triple => (
            -stake,
            "small and big lose on a triple",
            "P217/2007 T.I C.II S.III r.9",
        ),
        Kind::Small | Kind::Big => (
            -stake,
            "the other side came out",
            "P217/2007 T.I C.II S.III r.7(a)(b)",
        ),
        Kind::Single(f) => match count(f) {
            0 => (-stake, "face not shown", "P217/2007 T.I C.II S.III r.7(c)"),
            c => (
                win(c),
                "face shown: paid once per die showing it",
                "P217/2007 T.I C.II S.III r.7(c), r.8(c)",
            ),
        },
        Kind::TwoDiceCombo(a, b) if count(a) > 0 && count(b) > 0 => (
            win(5),
            "both faces shown: 5 to 1",
            "P217/2007 T.I C.II S.III r.7(d), r.8(d)",
        ),
        Kind::TwoDiceCombo(..) => (
            -stake,
            "combination not shown",
            "P217/2007 T.I C.II S.III r.7(d)",
        ),
        Kind::Double(f) => match count(f) {
            3 => (
                win(30),
                "face on all three dice: 30 to 1",
                "P217/2007 T.I C.II S.III r.7(e), r.8(e)",
            ),
            2 => (
                win(10),
                "face on two dice: 10 to 1",
                "P217/2007 T.I C.II S.III r.7(e), r.8(e)",
            ),
            _ => (
                -stake,
                "face not on two dice",
                "P217/2007 T.I C.II S.III r.7(e)",
            ),
        },
        Kind::Triple(f) if triple && d[0] == f => (
            win(190),
            "the triple came: 190 to 1",
            "P217/2007 T.I C.II S.III r.7(f), r.8(f)",
        ),
        Kind::Triple(_) => (-stake, "not that triple", "P217/2007 T.I C.II S.III r.7(f)"),
        Kind::AnyTriple if triple => (
            win(32),
            "a triple came: 32 to 1",
            "P217/2007 T.I C.II S.III r.7(g), r.8(g)",
        ),
        Kind::AnyTriple => (-stake, "no triple", "P217/2007 T.I C.II S.III r.7(g)"),
        Kind::Total(t) if t == total => (
            win(TOTAL_PAYS[t as usize]),
            "the total came",
            "P217/2007 T.I C.II S.III r.7(h), r.8(h)",
        ),
        Kind::Total(_) => (-stake, "another total", "P217/2007 T.I C.II S.III r.7(h)"),
    }
}

struct Live<'a> {
    id: &'a rules_core::Id,
    seat: Option<u8>,
    kind: Option<Kind>,
    stake: Cents,
    withdrawn: bool,
    result: Option<(Cents, Outcome, &'static str, &'static str)>,
}

pub(crate) fn adjudicate(
    _cfg: &CussecConfig,
    state: &mut CussecState,
    round: &Round,
    options: &Options,
) -> Result<Adjudication, RoundError> {
    let mut adj = Adjudication::new(GameId::Cussec, round.round_id.clone());
    let n = round
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Bet(_)))
        .count();
    let mut live: Vec<Live<'_>> = Vec::with_capacity(n);
    let mut closed = false;
    let mut levers: u32 = 0;
    let mut betting_checked = false;
    let mut result: Option<[u8; 3]> = None;
    let mut any_void = false;
    let mut dome_after_result: Option<usize> = None;
    let mut last_payment: Option<i64> = None;
    let mut covered_flagged = false;

    // The lever is pressed three consecutive times before betting opens (r.4).
    let check_levers = |adj: &mut Adjudication, levers: u32, i: usize| {
        if levers != 3 {
            adj.violation(
                Violation::new(
                    "CS_LEVER_NOT_THREE_TIMES",
                    Severity::Low,
                    "P217/2007 T.I C.II S.III r.4",
                    format!("lever pressed {levers} times before betting opened (event {i})"),
                )
                .event(i),
            );
        }
    };
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
                if !betting_checked {
                    betting_checked = true;
                    check_levers(&mut adj, levers, i);
                }
                let kind = parse(&b.bet_type, &b.selection);
                if kind.is_none() {
                    adj.violation(
                        Violation::new(
                            "CS_ILLEGAL_BET",
                            Severity::Medium,
                            "P217/2007 T.I C.II S.III r.7",
                            format!(
                                "bet {}: `{}` {:?} is not a bet of r.7",
                                b.id,
                                b.bet_type.chars().take(40).collect::<String>(),
                                b.selection
                            ),
                        )
                        .bet(&b.id)
                        .event(i),
                    );
                }
                // No bets after "Nada mais. Vou abrir." (r.5).
                if closed || result.is_some() {
                    late(&mut adj, &b.id, i, "placed");
                }
                live.push(Live {
                    id: &b.id,
                    seat: b.seat,
                    kind,
                    stake: b.amount_cents,
                    withdrawn: false,
                    result: None,
                });
            }
            EventKind::BetChanged {
                bet_id,
                amount_cents,
            } => {
                let k = live.iter().position(|l| l.id == bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_changed names unknown bet `{bet_id}`"),
                    )
                })?;
                check_stake(round, bet_id, *amount_cents)?;
                if closed || result.is_some() {
                    late(&mut adj, bet_id, i, "changed");
                }
                live[k].stake = *amount_cents;
            }
            EventKind::BetWithdrawn { bet_id } => {
                let k = live.iter().position(|l| l.id == bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_withdrawn names unknown bet `{bet_id}`"),
                    )
                })?;
                if closed || result.is_some() {
                    late(&mut adj, bet_id, i, "withdrawn");
                }
                live[k].withdrawn = true;
            }
            EventKind::NoMoreBets => {
                if !betting_checked {
                    betting_checked = true;
                    check_levers(&mut adj, levers, i);
                }
                closed = true;
            }
            EventKind::Dice { dice, .. } => {
                check_faces(round, i, dice)?;
                let [a, b, c] = dice[..] else {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("cussec uses three dice, got {}", dice.len()),
                    ));
                };
                if result.is_some() {
                    return Err(RoundError::event(
                        round,
                        i,
                        "a second result in one round without a void between",
                    ));
                }
                if !betting_checked {
                    betting_checked = true;
                    check_levers(&mut adj, levers, i);
                }
                let voided = round.events[i + 1..]
                    .iter()
                    .take_while(|e| !matches!(e.kind, EventKind::Dice { .. }))
                    .any(|e| matches!(e.kind, EventKind::Void { .. }));
                if voided {
                    continue;
                }
                result = Some([a, b, c]);
                for l in live.iter_mut() {
                    if l.withdrawn {
                        continue;
                    }
                    l.result = Some(match l.kind {
                        Some(k) => {
                            let (net, reason, cite) = settle(k, l.stake, [a, b, c]);
                            (
                                net,
                                if net > 0 { Outcome::Won } else { Outcome::Lost },
                                reason,
                                cite,
                            )
                        }
                        None => (
                            0,
                            Outcome::Void,
                            "not a bet of cussec: no payout rule",
                            "P217/2007 T.I C.II S.III r.7",
                        ),
                    });
                }
            }
            EventKind::Void { reason } => {
                if reason != "stacked_dice" {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "void reason `{}` is not stacked_dice (P217/2007 T.I C.II S.III r.6)",
                            reason.chars().take(40).collect::<String>()
                        ),
                    ));
                }
                // The shaking is repeated and bets may be kept, withdrawn or changed (r.6).
                any_void = true;
                result = None;
                for l in live.iter_mut() {
                    l.result = None;
                }
                closed = false;
                levers = 0;
                betting_checked = false;
            }
            EventKind::Procedure { name, value, .. } => match name.as_str() {
                "dome_covered" => {
                    // The dome is covered for the next round only after every prize is paid
                    // (r.11).
                    if let (Some(t), Some(paid)) = (t, state.last_payment_at_ms)
                        && t < paid
                        && !covered_flagged
                    {
                        covered_flagged = true;
                        adj.violation(Violation::new("CS_COVERED_BEFORE_PAYMENTS", Severity::Low, "P217/2007 T.I C.II S.III r.11", format!("dome covered at {t}, before the previous round's last payment at {paid}")).event(i));
                    }
                    if result.is_some() {
                        dome_after_result = Some(i);
                    }
                    levers = 0;
                }
                "lever_press" => {
                    let n = match value.as_deref() {
                        None => 1,
                        Some(v) => {
                            v.parse::<u32>().ok().filter(|n| *n <= 100).ok_or_else(|| {
                                RoundError::event(round, i, "lever_press value must be a count")
                            })?
                        }
                    };
                    levers = levers.saturating_add(n);
                }
                "betting_open" => {}
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "procedure `{}` is not a cussec procedure (dome_covered, lever_press, betting_open)",
                            other.chars().take(40).collect::<String>()
                        ),
                    ));
                }
            },
            EventKind::Role { role, .. } if role == "dealer" => {}
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
                if let Some(d) = dome_after_result
                    && !covered_flagged
                {
                    covered_flagged = true;
                    adj.violation(Violation::new("CS_COVERED_BEFORE_PAYMENTS", Severity::Low, "P217/2007 T.I C.II S.III r.11", format!("dome covered at event {d} before the prize of bet {bet_id} was paid")).bet(bet_id).event(i));
                }
                if t.is_some() {
                    last_payment = t;
                }
            }
            _ => return Err(RoundError::event(round, i, "cussec has no such event")),
        }
    }

    adj.bets.reserve_exact(live.len());
    if options.explain {
        match result {
            Some(d) => adj.note(
                "P217/2007 T.I C.II S.III r.5",
                format!("the dice show {d:?}, total {}", d[0] + d[1] + d[2]),
            ),
            None => adj.note(
                "P217/2007 T.I C.II S.III r.6",
                "no valid result: the round is void",
            ),
        }
    }
    for l in &live {
        let (net, outcome, reason, cite) = if l.withdrawn {
            (
                0,
                Outcome::Withdrawn,
                "withdrawn",
                "P217/2007 T.I C.II S.III r.6",
            )
        } else if let Some(r) = l.result {
            r
        } else {
            (
                0,
                Outcome::Void,
                "no result: stacked dice (golpe nulo) or no throw after the bet",
                "P217/2007 T.I C.II S.III r.6",
            )
        };
        if options.explain {
            adj.note(
                cite,
                format!(
                    "bet {} ({}, {} cents): {} → {:+} cents",
                    l.id,
                    l.kind
                        .map_or_else(|| "not a bet of cussec".to_string(), describe),
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
    if result.is_none() {
        if !any_void {
            return Err(RoundError::round(
                round,
                "the round has no result and no void",
            ));
        }
        adj.void = Some(VoidInfo {
            reason: Cow::Borrowed("stacked dice (golpe nulo), not shaken again"),
            citation: Cow::Borrowed("P217/2007 T.I C.II S.III r.6"),
        });
    }
    if any_void {
        crate::banca_francesa::flag_void_settled(
            &mut adj,
            round,
            "CS_VOID_SETTLED",
            "P217/2007 T.I C.II S.III r.6",
        );
    }
    adj.reconcile(
        round.settlement.as_ref(),
        "CS_WRONG_PAYOUT",
        "P217/2007 T.I C.II S.III r.7-r.10",
    );
    if last_payment.is_some() {
        state.last_payment_at_ms = last_payment;
    }
    Ok(adj)
}

fn late(adj: &mut Adjudication, id: &rules_core::Id, i: usize, what: &str) {
    adj.violation(
        Violation::new(
            "CS_LATE_BET",
            Severity::Medium,
            "P217/2007 T.I C.II S.III r.5",
            format!("bet {id} {what} after \"Nada mais. Vou abrir.\""),
        )
        .bet(id)
        .event(i),
    );
}
