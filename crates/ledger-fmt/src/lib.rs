//! Money and dates for people: the one formatting module of `ledgerctl` and the console.
//!
//! Money is integer cents (or 1/10,000 cent, "e4", for exact pool amounts); nothing here goes
//! through a float. English writes `€1,234.56` and `-€1,234.56`; pt-PT writes `1 234,56 €` and
//! `-1 234,56 €`, its group separator and the space before the euro sign being U+00A0 (no-break
//! space) so that an amount never wraps. Times are shown in a time zone (Europe/Lisbon by
//! default), with the zone's abbreviation so that a reader knows which.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
pub use chrono_tz::Tz;

/// The no-break space pt-PT uses between digit groups and before `€`.
pub const NBSP: char = '\u{a0}';

/// The time zone shown when none is configured.
pub const DEFAULT_TZ: Tz = chrono_tz::Europe::Lisbon;

/// The languages of the CLI and the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Locale {
    #[default]
    En,
    PtPt,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    #[error("unknown language {0:?}: use \"en\" or \"pt-PT\"")]
    UnknownLocale(String),
    #[error("unknown time zone {0:?}: use an IANA name such as \"Europe/Lisbon\"")]
    UnknownTimeZone(String),
}

impl Locale {
    pub const ALL: [Locale; 2] = [Locale::PtPt, Locale::En];

    /// The BCP 47 tag: `en`, `pt-PT`.
    pub fn tag(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::PtPt => "pt-PT",
        }
    }

    fn group(self) -> char {
        match self {
            Locale::En => ',',
            Locale::PtPt => NBSP,
        }
    }

    fn decimal(self) -> char {
        match self {
            Locale::En => '.',
            Locale::PtPt => ',',
        }
    }

    /// The best of [`Locale::ALL`] for an HTTP `Accept-Language` header (quality values
    /// honoured; any `pt` counts as pt-PT), or `None` when it names neither.
    pub fn from_accept_language(header: &str) -> Option<Locale> {
        let mut best: Option<(u32, Locale)> = None;
        for part in header.split(',') {
            let mut it = part.split(';');
            let tag = it.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = it
                .find_map(|p| p.trim().strip_prefix("q="))
                .map(|q| (q.trim().parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0) * 1000.0) as u32)
                .unwrap_or(1000);
            let loc = if tag == "pt" || tag.starts_with("pt-") {
                Locale::PtPt
            } else if tag == "en" || tag.starts_with("en-") {
                Locale::En
            } else {
                continue;
            };
            if q > 0 && best.is_none_or(|(bq, _)| q > bq) {
                best = Some((q, loc));
            }
        }
        best.map(|(_, l)| l)
    }
}

impl fmt::Display for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

impl FromStr for Locale {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "en" | "en-gb" | "en-us" => Ok(Locale::En),
            "pt" | "pt-pt" => Ok(Locale::PtPt),
            _ => Err(Error::UnknownLocale(s.to_string())),
        }
    }
}

/// An IANA time zone name, e.g. `Europe/Lisbon`.
pub fn time_zone(name: &str) -> Result<Tz, Error> {
    name.parse::<Tz>()
        .map_err(|_| Error::UnknownTimeZone(name.to_string()))
}

/// Digits of `n` in groups of three with the locale's separator: `1,234,567` / `1 234 567`.
pub fn group_digits(n: u128, loc: Locale) -> String {
    let s = n.to_string();
    let mut g = String::with_capacity(s.len() + s.len() / 3 * 2);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            g.push(loc.group());
        }
        g.push(ch);
    }
    g
}

/// A whole number with digit groups, signed: `-1,234`.
pub fn integer(n: i64, loc: Locale) -> String {
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", group_digits(n.unsigned_abs().into(), loc))
}

/// `units` (an amount in 1/10^`scale` euro) with `scale` decimals and the euro sign.
fn euros_scaled(units: i128, scale: u32, plus: bool, loc: Locale) -> String {
    let sign = if units < 0 {
        "-"
    } else if plus && units > 0 {
        "+"
    } else {
        ""
    };
    let v = units.unsigned_abs();
    let div = 10u128.pow(scale);
    let whole = group_digits(v / div, loc);
    let frac = format!("{:0width$}", v % div, width = scale as usize);
    let dec = loc.decimal();
    match loc {
        Locale::En => format!("{sign}€{whole}{dec}{frac}"),
        Locale::PtPt => format!("{sign}{whole}{dec}{frac}{NBSP}€"),
    }
}

/// Cents as euros: `€1,234.56` / `1 234,56 €`; negative `-€5.00` / `-5,00 €`.
pub fn money(cents: i64, loc: Locale) -> String {
    money_i128(i128::from(cents), loc)
}

/// [`money`] for wide sums.
pub fn money_i128(cents: i128, loc: Locale) -> String {
    euros_scaled(cents, 2, false, loc)
}

/// [`money`] with an explicit `+` on gains, for results and differences: `+€350.00`.
pub fn money_signed(cents: i64, loc: Locale) -> String {
    euros_scaled(i128::from(cents), 2, true, loc)
}

/// An exact amount in 1/10,000 cent with six decimals: `€4,900.000045`.
pub fn money_e4(e4: i128, loc: Locale) -> String {
    euros_scaled(e4, 6, false, loc)
}

/// Cents as a plain decimal without sign or groups (`1234.56`, `-5.00`), for machine-readable
/// places that want euros (never the JSON outputs, which keep integer cents).
pub fn decimal_plain(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let c = cents.unsigned_abs();
    format!("{sign}{}.{:02}", c / 100, c % 100)
}

/// Basis points as a percentage with two decimals: 8850 → `88.50%` / `88,50 %`.
pub fn percent_bp(bp: i64, loc: Locale) -> String {
    percent_bp_i128(i128::from(bp), loc)
}

pub fn percent_bp_i128(bp: i128, loc: Locale) -> String {
    let sign = if bp < 0 { "-" } else { "" };
    let v = bp.unsigned_abs();
    let whole = group_digits(v / 100, loc);
    let frac = v % 100;
    match loc {
        Locale::En => format!("{sign}{whole}.{frac:02}%"),
        Locale::PtPt => format!("{sign}{whole},{frac:02}{NBSP}%"),
    }
}

fn at(ms: i64, tz: Tz) -> Option<DateTime<Tz>> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(|t| t.with_timezone(&tz))
}

/// A ledger time (UTC milliseconds) in `tz` to the second, with the zone's abbreviation:
/// `2026-11-28 14:15:53 WET` / `28/11/2026 14:15:53 WET`. Out of range: `<ms> ms`.
pub fn datetime(ms: i64, tz: Tz, loc: Locale) -> String {
    match at(ms, tz) {
        Some(t) => match loc {
            Locale::En => t.format("%Y-%m-%d %H:%M:%S %Z").to_string(),
            Locale::PtPt => t.format("%d/%m/%Y %H:%M:%S %Z").to_string(),
        },
        None => format!("{ms} ms"),
    }
}

/// The date only, in `tz`: `2026-11-28` / `28/11/2026`.
pub fn date(ms: i64, tz: Tz, loc: Locale) -> String {
    match at(ms, tz) {
        Some(t) => match loc {
            Locale::En => t.format("%Y-%m-%d").to_string(),
            Locale::PtPt => t.format("%d/%m/%Y").to_string(),
        },
        None => format!("{ms} ms"),
    }
}

/// A ledger time as RFC 3339 in UTC with milliseconds (`2026-11-28T14:15:53.120Z`): for logs,
/// CSV files and places that must sort and parse.
pub fn rfc3339_ms(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_else(|| format!("{ms} ms"))
}

/// [`rfc3339_ms`] to the second.
pub fn rfc3339_s(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| format!("{ms} ms"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Locale::{En, PtPt};
    use proptest::prelude::*;

    fn pt(s: &str) -> String {
        s.replace(' ', "\u{a0}")
    }

    #[test]
    fn money_in_both_languages() {
        assert_eq!(money(123_456, En), "€1,234.56");
        assert_eq!(money(123_456, PtPt), pt("1 234,56 €"));
        assert_eq!(money(-123_456, En), "-€1,234.56");
        assert_eq!(money(-123_456, PtPt), pt("-1 234,56 €"));
        assert_eq!(money(0, En), "€0.00");
        assert_eq!(money(5, PtPt), pt("0,05 €"));
        assert_eq!(money(100_000_000, En), "€1,000,000.00");
        assert_eq!(money(99_999, PtPt), pt("999,99 €"));
        assert_eq!(money(i64::MIN, En), "-€92,233,720,368,547,758.08");
        assert_eq!(money(i64::MAX, PtPt), pt("92 233 720 368 547 758,07 €"));
        assert_eq!(money_signed(35_000, En), "+€350.00");
        assert_eq!(money_signed(-500, En), "-€5.00");
        assert_eq!(money_signed(0, PtPt), pt("0,00 €"));
        assert_eq!(money_e4(4_900_000_045, En), "€4,900.000045");
        assert_eq!(money_e4(-45, PtPt), pt("-0,000045 €"));
        assert_eq!(decimal_plain(-123_456), "-1234.56");
    }

    #[test]
    fn percentages_and_integers() {
        assert_eq!(percent_bp(8850, En), "88.50%");
        assert_eq!(percent_bp(-125, PtPt), pt("-1,25 %"));
        assert_eq!(percent_bp(7, En), "0.07%");
        assert_eq!(integer(-1_564_300, En), "-1,564,300");
        assert_eq!(integer(1_564_300, PtPt), pt("1 564 300"));
        assert_eq!(integer(999, En), "999");
    }

    #[test]
    fn dates_in_lisbon_summer_and_winter() {
        // 2026-07-01T12:00:00Z is 13:00 WEST in Lisbon; 2026-11-28T23:30:00Z is 23:30 WET.
        let summer = 1_782_907_200_000;
        let winter = 1_795_908_600_000;
        assert_eq!(datetime(summer, DEFAULT_TZ, En), "2026-07-01 13:00:00 WEST");
        assert_eq!(
            datetime(summer, DEFAULT_TZ, PtPt),
            "01/07/2026 13:00:00 WEST"
        );
        assert_eq!(datetime(winter, DEFAULT_TZ, En), "2026-11-28 23:30:00 WET");
        // Lisbon's date differs from UTC's 30 minutes before midnight in summer, not in winter.
        assert_eq!(date(1_783_035_000_000, DEFAULT_TZ, En), "2026-07-03");
        assert_eq!(rfc3339_ms(1_783_035_000_000), "2026-07-02T23:30:00.000Z");
        let azores = time_zone("Atlantic/Azores").unwrap();
        assert_eq!(datetime(winter, azores, En), "2026-11-28 22:30:00 -01");
        assert_eq!(
            datetime(i64::MAX, DEFAULT_TZ, En),
            format!("{} ms", i64::MAX)
        );
        assert_eq!(
            time_zone("Europe/Lisboa"),
            Err(Error::UnknownTimeZone("Europe/Lisboa".into()))
        );
    }

    #[test]
    fn locales_from_tags_and_headers() {
        assert_eq!("pt-PT".parse::<Locale>(), Ok(PtPt));
        assert_eq!("EN".parse::<Locale>(), Ok(En));
        assert!("fr".parse::<Locale>().is_err());
        assert_eq!(
            Locale::from_accept_language("pt-PT,pt;q=0.9,en;q=0.8"),
            Some(PtPt)
        );
        assert_eq!(
            Locale::from_accept_language("en-GB,en;q=0.9,pt;q=0.5"),
            Some(En)
        );
        assert_eq!(Locale::from_accept_language("fr, pt-BR;q=0.3"), Some(PtPt));
        assert_eq!(Locale::from_accept_language("en;q=0, pt;q=0.1"), Some(PtPt));
        assert_eq!(Locale::from_accept_language("de-DE, *"), None);
        assert_eq!(Locale::from_accept_language(""), None);
        assert_eq!(Locale::from_accept_language(";;q=x,,"), None);
    }

    fn digits(s: &str) -> String {
        s.chars().filter(|c| c.is_ascii_digit()).collect()
    }

    proptest! {
        /// Whatever the amount and language: the digits shown are exactly those of the cents
        /// (with at least `0.0x` padding), the sign is shown if and only if the amount is negative,
        /// and there is exactly one decimal separator followed by two digits.
        #[test]
        fn money_keeps_digits_and_sign(cents in any::<i64>(), pt_pt in any::<bool>()) {
            let loc = if pt_pt { PtPt } else { En };
            let s = money(cents, loc);
            let abs = cents.unsigned_abs();
            prop_assert_eq!(digits(&s), format!("{}{:02}", abs / 100, abs % 100));
            prop_assert_eq!(s.starts_with('-'), cents < 0);
            prop_assert_eq!(s.matches('€').count(), 1);
            let dec = if pt_pt { ',' } else { '.' };
            let (_, frac) = s.rsplit_once(dec).unwrap();
            prop_assert_eq!(digits(frac).len(), 2);
            // Groups: never more than three digits between separators.
            let int_part = s.rsplit_once(dec).unwrap().0;
            let sep = if pt_pt { NBSP } else { ',' };
            for g in int_part.split(sep) {
                prop_assert!(digits(g).len() <= 3);
            }
            // Signed: the same digits, `+` only above zero.
            let signed = money_signed(cents, loc);
            prop_assert_eq!(digits(&signed), digits(&s));
            prop_assert_eq!(signed.starts_with('+'), cents > 0);
        }

        #[test]
        fn exact_amounts_keep_digits(e4 in any::<i64>()) {
            let s = money_e4(i128::from(e4), En);
            let abs = e4.unsigned_abs();
            prop_assert_eq!(digits(&s), format!("{}{:06}", abs / 1_000_000, abs % 1_000_000));
            prop_assert_eq!(s.starts_with('-'), e4 < 0);
        }

        #[test]
        fn dates_never_panic(ms in any::<i64>()) {
            for loc in Locale::ALL {
                let _ = datetime(ms, DEFAULT_TZ, loc);
                let _ = date(ms, DEFAULT_TZ, loc);
            }
        }
    }
}
