//! Signed receipts: the ledger's proof to a device that it acknowledged an event at an index.
//!
//! Once per durable group of entries the ledger signs a [`v1::GroupHeadBody`] (domain
//! [`GROUP_HEAD_DOMAIN`]): the group's first index, the tree size and root after the group, and
//! the root of the group's own RFC 6962 tree (leaf `k` = entry `first_index + k` as stored).
//! Each ACCEPTED receipt carries that signed head, the previous entry's hash and the entry's
//! path in the group's tree. From its envelope and the receipt a device rebuilds the entry
//! exactly as stored ([`crate::make_entry`]), hence its leaf, and checks the path and the
//! signature: no call to the ledger is needed, and the ledger cannot later deny the receipt
//! without contradicting its own signature (a later checkpoint's consistency with `tree_root`
//! is the usual proof; docs/evidence.md).
//!
//! One signature per group instead of per receipt: at peak a group holds hundreds of entries,
//! so the cost per receipt is a share of one signature and a path of `log2(group)` hashes.

pub mod compact;

use ed25519_dalek::{Signature, VerifyingKey};
use prost::Message;

use crate::merkle::{self, TreeHash};
use crate::proto as v1;
use crate::signing::{self, LedgerSigner, parse_public_key};
use crate::{Hash32, RecordKind, make_entry};

/// Domain of the group heads that signed receipts carry.
pub const GROUP_HEAD_DOMAIN: &[u8] = b"casino-ledger/v1/group-head\n\0";

/// Sign the head of a durable group: entries `first_index..tree_size` whose own tree has root
/// `group_root`, in the ledger's tree of `tree_size` entries with root `tree_root`.
pub fn sign_group_head<S: LedgerSigner + ?Sized>(
    key: &S,
    first_index: u64,
    tree_size: u64,
    tree_root: &TreeHash,
    group_root: &TreeHash,
    signed_at_ms: i64,
) -> Result<v1::SignedGroupHead, S::Error> {
    let body = v1::GroupHeadBody {
        first_index,
        tree_size,
        tree_root: tree_root.to_vec(),
        group_root: group_root.to_vec(),
        signed_at_ms,
        ledger_public_key: key.public_key().as_bytes().to_vec(),
    }
    .encode_to_vec();
    let signature = signing::try_sign(key, GROUP_HEAD_DOMAIN, &body)?;
    Ok(v1::SignedGroupHead {
        body: body.into(),
        signature: signature.to_bytes().to_vec().into(),
    })
}

/// Why a receipt does not prove what it claims.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    #[error("the receipt is {0}, not ACCEPTED: only an accepted event has a signed receipt")]
    NotAccepted(String),
    #[error("the receipt carries no signed group head (the ledger did not sign receipts)")]
    Unsigned,
    #[error("the group head does not decode: {0}")]
    Malformed(String),
    #[error("the group head is signed by ledger key {got}, not by {want}")]
    WrongLedgerKey { got: String, want: String },
    #[error("the ledger's signature of the group head is not valid")]
    BadSignature,
    #[error("entry {index} is not in the group {first}..{size} the head covers")]
    OutsideGroup { index: u64, first: u64, size: u64 },
    #[error(
        "the envelope and the receipt do not make the acknowledged entry: its hash would be \
         {computed}, the receipt says {receipt}"
    )]
    EntryHash { computed: String, receipt: String },
    #[error(
        "the envelope is signer {got} sequence {got_seq}; the receipt is for {want} {want_seq}"
    )]
    OtherEvent {
        got: String,
        got_seq: u64,
        want: String,
        want_seq: u64,
    },
    #[error("the entry's path does not lead to the signed group root: {0}")]
    Path(String),
    #[error("a compact receipt cannot be made whole: {0}")]
    Compact(String),
}

/// What a valid receipt proves: the ledger with this key acknowledged the envelope as entry
/// `index`, in its tree of `tree_size` entries with root `tree_root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedReceipt {
    pub ledger_public_key: VerifyingKey,
    pub device_id: String,
    pub sequence: u64,
    pub index: u64,
    pub entry_hash: Hash32,
    pub received_at_ms: i64,
    pub tree_size: u64,
    pub tree_root: TreeHash,
    pub signed_at_ms: i64,
}

fn hash32(b: &[u8], what: &str) -> Result<[u8; 32], ReceiptError> {
    b.try_into()
        .map_err(|_| ReceiptError::Malformed(format!("{what} is {} bytes, not 32", b.len())))
}

/// Check an ACCEPTED receipt against the envelope it acknowledges and the ledger's public key.
pub fn verify_receipt(
    receipt: &v1::Receipt,
    envelope: &v1::Envelope,
    ledger_key: &VerifyingKey,
) -> Result<CheckedReceipt, ReceiptError> {
    let status = v1::ReceiptStatus::try_from(receipt.status)
        .map(|s| s.as_str_name().to_string())
        .unwrap_or_else(|_| format!("status {}", receipt.status));
    if receipt.status != v1::ReceiptStatus::Accepted as i32 {
        return Err(ReceiptError::NotAccepted(status));
    }
    let group = receipt.group.as_ref().ok_or(ReceiptError::Unsigned)?;
    let head = v1::GroupHeadBody::decode(group.body.as_ref())
        .map_err(|e| ReceiptError::Malformed(e.to_string()))?;
    let key = parse_public_key(&head.ledger_public_key)
        .map_err(|e| ReceiptError::Malformed(format!("ledger_public_key: {e}")))?;
    if key != *ledger_key {
        return Err(ReceiptError::WrongLedgerKey {
            got: hex::encode(key.as_bytes()),
            want: hex::encode(ledger_key.as_bytes()),
        });
    }
    let sig = Signature::from_slice(&group.signature).map_err(|_| ReceiptError::BadSignature)?;
    if !signing::verify_strict(ledger_key, GROUP_HEAD_DOMAIN, &group.body, &sig) {
        return Err(ReceiptError::BadSignature);
    }
    let (first, size, index) = (head.first_index, head.tree_size, receipt.index);
    if index < first || index >= size {
        return Err(ReceiptError::OutsideGroup { index, first, size });
    }
    let body = v1::EventBody::decode(envelope.body.as_slice())
        .map_err(|e| ReceiptError::Malformed(format!("the envelope's body: {e}")))?;
    if body.device_id != receipt.device_id || body.sequence != receipt.sequence {
        return Err(ReceiptError::OtherEvent {
            got: body.device_id,
            got_seq: body.sequence,
            want: receipt.device_id.clone(),
            want_seq: receipt.sequence,
        });
    }
    let prev = hash32(&receipt.prev_hash, "prev_hash")?;
    let entry = make_entry(
        &prev,
        index,
        receipt.received_at_ms,
        RecordKind::Event,
        envelope.body.clone(),
        envelope.signature.clone(),
    );
    if entry.entry_hash != receipt.entry_hash {
        return Err(ReceiptError::EntryHash {
            computed: hex::encode(&entry.entry_hash),
            receipt: hex::encode(&receipt.entry_hash),
        });
    }
    let leaf = merkle::leaf_hash(&entry.encode_to_vec());
    if !receipt.group_path.len().is_multiple_of(32) {
        return Err(ReceiptError::Malformed(format!(
            "group_path is {} bytes, not a whole number of 32-byte hashes",
            receipt.group_path.len()
        )));
    }
    let path: Vec<TreeHash> = receipt
        .group_path
        .chunks_exact(32)
        .map(|h| h.try_into().expect("32 bytes"))
        .collect();
    let group_root = hash32(&head.group_root, "group_root")?;
    merkle::verify_inclusion(&leaf, index - first, size - first, &path, &group_root)
        .map_err(|e| ReceiptError::Path(e.to_string()))?;
    Ok(CheckedReceipt {
        ledger_public_key: key,
        device_id: receipt.device_id.clone(),
        sequence: receipt.sequence,
        index,
        entry_hash: hash32(&entry.entry_hash, "entry_hash")?,
        received_at_ms: receipt.received_at_ms,
        tree_size: size,
        tree_root: hash32(&head.tree_root, "tree_root")?,
        signed_at_ms: head.signed_at_ms,
    })
}

/// What a receipt file holds (JSON; docs/evidence.md): an ACCEPTED receipt and the envelope it
/// acknowledges, each as its protobuf encoding in base64, with the readable fields beside them
/// (which the check compares with the encodings).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReceiptFile {
    /// [`ReceiptFile::FORMAT`].
    pub format: String,
    pub device_id: String,
    pub sequence: u64,
    pub index: u64,
    /// base64 of the `Envelope` encoding.
    pub envelope: String,
    /// base64 of the `Receipt` encoding.
    pub receipt: String,
}

impl ReceiptFile {
    pub const FORMAT: &'static str = "casino-ledger-receipt/v1";

    pub fn new(envelope: &v1::Envelope, receipt: &v1::Receipt) -> ReceiptFile {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        ReceiptFile {
            format: Self::FORMAT.into(),
            device_id: receipt.device_id.clone(),
            sequence: receipt.sequence,
            index: receipt.index,
            envelope: b64.encode(envelope.encode_to_vec()),
            receipt: b64.encode(receipt.encode_to_vec()),
        }
    }

    /// The envelope and the receipt, refusing a file whose readable fields say otherwise.
    pub fn decode(&self) -> Result<(v1::Envelope, v1::Receipt), ReceiptError> {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        if self.format != Self::FORMAT {
            return Err(ReceiptError::Malformed(format!(
                "format {:?}, expected {:?}",
                self.format,
                Self::FORMAT
            )));
        }
        let bytes = |field: &str, s: &str| {
            b64.decode(s)
                .map_err(|e| ReceiptError::Malformed(format!("{field}: not base64: {e}")))
        };
        let envelope = v1::Envelope::decode(bytes("envelope", &self.envelope)?.as_slice())
            .map_err(|e| ReceiptError::Malformed(format!("envelope: {e}")))?;
        let receipt = v1::Receipt::decode(bytes("receipt", &self.receipt)?.as_slice())
            .map_err(|e| ReceiptError::Malformed(format!("receipt: {e}")))?;
        if (receipt.device_id.as_str(), receipt.sequence, receipt.index)
            != (self.device_id.as_str(), self.sequence, self.index)
        {
            return Err(ReceiptError::Malformed(format!(
                "the file says {} {} at {}, its receipt {} {} at {}",
                self.device_id,
                self.sequence,
                self.index,
                receipt.device_id,
                receipt.sequence,
                receipt.index
            )));
        }
        Ok((envelope, receipt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle::LevelTree;
    use crate::signing::{EVENT_DOMAIN, sign};
    use ed25519_dalek::SigningKey;

    fn envelope(device: &SigningKey, seq: u64) -> v1::Envelope {
        let body = v1::EventBody {
            device_id: "table-1".into(),
            sequence: seq,
            occurred_at_ms: 1_700_000_000_000 + seq as i64,
            ..Default::default()
        }
        .encode_to_vec();
        let signature = sign(device, EVENT_DOMAIN, &body).to_bytes().to_vec();
        v1::Envelope { body, signature }
    }

    /// A group of `n` accepted events after `before` earlier entries, with receipts as the
    /// ledger's writer makes them.
    fn group(ledger: &SigningKey, n: u64, before: u64) -> (Vec<v1::Envelope>, Vec<v1::Receipt>) {
        let device = SigningKey::from_bytes(&[9; 32]);
        let mut prev = [7u8; 32];
        let mut frontier = merkle::Frontier::new();
        for i in 0..before {
            frontier.push(merkle::leaf_hash(&i.to_be_bytes()));
        }
        let (mut envs, mut entries) = (Vec::new(), Vec::new());
        for k in 0..n {
            let env = envelope(&device, k + 1);
            let e = make_entry(
                &prev,
                before + k,
                1_700_000_000_500,
                RecordKind::Event,
                env.body.clone(),
                env.signature.clone(),
            );
            prev = e.entry_hash.as_slice().try_into().unwrap();
            envs.push(env);
            entries.push(e);
        }
        let leaves: Vec<_> = entries
            .iter()
            .map(|e| merkle::leaf_hash(&e.encode_to_vec()))
            .collect();
        for l in &leaves {
            frontier.push(*l);
        }
        let tree = LevelTree::new(leaves);
        let head = sign_group_head(
            ledger,
            before,
            before + n,
            &frontier.root(),
            &tree.root(),
            1_700_000_000_600,
        )
        .unwrap();
        let receipts = entries
            .iter()
            .enumerate()
            .map(|(k, e)| v1::Receipt {
                status: v1::ReceiptStatus::Accepted as i32,
                device_id: "table-1".into(),
                sequence: k as u64 + 1,
                index: e.index,
                entry_hash: e.entry_hash.clone(),
                received_at_ms: e.received_at_ms,
                prev_hash: e.prev_hash.clone(),
                group: Some(head.clone()),
                group_path: tree.path(k as u64).concat().into(),
                ..Default::default()
            })
            .collect();
        (envs, receipts)
    }

    #[test]
    fn every_receipt_of_a_group_verifies() {
        let ledger = SigningKey::from_bytes(&[1; 32]);
        for n in [1u64, 2, 3, 7, 64, 100] {
            let (envs, receipts) = group(&ledger, n, 41);
            for (e, r) in envs.iter().zip(&receipts) {
                let c = verify_receipt(r, e, &ledger.verifying_key()).unwrap();
                assert_eq!((c.index, c.tree_size), (r.index, 41 + n));
                assert_eq!(c.sequence, r.sequence);
            }
        }
    }

    #[test]
    fn a_receipt_file_round_trips_and_its_readable_fields_must_agree() {
        let ledger = SigningKey::from_bytes(&[1; 32]);
        let (envs, receipts) = group(&ledger, 3, 0);
        let f = ReceiptFile::new(&envs[1], &receipts[1]);
        assert_eq!((f.sequence, f.index), (2, 1));
        assert_eq!(f.decode().unwrap(), (envs[1].clone(), receipts[1].clone()));
        let mut g = f.clone();
        g.index = 2;
        assert!(matches!(g.decode(), Err(ReceiptError::Malformed(m)) if m.contains("at 2")));
        let mut g = f.clone();
        g.format = "other".into();
        assert!(g.decode().is_err());
        let mut g = f;
        g.receipt.insert(0, '*');
        assert!(matches!(g.decode(), Err(ReceiptError::Malformed(m)) if m.contains("base64")));
    }

    #[test]
    fn each_kind_of_tampering_is_refused_with_its_reason() {
        let ledger = SigningKey::from_bytes(&[1; 32]);
        let key = ledger.verifying_key();
        let (envs, receipts) = group(&ledger, 5, 10);
        let (env, r) = (&envs[2], &receipts[2]);
        let check = |r: &v1::Receipt, e: &v1::Envelope| verify_receipt(r, e, &key).unwrap_err();

        let other = SigningKey::from_bytes(&[2; 32]).verifying_key();
        assert!(matches!(
            verify_receipt(r, env, &other),
            Err(ReceiptError::WrongLedgerKey { .. })
        ));
        let mut x = r.clone();
        x.status = v1::ReceiptStatus::Duplicate as i32;
        assert!(matches!(check(&x, env), ReceiptError::NotAccepted(s) if s.contains("DUPLICATE")));
        let mut x = r.clone();
        x.group = None;
        assert_eq!(check(&x, env), ReceiptError::Unsigned);
        let mut x = r.clone();
        let mut sig = x.group.as_ref().unwrap().signature.to_vec();
        sig[5] ^= 1;
        x.group.as_mut().unwrap().signature = sig.into();
        assert_eq!(check(&x, env), ReceiptError::BadSignature);
        // A head re-signed by another key but claiming this ledger's key.
        let mut x = r.clone();
        let g = x.group.as_mut().unwrap();
        let mut body = v1::GroupHeadBody::decode(g.body.as_ref()).unwrap();
        body.tree_size += 1;
        g.body = body.encode_to_vec().into();
        assert_eq!(check(&x, env), ReceiptError::BadSignature);
        // The index, time or previous hash changed: the rebuilt entry is another one.
        for edit in [
            |x: &mut v1::Receipt| x.index += 1,
            |x: &mut v1::Receipt| x.received_at_ms += 1,
            |x: &mut v1::Receipt| x.prev_hash[0] ^= 1,
        ] {
            let mut x = r.clone();
            edit(&mut x);
            assert!(matches!(
                check(&x, env),
                ReceiptError::EntryHash { .. } | ReceiptError::Path(_)
            ));
        }
        // The receipt and the rebuilt entry agree but the path is another leaf's.
        let mut x = r.clone();
        x.group_path = receipts[3].group_path.clone();
        assert!(matches!(check(&x, env), ReceiptError::Path(_)));
        let mut x = r.clone();
        let mut flipped = x.group_path.to_vec();
        flipped[0] ^= 1;
        x.group_path = flipped.into();
        assert!(matches!(check(&x, env), ReceiptError::Path(_)));
        let mut x = r.clone();
        x.group_path.truncate(x.group_path.len() - 32);
        assert!(matches!(check(&x, env), ReceiptError::Path(_)));
        let mut x = r.clone();
        x.group_path.truncate(x.group_path.len() - 1);
        assert!(matches!(check(&x, env), ReceiptError::Malformed(_)));
        // Another envelope: another signer or sequence, or the same one with other bytes.
        assert!(matches!(
            check(r, &envs[3]),
            ReceiptError::OtherEvent { .. }
        ));
        let mut e = env.clone();
        e.signature[0] ^= 1;
        assert!(matches!(check(r, &e), ReceiptError::EntryHash { .. }));
        let mut x = r.clone();
        x.index = 9;
        assert!(matches!(
            check(&x, env),
            ReceiptError::OutsideGroup {
                index: 9,
                first: 10,
                size: 15
            }
        ));
        let mut x = r.clone();
        x.prev_hash.pop();
        assert!(matches!(check(&x, env), ReceiptError::Malformed(_)));
    }
}
