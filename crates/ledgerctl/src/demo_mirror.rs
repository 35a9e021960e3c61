//! The demo's mirror: a second ledgerd (embedded, as the demo's ledger is) running as a mirror
//! of the demo's ledger (`[mirror]`, `ledgerd::mirror`), with its own store in DIR/mirror and its
//! own live audit. It connects to the ledger with a client certificate of the demo's PKI
//! (`demo-mirror`, a regulator there), copies and re-verifies every entry, and the demo checks
//! that it ends holding the ledger's head and that its live audit's findings digest equals the
//! ledger's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use ledger_core::proto::{
    self as v1, audit_client::AuditClient, mirror_client::MirrorClient, query_client::QueryClient,
};

use crate::common;

/// The mirror's client name at the ledger (a regulator principal there).
pub const CLIENT: &str = "demo-mirror";

/// The mirror's sled cache: it only appends and serves a few reads, so less than a ledger's.
const CACHE_MB: u64 = 64;

/// The mirror's client certificate at the ledger, issued by the demo's CA, and the `[[clients]]`
/// entry the ledger needs to admit it.
pub fn client(pki: &Path) -> anyhow::Result<(ledgerd::config::ClientEntry, PathBuf, PathBuf)> {
    let (cert, key) = crate::pki::issue_client(pki, CLIENT, 2)?;
    let entry = ledgerd::config::ClientEntry {
        name: CLIENT.into(),
        role: "regulator".into(),
        casinos: vec![],
        fingerprint: crate::pki::fingerprint(&cert)?,
    };
    Ok((entry, cert, key))
}

/// What the mirror needs: the ledger to follow and the files to do it with.
pub struct Setup<'a> {
    /// The ledger's `https://` address, its id and its (genesis) public key in hex.
    pub source: &'a str,
    pub ledger_id: &'a str,
    pub ledger_key: &'a str,
    /// The demo's CA; the mirror's client certificate and key at the ledger.
    pub ca: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// The certificate and key the mirror serves with (the demo's server certificate) and who
    /// may read from it (the demo's own client).
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub readers: Vec<ledgerd::config::ClientEntry>,
}

/// A running mirror, and the task that waits for it to hold the ledger's head.
pub struct Mirror {
    server: ledgerd::Server,
    pub url: String,
    pub dir: PathBuf,
    source: tonic::transport::Channel,
    caught_up: tokio::task::JoinHandle<anyhow::Result<Outcome>>,
}

/// How long the mirror may take to hold the ledger's head.
const TIMEOUT: Duration = Duration::from_secs(600);

/// The comparison, once the mirror holds the ledger's head.
#[derive(Debug, serde::Serialize)]
pub struct Outcome {
    pub data_dir: PathBuf,
    /// Entries the mirror holds (the ledger's head index + 1) and the head's hash (hex).
    pub entries: u64,
    pub head_hash: String,
    pub checkpoints: u64,
    pub alarms: u64,
    /// From the mirror's start to holding the ledger's head, with its audit caught up.
    pub catch_up_seconds: f64,
    pub findings: u64,
    pub findings_digest: String,
    pub source_findings: u64,
    pub source_findings_digest: String,
    /// Same head (index and hash) and same findings digest as the ledger.
    pub equal: bool,
}

/// Start the mirror on a free loopback port, its store in `dir` (created), and start waiting
/// for it to hold the head of the ledger at `source`.
pub async fn start(
    s: Setup<'_>,
    dir: PathBuf,
    source: &tonic::transport::Channel,
) -> anyhow::Result<Mirror> {
    let mut cfg = ledgerd::Config {
        listen: "127.0.0.1:0".parse()?,
        ledger_id: s.ledger_id.into(),
        mirror: Some(ledgerd::config::MirrorSection {
            source: s.source.into(),
            source_ledger_id: s.ledger_id.into(),
            source_ledger_key: s.ledger_key.into(),
            tls_ca: Some(s.ca.clone()),
            tls_cert: Some(s.client_cert),
            tls_key: Some(s.client_key),
            max_group: 4096,
            poll_ms: 100,
        }),
        clients: s.readers,
        ..Default::default()
    };
    cfg.store.cache_capacity_mb = CACHE_MB;
    cfg.tls.cert_chain = Some(s.server_cert);
    cfg.tls.key = Some(s.server_key);
    cfg.tls.client_ca = vec![s.ca];
    let started = Instant::now();
    let server = ledgerd::Server::start(cfg, dir.clone(), ledgerd::Init::Create)
        .await
        .context("starting the demo's mirror")?;
    let url = format!("https://{}", server.addr);
    let caught_up = tokio::spawn(compare(
        source.clone(),
        url.clone(),
        dir.clone(),
        started,
        TIMEOUT,
    ));
    Ok(Mirror {
        server,
        url,
        dir,
        source: source.clone(),
        caught_up,
    })
}

impl Mirror {
    /// Once the mirror has held the ledger's head, compare again (the ledger may have taken
    /// more since), keep the first time it caught up, and stop the mirror.
    pub async fn finish(self) -> anyhow::Result<Outcome> {
        let outcome = match self.caught_up.await {
            Ok(Ok(first)) => compare(
                self.source.clone(),
                self.url.clone(),
                self.dir.clone(),
                Instant::now(),
                TIMEOUT,
            )
            .await
            .map(|now| Outcome {
                catch_up_seconds: first.catch_up_seconds,
                ..now
            }),
            Ok(Err(e)) => Err(e),
            Err(e) => Err(e.into()),
        };
        self.server.stop().await.context("stopping the mirror")?;
        outcome
    }
}

/// Wait (up to `timeout`) until the mirror at `url` holds the head of the ledger at `source`
/// (same index, same hash) and both live audits are at that head; then read both findings
/// digests.
async fn compare(
    source: tonic::transport::Channel,
    url: String,
    dir: PathBuf,
    started: Instant,
    timeout: Duration,
) -> anyhow::Result<Outcome> {
    let source = &source;
    let mirror = common::channel(&url).await?;
    let deadline = Instant::now() + timeout;
    let head = |ch: tonic::transport::Channel| async move {
        anyhow::Ok(
            QueryClient::new(ch)
                .get_head(v1::GetHeadRequest {})
                .await?
                .into_inner(),
        )
    };
    let status = |ch: tonic::transport::Channel| async move {
        anyhow::Ok(
            AuditClient::new(ch)
                .get_status(v1::AuditStatusRequest {})
                .await?
                .into_inner(),
        )
    };
    loop {
        let (a, b) = (head(source.clone()).await?, head(mirror.clone()).await?);
        if a.index == b.index && a.entry_hash == b.entry_hash {
            let (sa, sb) = (status(source.clone()).await?, status(mirror.clone()).await?);
            let at_head = |s: &v1::AuditStatus| s.position == a.index as i64 && s.head == a.index;
            // Both audits at that head, and the ledger has not moved on meanwhile.
            if at_head(&sa) && at_head(&sb) && head(source.clone()).await?.index == a.index {
                let m = MirrorClient::new(mirror.clone())
                    .get_status(v1::GetMirrorStatusRequest {})
                    .await?
                    .into_inner();
                return Ok(Outcome {
                    data_dir: dir.clone(),
                    entries: b.index + 1,
                    head_hash: hex::encode(&b.entry_hash),
                    checkpoints: m.checkpoints,
                    alarms: m.alarms,
                    catch_up_seconds: started.elapsed().as_secs_f64(),
                    equal: sa.findings_digest == sb.findings_digest
                        && sa.findings == sb.findings
                        && m.alarms == 0,
                    findings: sb.findings,
                    findings_digest: sb.findings_digest,
                    source_findings: sa.findings,
                    source_findings_digest: sa.findings_digest,
                });
            }
        }
        if Instant::now() > deadline {
            bail!(
                "the mirror did not reach the ledger's head within {} s (ledger at entry {}, mirror at {})",
                timeout.as_secs(),
                a.index,
                b.index
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
