//! `ledgerctl tail`: follow the ledger live.

use ledger_core::proto::{self as v1, query_client::QueryClient};
use tokio_stream::StreamExt;

use crate::common::{self, ServerArg};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArg,
    /// First index to show; default: only new entries (from the current head + 1).
    #[arg(long, value_name = "INDEX")]
    pub from: Option<u64>,
    /// Stop after this many entries (default: follow until interrupted).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let mut q = QueryClient::new(common::channel(&a.server.server).await?);
    let from = match a.from {
        Some(f) => f,
        None => q.get_head(v1::GetHeadRequest {}).await?.into_inner().index + 1,
    };
    let mut s = q
        .tail(v1::TailRequest { from_index: from })
        .await?
        .into_inner();
    let mut n = 0;
    while let Some(e) = s.next().await {
        let e = e?;
        if json {
            println!("{}", common::entry_json(&e));
        } else {
            println!("{}", common::entry_line(&e));
        }
        n += 1;
        if a.limit.is_some_and(|l| n >= l) {
            break;
        }
    }
    Ok(0)
}
