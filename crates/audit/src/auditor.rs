//! The audit state machine.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Debug;
use std::sync::Arc;

use rules_core::{
    Adjudication, Cents, ConfigError, EventKind, GameId, Outcome, Round, RoundError, RoundEvent,
    Settlement, Severity, TableConfig, Violation,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::clock::{DeviceClocks, Drift};
use crate::finding::{CLOCK_CITATION, Finding, FindingsDigest, RECORD_INTEGRITY, codes};
use crate::input::{AuditInput, EntryMeta};
use crate::report::RoundSummary;

/// The rule engines, as the audit sees them. Implemented by the `rules` crate for every game;
/// tests implement it with toy engines.
pub trait Adjudicator {
    /// A table configuration compiled for its engine.
    type Table: Send + Sync + 'static;
    /// The engine's state of one table between rounds.
    type State: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + 'static;

    /// Whether a rule engine exists for `game`.
    fn has_engine(&self, game: GameId) -> bool;
    /// Check and compile a configuration; also returns the violations the configuration shows.
    fn configure(&self, config: &TableConfig)
    -> Result<(Self::Table, Vec<Violation>), ConfigError>;
    /// The state of a freshly opened table.
    fn fresh_state(&self, table: &Self::Table) -> Self::State;
    /// Adjudicate one round (state updated in place on success, untouched on error).
    fn adjudicate(
        &self,
        table: &Self::Table,
        state: &mut Self::State,
        round: &Round,
    ) -> Result<Adjudication, RoundError>;
}

/// Where the audit reads a table jackpot's value before a round (the jackpot accounts).
pub trait JackpotValues {
    /// The captive value of pool `pool_id` in cents, if the pool is known.
    fn value_cents(&self, pool_id: &str) -> Option<Cents>;
}

/// No jackpot accounts: table jackpot prizes that depend on the pool's value cannot be priced
/// and the engines say so.
pub struct NoJackpots;

impl JackpotValues for NoJackpots {
    fn value_cents(&self, _: &str) -> Option<Cents> {
        None
    }
}

/// Tunables. Part of the audit's definition: a replay must use the same settings as the live run
/// to give the same findings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditSettings {
    /// A round still open this long after it was opened (ledger time) is a finding.
    pub round_timeout_ms: i64,
    /// How many settled round ids per table are remembered to tell "after settlement" from
    /// "outside any round".
    pub closed_rounds_remembered: usize,
    /// Keep each round's table state before adjudication in its summary (for re-adjudication
    /// with an explanation). Costs a serialisation per round; does not change any finding.
    #[serde(default)]
    pub keep_round_states: bool,
    /// Most rounds one table may have open at once. Opening one more abandons the table's
    /// oldest open round (a finding): a table system that never settles must not make the audit
    /// hold its rounds, and every snapshot carry them, for ever.
    #[serde(default = "default_max_open_rounds")]
    pub max_open_rounds: usize,
    /// Most events held for one round. Past it the round's further events are counted, not
    /// held, and the round is not adjudicated (a finding when it passes the limit and one when
    /// it closes): a device looping on one round must not exhaust the audit's memory.
    #[serde(default = "default_max_round_events")]
    pub max_round_events: usize,
    /// A device whose events' own times are off the ledger's received time by more than this
    /// (ms) is a finding, once per episode ([`crate::clock`]); 0: not checked.
    #[serde(default = "default_device_clock_drift_ms")]
    pub device_clock_drift_ms: i64,
}

/// [`AuditSettings::device_clock_drift_ms`]' default: a minute. Clocks kept by NTP are within
/// milliseconds; a minute leaves room for a slow network and an agent's queue, and is far
/// below the five minutes ahead at which ingest refuses an event (`ingest.max_future_skew_ms`).
pub const DEVICE_CLOCK_DRIFT_MS: i64 = 60_000;

fn default_device_clock_drift_ms() -> i64 {
    DEVICE_CLOCK_DRIFT_MS
}

/// [`AuditSettings::max_open_rounds`]' default: a table plays one round at a time, a few at
/// most where rounds overlap.
pub const MAX_OPEN_ROUNDS: usize = 64;
/// [`AuditSettings::max_round_events`]' default: a full roulette table with every player
/// covering the layout chip by chip is a few hundred bets.
pub const MAX_ROUND_EVENTS: usize = 10_000;

fn default_max_open_rounds() -> usize {
    MAX_OPEN_ROUNDS
}

fn default_max_round_events() -> usize {
    MAX_ROUND_EVENTS
}

impl Default for AuditSettings {
    fn default() -> Self {
        AuditSettings {
            round_timeout_ms: 30 * 60 * 1000,
            closed_rounds_remembered: 4096,
            keep_round_states: false,
            max_open_rounds: MAX_OPEN_ROUNDS,
            max_round_events: MAX_ROUND_EVENTS,
            device_clock_drift_ms: DEVICE_CLOCK_DRIFT_MS,
        }
    }
}

/// What one input produced.
#[derive(Debug, Default)]
pub struct Output {
    /// New findings, in sequence order.
    pub findings: Vec<Finding>,
    /// Rounds closed (settled or voided) by this input.
    pub rounds: Vec<RoundSummary>,
    /// The adjudications of those rounds (for the jackpot accounts and the round query).
    pub adjudications: Vec<Adjudication>,
}

/// A table configuration in force, compiled.
struct Configured<A: Adjudicator> {
    config: TableConfig,
    /// Ledger index of the configuration event.
    index: u64,
    table: A::Table,
}

enum TableSetup<A: Adjudicator> {
    /// A usable configuration.
    Ready(Arc<Configured<A>>),
    /// The latest configuration was refused (by the engine or for want of an engine).
    Refused {
        config: Box<TableConfig>,
        index: u64,
    },
}

struct TableSlot<A: Adjudicator> {
    setup: Option<TableSetup<A>>,
    state: Option<A::State>,
    /// Game of `state`, to start afresh when a table changes game.
    state_game: Option<GameId>,
    open: BTreeMap<String, OpenRound<A>>,
    closed: VecDeque<String>,
    closed_set: BTreeSet<String>,
    /// Rounds abandoned unsettled (too many open at once), remembered as closed ones are, so
    /// that what comes for them later is flagged as theirs.
    abandoned: VecDeque<String>,
    abandoned_set: BTreeSet<String>,
}

/// Remember `id` in a bounded list and its set, forgetting the oldest past `keep`.
fn remember(list: &mut VecDeque<String>, set: &mut BTreeSet<String>, id: &str, keep: usize) {
    list.push_back(id.to_string());
    set.insert(id.to_string());
    while list.len() > keep {
        if let Some(old) = list.pop_front() {
            set.remove(&old);
        }
    }
}

impl<A: Adjudicator> Default for TableSlot<A> {
    fn default() -> Self {
        TableSlot {
            setup: None,
            state: None,
            state_game: None,
            open: BTreeMap::new(),
            closed: VecDeque::new(),
            closed_set: BTreeSet::new(),
            abandoned: VecDeque::new(),
            abandoned_set: BTreeSet::new(),
        }
    }
}

struct OpenRound<A: Adjudicator> {
    /// The configuration in force when the round opened (`None`: none usable; already flagged).
    config: Option<Arc<Configured<A>>>,
    opened_index: u64,
    opened_ms: i64,
    events: Vec<RoundEvent>,
    /// Ledger index of each event.
    indexes: Vec<u64>,
    /// Events past [`AuditSettings::max_round_events`], counted and not held.
    events_not_held: u64,
    timed_out: bool,
    outcome_seen: bool,
    no_more_bets_seen: bool,
}

/// The audit: feed it the ledger's entries in order.
pub struct Auditor<A: Adjudicator> {
    engines: A,
    settings: AuditSettings,
    tables: BTreeMap<String, TableSlot<A>>,
    /// Open rounds by deadline: (deadline, table, round).
    deadlines: BTreeSet<(i64, String, String)>,
    position: Option<u64>,
    digest: FindingsDigest,
    /// Rounds closed (settled or voided) and adjudicated so far.
    rounds_closed: u64,
    /// Devices whose clocks drift ([`crate::clock`]).
    clocks: DeviceClocks,
}

impl<A: Adjudicator> Auditor<A> {
    /// An auditor at genesis.
    pub fn new(engines: A, settings: AuditSettings) -> Auditor<A> {
        Auditor {
            engines,
            settings,
            tables: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            position: None,
            digest: FindingsDigest::default(),
            rounds_closed: 0,
            clocks: DeviceClocks::default(),
        }
    }

    /// The own time of an event (`occurred_at_ms`, by its signer's clock) at the entry `meta`,
    /// against the ledger's received time: a device clock drift finding once per episode
    /// ([`crate::clock`]). Call before [`Auditor::apply`] of the same entry.
    pub fn device_clock(&mut self, meta: &EntryMeta, occurred_at_ms: i64) -> Output {
        let mut out = Output::default();
        let threshold = self.settings.device_clock_drift_ms;
        if threshold <= 0 || self.position.is_some_and(|p| meta.index <= p) {
            return out;
        }
        let Some(drift) = self.clocks.observe(
            &meta.signer,
            meta.index,
            meta.received_at_ms,
            occurred_at_ms,
            threshold,
        ) else {
            return out;
        };
        let dev = &meta.signer;
        let (message, evidence) = match drift {
            Drift::Ahead { ms } => (
                format!(
                    "{dev}'s clock is ahead: its event occurred {ms} ms after the ledger received it (threshold {threshold} ms)"
                ),
                vec![meta.index],
            ),
            Drift::Behind { ms, since_index } => (
                format!(
                    "{dev}'s clock is behind: its events have reached the ledger more than {threshold} ms after they occurred since entry {since_index}, {ms} ms at this one"
                ),
                vec![since_index, meta.index],
            ),
        };
        let f = Finding {
            severity: Severity::Low,
            code: codes::DEVICE_CLOCK_DRIFT.to_string(),
            citation: CLOCK_CITATION.to_string(),
            device_id: Some(dev.clone()),
            evidence,
            message,
            ..self.blank(meta)
        };
        self.emit(f, &mut out);
        out
    }

    /// Rounds closed and adjudicated so far.
    pub fn rounds_closed(&self) -> u64 {
        self.rounds_closed
    }

    /// Ledger index of the last input applied.
    pub fn position(&self) -> Option<u64> {
        self.position
    }

    /// The running digest over every finding so far.
    pub fn digest(&self) -> FindingsDigest {
        self.digest
    }

    pub fn settings(&self) -> &AuditSettings {
        &self.settings
    }

    /// Number of rounds currently open.
    pub fn open_rounds(&self) -> usize {
        self.tables.values().map(|t| t.open.len()).sum()
    }

    /// The configuration in force at `table_id`, if any usable.
    pub fn table_config(&self, table_id: &str) -> Option<&TableConfig> {
        match self.tables.get(table_id)?.setup.as_ref()? {
            TableSetup::Ready(c) => Some(&c.config),
            TableSetup::Refused { .. } => None,
        }
    }

    /// Apply one ledger entry. Entries must come in chain order; an entry at or before the current
    /// position is ignored (replay is idempotent).
    pub fn apply(&mut self, meta: &EntryMeta, input: AuditInput) -> Output {
        self.apply_with(meta, input, &NoJackpots)
    }

    /// [`Auditor::apply`], reading table jackpot values from `jackpots`.
    pub fn apply_with(
        &mut self,
        meta: &EntryMeta,
        input: AuditInput,
        jackpots: &dyn JackpotValues,
    ) -> Output {
        let mut out = Output::default();
        if self.position.is_some_and(|p| meta.index <= p) {
            return out;
        }
        self.expire(meta, &mut out);
        match input {
            AuditInput::TableConfigured { table_id, config } => {
                self.on_configured(meta, table_id, config, &mut out)
            }
            AuditInput::UnknownGame {
                table_id,
                casino_id,
                game,
            } => {
                let slot = self.tables.entry(table_id.clone()).or_default();
                slot.setup = None;
                let f = Finding {
                    severity: Severity::High,
                    code: codes::NO_ENGINE.to_string(),
                    citation: RECORD_INTEGRITY.to_string(),
                    casino_id: Some(casino_id),
                    table_id: Some(table_id.clone()),
                    message: format!(
                        "table {table_id} is configured for `{game}`, which is not a game of the regulations: no rule engine"
                    ),
                    ..self.blank(meta)
                };
                self.emit(f, &mut out);
            }
            AuditInput::RoundOpened { table_id, round_id } => {
                self.on_opened(meta, table_id, round_id, &mut out)
            }
            AuditInput::RoundEvent {
                table_id,
                round_id,
                event,
            } => self.on_event(meta, &table_id, &round_id, event, &mut out),
            AuditInput::RoundSettled {
                table_id,
                round_id,
                settlement,
            } => self.on_closed(
                meta, &table_id, &round_id, settlement, None, jackpots, &mut out,
            ),
            AuditInput::RoundVoided {
                table_id,
                round_id,
                reason,
            } => {
                let settlement = Settlement {
                    void: true,
                    ..Settlement::default()
                };
                self.on_closed(
                    meta,
                    &table_id,
                    &round_id,
                    settlement,
                    Some(reason),
                    jackpots,
                    &mut out,
                )
            }
            AuditInput::Security {
                code,
                device_id,
                message,
                mut evidence,
            } => {
                evidence.push(meta.index);
                evidence.sort_unstable();
                evidence.dedup();
                let f = Finding {
                    severity: Severity::Critical,
                    code,
                    citation: "casino-ledger ingest: one event per device sequence number"
                        .to_string(),
                    device_id: Some(device_id),
                    evidence,
                    message,
                    ..self.blank(meta)
                };
                self.emit(f, &mut out);
            }
            AuditInput::Tick => {}
        }
        self.position = Some(meta.index);
        out
    }

    /// Fold a finding made elsewhere (the jackpot accounts) into the audit's one sequence and
    /// digest, so one query and one digest cover everything. `f.seq` and `f.id` are set here.
    pub fn record_external(&mut self, f: Finding) -> Finding {
        let mut out = Output::default();
        self.emit(f, &mut out);
        out.findings.pop().unwrap_or_default()
    }

    /// A finding with nothing but the entry's index and time set.
    pub fn blank(&self, meta: &EntryMeta) -> Finding {
        Finding {
            id: String::new(),
            seq: 0,
            severity: Severity::Info,
            confidence: Default::default(),
            code: String::new(),
            citation: String::new(),
            casino_id: None,
            table_id: None,
            machine_id: None,
            pool_id: None,
            device_id: None,
            game: None,
            round_id: None,
            bet_id: None,
            due_cents: None,
            reported_cents: None,
            evidence: vec![meta.index],
            at_ms: meta.received_at_ms,
            message: String::new(),
        }
    }

    /// A finding about `table_id` (casino and game from its configuration).
    fn table_finding(
        &self,
        meta: &EntryMeta,
        table_id: &str,
        code: &str,
        severity: Severity,
        message: String,
    ) -> Finding {
        let config = self
            .tables
            .get(table_id)
            .and_then(|t| match t.setup.as_ref()? {
                TableSetup::Ready(c) => Some(&c.config),
                TableSetup::Refused { config, .. } => Some(config),
            });
        Finding {
            severity,
            code: code.to_string(),
            citation: RECORD_INTEGRITY.to_string(),
            casino_id: config.and_then(|c| c.casino_id.clone()),
            table_id: Some(table_id.to_string()),
            game: config.map(|c| c.game),
            message,
            ..self.blank(meta)
        }
    }

    fn emit(&mut self, mut f: Finding, out: &mut Output) {
        f.seq = self.digest.count;
        f.evidence.sort_unstable();
        f.evidence.dedup();
        f.seal();
        self.digest.add(&f);
        out.findings.push(f);
    }

    /// Flag every open round whose deadline has passed by this entry's receive time.
    fn expire(&mut self, meta: &EntryMeta, out: &mut Output) {
        while let Some(first) = self.deadlines.first() {
            if first.0 >= meta.received_at_ms {
                break;
            }
            let Some((deadline, table_id, round_id)) = self.deadlines.pop_first() else {
                break;
            };
            let Some(round) = self
                .tables
                .get_mut(&table_id)
                .and_then(|t| t.open.get_mut(&round_id))
            else {
                continue;
            };
            if round.timed_out {
                continue;
            }
            round.timed_out = true;
            let opened_index = round.opened_index;
            let message = format!(
                "round {round_id} at table {table_id} opened at ledger index {opened_index} and not settled within {} s (deadline {deadline} ms)",
                self.settings.round_timeout_ms / 1000
            );
            let mut f = self.table_finding(
                meta,
                &table_id,
                codes::ROUND_NOT_SETTLED,
                Severity::Medium,
                message,
            );
            f.round_id = Some(round_id);
            f.evidence = vec![opened_index];
            self.emit(f, out);
        }
    }

    fn on_configured(
        &mut self,
        meta: &EntryMeta,
        table_id: String,
        config: TableConfig,
        out: &mut Output,
    ) {
        let game = config.game;
        if !self.engines.has_engine(game) {
            let slot = self.tables.entry(table_id.clone()).or_default();
            slot.setup = Some(TableSetup::Refused {
                config: Box::new(config),
                index: meta.index,
            });
            let f = self.table_finding(
                meta,
                &table_id,
                codes::NO_ENGINE,
                Severity::High,
                format!("table {table_id} is configured for {game}, which has no rule engine"),
            );
            self.emit(f, out);
            return;
        }
        match self.engines.configure(&config) {
            Ok((table, violations)) => {
                let configured = Arc::new(Configured {
                    config,
                    index: meta.index,
                    table,
                });
                let slot = self.tables.entry(table_id.clone()).or_default();
                if slot.state_game != Some(game) || slot.state.is_none() {
                    slot.state = Some(self.engines.fresh_state(&configured.table));
                    slot.state_game = Some(game);
                }
                slot.setup = Some(TableSetup::Ready(configured));
                for v in violations {
                    let mut f = self.table_finding(
                        meta,
                        &table_id,
                        &v.code,
                        v.severity,
                        format!("table {table_id} configuration: {}", v.message),
                    );
                    f.citation = v.citation.into_owned();
                    f.confidence = v.confidence;
                    self.emit(f, out);
                }
            }
            Err(e) => {
                let slot = self.tables.entry(table_id.clone()).or_default();
                slot.setup = Some(TableSetup::Refused {
                    config: Box::new(config),
                    index: meta.index,
                });
                let f = self.table_finding(
                    meta,
                    &table_id,
                    codes::TABLE_CONFIG_REJECTED,
                    Severity::High,
                    format!("table {table_id}: configuration refused: {e}"),
                );
                self.emit(f, out);
            }
        }
    }

    fn on_opened(
        &mut self,
        meta: &EntryMeta,
        table_id: String,
        round_id: String,
        out: &mut Output,
    ) {
        let slot = self.tables.entry(table_id.clone()).or_default();
        if slot.open.contains_key(&round_id)
            || slot.closed_set.contains(&round_id)
            || slot.abandoned_set.contains(&round_id)
        {
            let mut f = self.table_finding(
                meta,
                &table_id,
                codes::ROUND_REOPENED,
                Severity::High,
                format!("round {round_id} at table {table_id} is opened a second time"),
            );
            f.round_id = Some(round_id);
            self.emit(f, out);
            return;
        }
        let config = match slot.setup.as_ref() {
            Some(TableSetup::Ready(c)) => Some(c.clone()),
            Some(TableSetup::Refused { index, .. }) => {
                let index = *index;
                self.flag_unconfigured(meta, &table_id, &round_id, Some(index), out);
                None
            }
            None => {
                self.flag_unconfigured(meta, &table_id, &round_id, None, out);
                None
            }
        };
        while self
            .tables
            .get(&table_id)
            .is_some_and(|t| t.open.len() >= self.settings.max_open_rounds.max(1))
        {
            self.abandon_oldest(meta, &table_id, out);
        }
        let slot = self.tables.entry(table_id.clone()).or_default();
        slot.open.insert(
            round_id.clone(),
            OpenRound {
                config,
                opened_index: meta.index,
                opened_ms: meta.received_at_ms,
                events: Vec::new(),
                indexes: Vec::new(),
                events_not_held: 0,
                timed_out: false,
                outcome_seen: false,
                no_more_bets_seen: false,
            },
        );
        let deadline = meta
            .received_at_ms
            .saturating_add(self.settings.round_timeout_ms);
        self.deadlines.insert((deadline, table_id, round_id));
    }

    fn flag_unconfigured(
        &mut self,
        meta: &EntryMeta,
        table_id: &str,
        round_id: &str,
        refused_at: Option<u64>,
        out: &mut Output,
    ) {
        let message = match refused_at {
            Some(i) => format!(
                "round {round_id} opened at table {table_id}, whose configuration (ledger index {i}) was refused: the round cannot be adjudicated"
            ),
            None => format!(
                "round {round_id} opened at table {table_id}, which has no configuration on the ledger: the round cannot be adjudicated"
            ),
        };
        let mut f = self.table_finding(
            meta,
            table_id,
            codes::TABLE_NOT_CONFIGURED,
            Severity::High,
            message,
        );
        f.round_id = Some(round_id.to_string());
        if let Some(i) = refused_at {
            f.evidence.push(i);
        }
        self.emit(f, out);
    }

    /// A finding for an input that names a round that is not open.
    fn flag_not_open(
        &mut self,
        meta: &EntryMeta,
        table_id: &str,
        round_id: &str,
        what: &str,
        out: &mut Output,
    ) {
        let slot = self.tables.get(table_id);
        let closed = slot.is_some_and(|t| t.closed_set.contains(round_id));
        let abandoned = slot.is_some_and(|t| t.abandoned_set.contains(round_id));
        let (code, message) = if abandoned {
            (
                codes::ROUND_ABANDONED,
                format!(
                    "{what} for round {round_id} at table {table_id}, which the audit abandoned unsettled"
                ),
            )
        } else if closed {
            (
                codes::EVENT_AFTER_SETTLEMENT,
                format!(
                    "{what} for round {round_id} at table {table_id} after the round was settled"
                ),
            )
        } else {
            (
                codes::EVENT_OUTSIDE_ROUND,
                format!("{what} for round {round_id} at table {table_id}, which was never opened"),
            )
        };
        let mut f = self.table_finding(meta, table_id, code, Severity::High, message);
        f.round_id = Some(round_id.to_string());
        self.emit(f, out);
    }

    /// Stop holding the open round of `table_id` that opened first: its table has
    /// [`AuditSettings::max_open_rounds`] open and opens another.
    fn abandon_oldest(&mut self, meta: &EntryMeta, table_id: &str, out: &mut Output) {
        let keep = self.settings.closed_rounds_remembered;
        let Some(slot) = self.tables.get_mut(table_id) else {
            return;
        };
        let Some(oldest) = slot
            .open
            .iter()
            .min_by_key(|(_, r)| r.opened_index)
            .map(|(id, _)| id.clone())
        else {
            return;
        };
        let Some(round) = slot.open.remove(&oldest) else {
            return;
        };
        remember(&mut slot.abandoned, &mut slot.abandoned_set, &oldest, keep);
        let deadline = round
            .opened_ms
            .saturating_add(self.settings.round_timeout_ms);
        self.deadlines
            .remove(&(deadline, table_id.to_string(), oldest.clone()));
        let message = format!(
            "round {oldest} at table {table_id}, opened at ledger index {} and not settled, is abandoned: the table has {} rounds open and opens another; the round is not adjudicated",
            round.opened_index, self.settings.max_open_rounds
        );
        let mut f = self.table_finding(
            meta,
            table_id,
            codes::ROUND_ABANDONED,
            Severity::High,
            message,
        );
        f.round_id = Some(oldest);
        f.evidence.push(round.opened_index);
        self.emit(f, out);
    }

    fn on_event(
        &mut self,
        meta: &EntryMeta,
        table_id: &str,
        round_id: &str,
        event: RoundEvent,
        out: &mut Output,
    ) {
        let Some(round) = self
            .tables
            .get_mut(table_id)
            .and_then(|t| t.open.get_mut(round_id))
        else {
            let what = event.kind.noun();
            self.flag_not_open(meta, table_id, round_id, what, out);
            return;
        };
        if round.events.len() >= self.settings.max_round_events {
            round.events_not_held = round.events_not_held.saturating_add(1);
            if round.events_not_held == 1 {
                let opened_index = round.opened_index;
                let message = format!(
                    "round {round_id} at table {table_id} has more than {} events: the audit holds no more of them and will not adjudicate the round",
                    self.settings.max_round_events
                );
                let mut f = self.table_finding(
                    meta,
                    table_id,
                    codes::ROUND_TOO_LONG,
                    Severity::High,
                    message,
                );
                f.round_id = Some(round_id.to_string());
                f.evidence.push(opened_index);
                self.emit(f, out);
            }
            return;
        }
        let game = round.config.as_ref().map(|c| c.config.game);
        match &event.kind {
            EventKind::Bet(bet) if round.outcome_seen && !round.no_more_bets_seen => {
                // The engines flag bets after "no more bets" with their own late-bet codes; a
                // bet after the outcome with no call recorded is the audit's to flag.
                let message = format!(
                    "bet {} ({}, {} cents) recorded at table {table_id} in round {round_id} after the outcome",
                    bet.id, bet.bet_type, bet.amount_cents
                );
                let bet_id = bet.id.to_string();
                round.events.push(event);
                round.indexes.push(meta.index);
                let mut f = self.table_finding(
                    meta,
                    table_id,
                    codes::BET_AFTER_OUTCOME,
                    Severity::High,
                    message,
                );
                f.round_id = Some(round_id.to_string());
                f.bet_id = Some(bet_id);
                self.emit(f, out);
                return;
            }
            EventKind::NoMoreBets => round.no_more_bets_seen = true,
            EventKind::Ball { .. }
                if matches!(
                    game,
                    Some(
                        GameId::RouletteAmerican
                            | GameId::RouletteFrench
                            | GameId::RouletteFrenchOnline
                    )
                ) =>
            {
                round.outcome_seen = true
            }
            EventKind::Dice { .. } if game == Some(GameId::Cussec) => round.outcome_seen = true,
            _ => {}
        }
        round.events.push(event);
        round.indexes.push(meta.index);
    }

    #[allow(clippy::too_many_arguments)]
    fn on_closed(
        &mut self,
        meta: &EntryMeta,
        table_id: &str,
        round_id: &str,
        settlement: Settlement,
        void_reason: Option<String>,
        jackpots: &dyn JackpotValues,
        out: &mut Output,
    ) {
        let Some(slot) = self.tables.get_mut(table_id) else {
            let what = if void_reason.is_some() {
                "void declaration"
            } else {
                "settlement"
            };
            self.flag_not_open(meta, table_id, round_id, what, out);
            return;
        };
        let Some(open) = slot.open.remove(round_id) else {
            let what = if void_reason.is_some() {
                "void declaration"
            } else {
                "settlement"
            };
            self.flag_not_open(meta, table_id, round_id, what, out);
            return;
        };
        // Remember the closed id (bounded, oldest forgotten first).
        remember(
            &mut slot.closed,
            &mut slot.closed_set,
            round_id,
            self.settings.closed_rounds_remembered,
        );
        let deadline = open
            .opened_ms
            .saturating_add(self.settings.round_timeout_ms);
        self.deadlines
            .remove(&(deadline, table_id.to_string(), round_id.to_string()));
        if open.events_not_held > 0 {
            let held = open.events.len();
            let mut f = self.table_finding(
                meta,
                table_id,
                codes::ROUND_TOO_LONG,
                Severity::High,
                format!(
                    "round {round_id} at table {table_id} closed with {} events, of which the audit held {held}: it is not adjudicated",
                    (held as u64).saturating_add(open.events_not_held)
                ),
            );
            f.round_id = Some(round_id.to_string());
            f.evidence.push(open.opened_index);
            self.emit(f, out);
            return;
        }

        // A round at an unusable table was flagged when it opened.
        let Some(configured) = open.config.clone() else {
            return;
        };
        let Some(state) = slot.state.as_mut() else {
            return;
        };
        let round = Round {
            round_id: round_id.into(),
            opened_at_ms: Some(open.opened_ms),
            jackpot_before_cents: configured
                .config
                .jackpot
                .as_ref()
                .and_then(|j| j.pool_id.as_deref())
                .and_then(|p| jackpots.value_cents(p)),
            events: open.events,
            settlement: Some(settlement),
        };
        let state_before = if self.settings.keep_round_states {
            serde_json::to_string(&*state).ok()
        } else {
            None
        };
        match self.engines.adjudicate(&configured.table, state, &round) {
            Ok(adj) => self.record(
                state_before,
                meta,
                table_id,
                &configured,
                &round,
                &open.indexes,
                open.opened_index,
                void_reason,
                adj,
                out,
            ),
            Err(e) => {
                let mut f = self.table_finding(
                    meta,
                    table_id,
                    codes::ROUND_UNREADABLE,
                    Severity::High,
                    format!("the rule engine cannot read the record: {e}"),
                );
                f.round_id = Some(round_id.to_string());
                f.evidence.extend_from_slice(&open.indexes);
                f.evidence.push(open.opened_index);
                self.emit(f, out);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        state_before: Option<String>,
        meta: &EntryMeta,
        table_id: &str,
        configured: &Configured<A>,
        round: &Round,
        indexes: &[u64],
        opened_index: u64,
        void_reason: Option<String>,
        adj: Adjudication,
        out: &mut Output,
    ) {
        let config = &configured.config;
        let base = Finding {
            casino_id: config.casino_id.clone(),
            table_id: Some(table_id.to_string()),
            game: Some(config.game),
            round_id: Some(round.round_id.to_string()),
            ..self.blank(meta)
        };
        for v in &adj.violations {
            let mut evidence = vec![meta.index];
            if let Some(i) = v.event_index.and_then(|i| indexes.get(i as usize)) {
                evidence.push(*i);
            }
            let f = Finding {
                severity: v.severity,
                confidence: v.confidence,
                code: v.code.to_string(),
                citation: v.citation.to_string(),
                bet_id: v.bet_id.as_ref().map(|b| b.to_string()),
                evidence,
                message: v.message.clone(),
                ..base.clone()
            };
            self.emit(f, out);
        }
        for d in &adj.discrepancies {
            let mut evidence = vec![meta.index];
            if let Some(i) = placement_index(round, indexes, &d.bet_id) {
                evidence.push(i);
            }
            let reported = match d.reported_net_cents {
                Some(r) => format!("{r} cents reported"),
                None => "nothing reported".to_string(),
            };
            let f = Finding {
                severity: Severity::High,
                confidence: d.confidence,
                code: d.code.to_string(),
                citation: d.citation.to_string(),
                bet_id: Some(d.bet_id.to_string()),
                due_cents: Some(d.due_net_cents),
                reported_cents: d.reported_net_cents,
                evidence,
                message: format!(
                    "bet {} in round {} at table {table_id}: {} cents due, {reported}",
                    d.bet_id, round.round_id, d.due_net_cents
                ),
                ..base.clone()
            };
            self.emit(f, out);
        }

        let mut summary = RoundSummary {
            table_id: table_id.to_string(),
            casino_id: config.casino_id.clone(),
            game: config.game,
            round_id: round.round_id.to_string(),
            config_index: configured.index,
            opened_index,
            closed_index: meta.index,
            opened_ms: round.opened_at_ms.unwrap_or(meta.received_at_ms),
            closed_ms: meta.received_at_ms,
            void: adj.void.is_some() || void_reason.is_some(),
            bets: 0,
            handle_cents: 0,
            due_player_net_cents: 0,
            reported_player_net_cents: 0,
            house_due_cents: adj.house.iter().map(|h| h.amount_cents).sum(),
            house_reported_cents: round
                .settlement
                .as_ref()
                .and_then(|s| s.house_cents)
                .unwrap_or(0),
            discrepancies: adj.discrepancies.len() as u32,
            discrepancy_abs_cents: adj
                .discrepancies
                .iter()
                .map(|d| {
                    d.due_net_cents
                        .saturating_sub(d.reported_net_cents.unwrap_or(0))
                        .saturating_abs()
                })
                .fold(0, Cents::saturating_add),
            findings: 0,
            event_indexes: indexes.to_vec(),
            jackpot_before_cents: round.jackpot_before_cents,
            jackpot_pool_id: config.jackpot.as_ref().and_then(|j| j.pool_id.clone()),
            state_before,
        };
        for b in &adj.bets {
            summary.bets += 1;
            if matches!(
                b.outcome,
                Outcome::Won | Outcome::Lost | Outcome::Push | Outcome::Forfeited
            ) {
                summary.handle_cents = summary.handle_cents.saturating_add(b.stake_cents);
            }
            summary.due_player_net_cents =
                summary.due_player_net_cents.saturating_add(b.due_net_cents);
            summary.reported_player_net_cents = summary
                .reported_player_net_cents
                .saturating_add(b.reported_net_cents.unwrap_or(0));
        }
        summary.findings = (adj.violations.len() + adj.discrepancies.len()) as u32;
        self.rounds_closed += 1;
        out.rounds.push(summary);
        out.adjudications.push(adj);
    }

    /// Everything needed to resume: serialisable, and restored with [`Auditor::restore`].
    pub fn snapshot(&self) -> AuditorSnapshot<A::State> {
        let mut tables = BTreeMap::new();
        for (id, slot) in &self.tables {
            let (config, config_index, refused) = match &slot.setup {
                Some(TableSetup::Ready(c)) => (Some(c.config.clone()), Some(c.index), false),
                Some(TableSetup::Refused { config, index }) => {
                    (Some((**config).clone()), Some(*index), true)
                }
                None => (None, None, false),
            };
            let open = slot
                .open
                .iter()
                .map(|(rid, r)| OpenRoundSnapshot {
                    round_id: rid.clone(),
                    config: r.config.as_ref().map(|c| (c.config.clone(), c.index)),
                    opened_index: r.opened_index,
                    opened_ms: r.opened_ms,
                    events: r.events.clone(),
                    indexes: r.indexes.clone(),
                    events_not_held: r.events_not_held,
                    timed_out: r.timed_out,
                    outcome_seen: r.outcome_seen,
                    no_more_bets_seen: r.no_more_bets_seen,
                })
                .collect();
            tables.insert(
                id.clone(),
                TableSnapshot {
                    config,
                    config_index,
                    refused,
                    state: slot.state.clone(),
                    state_game: slot.state_game,
                    open,
                    closed: slot.closed.iter().cloned().collect(),
                    abandoned: slot.abandoned.iter().cloned().collect(),
                },
            );
        }
        AuditorSnapshot {
            settings: self.settings.clone(),
            position: self.position,
            digest: self.digest,
            rounds_closed: self.rounds_closed,
            tables,
            clocks: self.clocks.clone(),
        }
    }

    /// Resume from a snapshot. Configurations are compiled again (deterministically).
    pub fn restore(engines: A, snap: AuditorSnapshot<A::State>) -> Result<Auditor<A>, ConfigError> {
        let mut compiled: Vec<Arc<Configured<A>>> = Vec::new();
        let mut compile = |engines: &A,
                           config: &TableConfig,
                           index: u64|
         -> Result<Arc<Configured<A>>, ConfigError> {
            if let Some(c) = compiled
                .iter()
                .find(|c| c.index == index && &c.config == config)
            {
                return Ok(c.clone());
            }
            let (table, _) = engines.configure(config)?;
            let c = Arc::new(Configured {
                config: config.clone(),
                index,
                table,
            });
            compiled.push(c.clone());
            Ok(c)
        };
        let mut tables = BTreeMap::new();
        let mut deadlines = BTreeSet::new();
        for (id, t) in snap.tables {
            let setup = match (t.config, t.config_index) {
                (Some(config), Some(index)) if t.refused => Some(TableSetup::Refused {
                    config: Box::new(config),
                    index,
                }),
                (Some(config), Some(index)) => {
                    Some(TableSetup::Ready(compile(&engines, &config, index)?))
                }
                _ => None,
            };
            let mut open = BTreeMap::new();
            for r in t.open {
                let config = match &r.config {
                    Some((c, i)) => Some(compile(&engines, c, *i)?),
                    None => None,
                };
                if !r.timed_out {
                    deadlines.insert((
                        r.opened_ms.saturating_add(snap.settings.round_timeout_ms),
                        id.clone(),
                        r.round_id.clone(),
                    ));
                }
                open.insert(
                    r.round_id,
                    OpenRound {
                        config,
                        opened_index: r.opened_index,
                        opened_ms: r.opened_ms,
                        events: r.events,
                        indexes: r.indexes,
                        events_not_held: r.events_not_held,
                        timed_out: r.timed_out,
                        outcome_seen: r.outcome_seen,
                        no_more_bets_seen: r.no_more_bets_seen,
                    },
                );
            }
            let closed_set = t.closed.iter().cloned().collect();
            let abandoned_set = t.abandoned.iter().cloned().collect();
            tables.insert(
                id,
                TableSlot {
                    setup,
                    state: t.state,
                    state_game: t.state_game,
                    open,
                    closed: t.closed.into(),
                    closed_set,
                    abandoned: t.abandoned.into(),
                    abandoned_set,
                },
            );
        }
        Ok(Auditor {
            engines,
            settings: snap.settings,
            tables,
            deadlines,
            position: snap.position,
            digest: snap.digest,
            rounds_closed: snap.rounds_closed,
            clocks: snap.clocks,
        })
    }
}

/// The ledger index where bet `bet_id` was placed in this round, if it was placed in it.
fn placement_index(round: &Round, indexes: &[u64], bet_id: &str) -> Option<u64> {
    round
        .events
        .iter()
        .zip(indexes)
        .find_map(|(e, i)| match &e.kind {
            EventKind::Bet(b) if &*b.id == bet_id => Some(*i),
            _ => None,
        })
}

/// Serialisable form of an [`Auditor`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "S: DeserializeOwned"))]
pub struct AuditorSnapshot<S> {
    pub settings: AuditSettings,
    pub position: Option<u64>,
    pub digest: FindingsDigest,
    #[serde(default)]
    pub rounds_closed: u64,
    pub tables: BTreeMap<String, TableSnapshot<S>>,
    #[serde(default)]
    pub clocks: DeviceClocks,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "S: DeserializeOwned"))]
pub struct TableSnapshot<S> {
    pub config: Option<TableConfig>,
    pub config_index: Option<u64>,
    pub refused: bool,
    pub state: Option<S>,
    pub state_game: Option<GameId>,
    pub open: Vec<OpenRoundSnapshot>,
    pub closed: Vec<String>,
    #[serde(default)]
    pub abandoned: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenRoundSnapshot {
    pub round_id: String,
    pub config: Option<(TableConfig, u64)>,
    pub opened_index: u64,
    pub opened_ms: i64,
    pub events: Vec<RoundEvent>,
    pub indexes: Vec<u64>,
    #[serde(default)]
    pub events_not_held: u64,
    pub timed_out: bool,
    pub outcome_seen: bool,
    pub no_more_bets_seen: bool,
}
