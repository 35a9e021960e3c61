//! Settlement (P217/2007 T.I C.III S.II r.6, r.7, r.9, r.12, r.15, r.17-r.19; P461/2001).
//!
//! | situation | ante | second bet | rule |
//! |---|---|---|---|
//! | passed | −ante | — | r.17 |
//! | showed / uncovered his cards | −ante (forfeited) | −call if he had called (reading 10.13) | r.17 |
//! | bank does not qualify (no A+K, no pair) | +ante | 0, returned (reading 10.2) | r.18 |
//! | bank qualifies, player higher | +ante | + multiple of r.6 x call (reading 10.1) | r.6, r.18 |
//! | bank qualifies, player lower | −ante | −call | r.18 |
//! | tie | 0 | 0 | r.6, r.7 |
//! | void round (r.19) | 0 | 0 | r.19 |
//!
//! Jackpot bets: prize − chip, whatever the bank (r.9); awards to players who passed, lost or
//! forfeited are paid on their five cards (reading 10.7) and marked as resting on it.

use rules_core::{
    BetOutcome, Cents, Id, JackpotWin, Outcome, RoundError, Severity, Violation, VoidInfo,
};

use crate::cite;
use crate::deal::{Ctx, Kind};
use crate::eval::{self, Category};
use crate::jackpot::{self, E4};
use crate::paytable;

fn outcome(
    id: Id,
    seat: u8,
    stake: Cents,
    net: Cents,
    o: Outcome,
    reason: &'static str,
    citation: &'static str,
) -> BetOutcome {
    BetOutcome {
        bet_id: id,
        seat: Some(seat),
        stake_cents: stake,
        due_net_cents: net,
        outcome: o,
        reported_net_cents: None,
        reason: reason.into(),
        citation: citation.into(),
    }
}

const WIN_REASON: [&str; 10] = [
    "beats a qualifying bank with high cards: call paid 1 x",
    "beats a qualifying bank with one pair: call paid 1 x",
    "beats a qualifying bank with two pairs: call paid 2 x",
    "beats a qualifying bank with three of a kind: call paid 3 x",
    "beats a qualifying bank with a straight: call paid 4 x",
    "beats a qualifying bank with a flush: call paid 5 x",
    "beats a qualifying bank with a full house: call paid 7 x",
    "beats a qualifying bank with four of a kind: call paid 20 x",
    "beats a qualifying bank with a straight flush: call paid 50 x",
    "beats a qualifying bank with a royal flush: call paid 100 x",
];

pub fn settle(ctx: &mut Ctx, explain: bool) -> Result<(), RoundError> {
    let round = ctx.round;
    let declared = ctx.void_event.is_some() || round.settlement.as_ref().is_some_and(|s| s.void);
    let void = ctx.misdeal.is_some() || ctx.void_event.is_some();
    if let Some((i, why)) = ctx.misdeal.clone() {
        let v = Violation::new(
            "PSD_MISDEAL",
            Severity::Medium,
            ctx.c(cite::R19),
            format!("{why}: the whole round is annulled"),
        )
        .event(i);
        ctx.push(v);
        let settled = round
            .settlement
            .as_ref()
            .is_some_and(|s| !s.void && s.results.iter().any(|r| r.net_cents != 0))
            || (ctx.pays && !declared);
        if settled {
            let v = Violation::new(
                "PSD_VOID_ROUND_SETTLED",
                Severity::High,
                ctx.c(cite::R19),
                "a round annulled by a dealing error was settled",
            )
            .event(i);
            ctx.push(v);
        }
    }
    if void {
        ctx.adj.void = Some(VoidInfo {
            reason: if ctx.misdeal.is_some() {
                "dealing error".into()
            } else {
                "declared void by the table".into()
            },
            citation: ctx.c(cite::R19).into(),
        });
        let mut out = Vec::with_capacity(ctx.bets.len());
        for b in &ctx.bets {
            let o = if b.withdrawn {
                Outcome::Withdrawn
            } else {
                Outcome::Void
            };
            out.push(outcome(
                b.bet.id.clone(),
                b.seat,
                b.amount,
                0,
                o,
                "void round: every bet returned (jackpot chips too, reading 10.12)",
                ctx.c(cite::R19),
            ));
        }
        ctx.adj.bets = out;
        if let (Some(_), Some(before)) = (&ctx.cfg.jackpot, round.jackpot_before_cents) {
            ctx.adj.jackpot = Some(rules_core::JackpotAccount {
                value_before_cents: before,
                contributions_e4: 0,
                prizes_cents: 0,
                reset: false,
                value_after_e4: before.saturating_mul(10_000),
            });
        }
        return Ok(());
    }
    if ctx.deal_start.is_none()
        && ctx
            .bets
            .iter()
            .any(|b| !b.withdrawn && b.kind != Kind::Jackpot)
    {
        return Err(RoundError::round(
            round,
            "the round cannot be settled: no cards were dealt",
        ));
    }
    let dealer = eval::rank(&ctx.dealer);
    let qualifies = eval::qualifies(&dealer);
    let jp = price_jackpot(ctx)?;
    let mut out = Vec::with_capacity(ctx.bets.len());
    let mut bank_paid: Cents = 0;
    for bi in 0..ctx.bets.len() {
        let b = &ctx.bets[bi];
        let (id, seat, amount) = (b.bet.id.clone(), b.seat, b.amount);
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
        let si = ctx.seat_index(seat);
        match b.kind {
            Kind::Jackpot => {
                if !b.valid {
                    out.push(outcome(
                        id,
                        seat,
                        amount,
                        0,
                        Outcome::Withdrawn,
                        "not accepted as a jackpot bet: chip returned",
                        ctx.c(cite::R16),
                    ));
                    continue;
                }
                match jp.iter().find(|w| w.0 == bi) {
                    Some(&(_, prize)) => out.push(outcome(
                        id,
                        seat,
                        amount,
                        prize - amount,
                        Outcome::Won,
                        "jackpot combination: prize, the chip is not returned",
                        ctx.c(cite::R9),
                    )),
                    None => out.push(outcome(
                        id,
                        seat,
                        amount,
                        -amount,
                        Outcome::Lost,
                        "no jackpot combination",
                        ctx.c(cite::R9),
                    )),
                }
            }
            Kind::Ante | Kind::Call => {
                let Some(si) = si else { continue };
                let s = &ctx.seats[si];
                let is_call = b.kind == Kind::Call;
                if is_call && !b.valid {
                    out.push(outcome(
                        id,
                        seat,
                        amount,
                        0,
                        Outcome::Withdrawn,
                        "call after a pass: refused, passing is irreversible",
                        ctx.c(cite::R17),
                    ));
                    continue;
                }
                if s.forfeited.is_some() {
                    let reading = is_call.then_some("10.13");
                    ctx.bets[bi].reading = reading;
                    out.push(outcome(
                        id,
                        seat,
                        amount,
                        -amount,
                        Outcome::Forfeited,
                        "cards shown or uncovered: the bet is lost",
                        ctx.c(cite::R17),
                    ));
                    continue;
                }
                if s.passed || (!is_call && s.call.is_none()) {
                    if !s.passed {
                        return Err(RoundError::round(
                            round,
                            format!("seat {seat} neither called nor passed"),
                        ));
                    }
                    out.push(outcome(
                        id,
                        seat,
                        amount,
                        -amount,
                        Outcome::Lost,
                        "passed: the ante is lost",
                        ctx.c(cite::R17),
                    ));
                    continue;
                }
                if !qualifies {
                    if is_call {
                        out.push(outcome(
                            id,
                            seat,
                            amount,
                            0,
                            Outcome::Push,
                            "the bank does not qualify: the second bet is returned",
                            ctx.c(cite::R18),
                        ));
                    } else {
                        bank_paid = bank_paid.saturating_add(amount);
                        out.push(outcome(
                            id,
                            seat,
                            amount,
                            amount,
                            Outcome::Won,
                            "the bank does not qualify (no ace and king): ante paid 1 to 1",
                            ctx.c(cite::R18),
                        ));
                    }
                    continue;
                }
                let player = eval::rank(&s.cards);
                let c = eval::compare_with(&player, &dealer, ctx.cfg.suit_tiebreak);
                if c.reading.is_some() {
                    ctx.bets[bi].reading = c.reading;
                }
                let (net, o, reason, cit) = match c.ordering {
                    std::cmp::Ordering::Greater if is_call => {
                        let m = paytable::multiple(player.category);
                        (
                            amount.saturating_mul(m),
                            Outcome::Won,
                            WIN_REASON[player.category as usize],
                            ctx.c(cite::R6_18),
                        )
                    }
                    std::cmp::Ordering::Greater => (
                        amount,
                        Outcome::Won,
                        "beats a qualifying bank: ante paid 1 to 1",
                        ctx.c(cite::R18),
                    ),
                    std::cmp::Ordering::Less => (
                        -amount,
                        Outcome::Lost,
                        "lower than the qualifying bank",
                        ctx.c(cite::R18),
                    ),
                    std::cmp::Ordering::Equal => (
                        0,
                        Outcome::Push,
                        "tie with the bank: bets kept, no prize",
                        ctx.c(cite::R7),
                    ),
                };
                if net > 0 {
                    bank_paid = bank_paid.saturating_add(net);
                }
                out.push(outcome(id, seat, amount, net, o, reason, cit));
            }
        }
    }
    ctx.adj.bets = out;
    // r.17: a passed ante is lost ("perdem o valor correspondente à aposta inicial, que é
    // retirado pelo pagador"). An ante reported paid or returned after a pass is a payout error
    // (the PSD_WRONG_PAYOUT discrepancy of `reconcile`), not a reversed pass: PSD_PASS_REVERSED
    // is a decision taken back (a call after passing), flagged in `deal`.
    // r.15: the bank's maximum prizes per coup (per coup or per player is unclear: 10.15).
    if let Some(cap) = ctx.cfg.prize_cap
        && bank_paid > cap
    {
        let v = Violation::new(
            "PSD_PRIZE_CAP_EXCEEDED",
            Severity::Medium,
            ctx.c(cite::R15),
            format!("the bank pays {bank_paid} in this coup, above the approved maximum {cap}"),
        )
        .review();
        ctx.push(v);
    }
    if explain {
        explain_round(ctx, &dealer, qualifies);
    }
    Ok(())
}

/// Jackpot winners `(bet index, prize)`; fills `adj.jackpot(_wins)` and checks the display.
fn price_jackpot(ctx: &mut Ctx) -> Result<Vec<(usize, Cents)>, RoundError> {
    let Some(rules) = ctx.cfg.jackpot.as_ref() else {
        return Ok(Vec::new());
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
    let mut cands: Vec<(usize, usize)> = Vec::new();
    for (bi, b) in ctx.bets.iter().enumerate() {
        if b.kind != Kind::Jackpot || !b.valid || b.withdrawn {
            continue;
        }
        contributions += b.amount as i128 * rules.increment_bp as i128;
        let Some(si) = ctx.seat_index(b.seat) else {
            continue;
        };
        if ctx.seats[si].n != 5 {
            continue;
        }
        let cat = eval::rank(&ctx.seats[si].cards).category;
        if let Some(li) = rules.lines.iter().position(|l| l.category == cat) {
            cands.push((bi, li));
        }
    }
    let lines: Vec<usize> = cands.iter().map(|c| c.1).collect();
    let p = jackpot::payout(rules, ctx.cfg.regulation, before, contributions, &lines)
        .map_err(|e| RoundError::round(round, e))?;
    let mut winners = Vec::with_capacity(cands.len());
    for (k, &(bi, li)) in cands.iter().enumerate() {
        let prize = p.prizes.get(k).copied().unwrap_or(0);
        winners.push((bi, prize));
        let line = rules.lines[li];
        let seat = ctx.bets[bi].seat;
        ctx.adj.jackpot_wins.push(JackpotWin {
            bet_id: ctx.bets[bi].bet.id.clone(),
            seat: Some(seat),
            combination: line.category.id().into(),
            prize_cents: prize,
            citation: line.citation.into(),
        });
        let s = ctx.seat_index(seat).map(|s| &ctx.seats[s]);
        let out_of_game = s.is_some_and(|s| s.passed || s.forfeited.is_some());
        let reading = if out_of_game {
            Some("10.7")
        } else if p.order_reading {
            Some("10.10")
        } else if p.divided_fixed {
            Some("10.11")
        } else {
            None
        };
        ctx.bets[bi].reading = reading;
    }
    if let (Some(acc), Some(b)) = (&p.account, before) {
        let v0 = b as i128 * E4;
        let v1 = v0 + contributions;
        let v2 = acc.value_after_e4 as i128;
        for k in 0..ctx.displays.len() {
            let (i, shown) = ctx.displays[k];
            let ok = if ctx.deal_start.is_none_or(|d| i < d) {
                jackpot::display_matches(shown, v0) || jackpot::display_matches(shown, v1)
            } else {
                jackpot::display_matches(shown, v1) || jackpot::display_matches(shown, v2)
            };
            if !ok {
                let v = Violation::new(
                    "PSD_JACKPOT_DISPLAY_MISMATCH",
                    Severity::High,
                    ctx.c(cite::R3_4),
                    format!("the jackpot display shows {shown}; expected {} before the chips or {} after them", v0 / E4, v1 / E4),
                )
                .event(i);
                ctx.push(v);
            }
        }
    }
    ctx.adj.jackpot = p.account;
    Ok(winners)
}

/// Disputed results resting on a reading are repeated as `PSD_WRONG_PAYOUT` findings for
/// review.
pub fn review_disputed(ctx: &mut Ctx) {
    let c = ctx.c(cite::WRONG_PAYOUT);
    let mut extra = Vec::new();
    for d in &ctx.adj.discrepancies {
        if let Some(r) = ctx
            .bets
            .iter()
            .find(|b| b.bet.id == d.bet_id)
            .and_then(|b| b.reading)
        {
            extra.push(
                Violation::new(
                    "PSD_WRONG_PAYOUT",
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

fn cards(c: &[rules_core::Card]) -> String {
    c.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn explain_round(ctx: &mut Ctx, dealer: &eval::Ranked, qualifies: bool) {
    let reg = ctx.cfg.regulation;
    let mut notes: Vec<(&'static str, String)> = vec![(
        cite::R6.get(reg),
        format!(
            "bank: {} = {}; {}",
            cards(&ctx.dealer),
            dealer.category.id(),
            if qualifies {
                "qualifies (an ace and a king or better)"
            } else {
                "does not qualify: each ante is paid 1 to 1, second bets returned"
            }
        ),
    )];
    for s in &ctx.seats {
        let r = eval::rank(&s.cards);
        notes.push((
            cite::R6.get(reg),
            format!(
                "seat {}: {} = {}{}{}",
                s.seat,
                cards(&s.cards[..(s.n as usize).min(5)]),
                r.category.id(),
                if s.passed { ", passed (r.17)" } else { "" },
                if s.forfeited.is_some() {
                    ", cards shown: bet forfeited (r.17)"
                } else {
                    ""
                }
            ),
        ));
    }
    for b in &ctx.adj.bets {
        let c: &'static str = match &b.citation {
            std::borrow::Cow::Borrowed(s) => s,
            std::borrow::Cow::Owned(_) => rules_core::LEDGER_CONVENTION,
        };
        notes.push((
            c,
            format!(
                "bet `{}`: {} on {}: {:+}",
                b.bet_id, b.reason, b.stake_cents, b.due_net_cents
            ),
        ));
    }
    for w in &ctx.adj.jackpot_wins {
        notes.push((
            cite::R12.get(reg),
            format!(
                "jackpot: bet `{}` {} wins {}",
                w.bet_id, w.combination, w.prize_cents
            ),
        ));
    }
    for b in &ctx.bets {
        if let Some(r) = b.reading {
            notes.push((
                cite::WRONG_PAYOUT.get(reg),
                format!("bet `{}` rests on reading {r} of the digest", b.bet.id),
            ));
        }
    }
    let _ = Category::HighCard;
    for (c, t) in notes {
        ctx.adj.note(c, t);
    }
}
