//! A bound on the client connections open at once (`grpc.max_connections`).
//!
//! Every connection costs ledgerd memory (HTTP/2 state and buffers, its streams' tasks) for as
//! long as the peer keeps it, and any host that can reach the port can open one. Past the bound,
//! a connection is closed as soon as it is accepted (the client sees it closed, not a hang in the
//! kernel's backlog), and the log says so, at most once every 10 s with the count.
//! HTTP/2 keep-alive pings (`grpc.keepalive_secs`) close connections whose peer vanished, so
//! they do not hold their place.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// How often the log may say that connections were refused.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// Connections open per peer address.
pub(crate) type Peers = Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>;

/// A connection's place among its address's, given back when dropped (here and on the metrics
/// listener).
pub(crate) struct PeerPlace {
    peers: Peers,
    ip: std::net::IpAddr,
}

impl PeerPlace {
    pub(crate) fn take(peers: &Peers, ip: std::net::IpAddr, max: usize) -> Option<PeerPlace> {
        let mut open = peers.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_default();
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(PeerPlace {
            peers: peers.clone(),
            ip,
        })
    }
}

impl Drop for PeerPlace {
    fn drop(&mut self) {
        let mut open = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Accepted connections, at most `max` open at once and `per_peer` from one address.
pub struct Limited<S> {
    inner: S,
    room: Arc<Semaphore>,
    max: usize,
    peers: Peers,
    per_peer: usize,
    /// Refused since the last warning.
    refused: u64,
    last_warning: Option<Instant>,
}

impl<S> Limited<S> {
    pub fn new(inner: S, max: usize, per_peer: usize) -> Self {
        Limited {
            inner,
            room: Arc::new(Semaphore::new(max)),
            max,
            peers: Arc::default(),
            per_peer,
            refused: 0,
            last_warning: None,
        }
    }

    fn refuse(&mut self, tcp: TcpStream, why: &'static str) {
        self.refused += 1;
        let now = Instant::now();
        if self
            .last_warning
            .is_none_or(|t| now.duration_since(t) >= WARN_EVERY)
        {
            tracing::warn!(
                peer = ?tcp.peer_addr().ok(),
                refused = self.refused,
                max = self.max,
                per_peer = self.per_peer,
                "connections refused: {why}"
            );
            self.refused = 0;
            self.last_warning = Some(now);
        }
        drop(tcp);
    }
}

impl<S> Stream for Limited<S>
where
    S: Stream<Item = io::Result<TcpStream>> + Unpin,
{
    type Item = io::Result<Counted>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match ready!(Pin::new(&mut self.inner).poll_next(cx)) {
                None => return Poll::Ready(None),
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                Some(Ok(tcp)) => {
                    // Its address's place first, so connections refused there take no place
                    // of all: one host cannot hold every place.
                    let place = match tcp.peer_addr() {
                        Ok(a) => PeerPlace::take(&self.peers, a.ip(), self.per_peer),
                        Err(_) => None, // already gone
                    };
                    let Some(place) = place else {
                        crate::limits::Limit::ConnectionsPerPeer.refused();
                        self.refuse(
                            tcp,
                            "grpc.max_connections_per_peer are open from its address",
                        );
                        continue;
                    };
                    match self.room.clone().try_acquire_owned() {
                        Ok(room) => {
                            return Poll::Ready(Some(Ok(Counted {
                                tcp,
                                _room: room,
                                _place: place,
                            })));
                        }
                        Err(_) => {
                            crate::limits::Limit::Connections.refused();
                            self.refuse(tcp, "grpc.max_connections are open")
                        }
                    }
                }
            }
        }
    }
}

/// A connection that holds its place among `grpc.max_connections` until it is dropped.
pub struct Counted {
    tcp: TcpStream,
    _room: OwnedSemaphorePermit,
    _place: PeerPlace,
}

impl Connected for Counted {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.tcp.connect_info()
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_stream::StreamExt;
    use tokio_stream::wrappers::TcpListenerStream;

    /// The third connection against a bound of two is closed at once; when one of the two
    /// closes, a new one is served.
    #[tokio::test]
    async fn connections_past_the_bound_are_closed_and_room_comes_back() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut limited = Limited::new(TcpListenerStream::new(listener), 2, 2);
        // The server: echo one byte on every connection it keeps.
        let (kept_tx, mut kept_rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(Ok(mut c)) = limited.next().await {
                let kept = kept_tx.clone();
                tokio::spawn(async move {
                    let _ = kept.send(c.connect_info().remote_addr);
                    let mut b = [0u8; 1];
                    while c.read_exact(&mut b).await.is_ok() {
                        if c.write_all(&b).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        async fn echoes(c: &mut TcpStream) -> bool {
            let mut b = [7u8];
            c.write_all(&b).await.is_ok() && c.read_exact(&mut b).await.is_ok() && b == [7]
        }
        let mut a = TcpStream::connect(addr).await.unwrap();
        let mut b = TcpStream::connect(addr).await.unwrap();
        assert!(echoes(&mut a).await && echoes(&mut b).await);
        for c in [&a, &b] {
            // The connection info is the peer's, as tonic's own TCP streams give it.
            assert_eq!(kept_rx.recv().await.unwrap(), c.local_addr().ok());
        }
        let mut third = TcpStream::connect(addr).await.unwrap();
        assert!(
            !echoes(&mut third).await,
            "a third connection must be closed"
        );
        drop(a);
        // The server notices the close when its read fails; retry until the place is free.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut c = TcpStream::connect(addr).await.unwrap();
            if echoes(&mut c).await {
                break;
            }
            assert!(Instant::now() < deadline, "the freed place never came back");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(echoes(&mut b).await, "the kept connection still works");
    }

    /// One address may hold `per_peer` places; another address still gets one, and the first
    /// gets its place back when one of its connections closes.
    #[tokio::test]
    async fn one_address_cannot_take_every_place() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut limited = Limited::new(TcpListenerStream::new(listener), 100, 2);
        tokio::spawn(async move {
            while let Some(Ok(mut c)) = limited.next().await {
                tokio::spawn(async move {
                    let mut b = [0u8; 1];
                    while c.read_exact(&mut b).await.is_ok() {
                        if c.write_all(&b).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        async fn echoes(c: &mut TcpStream) -> bool {
            let mut b = [7u8];
            c.write_all(&b).await.is_ok() && c.read_exact(&mut b).await.is_ok() && b == [7]
        }
        async fn from(ip: &str, to: std::net::SocketAddr) -> TcpStream {
            let s = tokio::net::TcpSocket::new_v4().unwrap();
            s.bind(format!("{ip}:0").parse().unwrap()).unwrap();
            s.connect(to).await.unwrap()
        }
        let mut a1 = from("127.0.0.2", addr).await;
        let mut a2 = from("127.0.0.2", addr).await;
        assert!(echoes(&mut a1).await && echoes(&mut a2).await);
        let mut a3 = from("127.0.0.2", addr).await;
        assert!(!echoes(&mut a3).await, "a third from one address is closed");
        let mut b = from("127.0.0.3", addr).await;
        assert!(echoes(&mut b).await, "another address is served");
        drop(a1);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut c = from("127.0.0.2", addr).await;
            if echoes(&mut c).await {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the address's place never came back"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
