//! `nats-consumer`: read a ledger's JetStream export from its first message and verify every
//! entry against a checkpoint the ledger signed (`ledgerctl --json checkpoint > cp.json`).
//!
//! ```sh
//! nats-consumer --server nats://127.0.0.1:4222 --stream LEDGER \
//!     --checkpoint cp.json --ledger-key <64 hex digits>
//! ```
//!
//! Exit 0 once the checkpoint's entry is reached and everything up to it verifies (or, with
//! `--follow`, never: entries after it are still checked link by link); 1 on any error.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream::{self, consumer::pull::OrderedConfig};
use clap::Parser;
use nats_consumer::{Verifier, checkpoint_from_json};
use tokio_stream::StreamExt as _;

/// Read and verify a ledger's NATS JetStream export.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// A NATS server of the cluster (repeat for more).
    #[arg(long = "server", default_value = "nats://127.0.0.1:4222")]
    servers: Vec<String>,
    /// The stream ledgerd exports to (`export.nats.stream`).
    #[arg(long)]
    stream: String,
    /// A checkpoint as `ledgerctl --json checkpoint` prints it.
    #[arg(long)]
    checkpoint: PathBuf,
    /// The ledger's public key (64 hex digits), trusted out of band.
    #[arg(long)]
    ledger_key: String,
    /// Keep reading after the checkpoint's entry, checking each link.
    #[arg(long)]
    follow: bool,
    /// Give up when no message comes for this many seconds.
    #[arg(long, default_value_t = 30)]
    idle_secs: u64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("nats-consumer: {e:#}");
        std::process::exit(1);
    }
}

async fn run(a: Args) -> anyhow::Result<()> {
    let key = ledger_core::signing::parse_public_key_hex(&a.ledger_key)
        .map_err(|e| anyhow::anyhow!("--ledger-key: {e}"))?;
    let text = std::fs::read_to_string(&a.checkpoint)
        .with_context(|| format!("--checkpoint {}", a.checkpoint.display()))?;
    let cp = checkpoint_from_json(&text).context("--checkpoint")?;
    let mut v = Verifier::new(&cp, &key).context("--checkpoint")?;
    let addrs = a
        .servers
        .iter()
        .map(|s| s.parse::<async_nats::ServerAddr>())
        .collect::<Result<Vec<_>, _>>()
        .context("--server")?;
    let client = async_nats::connect(addrs).await.context("connect")?;
    let js = jetstream::new(client);
    // A cluster that just lost a node may still be electing leaders: retry for --idle-secs.
    let deadline = std::time::Instant::now() + Duration::from_secs(a.idle_secs);
    let mut messages = loop {
        let made = async {
            js.get_stream(&a.stream)
                .await
                .with_context(|| format!("--stream {}", a.stream))?
                .create_consumer(OrderedConfig::default())
                .await
                .context("an ordered consumer")?
                .messages()
                .await
                .context("reading")
        };
        match made.await {
            Ok(m) => break m,
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("nats-consumer: {e:#}; again in 1 s");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(e),
        }
    };
    let mut by_subject: BTreeMap<String, u64> = BTreeMap::new();
    let idle = Duration::from_secs(a.idle_secs);
    loop {
        let m = match tokio::time::timeout(idle, messages.next()).await {
            Ok(Some(m)) => m.context("reading")?,
            Ok(None) => anyhow::bail!("the stream ended"),
            Err(_) => anyhow::bail!(
                "no message for {}s after entry {} (checkpoint at entry {})",
                a.idle_secs,
                v.entries().wrapping_sub(1),
                v.checkpoint_index()
            ),
        };
        let seq = m.info().map(|i| i.stream_sequence).unwrap_or_default();
        let header = |n: &str| {
            m.headers
                .as_ref()
                .and_then(|h| h.get(n))
                .map(|v| v.as_str().to_string())
        };
        let (index, hash) = (header("Ledger-Index"), header("Ledger-Entry-Hash"));
        v.accept(seq, index.as_deref(), hash.as_deref(), &m.payload)?;
        *by_subject.entry(m.subject.to_string()).or_default() += 1;
        if v.verified() && !a.follow {
            break;
        }
    }
    println!(
        "verified entries 0 to {} against the checkpoint (chain head and Merkle root)",
        v.entries() - 1
    );
    for (s, n) in by_subject {
        println!("  {n:>8}  {s}");
    }
    Ok(())
}
