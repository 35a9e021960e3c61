//! `ledgerctl prove` (ask the running ledger for a proof over its Merkle tree and write it as
//! a self-contained file) and `ledgerctl verify-proof` (check such a file offline against the
//! ledger's public key). The file format is in docs/evidence.md.

use anyhow::{Context, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::VerifyingKey;
use ledger_core::merkle::{self, TreeHash};
use ledger_core::note::{CheckpointText, SignedNote};
use ledger_core::proto::{self as v1, proofs_client::ProofsClient};
use prost::Message;

use crate::common::{self, ServerArg};

/// The `format` of a proof file.
pub const PROOF_FORMAT: &str = "casino-ledger-proof/v1";

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Prove that one entry is in the ledger's tree (of the latest checkpoint by default).
    Entry(EntryArgs),
    /// Prove that the ledger's tree of an older checkpoint is a prefix of a newer one.
    Consistency(ConsistencyArgs),
}

#[derive(clap::Args, Debug)]
pub struct EntryArgs {
    #[command(flatten)]
    pub server: ServerArg,
    /// The entry's index.
    #[arg(long, conflicts_with_all = ["device", "seq"], required_unless_present = "device")]
    pub index: Option<u64>,
    /// The entry's device (with --seq).
    #[arg(long, requires = "seq")]
    pub device: Option<String>,
    /// The entry's sequence number (with --device).
    #[arg(long, requires = "device")]
    pub seq: Option<u64>,
    /// Write the proof here (default: standard output).
    #[arg(long, short)]
    pub out: Option<std::path::PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct ConsistencyArgs {
    #[command(flatten)]
    pub server: ServerArg,
    /// The older checkpoint you hold: a note file (as `prove` writes it under "checkpoint").
    #[arg(long, value_name = "FILE")]
    pub from_note: std::path::PathBuf,
    /// Write the proof here (default: standard output).
    #[arg(long, short)]
    pub out: Option<std::path::PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The proof file (`ledgerctl prove ... --out FILE`).
    pub file: std::path::PathBuf,
    /// The ledger's key (hex or PEM file), out of band; repeat for keys it rotated to.
    #[arg(long, required = true)]
    pub ledger_key: Vec<String>,
    /// The ledger's id, if you want its checkpoints' origin checked too.
    #[arg(long)]
    pub ledger_id: Option<String>,
}

fn b64s(h: &[Vec<u8>]) -> Vec<String> {
    h.iter().map(|h| B64.encode(h)).collect()
}

fn write_out(out: &Option<std::path::PathBuf>, v: &serde_json::Value) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(v)? + "\n";
    match out {
        Some(p) => std::fs::write(p, text).with_context(|| format!("--out {}", p.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

pub async fn run(c: Command, json: bool) -> anyhow::Result<i32> {
    match c {
        Command::Entry(a) => {
            let mut client = ProofsClient::new(common::channel(&a.server.server).await?);
            let entry = match (a.index, a.device, a.seq) {
                (Some(i), _, _) => v1::inclusion_proof_request::Entry::Index(i),
                (None, Some(device_id), Some(sequence)) => {
                    v1::inclusion_proof_request::Entry::DeviceSequence(v1::DeviceSequence {
                        device_id,
                        sequence,
                    })
                }
                _ => bail!("give --index, or --device and --seq"),
            };
            let p = client
                .get_inclusion_proof(v1::InclusionProofRequest {
                    entry: Some(entry),
                    tree_size: 0,
                })
                .await
                .map_err(|s| crate::present::status_error("inclusion proof", s))?
                .into_inner();
            let cp = p.checkpoint.context("the ledger sent no checkpoint")?;
            let e = p.entry.context("the ledger sent no entry")?;
            let v = serde_json::json!({
                "format": PROOF_FORMAT,
                "kind": "inclusion",
                "index": p.index,
                "tree_size": p.tree_size,
                "entry": B64.encode(e.encode_to_vec()),
                "hashes": b64s(&p.hashes),
                "checkpoint": cp.note,
            });
            write_out(&a.out, &v)?;
            if a.out.is_some() && !json {
                println!(
                    "proof of entry {} in the tree of {} entries written",
                    p.index, p.tree_size
                );
            }
            Ok(0)
        }
        Command::Consistency(a) => {
            let held = std::fs::read_to_string(&a.from_note)
                .with_context(|| format!("--from-note {}", a.from_note.display()))?;
            let held =
                note_of(&held).with_context(|| format!("--from-note {}", a.from_note.display()))?;
            let old = CheckpointText::parse(&SignedNote::parse(&held)?.text)?;
            let mut client = ProofsClient::new(common::channel(&a.server.server).await?);
            let p = client
                .get_consistency_proof(v1::ConsistencyProofRequest {
                    from_size: old.size,
                    to_size: 0,
                })
                .await
                .map_err(|s| crate::present::status_error("consistency proof", s))?
                .into_inner();
            let cp = p.checkpoint.context("the ledger sent no checkpoint")?;
            let v = serde_json::json!({
                "format": PROOF_FORMAT,
                "kind": "consistency",
                "from_size": p.from_size,
                "to_size": p.to_size,
                "hashes": b64s(&p.hashes),
                "from_checkpoint": held,
                "checkpoint": cp.note,
            });
            write_out(&a.out, &v)?;
            if a.out.is_some() && !json {
                println!(
                    "proof that the tree of {} entries extends that of {} written",
                    p.to_size, p.from_size
                );
            }
            Ok(0)
        }
    }
}

/// A note given as a file: the note itself, or a proof file's "checkpoint".
fn note_of(text: &str) -> anyhow::Result<String> {
    if text.trim_start().starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(text).context("not JSON")?;
        return v
            .get("checkpoint")
            .and_then(|c| c.as_str())
            .map(str::to_string)
            .context("no \"checkpoint\" note in this JSON");
    }
    Ok(text.to_string())
}

/// Check a checkpoint note with the ledger's key: its signature under its origin, the origin a
/// ledger's (and this ledger's if the id is given).
pub(crate) fn checked_note(
    note: &str,
    key: &VerifyingKey,
    ledger_id: Option<&str>,
    what: &str,
) -> anyhow::Result<CheckpointText> {
    Ok(ledger_evidence::checked_note(note, key, ledger_id, what)?)
}

fn hashes_of(v: &serde_json::Value) -> anyhow::Result<Vec<TreeHash>> {
    v.get("hashes")
        .and_then(|h| h.as_array())
        .context("no \"hashes\" list")?
        .iter()
        .enumerate()
        .map(|(i, h)| {
            h.as_str()
                .and_then(|s| B64.decode(s).ok())
                .and_then(|b| TreeHash::try_from(b).ok())
                .with_context(|| format!("hashes[{i}] is not a 32-byte hash in base64"))
        })
        .collect()
}

fn u64_of(v: &serde_json::Value, name: &str) -> anyhow::Result<u64> {
    v.get(name)
        .and_then(|x| x.as_u64())
        .with_context(|| format!("no \"{name}\" number"))
}

pub fn verify(a: VerifyArgs, json: bool) -> anyhow::Result<i32> {
    let keys = a
        .ledger_key
        .iter()
        .map(|k| ledger_agent::keys::read_public(k).context("--ledger-key"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // A note signed by any of the keys (a checkpoint after a rotation is the new key's).
    let note_of = |note: &str, what: &str| {
        let mut first = None;
        for k in &keys {
            match checked_note(note, k, a.ledger_id.as_deref(), what) {
                Ok(t) => return Ok(t),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.expect("--ledger-key is required"))
    };
    let what = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file).with_context(|| what.clone())?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{what}: not JSON"))?;
    if v.get("format").and_then(|f| f.as_str()) != Some(PROOF_FORMAT) {
        bail!("{what}: not a proof file (format is not {PROOF_FORMAT:?})");
    }
    let note = v
        .get("checkpoint")
        .and_then(|c| c.as_str())
        .with_context(|| format!("{what}: no \"checkpoint\" note"))?;
    let cp = note_of(note, "checkpoint")?;
    let hashes = hashes_of(&v).with_context(|| what.clone())?;
    match v.get("kind").and_then(|k| k.as_str()) {
        Some("inclusion") => {
            let index = u64_of(&v, "index")?;
            let size = u64_of(&v, "tree_size")?;
            if size != cp.size {
                bail!(
                    "the proof is for a tree of {size} entries, the checkpoint's has {}",
                    cp.size
                );
            }
            let bytes = v
                .get("entry")
                .and_then(|e| e.as_str())
                .and_then(|s| B64.decode(s).ok())
                .context("no \"entry\" in base64")?;
            let entry =
                v1::ChainEntry::decode(bytes.as_slice()).context("entry: not a ChainEntry")?;
            if entry.index != index {
                bail!("the entry says index {}, the proof {index}", entry.index);
            }
            merkle::verify_inclusion(&merkle::leaf_hash(&bytes), index, size, &hashes, &cp.root)
                .context("the inclusion proof does not hold")?;
            let about = describe(&entry);
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": true, "kind": "inclusion", "index": index,
                        "tree_size": size, "origin": cp.origin, "entry": about})
                );
            } else {
                println!(
                    "OK: entry {index} ({about}) is in {}'s tree of {size} entries, root {}",
                    cp.origin,
                    hex::encode(cp.root)
                );
            }
        }
        Some("consistency") => {
            let from = u64_of(&v, "from_size")?;
            let to = u64_of(&v, "to_size")?;
            let old_note = v
                .get("from_checkpoint")
                .and_then(|c| c.as_str())
                .context("no \"from_checkpoint\" note")?;
            let old = note_of(old_note, "from_checkpoint")?;
            if old.origin != cp.origin {
                bail!(
                    "the two checkpoints are of different logs ({:?}, {:?})",
                    old.origin,
                    cp.origin
                );
            }
            if (old.size, cp.size) != (from, to) {
                bail!(
                    "the proof is from {from} to {to} entries, the checkpoints are of {} and {}",
                    old.size,
                    cp.size
                );
            }
            merkle::verify_consistency(from, to, &hashes, &old.root, &cp.root)
                .context("the consistency proof does not hold: the ledger's history was rewritten, or the proof is damaged")?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": true, "kind": "consistency", "from_size": from,
                        "to_size": to, "origin": cp.origin})
                );
            } else {
                println!(
                    "OK: {}'s tree of {to} entries extends its tree of {from} entries (append only)",
                    cp.origin
                );
            }
        }
        _ => bail!("{what}: \"kind\" must be \"inclusion\" or \"consistency\""),
    }
    Ok(0)
}

/// One line about an entry: its kind, device, sequence and event type.
fn describe(e: &v1::ChainEntry) -> String {
    match ledger_core::RecordKind::from_proto(e.kind) {
        Some(ledger_core::RecordKind::Event) => match ledger_core::Event::decode(&e.body) {
            Ok(ev) => format!(
                "{} #{} {}, received at {} ms",
                ev.device_id,
                ev.sequence,
                ev.payload_name(),
                e.received_at_ms
            ),
            Err(_) => "an undecodable event".into(),
        },
        Some(ledger_core::RecordKind::Ledger) => {
            format!("a ledger record, at {} ms", e.received_at_ms)
        }
        None => "an entry of unknown kind".into(),
    }
}
