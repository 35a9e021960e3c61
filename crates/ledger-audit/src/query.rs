//! Answers that combine the chain and the derived store: a round rebuilt from its entries and
//! adjudicated again (with its explanation), and the reports.

use audit::{Finding, Period, ReportBuilder, ReportRow, RoundSummary};
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

/// The report for a period, or for a UTC day with its month and year to date.
pub fn report(
    audit: &AuditStore,
    period: Option<Period>,
    day: Option<NaiveDate>,
) -> Result<Vec<(String, Period, Vec<ReportRow>)>, QueryError> {
    let periods: Vec<(String, Period)> = match (period, day) {
        (Some(p), _) => vec![("period".to_string(), p)],
        (None, Some(d)) => Period::calendar(d)
            .into_iter()
            .map(|(n, p)| (n.to_string(), p))
            .collect(),
        (None, None) => {
            return Err(QueryError::Invalid(
                "give a period (from and to) or a day".to_string(),
            ));
        }
    };
    let mut out = Vec::new();
    for (name, p) in periods {
        if p.to_ms <= p.from_ms {
            return Err(QueryError::Invalid(format!(
                "the period {} is empty (from must be before to)",
                p.describe()
            )));
        }
        // Aggregated as the store reads them, never collected.
        let mut rows = ReportBuilder::new(p);
        audit.for_each_round_in(p, |r| rows.add(&r))?;
        out.push((name, p, rows.finish()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let got = report(&store, Some(p), None).unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!(
                serde_json::to_string(&got[0].2).unwrap(),
                serde_json::to_string(&collected).unwrap()
            );
            assert!(collected.last().unwrap().rounds > 100);
        }
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
