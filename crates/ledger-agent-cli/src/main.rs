//! `ledger-agent`: a machine's or table's reporting agent, for vendors who do not write gRPC
//! code. See docs/agents.md ("The ledger-agent tool").

mod input;
mod run;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use ledger_agent::outbox::Outbox;

#[derive(Parser)]
#[command(
    name = "ledger-agent",
    version,
    about = "Sign a device's events in a crash-safe outbox and stream them to a ledger"
)]
struct Cli {
    /// Machine-readable output: JSON lines on standard output.
    #[arg(long, global = true)]
    json: bool,
    /// CA certificate that signed ledgerd's certificate (TLS).
    #[arg(long = "tls-ca", global = true, env = "LEDGER_CA", value_name = "PEM")]
    tls_ca: Option<PathBuf>,
    /// This agent's client certificate (a device principal in ledgerd's [[clients]]).
    #[arg(
        long = "tls-cert",
        global = true,
        env = "LEDGER_CERT",
        value_name = "PEM"
    )]
    tls_cert: Option<PathBuf>,
    /// This agent's client key.
    #[arg(
        long = "tls-key",
        global = true,
        env = "LEDGER_KEY",
        value_name = "PEM"
    )]
    tls_key: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Device {
    /// The device's id, as registered at the ledger.
    #[arg(long, env = "LEDGER_DEVICE_ID")]
    device_id: String,
    /// The device's secret key file (PKCS#8 PEM, or a hex seed: `ledgerctl keygen` writes one).
    #[arg(long, env = "LEDGER_DEVICE_KEY")]
    key: PathBuf,
    /// The outbox directory: one per device, on a disk that survives a power loss.
    #[arg(long, env = "LEDGER_OUTBOX")]
    outbox: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Sign JSON Lines events into the outbox, stream them; exit 0 once all are acknowledged.
    Run {
        #[command(flatten)]
        device: Device,
        /// The ledger's gRPC address.
        #[arg(long, env = "LEDGER_SERVER", default_value = "127.0.0.1:50051")]
        server: String,
        /// Read this JSON Lines file (a rerun takes only lines it has not taken).
        #[arg(long, conflicts_with = "spool")]
        input: Option<PathBuf>,
        /// Take `*.jsonl` files from this directory, whole, and remove them once taken.
        #[arg(long)]
        spool: Option<PathBuf>,
        /// With --spool: take the files there now, then finish (default: watch for ever).
        #[arg(long, requires = "spool")]
        once: bool,
        /// With --spool: how often to look for new files, in ms.
        #[arg(long, default_value_t = 500, requires = "spool")]
        poll_ms: u64,
        /// Most lines signed and fsynced together.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        batch: u64,
        /// Give up after this many seconds without a receipt while events wait (0: never).
        #[arg(long, default_value_t = 0)]
        give_up_after: u64,
    },
    /// What the outbox holds: pending events, the next sequence, the last receipt.
    Status {
        #[command(flatten)]
        device: Device,
    },
    /// Write the ledger's signed receipt of an acknowledged event, for `ledgerctl verify-receipt`.
    Receipt {
        #[command(flatten)]
        device: Device,
        /// The event's sequence number (one of the newest 10,000 acknowledged).
        #[arg(long)]
        sequence: u64,
        /// Write the receipt file here (default: standard output).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Drop the oldest pending event, refused for good, and renumber the rest after it.
    Discard {
        #[command(flatten)]
        device: Device,
        /// The ledger's gRPC address.
        #[arg(long, env = "LEDGER_SERVER", default_value = "127.0.0.1:50051")]
        server: String,
        /// The refused event's sequence number (the oldest pending).
        #[arg(long)]
        sequence: u64,
    },
}

fn open(d: &Device) -> anyhow::Result<Arc<Outbox>> {
    let key = ledger_agent::keys::read_secret(&d.key).context("--key")?;
    Ok(Arc::new(Outbox::open(&d.outbox, &d.device_id, key)?))
}

fn main() {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,sled=error"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let json = cli.json;
    if let Err(e) = ledger_agent::tls::init_from_args_or_env(
        cli.tls_ca.as_deref(),
        cli.tls_cert.as_deref(),
        cli.tls_key.as_deref(),
    ) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            std::process::exit(1);
        }
    };
    let result = rt.block_on(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(e) => return Err(anyhow::anyhow!("cannot watch for SIGTERM: {e}")),
            };
        // A signal ends the run wherever it is: the outbox is written so that a kill at any
        // point loses nothing, and the next run sends what is pending.
        let stopped = |sig: &str| {
            eprintln!(
                "stopped by {sig}: what was taken and not acknowledged stays in the outbox and is \
                 sent on the next run"
            );
        };
        tokio::select! {
            r = command(cli.command, json) => r,
            _ = tokio::signal::ctrl_c() => { stopped("SIGINT"); std::process::exit(130) }
            _ = term.recv() => { stopped("SIGTERM"); std::process::exit(143) }
        }
    });
    if let Err(e) = result {
        if json {
            println!("{}", serde_json::json!({"error": format!("{e:#}")}));
        }
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn command(c: Command, json: bool) -> anyhow::Result<()> {
    match c {
        Command::Run {
            device,
            server,
            input,
            spool,
            once,
            poll_ms,
            batch,
            give_up_after,
        } => {
            let outbox = open(&device)?;
            let input = match (input, spool) {
                (Some(f), _) => run::Input::File(f),
                (None, Some(dir)) => run::Input::Spool {
                    dir,
                    once,
                    poll: Duration::from_millis(poll_ms.max(10)),
                },
                (None, None) => run::Input::Stdin,
            };
            let bar = if json {
                indicatif::ProgressBar::hidden()
            } else {
                let b = indicatif::ProgressBar::with_draw_target(
                    Some(0),
                    indicatif::ProgressDrawTarget::stderr(),
                );
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{bar:40} {pos}/{len} acknowledged  {per_sec}  {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                b
            };
            let opts = run::RunOpts {
                server,
                input,
                batch: batch as usize,
                give_up_after: (give_up_after > 0).then(|| Duration::from_secs(give_up_after)),
            };
            let started = std::time::Instant::now();
            let ui = run::Ui {
                bar: bar.clone(),
                json,
            };
            let outcome = run::run(outbox.clone(), opts, ui).await;
            bar.finish_and_clear();
            let outcome = outcome?;
            let last = outbox.last_receipt()?;
            let secs = started.elapsed().as_secs_f64();
            if json {
                println!(
                    "{}",
                    serde_json::json!({"done": {
                        "taken": outcome.taken,
                        "acknowledged": outcome.acknowledged,
                        "duplicates": outcome.duplicates,
                        "reconnects": outcome.reconnects,
                        "seconds": secs,
                        "last_receipt": last.map(|(s, a)| serde_json::json!({
                            "sequence": s, "index": a.index,
                            "entry_hash": hex::encode(&a.entry_hash),
                        })),
                    }})
                );
            } else {
                println!(
                    "{} events taken, {} acknowledged ({} already held by the ledger) in {secs:.1} s, {} reconnects; the outbox has nothing pending{}",
                    outcome.taken,
                    outcome.acknowledged,
                    outcome.duplicates,
                    outcome.reconnects,
                    last.map(|(s, a)| format!(
                        "; last receipt: sequence {s} at entry {} ({})",
                        a.index,
                        hex::encode(&a.entry_hash)
                    ))
                    .unwrap_or_default()
                );
            }
            Ok(())
        }
        Command::Status { device } => {
            let outbox = open(&device)?;
            let c = outbox.counts()?;
            let last = outbox.last_receipt()?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "device_id": device.device_id,
                        "pending": c.pending,
                        "first_pending": c.first_pending,
                        "next_sequence": c.next_sequence,
                        "receipts_kept": c.receipts_kept,
                        "last_receipt": last.map(|(s, a)| serde_json::json!({
                            "sequence": s, "index": a.index,
                            "entry_hash": hex::encode(&a.entry_hash),
                            "received_at_ms": a.received_at_ms,
                        })),
                    })
                );
            } else {
                println!("device        {}", device.device_id);
                println!(
                    "next sequence {}",
                    c.next_sequence
                        .map_or("not set (the first run asks the ledger)".into(), |n| n
                            .to_string())
                );
                match c.first_pending {
                    Some(f) => println!("pending       {} (from sequence {f})", c.pending),
                    None => println!("pending       0"),
                }
                if let Some((s, a)) = last {
                    println!(
                        "last receipt  sequence {s} at entry {} ({})",
                        a.index,
                        hex::encode(&a.entry_hash)
                    );
                }
            }
            Ok(())
        }
        Command::Receipt {
            device,
            sequence,
            out,
        } => {
            let outbox = open(&device)?;
            let Some((envelope, receipt)) = outbox.receipt_proof(sequence)? else {
                anyhow::bail!(
                    "--sequence {sequence}: the outbox keeps no signed receipt for it (not \
                     acknowledged yet, pruned, a DUPLICATE answer, or the ledger does not sign \
                     receipts: ingest.signed_receipts)"
                );
            };
            let file = ledger_core::receipt::ReceiptFile::new(&envelope, &receipt);
            let text = serde_json::to_string_pretty(&file)? + "\n";
            match out {
                Some(p) => {
                    std::fs::write(&p, text).with_context(|| format!("--out {}", p.display()))?
                }
                None => print!("{text}"),
            }
            Ok(())
        }
        Command::Discard {
            device,
            server,
            sequence,
        } => {
            let outbox = open(&device)?;
            let source = run::discard(&outbox, &server, sequence).await?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"discarded": {"sequence": sequence, "source": source}})
                );
            } else {
                println!(
                    "discarded event {sequence} ({source}); the events after it are numbered from {sequence} again"
                );
            }
            Ok(())
        }
    }
}
