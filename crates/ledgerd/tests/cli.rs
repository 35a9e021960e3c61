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
        stdout.contains("require_safe_filesystem = true")
            && stdout.contains("\n# data directory filesystem: "),
        "{stdout}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_ledgerd"))
        .args(["--check-config", "--config", "/nonexistent.toml"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

/// `--check-config` prints the effective configuration as TOML, which loads as a configuration
/// equal to it (the file, its defaults and the command line's overrides); not Rust's debug form.
#[test]
fn check_config_prints_the_effective_configuration_as_toml() {
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/ledgerd.toml");
    let dir = std::env::temp_dir().join(format!("ledgerd-check-config-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerd"))
        .args([
            "--check-config",
            "--config",
            cfg,
            "--listen",
            "127.0.0.1:6001",
        ])
        .arg("--data-dir")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let printed = ledgerd::Config::parse(&stdout)
        .unwrap_or_else(|e| panic!("--check-config printed no configuration: {e}\n{stdout}"));
    let mut expected = ledgerd::Config::load(std::path::Path::new(cfg)).unwrap();
    expected.listen = "127.0.0.1:6001".parse().unwrap();
    expected.data_dir = Some(dir.clone());
    assert_eq!(
        toml::to_string(&printed).unwrap(),
        toml::to_string(&expected).unwrap()
    );
    assert!(
        stdout.contains("\nlisten = \"127.0.0.1:6001\"\n"),
        "{stdout}"
    );
    assert!(!dir.exists(), "--check-config creates nothing");
}

/// A configuration error is one line naming the key, not a proto field or a backtrace.
#[test]
fn a_bad_ledger_id_is_reported_by_its_key() {
    let path = std::env::temp_dir().join(format!("ledgerd-bad-id-{}.toml", std::process::id()));
    std::fs::write(&path, "ledger_id = \"casino lisboa\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ledgerd"))
        .args(["--check-config", "--config"])
        .arg(&path)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "error: {}: ledger_id = \"casino lisboa\": character ' ' not allowed in an identifier",
            path.display()
        )
    );
}
