//! An optional Prometheus endpoint (`[metrics] listen`): `GET /metrics` answers ledgerd's ingest
//! figures ([`crate::stats`]), the durable head, whether ledgerd still acknowledges, and (with the
//! live audit on) the audit's committed position and whether it still follows the chain, in the
//! Prometheus text format (version 0.0.4), for the monitoring a casino's operations team runs.
//!
//! A deliberately small HTTP/1.1 server, with no dependency beyond tokio: one request per
//! connection (`Connection: close`), a request head of at most [`MAX_HEAD`] bytes read within
//! [`READ_TIMEOUT`], at most [`MAX_CONNECTIONS`] connections answered at once and
//! [`MAX_PER_PEER`] from one address (others are closed at once: a host that opens connections
//! and sends nothing cannot hold every place and starve the scraper), only `GET` (and `HEAD`)
//! of `/metrics`. It serves figures, never the chain,
//! and nothing it reads can change the ledger; anything else gets 400, 404, 405 or 431.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use ledger_core::proto as v1;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::Ledger;
use crate::stats::{EXPORT_BOUNDS_US as BOUNDS_US, Exported};

/// Largest request head read (request line and headers).
pub const MAX_HEAD: usize = 8192;
/// Time a client has to send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections answered at once.
pub const MAX_CONNECTIONS: usize = 32;
/// Connections answered at once from one IP address (a scraper needs one).
pub const MAX_PER_PEER: usize = 4;

/// What the metrics read of the live audit (see [`crate::audit::LiveAudit`]).
#[derive(Clone)]
pub struct AuditGauges {
    /// The position its committed findings cover.
    pub committed: Arc<RwLock<Option<u64>>>,
    /// Why it stopped, if it did.
    pub halted: Arc<Mutex<Option<String>>>,
}

impl AuditGauges {
    /// (committed position or -1, still following).
    fn read(&self) -> (i64, bool) {
        let position = self
            .committed
            .read()
            .map(|p| p.map_or(-1, |p| p as i64))
            .unwrap_or(-1);
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

/// Who the TLS peer is, or the HTTP status that refuses it.
fn admitted(
    tls: &MetricsTls,
    conn: &tokio_rustls::server::TlsStream<TcpStream>,
) -> Result<(), (&'static str, String)> {
    use crate::access::Role;
    let leaf = conn
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.as_ref());
    let p = tls
        .clients
        .of_certificate(leaf)
        .map_err(|r| ("401 Unauthorized", format!("{}\n", r.status().message())))?;
    if p.roles.contains(&Role::Admin) || p.roles.contains(&Role::Regulator) {
        Ok(())
    } else {
        Err((
            "403 Forbidden",
            format!(
                "/metrics needs the role admin or regulator; {} is not\n",
                p.name
            ),
        ))
    }
}

/// Serve `GET /metrics` on `listener` until the task is aborted; over TLS when `tls` is given.
pub async fn serve(
    listener: TcpListener,
    ledger: Ledger,
    audit: Option<AuditGauges>,
    tls: Option<MetricsTls>,
) {
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
        let (ledger, audit, tls) = (ledger.clone(), audit.clone(), tls.clone());
        tokio::spawn(async move {
            let r = match tls {
                None => answer(sock, &ledger, audit.as_ref(), Ok(())).await,
                Some(tls) => {
                    let acceptor = tls.tls.acceptor();
                    match tokio::time::timeout(READ_TIMEOUT, acceptor.accept(sock)).await {
                        Ok(Ok(conn)) => {
                            let gate = admitted(&tls, &conn);
                            answer(conn, &ledger, audit.as_ref(), gate).await
                        }
                        Ok(Err(e)) => Err(e),
                        Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
                    }
                }
            };
            if let Err(e) = r {
                tracing::debug!(%peer, error = %e, "metrics request");
            }
            drop((slot, place));
        });
    }
}

async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut sock: S,
    ledger: &Ledger,
    audit: Option<&AuditGauges>,
    gate: Result<(), (&'static str, String)>,
) -> std::io::Result<()> {
    let head = match tokio::time::timeout(READ_TIMEOUT, read_head(&mut sock)).await {
        Ok(r) => r?,
        Err(_) => Head::Incomplete,
    };
    let (status, body) = match (head, gate) {
        (Head::Complete(_), Err((status, why))) => (status, Body::Refused(why)),
        (Head::Complete(h), Ok(())) => route(&h, || render(ledger, audit)),
        (Head::TooLarge, _) => (
            "431 Request Header Fields Too Large",
            Body::Text("request head too large\n"),
        ),
        (Head::Incomplete, _) => ("400 Bad Request", Body::Text("incomplete request\n")),
    };
    let (text, send_body) = match &body {
        Body::Text(t) => (t.to_string(), true),
        Body::Refused(t) => (t.clone(), true),
        Body::Metrics(t) => (t.clone(), true),
        Body::HeadOnly(t) => (t.clone(), false),
    };
    let content_type = match body {
        Body::Text(_) | Body::Refused(_) => "text/plain; charset=utf-8",
        Body::Metrics(_) | Body::HeadOnly(_) => "text/plain; version=0.0.4; charset=utf-8",
    };
    let allow = if status.starts_with("405") {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        text.len()
    )
    .into_bytes();
    if send_body {
        out.extend_from_slice(text.as_bytes());
    }
    sock.write_all(&out).await?;
    sock.shutdown().await?;
    // Read what the client may still be sending (a request head too large, a body) before
    // closing: closing with unread input resets the connection, and the client could lose the
    // answer. Bounded in bytes and time.
    let mut sink = [0u8; 4096];
    let mut left: usize = 1 << 16;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while left > 0 {
            match sock.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
    Ok(())
}

enum Head {
    Complete(Vec<u8>),
    TooLarge,
    Incomplete,
}

async fn read_head<S: AsyncRead + Unpin>(sock: &mut S) -> std::io::Result<Head> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(Head::Incomplete);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(end);
            return Ok(Head::Complete(buf));
        }
        if buf.len() > MAX_HEAD {
            return Ok(Head::TooLarge);
        }
    }
}

enum Body {
    Text(&'static str),
    /// The caller may not read the metrics (TLS): why.
    Refused(String),
    Metrics(String),
    /// The metrics' length is sent, not the metrics (a `HEAD` request).
    HeadOnly(String),
}

/// The answer to a request head (without its final blank line).
fn route(head: &[u8], metrics: impl FnOnce() -> String) -> (&'static str, Body) {
    let line = head
        .split(|&b| b == b'\r' || b == b'\n')
        .next()
        .unwrap_or(&[]);
    let Ok(line) = std::str::from_utf8(line) else {
        return ("400 Bad Request", Body::Text("request line is not UTF-8\n"));
    };
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return ("400 Bad Request", Body::Text("malformed request line\n"));
    };
    if !version.starts_with("HTTP/1.") {
        return ("400 Bad Request", Body::Text("only HTTP/1.x is served\n"));
    }
    let path = target.split('?').next().unwrap_or(target);
    if path != "/metrics" {
        return (
            "404 Not Found",
            Body::Text("only /metrics is served here\n"),
        );
    }
    match method {
        "GET" => ("200 OK", Body::Metrics(metrics())),
        "HEAD" => ("200 OK", Body::HeadOnly(metrics())),
        _ => (
            "405 Method Not Allowed",
            Body::Text("only GET and HEAD are served\n"),
        ),
    }
}

fn render(ledger: &Ledger, audit: Option<&AuditGauges>) -> String {
    let (head, _) = *ledger.durable().borrow();
    let stopped = ledger.fatal().borrow().is_some();
    text(
        &ledger.stats().to_proto(Instant::now()),
        head,
        stopped,
        ledger.stats().exported(),
        audit.map(AuditGauges::read),
    )
}

/// The Prometheus text for these figures. `exported` holds, per metric, the counts of values
/// up to each of [`BOUNDS_US`] (not cumulated), as [`crate::stats::IngestStats::exported`] keeps
/// them; `audit` the live audit's committed position and whether it still follows, if it runs.
fn text(
    s: &v1::IngestStats,
    head: u64,
    stopped: bool,
    exported: Exported,
    audit: Option<(i64, bool)>,
) -> String {
    let mut out = String::with_capacity(4096);
    let mut metric = |name: &str, kind: &str, help: &str, value: String| {
        let _ = write!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        );
    };
    metric(
        "ledger_head_index",
        "gauge",
        "Index of the last durable chain entry.",
        head.to_string(),
    );
    metric(
        "ledger_acknowledging",
        "gauge",
        "1 while ledgerd acknowledges events; 0 after a storage failure stopped it (it then exits).",
        u8::from(!stopped).to_string(),
    );
    if let Some((position, following)) = audit {
        metric(
            "ledger_audit_position",
            "gauge",
            "Index of the last chain entry whose findings the live audit has committed (-1: none yet).",
            position.to_string(),
        );
        metric(
            "ledger_audit_following",
            "gauge",
            "1 while the live audit follows the chain; 0 once it stopped (Audit.GetStatus says why; ingest goes on).",
            u8::from(following).to_string(),
        );
    }
    metric(
        "ledger_uptime_seconds",
        "gauge",
        "Time since ledgerd started its pipeline.",
        secs(s.uptime_ms * 1000).to_string(),
    );
    metric(
        "ledger_accepted_events_total",
        "counter",
        "Events appended and made durable since ledgerd started.",
        s.accepted.to_string(),
    );
    metric(
        "ledger_bad_signatures_total",
        "counter",
        "Envelopes refused for a bad signature since ledgerd started.",
        s.bad_signatures.to_string(),
    );
    metric(
        "ledger_unproven_envelopes_total",
        "counter",
        "Envelopes from ingest streams not yet shown to hold a device key (signatures checked apart).",
        s.unproven_envelopes.to_string(),
    );
    metric(
        "ledger_clock_steps_total",
        "counter",
        "Steps of the ledger's wall clock against its monotonic clock, each recorded in the chain.",
        s.clock_steps.to_string(),
    );
    metric(
        "ledger_groups_total",
        "counter",
        "Groups verified, appended and synced together since ledgerd started.",
        s.groups.to_string(),
    );
    metric(
        "ledger_sync_over_10ms_seconds_total",
        "counter",
        "Time in which a sync had run over 10 ms (every envelope arriving then waited over 10 ms).",
        secs(s.sync_over_10ms_us).to_string(),
    );
    metric(
        "ledger_slow_syncs_total",
        "counter",
        "Syncs (flush + fsync) of 50 ms or more: the disk stalled.",
        s.slow_syncs.to_string(),
    );
    metric(
        "ledger_hold_seconds",
        "gauge",
        "The hold the verifier gave the latest group (ingest.hold_us scaled by how busy ledgerd is).",
        secs(s.hold_us).to_string(),
    );
    metric(
        "process_cpu_seconds_total",
        "counter",
        "CPU time ledgerd's process has used, all threads (0 where the platform does not say).",
        secs(s.cpu_us).to_string(),
    );
    let histograms = [
        (
            "ledger_receipt_latency_seconds",
            "",
            "Receipts released by a sync: from taking the envelope off its stream to the release.",
            &s.receipt_latency,
            exported.receipts,
        ),
        (
            "ledger_sync_latency_seconds",
            "",
            "Syncs (sled flush, then fsync of its log) that covered at least one group.",
            &s.sync_latency,
            exported.syncs,
        ),
    ];
    for (name, label, help, h, counts) in histograms {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        histogram(&mut out, name, label, h, counts);
    }
    let name = "ledger_stage_latency_seconds";
    let _ = writeln!(
        out,
        "# HELP {name} Where receipts' time inside ledgerd went, per receipt and stage: queued \
         (until the verifier closed its group), verify (the batch check), apply (waiting for the \
         appender, appending), durable (appended to released by a sync).\n# TYPE {name} histogram"
    );
    for (stage, (h, counts)) in ["queued", "verify", "apply", "durable"].iter().zip([
        (&s.queued_latency, exported.stages[0]),
        (&s.verify_latency, exported.stages[1]),
        (&s.apply_latency, exported.stages[2]),
        (&s.durable_latency, exported.stages[3]),
    ]) {
        histogram(&mut out, name, &format!("stage=\"{stage}\","), h, counts);
    }
    out
}

/// Microseconds as seconds, as Prometheus expects durations.
fn secs(us: u64) -> f64 {
    us as f64 / 1e6
}

/// One histogram's sample lines; `label` is empty or `key="value",` (before `le`).
fn histogram(
    out: &mut String,
    name: &str,
    label: &str,
    h: &Option<v1::LatencyHistogram>,
    counts: [u64; BOUNDS_US.len()],
) {
    let h = h.clone().unwrap_or_default();
    let mut cumulated = 0u64;
    for (bound, c) in BOUNDS_US.iter().zip(counts) {
        cumulated += c;
        let _ = writeln!(
            out,
            "{name}_bucket{{{label}le=\"{}\"}} {cumulated}",
            secs(*bound)
        );
    }
    let _ = writeln!(out, "{name}_bucket{{{label}le=\"+Inf\"}} {}", h.count);
    let braces = label.trim_end_matches(',');
    let labels = if braces.is_empty() {
        String::new()
    } else {
        format!("{{{braces}}}")
    };
    let _ = writeln!(out, "{name}_sum{labels} {}", secs(h.sum_us));
    let _ = writeln!(out, "{name}_count{labels} {}", h.count);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_follows_the_prometheus_format() {
        let s = crate::stats::IngestStats::new(Instant::now() - Duration::from_secs(3));
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
        let text = text(
            &s.to_proto(Instant::now()),
            41,
            false,
            s.exported(),
            Some((39, false)),
        );
        for want in [
            "# TYPE ledger_audit_position gauge\nledger_audit_position 39\n",
            "# TYPE ledger_audit_following gauge\nledger_audit_following 0\n",
            "# TYPE ledger_head_index gauge\nledger_head_index 41\n",
            "ledger_acknowledging 1\n",
            "# TYPE ledger_accepted_events_total counter\nledger_accepted_events_total 2\n",
            "ledger_groups_total 1\n",
            "ledger_slow_syncs_total 1\n",
            "ledger_sync_over_10ms_seconds_total 0.05\n",
            "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ",
            "# TYPE ledger_sync_latency_seconds histogram\n",
            "ledger_sync_latency_seconds_bucket{le=\"0.00025\"} 0\n",
            "ledger_sync_latency_seconds_bucket{le=\"0.0005\"} 1\n",
            "ledger_sync_latency_seconds_bucket{le=\"0.05\"} 1\n",
            "ledger_sync_latency_seconds_bucket{le=\"0.1\"} 2\n",
            "ledger_sync_latency_seconds_bucket{le=\"10\"} 2\n",
            "ledger_sync_latency_seconds_bucket{le=\"+Inf\"} 2\n",
            "ledger_sync_latency_seconds_sum 0.0604\n",
            "ledger_sync_latency_seconds_count 2\n",
            "ledger_receipt_latency_seconds_bucket{le=\"0.0001\"} 1\n",
            "ledger_receipt_latency_seconds_bucket{le=\"0.001\"} 1\n",
            "ledger_receipt_latency_seconds_bucket{le=\"0.0025\"} 2\n",
            "# TYPE ledger_stage_latency_seconds histogram\n",
            "ledger_stage_latency_seconds_bucket{stage=\"queued\",le=\"0.001\"} 1\n",
            "ledger_stage_latency_seconds_bucket{stage=\"queued\",le=\"0.0025\"} 2\n",
            "ledger_stage_latency_seconds_count{stage=\"queued\"} 2\n",
            "ledger_stage_latency_seconds_sum{stage=\"verify\"} 0\n",
            "ledger_stage_latency_seconds_bucket{stage=\"durable\",le=\"+Inf\"} 2\n",
        ] {
            assert!(text.contains(want), "{want:?} missing from:\n{text}");
        }
        // Every sample line is "name value" or "name{le=\"..\"} value", every metric typed.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
            let base = name.split('{').next().unwrap();
            let family = base
                .trim_end_matches("_bucket")
                .trim_end_matches("_sum")
                .trim_end_matches("_count");
            assert!(
                text.contains(&format!("# TYPE {family} ")),
                "{family} untyped"
            );
        }
        let stopped = super::text(&s.to_proto(Instant::now()), 41, true, s.exported(), None);
        assert!(stopped.contains("ledger_acknowledging 0\n"));
        assert!(
            !stopped.contains("ledger_audit_"),
            "no audit figures when the audit is off"
        );
    }

    #[test]
    fn only_get_and_head_of_metrics_are_answered() {
        let m = || "x 1\n".to_string();
        let status = |head: &[u8]| route(head, m).0;
        assert_eq!(status(b"GET /metrics HTTP/1.1\r\nHost: a"), "200 OK");
        assert_eq!(status(b"GET /metrics?x=1 HTTP/1.0"), "200 OK");
        assert!(matches!(route(b"HEAD /metrics HTTP/1.1", m).1, Body::HeadOnly(t) if t == "x 1\n"));
        assert_eq!(status(b"POST /metrics HTTP/1.1"), "405 Method Not Allowed");
        assert_eq!(status(b"GET / HTTP/1.1"), "404 Not Found");
        assert_eq!(status(b"GET /metrics/../x HTTP/1.1"), "404 Not Found");
        for bad in [
            &b""[..],
            b"GET /metrics",
            b"GET  /metrics HTTP/1.1",
            b"GET /metrics HTTP/2",
            b"\xff\xfe /metrics HTTP/1.1",
        ] {
            assert_eq!(status(bad), "400 Bad Request", "{bad:?}");
        }
    }
}
