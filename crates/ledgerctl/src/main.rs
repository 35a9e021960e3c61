//! ledgerctl: the casino-ledger command line. One module per subcommand.

// First: its `println!` and `print!` replace std's in every module below (a closed stdout pipe
// ends ledgerctl with status 0, not a panic).
#[macro_use]
mod out;

mod adjudicate;
mod audit_cmd;
mod bench;
mod ceiling;
mod checkpoint;
mod common;
mod cpu;
mod demo;
mod demo_mirror;
mod device;
mod disk_check;
mod evidence;
mod export;
mod findings;
mod health;
mod hsm;
mod ingest_stats;
mod init;
mod jackpot;
mod keygen;
mod machine_events;
mod manual;
mod mirror;
mod pki;
mod present;
mod prove;
mod receipt;
mod report;
mod round;
mod stalls;
mod status;
mod tail;
mod tiles_bench;
mod trust;
mod verify;
mod witness;

use clap::{CommandFactory, Parser, Subcommand};

/// The global allocator: mimalloc. The audit's replay and ingest allocate and free many small
/// values (decoded events, round state) across threads; glibc's malloc spent about a quarter of
/// the replay's time in allocation and its arena locks, mimalloc a fraction of that (measured in
/// the issue notes: `cargo bench -p ledger-audit --bench replay`, replayer +31%, follower +60%).
/// It keeps freed memory instead of returning it to the OS, and the process runs without
/// transparent huge pages ([`ledgerd::allocator`]).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Command-line tool for the casino ledger: keys and devices; offline verification and export of
/// the chain; the audit's findings, rounds and reports; the jackpot accounts and their transfers;
/// the rule engines on JSON rounds; the demo and the load benchmark.
///
/// Commands that talk to a running ledgerd take --server (default 127.0.0.1:50051, or
/// the LEDGER_SERVER environment variable); export reads LEDGER_SERVER when given neither
/// --server nor --data-dir; bench loads a running ledgerd only with --server. verify, export --data-dir and audit --from-genesis
/// work offline on a stopped ledger's data directory (or an export file); adjudicate needs no
/// ledger at all. --json gives machine-readable output wherever it applies, and makes an error
/// (usage errors too) one line on stdout, {"error": "..."}, with the status below.
///
/// Start with `ledgerctl demo`, then `ledgerctl <command> --help`.
///
/// Exit status: 0 on success; 1 when verification fails, findings exist where a command checks
/// for them, or a command fails; 2 on usage errors. A closed stdout (`| head`) ends any command
/// at once, quietly, with 0.
#[derive(Parser, Debug)]
#[command(version, about, long_about)]
struct Cli {
    /// Machine-readable JSON output.
    #[arg(long, global = true)]
    json: bool,
    /// CA certificate that signed ledgerd's (TLS); with it, plain addresses are https.
    #[arg(long = "tls-ca", global = true, env = "LEDGER_CA", value_name = "PEM")]
    tls_ca: Option<std::path::PathBuf>,
    /// This client's certificate (a principal in ledgerd's [[clients]]).
    #[arg(
        long = "tls-cert",
        global = true,
        env = "LEDGER_CERT",
        value_name = "PEM"
    )]
    tls_cert: Option<std::path::PathBuf>,
    /// This client's private key.
    #[arg(
        long = "tls-key",
        global = true,
        env = "LEDGER_KEY",
        value_name = "PEM"
    )]
    tls_key: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create an ed25519 key pair: OUT.key (secret, PKCS#8 PEM, mode 0600) and OUT.pub (public, hex).
    Keygen(keygen::Args),
    /// The ledger's key pair in a PKCS#11 token (HSM): create it, print its public key.
    #[command(subcommand)]
    Hsm(hsm::Command),
    /// Write a new deployment: ledgerd.toml, the ledger's and principals' keys, TLS certificates.
    Init(init::Args),
    /// Register, revoke or list devices (register/revoke are signed with an operator key).
    #[command(subcommand)]
    Device(device::Command),
    /// Verify a whole ledger offline: every entry hash, signature, sequence and checkpoint.
    Verify(verify::Args),
    /// Write a portable, self-describing export of the chain and its checkpoints.
    Export(export::Args),
    /// Follow the ledger live, from an index.
    Tail(tail::Args),
    /// Get a ledger-signed checkpoint covering every acknowledged entry (keep it for verify).
    Checkpoint(checkpoint::Args),
    /// Show the running ledger's head and latest checkpoint.
    Status(status::Args),
    /// Write a proof over the ledger's Merkle tree: an entry's inclusion, or that it only grew.
    #[command(subcommand)]
    Prove(prove::Command),
    /// Check a proof file offline against the ledger's public key.
    VerifyProof(prove::VerifyArgs),
    /// Check a device's signed receipt offline against the ledger's public key.
    VerifyReceipt(receipt::Args),
    /// Write a self-contained evidence bundle of a round, for `verify --evidence`.
    Evidence(evidence::Args),
    /// Run a C2SP tlog-witness that cosigns the checkpoints of the ledgers it is given.
    #[command(subcommand)]
    Witness(witness::Command),
    /// Check that a running ledgerd serves (gRPC health); exit status 0 if it does.
    Health(health::Args),
    /// A mirror's state and alarms (a ledgerd running with [mirror]).
    #[command(subcommand)]
    Mirror(mirror::Command),
    /// Run a simulated casino session against an embedded ledger, then verify it.
    Demo(demo::Args),
    /// Load test: stream pre-signed events; report events/s, receipt latency and CPU.
    Bench(bench::Args),
    /// Load test of the tree served as tlog tiles (ledgerd's HTTP listener): requests/s.
    BenchTiles(tiles_bench::Args),
    /// Check a data directory's disk: append + fsync latency, and whether 10 ms p99 is reachable.
    DiskCheck(disk_check::Args),
    /// Run the rule engines on rounds written as JSON: what each bet was due, and violations.
    Adjudicate(adjudicate::Args),
    /// Replay the chain against the rule engines offline, or show the live audit's status.
    Audit(audit_cmd::Args),
    /// List the audit's findings from the running ledger, with filters.
    Findings(findings::Args),
    /// One finding and its review history, or review it (acknowledge, dispute, resolve).
    #[command(subcommand)]
    Finding(findings::FindingCommand),
    /// One settled round from the live audit: due vs reported per bet, and its findings.
    Round(round::Args),
    /// The table games' summary report (rounds, handle, win, hold) as a table, CSV or JSON.
    Report(report::Args),
    /// A deployment's certificates: a CA, ledgerd's, and clients' with their [[clients]] lines.
    #[command(subcommand)]
    Pki(pki::Command),
    /// Jackpot accounts: pools, liabilities, transfers and the inspectorate's authorisations.
    #[command(subcommand)]
    Jackpot(jackpot::Command),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(manual::CompletionsArgs),
    /// Print the man page, or write every page with --dir.
    Man(manual::ManArgs),
}

fn main() {
    ledgerd::allocator::keep_freed_memory();
    let thp = ledgerd::allocator::no_transparent_huge_pages();
    let cli = Cli::try_parse().unwrap_or_else(|e| out::usage_error(e));
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,ledger_store=error,sled=error")
    });
    ledgerd::logging::init(filter, ledgerd::logging::LogFormat::Plain);
    if let Err(e) = thp {
        tracing::warn!(error = %e, "could not turn transparent huge pages off (latency may suffer)");
    }
    let json = cli.json;
    if let Err(e) = ledger_agent::tls::init_from_args_or_env(
        cli.tls_ca.as_deref(),
        cli.tls_cert.as_deref(),
        cli.tls_key.as_deref(),
    ) {
        out::failed(json, &anyhow::Error::from(e));
    }
    let result = match cli.command {
        Command::Pki(c) => pki::run(c, json),
        Command::Keygen(a) => keygen::run(a, json),
        Command::Hsm(c) => hsm::run(c, json),
        Command::Init(a) => init::run(a, json),
        Command::Verify(a) => verify::run(a, json),
        Command::Export(a) => common::runtime().and_then(|rt| rt.block_on(export::run(a, json))),
        Command::Device(c) => common::runtime().and_then(|rt| rt.block_on(device::run(c, json))),
        Command::Tail(a) => common::runtime().and_then(|rt| rt.block_on(tail::run(a, json))),
        Command::Checkpoint(a) => {
            common::runtime().and_then(|rt| rt.block_on(checkpoint::run(a, json)))
        }
        Command::BenchTiles(a) => {
            common::runtime().and_then(|rt| rt.block_on(tiles_bench::run(a, json)))
        }
        Command::Status(a) => common::runtime().and_then(|rt| rt.block_on(status::run(a, json))),
        Command::Prove(c) => common::runtime().and_then(|rt| rt.block_on(prove::run(c, json))),
        Command::VerifyProof(a) => prove::verify(a, json),
        Command::VerifyReceipt(a) => receipt::run(a, json),
        Command::Evidence(a) => {
            common::runtime().and_then(|rt| rt.block_on(evidence::run(a, json)))
        }
        Command::Witness(c) => common::runtime().and_then(|rt| rt.block_on(witness::run(c))),
        Command::Health(a) => common::runtime().and_then(|rt| rt.block_on(health::run(a, json))),
        Command::Mirror(c) => common::runtime().and_then(|rt| rt.block_on(mirror::run(c, json))),
        Command::Demo(a) => common::runtime().and_then(|rt| rt.block_on(demo::run(a, json))),
        Command::Bench(a) => bench::runtime(&a).and_then(|rt| rt.block_on(bench::run(a, json))),
        Command::DiskCheck(a) => disk_check::run(a, json),
        Command::Adjudicate(a) => adjudicate::run(a, json),
        Command::Audit(a) => common::runtime().and_then(|rt| rt.block_on(audit_cmd::run(a, json))),
        Command::Findings(a) => {
            common::runtime().and_then(|rt| rt.block_on(findings::run(a, json)))
        }
        Command::Finding(c) => {
            common::runtime().and_then(|rt| rt.block_on(findings::run_finding(c, json)))
        }
        Command::Round(a) => common::runtime().and_then(|rt| rt.block_on(round::run(a, json))),
        Command::Report(a) => common::runtime().and_then(|rt| rt.block_on(report::run(a, json))),
        Command::Jackpot(c) => common::runtime().and_then(|rt| rt.block_on(jackpot::run(c, json))),
        Command::Completions(a) => manual::completions(a, Cli::command()),
        Command::Man(a) => manual::man(a, Cli::command(), json),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => out::failed(json, &e),
    }
}

/// An audit finding in its proto form (for printing offline findings like live ones).
fn audit_cmd_finding(f: &audit::Finding) -> ledger_core::proto::Finding {
    ledgerd::audit::finding_to_proto(f)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every command's and flag's help is one line of at most 100 characters, with no longer
    /// `--help` text behind it (measurement notes belong in docs/performance.md).
    #[test]
    fn every_help_text_is_one_short_line() {
        fn walk(c: &clap::Command, path: &str, bad: &mut Vec<String>) {
            let path = format!("{path} {}", c.get_name());
            let short = |t: Option<&clap::builder::StyledStr>| {
                t.map(|t| t.to_string())
                    .is_none_or(|t| t.len() <= 100 && !t.contains('\n'))
            };
            // The top level's long text is the tool's manual (its man page's description).
            if !short(c.get_about())
                || (!path.trim().eq("ledgerctl") && c.get_long_about().is_some())
            {
                bad.push(format!("{path}: about"));
            }
            for a in c.get_arguments() {
                if !short(a.get_help()) || a.get_long_help().is_some() {
                    bad.push(format!("{path} --{}", a.get_id()));
                }
            }
            for s in c.get_subcommands() {
                walk(s, &path, bad);
            }
        }
        let mut bad = Vec::new();
        walk(&super::Cli::command(), "", &mut bad);
        assert!(bad.is_empty(), "help texts too long: {bad:#?}");
        super::Cli::command().debug_assert();
    }
}
