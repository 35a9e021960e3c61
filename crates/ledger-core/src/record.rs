//! Chain entries, the ledger's own signed records, and checkpoints: building them (signing) and
//! reading them back (checking).

use ed25519_dalek::{SigningKey, VerifyingKey};
use ledger_proto::v1::{self, ledger_record_body::Record};
use prost::Message;

use crate::hashing::{Hash32, entry_hash, record_hash};
use crate::merkle::TreeHash;
use crate::note::{CheckpointText, SignedNote};
use crate::signing::{
    CHECKPOINT_DOMAIN, LEDGER_RECORD_DOMAIN, LedgerSigner, parse_public_key, parse_signature,
    try_sign, verify_strict,
};

/// Entry format version written by this code.
pub const ENTRY_FORMAT: u32 = 1;

/// What an entry holds (the numbers are the proto `RecordKind` values and enter the hashes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RecordKind {
    /// An envelope signed by a device, an operator or a regulator.
    Event = 1,
    /// A record signed by the ledger key.
    Ledger = 2,
}

impl RecordKind {
    pub fn from_proto(v: i32) -> Option<RecordKind> {
        match v {
            1 => Some(RecordKind::Event),
            2 => Some(RecordKind::Ledger),
            _ => None,
        }
    }

    pub fn to_proto(self) -> v1::RecordKind {
        match self {
            RecordKind::Event => v1::RecordKind::Event,
            RecordKind::Ledger => v1::RecordKind::Ledger,
        }
    }
}

/// Build an entry: computes the record hash and the entry hash.
pub fn make_entry(
    prev_hash: &Hash32,
    index: u64,
    received_at_ms: i64,
    kind: RecordKind,
    body: Vec<u8>,
    signature: Vec<u8>,
) -> v1::ChainEntry {
    let rh = record_hash(kind, &body, &signature);
    let eh = entry_hash(prev_hash, index, received_at_ms, kind, &rh);
    v1::ChainEntry {
        format: ENTRY_FORMAT,
        index,
        received_at_ms,
        kind: kind.to_proto() as i32,
        body,
        signature,
        prev_hash: prev_hash.to_vec(),
        entry_hash: eh.to_vec(),
    }
}

/// A ledger record body signed with the ledger key: `(body bytes, signature bytes)`.
pub fn sign_ledger_record(
    key: &SigningKey,
    created_at_ms: i64,
    record: Record,
) -> (Vec<u8>, Vec<u8>) {
    match try_sign_ledger_record(key, created_at_ms, record) {
        Ok(signed) => signed,
        Err(never) => match never {},
    }
}

/// [`sign_ledger_record`] with any [`LedgerSigner`] (one in a hardware module may fail).
pub fn try_sign_ledger_record<S: LedgerSigner + ?Sized>(
    key: &S,
    created_at_ms: i64,
    record: Record,
) -> Result<(Vec<u8>, Vec<u8>), S::Error> {
    let body = v1::LedgerRecordBody {
        created_at_ms,
        record: Some(record),
    }
    .encode_to_vec();
    let sig = try_sign(key, LEDGER_RECORD_DOMAIN, &body)?;
    Ok((body, sig.to_bytes().to_vec()))
}

/// Decode a ledger record body.
pub fn decode_ledger_record(body: &[u8]) -> Result<v1::LedgerRecordBody, String> {
    let r =
        v1::LedgerRecordBody::decode(body).map_err(|e| format!("not a LedgerRecordBody: {e}"))?;
    if r.record.is_none() {
        return Err(
            "ledger record without a record (or of a kind this version does not know)".into(),
        );
    }
    Ok(r)
}

/// Check a [`v1::ClockStep`] record at an entry received at `received_at_ms`, after an entry
/// received at `prev_received_at_ms` (the rule is in ledger.proto, at `ClockStep`): it must
/// declare exactly the two received times it stands between, and a step.
pub fn check_clock_step(
    step: &v1::ClockStep,
    created_at_ms: i64,
    received_at_ms: i64,
    prev_received_at_ms: i64,
) -> Result<(), String> {
    if step.before_ms != prev_received_at_ms {
        return Err(format!(
            "clock step declares before_ms {} but the previous entry was received at {prev_received_at_ms}",
            step.before_ms
        ));
    }
    if step.after_ms != received_at_ms || created_at_ms != received_at_ms {
        return Err(format!(
            "clock step declares after_ms {} (created at {created_at_ms}) but its entry was received at {received_at_ms}",
            step.after_ms
        ));
    }
    let threshold = i128::from(step.threshold_ms);
    let stepped = if step.across_restart {
        step.monotonic_elapsed_ms == 0
            && i128::from(step.after_ms) < i128::from(step.before_ms) - threshold
    } else {
        let moved = i128::from(step.after_ms)
            - i128::from(step.before_ms)
            - i128::from(step.monotonic_elapsed_ms);
        moved.abs() > threshold
    };
    if !stepped {
        return Err(format!(
            "clock step from {} to {} ms with {} ms of monotonic time{} is not a step of more than {} ms",
            step.before_ms,
            step.after_ms,
            step.monotonic_elapsed_ms,
            if step.across_restart {
                " (across a restart: must go back)"
            } else {
                ""
            },
            step.threshold_ms
        ));
    }
    Ok(())
}

/// A checked checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub number: u64,
    pub index: u64,
    pub head_hash: Hash32,
    pub created_at_ms: i64,
    pub ledger_public_key: VerifyingKey,
    pub reason: String,
    /// The Merkle tree head it signs (checkpoints signed before the tree have none).
    pub tree: Option<TreeHead>,
}

/// A checkpoint's Merkle tree head: entries `0..size` (`size` = the checkpoint's index + 1),
/// their root, and the origin its C2SP note names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeHead {
    pub origin: String,
    pub size: u64,
    pub root: TreeHash,
}

/// Sign a checkpoint with its Merkle tree head: the body (ledger domain) and the C2SP note
/// (`crate::note`), both with the ledger's key.
#[allow(clippy::too_many_arguments)]
pub fn sign_checkpoint_with_tree<S: LedgerSigner + ?Sized>(
    key: &S,
    number: u64,
    index: u64,
    head_hash: &Hash32,
    created_at_ms: i64,
    reason: &str,
    origin: &str,
    root: &TreeHash,
) -> Result<v1::Checkpoint, String> {
    let size = index + 1;
    let body = v1::CheckpointBody {
        number,
        index,
        head_hash: head_hash.to_vec(),
        created_at_ms,
        ledger_public_key: key.public_key().as_bytes().to_vec(),
        reason: reason.to_string(),
        tree_size: size,
        tree_root: root.to_vec(),
    }
    .encode_to_vec();
    let signature = try_sign(key, CHECKPOINT_DOMAIN, &body)
        .map_err(|e| format!("the signer failed: {e}"))?
        .to_bytes()
        .to_vec();
    let text = CheckpointText {
        origin: origin.to_string(),
        size,
        root: *root,
        chain_head: Some(*head_hash),
    }
    .text();
    let note = SignedNote::sign_with(&text, origin, key).map_err(|e| e.to_string())?;
    Ok(v1::Checkpoint {
        body,
        signature,
        note: note.encode(),
    })
}

/// Sign a checkpoint without a tree head (the format before the tree: tests of old ledgers).
pub fn sign_checkpoint(
    key: &SigningKey,
    number: u64,
    index: u64,
    head_hash: &Hash32,
    created_at_ms: i64,
    reason: &str,
) -> v1::Checkpoint {
    match try_sign_checkpoint(key, number, index, head_hash, created_at_ms, reason) {
        Ok(cp) => cp,
        Err(never) => match never {},
    }
}

/// [`sign_checkpoint`] with any [`LedgerSigner`] (one in a hardware module may fail).
pub fn try_sign_checkpoint<S: LedgerSigner + ?Sized>(
    key: &S,
    number: u64,
    index: u64,
    head_hash: &Hash32,
    created_at_ms: i64,
    reason: &str,
) -> Result<v1::Checkpoint, S::Error> {
    let body = v1::CheckpointBody {
        number,
        index,
        head_hash: head_hash.to_vec(),
        created_at_ms,
        ledger_public_key: key.public_key().as_bytes().to_vec(),
        reason: reason.to_string(),
        ..Default::default()
    }
    .encode_to_vec();
    let signature = try_sign(key, CHECKPOINT_DOMAIN, &body)?.to_bytes().to_vec();
    Ok(v1::Checkpoint {
        body,
        signature,
        note: String::new(),
    })
}

/// Decode a checkpoint and check its signature against the key it names, and, when given, against
/// the expected ledger key.
pub fn check_checkpoint(
    cp: &v1::Checkpoint,
    expected_key: Option<&VerifyingKey>,
) -> Result<CheckpointInfo, String> {
    let b = v1::CheckpointBody::decode(cp.body.as_slice())
        .map_err(|e| format!("not a CheckpointBody: {e}"))?;
    let key =
        parse_public_key(&b.ledger_public_key).map_err(|e| format!("ledger_public_key: {e}"))?;
    if let Some(k) = expected_key
        && k != &key
    {
        return Err(format!(
            "signed by ledger key {} but the ledger's key is {}",
            hex::encode(key.as_bytes()),
            hex::encode(k.as_bytes())
        ));
    }
    let sig = parse_signature(&cp.signature).map_err(|e| e.to_string())?;
    if !verify_strict(&key, CHECKPOINT_DOMAIN, &cp.body, &sig) {
        return Err("bad checkpoint signature".into());
    }
    let head_hash: Hash32 = b
        .head_hash
        .as_slice()
        .try_into()
        .map_err(|_| format!("head_hash must be 32 bytes, got {}", b.head_hash.len()))?;
    let tree = check_tree_head(cp, &b, &key, &head_hash)?;
    Ok(CheckpointInfo {
        number: b.number,
        index: b.index,
        head_hash,
        created_at_ms: b.created_at_ms,
        ledger_public_key: key,
        reason: b.reason,
        tree,
    })
}

/// The tree head of a checkpoint whose signature was checked: none, or one that the note says
/// too, under the ledger key's signature.
fn check_tree_head(
    cp: &v1::Checkpoint,
    b: &v1::CheckpointBody,
    key: &VerifyingKey,
    head_hash: &Hash32,
) -> Result<Option<TreeHead>, String> {
    if b.tree_size == 0 && b.tree_root.is_empty() && cp.note.is_empty() {
        return Ok(None);
    }
    if b.tree_size != b.index.wrapping_add(1) {
        return Err(format!(
            "tree_size {} does not cover entries 0..={}",
            b.tree_size, b.index
        ));
    }
    let root: TreeHash = b
        .tree_root
        .as_slice()
        .try_into()
        .map_err(|_| format!("tree_root must be 32 bytes, got {}", b.tree_root.len()))?;
    if cp.note.is_empty() {
        return Err("a checkpoint with a tree must carry its note".into());
    }
    let note = SignedNote::parse(&cp.note).map_err(|e| format!("note: {e}"))?;
    let text = CheckpointText::parse(&note.text).map_err(|e| format!("note: {e}"))?;
    if !text.origin.starts_with("casino-ledger/") {
        return Err(format!("note: origin {:?} is not a ledger's", text.origin));
    }
    let want = CheckpointText {
        origin: text.origin.clone(),
        size: b.tree_size,
        root,
        chain_head: Some(*head_hash),
    };
    if text != want {
        return Err(format!(
            "note says size {} root {} chain head {}, the signed body says size {} root {} head {}",
            text.size,
            hex::encode(text.root),
            text.chain_head
                .map(hex::encode)
                .unwrap_or_else(|| "none".into()),
            b.tree_size,
            hex::encode(root),
            hex::encode(head_hash)
        ));
    }
    note.verify(&text.origin, key)
        .map_err(|e| format!("note: {e}"))?;
    Ok(Some(TreeHead {
        origin: text.origin,
        size: b.tree_size,
        root,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(before_ms: i64, after_ms: i64, mono: u64, across_restart: bool) -> v1::ClockStep {
        v1::ClockStep {
            before_ms,
            after_ms,
            monotonic_elapsed_ms: mono,
            threshold_ms: 1000,
            across_restart,
        }
    }

    #[test]
    fn a_clock_step_must_declare_its_neighbours_and_a_step() {
        // Back two days, forward a year, back across a restart: all true steps.
        check_clock_step(&step(10_000, 5_000, 100, false), 5_000, 5_000, 10_000).unwrap();
        check_clock_step(&step(10_000, 90_000, 100, false), 90_000, 90_000, 10_000).unwrap();
        check_clock_step(&step(10_000, 5_000, 0, true), 5_000, 5_000, 10_000).unwrap();
        // Lies about its neighbours.
        let e = check_clock_step(&step(9_999, 5_000, 100, false), 5_000, 5_000, 10_000);
        assert!(e.unwrap_err().contains("before_ms 9999"));
        let e = check_clock_step(&step(10_000, 5_000, 100, false), 5_000, 5_001, 10_000);
        assert!(e.unwrap_err().contains("after_ms 5000"));
        let e = check_clock_step(&step(10_000, 5_000, 100, false), 4_000, 5_000, 10_000);
        assert!(e.unwrap_err().contains("created at 4000"));
        // Not a step: the wall clock moved with the monotonic one, within the threshold.
        let e = check_clock_step(&step(10_000, 10_500, 100, false), 10_500, 10_500, 10_000);
        assert!(e.unwrap_err().contains("is not a step"));
        let e = check_clock_step(&step(10_000, 11_100, 100, false), 11_100, 11_100, 10_000);
        assert!(e.unwrap_err().contains("is not a step"));
        check_clock_step(&step(10_000, 11_101, 100, false), 11_101, 11_101, 10_000).unwrap();
        // Across a restart only back, by more than the threshold, and with no monotonic time.
        assert!(check_clock_step(&step(10_000, 9_500, 0, true), 9_500, 9_500, 10_000).is_err());
        assert!(check_clock_step(&step(10_000, 20_000, 0, true), 20_000, 20_000, 10_000).is_err());
        assert!(check_clock_step(&step(10_000, 5_000, 7, true), 5_000, 5_000, 10_000).is_err());
    }

    #[test]
    fn checkpoints_round_trip_and_resist_tampering() {
        let k = SigningKey::from_bytes(&[4; 32]);
        let cp = sign_checkpoint(&k, 1, 10, &[3; 32], 1000, "request");
        let info = check_checkpoint(&cp, Some(&k.verifying_key())).unwrap();
        assert_eq!((info.number, info.index, info.head_hash), (1, 10, [3; 32]));
        let mut bad = cp.clone();
        bad.body[3] ^= 1;
        assert!(check_checkpoint(&bad, None).is_err());
        let other = SigningKey::from_bytes(&[5; 32]).verifying_key();
        assert!(
            check_checkpoint(&cp, Some(&other))
                .unwrap_err()
                .contains("ledger key")
        );
    }

    #[test]
    fn a_checkpoint_with_a_tree_carries_the_same_head_in_its_note() {
        let k = SigningKey::from_bytes(&[4; 32]);
        let cp = sign_checkpoint_with_tree(
            &k,
            2,
            10,
            &[3; 32],
            1000,
            "request",
            "casino-ledger/x",
            &[8; 32],
        )
        .unwrap();
        let info = check_checkpoint(&cp, Some(&k.verifying_key())).unwrap();
        assert_eq!(
            info.tree,
            Some(TreeHead {
                origin: "casino-ledger/x".into(),
                size: 11,
                root: [8; 32]
            })
        );
        // The note of another checkpoint, a note signed by another key, no note, a note with
        // another root: each refused, and the body's signature still holds.
        let other = sign_checkpoint_with_tree(
            &k,
            3,
            11,
            &[3; 32],
            1000,
            "request",
            "casino-ledger/x",
            &[8; 32],
        )
        .unwrap();
        let stranger = SigningKey::from_bytes(&[5; 32]);
        let forged = sign_checkpoint_with_tree(
            &stranger,
            2,
            10,
            &[3; 32],
            1000,
            "request",
            "casino-ledger/x",
            &[8; 32],
        )
        .unwrap();
        let other_root = sign_checkpoint_with_tree(
            &k,
            2,
            10,
            &[3; 32],
            1000,
            "request",
            "casino-ledger/x",
            &[9; 32],
        )
        .unwrap();
        for (note, why) in [
            (other.note.clone(), "size 12"),
            (forged.note.clone(), "no signature"),
            (String::new(), "must carry its note"),
            (other_root.note.clone(), "root"),
            (cp.note.replace("casino-ledger/x", "elsewhere/x"), "origin"),
        ] {
            let mut bad = cp.clone();
            bad.note = note;
            let e = check_checkpoint(&bad, None).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
        }
        // A body with a tree size that is not index + 1.
        let b = v1::CheckpointBody {
            tree_size: 10,
            ..v1::CheckpointBody::decode(cp.body.as_slice()).unwrap()
        }
        .encode_to_vec();
        let sig = crate::signing::sign(&k, CHECKPOINT_DOMAIN, &b)
            .to_bytes()
            .to_vec();
        let bad = v1::Checkpoint {
            body: b,
            signature: sig,
            note: cp.note.clone(),
        };
        assert!(
            check_checkpoint(&bad, None)
                .unwrap_err()
                .contains("tree_size")
        );
    }
}
