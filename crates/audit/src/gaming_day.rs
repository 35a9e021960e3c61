//! Gaming days: which day a round's figures belong to.
//!
//! A casino's gaming day starts at a fixed local time (e.g. 06:00) in its time zone and runs to
//! the same time on the next date; it is named by the date it starts on. A round counts on the
//! gaming day in which it was **settled** (or declared void), by the ledger's receive time of the
//! settlement entry: that clock is the one the chain commits to and it never goes back (except at
//! a declared `ClockStep`), so once the ledger's time has passed a day's end nothing more can land
//! in that day and its figures never change. (A device's own `occurred_at_ms` can reach the ledger
//! up to `ingest.max_past_age_ms` late, after an agent's outage, and would reopen closed days.)
//!
//! A day's start is an instant: the first instant whose local time is the start time on that date
//! (the earlier one when clocks go back and the time happens twice; the end of the gap when clocks
//! go forward over it). The days' starts only increase, so every instant belongs to exactly one
//! gaming day, also across the daylight-saving changes.

use std::collections::BTreeMap;

use chrono::{Datelike, Duration, LocalResult, NaiveDate, NaiveTime, TimeZone};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// Why a gaming-day rule was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DayRuleError {
    #[error("`{0}` is not an IANA time zone (e.g. Europe/Lisbon)")]
    TimeZone(String),
    #[error("`{0}` is not a time of day HH:MM (e.g. 06:00)")]
    Start(String),
}

/// A casino's gaming day: its time zone and the local time at which a day starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DayRule {
    pub tz: Tz,
    pub start: NaiveTime,
}

impl Default for DayRule {
    /// Europe/Lisbon, days starting at 06:00 (after the gaming rooms have closed).
    fn default() -> DayRule {
        DayRule {
            tz: chrono_tz::Europe::Lisbon,
            start: NaiveTime::from_hms_opt(6, 0, 0).unwrap_or(NaiveTime::MIN),
        }
    }
}

impl DayRule {
    /// From an IANA zone name and `HH:MM`.
    pub fn parse(time_zone: &str, start: &str) -> Result<DayRule, DayRuleError> {
        let tz = time_zone
            .parse::<Tz>()
            .map_err(|_| DayRuleError::TimeZone(time_zone.to_string()))?;
        let start = NaiveTime::parse_from_str(start, "%H:%M")
            .map_err(|_| DayRuleError::Start(start.to_string()))?;
        Ok(DayRule { tz, start })
    }

    /// `Europe/Lisbon from 06:00`.
    pub fn describe(&self) -> String {
        format!("{} from {}", self.tz.name(), self.start.format("%H:%M"))
    }

    /// The instant (UTC ms) at which gaming day `day` starts.
    pub fn start_ms(&self, day: NaiveDate) -> i64 {
        let wall = day.and_time(self.start);
        let first = |r: LocalResult<chrono::DateTime<Tz>>| match r {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => Some(t.timestamp_millis()),
            LocalResult::None => None,
        };
        if let Some(ms) = first(self.tz.from_local_datetime(&wall)) {
            return ms;
        }
        // The start time falls in a gap (clocks went forward over it): the day starts when the
        // gap ends, the first local minute after it that exists.
        (1..=24 * 60)
            .find_map(|m| {
                let t = wall.checked_add_signed(Duration::minutes(m))?;
                first(self.tz.from_local_datetime(&t))
            })
            .unwrap_or_else(|| wall.and_utc().timestamp_millis())
    }

    /// The gaming day the instant `ms` (UTC) belongs to.
    pub fn day_of(&self, ms: i64) -> NaiveDate {
        let Some(utc) = chrono::DateTime::from_timestamp_millis(ms) else {
            return if ms < 0 {
                NaiveDate::MIN
            } else {
                NaiveDate::MAX
            };
        };
        let local = utc.with_timezone(&self.tz).naive_local();
        // A first guess from the wall clock, then corrected against the days' real starts (the
        // guess is off by one only around a daylight-saving change that meets the start time).
        let mut day = local
            .checked_sub_signed(self.start - NaiveTime::MIN)
            .map_or(local.date(), |t| t.date());
        if ms < self.start_ms(day) {
            day = day.pred_opt().unwrap_or(day);
        } else if let Some(next) = day.succ_opt()
            && ms >= self.start_ms(next)
        {
            day = next;
        }
        day
    }
}

/// The gaming-day rule of each casino: a ledger-wide default and the casinos that differ.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calendar {
    pub default: DayRule,
    pub casinos: BTreeMap<String, DayRule>,
}

impl Calendar {
    /// The rule of `casino` (rounds of tables without a casino: the default).
    pub fn rule(&self, casino: Option<&str>) -> &DayRule {
        casino
            .and_then(|c| self.casinos.get(c))
            .unwrap_or(&self.default)
    }

    /// Every rule in use, the default first.
    pub fn rules(&self) -> impl Iterator<Item = &DayRule> {
        std::iter::once(&self.default).chain(self.casinos.values())
    }

    /// The instants spanned by gaming days `first..=last` in any casino: `[from_ms, to_ms)`.
    pub fn span(&self, first: NaiveDate, last: NaiveDate) -> (i64, i64) {
        let next = last.succ_opt();
        let from = self.rules().map(|r| r.start_ms(first)).min().unwrap_or(0);
        let to = self
            .rules()
            .map(|r| match next {
                Some(n) => r.start_ms(n),
                None => r.start_ms(last).saturating_add(2 * 86_400_000),
            })
            .max()
            .unwrap_or(0);
        (from, to)
    }

    /// `Europe/Lisbon from 06:00; lisboa: ...` (the casinos that differ after the default).
    pub fn describe(&self) -> String {
        let mut s = self.default.describe();
        for (c, r) in &self.casinos {
            if r != &self.default {
                s.push_str(&format!("; {c}: {}", r.describe()));
            }
        }
        s
    }
}

/// Serde form of a rule in configuration files: `time_zone = "Europe/Lisbon"`,
/// `day_starts = "06:00"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DayRuleConfig {
    #[serde(default = "default_zone")]
    pub time_zone: String,
    #[serde(default = "default_start")]
    pub day_starts: String,
}

fn default_zone() -> String {
    "Europe/Lisbon".to_string()
}

fn default_start() -> String {
    "06:00".to_string()
}

impl Default for DayRuleConfig {
    fn default() -> DayRuleConfig {
        DayRuleConfig {
            time_zone: default_zone(),
            day_starts: default_start(),
        }
    }
}

impl DayRuleConfig {
    pub fn rule(&self) -> Result<DayRule, DayRuleError> {
        DayRule::parse(&self.time_zone, &self.day_starts)
    }
}

/// The first day of `day`'s month and of its year.
pub fn month_and_year_start(day: NaiveDate) -> (NaiveDate, NaiveDate) {
    (
        NaiveDate::from_ymd_opt(day.year(), day.month(), 1).unwrap_or(day),
        NaiveDate::from_ymd_opt(day.year(), 1, 1).unwrap_or(day),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn ms(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
            .unwrap()
            .timestamp_millis()
    }

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn lisbon(start: &str) -> DayRule {
        DayRule::parse("Europe/Lisbon", start).unwrap()
    }

    #[test]
    fn the_day_turns_at_the_start_hour() {
        let r = lisbon("06:00");
        // Winter: Lisbon is UTC+0.
        assert_eq!(
            r.day_of(ms(2026, 11, 28, 5, 59) + 59_999),
            date(2026, 11, 27)
        );
        assert_eq!(r.day_of(ms(2026, 11, 28, 6, 0)), date(2026, 11, 28));
        // Summer: UTC+1, so 06:00 local is 05:00 UTC.
        assert_eq!(r.day_of(ms(2026, 7, 10, 4, 59)), date(2026, 7, 9));
        assert_eq!(r.day_of(ms(2026, 7, 10, 5, 0)), date(2026, 7, 10));
        // Past midnight but before the start: still the evening's day (the case of a
        // round played on the 27th, late, that a UTC day put on the 28th).
        assert_eq!(r.day_of(ms(2026, 11, 28, 1, 30)), date(2026, 11, 27));
        assert_eq!(r.start_ms(date(2026, 11, 28)), ms(2026, 11, 28, 6, 0));
    }

    #[test]
    fn a_round_counts_on_the_day_it_is_settled() {
        // Opened at 05:58 on the 28th (gaming day of the 27th), settled at 06:01.
        let r = lisbon("06:00");
        let opened = ms(2026, 11, 28, 5, 58);
        let settled = ms(2026, 11, 28, 6, 1);
        assert_eq!(r.day_of(opened), date(2026, 11, 27));
        assert_eq!(r.day_of(settled), date(2026, 11, 28));
    }

    #[test]
    fn daylight_saving_days_are_23_and_25_hours_long() {
        let r = lisbon("06:00");
        // 2026-03-29: clocks go forward at 01:00 UTC; 2026-10-25: back at 01:00 UTC.
        let spring = r.start_ms(date(2026, 3, 29)) - r.start_ms(date(2026, 3, 28));
        let autumn = r.start_ms(date(2026, 10, 25)) - r.start_ms(date(2026, 10, 24));
        assert_eq!(spring, 23 * 3_600_000);
        assert_eq!(autumn, 25 * 3_600_000);
        assert_eq!(r.day_of(ms(2026, 3, 29, 4, 59)), date(2026, 3, 28));
        assert_eq!(r.day_of(ms(2026, 3, 29, 5, 0)), date(2026, 3, 29));
        assert_eq!(r.day_of(ms(2026, 10, 25, 5, 59)), date(2026, 10, 24));
        assert_eq!(r.day_of(ms(2026, 10, 25, 6, 0)), date(2026, 10, 25));
    }

    #[test]
    fn a_start_in_the_hour_that_happens_twice_or_never() {
        // Clocks go back at 02:00 local (01:00 UTC) on 2026-10-25: 01:30 happens twice; the day
        // starts at the first one (00:30 UTC). The second 01:30 is still that day: no day goes
        // back.
        let r = lisbon("01:30");
        assert_eq!(r.start_ms(date(2026, 10, 25)), ms(2026, 10, 25, 0, 30));
        assert_eq!(r.day_of(ms(2026, 10, 25, 0, 29)), date(2026, 10, 24));
        assert_eq!(r.day_of(ms(2026, 10, 25, 0, 30)), date(2026, 10, 25));
        assert_eq!(r.day_of(ms(2026, 10, 25, 1, 15)), date(2026, 10, 25));
        assert_eq!(r.day_of(ms(2026, 10, 25, 1, 45)), date(2026, 10, 25));
        // Clocks go forward at 01:00 local (01:00 UTC) on 2026-03-29: 01:30 never happens; the
        // day starts when the gap ends, at 02:00 local = 01:00 UTC.
        assert_eq!(r.start_ms(date(2026, 3, 29)), ms(2026, 3, 29, 1, 0));
        assert_eq!(r.day_of(ms(2026, 3, 29, 0, 59)), date(2026, 3, 28));
        assert_eq!(r.day_of(ms(2026, 3, 29, 1, 0)), date(2026, 3, 29));
    }

    /// A gap longer than an hour: Antarctica/Troll goes from UTC+0 to UTC+2 at 01:00 UTC on the
    /// last Sunday of March, so 01:00-03:00 local never happens; a day starting at 01:30 starts
    /// when the gap ends, 03:00 local = 01:00 UTC.
    #[test]
    fn a_start_in_a_two_hour_gap() {
        let r = DayRule::parse("Antarctica/Troll", "01:30").unwrap();
        assert_eq!(r.start_ms(date(2026, 3, 29)), ms(2026, 3, 29, 1, 0));
        assert_eq!(r.start_ms(date(2026, 3, 28)), ms(2026, 3, 28, 1, 30));
        assert_eq!(r.day_of(ms(2026, 3, 29, 0, 59)), date(2026, 3, 28));
        assert_eq!(r.day_of(ms(2026, 3, 29, 1, 0)), date(2026, 3, 29));
    }

    /// A span ending on the last day chrono can name ends two days after that day's start.
    #[test]
    fn a_span_to_the_last_date_ends_two_days_on() {
        let c = Calendar::default();
        let (from, to) = c.span(NaiveDate::MAX, NaiveDate::MAX);
        assert_eq!(to - from, 2 * 86_400_000);
    }

    #[test]
    fn a_rule_from_configuration_defaults_to_lisbon_at_six() {
        let c: DayRuleConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, DayRuleConfig::default());
        assert_eq!(
            (c.time_zone.as_str(), c.day_starts.as_str()),
            ("Europe/Lisbon", "06:00")
        );
        assert_eq!(c.rule(), Ok(DayRule::default()));
        let bad = DayRuleConfig {
            time_zone: "Mars/Olympus".into(),
            ..Default::default()
        };
        assert_eq!(
            bad.rule(),
            Err(DayRuleError::TimeZone("Mars/Olympus".into()))
        );
    }

    #[test]
    fn a_days_month_and_year_start() {
        assert_eq!(
            month_and_year_start(date(2026, 11, 28)),
            (date(2026, 11, 1), date(2026, 1, 1))
        );
        assert_eq!(
            month_and_year_start(date(2024, 2, 29)),
            (date(2024, 2, 1), date(2024, 1, 1))
        );
    }

    #[test]
    fn rules_describe_themselves() {
        assert_eq!(DayRule::default().describe(), "Europe/Lisbon from 06:00");
        let mut c = Calendar::default();
        c.casinos.insert("lisboa".into(), DayRule::default());
        c.casinos.insert(
            "madeira".into(),
            DayRule::parse("Atlantic/Madeira", "07:15").unwrap(),
        );
        assert_eq!(
            c.describe(),
            "Europe/Lisbon from 06:00; madeira: Atlantic/Madeira from 07:15"
        );
    }

    #[test]
    fn days_never_go_back_over_a_year_of_minutes() {
        for start in ["00:00", "01:30", "06:00"] {
            let r = lisbon(start);
            let mut last = r.day_of(ms(2026, 1, 1, 0, 0));
            let mut t = ms(2026, 1, 1, 0, 0);
            while t < ms(2027, 1, 1, 0, 0) {
                let d = r.day_of(t);
                assert!(
                    d == last || Some(d) == last.succ_opt(),
                    "{start} at {t}: {last} -> {d}"
                );
                assert!(r.start_ms(d) <= t && t < r.start_ms(d.succ_opt().unwrap()));
                last = d;
                t += 7 * 60_000;
            }
        }
    }

    #[test]
    fn bad_rules_are_named() {
        assert_eq!(
            DayRule::parse("Europe/Lisboa", "06:00"),
            Err(DayRuleError::TimeZone("Europe/Lisboa".into()))
        );
        assert_eq!(
            DayRule::parse("Europe/Lisbon", "6h"),
            Err(DayRuleError::Start("6h".into()))
        );
        // Instants beyond chrono's range get the ends, not a panic.
        let r = DayRule::default();
        assert_eq!(r.day_of(i64::MIN), NaiveDate::MIN);
        assert_eq!(r.day_of(i64::MAX), NaiveDate::MAX);
        let _ = r.start_ms(NaiveDate::MAX);
        let _ = r.start_ms(NaiveDate::MIN);
    }

    #[test]
    fn a_calendar_spans_every_casino_zone() {
        let mut c = Calendar::default();
        c.casinos.insert(
            "madeira".into(),
            DayRule::parse("Atlantic/Madeira", "06:00").unwrap(),
        );
        c.casinos.insert(
            "acores".into(),
            DayRule::parse("Atlantic/Azores", "06:00").unwrap(),
        );
        let (from, to) = c.span(date(2026, 11, 28), date(2026, 11, 28));
        assert_eq!(from, ms(2026, 11, 28, 6, 0));
        // The Azores are UTC-1 in winter.
        assert_eq!(to, ms(2026, 11, 29, 7, 0));
        assert_eq!(
            c.rule(Some("acores")).day_of(ms(2026, 11, 29, 6, 30)),
            date(2026, 11, 28)
        );
        assert_eq!(
            c.rule(Some("lisboa")).day_of(ms(2026, 11, 29, 6, 30)),
            date(2026, 11, 29)
        );
        assert_eq!(c.rule(None), &c.default);
    }
}
