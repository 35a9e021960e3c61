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

/// `ledgerctl export` of a stopped ledger's data directory to `dir/export.jsonl`; returns its path.
fn export_of(dir: &std::path::Path, data: &std::path::Path) -> std::path::PathBuf {
    let export = dir.join("export.jsonl");
    let (code, out, err) = ledgerctl(&[
        "export",
        "--data-dir",
        data.to_str().unwrap(),
        "--out",
        export.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    export
}

#[tokio::test]
async fn a_changed_byte_in_an_export_is_found_at_its_index() {
    let dir = tempdir();
    let (_cfg, data, marked) = ledger_with_marker(dir.path(), "MARKER-EXPORT").await;
    let export = export_of(dir.path(), &data);
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

/// A chain cut after one of its checkpoints, with the later checkpoints deleted and the export's
/// header and end record rewritten to match, holds together on its own. The newest checkpoint the
/// regulator kept (`ledgerctl checkpoint --json` while the ledger ran) shows it.
#[tokio::test]
async fn a_tail_cut_with_its_checkpoints_is_found_by_a_checkpoint_held_out_of_band() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let (code, out, err) = ledgerctl(&["checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    let envs: Vec<v1::Envelope> = (1..=40)
        .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    submit(&url, &envs).await;
    let (code, out, err) = ledgerctl(&["--json", "checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    let held = dir.path().join("held-checkpoint.json");
    std::fs::write(&held, &out).unwrap();
    let held_index = serde_json::from_str::<serde_json::Value>(out.trim()).unwrap()["index"]
        .as_u64()
        .unwrap();
    // An export from the running ledger verifies against it too.
    let live = dir.path().join("live.jsonl");
    let (code, out, err) =
        ledgerctl(&["export", "--server", &url, "--out", live.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let held_s = held.to_str().unwrap();
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--file",
        live.to_str().unwrap(),
        "--checkpoint",
        held_s,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    l.stop();

    let export = export_of(dir.path(), &data);
    let file = export.to_str().unwrap();
    let (code, out, err) = ledgerctl(&["verify", "--file", file, "--checkpoint", held_s]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("1 checkpoint(s) you hold found in it"),
        "{out}"
    );
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--data-dir",
        data.to_str().unwrap(),
        "--checkpoint",
        held_s,
    ]);
    assert_eq!(code, 0, "{out}{err}");

    // Keep checkpoint #1 and the entries it covers; drop the rest.
    let text = std::fs::read_to_string(&export).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut header = lines[0].clone();
    let n_cps = header["checkpoints"].as_u64().unwrap() as usize;
    let first = ledger_core::record::check_checkpoint(
        &v1::Checkpoint {
            body: hex::decode(lines[1]["checkpoint"]["body"].as_str().unwrap()).unwrap(),
            signature: hex::decode(lines[1]["checkpoint"]["signature"].as_str().unwrap()).unwrap(),
            note: lines[1]["checkpoint"]["note"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        },
        None,
    )
    .unwrap();
    assert!(
        n_cps >= 3 && first.index < held_index,
        "{n_cps} checkpoints"
    );
    let keep = first.index + 1;
    let entries = &lines[1 + n_cps..1 + n_cps + keep as usize];
    header["checkpoints"] = 1.into();
    header["entries"] = keep.into();
    let head_hash = entries.last().unwrap()["entry"]["entry_hash"].clone();
    let mut cut = vec![header, lines[1].clone()];
    cut.extend(entries.iter().cloned());
    cut.push(serde_json::json!({"end": {"entries": keep, "head_hash": head_hash}}));
    let body: String = cut.iter().map(|v| v.to_string() + "\n").collect();
    std::fs::write(&export, body).unwrap();

    // On its own the cut chain verifies; against the held checkpoint it does not.
    let (code, out, err) = ledgerctl(&["verify", "--file", file]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("no --checkpoint"), "{err}");
    let (code, out, err) = ledgerctl(&["verify", "--file", file, "--checkpoint", held_s]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("checkpoints were removed from the ledger"),
        "{err}"
    );
}

/// An export's header must say what its chain says, and nothing may follow its end record.
#[tokio::test]
async fn an_export_with_a_false_header_or_lines_after_its_end_is_refused() {
    let dir = tempdir();
    let (_cfg, data, _) = ledger_with_marker(dir.path(), "M").await;
    let export = export_of(dir.path(), &data);
    let file = export.to_str().unwrap();
    let text = std::fs::read_to_string(&export).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut h: serde_json::Value = serde_json::from_str(header).unwrap();
    h["ledger_id"] = "another-casino".into();
    std::fs::write(&export, format!("{h}\n{rest}")).unwrap();
    let (code, _, err) = ledgerctl(&["verify", "--file", file]);
    assert_eq!(code, 1);
    assert!(err.contains("is not the genesis record's"), "{err}");
    std::fs::write(&export, format!("{text}{{\"entry\":{{}}}}\n")).unwrap();
    let (code, _, err) = ledgerctl(&["verify", "--file", file]);
    assert_eq!(code, 1);
    assert!(err.contains("content after the end record"), "{err}");
}
