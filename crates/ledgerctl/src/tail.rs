//! `ledgerctl tail`: follow the ledger live.

use ledger_core::proto::{self as v1, query_client::QueryClient};

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
    let s = q
        .tail(v1::TailRequest { from_index: from })
        .await?
        .into_inner();
    common::print_entries(s, a.limit, json).await?;
    Ok(0)
}
