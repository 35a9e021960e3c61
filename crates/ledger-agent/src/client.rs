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
            pause = next_pause(pause);
        }
    }
    Ok(receipts)
}

/// The longest pause between attempts.
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// The pause after `pause`: twice as long, up to [`MAX_PAUSE`].
fn next_pause(pause: Duration) -> Duration {
    (pause * 2).min(MAX_PAUSE)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Mutex;

    use ed25519_dalek::SigningKey;
    use ledger_core::proto::event_body::Payload;
    use ledger_core::proto::ingest_server::{Ingest, IngestServer};
    use ledger_core::receipt::ReceiptError;
    use prost::Message;
    use prost::bytes::Bytes;
    use tonic::{Request, Response, Status, Streaming};

    use super::*;
    use crate::DeviceSigner;

    /// Fails a test that hangs (a client that never gives up, a stalled stream) instead of
    /// blocking the run. Nothing is asserted about how long anything took.
    async fn within<F: Future>(f: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(15), f)
            .await
            .expect("the call hung")
    }

    /// What the fake ledger does on one call.
    #[derive(Clone, Copy, Debug)]
    enum Call {
        /// Answer every envelope.
        Answer,
        /// Answer `k` envelopes, then fail the call (UNAVAILABLE).
        BreakAfter(usize),
        /// Answer `k` envelopes, then end the call with OK.
        EndAfter(usize),
        /// Answer every envelope, but the receipt at (1-based) position `p` of the call cannot be
        /// made whole (`path_from_before` without `group_as_before`).
        BadCompactAt(usize),
        /// Answer every envelope with a receipt carrying this many bytes of `detail`.
        Padded(usize),
    }

    /// One call as the fake ledger saw it: whether it asked for compact receipts, and the
    /// envelopes it read.
    type Seen = (bool, Vec<v1::Envelope>);

    /// A fake ledger. Its calls follow the script in order, the last behaviour repeating.
    #[derive(Clone)]
    struct Fake {
        script: Arc<Mutex<VecDeque<Call>>>,
        calls: Arc<Mutex<Vec<Seen>>>,
    }

    impl Fake {
        fn calls(&self) -> Vec<Seen> {
            self.calls.lock().unwrap().clone()
        }

        /// The first envelope each call read.
        fn firsts(&self) -> Vec<v1::Envelope> {
            self.calls()
                .into_iter()
                .map(|(_, e)| e[0].clone())
                .collect()
        }
    }

    /// The full receipt the fake ledger gives `env`: it names the envelope (its device and
    /// sequence, and its signature as the entry hash). Sequences 2k and 2k+1 share a group head
    /// and the upper half of their path, so that compact receipts leave something out.
    fn receipt_for(env: &v1::Envelope) -> v1::Receipt {
        let body = v1::EventBody::decode(env.body.as_slice()).unwrap();
        let s = body.sequence;
        let mut path = vec![s as u8; 32];
        path.extend_from_slice(&[(s / 2) as u8; 32]);
        v1::Receipt {
            status: v1::ReceiptStatus::Accepted as i32,
            device_id: body.device_id,
            sequence: s,
            index: 1_000 + s,
            entry_hash: env.signature.clone(),
            group: Some(v1::SignedGroupHead {
                body: Bytes::from((s / 2).to_be_bytes().to_vec()),
                signature: Bytes::from(vec![7u8; 64]),
            }),
            group_path: path.into(),
            ..Default::default()
        }
    }

    #[tonic::async_trait]
    impl Ingest for Fake {
        type SubmitStream =
            Pin<Box<dyn tokio_stream::Stream<Item = Result<v1::Receipt, Status>> + Send>>;

        async fn submit(
            &self,
            req: Request<Streaming<v1::Envelope>>,
        ) -> Result<Response<Self::SubmitStream>, Status> {
            let compact = req
                .metadata()
                .get(compact::HEADER)
                .is_some_and(|v| v == compact::COMPACT);
            let call = {
                let mut s = self.script.lock().unwrap();
                if s.len() > 1 {
                    s.pop_front()
                } else {
                    s.front().copied()
                }
                .unwrap()
            };
            let n = {
                let mut c = self.calls.lock().unwrap();
                c.push((compact, Vec::new()));
                c.len() - 1
            };
            let calls = self.calls.clone();
            let mut inbound = req.into_inner();
            let (tx, rx) = tokio::sync::mpsc::channel(16);
            tokio::spawn(async move {
                let mut compactor = compact::Compactor::default();
                let mut answered = 0;
                while let Some(Ok(env)) = inbound.next().await {
                    calls.lock().unwrap()[n].1.push(env.clone());
                    match call {
                        Call::BreakAfter(k) if answered == k => {
                            let _ = tx.send(Err(Status::unavailable("scripted break"))).await;
                            return;
                        }
                        Call::EndAfter(k) if answered == k => return,
                        _ => {}
                    }
                    let mut r = receipt_for(&env);
                    if let Call::Padded(len) = call {
                        r.detail = "x".repeat(len);
                    }
                    if compact {
                        compactor.compact(&mut r);
                    }
                    answered += 1;
                    if matches!(call, Call::BadCompactAt(p) if p == answered) {
                        r.group_as_before = false;
                        r.path_from_before = 1;
                    }
                    if tx.send(Ok(r)).await.is_err() {
                        return;
                    }
                }
            });
            Ok(Response::new(Box::pin(
                tokio_stream::wrappers::ReceiverStream::new(rx),
            )))
        }
    }

    /// Serve a fake ledger following `script` on a port of its own; its `http://` address.
    async fn serve(script: &[Call]) -> (String, Fake) {
        let (addr, fake) = serve_on(script, None).await;
        (format!("http://{addr}"), fake)
    }

    /// [`serve`], over TLS when `tls` is given; its `host:port`.
    async fn serve_on(
        script: &[Call],
        tls: Option<tonic::transport::ServerTlsConfig>,
    ) -> (std::net::SocketAddr, Fake) {
        let fake = Fake {
            script: Arc::new(Mutex::new(script.iter().copied().collect())),
            calls: Default::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let service = IngestServer::new(fake.clone())
            .max_decoding_message_size(32 << 20)
            .max_encoding_message_size(32 << 20);
        let mut server = tonic::transport::Server::builder();
        if let Some(tls) = tls {
            server = server.tls_config(tls).unwrap();
        }
        tokio::spawn(
            server
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        (addr, fake)
    }

    /// An address where nothing listens: a port bound and not listened on, so that a connection
    /// is refused at once; it stays bound (no other test can take it) while the socket is kept.
    fn unreachable() -> (String, tokio::net::TcpSocket) {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        (format!("http://{}", socket.local_addr().unwrap()), socket)
    }

    /// `n` signed events of one device, sequences 1..=n.
    fn envelopes(n: u64) -> Vec<v1::Envelope> {
        let mut signer = DeviceSigner::new("table-1", SigningKey::from_bytes(&[3; 32]), 1);
        (1..=n)
            .map(|g| {
                signer.sign(
                    1_000 + g as i64,
                    Payload::GamePlayed(v1::GamePlayed {
                        machine_id: "M1".into(),
                        game_number: g,
                        wager_cents: 100,
                        win_cents: 0,
                    }),
                )
            })
            .collect()
    }

    fn receipts_for(envs: &[v1::Envelope]) -> Vec<v1::Receipt> {
        envs.iter().map(receipt_for).collect()
    }

    /// Retry settings with a tiny pause, so that giving up is quick.
    fn quick(max_attempts: u32) -> ClientOptions {
        ClientOptions {
            max_attempts,
            backoff: Duration::from_millis(1),
            connect_timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn every_envelope_gets_its_full_receipt_in_order() {
        let (url, fake) = serve(&[Call::Answer]).await;
        let envs = envelopes(7);
        let got = within(submit_all(&url, &envs, &quick(1))).await.unwrap();
        assert_eq!(
            got,
            receipts_for(&envs),
            "made whole, one per envelope, in order"
        );
        let calls = fake.calls();
        assert_eq!(calls.len(), 1);
        assert!(calls[0].0, "the client asks for compact receipts");
        assert_eq!(calls[0].1, envs, "each envelope sent once, as it was");
    }

    #[tokio::test]
    async fn submit_shared_with_keeps_what_keep_makes_of_each_receipt() {
        let (url, _) = serve(&[Call::BreakAfter(2), Call::Answer]).await;
        let envs = Arc::new(envelopes(5));
        let got = within(submit_shared_with(&url, envs.clone(), &quick(2), |r| {
            (r.sequence, r.group.is_some())
        }))
        .await
        .unwrap();
        assert_eq!(got, (1..=5).map(|s| (s, true)).collect::<Vec<_>>());
        let got = within(submit_shared(&url, envs.clone(), &quick(1))).await;
        assert_eq!(got.unwrap(), receipts_for(&envs));
    }

    #[tokio::test]
    async fn nothing_to_send_needs_no_ledger() {
        let (url, _socket) = unreachable();
        let got = within(submit_all(&url, &[], &quick(1))).await.unwrap();
        assert!(got.is_empty());
    }

    #[tokio::test]
    async fn a_broken_call_is_resumed_from_the_first_envelope_without_a_receipt() {
        let script = [
            Call::BreakAfter(2),
            Call::BreakAfter(0),
            Call::BreakAfter(3),
            Call::Answer,
        ];
        let (url, fake) = serve(&script).await;
        let envs = envelopes(8);
        let got = within(submit_all(&url, &envs, &quick(3))).await.unwrap();
        assert_eq!(got, receipts_for(&envs));
        // Each call starts at the first envelope without a receipt: nothing receipted is sent
        // again, nothing is skipped.
        assert_eq!(
            fake.firsts(),
            [&envs[0], &envs[2], &envs[2], &envs[5]].map(Clone::clone)
        );
        assert_eq!(fake.calls()[3].1, envs[5..]);
    }

    #[tokio::test]
    async fn each_call_that_gains_a_receipt_starts_the_count_of_failures_again() {
        // Every call answers one envelope and breaks: with two attempts allowed, only the reset
        // on progress gets all six through.
        let (url, fake) = serve(&[Call::BreakAfter(1)]).await;
        let envs = envelopes(6);
        let got = within(submit_all(&url, &envs, &quick(2))).await.unwrap();
        assert_eq!(got, receipts_for(&envs));
        assert_eq!(fake.firsts(), envs);
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts_in_a_row_without_a_receipt() {
        let (url, fake) = serve(&[Call::BreakAfter(1), Call::BreakAfter(0)]).await;
        let envs = envelopes(4);
        match within(submit_all(&url, &envs, &quick(3))).await {
            Err(AgentError::GaveUp { attempts, last }) => {
                assert_eq!(attempts, 3);
                assert!(last.contains("scripted break"), "{last}");
            }
            other => panic!("{other:?}"),
        }
        // The first call's failure counts (after its progress), then two more.
        assert_eq!(fake.calls().len(), 3);
        assert_eq!(
            fake.firsts(),
            [&envs[0], &envs[1], &envs[1]].map(Clone::clone)
        );
    }

    #[tokio::test]
    async fn a_call_ended_early_is_retried_and_reported_when_given_up() {
        let (url, _) = serve(&[Call::EndAfter(2), Call::EndAfter(0)]).await;
        match within(submit_all(&url, &envelopes(4), &quick(2))).await {
            Err(AgentError::GaveUp { attempts, last }) => {
                assert_eq!(attempts, 2);
                assert_eq!(last, "the ledger answered 0 receipts for 2 envelopes");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_ledger_that_cannot_be_reached_is_given_up_on() {
        let (url, _socket) = unreachable();
        match within(submit_all(&url, &envelopes(2), &quick(3))).await {
            Err(AgentError::GaveUp { attempts, last }) => {
                assert_eq!(attempts, 3);
                assert!(
                    last.starts_with(&format!("cannot connect to {url}")),
                    "{last}"
                );
            }
            other => panic!("{other:?}"),
        }
        match within(connect(&url)).await {
            Err(AgentError::Connect { url: u, .. }) => assert_eq!(u, url),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_bad_address_is_refused_before_connecting() {
        for bad in ["http://a b", "http://[::1"] {
            match within(connect(bad)).await {
                Err(AgentError::Url(u)) => assert_eq!(u, bad),
                other => panic!("{bad}: {other:?}"),
            }
        }
        let got = within(submit_all("http://a b", &envelopes(1), &quick(3))).await;
        assert!(matches!(got, Err(AgentError::Url(_))), "{got:?}");
    }

    #[tokio::test]
    async fn stream_once_adds_one_receipt_per_envelope_after_those_it_was_given() {
        let (url, fake) = serve(&[Call::Answer]).await;
        let envs = envelopes(5);
        let ch = within(connect(&url)).await.unwrap();
        let mut receipts = receipts_for(&envs[..2]);
        within(stream_once(ch, &envs[2..], &mut receipts))
            .await
            .unwrap();
        assert_eq!(receipts, receipts_for(&envs));
        assert_eq!(fake.calls()[0].1, envs[2..]);
    }

    #[tokio::test]
    async fn a_stream_ended_early_is_a_protocol_error_with_got_and_sent() {
        let (url, _) = serve(&[Call::EndAfter(2)]).await;
        let envs = envelopes(5);
        let ch = within(connect(&url)).await.unwrap();
        let mut receipts = receipts_for(&envs[..1]);
        match within(stream_once(ch, &envs[1..], &mut receipts)).await {
            Err(AgentError::Protocol { got, sent }) => assert_eq!((got, sent), (2, 4)),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            receipts,
            receipts_for(&envs[..3]),
            "the receipts received are kept"
        );
    }

    #[tokio::test]
    async fn a_compact_receipt_that_cannot_be_made_whole_is_named_by_its_position() {
        let (url, _) = serve(&[Call::BadCompactAt(3)]).await;
        let envs = envelopes(5);
        let ch = within(connect(&url)).await.unwrap();
        let mut receipts = Vec::new();
        match within(stream_once(ch, &envs, &mut receipts)).await {
            Err(AgentError::Receipt {
                position,
                error: ReceiptError::Compact(why),
            }) => {
                assert_eq!(position, 3);
                assert!(why.contains("path_from_before"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(receipts, receipts_for(&envs[..2]));
    }

    #[tokio::test]
    async fn a_call_failed_by_the_ledger_is_its_status() {
        let (url, _) = serve(&[Call::BreakAfter(1)]).await;
        let envs = envelopes(3);
        let ch = within(connect(&url)).await.unwrap();
        let mut receipts = Vec::new();
        match within(stream_once(ch, &envs, &mut receipts)).await {
            Err(AgentError::Status(s)) => {
                assert_eq!(
                    (s.code(), s.message()),
                    (tonic::Code::Unavailable, "scripted break")
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(receipts, receipts_for(&envs[..1]));
    }

    /// tonic's default limit is 4 MiB; the client raises it to 16 MiB. The 5 MiB receipt also
    /// needs the endpoint's flow-control windows: with a zero connection window it stalls after
    /// the first 64 KiB (with a zero stream window every call stalls, in every test here).
    #[tokio::test]
    async fn receipts_up_to_16_mib_are_taken_and_larger_ones_refused() {
        let (url, _) = serve(&[Call::Padded(5 << 20), Call::Padded(17 << 20)]).await;
        let envs = envelopes(1);
        let ch = within(connect(&url)).await.unwrap();
        let mut receipts = Vec::new();
        within(stream_once(ch.clone(), &envs, &mut receipts))
            .await
            .unwrap();
        assert_eq!(receipts[0].detail.len(), 5 << 20);
        match within(stream_once(ch, &envs, &mut Vec::new())).await {
            Err(AgentError::Status(s)) => assert_eq!(s.code(), tonic::Code::OutOfRange, "{s}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_vec_of_envelopes_gives_each_as_it_is() {
        let envs = envelopes(3);
        assert_eq!(Envelopes::count(&envs), 3);
        assert_eq!(envs.envelope(1), envs[1]);
        assert_eq!(envs.envelope(2), envs[2]);
    }

    #[test]
    fn the_pause_doubles_up_to_two_seconds() {
        let mut p = Duration::from_millis(100);
        let pauses: Vec<_> = (0..6)
            .map(|_| {
                p = next_pause(p);
                p.as_millis()
            })
            .collect();
        assert_eq!(pauses, [200, 400, 800, 1600, 2000, 2000]);
        assert_eq!(ClientOptions::default().backoff, Duration::from_millis(100));
    }

    /// A CA, a certificate for 127.0.0.1 it signed, and a client certificate it signed: each
    /// (certificate, key) in PEM.
    struct Pki {
        ca: String,
        server: (String, String),
        client: (String, String),
    }

    fn pki() -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
            KeyUsagePurpose,
        };
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
        let issuer = Issuer::new(ca, ca_key);
        let leaf = |sans: Vec<String>, usage| {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::new(sans).unwrap();
            p.extended_key_usages = vec![usage];
            let cert = p.signed_by(&key, &issuer).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        Pki {
            ca: ca_pem,
            server: leaf(
                vec!["127.0.0.1".into()],
                ExtendedKeyUsagePurpose::ServerAuth,
            ),
            client: leaf(vec![], ExtendedKeyUsagePurpose::ClientAuth),
        }
    }

    /// The process's TLS identity ([`crate::tls::set_default`]) is global and set once: this is
    /// the one test that sets it (the others give `http://` addresses, which it does not
    /// change), so that what holds before and after it is set is certain.
    #[tokio::test]
    async fn an_address_without_a_scheme_uses_the_process_identity_over_tls() {
        use crate::tls::{self, ClientTls};
        assert!(tls::default_tls().is_none());
        assert_eq!(tls::with_scheme("127.0.0.1:1"), "http://127.0.0.1:1");
        assert_eq!(tls::with_scheme("https://h:1"), "https://h:1");
        match endpoint("https://127.0.0.1:1", Duration::from_secs(1)) {
            Err(AgentError::Tls(m)) => assert!(
                m.starts_with("https://127.0.0.1:1 is TLS but no CA is given: pass --tls-ca"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        if [tls::ENV_CA, tls::ENV_CERT, tls::ENV_KEY]
            .iter()
            .all(|v| std::env::var_os(v).is_none())
        {
            tls::init_from_args_or_env(None, None, None).unwrap();
            assert!(tls::default_tls().is_none(), "no CA: plaintext");
        }

        let pki = pki();
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let (ca, cert, key) = (
            write("ca.pem", &pki.ca),
            write("client.pem", &pki.client.0),
            write("client.key", &pki.client.1),
        );
        tls::init_from_args_or_env(Some(&ca), Some(&cert), Some(&key)).unwrap();
        let set = tls::default_tls().expect("the identity is set");
        assert_eq!(set.ca_pem, pki.ca.as_bytes());
        let identity = (
            pki.client.0.clone().into_bytes(),
            pki.client.1.clone().into_bytes(),
        );
        assert_eq!(set.identity, Some(identity));
        let other = ClientTls {
            ca_pem: b"other".to_vec(),
            identity: None,
        };
        assert!(!tls::set_default(other), "the first identity set stays");
        assert_eq!(tls::default_tls().unwrap().ca_pem, pki.ca.as_bytes());
        assert_eq!(tls::with_scheme("127.0.0.1:1"), "https://127.0.0.1:1");
        assert_eq!(tls::with_scheme("http://h:1"), "http://h:1");

        // A ledger whose certificate the CA signed and that wants a client certificate from it.
        use tonic::transport::{Certificate, Identity, ServerTlsConfig};
        let server_tls = ServerTlsConfig::new()
            .identity(Identity::from_pem(&pki.server.0, &pki.server.1))
            .client_ca_root(Certificate::from_pem(&pki.ca));
        let (addr, fake) = serve_on(&[Call::Answer], Some(server_tls)).await;
        let envs = envelopes(3);
        let got = within(submit_all(&addr.to_string(), &envs, &quick(1))).await;
        assert_eq!(got.unwrap(), receipts_for(&envs));
        assert_eq!(fake.calls().len(), 1);
        // Plaintext to it, asked for explicitly, fails.
        let got = within(submit_all(&format!("http://{addr}"), &envs, &quick(1))).await;
        assert!(matches!(got, Err(AgentError::GaveUp { .. })), "{got:?}");
    }
}
