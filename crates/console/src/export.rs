//! Findings as CSV and XLSX: the columns of the Findings page, money in integer cents (exact,
//! for the reader's own sums) and times in RFC 3339 UTC.

use ledger_core::proto as v1;
use rust_xlsxwriter::{Format, Workbook, XlsxError};

pub const COLUMNS: [&str; 16] = [
    "seq",
    "id",
    "at_utc",
    "severity",
    "status",
    "code",
    "casino",
    "table",
    "machine",
    "game",
    "round",
    "bet",
    "due_cents",
    "reported_cents",
    "citation",
    "message",
];

pub fn severity_name(s: i32) -> &'static str {
    match v1::Severity::try_from(s).unwrap_or(v1::Severity::Unspecified) {
        v1::Severity::Unspecified => "unspecified",
        v1::Severity::Info => "info",
        v1::Severity::Low => "low",
        v1::Severity::Medium => "medium",
        v1::Severity::High => "high",
        v1::Severity::Critical => "critical",
    }
}

/// A finding's review status as the Findings page's status filter names it.
pub fn status_name(s: i32) -> &'static str {
    match v1::FindingStatus::try_from(s).unwrap_or(v1::FindingStatus::Unspecified) {
        v1::FindingStatus::Unspecified => "",
        v1::FindingStatus::Open => "open",
        v1::FindingStatus::Acknowledged => "acknowledged",
        v1::FindingStatus::Disputed => "disputed",
        v1::FindingStatus::Resolved => "resolved",
    }
}

enum Cell {
    Int(i64),
    Text(String),
    Empty,
}

fn row(f: &v1::Finding) -> [Cell; 16] {
    use Cell::*;
    let opt = |v: Option<i64>| v.map(Int).unwrap_or(Empty);
    [
        Int(f.seq as i64),
        Text(f.id.clone()),
        Text(ledger_fmt::rfc3339_ms(f.at_ms)),
        Text(severity_name(f.severity).into()),
        Text(status_name(f.status).into()),
        Text(f.code.clone()),
        Text(f.casino_id.clone()),
        Text(f.table_id.clone()),
        Text(f.machine_id.clone()),
        Text(f.game.clone()),
        Text(f.round_id.clone()),
        Text(f.bet_id.clone()),
        opt(f.due_cents),
        opt(f.reported_cents),
        Text(f.citation.clone()),
        Text(f.message.clone()),
    ]
}

/// RFC 4180 quoting; a field a spreadsheet would read as a formula gets a leading `'`.
pub(crate) fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

pub fn csv(findings: &[v1::Finding]) -> String {
    let mut out = COLUMNS.join(",");
    out.push_str("\r\n");
    for f in findings {
        let cells: Vec<String> = row(f)
            .into_iter()
            .map(|c| match c {
                Cell::Int(i) => i.to_string(),
                Cell::Text(t) => csv_field(&t),
                Cell::Empty => String::new(),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

pub fn xlsx(findings: &[v1::Finding]) -> Result<Vec<u8>, XlsxError> {
    let mut wb = Workbook::new();
    let bold = Format::new().set_bold();
    let ws = wb.add_worksheet();
    ws.set_name("findings")?;
    for (c, h) in COLUMNS.iter().enumerate() {
        ws.write_string_with_format(0, c as u16, *h, &bold)?;
    }
    for (r, f) in findings.iter().enumerate() {
        let r = r as u32 + 1;
        for (c, cell) in row(f).into_iter().enumerate() {
            match cell {
                // Integers up to 2^53 are exact in a spreadsheet's numbers; cents beyond that
                // are written as text so that no digit is lost.
                Cell::Int(i) if i.unsigned_abs() < (1 << 53) => {
                    ws.write_number(r, c as u16, i as f64)?;
                }
                Cell::Int(i) => {
                    ws.write_string(r, c as u16, i.to_string())?;
                }
                // Text cells are strings, never formulas, whatever they start with.
                Cell::Text(t) => {
                    ws.write_string(r, c as u16, t)?;
                }
                Cell::Empty => {}
            }
        }
    }
    ws.set_freeze_panes(1, 0)?;
    wb.save_to_buffer()
}

/// The report's columns (day, month and year to date; money in integer cents, hold in basis
/// points, as `ledgerctl report --format csv`).
pub const REPORT_COLUMNS: [&str; 15] = [
    "period",
    "first_day",
    "last_day",
    "casino",
    "table",
    "game",
    "rounds",
    "void_rounds",
    "handle_cents",
    "reported_win_cents",
    "due_win_cents",
    "hold_bp",
    "due_hold_bp",
    "discrepancies",
    "discrepancy_abs_cents",
];

fn report_rows(r: &v1::Report) -> Vec<[Cell; 15]> {
    use Cell::*;
    let mut out = Vec::new();
    for p in r.periods.iter().filter(|p| p.name != "gaming_day") {
        for row in &p.rows {
            out.push([
                Text(p.name.clone()),
                Text(p.first_day.clone()),
                Text(p.last_day.clone()),
                Text(row.casino_id.clone()),
                Text(row.table_id.clone()),
                Text(row.game.clone()),
                Int(row.rounds as i64),
                Int(row.void_rounds as i64),
                Int(row.handle_cents),
                Int(row.reported_win_cents),
                Int(row.due_win_cents),
                Int(row.hold_bp),
                Int(row.due_hold_bp),
                Int(row.discrepancies as i64),
                Int(row.discrepancy_abs_cents),
            ]);
        }
    }
    out
}

fn csv_of<const N: usize>(columns: &[&str; N], rows: Vec<[Cell; N]>) -> String {
    let mut out = columns.join(",");
    out.push_str("\r\n");
    for row in rows {
        let cells: Vec<String> = row
            .into_iter()
            .map(|c| match c {
                Cell::Int(i) => i.to_string(),
                Cell::Text(t) => csv_field(&t),
                Cell::Empty => String::new(),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

fn xlsx_of<const N: usize>(
    sheet: &str,
    columns: &[&str; N],
    rows: Vec<[Cell; N]>,
) -> Result<Vec<u8>, XlsxError> {
    let mut wb = Workbook::new();
    let bold = Format::new().set_bold();
    let ws = wb.add_worksheet();
    ws.set_name(sheet)?;
    for (c, h) in columns.iter().enumerate() {
        ws.write_string_with_format(0, c as u16, *h, &bold)?;
    }
    for (r, row) in rows.into_iter().enumerate() {
        let r = r as u32 + 1;
        for (c, cell) in row.into_iter().enumerate() {
            match cell {
                Cell::Int(i) if i.unsigned_abs() < (1 << 53) => {
                    ws.write_number(r, c as u16, i as f64)?;
                }
                Cell::Int(i) => {
                    ws.write_string(r, c as u16, i.to_string())?;
                }
                Cell::Text(t) => {
                    ws.write_string(r, c as u16, t)?;
                }
                Cell::Empty => {}
            }
        }
    }
    ws.set_freeze_panes(1, 0)?;
    wb.save_to_buffer()
}

/// The report as CSV: a row per period, casino, table and game (casino totals have table `*`,
/// the grand total casino `*`).
pub fn report_csv(r: &v1::Report) -> String {
    csv_of(&REPORT_COLUMNS, report_rows(r))
}

/// The report as an XLSX workbook, the same rows as [`report_csv`].
pub fn report_xlsx(r: &v1::Report) -> Result<Vec<u8>, XlsxError> {
    xlsx_of("report", &REPORT_COLUMNS, report_rows(r))
}

/// The slot machines' columns (day, month and year to date; money in integer cents, returns in
/// basis points, as `ledgerctl report --machines --format csv`).
pub const SLOT_COLUMNS: [&str; 17] = [
    "period",
    "first_day",
    "last_day",
    "casino",
    "machine",
    "model",
    "readings",
    "wagered_cents",
    "won_cents",
    "takings_cents",
    "drop_cents",
    "actual_rtp_bp",
    "expected_rtp_bp",
    "expected_won_cents",
    "variance_cents",
    "variance_bp",
    "partial",
];

fn slot_rows(r: &v1::Report) -> Vec<[Cell; 17]> {
    use Cell::*;
    let opt = |v: Option<i64>| v.map(Int).unwrap_or(Empty);
    let mut out = Vec::new();
    for p in r.periods.iter().filter(|p| p.name != "gaming_day") {
        for row in &p.slot_rows {
            out.push([
                Text(p.name.clone()),
                Text(p.first_day.clone()),
                Text(p.last_day.clone()),
                Text(row.casino_id.clone()),
                Text(row.machine_id.clone()),
                Text(row.model_id.clone()),
                Int(row.readings as i64),
                Int(row.wagered_cents),
                Int(row.won_cents),
                Int(row.takings_cents),
                Int(row.drop_cents),
                opt(row.actual_rtp_bp),
                opt(row.expected_rtp_bp),
                opt(row.expected_won_cents),
                opt(row.variance_cents),
                opt(row.variance_bp),
                Text(row.partial.to_string()),
            ]);
        }
    }
    out
}

/// The slot machines of the report as CSV: a row per period and machine (casino totals have
/// machine `*`).
pub fn slot_report_csv(r: &v1::Report) -> String {
    csv_of(&SLOT_COLUMNS, slot_rows(r))
}

/// The same rows as [`slot_report_csv`], as an XLSX workbook.
pub fn slot_report_xlsx(r: &v1::Report) -> Result<Vec<u8>, XlsxError> {
    xlsx_of("slot machines", &SLOT_COLUMNS, slot_rows(r))
}

/// A gaming day's significant events: `day,casino,machine,kind,count`, a row per machine and
/// kind it had (a machine without any: one row with an empty kind and 0).
pub fn events_csv(
    day: &str,
    machines: &[(String, String, std::collections::BTreeMap<String, u64>)],
) -> String {
    let mut out = String::from("gaming_day,casino,machine,kind,count\r\n");
    for (casino, machine, counts) in machines {
        let row = |kind: &str, n: u64| {
            format!(
                "{},{},{},{},{n}\r\n",
                csv_field(day),
                csv_field(casino),
                csv_field(machine),
                csv_field(kind)
            )
        };
        if counts.is_empty() {
            out.push_str(&row("", 0));
        }
        for (k, n) in counts {
            out.push_str(&row(k, *n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_csv_has_a_row_per_machine_and_kind() {
        let m = |c: &str, id: &str, counts: &[(&str, u64)]| {
            (
                c.to_string(),
                id.to_string(),
                counts.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            )
        };
        let c = events_csv(
            "2026-11-27",
            &[
                m("lisboa", "S1", &[("door", 2), ("power", 1)]),
                m("porto", "S2", &[]),
            ],
        );
        assert_eq!(
            c,
            "gaming_day,casino,machine,kind,count\r\n2026-11-27,lisboa,S1,door,2\r\n\
             2026-11-27,lisboa,S1,power,1\r\n2026-11-27,porto,S2,,0\r\n"
        );
    }

    #[test]
    fn the_slot_csv_has_a_row_per_period_and_machine_with_empty_unknowns() {
        let row = |machine: &str, expected: Option<i64>| v1::SlotReportRow {
            casino_id: "lisboa".into(),
            machine_id: machine.into(),
            model_id: "M".into(),
            readings: 3,
            wagered_cents: 400_000,
            won_cents: 324_000,
            takings_cents: 76_000,
            actual_rtp_bp: Some(8_100),
            expected_rtp_bp: expected,
            variance_cents: expected.map(|_| -40_000),
            ..Default::default()
        };
        let rep = v1::Report {
            periods: vec![
                v1::ReportPeriod {
                    name: "day".into(),
                    first_day: "2026-11-27".into(),
                    last_day: "2026-11-27".into(),
                    slot_rows: vec![row("S1", Some(9_100)), row("S2", None)],
                    ..Default::default()
                },
                v1::ReportPeriod {
                    name: "gaming_day".into(),
                    slot_rows: vec![row("S9", None)],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let c = slot_report_csv(&rep);
        let lines: Vec<&str> = c.split("\r\n").collect();
        assert_eq!(lines[0], SLOT_COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "day,2026-11-27,2026-11-27,lisboa,S1,M,3,400000,324000,76000,0,8100,9100,,-40000,,false"
        );
        assert_eq!(
            lines[2],
            "day,2026-11-27,2026-11-27,lisboa,S2,M,3,400000,324000,76000,0,8100,,,,,false"
        );
        assert_eq!(lines.len(), 4, "the chart's days are not exported");
        assert_eq!(&slot_report_xlsx(&rep).unwrap()[..2], b"PK");
    }

    #[test]
    fn findings_csv_carries_each_findings_review_status() {
        let f = |seq, status: v1::FindingStatus| v1::Finding {
            seq,
            id: format!("f{seq}"),
            code: "C".into(),
            status: status as i32,
            ..Default::default()
        };
        let csv = csv(&[
            f(1, v1::FindingStatus::Open),
            f(2, v1::FindingStatus::Acknowledged),
            f(3, v1::FindingStatus::Resolved),
        ]);
        let col = COLUMNS.iter().position(|c| *c == "status").unwrap();
        let statuses: Vec<&str> = csv
            .lines()
            .map(|l| l.split(',').nth(col).unwrap())
            .collect();
        assert_eq!(statuses, ["status", "open", "acknowledged", "resolved"]);
        // The status sits beside the severity, and the code after it.
        assert_eq!(COLUMNS[col - 1], "severity");
        assert_eq!(COLUMNS[col + 1], "code");
    }

    fn finding(seq: u64, code: &str, msg: &str) -> v1::Finding {
        v1::Finding {
            seq,
            id: format!("f{seq}"),
            code: code.into(),
            severity: v1::Severity::High as i32,
            casino_id: "lisboa".into(),
            table_id: "T1".into(),
            due_cents: Some(3500),
            reported_cents: Some(-100),
            at_ms: 1_795_908_600_000,
            message: msg.into(),
            ..Default::default()
        }
    }

    #[test]
    fn csv_rows_are_the_findings_quoted_and_defused() {
        let c = csv(&[
            finding(3, "RL_WRONG_PAYOUT", "paid 10, \"due\" 35"),
            finding(4, "X", "=HYPERLINK(\"x\")"),
        ]);
        let lines: Vec<&str> = c.split("\r\n").collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "3,f3,2026-11-28T23:30:00.000Z,high,,RL_WRONG_PAYOUT,lisboa,T1,,,,,3500,-100,,\"paid 10, \"\"due\"\" 35\""
        );
        assert!(
            lines[2].ends_with(",\"'=HYPERLINK(\"\"x\"\")\""),
            "{}",
            lines[2]
        );
        assert_eq!(lines.len(), 4, "header, two rows, final CRLF");
    }

    #[test]
    fn xlsx_is_a_zip_workbook() {
        let b = xlsx(&[finding(3, "RL_WRONG_PAYOUT", "m")]).unwrap();
        assert_eq!(&b[..2], b"PK");
        let empty = xlsx(&[]).unwrap();
        assert!(b.len() > empty.len());
    }

    #[test]
    fn the_report_csv_has_a_row_per_period_and_line() {
        let row = |casino: &str, table: &str, handle: i64| v1::ReportRow {
            casino_id: casino.into(),
            table_id: table.into(),
            game: if table == "*" {
                "*".into()
            } else {
                "roulette_french".into()
            },
            rounds: 2,
            handle_cents: handle,
            reported_win_cents: 25,
            due_win_cents: 30,
            hold_bp: 250,
            due_hold_bp: 300,
            ..Default::default()
        };
        let period = |name: &str, a: &str, b: &str| v1::ReportPeriod {
            name: name.into(),
            first_day: a.into(),
            last_day: b.into(),
            rows: vec![row("lisboa", "T1", 1000), row("lisboa", "*", 1000)],
            ..Default::default()
        };
        let r = v1::Report {
            periods: vec![
                period("day", "2026-11-27", "2026-11-27"),
                period("month_to_date", "2026-11-01", "2026-11-27"),
                period("gaming_day", "2026-11-27", "2026-11-27"),
            ],
            gaming_day: "Europe/Lisbon from 06:00".into(),
        };
        let c = report_csv(&r);
        let lines: Vec<&str> = c.split("\r\n").collect();
        assert_eq!(lines[0], REPORT_COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "day,2026-11-27,2026-11-27,lisboa,T1,roulette_french,2,0,1000,25,30,250,300,0,0"
        );
        assert!(lines[4].starts_with("month_to_date,2026-11-01,2026-11-27,lisboa,*,*,2,"));
        assert_eq!(
            lines.len(),
            6,
            "header, four rows (not the series), final CRLF"
        );
        let x = report_xlsx(&r).unwrap();
        assert_eq!(&x[..2], b"PK");
    }
}
