//! Online blackjack/21 (ROBJ/2015, seeded from rule 25(e) to rule 38).
//!
//! * r.25(e)-(i): dealer closer to 21 wins; insurance paid at twice its amount when the dealer
//!   has blackjack, lost otherwise; both blackjack or equal totals tie; the 6-7-8 suited / three
//!   7s special prize of 3 x the bet. Applied in [`crate::settle`].
//! * r.27, r.28: a round interrupted by a breakdown or malfunction so that the cards, a total or
//!   the comparison cannot be determined is void and the bets are returned. A `malfunction`
//!   fault in a round whose result cannot be determined from the record makes it void;
//!   `BJO_VOID_ROUND_SETTLED` if it was settled anyway.
//! * r.29, r.30: a failure of the player's own network or equipment (`player_connection`) does
//!   not void the round: it is settled as played; voiding it, or voiding a round whose result
//!   was determinable, is `BJO_ROUND_WRONGLY_VOIDED`.
//! * r.34-r.36: the player starts and ends his session. The operator may invite him to end it
//!   after more than 3 minutes without a bet at a single-player table (r.35(a)) or more than 5
//!   consecutive rounds without a bet at a multi-player table (r.35(b)), and must warn that the
//!   session ends if no bet is made in the next minute / next round (r.36). An operator ending
//!   a session for inactivity otherwise is `BJO_SESSION_ENDED_WITHOUT_WARNING`.
//!
//! What the seed lacks (rules 1-25(d): dealer rule, blackjack payout, insurance limit, doubling,
//! splitting, surrender, limits) comes from the land rules and the table settings
//! `blackjack_pays`, `online_blackjack_beats_21`, `dealer_hits_soft_17`, `single_player_table`.

use rules_core::{RoundError, Severity, Violation};

use crate::cite;
use crate::play::Ctx;
use crate::state::{BlackjackState, OnlineSeat};

fn seat_entry(state: &mut BlackjackState, seat: u8) -> &mut OnlineSeat {
    let pos = match state.online_seats.binary_search_by_key(&seat, |s| s.seat) {
        Ok(p) => p,
        Err(p) => {
            state.online_seats.insert(
                p,
                OnlineSeat {
                    seat,
                    ..OnlineSeat::default()
                },
            );
            p
        }
    };
    &mut state.online_seats[pos]
}

/// `session_start`, `session_warning`, `session_ended` (value `inactivity` when the operator
/// ends it, `player` when the player does).
pub fn session_procedure(
    ctx: &mut Ctx,
    state: &mut BlackjackState,
    i: usize,
    name: &str,
    value: Option<&str>,
    seat: Option<u8>,
    at_ms: Option<i64>,
) -> Result<(), RoundError> {
    let seat =
        seat.ok_or_else(|| RoundError::event(ctx.round, i, format!("`{name}` needs the seat")))?;
    match name {
        "session_start" => {
            let e = seat_entry(state, seat);
            *e = OnlineSeat {
                seat,
                last_bet_at_ms: at_ms,
                ..OnlineSeat::default()
            };
        }
        "session_warning" => {
            let e = seat_entry(state, seat);
            e.warned = true;
            e.warned_at_ms = at_ms;
            e.idle_at_warning = e.idle_rounds;
        }
        _ => {
            let by_operator = match value {
                Some("inactivity") => true,
                Some("player") => false,
                _ => {
                    return Err(RoundError::event(
                        ctx.round,
                        i,
                        "session_ended value must be inactivity or player",
                    ));
                }
            };
            let bet_now = ctx
                .bets
                .iter()
                .any(|b| b.kind.is_box() && b.seat == seat && b.event < i);
            let e = seat_entry(state, seat).clone();
            if by_operator {
                let problem = if !e.warned {
                    Some("without the warning of r.36".to_string())
                } else if bet_now {
                    Some("although the player bet after the warning".to_string())
                } else if ctx.cfg.single_player {
                    // r.35(a): more than 3 minutes without a bet; r.36: one more minute.
                    match (e.last_bet_at_ms, e.warned_at_ms, at_ms) {
                        (Some(b), Some(w), Some(end)) => {
                            if w.saturating_sub(b) <= 180_000 {
                                Some(format!(
                                    "the warning came {} s after the last bet; more than 180 s are needed",
                                    w.saturating_sub(b) / 1000
                                ))
                            } else if end.saturating_sub(w) < 60_000 {
                                Some(format!(
                                    "the session ended {} s after the warning; the player has a minute",
                                    end.saturating_sub(w) / 1000
                                ))
                            } else {
                                None
                            }
                        }
                        _ => Some("the record lacks the times needed to check r.35(a)".to_string()),
                    }
                } else if e.idle_at_warning <= 5 {
                    Some(format!(
                        "the warning came after {} rounds without a bet; more than 5 are needed",
                        e.idle_at_warning
                    ))
                } else if e.idle_rounds <= e.idle_at_warning {
                    Some("before the next round without a bet had been played".to_string())
                } else {
                    None
                };
                if let Some(p) = problem {
                    let missing_times = p.starts_with("the record lacks");
                    let mut v = Violation::new(
                        "BJO_SESSION_ENDED_WITHOUT_WARNING",
                        Severity::Medium,
                        cite::ROBJ_SESSION,
                        format!("the operator ended the session at seat {seat} for inactivity {p}"),
                    )
                    .seat(seat)
                    .event(i);
                    if missing_times {
                        v = v.review();
                    }
                    ctx.push(v);
                }
            }
            if let Ok(p) = state.online_seats.binary_search_by_key(&seat, |s| s.seat) {
                state.online_seats.remove(p);
            }
        }
    }
    Ok(())
}

/// End of an online round: idle rounds per seat (r.35).
pub fn end_round(ctx: &mut Ctx, state: &mut BlackjackState) {
    let round = ctx.round;
    let ended: Vec<u8> = round
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            rules_core::EventKind::Procedure { name, seat, .. } if name == "session_ended" => *seat,
            _ => None,
        })
        .collect();
    for &seat in &ctx.seat_bets_this_round {
        if ended.contains(&seat) {
            continue;
        }
        let at = ctx
            .bets
            .iter()
            .filter(|b| b.kind.is_box() && b.seat == seat)
            .filter_map(|b| round.events.get(b.event).and_then(|e| e.at_ms))
            .max()
            .or(round.opened_at_ms);
        let e = seat_entry(state, seat);
        e.idle_rounds = 0;
        e.warned = false;
        e.warned_at_ms = None;
        e.idle_at_warning = 0;
        if at.is_some() {
            e.last_bet_at_ms = at;
        }
    }
    for e in &mut state.online_seats {
        if !ctx.seat_bets_this_round.contains(&e.seat) {
            e.idle_rounds = e.idle_rounds.saturating_add(1);
        }
    }
}

/// What the online void rules make of the round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnlineVoid {
    /// Settled as played.
    Valid,
    /// Void (r.27, r.28): bets returned.
    Void,
}

/// r.27-r.30: decide whether the round is void, and flag wrong voids / void rounds settled.
/// `complete` says whether the record determines every result.
pub fn judge(ctx: &mut Ctx, complete: bool) -> OnlineVoid {
    let declared =
        ctx.void_event.is_some() || ctx.round.settlement.as_ref().is_some_and(|s| s.void);
    let must_void = ctx.malfunction.is_some() && !complete;
    if must_void {
        let settled = ctx
            .round
            .settlement
            .as_ref()
            .is_some_and(|s| !s.void && s.results.iter().any(|r| r.net_cents != 0))
            || (ctx.pays && ctx.void_event.is_none());
        if settled {
            let at = ctx.malfunction.unwrap_or(0);
            let v = Violation::new(
                "BJO_VOID_ROUND_SETTLED",
                Severity::High,
                cite::ROBJ_VOID,
                "a malfunction interrupted the round before its result could be determined: it is void and the bets are returned, but it was settled",
            )
            .event(at);
            ctx.push(v);
        }
        return OnlineVoid::Void;
    }
    if declared {
        let why = if ctx.malfunction.is_some() {
            "the result was determinable despite the malfunction"
        } else if ctx.player_connection.is_some() {
            "the failure was only the player's connection or equipment"
        } else {
            "no malfunction interrupted it"
        };
        let mut v = Violation::new(
            "BJO_ROUND_WRONGLY_VOIDED",
            Severity::High,
            cite::ROBJ_NOT_VOID,
            format!(
                "the round was declared void although {why}: it is valid and settled as played"
            ),
        );
        if let Some((i, _)) = ctx.void_event {
            v = v.event(i);
        }
        ctx.push(v);
    }
    OnlineVoid::Valid
}
