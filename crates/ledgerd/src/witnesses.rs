//! Submitting checkpoints to witnesses (C2SP tlog-witness, `[[witnesses]]`): each new
//! checkpoint that has a tree head goes to every witness with a consistency proof from the
//! last size that witness cosigned; its valid cosignatures (ed25519, and ML-DSA-44 when
//! `ml_dsa_public_key` is configured: both lines required) are kept with the checkpoint
//! (`Store::add_cosignature`) and served in its note. A refusal is an alarm: a witness that
//! holds another history than this ledger's is what a rewrite looks like from outside. It is
//! logged as an error, counted (`ledger_witness_refusals_total`) and recorded in the chain as a
//! [`v1::WitnessRefused`] ledger record, once per witness and checkpoint.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use ed25519_dalek::VerifyingKey;
use http_body_util::{BodyExt, Full, Limited};
use ledger_core::note::{self, AddCheckpoint, SignedNote};
use ledger_core::proto::{self as v1, ledger_record_body::Record};
use ledger_store::Store;

use crate::pipeline::Ledger;

/// A witness and what ledgerd knows of it.
pub struct Witness {
    pub name: String,
    /// host:port of its submission prefix.
    pub authority: String,
    pub path_prefix: String,
    pub key: VerifyingKey,
    /// Its ML-DSA-44 cosigning key, if configured: its answers must carry that line too.
    pub ml_dsa: Option<note::CosignerKey>,
    /// The size it last cosigned, as far as ledgerd knows (0 at start: its first answer, a 409,
    /// tells).
    old_size: u64,
    /// The last checkpoint number whose refusal is recorded in the chain.
    refusal_recorded: u64,
    figures: Arc<Figures>,
}

/// What the metrics show of one witness.
#[derive(Debug, Default)]
pub struct Figures {
    pub cosigned: AtomicU64,
    pub refusals: AtomicU64,
    pub unreachable: AtomicU64,
    /// The tree size of the newest checkpoint it cosigned.
    pub cosigned_size: AtomicU64,
    /// Answered requests' round trips: count, sum in µs, and counts under each of
    /// [`RTT_BOUNDS_US`] (not cumulated; the last one is +Inf).
    pub answered: AtomicU64,
    pub rtt_sum_us: AtomicU64,
    pub rtt_buckets: [AtomicU64; RTT_BOUNDS_US.len()],
}

/// Round-trip histogram bounds, µs (the last is +Inf).
pub const RTT_BOUNDS_US: [u64; 10] = [
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    1_000_000,
    u64::MAX,
];

impl Figures {
    fn round_trip(&self, took: Duration) {
        let us = took.as_micros().min(u64::MAX as u128) as u64;
        self.answered.fetch_add(1, Ordering::Relaxed);
        self.rtt_sum_us.fetch_add(us, Ordering::Relaxed);
        let b = RTT_BOUNDS_US
            .iter()
            .position(|b| us <= *b)
            .unwrap_or(RTT_BOUNDS_US.len() - 1);
        self.rtt_buckets[b].fetch_add(1, Ordering::Relaxed);
    }
}

/// The witnesses' figures of every running submitter, by the store it submits for (read by the
/// metrics at each scrape).
type Running = Mutex<Vec<(Weak<Store>, String, Arc<Figures>)>>;

fn running() -> &'static Running {
    static RUNNING: std::sync::OnceLock<Running> = std::sync::OnceLock::new();
    RUNNING.get_or_init(Running::default)
}

impl Witness {
    pub fn new(name: &str, url: &str, key: VerifyingKey) -> Result<Witness, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("witness {name}: url {url:?} is not http://"))?;
        let (authority, path) = match rest.split_once('/') {
            Some((a, p)) => (a.to_string(), format!("/{}", p.trim_end_matches('/'))),
            None => (rest.to_string(), String::new()),
        };
        Ok(Witness {
            name: name.to_string(),
            authority,
            path_prefix: path.trim_end_matches('/').to_string(),
            key,
            ml_dsa: None,
            old_size: 0,
            refusal_recorded: 0,
            figures: Arc::default(),
        })
    }

    /// The witness with an ML-DSA-44 key as well (`ml_dsa_public_key`).
    pub fn with_ml_dsa(mut self, key: Option<note::CosignerKey>) -> Witness {
        self.ml_dsa = key;
        self
    }

    /// The keys whose lines an answer must carry: ed25519, then ML-DSA-44 if configured.
    fn keys(&self) -> Vec<note::CosignerKey> {
        std::iter::once(note::CosignerKey::from(self.key))
            .chain(self.ml_dsa.clone())
            .collect()
    }
}

/// What a witness answered.
enum Answer {
    /// Its line for each of its keys, verified.
    Cosigned(Vec<note::NoteSignature>),
    /// 409 with the size it holds.
    Holds(u64),
    Refused(u16, String),
}

async fn post(
    w: &Witness,
    body: String,
    timeout: Duration,
) -> Result<(u16, String, String), String> {
    let fut = async {
        let stream = tokio::net::TcpStream::connect(&w.authority)
            .await
            .map_err(|e| format!("connect {}: {e}", w.authority))?;
        let (mut send, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(conn);
        let req = hyper::Request::post(format!("{}/add-checkpoint", w.path_prefix))
            .header("host", &w.authority)
            .header("content-type", "text/plain")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let resp = send
            .send_request(req)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let status = resp.status().as_u16();
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = Limited::new(resp.into_body(), 64 * 1024)
            .collect()
            .await
            .map_err(|e| format!("answer: {e}"))?
            .to_bytes();
        Ok((status, ct, String::from_utf8_lossy(&body).into_owned()))
    };
    tokio::time::timeout(timeout, fut)
        .await
        .map_err(|_| format!("no answer within {} ms", timeout.as_millis()))?
}

async fn submit(
    store: &Arc<Store>,
    w: &Witness,
    note_text: &str,
    size: u64,
    timeout: Duration,
) -> Result<Answer, String> {
    let proof = if w.old_size == 0 || w.old_size == size {
        Vec::new()
    } else {
        let (store, from) = (store.clone(), w.old_size);
        tokio::task::spawn_blocking(move || store.consistency_proof(from, size))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?
    };
    let body = AddCheckpoint {
        old_size: w.old_size,
        proof,
        checkpoint: note_text.to_string(),
    }
    .encode();
    let t = Instant::now();
    let (status, ct, text) = post(w, body, timeout).await?;
    w.figures.round_trip(t.elapsed());
    Ok(match status {
        200 => {
            let lines = note::parse_signature_lines(&text).map_err(|e| e.to_string())?;
            let mut n = SignedNote::parse(note_text).map_err(|e| e.to_string())?;
            n.add_signatures(&lines);
            let mut own = Vec::new();
            for key in w.keys() {
                n.cosigned_by(&w.name, &key)
                    .map_err(|e| format!("its answer, {} line: {e}", key.kind()))?;
                let id = key.key_id(&w.name);
                own.extend(
                    lines
                        .iter()
                        .find(|l| l.name == w.name && l.key_id == id)
                        .cloned(),
                );
            }
            Answer::Cosigned(own)
        }
        409 if ct.starts_with("text/x.tlog.size") => match text.trim().parse() {
            Ok(n) => Answer::Holds(n),
            Err(_) => Answer::Refused(409, text),
        },
        s => Answer::Refused(s, text),
    })
}

/// Follow the latest checkpoint and submit each new one to every witness, until the process
/// ends. Refusals are recorded in the chain through `ledger`.
pub async fn run(ledger: Ledger, mut witnesses: Vec<Witness>, timeout: Duration) {
    let store = ledger.store().clone();
    {
        let mut list = running().lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|(s, _, _)| s.strong_count() > 0);
        for w in &witnesses {
            list.push((Arc::downgrade(&store), w.name.clone(), w.figures.clone()));
        }
    }
    let mut done = 0u64;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let s = store.clone();
        let latest = match tokio::task::spawn_blocking(move || s.latest_checkpoint()).await {
            Ok(Ok(Some(l))) => l,
            _ => continue,
        };
        let (cp, info) = latest;
        let Some(tree) = info.tree.clone() else {
            continue;
        };
        if info.number <= done {
            continue;
        }
        let mut all = true;
        for w in witnesses.iter_mut() {
            // A witness that holds an older size tells it with a 409; then once more from it.
            for _ in 0..2 {
                match submit(&store, w, &cp.note, tree.size, timeout).await {
                    Ok(Answer::Cosigned(lines)) => {
                        w.old_size = tree.size;
                        w.figures.cosigned.fetch_add(1, Ordering::Relaxed);
                        w.figures.cosigned_size.store(tree.size, Ordering::Relaxed);
                        let (s, n) = (store.clone(), info.number);
                        let kept = tokio::task::spawn_blocking(move || {
                            lines.iter().try_for_each(|l| s.add_cosignature(n, l))
                        });
                        match kept.await {
                            Ok(Ok(())) => {
                                tracing::info!(witness = %w.name, number = info.number, size = tree.size, "checkpoint cosigned")
                            }
                            Ok(Err(e)) => {
                                tracing::error!(witness = %w.name, error = %e, "cannot keep a cosignature")
                            }
                            Err(e) => {
                                tracing::error!(witness = %w.name, error = %e, "cannot keep a cosignature")
                            }
                        }
                        break;
                    }
                    Ok(Answer::Holds(n)) if n != w.old_size && n <= tree.size => {
                        w.old_size = n;
                        continue;
                    }
                    Ok(Answer::Holds(n)) => {
                        all = false;
                        tracing::error!(witness = %w.name, holds = n, size = tree.size, "the witness holds a checkpoint this ledger cannot extend: it saw another history");
                        refused(&ledger, w, info.number, tree.size, 409, n, "").await;
                        break;
                    }
                    Ok(Answer::Refused(status, text)) => {
                        all = false;
                        tracing::error!(witness = %w.name, status, answer = %text.trim(), number = info.number, "the witness refused the checkpoint");
                        refused(&ledger, w, info.number, tree.size, status, 0, &text).await;
                        break;
                    }
                    Err(e) => {
                        all = false;
                        w.figures.unreachable.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(witness = %w.name, error = %e, "witness unreachable; the next checkpoint is submitted again");
                        break;
                    }
                }
            }
        }
        // A checkpoint every witness answered is done; otherwise the next loop tries again,
        // for as long as it is the latest.
        if all {
            done = info.number;
        } else {
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
}

/// The most of a witness's answer kept in the chain, in characters.
const ANSWER_MAX: usize = 512;

/// A refusal: counted, and recorded in the chain once per witness and checkpoint (the
/// submission is retried while the checkpoint is the latest; the record is not).
async fn refused(
    ledger: &Ledger,
    w: &mut Witness,
    number: u64,
    tree_size: u64,
    http_status: u16,
    witness_size: u64,
    answer: &str,
) {
    w.figures.refusals.fetch_add(1, Ordering::Relaxed);
    if w.refusal_recorded >= number {
        return;
    }
    let record = Record::WitnessRefused(refusal_record(
        w,
        number,
        tree_size,
        http_status,
        witness_size,
        answer,
    ));
    match ledger.append_record(record).await {
        Ok(r) => {
            w.refusal_recorded = number;
            tracing::error!(witness = %w.name, number, index = r.index, "the witness's refusal is recorded in the chain");
        }
        Err(e) => {
            tracing::error!(witness = %w.name, number, error = %e, "the witness's refusal could not be recorded in the chain; tried again at its next refusal")
        }
    }
}

fn refusal_record(
    w: &Witness,
    number: u64,
    tree_size: u64,
    http_status: u16,
    witness_size: u64,
    answer: &str,
) -> v1::WitnessRefused {
    let answer: String = answer
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(ANSWER_MAX)
        .collect();
    v1::WitnessRefused {
        witness: w.name.clone(),
        witness_public_key: w.key.as_bytes().to_vec(),
        checkpoint_number: number,
        tree_size,
        http_status: http_status.into(),
        witness_size,
        answer,
    }
}

/// Add the figures of the witnesses that submit for `store` to `registry` (read at each
/// scrape; nothing when no witness is configured).
pub fn register(registry: &mut prometheus_client::registry::Registry, store: &Arc<Store>) {
    registry.register_collector(Box::new(WitnessFigures {
        store: Arc::downgrade(store),
    }));
}

#[derive(Debug)]
struct WitnessFigures {
    store: Weak<Store>,
}

impl prometheus_client::collector::Collector for WitnessFigures {
    fn encode(&self, mut e: prometheus_client::encoding::DescriptorEncoder) -> std::fmt::Result {
        use prometheus_client::encoding::EncodeMetric;
        use prometheus_client::metrics::MetricType;
        use prometheus_client::metrics::counter::ConstCounter;
        use prometheus_client::metrics::gauge::ConstGauge;
        let ours: Vec<(String, Arc<Figures>)> = {
            let list = running().lock().unwrap_or_else(|p| p.into_inner());
            list.iter()
                .filter(|(s, _, _)| s.ptr_eq(&self.store))
                .map(|(_, n, f)| (n.clone(), f.clone()))
                .collect()
        };
        if ours.is_empty() {
            return Ok(());
        }
        type Read = fn(&Figures) -> u64;
        let counters: [(&str, &str, Read); 3] = [
            (
                "ledger_witness_cosigned",
                "Checkpoints the witness cosigned.",
                |f| f.cosigned.load(Ordering::Relaxed),
            ),
            (
                "ledger_witness_refusals",
                "Answers of the witness refusing a checkpoint (each checkpoint's first is recorded in the chain).",
                |f| f.refusals.load(Ordering::Relaxed),
            ),
            (
                "ledger_witness_unreachable",
                "Submissions the witness did not answer (connection failed or timed out).",
                |f| f.unreachable.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, get) in counters {
            let mut m = e.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (w, f) in &ours {
                ConstCounter::new(get(f)).encode(m.encode_family(&[("witness", w.as_str())])?)?;
            }
        }
        let mut m = e.encode_descriptor(
            "ledger_witness_cosigned_tree_size",
            "The tree size of the newest checkpoint the witness cosigned (0: none since start).",
            None,
            MetricType::Gauge,
        )?;
        for (w, f) in &ours {
            ConstGauge::new(f.cosigned_size.load(Ordering::Relaxed) as f64)
                .encode(m.encode_family(&[("witness", w.as_str())])?)?;
        }
        let mut m = e.encode_descriptor(
            "ledger_witness_round_trip_seconds",
            "Time from sending a checkpoint to the witness to its answer, for answered submissions.",
            None,
            MetricType::Histogram,
        )?;
        for (w, f) in &ours {
            let buckets: Vec<(f64, u64)> = RTT_BOUNDS_US
                .iter()
                .zip(&f.rtt_buckets)
                .map(|(b, n)| {
                    let bound = if *b == u64::MAX {
                        f64::INFINITY
                    } else {
                        *b as f64 / 1e6
                    };
                    (bound, n.load(Ordering::Relaxed))
                })
                .collect();
            m.encode_family(&[("witness", w.as_str())])?
                .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                    f.rtt_sum_us.load(Ordering::Relaxed) as f64 / 1e6,
                    f.answered.load(Ordering::Relaxed),
                    &buckets,
                    None,
                )?;
        }
        Ok(())
    }
}
