//! The audit's derived store (sled, separate from the chain's): findings, adjudicated rounds, and
//! the replayer's snapshot. Everything here can be deleted and rebuilt from the chain.
//!
//! Layout (one tree, keys by prefix, so every commit is one atomic batch):
//!
//! | key | value |
//! |---|---|
//! | `F` seq(u64 BE) | a [`Finding`] (JSON) |
//! | `R` table 0x00 round | a [`RoundSummary`] (JSON) |
//! | `T` closed_ms(i64 as biased u64 BE) table 0x00 round | empty: rounds by time, for reports |
//! | `I` closed_index(u64 BE) table 0x00 round | empty: rounds by ledger index, for truncation |
//! | `X` table 0x00 round 0x00 seq(u64 BE) | empty: a round's findings |
//! | `S` | the [`ReplayerSnapshot`] (JSON) |
//!
//! Findings and rounds are committed often (live findings within a second); snapshots less
//! often. On [`AuditStore::load`] everything after the snapshot is removed, so replay resumes from
//! the snapshot without a duplicate or a gap.

use std::path::Path;

use audit::{Finding, Period, RoundSummary};
use rules_core::{GameId, Severity};
use serde::{Deserialize, Serialize};

use crate::replay::ReplayerSnapshot;

/// Why the audit store failed.
#[derive(Debug, thiserror::Error)]
pub enum AuditStoreError {
    #[error("audit store: {0}")]
    Sled(#[from] sled::Error),
    #[error("audit store: a stored record does not decode: {0}")]
    Corrupt(String),
}

type Result<T> = std::result::Result<T, AuditStoreError>;

/// Which findings a query wants. Empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingFilter {
    pub casino_id: Option<String>,
    /// A table or a machine.
    pub subject: Option<String>,
    pub game: Option<GameId>,
    pub code: Option<String>,
    pub min_severity: Option<Severity>,
    pub pool_id: Option<String>,
    pub round_id: Option<String>,
    /// Ledger time window `[from_ms, to_ms)`.
    pub from_ms: Option<i64>,
    pub to_ms: Option<i64>,
}

impl FindingFilter {
    pub fn matches(&self, f: &Finding) -> bool {
        let eq = |want: &Option<String>, have: &Option<String>| {
            want.as_ref()
                .is_none_or(|w| have.as_deref() == Some(w.as_str()))
        };
        eq(&self.casino_id, &f.casino_id)
            && self.subject.as_ref().is_none_or(|s| {
                f.table_id.as_deref() == Some(s.as_str())
                    || f.machine_id.as_deref() == Some(s.as_str())
            })
            && self.game.is_none_or(|g| f.game == Some(g))
            && self.code.as_ref().is_none_or(|c| &f.code == c)
            && self.min_severity.is_none_or(|s| f.severity >= s)
            && eq(&self.pool_id, &f.pool_id)
            && eq(&self.round_id, &f.round_id)
            && self.from_ms.is_none_or(|t| f.at_ms >= t)
            && self.to_ms.is_none_or(|t| f.at_ms < t)
    }
}

/// The store.
#[derive(Clone)]
pub struct AuditStore {
    db: sled::Db,
    tree: sled::Tree,
}

fn round_key(table: &str, round: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(table.len() + round.len() + 1);
    k.extend_from_slice(table.as_bytes());
    k.push(0);
    k.extend_from_slice(round.as_bytes());
    k
}

fn biased(ms: i64) -> [u8; 8] {
    ((ms as u64) ^ (1 << 63)).to_be_bytes()
}

fn prefixed(p: u8, rest: &[&[u8]]) -> Vec<u8> {
    let mut k = vec![p];
    for r in rest {
        k.extend_from_slice(r);
    }
    k
}

fn decode<T: for<'de> Deserialize<'de>>(v: &[u8]) -> Result<T> {
    serde_json::from_slice(v).map_err(|e| AuditStoreError::Corrupt(e.to_string()))
}

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

impl AuditStore {
    /// Open (or create) the store in `dir`.
    pub fn open(dir: &Path) -> Result<AuditStore> {
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(64 << 20)
            .open()?;
        let tree = db.open_tree("audit")?;
        Ok(AuditStore { db, tree })
    }

    /// A throwaway store (offline replays that only want the digest).
    pub fn temporary() -> Result<AuditStore> {
        let db = sled::Config::new().temporary(true).open()?;
        let tree = db.open_tree("audit")?;
        Ok(AuditStore { db, tree })
    }

    /// The last snapshot, after removing every finding and round recorded after it.
    pub fn load(&self) -> Result<Option<ReplayerSnapshot>> {
        let snap: Option<ReplayerSnapshot> = match self.tree.get(b"S")? {
            Some(v) => Some(decode(&v)?),
            None => None,
        };
        let (next_seq, position) = match &snap {
            Some(s) => (s.auditor.digest.count, s.auditor.position),
            None => (0, None),
        };
        let mut batch = sled::Batch::default();
        for kv in self
            .tree
            .range(prefixed(b'F', &[&next_seq.to_be_bytes()])..prefixed(b'G', &[]))
        {
            let (k, v) = kv?;
            let f: Finding = decode(&v)?;
            if let (Some(t), Some(r)) = (&f.table_id, &f.round_id) {
                let mut x = prefixed(b'X', &[&round_key(t, r)]);
                x.push(0);
                x.extend_from_slice(&f.seq.to_be_bytes());
                batch.remove(x);
            }
            batch.remove(k);
        }
        let from = position.map_or(0, |p| p + 1);
        for kv in self
            .tree
            .range(prefixed(b'I', &[&from.to_be_bytes()])..prefixed(b'J', &[]))
        {
            let (k, _) = kv?;
            let rk = &k[9..];
            if let Some(v) = self.tree.get(prefixed(b'R', &[rk]))? {
                let r: RoundSummary = decode(&v)?;
                batch.remove(prefixed(b'T', &[&biased(r.closed_ms), rk]));
            }
            batch.remove(prefixed(b'R', &[rk]));
            batch.remove(k);
        }
        self.tree.apply_batch(batch)?;
        Ok(snap)
    }

    /// Record findings and rounds, and optionally a snapshot that covers them, atomically.
    pub fn commit(
        &self,
        findings: &[Finding],
        rounds: &[RoundSummary],
        snapshot: Option<&ReplayerSnapshot>,
    ) -> Result<()> {
        let mut batch = sled::Batch::default();
        for f in findings {
            batch.insert(prefixed(b'F', &[&f.seq.to_be_bytes()]), encode(f));
            if let (Some(t), Some(r)) = (&f.table_id, &f.round_id) {
                let mut x = prefixed(b'X', &[&round_key(t, r)]);
                x.push(0);
                x.extend_from_slice(&f.seq.to_be_bytes());
                batch.insert(x, &[][..]);
            }
        }
        for r in rounds {
            let rk = round_key(&r.table_id, &r.round_id);
            batch.insert(prefixed(b'R', &[&rk]), encode(r));
            batch.insert(prefixed(b'T', &[&biased(r.closed_ms), &rk]), &[][..]);
            batch.insert(
                prefixed(b'I', &[&r.closed_index.to_be_bytes(), &rk]),
                &[][..],
            );
        }
        if let Some(s) = snapshot {
            batch.insert(&b"S"[..], encode(s));
        }
        self.tree.apply_batch(batch)?;
        Ok(())
    }

    /// Flush to disk (derived data: not on every commit).
    pub fn flush(&self) -> Result<()> {
        self.db.flush()?;
        Ok(())
    }

    /// Findings matching `filter`, in sequence order, starting after `after_seq`, at most
    /// `limit`.
    pub fn findings(
        &self,
        filter: &FindingFilter,
        after_seq: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Finding>> {
        let start = after_seq.map_or(0, |s| s.saturating_add(1));
        let mut out = Vec::new();
        for kv in self
            .tree
            .range(prefixed(b'F', &[&start.to_be_bytes()])..prefixed(b'G', &[]))
        {
            let (_, v) = kv?;
            let f: Finding = decode(&v)?;
            if filter.matches(&f) {
                out.push(f);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// One round.
    pub fn round(&self, table: &str, round: &str) -> Result<Option<RoundSummary>> {
        match self.tree.get(prefixed(b'R', &[&round_key(table, round)]))? {
            Some(v) => Ok(Some(decode(&v)?)),
            None => Ok(None),
        }
    }

    /// Every table's round with this id.
    pub fn rounds_named(&self, round: &str) -> Result<Vec<RoundSummary>> {
        let mut out = Vec::new();
        for kv in self.tree.scan_prefix(b"R") {
            let (k, v) = kv?;
            if k.ends_with(round.as_bytes()) && k.get(k.len() - round.len() - 1) == Some(&0) {
                out.push(decode(&v)?);
            }
        }
        Ok(out)
    }

    /// A round's findings, in sequence order.
    pub fn round_findings(&self, table: &str, round: &str) -> Result<Vec<Finding>> {
        let mut p = prefixed(b'X', &[&round_key(table, round)]);
        p.push(0);
        let mut out = Vec::new();
        for kv in self.tree.scan_prefix(&p) {
            let (k, _) = kv?;
            let seq = k
                .get(k.len() - 8..)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_be_bytes)
                .unwrap_or(0);
            if let Some(v) = self.tree.get(prefixed(b'F', &[&seq.to_be_bytes()]))? {
                out.push(decode(&v)?);
            }
        }
        Ok(out)
    }

    /// Rounds closed within `period`, in time order.
    pub fn rounds_in(&self, period: Period) -> Result<Vec<RoundSummary>> {
        let mut out = Vec::new();
        let lo = prefixed(b'T', &[&biased(period.from_ms)]);
        let hi = prefixed(b'T', &[&biased(period.to_ms)]);
        for kv in self.tree.range(lo..hi) {
            let (k, _) = kv?;
            if let Some(v) = self.tree.get(prefixed(b'R', &[&k[9..]]))? {
                out.push(decode(&v)?);
            }
        }
        Ok(out)
    }

    /// Number of findings stored.
    pub fn finding_count(&self) -> Result<u64> {
        match self.tree.scan_prefix(b"F").next_back() {
            Some(kv) => {
                let (k, _) = kv?;
                Ok(k.get(1..9)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map_or(0, |b| u64::from_be_bytes(b) + 1))
            }
            None => Ok(0),
        }
    }
}
