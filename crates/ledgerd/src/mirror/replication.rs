//! Acknowledged means replicated (`[replication]`): a group's receipts go out only once the
//! group is durable here **and** on `required_mirrors` of the configured mirrors, like
//! synchronous standbys. Each mirror reports, after every group it made durable, how many
//! entries it holds (`Replication.ReportDurable`); the sync thread that releases a group waits
//! on the [`Gate`] for the k-th highest report to cover it. The durable head (which the mirrors'
//! tails follow) advances first, so the mirrors can copy what waits.
//!
//! When fewer than k mirrors hold a group: `on_lag = "wait"` keeps its receipts (and every later
//! one) until they do; `"degrade"` waits `timeout_ms`, then acknowledges local-only with an error
//! in the log (an alarm, counted in [`Gate::degradations`]) until the mirrors catch up.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use ledger_core::proto as v1;
use ledger_store::Store;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use crate::config::{LagPolicy, Replication};

/// What each mirror holds, and the wait for k of them.
pub struct Gate {
    required: usize,
    policy: LagPolicy,
    timeout: Duration,
    mirrors: Vec<String>,
    held: Mutex<HashMap<String, u64>>,
    changed: Condvar,
    /// Acknowledging local-only after a timeout ("degrade"), until the mirrors catch up.
    pub degraded: AtomicBool,
    /// Times it started acknowledging local-only.
    pub degradations: AtomicU64,
    /// While degraded: the last entry acknowledged local-only. Once `required` mirrors hold it,
    /// receipts wait for them again.
    local_only_up_to: AtomicU64,
    closed: AtomicBool,
}

impl Gate {
    /// The gate `cfg` asks for; `None` when replication is off.
    pub fn new(cfg: &Replication) -> Option<Arc<Gate>> {
        (cfg.required_mirrors > 0).then(|| {
            Arc::new(Gate {
                required: cfg.required_mirrors,
                policy: cfg.on_lag,
                timeout: Duration::from_millis(cfg.timeout_ms),
                mirrors: cfg.mirrors.clone(),
                held: Mutex::new(HashMap::new()),
                changed: Condvar::new(),
                degraded: AtomicBool::new(false),
                degradations: AtomicU64::new(0),
                local_only_up_to: AtomicU64::new(0),
                closed: AtomicBool::new(false),
            })
        })
    }

    /// Entries held by at least `required` mirrors.
    fn replicated(&self, held: &HashMap<String, u64>) -> u64 {
        let mut v: Vec<u64> = held.values().copied().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.get(self.required - 1).copied().unwrap_or(0)
    }

    /// Entries held by at least `required_mirrors` of the mirrors, by their latest reports.
    pub fn replicated_entries(&self) -> u64 {
        self.replicated(&self.held.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Mirror `who` holds `entries` entries, durably.
    pub fn report(&self, who: &str, entries: u64) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let e = held.entry(who.to_string()).or_insert(0);
        *e = (*e).max(entries);
        // Caught up with everything acknowledged without them: later groups wait again. (Only a
        // group arriving after that would not clear it while groups keep coming.)
        if self.degraded.load(Relaxed)
            && self.replicated(&held) > self.local_only_up_to.load(Relaxed)
        {
            self.degraded.store(false, Relaxed);
            tracing::warn!("replication: the mirrors caught up; receipts wait for them again");
        }
        drop(held);
        self.changed.notify_all();
    }

    /// Stop waiting (ledgerd stops): what waits is released as if replicated.
    pub fn close(&self) {
        self.closed.store(true, Relaxed);
        self.changed.notify_all();
    }

    /// Block until entry `index` is held by `required` mirrors, or the policy gives up waiting.
    pub fn wait(&self, index: u64) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if self.degraded.load(Relaxed) {
            if self.replicated(&held) > index {
                self.degraded.store(false, Relaxed);
                tracing::warn!(
                    index,
                    "replication: the mirrors caught up; receipts wait for them again"
                );
            } else {
                self.local_only_up_to.fetch_max(index, Relaxed);
                return;
            }
        }
        let deadline = std::time::Instant::now() + self.timeout;
        while self.replicated(&held) <= index && !self.closed.load(Relaxed) {
            match self.policy {
                LagPolicy::Wait => {
                    held = self
                        .changed
                        .wait_timeout(held, Duration::from_millis(200))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                LagPolicy::Degrade => {
                    let now = std::time::Instant::now();
                    if now >= deadline {
                        self.degraded.store(true, Relaxed);
                        self.degradations.fetch_add(1, Relaxed);
                        self.local_only_up_to.store(index, Relaxed);
                        tracing::error!(
                            index,
                            required = self.required,
                            waited_ms = self.timeout.as_millis() as u64,
                            "replication alarm: fewer mirrors than replication.required_mirrors hold the entries; acknowledging local-only until they catch up"
                        );
                        return;
                    }
                    held = self
                        .changed
                        .wait_timeout(held, deadline - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
    }
}

/// The gate's figures for `/metrics` (registered by `crate::metrics::registry`): whether
/// receipts go out local-only, how often that started, what the mirrors hold.
#[derive(Debug)]
pub struct Metrics(pub Arc<Gate>);

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("replication::Gate")
            .field("required", &self.required)
            .finish()
    }
}

impl prometheus_client::collector::Collector for Metrics {
    fn encode(&self, mut e: prometheus_client::encoding::DescriptorEncoder) -> std::fmt::Result {
        use prometheus_client::encoding::EncodeMetric;
        use prometheus_client::metrics::MetricType;
        use prometheus_client::metrics::counter::ConstCounter;
        use prometheus_client::metrics::gauge::ConstGauge;
        let g = &self.0;
        let gauges: [(&str, &str, i64); 3] = [
            (
                "ledger_replication_degraded",
                "1 while receipts go out local-only after replication.timeout_ms (on_lag = \"degrade\"); 0 while they wait for the mirrors.",
                i64::from(g.degraded.load(Relaxed)),
            ),
            (
                "ledger_replication_required_mirrors",
                "Mirrors that must hold a group before its receipts go out (replication.required_mirrors).",
                g.required as i64,
            ),
            (
                "ledger_replication_entries",
                "Entries held by at least replication.required_mirrors of the mirrors, by their reports.",
                i64::try_from(g.replicated_entries()).unwrap_or(i64::MAX),
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
        ConstCounter::new(g.degradations.load(Relaxed)).encode(e.encode_descriptor(
            "ledger_replication_degradations",
            "Times receipts started going out local-only because too few mirrors held the entries.",
            None,
            MetricType::Counter,
        )?)
    }
}

/// `Replication` gRPC service: the mirrors' reports.
pub struct ReplicationService {
    pub gate: Arc<Gate>,
    pub store: Arc<Store>,
}

#[tonic::async_trait]
impl v1::replication_server::Replication for ReplicationService {
    async fn report_durable(
        &self,
        req: Request<Streaming<v1::DurableReport>>,
    ) -> Result<Response<v1::DurableReportAck>, Status> {
        let who = crate::access::Caller::of(&req).name.clone();
        if !self.gate.mirrors.contains(&who) {
            return Err(Status::permission_denied(format!(
                "{who} is not one of replication.mirrors: its reports do not count"
            )));
        }
        let mut s: Pin<Box<dyn Stream<Item = Result<v1::DurableReport, Status>> + Send>> =
            Box::pin(req.into_inner());
        use tokio_stream::StreamExt;
        while let Some(r) = s.next().await {
            let r = r?;
            let Some(last) = r.entries.checked_sub(1) else {
                continue;
            };
            let store = self.store.clone();
            let ours = tokio::task::spawn_blocking(move || store.entry(last))
                .await
                .map_err(|e| Status::internal(e.to_string()))?
                .map_err(|e| Status::internal(e.to_string()))?;
            match ours {
                Some(e) if e.entry_hash == r.head_hash => self.gate.report(&who, r.entries),
                _ => {
                    return Err(Status::failed_precondition(format!(
                        "{who} reports entry {last} with a hash this ledger does not hold"
                    )));
                }
            }
        }
        Ok(Response::new(v1::DurableReportAck {}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(required: usize, on_lag: LagPolicy) -> Arc<Gate> {
        Gate::new(&Replication {
            required_mirrors: required,
            mirrors: vec!["a".into(), "b".into(), "c".into()],
            on_lag,
            timeout_ms: 1,
        })
        .unwrap()
    }

    #[test]
    fn a_group_waits_for_the_kth_mirror() {
        assert!(
            Gate::new(&Replication::default()).is_none(),
            "off by default"
        );
        let g = gate(2, LagPolicy::Wait);
        g.report("a", 10);
        g.report("b", 5);
        g.report("a", 3); // a report never goes back
        g.wait(4); // entries 0..=4 are on two mirrors: no wait
        let waiter = {
            let g = g.clone();
            std::thread::spawn(move || g.wait(7))
        };
        g.report("c", 8);
        waiter.join().unwrap();
        assert!(!g.degraded.load(Relaxed));
    }

    #[test]
    fn degrade_acknowledges_local_only_until_the_mirrors_catch_up() {
        let g = gate(1, LagPolicy::Degrade);
        g.wait(100);
        assert!(g.degraded.load(Relaxed));
        assert_eq!(g.degradations.load(Relaxed), 1);
        g.wait(101); // degraded: no wait at all
        assert_eq!(g.degradations.load(Relaxed), 1);
        g.report("b", 200);
        g.wait(150);
        assert!(!g.degraded.load(Relaxed), "caught up: waiting again");
    }

    /// Under continuous traffic a new group is never held by the mirrors when it is released,
    /// so catching up is noticed when they report holding what went out local-only.
    #[test]
    fn a_report_covering_what_went_out_local_only_ends_the_degraded_state() {
        let g = gate(1, LagPolicy::Degrade);
        g.wait(100); // times out: degraded
        g.wait(101); // local-only, no wait
        g.report("a", 101); // holds 0..=100 only
        assert!(g.degraded.load(Relaxed), "entry 101 went out local-only");
        g.report("a", 102);
        assert!(!g.degraded.load(Relaxed), "caught up");
        g.wait(105); // waits again: times out (1 ms), degraded a second time
        assert!(g.degraded.load(Relaxed));
        assert_eq!(g.degradations.load(Relaxed), 2);
    }

    /// The metrics say whether receipts go out local-only, how often that began, and what k
    /// mirrors hold.
    #[test]
    fn the_metrics_show_the_degraded_state_and_what_the_mirrors_hold() {
        let g = gate(2, LagPolicy::Degrade);
        let text = |g: &Arc<Gate>| {
            let mut r = prometheus_client::registry::Registry::default();
            r.register_collector(Box::new(Metrics(g.clone())));
            crate::metrics::encode(&r, false).unwrap().0
        };
        let has = |t: &str, line: &str| t.lines().any(|l| l == line);
        let t = text(&g);
        for line in [
            "ledger_replication_degraded 0",
            "ledger_replication_degradations_total 0",
            "ledger_replication_required_mirrors 2",
            "ledger_replication_entries 0",
        ] {
            assert!(has(&t, line), "{line} in:\n{t}");
        }
        g.report("a", 30);
        g.wait(40); // one mirror of the two: degraded after the timeout
        let t = text(&g);
        assert!(has(&t, "ledger_replication_degraded 1"), "{t}");
        assert!(has(&t, "ledger_replication_degradations_total 1"), "{t}");
        assert!(has(&t, "ledger_replication_entries 0"), "{t}");
        g.report("c", 50);
        g.wait(25); // two mirrors hold it: caught up
        let t = text(&g);
        assert!(has(&t, "ledger_replication_degraded 0"), "{t}");
        assert!(has(&t, "ledger_replication_entries 30"), "{t}");
    }
}
