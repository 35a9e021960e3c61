//! ledgerd: the casino-ledger daemon. See `ledgerd --help`.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use ledgerd::Config;

/// The global allocator: mimalloc. The audit's replay and ingest allocate and free many small
/// values (decoded events, round state) across threads; glibc's malloc spent about a quarter of
/// the replay's time in allocation and its arena locks, mimalloc a fraction of that (measured in
/// the issue notes: `cargo bench -p ledger-audit --bench replay`, replayer +31%, follower +60%).
/// It keeps freed memory instead of returning it to the OS, and the process runs without
/// transparent huge pages ([`ledgerd::allocator`]).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The casino-ledger daemon: receives ed25519-signed events from gaming tables and slot machines
/// over gRPC, verifies them, appends them to a durable blake3 hash chain, and acknowledges each
/// one only after it is on disk.
///
/// Everything except the data directory and the listen address lives in a TOML file; see
/// deploy/ledgerd.toml for every key with its default and meaning. Started once with `--init`,
/// ledgerd creates the data directory, the ledger's key (ledger.key, mode 0600, unless
/// `ledger_key_file` or `[ledger_key]` names one) and the chain's genesis entry; without `--init`
/// a missing or replaced data directory stops it. On every start it checks the chain's tail
/// against the last signed checkpoint (and the pinned `ledger_public_key`) and refuses to serve
/// if they disagree.
///
/// Signals: SIGTERM or SIGINT stop it cleanly (finish open streams, sign a shutdown checkpoint).
/// Exit status: 0 after a clean stop; 1 on a configuration, startup or storage error (a failed
/// flush or fsync stops all acknowledgements and exits; restart it and it recovers).
#[derive(Parser, Debug)]
#[command(version, about, long_about)]
struct Args {
    /// TOML configuration file (deploy/ledgerd.toml documents every key); default: the defaults.
    #[arg(long, short = 'c', value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Data directory (overrides `data_dir`); on ext4 or xfs, never btrfs, NFS or FUSE.
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
    /// gRPC listen address (overrides `listen`); port 0 picks one, printed on stdout.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Print the effective configuration as TOML, check it and the data directory, and exit.
    #[arg(long)]
    check_config: bool,
    /// Create a new ledger in the data directory (once); without it only an existing one is served.
    #[arg(long, conflicts_with = "check_config")]
    init: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Rebuild this ledger's store from a verified mirror; the damaged directory is kept aside.
    Restore {
        /// The mirror's gRPC address (https://host:port).
        #[arg(long, value_name = "URL")]
        from: String,
        /// CA certificate of the mirror's TLS certificate (PEM).
        #[arg(long, value_name = "FILE")]
        tls_ca: Option<PathBuf>,
        /// A client certificate the mirror admits to read entries (regulator or admin).
        #[arg(long, value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The key of --tls-cert.
        #[arg(long, value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<PathBuf>,
    },
    /// Rotate the ledger's signing key, with ledgerd stopped (docs/security.md, "Rotation").
    #[command(group(clap::ArgGroup::new("new").required(true)))]
    RotateLedgerKey {
        /// The new key: a PKCS#8 PEM file outside the data directory (created if absent).
        #[arg(long, value_name = "FILE", group = "new")]
        new_key: Option<PathBuf>,
        /// The new key: this key label in the PKCS#11 token of [ledger_key].
        #[arg(long, value_name = "LABEL", group = "new")]
        new_key_label: Option<String>,
    },
}

fn main() {
    // An error as one line, naming what failed (not anyhow's debug form with a backtrace).
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> anyhow::Result<()> {
    ledgerd::allocator::keep_freed_memory();
    let thp = ledgerd::allocator::no_transparent_huge_pages();
    let args = Args::parse();
    let mut cfg = match &args.config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    if let Some(d) = args.data_dir.clone() {
        cfg.data_dir = Some(d);
    }
    if let Some(l) = args.listen {
        cfg.listen = l;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(&cfg.log.filter))
        .context("log.filter")?;
    // The runtime first: an OTLP exporter's channel lives in it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let traces = {
        let _in = runtime.enter();
        let otlp = ledgerd::logging::otlp_endpoint(cfg.log.otlp_endpoint.as_deref());
        ledgerd::logging::init_with_traces(filter, cfg.log.format, otlp)?
    };
    let r = serve(args, cfg, thp, &runtime);
    // What the exporter still holds goes out while the runtime runs.
    drop(traces);
    r
}

fn serve(
    args: Args,
    cfg: Config,
    thp: std::io::Result<()>,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<()> {
    if let Err(e) = thp {
        tracing::warn!(error = %e, "could not turn transparent huge pages off (latency may suffer)");
    }
    if args.check_config {
        use std::fmt::Write as _;
        let mut out =
            "# ledgerd's effective configuration: the file, the defaults, the command line\n"
                .to_string();
        out += &toml::to_string(&cfg).context("the configuration as TOML")?;
        if let Some(d) = &cfg.data_dir {
            match ledgerd::filesystem::inspect(d) {
                Ok(fs) => {
                    writeln!(out, "# data directory filesystem: {}", fs.describe())?;
                    for r in fs.risks() {
                        writeln!(out, "#   risk: {r}")?;
                    }
                }
                Err(e) => writeln!(out, "# data directory filesystem: cannot check: {e}")?,
            }
        }
        // All at once; a reader that has gone (`| head`) is no error.
        match std::io::Write::write_all(&mut std::io::stdout().lock(), out.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                return Err(e).context("stdout");
            }
            _ => {}
        }
        if let Some(d) = &cfg.data_dir
            && cfg.store.require_safe_filesystem
        {
            ledgerd::filesystem::check(d, true)?;
        }
        // ledgerd would refuse to start without TLS (or plaintext on loopback), or with TLS
        // files it cannot use.
        if let Some(files) = cfg.transport()? {
            ledgerd::tls::server_config(&files)?;
        }
        return Ok(());
    }
    let data_dir = cfg
        .data_dir
        .clone()
        .context("no data directory: pass --data-dir DIR or set data_dir in the configuration")?;
    if let Some(Command::RotateLedgerKey {
        new_key,
        new_key_label,
    }) = &args.command
    {
        let new = match (new_key, new_key_label) {
            (Some(f), _) => ledgerd::NewLedgerKey::File(f.clone()),
            (None, Some(l)) => ledgerd::NewLedgerKey::TokenLabel(l.clone()),
            (None, None) => anyhow::bail!("--new-key or --new-key-label"),
        };
        let r = ledgerd::rotate_ledger_key(&cfg, &data_dir, &new)?;
        let set = match &new {
            ledgerd::NewLedgerKey::File(f) => format!(
                "ledger_key_file = \"{}\"",
                f.canonicalize().unwrap_or_else(|_| f.clone()).display()
            ),
            ledgerd::NewLedgerKey::TokenLabel(l) => format!("key_label = \"{l}\" in [ledger_key]"),
        };
        println!(
            "ledger key rotated at entry {}: {} -> {}\nnow set {set} in the configuration and start ledgerd (ledger_public_key stays {}: the genesis key)",
            r.index,
            hex::encode(r.old.as_bytes()),
            hex::encode(r.new.as_bytes()),
            cfg.ledger_public_key
                .as_deref()
                .unwrap_or("the genesis key")
        );
        return Ok(());
    }
    if let Some(Command::Restore {
        from,
        tls_ca,
        tls_cert,
        tls_key,
    }) = args.command
    {
        let r = runtime.block_on(ledgerd::mirror::restore::restore(
            &cfg,
            &data_dir,
            &from,
            (tls_ca, tls_cert, tls_key),
        ))?;
        println!(
            "restored {} entries and {} checkpoints from {from} into {} in {:.1} s{}",
            r.entries,
            r.checkpoints,
            data_dir.display(),
            r.seconds,
            r.damaged
                .map(|d| format!("; the damaged directory is kept in {}", d.display()))
                .unwrap_or_default()
        );
        return Ok(());
    }
    runtime.block_on(ledgerd::run(
        cfg,
        &data_dir,
        args.config.as_deref(),
        if args.init {
            ledgerd::Init::Create
        } else {
            ledgerd::Init::Existing
        },
    ))
}
