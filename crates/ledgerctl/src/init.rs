//! `ledgerctl init DIR`: a new deployment's files, ready to serve: the ledger's key, an operator
//! and a regulator signing key, a CA with ledgerd's certificate and the admin's, operator's,
//! regulator's and health probe's client certificates, and `ledgerd.toml` naming them all (the
//! ledger's public key pinned). Never overwrites anything: DIR must be new or empty.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directory to write into (created; must be empty).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The ledger's id (written into its genesis).
    #[arg(long, default_value = "casino-ledger", value_name = "ID")]
    pub ledger_id: String,
    /// ledgerd's gRPC listen address.
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "ADDR")]
    pub listen: SocketAddr,
    /// A DNS name or IP address clients use to reach ledgerd (repeat it).
    #[arg(long = "host", value_name = "HOST", default_values = ["localhost", "127.0.0.1"])]
    pub hosts: Vec<String>,
    /// Data directory for the ledger; default DIR/data.
    #[arg(long, value_name = "PATH")]
    pub data_dir: Option<PathBuf>,
}

/// The client certificates written, with their `[[clients]]` role (`None`: no role, the
/// health probe's).
const CLIENTS: [(&str, Option<&str>); 4] = [
    ("admin", Some("admin")),
    ("operator", Some("operator")),
    ("regulator", Some("regulator")),
    ("probe", None),
];

const OPERATOR: &str = "operator-1";
const REGULATOR: &str = "inspectorate";

pub fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    // Before anything is written: the id goes into the genesis entry and ledgerd.toml.
    ledger_core::event::id("--ledger-id", &a.ledger_id).map_err(|e| match e {
        ledger_core::event::BodyError::Malformed { field, problem } => {
            anyhow::anyhow!("{field} {:?}: {problem}", a.ledger_id)
        }
        e => anyhow::anyhow!("--ledger-id: {e}"),
    })?;
    let dir = new_dir(&a.dir)?;
    let data_dir = match &a.data_dir {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => std::env::current_dir()?.join(d),
        None => dir.join("data"),
    };
    if data_dir.join("db").exists() {
        bail!(
            "--data-dir {}: already holds a ledger; choose another",
            data_dir.display()
        );
    }

    // Signing keys: the ledger's (PKCS#8 PEM, 0600, outside the data directory) and the
    // principals'.
    let keys = dir.join("keys");
    std::fs::create_dir_all(&keys)?;
    let ledger_key = ledger_agent::keys::generate();
    ledger_agent::keys::write_pair(&keys.join("ledger"), &ledger_key)?;
    let mut principals = Vec::new();
    for (id, role) in [(OPERATOR, "operator"), (REGULATOR, "regulator")] {
        let k = ledger_agent::keys::generate();
        ledger_agent::keys::write_pair(&keys.join(id), &k)?;
        principals.push(ledgerd::config::PrincipalEntry {
            id: id.into(),
            role: role.into(),
            public_key: hex::encode(k.verifying_key().as_bytes()),
        });
    }

    // TLS: the CA, ledgerd's certificate, the clients'.
    let tls = dir.join("tls");
    crate::pki::create_ca(&tls, &format!("{} CA", a.ledger_id), 3650)?;
    crate::pki::issue_server(&tls, "ledgerd", &a.hosts, 825)?;
    let mut clients = Vec::new();
    for (name, role) in CLIENTS {
        let (cert, _) = crate::pki::issue_client(&tls, name, 365)?;
        if let Some(role) = role {
            clients.push(ledgerd::config::ClientEntry {
                name: name.into(),
                role: role.into(),
                casinos: vec![],
                fingerprint: crate::pki::fingerprint(&cert)?,
            });
        }
    }

    // The configuration: files relative to it, the data directory absolute.
    let mut cfg = ledgerd::Config {
        ledger_id: a.ledger_id.clone(),
        listen: a.listen,
        data_dir: Some(data_dir.clone()),
        ledger_key_file: Some("keys/ledger.key".into()),
        ledger_public_key: Some(hex::encode(ledger_key.verifying_key().as_bytes())),
        principals,
        clients,
        ..Default::default()
    };
    cfg.tls.cert_chain = Some("tls/ledgerd.pem".into());
    cfg.tls.key = Some("tls/ledgerd.key".into());
    cfg.tls.client_ca = vec!["tls/ca.pem".into()];
    // Refuse a filesystem that can lose acknowledged entries, where this one is safe; say so
    // where it is not (a developer's tmpfs or overlay).
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let risks = ledgerd::filesystem::inspect(&data_dir)
        .map(|fs| fs.risks())
        .unwrap_or_else(|e| vec![format!("cannot check: {e}")]);
    cfg.store.require_safe_filesystem = risks.is_empty();
    let config = dir.join("ledgerd.toml");
    let text = format!(
        "# Written by `ledgerctl init`: every key with its value (deploy/ledgerd.toml explains\n\
         # each). Files are relative to this file. Start once with --init to create the ledger.\n{}",
        toml::to_string(&cfg).context("the configuration as TOML")?
    );
    // Checked as ledgerd will read it.
    write_new(&config, &text)?;
    ledgerd::Config::load(&config)
        .with_context(|| format!("{} does not load", config.display()))?
        .transport()?;

    let admin = |ext: &str| tls.join(format!("admin.{ext}"));
    if json {
        println!(
            "{}",
            serde_json::json!({
                "config": config,
                "data_dir": data_dir,
                "ledger_public_key": cfg.ledger_public_key,
                "filesystem_risks": risks,
                "client": {"ca": tls.join("ca.pem"), "cert": admin("pem"), "key": admin("key")},
            })
        );
        return Ok(0);
    }
    println!("wrote {}:", dir.display());
    println!(
        "  ledgerd.toml         the configuration (ledger key pinned, TLS, principals, clients)"
    );
    println!("  keys/ledger.key      the ledger's signing key (keep it with the data, backed up)");
    println!("  keys/{OPERATOR}.key  registers devices; keys/{REGULATOR}.key: the regulator's");
    println!("  tls/ca.key           the CA's key: move it offline");
    println!(
        "  tls/{{admin,operator,regulator,probe}}.pem  client certificates (probe: health checks)"
    );
    for r in &risks {
        println!(
            "warning: {}: {r} (store.require_safe_filesystem = false)",
            data_dir.display()
        );
    }
    println!("next:");
    println!(
        "  ledgerd --config {} --init    # once: creates the ledger",
        config.display()
    );
    println!(
        "  export LEDGER_CA={} LEDGER_CERT={} LEDGER_KEY={}",
        tls.join("ca.pem").display(),
        admin("pem").display(),
        admin("key").display()
    );
    println!("  ledgerctl --server https://{} status", a.listen);
    Ok(0)
}

/// `dir`, created, or empty; absolute.
fn new_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .with_context(|| format!("{}", dir.display()))?
            .next()
            .is_none();
        if !empty {
            bail!(
                "{}: not empty; init never overwrites (choose a new directory)",
                dir.display()
            );
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(std::fs::canonicalize(dir)?)
}

fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dir: &Path) -> Args {
        Args {
            dir: dir.to_path_buf(),
            ledger_id: "t".into(),
            listen: "127.0.0.1:50051".parse().unwrap(),
            hosts: vec!["localhost".into()],
            data_dir: None,
        }
    }

    #[test]
    fn init_writes_a_configuration_that_loads_and_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("new");
        assert_eq!(run(args(&dir), true).unwrap(), 0);
        let cfg = ledgerd::Config::load(&dir.join("ledgerd.toml")).unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(cfg.data_dir.as_deref(), Some(dir.join("data").as_path()));
        assert_eq!(cfg.ledger_key_file, Some(dir.join("keys/ledger.key")));
        let key = ledger_agent::keys::read_secret(&dir.join("keys/ledger.key")).unwrap();
        assert_eq!(
            cfg.ledger_public_key,
            Some(hex::encode(key.verifying_key().as_bytes()))
        );
        let tls = cfg.transport().unwrap().unwrap();
        assert_eq!(tls.cert_chain, dir.join("tls/ledgerd.pem"));
        assert_eq!(
            cfg.clients().unwrap().len(),
            3,
            "admin, operator, regulator"
        );
        assert_eq!(cfg.principals.len(), 2);
        // An id the genesis cannot hold is named by its flag, and nothing is written.
        let other = d.path().join("other");
        let mut a = args(&other);
        a.ledger_id = "casino lisboa".into();
        let e = format!("{:#}", run(a, true).unwrap_err());
        assert!(
            e.starts_with("--ledger-id \"casino lisboa\": character ' '"),
            "{e}"
        );
        assert!(!other.exists());
        // Anything there is kept: a second run refuses.
        let e = run(args(&dir), true).unwrap_err();
        assert!(format!("{e:#}").contains("not empty"), "{e:#}");
    }
}
