//! The shoe, the warning card and the automatic shuffler (P217/2007 T.I C.III S.I r.3, r.8-r.11,
//! r.51-r.61; P1364/2001 r.51-r.62).
//!
//! * r.3: 4 or 6 decks, so no card (rank and suit) leaves one shoe more often than there are
//!   decks: `BJ_SHOE_CARD_OVERCOUNT`, counted across rounds in [`BlackjackState::shoe`].
//! * r.9, r.11: the warning card. When it comes out the current round is the last of the shoe;
//!   if it comes out immediately before a round starts (recorded after the last card of a
//!   round), the next round is still played; then the cards are reshuffled. A further round is
//!   `BJ_PLAYED_PAST_WARNING_CARD`.
//! * r.52: no cut and no warning card with an automatic shuffler: `BJ_CUT_WITH_SHUFFLER`.
//! * r.54: the shuffler is loaded once per session, in at least two packets, always with a
//!   fiscal-chefe present; r.55: unloaded at the close with a fiscal-chefe:
//!   `BJ_SHUFFLER_LOAD_IRREGULAR`.
//! * r.59, r.60 (P1364 r.59-r.61): with a continuous shuffler the round's cards go back in at
//!   its end (the count restarts), unless they could not be inserted (`cards_not_inserted`), in
//!   which case they go in with the next round's.
//! * P217 r.61 / P1364 r.62: complaints are heard only before the cards go into the shuffler:
//!   `BJ_COMPLAINT_AFTER_INSERTION`.

use rules_core::{Card, RoundError, Severity, Violation};

use crate::cite;
use crate::config::Shuffler;
use crate::play::Ctx;
use crate::state::{BlackjackState, WarningCard};

/// The round's first card: a manual shoe must have been reshuffled after the warning card.
pub fn round_starts(ctx: &mut Ctx, state: &BlackjackState, i: usize) {
    ctx.warning_at_start = Some(state.warning_card);
    if ctx.shuffler() == Shuffler::None
        && !ctx.cfg.online()
        && state.warning_card == WarningCard::OutLastRoundPlayed
    {
        let v = Violation::new(
            "BJ_PLAYED_PAST_WARNING_CARD",
            Severity::Medium,
            ctx.c(cite::R11),
            "a round started after the last round of the shoe (the warning card had come out) without a reshuffle",
        )
        .event(i);
        ctx.push(v);
    }
}

/// Count a card that left the shoe (r.3).
#[inline]
pub fn count_card(ctx: &mut Ctx, state: &mut BlackjackState, card: Card, i: usize) {
    let n = state.shoe.add(card);
    if n > u16::from(ctx.cfg.decks) {
        let decks = ctx.cfg.decks;
        let v = Violation::new(
            "BJ_SHOE_CARD_OVERCOUNT",
            Severity::High,
            ctx.c(cite::R3),
            format!("{card} has left this shoe {n} times; it has {decks} decks"),
        )
        .event(i);
        ctx.push(v);
    }
}

fn irregular(ctx: &mut Ctx, i: usize, citation: &'static str, msg: String) {
    let v = Violation::new(
        "BJ_SHUFFLER_LOAD_IRREGULAR",
        Severity::Medium,
        citation,
        msg,
    )
    .event(i);
    ctx.push(v);
}

/// A `procedure` event.
pub fn procedure(
    ctx: &mut Ctx,
    state: &mut BlackjackState,
    i: usize,
    name: &str,
    value: Option<&str>,
    seat: Option<u8>,
    at_ms: Option<i64>,
) -> Result<(), RoundError> {
    let shuffler = ctx.shuffler() != Shuffler::None;
    if ctx.cfg.online() {
        return match name {
            "shuffle" => {
                state.shoe.clear();
                Ok(())
            }
            "session_start" | "session_warning" | "session_ended" => {
                crate::online::session_procedure(ctx, state, i, name, value, seat, at_ms)
            }
            other => Err(RoundError::event(
                ctx.round,
                i,
                format!(
                    "unknown procedure `{}` (online: shuffle, session_start, session_warning, session_ended)",
                    other.chars().take(32).collect::<String>()
                ),
            )),
        };
    }
    match name {
        "shuffle" => {
            state.shoe.clear();
            state.warning_card = WarningCard::InShoe;
            ctx.warning_event = None;
        }
        "cut" | "warning_card" => {
            if shuffler {
                let v = Violation::new(
                    "BJ_CUT_WITH_SHUFFLER",
                    Severity::Low,
                    ctx.c(cite::R52),
                    format!("`{name}` recorded on a table with an automatic shuffler"),
                )
                .event(i);
                ctx.push(v);
            } else if name == "warning_card" {
                ctx.warning_event = Some(i);
            }
        }
        "last_round" | "cards_spread" | "card_replaced" | "reveal_hole_card" => {}
        "table_open" | "table_close" => state.shuffler_loads = 0,
        "shuffler_load" => {
            let packets = match value {
                None => None,
                Some(v) => Some(v.trim().parse::<u32>().map_err(|_| {
                    RoundError::event(
                        ctx.round,
                        i,
                        "shuffler_load value must be the number of packets",
                    )
                })?),
            };
            let c = ctx.c(cite::R54);
            if state.shuffler_loads >= 1 {
                let n = state.shuffler_loads + 1;
                irregular(
                    ctx,
                    i,
                    c,
                    format!("shuffler loaded {n} times in this session; once per session"),
                );
            }
            if !ctx.fiscal_chefe {
                irregular(
                    ctx,
                    i,
                    c,
                    "shuffler loaded without a fiscal-chefe present".to_string(),
                );
            }
            if let Some(p) = packets.filter(|&p| p < 2) {
                irregular(
                    ctx,
                    i,
                    c,
                    format!("shuffler loaded in {p} packet(s); at least two"),
                );
            }
            state.shuffler_loads = state.shuffler_loads.saturating_add(1);
        }
        "shuffler_unload" => {
            if !ctx.fiscal_chefe {
                let c = ctx.c(cite::R55);
                irregular(
                    ctx,
                    i,
                    c,
                    "cards taken out of the shuffler without a fiscal-chefe present".to_string(),
                );
            }
        }
        "cards_to_shuffler" => {
            ctx.inserted_at.get_or_insert(i);
        }
        "cards_not_inserted" => ctx.cards_not_inserted = true,
        "complaint" => {
            let upheld = match value {
                Some("upheld") => true,
                Some("rejected") => false,
                _ => {
                    return Err(RoundError::event(
                        ctx.round,
                        i,
                        "complaint value must be upheld or rejected",
                    ));
                }
            };
            if upheld && ctx.inserted_at.is_some() {
                let v = Violation::new(
                    "BJ_COMPLAINT_AFTER_INSERTION",
                    Severity::Medium,
                    ctx.c(cite::R_COMPLAINT),
                    "a complaint was upheld after the round's cards had gone into the shuffler",
                )
                .event(i);
                ctx.push(v);
            }
        }
        other => {
            return Err(RoundError::event(
                ctx.round,
                i,
                format!(
                    "unknown procedure `{}` (shuffle, cut, warning_card, last_round, cards_spread, card_replaced, reveal_hole_card, table_open, table_close, shuffler_load, shuffler_unload, cards_to_shuffler, cards_not_inserted, complaint)",
                    other.chars().take(32).collect::<String>()
                ),
            ));
        }
    }
    Ok(())
}

/// End of the round: the warning card's state (r.11) and the continuous shuffler's count
/// (r.59, r.60).
pub fn round_ends(ctx: &mut Ctx, state: &mut BlackjackState) {
    if ctx.cfg.online() {
        crate::online::end_round(ctx, state);
        return;
    }
    match ctx.shuffler() {
        Shuffler::None => {
            let played = ctx.deal_start.is_some();
            let after_last_card = ctx
                .warning_event
                .is_some_and(|w| ctx.last_card.is_none_or(|l| w > l));
            state.warning_card = match (ctx.warning_event, state.warning_card) {
                (Some(_), WarningCard::OutBeforeRound) if after_last_card && played => {
                    WarningCard::OutLastRoundPlayed
                }
                (Some(_), _) if after_last_card => WarningCard::OutBeforeRound,
                (Some(_), _) => WarningCard::OutLastRoundPlayed,
                (None, WarningCard::OutBeforeRound) if played => WarningCard::OutLastRoundPlayed,
                (None, s) => s,
            };
        }
        Shuffler::Batch => {}
        Shuffler::Continuous => {
            if !ctx.cards_not_inserted {
                state.shoe.clear();
            }
            state.cards_left_out = ctx.cards_not_inserted;
        }
    }
    let _ = cite::R_SHUFFLER_REINSERT;
}
