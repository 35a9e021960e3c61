//! Keys and identity end to end: the ledger's key in a PKCS#11 token (SoftHSM2), key rotation.

use std::path::{Path, PathBuf};
use std::process::Command;

use e2e::*;
use ledger_core::proto as v1;
use v1::ReceiptStatus as St;

const SOFTHSM_MODULE: &str = "/usr/lib/softhsm/libsofthsm2.so";

/// A SoftHSM2 token labelled "ledger" in `dir`, with its user PIN in `dir/hsm.pin` (mode 0600):
/// the configuration file for `SOFTHSM2_CONF` and the PIN file.
fn softhsm_token(dir: &Path) -> (PathBuf, PathBuf) {
    assert!(
        Path::new(SOFTHSM_MODULE).exists(),
        "SoftHSM2 is not installed ({SOFTHSM_MODULE}): run scripts/install-softhsm.sh"
    );
    let tokens = dir.join("tokens");
    std::fs::create_dir(&tokens).unwrap();
    let conf = dir.join("softhsm2.conf");
    std::fs::write(
        &conf,
        format!(
            "directories.tokendir = {}\nobjectstore.backend = file\nlog.level = ERROR\n",
            tokens.display()
        ),
    )
    .unwrap();
    let out = Command::new("softhsm2-util")
        .env("SOFTHSM2_CONF", &conf)
        .args([
            "--init-token",
            "--free",
            "--label",
            "ledger",
            "--so-pin",
            "5678",
            "--pin",
            "1234",
        ])
        .output()
        .expect("softhsm2-util");
    assert!(out.status.success(), "softhsm2-util: {out:?}");
    let pin = dir.join("hsm.pin");
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&pin)
            .and_then(|mut f| f.write_all(b"1234\n"))
            .unwrap();
    }
    (conf, pin)
}

/// `ledgerctl hsm ARGS` against the token of `conf`: (exit code, stdout, stderr).
fn ledgerctl_hsm(conf: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin("ledgerctl"))
        .arg("hsm")
        .args(args)
        .env("SOFTHSM2_CONF", conf)
        .output()
        .expect("run ledgerctl");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn public_key_line(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("public key: "))
        .unwrap_or_else(|| panic!("no public key in {out}"))
        .to_string()
}

/// The ledger's key made in SoftHSM2 by `ledgerctl hsm keygen` and pinned; ledgerd signs its
/// genesis, records and checkpoints there while it ingests; `ledgerctl verify` accepts the chain
/// under that key. A key label the token does not hold stops ledgerd, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_whose_key_is_in_softhsm2_ingests_checkpoints_and_verifies() {
    let dir = tempdir();
    let (conf, pin) = softhsm_token(dir.path());
    let pin = pin.to_str().unwrap();
    let token = ["--token", "ledger", "--pin-file", pin];
    let (code, out, err) = ledgerctl_hsm(&conf, &[&["keygen"][..], &token].concat());
    assert_eq!(code, 0, "{out}{err}");
    let public = public_key_line(&out);
    let (code, out, err) = ledgerctl_hsm(&conf, &[&["pubkey"][..], &token].concat());
    assert_eq!((code, public_key_line(&out)), (0, public.clone()), "{err}");
    // Never two keys under one label.
    let (code, _, err) = ledgerctl_hsm(&conf, &[&["keygen"][..], &token].concat());
    assert_ne!(code, 0);
    assert!(err.contains("already holds a key with this label"), "{err}");

    // The pin first (a top-level key), the [ledger_key] section last.
    let with_key = |text: &str, label: &str| {
        format!(
            "ledger_public_key = \"{public}\"\n{text}\n[ledger_key]\npkcs11_module = \"{SOFTHSM_MODULE}\"\n\
             token_label = \"ledger\"\nkey_label = \"{label}\"\npin_file = \"{pin}\"\n"
        )
    };
    let env = [("SOFTHSM2_CONF", conf.as_path())];
    let data = dir.path().join("data");

    // A label the token does not hold: refused before anything is created.
    let cfg = write_config(dir.path(), "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, with_key(&text, "absent")).unwrap();
    let err = Ledgerd::try_start_with_env(&data, &cfg, "127.0.0.1:0", &env)
        .err()
        .expect("ledgerd must refuse a key the token does not hold");
    assert!(
        err.contains("no Ed25519 private key") && err.contains("\"absent\""),
        "{err}"
    );
    assert!(!data.join("db").exists(), "nothing created");

    std::fs::write(&cfg, with_key(&text, "ledger-signing")).unwrap();
    let l = Ledgerd::try_start_with_env(&data, &cfg, "127.0.0.1:0", &env)
        .unwrap_or_else(|e| panic!("ledgerd: {e}"));
    assert_eq!(l.ledger_key, public);
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let envs: Vec<_> = (0..20)
        .map(|n| t.sign(now_ms(), bet("T1", "r1", n)))
        .collect();
    for r in submit(&url, &envs).await {
        assert_eq!(st(&r), St::Accepted, "{r:?}");
    }
    let (code, out, err) = ledgerctl(&["checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    l.stop();

    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("key {public}")), "{out}");
    assert!(out.contains("21 events"), "{out}");

    // Restarted on the same token: the same ledger.
    let l = Ledgerd::try_start_with_env(&data, &cfg, "127.0.0.1:0", &env)
        .unwrap_or_else(|e| panic!("ledgerd: {e}"));
    assert_eq!(l.ledger_key, public);
    l.stop();
}

/// Key rotation without losing history, end to end: a device's key replaced by the operator
/// (`ledgerctl device rotate-key`) goes on with its sequence under the new key while the old key
/// is refused; the operator's own key replaced in the configuration (recorded in the chain as
/// the principals declared at the restart): the new key signs, the old one is refused; `verify`
/// accepts the whole chain, old entries under old keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_and_operator_keys_rotate_and_the_chain_verifies() {
    use ed25519_dalek::SigningKey;
    use ledger_agent::DeviceSigner;
    use v1::RejectReason as Why;

    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut old = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let envs: Vec<_> = (0..2)
        .map(|n| old.sign(now_ms(), bet("T1", "r1", n)))
        .collect();
    for r in submit(&url, &envs).await {
        assert_eq!(st(&r), St::Accepted, "{r:?}");
    }

    // The device's key, rotated by the operator.
    let op_file = dir.path().join("operator-1.key");
    std::fs::write(&op_file, hex::encode(operator_key().to_bytes())).unwrap();
    let new_key = SigningKey::from_bytes(&[0x77; 32]);
    let new_hex = hex::encode(new_key.verifying_key().as_bytes());
    let (code, out, err) = ledgerctl(&[
        "device",
        "rotate-key",
        "--server",
        &url,
        "--operator-key",
        op_file.to_str().unwrap(),
        "--operator-id",
        "operator-1",
        "--device-id",
        "table-1",
        "--public-key",
        &new_hex,
        "--reason",
        "terminal replaced",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let stale = old.sign(now_ms(), bet("T1", "r1", 2));
    let r = submit(&url, &[stale]).await;
    assert_eq!((st(&r[0]), why(&r[0])), (St::Rejected, Why::BadSignature));
    let mut new = DeviceSigner::new("table-1", new_key, 3);
    let r = submit(&url, &[new.sign(now_ms(), bet("T1", "r1", 2))]).await;
    assert_eq!((st(&r[0]), r[0].sequence), (St::Accepted, 3), "{r:?}");
    let (code, out, err) = ledgerctl(&["device", "list", "--server", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("table-1 ") && l.ends_with(&new_hex)),
        "{out}"
    );
    l.stop();

    // The operator's key, replaced in the configuration.
    let op_new = SigningKey::from_bytes(&[0x22; 32]);
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        &hex::encode(operator_key().verifying_key().as_bytes()),
        &hex::encode(op_new.verifying_key().as_bytes()),
    );
    std::fs::write(&cfg, text).unwrap();
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let spec = table("table-2", "T2");
    let reg =
        casino_play::registration(&spec, &SigningKey::from_bytes(&[0x78; 32]).verifying_key());
    let by_old = DeviceSigner::new("operator-1", operator_key(), 3).sign(now_ms(), reg.clone());
    let r = submit(&url, &[by_old]).await;
    assert_eq!((st(&r[0]), why(&r[0])), (St::Rejected, Why::BadSignature));
    let by_new = DeviceSigner::new("operator-1", op_new, 3).sign(now_ms(), reg);
    let r = submit(&url, &[by_new]).await;
    assert_eq!(st(&r[0]), St::Accepted, "{r:?}");
    l.stop();

    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    // 1 + 1 registrations, 1 rotation, 3 bets.
    assert!(out.contains("6 events"), "{out}");
}

/// Device authority over pools, end to end: a captive value for a pool is accepted from a member
/// machine and from the operator, refused (NOT_POOL_MEMBER, nothing stored) from a machine the
/// pool does not list; `verify` accepts the chain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captive_values_come_only_from_the_pools_members() {
    use ledger_agent::DeviceSigner;
    use v1::RejectReason as Why;
    use v1::event_body::Payload as P;

    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let spec = |id: &str| casino_play::sim::DeviceSpec {
        device_id: id.into(),
        kind: ledger_core::DeviceKind::Machine,
        casino_id: "e2e".into(),
        table_ids: vec![],
        machine_id: id.into(),
        model_id: "K".into(),
        bet_values_cents: vec![100],
        description: String::new(),
    };
    let mut machines = register(&url, 1, &[spec("slot-1"), spec("slot-2")]).await;
    let mut op = DeviceSigner::new("operator-1", operator_key(), 3);
    let pool = P::PoolConfigured(v1::PoolConfigured {
        pool_id: "P1".into(),
        kind: v1::PoolKind::Jackpot as i32,
        casino_ids: vec!["e2e".into()],
        member_machine_ids: vec!["slot-1".into()],
        contribution_bp: 100,
        start_value_cents: 10_000,
        reset_value_cents: 10_000,
        ..Default::default()
    });
    let r = submit(&url, &[op.sign(now_ms(), pool)]).await;
    assert_eq!(st(&r[0]), St::Accepted, "{r:?}");
    let captive = |value_cents| {
        P::CaptiveValueReported(v1::CaptiveValueReported {
            pool_id: "P1".into(),
            value_cents,
        })
    };
    let head_before = {
        let r = submit(&url, &[machines[1].sign(now_ms(), captive(10_000))]).await;
        assert_eq!((st(&r[0]), why(&r[0])), (St::Rejected, Why::NotPoolMember));
        assert!(r[0].detail.contains("not a member of pool P1"), "{r:?}");
        r[0].index
    };
    assert_eq!(head_before, 0, "nothing stored");
    let r = submit(&url, &[machines[0].sign(now_ms(), captive(10_000))]).await;
    assert_eq!(st(&r[0]), St::Accepted, "{r:?}");
    let r = submit(&url, &[op.sign(now_ms(), captive(10_000))]).await;
    assert_eq!(st(&r[0]), St::Accepted, "{r:?}");
    l.stop();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("5 events"), "{out}");
}

/// `ledgerd rotate-ledger-key ARGS` with `cfg` on `data`: (exit code, stdout, stderr).
fn ledgerd_rotate(
    cfg: &Path,
    data: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> (i32, String, String) {
    let out = Command::new(bin("ledgerd"))
        .args([
            "--config",
            cfg.to_str().unwrap(),
            "--data-dir",
            data.to_str().unwrap(),
        ])
        .arg("rotate-ledger-key")
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .output()
        .expect("run ledgerd");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The rotated-to key's hex in `ledgerd rotate-ledger-key`'s output ("... OLD -> NEW").
fn rotated_to(out: &str) -> String {
    out.split_whitespace()
        .skip_while(|w| *w != "->")
        .nth(1)
        .unwrap_or_else(|| panic!("no new key in {out}"))
        .to_string()
}

/// The ledger's own key rotated (ledgerd stopped): the old key signs the rotation record; a
/// start with the old key is refused, naming the new one; with the new key the same ledger
/// (its genesis key, pinned, stays its identity in `GetHead`) ingests, restarts, checkpoints and
/// signs receipts; `ledgerctl verify` accepts the whole chain from the data directory and from
/// an export, under the pinned genesis key, and reports the key in force.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledgers_key_rotates_and_the_whole_chain_verifies() {
    use prost::Message;
    let dir = tempdir();
    let data = dir.path().join("data");
    let (old_key, new_key) = (dir.path().join("old.key"), dir.path().join("new.key"));
    let cfg = write_config(dir.path(), "[ingest]\nsigned_receipts = true");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let with_key =
        |key: &Path, pin: &str| format!("ledger_key_file = \"{}\"\n{pin}{text}", key.display());
    std::fs::write(&cfg, with_key(&old_key, "")).unwrap();
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let genesis = l.ledger_key.clone();
    let pin = format!("ledger_public_key = \"{genesis}\"\n");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let mut n = 0;
    let mut bets = async |t: &mut ledger_agent::DeviceSigner, url: &str, k: u64| {
        let envs: Vec<_> = (n..n + k)
            .map(|i| t.sign(now_ms(), bet("T1", "r1", i)))
            .collect();
        n += k;
        let rs = submit(url, &envs).await;
        for r in &rs {
            assert_eq!(st(r), St::Accepted, "{r:?}");
        }
        rs
    };
    bets(&mut t, &url, 5).await;
    let (code, out, err) = ledgerctl(&["checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    l.stop();

    // Both keys named, or neither: refused by the argument parser.
    let (code, _, err) = ledgerd_rotate(&cfg, &data, &[], &[]);
    assert_ne!(code, 0);
    assert!(err.contains("--new-key"), "{err}");
    let (code, out, err) =
        ledgerd_rotate(&cfg, &data, &["--new-key", new_key.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let new_hex = rotated_to(&out);
    assert!(out.contains(&format!("{genesis} -> {new_hex}")), "{out}");
    assert_ne!(new_hex, genesis);

    // The old key no longer starts the ledger, and says which key does.
    let err = Ledgerd::try_start(&data, &cfg, "127.0.0.1:0")
        .err()
        .expect("the old key is refused");
    assert!(err.contains(&format!("rotated to {new_hex}")), "{err}");

    std::fs::write(&cfg, with_key(&new_key, &pin)).unwrap();
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    assert_eq!(l.ledger_key, genesis, "the identity stays the genesis key");
    let url = l.url();
    let rs: Vec<v1::Receipt> = bets(&mut t, &url, 5).await;
    let group =
        v1::GroupHeadBody::decode(rs[0].group.as_ref().expect("signed").body.as_ref()).unwrap();
    assert_eq!(hex::encode(&group.ledger_public_key), new_hex);
    l.stop();
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    bets(&mut t, &url, 5).await;
    let (code, out, err) = ledgerctl(&["--json", "checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&new_hex),
        "the checkpoint is the new key's: {out}"
    );
    let export = dir.path().join("export.jsonl");
    let (code, out, err) = ledgerctl(&[
        "export",
        "--server",
        &url,
        "--out",
        export.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // An entry from before the rotation, proved under the new key's checkpoint: the proof
    // needs the new key, given beside the genesis key.
    let proof = dir.path().join("proof.json");
    let (code, out, err) = ledgerctl(&[
        "prove",
        "entry",
        "--server",
        &url,
        "--index",
        "3",
        "--out",
        proof.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let proof = proof.to_str().unwrap();
    let (code, out, err) = ledgerctl(&["verify-proof", proof, "--ledger-key", &genesis]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("not signed by the ledger key you gave"),
        "{err}"
    );
    let (code, out, err) = ledgerctl(&[
        "verify-proof",
        proof,
        "--ledger-key",
        &genesis,
        "--ledger-key",
        &new_hex,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    l.stop();

    for source in [
        ["--data-dir", data.to_str().unwrap()],
        ["--file", export.to_str().unwrap()],
    ] {
        let (code, out, err) =
            ledgerctl(&[&["verify", "--ledger-key", &genesis][..], &source].concat());
        assert_eq!(code, 0, "{source:?}: {out}{err}");
        assert!(out.contains("16 events"), "{out}");
        assert!(
            out.contains(&format!(
                "rotated 1 time(s), each by a record of the key before it; key in force: {new_hex}"
            )),
            "{out}"
        );
    }
    // Pinned to the new key, the chain is another ledger's.
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--ledger-key",
        &new_hex,
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("the trusted ledger key is"), "{err}");
}
