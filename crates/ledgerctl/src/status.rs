//! `ledgerctl status`: head and latest checkpoint of the running ledger, and how its ingest has
//! gone since it started (receipts, syncs, the disk's stalls).

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
    let ingest = crate::ingest_stats::fetch(&ch)
        .await?
        .map(|s| crate::ingest_stats::Span::since_start(&s));
    let cp = CheckpointsClient::new(ch)
        .get_latest(v1::GetCheckpointRequest::default())
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
                "ingest_since_start": ingest.as_ref().map(|s| s.json()),
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
        if let Some(s) = ingest {
            println!(
                "since ledgerd started {}: {} events accepted; hold now {} µs",
                humanize(s.seconds),
                s.accepted,
                s.hold_us
            );
            println!(
                "{} refused for a bad signature; {} from streams not yet shown to hold a device key (checked apart)",
                s.bad_signatures, s.unproven_envelopes
            );
            println!("{}", s.line());
            if let Some(st) = s.stages_line() {
                println!("{st}");
            }
        }
    }
    Ok(0)
}

/// How long ago, in the largest two units ("3d 4h ago", "2h 5m ago", "7m 12s ago", "40 s ago").
fn humanize(seconds: f64) -> String {
    let s = seconds as u64;
    match s {
        0..60 => format!("{s} s ago"),
        60..3600 => format!("{}m {}s ago", s / 60, s % 60),
        3600..86400 => format!("{}h {}m ago", s / 3600, s % 3600 / 60),
        _ => format!("{}d {}h ago", s / 86400, s % 86400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn uptimes_read_in_the_largest_two_units() {
        use super::humanize;
        assert_eq!(humanize(40.7), "40 s ago");
        assert_eq!(humanize(432.0), "7m 12s ago");
        assert_eq!(humanize(7500.0), "2h 5m ago");
        assert_eq!(humanize(3.0 * 86400.0 + 4.0 * 3600.0 + 59.0), "3d 4h ago");
    }
}
