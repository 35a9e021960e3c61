//! A chain entry read in place from its stored bytes, for [`crate::ChainVerifier::check_stored`].
//!
//! The verifier of decoded entries ([`crate::ChainVerifier::check_entry`]) takes the Merkle
//! leaf over the entry encoded again. [`StoredEntry`] reads the bytes without decoding them into
//! a [`v1::ChainEntry`] (no copy of the body, signature or hashes), and only when they are the
//! *canonical* encoding: exactly the bytes prost encodes the fields it reads back to (fields in
//! order, each once and only when not its default, shortest varints, a `uint32` or `int32` that
//! fits). Those bytes are then the leaf, with nothing encoded again, and the verdict is the one
//! `check_entry` gives on the decoded entry. Anything else is for the caller to decode with
//! prost and hand to `check_entry`.

use sha2::{Digest, Sha256};

use ledger_proto::v1;

use crate::merkle::TreeHash;

/// The key byte and length byte of a stored `prev_hash` (field 7) of 32 bytes.
const PREV_FIELD: [u8; 2] = [0x3a, 0x20];
/// The same for `entry_hash` (field 8).
const HASH_FIELD: [u8; 2] = [0x42, 0x20];

/// A chain entry's fields, borrowed from wherever they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryFields<'a> {
    pub format: u32,
    pub index: u64,
    pub received_at_ms: i64,
    /// [`v1::RecordKind`] as stored.
    pub kind: i32,
    pub body: &'a [u8],
    pub signature: &'a [u8],
    pub prev_hash: &'a [u8],
    pub entry_hash: &'a [u8],
}

impl<'a> EntryFields<'a> {
    /// A decoded entry's fields.
    pub fn of(e: &'a v1::ChainEntry) -> EntryFields<'a> {
        EntryFields {
            format: e.format,
            index: e.index,
            received_at_ms: e.received_at_ms,
            kind: e.kind,
            body: &e.body,
            signature: &e.signature,
            prev_hash: &e.prev_hash,
            entry_hash: &e.entry_hash,
        }
    }

    /// The decoded entry with these fields.
    pub fn to_entry(&self) -> v1::ChainEntry {
        v1::ChainEntry {
            format: self.format,
            index: self.index,
            received_at_ms: self.received_at_ms,
            kind: self.kind,
            body: self.body.to_vec(),
            signature: self.signature.to_vec(),
            prev_hash: self.prev_hash.to_vec(),
            entry_hash: self.entry_hash.to_vec(),
        }
    }
}

/// An entry read in place from its canonical encoding (see the module's documentation), and the
/// bytes of that encoding, which are its Merkle leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredEntry<'a> {
    fields: EntryFields<'a>,
    /// The encoding is `head`, then (when the entry was stored without its `prev_hash` field)
    /// that field with `fields.prev_hash`, then `tail`.
    head: &'a [u8],
    without_prev: bool,
    tail: &'a [u8],
}

impl<'a> StoredEntry<'a> {
    /// `bytes` read in place, if they are the canonical encoding of a `ChainEntry`.
    pub fn parse(bytes: &'a [u8]) -> Option<StoredEntry<'a>> {
        let mut fields = EntryFields::default();
        read_fields(bytes, 8, &mut fields)?;
        Some(StoredEntry {
            fields,
            head: bytes,
            without_prev: false,
            tail: &[],
        })
    }

    /// `stored` read in place, if it is the canonical encoding of a `ChainEntry` whose
    /// `prev_hash` is the 32 bytes `prev_hash`, stored without that field: its fields 1 to 6,
    /// then its `entry_hash` of 32 bytes. The entry's encoding is then `stored` with the
    /// `prev_hash` field put back before the `entry_hash` field (how a linked chunk of
    /// `ledger-store` stores its entries after the first).
    pub fn parse_without_prev_hash(
        stored: &'a [u8],
        prev_hash: &'a [u8],
    ) -> Option<StoredEntry<'a>> {
        if prev_hash.len() != 32 || stored.len() < 34 {
            return None;
        }
        let (head, tail) = stored.split_at(stored.len() - 34);
        if tail[..2] != HASH_FIELD {
            return None;
        }
        let mut fields = EntryFields::default();
        read_fields(head, 6, &mut fields)?;
        fields.prev_hash = prev_hash;
        fields.entry_hash = &tail[2..];
        Some(StoredEntry {
            fields,
            head,
            without_prev: true,
            tail,
        })
    }

    pub fn fields(&self) -> &EntryFields<'a> {
        &self.fields
    }

    /// `SHA-256(0x00 ‖ encoding)`: [`crate::merkle::leaf_hash`] of its encoding, hashed where
    /// its pieces are.
    pub fn leaf_hash(&self) -> TreeHash {
        let mut h = Sha256::new();
        h.update([0u8]);
        h.update(self.head);
        if self.without_prev {
            h.update(PREV_FIELD);
            h.update(self.fields.prev_hash);
        }
        h.update(self.tail);
        h.finalize().into()
    }

    /// Its encoding, copied into one buffer (for tests and diagnostics).
    pub fn encoded(&self) -> Vec<u8> {
        let mut v = self.head.to_vec();
        if self.without_prev {
            v.extend_from_slice(&PREV_FIELD);
            v.extend_from_slice(self.fields.prev_hash);
        }
        v.extend_from_slice(self.tail);
        v
    }
}

/// A varint in its shortest form (the only one prost writes): no final group of zeros after the
/// first byte, at most ten bytes, the tenth holding one bit.
fn canonical_varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let byte = *b.get(i)?;
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            if (byte == 0 && i > 0) || (i == 9 && byte > 1) {
                return None;
            }
            *b = &b[i + 1..];
            return Some(v);
        }
    }
    None
}

/// Read the fields of a canonical `ChainEntry` encoding numbered at most `last_field`, into
/// `f`. Each field's key is one byte (fields 1 to 8), in increasing order, each field once, with
/// the wire type its declaration gives and a value other than its default (prost leaves those
/// out).
fn read_fields<'a>(mut b: &'a [u8], last_field: u8, f: &mut EntryFields<'a>) -> Option<()> {
    let mut previous = 0u8;
    while let Some((&key, rest)) = b.split_first() {
        b = rest;
        let field = key >> 3;
        if field <= previous || field > last_field {
            // Also any key of more than one byte (its first byte reads as field 16 or more).
            return None;
        }
        previous = field;
        match (field, key & 7) {
            (1..=4, 0) => {
                let v = canonical_varint(&mut b)?;
                if v == 0 {
                    return None;
                }
                match field {
                    1 => f.format = u32::try_from(v).ok()?,
                    2 => f.index = v,
                    3 => f.received_at_ms = v as i64,
                    // prost writes an int32 sign-extended to 64 bits.
                    _ => f.kind = i32::try_from(v as i64).ok()?,
                }
            }
            (5..=8, 2) => {
                let n = usize::try_from(canonical_varint(&mut b)?).ok()?;
                if n == 0 || n > b.len() {
                    return None;
                }
                let (value, rest) = b.split_at(n);
                b = rest;
                match field {
                    5 => f.body = value,
                    6 => f.signature = value,
                    7 => f.prev_hash = value,
                    _ => f.entry_hash = value,
                }
            }
            _ => return None,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use prost::Message;

    fn entry() -> impl Strategy<Value = v1::ChainEntry> {
        (
            prop_oneof![Just(0u32), Just(1), any::<u32>()],
            prop_oneof![Just(0u64), 1..1000u64, any::<u64>()],
            prop_oneof![Just(0i64), any::<i64>()],
            prop_oneof![Just(0i32), 1..3i32, any::<i32>()],
            proptest::collection::vec(any::<u8>(), 0..300),
            proptest::collection::vec(any::<u8>(), 0..70),
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 32..=32),
                proptest::collection::vec(any::<u8>(), 0..40)
            ],
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 32..=32),
                proptest::collection::vec(any::<u8>(), 0..40)
            ],
        )
            .prop_map(
                |(format, index, at, kind, body, signature, prev_hash, entry_hash)| {
                    v1::ChainEntry {
                        format,
                        index,
                        received_at_ms: at,
                        kind,
                        body,
                        signature,
                        prev_hash,
                        entry_hash,
                    }
                },
            )
    }

    /// What the in-place reading must agree with: when it reads `bytes`, prost decodes them to
    /// the same fields and encodes those back to the same bytes (the leaf).
    fn agrees(bytes: &[u8], read: Option<StoredEntry<'_>>) -> Result<(), TestCaseError> {
        if let Some(s) = read {
            let e = v1::ChainEntry::decode(bytes);
            prop_assert!(e.is_ok(), "prost refuses what was read in place: {e:?}");
            let e = e.unwrap();
            prop_assert_eq!(s.fields(), &EntryFields::of(&e));
            prop_assert_eq!(&s.fields().to_entry(), &e);
            prop_assert_eq!(s.encoded(), e.encode_to_vec());
            prop_assert_eq!(s.encoded(), bytes);
            prop_assert_eq!(s.leaf_hash(), crate::merkle::leaf_hash(&e.encode_to_vec()));
        }
        Ok(())
    }

    /// The linked form of an encoding: without its `prev_hash` field, when it ends with that
    /// field (32 bytes) and an `entry_hash` field (32 bytes).
    fn unlinked(bytes: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
        let n = bytes.len();
        if n < 68 || bytes[n - 68..n - 66] != PREV_FIELD {
            return None;
        }
        let mut stored = bytes[..n - 68].to_vec();
        stored.extend_from_slice(&bytes[n - 34..]);
        Some((stored, bytes[n - 66..n - 34].to_vec()))
    }

    proptest! {
        #[test]
        fn reads_prosts_own_encodings_in_place(e in entry()) {
            let bytes = e.encode_to_vec();
            let s = StoredEntry::parse(&bytes);
            prop_assert!(s.is_some(), "prost's encoding is canonical");
            agrees(&bytes, s)?;
            if e.prev_hash.len() == 32 && e.entry_hash.len() == 32 {
                let (stored, prev) = unlinked(&bytes).expect("ends with both hashes");
                let s = StoredEntry::parse_without_prev_hash(&stored, &prev);
                prop_assert!(s.is_some());
                agrees(&bytes, s)?;
            }
        }

        #[test]
        fn reads_only_what_prost_encodes_back_to_the_same_bytes(
            e in entry(),
            cut in any::<prop::sample::Index>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            junk in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let mut bytes = e.encode_to_vec();
            for (at, x) in flips {
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    bytes[i] ^= x;
                }
            }
            agrees(&bytes, StoredEntry::parse(&bytes))?;
            if let Some((stored, prev)) = unlinked(&bytes) {
                agrees(&bytes, StoredEntry::parse_without_prev_hash(&stored, &prev))?;
            }
            if !bytes.is_empty() {
                bytes.truncate(cut.index(bytes.len()));
                agrees(&bytes, StoredEntry::parse(&bytes))?;
            }
            bytes.extend_from_slice(&junk);
            agrees(&bytes, StoredEntry::parse(&bytes))?;
            agrees(&junk, StoredEntry::parse(&junk))?;
        }
    }

    #[test]
    fn encodings_prost_would_not_write_are_left_to_it() {
        let e = v1::ChainEntry {
            format: 1,
            index: 7,
            kind: -2,
            body: vec![1, 2],
            prev_hash: vec![3; 32],
            entry_hash: vec![4; 32],
            ..Default::default()
        };
        let b = e.encode_to_vec();
        assert!(StoredEntry::parse(&b).is_some());
        let refused = |b: &[u8]| {
            assert!(StoredEntry::parse(b).is_none(), "{b:?}");
            // prost reads each of them, and encodes it back otherwise.
            let d = v1::ChainEntry::decode(b).unwrap();
            assert_ne!(d.encode_to_vec(), b);
        };
        // A field again (the last wins), fields out of order, a default written out.
        refused(&[b.as_slice(), &[0x10, 9]].concat());
        refused(&[&[0x10, 7][..], &[0x08, 1]].concat());
        refused(&[&[0x18, 0][..], &b[..]].concat());
        refused(&[0x2a, 0]);
        // An unknown field; a key of two bytes; a varint longer than it needs.
        refused(&[b.as_slice(), &[0x50, 1]].concat());
        refused(&[0x90, 0x00, 7]);
        refused(&[0x10, 0x87, 0x00]);
        // A format beyond u32 and a kind beyond i32, which prost truncates.
        refused(&[0x08, 0x80, 0x80, 0x80, 0x80, 0x10]);
        refused(&[0x20, 0x80, 0x80, 0x80, 0x80, 0x10]);
        // A wrong wire type is an error for prost too.
        assert!(StoredEntry::parse(&[0x28, 1]).is_none());
        assert!(v1::ChainEntry::decode(&[0x28u8, 1][..]).is_err());
        // Without its prev_hash: only fields 1 to 6 before the entry_hash.
        let n = b.len();
        let stored = [&b[..n - 68], &b[n - 34..]].concat();
        let s = StoredEntry::parse_without_prev_hash(&stored, &[3; 32]).unwrap();
        assert_eq!(s.encoded(), b);
        assert!(StoredEntry::parse_without_prev_hash(&stored, &[3; 31]).is_none());
        assert!(StoredEntry::parse_without_prev_hash(&b, &[3; 32]).is_none());
    }
}
