//! ledgerd as a **mirror** of another ledger (`[mirror]` in the configuration).
//!
//! The follower ([`follow`]) reads the source's entries from its own next index (`Query.Tail`)
//! and re-verifies each group before storing it, with the verifier `ledgerctl verify` uses
//! (`ledger_core::ChainVerifier`: links, hashes, registry, sequences, ledger records, the
//! Merkle tree at each checkpoint; then every signature): only then does it append the entries
//! verbatim (`ledger_store::Appender::append_verbatim`, all or nothing per group) and sync. The
//! source's checkpoints are checked against the entries held (signature, numbering, the
//! ledger's key at that entry, the entry's hash, the Merkle root) and copied. The mirror serves
//! the same read API from its copy, runs its own live audit, refuses ingest and checkpoint
//! requests (`pipeline::Ledger::read_only`), and signs nothing.
//!
//! Anything it cannot verify or extend consistently (an entry failing verification, a history
//! rewritten under what it holds, a checkpoint contradicting its entries or one it holds, another
//! ledger at the address) raises an **alarm**: a tracing error, the `ledger_mirror_alarms`
//! counter and a record in its own store outside the chain (`Mirror.ListAlarms`,
//! `ledgerctl mirror alarms`). It then stops following (stores nothing more), serves what it
//! holds, and tries again after a backoff. Disconnects and restarts of either side resume from
//! the mirror's durable head: nothing is skipped or stored twice.

pub mod follow;
pub mod replication;
pub mod restore;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

use ledger_core::proto as v1;
use ledger_store::Store;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use tonic::{Request, Response, Status as GrpcStatus};

use crate::stats::Histogram;

/// What the mirror holds and how it follows; shared by the follower, the gRPC service and the
/// metrics.
pub struct Status {
    pub source: String,
    pub ledger_id: String,
    /// Entries held, verified and durable.
    pub mirrored: AtomicU64,
    /// The source's length when last asked.
    pub source_entries: AtomicU64,
    pub connected: AtomicBool,
    pub halted: AtomicBool,
    pub alarms: AtomicU64,
    pub checkpoints: AtomicU64,
    /// Per entry: its received time at the source to durable here.
    pub lag: Histogram,
    /// When (ms since the epoch, this machine's clock) the mirror was last seen holding all the
    /// source had, connected ([`Status::observe`]); its start until then.
    pub caught_up_at_ms: AtomicI64,
}

impl Status {
    pub fn new(source: &str, ledger_id: &str, mirrored: u64, alarms: u64) -> Status {
        Status {
            source: source.to_string(),
            ledger_id: ledger_id.to_string(),
            mirrored: AtomicU64::new(mirrored),
            source_entries: AtomicU64::new(0),
            connected: AtomicBool::new(false),
            halted: AtomicBool::new(false),
            alarms: AtomicU64::new(alarms),
            checkpoints: AtomicU64::new(0),
            lag: Histogram::default(),
            caught_up_at_ms: AtomicI64::new(ledger_store::now_ms()),
        }
    }

    /// Note, at `now_ms`, whether the mirror holds everything the source last said it had (the
    /// follower calls it after each group stored and each poll of the source's head).
    pub fn observe(&self, now_ms: i64) {
        if self.connected.load(Relaxed)
            && self.mirrored.load(Relaxed) >= self.source_entries.load(Relaxed)
        {
            self.caught_up_at_ms.store(now_ms, Relaxed);
        }
    }

    /// Seconds behind the source at `now_ms`: 0 while connected and holding all the source
    /// had when last asked; otherwise the time since it last did (so a mirror cut off from its
    /// source counts as falling behind, an upper bound of the real lag).
    pub fn lag_seconds(&self, now_ms: i64) -> f64 {
        let caught_up = self.connected.load(Relaxed)
            && self.mirrored.load(Relaxed) >= self.source_entries.load(Relaxed);
        if caught_up {
            0.0
        } else {
            now_ms
                .saturating_sub(self.caught_up_at_ms.load(Relaxed))
                .max(0) as f64
                / 1e3
        }
    }

    pub fn to_proto(&self) -> v1::MirrorStatus {
        v1::MirrorStatus {
            source: self.source.clone(),
            ledger_id: self.ledger_id.clone(),
            mirrored_entries: self.mirrored.load(Relaxed),
            source_entries: self.source_entries.load(Relaxed),
            connected: self.connected.load(Relaxed),
            halted: self.halted.load(Relaxed),
            alarms: self.alarms.load(Relaxed),
            lag: Some(self.lag.to_proto()),
            checkpoints: self.checkpoints.load(Relaxed),
        }
    }
}

/// A running follower.
pub struct Running {
    pub status: Arc<Status>,
    pub store: Arc<Store>,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Stop following (a group being stored is finished first).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Open (or create) the mirror's store in `data_dir`, check it all again, copy the source's
/// genesis first if it is new, and start following: the read-only ledger to serve, and the
/// follower.
pub async fn start(
    m: &crate::config::MirrorSection,
    data_dir: &std::path::Path,
    cache_bytes: u64,
) -> anyhow::Result<(crate::Ledger, Running)> {
    use anyhow::Context;
    let key = m.ledger_key()?;
    let (dir, id) = (data_dir.to_path_buf(), m.source_ledger_id.clone());
    let copy = tokio::task::spawn_blocking(move || -> anyhow::Result<follow::Copy> {
        let (store, appender) = Store::open_mirror(&dir, cache_bytes, &id, &key)
            .with_context(|| format!("cannot open the mirror in {}", dir.display()))?;
        follow::Copy::open(store, appender, key, &id).map_err(|e| {
            anyhow::anyhow!(
                "the mirror's copy in {} does not verify: {e}",
                dir.display()
            )
        })
    })
    .await??;
    let copy = if copy.store.head()?.is_none() {
        follow::bootstrap(m, copy).await?
    } else {
        copy
    };
    let store = copy.store.clone();
    let head = store.head()?.context("the mirror holds no genesis")?;
    let alarms = store.alarms()?.len() as u64;
    let status = Arc::new(Status::new(
        &m.source,
        &m.source_ledger_id,
        head.0 + 1,
        alarms,
    ));
    status
        .checkpoints
        .store(store.all_checkpoints()?.len() as u64, Relaxed);
    let (ledger, durable) =
        crate::Ledger::read_only(store.clone(), head, refusal(&m.source), status.clone());
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(follow::run(
        m.clone(),
        copy,
        durable,
        status.clone(),
        stop_rx,
    ));
    Ok((
        ledger,
        Running {
            status,
            store,
            stop,
            task,
        },
    ))
}

/// The refusal a mirror answers to ingest and checkpoint requests.
pub fn refusal(source: &str) -> String {
    format!(
        "this ledgerd is a read-only mirror of {source}: submit events and request checkpoints there"
    )
}

/// `Mirror` gRPC service.
pub struct MirrorService {
    pub status: Arc<Status>,
    pub store: Arc<Store>,
}

#[tonic::async_trait]
impl v1::mirror_server::Mirror for MirrorService {
    async fn get_status(
        &self,
        _req: Request<v1::GetMirrorStatusRequest>,
    ) -> Result<Response<v1::MirrorStatus>, GrpcStatus> {
        Ok(Response::new(self.status.to_proto()))
    }

    async fn list_alarms(
        &self,
        _req: Request<v1::ListMirrorAlarmsRequest>,
    ) -> Result<Response<v1::MirrorAlarms>, GrpcStatus> {
        let store = self.store.clone();
        let alarms = tokio::task::spawn_blocking(move || store.alarms())
            .await
            .map_err(|e| GrpcStatus::internal(e.to_string()))?
            .map_err(|e| GrpcStatus::internal(format!("reading the alarms: {e}")))?;
        Ok(Response::new(v1::MirrorAlarms {
            alarms: alarms
                .into_iter()
                .map(|a| v1::MirrorAlarm {
                    at_ms: a.at_ms,
                    kind: a.kind,
                    has_index: a.index.is_some(),
                    index: a.index.unwrap_or_default(),
                    detail: a.detail,
                })
                .collect(),
        }))
    }
}

/// The mirror's figures for `/metrics` (registered by `crate::metrics::registry`).
#[derive(Debug)]
pub struct Metrics(pub Arc<Status>);

impl std::fmt::Debug for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("mirror::Status")
            .field("source", &self.source)
            .finish()
    }
}

fn gauge(e: &mut DescriptorEncoder, name: &str, help: &str, v: i64) -> std::fmt::Result {
    ConstGauge::new(v).encode(e.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

impl Collector for Metrics {
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        let s = &self.0;
        let held = s.mirrored.load(Relaxed);
        let source = s.source_entries.load(Relaxed);
        gauge(
            &mut e,
            "ledger_mirror_entries",
            "Entries the mirror holds, verified and durable.",
            held as i64,
        )?;
        gauge(
            &mut e,
            "ledger_mirror_source_entries",
            "The source's length when the mirror last asked.",
            source as i64,
        )?;
        gauge(
            &mut e,
            "ledger_mirror_lag_entries",
            "Entries the source holds that the mirror does not yet.",
            source.saturating_sub(held) as i64,
        )?;
        ConstGauge::new(s.lag_seconds(ledger_store::now_ms())).encode(e.encode_descriptor(
            "ledger_mirror_lag_seconds",
            "Seconds since the mirror last held all the source had (0 while it does; counts on while disconnected).",
            None,
            MetricType::Gauge,
        )?)?;
        let h = s.lag.to_proto();
        gauge(
            &mut e,
            "ledger_mirror_lag_p99_ms",
            "p99 since start of an entry's time from its receipt at the source to durable on the mirror.",
            (crate::stats::quantile_us(&h, 0.99) / 1000) as i64,
        )?;
        gauge(
            &mut e,
            "ledger_mirror_connected",
            "1 while the mirror follows the source's tail.",
            s.connected.load(Relaxed) as i64,
        )?;
        gauge(
            &mut e,
            "ledger_mirror_halted",
            "1 while following is stopped on an alarm.",
            s.halted.load(Relaxed) as i64,
        )?;
        ConstCounter::new(s.alarms.load(Relaxed)).encode(e.encode_descriptor(
            "ledger_mirror_alarms",
            "Alarms raised: what the mirror could not verify or extend consistently.",
            None,
            MetricType::Counter,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mirror's figures in the metrics text: lag in entries from the two heads, the alarms.
    #[test]
    fn the_metrics_say_how_far_behind_and_how_many_alarms() {
        let s = Arc::new(Status::new("https://src:1", "x", 40, 2));
        s.source_entries.store(100, Relaxed);
        s.caught_up_at_ms
            .store(ledger_store::now_ms() - 90_000, Relaxed);
        s.halted.store(true, Relaxed);
        s.lag.record(std::time::Duration::from_millis(30));
        let mut r = prometheus_client::registry::Registry::default();
        r.register_collector(Box::new(Metrics(s.clone())));
        let (text, _) = crate::metrics::encode(&r, false).unwrap();
        for line in [
            "ledger_mirror_entries 40",
            "ledger_mirror_source_entries 100",
            "ledger_mirror_lag_entries 60",
            "ledger_mirror_halted 1",
            "ledger_mirror_connected 0",
            "ledger_mirror_alarms_total 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in:\n{text}");
        }
        let p99 = text
            .lines()
            .find_map(|l| l.strip_prefix("ledger_mirror_lag_p99_ms "))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap();
        assert!((30..=40).contains(&p99), "{p99}");
        let behind = text
            .lines()
            .find_map(|l| l.strip_prefix("ledger_mirror_lag_seconds "))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap();
        assert!((90.0..3600.0).contains(&behind), "{behind}");
        let p = s.to_proto();
        assert_eq!((p.mirrored_entries, p.alarms, p.halted), (40, 2, true));
    }

    /// Seconds behind: 0 only while connected and holding all the source had; otherwise counted
    /// from the last time it did, disconnected included.
    #[test]
    fn lag_in_seconds_counts_from_the_last_time_the_mirror_held_everything() {
        let s = Status::new("https://src:1", "x", 10, 0);
        let t0 = s.caught_up_at_ms.load(Relaxed);
        assert_eq!(s.lag_seconds(t0 + 5_000), 5.0, "not connected yet");
        s.connected.store(true, Relaxed);
        s.source_entries.store(10, Relaxed);
        s.observe(t0 + 6_000);
        assert_eq!(s.lag_seconds(t0 + 9_000), 0.0, "caught up");
        s.source_entries.store(25, Relaxed); // the source grew
        s.observe(t0 + 9_000);
        assert_eq!(
            s.lag_seconds(t0 + 9_500),
            3.5,
            "behind since the last catch-up"
        );
        s.mirrored.store(25, Relaxed);
        s.observe(t0 + 10_000);
        s.connected.store(false, Relaxed);
        assert_eq!(s.lag_seconds(t0 + 12_000), 2.0, "cut off: counts on");
        s.observe(t0 + 13_000);
        assert_eq!(
            s.lag_seconds(t0 + 13_000),
            3.0,
            "not caught up while disconnected"
        );
    }
}
