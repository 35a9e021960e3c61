//! The ledgerd binary's command line (also makes `cargo test` build the binary for tests/).

use std::process::Command;

#[test]
fn help_documents_every_option() {
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerd"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for opt in ["--config", "--data-dir", "--listen", "--check-config"] {
        assert!(help.contains(opt), "{opt} missing from --help");
    }
}

#[test]
fn the_deploy_config_checks() {
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/ledgerd.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerd"))
        .args(["--check-config", "--config", cfg])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_ledgerd"))
        .args(["--check-config", "--config", "/nonexistent.toml"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}
