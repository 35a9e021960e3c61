//! TLS for clients: the CA that signed ledgerd's certificate, and this client's certificate and
//! key (mutual TLS: ledgerd maps the certificate's public key to a principal with a role).
//!
//! Every client of the workspace (ledgerctl, ledger-agent, the tests) connects through
//! [`crate::connect`] / [`endpoint`]; an `https://` address uses the process's client identity,
//! set once at start-up with [`set_default`] (the binaries read `--tls-ca/--tls-cert/--tls-key` or
//! `LEDGER_CA`, `LEDGER_CERT`, `LEDGER_KEY`). An address without a scheme is `https://` when an
//! identity is set, else `http://` (a ledgerd that serves plaintext on loopback).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tonic::transport::{Certificate, ClientTlsConfig, Identity};

/// Environment variables the binaries read when no flag is given.
pub const ENV_CA: &str = "LEDGER_CA";
pub const ENV_CERT: &str = "LEDGER_CERT";
pub const ENV_KEY: &str = "LEDGER_KEY";

/// A client's TLS material, PEM.
#[derive(Clone, Debug)]
pub struct ClientTls {
    /// The CA certificate(s) ledgerd's certificate must chain to.
    pub ca_pem: Vec<u8>,
    /// This client's certificate chain and PKCS#8 key; `None` connects without a client
    /// certificate (ledgerd then answers only health checks).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

/// A file named by a flag or an environment variable could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{what} {}: {err}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        err: std::io::Error,
    },
    #[error("{0}")]
    Incomplete(String),
}

impl ClientTls {
    /// Read the CA and, when both are given, the certificate and key.
    pub fn from_files(
        ca: &Path,
        cert: Option<&Path>,
        key: Option<&Path>,
    ) -> Result<ClientTls, TlsError> {
        let read = |what, p: &Path| {
            std::fs::read(p).map_err(|err| TlsError::Read {
                what,
                path: p.to_path_buf(),
                err,
            })
        };
        let identity = match (cert, key) {
            (Some(c), Some(k)) => Some((read("--tls-cert", c)?, read("--tls-key", k)?)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(TlsError::Incomplete(
                    "--tls-cert needs --tls-key (or LEDGER_KEY)".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(TlsError::Incomplete(
                    "--tls-key needs --tls-cert (or LEDGER_CERT)".into(),
                ));
            }
        };
        Ok(ClientTls {
            ca_pem: read("--tls-ca", ca)?,
            identity,
        })
    }

    /// The flags' values, each falling back to its environment variable; `None` when no CA is
    /// named at all (plaintext).
    pub fn from_args_or_env(
        ca: Option<&Path>,
        cert: Option<&Path>,
        key: Option<&Path>,
    ) -> Result<Option<ClientTls>, TlsError> {
        let env = |v: &str| std::env::var_os(v).map(PathBuf::from);
        let ca = ca.map(Path::to_path_buf).or_else(|| env(ENV_CA));
        let cert = cert.map(Path::to_path_buf).or_else(|| env(ENV_CERT));
        let key = key.map(Path::to_path_buf).or_else(|| env(ENV_KEY));
        match ca {
            None if cert.is_some() || key.is_some() => Err(TlsError::Incomplete(
                "--tls-cert/--tls-key need --tls-ca (or LEDGER_CA): the CA that signed ledgerd's certificate"
                    .into(),
            )),
            None => Ok(None),
            Some(ca) => ClientTls::from_files(&ca, cert.as_deref(), key.as_deref()).map(Some),
        }
    }

    /// tonic's client configuration.
    pub fn config(&self) -> ClientTlsConfig {
        let c = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&self.ca_pem));
        match &self.identity {
            Some((cert, key)) => c.identity(Identity::from_pem(cert, key)),
            None => c,
        }
    }
}

static DEFAULT: OnceLock<ClientTls> = OnceLock::new();

/// What a binary does at start-up with `--tls-ca/--tls-cert/--tls-key`: read them (or their
/// environment variables) and make them the process's identity ([`set_default`]).
pub fn init_from_args_or_env(
    ca: Option<&Path>,
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<(), TlsError> {
    if let Some(tls) = ClientTls::from_args_or_env(ca, cert, key)? {
        set_default(tls);
    }
    Ok(())
}

/// Set the identity every `https://` connection of this process uses. The first call wins;
/// returns whether this one did.
pub fn set_default(tls: ClientTls) -> bool {
    DEFAULT.set(tls).is_ok()
}

/// The identity set by [`set_default`].
pub fn default_tls() -> Option<&'static ClientTls> {
    DEFAULT.get()
}

/// `addr` with a scheme: as given, or `https://` when a default identity is set, else `http://`.
pub fn with_scheme(addr: &str) -> String {
    if addr.contains("://") {
        addr.to_string()
    } else if DEFAULT.get().is_some() {
        format!("https://{addr}")
    } else {
        format!("http://{addr}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_without_its_key_is_refused_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, b"x").unwrap();
        let e = ClientTls::from_files(&ca, Some(&ca), None).unwrap_err();
        assert!(e.to_string().contains("--tls-cert needs --tls-key"), "{e}");
        let e = ClientTls::from_files(&ca, None, Some(&ca)).unwrap_err();
        assert!(e.to_string().contains("--tls-key needs --tls-cert"), "{e}");
        let e = ClientTls::from_files(&dir.path().join("none.pem"), None, None).unwrap_err();
        assert!(
            e.to_string().contains("--tls-ca") && e.to_string().contains("none.pem"),
            "{e}"
        );
        let ok = ClientTls::from_files(&ca, Some(&ca), Some(&ca)).unwrap();
        assert!(ok.identity.is_some());
    }

    /// The flags given explicitly. (The environment is not touched: it is the process's; when a
    /// variable happens to be set, the cases it would change are left out.)
    #[test]
    fn the_flags_need_a_ca_and_a_ca_alone_is_enough() {
        let no_env = [ENV_CA, ENV_CERT, ENV_KEY]
            .iter()
            .all(|v| std::env::var_os(v).is_none());
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, b"ca").unwrap();
        let cert = dir.path().join("c.pem");
        std::fs::write(&cert, b"cert").unwrap();
        let key = dir.path().join("c.key");
        std::fs::write(&key, b"key").unwrap();
        if no_env {
            assert!(matches!(
                ClientTls::from_args_or_env(None, None, None),
                Ok(None)
            ));
            for (c, k) in [
                (Some(&*cert), None),
                (None, Some(&*key)),
                (Some(&cert), Some(&key)),
            ] {
                match ClientTls::from_args_or_env(None, c, k) {
                    Err(TlsError::Incomplete(m)) => assert!(m.contains("need --tls-ca"), "{m}"),
                    other => panic!("{c:?} {k:?}: {other:?}"),
                }
            }
        }
        let t = ClientTls::from_args_or_env(Some(&ca), Some(&cert), Some(&key))
            .unwrap()
            .unwrap();
        assert_eq!(t.ca_pem, b"ca");
        assert_eq!(t.identity, Some((b"cert".to_vec(), b"key".to_vec())));
        if no_env {
            let t = ClientTls::from_args_or_env(Some(&ca), None, None)
                .unwrap()
                .unwrap();
            assert_eq!((t.ca_pem.as_slice(), t.identity), (b"ca".as_slice(), None));
        }
    }
}
