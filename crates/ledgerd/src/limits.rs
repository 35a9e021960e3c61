//! A rate limit per device (`ingest.device_rate_per_sec`, `ingest.device_burst`): a token bucket
//! per device id, taken by the ingest stream's reader for each envelope before anything else is
//! done with it. An envelope over the limit is not submitted (nothing is stored); the stream
//! ends with `RESOURCE_EXHAUSTED` after the receipts it owes, saying how long to wait, and the
//! agent resends from its first envelope without a receipt (docs/agents.md).
//!
//! The device id is read from the body's first field without decoding the body (the pipeline
//! decodes and checks it, signature and all, later): a body that does not start with it is
//! counted under the empty id, and is refused by the pipeline anyway.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// What a limit refused, counted for `/metrics` (`ledger_limit_refusals_total{limit}`). One set
/// per process: each limit is ledgerd's, not one listener's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// An ingest stream ended: its device over `ingest.device_rate_per_sec`.
    DeviceRate,
    /// A call refused: its principal over `grpc.principal_calls_per_sec`.
    PrincipalCalls,
    /// A connection closed at accept: `grpc.max_connections_per_peer` open from its address.
    ConnectionsPerPeer,
    /// A connection closed at accept: `grpc.max_connections` open.
    Connections,
    /// A stream of entries refused (`grpc.max_entry_streams[_per_principal]`).
    EntryStreams,
}

impl Limit {
    pub const ALL: [Limit; 5] = [
        Limit::DeviceRate,
        Limit::PrincipalCalls,
        Limit::ConnectionsPerPeer,
        Limit::Connections,
        Limit::EntryStreams,
    ];

    /// Its label in the metrics.
    pub fn label(self) -> &'static str {
        match self {
            Limit::DeviceRate => "device_rate",
            Limit::PrincipalCalls => "principal_calls",
            Limit::ConnectionsPerPeer => "connections_per_peer",
            Limit::Connections => "connections",
            Limit::EntryStreams => "entry_streams",
        }
    }

    /// Count one refusal.
    pub fn refused(self) {
        REFUSALS[self as usize].fetch_add(1, Relaxed);
    }

    /// Refusals since the process started.
    pub fn count(self) -> u64 {
        REFUSALS[self as usize].load(Relaxed)
    }
}

static REFUSALS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

/// Tokens are counted in millionths, so that the refill of a microsecond is exact.
const UNIT: u64 = 1_000_000;
/// Shards of the map, so that streams of different devices seldom wait for one lock.
const SHARDS: usize = 16;
/// A shard holding more devices than this forgets those whose bucket is full again (idle).
const PRUNE_AT: usize = 4096;

struct Bucket {
    /// Millionths of a token.
    tokens: u64,
    at: Instant,
}

#[derive(Default)]
struct Shard {
    buckets: HashMap<Box<[u8]>, Bucket>,
    /// Prune when this many buckets are held: twice what a prune left (at least [`PRUNE_AT`]),
    /// so that pruning costs O(1) per new device however many are active.
    prune_at: usize,
}

/// Token buckets by key: the devices' (by device id) and the principals' (by name).
pub struct TokenBuckets {
    rate: u64,
    burst: u64,
    shards: Vec<Mutex<Shard>>,
}

impl TokenBuckets {
    /// `rate` events a second, `burst` at once; `None` when `rate` is 0 (no limit).
    pub fn new(rate: u64, burst: u64) -> Option<TokenBuckets> {
        (rate > 0).then(|| TokenBuckets {
            rate,
            burst: burst.max(1),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        })
    }

    fn refilled(&self, b: &Bucket, now: Instant) -> u64 {
        let us = now.saturating_duration_since(b.at).as_micros();
        let add = us.saturating_mul(u128::from(self.rate));
        (u128::from(b.tokens) + add).min(u128::from(self.burst) * u128::from(UNIT)) as u64
    }

    /// Take one event of `device`'s; when it has none left, how long until it has one.
    pub fn take(&self, device: &[u8], now: Instant) -> Result<(), Duration> {
        let h = device.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
        });
        let mut shard = self.shards[(h as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let full = self.burst * UNIT;
        if shard.buckets.len() >= shard.prune_at.max(PRUNE_AT)
            && !shard.buckets.contains_key(device)
        {
            shard.buckets.retain(|_, b| self.refilled(b, now) < full);
            shard.prune_at = (shard.buckets.len() * 2).max(PRUNE_AT);
        }
        let b = shard.buckets.entry(device.into()).or_insert(Bucket {
            tokens: full,
            at: now,
        });
        b.tokens = self.refilled(b, now);
        b.at = now;
        if b.tokens >= UNIT {
            b.tokens -= UNIT;
            Ok(())
        } else {
            Err(Duration::from_micros((UNIT - b.tokens).div_ceil(self.rate)))
        }
    }
}

/// Streams of entries (`Tail`, `ListEntries`, `ListDeviceEntries`, `Checkpoints.List`): at
/// most `grpc.max_entry_streams` open at once over all clients (each holds a blocking thread or
/// follows the head for as long as its client keeps it), and at most
/// `grpc.max_entry_streams_per_principal` of one principal, so that one client cannot take
/// them all from the others.
pub struct EntryStreams {
    all: std::sync::Arc<tokio::sync::Semaphore>,
    per_principal: usize,
    open: std::sync::Arc<Mutex<HashMap<String, usize>>>,
}

/// One open stream's places, given back when the stream ends.
pub struct StreamRoom {
    _all: tokio::sync::OwnedSemaphorePermit,
    who: String,
    open: std::sync::Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for StreamRoom {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.who) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.who);
            }
        }
    }
}

impl EntryStreams {
    pub fn new(all: usize, per_principal: usize) -> EntryStreams {
        EntryStreams {
            all: std::sync::Arc::new(tokio::sync::Semaphore::new(all)),
            per_principal: per_principal.max(1),
            open: Default::default(),
        }
    }

    /// Room for one more stream of `who`'s, or `RESOURCE_EXHAUSTED` naming the bound.
    pub fn open(&self, who: &str) -> Result<StreamRoom, tonic::Status> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.get(who).copied().unwrap_or(0);
        if n >= self.per_principal {
            Limit::EntryStreams.refused();
            return Err(tonic::Status::resource_exhausted(format!(
                "{who} has {n} streams of entries open (grpc.max_entry_streams_per_principal); close one or retry later"
            )));
        }
        let all = self.all.clone().try_acquire_owned().map_err(|_| {
            Limit::EntryStreams.refused();
            tonic::Status::resource_exhausted(
                "every stream of entries ledgerd allows is open (grpc.max_entry_streams); close one or retry later",
            )
        })?;
        open.insert(who.to_string(), n + 1);
        Ok(StreamRoom {
            _all: all,
            who: who.to_string(),
            open: self.open.clone(),
        })
    }
}

/// The device id of an encoded `EventBody`: its field 1 when the body starts with it (as every
/// encoder writes it), else empty.
pub fn device_id(body: &[u8]) -> &[u8] {
    // Field 1, wire type 2 (length-delimited): tag byte 0x0a, then a varint length.
    if body.first() != Some(&0x0a) {
        return &[];
    }
    let (mut len, mut shift, mut i) = (0usize, 0u32, 1usize);
    while let Some(&b) = body.get(i) {
        if shift > 28 {
            return &[];
        }
        len |= usize::from(b & 0x7f) << shift;
        i += 1;
        if b & 0x80 == 0 {
            return body.get(i..i.saturating_add(len)).unwrap_or(&[]);
        }
        shift += 7;
    }
    &[]
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn the_device_id_is_read_from_an_encoded_body() {
        for id in ["t1", "", &"m".repeat(300)] {
            let body = ledger_core::proto::EventBody {
                device_id: id.into(),
                sequence: 7,
                ..Default::default()
            }
            .encode_to_vec();
            assert_eq!(device_id(&body), id.as_bytes());
        }
        for junk in [
            &[][..],
            &[0x0a],
            &[0x0a, 0x05, b'a'],
            &[0x10, 0x01],
            &[0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
        ] {
            assert!(device_id(junk).is_empty(), "{junk:?}");
        }
    }

    /// A burst, then the rate: what the bucket lets through over time, per device.
    #[test]
    fn a_device_gets_its_burst_then_its_rate_and_others_are_not_touched() {
        let r = TokenBuckets::new(100, 5).unwrap();
        let t0 = Instant::now();
        for _ in 0..5 {
            r.take(b"a", t0).unwrap();
        }
        let wait = r.take(b"a", t0).unwrap_err();
        assert_eq!(
            wait,
            Duration::from_millis(10),
            "one token every 10 ms at 100/s"
        );
        r.take(b"b", t0).expect("another device has its own bucket");
        assert!(r.take(b"a", t0 + Duration::from_millis(9)).is_err());
        r.take(b"a", t0 + Duration::from_millis(10)).unwrap();
        // A long pause refills up to the burst only.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..5 {
            r.take(b"a", later).unwrap();
        }
        assert!(r.take(b"a", later).is_err());
        assert!(TokenBuckets::new(0, 5).is_none(), "0 = no limit");
    }

    #[test]
    fn one_principal_cannot_take_every_entry_stream() {
        let e = EntryStreams::new(3, 2);
        let a1 = e.open("a").unwrap();
        let _a2 = e.open("a").unwrap();
        let s = e.open("a").err().unwrap();
        assert!(
            s.message().contains("max_entry_streams_per_principal"),
            "{s:?}"
        );
        let b1 = e.open("b").unwrap();
        let s = e.open("b").err().unwrap();
        assert!(s.message().contains("(grpc.max_entry_streams)"), "{s:?}");
        drop(a1);
        let _b2 = e.open("b").expect("a's place came back");
        drop(b1);
        assert_eq!(e.open.lock().unwrap().get("b"), Some(&1));
    }

    #[test]
    fn idle_devices_are_forgotten_when_many_come() {
        let r = TokenBuckets::new(1000, 10).unwrap();
        let n = SHARDS * PRUNE_AT * 2;
        let t0 = Instant::now();
        for i in 0..n {
            r.take(format!("d{i}").as_bytes(), t0).unwrap();
        }
        // A second later the first ones are full again (idle); as new ones come, they go.
        let later = t0 + Duration::from_secs(1);
        for i in 0..n {
            r.take(format!("e{i}").as_bytes(), later).unwrap();
        }
        let held: usize = r
            .shards
            .iter()
            .map(|s| s.lock().unwrap().buckets.len())
            .sum();
        assert!(held < 2 * n, "{held} buckets kept of {}", 2 * n);
        // The active ones kept their state: e0 has 9 tokens left, not a fresh 10.
        for _ in 0..9 {
            r.take(b"e0", later).unwrap();
        }
        assert!(r.take(b"e0", later).is_err());
    }
}
