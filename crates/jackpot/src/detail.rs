//! The book's per-event detail — pool history lines and machines' credited meter increases —
//! and where queries read it from.
//!
//! The detail grows with every contribution and reading for as long as a ledger runs, and no
//! check reads it: only the queries do (a pool's history, the return to player over a period).
//! A [`Book`] therefore either **holds** it (the default: pools' `history`, machines' `deltas`),
//! or **hands it out** ([`Book::hand_out_detail`]): after each [`Book::apply`] the new lines and
//! increases wait in an outbox ([`Book::take_detail`]) for the caller to store, and the book
//! keeps only what the checks need, so its size (and a snapshot's) is the floor's, not the
//! ledger's. Queries take a [`DetailSource`]: [`Held`] reads a holding book, a store implements
//! the trait over what it was handed.
//!
//! A book that hands out also hands out, per machine, the **sum of each UTC day's increases**
//! ([`Detail::DayTotal`], by receipt time) once the machine's first increase of a later day
//! arrives. A store can then answer a period of many days from one total a day plus the
//! increases of the days at its two ends (and of the machine's last day, not yet totalled):
//! see [`DeltaSum`]. Which day an increase falls in depends on the chain alone (receipt times,
//! which never go back), so the totals are as deterministic as the increases.

use rules_core::Id;
use serde::{Deserialize, Serialize};

use crate::book::{Book, DetailHorizon};
use crate::error::QueryError;
use crate::report::Period;
use crate::state::{MeterDelta, Pool, PoolEntry};

/// A day of ledger time, ms ([`Detail::DayTotal`] days are `at_ms.div_euclid(DAY_MS)`).
pub const DAY_MS: i64 = 86_400_000;

/// One record of detail handed out by a book ([`Book::take_detail`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    /// A line of a pool's history at `position` (0 = the pool's first line; positions never
    /// change).
    PoolLine {
        pool_id: Id,
        position: u64,
        entry: PoolEntry,
    },
    /// A credited meter increase of a machine.
    Delta { machine_id: Id, delta: MeterDelta },
    /// The sum of a machine's increases on UTC day `day` (days since the epoch), handed out
    /// once its first increase of a later day arrives; no further increase of `day` follows.
    /// (Were receipt times to go back, which a ledger's never do, an increase would be counted
    /// in the machine's latest day instead of its own.)
    DayTotal {
        machine_id: Id,
        day: i64,
        sum: DeltaSum,
    },
    /// A significant event of a machine (its index is its key within the machine).
    Event {
        machine_id: Id,
        event: crate::significant::LoggedEvent,
    },
}

/// The sum of credited meter increases (over a period, or a day). Missing meters count as 0,
/// as in [`crate::ReturnReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaSum {
    /// Readings with a credited increase.
    pub readings: u64,
    pub coin_in: i128,
    pub coin_out: i128,
    pub jackpot: i128,
    pub total_drop: i128,
    pub games_played: i128,
}

impl DeltaSum {
    /// Add one increase.
    pub fn add(&mut self, d: &MeterDelta) {
        let s = |a: &mut i128, v: Option<u64>| *a = a.saturating_add(i128::from(v.unwrap_or(0)));
        self.readings = self.readings.saturating_add(1);
        s(&mut self.coin_in, d.coin_in);
        s(&mut self.coin_out, d.coin_out);
        s(&mut self.jackpot, d.jackpot);
        s(&mut self.total_drop, d.total_drop);
        s(&mut self.games_played, d.games_played);
    }

    /// Add another sum.
    pub fn merge(&mut self, o: &DeltaSum) {
        self.readings = self.readings.saturating_add(o.readings);
        self.coin_in = self.coin_in.saturating_add(o.coin_in);
        self.coin_out = self.coin_out.saturating_add(o.coin_out);
        self.jackpot = self.jackpot.saturating_add(o.jackpot);
        self.total_drop = self.total_drop.saturating_add(o.total_drop);
        self.games_played = self.games_played.saturating_add(o.games_played);
    }
}

/// A machine's increases of its current day, until a later day's arrives (hand-out mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayRunning {
    pub day: i64,
    pub sum: DeltaSum,
}

/// Where the queries read the detail.
pub trait DetailSource {
    /// The sum of `machine_id`'s credited increases whose reading falls in `period`.
    fn delta_sum(&self, machine_id: &str, period: Period) -> Result<DeltaSum, QueryError>;
    /// The positions of `pool`'s history this source can give, `from ..< to`.
    fn pool_span(&self, pool: &Pool) -> Result<(u64, u64), QueryError>;
    /// `pool_id`'s history lines at positions `from ..< to` (within [`Self::pool_span`]),
    /// oldest first.
    fn pool_lines(&self, pool_id: &str, from: u64, to: u64) -> Result<Vec<PoolEntry>, QueryError>;
    /// Up to `limit` of `machine_id`'s significant events matching `query`, oldest first.
    fn machine_events(
        &self,
        machine_id: &str,
        query: &crate::significant::EventQuery,
        limit: usize,
    ) -> Result<Vec<crate::significant::LoggedEvent>, QueryError>;
    /// Where the increases this source holds begin, when `period` reaches before them.
    fn detail_from(&self, _period: Period) -> Option<DetailHorizon> {
        None
    }
}

/// The detail a book holds itself ([`Book::held`]). A book that hands its detail out holds
/// none: every query through this source is then [`QueryError::NotHeld`].
pub struct Held<'a>(pub(crate) &'a Book);

impl Held<'_> {
    fn check(&self) -> Result<(), QueryError> {
        if self.0.hands_out() {
            Err(QueryError::NotHeld)
        } else {
            Ok(())
        }
    }
}

impl DetailSource for Held<'_> {
    fn delta_sum(&self, machine_id: &str, period: Period) -> Result<DeltaSum, QueryError> {
        self.check()?;
        let m = self
            .0
            .machine(machine_id)
            .ok_or_else(|| QueryError::unknown("machine", machine_id))?;
        let deltas: &[MeterDelta] = match period {
            Period::Indexes { from, to } => {
                let lo = m.deltas.partition_point(|d| d.index < from);
                let hi = m.deltas.partition_point(|d| d.index < to);
                m.deltas.get(lo..hi).unwrap_or(&[])
            }
            _ => &m.deltas,
        };
        let mut sum = DeltaSum::default();
        for d in deltas.iter().filter(|d| period.contains(d.index, d.at_ms)) {
            sum.add(d);
        }
        Ok(sum)
    }

    fn pool_span(&self, pool: &Pool) -> Result<(u64, u64), QueryError> {
        self.check()?;
        Ok((pool.history_pruned, pool.history_lines()))
    }

    fn pool_lines(&self, pool_id: &str, from: u64, to: u64) -> Result<Vec<PoolEntry>, QueryError> {
        self.check()?;
        let pool = self
            .0
            .pool(pool_id)
            .ok_or_else(|| QueryError::unknown("pool", pool_id))?;
        let held_from = pool.history_pruned;
        let at = |pos: u64| usize::try_from(pos.saturating_sub(held_from)).unwrap_or(usize::MAX);
        Ok(pool
            .history
            .get(at(from)..at(to.max(from)))
            .map(<[PoolEntry]>::to_vec)
            .unwrap_or_default())
    }

    fn machine_events(
        &self,
        machine_id: &str,
        query: &crate::significant::EventQuery,
        limit: usize,
    ) -> Result<Vec<crate::significant::LoggedEvent>, QueryError> {
        self.check()?;
        let m = self
            .0
            .machine(machine_id)
            .ok_or_else(|| QueryError::unknown("machine", machine_id))?;
        Ok(m.events
            .as_ref()
            .map(|ev| {
                ev.log
                    .iter()
                    .filter(|e| query.matches(e))
                    .take(limit)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    fn detail_from(&self, period: Period) -> Option<DetailHorizon> {
        self.0.detail_from().filter(|h| match period {
            Period::All => true,
            Period::Indexes { from, .. } => from < h.index,
            Period::Times { from_ms, .. } => from_ms < h.at_ms,
        })
    }
}

/// The sum of a machine's increases over the times `from_ms ..< to_ms`, from a store of what a
/// book handed out: `totals(d1, d2)` must give the sum of the machine's [`Detail::DayTotal`]s of
/// days `d1 ..< d2` and the last of those days that has one; `increases(from, to)` the sum of
/// its [`Detail::Delta`]s with `from <= at_ms < to`. The whole days of the period are read from
/// their totals; the part days at either end, and the days after the last total (the machine's
/// latest day is not totalled until a later day's increase arrives), from the increases. So a
/// period of N days costs one read of at most N totals and two short reads of increases, not
/// one read a reading.
pub fn sum_by_days<E>(
    from_ms: i64,
    to_ms: i64,
    mut totals: impl FnMut(i64, i64) -> Result<(DeltaSum, Option<i64>), E>,
    mut increases: impl FnMut(i64, i64) -> Result<DeltaSum, E>,
) -> Result<DeltaSum, E> {
    let floor = from_ms.div_euclid(DAY_MS);
    let first_whole = if from_ms.rem_euclid(DAY_MS) == 0 {
        floor
    } else {
        floor.saturating_add(1)
    };
    let end_whole = to_ms.div_euclid(DAY_MS);
    let start = |day: i64| day.saturating_mul(DAY_MS);
    if first_whole >= end_whole {
        return increases(from_ms, to_ms);
    }
    let mut sum = increases(from_ms, start(first_whole))?;
    let (whole, last) = totals(first_whole, end_whole)?;
    sum.merge(&whole);
    let tail_from = last.map_or(first_whole, |d| d.saturating_add(1));
    sum.merge(&increases(start(tail_from), to_ms)?);
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(at_ms: i64, coin_in: u64) -> MeterDelta {
        MeterDelta {
            index: 0,
            at_ms,
            coin_in: Some(coin_in),
            ..MeterDelta::default()
        }
    }

    /// `sum_by_days` over stored increases and totals equals summing the increases one by one,
    /// for periods that start and end inside days, on day boundaries, before and after
    /// everything, with the latest day not yet totalled.
    #[test]
    fn sums_by_days_equal_sums_of_increases() {
        // Increases every 5 hours over 6 days, starting before the epoch; the totals of every
        // day but the last, as a book hands them out.
        let hour = 3_600_000i64;
        let deltas: Vec<MeterDelta> = (0..30)
            .map(|i| {
                delta(
                    -DAY_MS + i * 5 * hour + 17,
                    u64::try_from(i).unwrap_or(0) + 1,
                )
            })
            .collect();
        let mut totals = std::collections::BTreeMap::<i64, DeltaSum>::new();
        for d in &deltas {
            totals.entry(d.at_ms.div_euclid(DAY_MS)).or_default().add(d);
        }
        let last_day = deltas.last().map(|d| d.at_ms.div_euclid(DAY_MS));
        totals.retain(|d, _| Some(*d) != last_day);
        let naive = |from: i64, to: i64| {
            let mut s = DeltaSum::default();
            for d in deltas.iter().filter(|d| from <= d.at_ms && d.at_ms < to) {
                s.add(d);
            }
            s
        };
        let mut reads = 0;
        let mut by_days = |from: i64, to: i64| {
            sum_by_days::<()>(
                from,
                to,
                |a, b| {
                    let mut s = DeltaSum::default();
                    let mut last = None;
                    for (d, t) in totals.range(a..b) {
                        s.merge(t);
                        last = Some(*d);
                    }
                    Ok((s, last))
                },
                |a, b| {
                    reads += 1;
                    Ok(naive(a, b))
                },
            )
            .unwrap_or_default()
        };
        let edges = [
            i64::MIN,
            -2 * DAY_MS,
            -DAY_MS,
            -DAY_MS + 3 * hour,
            0,
            1,
            DAY_MS - 1,
            DAY_MS,
            2 * DAY_MS + 7 * hour,
            4 * DAY_MS,
            5 * DAY_MS + 1,
            9 * DAY_MS,
            i64::MAX,
        ];
        for &from in &edges {
            for &to in &edges {
                assert_eq!(by_days(from, to), naive(from, to), "{from}..{to}");
            }
        }
        assert!(by_days(i64::MIN, i64::MAX).readings == 30);
        assert!(reads > 0);
    }
}
