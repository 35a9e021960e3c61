//! End-to-end: steps of ledgerd's wall clock, made with libfaketime (the Debian package
//! `faketime`, installed by scripts/install-faketime.sh) while ledgerd runs: its monotonic clock
//! is left alone (FAKETIME_DONT_FAKE_MONOTONIC), as when an administrator or a bad NTP server
//! sets the time. Each step is recorded in the chain, received times follow the wall clock again
//! (a forward step undone brings them back to real time), ingest goes on, checkpoints follow,
//! and `ledgerctl verify` accepts the chain.

use std::path::{Path, PathBuf};
use std::time::Duration;

use e2e::*;
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, query_client::QueryClient,
};
use prost::Message;

const DAY: i64 = 86_400_000;

fn libfaketime() -> PathBuf {
    let found = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/faketime/libfaketime.so.1",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists());
    found.expect(
        "libfaketime is missing: run scripts/install-faketime.sh (apt-get install faketime)",
    )
}

/// A ledgerd whose wall clock is offset by what `offset_file` says (libfaketime's syntax, e.g.
/// "+0", "+2d"), read again at every call.
fn start_faked(dir: &Path, offset_file: &Path, offset: &str) -> Ledgerd {
    std::fs::write(offset_file, offset).unwrap();
    let cfg = write_config(dir, "[checkpoint]\ninterval_secs = 0\n");
    let env = [
        ("LD_PRELOAD", libfaketime().display().to_string()),
        ("FAKETIME_TIMESTAMP_FILE", offset_file.display().to_string()),
        ("FAKETIME_NO_CACHE", "1".to_string()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
    ];
    Ledgerd::try_start_with_env(&dir.join("data"), &cfg, "127.0.0.1:0", &env)
        .unwrap_or_else(|e| panic!("ledgerd did not start: {e}"))
}

/// Set ledgerd's clock; libfaketime reads the file at every call, so the next reading is it.
fn step_to(offset_file: &Path, offset: &str) {
    let tmp = offset_file.with_extension("tmp");
    std::fs::write(&tmp, offset).unwrap();
    std::fs::rename(&tmp, offset_file).unwrap();
}

async fn checkpoint_time(url: &str) -> i64 {
    let mut c = CheckpointsClient::new(ledger_agent::connect(url).await.unwrap());
    let cp = c
        .create(v1::CreateCheckpointRequest {})
        .await
        .expect("checkpoint")
        .into_inner();
    v1::CheckpointBody::decode(cp.body.as_slice())
        .unwrap()
        .created_at_ms
}

async fn accepted(url: &str, env: v1::Envelope) -> v1::Receipt {
    let r = submit(url, &[env]).await.remove(0);
    assert_eq!(st(&r), v1::ReceiptStatus::Accepted, "{r:?}");
    r
}

fn close_to(t: i64, expected: i64, what: &str) {
    assert!(
        (t - expected).abs() < 120_000,
        "{what}: {t} is not within two minutes of {expected} (off by {} ms)",
        t - expected
    );
}

/// Stop ledgerd and verify its data directory: every check, the clock steps counted.
fn verify_stopped(l: Ledgerd, steps: u64) {
    let data = l.data_dir.clone();
    l.stop();
    let (code, out, err) = ledgerctl(&["--json", "verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "verify: {out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("verify --json");
    assert_eq!(v["clock_steps"], steps, "{v}");
}

/// `Query.GetIngestStats`'s count of clock steps (also `ledger_clock_steps_total`).
async fn clock_steps_counted(url: &str) -> u64 {
    let mut q = QueryClient::new(ledger_agent::connect(url).await.unwrap());
    q.get_ingest_stats(v1::GetIngestStatsRequest {})
        .await
        .expect("ingest stats")
        .into_inner()
        .clock_steps
}

/// The ledger's clock jumps 300 days ahead (the client certificates are valid for 365), then is
/// set right. Devices' clocks are right all along: their events stay accepted (by the wall clock
/// they are 300 days old, beyond the 7-day limit; by the clock carried on from the start they
/// are not). After the correction, received times and checkpoints are real times again.
#[tokio::test]
async fn a_forward_step_and_its_correction() {
    let dir = tempdir();
    let offset = dir.path().join("faketime");
    let l = start_faked(dir.path(), &offset, "+0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let r = accepted(&url, t.sign(now_ms(), bet("T1", "r", 1))).await;
    close_to(r.received_at_ms, now_ms(), "before the step");

    step_to(&offset, "+300d");
    let r = accepted(&url, t.sign(now_ms(), bet("T1", "r", 2))).await;
    close_to(r.received_at_ms, now_ms() + 300 * DAY, "after the step");
    let ahead = checkpoint_time(&url).await;
    close_to(ahead, now_ms() + 300 * DAY, "checkpoint after the step");
    accepted(&url, t.sign(now_ms(), bet("T1", "r", 3))).await;

    step_to(&offset, "+0");
    tokio::time::sleep(Duration::from_millis(50)).await;
    for n in 4..=6 {
        let r = accepted(&url, t.sign(now_ms(), bet("T1", "r", n))).await;
        close_to(r.received_at_ms, now_ms(), "after the correction");
    }
    close_to(
        checkpoint_time(&url).await,
        now_ms(),
        "checkpoint after the correction",
    );
    assert_eq!(clock_steps_counted(&url).await, 2);
    assert!(
        l.stderr_text().contains("the wall clock stepped"),
        "{}",
        l.stderr_text()
    );
    verify_stopped(l, 2);
}

/// The ledger's clock is set back two days while devices keep the time it had: their events are
/// then two days ahead of the wall clock (the limit is five minutes), and still accepted, since
/// they are in time by the clock ledgerd carried on from its start. (Started two days ahead and
/// set back to real time, so that the client certificates are valid throughout.)
#[tokio::test]
async fn a_backward_step_does_not_stop_ingest() {
    let dir = tempdir();
    let offset = dir.path().join("faketime");
    let l = start_faked(dir.path(), &offset, "+2d");
    let url = l.url();
    // The devices' clocks agree with the ledger's, two days ahead of this test's.
    let device_now = || now_ms() + 2 * DAY;
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let r = accepted(&url, t.sign(device_now(), bet("T1", "r", 1))).await;
    close_to(r.received_at_ms, device_now(), "before the step");
    let before = checkpoint_time(&url).await;
    close_to(before, device_now(), "checkpoint before the step");

    step_to(&offset, "+0");
    tokio::time::sleep(Duration::from_millis(50)).await;
    for n in 2..=5 {
        let r = accepted(&url, t.sign(device_now(), bet("T1", "r", n))).await;
        close_to(r.received_at_ms, now_ms(), "after the step back");
    }
    close_to(
        checkpoint_time(&url).await,
        now_ms(),
        "checkpoint after the step back",
    );
    assert_eq!(clock_steps_counted(&url).await, 1);
    verify_stopped(l, 1);
}
