//! The writer pipeline: durable group commit across every ingest stream.
//!
//! ```text
//!  streams ──precheck──(item, reply)──▶ [A] batch-verify ──▶ [B] apply ──▶ [C] sync ──▶ receipts
//!  in each stream's task:                threads "ledger-     thread: one   2 threads: sled flush
//!  decode, fields, time, key,            verify-N": one        sled batch    + fsync of `db`, then
//!  signature prepared                    multiscalar a group                 answer, in order
//! ```
//!
//! * Each stream's task prechecks its envelope as it arrives ([`Ledger::submit`]): decoding,
//!   field and time checks, the signer's key, and the signature's preparation (R decoded, the
//!   challenge hashed), all independent of other envelopes.
//! * A (the primary verifier) takes whatever is queued (up to `max_batch`) as one group, so the
//!   group grows with load. At moderate load it lets a small group fill while envelopes keep
//!   coming, for at most `ingest.coalesce_us`, and when ledgerd is busy it first holds a small
//!   group for up to `ingest.hold_us` ([`Coalesce`], [`crate::load`]). A group of 512+ is cut into
//!   parts that the helper verifiers check at the same time; B puts the parts back in order.
//!   While A verifies group k+1, B and C are applying and syncing group k.
//! * C (two sync threads) covers every group applied and waiting with one flush + fsync, and
//!   only then sends their receipts: nothing is acknowledged before it is durable. A second
//!   sync may start while the first waits for the disk; whichever ends first releases, in
//!   order, every group it covers.
//! * A sync error is fatal: C stops, every waiting and later submission gets UNAVAILABLE, and
//!   the `fatal` signal tells the server to exit (systemd restarts it; startup re-verifies the
//!   tail). An fsync is never retried.
//! * An append error is fatal too, but the groups before it may still be durable: the failed
//!   group and every later one go through C as [`Applied::Refused`], so their UNAVAILABLE
//!   answers come after the receipts of the groups before them, in the same order (a stream
//!   ends at its first error, and must first get every receipt it is owed).
//! * Checkpoint requests travel the same path, so a checkpoint covers exactly the entries
//!   before it, after they are durable.
//! * Each group carries when it passed each stage ([`Stamps`]), each envelope's reply when it
//!   was taken off its stream; the sync threads record both as they release the receipts
//!   ([`IngestStats`]: `Query.GetIngestStats`, `ledgerctl status`, the metrics endpoint).

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use ledger_core::proto as v1;
use ledger_core::{Hash32, TimePolicy};
use ledger_store::{
    Appender, PreOutcome, Store, WindowClock, monotonic_ms, now_ms, precheck_within,
    verify_prechecked,
};
use tokio::sync::{mpsc, oneshot, watch};
use tonic::Status;

use crate::stats::IngestStats;

/// A receipt, or why there is none.
pub type ReceiptResult = Result<v1::Receipt, Status>;

/// Where an envelope's receipt goes: to one waiting caller, or onto its ingest stream's queue of
/// receipts (which the pipeline fills in the stream's order) with the envelope's position in the
/// stream. A reply dropped unanswered (the ledger stopped) answers UNAVAILABLE. It keeps when
/// its envelope was taken off the stream, for the receipt latency in [`IngestStats`].
pub struct Reply(Option<Sink>, Instant);

enum Sink {
    One(oneshot::Sender<ReceiptResult>),
    Stream {
        to: Arc<StreamReceipts>,
        position: u64,
    },
}

/// One ingest stream's queue of receipts. A durable group's receipts for one stream go onto it
/// as one batch, so the stream's task is woken once per group, not once per receipt. (Woken per
/// receipt, the task's worker thread preempted the sync thread after every receipt it sent: two
/// context switches per event at half load.)
///
/// It also keeps whether the stream has shown it holds a device key: its last verdict on a
/// signature was an accepted envelope, not a bad signature. Until then its envelopes are batch
/// checked apart from the others ([`PreOutcome::mark_untrusted`]), so that a client without a
/// key cannot make every group pay for its bad signatures.
pub struct StreamReceipts {
    tx: mpsc::UnboundedSender<Vec<ReceiptResult>>,
    proven: std::sync::atomic::AtomicBool,
    /// The stream was ended: later receipts are dropped ([`StreamReceipts::close`]).
    closed: std::sync::atomic::AtomicBool,
}

/// The reading end of a [`StreamReceipts`]: batches of receipts, in the stream's order.
pub type ReceiptBatches = mpsc::UnboundedReceiver<Vec<ReceiptResult>>;

impl StreamReceipts {
    /// A stream's queue, and the end that its response reads.
    pub fn channel() -> (Arc<StreamReceipts>, ReceiptBatches) {
        let (tx, rx) = mpsc::unbounded_channel();
        let proven = std::sync::atomic::AtomicBool::new(false);
        let closed = std::sync::atomic::AtomicBool::new(false);
        (Arc::new(StreamReceipts { tx, proven, closed }), rx)
    }

    /// The stream was ended (its client left its receipts unread): receipts still to come for
    /// it are dropped, not queued.
    pub fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The last batch for a closed stream (its error), queued whatever [`StreamReceipts::close`]
    /// said.
    pub fn send_final(&self, batch: Vec<ReceiptResult>) {
        let _ = self.tx.send(batch);
    }

    /// Queue receipts (or a stream error) after those queued before.
    pub fn send(&self, batch: Vec<ReceiptResult>) {
        let verdict = batch.iter().rev().find_map(|r| match r {
            Ok(r) if r.status == v1::ReceiptStatus::Accepted as i32 => Some(true),
            Ok(r) if r.reason == v1::RejectReason::BadSignature as i32 => Some(false),
            _ => None,
        });
        if let Some(proven) = verdict {
            self.proven
                .store(proven, std::sync::atomic::Ordering::Relaxed);
        }
        if !self.closed.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = self.tx.send(batch);
        }
    }

    /// Whether the stream has shown it holds a device key (see [`StreamReceipts`]).
    pub fn proven(&self) -> bool {
        self.proven.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Reply {
    /// The receipt goes onto a stream's queue, tagged with `position`.
    pub fn to_stream(to: Arc<StreamReceipts>, position: u64) -> Reply {
        Reply(Some(Sink::Stream { to, position }), Instant::now())
    }

    fn send(self, r: ReceiptResult) {
        let mut out = Outbox::default();
        out.add(self, r);
        out.send();
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if self.0.is_some() {
            let r = Err(Status::unavailable("the ledger stopped before answering"));
            Reply(self.0.take(), self.1).send(r);
        }
    }
}

/// Receipts on their way out, gathered per ingest stream (in each stream's order) so that each
/// stream gets one batch.
#[derive(Default)]
struct Outbox {
    /// A stream's queue (by address) → its place in `batches`.
    place: std::collections::HashMap<usize, usize>,
    batches: Vec<(Arc<StreamReceipts>, Vec<ReceiptResult>)>,
}

impl Outbox {
    fn add(&mut self, mut reply: Reply, r: ReceiptResult) {
        match reply.0.take() {
            Some(Sink::One(tx)) => {
                let _ = tx.send(r);
            }
            Some(Sink::Stream { to, position }) => {
                let r = r.map(|mut r| {
                    r.position = position;
                    r
                });
                let batches = &mut self.batches;
                let i = *self
                    .place
                    .entry(Arc::as_ptr(&to) as usize)
                    .or_insert_with(|| {
                        batches.push((to.clone(), Vec::new()));
                        batches.len() - 1
                    });
                batches[i].1.push(r);
            }
            None => {}
        }
    }

    fn send(self) {
        for (to, batch) in self.batches {
            to.send(batch);
        }
    }
}

type CheckpointReply = oneshot::Sender<Result<v1::Checkpoint, Status>>;

/// What ends a group: a checkpoint request, or a record of the ledger's own to append after it
/// (a finding review), answered like an envelope once durable.
enum Control {
    Checkpoint(&'static str, CheckpointReply),
    Record(Box<v1::ledger_record_body::Record>, Reply),
}
/// A prechecked group on its way to the appender, with its replies and an optional checkpoint
/// request that follows it.
type Group = (Vec<PreOutcome>, Vec<Reply>, Option<Control>);

enum Msg {
    /// An envelope, and its share of the queue's bytes ([`PipelineConfig::queue_bytes`]), given
    /// back when the verifier takes it.
    Event(PreOutcome, Reply, Option<QueueBytes>),
    Checkpoint(&'static str, CheckpointReply),
    Record(Box<v1::ledger_record_body::Record>, Reply),
}

enum Applied {
    Group {
        receipts: Vec<v1::Receipt>,
        replies: Vec<Reply>,
        head: (u64, Hash32),
        stamps: Stamps,
    },
    Checkpoint(&'static str, CheckpointReply),
    /// A record of the ledger's own ([`Ledger::append_record`]): answered once durable, like a
    /// group, but not counted in the ingest figures (it is not a device's event).
    Record {
        receipt: Box<v1::Receipt>,
        reply: Reply,
        head: (u64, Hash32),
    },
    /// A group (or checkpoint request) the appender did not apply, because an append failed (at
    /// it or before it) or a sync did. Released in its turn, after the groups before it have
    /// settled: its replies answer UNAVAILABLE, and nothing is acknowledged after it.
    Refused {
        replies: Vec<Reply>,
        control: Option<Control>,
        why: String,
    },
}

/// Tuning of the pipeline.
#[derive(Clone, Debug)]
pub struct PipelineConfig {
    pub max_batch: usize,
    /// How the primary verifier lets a small group fill at moderate load (see [`Coalesce`]).
    pub coalesce: Coalesce,
    pub queue_capacity: usize,
    /// Most bytes of envelopes in the queue at once; a stream waits for room beyond it.
    pub queue_bytes: usize,
    pub max_body_bytes: usize,
    pub time: TimePolicy,
    /// `ingest.clock_step_threshold_ms`; 0: the wall clock is not watched (tests that give
    /// the appender times of their own).
    pub clock_step_threshold_ms: u64,
    /// `ingest.signed_receipts`.
    pub signed_receipts: bool,
}

/// Room in the queue for one envelope's bytes ([`PipelineConfig::queue_bytes`]).
type QueueBytes = tokio::sync::OwnedSemaphorePermit;

/// The queue's byte budget is counted in these units (a semaphore's permits are `u32`).
const QUEUE_UNIT: usize = 1024;

/// Handle to the writer. Cheap to clone.
#[derive(Clone)]
pub struct Ledger {
    tx: mpsc::Sender<Msg>,
    queue_bytes: Arc<tokio::sync::Semaphore>,
    /// The semaphore's permits in all: no envelope waits for more.
    queue_units: u32,
    store: Arc<Store>,
    max_body_bytes: usize,
    time: TimePolicy,
    /// The reference times of the time window ([`WindowClock`]).
    window: Arc<WindowClock>,
    durable: watch::Receiver<(u64, Hash32)>,
    fatal: watch::Receiver<Option<String>>,
    stats: Arc<IngestStats>,
    /// Set when this ledgerd is a mirror ([`Ledger::read_only`]).
    mirror: Option<Arc<crate::mirror::Status>>,
    /// The sync stage, for checkpoints of what is acknowledged ([`Ledger::checkpoint_acknowledged`]);
    /// `None` in a mirror.
    syncs: Option<Arc<Syncs>>,
}

fn unavailable(fatal: &watch::Receiver<Option<String>>) -> Status {
    match &*fatal.borrow() {
        Some(m) => Status::unavailable(format!(
            "the ledger stopped acknowledging after a storage failure: {m}"
        )),
        None => Status::unavailable("the ledger is shutting down"),
    }
}

impl Ledger {
    /// Start the pipeline over an opened store.
    pub fn start(appender: Appender, cfg: PipelineConfig) -> Ledger {
        let store = appender.store().clone();
        Ledger::start_syncing(appender, cfg, Box::new(move || store.sync()))
    }

    /// [`Ledger::start`], with receipts that wait for mirrors too ([`crate::mirror::replication`]).
    pub fn start_replicated(
        appender: Appender,
        cfg: PipelineConfig,
        gate: Option<Arc<crate::mirror::replication::Gate>>,
    ) -> Ledger {
        let store = appender.store().clone();
        Ledger::start_gated(appender, cfg, Box::new(move || store.sync()), gate)
    }

    /// [`Ledger::start`], with `sync` making the store durable (a test's own, to script failures).
    fn start_syncing(appender: Appender, cfg: PipelineConfig, sync: SyncFn) -> Ledger {
        Ledger::start_gated(appender, cfg, sync, None)
    }

    fn start_gated(
        mut appender: Appender,
        cfg: PipelineConfig,
        sync: SyncFn,
        replication: Option<Arc<crate::mirror::replication::Gate>>,
    ) -> Ledger {
        let store = appender.store().clone();
        let window = Arc::new(WindowClock::new(appender.last_received_at_ms(), now_ms()));
        let head = appender.head().expect("an opened ledger has a genesis");
        let (tx, rx) = mpsc::channel(cfg.queue_capacity);
        let (max_body_bytes, time) = (cfg.max_body_bytes, cfg.time);
        let queue_units = (cfg.queue_bytes / QUEUE_UNIT).clamp(1, u32::MAX as usize) as u32;
        let (durable_tx, durable) = watch::channel(head);
        let (fatal_tx, fatal) = watch::channel(None);
        let (b_tx, b_rx) = std_mpsc::sync_channel::<Part>(2);
        let stats = Arc::new(IngestStats::default());
        appender.sign_receipts(cfg.signed_receipts);
        if cfg.clock_step_threshold_ms > 0 {
            appender.watch_clock(
                cfg.clock_step_threshold_ms,
                monotonic_ms(),
                stats.clock_steps(),
            );
        }
        verifiers(rx, b_tx, cfg.max_batch, cfg.coalesce, stats.clone());
        let syncs = Arc::new(Syncs {
            store: store.clone(),
            sync,
            state: std::sync::Mutex::new(SyncState::default()),
            changed: std::sync::Condvar::new(),
            releasing: std::sync::Mutex::new(false),
            durable: durable_tx,
            fatal: fatal_tx.clone(),
            slow: std::sync::Mutex::new(SlowSyncs::default()),
            stats: stats.clone(),
            replication,
        });
        let feed = SyncFeed(syncs.clone());
        std::thread::Builder::new()
            .name("ledger-apply".into())
            .spawn(move || stage_b(appender, b_rx, feed, fatal_tx))
            .expect("spawn apply thread");
        for i in 0..SYNCS_IN_FLIGHT {
            let syncs = syncs.clone();
            std::thread::Builder::new()
                .name(format!("ledger-sync-{i}"))
                .spawn(move || syncs.run())
                .expect("spawn sync thread");
        }
        Ledger {
            tx,
            queue_bytes: Arc::new(tokio::sync::Semaphore::new(queue_units as usize)),
            queue_units,
            store,
            max_body_bytes,
            time,
            window,
            durable,
            fatal,
            stats,
            mirror: None,
            syncs: Some(syncs),
        }
    }

    /// A ledger that only serves what `store` holds: a mirror's. Every envelope submitted and
    /// every checkpoint requested is refused with FAILED_PRECONDITION and `refusal`; the
    /// returned sender advances the durable head as the mirror stores verified entries.
    pub fn read_only(
        store: Arc<Store>,
        head: (u64, Hash32),
        refusal: String,
        status: Arc<crate::mirror::Status>,
    ) -> (Ledger, watch::Sender<(u64, Hash32)>) {
        let (tx, mut rx) = mpsc::channel::<Msg>(1024);
        let (durable_tx, durable) = watch::channel(head);
        let (_fatal_tx, fatal) = watch::channel(None);
        let last = store
            .entry(head.0)
            .ok()
            .flatten()
            .map_or(now_ms(), |e| e.received_at_ms);
        tokio::spawn(async move {
            let _keep = _fatal_tx;
            while let Some(m) = rx.recv().await {
                let why = Status::failed_precondition(refusal.clone());
                match m {
                    Msg::Event(_, reply, _) => reply.send(Err(why)),
                    Msg::Checkpoint(_, r) => {
                        let _ = r.send(Err(why));
                    }
                    Msg::Record(_, reply) => reply.send(Err(why)),
                }
            }
        });
        let ledger = Ledger {
            tx,
            queue_bytes: Arc::new(tokio::sync::Semaphore::new(1024)),
            queue_units: 1024,
            store,
            max_body_bytes: 64 * 1024,
            time: TimePolicy::default(),
            window: Arc::new(WindowClock::new(last, now_ms())),
            durable,
            fatal,
            stats: Arc::new(IngestStats::default()),
            mirror: Some(status),
            syncs: None,
        };
        (ledger, durable_tx)
    }

    /// The mirror's state, when this ledgerd is a mirror.
    pub fn mirror(&self) -> Option<&Arc<crate::mirror::Status>> {
        self.mirror.as_ref()
    }

    /// Submit one envelope; the receiver yields its receipt once it is decided and durable.
    ///
    /// The order-independent checks and the signature's preparation (decoding, field and time
    /// checks, the signer's key, R decoded and the challenge hashed: about half of verifying the
    /// signature) run here, in the caller's task, on whichever core is free while the envelope
    /// would otherwise wait for its group; the group's batch check is then one multiscalar
    /// multiplication.
    pub async fn submit(&self, env: v1::Envelope) -> oneshot::Receiver<ReceiptResult> {
        let (tx, rx) = oneshot::channel();
        self.submit_to(env, Reply(Some(Sink::One(tx)), Instant::now()))
            .await;
        rx
    }

    /// [`Ledger::submit`], with the receipt sent to `reply`.
    pub async fn submit_to(&self, env: v1::Envelope, reply: Reply) {
        let bytes = env.body.len() + env.signature.len();
        let nows = self.window.nows(now_ms());
        let mut item = precheck_within(&self.store, env, self.max_body_bytes, &self.time, &nows);
        if let Some(Sink::Stream { to, .. }) = &reply.0
            && !to.proven()
        {
            item.mark_untrusted();
            self.stats.unproven();
        }
        // A refused envelope keeps no bytes. One that passed has at most `max_body_bytes` (64
        // KiB) of body and 64 of signature, far less than the smallest configured budget (1
        // MiB); were the budget smaller, an envelope would wait for all of it, not forever.
        let room = match &item {
            PreOutcome::Ready(_) => {
                let units = (bytes.div_ceil(QUEUE_UNIT) as u32).clamp(1, self.queue_units);
                // The semaphore is never closed: this only waits for room.
                self.queue_bytes
                    .clone()
                    .acquire_many_owned(units)
                    .await
                    .ok()
            }
            PreOutcome::Rejected(_) => None,
        };
        if let Err(mpsc::error::SendError(Msg::Event(_, reply, _))) =
            self.tx.send(Msg::Event(item, reply, room)).await
        {
            reply.send(Err(unavailable(&self.fatal)));
        }
    }

    /// Sign a checkpoint of everything submitted before this call, once it is durable.
    pub async fn checkpoint(&self, reason: &'static str) -> Result<v1::Checkpoint, Status> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Checkpoint(reason, reply))
            .await
            .map_err(|_| unavailable(&self.fatal))?;
        rx.await.map_err(|_| unavailable(&self.fatal))?
    }

    /// Sign a checkpoint of everything acknowledged before this call: of the durable head once
    /// the groups already applied are durable, without waiting for the envelopes still queued
    /// or being verified (under load [`Ledger::checkpoint`] waits for the whole queue, up to
    /// `ingest.max_in_flight_total` envelopes: seconds on a slow disk). The request joins the
    /// sync stage's queue, so it is written in order with the receipts, and a failed write
    /// stops the ledger as any checkpoint's does. A mirror refuses it.
    pub async fn checkpoint_acknowledged(
        &self,
        reason: &'static str,
    ) -> Result<v1::Checkpoint, Status> {
        let Some(syncs) = &self.syncs else {
            return self.checkpoint(reason).await;
        };
        let (reply, rx) = oneshot::channel();
        syncs.push_control(Applied::Checkpoint(reason, reply));
        rx.await.map_err(|_| unavailable(&self.fatal))?
    }

    /// Append a record of the ledger's own (signed with the ledger key) after everything
    /// submitted before this call; the receipt names its entry once it is durable.
    pub async fn append_record(&self, record: v1::ledger_record_body::Record) -> ReceiptResult {
        let (tx, rx) = oneshot::channel();
        let reply = Reply(Some(Sink::One(tx)), Instant::now());
        if let Err(mpsc::error::SendError(Msg::Record(_, reply))) =
            self.tx.send(Msg::Record(Box::new(record), reply)).await
        {
            reply.send(Err(unavailable(&self.fatal)));
        }
        rx.await.map_err(|_| unavailable(&self.fatal))?
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The last durable entry (index, hash); changes as groups become durable.
    pub fn durable(&self) -> watch::Receiver<(u64, Hash32)> {
        self.durable.clone()
    }

    /// Becomes `Some(reason)` when the pipeline stopped after a storage failure.
    pub fn fatal(&self) -> watch::Receiver<Option<String>> {
        self.fatal.clone()
    }

    /// Ingest figures since the pipeline started.
    pub fn stats(&self) -> &IngestStats {
        &self.stats
    }
}

/// A part of a group on its way from the verifiers to the appender: (group number, part, parts,
/// the part, when it passed the stages so far).
type Part = (u64, usize, usize, Group, Stamps);

/// When a group (or a part of one) passed each stage, for the stage figures of [`IngestStats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamps {
    /// The verifier closed the group (stopped gathering).
    pub closed: Instant,
    /// Its batch check ended.
    pub verified: Instant,
    /// The appender had appended it.
    pub applied: Instant,
}

impl Stamps {
    fn closed_at(t: Instant) -> Stamps {
        Stamps {
            closed: t,
            verified: t,
            applied: t,
        }
    }
}

/// Groups at least this large are cut into parts verified on several threads at once (see
/// [`verifiers`]).
const SPLIT_AT: usize = 512;

/// How the primary verifier lets a small group fill before verifying it.
///
/// At moderate load the envelopes come in small bursts (every agent sends what it has), and a
/// verifier that took only what was queued when it woke made groups of a handful: at half of the
/// peak on the 2-core development VM about 18 envelopes a group, 3,300 groups and 1,700 syncs a
/// second, each group paying its own thread wake-ups, batch setup, sled writes and sync. So when
/// the group is smaller than `enough`, the verifier sleeps [`COALESCE_STEP`] and takes what
/// came meanwhile, and goes on while every step brings something, until the group has `enough`
/// or `max_wait` has passed since it woke. A step that brings nothing ends the wait: an
/// envelope that arrives alone waits one step, about 60 µs, not `max_wait`. Under heavy load
/// the queue already holds `enough` and nothing waits. `max_wait` zero turns it off.
///
/// Before those steps, when ledgerd is busy, the verifier holds a group smaller than `enough`
/// for up to `hold` in one sleep, however the envelopes come, so that it takes in the next
/// bursts too ([`crate::load`]: nothing while ledgerd uses under 35% of the machine's cores, the
/// whole `hold` from 60%). `hold` zero turns that off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coalesce {
    pub max_wait: Duration,
    pub enough: usize,
    pub hold: Duration,
}

impl Coalesce {
    /// No waiting: a group is what was queued when the verifier woke.
    pub const OFF: Coalesce = Coalesce {
        max_wait: Duration::ZERO,
        enough: 1,
        hold: Duration::ZERO,
    };
}

/// One step of [`Coalesce`]'s wait. The verifier thread asks the kernel for exact timers
/// ([`precise_sleeps`]), so a step is about this long rather than this plus Linux's default
/// 50 µs of timer slack.
pub const COALESCE_STEP: Duration = Duration::from_micros(50);

/// Ask Linux to wake this thread's sleeps on time (timer slack 1 ns instead of 50 µs), so that
/// [`COALESCE_STEP`] is what the verifier waits. Elsewhere, or if refused, sleeps are only longer.
fn precise_sleeps() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes only the calling
        // thread's timer slack; no memory is passed.
        let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        if r != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "timer slack unchanged");
        }
    }
}

/// Gather one group after `first`: everything `take` has queued (up to `max_batch`, ending at a
/// checkpoint request); then, while the group is small, what arrives during `hold` (this group's
/// share of [`Coalesce::hold`], from how busy ledgerd is), and what arrives in further steps of
/// [`COALESCE_STEP`] (see [`Coalesce`]). `now` and `sleep` are the clock (parameters so that
/// tests can run the wait on a clock of their own).
fn gather(
    first: Msg,
    take: &mut dyn FnMut() -> Option<Msg>,
    max_batch: usize,
    coalesce: Coalesce,
    hold: Duration,
    now: &dyn Fn() -> Instant,
    sleep: &mut dyn FnMut(Duration),
) -> Group {
    // Adds `next` and what is queued after it.
    fn add(
        g: &mut Group,
        mut next: Option<Msg>,
        take: &mut dyn FnMut() -> Option<Msg>,
        max_batch: usize,
    ) {
        while let Some(m) = next.take() {
            match m {
                Msg::Event(item, reply, room) => {
                    g.0.push(item);
                    g.1.push(reply);
                    drop(room);
                }
                Msg::Checkpoint(why, reply) => {
                    g.2 = Some(Control::Checkpoint(why, reply));
                    break;
                }
                Msg::Record(record, reply) => {
                    g.2 = Some(Control::Record(record, reply));
                    break;
                }
            }
            if g.0.len() < max_batch {
                next = take();
            }
        }
    }
    let mut g: Group = (Vec::new(), Vec::new(), None);
    add(&mut g, Some(first), take, max_batch);
    let enough = coalesce.enough.min(max_batch);
    if !hold.is_zero() && g.2.is_none() && g.0.len() < enough {
        // One sleep, however the envelopes come: waking at every burst to look would cost
        // what the hold saves. A rise to heavy load waits one hold; after it, the queue holds
        // enough and nothing is held.
        sleep(hold);
        let next = take();
        add(&mut g, next, take, max_batch);
    }
    if coalesce.max_wait.is_zero() {
        return g;
    }
    let deadline = now() + coalesce.max_wait;
    while g.2.is_none() && g.0.len() < enough {
        let left = deadline.saturating_duration_since(now());
        if left.is_zero() {
            break;
        }
        sleep(COALESCE_STEP.min(left));
        match take() {
            // Nothing came in a whole step: the burst is over.
            None => break,
            next => add(&mut g, next, take, max_batch),
        }
    }
    g
}

/// Verifier threads. The primary takes everything queued (up to `max_batch`) as one group (at
/// moderate load letting a small group fill while envelopes keep coming, see [`Coalesce`]),
/// batch-verifies its prepared signatures and hands it to the appender; it then takes whatever
/// queued meanwhile, so the group grows with the load. A group of `SPLIT_AT` events or more is
/// cut into parts that helper threads verify at the same time (every core verifies under heavy
/// load); the appender puts the parts back in order. At
/// moderate load, one thread verifies and the other cores are left to gRPC (where signatures are
/// prepared), the appender and the sync.
fn verifiers(
    rx: mpsc::Receiver<Msg>,
    b_tx: std_mpsc::SyncSender<Part>,
    max_batch: usize,
    coalesce: Coalesce,
    stats: Arc<IngestStats>,
) {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let (h_tx, h_rx) = std_mpsc::sync_channel::<Part>(threads);
    let h_rx = Arc::new(std::sync::Mutex::new(h_rx));
    for i in 1..threads {
        let (h_rx, b_tx) = (h_rx.clone(), b_tx.clone());
        std::thread::Builder::new()
            .name(format!("ledger-verify-{i}"))
            .spawn(move || {
                loop {
                    let job = h_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((number, part, parts, (mut items, replies, control), mut stamps)) = job
                    else {
                        return;
                    };
                    verify_prechecked(&mut items);
                    stamps.verified = Instant::now();
                    if b_tx
                        .send((number, part, parts, (items, replies, control), stamps))
                        .is_err()
                    {
                        return;
                    }
                }
            })
            .expect("spawn verifier thread");
    }
    std::thread::Builder::new()
        .name("ledger-verify-0".into())
        .spawn(move || primary(rx, b_tx, h_tx, threads, max_batch, coalesce, &stats))
        .expect("spawn verifier thread");
}

fn primary(
    mut rx: mpsc::Receiver<Msg>,
    b_tx: std_mpsc::SyncSender<Part>,
    h_tx: std_mpsc::SyncSender<Part>,
    threads: usize,
    max_batch: usize,
    coalesce: Coalesce,
    stats: &IngestStats,
) {
    precise_sleeps();
    let mut meter =
        crate::load::BusyMeter::new(std::thread::available_parallelism().map_or(1, |n| n.get()));
    for number in 0u64.. {
        let Some(first) = rx.blocking_recv() else {
            return;
        };
        let hold = if coalesce.hold.is_zero() {
            Duration::ZERO
        } else {
            let busy = meter.observe(Instant::now(), crate::load::process_cpu);
            crate::load::hold_for(busy, coalesce.hold)
        };
        stats.hold(hold);
        let (items, replies, mut control) = gather(
            first,
            &mut || rx.try_recv().ok(),
            max_batch,
            coalesce,
            hold,
            &Instant::now,
            &mut std::thread::sleep,
        );
        let mut stamps = Stamps::closed_at(Instant::now());
        // Part 0 stays here; parts 1.. go to the helpers, the last one with the checkpoint request.
        let parts = (items.len() / SPLIT_AT).clamp(1, threads);
        let per = items.len().div_ceil(parts);
        let (mut items, mut replies) = (items.into_iter(), replies.into_iter());
        let mut own: Vec<PreOutcome> = items.by_ref().take(per).collect();
        let own_replies: Vec<Reply> = replies.by_ref().take(per).collect();
        let own_control = if parts == 1 { control.take() } else { None };
        for part in 1..parts {
            let job = (
                items.by_ref().take(per).collect(),
                replies.by_ref().take(per).collect(),
                if part + 1 == parts {
                    control.take()
                } else {
                    None
                },
            );
            if h_tx.send((number, part, parts, job, stamps)).is_err() {
                return;
            }
        }
        let t = Instant::now();
        verify_prechecked(&mut own);
        stamps.verified = Instant::now();
        tracing::trace!(
            n = own.len(),
            parts,
            us = (stamps.verified - t).as_micros() as u64,
            "stage A: batch verification"
        );
        if b_tx
            .send((number, 0, parts, (own, own_replies, own_control), stamps))
            .is_err()
        {
            return;
        }
    }
}

/// The parts of groups in order: group by group, part by part, whatever order they were verified in.
fn in_order(rx: std_mpsc::Receiver<Part>) -> impl Iterator<Item = (Group, Stamps)> {
    let mut waiting = std::collections::BTreeMap::new();
    let mut next = (0u64, 0usize);
    std::iter::from_fn(move || {
        loop {
            if let Some((parts, g)) = waiting.remove(&next) {
                next = if next.1 + 1 < parts {
                    (next.0, next.1 + 1)
                } else {
                    (next.0 + 1, 0)
                };
                return Some(g);
            }
            let (number, part, parts, g, stamps) = rx.recv().ok()?;
            waiting.insert((number, part), (parts, (g, stamps)));
        }
    })
}

fn stage_b(
    mut appender: Appender,
    rx: std_mpsc::Receiver<Part>,
    feed: SyncFeed,
    fatal: watch::Sender<Option<String>>,
) {
    // Once the ledger stops acknowledging, every group that still comes is answered through the
    // sync threads, in order after the groups before it (see `Applied::Refused`): the streams'
    // task ends when the verifiers do, when the ledger is dropped.
    for ((items, replies, control), mut stamps) in in_order(rx) {
        if let Some(why) = fatal.borrow().clone() {
            feed.push(Applied::Refused {
                replies,
                control,
                why,
            });
            continue;
        }
        if !items.is_empty() {
            let (n, t) = (items.len(), Instant::now());
            let applied = appender.apply(items, now_ms());
            tracing::trace!(n, us = t.elapsed().as_micros() as u64, "stage B: apply");
            match applied {
                Ok((receipts, applied)) => {
                    stamps.applied = Instant::now();
                    let group = Applied::Group {
                        receipts,
                        replies,
                        head: (applied.head_index, applied.head_hash),
                        stamps,
                    };
                    feed.push(group);
                }
                Err(e) => {
                    tracing::error!(error = %e, "append failed; the ledger stops acknowledging");
                    let why = format!("append failed: {e}");
                    let _ = fatal.send(Some(why.clone()));
                    feed.push(Applied::Refused {
                        replies,
                        control,
                        why,
                    });
                    continue;
                }
            }
        }
        match control {
            Some(Control::Checkpoint(why, r)) => feed.push(Applied::Checkpoint(why, r)),
            Some(Control::Record(record, reply)) => match appender.append_record(*record, now_ms())
            {
                Ok((receipt, applied)) => {
                    feed.push(Applied::Record {
                        receipt: Box::new(receipt),
                        reply,
                        head: (applied.head_index, applied.head_hash),
                    });
                }
                Err(e) => {
                    tracing::error!(error = %e, "append failed; the ledger stops acknowledging");
                    let why = format!("append failed: {e}");
                    let _ = fatal.send(Some(why.clone()));
                    feed.push(Applied::Refused {
                        replies: vec![reply],
                        control: None,
                        why,
                    });
                }
            },
            None => {}
        }
    }
}

/// Syncs that may run at once. A sync covers every group applied before it started; a second
/// one can start while the first is still waiting for the disk, so a group applied meanwhile
/// does not wait for the first to end before its own sync begins (sled's flush makes the log
/// stable in order, and each fsync covers the whole file, so whichever ends first may release
/// every group it covers, once every sync started before it has succeeded: see
/// [`SyncState::settled`]).
const SYNCS_IN_FLIGHT: usize = 2;

/// What makes the store durable: `Store::sync` (flush, then fsync).
type SyncFn = Box<dyn Fn() -> Result<(), ledger_store::StoreError> + Send + Sync>;

/// Applied groups waiting for a sync, and the syncs' progress (counts of items pushed).
#[derive(Default)]
struct SyncState {
    /// Items applied and not yet released, oldest first.
    waiting: std::collections::VecDeque<Applied>,
    pushed: u64,
    /// Items covered by the latest sync started.
    started: u64,
    released: u64,
    /// The appender is gone: release what is left, then stop.
    closed: bool,
    failed: bool,
    /// Syncs started, and syncs whose outcome has been taken, in the order they started.
    ///
    /// A sync's success is taken only after every sync started before it succeeded. Both fsync
    /// the same open file, and Linux reports a writeback error on it to one fsync only: when an
    /// earlier sync gets the error and a later one, ending first, gets none, the later one must
    /// not release the groups the earlier one covered. So it waits for the earlier outcome, and
    /// an error anywhere stops every release after it (issue 2: a flush or fsync error stops
    /// acknowledging).
    started_syncs: u64,
    settled: u64,
}

/// Stage C: sync threads over a shared queue of applied groups.
struct Syncs {
    store: Arc<Store>,
    sync: SyncFn,
    state: std::sync::Mutex<SyncState>,
    changed: std::sync::Condvar,
    /// See [`Syncs::release_lock`].
    releasing: std::sync::Mutex<bool>,
    durable: watch::Sender<(u64, Hash32)>,
    fatal: watch::Sender<Option<String>>,
    slow: std::sync::Mutex<SlowSyncs>,
    stats: Arc<IngestStats>,
    /// Receipts wait for mirrors too (`[replication]`).
    replication: Option<Arc<crate::mirror::replication::Gate>>,
}

/// A sync at least this long is the disk stalling: every receipt it covers waited for it.
pub const SLOW_SYNC: Duration = Duration::from_millis(50);

/// Warnings about slow syncs, at most one a second (a stalling disk can stall many times a
/// second), each with how many there were and the longest since the last one. A receipt's
/// latency can never be lower than the sync that covers it, so these warnings tell an operator
/// when a latency target is lost to the disk (`ledgerctl disk-check` measures the disk alone).
#[derive(Debug, Default)]
struct SlowSyncs {
    last_warning: Option<Instant>,
    count: u64,
    longest: Duration,
}

impl SlowSyncs {
    /// Note a sync that took `took`, at `now`: `Some((slow syncs, longest))` when it is time to warn.
    fn note(&mut self, now: Instant, took: Duration) -> Option<(u64, Duration)> {
        if took < SLOW_SYNC {
            return None;
        }
        self.count += 1;
        self.longest = self.longest.max(took);
        if self
            .last_warning
            .is_some_and(|t| now.saturating_duration_since(t) < Duration::from_secs(1))
        {
            return None;
        }
        self.last_warning = Some(now);
        let out = (self.count, self.longest);
        (self.count, self.longest) = (0, Duration::ZERO);
        Some(out)
    }
}

/// The appender's end of [`Syncs`]; dropping it lets the sync threads finish and stop.
struct SyncFeed(Arc<Syncs>);

impl SyncFeed {
    fn push(&self, item: Applied) {
        let mut st = self.0.lock();
        if st.failed {
            // Nothing more is released: answer it now, after any release or failure answers
            // in progress (they hold the release lock), so that a stream's answers stay in order.
            let order = self.0.release_lock();
            drop(st);
            drop(item); // dropping its replies answers UNAVAILABLE
            drop(order);
            return;
        }
        st.waiting.push_back(item);
        st.pushed += 1;
        self.0.changed.notify_one();
    }
}

impl Drop for SyncFeed {
    fn drop(&mut self) {
        self.0.lock().closed = true;
        self.0.changed.notify_all();
    }
}

impl Syncs {
    /// Queue a checkpoint request after the groups applied so far (any thread). When the
    /// stage has failed or stopped it is dropped, which answers UNAVAILABLE.
    fn push_control(&self, item: Applied) {
        let mut st = self.lock();
        if st.failed || st.closed {
            drop(st);
            drop(item);
            return;
        }
        st.waiting.push_back(item);
        st.pushed += 1;
        self.changed.notify_one();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SyncState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One sync thread: wait for items no sync covers yet, sync, release what it covers.
    fn run(&self) {
        loop {
            let (cover, has_groups, ticket) = {
                let mut st = self.lock();
                loop {
                    if st.failed || (st.closed && st.started == st.pushed) {
                        return;
                    }
                    if st.pushed > st.started {
                        break;
                    }
                    st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                // Every unreleased group, not only the new ones: a group covered by a sync still
                // running is not durable yet, and this one releases whatever it covers.
                let has_groups = st
                    .waiting
                    .iter()
                    .any(|m| matches!(m, Applied::Group { .. } | Applied::Record { .. }));
                st.started = st.pushed;
                st.started_syncs += 1;
                (st.pushed, has_groups, st.started_syncs - 1)
            };
            let t = Instant::now();
            let synced = if has_groups { (self.sync)() } else { Ok(()) };
            let took = t.elapsed();
            if has_groups {
                self.stats.sync(t, took, took >= SLOW_SYNC);
            }
            tracing::trace!(
                groups = cover,
                us = took.as_micros() as u64,
                "stage C: sync"
            );
            let slow = (took >= SLOW_SYNC)
                .then(|| {
                    let mut slow = self.slow.lock().unwrap_or_else(|e| e.into_inner());
                    slow.note(Instant::now(), took)
                })
                .flatten();
            if let Some((count, longest)) = slow {
                tracing::warn!(
                    slow_syncs = count,
                    longest_ms = longest.as_millis() as u64,
                    "the disk stalled: syncs (flush + fsync) of {} ms or more since the last \
                     warning: {count}, the longest {} ms; every receipt they covered waited",
                    SLOW_SYNC.as_millis(),
                    longest.as_millis()
                );
            }
            let mut st = self.lock();
            // Outcomes are taken in the order the syncs started (see `SyncState::settled`).
            while st.settled < ticket && !st.failed {
                st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.failed {
                // An earlier sync failed: it answered every waiting reply.
                return;
            }
            if let Err(e) = synced {
                tracing::error!(error = %e, "flush/fsync failed; the ledger stops acknowledging and exits");
                let _ = self.fatal.send(Some(format!("flush/fsync failed: {e}")));
                st.failed = true;
                let waiting = std::mem::take(&mut st.waiting);
                // After any release in progress: a stream's receipts stay in order.
                let order = self.release_lock();
                drop(st);
                drop(waiting); // dropping every reply answers UNAVAILABLE; never retry an fsync
                drop(order);
                self.changed.notify_all();
                return;
            }
            let mut due = Vec::new();
            while st.released < cover && !st.failed {
                let Some(m) = st.waiting.pop_front() else {
                    break;
                };
                st.released += 1;
                due.push(m);
            }
            st.settled = ticket + 1;
            if st.started_syncs > st.settled {
                // A later sync may be waiting for this outcome.
                self.changed.notify_all();
            }
            // The receipts go out without the state lock, so the appender can hand over its next
            // group meanwhile. Taking the release lock before letting go of the state keeps the
            // releases in the order of the groups: a later sync's release waits for this one.
            let mut halted = self.release_lock();
            drop(st);
            if let Some(gate) = &self.replication
                && !*halted
                && let Some(last) = due.iter().rev().find_map(|m| match m {
                    Applied::Group { head, .. } | Applied::Record { head, .. } => Some(*head),
                    _ => None,
                })
            {
                // The mirrors copy from the durable head: advance it, then wait for them.
                self.durable.send_if_modified(|h| {
                    let changed = *h != last;
                    *h = last;
                    changed
                });
                gate.wait(last.0);
            }
            for m in due {
                // After a failed checkpoint or a refused group nothing more is acknowledged:
                // what is left is dropped, which answers UNAVAILABLE.
                if !*halted && !self.release(m) {
                    *halted = true;
                }
            }
            let stop = *halted;
            drop(halted);
            if stop {
                let mut st = self.lock();
                st.failed = true;
                st.waiting.clear();
                self.changed.notify_all();
                return;
            }
        }
    }

    /// The lock that orders releases; it holds whether a failed checkpoint halted them. Taken
    /// after the state lock, never before it.
    fn release_lock(&self) -> std::sync::MutexGuard<'_, bool> {
        self.releasing.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Send a durable group's receipts, write a checkpoint of the durable head, or answer a
    /// refused group. False when a checkpoint could not be written or a group was refused (the
    /// ledger then stops acknowledging).
    fn release(&self, m: Applied) -> bool {
        match m {
            Applied::Group {
                receipts,
                replies,
                head,
                stamps,
            } => {
                self.durable.send_if_modified(|h| {
                    let changed = *h != head;
                    *h = head;
                    changed
                });
                let accepted = receipts
                    .iter()
                    .filter(|r| r.status == v1::ReceiptStatus::Accepted as i32)
                    .count();
                let bad = receipts
                    .iter()
                    .filter(|r| r.reason == v1::RejectReason::BadSignature as i32)
                    .count();
                if bad > 0 {
                    self.stats.bad_signatures(bad as u64);
                }
                self.stats.receipts(&receipts);
                let taken = replies.iter().map(|r| r.1);
                self.stats
                    .group(Instant::now(), taken, accepted as u64, &stamps);
                let mut out = Outbox::default();
                for (r, reply) in receipts.into_iter().zip(replies) {
                    out.add(reply, Ok(r));
                }
                out.send();
                true
            }
            Applied::Record {
                receipt,
                reply,
                head,
            } => {
                self.durable.send_if_modified(|h| {
                    let changed = *h != head;
                    *h = head;
                    changed
                });
                reply.send(Ok(*receipt));
                true
            }
            Applied::Refused {
                replies,
                control,
                why,
            } => {
                let mut out = Outbox::default();
                for reply in replies {
                    out.add(
                        reply,
                        Err(Status::unavailable(format!(
                            "the ledger stopped acknowledging after a storage failure: {why}"
                        ))),
                    );
                }
                out.send();
                drop(control);
                false
            }
            Applied::Checkpoint(why, reply) => {
                let (index, hash) = *self.durable.borrow();
                let r = self
                    .store
                    .write_checkpoint(index, &hash, now_ms(), why)
                    .map_err(|e| Status::internal(format!("checkpoint failed: {e}")));
                let ok = r.is_ok();
                if let Err(e) = &r {
                    tracing::error!(error = %e, "checkpoint write failed; the ledger stops acknowledging");
                    let _ = self.fatal.send(Some(e.message().to_string()));
                }
                let _ = reply.send(r);
                ok
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;
    use ledger_core::SignerRole;
    use ledger_core::proto::event_body::Payload as P;
    use ledger_core::signing::{EVENT_DOMAIN, sign};
    use ledger_store::{OpenConfig, PrincipalConfig};
    use prost::Message;

    /// A stream proves it holds a device key with an accepted envelope and loses that with a
    /// bad signature; nothing else changes it (a duplicate can be anyone's resend of a stored
    /// envelope, a gap or a stale time says nothing about the key).
    #[test]
    fn a_stream_is_proven_by_its_last_accepted_envelope_or_bad_signature() {
        let receipt = |status: v1::ReceiptStatus, reason: v1::RejectReason| {
            Ok(v1::Receipt {
                status: status as i32,
                reason: reason as i32,
                ..Default::default()
            })
        };
        use v1::{ReceiptStatus as St, RejectReason as Why};
        let (to, _rx) = StreamReceipts::channel();
        assert!(!to.proven());
        to.send(vec![
            receipt(St::Duplicate, Why::Unspecified),
            receipt(St::Rejected, Why::SequenceGap),
            receipt(St::Rejected, Why::TimeOutOfRange),
            Err(Status::unavailable("x")),
        ]);
        assert!(!to.proven(), "no verdict on a key");
        to.send(vec![
            receipt(St::Rejected, Why::BadSignature),
            receipt(St::Accepted, Why::Unspecified),
            receipt(St::Rejected, Why::SequenceGap),
        ]);
        assert!(to.proven(), "the last verdict in the batch counts");
        to.send(vec![receipt(St::Duplicate, Why::Unspecified)]);
        assert!(to.proven());
        to.send(vec![
            receipt(St::Accepted, Why::Unspecified),
            receipt(St::Rejected, Why::BadSignature),
        ]);
        assert!(!to.proven());
    }

    /// A queue on a clock of its own, for [`gather`]: each message arrives at its offset from
    /// the start; sleeping moves the clock.
    struct Script {
        start: Instant,
        now: std::cell::Cell<Instant>,
        queue: std::cell::RefCell<std::collections::VecDeque<(Duration, Msg)>>,
    }

    fn event() -> Msg {
        Msg::Event(
            PreOutcome::Rejected(Box::default()),
            Reply(None, Instant::now()),
            None,
        )
    }

    impl Script {
        /// `arrivals`: (µs after the start, message), in order.
        fn new(arrivals: impl IntoIterator<Item = (u64, Msg)>) -> Script {
            let start = Instant::now();
            Script {
                start,
                now: std::cell::Cell::new(start),
                queue: std::cell::RefCell::new(
                    arrivals
                        .into_iter()
                        .map(|(us, m)| (Duration::from_micros(us), m))
                        .collect(),
                ),
            }
        }

        /// Gather a group after a first event at the start, ledgerd busy enough to hold it for
        /// the whole `coalesce.hold`: the group's events, whether a checkpoint request closed
        /// it, and how long it waited.
        fn gather(&self, max_batch: usize, coalesce: Coalesce) -> (usize, bool, Duration) {
            let mut take = || {
                let mut q = self.queue.borrow_mut();
                let due = q
                    .front()
                    .is_some_and(|(at, _)| self.start + *at <= self.now.get());
                if due {
                    q.pop_front().map(|(_, m)| m)
                } else {
                    None
                }
            };
            let now = || self.now.get();
            let mut sleep = |d: Duration| self.now.set(self.now.get() + d);
            let g = gather(
                event(),
                &mut take,
                max_batch,
                coalesce,
                coalesce.hold,
                &now,
                &mut sleep,
            );
            assert_eq!(g.0.len(), g.1.len(), "one reply per event");
            (g.0.len(), g.2.is_some(), self.now.get() - self.start)
        }
    }

    const WAIT: Coalesce = Coalesce {
        max_wait: Duration::from_micros(500),
        enough: 128,
        hold: Duration::ZERO,
    };

    const HOLD: Coalesce = Coalesce {
        hold: Duration::from_micros(2000),
        ..WAIT
    };

    #[test]
    fn slow_syncs_are_warned_about_at_most_once_a_second() {
        let mut s = SlowSyncs::default();
        let t = Instant::now();
        let ms = Duration::from_millis;
        assert_eq!(s.note(t, ms(49)), None, "not slow");
        assert_eq!(s.note(t, ms(80)), Some((1, ms(80))));
        assert_eq!(s.note(t + ms(100), ms(300)), None, "within the second");
        assert_eq!(s.note(t + ms(500), ms(60)), None);
        assert_eq!(s.note(t + ms(900), ms(10)), None, "not slow");
        // The next warning counts the two held back and this one, with the longest of them.
        assert_eq!(s.note(t + ms(1000), ms(70)), Some((3, ms(300))));
        assert_eq!(s.note(t + ms(1100), ms(55)), None);
        assert_eq!(s.note(t + ms(2500), ms(51)), Some((2, ms(55))));
    }

    #[test]
    fn a_busy_ledger_holds_a_small_group_across_bursts() {
        // A burst of 10 (1 µs apart) every 500 µs from 600 µs on: a quiet step ends the wait
        // for the first envelope long before the first burst.
        let bursts = || (0..10u64).flat_map(|b| (0..10).map(move |i| (600 + b * 500 + i, event())));
        let s = Script::new(bursts());
        assert_eq!(s.gather(2048, WAIT), (1, false, COALESCE_STEP));
        // Held: the bursts at 600, 1100 and 1600 µs; then a step that brings nothing.
        let s = Script::new(bursts());
        assert_eq!(s.gather(2048, HOLD), (31, false, HOLD.hold + COALESCE_STEP));
    }

    #[test]
    fn a_group_with_enough_or_a_checkpoint_request_is_not_held() {
        let s = Script::new((0..200).map(|_| (0, event())));
        assert_eq!(s.gather(2048, HOLD), (201, false, Duration::ZERO));
        let (tx, _rx) = oneshot::channel();
        let s = Script::new([
            (0, event()),
            (0, Msg::Checkpoint("test", tx)),
            (10, event()),
        ]);
        assert_eq!(s.gather(2048, HOLD), (2, true, Duration::ZERO));
        // A hold that ends with max_batch queued takes max_batch; the rest is the next group's.
        let s = Script::new((1..=100).map(|i| (i * 10, event())));
        assert_eq!(s.gather(64, HOLD), (64, false, HOLD.hold));
        assert_eq!(s.queue.borrow().len(), 100 - 63);
    }

    #[test]
    fn without_coalescing_a_group_is_what_was_queued() {
        let s = Script::new((1..=5).map(|i| (i * 10, event())));
        assert_eq!(s.gather(2048, Coalesce::OFF), (1, false, Duration::ZERO));
        let s = Script::new((0..5).map(|_| (0, event())));
        assert_eq!(s.gather(2048, Coalesce::OFF), (6, false, Duration::ZERO));
    }

    #[test]
    fn an_envelope_that_comes_alone_waits_one_step() {
        let s = Script::new([]);
        assert_eq!(s.gather(2048, WAIT), (1, false, COALESCE_STEP));
        // Something that comes after the quiet step is the next group's.
        let s = Script::new([(COALESCE_STEP.as_micros() as u64 + 1, event())]);
        assert_eq!(s.gather(2048, WAIT), (1, false, COALESCE_STEP));
    }

    #[test]
    fn a_burst_fills_the_group_until_it_has_enough() {
        // One envelope every 2 µs: 25 a step, so 6 steps bring the 127 after the first.
        let s = Script::new((1..=1000).map(|i| (i * 2, event())));
        let (n, closed, waited) = s.gather(2048, WAIT);
        assert!(!closed);
        assert_eq!(waited, COALESCE_STEP * 6);
        assert!(waited < WAIT.max_wait);
        // Everything that had arrived by then is in the group.
        assert_eq!(n, 1 + 6 * 25);
        assert!(n >= WAIT.enough);
    }

    #[test]
    fn a_steady_trickle_waits_no_longer_than_the_limit() {
        // One envelope every 40 µs: every step brings one, the group never has enough.
        let s = Script::new((1..=1000).map(|i| (i * 40, event())));
        let (n, closed, waited) = s.gather(2048, WAIT);
        assert!(!closed);
        assert_eq!(waited, WAIT.max_wait);
        assert_eq!(n, 1 + 500 / 40);
    }

    #[test]
    fn a_checkpoint_request_closes_the_group_at_once() {
        let (tx, _rx) = oneshot::channel();
        let s = Script::new([
            (20, event()),
            (70, Msg::Checkpoint("test", tx)),
            (80, event()),
            (90, event()),
        ]);
        // Step 1 brings the event, step 2 the request; the events after it wait for the next group.
        assert_eq!(s.gather(2048, WAIT), (2, true, COALESCE_STEP * 2));
        assert_eq!(s.queue.borrow().len(), 2);
    }

    #[test]
    fn a_full_group_never_waits() {
        let s = Script::new((0..300).map(|_| (0, event())));
        assert_eq!(s.gather(200, WAIT), (200, false, Duration::ZERO));
        let s = Script::new((0..300).map(|_| (0, event())));
        assert_eq!(s.gather(2048, WAIT), (301, false, Duration::ZERO));
        // `enough` above max_batch: max_batch is enough.
        let s = Script::new((0..63).map(|_| (0, event())));
        assert_eq!(s.gather(64, WAIT), (64, false, Duration::ZERO));
    }

    fn env(key: &SigningKey, dev: &str, seq: u64, payload: P) -> v1::Envelope {
        let body = v1::EventBody {
            device_id: dev.into(),
            sequence: seq,
            occurred_at_ms: now_ms(),
            payload: Some(payload),
        }
        .encode_to_vec();
        let signature = sign(key, EVENT_DOMAIN, &body).to_bytes().to_vec();
        v1::Envelope { body, signature }
    }

    fn model(n: u32) -> P {
        P::MachineModelApproved(v1::MachineModelApproved {
            model_id: format!("m{n}"),
            theoretical_rtp_bp: 9000,
            bet_values_cents: vec![10],
            approval_ref: String::new(),
        })
    }

    /// A ledger over a fresh store whose principals are operators with keys `[1; 32]`, `[2; 32]`...
    fn ledger(dir: &std::path::Path, operators: u8) -> (Arc<Store>, Ledger, Vec<SigningKey>) {
        ledger_syncing(dir, operators, |store| Box::new(move || store.sync()))
    }

    /// [`ledger`], with the syncs `sync` makes from the store.
    fn ledger_syncing(
        dir: &std::path::Path,
        operators: u8,
        sync: impl FnOnce(Arc<Store>) -> SyncFn,
    ) -> (Arc<Store>, Ledger, Vec<SigningKey>) {
        let keys: Vec<SigningKey> = (1..=operators)
            .map(|i| SigningKey::from_bytes(&[i; 32]))
            .collect();
        let (store, appender) = Store::open_writer(
            dir,
            &OpenConfig {
                cache_capacity_bytes: 8 << 20,
                ledger_id: "t".into(),
                principals: keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| PrincipalConfig {
                        id: format!("op{i}"),
                        role: SignerRole::Operator,
                        key: k.verifying_key(),
                    })
                    .collect(),
            },
        )
        .unwrap();
        let ledger = Ledger::start_syncing(
            appender,
            PipelineConfig {
                max_batch: 64,
                coalesce: Coalesce {
                    hold: Duration::ZERO,
                    max_wait: Duration::from_micros(500),
                    enough: 16,
                },
                queue_capacity: 64,
                queue_bytes: 1 << 20,
                max_body_bytes: 65536,
                time: TimePolicy::default(),
                clock_step_threshold_ms: 0,
                signed_receipts: true,
            },
            sync(store.clone()),
        );
        (store, ledger, keys)
    }

    /// Several streams and checkpoint requests at once, with syncs overlapping: every receipt
    /// comes, in each stream's order, and a checkpoint covers every entry acknowledged before it
    /// was asked for.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn overlapping_syncs_release_everything_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ledger, keys) = ledger(dir.path(), 3);
        let seen = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut tasks = Vec::new();
        for (i, key) in keys.into_iter().enumerate() {
            let (ledger, seen) = (ledger.clone(), seen.clone());
            tasks.push(tokio::spawn(async move {
                let id = format!("op{i}");
                let mut pending = Vec::new();
                for seq in 1..=300u64 {
                    pending.push(ledger.submit(env(&key, &id, seq, model(seq as u32))).await);
                    if seq % 50 == 0 || seq == 300 {
                        let mut last = 0;
                        for rx in pending.drain(..) {
                            let r = rx.await.unwrap().unwrap();
                            assert_eq!(r.status, v1::ReceiptStatus::Accepted as i32, "{r:?}");
                            assert!(r.index > last, "receipts in the stream's order");
                            last = r.index;
                            seen.fetch_max(r.index, std::sync::atomic::Ordering::SeqCst);
                        }
                    }
                }
            }));
        }
        for _ in 0..20 {
            let before = seen.load(std::sync::atomic::Ordering::SeqCst);
            let cp = ledger.checkpoint("test").await.unwrap();
            let body = v1::CheckpointBody::decode(cp.body.as_slice()).unwrap();
            assert!(
                body.index >= before,
                "checkpoint {} before {before}",
                body.index
            );
            assert!(ledger.durable().borrow().0 >= body.index);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        for t in tasks {
            t.await.unwrap();
        }
        let head = store.head().unwrap().unwrap().0;
        assert_eq!(
            ledger.durable().borrow().0,
            head,
            "everything applied is durable"
        );
        assert!(head >= 900);
        let st = ledger.stats().to_proto(Instant::now());
        let receipts = st.receipt_latency.clone().unwrap();
        assert_eq!((st.accepted, receipts.count), (900, 900));
        assert!(st.groups >= 1 && st.groups <= 900, "{st:?}");
        let syncs = st.sync_latency.clone().unwrap();
        assert!(syncs.count >= 1 && syncs.count <= st.groups, "{syncs:?}");
        assert!(
            receipts.max_us >= syncs.buckets[0].le_us.min(syncs.max_us),
            "a receipt waits for its sync"
        );
        // Every receipt is in each stage once, and its stages add up to its time (each stage
        // rounded down to the microsecond).
        let stages: Vec<_> = [
            &st.queued_latency,
            &st.verify_latency,
            &st.apply_latency,
            &st.durable_latency,
        ]
        .map(|h| h.clone().unwrap())
        .to_vec();
        assert!(stages.iter().all(|h| h.count == 900), "{stages:?}");
        let parts: u64 = stages.iter().map(|h| h.sum_us).sum();
        assert!(
            parts <= receipts.sum_us && receipts.sum_us - parts <= 4 * 900,
            "{parts} against {}",
            receipts.sum_us
        );
    }

    /// A checkpoint request is answered from what is acknowledged, not after the envelopes
    /// queued before it: here one waits in an ingest queue nobody takes from (a writer busy
    /// with a long backlog), and the checkpoint still comes, of the durable head.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_checkpoint_request_does_not_wait_for_envelopes_queued_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ledger, keys) = ledger(dir.path(), 1);
        let op = &keys[0];
        for n in 1..=5 {
            let r = ledger.submit(env(op, "op0", n, model(n as u32))).await;
            assert_eq!(
                r.await.unwrap().unwrap().status,
                v1::ReceiptStatus::Accepted as i32
            );
        }
        let head = *ledger.durable().borrow();
        let (tx, _rx) = mpsc::channel(64);
        let stalled = Ledger {
            tx,
            queue_bytes: Arc::new(tokio::sync::Semaphore::new(64)),
            queue_units: 64,
            store: store.clone(),
            max_body_bytes: 65536,
            time: TimePolicy::default(),
            window: ledger.window.clone(),
            durable: ledger.durable(),
            fatal: ledger.fatal(),
            stats: Arc::default(),
            mirror: None,
            syncs: ledger.syncs.clone(),
        };
        let mut queued = stalled.submit(env(op, "op0", 6, model(6))).await;
        // (Through the ingest queue it would never come: bounded so that it fails, not hangs.)
        let cp = tokio::time::timeout(
            Duration::from_secs(60),
            stalled.checkpoint_acknowledged("test"),
        )
        .await
        .expect("the checkpoint waited for the queued envelope")
        .unwrap();
        let body = v1::CheckpointBody::decode(cp.body.as_slice()).unwrap();
        assert_eq!(
            (body.index, body.head_hash.as_slice()),
            (head.0, &head.1[..])
        );
        assert!(
            matches!(queued.try_recv(), Err(oneshot::error::TryRecvError::Empty)),
            "the queued envelope is not acknowledged"
        );
        // A later request covers what became durable since.
        let r = ledger.submit(env(op, "op0", 6, model(6))).await;
        let index = r.await.unwrap().unwrap().index;
        let cp = ledger.checkpoint_acknowledged("test").await.unwrap();
        let body = v1::CheckpointBody::decode(cp.body.as_slice()).unwrap();
        assert_eq!(body.index, index);
        assert_eq!(store.latest_checkpoint().unwrap().unwrap().1.index, index);
    }

    /// A record of the ledger's own goes in after the events submitted before it, is answered
    /// once durable with its entry, and is not counted as an ingested event.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_ledger_record_is_appended_after_the_events_before_it_and_answered_when_durable() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ledger, keys) = ledger(dir.path(), 1);
        let event = ledger.submit(env(&keys[0], "op0", 1, model(1))).await;
        let record = v1::ledger_record_body::Record::FindingReviewed(v1::FindingReviewed {
            finding_id: "F1".into(),
            action: v1::FindingAction::Acknowledge as i32,
            principal: "compliance".into(),
            previous_status: v1::FindingStatus::Open as i32,
            ..Default::default()
        });
        let r = ledger.append_record(record.clone()).await.unwrap();
        let e = event.await.unwrap().unwrap();
        assert_eq!(r.status, v1::ReceiptStatus::Accepted as i32);
        assert!(r.index > e.index, "after the event submitted before it");
        assert!(
            ledger.durable().borrow().0 >= r.index,
            "durable when answered"
        );
        let stored = store.entry(r.index).unwrap().unwrap();
        assert_eq!(stored.entry_hash, r.entry_hash);
        let body = ledger_core::record::decode_ledger_record(&stored.body).unwrap();
        assert_eq!(body.record, Some(record));
        let st = ledger.stats().to_proto(Instant::now());
        assert_eq!((st.accepted, st.receipt_latency.unwrap().count), (1, 1));
    }

    /// A resent event's receipt and a rejection (a bad signature, found by the batch check)
    /// count as receipts, not as accepted events.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_stats_count_receipts_and_accepted_events_apart() {
        let dir = tempfile::tempdir().unwrap();
        let (_store, ledger, keys) = ledger(dir.path(), 1);
        let first = env(&keys[0], "op0", 1, model(1));
        for e in [first.clone(), first.clone()] {
            ledger.submit(e).await.await.unwrap().unwrap();
        }
        let mut forged = env(&keys[0], "op0", 2, model(2));
        forged.signature[0] ^= 1;
        let r = ledger.submit(forged).await.await.unwrap().unwrap();
        assert_eq!(r.status, v1::ReceiptStatus::Rejected as i32);
        let st = ledger.stats().to_proto(Instant::now());
        assert_eq!(st.accepted, 1);
        assert_eq!(st.receipt_latency.unwrap().count, 3);
        assert!(st.sync_latency.unwrap().count >= 1);
        assert_eq!((st.slow_syncs, st.hold_us), (0, 0));
        // Not through a stream: nothing is unproven.
        assert_eq!((st.bad_signatures, st.unproven_envelopes), (1, 0));
    }

    /// Through an ingest stream: its envelopes are unproven (checked apart) until one of them is
    /// accepted, and again after a bad signature; each verdict is the signature's own.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_streams_envelopes_are_unproven_until_one_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let (_store, ledger, keys) = ledger(dir.path(), 1);
        let (to, mut receipts) = StreamReceipts::channel();
        let mut position = 0;
        let mut send = async |e: v1::Envelope| {
            position += 1;
            ledger
                .submit_to(e, Reply::to_stream(to.clone(), position))
                .await;
            let batch = receipts.recv().await.unwrap();
            assert_eq!(batch.len(), 1);
            let r = batch.into_iter().next().unwrap().unwrap();
            (r.status, r.reason)
        };
        let ok = (v1::ReceiptStatus::Accepted as i32, 0);
        let bad = (
            v1::ReceiptStatus::Rejected as i32,
            v1::RejectReason::BadSignature as i32,
        );
        let mut forged = env(&keys[0], "op0", 1, model(1));
        forged.signature[40] ^= 1;
        assert_eq!(send(forged).await, bad);
        assert_eq!(send(env(&keys[0], "op0", 1, model(1))).await, ok);
        assert_eq!(send(env(&keys[0], "op0", 2, model(2))).await, ok);
        let mut forged = env(&keys[0], "op0", 3, model(3));
        forged.signature[40] ^= 1;
        assert_eq!(send(forged).await, bad);
        assert_eq!(send(env(&keys[0], "op0", 3, model(3))).await, ok);
        let st = ledger.stats().to_proto(Instant::now());
        // Unproven: the first two (nothing accepted yet), and the one after the second forgery.
        assert_eq!((st.bad_signatures, st.unproven_envelopes), (2, 3));
        assert!(to.proven());
    }

    /// A failed fsync stops every acknowledgement: the group it covered, and all later ones.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_sync_stops_acknowledging() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ledger, keys) = ledger(dir.path(), 1);
        let op = &keys[0];
        let ok = ledger
            .submit(env(op, "op0", 1, model(1)))
            .await
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ok.status, v1::ReceiptStatus::Accepted as i32);
        store.inject_sync_failures_for_tests();
        let failed = ledger.submit(env(op, "op0", 2, model(2))).await.await;
        assert!(
            !matches!(failed, Ok(Ok(_))),
            "no receipt after a failed sync: {failed:?}"
        );
        let mut fatal = ledger.fatal();
        fatal.wait_for(|f| f.is_some()).await.unwrap();
        assert!(fatal.borrow().as_deref().unwrap().contains("fsync"));
        let later = ledger.submit(env(op, "op0", 2, model(2))).await.await;
        assert!(
            !matches!(later, Ok(Ok(_))),
            "nothing is acknowledged any more: {later:?}"
        );
        assert_eq!(
            ledger.durable().borrow().0,
            ok.index,
            "the durable head stays where the last good sync left it"
        );
    }

    /// Two syncs in flight: the first, covering entry 2, fails; the second, covering entries 2
    /// and 3, succeeds and ends first (on one open file, Linux reports a writeback error to one
    /// fsync only). Neither entry may be acknowledged, and the ledger stops.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_later_sync_does_not_release_what_a_failed_earlier_one_covered() {
        use std::sync::Mutex;
        use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
        use std::sync::mpsc::channel;
        let dir = tempfile::tempdir().unwrap();
        let armed = Arc::new(AtomicBool::new(false));
        let (entered_tx, entered_rx) = channel::<()>();
        let (done_tx, done_rx) = channel::<()>();
        let (entered_tx, done_tx, done_rx) = (
            Mutex::new(entered_tx),
            Mutex::new(done_tx),
            Mutex::new(done_rx),
        );
        let armed2 = armed.clone();
        let (_store, ledger, keys) = ledger_syncing(dir.path(), 1, move |store| {
            let calls = AtomicU32::new(0);
            Box::new(move || {
                if !armed2.load(SeqCst) {
                    return store.sync();
                }
                match calls.fetch_add(1, SeqCst) {
                    0 => {
                        // The first sync: wait until the second has succeeded, then fail.
                        entered_tx.lock().unwrap().send(()).unwrap();
                        let _ = done_rx
                            .lock()
                            .unwrap()
                            .recv_timeout(Duration::from_secs(10));
                        std::thread::sleep(Duration::from_millis(100));
                        Err(ledger_store::StoreError::Corrupt("EIO (scripted)".into()))
                    }
                    _ => {
                        let r = store.sync();
                        let _ = done_tx.lock().unwrap().send(());
                        r
                    }
                }
            })
        });
        let op = &keys[0];
        let ok = ledger.submit(env(op, "op0", 1, model(1))).await.await;
        assert_eq!(
            ok.unwrap().unwrap().status,
            v1::ReceiptStatus::Accepted as i32
        );
        armed.store(true, SeqCst);
        let first = ledger.submit(env(op, "op0", 2, model(2))).await;
        tokio::task::spawn_blocking(move || entered_rx.recv_timeout(Duration::from_secs(10)))
            .await
            .unwrap()
            .expect("the first sync started");
        let second = ledger.submit(env(op, "op0", 3, model(3))).await;
        let (r1, r2) = (first.await, second.await);
        assert!(
            !matches!(r1, Ok(Ok(_))),
            "entry 2 acknowledged although the sync covering it failed: {r1:?}"
        );
        assert!(!matches!(r2, Ok(Ok(_))), "{r2:?}");
        let mut fatal = ledger.fatal();
        fatal.wait_for(|f| f.is_some()).await.unwrap();
        assert!(
            fatal
                .borrow()
                .as_deref()
                .unwrap()
                .contains("EIO (scripted)")
        );
    }

    /// An append fails while the group before it waits for its sync. A stream's receipts end at
    /// its first error, so the failed group's UNAVAILABLE must come after the receipts of the
    /// earlier group: its receipt when that sync succeeds, UNAVAILABLE too when it fails (nothing
    /// is acknowledged that is not durable).
    async fn an_append_failure_is_answered_after_the_earlier_groups(earlier_sync_fails: bool) {
        use std::sync::Mutex;
        use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
        use std::sync::mpsc::channel;
        let dir = tempfile::tempdir().unwrap();
        let armed = Arc::new(AtomicBool::new(false));
        let (entered_tx, entered_rx) = channel::<()>();
        let (go_tx, go_rx) = channel::<()>();
        let (entered_tx, go_rx) = (Mutex::new(entered_tx), Mutex::new(go_rx));
        let armed2 = armed.clone();
        let (store, ledger, keys) = ledger_syncing(dir.path(), 1, move |store| {
            let calls = AtomicU32::new(0);
            Box::new(move || {
                if !armed2.load(SeqCst) || calls.fetch_add(1, SeqCst) > 0 {
                    return store.sync();
                }
                // The first sync after arming: held until the test lets it go.
                entered_tx.lock().unwrap().send(()).unwrap();
                let _ = go_rx.lock().unwrap().recv_timeout(Duration::from_secs(10));
                match earlier_sync_fails {
                    true => Err(ledger_store::StoreError::Corrupt("EIO (scripted)".into())),
                    false => store.sync(),
                }
            })
        });
        let op = &keys[0];
        let first = ledger.submit(env(op, "op0", 1, model(1))).await.await;
        assert_eq!(
            first.unwrap().unwrap().status,
            v1::ReceiptStatus::Accepted as i32
        );
        armed.store(true, SeqCst);
        let (to, mut receipts) = StreamReceipts::channel();
        ledger
            .submit_to(env(op, "op0", 2, model(2)), Reply::to_stream(to.clone(), 1))
            .await;
        tokio::task::spawn_blocking(move || entered_rx.recv_timeout(Duration::from_secs(10)))
            .await
            .unwrap()
            .expect("the sync of the group of position 1 started");
        store.inject_write_failures_for_tests();
        ledger
            .submit_to(env(op, "op0", 3, model(3)), Reply::to_stream(to.clone(), 2))
            .await;
        drop(to);
        let mut fatal = ledger.fatal();
        fatal.wait_for(|f| f.is_some()).await.unwrap();
        assert!(
            fatal.borrow().as_deref().unwrap().contains("append failed"),
            "{:?}",
            *fatal.borrow()
        );
        tokio::task::yield_now().await;
        assert!(
            receipts.try_recv().is_err(),
            "nothing is answered while the earlier group waits for its sync"
        );
        go_tx.send(()).unwrap();
        let mut got = Vec::new();
        while let Some(batch) = receipts.recv().await {
            got.extend(batch);
        }
        let got: Vec<_> = got
            .into_iter()
            .map(|r| r.map(|r| (r.position, r.status)).map_err(|e| e.code()))
            .collect();
        let unavailable = Err(tonic::Code::Unavailable);
        let position_1 = match earlier_sync_fails {
            true => unavailable,
            false => Ok((1, v1::ReceiptStatus::Accepted as i32)),
        };
        assert_eq!(got, vec![position_1, unavailable]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_append_failure_is_answered_after_the_receipts_of_earlier_groups() {
        an_append_failure_is_answered_after_the_earlier_groups(false).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_append_failure_after_a_failed_sync_acknowledges_nothing() {
        an_append_failure_is_answered_after_the_earlier_groups(true).await;
    }

    /// Envelopes past the queue's byte budget wait for room, which the verifier gives back as it
    /// takes them; a real pipeline gives all of it back once every receipt is out.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_queue_holds_at_most_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ledger, keys) = ledger(dir.path(), 1);
        let op = &keys[0];
        for n in 1..=20 {
            let r = ledger.submit(env(op, "op0", n, model(n as u32))).await;
            r.await.unwrap().unwrap();
        }
        assert_eq!(
            ledger.queue_bytes.available_permits(),
            (1 << 20) / QUEUE_UNIT
        );

        // Room for three small envelopes, and nobody taking them from the queue.
        let (tx, mut rx) = mpsc::channel(64);
        let (_durable_tx, durable) = watch::channel((0, [0; 32]));
        let (_fatal_tx, fatal) = watch::channel(None);
        let stalled = Ledger {
            tx,
            queue_bytes: Arc::new(tokio::sync::Semaphore::new(3)),
            queue_units: 3,
            store,
            max_body_bytes: 65536,
            time: TimePolicy::default(),
            window: Arc::new(WindowClock::new(0, 0)),
            durable,
            fatal,
            stats: Arc::default(),
            mirror: None,
            syncs: None,
        };
        for n in 21..=23 {
            drop(stalled.submit(env(op, "op0", n, model(n as u32))).await);
        }
        let fourth = stalled.submit(env(op, "op0", 24, model(24)));
        tokio::pin!(fourth);
        assert!(
            tokio::time::timeout(Duration::from_millis(200), &mut fourth)
                .await
                .is_err(),
            "a fourth envelope waits for room"
        );
        drop(rx.recv().await);
        tokio::time::timeout(Duration::from_secs(5), fourth)
            .await
            .expect("taking one from the queue makes room");
    }
}
