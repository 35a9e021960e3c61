//! # ledgerd: the ledger daemon
//!
//! Opens the store (checking the chain's tail against the last checkpoint), starts the durable
//! group-commit [`pipeline`], and serves gRPC: `Ingest`, `Query`, `Checkpoints`, plus standard
//! health checking and server reflection (so `grpcurl` works). Signs a checkpoint at startup (if
//! the chain grew since the last one), periodically, on request and at shutdown.
//!
//! The binary (`main.rs`) only parses arguments and calls [`run`]; `ledgerctl demo` embeds the same
//! server through [`Server::start`].

pub mod access;
pub mod allocator;
pub mod audit;
pub mod config;
pub mod connections;
pub mod export_nats;
pub mod filesystem;
pub mod limits;
pub mod load;
pub mod logging;
pub mod metrics;
pub mod mirror;
pub mod notify;
pub mod pipeline;
pub mod process;
pub mod proofs;
pub mod queries;
pub mod reply;
pub mod service;
pub mod stats;
pub mod tlog_http;
pub mod tls;
pub mod witnesses;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use ledger_core::proto::{
    audit_server::AuditServer, checkpoints_server::CheckpointsServer, ingest_server::IngestServer,
    jackpots_server::JackpotsServer, query_server::QueryServer,
};
use ledger_store::Store;
use tokio::sync::oneshot;

pub use config::Config;
pub use pipeline::{Ledger, PipelineConfig};

/// A running server.
pub struct Server {
    /// The address actually bound (useful with port 0).
    pub addr: SocketAddr,
    /// The metrics endpoint's address, when `[metrics] listen` is set.
    pub metrics_addr: Option<SocketAddr>,
    /// Hex of the ledger's public key.
    pub ledger_public_key: String,
    /// The TLS files and the clients, reloaded by [`Server::reload`].
    tls: Option<tls::Reloadable>,
    clients: access::Clients,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

/// Where `ledgerd rotate-ledger-key` finds the new key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewLedgerKey {
    /// A key file (PKCS#8 PEM, mode 0600), created if it does not exist.
    File(PathBuf),
    /// A key pair in the token of `[ledger_key]`, under this label (`ledgerctl hsm keygen`).
    TokenLabel(String),
}

/// Rotate the ledger's key with ledgerd stopped ([`ledger_store::Store::rotate_ledger_key`]):
/// the key in force (from `cfg`) signs a record naming the new one, which signs everything
/// after it. The configuration must then name the new key.
pub fn rotate_ledger_key(
    cfg: &Config,
    data_dir: &Path,
    new: &NewLedgerKey,
) -> anyhow::Result<ledger_store::Rotation> {
    let open = cfg.open_config()?;
    let old = cfg.key_source()?;
    let new = match new {
        NewLedgerKey::File(f) => ledger_store::KeySource::File(f.clone()),
        NewLedgerKey::TokenLabel(label) => {
            let section = cfg.ledger_key.as_ref().context(
                "--new-key-label names a key in the token of [ledger_key], which the configuration does not have (use --new-key FILE)",
            )?;
            let mut p = section.pkcs11()?;
            p.key_label = label.clone();
            ledger_store::KeySource::Pkcs11(p)
        }
    };
    check_init(data_dir, Init::Existing)?;
    if let Some(pinned) = &cfg.ledger_public_key {
        let genesis = Store::open_existing(data_dir)
            .and_then(|s| s.genesis_public_key())
            .with_context(|| format!("cannot read the ledger in {}", data_dir.display()))?;
        let genesis = hex::encode(genesis.as_bytes());
        anyhow::ensure!(
            pinned.eq_ignore_ascii_case(&genesis),
            "the ledger in {} has key {genesis}, but ledger_public_key in the configuration pins {pinned}: this is not the ledger this configuration serves",
            data_dir.display()
        );
    }
    Store::rotate_ledger_key(data_dir, &open, &old, &new).with_context(|| {
        format!(
            "cannot rotate the key of the ledger in {}",
            data_dir.display()
        )
    })
}

/// Whether [`Server::start`] may create a ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// Serve the ledger the data directory holds; a directory without one is refused (it was
    /// lost or replaced, or this is a new deployment that has not said so).
    Existing,
    /// Create a new ledger (new key, genesis); a directory that already holds one is refused.
    Create,
}

/// Is there a ledger in `dir`, and may this start create or open it?
fn check_init(dir: &Path, init: Init) -> anyhow::Result<()> {
    let holds_a_ledger = dir.join("db").exists();
    match (init, holds_a_ledger) {
        (Init::Existing, false) => anyhow::bail!(
            "no ledger in {}: if this is a new ledger, start once with --init to create it; if \
             a ledger was there, its data directory was lost or replaced: restore it (ledgerd \
             never starts a new ledger silently)",
            dir.display()
        ),
        (Init::Create, true) => anyhow::bail!(
            "--init: {} already holds a ledger; start without --init to serve it",
            dir.display()
        ),
        _ => Ok(()),
    }
}

impl Server {
    /// Bind `cfg.listen` (and `metrics.listen`), open the ledger in `data_dir` (or create it,
    /// with [`Init::Create`]) and serve until [`Server::stop`] (or a fatal storage error).
    pub async fn start(cfg: Config, data_dir: PathBuf, init: Init) -> anyhow::Result<Server> {
        let open = cfg.open_config()?;
        // The TLS files and the clients before anything is bound or opened: a bad file is
        // reported naming its setting, and nothing else happens.
        let transport = cfg.transport()?;
        let clients = access::Clients::new(cfg.clients()?);
        let tls = transport.map(tls::Reloadable::load).transpose()?;
        if tls.is_none() {
            tracing::warn!(
                "tls.plaintext: serving without TLS on loopback; every local caller has every role"
            );
        }
        // Before anything is created or opened in the data directory: the listeners (an address
        // in use leaves the directory as it was; connections wait in the backlog until the
        // ledger serves), then the filesystem's check.
        let listener = tokio::net::TcpListener::bind(cfg.listen)
            .await
            .with_context(|| format!("cannot listen on {}", cfg.listen))?;
        let addr = listener.local_addr()?;
        let metrics = match cfg.metrics.listen {
            Some(a) => {
                let l = tokio::net::TcpListener::bind(a)
                    .await
                    .with_context(|| format!("cannot listen on {a} (metrics.listen)"))?;
                let at = l.local_addr()?;
                tracing::info!(addr = %at, "metrics at http://{at}/metrics");
                Some(l)
            }
            None => None,
        };
        check_init(&data_dir, init)?;
        filesystem::check(&data_dir, cfg.store.require_safe_filesystem)?;
        if let Some(m) = cfg.mirror.clone() {
            return Server::start_mirror(cfg, m, data_dir, (listener, metrics), (tls, clients))
                .await;
        }
        let dir = data_dir.clone();
        let key_source = cfg.key_source()?;
        let (store, appender) = tokio::task::spawn_blocking(move || {
            Store::open_writer_with_signer(&dir, &open, &key_source)
        })
        .await?
        .with_context(|| format!("cannot open the ledger in {}", data_dir.display()))?;
        // The ledger's identity is its genesis key, whatever key signs now (after a rotation):
        // a data directory holding another ledger (replaced, or another ledger's restored by
        // mistake) is refused before anything is served.
        let ledger_public_key = hex::encode(
            store
                .genesis_public_key()
                .context("the ledger's genesis key")?
                .to_bytes(),
        );
        match &cfg.ledger_public_key {
            Some(pinned) if !pinned.eq_ignore_ascii_case(&ledger_public_key) => anyhow::bail!(
                "the ledger in {} has key {ledger_public_key}, but ledger_public_key in the \
                 configuration pins {pinned}: this is not the ledger this configuration serves",
                data_dir.display()
            ),
            Some(_) => {}
            None if init == Init::Create => tracing::warn!(
                "new ledger created; pin its identity in the configuration: ledger_public_key = \"{ledger_public_key}\""
            ),
            None => tracing::warn!(
                "ledger_public_key is not set: a replaced data directory holding another ledger \
                 would be served; pin it: ledger_public_key = \"{ledger_public_key}\""
            ),
        }
        let gate = mirror::replication::Gate::new(&cfg.replication);
        let ledger = Ledger::start_replicated(
            appender,
            PipelineConfig {
                max_batch: cfg.ingest.max_batch,
                coalesce: cfg.coalesce(),
                queue_capacity: cfg.ingest.queue_capacity,
                queue_bytes: cfg.ingest.queue_mib << 20,
                max_body_bytes: cfg.ingest.max_body_bytes,
                time: cfg.time_policy(),
                clock_step_threshold_ms: cfg.ingest.clock_step_threshold_ms,
                signed_receipts: cfg.ingest.signed_receipts,
            },
            gate.clone(),
        );
        ledger
            .checkpoint("startup")
            .await
            .context("startup checkpoint")?;
        let metrics_addr = metrics.as_ref().map(|l| l.local_addr()).transpose()?;
        let (shutdown, shutdown_rx) = oneshot::channel();
        let task = tokio::spawn(serve(
            cfg,
            data_dir.clone(),
            ledger,
            (listener, metrics),
            (tls.clone(), clients.clone()),
            shutdown_rx,
            Role::Source(gate),
        ));
        tracing::info!(%addr, data_dir = %data_dir.display(), ledger_key = %ledger_public_key, "ledgerd serving");
        Ok(Server {
            addr,
            metrics_addr,
            ledger_public_key,
            tls,
            clients,
            shutdown: Some(shutdown),
            task,
        })
    }

    /// [`Server::start`] for a mirror (`[mirror]`): the copy of another ledger, served read-only
    /// (`crate::mirror`). It signs nothing: no checkpoints, no witnesses.
    async fn start_mirror(
        mut cfg: Config,
        m: config::MirrorSection,
        data_dir: PathBuf,
        (listener, metrics): (tokio::net::TcpListener, Option<tokio::net::TcpListener>),
        (tls, clients): (Option<tls::Reloadable>, access::Clients),
    ) -> anyhow::Result<Server> {
        let addr = listener.local_addr()?;
        let key = hex::encode(m.ledger_key()?.to_bytes());
        let (ledger, running) =
            mirror::start(&m, &data_dir, cfg.store.cache_capacity_mb << 20).await?;
        cfg.ledger_id = m.source_ledger_id.clone();
        cfg.checkpoint.interval_secs = 0;
        cfg.witnesses.clear();
        let metrics_addr = metrics.as_ref().map(|l| l.local_addr()).transpose()?;
        let (shutdown, shutdown_rx) = oneshot::channel();
        let task = tokio::spawn(serve(
            cfg,
            data_dir.clone(),
            ledger,
            (listener, metrics),
            (tls.clone(), clients.clone()),
            shutdown_rx,
            Role::Mirror(running),
        ));
        tracing::info!(%addr, data_dir = %data_dir.display(), source = %m.source, "ledgerd serving as a mirror");
        Ok(Server {
            addr,
            metrics_addr,
            ledger_public_key: key,
            tls,
            clients,
            shutdown: Some(shutdown),
            task,
        })
    }

    /// Stop: finish open streams (up to the grace period), sign a shutdown checkpoint, sync.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        self.task.await?
    }

    /// Read the TLS certificate, key and client CA files again, and take `clients` (the
    /// `[[clients]]` of a configuration read again) when given. New connections and calls use
    /// them; established connections stay. On an error nothing changes.
    pub fn reload(&self, clients: Option<&Config>) -> anyhow::Result<()> {
        let map = clients.map(|c| c.clients()).transpose()?;
        if let Some(t) = &self.tls {
            t.reload()?;
        }
        if let Some(m) = map {
            self.clients.replace(m);
        }
        Ok(())
    }

    /// Wait until the server ends by itself (only after a fatal storage error).
    pub async fn wait(&mut self) -> anyhow::Result<()> {
        (&mut self.task).await?
    }
}

/// What a ledgerd serves as: a ledger of its own (whose receipts may wait for mirrors), or a
/// mirror of another.
enum Role {
    Source(Option<std::sync::Arc<mirror::replication::Gate>>),
    Mirror(mirror::Running),
}

async fn serve(
    cfg: Config,
    data_dir: PathBuf,
    ledger: Ledger,
    (listener, metrics): (tokio::net::TcpListener, Option<tokio::net::TcpListener>),
    (tls, clients): (Option<tls::Reloadable>, access::Clients),
    shutdown: oneshot::Receiver<()>,
    role: Role,
) -> anyhow::Result<()> {
    let (mirror, gate) = match role {
        Role::Source(g) => (None, g),
        Role::Mirror(m) => (Some(m), None),
    };
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<IngestServer<service::IngestService>>()
        .await;
    health
        .set_serving::<QueryServer<service::QueryService>>()
        .await;
    health
        .set_serving::<CheckpointsServer<service::CheckpointService>>()
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(ledger_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let max = cfg.grpc.max_message_bytes;
    let ingest = IngestServer::new(service::IngestService {
        ledger: ledger.clone(),
        max_in_flight: cfg.ingest.max_in_flight_per_stream,
        in_flight_total: std::sync::Arc::new(tokio::sync::Semaphore::new(
            cfg.ingest.max_in_flight_total,
        )),
        unread_limit: Duration::from_secs(cfg.ingest.unread_receipts_secs),
        device_rates: limits::TokenBuckets::new(
            cfg.ingest.device_rate_per_sec,
            cfg.ingest.device_burst,
        )
        .map(std::sync::Arc::new),
    })
    .max_decoding_message_size(max);
    let entry_streams = std::sync::Arc::new(limits::EntryStreams::new(
        cfg.grpc.max_entry_streams,
        cfg.grpc.max_entry_streams_per_principal,
    ));
    let queries = queries::QueryPool::start(cfg.grpc.query_threads)
        .context("cannot start the query threads")?;
    let query = QueryServer::new(service::QueryService {
        ledger: ledger.clone(),
        ledger_id: cfg.ledger_id.clone(),
        entry_streams: entry_streams.clone(),
        max_reply_bytes: max,
        queries: queries.clone(),
    })
    .max_encoding_message_size(max);
    let proofs = ledger_proto::v1::proofs_server::ProofsServer::new(proofs::ProofService {
        ledger: ledger.clone(),
    })
    .max_encoding_message_size(max);
    health
        .set_serving::<ledger_proto::v1::proofs_server::ProofsServer<proofs::ProofService>>()
        .await;
    let mut checkpoint_service = service::CheckpointService::new(
        ledger.clone(),
        entry_streams,
        Duration::from_millis(cfg.checkpoint.request_interval_ms),
    );
    for w in &cfg.witnesses {
        checkpoint_service
            .witnesses
            .push((w.name.clone(), w.keys()?));
    }
    checkpoint_service.witnesses_required = cfg.checkpoint.witnesses_required;
    let checkpoints = CheckpointsServer::new(checkpoint_service);

    // The live audit and its services.
    let calendar = std::sync::Arc::new(cfg.reports.calendar()?);
    let mut live = if cfg.audit.enabled {
        let dir = data_dir.join("audit");
        Some(
            audit::LiveAudit::start(
                &dir,
                ledger_audit::replay::settings_with(
                    cfg.audit.keep_round_states,
                    cfg.audit.device_clock_drift_ms,
                ),
                &calendar,
                ledger.clone(),
            )
            .with_context(|| format!("cannot start the audit in {}", dir.display()))?,
        )
    } else {
        None
    };
    let gauges = live.as_ref().map(|a| metrics::AuditGauges {
        committed: a.committed.clone(),
        halted: a.halted.clone(),
        store: a.store.clone(),
    });
    let metrics_tls = tls.clone().map(|tls| metrics::MetricsTls {
        tls,
        clients: clients.clone(),
    });
    let metrics = metrics.map(|l| {
        tokio::spawn(metrics::serve(
            l,
            ledger.clone(),
            (gauges, gate.clone()),
            metrics_tls,
        ))
    });
    let (audit_service, jackpot_service) = match &live {
        Some(a) => {
            health
                .set_serving::<AuditServer<audit::AuditService>>()
                .await;
            health
                .set_serving::<JackpotsServer<audit::JackpotService>>()
                .await;
            (
                Some(
                    AuditServer::new(audit::AuditService {
                        store: a.store.clone(),
                        replayer: a.replayer.clone(),
                        committed: a.committed.clone(),
                        halted: a.halted.clone(),
                        ledger: ledger.clone(),
                        max_reply_bytes: max,
                        queries: queries.clone(),
                        calendar: calendar.clone(),
                        reviews: Default::default(),
                    })
                    .max_encoding_message_size(max),
                ),
                Some(
                    JackpotsServer::new(audit::JackpotService {
                        replayer: a.replayer.clone(),
                        store: a.store.clone(),
                        max_reply_bytes: max,
                        queries: queries.clone(),
                    })
                    .max_encoding_message_size(max),
                ),
            )
        }
        None => (None, None),
    };

    // The export of durable entries to NATS JetStream, beside ingest (never in its way).
    let exporter = cfg
        .export
        .nats
        .clone()
        .map(|n| export_nats::Exporter::start(n, cfg.ledger_id.clone(), ledger.clone()));

    // Periodic checkpoints.
    let periodic = if cfg.checkpoint.interval_secs > 0 {
        let l = ledger.clone();
        let every = Duration::from_secs(cfg.checkpoint.interval_secs);
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tick.tick().await;
                if let Err(e) = l.checkpoint("periodic").await {
                    tracing::error!(error = %e, "periodic checkpoint failed");
                    return;
                }
            }
        }))
    } else {
        None
    };

    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let incoming = connections::Limited::new(
        tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
        cfg.grpc.max_connections,
        cfg.grpc.max_connections_per_peer,
    );
    let keepalive =
        (cfg.grpc.keepalive_secs > 0).then(|| Duration::from_secs(cfg.grpc.keepalive_secs));
    let identify = match &tls {
        Some(_) => access::Identify::Certificates(clients),
        None => access::Identify::Local,
    };
    let builder = tonic::transport::Server::builder()
        .initial_stream_window_size(Some(cfg.grpc.stream_window_bytes))
        .initial_connection_window_size(Some(cfg.grpc.connection_window_bytes))
        .max_concurrent_streams(Some(cfg.grpc.max_streams_per_connection))
        .http2_keepalive_interval(keepalive)
        .http2_keepalive_timeout(keepalive.map(|_| Duration::from_secs(20)));
    // An idle connection holds its place at most this long (GOAWAY, then closed); open streams
    // go on to their end (no forced close after it).
    let builder = match cfg.grpc.max_connection_age_secs {
        0 => builder,
        s => builder.max_connection_age(Duration::from_secs(s)),
    };
    // A span per call (an ingest stream is one call) for the OTLP export; without the feature
    // the log lines stay as they were.
    #[cfg(feature = "otel")]
    let builder = builder.trace_fn(
        |req| tracing::info_span!("grpc", otel.name = %req.uri().path(), rpc.system = "grpc"),
    );
    let router = builder
        .layer(access::Access {
            identify,
            calls: limits::TokenBuckets::new(
                cfg.grpc.principal_calls_per_sec,
                cfg.grpc.principal_call_burst,
            )
            .map(std::sync::Arc::new),
        })
        .add_service(health_service)
        .add_service(reflection)
        .add_service(ingest)
        .add_service(query)
        .add_service(checkpoints)
        .add_service(proofs)
        .add_optional_service(audit_service)
        .add_optional_service(jackpot_service)
        .add_optional_service(gate.clone().map(|gate| {
            ledger_proto::v1::replication_server::ReplicationServer::new(
                mirror::replication::ReplicationService {
                    gate,
                    store: ledger.store().clone(),
                },
            )
        }))
        .add_optional_service(mirror.as_ref().map(|r| {
            ledger_proto::v1::mirror_server::MirrorServer::new(mirror::MirrorService {
                status: r.status.clone(),
                store: r.store.clone(),
            })
        }));
    let stopped = async {
        let _ = stop_rx.await;
    };
    type Serving =
        std::pin::Pin<Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send>>;
    let server: Serving = match tls {
        Some(t) => Box::pin(router.serve_with_incoming_shutdown(
            tls::handshakes(
                incoming,
                t,
                Duration::from_millis(cfg.tls.handshake_timeout_ms),
            ),
            stopped,
        )),
        None => Box::pin(router.serve_with_incoming_shutdown(incoming, stopped)),
    };
    let mut server = tokio::spawn(server);
    // Each new checkpoint to the witnesses, if any are configured.
    let witness_task = if cfg.witnesses.is_empty() {
        None
    } else {
        let mut ws = Vec::new();
        for w in &cfg.witnesses {
            let key = ledger_core::signing::parse_public_key_hex(&w.public_key)
                .map_err(|e| anyhow::anyhow!("[[witnesses]] {}: {e}", w.name))?;
            let ml_dsa = w.keys()?.into_iter().nth(1);
            ws.push(
                witnesses::Witness::new(&w.name, &w.url, key)
                    .map_err(|e| anyhow::anyhow!(e))?
                    .with_ml_dsa(ml_dsa),
            );
        }
        Some(tokio::spawn(witnesses::run(
            ledger.clone(),
            ws,
            Duration::from_millis(cfg.checkpoint.witness_timeout_ms),
        )))
    };
    let mut fatal = ledger.fatal();
    let fatal_msg = tokio::select! {
        _ = shutdown => None,
        f = fatal.wait_for(|f| f.is_some()) => f.ok().and_then(|m| m.clone()),
        r = &mut server => {
            r??;
            None
        }
    };
    let _ = stop_tx.send(());
    if !server.is_finished() {
        match tokio::time::timeout(
            Duration::from_secs(cfg.grpc.shutdown_grace_secs),
            &mut server,
        )
        .await
        {
            Ok(r) => r??,
            Err(_) => {
                tracing::warn!("open streams did not finish within the grace period; closing them");
                server.abort();
            }
        }
    }
    for t in [periodic, metrics].into_iter().flatten() {
        t.abort();
    }
    if let Some(t) = witness_task {
        t.abort();
    }
    // Receipts still waiting for mirrors go to streams that are closed by now.
    if let Some(g) = &gate {
        g.close();
    }
    let is_mirror = mirror.is_some();
    if let Some(m) = mirror {
        // A mirror's live audit first: stopping the follower closes the durable head the audit
        // waits on, which it would report as the ledger gone.
        if let Some(a) = live.take() {
            tokio::task::spawn_blocking(move || a.stop()).await?;
        }
        m.stop().await;
    }
    drop(exporter);
    if let Some(a) = live {
        // Commit what the audit has pending and snapshot it.
        tokio::task::spawn_blocking(move || a.stop()).await?;
    }
    ledger.stats().log_summary(std::time::Instant::now());
    if let Some(m) = fatal_msg {
        anyhow::bail!("the ledger stopped acknowledging: {m}");
    }
    if !is_mirror {
        ledger
            .checkpoint("shutdown")
            .await
            .context("shutdown checkpoint")?;
    }
    ledger.store().sync().context("final sync")?;
    tracing::info!("ledgerd stopped cleanly");
    Ok(())
}

/// Run ledgerd until SIGINT/SIGTERM (clean stop, exit 0) or a fatal storage error (exit 1).
/// SIGHUP reads the TLS files again and, from `config` (the file it was started with), the
/// `[[clients]]`; other settings need a restart.
pub async fn run(
    cfg: Config,
    data_dir: &Path,
    config: Option<&Path>,
    init: Init,
) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut server = Server::start(cfg, data_dir.to_path_buf(), init).await?;
    // Handlers first: a SIGTERM sent as soon as the line below is read must stop ledgerd
    // cleanly (shutdown checkpoint, sync), not kill it by the signal's default action.
    let (mut int, mut term, mut hup) = (
        signal(SignalKind::interrupt())?,
        signal(SignalKind::terminate())?,
        signal(SignalKind::hangup())?,
    );
    // One machine-readable line on stdout: tests and scripts read the bound address from it.
    println!(
        "ledgerd listening on {} ledger_key {}",
        server.addr, server.ledger_public_key
    );
    // Under systemd (Type=notify): ready now, and alive at half the watchdog's interval.
    notify::ready(server.addr);
    let mut watchdog = notify::watchdog();
    loop {
        tokio::select! {
            _ = int.recv() => tracing::info!("SIGINT: stopping"),
            _ = term.recv() => tracing::info!("SIGTERM: stopping"),
            _ = notify::tick(&mut watchdog) => {
                notify::alive();
                continue;
            }
            _ = hup.recv() => {
                let fresh = config.map(Config::load).transpose();
                match fresh.map_err(anyhow::Error::from).and_then(|c| server.reload(c.as_ref())) {
                    Ok(()) => tracing::info!("SIGHUP: TLS files and clients reloaded"),
                    Err(e) => tracing::error!(error = %format!("{e:#}"), "SIGHUP: reload failed; nothing changed"),
                }
                continue;
            }
            r = server.wait() => return r,
        }
        break;
    }
    notify::stopping();
    server.stop().await
}
