//! An optional Prometheus endpoint (`[metrics] listen`): `GET /metrics` answers ledgerd's
//! figures for the monitoring a casino's operations team runs: ingest ([`crate::stats`]),
//! receipts by status and reason, the durable head, whether ledgerd still acknowledges, the live
//! audit (position, lag in entries and seconds, findings by code and severity), refusals by
//! limit ([`crate::limits::Limit`]), the data directory's filesystem, the process
//! ([`crate::process`]) and the build; on a mirror its lag and alarms ([`crate::mirror`]), with
//! `[replication]` the gate's state, with `[export.nats]` the export's lag.
//!
//! The text is written by `prometheus-client` (Prometheus text 0.0.4, or OpenMetrics when the
//! scraper's `Accept` asks for it) from a [`Collector`] that reads the figures at each scrape:
//! the ingest path keeps its own lock-free atomics ([`crate::stats::IngestStats`], which also
//! answer `Query.GetIngestStats`), so nothing on it changes for Prometheus. HTTP/1.1 is hyper's:
//! one request per connection (`Connection: close`), a request head of at most [`MAX_HEAD`]
//! bytes read within [`READ_TIMEOUT`] (431 / closed), a whole connection within
//! [`CONNECTION_TIMEOUT`], at most [`MAX_CONNECTIONS`] connections answered at once and
//! [`MAX_PER_PEER`] from one address (others are closed at once: a host that opens connections
//! and sends nothing cannot hold every place and starve the scraper), only `GET` and `HEAD` of
//! the resources of [`crate::access::HTTP_RULES`] (404, 405 otherwise): `/metrics`, and the
//! tree as C2SP tlog-tiles under `/tlog/` ([`crate::tlog_http`]). Over TLS each is answered to
//! the principals its rule admits (401, 403). Nothing it reads can change the ledger.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use ledger_audit::store::{AuditStore, FindingFilter};
use ledger_core::proto as v1;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use tokio::net::{TcpListener, TcpStream};

use crate::Ledger;
use crate::stats::EXPORT_BOUNDS_US as BOUNDS_US;

/// Largest request head read (request line and headers); hyper's smallest buffer.
pub const MAX_HEAD: usize = 8192;
/// Time a client has to send its request head (and to finish its TLS handshake).
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Time a whole connection may take, answers included.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(30);
/// Time after which a kept-alive connection takes no new request (it then closes once its
/// answer in progress is sent).
pub const KEEP_ALIVE_FOR: Duration = Duration::from_secs(20);
/// Connections answered at once.
pub const MAX_CONNECTIONS: usize = 32;
/// Connections answered at once from one IP address (a scraper needs one).
pub const MAX_PER_PEER: usize = 4;
/// Findings read from the audit store per scrape to bring the counts by code up to date (the
/// rest at the next scrapes): a scrape's work stays bounded after a burst of findings.
pub const FINDINGS_PER_SCRAPE: usize = 10_000;

/// What the metrics read of the live audit (see [`crate::audit::LiveAudit`]).
#[derive(Clone)]
pub struct AuditGauges {
    /// The position its committed findings cover.
    pub committed: Arc<RwLock<Option<u64>>>,
    /// Why it stopped, if it did.
    pub halted: Arc<Mutex<Option<String>>>,
    /// Its findings.
    pub store: AuditStore,
}

impl AuditGauges {
    /// (committed position, still following).
    fn read(&self) -> (Option<u64>, bool) {
        let position = self.committed.read().map(|p| *p).unwrap_or(None);
        let halted = self.halted.lock().map(|h| h.is_some()).unwrap_or(true);
        (position, !halted)
    }
}

/// TLS on the metrics listener: the gRPC listener's certificate and client CAs, and its
/// clients; only an `admin` or `regulator` principal is answered (a scraper gets an admin
/// certificate).
#[derive(Clone)]
pub struct MetricsTls {
    pub tls: crate::tls::Reloadable,
    pub clients: crate::access::Clients,
}

/// Who a connection's peer is: `Ok(None)` on a plaintext (loopback) listener, where every
/// caller has every role as on gRPC; the principal of its TLS client certificate; or the HTTP
/// status that refuses it and why.
type Who = Result<Option<Arc<crate::access::Principal>>, (StatusCode, String)>;

/// Who the TLS peer is ([`Who`]).
fn admitted(tls: &MetricsTls, conn: &tokio_rustls::server::TlsStream<TcpStream>) -> Who {
    let leaf = conn
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.as_ref());
    let p = tls.clients.of_certificate(leaf).map_err(|r| {
        (
            StatusCode::UNAUTHORIZED,
            format!("{}\n", r.status().message()),
        )
    })?;
    Ok(Some(p))
}

/// The registry every scrape encodes: one [`Figures`] collector, and those of the mirror, the
/// replication gate and the export where they run.
pub fn registry(
    ledger: Ledger,
    audit: Option<AuditGauges>,
    gate: Option<Arc<crate::mirror::replication::Gate>>,
) -> Registry {
    let mut r = Registry::default();
    if let Some(m) = ledger.mirror() {
        r.register_collector(Box::new(crate::mirror::Metrics(m.clone())));
    }
    if let Some(g) = gate {
        r.register_collector(Box::new(crate::mirror::replication::Metrics(g)));
    }
    let ledger_store = &ledger.store().clone();
    r.register_collector(Box::new(Figures {
        ledger,
        audit,
        findings: Mutex::default(),
    }));
    crate::export_nats::register(&mut r, ledger_store);
    crate::witnesses::register(&mut r, ledger_store);
    r
}

/// Serve `GET /metrics` on `listener` until the task is aborted; over TLS when `tls` is given.
pub async fn serve(
    listener: TcpListener,
    ledger: Ledger,
    (audit, gate): (
        Option<AuditGauges>,
        Option<Arc<crate::mirror::replication::Gate>>,
    ),
    tls: Option<MetricsTls>,
) {
    let registry = Arc::new(registry(ledger.clone(), audit, gate));
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let peers = crate::connections::Peers::default();
    loop {
        let Ok((sock, peer)) = listener.accept().await else {
            // Out of file descriptors and the like: wait, rather than spin.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        // Its address's place first, so connections refused there take no place of all.
        let Some(place) = crate::connections::PeerPlace::take(&peers, peer.ip(), MAX_PER_PEER)
        else {
            continue; // dropping the socket closes it
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let (registry, tls, ledger) = (registry.clone(), tls.clone(), ledger.clone());
        tokio::spawn(async move {
            let served = tokio::time::timeout(CONNECTION_TIMEOUT, async {
                match tls {
                    None => http1(sock, registry, ledger, Ok(None)).await,
                    Some(tls) => {
                        let acceptor = tls.tls.http1_acceptor();
                        match tokio::time::timeout(READ_TIMEOUT, acceptor.accept(sock)).await {
                            Ok(Ok(conn)) => {
                                let who = admitted(&tls, &conn);
                                http1(conn, registry, ledger, who).await
                            }
                            Ok(Err(e)) => Err(e.to_string()),
                            Err(_) => Err("TLS handshake timed out".into()),
                        }
                    }
                }
            })
            .await;
            match served {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "metrics request"),
                Err(_) => tracing::debug!(%peer, "metrics connection timed out"),
            }
            drop((slot, place));
        });
    }
}

/// One HTTP/1.1 exchange on `io` (hyper), answered by [`answer`].
async fn http1<S>(io: S, registry: Arc<Registry>, ledger: Ledger, who: Who) -> Result<(), String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let who = Arc::new(who);
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let (registry, who, ledger) = (registry.clone(), who.clone(), ledger.clone());
        async move {
            let mut r = answer(&req, &registry, &ledger, &who);
            if !r.status().is_success() {
                // A refused or bad request ends the connection.
                r.headers_mut().insert(
                    http::header::CONNECTION,
                    http::HeaderValue::from_static("close"),
                );
            }
            Ok::<_, std::convert::Infallible>(r)
        }
    });
    // Kept alive between requests (a tlog-tiles client reads many tiles), each request's head
    // within READ_TIMEOUT; after `KEEP_ALIVE_FOR` the answer in progress is finished and the
    // connection closed, so no client holds a place for longer (the caller's
    // CONNECTION_TIMEOUT is the hard limit behind it).
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .title_case_headers(true)
        .max_buf_size(MAX_HEAD)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(READ_TIMEOUT)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service);
    tokio::pin!(conn);
    tokio::select! {
        r = conn.as_mut() => return r.map_err(|e| e.to_string()),
        _ = tokio::time::sleep(KEEP_ALIVE_FOR) => conn.as_mut().graceful_shutdown(),
    }
    conn.await.map_err(|e| e.to_string())
}

/// OpenMetrics' content type (prometheus-client's text encoder).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The answer to one request: for `GET` (or the head for `HEAD`) of a resource of
/// [`crate::access::HTTP_RULES`] that the peer may read, the metrics or a tlog-tiles resource
/// ([`crate::tlog_http`]); an error otherwise.
fn answer<B>(
    req: &Request<B>,
    registry: &Registry,
    ledger: &Ledger,
    who: &Who,
) -> Response<Full<Bytes>> {
    let text = |status: StatusCode, body: String| {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        r
    };
    let who = match who {
        Err((status, why)) => return text(*status, why.clone()),
        Ok(who) => who,
    };
    let path = req.uri().path();
    let Some((rule, scoped)) = crate::access::http_admits(path) else {
        return text(
            StatusCode::NOT_FOUND,
            "only /metrics and /tlog/ (C2SP tlog-tiles) are served here\n".into(),
        );
    };
    if let Some(p) = who
        && let Err(r) = crate::access::admit(path, rule, scoped, p)
    {
        let status = match r {
            crate::access::Refusal::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            crate::access::Refusal::Denied(_) => StatusCode::FORBIDDEN,
        };
        return text(status, format!("{}\n", r.status().message()));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD are served\n".into(),
        );
        r.headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if path.starts_with(crate::tlog_http::PREFIX) {
        let size = ledger.durable().borrow().0 + 1;
        return crate::tlog_http::answer(path, ledger.store(), size);
    }
    let openmetrics = req
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("application/openmetrics-text"));
    let (body, content_type) = match encode(registry, openmetrics) {
        Ok(b) => b,
        Err(e) => {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot encode the metrics: {e}\n"),
            );
        }
    };
    // hyper sends a HEAD answer's length without its body.
    let mut r = Response::new(Full::new(Bytes::from(body)));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    r
}

/// The registry's text: OpenMetrics, or Prometheus text 0.0.4; and its content type.
pub fn encode(
    registry: &Registry,
    openmetrics: bool,
) -> Result<(String, &'static str), std::fmt::Error> {
    let mut out = String::with_capacity(16 << 10);
    if openmetrics {
        prometheus_client::encoding::text::encode(&mut out, registry)?;
        Ok((out, OPENMETRICS))
    } else {
        prometheus_client::encoding::prometheus_text::encode(&mut out, registry)?;
        Ok((
            out,
            prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        ))
    }
}

/// Findings counted so far by (code, severity), and the last finding counted.
#[derive(Default)]
struct FindingCounts {
    after: Option<u64>,
    by: BTreeMap<(String, &'static str), u64>,
}

/// The figures, read at each scrape.
struct Figures {
    ledger: Ledger,
    audit: Option<AuditGauges>,
    findings: Mutex<FindingCounts>,
}

impl std::fmt::Debug for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Figures")
    }
}

fn counter(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: impl prometheus_client::encoding::EncodeCounterValue,
) -> std::fmt::Result {
    ConstCounter::new(v).encode(e.encode_descriptor(name, help, None, MetricType::Counter)?)
}

fn gauge(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: impl prometheus_client::encoding::EncodeGaugeValue,
) -> std::fmt::Result {
    ConstGauge::new(v).encode(e.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

/// Microseconds as seconds, as Prometheus expects durations.
fn secs(us: u64) -> f64 {
    us as f64 / 1e6
}

/// A histogram from the ingest figures: `counts` under each of [`BOUNDS_US`], not cumulated.
fn histogram_buckets(counts: [u64; BOUNDS_US.len()]) -> Vec<(f64, u64)> {
    BOUNDS_US.iter().map(|b| secs(*b)).zip(counts).collect()
}

/// A receipt status's label.
fn status_label(s: usize) -> &'static str {
    [
        "unspecified",
        "accepted",
        "duplicate",
        "rejected",
        "equivocation",
    ]
    .get(s)
    .copied()
    .unwrap_or("unspecified")
}

/// A reject reason's label: the proto name, lower case, without its prefix ("none" for 0).
fn reason_label(r: usize) -> String {
    match i32::try_from(r)
        .ok()
        .and_then(|r| v1::RejectReason::try_from(r).ok())
    {
        Some(v1::RejectReason::Unspecified) | None => "none".into(),
        Some(x) => x
            .as_str_name()
            .trim_start_matches("REJECT_REASON_")
            .to_lowercase(),
    }
}

fn severity_label(s: rules_core::Severity) -> &'static str {
    use rules_core::Severity as S;
    match s {
        S::Info => "info",
        S::Low => "low",
        S::Medium => "medium",
        S::High => "high",
        S::Critical => "critical",
    }
}

impl Figures {
    fn ingest(&self, e: &mut DescriptorEncoder) -> std::fmt::Result {
        let stats = self.ledger.stats();
        let s = stats.to_proto(Instant::now());
        let exported = stats.exported();
        let (head, _) = *self.ledger.durable().borrow();
        let stopped = self.ledger.fatal().borrow().is_some();
        gauge(
            e,
            "ledger_head_index",
            "Index of the last durable chain entry.",
            head,
        )?;
        gauge(
            e,
            "ledger_acknowledging",
            "1 while ledgerd acknowledges events; 0 after a storage failure stopped it (it then exits).",
            i64::from(!stopped),
        )?;
        gauge(
            e,
            "ledger_uptime_seconds",
            "Time since ledgerd started its pipeline.",
            secs(s.uptime_ms * 1000),
        )?;
        counter(
            e,
            "ledger_accepted_events",
            "Events appended and made durable since ledgerd started.",
            s.accepted,
        )?;
        counter(
            e,
            "ledger_bad_signatures",
            "Envelopes refused for a bad signature since ledgerd started.",
            s.bad_signatures,
        )?;
        counter(
            e,
            "ledger_unproven_envelopes",
            "Envelopes from ingest streams not yet shown to hold a device key (signatures checked apart).",
            s.unproven_envelopes,
        )?;
        counter(
            e,
            "ledger_clock_steps",
            "Steps of the ledger's wall clock against its monotonic clock, each recorded in the chain.",
            s.clock_steps,
        )?;
        counter(
            e,
            "ledger_groups",
            "Groups verified, appended and synced together since ledgerd started.",
            s.groups,
        )?;
        counter(
            e,
            "ledger_sync_over_10ms_seconds",
            "Time in which a sync had run over 10 ms (every envelope arriving then waited over 10 ms).",
            secs(s.sync_over_10ms_us),
        )?;
        counter(
            e,
            "ledger_slow_syncs",
            "Syncs (flush + fsync) of 50 ms or more: the disk stalled.",
            s.slow_syncs,
        )?;
        gauge(
            e,
            "ledger_hold_seconds",
            "The hold the verifier gave the latest group (ingest.hold_us scaled by how busy ledgerd is).",
            secs(s.hold_us),
        )?;
        {
            let mut m = e.encode_descriptor(
                "ledger_receipts",
                "Receipts released since ledgerd started, by status and reject reason.",
                None,
                MetricType::Counter,
            )?;
            let counts = stats.receipt_counts();
            for (status, by_reason) in counts.iter().enumerate().skip(1) {
                for (reason, n) in by_reason.iter().enumerate() {
                    // Every reason of a rejection and the one "none" of the other statuses
                    // always (alerts need the series before the first one), others once seen.
                    let usual = (status == v1::ReceiptStatus::Rejected as usize) == (reason != 0);
                    if !usual && *n == 0 {
                        continue;
                    }
                    let labels = [
                        ("status", status_label(status).to_string()),
                        ("reason", reason_label(reason)),
                    ];
                    ConstCounter::new(*n).encode(m.encode_family(&labels)?)?;
                }
            }
        }
        let histograms = [
            (
                "ledger_receipt_latency_seconds",
                "Receipts released by a sync: from taking the envelope off its stream to the release.",
                &s.receipt_latency,
                exported.receipts,
            ),
            (
                "ledger_sync_latency_seconds",
                "Syncs (sled flush, then fsync of its log) that covered at least one group.",
                &s.sync_latency,
                exported.syncs,
            ),
        ];
        for (name, help, h, counts) in histograms {
            let h = h.clone().unwrap_or_default();
            e.encode_descriptor(name, help, None, MetricType::Histogram)?
                .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                    secs(h.sum_us),
                    h.count,
                    &histogram_buckets(counts),
                    None,
                )?;
        }
        let mut m = e.encode_descriptor(
            "ledger_stage_latency_seconds",
            "Where receipts' time inside ledgerd went, per receipt and stage: queued (until the \
             verifier closed its group), verify (the batch check), apply (waiting for the \
             appender, appending), durable (appended to released by a sync).",
            None,
            MetricType::Histogram,
        )?;
        for (stage, (h, counts)) in ["queued", "verify", "apply", "durable"].iter().zip([
            (&s.queued_latency, exported.stages[0]),
            (&s.verify_latency, exported.stages[1]),
            (&s.apply_latency, exported.stages[2]),
            (&s.durable_latency, exported.stages[3]),
        ]) {
            let h = h.clone().unwrap_or_default();
            m.encode_family(&[("stage", *stage)])?
                .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                    secs(h.sum_us),
                    h.count,
                    &histogram_buckets(counts),
                    None,
                )?;
        }
        Ok(())
    }

    fn audit(&self, e: &mut DescriptorEncoder, audit: &AuditGauges) -> std::fmt::Result {
        let (position, following) = audit.read();
        let (head, _) = *self.ledger.durable().borrow();
        gauge(
            e,
            "ledger_audit_position",
            "Index of the last chain entry whose findings the live audit has committed (-1: none yet).",
            position.map_or(-1, |p| i64::try_from(p).unwrap_or(i64::MAX)),
        )?;
        gauge(
            e,
            "ledger_audit_following",
            "1 while the live audit follows the chain; 0 once it stopped (Audit.GetStatus says why; ingest goes on).",
            i64::from(following),
        )?;
        counter(
            e,
            "ledger_audit_store_rebuilds",
            "Times the live audit met damage in its store, set it aside and rebuilt it from the chain.",
            audit.store.rebuilds(),
        )?;
        // The oldest durable entry the audit has not committed, and how long ago it arrived.
        let next = position.map_or(0, |p| p + 1);
        let (lag_entries, lag_seconds) = if next > head {
            (0, 0.0)
        } else {
            let age = match self.ledger.store().entry(next) {
                Ok(Some(entry)) => {
                    let now = chrono::Utc::now().timestamp_millis();
                    (now.saturating_sub(entry.received_at_ms)).max(0) as f64 / 1e3
                }
                _ => 0.0,
            };
            (head - next + 1, age)
        };
        gauge(
            e,
            "ledger_audit_lag_entries",
            "Durable chain entries the live audit has not committed yet.",
            lag_entries,
        )?;
        gauge(
            e,
            "ledger_audit_lag_seconds",
            "Age of the oldest durable entry the live audit has not committed (0 when caught up).",
            lag_seconds,
        )?;
        let counts = self.finding_counts(audit);
        let mut m = e.encode_descriptor(
            "ledger_audit_findings",
            "Findings the live audit has committed, by code and severity.",
            None,
            MetricType::Counter,
        )?;
        for ((code, severity), n) in &counts {
            let labels = [("code", code.as_str()), ("severity", severity)];
            ConstCounter::new(*n).encode(m.encode_family(&labels)?)?;
        }
        Ok(())
    }

    /// The counts by (code, severity), brought up to date by reading at most
    /// [`FINDINGS_PER_SCRAPE`] findings committed since the last scrape (findings are kept in
    /// sequence order and never change).
    fn finding_counts(&self, audit: &AuditGauges) -> BTreeMap<(String, &'static str), u64> {
        let mut c = self.findings.lock().unwrap_or_else(|e| e.into_inner());
        match audit
            .store
            .findings(&FindingFilter::default(), c.after, FINDINGS_PER_SCRAPE)
        {
            Ok(new) => {
                for f in new {
                    c.after = Some(f.seq);
                    *c.by
                        .entry((f.code, severity_label(f.severity)))
                        .or_default() += 1;
                }
            }
            Err(e) => tracing::warn!(error = %e, "metrics: cannot read the audit's findings"),
        }
        c.by.clone()
    }
}

impl Collector for Figures {
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        gauge_info(&mut e)?;
        self.ingest(&mut e)?;
        if let Some(a) = &self.audit {
            self.audit(&mut e, a)?;
        }
        {
            let mut m = e.encode_descriptor(
                "ledger_limit_refusals",
                "Refusals by ledgerd's limits since it started: device_rate, principal_calls (RESOURCE_EXHAUSTED), connections_per_peer, connections (closed at accept), entry_streams.",
                None,
                MetricType::Counter,
            )?;
            for l in crate::limits::Limit::ALL {
                ConstCounter::new(l.count()).encode(m.encode_family(&[("limit", l.label())])?)?;
            }
        }
        if let Some((available, size)) = crate::process::filesystem(self.ledger.store().dir()) {
            gauge(
                &mut e,
                "ledger_data_dir_available_bytes",
                "Bytes free for ledgerd on the filesystem of its data directory (statvfs f_bavail).",
                available,
            )?;
            gauge(
                &mut e,
                "ledger_data_dir_size_bytes",
                "Size of the filesystem of ledgerd's data directory.",
                size,
            )?;
        }
        if let Some(p) = crate::process::sample() {
            counter(
                &mut e,
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                p.cpu_seconds,
            )?;
            gauge(
                &mut e,
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                p.resident_bytes,
            )?;
            gauge(
                &mut e,
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                p.virtual_bytes,
            )?;
            gauge(
                &mut e,
                "process_open_fds",
                "Number of open file descriptors.",
                p.open_fds,
            )?;
            gauge(
                &mut e,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                p.max_fds,
            )?;
            gauge(
                &mut e,
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                p.start_time_seconds,
            )?;
        }
        Ok(())
    }
}

/// `ledger_build_info{version, profile} 1`.
fn gauge_info(e: &mut DescriptorEncoder) -> std::fmt::Result {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    e.encode_descriptor(
        "ledger_build",
        "ledgerd's version and build profile.",
        None,
        MetricType::Info,
    )?
    .encode_info(&[("version", env!("CARGO_PKG_VERSION")), ("profile", profile)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Coalesce, PipelineConfig};
    use ledger_store::{OpenConfig, Store};

    /// A ledger over a fresh store (no principals), with its pipeline running.
    fn ledger(dir: &std::path::Path) -> Ledger {
        let (_store, appender) = Store::open_writer(
            dir,
            &OpenConfig {
                cache_capacity_bytes: 8 << 20,
                ledger_id: "t".into(),
                principals: Vec::new(),
            },
        )
        .unwrap();
        Ledger::start(
            appender,
            PipelineConfig {
                max_batch: 64,
                coalesce: Coalesce::OFF,
                queue_capacity: 64,
                queue_bytes: 1 << 20,
                max_body_bytes: 65536,
                time: Default::default(),
                clock_step_threshold_ms: 1000,
                signed_receipts: false,
            },
        )
    }

    fn receipt(status: v1::ReceiptStatus, reason: v1::RejectReason) -> v1::Receipt {
        v1::Receipt {
            status: status as i32,
            reason: reason as i32,
            ..Default::default()
        }
    }

    fn finding(seq: u64, code: &str, severity: rules_core::Severity) -> audit::Finding {
        audit::Finding {
            seq,
            code: code.into(),
            severity,
            ..Default::default()
        }
    }

    /// The value of the sample line `series` (name and labels as printed).
    fn value(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("{series} missing from:\n{text}"))
            .parse()
            .unwrap()
    }

    #[tokio::test]
    async fn every_figure_is_in_the_prometheus_text() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = ledger(dir.path());
        let s = ledger.stats();
        let t0 = Instant::now();
        s.sync(t0, Duration::from_micros(400), false);
        s.sync(t0, Duration::from_millis(60), true);
        s.group(
            t0 + Duration::from_millis(2),
            [t0, t0 + Duration::from_micros(1999)],
            2,
            &crate::pipeline::Stamps {
                closed: t0 + Duration::from_millis(2),
                verified: t0 + Duration::from_millis(2),
                applied: t0 + Duration::from_millis(2),
            },
        );
        use v1::{ReceiptStatus as St, RejectReason as Why};
        s.receipts(&[
            receipt(St::Accepted, Why::Unspecified),
            receipt(St::Accepted, Why::Unspecified),
            receipt(St::Duplicate, Why::Unspecified),
            receipt(St::Rejected, Why::SequenceGap),
            receipt(St::Rejected, Why::BadSignature),
            receipt(St::Rejected, Why::BadSignature),
        ]);
        let store = AuditStore::temporary().unwrap();
        use rules_core::Severity as Sev;
        store
            .commit(
                &[
                    finding(0, "R_PAYOUT", Sev::High),
                    finding(1, "R_PAYOUT", Sev::High),
                    finding(2, "AUDIT_GAP", Sev::Critical),
                ],
                &[],
                &[],
                None,
            )
            .unwrap();
        let audit = AuditGauges {
            committed: Arc::new(RwLock::new(None)),
            halted: Arc::default(),
            store: store.clone(),
        };
        let registry = registry(ledger.clone(), Some(audit.clone()), None);
        let (text, content_type) = encode(&registry, false).unwrap();
        assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
        for want in [
            "# TYPE ledger_head_index gauge\n",
            "# TYPE ledger_accepted_events_total counter\nledger_accepted_events_total 2\n",
            "ledger_acknowledging 1\n",
            "ledger_groups_total 1\n",
            "ledger_slow_syncs_total 1\n",
            "ledger_sync_over_10ms_seconds_total 0.05\n",
            "# TYPE ledger_sync_latency_seconds histogram\n",
            "ledger_sync_latency_seconds_bucket{le=\"0.00025\"} 0\n",
            "ledger_sync_latency_seconds_bucket{le=\"0.0005\"} 1\n",
            "ledger_sync_latency_seconds_bucket{le=\"0.1\"} 2\n",
            "ledger_sync_latency_seconds_bucket{le=\"+Inf\"} 2\n",
            "ledger_sync_latency_seconds_sum 0.0604\n",
            "ledger_sync_latency_seconds_count 2\n",
            "ledger_receipt_latency_seconds_bucket{le=\"0.0001\"} 1\n",
            "ledger_receipt_latency_seconds_bucket{le=\"0.0025\"} 2\n",
            "ledger_stage_latency_seconds_bucket{stage=\"queued\",le=\"0.0025\"} 2\n",
            "ledger_stage_latency_seconds_count{stage=\"queued\"} 2\n",
            "ledger_stage_latency_seconds_sum{stage=\"verify\"} 0.0\n",
            "ledger_receipts_total{status=\"accepted\",reason=\"none\"} 2\n",
            "ledger_receipts_total{status=\"duplicate\",reason=\"none\"} 1\n",
            "ledger_receipts_total{status=\"equivocation\",reason=\"none\"} 0\n",
            "ledger_receipts_total{status=\"rejected\",reason=\"bad_signature\"} 2\n",
            "ledger_receipts_total{status=\"rejected\",reason=\"sequence_gap\"} 1\n",
            "ledger_receipts_total{status=\"rejected\",reason=\"too_large\"} 0\n",
            "ledger_audit_position -1\n",
            "ledger_audit_following 1\n",
            "ledger_audit_store_rebuilds_total 0\n",
            "ledger_audit_findings_total{code=\"R_PAYOUT\",severity=\"high\"} 2\n",
            "ledger_audit_findings_total{code=\"AUDIT_GAP\",severity=\"critical\"} 1\n",
            "# TYPE process_cpu_seconds_total counter\n",
            "# TYPE process_resident_memory_bytes gauge\n",
            "# TYPE process_open_fds gauge\n",
            "# TYPE process_start_time_seconds gauge\n",
            "ledger_build_info{version=\"",
            "ledger_limit_refusals_total{limit=\"device_rate\"} ",
            "ledger_limit_refusals_total{limit=\"connections_per_peer\"} ",
            "# TYPE ledger_data_dir_available_bytes gauge\n",
        ] {
            assert!(text.contains(want), "{want:?} missing from:\n{text}");
        }
        assert!(
            !text.contains("status=\"rejected\",reason=\"none\""),
            "a rejection always has a reason"
        );
        // The genesis entry is durable and not audited: one entry behind, received just now.
        let head = ledger.durable().borrow().0;
        assert_eq!(value(&text, "ledger_head_index"), head as f64);
        assert_eq!(value(&text, "ledger_audit_lag_entries"), head as f64 + 1.0);
        let lag = value(&text, "ledger_audit_lag_seconds");
        assert!((0.0..3600.0).contains(&lag), "{lag}");
        assert!(value(&text, "process_resident_memory_bytes") > 0.0);
        let (free, size) = (
            value(&text, "ledger_data_dir_available_bytes"),
            value(&text, "ledger_data_dir_size_bytes"),
        );
        assert!(size > 0.0 && free <= size, "{free} of {size}");
        // Refusals are counted by limit (one set per process, so other tests may add to them).
        let before = value(
            &text,
            "ledger_limit_refusals_total{limit=\"entry_streams\"}",
        );
        let streams = crate::limits::EntryStreams::new(1, 1);
        let _open = streams.open("x").unwrap();
        assert!(streams.open("x").is_err());
        let (text2, _) = encode(&registry, false).unwrap();
        assert!(
            value(
                &text2,
                "ledger_limit_refusals_total{limit=\"entry_streams\"}"
            ) > before,
            "{text2}"
        );
        // Every sample line is "name value" or "name{labels} value", and its family typed.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, v) = line.rsplit_once(' ').unwrap();
            assert!(v.parse::<f64>().is_ok(), "{line}");
            let base = name.split('{').next().unwrap();
            let family = base
                .strip_suffix("_bucket")
                .or_else(|| base.strip_suffix("_sum"))
                .or_else(|| base.strip_suffix("_count"))
                .filter(|f| text.contains(&format!("# TYPE {f} histogram")))
                .unwrap_or(base);
            assert!(
                text.contains(&format!("# TYPE {family} ")),
                "{family} untyped"
            );
        }

        // New findings are counted at the next scrape, the old ones not again; a caught-up
        // audit lags by nothing.
        store
            .commit(&[finding(3, "R_PAYOUT", Sev::High)], &[], &[], None)
            .unwrap();
        *audit.committed.write().unwrap() = Some(head);
        *audit.halted.lock().unwrap() = Some("stopped".into());
        let (text, _) = encode(&registry, false).unwrap();
        assert_eq!(
            value(
                &text,
                "ledger_audit_findings_total{code=\"R_PAYOUT\",severity=\"high\"}"
            ),
            3.0
        );
        assert_eq!(
            value(
                &text,
                "ledger_audit_findings_total{code=\"AUDIT_GAP\",severity=\"critical\"}"
            ),
            1.0
        );
        assert_eq!(value(&text, "ledger_audit_lag_entries"), 0.0);
        assert_eq!(value(&text, "ledger_audit_lag_seconds"), 0.0);
        assert_eq!(value(&text, "ledger_audit_following"), 0.0);
        assert_eq!(value(&text, "ledger_audit_position"), head as f64);

        // OpenMetrics on request; no audit figures when the audit is off.
        let (om, content_type) =
            encode(&super::registry(ledger.clone(), None, None), true).unwrap();
        assert!(content_type.starts_with("application/openmetrics-text"));
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert!(
            om.contains("# TYPE ledger_accepted_events counter\n"),
            "{om}"
        );
        assert!(!om.contains("ledger_audit_"), "{om}");
    }

    #[tokio::test]
    async fn only_get_and_head_of_metrics_are_answered_and_only_to_admitted_peers() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = ledger(dir.path());
        let registry = registry(ledger.clone(), None, None);
        let ok: Who = Ok(None);
        let req =
            |method: &str, uri: &str| Request::builder().method(method).uri(uri).body(()).unwrap();
        let status =
            |method: &str, uri: &str| answer(&req(method, uri), &registry, &ledger, &ok).status();
        assert_eq!(status("GET", "/metrics"), StatusCode::OK);
        assert_eq!(status("GET", "/metrics?x=1"), StatusCode::OK);
        assert_eq!(status("HEAD", "/metrics"), StatusCode::OK);
        assert_eq!(status("GET", "/"), StatusCode::NOT_FOUND);
        assert_eq!(status("GET", "/metrics/../x"), StatusCode::NOT_FOUND);
        let post = answer(&req("POST", "/metrics"), &registry, &ledger, &ok);
        assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(post.headers()[header::ALLOW], "GET, HEAD");
        let get = answer(&req("GET", "/metrics"), &registry, &ledger, &ok);
        assert_eq!(
            get.headers()[header::CONTENT_TYPE],
            "text/plain; version=0.0.4; charset=utf-8"
        );
        let mut om = req("GET", "/metrics");
        om.headers_mut().insert(
            header::ACCEPT,
            "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"
                .parse()
                .unwrap(),
        );
        assert_eq!(
            answer(&om, &registry, &ledger, &ok).headers()[header::CONTENT_TYPE],
            OPENMETRICS
        );
        let refused: Who = Err((StatusCode::UNAUTHORIZED, "not you\n".to_string()));
        let r = answer(&req("GET", "/metrics"), &registry, &ledger, &refused);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        use http_body_util::BodyExt;
        let body = r.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"not you\n");
        // A known principal without the role, or limited to casinos: 403, naming the rule.
        use crate::access::{Principal, Role};
        for p in [
            Principal::new("op", Role::Operator, []),
            Principal::new("re", Role::Regulator, ["lisboa".to_string()]),
        ] {
            let who: Who = Ok(Some(Arc::new(p)));
            let r = answer(&req("GET", "/metrics"), &registry, &ledger, &who);
            assert_eq!(r.status(), StatusCode::FORBIDDEN);
        }
        let who: Who = Ok(Some(Arc::new(Principal::new("re", Role::Regulator, []))));
        let r = answer(&req("GET", "/metrics"), &registry, &ledger, &who);
        assert_eq!(r.status(), StatusCode::OK);
    }
}
