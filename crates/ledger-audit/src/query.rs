//! Answers that combine the chain and the derived store: a round rebuilt from its entries and
//! adjudicated again (with its explanation), and the reports.

use audit::{Calendar, Finding, Period, ReportBuilder, ReportRow, RoundSummary};
use chrono::NaiveDate;
use ledger_convert::{Routed, route};
use ledger_proto::v1;
use ledger_store::Store;
use rules_core::{Adjudication, Options, Round, Settlement};

use crate::store::{AuditStore, AuditStoreError};

/// Why a query failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("no round `{0}` has been settled")]
    NoRound(String),
    #[error("round id `{round}` exists at several tables ({tables}): name the table")]
    Ambiguous { round: String, tables: String },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] AuditStoreError),
    #[error("reading the chain: {0}")]
    Chain(#[from] ledger_store::StoreError),
}

/// A round, rebuilt.
#[derive(Debug)]
pub struct RoundDetail {
    pub summary: RoundSummary,
    /// Configuration, opening, events, settlement entries, in chain order.
    pub entries: Vec<v1::ChainEntry>,
    pub adjudication: Adjudication,
    pub explanation: String,
    pub findings: Vec<Finding>,
}

/// Find the summary of `round_id` (at `table_id`, or the only table that has it).
pub fn find_round(
    audit: &AuditStore,
    table_id: Option<&str>,
    round_id: &str,
) -> Result<RoundSummary, QueryError> {
    if let Some(t) = table_id.filter(|t| !t.is_empty()) {
        return audit
            .round(t, round_id)?
            .ok_or_else(|| QueryError::NoRound(format!("{round_id} at table {t}")));
    }
    let mut all = audit.rounds_named(round_id)?;
    match all.len() {
        0 => Err(QueryError::NoRound(round_id.to_string())),
        1 => Ok(all.remove(0)),
        _ => Err(QueryError::Ambiguous {
            round: round_id.to_string(),
            tables: all
                .iter()
                .map(|r| r.table_id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Rebuild a round from the chain and adjudicate it again from the state it was played from.
pub fn round_detail(
    chain: &Store,
    audit: &AuditStore,
    table_id: Option<&str>,
    round_id: &str,
    explain: bool,
) -> Result<RoundDetail, QueryError> {
    let summary = find_round(audit, table_id, round_id)?;
    let entry = |i: u64| -> Result<v1::ChainEntry, QueryError> {
        chain
            .entry(i)?
            .ok_or_else(|| QueryError::Invalid(format!("entry {i} is not in the chain")))
    };
    let (entries, adjudication) = readjudicate(&summary, entry, explain)?;
    let explanation = if explain {
        rules::explain::render(&adjudication, &[])
    } else {
        String::new()
    };
    let findings = audit.round_findings(&summary.table_id, &summary.round_id)?;
    Ok(RoundDetail {
        summary,
        entries,
        adjudication,
        explanation,
        findings,
    })
}

/// Adjudicate a settled round again from its entries, as the audit did: the configuration in
/// force, the opening, the events and the settlement that `summary` names (read with `entry`),
/// from the table state before the round that the summary keeps (or a fresh one). Returns those
/// entries, in chain order, and the adjudication. Evidence bundles use it offline, with entries
/// proven against a checkpoint.
pub fn readjudicate(
    summary: &RoundSummary,
    mut entry: impl FnMut(u64) -> Result<v1::ChainEntry, QueryError>,
    explain: bool,
) -> Result<(Vec<v1::ChainEntry>, Adjudication), QueryError> {
    let mut entries = vec![entry(summary.config_index)?, entry(summary.opened_index)?];
    let config = match route(&entries[0]).map(|(_, r)| r) {
        Ok(Routed::Audit(audit::AuditInput::TableConfigured { config, .. })) => config,
        _ => {
            return Err(QueryError::Invalid(format!(
                "entry {} is not the table's configuration",
                summary.config_index
            )));
        }
    };
    let mut events = Vec::new();
    for &i in &summary.event_indexes {
        let e = entry(i)?;
        if let Ok((_, Routed::Audit(audit::AuditInput::RoundEvent { event, .. }))) = route(&e) {
            events.push(event);
        }
        entries.push(e);
    }
    let closing = entry(summary.closed_index)?;
    let settlement = match route(&closing).map(|(_, r)| r) {
        Ok(Routed::Audit(audit::AuditInput::RoundSettled { settlement, .. })) => settlement,
        _ => Settlement {
            void: true,
            ..Settlement::default()
        },
    };
    entries.push(closing);
    let round = Round {
        round_id: summary.round_id.as_str().into(),
        opened_at_ms: Some(summary.opened_ms),
        jackpot_before_cents: summary.jackpot_before_cents,
        events,
        settlement: Some(settlement),
    };
    let table = rules::ConfiguredTable::new(config)
        .map_err(|e| QueryError::Invalid(format!("the table configuration: {e}")))?;
    let mut state = match &summary.state_before {
        Some(json) => stored_state(json)?,
        None => table.fresh_state(),
    };
    let adjudication = table
        .adjudicate(&mut state, &round, &Options { explain })
        .map_err(|e| QueryError::Invalid(e.to_string()))?;
    Ok((entries, adjudication))
}

/// A round's table state as the auditor stored it: the serde form of [`rules::TableState`]
/// (`{"engine": ..., "state": ...}`), not the engine's bare state. (The engine is checked
/// against the table's when the round is adjudicated.)
fn stored_state(json: &str) -> Result<rules::TableState, QueryError> {
    serde_json::from_str(json).map_err(|e| QueryError::Invalid(format!("stored table state: {e}")))
}

/// One period of a report: its name (`period`, `day`, `month_to_date`, `year_to_date`,
/// `gaming_day`), the gaming days it covers (none for a period of instants), the instants it
/// spans over the casinos' time zones, and its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportPeriod {
    pub name: String,
    pub days: Option<(NaiveDate, NaiveDate)>,
    pub period: Period,
    pub rows: Vec<ReportRow>,
}

/// At most this many gaming days one at a time in one report (a year and a day).
pub const MAX_REPORT_DAYS: u32 = 366;

/// What a report is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportAsk {
    /// The rounds settled within `[from_ms, to_ms)`.
    Period(Period),
    /// The gaming day `day`, its month and year to date, and each of the `days` gaming days
    /// ending with it (0: none), by the casinos' gaming days ([`audit::gaming_day`]).
    Day { day: NaiveDate, days: u32 },
}

/// Where a report of gaming days reads its rounds from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The store's gaming-day rows when they are kept by the report's calendar (see
    /// [`AuditStore::use_calendar`]), else the rounds.
    DayRows,
    /// Every round of the days (the rows' oracle in tests).
    Rounds,
}

/// The one report of the table games (`Audit.GetReport`, so `ledgerctl report` and the console):
/// rounds count where they were settled, in a period of instants or on their casino's gaming day.
/// Gaming days are summed from the store's gaming-day rows (a year: at most 366 rows a table),
/// a period of instants from its rounds, aggregated as they are read.
pub fn report(
    audit: &AuditStore,
    calendar: &Calendar,
    ask: ReportAsk,
) -> Result<Vec<ReportPeriod>, QueryError> {
    report_from(audit, calendar, ask, Read::DayRows)
}

/// [`report`], reading gaming days as `how` says.
pub fn report_from(
    audit: &AuditStore,
    calendar: &Calendar,
    ask: ReportAsk,
    how: Read,
) -> Result<Vec<ReportPeriod>, QueryError> {
    let (day, days) = match ask {
        ReportAsk::Period(p) => {
            if p.to_ms <= p.from_ms {
                return Err(QueryError::Invalid(format!(
                    "the period {} is empty (from must be before to)",
                    p.describe()
                )));
            }
            let mut rows = ReportBuilder::new(p);
            audit.for_each_round_in(p, |r| rows.add(&r))?;
            return Ok(vec![ReportPeriod {
                name: "period".to_string(),
                days: None,
                period: p,
                rows: rows.finish(),
            }]);
        }
        ReportAsk::Day { day, days } => (day, days),
    };
    if days > MAX_REPORT_DAYS {
        return Err(QueryError::Invalid(format!(
            "days: {days} is more than {MAX_REPORT_DAYS} gaming days"
        )));
    }
    let (month, year) = audit::gaming_day::month_and_year_start(day);
    let mut wanted: Vec<(String, NaiveDate, NaiveDate)> = vec![
        ("day".to_string(), day, day),
        ("month_to_date".to_string(), month, day),
        ("year_to_date".to_string(), year, day),
    ];
    let mut d = Some(day);
    let mut series = Vec::new();
    for _ in 0..days {
        let Some(this) = d else { break };
        series.push(("gaming_day".to_string(), this, this));
        d = this.pred_opt();
    }
    series.reverse();
    wanted.extend(series);
    let first = wanted.iter().map(|w| w.1).min().unwrap_or(day);
    let mut builders: Vec<ReportBuilder> = wanted
        .iter()
        .map(|(_, a, b)| {
            let (from_ms, to_ms) = calendar.span(*a, *b);
            ReportBuilder::new(Period { from_ms, to_ms })
        })
        .collect();
    // The store's gaming-day rows when they are kept by this calendar (at most one row a table
    // and day), else every round of the days.
    let kept = match how {
        Read::DayRows => audit.for_each_day_row(calendar, first, day, |g, row| {
            for ((_, a, b), rows) in wanted.iter().zip(builders.iter_mut()) {
                if *a <= g && g <= *b {
                    rows.count_row(&row);
                }
            }
        })?,
        Read::Rounds => false,
    };
    if !kept {
        let (from_ms, to_ms) = calendar.span(first, day);
        audit.for_each_round_in(Period { from_ms, to_ms }, |r| {
            let g = calendar.rule(r.casino_id.as_deref()).day_of(r.closed_ms);
            for ((_, a, b), rows) in wanted.iter().zip(builders.iter_mut()) {
                if *a <= g && g <= *b {
                    rows.count(&r);
                }
            }
        })?;
    }
    Ok(wanted
        .into_iter()
        .zip(builders)
        .map(|((name, a, b), rows)| {
            let (from_ms, to_ms) = calendar.span(a, b);
            ReportPeriod {
                name,
                days: Some((a, b)),
                period: Period { from_ms, to_ms },
                rows: rows.finish(),
            }
        })
        .collect())
}

/// A slot machine's figures over a report period, or its casino's total (machine `"*"`): the
/// meter increases the ledger received in the period (a reading counts on the gaming day of its
/// receive time, in the machine's casino's rule, as a settled round does). Money in cents, returns
/// in basis points of the wagered amount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotRow {
    pub casino_id: String,
    pub machine_id: String,
    pub model_id: String,
    /// Readings with a credited increase.
    pub readings: u64,
    /// The bets meter's increase ("apostas", coin-in).
    pub wagered_cents: i128,
    /// Prizes: the prizes meter's increase plus jackpots paid.
    pub won_cents: i128,
    /// The drop meter's increase ("arrecadação").
    pub drop_cents: i128,
    /// The approved pay table's return (the model's), when every machine counted has one and
    /// the same.
    pub theoretical_rtp_bp: Option<i128>,
    /// Expected return: pay table plus the jackpot contribution rates (coin-in-weighted).
    pub expected_rtp_bp: Option<i128>,
    /// Observed return; `None` without wagers.
    pub actual_rtp_bp: Option<i128>,
    /// Prizes expected at the expected return, in 1/10,000 cent (exact).
    pub expected_won_e4: Option<i128>,
    /// Prizes − expected prizes, and actual − expected return.
    pub variance_cents: Option<i128>,
    pub variance_bp: Option<i128>,
    /// The book no longer holds the meter detail of the period's start (figures cover less).
    pub partial: bool,
    /// Significant events by kind in the same span, games' starts and ends aside (filled by
    /// [`slot_event_counts`] when asked; a casino's total sums its machines').
    pub event_counts: std::collections::BTreeMap<String, u64>,
}

impl SlotRow {
    /// Takings: wagered − won (the machine's gross win).
    pub fn takings_cents(&self) -> i128 {
        self.wagered_cents.saturating_sub(self.won_cents)
    }
}

fn slot_row(m: &jackpot::MachineStatus, r: jackpot::ReturnReport) -> SlotRow {
    SlotRow {
        casino_id: m.casino_id.to_string(),
        machine_id: m.id.to_string(),
        model_id: m.model_id.to_string(),
        readings: r.readings,
        wagered_cents: r.coin_in_cents,
        won_cents: r.won_cents,
        drop_cents: r.total_drop_cents,
        theoretical_rtp_bp: r.theoretical_rtp_bp.map(i128::from),
        expected_rtp_bp: r.expected_rtp_bp,
        actual_rtp_bp: r.actual_bp,
        expected_won_e4: r.expected_won_e4,
        variance_cents: r.variance_cents,
        variance_bp: r.variance_bp,
        partial: r.detail_from.is_some(),
        event_counts: Default::default(),
    }
}

/// A casino's total of its machines' rows (machine `"*"`): sums, and the returns recomputed
/// from the sums (the expected one only when every machine's model is known).
pub fn slot_casino_total(casino_id: &str, rows: &[&SlotRow]) -> SlotRow {
    use jackpot::amount::round_div;
    let sum = |f: fn(&SlotRow) -> i128| rows.iter().fold(0i128, |a, r| a.saturating_add(f(r)));
    let wagered = sum(|r| r.wagered_cents);
    let won = sum(|r| r.won_cents);
    let expected: Option<i128> = rows
        .iter()
        .try_fold(0i128, |a, r| r.expected_won_e4.map(|e| a.saturating_add(e)));
    let theoretical = match rows.first().and_then(|r| r.theoretical_rtp_bp) {
        Some(t) if rows.iter().all(|r| r.theoretical_rtp_bp == Some(t)) => Some(t),
        _ => None,
    };
    let variance_e4 = expected.map(|e| won.saturating_mul(jackpot::E4_PER_CENT).saturating_sub(e));
    SlotRow {
        casino_id: casino_id.to_string(),
        machine_id: "*".into(),
        model_id: String::new(),
        readings: rows.iter().map(|r| r.readings).sum(),
        wagered_cents: wagered,
        won_cents: won,
        drop_cents: sum(|r| r.drop_cents),
        theoretical_rtp_bp: theoretical,
        expected_rtp_bp: expected.and_then(|e| round_div(e, wagered)),
        actual_rtp_bp: round_div(won.saturating_mul(10_000), wagered),
        expected_won_e4: expected,
        variance_cents: variance_e4.and_then(|v| round_div(v, jackpot::E4_PER_CENT)),
        variance_bp: variance_e4.and_then(|v| round_div(v, wagered)),
        partial: rows.iter().any(|r| r.partial),
        event_counts: rows.iter().fold(Default::default(), |mut sum, r| {
            for (k, n) in &r.event_counts {
                *sum.entry(k.clone()).or_default() += n;
            }
            sum
        }),
    }
}

/// A machine's span of the gaming days `first..=last` by its casino's rule (or `instants`).
fn machine_span(
    calendar: &Calendar,
    casino_id: &str,
    days: Option<(NaiveDate, NaiveDate)>,
    instants: Period,
) -> (i64, i64) {
    match days {
        Some((a, b)) => {
            let rule = calendar.rule(Some(casino_id));
            let end = b.succ_opt().unwrap_or(b);
            (rule.start_ms(a), rule.start_ms(end))
        }
        None => (instants.from_ms, instants.to_ms),
    }
}

/// Fill the rows of [`slot_report`] (same `days` and `instants`) with their machines'
/// significant events by kind ([`AuditStore::event_counts`]: the kind index, nothing decoded),
/// and each casino total with the sums of its machines'.
pub fn slot_event_counts(
    audit: &AuditStore,
    calendar: &Calendar,
    days: Option<(NaiveDate, NaiveDate)>,
    instants: Period,
    rows: &mut [SlotRow],
) -> Result<(), QueryError> {
    let mut casino: std::collections::BTreeMap<String, u64> = Default::default();
    for r in rows.iter_mut() {
        if r.machine_id == "*" {
            r.event_counts = std::mem::take(&mut casino);
            continue;
        }
        let (from_ms, to_ms) = machine_span(calendar, &r.casino_id, days, instants);
        r.event_counts = audit.event_counts(&r.machine_id, from_ms, to_ms)?;
        for (k, n) in &r.event_counts {
            *casino.entry(k.clone()).or_default() += n;
        }
    }
    Ok(())
}

/// Every machine's row over its casino's span of the gaming days `first..=last` (or over the
/// instants of `instants`), each casino's machines followed by its total, in casino then
/// machine order; only the casinos `sees` admits.
pub fn slot_report(
    book: &jackpot::Book,
    source: &impl jackpot::DetailSource,
    calendar: &Calendar,
    days: Option<(NaiveDate, NaiveDate)>,
    instants: Period,
    sees: impl Fn(&str) -> bool,
) -> Result<Vec<SlotRow>, jackpot::QueryError> {
    let mut by_casino: std::collections::BTreeMap<String, Vec<SlotRow>> = Default::default();
    for m in book.machine_statuses_page(None, usize::MAX) {
        if !sees(&m.casino_id) {
            continue;
        }
        let (from_ms, to_ms) = machine_span(calendar, &m.casino_id, days, instants);
        let r =
            book.machine_return_from(source, &m.id, jackpot::Period::Times { from_ms, to_ms })?;
        by_casino
            .entry(m.casino_id.to_string())
            .or_default()
            .push(slot_row(&m, r));
    }
    let mut out = Vec::new();
    for (casino, rows) in by_casino {
        let total = slot_casino_total(&casino, &rows.iter().collect::<Vec<_>>());
        out.extend(rows);
        out.push(total);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(machine: &str, wagered: i128, won: i128, expected_bp: Option<i128>) -> SlotRow {
        SlotRow {
            casino_id: "c".into(),
            machine_id: machine.into(),
            model_id: "m".into(),
            readings: 1,
            wagered_cents: wagered,
            won_cents: won,
            drop_cents: 0,
            theoretical_rtp_bp: Some(9_000),
            expected_rtp_bp: expected_bp,
            actual_rtp_bp: jackpot::amount::round_div(won * 10_000, wagered),
            expected_won_e4: expected_bp.map(|bp| wagered * bp),
            variance_cents: None,
            variance_bp: None,
            partial: false,
            event_counts: Default::default(),
        }
    }

    /// A casino's total recomputes its returns from the summed cents, weighted by wagers, in
    /// integers: 9,000 bp on 1,000.00 € and 9,500 bp on 3,000.00 € expect 9,375 bp.
    #[test]
    fn a_casinos_slot_total_weighs_the_returns_by_wagers() {
        let a = slot("M1", 100_000, 85_000, Some(9_000));
        let b = slot("M2", 300_000, 290_001, Some(9_500));
        let t = slot_casino_total("c", &[&a, &b]);
        assert_eq!((t.wagered_cents, t.won_cents), (400_000, 375_001));
        assert_eq!(t.takings_cents(), 24_999);
        assert_eq!(t.expected_rtp_bp, Some(9_375));
        // 375,001 / 400,000 = 93.75025 %: 9,375 bp (rounded); expected prizes 375,000.00.
        assert_eq!(t.actual_rtp_bp, Some(9_375));
        assert_eq!(t.expected_won_e4, Some(375_000 * 10_000));
        assert_eq!(t.variance_cents, Some(1));
        assert_eq!(t.variance_bp, Some(0));
        assert_eq!(t.theoretical_rtp_bp, Some(9_000));
        // A machine of an unknown model: no expected return for the casino.
        let c = slot("M3", 10_000, 0, None);
        let t = slot_casino_total("c", &[&a, &c]);
        assert_eq!(t.expected_rtp_bp, None);
        assert_eq!(t.variance_cents, None);
        assert_eq!(t.actual_rtp_bp, Some(7_727));
        // Nothing wagered: no return at all, and no division by zero.
        let z = slot("M4", 0, 0, Some(9_000));
        let t = slot_casino_total("c", &[&z]);
        assert_eq!((t.actual_rtp_bp, t.expected_rtp_bp), (None, None));
        assert_eq!(t.variance_cents, Some(0));
    }

    /// A casino's total has the pay table's return only when every machine has the same one,
    /// and sums its machines' significant events kind by kind.
    #[test]
    fn a_casinos_total_sums_events_and_keeps_a_common_pay_table_only() {
        let mut a = slot("M1", 100_000, 85_000, Some(9_000));
        let mut b = slot("M2", 300_000, 290_001, Some(9_500));
        a.event_counts = [("door_open".to_string(), 2), ("power_off".to_string(), 1)].into();
        b.event_counts = [("door_open".to_string(), 3), ("tilt".to_string(), 4)].into();
        let t = slot_casino_total("c", &[&a, &b]);
        assert_eq!(t.theoretical_rtp_bp, Some(9_000), "both at 9,000");
        let want: std::collections::BTreeMap<String, u64> = [
            ("door_open".to_string(), 5),
            ("power_off".to_string(), 1),
            ("tilt".to_string(), 4),
        ]
        .into();
        assert_eq!(t.event_counts, want);
        assert_eq!((t.machine_id.as_str(), t.readings), ("*", 2));
        b.theoretical_rtp_bp = Some(9_200);
        assert_eq!(slot_casino_total("c", &[&a, &b]).theoretical_rtp_bp, None);
        b.theoretical_rtp_bp = None;
        assert_eq!(slot_casino_total("c", &[&a, &b]).theoretical_rtp_bp, None);
    }

    /// The report aggregated while the store is read is the one aggregated from every round
    /// collected first, byte for byte, over several blocks, tables, casinos and games, with a
    /// round committed twice and a period that starts and ends inside blocks.
    #[test]
    fn the_streamed_report_is_the_collected_one() {
        use rules_core::GameId;
        let games = [GameId::RouletteFrench, GameId::Blackjack, GameId::Craps];
        let rounds: Vec<RoundSummary> = (0..(3 * crate::store::BLOCK_ROUNDS + 17))
            .map(|i| {
                let i64_ = i as i64;
                RoundSummary {
                    table_id: format!("t{}", i % 5),
                    casino_id: (i % 7 != 0).then(|| format!("c{}", i % 2)),
                    game: games[i % 5 % 3],
                    round_id: format!("r{i}"),
                    config_index: 1,
                    opened_index: 10 * i as u64 + 1,
                    closed_index: 10 * i as u64 + 5,
                    opened_ms: 1_000 + 10 * i64_,
                    closed_ms: 1_005 + 10 * i64_,
                    void: i % 11 == 0,
                    bets: 3,
                    handle_cents: 100 + i64_ * 7,
                    due_player_net_cents: (i64_ % 9 - 4) * 50,
                    reported_player_net_cents: (i64_ % 9 - 4) * 50 + (i % 13 == 0) as i64 * 25,
                    house_due_cents: i64_ % 3,
                    house_reported_cents: i64_ % 4,
                    discrepancies: (i % 13 == 0) as u32,
                    discrepancy_abs_cents: (i % 13 == 0) as i64 * 25,
                    findings: 0,
                    event_indexes: vec![10 * i as u64 + 2],
                    jackpot_before_cents: None,
                    jackpot_pool_id: None,
                    state_before: None,
                }
            })
            .collect();
        let store = AuditStore::temporary().unwrap();
        store.commit(&[], &rounds, &[], None).unwrap();
        store.commit(&[], &rounds[40..41], &[], None).unwrap();
        for p in [
            Period {
                from_ms: i64::MIN,
                to_ms: i64::MAX,
            },
            Period {
                from_ms: rounds[30].closed_ms,
                to_ms: rounds[150].closed_ms + 3,
            },
        ] {
            let collected = audit::aggregate(&store.rounds_in(p).unwrap(), p);
            let got = report(&store, &Calendar::default(), ReportAsk::Period(p)).unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!(
                serde_json::to_string(&got[0].rows).unwrap(),
                serde_json::to_string(&collected).unwrap()
            );
            assert!(collected.last().unwrap().rounds > 100);
        }
    }

    /// Rounds count on their casino's gaming day of settlement: a round opened before 06:00
    /// Lisbon and settled after it counts on the new day, one settled at 01:00 on the 28th on
    /// the 27th; an Azores casino's day ends an hour later; the month and the year to date, and
    /// the series of days, add up the same rounds.
    #[test]
    fn the_day_report_counts_rounds_on_their_gaming_day() {
        use chrono::TimeZone;
        let at = |d: u32, h: u32, m: u32| {
            chrono::Utc
                .with_ymd_and_hms(2026, 11, d, h, m, 0)
                .unwrap()
                .timestamp_millis()
        };
        let round = |i: u64, casino: &str, opened: i64, closed: i64, handle: i64| RoundSummary {
            table_id: format!("{casino}-t"),
            casino_id: Some(casino.to_string()),
            game: rules_core::GameId::RouletteFrench,
            round_id: format!("r{i}"),
            config_index: 1,
            opened_index: 10 * i + 1,
            closed_index: 10 * i + 5,
            opened_ms: opened,
            closed_ms: closed,
            void: false,
            bets: 1,
            handle_cents: handle,
            due_player_net_cents: -handle,
            reported_player_net_cents: -handle,
            house_due_cents: 0,
            house_reported_cents: 0,
            discrepancies: 0,
            discrepancy_abs_cents: 0,
            findings: 0,
            event_indexes: vec![],
            jackpot_before_cents: None,
            jackpot_pool_id: None,
            state_before: None,
        };
        let rounds = vec![
            round(1, "lisboa", at(26, 22, 0), at(26, 22, 1), 1),
            // Settled at 01:00 on the 28th: the 27th's gaming day.
            round(2, "lisboa", at(28, 0, 59), at(28, 1, 0), 10),
            // Opened before 06:00, settled after: the 28th.
            round(3, "lisboa", at(28, 5, 58), at(28, 6, 1), 100),
            // 06:30 UTC is 05:30 in the Azores: still their 27th.
            round(4, "acores", at(28, 6, 29), at(28, 6, 30), 1000),
            round(5, "acores", at(28, 7, 0), at(28, 7, 1), 10000),
        ];
        let store = AuditStore::temporary().unwrap();
        store.commit(&[], &rounds, &[], None).unwrap();
        let mut calendar = Calendar::default();
        calendar.casinos.insert(
            "acores".into(),
            audit::DayRule::parse("Atlantic/Azores", "06:00").unwrap(),
        );
        let d27 = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
        let got = report(&store, &calendar, ReportAsk::Day { day: d27, days: 3 }).unwrap();
        let names: Vec<&str> = got.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "day",
                "month_to_date",
                "year_to_date",
                "gaming_day",
                "gaming_day",
                "gaming_day"
            ]
        );
        let total = |p: &ReportPeriod| {
            p.rows
                .iter()
                .find(|r| r.casino_id == "*")
                .map_or(0, |r| r.handle_cents)
        };
        assert_eq!(total(&got[0]), 10 + 1000);
        assert_eq!(total(&got[1]), 1 + 10 + 1000);
        assert_eq!(total(&got[2]), 1 + 10 + 1000);
        assert_eq!(
            got[3].days,
            NaiveDate::from_ymd_opt(2026, 11, 25).map(|d| (d, d))
        );
        assert_eq!(total(&got[3]), 0);
        assert_eq!(total(&got[4]), 1);
        assert_eq!(total(&got[5]), 10 + 1000);
        // Lisbon's 27th starts at 06:00 UTC; the Azores' ends at 07:00 UTC on the 28th.
        assert_eq!(got[0].period.from_ms, at(27, 6, 0));
        assert_eq!(got[0].period.to_ms, at(28, 7, 0));
        let d28 = d27.succ_opt().unwrap();
        let next = report(&store, &calendar, ReportAsk::Day { day: d28, days: 0 }).unwrap();
        assert_eq!(next.len(), 3);
        assert_eq!(total(&next[0]), 100 + 10000);
        assert_eq!(total(&next[1]), 1 + 10 + 100 + 1000 + 10000);
        assert!(matches!(
            report(
                &store,
                &calendar,
                ReportAsk::Day {
                    day: d28,
                    days: 367
                }
            ),
            Err(QueryError::Invalid(_))
        ));
    }

    /// Random rounds of casinos with different gaming-day rules (an Indian half hour, the
    /// Azores, the default Lisbon; a table without a casino) over a month with a daylight-saving
    /// change, committed in random chunks, round ids committed again: the report summed from
    /// the gaming-day rows is the one counted from every round (the oracle), after every commit
    /// stage, after a reopen and the cut back to the snapshot, after the replay commits the rest
    /// again, and after the calendar changes (rebuilt).
    #[test]
    fn the_gaming_day_rows_give_the_report_of_every_round() {
        use chrono::TimeZone;
        use rules_core::GameId;
        let mut seed = 0x5eed_u64;
        let mut rand = move |n: u64| {
            // splitmix64
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        };
        let start = chrono::Utc
            .with_ymd_and_hms(2026, 10, 20, 0, 0, 0)
            .unwrap()
            .timestamp_millis();
        let casinos = [Some("lisboa"), Some("acores"), Some("goa"), None];
        let games = [
            GameId::RouletteFrench,
            GameId::Blackjack,
            GameId::BaccaratPuntoBanco,
        ];
        let n = 1_500u64;
        let mut at = start;
        let rounds: Vec<RoundSummary> = (0..n)
            .map(|i| {
                at += rand(45 * 60_000) as i64 + 1;
                let casino = casinos[rand(4) as usize];
                let table = rand(3);
                let handle = rand(100_000) as i64;
                let due = rand(200_000) as i64 - 100_000;
                let off = if rand(10) == 0 { rand(500) as i64 } else { 0 };
                RoundSummary {
                    table_id: format!("{}-t{table}", casino.unwrap_or("none")),
                    casino_id: casino.map(str::to_string),
                    game: games[table as usize],
                    // Ids repeat: a round committed again counts once, where its pointer says.
                    round_id: format!("r{}", rand(n / 3)),
                    config_index: 1,
                    opened_index: 10 * i + 1,
                    closed_index: 10 * i + 5,
                    opened_ms: at - 60_000,
                    closed_ms: at,
                    void: rand(20) == 0,
                    bets: 2,
                    handle_cents: handle,
                    due_player_net_cents: due,
                    reported_player_net_cents: due + off,
                    house_due_cents: rand(50) as i64,
                    house_reported_cents: rand(50) as i64,
                    discrepancies: u32::from(off != 0),
                    discrepancy_abs_cents: off,
                    findings: 0,
                    event_indexes: vec![10 * i + 2],
                    jackpot_before_cents: None,
                    jackpot_pool_id: None,
                    state_before: None,
                }
            })
            .collect();
        let rule = |tz: &str, at: &str| audit::DayRule::parse(tz, at).unwrap();
        let mut a = Calendar::default();
        a.casinos
            .insert("acores".into(), rule("Atlantic/Azores", "06:00"));
        a.casinos
            .insert("goa".into(), rule("Asia/Kolkata", "05:30"));
        let mut b = Calendar {
            default: rule("Europe/Lisbon", "04:00"),
            ..Calendar::default()
        };
        b.casinos
            .insert("goa".into(), rule("Asia/Kolkata", "07:45"));
        let first = NaiveDate::from_ymd_opt(2026, 10, 18).unwrap();
        let same = |store: &AuditStore, calendar: &Calendar, kept: bool| {
            let rows_kept = store
                .for_each_day_row(calendar, first, first, |_, _| {})
                .unwrap();
            assert_eq!(rows_kept, kept, "rows kept by this calendar");
            let mut counted = 0;
            for d in (0..60).step_by(3) {
                let day = first + chrono::Days::new(d);
                for days in [0, 1, 40] {
                    let ask = ReportAsk::Day { day, days };
                    let by_rows = report_from(store, calendar, ask, Read::DayRows).unwrap();
                    let by_rounds = report_from(store, calendar, ask, Read::Rounds).unwrap();
                    assert_eq!(by_rows, by_rounds, "{day} and {days} days before");
                    counted += by_rows[2].rows.last().map_or(0, |r| r.rounds);
                }
            }
            counted
        };
        let dir = tempfile::tempdir().unwrap();
        let store = AuditStore::open(dir.path()).unwrap();
        assert!(
            store.use_calendar(&a).unwrap(),
            "a new store's rows are the default's"
        );
        assert!(!store.use_calendar(&a).unwrap());
        let mut snap = crate::replay::Replayer::new(crate::replay::settings(false)).snapshot();
        let (mut done, mut snapped) = (0, 0);
        while done < rounds.len() {
            let next = (done + 1 + rand(150) as usize).min(rounds.len());
            let chunk = &rounds[done..next];
            // A snapshot about halfway: what a reopen goes back to.
            let with_snap = snapped == 0 && next > rounds.len() / 2;
            if with_snap {
                snap.auditor.position = chunk.last().map(|r| r.closed_index);
                snapped = next;
            }
            store
                .commit(&[], chunk, &[], with_snap.then_some(&snap))
                .unwrap();
            done = next;
            if rand(4) == 0 {
                same(&store, &a, true);
            }
        }
        let all = same(&store, &a, true);
        assert!(all > 0);
        drop(store);
        // Reopened, as after a crash: the rows and their calendar are the store's, and the cut
        // back to the snapshot takes the rounds after it out of them.
        let store = AuditStore::open(dir.path()).unwrap();
        assert_eq!(store.days_calendar().as_ref(), Some(&a));
        store.load().unwrap().expect("the snapshot");
        assert!(
            same(&store, &a, true) < all,
            "rounds after the snapshot are gone"
        );
        store.commit(&[], &rounds[snapped..], &[], None).unwrap();
        assert_eq!(same(&store, &a, true), all);
        // Another calendar: the rows are rebuilt from the rounds; a report by the old calendar
        // reads the rounds.
        assert!(store.use_calendar(&b).unwrap());
        same(&store, &b, true);
        same(&store, &a, false);
        drop(store);
        let store = AuditStore::open(dir.path()).unwrap();
        assert!(!store.use_calendar(&b).unwrap(), "kept across a restart");
        same(&store, &b, true);
    }

    #[test]
    fn a_stored_round_state_decodes_as_the_auditor_wrote_it() {
        let mut config = rules::example_table(rules_core::GameId::RouletteFrench).unwrap();
        config.table_id = Some("T1".into());
        let table = rules::ConfiguredTable::new(config).unwrap();
        let state = table.fresh_state();
        // What the auditor keeps in `RoundSummary::state_before`.
        let json = serde_json::to_string(&state).unwrap();
        assert_eq!(stored_state(&json).unwrap(), state);
        assert!(matches!(stored_state("{}"), Err(QueryError::Invalid(_))));
    }
}

/// The queries over a replayed session: rounds adjudicated again from the chain, the slot report.
#[cfg(test)]
mod session_tests {
    use super::*;
    use crate::live::Follower;
    use std::path::Path;
    use std::sync::Arc;

    /// The test chain followed into a store that keeps round states.
    fn followed(dir: &Path) -> (Arc<Store>, Follower) {
        let (chain, head) = crate::testdata::chain(&dir.join("chain"));
        let mut f = Follower::open(&dir.join("audit"), true).unwrap();
        f.catch_up(&chain, head, |_| {}).unwrap();
        (chain, f)
    }

    fn all() -> Period {
        Period {
            from_ms: i64::MIN,
            to_ms: i64::MAX,
        }
    }

    /// Every round the audit closed, rebuilt from the chain and adjudicated again from the
    /// state it was played from, is the round the audit closed: its entries, its bets, what
    /// was due, whether it was void, its discrepancies and its findings; found by its table,
    /// or by its id alone when no other table has one of that id.
    #[test]
    fn every_round_adjudicated_again_is_the_round_the_audit_closed() {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, f) = followed(tmp.path());
        let audit = f.store();
        let rounds = audit.rounds_in(all()).unwrap();
        assert!(rounds.len() > 500);
        let (mut void, mut paid, mut checked, mut with_findings) = (0, 0, 0, 0);
        // Every void round, every one with a discrepancy, and every seventh (each reads its
        // entries' chunks).
        for (i, s) in rounds.iter().enumerate() {
            if !(s.void || s.discrepancies > 0 || i % 7 == 0) {
                continue;
            }
            checked += 1;
            let d = round_detail(&chain, &audit, Some(&s.table_id), &s.round_id, false).unwrap();
            assert_eq!(&d.summary, s);
            let indexes: Vec<u64> = d.entries.iter().map(|e| e.index).collect();
            let mut want = vec![s.config_index, s.opened_index];
            want.extend(&s.event_indexes);
            want.push(s.closed_index);
            assert_eq!(indexes, want, "round {}", s.round_id);
            let a = &d.adjudication;
            assert_eq!(a.bets.len() as u32, s.bets, "round {}", s.round_id);
            let due: rules_core::Cents = a.bets.iter().map(|b| b.due_net_cents).sum();
            assert_eq!(due, s.due_player_net_cents, "round {}", s.round_id);
            assert_eq!(a.void.is_some(), s.void, "round {}", s.round_id);
            assert_eq!(a.discrepancies.len() as u32, s.discrepancies);
            // The round's findings, as a filter over all of them finds them.
            let filter = crate::store::FindingFilter {
                subject: Some(s.table_id.clone()),
                round_id: Some(s.round_id.clone()),
                ..Default::default()
            };
            assert_eq!(d.findings, audit.findings(&filter, None, 1_000).unwrap());
            with_findings += usize::from(!d.findings.is_empty());
            assert!(d.explanation.is_empty());
            void += usize::from(s.void);
            paid += usize::from(due != 0);
            if audit.rounds_named(&s.round_id).unwrap().len() == 1 {
                assert_eq!(&find_round(&audit, None, &s.round_id).unwrap(), s);
                assert_eq!(&find_round(&audit, Some(""), &s.round_id).unwrap(), s);
            }
        }
        // A round closed by a void declaration instead of its settlement: every bet reported
        // returned (net 0), whatever the rules say it was due.
        let s = rounds.iter().find(|s| !s.void && s.bets > 0).unwrap();
        let declared = v1::ChainEntry {
            index: s.closed_index,
            received_at_ms: s.closed_ms,
            kind: v1::RecordKind::Event as i32,
            body: prost::Message::encode_to_vec(&v1::EventBody {
                device_id: "table-system".into(),
                sequence: 1,
                occurred_at_ms: s.closed_ms,
                payload: Some(v1::event_body::Payload::RoundVoided(v1::RoundVoided {
                    table_id: s.table_id.clone(),
                    round_id: s.round_id.clone(),
                    reason: "wheel fault".into(),
                })),
            }),
            ..Default::default()
        };
        let entry = |i: u64| -> Result<v1::ChainEntry, QueryError> {
            if i == s.closed_index {
                return Ok(declared.clone());
            }
            Ok(chain.entry(i)?.unwrap())
        };
        let (_, voided) = readjudicate(s, entry, false).unwrap();
        assert!(
            !voided.bets.is_empty() && voided.bets.iter().all(|b| b.reported_net_cents == Some(0)),
            "a declaration reports 0 for every bet: {voided:?}"
        );
        assert!(
            void >= 1 && paid >= 20 && checked >= 90 && with_findings >= 3,
            "{void} void, {paid} paid, {checked} checked, {with_findings} with findings"
        );
    }

    fn summary(table: &str, round: &str, closed_index: u64) -> RoundSummary {
        RoundSummary {
            table_id: table.into(),
            casino_id: None,
            game: rules_core::GameId::RouletteFrench,
            round_id: round.into(),
            config_index: 1,
            opened_index: closed_index - 1,
            closed_index,
            opened_ms: 1_000,
            closed_ms: 1_000 + closed_index as i64,
            void: false,
            bets: 0,
            handle_cents: 0,
            due_player_net_cents: 0,
            reported_player_net_cents: 0,
            house_due_cents: 0,
            house_reported_cents: 0,
            discrepancies: 0,
            discrepancy_abs_cents: 0,
            findings: 0,
            event_indexes: vec![],
            jackpot_before_cents: None,
            jackpot_pool_id: None,
            state_before: None,
        }
    }

    /// A round id found at one table is that round; at several, the query must name the table
    /// (the error lists them); at none, there is no such round. An empty table is no table.
    #[test]
    fn a_round_id_at_several_tables_needs_its_table() {
        let audit = AuditStore::temporary().unwrap();
        let rounds = [
            summary("t1", "r1", 10),
            summary("t2", "r1", 20),
            summary("t1", "r2", 30),
        ];
        audit.commit(&[], &rounds, &[], None).unwrap();
        assert_eq!(find_round(&audit, None, "r2").unwrap(), rounds[2]);
        assert_eq!(find_round(&audit, Some(""), "r2").unwrap(), rounds[2]);
        assert_eq!(find_round(&audit, Some("t2"), "r1").unwrap(), rounds[1]);
        match find_round(&audit, None, "r1") {
            Err(QueryError::Ambiguous { round, tables }) => {
                assert_eq!((round.as_str(), tables.as_str()), ("r1", "t1, t2"));
            }
            other => panic!("{other:?}"),
        }
        match find_round(&audit, None, "r9") {
            Err(QueryError::NoRound(what)) => assert_eq!(what, "r9"),
            other => panic!("{other:?}"),
        }
        match find_round(&audit, Some("t2"), "r2") {
            Err(QueryError::NoRound(what)) => assert_eq!(what, "r2 at table t2"),
            other => panic!("{other:?}"),
        }
    }

    /// A report of gaming days one by one covers at most a year and a day.
    #[test]
    fn a_report_covers_at_most_366_gaming_days_one_by_one() {
        let audit = AuditStore::temporary().unwrap();
        let calendar = Calendar::default();
        let day = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
        let most = report(&audit, &calendar, ReportAsk::Day { day, days: 366 }).unwrap();
        assert_eq!(most.len(), 3 + 366);
        match report(&audit, &calendar, ReportAsk::Day { day, days: 367 }) {
            Err(QueryError::Invalid(why)) => {
                assert_eq!(why, "days: 367 is more than 366 gaming days")
            }
            other => panic!("{other:?}"),
        }
    }

    /// The slot report over the session: each machine's figures are its return over its
    /// casino's span of the gaming days (or over the instants asked), its significant events by
    /// kind are the store's over the same span, each casino's machines are followed by their
    /// total, and only the casinos the caller sees are reported.
    #[test]
    fn the_slot_report_gives_each_machine_its_span_and_each_casino_its_total() {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, f) = followed(tmp.path());
        let head = f.position().unwrap();
        let time = |i| chain.entry(i).unwrap().unwrap().received_at_ms;
        let (start, end) = (time(0), time(head));
        let audit = f.store();
        let replayer = f.replayer();
        let replayer = replayer.read().unwrap();
        let book = replayer.book();
        let mut calendar = Calendar::default();
        let casinos: std::collections::BTreeSet<String> =
            book.machines().map(|m| m.casino_id.to_string()).collect();
        assert!(!casinos.is_empty());
        // One casino in another time zone, so that spans differ by casino.
        let first = casinos.iter().next().unwrap().clone();
        calendar.casinos.insert(
            first.clone(),
            audit::DayRule::parse("Atlantic/Azores", "04:00").unwrap(),
        );
        let d = |m, day| NaiveDate::from_ymd_opt(2026, m, day).unwrap();
        let instants = Period {
            from_ms: start + (end - start) / 4,
            to_ms: start + (end - start) * 3 / 4,
        };
        // The session starts at midnight UTC on 1 January: still 31 December's gaming day.
        let dec = |day| NaiveDate::from_ymd_opt(2025, 12, day).unwrap();
        for days in [Some((dec(31), dec(31))), Some((dec(30), d(1, 1))), None] {
            let mut rows = slot_report(book, &audit, &calendar, days, instants, |_| true).unwrap();
            slot_event_counts(&audit, &calendar, days, instants, &mut rows).unwrap();
            let (mut wagered, mut events) = (0, 0);
            let mut machines: Vec<&SlotRow> = Vec::new();
            let mut seen = Vec::new();
            for r in &rows {
                if r.machine_id == "*" {
                    let mut total = slot_casino_total(&r.casino_id, &machines);
                    let mut counts = std::collections::BTreeMap::<String, u64>::new();
                    for m in &machines {
                        for (k, n) in &m.event_counts {
                            *counts.entry(k.clone()).or_default() += n;
                        }
                    }
                    total.event_counts = counts;
                    assert_eq!(r, &total, "{days:?}");
                    seen.push(r.casino_id.clone());
                    machines.clear();
                    continue;
                }
                let (from_ms, to_ms) = match days {
                    Some((a, b)) => {
                        let rule = calendar.rule(Some(&r.casino_id));
                        (rule.start_ms(a), rule.start_ms(b.succ_opt().unwrap()))
                    }
                    None => (instants.from_ms, instants.to_ms),
                };
                let want = book
                    .machine_return_from(
                        &audit,
                        &r.machine_id,
                        jackpot::Period::Times { from_ms, to_ms },
                    )
                    .unwrap();
                assert_eq!(
                    (r.readings, r.wagered_cents, r.won_cents),
                    (want.readings, want.coin_in_cents, want.won_cents),
                    "{} {days:?}",
                    r.machine_id
                );
                assert_eq!(
                    r.event_counts,
                    audit.event_counts(&r.machine_id, from_ms, to_ms).unwrap()
                );
                wagered += r.wagered_cents;
                events += r.event_counts.values().sum::<u64>();
                assert!(machines.last().is_none_or(|m| m.machine_id < r.machine_id));
                machines.push(r);
            }
            assert!(machines.is_empty(), "a total ends each casino");
            assert_eq!(seen, casinos.iter().cloned().collect::<Vec<_>>());
            assert!(wagered > 0 && events > 0, "{days:?}: {wagered} {events}");
            // Only the casinos the caller sees.
            let one = slot_report(book, &audit, &calendar, days, instants, |c| c == first).unwrap();
            assert!(!one.is_empty() && one.iter().all(|r| r.casino_id == first));
        }
    }
}
