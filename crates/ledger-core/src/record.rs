//! Chain entries, the ledger's own signed records, and checkpoints: building them (signing) and
//! reading them back (checking).

use ed25519_dalek::{SigningKey, VerifyingKey};
use ledger_proto::v1::{self, ledger_record_body::Record};
use prost::Message;

use crate::hashing::{Hash32, entry_hash, record_hash};
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

/// A checked checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub number: u64,
    pub index: u64,
    pub head_hash: Hash32,
    pub created_at_ms: i64,
    pub ledger_public_key: VerifyingKey,
    pub reason: String,
}

/// Sign a checkpoint.
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
    }
    .encode_to_vec();
    let signature = try_sign(key, CHECKPOINT_DOMAIN, &body)?.to_bytes().to_vec();
    Ok(v1::Checkpoint { body, signature })
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
    Ok(CheckpointInfo {
        number: b.number,
        index: b.index,
        head_hash,
        created_at_ms: b.created_at_ms,
        ledger_public_key: key,
        reason: b.reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
