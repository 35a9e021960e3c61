//! Verifying a ledger's NATS JetStream export (ledgerd's `[export.nats]`) as a downstream
//! consumer would: each message holds one entry's stored bytes (an encoded `ChainEntry`) and
//! headers naming its index and hash. [`Verifier`] takes them in stream order and checks that
//! they are the ledger's entries 0, 1, 2, ... with no gap, duplicate or reordering, that each
//! links to the one before it (the blake3 chain), and, at the entry a signed checkpoint covers,
//! that the chain head and the Merkle root rebuilt from the messages' bytes are the ones the
//! ledger signed.

use ledger_core::ed25519_dalek::VerifyingKey;
use ledger_core::merkle::{Frontier, leaf_hash};
use ledger_core::proto as v1;
use ledger_core::record::{CheckpointInfo, TreeHead};
use ledger_core::{Hash32, verify::check_link};
use prost::Message as _;

/// What is wrong with the export or the checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    #[error("message {seq}: {what}")]
    Message { seq: u64, what: String },
}

/// A checkpoint as `ledgerctl --json checkpoint` prints it (`body` and `signature` in hex; the
/// other fields are informative and not trusted).
pub fn checkpoint_from_json(text: &str) -> Result<v1::Checkpoint, ExportError> {
    let bad = |m: String| ExportError::Checkpoint(m);
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let field = |k: &str| -> Result<Vec<u8>, ExportError> {
        let s = v[k]
            .as_str()
            .ok_or_else(|| bad(format!("no \"{k}\" (hex) in it")))?;
        hex::decode(s).map_err(|e| bad(format!("\"{k}\": {e}")))
    };
    Ok(v1::Checkpoint {
        body: field("body")?,
        signature: field("signature")?,
        note: v["note"].as_str().unwrap_or_default().to_string(),
    })
}

/// Checks the export's messages, in stream order, against one signed checkpoint.
pub struct Verifier {
    checkpoint: CheckpointInfo,
    tree: TreeHead,
    next: u64,
    prev: Hash32,
    frontier: Frontier,
    verified: bool,
}

impl Verifier {
    /// A checkpoint signed by `ledger_key` (which the consumer trusts out of band), with a
    /// Merkle tree head.
    pub fn new(cp: &v1::Checkpoint, ledger_key: &VerifyingKey) -> Result<Verifier, ExportError> {
        let info = ledger_core::record::check_checkpoint(cp, Some(ledger_key))
            .map_err(ExportError::Checkpoint)?;
        let tree = info.tree.clone().ok_or_else(|| {
            ExportError::Checkpoint(
                "it has no Merkle tree head (signed by an older ledgerd)".into(),
            )
        })?;
        Ok(Verifier {
            checkpoint: info,
            tree,
            next: 0,
            prev: ledger_core::GENESIS_PREV_HASH,
            frontier: Frontier::new(),
            verified: false,
        })
    }

    /// The next message (stream sequence `seq`, for errors): its `Ledger-Index` and
    /// `Ledger-Entry-Hash` headers and its payload. Returns the entry.
    pub fn accept(
        &mut self,
        seq: u64,
        index_header: Option<&str>,
        hash_header: Option<&str>,
        payload: &[u8],
    ) -> Result<v1::ChainEntry, ExportError> {
        let bad = |what: String| ExportError::Message { seq, what };
        let e = v1::ChainEntry::decode(payload)
            .map_err(|err| bad(format!("not a ChainEntry: {err}")))?;
        if e.index != self.next {
            return Err(bad(format!(
                "holds entry {} where entry {} was due ({})",
                e.index,
                self.next,
                if e.index < self.next {
                    "a duplicate or a reordering"
                } else {
                    "entries missing"
                }
            )));
        }
        if index_header != Some(e.index.to_string().as_str()) {
            return Err(bad(format!(
                "header Ledger-Index {index_header:?} does not name its entry {}",
                e.index
            )));
        }
        let h = check_link(&e, self.next, &self.prev).map_err(|err| bad(err.to_string()))?;
        if hash_header != Some(hex::encode(h).as_str()) {
            return Err(bad(format!(
                "header Ledger-Entry-Hash {hash_header:?} is not its hash {}",
                hex::encode(h)
            )));
        }
        self.frontier.push(leaf_hash(payload));
        self.prev = h;
        self.next += 1;
        if e.index == self.checkpoint.index {
            if h != self.checkpoint.head_hash {
                return Err(bad(format!(
                    "entry {} has hash {} but checkpoint #{} signed {}",
                    e.index,
                    hex::encode(h),
                    self.checkpoint.number,
                    hex::encode(self.checkpoint.head_hash)
                )));
            }
            let root = self.frontier.root();
            if root != self.tree.root || self.tree.size != self.next {
                return Err(bad(format!(
                    "the Merkle root of entries 0..{} is {} but checkpoint #{} signed {} for {} entries",
                    self.next,
                    hex::encode(root),
                    self.checkpoint.number,
                    hex::encode(self.tree.root),
                    self.tree.size
                )));
            }
            self.verified = true;
        }
        Ok(e)
    }

    /// Entries accepted so far.
    pub fn entries(&self) -> u64 {
        self.next
    }

    /// The checkpoint's entry was reached and everything up to it matched what it signs.
    pub fn verified(&self) -> bool {
        self.verified
    }

    /// The index of the entry the checkpoint covers.
    pub fn checkpoint_index(&self) -> u64 {
        self.checkpoint.index
    }
}
