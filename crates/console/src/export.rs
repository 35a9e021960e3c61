//! Findings as CSV and XLSX: the columns of the Findings page, money in integer cents (exact,
//! for the reader's own sums) and times in RFC 3339 UTC.

use ledger_core::proto as v1;
use rust_xlsxwriter::{Format, Workbook, XlsxError};

pub const COLUMNS: [&str; 15] = [
    "seq",
    "id",
    "at_utc",
    "severity",
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

enum Cell {
    Int(i64),
    Text(String),
    Empty,
}

fn row(f: &v1::Finding) -> [Cell; 15] {
    use Cell::*;
    let opt = |v: Option<i64>| v.map(Int).unwrap_or(Empty);
    [
        Int(f.seq as i64),
        Text(f.id.clone()),
        Text(ledger_fmt::rfc3339_ms(f.at_ms)),
        Text(severity_name(f.severity).into()),
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
fn csv_field(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
            "3,f3,2026-11-28T23:30:00.000Z,high,RL_WRONG_PAYOUT,lisboa,T1,,,,,3500,-100,,\"paid 10, \"\"due\"\" 35\""
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
}
