//! A pool's activity for people (`Jackpots.GetPoolActivity`, the console's pool page): its
//! captive value over time, its awards, its transfers with the book's verdict on each, and its
//! declarations against what the book held at each. Built in one pass over the pool's history
//! lines ([`ActivityBuilder::push`], oldest first), in memory bounded by the number of points and
//! items asked for, however long the history; nothing here changes the book.
//!
//! * **The value over time.** The captive value after each line: `Created` sets it, a
//!   contribution or a transfer in adds, a declaration (its `due_e4` is the book's value then)
//!   confirms it, an award leaves the reset value (or, for a table's smaller prizes, the value
//!   less the prizes), a transfer out leaves 0. Lines before the first that fixes it (pruned
//!   from a book's front) give no point. The period from the first line to the last is cut into
//!   `buckets` equal spans of time; each keeps its highest point and its last (so the peak before
//!   an award stays visible): at most two points a bucket.
//! * **Awards, declarations**: the newest `max_items` of each, and how many there were.
//! * **Transfers** out of and into the pool, each with what the book made of it: valid (booked,
//!   no finding), or the findings it raised (code, citation, what the check is), or a repeat that
//!   moved nothing ([`crate::TransferRecord`]).

use std::collections::VecDeque;

use rules_core::{Cents, Id};
use serde::{Deserialize, Serialize};

use crate::amount::E4;
use crate::finding::check_by_code;
use crate::state::{EntryKind, PoolEntry, Route, TransferRecord};

/// The captive value after a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValuePoint {
    pub index: u64,
    pub at_ms: i64,
    pub captive_e4: E4,
}

/// An award: the whole value due released (`due_e4`), what the award said was paid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AwardLine {
    pub index: u64,
    pub at_ms: i64,
    /// The machine (or table) it was won on.
    pub member: Id,
    pub due_e4: E4,
    pub paid_cents: Cents,
    /// Paid within a cent of the value due.
    pub ok: bool,
}

/// A declared captive value against the book's value at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclarationLine {
    pub index: u64,
    pub at_ms: i64,
    pub declared_cents: Cents,
    /// What the book held when it was declared (exact).
    pub held_e4: E4,
    /// Within a cent of it.
    pub ok: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Out,
    In,
}

/// Why a transfer is not valid: one finding it raised.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferReason {
    pub code: String,
    /// The rule it breaches (empty for a code the crate does not know).
    pub citation: String,
    /// What the check is.
    pub check: String,
}

/// A transfer out of or into the pool and the book's verdict on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferLine {
    pub index: u64,
    pub at_ms: i64,
    pub transfer_id: Id,
    pub direction: Direction,
    /// The pool at the other end.
    pub other_pool: Id,
    /// What moved in the book (the source's whole value; 0 for a repeat that moved nothing).
    pub moved_e4: E4,
    /// What the casino said it moved (unknown for a line the book no longer has a record of).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_cents: Option<Cents>,
    /// Booked as carried out (r.5): every transfer but the repeat of one already booked.
    pub booked: bool,
    /// Booked and no finding (r.6).
    pub valid: bool,
    /// How a valid target qualified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    pub reasons: Vec<TransferReason>,
}

/// A pool's activity (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolActivity {
    pub pool_id: Id,
    /// History lines read (positions `from ..< to`).
    pub from: u64,
    pub to: u64,
    /// The captive value over time, oldest first.
    pub series: Vec<ValuePoint>,
    /// The newest awards, oldest first, and how many there were in all.
    pub awards: Vec<AwardLine>,
    pub awards_total: u64,
    /// The newest declarations, oldest first, and how many there were in all.
    pub declarations: Vec<DeclarationLine>,
    pub declarations_total: u64,
    /// Every transfer, oldest first.
    pub transfers: Vec<TransferLine>,
}

/// One pass over a pool's history lines (see the module's documentation).
pub struct ActivityBuilder {
    act: PoolActivity,
    t0: i64,
    width: i64,
    buckets: i64,
    max_items: usize,
    value: Option<E4>,
    /// The bucket being filled: its number, its highest point and its last.
    bucket: Option<(i64, ValuePoint, ValuePoint)>,
    awards: VecDeque<AwardLine>,
    declarations: VecDeque<DeclarationLine>,
    /// The book's records of the pool's transfers, by which its lines are judged.
    records: Vec<TransferRecord>,
}

impl ActivityBuilder {
    /// For the lines `from ..< to` of pool `pool_id`, the first at `first_ms` and the last at
    /// `last_ms`; `records`: the book's transfer records (those of other pools are ignored).
    pub fn new(
        pool_id: &str,
        (from, to): (u64, u64),
        (first_ms, last_ms): (i64, i64),
        buckets: usize,
        max_items: usize,
        records: &[TransferRecord],
    ) -> ActivityBuilder {
        let buckets = i64::try_from(buckets.max(1)).unwrap_or(i64::MAX);
        let span = last_ms.saturating_sub(first_ms).max(0).saturating_add(1);
        let width = span
            .checked_div(buckets)
            .unwrap_or(1)
            .saturating_add(i64::from(span.checked_rem(buckets).unwrap_or(0) != 0))
            .max(1);
        ActivityBuilder {
            act: PoolActivity {
                pool_id: pool_id.into(),
                from,
                to,
                series: Vec::new(),
                awards: Vec::new(),
                awards_total: 0,
                declarations: Vec::new(),
                declarations_total: 0,
                transfers: Vec::new(),
            },
            t0: first_ms,
            width,
            buckets,
            max_items,
            value: None,
            bucket: None,
            awards: VecDeque::new(),
            declarations: VecDeque::new(),
            records: records
                .iter()
                .filter(|r| {
                    *r.transfer.from_pool_id == *pool_id || *r.transfer.to_pool_id == *pool_id
                })
                .cloned()
                .collect(),
        }
    }

    /// The next line (oldest first). `visible(member)`: whether the reader may see an award
    /// won on `member` (a principal limited to casinos sees its own casinos' machines only).
    pub fn push(&mut self, line: &PoolEntry, visible: impl Fn(&str) -> bool) {
        let (index, at_ms) = (line.index, line.at_ms);
        let plus = |v: Option<E4>, d: E4| v.map(|v| v.saturating_add(d));
        self.value = match &line.kind {
            EntryKind::Created { start_e4 } => Some(*start_e4),
            EntryKind::Reconfigured { .. } | EntryKind::TransferRejected { .. } => self.value,
            EntryKind::Contribution { amount_e4, .. } => plus(self.value, *amount_e4),
            EntryKind::Reconciliation {
                reported_cents,
                due_e4,
                ok,
            } => {
                self.act.declarations_total = self.act.declarations_total.saturating_add(1);
                keep_newest(
                    &mut self.declarations,
                    self.max_items,
                    DeclarationLine {
                        index,
                        at_ms,
                        declared_cents: *reported_cents,
                        held_e4: *due_e4,
                        ok: *ok,
                    },
                );
                Some(*due_e4)
            }
            EntryKind::Award {
                member,
                due_e4,
                paid_cents,
                ok,
                reset_e4,
                ..
            } => {
                if visible(member) {
                    self.act.awards_total = self.act.awards_total.saturating_add(1);
                    keep_newest(
                        &mut self.awards,
                        self.max_items,
                        AwardLine {
                            index,
                            at_ms,
                            member: member.clone(),
                            due_e4: *due_e4,
                            paid_cents: *paid_cents,
                            ok: *ok,
                        },
                    );
                }
                match reset_e4 {
                    Some(r) => Some(*r),
                    None => self.value.map(|v| v.saturating_sub(*due_e4)),
                }
            }
            EntryKind::TransferOut {
                transfer_id,
                to_pool,
                amount_e4,
                reported_cents,
                route,
                codes,
            } => {
                let line = TransferLine {
                    index,
                    at_ms,
                    transfer_id: transfer_id.clone(),
                    direction: Direction::Out,
                    other_pool: to_pool.clone(),
                    moved_e4: *amount_e4,
                    declared_cents: Some(*reported_cents),
                    booked: true,
                    valid: codes.is_empty(),
                    route: route.clone(),
                    reasons: codes.iter().map(|c| reason(c)).collect(),
                };
                self.act.transfers.push(line);
                Some(0)
            }
            EntryKind::TransferIn {
                transfer_id,
                from_pool,
                amount_e4,
            } => {
                // The verdict is on the source's line; the book's record of the transfer has it.
                let rec = self.records.iter().find(|r| {
                    r.booked && r.index == index && r.transfer.transfer_id == *transfer_id
                });
                self.act.transfers.push(TransferLine {
                    index,
                    at_ms,
                    transfer_id: transfer_id.clone(),
                    direction: Direction::In,
                    other_pool: from_pool.clone(),
                    moved_e4: *amount_e4,
                    declared_cents: rec.map(|r| r.transfer.amount_cents),
                    booked: true,
                    valid: rec.is_some_and(|r| r.codes.is_empty()),
                    route: rec.and_then(|r| r.route.clone()),
                    reasons: rec
                        .map(|r| r.codes.iter().map(|c| reason(c)).collect())
                        .unwrap_or_else(|| {
                            vec![TransferReason {
                                code: String::new(),
                                citation: String::new(),
                                check: "the book no longer holds this transfer's record".into(),
                            }]
                        }),
                });
                plus(self.value, *amount_e4)
            }
        };
        if let EntryKind::TransferRejected {
            transfer_id,
            to_pool,
            reported_cents,
            codes,
        } = &line.kind
        {
            self.act.transfers.push(TransferLine {
                index,
                at_ms,
                transfer_id: transfer_id.clone(),
                direction: Direction::Out,
                other_pool: to_pool.clone(),
                moved_e4: 0,
                declared_cents: Some(*reported_cents),
                booked: false,
                valid: false,
                route: None,
                reasons: codes.iter().map(|c| reason(c)).collect(),
            });
        }
        if let Some(v) = self.value {
            self.point(ValuePoint {
                index,
                at_ms,
                captive_e4: v,
            });
        }
    }

    fn point(&mut self, p: ValuePoint) {
        let b = p
            .at_ms
            .saturating_sub(self.t0)
            .checked_div(self.width)
            .unwrap_or(0)
            .clamp(0, self.buckets.saturating_sub(1));
        match &mut self.bucket {
            Some((n, high, last)) if *n == b => {
                if p.captive_e4 > high.captive_e4 {
                    *high = p;
                }
                *last = p;
            }
            _ => {
                self.flush();
                self.bucket = Some((b, p, p));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((_, high, last)) = self.bucket.take() {
            if high.captive_e4 != last.captive_e4 {
                self.act.series.push(high);
            }
            self.act.series.push(last);
        }
    }

    pub fn finish(mut self) -> PoolActivity {
        self.flush();
        self.act.awards = self.awards.into_iter().collect();
        self.act.declarations = self.declarations.into_iter().collect();
        self.act
    }
}

fn keep_newest<T>(q: &mut VecDeque<T>, max: usize, item: T) {
    if max == 0 {
        return;
    }
    if q.len() >= max {
        q.pop_front();
    }
    q.push_back(item);
}

fn reason(code: &str) -> TransferReason {
    let check = check_by_code(code);
    TransferReason {
        code: code.to_string(),
        citation: check.map(|c| c.citation.to_string()).unwrap_or_default(),
        check: check.map(|c| c.check.to_string()).unwrap_or_default(),
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
    use crate::event::JackpotTransfer;

    fn line(index: u64, at_ms: i64, kind: EntryKind) -> PoolEntry {
        PoolEntry { index, at_ms, kind }
    }

    fn contribution(index: u64, at_ms: i64, e4: E4) -> PoolEntry {
        line(
            index,
            at_ms,
            EntryKind::Contribution {
                member: "M1".into(),
                base_cents: 0,
                amount_e4: e4,
                round_id: None,
            },
        )
    }

    fn build(lines: &[PoolEntry], buckets: usize, records: &[TransferRecord]) -> PoolActivity {
        let first = lines.first().unwrap().at_ms;
        let last = lines.last().unwrap().at_ms;
        let mut b = ActivityBuilder::new(
            "P",
            (0, lines.len() as u64),
            (first, last),
            buckets,
            2,
            records,
        );
        for l in lines {
            b.push(l, |m| m != "HIDDEN");
        }
        b.finish()
    }

    #[test]
    fn the_value_follows_the_lines_and_keeps_each_buckets_peak_and_end() {
        let lines = vec![
            line(1, 0, EntryKind::Created { start_e4: 1_000 }),
            contribution(2, 10, 500),
            contribution(3, 20, 500),
            line(
                4,
                30,
                EntryKind::Award {
                    member: "M1".into(),
                    winner: String::new(),
                    due_e4: 2_000,
                    paid_cents: 0,
                    ok: true,
                    reset_e4: Some(100),
                },
            ),
            contribution(5, 60, 50),
            line(
                6,
                99,
                EntryKind::Reconciliation {
                    reported_cents: 0,
                    due_e4: 150,
                    ok: true,
                },
            ),
        ];
        // Two buckets of 50 ms: [0, 50) peaks at 2,000 (line 3) and ends at 100 (the award's
        // reset); [50, 100) ends at 150 and peaks there.
        let a = build(&lines, 2, &[]);
        let pts: Vec<(u64, E4)> = a.series.iter().map(|p| (p.index, p.captive_e4)).collect();
        assert_eq!(pts, vec![(3, 2_000), (4, 100), (6, 150)]);
        // One bucket a line: every value.
        let a = build(&lines, 100, &[]);
        let pts: Vec<E4> = a.series.iter().map(|p| p.captive_e4).collect();
        assert_eq!(pts, vec![1_000, 1_500, 2_000, 100, 150, 150]);
        assert_eq!(a.awards_total, 1);
        assert_eq!(a.awards[0].due_e4, 2_000);
        assert_eq!(a.declarations_total, 1);
        assert_eq!(a.declarations[0].held_e4, 150);
    }

    #[test]
    fn a_history_without_its_start_gives_points_from_the_first_known_value() {
        let lines = vec![
            contribution(7, 0, 500),
            line(
                8,
                1,
                EntryKind::Reconciliation {
                    reported_cents: 1,
                    due_e4: 9_000,
                    ok: false,
                },
            ),
            contribution(9, 2, 1_000),
        ];
        let a = build(&lines, 10, &[]);
        let pts: Vec<E4> = a.series.iter().map(|p| p.captive_e4).collect();
        assert_eq!(pts, vec![9_000, 10_000]);
        assert!(!a.declarations[0].ok);
        assert_eq!(a.declarations[0].declared_cents, 1);
    }

    #[test]
    fn only_the_newest_items_are_kept_and_hidden_awards_are_not_counted() {
        let award = |index: u64, member: &str| {
            line(
                index,
                index as i64,
                EntryKind::Award {
                    member: member.into(),
                    winner: String::new(),
                    due_e4: 10,
                    paid_cents: 0,
                    ok: true,
                    reset_e4: Some(0),
                },
            )
        };
        let lines = vec![
            line(0, 0, EntryKind::Created { start_e4: 0 }),
            award(1, "M1"),
            award(2, "HIDDEN"),
            award(3, "M2"),
            award(4, "M3"),
        ];
        let a = build(&lines, 10, &[]);
        assert_eq!(
            a.awards_total, 3,
            "the hidden machine's award is not counted"
        );
        let members: Vec<&str> = a.awards.iter().map(|a| &*a.member).collect();
        assert_eq!(members, vec!["M2", "M3"], "the newest two, oldest first");
    }

    #[test]
    fn transfers_carry_the_books_verdict_with_citations() {
        let rec = |id: &str, codes: Vec<&'static str>| TransferRecord {
            index: 5,
            at_ms: 5,
            transfer: JackpotTransfer {
                transfer_id: id.into(),
                from_pool_id: "SRC".into(),
                to_pool_id: "P".into(),
                amount_cents: 12,
                reason: String::new(),
                authorization_id: None,
            },
            booked: true,
            due_e4: 120_000,
            route: None,
            codes: codes.into_iter().map(Into::into).collect(),
        };
        let lines = vec![
            line(0, 0, EntryKind::Created { start_e4: 0 }),
            line(
                5,
                5,
                EntryKind::TransferIn {
                    transfer_id: "T1".into(),
                    from_pool: "SRC".into(),
                    amount_e4: 120_000,
                },
            ),
            line(
                6,
                6,
                EntryKind::TransferOut {
                    transfer_id: "T2".into(),
                    to_pool: "DST".into(),
                    amount_e4: 120_000,
                    reported_cents: 12,
                    route: Some(Route::SameModelAndBets),
                    codes: vec![],
                },
            ),
            line(
                7,
                7,
                EntryKind::TransferRejected {
                    transfer_id: "T2".into(),
                    to_pool: "DST".into(),
                    reported_cents: 12,
                    codes: vec!["SLOT_TRANSFER_DUPLICATE".into()],
                },
            ),
        ];
        let a = build(
            &lines,
            10,
            &[rec("T1", vec!["SLOT_TRANSFER_TARGET_INVALID"])],
        );
        assert_eq!(a.transfers.len(), 3);
        let t_in = &a.transfers[0];
        assert_eq!(t_in.direction, Direction::In);
        assert!(!t_in.valid);
        assert_eq!(t_in.declared_cents, Some(12));
        assert_eq!(t_in.reasons[0].code, "SLOT_TRANSFER_TARGET_INVALID");
        assert!(
            t_in.reasons[0].citation.contains("r.6"),
            "{:?}",
            t_in.reasons
        );
        let t_out = &a.transfers[1];
        assert!(t_out.valid && t_out.booked && t_out.reasons.is_empty());
        assert_eq!(t_out.route, Some(Route::SameModelAndBets));
        let repeat = &a.transfers[2];
        assert!(!repeat.booked && !repeat.valid);
        assert_eq!(repeat.moved_e4, 0);
        let pts: Vec<E4> = a.series.iter().map(|p| p.captive_e4).collect();
        assert_eq!(
            pts,
            vec![0, 120_000, 0, 0],
            "in adds, out empties, a repeat moves nothing"
        );
        // Without the book's record the incoming transfer is not called valid.
        let a = build(&lines, 10, &[]);
        assert!(!a.transfers[0].valid);
        assert_eq!(a.transfers[0].declared_cents, None);
    }
}
