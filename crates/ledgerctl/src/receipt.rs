//! `ledgerctl verify-receipt`: check a device's signed receipt offline (docs/evidence.md).

use anyhow::{Context, bail};
use ledger_core::receipt::{ReceiptFile, verify_receipt};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Receipt files (`ledger-agent receipt --sequence N --out FILE`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// The ledger's key (hex or PEM file), out of band; repeat for keys it rotated to.
    #[arg(long, required = true)]
    pub ledger_key: Vec<String>,
}

pub fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let keys = a
        .ledger_key
        .iter()
        .map(|k| ledger_agent::keys::read_public(k).context("--ledger-key"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Signed by any of the keys (a group head after a rotation is the new key's).
    let verify = |r: &ledger_core::proto::Receipt, env: &ledger_core::proto::Envelope| {
        let mut first = None;
        for k in &keys {
            match verify_receipt(r, env, k) {
                Ok(c) => return Ok(c),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.expect("--ledger-key is required"))
    };
    let mut bad = 0;
    for path in &a.files {
        let what = path.display().to_string();
        let checked = std::fs::read_to_string(path)
            .with_context(|| what.clone())
            .and_then(|t| {
                serde_json::from_str::<ReceiptFile>(&t)
                    .with_context(|| format!("{what}: not a receipt file"))
            })
            .and_then(|f| f.decode().with_context(|| what.clone()))
            .and_then(|(env, r)| verify(&r, &env).with_context(|| what.clone()));
        match checked {
            Ok(c) => {
                let at = chrono::DateTime::from_timestamp_millis(c.received_at_ms)
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
                    .unwrap_or_default();
                if json {
                    println!(
                        "{}",
                        serde_json::json!({"file": what, "ok": true, "device_id": c.device_id,
                            "sequence": c.sequence, "index": c.index,
                            "entry_hash": hex::encode(c.entry_hash),
                            "received_at_ms": c.received_at_ms, "tree_size": c.tree_size,
                            "tree_root": hex::encode(c.tree_root)})
                    );
                } else {
                    println!(
                        "OK: {what}: {} sequence {} was acknowledged as entry {} at {at}, in the \
                         ledger's tree of {} entries (root {})",
                        c.device_id,
                        c.sequence,
                        c.index,
                        c.tree_size,
                        hex::encode(c.tree_root)
                    );
                }
            }
            Err(e) => {
                bad += 1;
                if json {
                    println!(
                        "{}",
                        serde_json::json!({"file": what, "ok": false, "error": format!("{e:#}")})
                    );
                } else {
                    eprintln!("REFUSED: {e:#}");
                }
            }
        }
    }
    if bad > 0 {
        bail!("{bad} of {} receipts do not hold", a.files.len());
    }
    Ok(0)
}
