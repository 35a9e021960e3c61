//! Queries: captive values, pool history, reconciliation status, trust (liability per casino),
//! return to player, conservation.
//!
//! # Superjackpots spanning several casinos (trust, r.5)
//!
//! r.5 makes "as concessionárias" trustees ("fiéis depositárias") of the captive values, to be
//! delivered in full to the winner "no momento da sua atribuição", and r.4 lets a superjackpot
//! group machines "de um casino ou de vários casinos" without apportioning anything. The prize is
//! due in full wherever it is won (W2: the whole 316,000 on the casino-B machine). The book
//! therefore lists a multi-casino pool **under each member casino at its full captive value**,
//! marked joint, with the other casinos it is shared with; a casino's total separates what it
//! holds alone (`sole`) from what it answers for jointly (`joint`). Apportioning by
//! contributions would understate what a casino must deliver if the prize falls on one of its
//! machines, and would leave start values and transfers unattributed; each casino's lifetime
//! contributions to the pool are shown beside it for whoever needs a split. The system-wide
//! total counts every pool once.
//!
//! # Return to player (r.2)
//!
//! Over a [`Period`], from the credited meter increases: prizes = Δcoin_out + Δjackpot (the
//! "prémios" meter and hand-paid jackpots). The theoretical return is the approved model's
//! pay-table return; the *expected* return adds the contribution rates of the pools the machine
//! currently feeds (those are also paid back as prizes, r.3, r.4). `actual_bp` = prizes ×
//! 10,000 / coin-in; `variance_e4` = prizes − coin-in × expected bp (exact, 1/10,000 cent);
//! `variance_cents` and `variance_bp` (= variance / coin-in) are rounded half away from zero.
//! A reading's increase belongs to a period if the reading does (ledger index or time,
//! half-open ranges).

use std::collections::BTreeSet;

use rules_core::{Cents, Id};
use serde::{Deserialize, Serialize};

use crate::amount::{E4, E4_PER_CENT, round_div, to_cents};
use crate::book::Book;
use crate::detail::DetailSource;
use crate::error::QueryError;
use crate::event::PoolKind;
use crate::state::{Machine, MachineStatus, PoolEntry, PoolStatus, PoolTotals, Reconciliation};

/// A period of the ledger, half-open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    All,
    /// Ledger indexes `from ..< to`.
    Indexes {
        from: u64,
        to: u64,
    },
    /// Times (ms since the epoch) `from_ms ..< to_ms`.
    Times {
        from_ms: i64,
        to_ms: i64,
    },
}

impl Period {
    pub fn contains(&self, index: u64, at_ms: i64) -> bool {
        match *self {
            Period::All => true,
            Period::Indexes { from, to } => from <= index && index < to,
            Period::Times { from_ms, to_ms } => from_ms <= at_ms && at_ms < to_ms,
        }
    }
}

/// A pool's captive value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptiveValue {
    pub pool_id: Id,
    pub kind: PoolKind,
    pub casinos: Vec<Id>,
    pub captive_e4: E4,
    /// Floored to the cent.
    pub captive_cents: Cents,
}

/// A page of a pool's history, oldest line first, with the pool's current state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolHistoryPage {
    pub pool: PoolStatus,
    /// Position of `history[0]` (0 = the pool's first line ever; positions never change).
    pub first: u64,
    pub history: Vec<PoolEntry>,
    /// Pass as `before` for the page of older lines; absent when this page starts at the first
    /// line the book still holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_before: Option<u64>,
}

/// A machine's status with its return to player over a period (one line of the machine list).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineOverview {
    pub machine: MachineStatus,
    #[serde(rename = "return")]
    pub return_to_player: Option<ReturnReport>,
}

/// One page of the machine list (`Jackpots.ListMachines`), in machine id order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineOverviewPage {
    pub machines: Vec<MachineOverview>,
    /// Pass as `after` for the next page; absent when this page is the last. A page can hold
    /// fewer machines than were asked for and still name a next one (when more would not fit in
    /// one reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after: Option<Id>,
}

/// Where a pool stands against its last declaration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconciliationStatus {
    pub pool_id: Id,
    pub kind: PoolKind,
    pub captive_e4: E4,
    pub captive_cents: Cents,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_report: Option<Reconciliation>,
    /// `never_reported`, `reconciled` or `mismatch` (of the last declaration).
    pub status: ReconciliationState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReconciliationState {
    NeverReported,
    Reconciled,
    Mismatch,
}

/// One pool in a casino's trust report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolLiability {
    pub pool_id: Id,
    pub kind: PoolKind,
    pub captive_e4: E4,
    pub captive_cents: Cents,
    /// Listed under several casinos at its full value (see the module documentation).
    pub joint: bool,
    /// The other casinos it is shared with.
    pub shared_with: Vec<Id>,
    /// Members in this casino (machines; for a table jackpot, its tables).
    pub members_here: Vec<Id>,
    /// Lifetime contributions of this casino's machines to the pool (informational split).
    pub contributed_here_e4: E4,
}

/// What a casino holds in trust, pool by pool (r.5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasinoLiability {
    pub casino_id: Id,
    pub pools: Vec<PoolLiability>,
    /// Pools of this casino alone.
    pub sole_e4: E4,
    pub sole_cents: Cents,
    /// Pools shared with other casinos, each at its full value.
    pub joint_e4: E4,
    pub joint_cents: Cents,
    pub total_e4: E4,
    pub total_cents: Cents,
}

/// Every casino's liabilities and the system-wide total (each pool once).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustReport {
    pub casinos: Vec<CasinoLiability>,
    pub total_e4: E4,
    pub total_cents: Cents,
}

/// Return to player over a period, for a machine or a model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReturnReport {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<Id>,
    pub machines: Vec<Id>,
    pub period: Period,
    /// Readings with a credited increase in the period.
    pub readings: u64,
    pub coin_in_cents: i128,
    pub coin_out_cents: i128,
    pub jackpot_cents: i128,
    pub total_drop_cents: i128,
    pub games_played: i128,
    /// Prizes: coin_out + jackpot.
    pub won_cents: i128,
    /// The approved pay table's return (model data), if the model is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theoretical_rtp_bp: Option<u32>,
    /// Expected return: pay table + jackpot contribution rates (coin-in-weighted for a model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_rtp_bp: Option<i128>,
    /// Observed return (rounded half away from zero); `None` without coin-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_bp: Option<i128>,
    /// Prizes expected at the expected return, exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_won_e4: Option<E4>,
    /// Prizes − expected prizes, exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance_e4: Option<E4>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance_cents: Option<i128>,
    /// Actual − expected return in basis points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance_bp: Option<i128>,
    /// Present when the period reaches before the meter increases the book still holds
    /// ([`Book::prune_detail`]): the figures above cover the period from this entry on only.
    /// Absent: they cover the whole period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail_from: Option<crate::DetailHorizon>,
}

/// One pool's conservation check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolConservation {
    pub pool_id: Id,
    pub totals: PoolTotals,
    pub captive_e4: E4,
    /// `seeded + contributed + transferred_in − (captive + awarded + transferred_out)`: 0.
    pub imbalance_e4: E4,
}

/// The conservation invariant over every pool: start values (and resets) + contributions =
/// captive values + awards + transfers out − transfers in, exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConservationReport {
    pub pools: Vec<PoolConservation>,
    pub seeded_e4: E4,
    pub contributed_e4: E4,
    pub captive_e4: E4,
    pub awarded_e4: E4,
    pub transferred_out_e4: E4,
    pub transferred_in_e4: E4,
    pub holds: bool,
}

impl Book {
    /// Every pool's captive value.
    pub fn captive_values(&self) -> Vec<CaptiveValue> {
        self.pools
            .values()
            .map(|p| CaptiveValue {
                pool_id: p.id.clone(),
                kind: p.kind,
                casinos: p.casinos.iter().cloned().collect(),
                captive_e4: p.captive_e4,
                captive_cents: to_cents(p.captive_e4),
            })
            .collect()
    }

    /// A pool's history (contributions, awards, transfers, declarations) within `period`, as the
    /// book holds it ([`QueryError::NotHeld`] when it hands its detail out).
    pub fn pool_history(
        &self,
        pool_id: &str,
        period: Period,
    ) -> Result<Vec<&PoolEntry>, QueryError> {
        if self.hands_out() {
            return Err(QueryError::NotHeld);
        }
        let pool = self
            .pools
            .get(pool_id)
            .ok_or_else(|| QueryError::unknown("pool", pool_id))?;
        Ok(pool
            .history
            .iter()
            .filter(|e| period.contains(e.index, e.at_ms))
            .collect())
    }

    /// A page of a pool's history: the at most `limit` lines just before position `before`
    /// (default: after the last line, so the newest lines), oldest first, with the pool's state.
    /// A client pages back from the newest line with `next_before`. Copies at most `limit` lines,
    /// however long the history. From the detail the book holds ([`Book::held`]).
    pub fn pool_history_page(
        &self,
        pool_id: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<PoolHistoryPage, QueryError> {
        self.pool_history_page_from(&self.held(), pool_id, before, limit)
    }

    /// [`Book::pool_history_page`] with the lines read from `source`. Where the source does not
    /// yet have the newest lines (a store that commits behind the book), the default page ends
    /// at the source's last line.
    pub fn pool_history_page_from(
        &self,
        source: &impl DetailSource,
        pool_id: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<PoolHistoryPage, QueryError> {
        let pool = self
            .pools
            .get(pool_id)
            .ok_or_else(|| QueryError::unknown("pool", pool_id))?;
        let lines = pool.history_lines();
        let end = before.unwrap_or(lines);
        if end > lines {
            return Err(QueryError::BeyondHistory { before: end, lines });
        }
        let (held_from, held_to) = source.pool_span(pool)?;
        let end = end.min(held_to);
        let limit = u64::try_from(limit).unwrap_or(u64::MAX);
        let start = end.saturating_sub(limit).max(held_from);
        let end = end.max(start);
        let history = source.pool_lines(pool_id, start, end)?;
        Ok(PoolHistoryPage {
            pool: PoolStatus::from(pool),
            first: start,
            history,
            next_before: (start > held_from).then_some(start),
        })
    }

    /// Every pool against its last declaration.
    pub fn reconciliation_status(&self) -> Vec<ReconciliationStatus> {
        self.pools
            .values()
            .map(|p| ReconciliationStatus {
                pool_id: p.id.clone(),
                kind: p.kind,
                captive_e4: p.captive_e4,
                captive_cents: to_cents(p.captive_e4),
                last_report: p.last_report,
                status: match p.last_report {
                    None => ReconciliationState::NeverReported,
                    Some(r) if r.ok => ReconciliationState::Reconciled,
                    Some(_) => ReconciliationState::Mismatch,
                },
            })
            .collect()
    }

    /// What casino `casino_id` holds in captive values, pool by pool (r.5). An unknown casino
    /// holds nothing.
    pub fn liability(&self, casino_id: &str) -> CasinoLiability {
        let mut pools = Vec::new();
        let (mut sole, mut joint) = (0i128, 0i128);
        for p in self
            .pools
            .values()
            .filter(|p| p.casinos.contains(casino_id))
        {
            let is_joint = p.casinos.len() > 1;
            let members_here: Vec<Id> = if p.kind.is_machine_pool() {
                p.machines
                    .keys()
                    .filter(|m| {
                        self.machines
                            .get(*m)
                            .is_some_and(|m| &*m.casino_id == casino_id)
                    })
                    .cloned()
                    .collect()
            } else {
                p.tables.iter().cloned().collect()
            };
            let contributed_here = if p.kind.is_machine_pool() {
                members_here
                    .iter()
                    .filter_map(|m| p.contributed_by.get(m))
                    .fold(0i128, |a, b| a.saturating_add(*b))
            } else {
                p.totals.contributed_e4
            };
            if is_joint {
                joint = joint.saturating_add(p.captive_e4);
            } else {
                sole = sole.saturating_add(p.captive_e4);
            }
            pools.push(PoolLiability {
                pool_id: p.id.clone(),
                kind: p.kind,
                captive_e4: p.captive_e4,
                captive_cents: to_cents(p.captive_e4),
                joint: is_joint,
                shared_with: p
                    .casinos
                    .iter()
                    .filter(|c| &***c != casino_id)
                    .cloned()
                    .collect(),
                members_here,
                contributed_here_e4: contributed_here,
            });
        }
        let total = sole.saturating_add(joint);
        CasinoLiability {
            casino_id: casino_id.into(),
            pools,
            sole_e4: sole,
            sole_cents: to_cents(sole),
            joint_e4: joint,
            joint_cents: to_cents(joint),
            total_e4: total,
            total_cents: to_cents(total),
        }
    }

    /// Every casino's liabilities, and the total of all pools counted once.
    pub fn trust_report(&self) -> TrustReport {
        let casinos: BTreeSet<&Id> = self.pools.values().flat_map(|p| p.casinos.iter()).collect();
        let total = self
            .pools
            .values()
            .fold(0i128, |a, p| a.saturating_add(p.captive_e4));
        TrustReport {
            casinos: casinos.into_iter().map(|c| self.liability(c)).collect(),
            total_e4: total,
            total_cents: to_cents(total),
        }
    }

    /// The contribution rate, in basis points, of the machine pools `m` feeds.
    fn jackpot_bp(&self, m: &Machine) -> i128 {
        m.pools
            .iter()
            .filter_map(|p| self.pools.get(p))
            .filter(|p| p.kind.is_machine_pool())
            .fold(0i128, |a, p| {
                a.saturating_add(i128::from(p.contribution_bp))
            })
    }

    /// Return to player of one machine over `period`, from the detail the book holds.
    pub fn machine_return(
        &self,
        machine_id: &str,
        period: Period,
    ) -> Result<ReturnReport, QueryError> {
        self.machine_return_from(&self.held(), machine_id, period)
    }

    /// [`Book::machine_return`] with the meter increases summed by `source`.
    pub fn machine_return_from(
        &self,
        source: &impl DetailSource,
        machine_id: &str,
        period: Period,
    ) -> Result<ReturnReport, QueryError> {
        let m = self
            .machines
            .get(machine_id)
            .ok_or_else(|| QueryError::unknown("machine", machine_id))?;
        let mut r = self.sum_returns(source, std::slice::from_ref(&m), period)?;
        r.machine_id = Some(m.id.clone());
        r.model_id = Some(m.model_id.clone());
        Ok(r)
    }

    /// Every machine's status and its return to player over `period`, in machine id order, from
    /// the detail the book holds. The size is the floor's, not the ledger's: the meter
    /// increases are summed, never copied.
    pub fn machine_overviews(&self, period: Period) -> Result<Vec<MachineOverview>, QueryError> {
        self.machine_overviews_page(&self.held(), period, None, usize::MAX)
    }

    /// [`Book::machine_overviews`] a page at a time, in machine id order: the machines after
    /// `after` (None: from the first), at most `limit` of them, the increases summed by
    /// `source`.
    pub fn machine_overviews_page(
        &self,
        source: &impl DetailSource,
        period: Period,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<MachineOverview>, QueryError> {
        self.machine_overviews_after(source, period, after)
            .take(limit)
            .collect()
    }

    /// The machines after `after` (None: from the first), in machine id order, each with its
    /// return over `period`: computed one at a time as the iterator is read, so a reader that
    /// stops early (a reply that is full) pays for no more.
    pub fn machine_overviews_after<'a, S: DetailSource>(
        &'a self,
        source: &'a S,
        period: Period,
        after: Option<&str>,
    ) -> impl Iterator<Item = Result<MachineOverview, QueryError>> + 'a {
        use std::ops::Bound;
        let from = match after {
            Some(id) => Bound::Excluded(Id::from(id)),
            None => Bound::Unbounded,
        };
        self.machines
            .range((from, Bound::Unbounded))
            .map(move |(_, m)| {
                let r = self.machine_return_from(source, &m.id, period)?;
                Ok(MachineOverview {
                    machine: MachineStatus::from(m),
                    return_to_player: Some(r),
                })
            })
    }

    /// The machines after `after` (None: from the first), at most `limit` of them, in machine id
    /// order.
    pub fn machine_statuses_page(&self, after: Option<&str>, limit: usize) -> Vec<MachineStatus> {
        use std::ops::Bound;
        let from = match after {
            Some(id) => Bound::Excluded(Id::from(id)),
            None => Bound::Unbounded,
        };
        self.machines
            .range((from, Bound::Unbounded))
            .take(limit)
            .map(|(_, m)| MachineStatus::from(m))
            .collect()
    }

    /// Return to player of every machine of a model over `period`, from the detail the book
    /// holds.
    pub fn model_return(&self, model_id: &str, period: Period) -> Result<ReturnReport, QueryError> {
        self.model_return_from(&self.held(), model_id, period)
    }

    /// [`Book::model_return`] with the meter increases summed by `source`.
    pub fn model_return_from(
        &self,
        source: &impl DetailSource,
        model_id: &str,
        period: Period,
    ) -> Result<ReturnReport, QueryError> {
        let machines: Vec<&Machine> = self
            .machines
            .values()
            .filter(|m| &*m.model_id == model_id)
            .collect();
        if machines.is_empty() && !self.models.contains_key(model_id) {
            return Err(QueryError::unknown("model", model_id));
        }
        let mut r = self.sum_returns(source, &machines, period)?;
        r.model_id = Some(model_id.into());
        Ok(r)
    }

    fn sum_returns(
        &self,
        source: &impl DetailSource,
        machines: &[&Machine],
        period: Period,
    ) -> Result<ReturnReport, QueryError> {
        let mut r = ReturnReport {
            machine_id: None,
            model_id: None,
            machines: machines.iter().map(|m| m.id.clone()).collect(),
            period,
            readings: 0,
            coin_in_cents: 0,
            coin_out_cents: 0,
            jackpot_cents: 0,
            total_drop_cents: 0,
            games_played: 0,
            won_cents: 0,
            theoretical_rtp_bp: None,
            expected_rtp_bp: None,
            actual_bp: None,
            expected_won_e4: None,
            variance_e4: None,
            variance_cents: None,
            variance_bp: None,
            detail_from: source.detail_from(period),
        };
        let mut expected: Option<E4> = Some(0);
        let mut rtp: Option<u32> = None;
        let mut same_rtp = true;
        for m in machines {
            let sum = source.delta_sum(&m.id, period)?;
            let coin_in = sum.coin_in;
            r.readings = r.readings.saturating_add(sum.readings);
            r.coin_out_cents = r.coin_out_cents.saturating_add(sum.coin_out);
            r.jackpot_cents = r.jackpot_cents.saturating_add(sum.jackpot);
            r.total_drop_cents = r.total_drop_cents.saturating_add(sum.total_drop);
            r.games_played = r.games_played.saturating_add(sum.games_played);
            r.coin_in_cents = r.coin_in_cents.saturating_add(coin_in);
            match self.models.get(&*m.model_id) {
                Some(model) => {
                    match rtp {
                        None => rtp = Some(model.theoretical_rtp_bp),
                        Some(x) if x != model.theoretical_rtp_bp => same_rtp = false,
                        _ => {}
                    }
                    let bp =
                        i128::from(model.theoretical_rtp_bp).saturating_add(self.jackpot_bp(m));
                    // cents × bp = e4
                    expected = expected.map(|e| e.saturating_add(coin_in.saturating_mul(bp)));
                }
                None => expected = None,
            }
        }
        r.won_cents = r.coin_out_cents.saturating_add(r.jackpot_cents);
        r.theoretical_rtp_bp = if same_rtp { rtp } else { None };
        r.actual_bp = round_div(r.won_cents.saturating_mul(10_000), r.coin_in_cents);
        if let Some(exp) = expected
            && !machines.is_empty()
        {
            r.expected_won_e4 = Some(exp);
            r.expected_rtp_bp = round_div(exp, r.coin_in_cents);
            let var = r.won_cents.saturating_mul(E4_PER_CENT).saturating_sub(exp);
            r.variance_e4 = Some(var);
            r.variance_cents = round_div(var, E4_PER_CENT);
            r.variance_bp = round_div(var, r.coin_in_cents);
        }
        Ok(r)
    }

    /// Check the conservation invariant on every pool.
    pub fn conservation(&self) -> ConservationReport {
        let mut rep = ConservationReport {
            pools: Vec::new(),
            seeded_e4: 0,
            contributed_e4: 0,
            captive_e4: 0,
            awarded_e4: 0,
            transferred_out_e4: 0,
            transferred_in_e4: 0,
            holds: true,
        };
        let mut overflow = false;
        let mut acc = |a: &mut E4, b: E4| match a.checked_add(b) {
            Some(v) => *a = v,
            None => overflow = true,
        };
        for p in self.pools.values() {
            let t = p.totals;
            let lhs = t
                .seeded_e4
                .checked_add(t.contributed_e4)
                .and_then(|v| v.checked_add(t.transferred_in_e4));
            let rhs = p
                .captive_e4
                .checked_add(t.awarded_e4)
                .and_then(|v| v.checked_add(t.transferred_out_e4));
            let imbalance = match (lhs, rhs) {
                (Some(l), Some(r)) => l.checked_sub(r),
                _ => None,
            };
            if imbalance != Some(0) {
                rep.holds = false;
            }
            acc(&mut rep.seeded_e4, t.seeded_e4);
            acc(&mut rep.contributed_e4, t.contributed_e4);
            acc(&mut rep.captive_e4, p.captive_e4);
            acc(&mut rep.awarded_e4, t.awarded_e4);
            acc(&mut rep.transferred_out_e4, t.transferred_out_e4);
            acc(&mut rep.transferred_in_e4, t.transferred_in_e4);
            rep.pools.push(PoolConservation {
                pool_id: p.id.clone(),
                totals: t,
                captive_e4: p.captive_e4,
                imbalance_e4: imbalance.unwrap_or(E4::MAX),
            });
        }
        // Transfers only move value between pools: in and out balance over the whole book.
        if overflow || rep.transferred_in_e4 != rep.transferred_out_e4 {
            rep.holds = false;
        }
        rep
    }
}
