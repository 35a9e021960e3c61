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
    let last = std::sync::Mutex::new(None::<String>);
    let check = async {
        // Until the deadline, a ledgerd that is not listening yet is waited for (it may be
        // starting): connections are tried again every 100 ms; any other failure is final.
        let ch = loop {
            match common::channel(&a.server.server).await {
                Ok(ch) => break ch,
                Err(e) => {
                    *last.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{e:#}"));
                    tokio::time::sleep(Duration::from_millis(100)).await
                }
            }
        };
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
            let why = last.lock().unwrap_or_else(|p| p.into_inner()).take();
            format!(
                "--timeout: no answer from {} within {} s{}",
                a.server.server,
                a.timeout,
                why.map(|w| format!(" (last: {w})")).unwrap_or_default()
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
