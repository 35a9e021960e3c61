//! `ledgerctl report`: the summary report of the table games from the live audit
//! (Audit.GetReport), per casino, table and game: rounds, handle, the casino's win as the rules
//! say it was due and as the casino reported it, hold, discrepancies. For a period, or for a
//! gaming day with its month and year to date (and, with --days, each of the last days). As an
//! aligned table, CSV or JSON. The gaming days are the ledger's (ledgerd `[reports]`). With
//! --machines, the slot machines' figures over the same periods instead: wagered, won, takings
//! and the return against the approved model's.

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
A round counts when it closed (settlement or void declaration), by the ledger's receive time:
with --day on its casino's gaming day (ledgerd's [reports]: Europe/Lisbon from 06:00 unless
configured), so a closed day's figures never change; with --from/--to if it closed within
from ≤ t < to (UTC instants).

Columns: rounds (void ones among them), handle (stakes decided), the casino's win as the rules
make it due and as the casino reported it (players' losses plus the house take), hold = win ÷
handle (reported and due), and the bets whose reported result differs from the due one (count
and the sum of the differences). One line per casino, table and game, then a total per casino
and a grand total. CSV and JSON carry the players' nets as well, in cents.

Examples:
  ledgerctl report --day 2026-11-21                 day, month to date, year to date
  ledgerctl report --day 2026-11-21 --days 7        ... and each of the last 7 gaming days
  ledgerctl report --day today --format csv > today.csv
  ledgerctl report --from 2026-11-01 --to 2026-11-08T06:00:00Z --format json
  ledgerctl report --day 2026-11-21 --machines       slot machines: wagered, won, return

With --machines, per machine and a total per casino: the meter increases the ledger received in
the period (a reading counts on the gaming day of its receive time), wagered (bets meter), won
(prizes meter plus jackpots paid), takings (wagered − won), the return observed and the one the
approved model expects (pay table plus jackpot contributions), and the variance: won − expected
prizes in euros, observed − expected return in percentage points. JSON always has both.")]
pub struct Args {
    /// Start of the period: RFC 3339 (2026-11-21T10:00:00Z) or a date (midnight UTC).
    #[arg(long, value_name = "TIME", requires = "to")]
    pub from: Option<String>,
    /// End of the period, exclusive.
    #[arg(long, value_name = "TIME", requires = "from")]
    pub to: Option<String>,
    /// A gaming day (YYYY-MM-DD, or `today` in Europe/Lisbon from 06:00) with month and year to date.
    #[arg(long, value_name = "YYYY-MM-DD", conflicts_with_all = ["from", "to"])]
    pub day: Option<String>,
    /// With --day: also each of the N gaming days ending with it (at most 366).
    #[arg(long, value_name = "N", requires = "day", value_parser = clap::value_parser!(u32).range(0..=366))]
    pub days: Option<u32>,
    /// The slot machines' figures instead of the tables'.
    #[arg(long)]
    pub machines: bool,
    /// Output format (--json is the same as --format json).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    #[command(flatten)]
    pub server: ServerArg,
}

fn day_arg(s: &str) -> anyhow::Result<String> {
    if s == "today" {
        return Ok(audit::DayRule::default()
            .day_of(chrono::Utc::now().timestamp_millis())
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
        (Some(d), _, _) => {
            req.day = day_arg(d)?;
            req.days = a.days.unwrap_or(0);
        }
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
        Format::Table if a.machines => render_slots_table(&report),
        Format::Csv if a.machines => render_slots_csv(&report),
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
    let (day, last) = (&p.first_day, &p.last_day);
    let range = format!("{} to {} (exclusive)", time_s(p.from_ms), time_s(p.to_ms));
    match p.name.as_str() {
        "day" => format!("Gaming day {day}  [{range}]"),
        "month_to_date" => format!("Month to date, gaming days {day} to {last}  [{range}]"),
        "year_to_date" => format!("Year to date, gaming days {day} to {last}  [{range}]"),
        "gaming_day" => format!("Gaming day {day}  [{range}]"),
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
    if !report.gaming_day.is_empty() && report.periods.iter().any(|p| !p.first_day.is_empty()) {
        out.push_str(&format!("Gaming days: {}\n\n", report.gaming_day));
    }
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
hold_bp,due_hold_bp,discrepancies,discrepancy_abs_cents,first_day,last_day";

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
                p.first_day.clone(),
                p.last_day.clone(),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

/// An optional figure in basis points as a percentage, or "–".
fn opt_pct(bp: Option<i64>) -> String {
    bp.map(pct).unwrap_or_else(|| "–".into())
}

pub fn render_slots_table(report: &v1::Report) -> String {
    let headers = [
        ("casino", Align::Left),
        ("machine", Align::Left),
        ("model", Align::Left),
        ("wagered", Align::Right),
        ("won", Align::Right),
        ("takings", Align::Right),
        ("return %", Align::Right),
        ("model %", Align::Right),
        ("variance", Align::Right),
        ("variance pp", Align::Right),
    ];
    let mut out = String::new();
    if !report.gaming_day.is_empty() && report.periods.iter().any(|p| !p.first_day.is_empty()) {
        out.push_str(&format!("Gaming days: {}\n\n", report.gaming_day));
    }
    let periods: Vec<_> = report
        .periods
        .iter()
        .filter(|p| p.name != "gaming_day")
        .collect();
    for (i, p) in periods.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&period_title(p));
        out.push('\n');
        if p.slot_rows.is_empty() {
            out.push_str("  no slot machine\n");
            continue;
        }
        let rows: Vec<Vec<String>> = p
            .slot_rows
            .iter()
            .map(|r| {
                let partial = if r.partial { " (partial)" } else { "" };
                vec![
                    r.casino_id.clone(),
                    if r.machine_id == "*" {
                        "total".to_string()
                    } else {
                        r.machine_id.clone()
                    },
                    r.model_id.clone(),
                    eur(r.wagered_cents),
                    eur(r.won_cents),
                    eur(r.takings_cents),
                    opt_pct(r.actual_rtp_bp),
                    opt_pct(r.expected_rtp_bp),
                    r.variance_cents
                        .map(|v| format!("{}{partial}", crate::present::eur_signed(v)))
                        .unwrap_or_else(|| "–".into()),
                    opt_pct(r.variance_bp),
                ]
            })
            .collect();
        out.push_str(&table(&headers, &rows));
    }
    out
}

pub const SLOTS_CSV_HEADER: &str = "period,from,to,casino_id,machine_id,model_id,readings,\
wagered_cents,won_cents,takings_cents,drop_cents,actual_rtp_bp,expected_rtp_bp,theoretical_rtp_bp,\
expected_won_cents,variance_cents,variance_bp,partial,first_day,last_day";

pub fn render_slots_csv(report: &v1::Report) -> String {
    let o = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
    let mut out = String::from(SLOTS_CSV_HEADER);
    out.push('\n');
    for p in &report.periods {
        for r in &p.slot_rows {
            let fields = [
                csv_field(&p.name),
                time_s(p.from_ms),
                time_s(p.to_ms),
                csv_field(&r.casino_id),
                csv_field(&r.machine_id),
                csv_field(&r.model_id),
                r.readings.to_string(),
                r.wagered_cents.to_string(),
                r.won_cents.to_string(),
                r.takings_cents.to_string(),
                r.drop_cents.to_string(),
                o(r.actual_rtp_bp),
                o(r.expected_rtp_bp),
                o(r.theoretical_rtp_bp),
                o(r.expected_won_cents),
                o(r.variance_cents),
                o(r.variance_bp),
                r.partial.to_string(),
                p.first_day.clone(),
                p.last_day.clone(),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

pub fn to_json(report: &v1::Report) -> serde_json::Value {
    serde_json::json!({
        "gaming_day": report.gaming_day,
        "periods": report.periods.iter().map(|p| serde_json::json!({
            "name": p.name,
            "first_day": p.first_day,
            "last_day": p.last_day,
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
            "slot_rows": p.slot_rows.iter().map(|r| serde_json::json!({
                "casino_id": r.casino_id,
                "machine_id": r.machine_id,
                "model_id": r.model_id,
                "readings": r.readings,
                "wagered_cents": r.wagered_cents,
                "won_cents": r.won_cents,
                "takings_cents": r.takings_cents,
                "drop_cents": r.drop_cents,
                "actual_rtp_bp": r.actual_rtp_bp,
                "expected_rtp_bp": r.expected_rtp_bp,
                "theoretical_rtp_bp": r.theoretical_rtp_bp,
                "expected_won_cents": r.expected_won_cents,
                "variance_cents": r.variance_cents,
                "variance_bp": r.variance_bp,
                "partial": r.partial,
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
                ..Default::default()
            }],
            ..Default::default()
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

    #[test]
    fn machines_show_wagered_won_takings_and_the_variance_against_the_model() {
        let slot = |machine: &str, wagered: i64, won: i64| v1::SlotReportRow {
            casino_id: "lisboa".into(),
            machine_id: machine.into(),
            model_id: if machine == "*" { "" } else { "M-91" }.into(),
            readings: 2,
            wagered_cents: wagered,
            won_cents: won,
            takings_cents: wagered - won,
            actual_rtp_bp: Some(won * 10_000 / wagered),
            expected_rtp_bp: Some(9_100),
            expected_won_cents: Some(wagered * 91 / 100),
            variance_cents: Some(won - wagered * 91 / 100),
            variance_bp: Some(won * 10_000 / wagered - 9_100),
            ..Default::default()
        };
        let mut r = report();
        r.periods[0].slot_rows = vec![slot("S1", 400_000, 324_000), slot("*", 400_000, 324_000)];
        let t = render_slots_table(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[1].starts_with("casino") && lines[1].contains("variance pp"),
            "{t}"
        );
        // 4,000.00 wagered, 3,240.00 won: 760.00 taken, 81 % against the model's 91 %, 400.00
        // less than expected.
        for want in [
            "S1".to_string(),
            eur(400_000),
            eur(324_000),
            eur(76_000),
            "81.00".into(),
            "91.00".into(),
            crate::present::eur_signed(-40_000),
            "-10.00".into(),
        ] {
            assert!(lines[2].contains(&want), "{want} in {}", lines[2]);
        }
        assert!(lines[3].contains("total"), "{t}");
        let c = render_slots_csv(&r);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines[0], SLOTS_CSV_HEADER);
        assert!(
            lines[1].starts_with("period,1970-01-01T00:00:00Z,1970-01-02T00:00:00Z,lisboa,S1,M-91,2,400000,324000,76000,0,8100,9100,,364000,-40000,-1000,false,"),
            "{}",
            lines[1]
        );
        assert_eq!(lines.len(), 3);
    }
}
