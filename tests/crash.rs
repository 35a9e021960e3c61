//! kill -9 of ledgerd in the middle of a stream: after a restart the agent resends everything not
//! yet receipted, every acknowledged event is present exactly once, and the chain verifies.

use std::time::Duration;

use e2e::*;
use ledger_core::proto::{self as v1, query_client::QueryClient};
use tokio_stream::StreamExt;

#[tokio::test]
async fn kill9_mid_stream_restart_resend_and_verify() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let addr = l.addr.clone();
    let url = l.url();
    let mut devs = register(&url, 1, &[table("table-1", "T1"), table("table-2", "T2")]).await;
    const N: u64 = 8000;
    let per_dev: Vec<Vec<v1::Envelope>> = devs
        .iter_mut()
        .enumerate()
        .map(|(i, d)| {
            (1..=N)
                .map(|n| d.sign(now_ms(), bet(&format!("T{}", i + 1), "r", n)))
                .collect()
        })
        .collect();
    // Two agents stream; each keeps going through the crash (reconnect + resend from its last receipt).
    let mut agents = Vec::new();
    for envs in per_dev.clone() {
        let url = url.clone();
        agents.push(tokio::spawn(async move {
            let opts = ledger_agent::ClientOptions {
                max_attempts: 100,
                backoff: Duration::from_millis(50),
                ..Default::default()
            };
            ledger_agent::submit_all(&url, &envs, &opts).await
        }));
    }
    // Kill twice, each time once more events are durable, while the streams are still going.
    // The watcher runs on a thread and runtime of its own. On this test's runtime it shared one
    // thread with the agents' encoding and decoding and looked at the head only every 10-25 ms;
    // once it missed the whole window (then 6,000 events, about 0.1 s at this ledger's speed)
    // and the streams had ended before the kill. Now it looks every millisecond, and the second
    // window is 11,000 events, against overshoots of at most 2,200 seen in 24 runs.
    let mut l = l;
    let mut acknowledged = Vec::new();
    for threshold in [1500u64, 5000] {
        let watch_url = url.clone();
        let before = tokio::task::spawn_blocking(move || kill_when_past(l, &watch_url, threshold))
            .await
            .unwrap();
        assert!(
            before.index < 2 * N,
            "the kill happened mid-stream (head {} at the kill, threshold {threshold})",
            before.index
        );
        acknowledged.push(before);
        tokio::time::sleep(Duration::from_millis(300)).await;
        l = Ledgerd::start(&data, &cfg, &addr);
    }
    let mut all = Vec::new();
    for a in agents {
        all.push(
            a.await
                .unwrap()
                .expect("the agent finished after the restart"),
        );
    }
    let ch = ledger_agent::connect(&l.url()).await.unwrap();
    for (d, receipts) in all.iter().enumerate() {
        let id = format!("table-{}", d + 1);
        assert_eq!(receipts.len() as u64, N);
        for (i, r) in receipts.iter().enumerate() {
            assert!(
                matches!(
                    st(r),
                    v1::ReceiptStatus::Accepted | v1::ReceiptStatus::Duplicate
                ),
                "{r:?}"
            );
            assert_eq!(r.sequence, i as u64 + 1);
        }
        // Exactly once: the device's entries are sequences 1..=N, each once, at the receipted index.
        let entries: Vec<_> = QueryClient::new(ch.clone())
            .list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: id.clone(),
                from_sequence: 1,
            })
            .await
            .unwrap()
            .into_inner()
            .collect::<Vec<_>>()
            .await;
        assert_eq!(entries.len() as u64, N, "{id}");
        for (e, r) in entries.iter().zip(receipts) {
            let e = e.as_ref().unwrap();
            assert_eq!(
                (e.index, &e.entry_hash),
                (r.index, &r.entry_hash),
                "{id} seq {}",
                r.sequence
            );
        }
    }
    // Every event acknowledged before a kill survived it (it is at or below the head seen then).
    for before in acknowledged {
        let e = QueryClient::new(ch.clone())
            .get_entry(v1::GetEntryRequest {
                index: before.index,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(e.entry_hash, before.entry_hash);
    }
    l.stop();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    // The Merkle tree survived the kills with the chain: the checkpoints signed after them (at
    // each start and at the stop) sign tree heads that verify matched with the entries.
    assert!(out.contains("Merkle root"), "{out}");
    assert!(!out.contains("(0 checkpoint(s) with a tree head"), "{out}");
}

/// Watch the head every millisecond until it passes `threshold`, then kill -9 ledgerd. Returns
/// the head seen last before the kill: everything at or below it was acknowledged.
fn kill_when_past(l: Ledgerd, url: &str, threshold: u64) -> v1::Head {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let head = rt.block_on(async {
        let ch = ledger_agent::connect(url).await.unwrap();
        let mut q = QueryClient::new(ch);
        loop {
            let head = q
                .get_head(v1::GetHeadRequest {})
                .await
                .unwrap()
                .into_inner();
            if head.index > threshold {
                return head;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    l.kill9();
    head
}
