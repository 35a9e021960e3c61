//! The export to NATS JetStream (`[export.nats]`): every durable entry, once and in order, to a
//! replicated stream that downstream systems (a regulator's warehouse, a group's analytics)
//! consume without loading the ledger.
//!
//! * **Where it runs**: a thread of its own inside ledgerd ("export-nats", at nice
//!   [`EXPORT_NICE`], with its own single-threaded runtime for the NATS client), that reads
//!   durable entries from the store (as `Query.Tail` does: it wakes on the durable head) and
//!   shares nothing with the write path but that watch: ingest never waits for it, and NATS
//!   being slow or down only makes the export's lag grow.
//! * **It yields to ingest at its peak**: while the machine has no idle core and ledgerd's
//!   other threads are busy ([`crate::load::export_yields`]), it publishes only a trickle
//!   ([`TRICKLE`] entries every [`YIELD_PAUSE`]) and catches up when ingest eases. It reads from
//!   the store, so a lag costs no memory: at most [`READ_BATCH`] entries are held.
//! * **Acknowledgements in batches**: one message in [`ACK_EVERY`] asks for the stream's
//!   acknowledgement, the others are plain publishes on the same connection (so in order). Each
//!   message expects the stream's last sequence to be the one before its own, so an
//!   acknowledged message proves every one before it stored, once and in order; a message
//!   refused or lost makes every later one refused, and the next acknowledgement fails.
//! * **Subjects**: `<prefix>.casino.<casino>.<payload>` for events of tables and machines,
//!   `<prefix>.principal.<payload>` for events signed by operator and regulator keys,
//!   `<prefix>.ledger.<record>` for the ledger's own records. A casino id's characters outside
//!   `[A-Za-z0-9_-]` are written `%XX` (a subject token cannot hold `.`, `*`, `>`).
//! * **Message**: the entry's stored bytes (an encoded `ChainEntry`, the Merkle leaf's input)
//!   with headers: `Nats-Msg-Id` (`<ledger_id>:<index>`), `Ledger-Id`, `Ledger-Key`,
//!   `Ledger-Index`, `Ledger-Entry-Hash`, `Ledger-Received-At-Ms`, `Ledger-Kind` and, for a
//!   casino's events, `Ledger-Casino`.
//! * **Once, in order**: each message carries `Nats-Expected-Last-Sequence`, so the stream
//!   stores an entry only right after the one before it. On any error (a node gone, an ack not
//!   received in time, a leader change) the exporter drops what it has in flight, reads the
//!   stream's last message, checks it is this ledger's entry with the hash the store holds, and
//!   goes on from the next index, after a jittered exponential backoff (`backon`). The message id
//!   is a second guard: a republish inside the stream's duplicate window is acknowledged as a
//!   duplicate and not stored.
//! * **Lag**: entries (durable head − exported) and seconds (how long ago the oldest entry not
//!   yet exported was received), in ledgerd's metrics ([`register`]).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, context::PublishErrorKind, message::PublishMessage};
use backon::BackoffBuilder;
use bytes::Bytes;
use ledger_core::proto as v1;
use ledger_store::Store;
use prost::Message as _;
use serde::{Deserialize, Serialize};

use crate::Ledger;

/// Entries read from the store at a time.
pub const READ_BATCH: u64 = 512;

/// One message in this many asks for the stream's acknowledgement (fewer when
/// `max_in_flight` is smaller).
pub const ACK_EVERY: usize = 64;

/// While ingest is at its peak, the export publishes this many entries ...
pub const TRICKLE: u64 = 64;

/// ... every this long, and looks again at how busy the machine is.
pub const YIELD_PAUSE: Duration = Duration::from_millis(250);

/// Once the export has yielded, it keeps yielding until ingest has not been at its peak for
/// this long: at the peak the machine's idle share dips above the threshold now and then (the
/// group commit's fsyncs), and each time the export took a whole batch.
pub const YIELD_HOLD: Duration = Duration::from_secs(1);

/// After the head moved, how long the export lets entries gather before it reads them (a read
/// decodes whole chunks of 256: reading a few entries per wake-up decoded each chunk many times).
pub const GATHER: Duration = Duration::from_millis(10);

/// The export thread's nice value (ingest's threads run at 0).
pub const EXPORT_NICE: i32 = 10;

/// `[export]`: where durable entries are copied to. None by default.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Export {
    pub nats: Option<NatsExport>,
}

/// `[export.nats]`: a NATS JetStream stream.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NatsExport {
    /// The cluster's servers (`nats://host:port`, `tls://host:port`); the client moves to
    /// another when one goes.
    pub servers: Vec<String>,
    /// The stream (created with the settings below if it does not exist). One stream per ledger.
    pub stream: String,
    /// The subjects' first tokens; the stream takes `<subject_prefix>.>`.
    #[serde(default = "default_prefix")]
    pub subject_prefix: String,
    /// Replicas of a stream this exporter creates (1 to 5; 3 survives the loss of a server).
    #[serde(default = "default_replicas")]
    pub replicas: usize,
    /// The stream's duplicate window (seconds) when this exporter creates it: a republish of the
    /// same entry inside it is not stored twice.
    #[serde(default = "default_duplicate_window")]
    pub duplicate_window_secs: u64,
    /// How long a publish waits for the stream's acknowledgement before the exporter resumes
    /// from the stream's last message.
    #[serde(default = "default_ack_timeout")]
    pub ack_timeout_ms: u64,
    /// Publishes awaiting their acknowledgement at once.
    #[serde(default = "default_in_flight")]
    pub max_in_flight: usize,
    /// A NATS credentials file (JWT and nkey seed), when the cluster wants one.
    pub credentials_file: Option<PathBuf>,
    /// PEM CA that signed the servers' certificates (TLS to the cluster).
    pub tls_ca: Option<PathBuf>,
    /// Client certificate and key (PEM) when the cluster verifies clients.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

fn default_prefix() -> String {
    "ledger".into()
}
fn default_replicas() -> usize {
    3
}
fn default_duplicate_window() -> u64 {
    120
}
fn default_ack_timeout() -> u64 {
    5_000
}
fn default_in_flight() -> usize {
    256
}

impl NatsExport {
    /// Check what TOML types cannot; errors name the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.servers.is_empty() {
            return Err("export.nats.servers is empty: name the cluster's servers".into());
        }
        for s in &self.servers {
            s.parse::<async_nats::ServerAddr>()
                .map_err(|e| format!("export.nats.servers: {s:?}: {e}"))?;
        }
        if self.stream.is_empty()
            || !self
                .stream
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!(
                "export.nats.stream = {:?}: a stream name of letters, digits, '_' and '-'",
                self.stream
            ));
        }
        if self.subject_prefix.split('.').any(|t| {
            t.is_empty()
                || !t
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        }) {
            return Err(format!(
                "export.nats.subject_prefix = {:?}: dot-separated tokens of letters, digits, '_' and '-'",
                self.subject_prefix
            ));
        }
        let within = |key: &str, v: u64, lo: u64, hi: u64| {
            if v < lo || v > hi {
                Err(format!(
                    "export.nats.{key} = {v}: must be from {lo} to {hi}"
                ))
            } else {
                Ok(())
            }
        };
        within("replicas", self.replicas as u64, 1, 5)?;
        within(
            "duplicate_window_secs",
            self.duplicate_window_secs,
            1,
            86_400,
        )?;
        within("ack_timeout_ms", self.ack_timeout_ms, 100, 600_000)?;
        within("max_in_flight", self.max_in_flight as u64, 1, 4_096)?;
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err("export.nats.tls_cert and export.nats.tls_key go together".into());
        }
        Ok(())
    }

    /// Resolve relative file names against `base` (the configuration file's directory).
    pub fn resolve(&mut self, base: &std::path::Path) {
        for p in [
            &mut self.credentials_file,
            &mut self.tls_ca,
            &mut self.tls_cert,
            &mut self.tls_key,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
    }

    /// The stream's subjects.
    pub fn stream_subjects(&self) -> String {
        format!("{}.>", self.subject_prefix)
    }
}

/// Why an export step failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot connect to NATS: {0}")]
    Connect(String),
    #[error("stream {stream}: {detail}")]
    Stream { stream: String, detail: String },
    #[error("publish of entry {index}: {detail}")]
    Publish { index: u64, detail: String },
    #[error("reading the store: {0}")]
    Store(String),
    /// The stream holds something this ledger did not write: never resolved by retrying alone.
    #[error("stream {stream} holds another history: {detail}")]
    Foreign { stream: String, detail: String },
}

/// What the exporter reports (metrics, tests).
#[derive(Debug, Default)]
pub struct Progress {
    /// Entries the stream holds: the index after the last one acknowledged (0: none).
    pub exported: AtomicU64,
    /// The durable head's entry count when last looked at.
    pub head: AtomicU64,
    /// Received time (ms) of the oldest durable entry not yet exported; 0 when none.
    pub oldest_pending_ms: AtomicI64,
    /// Entries the stream acknowledged as stored (an acknowledgement covers the entries before
    /// it; duplicates not counted).
    pub published: AtomicU64,
    /// Acknowledged as duplicates (already stored).
    pub duplicates: AtomicU64,
    /// Times the exporter dropped what it had in flight and resumed from the stream.
    pub resumes: AtomicU64,
    /// Connected and publishing.
    pub connected: AtomicBool,
    /// Publishing only a trickle while ingest is at its peak.
    pub yielding: AtomicBool,
    /// Times the export started to yield to ingest.
    pub yields: AtomicU64,
    /// The last error, for the log and the tests.
    pub last_error: Mutex<Option<String>>,
}

impl Progress {
    /// Entries durable but not yet in the stream.
    pub fn lag_entries(&self) -> u64 {
        self.head
            .load(Ordering::Relaxed)
            .saturating_sub(self.exported.load(Ordering::Relaxed))
    }

    /// Seconds since the oldest entry not yet exported was received (0 when none).
    pub fn lag_seconds(&self, now_ms: i64) -> f64 {
        match self.oldest_pending_ms.load(Ordering::Relaxed) {
            0 => 0.0,
            t => (now_ms - t).max(0) as f64 / 1000.0,
        }
    }
}

/// A running exporter; stops when dropped or by [`Exporter::stop`].
pub struct Exporter {
    pub progress: Arc<Progress>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The export thread, and what tells it to stop.
    thread: Option<(
        std::thread::JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    )>,
}

impl Exporter {
    /// Start exporting `ledger`'s durable entries as `cfg` says.
    pub fn start(cfg: NatsExport, ledger_id: String, ledger: Ledger) -> Exporter {
        let progress = Arc::new(Progress::default());
        running()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((Arc::downgrade(ledger.store()), Arc::downgrade(&progress)));
        let key = ledger
            .store()
            .genesis_public_key()
            .map(|k| hex::encode(k.as_bytes()))
            .unwrap_or_default();
        let lag = tokio::spawn(watch_lag(ledger.clone(), progress.clone()));
        let mut run = Run {
            cfg,
            ledger_id,
            ledger_key: key,
            ledger,
            progress: progress.clone(),
            casinos: HashMap::new(),
            subjects: HashMap::new(),
            common: HeaderMap::new(),
        };
        run.common = common_headers(&run.ledger_id, &run.ledger_key);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("export-nats".into())
            .spawn(move || {
                // Below ingest's threads: when both want a core, ingest has it.
                if let Err(e) = crate::load::lower_this_thread(EXPORT_NICE) {
                    tracing::warn!(error = %e, "the export to NATS keeps ingest's priority");
                }
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        tracing::error!(error = %e, "the export to NATS cannot start its runtime");
                        return;
                    }
                };
                rt.block_on(async move {
                    tokio::select! {
                        _ = run.forever() => {}
                        _ = stopped => {}
                    }
                });
            });
        let thread = match thread {
            Ok(t) => Some((t, stop)),
            Err(e) => {
                tracing::error!(error = %e, "the export to NATS cannot start its thread");
                None
            }
        };
        Exporter {
            progress,
            tasks: vec![lag],
            thread,
        }
    }

    /// Stop publishing (what is in flight may or may not be stored; the next start resumes
    /// from the stream).
    pub fn stop(&mut self) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
        if let Some((thread, stop)) = self.thread.take() {
            let _ = stop.send(());
            let _ = thread.join();
        }
        self.progress.connected.store(false, Ordering::Relaxed);
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One entry ready to publish.
struct Outgoing {
    index: u64,
    subject: async_nats::Subject,
    headers: HeaderMap,
    bytes: Bytes,
}

struct Run {
    cfg: NatsExport,
    ledger_id: String,
    ledger_key: String,
    ledger: Ledger,
    progress: Arc<Progress>,
    /// Signer id → its casino (None: a principal).
    casinos: HashMap<String, Option<Arc<str>>>,
    /// (ledger record?, casino, kind) → subject.
    subjects: Subjects,
    /// The headers every message carries alike ([`common_headers`]).
    common: HeaderMap,
}

/// Subjects already made, by (ledger record?, casino, kind): an entry's subject is a clone of
/// one of them (a reference count), not a new string.
type Subjects = HashMap<(bool, Option<Arc<str>>, &'static str), async_nats::Subject>;

impl Run {
    async fn forever(mut self) {
        let mut backoff = backoff();
        loop {
            let before = self.progress.published.load(Ordering::Relaxed);
            let err = self.session().await;
            if self.progress.published.load(Ordering::Relaxed) != before {
                // It got somewhere: start the waits from the shortest again.
                backoff = self::backoff();
            }
            self.progress.connected.store(false, Ordering::Relaxed);
            self.progress.resumes.fetch_add(1, Ordering::Relaxed);
            let wait = backoff.next().unwrap_or(Duration::from_secs(10));
            let msg = err.to_string();
            match err {
                ExportError::Foreign { .. } => {
                    tracing::error!(error = %msg, "export to NATS stopped: fix the stream or the configuration")
                }
                _ => {
                    tracing::warn!(error = %msg, retry_in_ms = wait.as_millis() as u64, "export to NATS: resuming from the stream")
                }
            }
            *self
                .progress
                .last_error
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(msg);
            tokio::time::sleep(wait).await;
        }
    }

    /// Connect, find where the stream ends, publish until an error.
    async fn session(&mut self) -> ExportError {
        match self.session_inner().await {
            Ok(never) => match never {},
            Err(e) => e,
        }
    }

    async fn connect(&self) -> Result<jetstream::Context, ExportError> {
        let c = &self.cfg;
        let mut opts = async_nats::ConnectOptions::new()
            .name(format!("ledgerd-export {}", self.ledger_id))
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(Duration::from_millis(c.ack_timeout_ms)));
        if let Some(f) = &c.credentials_file {
            opts = opts.credentials_file(f).await.map_err(|e| {
                ExportError::Connect(format!("export.nats.credentials_file {}: {e}", f.display()))
            })?;
        }
        if let Some(ca) = &c.tls_ca {
            opts = opts.add_root_certificates(ca.clone()).require_tls(true);
        }
        if let (Some(cert), Some(key)) = (&c.tls_cert, &c.tls_key) {
            opts = opts
                .add_client_certificate(cert.clone(), key.clone())
                .require_tls(true);
        }
        let addrs = c
            .servers
            .iter()
            .map(|s| s.parse::<async_nats::ServerAddr>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ExportError::Connect(e.to_string()))?;
        let client = opts
            .connect(addrs)
            .await
            .map_err(|e| ExportError::Connect(e.to_string()))?;
        Ok(jetstream::ContextBuilder::new()
            .timeout(Duration::from_millis(c.ack_timeout_ms))
            .max_ack_inflight(c.max_in_flight.max(1) * 2)
            .backpressure_on_inflight(true)
            .build(client))
    }

    fn stream_err(&self, detail: impl std::fmt::Display) -> ExportError {
        ExportError::Stream {
            stream: self.cfg.stream.clone(),
            detail: detail.to_string(),
        }
    }

    /// The stream (created if missing), its last sequence, and the index of the next entry it
    /// needs.
    async fn resume_point(
        &self,
        js: &jetstream::Context,
    ) -> Result<(jetstream::stream::Stream, u64, u64), ExportError> {
        let c = &self.cfg;
        let mut stream = match js.get_stream(&c.stream).await {
            Ok(s) => s,
            Err(e)
                if matches!(
                    e.kind(),
                    jetstream::context::GetStreamErrorKind::JetStream(j)
                        if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND
                ) =>
            {
                js.create_stream(jetstream::stream::Config {
                    name: c.stream.clone(),
                    subjects: vec![c.stream_subjects()],
                    num_replicas: c.replicas,
                    duplicate_window: Duration::from_secs(c.duplicate_window_secs),
                    storage: jetstream::stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .map_err(|e| self.stream_err(format!("cannot create it: {e}")))?;
                tracing::info!(stream = %c.stream, replicas = c.replicas, subjects = %c.stream_subjects(), "export: created the stream");
                js.get_stream(&c.stream)
                    .await
                    .map_err(|e| self.stream_err(e))?
            }
            Err(e) => return Err(self.stream_err(e)),
        };
        let info = stream.info().await.map_err(|e| self.stream_err(e))?;
        if !info.config.subjects.contains(&c.stream_subjects()) {
            return Err(ExportError::Foreign {
                stream: c.stream.clone(),
                detail: format!(
                    "its subjects are {:?}, not {}",
                    info.config.subjects,
                    c.stream_subjects()
                ),
            });
        }
        let (last_seq, messages) = (info.state.last_sequence, info.state.messages);
        if messages == 0 {
            return Ok((stream, last_seq, 0));
        }
        let last = stream
            .get_raw_message(last_seq)
            .await
            .map_err(|e| self.stream_err(format!("reading its last message ({last_seq}): {e}")))?;
        let header = |name: &str| {
            last.headers
                .get(name)
                .map(|v| v.as_str().to_string())
                .unwrap_or_default()
        };
        let foreign = |detail: String| ExportError::Foreign {
            stream: c.stream.clone(),
            detail,
        };
        // (The entry hash below is what proves it is this ledger's history; the id names it.)
        if header("Ledger-Id") != self.ledger_id {
            return Err(foreign(format!(
                "its last message ({last_seq}) is of ledger {:?}, not {:?}",
                header("Ledger-Id"),
                self.ledger_id
            )));
        }
        let index: u64 = header("Ledger-Index")
            .parse()
            .map_err(|_| foreign(format!("its last message ({last_seq}) has no Ledger-Index")))?;
        // The entry the stream ends with must be the one this store holds at that index.
        let store = self.ledger.store().clone();
        let held = tokio::task::spawn_blocking(move || store.entry(index))
            .await
            .map_err(|e| ExportError::Store(e.to_string()))?
            .map_err(|e| ExportError::Store(e.to_string()))?;
        match held {
            Some(e) if hex::encode(&e.entry_hash) == header("Ledger-Entry-Hash") => {}
            Some(_) => {
                return Err(foreign(format!(
                    "entry {index} in the stream has another hash than the ledger's"
                )));
            }
            None => {
                return Err(foreign(format!(
                    "the stream ends at entry {index}, beyond this ledger's head"
                )));
            }
        }
        Ok((stream, last_seq, index + 1))
    }

    async fn session_inner(&mut self) -> Result<std::convert::Infallible, ExportError> {
        let js = self.connect().await?;
        let client = js.client();
        let (_stream, mut last_seq, mut next) = self.resume_point(&js).await?;
        self.progress.exported.store(next, Ordering::Relaxed);
        self.progress.connected.store(true, Ordering::Relaxed);
        tracing::info!(stream = %self.cfg.stream, next_index = next, stream_seq = last_seq, "export to NATS: publishing");
        let mut durable = self.ledger.durable();
        // (index, the stream sequence it must get, its acknowledgement)
        let mut in_flight: VecDeque<(u64, u64, jetstream::context::PublishAckFuture)> =
            VecDeque::new();
        let ack_every = ACK_EVERY.min(self.cfg.max_in_flight).max(1);
        let max_acks = (self.cfg.max_in_flight / ack_every).max(1);
        let mut gate = Gate::new();
        loop {
            let head = durable.borrow_and_update().0;
            self.progress.head.store(head + 1, Ordering::Relaxed);
            if next <= head {
                let yields = gate.yields();
                if yields != self.progress.yielding.swap(yields, Ordering::Relaxed) && yields {
                    self.progress.yields.fetch_add(1, Ordering::Relaxed);
                }
                let size = if yields { TRICKLE } else { READ_BATCH };
                let to = head.min(next + size - 1);
                let batch = self.read(next, to)?;
                let n = batch.len();
                for (k, out) in batch.into_iter().enumerate() {
                    let index = out.index;
                    let failed = |e: &dyn std::fmt::Display| ExportError::Publish {
                        index,
                        detail: e.to_string(),
                    };
                    if (k + 1) % ack_every == 0 || k + 1 == n {
                        if in_flight.len() >= max_acks {
                            let (i, seq, ack) = in_flight.pop_front().expect("not empty");
                            self.acknowledged(i, seq, ack).await?;
                        }
                        let ack = js
                            .send_publish(
                                out.subject,
                                PublishMessage::build()
                                    .payload(out.bytes)
                                    .headers(out.headers)
                                    .expected_last_sequence(last_seq),
                            )
                            .await
                            .map_err(|e| failed(&e))?;
                        in_flight.push_back((index, last_seq + 1, ack));
                    } else {
                        let mut headers = out.headers;
                        headers.insert(
                            async_nats::header::NATS_EXPECTED_LAST_SEQUENCE,
                            last_seq.to_string(),
                        );
                        client
                            .publish_with_headers(out.subject, headers, out.bytes)
                            .await
                            .map_err(|e| failed(&e))?;
                    }
                    last_seq += 1;
                    next = index + 1;
                }
                if yields {
                    // Ingest is at its peak: what was sent is acknowledged, then a pause.
                    while let Some((i, seq, ack)) = in_flight.pop_front() {
                        self.acknowledged(i, seq, ack).await?;
                    }
                    tokio::time::sleep(YIELD_PAUSE).await;
                }
                continue;
            }
            // Caught up with the durable head: every acknowledgement, then wait for more.
            while let Some((i, seq, ack)) = in_flight.pop_front() {
                self.acknowledged(i, seq, ack).await?;
            }
            if durable.changed().await.is_err() {
                // The ledger stopped; the thread is stopped with it.
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(GATHER).await;
        }
    }

    /// Wait for the acknowledgement of entry `index`, which the stream must have stored at
    /// sequence `seq`: then every entry up to it is in the stream.
    async fn acknowledged(
        &self,
        index: u64,
        seq: u64,
        ack: jetstream::context::PublishAckFuture,
    ) -> Result<(), ExportError> {
        let a = ack.await.map_err(|e| ExportError::Publish {
            index,
            detail: match e.kind() {
                PublishErrorKind::WrongLastSequence => {
                    "the stream did not end where expected (another writer, or a message lost)"
                        .into()
                }
                _ => e.to_string(),
            },
        })?;
        if a.duplicate {
            self.progress.duplicates.fetch_add(1, Ordering::Relaxed);
        } else if a.sequence != seq {
            return Err(ExportError::Publish {
                index,
                detail: format!(
                    "stored at stream sequence {}, not {seq} as expected",
                    a.sequence
                ),
            });
        } else {
            let before = self.progress.exported.load(Ordering::Relaxed);
            self.progress
                .published
                .fetch_add((index + 1).saturating_sub(before), Ordering::Relaxed);
        }
        self.progress.exported.store(index + 1, Ordering::Relaxed);
        Ok(())
    }

    /// Entries `from..=to` from the store, as messages. Read here, on the export's own thread
    /// (its runtime serves only the export's connection).
    fn read(&mut self, from: u64, to: u64) -> Result<Vec<Outgoing>, ExportError> {
        let store = self.ledger.store().clone();
        let out = read_entries(
            &store,
            from,
            to,
            &mut self.casinos,
            &mut self.subjects,
            &self.ledger_id,
            &self.common,
            &self.cfg.subject_prefix,
        );
        if self.casinos.len() > 100_000 {
            self.casinos.clear();
        }
        if self.subjects.len() > 100_000 {
            self.subjects.clear();
        }
        out
    }
}

/// Whether ingest is at its peak, as the export sees it: the machine's idle share and the
/// share of the cores ledgerd uses apart from this thread ([`crate::load::export_yields`]).
struct Gate {
    idle: crate::load::IdleMeter,
    ingest: crate::load::BusyMeter,
    /// Until when the export yields, whatever the meters say ([`YIELD_HOLD`]).
    held_until: Option<std::time::Instant>,
}

impl Gate {
    fn new() -> Gate {
        Gate {
            idle: crate::load::IdleMeter::default(),
            ingest: crate::load::BusyMeter::new(
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            ),
            held_until: None,
        }
    }

    /// Called on the export's thread (its own CPU time is taken out of ledgerd's).
    fn yields(&mut self) -> bool {
        let now = std::time::Instant::now();
        let idle = self.idle.observe(now, crate::load::machine_ticks);
        let ingest = self.ingest.observe(now, || {
            Some(crate::load::process_cpu()?.saturating_sub(crate::load::thread_cpu()?))
        });
        held(
            crate::load::export_yields(idle, ingest),
            now,
            &mut self.held_until,
        )
    }
}

/// Whether to yield, given what the meters say now (`peak`): yes at the peak and for
/// [`YIELD_HOLD`] after it was last seen.
fn held(peak: bool, now: std::time::Instant, until: &mut Option<std::time::Instant>) -> bool {
    if peak {
        *until = Some(now + YIELD_HOLD);
    }
    peak || until.is_some_and(|u| now < u)
}

#[allow(clippy::too_many_arguments)]
fn read_entries(
    store: &Store,
    from: u64,
    to: u64,
    casinos: &mut HashMap<String, Option<Arc<str>>>,
    subjects: &mut Subjects,
    ledger_id: &str,
    common: &HeaderMap,
    prefix: &str,
) -> Result<Vec<Outgoing>, ExportError> {
    let store_err = |e: ledger_store::StoreError| ExportError::Store(e.to_string());
    let mut out = Vec::with_capacity((to - from + 1) as usize);
    let (mut order, chunks) = store.chunks(from, to);
    for c in chunks {
        let chunk = order
            .accept(c, |c| Ok(c.clone()), |c| c.record_count())
            .map_err(store_err)?;
        chunk
            .each_entry_bytes(|index, bytes| {
                if index < from || index > to {
                    return Ok(());
                }
                let e = v1::ChainEntry::decode(bytes).map_err(|e| {
                    ledger_store::StoreError::CorruptEntry {
                        index,
                        detail: e.to_string(),
                    }
                })?;
                let (casino, kind) = describe(store, &e, casinos)?;
                let ledger_record = e.kind == v1::RecordKind::Ledger as i32;
                let key = (ledger_record, casino, kind);
                let subject = match subjects.get(&key) {
                    Some(s) => s.clone(),
                    None => {
                        let s: async_nats::Subject =
                            subject(prefix, ledger_record, key.1.as_deref(), kind).into();
                        subjects.insert(key.clone(), s.clone());
                        s
                    }
                };
                out.push(message(
                    &e,
                    bytes,
                    subject,
                    key.1.as_deref(),
                    kind,
                    ledger_id,
                    common,
                ));
                Ok(())
            })
            .map_err(store_err)?;
        if order.expected() > to {
            break;
        }
    }
    if out.len() as u64 != to - from + 1 {
        return Err(ExportError::Store(format!(
            "entries {from} to {to}: {} read",
            out.len()
        )));
    }
    Ok(out)
}

/// An entry's casino (None: a principal's event or a ledger record) and its kind: the
/// payload's or the ledger record's proto name.
fn describe(
    store: &Store,
    e: &v1::ChainEntry,
    casinos: &mut HashMap<String, Option<Arc<str>>>,
) -> Result<(Option<Arc<str>>, &'static str), ledger_store::StoreError> {
    if e.kind == v1::RecordKind::Ledger as i32 {
        let kind = v1::LedgerRecordBody::decode(e.body.as_slice())
            .ok()
            .and_then(|b| b.record)
            .map(|r| {
                use v1::ledger_record_body::Record as R;
                match r {
                    R::Genesis(_) => "genesis",
                    R::PrincipalsDeclared(_) => "principals_declared",
                    R::SecurityFinding(_) => "security_finding",
                    R::LedgerKeyRotated(_) => "ledger_key_rotated",
                    R::ClockStep(_) => "clock_step",
                    R::WitnessRefused(_) => "witness_refused",
                    R::FindingReviewed(_) => "finding_reviewed",
                }
            })
            .unwrap_or("unknown");
        return Ok((None, kind));
    }
    let body = v1::EventBody::decode(e.body.as_slice()).unwrap_or_default();
    let kind = body
        .payload
        .as_ref()
        .map(ledger_core::event::payload_name)
        .unwrap_or("unknown");
    let casino = match casinos.get(&body.device_id) {
        Some(c) => c.clone(),
        None => {
            let c = store.signer(&body.device_id)?.and_then(|s| {
                matches!(
                    s.role,
                    ledger_core::SignerRole::Table | ledger_core::SignerRole::Machine
                )
                .then(|| Arc::from(s.casino_id))
            });
            casinos.insert(body.device_id.clone(), c.clone());
            c
        }
    };
    Ok((casino, kind))
}

/// A subject token for `s`: characters outside `[A-Za-z0-9_-]` as `%XX`.
pub fn subject_token(s: &str) -> String {
    let mut t = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            t.push(b as char);
        } else {
            t.push_str(&format!("%{b:02X}"));
        }
    }
    t
}

/// The subject of an entry.
pub fn subject(prefix: &str, ledger_record: bool, casino: Option<&str>, kind: &str) -> String {
    match (ledger_record, casino) {
        (true, _) => format!("{prefix}.ledger.{}", subject_token(kind)),
        (false, Some(c)) => format!(
            "{prefix}.casino.{}.{}",
            subject_token(c),
            subject_token(kind)
        ),
        (false, None) => format!("{prefix}.principal.{}", subject_token(kind)),
    }
}

/// `Nats-Msg-Id` of entry `index` of ledger `ledger_id`.
pub fn message_id(ledger_id: &str, index: u64) -> String {
    format!("{ledger_id}:{index}")
}

/// The headers' names, made without an allocation (a clone of a custom one shares its bytes).
mod names {
    use async_nats::HeaderName;
    pub const INDEX: HeaderName = HeaderName::from_static("Ledger-Index");
    pub const ID: HeaderName = HeaderName::from_static("Ledger-Id");
    pub const KEY: HeaderName = HeaderName::from_static("Ledger-Key");
    pub const HASH: HeaderName = HeaderName::from_static("Ledger-Entry-Hash");
    pub const RECEIVED: HeaderName = HeaderName::from_static("Ledger-Received-At-Ms");
    pub const KIND: HeaderName = HeaderName::from_static("Ledger-Kind");
    pub const CASINO: HeaderName = HeaderName::from_static("Ledger-Casino");
}

/// The headers every message of ledger `ledger_id` (key `ledger_key`) carries alike; each
/// message's map starts as a clone of it.
fn common_headers(ledger_id: &str, ledger_key: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(names::ID, ledger_id);
    h.insert(names::KEY, ledger_key);
    h
}

fn message(
    e: &v1::ChainEntry,
    bytes: &[u8],
    subject: async_nats::Subject,
    casino: Option<&str>,
    kind: &str,
    ledger_id: &str,
    common: &HeaderMap,
) -> Outgoing {
    // Values moved in as strings, not copied again.
    let mut h = common.clone();
    h.insert(
        async_nats::header::NATS_MESSAGE_ID,
        message_id(ledger_id, e.index),
    );
    h.insert(names::INDEX, e.index.to_string());
    h.insert(names::HASH, hex::encode(&e.entry_hash));
    h.insert(names::RECEIVED, e.received_at_ms.to_string());
    h.insert(names::KIND, kind);
    if let Some(c) = casino {
        h.insert(names::CASINO, c);
    }
    Outgoing {
        index: e.index,
        subject,
        headers: h,
        bytes: Bytes::copy_from_slice(bytes),
    }
}

fn backoff() -> impl Iterator<Item = Duration> {
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_secs(5))
        .with_jitter()
        .without_max_times()
        .build()
}

/// Keeps `head` and `oldest_pending_ms` current, once a second (one entry read): the lag is
/// right while NATS is away too.
async fn watch_lag(ledger: Ledger, progress: Arc<Progress>) {
    let durable = ledger.durable();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let head = durable.borrow().0 + 1;
        progress.head.store(head, Ordering::Relaxed);
        let exported = progress.exported.load(Ordering::Relaxed);
        if exported >= head {
            progress.oldest_pending_ms.store(0, Ordering::Relaxed);
            continue;
        }
        let store = ledger.store().clone();
        if let Ok(Ok(Some(e))) = tokio::task::spawn_blocking(move || store.entry(exported)).await {
            // Only if no later export moved past it meanwhile.
            if progress.exported.load(Ordering::Relaxed) == exported {
                progress
                    .oldest_pending_ms
                    .store(e.received_at_ms, Ordering::Relaxed);
            }
        }
    }
}

// ------------------------------------------------------------------------------------ metrics

type Running = Mutex<Vec<(Weak<Store>, Weak<Progress>)>>;

fn running() -> &'static Running {
    static RUNNING: std::sync::OnceLock<Running> = std::sync::OnceLock::new();
    RUNNING.get_or_init(Running::default)
}

/// Add the export's figures for the ledger over `store` to `registry` (read at each scrape;
/// nothing when no exporter runs for it).
pub fn register(registry: &mut prometheus_client::registry::Registry, store: &Arc<Store>) {
    registry.register_collector(Box::new(ExportFigures {
        store: Arc::downgrade(store),
    }));
}

#[derive(Debug)]
struct ExportFigures {
    store: Weak<Store>,
}

impl prometheus_client::collector::Collector for ExportFigures {
    fn encode(&self, mut e: prometheus_client::encoding::DescriptorEncoder) -> std::fmt::Result {
        use prometheus_client::encoding::EncodeMetric;
        use prometheus_client::metrics::MetricType;
        use prometheus_client::metrics::counter::ConstCounter;
        use prometheus_client::metrics::gauge::ConstGauge;
        let progress = {
            let mut list = running().lock().unwrap_or_else(|p| p.into_inner());
            list.retain(|(s, p)| s.strong_count() > 0 && p.strong_count() > 0);
            list.iter()
                .filter(|(s, _)| s.ptr_eq(&self.store))
                .find_map(|(_, p)| p.upgrade())
        };
        let Some(p) = progress else { return Ok(()) };
        let now_ms = chrono::Utc::now().timestamp_millis();
        let gauges: [(&str, &str, f64); 5] = [
            (
                "ledger_export_nats_lag_entries",
                "Durable entries not yet stored in the NATS stream.",
                p.lag_entries() as f64,
            ),
            (
                "ledger_export_nats_lag_seconds",
                "Seconds since the oldest entry not yet in the NATS stream was received (0: none).",
                p.lag_seconds(now_ms),
            ),
            (
                "ledger_export_nats_exported_entries",
                "Entries the NATS stream holds (the index after the last one acknowledged).",
                p.exported.load(Ordering::Relaxed) as f64,
            ),
            (
                "ledger_export_nats_connected",
                "1 while the exporter is connected and publishing.",
                u8::from(p.connected.load(Ordering::Relaxed)) as f64,
            ),
            (
                "ledger_export_nats_yielding",
                "1 while the export publishes only a trickle because ingest is at its peak.",
                u8::from(p.yielding.load(Ordering::Relaxed)) as f64,
            ),
        ];
        for (name, help, v) in gauges {
            ConstGauge::new(v).encode(e.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)?;
        }
        let counters: [(&str, &str, u64); 4] = [
            (
                "ledger_export_nats_published",
                "Entries the NATS stream acknowledged as stored (an acknowledgement covers the entries before it).",
                p.published.load(Ordering::Relaxed),
            ),
            (
                "ledger_export_nats_duplicates",
                "Republished entries the stream acknowledged as already stored.",
                p.duplicates.load(Ordering::Relaxed),
            ),
            (
                "ledger_export_nats_resumes",
                "Times the exporter dropped what it had in flight and resumed from the stream.",
                p.resumes.load(Ordering::Relaxed),
            ),
            (
                "ledger_export_nats_yields",
                "Times the export began to yield to ingest at its peak (a trickle until it eases).",
                p.yields.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, v) in counters {
            ConstCounter::new(v).encode(e.encode_descriptor(
                name,
                help,
                None,
                MetricType::Counter,
            )?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_keeps_yielding_for_a_while_after_the_peak_was_last_seen() {
        let t = std::time::Instant::now();
        let mut until = None;
        assert!(!held(false, t, &mut until), "never at the peak: no yield");
        assert!(held(true, t, &mut until));
        // A dip in the meters shortly after: still yielding.
        assert!(held(false, t + YIELD_HOLD / 2, &mut until));
        assert!(held(
            false,
            t + YIELD_HOLD - Duration::from_millis(1),
            &mut until
        ));
        assert!(!held(false, t + YIELD_HOLD, &mut until), "held long enough");
        // Seen again: the hold starts from then.
        assert!(held(true, t + YIELD_HOLD * 3, &mut until));
        assert!(held(false, t + YIELD_HOLD * 3 + YIELD_HOLD / 2, &mut until));
        assert!(!held(false, t + YIELD_HOLD * 5, &mut until));
    }

    fn cfg() -> NatsExport {
        toml::from_str(
            r#"servers = ["nats://127.0.0.1:4222", "tls://nats-2.lan:4222"]
               stream = "LEDGER_LISBOA""#,
        )
        .unwrap()
    }

    #[test]
    fn defaults_and_validation_name_the_key() {
        let c = cfg();
        assert_eq!(
            (
                c.subject_prefix.as_str(),
                c.replicas,
                c.duplicate_window_secs
            ),
            ("ledger", 3, 120)
        );
        c.validate().unwrap();
        let bad = |f: &dyn Fn(&mut NatsExport), key: &str| {
            let mut c = cfg();
            f(&mut c);
            let e = c.validate().unwrap_err();
            assert!(e.contains(key), "{e}");
        };
        bad(&|c| c.servers.clear(), "export.nats.servers");
        bad(
            &|c| c.servers = vec!["http://x y".into()],
            "export.nats.servers",
        );
        bad(&|c| c.stream = "a.b".into(), "export.nats.stream");
        bad(&|c| c.stream = String::new(), "export.nats.stream");
        bad(
            &|c| c.subject_prefix = "a..b".into(),
            "export.nats.subject_prefix",
        );
        bad(
            &|c| c.subject_prefix = "a.>".into(),
            "export.nats.subject_prefix",
        );
        bad(&|c| c.replicas = 0, "export.nats.replicas");
        bad(&|c| c.replicas = 7, "export.nats.replicas");
        bad(&|c| c.duplicate_window_secs = 0, "duplicate_window_secs");
        bad(&|c| c.max_in_flight = 0, "max_in_flight");
        bad(&|c| c.tls_cert = Some("c.pem".into()), "tls_key");
        assert!(toml::from_str::<NatsExport>("servers = []\nstream = \"S\"\nstreams = 1").is_err());
    }

    #[test]
    fn subjects_keep_casinos_apart_and_tokens_clean() {
        assert_eq!(
            subject("ledger", false, Some("lisboa"), "bet_placed"),
            "ledger.casino.lisboa.bet_placed"
        );
        assert_eq!(
            subject("reg.pt", false, Some("a.b*>c d%"), "game_played"),
            "reg.pt.casino.a%2Eb%2A%3Ec%20d%25.game_played"
        );
        assert_eq!(
            subject("ledger", false, None, "pool_configured"),
            "ledger.principal.pool_configured"
        );
        assert_eq!(
            subject("ledger", true, None, "genesis"),
            "ledger.ledger.genesis"
        );
        // Distinct casinos never share a token.
        assert_ne!(subject_token("a.b"), subject_token("a%2Eb"));
        assert_eq!(message_id("casino-lisboa", 42), "casino-lisboa:42");
    }

    #[test]
    fn lag_is_entries_behind_and_age_of_the_oldest() {
        let p = Progress::default();
        p.head.store(10, Ordering::Relaxed);
        p.exported.store(4, Ordering::Relaxed);
        assert_eq!(p.lag_entries(), 6);
        assert_eq!(p.lag_seconds(5_000), 0.0);
        p.oldest_pending_ms.store(2_000, Ordering::Relaxed);
        assert_eq!(p.lag_seconds(5_000), 3.0);
        p.exported.store(12, Ordering::Relaxed);
        assert_eq!(p.lag_entries(), 0);
    }
}
