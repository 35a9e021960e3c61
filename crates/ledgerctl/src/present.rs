//! Shared presentation for the audit and jackpot commands (`round`, `report`, `jackpot`): money,
//! percentages and times for humans, aligned text tables, CSV fields, gRPC errors.
//!
//! Money and times go through `ledger-fmt`, the module the console uses too (English here);
//! money is integer cents everywhere and nothing goes through a float. `--json` and CSV keep
//! raw integer cents.

use ledger_fmt::Locale;

/// Euros for people: `€1,234.50`, `-€5.00`.
pub fn eur(cents: i64) -> String {
    ledger_fmt::money(cents, Locale::En)
}

/// [`eur`] for the book's wide sums.
pub fn eur_i128(cents: i128) -> String {
    ledger_fmt::money_i128(cents, Locale::En)
}

/// Euros with an explicit sign for results: `+€350.00`, `-€10.00`, `€0.00`.
pub fn eur_signed(cents: i64) -> String {
    ledger_fmt::money_signed(cents, Locale::En)
}

/// An exact amount in 1/10,000 cent as euros with 6 decimals, e.g. `€490.000045`.
pub fn eur_e4(e4: i128) -> String {
    ledger_fmt::money_e4(e4, Locale::En)
}

/// Basis points as a percentage with two decimals: 8850 → `88.50`, -125 → `-1.25`.
pub fn pct(bp: i64) -> String {
    pct_i128(i128::from(bp))
}

pub fn pct_i128(bp: i128) -> String {
    let sign = if bp < 0 { "-" } else { "" };
    let v = bp.unsigned_abs();
    format!("{sign}{}.{:02}", v / 100, v % 100)
}

/// A ledger time (UTC ms) as RFC 3339 with milliseconds.
pub fn time(ms: i64) -> String {
    ledger_fmt::rfc3339_ms(ms)
}

/// A period bound (UTC ms) as RFC 3339 to the second.
pub fn time_s(ms: i64) -> String {
    ledger_fmt::rfc3339_s(ms)
}

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// An aligned text table: a header row, then the rows, columns separated by two spaces, no
/// borders (comfy-table). Trailing spaces are trimmed. Widths count display columns.
pub fn table(headers: &[(&str, Align)], rows: &[Vec<String>]) -> String {
    use comfy_table::{CellAlignment, ContentArrangement, ContentLineStyle, Table, TableStyle};
    let n = headers.len();
    // No borders or rules; a space between columns, which with a cell's right padding of one
    // gives two.
    let columns = ContentLineStyle::none().junction(' ');
    let mut t = Table::new();
    t.load_style(
        TableStyle::new()
            .header_lines(columns)
            .content_lines(columns),
    )
    .set_content_arrangement(ContentArrangement::Disabled)
    .set_header(headers.iter().map(|(h, _)| *h));
    for r in rows {
        t.add_row((0..n).map(|i| r.get(i).map(String::as_str).unwrap_or("")));
    }
    for (i, (_, align)) in headers.iter().enumerate() {
        if let Some(c) = t.column_mut(i) {
            c.set_padding((0, if i + 1 < n { 1 } else { 0 }));
            c.set_cell_alignment(match align {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
        }
    }
    let mut out = String::new();
    for line in t.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One CSV field (RFC 4180, quoted by the `csv` crate): quoted when it holds a comma, a quote
/// or a line break.
pub fn csv_field(s: &str) -> String {
    if s.is_empty() {
        return String::new(); // alone in a record the crate would write `""`
    }
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing into memory cannot fail.
    let _ = w.write_field(s);
    let _ = w.write_record(None::<&[u8]>);
    let mut out = w
        .into_inner()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    out.pop(); // the terminator
    out
}

/// A gRPC error for a human: the server's message, with `what` we were doing.
pub fn status_error(what: &str, s: tonic::Status) -> anyhow::Error {
    match s.code() {
        tonic::Code::Unimplemented => anyhow::anyhow!(
            "{what}: the ledger does not serve the audit (is [audit] enabled in ledgerd's configuration?)"
        ),
        tonic::Code::Unavailable => {
            anyhow::anyhow!("{what}: the ledger is unavailable: {}", s.message())
        }
        _ => anyhow::anyhow!("{what}: {}", s.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_and_percentages() {
        assert_eq!(eur(0), "€0.00");
        assert_eq!(eur(5), "€0.05");
        assert_eq!(eur(-123_456), "-€1,234.56");
        assert_eq!(eur(i64::MIN), "-€92,233,720,368,547,758.08");
        assert_eq!(eur_signed(35_000), "+€350.00");
        assert_eq!(eur_signed(-500), "-€5.00");
        assert_eq!(eur_e4(4_900_000_045), "€4,900.000045");
        assert_eq!(eur_e4(-45), "-€0.000045");
        assert_eq!(pct(8850), "88.50");
        assert_eq!(pct(-125), "-1.25");
        assert_eq!(pct(7), "0.07");
    }

    #[test]
    fn tables_align_by_characters() {
        let t = table(
            &[("pool", Align::Left), ("captive", Align::Right)],
            &[
                vec!["JP-1".into(), "€12.00".into()],
                vec!["SJP-TEJO".into(), "€3,000.50".into()],
            ],
        );
        assert_eq!(
            t,
            "pool        captive\nJP-1         €12.00\nSJP-TEJO  €3,000.50\n"
        );
    }

    #[test]
    fn tables_keep_short_rows_and_wide_cells_on_one_line() {
        let long = "x".repeat(300);
        let t = table(
            &[("a", Align::Left), ("b", Align::Right), ("c", Align::Left)],
            &[
                vec!["1".into()],
                vec![long.clone(), "22".into(), "z".into()],
            ],
        );
        assert_eq!(
            t,
            format!("a{pad}   b  c\n1\n{long}  22  z\n", pad = " ".repeat(299))
        );
    }

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("T01"), "T01");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field(""), "");
    }
}
