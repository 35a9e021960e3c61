//! Compact signed receipts on one ingest stream.
//!
//! A signed receipt carries its group's signed head (about 190 bytes) and its entry's path in
//! the group's tree (`log2(group)` hashes: 10 at peak). Successive receipts of one stream mostly
//! share both: one head per durable group, and the upper part of the path. A client that asks
//! for it (request metadata [`HEADER`]: [`COMPACT`]) gets each receipt with only what differs
//! from the previous receipt on its stream that had a head; [`Expander`] makes the full receipt
//! back, byte for byte. Clients that do not ask get full receipts, as before.
//!
//! The rule, for the receipts on one stream in order, counting only those with a head (`group`
//! set or `group_as_before`): when `group_as_before` is set, `group` is the previous one's;
//! when `path_from_before` is N, the entry's path is `group_path` followed by the last N hashes
//! of the previous one's path. docs/agents.md states it for vendors' own clients.

use prost::bytes::{Bytes, BytesMut};

use super::ReceiptError;
use crate::proto as v1;

/// The request metadata key by which an ingest client asks for compact receipts.
pub const HEADER: &str = "casino-ledger-receipts";
/// Its value.
pub const COMPACT: &str = "compact";

const HASH: usize = 32;

/// The ledger's side: what it last sent on one stream.
#[derive(Debug, Default)]
pub struct Compactor {
    head: Option<v1::SignedGroupHead>,
    path: Bytes,
}

impl Compactor {
    /// Leave out of `r` what the previous receipt with a head on this stream already gave.
    pub fn compact(&mut self, r: &mut v1::Receipt) {
        let Some(group) = r.group.take() else {
            return;
        };
        let path = r.group_path.clone();
        if self.head.as_ref() == Some(&group) {
            let n = shared_tail(&self.path, &path);
            r.group_as_before = true;
            r.group_path = path.slice(..path.len() - n * HASH);
            r.path_from_before = n as u32;
        } else {
            r.group = Some(group.clone());
            self.head = Some(group);
        }
        self.path = path;
    }
}

/// How many whole hashes `a` and `b` end with in common.
fn shared_tail(a: &[u8], b: &[u8]) -> usize {
    if !a.len().is_multiple_of(HASH) || !b.len().is_multiple_of(HASH) {
        return 0;
    }
    a.rchunks_exact(HASH)
        .zip(b.rchunks_exact(HASH))
        .take_while(|(x, y)| x == y)
        .count()
}

/// The client's side: makes each compact receipt of one stream whole again, in order.
#[derive(Debug, Default)]
pub struct Expander {
    head: Option<v1::SignedGroupHead>,
    path: Bytes,
}

impl Expander {
    /// Give `r` back the head and the path hashes the ledger left out. Refuses a receipt that
    /// refers to a previous one this stream has not had.
    pub fn expand(&mut self, r: &mut v1::Receipt) -> Result<(), ReceiptError> {
        let bad = |why: String| Err(ReceiptError::Compact(why));
        if r.group_as_before {
            if r.group.is_some() {
                return bad("group_as_before is set beside a group head".into());
            }
            let Some(head) = &self.head else {
                return bad(
                    "group_as_before, but no earlier receipt on this stream had a head".into(),
                );
            };
            r.group = Some(head.clone());
            r.group_as_before = false;
        } else if r.path_from_before > 0 {
            return bad("path_from_before without group_as_before".into());
        }
        let n = r.path_from_before as usize;
        if n > 0 {
            if n * HASH > self.path.len() {
                return bad(format!(
                    "path_from_before is {n} hashes; the previous path has {}",
                    self.path.len() / HASH
                ));
            }
            let mut path = BytesMut::with_capacity(r.group_path.len() + n * HASH);
            path.extend_from_slice(&r.group_path);
            path.extend_from_slice(&self.path[self.path.len() - n * HASH..]);
            r.group_path = path.freeze();
            r.path_from_before = 0;
        }
        if let Some(g) = &r.group {
            self.head = Some(g.clone());
            self.path = r.group_path.clone();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle::LevelTree;
    use proptest::prelude::*;

    fn head(first: u64) -> v1::SignedGroupHead {
        v1::SignedGroupHead {
            body: Bytes::from(first.to_be_bytes().to_vec()),
            signature: Bytes::from(vec![7u8; 64]),
        }
    }

    /// One stream's receipts from groups of the given sizes, its entries at the given offsets
    /// of each group (the other streams' entries between them), with full heads and paths.
    fn receipts(groups: &[(usize, Vec<usize>)]) -> Vec<v1::Receipt> {
        let mut out = Vec::new();
        let mut first = 0u64;
        for (size, mine) in groups {
            let leaves = (0..*size as u64)
                .map(|i| crate::merkle::leaf_hash(&(first + i).to_be_bytes()))
                .collect();
            let tree = LevelTree::new(leaves);
            let head = head(first);
            for &k in mine {
                let mut path = Vec::new();
                tree.write_path(k as u64, &mut path);
                out.push(v1::Receipt {
                    status: v1::ReceiptStatus::Accepted as i32,
                    index: first + k as u64,
                    group: Some(head.clone()),
                    group_path: path.into(),
                    ..Default::default()
                });
            }
            // An unsigned receipt between groups (a refusal) changes nothing.
            out.push(v1::Receipt {
                status: v1::ReceiptStatus::Rejected as i32,
                ..Default::default()
            });
            first += *size as u64;
        }
        out
    }

    fn groups() -> impl Strategy<Value = Vec<(usize, Vec<usize>)>> {
        prop::collection::vec(
            (1usize..300).prop_flat_map(|size| {
                (
                    Just(size),
                    prop::collection::btree_set(0..size, 0..size.min(40))
                        .prop_map(|s| s.into_iter().collect::<Vec<_>>()),
                )
            }),
            1..6,
        )
    }

    proptest! {
        /// Compacted on the ledger's side and expanded on the client's, every receipt is the
        /// full one again, byte for byte.
        #[test]
        fn compacting_then_expanding_gives_each_receipt_back(groups in groups()) {
            let full = receipts(&groups);
            let (mut c, mut e) = (Compactor::default(), Expander::default());
            for r in &full {
                let mut x = r.clone();
                c.compact(&mut x);
                e.expand(&mut x).unwrap();
                prop_assert_eq!(&x, r);
            }
        }
    }

    #[test]
    fn the_second_receipt_of_a_group_leaves_out_its_head_and_the_shared_part_of_its_path() {
        let full = receipts(&[(1000, vec![8, 16, 24, 999]), (3, vec![0])]);
        let mut c = Compactor::default();
        let mut x: Vec<_> = full.clone();
        for r in &mut x {
            c.compact(r);
        }
        assert!(x[0].group.is_some() && !x[0].group_as_before);
        assert_eq!(x[0].group_path.len(), 10 * HASH);
        // Leaves 8 and 16 share every level above 4 (16 = 0b10000): 10 - 5 hashes are left out.
        assert!(x[1].group.is_none() && x[1].group_as_before);
        assert_eq!(x[1].path_from_before, 5);
        assert_eq!(x[1].group_path.len(), 5 * HASH);
        // 24 = 0b11000 shares with 16 every level above 3.
        assert_eq!(x[2].path_from_before, 6);
        // Leaf 999 is in the other half of the tree from 24: nothing shared.
        assert!(x[3].group_as_before);
        assert_eq!(x[3].path_from_before, 0);
        // The refusal is untouched; the next group's head is sent whole.
        assert_eq!(x[4], full[4]);
        assert!(x[5].group.is_some() && x[5].path_from_before == 0);
    }

    #[test]
    fn a_receipt_that_refers_to_what_the_stream_never_had_is_refused() {
        let full = receipts(&[(64, vec![1, 2])]);
        let mut c = Compactor::default();
        let (mut a, mut b) = (full[0].clone(), full[1].clone());
        c.compact(&mut a);
        c.compact(&mut b);
        // The second alone, on a new stream.
        let e = Expander::default().expand(&mut b.clone()).unwrap_err();
        assert!(e.to_string().contains("no earlier receipt"), "{e}");
        let mut e2 = Expander::default();
        e2.expand(&mut a).unwrap();
        let mut both = b.clone();
        both.group = a.group.clone();
        assert!(
            e2.expand(&mut both)
                .unwrap_err()
                .to_string()
                .contains("beside")
        );
        let mut long = b.clone();
        long.path_from_before = 7;
        assert!(
            e2.expand(&mut long)
                .unwrap_err()
                .to_string()
                .contains("has 6")
        );
        let mut stray = full[2].clone();
        stray.path_from_before = 1;
        assert!(
            e2.expand(&mut stray)
                .unwrap_err()
                .to_string()
                .contains("without")
        );
    }
}
