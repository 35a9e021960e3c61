//! The book: state, `apply`, and the configuration events (machines, models, pools,
//! authorisations).
//!
//! Every handler first validates and computes (read-only, with checked arithmetic), then commits:
//! an [`ApplyError`] therefore always leaves the book exactly as it was.

use std::collections::{BTreeMap, BTreeSet};

use rules_core::{Cents, Confidence, Id, MAX_AMOUNT_CENTS};
use serde::{Deserialize, Serialize};

use crate::amount::e4;
use crate::detail::{DAY_MS, DayRunning, Detail, Held};
use crate::error::ApplyError;
use crate::event::{
    COIN_IN, Event, EventCtx, MachineRegistered, ModelApproved, PoolConfigured, PoolKind,
    TransferAuthorized,
};
use crate::finding::{Finding, MODEL_CHANGED_UNAPPROVED, PAYTABLE_RETURN_BELOW_80};
use crate::state::{
    Authorization, EntryKind, Machine, Membership, Model, Pool, PoolEntry, PoolTotals, Settings,
    TransferRecord,
};

/// The minimum return of a pay table, in basis points (P217/2007 T.III r.2: "pelo menos, 80%").
pub const MIN_RETURN_BP: u32 = 8_000;

/// The accounting state of the machines, models, pools and transfers of a ledger.
///
/// Deterministic: the same events applied in the same order give byte-identical serialised state
/// and findings (only `BTreeMap`s, no floats, no clocks).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Book {
    pub(crate) settings: Settings,
    pub(crate) last_index: Option<u64>,
    pub(crate) models: BTreeMap<Id, Model>,
    pub(crate) machines: BTreeMap<Id, Machine>,
    pub(crate) pools: BTreeMap<Id, Pool>,
    pub(crate) authorizations: BTreeMap<Id, Authorization>,
    pub(crate) transfers: Vec<TransferRecord>,
    /// The operator's configuration-change authorisations (`MachineChangeAuthorized`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) change_auths: BTreeMap<Id, crate::significant::ChangeAuth>,
    pub(crate) findings: Vec<Finding>,
    /// Where the per-event detail still held begins, after [`Book::prune_detail`] (absent: all
    /// of it is held). Not serialised while absent, so an unpruned book's state is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) detail_from: Option<DetailHorizon>,
    /// The per-event detail is handed out, not held ([`Book::hand_out_detail`]). Not
    /// serialised while false, so a holding book's state is unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) hand_out: bool,
    /// Detail handed out and not yet taken ([`Book::take_detail`]). Never serialised: a caller
    /// takes it after every `apply`, before it snapshots.
    #[serde(skip)]
    pub(crate) outbox: Vec<Detail>,
}

/// The first ledger entry (index and receipt time) whose per-event detail a pruned [`Book`]
/// still holds: history lines, meter increases, findings and repeated (unbooked) transfers before it were
/// dropped ([`Book::prune_detail`]). Totals, captive values, meters, statuses and booked
/// transfers cover the whole ledger regardless.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetailHorizon {
    pub index: u64,
    pub at_ms: i64,
}

impl Book {
    /// An empty book with the default [`Settings`].
    pub fn new() -> Book {
        Book::default()
    }

    /// An empty book with `settings`.
    pub fn with_settings(settings: Settings) -> Book {
        Book {
            settings,
            ..Book::default()
        }
    }

    /// Apply one event. Returns the findings it raises (also kept in [`Book::findings`]).
    ///
    /// An event the book cannot make sense of (unknown pool or machine, negative amount, meter
    /// above its rollover, index not after the last one) is an [`ApplyError`] naming the field,
    /// and changes nothing. A rule breach is a [`Finding`], never an error.
    pub fn apply(&mut self, event: &Event, ctx: EventCtx) -> Result<Vec<Finding>, ApplyError> {
        if let Some(last) = self.last_index
            && ctx.ledger_index <= last
        {
            return Err(ApplyError::OutOfOrder {
                index: ctx.ledger_index,
                last,
            });
        }
        let mut findings = match event {
            Event::MachineRegistered(e) => self.on_machine_registered(e, ctx)?,
            Event::ModelApproved(e) => self.on_model_approved(e, ctx)?,
            Event::PoolConfigured(e) => self.on_pool_configured(e, ctx)?,
            Event::MeterReading(e) => self.on_meter_reading(e, ctx)?,
            Event::GamePlayed(e) => self.on_game_played(e, ctx)?,
            Event::JackpotContribution(e) => self.on_contribution_reported(e, ctx)?,
            Event::CaptiveValueReported(e) => self.on_captive_reported(e, ctx)?,
            Event::JackpotAwarded(e) => {
                let mut out = self.on_award(e, ctx)?;
                out.extend(self.award_hit_check(e, ctx));
                out
            }
            Event::MachineFault(e) => self.on_fault(e, ctx)?,
            Event::MachineRestored(e) => self.on_restored(e, ctx)?,
            Event::RamClear(e) => self.on_ram_clear(e, ctx)?,
            Event::JackpotTransfer(e) => self.on_transfer(e, ctx)?,
            Event::TransferAuthorized(e) => self.on_authorization(e, ctx)?,
            Event::TableJackpotRound(e) => self.on_table_round(e, ctx)?,
            Event::MachineEvent(e) => self.on_machine_event(e, ctx)?,
            Event::ChangeAuthorized(e) => self.on_change_authorized(e, ctx)?,
            Event::ProgramApproved(e) => self.on_program_approved(e, ctx)?,
        };
        for f in &mut findings {
            if f.evidence.last() != Some(&ctx.ledger_index) {
                f.evidence.push(ctx.ledger_index);
                f.evidence.sort_unstable();
                f.evidence.dedup();
            }
        }
        self.last_index = Some(ctx.ledger_index);
        if self.hand_out {
            self.hand_out_after(event);
        } else {
            self.findings.extend(findings.iter().cloned());
        }
        Ok(findings)
    }

    /// Hand the per-event detail out instead of holding it: from now on, after every
    /// [`Book::apply`], the new pool history lines, meter increases and day totals wait in an
    /// outbox ([`Book::take_detail`]) instead of growing the book, and the book keeps no copy
    /// of its findings (the caller records them). What the book already holds goes to the
    /// outbox now. Queries then read the detail from where the caller stored it (a
    /// [`crate::DetailSource`]); through [`Book::held`] they are [`crate::QueryError::NotHeld`].
    /// Which detail is handed out, and when, depends on the events alone, so two books fed the
    /// same events hand out the same records.
    pub fn hand_out_detail(&mut self) {
        if self.hand_out {
            return;
        }
        self.hand_out = true;
        self.findings.clear();
        let ids: Vec<Id> = self.pools.keys().cloned().collect();
        self.hand_out_lines(ids.iter());
        let ids: Vec<Id> = self.machines.keys().cloned().collect();
        for id in &ids {
            self.hand_out_deltas(id);
            self.hand_out_events(id);
        }
    }

    /// Whether the book hands its detail out ([`Book::hand_out_detail`]).
    pub fn hands_out(&self) -> bool {
        self.hand_out
    }

    /// The detail handed out since the last call, in the order it arose.
    pub fn take_detail(&mut self) -> Vec<Detail> {
        std::mem::take(&mut self.outbox)
    }

    /// The detail this book holds, as a query source.
    pub fn held(&self) -> Held<'_> {
        Held(self)
    }

    /// After `event` was applied: move what it added to the detail into the outbox. Only the
    /// pools and machine an event names can gain detail (a reading credits the machine's pools;
    /// a transfer writes to both of its pools); a test on the simulated floor checks that no
    /// detail stays behind.
    fn hand_out_after(&mut self, event: &Event) {
        match event {
            Event::MeterReading(e) => {
                self.hand_out_machine(&e.machine_id);
            }
            Event::RamClear(e) => {
                self.hand_out_machine(&e.machine_id);
            }
            Event::PoolConfigured(e) => self.hand_out_lines([&e.pool_id].into_iter()),
            Event::CaptiveValueReported(e) => self.hand_out_lines([&e.pool_id].into_iter()),
            Event::JackpotAwarded(e) => self.hand_out_lines([&e.pool_id].into_iter()),
            Event::TableJackpotRound(e) => self.hand_out_lines([&e.pool_id].into_iter()),
            Event::JackpotTransfer(e) => {
                self.hand_out_lines([&e.from_pool_id, &e.to_pool_id].into_iter())
            }
            Event::MachineRegistered(_)
            | Event::ModelApproved(_)
            | Event::GamePlayed(_)
            | Event::JackpotContribution(_)
            | Event::MachineFault(_)
            | Event::MachineRestored(_)
            | Event::TransferAuthorized(_)
            | Event::ChangeAuthorized(_)
            | Event::ProgramApproved(_) => {}
            Event::MachineEvent(e) => self.hand_out_events(&e.machine_id),
        }
    }

    fn hand_out_machine(&mut self, machine_id: &str) {
        let pools: Vec<Id> = self
            .machines
            .get(machine_id)
            .map(|m| m.pools.iter().cloned().collect())
            .unwrap_or_default();
        self.hand_out_lines(pools.iter());
        self.hand_out_deltas(machine_id);
    }

    fn hand_out_lines<'a>(&mut self, ids: impl Iterator<Item = &'a Id>) {
        for id in ids {
            let Some(pool) = self.pools.get_mut(id) else {
                continue;
            };
            let lines = std::mem::take(&mut pool.history);
            for (position, entry) in (pool.history_pruned..).zip(lines) {
                self.outbox.push(Detail::PoolLine {
                    pool_id: pool.id.clone(),
                    position,
                    entry,
                });
                pool.history_pruned = position.saturating_add(1);
            }
        }
    }

    fn hand_out_deltas(&mut self, machine_id: &str) {
        let Some(m) = self.machines.get_mut(machine_id) else {
            return;
        };
        for delta in std::mem::take(&mut m.deltas) {
            // Receipt times never go back on a ledger; were they to, an increase would count in
            // the machine's latest day, so that no day is totalled twice.
            let day = delta
                .at_ms
                .div_euclid(DAY_MS)
                .max(m.day.map_or(i64::MIN, |r| r.day));
            match &mut m.day {
                Some(run) if run.day == day => run.sum.add(&delta),
                running => {
                    if let Some(done) = running.take() {
                        self.outbox.push(Detail::DayTotal {
                            machine_id: m.id.clone(),
                            day: done.day,
                            sum: done.sum,
                        });
                    }
                    let mut sum = crate::DeltaSum::default();
                    sum.add(&delta);
                    *running = Some(DayRunning { day, sum });
                }
            }
            m.deltas_out = m.deltas_out.saturating_add(1);
            self.outbox.push(Detail::Delta {
                machine_id: m.id.clone(),
                delta,
            });
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Index of the last applied event.
    pub fn last_index(&self) -> Option<u64> {
        self.last_index
    }

    /// Every finding raised so far, in ledger order (none kept while the book hands its detail
    /// out: the caller records what [`Book::apply`] returns).
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    pub fn model(&self, id: &str) -> Option<&Model> {
        self.models.get(id)
    }

    pub fn models(&self) -> impl Iterator<Item = &Model> {
        self.models.values()
    }

    pub fn machine(&self, id: &str) -> Option<&Machine> {
        self.machines.get(id)
    }

    pub fn machines(&self) -> impl Iterator<Item = &Machine> {
        self.machines.values()
    }

    pub fn pool(&self, id: &str) -> Option<&Pool> {
        self.pools.get(id)
    }

    pub fn pools(&self) -> impl Iterator<Item = &Pool> {
        self.pools.values()
    }

    pub fn authorizations(&self) -> impl Iterator<Item = &Authorization> {
        self.authorizations.values()
    }

    /// Every transfer event, booked or repeated, in ledger order.
    pub fn transfers(&self) -> &[TransferRecord] {
        &self.transfers
    }

    /// Drop the per-event detail recorded before ledger index `index` — pool history lines,
    /// machines' meter increases, findings, repeated (unbooked) transfers — to bound memory on a long-lived
    /// ledger. Captive values, totals (so the conservation invariant), meters, statuses,
    /// authorisations and booked transfers (needed to detect a repeated transfer id) are kept;
    /// history and return-to-player queries then cover `index` onwards only. Deterministic: a
    /// daemon that prunes at the same indexes on every replay gets the same state.
    pub fn prune_before(&mut self, index: u64) {
        for p in self.pools.values_mut() {
            let before = p.history.len();
            p.history.retain(|e| e.index >= index);
            let dropped = before.saturating_sub(p.history.len());
            p.history_pruned = p
                .history_pruned
                .saturating_add(u64::try_from(dropped).unwrap_or(u64::MAX));
        }
        for m in self.machines.values_mut() {
            m.deltas.retain(|d| d.index >= index);
            if let Some(ev) = m.events.as_mut() {
                let before = ev.log.len();
                ev.log.retain(|l| l.index >= index);
                let dropped = before.saturating_sub(ev.log.len());
                ev.logged_out = ev
                    .logged_out
                    .saturating_add(u64::try_from(dropped).unwrap_or(u64::MAX));
            }
        }
        self.findings
            .retain(|f| f.evidence.last().is_none_or(|i| *i >= index));
        self.transfers.retain(|t| t.booked || t.index >= index);
    }

    /// [`Book::prune_before`] `horizon.index`, remembering the horizon, so that queries over
    /// a period that reaches before it say their detail starts there
    /// ([`ReturnReport::detail_from`](crate::ReturnReport)). Findings never depend on the
    /// detail dropped (only queries read it), so pruning at any point changes no finding.
    pub fn prune_detail(&mut self, horizon: DetailHorizon) {
        if self.detail_from.is_some_and(|h| h.index >= horizon.index) {
            return;
        }
        self.prune_before(horizon.index);
        self.detail_from = Some(horizon);
    }

    /// Where the detail still held begins (absent: nothing was pruned).
    pub fn detail_from(&self) -> Option<DetailHorizon> {
        self.detail_from
    }

    // ------------------------------------------------------------------ configuration events

    fn on_machine_registered(
        &mut self,
        e: &MachineRegistered,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("machine_id", &e.machine_id)?;
        check_id("casino_id", &e.casino_id)?;
        check_id("model_id", &e.model_id)?;
        let bets = norm_bets("bet_values_cents", &e.bet_values_cents)?;
        match self.machines.get_mut(&*e.machine_id) {
            Some(m) => {
                if m.casino_id != e.casino_id {
                    // Keep the pools' casino lists covering their members.
                    for p in &m.pools {
                        if let Some(pool) = self.pools.get_mut(p) {
                            pool.casinos.insert(e.casino_id.clone());
                        }
                    }
                }
                m.casino_id = e.casino_id.clone();
                m.model_id = e.model_id.clone();
                m.bet_values_cents = bets;
            }
            None => {
                self.machines.insert(
                    e.machine_id.clone(),
                    Machine {
                        id: e.machine_id.clone(),
                        casino_id: e.casino_id.clone(),
                        model_id: e.model_id.clone(),
                        bet_values_cents: bets,
                        registered_at: ctx.ledger_index,
                        meters: BTreeMap::new(),
                        last_reading: None,
                        pools: BTreeSet::new(),
                        out_of_service: None,
                        force_majeure: None,
                        pool_force_majeure: BTreeMap::new(),
                        meter_fault: None,
                        play_flagged: false,
                        games: Default::default(),
                        deltas: Vec::new(),
                        deltas_out: 0,
                        day: None,
                        lifetime_coin_in_cents: 0,
                        lifetime_won_cents: 0,
                        observed_low_alerted: false,
                        paytable_flag: None,
                        bets_flag: None,
                        events: None,
                    },
                );
            }
        }
        Ok(self.evaluate_machines(std::slice::from_ref(&e.machine_id)))
    }

    fn on_model_approved(
        &mut self,
        e: &ModelApproved,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("model_id", &e.model_id)?;
        let bets = norm_bets("bet_values_cents", &e.bet_values_cents)?;
        let flagged = self.models.get(&*e.model_id).and_then(|m| m.flagged_rtp_bp);
        let programs = self
            .models
            .get(&*e.model_id)
            .map(|m| m.programs.clone())
            .unwrap_or_default();
        self.models.insert(
            e.model_id.clone(),
            Model {
                id: e.model_id.clone(),
                theoretical_rtp_bp: e.theoretical_rtp_bp,
                bet_values_cents: bets,
                approval_ref: e.approval_ref.clone(),
                approved_at: ctx.ledger_index,
                flagged_rtp_bp: flagged,
                programs,
            },
        );
        let members: Vec<Id> = self
            .machines
            .values()
            .filter(|m| m.model_id == e.model_id)
            .map(|m| m.id.clone())
            .collect();
        let mut out = Vec::new();
        if members.is_empty() {
            // No installed machine yet: the pay table is judged alone (no jackpot can count).
            if let Some(model) = self.models.get_mut(&*e.model_id) {
                if e.theoretical_rtp_bp < MIN_RETURN_BP {
                    if model.flagged_rtp_bp != Some(e.theoretical_rtp_bp) {
                        model.flagged_rtp_bp = Some(e.theoretical_rtp_bp);
                        out.push(
                            Finding::new(
                                &PAYTABLE_RETURN_BELOW_80,
                                format!(
                                    "model `{}` is approved with a pay-table return of {} bp, below the \
                                     8000 bp (80%) minimum",
                                    e.model_id, e.theoretical_rtp_bp
                                ),
                            )
                            .model(&e.model_id),
                        );
                    }
                } else {
                    model.flagged_rtp_bp = None;
                }
            }
        } else {
            out.extend(self.evaluate_machines(&members));
        }
        Ok(out)
    }

    fn on_pool_configured(
        &mut self,
        e: &PoolConfigured,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        // ---- validate
        check_id("pool_id", &e.pool_id)?;
        let (nm, nt) = (e.member_machine_ids.len(), e.member_table_ids.len());
        match e.kind {
            PoolKind::Jackpot if nm != 1 || nt != 0 => {
                return Err(ApplyError::invalid(
                    "member_machine_ids",
                    format!(
                        "a jackpot belongs to exactly one machine and no table (r.3), got {nm} machine(s) and {nt} table(s)"
                    ),
                ));
            }
            PoolKind::Superjackpot if nm == 0 || nt != 0 => {
                return Err(ApplyError::invalid(
                    "member_machine_ids",
                    format!(
                        "a superjackpot groups one or more machines and no table (r.4), got {nm} machine(s) and {nt} table(s)"
                    ),
                ));
            }
            PoolKind::TableJackpot if nt == 0 || nm != 0 => {
                return Err(ApplyError::invalid(
                    "member_table_ids",
                    format!(
                        "a table jackpot has one or more tables and no machine, got {nm} machine(s) and {nt} table(s)"
                    ),
                ));
            }
            _ => {}
        }
        if e.contribution_bp > 10_000 {
            return Err(ApplyError::invalid(
                "contribution_bp",
                format!("{} bp is above 100%", e.contribution_bp),
            ));
        }
        check_cents("start_value_cents", e.start_value_cents)?;
        check_cents("reset_value_cents", e.reset_value_cents)?;
        let mut machines = BTreeSet::new();
        for (i, m) in e.member_machine_ids.iter().enumerate() {
            let field = format!("member_machine_ids[{i}]");
            check_id(&field, m)?;
            if !self.machines.contains_key(&**m) {
                return Err(ApplyError::unknown(field, "machine", m));
            }
            if !machines.insert(m.clone()) {
                return Err(ApplyError::invalid(
                    field,
                    format!("machine `{m}` is listed twice"),
                ));
            }
        }
        let mut tables = BTreeSet::new();
        for (i, t) in e.member_table_ids.iter().enumerate() {
            let field = format!("member_table_ids[{i}]");
            check_id(&field, t)?;
            if !tables.insert(t.clone()) {
                return Err(ApplyError::invalid(
                    field,
                    format!("table `{t}` is listed twice"),
                ));
            }
        }
        let mut casinos = BTreeSet::new();
        for (i, c) in e.casino_ids.iter().enumerate() {
            check_id(&format!("casino_ids[{i}]"), c)?;
            casinos.insert(c.clone());
        }
        let member_casino = |m: &Id| self.machines.get(&**m).map(|m| m.casino_id.clone());
        if casinos.is_empty() {
            if e.kind == PoolKind::TableJackpot {
                return Err(ApplyError::invalid(
                    "casino_ids",
                    "required for a table jackpot (tables are not registered with the book)",
                ));
            }
            casinos.extend(machines.iter().filter_map(member_casino));
        } else {
            for m in &machines {
                if let Some(c) = member_casino(m)
                    && !casinos.contains(&c)
                {
                    return Err(ApplyError::invalid(
                        "casino_ids",
                        format!("machine `{m}` is in casino `{c}`, which the pool does not list"),
                    ));
                }
            }
        }
        if let Some(p) = self.pools.get(&*e.pool_id)
            && p.kind != e.kind
        {
            return Err(ApplyError::invalid(
                "kind",
                format!(
                    "pool `{}` is a {:?}; its kind cannot change",
                    e.pool_id, p.kind
                ),
            ));
        }

        // ---- commit
        let idx = ctx.ledger_index;
        let mut out = Vec::new();
        let membership = |id: &Id, machines: &BTreeMap<Id, Machine>| Membership {
            joined_at: idx,
            baseline_pending: machines
                .get(&**id)
                .is_some_and(|m| m.meters.contains_key(COIN_IN)),
        };
        let mut affected: BTreeSet<Id> = machines.clone();
        match self.pools.get_mut(&*e.pool_id) {
            None => {
                let start = e4(e.start_value_cents);
                let members = machines
                    .iter()
                    .map(|m| (m.clone(), membership(m, &self.machines)))
                    .collect();
                self.pools.insert(
                    e.pool_id.clone(),
                    Pool {
                        id: e.pool_id.clone(),
                        kind: e.kind,
                        casinos,
                        machines: members,
                        tables,
                        contribution_bp: e.contribution_bp,
                        start_value_cents: e.start_value_cents,
                        reset_value_cents: e.reset_value_cents,
                        configured_at: idx,
                        game: None,
                        captive_e4: start,
                        totals: PoolTotals {
                            seeded_e4: start,
                            ..PoolTotals::default()
                        },
                        contributed_by: BTreeMap::new(),
                        reported: BTreeMap::new(),
                        last_report: None,
                        last_transfer_out: None,
                        transfer_shortfall_e4: 0,
                        history: vec![PoolEntry {
                            index: idx,
                            at_ms: ctx.at_ms,
                            kind: EntryKind::Created { start_e4: start },
                        }],
                        history_pruned: 0,
                    },
                );
            }
            Some(pool) => {
                if pool.contribution_bp != e.contribution_bp {
                    out.push(
                        Finding::new(
                            &MODEL_CHANGED_UNAPPROVED,
                            format!(
                                "pool `{}`: contribution rate changed from {} bp to {} bp by a reconfiguration, \
                                 with no approval event",
                                e.pool_id, pool.contribution_bp, e.contribution_bp
                            ),
                        )
                        .pool(&e.pool_id)
                        .evidence([pool.configured_at]),
                    );
                }
                let old: BTreeSet<Id> = pool.machines.keys().cloned().collect();
                for gone in old.difference(&machines) {
                    pool.machines.remove(gone);
                    pool.reported.remove(gone);
                    if let Some(m) = self.machines.get_mut(gone) {
                        m.pools.remove(&e.pool_id);
                        m.pool_force_majeure.remove(&e.pool_id);
                    }
                }
                for new in machines.difference(&old) {
                    pool.machines
                        .insert(new.clone(), membership(new, &self.machines));
                }
                affected.extend(old);
                pool.casinos = casinos;
                pool.tables = tables;
                pool.contribution_bp = e.contribution_bp;
                pool.reset_value_cents = e.reset_value_cents;
                pool.configured_at = idx;
                pool.history.push(PoolEntry {
                    index: idx,
                    at_ms: ctx.at_ms,
                    kind: EntryKind::Reconfigured {
                        contribution_bp: e.contribution_bp,
                        reset_value_cents: e.reset_value_cents,
                        machines: machines.iter().cloned().collect(),
                        tables: pool.tables.iter().cloned().collect(),
                    },
                });
            }
        }
        for m in &machines {
            if let Some(m) = self.machines.get_mut(&**m) {
                m.pools.insert(e.pool_id.clone());
            }
        }
        let affected: Vec<Id> = affected.into_iter().collect();
        out.extend(self.evaluate_machines(&affected));
        Ok(out)
    }

    fn on_authorization(
        &mut self,
        e: &TransferAuthorized,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("authorization_id", &e.authorization_id)?;
        check_id("from_pool_id", &e.from_pool_id)?;
        check_id("to_pool_id", &e.to_pool_id)?;
        if let Some(a) = self.authorizations.get(&*e.authorization_id) {
            if a.from_pool_id == e.from_pool_id && a.to_pool_id == e.to_pool_id {
                return Ok(Vec::new());
            }
            return Err(ApplyError::invalid(
                "authorization_id",
                format!(
                    "`{}` already authorises `{}` → `{}`",
                    a.id, a.from_pool_id, a.to_pool_id
                ),
            ));
        }
        // The target pool may not exist yet: r.6 lets the IGJ authorise machines "que vierem a
        // ser autorizadas", which the casino then groups into a pool.
        self.authorizations.insert(
            e.authorization_id.clone(),
            Authorization {
                id: e.authorization_id.clone(),
                from_pool_id: e.from_pool_id.clone(),
                to_pool_id: e.to_pool_id.clone(),
                reference: e.reference.clone(),
                at: ctx.ledger_index,
            },
        );
        Ok(Vec::new())
    }

    /// Re-run the configuration checks of `ids` (r.2 return, r.8 bets), raising a finding only
    /// when a machine's verdict changes.
    fn evaluate_machines(&mut self, ids: &[Id]) -> Vec<Finding> {
        let Book {
            machines,
            models,
            pools,
            ..
        } = self;
        let mut out = Vec::new();
        for id in ids {
            let Some(m) = machines.get_mut(&**id) else {
                continue;
            };
            let Some(model) = models.get(&*m.model_id) else {
                continue;
            };
            // r.8: the machine offers only bets its approved model lists.
            let extra: Vec<Cents> = m
                .bet_values_cents
                .iter()
                .copied()
                .filter(|b| model.bet_values_cents.binary_search(b).is_err())
                .collect();
            if extra.is_empty() {
                m.bets_flag = None;
            } else {
                let key = (model.bet_values_cents.clone(), m.bet_values_cents.clone());
                if m.bets_flag.as_ref() != Some(&key) {
                    out.push(
                        Finding::new(
                            &MODEL_CHANGED_UNAPPROVED,
                            format!(
                                "machine `{}` offers bets {:?} that its model `{}` is not approved for (approved: {:?})",
                                m.id, extra, model.id, model.bet_values_cents
                            ),
                        )
                        .machine(&m.id)
                        .model(&model.id)
                        .casino(&m.casino_id)
                        .evidence([model.approved_at, m.registered_at]),
                    );
                    m.bets_flag = Some(key);
                }
            }
            // r.2 with r.3/r.4 ("sem prejuízo da percentagem"): reading (i) of M5 — the base
            // pay table alone must return 80% — is the conservative one; a machine below 80%
            // only under it (its jackpot contributions would lift it over) is for review.
            let base = model.theoretical_rtp_bp;
            let jackpot_bp: u64 = m
                .pools
                .iter()
                .filter_map(|p| pools.get(p))
                .filter(|p| p.kind.is_machine_pool())
                .map(|p| u64::from(p.contribution_bp))
                .fold(0, u64::saturating_add);
            if base >= MIN_RETURN_BP {
                m.paytable_flag = None;
            } else if m.paytable_flag != Some((base, jackpot_bp)) {
                let total = u64::from(base).saturating_add(jackpot_bp);
                let (confidence, how) = if total < u64::from(MIN_RETURN_BP) {
                    (
                        Confidence::Certain,
                        format!(
                            "below 80% even with its {jackpot_bp} bp of jackpot contributions ({total} bp)"
                        ),
                    )
                } else {
                    (
                        Confidence::Review,
                        format!(
                            "80% is reached only by counting its {jackpot_bp} bp of jackpot contributions ({total} bp), \
                             which r.3/r.4 allow \"sem prejuízo\" of the 80% (machines.md M5)"
                        ),
                    )
                };
                out.push(
                    Finding::new(
                        &PAYTABLE_RETURN_BELOW_80,
                        format!(
                            "machine `{}`: model `{}` pay table returns {base} bp; {how}",
                            m.id, model.id
                        ),
                    )
                    .confidence(confidence)
                    .machine(&m.id)
                    .model(&model.id)
                    .casino(&m.casino_id)
                    .evidence([model.approved_at]),
                );
                m.paytable_flag = Some((base, jackpot_bp));
            }
        }
        out
    }
}

// ------------------------------------------------------------------------ validation helpers

pub(crate) fn check_id(field: &str, id: &str) -> Result<(), ApplyError> {
    if id.is_empty() {
        return Err(ApplyError::invalid(field, "must not be empty"));
    }
    Ok(())
}

/// An amount in cents: 0 ..= [`MAX_AMOUNT_CENTS`].
pub(crate) fn check_cents(field: &str, v: Cents) -> Result<(), ApplyError> {
    if v < 0 {
        return Err(ApplyError::invalid(
            field,
            format!("must not be negative, got {v}"),
        ));
    }
    if v > MAX_AMOUNT_CENTS {
        return Err(ApplyError::invalid(
            field,
            format!("{v} is above the ledger's ceiling of {MAX_AMOUNT_CENTS} cents"),
        ));
    }
    Ok(())
}

/// Bet values: each positive and at most the ceiling; returned sorted without repetitions (M8:
/// order irrelevant).
fn norm_bets(field: &str, bets: &[Cents]) -> Result<Vec<Cents>, ApplyError> {
    for (i, b) in bets.iter().enumerate() {
        if *b <= 0 {
            return Err(ApplyError::invalid(
                format!("{field}[{i}]"),
                format!("a bet value must be positive, got {b}"),
            ));
        }
        check_cents(&format!("{field}[{i}]"), *b)?;
    }
    let mut v = bets.to_vec();
    v.sort_unstable();
    v.dedup();
    Ok(v)
}
