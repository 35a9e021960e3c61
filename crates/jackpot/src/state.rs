//! What the book keeps: models, machines with their meters and status, pools with their exact
//! captive values and history, IGJ authorisations, transfers. Everything is in `BTreeMap`s and
//! `Vec`s, so the serialised state is deterministic.

use std::collections::{BTreeMap, BTreeSet};

use rules_core::adjudication::Text;
use rules_core::{Cents, GameId, Id};
use serde::{Deserialize, Serialize};

use crate::amount::E4;
use crate::event::{JackpotTransfer, PoolKind};

/// Tunable thresholds, part of the state (so a replay uses the same ones).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// `SLOT_OBSERVED_RETURN_LOW` is considered only once a machine's lifetime coin-in reaches
    /// this many cents (default 10,000,000 = 100,000 euros: a statistical alert needs volume).
    pub observed_return_min_coin_in_cents: u64,
    /// The alert fires below this lifetime observed return (default 8000 bp, r.2).
    pub observed_return_alert_bp: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            observed_return_min_coin_in_cents: 10_000_000,
            observed_return_alert_bp: 8_000,
        }
    }
}

/// An approved machine model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Model {
    pub id: Id,
    pub theoretical_rtp_bp: u32,
    /// Sorted, without repetitions.
    pub bet_values_cents: Vec<Cents>,
    pub approval_ref: String,
    pub approved_at: u64,
    /// The return last flagged for the model itself (dedup of `SLOT_PAYTABLE_RETURN_BELOW_80`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) flagged_rtp_bp: Option<u32>,
    /// Approved program signatures (`ProgramApproved`), by component: (algorithm, signature).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub programs: BTreeMap<String, BTreeSet<(String, String)>>,
}

/// The last value of one meter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterState {
    pub value: u64,
    pub rollover: u64,
    /// Ledger index of the reading (or RAM clear) that set it.
    pub at: u64,
}

/// A fault mark: since when, and the fault code that set it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    pub since: u64,
    pub code: String,
    /// Shown by a meter reading (a mandatory meter missing, a meter that went back), not
    /// declared by an event: the play inside that reading came before anyone could know.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_reading: bool,
}

/// Games reported since the machine's last reading.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameTally {
    pub count: u64,
    pub wager_cents: i128,
    pub win_cents: i128,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
}

/// The meter increases credited at one reading (or at the "before" of a RAM clear). A field is
/// `None` when that meter was missing, or is its baseline, or went back: only reliable increases
/// are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterDelta {
    pub index: u64,
    pub at_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coin_in: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coin_out: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_drop: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jackpot: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games_played: Option<u64>,
}

/// A slot machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub id: Id,
    pub casino_id: Id,
    pub model_id: Id,
    /// Sorted, without repetitions.
    pub bet_values_cents: Vec<Cents>,
    pub registered_at: u64,
    /// Last value of every meter, by name.
    pub meters: BTreeMap<String, MeterState>,
    /// Ledger index of the last reading or RAM clear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reading: Option<u64>,
    /// The pools this machine feeds (derived from the pools' members).
    pub pools: BTreeSet<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_service: Option<Mark>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_majeure: Option<Mark>,
    /// Force majeure of the machine's part in some of its pools only (a superjackpot's link,
    /// controller or server: `MachineFault.pool_ids`), by pool: those pools cannot be awarded on
    /// this machine, which stays in service for everything else (r.6).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pool_force_majeure: BTreeMap<Id, Mark>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_fault: Option<Mark>,
    /// A "played while faulty / out of service" finding was already raised in this episode.
    #[serde(default)]
    pub(crate) play_flagged: bool,
    #[serde(default)]
    pub games: GameTally,
    /// Every credited meter increase, in ledger order (for return-to-player periods), while the
    /// book holds its detail ([`crate::Book::hand_out_detail`]).
    pub deltas: Vec<MeterDelta>,
    /// Credited increases handed out of `deltas` ([`crate::Book::hand_out_detail`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deltas_out: u64,
    /// The increases of the machine's latest day, until a later day's arrives (only while the
    /// book hands its detail out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<crate::detail::DayRunning>,
    /// Lifetime coin-in and prizes (coin_out + jackpot), for the observed-return alert.
    pub lifetime_coin_in_cents: i128,
    pub lifetime_won_cents: i128,
    #[serde(default)]
    pub(crate) observed_low_alerted: bool,
    /// (base, jackpot bp) last flagged by `SLOT_PAYTABLE_RETURN_BELOW_80`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) paytable_flag: Option<(u32, u64)>,
    /// (model bets, machine bets) last flagged by `SLOT_MODEL_CHANGED_UNAPPROVED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) bets_flag: Option<(Vec<Cents>, Vec<Cents>)>,
    /// What the machine's significant events left standing, from its first one on (absent
    /// before: a machine that reports none is checked and serialised as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Box<crate::significant::EventState>>,
}

/// A machine as the queries show it: its meters, status and lifetime figures, without
/// [`Machine::deltas`], the meter increases kept for return-to-player periods, which grow with
/// every reading (a period's return summarises them: [`crate::Book::machine_return`]). Field
/// names are the machine's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineStatus {
    pub id: Id,
    pub casino_id: Id,
    pub model_id: Id,
    /// Sorted, without repetitions.
    pub bet_values_cents: Vec<Cents>,
    pub registered_at: u64,
    /// Last value of every meter, by name.
    pub meters: BTreeMap<String, MeterState>,
    /// Ledger index of the last reading or RAM clear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reading: Option<u64>,
    /// The pools this machine feeds.
    pub pools: BTreeSet<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_service: Option<Mark>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_majeure: Option<Mark>,
    /// Force majeure of the machine's part in these pools only (see [`Machine`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pool_force_majeure: BTreeMap<Id, Mark>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_fault: Option<Mark>,
    /// Games reported since the last reading.
    pub games: GameTally,
    /// Readings with a credited meter increase: those held in `Machine::deltas` (after any
    /// pruning) and those handed out.
    pub credited_readings: u64,
    /// Lifetime coin-in and prizes (coin_out + jackpot).
    pub lifetime_coin_in_cents: i128,
    pub lifetime_won_cents: i128,
}

impl From<&Machine> for MachineStatus {
    fn from(m: &Machine) -> MachineStatus {
        MachineStatus {
            id: m.id.clone(),
            casino_id: m.casino_id.clone(),
            model_id: m.model_id.clone(),
            bet_values_cents: m.bet_values_cents.clone(),
            registered_at: m.registered_at,
            meters: m.meters.clone(),
            last_reading: m.last_reading,
            pools: m.pools.clone(),
            out_of_service: m.out_of_service.clone(),
            force_majeure: m.force_majeure.clone(),
            pool_force_majeure: m.pool_force_majeure.clone(),
            meter_fault: m.meter_fault.clone(),
            games: m.games.clone(),
            credited_readings: m
                .deltas_out
                .saturating_add(u64::try_from(m.deltas.len()).unwrap_or(u64::MAX)),
            lifetime_coin_in_cents: m.lifetime_coin_in_cents,
            lifetime_won_cents: m.lifetime_won_cents,
        }
    }
}

impl Machine {
    /// What r.6 compares: "mesmo modelo e apostas" (M8: same model id, same set of bets).
    pub fn signature(&self) -> (Id, Vec<Cents>) {
        (self.model_id.clone(), self.bet_values_cents.clone())
    }

    /// Under force majeure and not restored since.
    pub fn is_force_majeure(&self) -> bool {
        self.force_majeure.is_some()
    }

    /// Since when `pool_id` cannot be awarded on this machine: the machine's own force majeure,
    /// or its part in that pool's (its link, controller or server), whichever came first.
    pub fn force_majeure_for(&self, pool_id: &str) -> Option<&Mark> {
        match (
            self.force_majeure.as_ref(),
            self.pool_force_majeure.get(pool_id),
        ) {
            (Some(a), Some(b)) => Some(if b.since < a.since { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// A machine's membership of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Membership {
    pub joined_at: u64,
    /// The machine already had a coin_in reading when it joined: its next reading is its
    /// baseline for this pool (the increase it shows includes play from before the pool).
    pub baseline_pending: bool,
}

/// Contributions a machine reported for a pool since its last reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedTally {
    pub sum_cents: i128,
    pub reports: u64,
    pub first: u64,
}

/// Money totals of a pool since it was created, all exact (1/10,000 cent). Conservation:
/// `seeded + contributed + transferred_in = captive + awarded + transferred_out`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolTotals {
    /// Start value, plus the reset value after each award ("start values").
    pub seeded_e4: E4,
    pub contributed_e4: E4,
    /// Released by awards (the whole captive value at each award; table prizes as paid).
    pub awarded_e4: E4,
    pub transferred_in_e4: E4,
    pub transferred_out_e4: E4,
}

/// The last captive value a machine, controller or table declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconciliation {
    pub index: u64,
    pub at_ms: i64,
    pub reported_cents: Cents,
    pub due_e4: E4,
    pub ok: bool,
}

/// How a valid transfer's target qualified (r.6).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// "outra máquina ou grupo de máquinas do mesmo modelo e apostas".
    SameModelAndBets,
    /// "na sua falta, ... as máquinas que vierem a ser autorizadas pela Inspecção-Geral de Jogos".
    Authorized { authorization_id: Id, index: u64 },
}

/// One line of a pool's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolEntry {
    pub index: u64,
    pub at_ms: i64,
    pub kind: EntryKind,
}

/// What happened to a pool. (Externally tagged: serde cannot buffer `i128` through internally
/// tagged or flattened enums.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Created at its start value.
    Created { start_e4: E4 },
    /// Reconfigured (members, rate, reset value).
    Reconfigured {
        contribution_bp: u32,
        reset_value_cents: Cents,
        machines: Vec<Id>,
        tables: Vec<Id>,
    },
    /// Credited by a member: `base_cents` wagered (Δcoin_in) at the pool's rate, or a table
    /// round's contributions.
    Contribution {
        member: Id,
        base_cents: u64,
        amount_e4: E4,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        round_id: Option<Id>,
    },
    /// A declared captive value (or a table's display before a round) compared with the book's.
    Reconciliation {
        reported_cents: Cents,
        due_e4: E4,
        ok: bool,
    },
    /// An award: `due_e4` released from the pool, `paid_cents` reported; the pool then holds
    /// `reset_e4` if it was reset.
    Award {
        member: Id,
        winner: String,
        due_e4: E4,
        paid_cents: Cents,
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reset_e4: Option<E4>,
    },
    /// The source's whole captive value left for `to_pool` (r.5, r.6): what the casino holds
    /// in trust moved with the transfer it carried out, eligible or not. `route`: how the target
    /// qualified (absent: it did not); `codes`: the findings the transfer raised (empty: an
    /// eligible transfer of the right amount).
    TransferOut {
        transfer_id: Id,
        to_pool: Id,
        amount_e4: E4,
        reported_cents: Cents,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        route: Option<Route>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        codes: Vec<Text>,
    },
    TransferIn {
        transfer_id: Id,
        from_pool: Id,
        amount_e4: E4,
    },
    /// A transfer out of this pool that moved nothing: the same transfer id as one already
    /// booked, reported again. (Until issue 38 every ineligible transfer was recorded so; they
    /// are now booked as carried out: [`EntryKind::TransferOut`] with its codes.)
    TransferRejected {
        transfer_id: Id,
        to_pool: Id,
        reported_cents: Cents,
        codes: Vec<Text>,
    },
}

/// A jackpot, superjackpot or table jackpot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pool {
    pub id: Id,
    pub kind: PoolKind,
    pub casinos: BTreeSet<Id>,
    pub machines: BTreeMap<Id, Membership>,
    pub tables: BTreeSet<Id>,
    pub contribution_bp: u32,
    pub start_value_cents: Cents,
    pub reset_value_cents: Cents,
    pub configured_at: u64,
    /// Table jackpots: the game, from the rounds (chooses citations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameId>,
    /// The captive value, exact.
    pub captive_e4: E4,
    pub totals: PoolTotals,
    /// Lifetime contributions by member (machine or table), exact.
    pub contributed_by: BTreeMap<Id, E4>,
    /// Contributions machines reported since their last reading.
    pub reported: BTreeMap<Id, ReportedTally>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_report: Option<Reconciliation>,
    /// Ledger index of the last transfer out the book booked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transfer_out: Option<u64>,
    /// What transfers into this pool moved short of the whole value due (due − declared, exact;
    /// negative when more was declared), already flagged `SLOT_TRANSFER_AMOUNT_MISMATCH` or
    /// `SLOT_TRANSFER_DUPLICATE`. A declaration that is off by exactly this is that breach seen
    /// again, not a new one (one breach, one finding); it ends when a declaration shows the whole
    /// value, or at the award.
    #[serde(default, skip_serializing_if = "is_zero_e4")]
    pub transfer_shortfall_e4: E4,
    pub history: Vec<PoolEntry>,
    /// Lines no longer in `history`: dropped from its front by [`crate::Book::prune_before`] or
    /// handed out ([`crate::Book::hand_out_detail`]), so that a line's position (0 = the pool's
    /// first line) stays the same.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub history_pruned: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_e4(n: &E4) -> bool {
    *n == 0
}

impl Pool {
    /// Lines of history recorded since the pool was created (pruned ones included).
    pub fn history_lines(&self) -> u64 {
        self.history_pruned
            .saturating_add(u64::try_from(self.history.len()).unwrap_or(u64::MAX))
    }
}

/// A pool as the queries show it: its state without [`Pool::history`], which grows with every
/// contribution (page through it with [`crate::Book::pool_history_page`]). Field names are the
/// pool's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolStatus {
    pub id: Id,
    pub kind: PoolKind,
    pub casinos: BTreeSet<Id>,
    pub machines: BTreeMap<Id, Membership>,
    pub tables: BTreeSet<Id>,
    pub contribution_bp: u32,
    pub start_value_cents: Cents,
    pub reset_value_cents: Cents,
    pub configured_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameId>,
    pub captive_e4: E4,
    pub totals: PoolTotals,
    pub contributed_by: BTreeMap<Id, E4>,
    pub reported: BTreeMap<Id, ReportedTally>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_report: Option<Reconciliation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transfer_out: Option<u64>,
    #[serde(default, skip_serializing_if = "is_zero_e4")]
    pub transfer_shortfall_e4: E4,
    /// Lines of history recorded since the pool was created.
    pub history_lines: u64,
}

impl From<&Pool> for PoolStatus {
    fn from(p: &Pool) -> PoolStatus {
        PoolStatus {
            id: p.id.clone(),
            kind: p.kind,
            casinos: p.casinos.clone(),
            machines: p.machines.clone(),
            tables: p.tables.clone(),
            contribution_bp: p.contribution_bp,
            start_value_cents: p.start_value_cents,
            reset_value_cents: p.reset_value_cents,
            configured_at: p.configured_at,
            game: p.game,
            captive_e4: p.captive_e4,
            totals: p.totals,
            contributed_by: p.contributed_by.clone(),
            reported: p.reported.clone(),
            last_report: p.last_report,
            last_transfer_out: p.last_transfer_out,
            transfer_shortfall_e4: p.transfer_shortfall_e4,
            history_lines: p.history_lines(),
        }
    }
}

/// An IGJ authorisation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Authorization {
    pub id: Id,
    pub from_pool_id: Id,
    pub to_pool_id: Id,
    pub reference: String,
    pub at: u64,
}

/// A transfer event and what the book made of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferRecord {
    pub index: u64,
    pub at_ms: i64,
    pub transfer: JackpotTransfer,
    /// The book moved the source's whole captive value (`due_e4`) to the target: every transfer
    /// the casino carried out, eligible or not (r.5: what it holds in trust moved with it),
    /// except the repeat of a transfer id already booked. Eligible: booked and no `codes`.
    #[serde(alias = "accepted")]
    pub booked: bool,
    /// The source's whole captive value when the transfer was applied (what moved when booked).
    pub due_e4: E4,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<Text>,
}
