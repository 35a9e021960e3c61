//! Chain entries, the ledger's own signed records, and checkpoints: building them (signing) and
//! reading them back (checking).

use ed25519_dalek::{SigningKey, VerifyingKey};
use ledger_proto::v1::{self, ledger_record_body::Record};
use prost::Message;

use crate::hashing::{Hash32, entry_hash, record_hash};
use crate::signing::{
    CHECKPOINT_DOMAIN, LEDGER_RECORD_DOMAIN, parse_public_key, parse_signature, sign, verify_strict,
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
    let body = v1::LedgerRecordBody {
        created_at_ms,
        record: Some(record),
    }
    .encode_to_vec();
    let sig = sign(key, LEDGER_RECORD_DOMAIN, &body);
    (body, sig.to_bytes().to_vec())
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
    let body = v1::CheckpointBody {
        number,
        index,
        head_hash: head_hash.to_vec(),
        created_at_ms,
        ledger_public_key: key.verifying_key().as_bytes().to_vec(),
        reason: reason.to_string(),
    }
    .encode_to_vec();
    let signature = sign(key, CHECKPOINT_DOMAIN, &body).to_bytes().to_vec();
    v1::Checkpoint { body, signature }
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
}
