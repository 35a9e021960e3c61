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

/// An aligned text table: a header row, then the rows, columns separated by two spaces.
/// Trailing spaces are trimmed. Widths count characters, not bytes.
pub fn table(headers: &[(&str, Align)], rows: &[Vec<String>]) -> String {
    let n = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|(h, _)| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = widths[i].saturating_sub(c.chars().count());
            match headers[i].1 {
                Align::Left => {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(headers.iter().map(|(h, _)| *h).collect());
    out.push('\n');
    for r in rows {
        out.push_str(&line(
            (0..n)
                .map(|i| r.get(i).map(String::as_str).unwrap_or(""))
                .collect(),
        ));
        out.push('\n');
    }
    out
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
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
    fn csv_quoting() {
        assert_eq!(csv_field("T01"), "T01");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
