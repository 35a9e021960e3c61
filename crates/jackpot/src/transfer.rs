//! Force-majeure transfers (P217/2007 T.III r.6): validation, application, candidates.
//!
//! "Os valores cativos do jackpot e superjackpot cuja atribuição não possa realizar-se por
//! motivos de força maior serão transferidos para outra máquina ou grupo de máquinas do mesmo
//! modelo e apostas ou, na sua falta, para as máquinas que vierem a ser autorizadas pela
//! Inspecção-Geral de Jogos, sob proposta da concessionária."
//!
//! Readings (see the crate documentation for the full list):
//! * **Force majeure of a pool**: a pool "cannot be awarded" when *every* member machine is under
//!   force majeure for it: the machine's own (`MachineFault` with `force_majeure`), or its part
//!   in that pool only (`MachineFault.pool_ids`: a superjackpot's link, controller or server; the
//!   machine stays in service and keeps its other pools), not restored since. A jackpot has one
//!   machine; a superjackpot with one member destroyed can still be awarded on the others.
//! * **Same model and bets** (M8): same model id and the same set of bet values. The source's
//!   signatures are those of its members; every member of the target must have one of them.
//!   [`Book::transfer_candidates`], asked about one failed machine, compares with that machine's
//!   own model and bets.
//! * **"Na sua falta"** (M9, and the original's literal text): the IGJ route is open only when no
//!   machine of the source's model and bets exists, outside the source, not under force majeure,
//!   in the casinos the source pool spans; the authorisation must precede the transfer and name
//!   the same source and target. An authorisation does not make a target valid while such a
//!   machine exists (W3).
//! * The **whole** captive value is due (r.5, r.6): the amount declared must be within one cent
//!   of it.
//! * **A transfer the casino carried out is booked as carried out**, eligible or not: the ledger
//!   says what the casino holds in trust (r.5: "fiéis depositárias dos seus valores cativos ...
//!   disponíveis ... no momento da sua atribuição"). The source restarts at 0 and the target is
//!   credited with the whole captive value due, whatever amount was declared; each breach is a
//!   finding (`SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE`, `SLOT_TRANSFER_TARGET_INVALID`,
//!   `SLOT_TRANSFER_AMOUNT_MISMATCH` with both amounts, `SLOT_TRANSFER_DUPLICATE`). A wrong amount
//!   leaves the target short of what the book credits it with: the pool remembers it
//!   (`transfer_shortfall_e4`), so that its later declarations showing the casino's amount are
//!   not flagged again (one breach, one finding). Only the same transfer id reported again moves
//!   nothing (it is one transfer). A server still refuses to *propose* an ineligible transfer:
//!   [`Book::validate_transfer`] says what `apply` would flag.

use std::collections::BTreeSet;

use rules_core::adjudication::Text;
use rules_core::{Cents, Id};
use serde::{Deserialize, Serialize};

use crate::amount::{E4, add, e4, sub, to_cents, within_tolerance};
use crate::book::{Book, check_cents, check_id};
use crate::error::{ApplyError, QueryError};
use crate::event::{EventCtx, JackpotTransfer, PoolKind};
use crate::finding::{
    Finding, TRANSFER_AMOUNT_MISMATCH, TRANSFER_DUPLICATE, TRANSFER_TARGET_INVALID,
    TRANSFER_WITHOUT_FM,
};
use crate::state::{EntryKind, Pool, PoolEntry, Route, TransferRecord};

/// Why a transfer cannot be proposed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransferRejection {
    /// The book cannot make sense of it (unknown pool, negative amount): reject as malformed.
    #[error(transparent)]
    Malformed(#[from] ApplyError),
    /// It breaks r.5/r.6: [`Book::apply`] would book it as carried out, with these findings.
    #[error("transfer not eligible: {}", .0.iter().map(|f| f.code.as_ref()).collect::<Vec<_>>().join(", "))]
    Ineligible(Vec<Finding>),
}

/// What the book makes of a transfer, before anything changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The source's whole captive value: what the book moves.
    pub due_e4: E4,
    /// How the target qualified (absent: it did not).
    pub route: Option<Route>,
    pub findings: Vec<Finding>,
    /// The same transfer id was already booked: a repeat of it, which moves nothing.
    pub repeat: bool,
}

/// Force-majeure state of a pool: the index from which every member is under force majeure for
/// it (its own, or its part in this pool), and the fault events that show it.
fn force_majeure(book: &Book, pool: &Pool) -> Option<(u64, Vec<u64>)> {
    if !pool.kind.is_machine_pool() || pool.machines.is_empty() {
        return None;
    }
    let mut start = 0u64;
    let mut evidence = Vec::new();
    for id in pool.machines.keys() {
        let mark = book.machines.get(id)?.force_majeure_for(&pool.id)?;
        start = start.max(mark.since);
        evidence.push(mark.since);
    }
    Some((start, evidence))
}

/// The (model, bets) signatures of a pool's members.
fn signatures(book: &Book, pool: &Pool) -> BTreeSet<(Id, Vec<Cents>)> {
    pool.machines
        .keys()
        .filter_map(|m| book.machines.get(m))
        .map(|m| m.signature())
        .collect()
}

/// Machines of one of `sigs` (model and bets) that could receive `src`'s values: outside the
/// source, not under force majeure, in a casino the source spans.
fn machines_of(book: &Book, src: &Pool, sigs: &BTreeSet<(Id, Vec<Cents>)>) -> Vec<Id> {
    book.machines
        .values()
        .filter(|m| {
            !src.machines.contains_key(&m.id)
                && !m.is_force_majeure()
                && src.casinos.contains(&m.casino_id)
                && sigs.contains(&m.signature())
        })
        .map(|m| m.id.clone())
        .collect()
}

/// Machines of the source's model and bets that could receive its values.
fn same_model_machines(book: &Book, src: &Pool) -> Vec<Id> {
    machines_of(book, src, &signatures(book, src))
}

/// Whether `dst` qualifies as a target for `src`'s captive values under r.6. `authorization`:
/// the id the transfer cites, if any (without one, any authorisation of `src` → `dst` counts).
fn target_check(
    book: &Book,
    src: &Pool,
    dst: &Pool,
    authorization: Option<&Id>,
) -> Result<Route, (String, Vec<u64>)> {
    if !src.kind.is_machine_pool() || !dst.kind.is_machine_pool() {
        return Err((
            "r.6 moves the captive values of machine jackpots and superjackpots; a table jackpot \
             can be neither source nor target"
                .into(),
            Vec::new(),
        ));
    }
    if dst.id == src.id {
        return Err(("the target is the source pool itself".into(), Vec::new()));
    }
    if dst.machines.is_empty() {
        return Err(("the target pool has no member machine".into(), Vec::new()));
    }
    let blocked: Vec<&Id> = dst
        .machines
        .keys()
        .filter(|m| {
            book.machines
                .get(*m)
                .is_none_or(|m| m.force_majeure_for(&dst.id).is_some())
        })
        .collect();
    if !blocked.is_empty() {
        let ev = blocked
            .iter()
            .filter_map(|m| {
                book.machines
                    .get(*m)?
                    .force_majeure_for(&dst.id)
                    .map(|k| k.since)
            })
            .collect();
        return Err((
            format!(
                "target member(s) {} are themselves under force majeure for `{}` and cannot award it",
                list(blocked.iter().copied()),
                dst.id
            ),
            ev,
        ));
    }
    let sigs = signatures(book, src);
    let foreign: Vec<&Id> = dst
        .machines
        .keys()
        .filter(|m| {
            book.machines
                .get(*m)
                .is_none_or(|m| !sigs.contains(&m.signature()))
        })
        .collect();
    if foreign.is_empty() {
        return Ok(Route::SameModelAndBets);
    }
    // "na sua falta": only when no machine of the same model and bets exists.
    let same = same_model_machines(book, src);
    if !same.is_empty() {
        return Err((
            format!(
                "target member(s) {} are not of the source's model and bets, while machine(s) {} of \
                 that model and bets exist (the IGJ route is open only \"na sua falta\")",
                list(foreign.iter().copied()),
                list(same.iter())
            ),
            Vec::new(),
        ));
    }
    let auth = match authorization {
        Some(id) => match book.authorizations.get(id) {
            None => {
                return Err((
                    format!("the cited IGJ authorisation `{id}` is not on the ledger"),
                    Vec::new(),
                ));
            }
            Some(a) if a.from_pool_id != src.id || a.to_pool_id != dst.id => {
                return Err((
                    format!(
                        "the cited IGJ authorisation `{id}` is for `{}` → `{}`, not `{}` → `{}`",
                        a.from_pool_id, a.to_pool_id, src.id, dst.id
                    ),
                    vec![a.at],
                ));
            }
            Some(a) => a,
        },
        None => match book
            .authorizations
            .values()
            .find(|a| a.from_pool_id == src.id && a.to_pool_id == dst.id)
        {
            Some(a) => a,
            None => {
                return Err((
                    format!(
                        "target member(s) {} are of another model or bets and the IGJ has not authorised \
                         this target",
                        list(foreign.iter().copied())
                    ),
                    Vec::new(),
                ));
            }
        },
    };
    Ok(Route::Authorized {
        authorization_id: auth.id.clone(),
        index: auth.at,
    })
}

fn list<'a>(ids: impl Iterator<Item = &'a Id>) -> String {
    ids.map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
}

impl Book {
    /// Would `t` be an eligible transfer now? A server calls this **before** proposing a
    /// transfer (`ledgerctl jackpot transfer` refuses an ineligible one unless forced). `Ok(())`
    /// means [`Book::apply`] would move the value with no finding; `Ineligible` lists the
    /// findings it would raise while booking the transfer as carried out all the same.
    pub fn validate_transfer(&self, t: &JackpotTransfer) -> Result<(), TransferRejection> {
        let v = self.check_transfer(t)?;
        if v.findings.is_empty() {
            Ok(())
        } else {
            Err(TransferRejection::Ineligible(v.findings))
        }
    }

    pub(crate) fn check_transfer(&self, t: &JackpotTransfer) -> Result<Verdict, ApplyError> {
        check_id("transfer_id", &t.transfer_id)?;
        check_id("from_pool_id", &t.from_pool_id)?;
        check_id("to_pool_id", &t.to_pool_id)?;
        check_cents("amount_cents", t.amount_cents)?;
        if let Some(a) = &t.authorization_id {
            check_id("authorization_id", a)?;
        }
        let src = self
            .pools
            .get(&*t.from_pool_id)
            .ok_or_else(|| ApplyError::unknown("from_pool_id", "pool", &t.from_pool_id))?;
        let dst = self
            .pools
            .get(&*t.to_pool_id)
            .ok_or_else(|| ApplyError::unknown("to_pool_id", "pool", &t.to_pool_id))?;

        let place = |f: Finding| {
            let f = f.pool(&src.id);
            let f = match src.machines.keys().next() {
                Some(m) if src.kind == PoolKind::Jackpot => f.machine(m),
                _ => f,
            };
            match src.sole_casino() {
                Some(c) => f.casino(c),
                None => f,
            }
        };
        // The same transfer id again: one transfer reported twice. Nothing more moves, and the
        // repeat is the one finding (its amount is no longer the pool's value, by design).
        if let Some(prev) = self
            .transfers
            .iter()
            .rev()
            .find(|r| r.booked && r.transfer.transfer_id == t.transfer_id)
        {
            return Ok(Verdict {
                due_e4: src.captive_e4,
                route: None,
                findings: vec![place(
                    Finding::new(
                        &TRANSFER_DUPLICATE,
                        format!(
                            "transfer `{}` was already booked (it moved {} e4 from `{}`); nothing more \
                             moves",
                            t.transfer_id, prev.due_e4, prev.transfer.from_pool_id
                        ),
                    )
                    .evidence([prev.index]),
                )],
                repeat: true,
            });
        }

        let mut out = Vec::new();
        let fm = force_majeure(self, src);
        let mut episode_repeat = false;
        match &fm {
            None if src.kind.is_machine_pool() => {
                let free: Vec<&Id> = src
                    .machines
                    .keys()
                    .filter(|m| {
                        self.machines
                            .get(*m)
                            .is_none_or(|m| m.force_majeure_for(&src.id).is_none())
                    })
                    .collect();
                out.push(place(Finding::new(
                    &TRANSFER_WITHOUT_FM,
                    format!(
                        "pool `{}` can still be awarded: member(s) {} are not under force majeure \
                             for it; the transfer is booked as carried out",
                        src.id,
                        list(free.into_iter())
                    ),
                )));
            }
            None => {}
            Some((start, evidence)) => {
                if let Some(last) = src.last_transfer_out
                    && last > *start
                {
                    // A second transfer out of one force-majeure episode: the value was already
                    // moved; what the casino declares now is beside the point (one finding).
                    episode_repeat = true;
                    out.push(place(
                        Finding::new(
                            &TRANSFER_DUPLICATE,
                            format!(
                                "pool `{}`'s captive value was already transferred in this force-majeure \
                                 episode; transfer `{}` declares {} cents, the pool holds {} e4",
                                src.id, t.transfer_id, t.amount_cents, src.captive_e4
                            ),
                        )
                        .amounts(src.captive_e4, t.amount_cents)
                        .evidence(evidence.iter().copied().chain([last])),
                    ));
                }
            }
        }
        if !episode_repeat && !within_tolerance(t.amount_cents, src.captive_e4) {
            out.push(place(
                Finding::new(
                    &TRANSFER_AMOUNT_MISMATCH,
                    format!(
                        "transfer `{}` declares {} cents moved; the whole captive value of `{}` is {} e4 \
                         ({} cents), which the book moves (r.5)",
                        t.transfer_id,
                        t.amount_cents,
                        src.id,
                        src.captive_e4,
                        to_cents(src.captive_e4)
                    ),
                )
                .amounts(src.captive_e4, t.amount_cents),
            ));
        }
        let route = match target_check(self, src, dst, t.authorization_id.as_ref()) {
            Ok(r) => Some(r),
            Err((why, ev)) => {
                out.push(place(
                    Finding::new(
                        &TRANSFER_TARGET_INVALID,
                        format!("transfer `{}` to `{}`: {why}", t.transfer_id, dst.id),
                    )
                    .evidence(ev),
                ));
                None
            }
        };
        let ev: Vec<u64> = fm.map(|(_, e)| e).unwrap_or_default();
        Ok(Verdict {
            due_e4: src.captive_e4,
            route,
            findings: out
                .into_iter()
                .map(|f| f.evidence(ev.iter().copied()))
                .collect(),
            repeat: false,
        })
    }

    pub(crate) fn on_transfer(
        &mut self,
        t: &JackpotTransfer,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        let v = self.check_transfer(t)?;
        let idx = ctx.ledger_index;
        let codes: Vec<Text> = v.findings.iter().map(|f| f.code.clone()).collect();
        if v.repeat {
            if let Some(src) = self.pools.get_mut(&*t.from_pool_id) {
                src.history.push(PoolEntry {
                    index: idx,
                    at_ms: ctx.at_ms,
                    kind: EntryKind::TransferRejected {
                        transfer_id: t.transfer_id.clone(),
                        to_pool: t.to_pool_id.clone(),
                        reported_cents: t.amount_cents,
                        codes: codes.clone(),
                    },
                });
            }
            self.transfers.push(TransferRecord {
                index: idx,
                at_ms: ctx.at_ms,
                transfer: t.clone(),
                booked: false,
                due_e4: v.due_e4,
                route: None,
                codes,
            });
            return Ok(v.findings);
        }

        // ---- compute (checked), then commit: the source restarts at 0, the target receives
        // the whole value due (r.5), whatever was declared.
        let src = self
            .pools
            .get(&*t.from_pool_id)
            .ok_or_else(|| ApplyError::unknown("from_pool_id", "pool", &t.from_pool_id))?;
        let dst = self
            .pools
            .get(&*t.to_pool_id)
            .ok_or_else(|| ApplyError::unknown("to_pool_id", "pool", &t.to_pool_id))?;
        let due = v.due_e4;
        let same = src.id == dst.id;
        let src_out = add(src.totals.transferred_out_e4, due, "transfers out")?;
        let dst_base = if same { 0 } else { dst.captive_e4 };
        let dst_captive = add(dst_base, due, "pool captive value")?;
        let dst_in = add(dst.totals.transferred_in_e4, due, "transfers in")?;
        // What the casino says it moved, short of the value due: already flagged.
        let short = if within_tolerance(t.amount_cents, due) {
            0
        } else {
            sub(due, e4(t.amount_cents), "transfer shortfall")?
        };
        let dst_short = add(dst.transfer_shortfall_e4, short, "transfer shortfall")?;
        if let Some(src) = self.pools.get_mut(&*t.from_pool_id) {
            src.captive_e4 = 0;
            src.totals.transferred_out_e4 = src_out;
            src.last_transfer_out = Some(idx);
            src.history.push(PoolEntry {
                index: idx,
                at_ms: ctx.at_ms,
                kind: EntryKind::TransferOut {
                    transfer_id: t.transfer_id.clone(),
                    to_pool: t.to_pool_id.clone(),
                    amount_e4: due,
                    reported_cents: t.amount_cents,
                    route: v.route.clone(),
                    codes: codes.clone(),
                },
            });
        }
        if let Some(dst) = self.pools.get_mut(&*t.to_pool_id) {
            dst.captive_e4 = dst_captive;
            dst.totals.transferred_in_e4 = dst_in;
            dst.transfer_shortfall_e4 = dst_short;
            dst.history.push(PoolEntry {
                index: idx,
                at_ms: ctx.at_ms,
                kind: EntryKind::TransferIn {
                    transfer_id: t.transfer_id.clone(),
                    from_pool: t.from_pool_id.clone(),
                    amount_e4: due,
                },
            });
        }
        self.transfers.push(TransferRecord {
            index: idx,
            at_ms: ctx.at_ms,
            transfer: t.clone(),
            booked: true,
            due_e4: due,
            route: v.route,
            codes,
        });
        Ok(v.findings)
    }

    /// The eligible targets for the captive values of every jackpot and superjackpot
    /// `machine_id` feeds, ranked: pools of the machine's model and bets first (r.6: "outra
    /// máquina ou grupo de máquinas do mesmo modelo e apostas": every member of the target of
    /// that model and with exactly those bet values), then the pools the IGJ authorised for the
    /// source (eligible only while no machine of the same model and bets exists). What is
    /// compared is in the answer ([`PoolCandidates::model_id`], `bet_values_cents`). For
    /// `ledgerctl jackpot transfer-candidates <machine>`.
    pub fn transfer_candidates(&self, machine_id: &str) -> Result<Vec<PoolCandidates>, QueryError> {
        let machine = self
            .machines
            .get(machine_id)
            .ok_or_else(|| QueryError::unknown("machine", machine_id))?;
        // The failed machine's own model and bets: a superjackpot's other members may be of
        // other models (r.4 allows it), and those are not "the same model and bets" as this one.
        let sig = machine.signature();
        let own: BTreeSet<(Id, Vec<Cents>)> = BTreeSet::from([sig.clone()]);
        let mut out = Vec::new();
        for pid in &machine.pools {
            let Some(src) = self.pools.get(pid) else {
                continue;
            };
            if !src.kind.is_machine_pool() {
                continue;
            }
            let mut candidates = Vec::new();
            for dst in self.pools.values() {
                if dst.id == src.id || !dst.kind.is_machine_pool() {
                    continue;
                }
                let all_own = dst
                    .machines
                    .keys()
                    .all(|m| self.machines.get(m).is_some_and(|m| m.signature() == sig));
                if all_own && let Ok(Route::SameModelAndBets) = target_check(self, src, dst, None) {
                    candidates.push(Candidate {
                        rank: 1,
                        pool_id: dst.id.clone(),
                        route: Some(Route::SameModelAndBets),
                        eligible: true,
                        reason: None,
                        members: dst.machines.keys().cloned().collect(),
                    });
                }
            }
            for a in self.authorizations.values() {
                if a.from_pool_id != src.id || candidates.iter().any(|c| c.pool_id == a.to_pool_id)
                {
                    continue;
                }
                let c = match self.pools.get(&*a.to_pool_id) {
                    None => Candidate {
                        rank: 2,
                        pool_id: a.to_pool_id.clone(),
                        route: None,
                        eligible: false,
                        reason: Some(
                            "authorised by the IGJ, but the pool is not configured yet".into(),
                        ),
                        members: Vec::new(),
                    },
                    Some(dst) => {
                        let (route, eligible, reason) =
                            match target_check(self, src, dst, Some(&a.id)) {
                                Ok(r) => (Some(r), true, None),
                                Err((why, _)) => (None, false, Some(why)),
                            };
                        Candidate {
                            rank: 2,
                            pool_id: dst.id.clone(),
                            route,
                            eligible,
                            reason,
                            members: dst.machines.keys().cloned().collect(),
                        }
                    }
                };
                candidates.push(c);
            }
            candidates.sort_by(|a, b| (a.rank, &a.pool_id).cmp(&(b.rank, &b.pool_id)));
            let fm = force_majeure(self, src);
            out.push(PoolCandidates {
                pool_id: src.id.clone(),
                kind: src.kind,
                captive_e4: src.captive_e4,
                captive_cents: to_cents(src.captive_e4),
                force_majeure: fm.is_some(),
                already_transferred: match (&fm, src.last_transfer_out) {
                    (Some((start, _)), Some(last)) => last > *start,
                    _ => false,
                },
                model_id: sig.0.clone(),
                bet_values_cents: sig.1.clone(),
                same_model_machines: machines_of(self, src, &own),
                candidates,
            });
        }
        Ok(out)
    }
}

/// The transfer targets for one pool of a machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolCandidates {
    pub pool_id: Id,
    pub kind: PoolKind,
    pub captive_e4: E4,
    pub captive_cents: Cents,
    /// Every member is under force majeure: a transfer is allowed now.
    pub force_majeure: bool,
    /// The value was already moved in this force-majeure episode.
    pub already_transferred: bool,
    /// What r.6 compares ("do mesmo modelo e apostas"): the failed machine's model ...
    #[serde(default)]
    pub model_id: Id,
    /// ... and its set of bet values (cents, sorted).
    #[serde(default)]
    pub bet_values_cents: Vec<Cents>,
    /// Machines of that model and those bets (outside the pool, not under force majeure, in
    /// its casinos), whether or not they have a pool yet: while this is not empty, only rank-1
    /// targets are eligible.
    pub same_model_machines: Vec<Id>,
    /// Ranked candidates: rank 1 = every member of the failed machine's model and bets, rank 2 =
    /// IGJ-authorised.
    pub candidates: Vec<Candidate>,
}

/// One candidate target pool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    pub rank: u8,
    pub pool_id: Id,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    pub eligible: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub members: Vec<Id>,
}
