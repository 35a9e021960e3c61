//! Banca francesa rounds (P217/2007 T.I C.II S.I).
//!
//! The staff thrower is relieved and the table's three dice sets rotated every 50 minutes
//! (r.18, r.4). 1 to 5 players place 1 or 2 bets each (aces, small, big, small line, big line)
//! within the chance limits (r.17; line bets in whole €10 between twice the minimum and twice
//! the maximum, r.11); bets still open from earlier rounds stay. The dice are thrown until a
//! throw decides (3, 5-7, 14-16), at most four valid throws per round: what is not decided
//! carries over in the state (digest note B1), and more bets may come between throws. About 1
//! throw in 100 is void (r.7(b), r.8): it decides nothing, and after a die off the table,
//! damaged or soiled (r.8(b)) the set is replaced at once. After the deciding throw the losing
//! chips are collected starting with the aces, counter-clockwise (r.12), then the prizes paid
//! (r.15).

use rules_core::{
    Cents, EventKind, Id, Options, Round, RoundEvent, SimError, SimRng, TableConfig,
    honest_settlement,
};

use super::{Ctx, Mistake, ROTATE_AFTER_MS, new_bet, next_of, not_applicable, report};
use crate::banca_francesa::{BancaConfig, BancaState, Kind, chance_of};

const THROWERS: [&str; 3] = ["thrower-1", "thrower-2", "thrower-3"];
const SETS: [&str; 3] = ["terno-1", "terno-2", "terno-3"];

/// Void reasons (r.7(b), r.8), whether the throw shows dice, and whether the set must be
/// replaced (r.8(b)).
const VOIDS: [(&str, bool, bool); 7] = [
    ("foreign_object", true, false),
    ("not_flat", true, false),
    ("die_damaged", true, true),
    ("foreign_substance", true, true),
    ("die_off_table", false, true),
    ("not_all_dice_in_cup", false, false),
    ("die_in_cup", false, false),
];

struct BetView {
    id: Id,
    kind: Kind,
    seat: u8,
    /// Stake in play (line bets: half the whole €10 of the placed value, r.11).
    stake: Cents,
}

fn chance(k: Kind) -> Kind {
    match k {
        Kind::SmallLine => Kind::Small,
        Kind::BigLine => Kind::Big,
        k => k,
    }
}

/// Three dice showing `total`.
fn dice_for(rng: &mut SimRng, total: u8) -> [u8; 3] {
    loop {
        let d = [rng.die(), rng.die(), rng.die()];
        if d.iter().sum::<u8>() == total {
            return d;
        }
    }
}

/// Three dice bringing out chance `k`.
fn dice_for_chance(rng: &mut SimRng, k: Kind) -> [u8; 3] {
    match chance(k) {
        Kind::Aces => [1, 1, 1],
        Kind::Small => {
            let t = rng.range(5, 7) as u8;
            dice_for(rng, t)
        }
        _ => {
            let t = rng.range(14, 16) as u8;
            dice_for(rng, t)
        }
    }
}

/// A bet of `kind` for `seat` within the limits, placed now.
fn place(
    c: &mut Ctx<'_>,
    cfg: &BancaConfig,
    seat: u8,
    kind: Kind,
    bets: &mut Vec<BetView>,
) -> Option<()> {
    let idx = match chance(kind) {
        Kind::Aces => 0,
        Kind::Small => 1,
        _ => 2,
    };
    let (min, max) = cfg.limits[idx];
    let min = min.unwrap_or(500);
    let max = max.unwrap_or(min * 200);
    let (amount, stake) = match kind {
        Kind::SmallLine | Kind::BigLine => {
            // Whole €10 between twice the minimum and twice the maximum (r.11).
            let a = c.amount(1_000, 2 * min, 2 * max, &[1, 1, 2, 3, 5])?;
            (a, a / 2)
        }
        Kind::Aces => {
            let a = c.amount(min, min, max, &[1, 1, 1, 2, 3, 6])?;
            (a, a)
        }
        _ => {
            let a = c.amount(min, min, max, &[1, 1, 2, 2, 4, 5, 10, 20])?;
            (a, a)
        }
    };
    let id = c.bet_id();
    c.push(EventKind::Bet(new_bet(&id, kind.id(), amount, seat)));
    bets.push(BetView {
        id,
        kind,
        seat,
        stake,
    });
    c.wait(800, 3_500);
    Some(())
}

fn random_kind(rng: &mut SimRng) -> Kind {
    match rng.below(14) {
        0 | 1 => Kind::Aces,
        2..=6 => Kind::Small,
        7..=11 => Kind::Big,
        12 => Kind::SmallLine,
        _ => Kind::BigLine,
    }
}

/// New bettors: `n` players at seats that have not bet yet this round, 1 or 2 bets each on
/// different chances.
fn bettors(
    c: &mut Ctx<'_>,
    cfg: &BancaConfig,
    seats: u8,
    n: u64,
    bets: &mut Vec<BetView>,
    used: &mut Vec<u8>,
) {
    for _ in 0..n {
        let mut seat = c.rng.range(1, u64::from(seats)) as u8;
        for _ in 0..8 {
            if !used.contains(&seat) {
                break;
            }
            seat = c.rng.range(1, u64::from(seats)) as u8;
        }
        used.push(seat);
        let first = random_kind(c.rng);
        place(c, cfg, seat, first, bets);
        if c.rng.chance(1, 3) {
            let second = random_kind(c.rng);
            if chance(second) != chance(first) {
                place(c, cfg, seat, second, bets);
            }
        }
    }
}

pub(crate) fn simulate(
    table: &TableConfig,
    cfg: &BancaConfig,
    st: &BancaState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    m: Option<Mistake>,
) -> Result<Round, SimError> {
    let t0 = start_ms;
    let mut c = Ctx::new(rng, &round_id, t0);

    // The thrower stays at most an hour (r.18); the three sets rotate hourly (r.4), and a set
    // still owed a replacement is replaced (r.8(b)).
    let relieve = match (&st.thrower, st.thrower_since_ms) {
        (None, _) => true,
        (Some(_), Some(since)) => t0 - since >= ROTATE_AFTER_MS,
        (Some(_), None) => false,
    };
    if relieve {
        let next = next_of(&THROWERS, st.thrower.as_deref());
        c.push(EventKind::Role {
            role: "thrower".into(),
            seat: None,
            player: Some(next.into()),
        });
        c.wait(2_000, 5_000);
    }
    let mut set: String = match &st.dice_set {
        Some(s) => s.clone(),
        None => String::new(),
    };
    let rotate = match (&st.dice_set, st.dice_set_since_ms) {
        (None, _) => true,
        (Some(_), Some(since)) => t0 - since >= ROTATE_AFTER_MS,
        (Some(_), None) => false,
    };
    if rotate || st.replace_dice_set {
        set = next_of(&SETS, st.dice_set.as_deref()).to_string();
        c.procedure("dice_set", Some(set.clone()));
        c.wait(2_000, 5_000);
    }

    // Bets still standing from earlier rounds, then the new ones.
    let mut bets: Vec<BetView> = st
        .open_bets
        .iter()
        .filter_map(|o| {
            Some(BetView {
                id: o.id.clone(),
                kind: Kind::parse(&o.bet_type)?,
                seat: o.seat.unwrap_or(0),
                stake: o.stake_cents,
            })
        })
        .collect();
    let seats = table.seats.unwrap_or(12).max(1);
    let n = c.rng.range(if bets.is_empty() { 1 } else { 0 }, 5);
    let mut used: Vec<u8> = Vec::new();
    bettors(&mut c, cfg, seats, n, &mut bets, &mut used);

    // The mistake's bets, when the table's own do not offer it.
    let has = |bets: &[BetView], k: Kind| bets.iter().any(|b| chance(b.kind) == k);
    let mut need: Vec<Kind> = Vec::new();
    match m {
        Some(Mistake::AcesShortPaid) => need.push(Kind::Aces),
        Some(Mistake::CollectionNotFromAces) => need.extend([Kind::Aces, Kind::Small]),
        Some(Mistake::VoidThrowSettled) if bets.is_empty() => need.push(Kind::Small),
        _ => {}
    }
    for k in need {
        if !has(&bets, k) {
            let seat = c.rng.range(1, u64::from(seats)) as u8;
            place(&mut c, cfg, seat, k, &mut bets)
                .ok_or_else(|| not_applicable(m, "the bet it needs does not fit the limits"))?;
        }
    }

    // The throws.
    let max_valid = c.rng.range(1, 4);
    let mut valid = 0;
    let mut first = true;
    let mut decided = false;
    let mut settled_on_void: Option<usize> = None;
    while valid < max_valid && !decided {
        if !first && c.rng.chance(1, 3) {
            bettors(&mut c, cfg, seats, 1, &mut bets, &mut used);
        }
        c.wait(1_000, 3_000);
        c.push(EventKind::NoMoreBets);
        c.wait(4_000, 8_000);
        let forced: Option<[u8; 3]> = match m {
            _ if !first => None,
            Some(Mistake::AcesShortPaid) => Some([1, 1, 1]),
            Some(Mistake::CollectionNotFromAces) => {
                let t = c.rng.range(14, 16) as u8;
                Some(dice_for(c.rng, t))
            }
            Some(Mistake::DiceTouchedBeforeAnnounce) => {
                let k = random_kind(c.rng);
                Some(dice_for_chance(c.rng, k))
            }
            Some(Mistake::VoidThrowSettled) => {
                let k = c.rng.below(bets.len() as u64) as usize;
                settled_on_void = Some(k);
                Some(dice_for_chance(c.rng, bets[k].kind))
            }
            _ => None,
        };
        first = false;
        let dice = forced.unwrap_or_else(|| [c.rng.die(), c.rng.die(), c.rng.die()]);
        if m == Some(Mistake::VoidThrowSettled) {
            // A die touched a foreign object (r.8(a)): void; the casino settles it anyway.
            c.push(EventKind::Dice {
                dice: dice.to_vec(),
                chosen_from: None,
            });
            c.wait(1_000, 2_000);
            c.push(EventKind::Void {
                reason: "foreign_object".into(),
            });
            break;
        }
        if forced.is_none() && c.rng.chance(1, 100) {
            let (reason, shows, replace) = VOIDS[c.rng.below(VOIDS.len() as u64) as usize];
            if shows {
                c.push(EventKind::Dice {
                    dice: dice.to_vec(),
                    chosen_from: None,
                });
                c.wait(1_000, 2_000);
            }
            c.push(EventKind::Void {
                reason: reason.into(),
            });
            if replace {
                // The set is replaced at once (r.8(b)).
                c.wait(10_000, 30_000);
                set = next_of(&SETS, Some(&set)).to_string();
                c.procedure("dice_set", Some(set.clone()));
            }
            continue;
        }
        c.push(EventKind::Dice {
            dice: dice.to_vec(),
            chosen_from: None,
        });
        valid += 1;
        decided = chance_of(dice.iter().sum()).is_some();
        if decided && m == Some(Mistake::DiceTouchedBeforeAnnounce) {
            c.wait(500, 1_500);
            c.push(EventKind::Fault {
                code: "dice_touched_before_announce".into(),
                seat: None,
                detail: None,
            });
        }
    }

    let round = c.take_round(t0);
    let adj = crate::banca_francesa::adjudicate(cfg, &mut st.clone(), &round, &Options::default())?;
    let mut settlement = honest_settlement(&adj);
    match m {
        Some(Mistake::AcesShortPaid) => {
            let b = bets
                .iter()
                .find(|b| b.kind == Kind::Aces)
                .ok_or_else(|| not_applicable(m, "no aces bet"))?;
            report(&mut settlement, &b.id, b.stake * 60);
        }
        Some(Mistake::VoidThrowSettled) => {
            let b = settled_on_void
                .and_then(|k| bets.get(k))
                .ok_or_else(|| not_applicable(m, "no bet to settle"))?;
            let net = if b.kind == Kind::Aces {
                b.stake * 61
            } else {
                b.stake
            };
            report(&mut settlement, &b.id, net);
        }
        _ => {}
    }

    // Losing chips collected counter-clockwise starting with the aces (r.12), then the prizes
    // (r.15).
    let mut losers: Vec<&BetView> = bets
        .iter()
        .filter(|b| {
            settlement
                .results
                .iter()
                .any(|r| r.bet_id == b.id && r.net_cents < 0)
        })
        .collect();
    losers.sort_by_key(|b| (b.kind != Kind::Aces, std::cmp::Reverse(b.seat)));
    if m == Some(Mistake::CollectionNotFromAces) {
        losers.sort_by_key(|b| b.kind == Kind::Aces);
    }
    let winners: Vec<(Id, Cents)> = bets
        .iter()
        .filter_map(|b| {
            settlement
                .results
                .iter()
                .find(|r| r.bet_id == b.id && r.net_cents > 0)
                .map(|r| (b.id.clone(), r.net_cents))
        })
        .collect();
    let mut events = round.events;
    let mut t = c.t;
    let rng = c.rng;
    t += 2_000 + rng.below(3_000) as i64;
    if !losers.is_empty() {
        events.push(RoundEvent::at(
            t,
            EventKind::Collect {
                bet_ids: losers.iter().map(|b| b.id.clone()).collect(),
            },
        ));
        t += 2_000 + rng.below(3_000) as i64;
    }
    for (bet_id, amount_cents) in winners {
        events.push(RoundEvent::at(
            t,
            EventKind::Pay {
                bet_id,
                amount_cents,
            },
        ));
        t += 1_500 + rng.below(3_000) as i64;
    }
    Ok(Round {
        events,
        settlement: Some(settlement),
        ..round
    })
}
