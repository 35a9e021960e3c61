//! Reading a stopped ledger from end to end in bounded memory.
//!
//! sled 0.34 keeps every page it reads in memory. Its LRU works per shard (256 of them), on
//! batches of recorded accesses, and only evicts once a shard's batch is full. A reader going
//! through the chain once touches each leaf only a few times, so no batch fills and nothing is
//! evicted, whatever the cache capacity. Measured on the demo's ledger (1,564,417 entries), one
//! pass of [`Store::entries`] ended at 418 MB resident, growing with every entry read. A second
//! pass added nothing: it was all cached.
//!
//! Closing the `Db` frees it all. [`WindowedChunks`] closes and reopens the store after every
//! 64 MB of chunks read (about 200,000 entries); an opening takes 20-45 ms, against 1-2 s to
//! verify that much. [`windowed_entries`] decodes them as [`Store::entries`] does. This is what
//! keeps `ledgerctl verify`, `ledgerctl export` and the audit's full replay within a fixed
//! memory, however long the chain (measured in ARCHITECTURE.md).
//!
//! A running ledgerd cannot close its store; there, a long scan makes the LRU evict as it goes
//! instead (the store's `chunk_of`: each chunk's key read again until its shard's batch fills).
//! These readers get both (`ledgerctl verify --data-dir` of 4 M entries: 157 MB peak, against
//! 149 MB with the windows alone); the windows stay, as the bound that does not depend on sled's
//! LRU internals.
//!
//! A running ledgerd holds sled's lock, so the ledger must be stopped, as for any reader of a data
//! directory. Should a writer take the directory between two windows, the next opening fails
//! ("in use") and the reading stops with that error. Whatever a reader finds after a reopening, it
//! checks as it checks the rest: each chunk must start where the one before it ended, and the
//! verifier links every entry to the one before it.

use std::path::{Path, PathBuf};

use ledger_core::proto as v1;

use crate::store::entries_of;
use crate::{Chunk, Store, StoreError};

/// The entries `from..=to` of the stopped ledger in `dir`, in order, read through
/// [`WindowedChunks`] (the store reopened after every [`WINDOW_BYTES`] read; see the module's
/// documentation). Like [`Store::entries`], each item is an entry, or the error that stopped the
/// reading, after which there is nothing more. Fails at once if the store cannot be opened.
pub fn windowed_entries(
    dir: &Path,
    from: u64,
    to: u64,
) -> Result<impl Iterator<Item = Result<v1::ChainEntry, StoreError>> + Send, StoreError> {
    windowed_entries_with(dir, from, to, WINDOW_BYTES)
}

/// The same with a window of `window` bytes (at least one chunk per opening).
pub fn windowed_entries_with(
    dir: &Path,
    from: u64,
    to: u64,
    window: usize,
) -> Result<impl Iterator<Item = Result<v1::ChainEntry, StoreError>> + Send, StoreError> {
    let (order, chunks) = WindowedChunks::open_with_window(dir, from, to, window)?;
    Ok(entries_of(order, chunks, from, to))
}

/// Encoded chunk bytes read per opening of the store by [`WindowedChunks`].
pub const WINDOW_BYTES: usize = 64 << 20;

type Chunks = Box<dyn Iterator<Item = Result<Chunk, sled::Error>> + Send>;

/// The stored chunks holding the entries `from..=to` of the stopped ledger in `dir`, as
/// [`Store::chunks`] gives them (for readers that decode on other threads), with the store
/// reopened after every [`WINDOW_BYTES`] of chunks read (see the module's documentation). The
/// [`crate::ChunkOrder`] from [`WindowedChunks::open`] checks them in order across the windows
/// as it does within one. After an error there is nothing more.
pub struct WindowedChunks {
    dir: PathBuf,
    to: u64,
    /// The first index of the last chunk given.
    after: Option<u64>,
    /// Bytes given since the store was opened.
    read: usize,
    window: usize,
    current: Option<Chunks>,
    stopped: bool,
}

impl WindowedChunks {
    /// The chunks for `from..=to` and the order check that goes with them.
    pub fn open(
        dir: &Path,
        from: u64,
        to: u64,
    ) -> Result<(crate::ChunkOrder, WindowedChunks), StoreError> {
        WindowedChunks::open_with_window(dir, from, to, WINDOW_BYTES)
    }

    /// The same with a window of `window` bytes (at least one chunk per opening).
    pub fn open_with_window(
        dir: &Path,
        from: u64,
        to: u64,
        window: usize,
    ) -> Result<(crate::ChunkOrder, WindowedChunks), StoreError> {
        let store = Store::open_existing(dir)?;
        let (order, chunks) = store.chunks(from, to);
        Ok((
            order,
            WindowedChunks {
                dir: dir.to_path_buf(),
                to,
                after: None,
                read: 0,
                window,
                current: Some(Box::new(chunks)),
                stopped: false,
            },
        ))
    }
}

impl Iterator for WindowedChunks {
    type Item = Result<Chunk, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped {
            return None;
        }
        if self.current.is_none() {
            // The window before ended on a full window: go on after its last chunk.
            let after = self.after.expect("a window ends after a chunk");
            if after >= self.to {
                self.stopped = true;
                return None;
            }
            match Store::open_existing(&self.dir) {
                Ok(store) => self.current = Some(Box::new(store.chunks_after(after, self.to))),
                Err(e) => {
                    self.stopped = true;
                    return Some(Err(e));
                }
            }
            self.read = 0;
        }
        match self.current.as_mut().expect("opened above").next() {
            Some(Ok(c)) => {
                self.after = Some(c.first);
                self.read += c.encoded_len();
                if self.read >= self.window {
                    // Closes sled; the chunk's bytes are its own.
                    self.current = None;
                }
                Some(Ok(c))
            }
            Some(Err(e)) => {
                self.stopped = true;
                self.current = None;
                Some(Err(e.into()))
            }
            None => {
                self.stopped = true;
                self.current = None;
                None
            }
        }
    }
}
