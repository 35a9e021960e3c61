//! The live audit inside ledgerd: a thread follows the durable chain with the replayer
//! (`ledger-audit`), and two gRPC services answer from what it has committed: `Audit` (status,
//! findings, rounds, reports) and `Jackpots` (pools, trust, machines, transfers).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use audit::{Finding, Period};
use chrono::NaiveDate;
use ledger_audit::live::Follower;
use ledger_audit::query;
use ledger_audit::replay::Replayer;
use ledger_audit::store::{AuditStore, FindingFilter};
use ledger_core::proto::{self as v1, audit_server::Audit, jackpots_server::Jackpots};

use crate::queries::QueryPool;
use rules_core::{GameId, Severity};
use tonic::{Request, Response, Status};

use crate::pipeline::Ledger;
use crate::service::id_arg;

/// The running audit.
pub struct LiveAudit {
    pub store: AuditStore,
    pub replayer: Arc<RwLock<Replayer>>,
    pub committed: Arc<RwLock<Option<u64>>>,
    /// Why the audit stopped following the chain before it was asked to (a store failure, a
    /// panic); `None` while it follows.
    pub halted: Arc<Mutex<Option<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LiveAudit {
    /// Open the derived store under `dir`, resume, and follow `ledger`'s durable head.
    pub fn start(
        dir: &std::path::Path,
        settings: audit::AuditSettings,
        calendar: &audit::Calendar,
        ledger: Ledger,
    ) -> anyhow::Result<LiveAudit> {
        let mut follower = match Follower::open_with(dir, settings.clone()) {
            Ok(f) => f,
            // Derived data must not keep the ledger from taking events: a damaged store is kept
            // for inspection under another name, and the audit replays the chain into a new one.
            Err(e) if e.is_damage() => {
                let aside = set_aside(dir)?;
                tracing::error!(
                    error = %e,
                    set_aside = %aside.display(),
                    "the audit store is damaged: set aside, and rebuilt from the chain (derived data; the chain is not affected)"
                );
                Follower::open_with(dir, settings)?
            }
            Err(e) => return Err(e.into()),
        };
        // Live, every commit is made durable: the less sled writes between two fsyncs, the less
        // a power cut can damage (ARCHITECTURE.md, "Power loss"). `LEDGERD_BENCH_AUDIT_SYNC=
        // snapshots` goes back to fsyncs at snapshots only: for measuring what the per-commit
        // fsync costs (docs/performance.md), never for a ledger in use.
        let snapshots_only =
            std::env::var("LEDGERD_BENCH_AUDIT_SYNC").as_deref() == Ok("snapshots");
        if snapshots_only {
            tracing::warn!(
                "LEDGERD_BENCH_AUDIT_SYNC=snapshots: the audit store is fsynced at snapshots only (a benchmark setting)"
            );
        }
        follower.set_sync_every_commit(!snapshots_only);
        let store = follower.store();
        // The gaming-day rows by `[reports]`' calendar: rebuilt from the stored rounds, before
        // the audit commits more, when they were kept by another one. Without them the reports
        // read every round (still right, slower).
        match store.use_calendar(calendar) {
            Ok(true) => tracing::info!(
                calendar = %calendar.describe(),
                "the audit's gaming-day report rows were rebuilt for this calendar"
            ),
            Ok(false) => {}
            Err(e) => tracing::warn!(
                error = %e,
                "the audit's gaming-day report rows could not be rebuilt: reports read every round"
            ),
        }
        let replayer = follower.replayer();
        let committed = follower.committed();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let runtime = tokio::runtime::Handle::current();
        let halted: Arc<Mutex<Option<String>>> = Arc::default();
        let halted2 = halted.clone();
        let thread = std::thread::Builder::new()
            .name("audit".into())
            .spawn(move || {
                // Why the audit stopped before it was asked to: `None` when asked.
                let follow = move || -> Option<String> {
                    let chain = ledger.store().clone();
                    let mut durable = ledger.durable();
                    let mut rebuilds = 0;
                    // Damage met while following (a read of the store finds it corrupt): set
                    // the store aside and replay the chain into a new one, as at a start; an
                    // audit that keeps meeting damage stops visibly instead.
                    let mut damaged = |follower: &mut Follower,
                                       e: ledger_audit::live::FollowError|
                     -> Result<(), String> {
                        if !e.is_damage() || rebuilds >= MAX_REBUILDS {
                            return Err(e.to_string());
                        }
                        rebuilds += 1;
                        match follower.rebuild() {
                            Ok(aside) => {
                                tracing::error!(
                                    error = %e,
                                    set_aside = %aside.map(|p| p.display().to_string()).unwrap_or_default(),
                                    "the audit store is damaged: set aside, and rebuilt from the chain (derived data; the chain is not affected)"
                                );
                                Ok(())
                            }
                            Err(again) => Err(format!(
                                "{e}; setting the damaged store aside failed: {again}"
                            )),
                        }
                    };
                    while let Err(e) = catch_up(&mut follower, &chain, &mut durable, &stop2) {
                        if let Err(why) = damaged(&mut follower, e) {
                            return Some(why);
                        }
                    }
                    while !stop2.load(Ordering::Relaxed) {
                        let head = durable.borrow_and_update().0;
                        match follower.step(&chain, head, 5_000) {
                            Ok(0) => {
                                // Caught up: wait for the head to move (or commit what is
                                // pending).
                                let changed = runtime.block_on(async {
                                    tokio::time::timeout(
                                        Duration::from_millis(100),
                                        durable.changed(),
                                    )
                                    .await
                                });
                                if let Ok(Err(_)) = changed {
                                    // The pipeline is gone: no entry will ever become durable
                                    // again. (Waiting on a closed channel returns at once: never
                                    // spin on it.)
                                    if let Err(e) = follower.commit_if_due(true) {
                                        tracing::error!(error = %e, "final audit commit failed");
                                    }
                                    return Some("the ledger's durable head is closed".into());
                                }
                                if let Err(e) = follower.commit_if_due(false)
                                    && let Err(why) = damaged(&mut follower, e)
                                {
                                    return Some(format!("committing its results failed: {why}"));
                                }
                            }
                            Ok(_) => {}
                            Err(e) => {
                                if let Err(why) = damaged(&mut follower, e) {
                                    return Some(why);
                                }
                            }
                        }
                        if follower.position().is_none() {
                            // Rebuilt: far behind again.
                            while let Err(e) =
                                catch_up(&mut follower, &chain, &mut durable, &stop2)
                            {
                                if let Err(why) = damaged(&mut follower, e) {
                                    return Some(why);
                                }
                            }
                        }
                    }
                    if let Err(e) = follower.commit_if_due(true) {
                        tracing::error!(error = %e, "final audit commit failed");
                    }
                    None
                };
                if let Some(why) = guarded(follow) {
                    tracing::error!(reason = %why, "the live audit stopped");
                    *halted2.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                }
            })?;
        Ok(LiveAudit {
            store,
            replayer,
            committed,
            halted,
            stop,
            thread: Some(thread),
        })
    }

    /// Stop following (commits what is pending and snapshots).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for LiveAudit {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Times the live audit sets its store aside and rebuilds it after meeting damage, before it
/// stops instead (a store that is damaged again at once points at the disk or a bug).
const MAX_REBUILDS: u32 = 3;

/// Entries behind the head from which the audit catches up with [`Follower::catch_up`] (entries
/// decoded on other threads) before it follows entry by entry.
const CATCH_UP_BEHIND: u64 = 20_000;
/// Entries per [`Follower::catch_up`] call (a stop request is seen between two).
const CATCH_UP_WINDOW: u64 = 100_000;

/// Bring an audit far behind the durable head (a store rebuilt from the chain after it was set
/// aside, or a new one on an existing ledger) up to it with the parallel replay, in windows, and
/// log the rate: a rebuild costs the chain's length over this rate.
fn catch_up<H>(
    follower: &mut Follower,
    chain: &ledger_store::Store,
    durable: &mut tokio::sync::watch::Receiver<(u64, H)>,
    stop: &AtomicBool,
) -> Result<(), ledger_audit::live::FollowError> {
    let from = follower.position().map_or(0, |p| p + 1);
    let started = std::time::Instant::now();
    let mut head = durable.borrow_and_update().0;
    if head < from + CATCH_UP_BEHIND {
        return Ok(());
    }
    tracing::info!(from, head, "the audit is far behind the head: catching up");
    while !stop.load(Ordering::Relaxed) {
        let at = follower.position().map_or(0, |p| p + 1);
        if head < at + CATCH_UP_BEHIND {
            break;
        }
        follower.catch_up(chain, head.min(at + CATCH_UP_WINDOW - 1), |_| {})?;
        head = durable.borrow_and_update().0;
    }
    let done = follower.position().map_or(0, |p| p + 1) - from;
    let secs = started.elapsed().as_secs_f64();
    tracing::info!(
        entries = done,
        secs,
        per_sec = (done as f64 / secs.max(1e-3)) as u64,
        "the audit caught up"
    );
    Ok(())
}

/// Run the audit's loop `follow` and say why it stopped before it was asked to: its own reason,
/// or a panic's message. A rule engine that panics on some entry is a bug; it must stop the
/// audit visibly (`GetStatus.halted`, the metrics), not silently with a poisoned lock.
fn guarded(follow: impl FnOnce() -> Option<String>) -> Option<String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(follow)).unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Some(format!("it panicked (a bug): {what}"))
    })
}

/// Set the audit store `dir` aside ([`ledger_audit::store::set_aside`]); returns the new path.
fn set_aside(dir: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    Ok(ledger_audit::store::set_aside(dir)?)
}

fn internal(e: impl std::fmt::Display) -> Status {
    Status::internal(e.to_string())
}

/// Read the replayer on the query threads (`queries`; a query that may read much) or on tokio's
/// blocking pool (None; a glance), never on an async worker: the follower holds the write lock
/// while it applies a step (up to 5,000 entries), and std's `RwLock` lets a waiting writer go
/// first, so a read taken on one of the runtime's few workers would park it, and the receipts it
/// carries, for a whole step. `copy` runs under the lock and should only copy out what the
/// answer needs; `then` (serialising, building the reply) runs after the lock is let go, still
/// off the async workers.
async fn read_replayer<T, R>(
    queries: Option<&QueryPool>,
    replayer: &Arc<RwLock<Replayer>>,
    copy: impl FnOnce(&Replayer) -> Result<T, Status> + Send + 'static,
    then: impl FnOnce(T) -> Result<R, Status> + Send + 'static,
) -> Result<R, Status>
where
    R: Send + 'static,
{
    let replayer = replayer.clone();
    let job = move || {
        let copied = {
            let r = replayer.read().map_err(|_| {
                Status::internal(
                    "the live audit stopped in the middle of an entry (a bug): its state cannot be read; GetStatus says why, ledgerd's log has the details",
                )
            })?;
            copy(&r)?
        };
        then(copied)
    };
    match queries {
        Some(pool) => pool.run(job).await?,
        None => tokio::task::spawn_blocking(job).await.map_err(internal)?,
    }
}

/// The replayer's side of `Audit.GetStatus`: its digest, open rounds, rounds closed and position.
async fn replayer_status(
    replayer: &Arc<RwLock<Replayer>>,
) -> Result<(audit::FindingsDigest, usize, u64, Option<u64>), Status> {
    read_replayer(
        None,
        replayer,
        |r| Ok((r.digest(), r.open_rounds(), r.rounds_closed(), r.position())),
        Ok,
    )
    .await
}

fn severity_to_proto(s: Severity) -> i32 {
    (match s {
        Severity::Info => v1::Severity::Info,
        Severity::Low => v1::Severity::Low,
        Severity::Medium => v1::Severity::Medium,
        Severity::High => v1::Severity::High,
        Severity::Critical => v1::Severity::Critical,
    }) as i32
}

fn severity_from_proto(s: i32) -> Result<Option<Severity>, Status> {
    Ok(match v1::Severity::try_from(s) {
        Ok(v1::Severity::Unspecified) => None,
        Ok(v1::Severity::Info) => Some(Severity::Info),
        Ok(v1::Severity::Low) => Some(Severity::Low),
        Ok(v1::Severity::Medium) => Some(Severity::Medium),
        Ok(v1::Severity::High) => Some(Severity::High),
        Ok(v1::Severity::Critical) => Some(Severity::Critical),
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "min_severity: {s} is not a severity"
            )));
        }
    })
}

/// A finding in its proto form.
pub fn finding_to_proto(f: &Finding) -> v1::Finding {
    let s = |o: &Option<String>| o.clone().unwrap_or_default();
    v1::Finding {
        id: f.id.clone(),
        seq: f.seq,
        severity: severity_to_proto(f.severity),
        for_review: f.confidence == rules_core::Confidence::Review,
        code: f.code.clone(),
        citation: f.citation.clone(),
        casino_id: s(&f.casino_id),
        table_id: s(&f.table_id),
        machine_id: s(&f.machine_id),
        pool_id: s(&f.pool_id),
        device_id: s(&f.device_id),
        game: f.game.map(|g| g.as_str().to_string()).unwrap_or_default(),
        round_id: s(&f.round_id),
        bet_id: s(&f.bet_id),
        due_cents: f.due_cents,
        reported_cents: f.reported_cents,
        evidence: f.evidence.clone(),
        at_ms: f.at_ms,
        message: f.message.clone(),
        // Unknown here: served answers set it (`finding_with_status`).
        status: v1::FindingStatus::Unspecified as i32,
    }
}

/// A finding in its proto form, with its review status.
fn finding_with_status(f: &Finding, status: v1::FindingStatus) -> v1::Finding {
    v1::Finding {
        status: status as i32,
        ..finding_to_proto(f)
    }
}

fn non_empty(s: String) -> Option<String> {
    if s.is_empty() { None } else { Some(s) }
}

/// Most stored findings one `ListFindings` call reads. A filter that few findings match (a
/// subject, a casino, a round) would otherwise read every finding for one short page; past the
/// budget the page ends early, with `next_after_seq` where the read stopped.
pub const FINDINGS_READ_BUDGET: usize = 50_000;

/// The reply for a page read with `limit + 1` as its limit, at most `max_reply_bytes` encoded:
/// `next_after_seq` is the last finding returned when there are more (past the limit, or past
/// what fits in the reply), or where the read budget stopped the read.
fn findings_page(
    page: ledger_audit::store::FindingsPage,
    limit: usize,
    max_reply_bytes: usize,
) -> Result<v1::ListFindingsResponse, Status> {
    use prost::Message as _;
    let mut budget = crate::reply::Budget::new(max_reply_bytes);
    let (findings, more) = crate::reply::fill(
        page.findings.iter().enumerate().map(|(i, f)| {
            let status = page
                .statuses
                .get(i)
                .copied()
                .unwrap_or(v1::FindingStatus::Unspecified);
            Ok::<_, Status>(finding_with_status(f, status))
        }),
        limit,
        &mut budget,
        |f| Ok(crate::reply::message_cost(f.encoded_len())),
        |f| format!("finding {}", f.seq),
    )?;
    Ok(v1::ListFindingsResponse {
        next_after_seq: if more {
            findings.last().map(|f| f.seq)
        } else {
            page.read_up_to
        },
        findings,
    })
}

/// A `ListFindingsRequest` checked: its filter and page size. A code must have a code's form
/// (no closed list of codes exists to check it against; a well-formed code no finding has costs
/// a read of an empty index), and a time window must not be empty.
fn finding_query(r: v1::ListFindingsRequest) -> Result<(FindingFilter, usize), Status> {
    let game = match non_empty(r.game) {
        Some(g) => Some(
            g.parse::<GameId>()
                .map_err(|e| Status::invalid_argument(format!("game: {e}")))?,
        ),
        None => None,
    };
    let code = non_empty(r.code);
    let status = match v1::FindingStatus::try_from(r.status) {
        Ok(v1::FindingStatus::Unspecified) => None,
        Ok(s) => Some(s),
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "status: {} is not a finding status",
                r.status
            )));
        }
    };
    if let Some(c) = &code
        && !audit::is_well_formed_code(c)
    {
        let shown: String = c.chars().take(audit::MAX_CODE_LEN).collect();
        return Err(Status::invalid_argument(format!(
            "code: `{shown}` is not a finding code (a family prefix, an underscore and a name, \
             in capitals, digits and underscores, at most {} bytes, e.g. RL_WRONG_PAYOUT)",
            audit::MAX_CODE_LEN
        )));
    }
    if let (Some(from_ms), Some(to_ms)) = (r.from_ms, r.to_ms)
        && to_ms <= from_ms
    {
        return Err(Status::invalid_argument(format!(
            "to_ms: {to_ms} is not after from_ms {from_ms} (the window is [from_ms, to_ms))"
        )));
    }
    let filter = FindingFilter {
        casino_id: non_empty(r.casino_id),
        subject: non_empty(r.subject),
        game,
        code,
        min_severity: severity_from_proto(r.min_severity)?,
        pool_id: non_empty(r.pool_id),
        round_id: non_empty(r.round_id),
        from_ms: r.from_ms,
        to_ms: r.to_ms,
        status,
    };
    let limit = match r.limit {
        0 => 100,
        n if n > 10_000 => {
            return Err(Status::invalid_argument(format!(
                "limit: {n} is above 10000"
            )));
        }
        n => n as usize,
    };
    Ok((filter, limit))
}

/// A failure reading the audit's derived data: a record that does not decode is DATA_LOSS (the
/// store is derived: deleting `<data-dir>/audit` rebuilds it from the chain), anything else
/// INTERNAL; both say why.
fn stored_data_status(e: query::QueryError) -> Status {
    match e {
        query::QueryError::Store(ledger_audit::store::AuditStoreError::Corrupt(_)) => {
            Status::data_loss(format!(
                "{e} (the audit store is derived data: stop ledgerd, delete <data-dir>/audit and \
                 restart to rebuild it from the chain)"
            ))
        }
        other => Status::internal(other.to_string()),
    }
}

/// `GetReport`'s errors: a request that names no period, or an empty one, is INVALID_ARGUMENT;
/// a store that cannot be read is not the caller's doing.
fn report_status(e: query::QueryError) -> Status {
    match e {
        query::QueryError::Invalid(_) => Status::invalid_argument(e.to_string()),
        other => stored_data_status(other),
    }
}

/// The `Audit` gRPC service.
#[derive(Clone)]
pub struct AuditService {
    pub store: AuditStore,
    pub replayer: Arc<RwLock<Replayer>>,
    pub committed: Arc<RwLock<Option<u64>>>,
    pub halted: Arc<Mutex<Option<String>>>,
    pub ledger: Ledger,
    /// The largest reply (`grpc.max_message_bytes`): a page of findings stops short of it.
    pub max_reply_bytes: usize,
    /// Where findings, rounds and reports are read ([`QueryPool`]).
    pub queries: Arc<QueryPool>,
    /// The casinos' gaming days (`[reports]`).
    pub calendar: Arc<audit::Calendar>,
    /// Held from a review's check of the finding's status to the audit's applying it, so two
    /// reviews of one finding are judged one after the other.
    pub reviews: Arc<tokio::sync::Mutex<()>>,
}

/// How long a review waits for the audit to reach the chain's head (before checking the
/// finding's status) and to apply the review (before answering; the review is durable by then).
pub const REVIEW_WAIT: Duration = Duration::from_secs(10);

impl AuditService {
    /// Wait until the audit has committed entry `index` (true), or `REVIEW_WAIT` passed or the
    /// audit stopped (false).
    async fn audit_reaches(&self, index: u64) -> bool {
        let deadline = tokio::time::Instant::now() + REVIEW_WAIT;
        loop {
            if self.committed.read().map(|p| *p).unwrap_or(None) >= Some(index) {
                return true;
            }
            let halted = self.halted.lock().map(|h| h.is_some()).unwrap_or(true);
            if halted || tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The finding `id` if the caller may see it (NOT_FOUND otherwise: another casino's finding
    /// reads as one that does not exist), with its status and history.
    async fn visible_finding(
        &self,
        caller: &crate::access::Principal,
        id: &str,
    ) -> Result<
        (
            Finding,
            v1::FindingStatus,
            Vec<ledger_audit::review::Review>,
        ),
        Status,
    > {
        let store = self.store.clone();
        let key = id.to_string();
        let found = self
            .queries
            .run(move || -> Result<_, ledger_audit::store::AuditStoreError> {
                let Some(f) = store.finding_by_id(&key)? else {
                    return Ok(None);
                };
                Ok(Some((f, store.status(&key)?, store.reviews(&key)?)))
            })
            .await?
            .map_err(|e| stored_data_status(query::QueryError::Store(e)))?;
        match found {
            Some((f, status, history))
                if caller.casinos.is_empty()
                    || f.casino_id
                        .as_deref()
                        .is_some_and(|c| caller.casinos.contains(c)) =>
            {
                Ok((f, status, history))
            }
            _ => Err(Status::not_found(format!("finding_id: no finding {id}"))),
        }
    }
}

/// A finding id argument: present and of an id's form.
fn finding_id_arg(id: &str) -> Result<(), Status> {
    if id.is_empty() {
        return Err(Status::invalid_argument("finding_id: missing"));
    }
    id_arg("finding_id", id)
}

#[tonic::async_trait]
impl Audit for AuditService {
    async fn get_status(
        &self,
        _: Request<v1::AuditStatusRequest>,
    ) -> Result<Response<v1::AuditStatus>, Status> {
        // The commit thread holds this lock only to store a number: read it here.
        let position = *self.committed.read().map_err(internal)?;
        let store = self.store.clone();
        let findings = tokio::task::spawn_blocking(move || store.finding_count())
            .await
            .map_err(internal)?
            .map_err(|e| stored_data_status(query::QueryError::Store(e)))?;
        let halted = self
            .halted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_default();
        // The digest over the committed findings: recompute from the store would be slow; the
        // replayer's digest covers its position, which equals the committed one once caught up.
        // A stopped audit's replayer may be half way through an entry: nothing is read from it.
        let (digest, open_rounds, rounds) = if halted.is_empty() {
            let (digest, open_rounds, rounds, replayer_position) =
                replayer_status(&self.replayer).await?;
            let digest = if replayer_position == position && digest.count == findings {
                digest.hex()
            } else {
                String::new()
            };
            (digest, open_rounds as u64, rounds)
        } else {
            (String::new(), 0, 0)
        };
        Ok(Response::new(v1::AuditStatus {
            position: position.map_or(-1, |p| p as i64),
            head: self.ledger.durable().borrow().0,
            findings,
            findings_digest: digest,
            open_rounds,
            rounds,
            halted,
        }))
    }

    async fn list_findings(
        &self,
        req: Request<v1::ListFindingsRequest>,
    ) -> Result<Response<v1::ListFindingsResponse>, Status> {
        let caller = crate::access::Caller::of(&req);
        let mut r = req.into_inner();
        scope_casino(&caller, &mut r.casino_id)?;
        let after_seq = r.after_seq;
        let (filter, limit) = finding_query(r)?;
        let store = self.store.clone();
        let page = self
            .queries
            .run(move || store.findings_within(&filter, after_seq, limit + 1, FINDINGS_READ_BUDGET))
            .await?
            .map_err(|e| stored_data_status(query::QueryError::Store(e)))?;
        Ok(Response::new(findings_page(
            page,
            limit,
            self.max_reply_bytes,
        )?))
    }

    async fn review_finding(
        &self,
        req: Request<v1::ReviewFindingRequest>,
    ) -> Result<Response<v1::FindingReview>, Status> {
        use ledger_core::review::{ReviewError, check_review};
        let caller = crate::access::Caller::of(&req);
        let r = req.into_inner();
        finding_id_arg(&r.finding_id)?;
        let action = v1::FindingAction::try_from(r.action).map_err(|_| {
            Status::invalid_argument(format!("action: {} is not an action", r.action))
        })?;
        let refused = |e: ReviewError| match e {
            ReviewError::Invalid(m) => Status::invalid_argument(m),
            ReviewError::Transition(m) => {
                Status::failed_precondition(format!("finding {}: {m}", r.finding_id))
            }
        };
        // The request's own faults first, whatever the finding's status.
        check_review(v1::FindingStatus::Open, action, &r.comment)
            .or_else(|e| match e {
                ReviewError::Transition(_) => Ok(()),
                e => Err(e),
            })
            .map_err(refused)?;
        let _one_at_a_time = self.reviews.lock().await;
        let head = self.ledger.durable().borrow().0;
        if !self.audit_reaches(head).await {
            return Err(Status::unavailable(format!(
                "the audit has not reached the chain's head (entry {head}) within {} s, or it stopped (GetStatus says why): the finding's status cannot be checked; try again",
                REVIEW_WAIT.as_secs()
            )));
        }
        let (finding, status, _) = self.visible_finding(&caller, &r.finding_id).await?;
        check_review(status, action, &r.comment).map_err(refused)?;
        let record = v1::FindingReviewed {
            finding_id: finding.id.clone(),
            action: action as i32,
            comment: r.comment,
            principal: caller.name.clone(),
            principal_role: caller
                .roles
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(","),
            principal_fingerprint: caller.fingerprint.clone(),
            casino_id: finding.casino_id.clone().unwrap_or_default(),
            code: finding.code.clone(),
            finding_seq: finding.seq,
            previous_status: status as i32,
        };
        let receipt = self
            .ledger
            .append_record(v1::ledger_record_body::Record::FindingReviewed(
                record.clone(),
            ))
            .await?;
        tracing::info!(
            finding = %record.finding_id,
            action = ledger_core::review::action_name(action),
            principal = %record.principal,
            index = receipt.index,
            "finding reviewed"
        );
        // Durable now; answered once the audit shows it (or after REVIEW_WAIT, when the audit
        // is behind: the status then follows when it catches up).
        self.audit_reaches(receipt.index).await;
        Ok(Response::new(v1::FindingReview {
            index: receipt.index,
            at_ms: receipt.received_at_ms,
            record: Some(record),
        }))
    }

    async fn get_finding(
        &self,
        req: Request<v1::GetFindingRequest>,
    ) -> Result<Response<v1::FindingDetail>, Status> {
        let caller = crate::access::Caller::of(&req);
        let r = req.into_inner();
        finding_id_arg(&r.finding_id)?;
        let (finding, status, history) = self.visible_finding(&caller, &r.finding_id).await?;
        Ok(Response::new(v1::FindingDetail {
            finding: Some(finding_with_status(&finding, status)),
            history: history.iter().map(|h| h.to_proto()).collect(),
        }))
    }

    async fn get_round(
        &self,
        req: Request<v1::GetRoundRequest>,
    ) -> Result<Response<v1::RoundDetail>, Status> {
        let caller = crate::access::Caller::of(&req);
        let r = req.into_inner();
        id_arg("round_id", &r.round_id)?;
        if !r.table_id.is_empty() {
            id_arg("table_id", &r.table_id)?;
        }
        let (round_id, table_id) = (r.round_id.clone(), r.table_id.clone());
        let store = self.store.clone();
        let chain = self.ledger.store().clone();
        let detail = self
            .queries
            .run(move || -> Result<_, query::QueryError> {
                let d = query::round_detail(
                    &chain,
                    &store,
                    non_empty(r.table_id).as_deref(),
                    &r.round_id,
                    r.explain,
                )?;
                let statuses = d
                    .findings
                    .iter()
                    .map(|f| store.status(&f.id))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((d, statuses))
            })
            .await?
            .map_err(|e: query::QueryError| match e {
                query::QueryError::NoRound(_) => Status::not_found(e.to_string()),
                // The tables it names may be other casinos'.
                query::QueryError::Ambiguous { .. } if !caller.casinos.is_empty() => {
                    Status::invalid_argument(format!(
                        "round_id: `{round_id}` was played at several tables: name table_id"
                    ))
                }
                query::QueryError::Ambiguous { .. } => Status::invalid_argument(e.to_string()),
                other => stored_data_status(other),
            })?;
        let (detail, statuses) = detail;
        // A round of another casino's table is answered as one that does not exist.
        let casino = detail.summary.casino_id.as_deref().unwrap_or_default();
        if !caller.casinos.is_empty() && !caller.casinos.contains(casino) {
            return Err(Status::not_found(
                query::QueryError::NoRound(no_round(&table_id, &round_id)).to_string(),
            ));
        }
        Ok(Response::new(v1::RoundDetail {
            summary_json: serde_json::to_string(&detail.summary).map_err(internal)?,
            entries: detail.entries,
            adjudication_json: serde_json::to_string(&detail.adjudication).map_err(internal)?,
            explanation: detail.explanation,
            findings: detail
                .findings
                .iter()
                .zip(statuses)
                .map(|(f, s)| finding_with_status(f, s))
                .collect(),
        }))
    }

    async fn get_report(
        &self,
        req: Request<v1::ReportRequest>,
    ) -> Result<Response<v1::Report>, Status> {
        let caller = crate::access::Caller::of(&req);
        let r = req.into_inner();
        let period = report_period(r.from_ms, r.to_ms)?;
        let day = match non_empty(r.day) {
            Some(_) if period.is_some() => {
                return Err(Status::invalid_argument(
                    "day: give a period (from_ms and to_ms) or a day, not both",
                ));
            }
            Some(d) => Some(NaiveDate::parse_from_str(&d, "%Y-%m-%d").map_err(|e| {
                Status::invalid_argument(format!("day: `{d}` is not YYYY-MM-DD ({e})"))
            })?),
            None if period.is_none() => {
                return Err(Status::invalid_argument(
                    "day: missing (give a day, or a period with from_ms and to_ms)",
                ));
            }
            None => None,
        };
        let ask = match (period, day) {
            (Some(p), _) => {
                if r.days != 0 {
                    return Err(Status::invalid_argument(
                        "days: only with a day, not with a period",
                    ));
                }
                query::ReportAsk::Period(p)
            }
            (None, Some(day)) => {
                if r.days > query::MAX_REPORT_DAYS {
                    return Err(Status::invalid_argument(format!(
                        "days: {} is more than {} gaming days",
                        r.days,
                        query::MAX_REPORT_DAYS
                    )));
                }
                query::ReportAsk::Day { day, days: r.days }
            }
            (None, None) => return Err(Status::invalid_argument("day: missing")),
        };
        let store = self.store.clone();
        let calendar = self.calendar.clone();
        let periods = self
            .queries
            .run(move || query::report(&store, &calendar, ask))
            .await?
            .map_err(report_status)?;
        // Slot machines over the same periods (not the chart's series of days), read from the
        // live audit's jackpot book; a principal limited to casinos gets their machines only.
        let spans: Vec<(usize, Option<(NaiveDate, NaiveDate)>, audit::Period)> = periods
            .iter()
            .enumerate()
            .filter(|(_, p)| p.name != "gaming_day")
            .map(|(i, p)| (i, p.days, p.period))
            .collect();
        let counted_spans = r.event_counts.then(|| spans.clone());
        let (store, calendar, scope) = (self.store.clone(), self.calendar.clone(), caller.clone());
        let mut slots = read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                spans
                    .into_iter()
                    .map(|(i, days, instants)| {
                        query::slot_report(r.book(), &store, &calendar, days, instants, |c| {
                            scope.sees_casino(c)
                        })
                        .map(|rows| (i, rows))
                        .map_err(jackpot_status)
                    })
                    .collect::<Result<Vec<_>, Status>>()
            },
            Ok,
        )
        .await?
        .into_iter()
        .collect::<std::collections::HashMap<_, _>>();
        // The machines' significant events by kind, from the store's kind index (after the
        // replayer's lock is let go).
        if let Some(spans) = counted_spans {
            let (store, calendar) = (self.store.clone(), self.calendar.clone());
            slots = self
                .queries
                .run(move || {
                    for (i, days, instants) in spans {
                        if let Some(rows) = slots.get_mut(&i) {
                            query::slot_event_counts(&store, &calendar, days, instants, rows)?;
                        }
                    }
                    Ok::<_, query::QueryError>(slots)
                })
                .await?
                .map_err(report_status)?;
        }
        let date = |d: NaiveDate| d.format("%Y-%m-%d").to_string();
        Ok(Response::new(v1::Report {
            gaming_day: self.calendar.describe(),
            periods: periods
                .into_iter()
                .enumerate()
                .map(|(i, p)| v1::ReportPeriod {
                    slot_rows: slots
                        .remove(&i)
                        .unwrap_or_default()
                        .into_iter()
                        .map(slot_report_row)
                        .collect(),
                    name: p.name,
                    from_ms: p.period.from_ms,
                    to_ms: p.period.to_ms,
                    first_day: p.days.map(|d| date(d.0)).unwrap_or_default(),
                    last_day: p.days.map(|d| date(d.1)).unwrap_or_default(),
                    // A principal limited to casinos gets their rows only: not the other
                    // casinos', nor the grand total ("*"), which includes them.
                    rows: p
                        .rows
                        .into_iter()
                        .map(report_row)
                        .filter(|row| {
                            caller.casinos.is_empty() || caller.casinos.contains(&row.casino_id)
                        })
                        .collect(),
                })
                .collect(),
        }))
    }
}

/// What `query::QueryError::NoRound` names for a round asked for (the same words, so that a
/// hidden round reads as one that does not exist).
fn no_round(table_id: &str, round_id: &str) -> String {
    if table_id.is_empty() {
        round_id.to_string()
    } else {
        format!("{round_id} at table {table_id}")
    }
}

/// A request's `casino_id` for a caller limited to some casinos: one of them (named, or its only
/// one when the request names none), or `PERMISSION_DENIED`. Unchanged for other callers.
fn scope_casino(caller: &crate::access::Principal, casino_id: &mut String) -> Result<(), Status> {
    if caller.casinos.is_empty() {
        return Ok(());
    }
    if casino_id.is_empty() {
        if caller.casinos.len() == 1 {
            *casino_id = caller.casinos.iter().next().cloned().unwrap_or_default();
            return Ok(());
        }
        return Err(Status::invalid_argument(format!(
            "casino_id: {} reads one casino at a time: name one of {}",
            caller.name,
            caller
                .casinos
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if caller.casinos.contains(casino_id.as_str()) {
        Ok(())
    } else {
        Err(Status::permission_denied(format!(
            "casino_id: {} may read {} only",
            caller.name,
            caller
                .casinos
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}

/// `ReportRequest`'s period: both ends or neither (neither: a day), the start before the end.
fn report_period(from_ms: Option<i64>, to_ms: Option<i64>) -> Result<Option<Period>, Status> {
    match (from_ms, to_ms) {
        (Some(from_ms), Some(to_ms)) if from_ms < to_ms => Ok(Some(Period { from_ms, to_ms })),
        (Some(from_ms), Some(to_ms)) => Err(Status::invalid_argument(format!(
            "to_ms: {to_ms} is not after from_ms {from_ms} (the period is [from_ms, to_ms))"
        ))),
        (None, None) => Ok(None),
        (Some(_), None) => Err(Status::invalid_argument(
            "to_ms: missing (a period needs from_ms and to_ms; neither for a day)",
        )),
        (None, Some(_)) => Err(Status::invalid_argument(
            "from_ms: missing (a period needs from_ms and to_ms; neither for a day)",
        )),
    }
}

fn slot_report_row(r: query::SlotRow) -> v1::SlotReportRow {
    // Sums of cents beyond i64 cannot come from i64 meters in any real period; saturate.
    let c = |v: i128| i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX });
    v1::SlotReportRow {
        takings_cents: c(r.takings_cents()),
        casino_id: r.casino_id,
        machine_id: r.machine_id,
        model_id: r.model_id,
        readings: r.readings,
        wagered_cents: c(r.wagered_cents),
        won_cents: c(r.won_cents),
        drop_cents: c(r.drop_cents),
        theoretical_rtp_bp: r.theoretical_rtp_bp.map(c),
        expected_rtp_bp: r.expected_rtp_bp.map(c),
        actual_rtp_bp: r.actual_rtp_bp.map(c),
        expected_won_cents: r
            .expected_won_e4
            .and_then(|e| jackpot::amount::round_div(e, jackpot::E4_PER_CENT))
            .map(c),
        variance_cents: r.variance_cents.map(c),
        variance_bp: r.variance_bp.map(c),
        partial: r.partial,
        event_counts: r.event_counts.into_iter().collect(),
    }
}

fn report_row(r: audit::ReportRow) -> v1::ReportRow {
    v1::ReportRow {
        casino_id: r.casino_id,
        table_id: r.table_id,
        game: r.game,
        rounds: r.rounds,
        void_rounds: r.void_rounds,
        handle_cents: r.handle_cents,
        due_player_net_cents: r.due_player_net_cents,
        reported_player_net_cents: r.reported_player_net_cents,
        due_win_cents: r.due_win_cents,
        reported_win_cents: r.reported_win_cents,
        hold_bp: r.hold_bp,
        due_hold_bp: r.due_hold_bp,
        discrepancies: r.discrepancies,
        discrepancy_abs_cents: r.discrepancy_abs_cents,
    }
}

/// The `Jackpots` gRPC service: the jackpot accounts as the live audit holds them. Every answer
/// is copied out of the replayer on the blocking pool and serialised after the lock is let go
/// ([`read_replayer`]).
#[derive(Clone)]
pub struct JackpotService {
    pub replayer: Arc<RwLock<Replayer>>,
    /// Where the jackpot book's per-event detail is (pool history, meter increases): the
    /// replayer's book hands it out to the audit store.
    pub store: AuditStore,
    /// The largest reply (`grpc.max_message_bytes`): a page of pool history or of machines stops
    /// short of it.
    pub max_reply_bytes: usize,
    /// Where the book is read ([`QueryPool`]).
    pub queries: Arc<QueryPool>,
}

/// A jackpot query's error: an unknown id is NOT_FOUND, a stored record that does not decode is
/// DATA_LOSS (with how to rebuild), the store's own failure INTERNAL.
fn jackpot_status(e: jackpot::QueryError) -> Status {
    match e {
        jackpot::QueryError::Unknown { .. } => Status::not_found(e.to_string()),
        e @ jackpot::QueryError::BeyondHistory { .. } => {
            Status::invalid_argument(format!("history_before: {e}"))
        }
        jackpot::QueryError::SourceCorrupt(_) => Status::data_loss(format!(
            "{e} (the audit store is derived data: stop ledgerd, delete <data-dir>/audit and \
             restart to rebuild it from the chain)"
        )),
        e @ (jackpot::QueryError::NotHeld | jackpot::QueryError::Source(_)) => internal(e),
    }
}

/// What a principal limited to some casinos sees of the jackpot accounts (the others see
/// everything): the pools its casinos share in, and of a pool shared with other casinos (a
/// joint superjackpot) the pool's totals and its own casinos' members, contributions and lines,
/// nothing of the other casinos' machines. Unknown and hidden ids get the same NOT_FOUND.
#[derive(Clone, Debug)]
enum JackpotScope {
    All,
    Casinos(BTreeSet<String>),
}

impl JackpotScope {
    fn of(caller: &crate::access::Principal) -> JackpotScope {
        if caller.casinos.is_empty() {
            JackpotScope::All
        } else {
            JackpotScope::Casinos(caller.casinos.clone())
        }
    }

    fn casino(&self, casino: &str) -> bool {
        match self {
            JackpotScope::All => true,
            JackpotScope::Casinos(cs) => cs.contains(casino),
        }
    }

    /// A pool its casinos share in.
    fn pool(&self, casinos: &BTreeSet<rules_core::Id>) -> bool {
        casinos.iter().any(|c| self.casino(c))
    }

    /// A machine of its casinos.
    fn machine(&self, book: &jackpot::Book, id: &str) -> bool {
        book.machine(id).is_some_and(|m| self.casino(&m.casino_id))
    }

    /// A member of a pool of `casinos`: a machine of its casinos, or a table of a pool of its
    /// casinos only (the book does not know a table's casino).
    fn member(&self, book: &jackpot::Book, casinos: &BTreeSet<rules_core::Id>, id: &str) -> bool {
        match book.machine(id) {
            Some(m) => self.casino(&m.casino_id),
            None => casinos.iter().all(|c| self.casino(c)),
        }
    }

    /// A pool's status as the principal may see it.
    fn pool_status(&self, book: &jackpot::Book, p: &mut jackpot::PoolStatus) {
        if let JackpotScope::All = self {
            return;
        }
        let all = p.casinos.clone();
        let mine = |id: &str| self.member(book, &all, id);
        p.casinos.retain(|c| self.casino(c));
        p.machines.retain(|m, _| mine(m));
        p.tables.retain(|t| mine(t));
        p.contributed_by.retain(|m, _| mine(m));
        p.reported.retain(|m, _| mine(m));
    }

    /// A page of a pool's history as the principal may see it: the lines about other casinos'
    /// members left out, and their members out of reconfigurations.
    fn pool_page(&self, book: &jackpot::Book, page: &mut jackpot::PoolHistoryPage) {
        if let JackpotScope::All = self {
            return;
        }
        let all = page.pool.casinos.clone();
        let mine = |id: &str| self.member(book, &all, id);
        page.history.retain_mut(|line| match &mut line.kind {
            jackpot::EntryKind::Contribution { member, .. }
            | jackpot::EntryKind::Award { member, .. } => mine(member),
            jackpot::EntryKind::Reconfigured {
                machines, tables, ..
            } => {
                machines.retain(|m| mine(m));
                tables.retain(|t| mine(t));
                true
            }
            _ => true,
        });
        self.pool_status(book, &mut page.pool);
    }
}

/// The answer to an id the caller may not see: the book's own for an unknown one.
fn unknown(what: &'static str, id: &str) -> Status {
    jackpot_status(jackpot::QueryError::unknown(what, id))
}

fn json(v: &impl serde::Serialize) -> Result<Response<v1::JsonDocument>, Status> {
    Ok(Response::new(v1::JsonDocument {
        json: serde_json::to_string(v).map_err(internal)?,
    }))
}

/// A page of pool history cut to what fits in one reply of `max_reply_bytes`: the newest of its
/// lines are kept, and `next_before` names the first of them, from which the client pages back.
fn pool_history_reply(
    mut page: jackpot::PoolHistoryPage,
    max_reply_bytes: usize,
) -> Result<Response<v1::JsonDocument>, Status> {
    let mut lines = std::mem::take(&mut page.history);
    let mut budget = crate::reply::Budget::new(max_reply_bytes);
    // The page without its lines: the pool's status and the positions.
    let bare = serde_json::to_string(&page).map_err(internal)?.len();
    if !budget.admit(bare) {
        return Err(budget.too_large(&format!("pool {}'s status", page.pool.id), bare));
    }
    let first = page.first;
    let newest_first = lines.iter().enumerate().rev().map(|(i, l)| {
        let n = serde_json::to_string(l).map_err(internal)?.len();
        Ok::<_, Status>((i, n))
    });
    let (kept, more) = crate::reply::fill(
        newest_first,
        usize::MAX,
        &mut budget,
        |(_, n)| Ok(crate::reply::json_cost(*n)),
        |(i, _)| format!("pool history line {}", first + *i as u64),
    )?;
    if more {
        let cut = lines.len() - kept.len();
        page.first = first + cut as u64;
        page.next_before = Some(page.first);
        lines.drain(..cut);
    }
    page.history = lines;
    json(&page)
}

/// History lines in one `Jackpots.GetPool` answer when the request names no limit.
pub const POOL_HISTORY_DEFAULT: u32 = 100;
/// The most history lines one `Jackpots.GetPool` answer carries (about 2 MB of JSON, under
/// tonic's 4 MiB message limit).
pub const POOL_HISTORY_MAX: u32 = 10_000;

/// `GetPoolRequest.history_limit`: 0 is the default.
fn history_limit(n: u32) -> Result<usize, Status> {
    match n {
        0 => Ok(POOL_HISTORY_DEFAULT as usize),
        n if n > POOL_HISTORY_MAX => Err(Status::invalid_argument(format!(
            "history_limit: {n} is above {POOL_HISTORY_MAX}"
        ))),
        n => Ok(n as usize),
    }
}

/// `PoolActivityRequest`'s buckets and items: 0 is the default.
const ACTIVITY_BUCKETS: u32 = 200;
const ACTIVITY_BUCKETS_MAX: u32 = 1_000;
const ACTIVITY_ITEMS: u32 = 50;
const ACTIVITY_ITEMS_MAX: u32 = 1_000;
/// History lines read from the store at a time while a pool's activity is built.
const ACTIVITY_CHUNK: u64 = 10_000;

/// `PoolActivityRequest`'s period: either end may be absent; both, the start before the end.
fn activity_period(
    from_ms: Option<i64>,
    to_ms: Option<i64>,
) -> Result<(Option<i64>, Option<i64>), Status> {
    match (from_ms, to_ms) {
        (Some(f), Some(t)) if f >= t => Err(Status::invalid_argument(format!(
            "to_ms: {t} is not after from_ms {f} (the period is [from_ms, to_ms))"
        ))),
        p => Ok(p),
    }
}

fn bounded(field: &str, n: u32, default: u32, max: u32) -> Result<usize, Status> {
    match n {
        0 => Ok(default as usize),
        n if n > max => Err(Status::invalid_argument(format!(
            "{field}: {n} is above {max}"
        ))),
        n => Ok(n as usize),
    }
}

/// `ListMachinesRequest`'s period: both ends or neither, the start before the end.
/// Machines in a `ListMachines` page by default, and at most.
const MACHINES_PAGE: usize = 1_000;
const MACHINES_PAGE_MAX: usize = 10_000;
const EVENTS_PAGE: usize = 1_000;
const EVENTS_PAGE_MAX: usize = 10_000;

fn machines_period(from_ms: Option<i64>, to_ms: Option<i64>) -> Result<jackpot::Period, Status> {
    match (from_ms, to_ms) {
        (Some(from_ms), Some(to_ms)) if from_ms < to_ms => {
            Ok(jackpot::Period::Times { from_ms, to_ms })
        }
        (Some(from_ms), Some(to_ms)) => Err(Status::invalid_argument(format!(
            "to_ms: {to_ms} is not after from_ms {from_ms} (the period is [from_ms, to_ms))"
        ))),
        (None, None) => Ok(jackpot::Period::All),
        (Some(_), None) => Err(Status::invalid_argument(
            "to_ms: missing (a period needs from_ms and to_ms; neither for everything)",
        )),
        (None, Some(_)) => Err(Status::invalid_argument(
            "from_ms: missing (a period needs from_ms and to_ms; neither for everything)",
        )),
    }
}

#[tonic::async_trait]
impl Jackpots for JackpotService {
    async fn list_pools(
        &self,
        req: Request<v1::ListPoolsRequest>,
    ) -> Result<Response<v1::PoolList>, Status> {
        let scope = JackpotScope::of(&crate::access::Caller::of(&req));
        let (statuses, casinos, holds) = read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                let book = r.book();
                let mut statuses = book.reconciliation_status();
                // Of the pools its casinos share in, only its casinos (and the pool's totals).
                statuses.retain(|s| {
                    book.pool(&s.pool_id)
                        .is_some_and(|p| scope.pool(&p.casinos))
                });
                let casinos: Vec<Vec<String>> = statuses
                    .iter()
                    .map(|s| {
                        book.pool(&s.pool_id)
                            .map(|p| {
                                p.casinos
                                    .iter()
                                    .filter(|c| scope.casino(c))
                                    .map(|c| c.to_string())
                                    .collect()
                            })
                            .unwrap_or_default()
                    })
                    .collect();
                Ok((statuses, casinos, book.conservation().holds))
            },
            Ok,
        )
        .await?;
        let pools = statuses
            .into_iter()
            .zip(casinos)
            .map(|(s, casino_ids)| v1::PoolSummary {
                pool_id: s.pool_id.to_string(),
                kind: serde_json::to_value(s.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                casino_ids,
                captive_cents: s.captive_cents,
                captive_e4: s.captive_e4.to_string(),
                last_reported_cents: s.last_report.as_ref().map(|l| l.reported_cents),
                reconciled: s.last_report.as_ref().is_none_or(|l| l.ok),
                last_reported_at_ms: s.last_report.as_ref().map(|l| l.at_ms),
                last_reported_held_cents: s
                    .last_report
                    .as_ref()
                    .map(|l| jackpot::amount::to_cents(l.due_e4)),
                last_reported_held_e4: s
                    .last_report
                    .as_ref()
                    .map(|l| l.due_e4.to_string())
                    .unwrap_or_default(),
            })
            .collect();
        Ok(Response::new(v1::PoolList {
            pools,
            conservation_holds: holds,
        }))
    }

    async fn get_pool(
        &self,
        req: Request<v1::GetPoolRequest>,
    ) -> Result<Response<v1::JsonDocument>, Status> {
        let scope = JackpotScope::of(&crate::access::Caller::of(&req));
        let q = req.into_inner();
        id_arg("pool_id", &q.pool_id)?;
        let limit = history_limit(q.history_limit)?;
        let (id, before) = (q.pool_id, q.history_before);
        let store = self.store.clone();
        let max = self.max_reply_bytes;
        read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                let book = r.book();
                if !book.pool(&id).is_none_or(|p| scope.pool(&p.casinos)) {
                    return Err(unknown("pool", &id));
                }
                let mut page = book
                    .pool_history_page_from(&store, &id, before, limit)
                    .map_err(jackpot_status)?;
                scope.pool_page(book, &mut page);
                Ok(page)
            },
            move |page| pool_history_reply(page, max),
        )
        .await
    }

    async fn get_pool_activity(
        &self,
        req: Request<v1::PoolActivityRequest>,
    ) -> Result<Response<v1::JsonDocument>, Status> {
        use jackpot::DetailSource;
        let scope = JackpotScope::of(&crate::access::Caller::of(&req));
        let q = req.into_inner();
        id_arg("pool_id", &q.pool_id)?;
        let (from_ms, to_ms) = activity_period(q.from_ms, q.to_ms)?;
        let buckets = bounded("buckets", q.buckets, ACTIVITY_BUCKETS, ACTIVITY_BUCKETS_MAX)?;
        let items = bounded("max_items", q.max_items, ACTIVITY_ITEMS, ACTIVITY_ITEMS_MAX)?;
        let id = q.pool_id;
        let (store, lines) = (self.store.clone(), self.store.clone());
        let max = self.max_reply_bytes;
        read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                // Under the lock only what the pass needs: the pool's span of stored lines, its
                // transfer records and, for a principal limited to casinos, whose members it sees.
                let book = r.book();
                let pool = match book.pool(&id) {
                    Some(p) if scope.pool(&p.casinos) => p,
                    _ => return Err(unknown("pool", &id)),
                };
                let span = store.pool_span(pool).map_err(jackpot_status)?;
                let records: Vec<jackpot::TransferRecord> = book
                    .transfers()
                    .iter()
                    .filter(|t| *t.transfer.from_pool_id == *id || *t.transfer.to_pool_id == *id)
                    .cloned()
                    .collect();
                // Whose awards it sees (`JackpotScope::member`): a machine of its casinos; any
                // other member (a table) only in a pool of its casinos only.
                let seen: Option<(std::collections::BTreeMap<String, bool>, bool)> = match &scope {
                    JackpotScope::All => None,
                    JackpotScope::Casinos(_) => Some((
                        book.machines()
                            .map(|m| (m.id.to_string(), scope.casino(&m.casino_id)))
                            .collect(),
                        pool.casinos.iter().all(|c| scope.casino(c)),
                    )),
                };
                Ok((id, span, records, seen))
            },
            move |(id, (from, to), records, seen)| {
                let visible = |m: &str| {
                    seen.as_ref()
                        .is_none_or(|(machines, all)| machines.get(m).copied().unwrap_or(*all))
                };
                let at = |pos: u64| -> Result<Option<i64>, Status> {
                    Ok(lines
                        .pool_lines(&id, pos, pos.saturating_add(1))
                        .map_err(jackpot_status)?
                        .first()
                        .map(|l| l.at_ms))
                };
                // The period's lines: the first at or after each end, by bisection (a line's
                // time decreases only at a declared clock step).
                let first_at = |t: Option<i64>, dflt: u64| -> Result<u64, Status> {
                    let Some(t) = t else { return Ok(dflt) };
                    let (mut lo, mut hi) = (from, to);
                    while lo < hi {
                        let mid = lo + (hi - lo) / 2;
                        if at(mid)?.is_some_and(|m| m < t) {
                            lo = mid + 1;
                        } else {
                            hi = mid;
                        }
                    }
                    Ok(lo)
                };
                let (from, to) = (first_at(from_ms, from)?, first_at(to_ms, to)?);
                let to = to.max(from);
                let (first_ms, last_ms) = if from < to {
                    (at(from)?.unwrap_or(0), at(to - 1)?.unwrap_or(0))
                } else {
                    (0, 0)
                };
                let mut b = jackpot::ActivityBuilder::new(
                    &id,
                    (from, to),
                    (first_ms, last_ms),
                    buckets,
                    items,
                    &records,
                );
                let mut pos = from;
                while pos < to {
                    let end = pos.saturating_add(ACTIVITY_CHUNK).min(to);
                    for line in lines.pool_lines(&id, pos, end).map_err(jackpot_status)? {
                        b.push(&line, visible);
                    }
                    pos = end;
                }
                let activity = b.finish();
                let doc = json(&activity)?;
                let n = doc.get_ref().json.len();
                if n > max {
                    return Err(Status::resource_exhausted(format!(
                        "pool {id}'s activity is {n} bytes, above grpc.max_message_bytes ({max}): \
                         ask for fewer buckets or max_items"
                    )));
                }
                Ok(doc)
            },
        )
        .await
    }

    async fn get_liability(
        &self,
        req: Request<v1::LiabilityRequest>,
    ) -> Result<Response<v1::JsonDocument>, Status> {
        let caller = crate::access::Caller::of(&req);
        let mut casino = req.into_inner().casino_id;
        if !casino.is_empty() {
            id_arg("casino_id", &casino)?;
        }
        // Limited to casinos: one of its own (the whole trust report names every casino).
        scope_casino(&caller, &mut casino)?;
        read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                Ok(if casino.is_empty() {
                    Err(r.book().trust_report())
                } else {
                    Ok(r.book().liability(&casino))
                })
            },
            |l| match l {
                Err(all) => json(&all),
                Ok(one) => json(&one),
            },
        )
        .await
    }

    async fn list_machines(
        &self,
        req: Request<v1::ListMachinesRequest>,
    ) -> Result<Response<v1::JsonDocument>, Status> {
        let scope = JackpotScope::of(&crate::access::Caller::of(&req));
        let q = req.into_inner();
        let period = machines_period(q.from_ms, q.to_ms)?;
        let limit = crate::service::page_limit(q.limit, MACHINES_PAGE, MACHINES_PAGE_MAX)?;
        let after = non_empty(q.after_machine_id);
        if let Some(a) = &after {
            id_arg("after_machine_id", a)?;
        }
        let store = self.store.clone();
        let mut budget = crate::reply::Budget::new(self.max_reply_bytes);
        read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                // Each overview is serialised once, to be counted and then sent.
                let overviews = r
                    .book()
                    .machine_overviews_after(&store, period, after.as_deref())
                    .filter(|o| {
                        o.as_ref()
                            .map_or(true, |o| scope.casino(&o.machine.casino_id))
                    })
                    .map(|o| {
                        let o = o.map_err(jackpot_status)?;
                        let text = serde_json::to_string(&o).map_err(internal)?;
                        Ok::<_, Status>((o.machine.id.clone(), text))
                    });
                crate::reply::fill(
                    overviews,
                    limit,
                    &mut budget,
                    |(_, text)| Ok(crate::reply::json_cost(text.len())),
                    |(id, _)| format!("machine {id}'s overview"),
                )
            },
            |(page, more)| {
                let next_after = more
                    .then(|| page.last().map(|(id, _)| id.clone()))
                    .flatten();
                let texts: Vec<&str> = page.iter().map(|(_, t)| t.as_str()).collect();
                let mut json = format!("{{\"machines\":[{}]", texts.join(","));
                if let Some(id) = next_after {
                    json.push_str(",\"next_after\":");
                    json.push_str(&serde_json::to_string(&id).map_err(internal)?);
                }
                json.push('}');
                Ok(Response::new(v1::JsonDocument { json }))
            },
        )
        .await
    }

    async fn get_machine_events(
        &self,
        req: Request<v1::MachineEventsRequest>,
    ) -> Result<Response<v1::JsonDocument>, Status> {
        let scope = JackpotScope::of(&crate::access::Caller::of(&req));
        let q = req.into_inner();
        id_arg("machine_id", &q.machine_id)?;
        let period = machines_period(q.from_ms, q.to_ms)?;
        let limit = crate::service::page_limit(q.limit, EVENTS_PAGE, EVENTS_PAGE_MAX)?;
        if let Some(k) = q
            .kinds
            .iter()
            .find(|k| !jackpot::EVENT_KINDS.contains(&k.as_str()))
        {
            return Err(Status::invalid_argument(format!(
                "kinds: unknown kind `{k}` (one of {})",
                jackpot::EVENT_KINDS.join(", ")
            )));
        }
        let query = jackpot::EventQuery {
            period,
            after_index: q.after_index,
            kinds: q.kinds,
        };
        let id = q.machine_id;
        let store = self.store.clone();
        let mut budget = crate::reply::Budget::new(self.max_reply_bytes);
        read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                let book = r.book();
                if book.machine(&id).is_some() && !scope.machine(book, &id) {
                    return Err(unknown("machine", &id));
                }
                let (events, more) = book
                    .machine_events_from(&store, &id, &query, limit)
                    .map_err(jackpot_status)?;
                let machine = book
                    .machine(&id)
                    .ok_or_else(|| Status::not_found(format!("unknown machine `{id}`")))?;
                // The machine's state goes in every page; the events take what room is left.
                let head = jackpot::EventsReport::new(machine, Vec::new(), false);
                let head_bytes =
                    crate::reply::json_cost(serde_json::to_string(&head).map_err(internal)?.len());
                if !budget.admit(head_bytes) {
                    return Err(budget.too_large(&format!("machine {id}'s state"), head_bytes));
                }
                let (page, left) = crate::reply::fill(
                    events.into_iter().map(Ok::<_, Status>),
                    limit,
                    &mut budget,
                    |e| {
                        Ok(crate::reply::json_cost(
                            serde_json::to_string(e).map_err(internal)?.len(),
                        ))
                    },
                    |e| format!("the event of entry {}", e.index),
                )?;
                Ok(jackpot::EventsReport::new(machine, page, more || left))
            },
            |report| json(&report),
        )
        .await
    }

    async fn transfer_candidates(
        &self,
        req: Request<v1::TransferCandidatesRequest>,
    ) -> Result<Response<v1::JsonDocument>, Status> {
        let scope = JackpotScope::of(&crate::access::Caller::of(&req));
        let id = req.into_inner().machine_id;
        id_arg("machine_id", &id)?;
        read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                let book = r.book();
                if book.machine(&id).is_some() && !scope.machine(book, &id) {
                    return Err(Status::not_found(
                        jackpot::QueryError::unknown("machine", &id).to_string(),
                    ));
                }
                let mut pools = book
                    .transfer_candidates(&id)
                    .map_err(|e| Status::not_found(e.to_string()))?;
                // Limited to casinos: target pools its casinos share in, and of every list of
                // machines its casinos' only (a reason naming another's says "another casino's").
                if let JackpotScope::Casinos(_) = scope {
                    for p in &mut pools {
                        let casinos = book
                            .pool(&p.pool_id)
                            .map(|p| p.casinos.clone())
                            .unwrap_or_default();
                        p.same_model_machines
                            .retain(|m| scope.member(book, &casinos, m));
                        p.candidates.retain(|c| {
                            book.pool(&c.pool_id)
                                .is_some_and(|t| scope.pool(&t.casinos))
                        });
                        for c in &mut p.candidates {
                            let casinos = book
                                .pool(&c.pool_id)
                                .map(|p| p.casinos.clone())
                                .unwrap_or_default();
                            let hidden: Vec<rules_core::Id> = c
                                .members
                                .iter()
                                .filter(|m| !scope.member(book, &casinos, m))
                                .cloned()
                                .collect();
                            c.members.retain(|m| !hidden.contains(m));
                            if let Some(r) = &mut c.reason {
                                for m in &hidden {
                                    *r = r.replace(&**m, "another casino's machine");
                                }
                            }
                        }
                    }
                }
                Ok(pools)
            },
            |c| json(&c),
        )
        .await
    }

    async fn validate_transfer(
        &self,
        req: Request<v1::JackpotTransfer>,
    ) -> Result<Response<v1::TransferValidation>, Status> {
        let scope = JackpotScope::of(&crate::access::Caller::of(&req));
        let t = req.into_inner();
        // What ingest would refuse as malformed is never accepted (the book checks less).
        if let Err(e) = ledger_core::event::check_jackpot_transfer(&t) {
            let error = match e {
                ledger_core::BodyError::Malformed { field, problem } => {
                    format!("`{field}`: {problem}")
                }
                other => other.to_string(),
            };
            return Ok(Response::new(v1::TransferValidation {
                accepted: false,
                findings: Vec::new(),
                error,
            }));
        }
        let transfer = jackpot::JackpotTransfer {
            transfer_id: t.transfer_id.into(),
            from_pool_id: t.from_pool_id.into(),
            to_pool_id: t.to_pool_id.into(),
            amount_cents: t.amount_cents,
            reason: t.reason,
            authorization_id: non_empty(t.authorization_id).map(Into::into),
        };
        let verdict = read_replayer(
            Some(&self.queries),
            &self.replayer,
            move |r| {
                let book = r.book();
                // A pool outside its casinos is answered as one that does not exist.
                for (field, id) in [
                    ("from_pool_id", &transfer.from_pool_id),
                    ("to_pool_id", &transfer.to_pool_id),
                ] {
                    if book.pool(id).is_some_and(|p| !scope.pool(&p.casinos)) {
                        return Ok(Err(jackpot::TransferRejection::Malformed(
                            jackpot::ApplyError::Unknown {
                                field: field.to_string(),
                                what: "pool",
                                id: id.to_string(),
                            },
                        )));
                    }
                }
                let mut verdict = book.validate_transfer(&transfer);
                // A joint pool's findings may name another casino's machines (its members, or
                // machines of the source's model and bets): not to a principal limited to casinos.
                if let (JackpotScope::Casinos(_), Err(jackpot::TransferRejection::Ineligible(fs))) =
                    (&scope, &mut verdict)
                {
                    let hidden: Vec<String> = book
                        .machines()
                        .filter(|m| !scope.casino(&m.casino_id))
                        .map(|m| format!("`{}`", m.id))
                        .collect();
                    for f in fs.iter_mut() {
                        for h in &hidden {
                            if f.message.contains(h.as_str()) {
                                f.message =
                                    f.message.replace(h.as_str(), "another casino's machine");
                            }
                        }
                    }
                }
                Ok(verdict)
            },
            Ok,
        )
        .await?;
        let (accepted, findings, error) = match verdict {
            Ok(()) => (true, Vec::new(), String::new()),
            Err(jackpot::TransferRejection::Ineligible(fs)) => (
                false,
                fs.iter()
                    .map(|f| v1::Finding {
                        severity: severity_to_proto(f.severity),
                        code: f.code.to_string(),
                        citation: f.citation.to_string(),
                        message: f.message.clone(),
                        pool_id: f.pool_id.as_deref().unwrap_or_default().to_string(),
                        ..Default::default()
                    })
                    .collect(),
                String::new(),
            ),
            Err(e) => (false, Vec::new(), e.to_string()),
        };
        Ok(Response::new(v1::TransferValidation {
            accepted,
            findings,
            error,
        }))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_principal_limited_to_casinos_reads_their_findings_only() {
        use crate::access::{Principal, Role};
        let one = Principal::new("lx", Role::Compliance, ["lisboa".to_string()]);
        let two = Principal::new("both", Role::Compliance, ["lisboa".into(), "porto".into()]);
        let all = Principal::new("insp", Role::Regulator, []);
        let mut c = String::new();
        super::scope_casino(&one, &mut c).unwrap();
        assert_eq!(c, "lisboa", "its only casino, when the request names none");
        let mut c = "porto".to_string();
        let e = super::scope_casino(&one, &mut c).unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
        let mut c = String::new();
        assert_eq!(
            super::scope_casino(&two, &mut c).unwrap_err().code(),
            tonic::Code::InvalidArgument
        );
        let mut c = "porto".to_string();
        super::scope_casino(&two, &mut c).unwrap();
        assert_eq!(c, "porto");
        let mut c = String::new();
        super::scope_casino(&all, &mut c).unwrap();
        assert_eq!(c, "", "a principal of every casino reads every casino");
    }

    use super::*;

    /// The next page is after the last finding returned when the page overflowed, where the
    /// read budget stopped otherwise, and absent at the end.
    #[test]
    fn the_next_page_starts_after_the_last_returned_or_where_the_read_stopped() {
        let f = |seq| audit::Finding {
            seq,
            ..audit::Finding::default()
        };
        let page = |seqs: &[u64], read_up_to| ledger_audit::store::FindingsPage {
            findings: seqs.iter().map(|&s| f(s)).collect(),
            statuses: vec![v1::FindingStatus::Open; seqs.len()],
            read_up_to,
        };
        let all = |p, limit| findings_page(p, limit, 4 << 20).unwrap();
        let r = all(page(&[1, 5, 9], None), 2);
        assert_eq!(r.findings.len(), 2);
        assert!(
            r.findings
                .iter()
                .all(|f| f.status == v1::FindingStatus::Open as i32)
        );
        assert_eq!(r.next_after_seq, Some(5));
        let r = all(page(&[1], Some(40_000)), 2);
        assert_eq!((r.findings.len(), r.next_after_seq), (1, Some(40_000)));
        let r = all(page(&[], Some(50_000)), 2);
        assert_eq!((r.findings.len(), r.next_after_seq), (0, Some(50_000)));
        let r = all(page(&[1, 2], None), 2);
        assert_eq!(r.next_after_seq, None);
    }

    /// A page of findings stops where the next would not fit in a reply, and names the next page
    /// from there; the encoded reply is within the limit.
    #[test]
    fn a_page_of_findings_fits_in_one_reply() {
        use prost::Message as _;
        let f = |seq| audit::Finding {
            seq,
            message: "m".repeat(1_000),
            ..audit::Finding::default()
        };
        let page = |n: u64, read_up_to| ledger_audit::store::FindingsPage {
            findings: (0..n).map(f).collect(),
            statuses: vec![v1::FindingStatus::Resolved; n as usize],
            read_up_to,
        };
        let one = finding_with_status(&f(0), v1::FindingStatus::Resolved).encoded_len();
        let max = crate::reply::MARGIN + 3 * crate::reply::message_cost(one) + 10;
        // Five asked, three fit: the next page starts after the third, even when the read was
        // cut short too.
        for read_up_to in [None, Some(4)] {
            let r = findings_page(page(5, read_up_to), 5, max).unwrap();
            assert_eq!(r.findings.len(), 3);
            assert_eq!(r.next_after_seq, Some(2));
            assert!(r.encoded_len() <= max, "{} > {max}", r.encoded_len());
        }
        // Three asked and three fit: the last page.
        let r = findings_page(page(3, None), 3, max).unwrap();
        assert_eq!((r.findings.len(), r.next_after_seq), (3, None));
        // A finding that fits in no reply is named.
        let e = findings_page(page(1, None), 5, crate::reply::MARGIN + one).unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        assert!(e.message().starts_with("finding 0 alone is"), "{e:?}");
    }

    /// While the follower holds the replayer's write lock (a step of up to 5,000 entries), a
    /// Jackpots or status request must not park the runtime's worker: on a runtime of ONE worker,
    /// another task still runs while the request waits for the lock. (Before, the request took
    /// the read lock on the worker itself and the other task ran only once the writer let go.)
    fn the_runtime_keeps_running_while_a_step_holds_the_lock(
        request: impl FnOnce(
            Arc<RwLock<Replayer>>,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>,
    ) {
        let replayer = Arc::new(RwLock::new(Replayer::new(ledger_audit::replay::settings(
            false,
        ))));
        let (locked_tx, locked_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let writer = {
            let replayer = replayer.clone();
            std::thread::spawn(move || {
                let _step = replayer.write().unwrap();
                locked_tx.send(()).unwrap();
                // Released by the runtime's other task; the timeout only ends a failing test
                // instead of hanging it, and says so.
                release_rx
                    .recv_timeout(Duration::from_secs(10))
                    .map_err(|_| "the runtime's other task never ran while the lock was held")
            })
        };
        locked_rx.recv().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let answered = rt.block_on(async move {
            let pending = tokio::spawn(request(replayer));
            // Let the request start and wait for the lock, then release it from this task.
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            release_tx.send(()).unwrap();
            pending.await.unwrap()
        });
        writer.join().unwrap().unwrap();
        assert!(answered);
    }

    /// The audit's loop stopping by itself is a reason, a panic in it is one too (with the
    /// panic's message); stopping when asked is none.
    #[test]
    fn a_stopped_audit_says_why() {
        assert_eq!(guarded(|| None), None);
        assert_eq!(
            guarded(|| Some("committing its results failed: disk".into())).as_deref(),
            Some("committing its results failed: disk")
        );
        let n = 7;
        assert_eq!(
            guarded(|| panic!("entry {n}: overflow")).as_deref(),
            Some("it panicked (a bug): entry 7: overflow")
        );
        assert_eq!(
            guarded(|| std::panic::panic_any("static")).as_deref(),
            Some("it panicked (a bug): static")
        );
    }

    /// After the follower panicked in the middle of an entry (the replayer's lock poisoned),
    /// the queries that read the replayer say that the audit stopped, not "poisoned lock".
    #[test]
    fn queries_after_the_audit_stopped_in_an_entry_say_so() {
        let replayer = Arc::new(RwLock::new(Replayer::new(ledger_audit::replay::settings(
            false,
        ))));
        let r = replayer.clone();
        let _ = std::thread::spawn(move || {
            let _step = r.write().unwrap();
            panic!("a rule engine's bug");
        })
        .join();
        assert!(replayer.is_poisoned());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let err = rt
            .block_on(
                JackpotService {
                    replayer,
                    store: AuditStore::temporary().unwrap(),
                    max_reply_bytes: 4 << 20,
                    queries: QueryPool::start(1).unwrap(),
                }
                .list_pools(Request::new(v1::ListPoolsRequest {})),
            )
            .unwrap_err();
        assert!(
            err.message().contains("the live audit stopped"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn jackpot_requests_wait_for_the_lock_off_the_async_workers() {
        the_runtime_keeps_running_while_a_step_holds_the_lock(|replayer| {
            Box::pin(async move {
                let svc = JackpotService {
                    replayer,
                    store: AuditStore::temporary().unwrap(),
                    max_reply_bytes: 4 << 20,
                    queries: QueryPool::start(1).unwrap(),
                };
                svc.list_pools(Request::new(v1::ListPoolsRequest {}))
                    .await
                    .is_ok()
            })
        });
        the_runtime_keeps_running_while_a_step_holds_the_lock(|replayer| {
            Box::pin(async move {
                let svc = JackpotService {
                    replayer,
                    store: AuditStore::temporary().unwrap(),
                    max_reply_bytes: 4 << 20,
                    queries: QueryPool::start(1).unwrap(),
                };
                svc.list_machines(Request::new(v1::ListMachinesRequest::default()))
                    .await
                    .is_ok()
            })
        });
        the_runtime_keeps_running_while_a_step_holds_the_lock(|replayer| {
            Box::pin(async move {
                let svc = JackpotService {
                    replayer,
                    store: AuditStore::temporary().unwrap(),
                    max_reply_bytes: 4 << 20,
                    queries: QueryPool::start(1).unwrap(),
                };
                svc.get_pool(Request::new(v1::GetPoolRequest {
                    pool_id: "none".into(),
                    ..Default::default()
                }))
                .await
                .is_err_and(|s| s.code() == tonic::Code::NotFound)
            })
        });
    }

    fn invalid(r: Result<impl std::fmt::Debug, Status>, field: &str) {
        let s = r.expect_err("INVALID_ARGUMENT");
        assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
        assert!(s.message().starts_with(&format!("{field}: ")), "{s:?}");
    }

    #[test]
    fn a_findings_query_names_the_field_it_refuses() {
        let req = |f: fn(&mut v1::ListFindingsRequest)| {
            let mut r = v1::ListFindingsRequest::default();
            f(&mut r);
            finding_query(r)
        };
        assert_eq!(req(|_| {}).unwrap().1, 100);
        let (filter, _) = req(|r| r.code = "RL_WRONG_PAYOUT".into()).unwrap();
        assert_eq!(filter.code.as_deref(), Some("RL_WRONG_PAYOUT"));
        invalid(req(|r| r.code = "NONE".into()), "code");
        invalid(req(|r| r.code = "rl_wrong_payout".into()), "code");
        invalid(req(|r| r.code = "X_".repeat(1_000)), "code");
        assert!(
            req(|r| {
                r.from_ms = Some(1);
                r.to_ms = Some(2);
            })
            .is_ok()
        );
        invalid(
            req(|r| {
                r.from_ms = Some(2);
                r.to_ms = Some(2);
            }),
            "to_ms",
        );
        invalid(
            req(|r| {
                r.from_ms = Some(3);
                r.to_ms = Some(2);
            }),
            "to_ms",
        );
        invalid(req(|r| r.limit = 10_001), "limit");
        invalid(req(|r| r.game = "pachinko".into()), "game");
        invalid(req(|r| r.min_severity = 99), "min_severity");
    }

    #[test]
    fn a_damaged_store_is_data_loss_not_the_callers_error() {
        let corrupt = query::QueryError::Store(ledger_audit::store::AuditStoreError::Corrupt(
            "expected value".into(),
        ));
        let s = report_status(corrupt);
        assert_eq!(s.code(), tonic::Code::DataLoss, "{s:?}");
        assert!(s.message().contains("expected value"), "{s:?}");
        let s = report_status(query::QueryError::Invalid("the period is empty".into()));
        assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
    }

    #[test]
    fn the_pool_history_limit_has_a_default_and_a_maximum() {
        assert_eq!(history_limit(0).unwrap(), 100);
        assert_eq!(history_limit(1).unwrap(), 1);
        assert_eq!(history_limit(10_000).unwrap(), 10_000);
        invalid(history_limit(10_001), "history_limit");
    }

    #[test]
    fn a_pools_activity_has_default_and_maximum_buckets_and_items() {
        let b = |n| bounded("buckets", n, ACTIVITY_BUCKETS, ACTIVITY_BUCKETS_MAX);
        assert_eq!(b(0).unwrap(), 200);
        assert_eq!(b(1_000).unwrap(), 1_000);
        invalid(b(1_001), "buckets");
        let i = |n| bounded("max_items", n, ACTIVITY_ITEMS, ACTIVITY_ITEMS_MAX);
        assert_eq!(i(0).unwrap(), 50);
        invalid(i(1_001), "max_items");
        assert_eq!(activity_period(None, Some(5)).unwrap(), (None, Some(5)));
        assert_eq!(
            activity_period(Some(4), Some(5)).unwrap(),
            (Some(4), Some(5))
        );
        invalid(activity_period(Some(5), Some(5)), "to_ms");
    }

    #[test]
    fn a_report_period_needs_both_ends_in_order() {
        assert_eq!(report_period(None, None).unwrap(), None);
        assert_eq!(
            report_period(Some(i64::MIN), Some(i64::MAX)).unwrap(),
            Some(Period {
                from_ms: i64::MIN,
                to_ms: i64::MAX
            })
        );
        invalid(report_period(Some(5), None), "to_ms");
        invalid(report_period(None, Some(9)), "from_ms");
        invalid(report_period(Some(9), Some(9)), "to_ms");
        invalid(report_period(Some(10), Some(9)), "to_ms");
    }

    #[test]
    fn a_machines_period_needs_both_ends_in_order() {
        assert_eq!(machines_period(None, None).unwrap(), jackpot::Period::All);
        assert_eq!(
            machines_period(Some(5), Some(9)).unwrap(),
            jackpot::Period::Times {
                from_ms: 5,
                to_ms: 9
            }
        );
        invalid(machines_period(Some(5), None), "to_ms");
        invalid(machines_period(None, Some(9)), "from_ms");
        invalid(machines_period(Some(9), Some(9)), "to_ms");
    }

    #[test]
    fn the_status_waits_for_the_lock_off_the_async_workers() {
        the_runtime_keeps_running_while_a_step_holds_the_lock(|replayer| {
            Box::pin(async move {
                replayer_status(&replayer)
                    .await
                    .is_ok_and(|(d, open, rounds, at)| {
                        d.count == 0 && open == 0 && rounds == 0 && at.is_none()
                    })
            })
        });
    }
}
