//! Captive values (P217/2007 T.III r.3–r.5): declarations, awards, reported contributions, and
//! the table jackpots fed by the table rule engines.
//!
//! * A **declaration** (`CaptiveValueReported`) is compared with the exact captive value with a
//!   tolerance strictly below one cent (M7). A pool that received a transfer of the wrong amount
//!   holds, in the book, the whole value due (r.5) and remembers the difference, already
//!   flagged: a declaration off by just that is not flagged again (one breach, one finding).
//! * An **award** releases the whole exact captive value ("entregues aos beneficiários no
//!   momento da sua atribuição", r.5; M6) — that is what the award entry and the conservation
//!   count, whatever was paid — and the pool restarts at its configured reset value (0 follows
//!   the rules, which provide no seed). A paid amount a cent or more away is
//!   `SLOT_JACKPOT_AWARD_MISMATCH`; a winner outside the pool is
//!   `SLOT_AWARD_MACHINE_NOT_IN_POOL`. Both are findings on an award that did happen: the pool
//!   is still released and reset.
//! * A **table round** adds the engine's exact contributions, then either releases the whole
//!   pool and resets it (`account.reset`), or pays the round's smaller prizes out of it
//!   (blackjack.md 13.12, poker-sem-descarte.md 7). The display the round started from is checked
//!   against the book's value.

use rules_core::Id;

use crate::amount::{E4, add, e4, sub, within_tolerance};
use crate::book::{Book, check_cents, check_id};
use crate::error::ApplyError;
use crate::event::{
    CaptiveValueReported, EventCtx, JackpotAwarded, JackpotContribution, PoolKind,
    TableJackpotRound,
};
use crate::finding::{
    AWARD_MISMATCH, AWARD_NOT_IN_POOL, CAPTIVE_MISMATCH, CONTRIBUTION_MISMATCH, Finding,
    TABLE_NOT_IN_POOL, TABLE_OVERDRAWN, table_display_check,
};
use crate::state::{EntryKind, Pool, PoolEntry, Reconciliation, ReportedTally};

impl Pool {
    /// The one casino of a single-casino pool.
    pub(crate) fn sole_casino(&self) -> Option<&Id> {
        if self.casinos.len() == 1 {
            self.casinos.iter().next()
        } else {
            None
        }
    }

    /// Whether `member` (a machine, or a table for a table jackpot) belongs to the pool.
    pub fn has_member(&self, member: &str) -> bool {
        if self.kind.is_machine_pool() {
            self.machines.contains_key(member)
        } else {
            self.tables.contains(member)
        }
    }

    fn base_finding(&self, f: Finding) -> Finding {
        let f = f.pool(&self.id);
        match self.sole_casino() {
            Some(c) => f.casino(c),
            None => f,
        }
    }
}

impl Book {
    fn pool_ref(&self, field: &str, id: &str) -> Result<&Pool, ApplyError> {
        self.pools
            .get(id)
            .ok_or_else(|| ApplyError::unknown(field, "pool", id))
    }

    pub(crate) fn on_captive_reported(
        &mut self,
        e: &CaptiveValueReported,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("pool_id", &e.pool_id)?;
        check_cents("value_cents", e.value_cents)?;
        self.pool_ref("pool_id", &e.pool_id)?;
        let Some(pool) = self.pools.get_mut(&*e.pool_id) else {
            return Ok(Vec::new());
        };
        let due = pool.captive_e4;
        let ok = within_tolerance(e.value_cents, due);
        // A transfer in that moved less (or more) than the whole value due was flagged when it
        // was booked; a declaration that shows just that is the same breach, not a new one.
        let known_short = !ok
            && pool.transfer_shortfall_e4 != 0
            && due
                .checked_sub(pool.transfer_shortfall_e4)
                .is_some_and(|v| within_tolerance(e.value_cents, v));
        if ok {
            pool.transfer_shortfall_e4 = 0;
        }
        let rec = Reconciliation {
            index: ctx.ledger_index,
            at_ms: ctx.at_ms,
            reported_cents: e.value_cents,
            due_e4: due,
            ok,
        };
        pool.last_report = Some(rec);
        pool.history.push(PoolEntry {
            index: ctx.ledger_index,
            at_ms: ctx.at_ms,
            kind: EntryKind::Reconciliation {
                reported_cents: e.value_cents,
                due_e4: due,
                ok,
            },
        });
        if ok || known_short {
            return Ok(Vec::new());
        }
        let check = if pool.kind.is_machine_pool() {
            &CAPTIVE_MISMATCH
        } else {
            table_display_check(pool.game)
        };
        let f = Finding::new(
            check,
            format!(
                "pool `{}` declared {} cents; the book holds {} e4 (start + contributions − awards ± transfers)",
                pool.id, e.value_cents, due
            ),
        )
        .amounts(due, e.value_cents);
        let f = match pool.machines.keys().next() {
            Some(m) if pool.kind == PoolKind::Jackpot => f.machine(m),
            _ => f,
        };
        Ok(vec![pool.base_finding(f)])
    }

    pub(crate) fn on_award(
        &mut self,
        e: &JackpotAwarded,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("pool_id", &e.pool_id)?;
        check_id("machine_id", &e.machine_id)?;
        check_cents("amount_cents", e.amount_cents)?;
        let pool = self.pool_ref("pool_id", &e.pool_id)?;
        let due = pool.captive_e4;
        let reset = e4(pool.reset_value_cents);
        let awarded = add(pool.totals.awarded_e4, due, "pool awards")?;
        let seeded = add(pool.totals.seeded_e4, reset, "pool seeds")?;
        let member = pool.has_member(&e.machine_id);
        let casino = self
            .machines
            .get(&*e.machine_id)
            .map(|m| m.casino_id.clone());

        let Some(pool) = self.pools.get_mut(&*e.pool_id) else {
            return Ok(Vec::new());
        };
        let ok = within_tolerance(e.amount_cents, due);
        pool.captive_e4 = reset;
        // The whole value is released to the winner (r.5): any transfer shortfall ends here.
        pool.transfer_shortfall_e4 = 0;
        pool.totals.awarded_e4 = awarded;
        pool.totals.seeded_e4 = seeded;
        pool.history.push(PoolEntry {
            index: ctx.ledger_index,
            at_ms: ctx.at_ms,
            kind: EntryKind::Award {
                member: e.machine_id.clone(),
                winner: e.winner.clone(),
                due_e4: due,
                paid_cents: e.amount_cents,
                ok,
                reset_e4: Some(reset),
            },
        });
        let mut out = Vec::new();
        let with_place = |f: Finding| {
            let f = f.machine(&e.machine_id).pool(&pool.id);
            match (&casino, pool.sole_casino()) {
                (Some(c), _) => f.casino(c),
                (None, Some(c)) => f.casino(c),
                (None, None) => f,
            }
        };
        if !member {
            let what = match pool.kind {
                PoolKind::Jackpot => "a jackpot paid on a machine other than its own (r.3)",
                PoolKind::Superjackpot => {
                    "a superjackpot paid on a machine outside its group (r.4)"
                }
                PoolKind::TableJackpot => "a table jackpot paid on a table outside the pool",
            };
            out.push(with_place(Finding::new(
                &AWARD_NOT_IN_POOL,
                format!("pool `{}` awarded on `{}`: {what}", pool.id, e.machine_id),
            )));
        }
        if !ok {
            out.push(with_place(
                Finding::new(
                    &AWARD_MISMATCH,
                    format!(
                        "pool `{}` paid {} cents; the whole captive value at the award is {} e4 (r.5)",
                        pool.id, e.amount_cents, due
                    ),
                )
                .amounts(due, e.amount_cents),
            ));
        }
        Ok(out)
    }

    pub(crate) fn on_contribution_reported(
        &mut self,
        e: &JackpotContribution,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("pool_id", &e.pool_id)?;
        check_id("machine_id", &e.machine_id)?;
        check_cents("amount_cents", e.amount_cents)?;
        let pool = self.pool_ref("pool_id", &e.pool_id)?;
        if !pool.kind.is_machine_pool() {
            // Table contributions come from the rule engine's account, which is authoritative.
            return Ok(Vec::new());
        }
        let machine = self
            .machines
            .get(&*e.machine_id)
            .ok_or_else(|| ApplyError::unknown("machine_id", "machine", &e.machine_id))?;
        if !pool.machines.contains_key(&*e.machine_id) {
            return Ok(vec![
                Finding::new(
                    &CONTRIBUTION_MISMATCH,
                    format!(
                        "machine `{}` reported a contribution of {} cents to pool `{}`, which it does not feed",
                        e.machine_id, e.amount_cents, e.pool_id
                    ),
                )
                .machine(&e.machine_id)
                .pool(&e.pool_id)
                .casino(&machine.casino_id)
                .amounts(0, e.amount_cents),
            ]);
        }
        let t = pool
            .reported
            .get(&*e.machine_id)
            .copied()
            .unwrap_or(ReportedTally {
                first: ctx.ledger_index,
                ..ReportedTally::default()
            });
        let t = ReportedTally {
            sum_cents: add(
                t.sum_cents,
                i128::from(e.amount_cents),
                "reported contributions",
            )?,
            reports: t
                .reports
                .checked_add(1)
                .ok_or_else(|| ApplyError::overflow("reported contributions"))?,
            first: t.first,
        };
        if let Some(pool) = self.pools.get_mut(&*e.pool_id) {
            pool.reported.insert(e.machine_id.clone(), t);
        }
        Ok(Vec::new())
    }

    pub(crate) fn on_table_round(
        &mut self,
        e: &TableJackpotRound,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("pool_id", &e.pool_id)?;
        check_id("table_id", &e.table_id)?;
        check_id("round_id", &e.round_id)?;
        let a = &e.account;
        check_cents("account.value_before_cents", a.value_before_cents)?;
        check_cents("account.prizes_cents", a.prizes_cents)?;
        if a.contributions_e4 < 0 {
            return Err(ApplyError::invalid(
                "account.contributions_e4",
                format!("must not be negative, got {}", a.contributions_e4),
            ));
        }
        for (i, w) in e.wins.iter().enumerate() {
            check_cents(&format!("wins[{i}].prize_cents"), w.prize_cents)?;
        }
        let pool = self.pool_ref("pool_id", &e.pool_id)?;
        if pool.kind != PoolKind::TableJackpot {
            return Err(ApplyError::invalid(
                "pool_id",
                format!(
                    "pool `{}` is a {:?}, not a table jackpot",
                    pool.id, pool.kind
                ),
            ));
        }
        // ---- compute
        let before = pool.captive_e4;
        let contribution = E4::from(a.contributions_e4);
        let with_contrib = add(before, contribution, "pool captive value")?;
        let contributed = add(
            pool.totals.contributed_e4,
            contribution,
            "pool contributions",
        )?;
        let by = add(
            pool.contributed_by.get(&*e.table_id).copied().unwrap_or(0),
            contribution,
            "member contributions",
        )?;
        let paid = e4(a.prizes_cents);
        let (due, after, seeded, reset) = if a.reset {
            let reset = e4(pool.reset_value_cents);
            (
                with_contrib,
                reset,
                add(pool.totals.seeded_e4, reset, "pool seeds")?,
                Some(reset),
            )
        } else {
            (
                paid,
                sub(with_contrib, paid, "pool captive value")?,
                pool.totals.seeded_e4,
                None,
            )
        };
        let awarded = add(pool.totals.awarded_e4, due, "pool awards")?;

        // ---- commit
        let Some(pool) = self.pools.get_mut(&*e.pool_id) else {
            return Ok(Vec::new());
        };
        let idx = ctx.ledger_index;
        let mut out = Vec::new();
        pool.game = Some(e.game);
        let place = |f: Finding, pool: &Pool| pool.base_finding(f.table(&e.table_id));
        if !pool.tables.contains(&*e.table_id) {
            out.push(place(
                Finding::new(
                    &TABLE_NOT_IN_POOL,
                    format!(
                        "round `{}` of table `{}` moved pool `{}`, which does not list the table",
                        e.round_id, e.table_id, pool.id
                    ),
                ),
                pool,
            ));
        }
        let display_ok = within_tolerance(a.value_before_cents, before);
        pool.last_report = Some(Reconciliation {
            index: idx,
            at_ms: ctx.at_ms,
            reported_cents: a.value_before_cents,
            due_e4: before,
            ok: display_ok,
        });
        pool.history.push(PoolEntry {
            index: idx,
            at_ms: ctx.at_ms,
            kind: EntryKind::Reconciliation {
                reported_cents: a.value_before_cents,
                due_e4: before,
                ok: display_ok,
            },
        });
        if !display_ok {
            out.push(place(
                Finding::new(
                    table_display_check(Some(e.game)),
                    format!(
                        "round `{}` of table `{}` started from a display of {} cents; the book holds {} e4 \
                         (previous value + Σ chip × increment − prizes)",
                        e.round_id, e.table_id, a.value_before_cents, before
                    ),
                )
                .amounts(before, a.value_before_cents),
                pool,
            ));
        }
        if contribution != 0 {
            pool.captive_e4 = with_contrib;
            pool.totals.contributed_e4 = contributed;
            pool.contributed_by.insert(e.table_id.clone(), by);
            pool.history.push(PoolEntry {
                index: idx,
                at_ms: ctx.at_ms,
                kind: EntryKind::Contribution {
                    member: e.table_id.clone(),
                    base_cents: 0,
                    amount_e4: contribution,
                    round_id: Some(e.round_id.clone()),
                },
            });
        }
        if a.reset || a.prizes_cents != 0 {
            pool.captive_e4 = after;
            pool.totals.awarded_e4 = awarded;
            pool.totals.seeded_e4 = seeded;
            let winner = e
                .wins
                .iter()
                .map(|w| format!("{}:{}={}", w.bet_id, w.combination, w.prize_cents))
                .collect::<Vec<_>>()
                .join(" ");
            pool.history.push(PoolEntry {
                index: idx,
                at_ms: ctx.at_ms,
                kind: EntryKind::Award {
                    member: e.table_id.clone(),
                    winner,
                    due_e4: due,
                    paid_cents: a.prizes_cents,
                    ok: within_tolerance(a.prizes_cents, due),
                    reset_e4: reset,
                },
            });
            if after < 0 {
                out.push(place(
                    Finding::new(
                        &TABLE_OVERDRAWN,
                        format!(
                            "round `{}` of table `{}` paid {} cents of prizes out of a jackpot holding {} e4",
                            e.round_id, e.table_id, a.prizes_cents, with_contrib
                        ),
                    )
                    .amounts(with_contrib, a.prizes_cents),
                    pool,
                ));
            }
        }
        Ok(out)
    }
}
