//! Tampering: a byte changed in an export file or in the data directory is detected by
//! `ledgerctl verify`, with the index where possible; ledgerd refuses to serve a store whose
//! chain no longer matches its last checkpoint.

use e2e::*;
use ledger_core::proto as v1;

/// A stopped ledger with a table's events; returns the index of the event carrying `marker`.
async fn ledger_with_marker(
    dir: &std::path::Path,
    marker: &str,
) -> (std::path::PathBuf, std::path::PathBuf, u64) {
    let cfg = write_config(dir, "");
    let data = dir.join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let mut envs: Vec<v1::Envelope> = (1..=200)
        .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    envs.push(t.sign(now_ms(), bet("T1", marker, 201)));
    envs.extend((202..=300).map(|n| t.sign(now_ms(), bet("T1", "r", n))));
    let r = submit(&url, &envs).await;
    let marked = r[200].index;
    l.stop();
    (cfg, data, marked)
}

#[tokio::test]
async fn a_changed_byte_in_an_export_is_found_at_its_index() {
    let dir = tempdir();
    let (_cfg, data, marked) = ledger_with_marker(dir.path(), "MARKER-EXPORT").await;
    let export = dir.path().join("export.jsonl");
    let (code, out, err) = ledgerctl(&[
        "export",
        "--data-dir",
        data.to_str().unwrap(),
        "--out",
        export.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = ledgerctl(&["verify", "--file", export.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&export).unwrap();
    // Change one byte of the marked event's signed body (hex of "MARKER").
    let needle = hex::encode("MARKER-EXPORT");
    assert_eq!(text.matches(&needle).count(), 1);
    let tampered = text.replacen(&needle, &hex::encode("MARKER-EXPORU"), 1);
    std::fs::write(&export, tampered).unwrap();
    let (code, out, err) = ledgerctl(&["verify", "--file", export.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("first broken index {marked}")),
        "{err}"
    );
    // Truncation (the last entries and the end record removed) is found too.
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&export, lines[..lines.len() - 3].join("\n") + "\n").unwrap();
    let (code, _, err) = ledgerctl(&["verify", "--file", export.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("truncated") || err.contains("missing"),
        "{err}"
    );
}

#[tokio::test]
async fn a_changed_byte_in_the_data_dir_is_detected_and_ledgerd_refuses_it() {
    let dir = tempdir();
    let (cfg, data, marked) = ledger_with_marker(dir.path(), "MARKER-DATADIR").await;
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    // Flip a byte of the marked event everywhere sled wrote it.
    let db = data.join("db");
    let mut bytes = std::fs::read(&db).unwrap();
    let needle = b"MARKER-DATADIR";
    let mut hits = 0;
    let mut i = 0;
    while i + needle.len() <= bytes.len() {
        if &bytes[i..i + needle.len()] == needle {
            bytes[i + needle.len() - 1] ^= 0x01;
            hits += 1;
        }
        i += 1;
    }
    assert!(hits > 0, "the marker is in sled's file");
    std::fs::write(&db, &bytes).unwrap();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 1, "tampering must fail verification: {out}{err}");
    eprintln!("verify said: {}", err.lines().last().unwrap_or(""));
    assert!(
        err.contains(&format!("first broken index {marked}"))
            || err.contains("cannot be read")
            || err.contains("entries missing"),
        "{err}"
    );
    // ledgerd does not serve it either.
    let started = Ledgerd::try_start(&data, &cfg, "127.0.0.1:0");
    assert!(
        started.is_err(),
        "ledgerd must refuse a store that no longer matches its checkpoint"
    );
}
