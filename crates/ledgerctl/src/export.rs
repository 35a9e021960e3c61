//! `ledgerctl export`: a portable, self-describing JSON Lines file of the chain and its
//! checkpoints, which `ledgerctl verify --file` checks without the ledger.
//!
//! Layout, one JSON object per line:
//! 1. a header: `{"format":"casino-ledger-export","version":1,...}` naming the hash and
//!    signature domains, the ledger key and the counts;
//! 2. `{"checkpoint":{"body":HEX,"signature":HEX[,"note":TEXT]}}` for every checkpoint, oldest
//!    first (`note`: the C2SP signed note of a checkpoint with a Merkle tree head);
//! 3. `{"entry":{"format","index","received_at_ms","kind","body","signature","prev_hash","entry_hash"}}`
//!    for every entry in order (bytes in hex: `body` is exactly the signed bytes);
//! 4. `{"end":{"entries":N,"head_hash":HEX}}`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, query_client::QueryClient,
};
use ledger_core::{hashing, signing};
use ledger_store::{Store, windowed_entries};
use tokio_stream::StreamExt;

use crate::common;

/// The export format's name.
pub const FORMAT: &str = "casino-ledger-export";

#[derive(clap::Args, Debug)]
// One source; none given: LEDGER_SERVER (not an `env` of --server, whose value would then
// conflict with --data-dir whenever the variable is set).
#[command(group(clap::ArgGroup::new("source").args(["data_dir", "server"])))]
pub struct Args {
    /// Export a stopped ledger's data directory.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Export from a running ledgerd (default with neither flag: LEDGER_SERVER).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Output file (written to OUT.partial, fsynced, then renamed).
    #[arg(long, value_name = "OUT")]
    pub out: PathBuf,
}

fn header(
    entries: u64,
    checkpoints: usize,
    ledger_key: &str,
    ledger_id: &str,
) -> serde_json::Value {
    serde_json::json!({
        "format": FORMAT, "version": 1,
        "created_at": chrono::Utc::now().to_rfc3339(),
        "ledger_id": ledger_id, "ledger_public_key": ledger_key,
        "entries": entries, "checkpoints": checkpoints,
        "entry_format": ledger_core::ENTRY_FORMAT,
        "spec": {
            "record_hash": format!("blake3 derive_key({:?}) over u8 kind || u64be len(body) || body || signature", hashing::RECORD_HASH_CONTEXT),
            "entry_hash": format!("blake3 derive_key({:?}) over prev_hash || u64be index || i64be received_at_ms || u8 kind || record_hash", hashing::ENTRY_HASH_CONTEXT),
            "genesis_prev_hash": "32 zero bytes",
            "kinds": {"event": 1, "ledger": 2},
            "signatures": "ed25519 over DOMAIN || body",
            "event_domain": String::from_utf8_lossy(signing::EVENT_DOMAIN),
            "ledger_record_domain": String::from_utf8_lossy(signing::LEDGER_RECORD_DOMAIN),
            "checkpoint_domain": String::from_utf8_lossy(signing::CHECKPOINT_DOMAIN),
            "schemas": "proto/casino_ledger/v1/events.proto (EventBody), ledger.proto (LedgerRecordBody, CheckpointBody)",
        },
    })
}

fn entry_line(e: &v1::ChainEntry) -> serde_json::Value {
    serde_json::json!({"entry": {
        "format": e.format, "index": e.index, "received_at_ms": e.received_at_ms,
        "kind": if e.kind == v1::RecordKind::Ledger as i32 { "ledger" } else { "event" },
        "body": hex::encode(&e.body), "signature": hex::encode(&e.signature),
        "prev_hash": hex::encode(&e.prev_hash), "entry_hash": hex::encode(&e.entry_hash),
    }})
}

struct Writer {
    out: std::io::BufWriter<std::fs::File>,
    tmp: PathBuf,
    dest: PathBuf,
    n: u64,
    last_hash: Vec<u8>,
}

impl Writer {
    fn create(dest: &std::path::Path) -> anyhow::Result<Writer> {
        let mut tmp = dest.as_os_str().to_owned();
        tmp.push(".partial");
        let tmp = PathBuf::from(tmp);
        let f = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        Ok(Writer {
            out: std::io::BufWriter::new(f),
            tmp,
            dest: dest.to_path_buf(),
            n: 0,
            last_hash: Vec::new(),
        })
    }
    fn line(&mut self, v: &serde_json::Value) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.out, v)?;
        self.out.write_all(b"\n")?;
        Ok(())
    }
    fn entry(&mut self, e: &v1::ChainEntry) -> anyhow::Result<()> {
        self.line(&entry_line(e))?;
        self.n += 1;
        self.last_hash = e.entry_hash.clone();
        Ok(())
    }
    fn finish(mut self) -> anyhow::Result<u64> {
        let end = serde_json::json!({"end": {"entries": self.n, "head_hash": hex::encode(&self.last_hash)}});
        self.line(&end)?;
        let f = self.out.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&self.tmp, &self.dest)?;
        Ok(self.n)
    }
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let server = a.server.clone().or_else(|| {
        std::env::var("LEDGER_SERVER")
            .ok()
            .filter(|s| !s.is_empty())
    });
    let n = if let Some(dir) = &a.data_dir {
        let dir = dir.clone();
        let out = a.out.clone();
        tokio::task::spawn_blocking(move || export_dir(&dir, &out)).await??
    } else if let Some(server) = server {
        export_server(&server, &a.out).await?
    } else {
        crate::out::usage_error(clap::Error::raw(
            clap::error::ErrorKind::MissingRequiredArgument,
            "export needs --data-dir DIR or --server URL (or the LEDGER_SERVER environment variable)\n",
        ))
    };
    if json {
        println!("{}", serde_json::json!({"file": a.out, "entries": n}));
    } else {
        println!("exported {n} entries to {}", a.out.display());
    }
    Ok(0)
}

/// Export a data directory.
pub fn export_dir(dir: &std::path::Path, out: &std::path::Path) -> anyhow::Result<u64> {
    let store = Store::open_existing(dir)?;
    // With the witnesses' cosignatures in their notes, as a server's export has them.
    let cps = store
        .all_checkpoints()?
        .into_iter()
        .map(|cp| store.with_cosignatures(cp))
        .collect::<Result<Vec<_>, _>>()?;
    let (head, _) = store.head()?.context("the store has no head record")?;
    let genesis = store.entry(0)?.context("no genesis entry")?;
    let (key, id) = genesis_info(&genesis);
    // The entries are read with the store reopened per window (bounded memory): this handle
    // must let go of sled's lock first.
    drop(store);
    let mut w = Writer::create(out)?;
    w.line(&header(head + 1, cps.len(), &key, &id))?;
    for cp in &cps {
        w.line(&checkpoint_line(cp))?;
    }
    let pb = common::progress(head + 1, "exporting");
    for e in windowed_entries(dir, 0, head)? {
        let e = e?;
        w.entry(&e)?;
        if e.index % 4096 == 0 {
            pb.set_position(e.index);
        }
    }
    pb.finish_and_clear();
    if w.n != head + 1 {
        bail!(
            "the store ends at entry {} but its head record says {head}",
            w.n.saturating_sub(1)
        );
    }
    w.finish()
}

async fn export_server(server: &str, out: &std::path::Path) -> anyhow::Result<u64> {
    let ch = common::channel(server).await?;
    let mut q = QueryClient::new(ch.clone()).max_decoding_message_size(16 << 20);
    let head = q.get_head(v1::GetHeadRequest {}).await?.into_inner();
    let mut cps = Vec::new();
    let mut s = CheckpointsClient::new(ch)
        .list(v1::ListCheckpointsRequest::default())
        .await?
        .into_inner();
    while let Some(c) = s.next().await {
        let c = c?;
        // Only checkpoints the export covers.
        if ledger_core::record::check_checkpoint(&c, None)
            .map(|i| i.index <= head.index)
            .unwrap_or(true)
        {
            cps.push(c);
        }
    }
    let mut w = Writer::create(out)?;
    w.line(&header(
        head.length,
        cps.len(),
        &hex::encode(&head.ledger_public_key),
        &head.ledger_id,
    ))?;
    for cp in &cps {
        w.line(&checkpoint_line(cp))?;
    }
    let mut s = q
        .list_entries(v1::ListEntriesRequest {
            from_index: 0,
            to_index: head.index,
        })
        .await?
        .into_inner();
    while let Some(e) = s.next().await {
        w.entry(&e?)?;
    }
    if w.n != head.length {
        bail!("the server sent {} entries, expected {}", w.n, head.length);
    }
    w.finish()
}

fn genesis_info(e: &v1::ChainEntry) -> (String, String) {
    match ledger_core::record::decode_ledger_record(&e.body)
        .ok()
        .and_then(|r| r.record)
    {
        Some(v1::ledger_record_body::Record::Genesis(g)) => {
            (hex::encode(&g.ledger_public_key), g.ledger_id)
        }
        _ => (String::new(), String::new()),
    }
}

/// A checkpoint's line in an export.
fn checkpoint_line(cp: &v1::Checkpoint) -> serde_json::Value {
    let mut c =
        serde_json::json!({"body": hex::encode(&cp.body), "signature": hex::encode(&cp.signature)});
    if !cp.note.is_empty() {
        c["note"] = serde_json::Value::String(cp.note.clone());
    }
    serde_json::json!({ "checkpoint": c })
}
