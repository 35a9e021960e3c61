//! One hand from record to adjudication: read the hand ([`crate::hand`]), decide void or
//! showdown, value the hands ([`crate::eval`]), cut and award the pots ([`crate::pots`]), take
//! the house's share, check the settlement and carry the state over.

use std::borrow::Cow;

use rules_core::{
    Adjudication, BetOutcome, Cents, Confidence, HouseTake, Options, Outcome, Round, RoundError,
    Violation, VoidInfo,
};

use crate::codes;
use crate::config::{Commission, FeeBase, PokerConfig, Regulation};
use crate::eval::{self, HandValue};
use crate::hand::{self, HandRec, SEAT_SLOTS, dist, mul_bp};
use crate::pots::{self, PotsIn, PotsOut, reading};
use crate::state::{PokerState, Session};
use crate::variant::Forced;

const HOUR_MS: i64 = 3_600_000;
const HALF_HOUR_MS: i64 = 1_800_000;

/// Adjudicate one hand; `state` is updated only on success.
pub fn adjudicate(
    cfg: &PokerConfig,
    state: &mut PokerState,
    round: &Round,
    options: &Options,
) -> Result<Adjudication, RoundError> {
    let explain = options.explain;
    let c = &cfg.cites;
    let mut adj = Adjudication::new(cfg.rules.game, round.round_id.clone());
    let h = hand::simulate(cfg, state, round, &mut adj, explain)?;

    // r.90: a returning player posts the blinds he missed, as dead money.
    // r.89: five hands without a bet owe a big blind (a reading: review).
    if cfg.rules.forced == Forced::MaoBlinds {
        for &s in &h.ring {
            let r = &h.seats[s as usize];
            if let Some(&owed) = state.missed_blinds_cents.get(&s)
                && owed > 0
                && r.dead < owed
            {
                let v = Violation::new(
                    codes::MISSED_BLINDS_NOT_POSTED,
                    codes::severity(codes::MISSED_BLINDS_NOT_POSTED),
                    c.missed_blinds,
                    format!(
                        "seat {s} returns owing {owed} cents of missed blinds and posts {} dead",
                        r.dead
                    ),
                )
                .seat(s);
                adj.violation(v);
            }
            if state.idle_hands.get(&s).is_some_and(|&n| n >= 5)
                && r.posted_bb < cfg.min_bet
                && !(r.all_in && r.posted_bb > 0)
            {
                let v = Violation::new(
                    codes::MISSED_BLINDS_NOT_POSTED,
                    codes::severity(codes::MISSED_BLINDS_NOT_POSTED),
                    c.idle_big_blind,
                    format!(
                        "seat {s} made no bet for {} hands and does not post the big blind owed (r.89)",
                        state.idle_hands.get(&s).copied().unwrap_or(0)
                    ),
                )
                .seat(s)
                .review();
                adj.violation(v);
            }
        }
    }

    // Fees charged from caves (P217 r.7(b) session fee; Reg806 r.17(b) entry fee).
    let mut session = state.session.clone();
    let fee_takes = check_fees(cfg, state, round, &h, &mut session, &mut adj);

    // Void or played.
    let live: Vec<u8> = h.live_seats().collect();
    let mut readings = 0u8;
    let mut commission_review = false;
    let mut due_commission: Cents = 0;
    let mut received = [0 as Cents; SEAT_SLOTS];
    let mut po = false;
    let mut po_carry: Cents = 0;
    if let Some(n) = h.null {
        adj.void = Some(VoidInfo {
            reason: Cow::Borrowed(n.reason),
            citation: Cow::Borrowed(n.citation),
        });
        if explain {
            adj.note(
                n.citation,
                format!(
                    "the hand is null ({}): every chip goes back to its owner, no commission",
                    n.reason
                ),
            );
        }
    } else {
        if live.is_empty() {
            return Err(RoundError::round(
                round,
                "every seat folded: nobody is left to win the pot",
            ));
        }
        let mut values = [HandValue::default(); SEAT_SLOTS];
        if live.len() >= 2 {
            if h.board.len() < 5 {
                return Err(RoundError::round(
                    round,
                    format!(
                        "{} players remain but only {} common cards are recorded: the showdown needs five",
                        live.len(),
                        h.board.len()
                    ),
                ));
            }
            let board = &h.board[..5];
            for &s in &live {
                let hole = h.seats[s as usize].hole();
                values[s as usize] =
                    eval::best_hand(cfg.rules.ranking, cfg.rules.selection, hole, board)
                        .ok_or_else(|| {
                            RoundError::round(
                                round,
                                format!(
                                    "seat {s} reaches the showdown with {} recorded hole cards and cannot form a hand",
                                    hole.len()
                                ),
                            )
                        })?;
                if explain
                    && let Some((v, five)) =
                        eval::best_five_cards(cfg.rules.ranking, cfg.rules.selection, hole, board)
                {
                    adj.note(
                        c.selection,
                        format!(
                            "seat {s} holds {}: best hand {} = {}",
                            eval::cards_text(hole),
                            eval::cards_text(&five),
                            eval::describe(v)
                        ),
                    );
                }
            }
            // P461 r.49: nobody went to play: "pó", the chips carry to the next hand.
            if cfg.regulation == Regulation::P461 && !h.voluntary {
                po = true;
            }
        }
        if po {
            readings |= reading::PO;
            po_carry = h.carried_in
                + h.ring
                    .iter()
                    .map(|&s| h.seats[s as usize].live + h.seats[s as usize].dead)
                    .sum::<Cents>();
            if explain {
                adj.note(
                    c.po,
                    format!(
                        "nobody bet: pó; the {po_carry} cents in the pot carry to the next hand (P461 r.49)"
                    ),
                );
            }
        } else {
            let walk = !cfg.rules.land && live.len() == 1 && h.last_round == 0 && !h.voluntary;
            let (bp, cap) = match cfg.commission {
                Commission::PerHand { bp, cap } if !walk => (Some(bp), cap),
                _ => (None, None),
            };
            let order: Vec<u8> = {
                let p = h.ring.iter().position(|&s| s >= h.button).unwrap_or(0);
                (0..h.ring.len())
                    .map(|k| h.ring[(p + k) % h.ring.len()])
                    .collect()
            };
            let mut contrib = [0 as Cents; SEAT_SLOTS];
            let mut live_mask = 0u16;
            let mut dead = h.carried_in;
            for &s in &h.ring {
                let r = &h.seats[s as usize];
                contrib[s as usize] = r.live;
                dead += r.dead;
                if !r.folded {
                    live_mask |= 1 << s;
                }
            }
            let out = pots::compute(&PotsIn {
                contrib,
                dead,
                live: live_mask,
                values,
                ranking: cfg.rules.ranking,
                order: &order,
                unit: cfg.split_unit(),
                bp,
                cap,
                sintetico_ties: cfg.rules.ranking == eval::Ranking::Sintetico,
                land: cfg.rules.land,
            });
            readings |= out.readings;
            due_commission = out.commission;
            // Digest N6: at land tables the commission on an uncontested pot is not audited: a
            // reported take between nothing and the rate on everything wagered is accepted.
            if cfg.rules.land
                && live.len() == 1
                && let Some(bp) = bp
            {
                let wagered: Cents = h
                    .ring
                    .iter()
                    .map(|&s| h.seats[s as usize].live + h.seats[s as usize].dead)
                    .sum::<Cents>()
                    + h.carried_in;
                let mut max = mul_bp(wagered, bp);
                if let Some(cap) = cap {
                    max = max.min(cap);
                }
                match round.settlement.as_ref().and_then(|s| s.house_cents) {
                    Some(rep) if (0..=max).contains(&rep) => due_commission = rep,
                    Some(_) => commission_review = true,
                    None => {}
                }
            }
            if explain {
                explain_pots(cfg, &out, walk, &mut adj);
            }
            if let Some((s, ex)) = out.excess {
                received[s as usize] += ex;
            }
            let mut taken = 0;
            for pot in &out.pots {
                for pay in &pot.payments {
                    received[pay.seat as usize] += pay.gross - pay.commission;
                    taken += pay.commission;
                }
            }
            if due_commission != taken {
                // N6 accepted take on an uncontested pot: it comes out of the one payment.
                if let Some(&w) = live.first() {
                    received[w as usize] += taken - due_commission;
                }
            }
        }
    }

    // Outcomes, in bet order.
    let mut by_event: Vec<u8> = h.ring.clone();
    by_event.sort_by_key(|&s| h.seats[s as usize].bet_event);
    for s in by_event {
        let r = &h.seats[s as usize];
        let put = r.live + r.dead;
        let bet_id = match &round.events[r.bet_event].kind {
            rules_core::EventKind::Bet(b) => b.id.clone(),
            _ => continue,
        };
        let (net, outcome, reason, citation): (Cents, Outcome, &'static str, &'static str) =
            if let Some(n) = h.null {
                (
                    0,
                    Outcome::Void,
                    "hand null: every chip returned",
                    n.citation,
                )
            } else if po {
                (
                    -put,
                    Outcome::Lost,
                    "pó: the chips carry to the next hand",
                    c.po,
                )
            } else {
                let net = received[s as usize] - put;
                let (o, why) = if net > 0 {
                    (
                        Outcome::Won,
                        if live.len() == 1 {
                            "wins the pot uncontested"
                        } else {
                            "wins at the showdown"
                        },
                    )
                } else if net < 0 {
                    (
                        Outcome::Lost,
                        if r.folded {
                            "folds and loses what it put in"
                        } else {
                            "loses at the showdown"
                        },
                    )
                } else {
                    (Outcome::Push, "breaks even")
                };
                let cite = if live.len() == 1 {
                    c.uncontested
                } else {
                    c.payout
                };
                (net, o, why, cite)
            };
        adj.bets.push(BetOutcome {
            bet_id,
            seat: Some(s),
            stake_cents: put,
            due_net_cents: net,
            outcome,
            reported_net_cents: None,
            reason: Cow::Borrowed(reason),
            citation: Cow::Borrowed(citation),
        });
    }

    // The house's take, reported apart from the players' results.
    if due_commission > 0 {
        adj.house.push(HouseTake {
            kind: Cow::Borrowed("commission"),
            amount_cents: due_commission,
            citation: Cow::Borrowed(c.commission),
        });
    }
    adj.house.extend(fee_takes);

    // The settlement.
    let settlement = round.settlement.as_ref();
    let mut suppress = false;
    if h.null.is_some() {
        if let Some(s) = settlement {
            let moved =
                s.results.iter().any(|r| r.net_cents != 0) || s.house_cents.unwrap_or(0) != 0;
            if moved {
                // r.69, r.109; Reg806 r.72 (N19, N25): a null hand moves no chips.
                let n = h.null.map(|n| n.citation).unwrap_or(c.null_hand);
                adj.violation(Violation::new(
                    codes::VOID_HAND_SETTLED,
                    codes::severity(codes::VOID_HAND_SETTLED),
                    n,
                    "the hand is null but the settlement moves chips (bets must be returned, no commission)",
                ));
                suppress = true;
            }
        }
    } else {
        let due_moves = adj.bets.iter().any(|b| b.due_net_cents != 0);
        let reported_zero = settlement.is_some_and(|s| {
            s.void
                || (!s.results.iter().any(|r| r.net_cents != 0) && s.house_cents.unwrap_or(0) == 0)
        });
        if h.wrongly_voided_event.is_some() || (due_moves && reported_zero) {
            // Reg806 r.73; r.70(c): this hand stands.
            let mut v = Violation::new(
                codes::WRONGLY_VOIDED,
                codes::severity(codes::WRONGLY_VOIDED),
                c.wrongly_voided,
                "the hand must stand but was voided (bets returned)",
            );
            v.event_index = h.wrongly_voided_event.and_then(|i| u32::try_from(i).ok());
            adj.violation(v);
            suppress = reported_zero;
        }
        if !suppress
            && let Some(rep) = settlement.and_then(|s| s.house_cents)
            && rep != due_commission
        {
            let mut v = Violation::new(
                codes::COMMISSION_WRONG,
                codes::severity(codes::COMMISSION_WRONG),
                c.commission,
                format!("the house took {rep} cents; {due_commission} are due"),
            );
            if commission_review || readings & (reading::N7_CAP | reading::N10_ODD_CHIPS) != 0 {
                v.confidence = Confidence::Review;
            }
            adj.violation(v);
        }
    }
    // One breach, one finding (rules-core): the null-hand / wrongly-voided violation above is
    // the finding for the bets it concerns; reconcile drops their payout discrepancies.
    adj.reconcile(settlement, codes::PAYOUT_MISMATCH, c.payout);
    if !suppress && !adj.discrepancies.is_empty() && readings != 0 {
        let mut v = Violation::new(
            codes::PAYOUT_MISMATCH,
            codes::severity(codes::PAYOUT_MISMATCH),
            c.payout,
            format!(
                "the reported nets differ from the due ones, which rest on {}",
                reading::names(readings).join(", ")
            ),
        );
        v.confidence = Confidence::Review;
        adj.violation(v);
    }

    // Carry the state over.
    let mut next = state.clone();
    next.hands = next.hands.saturating_add(1);
    next.button = Some(h.button);
    if cfg.rules.forced == Forced::MaoBlinds {
        for &s in &h.ring {
            let r = &h.seats[s as usize];
            next.missed_blinds_cents.remove(&s);
            if r.live + r.dead == 0 {
                let e = next.idle_hands.entry(s).or_insert(0);
                *e = e.saturating_add(1);
            } else {
                next.idle_hands.remove(&s);
            }
        }
        let sb = cfg.small_blind.unwrap_or(cfg.min_bet / 2);
        let n = cfg.seats;
        for &a in &h.absent {
            let mut owe = 0;
            if let Some(prev) = state.button
                && !h.button_drawn
            {
                let d = dist(prev, a, n);
                if d > 0 && d < dist(prev, h.button, n) {
                    owe += sb;
                }
            }
            if let Some(bb) = h.bb_at {
                let d = dist(h.button, a, n);
                if d > 0 && d < dist(h.button, bb, n) {
                    owe += cfg.min_bet;
                }
            }
            if owe > 0 {
                let e = next.missed_blinds_cents.entry(a).or_insert(0);
                *e = e.saturating_add(owe);
            }
        }
    }
    for &s in &h.left {
        next.idle_hands.remove(&s);
        next.missed_blinds_cents.remove(&s);
        if let Some(sess) = session.as_mut() {
            sess.joined_at_ms.remove(&s);
        }
    }
    next.session = session;
    if cfg.regulation == Regulation::P461 {
        next.po_carry_cents = if h.null.is_some() {
            h.carried_in
        } else {
            po_carry
        };
    }
    *state = next;
    Ok(adj)
}

/// Session and entry fees: who may be charged, how much (P217 r.7(b); Reg806 r.17(b)).
fn check_fees(
    cfg: &PokerConfig,
    state: &PokerState,
    round: &Round,
    h: &HandRec,
    session: &mut Option<Session>,
    adj: &mut Adjudication,
) -> Vec<HouseTake> {
    let c = &cfg.cites;
    let mut takes = Vec::new();
    let flag = |adj: &mut Adjudication, seat: u8, review: bool, msg: String| {
        let mut v = Violation::new(
            codes::COMMISSION_WRONG,
            codes::severity(codes::COMMISSION_WRONG),
            c.fee,
            msg,
        )
        .seat(seat);
        if review {
            v.confidence = Confidence::Review;
        }
        adj.violation(v);
    };
    // The P217 session (r.7(b)): one hour plus the hands until the mão is back at the seat that
    // had it when the session began.
    if let Commission::PerSession { .. } = cfg.commission
        && let Some(t) = round.opened_at_ms
    {
        let new = match session.as_ref() {
            None => true,
            Some(s) => {
                let over = t >= s.started_at_ms.saturating_add(HOUR_MS);
                let crossed = match state.button {
                    Some(prev) => {
                        let n = cfg.seats;
                        let d1 = dist(prev, s.first_button, n);
                        let d2 = dist(prev, h.button, n);
                        d2 > 0 && d1 > 0 && d1 <= d2
                    }
                    None => h.button == s.first_button,
                };
                over && crossed
            }
        };
        if new {
            *session = Some(Session {
                started_at_ms: t,
                first_button: h.button,
                ..Session::default()
            });
        }
        if let Some(s) = session.as_mut() {
            for &seat in &h.ring {
                s.joined_at_ms.entry(seat).or_insert(t);
            }
        }
    }
    let mut session_due = 0;
    let mut entry_recorded = [0 as Cents; SEAT_SLOTS];
    for f in &h.fees {
        match (f.kind, cfg.commission) {
            ("session_fee", Commission::PerSession { bp, base }) => {
                let mut due = match base {
                    FeeBase::TableMax => cfg.max_bet.map(|m| mul_bp(m, bp)),
                    FeeBase::Cave => {
                        let r = &h.seats[f.seat as usize];
                        r.in_hand.then(|| mul_bp(r.start_cave, bp))
                    }
                }
                .unwrap_or(f.recorded);
                if let Some(s) = session.as_mut() {
                    if s.charged.contains(&f.seat) {
                        flag(
                            adj,
                            f.seat,
                            false,
                            format!(
                                "seat {} is charged the session fee twice in one session",
                                f.seat
                            ),
                        );
                        due = 0;
                    } else if s
                        .joined_at_ms
                        .get(&f.seat)
                        .is_some_and(|&j| j > s.started_at_ms.saturating_add(HALF_HOUR_MS))
                    {
                        flag(
                            adj,
                            f.seat,
                            true,
                            format!(
                                "seat {} took its seat more than 30 minutes into the session and is charged its fee",
                                f.seat
                            ),
                        );
                        due = 0;
                    } else {
                        s.charged.push(f.seat);
                        s.charged.sort_unstable();
                    }
                }
                if due != 0 && due != f.recorded {
                    flag(
                        adj,
                        f.seat,
                        true,
                        format!(
                            "session fee of {} cents for seat {}; the configured rate gives {due}",
                            f.recorded, f.seat
                        ),
                    );
                } else if due == 0 && f.recorded != 0 {
                    // already flagged
                }
                session_due += due;
            }
            ("entry_fee", Commission::BuyIn { .. }) => {
                entry_recorded[f.seat as usize] += f.recorded;
            }
            (kind, _) => {
                flag(
                    adj,
                    f.seat,
                    false,
                    format!(
                        "a {} of {} cents is charged to seat {} at a table whose commission is not taken that way",
                        kind.replace('_', " "),
                        f.recorded,
                        f.seat
                    ),
                );
            }
        }
    }
    if session_due > 0 {
        takes.push(HouseTake {
            kind: Cow::Borrowed("session_fee"),
            amount_cents: session_due,
            citation: Cow::Borrowed(c.fee),
        });
    }
    if let Commission::BuyIn { bp } = cfg.commission {
        let mut total = 0;
        for seat in 1..SEAT_SLOTS as u8 {
            let due: Cents = h
                .buy_ins
                .iter()
                .filter(|(s, _)| *s == seat)
                .map(|&(_, a)| mul_bp(a, bp))
                .sum();
            let rec = entry_recorded[seat as usize];
            if due != rec {
                flag(
                    adj,
                    seat,
                    false,
                    format!(
                        "seat {seat} is charged {rec} cents of entry fees; {due} are due on its buy-ins"
                    ),
                );
            }
            total += due;
        }
        if total > 0 {
            takes.push(HouseTake {
                kind: Cow::Borrowed("entry_fee"),
                amount_cents: total,
                citation: Cow::Borrowed(c.fee),
            });
        }
    }
    takes
}

fn seats_text(mask: u16) -> String {
    (1..16u8)
        .filter(|s| mask & (1 << s) != 0)
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn explain_pots(cfg: &PokerConfig, out: &PotsOut, walk: bool, adj: &mut Adjudication) {
    let c = &cfg.cites;
    if let Some((s, ex)) = out.excess {
        adj.note(
            c.side_pots,
            format!("{ex} cents of seat {s}'s last bet were not called and go back to it"),
        );
    }
    for (k, pot) in out.pots.iter().enumerate() {
        let name = if k == 0 {
            "main pot".to_string()
        } else {
            format!("side pot {k}")
        };
        adj.note(
            c.side_pots,
            format!(
                "{name}: {} cents, eligible seats {}",
                pot.amount,
                seats_text(pot.eligible)
            ),
        );
        for pay in &pot.payments {
            let why = if pot.payments.len() > 1 {
                "shares it (equal hands; parts in units of the split rule, the largest to the mão)"
            } else if pot.eligible.count_ones() == 1 {
                "takes it uncontested"
            } else {
                "has the best hand"
            };
            adj.note(
                if pot.payments.len() > 1 {
                    c.split
                } else {
                    c.payout
                },
                format!(
                    "{name}: seat {} {why}: {} cents, commission {}, paid {}",
                    pay.seat,
                    pay.gross,
                    pay.commission,
                    pay.gross - pay.commission
                ),
            );
        }
    }
    if walk {
        adj.note(
            c.walk,
            "the hand ended before the flop without a voluntary bet: no commission (Reg806 r.18)",
        );
    }
    match cfg.commission {
        Commission::PerHand { bp, cap } => adj.note(
            c.commission,
            format!(
                "commission {} bp of each payment, rounded down{}: {} cents in all",
                bp,
                cap.map(|c| format!(", capped at {c} cents per hand"))
                    .unwrap_or_default(),
                out.commission
            ),
        ),
        _ => adj.note(
            c.fee,
            "the house is paid by fees on sessions or buy-ins: nothing is taken from the pot",
        ),
    }
    if out.readings != 0 {
        adj.note(
            c.payout,
            format!(
                "this result rests on the digest's readings {}",
                reading::names(out.readings).join(", ")
            ),
        );
    }
}
