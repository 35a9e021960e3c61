//! `ledgerctl status`: head and latest checkpoint of the running ledger.

use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, query_client::QueryClient,
};

use crate::common::{self, ServerArg};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArg,
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let ch = common::channel(&a.server.server).await?;
    let head = QueryClient::new(ch.clone())
        .get_head(v1::GetHeadRequest {})
        .await?
        .into_inner();
    let cp = CheckpointsClient::new(ch)
        .get_latest(v1::GetCheckpointRequest {})
        .await
        .ok()
        .map(|r| crate::checkpoint::checkpoint_json(&r.into_inner()));
    if json {
        println!(
            "{}",
            serde_json::json!({
                "ledger_id": head.ledger_id, "ledger_public_key": hex::encode(&head.ledger_public_key),
                "head_index": head.index, "head_hash": hex::encode(&head.entry_hash), "entries": head.length,
                "latest_checkpoint": cp,
            })
        );
    } else {
        println!(
            "ledger {} (key {})",
            head.ledger_id,
            hex::encode(&head.ledger_public_key)
        );
        println!(
            "head: entry {} hash {} ({} entries)",
            head.index,
            hex::encode(&head.entry_hash),
            head.length
        );
        match cp {
            Some(c) => println!(
                "latest checkpoint: #{} at entry {} ({})",
                c["number"],
                c["index"],
                c["reason"].as_str().unwrap_or("")
            ),
            None => println!("no checkpoint yet"),
        }
    }
    Ok(0)
}
