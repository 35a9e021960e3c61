//! TLS on ledgerd's listeners (rustls with ring, through tokio-rustls: the crates tonic's own
//! TLS uses).
//!
//! ledgerd runs the handshakes itself instead of handing tonic a static `ServerTlsConfig`, for
//! three things tonic's does not do: a **deadline** on every handshake (a peer that connects and
//! says nothing gives its place back), handshakes **concurrent** with accepting (one slow peer
//! does not hold up the others), and **reloading** the certificate, key and client CAs on SIGHUP
//! ([`Reloadable::reload`]): new handshakes use the new files, established connections and their
//! streams go on. Client certificates are verified against the client CAs here; which principal a
//! certificate is, and what it may call, is [`crate::access`].

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::server::TlsStream;
use tokio_stream::{Stream, StreamExt};

/// The files of `[tls]`.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    pub cert_chain: PathBuf,
    pub key: PathBuf,
    pub client_ca: Vec<PathBuf>,
    /// Refuse the handshake of a client without a certificate (otherwise it is let in, and
    /// answered only by the health service).
    pub require_client_cert: bool,
}

/// A TLS file that cannot be used, naming it.
#[derive(Debug, thiserror::Error)]
#[error("{key} = {path}: {problem}")]
pub struct TlsError {
    pub key: &'static str,
    pub path: String,
    pub problem: String,
}

fn problem(key: &'static str, path: &Path, problem: impl ToString) -> TlsError {
    TlsError {
        key,
        path: path.display().to_string(),
        problem: problem.to_string(),
    }
}

fn certificates(key: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = std::fs::read(path).map_err(|e| problem(key, path, e))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| problem(key, path, format!("not PEM certificates: {e}")))?;
    if certs.is_empty() {
        return Err(problem(key, path, "holds no PEM certificate"));
    }
    Ok(certs)
}

/// The rustls configuration of these files.
pub fn server_config(f: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certificates("tls.cert_chain", &f.cert_chain)?;
    let pem = std::fs::read(&f.key).map_err(|e| problem("tls.key", &f.key, e))?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        problem(
            "tls.key",
            &f.key,
            format!("not a PEM private key (PKCS#8, SEC1 or PKCS#1): {e}"),
        )
    })?;
    let mut roots = rustls::RootCertStore::empty();
    for p in &f.client_ca {
        for c in certificates("tls.client_ca", p)? {
            roots
                .add(c)
                .map_err(|e| problem("tls.client_ca", p, format!("not a CA certificate: {e}")))?;
        }
    }
    if roots.is_empty() {
        return Err(TlsError {
            key: "tls.client_ca",
            path: "[]".into(),
            problem: "no client CA: name the CA that signs the clients' certificates".into(),
        });
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone());
    let verifier = if f.require_client_cert {
        verifier.build()
    } else {
        verifier.allow_unauthenticated().build()
    }
    .map_err(|e| problem("tls.client_ca", &f.client_ca[0], e))?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| problem("tls.cert_chain", &f.cert_chain, e))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(|e| {
            problem(
                "tls.key",
                &f.key,
                format!("does not fit the certificate: {e}"),
            )
        })?;
    // gRPC is HTTP/2; clients that negotiate ALPN (grpcio, grpc-go) require it.
    cfg.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(cfg))
}

/// The current configuration, replaced on reload.
#[derive(Clone)]
pub struct Reloadable {
    files: TlsFiles,
    current: Arc<RwLock<Arc<rustls::ServerConfig>>>,
}

impl Reloadable {
    pub fn load(files: TlsFiles) -> Result<Reloadable, TlsError> {
        let cfg = server_config(&files)?;
        Ok(Reloadable {
            files,
            current: Arc::new(RwLock::new(cfg)),
        })
    }

    /// Read the files again; on any error the configuration in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let cfg = server_config(&self.files)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = cfg;
        Ok(())
    }

    /// For the HTTP/1.1 listener (metrics, tlog-tiles): the same configuration, but offering
    /// only `http/1.1` in ALPN, so that a client that would take `h2` (Prometheus does by
    /// default) speaks what the listener serves.
    pub(crate) fn http1_acceptor(&self) -> tokio_rustls::TlsAcceptor {
        let mut cfg =
            rustls::ServerConfig::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()));
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        tokio_rustls::TlsAcceptor::from(Arc::new(cfg))
    }

    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

/// Handshakes on the accepted connections, each in a task of its own with `deadline`; yields
/// the connections whose handshake succeeded. Failures are logged at debug level (a scanner
/// or a client with the wrong CA is not ledgerd's problem), counted in `failed`.
pub fn handshakes<S, IO>(
    accepted: S,
    tls: Reloadable,
    deadline: Duration,
) -> impl Stream<Item = io::Result<TlsStream<IO>>>
where
    S: Stream<Item = io::Result<IO>> + Send + Unpin + 'static,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    tokio::spawn(async move {
        let mut accepted = accepted;
        loop {
            let conn = tokio::select! {
                c = accepted.next() => c,
                // The server has stopped: stop accepting.
                _ = tx.closed() => break,
            };
            let Some(conn) = conn else { break };
            let conn = match conn {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    continue;
                }
            };
            let acceptor = tls.acceptor();
            let tx = tx.clone();
            tokio::spawn(async move {
                match tokio::time::timeout(deadline, acceptor.accept(conn)).await {
                    Ok(Ok(s)) => {
                        let _ = tx.send(Ok(s)).await;
                    }
                    Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                    Err(_) => tracing::debug!(?deadline, "TLS handshake timed out"),
                }
            });
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}
