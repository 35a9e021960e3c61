//! Following the chain: apply new durable entries as they come, commit findings and rounds
//! within a fraction of a second, snapshot the replayer now and then, and resume after a restart
//! from the last snapshot (everything committed after it is dropped and replayed, so a finding is
//! never lost, duplicated or renumbered).
//!
//! Commits run on a thread of their own (the "audit-commit" thread), in order, while the replayer
//! goes on: on two cores the store's writes (about a third of a replay's time) overlap the rule
//! engines'. At most two commits wait; a forced commit waits for every one before it. The
//! committed position (what queries see) moves only once a commit has landed.

use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use audit::{AuditSettings, Finding, RoundSummary};
use ledger_store::{Store, StoreError};

use crate::replay::{Prepared, Replayer, ReplayerSnapshot, Step, settings};
use crate::store::{AuditStore, AuditStoreError};

/// How often pending findings are committed (they become visible to queries).
pub const COMMIT_EVERY: Duration = Duration::from_millis(200);
/// How often the replayer is snapshotted (resuming replays at most this much).
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(5);
/// A snapshot is taken at most once per this many times what the last one cost (copying the
/// replayer, then writing and flushing it): a snapshot grows with the floor (machines, pools,
/// open rounds, table states), and the audit shares the cores with ingest. At 20, snapshots
/// take at most about 5% of the audit's time, however large they grow; resuming then replays
/// more, at hundreds of thousands of entries a second.
pub const SNAPSHOT_COST_FACTOR: u32 = 20;
/// Most entries applied between two commits.
pub const MAX_PENDING_ENTRIES: usize = 20_000;

/// Why following stopped.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error(transparent)]
    Store(#[from] AuditStoreError),
    #[error("reading the chain: {0}")]
    Chain(#[from] ledger_store::StoreError),
    #[error("resuming the audit: {0}")]
    Resume(#[from] rules_core::ConfigError),
    #[error("{0}")]
    Source(String),
}

impl FollowError {
    /// Whether the audit store is damaged (see [`AuditStoreError::is_damage`]) or its snapshot
    /// no longer restores: derived data, which a replay from the chain rebuilds.
    pub fn is_damage(&self) -> bool {
        match self {
            FollowError::Store(e) => e.is_damage(),
            FollowError::Resume(_) => true,
            FollowError::Chain(_) | FollowError::Source(_) => false,
        }
    }
}

/// One commit for the commit thread.
struct Batch {
    findings: Vec<Finding>,
    rounds: Vec<RoundSummary>,
    detail: Vec<jackpot::Detail>,
    reviews: Vec<crate::review::Review>,
    snapshot: Option<ReplayerSnapshot>,
    /// The replayer's position the batch covers.
    position: Option<u64>,
    /// Make it durable (flush and fsync) even without a snapshot.
    sync: bool,
    /// Told once the batch (and every one before it) has landed.
    done: Option<mpsc::Sender<()>>,
}

/// The commit thread.
struct Committer {
    tx: Option<mpsc::SyncSender<Batch>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The first failure; every later batch is dropped.
    error: Arc<Mutex<Option<AuditStoreError>>>,
    /// How long the last batch with a snapshot took to write and flush, µs.
    snapshot_write_us: Arc<std::sync::atomic::AtomicU64>,
}

impl Committer {
    fn start(store: AuditStore, committed: Arc<RwLock<Option<u64>>>) -> Committer {
        let (tx, rx) = mpsc::sync_channel::<Batch>(2);
        let error: Arc<Mutex<Option<AuditStoreError>>> = Arc::new(Mutex::new(None));
        let err = error.clone();
        let snapshot_write_us = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let write_us = snapshot_write_us.clone();
        let work = move || {
            for b in rx {
                let failed = err.lock().map(|e| e.is_some()).unwrap_or(true);
                if !failed {
                    let started = Instant::now();
                    let with_snapshot = b.snapshot.is_some();
                    let sync = with_snapshot || b.sync;
                    let r = store
                        .commit_with(
                            &b.findings,
                            &b.rounds,
                            &b.detail,
                            &b.reviews,
                            b.snapshot.as_ref(),
                        )
                        .and_then(|()| if sync { store.flush() } else { Ok(()) });
                    if with_snapshot {
                        let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                        write_us.store(us, std::sync::atomic::Ordering::Relaxed);
                    }
                    match r {
                        Ok(()) => {
                            *committed.write().unwrap_or_else(|e| e.into_inner()) = b.position;
                        }
                        Err(e) => {
                            if let Ok(mut slot) = err.lock() {
                                *slot = Some(e);
                            }
                        }
                    }
                }
                if let Some(done) = b.done {
                    let _ = done.send(());
                }
            }
        };
        let thread = std::thread::Builder::new()
            .name("audit-commit".into())
            .spawn(work)
            .ok();
        Committer {
            tx: Some(tx),
            thread,
            error,
            snapshot_write_us,
        }
    }

    fn failure(&self) -> Option<AuditStoreError> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Whether a snapshot is due `elapsed` after the last one: every `every` (zero: at every
/// commit), and not before [`SNAPSHOT_COST_FACTOR`] times what the last one cost.
fn snapshot_due(elapsed: Duration, every: Duration, last_cost: Duration) -> bool {
    if every.is_zero() {
        return true;
    }
    elapsed >= every.max(last_cost.saturating_mul(SNAPSHOT_COST_FACTOR))
}

/// The live audit: the replayer (shared with the query services, which read the jackpot
/// accounts through it) and its derived store.
pub struct Follower {
    replayer: Arc<RwLock<Replayer>>,
    store: AuditStore,
    committer: Committer,
    pending: Pending,
    /// Commit the round summaries and the jackpot book's detail (false: only findings and
    /// snapshots, for a replay whose store is thrown away afterwards).
    keep_rounds: bool,
    pending_entries: usize,
    last_commit: Instant,
    last_snapshot: Instant,
    snapshot_every: Duration,
    /// What copying the replayer for the last snapshot took.
    last_snapshot_copy: Duration,
    /// Position covered by committed findings (what queries see).
    committed: Arc<RwLock<Option<u64>>>,
    /// Flush and fsync every commit, not only those with a snapshot.
    sync_every_commit: bool,
}

impl Follower {
    /// Open the derived store in `dir` and resume from its snapshot (or start at genesis).
    pub fn open(dir: &Path, keep_round_states: bool) -> Result<Follower, FollowError> {
        Self::with_store(AuditStore::open(dir)?, keep_round_states)
    }

    /// [`Follower::open`] with every audit setting. A store resumed from its snapshot keeps the
    /// settings it was built with (the findings so far depend on them).
    pub fn open_with(dir: &Path, settings: AuditSettings) -> Result<Follower, FollowError> {
        Self::with_store_settings(AuditStore::open(dir)?, settings)
    }

    pub fn with_store(store: AuditStore, keep_round_states: bool) -> Result<Follower, FollowError> {
        Self::with_store_settings(store, settings(keep_round_states))
    }

    pub fn with_store_settings(
        store: AuditStore,
        settings: AuditSettings,
    ) -> Result<Follower, FollowError> {
        let replayer = match store.load()? {
            Some(snap) => Replayer::restore(snap)?,
            None => Replayer::new(settings),
        };
        let position = replayer.position();
        let committed = Arc::new(RwLock::new(position));
        Ok(Follower {
            replayer: Arc::new(RwLock::new(replayer)),
            committer: Committer::start(store.clone(), committed.clone()),
            store,
            pending: Pending::default(),
            keep_rounds: true,
            pending_entries: 0,
            last_commit: Instant::now(),
            last_snapshot: Instant::now(),
            snapshot_every: SNAPSHOT_EVERY,
            last_snapshot_copy: Duration::ZERO,
            committed,
            sync_every_commit: false,
        })
    }

    /// Snapshot at most this often (default [`SNAPSHOT_EVERY`]; zero: at every commit).
    pub fn set_snapshot_every(&mut self, every: Duration) {
        self.snapshot_every = every;
    }

    /// Make every commit durable (sled's flush, then the fsyncs of [`AuditStore::flush`]), not
    /// only those with a snapshot (default no). sled 0.34 counts a write as stable once it has
    /// been `sync_file_range`d, and may then overwrite a segment whose pages the last fsynced
    /// state still points to: the longer the time between fsyncs, the more of the store a power
    /// cut can leave pointing at overwritten data. The live audit keeps that time to one commit.
    pub fn set_sync_every_commit(&mut self, yes: bool) {
        self.sync_every_commit = yes;
    }

    /// Whether round summaries and the jackpot book's detail are committed (default yes). A
    /// replay whose store nobody will query (`ledgerctl audit --from-genesis` without `--out`)
    /// needs only the findings; the round summaries and the detail are nearly all of the
    /// store's writes.
    pub fn set_keep_rounds(&mut self, keep: bool) {
        self.keep_rounds = keep;
    }

    /// The replayer, for read-only queries (jackpot accounts, digest).
    pub fn replayer(&self) -> Arc<RwLock<Replayer>> {
        self.replayer.clone()
    }

    pub fn store(&self) -> AuditStore {
        self.store.clone()
    }

    /// The position covered by committed findings.
    pub fn committed(&self) -> Arc<RwLock<Option<u64>>> {
        self.committed.clone()
    }

    /// Ledger index of the last applied entry.
    pub fn position(&self) -> Option<u64> {
        self.replayer
            .read()
            .map(|r| r.position())
            .unwrap_or_default()
    }

    /// Apply the chain's entries after the position up to `head` (at most `max` of them). Returns
    /// how many were applied. Commits when due.
    pub fn step(&mut self, chain: &Store, head: u64, max: usize) -> Result<usize, FollowError> {
        let from = self.position().map_or(0, |p| p + 1);
        if from > head {
            self.commit_if_due(false)?;
            return Ok(0);
        }
        let to = head.min(from.saturating_add(max as u64).saturating_sub(1));
        let mut applied = 0;
        {
            let mut replayer = self.replayer.write().unwrap_or_else(|e| e.into_inner());
            for entry in chain.entries(from, to) {
                let entry = entry?;
                if entry.index < from || entry.index > to {
                    continue;
                }
                let step = replayer.apply(&entry);
                self.pending.add(self.keep_rounds, step);
                applied += 1;
            }
        }
        self.pending_entries += applied;
        self.commit_if_due(false)?;
        Ok(applied)
    }

    /// Commit if enough time passed or enough is pending (or `force`: then also wait until every
    /// commit has landed).
    pub fn commit_if_due(&mut self, force: bool) -> Result<(), FollowError> {
        if let Some(e) = self.committer.failure() {
            return Err(e.into());
        }
        let due = force
            || self.pending_entries >= MAX_PENDING_ENTRIES
            || (self.pending_entries > 0 && self.last_commit.elapsed() >= COMMIT_EVERY);
        if !due {
            return Ok(());
        }
        let last_cost = self.last_snapshot_copy
            + Duration::from_micros(
                self.committer
                    .snapshot_write_us
                    .load(std::sync::atomic::Ordering::Relaxed),
            );
        let due =
            force || snapshot_due(self.last_snapshot.elapsed(), self.snapshot_every, last_cost);
        let copy_started = Instant::now();
        let (snapshot, position) = {
            let r = self.replayer.read().unwrap_or_else(|e| e.into_inner());
            (due.then(|| r.snapshot()), r.position())
        };
        if snapshot.is_some() {
            self.last_snapshot = Instant::now();
            self.last_snapshot_copy = copy_started.elapsed();
        }
        let (done_tx, done_rx) = mpsc::channel();
        let batch = Batch {
            findings: std::mem::take(&mut self.pending.findings),
            rounds: std::mem::take(&mut self.pending.rounds),
            detail: std::mem::take(&mut self.pending.detail),
            reviews: std::mem::take(&mut self.pending.reviews),
            sync: self.sync_every_commit,
            snapshot,
            position,
            done: force.then_some(done_tx),
        };
        self.pending_entries = 0;
        self.last_commit = Instant::now();
        let gone = || FollowError::Source("the audit's commit thread is gone".to_string());
        self.committer
            .tx
            .as_ref()
            .ok_or_else(gone)?
            .send(batch)
            .map_err(|_| gone())?;
        if force {
            done_rx.recv().map_err(|_| gone())?;
        }
        match self.committer.failure() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Apply entries from any source (an export file), in chain order, committing as it goes.
    pub fn apply_all<E: Into<FollowError>>(
        &mut self,
        entries: impl Iterator<Item = Result<ledger_proto::v1::ChainEntry, E>>,
        mut progress: impl FnMut(u64),
    ) -> Result<(), FollowError> {
        for entry in entries {
            let entry = entry.map_err(Into::into)?;
            let step = {
                let mut r = self.replayer.write().unwrap_or_else(|e| e.into_inner());
                r.apply(&entry)
            };
            self.pending.add(self.keep_rounds, step);
            self.pending_entries += 1;
            if self.pending_entries >= MAX_PENDING_ENTRIES {
                self.commit_if_due(false)?;
                progress(entry.index);
            }
        }
        self.commit_if_due(true)
    }

    /// Replay the stopped ledger in `dir` from the current position to `head`, committing as it
    /// goes; `progress` is called with the position now and then. The directory must not be open
    /// elsewhere (sled's lock).
    ///
    /// The work is spread over threads: a reader walks the stored chunks (256 entries each, still
    /// encoded), [`decoders`] threads decode them and convert every entry ([`Prepared`], about
    /// half of the work, and independent from one entry to the next), and this thread puts the
    /// chunks back in chain order and applies them to the replayer, while the commit thread writes
    /// findings and rounds. The order the replayer sees is the chain's, so the findings are the
    /// same, byte for byte, as a replay on one thread. Memory is bounded: at most
    /// `QUEUED + RESULTS + decoders` chunks are in flight, and the reader reopens the store after
    /// every 64 MB of chunks ([`ledger_store::WindowedChunks`]), since sled keeps every page it
    /// has read until it is closed.
    pub fn run_to_dir(
        &mut self,
        dir: &Path,
        head: u64,
        progress: impl FnMut(u64),
    ) -> Result<(), FollowError> {
        let from = self.position().map_or(0, |p| p + 1);
        let (order, chunks) = ledger_store::WindowedChunks::open(dir, from, head)?;
        self.run_chunks(order, chunks, head, progress)
    }

    /// Apply the entries of an open chain `chain` after the position up to `head`, as
    /// [`Follower::run_to_dir`] does (decoded on other threads), committing as it goes: for the
    /// live audit when it is far behind (a store rebuilt from the chain), where
    /// [`Follower::step`] decodes on the audit's one thread.
    pub fn catch_up(
        &mut self,
        chain: &Store,
        head: u64,
        progress: impl FnMut(u64),
    ) -> Result<(), FollowError> {
        let from = self.position().map_or(0, |p| p + 1);
        let (order, chunks) = chain.chunks(from, head);
        self.run_chunks(
            order,
            chunks.map(|c| c.map_err(StoreError::from)),
            head,
            progress,
        )
    }

    /// The replay of [`Follower::run_to_dir`] over `chunks`, checked in order by `order`.
    fn run_chunks(
        &mut self,
        mut order: ledger_store::ChunkOrder,
        chunks: impl Iterator<Item = Result<ledger_store::Chunk, StoreError>> + Send,
        head: u64,
        mut progress: impl FnMut(u64),
    ) -> Result<(), FollowError> {
        /// Chunks read and waiting for a decoder.
        const QUEUED: usize = 4;
        /// Decoded chunks waiting for the replayer.
        const RESULTS: usize = 8;
        let from = self.position().map_or(0, |p| p + 1);
        if from <= head {
            std::thread::scope(|s| -> Result<(), FollowError> {
                let (work_tx, work_rx) =
                    mpsc::sync_channel::<(u64, Result<ledger_store::Chunk, StoreError>)>(QUEUED);
                let work_rx = Arc::new(Mutex::new(work_rx));
                let (done_tx, done_rx) = mpsc::sync_channel::<(u64, Decoded)>(RESULTS);
                let spawn_failed =
                    |e: std::io::Error| FollowError::Source(format!("cannot start a reader: {e}"));
                std::thread::Builder::new()
                    .name("audit-read".into())
                    .spawn_scoped(s, move || {
                        for (n, chunk) in chunks.enumerate() {
                            let failed = chunk.is_err();
                            if work_tx.send((n as u64, chunk)).is_err() || failed {
                                return;
                            }
                        }
                    })
                    .map_err(spawn_failed)?;
                for i in 0..decoders() {
                    let work_rx = work_rx.clone();
                    let done_tx = done_tx.clone();
                    std::thread::Builder::new()
                        .name(format!("audit-decode-{i}"))
                        .spawn_scoped(s, move || {
                            loop {
                                let next = match work_rx.lock() {
                                    Ok(rx) => rx.recv(),
                                    Err(_) => return,
                                };
                                let Ok((n, chunk)) = next else { return };
                                if done_tx.send((n, Decoded::of(chunk, from, head))).is_err() {
                                    return;
                                }
                            }
                        })
                        .map_err(spawn_failed)?;
                }
                drop(done_tx);
                // Chunks back in order: the next one the replayer needs, and those that came early.
                let mut next = 0u64;
                let mut early = std::collections::BTreeMap::<u64, Decoded>::new();
                let mut since_progress = 0usize;
                for (n, decoded) in done_rx {
                    early.insert(n, decoded);
                    while let Some(decoded) = early.remove(&next) {
                        next += 1;
                        let batch = match decoded {
                            Decoded::Entries {
                                first,
                                count,
                                batch,
                            } => {
                                order.check(first)?;
                                order.advance(first, count);
                                batch
                            }
                            Decoded::Unreadable { first, error } => {
                                order.check(first)?;
                                return Err(error.into());
                            }
                            Decoded::ReadFailed(StoreError::Sled(e)) => {
                                return Err(order.read_error(e).into());
                            }
                            Decoded::ReadFailed(e) => return Err(e.into()),
                        };
                        let len = batch.len();
                        {
                            let mut replayer =
                                self.replayer.write().unwrap_or_else(|e| e.into_inner());
                            for entry in batch {
                                let step = replayer.apply_prepared(entry);
                                self.pending.add(self.keep_rounds, step);
                            }
                        }
                        self.pending_entries += len;
                        self.commit_if_due(false)?;
                        since_progress += len;
                        if since_progress >= 10_000 {
                            since_progress = 0;
                            if let Some(p) = self.position() {
                                progress(p);
                            }
                        }
                    }
                }
                Ok(())
            })?;
        }
        if let Some(p) = self.position() {
            progress(p);
        }
        self.commit_if_due(true)
    }
}

/// What applied entries leave to commit.
#[derive(Default)]
struct Pending {
    findings: Vec<Finding>,
    rounds: Vec<RoundSummary>,
    detail: Vec<jackpot::Detail>,
    reviews: Vec<crate::review::Review>,
}

impl Pending {
    fn add(&mut self, keep_rounds: bool, step: Step) {
        self.findings.extend(step.findings);
        self.reviews.extend(step.reviews);
        if keep_rounds {
            self.rounds.extend(step.rounds);
            self.detail.extend(step.detail);
        }
    }
}

/// A chunk as a decoder hands it to the replayer.
enum Decoded {
    /// Its entries within the replay's range, prepared, and how many it holds in all.
    Entries {
        first: u64,
        count: usize,
        batch: Vec<Prepared>,
    },
    /// It does not decode.
    Unreadable {
        first: u64,
        error: ledger_store::StoreError,
    },
    /// It could not be read (sled's error, or the store's when it reopens).
    ReadFailed(StoreError),
}

impl Decoded {
    fn of(chunk: Result<ledger_store::Chunk, StoreError>, from: u64, to: u64) -> Decoded {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => return Decoded::ReadFailed(e),
        };
        match chunk.views() {
            Ok(views) => {
                let mut batch = Vec::with_capacity(views.len());
                batch.extend(
                    views
                        .iter()
                        .filter(|e| e.index >= from && e.index <= to)
                        .map(Prepared::of_view),
                );
                Decoded::Entries {
                    first: chunk.first,
                    count: views.len(),
                    batch,
                }
            }
            Err(error) => Decoded::Unreadable {
                first: chunk.first,
                error,
            },
        }
    }
}

/// How many threads decode entries ahead of a full replay: one per core, at most four (the
/// replayer applies what two cores decode).
pub fn decoders() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot is due every `every`, but never sooner than 20 times what the last one cost;
    /// `every` zero (an offline replay's `--snapshot-every 0`) snapshots at every commit.
    #[test]
    fn a_costly_snapshot_spaces_out_the_next() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert!(!snapshot_due(ms(4_999), s(5), ms(10)));
        assert!(snapshot_due(s(5), s(5), ms(10)));
        // A snapshot that took 1 s: the next after 20 s, not 5.
        assert!(!snapshot_due(s(19), s(5), s(1)));
        assert!(snapshot_due(s(20), s(5), s(1)));
        assert!(snapshot_due(Duration::ZERO, Duration::ZERO, s(1)));
        assert!(!snapshot_due(s(1), s(5), Duration::MAX), "no overflow");
    }
}
