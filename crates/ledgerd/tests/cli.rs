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
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // The example insists on a safe filesystem under /var/lib/casino-ledger: on a machine where
    // that is not one (this repository's VM has ext4 without a journal), the configuration is
    // still valid, and the refusal names the key.
    assert!(
        out.status.success() || stderr.contains("store.require_safe_filesystem"),
        "{stderr}"
    );
    assert!(
        stdout.contains("require_safe_filesystem: true")
            && stdout.contains("data directory filesystem: "),
        "{stdout}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_ledgerd"))
        .args(["--check-config", "--config", "/nonexistent.toml"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}
