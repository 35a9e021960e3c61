//! `ledgerctl verify`: offline verification of a data directory or an export file.
//!
//! Streams the entries once, in order, through `ledger_core::ChainVerifier` (hashes, links,
//! registry, sequences, checkpoints) on this thread, and checks the signatures in batches on two
//! worker threads (and on this one when their queue is full). A data directory's entries are
//! read in place from the stored chunks (`ChainVerifier::check_stored`): no entry is decoded
//! into a `ChainEntry`, its stored bytes are its Merkle leaf, and its body goes to the
//! signature check where it is; the checks and errors are those of the decoded entries. Memory
//! is bounded by the number of signers and checkpoints, not entries. After a long chain it
//! measures the signature ceiling (`crate::ceiling`) and states its rate, and its CPU an entry,
//! against it. Shares no code path with the writer beyond the format's own hash functions.

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use anyhow::Context;
use ed25519_dalek::VerifyingKey;
use ledger_core::proto as v1;
use ledger_core::signing::{PreparedSignature, verify_prepared};
use ledger_core::verify::{EntrySignature, PendingSignature};
use ledger_core::{ChainVerifier, StoredEntry, Summary, VerifyError, hex32};
use ledger_store::{Chunk, Store, StoreError, StoredItem, WindowedChunks};

use crate::common;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["data_dir", "file", "evidence"])))]
pub struct Args {
    /// A stopped ledger's data directory (the sled store and checkpoints.log).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// An export file written by `ledgerctl export`.
    #[arg(long, value_name = "EXPORT")]
    pub file: Option<PathBuf>,
    /// The ledger public key you trust (hex or a .pub file); default: the genesis key, printed.
    #[arg(long, value_name = "HEX|FILE")]
    pub ledger_key: Option<String>,
    /// A checkpoint you kept (`ledgerctl --json checkpoint`), which the chain must reach. Repeatable.
    #[arg(long = "checkpoint", value_name = "FILE")]
    pub held_checkpoints: Vec<PathBuf>,
    /// An evidence bundle (`ledgerctl evidence`), checked offline (needs --ledger-key).
    #[arg(long, value_name = "FILE", requires = "ledger_key")]
    pub evidence: Option<PathBuf>,
    /// A witness (NAME+ID+KEY) that must have cosigned the ledger and not disputed it. Repeatable.
    #[arg(long = "witness-key", value_name = "VKEY")]
    pub witness_keys: Vec<String>,
    /// Skip the signature ceiling measured after 100,000 entries or more (2 s on every core).
    //
    // With it, the rate and the CPU an entry are also stated as shares of the ceiling's.
    #[arg(long)]
    pub no_ceiling: bool,
}

/// Chains shorter than this are verified too quickly for their rate to say much: no ceiling.
const CEILING_MIN_ENTRIES: u64 = 100_000;

/// The signature ceiling measured after a verification, and the process's CPU time in each:
/// (the verification's, the ceiling's).
pub struct AgainstCeiling {
    pub ceiling: crate::ceiling::Ceiling,
    pub cpu: Option<(std::time::Duration, std::time::Duration)>,
}

impl AgainstCeiling {
    /// CPU a signature in the ceiling's measurement, and an entry in the verification (µs),
    /// over `entries` entries verified in `secs` s.
    fn cpu_line(&self, entries: u64, secs: f64) -> Option<(String, serde_json::Value)> {
        let (v, c) = self.cpu?;
        let c_sigs = self.ceiling.per_second * self.ceiling.seconds;
        if entries == 0 || c_sigs <= 0.0 {
            return None;
        }
        let per_entry = v.as_secs_f64() * 1e6 / entries as f64;
        let per_sig = c.as_secs_f64() * 1e6 / c_sigs;
        let (v_cores, c_cores) = (
            v.as_secs_f64() / secs,
            c.as_secs_f64() / self.ceiling.seconds.max(1e-9),
        );
        Some((
            format!(
                "cpu: {per_entry:.2} µs an entry on {v_cores:.2} cores; the ceiling {per_sig:.2} µs a signature on {c_cores:.2} cores (by CPU time, verify is {:.1}% of it)",
                100.0 * per_sig / per_entry
            ),
            serde_json::json!({
                "verify_cpu_us_per_entry": per_entry, "verify_cores": v_cores,
                "ceiling_cpu_us_per_signature": per_sig, "ceiling_cores": c_cores,
            }),
        ))
    }
}

/// Signatures checked per batch.
const CHUNK: usize = 512;
/// Batches queued for the signature workers: enough for them to go on while the reading
/// thread reopens the store (20-45 ms, `ledger_store::windowed`).
const QUEUED_CHUNKS: usize = 32;

/// Where a signed body is, for the signature workers.
#[derive(Debug)]
enum Body {
    /// In the batch's chunk number `chunk`, at `start..end` (read in place, not copied).
    InChunk { chunk: u32, start: u32, end: u32 },
    /// Its own copy.
    Owned(Vec<u8>),
}

/// A signature queued for the workers: over `domain ‖ body`.
#[derive(Debug)]
struct Queued {
    index: u64,
    what: &'static str,
    domain: &'static [u8],
    body: Body,
    signature: ed25519_dalek::Signature,
    key: VerifyingKey,
}

/// Signatures checked together, and the stored chunks their bodies are in (each held until
/// the batch is checked; sled's buffers are reference-counted).
#[derive(Debug, Default)]
struct Batch {
    chunks: Vec<Chunk>,
    items: Vec<Queued>,
}

impl Batch {
    fn with_capacity(n: usize) -> Batch {
        Batch {
            chunks: Vec::new(),
            items: Vec::with_capacity(n),
        }
    }

    fn body<'b>(&'b self, q: &'b Queued) -> &'b [u8] {
        match &q.body {
            Body::InChunk { chunk, start, end } => {
                &self.chunks[*chunk as usize].bytes()[*start as usize..*end as usize]
            }
            Body::Owned(b) => b,
        }
    }

    /// A signature with its message already joined (`domain ‖ body`).
    fn push_pending(&mut self, p: PendingSignature) {
        self.items.push(Queued {
            index: p.index,
            what: p.what,
            domain: b"",
            body: Body::Owned(p.check.message),
            signature: p.check.signature,
            key: p.check.key,
        });
    }

    /// A signature of an entry read in place from `chunk`, whose body is `entry_body`: the
    /// body is left there.
    fn push_stored(&mut self, chunk: &Chunk, entry_body: &[u8], s: EntrySignature) {
        let body = match s.other_body {
            Some(b) => Body::Owned(b),
            None => match range_in(chunk.bytes(), entry_body) {
                Some((start, end)) => {
                    let same = self.chunks.last().is_some_and(|c| {
                        c.first == chunk.first && c.bytes().as_ptr() == chunk.bytes().as_ptr()
                    });
                    if !same {
                        self.chunks.push(chunk.clone());
                    }
                    Body::InChunk {
                        chunk: (self.chunks.len() - 1) as u32,
                        start,
                        end,
                    }
                }
                // Not in the chunk (an empty body): a copy.
                None => Body::Owned(entry_body.to_vec()),
            },
        };
        self.items.push(Queued {
            index: s.index,
            what: s.what,
            domain: s.domain,
            body,
            signature: s.signature,
            key: s.key,
        });
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Where `inner` is in `outer`, when it is a part of it (by address: a slice borrowed from it).
fn range_in(outer: &[u8], inner: &[u8]) -> Option<(u32, u32)> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    let end = start.checked_add(inner.len())?;
    if inner.is_empty() || end > outer.len() {
        return None;
    }
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

/// What the signature checks found: the smallest index with a bad signature, and its error.
struct SignatureFindings {
    /// `u64::MAX` while none.
    first_bad: AtomicU64,
    error: Mutex<Option<VerifyError>>,
}

impl SignatureFindings {
    fn new() -> SignatureFindings {
        SignatureFindings {
            first_bad: AtomicU64::new(u64::MAX),
            error: Mutex::new(None),
        }
    }

    /// Check a batch (`verify_prepared`, on the bodies where they are, not copied out first).
    fn check(&self, batch: &Batch) {
        let prepared: Vec<_> = batch
            .items
            .iter()
            .map(|q| PreparedSignature::new(&q.key, q.domain, batch.body(q), &q.signature))
            .collect();
        for (ok, p) in verify_prepared(&prepared).into_iter().zip(&batch.items) {
            if !ok && p.index < self.first_bad.load(Ordering::SeqCst) {
                self.first_bad.fetch_min(p.index, Ordering::SeqCst);
                let mut e = self.error.lock().unwrap_or_else(|e| e.into_inner());
                if e.as_ref()
                    .is_none_or(|x| x.index.unwrap_or(u64::MAX) > p.index)
                {
                    *e = Some(VerifyError::at(p.index, format!("bad {}", p.what)));
                }
            }
        }
    }
}

/// What the caller trusts, obtained out of band: the ledger's key and checkpoints it kept.
#[derive(Clone, Debug, Default)]
pub struct Trusted {
    pub key: Option<VerifyingKey>,
    pub checkpoints: Vec<v1::Checkpoint>,
    /// Witnesses (name, key) whose cosignatures are checked ([`ChainVerifier::add_witness`]).
    pub witnesses: Vec<(String, ledger_core::note::CosignerKey)>,
}

/// Verify `entries` (in order) against `checkpoints`. Returns the summary or the first broken index.
pub fn verify_entries<I>(
    checkpoints: &[v1::Checkpoint],
    entries: I,
    trusted: &Trusted,
    pb: &indicatif::ProgressBar,
) -> Result<Summary, VerifyError>
where
    I: Iterator<Item = Result<v1::ChainEntry, VerifyError>>,
{
    let mut run = Verification::new(checkpoints, trusted, pb)?;
    for e in entries {
        let go = match e {
            Ok(e) => run.entry(&e),
            Err(err) => run.fail(err),
        };
        if !go {
            break;
        }
    }
    run.finish()
}

/// One verification: the chain checked on this thread ([`ChainVerifier`]), its signatures in
/// batches on two workers (and on this thread when their queue is full).
struct Verification<'a> {
    v: ChainVerifier,
    found: Arc<SignatureFindings>,
    tx: mpsc::SyncSender<Batch>,
    workers: Vec<std::thread::JoinHandle<()>>,
    batch: Batch,
    /// The signatures of the entry being read in place (kept, to allocate it once).
    sigs: Vec<EntrySignature>,
    structural: Option<VerifyError>,
    seen: u64,
    pb: &'a indicatif::ProgressBar,
}

impl<'a> Verification<'a> {
    fn new(
        checkpoints: &[v1::Checkpoint],
        trusted: &Trusted,
        pb: &'a indicatif::ProgressBar,
    ) -> Result<Verification<'a>, VerifyError> {
        let mut v = ChainVerifier::new(trusted.key);
        for (name, key) in &trusted.witnesses {
            v.add_witness(name, key);
        }
        for cp in checkpoints {
            v.add_checkpoint(cp)?;
        }
        for cp in &trusted.checkpoints {
            v.add_held_checkpoint(cp)?;
        }
        let found = Arc::new(SignatureFindings::new());
        let (tx, rx) = mpsc::sync_channel::<Batch>(QUEUED_CHUNKS);
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..2)
            .map(|_| {
                let (rx, found) = (rx.clone(), found.clone());
                std::thread::spawn(move || {
                    loop {
                        let batch = match rx.lock().map(|r| r.recv()) {
                            Ok(Ok(c)) => c,
                            _ => return,
                        };
                        found.check(&batch);
                    }
                })
            })
            .collect();
        Ok(Verification {
            v,
            found,
            tx,
            workers,
            batch: Batch::with_capacity(CHUNK),
            sigs: Vec::with_capacity(2),
            structural: None,
            seen: 0,
            pb,
        })
    }

    /// A signature worker that stopped (it cannot, short of a bug) must not let the batches it
    /// would have checked pass unchecked.
    fn workers_lost() -> VerifyError {
        VerifyError::general("a signature-checking thread stopped")
    }

    /// The reading failed: stop there. Always false (go no further).
    fn fail(&mut self, err: VerifyError) -> bool {
        self.structural = Some(err);
        false
    }

    /// No entry after a bad signature found: false.
    fn before_first_bad(&self, index: u64) -> bool {
        index <= self.found.first_bad.load(Ordering::Relaxed)
    }

    /// Check a decoded entry. False: stop.
    fn entry(&mut self, e: &v1::ChainEntry) -> bool {
        if !self.before_first_bad(e.index) {
            return false;
        }
        match self.v.check_entry(e) {
            Ok(p) => p.into_iter().for_each(|p| self.batch.push_pending(p)),
            Err(err) => return self.fail(err),
        }
        self.after_entry()
    }

    /// Check an entry read in place from `chunk`. False: stop.
    fn stored(&mut self, chunk: &Chunk, s: &StoredEntry<'_>) -> bool {
        if !self.before_first_bad(s.fields().index) {
            return false;
        }
        if let Err(err) = self.v.check_stored(s, &mut self.sigs) {
            return self.fail(err);
        }
        for sig in self.sigs.drain(..) {
            self.batch.push_stored(chunk, s.fields().body, sig);
        }
        self.after_entry()
    }

    fn after_entry(&mut self) -> bool {
        if self.batch.len() >= CHUNK {
            // With the workers' queue full, this thread checks the batch itself rather than
            // wait: three threads busy on two cores, none of them waiting while there is work.
            let batch = std::mem::replace(&mut self.batch, Batch::with_capacity(CHUNK));
            match self.tx.try_send(batch) {
                Ok(()) => {}
                Err(mpsc::TrySendError::Full(b)) => self.found.check(&b),
                Err(mpsc::TrySendError::Disconnected(_)) => return self.fail(Self::workers_lost()),
            }
        }
        if self.seen.is_multiple_of(4096) {
            self.pb.set_position(self.seen);
        }
        self.seen += 1;
        true
    }

    /// Wait for the signatures; the summary, or the first broken index of either kind.
    fn finish(self) -> Result<Summary, VerifyError> {
        let Verification {
            v,
            found,
            tx,
            workers,
            batch,
            mut structural,
            pb,
            ..
        } = self;
        if !batch.is_empty() && tx.send(batch).is_err() && structural.is_none() {
            structural = Some(Self::workers_lost());
        }
        drop(tx);
        for w in workers {
            if w.join().is_err() && structural.is_none() {
                structural = Some(Self::workers_lost());
            }
        }
        pb.set_position(v.entries());
        let sig = found.error.lock().unwrap_or_else(|e| e.into_inner()).take();
        let first = match (structural, sig) {
            (Some(a), Some(b)) => Some(
                if b.index.unwrap_or(u64::MAX) < a.index.unwrap_or(u64::MAX) {
                    b
                } else {
                    a
                },
            ),
            (a, b) => a.or(b),
        };
        if let Some(e) = first {
            return Err(e);
        }
        v.finish()
    }
}

fn read_key(s: &Option<String>) -> anyhow::Result<Option<VerifyingKey>> {
    s.as_deref()
        .map(|k| ledger_agent::keys::read_public(k).context("--ledger-key"))
        .transpose()
}

/// A checkpoint kept out of band: the JSON object `ledgerctl checkpoint --json` prints (its
/// `body` and `signature`), or an export's checkpoint line (`{"checkpoint": {...}}`).
pub fn read_held_checkpoint(path: &std::path::Path) -> anyhow::Result<v1::Checkpoint> {
    let what = || format!("--checkpoint {}", path.display());
    let text = std::fs::read_to_string(path).with_context(what)?;
    let v: serde_json::Value =
        serde_json::from_str(text.trim()).with_context(|| format!("{}: not JSON", what()))?;
    let c = v.get("checkpoint").unwrap_or(&v);
    let field = |name: &str| -> anyhow::Result<Vec<u8>> {
        let h = c.get(name).and_then(|x| x.as_str()).with_context(|| {
            format!(
                "{}: no \"{name}\" (expected the JSON of `ledgerctl checkpoint --json`)",
                what()
            )
        })?;
        hex::decode(h).with_context(|| format!("{}: {name} is not hex", what()))
    };
    Ok(v1::Checkpoint {
        body: field("body")?,
        signature: field("signature")?,
        note: c
            .get("note")
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_string(),
    })
}

pub fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    if let Some(file) = &a.evidence {
        let key = read_key(&a.ledger_key)?.context("--ledger-key: needed with --evidence")?;
        return crate::evidence::run_verify(file, &key, &a.witness_keys, json);
    }
    let trusted = Trusted {
        key: read_key(&a.ledger_key)?,
        checkpoints: a
            .held_checkpoints
            .iter()
            .map(|p| read_held_checkpoint(p))
            .collect::<anyhow::Result<_>>()?,
        witnesses: a
            .witness_keys
            .iter()
            .map(|k| crate::evidence::parse_witness_vkey(k).map_err(anyhow::Error::from))
            .collect::<anyhow::Result<_>>()?,
    };
    let start = Instant::now();
    let cpu0 = ledgerd::load::process_cpu();
    let records = AtomicU64::new(0);
    let (source, result) = if let Some(dir) = &a.data_dir {
        (
            dir.display().to_string(),
            verify_dir_counting(dir, &trusted, &records),
        )
    } else {
        let f = a.file.as_ref().expect("clap requires one source");
        (f.display().to_string(), verify_file(f, &trusted))
    };
    let ok = result.is_ok();
    let entries = result.as_ref().map_or(0, |s| s.entries);
    let elapsed = start.elapsed();
    let cpu = ledgerd::load::process_cpu();
    // The machine's own limit, measured now that the verification is over, so that the rate is
    // read as a share of it (issue 43: at least 80%).
    let ceiling = if ok && !a.no_ceiling && entries >= CEILING_MIN_ENTRIES {
        let c = crate::ceiling::Ceiling::measure(
            crate::ceiling::cores(),
            std::time::Duration::from_secs(2),
        )?;
        let cpu_after = ledgerd::load::process_cpu();
        Some(AgainstCeiling {
            ceiling: c,
            cpu: cpu
                .zip(cpu0)
                .zip(cpu_after)
                .map(|((v1, v0), c1)| (v1.saturating_sub(v0), c1.saturating_sub(v1))),
        })
    } else {
        None
    };
    let code = report(&source, result, elapsed, json, ceiling.as_ref())?;
    if let (Some(dir), true, false) = (&a.data_dir, ok, json) {
        let u = DiskUsage::of(dir)?;
        println!(
            "   {}",
            disk_line(&u, records.load(Ordering::Relaxed), entries)
        );
        let live = Store::open_existing(dir)?.live_bytes()?;
        let total: u64 = live.iter().map(|(_, _, b)| b).sum();
        println!(
            "   the chain store's records: {:.1} MB (sled's log is {:.2}x them): {}",
            total as f64 / 1e6,
            u.store_log as f64 / total.max(1) as f64,
            live.iter()
                .map(|(l, n, b)| format!("{l} {n} records {:.1} MB", *b as f64 / 1e6))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if trusted.key.is_none() && !json && ok {
        eprintln!(
            "note: no --ledger-key: the chain holds together under the key its genesis names (printed above); that it is the ledger's key is for you to check"
        );
    }
    if trusted.checkpoints.is_empty() && !json && ok {
        eprintln!(
            "note: no --checkpoint: entries after the last checkpoint above are covered by no signature you hold"
        );
    }
    Ok(code)
}

/// Verify a data directory (the ledger must be stopped: sled locks it).
pub fn verify_dir(dir: &std::path::Path, trusted: &Trusted) -> Result<Summary, VerifyError> {
    verify_dir_counting(dir, trusted, &AtomicU64::new(0))
}

/// The bytes of an entry's record as a device sent it: its body and signature encoded as an
/// `Envelope` (for a ledger record, the same two fields).
pub fn record_bytes(body: &[u8], signature: &[u8]) -> u64 {
    let field = |n: usize| {
        if n == 0 {
            0
        } else {
            1 + prost::encoding::encoded_len_varint(n as u64) + n
        }
    };
    (field(body.len()) + field(signature.len())) as u64
}

/// [`verify_dir`], adding up the entries' [`record_bytes`] in `records`.
pub fn verify_dir_counting(
    dir: &std::path::Path,
    trusted: &Trusted,
    records: &AtomicU64,
) -> Result<Summary, VerifyError> {
    verify_dir_by(dir, trusted, records, verify_stored)
}

/// How a data directory's entries `0..=last` are read and verified ([`verify_stored`]).
type ReadChain = fn(
    &std::path::Path,
    u64,
    &[v1::Checkpoint],
    &Trusted,
    &AtomicU64,
    &indicatif::ProgressBar,
) -> Result<Summary, VerifyError>;

/// [`verify_dir_counting`] with the entries read and verified by `read`.
fn verify_dir_by(
    dir: &std::path::Path,
    trusted: &Trusted,
    records: &AtomicU64,
    read: ReadChain,
) -> Result<Summary, VerifyError> {
    let store = Store::open_existing(dir).map_err(|e| {
        if e.is_disk_full() {
            // Not damage: the disk has no room for sled to open the store.
            VerifyError::general(format!("not verified: {e}"))
        } else {
            VerifyError::general(format!("the store cannot be read: {e}"))
        }
    })?;
    // With the witnesses' cosignatures the ledger kept (`[[witnesses]]`) in their notes.
    let checkpoints = store
        .all_checkpoints()
        .and_then(|cps| {
            cps.into_iter()
                .map(|cp| store.with_cosignatures(cp))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| VerifyError::general(format!("checkpoints cannot be read: {e}")))?;
    let head = store
        .head()
        .map_err(|e| VerifyError::general(format!("the head record cannot be read: {e}")))?;
    // A writer that crashed mid-group leaves that group's first writes after the head record;
    // ledgerd undoes them at its next start. They were never acknowledged: take the chain up to
    // the head record.
    let unfinished = store
        .unfinished_group()
        .map_err(|e| VerifyError::general(format!("the undo record cannot be read: {e}")))?;
    let last = match unfinished {
        Some(first) => {
            eprintln!(
                "note: the writer stopped in the middle of a group from entry {first} (never acknowledged; ledgerd undoes it at its next start); verifying up to the head record"
            );
            first.saturating_sub(1)
        }
        None => u64::MAX,
    };
    let pb = common::progress(head.map(|h| h.0 + 1).unwrap_or(0), "verifying");
    // The entries are read with the store reopened now and then, so that memory stays bounded
    // however long the chain (`ledger_store::windowed_entries`): this handle lets go of sled's
    // lock first.
    drop(store);
    let s = read(dir, last, &checkpoints, trusted, records, &pb);
    pb.finish_and_clear();
    let s = s?;
    match head {
        Some((i, h)) if i + 1 == s.entries && Some(h) == s.head_hash => Ok(s),
        Some((i, h)) => Err(VerifyError::at(
            s.entries,
            format!(
                "the store's head record says entry {i} ({}) but the chain ends at entry {} (entries missing)",
                hex32(&h),
                s.entries - 1
            ),
        )),
        None => Err(VerifyError::general("the store has no head record")),
    }
}

/// A store's error reading the chain, as verify states it.
fn unreadable(e: StoreError) -> VerifyError {
    match e {
        StoreError::CorruptEntry { index, detail } => {
            VerifyError::at(index, format!("the store cannot be read: {detail}"))
        }
        other => VerifyError::general(format!("the store cannot be read: {other}")),
    }
}

/// Verify the entries `0..=last` of the stopped ledger in `dir`, read chunk by chunk
/// ([`WindowedChunks`], memory bounded however long the chain) and in place
/// ([`Chunk::stored_entries`]: no entry decoded into a `ChainEntry`, its stored bytes its Merkle
/// leaf, its body checked where it is), with the checks and the errors of decoding them
/// (`ledger_store::windowed_entries`) and verifying those ([`verify_entries`]).
fn verify_stored(
    dir: &std::path::Path,
    last: u64,
    checkpoints: &[v1::Checkpoint],
    trusted: &Trusted,
    records: &AtomicU64,
    pb: &indicatif::ProgressBar,
) -> Result<Summary, VerifyError> {
    let (mut order, chunks) = WindowedChunks::open(dir, 0, last)
        .map_err(|e| VerifyError::general(format!("the store cannot be read: {e}")))?;
    let mut run = Verification::new(checkpoints, trusted, pb)?;
    'chunks: for c in chunks {
        // As `windowed_entries` takes them: in order, each chunk whole before any of its entries.
        let chunk = match c {
            Err(StoreError::Sled(e)) => Err(order.read_error(e)),
            Err(e) => Err(e),
            Ok(c) => order.check(c.first).map(|()| c),
        };
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                run.fail(unreadable(e));
                break;
            }
        };
        let items = match chunk.stored_entries() {
            Ok(items) => items,
            Err(e) => {
                run.fail(unreadable(e));
                break;
            }
        };
        order.advance(chunk.first, items.len());
        for item in &items {
            let f = item.fields();
            if f.index > last {
                continue;
            }
            records.fetch_add(record_bytes(f.body, f.signature), Ordering::Relaxed);
            let go = match item {
                StoredItem::InPlace(s) => run.stored(&chunk, s),
                StoredItem::Decoded(e) => run.entry(e),
            };
            if !go {
                break 'chunks;
            }
        }
    }
    run.finish()
}

/// Verify an export file.
pub fn verify_file(path: &std::path::Path, trusted: &Trusted) -> Result<Summary, VerifyError> {
    let f = std::fs::File::open(path)
        .map_err(|e| VerifyError::general(format!("cannot read {}: {e}", path.display())))?;
    let mut lines = std::io::BufReader::new(f).lines().enumerate();
    let mut next_line = || -> Result<Option<(usize, serde_json::Value)>, VerifyError> {
        match lines.next() {
            None => Ok(None),
            Some((n, Err(e))) => Err(VerifyError::general(format!("line {}: {e}", n + 1))),
            Some((n, Ok(l))) => serde_json::from_str(&l)
                .map(|v| Some((n + 1, v)))
                .map_err(|e| VerifyError::general(format!("line {}: not JSON: {e}", n + 1))),
        }
    };
    let (_, header) = next_line()?.ok_or_else(|| VerifyError::general("empty file"))?;
    if header.get("format").and_then(|f| f.as_str()) != Some(crate::export::FORMAT)
        || header.get("version").and_then(|v| v.as_u64()) != Some(1)
    {
        return Err(VerifyError::general(format!(
            "not a {} version 1 file",
            crate::export::FORMAT
        )));
    }
    let n_entries = header
        .get("entries")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| VerifyError::general("header: missing entries"))?;
    let n_cps = header
        .get("checkpoints")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| VerifyError::general("header: missing checkpoints"))?;
    let mut checkpoints = Vec::new();
    for _ in 0..n_cps {
        let (n, l) =
            next_line()?.ok_or_else(|| VerifyError::general("file ends inside the checkpoints"))?;
        let c = l
            .get("checkpoint")
            .ok_or_else(|| VerifyError::general(format!("line {n}: expected a checkpoint")))?;
        checkpoints.push(v1::Checkpoint {
            body: hexfield(c, "body", n)?,
            signature: hexfield(c, "signature", n)?,
            note: c
                .get("note")
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string(),
        });
    }
    let pb = common::progress(n_entries, "verifying");
    let mut seen = 0u64;
    let mut end: Option<serde_json::Value> = None;
    let mut tail_err: Option<VerifyError> = None;
    let entries = std::iter::from_fn(|| {
        if seen == n_entries {
            match next_line() {
                Ok(Some((_, l))) => end = l.get("end").cloned(),
                Ok(None) => {}
                Err(e) => tail_err = Some(e),
            }
            return None;
        }
        let item = match next_line() {
            Err(e) => Err(VerifyError::at(seen, e.what)),
            Ok(None) => Err(VerifyError::at(
                seen,
                format!("the file ends after {seen} of {n_entries} entries (truncated)"),
            )),
            Ok(Some((n, l))) => match l.get("entry") {
                None => Err(VerifyError::at(
                    seen,
                    format!("line {n}: expected an entry"),
                )),
                Some(e) => entry_from_json(e, n).map_err(|x| VerifyError::at(seen, x.what)),
            },
        };
        seen += 1;
        Some(item)
    });
    let s = verify_entries(&checkpoints, entries, trusted, &pb);
    pb.finish_and_clear();
    let s = s?;
    if let Some(e) = tail_err {
        return Err(e);
    }
    if let Some((n, _)) = next_line()? {
        return Err(VerifyError::general(format!(
            "line {n}: content after the end record"
        )));
    }
    // The header describes the file for readers that do not verify it: it must say what the
    // chain says.
    let key_hex = s.ledger_key.map(|k| hex::encode(k.as_bytes()));
    if header.get("ledger_public_key").and_then(|v| v.as_str()) != key_hex.as_deref()
        || header.get("ledger_id").and_then(|v| v.as_str()) != Some(s.ledger_id.as_str())
    {
        return Err(VerifyError::general(
            "the header's ledger_id or ledger_public_key is not the genesis record's",
        ));
    }
    let end = end.ok_or_else(|| VerifyError::general("the file has no end record (truncated)"))?;
    let head = s.head_hash.map(|h| hex32(&h)).unwrap_or_default();
    if end.get("entries").and_then(|v| v.as_u64()) != Some(s.entries)
        || end.get("head_hash").and_then(|v| v.as_str()) != Some(head.as_str())
    {
        return Err(VerifyError::general(
            "the end record does not match the entries",
        ));
    }
    Ok(s)
}

fn hexfield(v: &serde_json::Value, name: &str, line: usize) -> Result<Vec<u8>, VerifyError> {
    let s = v
        .get(name)
        .and_then(|x| x.as_str())
        .ok_or_else(|| VerifyError::general(format!("line {line}: missing {name}")))?;
    hex::decode(s).map_err(|e| VerifyError::general(format!("line {line}: {name}: {e}")))
}

pub(crate) fn entry_from_json(
    e: &serde_json::Value,
    line: usize,
) -> Result<v1::ChainEntry, VerifyError> {
    let num = |name: &str| {
        e.get(name)
            .and_then(|x| x.as_i64())
            .ok_or_else(|| VerifyError::general(format!("line {line}: missing {name}")))
    };
    let kind = match e.get("kind").and_then(|k| k.as_str()) {
        Some("event") => v1::RecordKind::Event,
        Some("ledger") => v1::RecordKind::Ledger,
        other => {
            return Err(VerifyError::general(format!(
                "line {line}: unknown kind {other:?}"
            )));
        }
    };
    let format = u32::try_from(num("format")?)
        .map_err(|_| VerifyError::general(format!("line {line}: format out of range")))?;
    let index = u64::try_from(num("index")?)
        .map_err(|_| VerifyError::general(format!("line {line}: negative index")))?;
    Ok(v1::ChainEntry {
        format,
        index,
        received_at_ms: num("received_at_ms")?,
        kind: kind as i32,
        body: hexfield(e, "body", line)?,
        signature: hexfield(e, "signature", line)?,
        prev_hash: hexfield(e, "prev_hash", line)?,
        entry_hash: hexfield(e, "entry_hash", line)?,
    })
}

/// Print the outcome; exit code 0 if the chain holds, 1 otherwise.
pub fn report(
    source: &str,
    result: Result<Summary, VerifyError>,
    elapsed: std::time::Duration,
    json: bool,
    ceiling: Option<&AgainstCeiling>,
) -> anyhow::Result<i32> {
    let secs = elapsed.as_secs_f64().max(1e-9);
    match result {
        Ok(s) => {
            let rate = s.entries as f64 / secs;
            if json {
                let mut j = summary_json(source, &s, secs);
                if let Some(a) = ceiling {
                    let c = &a.ceiling;
                    j["signature_ceiling"] = serde_json::json!({
                        "signatures_per_second": c.per_second,
                        "threads": c.threads,
                        "seconds": c.seconds,
                        "share": c.share(rate),
                        "cpu": a.cpu_line(s.entries, secs).map(|(_, j)| j),
                    });
                }
                println!("{j}");
            } else {
                println!(
                    "OK {source}: {} entries ({} events, {} ledger records, {} security findings), {} checkpoints, {} signers ({} revoked)",
                    s.entries,
                    s.events,
                    s.ledger_records,
                    s.security_findings,
                    s.checkpoints,
                    s.signers,
                    s.revoked
                );
                println!(
                    "   head hash {}",
                    s.head_hash.map(|h| hex32(&h)).unwrap_or_default()
                );
                println!(
                    "   Merkle root {} ({} checkpoint(s) with a tree head, each matched)",
                    s.tree_root.map(hex::encode).unwrap_or_default(),
                    s.tree_checkpoints
                );
                match &s.last_checkpoint {
                    Some(c) => println!(
                        "   last checkpoint #{} covers entry {} ({}){}",
                        c.number,
                        c.index,
                        crate::present::time(c.created_at_ms),
                        match s.held_checkpoints {
                            0 => String::new(),
                            n => format!("; {n} checkpoint(s) you hold found in it"),
                        }
                    ),
                    None => println!("   no checkpoint"),
                }
                println!(
                    "   ledger {} key {}",
                    s.ledger_id,
                    s.ledger_key
                        .map(|k| hex::encode(k.as_bytes()))
                        .unwrap_or_default()
                );
                if s.ledger_key_rotations > 0 {
                    println!(
                        "   the ledger's key was rotated {} time(s), each by a record of the key before it; key in force: {}",
                        s.ledger_key_rotations,
                        s.current_ledger_key
                            .map(|k| hex::encode(k.as_bytes()))
                            .unwrap_or_default()
                    );
                }
                if s.clock_steps > 0 {
                    println!(
                        "   {} step(s) of the ledger's clock recorded (received times go back only there)",
                        s.clock_steps
                    );
                }
                for w in &s.witnesses {
                    let (number, size) = w.newest.unwrap_or_default();
                    println!(
                        "   witness {} cosigned {} checkpoint(s), the newest #{number} ({size} entries; {} after it){}",
                        w.name,
                        w.cosigned,
                        s.entries.saturating_sub(size),
                        match w.refusals {
                            0 => String::new(),
                            n => format!("; {n} refusal(s) recorded, all before it"),
                        }
                    );
                }
                for r in &s.witness_refusals {
                    println!(
                        "   WITNESS REFUSED: {} answered {} to checkpoint #{} (tree size {}), recorded at entry {}",
                        r.witness, r.http_status, r.checkpoint_number, r.tree_size, r.index
                    );
                }
                if s.finding_reviews > 0 {
                    println!(
                        "   {} finding review(s) recorded (signed by the ledger for their principals)",
                        s.finding_reviews
                    );
                }
                println!("   verified in {secs:.2} s ({rate:.0} entries/s)");
                if let Some(a) = ceiling {
                    println!(
                        "   {}",
                        a.ceiling
                            .line_for(&format!("verify {rate:.0} entries/s"), rate)
                    );
                    if let Some((line, _)) = a.cpu_line(s.entries, secs) {
                        println!("   {line}");
                    }
                }
            }
            Ok(0)
        }
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": false, "source": source, "first_broken_index": e.index, "reason": e.what})
                );
            } else {
                match e.index {
                    Some(i) => eprintln!("FAILED {source}: first broken index {i}: {}", e.what),
                    None => eprintln!("FAILED {source}: {}", e.what),
                }
            }
            Ok(1)
        }
    }
}

pub fn summary_json(source: &str, s: &Summary, secs: f64) -> serde_json::Value {
    serde_json::json!({
        "ok": true, "source": source, "entries": s.entries, "events": s.events,
        "ledger_records": s.ledger_records, "security_findings": s.security_findings,
        "checkpoints": s.checkpoints, "signers": s.signers, "revoked": s.revoked,
        "head_hash": s.head_hash.map(|h| hex32(&h)), "ledger_id": s.ledger_id,
        "ledger_public_key": s.ledger_key.map(|k| hex::encode(k.as_bytes())),
        "ledger_key_rotations": s.ledger_key_rotations,
        "current_ledger_public_key": s.current_ledger_key.map(|k| hex::encode(k.as_bytes())),
        "payloads": s.payloads, "seconds": secs, "entries_per_second": s.entries as f64 / secs,
        "witnesses": s.witnesses.iter().map(|w| serde_json::json!({
            "name": w.name, "cosigned": w.cosigned,
            "newest_cosigned": w.newest.map(|(n, size)| serde_json::json!({"number": n, "tree_size": size})),
            "refusals": w.refusals,
        })).collect::<Vec<_>>(),
        "witness_refusals": s.witness_refusals.iter().map(|r| serde_json::json!({
            "index": r.index, "witness": r.witness, "checkpoint_number": r.checkpoint_number,
            "tree_size": r.tree_size, "http_status": r.http_status,
        })).collect::<Vec<_>>(),
        "last_checkpoint": s.last_checkpoint.as_ref().map(|c| serde_json::json!({
            "number": c.number, "index": c.index, "head_hash": hex32(&c.head_hash),
            "created_at_ms": c.created_at_ms,
        })),
        "held_checkpoints": s.held_checkpoints,
        "tree_root": s.tree_root.map(hex::encode),
        "tree_checkpoints": s.tree_checkpoints,
        "held_checkpoints": s.held_checkpoints, "clock_steps": s.clock_steps,
        "finding_reviews": s.finding_reviews,
    })
}

/// What a data directory takes on disk, by part: the chain's store (sled's log `db`, its
/// snapshot `snap.*`, its `blobs/`, `conf`), `checkpoints.log`, the audit's store (`audit/`),
/// and anything else.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DiskUsage {
    pub store_log: u64,
    pub store_other: u64,
    pub checkpoints_log: u64,
    pub audit: u64,
    pub other: u64,
}

impl DiskUsage {
    /// The files' sizes (apparent, as `du -sb` counts them) under `dir`.
    pub fn of(dir: &std::path::Path) -> anyhow::Result<DiskUsage> {
        fn size(p: &std::path::Path) -> anyhow::Result<u64> {
            let m = std::fs::symlink_metadata(p).with_context(|| p.display().to_string())?;
            if !m.is_dir() {
                return Ok(m.len());
            }
            let mut n = 0;
            for e in std::fs::read_dir(p).with_context(|| p.display().to_string())? {
                n += size(&e?.path())?;
            }
            Ok(n)
        }
        let mut u = DiskUsage::default();
        for e in std::fs::read_dir(dir).with_context(|| dir.display().to_string())? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            let n = size(&e.path())?;
            match name.as_str() {
                "db" => u.store_log += n,
                "conf" | "blobs" => u.store_other += n,
                _ if name.starts_with("snap.") => u.store_other += n,
                ledger_store::CHECKPOINT_LOG => u.checkpoints_log += n,
                "audit" => u.audit += n,
                _ => u.other += n,
            }
        }
        Ok(u)
    }

    pub fn total(&self) -> u64 {
        self.store_log + self.store_other + self.checkpoints_log + self.audit + self.other
    }
}

/// One line: the directory's bytes, their ratio to the entries' records (`records`, the sum of
/// [`record_bytes`] over `entries` entries), and the parts.
pub fn disk_line(u: &DiskUsage, records: u64, entries: u64) -> String {
    let mb = |n: u64| format!("{:.1} MB", n as f64 / 1e6);
    format!(
        "disk: {} ({} bytes) = {:.2}x the records' {} (body + signature of each entry, as an Envelope; {:.0} bytes an entry on disk): chain store {} (log) + {} (snapshot, blobs, conf), audit store {}, checkpoints.log {}, other {}",
        mb(u.total()),
        u.total(),
        u.total() as f64 / records.max(1) as f64,
        mb(records),
        u.total() as f64 / entries.max(1) as f64,
        mb(u.store_log),
        mb(u.store_other),
        mb(u.audit),
        mb(u.checkpoints_log),
        mb(u.other),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn an_entrys_record_bytes_are_its_envelopes_encoded_length() {
        for (body, sig) in [
            (0, 0),
            (1, 64),
            (72, 64),
            (127, 64),
            (128, 64),
            (70_000, 64),
        ] {
            let e = v1::ChainEntry {
                body: vec![7; body],
                signature: vec![9; sig],
                index: 5,
                prev_hash: vec![1; 32],
                entry_hash: vec![2; 32],
                ..Default::default()
            };
            let env = v1::Envelope {
                body: e.body.clone(),
                signature: e.signature.clone(),
            };
            assert_eq!(
                record_bytes(&e.body, &e.signature),
                env.encoded_len() as u64,
                "{body}+{sig}"
            );
        }
    }

    /// The entries decoded (`ledger_store::windowed_entries`) and verified as decoded entries
    /// ([`verify_entries`]): what `verify --data-dir` did before it read them in place.
    fn verify_decoded(
        dir: &std::path::Path,
        last: u64,
        checkpoints: &[v1::Checkpoint],
        trusted: &Trusted,
        records: &AtomicU64,
        pb: &indicatif::ProgressBar,
    ) -> Result<Summary, VerifyError> {
        let entries = ledger_store::windowed_entries(dir, 0, last)
            .map_err(|e| VerifyError::general(format!("the store cannot be read: {e}")))?
            .map(|r| {
                if let Ok(e) = &r {
                    records.fetch_add(record_bytes(&e.body, &e.signature), Ordering::Relaxed);
                }
                r.map_err(unreadable)
            });
        verify_entries(checkpoints, entries, trusted, pb)
    }

    /// A stopped ledger: an operator, a table it registered, and `groups` groups of 300 bets
    /// (several chunks each), each followed by a checkpoint.
    fn small_ledger(dir: &std::path::Path, groups: u64) {
        use ledger_core::proto::event_body::Payload as P;
        use ledger_store::{OpenConfig, PrincipalConfig, precheck, verify_prechecked};
        const NOW: i64 = 1_800_000_000_000;
        let op = ed25519_dalek::SigningKey::from_bytes(&[1; 32]);
        let table = ed25519_dalek::SigningKey::from_bytes(&[2; 32]);
        let cfg = OpenConfig {
            cache_capacity_bytes: 16 << 20,
            ledger_id: "test".into(),
            principals: vec![PrincipalConfig {
                id: "operator-1".into(),
                role: ledger_core::SignerRole::Operator,
                key: op.verifying_key(),
            }],
        };
        let (store, mut a) = Store::open_writer(dir, &cfg).unwrap();
        let env = |key: &ed25519_dalek::SigningKey, id: &str, sequence: u64, p: P| {
            let body = v1::EventBody {
                device_id: id.into(),
                sequence,
                occurred_at_ms: NOW,
                payload: Some(p),
            }
            .encode_to_vec();
            let signature = ledger_core::signing::sign(key, ledger_core::EVENT_DOMAIN, &body);
            v1::Envelope {
                body,
                signature: signature.to_bytes().to_vec(),
            }
        };
        let mut submit = |envs: Vec<v1::Envelope>| {
            let mut items: Vec<_> = envs
                .into_iter()
                .map(|e| precheck(&store, e, 65536, &Default::default(), NOW))
                .collect();
            verify_prechecked(&mut items);
            let (receipts, _) = a.apply(items, NOW).unwrap();
            assert!(
                receipts
                    .iter()
                    .all(|r| r.status == v1::ReceiptStatus::Accepted as i32)
            );
            store.sync().unwrap();
            let (i, h) = store.head().unwrap().unwrap();
            store.write_checkpoint(i, &h, NOW, "test").unwrap();
        };
        submit(vec![env(
            &op,
            "operator-1",
            1,
            P::DeviceRegistered(v1::DeviceRegistered {
                device_id: "table-1".into(),
                public_key: table.verifying_key().as_bytes().to_vec(),
                kind: v1::DeviceKind::Table as i32,
                casino_id: "lisboa".into(),
                table_ids: vec!["t1".into()],
                ..Default::default()
            }),
        )]);
        for g in 0..groups {
            submit(
                (1..=300)
                    .map(|n| {
                        env(
                            &table,
                            "table-1",
                            g * 300 + n,
                            P::BetPlaced(v1::BetPlaced {
                                table_id: "t1".into(),
                                round_id: "r1".into(),
                                bet_id: format!("b{n}"),
                                bet_type: "straight".into(),
                                selection: vec![17],
                                amount_cents: 500,
                                ..Default::default()
                            }),
                        )
                    })
                    .collect(),
            );
        }
    }

    /// The chunks of the stopped ledger in `dir`, as stored.
    fn stored_chunks(dir: &std::path::Path) -> Vec<(u64, Vec<u8>)> {
        let s = Store::open_existing(dir).unwrap();
        let (_, chunks) = s.chunks(0, u64::MAX);
        chunks
            .map(|c| {
                let c = c.unwrap();
                (c.first, c.bytes().to_vec())
            })
            .collect()
    }

    fn overwrite(dir: &std::path::Path, first: u64, bytes: &[u8]) {
        Store::open_existing(dir)
            .unwrap()
            .overwrite_chunk_for_tests(first, bytes)
            .unwrap();
    }

    /// Both ways of verifying `dir`: read in place and decoded (as `{:?}`, with the records
    /// counted).
    fn both_ways(dir: &std::path::Path) -> (String, String) {
        let run = |read: ReadChain| {
            let records = AtomicU64::new(0);
            let r = verify_dir_by(dir, &Trusted::default(), &records, read);
            format!("{r:?} {}", records.load(Ordering::Relaxed))
        };
        (run(verify_stored), run(verify_decoded))
    }

    /// Any damage to a stored chunk (changed, cut or added bytes, of either chunk format, or
    /// entries encoded as prost would not encode them) is found in place at the same index
    /// with the same words as by decoding the entries, and what verifies one way verifies the
    /// other with the same summary.
    #[test]
    fn verifying_in_place_finds_what_verifying_decoded_entries_finds() {
        let d = tempfile::tempdir().unwrap();
        small_ledger(d.path(), 3);
        let (stored, decoded) = both_ways(d.path());
        assert_eq!(stored, decoded);
        assert!(stored.starts_with("Ok(Summary { entries: 903,"), "{stored}");
        assert!(stored.contains("tree_checkpoints: 4"), "{stored}");
        let chunks = stored_chunks(d.path());
        assert!(chunks.len() >= 6, "{}", chunks.len());
        // splitmix64: reproducible cases.
        let mut seed = 0x43u64;
        let mut next = |n: usize| -> usize {
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n.max(1) as u64) as usize
        };
        let mut refused = 0;
        for case in 0..48 {
            let (first, original) = &chunks[next(chunks.len())];
            let mut b = original.clone();
            match case % 6 {
                // Bytes changed anywhere, or in the entries' framing and fields (the start of
                // the chunk), or in an entry's hashes (its end).
                0 | 1 => {
                    for _ in 0..1 + next(3) {
                        let i = next(b.len());
                        b[i] ^= 1 << next(8);
                    }
                }
                2 => {
                    let i = next(12.min(b.len()));
                    b[i] ^= 1 << next(8);
                }
                3 => {
                    let i = b.len() - 1 - next(70);
                    b[i] ^= 1 << next(8);
                }
                4 => b.truncate(next(b.len())),
                _ => {
                    let i = next(b.len());
                    b.insert(i, next(256) as u8);
                }
            }
            overwrite(d.path(), *first, &b);
            let (stored, decoded) = both_ways(d.path());
            assert_eq!(stored, decoded, "case {case}");
            refused += usize::from(stored.starts_with("Err"));
            overwrite(d.path(), *first, original);
        }
        assert!(refused >= 40, "{refused} of 48 damaged chunks refused");

        // A chunk of the first format (no linked records), and in it an entry with an unknown
        // field, which prost reads but would not write (the verifier's leaf is the entry
        // encoded again): both verify, both ways, with the same summary.
        let (first, original) = &chunks[1];
        let c = Store::open_existing(d.path())
            .unwrap()
            .chunks(*first, *first)
            .1
            .next()
            .unwrap()
            .unwrap();
        let entries = c.decode().unwrap();
        let unlinked = |odd: Option<usize>| {
            let mut v = Vec::new();
            for (n, e) in entries.iter().enumerate() {
                let mut b = e.encode_to_vec();
                if odd == Some(n) {
                    b.extend_from_slice(&[0x50, 1]);
                }
                v.extend_from_slice(&(b.len() as u32).to_be_bytes());
                v.extend_from_slice(&b);
            }
            v
        };
        for odd in [None, Some(0), Some(3)] {
            overwrite(d.path(), *first, &unlinked(odd));
            let store = Store::open_existing(d.path()).unwrap();
            let c = store.chunks(*first, *first).1.next().unwrap().unwrap();
            let in_place: Vec<bool> = c
                .stored_entries()
                .unwrap()
                .iter()
                .map(|i| matches!(i, StoredItem::InPlace(_)))
                .collect();
            assert_eq!(in_place.len(), entries.len());
            for (n, in_place) in in_place.into_iter().enumerate() {
                assert_eq!(in_place, odd != Some(n), "entry {n} of {odd:?}");
            }
            drop((c, store));
            let (stored, decoded) = both_ways(d.path());
            assert_eq!(stored, decoded, "{odd:?}");
            assert!(stored.starts_with("Ok(Summary { entries: 903,"), "{stored}");
        }
        overwrite(d.path(), *first, original);
        assert_eq!(both_ways(d.path()), (stored.clone(), stored));
    }

    /// A batch checked by a worker or by the reading thread records its smallest bad index,
    /// whatever the order the batches come in.
    #[test]
    fn signature_findings_keep_the_smallest_bad_index() {
        use ledger_core::signing::{EVENT_DOMAIN, SignatureCheck, sign, signed_message};
        let k = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
        let batch = |indexes: std::ops::Range<u64>, bad: &[u64]| -> Batch {
            let mut b = Batch::default();
            indexes
                .map(|i| {
                    let body = i.to_le_bytes();
                    let mut message = signed_message(EVENT_DOMAIN, &body);
                    let signature = sign(&k, EVENT_DOMAIN, &body);
                    if bad.contains(&i) {
                        message[EVENT_DOMAIN.len()] ^= 1;
                    }
                    PendingSignature {
                        index: i,
                        what: "device signature",
                        check: SignatureCheck {
                            message,
                            signature,
                            key: k.verifying_key(),
                        },
                    }
                })
                .for_each(|p| b.push_pending(p));
            b
        };
        let f = SignatureFindings::new();
        f.check(&batch(0..10, &[]));
        assert_eq!(f.first_bad.load(Ordering::SeqCst), u64::MAX);
        assert!(f.error.lock().unwrap().is_none());
        f.check(&batch(20..30, &[27, 22]));
        assert_eq!(f.first_bad.load(Ordering::SeqCst), 22);
        f.check(&batch(10..20, &[15]));
        f.check(&batch(30..40, &[31]));
        assert_eq!(f.first_bad.load(Ordering::SeqCst), 15);
        assert_eq!(
            f.error.lock().unwrap().clone(),
            Some(VerifyError::at(15, "bad device signature"))
        );
    }

    /// The CPU line: µs of CPU an entry against µs a signature in the ceiling, and the cores.
    #[test]
    fn the_cpu_line_compares_cpu_an_entry_with_cpu_a_signature() {
        use std::time::Duration;
        let a = AgainstCeiling {
            ceiling: crate::ceiling::Ceiling {
                per_second: 400_000.0,
                threads: 2,
                seconds: 2.0,
            },
            cpu: Some((Duration::from_secs(10), Duration::from_secs(4))),
        };
        // 10 s for 2 M entries in 6.25 s; 4 s for 800,000 signatures.
        let (line, j) = a.cpu_line(2_000_000, 6.25).unwrap();
        assert_eq!(
            line,
            "cpu: 5.00 µs an entry on 1.60 cores; the ceiling 5.00 µs a signature on 2.00 cores (by CPU time, verify is 100.0% of it)"
        );
        assert_eq!(j["verify_cpu_us_per_entry"], 5.0);
        assert!(a.cpu_line(0, 1.0).is_none());
        let none = AgainstCeiling { cpu: None, ..a };
        assert!(none.cpu_line(2_000_000, 6.25).is_none());
    }

    #[test]
    fn a_data_directorys_bytes_are_counted_by_part() {
        let d = tempfile::tempdir().unwrap();
        let put = |p: &str, n: usize| {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, vec![0u8; n]).unwrap();
        };
        put("db", 1000);
        put("conf", 10);
        put("snap.00000001", 20);
        put("blobs/17", 300);
        put("checkpoints.log", 40);
        put("audit/db", 500);
        put("audit/blobs/3", 60);
        put("ledgerd.toml", 7);
        let u = DiskUsage::of(d.path()).unwrap();
        assert_eq!(
            u,
            DiskUsage {
                store_log: 1000,
                store_other: 330,
                checkpoints_log: 40,
                audit: 560,
                other: 7,
            }
        );
        assert_eq!(u.total(), 1937);
        let line = disk_line(&u, 1937 / 2 + 1, 10);
        assert!(line.contains("(1937 bytes) = 2.00x"), "{line}");
        assert!(line.contains("194 bytes an entry"), "{line}");
    }
}
