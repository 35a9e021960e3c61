//! Answers that combine the chain and the derived store: a round rebuilt from its entries and
//! adjudicated again (with its explanation), and the reports.

use audit::{Finding, Period, ReportRow, RoundSummary, aggregate};
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
        let rounds = audit.rounds_in(p)?;
        out.push((name, p, aggregate(&rounds, p)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
