//! `ledgerctl health`: the standard gRPC health check of a running ledgerd (the container's
//! HEALTHCHECK and Kubernetes' probes). Exit status 0 when it serves, 1 otherwise.

use std::time::Duration;

use anyhow::Context;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

use crate::common::{self, ServerArg};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArg,
    /// Service to check (e.g. casino_ledger.v1.Ingest); default: the whole server.
    #[arg(long, default_value = "", value_name = "NAME")]
    pub service: String,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 5, value_name = "SECS")]
    pub timeout: u64,
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let check = async {
        let ch = common::channel(&a.server.server).await?;
        let r = HealthClient::new(ch)
            .check(HealthCheckRequest {
                service: a.service.clone(),
            })
            .await
            .context("health check")?
            .into_inner();
        anyhow::Ok(ServingStatus::try_from(r.status).unwrap_or(ServingStatus::Unknown))
    };
    let status = tokio::time::timeout(Duration::from_secs(a.timeout), check)
        .await
        .with_context(|| {
            format!(
                "--timeout: no answer from {} within {} s",
                a.server.server, a.timeout
            )
        })??;
    let name = status.as_str_name().to_lowercase();
    if json {
        println!(
            "{}",
            serde_json::json!({ "server": a.server.server, "status": name })
        );
    } else {
        println!("{}: {name}", a.server.server);
    }
    Ok(if status == ServingStatus::Serving {
        0
    } else {
        1
    })
}
