//! ledgerctl: the casino-ledger command line. One module per subcommand.

mod bench;
mod checkpoint;
mod common;
mod demo;
mod device;
mod export;
mod keygen;
mod status;
mod tail;
mod verify;

use clap::{Parser, Subcommand};

/// Command-line tool for the casino ledger: keys, devices, offline verification, export, live
/// tail, checkpoints, the demo and the load benchmark.
///
/// Commands that talk to a running ledgerd take --server (default http://127.0.0.1:50051, or
/// the LEDGER_SERVER environment variable). verify and export --data-dir work offline on a
/// stopped ledger's data directory. --json gives machine-readable output wherever it applies.
///
/// Exit status: 0 on success; 1 when verification fails or a command fails; 2 on usage errors.
#[derive(Parser, Debug)]
#[command(version, about, long_about)]
struct Cli {
    /// Machine-readable JSON output.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create an ed25519 key pair: OUT.key (secret, mode 0600) and OUT.pub (public, hex).
    Keygen(keygen::Args),
    /// Register, revoke or list devices (register/revoke are signed with an operator key).
    #[command(subcommand)]
    Device(device::Command),
    /// Verify a whole ledger offline: every entry hash, signature, sequence and checkpoint.
    Verify(verify::Args),
    /// Write a portable, self-describing export of the chain and its checkpoints.
    Export(export::Args),
    /// Follow the ledger live, from an index.
    Tail(tail::Args),
    /// Ask the running ledger to sign a checkpoint now, and print it.
    Checkpoint(checkpoint::Args),
    /// Show the running ledger's head and latest checkpoint.
    Status(status::Args),
    /// Run a simulated casino session against an embedded ledger, then verify it.
    Demo(demo::Args),
    /// Load test: stream pre-signed events over N concurrent streams; report events/s and
    /// receipt latency.
    Bench(bench::Args),
}

fn main() {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,ledger_store=error,sled=error")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let json = cli.json;
    let result = match cli.command {
        Command::Keygen(a) => keygen::run(a, json),
        Command::Verify(a) => verify::run(a, json),
        Command::Export(a) => common::runtime().and_then(|rt| rt.block_on(export::run(a, json))),
        Command::Device(c) => common::runtime().and_then(|rt| rt.block_on(device::run(c, json))),
        Command::Tail(a) => common::runtime().and_then(|rt| rt.block_on(tail::run(a, json))),
        Command::Checkpoint(a) => {
            common::runtime().and_then(|rt| rt.block_on(checkpoint::run(a, json)))
        }
        Command::Status(a) => common::runtime().and_then(|rt| rt.block_on(status::run(a, json))),
        Command::Demo(a) => common::runtime().and_then(|rt| rt.block_on(demo::run(a, json))),
        Command::Bench(a) => common::runtime().and_then(|rt| rt.block_on(bench::run(a, json))),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}
