//! The Merkle tree over the entries (`ledger_core::merkle`), kept in the store.
//!
//! Stored: the full tiles of levels 1 and up (`T` ‖ u8 level ‖ u64be tile number → 256 hashes,
//! each the root of an aligned subtree of `256^level` entries), written by the group that
//! completes them, as derived records of the group (so its undo record removes them if the group
//! is cut short by a crash: all or nothing with the entries). Level 0 (leaf hashes) is not
//! stored: a leaf hash is recomputed from the entry's stored bytes, 32 bytes an entry saved.
//! Held in memory by the writer: the hashes of the incomplete tile of every level (the right
//! edge of the tree), published after each group for the readers' proofs, and rebuilt at start
//! from the stored tiles and the entries after the last full level-1 tile (at most 65,535; a
//! ledger written before the tree has all its tiles built at its first start).
//!
//! A reader without the writer's right edge (another process reading a stopped ledger) computes
//! a missing tile's hashes from the level below; the checker of the tree, `ledgerctl verify`,
//! uses none of this: it rebuilds the root from the entries.

use std::sync::{Arc, RwLock};

use ledger_core::merkle::{self, Hashes, TILE_HEIGHT, TILE_WIDTH, TreeHash};
use ledger_core::proto as v1;

use crate::StoreError;
use crate::store::Store;

/// Key prefix of the stored tiles; after the entries (`E`) and the findings (`F`): tiles are
/// written once per 65,536 entries, never with every group.
pub(crate) const P_TILE: u8 = b'T';

/// Key prefix of witnesses' cosignatures of checkpoints (`W` ‖ u64be number ‖ witness name ‖
/// `+` ‖ key id → key id ‖ signature): one line per witness and key (a witness may cosign with
/// an ed25519 and an ML-DSA-44 key), attached to a checkpoint's note when it is read, the
/// checkpoint itself unchanged. Stores written before ML-DSA-44 keyed a line by `W` ‖ number ‖
/// name alone; those still read (a name never holds a '+').
pub(crate) const P_COSIGNATURE: u8 = b'W';

fn cosignature_prefix(number: u64) -> Vec<u8> {
    let mut k = vec![P_COSIGNATURE];
    k.extend_from_slice(&number.to_be_bytes());
    k
}

fn cosignature_key(number: u64, name: &str, key_id: &[u8; 4]) -> Vec<u8> {
    let mut k = cosignature_prefix(number);
    k.extend_from_slice(name.as_bytes());
    k.push(b'+');
    k.extend_from_slice(key_id);
    k
}

pub(crate) fn tile_key(level: u32, n: u64) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[0] = P_TILE;
    k[1] = level as u8;
    k[2..].copy_from_slice(&n.to_be_bytes());
    k
}

fn encode_tile(hashes: &[TreeHash]) -> Vec<u8> {
    hashes.concat()
}

fn decode_tile(level: u32, n: u64, v: &[u8]) -> Result<Vec<TreeHash>, StoreError> {
    if v.len() != TILE_WIDTH as usize * 32 {
        return Err(StoreError::Corrupt(format!(
            "tree tile {level}/{n} holds {} bytes, not {}",
            v.len(),
            TILE_WIDTH * 32
        )));
    }
    Ok(v.chunks_exact(32)
        .map(|c| c.try_into().expect("32 bytes"))
        .collect())
}

/// The right edge of the tree: for each level, the hashes of its incomplete tile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edge {
    /// Entries in the tree.
    pub size: u64,
    /// `partial[L]`: the complete hashes of level L in the tile of level L being filled
    /// (fewer than 256).
    partial: Vec<Vec<TreeHash>>,
}

impl Edge {
    /// Append leaf hashes; returns the full tiles of levels ≥ 1 they complete, to be stored.
    pub(crate) fn extend(&mut self, leaves: &[TreeHash]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut tiles = Vec::new();
        for leaf in leaves {
            self.size += 1;
            let mut h = *leaf;
            let mut level = 0u32;
            loop {
                if self.partial.len() <= level as usize {
                    self.partial.push(Vec::new());
                }
                let p = &mut self.partial[level as usize];
                p.push(h);
                if p.len() < TILE_WIDTH as usize {
                    break;
                }
                let full = std::mem::take(p);
                h = merkle::root_of(&full);
                if level >= 1 {
                    // The number of this tile: hashes of level L before it, over 256.
                    let n = (self.size >> (TILE_HEIGHT * (level + 1))) - 1;
                    tiles.push((tile_key(level, n).to_vec(), encode_tile(&full)));
                }
                level += 1;
            }
        }
        tiles
    }

    /// The root of the tree (RFC 9162 MTH of all `size` leaves): the edge's hashes are the
    /// tree's largest complete subtrees, left to right from the top level down, so the root
    /// folds them from the right, smallest first. (The writer keeps a [`Edge::frontier`]
    /// instead; this is the tests' reference.)
    #[cfg(test)]
    pub fn root(&self) -> TreeHash {
        let mut acc: Option<TreeHash> = None;
        for level in &self.partial {
            let mut end = level.len();
            for bit in 0..TILE_HEIGHT {
                if level.len() & (1 << bit) == 0 {
                    continue;
                }
                let start = end - (1 << bit);
                let part = merkle::root_of(&level[start..end]);
                acc = Some(match acc {
                    None => part,
                    Some(right) => merkle::node_hash(&part, &right),
                });
                end = start;
            }
        }
        acc.unwrap_or_else(merkle::empty_root)
    }

    /// The tree's frontier ([`merkle::Frontier`]: its perfect subtrees' roots, largest first),
    /// so that the root can follow the entries for O(log n) hashes a root.
    pub fn frontier(&self) -> merkle::Frontier {
        let mut peaks = Vec::new();
        for level in self.partial.iter().rev() {
            let mut start = 0;
            for bit in (0..TILE_HEIGHT).rev() {
                if level.len() & (1 << bit) != 0 {
                    peaks.push(merkle::root_of(&level[start..start + (1 << bit)]));
                    start += 1 << bit;
                }
            }
        }
        merkle::Frontier::from_peaks(self.size, peaks).expect("one peak per set bit of the size")
    }

    /// The number of the incomplete tile of `level`.
    fn partial_tile(&self, level: u32) -> u64 {
        self.size >> (TILE_HEIGHT * (level + 1))
    }
}

/// The store's view of the tree for proofs: stored tiles, the writer's right edge if there is
/// one, and the entries for leaf hashes.
pub struct StoreHashes<'a> {
    pub(crate) store: &'a Store,
    pub(crate) edge: Option<Arc<Edge>>,
    /// The size of the tree read (no leaf at or past it is read).
    pub(crate) size: u64,
    /// The leaf hashes of the level-0 tile last read, from its first index: a proof asks for
    /// the roots of up to eight subtrees inside one tile, which would otherwise each hash the
    /// tile's entries again (measured: 1.2 ms a proof before, `benches/proofs.rs`).
    pub(crate) leaves: Option<(u64, Arc<Vec<TreeHash>>)>,
}

impl Hashes for StoreHashes<'_> {
    type Error = StoreError;

    fn hashes(&mut self, level: u32, from: u64, to: u64) -> Result<Vec<TreeHash>, StoreError> {
        if level == 0 {
            if let Some((first, cached)) = &self.leaves
                && from >= *first
                && to <= first + cached.len() as u64
            {
                return Ok(cached[(from - first) as usize..(to - first) as usize].to_vec());
            }
            // The whole tile (as far as the tree goes) when the range lies in one.
            let tile = from / TILE_WIDTH * TILE_WIDTH;
            let end = (tile + TILE_WIDTH).min(self.size.max(to));
            if to > end {
                return self.store.leaf_hashes(from, to);
            }
            let complete = end == tile + TILE_WIDTH;
            let cache = &self.store.edge.leaf_tiles;
            let all = match complete.then(|| cache.get(&tile)).flatten() {
                Some(all) => all,
                None => {
                    let all = Arc::new(self.store.leaf_hashes(tile, end)?);
                    if complete {
                        cache.insert(tile, all.clone());
                    }
                    all
                }
            };
            let out = all[(from - tile) as usize..(to - tile) as usize].to_vec();
            self.leaves = Some((tile, all));
            return Ok(out);
        }
        let n = from / TILE_WIDTH;
        let (a, b) = ((from % TILE_WIDTH) as usize, (to - n * TILE_WIDTH) as usize);
        // The edge is published after the group that made it, so a reader may hold one a group
        // behind the head record: when it lacks a hash, the tile was stored since.
        if let Some(edge) = &self.edge
            && n == edge.partial_tile(level)
            && let Some(hashes) = edge.partial.get(level as usize).and_then(|p| p.get(a..b))
        {
            return Ok(hashes.to_vec());
        }
        if let Some(v) = self.store.tree.get(tile_key(level, n))? {
            return Ok(decode_tile(level, n, &v)?[a..b].to_vec());
        }
        // Not stored (a reader of a ledger written before the tree, the right edge of a stopped
        // one, or of a group not yet published): from the level below.
        let below = 1u64 << TILE_HEIGHT;
        (from..to)
            .map(|i| {
                let h = self.hashes(level - 1, i * below, (i + 1) * below)?;
                Ok(merkle::root_of(&h))
            })
            .collect()
    }
}

/// The writer's right edge, shared with the readers, and the leaf hashes of the complete
/// level-0 tiles proofs read lately (complete tiles never change). Leaf hashes are not stored:
/// a tile's cost 256 entries decoded and hashed (about 0.4 ms), which a proof pays once without
/// this cache and consecutive proofs of nearby entries (a round's, a device's) share with it.
#[derive(Debug)]
pub(crate) struct SharedEdge {
    edge: RwLock<Option<Arc<Edge>>>,
    leaf_tiles: quick_cache::sync::Cache<u64, Arc<Vec<TreeHash>>>,
}

/// Complete leaf tiles kept (8 KiB each).
const LEAF_TILES_KEPT: usize = 256;

impl Default for SharedEdge {
    fn default() -> SharedEdge {
        SharedEdge {
            edge: RwLock::default(),
            leaf_tiles: quick_cache::sync::Cache::new(LEAF_TILES_KEPT),
        }
    }
}

impl SharedEdge {
    pub fn get(&self) -> Option<Arc<Edge>> {
        self.edge.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
    pub fn set(&self, edge: Edge) {
        *self.edge.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(edge));
    }
}

impl Store {
    /// A reader of the tree of `size` entries.
    fn hashes(&self, size: u64) -> StoreHashes<'_> {
        StoreHashes {
            store: self,
            edge: self.edge.get(),
            size,
            leaves: None,
        }
    }

    /// The root of the tree of entries `0..size` (`size` ≤ the head's index + 1).
    pub fn tree_root(&self, size: u64) -> Result<TreeHash, StoreError> {
        self.check_size(size)?;
        merkle::subtree_root(&mut self.hashes(size), 0, size)
    }

    /// The inclusion proof of entry `index` in the tree of `size` entries.
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<TreeHash>, StoreError> {
        self.check_size(size)?;
        if index >= size {
            return Err(StoreError::Refused(format!(
                "entry {index} is not in the tree of {size} entries"
            )));
        }
        merkle::inclusion_proof(&mut self.hashes(size), index, size)
    }

    /// The consistency proof from the tree of `from` entries to the tree of `to` entries.
    pub fn consistency_proof(&self, from: u64, to: u64) -> Result<Vec<TreeHash>, StoreError> {
        self.check_size(to)?;
        if from == 0 || from > to {
            return Err(StoreError::Refused(format!(
                "no consistency proof from {from} to {to} entries: 1 <= from <= to"
            )));
        }
        merkle::consistency_proof(&mut self.hashes(to), from, to)
    }

    fn check_size(&self, size: u64) -> Result<(), StoreError> {
        let entries = self.head()?.map_or(0, |(i, _)| i + 1);
        if size > entries {
            return Err(StoreError::Refused(format!(
                "the ledger holds {entries} entries, not {size}"
            )));
        }
        Ok(())
    }

    /// The leaf hashes of entries `from..to`, from their stored bytes.
    pub(crate) fn leaf_hashes(&self, from: u64, to: u64) -> Result<Vec<TreeHash>, StoreError> {
        let mut out = Vec::with_capacity((to - from) as usize);
        if from >= to {
            return Ok(out);
        }
        let (mut order, chunks) = self.chunks(from, to - 1);
        for c in chunks {
            let leaves = order.accept(c, |c| c.leaf_hashes(), Vec::len)?;
            let first = order.expected() - leaves.len() as u64;
            for (i, h) in leaves.into_iter().enumerate() {
                let index = first + i as u64;
                if index >= from && index < to {
                    out.push(h);
                }
            }
            if order.expected() >= to {
                break;
            }
        }
        if out.len() as u64 != to - from {
            return Err(StoreError::Corrupt(format!(
                "entries {from}..{to}: only {} stored",
                out.len()
            )));
        }
        Ok(out)
    }

    /// Rebuild the writer's right edge at start: from the stored full tiles of level 1 (which
    /// must run from tile 0 without a gap), then the entries after them, storing every tile they
    /// complete (all of them for a ledger written before the tree). Synced if it wrote any.
    pub(crate) fn load_tree(&self) -> Result<Edge, StoreError> {
        let entries = self.head()?.map_or(0, |(i, _)| i + 1);
        let per_tile = 1u64 << (2 * TILE_HEIGHT);
        // Full level-1 tiles stored, from 0.
        let mut full = 0u64;
        while (full + 1) * per_tile <= entries && self.tree.contains_key(tile_key(1, full))? {
            full += 1;
        }
        let mut edge = Edge {
            size: full * per_tile,
            partial: Vec::new(),
        };
        // Levels 2 and up: the roots of the full tiles below, in the incomplete tile of each.
        let mut level = 2u32;
        while edge.size >> (TILE_HEIGHT * level) > 0 {
            let count = edge.size >> (TILE_HEIGHT * level);
            let first = count / TILE_WIDTH * TILE_WIDTH;
            let mut p = Vec::new();
            for i in first..count {
                let v = self.tree.get(tile_key(level - 1, i))?.ok_or_else(|| {
                    StoreError::Corrupt(format!("tree tile {}/{i} is missing", level - 1))
                })?;
                p.push(merkle::root_of(&decode_tile(level - 1, i, &v)?));
            }
            edge.partial.resize(level as usize + 1, Vec::new());
            edge.partial[level as usize] = p;
            level += 1;
        }
        let (from, mut wrote) = (edge.size, 0usize);
        let started = std::time::Instant::now();
        let mut at = from;
        while at < entries {
            let to = (at + per_tile).min(entries);
            let leaves = self.leaf_hashes(at, to)?;
            for (k, v) in edge.extend(&leaves) {
                self.tree.insert(k, v)?;
                wrote += 1;
            }
            at = to;
        }
        if wrote > 0 {
            self.sync()?;
            tracing::info!(
                entries = entries - from,
                tiles = wrote,
                ms = started.elapsed().as_millis() as u64,
                "Merkle tree tiles built from the entries"
            );
        }
        Ok(edge)
    }

    /// A C2SP tlog-tiles resource of the tree of `size` entries (`size` ≤ the head's index + 1):
    /// a hash tile (its hashes, 32 bytes each) or an entry bundle (each entry as a big-endian
    /// `u16` length and its stored bytes). `Refused` for a tile beyond the tree, or a bundle
    /// holding an entry longer than a `u16` length can say.
    pub fn tile_data(
        &self,
        t: &ledger_core::tiles::TilePath,
        size: u64,
    ) -> Result<Vec<u8>, StoreError> {
        self.check_size(size)?;
        let beyond =
            || StoreError::Refused(format!("{} is beyond the tree of {size} entries", t.path()));
        let (first, end) = (t.first().ok_or_else(beyond)?, t.end().ok_or_else(beyond)?);
        match t.level {
            Some(level) => {
                let count = size
                    .checked_shr(TILE_HEIGHT * u32::from(level))
                    .unwrap_or(0);
                if end > count {
                    return Err(beyond());
                }
                Ok(self
                    .hashes(size)
                    .hashes(u32::from(level), first, end)?
                    .concat())
            }
            None => {
                if end > size {
                    return Err(beyond());
                }
                let mut out = Vec::new();
                let (mut order, chunks) = self.chunks(first, end - 1);
                for c in chunks {
                    let chunk = order.accept(c, |c| Ok(c.clone()), |c| c.record_count())?;
                    chunk.each_entry_bytes(|index, bytes| {
                        if index < first || index >= end {
                            return Ok(());
                        }
                        let len = u16::try_from(bytes.len()).map_err(|_| {
                            StoreError::Refused(format!(
                                "entry {index} is {} bytes, more than an entry bundle can hold (65,535)",
                                bytes.len()
                            ))
                        })?;
                        out.extend_from_slice(&len.to_be_bytes());
                        out.extend_from_slice(bytes);
                        Ok(())
                    })?;
                    if order.expected() >= end {
                        break;
                    }
                }
                Ok(out)
            }
        }
    }

    /// Keep a witness's cosignature of checkpoint `number` (checked by the caller), one per
    /// witness name and key id. Synced.
    pub fn add_cosignature(
        &self,
        number: u64,
        line: &ledger_core::note::NoteSignature,
    ) -> Result<(), StoreError> {
        let mut v = line.key_id.to_vec();
        v.extend_from_slice(&line.signature);
        if line.name.is_empty() || line.name.contains('+') {
            return Err(StoreError::Refused(format!(
                "a cosignature's witness name {:?} is not a key name",
                line.name
            )));
        }
        self.tree
            .insert(cosignature_key(number, &line.name, &line.key_id), v)?;
        self.sync()
    }

    /// The cosignatures kept of checkpoint `number`.
    pub fn cosignatures(
        &self,
        number: u64,
    ) -> Result<Vec<ledger_core::note::NoteSignature>, StoreError> {
        let prefix = cosignature_prefix(number);
        let mut out = Vec::new();
        for r in self.tree.scan_prefix(&prefix) {
            let (k, v) = r?;
            // The name, then '+' and the key id (none in the old layout: the id is in the value).
            let rest = &k[prefix.len()..];
            let name = rest.split(|b| *b == b'+').next().unwrap_or_default();
            let name = String::from_utf8(name.to_vec()).map_err(|_| {
                StoreError::Corrupt("a cosignature's witness name is not UTF-8".into())
            })?;
            if v.len() < 5 || (rest.len() > name.len() && rest[name.len() + 1..] != v[..4]) {
                return Err(StoreError::Corrupt(format!(
                    "cosignature of {name} is too short or not under its key id"
                )));
            }
            out.push(ledger_core::note::NoteSignature {
                name,
                key_id: [v[0], v[1], v[2], v[3]],
                signature: v[4..].to_vec(),
            });
        }
        Ok(out)
    }

    /// `cp` with the cosignatures kept of it added to its note.
    pub fn with_cosignatures(&self, mut cp: v1::Checkpoint) -> Result<v1::Checkpoint, StoreError> {
        use prost::Message;
        if cp.note.is_empty() {
            return Ok(cp);
        }
        let number = v1::CheckpointBody::decode(cp.body.as_slice())
            .map_err(|e| StoreError::Corrupt(format!("checkpoint body: {e}")))?
            .number;
        let lines = self.cosignatures(number)?;
        if lines.is_empty() {
            return Ok(cp);
        }
        let mut n = ledger_core::note::SignedNote::parse(&cp.note)
            .map_err(|e| StoreError::Corrupt(format!("checkpoint note: {e}")))?;
        n.add_signatures(&lines);
        cp.note = n.encode();
        Ok(cp)
    }

    /// The newest checkpoint cosigned by at least `required` of `witnesses` (name, keys: a
    /// witness counts when the line of each of its keys verifies), with its cosignatures. Reads
    /// only the checkpoints that have cosignatures, newest first.
    pub fn latest_cosigned(
        &self,
        witnesses: &[(String, Vec<ledger_core::note::CosignerKey>)],
        required: usize,
    ) -> Result<Option<v1::Checkpoint>, StoreError> {
        use prost::Message;
        let mut last_number = None;
        for r in self.tree.scan_prefix([P_COSIGNATURE]).rev() {
            let (k, _) = r?;
            let number = k
                .get(1..9)
                .and_then(crate::store::u64_of)
                .ok_or_else(|| StoreError::Corrupt("a cosignature key is too short".into()))?;
            if last_number == Some(number) {
                continue;
            }
            last_number = Some(number);
            let Some(v) = self.tree.get(crate::store::checkpoint_key(number))? else {
                continue;
            };
            let cp = v1::Checkpoint::decode(v.as_ref())
                .map_err(|e| StoreError::Corrupt(format!("checkpoint #{number}: {e}")))?;
            let cp = self.with_cosignatures(cp)?;
            let n = ledger_core::note::SignedNote::parse(&cp.note)
                .map_err(|e| StoreError::Corrupt(format!("checkpoint note: {e}")))?;
            let count = witnesses
                .iter()
                .filter(|(name, keys)| {
                    !keys.is_empty() && keys.iter().all(|k| n.cosigned_by(name, k).is_ok())
                })
                .count();
            if count >= required {
                return Ok(Some(cp));
            }
        }
        Ok(None)
    }

    /// At a writer's start, after the tree is loaded: the latest checkpoint's tree root must be
    /// the root of the stored tree at its size (a damaged tile would otherwise give proofs that
    /// fail only at the client).
    pub(crate) fn check_tree_against_checkpoint(&self) -> Result<(), StoreError> {
        let Some((_, info)) = self.latest_checkpoint()? else {
            return Ok(());
        };
        let Some(tree) = info.tree else {
            return Ok(());
        };
        let root = self.tree_root(tree.size)?;
        if root != tree.root {
            return Err(StoreError::Corrupt(format!(
                "checkpoint #{} signs Merkle root {} for {} entries but the stored tree gives {}",
                info.number,
                hex::encode(tree.root),
                tree.size,
                hex::encode(root)
            )));
        }
        Ok(())
    }

    /// Publish the writer's right edge to the readers (after the group that made it).
    pub(crate) fn publish_edge(&self, edge: &Edge) {
        self.edge.set(edge.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_core::merkle::{Frontier, MemoryTree, leaf_hash};

    #[test]
    fn the_edge_stores_each_full_tile_once_with_the_right_number() {
        let mut e = Edge::default();
        let mut mem = MemoryTree::new();
        let mut tiles = Vec::new();
        let n = 3 * 65_536 + 300;
        let leaves: Vec<TreeHash> = (0..n as u64).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        // Appended in groups of uneven sizes.
        for part in leaves.chunks(977) {
            tiles.extend(e.extend(part));
            for l in part {
                mem.push(*l);
            }
        }
        assert_eq!(e.size, n as u64);
        // Level 1: tiles 0, 1, 2 (each 256 roots of 256 leaves). No level-2 tile yet.
        let keys: Vec<Vec<u8>> = tiles.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(
            keys,
            vec![
                tile_key(1, 0).to_vec(),
                tile_key(1, 1).to_vec(),
                tile_key(1, 2).to_vec()
            ]
        );
        for (i, (_, v)) in tiles.iter().enumerate() {
            let want = mem.hashes(1, i as u64 * 256, (i as u64 + 1) * 256).unwrap();
            assert_eq!(decode_tile(1, i as u64, v).unwrap(), want);
        }
        // The edge: 300 leaves → 1 level-1 hash (256 leaves) and 44 leaves, 3 level-2 hashes.
        assert_eq!(e.partial[0].len(), 44);
        assert_eq!(e.partial[1].len(), 1);
        assert_eq!(e.partial[2].len(), 3);
        assert_eq!(e.partial_tile(1), 3);
        let mut f = Frontier::new();
        leaves.iter().for_each(|l| f.push(*l));
        assert_eq!(mem.root(), f.root());
        assert_eq!(e.root(), f.root());
    }

    /// The edge's root is the tree's at every size, across tile boundaries of two levels.
    #[test]
    fn the_edge_root_is_the_tree_root_at_every_size() {
        let mut e = Edge::default();
        let mut f = Frontier::new();
        assert_eq!(e.root(), f.root());
        assert_eq!(e.frontier(), f);
        for i in 0..70_000u64 {
            let l = leaf_hash(&i.to_be_bytes());
            e.extend(&[l]);
            f.push(l);
            if i < 600 || i % 251 == 0 || (65_530..65_540).contains(&i) {
                assert_eq!(e.root(), f.root(), "size {}", i + 1);
                assert_eq!(e.frontier(), f, "size {}", i + 1);
            }
        }
    }

    #[test]
    fn a_level_two_tile_is_stored_when_256_level_one_tiles_fill_it() {
        let mut e = Edge {
            // Just before the 256th level-1 tile fills.
            size: 256 * 65_536 - 1,
            partial: vec![vec![[0; 32]; 255], vec![[1; 32]; 255], vec![[2; 32]; 255]],
        };
        let tiles = e.extend(&[[9; 32]]);
        let keys: Vec<Vec<u8>> = tiles.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(
            keys,
            vec![tile_key(1, 255).to_vec(), tile_key(2, 0).to_vec()]
        );
        assert_eq!(e.partial[0].len(), 0);
        assert_eq!(e.partial[1].len(), 0);
        assert_eq!(e.partial[2].len(), 0);
        assert_eq!(e.partial[3].len(), 1);
    }
}
