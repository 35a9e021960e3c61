//! `ledgerctl checkpoint`: a checkpoint from the running ledger that covers every entry
//! acknowledged so far (the latest if it covers the head, else one signed on request).

use ledger_core::proto::{self as v1, checkpoints_client::CheckpointsClient};

use crate::common::{self, ServerArg};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArg,
    /// The ledger's public key (hex, or a PEM file); default: the key held from the last contact.
    #[arg(long)]
    pub ledger_key: Option<String>,
}

pub fn checkpoint_json(cp: &v1::Checkpoint) -> serde_json::Value {
    match ledger_core::record::check_checkpoint(cp, None) {
        Ok(i) => serde_json::json!({
            "number": i.number, "index": i.index, "head_hash": hex::encode(i.head_hash),
            "created_at_ms": i.created_at_ms, "reason": i.reason,
            "ledger_public_key": hex::encode(i.ledger_public_key.as_bytes()),
            "body": hex::encode(&cp.body), "signature": hex::encode(&cp.signature),
            "tree_size": i.tree.as_ref().map(|t| t.size),
            "tree_root": i.tree.as_ref().map(|t| hex::encode(t.root)),
            "note": (!cp.note.is_empty()).then_some(&cp.note),
        }),
        Err(e) => serde_json::json!({"error": e}),
    }
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    use anyhow::Context as _;
    let pinned = a
        .ledger_key
        .as_deref()
        .map(|k| ledger_agent::keys::read_public(k).context("--ledger-key"))
        .transpose()?;
    let ch = common::channel(&a.server.server).await?;
    let mut c = CheckpointsClient::new(ch.clone());
    let cp = c.create(v1::CreateCheckpointRequest {}).await?.into_inner();
    // Verified against the checkpoint held from the last contact (crate::trust).
    let adv = crate::trust::advance(ch, &cp, pinned).await?;
    let mut j = checkpoint_json(&cp);
    j["verified_from_size"] = serde_json::json!(adv.from);
    if json {
        println!("{j}");
    } else {
        println!(
            "checkpoint #{} covers entry {} with head hash {} (signature valid)",
            j["number"],
            j["index"],
            j["head_hash"].as_str().unwrap_or("")
        );
        match adv.from {
            Some(m) if m == adv.held.text.size => {
                println!("   the same tree of {m} entries as the checkpoint you held")
            }
            Some(m) => println!(
                "   proven to extend the tree of {m} entries you held (consistency proof checked); now held"
            ),
            None => println!(
                "   first contact with {}: held from now on; its key {} must be the ledger's (compare out of band, or give --ledger-key)",
                adv.held.text.origin,
                hex::encode(adv.held.key.as_bytes())
            ),
        }
    }
    Ok(0)
}
