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
        "disk-check",
    ] {
        assert!(help.contains(c), "{c} missing from --help");
    }
}

#[test]
fn verify_of_a_missing_store_fails_clearly() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
        .args(["verify", "--data-dir", d.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no ledger"));
}

#[test]
fn keygen_writes_a_pair_and_never_overwrites() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
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

#[test]
fn help_lists_the_round_report_and_jackpot_commands() {
    let help = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let top = help(&["--help"]);
    for c in ["round", "report", "jackpot"] {
        assert!(top.contains(c), "{c} missing from --help");
    }
    let jackpot = help(&["jackpot", "--help"]);
    for c in [
        "pools",
        "pool",
        "liability",
        "machines",
        "transfer-candidates",
        "transfer",
        "authorize",
    ] {
        assert!(jackpot.contains(c), "{c} missing from jackpot --help");
    }
    // Every command explains itself with examples.
    for c in [
        &["round", "--help"][..],
        &["report", "--help"],
        &["jackpot", "transfer", "--help"],
        &["jackpot", "transfer-candidates", "--help"],
    ] {
        assert!(help(c).contains("Examples:"), "{c:?}");
    }
}

#[test]
fn usage_errors_name_the_argument_and_exit_2() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["report"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["report", "--day", "2026-11-21", "--from", "2026-11-01"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--from"));
    let out = run(&["jackpot", "transfer", "--from-pool", "A"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--to-pool"));
    // A bad value is named before anything is asked of a ledger.
    let out = run(&[
        "report",
        "--day",
        "yesterday-ish",
        "--server",
        "http://127.0.0.1:1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--day: `yesterday-ish`"));
}

#[test]
fn disk_check_reports_the_fsyncs_and_cleans_up() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
        .args(["disk-check", "--json", "--seconds", "1", "--rate", "100"])
        .args(["--bytes", "4096", "--dir", d.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["fsyncs"], 100);
    let (p50, max) = (
        v["fsync_ms"]["p50"].as_f64().unwrap(),
        v["fsync_ms"]["max"].as_f64().unwrap(),
    );
    assert!((0.0..=max).contains(&p50), "{v}");
    assert!(v["receipt_p99_10ms_reachable"].is_boolean(), "{v}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // A zero rate is a usage error that names the argument.
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerctl"))
        .args(["disk-check", "--rate", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rate"));
}
