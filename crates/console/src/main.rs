//! `ledger-console`: the compliance console's server.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use ledger_console::{config::Config, ledger, server, web};

#[derive(Parser)]
#[command(
    version,
    about = "The compliance console: a web application over ledgerd."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the console.
    Serve {
        /// The console's TOML configuration.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
    },
    /// Print an argon2id hash of the password read from standard input (one line).
    HashPassword,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::HashPassword => {
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .context("read the password from standard input")?;
            let pw = line.trim_end_matches(['\n', '\r']);
            anyhow::ensure!(!pw.is_empty(), "no password on standard input");
            println!(
                "{}",
                ledger_console::auth::hash_password(pw).map_err(|e| anyhow::anyhow!("{e}"))?
            );
            Ok(())
        }
        Cmd::Serve { config } => {
            let cfg = Config::load(&config)?;
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?
                .block_on(serve(cfg))
        }
    }
}

async fn serve(cfg: Config) -> anyhow::Result<()> {
    let ledgers = ledger::channels(&cfg)?;
    let tls = match (&cfg.tls, cfg.plaintext) {
        (Some(t), false) => Some(server::server_tls(&t.cert_chain, &t.key)?),
        _ => None,
    };
    let tcp = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .with_context(|| format!("listen {}", cfg.listen))?;
    let local = tcp.local_addr()?;
    let accounts = cfg.accounts.len();
    let app = Arc::new(web::App::new(cfg, ledgers));
    let svc = web::router(app).into_make_service_with_connect_info::<server::Peer>();
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(%local, accounts, "console serving");
    // The address on standard output, for scripts and tests that listen on port 0.
    println!("listening on {scheme}://{local}");
    std::io::stdout().flush()?;
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match tls {
        Some(tls) => {
            axum::serve(server::TlsListener::new(tcp, tls)?, svc)
                .with_graceful_shutdown(shutdown)
                .await?
        }
        None => {
            axum::serve(tcp, svc)
                .with_graceful_shutdown(shutdown)
                .await?
        }
    }
    Ok(())
}
