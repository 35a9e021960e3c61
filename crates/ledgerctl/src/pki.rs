//! `ledgerctl pki`: a deployment's small certificate authority (rcgen, ECDSA P-256 keys in
//! PKCS#8 PEM): the CA, ledgerd's server certificate and the clients' certificates, each
//! client printed with its fingerprint and the `[[clients]]` lines for ledgerd's configuration.
//! Keys are written mode 0600 and never overwritten.

use std::io::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Create the CA: DIR/ca.pem (ledgerd's tls.client_ca, clients' --tls-ca) and DIR/ca.key (offline).
    Ca {
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
        /// The CA's name (its certificate's common name).
        #[arg(long, default_value = "casino-ledger CA")]
        name: String,
        #[arg(long, default_value_t = 3650)]
        days: u32,
    },
    /// Issue ledgerd's certificate: DIR/NAME.pem and DIR/NAME.key, for tls.cert_chain and
    /// tls.key.
    Server {
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
        #[arg(long, default_value = "ledgerd")]
        name: String,
        /// A DNS name or IP address clients use to reach ledgerd (repeat it).
        #[arg(long = "host", value_name = "HOST", required = true)]
        hosts: Vec<String>,
        #[arg(long, default_value_t = 825)]
        days: u32,
    },
    /// Issue a client's certificate DIR/NAME.pem and .key; prints its [[clients]] lines.
    Client {
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
        /// The principal's name (for ledgerd's logs and refusals).
        #[arg(long)]
        name: String,
        /// device, operator, compliance, regulator or admin.
        #[arg(long, default_value = "device")]
        role: String,
        /// A casino it is limited to (repeat it); none = every casino.
        #[arg(long = "casino", value_name = "ID")]
        casinos: Vec<String>,
        #[arg(long, default_value_t = 365)]
        days: u32,
    },
    /// Print a certificate's fingerprint (SHA-256 of its public key, as [[clients]] wants it).
    Fingerprint {
        #[arg(value_name = "CERT")]
        cert: PathBuf,
    },
}

pub fn run(c: Command, json: bool) -> anyhow::Result<i32> {
    match c {
        Command::Ca { dir, name, days } => {
            let (cert, key) = create_ca(&dir, &name, days)?;
            say(json, &[("ca", &cert), ("key", &key)]);
        }
        Command::Server {
            dir,
            name,
            hosts,
            days,
        } => {
            let (cert, key) = issue_server(&dir, &name, &hosts, days)?;
            say(json, &[("cert", &cert), ("key", &key)]);
        }
        Command::Client {
            dir,
            name,
            role,
            casinos,
            days,
        } => {
            if ledgerd::access::Role::parse(&role).is_none() {
                bail!(
                    "--role {role:?}: must be one of device, operator, compliance, regulator, admin"
                );
            }
            let (cert, key) = issue_client(&dir, &name, days)?;
            let fp = fingerprint(&cert)?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"cert": cert, "key": key, "fingerprint": fp,
                        "client": {"name": name, "role": role, "casinos": casinos, "fingerprint": fp}})
                );
            } else {
                // All of it TOML, so that it can be appended to ledgerd.toml as it is.
                println!("# wrote {} and {}", cert.display(), key.display());
                println!("# for ledgerd's configuration:");
                print!("{}", clients_toml(&name, &role, &casinos, &fp));
            }
        }
        Command::Fingerprint { cert } => {
            let fp = fingerprint(&cert)?;
            if json {
                println!("{}", serde_json::json!({"fingerprint": fp}));
            } else {
                println!("{fp}");
            }
        }
    }
    Ok(0)
}

fn say(json: bool, files: &[(&str, &Path)]) {
    if json {
        let m: serde_json::Map<_, _> = files
            .iter()
            .map(|(k, p)| (k.to_string(), serde_json::json!(p)))
            .collect();
        println!("{}", serde_json::Value::Object(m));
    } else {
        for (_, p) in files {
            println!("wrote {}", p.display());
        }
    }
}

/// `[[clients]]` lines for one client.
pub fn clients_toml(name: &str, role: &str, casinos: &[String], fp: &str) -> String {
    let casinos = if casinos.is_empty() {
        String::new()
    } else {
        format!(
            "casinos = [{}]\n",
            casinos
                .iter()
                .map(|c| format!("{c:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!("[[clients]]\nname = {name:?}\nrole = {role:?}\n{casinos}fingerprint = \"{fp}\"\n")
}

/// The fingerprint of a PEM certificate file.
pub fn fingerprint(cert: &Path) -> anyhow::Result<String> {
    use rustls_pki_types::pem::PemObject;
    let der = rustls_pki_types::CertificateDer::from_pem_file(cert)
        .with_context(|| format!("{}: not a PEM certificate", cert.display()))?;
    ledgerd::access::spki_fingerprint(&der).map_err(|e| anyhow::anyhow!("{}: {e}", cert.display()))
}

fn validity(p: &mut CertificateParams, days: u32) -> anyhow::Result<()> {
    if days == 0 {
        bail!("--days must be at least 1");
    }
    let now = time::OffsetDateTime::now_utc();
    // An hour back: clocks of clients and server disagree by a little.
    p.not_before = now - time::Duration::hours(1);
    p.not_after = now + time::Duration::days(i64::from(days));
    Ok(())
}

fn ca_params(name: &str) -> anyhow::Result<CertificateParams> {
    let mut p = CertificateParams::new(Vec::<String>::new())?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, name);
    dn.push(DnType::OrganizationName, "casino-ledger");
    p.distinguished_name = dn;
    p.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(p)
}

/// Write `text` to a new file (never over an existing one); keys get mode 0600.
fn write_new(path: &Path, text: &str, secret: bool) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    if secret {
        o.mode(0o600);
    }
    let mut f = o.open(path).with_context(|| {
        if path.exists() {
            format!("{} exists: not overwritten", path.display())
        } else {
            format!("cannot create {}", path.display())
        }
    })?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .with_context(|| format!("write {}", path.display()))
}

/// Create DIR/ca.pem, DIR/ca.key and DIR/ca.name (the name new certificates name as issuer).
pub fn create_ca(dir: &Path, name: &str, days: u32) -> anyhow::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let key = KeyPair::generate()?;
    let mut p = ca_params(name)?;
    validity(&mut p, days)?;
    let cert = p.self_signed(&key)?;
    let (c, k) = (dir.join("ca.pem"), dir.join("ca.key"));
    write_new(&k, &key.serialize_pem(), true)?;
    write_new(&c, &cert.pem(), false)?;
    write_new(&dir.join("ca.name"), name, false)?;
    Ok((c, k))
}

fn issuer(dir: &Path) -> anyhow::Result<Issuer<'static, KeyPair>> {
    let name = std::fs::read_to_string(dir.join("ca.name")).with_context(|| {
        format!(
            "{}: no CA here (run `ledgerctl pki ca --dir {}` first)",
            dir.join("ca.name").display(),
            dir.display()
        )
    })?;
    let pem = std::fs::read_to_string(dir.join("ca.key"))
        .with_context(|| format!("read {}", dir.join("ca.key").display()))?;
    let key = KeyPair::from_pem(&pem).context("ca.key")?;
    // The issuer's name and key identifier are those of ca.pem: the same name, the same key.
    Ok(Issuer::new(ca_params(name.trim())?, key))
}

fn leaf(
    dir: &Path,
    name: &str,
    sans: Vec<SanType>,
    usage: ExtendedKeyUsagePurpose,
    days: u32,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    ledger_core::event::id("--name", name).map_err(|e| anyhow::anyhow!("--name {name:?}: {e}"))?;
    let issuer = issuer(dir)?;
    let key = KeyPair::generate()?;
    let mut p = CertificateParams::new(Vec::<String>::new())?;
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, name);
    p.subject_alt_names = sans;
    p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    p.extended_key_usages = vec![usage];
    p.use_authority_key_identifier_extension = true;
    validity(&mut p, days)?;
    let cert = p.signed_by(&key, &issuer)?;
    let (c, k) = (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    );
    write_new(&k, &key.serialize_pem(), true)?;
    write_new(&c, &cert.pem(), false)?;
    Ok((c, k))
}

/// ledgerd's certificate for `hosts` (DNS names or IP addresses).
pub fn issue_server(
    dir: &Path,
    name: &str,
    hosts: &[String],
    days: u32,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    let sans = hosts
        .iter()
        .map(|h| match h.parse::<IpAddr>() {
            Ok(ip) => Ok(SanType::IpAddress(ip)),
            Err(_) => Ok(SanType::DnsName(h.clone().try_into().with_context(
                || format!("--host {h:?}: not a DNS name or IP address"),
            )?)),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    leaf(dir, name, sans, ExtendedKeyUsagePurpose::ServerAuth, days)
}

/// A client's certificate.
pub fn issue_client(dir: &Path, name: &str, days: u32) -> anyhow::Result<(PathBuf, PathBuf)> {
    leaf(dir, name, vec![], ExtendedKeyUsagePurpose::ClientAuth, days)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_issues_server_and_client_certificates_and_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        create_ca(d.path(), "test CA", 10).unwrap();
        let e = create_ca(d.path(), "test CA", 10).unwrap_err();
        assert!(format!("{e:#}").contains("not overwritten"), "{e:#}");
        let (s, sk) = issue_server(
            d.path(),
            "ledgerd",
            &["127.0.0.1".into(), "localhost".into()],
            5,
        )
        .unwrap();
        let (c, _) = issue_client(d.path(), "inspector", 5).unwrap();
        let mode = std::fs::metadata(&sk).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        // Both chain to the CA: ledgerd's TLS configuration accepts them.
        let cfg = ledgerd::tls::server_config(&ledgerd::tls::TlsFiles {
            cert_chain: s,
            key: sk,
            client_ca: vec![d.path().join("ca.pem")],
            require_client_cert: true,
        });
        assert!(cfg.is_ok(), "{:?}", cfg.err());
        let fp = fingerprint(&c).unwrap();
        assert_eq!(fp.len(), 64);
        let toml = clients_toml("inspector", "regulator", &["lisboa".into()], &fp);
        let parsed = ledgerd::Config::parse(&format!("[tls]\nplaintext = true\n{toml}")).unwrap();
        assert_eq!(parsed.clients().unwrap().len(), 1);
        assert!(issue_client(d.path(), "bad name", 5).is_err());
        assert!(fingerprint(&d.path().join("ca.name")).is_err());
    }
}
