//! `ledgerctl findings`: the audit's findings, filtered, from the running ledger.

use anyhow::Context;
use audit::Finding;
use ledger_core::proto as v1;

use crate::common::{self, ServerArg};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Examples:
  ledgerctl findings                              every finding
  ledgerctl findings --severity high --casino casino-lisboa
  ledgerctl findings --code BJ_WRONG_PAYOUT --json
  ledgerctl findings --subject T07-blackjack --from 2026-11-21T00:00:00Z")]
pub struct Args {
    /// Only this casino.
    #[arg(long)]
    pub casino: Option<String>,
    /// Only this table or machine.
    #[arg(long)]
    pub subject: Option<String>,
    /// Only this game id (e.g. blackjack).
    #[arg(long)]
    pub game: Option<String>,
    /// Only this code (e.g. RL_WRONG_PAYOUT).
    #[arg(long)]
    pub code: Option<String>,
    /// Only at least this severe: info, low, medium, high, critical.
    #[arg(long)]
    pub severity: Option<String>,
    /// Only this jackpot pool.
    #[arg(long)]
    pub pool: Option<String>,
    /// Only this round.
    #[arg(long)]
    pub round: Option<String>,
    /// From this time (RFC 3339, e.g. 2026-11-21T00:00:00Z), ledger time.
    #[arg(long)]
    pub from: Option<String>,
    /// Until this time (exclusive).
    #[arg(long)]
    pub to: Option<String>,
    /// At most this many (0: all).
    #[arg(long, default_value_t = 0)]
    pub limit: u64,
    #[command(flatten)]
    pub server: ServerArg,
}

/// A time argument in ms since the epoch.
/// `--from` and `--to` together (clap makes them go together): the period in ms, from before to.
pub fn parse_period(
    from: &Option<String>,
    to: &Option<String>,
) -> anyhow::Result<(Option<i64>, Option<i64>)> {
    match (from, to) {
        (Some(f), Some(t)) => {
            let from = parse_time("from", f)?;
            let to = parse_time("to", t)?;
            if to <= from {
                anyhow::bail!("--to ({t}) must be after --from ({f})");
            }
            Ok((Some(from), Some(to)))
        }
        _ => Ok((None, None)),
    }
}

pub fn parse_time(field: &str, s: &str) -> anyhow::Result<i64> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis())
            .unwrap_or(0));
    }
    anyhow::bail!(
        "--{field}: `{s}` is neither RFC 3339 (2026-11-21T10:00:00Z) nor a date (2026-11-21)"
    )
}

fn severity(s: &str) -> anyhow::Result<i32> {
    Ok(match s {
        "info" => v1::Severity::Info,
        "low" => v1::Severity::Low,
        "medium" => v1::Severity::Medium,
        "high" => v1::Severity::High,
        "critical" => v1::Severity::Critical,
        other => {
            anyhow::bail!("--severity: `{other}` is not one of info, low, medium, high, critical")
        }
    } as i32)
}

fn euros(c: i64) -> String {
    crate::present::eur(c)
}

/// One finding on one line (plus its citation).
pub fn line(f: &Finding) -> String {
    proto_line(&crate::audit_cmd_finding(f))
}

/// One proto finding on one line (plus its citation).
pub fn proto_line(f: &v1::Finding) -> String {
    let sev = v1::Severity::try_from(f.severity)
        .map(|s| {
            s.as_str_name()
                .trim_start_matches("SEVERITY_")
                .to_lowercase()
        })
        .unwrap_or_default();
    let subject = [
        &f.casino_id,
        &f.table_id,
        &f.machine_id,
        &f.pool_id,
        &f.round_id,
        &f.bet_id,
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .map(|s| s.as_str())
    .collect::<Vec<_>>()
    .join(" / ");
    let money = match (f.due_cents, f.reported_cents) {
        (Some(d), Some(r)) => format!(" [due {}, reported {}]", euros(d), euros(r)),
        (Some(d), None) => format!(" [due {}, nothing reported]", euros(d)),
        _ => String::new(),
    };
    format!(
        "#{:<5} {:<8} {}{}  {}{}\n       {}\n       rule: {}  evidence: entries {}",
        f.seq,
        sev,
        f.code,
        if f.for_review { " (review)" } else { "" },
        subject,
        money,
        f.message,
        f.citation,
        f.evidence
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let channel = common::channel(&a.server.server).await?;
    let mut client = v1::audit_client::AuditClient::new(channel);
    let mut req = v1::ListFindingsRequest {
        casino_id: a.casino.unwrap_or_default(),
        subject: a.subject.unwrap_or_default(),
        game: a.game.unwrap_or_default(),
        code: a.code.unwrap_or_default(),
        min_severity: a
            .severity
            .as_deref()
            .map(severity)
            .transpose()?
            .unwrap_or(0),
        pool_id: a.pool.unwrap_or_default(),
        round_id: a.round.unwrap_or_default(),
        from_ms: a
            .from
            .as_deref()
            .map(|s| parse_time("from", s))
            .transpose()?,
        to_ms: a.to.as_deref().map(|s| parse_time("to", s)).transpose()?,
        after_seq: None,
        limit: 1000,
    };
    let mut n = 0u64;
    loop {
        let page = client
            .list_findings(req.clone())
            .await
            .context("listing findings")?
            .into_inner();
        for f in &page.findings {
            if a.limit > 0 && n >= a.limit {
                return Ok(0);
            }
            n += 1;
            if json {
                println!("{}", serde_json::to_string(&finding_json(f))?);
            } else {
                println!("{}", proto_line(f));
            }
        }
        match page.next_after_seq {
            Some(s) => req.after_seq = Some(s),
            None => break,
        }
    }
    if !json {
        eprintln!("{n} finding(s)");
    }
    Ok(0)
}

/// A proto finding as JSON (the same fields as the audit crate's `Finding`).
pub fn finding_json(f: &v1::Finding) -> serde_json::Value {
    let sev = v1::Severity::try_from(f.severity)
        .map(|s| {
            s.as_str_name()
                .trim_start_matches("SEVERITY_")
                .to_lowercase()
        })
        .unwrap_or_default();
    serde_json::json!({
        "id": f.id, "seq": f.seq, "severity": sev, "for_review": f.for_review,
        "code": f.code, "citation": f.citation, "casino_id": f.casino_id,
        "table_id": f.table_id, "machine_id": f.machine_id, "pool_id": f.pool_id,
        "device_id": f.device_id, "game": f.game, "round_id": f.round_id, "bet_id": f.bet_id,
        "due_cents": f.due_cents, "reported_cents": f.reported_cents,
        "evidence": f.evidence, "at_ms": f.at_ms, "message": f.message,
    })
}
