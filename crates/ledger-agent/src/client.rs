//! The gRPC client: connect with large HTTP/2 windows, stream envelopes, collect receipts in order,
//! and after a disconnect resend everything not yet receipted (the ledger answers DUPLICATE with
//! the original receipt for what it already had).

use std::sync::Arc;
use std::time::Duration;

use ledger_core::proto::{self as v1, ingest_client::IngestClient};
use ledger_core::receipt::compact;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint};

/// Client errors.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("cannot connect to {url}: {err}")]
    Connect {
        url: String,
        err: tonic::transport::Error,
    },
    #[error("bad ledger address {0:?}")]
    Url(String),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("gRPC: {0}")]
    Status(#[from] tonic::Status),
    #[error("key: {0}")]
    Key(String),
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp { attempts: u32, last: String },
    #[error("the ledger answered {got} receipts for {sent} envelopes")]
    Protocol { got: usize, sent: usize },
    #[error("receipt {position}: {error}")]
    Receipt {
        position: usize,
        error: ledger_core::receipt::ReceiptError,
    },
}

/// Connection and retry settings.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Consecutive failed attempts (no receipt gained) before giving up.
    pub max_attempts: u32,
    /// Pause between attempts (doubles each time, up to 2 s).
    pub backoff: Duration,
    pub connect_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            max_attempts: 20,
            backoff: Duration::from_millis(100),
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// A channel to ledgerd with the window sizes the server uses (the 64 KiB default stalls fast
/// streams). `url` like `https://127.0.0.1:50051` (TLS with the process's identity, see
/// [`crate::tls`]) or `http://127.0.0.1:50051` (a plaintext ledgerd on loopback).
pub async fn connect(url: &str) -> Result<Channel, AgentError> {
    endpoint(url, Duration::from_secs(5))?
        .connect()
        .await
        .map_err(|err| AgentError::Connect {
            url: url.to_string(),
            err,
        })
}

/// The endpoint [`connect`] uses, for callers that set more options (e.g. a lazy channel).
pub fn endpoint(url: &str, timeout: Duration) -> Result<Endpoint, AgentError> {
    let url = crate::tls::with_scheme(url);
    let mut e = Endpoint::from_shared(url.clone())
        .map_err(|_| AgentError::Url(url.clone()))?
        .connect_timeout(timeout)
        .tcp_nodelay(true)
        .initial_stream_window_size(Some(4 << 20))
        .initial_connection_window_size(Some(8 << 20));
    if url.starts_with("https://") {
        let tls = crate::tls::default_tls().ok_or_else(|| {
            AgentError::Tls(format!(
                "{url} is TLS but no CA is given: pass --tls-ca (or set LEDGER_CA), and --tls-cert/--tls-key for a client certificate"
            ))
        })?;
        e = e
            .tls_config(tls.config())
            .map_err(|err| AgentError::Tls(format!("{url}: {err}")))?;
    }
    Ok(e)
}

/// Stream `envelopes` on one stream and push the receipts, in order, onto `receipts`. Returns
/// when every envelope has its receipt, or with the error that broke the stream (the receipts
/// received so far are kept).
pub async fn stream_once(
    channel: Channel,
    envelopes: &[v1::Envelope],
    receipts: &mut Vec<v1::Receipt>,
) -> Result<(), AgentError> {
    let total = receipts.len() + envelopes.len();
    stream_from(
        channel,
        Arc::new(envelopes.to_vec()),
        0,
        receipts,
        total,
        &mut |r| r,
    )
    .await
}

/// Stream `envelopes[from..]`, each cloned only as it is sent, pushing what `keep` makes of each
/// receipt onto `receipts` until it holds `total`.
/// Envelopes to stream in order, each made as it is sent: a `Vec` of them, or any store that
/// holds them more compactly (a simulated session of millions keeps them packed, see
/// `casino-play`).
pub trait Envelopes: Send + Sync + 'static {
    /// How many.
    fn count(&self) -> usize;
    /// The `i`-th (`i < count()`), to send.
    fn envelope(&self, i: usize) -> v1::Envelope;
}

impl Envelopes for Vec<v1::Envelope> {
    fn count(&self) -> usize {
        self.len()
    }
    fn envelope(&self, i: usize) -> v1::Envelope {
        self[i].clone()
    }
}

async fn stream_from<T, E: Envelopes>(
    channel: Channel,
    envelopes: Arc<E>,
    from: usize,
    receipts: &mut Vec<T>,
    total: usize,
    keep: &mut impl FnMut(v1::Receipt) -> T,
) -> Result<(), AgentError> {
    let mut client = IngestClient::new(channel)
        .max_decoding_message_size(16 << 20)
        .max_encoding_message_size(16 << 20);
    let n = envelopes.count().saturating_sub(from);
    let out = tokio_stream::iter((from..envelopes.count()).map(move |i| envelopes.envelope(i)));
    // Compact receipts, made whole here as they arrive (ledger_core::receipt::compact): the
    // receipts this returns are the full ones.
    let mut request = tonic::Request::new(out);
    request.metadata_mut().insert(
        compact::HEADER,
        tonic::metadata::MetadataValue::from_static(compact::COMPACT),
    );
    let mut inbound = client.submit(request).await?.into_inner();
    let mut expander = compact::Expander::default();
    let mut got = 0usize;
    while receipts.len() < total {
        match inbound.next().await {
            Some(Ok(mut r)) => {
                expander
                    .expand(&mut r)
                    .map_err(|error| AgentError::Receipt {
                        position: got + 1,
                        error,
                    })?;
                receipts.push(keep(r));
                got += 1;
            }
            Some(Err(s)) => return Err(AgentError::Status(s)),
            None => return Err(AgentError::Protocol { got, sent: n }),
        }
    }
    Ok(())
}

/// Submit every envelope and return one receipt per envelope, in order, reconnecting and resending
/// what is not yet receipted after any failure (kill -9 of the server included).
pub async fn submit_all(
    url: &str,
    envelopes: &[v1::Envelope],
    opts: &ClientOptions,
) -> Result<Vec<v1::Receipt>, AgentError> {
    submit_shared(url, Arc::new(envelopes.to_vec()), opts).await
}

/// [`submit_all`] without copying the envelopes: each is cloned only as it is sent.
pub async fn submit_shared<E: Envelopes>(
    url: &str,
    envelopes: Arc<E>,
    opts: &ClientOptions,
) -> Result<Vec<v1::Receipt>, AgentError> {
    submit_shared_with(url, envelopes, opts, |r| r).await
}

/// [`submit_shared`], keeping of each receipt only what `keep` makes of it (in order, one per
/// envelope): a caller streaming millions of events need not hold millions of receipts, each
/// with its signed group head and inclusion path.
pub async fn submit_shared_with<T, E: Envelopes>(
    url: &str,
    envelopes: Arc<E>,
    opts: &ClientOptions,
    mut keep: impl FnMut(v1::Receipt) -> T,
) -> Result<Vec<T>, AgentError> {
    let total = envelopes.count();
    let mut receipts = Vec::with_capacity(total);
    let mut attempts = 0u32;
    let mut pause = opts.backoff;
    while receipts.len() < total {
        let before = receipts.len();
        let result = match endpoint(url, opts.connect_timeout)?.connect().await {
            Ok(ch) => {
                let from = receipts.len();
                stream_from(ch, envelopes.clone(), from, &mut receipts, total, &mut keep).await
            }
            Err(err) => Err(AgentError::Connect {
                url: url.to_string(),
                err,
            }),
        };
        if let Err(e) = result {
            // A stream that stored something before it broke was progress: the count of
            // consecutive failed attempts (and the backoff) starts again.
            if receipts.len() > before {
                attempts = 0;
                pause = opts.backoff;
            }
            attempts += 1;
            if attempts >= opts.max_attempts {
                return Err(AgentError::GaveUp {
                    attempts,
                    last: e.to_string(),
                });
            }
            tracing::warn!(error = %e, resend_from = receipts.len(), "ingest stream broke; reconnecting");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }
    Ok(receipts)
}
