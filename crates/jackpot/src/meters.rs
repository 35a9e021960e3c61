//! Meters (P217/2007 T.III r.9, r.14): readings, rollovers, RAM clears, games, faults, and the
//! contributions they credit to pools (r.3, r.4).
//!
//! # Rollover or going back?
//!
//! A meter is a cumulative counter that wraps at its `rollover` modulus `R` (0 = never wraps).
//! When a reading `v` is below the previous one `p`, two explanations fit the modular arithmetic
//! exactly: the meter advanced by `R − p + v` and wrapped, or it went back by `p − v`. The two add
//! up to `R`, so exactly one of them is below `R/2` (at exactly `R/2` neither is). The book takes
//! the smaller one, as serial-number arithmetic does (RFC 1982): the reading is a **rollover only
//! if the implied increase is below half the modulus** (strictly), otherwise the meter **went
//! back** (`SLOT_METER_DECREASED`). Why half: readings come far more often than a machine can
//! take in half its meter range (5 million euros on a 10-digit cents meter, 500,000 on an
//! 8-digit one), while a meter that goes back by less than half its range is exactly what a
//! tampered or reset meter looks like; a tie is resolved against the machine. A meter with
//! `R = 0`, or whose previous value is not below `R`, never wraps. A value at or above its own
//! `R` is malformed (an [`ApplyError`]).
//!
//! # What is credited
//!
//! Only *reliable* increases count: a meter's first reading is its baseline; a meter that went
//! back is re-baselined at its new value and credits nothing; a missing meter credits nothing
//! until it is read again (its next increase then covers the whole gap, so no wager is ever
//! lost or counted twice). At each reading every pool the machine feeds receives
//! `contribution_bp × Δcoin_in`, exactly, in 1/10,000 cent — except the first reading after the
//! machine joined a pool it already had readings for, whose increase includes play from before
//! the pool existed: that reading is the member's baseline for the pool.
//!
//! # Meter faults (r.9)
//!
//! "Sob pena de ficar interdita a sua abertura à exploração": a machine whose mandatory meters
//! are not in perfect working order may not be opened to play. A machine is meter-faulty from a
//! `MachineFault` whose code starts with `meter`, a reading missing a mandatory meter, or a meter
//! that went back, until `MachineRestored`. Bets recorded **after** the reading or event that
//! showed the fault (a game with a wager after it, or a Δcoin_in measured from a coin_in reading
//! taken at or after it) are `SLOT_PLAYED_WITH_FAULTY_METER` (Review), once per episode: r.9
//! forbids opening a machine to play once its meters are known to be unreliable, and the play
//! inside the very reading that shows the fault was played before anyone could know (that
//! reading's own finding, `SLOT_METER_MISSING` or `SLOT_METER_DECREASED`, is the breach). So
//! after a fault a reading showed, an increase measured from before that reading (coin_in was
//! missing from it) is not counted; after a fault declared by an event (`MachineFault`, a
//! memory error), the first reading's increase is, as the event told the casino at once. Bets
//! while out of service for another reason are `SLOT_PLAYED_OUT_OF_SERVICE` (Review).

use std::collections::BTreeMap;

use rules_core::Id;

use crate::amount::{E4, E4_PER_CENT, add, contribution_e4, round_div};
use crate::book::{Book, check_cents, check_id};
use crate::error::ApplyError;
use crate::event::{
    COIN_IN, COIN_OUT, EventCtx, GAMES_PLAYED, GamePlayed, HAND_PAID, JACKPOT, MANDATORY_METERS,
    MachineFault, MachineRestored, Meter, MeterReading, RamClear, TOTAL_DROP,
};
use crate::finding::{
    CONTRIBUTION_MISMATCH, Finding, METER_DECREASED, METER_GAME_MISMATCH, METER_MISSING,
    OBSERVED_RETURN_LOW, PLAYED_OUT_OF_SERVICE, PLAYED_WITH_FAULTY_METER,
    RAM_CLEAR_BEFORE_MISMATCH, RAM_CLEAR_UNDOCUMENTED,
};
use crate::significant::{HandPaid, ReadingFacts, reading_checks};
use crate::state::{
    EntryKind, GameTally, Machine, Mark, MeterDelta, MeterState, Pool, PoolEntry, Settings,
};

/// How one meter moved since its previous value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// No previous value: this reading is the meter's baseline.
    Baseline,
    /// Went up by this much.
    Forward(u64),
    /// Wrapped at its rollover; the increase is this much (below half the modulus).
    Rollover(u64),
    /// Went back (not a plausible rollover).
    Backward { from: u64, to: u64 },
}

impl Step {
    /// The reliable increase, if any.
    pub fn increase(self) -> Option<u64> {
        match self {
            Step::Forward(d) | Step::Rollover(d) => Some(d),
            Step::Baseline | Step::Backward { .. } => None,
        }
    }
}

/// Classify a new value of a meter against its previous value (see the module documentation).
pub fn classify(prev: Option<u64>, value: u64, rollover: u64) -> Step {
    let Some(p) = prev else {
        return Step::Baseline;
    };
    if value >= p {
        return Step::Forward(value.abs_diff(p));
    }
    if rollover == 0 || p >= rollover {
        return Step::Backward { from: p, to: value };
    }
    // p < R and v < p: the wrapped increase R − p + v is in 1 ..= R − 1.
    let wrapped = u128::from(rollover.abs_diff(p)).saturating_add(u128::from(value));
    if wrapped.saturating_mul(2) < u128::from(rollover) {
        Step::Rollover(u64::try_from(wrapped).unwrap_or(u64::MAX))
    } else {
        Step::Backward { from: p, to: value }
    }
}

/// Names unique and non-empty, values below their rollover.
fn validate_meters(field: &str, meters: &[Meter]) -> Result<(), ApplyError> {
    for (i, m) in meters.iter().enumerate() {
        if m.name.is_empty() {
            return Err(ApplyError::invalid(
                format!("{field}[{i}].name"),
                "must not be empty",
            ));
        }
        if m.rollover > 0 && m.value >= m.rollover {
            return Err(ApplyError::invalid(
                format!("{field}[{i}].value"),
                format!(
                    "meter `{}` reads {}, not below its rollover {}",
                    m.name, m.value, m.rollover
                ),
            ));
        }
        if meters.iter().take(i).any(|o| o.name == m.name) {
            return Err(ApplyError::invalid(
                format!("{field}[{i}].name"),
                format!("meter `{}` appears twice", m.name),
            ));
        }
    }
    Ok(())
}

/// Whether a reading is a plain reading or the "before" half of a RAM clear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Reading,
    RamBefore,
}

/// What a pool gets from one reading.
struct PoolPlan {
    pool: Id,
    /// Contribution credited (None: nothing to credit).
    credit: Option<(u64, E4)>,
    new_captive: E4,
    new_contributed: E4,
    new_by: E4,
    /// The contribution the book computed for the window since the previous reading, when it is
    /// comparable with what the machine reported.
    comparable: Option<E4>,
}

/// Everything a reading changes, computed before anything is changed.
struct ReadingPlan {
    steps: Vec<(usize, Step, Option<u64>)>,
    missing: Vec<&'static str>,
    delta: MeterDelta,
    coin_in_present: bool,
    pools: Vec<PoolPlan>,
    lifetime_in: i128,
    lifetime_won: i128,
}

fn plan_reading(
    machine: &Machine,
    pools: &BTreeMap<Id, Pool>,
    meters: &[Meter],
    ctx: EventCtx,
) -> Result<ReadingPlan, ApplyError> {
    let mut steps = Vec::with_capacity(meters.len());
    let mut delta = MeterDelta {
        index: ctx.ledger_index,
        at_ms: ctx.at_ms,
        ..MeterDelta::default()
    };
    // Increase of coin_in over exactly the window since the previous reading (for comparisons).
    let mut aligned_coin_in = None;
    for (i, m) in meters.iter().enumerate() {
        let prev = machine.meters.get(&m.name);
        let step = classify(prev.map(|p| p.value), m.value, m.rollover);
        if let Some(d) = step.increase() {
            match m.name.as_str() {
                COIN_IN => delta.coin_in = Some(d),
                COIN_OUT => delta.coin_out = Some(d),
                TOTAL_DROP => delta.total_drop = Some(d),
                JACKPOT => delta.jackpot = Some(d),
                GAMES_PLAYED => delta.games_played = Some(d),
                _ => {}
            }
            if m.name == COIN_IN && prev.is_some_and(|p| Some(p.at) == machine.last_reading) {
                aligned_coin_in = Some(d);
            }
        }
        steps.push((i, step, prev.map(|p| p.at)));
    }
    let missing: Vec<&'static str> = MANDATORY_METERS
        .iter()
        .copied()
        .filter(|n| !meters.iter().any(|m| m.name == *n))
        .collect();
    let coin_in_present = meters.iter().any(|m| m.name == COIN_IN);

    let mut plans = Vec::with_capacity(machine.pools.len());
    for pid in &machine.pools {
        let Some(pool) = pools.get(pid) else { continue };
        let pending = pool
            .machines
            .get(&machine.id)
            .is_none_or(|m| m.baseline_pending);
        let mut plan = PoolPlan {
            pool: pid.clone(),
            credit: None,
            new_captive: pool.captive_e4,
            new_contributed: pool.totals.contributed_e4,
            new_by: pool.contributed_by.get(&machine.id).copied().unwrap_or(0),
            comparable: None,
        };
        if !pending {
            if let Some(d) = delta.coin_in {
                let amount = contribution_e4(d, pool.contribution_bp);
                if amount != 0 {
                    plan.credit = Some((d, amount));
                    plan.new_captive = add(plan.new_captive, amount, "pool captive value")?;
                    plan.new_contributed = add(plan.new_contributed, amount, "pool contributions")?;
                    plan.new_by = add(plan.new_by, amount, "member contributions")?;
                }
            }
            plan.comparable = aligned_coin_in.map(|d| contribution_e4(d, pool.contribution_bp));
        }
        plans.push(plan);
    }
    let won = i128::from(delta.coin_out.unwrap_or(0))
        .saturating_add(i128::from(delta.jackpot.unwrap_or(0)));
    let lifetime_in = add(
        machine.lifetime_coin_in_cents,
        i128::from(delta.coin_in.unwrap_or(0)),
        "lifetime coin-in",
    )?;
    let lifetime_won = add(machine.lifetime_won_cents, won, "lifetime prizes")?;
    Ok(ReadingPlan {
        steps,
        missing,
        delta,
        coin_in_present,
        pools: plans,
        lifetime_in,
        lifetime_won,
    })
}

/// The increase of meter `name` over exactly the window since the previous reading.
fn aligned_increase(
    plan: &ReadingPlan,
    meters: &[Meter],
    name: &str,
    last: Option<u64>,
) -> Option<u64> {
    plan.steps.iter().find_map(|(i, step, prev_at)| {
        let m = meters.get(*i)?;
        (m.name == name && prev_at.is_some() && *prev_at == last)
            .then_some(step.increase())
            .flatten()
    })
}

fn commit_reading(
    machine: &mut Machine,
    pools: &mut BTreeMap<Id, Pool>,
    settings: &Settings,
    meters: &[Meter],
    plan: ReadingPlan,
    ctx: EventCtx,
    mode: Mode,
) -> Vec<Finding> {
    let idx = ctx.ledger_index;
    let mut out = Vec::new();
    let last = machine.last_reading;
    // Play in this window that an older check covers (significant-event checks stand aside).
    let covered = machine.meter_fault.is_some()
        || machine.out_of_service.is_some()
        || (!plan.missing.is_empty() && mode == Mode::Reading);

    // r.9: bets recorded on a machine whose meters were already known to be unreliable (state
    // before this reading). A fault this reading shows is not yet known for its own play.
    if plan.delta.coin_in.is_some_and(|d| d > 0) {
        let coin_in_from = plan
            .steps
            .iter()
            .find_map(|(i, _, prev_at)| meters.get(*i).filter(|m| m.name == COIN_IN).and(*prev_at));
        if let Some(from) = coin_in_from {
            played_check(machine, from, idx, &mut out);
        }
    }

    // r.9: the three mandatory meters.
    if !plan.missing.is_empty() && mode == Mode::Reading {
        out.push(
            Finding::new(
                &METER_MISSING,
                format!(
                    "machine `{}`: reading without the mandatory meter(s) {}",
                    machine.id,
                    plan.missing.join(", ")
                ),
            )
            .machine(&machine.id)
            .casino(&machine.casino_id),
        );
        if machine.meter_fault.is_none() {
            machine.meter_fault = Some(Mark {
                since: idx,
                code: "meter_missing".into(),
                by_reading: true,
            });
        }
    }

    // r.9, r.14: meters that went back.
    let back: Vec<(&str, u64, u64, Option<u64>)> = plan
        .steps
        .iter()
        .filter_map(|(i, step, prev_at)| match step {
            Step::Backward { from, to } => meters
                .get(*i)
                .map(|m| (m.name.as_str(), *from, *to, *prev_at)),
            _ => None,
        })
        .collect();
    if !back.is_empty() {
        let list = back
            .iter()
            .map(|(n, f, t, _)| format!("{n} {f} → {t}"))
            .collect::<Vec<_>>()
            .join(", ");
        let f = match mode {
            Mode::Reading => Finding::new(
                &METER_DECREASED,
                format!(
                    "machine `{}`: meter(s) went back without a RAM clear: {list}",
                    machine.id
                ),
            ),
            Mode::RamBefore => Finding::new(
                &RAM_CLEAR_BEFORE_MISMATCH,
                format!(
                    "machine `{}`: the RAM clear's 'before' meters are below the last reading: {list}",
                    machine.id
                ),
            ),
        };
        out.push(
            f.machine(&machine.id)
                .casino(&machine.casino_id)
                .evidence(back.iter().filter_map(|b| b.3)),
        );
        if machine.meter_fault.is_none() {
            machine.meter_fault = Some(Mark {
                since: idx,
                code: "meter_decreased".into(),
                by_reading: true,
            });
        }
    }

    // Significant events: play while unplayable, meters without games, hand pays.
    let hand_paid = if meters.iter().any(|m| m.name == HAND_PAID) {
        aligned_increase(&plan, meters, HAND_PAID, last)
            .map_or(HandPaid::Unknown, HandPaid::Increase)
    } else {
        HandPaid::Absent
    };
    let facts = ReadingFacts {
        delta: plan.delta,
        games: machine.games.count,
        hand_paid,
        covered,
    };
    out.extend(reading_checks(machine, facts));

    // r.9, r.14: the games reported since the last reading against the meter increases.
    let games = std::mem::take(&mut machine.games);
    if games.count > 0 {
        let mut diffs = Vec::new();
        let cmp = |name: &str, reported: i128, what: &str, diffs: &mut Vec<String>| {
            if let Some(d) = aligned_increase(&plan, meters, name, last)
                && i128::from(d) != reported
            {
                diffs.push(format!("Δ{name} {d} vs {what} {reported}"));
            }
        };
        cmp(COIN_IN, games.wager_cents, "Σ wager", &mut diffs);
        cmp(COIN_OUT, games.win_cents, "Σ win", &mut diffs);
        cmp(GAMES_PLAYED, i128::from(games.count), "games", &mut diffs);
        if !diffs.is_empty() {
            out.push(
                Finding::new(
                    &METER_GAME_MISMATCH,
                    format!(
                        "machine `{}`: {} game(s) reported since the last reading disagree with the meters: {}",
                        machine.id,
                        games.count,
                        diffs.join("; ")
                    ),
                )
                .machine(&machine.id)
                .casino(&machine.casino_id)
                .evidence(last.into_iter().chain(games.first)),
            );
        }
    }

    // r.3, r.4: contributions.
    for pp in &plan.pools {
        let Some(pool) = pools.get_mut(&pp.pool) else {
            continue;
        };
        if let Some((base, amount)) = pp.credit {
            pool.captive_e4 = pp.new_captive;
            pool.totals.contributed_e4 = pp.new_contributed;
            pool.contributed_by.insert(machine.id.clone(), pp.new_by);
            pool.history.push(PoolEntry {
                index: idx,
                at_ms: ctx.at_ms,
                kind: EntryKind::Contribution {
                    member: machine.id.clone(),
                    base_cents: base,
                    amount_e4: amount,
                    round_id: None,
                },
            });
        }
        if plan.coin_in_present
            && let Some(m) = pool.machines.get_mut(&machine.id)
        {
            m.baseline_pending = false;
        }
        if let Some(t) = pool.reported.remove(&machine.id)
            && let Some(computed) = pp.comparable
        {
            let diff = e4_of(t.sum_cents).abs_diff(computed);
            let allowed = u128::from(t.reports).saturating_mul(E4_PER_CENT.unsigned_abs());
            if diff >= allowed {
                out.push(
                    Finding::new(
                        &CONTRIBUTION_MISMATCH,
                        format!(
                            "machine `{}` reported {} contribution(s) to pool `{}` totalling {} cents; {} bp of \
                             the Δcoin_in since the last reading is {} e4",
                            machine.id, t.reports, pool.id, t.sum_cents, pool.contribution_bp, computed
                        ),
                    )
                    .machine(&machine.id)
                    .pool(&pool.id)
                    .casino(&machine.casino_id)
                    .amounts(computed, i64::try_from(t.sum_cents).unwrap_or(i64::MAX))
                    .evidence(last.into_iter().chain([t.first])),
                );
            }
        }
    }

    // New meter values.
    for m in meters {
        let st = MeterState {
            value: m.value,
            rollover: m.rollover,
            at: idx,
        };
        if let Some(s) = machine.meters.get_mut(&m.name) {
            *s = st;
        } else {
            machine.meters.insert(m.name.clone(), st);
        }
    }
    machine.last_reading = Some(idx);
    let d = plan.delta;
    if d.coin_in.is_some()
        || d.coin_out.is_some()
        || d.total_drop.is_some()
        || d.jackpot.is_some()
        || d.games_played.is_some()
    {
        machine.deltas.push(d);
    }
    machine.lifetime_coin_in_cents = plan.lifetime_in;
    machine.lifetime_won_cents = plan.lifetime_won;

    // r.2, M4: statistical alert only.
    if plan.lifetime_in >= i128::from(settings.observed_return_min_coin_in_cents)
        && plan.lifetime_in > 0
    {
        let observed =
            round_div(plan.lifetime_won.saturating_mul(10_000), plan.lifetime_in).unwrap_or(0);
        if observed < i128::from(settings.observed_return_alert_bp) {
            if !machine.observed_low_alerted {
                machine.observed_low_alerted = true;
                out.push(
                    Finding::new(
                        &OBSERVED_RETURN_LOW,
                        format!(
                            "machine `{}`: lifetime observed return {observed} bp over {} cents of bets \
                             (statistical alert only: r.2 binds the pay table, M4)",
                            machine.id, plan.lifetime_in
                        ),
                    )
                    .machine(&machine.id)
                    .model(&machine.model_id)
                    .casino(&machine.casino_id),
                );
            }
        } else {
            machine.observed_low_alerted = false;
        }
    }
    out
}

fn e4_of(cents: i128) -> E4 {
    cents.saturating_mul(E4_PER_CENT)
}

/// Raise `SLOT_PLAYED_WITH_FAULTY_METER` or `SLOT_PLAYED_OUT_OF_SERVICE` once per episode, for
/// bets played after ledger index `played_after` (a game's own index; for a meter increase, the
/// index of the coin_in reading it is measured from) and recorded at `idx`.
pub(crate) fn played_check(
    machine: &mut Machine,
    played_after: u64,
    idx: u64,
    out: &mut Vec<Finding>,
) {
    if machine.play_flagged {
        return;
    }
    let f = if let Some(mark) = machine.meter_fault.as_ref() {
        if mark.by_reading && played_after < mark.since {
            // Play measured from before the reading that showed the fault, so including the play
            // inside that reading (P217/2007 T.III r.9 forbids opening a machine known to be
            // faulty, not the play that revealed it): not this check's.
            return;
        }
        Finding::new(
            &PLAYED_WITH_FAULTY_METER,
            format!(
                "machine `{}` recorded bets after a meter fault (`{}`) was shown and before a restore",
                machine.id, mark.code
            ),
        )
        .evidence([mark.since])
    } else if let Some(mark) = machine.out_of_service.as_ref() {
        Finding::new(
            &PLAYED_OUT_OF_SERVICE,
            format!(
                "machine `{}` recorded bets while out of service (`{}`) and before a restore",
                machine.id, mark.code
            ),
        )
        .evidence([mark.since])
    } else {
        return;
    };
    machine.play_flagged = true;
    out.push(
        f.machine(&machine.id)
            .casino(&machine.casino_id)
            .evidence([idx]),
    );
}

impl Book {
    pub(crate) fn on_meter_reading(
        &mut self,
        e: &MeterReading,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("machine_id", &e.machine_id)?;
        validate_meters("meters", &e.meters)?;
        let machine = self
            .machines
            .get(&*e.machine_id)
            .ok_or_else(|| ApplyError::unknown("machine_id", "machine", &e.machine_id))?;
        let plan = plan_reading(machine, &self.pools, &e.meters, ctx)?;
        let Book {
            machines,
            pools,
            settings,
            ..
        } = self;
        let Some(machine) = machines.get_mut(&*e.machine_id) else {
            return Ok(Vec::new());
        };
        Ok(commit_reading(
            machine,
            pools,
            settings,
            &e.meters,
            plan,
            ctx,
            Mode::Reading,
        ))
    }

    pub(crate) fn on_ram_clear(
        &mut self,
        e: &RamClear,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("machine_id", &e.machine_id)?;
        validate_meters("before", &e.before)?;
        validate_meters("after", &e.after)?;
        let machine = self
            .machines
            .get(&*e.machine_id)
            .ok_or_else(|| ApplyError::unknown("machine_id", "machine", &e.machine_id))?;
        let plan = if e.before.is_empty() {
            None
        } else {
            Some(plan_reading(machine, &self.pools, &e.before, ctx)?)
        };
        let Book {
            machines,
            pools,
            settings,
            ..
        } = self;
        let Some(machine) = machines.get_mut(&*e.machine_id) else {
            return Ok(Vec::new());
        };
        let idx = ctx.ledger_index;
        let mut out = Vec::new();
        let lacks = |ms: &[Meter]| -> Vec<&'static str> {
            MANDATORY_METERS
                .iter()
                .copied()
                .filter(|n| !ms.iter().any(|m| m.name == *n))
                .collect()
        };
        let (lb, la) = (lacks(&e.before), lacks(&e.after));
        if !lb.is_empty() || !la.is_empty() {
            let mut parts = Vec::new();
            if !lb.is_empty() {
                parts.push(format!("'before' lacks {}", lb.join(", ")));
            }
            if !la.is_empty() {
                parts.push(format!("'after' lacks {}", la.join(", ")));
            }
            out.push(
                Finding::new(
                    &RAM_CLEAR_UNDOCUMENTED,
                    format!(
                        "machine `{}`: RAM clear without the mandatory meters before and after: {}",
                        machine.id,
                        parts.join("; ")
                    ),
                )
                .machine(&machine.id)
                .casino(&machine.casino_id)
                .evidence(machine.last_reading),
            );
        }
        match plan {
            Some(plan) => out.extend(commit_reading(
                machine,
                pools,
                settings,
                &e.before,
                plan,
                ctx,
                Mode::RamBefore,
            )),
            None => {
                machine.games = GameTally::default();
                if let Some(ev) = machine.events.as_mut() {
                    ev.reset_window();
                }
                for p in &machine.pools {
                    if let Some(pool) = pools.get_mut(p) {
                        pool.reported.remove(&machine.id);
                    }
                }
            }
        }
        // Re-baseline at the "after" values: the only way a meter may legitimately go back.
        machine.meters.clear();
        for m in &e.after {
            machine.meters.insert(
                m.name.clone(),
                MeterState {
                    value: m.value,
                    rollover: m.rollover,
                    at: idx,
                },
            );
        }
        machine.last_reading = Some(idx);
        if e.after.iter().any(|m| m.name == COIN_IN) {
            for p in &machine.pools {
                if let Some(m) = pools
                    .get_mut(p)
                    .and_then(|p| p.machines.get_mut(&machine.id))
                {
                    m.baseline_pending = false;
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn on_game_played(
        &mut self,
        e: &GamePlayed,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("machine_id", &e.machine_id)?;
        check_cents("wager_cents", e.wager_cents)?;
        check_cents("win_cents", e.win_cents)?;
        let machine = self
            .machines
            .get_mut(&*e.machine_id)
            .ok_or_else(|| ApplyError::unknown("machine_id", "machine", &e.machine_id))?;
        let g = &machine.games;
        let tally = GameTally {
            count: g
                .count
                .checked_add(1)
                .ok_or_else(|| ApplyError::overflow("game count"))?,
            wager_cents: add(g.wager_cents, i128::from(e.wager_cents), "game wagers")?,
            win_cents: add(g.win_cents, i128::from(e.win_cents), "game wins")?,
            first: g.first.or(Some(ctx.ledger_index)),
        };
        machine.games = tally;
        let mut out = Vec::new();
        if e.wager_cents > 0 {
            played_check(machine, ctx.ledger_index, ctx.ledger_index, &mut out);
        }
        if let Some(ev) = machine.events.as_mut() {
            ev.reports_games = true;
            ev.note_game(ctx.ledger_index);
        }
        Ok(out)
    }

    pub(crate) fn on_fault(
        &mut self,
        e: &MachineFault,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("machine_id", &e.machine_id)?;
        check_id("code", &e.code)?;
        let machine = self
            .machines
            .get(&*e.machine_id)
            .ok_or_else(|| ApplyError::unknown("machine_id", "machine", &e.machine_id))?;
        check_machine_pools(machine, &e.pool_ids)?;
        let Some(machine) = self.machines.get_mut(&*e.machine_id) else {
            return Ok(Vec::new());
        };
        let mark = || Mark {
            since: ctx.ledger_index,
            code: e.code.clone(),
            by_reading: false,
        };
        if e.code.starts_with("meter") && machine.meter_fault.is_none() {
            machine.meter_fault = Some(mark());
        }
        // The whole machine's force majeure takes it out of service; its part in some pools
        // only (their link, controller or server) leaves it in service for the rest (r.6).
        let whole_fm = e.force_majeure && e.pool_ids.is_empty();
        if (e.out_of_service || whole_fm) && machine.out_of_service.is_none() {
            machine.out_of_service = Some(mark());
        }
        if whole_fm && machine.force_majeure.is_none() {
            machine.force_majeure = Some(mark());
        }
        if e.force_majeure {
            for p in &e.pool_ids {
                machine
                    .pool_force_majeure
                    .entry(p.clone())
                    .or_insert_with(mark);
            }
        }
        Ok(Vec::new())
    }

    pub(crate) fn on_restored(
        &mut self,
        e: &MachineRestored,
        _ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("machine_id", &e.machine_id)?;
        let machine = self
            .machines
            .get(&*e.machine_id)
            .ok_or_else(|| ApplyError::unknown("machine_id", "machine", &e.machine_id))?;
        check_machine_pools(machine, &e.pool_ids)?;
        let Some(machine) = self.machines.get_mut(&*e.machine_id) else {
            return Ok(Vec::new());
        };
        if !e.pool_ids.is_empty() {
            // Only the machine's part in these pools is restored.
            for p in &e.pool_ids {
                machine.pool_force_majeure.remove(p);
            }
            return Ok(Vec::new());
        }
        machine.meter_fault = None;
        machine.out_of_service = None;
        machine.force_majeure = None;
        machine.pool_force_majeure.clear();
        machine.play_flagged = false;
        if let Some(ev) = machine.events.as_mut() {
            ev.restored();
        }
        Ok(Vec::new())
    }
}

/// `pool_ids` of a fault or restore: each non-empty, once, and a pool the machine feeds.
fn check_machine_pools(machine: &Machine, pool_ids: &[Id]) -> Result<(), ApplyError> {
    for (i, p) in pool_ids.iter().enumerate() {
        let field = format!("pool_ids[{i}]");
        check_id(&field, p)?;
        if pool_ids.iter().take(i).any(|q| q == p) {
            return Err(ApplyError::invalid(
                field,
                format!("pool `{p}` is listed twice"),
            ));
        }
        if !machine.pools.contains(p) {
            return Err(ApplyError::invalid(
                field,
                format!("machine `{}` does not feed pool `{p}`", machine.id),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollover_below_half_the_modulus() {
        // 8-digit meter: 99,990,000 → 10,000 is +20,000 (rollover).
        assert_eq!(
            classify(Some(99_990_000), 10_000, 100_000_000),
            Step::Rollover(20_000)
        );
        // 60 → 50 on a 100 meter: a wrap would mean +90 (≥ 50): it went back.
        assert_eq!(
            classify(Some(60), 50, 100),
            Step::Backward { from: 60, to: 50 }
        );
        // Exactly half: resolved against the machine.
        assert_eq!(
            classify(Some(75), 25, 100),
            Step::Backward { from: 75, to: 25 }
        );
        assert_eq!(classify(Some(76), 25, 100), Step::Rollover(49));
        // No rollover width: any decrease is a decrease.
        assert_eq!(classify(Some(5), 4, 0), Step::Backward { from: 5, to: 4 });
        // Previous value not below the (new) modulus: cannot be a wrap.
        assert_eq!(
            classify(Some(150), 10, 100),
            Step::Backward { from: 150, to: 10 }
        );
        assert_eq!(classify(None, 10, 100), Step::Baseline);
        assert_eq!(classify(Some(10), 10, 100), Step::Forward(0));
        assert_eq!(classify(Some(u64::MAX - 1), 0, u64::MAX), Step::Rollover(1));
    }
}
