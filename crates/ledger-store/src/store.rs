//! Opening the store, its read side, sync, checkpoints, the startup tail check and the rebuild of
//! derived state.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use ed25519_dalek::VerifyingKey;
use ledger_core::proto as v1;
use ledger_core::record::{CheckpointInfo, check_checkpoint, sign_checkpoint_with_tree};
use ledger_core::signers::PoolMembers;
use ledger_core::stored::{EntryFields, StoredEntry};
use ledger_core::verify::check_link;
use ledger_core::{ChainVerifier, GENESIS_PREV_HASH, Hash32, Signer, SignerRole, hex32};
use prost::Message;

use crate::StoreError;
use crate::append::Appender;
use crate::keyfile;
use crate::signer::{KeySource, LedgerKey, Pkcs11Signer};
use ledger_core::signing::LedgerSigner;

/// Mirror of the checkpoints, one JSON object per line, appended and fsynced with each checkpoint.
pub const CHECKPOINT_LOG: &str = "checkpoints.log";

// Key layout. sled keeps up to 17 keys in a leaf and rewrites the whole leaf every 10 updates
// of it, so keys updated with every group (head, device records, sequence runs) sort before the
// checkpoints and the entries: the leaves that hold entry chunks, and above all the newest one,
// which every group appends to, then change only when entries are added. (With the head and the
// runs after the entries, as in the first layout, they shared the newest chunks' leaf, and sled
// wrote 1.5 KB per event at 50 k/s; 1 KB with this order.)
pub(crate) const K_HEAD: &[u8] = b"@head";
pub(crate) const K_DERIVED: &[u8] = b"@derived";
pub(crate) const P_SEQ: u8 = b'A';
pub(crate) const P_DEVICE: u8 = b'B';
pub(crate) const P_CHECKPOINT: u8 = b'C';
pub(crate) const P_ENTRY: u8 = b'E';
pub(crate) const P_FINDING: u8 = b'F';
/// `G` pool id: the pool's members (an encoded `PoolConfigured`, its latest; derived).
pub(crate) const P_POOL: u8 = b'G';
/// Present once the derived state holds the pools (`G`): a store written before them rebuilds.
pub(crate) const K_POOLS_DERIVED: &[u8] = b"@pools";
/// The ledger key's rotations (derived): `n × (u64be index of the LedgerKeyRotated record, 32
/// bytes of the key it names)`, oldest first. Absent: none.
pub(crate) const K_LEDGER_KEYS: &[u8] = b"@ledger-keys";
/// The first layout's head, derived-up-to and derived prefixes (`Mhead`, `Mderived`, `S` runs,
/// `D` devices). A writer moves the head and rebuilds the derived state ([`Store::open_writer`]);
/// readers find the head under either key.
const LEGACY_K_HEAD: &[u8] = b"Mhead";
const LEGACY_K_DERIVED: &[u8] = b"Mderived";
const LEGACY_DERIVED_PREFIXES: [u8; 2] = [b'S', b'D'];

/// sled segment size (fixed when a store is created).
pub(crate) const SEGMENT_SIZE: usize = 8 << 20;

/// Most entries in one `E` chunk record.
pub(crate) const CHUNK_MAX_ENTRIES: usize = 256;
/// Most bytes in one `E` chunk record (sled writes pages above a quarter segment to blob files that
/// it never fsyncs; stay far below).
pub(crate) const CHUNK_MAX_BYTES: usize = 64 * 1024;

/// Encode consecutive entries into chunk records: `(first index, u32be len || ChainEntry, ...)`.
/// A chunk never spans two groups, so a group is written with one record per 256 entries.
pub(crate) fn encode_chunks(entries: &[v1::ChainEntry]) -> Vec<(u64, Vec<u8>)> {
    let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut count = 0;
    for e in entries {
        let len = e.encoded_len();
        let fits = matches!(out.last(), Some((_, c)) if count < CHUNK_MAX_ENTRIES && c.len() + 4 + len <= CHUNK_MAX_BYTES);
        if !fits {
            out.push((
                e.index,
                Vec::with_capacity((len + 4) * entries.len().min(CHUNK_MAX_ENTRIES)),
            ));
            count = 0;
        }
        let (_, c) = out.last_mut().expect("a chunk was just pushed");
        c.extend_from_slice(&(len as u32).to_be_bytes());
        e.encode(c).expect("a Vec grows as needed");
        count += 1;
    }
    out
}

/// The entries of a chunk whose key says it starts at `first`.
pub(crate) fn decode_chunk(first: u64, v: &[u8]) -> Result<Vec<v1::ChainEntry>, StoreError> {
    each_full_record(first, v, |bytes, bad| {
        let e =
            v1::ChainEntry::decode(bytes).map_err(|e| bad(format!("undecodable entry: {e}")))?;
        Ok((e.index, e))
    })
}

/// The Merkle leaf hashes of the entries of a chunk whose key says it starts at `first`.
pub(crate) fn leaf_hashes_of(
    first: u64,
    v: &[u8],
) -> Result<Vec<ledger_core::merkle::TreeHash>, StoreError> {
    each_full_record(first, v, |bytes, bad| {
        let view = EntryView::parse(bytes).ok_or_else(|| bad("undecodable entry".into()))?;
        Ok((view.index, ledger_core::merkle::leaf_hash(bytes)))
    })
}

/// The first byte of a *linked* chunk: its records after the first are stored without their
/// entry's `prev_hash` field, which holds the bytes the record before ends with (that entry's
/// `entry_hash`); a reader puts it back, byte for byte. A chunk of the first format starts with
/// its first record's u32be length, whose first byte is 0 (an entry is far below 16 MiB). Both
/// are read; the writer writes linked chunks (34 bytes an entry fewer, about 15%).
const LINKED: u8 = 1;
/// How a stored entry ends: its `prev_hash` (field 7) and its `entry_hash` (field 8), each a
/// key byte, a length byte (32) and 32 bytes.
const PREV_FIELD: [u8; 2] = [0x3a, 0x20];
const HASH_FIELD: [u8; 2] = [0x42, 0x20];
const PREV_LEN: usize = 2 + 32;
const TAIL_LEN: usize = PREV_LEN + 2 + 32;

/// A chunk as [`encode_chunks`] makes it, in the linked form when every record after the first
/// ends with a `prev_hash` field holding the 32 bytes the record before ends with, followed by
/// an `entry_hash` field (always so for the chain's entries as prost encodes them); else as it
/// is. [`each_full_record`] gives back the same bytes.
pub(crate) fn link_chunk(v: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 1);
    out.push(LINKED);
    let mut prev_end: Option<&[u8]> = None;
    let mut rest = v.as_slice();
    while !rest.is_empty() {
        let Some(len) = rest
            .get(..4)
            .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
            .filter(|len| rest.len() - 4 >= *len && *len >= 32)
        else {
            return v;
        };
        let rec = &rest[4..4 + len];
        match prev_end {
            None => {
                out.extend_from_slice(&rest[..4 + len]);
            }
            Some(p) => {
                let linked = len >= TAIL_LEN
                    && rec[len - TAIL_LEN..len - TAIL_LEN + 2] == PREV_FIELD
                    && &rec[len - TAIL_LEN + 2..len - 34] == p
                    && rec[len - 34..len - 32] == HASH_FIELD;
                if !linked {
                    return v;
                }
                out.extend_from_slice(&((len - PREV_LEN) as u32).to_be_bytes());
                out.extend_from_slice(&rec[..len - TAIL_LEN]);
                out.extend_from_slice(&rec[len - 34..]);
            }
        }
        prev_end = Some(&rec[len - 32..]);
        rest = &rest[4 + len..];
    }
    out
}

/// The records of a stored chunk starting at entry `first`, as stored (for a linked chunk,
/// those after the first without their `prev_hash` field), and whether it is linked.
fn stored_records(first: u64, v: &[u8]) -> Result<(bool, Vec<&[u8]>), StoreError> {
    let linked = v.first() == Some(&LINKED);
    let mut v = if linked { &v[1..] } else { v };
    let mut out = Vec::with_capacity(CHUNK_MAX_ENTRIES.min(v.len() / 4));
    while !v.is_empty() {
        let index = first + out.len() as u64;
        let len = v
            .get(..4)
            .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
            .filter(|len| v.len() - 4 >= *len)
            .filter(|len| !linked || *len >= 32 + if out.is_empty() { 0 } else { 2 })
            .ok_or_else(|| StoreError::CorruptEntry {
                index,
                detail: "truncated chunk".into(),
            })?;
        out.push(&v[4..4 + len]);
        v = &v[4 + len..];
    }
    Ok((linked, out))
}

/// Check that the record at place `n` of a chunk starting at `first` claims the index its place gives it.
fn claimed<T>(
    first: u64,
    n: usize,
    read: impl FnOnce(&dyn Fn(String) -> StoreError) -> Result<(u64, T), StoreError>,
) -> Result<T, StoreError> {
    let index = first + n as u64;
    let bad = |detail: String| StoreError::CorruptEntry { index, detail };
    let (claimed, item) = read(&bad)?;
    if claimed != index {
        return Err(bad(format!(
            "entry stored as {index} claims index {claimed}"
        )));
    }
    Ok(item)
}

/// Read each record of a chunk starting at entry `first` as stored (for a linked chunk, the
/// records after the first without their `prev_hash` field: enough for [`EntryView::parse`])
/// with `read` (which gives the index the entry claims, and what it read), checking that each
/// record is whole and claims the index its place gives it.
fn each_record<'a, T>(
    first: u64,
    v: &'a [u8],
    mut read: impl FnMut(&'a [u8], &dyn Fn(String) -> StoreError) -> Result<(u64, T), StoreError>,
) -> Result<Vec<T>, StoreError> {
    let (_, records) = stored_records(first, v)?;
    records
        .into_iter()
        .enumerate()
        .map(|(n, r)| claimed(first, n, |bad| read(r, bad)))
        .collect()
}

/// [`each_record`] with each entry's bytes as the writer encoded them (`u32be len ||
/// ChainEntry` records; a linked chunk's `prev_hash` fields put back).
fn each_full_record<T>(
    first: u64,
    v: &[u8],
    mut read: impl FnMut(&[u8], &dyn Fn(String) -> StoreError) -> Result<(u64, T), StoreError>,
) -> Result<Vec<T>, StoreError> {
    let (linked, records) = stored_records(first, v)?;
    let mut full = Vec::new();
    let mut out = Vec::with_capacity(records.len());
    for (n, r) in records.iter().enumerate() {
        let bytes: &[u8] = if !linked || n == 0 {
            r
        } else {
            // `stored_records` checked the lengths: at least 34 here, 32 before.
            let before = records[n - 1];
            full.clear();
            full.extend_from_slice(&r[..r.len() - 34]);
            full.extend_from_slice(&PREV_FIELD);
            full.extend_from_slice(&before[before.len() - 32..]);
            full.extend_from_slice(&r[r.len() - 34..]);
            &full
        };
        out.push(claimed(first, n, |bad| read(bytes, bad))?);
    }
    Ok(out)
}

/// Checks that the chunks of [`Store::chunks`], taken in order, follow one another with no
/// entry missing, and names the index where they do not.
#[derive(Debug)]
pub struct ChunkOrder {
    expected: u64,
}

impl ChunkOrder {
    /// Take the next chunk (or sled's error reading it): `read` it (decode it) and count what it
    /// gave with `len`. The chunk must start at the entry after the last one taken.
    pub fn accept<C, T>(
        &mut self,
        chunk: Result<C, sled::Error>,
        read: impl FnOnce(&C) -> Result<T, StoreError>,
        len: impl FnOnce(&T) -> usize,
    ) -> Result<T, StoreError>
    where
        C: std::borrow::Borrow<Chunk>,
    {
        let chunk = chunk.map_err(|e| self.read_error(e))?;
        let first = chunk.borrow().first;
        self.check(first)?;
        let read = read(&chunk)?;
        self.advance(first, len(&read));
        Ok(read)
    }

    /// sled could not give the next chunk.
    pub fn read_error(&self, e: sled::Error) -> StoreError {
        StoreError::CorruptEntry {
            index: self.expected,
            detail: format!("sled cannot read it: {e}"),
        }
    }

    /// The chunk that comes next starts at `first`: is that the entry expected?
    pub fn check(&self, first: u64) -> Result<(), StoreError> {
        if first != self.expected {
            return Err(StoreError::CorruptEntry {
                index: self.expected,
                detail: format!("the next stored chunk starts at entry {first} (entries missing)"),
            });
        }
        Ok(())
    }

    /// The chunk starting at `first` held `len` entries.
    pub fn advance(&mut self, first: u64, len: usize) {
        self.expected = first + len as u64;
    }

    /// The index of the entry the next chunk must start with.
    pub fn expected(&self) -> u64 {
        self.expected
    }
}

/// The entries `from..=to` that `chunks` hold, decoded one chunk at a time and checked in order
/// by `order`; after an error, nothing more.
pub(crate) fn entries_of(
    mut order: ChunkOrder,
    chunks: impl Iterator<Item = Result<Chunk, StoreError>> + Send,
    from: u64,
    to: u64,
) -> impl Iterator<Item = Result<v1::ChainEntry, StoreError>> + Send {
    let mut failed = false;
    chunks
        .map_while(move |c| {
            if failed {
                return None;
            }
            let decoded = match c {
                Err(StoreError::Sled(e)) => Err(order.read_error(e)),
                Err(e) => Err(e),
                Ok(c) => order.accept(Ok(c), |c| c.decode(), |es| es.len()),
            };
            failed = decoded.is_err();
            Some(decoded)
        })
        .flat_map(move |decoded| -> Vec<Result<v1::ChainEntry, StoreError>> {
            match decoded {
                Ok(es) => es
                    .into_iter()
                    .filter(|e| e.index >= from && e.index <= to)
                    .map(Ok)
                    .collect(),
                Err(e) => vec![Err(e)],
            }
        })
}

/// One stored chunk of consecutive entries, still encoded (see [`Store::chunks`]).
#[derive(Clone, Debug)]
pub struct Chunk {
    /// Index of its first entry.
    pub first: u64,
    pub(crate) bytes: sled::IVec,
}

impl Chunk {
    /// Its entries, decoded and checked (each claims the index its place gives it).
    pub fn decode(&self) -> Result<Vec<v1::ChainEntry>, StoreError> {
        decode_chunk(self.first, &self.bytes)
    }

    /// The Merkle leaf hashes of its entries (`ledger_core::merkle::leaf_hash` of each entry's
    /// stored bytes), checked as [`Chunk::decode`] checks the entries' places.
    pub fn leaf_hashes(&self) -> Result<Vec<ledger_core::merkle::TreeHash>, StoreError> {
        leaf_hashes_of(self.first, &self.bytes)
    }

    /// How many entries it holds (without decoding them; 0 for a damaged chunk, which its
    /// reading refuses).
    pub fn record_count(&self) -> usize {
        each_record(self.first, &self.bytes, |bytes, bad| {
            EntryView::parse(bytes)
                .map(|v| (v.index, ()))
                .ok_or_else(|| bad("undecodable entry".into()))
        })
        .map(|v| v.len())
        .unwrap_or(0)
    }

    /// Call `f` with each entry's index and stored bytes, checked as [`Chunk::decode`] checks
    /// the entries' places.
    pub fn each_entry_bytes(
        &self,
        mut f: impl FnMut(u64, &[u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        each_full_record(self.first, &self.bytes, |bytes, bad| {
            let view = EntryView::parse(bytes).ok_or_else(|| bad("undecodable entry".into()))?;
            f(view.index, bytes)?;
            Ok((view.index, ()))
        })
        .map(|_| ())
    }

    /// Its encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        self.bytes.len()
    }

    /// Its bytes as stored.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its entries read in place where their bytes allow it (see [`StoredItem`]), checked as
    /// [`Chunk::decode`] checks them, with the same errors: the same entries, field for field.
    pub fn stored_entries(&self) -> Result<Vec<StoredItem<'_>>, StoreError> {
        let (linked, records) = stored_records(self.first, &self.bytes)?;
        let mut out = Vec::with_capacity(records.len());
        let mut full = Vec::new();
        for (n, &r) in records.iter().enumerate() {
            // `stored_records` checked the lengths: at least 34 here, 32 before.
            let before = (linked && n > 0).then(|| records[n - 1]);
            let read = match before {
                None => StoredEntry::parse(r),
                Some(b) => StoredEntry::parse_without_prev_hash(r, &b[b.len() - 32..]),
            };
            out.push(claimed(self.first, n, |bad| match read {
                Some(s) => Ok((s.fields().index, StoredItem::InPlace(s))),
                // Bytes prost reads but would not write so: decoded as `decode` does.
                None => {
                    let bytes: &[u8] = match before {
                        None => r,
                        Some(b) => {
                            full.clear();
                            full.extend_from_slice(&r[..r.len() - 34]);
                            full.extend_from_slice(&PREV_FIELD);
                            full.extend_from_slice(&b[b.len() - 32..]);
                            full.extend_from_slice(&r[r.len() - 34..]);
                            &full
                        }
                    };
                    let e = v1::ChainEntry::decode(bytes)
                        .map_err(|e| bad(format!("undecodable entry: {e}")))?;
                    Ok((e.index, StoredItem::Decoded(e)))
                }
            })?);
        }
        Ok(out)
    }

    /// Its entries as [`EntryView`]s, checked as [`Chunk::decode`] checks them: the fields a
    /// reader of the events needs, the body borrowed from the chunk (no copy of the body, the
    /// signature or the hashes). Same result as `decode`, field for field.
    pub fn views(&self) -> Result<Vec<EntryView<'_>>, StoreError> {
        each_record(self.first, &self.bytes, |bytes, bad| {
            let view = match EntryView::parse(bytes) {
                Some(view) => view,
                // Anything the strict reader does not expect: prost decides (and explains).
                None => {
                    let e = v1::ChainEntry::decode(bytes)
                        .map_err(|e| bad(format!("undecodable entry: {e}")))?;
                    EntryView {
                        index: e.index,
                        received_at_ms: e.received_at_ms,
                        kind: e.kind,
                        body: std::borrow::Cow::Owned(e.body),
                    }
                }
            };
            Ok((view.index, view))
        })
    }
}

/// An entry of a stored chunk as [`Chunk::stored_entries`] gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoredItem<'a> {
    /// Read in place: its bytes are the canonical encoding of its fields (nearly always so, as
    /// the writer encodes with prost), and its Merkle leaf.
    InPlace(StoredEntry<'a>),
    /// Decoded with prost: bytes it reads but would not write so (a verifier checks them as
    /// decoded, `ChainVerifier::check_entry`).
    Decoded(v1::ChainEntry),
}

impl StoredItem<'_> {
    /// Its fields.
    pub fn fields(&self) -> EntryFields<'_> {
        match self {
            StoredItem::InPlace(s) => *s.fields(),
            StoredItem::Decoded(e) => EntryFields::of(e),
        }
    }
}

/// The fields of a stored [`v1::ChainEntry`] that a reader of the events needs (the audit), with
/// the signed body borrowed where it can be: what `Chunk::views` gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryView<'a> {
    pub index: u64,
    pub received_at_ms: i64,
    /// [`v1::RecordKind`] as stored.
    pub kind: i32,
    pub body: std::borrow::Cow<'a, [u8]>,
}

impl<'a> EntryView<'a> {
    /// Read an encoded ChainEntry's fields without decoding the rest: each field with the wire
    /// type its declaration gives, other known and unknown fields of the four plain wire types
    /// skipped, the last occurrence of a field winning (protobuf's rule). `None` for anything
    /// else (a malformed varint, a truncated field, a group, a wrong wire type), which the
    /// caller hands to prost's full decoder instead.
    pub fn parse(mut b: &'a [u8]) -> Option<EntryView<'a>> {
        fn varint(b: &mut &[u8]) -> Option<u64> {
            prost::encoding::decode_varint(b).ok()
        }
        fn take<'b>(b: &mut &'b [u8], n: usize) -> Option<&'b [u8]> {
            let (head, rest) = (b.get(..n)?, b.get(n..)?);
            *b = rest;
            Some(head)
        }
        let mut view = EntryView {
            index: 0,
            received_at_ms: 0,
            kind: 0,
            body: std::borrow::Cow::Borrowed(&[]),
        };
        while !b.is_empty() {
            let key = varint(&mut b)?;
            if key > u64::from(u32::MAX) {
                return None;
            }
            match (key >> 3, key & 7) {
                (0, _) => return None,
                (2, 0) => view.index = varint(&mut b)?,
                (3, 0) => view.received_at_ms = varint(&mut b)? as i64,
                (4, 0) => view.kind = varint(&mut b)? as i32,
                (5, 2) => {
                    let n = usize::try_from(varint(&mut b)?).ok()?;
                    view.body = std::borrow::Cow::Borrowed(take(&mut b, n)?);
                }
                (1, 0) | (9.., 0) => {
                    varint(&mut b)?;
                }
                (6..=8, 2) | (9.., 2) => {
                    let n = usize::try_from(varint(&mut b)?).ok()?;
                    take(&mut b, n)?;
                }
                (9.., 1) => {
                    take(&mut b, 8)?;
                }
                (9.., 5) => {
                    take(&mut b, 4)?;
                }
                // A known field with another wire type, a group, wire types 6 and 7.
                _ => return None,
            }
        }
        Some(view)
    }
}

/// Reads of a key, just read in a range scan, that make sled evict as the scan goes.
///
/// sled 0.34 applies page accesses to its cache late. Each access is queued in one of 256 shards
/// (by page id), and a shard's queue is applied to its LRU, which then evicts whatever exceeds
/// the shard's share of `cache_capacity`, only once 64 accesses have queued in it (sled's
/// `lru.rs`: `N_SHARDS`, `MAX_QUEUE_ITEMS`). A pass over the chain reads each page about once,
/// so during the pass nothing is evicted and every page read stays in memory: a full
/// `ListEntries` of a 4 M-entry chain took ledgerd's RSS from 45 MB to 975 MB, whatever the
/// cache size. Reading the key of the chunk just read this many more times queues that many
/// accesses in its page's shard, which fills the queue and makes the shard evict. On that chain,
/// a bare sled scan of the chunks kept 906 MB without it and 143 MB with it, and took 2.3 s
/// instead of 3.7 s (less memory to fault in). The reads hit pages already in memory.
const CACHE_SETTLING_READS: usize = 64;

/// A reading of more chunks than this (a scan, or a device's reading) settles sled's cache
/// ([`CACHE_SETTLING_READS`]) after each later chunk. Short scans, such as the live audit's
/// steps and the tail at ingest, read pages just written, whose writes keep their shards' queues
/// filling anyway, and pay nothing.
const SETTLE_AFTER_CHUNKS: usize = 8;

/// Read `key` (just read) [`CACHE_SETTLING_READS`] more times. An error here is not the
/// reading's: the reading reports its own.
fn settle_cache(tree: &sled::Tree, key: &[u8]) {
    for _ in 0..CACHE_SETTLING_READS {
        let _ = tree.get(key);
    }
}

/// Turns a scan's records into [`Chunk`]s, settling sled's cache once the scan is long.
fn chunk_of(
    tree: sled::Tree,
) -> impl FnMut(sled::Result<(sled::IVec, sled::IVec)>) -> sled::Result<Chunk> {
    let mut read = 0usize;
    move |r| {
        r.map(|(k, bytes)| {
            read += 1;
            if read > SETTLE_AFTER_CHUNKS {
                settle_cache(&tree, &k);
            }
            Chunk {
                first: u64_of(&k[1..]).unwrap_or(u64::MAX),
                bytes,
            }
        })
    }
}

/// A stored chunk's entries, decoded; each can be taken out once.
struct DecodedChunk {
    first: u64,
    entries: Vec<Option<v1::ChainEntry>>,
}

impl DecodedChunk {
    /// Entry `index`, if this chunk holds it and it was not taken yet.
    fn take(&mut self, index: u64) -> Option<v1::ChainEntry> {
        let pos = usize::try_from(index.checked_sub(self.first)?).ok()?;
        self.entries.get_mut(pos)?.take()
    }
}

/// Key of the `E` chunk record whose first entry is `index`.
/// The key of checkpoint `number` in sled.
pub(crate) fn checkpoint_key(number: u64) -> [u8; 9] {
    let mut k = [P_CHECKPOINT; 9];
    k[1..].copy_from_slice(&number.to_be_bytes());
    k
}

/// A checkpoint's line in the mirror file (JSON, with its number, entry and head hash for a
/// reader; `body`, `signature` and `note` (C2SP signed note, when the checkpoint has a tree)
/// are what counts).
pub(crate) fn checkpoint_line(cp: &v1::Checkpoint, info: &CheckpointInfo) -> String {
    let note = if cp.note.is_empty() {
        String::new()
    } else {
        format!(",\"note\":{}", serde_json::Value::String(cp.note.clone()))
    };
    format!(
        "{{\"number\":{},\"index\":{},\"head_hash\":\"{}\",\"body\":\"{}\",\"signature\":\"{}\"{note}}}\n",
        info.number,
        info.index,
        hex32(&info.head_hash),
        hex::encode(&cp.body),
        hex::encode(&cp.signature)
    )
}

/// [`Store::latest_checkpoint`]: the checkpoint and what it says, if there is one.
pub type LatestCheckpoint = Option<(v1::Checkpoint, CheckpointInfo)>;

/// The mirror file as read by [`Store::read_checkpoint_log`].
#[derive(Default)]
struct CheckpointLog {
    checkpoints: Vec<v1::Checkpoint>,
    /// Bytes up to the end of the last complete line.
    complete_bytes: u64,
    /// The last line has no newline (an append cut short).
    torn: bool,
    exists: bool,
}

pub(crate) fn entry_key(index: u64) -> [u8; 9] {
    let mut k = [P_ENTRY; 9];
    k[1..].copy_from_slice(&index.to_be_bytes());
    k
}

/// Most sequence numbers in one `S` run record (keeps values far below sled's blob threshold).
pub(crate) const SEQ_RUN_MAX: usize = 2048;

/// Length of [`seq_key`] (and of [`finding_key`]) for `device`.
pub(crate) fn seq_key_len(device: &str) -> usize {
    2 + device.len() + 8
}

/// Key of the `S` run record of `device` starting at sequence `seq`.
pub(crate) fn seq_key(device: &str, seq: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(seq_key_len(device));
    k.push(P_SEQ);
    k.push(device.len() as u8);
    k.extend_from_slice(device.as_bytes());
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

pub(crate) fn pool_key(pool: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + pool.len());
    k.push(P_POOL);
    k.extend_from_slice(pool.as_bytes());
    k
}

pub(crate) fn device_key(device: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + device.len());
    k.push(P_DEVICE);
    k.extend_from_slice(device.as_bytes());
    k
}

/// Key of the security finding about `device`'s sequence `seq`. One finding per (device,
/// sequence): the first conflicting envelope is the evidence; later ones for the same sequence
/// get the same finding's receipt, so a stolen key cannot flood the chain with findings.
pub(crate) fn finding_key(device: &str, seq: u64) -> Vec<u8> {
    let mut k = seq_key(device, seq);
    k[0] = P_FINDING;
    k
}

/// The stored form of a pool's members.
pub(crate) fn pool_record(id: &str, m: &PoolMembers) -> Vec<u8> {
    v1::PoolConfigured {
        pool_id: id.to_string(),
        member_machine_ids: m.machine_ids.clone(),
        member_table_ids: m.table_ids.clone(),
        ..Default::default()
    }
    .encode_to_vec()
}

/// The value of [`K_LEDGER_KEYS`].
pub(crate) fn rotations_value(r: &[(u64, VerifyingKey)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(r.len() * 40);
    for (i, k) in r {
        v.extend_from_slice(&i.to_be_bytes());
        v.extend_from_slice(k.as_bytes());
    }
    v
}

/// Parse a [`K_LEDGER_KEYS`] value.
pub(crate) fn rotations_of(v: &[u8]) -> Result<Vec<(u64, VerifyingKey)>, StoreError> {
    let bad = |what: &str| {
        StoreError::Corrupt(format!("ledger key rotations ({K_LEDGER_KEYS:?}): {what}"))
    };
    if !v.len().is_multiple_of(40) {
        return Err(bad("length is not a multiple of 40"));
    }
    v.chunks(40)
        .map(|c| {
            let i = u64_of(&c[..8]).ok_or_else(|| bad("index"))?;
            let k: [u8; 32] = c[8..].try_into().map_err(|_| bad("key length"))?;
            let k = VerifyingKey::from_bytes(&k).map_err(|e| bad(&e.to_string()))?;
            Ok((i, k))
        })
        .collect()
}

/// The key in force at entry `index` among `keys` (by the first entry each signs for).
pub fn ledger_key_at(keys: &[(u64, VerifyingKey)], index: u64) -> Option<VerifyingKey> {
    keys.iter()
        .take_while(|(from, _)| *from <= index)
        .last()
        .map(|(_, k)| *k)
}

pub(crate) fn u64_of(v: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(v.get(..8)?.try_into().ok()?))
}

/// A principal from ledgerd's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrincipalConfig {
    pub id: String,
    pub role: SignerRole,
    pub key: VerifyingKey,
}

/// A rotation of the ledger's key ([`Store::rotate_ledger_key`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rotation {
    /// The index of the `LedgerKeyRotated` record.
    pub index: u64,
    pub old: VerifyingKey,
    pub new: VerifyingKey,
}

/// What the writer needs at open.
#[derive(Clone, Debug)]
pub struct OpenConfig {
    /// sled's page cache size in bytes.
    pub cache_capacity_bytes: u64,
    /// Written into the genesis record of a new ledger.
    pub ledger_id: String,
    /// Operators and regulators; recorded in the chain whenever they change.
    pub principals: Vec<PrincipalConfig>,
}

/// The sled store. Cheap to share (`Arc<Store>`); reads are safe from any thread; only the
/// [`Appender`] writes entries.
pub struct Store {
    dir: PathBuf,
    pub(crate) db: sled::Db,
    pub(crate) tree: sled::Tree,
    log: Option<File>,
    synced_blobs: std::sync::Mutex<std::collections::HashSet<std::ffi::OsString>>,
    fail_syncs: std::sync::atomic::AtomicBool,
    /// Fault injection: every later write of a group fails ([`Store::inject_write_failures_for_tests`]).
    pub(crate) fail_writes: std::sync::atomic::AtomicBool,
    pub(crate) key: Option<LedgerKey>,
    /// The ledger's key in force at the head (writer only): what `key` must be to sign. Set at
    /// open, and by a rotation ([`crate::Appender::rotate_ledger_key`]), after which this
    /// process's old key signs nothing more.
    in_force: RwLock<Option<VerifyingKey>>,
    /// Public keys of the known signers, for signature checks ahead of the appender.
    pub(crate) keys: RwLock<HashMap<String, VerifyingKey>>,
    checkpoint_lock: std::sync::Mutex<()>,
    /// The latest checkpoint, once read (`None`: not read yet, or a write of one failed midway).
    /// Reading it from both lists costs time and memory in proportion to every checkpoint ever
    /// made, and a checkpoint is written while a sync holds back receipts.
    latest: std::sync::Mutex<Option<LatestCheckpoint>>,
    /// The writer's right edge of the Merkle tree, for the readers' proofs (`crate::tree`).
    pub(crate) edge: crate::tree::SharedEdge,
    /// The ledger's id (writer only): its checkpoints' origin is `casino-ledger/<id>`.
    ledger_id: std::sync::OnceLock<String>,
    /// Test hook: a group's commit stops, as a crash would, before its write number n (0 = the
    /// undo record). `u64::MAX`: never.
    #[cfg(test)]
    pub(crate) crash_before_write: std::sync::atomic::AtomicU64,
}

fn open_sled(dir: &Path, cache: u64) -> Result<sled::Db, StoreError> {
    // sled releases its file lock only when its last internal thread lets go of the file, which
    // can be a moment after the previous owner in this process dropped the Db: retry briefly.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    loop {
        match open_sled_once(dir, cache) {
            Err(StoreError::Refused(m))
                if m.contains("in use") && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            r => return r,
        }
    }
}

fn open_sled_once(dir: &Path, cache: u64) -> Result<sled::Db, StoreError> {
    // No background flusher: the writer flushes (and fsyncs) every group itself, and without the
    // flusher thread sled releases its file lock as soon as the Db is dropped.
    //
    // 8 MiB segments: sled writes any page (a leaf node holds up to 17 values) larger than a
    // quarter segment to a separate blob file that it never fsyncs. With 8 MiB segments that
    // threshold is 2 MiB, above 17 chunks of 64 KiB, so blobs do not occur; `sync` fsyncs any
    // blob anyway.
    let cfg = sled::Config::new()
        .path(dir)
        .cache_capacity(cache)
        .segment_size(SEGMENT_SIZE)
        .flush_every_ms(None);
    // sled 0.34 can panic on some corrupt files instead of returning an error: a corrupt store
    // must be reported, never crash the tool that inspects it.
    // A full disk is not damage: say so, whatever sled made of it (an I/O error, or a panic on a
    // half-written file it could not extend).
    let full = |what: String| {
        let free = crate::free_bytes(dir);
        (free.is_some_and(|f| f < SEGMENT_SIZE as u64)).then(|| StoreError::DiskFull {
            path: dir.display().to_string(),
            detail: format!("{} bytes free; {what}", free.unwrap_or_default()),
        })
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || cfg.open())) {
        Ok(Err(sled::Error::Io(e))) if crate::io_is_disk_full(&e) => Err(StoreError::DiskFull {
            path: dir.display().to_string(),
            detail: format!("sled: {e}"),
        }),
        Ok(Err(e)) if full(e.to_string()).is_some() => Err(full(e.to_string()).expect("checked")),
        Err(_) if full("sled panicked opening it".into()).is_some() => {
            Err(full("sled panicked opening it".into()).expect("checked"))
        }
        Ok(Err(e)) if e.to_string().contains("could not acquire lock") => {
            Err(StoreError::Refused(format!(
                "{} is in use by another process (a running ledgerd holds sled's lock); stop it first",
                dir.display()
            )))
        }
        Ok(r) => r.map_err(|e| {
            StoreError::Corrupt(format!(
                "sled cannot open {}: {e} (work on a copy: README, \"A store that will not open\")",
                dir.display()
            ))
        }),
        Err(_) => Err(StoreError::Corrupt(format!(
            "sled panicked opening {} (corrupt files; work on a copy: README, \"A store that will not open\")",
            dir.display()
        ))),
    }
}

impl Store {
    /// Open an existing data directory for reading (verify, export). Fails if there is no ledger
    /// there or if the store cannot be read.
    pub fn open_existing(dir: &Path) -> Result<Store, StoreError> {
        if !dir.join("db").is_file() || !dir.join("conf").is_file() {
            return Err(StoreError::Refused(format!(
                "{} holds no ledger (no sled db/conf files)",
                dir.display()
            )));
        }
        let db = open_sled(dir, 16 << 20)?;
        let tree = db.open_tree("ledger")?;
        Ok(Store {
            dir: dir.to_path_buf(),
            db,
            tree,
            log: None,
            synced_blobs: Default::default(),
            fail_syncs: Default::default(),
            fail_writes: Default::default(),
            key: None,
            in_force: RwLock::new(None),
            keys: RwLock::new(HashMap::new()),
            checkpoint_lock: std::sync::Mutex::new(()),
            latest: std::sync::Mutex::new(None),
            edge: Default::default(),
            ledger_id: Default::default(),
            #[cfg(test)]
            crash_before_write: std::sync::atomic::AtomicU64::new(u64::MAX),
        })
    }

    /// Open (or create) the ledger for writing: loads or creates the ledger key, writes the genesis
    /// of a new ledger, checks the chain's tail against the last checkpoint (refusing a mismatch),
    /// rebuilds derived state if needed, and records changed principals.
    ///
    /// Every check that can refuse an existing ledger (its genesis, its tail against the latest
    /// checkpoint) runs before anything is written: a refused store is left as it was found, so
    /// that what a damaged disk left (the entries of a group cut short after it was acknowledged,
    /// a checkpoint only one of the two lists still holds) stays there to be examined. Only then
    /// are the first key layout migrated, the checkpoint lists reconciled and an unfinished
    /// group undone.
    pub fn open_writer(
        dir: &Path,
        cfg: &OpenConfig,
    ) -> Result<(std::sync::Arc<Store>, Appender), StoreError> {
        Store::open_writer_with_key(dir, cfg, None)
    }

    /// [`Store::open_writer`] with the ledger's key in `key_file` (outside the data directory)
    /// instead of `dir/ledger.key`; created there for a new ledger only.
    pub fn open_writer_with_key(
        dir: &Path,
        cfg: &OpenConfig,
        key_file: Option<&Path>,
    ) -> Result<(std::sync::Arc<Store>, Appender), StoreError> {
        let source = match key_file {
            Some(f) => KeySource::File(f.to_path_buf()),
            None => KeySource::DataDir,
        };
        Store::open_writer_with_signer(dir, cfg, &source)
    }

    /// [`Store::open_writer`] with the ledger's key where `source` says: a key file (created
    /// for a new ledger only) or a key pair in a PKCS#11 token (never created here).
    pub fn open_writer_with_signer(
        dir: &Path,
        cfg: &OpenConfig,
        source: &KeySource,
    ) -> Result<(std::sync::Arc<Store>, Appender), StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| StoreError::io(dir, e))?;
        }
        // A new key only for a new ledger. A ledger whose key file is gone needs that key back:
        // another one cannot sign for its chain, and creating it would leave a stray key.
        let holds_a_ledger = dir.join("db").exists();
        let key = match source {
            KeySource::Pkcs11(p) => LedgerKey::Pkcs11(Pkcs11Signer::open(p)?),
            KeySource::DataDir | KeySource::File(_) => {
                let key_path = match source {
                    KeySource::File(f) => f.clone(),
                    _ => dir.join(keyfile::LEDGER_KEY_FILE),
                };
                match keyfile::load_or_create_at(&key_path, !holds_a_ledger) {
                    Err(StoreError::Key(m)) if holds_a_ledger && !key_path.exists() => {
                        return Err(StoreError::Key(format!(
                            "{m}, but this data directory holds a ledger: restore its key from your backup"
                        )));
                    }
                    r => LedgerKey::Memory(r?),
                }
            }
        };
        let db = open_sled(dir, cfg.cache_capacity_bytes)?;
        let tree = db.open_tree("ledger")?;
        // The directory entries of the files sled just created must survive a power cut too.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StoreError::io(dir, e))?;
        let log_path = dir.join("db");
        let log = File::open(&log_path).map_err(|e| StoreError::io(&log_path, e))?;
        let store = std::sync::Arc::new(Store {
            dir: dir.to_path_buf(),
            db,
            tree,
            log: Some(log),
            synced_blobs: Default::default(),
            fail_syncs: Default::default(),
            fail_writes: Default::default(),
            key: Some(key),
            in_force: RwLock::new(None),
            keys: RwLock::new(HashMap::new()),
            checkpoint_lock: std::sync::Mutex::new(()),
            latest: std::sync::Mutex::new(None),
            edge: Default::default(),
            ledger_id: Default::default(),
            #[cfg(test)]
            crash_before_write: std::sync::atomic::AtomicU64::new(u64::MAX),
        });
        let _ = store.ledger_id.set(cfg.ledger_id.clone());
        // The head in either key layout: nothing is migrated before the checks.
        let existing = store.head()?.is_some();
        if existing {
            store.check_genesis(&cfg.ledger_id)?;
            store.check_tail()?;
        }
        store.migrate_first_layout()?;
        store.reconcile_checkpoints()?;
        if let Some(r) = store.roll_back_unfinished_group()? {
            tracing::warn!(
                first = r.first,
                entries_removed = r.entries_removed,
                records_restored = r.records_restored,
                "the last group was not finished when the ledger stopped (it was never acknowledged); undone"
            );
        }
        let mut appender = if !existing {
            if store.tree.iter().next().is_some() {
                return Err(StoreError::Corrupt(
                    "entries exist but the head record is missing".into(),
                ));
            }
            if let Some(k) = store.ledger_public_key() {
                store.set_in_force(k);
            }
            let mut a = Appender::new_empty(store.clone());
            a.append_genesis(&cfg.ledger_id)?;
            store.tree.insert(K_POOLS_DERIVED, &[])?;
            a
        } else {
            let derived = store.tree.get(K_DERIVED)?.and_then(|v| u64_of(&v));
            let head = store.head()?.map(|h| h.0);
            if derived != head {
                tracing::warn!(
                    ?derived,
                    ?head,
                    "derived state is not up to date with the chain; rebuilding it"
                );
                store.rebuild_derived()?;
            } else if store.tree.get(K_POOLS_DERIVED)?.is_none() {
                tracing::warn!(
                    "derived state without pool members (an older version's); rebuilding it"
                );
                store.rebuild_derived()?;
            }
            let a = Appender::load(store.clone())?;
            store.check_tree_against_checkpoint()?;
            a
        };
        appender.declare_principals(&cfg.principals)?;
        store.sync()?;
        Ok((store, appender))
    }

    /// Rotate the ledger's key, with ledgerd stopped: open the ledger in `dir` with the key in
    /// force (`old`), check that `new` can sign (a key file is created if it does not exist; a
    /// PKCS#11 key pair must exist), then append a `LedgerKeyRotated` record naming it, signed
    /// by the old key, and sync. The ledger is then started with `new`.
    pub fn rotate_ledger_key(
        dir: &Path,
        cfg: &OpenConfig,
        old: &KeySource,
        new: &KeySource,
    ) -> Result<Rotation, StoreError> {
        if !dir.join("db").exists() {
            return Err(StoreError::Refused(format!(
                "{} holds no ledger to rotate the key of",
                dir.display()
            )));
        }
        if new == old {
            return Err(StoreError::Refused(
                "the new ledger key is where the key in force is".into(),
            ));
        }
        // The new key signs once (the token's key pair: a probe signature) before anything is
        // written; its token session is closed before the old key's is opened.
        let new_key = match new {
            KeySource::DataDir => {
                return Err(StoreError::Refused(format!(
                    "the new ledger key cannot be {} in the data directory: name a file outside it",
                    keyfile::LEDGER_KEY_FILE
                )));
            }
            KeySource::File(f) => keyfile::load_or_create_at(f, true)?.verifying_key(),
            KeySource::Pkcs11(p) => Pkcs11Signer::public_key(p)?,
        };
        let (store, mut appender) = Store::open_writer_with_signer(dir, cfg, old)?;
        let old_key = store.signing_key()?.public_key();
        let index = appender.rotate_ledger_key(new_key)?;
        Ok(Rotation {
            index,
            old: old_key,
            new: new_key,
        })
    }

    /// Open (or create) a **mirror's** store: a copy of another ledger's chain, written only by
    /// [`Appender::append_verbatim`] with entries the caller has verified, and holding no key (it
    /// signs nothing). An existing store must hold the ledger `ledger_id` whose genesis names
    /// `ledger_key`; its tail is checked against its latest checkpoint, an unfinished group
    /// undone and its derived state rebuilt if it lags, as at a writer's start. A new store is
    /// empty until the first group (the source's genesis) is appended.
    pub fn open_mirror(
        dir: &Path,
        cache_capacity_bytes: u64,
        ledger_id: &str,
        ledger_key: &VerifyingKey,
    ) -> Result<(std::sync::Arc<Store>, Appender), StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| StoreError::io(dir, e))?;
        }
        let db = open_sled(dir, cache_capacity_bytes)?;
        let tree = db.open_tree("ledger")?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StoreError::io(dir, e))?;
        let log_path = dir.join("db");
        let log = File::open(&log_path).map_err(|e| StoreError::io(&log_path, e))?;
        let store = std::sync::Arc::new(Store {
            dir: dir.to_path_buf(),
            db,
            tree,
            log: Some(log),
            synced_blobs: Default::default(),
            fail_syncs: Default::default(),
            fail_writes: Default::default(),
            key: None,
            in_force: RwLock::new(None),
            keys: RwLock::new(HashMap::new()),
            checkpoint_lock: std::sync::Mutex::new(()),
            latest: std::sync::Mutex::new(None),
            edge: Default::default(),
            ledger_id: Default::default(),
            #[cfg(test)]
            crash_before_write: std::sync::atomic::AtomicU64::new(u64::MAX),
        });
        let _ = store.ledger_id.set(ledger_id.to_string());
        let existing = store.head()?.is_some();
        if existing {
            store.check_genesis_names(ledger_id, ledger_key)?;
            store.check_tail()?;
        }
        store.reconcile_checkpoints()?;
        if let Some(r) = store.roll_back_unfinished_group()? {
            tracing::warn!(
                first = r.first,
                entries_removed = r.entries_removed,
                "the mirror's last group was not finished when it stopped; undone"
            );
        }
        let appender = if !existing {
            if store.tree.scan_prefix([P_ENTRY]).next().is_some() {
                return Err(StoreError::Corrupt(
                    "entries exist but the head record is missing".into(),
                ));
            }
            store.tree.insert(K_POOLS_DERIVED, &[])?;
            Appender::new_empty(store.clone())
        } else {
            let derived = store.tree.get(K_DERIVED)?.and_then(|v| u64_of(&v));
            if derived != store.head()?.map(|h| h.0) || store.tree.get(K_POOLS_DERIVED)?.is_none() {
                store.rebuild_derived()?;
            }
            let a = Appender::load(store.clone())?;
            store.check_tree_against_checkpoint()?;
            a
        };
        store.sync()?;
        Ok((store, appender))
    }

    /// The genesis names `ledger_id` and `key` (a mirror's check of the ledger it copies).
    fn check_genesis_names(&self, ledger_id: &str, key: &VerifyingKey) -> Result<(), StoreError> {
        let g = self.entry(0)?.ok_or_else(|| StoreError::CorruptEntry {
            index: 0,
            detail: "genesis entry missing".into(),
        })?;
        let rec = ledger_core::record::decode_ledger_record(&g.body).map_err(|e| {
            StoreError::CorruptEntry {
                index: 0,
                detail: e,
            }
        })?;
        let Some(v1::ledger_record_body::Record::Genesis(gen_rec)) = rec.record else {
            return Err(StoreError::CorruptEntry {
                index: 0,
                detail: "entry 0 is not a genesis record".into(),
            });
        };
        if gen_rec.ledger_id != ledger_id || gen_rec.ledger_public_key != key.as_bytes() {
            return Err(StoreError::Refused(format!(
                "this data directory holds ledger {:?} with key {}, not {ledger_id:?} with key {}",
                gen_rec.ledger_id,
                hex::encode(&gen_rec.ledger_public_key),
                hex::encode(key.as_bytes())
            )));
        }
        Ok(())
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The public key of the ledger's signer (writer only): the key in force.
    pub fn ledger_public_key(&self) -> Option<VerifyingKey> {
        self.key.as_ref().map(|k| k.public_key())
    }

    /// The signer, if it is the key in force: after a rotation the old key signs nothing more.
    pub(crate) fn signing_key(&self) -> Result<&LedgerKey, StoreError> {
        let key = self
            .key
            .as_ref()
            .ok_or_else(|| StoreError::Refused("read-only store".into()))?;
        let in_force = *self.in_force.read().unwrap_or_else(|e| e.into_inner());
        match in_force {
            Some(k) if k == key.public_key() => Ok(key),
            Some(k) => Err(StoreError::Refused(format!(
                "the ledger's key was rotated to {}: this process holds the key before it, which signs nothing more (restart ledgerd with the new key)",
                hex::encode(k.as_bytes())
            ))),
            None => Err(StoreError::Refused(
                "the ledger's key in force is not known yet".into(),
            )),
        }
    }

    /// The ledger's key in force from now on (the writer's, after its rotation record).
    pub(crate) fn set_in_force(&self, key: VerifyingKey) {
        *self.in_force.write().unwrap_or_else(|e| e.into_inner()) = Some(key);
    }

    /// The genesis record's key: the ledger's identity, what readers pin (it stays so after a
    /// rotation of the signing key).
    pub fn genesis_public_key(&self) -> Result<VerifyingKey, StoreError> {
        let g = self.genesis_record()?;
        ledger_core::signing::parse_public_key(&g.ledger_public_key).map_err(|e| {
            StoreError::CorruptEntry {
                index: 0,
                detail: format!("genesis ledger key: {e}"),
            }
        })
    }

    /// The ledger's keys by the first entry each signs for (the checkpoints of that entry and
    /// after, the records after it): the genesis key from 0, each rotated-to key from its
    /// `LedgerKeyRotated` record on. Only rotations the head record covers count (a group cut
    /// short by a crash is undone at the writer's start).
    pub fn ledger_keys(&self) -> Result<Vec<(u64, VerifyingKey)>, StoreError> {
        let mut keys = vec![(0, self.genesis_public_key()?)];
        let head = self.head()?.map(|h| h.0);
        if let Some(v) = self.tree.get(K_LEDGER_KEYS)? {
            keys.extend(
                rotations_of(&v)?
                    .into_iter()
                    .filter(|(i, _)| head.is_some_and(|h| *i <= h)),
            );
        }
        Ok(keys)
    }

    /// Entry 0's genesis record.
    fn genesis_record(&self) -> Result<v1::LedgerGenesis, StoreError> {
        let g = self.entry(0)?.ok_or_else(|| StoreError::CorruptEntry {
            index: 0,
            detail: "genesis entry missing".into(),
        })?;
        let rec = ledger_core::record::decode_ledger_record(&g.body).map_err(|e| {
            StoreError::CorruptEntry {
                index: 0,
                detail: e,
            }
        })?;
        let Some(v1::ledger_record_body::Record::Genesis(gen_rec)) = rec.record else {
            return Err(StoreError::CorruptEntry {
                index: 0,
                detail: "entry 0 is not a genesis record".into(),
            });
        };
        Ok(gen_rec)
    }

    /// Make everything applied so far durable: sled flush, then fsync of sled's `db` file.
    pub fn sync(&self) -> Result<(), StoreError> {
        if self.fail_syncs.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::io(
                &self.dir.join("db"),
                std::io::Error::other("injected fsync failure (test)"),
            ));
        }
        let t = std::time::Instant::now();
        self.db.flush()?;
        let flushed = t.elapsed();
        if let Some(log) = &self.log {
            // Blobs first: sled's recovery skips a log message whose blob file is missing and
            // goes on, so a blob must never be less durable than the messages after it.
            self.sync_blobs()?;
            let blobs = t.elapsed();
            log.sync_all()
                .map_err(|e| StoreError::io(&self.dir.join("db"), e))?;
            tracing::trace!(
                flush_us = flushed.as_micros() as u64,
                blobs_us = (blobs - flushed).as_micros() as u64,
                fsync_us = (t.elapsed() - blobs).as_micros() as u64,
                "store sync"
            );
        }
        Ok(())
    }

    /// Make every later `sync` fail, as a failing disk would (fault injection for tests of the
    /// "a failed fsync stops all acknowledgements" path).
    #[doc(hidden)]
    pub fn inject_sync_failures_for_tests(&self) {
        self.fail_syncs
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Make every later write of a group fail, as a failing disk would (fault injection for tests
    /// of what follows a failed append).
    #[doc(hidden)]
    pub fn inject_write_failures_for_tests(&self) {
        self.fail_writes
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Replace the bytes of the stored chunk that starts at entry `first` (or add one there),
    /// as damage to the store would (for tests of what its readers make of it).
    #[doc(hidden)]
    pub fn overwrite_chunk_for_tests(&self, first: u64, bytes: &[u8]) -> Result<(), StoreError> {
        self.tree.insert(entry_key(first), bytes)?;
        self.tree.flush()?;
        Ok(())
    }

    /// sled 0.34 writes oversized pages to `blobs/` without fsync. They should not occur (see
    /// `SEGMENT_SIZE`); if one does, fsync it and the directory before anything is acknowledged.
    fn sync_blobs(&self) -> Result<(), StoreError> {
        let dir = self.dir.join("blobs");
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StoreError::io(&dir, e)),
        };
        let mut synced = self.synced_blobs.lock().unwrap_or_else(|e| e.into_inner());
        let mut present = std::collections::HashSet::new();
        let mut new = false;
        for f in rd {
            let f = f.map_err(|e| StoreError::io(&dir, e))?;
            let name = f.file_name();
            if !synced.contains(&name) {
                let path = f.path();
                match File::open(&path) {
                    Ok(h) => h.sync_all().map_err(|e| StoreError::io(&path, e))?,
                    // sled removed it meanwhile.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(StoreError::io(&path, e)),
                }
                tracing::warn!(blob = ?name, "sled wrote a blob file; fsynced it");
                new = true;
            }
            present.insert(name);
        }
        if new {
            File::open(&dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| StoreError::io(&dir, e))?;
        }
        *synced = present;
        Ok(())
    }

    /// A store written in the first key layout: move its head to the current key and drop its
    /// derived-up-to mark, in one batch, so that [`Store::rebuild_derived`] (which also removes
    /// the old derived records) runs next. Entries and checkpoints keep their keys.
    fn migrate_first_layout(&self) -> Result<(), StoreError> {
        let Some(head) = self.tree.get(LEGACY_K_HEAD)? else {
            return Ok(());
        };
        tracing::warn!("store in the first key layout: moving its head; derived state is rebuilt");
        let mut batch = sled::Batch::default();
        batch.insert(K_HEAD, head);
        batch.remove(LEGACY_K_HEAD);
        batch.remove(LEGACY_K_DERIVED);
        batch.remove(K_DERIVED);
        self.tree.apply_batch(batch)?;
        Ok(())
    }

    /// Index and hash of the last entry.
    pub fn head(&self) -> Result<Option<(u64, Hash32)>, StoreError> {
        let v = match self.tree.get(K_HEAD)? {
            Some(v) => v,
            // A store in the first key layout, opened by a reader.
            None => match self.tree.get(LEGACY_K_HEAD)? {
                Some(v) => v,
                None => return Ok(None),
            },
        };
        if v.len() != 40 {
            return Err(StoreError::Corrupt(
                "head record has the wrong length".into(),
            ));
        }
        let index = u64_of(&v).unwrap_or_default();
        // No chain reaches that index, and every reader computes `head + 1`.
        if index == u64::MAX {
            return Err(StoreError::Corrupt(format!(
                "the head record names entry {index}, which no chain can reach"
            )));
        }
        Ok(Some((index, v[8..40].try_into().unwrap_or_default())))
    }

    /// One entry.
    pub fn entry(&self, index: u64) -> Result<Option<v1::ChainEntry>, StoreError> {
        Ok(self.chunk_holding(index)?.and_then(|mut c| c.take(index)))
    }

    /// The stored chunk that would hold entry `index` (the last one starting at or before it),
    /// decoded.
    fn chunk_holding(&self, index: u64) -> Result<Option<DecodedChunk>, StoreError> {
        let Some(r) = self.tree.range(entry_key(0)..=entry_key(index)).next_back() else {
            return Ok(None);
        };
        let (k, v) = r.map_err(|e| StoreError::CorruptEntry {
            index,
            detail: format!("sled cannot read it: {e}"),
        })?;
        let first = u64_of(&k[1..]).unwrap_or(u64::MAX);
        let entries = decode_chunk(first, &v)?.into_iter().map(Some).collect();
        Ok(Some(DecodedChunk { first, entries }))
    }

    /// Entries from `from` (inclusive) to `to` (inclusive), in order. Each item is an entry, or the
    /// error that stopped the reading (with the index where known). Decodes one chunk (at most
    /// 256 entries) at a time; a long reading settles sled's cache as it goes
    /// ([`CACHE_SETTLING_READS`]). A reader of a whole stopped ledger takes
    /// [`crate::windowed_entries`], which also closes the store now and then.
    pub fn entries(
        &self,
        from: u64,
        to: u64,
    ) -> impl Iterator<Item = Result<v1::ChainEntry, StoreError>> + Send + use<> {
        let (order, chunks) = self.chunks(from, to);
        entries_of(order, chunks.map(|c| c.map_err(StoreError::from)), from, to)
    }

    /// The stored chunks (up to 256 consecutive entries each, still encoded) that hold the entries
    /// from `from` to `to`, in order: the first may start before `from` and the last end after
    /// `to`. For readers that decode on other threads ([`Chunk::views`]): the chunks come as
    /// sled gives them, and the [`ChunkOrder`] that comes with them checks, as the reader takes
    /// them in order, that each starts where the one before it ended.
    pub fn chunks(
        &self,
        from: u64,
        to: u64,
    ) -> (
        ChunkOrder,
        impl Iterator<Item = Result<Chunk, sled::Error>> + Send + use<>,
    ) {
        // Start at the chunk holding `from`.
        let start = match self.tree.range(entry_key(0)..=entry_key(from)).next_back() {
            Some(Ok((k, _))) => u64_of(&k[1..]).unwrap_or(from),
            _ => from,
        };
        let end = to.max(start);
        let chunks = self
            .tree
            .range(entry_key(start)..=entry_key(end))
            .map(chunk_of(self.tree.clone()));
        (ChunkOrder { expected: start }, chunks)
    }

    /// What the store's records take, by kind (their keys' first byte; `@` for the single
    /// records such as the head and the undo record; `mirror alarms` for that tree): how many,
    /// and the bytes of their keys and values. This is what sled must keep; its log on disk
    /// (the `db` file) also holds older versions of pages until it reclaims their segments.
    /// Reads every record (a scan that settles sled's cache as it goes, as [`Store::chunks`]).
    pub fn live_bytes(&self) -> Result<Vec<(String, u64, u64)>, StoreError> {
        let mut by: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
        let mut chunks = 0usize;
        for r in self.tree.iter() {
            let (k, v) = r?;
            let label = match k.first() {
                Some(b'@') => "@".to_string(),
                Some(&c) if c.is_ascii_alphanumeric() => (c as char).to_string(),
                _ => "other".to_string(),
            };
            let e = by.entry(label).or_default();
            e.0 += 1;
            e.1 += (k.len() + v.len()) as u64;
            if k.first() == Some(&P_ENTRY) {
                chunks += 1;
                if chunks > SETTLE_AFTER_CHUNKS {
                    settle_cache(&self.tree, &k);
                }
            }
        }
        // Opening a tree that is not there would create it: only a mirror has this one.
        let name = crate::verbatim::ALARMS_TREE.as_bytes();
        if !self.db.tree_names().iter().any(|n| n.as_ref() == name) {
            return Ok(by.into_iter().map(|(l, (n, b))| (l, n, b)).collect());
        }
        for r in self.db.open_tree(name)?.iter() {
            let (k, v) = r?;
            let e = by.entry("mirror alarms".to_string()).or_default();
            e.0 += 1;
            e.1 += (k.len() + v.len()) as u64;
        }
        Ok(by.into_iter().map(|(l, (n, b))| (l, n, b)).collect())
    }

    /// The stored chunks after the one that starts at `after`, up to the one holding `to`, as
    /// [`Store::chunks`] gives them (for a reader that goes on where an earlier reading stopped).
    pub fn chunks_after(
        &self,
        after: u64,
        to: u64,
    ) -> impl Iterator<Item = Result<Chunk, sled::Error>> + Send + use<> {
        use std::ops::Bound::{Excluded, Included};
        // An empty range when nothing is left (sled's ranges want start <= end).
        let (lo, hi) = (entry_key(after), entry_key(to.max(after)));
        self.tree
            .range::<[u8; 9], _>((Excluded(lo), Included(hi)))
            .map(chunk_of(self.tree.clone()))
    }

    /// A device's entries from sequence `from_seq`, in order.
    pub fn device_entries(
        &self,
        device: &str,
        from_seq: u64,
    ) -> impl Iterator<Item = Result<v1::ChainEntry, StoreError>> + '_ {
        let from_seq = from_seq.max(1);
        let (mut held, mut loaded): (Option<DecodedChunk>, usize) = (None, 0);
        let start = match self.run_containing(device, from_seq) {
            Ok(Some((first, _))) => first,
            _ => from_seq,
        };
        self.tree
            .range(seq_key(device, start)..=seq_key(device, u64::MAX))
            .flat_map(move |r| -> Vec<Result<u64, StoreError>> {
                match r {
                    Err(e) => vec![Err(e.into())],
                    Ok((k, v)) => {
                        let first = u64_of(&k[k.len() - 8..]).unwrap_or_default();
                        (0..v.len() / 8)
                            .filter(|o| first + *o as u64 >= from_seq)
                            .map(|o| {
                                u64_of(&v[o * 8..])
                                    .ok_or_else(|| StoreError::Corrupt("bad sequence run".into()))
                            })
                            .collect()
                    }
                }
            })
            .map(move |i| {
                let index = i?;
                // A device's entries often share chunks (a chunk is a group's run of entries):
                // decode each chunk once, not once per entry of the device in it.
                if let Some(e) = held.as_mut().and_then(|c| c.take(index)) {
                    return Ok(e);
                }
                held = self.chunk_holding(index)?;
                loaded += 1;
                if let (Some(c), true) = (&held, loaded > SETTLE_AFTER_CHUNKS) {
                    settle_cache(&self.tree, &entry_key(c.first));
                }
                held.as_mut()
                    .and_then(|c| c.take(index))
                    .ok_or(StoreError::CorruptEntry {
                        index,
                        detail: "indexed entry is missing".into(),
                    })
            })
    }

    /// The `S` run holding `device`'s sequence `seq`: (first sequence, indices).
    fn run_containing(
        &self,
        device: &str,
        seq: u64,
    ) -> Result<Option<(u64, sled::IVec)>, StoreError> {
        let Some(r) = self
            .tree
            .range(seq_key(device, 0)..=seq_key(device, seq))
            .next_back()
        else {
            return Ok(None);
        };
        let (k, v) = r?;
        let first = u64_of(&k[k.len() - 8..])
            .ok_or_else(|| StoreError::Corrupt("bad sequence run key".into()))?;
        Ok(((seq - first) < (v.len() / 8) as u64).then_some((first, v)))
    }

    /// Index of a device's event with this sequence number.
    pub fn index_of(&self, device: &str, seq: u64) -> Result<Option<u64>, StoreError> {
        Ok(self
            .run_containing(device, seq)?
            .and_then(|(first, v)| u64_of(&v[(seq - first) as usize * 8..])))
    }

    /// A signer (registered device or principal).
    pub fn signer(&self, id: &str) -> Result<Option<Signer>, StoreError> {
        match self.tree.get(device_key(id))? {
            None => Ok(None),
            Some(v) => self.signer_record(id.as_bytes(), &v).map(Some),
        }
    }

    /// Every signer, by id.
    /// Every configured pool's members (derived).
    pub fn pools(&self) -> Result<HashMap<String, PoolMembers>, StoreError> {
        let mut out = HashMap::new();
        for r in self.tree.scan_prefix([P_POOL]) {
            let (_, v) = r?;
            let p = v1::PoolConfigured::decode(v.as_ref())
                .map_err(|e| StoreError::Corrupt(format!("a pool record: {e}")))?;
            out.insert(p.pool_id.clone(), PoolMembers::of(&p));
        }
        Ok(out)
    }

    pub fn signers(&self) -> Result<Vec<Signer>, StoreError> {
        self.signers_after(None).collect()
    }

    /// The signers whose ids sort after `after` (None: from the first), in id order (bytewise),
    /// read from the store one at a time as the iterator is read.
    pub fn signers_after(
        &self,
        after: Option<&str>,
    ) -> impl Iterator<Item = Result<Signer, StoreError>> + '_ {
        use std::ops::Bound;
        let from = match after {
            Some(id) => Bound::Excluded(device_key(id)),
            None => Bound::Included(vec![P_DEVICE]),
        };
        self.tree
            .range::<Vec<u8>, _>((from, Bound::Unbounded))
            .take_while(|r| !matches!(r, Ok((k, _)) if k.first() != Some(&P_DEVICE)))
            .map(move |r| {
                let (k, v) = r?;
                self.signer_record(&k[1..], &v)
            })
    }

    /// A signer record, with its last sequence and entry taken from its sequence runs: the record
    /// is written when the registry changes (registration, revocation, principals), the runs with
    /// every group, so a group costs one record per device fewer.
    fn signer_record(&self, id: &[u8], v: &[u8]) -> Result<Signer, StoreError> {
        let what = || String::from_utf8_lossy(id).into_owned();
        let d = v1::DeviceInfo::decode(v)
            .map_err(|e| StoreError::Corrupt(format!("device record {}: {e}", what())))?;
        let mut s = Signer::from_proto(&d)
            .map_err(|e| StoreError::Corrupt(format!("device record {}: {e}", what())))?;
        if let Some((seq, index)) = self.last_run(&s.id)?
            && seq > s.last_sequence
        {
            s.last_sequence = seq;
            s.last_index = index;
        }
        Ok(s)
    }

    /// A device's last sequence number and the entry that holds it, from its last sequence run.
    fn last_run(&self, device: &str) -> Result<Option<(u64, u64)>, StoreError> {
        let Some(r) = self
            .tree
            .range(seq_key(device, 0)..=seq_key(device, u64::MAX))
            .next_back()
        else {
            return Ok(None);
        };
        let (k, v) = r?;
        let bad = || StoreError::Corrupt(format!("bad sequence run of {device}"));
        let first = u64_of(&k[k.len() - 8..]).ok_or_else(bad)?;
        if v.is_empty() || v.len() % 8 != 0 {
            return Err(bad());
        }
        let index = u64_of(&v[v.len() - 8..]).ok_or_else(bad)?;
        Ok(Some((first + (v.len() / 8) as u64 - 1, index)))
    }

    /// Checkpoints stored in sled, oldest first.
    pub fn checkpoints(&self) -> Result<Vec<v1::Checkpoint>, StoreError> {
        let mut out = Vec::new();
        for r in self.tree.scan_prefix([P_CHECKPOINT]) {
            let (k, v) = r?;
            out.push(v1::Checkpoint::decode(v.as_ref()).map_err(|e| {
                StoreError::Corrupt(format!("checkpoint {:?}: {e}", u64_of(&k[1..])))
            })?);
        }
        Ok(out)
    }

    /// Checkpoints numbered after `after`, oldest first, read from sled one at a time (memory
    /// does not grow with their number). Serves `Checkpoints.List`; a writer's start has made
    /// sled's list and the mirror file agree (`reconcile_checkpoints`).
    pub fn checkpoints_after(
        &self,
        after: u64,
    ) -> impl Iterator<Item = Result<v1::Checkpoint, StoreError>> + use<> {
        let from = match after.checked_add(1) {
            Some(n) => checkpoint_key(n).to_vec(),
            // Nothing is numbered after u64::MAX: a range that is empty.
            None => vec![P_CHECKPOINT + 1],
        };
        self.tree.range(from..vec![P_CHECKPOINT + 1]).map(|r| {
            let (k, v) = r?;
            v1::Checkpoint::decode(v.as_ref())
                .map_err(|e| StoreError::Corrupt(format!("checkpoint {:?}: {e}", u64_of(&k[1..]))))
        })
    }

    /// Checkpoints in the mirror file, oldest first (empty if there is no file).
    pub fn checkpoint_log(&self) -> Result<Vec<v1::Checkpoint>, StoreError> {
        Ok(self.read_checkpoint_log()?.checkpoints)
    }

    /// The mirror file, read. A last line without its newline is an append a crash cut short:
    /// it is left out (sled holds that checkpoint, written and synced before the file, and
    /// [`Store::reconcile_checkpoints`] writes it again). A line's readable `number`, `index`
    /// and `head_hash` must say what its signed body says: otherwise the file is corrupt.
    fn read_checkpoint_log(&self) -> Result<CheckpointLog, StoreError> {
        let path = self.dir.join(CHECKPOINT_LOG);
        let f = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(CheckpointLog::default());
            }
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let mut log = CheckpointLog {
            exists: true,
            ..CheckpointLog::default()
        };
        let mut r = std::io::BufReader::new(f);
        let mut buf = Vec::new();
        for n in 1.. {
            buf.clear();
            let got = r
                .read_until(b'\n', &mut buf)
                .map_err(|e| StoreError::io(&path, e))?;
            if got == 0 {
                break;
            }
            if buf.last() != Some(&b'\n') {
                log.torn = true;
                break;
            }
            log.complete_bytes += got as u64;
            let bad =
                |what: &str| StoreError::Corrupt(format!("{} line {n}: {what}", path.display()));
            let line = std::str::from_utf8(&buf).map_err(|_| bad("not UTF-8"))?;
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value =
                serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
            let field = |name: &str| -> Result<Vec<u8>, StoreError> {
                hex::decode(
                    v.get(name)
                        .and_then(|x| x.as_str())
                        .ok_or_else(|| bad(&format!("missing {name}")))?,
                )
                .map_err(|e| bad(&format!("{name}: {e}")))
            };
            let note = match v.get("note") {
                None => String::new(),
                Some(n) => n
                    .as_str()
                    .ok_or_else(|| bad("note: not a string"))?
                    .to_string(),
            };
            let cp = v1::Checkpoint {
                body: field("body")?,
                signature: field("signature")?,
                note,
            };
            // The line also says, for a person reading the file, which checkpoint it is and
            // what it covers. The signed body is the evidence; a line whose readable fields say
            // something else has been edited, and a reader must not be shown the edit.
            let b = v1::CheckpointBody::decode(cp.body.as_slice())
                .map_err(|e| bad(&format!("body: not a CheckpointBody: {e}")))?;
            if let Some(x) = v.get("number")
                && x.as_u64() != Some(b.number)
            {
                return Err(bad(&format!(
                    "number {x} but the signed body says {}",
                    b.number
                )));
            }
            if let Some(x) = v.get("index")
                && x.as_u64() != Some(b.index)
            {
                return Err(bad(&format!(
                    "index {x} but the signed body says {}",
                    b.index
                )));
            }
            if v.get("head_hash").is_some() && field("head_hash")? != b.head_hash {
                return Err(bad(&format!(
                    "head_hash {} but the signed body says {}",
                    v["head_hash"],
                    hex::encode(&b.head_hash)
                )));
            }
            log.checkpoints.push(cp);
        }
        Ok(log)
    }

    /// Make sled's checkpoints and the mirror file one list again, at a writer's start.
    ///
    /// [`Store::write_checkpoint`] writes a checkpoint to sled, syncs, then appends it to the
    /// file. A crash in between leaves the file one checkpoint short (or its last line cut
    /// short, or, for the first checkpoint, no file); a disk that lost synced data can leave
    /// sled short instead. Left so, the next checkpoint would be written after a gap in one of
    /// the two, the lists would no longer agree position by position, and the ledger could not
    /// start again. So each gets what only the other has (a checkpoint copied into sled must
    /// bear this ledger's signature). Where both have one, they must agree.
    fn reconcile_checkpoints(&self) -> Result<(), StoreError> {
        let sled_cps = self.checkpoints()?;
        let log = self.read_checkpoint_log()?;
        for (i, (x, y)) in sled_cps.iter().zip(&log.checkpoints).enumerate() {
            if x != y {
                return Err(StoreError::Corrupt(format!(
                    "checkpoint #{} differs between the store and {CHECKPOINT_LOG}",
                    i + 1
                )));
            }
        }
        let path = self.dir.join(CHECKPOINT_LOG);
        if sled_cps.len() > log.checkpoints.len() || log.torn {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| StoreError::io(&path, e))?;
            // Drop a last line the crash cut short, then append what only sled has.
            let mut lines = String::new();
            for cp in &sled_cps[log.checkpoints.len()..] {
                let info = check_checkpoint(cp, None)
                    .map_err(|e| StoreError::Corrupt(format!("checkpoint in sled: {e}")))?;
                lines.push_str(&checkpoint_line(cp, &info));
            }
            f.set_len(log.complete_bytes)
                .and_then(|_| {
                    use std::io::Seek;
                    f.seek(std::io::SeekFrom::End(0))
                })
                .and_then(|_| f.write_all(lines.as_bytes()))
                .and_then(|_| f.sync_all())
                .map_err(|e| StoreError::io(&path, e))?;
            if !log.exists {
                self.sync_dir()?;
            }
            tracing::warn!(
                copied = sled_cps.len() - log.checkpoints.len(),
                cut_short_line_removed = log.torn,
                "{CHECKPOINT_LOG} was behind the store (a crash while a checkpoint was written); brought up to date"
            );
        }
        if log.checkpoints.len() > sled_cps.len() {
            let keys = self.ledger_keys()?;
            for (i, cp) in log.checkpoints.iter().enumerate().skip(sled_cps.len()) {
                let info = check_checkpoint(cp, None)
                    .map_err(|e| StoreError::Corrupt(format!("{CHECKPOINT_LOG}: {e}")))?;
                if Some(info.ledger_public_key) != ledger_key_at(&keys, info.index) {
                    return Err(StoreError::Corrupt(format!(
                        "{CHECKPOINT_LOG}: checkpoint #{} is not signed by the ledger's key in force at entry {}",
                        info.number, info.index
                    )));
                }
                if info.number != i as u64 + 1 {
                    return Err(StoreError::Corrupt(format!(
                        "{CHECKPOINT_LOG}: checkpoint #{} is numbered {}",
                        i + 1,
                        info.number
                    )));
                }
                self.tree
                    .insert(checkpoint_key(info.number), cp.encode_to_vec())?;
            }
            self.sync()?;
            tracing::warn!(
                copied = log.checkpoints.len() - sled_cps.len(),
                "the store had lost checkpoints that {CHECKPOINT_LOG} holds; copied back"
            );
        }
        Ok(())
    }

    /// Make the data directory's entries (a file just created) durable.
    fn sync_dir(&self) -> Result<(), StoreError> {
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StoreError::io(&self.dir, e))
    }

    /// Every checkpoint, from sled and from the mirror file, which must agree where both have one.
    /// The longer list wins (a store that lost checkpoints still has them in the file and vice
    /// versa), so a verifier sees every checkpoint ever made.
    pub fn all_checkpoints(&self) -> Result<Vec<v1::Checkpoint>, StoreError> {
        let a = self.checkpoints()?;
        let b = self.checkpoint_log()?;
        for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            if x != y {
                return Err(StoreError::Corrupt(format!(
                    "checkpoint #{} differs between the store and {CHECKPOINT_LOG}",
                    i + 1
                )));
            }
        }
        Ok(if a.len() >= b.len() { a } else { b })
    }

    /// The latest checkpoint, checked.
    pub fn latest_checkpoint(&self) -> Result<LatestCheckpoint, StoreError> {
        let mut cached = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(latest) = &*cached {
            return Ok(latest.clone());
        }
        let all = self.all_checkpoints()?;
        let latest = match all.last() {
            None => None,
            Some(cp) => {
                let info = check_checkpoint(cp, None)
                    .map_err(|e| StoreError::Corrupt(format!("latest checkpoint: {e}")))?;
                Some((cp.clone(), info))
            }
        };
        *cached = Some(latest.clone());
        Ok(latest)
    }

    /// Sign and store a checkpoint of `(index, hash)`, which the caller guarantees is durable.
    /// Writes it to sled and to the mirror file and makes both durable. Returns the previous one
    /// when it already covers exactly this head (no duplicate checkpoints).
    pub fn write_checkpoint(
        &self,
        index: u64,
        hash: &Hash32,
        now_ms: i64,
        reason: &str,
    ) -> Result<v1::Checkpoint, StoreError> {
        let key = self.signing_key()?;
        let _guard = self
            .checkpoint_lock
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let last = self.latest_checkpoint()?;
        let (number, created_at_ms) = match &last {
            Some((cp, info)) if info.index == index && &info.head_hash == hash => {
                return Ok(cp.clone());
            }
            Some((_, info)) => {
                if index < info.index {
                    return Err(StoreError::Refused(format!(
                        "checkpoint of entry {index} would go back on #{} (entry {})",
                        info.number, info.index
                    )));
                }
                // Never dated before the previous one unless the clock stepped back between.
                let floor = if self.checkpoint_may_go_back(info.index, index) {
                    i64::MIN
                } else {
                    info.created_at_ms
                };
                (info.number + 1, now_ms.max(floor))
            }
            None => (1, now_ms),
        };
        let origin = ledger_core::note::origin_of(
            self.ledger_id
                .get()
                .ok_or_else(|| StoreError::Refused("read-only store".into()))?,
        );
        let root = self.tree_root(index + 1)?;
        let cp = sign_checkpoint_with_tree(
            key,
            number,
            index,
            hash,
            created_at_ms,
            reason,
            &origin,
            &root,
        )
        .map_err(|e| StoreError::Refused(format!("checkpoint: {e}")))?;
        let info = check_checkpoint(&cp, None)
            .map_err(|e| StoreError::Corrupt(format!("checkpoint just signed: {e}")))?;
        self.persist_checkpoint(&cp, info)?;
        tracing::info!(number, index, head = %hex32(hash), reason, "checkpoint signed");
        Ok(cp)
    }

    /// Write checkpoint `cp` (numbered next, checked by the caller) to sled and to the mirror
    /// file, and make both durable. The caller holds `checkpoint_lock`.
    pub(crate) fn persist_checkpoint(
        &self,
        cp: &v1::Checkpoint,
        info: CheckpointInfo,
    ) -> Result<(), StoreError> {
        // Until both writes succeed, the latest is read again from the two lists.
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.tree
            .insert(checkpoint_key(info.number), cp.encode_to_vec())?;
        self.sync()?;
        // A crash from here until the file's fsync leaves the file behind sled: the next
        // writer's start brings it up to date (`reconcile_checkpoints`).
        let path = self.dir.join(CHECKPOINT_LOG);
        let created = !path.exists();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        f.write_all(checkpoint_line(cp, &info).as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| StoreError::io(&path, e))?;
        if created {
            self.sync_dir()?;
        }
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(Some((cp.clone(), info)));
        Ok(())
    }

    /// The lock checkpoint writes take (a mirror's copies too).
    pub(crate) fn checkpoint_guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.checkpoint_lock
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The genesis must name this ledger and hold the ledger key of this data directory: a
    /// configuration meant for another ledger (`ledger_id`) must not serve this one under its
    /// name.
    fn check_genesis(&self, ledger_id: &str) -> Result<(), StoreError> {
        let gen_rec = self.genesis_record()?;
        if gen_rec.ledger_id != ledger_id {
            return Err(StoreError::Refused(format!(
                "this data directory holds ledger {:?} (its genesis), but ledger_id is {ledger_id:?}",
                gen_rec.ledger_id
            )));
        }
        let keys = self.ledger_keys()?;
        let (rotated_at, in_force) = *keys.last().expect("the genesis key");
        let ours = self.ledger_public_key();
        if ours != Some(in_force) {
            let ours_hex = ours.map(|k| hex::encode(k.as_bytes())).unwrap_or_default();
            return Err(StoreError::Refused(
                match keys.iter().position(|k| Some(k.1) == ours) {
                    Some(_) => format!(
                        "the ledger's key ({}, or [ledger_key]'s token) is {ours_hex}, which entry {rotated_at} rotated to {}: configure the new key (ledger_key_file, or [ledger_key] key_label)",
                        keyfile::LEDGER_KEY_FILE,
                        hex::encode(in_force.as_bytes())
                    ),
                    None if keys.len() == 1 => format!(
                        "the ledger's key ({}, or [ledger_key]'s token) is {ours_hex}, not the key this ledger was created with (genesis key {})",
                        keyfile::LEDGER_KEY_FILE,
                        hex::encode(&gen_rec.ledger_public_key)
                    ),
                    None => format!(
                        "the ledger's key ({}, or [ledger_key]'s token) is {ours_hex}, not the key in force ({}, since entry {rotated_at}; genesis key {})",
                        keyfile::LEDGER_KEY_FILE,
                        hex::encode(in_force.as_bytes()),
                        hex::encode(&gen_rec.ledger_public_key)
                    ),
                },
            ));
        }
        self.set_in_force(in_force);
        Ok(())
    }

    /// Startup check: recompute the hash links from the last checkpoint to the head, and check the
    /// checkpoint's hash and the head record. Refuses to serve on any mismatch, and refuses
    /// entries stored after the head record unless they are an unfinished group's (which the
    /// writer undoes, after this check: see [`Store::open_writer`]). Reads only.
    pub fn check_tail(&self) -> Result<(), StoreError> {
        let (head_index, head_hash) = self
            .head()?
            .ok_or_else(|| StoreError::Corrupt("no head record".into()))?;
        let cp = self.latest_checkpoint()?;
        let (from, mut prev) = match &cp {
            Some((_, info)) => {
                let keys = self.ledger_keys()?;
                if Some(info.ledger_public_key) != ledger_key_at(&keys, info.index) {
                    return Err(StoreError::Refused(format!(
                        "checkpoint #{} is not signed by this ledger's key in force at entry {}",
                        info.number, info.index
                    )));
                }
                if info.index > head_index {
                    return Err(StoreError::Refused(format!(
                        "checkpoint #{} covers entry {} but the store ends at entry {head_index}: acknowledged entries are missing",
                        info.number, info.index
                    )));
                }
                let e = self.entry(info.index)?.ok_or(StoreError::CorruptEntry {
                    index: info.index,
                    detail: "checkpointed entry missing".into(),
                })?;
                if e.entry_hash.as_slice() != info.head_hash {
                    return Err(StoreError::Refused(format!(
                        "entry {} does not match checkpoint #{}: hash {} but the checkpoint says {}",
                        info.index,
                        info.number,
                        hex::encode(&e.entry_hash),
                        hex32(&info.head_hash)
                    )));
                }
                (info.index, GENESIS_PREV_HASH)
            }
            None => (0, GENESIS_PREV_HASH),
        };
        let mut expected = from;
        for e in self.entries(from, head_index) {
            let e = e?;
            if expected == from && from > 0 {
                prev = e
                    .prev_hash
                    .as_slice()
                    .try_into()
                    .map_err(|_| StoreError::CorruptEntry {
                        index: from,
                        detail: "bad prev_hash".into(),
                    })?;
            }
            prev = check_link(&e, expected, &prev).map_err(|v| StoreError::CorruptEntry {
                index: expected,
                detail: v.what,
            })?;
            expected += 1;
        }
        let unfinished = self.unfinished_group()?.is_some();
        if let Some(r) = self
            .tree
            .range(entry_key(head_index + 1)..=entry_key(u64::MAX))
            .next()
            .filter(|_| !unfinished)
        {
            let first = u64_of(&r?.0[1..]).unwrap_or_default();
            return Err(StoreError::CorruptEntry {
                index: first,
                detail: format!(
                    "entries are stored after the head record (entry {head_index}) and no unfinished group explains them"
                ),
            });
        }
        if expected != head_index + 1 || prev != head_hash {
            return Err(StoreError::Refused(format!(
                "the head record says entry {head_index} ({}) but the chain ends at entry {} ({})",
                hex32(&head_hash),
                expected.saturating_sub(1),
                hex32(&prev)
            )));
        }
        tracing::info!(
            from,
            head_index,
            "chain tail verified against the last checkpoint"
        );
        Ok(())
    }

    /// Rebuild the derived state (sequence runs, device records, findings' dedup keys) from the
    /// entries alone. Records of the first key layout's derived prefixes are removed too.
    pub fn rebuild_derived(&self) -> Result<(), StoreError> {
        let mut removals = sled::Batch::default();
        let prefixes = [P_SEQ, P_DEVICE, P_FINDING, P_POOL];
        for prefix in prefixes.into_iter().chain(LEGACY_DERIVED_PREFIXES) {
            for r in self.tree.scan_prefix([prefix]) {
                removals.remove(r?.0);
            }
        }
        removals.remove(K_LEDGER_KEYS);
        self.tree.apply_batch(removals)?;
        let mut v = ChainVerifier::new(None);
        let mut batch = sled::Batch::default();
        let mut runs: HashMap<String, (u64, Vec<u8>)> = HashMap::new();
        let mut n = 0u64;
        let mut last = None;
        for e in self.entries(0, u64::MAX) {
            let e = e?;
            v.check_entry(&e).map_err(|err| StoreError::CorruptEntry {
                index: e.index,
                detail: err.what,
            })?;
            match ledger_core::RecordKind::from_proto(e.kind) {
                Some(ledger_core::RecordKind::Event) => {
                    let b = v1::EventBody::decode(e.body.as_slice()).map_err(|x| {
                        StoreError::CorruptEntry {
                            index: e.index,
                            detail: x.to_string(),
                        }
                    })?;
                    match runs.get_mut(&b.device_id) {
                        Some((first, idx))
                            if *first + (idx.len() / 8) as u64 == b.sequence
                                && idx.len() / 8 < SEQ_RUN_MAX =>
                        {
                            idx.extend_from_slice(&e.index.to_be_bytes())
                        }
                        _ => {
                            if let Some((first, idx)) = runs.insert(
                                b.device_id.clone(),
                                (b.sequence, e.index.to_be_bytes().to_vec()),
                            ) {
                                batch.insert(seq_key(&b.device_id, first), idx);
                            }
                        }
                    }
                }
                _ => {
                    if let Ok(r) = ledger_core::record::decode_ledger_record(&e.body)
                        && let Some(v1::ledger_record_body::Record::SecurityFinding(f)) = r.record
                    {
                        batch.insert(
                            finding_key(&f.device_id, f.sequence),
                            &e.index.to_be_bytes(),
                        );
                    }
                }
            }
            last = Some(e.index);
            n += 1;
            if n.is_multiple_of(10_000) {
                self.tree.apply_batch(std::mem::take(&mut batch))?;
            }
        }
        for (dev, (first, idx)) in runs {
            batch.insert(seq_key(&dev, first), idx);
        }
        for s in v.signers() {
            batch.insert(device_key(&s.id), s.to_proto().encode_to_vec());
        }
        for (id, m) in v.pools() {
            batch.insert(pool_key(id), pool_record(id, m));
        }
        batch.insert(K_POOLS_DERIVED, &[]);
        if let Some(rotations) = v.ledger_keys().get(1..)
            && !rotations.is_empty()
        {
            batch.insert(K_LEDGER_KEYS, rotations_value(rotations));
        }
        if let Some(l) = last {
            batch.insert(K_DERIVED, &l.to_be_bytes());
        }
        self.tree.apply_batch(batch)?;
        self.sync()?;
        tracing::info!(entries = n, "derived state rebuilt from the chain");
        Ok(())
    }
}
