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

    /// Let the thread end once it has done (or, after a failure, dropped) what it was sent.
    fn stop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        self.stop();
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
    /// The settings a replay from genesis starts with ([`Follower::rebuild`]).
    settings: AuditSettings,
    /// When a commit is due ([`COMMIT_EVERY`], [`MAX_PENDING_ENTRIES`]) and how often a long
    /// replay reports progress; tests shorten them.
    cadence: Cadence,
}

/// How often the follower commits and reports progress.
#[derive(Clone, Copy, Debug)]
struct Cadence {
    /// Commit what is pending at least this often.
    commit_every: Duration,
    /// Commit once this many entries are pending, however soon.
    max_pending: usize,
    /// A long replay calls its progress callback after about this many entries.
    progress_every: usize,
}

impl Default for Cadence {
    fn default() -> Cadence {
        Cadence {
            commit_every: COMMIT_EVERY,
            max_pending: MAX_PENDING_ENTRIES,
            progress_every: 10_000,
        }
    }
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
            None => Replayer::new(settings.clone()),
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
            settings,
            cadence: Cadence::default(),
        })
    }

    /// Start again from genesis in a new store, in place, after damage was met while following
    /// ([`FollowError::is_damage`]): the commit thread is stopped (what it still held was for
    /// the damaged store), the store is set aside and replaced under the same handles
    /// ([`AuditStore::replace_with_new`]), the replayer (the same shared one) starts from
    /// genesis with the settings this follower was opened with, and the committed position is
    /// none. The caller then replays the chain again ([`Follower::catch_up`], then
    /// [`Follower::step`]). Nothing of the chain is touched. Returns where the damaged store now
    /// is (`None`: a temporary store).
    pub fn rebuild(&mut self) -> Result<Option<std::path::PathBuf>, FollowError> {
        self.committer.stop();
        let aside = self.store.replace_with_new()?;
        *self.replayer.write().unwrap_or_else(|e| e.into_inner()) =
            Replayer::new(self.settings.clone());
        *self.committed.write().unwrap_or_else(|e| e.into_inner()) = None;
        self.pending = Pending::default();
        self.pending_entries = 0;
        self.last_commit = Instant::now();
        self.last_snapshot = Instant::now();
        self.last_snapshot_copy = Duration::ZERO;
        self.committer = Committer::start(self.store.clone(), self.committed.clone());
        Ok(aside)
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
            || self.pending_entries >= self.cadence.max_pending
            || (self.pending_entries > 0
                && self.last_commit.elapsed() >= self.cadence.commit_every);
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
            if self.pending_entries >= self.cadence.max_pending {
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
                        if since_progress >= self.cadence.progress_every {
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
    use crate::testdata::chain;

    /// (digest, records, rounds, the replayer's state): see [`outcome`].
    type Outcome = (String, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>, Vec<u8>);

    /// What an audit left, to compare two of the same chain: the findings digest, every
    /// record of its store but the round blocks' layout (findings, indexes, reviews, the
    /// jackpot book's detail, the gaming-day report rows), the rounds in time order, and the
    /// replayer's state, all as bytes.
    fn outcome(f: &Follower) -> Outcome {
        let store = f.store();
        let all = audit::Period {
            from_ms: i64::MIN,
            to_ms: i64::MAX,
        };
        let rounds = serde_json::to_vec(&store.rounds_in(all).unwrap()).unwrap();
        let r = f.replayer();
        let r = r.read().unwrap();
        let state = serde_json::to_vec(&r.snapshot()).unwrap();
        (
            format!("{:?}", r.digest()),
            store.records_for_test(),
            rounds,
            state,
        )
    }

    /// The sequential path, entry by entry on one thread (the live audit near the head).
    fn sequential(dir: &Path, chain: &Store, head: u64) -> Follower {
        let mut f = Follower::open(dir, true).unwrap();
        while f.step(chain, head, 97).unwrap() > 0 {}
        f.commit_if_due(true).unwrap();
        assert_eq!(f.position(), Some(head));
        f
    }

    /// `catch_up` (chunks decoded on other threads, put back in order) leaves exactly what the
    /// sequential path leaves, in one call, in windows that end inside chunks (as ledgerd's
    /// audit calls it), and after a stop midway and a reopen; and the live audit's mix of
    /// the two (catch up, then step) too. A skipped, repeated or reordered entry changes the
    /// rounds, the replayer's state or the findings.
    #[test]
    fn catch_up_gives_what_the_sequential_path_gives_and_resumes_after_a_stop() {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, head) = chain(&tmp.path().join("chain"));
        assert!(head > 2_000, "several chunks: {head}");
        let want = outcome(&sequential(&tmp.path().join("seq"), &chain, head));
        assert!(
            want.1.iter().filter(|(k, _)| k[0] == b'F').count() >= 5,
            "the session's mistakes are found"
        );
        assert!(want.1.iter().any(|(k, _)| k[0] == b'G'), "report rows");
        assert!(want.2.len() > 1_000, "rounds");

        // One call.
        let mut f = Follower::open(&tmp.path().join("one"), true).unwrap();
        f.catch_up(&chain, head, |_| {}).unwrap();
        assert_eq!(f.position(), Some(head));
        assert!(
            outcome(&f) == want,
            "one catch_up differs from the sequential path"
        );

        // Windows of 300 entries (chunks hold 256), stopping and reopening midway.
        let dir = tmp.path().join("windows");
        let mid = head / 2 + 11;
        {
            let mut f = Follower::open(&dir, true).unwrap();
            let mut at = 0;
            while at <= mid {
                let to = mid.min(at + 299);
                f.catch_up(&chain, to, |_| {}).unwrap();
                assert_eq!(f.position(), Some(to));
                at = to + 1;
            }
        }
        let mut f = Follower::open(&dir, true).unwrap();
        assert_eq!(f.position(), Some(mid), "resumes where it stopped");
        let mut at = mid + 1;
        while at <= head {
            let to = head.min(at + 299);
            f.catch_up(&chain, to, |_| {}).unwrap();
            at = to + 1;
        }
        assert!(outcome(&f) == want, "windows and a stop differ");
        // Called again at the head: nothing more.
        f.catch_up(&chain, head, |_| {}).unwrap();
        assert!(
            outcome(&f) == want,
            "a second call at the head changed something"
        );

        // Caught up to midway, then entry by entry.
        let mut f = Follower::open(&tmp.path().join("mixed"), true).unwrap();
        f.catch_up(&chain, mid, |_| {}).unwrap();
        while f.step(&chain, head, 5_000).unwrap() > 0 {}
        f.commit_if_due(true).unwrap();
        assert!(outcome(&f) == want, "catch_up then step differs");
    }

    /// Damage met while following (a record the next commit reads no longer decodes) is
    /// reported as damage; `rebuild` sets the store aside, replaces it under the same handles
    /// (a clone taken before, as the query services hold, reads the new one), and a replay of
    /// the chain into it leaves what an undamaged audit leaves.
    #[test]
    fn damage_met_while_following_sets_the_store_aside_and_a_replay_rebuilds_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, head) = chain(&tmp.path().join("chain"));
        let want = outcome(&sequential(&tmp.path().join("seq"), &chain, head));

        let dir = tmp.path().join("audit");
        let mut f = Follower::open(&dir, true).unwrap();
        let held = f.store();
        let replayer = f.replayer();
        let committed = f.committed();
        f.catch_up(&chain, head / 2, |_| {}).unwrap();
        assert!(held.damage_day_rows_for_test() > 0);
        let err = loop {
            match f.step(&chain, head, 50) {
                Ok(0) => match f.commit_if_due(true) {
                    Ok(()) => panic!("the damage was never met"),
                    Err(e) => break e,
                },
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert!(err.is_damage(), "{err}");
        let aside = f.rebuild().unwrap().expect("a store on disk is set aside");
        assert!(aside.exists() && dir.exists(), "{}", aside.display());
        assert!(
            aside
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("audit.damaged-")
        );
        assert_eq!(f.position(), None, "starts again from genesis");
        assert_eq!(*committed.read().unwrap(), None);
        assert_eq!(held.rebuilds(), 1);
        assert_eq!(
            held.finding_count().unwrap(),
            0,
            "the clone reads the new store"
        );
        f.catch_up(&chain, head / 3, |_| {}).unwrap();
        while f.step(&chain, head, 5_000).unwrap() > 0 {}
        f.commit_if_due(true).unwrap();
        assert!(outcome(&f) == want, "the rebuilt audit differs");
        assert!(
            Arc::ptr_eq(&replayer, &f.replayer()),
            "the same shared replayer"
        );
        assert_eq!(*committed.read().unwrap(), Some(head));
        assert_eq!(
            held.records_for_test(),
            want.1,
            "the handle taken before the damage reads the rebuilt store"
        );
        drop((f, held));
        // Reopened: resumes at the head from the rebuilt store's snapshot.
        let f = Follower::open(&dir, true).unwrap();
        assert_eq!(f.position(), Some(head));
    }

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

    /// A follower over the test chain with the given cadence, and the store's flushes so far.
    fn follower(dir: &Path, cadence: Cadence) -> (Follower, u64) {
        let mut f = Follower::open(dir, true).unwrap();
        f.cadence = cadence;
        let flushed = f.store().flushes();
        (f, flushed)
    }

    fn cadence(commit_every: Duration, max_pending: usize) -> Cadence {
        Cadence {
            commit_every,
            max_pending,
            ..Cadence::default()
        }
    }

    /// A commit is due once `max_pending` entries wait, or once something waits and
    /// `commit_every` has passed since the last; never for nothing. `step` applies every entry
    /// up to the head, the last one too.
    #[test]
    fn a_commit_is_due_by_count_or_by_time_with_something_pending() {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, head) = chain(&tmp.path().join("chain"));
        let hour = Duration::from_secs(3_600);
        let (mut f, _) = follower(&tmp.path().join("audit"), cadence(hour, 1_000));
        assert_eq!(f.step(&chain, head, 5).unwrap(), 5);
        assert_eq!(f.pending_entries, 5, "not due: 5 of 1,000, an hour away");
        assert_eq!(f.step(&chain, head, 994).unwrap(), 994);
        assert_eq!(f.pending_entries, 999);
        assert_eq!(f.step(&chain, head, 1).unwrap(), 1);
        assert_eq!(f.pending_entries, 0, "due: 1,000 pending");
        f.cadence.commit_every = Duration::ZERO;
        assert_eq!(f.step(&chain, head, 3).unwrap(), 3);
        assert_eq!(
            f.pending_entries, 0,
            "due: something pending, and the time has come"
        );
        let last = f.last_commit;
        f.commit_if_due(false).unwrap();
        assert_eq!(f.last_commit, last, "nothing pending: no commit");
        // Near the head, one entry at a time, the head itself included.
        f.cadence.commit_every = hour;
        let near = (head - 1_003 - 3) as usize;
        assert_eq!(f.step(&chain, head, near).unwrap(), near);
        let mut stepped = 0;
        while f.step(&chain, head, 1).unwrap() == 1 {
            stepped += 1;
        }
        assert_eq!(stepped, 4);
        assert_eq!(f.position(), Some(head));
    }

    /// What a commit leaves durable: by default a commit without a snapshot is not flushed;
    /// with `set_sync_every_commit` every commit is; with `set_snapshot_every(0)` every commit
    /// carries a snapshot (flushed), which the store then holds. Stopping the commit thread
    /// waits for what it was sent.
    #[test]
    fn a_commit_is_made_durable_with_a_snapshot_or_when_every_commit_syncs() {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, head) = chain(&tmp.path().join("chain"));
        let every_time = cadence(Duration::ZERO, MAX_PENDING_ENTRIES);
        for (name, sync, snapshot, durable) in [
            ("default", false, false, 0),
            ("sync", true, false, 3),
            ("snapshot", false, true, 3),
        ] {
            let (mut f, flushed) = follower(&tmp.path().join(name), every_time);
            f.set_sync_every_commit(sync);
            if snapshot {
                f.set_snapshot_every(Duration::ZERO);
            }
            for _ in 0..3 {
                assert_eq!(f.step(&chain, head, 10).unwrap(), 10);
                assert_eq!(f.pending_entries, 0, "{name}: committed");
            }
            f.committer.stop();
            assert_eq!(*f.committed.read().unwrap(), Some(29), "{name}: landed");
            let store = f.store();
            assert_eq!(store.flushes() - flushed, durable, "{name}");
            let snapshot_at = store.load().unwrap().and_then(|s| s.auditor.position);
            assert_eq!(snapshot_at, snapshot.then_some(29), "{name}");
        }
    }

    /// Dropping the commit thread's handle waits for the batches it was sent.
    #[test]
    fn dropping_the_committer_lands_what_it_was_sent() {
        let store = AuditStore::temporary().unwrap();
        let committed = Arc::new(RwLock::new(None));
        let c = Committer::start(store.clone(), committed.clone());
        let flushed = store.flushes();
        let findings: Vec<Finding> = (0..2_000)
            .map(|seq| Finding {
                seq,
                code: "X".into(),
                ..Finding::default()
            })
            .collect();
        c.tx.as_ref()
            .unwrap()
            .send(Batch {
                findings,
                rounds: vec![],
                detail: vec![],
                reviews: vec![],
                snapshot: None,
                position: Some(7),
                sync: true,
                done: None,
            })
            .unwrap();
        drop(c);
        assert_eq!(*committed.read().unwrap(), Some(7));
        assert_eq!(store.flushes() - flushed, 1);
        assert_eq!(store.finding_count().unwrap(), 2_000);
    }

    /// `apply_all` commits whenever `max_pending` entries wait, and reports its position there.
    #[test]
    fn apply_all_commits_and_reports_progress_every_max_pending_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let (chain, head) = chain(&tmp.path().join("chain"));
        let entries: Vec<_> = chain.entries(0, head).map(|e| e.unwrap()).collect();
        let (mut f, _) = follower(
            &tmp.path().join("audit"),
            cadence(Duration::from_secs(3_600), 100),
        );
        let mut progress = Vec::new();
        f.apply_all(entries.into_iter().map(Ok::<_, FollowError>), |p| {
            progress.push(p)
        })
        .unwrap();
        let want: Vec<u64> = (1..=(head + 1) / 100).map(|k| k * 100 - 1).collect();
        assert_eq!(progress, want);
        assert_eq!(f.position(), Some(head));
    }

    /// A replay over chunks (`run_to_dir` from the chain's directory, `catch_up` from the open
    /// chain), resumed after the genesis: it commits as it goes (a snapshot at every commit
    /// here, so every commit is flushed), reports progress about every `progress_every` entries
    /// and at the end, and ends at the head with the sequential path's digest.
    #[test]
    fn a_replay_over_chunks_commits_and_reports_progress_as_it_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let chain_dir = tmp.path().join("chain");
        let (chain, head) = chain(&chain_dir);
        let want = sequential(&tmp.path().join("seq"), &chain, head)
            .replayer()
            .read()
            .unwrap()
            .digest();
        let often = Cadence {
            commit_every: Duration::ZERO,
            max_pending: MAX_PENDING_ENTRIES,
            progress_every: 500,
        };
        let check = |f: &Follower, flushed: u64, progress: &[u64], how: &str| {
            assert_eq!(f.position(), Some(head), "{how}");
            assert_eq!(f.replayer().read().unwrap().digest(), want, "{how}");
            let chunks = head / 1_000;
            assert!(
                f.store().flushes() - flushed >= chunks,
                "{how}: a commit a chunk, {} flushes for {chunks} chunks",
                f.store().flushes() - flushed
            );
            // After the first chunks that reach 500 entries, then again, and at the head.
            let (last, midway) = progress.split_last().unwrap();
            assert_eq!(*last, head, "{how}");
            assert!(midway.len() as u64 >= head / 1_000, "{how}: {progress:?}");
            assert!(midway[0] >= 500, "{how}: {progress:?}");
            assert!(
                midway.windows(2).all(|w| w[1] - w[0] >= 500),
                "{how}: {progress:?}"
            );
        };
        // From the open chain, after its genesis alone.
        let (mut f, flushed) = follower(&tmp.path().join("catch_up"), often);
        f.set_snapshot_every(Duration::ZERO);
        assert_eq!(f.step(&chain, 0, 1).unwrap(), 1);
        assert_eq!(f.position(), Some(0));
        let mut progress = Vec::new();
        f.catch_up(&chain, head, |p| progress.push(p)).unwrap();
        check(&f, flushed, &progress, "catch_up");
        // From the directory of the closed chain, likewise.
        let (mut f, flushed) = follower(&tmp.path().join("dir"), often);
        f.set_snapshot_every(Duration::ZERO);
        assert_eq!(f.step(&chain, 0, 1).unwrap(), 1);
        drop(chain);
        let mut progress = Vec::new();
        f.run_to_dir(&chain_dir, head, |p| progress.push(p))
            .unwrap();
        check(&f, flushed, &progress, "run_to_dir");
    }

    /// Damage is what a replay from the chain repairs: the derived store's or its snapshot's,
    /// not the chain's nor a source's.
    #[test]
    fn only_the_derived_stores_damage_is_damage() {
        assert!(!FollowError::Source("an export file ends early".into()).is_damage());
        let chain = FollowError::Chain(StoreError::Corrupt("entry 5".into()));
        assert!(!chain.is_damage());
        let store = FollowError::Store(AuditStoreError::Corrupt("a record".into()));
        assert!(store.is_damage());
        let unreadable = FollowError::Store(AuditStoreError::Sled(sled::Error::Io(
            std::io::Error::other("a full disk"),
        )));
        assert!(!unreadable.is_damage());
    }

    /// One decoding thread a core, at most four.
    #[test]
    fn decoders_are_one_a_core_up_to_four() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(decoders(), cores.clamp(1, 4));
    }
}
