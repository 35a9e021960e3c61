//! The console's TOML configuration: where it listens, which ledgerd it reads, and its accounts.
//!
//! Each account names the client certificate and key the console presents to ledgerd for that
//! user's calls: ledgerd maps the certificate to a principal (role and casinos, docs/security.md)
//! and decides what the user may read. The console keeps no second copy of the rules.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {err}", path.display())]
    Read { path: PathBuf, err: std::io::Error },
    #[error("{}: {err}", path.display())]
    Parse { path: PathBuf, err: toml::de::Error },
    #[error("{0}")]
    Invalid(String),
}

fn default_language() -> String {
    "pt-PT".into()
}
fn default_time_zone() -> String {
    "Europe/Lisbon".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// HTTPS address, e.g. "0.0.0.0:8443".
    pub listen: SocketAddr,
    /// ledgerd's gRPC address, e.g. "https://ledger.example:50051".
    pub ledgerd: String,
    /// The CA that signed ledgerd's certificate.
    pub ledgerd_ca: PathBuf,
    /// The console's own certificate chain and key (PEM). Required unless `plaintext`.
    #[serde(default)]
    pub tls: Option<Tls>,
    /// Serve plain HTTP: refused unless `listen` is a loopback address (like ledgerd).
    #[serde(default)]
    pub plaintext: bool,
    /// The language when the browser asks for neither (`pt-PT` or `en`).
    #[serde(default = "default_language")]
    pub default_language: String,
    /// Time zone of the dates shown (IANA name).
    #[serde(default = "default_time_zone")]
    pub time_zone: String,
    #[serde(default)]
    pub session: Session,
    #[serde(default)]
    pub lockout: Lockout,
    /// Single sign-on through a trusted reverse proxy.
    #[serde(default)]
    pub proxy: Option<Proxy>,
    #[serde(default)]
    pub accounts: Vec<Account>,
    /// The ledger's public key (hex, as `ledgerctl init` prints it): evidence bundles uploaded on
    /// the Verify page are checked against it. Absent: bundles cannot be checked here.
    #[serde(default)]
    pub ledger_public_key: Option<String>,
    /// Witnesses whose cosignature a bundle's checkpoint must carry (`NAME+KEYID+KEY`, as
    /// `ledgerctl witness serve` prints it).
    #[serde(default)]
    pub witness_keys: Vec<String>,
    /// Mirrors of the ledger whose lag the Overview shows (`Mirror.GetStatus` on each, with the
    /// signed-in account's own certificate). A ledgerd that is itself a mirror is shown without
    /// being named here.
    #[serde(default)]
    pub mirrors: Vec<MirrorCfg>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MirrorCfg {
    /// Shown on the Overview.
    pub name: String,
    /// Its gRPC address, e.g. "https://mirror.example:50051".
    pub address: String,
    /// The CA that signed its certificate (default: `ledgerd_ca`).
    #[serde(default)]
    pub ca: Option<PathBuf>,
}

/// The ledger's key, and each witness's name and key.
pub type EvidenceKeys = (
    ed25519_dalek::VerifyingKey,
    Vec<(String, ledger_core::note::CosignerKey)>,
);

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tls {
    pub cert_chain: PathBuf,
    pub key: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Session {
    /// A session ends after this long without a request.
    pub idle_secs: u64,
    /// ... and this long after sign-in in any case.
    pub max_secs: u64,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            idle_secs: 30 * 60,
            max_secs: 8 * 3600,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Lockout {
    /// Consecutive failed sign-ins of an account that lock it ...
    pub max_failures: u32,
    /// ... for this long (a correct password is refused meanwhile).
    pub lock_secs: u64,
}

impl Default for Lockout {
    fn default() -> Self {
        Lockout {
            max_failures: 5,
            lock_secs: 15 * 60,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proxy {
    /// The header that names the signed-in account, e.g. "X-Remote-User".
    pub header: String,
    /// The proxies' addresses: the header is believed only on connections from these.
    pub trusted: Vec<IpAddr>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Account {
    /// Sign-in name (and the name in the ledger's review records).
    pub name: String,
    pub display_name: String,
    /// argon2id PHC string (`ledger-console hash-password`); absent: proxy sign-in only.
    #[serde(default)]
    pub password_hash: Option<String>,
    /// The ledgerd client certificate and key used for this account's calls.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// The casinos the certificate is limited to in ledgerd (for the casino selector only:
    /// ledgerd enforces the scope whatever this says). Empty: every casino.
    #[serde(default)]
    pub casinos: Vec<String>,
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Read {
            path: path.to_path_buf(),
            err,
        })?;
        let c: Config = toml::from_str(&text).map_err(|err| ConfigError::Parse {
            path: path.to_path_buf(),
            err,
        })?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |s: String| Err(ConfigError::Invalid(s));
        if self.plaintext && !self.listen.ip().is_loopback() {
            return bad(format!(
                "plaintext = true needs a loopback `listen` address, not {}",
                self.listen
            ));
        }
        if !self.plaintext && self.tls.is_none() {
            return bad(
                "[tls] cert_chain and key are required (or plaintext = true on loopback)".into(),
            );
        }
        self.default_language
            .parse::<ledger_fmt::Locale>()
            .map_err(|e| ConfigError::Invalid(format!("default_language: {e}")))?;
        ledger_fmt::time_zone(&self.time_zone)
            .map_err(|e| ConfigError::Invalid(format!("time_zone: {e}")))?;
        self.evidence_keys()?;
        if self.lockout.max_failures == 0 {
            return bad("lockout.max_failures must be at least 1".into());
        }
        if self.session.idle_secs == 0 || self.session.max_secs == 0 {
            return bad("session.idle_secs and session.max_secs must be above 0".into());
        }
        if self.accounts.is_empty() {
            return bad("no [[accounts]]: nobody could sign in".into());
        }
        let mut names = std::collections::BTreeSet::new();
        for a in &self.accounts {
            if a.name.is_empty()
                || !a
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
            {
                return bad(format!(
                    "accounts.name {:?}: letters, digits and . _ @ - only",
                    a.name
                ));
            }
            if !names.insert(a.name.as_str()) {
                return bad(format!("accounts.name {:?} appears twice", a.name));
            }
            if let Some(h) = &a.password_hash
                && !h.starts_with("$argon2id$")
            {
                return bad(format!(
                    "accounts.password_hash of {:?} is not an argon2id hash (ledger-console hash-password)",
                    a.name
                ));
            }
        }
        let mut mirrors = std::collections::BTreeSet::new();
        for m in &self.mirrors {
            if m.name.trim().is_empty() {
                return bad(format!("mirrors.name of {:?} is empty", m.address));
            }
            if !mirrors.insert(m.name.as_str()) {
                return bad(format!("mirrors.name {:?} appears twice", m.name));
            }
            if !(m.address.starts_with("https://") || m.address.starts_with("http://"))
                || m.address.parse::<axum::http::Uri>().is_err()
            {
                return bad(format!(
                    "mirrors.address {:?} of {:?} is not an http(s):// URL",
                    m.address, m.name
                ));
            }
        }
        if let Some(p) = &self.proxy {
            if p.trusted.is_empty() {
                return bad("proxy.trusted is empty: name the reverse proxies' addresses".into());
            }
            if axum::http::HeaderName::from_bytes(p.header.as_bytes()).is_err() {
                return bad(format!("proxy.header {:?} is not a header name", p.header));
            }
        }
        Ok(())
    }

    pub fn locale(&self) -> ledger_fmt::Locale {
        self.default_language.parse().unwrap_or_default()
    }

    /// The ledger's key and the witnesses' keys for evidence bundles (none without a
    /// `ledger_public_key`), or the key that is not one.
    pub fn evidence_keys(&self) -> Result<Option<EvidenceKeys>, ConfigError> {
        let Some(hex_key) = &self.ledger_public_key else {
            if !self.witness_keys.is_empty() {
                return Err(ConfigError::Invalid(
                    "witness_keys: give ledger_public_key too".into(),
                ));
            }
            return Ok(None);
        };
        let key = ledger_core::signing::parse_public_key_hex(hex_key.trim()).map_err(|e| {
            ConfigError::Invalid(format!("ledger_public_key: {hex_key:?} is not a key: {e}"))
        })?;
        let witnesses = self
            .witness_keys
            .iter()
            .map(|w| {
                ledger_evidence::parse_witness_vkey(w)
                    .map_err(|e| ConfigError::Invalid(format!("witness_keys: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Some((key, witnesses)))
    }

    pub fn tz(&self) -> ledger_fmt::Tz {
        ledger_fmt::time_zone(&self.time_zone).unwrap_or(ledger_fmt::DEFAULT_TZ)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
listen = "127.0.0.1:8443"
ledgerd = "https://127.0.0.1:50051"
ledgerd_ca = "ca.pem"
plaintext = true
[[accounts]]
name = "ana"
display_name = "Ana"
password_hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA"
client_cert = "ana.pem"
client_key = "ana.key"
"#;

    fn parse(s: &str) -> Result<Config, String> {
        let c: Config = toml::from_str(s).map_err(|e| e.to_string())?;
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn defaults_and_refusals_name_the_key() {
        let c = parse(BASE).unwrap();
        assert_eq!(c.lockout.max_failures, 5);
        assert_eq!(c.locale(), ledger_fmt::Locale::PtPt);
        let e = parse(&BASE.replace("127.0.0.1:8443", "0.0.0.0:8443")).unwrap_err();
        assert!(e.contains("plaintext = true needs a loopback"), "{e}");
        let e = parse(&BASE.replace("plaintext = true", "")).unwrap_err();
        assert!(e.contains("[tls]"), "{e}");
        let e = parse(&BASE.replace("$argon2id$", "$argon2i$")).unwrap_err();
        assert!(e.contains("accounts.password_hash"), "{e}");
        let e = parse(&format!("{BASE}time_zone = \"Mars/Base\"\n")).unwrap_err();
        assert!(
            e.contains("unknown field") || e.contains("time_zone"),
            "{e}"
        );
        let e = parse(&BASE.replace("plaintext = true", "plaintext = true\ntime_zone = \"Mars\""))
            .unwrap_err();
        assert!(e.contains("time_zone"), "{e}");
        let e = parse(&BASE.replace("name = \"ana\"", "name = \"a b\"")).unwrap_err();
        assert!(e.contains("accounts.name"), "{e}");
        let e =
            parse(&BASE.replace("plaintext = true", "plaintext = true\nbogus = 1")).unwrap_err();
        assert!(e.contains("bogus"), "{e}");
        let twice = format!("{BASE}{}", &BASE[BASE.find("[[accounts]]").unwrap()..]);
        assert!(parse(&twice).unwrap_err().contains("appears twice"));
        // Evidence keys: the ledger's key in hex, witnesses only with it.
        let with =
            |extra: &str| BASE.replace("plaintext = true", &format!("plaintext = true\n{extra}"));
        let e = parse(&with("ledger_public_key = \"00ff\"")).unwrap_err();
        assert!(
            e.contains("ledger_public_key: \"00ff\" is not a key"),
            "{e}"
        );
        let e = parse(&with("witness_keys = [\"w+00+AA\"]")).unwrap_err();
        assert!(
            e.contains("witness_keys: give ledger_public_key too"),
            "{e}"
        );
        let key = "ledger_public_key = \"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\"";
        let e = parse(&with(&format!("{key}\nwitness_keys = [\"w+00+AA\"]"))).unwrap_err();
        assert!(e.contains("witness_keys: --witness-key"), "{e}");
        // Mirrors: a name each, once, and a URL.
        let mirror = |name: &str, addr: &str| {
            format!("{BASE}[[mirrors]]\nname = \"{name}\"\naddress = \"{addr}\"\n")
        };
        let c = parse(&mirror("reg", "https://127.0.0.1:7001")).unwrap();
        assert_eq!(c.mirrors[0].name, "reg");
        let e = parse(&mirror("", "https://127.0.0.1:7001")).unwrap_err();
        assert!(e.contains("mirrors.name"), "{e}");
        let e = parse(&mirror("reg", "127.0.0.1:7001")).unwrap_err();
        assert!(e.contains("mirrors.address \"127.0.0.1:7001\""), "{e}");
        let two = format!(
            "{}[[mirrors]]\nname = \"reg\"\naddress = \"https://h:1\"\n",
            mirror("reg", "https://h:2")
        );
        assert!(parse(&two).unwrap_err().contains("appears twice"));
        let c = parse(&with(key)).unwrap();
        assert!(c.evidence_keys().unwrap().is_some());
        assert!(parse(BASE).unwrap().evidence_keys().unwrap().is_none());
    }
}
