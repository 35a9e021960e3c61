//! The command lines themselves, against the real binaries: ledgerctl with its stdout a pipe
//! nobody reads (`| head`), its errors under `--json`, `LEDGER_SERVER`; ledgerd's startup.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use e2e::*;

/// The workspace's root (docs/rounds/...).
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// Run ledgerctl with its stdout a pipe whose reader is already closed (what `| head -1` leaves
/// once head has its line); returns (exit status, stderr). Killed after 30 s.
fn ledgerctl_into_closed_pipe(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut child = Command::new(bin("ledgerctl"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ledgerctl");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Every command that writes to stdout ends quietly with status 0 when its reader has gone,
/// where std's println! panicked with "Broken pipe" (exit 101); `tail`, which waits for new
/// entries with nothing to print, notices too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    register(&url, 1, &[table("table-1", "T1"), table("table-2", "T2")]).await;
    let server = [("LEDGER_SERVER", url.as_str())];
    for args in [
        &["tail", "--from", "0"][..],
        &["--json", "tail", "--from", "0"],
        &["tail"], // from the head: nothing to print, ever
        &["device", "list"],
        &["device", "entries", "--device-id", "operator-1"],
        &["status"],
        &["--json", "status"],
        &["checkpoint"],
        &["findings"],
        &["adjudicate", "docs/rounds/blackjack.json", "--explain"],
        &["adjudicate", "docs/rounds/blackjack.json"],
        &["--help"],
    ] {
        let (code, stderr) = ledgerctl_into_closed_pipe(args, &server);
        assert_eq!(code, Some(0), "ledgerctl {args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "ledgerctl {args:?}: {stderr}"
        );
    }
    l.stop();
}
