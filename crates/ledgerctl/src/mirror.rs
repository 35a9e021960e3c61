//! `ledgerctl mirror status|alarms`: a mirror's state and the alarms it raised (what it could not
//! verify or extend consistently), from a running ledgerd that mirrors another ledger.

use anyhow::Context;
use ledger_proto::v1::{self, mirror_client::MirrorClient};

use crate::common::{self, ServerArg};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// What the mirror holds of its source, its lag, and whether it still follows.
    Status(ServerArg),
    /// Every alarm the mirror raised, oldest first.
    Alarms(ServerArg),
}

pub async fn run(c: Command, json: bool) -> anyhow::Result<i32> {
    match c {
        Command::Status(s) => {
            let ch = common::channel(&s.server).await?;
            let st = MirrorClient::new(ch)
                .get_status(v1::GetMirrorStatusRequest {})
                .await
                .context("Mirror.GetStatus (is this ledgerd a mirror?)")?
                .into_inner();
            let p99 = st
                .lag
                .as_ref()
                .map(|h| quantile_ms(h, 0.99))
                .unwrap_or_default();
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "source": st.source, "ledger_id": st.ledger_id,
                        "mirrored_entries": st.mirrored_entries, "source_entries": st.source_entries,
                        "connected": st.connected, "halted": st.halted, "alarms": st.alarms,
                        "checkpoints": st.checkpoints, "lag_p99_ms": p99,
                    })
                );
            } else {
                println!(
                    "mirror of {} ({}): {} of {} entries, {} checkpoints, {}{}, {} alarms, lag p99 {p99} ms",
                    st.source,
                    st.ledger_id,
                    st.mirrored_entries,
                    st.source_entries,
                    st.checkpoints,
                    if st.connected {
                        "following"
                    } else {
                        "not connected"
                    },
                    if st.halted {
                        ", HALTED on an alarm"
                    } else {
                        ""
                    },
                    st.alarms
                );
            }
            Ok(0)
        }
        Command::Alarms(s) => {
            let ch = common::channel(&s.server).await?;
            let a = MirrorClient::new(ch)
                .list_alarms(v1::ListMirrorAlarmsRequest {})
                .await
                .context("Mirror.ListAlarms (is this ledgerd a mirror?)")?
                .into_inner();
            for x in &a.alarms {
                let index = x.has_index.then_some(x.index);
                if json {
                    println!(
                        "{}",
                        serde_json::json!({"at_ms": x.at_ms, "kind": x.kind, "index": index, "detail": x.detail})
                    );
                } else {
                    let at = chrono::DateTime::from_timestamp_millis(x.at_ms)
                        .map(|t| t.to_rfc3339())
                        .unwrap_or_default();
                    let idx = index.map(|i| format!(" entry {i}")).unwrap_or_default();
                    println!("{at} {}{idx}: {}", x.kind, x.detail);
                }
            }
            if !json && a.alarms.is_empty() {
                println!("no alarms");
            }
            Ok(0)
        }
    }
}

/// A quantile of a latency histogram, in ms (an upper bound of its bucket).
fn quantile_ms(h: &v1::LatencyHistogram, p: f64) -> u64 {
    let want = (h.count as f64 * p).ceil() as u64;
    let mut seen = 0;
    for b in &h.buckets {
        seen += b.count;
        if seen >= want.max(1) {
            return b.le_us.div_ceil(1000);
        }
    }
    h.max_us.div_ceil(1000)
}
