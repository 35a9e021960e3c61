//! `ledgerctl report`: the summary report of the table games from the live audit
//! (Audit.GetReport), per casino, table and game: rounds, handle, the casino's win as the rules
//! say it was due and as the casino reported it, hold, discrepancies. For a period, or for a day
//! with its month and year to date. As an aligned table, CSV or JSON.

use anyhow::Context;
use ledger_core::proto as v1;

use crate::common::{self, ServerArg};
use crate::present::{Align, csv_field, eur, pct, status_error, table, time_s};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns, euros with 2 decimals, hold in % with 2 decimals.
    Table,
    /// A header row, then one row per line; money in integer cents, hold in basis points.
    Csv,
    /// The report as one JSON document (cents and basis points).
    Json,
}

#[derive(clap::Args, Debug)]
#[command(
    group(clap::ArgGroup::new("when").required(true).args(["from", "day"])),
    after_long_help = "\
Rounds count in the period in which they closed (settlement or void declaration), by the
ledger's receive time, UTC. Periods are half-open: from ≤ t < to.

Columns: rounds (void ones among them), handle (stakes decided), the casino's win as the rules
make it due and as the casino reported it (players' losses plus the house take), hold = win ÷
handle (reported and due), and the bets whose reported result differs from the due one (count
and the sum of the differences). One line per casino, table and game, then a total per casino
and a grand total. CSV and JSON carry the players' nets as well, in cents.

Examples:
  ledgerctl report --day 2026-11-21                 day, month to date, year to date
  ledgerctl report --day today --format csv > today.csv
  ledgerctl report --from 2026-11-01 --to 2026-11-08T06:00:00Z --format json")]
pub struct Args {
    /// Start of the period: RFC 3339 (2026-11-21T10:00:00Z) or a date (midnight UTC).
    #[arg(long, value_name = "TIME", requires = "to")]
    pub from: Option<String>,
    /// End of the period, exclusive.
    #[arg(long, value_name = "TIME", requires = "from")]
    pub to: Option<String>,
    /// A UTC day (YYYY-MM-DD, or `today`): the day, the month to date and the year to date.
    #[arg(long, value_name = "YYYY-MM-DD", conflicts_with_all = ["from", "to"])]
    pub day: Option<String>,
    /// Output format (--json is the same as --format json).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    #[command(flatten)]
    pub server: ServerArg,
}

fn day_arg(s: &str) -> anyhow::Result<String> {
    if s == "today" {
        return Ok(chrono::Utc::now()
            .date_naive()
            .format("%Y-%m-%d")
            .to_string());
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map(|d| d.format("%Y-%m-%d").to_string())
        .map_err(|_| anyhow::anyhow!("--day: `{s}` is not a date YYYY-MM-DD (or `today`)"))
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let format = if json { Format::Json } else { a.format };
    let mut req = v1::ReportRequest::default();
    match (&a.day, &a.from, &a.to) {
        (Some(d), _, _) => req.day = day_arg(d)?,
        (None, Some(f), Some(t)) => {
            let from = crate::findings::parse_time("from", f)?;
            let to = crate::findings::parse_time("to", t)?;
            if to <= from {
                anyhow::bail!("--to ({t}) must be after --from ({f})");
            }
            req.from_ms = Some(from);
            req.to_ms = Some(to);
        }
        _ => anyhow::bail!("give --from and --to, or --day"),
    }
    let channel = common::channel(&a.server.server).await?;
    let report = v1::audit_client::AuditClient::new(channel)
        .max_decoding_message_size(64 << 20)
        .get_report(req)
        .await
        .map_err(|s| status_error("report", s))?
        .into_inner();
    let text = match format {
        Format::Table => render_table(&report),
        Format::Csv => render_csv(&report),
        Format::Json => {
            serde_json::to_string_pretty(&to_json(&report)).context("encoding the report")? + "\n"
        }
    };
    print!("{text}");
    Ok(0)
}

fn period_title(p: &v1::ReportPeriod) -> String {
    let day = time_s(p.from_ms).chars().take(10).collect::<String>();
    let last = time_s(p.to_ms.saturating_sub(1))
        .chars()
        .take(10)
        .collect::<String>();
    let range = format!("{} to {} (exclusive)", time_s(p.from_ms), time_s(p.to_ms));
    match p.name.as_str() {
        "day" => format!("Day {day}  [{range}]"),
        "month_to_date" => format!("Month to date, {day} to {last}  [{range}]"),
        "year_to_date" => format!("Year to date, {day} to {last}  [{range}]"),
        _ => format!("Period {range}"),
    }
}

/// Rows in reading order: each casino's tables, then its total; the grand total last.
fn ordered(rows: &[v1::ReportRow]) -> Vec<&v1::ReportRow> {
    let mut casinos: Vec<&str> = rows
        .iter()
        .map(|r| r.casino_id.as_str())
        .filter(|c| *c != "*")
        .collect();
    casinos.dedup();
    let mut out = Vec::with_capacity(rows.len());
    for c in casinos {
        out.extend(
            rows.iter()
                .filter(|r| r.casino_id == c && r.table_id != "*"),
        );
        out.extend(
            rows.iter()
                .filter(|r| r.casino_id == c && r.table_id == "*"),
        );
    }
    out.extend(rows.iter().filter(|r| r.casino_id == "*"));
    out
}

pub fn render_table(report: &v1::Report) -> String {
    let headers = [
        ("casino", Align::Left),
        ("table", Align::Left),
        ("game", Align::Left),
        ("rounds", Align::Right),
        ("void", Align::Right),
        ("handle", Align::Right),
        ("due win", Align::Right),
        ("reported win", Align::Right),
        ("hold %", Align::Right),
        ("due hold %", Align::Right),
        ("discrepancies", Align::Right),
        ("discrepancy", Align::Right),
    ];
    let mut out = String::new();
    for (i, p) in report.periods.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&period_title(p));
        out.push('\n');
        if p.rows.is_empty() {
            out.push_str("  no round closed in this period\n");
            continue;
        }
        let rows: Vec<Vec<String>> = ordered(&p.rows)
            .into_iter()
            .map(|r| {
                let (casino, tbl, game) = match (r.casino_id.as_str(), r.table_id.as_str()) {
                    ("*", _) => ("TOTAL".to_string(), String::new(), String::new()),
                    (c, "*") => (c.to_string(), "total".to_string(), String::new()),
                    (c, t) => (c.to_string(), t.to_string(), r.game.clone()),
                };
                vec![
                    casino,
                    tbl,
                    game,
                    r.rounds.to_string(),
                    r.void_rounds.to_string(),
                    eur(r.handle_cents),
                    eur(r.due_win_cents),
                    eur(r.reported_win_cents),
                    pct(r.hold_bp),
                    pct(r.due_hold_bp),
                    r.discrepancies.to_string(),
                    eur(r.discrepancy_abs_cents),
                ]
            })
            .collect();
        out.push_str(&table(&headers, &rows));
    }
    out
}

pub const CSV_HEADER: &str = "period,from,to,casino_id,table_id,game,rounds,void_rounds,\
handle_cents,due_player_net_cents,reported_player_net_cents,due_win_cents,reported_win_cents,\
hold_bp,due_hold_bp,discrepancies,discrepancy_abs_cents";

pub fn render_csv(report: &v1::Report) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for p in &report.periods {
        for r in ordered(&p.rows) {
            let fields = [
                csv_field(&p.name),
                time_s(p.from_ms),
                time_s(p.to_ms),
                csv_field(&r.casino_id),
                csv_field(&r.table_id),
                csv_field(&r.game),
                r.rounds.to_string(),
                r.void_rounds.to_string(),
                r.handle_cents.to_string(),
                r.due_player_net_cents.to_string(),
                r.reported_player_net_cents.to_string(),
                r.due_win_cents.to_string(),
                r.reported_win_cents.to_string(),
                r.hold_bp.to_string(),
                r.due_hold_bp.to_string(),
                r.discrepancies.to_string(),
                r.discrepancy_abs_cents.to_string(),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

pub fn to_json(report: &v1::Report) -> serde_json::Value {
    serde_json::json!({
        "periods": report.periods.iter().map(|p| serde_json::json!({
            "name": p.name,
            "from": time_s(p.from_ms),
            "to": time_s(p.to_ms),
            "from_ms": p.from_ms,
            "to_ms": p.to_ms,
            "rows": p.rows.iter().map(|r| serde_json::json!({
                "casino_id": r.casino_id,
                "table_id": r.table_id,
                "game": r.game,
                "rounds": r.rounds,
                "void_rounds": r.void_rounds,
                "handle_cents": r.handle_cents,
                "due_player_net_cents": r.due_player_net_cents,
                "reported_player_net_cents": r.reported_player_net_cents,
                "due_win_cents": r.due_win_cents,
                "reported_win_cents": r.reported_win_cents,
                "hold_bp": r.hold_bp,
                "due_hold_bp": r.due_hold_bp,
                "discrepancies": r.discrepancies,
                "discrepancy_abs_cents": r.discrepancy_abs_cents,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(casino: &str, table: &str, game: &str, handle: i64, win: i64) -> v1::ReportRow {
        v1::ReportRow {
            casino_id: casino.into(),
            table_id: table.into(),
            game: game.into(),
            rounds: 3,
            handle_cents: handle,
            due_win_cents: win,
            reported_win_cents: win,
            hold_bp: audit::hold_bp(win, handle),
            due_hold_bp: audit::hold_bp(win, handle),
            ..Default::default()
        }
    }

    fn report() -> v1::Report {
        v1::Report {
            periods: vec![v1::ReportPeriod {
                name: "period".into(),
                from_ms: 0,
                to_ms: 86_400_000,
                // As the server sorts them: "*" before letters.
                rows: vec![
                    row("*", "*", "*", 30_000, 1_000),
                    row("lisboa", "*", "*", 30_000, 1_000),
                    row("lisboa", "T1, west", "craps", 10_000, -500),
                    row("lisboa", "T2", "blackjack", 20_000, 1_500),
                ],
            }],
        }
    }

    #[test]
    fn table_rows_in_reading_order_with_totals_last() {
        let t = render_table(&report());
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("Period 1970-01-01T00:00:00Z"), "{t}");
        assert!(lines[1].starts_with("casino"), "{t}");
        assert!(lines[2].contains("T1, west") && lines[2].contains("-5.00"));
        assert!(lines[3].contains("T2") && lines[3].contains("7.50"), "{t}");
        assert!(lines[4].contains("total") && lines[4].contains("300.00"));
        assert!(lines[5].starts_with("TOTAL") && lines[5].contains("3.33"));
        // Aligned: every line of the table has the hold column ending at the same place.
        let header: Vec<char> = lines[1].chars().collect();
        let hold_end = (0..header.len())
            .find(|&i| header[i..].starts_with(&['h', 'o', 'l', 'd', ' ', '%']))
            .unwrap()
            + 6;
        for l in &lines[2..6] {
            let c: Vec<char> = l.chars().collect();
            assert!(c[hold_end - 1].is_ascii_digit(), "{l}");
            assert_eq!(c[hold_end], ' ', "{l}");
        }
    }

    #[test]
    fn csv_has_a_header_and_integer_cents() {
        let c = render_csv(&report());
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), 5);
        assert!(lines[1].starts_with("period,1970-01-01T00:00:00Z,1970-01-02T00:00:00Z,lisboa,\"T1, west\",craps,3,0,10000,"), "{}", lines[1]);
        assert!(lines[4].starts_with("period,") && lines[4].contains(",*,*,*,3,0,30000,"));
    }
}
