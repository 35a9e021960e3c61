//! The `nats-consumer` binary refuses what it cannot use before it connects, naming the flag.
//! (Being an integration test, this also makes `cargo test --workspace` build the binary that
//! tests/export_nats.rs runs.)

use std::process::Command;

fn consumer(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nats-consumer"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_arguments_are_named_before_any_connection() {
    let dir = std::env::temp_dir().join(format!("nats-consumer-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cp = dir.join("cp.json");
    std::fs::write(&cp, "{\"not\": \"a checkpoint\"}").unwrap();
    let cp = cp.to_str().unwrap();
    let key = "11".repeat(32);

    let (code, err) = consumer(&["--stream", "S", "--checkpoint", cp]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--ledger-key"), "{err}");
    let (code, err) = consumer(&["--stream", "S", "--checkpoint", cp, "--ledger-key", "zz"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--ledger-key"), "{err}");
    let missing = dir.join("missing.json");
    let (code, err) = consumer(&[
        "--stream",
        "S",
        "--checkpoint",
        missing.to_str().unwrap(),
        "--ledger-key",
        &key,
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--checkpoint"), "{err}");
    let (code, err) = consumer(&["--stream", "S", "--checkpoint", cp, "--ledger-key", &key]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--checkpoint"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
