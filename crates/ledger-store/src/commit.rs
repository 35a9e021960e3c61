//! How a group reaches sled: an undo record, the entries, the derived records, and last the head
//! record, which commits the group. After a crash, the writer's next start undoes a group whose
//! head record is missing ([`Store::roll_back_unfinished_group`]).
//!
//! Why not one `apply_batch`: sled 0.34's `apply_batch` (and its transactions) take sled's
//! process-wide concurrency-control lock exclusively, and `flush` holds that lock shared for as
//! long as it waits for the disk. A batch therefore waits for the flush in progress, and the
//! next flush waits for the batch: applying one group and syncing the one before it could never
//! overlap. Plain inserts take the lock shared, so they run while a flush waits for the disk.
//!
//! Why this is still all-or-nothing: sled recovers a prefix of its log after a crash (it refuses
//! to recover a later segment whose predecessor was lost), and the appender thread's inserts
//! reach the log in the order they are made. A crash therefore leaves the groups before the last
//! head record whole, and of the group after it, the first few writes. That group was never
//! acknowledged (a receipt waits for the sync after the head record). Its undo record, written
//! first, names every key other than entries that the group writes and the value each had
//! before; the entries it wrote are those after the head. Undoing them leaves the store as it
//! was after the last whole group.

use ledger_core::Hash32;

use crate::StoreError;
use crate::store::{K_HEAD, P_ENTRY, Store, entry_key, u64_of};

/// Key of the undo record of the last group written.
pub(crate) const K_PENDING: &[u8] = b"@pending";

/// Most bytes of a key or value in an undo record (sled keys and our values are far smaller).
const MAX_UNDO_FIELD: usize = 1 << 20;

/// Most bytes of a group's undo record: the appender closes a group early rather than let its
/// undo record grow past this (`Appender::apply`), as `SEQ_RUN_MAX` cuts sequence runs.
///
/// sled writes a page larger than a quarter segment (2 MiB with 8 MiB segments, less a few
/// headers) to a blob file it never fsyncs. The undo record is one value, and its leaf holds up
/// to 16 other values, each at most an entry chunk (64 KiB), a device record (what a
/// registration's body of at most 64 KiB lists, and a few numbers) or a sequence run (16 KiB):
/// 512 KiB + 16 × 66 KiB stays under 1.6 MiB. At 143 bytes per device of a group (ids of 128
/// bytes) that is 3,666 devices, above the default `ingest.max_batch` (2,048) at any id length;
/// a group past it (a larger `max_batch`, or registry events naming large device records) is
/// written as several, still before the one sync that releases its receipts.
pub(crate) const UNDO_MAX: usize = 512 * 1024;

/// Bytes of an undo record's header (`u64be first, u32be n`).
pub(crate) const UNDO_HEADER: usize = 12;

/// Bytes one key takes in an undo record, with the length of its value before the group (`None`:
/// the key did not exist). See [`Undo::encode`].
pub(crate) fn undo_item_len(key_len: usize, before: Option<usize>) -> usize {
    4 + key_len + 1 + before.map_or(0, |l| 4 + l)
}

/// The undo record of a group: its first entry index, and the value before the group of each
/// non-entry key it writes (`None`: the key did not exist).
#[derive(Debug, PartialEq)]
pub(crate) struct Undo {
    pub first: u64,
    pub before: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Undo {
    /// `u64be first, u32be n, n × (u32be key len, key, u8 had value, [u32be len, value])`.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(12 + self.before.len() * 48);
        v.extend_from_slice(&self.first.to_be_bytes());
        v.extend_from_slice(&(self.before.len() as u32).to_be_bytes());
        for (k, old) in &self.before {
            v.extend_from_slice(&(k.len() as u32).to_be_bytes());
            v.extend_from_slice(k);
            match old {
                Some(o) => {
                    v.push(1);
                    v.extend_from_slice(&(o.len() as u32).to_be_bytes());
                    v.extend_from_slice(o);
                }
                None => v.push(0),
            }
        }
        v
    }

    pub fn decode(b: &[u8]) -> Result<Undo, StoreError> {
        let bad = |what: &str| StoreError::Corrupt(format!("undo record ({K_PENDING:?}): {what}"));
        let mut r = Reader(b);
        let first = r.u64().ok_or_else(|| bad("truncated header"))?;
        let n = r.u32().ok_or_else(|| bad("truncated header"))?;
        let mut before = Vec::new();
        for _ in 0..n {
            let k = r.field().ok_or_else(|| bad("truncated key"))?;
            let old = match r.byte() {
                Some(0) => None,
                Some(1) => Some(r.field().ok_or_else(|| bad("truncated value"))?),
                _ => return Err(bad("bad value marker")),
            };
            before.push((k, old));
        }
        if !r.0.is_empty() {
            return Err(bad("trailing bytes"));
        }
        Ok(Undo { first, before })
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).and_then(u64_of)
    }
    fn field(&mut self) -> Option<Vec<u8>> {
        let n = self.u32()? as usize;
        if n > MAX_UNDO_FIELD {
            return None;
        }
        self.take(n).map(<[u8]>::to_vec)
    }
}

/// The head record's value: u64be index, then the entry hash.
pub(crate) fn head_value(index: u64, hash: &Hash32) -> Vec<u8> {
    let mut v = Vec::with_capacity(40);
    v.extend_from_slice(&index.to_be_bytes());
    v.extend_from_slice(hash);
    v
}

/// A group rolled back at startup: its entries that had been written (`first..=last`, or none),
/// and how many other records were restored.
#[derive(Debug, PartialEq)]
pub struct RolledBack {
    pub first: u64,
    pub entries_removed: u64,
    pub records_restored: usize,
}

#[cfg(test)]
thread_local! {
    /// Test hook: this thread's commits store chunks in the first format, as a ledger written
    /// before linked chunks has them.
    pub(crate) static LEGACY_CHUNKS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Store {
    /// Write one group, in this order: the undo record, the entry chunks (`first` is the group's
    /// first index), the derived records (`derived`, in order; a later write of a key replaces an
    /// earlier one), and the head record. See the module's documentation.
    ///
    /// Returns the length of the undo record written.
    pub(crate) fn commit_group(
        &self,
        first: u64,
        chunks: Vec<(u64, Vec<u8>)>,
        derived: Vec<(Vec<u8>, Vec<u8>)>,
        head: (u64, Hash32),
    ) -> Result<usize, StoreError> {
        let mut undo = Undo {
            first,
            before: Vec::with_capacity(derived.len()),
        };
        let mut seen = std::collections::HashSet::with_capacity(derived.len());
        for (k, _) in &derived {
            if seen.insert(k.as_slice()) {
                let old = self.tree.get(k)?.map(|v| v.to_vec());
                undo.before.push((k.clone(), old));
            }
        }
        let undo = undo.encode();
        let undo_len = undo.len();
        self.put(K_PENDING, undo)?;
        for (index, chunk) in chunks {
            #[cfg(test)]
            if LEGACY_CHUNKS.with(|l| l.get()) {
                self.put(&entry_key(index), chunk)?;
                continue;
            }
            self.put(&entry_key(index), crate::store::link_chunk(chunk))?;
        }
        for (k, v) in derived {
            self.put(&k, v)?;
        }
        self.put(K_HEAD, head_value(head.0, &head.1))?;
        Ok(undo_len)
    }

    fn put(&self, key: &[u8], value: Vec<u8>) -> Result<(), StoreError> {
        if self.fail_writes.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Io {
                path: self.dir().join("db").display().to_string(),
                err: std::io::Error::other("injected write failure (test)"),
            });
        }
        #[cfg(test)]
        {
            use std::sync::atomic::Ordering::SeqCst;
            if self.crash_before_write.load(SeqCst) == 0 {
                return Err(StoreError::Refused("injected crash (test)".into()));
            }
            let _ = self
                .crash_before_write
                .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1));
        }
        self.tree.insert(key, value)?;
        Ok(())
    }

    /// The first index of a group whose writing stopped before its head record (a writer
    /// crashed), if there is one. Its writes are undone at the writer's next start; until then,
    /// readers take the chain up to the head record.
    pub fn unfinished_group(&self) -> Result<Option<u64>, StoreError> {
        Ok(self.unfinished_undo()?.map(|u| u.first))
    }

    /// The undo record of an unfinished group (see [`Store::unfinished_group`]).
    fn unfinished_undo(&self) -> Result<Option<Undo>, StoreError> {
        let Some(v) = self.tree.get(K_PENDING)? else {
            return Ok(None);
        };
        let undo = Undo::decode(&v)?;
        let next = self.head()?.map_or(0, |(i, _)| i + 1);
        if undo.first < next {
            return Ok(None);
        }
        if undo.first > next {
            return Err(StoreError::Corrupt(format!(
                "the undo record is for a group from entry {} but the head record is at entry {}",
                undo.first,
                next as i128 - 1
            )));
        }
        Ok(Some(undo))
    }

    /// Undo a group whose head record was never written (see the module's documentation): remove
    /// its entries (every entry chunk after the head) and restore each record it changed. Synced
    /// before it returns. `None` if the last group is whole.
    pub(crate) fn roll_back_unfinished_group(&self) -> Result<Option<RolledBack>, StoreError> {
        let Some(undo) = self.unfinished_undo()? else {
            return Ok(None);
        };
        let first = undo.first;
        let mut entries_removed = 0u64;
        for r in self.tree.range(entry_key(first)..=entry_key(u64::MAX)) {
            let (k, chunk) = r?;
            debug_assert_eq!(k[0], P_ENTRY);
            entries_removed += crate::store::decode_chunk(u64_of(&k[1..]).unwrap_or(first), &chunk)
                .map_or(0, |es| es.len() as u64);
            self.tree.remove(k)?;
        }
        for (k, old) in undo.before.iter().rev() {
            match old {
                Some(v) => self.tree.insert(k.as_slice(), v.as_slice())?,
                None => self.tree.remove(k.as_slice())?,
            };
        }
        self.tree.remove(K_PENDING)?;
        self.sync()?;
        Ok(Some(RolledBack {
            first,
            entries_removed,
            records_restored: undo.before.len(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undo_record_round_trips_and_refuses_damage() {
        let u = Undo {
            first: 42,
            before: vec![
                (b"Afoo".to_vec(), None),
                (b"Bdev".to_vec(), Some(vec![1, 2, 3])),
                (b"@derived".to_vec(), Some(41u64.to_be_bytes().to_vec())),
            ],
        };
        let b = u.encode();
        assert_eq!(Undo::decode(&b).unwrap(), u);
        for cut in 0..b.len() {
            assert!(Undo::decode(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = b.clone();
        extra.push(0);
        assert!(Undo::decode(&extra).is_err());
        let mut marker = b.clone();
        marker[12 + 4 + 4] = 7; // the first item's value marker
        assert!(Undo::decode(&marker).is_err());
        let mut huge = b.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(Undo::decode(&huge).is_err());
        // The lengths the appender counts a group's undo record by.
        let counted: usize = u
            .before
            .iter()
            .map(|(k, old)| undo_item_len(k.len(), old.as_ref().map(Vec::len)))
            .sum();
        assert_eq!(b.len(), UNDO_HEADER + counted);
    }
}
