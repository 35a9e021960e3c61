//! A mirror's side of the store: checkpoints copied from the source as it signed them, and the
//! alarms the mirror raises about what it could not verify, kept outside the chain (in a sled
//! tree of their own, `mirror_alarms`). The entries themselves go through
//! [`crate::Appender::append_verbatim`].

use ledger_core::proto as v1;
use ledger_core::record::check_checkpoint;
use prost::Message;
use serde::{Deserialize, Serialize};

use crate::StoreError;
use crate::store::Store;

/// The sled tree of a mirror's alarms (not part of the chain, never copied by a restore).
pub(crate) const ALARMS_TREE: &str = "mirror_alarms";

/// Something a mirror could not verify or extend consistently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alarm {
    /// When it was raised (ms since the epoch, the mirror's clock).
    pub at_ms: i64,
    /// A short code: `entry_unverified`, `history_rewritten`, `checkpoint_contradicts`, ...
    pub kind: String,
    /// The entry index it concerns, when there is one.
    pub index: Option<u64>,
    pub detail: String,
}

impl Store {
    /// Keep a copy of the source's checkpoint `cp`, numbered after the latest one held, in sled
    /// and in the checkpoint file, durably. The caller has checked it against the entries. A
    /// checkpoint already held (same number, same bytes) is accepted again and changes nothing;
    /// another one under a number already held is refused.
    pub fn copy_checkpoint(&self, cp: &v1::Checkpoint) -> Result<bool, StoreError> {
        let _guard = self.checkpoint_guard();
        let info = check_checkpoint(cp, None)
            .map_err(|e| StoreError::Refused(format!("checkpoint: {e}")))?;
        let latest = self.latest_checkpoint()?;
        let held = latest.as_ref().map_or(0, |(_, i)| i.number);
        if info.number <= held {
            let ours = self
                .tree
                .get(crate::store::checkpoint_key(info.number))?
                .map(|v| v.to_vec());
            return if ours.as_deref() == Some(cp.encode_to_vec().as_slice()) {
                Ok(false)
            } else {
                Err(StoreError::Refused(format!(
                    "checkpoint #{} differs from the one held under that number",
                    info.number
                )))
            };
        }
        if info.number != held + 1 {
            return Err(StoreError::Refused(format!(
                "checkpoint #{} comes after #{held}: checkpoints are missing",
                info.number
            )));
        }
        self.persist_checkpoint(cp, info)?;
        Ok(true)
    }

    /// Record an alarm, durably.
    pub fn record_alarm(&self, alarm: &Alarm) -> Result<(), StoreError> {
        let t = self.db.open_tree(ALARMS_TREE)?;
        let n = t
            .last()?
            .and_then(|(k, _)| crate::store::u64_of(&k))
            .map_or(0, |n| n + 1);
        let v = serde_json::to_vec(alarm).map_err(|e| StoreError::Refused(e.to_string()))?;
        t.insert(n.to_be_bytes(), v)?;
        self.sync()
    }

    /// Every alarm recorded, oldest first.
    pub fn alarms(&self) -> Result<Vec<Alarm>, StoreError> {
        let t = self.db.open_tree(ALARMS_TREE)?;
        let mut out = Vec::new();
        for r in t.iter() {
            let (_, v) = r?;
            out.push(
                serde_json::from_slice(&v)
                    .map_err(|e| StoreError::Corrupt(format!("mirror alarm: {e}")))?,
            );
        }
        Ok(out)
    }
}
