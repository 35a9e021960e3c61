//! ledgerd's configuration: a TOML file (every key optional except what a deployment must
//! decide), overridden by `--data-dir` and `--listen`. `deploy/ledgerd.toml` documents every key
//! and is loaded by a test, so it cannot drift from this code.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use ledger_core::{SignerRole, TimePolicy};
use ledger_store::{OpenConfig, PrincipalConfig};
use serde::{Deserialize, Serialize};

/// Most envelopes one ingest stream may have waiting for receipts (`ingest.max_in_flight_per_stream`).
pub const MAX_IN_FLIGHT_PER_STREAM: usize = 1 << 20;
/// Largest `ingest.queue_capacity` (envelopes queued from all streams to the writer).
pub const MAX_QUEUE_CAPACITY: usize = 1 << 24;
/// Longest `ingest.coalesce_us` and `ingest.hold_us`: the wait adds to every receipt's latency
/// at moderate load.
pub const MAX_COALESCE_US: u64 = 10_000;

/// The whole configuration.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Identifier written into the genesis record of a new ledger. An existing data directory
    /// whose genesis names another ledger is refused.
    pub ledger_id: String,
    /// Where the ledger lives (sled store, ledger.key, checkpoints.log). `--data-dir` overrides.
    pub data_dir: Option<PathBuf>,
    /// The ledger's signing key in a file outside the data directory (PKCS#8 PEM, mode 0600),
    /// instead of `<data_dir>/ledger.key`. `--init` creates it there unless it exists (a key
    /// provisioned beforehand, e.g. by `ledgerctl keygen`); relative to the configuration file.
    pub ledger_key_file: Option<PathBuf>,
    /// The ledger's public key (64 hex digits), pinned: a data directory holding a ledger with
    /// another key is refused. `ledgerd --init` prints it for a new ledger.
    pub ledger_public_key: Option<String>,
    /// The ledger's signing key in a PKCS#11 token (an HSM) instead of a key file.
    pub ledger_key: Option<LedgerKeySection>,
    /// gRPC listen address. `--listen` overrides.
    pub listen: SocketAddr,
    /// Operator and regulator keys.
    pub principals: Vec<PrincipalEntry>,
    /// TLS on the gRPC and metrics listeners.
    pub tls: Tls,
    /// Who may connect: TLS client certificates (by public key) with their role and casinos.
    pub clients: Vec<ClientEntry>,
    /// Witnesses that cosign each checkpoint (C2SP tlog-witness); none by default.
    pub witnesses: Vec<WitnessEntry>,
    pub ingest: Ingest,
    pub checkpoint: Checkpoint,
    pub store: StoreSection,
    pub grpc: Grpc,
    pub audit: AuditSection,
    pub metrics: Metrics,
    pub log: Log,
    /// Run as a read-only mirror of another ledger (`crate::mirror`). Absent: a ledger of its own.
    pub mirror: Option<MirrorSection>,
    /// Acknowledge only what mirrors hold too (`crate::mirror::replication`).
    pub replication: Replication,
    /// Copies of the durable entries to a distributed log (`crate::export_nats`).
    pub export: crate::export_nats::Export,
    /// The casinos' gaming days for the reports (`audit::gaming_day`).
    pub reports: Reports,
}

/// `[reports]`: the gaming day (time zone and start) of the ledger's casinos, and
/// `[reports.casinos.<id>]` for a casino that differs.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Reports {
    /// IANA time zone of the gaming day (default Europe/Lisbon).
    pub time_zone: String,
    /// Local time the gaming day starts at, HH:MM (default 06:00).
    pub day_starts: String,
    pub casinos: std::collections::BTreeMap<String, audit::DayRuleConfig>,
}

impl Default for Reports {
    fn default() -> Reports {
        let d = audit::DayRuleConfig::default();
        Reports {
            time_zone: d.time_zone,
            day_starts: d.day_starts,
            casinos: Default::default(),
        }
    }
}

impl Reports {
    /// The calendar, or an error naming the key.
    pub fn calendar(&self) -> Result<audit::Calendar, ConfigError> {
        let rule = |at: &str, r: &audit::DayRuleConfig| {
            r.rule()
                .map_err(|e| ConfigError::Invalid(format!("{at}: {e}")))
        };
        let mut c = audit::Calendar {
            default: rule(
                "reports",
                &audit::DayRuleConfig {
                    time_zone: self.time_zone.clone(),
                    day_starts: self.day_starts.clone(),
                },
            )?,
            casinos: Default::default(),
        };
        for (id, r) in &self.casinos {
            c.casinos
                .insert(id.clone(), rule(&format!("reports.casinos.{id}"), r)?);
        }
        Ok(c)
    }
}

/// `[replication]`: a receipt only once the event is durable here and on `required_mirrors` of
/// the mirrors named in `mirrors` (like synchronous standbys).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Replication {
    /// How many mirrors must hold a group before its receipts go out; 0: off (local only).
    pub required_mirrors: usize,
    /// The `[[clients]]` names of the mirrors whose reports count.
    pub mirrors: Vec<String>,
    /// When fewer than `required_mirrors` hold a group: "wait" (no receipt until they do) or
    /// "degrade" (after `timeout_ms`, acknowledge local-only, with an error in the log, until
    /// the mirrors catch up).
    pub on_lag: LagPolicy,
    /// How long a group waits for its mirrors under "degrade", in ms.
    pub timeout_ms: u64,
}

/// `replication.on_lag`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LagPolicy {
    #[default]
    Wait,
    Degrade,
}

/// `[mirror]`: the ledger this ledgerd copies, verifying every entry, and how it connects.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MirrorSection {
    /// The source ledgerd's gRPC address: `https://host:port` (or `http://` for a plaintext
    /// ledgerd on loopback).
    pub source: String,
    /// The source's ledger id (its genesis must name it).
    pub source_ledger_id: String,
    /// The source's ledger public key (its genesis key): 64 hex digits, or a file holding them.
    pub source_ledger_key: String,
    /// The CA that signed the source's certificate (PEM).
    pub tls_ca: Option<PathBuf>,
    /// This mirror's client certificate and key at the source (a regulator there).
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Most entries verified and stored as one group.
    #[serde(default = "default_mirror_group")]
    pub max_group: usize,
    /// How often the source's new checkpoints and head are read, in ms.
    #[serde(default = "default_mirror_poll_ms")]
    pub poll_ms: u64,
}

fn default_mirror_group() -> usize {
    4096
}

fn default_mirror_poll_ms() -> u64 {
    500
}

impl MirrorSection {
    /// The source's genesis key, from hex or from the file that holds it.
    pub fn ledger_key(&self) -> Result<ed25519_dalek::VerifyingKey, ConfigError> {
        let text = if self.source_ledger_key.len() == 64
            && self
                .source_ledger_key
                .chars()
                .all(|c| c.is_ascii_hexdigit())
        {
            self.source_ledger_key.clone()
        } else {
            std::fs::read_to_string(&self.source_ledger_key).map_err(|e| {
                ConfigError::Invalid(format!(
                    "mirror.source_ledger_key: neither 64 hex digits nor a readable file ({e})"
                ))
            })?
        };
        ledger_core::signing::parse_public_key_hex(text.trim())
            .map_err(|e| ConfigError::Invalid(format!("mirror.source_ledger_key: {e}")))
    }
}

/// A witness ledgerd submits its checkpoints to (`crate::witnesses`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WitnessEntry {
    /// Its key name, as its cosignatures carry it (e.g. "inspectorate.example/w1").
    pub name: String,
    /// Its submission prefix: `http://host:port` (POST <url>/add-checkpoint).
    pub url: String,
    /// Its ed25519 public key (64 hex digits).
    pub public_key: String,
    /// Its ML-DSA-44 cosigning key, if it has one (`witness serve --ml-dsa-key`): its vkey as the
    /// witness prints it (`<name>+<id>+<base64>`), or a PEM public key file (`keygen --ml-dsa-44`).
    /// Then each cosignature must carry both lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ml_dsa_public_key: Option<String>,
}

impl WitnessEntry {
    /// Its cosigning keys: the ed25519 key, then the ML-DSA-44 key if configured.
    pub fn keys(&self) -> Result<Vec<ledger_core::note::CosignerKey>, ConfigError> {
        use ledger_core::note::{self, CosignerKey};
        let bad = |key: &str, e: &dyn std::fmt::Display| {
            ConfigError::Invalid(format!("[[witnesses]] {} {key}: {e}", self.name))
        };
        let ed = ledger_core::signing::parse_public_key_hex(&self.public_key)
            .map_err(|e| bad("public_key", &e))?;
        let mut keys = vec![CosignerKey::from(ed)];
        if let Some(v) = &self.ml_dsa_public_key {
            let key = if v.starts_with(&format!("{}+", self.name)) {
                let (_, k) =
                    CosignerKey::parse_vkey(v).map_err(|e| bad("ml_dsa_public_key", &e))?;
                k
            } else {
                let text = std::fs::read_to_string(v).map_err(|e| {
                    bad(
                        "ml_dsa_public_key",
                        &format!(
                            "neither this witness's vkey ({}+…) nor a readable PEM file: {v}: {e}",
                            self.name
                        ),
                    )
                })?;
                CosignerKey::from(
                    note::ml_dsa_44_public_from_pem(&text)
                        .map_err(|e| bad("ml_dsa_public_key", &format!("{v}: {e}")))?,
                )
            };
            if !matches!(key, CosignerKey::MlDsa44(_)) {
                return Err(bad(
                    "ml_dsa_public_key",
                    &"an ed25519 key: give the ML-DSA-44 vkey (type 0x06)",
                ));
            }
            keys.push(key);
        }
        Ok(keys)
    }
}

/// `[ledger_key]`: an Ed25519 key pair in a PKCS#11 token (`ledgerctl hsm keygen` creates it).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerKeySection {
    /// The token's PKCS#11 module (shared library).
    pub pkcs11_module: PathBuf,
    /// The label of the token holding the key.
    pub token_label: String,
    /// The label (`CKA_LABEL`) of the key pair.
    pub key_label: String,
    /// A file (mode 0600) whose first line is the token's user PIN.
    pub pin_file: PathBuf,
}

impl LedgerKeySection {
    /// The token and key, with the PIN read from `pin_file`.
    pub fn pkcs11(&self) -> Result<ledger_store::Pkcs11Config, ConfigError> {
        let pin = ledger_store::read_pin_file(&self.pin_file)
            .map_err(|e| ConfigError::Invalid(format!("ledger_key.pin_file: {e}")))?;
        Ok(ledger_store::Pkcs11Config {
            module: self.pkcs11_module.clone(),
            token_label: self.token_label.clone(),
            key_label: self.key_label.clone(),
            pin,
        })
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Metrics {
    /// Serve `GET /metrics` (Prometheus text format: the durable head, whether ledgerd still
    /// acknowledges, ingest counters, receipt and sync latency histograms) on this address.
    /// Absent: no endpoint.
    pub listen: Option<SocketAddr>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tls {
    /// Serve without TLS. Allowed only when every listener is on a loopback address; every
    /// caller is then trusted with every role (the machine's own users).
    pub plaintext: bool,
    /// PEM certificate chain of ledgerd (leaf first). Relative paths are relative to the
    /// configuration file.
    pub cert_chain: Option<PathBuf>,
    /// PEM private key of that certificate (PKCS#8, as `ledgerctl pki` writes it).
    pub key: Option<PathBuf>,
    /// PEM CA certificates that sign the clients' certificates.
    pub client_ca: Vec<PathBuf>,
    /// Refuse a TLS handshake without a client certificate. When false, such clients are let
    /// in and answered only by the health service (load-balancer probes).
    pub require_client_cert: bool,
    /// A TLS handshake must be over within this many ms (1..=60000), or the connection is closed.
    pub handshake_timeout_ms: u64,
}

impl Default for Tls {
    fn default() -> Self {
        Tls {
            plaintext: false,
            cert_chain: None,
            key: None,
            client_ca: Vec::new(),
            require_client_cert: true,
            handshake_timeout_ms: 10_000,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientEntry {
    /// A name for logs and refusals.
    pub name: String,
    /// "device", "operator", "compliance", "regulator" or "admin" (docs/security.md).
    pub role: String,
    /// Casinos it is limited to; absent or empty = every casino of the ledger.
    #[serde(default)]
    pub casinos: Vec<String>,
    /// SHA-256 of its certificate's SubjectPublicKeyInfo, 64 hex digits (`ledgerctl pki
    /// fingerprint CERT`).
    pub fingerprint: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PrincipalEntry {
    /// The id it signs as (EventBody.device_id).
    pub id: String,
    /// "operator" or "regulator".
    pub role: String,
    /// ed25519 public key, 64 hex digits.
    pub public_key: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ingest {
    /// Largest accepted EventBody in bytes; larger envelopes are rejected (TOO_LARGE). Kept far
    /// below sled's blob threshold (a page of up to 17 values must stay under a quarter
    /// segment), whose files sled never fsyncs; hence at most 65536.
    pub max_body_bytes: usize,
    /// Most envelopes verified and appended as one group (one flush + fsync covers a group).
    pub max_batch: usize,
    /// At moderate load, how long (µs) the verifier may let a small group fill while envelopes
    /// keep arriving (it stops at the first 50 µs step that brings none, so an envelope that
    /// comes alone waits one step); 0 = never wait. At most 10000. See `pipeline::Coalesce`.
    pub coalesce_us: u64,
    /// A group this large is not held back to fill (1..=max_batch).
    pub coalesce_events: usize,
    /// When ledgerd is busy, how long (µs) the verifier holds a group smaller than
    /// `coalesce_events` so that it takes in the next bursts too: nothing while ledgerd's threads
    /// use under 35% of the machine's cores, rising to all of it at 60%. Fewer, larger groups
    /// cost much less CPU per event. 0 = never hold. At most 10000. See `ledgerd::load`.
    pub hold_us: u64,
    /// How far ahead of the ledger's clock an event's occurred_at may be, ms.
    pub max_future_skew_ms: i64,
    /// How far behind the ledger's clock an event's occurred_at may be, ms; 0 = no limit.
    /// Default 7 days: the longest outage after which agents resend without help
    /// (`ledger_core::event::DEFAULT_MAX_PAST_MS`).
    pub max_past_age_ms: i64,
    /// A step of the ledger's wall clock against its monotonic clock of more than this between
    /// two entries (ms, 10..=3600000) is logged, counted and recorded in the chain (ClockStep);
    /// received times then follow the wall clock again.
    pub clock_step_threshold_ms: u64,
    /// Earliest occurred_at accepted at all, ms since the epoch.
    pub earliest_time_ms: i64,
    /// Sign each durable group's head and put it, with the entry's path, in every ACCEPTED
    /// receipt, so that a device can prove the acknowledgement offline (docs/evidence.md).
    pub signed_receipts: bool,
    /// Envelopes in flight (received, not yet answered) per stream before ledgerd stops
    /// reading that stream (back-pressure).
    pub max_in_flight_per_stream: usize,
    /// Envelopes in flight over all streams together before ledgerd stops reading every stream
    /// (1..=16,777,216). With the per-stream limit alone, a client that sends and never reads its
    /// receipts makes ledgerd hold them on every stream it opens.
    pub max_in_flight_total: usize,
    /// A stream whose client leaves receipts waiting and takes none of them for this long
    /// (seconds, 1..=3600) is ended: its waiting receipts are dropped, and its share of
    /// `max_in_flight_total` goes back to the other streams. The agent resends what has no
    /// receipt on a new stream (duplicates get their original receipts).
    pub unread_receipts_secs: u64,
    /// Capacity of the queue from all streams to the writer (1..=16,777,216).
    pub queue_capacity: usize,
    /// Events a second one device may send, on average (a token bucket per device id); past
    /// it, its stream ends with RESOURCE_EXHAUSTED and a retry delay, nothing stored. 0 = no
    /// limit.
    pub device_rate_per_sec: u64,
    /// Events one device may send at once above its rate (the bucket's size, 1..=100,000,000):
    /// an agent resending after an outage sends its backlog in a burst.
    pub device_burst: u64,
    /// Most bytes of envelopes (body and signature) in that queue at once, MiB. With the
    /// largest bodies, `queue_capacity` alone would let the streams queue 4 GiB (any client can
    /// send envelopes, which are refused only in order); past this, streams wait (1..=65536).
    pub queue_mib: usize,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Checkpoint {
    /// Sign a checkpoint this often when the chain has grown; 0 = only on request and shutdown.
    pub interval_secs: u64,
    /// Least time between two checkpoints signed on request (`Checkpoints.Create`), ms. Any
    /// client may ask; requests within it wait and share the next one, which still covers every
    /// entry acknowledged before each request. 0 = no limit (0..=3600000).
    pub request_interval_ms: u64,
    /// How many of the [[witnesses]] must cosign a checkpoint for it to count as cosigned
    /// (`GetLatest` with `cosigned`); 0 = all of them.
    pub witnesses_required: usize,
    /// How long to wait for a witness's answer, ms (1..=600000).
    pub witness_timeout_ms: u64,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// sled page cache, MiB (sled's RSS can exceed it; watch memory).
    pub cache_capacity_mb: u64,
    /// Refuse to start unless the data directory is on ext4 with its journal or on xfs, with
    /// write barriers (see [`crate::filesystem`]). When false, ledgerd only logs a warning for
    /// each reason the filesystem might lose acknowledged entries.
    pub require_safe_filesystem: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Grpc {
    /// Largest gRPC message accepted, bytes. Envelopes between ingest.max_body_bytes and this get a
    /// TOO_LARGE receipt; above it the stream fails with OUT_OF_RANGE.
    pub max_message_bytes: usize,
    /// HTTP/2 initial stream window, bytes (the 64 KiB default stalls fast streams).
    pub stream_window_bytes: u32,
    /// HTTP/2 initial connection window, bytes.
    pub connection_window_bytes: u32,
    /// Seconds to let open streams finish after SIGTERM before closing them.
    pub shutdown_grace_secs: u64,
    /// Streams of entries (`ListEntries`, `ListDeviceEntries`, `Tail`) open at once, over all
    /// clients; one more gets RESOURCE_EXHAUSTED. Each holds one of tokio's 512 blocking threads
    /// or follows the head while its client keeps it open (1..=256). `Checkpoints.List` counts
    /// as one too.
    pub max_entry_streams: usize,
    /// Streams of entries one principal may have open at once (1..=256; at most
    /// `max_entry_streams` in effect): one client cannot take them all.
    pub max_entry_streams_per_principal: usize,
    /// Calls a second one principal may make on average, ingest streams and health checks
    /// aside (a token bucket per principal); past it, RESOURCE_EXHAUSTED with retry-after-ms.
    /// 0 = no limit.
    pub principal_calls_per_sec: u64,
    /// Calls one principal may make at once above that rate (1..=1,000,000).
    pub principal_call_burst: u64,
    /// Client connections open at once; one more is closed as soon as it is accepted, with a
    /// warning in the log (1..=65536).
    pub max_connections: usize,
    /// Client connections open at once from one IP address (1..=65536; at most
    /// `max_connections` in effect); one more is closed as soon as it is accepted. One host cannot take every place; a casino floor
    /// behind one NAT address needs one per agent process.
    pub max_connections_per_peer: usize,
    /// HTTP/2 streams (calls) open at once on one connection; hyper refuses more (1..=65536).
    pub max_streams_per_connection: u32,
    /// Send an HTTP/2 ping on a connection idle this long, seconds, and close it if no answer
    /// comes within 20 s: a peer that vanished frees its connection (0 = never, ..=3600).
    pub keepalive_secs: u64,
    /// A connection older than this, seconds, takes no new call (HTTP/2 GOAWAY): closed at once
    /// when idle, after its open streams end otherwise; clients reconnect. Bounds how long an idle
    /// connection holds its place (0 = never, ..=86400).
    pub max_connection_age_secs: u64,
    /// Threads that answer the queries which can read much (reports, rounds, findings, the
    /// jackpot book, the device registry), one query at a time each, at a lower scheduling
    /// priority than ingest (nice 10): queries wait for ingest, not the other way round
    /// (1..=64). See `ledgerd::queries`.
    pub query_threads: usize,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditSection {
    /// Replay every durable entry against the rule engines and the jackpot accounts as it
    /// arrives, and serve the `Audit` and `Jackpots` gRPC services. Its derived store lives in
    /// `<data-dir>/audit` and can be deleted: it is rebuilt from the chain on the next start.
    pub enabled: bool,
    /// Keep each round's table state before adjudication, so `ledgerctl round --explain`
    /// re-adjudicates it exactly (one serialisation per round).
    pub keep_round_states: bool,
    /// A device whose events' own times are off the ledger's received time by more than this
    /// (ms, 0..=86400000; 0: not checked) is an audit finding, once per episode
    /// (`AUDIT_DEVICE_CLOCK_DRIFT`).
    pub device_clock_drift_ms: i64,
}

impl Default for AuditSection {
    fn default() -> Self {
        AuditSection {
            enabled: true,
            keep_round_states: true,
            device_clock_drift_ms: audit::auditor::DEVICE_CLOCK_DRIFT_MS,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Log {
    /// tracing filter (RUST_LOG syntax), e.g. "info" or "ledgerd=debug,info". RUST_LOG overrides.
    pub filter: String,
    /// "plain" (text, coloured only on a terminal) or "json" (one object per line).
    pub format: crate::logging::LogFormat,
    /// OTLP/gRPC collector for trace export (http://host:4317); needs the `otel` build feature.
    /// Unset: OTEL_EXPORTER_OTLP_ENDPOINT if set, else no export.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub otlp_endpoint: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ledger_id: "casino-ledger".into(),
            data_dir: None,
            ledger_key_file: None,
            ledger_public_key: None,
            ledger_key: None,
            listen: "127.0.0.1:50051".parse().expect("literal"),
            principals: Vec::new(),
            tls: Tls::default(),
            clients: Vec::new(),
            witnesses: Vec::new(),
            ingest: Ingest::default(),
            checkpoint: Checkpoint::default(),
            store: StoreSection::default(),
            grpc: Grpc::default(),
            audit: AuditSection::default(),
            metrics: Metrics::default(),
            log: Log::default(),
            mirror: None,
            replication: Replication::default(),
            export: Default::default(),
            reports: Reports::default(),
        }
    }
}

impl Default for Ingest {
    fn default() -> Self {
        let t = TimePolicy::default();
        Ingest {
            max_body_bytes: 64 * 1024,
            max_batch: 2048,
            coalesce_us: 500,
            coalesce_events: 128,
            hold_us: 2000,
            max_future_skew_ms: t.max_future_ms,
            max_past_age_ms: t.max_past_ms,
            clock_step_threshold_ms: 1000,
            earliest_time_ms: t.earliest_ms,
            signed_receipts: true,
            max_in_flight_per_stream: 8192,
            max_in_flight_total: 1 << 18,
            unread_receipts_secs: 30,
            queue_capacity: 65536,
            queue_mib: 256,
            device_rate_per_sec: 10_000,
            device_burst: 200_000,
        }
    }
}

impl Default for Checkpoint {
    fn default() -> Self {
        Checkpoint {
            interval_secs: 60,
            request_interval_ms: 1000,
            witnesses_required: 0,
            witness_timeout_ms: 5000,
        }
    }
}

impl Default for StoreSection {
    fn default() -> Self {
        StoreSection {
            cache_capacity_mb: 256,
            require_safe_filesystem: false,
        }
    }
}

impl Default for Grpc {
    fn default() -> Self {
        Grpc {
            max_message_bytes: 4 << 20,
            stream_window_bytes: 4 << 20,
            connection_window_bytes: 8 << 20,
            shutdown_grace_secs: 5,
            max_entry_streams: 64,
            max_entry_streams_per_principal: 16,
            principal_calls_per_sec: 1_000,
            principal_call_burst: 10_000,
            max_connections: 1024,
            max_connections_per_peer: 256,
            max_streams_per_connection: 1024,
            keepalive_secs: 60,
            max_connection_age_secs: 1800,
            query_threads: 1,
        }
    }
}

impl Default for Log {
    fn default() -> Self {
        Log {
            filter: "info".into(),
            format: crate::logging::LogFormat::Plain,
            otlp_endpoint: None,
        }
    }
}

/// `key = v` must be an identifier (non-empty, printable ASCII without spaces, at most
/// `ledger_core::event::MAX_ID_LEN` bytes): the check of an event's ids, reported naming the
/// configuration's key (not as a "malformed body").
fn identifier(key: &str, v: &str) -> Result<(), ConfigError> {
    ledger_core::event::id(key, v).map_err(|e| {
        ConfigError::Invalid(match e {
            ledger_core::event::BodyError::Malformed { problem, .. } => {
                format!("{key} = {v:?}: {problem}")
            }
            other => format!("{key}: {other}"),
        })
    })
}

/// A configuration problem, naming the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("{path}: {err}")]
    Parse { path: String, err: toml::de::Error },
    #[error("{0}")]
    Invalid(String),
}

impl Config {
    /// Load a TOML file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Read {
            path: path.display().to_string(),
            err,
        })?;
        let mut c = Config::parse(&text).map_err(|e| match e {
            ConfigError::Parse { err, .. } => ConfigError::Parse {
                path: path.display().to_string(),
                err,
            },
            ConfigError::Invalid(m) => ConfigError::Invalid(format!("{}: {m}", path.display())),
            other => other,
        })?;
        // TLS files named relative to the configuration file.
        if let Some(base) = path.parent() {
            let at = |p: &mut PathBuf| {
                if p.is_relative() {
                    *p = base.join(&*p);
                }
            };
            c.ledger_key_file.as_mut().map(at);
            if let Some(k) = c.ledger_key.as_mut() {
                at(&mut k.pkcs11_module);
                at(&mut k.pin_file);
            }
            c.tls.cert_chain.as_mut().map(at);
            c.tls.key.as_mut().map(at);
            c.tls.client_ca.iter_mut().for_each(at);
            if let Some(m) = c.mirror.as_mut() {
                m.tls_ca.as_mut().map(at);
                m.tls_cert.as_mut().map(at);
                m.tls_key.as_mut().map(at);
            }
            if let Some(n) = c.export.nats.as_mut() {
                n.resolve(base);
            }
        }
        Ok(c)
    }

    /// Where the ledger's key is: `[ledger_key]` (its PIN read now), `ledger_key_file`, or the
    /// data directory.
    pub fn key_source(&self) -> Result<ledger_store::KeySource, ConfigError> {
        Ok(match (&self.ledger_key, &self.ledger_key_file) {
            (Some(k), _) => ledger_store::KeySource::Pkcs11(k.pkcs11()?),
            (None, Some(f)) => ledger_store::KeySource::File(f.clone()),
            (None, None) => ledger_store::KeySource::DataDir,
        })
    }

    /// Parse TOML text and check it.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let c: Config = toml::from_str(text).map_err(|err| ConfigError::Parse {
            path: String::new(),
            err,
        })?;
        c.validate()?;
        Ok(c)
    }

    /// Check values that TOML types cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        self.reports.calendar()?;
        let r = &self.replication;
        if r.required_mirrors > r.mirrors.len() {
            return bad(format!(
                "replication.required_mirrors = {}: only {} replication.mirrors are named",
                r.required_mirrors,
                r.mirrors.len()
            ));
        }
        for m in &r.mirrors {
            if !self.clients.iter().any(|c| &c.name == m) {
                return bad(format!(
                    "replication.mirrors names {m:?}, which is not one of the [[clients]]"
                ));
            }
        }
        if r.required_mirrors > 0
            && r.on_lag == LagPolicy::Degrade
            && !(1..=600_000).contains(&r.timeout_ms)
        {
            return bad(
                "replication.timeout_ms must be 1..=600000 with on_lag = \"degrade\"".into(),
            );
        }
        if r.required_mirrors > 0 && self.mirror.is_some() {
            return bad(
                "[replication] is for a source ledger; a mirror acknowledges nothing".into(),
            );
        }
        if let Some(m) = &self.mirror {
            if !(m.source.starts_with("https://") || m.source.starts_with("http://")) {
                return bad(format!(
                    "mirror.source {:?}: give the source as https://host:port",
                    m.source
                ));
            }
            if m.source.starts_with("https://") && m.tls_ca.is_none() {
                return bad(
                    "mirror.tls_ca: an https:// source needs the CA of its certificate".into(),
                );
            }
            if m.tls_cert.is_some() != m.tls_key.is_some() {
                return bad("mirror.tls_cert and mirror.tls_key go together".into());
            }
            if m.source_ledger_id.is_empty() {
                return bad("mirror.source_ledger_id is empty".into());
            }
            if !(1..=65_536).contains(&m.max_group) {
                return bad("mirror.max_group must be 1..=65536".into());
            }
            if !(10..=60_000).contains(&m.poll_ms) {
                return bad("mirror.poll_ms must be 10..=60000".into());
            }
        }
        if self.checkpoint.witnesses_required > self.witnesses.len() {
            return bad(format!(
                "checkpoint.witnesses_required = {}: only {} [[witnesses]] are configured",
                self.checkpoint.witnesses_required,
                self.witnesses.len()
            ));
        }
        if !(1..=600_000).contains(&self.checkpoint.witness_timeout_ms) {
            return bad("checkpoint.witness_timeout_ms must be 1..=600000".into());
        }
        for w in &self.witnesses {
            if w.name.is_empty() || w.name.contains(char::is_whitespace) || w.name.contains('+') {
                return bad(format!(
                    "[[witnesses]] name {:?}: a key name has no spaces or '+'",
                    w.name
                ));
            }
            w.keys()?;
            if !w.url.starts_with("http://") {
                return bad(format!(
                    "[[witnesses]] {} url {:?}: must be http://host:port (the protocol authenticates checkpoints; reach a witness behind TLS through a local proxy)",
                    w.name, w.url
                ));
            }
        }
        if self.ingest.max_body_bytes == 0 || self.ingest.max_body_bytes > 65536 {
            return bad(format!(
                "ingest.max_body_bytes = {}: must be 1..=65536 (larger pages would go to sled blob files)",
                self.ingest.max_body_bytes
            ));
        }
        if self.grpc.max_message_bytes < self.ingest.max_body_bytes + 1024 {
            return bad(
                "grpc.max_message_bytes must exceed ingest.max_body_bytes by at least 1024".into(),
            );
        }
        if self.ingest.max_batch == 0 || self.ingest.max_batch > 65536 {
            return bad(format!(
                "ingest.max_batch = {}: must be 1..=65536",
                self.ingest.max_batch
            ));
        }
        for (key, us) in [
            ("coalesce_us", self.ingest.coalesce_us),
            ("hold_us", self.ingest.hold_us),
        ] {
            if us > MAX_COALESCE_US {
                return bad(format!(
                    "ingest.{key} = {us}: must be at most {MAX_COALESCE_US} (10 ms)"
                ));
            }
        }
        if self.ingest.coalesce_events == 0 || self.ingest.coalesce_events > self.ingest.max_batch {
            return bad(format!(
                "ingest.coalesce_events = {}: must be 1..=ingest.max_batch ({})",
                self.ingest.coalesce_events, self.ingest.max_batch
            ));
        }
        if self.grpc.max_entry_streams == 0 || self.grpc.max_entry_streams > 256 {
            return bad(format!(
                "grpc.max_entry_streams = {}: must be 1..=256 (tokio's blocking pool has 512 threads, shared with the other queries)",
                self.grpc.max_entry_streams
            ));
        }
        if self.grpc.max_connections == 0 || self.grpc.max_connections > 65536 {
            return bad(format!(
                "grpc.max_connections = {}: must be 1..=65536",
                self.grpc.max_connections
            ));
        }
        if self.grpc.max_streams_per_connection == 0 || self.grpc.max_streams_per_connection > 65536
        {
            return bad(format!(
                "grpc.max_streams_per_connection = {}: must be 1..=65536",
                self.grpc.max_streams_per_connection
            ));
        }
        let age = self.grpc.max_connection_age_secs;
        if age > 86_400 {
            return bad(format!(
                "grpc.max_connection_age_secs = {age}: must be 0 (never) ..=86400"
            ));
        }
        if self.grpc.keepalive_secs > 3600 {
            return bad(format!(
                "grpc.keepalive_secs = {}: must be 0..=3600",
                self.grpc.keepalive_secs
            ));
        }
        if self.checkpoint.request_interval_ms > 3_600_000 {
            return bad(format!(
                "checkpoint.request_interval_ms = {}: must be 0..=3600000 (an hour)",
                self.checkpoint.request_interval_ms
            ));
        }
        if self.ingest.queue_mib == 0 || self.ingest.queue_mib > 65536 {
            return bad(format!(
                "ingest.queue_mib = {}: must be 1..=65536",
                self.ingest.queue_mib
            ));
        }
        if self.ingest.max_in_flight_per_stream == 0 || self.ingest.queue_capacity == 0 {
            return bad(
                "ingest.max_in_flight_per_stream and ingest.queue_capacity must be positive".into(),
            );
        }
        if self.ingest.max_in_flight_per_stream > MAX_IN_FLIGHT_PER_STREAM {
            return bad(format!(
                "ingest.max_in_flight_per_stream = {}: must be at most {MAX_IN_FLIGHT_PER_STREAM}",
                self.ingest.max_in_flight_per_stream
            ));
        }
        if self.ingest.max_future_skew_ms < 0 || self.ingest.max_past_age_ms < 0 {
            return bad(
                "ingest.max_future_skew_ms and ingest.max_past_age_ms must not be negative".into(),
            );
        }
        if self.store.cache_capacity_mb == 0 {
            return bad("store.cache_capacity_mb must be positive".into());
        }
        // Upper bounds on what would overflow or stall further down (found by starting ledgerd
        // with every number of deploy/ledgerd.toml at the integer edges): tokio's semaphores
        // take at most usize::MAX >> 3 permits, the cache is given in bytes (`<< 20`), an
        // HTTP/2 window is 65,535..=2^31 - 1 bytes (RFC 9113 6.9; below 65,535 a stream can
        // stall), and timers far in the future overflow `Instant`.
        let within = |key: &str, v: u64, range: std::ops::RangeInclusive<u64>, unit: &str| {
            if range.contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::Invalid(format!(
                    "{key} = {v}: must be {}..={}{unit}",
                    range.start(),
                    range.end()
                )))
            }
        };
        within(
            "ingest.queue_capacity",
            self.ingest.queue_capacity as u64,
            1..=MAX_QUEUE_CAPACITY as u64,
            "",
        )?;
        within(
            "store.cache_capacity_mb",
            self.store.cache_capacity_mb,
            1..=1 << 20,
            " (1 TiB)",
        )?;
        for (key, v) in [
            ("grpc.stream_window_bytes", self.grpc.stream_window_bytes),
            (
                "grpc.connection_window_bytes",
                self.grpc.connection_window_bytes,
            ),
        ] {
            within(key, u64::from(v), 65_535..=(1 << 31) - 1, "")?;
        }
        within(
            "grpc.query_threads",
            self.grpc.query_threads as u64,
            1..=64,
            "",
        )?;
        within(
            "ingest.max_in_flight_total",
            self.ingest.max_in_flight_total as u64,
            1..=MAX_QUEUE_CAPACITY as u64,
            "",
        )?;
        within(
            "ingest.unread_receipts_secs",
            self.ingest.unread_receipts_secs,
            1..=3600,
            " (an hour)",
        )?;
        within(
            "grpc.max_message_bytes",
            self.grpc.max_message_bytes as u64,
            0..=1 << 30,
            " (1 GiB)",
        )?;
        within(
            "grpc.shutdown_grace_secs",
            self.grpc.shutdown_grace_secs,
            0..=3600,
            " (an hour)",
        )?;
        within(
            "checkpoint.interval_secs",
            self.checkpoint.interval_secs,
            0..=86_400,
            " (a day; 0: no periodic checkpoints)",
        )?;
        within(
            "ingest.max_future_skew_ms",
            self.ingest.max_future_skew_ms.max(0) as u64,
            0..=86_400_000,
            " (a day)",
        )?;
        within(
            "audit.device_clock_drift_ms",
            self.audit.device_clock_drift_ms.max(0) as u64,
            0..=86_400_000,
            " (a day)",
        )?;
        if self.audit.device_clock_drift_ms < 0 {
            return bad("audit.device_clock_drift_ms must not be negative".into());
        }
        within(
            "ingest.clock_step_threshold_ms",
            self.ingest.clock_step_threshold_ms,
            10..=3_600_000,
            " (an hour)",
        )?;
        let now_ms = chrono::Utc::now().timestamp_millis();
        if self.ingest.earliest_time_ms < 0 || self.ingest.earliest_time_ms > now_ms {
            return bad(format!(
                "ingest.earliest_time_ms = {}: must be from 0 (1970) to now ({now_ms}): a later one refuses every event",
                self.ingest.earliest_time_ms
            ));
        }
        identifier("ledger_id", &self.ledger_id)?;
        if let Some(e) = &self.log.otlp_endpoint
            && !(e.starts_with("http://") || e.starts_with("https://"))
        {
            return bad(format!(
                "log.otlp_endpoint = {e:?}: give the collector's OTLP/gRPC address as http://host:4317"
            ));
        }
        if let Some(n) = &self.export.nats {
            n.validate().map_err(ConfigError::Invalid)?;
        }
        if let Some(k) = &self.ledger_public_key {
            ledger_core::signing::parse_public_key_hex(k)
                .map_err(|e| ConfigError::Invalid(format!("ledger_public_key: {e}")))?;
        }
        if let Some(k) = &self.ledger_key {
            if self.ledger_key_file.is_some() {
                return bad(
                    "ledger_key_file and [ledger_key] both name the ledger's key: keep one".into(),
                );
            }
            for (name, v) in [("token_label", &k.token_label), ("key_label", &k.key_label)] {
                if v.is_empty() {
                    return bad(format!("ledger_key.{name} is empty"));
                }
            }
        }
        self.principals()?;
        within(
            "grpc.max_entry_streams_per_principal",
            self.grpc.max_entry_streams_per_principal as u64,
            1..=256,
            "",
        )?;
        within(
            "grpc.principal_calls_per_sec",
            self.grpc.principal_calls_per_sec,
            0..=1_000_000,
            " (0: no limit)",
        )?;
        within(
            "grpc.principal_call_burst",
            self.grpc.principal_call_burst,
            1..=1_000_000,
            "",
        )?;
        within(
            "ingest.device_burst",
            self.ingest.device_burst,
            1..=100_000_000,
            "",
        )?;
        within(
            "ingest.device_rate_per_sec",
            self.ingest.device_rate_per_sec,
            0..=100_000_000,
            " (0: no limit)",
        )?;
        within(
            "grpc.max_connections_per_peer",
            self.grpc.max_connections_per_peer as u64,
            1..=65_536,
            "",
        )?;
        within(
            "tls.handshake_timeout_ms",
            self.tls.handshake_timeout_ms,
            1..=60_000,
            " (a minute)",
        )?;
        self.clients()?;
        Ok(())
    }

    /// How the listeners are secured: `None` for plaintext (then only on loopback), else the
    /// TLS files. Errors name the setting. Checked when ledgerd starts (and by
    /// `--check-config`), after `--listen` has overridden the file.
    pub fn transport(&self) -> Result<Option<crate::tls::TlsFiles>, ConfigError> {
        let t = &self.tls;
        if t.plaintext {
            let listeners = std::iter::once(("listen", self.listen))
                .chain(self.metrics.listen.map(|a| ("metrics.listen", a)));
            for (key, addr) in listeners {
                if !addr.ip().is_loopback() {
                    return Err(ConfigError::Invalid(format!(
                        "tls.plaintext = true, but {key} = {addr} is not a loopback address: \
                         plaintext is only for this machine's own clients; configure [tls] \
                         cert_chain, key and client_ca (`ledgerctl pki`)"
                    )));
                }
            }
            if t.cert_chain.is_some() || t.key.is_some() {
                return Err(ConfigError::Invalid(
                    "tls.plaintext = true together with tls.cert_chain/tls.key: choose one".into(),
                ));
            }
            return Ok(None);
        }
        match (&t.cert_chain, &t.key) {
            (Some(c), Some(k)) => Ok(Some(crate::tls::TlsFiles {
                cert_chain: c.clone(),
                key: k.clone(),
                client_ca: t.client_ca.clone(),
                require_client_cert: t.require_client_cert,
            })),
            _ => Err(ConfigError::Invalid(
                "no TLS: set tls.cert_chain, tls.key and tls.client_ca (`ledgerctl pki` makes \
                 them), or tls.plaintext = true to serve on a loopback address only"
                    .into(),
            )),
        }
    }

    /// The `[[clients]]` by fingerprint.
    pub fn clients(&self) -> Result<crate::access::ByFingerprint, ConfigError> {
        let mut out = std::collections::HashMap::new();
        let mut names = std::collections::HashMap::new();
        for (i, c) in self.clients.iter().enumerate() {
            let at = format!("clients[{i}]");
            identifier(&format!("{at}.name"), &c.name)?;
            let role = crate::access::Role::parse(&c.role).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "{at}.role = {:?} (client {}): must be one of device, operator, compliance, regulator, admin",
                    c.role, c.name
                ))
            })?;
            for casino in &c.casinos {
                identifier(&format!("{at}.casinos"), casino)?;
            }
            let fp = c.fingerprint.to_ascii_lowercase();
            if fp.len() != 64 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ConfigError::Invalid(format!(
                    "{at}.fingerprint (client {}): must be 64 hex digits, the SHA-256 of the certificate's public key (`ledgerctl pki fingerprint CERT`)",
                    c.name
                )));
            }
            if let Some(j) = names.insert(c.name.clone(), i) {
                return Err(ConfigError::Invalid(format!(
                    "{at}.name = {:?}: the same as clients[{j}].name",
                    c.name
                )));
            }
            let p = crate::access::Principal::new(&c.name, role, c.casinos.iter().cloned())
                .with_fingerprint(&fp);
            if out.insert(fp, std::sync::Arc::new(p)).is_some() {
                return Err(ConfigError::Invalid(format!(
                    "{at}.fingerprint (client {}): another client has the same key",
                    c.name
                )));
            }
        }
        Ok(out)
    }

    /// The principals, parsed.
    pub fn principals(&self) -> Result<Vec<PrincipalConfig>, ConfigError> {
        let mut out: Vec<PrincipalConfig> = Vec::new();
        for (i, p) in self.principals.iter().enumerate() {
            let at = format!("principals[{i}]");
            identifier(&format!("{at}.id"), &p.id)?;
            let role = match p.role.as_str() {
                "operator" => SignerRole::Operator,
                "regulator" => SignerRole::Regulator,
                other => {
                    return Err(ConfigError::Invalid(format!(
                        "{at}.role = {other:?} (principal {}): must be \"operator\" or \"regulator\"",
                        p.id
                    )));
                }
            };
            let key = ledger_core::signing::parse_public_key_hex(&p.public_key).map_err(|e| {
                ConfigError::Invalid(format!("{at}.public_key (principal {}): {e}", p.id))
            })?;
            if let Some(j) = self.principals[..i].iter().position(|o| o.id == p.id) {
                return Err(ConfigError::Invalid(format!(
                    "{at}.id = {:?}: the same as principals[{j}].id",
                    p.id
                )));
            }
            out.push(PrincipalConfig {
                id: p.id.clone(),
                role,
                key,
            });
        }
        Ok(out)
    }

    /// The verifier's coalescing of small groups (`ingest.coalesce_us`, `coalesce_events`,
    /// `hold_us`).
    pub fn coalesce(&self) -> crate::pipeline::Coalesce {
        crate::pipeline::Coalesce {
            max_wait: std::time::Duration::from_micros(self.ingest.coalesce_us),
            enough: self.ingest.coalesce_events,
            hold: std::time::Duration::from_micros(self.ingest.hold_us),
        }
    }

    pub fn time_policy(&self) -> TimePolicy {
        TimePolicy {
            max_future_ms: self.ingest.max_future_skew_ms,
            max_past_ms: self.ingest.max_past_age_ms,
            earliest_ms: self.ingest.earliest_time_ms,
        }
    }

    pub fn open_config(&self) -> Result<OpenConfig, ConfigError> {
        Ok(OpenConfig {
            cache_capacity_bytes: self.store.cache_capacity_mb << 20,
            ledger_id: self.ledger_id.clone(),
            principals: self.principals()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `deploy/ledgerd.toml`, the example every operator starts from.
    fn deploy_example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/ledgerd.toml")
    }

    /// `[ledger_key]` names a PKCS#11 key: not with `ledger_key_file` too, with non-empty labels,
    /// and its PIN read from a private file when ledgerd starts.
    #[test]
    fn the_ledger_key_in_a_token_is_named_once_with_its_pin_file() {
        let dir = tempfile::tempdir().unwrap();
        let pin = dir.path().join("pin");
        std::fs::write(&pin, "4321\n").unwrap();
        let section = |label: &str| {
            format!(
                "[ledger_key]\npkcs11_module = \"/m.so\"\ntoken_label = \"t\"\nkey_label = \"{label}\"\npin_file = {:?}\n",
                pin.display().to_string()
            )
        };
        let both = format!("ledger_key_file = \"/k\"\n{}", section("k"));
        let e = Config::parse(&both).unwrap_err().to_string();
        assert!(e.contains("ledger_key_file and [ledger_key]"), "{e}");
        let e = Config::parse(&section("")).unwrap_err().to_string();
        assert!(e.contains("ledger_key.key_label is empty"), "{e}");
        let c = Config::parse(&section("k")).unwrap();
        // The PIN file is world-readable: refused, naming the key.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pin, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = c.key_source().unwrap_err().to_string();
        assert!(
            e.contains("ledger_key.pin_file") && e.contains("chmod 600"),
            "{e}"
        );
        std::fs::set_permissions(&pin, std::fs::Permissions::from_mode(0o600)).unwrap();
        match c.key_source().unwrap() {
            ledger_store::KeySource::Pkcs11(p) => {
                assert_eq!(
                    (
                        p.module.to_str(),
                        p.token_label.as_str(),
                        p.key_label.as_str()
                    ),
                    (Some("/m.so"), "t", "k")
                );
                assert_eq!(p.pin, "4321");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            Config::default().key_source().unwrap(),
            ledger_store::KeySource::DataDir
        );
    }

    #[test]
    fn the_deploy_example_loads() {
        let path = deploy_example();
        let c = Config::load(&path).unwrap();
        assert_eq!(c.principals().unwrap().len(), 2);
        assert_eq!(c.ingest.max_body_bytes, Ingest::default().max_body_bytes);
        assert_eq!(
            c.coalesce(),
            Config::default().coalesce(),
            "the example shows the default"
        );
        assert!(
            c.store.require_safe_filesystem,
            "the production example insists"
        );
        assert!(!Config::default().store.require_safe_filesystem);
    }

    /// The key paths of a TOML table (`section.key`; an array of tables counts with the keys of
    /// its tables).
    fn key_paths(t: &toml::Table, prefix: &str, out: &mut std::collections::BTreeSet<String>) {
        for (k, v) in t {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(t) => key_paths(t, &path, out),
                toml::Value::Array(a) if a.iter().all(toml::Value::is_table) && !a.is_empty() => {
                    for t in a.iter().filter_map(toml::Value::as_table) {
                        key_paths(t, &path, out);
                    }
                }
                _ => {
                    out.insert(path);
                }
            }
        }
    }

    /// `deploy/ledgerd.toml` says it documents every key: each key the code knows is there, set or
    /// (for a key that is off unless given, like `metrics.listen`) as a commented-out example.
    /// Adding a key to the code without documenting it there fails this test.
    #[test]
    fn the_deploy_example_names_every_key() {
        let path = deploy_example();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut documented = std::collections::BTreeSet::new();
        key_paths(&text.parse::<toml::Table>().unwrap(), "", &mut documented);
        // Commented-out examples: `# key = value` under a `[section]` header.
        let mut section = String::new();
        for line in text.lines() {
            // A section header, or an optional section's commented-out one (`# [ledger_key]`).
            let header = line.strip_prefix("# [").map(|l| format!("[{l}"));
            if let Some(h) = header
                .as_deref()
                .unwrap_or(line)
                .strip_prefix('[')
                .and_then(|l| l.split(']').next())
            {
                section = h.trim_start_matches('[').to_string();
            } else if let Some((k, _)) = line.strip_prefix("# ").and_then(|l| l.split_once(" = "))
                && k.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                documented.insert(if section.is_empty() {
                    k.to_string()
                } else {
                    format!("{section}.{k}")
                });
            }
        }
        // Every key, the optional ones set, so that they are serialised too.
        let all = Config {
            data_dir: Some("/var/lib/x".into()),
            ledger_key_file: Some("/etc/x.key".into()),
            ledger_public_key: Some("00".into()),
            ledger_key: Some(LedgerKeySection {
                pkcs11_module: "m.so".into(),
                token_label: "t".into(),
                key_label: "k".into(),
                pin_file: "p".into(),
            }),
            metrics: Metrics {
                listen: Some("127.0.0.1:9464".parse().unwrap()),
            },
            principals: vec![PrincipalEntry {
                id: "op".into(),
                role: "operator".into(),
                public_key: "00".into(),
            }],
            tls: Tls {
                cert_chain: Some("c.pem".into()),
                key: Some("c.key".into()),
                client_ca: vec!["ca.pem".into()],
                ..Tls::default()
            },
            clients: vec![ClientEntry {
                name: "n".into(),
                role: "admin".into(),
                casinos: vec!["c".into()],
                fingerprint: "00".into(),
            }],
            witnesses: vec![WitnessEntry {
                name: "w".into(),
                url: "http://127.0.0.1:1".into(),
                public_key: "00".into(),
                ml_dsa_public_key: Some("w.pub".into()),
            }],
            mirror: Some(MirrorSection {
                source: "https://127.0.0.1:1".into(),
                source_ledger_id: "x".into(),
                source_ledger_key: "00".into(),
                tls_ca: Some("ca.pem".into()),
                tls_cert: Some("c.pem".into()),
                tls_key: Some("c.key".into()),
                max_group: 1,
                poll_ms: 10,
            }),
            ..Config::default()
        };
        let mut known = std::collections::BTreeSet::new();
        let all = toml::Value::try_from(&all).unwrap();
        key_paths(all.as_table().unwrap(), "", &mut known);
        assert!(known.contains("audit.enabled") && known.contains("principals.role"));
        assert!(known.contains("tls.client_ca") && known.contains("clients.casinos"));
        let missing: Vec<_> = known.difference(&documented).collect();
        assert!(
            missing.is_empty(),
            "keys missing from deploy/ledgerd.toml: {missing:?}"
        );
    }

    /// `ml_dsa_public_key`: the witness's ML-DSA-44 vkey (or a PEM file); anything else is
    /// refused naming the key.
    #[test]
    fn a_witness_ml_dsa_key_is_its_vkey_or_a_pem_file() {
        use ledger_core::note::{CosignerKey, ml_dsa_44_from_seed, ml_dsa_44_public};
        let ed = "a09aa5f47a6759802ff955f8dc2d2a14a5c99d23be97f864127ff9383455a4f0";
        let ml = CosignerKey::from(ml_dsa_44_public(&ml_dsa_44_from_seed(&[4; 32])));
        let cfg = |v: &str| {
            format!(
                "[[witnesses]]\nname = \"w.example/1\"\nurl = \"http://127.0.0.1:1\"\npublic_key = \"{ed}\"\nml_dsa_public_key = \"{v}\"\n"
            )
        };
        let c = Config::parse(&cfg(&ml.vkey("w.example/1"))).unwrap();
        assert_eq!(c.witnesses[0].keys().unwrap()[1], ml);
        let ed_vkey = CosignerKey::from(ledger_core::signing::parse_public_key_hex(ed).unwrap())
            .vkey("w.example/1");
        for bad in [
            ml.vkey("w.example/2"),
            ed_vkey,
            "/nonexistent/w.pub".to_string(),
            ml.vkey("w.example/1").replacen("+", "+0", 2),
        ] {
            let e = Config::parse(&cfg(&bad)).unwrap_err().to_string();
            assert!(e.contains("ml_dsa_public_key"), "{bad}: {e}");
        }
    }

    #[test]
    fn gaming_days_are_checked_and_named() {
        let e = Config::parse("[reports]\ntime_zone = \"Europe/Lisboa\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("reports: `Europe/Lisboa` is not an IANA time zone"),
            "{e}"
        );
        let e = Config::parse("[reports.casinos.porto]\nday_starts = \"25:00\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("reports.casinos.porto: `25:00`"), "{e}");
        let c = Config::parse(
            "[reports]\nday_starts = \"05:30\"\n[reports.casinos.acores]\ntime_zone = \"Atlantic/Azores\"\n",
        )
        .unwrap()
        .reports
        .calendar()
        .unwrap();
        assert_eq!(
            c.describe(),
            "Europe/Lisbon from 05:30; acores: Atlantic/Azores from 06:00"
        );
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::parse("[ingest]\nmax_batch = 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ingest.max_batch"), "{e}");
        let e = Config::parse("[ingest]\nmax_bach = 3\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_bach"), "{e}");
        let e = Config::parse("[log]\notlp_endpoint = \"collector:4317\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("log.otlp_endpoint = \"collector:4317\""),
            "{e}"
        );
        let c = Config::parse("[log]\notlp_endpoint = \"http://127.0.0.1:4317\"\n").unwrap();
        assert_eq!(
            c.log.otlp_endpoint.as_deref(),
            Some("http://127.0.0.1:4317")
        );
        let e = Config::parse("[ingest]\nmax_in_flight_per_stream = 18446744073709551615\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ingest.max_in_flight_per_stream") && e.contains("1048576"),
            "{e}"
        );
        let e =
            Config::parse("[[principals]]\nid = \"op\"\nrole = \"boss\"\npublic_key = \"00\"\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("principals[0].role = \"boss\""), "{e}");
        for age in [86_401, 1_000_000] {
            let e = Config::parse(&format!("[grpc]\nmax_connection_age_secs = {age}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("grpc.max_connection_age_secs"), "{e}");
        }
        for age in [0, 1, 86_400] {
            Config::parse(&format!("[grpc]\nmax_connection_age_secs = {age}\n")).unwrap();
        }
        // Identifiers: named by their key, not as an event body's field.
        for (text, key) in [
            (
                "ledger_id = \"casino lisboa\"\n",
                "ledger_id = \"casino lisboa\": character ' '",
            ),
            ("ledger_id = \"\"\n", "ledger_id = \"\": missing"),
            (
                "[[principals]]\nid = \"op 1\"\nrole = \"operator\"\npublic_key = \"00\"\n",
                "principals[0].id = \"op 1\"",
            ),
        ] {
            let e = Config::parse(text).unwrap_err().to_string();
            assert!(e.starts_with(key) && !e.contains("body"), "{e}");
        }
        let key = "d04ab232742bb4ab3a1368bd4615e4e6d0224ab71a016baf8520a332c9778737";
        let p =
            format!("[[principals]]\nid = \"op\"\nrole = \"operator\"\npublic_key = \"{key}\"\n");
        let e = Config::parse(&format!("{p}{p}")).unwrap_err().to_string();
        assert!(
            e.contains("principals[1].id = \"op\": the same as principals[0].id"),
            "{e}"
        );
        let e = Config::parse(
            "[[principals]]\nid = \"op\"\nrole = \"operator\"\npublic_key = \"00\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("principals[0].public_key (principal op)"),
            "{e}"
        );
        assert!(Config::parse("").is_ok());
        let e = Config::parse("[metrics]\nlisten = \"localhost\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("listen"), "{e}");
        let m = Config::parse("[metrics]\nlisten = \"127.0.0.1:9464\"\n").unwrap();
        assert_eq!(m.metrics.listen, Some("127.0.0.1:9464".parse().unwrap()));
        assert_eq!(Config::default().metrics.listen, None);
    }

    /// Values that would overflow or stall something further down are refused, naming the key
    /// and the range (each of these once started a ledgerd that panicked, wrapped or stalled).
    #[test]
    fn values_at_the_integer_edges_are_refused_with_their_range() {
        for (section, key, v) in [
            ("ingest", "queue_capacity", "18446744073709551615"),
            ("ingest", "queue_capacity", "9223372036854775807"),
            ("store", "cache_capacity_mb", "18446744073709551615"),
            ("grpc", "stream_window_bytes", "0"),
            ("grpc", "connection_window_bytes", "1"),
            ("grpc", "connection_window_bytes", "4294967295"),
            ("grpc", "max_message_bytes", "18446744073709551615"),
            ("grpc", "shutdown_grace_secs", "18446744073709551615"),
            ("checkpoint", "interval_secs", "18446744073709551615"),
            ("ingest", "max_future_skew_ms", "9223372036854775807"),
            ("ingest", "earliest_time_ms", "9223372036854775807"),
            ("ingest", "earliest_time_ms", "-1"),
            ("ingest", "clock_step_threshold_ms", "0"),
            ("audit", "device_clock_drift_ms", "-1"),
            ("audit", "device_clock_drift_ms", "86400001"),
            ("ingest", "clock_step_threshold_ms", "3600001"),
            ("ingest", "max_in_flight_total", "0"),
            ("ingest", "max_in_flight_total", "18446744073709551615"),
            ("ingest", "unread_receipts_secs", "0"),
            ("ingest", "unread_receipts_secs", "3601"),
            ("grpc", "query_threads", "0"),
            ("grpc", "query_threads", "65"),
        ] {
            let e = Config::parse(&format!("[{section}]\n{key} = {v}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("{section}.{key}")), "{key} = {v}: {e}");
        }
        // The defaults and the deploy example stay inside every range.
        Config::parse("").unwrap();
        Config::load(&deploy_example()).unwrap();
    }

    /// TLS unless plaintext is asked for, and plaintext only on loopback; the errors name the
    /// setting. TLS paths are relative to the configuration file.
    #[test]
    fn transport_is_tls_unless_plaintext_on_loopback() {
        let e = Config::parse("")
            .unwrap()
            .transport()
            .unwrap_err()
            .to_string();
        assert!(e.contains("no TLS") && e.contains("tls.plaintext"), "{e}");
        let p = Config::parse("[tls]\nplaintext = true\n").unwrap();
        assert!(p.transport().unwrap().is_none());
        for text in [
            "listen = \"0.0.0.0:50051\"\n[tls]\nplaintext = true\n",
            "[metrics]\nlisten = \"10.0.0.1:9464\"\n[tls]\nplaintext = true\n",
        ] {
            let e = Config::parse(text)
                .unwrap()
                .transport()
                .unwrap_err()
                .to_string();
            assert!(e.contains("not a loopback address"), "{e}");
        }
        let e = Config::parse("[tls]\nplaintext = true\nkey = \"k\"\n")
            .unwrap()
            .transport()
            .unwrap_err()
            .to_string();
        assert!(e.contains("choose one"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("l.toml");
        std::fs::write(
            &f,
            "[tls]\ncert_chain = \"tls/s.pem\"\nkey = \"/abs/s.key\"\nclient_ca = [\"ca.pem\"]\n",
        )
        .unwrap();
        let t = Config::load(&f).unwrap().transport().unwrap().unwrap();
        assert_eq!(t.cert_chain, dir.path().join("tls/s.pem"));
        assert_eq!(t.key, PathBuf::from("/abs/s.key"));
        assert_eq!(t.client_ca, vec![dir.path().join("ca.pem")]);
        assert!(t.require_client_cert);
    }

    #[test]
    fn clients_are_checked_and_named() {
        let fp = "ab".repeat(32);
        let c = |name: &str, role: &str, fp: &str| {
            format!("[[clients]]\nname = \"{name}\"\nrole = \"{role}\"\nfingerprint = \"{fp}\"\n")
        };
        let ok = Config::parse(&c("insp", "regulator", &fp.to_uppercase())).unwrap();
        let map = ok.clients().unwrap();
        assert_eq!(
            map[&fp].name, "insp",
            "fingerprints are matched in lower case"
        );
        for (text, want) in [
            (c("x", "root", &fp), "clients[0].role = \"root\""),
            (c("x", "admin", "abc"), "clients[0].fingerprint (client x)"),
            (c("a b", "admin", &fp), "clients[0].name"),
            (
                format!("{}{}", c("x", "admin", &fp), c("y", "admin", &fp)),
                "another client has the same key",
            ),
            (
                format!(
                    "{}{}",
                    c("x", "admin", &fp),
                    c("x", "admin", &"cd".repeat(32))
                ),
                "clients[1].name = \"x\": the same as clients[0].name",
            ),
        ] {
            let e = Config::parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        let e = Config::parse("[tls]\nhandshake_timeout_ms = 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tls.handshake_timeout_ms"), "{e}");
    }

    #[test]
    fn coalescing_is_bounded_and_maps_to_the_pipeline() {
        for key in ["coalesce_us", "hold_us"] {
            let e = Config::parse(&format!("[ingest]\n{key} = 10001\n"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("ingest.{key} = 10001")) && e.contains("10000"),
                "{e}"
            );
        }
        for bad in [
            "coalesce_events = 0",
            "max_batch = 64\ncoalesce_events = 65",
        ] {
            let e = Config::parse(&format!("[ingest]\n{bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("ingest.coalesce_events"), "{bad}: {e}");
        }
        let c = Config::parse(
            "[ingest]\ncoalesce_us = 0\nmax_batch = 64\ncoalesce_events = 64\nhold_us = 0\n",
        )
        .unwrap();
        assert_eq!(
            c.coalesce(),
            crate::pipeline::Coalesce {
                max_wait: std::time::Duration::ZERO,
                enough: 64,
                hold: std::time::Duration::ZERO,
            }
        );
        let d = Config::parse("").unwrap().coalesce();
        assert_eq!(
            (d.max_wait.as_micros(), d.enough, d.hold.as_micros()),
            (500, 128, 2000)
        );
    }
}
