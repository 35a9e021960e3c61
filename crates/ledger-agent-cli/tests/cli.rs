//! The binary's command line, without a ledger. (Being an integration test, this also has cargo
//! build `ledger-agent` for the end-to-end tests in `tests/`.)

use std::process::Command;

fn agent(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ledger-agent"))
        .args(args)
        .env_remove("LEDGER_SERVER")
        .env_remove("LEDGER_DEVICE_ID")
        .env_remove("LEDGER_DEVICE_KEY")
        .env_remove("LEDGER_OUTBOX")
        .output()
        .expect("run ledger-agent");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn help_names_the_commands() {
    let (code, out, _) = agent(&["--help"]);
    assert_eq!(code, 0);
    for c in ["run", "status", "discard"] {
        assert!(out.contains(c), "{out}");
    }
}

#[test]
fn a_missing_flag_or_a_bad_key_file_is_named() {
    let (code, _, err) = agent(&["run", "--device-id", "m-1", "--outbox", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--key"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("m-1.key");
    std::fs::write(&key, "not hex").unwrap();
    let (code, _, err) = agent(&[
        "status",
        "--device-id",
        "m-1",
        "--key",
        key.to_str().unwrap(),
        "--outbox",
        dir.path().join("outbox").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("--key") && err.contains("m-1.key"), "{err}");
    let (code, _, err) = agent(&[
        "run",
        "--device-id",
        "m-1",
        "--key",
        key.to_str().unwrap(),
        "--outbox",
        "o",
        "--input",
        "a",
        "--spool",
        "b",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--spool"), "{err}");
}
