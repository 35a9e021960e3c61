//! Craps rounds (P217/2007 T.I C.II S.II).
//!
//! A round is 1 to 3 throws by the shooter, two dice chosen from five (r.2, r.4). Before each
//! throw the round's players (the shooter and up to four others) bet by the state of the
//! table: pass line and don't pass on a come-out only (note C5), come and don't come only once
//! a point is established (r.10.3, r.10.4), odds only on their own pass / don't pass bet while
//! the point stands or on a come / don't come bet that has moved to a number, never above it
//! (r.11.1; pass side in €5 steps, don't side in €6 steps so the lay payouts are whole cents),
//! place and place-to-lose bets in whole multiples of their minimums (r.12), field, big 6 / 8,
//! hardways, under / over 7 and the one-throw propositions any time; no player doubles a
//! standing number bet. The shooter always has a bet (r.5). After each throw the stickman
//! announces it (r.13.3), the losing bets it decided are collected and the winners paid. A
//! seven-out ends the round and the dice pass to the next seat before the next throw (r.8(b)).
//! About 1 throw in 150 is void (a die off the table, replaced at once, or a short throw, r.7)
//! and thrown again. Bets not decided stay on the table in the state and are respected by the
//! following rounds.

use std::collections::BTreeSet;

use rules_core::{
    Adjudication, Cents, EventKind, Id, Options, Outcome, Round, SimError, SimRng, TableConfig,
    honest_settlement,
};

use super::{Ctx, Mistake, new_bet, not_applicable, player_id, report, two_dice_for};
use crate::OpenBet;
use crate::craps::{CrapsConfig, CrapsState, DontOdds};

const POINTS: [u8; 6] = [4, 5, 6, 8, 9, 10];

/// A bet placed this round, not yet seen by a throw.
struct Pending {
    kind: &'static str,
    seat: u8,
    number: Option<u8>,
    on_bet: Option<Id>,
}

/// What is on the table before a throw.
struct Table<'a> {
    cfg: &'a CrapsConfig,
    min: Cents,
    max: Cents,
    point: Option<u8>,
    open: Vec<OpenBet>,
    pending: Vec<Pending>,
}

impl Table<'_> {
    fn holds(&self, seat: u8, kind: &str, number: Option<u8>) -> bool {
        let p = player_id(seat);
        self.open.iter().any(|o| {
            o.player.as_ref() == Some(&p)
                && o.bet_type == kind
                && (number.is_none() || o.number == number)
        }) || self
            .pending
            .iter()
            .any(|b| b.seat == seat && b.kind == kind && (number.is_none() || b.number == number))
    }

    fn has_any_bet(&self, seat: u8) -> bool {
        let p = player_id(seat);
        self.open.iter().any(|o| o.player.as_ref() == Some(&p))
            || self.pending.iter().any(|b| b.seat == seat)
    }

    fn has_odds(&self, base: &Id) -> bool {
        self.open.iter().any(|o| o.on_bet.as_ref() == Some(base))
            || self.pending.iter().any(|b| b.on_bet.as_ref() == Some(base))
    }

    /// The player's bets that may take odds now (r.11.1), with their stake and side.
    fn odds_bases(&self, seat: u8) -> Vec<(Id, Cents, bool)> {
        let p = player_id(seat);
        self.open
            .iter()
            .filter(|o| o.player.as_ref() == Some(&p) && !self.has_odds(&o.id))
            .filter(|o| match o.bet_type.as_str() {
                "pass_line" | "dont_pass" => self.point.is_some(),
                "come" | "dont_come" => o.number.is_some(),
                _ => false,
            })
            .map(|o| (o.id.clone(), o.stake_cents, o.bet_type.starts_with("dont")))
            .collect()
    }

    fn number_min(&self, kind: &str, n: u8) -> Cents {
        let i = POINTS.iter().position(|p| *p == n).unwrap_or(0);
        let v = if kind == "place" {
            self.cfg.place_min[i]
        } else {
            self.cfg.place_to_lose_min[i]
        };
        v.unwrap_or(self.min)
    }
}

/// Place a bet now.
fn place(
    c: &mut Ctx<'_>,
    tb: &mut Table<'_>,
    seat: u8,
    kind: &'static str,
    number: Option<u8>,
    on_bet: Option<Id>,
    amount: Cents,
) -> Id {
    let id = c.bet_id();
    let mut b = new_bet(&id, kind, amount, seat);
    if let Some(n) = number {
        b = b.selection(&[n]);
    }
    if let Some(base) = &on_bet {
        b = b.on_bet(base);
    }
    c.push(EventKind::Bet(b));
    tb.pending.push(Pending {
        kind,
        seat,
        number,
        on_bet,
    });
    c.wait(800, 3_000);
    id
}

/// Bets a player holds at most one of: the one-throw propositions and the standing ones.
const PROPS: [(&str, u64); 15] = [
    ("field", 8),
    ("any_craps", 3),
    ("any_seven", 3),
    ("total_2", 1),
    ("total_3", 1),
    ("total_11", 2),
    ("total_12", 1),
    ("under_7", 2),
    ("over_7", 2),
    ("big_6", 2),
    ("big_8", 2),
    ("hard_4", 2),
    ("hard_6", 3),
    ("hard_8", 3),
    ("hard_10", 2),
];

/// One legal bet for `seat` by the state of the table, or none.
fn random_bet(c: &mut Ctx<'_>, tb: &mut Table<'_>, seat: u8) {
    let come_out = tb.point.is_none();
    let mut cands: Vec<(&'static str, u64)> = Vec::with_capacity(24);
    if come_out {
        if !tb.holds(seat, "pass_line", None) {
            cands.push(("pass_line", 30));
        }
        if !tb.holds(seat, "dont_pass", None) {
            cands.push(("dont_pass", 6));
        }
    } else {
        cands.push(("come", 14));
        cands.push(("dont_come", 4));
    }
    let bases = tb.odds_bases(seat);
    if !bases.is_empty() {
        cands.push(("odds", 25));
    }
    for (k, w) in PROPS.iter() {
        if !tb.holds(seat, k, None) {
            cands.push((k, *w));
        }
    }
    cands.push(("place", 12));
    cands.push(("place_to_lose", 3));
    let total: u64 = cands.iter().map(|c| c.1).sum();
    let mut r = c.rng.below(total);
    let mut kind = "field";
    for (k, w) in &cands {
        if r < *w {
            kind = k;
            break;
        }
        r -= w;
    }
    let (min, max) = (tb.min, tb.max);
    match kind {
        "pass_line" | "dont_pass" | "come" | "dont_come" => {
            if let Some(a) = c.amount(min, min, max, &[1, 1, 2, 2, 3, 4, 5, 10]) {
                place(c, tb, seat, kind, None, None, a);
            }
        }
        "odds" => {
            let (base, stake, dont) = bases[c.rng.below(bases.len() as u64) as usize].clone();
            // Not above the base bet (r.11.1); whole cents at 6:5, 3:2 and the lay 5:6, 2:3.
            let step = if dont && tb.cfg.dont_odds == DontOdds::Lay {
                600
            } else {
                500
            };
            if stake >= step {
                let k = c.rng.range(1, (stake / step) as u64) as i64;
                place(c, tb, seat, "odds", None, Some(base), k * step);
            }
        }
        "place" | "place_to_lose" => {
            let n = POINTS[c.rng.below(6) as usize];
            if !tb.holds(seat, kind, Some(n)) {
                let unit = tb.number_min(kind, n);
                let mults: &[i64] = if kind == "place" {
                    &[1, 1, 2, 3]
                } else {
                    &[1, 1, 2]
                };
                if let Some(a) = c.amount(unit, unit, max, mults) {
                    place(c, tb, seat, kind, Some(n), None, a);
                }
            }
        }
        _ => {
            if let Some(a) = c.amount(min, min, max, &[1, 1, 1, 2]) {
                place(c, tb, seat, kind, None, None, a);
            }
        }
    }
}

/// What the mistake needs at a given betting window.
struct Plan {
    /// Forced totals, throw by throw (`None`: the dice decide).
    throws: Vec<Option<u8>>,
    /// The mistake's own base bet (pass line or come), placed in window 0.
    base: Option<&'static str>,
    base_id: Option<Id>,
    /// Odds on the base in window 1: over the flat, or to be paid 1 to 1.
    odds_id: Option<Id>,
    /// Keep throwing after a seven-out (the shooter keeps the dice).
    continue_after_seven_out: bool,
    /// Window in which to place a come bet on a come-out.
    come_out_come: Option<usize>,
}

/// The learnt state after the throws so far.
fn learn(
    cfg: &CrapsConfig,
    st: &CrapsState,
    c: &mut Ctx<'_>,
    opened: i64,
) -> Result<(Adjudication, CrapsState), SimError> {
    let mut s = st.clone();
    let a = c.with_round(opened, |r| {
        crate::craps::adjudicate(cfg, &mut s, r, &Options::default())
    })?;
    Ok((a, s))
}

fn announcement(point: Option<u8>, t: u8) -> String {
    match point {
        None if t == 7 || t == 11 => format!("{t}, winner"),
        None if matches!(t, 2 | 3 | 12) => format!("{t}, craps"),
        None => format!("{t}, the point is {t}"),
        Some(p) if t == p => format!("{t}, the point is made, same shooter"),
        Some(_) if t == 7 => "7 out, new shooter".to_string(),
        Some(p) => format!("{t}, the point is {p}"),
    }
}

pub(crate) fn simulate(
    table: &TableConfig,
    cfg: &CrapsConfig,
    st: &CrapsState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    m: Option<Mistake>,
) -> Result<Round, SimError> {
    let t0 = start_ms;
    let mut c = Ctx::new(rng, &round_id, t0);
    let seats = table.seats.unwrap_or(12).clamp(2, 30);
    let min = table.min_bet_cents.unwrap_or(500);
    let max = table.max_bet_cents.unwrap_or(min * 400);
    let mut tb = Table {
        cfg,
        min,
        max,
        point: st.point,
        open: st.open_bets.clone(),
        pending: Vec::new(),
    };

    // The shooter: after a seven-out (or at a new table) the dice go to the next seat (r.5,
    // r.8(b)).
    let current = st
        .shooter
        .as_ref()
        .map(|s| s.seat.unwrap_or(1))
        .unwrap_or(0);
    let sevened = st.seven_out_by.is_some();
    let keep = m == Some(Mistake::ShooterNotChanged) && sevened && st.seven_out_by == st.shooter;
    let shooter = if (st.shooter.is_none() || sevened) && !keep {
        let next = if current == 0 {
            c.rng.range(1, u64::from(seats)) as u8
        } else {
            current % seats + 1
        };
        c.push(EventKind::Role {
            role: "shooter".into(),
            seat: Some(next),
            player: Some(player_id(next)),
        });
        c.wait(2_000, 5_000);
        next
    } else {
        current.max(1)
    };
    let mut players = vec![shooter];
    for _ in 0..c.rng.range(0, 4) {
        let s = c.rng.range(1, u64::from(seats)) as u8;
        if !players.contains(&s) {
            players.push(s);
        }
    }

    // The throws, and what the mistake needs.
    let n = c.rng.range(1, 3) as usize;
    let mut plan = Plan {
        throws: vec![None; n],
        base: None,
        base_id: None,
        odds_id: None,
        continue_after_seven_out: false,
        come_out_come: None,
    };
    let other_than = |rng: &mut SimRng, from: &[u8], p: Option<u8>| -> u8 {
        let v: Vec<u8> = from.iter().copied().filter(|n| Some(*n) != p).collect();
        v[rng.below(v.len() as u64) as usize]
    };
    match m {
        Some(Mistake::OddsPaidEvenMoney) | Some(Mistake::OddsOverFlat) => {
            let from: &[u8] = if m == Some(Mistake::OddsPaidEvenMoney) {
                &[6, 8]
            } else {
                &POINTS
            };
            let num = other_than(c.rng, from, st.point);
            plan.base = Some(if st.point.is_none() {
                "pass_line"
            } else {
                "come"
            });
            plan.throws = if m == Some(Mistake::OddsPaidEvenMoney) {
                vec![Some(num), Some(num)]
            } else {
                vec![Some(num), None]
            };
        }
        Some(Mistake::ShooterNotChanged) => {
            plan.continue_after_seven_out = true;
            if !keep {
                plan.throws = match st.point {
                    None => vec![Some(other_than(c.rng, &POINTS, None)), Some(7), None],
                    Some(_) => vec![Some(7), None],
                };
            }
        }
        Some(Mistake::ComeBeforePoint) => match st.point {
            None => plan.come_out_come = Some(0),
            Some(p) => {
                plan.throws = vec![Some(p), None];
                plan.come_out_come = Some(1);
            }
        },
        _ => {}
    }

    let mut decided: BTreeSet<Id> = BTreeSet::new();
    let mut last: Option<Adjudication> = None;
    let throws = plan.throws.clone();
    for (k, forced) in throws.iter().enumerate() {
        // The mistake's bets first (so that the players' own bets respect them).
        if k == 0
            && let Some(kind) = plan.base
        {
            let seat = if kind == "pass_line" {
                shooter
            } else {
                players[c.rng.below(players.len() as u64) as usize]
            };
            let a = 1_000 * c.rng.range(1, 2) as i64;
            plan.base_id = Some(place(&mut c, &mut tb, seat, kind, None, None, a));
        }
        if k == 1
            && let Some(base) = plan.base_id.clone()
        {
            let o = tb
                .open
                .iter()
                .find(|o| o.id == base)
                .ok_or_else(|| not_applicable(m, "the base bet did not stand"))?;
            let seat = o.seat.unwrap_or(shooter);
            let stake = o.stake_cents;
            let amount = if m == Some(Mistake::OddsOverFlat) {
                stake + 500
            } else {
                500 * c.rng.range(1, (stake / 500) as u64) as i64
            };
            plan.odds_id = Some(place(
                &mut c,
                &mut tb,
                seat,
                "odds",
                None,
                Some(base),
                amount,
            ));
        }
        if plan.come_out_come == Some(k) {
            let seat = players[c.rng.below(players.len() as u64) as usize];
            place(&mut c, &mut tb, seat, "come", None, None, min);
        }
        if k == 0 && m == Some(Mistake::PlaceNotMultipleOfMin) {
            let n = if c.rng.chance(1, 2) { 6 } else { 8 };
            let unit = match cfg.place_min[if n == 6 { 2 } else { 3 }] {
                Some(u) if u >= 2 => u,
                _ => {
                    return Err(not_applicable(
                        m,
                        "the table fixes no place minimum on 6 and 8 above one cent (r.12)",
                    ));
                }
            };
            let seat = players[c.rng.below(players.len() as u64) as usize];
            place(
                &mut c,
                &mut tb,
                seat,
                "place",
                Some(n),
                None,
                unit + unit / 2,
            );
        }
        // The players' bets.
        for &seat in &players.clone() {
            let nb = *c.rng.pick(&[0, 0, 1, 1, 1, 2]).unwrap_or(&1);
            for _ in 0..nb {
                random_bet(&mut c, &mut tb, seat);
            }
        }
        // The shooter has a bet (r.5).
        if !tb.has_any_bet(shooter) {
            if tb.point.is_none() {
                place(&mut c, &mut tb, shooter, "pass_line", None, None, min);
            } else {
                let n = if tb.holds(shooter, "place", Some(6)) {
                    8
                } else {
                    6
                };
                let unit = tb.number_min("place", n);
                place(&mut c, &mut tb, shooter, "place", Some(n), None, unit);
            }
        }
        c.wait(1_000, 3_000);
        c.push(EventKind::NoMoreBets);
        c.wait(3_000, 8_000);

        // The throw; a void one is thrown again (r.7).
        let total = loop {
            let d = match forced {
                Some(t) => two_dice_for(c.rng, *t),
                None => [c.rng.die(), c.rng.die()],
            };
            c.push(EventKind::Dice {
                dice: d.to_vec(),
                chosen_from: Some(5),
            });
            if forced.is_none() && c.rng.chance(1, 150) {
                c.wait(500, 1_500);
                if c.rng.chance(1, 2) {
                    c.push(EventKind::Void {
                        reason: "die_off_table".into(),
                    });
                    c.wait(5_000, 15_000);
                    c.procedure("die_replaced", None);
                } else {
                    c.push(EventKind::Void {
                        reason: "short_throw".into(),
                    });
                }
                c.wait(4_000, 8_000);
                continue;
            }
            break d[0] + d[1];
        };
        let before = tb.point;
        c.wait(1_000, 2_000);
        c.procedure("announcement", Some(announcement(before, total)));

        // What the throw decided: collect the losers, pay the winners.
        let (adj, after) = learn(cfg, st, &mut c, t0)?;
        let mut losers: Vec<Id> = Vec::new();
        let mut winners: Vec<(Id, Cents)> = Vec::new();
        for b in &adj.bets {
            if matches!(b.outcome, Outcome::Won | Outcome::Lost | Outcome::Push)
                && decided.insert(b.bet_id.clone())
            {
                if b.due_net_cents < 0 {
                    losers.push(b.bet_id.clone());
                } else if b.due_net_cents > 0 {
                    let mut net = b.due_net_cents;
                    if m == Some(Mistake::OddsPaidEvenMoney)
                        && plan.odds_id.as_ref() == Some(&b.bet_id)
                    {
                        net = b.stake_cents;
                    }
                    winners.push((b.bet_id.clone(), net));
                }
            }
        }
        c.wait(2_000, 4_000);
        if !losers.is_empty() {
            c.push(EventKind::Collect { bet_ids: losers });
            c.wait(2_000, 4_000);
        }
        for (bet_id, amount_cents) in winners {
            c.push(EventKind::Pay {
                bet_id,
                amount_cents,
            });
            c.wait(1_500, 3_000);
        }
        tb.point = after.point;
        tb.open = after.open_bets;
        tb.pending.clear();
        last = Some(adj);
        // A seven-out ends the round: the dice change hands (r.8(b)).
        if before.is_some() && total == 7 && !plan.continue_after_seven_out {
            break;
        }
    }

    let adj = last.ok_or_else(|| not_applicable(m, "no throw"))?;
    let mut settlement = honest_settlement(&adj);
    if m == Some(Mistake::OddsPaidEvenMoney) {
        let id = plan
            .odds_id
            .as_ref()
            .ok_or_else(|| not_applicable(m, "no odds"))?;
        let b = adj.bet(id).ok_or_else(|| not_applicable(m, "no odds"))?;
        report(&mut settlement, id, b.stake_cents);
    }
    let mut round = c.take_round(t0);
    round.settlement = Some(settlement);
    Ok(round)
}
