//! The `ledger-console` binary: `hash-password`, and `serve` refusing a configuration it cannot
//! use, naming the key. (Being an integration test, this also makes `cargo test --workspace`
//! build the binary that tests/console.rs starts.)

use std::io::Write;
use std::process::{Command, Stdio};

fn console() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ledger-console"))
}

#[test]
fn hash_password_prints_an_argon2id_hash_that_verifies() {
    let mut c = console()
        .arg("hash-password")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(c.stdin.take().unwrap(), "correct horse").unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success());
    let hash = String::from_utf8(out.stdout).unwrap();
    let hash = hash.trim();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert!(ledger_console::auth::verify_password("correct horse", hash));
    assert!(!ledger_console::auth::verify_password(
        "correct horse\n",
        hash
    ));

    // Nothing on stdin: refused.
    let out = console()
        .arg("hash-password")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no password on standard input"));
}

#[test]
fn serve_refuses_a_bad_configuration_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("console.toml");
    let base = r#"listen = "0.0.0.0:0"
ledgerd = "https://127.0.0.1:50051"
ledgerd_ca = "ca.pem"
plaintext = true
[[accounts]]
name = "ana"
display_name = "Ana"
client_cert = "a.pem"
client_key = "a.key"
"#;
    for (text, want) in [
        (base.to_string(), "plaintext = true needs a loopback"),
        (
            base.replace("0.0.0.0", "127.0.0.1")
                .replace("ledgerd_ca", "ledger_ca"),
            "ledger_ca",
        ),
        (
            base.replace("0.0.0.0", "127.0.0.1"),
            // The account's certificate files are read at start.
            "account \"ana\"",
        ),
    ] {
        std::fs::write(&p, &text).unwrap();
        let out = console()
            .args(["serve", "--config"])
            .arg(&p)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{want:?} in {err}");
    }
    let out = console().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("hash-password") && help.contains("serve"),
        "{help}"
    );
}
