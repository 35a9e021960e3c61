//! Verified reads: ledgerctl keeps, for each ledger it talks to, the newest checkpoint it has
//! verified (its C2SP note and the ledger's key). On every later contact it asks the ledger for
//! a consistency proof from the held checkpoint to the new one before trusting the new one, so
//! a ledger that rewrote or cut its history, or shows this client a fork, is caught at once;
//! never a linear walk over entries that a server could fork underneath.
//!
//! State: `$LEDGER_STATE_DIR`, else `$XDG_STATE_HOME/casino-ledger`, else
//! `~/.local/state/casino-ledger`; one file per ledger identity (origin and key),
//! `<origin>-<key hex prefix>.note`, holding the key's hex on its first line and the note after
//! it. Written to a temporary file, fsynced and renamed: a crash leaves the old one or the new one.
//! A ledger under a held origin with another key is a new identity: first contact again, with a
//! warning (a ledger recreated under its name, or its key rotated); `--ledger-key` pins the key.

use std::path::PathBuf;

use anyhow::{Context, bail};
use ed25519_dalek::VerifyingKey;
use ledger_core::merkle::{self, TreeHash};
use ledger_core::note::{CheckpointText, SignedNote};
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, proofs_client::ProofsClient,
};
use tonic::transport::Channel;

/// Where the held checkpoints live.
pub fn state_dir() -> anyhow::Result<PathBuf> {
    if let Some(d) = std::env::var_os("LEDGER_STATE_DIR") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME") {
        return Ok(PathBuf::from(d).join("casino-ledger"));
    }
    let home = std::env::var_os("HOME")
        .context("no LEDGER_STATE_DIR, XDG_STATE_HOME or HOME to keep verified checkpoints in")?;
    Ok(PathBuf::from(home).join(".local/state/casino-ledger"))
}

/// A checkpoint held: the ledger's key and the note.
#[derive(Clone, Debug)]
pub struct Held {
    pub key: VerifyingKey,
    pub note: String,
    pub text: CheckpointText,
}

/// A log's origin as a file name: letters, digits, `-`, `_` and `.` kept, anything else `_`.
pub fn safe(origin: &str) -> String {
    origin
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Proof hashes as received: each must be 32 bytes.
fn tree_hashes(hashes: &[Vec<u8>]) -> anyhow::Result<Vec<TreeHash>> {
    hashes
        .iter()
        .map(|h| {
            TreeHash::try_from(h.as_slice())
                .map_err(|_| anyhow::anyhow!("a proof hash is not 32 bytes"))
        })
        .collect()
}

fn file_of(origin: &str, key: &VerifyingKey) -> anyhow::Result<PathBuf> {
    Ok(state_dir()?.join(format!(
        "{}-{}.note",
        safe(origin),
        &hex::encode(key.as_bytes())[..16]
    )))
}

/// Whether a checkpoint of `origin` is held under another key than `key`.
fn held_under_another_key(origin: &str, key: &VerifyingKey) -> anyhow::Result<Option<PathBuf>> {
    let prefix = format!("{}-", safe(origin));
    let mine = file_of(origin, key)?;
    let Ok(dir) = std::fs::read_dir(state_dir()?) else {
        return Ok(None);
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let rest = name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".note"));
        if rest.is_some_and(|r| r.len() == 16 && r.bytes().all(|b| b.is_ascii_hexdigit()))
            && e.path() != mine
        {
            return Ok(Some(e.path()));
        }
    }
    Ok(None)
}

/// The checkpoint held for `origin` under `key`, if any.
pub fn held(origin: &str, key: &VerifyingKey) -> anyhow::Result<Option<Held>> {
    let path = file_of(origin, key)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
    };
    let what = || {
        format!(
            "{} (a held checkpoint; delete it to start over)",
            path.display()
        )
    };
    let (stored_key, note) = text.split_once('\n').with_context(what)?;
    let stored_key = ledger_agent::keys::read_public(stored_key).with_context(what)?;
    if &stored_key != key {
        bail!("{}: holds another key", what());
    }
    let n = SignedNote::parse(note).with_context(what)?;
    let t = CheckpointText::parse(&n.text).with_context(what)?;
    n.verify(&t.origin, key).with_context(what)?;
    Ok(Some(Held {
        key: *key,
        note: note.to_string(),
        text: t,
    }))
}

fn store(h: &Held) -> anyhow::Result<()> {
    let path = file_of(&h.text.origin, &h.key)?;
    let dir = path.parent().expect("a file in a directory");
    std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    let tmp = path.with_extension("note.tmp");
    let body = format!("{}\n{}", hex::encode(h.key.as_bytes()), h.note);
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).with_context(|| tmp.display().to_string())?;
        f.write_all(body.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path).with_context(|| path.display().to_string())?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

/// What [`advance`] did.
pub struct Advanced {
    pub held: Held,
    /// The size of the checkpoint held before (`None`: first contact).
    pub from: Option<u64>,
}

/// Check `cp` (the ledger's latest checkpoint) against the one held for its log, and hold it if
/// it is newer and provably extends it. The key: `pinned` if given (it must be the held one's),
/// else the held one's, else (first contact) the checkpoint's own signer, which the caller
/// reports so that the user can compare it with the ledger's key out of band.
pub async fn advance(
    ch: Channel,
    cp: &v1::Checkpoint,
    pinned: Option<VerifyingKey>,
) -> anyhow::Result<Advanced> {
    if cp.note.is_empty() {
        bail!(
            "the ledger's latest checkpoint has no Merkle tree head (signed before the tree): ask for a new one (`ledgerctl checkpoint`)"
        );
    }
    let note = SignedNote::parse(&cp.note).context("the ledger's checkpoint note")?;
    let text = CheckpointText::parse(&note.text).context("the ledger's checkpoint note")?;
    let key = match pinned {
        Some(p) => p,
        None => {
            ledger_core::record::check_checkpoint(cp, None)
                .map_err(|e| anyhow::anyhow!("the ledger's checkpoint: {e}"))?
                .ledger_public_key
        }
    };
    let held = held(&text.origin, &key)?;
    if held.is_none()
        && let Some(other) = held_under_another_key(&text.origin, &key)?
    {
        eprintln!(
            "warning: {} now signs with key {}, not the key of the checkpoint you hold in {}: a new ledger under the same name, or a rotated key; taken as a first contact",
            text.origin,
            hex::encode(key.as_bytes()),
            other.display()
        );
    }
    note.verify(&text.origin, &key)
        .context("the ledger's checkpoint is not signed by its key")?;
    let new = Held {
        key,
        note: cp.note.clone(),
        text,
    };
    let Some(old) = held else {
        store(&new)?;
        return Ok(Advanced {
            held: new,
            from: None,
        });
    };
    let (m, n) = (old.text.size, new.text.size);
    if n < m {
        bail!(
            "the ledger shows a checkpoint of {n} entries but you hold one of {m}: it went back on what it signed"
        );
    }
    if n == m {
        if old.text.root != new.text.root {
            bail!(
                "the ledger signed two different trees of {n} entries (roots {} and {}): its history was rewritten",
                hex::encode(old.text.root),
                hex::encode(new.text.root)
            );
        }
        return Ok(Advanced {
            held: old,
            from: Some(m),
        });
    }
    let p = ProofsClient::new(ch)
        .get_consistency_proof(v1::ConsistencyProofRequest {
            from_size: m,
            to_size: n,
        })
        .await
        .context("asking for a consistency proof")?
        .into_inner();
    let hashes = tree_hashes(&p.hashes)?;
    merkle::verify_consistency(m, n, &hashes, &old.text.root, &new.text.root).with_context(|| {
        format!(
            "the ledger's tree of {n} entries does not extend the one of {m} you hold: its history was rewritten"
        )
    })?;
    store(&new)?;
    Ok(Advanced {
        held: new,
        from: Some(m),
    })
}

/// The latest checkpoint of the ledger at `ch`, advanced to as [`advance`] does.
pub async fn latest(ch: Channel, pinned: Option<VerifyingKey>) -> anyhow::Result<Advanced> {
    let cp = CheckpointsClient::new(ch.clone())
        .get_latest(v1::GetCheckpointRequest::default())
        .await
        .context("asking for the latest checkpoint")?
        .into_inner();
    advance(ch, &cp, pinned).await
}

/// Check that `entry` is in the tree `held` signs (an inclusion proof asked of the ledger).
/// `Ok(false)`: the entry is after that checkpoint (nothing proves it yet).
pub async fn check_entry(ch: Channel, held: &Held, entry: &v1::ChainEntry) -> anyhow::Result<bool> {
    use prost::Message;
    if entry.index >= held.text.size {
        return Ok(false);
    }
    let p = ProofsClient::new(ch)
        .get_inclusion_proof(v1::InclusionProofRequest {
            entry: Some(v1::inclusion_proof_request::Entry::Index(entry.index)),
            tree_size: held.text.size,
        })
        .await
        .with_context(|| format!("asking for the proof of entry {}", entry.index))?
        .into_inner();
    let hashes = tree_hashes(&p.hashes)?;
    // The entry as it was shown, not as the proof carries it.
    let leaf = merkle::leaf_hash(&entry.encode_to_vec());
    merkle::verify_inclusion(&leaf, entry.index, held.text.size, &hashes, &held.text.root)
        .with_context(|| {
            format!(
                "entry {} is not the one in the tree of {} entries the ledger signed",
                entry.index, held.text.size
            )
        })?;
    Ok(true)
}
