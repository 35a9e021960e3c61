//! Small helpers shared by the game modules.

use std::collections::BTreeMap;

/// FNV-1a, 64 bits: a cheap fingerprint of a bet id, compared before the id itself.
#[inline]
fn fingerprint(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Index from bet id to position. Up to [`SMALL_MAX`] ids live in a small open-addressing table
/// keyed by fingerprint (no string comparison unless the fingerprints match); beyond that a
/// B-tree, so that a record with thousands of bets stays O(n log n). Lookups only: nothing is
/// ever iterated out of it, so no hash order can reach an output.
pub(crate) struct IdIndex<'a> {
    keys: Vec<(u64, &'a str, usize)>,
    slots: [u8; SLOTS],
    big: Option<BTreeMap<&'a str, usize>>,
}

const SMALL_MAX: usize = 64;
const SLOTS: usize = 128;

impl<'a> IdIndex<'a> {
    pub fn with_capacity(n: usize) -> IdIndex<'a> {
        IdIndex {
            keys: Vec::with_capacity(n.min(SMALL_MAX)),
            slots: [0; SLOTS],
            big: None,
        }
    }

    /// The slot holding `id` (fingerprint `h`), or the empty slot where it would go.
    #[inline]
    fn probe(&self, h: u64, id: &str) -> (usize, Option<usize>) {
        let mut i = (h as usize) & (SLOTS - 1);
        loop {
            match self.slots[i] {
                0 => return (i, None),
                k => {
                    let (kh, ks, pos) = self.keys[usize::from(k) - 1];
                    if kh == h && ks == id {
                        return (i, Some(pos));
                    }
                }
            }
            i = (i + 1) & (SLOTS - 1);
        }
    }

    /// Insert; false if the id is already present.
    pub fn insert(&mut self, id: &'a str, pos: usize) -> bool {
        if let Some(big) = &mut self.big {
            if big.contains_key(id) {
                return false;
            }
            big.insert(id, pos);
            return true;
        }
        let h = fingerprint(id);
        let (slot, found) = self.probe(h, id);
        if found.is_some() {
            return false;
        }
        if self.keys.len() < SMALL_MAX {
            self.keys.push((h, id, pos));
            // At most 64 keys in 128 slots: the table never fills, probing always ends.
            self.slots[slot] = self.keys.len() as u8;
        } else {
            let mut big: BTreeMap<&'a str, usize> =
                self.keys.drain(..).map(|(_, s, p)| (s, p)).collect();
            big.insert(id, pos);
            self.big = Some(big);
        }
        true
    }

    pub fn get(&self, id: &str) -> Option<usize> {
        match &self.big {
            Some(big) => big.get(id).copied(),
            None => self.probe(fingerprint(id), id).1,
        }
    }
}

/// A short list kept inline up to `N` items and spilled to the heap beyond (no allocation for
/// the handful of cards of a coup).
#[derive(Clone, Debug)]
pub(crate) struct InlineVec<T: Copy, const N: usize> {
    inline: [Option<T>; N],
    len: usize,
    spill: Vec<T>,
}

impl<T: Copy, const N: usize> InlineVec<T, N> {
    pub fn new() -> Self {
        InlineVec {
            inline: [None; N],
            len: 0,
            spill: Vec::new(),
        }
    }

    pub fn push(&mut self, v: T) {
        if self.len < N && self.spill.is_empty() {
            self.inline[self.len] = Some(v);
            self.len += 1;
        } else {
            if self.spill.is_empty() {
                self.spill
                    .extend(self.inline[..self.len].iter().flatten().copied());
            }
            self.spill.push(v);
        }
    }

    pub fn len(&self) -> usize {
        if self.spill.is_empty() {
            self.len
        } else {
            self.spill.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<T> {
        if self.spill.is_empty() {
            if i < self.len { self.inline[i] } else { None }
        } else {
            self.spill.get(i).copied()
        }
    }

    pub fn first(&self) -> Option<T> {
        self.get(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    pub fn from_iter(it: impl IntoIterator<Item = T>) -> Self {
        let mut v = Self::new();
        for x in it {
            v.push(x);
        }
        v
    }

    pub fn retain(&mut self, keep: impl Fn(&T) -> bool) {
        let kept = Self::from_iter(self.iter().filter(|x| keep(x)));
        *self = kept;
    }
}

impl<T: Copy, const N: usize> std::ops::Index<usize> for InlineVec<T, N> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        if self.spill.is_empty() {
            match &self.inline[..self.len][i] {
                Some(v) => v,
                None => unreachable!("inline items below len are set"),
            }
        } else {
            &self.spill[i]
        }
    }
}

/// Attach a seat to a violation when the record gives one.
pub(crate) trait SeatExt {
    fn tap_seat(self, seat: Option<u8>) -> Self;
}

impl SeatExt for rules_core::Violation {
    fn tap_seat(self, seat: Option<u8>) -> Self {
        match seat {
            Some(s) => self.seat(s),
            None => self,
        }
    }
}

/// Parse a boolean attribute value (`"true"` / `"false"`).
pub(crate) fn parse_bool_attr(v: &str) -> Option<bool> {
    match v {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Truncate untrusted text quoted in an error message.
pub(crate) fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_small_and_big() {
        let ids: Vec<String> = (0..100).map(|i| format!("b{i}")).collect();
        let mut ix = IdIndex::with_capacity(4);
        for (i, id) in ids.iter().enumerate() {
            assert!(ix.insert(id, i));
            assert_eq!(ix.get(id), Some(i));
        }
        assert!(!ix.insert(&ids[3], 0));
        assert_eq!(ix.get("b77"), Some(77));
        assert_eq!(ix.get("zz"), None);
        let mut small = IdIndex::with_capacity(4);
        assert!(small.insert("a", 0));
        assert!(!small.insert("a", 1));
        assert_eq!(small.get("a"), Some(0));
        assert_eq!(small.get("b"), None);
    }
}
