//! Settlement: what each bet is due (P217/2007 T.I C.III S.I r.20-r.25, r.33-r.36, r.43, r.50;
//! ROBJ/2015 r.25-r.30).
//!
//! Per hand, for a stake `s` (the bet on the hand plus any double):
//!
//! | case | net | rule |
//! |---|---|---|
//! | surrendered | −s/2 | r.36 |
//! | even money | +s | r.34 |
//! | blackjack, dealer without blackjack | +s x 3/2 (online: `blackjack_pays`) | r.21 |
//! | blackjack against blackjack | 0 | r.21 (ROBJ r.25(h)) |
//! | over 21 | −s, even if the dealer busts later | r.22 |
//! | dealer blackjack against any other hand (doubles, splits: full stake, 13.3) | −s | r.20, r.23 |
//! | dealer over 21 | +s (reading 13.2) | r.23, r.25 |
//! | closer to 21 / farther / equal | +s / −s / 0 | r.23, r.24 (ROBJ r.25(e),(h)) |
//! | 6-7-8 of one suit or three 7s | +3 x the bet on the hand, besides the above | r.35 (ROBJ r.25(i)) |
//!
//! Insurance (r.33, ROBJ r.25(f),(g)): +2 x the insurance on a dealer blackjack, −insurance
//! otherwise. Jackpot: see [`crate::jackpot`].
//!
//! **Rounding.** The rules fix none. A half cent (3:2 on an odd stake, half of an odd stake on
//! surrender) is dropped: amounts are truncated toward zero, so no fraction of a cent changes
//! hands either way (the player receives the whole cents of his 3:2 prize and loses the whole
//! cents of half his stake). Results that depend on this carry the reading "rounding".

use rules_core::{BetOutcome, Cents, JackpotWin, Outcome, Rank, RoundError, Severity, Violation};

use crate::cite;
use crate::hand::{SpecialPrize, special_prize};
use crate::jackpot::{self, E4};
use crate::online::{self, OnlineVoid};
use crate::play::{BetKind, Ctx, Hand};

struct HandResult {
    net: Cents,
    reason: &'static str,
    citation: &'static str,
    reading: Option<&'static str>,
}

/// Is the round's record complete enough to settle every bet?
fn completeness(ctx: &Ctx) -> (bool, &'static str) {
    let up_may_bj = ctx
        .dealer
        .first()
        .is_none_or(|c| c.rank == Rank::Ace || c.rank.is_ten_or_face());
    let mut need_hole = false;
    for s in &ctx.seats {
        let staked = ctx
            .bets
            .iter()
            .any(|b| b.kind.is_box() && b.seat == s.seat && !b.withdrawn);
        if staked && s.hands.iter().all(|h| h.cards.is_empty()) {
            return (false, "a seat with a bet received no cards");
        }
        for h in s.hands.iter() {
            if h.cards.is_empty() || h.surrendered || h.even_money || h.bust() {
                continue;
            }
            if h.is_blackjack() {
                need_hole |= up_may_bj;
            } else {
                need_hole = true;
            }
        }
    }
    need_hole |= ctx
        .bets
        .iter()
        .any(|b| b.kind == BetKind::Insurance && !b.withdrawn);
    if need_hole && ctx.dealer.len() < 2 {
        return (
            false,
            "the dealer's hand is not in the record (fewer than two cards)",
        );
    }
    if ctx.cfg.online() {
        if ctx.live_hands() && crate::dealer::must_draw(&ctx.dealer_count, ctx.cfg.hits_soft_17) {
            return (false, "the dealer's hand was not completed");
        }
        if ctx
            .seats
            .iter()
            .flat_map(|s| s.hands.iter())
            .any(|h| h.pending > 0)
        {
            return (false, "a player's requested card was not dealt");
        }
    }
    (true, "")
}

fn hand_result(ctx: &Ctx, h: &Hand, stake: Cents, base: Cents, dealer_bj: bool) -> HandResult {
    let cfg = ctx.cfg;
    let c = |x: cite::Cite| x.get(cfg.regulation);
    if h.surrendered {
        return HandResult {
            net: -(stake / 2),
            reason: "surrendered: half the bet is lost",
            citation: c(cite::R36),
            reading: (stake % 2 != 0).then_some("rounding"),
        };
    }
    if h.even_money {
        return HandResult {
            net: stake,
            reason: "blackjack against an ace: even money taken",
            citation: c(cite::R34),
            reading: None,
        };
    }
    let total = h.total();
    let dealer_total = ctx.dealer_count.dealer_total();
    if h.is_blackjack() {
        if dealer_bj {
            return HandResult {
                net: 0,
                reason: "blackjack against the dealer's blackjack: null",
                citation: c(cite::R21_BJ_PUSH),
                reading: None,
            };
        }
        if cfg.online() && !cfg.bj_beats_21 && dealer_total == 21 {
            return HandResult {
                net: 0,
                reason: "blackjack against the dealer's 21: equal totals tie (ROBJ r.25(h) as configured)",
                citation: cite::ROBJ_TIE,
                reading: Some("13.16"),
            };
        }
        let num = stake.saturating_mul(cfg.bj_num);
        return HandResult {
            net: num / cfg.bj_den,
            reason: "blackjack paid 3 to 2",
            citation: c(cite::R21),
            reading: if num % cfg.bj_den != 0 {
                Some("rounding")
            } else if cfg.online() && dealer_total == 21 {
                // ROBJ r.25(h) read literally would tie equal totals (13.16).
                Some("13.16")
            } else {
                None
            },
        };
    }
    if total > 21 {
        return HandResult {
            net: -stake,
            reason: "over 21: lost at once",
            citation: c(cite::R22),
            reading: None,
        };
    }
    if dealer_bj {
        if cfg.online() && !cfg.bj_beats_21 && total == 21 {
            return HandResult {
                net: 0,
                reason: "21 against the dealer's blackjack: equal totals tie (ROBJ r.25(h) as configured)",
                citation: cite::ROBJ_TIE,
                reading: Some("13.16"),
            };
        }
        return HandResult {
            net: -stake,
            reason: if total == 21 {
                "the dealer's blackjack beats a 21 of more cards"
            } else {
                "the dealer's blackjack beats the hand"
            },
            citation: if total == 21 {
                c(cite::R20)
            } else {
                c(cite::R23)
            },
            reading: if cfg.online() && total == 21 {
                Some("13.16")
            } else {
                (h.doubled || h.split).then_some("13.3")
            },
        };
    }
    let _ = base;
    if dealer_total > 21 {
        return HandResult {
            net: stake,
            reason: "the dealer went over 21",
            citation: c(cite::R23),
            reading: Some("13.2"),
        };
    }
    match total.cmp(&dealer_total) {
        std::cmp::Ordering::Greater => HandResult {
            net: stake,
            reason: "closer to 21 than the dealer",
            citation: c(cite::R23),
            reading: None,
        },
        std::cmp::Ordering::Less => HandResult {
            net: -stake,
            reason: "the dealer is closer to 21",
            citation: c(cite::R23),
            reading: None,
        },
        std::cmp::Ordering::Equal => HandResult {
            net: 0,
            reason: "equal totals: null",
            citation: c(cite::R24),
            reading: None,
        },
    }
}

/// Settle every bet, price the jackpot and check its display.
pub fn settle(ctx: &mut Ctx) -> Result<(), RoundError> {
    let (complete, why) = completeness(ctx);
    let void = if ctx.cfg.online() {
        online::judge(ctx, complete) == OnlineVoid::Void
    } else {
        false
    };
    if void {
        ctx.adj.void = Some(rules_core::VoidInfo {
            reason: "malfunction: the result cannot be determined".into(),
            citation: cite::ROBJ_VOID.into(),
        });
    } else if !complete {
        return Err(RoundError::round(
            ctx.round,
            format!("the round cannot be settled: {why}"),
        ));
    }
    let dealer_bj = ctx.dealer_blackjack();
    let up_ace = ctx.dealer.first().is_some_and(|c| c.rank == Rank::Ace);

    // Jackpot first (its prizes are needed per bet).
    let jp = if void { None } else { price_jackpot(ctx)? };

    let mut out = Vec::with_capacity(ctx.bets.len());
    for bi in 0..ctx.bets.len() {
        let b = &ctx.bets[bi];
        let id = b.bet.id.clone();
        let seat = Some(b.seat);
        if b.withdrawn {
            out.push(outcome(
                id,
                seat,
                0,
                0,
                Outcome::Withdrawn,
                "withdrawn before a decision",
                rules_core::LEDGER_CONVENTION,
            ));
            continue;
        }
        if void {
            let stake = b
                .stakes
                .iter()
                .map(|s| s.base + s.extra)
                .sum::<Cents>()
                .max(b.amount);
            out.push(outcome(
                id,
                seat,
                stake,
                0,
                Outcome::Void,
                "void round: bet returned",
                cite::ROBJ_VOID,
            ));
            continue;
        }
        match b.kind {
            BetKind::Main | BetKind::Vacant | BetKind::Complementary => {
                let Some(si) = ctx.seat_index(b.seat) else {
                    out.push(outcome(
                        id,
                        seat,
                        b.amount,
                        0,
                        Outcome::Void,
                        "no cards",
                        rules_core::LEDGER_CONVENTION,
                    ));
                    continue;
                };
                let follower = ctx.seats[si].lead != bi;
                let mut net: Cents = 0;
                let mut staked: Cents = 0;
                let mut reason = "";
                let mut citation = "";
                let mut reading = None;
                let mut prize = false;
                for st in b.stakes.iter() {
                    let Some(h) = ctx.seats[si].hands.iter().find(|h| h.number == st.hand) else {
                        continue;
                    };
                    let stake = st.base.saturating_add(st.extra);
                    staked = staked.saturating_add(stake);
                    let r = hand_result(ctx, h, stake, st.base, dealer_bj);
                    net = net.saturating_add(r.net);
                    if reason.is_empty() {
                        (reason, citation) = (r.reason, r.citation);
                    } else if reason != r.reason {
                        (reason, citation) = ("split hands settled separately", ctx.c(cite::R26));
                    }
                    reading = reading.or(r.reading);
                    // r.35: the special prize, 3 x the bet, besides the hand's result.
                    if let Some(kind) = special_prize(&h.cards) {
                        net = net.saturating_add(st.base.saturating_mul(3));
                        prize = true;
                        if h.split || follower {
                            reading = reading.or(Some("13.8"));
                        }
                        let _ = matches!(kind, SpecialPrize::Suited678);
                    }
                }
                if prize {
                    (reason, citation) = (
                        "special prize 3 x the bet (6-7-8 of one suit or three 7s), besides the hand's result",
                        ctx.c(cite::R35),
                    );
                }
                if b.stakes.len() > 1 && reason == "split hands settled separately" {
                    reading = reading.or(None);
                }
                let o = if net > 0 {
                    Outcome::Won
                } else if net < 0 {
                    Outcome::Lost
                } else {
                    Outcome::Push
                };
                ctx.bets[bi].reading = reading;
                out.push(outcome(id, seat, staked, net, o, reason, citation));
            }
            BetKind::Insurance => {
                let target = b.on.map(|t| ctx.bets[t].amount).unwrap_or(0);
                let amount = b.amount;
                let ev = b.event;
                if !up_ace {
                    let v = Violation::new(
                        "BJ_INSURANCE_NOT_ACE",
                        Severity::Medium,
                        ctx.c(cite::R33_LIMIT),
                        format!(
                            "insurance `{id}` taken with the dealer's up-card {}",
                            ctx.dealer
                                .first()
                                .map_or("missing".to_string(), |c| c.to_string())
                        ),
                    )
                    .bet(&id)
                    .seat(b.seat)
                    .event(ev);
                    ctx.adj.violations.push(v);
                }
                if amount.saturating_mul(2) > target {
                    let v = Violation::new(
                        "BJ_INSURANCE_OVER_HALF",
                        Severity::Medium,
                        ctx.c(cite::R33_LIMIT),
                        format!(
                            "insurance `{id}` of {amount} is above half the insured bet of {target}"
                        ),
                    )
                    .bet(&id)
                    .seat(b.seat)
                    .event(ev);
                    ctx.adj.violations.push(v);
                }
                let b = &ctx.bets[bi];
                if dealer_bj {
                    out.push(outcome(
                        id,
                        seat,
                        b.amount,
                        b.amount.saturating_mul(2),
                        Outcome::Won,
                        "insurance: the dealer has blackjack, paid twice its amount",
                        ctx.c(cite::R33),
                    ));
                } else {
                    out.push(outcome(
                        id,
                        seat,
                        b.amount,
                        -b.amount,
                        Outcome::Lost,
                        "insurance: the dealer has no blackjack",
                        ctx.c(cite::R33),
                    ));
                }
            }
            BetKind::Jackpot => {
                let (net, o, reason, citation) = match &jp {
                    _ if !b.jackpot_valid => (
                        0,
                        Outcome::Withdrawn,
                        "not accepted as a jackpot bet: chip returned",
                        ctx.c(cite::R45),
                    ),
                    Some(j) => match j.iter().find(|w| w.0 == bi) {
                        Some(&(_, prize, _)) => (
                            prize - b.amount,
                            Outcome::Won,
                            "jackpot combination in the first cards; the chip is not returned",
                            ctx.c(cite::R43),
                        ),
                        None => (
                            -b.amount,
                            Outcome::Lost,
                            "no jackpot combination in the first cards",
                            ctx.c(cite::R42_46),
                        ),
                    },
                    None => (
                        -b.amount,
                        Outcome::Lost,
                        "no jackpot combination in the first cards",
                        ctx.c(cite::R42_46),
                    ),
                };
                out.push(outcome(id, seat, b.amount, net, o, reason, citation));
            }
        }
    }
    ctx.adj.bets = out;
    Ok(())
}

fn outcome(
    id: rules_core::Id,
    seat: Option<u8>,
    stake: Cents,
    net: Cents,
    outcome: Outcome,
    reason: &'static str,
    citation: &'static str,
) -> BetOutcome {
    BetOutcome {
        bet_id: id,
        seat,
        stake_cents: stake,
        due_net_cents: net,
        outcome,
        reported_net_cents: None,
        reason: reason.into(),
        citation: citation.into(),
    }
}

/// Winners `(bet index, prize, line index)` of the round; fills `adj.jackpot` and
/// `adj.jackpot_wins`, and checks the display.
/// A jackpot winner: (bet index, prize in cents, pay-table line index).
type Winner = (usize, Cents, usize);

fn price_jackpot(ctx: &mut Ctx) -> Result<Option<Vec<Winner>>, RoundError> {
    let Some(rules) = ctx.cfg.jackpot.as_ref() else {
        return Ok(None);
    };
    let round = ctx.round;
    let before = match round.jackpot_before_cents {
        Some(v) if !(0..=rules_core::MAX_AMOUNT_CENTS).contains(&v) => {
            return Err(RoundError::round(
                round,
                "jackpot_before_cents must be 0 to MAX_AMOUNT_CENTS",
            ));
        }
        other => other,
    };
    let mut contributions: i128 = 0;
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    let pool_guess = before.map(|b| b as i128 * E4);
    // Contributions first (13.11).
    for b in &ctx.bets {
        if b.kind == BetKind::Jackpot && b.jackpot_valid && !b.withdrawn {
            contributions += b.amount as i128 * rules.increment_bp as i128;
        }
    }
    let pool = pool_guess.map(|p| p + contributions);
    for (bi, b) in ctx.bets.iter().enumerate() {
        if b.kind != BetKind::Jackpot || !b.jackpot_valid || b.withdrawn {
            continue;
        }
        let Some(si) = ctx.seat_index(b.seat) else {
            continue;
        };
        let first = &ctx.seats[si].first;
        if let Some(li) =
            jackpot::best_line(rules, first, pool).map_err(|e| RoundError::round(round, e))?
        {
            candidates.push((bi, li));
        }
    }
    let lines: Vec<usize> = candidates.iter().map(|c| c.1).collect();
    let p = jackpot::payout(rules, before, contributions, &lines)
        .map_err(|e| RoundError::round(round, e))?;
    let mut winners = Vec::with_capacity(candidates.len());
    for (k, &(bi, li)) in candidates.iter().enumerate() {
        let prize = p.prizes.get(k).copied().unwrap_or(0);
        winners.push((bi, prize, li));
        let line = rules.lines[li];
        ctx.adj.jackpot_wins.push(JackpotWin {
            bet_id: ctx.bets[bi].bet.id.clone(),
            seat: Some(ctx.bets[bi].seat),
            combination: line.combo.id().into(),
            prize_cents: prize,
            citation: if line.citation.starts_with("P1364") {
                line.citation.into()
            } else {
                ctx.c(cite::R43).into()
            },
        });
        if p.order_reading || p.shared_top {
            ctx.bets[bi].reading = Some(if p.order_reading {
                "13.14 order"
            } else {
                "13.14 rounding"
            });
        }
    }
    // Display (r.40, r.41): before the deal, the previous value or with the contributions;
    // afterwards, with the contributions or after the prizes.
    if let (Some(acc), Some(b)) = (&p.account, before) {
        let v0 = b as i128 * E4;
        let v1 = v0 + contributions;
        let v2 = acc.value_after_e4 as i128;
        let deal = ctx.deal_start;
        let displays = std::mem::take(&mut ctx.displays);
        for &(i, shown) in &displays {
            let ok = if deal.is_none_or(|d| i < d) {
                jackpot::display_matches(shown, v0) || jackpot::display_matches(shown, v1)
            } else {
                jackpot::display_matches(shown, v1) || jackpot::display_matches(shown, v2)
            };
            if !ok {
                let v = Violation::new(
                    "BJ_JACKPOT_DISPLAY_MISMATCH",
                    Severity::High,
                    ctx.c(cite::R40_41),
                    format!(
                        "the jackpot display shows {shown}; expected {} before the chips, {} after them{}",
                        v0 / E4,
                        v1 / E4,
                        if acc.prizes_cents > 0 { format!(", {} after the prizes", v2 / E4) } else { String::new() }
                    ),
                )
                .event(i);
                ctx.adj.violations.push(v);
            }
        }
        ctx.displays = displays;
    }
    ctx.adj.jackpot = p.account;
    Ok(Some(winners))
}

/// The readings behind disputed results: for each discrepancy on a bet whose due result rests
/// on a reading, a `BJ_WRONG_PAYOUT` finding marked for review.
pub fn review_disputed(ctx: &mut Ctx) {
    let c = ctx.c(cite::WRONG_PAYOUT);
    let mut extra = Vec::new();
    for d in &ctx.adj.discrepancies {
        if let Some(b) = ctx.bets.iter().find(|b| b.bet.id == d.bet_id)
            && let Some(r) = b.reading
        {
            extra.push(
                    Violation::new(
                        "BJ_WRONG_PAYOUT",
                        Severity::High,
                        c,
                        format!(
                            "bet `{}`: reported {} against {} due; the due result rests on reading {r} of the digest",
                            d.bet_id,
                            d.reported_net_cents.map_or("nothing".to_string(), |v| v.to_string()),
                            d.due_net_cents
                        ),
                    )
                    .bet(&d.bet_id)
                    .review(),
                );
        }
    }
    ctx.adj.violations.extend(extra);
}
