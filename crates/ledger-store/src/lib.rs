//! # ledger-store: the hash chain on sled, with durable group commit
//!
//! One sled tree (`ledger`) holds everything, under key prefixes; the keys rewritten with every
//! group sort first (see `store.rs`):
//!
//! | key | value |
//! |---|---|
//! | `@head` | u64be index + 32-byte hash of the last entry: a group's last write, its commit point |
//! | `@derived` | u64be index up to which the derived state is built |
//! | `@pending` | the undo record of the last group written (module `commit`) |
//! | `A` u8 len, device id, u64be first sequence | a run of consecutive sequences: the u64be entry index of each (derived; one record per device per group) |
//! | `B` device id | `DeviceInfo` (prost): key, kind, registration (derived; written when the registry changes) |
//! | `C` u64be number | `Checkpoint` (prost); mirrored to `checkpoints.log` |
//! | `E` u64be first index | a chunk of consecutive entries of one group: `u32be len, ChainEntry (prost)`, ... (≤ 256 entries, ≤ 64 KiB); *linked* (first byte 1): the entries after the first without their `prev_hash`, the entry before's hash, put back by the reader (`store::link_chunk`) |
//! | `F` u8 len, device id, u64be sequence | u64be index of the security finding about it (one per device and sequence; derived) |
//! | `G` pool id | the pool's members: a `PoolConfigured` (prost) holding its id and members (derived; `@pools` marks that the derived state has them) |
//!
//! Derived data (`A`, `B`, `F`, `G`) can be rebuilt from the entries ([`Store::rebuild_derived`]).
//! A group is written as plain inserts, the head record last; a group that a crash cut short is
//! undone at the writer's next start (module `commit`).
//!
//! Durability: sled 0.34's flush is `sync_file_range`, not a full fsync, so [`Store::sync`] flushes
//! sled and then fsyncs sled's `db` file through a second descriptor. Nothing may be acknowledged
//! before the `sync` that follows its `apply`. A `sync` error is fatal: the caller stops
//! acknowledging and exits.
//!
//! The [`Appender`] holds the writer's state (head, signers) and decides, one event at a time and
//! in order, what happens to each envelope; [`precheck`] and [`verify_prechecked`] do the
//! order-independent work (decoding, time, signatures) beforehand, on other threads.

mod append;
mod commit;
mod keyfile;
mod signer;
mod store;
mod tree;
mod verbatim;
mod windowed;

pub use append::{
    Appender, Applied, MonotonicMs, PreOutcome, Ready, WindowClock, monotonic_ms, now_ms, precheck,
    precheck_within, verify_prechecked,
};
pub use commit::RolledBack;
pub use keyfile::{LEDGER_KEY_FILE, generate_key, load_or_create as load_ledger_key};
pub use signer::{KeySource, LedgerKey, Pkcs11Config, Pkcs11Signer, read_pin_file};
pub use store::{
    CHECKPOINT_LOG, Chunk, ChunkOrder, EntryView, LatestCheckpoint, OpenConfig, PrincipalConfig,
    Rotation, Store, StoredItem, ledger_key_at,
};
pub use verbatim::Alarm;
pub use windowed::{WINDOW_BYTES, WindowedChunks, windowed_entries, windowed_entries_with};

/// Errors of the store. Any of them from a write or a sync is fatal for acknowledging.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sled: {0}")]
    Sled(#[from] sled::Error),
    #[error("I/O on {path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("ledger key: {0}")]
    Key(String),
    #[error("the store is corrupt at entry {index}: {detail}")]
    CorruptEntry { index: u64, detail: String },
    #[error("the store is corrupt: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Refused(String),
    /// The filesystem holding the store has no room left: nothing says the store is damaged.
    #[error(
        "the disk holding {path} is full ({detail}): the store is not known to be damaged; free space on it (or grow the filesystem), then try again"
    )]
    DiskFull { path: String, detail: String },
}

impl StoreError {
    /// Whether it is the disk being full (not damage).
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::DiskFull { .. } => true,
            StoreError::Io { err, .. } => io_is_disk_full(err),
            StoreError::Sled(sled::Error::Io(err)) => io_is_disk_full(err),
            _ => false,
        }
    }

    pub(crate) fn io(path: &std::path::Path, err: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.display().to_string(),
            err,
        }
    }
}

#[cfg(test)]
mod tests;

/// ENOSPC, or EDQUOT (a quota is as full as a disk).
pub(crate) fn io_is_disk_full(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::StorageFull
        || e.kind() == std::io::ErrorKind::QuotaExceeded
        || matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// Bytes free for an unprivileged writer on the filesystem holding `dir` (statvfs), if known.
pub fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path and `st` is written by statvfs before it is read.
    let r = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if r != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    // The field types differ between platforms (u64 here).
    #[allow(clippy::unnecessary_cast)]
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}
