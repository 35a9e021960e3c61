//! The ledger's Merkle tree: RFC 6962 / RFC 9162 (§2.1) over SHA-256, as the C2SP
//! tlog-checkpoint and tlog-tiles specifications fix it.
//!
//! - **Leaf** `i` is the chain entry at index `i`, as stored: its `ChainEntry` protobuf
//!   encoding, byte for byte (the bytes `ListEntries` and export return). Leaf hash
//!   `SHA-256(0x00 ‖ entry bytes)`, interior node `SHA-256(0x01 ‖ left ‖ right)`.
//! - The tree of size `n` holds entries `0..n`; a checkpoint of entry `i` is the tree of size
//!   `i + 1`. The blake3 chain is untouched: the leaves hold each entry's hashes, so the root
//!   commits to the chain head too.
//!
//! What is here: the hashes, an append-only [`Frontier`] (the root as entries are added, O(log n)
//! memory), the proofs over any store of the tree's hashes ([`Hashes`]: full subtrees of `256^L`
//! leaves, as tlog-tiles stores them), and the verification of proofs (RFC 9162 §2.1.3.2,
//! §2.1.4.2), which the tests check against a third-party implementation.

use sha2::{Digest, Sha256};

/// A SHA-256 tree hash.
pub type TreeHash = [u8; 32];

/// Leaves per tile, and the number of hashes of one level a tile of the level above covers.
pub const TILE_WIDTH: u64 = 256;
/// log2 of [`TILE_WIDTH`].
pub const TILE_HEIGHT: u32 = 8;

/// The root of the empty tree: SHA-256 of nothing.
pub fn empty_root() -> TreeHash {
    Sha256::digest([]).into()
}

/// `SHA-256(0x00 ‖ entry)`.
pub fn leaf_hash(entry: &[u8]) -> TreeHash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(entry);
    h.finalize().into()
}

/// `SHA-256(0x01 ‖ left ‖ right)`.
pub fn node_hash(left: &TreeHash, right: &TreeHash) -> TreeHash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The largest power of two smaller than `n` (`n ≥ 2`): RFC 9162's split point `k`.
fn split(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1 << (63 - (n - 1).leading_zeros())
}

/// The root of consecutive hashes taken as leaves of a tree (MTH over already hashed leaves).
/// `hashes` must not be empty.
pub fn root_of(hashes: &[TreeHash]) -> TreeHash {
    match hashes.len() {
        0 => empty_root(),
        1 => hashes[0],
        n => {
            let k = split(n as u64) as usize;
            node_hash(&root_of(&hashes[..k]), &root_of(&hashes[k..]))
        }
    }
}

/// The tree as entries are appended: the roots of its perfect subtrees, largest first (the
/// binary decomposition of its size). O(log n) memory; the root of every size on the way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frontier {
    size: u64,
    /// Roots of the perfect subtrees, largest (leftmost) first; their sizes are the set bits of
    /// `size`, highest first.
    peaks: Vec<TreeHash>,
}

impl Frontier {
    pub fn new() -> Frontier {
        Frontier::default()
    }

    /// Entries appended so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The frontier of a tree of `size` leaves from the roots of its perfect subtrees, largest
    /// first; `None` unless there is one per set bit of `size`.
    pub fn from_peaks(size: u64, peaks: Vec<TreeHash>) -> Option<Frontier> {
        (peaks.len() == size.count_ones() as usize).then_some(Frontier { size, peaks })
    }

    /// Append one leaf hash.
    pub fn push(&mut self, leaf: TreeHash) {
        let mut h = leaf;
        // Each trailing one bit of the old size is a perfect subtree of the new leaf's size,
        // merged with it.
        let mut merge = self.size.trailing_ones();
        while merge > 0 {
            let left = self.peaks.pop().expect("a peak per set bit");
            h = node_hash(&left, &h);
            merge -= 1;
        }
        self.peaks.push(h);
        self.size += 1;
    }

    /// The root of the tree of the leaves appended so far.
    pub fn root(&self) -> TreeHash {
        let mut it = self.peaks.iter().rev();
        let Some(last) = it.next() else {
            return empty_root();
        };
        it.fold(*last, |right, left| node_hash(left, &right))
    }
}

/// Read access to the hashes of a tree, for proofs: `level` 0 are leaf hashes, level `L ≥ 1`
/// the roots of the aligned subtrees of `256^L` leaves (the hashes a tlog-tiles tile of level
/// `L` holds). Every hash asked for is of a subtree entirely inside the tree.
pub trait Hashes {
    type Error;
    /// The hashes `from..to` of `level`, all inside one tile (`from / 256 == (to - 1) / 256`).
    fn hashes(&mut self, level: u32, from: u64, to: u64) -> Result<Vec<TreeHash>, Self::Error>;
}

/// MTH(D[a..b]) for a subtree range of a proof: `a` is a multiple of the smallest power of two
/// not below `b - a` (true of every range RFC 9162's recursion visits), so the range lies inside
/// one aligned block of each size above it, and its hashes of any level inside one tile.
pub fn subtree_root<H: Hashes>(src: &mut H, a: u64, b: u64) -> Result<TreeHash, H::Error> {
    let n = b - a;
    if n == 0 {
        return Ok(empty_root());
    }
    // The highest level whose blocks fit in the range: the range is `m` whole blocks of that
    // level followed by a remainder smaller than one block.
    let level = (63 - n.leading_zeros()) / TILE_HEIGHT;
    let block = 1u64 << (level * TILE_HEIGHT);
    let whole = n / block * block;
    if whole == n {
        let hashes = src.hashes(level, a / block, b / block)?;
        return Ok(root_of(&hashes));
    }
    // Split as RFC 9162 does: left the largest power of two below n (whole blocks), right the rest.
    let k = split(n);
    Ok(node_hash(
        &subtree_root(src, a, a + k)?,
        &subtree_root(src, a + k, b)?,
    ))
}

/// The inclusion proof of leaf `m` in the tree of size `n` (RFC 9162 §2.1.3.1, PATH), from
/// the bottom up.
pub fn inclusion_proof<H: Hashes>(src: &mut H, m: u64, n: u64) -> Result<Vec<TreeHash>, H::Error> {
    assert!(m < n, "leaf {m} is not in a tree of size {n}");
    let mut path = Vec::new();
    let (mut a, mut b) = (0u64, n);
    // Walk down, collecting the sibling subtrees top-down; reversed at the end.
    while b - a > 1 {
        let k = split(b - a);
        if m < a + k {
            path.push(subtree_root(src, a + k, b)?);
            b = a + k;
        } else {
            path.push(subtree_root(src, a, a + k)?);
            a += k;
        }
    }
    path.reverse();
    Ok(path)
}

/// The consistency proof between the trees of sizes `m` and `n`, `0 < m ≤ n` (RFC 9162
/// §2.1.4.1, PROOF(m, D[n])), from the bottom up.
pub fn consistency_proof<H: Hashes>(
    src: &mut H,
    m: u64,
    n: u64,
) -> Result<Vec<TreeHash>, H::Error> {
    assert!(0 < m && m <= n, "no consistency proof from {m} to {n}");
    let mut proof = Vec::new();
    let (mut a, mut b, mut m, mut start) = (0u64, n, m, true);
    loop {
        let size = b - a;
        if m == size {
            if !start {
                proof.push(subtree_root(src, a, b)?);
            }
            break;
        }
        let k = split(size);
        if m <= k {
            proof.push(subtree_root(src, a + k, b)?);
            b = a + k;
        } else {
            proof.push(subtree_root(src, a, a + k)?);
            a += k;
            m -= k;
            start = false;
        }
    }
    proof.reverse();
    Ok(proof)
}

/// Why a proof does not verify.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProofError {
    #[error("leaf {index} is not in a tree of size {size}")]
    OutOfRange { index: u64, size: u64 },
    #[error("the proof has {got} hashes, a proof of this position takes {want}")]
    WrongLength { got: usize, want: usize },
    #[error("the proof leads to root {computed}, the checkpoint's root is {expected}")]
    RootMismatch { computed: String, expected: String },
    #[error("no consistency proof from size {from} to {to}")]
    BadSizes { from: u64, to: u64 },
}

fn mismatch(computed: &TreeHash, expected: &TreeHash) -> ProofError {
    ProofError::RootMismatch {
        computed: hex::encode(computed),
        expected: hex::encode(expected),
    }
}

/// Check an inclusion proof (RFC 9162 §2.1.3.2): leaf hash `leaf` at `index` in the tree of
/// `size` leaves whose root is `root`.
pub fn verify_inclusion(
    leaf: &TreeHash,
    index: u64,
    size: u64,
    proof: &[TreeHash],
    root: &TreeHash,
) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::OutOfRange { index, size });
    }
    let (mut fn_, mut sn) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if sn == 0 {
            return Err(ProofError::WrongLength {
                got: proof.len(),
                want: inclusion_len(index, size),
            });
        }
        if fn_ & 1 == 1 || fn_ == sn {
            r = node_hash(p, &r);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    if sn != 0 {
        return Err(ProofError::WrongLength {
            got: proof.len(),
            want: inclusion_len(index, size),
        });
    }
    if &r != root {
        return Err(mismatch(&r, root));
    }
    Ok(())
}

/// How many hashes the inclusion proof of `index` in a tree of `size` has.
pub fn inclusion_len(index: u64, size: u64) -> usize {
    if index >= size {
        return 0;
    }
    let (mut a, mut b, mut len) = (0u64, size, 0usize);
    while b - a > 1 {
        let k = split(b - a);
        if index < a + k {
            b = a + k;
        } else {
            a += k;
        }
        len += 1;
    }
    len
}

/// Check a consistency proof (RFC 9162 §2.1.4.2): the tree of `size1` leaves with root `root1`
/// is a prefix of the tree of `size2` leaves with root `root2`.
pub fn verify_consistency(
    size1: u64,
    size2: u64,
    proof: &[TreeHash],
    root1: &TreeHash,
    root2: &TreeHash,
) -> Result<(), ProofError> {
    if size1 > size2 {
        return Err(ProofError::BadSizes {
            from: size1,
            to: size2,
        });
    }
    if size1 == size2 {
        if !proof.is_empty() {
            return Err(ProofError::WrongLength {
                got: proof.len(),
                want: 0,
            });
        }
        if root1 != root2 {
            return Err(mismatch(root2, root1));
        }
        return Ok(());
    }
    if size1 == 0 {
        // Every tree extends the empty one; RFC 9162 gives no proof for it.
        if !proof.is_empty() {
            return Err(ProofError::WrongLength {
                got: proof.len(),
                want: 0,
            });
        }
        return Ok(());
    }
    let want = consistency_len(size1, size2);
    if proof.len() != want {
        return Err(ProofError::WrongLength {
            got: proof.len(),
            want,
        });
    }
    // If size1 is a power of two, the old root is the proof's implicit first hash.
    let mut path: Vec<TreeHash> = Vec::with_capacity(proof.len() + 1);
    if size1.is_power_of_two() {
        path.push(*root1);
    }
    path.extend_from_slice(proof);
    let (mut fn_, mut sn) = (size1 - 1, size2 - 1);
    while fn_ & 1 == 1 {
        fn_ >>= 1;
        sn >>= 1;
    }
    let mut fr = path[0];
    let mut sr = path[0];
    for c in &path[1..] {
        if sn == 0 {
            return Err(ProofError::WrongLength {
                got: proof.len(),
                want,
            });
        }
        if fn_ & 1 == 1 || fn_ == sn {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    if sn != 0 {
        return Err(ProofError::WrongLength {
            got: proof.len(),
            want,
        });
    }
    if &fr != root1 {
        return Err(mismatch(&fr, root1));
    }
    if &sr != root2 {
        return Err(mismatch(&sr, root2));
    }
    Ok(())
}

/// How many hashes the consistency proof from `m` to `n` (`0 < m < n`) has.
pub fn consistency_len(m: u64, n: u64) -> usize {
    if m == 0 || m >= n {
        return 0;
    }
    let (mut size, mut m, mut start, mut len) = (n, m, true, 0usize);
    loop {
        if m == size {
            if !start {
                len += 1;
            }
            return len;
        }
        let k = split(size);
        len += 1;
        if m <= k {
            size = k;
        } else {
            size -= k;
            m -= k;
            start = false;
        }
    }
}

/// The hashes of a tree held in memory, level by level: for tests, benches and small trees.
#[derive(Clone, Debug, Default)]
pub struct MemoryTree {
    /// `levels[L]`: the hashes of level L (level 0: leaves) that are complete.
    levels: Vec<Vec<TreeHash>>,
}

impl MemoryTree {
    pub fn new() -> MemoryTree {
        MemoryTree {
            levels: vec![Vec::new()],
        }
    }

    pub fn push(&mut self, leaf: TreeHash) {
        self.levels[0].push(leaf);
        let mut level = 0;
        while (self.levels[level].len() as u64).is_multiple_of(TILE_WIDTH) {
            let full = &self.levels[level];
            let root = root_of(&full[full.len() - TILE_WIDTH as usize..]);
            if self.levels.len() == level + 1 {
                self.levels.push(Vec::new());
            }
            self.levels[level + 1].push(root);
            level += 1;
        }
    }

    pub fn size(&self) -> u64 {
        self.levels[0].len() as u64
    }

    pub fn root(&mut self) -> TreeHash {
        let n = self.size();
        subtree_root(self, 0, n).unwrap_or_else(|e| match e {})
    }
}

impl Hashes for MemoryTree {
    type Error = std::convert::Infallible;
    fn hashes(&mut self, level: u32, from: u64, to: u64) -> Result<Vec<TreeHash>, Self::Error> {
        Ok(self.levels[level as usize][from as usize..to as usize].to_vec())
    }
}

/// Every level of a small tree at once, built bottom up with an odd last hash carried up
/// unchanged (which gives RFC 6962's tree): the root and each leaf's inclusion proof for O(n)
/// hashes in all. Signed receipts use it for a durable group's own tree.
#[derive(Clone, Debug)]
pub struct LevelTree {
    /// `levels[0]`: the leaves; the last level holds the root alone.
    levels: Vec<Vec<TreeHash>>,
}

impl LevelTree {
    pub fn new(leaves: Vec<TreeHash>) -> LevelTree {
        let mut levels = vec![leaves];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let below = levels.last().expect("a level");
            let up = below
                .chunks(2)
                .map(|p| match p {
                    [l, r] => node_hash(l, r),
                    [odd] => *odd,
                    _ => unreachable!("chunks of at most 2"),
                })
                .collect();
            levels.push(up);
        }
        LevelTree { levels }
    }

    pub fn size(&self) -> u64 {
        self.levels[0].len() as u64
    }

    pub fn root(&self) -> TreeHash {
        match self.levels.last().and_then(|l| l.first()) {
            Some(r) => *r,
            None => empty_root(),
        }
    }

    /// Leaf `i`'s inclusion proof (RFC 9162 §2.1.3.1), from the bottom up.
    pub fn path(&self, i: u64) -> Vec<TreeHash> {
        let mut path = Vec::with_capacity(self.levels.len());
        self.each_sibling(i, |s| path.push(*s));
        path
    }

    /// [`LevelTree::path`]'s hashes appended to `out`, one after the other (32 bytes each).
    pub fn write_path(&self, i: u64, out: &mut Vec<u8>) {
        self.each_sibling(i, |s| out.extend_from_slice(s));
    }

    fn each_sibling(&self, i: u64, mut f: impl FnMut(&TreeHash)) {
        assert!(
            i < self.size(),
            "leaf {i} is not in a tree of size {}",
            self.size()
        );
        let mut j = i as usize;
        for level in &self.levels[..self.levels.len() - 1] {
            if let Some(sibling) = level.get(j ^ 1) {
                f(sibling);
            }
            j >>= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> TreeHash {
        hex::decode(s).unwrap().try_into().unwrap()
    }

    /// The level tree is RFC 6962's: same root and same proofs as the recursive definition,
    /// for every size up to past two tiles' worth of a level and every leaf.
    #[test]
    fn level_tree_matches_the_recursive_tree() {
        let mut mem = MemoryTree::new();
        let mut leaves = Vec::new();
        for n in 1..=300u64 {
            let leaf = leaf_hash(&n.to_be_bytes());
            mem.push(leaf);
            leaves.push(leaf);
            let t = LevelTree::new(leaves.clone());
            assert_eq!(t.size(), n);
            assert_eq!(t.root(), mem.root(), "root of {n}");
            let step = if n > 40 { 7 } else { 1 };
            for i in (0..n).step_by(step).chain([n - 1]) {
                let path = t.path(i);
                assert_eq!(
                    path,
                    inclusion_proof(&mut mem, i, n).unwrap(),
                    "path {i} of {n}"
                );
                verify_inclusion(&leaves[i as usize], i, n, &path, &t.root()).unwrap();
            }
        }
        assert_eq!(LevelTree::new(Vec::new()).root(), empty_root());
    }

    /// RFC 6962's test leaves, as in the Certificate Transparency reference tests.
    fn rfc_leaves() -> Vec<Vec<u8>> {
        vec![
            vec![],
            vec![0x00],
            vec![0x10],
            vec![0x20, 0x21],
            vec![0x30, 0x31],
            vec![0x40, 0x41, 0x42, 0x43],
            vec![0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57],
            (0x60..=0x6f).collect(),
        ]
    }

    #[test]
    fn roots_match_the_rfc_6962_test_vectors() {
        let roots = [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
            "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
            "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
            "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
            "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
        ];
        assert_eq!(
            empty_root(),
            h("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        );
        let mut f = Frontier::new();
        let mut t = MemoryTree::new();
        for (i, leaf) in rfc_leaves().iter().enumerate() {
            f.push(leaf_hash(leaf));
            t.push(leaf_hash(leaf));
            assert_eq!(f.root(), h(roots[i]), "size {}", i + 1);
            assert_eq!(t.root(), h(roots[i]), "size {}", i + 1);
        }
    }

    #[test]
    fn the_rfc_6962_inclusion_and_consistency_vectors() {
        let mut t = MemoryTree::new();
        for leaf in rfc_leaves() {
            t.push(leaf_hash(&leaf));
        }
        // Inclusion of leaf 0 in the tree of 8, and of leaf 5 in the tree of 8 (CT's vectors).
        assert_eq!(
            inclusion_proof(&mut t, 0, 8).unwrap(),
            vec![
                h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
                h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
                h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
            ]
        );
        assert_eq!(
            inclusion_proof(&mut t, 5, 8).unwrap(),
            vec![
                h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
                h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
                h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
            ]
        );
        // Consistency from 1 to 8, 6 to 8 and 2 to 5.
        assert_eq!(
            consistency_proof(&mut t, 1, 8).unwrap(),
            vec![
                h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
                h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
                h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
            ]
        );
        assert_eq!(
            consistency_proof(&mut t, 6, 8).unwrap(),
            vec![
                h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
                h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
                h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
            ]
        );
        assert_eq!(
            consistency_proof(&mut t, 2, 5).unwrap(),
            vec![
                h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
                h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
            ]
        );
    }

    /// Every proof of every position in trees up to 70 leaves verifies, and its length is
    /// what the length functions say; a wrong leaf, position, size or hash does not.
    #[test]
    fn proofs_verify_and_tampering_is_refused() {
        let mut t = MemoryTree::new();
        let mut roots = vec![empty_root()];
        for i in 0..70u64 {
            t.push(leaf_hash(&i.to_be_bytes()));
            roots.push(t.root());
        }
        for n in 1..=70u64 {
            for m in 0..n {
                let leaf = leaf_hash(&m.to_be_bytes());
                let p = inclusion_proof(&mut t, m, n).unwrap();
                assert_eq!(p.len(), inclusion_len(m, n));
                let root = &roots[n as usize];
                verify_inclusion(&leaf, m, n, &p, root).unwrap();
                let other = leaf_hash(&(m + 1000).to_be_bytes());
                assert!(verify_inclusion(&other, m, n, &p, root).is_err());
                if n > 1 {
                    assert!(verify_inclusion(&leaf, (m + 1) % n, n, &p, root).is_err());
                }
                if !p.is_empty() {
                    let mut bad = p.clone();
                    bad[0][0] ^= 1;
                    assert!(verify_inclusion(&leaf, m, n, &bad, root).is_err());
                    assert!(verify_inclusion(&leaf, m, n, &p[1..], root).is_err());
                }
                assert!(
                    verify_inclusion(&leaf, m, n, &[p.clone(), vec![leaf]].concat(), root).is_err()
                );
            }
            for m in 1..=n {
                let p = consistency_proof(&mut t, m, n).unwrap();
                assert_eq!(p.len(), consistency_len(m, n), "{m}->{n}");
                let (r1, r2) = (&roots[m as usize], &roots[n as usize]);
                verify_consistency(m, n, &p, r1, r2).unwrap();
                if m < n {
                    let mut bad = p.clone();
                    let last = bad.len() - 1;
                    bad[last][5] ^= 0x40;
                    assert!(verify_consistency(m, n, &bad, r1, r2).is_err());
                    assert!(verify_consistency(m, n, &p, r2, r2).is_err());
                    assert!(verify_consistency(m, n, &p, r1, r1).is_err());
                    assert!(verify_consistency(m, n, &p[1..], r1, r2).is_err());
                }
            }
        }
    }

    /// Proofs in a tree of several tile levels (256^2 + some leaves) equal the ones a plain
    /// in-memory recursion over the leaves gives, for positions at the tiles' edges.
    #[test]
    fn tiled_hashes_give_the_same_proofs_as_the_leaves() {
        struct Leaves(Vec<TreeHash>);
        impl Hashes for Leaves {
            type Error = std::convert::Infallible;
            fn hashes(
                &mut self,
                level: u32,
                from: u64,
                to: u64,
            ) -> Result<Vec<TreeHash>, Self::Error> {
                let block = 1usize << (level * TILE_HEIGHT);
                Ok((from as usize..to as usize)
                    .map(|i| root_of(&self.0[i * block..(i + 1) * block]))
                    .collect())
            }
        }
        let n = 65_536 + 256 * 3 + 17;
        let mut t = MemoryTree::new();
        let mut leaves = Vec::new();
        let mut f = Frontier::new();
        for i in 0..n as u64 {
            let l = leaf_hash(&i.to_le_bytes());
            t.push(l);
            f.push(l);
            leaves.push(l);
        }
        let mut plain = Leaves(leaves);
        assert_eq!(t.root(), f.root());
        assert_eq!(subtree_root(&mut plain, 0, n as u64).unwrap(), f.root());
        for (m, size) in [
            (0, n),
            (255, n),
            (256, n),
            (65_535, n),
            (65_536, n),
            (n - 1, n),
            (70_000 % n, 65_537),
            (300, 65_536),
        ] {
            let (m, size) = (m as u64, size as u64);
            assert_eq!(
                inclusion_proof(&mut t, m, size).unwrap(),
                inclusion_proof(&mut plain, m, size).unwrap()
            );
        }
        for (a, b) in [
            (1, n),
            (256, n),
            (65_536, n),
            (65_537, n),
            (1000, 65_536),
            (65_535, 65_536 + 256),
        ] {
            let (a, b) = (a as u64, b as u64);
            assert_eq!(
                consistency_proof(&mut t, a, b).unwrap(),
                consistency_proof(&mut plain, a, b).unwrap()
            );
        }
    }
}
