//! `ledgerctl bench-tiles`: load on the tree served as C2SP tlog-tiles (ledgerd's HTTP listener,
//! `/tlog/`), as transparency-log clients, monitors and mirrors read it: keep-alive HTTPS
//! connections fetching tiles for a while, each answer checked for its status and length.
//! Prints requests and bytes a second and the machine's CPU over the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use ledger_core::merkle::{TILE_HEIGHT, TILE_WIDTH};
use ledger_core::tiles::{TilePath, tile_of};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// ledgerd's HTTP listener ([metrics] listen), e.g. https://127.0.0.1:9100.
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// How long to load it, seconds.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Keep-alive connections, each with one request at a time.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// What to fetch: hash tiles (any principal) or entry bundles (regulator and admin only).
    #[arg(long, value_enum, default_value_t = What::Hashes)]
    pub what: What,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    Hashes,
    Entries,
}

/// The tiles of a tree of `size` entries, every level's (hash tiles) or the entry bundles.
fn tiles(size: u64, what: What) -> Vec<TilePath> {
    let mut out = Vec::new();
    match what {
        What::Entries => {
            for n in 0..size.div_ceil(TILE_WIDTH) {
                let width = (size - n * TILE_WIDTH).min(TILE_WIDTH) as u16;
                out.push(TilePath {
                    level: None,
                    n,
                    width,
                });
            }
        }
        What::Hashes => {
            for level in 0u8.. {
                let count = size >> (TILE_HEIGHT * u32::from(level));
                if count == 0 {
                    break;
                }
                for n in 0..count.div_ceil(TILE_WIDTH) {
                    out.push(tile_of(level, n * TILE_WIDTH, size));
                }
            }
        }
    }
    out
}

/// The client's TLS configuration from the global `--tls-ca/--tls-cert/--tls-key`.
fn client_config() -> anyhow::Result<rustls::ClientConfig> {
    let tls = ledger_agent::tls::default_tls()
        .ok_or_else(|| anyhow!("bench-tiles needs --tls-ca (and a client certificate): ledgerd's HTTP listener is HTTPS"))?;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(&tls.ca_pem) {
        roots
            .add(c.context("--tls-ca: not a PEM certificate")?)
            .context("--tls-ca")?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots);
    let mut cfg = match &tls.identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .context("--tls-cert: not a PEM certificate")?;
            let key = PrivateKeyDer::from_pem_slice(key).context("--tls-key: not a PEM key")?;
            builder.with_client_auth_cert(chain, key)?
        }
        None => builder.with_no_client_auth(),
    };
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(cfg)
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn connect(
    authority: &str,
    host: &str,
    tls: &tokio_rustls::TlsConnector,
) -> anyhow::Result<Sender> {
    let tcp = tokio::net::TcpStream::connect(authority)
        .await
        .with_context(|| format!("connect to {authority}"))?;
    tcp.set_nodelay(true)?;
    let name = ServerName::try_from(host.to_string()).context("--url: host")?;
    let stream = tls
        .connect(name, tcp)
        .await
        .with_context(|| format!("TLS with {authority}"))?;
    let (send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(send)
}

async fn get(send: &mut Sender, host: &str, path: &str) -> anyhow::Result<(u16, Bytes)> {
    send.ready().await?;
    let req = hyper::Request::get(path)
        .header(hyper::header::HOST, host)
        .body(Empty::new())?;
    let resp = send.send_request(req).await?;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await?.to_bytes();
    Ok((status, body))
}

/// The tree size of a C2SP checkpoint note (its second line).
fn checkpoint_size(note: &[u8]) -> anyhow::Result<u64> {
    let text = std::str::from_utf8(note).context("the checkpoint is not UTF-8")?;
    text.lines()
        .nth(1)
        .and_then(|l| l.parse().ok())
        .ok_or_else(|| anyhow!("the checkpoint has no tree size on its second line"))
}

/// The bytes a tile holds: 32 a hash; an entry bundle's length is only known from its entries.
fn expected_len(t: &TilePath) -> Option<usize> {
    t.level.map(|_| usize::from(t.width) * 32)
}

#[derive(Default)]
struct Counts {
    /// Connections opened after the first ones (ledgerd closed one).
    reconnects: AtomicU64,
    requests: AtomicU64,
    bytes: AtomicU64,
    wrong: AtomicU64,
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    if a.connections == 0 || a.seconds == 0 {
        bail!("--connections and --seconds must be at least 1");
    }
    let rest = a
        .url
        .strip_prefix("https://")
        .ok_or_else(|| anyhow!("--url must be https://HOST:PORT (ledgerd's HTTP listener)"))?;
    let authority = rest.trim_end_matches('/').to_string();
    let host = authority
        .rsplit_once(':')
        .map_or(authority.as_str(), |(h, _)| h)
        .trim_matches(['[', ']'])
        .to_string();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(client_config()?));
    // Every connection first (ledgerd answers a few from one address at a time): the first
    // one also reads the checkpoint.
    let mut senders = Vec::new();
    for _ in 0..a.connections {
        senders.push(connect(&authority, &host, &tls).await?);
    }
    let first = &mut senders[0];
    let (status, note) = get(first, &host, "/tlog/checkpoint").await?;
    if status != 200 {
        bail!(
            "GET /tlog/checkpoint: {status} {}",
            String::from_utf8_lossy(&note).trim()
        );
    }
    let size = checkpoint_size(&note)?;
    let all = Arc::new(tiles(size, a.what));
    if all.is_empty() {
        bail!("the checkpoint's tree is empty: nothing to fetch");
    }
    let (status, body) = get(first, &host, &format!("/tlog/{}", all[0].path())).await?;
    if status != 200 {
        bail!(
            "GET /tlog/{}: {status} {}",
            all[0].path(),
            String::from_utf8_lossy(&body).trim()
        );
    }

    let counts = Arc::new(Counts::default());
    let cpu_at_start = crate::cpu::Snapshot::now();
    let start = Instant::now();
    let until = start + Duration::from_secs(a.seconds);
    let mut tasks = Vec::new();
    for (c, mut send) in senders.into_iter().enumerate() {
        let (all, counts, tls) = (all.clone(), counts.clone(), tls.clone());
        let (authority, host) = (authority.clone(), host.clone());
        tasks.push(tokio::spawn(async move {
            // Each connection walks the tiles from its own place, with a stride coprime to
            // their count: every tile is read, not only the cached first few.
            let n = all.len();
            let stride = (1..=n)
                .rev()
                .find(|s| gcd(*s, n) == 1 && *s <= n / 2 + 1)
                .unwrap_or(1);
            let mut i = c * n / a.connections.max(1);
            let mut latencies = Vec::new();
            while Instant::now() < until {
                let t = &all[i % n];
                let path = format!("/tlog/{}", t.path());
                let began = Instant::now();
                let answer = match get(&mut send, &host, &path).await {
                    Ok(a) => a,
                    // ledgerd closes a kept-alive connection after a while (possibly as this
                    // request went out): once more on a new one.
                    Err(_) => {
                        counts.reconnects.fetch_add(1, Ordering::Relaxed);
                        send = connect(&authority, &host, &tls).await?;
                        get(&mut send, &host, &path).await?
                    }
                };
                let (status, body) = answer;
                latencies.push(began.elapsed());
                counts.requests.fetch_add(1, Ordering::Relaxed);
                counts.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
                let right = status == 200 && expected_len(t).is_none_or(|l| l == body.len());
                if !right {
                    counts.wrong.fetch_add(1, Ordering::Relaxed);
                }
                i += stride;
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await??);
    }
    let seconds = start.elapsed().as_secs_f64();
    let busy = crate::cpu::Snapshot::now()
        .zip(cpu_at_start)
        .and_then(|(now, then)| now.since(&then))
        .map(|u| u.busy_cores);
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    let requests = counts.requests.load(Ordering::Relaxed);
    let bytes = counts.bytes.load(Ordering::Relaxed);
    let wrong = counts.wrong.load(Ordering::Relaxed);
    let report = serde_json::json!({
        "tree_size": size,
        "tiles": all.len(),
        "what": format!("{:?}", a.what).to_lowercase(),
        "connections": a.connections,
        "seconds": seconds,
        "requests": requests,
        "reconnects": counts.reconnects.load(Ordering::Relaxed),
        "requests_per_second": requests as f64 / seconds,
        "megabytes_per_second": bytes as f64 / seconds / 1e6,
        "wrong_answers": wrong,
        "latency_ms": {"p50": pct(0.5), "p99": pct(0.99)},
        "machine_busy_cores": busy,
    });
    if json {
        println!("{report}");
    } else {
        println!(
            "{} {} tiles of a tree of {size}: {:.0} requests/s, {:.1} MB/s over {} connections for {:.1} s \
             (p50 {:.2} ms, p99 {:.2} ms; machine busy {} cores); {wrong} wrong answers",
            all.len(),
            report["what"].as_str().unwrap_or_default(),
            requests as f64 / seconds,
            bytes as f64 / seconds / 1e6,
            a.connections,
            seconds,
            pct(0.5),
            pct(0.99),
            busy.map_or("?".into(), |b| format!("{b:.2}")),
        );
    }
    if wrong > 0 {
        bail!("{wrong} of {requests} answers were not a 200 of the tile's length");
    }
    Ok(0)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tiles_of_a_tree_are_every_levels_full_and_partial_ones() {
        // 70,000 entries: level 0 has 273 full tiles and one of 112; level 1 (273 hashes) one
        // full tile and one of 17; level 2 (1 hash) none: 1 < 256 is a partial tile of width 1.
        let t = tiles(70_000, What::Hashes);
        let level = |l: u8| t.iter().filter(|p| p.level == Some(l)).count();
        assert_eq!((level(0), level(1), level(2), level(3)), (274, 2, 1, 0));
        let last0 = t.iter().rfind(|p| p.level == Some(0)).unwrap();
        assert_eq!((last0.n, last0.width), (273, 112));
        let last1 = t.iter().rfind(|p| p.level == Some(1)).unwrap();
        assert_eq!((last1.n, last1.width), (1, 17));
        assert_eq!(expected_len(last1), Some(17 * 32));

        let e = tiles(70_000, What::Entries);
        assert_eq!(e.len(), 274);
        assert_eq!((e[273].level, e[273].width), (None, 112));
        assert_eq!(expected_len(&e[0]), None);
        assert!(tiles(0, What::Hashes).is_empty());
    }

    #[test]
    fn a_checkpoints_size_is_its_second_line() {
        assert_eq!(
            checkpoint_size(b"casino-ledger/e2e\n70000\nAAAA\n\n\xe2\x80\x94 sig\n").unwrap(),
            70_000
        );
        assert!(checkpoint_size(b"origin\nnot a number\n").is_err());
        assert!(checkpoint_size(b"origin only").is_err());
    }
}
