//! The audit's derived store (sled, separate from the chain's): findings, adjudicated rounds, and
//! the replayer's snapshot. Everything here can be deleted and rebuilt from the chain.
//!
//! Layout (one tree, keys by prefix, so every commit is one atomic batch):
//!
//! | key | value |
//! |---|---|
//! | `V` | the layout's version ([`LAYOUT`]); a store of another layout is emptied and rebuilt |
//! | `F` seq(u64 BE) | a [`Finding`] (JSON) |
//! | `T` closed_ms(i64 as biased u64 BE) closed_index(u64 BE) of its first round | a block: up to [`BLOCK_ROUNDS`] consecutive [`RoundSummary`]s of one commit (JSON array) |
//! | `R` table 0x00 round | its block's `T` key after the prefix (16 bytes), then its place in the block (u16 BE) |
//! | `X` table 0x00 round 0x00 seq(u64 BE) | empty: a round's findings |
//! | `C` code 0x00 seq(u64 BE) | empty: the findings of a code |
//! | `N` round 0x00 table | empty: the tables that have a round of this id |
//! | `H` pool(id) position(u64 BE) | a line of a pool's history, [`jackpot::PoolEntry`] (JSON) |
//! | `D` machine(id) at_ms(biased) index(u64 BE) | a machine's credited meter increase, [`jackpot::MeterDelta`] (JSON) |
//! | `Y` machine(id) day(biased) | the sum of a machine's increases of one UTC day, [`jackpot::DeltaSum`] (JSON) |
//! | `E` machine(id) at_ms(biased) index(u64 BE) | a machine's significant event, [`jackpot::LoggedEvent`] (JSON) |
//! | `K` machine(id) kind(id) at_ms(biased) index(u64 BE) | empty: a significant event by kind (not the games' starts and ends), for counts without decoding |
//! | `G` gaming day(days from CE, biased u32 BE) casino(id) table(id) game(id) | the day's [`ReportRow`] of that table and game (JSON): what the report counts of the rounds settled that gaming day |
//! | `Q` | the calendar the `G` rows are kept by (JSON: each rule's zone and start) |
//! | `I` id | a finding's seq (u64 BE): findings by id |
//! | `W` (finding id) index(u64 BE) | a review of the finding in entry `index`: its receive time (i64 BE), then the encoded [`v1::FindingReviewed`] |
//! | `S` | the [`ReplayerSnapshot`] (JSON) |
//!
//! An `(id)` in a key is its length (u32 BE) and its bytes, so that no id can run into the next
//! field. `H`, `D`, `Y` and `E` hold the jackpot book's per-event detail, which the replayer's book
//! hands out ([`jackpot::Book::hand_out_detail`]) so that neither it nor its snapshots grow with
//! the ledger; the jackpot queries read it through this store ([`jackpot::DetailSource`]). A
//! period's return is summed from one `Y` total a whole day and the `D` increases of the days
//! at its ends ([`jackpot::detail::sum_by_days`]).
//!
//! A round costs two small writes (its `R` pointer and its `N` name) and a share of its block's.
//! `C` and `N` make the two lookups a request can ask for with one short field, findings of a
//! code and a round by id alone, cost what they find rather than a scan of every finding or round. A round's time is the
//! ledger's receipt time of the entry that closed it, and the chain's receipt times never decrease
//! (`ledgerctl verify` checks it), so `T` order is chain order: blocks always go at the end of the
//! tree, the rounds of a period are in the blocks from the one before the period's start, and the
//! rounds closed after a position are in the last blocks.
//!
//! Findings and rounds are committed often (live findings within a second); snapshots less
//! often. On [`AuditStore::load`] every finding and round after the snapshot is removed, so replay
//! resumes from the snapshot without a duplicate or a gap. The detail records after it are left:
//! each is keyed by what it is (a pool and a position, a machine and a reading, a machine and a
//! day), and the replay from the snapshot writes the same records under the same keys again. So
//! are the `W` reviews (keyed by their finding and entry): a finding's status is its last
//! review's action ([`ledger_core::review::status_of`]), and an `I` key goes with its finding.

use std::path::Path;

use audit::{Calendar, DayRule, Finding, Period, ReportRow, RoundSummary};
use chrono::NaiveDate;
use rules_core::{GameId, Severity};
use serde::{Deserialize, Serialize};

use jackpot::{DeltaSum, Detail, DetailSource, MeterDelta, PoolEntry, QueryError};

use crate::replay::ReplayerSnapshot;
use crate::review::Review;
use ledger_proto::v1::{self, FindingStatus};

/// Why the audit store failed.
#[derive(Debug, thiserror::Error)]
pub enum AuditStoreError {
    #[error("audit store: {0}")]
    Sled(#[from] sled::Error),
    /// Damaged: a record that does not decode, an index that points nowhere, files sled
    /// cannot open.
    #[error("audit store: damaged: {0}")]
    Corrupt(String),
}

/// Rename the audit store `dir` to `<dir>.damaged-<UTC time>` beside it (kept for inspection),
/// durably (the parent directory is fsynced); returns the new path. The store is derived data:
/// the chain rebuilds it.
pub fn set_aside(dir: &Path) -> Result<std::path::PathBuf> {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(format!(
        ".damaged-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ")
    ));
    let aside = dir.with_file_name(name);
    std::fs::rename(dir, &aside).map_err(|e| {
        io(std::io::Error::new(
            e.kind(),
            format!(
                "the damaged store {} cannot be set aside as {}: {e}",
                dir.display(),
                aside.display()
            ),
        ))
    })?;
    if let Some(parent) = aside.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(io)?;
    }
    Ok(aside)
}

/// An I/O error of the store's files, as sled reports its own.
fn io(e: std::io::Error) -> AuditStoreError {
    AuditStoreError::Sled(sled::Error::Io(e))
}

impl AuditStoreError {
    /// Whether the store's files are damaged (sled found corrupt data, panicked on them, does
    /// not recognise its own settings file, or a record does not decode), as opposed to
    /// unreadable for a reason of the machine's (a permission, a full disk, another process's
    /// lock). The store is derived data: a damaged one can be set aside and rebuilt from the
    /// chain.
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            AuditStoreError::Corrupt(_)
                | AuditStoreError::Sled(sled::Error::Corruption { .. })
                | AuditStoreError::Sled(sled::Error::ReportableBug(_))
                | AuditStoreError::Sled(sled::Error::Unsupported(_))
        )
    }
}

type Result<T> = std::result::Result<T, AuditStoreError>;

/// Which findings a query wants. Empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingFilter {
    pub casino_id: Option<String>,
    /// A table or a machine.
    pub subject: Option<String>,
    pub game: Option<GameId>,
    pub code: Option<String>,
    pub min_severity: Option<Severity>,
    pub pool_id: Option<String>,
    pub round_id: Option<String>,
    /// Ledger time window `[from_ms, to_ms)`.
    pub from_ms: Option<i64>,
    pub to_ms: Option<i64>,
    /// Only findings in this review status (from the `W` records, so not in [`Self::matches`]).
    #[serde(skip)]
    pub status: Option<FindingStatus>,
}

impl FindingFilter {
    pub fn matches(&self, f: &Finding) -> bool {
        let eq = |want: &Option<String>, have: &Option<String>| {
            want.as_ref()
                .is_none_or(|w| have.as_deref() == Some(w.as_str()))
        };
        eq(&self.casino_id, &f.casino_id)
            && self.subject.as_ref().is_none_or(|s| {
                f.table_id.as_deref() == Some(s.as_str())
                    || f.machine_id.as_deref() == Some(s.as_str())
            })
            && self.game.is_none_or(|g| f.game == Some(g))
            && self.code.as_ref().is_none_or(|c| &f.code == c)
            && self.min_severity.is_none_or(|s| f.severity >= s)
            && eq(&self.pool_id, &f.pool_id)
            && eq(&self.round_id, &f.round_id)
            && self.from_ms.is_none_or(|t| f.at_ms >= t)
            && self.to_ms.is_none_or(|t| f.at_ms < t)
    }
}

/// The store.
#[derive(Clone)]
pub struct AuditStore {
    /// The open files, shared by every clone: [`AuditStore::replace_with_new`] swaps them for a
    /// new store's under the same handles (the query services keep theirs).
    files: std::sync::Arc<std::sync::RwLock<Files>>,
    /// The calendar the `G` gaming-day rows are kept by (`Q`), or `None` when they are not
    /// kept (a store written before them: [`AuditStore::use_calendar`] builds them). Commits
    /// hold it read, a rebuild written.
    days: std::sync::Arc<std::sync::RwLock<Option<Calendar>>>,
    /// Times this store was found damaged while open, set aside and replaced by a new one.
    rebuilds: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Times [`AuditStore::flush`] made the store durable.
    flushes: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// An open store's sled database and files.
struct Files {
    db: sled::Db,
    tree: sled::Tree,
    /// sled's log file and the store's directory, fsynced by [`AuditStore::flush`] (`None`: a
    /// temporary store).
    log: Option<(std::fs::File, std::path::PathBuf)>,
}

fn round_key(table: &str, round: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(table.len() + round.len() + 1);
    k.extend_from_slice(table.as_bytes());
    k.push(0);
    k.extend_from_slice(round.as_bytes());
    k
}

/// A `C` key: a finding's code, then its seq.
fn code_key(code: &str, seq: u64) -> Vec<u8> {
    let mut k = prefixed(b'C', &[code.as_bytes()]);
    k.push(0);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// An `N` key: a round id, then its table.
fn name_key(round: &str, table: &str) -> Vec<u8> {
    let mut k = prefixed(b'N', &[round.as_bytes()]);
    k.push(0);
    k.extend_from_slice(table.as_bytes());
    k
}

fn biased(ms: i64) -> [u8; 8] {
    ((ms as u64) ^ (1 << 63)).to_be_bytes()
}

/// The version of the layout above. Raised also when the rules' results change, so that a
/// store derived under the old rules is rebuilt from the chain rather than kept: 6 = jackpot
/// transfers booked as carried out and faulty-meter play after the reading only (issue 38).
/// 7 = findings by id (`I`) and their reviews (`W`, issue 41). 8 = the significant events by
/// kind (`K`) and the gaming-day report rows (`G`, `Q`).
pub const LAYOUT: &[u8] = b"8";

/// Most rounds in one `T` block (a lookup by id decodes its block: about 40 KB of JSON).
pub const BLOCK_ROUNDS: usize = 64;

/// An `R` pointer: the block's key after the prefix, and the place in the block.
fn pointer(at: &[u8; 16], place: usize) -> [u8; 18] {
    let mut p = [0; 18];
    p[..16].copy_from_slice(at);
    p[16..].copy_from_slice(&(place as u16).to_be_bytes());
    p
}

/// A round's place in time order: its closing time, then its closing entry.
fn time_key(r: &RoundSummary) -> [u8; 16] {
    let mut k = [0; 16];
    k[..8].copy_from_slice(&biased(r.closed_ms));
    k[8..].copy_from_slice(&r.closed_index.to_be_bytes());
    k
}

/// A prefix and an id, length first.
fn id_key(p: u8, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(id.len() + 13);
    k.push(p);
    k.extend_from_slice(&u32::try_from(id.len()).unwrap_or(u32::MAX).to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

fn with(mut k: Vec<u8>, rest: &[u8]) -> Vec<u8> {
    k.extend_from_slice(rest);
    k
}

fn prefixed(p: u8, rest: &[&[u8]]) -> Vec<u8> {
    let mut k = vec![p];
    for r in rest {
        k.extend_from_slice(r);
    }
    k
}

fn decode<T: for<'de> Deserialize<'de>>(v: &[u8]) -> Result<T> {
    serde_json::from_slice(v)
        .map_err(|e| AuditStoreError::Corrupt(format!("a stored record does not decode: {e}")))
}

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// A page of [`AuditStore::findings_within`].
#[derive(Debug, Default)]
pub struct FindingsPage {
    pub findings: Vec<Finding>,
    /// Each finding's review status, in the same order.
    pub statuses: Vec<FindingStatus>,
    /// The seq of the last finding read, when the read budget stopped the read there (before
    /// the page was full and before the end): resume after it. None: nothing more to read, or
    /// the page is full.
    pub read_up_to: Option<u64>,
}

impl AuditStore {
    /// Open (or create) the store in `dir`.
    pub fn open(dir: &Path) -> Result<AuditStore> {
        // sled lets go of its file lock when its background flusher notices the last handle is
        // gone, a moment after the drop: a store closed and reopened in one process (a resumed
        // replay, a test) retries briefly instead of failing.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        let db = loop {
            // No background flush: sled's own flush writes without an fsync, and a power cut then
            // left a snapshot pointing at log data the disk never kept (the power-loss test,
            // tests/powercut.rs). What is written is made durable by `flush`, as the chain's
            // store does.
            let cfg = sled::Config::new()
                .path(dir)
                .cache_capacity(64 << 20)
                .flush_every_ms(None);
            // sled 0.34 can panic on some corrupt files instead of returning an error.
            let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cfg.open()))
                .map_err(|_| {
                    AuditStoreError::Corrupt(format!(
                        "sled panicked opening {} (corrupt files)",
                        dir.display()
                    ))
                })?;
            match opened {
                Err(e)
                    if e.to_string().contains("could not acquire lock")
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                r => break r?,
            }
        };
        let tree = db.open_tree("audit")?;
        // The entries of the files sled just created (and of the store's directory itself) must
        // survive a power cut too, as the chain's store makes sure of its own.
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
        for d in [Some(dir), parent].into_iter().flatten() {
            std::fs::File::open(d)
                .and_then(|d| d.sync_all())
                .map_err(io)?;
        }
        let log = std::fs::File::open(dir.join("db")).map_err(io)?;
        let store = AuditStore {
            files: std::sync::Arc::new(std::sync::RwLock::new(Files {
                db,
                tree,
                log: Some((log, dir.to_path_buf())),
            })),
            days: Default::default(),
            rebuilds: Default::default(),
            flushes: Default::default(),
        };
        store.check_layout()?;
        store.open_days()?;
        Ok(store)
    }

    /// The sled tree of the store's records (the current files': see
    /// [`AuditStore::replace_with_new`]).
    fn tree(&self) -> sled::Tree {
        self.files
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .tree
            .clone()
    }

    /// The store's directory (`None`: a temporary store).
    pub fn dir(&self) -> Option<std::path::PathBuf> {
        let files = self.files.read().unwrap_or_else(|e| e.into_inner());
        files.log.as_ref().map(|(_, dir)| dir.clone())
    }

    /// Set this (damaged) store aside ([`set_aside`]) and put a new, empty one in its place,
    /// under the same handles: every clone (the query services') reads the new one from now
    /// on. The gaming-day rows are kept by the calendar the old one used. The caller must have
    /// stopped committing to it (the follower's [`crate::live::Follower::rebuild`] does this,
    /// then replays the chain into the new store). Returns where the old one now is (`None`: a
    /// temporary store, replaced by another).
    pub fn replace_with_new(&self) -> Result<Option<std::path::PathBuf>> {
        let calendar = self.days_calendar();
        let (new, aside) = match self.dir() {
            Some(dir) => {
                let aside = set_aside(&dir)?;
                (AuditStore::open(&dir)?, Some(aside))
            }
            None => (AuditStore::temporary()?, None),
        };
        let AuditStore { files, days, .. } = new;
        let files = std::sync::Arc::try_unwrap(files)
            .map_err(|_| AuditStoreError::Corrupt("the new store is shared".into()))?
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        let old = std::mem::replace(
            &mut *self.files.write().unwrap_or_else(|e| e.into_inner()),
            files,
        );
        *self.days.write().unwrap_or_else(|e| e.into_inner()) =
            days.read().unwrap_or_else(|e| e.into_inner()).clone();
        // The old files close once the last read still using them ends.
        drop(old);
        if let Some(c) = calendar {
            self.use_calendar(&c)?;
        }
        self.rebuilds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(aside)
    }

    /// Times this store was found damaged while in use and replaced
    /// ([`AuditStore::replace_with_new`]).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Damage a stored record for a test: every gaming-day row (`G`) no longer decodes, so the
    /// next commit that counts a round in one of them fails as a damaged store's read does.
    #[cfg(test)]
    pub(crate) fn damage_day_rows_for_test(&self) -> usize {
        let tree = self.tree();
        let keys: Vec<_> = tree.scan_prefix(b"G").filter_map(|kv| kv.ok()).collect();
        for (k, _) in &keys {
            tree.insert(k, &b"\xff not a row"[..]).unwrap();
        }
        keys.len()
    }

    /// Every record but the round blocks (`T`), their pointers (`R`) and the snapshot (`S`),
    /// whose layout depends on when commits happened: what two replays of one chain must hold
    /// byte for byte.
    #[cfg(test)]
    pub(crate) fn records_for_test(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.tree()
            .iter()
            .filter_map(|kv| kv.ok())
            .filter(|(k, _)| !matches!(k.first(), Some(b'T' | b'R' | b'S')))
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect()
    }

    /// Empty a store written with another layout (derived data: the follower then replays from
    /// genesis) and mark the current one.
    fn check_layout(&self) -> Result<()> {
        if self.tree().get(b"V")?.as_deref() == Some(LAYOUT) {
            return Ok(());
        }
        if !self.tree().is_empty() {
            tracing::warn!(
                "the audit store was written with another layout: emptied, to be rebuilt from the chain"
            );
            self.tree().clear()?;
        }
        self.tree().insert(b"V", LAYOUT)?;
        self.flush()
    }

    /// A throwaway store (offline replays that only want the digest).
    pub fn temporary() -> Result<AuditStore> {
        let db = sled::Config::new().temporary(true).open()?;
        let tree = db.open_tree("audit")?;
        let store = AuditStore {
            files: std::sync::Arc::new(std::sync::RwLock::new(Files {
                db,
                tree,
                log: None,
            })),
            days: Default::default(),
            rebuilds: Default::default(),
            flushes: Default::default(),
        };
        store.check_layout()?;
        store.open_days()?;
        Ok(store)
    }

    /// The last snapshot, after removing every finding and round recorded after it.
    pub fn load(&self) -> Result<Option<ReplayerSnapshot>> {
        let snap: Option<ReplayerSnapshot> = match self.tree().get(b"S")? {
            Some(v) => Some(decode(&v)?),
            None => None,
        };
        let (next_seq, position) = match &snap {
            Some(s) => (s.auditor.digest.count, s.auditor.position),
            None => (0, None),
        };
        let mut batch = sled::Batch::default();
        for kv in self
            .tree()
            .range(prefixed(b'F', &[&next_seq.to_be_bytes()])..prefixed(b'G', &[]))
        {
            let (k, v) = kv?;
            let f: Finding = decode(&v)?;
            if let (Some(t), Some(r)) = (&f.table_id, &f.round_id) {
                let mut x = prefixed(b'X', &[&round_key(t, r)]);
                x.push(0);
                x.extend_from_slice(&f.seq.to_be_bytes());
                batch.remove(x);
            }
            batch.remove(code_key(&f.code, f.seq));
            batch.remove(prefixed(b'I', &[f.id.as_bytes()]));
            batch.remove(k);
        }
        // Rounds closed after the position: in the last blocks (chain order, see the layout).
        // The gaming-day rows stop counting those that counted (the ones their pointer names).
        let days = self.days.read().unwrap_or_else(|e| e.into_inner());
        let mut uncount: DayDeltas = Default::default();
        for kv in self.tree().scan_prefix(b"T").rev() {
            let (k, v) = kv?;
            let rounds: Vec<RoundSummary> = decode(&v)?;
            let after = |r: &RoundSummary| position.is_none_or(|p| r.closed_index > p);
            if !rounds.iter().any(after) {
                break;
            }
            let at = k.get(1..17).and_then(|b| <[u8; 16]>::try_from(b).ok());
            if let (Some(calendar), Some(at)) = (days.as_ref(), at) {
                for (place, r) in rounds.iter().enumerate().filter(|(_, r)| after(r)) {
                    let rk = round_key(&r.table_id, &r.round_id);
                    if self.tree().get(prefixed(b'R', &[&rk]))?.as_deref()
                        == Some(&pointer(&at, place)[..])
                    {
                        day_delta(&mut uncount, calendar, r, -1);
                    }
                }
            }
            let (gone, kept): (Vec<_>, Vec<_>) = rounds.into_iter().partition(after);
            for r in &gone {
                batch.remove(prefixed(b'R', &[&round_key(&r.table_id, &r.round_id)]));
                batch.remove(name_key(&r.round_id, &r.table_id));
            }
            if kept.is_empty() {
                batch.remove(k);
            } else {
                // Kept rounds keep their places (the first round, hence the key, is kept).
                batch.insert(k, encode(&kept));
                break;
            }
        }
        self.apply_day_deltas(uncount, &mut batch)?;
        self.tree().apply_batch(batch)?;
        drop(days);
        Ok(snap)
    }

    /// Record findings, rounds and the jackpot book's detail, and optionally a snapshot that
    /// covers them, atomically.
    pub fn commit(
        &self,
        findings: &[Finding],
        rounds: &[RoundSummary],
        detail: &[Detail],
        snapshot: Option<&ReplayerSnapshot>,
    ) -> Result<()> {
        self.commit_with(findings, rounds, detail, &[], snapshot)
    }

    /// [`AuditStore::commit`], with the findings' reviews.
    pub fn commit_with(
        &self,
        findings: &[Finding],
        rounds: &[RoundSummary],
        detail: &[Detail],
        reviews: &[Review],
        snapshot: Option<&ReplayerSnapshot>,
    ) -> Result<()> {
        let mut batch = sled::Batch::default();
        for r in reviews {
            batch.insert(
                with(id_key(b'W', &r.record.finding_id), &r.index.to_be_bytes()),
                r.encode_value(),
            );
        }
        for d in detail {
            match d {
                Detail::PoolLine {
                    pool_id,
                    position,
                    entry,
                } => batch.insert(
                    with(id_key(b'H', pool_id), &position.to_be_bytes()),
                    encode(entry),
                ),
                Detail::Delta { machine_id, delta } => {
                    let mut k = with(id_key(b'D', machine_id), &biased(delta.at_ms));
                    k.extend_from_slice(&delta.index.to_be_bytes());
                    batch.insert(k, encode(delta));
                }
                Detail::DayTotal {
                    machine_id,
                    day,
                    sum,
                } => batch.insert(with(id_key(b'Y', machine_id), &biased(*day)), encode(sum)),
                Detail::Event { machine_id, event } => {
                    let mut k = with(id_key(b'E', machine_id), &biased(event.at_ms));
                    k.extend_from_slice(&event.index.to_be_bytes());
                    batch.insert(k, encode(event));
                    if let Some(mut k) = kind_key(machine_id, event.event.event.name()) {
                        k.extend_from_slice(&biased(event.at_ms));
                        k.extend_from_slice(&event.index.to_be_bytes());
                        batch.insert(k, &[][..]);
                    }
                }
            }
        }
        for f in findings {
            batch.insert(prefixed(b'F', &[&f.seq.to_be_bytes()]), encode(f));
            if let (Some(t), Some(r)) = (&f.table_id, &f.round_id) {
                let mut x = prefixed(b'X', &[&round_key(t, r)]);
                x.push(0);
                x.extend_from_slice(&f.seq.to_be_bytes());
                batch.insert(x, &[][..]);
            }
            batch.insert(code_key(&f.code, f.seq), &[][..]);
            batch.insert(prefixed(b'I', &[f.id.as_bytes()]), &f.seq.to_be_bytes()[..]);
        }
        let days = self.days.read().unwrap_or_else(|e| e.into_inner());
        if let Some(calendar) = days.as_ref() {
            self.count_days(calendar, rounds, &mut batch)?;
        }
        for block in rounds.chunks(BLOCK_ROUNDS) {
            let at = time_key(&block[0]);
            batch.insert(prefixed(b'T', &[&at]), encode(&block));
            for (place, r) in block.iter().enumerate() {
                let rk = round_key(&r.table_id, &r.round_id);
                batch.insert(prefixed(b'R', &[&rk]), &pointer(&at, place)[..]);
                batch.insert(name_key(&r.round_id, &r.table_id), &[][..]);
            }
        }
        if let Some(s) = snapshot {
            batch.insert(&b"S"[..], encode(s));
        }
        self.tree().apply_batch(batch)?;
        Ok(())
    }

    /// Flush to disk and make it durable (derived data: not on every commit): sled's flush,
    /// then an fsync of its blob files and of its log.
    pub fn flush(&self) -> Result<()> {
        let files = self.files.read().unwrap_or_else(|e| e.into_inner());
        files.db.flush()?;
        if let Some((log, dir)) = &files.log {
            let blobs = dir.join("blobs");
            if let Ok(rd) = std::fs::read_dir(&blobs) {
                for f in rd.flatten() {
                    if let Ok(h) = std::fs::File::open(f.path()) {
                        h.sync_all().map_err(io)?;
                    }
                }
                std::fs::File::open(&blobs)
                    .and_then(|d| d.sync_all())
                    .map_err(io)?;
            }
            log.sync_all().map_err(io)?;
        }
        self.flushes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Times this handle's store (or a clone's) was made durable by [`AuditStore::flush`] since it
    /// was opened: what the follower's commit cadence leaves durable.
    pub fn flushes(&self) -> u64 {
        self.flushes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Findings matching `filter`, in sequence order, starting after `after_seq`, at most
    /// `limit`. With a code, only that code's findings are read (its `C` index).
    pub fn findings(
        &self,
        filter: &FindingFilter,
        after_seq: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Finding>> {
        Ok(self
            .findings_within(filter, after_seq, limit, usize::MAX)?
            .findings)
    }

    /// [`AuditStore::findings`], reading at most `budget` stored findings: a filter that few
    /// findings match would otherwise read every finding for one short page. When the budget
    /// stops the read before `limit` matches and before the end, the page says where it stopped
    /// ([`FindingsPage::read_up_to`]) and the caller resumes after it.
    pub fn findings_within(
        &self,
        filter: &FindingFilter,
        after_seq: Option<u64>,
        limit: usize,
        budget: usize,
    ) -> Result<FindingsPage> {
        let start = after_seq.map_or(0, |s| s.saturating_add(1));
        let mut page = FindingsPage::default();
        let mut read = 0usize;
        // Takes one stored finding; true when the read must stop here.
        let mut take = |seq: &[u8], v: &[u8]| -> Result<bool> {
            let f: Finding = decode(v)?;
            if filter.matches(&f) {
                let status = self.status(&f.id)?;
                if filter.status.is_none_or(|s| s == status) {
                    page.findings.push(f);
                    page.statuses.push(status);
                }
            }
            read += 1;
            if page.findings.len() >= limit {
                return Ok(true);
            }
            if read >= budget {
                page.read_up_to = seq.try_into().ok().map(u64::from_be_bytes);
                return Ok(true);
            }
            Ok(false)
        };
        match &filter.code {
            Some(code) => {
                let mut end = prefixed(b'C', &[code.as_bytes()]);
                end.push(1);
                for kv in self.tree().range(code_key(code, start)..end) {
                    let (k, _) = kv?;
                    let seq = k.get(k.len().saturating_sub(8)..).unwrap_or(&[]);
                    if let Some(v) = self.tree().get(prefixed(b'F', &[seq]))?
                        && take(seq, &v)?
                    {
                        break;
                    }
                }
            }
            None => {
                for kv in self
                    .tree()
                    .range(prefixed(b'F', &[&start.to_be_bytes()])..prefixed(b'G', &[]))
                {
                    let (k, v) = kv?;
                    if take(k.get(1..).unwrap_or(&[]), &v)? {
                        break;
                    }
                }
            }
        }
        Ok(page)
    }

    /// The finding with this id.
    pub fn finding_by_id(&self, id: &str) -> Result<Option<Finding>> {
        let Some(seq) = self.tree().get(prefixed(b'I', &[id.as_bytes()]))? else {
            return Ok(None);
        };
        match self.tree().get(prefixed(b'F', &[&seq]))? {
            Some(v) => Ok(Some(decode(&v)?)),
            None => Err(AuditStoreError::Corrupt(format!(
                "finding {id} is indexed but not stored"
            ))),
        }
    }

    /// A finding's reviews, in chain order.
    pub fn reviews(&self, finding_id: &str) -> Result<Vec<Review>> {
        self.tree()
            .scan_prefix(id_key(b'W', finding_id))
            .map(|kv| {
                let (k, v) = kv?;
                Review::decode_stored(&k, &v)
            })
            .collect()
    }

    /// A finding's review status: its last review's action, or open.
    pub fn status(&self, finding_id: &str) -> Result<FindingStatus> {
        match self
            .tree()
            .scan_prefix(id_key(b'W', finding_id))
            .next_back()
        {
            Some(kv) => {
                let (k, v) = kv?;
                let r = Review::decode_stored(&k, &v)?;
                Ok(ledger_core::review::status_of(Some(
                    v1::FindingAction::try_from(r.record.action).unwrap_or_default(),
                )))
            }
            None => Ok(FindingStatus::Open),
        }
    }

    /// One round.
    pub fn round(&self, table: &str, round: &str) -> Result<Option<RoundSummary>> {
        let rk = round_key(table, round);
        match self.tree().get(prefixed(b'R', &[&rk]))? {
            Some(ptr) => self.pointed(&ptr, &rk).map(Some),
            None => Ok(None),
        }
    }

    /// The summary an `R` pointer points to.
    fn pointed(&self, ptr: &[u8], rk: &[u8]) -> Result<RoundSummary> {
        let missing = || {
            AuditStoreError::Corrupt(format!(
                "round {} is indexed but not stored",
                String::from_utf8_lossy(rk).replace('\0', "/")
            ))
        };
        let (at, place) = (ptr.get(..16).ok_or_else(missing)?, ptr.get(16..18));
        let place = place.map_or(0, |b| u16::from_be_bytes([b[0], b[1]]) as usize);
        let block = self
            .tree()
            .get(prefixed(b'T', &[at]))?
            .ok_or_else(missing)?;
        let mut rounds: Vec<RoundSummary> = decode(&block)?;
        if place >= rounds.len()
            || round_key(&rounds[place].table_id, &rounds[place].round_id) != rk
        {
            return Err(missing());
        }
        Ok(rounds.swap_remove(place))
    }

    /// Every table's round with this id (through its `N` index: only this id's keys are read).
    pub fn rounds_named(&self, round: &str) -> Result<Vec<RoundSummary>> {
        let mut out = Vec::new();
        let prefix = name_key(round, "");
        for kv in self.tree().scan_prefix(&prefix) {
            let (k, _) = kv?;
            let table = String::from_utf8_lossy(k.get(prefix.len()..).unwrap_or(&[])).into_owned();
            if let Some(r) = self.round(&table, round)? {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// A round's findings, in sequence order.
    pub fn round_findings(&self, table: &str, round: &str) -> Result<Vec<Finding>> {
        let mut p = prefixed(b'X', &[&round_key(table, round)]);
        p.push(0);
        let mut out = Vec::new();
        for kv in self.tree().scan_prefix(&p) {
            let (k, _) = kv?;
            let seq = k
                .get(k.len() - 8..)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_be_bytes)
                .unwrap_or(0);
            if let Some(v) = self.tree().get(prefixed(b'F', &[&seq.to_be_bytes()]))? {
                out.push(decode(&v)?);
            }
        }
        Ok(out)
    }

    /// Rounds closed within `period`, in time order.
    pub fn rounds_in(&self, period: Period) -> Result<Vec<RoundSummary>> {
        let mut out = Vec::new();
        self.for_each_round_in(period, |r| out.push(r))?;
        Ok(out)
    }

    /// Hand every round closed within `period` to `f`, in time order, one block decoded at a
    /// time: memory does not grow with the period's rounds.
    pub fn for_each_round_in(&self, period: Period, mut f: impl FnMut(RoundSummary)) -> Result<()> {
        let lo = prefixed(b'T', &[&biased(period.from_ms)]);
        let hi = prefixed(b'T', &[&biased(period.to_ms)]);
        // The block before the period's start may end inside it.
        let start = match self
            .tree()
            .range(prefixed(b'T', &[])..lo.clone())
            .next_back()
        {
            Some(kv) => kv?.0.to_vec(),
            None => lo,
        };
        for kv in self.tree().range(start..hi) {
            let (k, v) = kv?;
            let rounds: Vec<RoundSummary> = decode(&v)?;
            let at = k.get(1..17).and_then(|b| <[u8; 16]>::try_from(b).ok());
            for (place, r) in rounds.into_iter().enumerate() {
                if !period.contains(r.closed_ms) {
                    continue;
                }
                // A round is where its pointer says (one committed again is in a later block).
                let rk = round_key(&r.table_id, &r.round_id);
                let ptr = self.tree().get(prefixed(b'R', &[&rk]))?;
                if at.is_some_and(|at| ptr.as_deref() == Some(&pointer(&at, place)[..])) {
                    f(r);
                }
            }
        }
        Ok(())
    }

    /// Number of findings stored.
    pub fn finding_count(&self) -> Result<u64> {
        match self.tree().scan_prefix(b"F").next_back() {
            Some(kv) => {
                let (k, _) = kv?;
                Ok(k.get(1..9)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map_or(0, |b| u64::from_be_bytes(b) + 1))
            }
            None => Ok(0),
        }
    }
}

/// The gaming-day rows (`G`): per gaming day, casino, table and game, what
/// [`audit::ReportBuilder`] counts of the rounds settled that day, kept by the calendar named
/// under `Q` and written in the batch of the rounds they count, so that a report of days reads
/// at most one row per table and day instead of every round.
impl AuditStore {
    /// Read which calendar the gaming-day rows are kept by. A store without rounds starts them
    /// by the default calendar; one with rounds but no `Q` (written before them) keeps none
    /// until [`AuditStore::use_calendar`].
    fn open_days(&self) -> Result<()> {
        let calendar = match self.tree().get(b"Q")? {
            Some(v) => calendar_of(&v),
            None if self.tree().scan_prefix(b"T").next().is_none() => {
                let c = Calendar::default();
                self.tree().insert(b"Q", calendar_bytes(&c))?;
                Some(c)
            }
            None => None,
        };
        *self.days.write().unwrap_or_else(|e| e.into_inner()) = calendar;
        Ok(())
    }

    /// The calendar the gaming-day rows are kept by, if any.
    pub fn days_calendar(&self) -> Option<Calendar> {
        self.days.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Keep the gaming-day rows by `calendar` (ledgerd's `[reports]`): when they were kept by
    /// another one (the configuration changed) or not at all, rebuild them from the stored
    /// rounds, in one batch. Returns whether they were rebuilt. Call it before commits start
    /// (a rebuild reads every round).
    pub fn use_calendar(&self, calendar: &Calendar) -> Result<bool> {
        let mut days = self.days.write().unwrap_or_else(|e| e.into_inner());
        if days.as_ref() == Some(calendar) {
            return Ok(false);
        }
        let mut batch = sled::Batch::default();
        for kv in self.tree().scan_prefix(b"G") {
            batch.remove(kv?.0);
        }
        let mut rows: DayDeltas = Default::default();
        let all = Period {
            from_ms: i64::MIN,
            to_ms: i64::MAX,
        };
        self.for_each_round_in(all, |r| day_delta(&mut rows, calendar, &r, 1))?;
        for (k, [row, _]) in rows {
            batch.insert(k, encode(&row));
        }
        batch.insert(&b"Q"[..], calendar_bytes(calendar));
        self.tree().apply_batch(batch)?;
        *days = Some(calendar.clone());
        Ok(true)
    }

    /// Hand `f` every gaming-day row of the days `first..=last` (day order), when the rows are
    /// kept by `calendar`; `Ok(false)` (and nothing handed) when they are not.
    pub fn for_each_day_row(
        &self,
        calendar: &Calendar,
        first: NaiveDate,
        last: NaiveDate,
        mut f: impl FnMut(NaiveDate, ReportRow),
    ) -> Result<bool> {
        let days = self.days.read().unwrap_or_else(|e| e.into_inner());
        if days.as_ref() != Some(calendar) {
            return Ok(false);
        }
        for kv in self
            .tree()
            .range(prefixed(b'G', &[&day_bytes(first)])..prefixed(b'H', &[]))
        {
            let (k, v) = kv?;
            let day = k
                .get(1..5)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .and_then(day_of_bytes)
                .ok_or_else(|| AuditStoreError::Corrupt("a gaming-day key".into()))?;
            if day > last {
                break;
            }
            f(day, decode(&v)?);
        }
        Ok(true)
    }

    /// Add the rounds of a commit to their gaming days' rows in `batch`; a round committed
    /// again first takes its counted copy (the one its pointer names) away.
    fn count_days(
        &self,
        calendar: &Calendar,
        rounds: &[RoundSummary],
        batch: &mut sled::Batch,
    ) -> Result<()> {
        let mut deltas: DayDeltas = Default::default();
        let mut this_commit: std::collections::HashMap<Vec<u8>, &RoundSummary> = Default::default();
        for r in rounds {
            let rk = round_key(&r.table_id, &r.round_id);
            let before = match this_commit.get(&rk) {
                Some(old) => Some((*old).clone()),
                None => match self.tree().get(prefixed(b'R', &[&rk]))? {
                    Some(ptr) => Some(self.pointed(&ptr, &rk)?),
                    None => None,
                },
            };
            if let Some(old) = before {
                day_delta(&mut deltas, calendar, &old, -1);
            }
            day_delta(&mut deltas, calendar, r, 1);
            this_commit.insert(rk, r);
        }
        self.apply_day_deltas(deltas, batch)
    }

    /// Put the rows plus `deltas` into `batch` (a row that counts no round any more goes).
    fn apply_day_deltas(&self, deltas: DayDeltas, batch: &mut sled::Batch) -> Result<()> {
        for (k, d) in deltas {
            let mut row: ReportRow = match self.tree().get(&k)? {
                Some(v) => decode(&v)?,
                None => ReportRow {
                    casino_id: d[0].casino_id.clone(),
                    table_id: d[0].table_id.clone(),
                    game: d[0].game.clone(),
                    ..ReportRow::default()
                },
            };
            row.add_counts(&d[0], 1);
            row.add_counts(&d[1], -1);
            if row.rounds == 0 {
                batch.remove(k);
            } else {
                batch.insert(k, encode(&row));
            }
        }
        Ok(())
    }
}

/// A `K` key's machine and kind: `None` for the games' starts and ends (counted by no report,
/// and as many as the games).
fn kind_key(machine_id: &str, kind: &str) -> Option<Vec<u8>> {
    (!kind.starts_with("game_")).then(|| with(id_key(b'K', machine_id), &id_key(0, kind)[1..]))
}

impl AuditStore {
    /// How many of `machine_id`'s significant events of each kind (games' starts and ends
    /// aside) the ledger received in `[from_ms, to_ms)`, from the `K` keys alone (nothing is
    /// decoded); kinds without any are left out.
    pub fn event_counts(
        &self,
        machine_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<std::collections::BTreeMap<String, u64>> {
        let mut out = std::collections::BTreeMap::new();
        if from_ms >= to_ms {
            return Ok(out);
        }
        for kind in jackpot::EVENT_KINDS {
            let Some(base) = kind_key(machine_id, kind) else {
                continue;
            };
            let mut n = 0u64;
            for kv in self
                .tree()
                .range(with(base.clone(), &biased(from_ms))..with(base, &biased(to_ms)))
            {
                kv?;
                n += 1;
            }
            if n > 0 {
                out.insert(kind.to_string(), n);
            }
        }
        Ok(out)
    }
}

/// Per `G` key, the counts to add to its row and those to take away.
type DayDeltas = std::collections::BTreeMap<Vec<u8>, [ReportRow; 2]>;

/// Count `r` (`sign` 1) or take it away (-1) in the delta of its gaming day's row.
fn day_delta(deltas: &mut DayDeltas, calendar: &Calendar, r: &RoundSummary, sign: i8) {
    let row = ReportRow::of_round(r);
    let day = calendar.rule(r.casino_id.as_deref()).day_of(r.closed_ms);
    let mut k = prefixed(b'G', &[&day_bytes(day)]);
    for id in [&row.casino_id, &row.table_id, &row.game] {
        k.extend_from_slice(&id_key(0, id)[1..]);
    }
    let d = deltas.entry(k).or_insert_with(|| {
        let named = ReportRow {
            casino_id: row.casino_id.clone(),
            table_id: row.table_id.clone(),
            game: row.game.clone(),
            ..ReportRow::default()
        };
        [named.clone(), named]
    });
    d[usize::from(sign < 0)].add_counts(&row, 1);
}

/// A gaming day in a `G` key: its day number from the common era, biased to sort as unsigned.
fn day_bytes(day: NaiveDate) -> [u8; 4] {
    use chrono::Datelike;
    ((day.num_days_from_ce() as u32) ^ (1 << 31)).to_be_bytes()
}

fn day_of_bytes(b: [u8; 4]) -> Option<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt((u32::from_be_bytes(b) ^ (1 << 31)) as i32)
}

/// The calendar as `Q` keeps it: each rule as its zone's name and `HH:MM`, the default first
/// (JSON).
fn calendar_bytes(c: &Calendar) -> Vec<u8> {
    let rule = |r: &DayRule| (r.tz.name().to_string(), r.start.format("%H:%M").to_string());
    let casinos: std::collections::BTreeMap<&String, (String, String)> =
        c.casinos.iter().map(|(id, r)| (id, rule(r))).collect();
    encode(&(rule(&c.default), casinos))
}

/// The calendar `Q` names (`None` when it does not read: the rows are then rebuilt).
fn calendar_of(v: &[u8]) -> Option<Calendar> {
    type Rule = (String, String);
    let (default, casinos): (Rule, std::collections::BTreeMap<String, Rule>) =
        serde_json::from_slice(v).ok()?;
    let rule = |(tz, start): &Rule| DayRule::parse(tz, start).ok();
    Some(Calendar {
        default: rule(&default)?,
        casinos: casinos
            .iter()
            .map(|(id, r)| Some((id.clone(), rule(r)?)))
            .collect::<Option<_>>()?,
    })
}

/// The jackpot book's detail, as the replayer handed it out (see the layout).
impl AuditStore {
    fn sum_increases(
        &self,
        machine_id: &str,
        from_ms: i64,
        to_ms: i64,
        keep: impl Fn(&MeterDelta) -> bool,
    ) -> Result<DeltaSum> {
        let key = id_key(b'D', machine_id);
        let mut sum = DeltaSum::default();
        if from_ms >= to_ms {
            return Ok(sum);
        }
        for kv in self
            .tree()
            .range(with(key.clone(), &biased(from_ms))..with(key, &biased(to_ms)))
        {
            let d: MeterDelta = decode(&kv?.1)?;
            if keep(&d) {
                sum.add(&d);
            }
        }
        Ok(sum)
    }

    /// Up to `limit` of a machine's significant events matching `query` (its `E` records of the
    /// query's times; every record of the machine for an index period).
    fn events(
        &self,
        machine_id: &str,
        query: &jackpot::EventQuery,
        limit: usize,
    ) -> Result<Vec<jackpot::LoggedEvent>> {
        let key = id_key(b'E', machine_id);
        let (from_ms, to_ms) = match query.period {
            jackpot::Period::Times { from_ms, to_ms } => (from_ms, to_ms),
            jackpot::Period::All | jackpot::Period::Indexes { .. } => (i64::MIN, i64::MAX),
        };
        let mut out = Vec::new();
        if from_ms >= to_ms || limit == 0 {
            return Ok(out);
        }
        for kv in self
            .tree()
            .range(with(key.clone(), &biased(from_ms))..with(key, &biased(to_ms)))
        {
            let e: jackpot::LoggedEvent = decode(&kv?.1)?;
            if query.matches(&e) {
                out.push(e);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    fn day_totals(&self, machine_id: &str, from: i64, to: i64) -> Result<(DeltaSum, Option<i64>)> {
        let key = id_key(b'Y', machine_id);
        let mut sum = DeltaSum::default();
        let mut last = None;
        if from >= to {
            return Ok((sum, last));
        }
        let prefix = key.len();
        for kv in self
            .tree()
            .range(with(key.clone(), &biased(from))..with(key, &biased(to)))
        {
            let (k, v) = kv?;
            let t: DeltaSum = decode(&v)?;
            sum.merge(&t);
            let day = k
                .get(prefix..)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(|b| (u64::from_be_bytes(b) ^ (1 << 63)) as i64)
                .ok_or_else(|| AuditStoreError::Corrupt("a day total's key has no day".into()))?;
            last = Some(day);
        }
        Ok((sum, last))
    }
}

fn query_error(e: AuditStoreError) -> QueryError {
    match e {
        AuditStoreError::Corrupt(c) => QueryError::SourceCorrupt(c),
        e => QueryError::Source(e.to_string()),
    }
}

impl DetailSource for AuditStore {
    fn delta_sum(
        &self,
        machine_id: &str,
        period: jackpot::Period,
    ) -> std::result::Result<DeltaSum, QueryError> {
        let (from_ms, to_ms) = match period {
            jackpot::Period::All => (i64::MIN, i64::MAX),
            jackpot::Period::Times { from_ms, to_ms } => (from_ms, to_ms),
            // By ledger index: every increase of the machine is read (no query of the product
            // asks this; the RPCs take times).
            jackpot::Period::Indexes { .. } => {
                return self
                    .sum_increases(machine_id, i64::MIN, i64::MAX, |d| {
                        period.contains(d.index, d.at_ms)
                    })
                    .map_err(query_error);
            }
        };
        jackpot::detail::sum_by_days(
            from_ms,
            to_ms,
            |a, b| self.day_totals(machine_id, a, b),
            |a, b| self.sum_increases(machine_id, a, b, |_| true),
        )
        .map_err(query_error)
    }

    fn machine_events(
        &self,
        machine_id: &str,
        query: &jackpot::EventQuery,
        limit: usize,
    ) -> std::result::Result<Vec<jackpot::LoggedEvent>, QueryError> {
        self.events(machine_id, query, limit).map_err(query_error)
    }

    fn pool_span(&self, pool: &jackpot::Pool) -> std::result::Result<(u64, u64), QueryError> {
        let key = id_key(b'H', &pool.id);
        let prefix = key.len();
        let stored = match self.tree().scan_prefix(&key).next_back() {
            None => 0,
            Some(kv) => {
                let (k, _) = kv.map_err(|e| query_error(e.into()))?;
                k.get(prefix..)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map(u64::from_be_bytes)
                    .ok_or_else(|| QueryError::SourceCorrupt("a history line's key".into()))?
                    .saturating_add(1)
            }
        };
        // The store commits behind the replayer: its newest lines may not be there yet. Lines
        // past the book's (written before a restart, about to be written again) are not shown.
        Ok((0, stored.min(pool.history_lines())))
    }

    fn pool_lines(
        &self,
        pool_id: &str,
        from: u64,
        to: u64,
    ) -> std::result::Result<Vec<PoolEntry>, QueryError> {
        if from >= to {
            return Ok(Vec::new());
        }
        let key = id_key(b'H', pool_id);
        let mut lines = Vec::new();
        for kv in self
            .tree()
            .range(with(key.clone(), &from.to_be_bytes())..with(key, &to.to_be_bytes()))
        {
            let (_, v) = kv.map_err(|e| query_error(e.into()))?;
            lines.push(decode(&v).map_err(query_error)?);
        }
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Replayer, settings};

    fn round(table: &str, id: &str, closed_index: u64, closed_ms: i64) -> RoundSummary {
        RoundSummary {
            table_id: table.into(),
            casino_id: Some("c1".into()),
            game: GameId::RouletteFrench,
            round_id: id.into(),
            config_index: 1,
            opened_index: closed_index - 1,
            closed_index,
            opened_ms: closed_ms - 5,
            closed_ms,
            void: false,
            bets: 1,
            handle_cents: 100,
            due_player_net_cents: 0,
            reported_player_net_cents: 0,
            house_due_cents: 0,
            house_reported_cents: 0,
            discrepancies: 0,
            discrepancy_abs_cents: 0,
            findings: 0,
            event_indexes: vec![closed_index - 1],
            jackpot_before_cents: None,
            jackpot_pool_id: None,
            state_before: None,
        }
    }

    fn rounds() -> Vec<RoundSummary> {
        vec![
            round("t1", "r1", 10, 1_000),
            round("t2", "r1", 20, 1_000),
            round("t1", "r2", 30, 2_000),
            round("t2", "r2", 40, 3_000),
        ]
    }

    fn ids(rs: &[RoundSummary]) -> Vec<(String, String)> {
        rs.iter()
            .map(|r| (r.table_id.clone(), r.round_id.clone()))
            .collect()
    }

    fn pair(t: &str, r: &str) -> (String, String) {
        (t.into(), r.into())
    }

    #[test]
    fn rounds_by_id_by_name_and_by_time() {
        let s = AuditStore::temporary().unwrap();
        let all = rounds();
        s.commit(&[], &all[..2], &[], None).unwrap();
        s.commit(&[], &all[2..], &[], None).unwrap();
        assert_eq!(s.round("t1", "r2").unwrap(), Some(all[2].clone()));
        assert_eq!(s.round("t1", "r3").unwrap(), None);
        assert_eq!(
            ids(&s.rounds_named("r1").unwrap()),
            vec![pair("t1", "r1"), pair("t2", "r1")]
        );
        // An id as long as a whole key (a request can name anything) finds nothing.
        assert_eq!(s.rounds_named("Rt1\0r1").unwrap(), vec![]);
        let period = |from_ms, to_ms| Period { from_ms, to_ms };
        assert_eq!(
            ids(&s.rounds_in(period(1_000, 3_000)).unwrap()),
            vec![pair("t1", "r1"), pair("t2", "r1"), pair("t1", "r2")],
            "from inclusive, to exclusive, in chain order"
        );
        assert_eq!(s.rounds_in(period(i64::MIN, i64::MAX)).unwrap(), all);
        // A round committed again (in another block) is counted once, where its pointer says.
        s.commit(&[], &all[3..], &[], None).unwrap();
        assert_eq!(s.rounds_in(period(3_000, 3_001)).unwrap().len(), 1);
    }

    fn finding(seq: u64, code: &str) -> Finding {
        Finding {
            seq,
            code: code.into(),
            table_id: Some("t1".into()),
            round_id: Some(format!("r{seq}")),
            ..Finding::default()
        }
    }

    /// A read budget ends a page early where the read stopped, and paging from there finds
    /// exactly what one unbounded read finds, with and without a code; a page that fills up
    /// first names no stopping point.
    #[test]
    fn a_read_budget_ends_a_page_early_and_paging_resumes_where_it_stopped() {
        let s = AuditStore::temporary().unwrap();
        let all: Vec<Finding> = (0..50)
            .map(|i| {
                let mut f = finding(
                    i,
                    if i % 2 == 0 {
                        "RL_WRONG_PAYOUT"
                    } else {
                        "BJ_X"
                    },
                );
                f.round_id = Some(if i % 7 == 3 { "hit" } else { "miss" }.into());
                f
            })
            .collect();
        s.commit(&all, &[], &[], None).unwrap();
        for code in [None, Some("RL_WRONG_PAYOUT".to_string())] {
            let filter = FindingFilter {
                code: code.clone(),
                round_id: Some("hit".into()),
                ..FindingFilter::default()
            };
            let want = s.findings(&filter, None, 1_000).unwrap();
            assert!(!want.is_empty());
            let (mut got, mut after, mut pages) = (Vec::new(), None, 0);
            loop {
                let page = s.findings_within(&filter, after, 1_000, 4).unwrap();
                pages += 1;
                got.extend(page.findings);
                match page.read_up_to {
                    Some(seq) => {
                        assert!(after.is_none_or(|a| seq > a), "the read moves on");
                        after = Some(seq);
                    }
                    None => break,
                }
            }
            assert_eq!(got, want, "code {code:?}");
            assert!(pages > 3, "the budget cut the read: {pages} pages");
        }
        // A full page names no stopping point, even at the budget.
        let page = s
            .findings_within(&FindingFilter::default(), None, 4, 4)
            .unwrap();
        assert_eq!(page.findings.len(), 4);
        assert_eq!(page.read_up_to, None);
    }

    fn review(index: u64, finding: &str, action: v1::FindingAction) -> Review {
        Review {
            index,
            at_ms: 1_000 + index as i64,
            record: v1::FindingReviewed {
                finding_id: finding.into(),
                action: action as i32,
                comment: format!("review {index}"),
                principal: "compliance-lx".into(),
                ..Default::default()
            },
        }
    }

    /// A finding is found by id; its status is its last review's action (open without one), its
    /// history every review in chain order; the status filters a page; and a review written
    /// again by a replay from the snapshot changes nothing.
    #[test]
    fn reviews_give_each_finding_its_status_and_history() {
        use v1::FindingAction as A;
        let s = AuditStore::temporary().unwrap();
        let all: Vec<Finding> = (0..6)
            .map(|i| Finding {
                id: format!("F{i}"),
                ..finding(i, "RL_WRONG_PAYOUT")
            })
            .collect();
        s.commit(&all, &[], &[], None).unwrap();
        assert_eq!(s.finding_by_id("F3").unwrap().unwrap().seq, 3);
        assert_eq!(s.finding_by_id("F9").unwrap(), None);
        assert_eq!(s.status("F1").unwrap(), FindingStatus::Open);
        let reviews = [
            review(100, "F1", A::Acknowledge),
            review(101, "F2", A::Dispute),
            review(105, "F1", A::Resolve),
        ];
        s.commit_with(&[], &[], &[], &reviews[..2], None).unwrap();
        assert_eq!(s.status("F1").unwrap(), FindingStatus::Acknowledged);
        s.commit_with(&[], &[], &[], &reviews[2..], None).unwrap();
        // Written again (a replay after a restart): the same records under the same keys.
        s.commit_with(&[], &[], &[], &reviews, None).unwrap();
        assert_eq!(s.status("F1").unwrap(), FindingStatus::Resolved);
        assert_eq!(s.status("F2").unwrap(), FindingStatus::Disputed);
        assert_eq!(
            s.reviews("F1").unwrap(),
            [reviews[0].clone(), reviews[2].clone()]
        );
        assert_eq!(s.reviews("F0").unwrap(), []);
        // "F1" is a prefix of no other id here, but ids are length-prefixed in any case.
        assert_eq!(s.reviews("F").unwrap(), []);
        let only = |status| {
            let page = s
                .findings_within(
                    &FindingFilter {
                        status: Some(status),
                        ..FindingFilter::default()
                    },
                    None,
                    100,
                    usize::MAX,
                )
                .unwrap();
            assert_eq!(page.findings.len(), page.statuses.len());
            assert!(page.statuses.iter().all(|s| *s == status));
            page.findings.iter().map(|f| f.seq).collect::<Vec<_>>()
        };
        assert_eq!(only(FindingStatus::Resolved), [1]);
        assert_eq!(only(FindingStatus::Disputed), [2]);
        assert_eq!(only(FindingStatus::Open), [0, 3, 4, 5]);
        assert_eq!(only(FindingStatus::Acknowledged), Vec::<u64>::new());
        // Findings after the snapshot are dropped with their id index.
        let mut snap = Replayer::new(settings(false)).snapshot();
        snap.auditor.digest.count = 4;
        s.commit(&[], &[], &[], Some(&snap)).unwrap();
        s.load().unwrap();
        assert!(s.finding_by_id("F3").unwrap().is_some());
        assert_eq!(s.finding_by_id("F4").unwrap(), None);
    }

    /// A query for one code reads that code's findings only: it pages, finds nothing quickly for
    /// a code no finding has, and never decodes another code's finding (a damaged one here).
    #[test]
    fn findings_of_a_code_are_read_through_its_index() {
        let s = AuditStore::temporary().unwrap();
        let all: Vec<Finding> = (0..50)
            .map(|i| {
                finding(
                    i,
                    if i % 5 == 0 {
                        "RL_WRONG_PAYOUT"
                    } else {
                        "BJ_X"
                    },
                )
            })
            .collect();
        s.commit(&all, &[], &[], None).unwrap();
        // Damage a finding of the other code.
        s.tree()
            .insert(prefixed(b'F', &[&7u64.to_be_bytes()]), &b"{"[..])
            .unwrap();
        let code = |c: &str| FindingFilter {
            code: Some(c.into()),
            ..FindingFilter::default()
        };
        let seqs = |fs: Vec<Finding>| fs.iter().map(|f| f.seq).collect::<Vec<_>>();
        let rl = code("RL_WRONG_PAYOUT");
        assert_eq!(seqs(s.findings(&rl, None, 3).unwrap()), [0, 5, 10]);
        assert_eq!(
            seqs(s.findings(&rl, Some(10), 100).unwrap()),
            [15, 20, 25, 30, 35, 40, 45]
        );
        // A code that is the start of another finds nothing of it.
        assert_eq!(s.findings(&code("RL_WRONG"), None, 100).unwrap(), vec![]);
        assert_eq!(
            s.findings(&code("NO_SUCH_CODE"), None, 100).unwrap(),
            vec![]
        );
        // Without a code every finding is read: the damaged one is reported, as damage (ledgerd
        // sets such a store aside and rebuilds it; see `AuditStoreError::is_damage`).
        let damaged = s
            .findings(&FindingFilter::default(), None, 100)
            .unwrap_err();
        assert!(
            matches!(damaged, AuditStoreError::Corrupt(_)) && damaged.is_damage(),
            "{damaged}"
        );
        let io = AuditStoreError::Sled(sled::Error::Io(std::io::Error::other("disk full")));
        assert!(!io.is_damage(), "a machine's failure is not damage");
        // load() drops the index with the findings after the snapshot.
        let mut snap = Replayer::new(settings(false)).snapshot();
        snap.auditor.digest.count = 12;
        s.tree()
            .insert(prefixed(b'F', &[&7u64.to_be_bytes()]), encode(&all[7]))
            .unwrap();
        s.commit(&[], &[], &[], Some(&snap)).unwrap();
        s.load().unwrap();
        assert_eq!(seqs(s.findings(&rl, None, 100).unwrap()), [0, 5, 10]);
        assert_eq!(s.tree().scan_prefix(b"C").count(), 12);
    }

    /// A round found by id alone reads that id's index, not every round's pointer (a damaged
    /// pointer of another table's round with the same id prefix is never followed).
    #[test]
    fn rounds_by_id_are_read_through_their_index() {
        let s = AuditStore::temporary().unwrap();
        s.commit(&[], &rounds(), &[], None).unwrap();
        // A pointer no name leads to, and that points nowhere.
        s.tree()
            .insert(prefixed(b'R', &[&round_key("t9", "r1")]), &[0u8; 18][..])
            .unwrap();
        assert_eq!(
            ids(&s.rounds_named("r1").unwrap()),
            vec![pair("t1", "r1"), pair("t2", "r1")]
        );
        assert_eq!(s.rounds_named("r").unwrap(), vec![]);
        assert_eq!(s.tree().scan_prefix(b"N").count(), 4);
    }

    /// A new store keeps its gaming-day rows by the default calendar from the start; one with
    /// rounds but no calendar (written before the rows existed) keeps none until it is given
    /// one, which builds them.
    #[test]
    fn a_store_with_rounds_but_no_calendar_keeps_no_day_rows_until_given_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit");
        let s = AuditStore::open(&path).unwrap();
        assert_eq!(s.days_calendar(), Some(Calendar::default()));
        s.commit(&[], &rounds(), &[], None).unwrap();
        s.tree().remove(b"Q").unwrap();
        s.flush().unwrap();
        drop(s);
        let s = AuditStore::open(&path).unwrap();
        assert_eq!(s.days_calendar(), None);
        assert!(s.use_calendar(&Calendar::default()).unwrap());
        assert_eq!(s.days_calendar(), Some(Calendar::default()));
    }

    /// A round pointer that points past its block, or at another round of it, is damage, not
    /// that other round.
    #[test]
    fn a_pointer_to_the_wrong_place_of_a_block_is_damage() {
        let s = AuditStore::temporary().unwrap();
        s.commit(&[], &rounds(), &[], None).unwrap();
        let rk = round_key("t1", "r1");
        let ptr = s.tree().get(prefixed(b'R', &[&rk])).unwrap().unwrap();
        assert_eq!(s.round("t1", "r1").unwrap(), Some(rounds()[0].clone()));
        for place in [1u16, 3, 4, 900] {
            let mut wrong = ptr.to_vec();
            wrong[16..].copy_from_slice(&place.to_be_bytes());
            s.tree().insert(prefixed(b'R', &[&rk]), wrong).unwrap();
            let e = s.round("t1", "r1").expect_err("damage");
            assert!(e.is_damage(), "{e}");
            assert_eq!(
                e.to_string(),
                "audit store: damaged: round t1/r1 is indexed but not stored"
            );
        }
    }

    /// Files sled cannot make sense of are damage (ledgerd sets such a store aside and rebuilds
    /// it): a settings file that does not parse, one that names a version sled does not know.
    #[test]
    fn a_store_whose_settings_file_is_mangled_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit");
        drop(AuditStore::open(&path).unwrap());
        let written = std::fs::read(path.join("conf")).unwrap();
        let at = written
            .windows(4)
            .position(|w| w == b"0.34")
            .expect("sled's version");
        let mut older = written.clone();
        older[at + 2] = b'1'; // "0.14": sled refuses it as Unsupported
        for conf in [b"segment_size: 1\nversion: 0.\n".to_vec(), older] {
            std::fs::write(path.join("conf"), &conf).unwrap();
            let e = AuditStore::open(&path).err().expect("refused");
            assert!(e.is_damage(), "{e:?}");
        }
    }

    #[test]
    fn load_drops_the_rounds_closed_after_the_snapshot() {
        let s = AuditStore::temporary().unwrap();
        let all = rounds();
        let mut snap = Replayer::new(settings(false)).snapshot();
        snap.auditor.position = Some(25);
        s.commit(&[], &all[..2], &[], Some(&snap)).unwrap();
        s.commit(&[], &all[2..], &[], None).unwrap();
        let loaded = s.load().unwrap().expect("the snapshot");
        assert_eq!(loaded.auditor.position, Some(25));
        assert_eq!(
            s.rounds_in(Period {
                from_ms: i64::MIN,
                to_ms: i64::MAX
            })
            .unwrap(),
            all[..2]
        );
        assert_eq!(s.round("t1", "r2").unwrap(), None, "pointer removed too");
        assert_eq!(s.rounds_named("r2").unwrap(), vec![]);
        assert_eq!(s.round("t2", "r1").unwrap(), Some(all[1].clone()));
    }

    #[test]
    fn without_a_snapshot_load_drops_every_round() {
        let s = AuditStore::temporary().unwrap();
        s.commit(&[], &rounds(), &[], None).unwrap();
        assert!(s.load().unwrap().is_none());
        assert_eq!(s.rounds_named("r1").unwrap(), vec![]);
        assert_eq!(s.tree().scan_prefix(b"T").count(), 0);
    }

    #[test]
    fn a_store_of_another_layout_is_emptied_for_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = AuditStore::open(dir.path()).unwrap();
            s.commit(&[], &rounds(), &[], None).unwrap();
            s.tree().insert(b"V", &b"1"[..]).unwrap();
            s.flush().unwrap();
        }
        let s = AuditStore::open(dir.path()).unwrap();
        assert_eq!(
            s.tree().len(),
            2,
            "only the layout mark and the gaming-day rows' calendar are left"
        );
        assert!(s.tree().get(b"Q").unwrap().is_some());
        assert_eq!(s.tree().get(b"V").unwrap().as_deref(), Some(LAYOUT));
        drop(s);
        // The same layout is kept as it is.
        let s = AuditStore::open(dir.path()).unwrap();
        s.commit(&[], &rounds(), &[], None).unwrap();
        drop(s);
        let s = AuditStore::open(dir.path()).unwrap();
        assert_eq!(s.rounds_named("r2").unwrap().len(), 2);
    }

    fn many(n: usize) -> Vec<RoundSummary> {
        (0..n)
            .map(|i| {
                round(
                    ["t1", "t2", "t3"][i % 3],
                    &format!("r{i}"),
                    10 + 10 * i as u64,
                    1_000 + 10 * i as i64,
                )
            })
            .collect()
    }

    #[test]
    fn rounds_in_several_blocks_are_found_by_id_and_by_period() {
        let s = AuditStore::temporary().unwrap();
        let all = many(2 * BLOCK_ROUNDS + 22);
        s.commit(&[], &all, &[], None).unwrap();
        assert_eq!(s.tree().scan_prefix(b"T").count(), 3, "three blocks");
        for r in [&all[0], &all[BLOCK_ROUNDS], &all[all.len() - 1], &all[77]] {
            assert_eq!(s.round(&r.table_id, &r.round_id).unwrap().as_ref(), Some(r));
        }
        // A period that starts and ends inside blocks.
        let (a, b) = (30, 100);
        let got = s
            .rounds_in(Period {
                from_ms: all[a].closed_ms,
                to_ms: all[b].closed_ms,
            })
            .unwrap();
        assert_eq!(got, all[a..b]);
        // A period inside one block, and one before everything.
        let one = Period {
            from_ms: all[5].closed_ms,
            to_ms: all[5].closed_ms + 1,
        };
        assert_eq!(s.rounds_in(one).unwrap(), all[5..6]);
        let none = Period {
            from_ms: 0,
            to_ms: all[0].closed_ms,
        };
        assert_eq!(s.rounds_in(none).unwrap(), vec![]);
    }

    #[test]
    fn load_cuts_a_block_that_the_snapshot_position_falls_in() {
        let s = AuditStore::temporary().unwrap();
        let all = many(2 * BLOCK_ROUNDS + 22);
        let keep = BLOCK_ROUNDS + 7; // rounds 0..=keep are at or before the position
        let mut snap = Replayer::new(settings(false)).snapshot();
        snap.auditor.position = Some(all[keep].closed_index);
        s.commit(&[], &all, &[], Some(&snap)).unwrap();
        s.load().unwrap().expect("the snapshot");
        let every = Period {
            from_ms: i64::MIN,
            to_ms: i64::MAX,
        };
        assert_eq!(s.rounds_in(every).unwrap(), all[..=keep]);
        let (kept, gone) = (&all[keep], &all[keep + 1]);
        assert_eq!(
            s.round(&kept.table_id, &kept.round_id).unwrap().as_ref(),
            Some(kept)
        );
        assert_eq!(s.round(&gone.table_id, &gone.round_id).unwrap(), None);
        assert_eq!(s.tree().scan_prefix(b"R").count(), keep + 1);
        // Replaying on commits the rest again, each once.
        s.commit(&[], &all[keep + 1..], &[], None).unwrap();
        assert_eq!(s.rounds_in(every).unwrap(), all);
    }

    /// The kind index counts what decoding every event of the span counts, games aside: per
    /// kind, over spans that start and end between events, for two machines.
    #[test]
    fn event_counts_by_kind_are_the_decoded_events_counts() {
        use jackpot::{MachineEvent, Significant};
        let s = AuditStore::temporary().unwrap();
        let kinds = [
            Significant::Power { on: true },
            Significant::BatteryLow,
            Significant::Link { up: false },
            Significant::MemoryError,
            Significant::GameStarted {
                game_number: 1,
                wager_cents: 100,
            },
        ];
        let mut detail = Vec::new();
        for i in 0..400u64 {
            let machine = if i % 3 == 0 { "m1" } else { "m2" };
            detail.push(Detail::Event {
                machine_id: machine.into(),
                event: jackpot::LoggedEvent {
                    index: i,
                    at_ms: 1_000 + 10 * i as i64,
                    event: MachineEvent {
                        machine_id: machine.into(),
                        source_code: String::new(),
                        detail: String::new(),
                        event: kinds[(i * 7 % 5) as usize].clone(),
                    },
                },
            });
        }
        s.commit(&[], &[], &detail, None).unwrap();
        let noted: Vec<String> = jackpot::EVENT_KINDS
            .iter()
            .filter(|k| !k.starts_with("game_"))
            .map(|k| k.to_string())
            .collect();
        for (from_ms, to_ms) in [
            (0, i64::MAX),
            (1_005, 2_995),
            (1_500, 1_500),
            (9_000, 9_999),
        ] {
            for machine in ["m1", "m2", "m3"] {
                let query = jackpot::EventQuery {
                    period: jackpot::Period::Times { from_ms, to_ms },
                    after_index: None,
                    kinds: noted.clone(),
                };
                let mut decoded = std::collections::BTreeMap::<String, u64>::new();
                for e in s.events(machine, &query, usize::MAX).unwrap() {
                    *decoded.entry(e.event.event.name().to_string()).or_default() += 1;
                }
                let counted = s.event_counts(machine, from_ms, to_ms).unwrap();
                assert_eq!(counted, decoded, "{machine} in {from_ms}..{to_ms}");
            }
        }
        let all = s.event_counts("m2", 0, i64::MAX).unwrap();
        assert!(
            all.len() == 4 && !all.contains_key("game_started"),
            "{all:?}"
        );
    }

    /// Every field of the filter narrows what it matches, each on its own and together; the
    /// time window is `[from_ms, to_ms)` and severity a floor.
    #[test]
    fn a_finding_filter_matches_by_every_field_and_the_window_is_half_open() {
        let f = Finding {
            severity: Severity::Medium,
            code: "ROULETTE_PAYOUT".into(),
            casino_id: Some("c1".into()),
            table_id: Some("t1".into()),
            pool_id: Some("p1".into()),
            game: Some(GameId::RouletteFrench),
            round_id: Some("r1".into()),
            at_ms: 1_000,
            ..Finding::default()
        };
        let machine = Finding {
            table_id: None,
            machine_id: Some("m1".into()),
            ..f.clone()
        };
        let all = FindingFilter::default();
        assert!(all.matches(&f) && all.matches(&machine));
        fn s(v: &str) -> Option<String> {
            Some(v.to_string())
        }
        type Case = (&'static str, fn(&mut FindingFilter, bool));
        let cases: [Case; 9] = [
            ("casino", |q, hit| {
                q.casino_id = if hit { s("c1") } else { s("c2") }
            }),
            ("subject", |q, hit| {
                q.subject = if hit { s("t1") } else { s("m1") }
            }),
            ("game", |q, hit| {
                q.game = Some(if hit {
                    GameId::RouletteFrench
                } else {
                    GameId::RouletteAmerican
                })
            }),
            ("code", |q, hit| {
                q.code = if hit {
                    s("ROULETTE_PAYOUT")
                } else {
                    s("ROULETTE")
                }
            }),
            ("severity", |q, hit| {
                q.min_severity = Some(if hit {
                    Severity::Medium
                } else {
                    Severity::High
                })
            }),
            ("pool", |q, hit| {
                q.pool_id = if hit { s("p1") } else { s("p2") }
            }),
            ("round", |q, hit| {
                q.round_id = if hit { s("r1") } else { s("r2") }
            }),
            ("from", |q, hit| {
                q.from_ms = Some(if hit { 1_000 } else { 1_001 })
            }),
            ("to", |q, hit| {
                q.to_ms = Some(if hit { 1_001 } else { 1_000 })
            }),
        ];
        for (name, set) in cases {
            let mut hit = FindingFilter::default();
            set(&mut hit, true);
            assert!(hit.matches(&f), "{name}: the finding's own value matches");
            let mut miss = FindingFilter::default();
            set(&mut miss, false);
            assert!(!miss.matches(&f), "{name}: another value does not");
            // With every other field set to match, this one alone still decides.
            let mut others = FindingFilter::default();
            for (other, set_other) in cases {
                if other != name {
                    set_other(&mut others, true);
                }
            }
            set(&mut others, true);
            assert!(others.matches(&f), "{name}: all fields matching");
            set(&mut others, false);
            assert!(!others.matches(&f), "{name}: only this one differs");
        }
        // A subject is a table or a machine.
        let by_machine = FindingFilter {
            subject: s("m1"),
            ..FindingFilter::default()
        };
        assert!(by_machine.matches(&machine) && !by_machine.matches(&f));
        let lower = FindingFilter {
            min_severity: Some(Severity::Low),
            ..FindingFilter::default()
        };
        assert!(lower.matches(&f), "a floor below the finding's severity");
        let outside = FindingFilter {
            from_ms: Some(0),
            to_ms: Some(999),
            ..FindingFilter::default()
        };
        assert!(!outside.matches(&f));
    }

    /// Rounds closed before 1970 (negative ledger times) sort before the later ones: the time
    /// keys are biased so that their bytes order as the signed times do.
    #[test]
    fn rounds_closed_at_negative_times_sort_before_later_ones() {
        let s = AuditStore::temporary().unwrap();
        let all = vec![
            round("t1", "r1", 10, -5_000),
            round("t1", "r2", 20, -1),
            round("t1", "r3", 30, 0),
            round("t1", "r4", 40, 7_000),
        ];
        s.commit(&[], &all, &[], None).unwrap();
        let period = |from_ms, to_ms| Period { from_ms, to_ms };
        assert_eq!(s.rounds_in(period(i64::MIN, i64::MAX)).unwrap(), all);
        assert_eq!(s.rounds_in(period(i64::MIN, 0)).unwrap(), all[..2].to_vec());
        assert_eq!(s.rounds_in(period(-1, 1)).unwrap(), all[1..3].to_vec());
        assert!(biased(-1) < biased(0));
        assert_eq!(biased(i64::MIN), [0; 8]);
    }

    /// A store opened again while another handle still holds it waits for that handle to let
    /// go (a resumed replay in the same process), and gives up with the lock error after its
    /// deadline when it never does.
    #[test]
    fn opening_a_held_store_waits_for_its_release_then_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit");
        let first = AuditStore::open(&path).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(first);
        });
        let second = AuditStore::open(&path).expect("opened once the first let go");
        release.join().unwrap();
        assert_eq!(second.rebuilds(), 0, "a new handle has replaced nothing");
        let start = std::time::Instant::now();
        let e = AuditStore::open(&path).err().expect("held for good");
        assert!(e.to_string().contains("could not acquire lock"), "{e}");
        assert!(!e.is_damage(), "another process's lock is not damage");
        assert!(
            start.elapsed() >= std::time::Duration::from_secs(2),
            "it waited"
        );
    }

    /// A store in a directory named without a parent (relative to the working directory) opens
    /// and is set aside: the empty parent is not a directory to fsync.
    #[test]
    fn a_store_named_relative_to_the_working_directory_opens_and_is_set_aside() {
        // The tests run in the crate's directory; a name of this process's own.
        let name = format!(".audit-store-test-{}", std::process::id());
        let path = Path::new(&name);
        assert_eq!(path.parent(), Some(Path::new("")));
        let store = AuditStore::open(path).expect("opened");
        drop(store);
        let aside = set_aside(path);
        let cleanup = |p: &Path| {
            let _ = std::fs::remove_dir_all(p);
        };
        cleanup(path);
        let aside = aside.expect("set aside");
        cleanup(&aside);
        assert!(
            aside
                .to_string_lossy()
                .starts_with(&format!("{name}.damaged-")),
            "{}",
            aside.display()
        );
    }
}
