//! Round summaries and the period report (rounds, handle, due vs reported payouts, hold,
//! discrepancies) per casino, table and game.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rules_core::{Cents, GameId};
use serde::{Deserialize, Serialize};

/// One adjudicated round, as the reports need it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundSummary {
    pub table_id: String,
    pub casino_id: Option<String>,
    pub game: GameId,
    pub round_id: String,
    /// Ledger index of the table configuration the round was played under.
    pub config_index: u64,
    pub opened_index: u64,
    /// Ledger index of the settlement (or void declaration).
    pub closed_index: u64,
    pub opened_ms: i64,
    pub closed_ms: i64,
    pub void: bool,
    /// Bets adjudicated in the round (carried craps bets included when decided).
    pub bets: u32,
    /// Handle: the stakes of the bets decided in the round (won, lost, pushed or forfeited), after
    /// doubles and splits; void, withdrawn and still-open bets are not wagered yet.
    pub handle_cents: Cents,
    /// Σ due nets of the players (positive: the players won).
    pub due_player_net_cents: Cents,
    /// Σ reported nets of the players.
    pub reported_player_net_cents: Cents,
    /// House take due (poker commission, cagnotte) and reported.
    pub house_due_cents: Cents,
    pub house_reported_cents: Cents,
    pub discrepancies: u32,
    /// Σ |due − reported| over the discrepancies.
    pub discrepancy_abs_cents: Cents,
    /// Violations and discrepancies of the round.
    pub findings: u32,
    /// Ledger indexes of the round's events (opening and settlement excluded).
    pub event_indexes: Vec<u64>,
    /// The table jackpot's value before the round (what jackpot prizes were priced on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jackpot_before_cents: Option<Cents>,
    /// The table jackpot pool the round fed, if the table has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jackpot_pool_id: Option<String>,
    /// The engine's table state before the round, as JSON (kept when
    /// [`crate::AuditSettings::keep_round_states`] is set), so the round can be adjudicated again
    /// exactly, with its explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_before: Option<String>,
}

impl RoundSummary {
    /// The casino's due win on the round: what the players lost plus the house take.
    pub fn due_win_cents(&self) -> Cents {
        self.house_due_cents
            .saturating_sub(self.due_player_net_cents)
    }

    /// The casino's reported win.
    pub fn reported_win_cents(&self) -> Cents {
        self.house_reported_cents
            .saturating_sub(self.reported_player_net_cents)
    }
}

/// A reporting period `[from_ms, to_ms)`, ledger time, UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    pub from_ms: i64,
    pub to_ms: i64,
}

impl Period {
    pub fn contains(&self, ms: i64) -> bool {
        self.from_ms <= ms && ms < self.to_ms
    }

    /// Human form, e.g. `2026-11-21T00:00:00Z..2026-11-22T00:00:00Z`.
    pub fn describe(&self) -> String {
        let f = |ms: i64| {
            DateTime::<Utc>::from_timestamp_millis(ms)
                .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                .unwrap_or_else(|| ms.to_string())
        };
        format!("{}..{}", f(self.from_ms), f(self.to_ms))
    }
}

/// One line of the summary report: a casino, table and game over a period.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportRow {
    pub casino_id: String,
    pub table_id: String,
    pub game: String,
    pub rounds: u64,
    pub void_rounds: u64,
    pub handle_cents: Cents,
    /// Σ due player nets (what the rules say the players won, negative when they lost).
    pub due_player_net_cents: Cents,
    pub reported_player_net_cents: Cents,
    pub due_win_cents: Cents,
    pub reported_win_cents: Cents,
    /// Reported hold: reported casino win ÷ handle, in basis points (see [`hold_bp`]).
    pub hold_bp: i64,
    /// Due hold in basis points.
    pub due_hold_bp: i64,
    pub discrepancies: u64,
    pub discrepancy_abs_cents: Cents,
}

impl ReportRow {
    /// The row of one round: its casino (`-` without one), table and game, and its counts.
    pub fn of_round(r: &RoundSummary) -> ReportRow {
        ReportRow {
            casino_id: r.casino_id.as_deref().unwrap_or("-").to_string(),
            table_id: r.table_id.clone(),
            game: r.game.as_str().to_string(),
            rounds: 1,
            void_rounds: r.void as u64,
            handle_cents: r.handle_cents,
            due_player_net_cents: r.due_player_net_cents,
            reported_player_net_cents: r.reported_player_net_cents,
            due_win_cents: r.due_win_cents(),
            reported_win_cents: r.reported_win_cents(),
            hold_bp: 0,
            due_hold_bp: 0,
            discrepancies: r.discrepancies as u64,
            discrepancy_abs_cents: r.discrepancy_abs_cents,
        }
    }

    /// Add (`sign` 1, or any other non-negative) or take away (`sign` -1, or any other
    /// negative) another row's counts (not its names or holds): saturating, as a period's sums
    /// are.
    pub fn add_counts(&mut self, o: &ReportRow, sign: i8) {
        let add = |a: Cents, b: Cents| {
            if sign < 0 {
                a.saturating_sub(b)
            } else {
                a.saturating_add(b)
            }
        };
        let count = |a: u64, b: u64| {
            if sign < 0 {
                a.saturating_sub(b)
            } else {
                a.saturating_add(b)
            }
        };
        self.rounds = count(self.rounds, o.rounds);
        self.void_rounds = count(self.void_rounds, o.void_rounds);
        self.handle_cents = add(self.handle_cents, o.handle_cents);
        self.due_player_net_cents = add(self.due_player_net_cents, o.due_player_net_cents);
        self.reported_player_net_cents =
            add(self.reported_player_net_cents, o.reported_player_net_cents);
        self.due_win_cents = add(self.due_win_cents, o.due_win_cents);
        self.reported_win_cents = add(self.reported_win_cents, o.reported_win_cents);
        self.discrepancies = count(self.discrepancies, o.discrepancies);
        self.discrepancy_abs_cents = add(self.discrepancy_abs_cents, o.discrepancy_abs_cents);
    }
}

/// Hold in basis points: `win × 10,000 ÷ handle`, rounded toward zero; 0 when nothing was
/// wagered; at the ends of `i64` when the ratio is beyond them (a win a million billion times
/// the handle). (A report figure, not a regulated amount; integer arithmetic throughout.)
pub fn hold_bp(win_cents: Cents, handle_cents: Cents) -> i64 {
    if handle_cents == 0 {
        return 0;
    }
    let bp = (i128::from(win_cents) * 10_000) / i128::from(handle_cents);
    i64::try_from(bp).unwrap_or(if bp < 0 { i64::MIN } else { i64::MAX })
}

/// The report of a period built one round at a time: memory grows with the casinos and tables
/// of the period, not with its rounds (a year of rounds is read from the store block by block).
#[derive(Clone, Debug)]
pub struct ReportBuilder {
    period: Period,
    rows: BTreeMap<(String, String, String), ReportRow>,
}

impl ReportBuilder {
    pub fn new(period: Period) -> ReportBuilder {
        ReportBuilder {
            period,
            rows: BTreeMap::new(),
        }
    }

    /// Count one round (ignored unless it closed within the period).
    pub fn add(&mut self, r: &RoundSummary) {
        if self.period.contains(r.closed_ms) {
            self.count(r);
        }
    }

    /// Count one round the caller has placed in the period (by its gaming day,
    /// [`crate::gaming_day`]).
    pub fn count(&mut self, r: &RoundSummary) {
        self.count_row(&ReportRow::of_round(r));
    }

    /// Count a row of one casino, table and game (rounds already summed, e.g. a gaming day's
    /// aggregate) into its row, its casino's total and the grand total.
    pub fn count_row(&mut self, r: &ReportRow) {
        let keys = [
            (r.casino_id.as_str(), r.table_id.as_str(), r.game.as_str()),
            (r.casino_id.as_str(), "*", "*"),
            ("*", "*", "*"),
        ];
        for (c, t, g) in keys {
            let key = (c.to_string(), t.to_string(), g.to_string());
            let row = self.rows.entry(key).or_insert_with(|| ReportRow {
                casino_id: c.to_string(),
                table_id: t.to_string(),
                game: g.to_string(),
                ..ReportRow::default()
            });
            row.add_counts(r, 1);
        }
    }

    /// The rows per casino, table and game (sorted), a total row per casino (`table_id` = `*`)
    /// after its tables, and the grand total (`casino_id` = `*`) last.
    pub fn finish(self) -> Vec<ReportRow> {
        let mut out: Vec<ReportRow> = self.rows.into_values().collect();
        for row in &mut out {
            row.hold_bp = hold_bp(row.reported_win_cents, row.handle_cents);
            row.due_hold_bp = hold_bp(row.due_win_cents, row.handle_cents);
        }
        out.sort_by(|a, b| {
            let rank = |r: &ReportRow| {
                (
                    r.casino_id == "*",
                    r.casino_id.clone(),
                    r.table_id == "*",
                    r.table_id.clone(),
                    r.game.clone(),
                )
            };
            rank(a).cmp(&rank(b))
        });
        out
    }
}

/// Aggregate round summaries closed within `period` into rows per casino, table and game
/// (sorted), plus a total row per casino (`table_id` = `*`) and a grand total (`casino_id` = `*`).
pub fn aggregate<'a>(
    rounds: impl IntoIterator<Item = &'a RoundSummary>,
    period: Period,
) -> Vec<ReportRow> {
    let mut b = ReportBuilder::new(period);
    for r in rounds {
        b.add(r);
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(
        table: &str,
        casino: &str,
        closed_ms: i64,
        handle: Cents,
        due: Cents,
        reported: Cents,
    ) -> RoundSummary {
        RoundSummary {
            table_id: table.into(),
            casino_id: Some(casino.into()),
            game: GameId::RouletteFrench,
            round_id: format!("r{closed_ms}"),
            config_index: 0,
            opened_index: 1,
            closed_index: 2,
            opened_ms: closed_ms - 10,
            closed_ms,
            void: false,
            bets: 1,
            handle_cents: handle,
            due_player_net_cents: due,
            reported_player_net_cents: reported,
            house_due_cents: 0,
            house_reported_cents: 0,
            discrepancies: u32::from(due != reported),
            discrepancy_abs_cents: (due - reported).abs(),
            findings: 0,
            event_indexes: vec![],
            jackpot_before_cents: None,
            jackpot_pool_id: None,
            state_before: None,
        }
    }

    #[test]
    fn hold_is_integer_basis_points() {
        assert_eq!(hold_bp(270, 10_000), 270);
        assert_eq!(hold_bp(-1, 3), -3333);
        assert_eq!(hold_bp(5, 0), 0);
        // Beyond i64: the ends, not a wrapped value.
        assert_eq!(hold_bp(i64::MAX, 1), i64::MAX);
        assert_eq!(hold_bp(i64::MIN, 1), i64::MIN);
        assert_eq!(hold_bp(i64::MAX, -1), i64::MIN);
        assert_eq!(hold_bp(i64::MIN, -1), i64::MAX);
        assert_eq!(hold_bp(i64::MAX, i64::MAX), 10_000);
    }

    #[test]
    fn aggregates_per_table_casino_and_total() {
        let rs = [
            summary("t1", "c1", 100, 1000, -1000, -1000),
            summary("t1", "c1", 200, 500, 17500, 18000),
            summary("t2", "c2", 300, 200, -200, -200),
            summary("t2", "c2", 900, 999, 0, 0),
        ];
        let rows = aggregate(
            &rs,
            Period {
                from_ms: 0,
                to_ms: 500,
            },
        );
        let t1 = rows.iter().find(|r| r.table_id == "t1").unwrap();
        assert_eq!(t1.rounds, 2);
        assert_eq!(t1.handle_cents, 1500);
        assert_eq!(t1.due_win_cents, 1000 - 17500);
        assert_eq!(t1.reported_win_cents, 1000 - 18000);
        assert_eq!(t1.discrepancies, 1);
        assert_eq!(t1.discrepancy_abs_cents, 500);
        let total = rows.last().unwrap();
        assert_eq!(total.casino_id, "*");
        assert_eq!(total.rounds, 3);
        assert_eq!(total.handle_cents, 1700);
        // Each casino's tables, then its total; the grand total last.
        let order: Vec<_> = rows
            .iter()
            .map(|r| (r.casino_id.as_str(), r.table_id.as_str(), r.game.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("c1", "t1", "roulette_french"),
                ("c1", "*", "*"),
                ("c2", "t2", "roulette_french"),
                ("c2", "*", "*"),
                ("*", "*", "*"),
            ]
        );
        assert_eq!(t1.hold_bp, hold_bp(1000 - 18000, 1500));
        assert_eq!(t1.due_hold_bp, hold_bp(1000 - 17500, 1500));
    }

    #[test]
    fn a_period_holds_its_start_and_not_its_end() {
        let p = Period {
            from_ms: 1_795_824_000_000,
            to_ms: 1_795_910_400_000,
        };
        assert!(!p.contains(p.from_ms - 1));
        assert!(p.contains(p.from_ms));
        assert!(p.contains(p.to_ms - 1));
        assert!(!p.contains(p.to_ms));
        assert_eq!(p.describe(), "2026-11-28T00:00:00Z..2026-11-29T00:00:00Z");
        let rs = [summary("t1", "c1", p.to_ms, 100, 0, 0)];
        assert!(
            aggregate(&rs, p).is_empty(),
            "closed at the end: the next period's"
        );
    }

    #[test]
    fn counts_are_added_and_taken_away_saturating() {
        let a = ReportRow::of_round(&summary("t1", "c1", 5, 1000, -300, -200));
        let mut r = ReportRow::default();
        r.add_counts(&a, 1);
        r.add_counts(&a, 0);
        assert_eq!((r.rounds, r.handle_cents, r.discrepancies), (2, 2000, 2));
        r.add_counts(&a, -1);
        assert_eq!(
            (
                r.rounds,
                r.void_rounds,
                r.handle_cents,
                r.due_player_net_cents,
                r.reported_player_net_cents,
                r.due_win_cents,
                r.reported_win_cents,
                r.discrepancies,
                r.discrepancy_abs_cents
            ),
            (1, 0, 1000, -300, -200, 300, 200, 1, 100)
        );
        r.add_counts(&a, -1);
        r.add_counts(&a, -1);
        assert_eq!((r.rounds, r.discrepancies), (0, 0), "counts stop at 0");
        assert_eq!(r.handle_cents, -1000, "sums may go negative");
        let mut big = ReportRow {
            handle_cents: i64::MAX,
            ..ReportRow::default()
        };
        big.add_counts(&a, 1);
        assert_eq!(big.handle_cents, i64::MAX);
    }
}
