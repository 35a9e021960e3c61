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
    /// Only in this review status: open, acknowledged, disputed, resolved.
    #[arg(long)]
    pub status: Option<String>,
    /// At most this many (0: all).
    #[arg(long, default_value_t = 0)]
    pub limit: u64,
    #[command(flatten)]
    pub server: ServerArg,
}

/// `ledgerctl finding`: one finding, and its review.
#[derive(clap::Subcommand, Debug)]
pub enum FindingCommand {
    /// One finding with its status and review history.
    Show(ShowArgs),
    /// Review a finding (recorded in the chain for your client certificate's principal).
    #[command(after_long_help = "\
Examples:
  ledgerctl finding review F0a1b2c3d4e5f60718293a4b --action acknowledge --comment \"seen; table closed\"
  ledgerctl finding review F0a1b2c3d4e5f60718293a4b --action resolve --comment \"player repaid 35 EUR\"")]
    Review(ReviewArgs),
}

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The finding's id (as `ledgerctl findings` shows it).
    pub id: String,
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
pub struct ReviewArgs {
    /// The finding's id (as `ledgerctl findings` shows it).
    pub id: String,
    /// What the review does: acknowledge, dispute or resolve.
    #[arg(long)]
    pub action: String,
    /// Why, at most 2000 characters (required to resolve).
    #[arg(long, default_value = "")]
    pub comment: String,
    #[command(flatten)]
    pub server: ServerArg,
}

/// `--status`'s value.
fn status_arg(s: &str) -> anyhow::Result<i32> {
    match ledger_core::review::parse_status(s) {
        Some(v1::FindingStatus::Unspecified) | None => {
            anyhow::bail!("--status: `{s}` is not one of open, acknowledged, disputed, resolved")
        }
        Some(st) => Ok(st as i32),
    }
}

/// A status's name, or "" when the answer has none.
fn status_of(f: &v1::Finding) -> &'static str {
    match v1::FindingStatus::try_from(f.status) {
        Ok(v1::FindingStatus::Unspecified) | Err(_) => "",
        Ok(s) => ledger_core::review::status_name(s),
    }
}

/// One review on one line.
pub fn review_line(r: &v1::FindingReview) -> String {
    let rec = r.record.clone().unwrap_or_default();
    let action = v1::FindingAction::try_from(rec.action).unwrap_or_default();
    format!(
        "entry {:<8} {}  {:<11} by {} ({}){}",
        r.index,
        ledger_fmt::rfc3339_s(r.at_ms),
        ledger_core::review::action_name(action),
        rec.principal,
        rec.principal_role,
        if rec.comment.is_empty() {
            String::new()
        } else {
            format!(": {}", rec.comment.escape_debug())
        }
    )
}

/// `ledgerctl finding show|review`.
pub async fn run_finding(c: FindingCommand, json: bool) -> anyhow::Result<i32> {
    match c {
        FindingCommand::Show(a) => {
            let channel = common::channel(&a.server.server).await?;
            let mut client = v1::audit_client::AuditClient::new(channel);
            let d = client
                .get_finding(v1::GetFindingRequest { finding_id: a.id })
                .await
                .context("reading the finding")?
                .into_inner();
            let f = d.finding.unwrap_or_default();
            if json {
                let mut v = finding_json(&f);
                v["history"] = d.history.iter().map(review_json).collect();
                println!("{}", serde_json::to_string(&v)?);
            } else {
                println!("{}\n       id: {}", proto_line(&f), f.id);
                if d.history.is_empty() {
                    println!("       never reviewed");
                }
                for r in &d.history {
                    println!("       {}", review_line(r));
                }
            }
            Ok(0)
        }
        FindingCommand::Review(a) => {
            let action = ledger_core::review::parse_action(&a.action).ok_or_else(|| {
                anyhow::anyhow!(
                    "--action: `{}` is not one of acknowledge, dispute, resolve",
                    a.action
                )
            })?;
            ledger_core::review::check_comment(&a.comment).map_err(|e| anyhow::anyhow!("--{e}"))?;
            if action == v1::FindingAction::Resolve && a.comment.trim().is_empty() {
                anyhow::bail!("--comment: required to resolve (say how it was dealt with)");
            }
            let channel = common::channel(&a.server.server).await?;
            let mut client = v1::audit_client::AuditClient::new(channel);
            let r = client
                .review_finding(v1::ReviewFindingRequest {
                    finding_id: a.id,
                    action: action as i32,
                    comment: a.comment,
                })
                .await
                .context("reviewing the finding")?
                .into_inner();
            if json {
                println!("{}", serde_json::to_string(&review_json(&r))?);
            } else {
                let rec = r.record.clone().unwrap_or_default();
                println!(
                    "finding {} {}: recorded in entry {}",
                    rec.finding_id,
                    ledger_core::review::status_name(ledger_core::review::status_after(action)),
                    r.index
                );
            }
            Ok(0)
        }
    }
}

/// A review as JSON.
pub fn review_json(r: &v1::FindingReview) -> serde_json::Value {
    let rec = r.record.clone().unwrap_or_default();
    serde_json::json!({
        "index": r.index, "at_ms": r.at_ms, "finding_id": rec.finding_id,
        "action": ledger_core::review::action_name(
            v1::FindingAction::try_from(rec.action).unwrap_or_default()),
        "comment": rec.comment, "principal": rec.principal,
        "principal_role": rec.principal_role,
        "principal_fingerprint": rec.principal_fingerprint,
        "casino_id": rec.casino_id, "code": rec.code, "finding_seq": rec.finding_seq,
        "previous_status": ledger_core::review::status_name(
            v1::FindingStatus::try_from(rec.previous_status).unwrap_or_default()),
    })
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
    let status = status_of(f);
    format!(
        "#{:<5} {:<8} {}{}{}  {}{}\n       {}\n       rule: {}  evidence: entries {}",
        f.seq,
        sev,
        if status.is_empty() {
            String::new()
        } else {
            format!("{status:<13}")
        },
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
        status: a
            .status
            .as_deref()
            .map(status_arg)
            .transpose()?
            .unwrap_or(0),
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
        "status": status_of(f),
    })
}
