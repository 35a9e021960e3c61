//! A reporting agent's crash-safe outbox (feature `outbox`).
//!
//! An event gets its sequence number and its signature here, and is written **and fsynced**
//! before it is sent. After a crash or a power loss the agent resends exactly the bytes it
//! signed: the ledger answers DUPLICATE with the original receipt for what it already holds, and
//! the agent never signs a different event with a sequence number it has used (that would be an
//! equivocation: the ledger rejects it and records a security finding against the casino).
//!
//! What it keeps, in one sled tree (one atomic batch per change):
//!
//! | key | value |
//! |---|---|
//! | `meta/device`, `meta/key` | the device this outbox signs for, and its public key |
//! | `meta/next` | the sequence number the next event gets (absent until the ledger said) |
//! | `p/<seq>` | a pending event: its signed bytes and where it came from |
//! | `a/<seq>` | an acknowledged event's receipt: index, entry hash, receive time (the newest [`Outbox::KEEP_RECEIPTS`]) |
//! | `in/<source>` | how much of an input file was taken: lines, bytes and the hash of those bytes |
//! | `sp/<name>` | a spool file taken whole, by its content hash |
//!
//! Durability: sled 0.34's flush is `sync_file_range`, not a full fsync, so [`Outbox::sync`]
//! flushes sled and then fsyncs its `db` file (and any blob file), as the ledger's own store
//! does. Receipts are written without a sync: one lost after a crash costs a resend, which the
//! ledger answers DUPLICATE with the same receipt.

use std::path::{Path, PathBuf};

use ed25519_dalek::SigningKey;
use ledger_core::proto as v1;
use prost::Message;

use crate::signer::sign_body;

/// What can go wrong with an outbox.
#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("outbox {dir}: {msg}")]
    Refused { dir: String, msg: String },
    #[error("outbox {dir}: {err}")]
    Io { dir: String, err: std::io::Error },
    #[error("outbox {dir}: sled: {err}")]
    Sled { dir: String, err: sled::Error },
    #[error("outbox {dir}: damaged record {key}: {msg}")]
    Damaged {
        dir: String,
        key: String,
        msg: String,
    },
}

/// A signed event waiting for its receipt.
#[derive(Clone, PartialEq, Message)]
pub struct Pending {
    /// The encoded `EventBody`, exactly as signed.
    #[prost(bytes = "vec", tag = "1")]
    pub body: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub signature: Vec<u8>,
    /// Where it came from, for messages: `FILE:LINE`, `stdin:LINE`, `spool/NAME:LINE`.
    #[prost(string, tag = "3")]
    pub source: String,
}

impl Pending {
    pub fn envelope(&self) -> v1::Envelope {
        v1::Envelope {
            body: self.body.clone(),
            signature: self.signature.clone(),
        }
    }
}

/// The receipt kept for an acknowledged event.
#[derive(Clone, PartialEq, Message)]
pub struct Acked {
    #[prost(uint64, tag = "1")]
    pub index: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub entry_hash: Vec<u8>,
    #[prost(int64, tag = "3")]
    pub received_at_ms: i64,
    /// The ledger answered DUPLICATE (it already held these bytes).
    #[prost(bool, tag = "4")]
    pub duplicate: bool,
    /// A signed ACCEPTED receipt, kept whole with the envelope it acknowledges (which
    /// [`Outbox::acknowledge`] takes from the pending event), so that the device can prove the
    /// acknowledgement later ([`Outbox::receipt_proof`]).
    #[prost(message, optional, tag = "5")]
    pub signed: Option<v1::Receipt>,
    #[prost(message, optional, tag = "6")]
    pub envelope: Option<v1::Envelope>,
}

/// How much of an input file the outbox has taken.
#[derive(Clone, PartialEq, Message)]
pub struct InputMark {
    #[prost(uint64, tag = "1")]
    pub lines: u64,
    #[prost(uint64, tag = "2")]
    pub bytes: u64,
    /// blake3 of the file's first `bytes` bytes, to notice a file rewritten under the agent.
    #[prost(bytes = "vec", tag = "3")]
    pub prefix_hash: Vec<u8>,
}

/// An event to put into the outbox: what happened, when, and where it came from.
pub struct NewEvent {
    pub occurred_at_ms: i64,
    pub payload: v1::event_body::Payload,
    pub source: String,
}

/// Counts for a summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub pending: u64,
    pub first_pending: Option<u64>,
    pub next_sequence: Option<u64>,
    pub receipts_kept: u64,
}

const META_DEVICE: &[u8] = b"meta/device";
const META_KEY: &[u8] = b"meta/key";
const META_NEXT: &[u8] = b"meta/next";

fn pending_key(seq: u64) -> Vec<u8> {
    [b"p/".as_slice(), &seq.to_be_bytes()].concat()
}

fn acked_key(seq: u64) -> Vec<u8> {
    [b"a/".as_slice(), &seq.to_be_bytes()].concat()
}

fn seq_of(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.get(2..10)?.try_into().ok()?))
}

/// One device's outbox in a directory of its own.
pub struct Outbox {
    dir: PathBuf,
    db: sled::Db,
    log: std::fs::File,
    key: SigningKey,
    device_id: String,
}

impl Outbox {
    /// Acknowledged receipts kept (the newest); older ones are pruned.
    pub const KEEP_RECEIPTS: u64 = 10_000;

    /// Open (or create) the outbox in `dir` for `device_id` signing with `key`. An outbox made for
    /// another device or another key is refused: its sequence numbers are not this signer's.
    pub fn open(dir: &Path, device_id: &str, key: SigningKey) -> Result<Outbox, OutboxError> {
        let d = dir.display().to_string();
        std::fs::create_dir_all(dir).map_err(|err| OutboxError::Io {
            dir: d.clone(),
            err,
        })?;
        // sled lets go of its file lock only when its last internal thread does, which can be a
        // moment after the previous owner in this process dropped the Db: retry briefly.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        let db = loop {
            let cfg = sled::Config::new()
                .path(dir)
                .segment_size(8 << 20)
                .flush_every_ms(None);
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || cfg.open())) {
                Ok(Ok(db)) => break db,
                Ok(Err(e)) if e.to_string().contains("could not acquire lock") => {
                    if std::time::Instant::now() < deadline {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        continue;
                    }
                    return Err(OutboxError::Refused {
                        dir: d,
                        msg: "in use by another process (another agent for this device?)".into(),
                    });
                }
                Ok(Err(err)) => return Err(OutboxError::Sled { dir: d, err }),
                Err(_) => {
                    return Err(OutboxError::Refused {
                        dir: d,
                        msg: "sled panicked opening it: its files are damaged".into(),
                    });
                }
            }
        };
        let log = std::fs::File::open(dir.join("db")).map_err(|err| OutboxError::Io {
            dir: d.clone(),
            err,
        })?;
        let me = Outbox {
            dir: dir.to_path_buf(),
            db,
            log,
            key,
            device_id: device_id.to_string(),
        };
        let public = me.key.verifying_key().to_bytes();
        match (me.get(META_DEVICE)?, me.get(META_KEY)?) {
            (None, None) => {
                let mut b = sled::Batch::default();
                b.insert(META_DEVICE, device_id.as_bytes());
                b.insert(META_KEY, public.as_slice());
                me.apply(b)?;
                me.sync()?;
            }
            (Some(dev), Some(k)) => {
                if dev.as_ref() != device_id.as_bytes() {
                    return Err(me.refused(format!(
                        "it belongs to device {:?}, not {device_id:?}",
                        String::from_utf8_lossy(&dev)
                    )));
                }
                if k.as_ref() != public.as_slice() {
                    return Err(me.refused(format!(
                        "it was made with another key for {device_id} (public key {}); its \
                         events are signed with that key",
                        hex::encode(&k)
                    )));
                }
            }
            _ => return Err(me.refused("its identity records are incomplete".into())),
        }
        Ok(me)
    }

    fn refused(&self, msg: String) -> OutboxError {
        OutboxError::Refused {
            dir: self.dir.display().to_string(),
            msg,
        }
    }

    fn sled(&self, err: sled::Error) -> OutboxError {
        OutboxError::Sled {
            dir: self.dir.display().to_string(),
            err,
        }
    }

    fn damaged(&self, key: &[u8], msg: impl std::fmt::Display) -> OutboxError {
        OutboxError::Damaged {
            dir: self.dir.display().to_string(),
            key: String::from_utf8_lossy(key).into_owned(),
            msg: msg.to_string(),
        }
    }

    fn get(&self, key: &[u8]) -> Result<Option<sled::IVec>, OutboxError> {
        self.db.get(key).map_err(|e| self.sled(e))
    }

    fn apply(&self, b: sled::Batch) -> Result<(), OutboxError> {
        self.db.apply_batch(b).map_err(|e| self.sled(e))
    }

    /// The public key of the key this outbox signs with.
    pub fn public_key(&self) -> ed25519_dalek::VerifyingKey {
        self.key.verifying_key()
    }

    pub fn device_id(&self) -> &str {
        &self.device_id
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Make everything written so far durable: sled's flush, then an fsync of its `db` file and
    /// of any blob file sled wrote beside it.
    pub fn sync(&self) -> Result<(), OutboxError> {
        self.db.flush().map_err(|e| self.sled(e))?;
        let io = |err| OutboxError::Io {
            dir: self.dir.display().to_string(),
            err,
        };
        if let Ok(rd) = std::fs::read_dir(self.dir.join("blobs")) {
            for f in rd {
                let f = f.map_err(io)?;
                std::fs::File::open(f.path())
                    .and_then(|h| h.sync_all())
                    .map_err(io)?;
            }
            std::fs::File::open(self.dir.join("blobs"))
                .and_then(|h| h.sync_all())
                .map_err(io)?;
        }
        self.log.sync_all().map_err(io)
    }

    /// The sequence number the next event gets, once known.
    pub fn next_sequence(&self) -> Result<Option<u64>, OutboxError> {
        match self.get(META_NEXT)? {
            None => Ok(None),
            Some(v) => match <[u8; 8]>::try_from(v.as_ref()) {
                Ok(b) => Ok(Some(u64::from_be_bytes(b))),
                Err(_) => Err(self.damaged(META_NEXT, "not 8 bytes")),
            },
        }
    }

    /// Set the first sequence number of a new outbox (the ledger's last for the device, plus
    /// one). Refused once it is set: after that only the outbox numbers events.
    pub fn start_at(&self, next: u64) -> Result<(), OutboxError> {
        if let Some(n) = self.next_sequence()? {
            return Err(self.refused(format!("it already numbers events (next {n})")));
        }
        let mut b = sled::Batch::default();
        b.insert(META_NEXT, next.max(1).to_be_bytes().as_slice());
        self.apply(b)?;
        self.sync()
    }

    /// Number and sign `events`, and write them, with `mark` (what of an input they came from),
    /// in one atomic batch, made durable before this returns. Returns the new pending events'
    /// sequence numbers, in order.
    pub fn append(
        &self,
        events: Vec<NewEvent>,
        mark: Option<(&[u8], sled::IVec)>,
    ) -> Result<std::ops::Range<u64>, OutboxError> {
        let Some(first) = self.next_sequence()? else {
            return Err(self.refused("its first sequence number is not set yet".into()));
        };
        let mut b = sled::Batch::default();
        let mut seq = first;
        for e in events {
            let body = v1::EventBody {
                device_id: self.device_id.clone(),
                sequence: seq,
                occurred_at_ms: e.occurred_at_ms,
                payload: Some(e.payload),
            };
            let env = sign_body(&self.key, &body);
            let p = Pending {
                body: env.body,
                signature: env.signature,
                source: e.source,
            };
            b.insert(pending_key(seq), p.encode_to_vec());
            seq += 1;
        }
        b.insert(META_NEXT, seq.to_be_bytes().as_slice());
        if let Some((k, v)) = mark {
            b.insert(k, v);
        }
        self.apply(b)?;
        self.sync()?;
        Ok(first..seq)
    }

    /// Pending events from sequence `from` on, at most `limit`, in order.
    pub fn pending(&self, from: u64, limit: usize) -> Result<Vec<(u64, Pending)>, OutboxError> {
        let mut out = Vec::new();
        for kv in self.db.range(pending_key(from)..pending_key(u64::MAX)) {
            let (k, v) = kv.map_err(|e| self.sled(e))?;
            let seq = seq_of(&k).ok_or_else(|| self.damaged(&k, "bad key"))?;
            let p = Pending::decode(v.as_ref()).map_err(|e| self.damaged(&k, e))?;
            out.push((seq, p));
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// The oldest pending event's sequence number.
    pub fn first_pending(&self) -> Result<Option<u64>, OutboxError> {
        Ok(self.pending(0, 1)?.first().map(|(s, _)| *s))
    }

    /// The ledger acknowledged these events (ACCEPTED or DUPLICATE): their receipts replace them.
    /// Not synced (see the module documentation).
    pub fn acknowledge(&self, receipts: &[(u64, Acked)]) -> Result<(), OutboxError> {
        if receipts.is_empty() {
            return Ok(());
        }
        let mut b = sled::Batch::default();
        for (seq, a) in receipts {
            let value = match (&a.signed, &a.envelope) {
                (Some(_), None) => {
                    let env = self.pending(*seq, 1)?.into_iter().find(|(s, _)| s == seq);
                    let mut a = a.clone();
                    a.envelope = env.map(|(_, p)| p.envelope());
                    a.encode_to_vec()
                }
                _ => a.encode_to_vec(),
            };
            b.remove(pending_key(*seq));
            b.insert(acked_key(*seq), value);
        }
        // Prune receipts older than the newest KEEP_RECEIPTS.
        let newest = receipts.iter().map(|(s, _)| *s).max().unwrap_or(0);
        if newest > Self::KEEP_RECEIPTS {
            let below = acked_key(newest - Self::KEEP_RECEIPTS);
            for k in self.db.range(acked_key(0)..below).keys() {
                b.remove(k.map_err(|e| self.sled(e))?);
            }
        }
        self.apply(b)
    }

    /// The receipt kept for `seq`, if it is among those kept.
    pub fn receipt(&self, seq: u64) -> Result<Option<Acked>, OutboxError> {
        let k = acked_key(seq);
        self.get(&k)?
            .map(|v| Acked::decode(v.as_ref()).map_err(|e| self.damaged(&k, e)))
            .transpose()
    }

    /// The signed receipt of `seq` and the envelope it acknowledges, if kept (the newest
    /// [`Outbox::KEEP_RECEIPTS`]; ACCEPTED from a ledger that signs receipts).
    pub fn receipt_proof(
        &self,
        seq: u64,
    ) -> Result<Option<(v1::Envelope, v1::Receipt)>, OutboxError> {
        Ok(self
            .receipt(seq)?
            .and_then(|a| Some((a.envelope?, a.signed?))))
    }

    /// The newest receipt kept.
    pub fn last_receipt(&self) -> Result<Option<(u64, Acked)>, OutboxError> {
        match self.db.range(acked_key(0)..acked_key(u64::MAX)).next_back() {
            None => Ok(None),
            Some(kv) => {
                let (k, v) = kv.map_err(|e| self.sled(e))?;
                let seq = seq_of(&k).ok_or_else(|| self.damaged(&k, "bad key"))?;
                let a = Acked::decode(v.as_ref()).map_err(|e| self.damaged(&k, e))?;
                Ok(Some((seq, a)))
            }
        }
    }

    /// What was taken of the input named `source` so far.
    pub fn input_mark(&self, source: &str) -> Result<Option<InputMark>, OutboxError> {
        let k = input_key(source);
        self.get(&k)?
            .map(|v| InputMark::decode(v.as_ref()).map_err(|e| self.damaged(&k, e)))
            .transpose()
    }

    /// The content hash of the spool file `name`, if the outbox took it.
    pub fn spool_taken(&self, name: &str) -> Result<Option<Vec<u8>>, OutboxError> {
        Ok(self.get(&spool_key(name))?.map(|v| v.to_vec()))
    }

    /// The spool file `name` is gone: forget that it was taken.
    pub fn forget_spool(&self, name: &str) -> Result<(), OutboxError> {
        self.db.remove(spool_key(name)).map_err(|e| self.sled(e))?;
        Ok(())
    }

    /// Counts for a summary.
    pub fn counts(&self) -> Result<Counts, OutboxError> {
        let pending = self.db.scan_prefix(b"p/").count() as u64;
        let receipts_kept = self.db.scan_prefix(b"a/").count() as u64;
        Ok(Counts {
            pending,
            first_pending: self.first_pending()?,
            next_sequence: self.next_sequence()?,
            receipts_kept,
        })
    }

    /// Drop pending event `seq`, which the ledger refused and resending cannot fix, and number
    /// the pending events after it again from `seq`, signing them anew. Only for events the
    /// ledger does not hold: the caller checks that its last sequence for the device is below
    /// `seq` first (signing other bytes with a sequence the ledger holds is an equivocation).
    /// Returns the dropped event.
    pub fn discard(&self, seq: u64) -> Result<Pending, OutboxError> {
        let Some(first) = self.first_pending()? else {
            return Err(self.refused("nothing is pending".into()));
        };
        if first != seq {
            return Err(self.refused(format!(
                "only the oldest pending event ({first}) can be discarded, not {seq}"
            )));
        }
        let all = self.pending(seq, usize::MAX)?;
        let mut b = sled::Batch::default();
        let mut next = seq;
        for (s, p) in all.iter().skip(1) {
            let old = v1::EventBody::decode(p.body.as_slice()).map_err(|e| {
                self.damaged(&pending_key(*s), format!("its body does not decode: {e}"))
            })?;
            let body = v1::EventBody {
                sequence: next,
                ..old
            };
            let env = sign_body(&self.key, &body);
            b.insert(
                pending_key(next),
                Pending {
                    body: env.body,
                    signature: env.signature,
                    source: p.source.clone(),
                }
                .encode_to_vec(),
            );
            next += 1;
        }
        b.remove(pending_key(next));
        b.insert(META_NEXT, next.to_be_bytes().as_slice());
        self.apply(b)?;
        self.sync()?;
        Ok(all[0].1.clone())
    }
}

/// The key of an input's mark.
pub fn input_key(source: &str) -> Vec<u8> {
    [b"in/".as_slice(), source.as_bytes()].concat()
}

/// The key of a spool file's mark.
pub fn spool_key(name: &str) -> Vec<u8> {
    [b"sp/".as_slice(), name.as_bytes()].concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use v1::event_body::Payload as P;

    fn key(n: u8) -> SigningKey {
        SigningKey::from_bytes(&[n; 32])
    }

    fn game(n: u64) -> NewEvent {
        NewEvent {
            occurred_at_ms: 1_000 + n as i64,
            payload: P::GamePlayed(v1::GamePlayed {
                machine_id: "M1".into(),
                game_number: n,
                wager_cents: 100,
                win_cents: 0,
            }),
            source: format!("test:{n}"),
        }
    }

    fn body(p: &Pending) -> v1::EventBody {
        v1::EventBody::decode(p.body.as_slice()).unwrap()
    }

    #[test]
    fn numbers_signs_and_keeps_events_across_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        assert!(
            o.append(vec![game(1)], None).is_err(),
            "no first sequence yet"
        );
        o.start_at(5).unwrap();
        assert!(o.start_at(9).is_err(), "set once");
        assert_eq!(o.append(vec![game(1), game(2)], None).unwrap(), 5..7);
        assert_eq!(o.append(vec![game(3)], None).unwrap(), 7..8);
        let signed = o.pending(0, 10).unwrap();
        drop(o);
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        let again = o.pending(0, 10).unwrap();
        assert_eq!(signed, again, "the same signed bytes after a reopen");
        assert_eq!(again.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [5, 6, 7]);
        for (s, p) in &again {
            let b = body(p);
            assert_eq!((b.device_id.as_str(), b.sequence), ("m-1", *s));
            let sig = ed25519_dalek::Signature::from_slice(&p.signature).unwrap();
            assert!(ledger_core::signing::verify_strict(
                &key(1).verifying_key(),
                ledger_core::signing::EVENT_DOMAIN,
                &p.body,
                &sig,
            ));
        }
        assert_eq!(o.next_sequence().unwrap(), Some(8));
        assert_eq!(o.pending(6, 1).unwrap()[0].0, 6);
    }

    /// What `append` returned for survives the process dying right after (no drop, nobody else
    /// flushing): `append` made it durable itself. The test runs itself again as a child process
    /// that appends and exits at once; the parent then opens what the child left.
    #[test]
    fn appended_events_survive_the_process_exiting_at_once() {
        const CHILD_DIR: &str = "LEDGER_AGENT_TEST_OUTBOX_EXIT_DIR";
        const CHILD_EXIT: i32 = 17;
        if let Some(dir) = std::env::var_os(CHILD_DIR) {
            let o = Outbox::open(Path::new(&dir), "m-1", key(1)).unwrap();
            o.start_at(1).unwrap();
            o.append((1..=3).map(game).collect(), None).unwrap();
            std::process::exit(CHILD_EXIT);
        }
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "outbox::tests::appended_events_survive_the_process_exiting_at_once",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(
            status.code(),
            Some(CHILD_EXIT),
            "the child appended and exited"
        );
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        assert_eq!(o.next_sequence().unwrap(), Some(4));
        let pending = o.pending(0, 10).unwrap();
        assert_eq!(
            pending.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            [1, 2, 3]
        );
    }

    #[test]
    fn another_device_or_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(Outbox::open(dir.path(), "m-1", key(1)).unwrap());
        let e = Outbox::open(dir.path(), "m-2", key(1)).err().unwrap();
        assert!(e.to_string().contains("belongs to device \"m-1\""), "{e}");
        let e = Outbox::open(dir.path(), "m-1", key(2)).err().unwrap();
        assert!(e.to_string().contains("another key"), "{e}");
        assert!(Outbox::open(dir.path(), "m-1", key(1)).is_ok());
    }

    #[test]
    fn it_says_whose_outbox_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        assert_eq!(o.device_id(), "m-1");
        assert_eq!(o.public_key(), key(1).verifying_key());
        assert_eq!(o.dir(), dir.path());
    }

    /// sled's file lock: a second open in this process waits (a previous owner's threads let go
    /// of it a moment after the drop) and is refused once the lock stays held; one let go of
    /// while it waits is opened. The hold is far shorter than the wait.
    #[test]
    fn an_outbox_in_use_is_refused_and_one_let_go_of_meanwhile_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        match Outbox::open(dir.path(), "m-1", key(1)) {
            Err(OutboxError::Refused { msg, .. }) => {
                assert!(msg.contains("in use by another process"), "{msg}")
            }
            other => panic!("{:?}", other.err()),
        }
        let holder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(o);
        });
        let again = Outbox::open(dir.path(), "m-1", key(1));
        holder.join().unwrap();
        assert_eq!(again.unwrap().device_id(), "m-1");
    }

    #[test]
    fn a_directory_sled_cannot_open_is_its_error_at_once() {
        let dir = tempfile::tempdir().unwrap();
        // Where sled's data file goes, a directory.
        std::fs::create_dir_all(dir.path().join("db")).unwrap();
        match Outbox::open(dir.path(), "m-1", key(1)) {
            Err(e @ OutboxError::Sled { .. }) => {
                assert!(e.to_string().contains(": sled: "), "{e}")
            }
            other => panic!("{:?}", other.err()),
        }
    }

    #[test]
    fn receipts_replace_pending_events_and_old_ones_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        o.start_at(1).unwrap();
        o.append((1..=4).map(game).collect(), None).unwrap();
        let a = |i| Acked {
            index: 100 + i,
            entry_hash: vec![i as u8; 32],
            received_at_ms: 7,
            duplicate: i == 2,
            signed: None,
            envelope: None,
        };
        o.acknowledge(&[(1, a(1)), (2, a(2))]).unwrap();
        assert_eq!(o.first_pending().unwrap(), Some(3));
        assert_eq!(o.receipt(2).unwrap(), Some(a(2)));
        assert_eq!(o.last_receipt().unwrap(), Some((2, a(2))));
        let c = o.counts().unwrap();
        assert_eq!(
            (c.pending, c.receipts_kept, c.next_sequence),
            (2, 2, Some(5))
        );
        // Far ahead: everything at or below newest - KEEP_RECEIPTS goes.
        let far = Outbox::KEEP_RECEIPTS + 2;
        o.acknowledge(&[(far, a(far))]).unwrap();
        assert_eq!(o.receipt(1).unwrap(), None);
        assert_eq!(o.receipt(2).unwrap(), Some(a(2)));
        assert_eq!(o.receipt(far).unwrap(), Some(a(far)));
    }

    /// A signed receipt is kept with the envelope it acknowledges, taken from the pending event.
    #[test]
    fn a_signed_receipt_is_kept_with_its_envelope() {
        let dir = tempfile::tempdir().unwrap();
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        o.start_at(1).unwrap();
        o.append((1..=2).map(game).collect(), None).unwrap();
        let sent: Vec<_> = o.pending(1, 2).unwrap();
        let receipt = v1::Receipt {
            status: v1::ReceiptStatus::Accepted as i32,
            sequence: 1,
            index: 40,
            group: Some(v1::SignedGroupHead::default()),
            ..Default::default()
        };
        let acked = |signed: Option<v1::Receipt>| Acked {
            index: 40,
            entry_hash: vec![1; 32],
            received_at_ms: 7,
            duplicate: false,
            signed,
            envelope: None,
        };
        o.acknowledge(&[(1, acked(Some(receipt.clone()))), (2, acked(None))])
            .unwrap();
        let envelope = v1::Envelope {
            body: sent[0].1.body.clone(),
            signature: sent[0].1.signature.clone(),
        };
        assert_eq!(sent[0].1.envelope(), envelope);
        assert_eq!(o.receipt_proof(1).unwrap(), Some((envelope, receipt)));
        assert_eq!(
            o.receipt_proof(2).unwrap(),
            None,
            "an unsigned receipt proves nothing"
        );
        assert_eq!(o.receipt_proof(3).unwrap(), None);
    }

    #[test]
    fn a_mark_is_written_with_its_events() {
        let dir = tempfile::tempdir().unwrap();
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        o.start_at(1).unwrap();
        let m = InputMark {
            lines: 2,
            bytes: 40,
            prefix_hash: vec![1; 32],
        };
        let k = input_key("events.jsonl");
        o.append(vec![game(1), game(2)], Some((&k, m.encode_to_vec().into())))
            .unwrap();
        assert_eq!(o.input_mark("events.jsonl").unwrap(), Some(m));
        assert_eq!(o.input_mark("other").unwrap(), None);
        let sk = spool_key("a.jsonl");
        o.append(vec![game(3)], Some((&sk, vec![9u8; 32].into())))
            .unwrap();
        assert_eq!(o.spool_taken("a.jsonl").unwrap(), Some(vec![9; 32]));
        assert_eq!(
            o.spool_taken("b.jsonl").unwrap(),
            None,
            "only the file taken"
        );
        o.forget_spool("a.jsonl").unwrap();
        assert_eq!(o.spool_taken("a.jsonl").unwrap(), None);
    }

    #[test]
    fn discard_drops_the_oldest_and_renumbers_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
        o.start_at(3).unwrap();
        o.append((1..=3).map(game).collect(), None).unwrap();
        assert!(o.discard(4).is_err(), "only the oldest");
        let gone = o.discard(3).unwrap();
        assert_eq!(body(&gone).sequence, 3);
        let left = o.pending(0, 10).unwrap();
        let seqs: Vec<_> = left.iter().map(|(s, p)| (*s, body(p).sequence)).collect();
        assert_eq!(seqs, [(3, 3), (4, 4)]);
        let games: Vec<_> = left
            .iter()
            .map(|(_, p)| match body(p).payload {
                Some(P::GamePlayed(g)) => g.game_number,
                _ => 0,
            })
            .collect();
        assert_eq!(games, [2, 3], "the same events, in order");
        assert_eq!(o.next_sequence().unwrap(), Some(5));
        assert_eq!(o.append(vec![game(4)], None).unwrap(), 5..6);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Append(u8),
        Ack(u8),
        Discard,
        Reopen,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            (1u8..6).prop_map(Op::Append),
            (1u8..6).prop_map(Op::Ack),
            Just(Op::Discard),
            Just(Op::Reopen),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
        /// Whatever is appended, acknowledged, discarded and reopened: the pending events are the
        /// sequences after the last acknowledged one up to `next - 1`, each signed by the outbox's
        /// key over a body naming its own sequence; their events keep their input order; and
        /// nothing acknowledged is ever pending again.
        #[test]
        fn pending_events_stay_contiguous_signed_and_in_order(ops in proptest::collection::vec(op(), 1..40)) {
            let dir = tempfile::tempdir().unwrap();
            let mut o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
            o.start_at(1).unwrap();
            // The model: the games still pending, in order, and the first pending sequence.
            let (mut model, mut first, mut last) = (std::collections::VecDeque::new(), 1u64, 0u64);
            for op in ops {
                match op {
                    Op::Append(n) => {
                        let events: Vec<_> = (0..n).map(|_| { last += 1; game(last) }).collect();
                        o.append(events, None).unwrap();
                        model.extend((last - n as u64 + 1)..=last);
                    }
                    Op::Ack(n) => {
                        let acks: Vec<_> = o.pending(0, n as usize).unwrap().into_iter().map(|(s, _)| {
                            (s, Acked { index: s, entry_hash: vec![0; 32], received_at_ms: 0, duplicate: false, signed: None, envelope: None })
                        }).collect();
                        for _ in &acks { model.pop_front(); first += 1; }
                        o.acknowledge(&acks).unwrap();
                    }
                    Op::Discard => {
                        if o.first_pending().unwrap().is_some() {
                            o.discard(first).unwrap();
                            model.pop_front();
                        }
                    }
                    Op::Reopen => {
                        drop(o);
                        o = Outbox::open(dir.path(), "m-1", key(1)).unwrap();
                    }
                }
                let pending = o.pending(0, usize::MAX).unwrap();
                let next = o.next_sequence().unwrap().unwrap();
                proptest::prop_assert_eq!(pending.len(), model.len());
                proptest::prop_assert_eq!(next, first + model.len() as u64);
                for ((seq, p), want) in pending.iter().zip(&model) {
                    let b = body(p);
                    proptest::prop_assert_eq!(b.sequence, *seq);
                    proptest::prop_assert!(*seq >= first && *seq < next);
                    proptest::prop_assert!(matches!(b.payload, Some(P::GamePlayed(ref g)) if g.game_number == *want));
                    let sig = ed25519_dalek::Signature::from_slice(&p.signature).unwrap();
                    proptest::prop_assert!(ledger_core::signing::verify_strict(
                        &key(1).verifying_key(),
                        ledger_core::signing::EVENT_DOMAIN,
                        &p.body,
                        &sig,
                    ));
                }
                if first > 1 {
                    proptest::prop_assert!(o.receipt(first - 1).unwrap().is_some());
                }
            }
        }
    }
}
