//! Reading a stopped ledger from end to end in bounded memory.
//!
//! sled 0.34 keeps every page it reads in memory. Its LRU works per shard (256 of them), on
//! batches of recorded accesses, and only evicts once a shard's batch is full. A reader going
//! through the chain once touches each leaf only a few times, so no batch fills and nothing is
//! evicted, whatever the cache capacity. Measured on the demo's ledger (1,564,417 entries), one
//! pass of [`Store::entries`] ended at 418 MB resident, growing with every entry read. A second
//! pass added nothing: it was all cached.
//!
//! Closing the `Db` frees it all. [`WindowedEntries`] reads a window of entries per opening of
//! the store, and closes and reopens it between windows. An opening takes 20-45 ms, and a window
//! of 200,000 entries takes about 1-2 s to verify. The same pass then stayed at 74 MB resident.
//! This is what keeps `ledgerctl verify` and `ledgerctl export` within a fixed memory, however
//! long the chain.
//!
//! A running ledgerd holds sled's lock, so the ledger must be stopped, as for any reader of a data
//! directory. Should a writer take the directory between two windows, the next opening fails
//! ("in use") and the reading stops with that error. Whatever a reader finds after a reopening, it
//! checks as it checks the rest: each chunk must start where the one before it ended, and the
//! verifier links every entry to the one before it.

use std::path::{Path, PathBuf};

use ledger_core::proto as v1;

use crate::{Store, StoreError};

/// Entries read per opening of the store.
pub const WINDOW: u64 = 200_000;

type Entries = Box<dyn Iterator<Item = Result<v1::ChainEntry, StoreError>> + Send>;

/// The entries `from..=to` of the stopped ledger in `dir`, in order, with the store reopened
/// every `window` entries (see the module's documentation). Like [`Store::entries`], each item is
/// an entry, or the error that stopped the reading, after which there is nothing more.
pub struct WindowedEntries {
    dir: PathBuf,
    /// The next index to yield.
    next: u64,
    to: u64,
    window: u64,
    /// The open window's entries, and its last index.
    current: Option<(Entries, u64)>,
    stopped: bool,
}

impl WindowedEntries {
    /// Entries `from..=to` of the ledger in `dir`, [`WINDOW`] per opening.
    pub fn new(dir: &Path, from: u64, to: u64) -> WindowedEntries {
        WindowedEntries::with_window(dir, from, to, WINDOW)
    }

    /// The same with `window` entries per opening (at least 1).
    pub fn with_window(dir: &Path, from: u64, to: u64, window: u64) -> WindowedEntries {
        WindowedEntries {
            dir: dir.to_path_buf(),
            next: from,
            to,
            window: window.max(1),
            current: None,
            stopped: false,
        }
    }

    fn stop(&mut self, e: StoreError) -> Option<Result<v1::ChainEntry, StoreError>> {
        self.stopped = true;
        self.current = None;
        Some(Err(e))
    }
}

impl Iterator for WindowedEntries {
    type Item = Result<v1::ChainEntry, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.stopped || self.next > self.to {
                return None;
            }
            if self.current.is_none() {
                let last = self.next.saturating_add(self.window - 1).min(self.to);
                // The store handle goes at the end of this block; the iterator keeps sled's
                // `Db` open until the window is read.
                let entries: Entries = match Store::open_existing(&self.dir) {
                    Ok(store) => Box::new(store.entries(self.next, last)),
                    Err(e) => return self.stop(e),
                };
                self.current = Some((entries, last));
            }
            let (entries, last) = self.current.as_mut().expect("opened above");
            let last = *last;
            match entries.next() {
                Some(Ok(e)) => {
                    self.next = e.index.saturating_add(1);
                    return Some(Ok(e));
                }
                Some(Err(e)) => return self.stop(e),
                None => {
                    // Closes sled before the next window opens it again.
                    self.current = None;
                    if self.next <= last {
                        // The chain ended inside this window.
                        self.stopped = true;
                        return None;
                    }
                }
            }
        }
    }
}
