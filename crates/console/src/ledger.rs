//! ledgerd, as each account sees it: one lazily connected gRPC channel per account, presenting
//! that account's client certificate, so that ledgerd applies the account's role and casinos to
//! every call the console makes for it.

use std::time::Duration;

use ledger_agent::tls::ClientTls;
use ledger_core::proto::{
    self as v1, audit_client::AuditClient, checkpoints_client::CheckpointsClient,
    jackpots_client::JackpotsClient, mirror_client::MirrorClient, proofs_client::ProofsClient,
    query_client::QueryClient,
};
use tonic::transport::{Channel, Endpoint};

use crate::config::Config;

/// The largest reply the console accepts (a page of findings, a round with its entries).
const MAX_REPLY: usize = 64 << 20;

#[derive(Clone)]
pub struct Ledger {
    channel: Channel,
    /// The configured mirrors (`[[mirrors]]`), reached with the same account's certificate.
    pub mirrors: Vec<MirrorLink>,
}

/// A configured mirror as one account reaches it.
#[derive(Clone)]
pub struct MirrorLink {
    pub name: String,
    pub address: String,
    channel: Channel,
}

impl MirrorLink {
    pub fn mirror(&self) -> MirrorClient<Channel> {
        MirrorClient::new(self.channel.clone())
    }
    pub fn query(&self) -> QueryClient<Channel> {
        QueryClient::new(self.channel.clone()).max_decoding_message_size(MAX_REPLY)
    }
}

/// A lazily connected channel to `url` presenting `account`'s certificate.
fn channel(
    url: &str,
    ca: &std::path::Path,
    a: &crate::config::Account,
    timeout: Duration,
) -> anyhow::Result<Channel> {
    let tls = ClientTls::from_files(ca, Some(&a.client_cert), Some(&a.client_key))
        .map_err(|e| anyhow::anyhow!("account {:?}: {e}", a.name))?;
    let ep = Endpoint::from_shared(url.to_string())
        .map_err(|_| anyhow::anyhow!("{url:?} is not a URL"))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(timeout)
        .tcp_nodelay(true);
    let ep = if url.starts_with("https://") {
        ep.tls_config(tls.config())
            .map_err(|e| anyhow::anyhow!("account {:?}: {e}", a.name))?
    } else {
        ep
    };
    Ok(ep.connect_lazy())
}

pub fn channels(cfg: &Config) -> anyhow::Result<Vec<Ledger>> {
    cfg.accounts
        .iter()
        .map(|a| {
            let mirrors = cfg
                .mirrors
                .iter()
                .map(|m| {
                    // A mirror that does not answer must not hold the Overview up for long.
                    let ca = m.ca.as_deref().unwrap_or(&cfg.ledgerd_ca);
                    Ok(MirrorLink {
                        name: m.name.clone(),
                        address: m.address.clone(),
                        channel: channel(&m.address, ca, a, Duration::from_secs(5))
                            .map_err(|e| anyhow::anyhow!("mirrors {:?}: {e}", m.name))?,
                    })
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(Ledger {
                channel: channel(&cfg.ledgerd, &cfg.ledgerd_ca, a, Duration::from_secs(30))
                    .map_err(|e| anyhow::anyhow!("ledgerd: {e}"))?,
                mirrors,
            })
        })
        .collect()
}

impl Ledger {
    pub fn from_channel(channel: Channel) -> Ledger {
        Ledger {
            channel,
            mirrors: Vec::new(),
        }
    }

    /// The ledgerd itself as a mirror (UNIMPLEMENTED when it is not one).
    pub fn mirror(&self) -> MirrorClient<Channel> {
        MirrorClient::new(self.channel.clone())
    }

    /// The account's channel (evidence bundles are built through it).
    pub fn channel(&self) -> &Channel {
        &self.channel
    }

    pub fn audit(&self) -> AuditClient<Channel> {
        AuditClient::new(self.channel.clone()).max_decoding_message_size(MAX_REPLY)
    }
    pub fn query(&self) -> QueryClient<Channel> {
        QueryClient::new(self.channel.clone()).max_decoding_message_size(MAX_REPLY)
    }
    pub fn checkpoints(&self) -> CheckpointsClient<Channel> {
        CheckpointsClient::new(self.channel.clone()).max_decoding_message_size(MAX_REPLY)
    }
    pub fn proofs(&self) -> ProofsClient<Channel> {
        ProofsClient::new(self.channel.clone()).max_decoding_message_size(MAX_REPLY)
    }
    pub fn jackpots(&self) -> JackpotsClient<Channel> {
        JackpotsClient::new(self.channel.clone()).max_decoding_message_size(MAX_REPLY)
    }
}

/// Findings matching `req` from its `after_seq` on, paging until `max` are read or none remain;
/// returns them and whether more remain.
pub async fn findings_upto(
    l: &Ledger,
    mut req: v1::ListFindingsRequest,
    max: usize,
) -> Result<(Vec<v1::Finding>, bool), tonic::Status> {
    let mut client = l.audit();
    let mut out = Vec::new();
    loop {
        req.limit = (max - out.len()).clamp(1, 1000) as u32;
        let page = client.list_findings(req.clone()).await?.into_inner();
        out.extend(page.findings);
        match page.next_after_seq {
            Some(s) if out.len() < max => req.after_seq = Some(s),
            Some(_) => return Ok((out, true)),
            None => return Ok((out, false)),
        }
    }
}
