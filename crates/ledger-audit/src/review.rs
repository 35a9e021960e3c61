//! Reviews of findings as the audit derives them from the chain: each entry holding a
//! [`v1::FindingReviewed`] ledger record becomes a [`Review`], stored under its finding
//! ([`crate::store::AuditStore::reviews`]). A replay from genesis finds the same reviews in the
//! same entries, so a finding's status and history are derived data like its findings.

use ledger_core::record::RecordKind;
use ledger_proto::v1;
use prost::Message;

use crate::store::AuditStoreError;

/// One review: the entry that holds it, its receive time, and the record.
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub index: u64,
    pub at_ms: i64,
    pub record: v1::FindingReviewed,
}

impl Review {
    /// The review a chain entry holds, if it holds one.
    pub fn of_entry(index: u64, received_at_ms: i64, kind: i32, body: &[u8]) -> Option<Review> {
        if RecordKind::from_proto(kind) != Some(RecordKind::Ledger) {
            return None;
        }
        match ledger_core::record::decode_ledger_record(body)
            .ok()?
            .record?
        {
            v1::ledger_record_body::Record::FindingReviewed(record) => Some(Review {
                index,
                at_ms: received_at_ms,
                record,
            }),
            _ => None,
        }
    }

    /// The stored value (the key holds the finding and the index).
    pub(crate) fn encode_value(&self) -> Vec<u8> {
        let mut v = self.at_ms.to_be_bytes().to_vec();
        self.record.encode(&mut v).unwrap_or_default();
        v
    }

    /// A stored review from its key (ending with the index) and value.
    pub(crate) fn decode_stored(key: &[u8], value: &[u8]) -> Result<Review, AuditStoreError> {
        let bad = || AuditStoreError::Corrupt("a stored review does not decode".into());
        let index = key
            .get(key.len().saturating_sub(8)..)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_be_bytes)
            .ok_or_else(bad)?;
        let (at, rest) = value.split_at_checked(8).ok_or_else(bad)?;
        let at_ms = i64::from_be_bytes(at.try_into().map_err(|_| bad())?);
        let record = v1::FindingReviewed::decode(rest).map_err(|_| bad())?;
        Ok(Review {
            index,
            at_ms,
            record,
        })
    }

    /// Its proto form.
    pub fn to_proto(&self) -> v1::FindingReview {
        v1::FindingReview {
            index: self.index,
            at_ms: self.at_ms,
            record: Some(self.record.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Replayer, settings};

    /// The replayer hands out the review an entry records, with the entry's index and time, and
    /// nothing for other ledger records; a review changes no finding and no digest.
    #[test]
    fn the_replayer_hands_out_the_reviews_the_chain_records() {
        let entry = |index, record| v1::ChainEntry {
            index,
            received_at_ms: 5_000 + index as i64,
            kind: v1::RecordKind::Ledger as i32,
            body: v1::LedgerRecordBody {
                created_at_ms: 5_000,
                record: Some(record),
            }
            .encode_to_vec(),
            ..Default::default()
        };
        let reviewed = v1::FindingReviewed {
            finding_id: "Fabc".into(),
            action: v1::FindingAction::Dispute as i32,
            comment: "não é nosso".into(),
            principal: "compliance-lx".into(),
            ..Default::default()
        };
        let mut r = Replayer::new(settings(false));
        let genesis = r.apply(&entry(
            0,
            v1::ledger_record_body::Record::Genesis(v1::LedgerGenesis::default()),
        ));
        assert!(genesis.reviews.is_empty());
        let before = r.digest();
        let step = r.apply(&entry(
            1,
            v1::ledger_record_body::Record::FindingReviewed(reviewed.clone()),
        ));
        assert_eq!(
            step.reviews,
            [Review {
                index: 1,
                at_ms: 5_001,
                record: reviewed.clone()
            }]
        );
        assert!(step.findings.is_empty());
        assert_eq!(r.digest().hex(), before.hex());
        // Stored and read back.
        let stored = step.reviews[0].encode_value();
        let mut key = b"Wxxxx".to_vec();
        key.extend_from_slice(&1u64.to_be_bytes());
        assert_eq!(
            Review::decode_stored(&key, &stored).unwrap(),
            step.reviews[0]
        );
        assert!(Review::decode_stored(&key, &stored[..4]).is_err());
        // Its proto form, as the query service sends it.
        assert_eq!(
            step.reviews[0].to_proto(),
            v1::FindingReview {
                index: 1,
                at_ms: 5_001,
                record: Some(reviewed),
            }
        );
    }
}
