//! `ledgerctl checkpoint`: a checkpoint from the running ledger that covers every entry
//! acknowledged so far (the latest if it covers the head, else one signed on request).

use ledger_core::proto::{self as v1, checkpoints_client::CheckpointsClient};

use crate::common::{self, ServerArg};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArg,
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
    let mut c = CheckpointsClient::new(common::channel(&a.server.server).await?);
    let cp = c.create(v1::CreateCheckpointRequest {}).await?.into_inner();
    let j = checkpoint_json(&cp);
    if json {
        println!("{j}");
    } else {
        println!(
            "checkpoint #{} covers entry {} with head hash {} (signature valid)",
            j["number"],
            j["index"],
            j["head_hash"].as_str().unwrap_or("")
        );
    }
    Ok(0)
}
