//! `ledgerctl bench`: load test. Pre-signs every event before the clock starts (on this 2-core
//! machine the generator must not eat the server's CPU), streams them over N concurrent streams
//! (one device per stream), and reports accepted events/s and receipt latency (send to durable
//! receipt) p50/p90/p99/max, and on Linux how busy the machine's cores were over each run
//! ([`crate::cpu`]).
//!
//! With `--audit-lag` it streams simulated table rounds instead (`casino-sim`: one table of every
//! game, one stream per table, honest play) and measures the live audit's lag: for every round
//! settlement, the time from its durable receipt to the moment the live audit has committed it
//! (GetStatus polled every few milliseconds: its position reaches the settlement's index), p50 to
//! max.
//!
//! By default it starts an embedded ledger in a temporary directory (same process, its own
//! threads); `--server` targets a running ledgerd (then `--operator-key`/`--operator-id` sign the
//! bench devices' registrations).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use casino_play::session::{self, Keys, SignOptions};
use casino_play::sim;
use ledger_agent::DeviceSigner;
use ledger_core::proto::{
    self as v1, audit_client::AuditClient, event_body::Payload as P, ingest_client::IngestClient,
    query_client::QueryClient,
};
use ledger_core::receipt::compact;
use tokio_stream::StreamExt;

use crate::common;
use crate::cpu;
use crate::ingest_stats::{self, Span};
use crate::stalls::{StallProbe, Stalls};

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The embedded ledger serves TLS with client certificates instead of plaintext on loopback.
    #[arg(long)]
    pub tls: bool,
    /// Events in total (split evenly over the streams).
    #[arg(long, default_value_t = 200_000)]
    pub events: usize,
    /// Concurrent streams (one device each).
    #[arg(long, default_value_t = 8)]
    pub streams: usize,
    /// Target total rate in events/s; 0 = as fast as the ledger acknowledges.
    #[arg(long, default_value_t = 0)]
    pub rate: u64,
    /// After the peak run, run again at half the measured peak rate (the latency target's load).
    #[arg(long)]
    pub also_half: bool,
    /// A running ledgerd to load (default: an embedded ledger in a temporary directory).
    #[arg(long, value_name = "URL", requires_all = ["operator_key", "operator_id"])]
    pub server: Option<String>,
    /// With --server: worker threads of the load generator (docs/performance-history.md).
    #[arg(long, default_value_t = 1, value_name = "N", requires = "server",
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub client_threads: u16,
    /// Operator secret key file (with --server), to register the bench devices.
    #[arg(long, value_name = "FILE")]
    pub operator_key: Option<PathBuf>,
    /// Operator id (with --server).
    #[arg(long, value_name = "ID")]
    pub operator_id: Option<String>,
    /// With --server: stop unless the server keeps the ledger with this id (its `ledger_id`).
    #[arg(long, value_name = "ID", requires = "server")]
    pub expect_ledger_id: Option<String>,
    /// Embedded ledger: the group size (ingest.max_batch).
    #[arg(long, default_value_t = 2048)]
    pub max_batch: usize,
    /// Embedded ledger: ingest.coalesce_us, how long a small group may fill (0 = never wait).
    #[arg(long, default_value_t = ledgerd::config::Ingest::default().coalesce_us,
          value_name = "MICROSECONDS", conflicts_with = "server",
          value_parser = clap::value_parser!(u64).range(0..=ledgerd::config::MAX_COALESCE_US))]
    pub coalesce_us: u64,
    /// Embedded ledger: ingest.hold_us, how long a busy verifier holds a small group (0 = never).
    #[arg(long, default_value_t = ledgerd::config::Ingest::default().hold_us,
          value_name = "MICROSECONDS", conflicts_with = "server",
          value_parser = clap::value_parser!(u64).range(0..=ledgerd::config::MAX_COALESCE_US))]
    pub hold_us: u64,
    /// Embedded ledger: receipts without the ledger's signature (ingest.signed_receipts = false).
    #[arg(long, conflicts_with = "server")]
    pub unsigned_receipts: bool,
    /// Ask for full signed receipts, not compact ones (what a client that cannot expand gets).
    #[arg(long)]
    pub full_receipts: bool,
    /// Embedded ledger: keep its data in DIR (must not exist) instead of a temporary directory.
    #[arg(long, value_name = "DIR", conflicts_with = "server")]
    pub data_dir: Option<PathBuf>,
    /// Stream table rounds instead of slot games and measure the live audit's lag.
    #[arg(long)]
    pub audit_lag: bool,
    /// Before the measured runs, stream this many events and report them apart.
    #[arg(long, default_value_t = 0, value_name = "EVENTS")]
    pub warmup: usize,
    /// Also report receipt latency per window of SECONDS of send time.
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub timeline: Option<f64>,
    /// Also measure how often and how late the machine wakes a 1 ms sleeper (host pauses).
    #[arg(long)]
    pub stall_probe: bool,
    /// With --audit-lag: rounds played at each of the 16 tables (about 32 events a round).
    #[arg(long, default_value_t = 1500)]
    pub rounds: usize,
    /// Make the measured runs N times and report the median and range of each figure.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Also send N envelopes a second with spoiled signatures (an adversary's stream).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub spoiled_rate: u64,
    /// Also run N clients asking Audit.GetReport for all time in a loop (dashboards' cost).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub report_load: u32,
    /// Skip the signature ceiling measured after the runs (a --server on another machine).
    #[arg(long)]
    pub no_ceiling: bool,
}

/// The runtime the bench runs on: against --server, `--client-threads` workers for the load
/// generator alone; with the embedded ledger, one worker per core (the ledger's gRPC server runs
/// on it too).
pub fn runtime(a: &Args) -> anyhow::Result<tokio::runtime::Runtime> {
    if a.server.is_none() {
        return common::runtime();
    }
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(a.client_threads.into())
        .enable_all()
        .build()?)
}

/// `--timeline`'s window: a positive number of seconds.
fn positive_seconds(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.001 => Ok(s),
        _ => Err(format!(
            "{v:?} is not a number of seconds of at least 0.001"
        )),
    }
}

/// The `p` quantile (nearest rank) of sorted microseconds, in milliseconds; 0 when empty.
pub(crate) fn quantile_ms(sorted_us: &[u64], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let i = ((sorted_us.len() as f64 - 1.0) * p).round() as usize;
    sorted_us[i] as f64 / 1000.0
}

/// One receipt: when its envelope was sent (µs after the run's start) and its latency (µs).
type Sample = (u64, u64);

/// Receipt latency of the envelopes sent in one window of a run.
#[derive(Debug, PartialEq)]
struct Window {
    start_s: f64,
    receipts: usize,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

/// Receipt latency per window of `window_s` seconds of send time; windows without a receipt are
/// left out.
fn timeline(samples: &[Sample], window_s: f64) -> Vec<Window> {
    let width = (window_s * 1e6).max(1.0);
    let mut by: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for &(sent, lat) in samples {
        by.entry((sent as f64 / width) as u64)
            .or_default()
            .push(lat);
    }
    by.into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            Window {
                start_s: k as f64 * window_s,
                receipts: v.len(),
                p50_ms: quantile_ms(&v, 0.5),
                p99_ms: quantile_ms(&v, 0.99),
                max_ms: quantile_ms(&v, 1.0),
            }
        })
        .collect()
}

/// A timeline window of `w` seconds as a range of µs after the run's start.
fn window_us(win: &Window, w: f64) -> (u64, u64) {
    let from = (win.start_s * 1e6) as u64;
    (from, from + (w * 1e6).max(1.0) as u64)
}

/// What `--repeat` keeps of one measured run.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Outcome {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    /// The machine's busy share of its cores, percent (where it could be read).
    busy_percent: Option<f64>,
    /// Whether ledgerd's disk alone put a receipt p99 of 10 ms out of reach, where ledgerd says
    /// ([`Span::disk_denies_10ms_p99`]).
    disk_denied: Option<bool>,
}

impl Outcome {
    fn of(run: &Run) -> Outcome {
        Outcome {
            per_second: run.accepted as f64 / run.seconds,
            p50_ms: run.pct(0.5),
            p99_ms: run.pct(0.99),
            busy_percent: run.cpu.as_ref().map(|c| c.0.busy_percent()),
            disk_denied: run.ledger.as_ref().map(Span::disk_denies_10ms_p99),
        }
    }
}

/// Median, lowest and highest (see [`spread`]).
type Spread = (f64, f64, f64);

/// Median, lowest and highest of some values (the median of an even count is the mean of the
/// two middle ones); `None` when there are none.
fn spread(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = match n {
        0 => return None,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    };
    Some((median, v[0], v[n - 1]))
}

/// The repeated runs of one kind (`label`): a summary line and its JSON.
struct Repeated<'a> {
    label: &'a str,
    outcomes: Vec<Outcome>,
}

impl Repeated<'_> {
    fn parts(&self) -> Option<[(f64, f64, f64); 3]> {
        let o = &self.outcomes;
        Some([
            spread(o.iter().map(|x| x.per_second))?,
            spread(o.iter().map(|x| x.p50_ms))?,
            spread(o.iter().map(|x| x.p99_ms))?,
        ])
    }
    /// The machine's busy share over the runs, when every run could read it.
    fn busy(&self) -> Option<(f64, f64, f64)> {
        let busy: Option<Vec<f64>> = self.outcomes.iter().map(|o| o.busy_percent).collect();
        spread(busy?)
    }
    /// When ledgerd said for every run whether its disk alone put a p99 of 10 ms out of reach:
    /// in how many runs it did, and the p99's spread over the others (a receipt cannot come
    /// before the sync that covers it, so this tells the runs the disk decided from the rest).
    fn disk(&self) -> Option<(usize, Option<Spread>)> {
        let stalled: Option<Vec<bool>> = self.outcomes.iter().map(|o| o.disk_denied).collect();
        let stalled = stalled?;
        let calm = self
            .outcomes
            .iter()
            .zip(&stalled)
            .filter(|(_, s)| !**s)
            .map(|(o, _)| o.p99_ms);
        Some((stalled.iter().filter(|s| **s).count(), spread(calm)))
    }
    fn line(&self) -> Option<String> {
        let [r, p50, p99] = self.parts()?;
        let busy = self.busy().map_or(String::new(), |(m, lo, hi)| {
            format!("; this machine's cores busy median {m:.0}% ({lo:.0}% to {hi:.0}%)")
        });
        let n = self.outcomes.len();
        let disk = self.disk().map_or(String::new(), |(k, calm)| {
            let others = calm.map_or(String::new(), |(m, lo, hi)| {
                format!(
                    "; p99 median of the other {} runs {m:.2} ms ({lo:.2} to {hi:.2})",
                    n - k
                )
            });
            format!(
                "; ledgerd's disk alone put a p99 of 10 ms out of reach (a sync running over 10 ms \
                 for more than 1% of the run) in {k} of {n} runs{others}"
            )
        });
        Some(format!(
            "{} over {} runs: {:.0} events/s (median; {:.0} to {:.0}); receipt latency p50 median {:.2} ms ({:.2} to {:.2}), p99 median {:.2} ms ({:.2} to {:.2}){busy}{disk}",
            self.label,
            self.outcomes.len(),
            r.0,
            r.1,
            r.2,
            p50.0,
            p50.1,
            p50.2,
            p99.0,
            p99.1,
            p99.2
        ))
    }
    fn json(&self) -> Option<serde_json::Value> {
        let [r, p50, p99] = self.parts()?;
        let m = |(median, min, max): (f64, f64, f64)| serde_json::json!({"median": median, "min": min, "max": max});
        let mut v = serde_json::json!({
            "summary": self.label, "runs": self.outcomes.len(),
            "accepted_per_second": m(r),
            "latency_ms": {"p50": m(p50), "p99": m(p99)},
        });
        if let Some(b) = self.busy() {
            v["busy_percent"] = m(b);
        }
        if let Some((k, calm)) = self.disk() {
            v["runs_the_disk_denied_a_10ms_p99"] = k.into();
            if let Some(c) = calm {
                v["p99_ms_of_the_other_runs"] = m(c);
            }
        }
        Some(v)
    }
}

#[derive(Default)]
struct Run {
    accepted: u64,
    other: u64,
    seconds: f64,
    /// Sorted once the run is over.
    latencies_us: Vec<u64>,
    samples: Vec<Sample>,
    /// `--timeline`'s window, seconds.
    window_s: Option<f64>,
    /// `--stall-probe`'s findings.
    stalls: Option<Stalls>,
    /// The CPU used over the run, and what "this process" is (where /proc could be read).
    cpu: Option<(cpu::Use, &'static str)>,
    /// ledgerd's own figures over the run (where it gives them).
    ledger: Option<Span>,
    /// `--spoiled-rate`: the adversary's envelopes sent, and those refused as bad signatures.
    spoiled: Option<(u64, u64)>,
    /// `--report-load`: reports answered, and their mean time.
    reports: Option<(u64, Duration)>,
}

impl Run {
    fn new(window_s: Option<f64>) -> Run {
        Run {
            window_s,
            ..Default::default()
        }
    }
    /// A stream's counts and receipts.
    fn add(&mut self, accepted: u64, other: u64, samples: Vec<Sample>) {
        self.accepted += accepted;
        self.other += other;
        self.latencies_us.extend(samples.iter().map(|s| s.1));
        self.samples.extend(samples);
    }
    /// Every stream is in: the run took from `start` until now.
    fn finish(&mut self, start: Instant) {
        self.seconds = start.elapsed().as_secs_f64();
        self.latencies_us.sort_unstable();
    }
    fn pct(&self, p: f64) -> f64 {
        quantile_ms(&self.latencies_us, p)
    }
    fn json(&self, label: &str, target: u64) -> serde_json::Value {
        let mut v = serde_json::json!({
            "run": label, "target_rate": target, "accepted": self.accepted, "not_accepted": self.other,
            "seconds": self.seconds, "accepted_per_second": self.accepted as f64 / self.seconds,
            "latency_ms": {"p50": self.pct(0.5), "p90": self.pct(0.9), "p99": self.pct(0.99), "max": self.pct(1.0)},
        });
        if let Some(w) = self.window_s {
            v["timeline"] = timeline(&self.samples, w)
                .iter()
                .map(|win| {
                    let mut j = serde_json::json!({
                        "start_s": win.start_s, "receipts": win.receipts,
                        "latency_ms": {"p50": win.p50_ms, "p99": win.p99_ms, "max": win.max_ms},
                    });
                    if let Some(st) = &self.stalls {
                        let (from, to) = window_us(win, w);
                        j["worst_stall_ms"] = st.max_ms_between(from, to).into();
                    }
                    j
                })
                .collect();
        }
        if let Some(st) = &self.stalls {
            v["stalls"] = st.json();
        }
        if let Some((u, _)) = &self.cpu {
            v["cpu"] = u.json();
        }
        if let Some(l) = &self.ledger {
            v["ledgerd"] = l.json();
        }
        if let Some((sent, refused)) = self.spoiled {
            v["spoiled"] = serde_json::json!({"sent": sent, "refused_bad_signature": refused});
        }
        if let Some((n, mean)) = self.reports {
            v["reports"] = serde_json::json!({"answered": n, "mean_ms": mean.as_secs_f64() * 1e3});
        }
        v
    }
    /// The summary line, then with `--timeline` a line per window.
    fn line(&self, label: &str) -> String {
        let mut out = format!(
            "{label}: {} accepted in {:.2} s = {:.0} events/s; receipt latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms{}",
            self.accepted,
            self.seconds,
            self.accepted as f64 / self.seconds,
            self.pct(0.5),
            self.pct(0.9),
            self.pct(0.99),
            self.pct(1.0),
            if self.other > 0 {
                format!(" ({} NOT accepted)", self.other)
            } else {
                String::new()
            }
        );
        if let Some((u, process)) = &self.cpu {
            out.push_str(&format!("\n  {}", u.line(process)));
        }
        if let Some(l) = &self.ledger {
            out.push_str(&format!("\n  {}", l.line()));
            if let Some(st) = l.stages_line() {
                out.push_str(&format!("\n  {st}"));
            }
        }
        if let Some(st) = &self.stalls {
            out.push_str(&format!("\n  {}", st.line()));
        }
        if let Some((sent, refused)) = self.spoiled {
            out.push_str(&format!(
                "\n  adversary: {sent} envelopes with spoiled signatures sent, {refused} refused as bad signatures{}",
                if refused < sent { " (the rest unanswered when the run ended)" } else { "" }
            ));
        }
        if let Some((n, mean)) = self.reports {
            out.push_str(&format!(
                "\n  report load: {n} all-time reports answered, {:.1} ms each on average",
                mean.as_secs_f64() * 1e3
            ));
        }
        if let Some(w) = self.window_s {
            for win in timeline(&self.samples, w) {
                out.push_str(&format!(
                    "\n  sent {:>7.2}-{:<7.2} s: {:>7} receipts, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                    win.start_s,
                    win.start_s + w,
                    win.receipts,
                    win.p50_ms,
                    win.p99_ms,
                    win.max_ms
                ));
                if let Some(st) = &self.stalls {
                    let (from, to) = window_us(&win, w);
                    let worst = st.max_ms_between(from, to);
                    if worst > 0.0 {
                        out.push_str(&format!(", machine stalled up to {worst:.1} ms"));
                    }
                }
            }
        }
        out
    }
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    if !a.audit_lag && (a.streams == 0 || a.events < a.streams) {
        bail!("--events must be at least --streams, and --streams at least 1");
    }
    let (url, operator, op_id, server, tmp) = match &a.server {
        Some(url) => {
            let key = ledger_agent::keys::read_secret(
                a.operator_key.as_ref().context("--operator-key")?,
            )?;
            (
                url.clone(),
                key,
                a.operator_id.clone().context("--operator-id")?,
                None,
                None,
            )
        }
        None => {
            let op = ledger_agent::keys::generate();
            let tmp = match &a.data_dir {
                Some(d) if d.exists() => bail!("--data-dir {} already exists", d.display()),
                Some(d) => d.clone(),
                None => std::env::temp_dir().join(format!(
                    "ledger-bench-{}-{}",
                    std::process::id(),
                    chrono::Utc::now().timestamp_millis()
                )),
            };
            let mut cfg = ledgerd::Config {
                listen: "127.0.0.1:0".parse()?,
                ..Default::default()
            };
            cfg.ingest.max_batch = a.max_batch;
            cfg.ingest.coalesce_us = a.coalesce_us;
            cfg.ingest.hold_us = a.hold_us;
            cfg.ingest.signed_receipts = !a.unsigned_receipts;
            cfg.ingest.coalesce_events = cfg.ingest.coalesce_events.min(a.max_batch);
            cfg.checkpoint.interval_secs = 0;
            cfg.principals = vec![ledgerd::config::PrincipalEntry {
                id: "bench-operator".into(),
                role: "operator".into(),
                public_key: hex::encode(op.verifying_key().as_bytes()),
            }];
            let scheme = if a.tls {
                let pki = tmp.join("pki");
                crate::pki::create_ca(&pki, "bench CA", 1)?;
                let (c, k) = crate::pki::issue_server(&pki, "ledgerd", &["127.0.0.1".into()], 1)?;
                let (cc, ck) = crate::pki::issue_client(&pki, "bench-client", 1)?;
                cfg.tls.cert_chain = Some(c);
                cfg.tls.key = Some(k);
                cfg.tls.client_ca = vec![pki.join("ca.pem")];
                cfg.clients = vec![ledgerd::config::ClientEntry {
                    name: "bench-client".into(),
                    role: "regulator".into(),
                    casinos: vec![],
                    fingerprint: crate::pki::fingerprint(&cc)?,
                }];
                if !ledger_agent::tls::set_default(ledger_agent::tls::ClientTls::from_files(
                    &pki.join("ca.pem"),
                    Some(&cc),
                    Some(&ck),
                )?) {
                    bail!(
                        "bench --tls makes its own certificates: run it without --tls-ca/--tls-cert/--tls-key"
                    );
                }
                "https"
            } else {
                cfg.tls.plaintext = true;
                "http"
            };
            let s = ledgerd::Server::start(cfg, tmp.clone(), ledgerd::Init::Create).await?;
            (
                format!("{scheme}://{}", s.addr),
                op,
                "bench-operator".to_string(),
                Some(s),
                Some(tmp),
            )
        }
    };
    let head = QueryClient::new(common::channel(&url).await?)
        .get_head(v1::GetHeadRequest {})
        .await
        .with_context(|| format!("cannot read the head of the ledger at {url}"))?
        .into_inner();
    if let Some(want) = &a.expect_ledger_id
        && &head.ledger_id != want
    {
        bail!(
            "the server at {url} keeps ledger {:?}, not {want:?} (--expect-ledger-id)",
            head.ledger_id
        );
    }
    if !json {
        eprintln!(
            "bench: ledger {:?} at {url}, {} entries, key {}",
            head.ledger_id,
            head.length,
            hex::encode(&head.ledger_public_key)
        );
    }
    let mut out = Vec::new();
    let first = if a.rate == 0 { "peak" } else { "rate-limited" };
    let (mut firsts, mut halves) = (Vec::new(), Vec::new());
    if a.warmup > 0 && !a.audit_lag {
        let w = Args {
            events: a.warmup.max(a.streams),
            ..a.clone()
        };
        let warm = one_run(&url, &operator, &op_id, &w, a.rate, "warm-up", json).await?;
        if !json {
            println!("{}", warm.line("warm-up (not counted)"));
        }
    }
    // A measured run at `rate` (table rounds with --audit-lag, slot games otherwise), named
    // (kind, label in the text line, label in the JSON): its line, its JSON and the run.
    let measured = async |rate: u64, (kind, shown, label): (&str, &str, &str)| {
        anyhow::Ok(if a.audit_lag {
            let r = lag_run(&url, &operator, &op_id, &a, rate, kind, json).await?;
            (r.line(shown), r.json(label, rate), r.run)
        } else {
            let r = one_run(&url, &operator, &op_id, &a, rate, kind, json).await?;
            (r.line(shown), r.json(label, rate), r)
        })
    };
    for rep in 1..=a.repeat {
        // With --repeat, each run's line and JSON say which run it was.
        let of = |label: &str| {
            if a.repeat > 1 {
                format!("{label} [run {rep} of {}]", a.repeat)
            } else {
                label.to_string()
            }
        };
        let mut report = |line: String, mut j: serde_json::Value| {
            if !json {
                println!("{line}");
            }
            if a.repeat > 1 {
                j["repeat"] = rep.into();
            }
            out.push(j);
        };
        let (line, j, peak) = measured(a.rate, ("peak", &of(first), first)).await?;
        report(line, j);
        firsts.push(Outcome::of(&peak));
        if a.also_half {
            let half_rate = (Outcome::of(&peak).per_second / 2.0).max(1.0) as u64;
            let shown = of(&format!("half load ({half_rate} events/s offered)"));
            let (line, j, half) = measured(half_rate, ("half", &shown, "half")).await?;
            report(line, j);
            halves.push(Outcome::of(&half));
        }
    }
    // The first runs' median rate (the peak's, unless --rate limited them).
    let peak = spread(firsts.iter().map(|o| o.per_second)).map_or(0.0, |(median, _, _)| median);
    if a.repeat > 1 {
        if a.rate == 0 {
            // A peak run's latency is its own queue's (it offers more than the ledger takes):
            // what the disk did is no excuse for it, and its summary says nothing of it.
            firsts.iter_mut().for_each(|o| o.disk_denied = None);
        }
        for r in [
            Repeated {
                label: first,
                outcomes: firsts,
            },
            Repeated {
                label: "half load",
                outcomes: halves,
            },
        ] {
            if let (Some(line), Some(j)) = (r.line(), r.json()) {
                if !json {
                    println!("{line}");
                }
                out.push(j);
            }
        }
    }
    // The machine's own limit, measured once the loads are over, and the peak against it.
    if !a.no_ceiling && !a.audit_lag {
        let c = tokio::task::spawn_blocking(|| {
            crate::ceiling::Ceiling::measure(crate::ceiling::cores(), Duration::from_secs(2))
        })
        .await??;
        if !json {
            println!("{}", c.line(peak));
        }
        out.push(c.json(peak));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    if let Some(s) = server {
        s.stop().await?;
    }
    if let (Some(t), None) = (tmp, &a.data_dir) {
        let _ = std::fs::remove_dir_all(t);
    }
    Ok(0)
}

async fn one_run(
    url: &str,
    operator: &ed25519_dalek::SigningKey,
    op_id: &str,
    a: &Args,
    rate: u64,
    label: &str,
    json: bool,
) -> anyhow::Result<Run> {
    let ch = common::channel(url).await?;
    let op_seq = QueryClient::new(ch.clone())
        .get_device(v1::GetDeviceRequest {
            device_id: op_id.into(),
        })
        .await?
        .into_inner()
        .last_sequence;
    let mut op = DeviceSigner::new(op_id, operator.clone(), op_seq + 1);
    let now = chrono::Utc::now().timestamp_millis();
    let tag = format!("{}-{label}", now);
    let keys: Vec<_> = (0..a.streams)
        .map(|_| ledger_agent::keys::generate())
        .collect();
    let regs: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            op.sign(
                now,
                casino_play::registration(
                    &sim::DeviceSpec {
                        device_id: format!("bench-{tag}-{i}"),
                        kind: ledger_core::DeviceKind::Machine,
                        casino_id: "bench".into(),
                        table_ids: vec![],
                        machine_id: String::new(),
                        model_id: "BENCH".into(),
                        bet_values_cents: vec![100],
                        description: String::new(),
                    },
                    &k.verifying_key(),
                ),
            )
        })
        .collect();
    let r = ledger_agent::submit_all(url, &regs, &Default::default()).await?;
    if let Some(bad) = r.iter().find(|r| common::status_name(r) != "accepted") {
        bail!(
            "bench device registration refused: {}",
            common::receipt_line(bad)
        );
    }
    // Pre-sign everything, on both cores, before the clock starts.
    let per = a.events / a.streams;
    if !json {
        eprintln!(
            "{label}: signing {} events for {} streams...",
            per * a.streams,
            a.streams
        );
    }
    let signed: Vec<Vec<v1::Envelope>> = std::thread::scope(|s| {
        let hs: Vec<_> = keys
            .chunks(a.streams.div_ceil(2))
            .enumerate()
            .map(|(c, chunk)| {
                let tag = tag.clone();
                s.spawn(move || {
                    chunk
                        .iter()
                        .enumerate()
                        .map(|(j, k)| {
                            let i = c * a.streams.div_ceil(2) + j;
                            let id = format!("bench-{tag}-{i}");
                            let mut d = DeviceSigner::new(&id, k.clone(), 1);
                            (0..per as u64)
                                .map(|g| {
                                    d.sign(
                                        now,
                                        P::GamePlayed(v1::GamePlayed {
                                            machine_id: id.clone(),
                                            game_number: g + 1,
                                            wager_cents: 100,
                                            win_cents: if g % 7 == 0 { 500 } else { 0 },
                                        }),
                                    )
                                })
                                .collect::<Vec<_>>()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("signing thread"))
            .collect()
    });
    let per_stream_rate = if rate == 0 {
        0.0
    } else {
        rate as f64 / a.streams as f64
    };
    let spoiled = signed[0].last().cloned().map(|mut e| {
        // A byte in the middle of s: still canonical (its top byte is unchanged).
        e.signature[40] ^= 1;
        e
    });
    let clock = Clock::new(signed.len());
    let mut tasks = Vec::new();
    for envs in signed {
        let ch = ch.clone();
        tasks.push(tokio::spawn(stream(
            ch,
            Arc::new(envs),
            per_stream_rate,
            clock.clone(),
            Vec::new(),
            !a.full_receipts,
        )));
    }
    let ledger_at_start = ingest_stats::fetch(&ch).await?;
    let start = clock.start().await;
    let cpu_at_start = cpu::Snapshot::now();
    let probe = a
        .stall_probe
        .then(|| StallProbe::start(start))
        .transpose()?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let adversary = match spoiled {
        Some(env) if a.spoiled_rate > 0 => Some(tokio::spawn(adversary(
            ch.clone(),
            env,
            a.spoiled_rate,
            start,
            stopped,
        ))),
        _ => None,
    };
    let reporters: Vec<_> = (0..a.report_load)
        .map(|_| tokio::spawn(report_loop(ch.clone(), stop.subscribe())))
        .collect();
    let mut run = Run::new(a.timeline);
    for t in tasks {
        let (acc, other, samples, _) = t.await??;
        run.add(acc, other, samples);
    }
    run.finish(start);
    let _ = stop.send(true);
    if !reporters.is_empty() {
        let (mut n, mut took) = (0u64, Duration::ZERO);
        for r in reporters {
            let (k, t) = r.await??;
            n += k;
            took += t;
        }
        run.reports = Some((n, took / n.max(1) as u32));
    }
    if let Some(t) = adversary {
        run.spoiled = Some(t.await??);
    }
    run.cpu = cpu_used(cpu_at_start, a);
    run.stalls = probe.map(StallProbe::finish);
    run.ledger = ledger_span(&ch, ledger_at_start).await?;
    Ok(run)
}

/// ledgerd's figures from `at_start` (`None`: it does not give them) until now.
async fn ledger_span(
    ch: &tonic::transport::Channel,
    at_start: Option<v1::IngestStats>,
) -> anyhow::Result<Option<Span>> {
    let Some(before) = at_start else {
        return Ok(None);
    };
    let after = ingest_stats::fetch(ch).await?;
    Ok(after.map(|a| Span::between(&before, &a)))
}

/// The receipt of a marked envelope: its ledger index and when it arrived.
type Mark = (u64, Instant);

/// The clock of a run starts once every stream is open. (Started before, the first envelopes of
/// every stream counted the opening of their gRPC stream as receipt latency.)
#[derive(Clone)]
struct Clock {
    open: Arc<tokio::sync::Barrier>,
    start: Arc<std::sync::OnceLock<Instant>>,
}

impl Clock {
    /// A clock for `streams` streams and the run that waits for them.
    fn new(streams: usize) -> Clock {
        Clock {
            open: Arc::new(tokio::sync::Barrier::new(streams + 1)),
            start: Arc::default(),
        }
    }

    /// Once every stream and the run have called it: the start, the same for all.
    async fn start(&self) -> Instant {
        self.open.wait().await;
        *self.start.get_or_init(Instant::now)
    }
}

async fn stream<E: ledger_agent::Envelopes>(
    ch: tonic::transport::Channel,
    envs: Arc<E>,
    rate: f64,
    clock: Clock,
    marks: Vec<usize>,
    compact_receipts: bool,
) -> anyhow::Result<(u64, u64, Vec<Sample>, Vec<Mark>)> {
    let n = envs.count();
    let sent: Arc<Mutex<VecDeque<Instant>>> = Arc::new(Mutex::new(VecDeque::with_capacity(n)));
    let (tx, rx) = tokio::sync::mpsc::channel::<v1::Envelope>(1024);
    let mut client = IngestClient::new(ch);
    // The ledger answers the call at once, so this is the stream open; the clock starts when
    // every stream is (also when this one failed to open, so that the others are not held up).
    // Compact receipts, made whole as they arrive, as the agent library does.
    let mut request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    if compact_receipts {
        request.metadata_mut().insert(
            compact::HEADER,
            tonic::metadata::MetadataValue::from_static(compact::COMPACT),
        );
    }
    let opened = client.submit(request).await;
    let mut expander = compact::Expander::default();
    let start = clock.start().await;
    let mut receipts = opened?.into_inner();
    let sent2 = sent.clone();
    let sender = tokio::spawn(async move {
        for i in 0..n {
            if rate > 0.0 {
                let due = start + Duration::from_secs_f64(i as f64 / rate);
                let now = Instant::now();
                if due > now + Duration::from_micros(500) {
                    tokio::time::sleep_until(due.into()).await;
                }
            }
            sent2.lock().expect("lock").push_back(Instant::now());
            if tx.send(envs.envelope(i)).await.is_err() {
                return;
            }
        }
    });
    let (mut acc, mut other) = (0u64, 0u64);
    let mut lat = Vec::with_capacity(n);
    let mut marked = Vec::with_capacity(marks.len());
    let mut next_mark = marks.into_iter().peekable();
    let mut i = 0usize;
    while let Some(r) = receipts.next().await {
        let mut r = r?;
        expander.expand(&mut r)?;
        let now = Instant::now();
        if let Some(t) = sent.lock().expect("lock").pop_front() {
            lat.push((
                t.saturating_duration_since(start).as_micros() as u64,
                now.duration_since(t).as_micros() as u64,
            ));
        }
        if r.status == v1::ReceiptStatus::Accepted as i32 {
            acc += 1;
        } else {
            other += 1;
        }
        if next_mark.peek() == Some(&i) {
            next_mark.next();
            marked.push((r.index, now));
        }
        i += 1;
        if (acc + other) as usize == n {
            break;
        }
    }
    sender.abort();
    Ok((acc, other, lat, marked))
}

/// `--report-load`: all-time reports, one after another, until `stop`. Returns how many were
/// answered and the time they took together.
async fn report_loop(
    ch: tonic::transport::Channel,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<(u64, Duration)> {
    let mut audit =
        ledger_core::proto::audit_client::AuditClient::new(ch).max_decoding_message_size(64 << 20);
    let (mut n, mut took) = (0u64, Duration::ZERO);
    loop {
        let t = Instant::now();
        let req = v1::ReportRequest {
            from_ms: Some(0),
            to_ms: Some(chrono::Utc::now().timestamp_millis()),
            ..Default::default()
        };
        tokio::select! {
            r = audit.get_report(req) => {
                r.map_err(|s| anyhow::anyhow!("report load: {}", s.message()))?;
                n += 1;
                took += t.elapsed();
            }
            _ = stop.changed() => return Ok((n, took)),
        }
    }
}

/// `--spoiled-rate`: copies of `env` (its signature spoiled) on a stream of their own, `rate` a
/// second from `start` until `stop`. Returns the envelopes sent and those refused as bad
/// signatures; any other receipt is an error (the ledger must never accept one).
async fn adversary(
    ch: tonic::transport::Channel,
    env: v1::Envelope,
    rate: u64,
    start: Instant,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<(u64, u64)> {
    let (tx, rx) = tokio::sync::mpsc::channel::<v1::Envelope>(1024);
    let mut receipts = IngestClient::new(ch)
        .submit(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sent2 = sent.clone();
    let mut stop2 = stop.clone();
    let sender = tokio::spawn(async move {
        for i in 0u64.. {
            let due = start + Duration::from_secs_f64(i as f64 / rate as f64);
            tokio::select! {
                _ = tokio::time::sleep_until(due.into()) => {}
                _ = stop2.changed() => return,
            }
            if tx.send(env.clone()).await.is_err() {
                return;
            }
            sent2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let mut refused = 0u64;
    loop {
        tokio::select! {
            r = receipts.next() => match r {
                Some(r) => {
                    let r = r?;
                    if r.reason != v1::RejectReason::BadSignature as i32 {
                        bail!("an envelope with a spoiled signature got {}", common::receipt_line(&r));
                    }
                    refused += 1;
                }
                None => break,
            },
            _ = stop.changed() => break,
        }
    }
    sender.abort();
    Ok((sent.load(std::sync::atomic::Ordering::Relaxed), refused))
}

/// The CPU used since `at_start` (the run's clock start), with what "this process" holds.
fn cpu_used(at_start: Option<cpu::Snapshot>, a: &Args) -> Option<(cpu::Use, &'static str)> {
    let used = cpu::Snapshot::now()?.since(&at_start?)?;
    let process = if a.server.is_some() {
        "this process (the load generator)"
    } else {
        "this process (the load generator and the embedded ledger)"
    };
    Some((used, process))
}

/// A run of `--audit-lag`.
struct LagRun {
    run: Run,
    rounds: usize,
    tables: usize,
    /// Settlement receipt to the live audit's commit, µs, sorted.
    lags_us: Vec<u64>,
}

impl LagRun {
    fn lag(&self, p: f64) -> f64 {
        quantile_ms(&self.lags_us, p)
    }
    fn line(&self, label: &str) -> String {
        format!(
            "{}\n  {} rounds at {} tables ({:.0} rounds/s); live audit lag (settlement receipt -> committed by the audit) over {} settlements: p50 {:.0} ms, p90 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
            self.run.line(label),
            self.rounds,
            self.tables,
            self.rounds as f64 / self.run.seconds,
            self.lags_us.len(),
            self.lag(0.5),
            self.lag(0.9),
            self.lag(0.99),
            self.lag(1.0)
        )
    }
    fn json(&self, label: &str, target: u64) -> serde_json::Value {
        let mut v = self.run.json(label, target);
        v["rounds"] = self.rounds.into();
        v["tables"] = self.tables.into();
        v["rounds_per_second"] = (self.rounds as f64 / self.run.seconds).into();
        v["audit_lag_ms"] = serde_json::json!({
            "settlements": self.lags_us.len(),
            "p50": self.lag(0.5), "p90": self.lag(0.9), "p99": self.lag(0.99), "max": self.lag(1.0),
        });
        v
    }
}

/// The standard session's tables only (honest, no slot floor), with ids tagged so that every
/// run has tables and devices of its own.
fn tables_plan(rounds: usize, operator_id: &str, tag: &str) -> sim::SessionPlan {
    let mut plan = sim::standard_plan(2026, 0, rounds, false, operator_id, "inspectorate");
    plan.floor = Default::default();
    plan.hit_odds.clear();
    for t in &mut plan.tables {
        t.table_id = format!("{tag}-{}", t.table_id);
        t.device_id = format!("dev-{}", t.table_id);
        t.config.table_id = Some(t.table_id.clone());
        if let Some(j) = t.config.jackpot.as_mut() {
            j.pool_id = Some(format!("TJP-{}", t.table_id));
        }
    }
    plan
}

async fn lag_run(
    url: &str,
    operator: &ed25519_dalek::SigningKey,
    op_id: &str,
    a: &Args,
    rate: u64,
    label: &str,
    json: bool,
) -> anyhow::Result<LagRun> {
    let ch = common::channel(url).await?;
    let op_seq = QueryClient::new(ch.clone())
        .get_device(v1::GetDeviceRequest {
            device_id: op_id.into(),
        })
        .await?
        .into_inner()
        .last_sequence;
    let now = chrono::Utc::now().timestamp_millis();
    let tag = format!("B{}{}", now % 100_000, &label[..1]);
    let plan = tables_plan(a.rounds, op_id, &tag);
    if !json {
        eprintln!(
            "{label}: simulating and signing {} rounds at {} tables...",
            a.rounds * plan.tables.len(),
            plan.tables.len()
        );
    }
    let (session, signed) = {
        let (operator, op_id) = (operator.clone(), op_id.to_string());
        tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            let session = sim::generate(&plan)?;
            let keys = Keys::derive(now as u64, &session.devices, &[(&op_id, &operator)], &op_id);
            let signed = session::sign_session(
                &session,
                &keys,
                &SignOptions {
                    offset_ms: now - session.end_ms - 60_000,
                    registered_at_ms: now - session.end_ms - 60_000,
                    operator_next_sequence: op_seq + 1,
                    threads: 0,
                },
            )?;
            Ok((session, signed))
        })
        .await??
    };
    let opts = ledger_agent::ClientOptions::default();
    let r = ledger_agent::submit_all(url, &signed.registrations, &opts).await?;
    if let Some(bad) = session::first_refused(&r) {
        bail!("registration refused: {}", common::receipt_line(bad));
    }
    let r = ledger_agent::submit_shared(url, signed.opening.envelopes.clone(), &opts).await?;
    if let Some(bad) = session::first_refused(&r) {
        bail!("opening refused: {}", common::receipt_line(bad));
    }
    // Poll the live audit's committed position.
    let samples: Arc<Mutex<Vec<(Instant, i64)>>> = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let poller = {
        let (ch, samples, stop) = (ch.clone(), samples.clone(), stop.clone());
        tokio::spawn(async move {
            let mut c = AuditClient::new(ch);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(s) = c.get_status(v1::AuditStatusRequest {}).await {
                    samples
                        .lock()
                        .expect("lock")
                        .push((Instant::now(), s.into_inner().position));
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    let streams = signed.groups.len();
    let total = signed
        .groups
        .iter()
        .map(|g| g.envelopes.len())
        .sum::<usize>()
        .max(1);
    let clock = Clock::new(signed.groups.len());
    let mut tasks = Vec::new();
    for g in &signed.groups {
        // Each table's share of the rate is its share of the events: the streams end together.
        let stream_rate = rate as f64 * g.envelopes.len() as f64 / total as f64;
        tasks.push(tokio::spawn(stream(
            ch.clone(),
            g.envelopes.clone(),
            stream_rate,
            clock.clone(),
            g.settlements.clone(),
            !a.full_receipts,
        )));
    }
    let ledger_at_start = ingest_stats::fetch(&ch).await?;
    let start = clock.start().await;
    let cpu_at_start = cpu::Snapshot::now();
    let probe = a
        .stall_probe
        .then(|| StallProbe::start(start))
        .transpose()?;
    let mut run = Run::new(a.timeline);
    let mut marks = Vec::new();
    for t in tasks {
        let (acc, other, samples, mut m) = t.await??;
        run.add(acc, other, samples);
        marks.append(&mut m);
    }
    run.finish(start);
    run.cpu = cpu_used(cpu_at_start, a);
    run.stalls = probe.map(StallProbe::finish);
    run.ledger = ledger_span(&ch, ledger_at_start).await?;
    // Wait for the audit to commit the last settlement.
    let last = marks.iter().map(|m| m.0).max().unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let reached = samples
            .lock()
            .expect("lock")
            .last()
            .is_some_and(|(_, p)| *p >= last as i64);
        if reached {
            break;
        }
        if Instant::now() > deadline {
            bail!("the live audit did not reach entry {last} within 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = poller.await;
    let samples = samples.lock().expect("lock").clone();
    let mut lags_us: Vec<u64> = marks
        .iter()
        .map(|(index, received)| {
            let i = samples.partition_point(|(_, p)| *p < *index as i64);
            samples.get(i).map_or(u64::MAX, |(t, _)| {
                t.saturating_duration_since(*received).as_micros() as u64
            })
        })
        .collect();
    lags_us.sort_unstable();
    Ok(LagRun {
        run,
        rounds: session.rounds,
        tables: streams,
        lags_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        bench: Args,
    }

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench").chain(args.iter().copied())).map(|c| c.bench)
    }

    #[test]
    fn the_load_generator_runs_on_client_threads_only_against_a_server() {
        let server = [
            "--server",
            "http://127.0.0.1:1",
            "--operator-key",
            "k",
            "--operator-id",
            "o",
        ];
        let a = parse(&server).expect("parses");
        assert_eq!(a.client_threads, 1, "one worker by default");
        assert_eq!(runtime(&a).expect("runtime").metrics().num_workers(), 1);
        let a = parse(&[&server[..], &["--client-threads", "3"]].concat()).expect("parses");
        assert_eq!(runtime(&a).expect("runtime").metrics().num_workers(), 3);
        for bad in ["0", "257", "x"] {
            let Err(e) = parse(&[&server[..], &["--client-threads", bad]].concat()) else {
                panic!("--client-threads {bad} accepted");
            };
            assert!(e.to_string().contains("--client-threads"), "{e}");
        }
        // The embedded ledger runs its server on the bench's runtime: one worker per core.
        assert!(parse(&["--client-threads", "1"]).is_err(), "needs --server");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let a = parse(&[]).expect("parses");
        assert_eq!(runtime(&a).expect("runtime").metrics().num_workers(), cores);
    }

    #[test]
    fn quantiles_are_nearest_rank_in_milliseconds() {
        let v: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(quantile_ms(&v, 0.5), 51.0); // rank round(99 * 0.5) = 50 (0-based)
        assert_eq!(quantile_ms(&v, 0.99), 99.0);
        assert_eq!(quantile_ms(&v, 1.0), 100.0);
        assert_eq!(quantile_ms(&v, 0.0), 1.0);
        assert_eq!(quantile_ms(&[], 0.99), 0.0);
    }

    #[test]
    fn the_timeline_groups_receipts_by_send_time() {
        // Window 0: latencies 1..=100 ms; window 2: one 40 ms receipt; nothing sent in window 1.
        let mut samples: Vec<Sample> = (1..=100).map(|i| (i * 9_000, i * 1000)).collect();
        samples.push((2_500_000, 40_000));
        samples.reverse(); // the order they arrive in does not matter
        let t = timeline(&samples, 1.0);
        assert_eq!(
            t,
            vec![
                Window {
                    start_s: 0.0,
                    receipts: 100,
                    p50_ms: 51.0,
                    p99_ms: 99.0,
                    max_ms: 100.0
                },
                Window {
                    start_s: 2.0,
                    receipts: 1,
                    p50_ms: 40.0,
                    p99_ms: 40.0,
                    max_ms: 40.0
                },
            ]
        );
        // Narrower windows split the first second: every receipt is counted once.
        let t = timeline(&samples, 0.25);
        assert_eq!(t.iter().map(|w| w.receipts).sum::<usize>(), 101);
        assert_eq!(t[0].start_s, 0.0);
        assert_eq!(t[0].receipts, 27); // sent at 9, 18, ..., 243 ms
        assert_eq!(t.last().map(|w| w.start_s), Some(2.5));
    }

    /// A finished run of two receipts, sent at 0 and 1.2 s, with these latencies (µs).
    fn two_receipts(window_s: Option<f64>, latencies_us: [u64; 2]) -> Run {
        let mut run = Run::new(window_s);
        run.add(
            2,
            0,
            vec![(0, latencies_us[0]), (1_200_000, latencies_us[1])],
        );
        run.finish(Instant::now());
        run
    }

    #[test]
    fn a_run_reports_its_timeline_only_when_asked() {
        let run = two_receipts(None, [1000, 3000]);
        assert!(run.json("x", 0).get("timeline").is_none());
        assert!(!run.line("x").contains("sent"));
        let run = two_receipts(Some(1.0), [1000, 3000]);
        assert_eq!(
            run.json("x", 0)["timeline"].as_array().map(Vec::len),
            Some(2)
        );
        let text = run.line("x");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.contains("sent    1.00-2.00    s:       1 receipts, p50 3.00 ms"),
            "{text}"
        );
    }

    #[test]
    fn a_run_reports_the_machine_stalls_only_when_probed_and_in_their_window() {
        let mut run = two_receipts(Some(1.0), [1000, 30_000]);
        assert!(run.json("x", 0).get("stalls").is_none());
        assert!(!run.line("x").contains("stall"));
        run.stalls = Some(Stalls {
            realtime: true,
            seconds: 2.0,
            late: vec![(1_100_000, 25_000)],
        });
        let text = run.line("x");
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(
            text.contains("more than 2 ms late once, more than 10 ms late once"),
            "{text}"
        );
        let windows: Vec<&str> = text.lines().filter(|l| l.contains("sent")).collect();
        assert!(!windows[0].contains("stalled"), "{text}");
        assert!(
            windows[1].ends_with("machine stalled up to 25.0 ms"),
            "{text}"
        );
        let j = run.json("x", 0);
        assert_eq!(j["stalls"]["max_late_ms"], 25.0);
        assert_eq!(j["timeline"][0]["worst_stall_ms"], 0.0);
        assert_eq!(j["timeline"][1]["worst_stall_ms"], 25.0);
    }

    #[test]
    fn a_run_reports_the_cpu_it_could_read() {
        let mut run = two_receipts(None, [1000, 3000]);
        assert!(run.json("x", 0).get("cpu").is_none());
        assert!(!run.line("x").contains("cpu:"));
        run.cpu = Some((
            cpu::Use {
                cores: 2,
                busy_cores: 1.5,
                steal_cores: 0.25,
                process_cores: 1.25,
            },
            "this process (the load generator)",
        ));
        let text = run.line("x");
        assert_eq!(
            text.lines().nth(1),
            Some(
                "  cpu: this machine's 2 cores 75% busy (1.50 cores, of which steal 0.25), \
                 this process (the load generator) 1.25 cores"
            ),
            "{text}"
        );
        let j = run.json("x", 0);
        assert_eq!(j["cpu"]["busy_percent"], 75.0);
        assert_eq!(j["cpu"]["process_cores"], 1.25);
        assert_eq!(Outcome::of(&run).busy_percent, Some(75.0));
    }

    #[test]
    fn the_spread_of_repeated_runs_is_median_lowest_and_highest() {
        assert_eq!(spread([]), None);
        assert_eq!(spread([7.0]), Some((7.0, 7.0, 7.0)));
        assert_eq!(spread([12.0, 8.0, 10.0]), Some((10.0, 8.0, 12.0)));
        // An even count: the mean of the two middle values, whatever the order given.
        assert_eq!(spread([16.0, 9.0, 11.0, 8.0]), Some((10.0, 8.0, 16.0)));
    }

    #[test]
    fn repeated_runs_are_summed_up_in_one_line_and_one_json_object() {
        let runs = |latencies: &[&[u64]]| -> Vec<Outcome> {
            latencies
                .iter()
                .map(|l| {
                    let mut run = Run::new(None);
                    run.add(l.len() as u64, 0, l.iter().map(|&us| (0, us)).collect());
                    run.seconds = l.len() as f64 / 1000.0; // 1,000 events/s
                    run.latencies_us.sort_unstable();
                    Outcome::of(&run)
                })
                .collect()
        };
        let none = Repeated {
            label: "half load",
            outcomes: vec![],
        };
        assert_eq!((none.line(), none.json()), (None, None));
        let r = Repeated {
            label: "half load",
            outcomes: runs(&[
                &[1000, 2000, 9000],
                &[1000, 3000, 14000],
                &[1000, 4000, 11000],
            ]),
        };
        assert_eq!(
            r.line().as_deref(),
            Some(
                "half load over 3 runs: 1000 events/s (median; 1000 to 1000); receipt latency \
                 p50 median 3.00 ms (2.00 to 4.00), p99 median 11.00 ms (9.00 to 14.00)"
            )
        );
        let j = r.json().unwrap();
        assert_eq!(j["summary"], "half load");
        assert_eq!(j["runs"], 3);
        assert_eq!(j["latency_ms"]["p99"]["median"], 11.0);
        assert_eq!(j["latency_ms"]["p99"]["min"], 9.0);
        assert_eq!(j["latency_ms"]["p99"]["max"], 14.0);
        assert_eq!(j["accepted_per_second"]["median"], 1000.0);
        assert!(j.get("busy_percent").is_none());
        // With the machine's busy share of every run, the summary gives its spread too; if one
        // run could not read it, the summary says nothing of it.
        let mut outcomes = r.outcomes.clone();
        for (o, b) in outcomes.iter_mut().zip([80.0, 70.0, 90.0]) {
            o.busy_percent = Some(b);
        }
        let r = Repeated {
            label: "half load",
            outcomes,
        };
        assert!(
            r.line()
                .unwrap()
                .ends_with("; this machine's cores busy median 80% (70% to 90%)"),
            "{:?}",
            r.line()
        );
        assert_eq!(r.json().unwrap()["busy_percent"]["min"], 70.0);
        let mut outcomes = r.outcomes.clone();
        outcomes[1].busy_percent = None;
        let r = Repeated {
            label: "half load",
            outcomes,
        };
        assert!(r.line().unwrap().ends_with("(9.00 to 14.00)"));
        assert!(r.json().unwrap().get("busy_percent").is_none());
        // When ledgerd says for every run whether its disk alone denied a p99 of 10 ms, the
        // summary counts those runs and gives the p99 of the others.
        let mut outcomes = r.outcomes.clone();
        for (o, s) in outcomes.iter_mut().zip([false, true, false]) {
            o.disk_denied = Some(s);
        }
        let r = Repeated {
            label: "half load",
            outcomes,
        };
        assert!(
            r.line().unwrap().ends_with(
                "; ledgerd's disk alone put a p99 of 10 ms out of reach (a sync running over 10 ms \
                 for more than 1% of the run) in 1 of 3 runs; p99 median of the other 2 runs 10.00 \
                 ms (9.00 to 11.00)"
            ),
            "{:?}",
            r.line()
        );
        let j = r.json().unwrap();
        assert_eq!(j["runs_the_disk_denied_a_10ms_p99"], 1);
        assert_eq!(j["p99_ms_of_the_other_runs"]["max"], 11.0);
        // Every run stalled: no p99 of the others; one run unknown: nothing said.
        let mut outcomes = r.outcomes.clone();
        outcomes.iter_mut().for_each(|o| o.disk_denied = Some(true));
        let all = Repeated {
            label: "half load",
            outcomes: outcomes.clone(),
        };
        assert!(all.line().unwrap().ends_with("in 3 of 3 runs"));
        assert!(
            all.json()
                .unwrap()
                .get("p99_ms_of_the_other_runs")
                .is_none()
        );
        outcomes[0].disk_denied = None;
        let unknown = Repeated {
            label: "half load",
            outcomes,
        };
        assert!(!unknown.line().unwrap().contains("disk"));
        assert!(
            unknown
                .json()
                .unwrap()
                .get("runs_the_disk_denied_a_10ms_p99")
                .is_none()
        );
    }

    #[test]
    fn the_timeline_window_must_be_a_positive_number_of_seconds() {
        assert_eq!(positive_seconds("0.5"), Ok(0.5));
        for bad in ["0", "-1", "nan", "inf", "x", ""] {
            assert!(positive_seconds(bad).is_err(), "{bad}");
        }
    }
}
