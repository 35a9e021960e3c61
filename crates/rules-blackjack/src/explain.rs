//! The rule-by-rule explanation (`Options::explain`): what a compliance officer reads on a
//! disputed hand. Built only on request.

use std::fmt::Write;

use rules_core::Card;

use crate::cite;
use crate::play::Ctx;

fn cards(c: &[Card]) -> String {
    let mut s = String::new();
    for (i, card) in c.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{card}");
    }
    s
}

pub fn explain(ctx: &mut Ctx) {
    let mut notes: Vec<(&'static str, String)> = Vec::new();
    let reg = ctx.cfg.regulation;
    notes.push((
        cite::R1.get(reg),
        format!(
            "{} table under {}: {} decks, {} seats, limits {}-{}",
            ctx.cfg.game,
            reg.as_str(),
            ctx.cfg.decks,
            ctx.cfg.seats,
            ctx.cfg.min.map_or("-".into(), |v| v.to_string()),
            ctx.cfg.max.map_or("-".into(), |v| v.to_string())
        ),
    ));
    for s in &ctx.seats {
        let lead = &ctx.bets[s.lead];
        notes.push((
            if lead.kind == crate::play::BetKind::Vacant {
                cite::R16.get(reg)
            } else {
                cite::R15.get(reg)
            },
            format!(
                "seat {}: decisions by the owner of bet `{}`{}",
                s.seat,
                lead.bet.id,
                if lead.kind == crate::play::BetKind::Vacant {
                    " (largest bet on a vacant seat)"
                } else {
                    " (titular)"
                }
            ),
        ));
        for h in s.hands.iter() {
            let mut flags = String::new();
            if h.is_blackjack() {
                flags.push_str(", blackjack");
            } else if h.split && crate::hand::is_ace_ten(&h.cards) {
                flags.push_str(", 21 on a split hand (not blackjack, r.20)");
            }
            if h.doubled {
                flags.push_str(", doubled (one card, r.29)");
            }
            if h.count.locked > 0 {
                flags.push_str(", ace locked at 1 (r.32)");
            }
            if h.split_aces {
                flags.push_str(", split ace (one card, r.26)");
            }
            if h.surrendered {
                flags.push_str(", surrendered (r.36)");
            }
            if h.even_money {
                flags.push_str(", even money (r.34)");
            }
            if crate::hand::special_prize(&h.cards).is_some() {
                flags.push_str(", special prize combination (r.35)");
            }
            let t = h.total();
            notes.push((
                cite::R6A.get(reg),
                format!(
                    "seat {} hand {}: {} = {}{}{}",
                    s.seat,
                    h.number,
                    cards(&h.cards),
                    t,
                    if t > 21 { " (over 21)" } else { "" },
                    flags
                ),
            ));
        }
        if ctx.cfg.jackpot.is_some() {
            notes.push((
                cite::R42_46.get(reg),
                format!(
                    "seat {}: first cards for the jackpot {}",
                    s.seat,
                    cards(&s.first)
                ),
            ));
        }
    }
    let d = &ctx.dealer;
    let dt = ctx.dealer_count.dealer_total();
    notes.push((
        cite::R19_6A.get(reg),
        format!(
            "dealer: {} = {}{}; {}",
            cards(d),
            dt,
            if ctx.dealer_blackjack() {
                " (blackjack)"
            } else if dt > 21 {
                " (over 21)"
            } else {
                ""
            },
            if d.len() < 2 {
                "the hand was not completed".to_string()
            } else if !ctx.live_hands() {
                "no player hand left whose result depends on the dealer's total (r.22)".to_string()
            } else if dt >= 17 {
                "stands: 17 or more, an ace counting 11 when that gives 17 to 21".to_string()
            } else {
                "stopped below 17".to_string()
            }
        ),
    ));
    for b in &ctx.adj.bets {
        notes.push((
            static_or(&b.citation),
            format!(
                "bet `{}`: {} on a stake of {}: {:+} ({})",
                b.bet_id,
                b.reason,
                b.stake_cents,
                b.due_net_cents,
                match b.outcome {
                    rules_core::Outcome::Won => "won",
                    rules_core::Outcome::Lost => "lost",
                    rules_core::Outcome::Push => "push",
                    rules_core::Outcome::Void => "void",
                    rules_core::Outcome::Withdrawn => "returned",
                    rules_core::Outcome::Open => "open",
                    rules_core::Outcome::Forfeited => "forfeited",
                }
            ),
        ));
    }
    if let Some(b) = ctx.bets.iter().find(|b| b.reading.is_some()) {
        notes.push((
            cite::WRONG_PAYOUT.get(reg),
            format!(
                "bet `{}` rests on reading {} of the digest",
                b.bet.id,
                b.reading.unwrap_or("")
            ),
        ));
    }
    for w in &ctx.adj.jackpot_wins {
        notes.push((
            static_or(&w.citation),
            format!(
                "jackpot: bet `{}` {} wins {}",
                w.bet_id, w.combination, w.prize_cents
            ),
        ));
    }
    if let Some(a) = &ctx.adj.jackpot {
        notes.push((
            cite::R50.get(reg),
            format!(
                "jackpot: {} before, +{}/10000 cents of contributions, {} paid, {}{}.{:04} after",
                a.value_before_cents,
                a.contributions_e4,
                a.prizes_cents,
                if a.reset { "reset, " } else { "" },
                a.value_after_e4 / 10_000,
                (a.value_after_e4 % 10_000).abs()
            ),
        ));
    }
    for (c, t) in notes {
        ctx.adj.note(c, t);
    }
}

/// Citations in outcomes are static strings in practice; keep them borrowed.
#[allow(clippy::ptr_arg)]
fn static_or(c: &std::borrow::Cow<'static, str>) -> &'static str {
    match c {
        std::borrow::Cow::Borrowed(s) => s,
        std::borrow::Cow::Owned(_) => rules_core::LEDGER_CONVENTION,
    }
}
