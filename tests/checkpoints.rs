//! End-to-end: checkpoints signed on request (rate limited over all clients, every caller
//! covered), listed from a number, the bound on client connections, `ListEntries` past the
//! head, and the metrics endpoint's room for its scraper. The real ledgerd on a loopback port.

use std::time::{Duration, Instant};

use e2e::*;
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, query_client::QueryClient,
};
use prost::Message;
use tokio_stream::StreamExt;

fn body(cp: &v1::Checkpoint) -> v1::CheckpointBody {
    v1::CheckpointBody::decode(cp.body.as_slice()).expect("checkpoint body")
}

async fn list(c: &mut CheckpointsClient<tonic::transport::Channel>, after: u64) -> Vec<u64> {
    let mut s = c
        .list(v1::ListCheckpointsRequest {
            after_number: after,
        })
        .await
        .expect("list")
        .into_inner();
    let mut numbers = Vec::new();
    while let Some(cp) = s.next().await {
        numbers.push(body(&cp.expect("checkpoint")).number);
    }
    numbers
}

/// Any client may ask for a checkpoint, so signing one on request is rate limited over all
/// clients (`checkpoint.request_interval_ms`), and still every caller gets one that covers
/// every entry acknowledged before its call: the latest at once when it covers the head, or the
/// next one, shared by all who wait for it.
#[tokio::test]
async fn checkpoints_on_request_are_rate_limited_and_cover_every_caller() {
    const INTERVAL: Duration = Duration::from_millis(1500);
    let dir = tempdir();
    let cfg = write_config(
        dir.path(),
        "[checkpoint]\ninterval_secs = 0\nrequest_interval_ms = 1500\n",
    );
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut c = CheckpointsClient::new(ledger_agent::connect(&url).await.unwrap());
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let r = submit(&url, &[t.sign(now_ms(), bet("T1", "r", 1))]).await;
    assert_eq!(st(&r[0]), v1::ReceiptStatus::Accepted);

    let asked_first = Instant::now();
    let first = c.create(v1::CreateCheckpointRequest {}).await.unwrap();
    let first = first.into_inner();
    let b1 = body(&first);
    assert!(
        b1.index >= r[0].index,
        "{b1:?} must cover entry {}",
        r[0].index
    );

    // Nothing new: the same checkpoint, at once, however often it is asked for.
    for _ in 0..20 {
        assert_eq!(
            c.create(v1::CreateCheckpointRequest {})
                .await
                .unwrap()
                .into_inner(),
            first
        );
    }

    // New entries, then eight callers at once: they wait for the interval since the last
    // checkpoint signed on request, and share the one signed then.
    let r = submit(&url, &[t.sign(now_ms(), bet("T1", "r", 2))]).await;
    assert_eq!(st(&r[0]), v1::ReceiptStatus::Accepted);
    let callers: Vec<_> = (0..8)
        .map(|_| {
            let mut c = c.clone();
            tokio::spawn(async move { c.create(v1::CreateCheckpointRequest {}).await })
        })
        .collect();
    let mut got = Vec::new();
    for h in callers {
        got.push(h.await.unwrap().expect("create").into_inner());
    }
    assert!(
        asked_first.elapsed() >= INTERVAL,
        "a second checkpoint on request came {:?} after the first",
        asked_first.elapsed()
    );
    for cp in &got {
        let b = body(cp);
        assert!(
            b.index >= r[0].index,
            "{b:?} must cover entry {}",
            r[0].index
        );
        assert_eq!(cp, &got[0], "the callers waiting share one checkpoint");
    }
    let shared = body(&got[0]).number;
    assert_eq!(
        shared,
        b1.number + 1,
        "one checkpoint for the eight callers"
    );

    // Listed from a number: everything after it, oldest first.
    let all = list(&mut c, 0).await;
    assert_eq!(all, (1..=shared).collect::<Vec<_>>());
    assert_eq!(list(&mut c, b1.number).await, vec![shared]);
    assert_eq!(list(&mut c, shared).await, Vec::<u64>::new());
    assert_eq!(list(&mut c, u64::MAX).await, Vec::<u64>::new());
    // The latest is the shared one.
    assert_eq!(
        c.get_latest(v1::GetCheckpointRequest::default())
            .await
            .unwrap()
            .into_inner(),
        got[0]
    );
    l.stop();
}

/// Past `grpc.max_connections`, a connection is closed as soon as it is accepted; one that
/// closes makes room for another.
#[tokio::test]
async fn connections_are_bounded() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "[grpc]\nmax_connections = 2\n");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    // A connection that answers a call, retried until a place is free (a connection closed
    // just before, e.g. by the start's readiness check, frees its place when ledgerd notices).
    let served = |deadline: Instant| {
        let url = url.clone();
        async move {
            loop {
                if let Ok(ch) = ledger_agent::connect(&url).await {
                    let mut q = QueryClient::new(ch);
                    if q.get_head(v1::GetHeadRequest {}).await.is_ok() {
                        return q;
                    }
                }
                assert!(Instant::now() < deadline, "no connection was served");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let a = served(deadline).await;
    let mut b = served(deadline).await;
    let third = match ledger_agent::connect(&url).await {
        Ok(ch) => QueryClient::new(ch)
            .get_head(v1::GetHeadRequest {})
            .await
            .map(|_| ()),
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    assert!(third.is_err(), "a third connection must not be served");
    drop(a);
    let _again = served(Instant::now() + Duration::from_secs(20)).await;
    assert!(b.get_head(v1::GetHeadRequest {}).await.is_ok());
    assert!(
        l.stderr_text().contains("grpc.max_connections"),
        "the refusal is logged: {}",
        l.stderr_text()
    );
    l.stop();
}

/// `ListEntries` from past the head names the head, not a `to_index` the client never sent.
#[tokio::test]
async fn list_entries_from_past_the_head_names_the_head() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let mut q = QueryClient::new(ledger_agent::connect(&l.url()).await.unwrap());
    let head = q
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner()
        .index;
    let e = q
        .list_entries(v1::ListEntriesRequest {
            from_index: head + 5,
            to_index: 0,
        })
        .await
        .expect_err("past the head");
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(
        e.message()
            .contains(&format!("after the durable head {head}")),
        "{e}"
    );
    assert!(!e.message().contains("to_index"), "{e}");
    l.stop();
}

/// The metrics endpoint answers at most 4 connections at once from one address: a host that
/// opens many and sends nothing cannot hold all 32 places and starve the scraper.
#[tokio::test]
async fn idle_metrics_connections_from_one_host_leave_room_for_the_scraper() {
    use std::io::{Read, Write};
    let (_dir, l, at) = with_metrics();
    // 40 connections from another loopback address, each sending nothing.
    let mut idle = Vec::new();
    for _ in 0..40 {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        s.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        idle.push(s.connect(at).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The scraper, from 127.0.0.1, is answered.
    let answer = tokio::task::spawn_blocking(move || {
        let mut c = tls_stream(at, "e2e-admin");
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut out = Vec::new();
        let _ = c.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer:?}");
    drop(idle);
    l.stop();
}
