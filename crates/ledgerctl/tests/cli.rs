//! The ledgerctl binary's command line (also makes `cargo test` build the binary for tests/).

use std::process::Command;

#[test]
fn help_lists_every_subcommand() {
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for c in [
        "keygen",
        "device",
        "verify",
        "export",
        "tail",
        "checkpoint",
        "status",
        "demo",
        "bench",
    ] {
        assert!(help.contains(c), "{c} missing from --help");
    }
}

#[test]
fn verify_of_a_missing_store_fails_clearly() {
    let d = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
        .args(["verify", "--data-dir", d.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no ledger"));
}

#[test]
fn keygen_writes_a_pair_and_never_overwrites() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("op");
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
            .args(["keygen", "--out", base.to_str().unwrap()])
            .output()
            .unwrap()
    };
    assert!(run().status.success());
    assert!(d.path().join("op.key").is_file() && d.path().join("op.pub").is_file());
    assert!(!run().status.success());
}
