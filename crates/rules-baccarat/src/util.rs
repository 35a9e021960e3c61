//! Small helpers shared by the game modules.

use std::collections::BTreeMap;

/// Index from bet id to position, linear for the usual handful of bets and a B-tree beyond, so
/// that a record with thousands of bets stays O(n log n).
#[derive(Default)]
pub(crate) struct IdIndex<'a> {
    small: Vec<(&'a str, usize)>,
    big: Option<BTreeMap<&'a str, usize>>,
}

const LINEAR_MAX: usize = 24;

impl<'a> IdIndex<'a> {
    pub fn with_capacity(n: usize) -> IdIndex<'a> {
        IdIndex {
            small: Vec::with_capacity(n.min(LINEAR_MAX)),
            big: None,
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
        if self.small.iter().any(|(k, _)| *k == id) {
            return false;
        }
        self.small.push((id, pos));
        if self.small.len() > LINEAR_MAX {
            self.big = Some(self.small.drain(..).collect());
        }
        true
    }

    pub fn get(&self, id: &str) -> Option<usize> {
        match &self.big {
            Some(big) => big.get(id).copied(),
            None => self.small.iter().find(|(k, _)| *k == id).map(|(_, p)| *p),
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
        }
        assert!(!ix.insert(&ids[3], 0));
        assert_eq!(ix.get("b77"), Some(77));
        assert_eq!(ix.get("zz"), None);
    }
}
