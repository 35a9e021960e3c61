//! The ledger's key in a PKCS#11 token, against SoftHSM2 (`scripts/install-softhsm.sh`).
//!
//! One test function: a PKCS#11 module is loaded and initialised once per process at a time, and
//! SoftHSM2 reads its configuration (`SOFTHSM2_CONF`) from the environment, which this binary
//! sets before any other thread runs.

use std::path::Path;

use ed25519_dalek::Signer as _;
use ledger_core::record::check_checkpoint;
use ledger_core::signing::LedgerSigner;
use ledger_store::{KeySource, LedgerKey, OpenConfig, Pkcs11Config, Pkcs11Signer, Store};

const MODULE: &str = "/usr/lib/softhsm/libsofthsm2.so";

/// A token labelled "ledger" (user PIN 1234) in a directory of its own.
fn softhsm_token(dir: &Path) -> std::path::PathBuf {
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
    let out = std::process::Command::new("softhsm2-util")
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
    conf
}

#[test]
fn the_ledger_key_in_softhsm2_signs_records_and_checkpoints() {
    if !Path::new(MODULE).exists() {
        // CI installs it (scripts/install-softhsm.sh); say so loudly rather than pass silently.
        panic!("SoftHSM2 is not installed ({MODULE}): run scripts/install-softhsm.sh");
    }
    let tmp = tempfile::tempdir().unwrap();
    let conf = softhsm_token(tmp.path());
    // SAFETY: the only test of this binary, before any thread that reads the environment.
    unsafe { std::env::set_var("SOFTHSM2_CONF", &conf) };

    let cfg = Pkcs11Config {
        module: MODULE.into(),
        token_label: "ledger".into(),
        key_label: "ledger-signing".into(),
        pin: "1234".into(),
    };
    // Nothing there yet: a clear refusal naming the label and the way to create it.
    let e = Pkcs11Signer::open(&cfg).err().unwrap().to_string();
    assert!(
        e.contains("no Ed25519 private key") && e.contains("ledgerctl hsm keygen"),
        "{e}"
    );
    let public = Pkcs11Signer::generate(&cfg).unwrap();
    // A second key with the same label would make the label ambiguous.
    let e = Pkcs11Signer::generate(&cfg).err().unwrap().to_string();
    assert!(e.contains("already holds a key with this label"), "{e}");
    assert_eq!(Pkcs11Signer::public_key(&cfg).unwrap(), public);

    // Wrong PIN, wrong token: refused, naming what is wrong.
    let e = Pkcs11Signer::open(&Pkcs11Config {
        pin: "0000".into(),
        ..cfg.clone()
    })
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("C_Login"), "{e}");
    let e = Pkcs11Signer::open(&Pkcs11Config {
        token_label: "other".into(),
        ..cfg.clone()
    })
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("no such token") && e.contains("\"ledger\""),
        "{e}"
    );

    // Signatures verify (strictly) with the public key, and are Ed25519's: deterministic, so
    // equal to none other than themselves, and different for another message.
    {
        let key = LedgerKey::Pkcs11(Pkcs11Signer::open(&cfg).unwrap());
        assert_eq!(key.public_key(), public);
        let s1 = key.sign_message(b"one").unwrap();
        public.verify_strict(b"one", &s1).unwrap();
        assert!(public.verify_strict(b"two", &s1).is_err());
        let other = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        assert!(other.verifying_key().verify_strict(b"one", &s1).is_err());
        assert_ne!(s1, other.sign(b"one"));

        // Signatures per second through SoftHSM2 (figure printed, not asserted).
        let n = 2000;
        let t = std::time::Instant::now();
        for i in 0..n {
            key.sign_message(&(i as u64).to_be_bytes()).unwrap();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "SoftHSM2 CKM_EDDSA: {n} signatures in {secs:.3} s = {:.0}/s",
            n as f64 / secs
        );
    }

    // A ledger whose key is in the token: genesis, principals, a checkpoint, all signed there.
    let data = tmp.path().join("data");
    let open = OpenConfig {
        cache_capacity_bytes: 16 << 20,
        ledger_id: "hsm".into(),
        principals: vec![],
    };
    let source = KeySource::Pkcs11(cfg.clone());
    {
        let (store, appender) = Store::open_writer_with_signer(&data, &open, &source).unwrap();
        assert_eq!(store.ledger_public_key(), Some(public));
        let (index, hash) = appender.head().unwrap();
        let cp = store.write_checkpoint(index, &hash, 1_000, "test").unwrap();
        check_checkpoint(&cp, Some(&public)).unwrap();
    }
    // Reopened with the same key: accepted; with a key file instead: refused (not the genesis key).
    {
        let (store, _) = Store::open_writer_with_signer(&data, &open, &source).unwrap();
        let mut v = ledger_core::ChainVerifier::new(Some(public));
        let (head, _) = store.head().unwrap().unwrap();
        let mut checks = Vec::new();
        for e in store.entries(0, head + 1) {
            for p in v.check_entry(&e.unwrap()).unwrap() {
                assert_eq!(p.check.key, public);
                checks.push(p.check);
            }
        }
        assert!(!checks.is_empty());
        assert!(
            ledger_core::signing::verify_many(&checks)
                .iter()
                .all(|ok| *ok)
        );
        for cp in store.checkpoints().unwrap() {
            v.add_checkpoint(&cp).unwrap();
        }
        v.finish().unwrap();
    }
    let e = Store::open_writer_with_signer(&data, &open, &KeySource::File(tmp.path().join("k")))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");

    // The key rotated to another key pair of the token: a label it does not hold is refused
    // before anything is written; the rotation record is the old key's, the new key signs the
    // next checkpoint, the old label no longer opens the ledger, and the chain verifies.
    let next = Pkcs11Config {
        key_label: "ledger-signing-2".into(),
        ..cfg.clone()
    };
    let head_before = Store::open_existing(&data).unwrap().head().unwrap();
    let e = Store::rotate_ledger_key(&data, &open, &source, &KeySource::Pkcs11(next.clone()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no Ed25519 private key"), "{e}");
    assert_eq!(
        Store::open_existing(&data).unwrap().head().unwrap(),
        head_before
    );
    let new_public = Pkcs11Signer::generate(&next).unwrap();
    let r =
        Store::rotate_ledger_key(&data, &open, &source, &KeySource::Pkcs11(next.clone())).unwrap();
    assert_eq!((r.old, r.new), (public, new_public));
    let e = Store::open_writer_with_signer(&data, &open, &source)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("rotated to"), "{e}");
    {
        let (store, appender) =
            Store::open_writer_with_signer(&data, &open, &KeySource::Pkcs11(next)).unwrap();
        assert_eq!(store.genesis_public_key().unwrap(), public);
        let (index, hash) = appender.head().unwrap();
        let cp = store.write_checkpoint(index, &hash, 2_000, "test").unwrap();
        check_checkpoint(&cp, Some(&new_public)).unwrap();
        let mut v = ledger_core::ChainVerifier::new(Some(public));
        for cp in store.checkpoints().unwrap() {
            v.add_checkpoint(&cp).unwrap();
        }
        let mut checks = Vec::new();
        for e in store.entries(0, index + 1) {
            checks.extend(
                v.check_entry(&e.unwrap())
                    .unwrap()
                    .into_iter()
                    .map(|p| p.check),
            );
        }
        assert!(
            ledger_core::signing::verify_many(&checks)
                .iter()
                .all(|ok| *ok)
        );
        let s = v.finish().unwrap();
        assert_eq!(
            (s.ledger_key, s.current_ledger_key, s.ledger_key_rotations),
            (Some(public), Some(new_public), 1)
        );
    }
}
