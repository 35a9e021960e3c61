//! Cussec rounds (P217/2007 T.I C.II S.III).
//!
//! The dome is covered once the previous round's prizes are paid (r.11), the lever pressed
//! three times in a row (r.4), betting opens; 1 to 6 players place 1 to 4 bets each of every
//! type of r.7 (small, big, single, two-dice combination, double, triple, any triple, total
//! 4-17) in whole chips of the table minimum, within the table maximum; "Nada mais. Vou abrir."
//! (r.5); the dice are read. About 1 round in 200 the dice are stacked: void, the shaking is
//! repeated (cover, three presses) and a player may change or withdraw a bet before the new
//! call (r.6). Losing bets are collected, then the prizes paid.

use rules_core::{
    Cents, EventKind, Id, Options, Outcome, Round, SimError, SimRng, TableConfig, honest_settlement,
};

use super::{Ctx, Mistake, new_bet, not_applicable, report};
use crate::cussec::{CussecConfig, CussecState};

/// Bet types with their relative frequency.
const KINDS: [(&str, u64); 8] = [
    ("small", 15),
    ("big", 15),
    ("single", 12),
    ("two_dice_combo", 8),
    ("double", 6),
    ("triple", 3),
    ("any_triple", 4),
    ("total", 12),
];

struct Placed {
    id: Id,
    kind: &'static str,
    seat: u8,
    amount: Cents,
}

fn pick_kind(rng: &mut SimRng) -> &'static str {
    let total: u64 = KINDS.iter().map(|k| k.1).sum();
    let mut r = rng.below(total);
    for (k, w) in KINDS {
        if r < w {
            return k;
        }
        r -= w;
    }
    "small"
}

fn selection(rng: &mut SimRng, kind: &str) -> Vec<u8> {
    match kind {
        "single" | "double" | "triple" => vec![rng.die()],
        "two_dice_combo" => {
            let a = rng.die();
            let mut b = rng.die();
            while b == a {
                b = rng.die();
            }
            vec![a.min(b), a.max(b)]
        }
        "total" => vec![rng.range(4, 17) as u8],
        _ => Vec::new(),
    }
}

/// One bet of `kind` for `seat`, in whole chips of the minimum within the maximum.
fn bet(c: &mut Ctx<'_>, table: &TableConfig, seat: u8, kind: &'static str) -> Option<Placed> {
    let min = table.min_bet_cents.unwrap_or(100);
    let max = table.max_bet_cents.unwrap_or(min * 100);
    let mults: &[i64] = match kind {
        "small" | "big" => &[1, 1, 2, 2, 3, 5, 10],
        "triple" | "total" | "double" => &[1, 1, 1, 2],
        _ => &[1, 1, 2, 3],
    };
    let amount = c.amount(min, min, max, mults)?;
    let sel = selection(c.rng, kind);
    let id = c.bet_id();
    c.push(EventKind::Bet(
        new_bet(&id, kind, amount, seat).selection(&sel),
    ));
    Some(Placed {
        id,
        kind,
        seat,
        amount,
    })
}

fn shake(c: &mut Ctx<'_>, presses: u32) {
    c.procedure("dome_covered", None);
    c.wait(1_000, 2_000);
    for _ in 0..presses {
        c.procedure("lever_press", None);
        c.wait(400, 900);
    }
    c.procedure("betting_open", None);
    c.wait(1_000, 3_000);
}

pub(crate) fn simulate(
    table: &TableConfig,
    cfg: &CussecConfig,
    st: &CussecState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    m: Option<Mistake>,
) -> Result<Round, SimError> {
    // The dome is covered only after the previous round's prizes are paid (r.11).
    let t0 = match st.last_payment_at_ms {
        Some(p) => start_ms.max(p.saturating_add(1_000)),
        None => start_ms,
    };
    let mut c = Ctx::new(rng, &round_id, t0);
    // The outcome, drawn before anything else so that the dice do not depend on the bets.
    let mut dice = [c.rng.die(), c.rng.die(), c.rng.die()];
    let stacked = c.rng.chance(1, 200);
    if m == Some(Mistake::SmallPaidOnTriple) {
        let f = if c.rng.chance(1, 2) { 2 } else { 3 };
        dice = [f, f, f];
    }

    // Three presses of the lever before betting opens (r.4).
    let presses = if m == Some(Mistake::LeverNotThreeTimes) {
        2
    } else {
        3
    };
    shake(&mut c, presses);
    let seats = table.seats.unwrap_or(10).max(1);
    let n_players = c.rng.range(1, u64::from(seats).min(6)) as usize;
    let mut all: Vec<u8> = (1..=seats).collect();
    c.rng.shuffle(&mut all);
    let mut players: Vec<u8> = all[..n_players].to_vec();
    players.sort_unstable();
    let mut queue: Vec<u8> = Vec::new();
    for p in &players {
        let n = c.rng.range(1, 4) as usize;
        queue.extend(std::iter::repeat_n(*p, n));
    }
    c.rng.shuffle(&mut queue);
    let mut placed: Vec<Placed> = Vec::new();
    for seat in queue {
        let kind = pick_kind(c.rng);
        if let Some(b) = bet(&mut c, table, seat, kind) {
            placed.push(b);
            c.wait(500, 3_000);
        }
    }
    if m == Some(Mistake::SmallPaidOnTriple) && !placed.iter().any(|p| p.kind == "small") {
        let seat = players[0];
        if let Some(b) = bet(&mut c, table, seat, "small") {
            placed.push(b);
            c.wait(500, 3_000);
        }
    }
    c.wait(2_000, 6_000);
    // "Nada mais. Vou abrir." (r.5).
    c.push(EventKind::NoMoreBets);
    let mut withdrawn: Vec<Id> = Vec::new();
    if stacked {
        // Stacked dice: void, shake again; bets may be kept, changed or withdrawn (r.6).
        c.wait(2_000, 4_000);
        c.push(EventKind::Void {
            reason: "stacked_dice".into(),
        });
        c.wait(3_000, 6_000);
        shake(&mut c, 3);
        if !placed.is_empty() && c.rng.chance(1, 2) {
            let k = c.rng.below(placed.len() as u64) as usize;
            let min = table.min_bet_cents.unwrap_or(100);
            let max = table.max_bet_cents.unwrap_or(min * 100);
            let keep = m == Some(Mistake::SmallPaidOnTriple) && placed[k].kind == "small";
            if (keep || c.rng.chance(1, 2)) && placed[k].amount + min <= max {
                placed[k].amount += min;
                c.push(EventKind::BetChanged {
                    bet_id: placed[k].id.clone(),
                    amount_cents: placed[k].amount,
                });
            } else if !keep {
                withdrawn.push(placed[k].id.clone());
                c.push(EventKind::BetWithdrawn {
                    bet_id: placed[k].id.clone(),
                });
            }
            c.wait(1_000, 3_000);
        }
        c.wait(2_000, 6_000);
        c.push(EventKind::NoMoreBets);
    }
    if m == Some(Mistake::LateBet) {
        c.wait(300, 1_500);
        let seat = players[c.rng.below(players.len() as u64) as usize];
        let kind = pick_kind(c.rng);
        let b = bet(&mut c, table, seat, kind)
            .ok_or_else(|| not_applicable(m, "no bet fits the table limits"))?;
        placed.push(b);
    }
    c.wait(2_000, 4_000);
    c.push(EventKind::Dice {
        dice: dice.to_vec(),
        chosen_from: None,
    });

    let round = c.take_round(t0);
    let adj = crate::cussec::adjudicate(cfg, &mut st.clone(), &round, &Options::default())?;
    let mut settlement = honest_settlement(&adj);
    if m == Some(Mistake::SmallPaidOnTriple) {
        let b = placed
            .iter()
            .find(|p| p.kind == "small" && !withdrawn.contains(&p.id))
            .ok_or_else(|| not_applicable(m, "no small bet fits the table limits"))?;
        report(&mut settlement, &b.id, b.amount);
    }

    // Losing bets collected, then the prizes paid (r.10, r.11).
    let mut events = round.events;
    let mut t = c.t;
    let rng = c.rng;
    let losers: Vec<Id> = settlement
        .results
        .iter()
        .filter(|r| r.net_cents < 0)
        .map(|r| r.bet_id.clone())
        .collect();
    t += 3_000 + rng.below(3_000) as i64;
    if !losers.is_empty() {
        events.push(rules_core::RoundEvent::at(
            t,
            EventKind::Collect { bet_ids: losers },
        ));
        t += 2_000 + rng.below(3_000) as i64;
    }
    let mut winners: Vec<(u8, Id, Cents)> = settlement
        .results
        .iter()
        .filter(|r| r.net_cents > 0)
        .map(|r| {
            let seat = placed
                .iter()
                .find(|p| p.id == r.bet_id)
                .map_or(0, |p| p.seat);
            (seat, r.bet_id.clone(), r.net_cents)
        })
        .collect();
    winners.sort_by_key(|w| w.0);
    for (_, bet_id, amount_cents) in winners {
        events.push(rules_core::RoundEvent::at(
            t,
            EventKind::Pay {
                bet_id,
                amount_cents,
            },
        ));
        t += 1_500 + rng.below(2_500) as i64;
    }
    debug_assert!(adj.bets.iter().all(|b| b.outcome != Outcome::Open));
    Ok(Round {
        events,
        settlement: Some(settlement),
        ..round
    })
}
