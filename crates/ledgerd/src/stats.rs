//! Ingest figures since ledgerd started (`Query.GetIngestStats`): how long receipts took inside
//! ledgerd, how long the syncs took, and how much of the time the disk alone held receipts back.
//!
//! An operator polls them (`ledgerctl status`); `ledgerctl bench` reads them before and after
//! each run, so that a run's tail can be told apart: ledgerd's own work, or a disk that stalled
//! (no durable ledger acknowledges faster than its disk syncs). Counters are atomics updated
//! once per sync and once per receipt released, by the sync threads that release them: no lock
//! on the ingest path, except a short one after a sync longer than 10 ms.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use ledger_core::proto as v1;

/// Values below this many microseconds each have their own bucket.
const LINEAR: u64 = 16;
/// Buckets per octave above [`LINEAR`]: a bucket's bound is less than 1/8 above its smallest value.
const SUB: u64 = 8;
/// Octaves from 16 µs (2^4) to 2^36 µs (about 19 hours); longer values go in the last bucket.
const OCTAVES: u64 = 36 - 4;
/// Buckets in a [`Histogram`].
pub const BUCKETS: usize = (LINEAR + OCTAVES * SUB) as usize;

/// The bucket that holds `us` microseconds.
pub fn bucket_of(us: u64) -> usize {
    if us < LINEAR {
        return us as usize;
    }
    let octave = u64::from(63 - us.leading_zeros());
    if octave >= 4 + OCTAVES {
        return BUCKETS - 1;
    }
    let sub = (us >> (octave - 3)) & (SUB - 1);
    (LINEAR + (octave - 4) * SUB + sub) as usize
}

/// The largest value bucket `i` holds.
pub fn bound_of(i: usize) -> u64 {
    let i = i as u64;
    if i < LINEAR {
        return i;
    }
    let (octave, sub) = (4 + (i - LINEAR) / SUB, (i - LINEAR) % SUB);
    ((SUB + sub + 1) << (octave - 3)) - 1
}

/// Nearest-rank quantile `p` (0 < p ≤ 1) of a histogram, in microseconds: the bound of the bucket
/// it falls in, or the largest value if that is lower. Never below the true quantile, and less
/// than 1/8 above it. 0 for an empty histogram.
pub fn quantile_us(h: &v1::LatencyHistogram, p: f64) -> u64 {
    let count: u64 = h.buckets.iter().map(|b| b.count).sum();
    if count == 0 {
        return 0;
    }
    let rank = ((p * count as f64).ceil() as u64).clamp(1, count);
    let mut seen = 0;
    for b in &h.buckets {
        seen += b.count;
        if seen >= rank {
            return b.le_us.min(h.max_us);
        }
    }
    h.max_us
}

/// Round bounds (µs) counted exactly besides the fine buckets, for the Prometheus endpoint's
/// `le` labels ([`crate::metrics`]), where operators expect 1 ms, 10 ms, 100 ms, ...
pub const EXPORT_BOUNDS_US: [u64; 15] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 10_000_000,
];

/// Per exported histogram, how many values fell at or under each of [`EXPORT_BOUNDS_US`] and
/// above the bound before it (not cumulated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    pub receipts: [u64; EXPORT_BOUNDS_US.len()],
    /// queued, verify, apply, durable (as in [`v1::IngestStats`]).
    pub stages: [[u64; EXPORT_BOUNDS_US.len()]; 4],
    pub syncs: [u64; EXPORT_BOUNDS_US.len()],
}

/// A latency distribution with lock-free counters (see [`v1::LatencyHistogram`]).
pub struct Histogram {
    counts: Box<[AtomicU64]>,
    /// Values at or under each of [`EXPORT_BOUNDS_US`] and above the one before.
    exported: [AtomicU64; EXPORT_BOUNDS_US.len()],
    sum_us: AtomicU64,
    max_us: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            exported: Default::default(),
            sum_us: AtomicU64::new(0),
            max_us: AtomicU64::new(0),
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Histogram {
    pub fn record(&self, d: Duration) {
        self.record_n(d, 1);
    }

    /// `n` values of `d` each (the receipts of a group that spent `d` in a stage together).
    pub fn record_n(&self, d: Duration, n: u64) {
        if n == 0 {
            return;
        }
        let us = micros(d);
        self.counts[bucket_of(us)].fetch_add(n, Relaxed);
        if let Some(c) = self
            .exported
            .get(EXPORT_BOUNDS_US.partition_point(|b| *b < us))
        {
            c.fetch_add(n, Relaxed);
        }
        self.sum_us.fetch_add(us.saturating_mul(n), Relaxed);
        self.max_us.fetch_max(us, Relaxed);
    }

    fn exported(&self) -> [u64; EXPORT_BOUNDS_US.len()] {
        std::array::from_fn(|i| self.exported[i].load(Relaxed))
    }

    pub fn to_proto(&self) -> v1::LatencyHistogram {
        let buckets: Vec<v1::LatencyBucket> = self
            .counts
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let count = c.load(Relaxed);
                (count > 0).then(|| v1::LatencyBucket {
                    le_us: bound_of(i),
                    count,
                })
            })
            .collect();
        v1::LatencyHistogram {
            count: buckets.iter().map(|b| b.count).sum(),
            buckets,
            sum_us: self.sum_us.load(Relaxed),
            max_us: self.max_us.load(Relaxed),
        }
    }
}

/// A sync that has run this long holds every envelope arriving meanwhile past a 10 ms receipt.
pub const LONG_SYNC: Duration = Duration::from_millis(10);

/// The pipeline's figures (see [`v1::IngestStats`]).
pub struct IngestStats {
    started: Instant,
    accepted: AtomicU64,
    groups: AtomicU64,
    receipts: Histogram,
    /// Where the receipts' time went, stage by stage (see [`v1::IngestStats`]).
    queued: Histogram,
    verify: Histogram,
    apply: Histogram,
    durable: Histogram,
    syncs: Histogram,
    /// The syncs' spans past their first 10 ms, overlaps counted once: the total, and the end of
    /// the latest span counted. (A span that ends before one counted already loses the part
    /// before that one's start: a lower bound, off by the gap between two syncs' starts.)
    over_long: std::sync::Mutex<(Duration, Option<Instant>)>,
    slow_syncs: AtomicU64,
    hold_us: AtomicU64,
    bad_signatures: AtomicU64,
    unproven: AtomicU64,
    /// Steps of the wall clock, counted by the appender ([`ledger_store::Appender::watch_clock`]).
    clock_steps: std::sync::Arc<AtomicU64>,
    /// Receipts released, by status and reject reason ([`IngestStats::receipts`]).
    by_outcome: [[AtomicU64; REASONS]; STATUSES],
}

/// `v1::ReceiptStatus` values counted apart (0..=4); others count as 0.
pub const STATUSES: usize = 5;
/// `v1::RejectReason` values counted apart (0..=9); others count as 0.
pub const REASONS: usize = 10;

impl Default for IngestStats {
    fn default() -> Self {
        IngestStats::new(Instant::now())
    }
}

impl IngestStats {
    pub fn new(started: Instant) -> IngestStats {
        IngestStats {
            started,
            accepted: AtomicU64::new(0),
            groups: AtomicU64::new(0),
            receipts: Histogram::default(),
            queued: Histogram::default(),
            verify: Histogram::default(),
            apply: Histogram::default(),
            durable: Histogram::default(),
            syncs: Histogram::default(),
            over_long: std::sync::Mutex::new((Duration::ZERO, None)),
            slow_syncs: AtomicU64::new(0),
            hold_us: AtomicU64::new(0),
            bad_signatures: AtomicU64::new(0),
            unproven: AtomicU64::new(0),
            clock_steps: Default::default(),
            by_outcome: Default::default(),
        }
    }

    /// Receipts released to their streams: counted by status and reason (one relaxed atomic
    /// add each, by the sync thread that releases them).
    pub fn receipts(&self, receipts: &[v1::Receipt]) {
        for r in receipts {
            let status = usize::try_from(r.status)
                .ok()
                .filter(|s| *s < STATUSES)
                .unwrap_or(0);
            let reason = usize::try_from(r.reason)
                .ok()
                .filter(|s| *s < REASONS)
                .unwrap_or(0);
            self.by_outcome[status][reason].fetch_add(1, Relaxed);
        }
    }

    /// Receipts released so far, by `[status][reason]` (proto values).
    pub fn receipt_counts(&self) -> [[u64; REASONS]; STATUSES] {
        std::array::from_fn(|s| std::array::from_fn(|r| self.by_outcome[s][r].load(Relaxed)))
    }

    /// A sync that ran from `start` for `took`; `slow` says whether it counts as a stall.
    pub fn sync(&self, start: Instant, took: Duration, slow: bool) {
        self.syncs.record(took);
        if slow {
            self.slow_syncs.fetch_add(1, Relaxed);
        }
        if took > LONG_SYNC {
            let (from, to) = (start + LONG_SYNC, start + took);
            let mut g = self.over_long.lock().unwrap_or_else(|e| e.into_inner());
            let from = g.1.map_or(from, |end| from.max(end));
            if to > from {
                g.0 += to - from;
            }
            g.1 = Some(g.1.map_or(to, |end| end.max(to)));
        }
    }

    /// A durable group released at `now`: when each of its envelopes was taken off its stream,
    /// how many were accepted, and when the group passed the stages.
    pub fn group(
        &self,
        now: Instant,
        taken: impl IntoIterator<Item = Instant>,
        accepted: u64,
        stamps: &crate::pipeline::Stamps,
    ) {
        self.groups.fetch_add(1, Relaxed);
        self.accepted.fetch_add(accepted, Relaxed);
        let mut n = 0;
        for t in taken {
            self.receipts.record(now.saturating_duration_since(t));
            self.queued
                .record(stamps.closed.saturating_duration_since(t));
            n += 1;
        }
        let since = |a: Instant, b: Instant| b.saturating_duration_since(a);
        self.verify
            .record_n(since(stamps.closed, stamps.verified), n);
        self.apply
            .record_n(since(stamps.verified, stamps.applied), n);
        self.durable.record_n(since(stamps.applied, now), n);
    }

    /// Receipts refusing envelopes for a bad signature, released.
    pub fn bad_signatures(&self, n: u64) {
        self.bad_signatures.fetch_add(n, Relaxed);
    }

    /// An envelope from a stream that has not shown it holds a key (checked apart).
    /// The counter of the wall clock's steps, for the appender.
    pub fn clock_steps(&self) -> std::sync::Arc<AtomicU64> {
        self.clock_steps.clone()
    }

    pub fn unproven(&self) {
        self.unproven.fetch_add(1, Relaxed);
    }

    /// The hold given to the latest group.
    pub fn hold(&self, hold: Duration) {
        self.hold_us.store(micros(hold), Relaxed);
    }

    /// The counts under the exported round bounds.
    pub fn exported(&self) -> Exported {
        Exported {
            receipts: self.receipts.exported(),
            stages: [
                self.queued.exported(),
                self.verify.exported(),
                self.apply.exported(),
                self.durable.exported(),
            ],
            syncs: self.syncs.exported(),
        }
    }

    /// Log the figures since start (at shutdown): what an operator reads after the fact.
    pub fn log_summary(&self, now: Instant) {
        let s = self.to_proto(now);
        let (r, y) = (
            s.receipt_latency.unwrap_or_default(),
            s.sync_latency.unwrap_or_default(),
        );
        let ms = |us: u64| us as f64 / 1000.0;
        tracing::info!(
            accepted = s.accepted,
            groups = s.groups,
            receipt_p50_ms = ms(quantile_us(&r, 0.5)),
            receipt_p99_ms = ms(quantile_us(&r, 0.99)),
            receipt_max_ms = ms(r.max_us),
            syncs = y.count,
            sync_p50_ms = ms(quantile_us(&y, 0.5)),
            sync_p99_ms = ms(quantile_us(&y, 0.99)),
            sync_max_ms = ms(y.max_us),
            sync_over_10ms_ms = ms(s.sync_over_10ms_us),
            slow_syncs = s.slow_syncs,
            "ingest since start ({} s)",
            s.uptime_ms / 1000
        );
    }

    pub fn to_proto(&self, now: Instant) -> v1::IngestStats {
        let over_long = self.over_long.lock().unwrap_or_else(|e| e.into_inner()).0;
        v1::IngestStats {
            uptime_ms: u64::try_from(now.saturating_duration_since(self.started).as_millis())
                .unwrap_or(u64::MAX),
            accepted: self.accepted.load(Relaxed),
            groups: self.groups.load(Relaxed),
            receipt_latency: Some(self.receipts.to_proto()),
            queued_latency: Some(self.queued.to_proto()),
            verify_latency: Some(self.verify.to_proto()),
            apply_latency: Some(self.apply.to_proto()),
            durable_latency: Some(self.durable.to_proto()),
            sync_latency: Some(self.syncs.to_proto()),
            sync_over_10ms_us: micros(over_long),
            slow_syncs: self.slow_syncs.load(Relaxed),
            hold_us: self.hold_us.load(Relaxed),
            cpu_us: crate::load::process_cpu().map(micros).unwrap_or(0),
            bad_signatures: self.bad_signatures.load(Relaxed),
            unproven_envelopes: self.unproven.load(Relaxed),
            clock_steps: self.clock_steps.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lands_in_a_bucket_whose_bound_is_at_most_an_eighth_above_it() {
        let mut values: Vec<u64> = (0..5000).collect();
        for shift in 12..40 {
            for k in [0u64, 1, 3, 7] {
                values.push((1 << shift) + k * ((1 << shift) / 8) - 1);
                values.push((1 << shift) + k * ((1 << shift) / 8));
            }
        }
        for v in values {
            let i = bucket_of(v);
            assert!(i < BUCKETS, "{v}");
            if v >= 1 << 36 {
                assert_eq!(i, BUCKETS - 1);
                continue;
            }
            let bound = bound_of(i);
            assert!(bound >= v, "{v} in bucket {i} bounded {bound}");
            assert!(
                bound * 8 < v.max(1) * 9 + 8,
                "{v} in bucket {i} bounded {bound}"
            );
            // The bucket below ends just under it.
            if i > 0 {
                assert!(
                    bound_of(i - 1) < v,
                    "{v}: bucket {} bounded {}",
                    i - 1,
                    bound_of(i - 1)
                );
            }
        }
    }

    #[test]
    fn the_bounds_increase_and_the_buckets_have_no_gaps() {
        for i in 1..BUCKETS {
            assert!(bound_of(i) > bound_of(i - 1));
            assert_eq!(
                bucket_of(bound_of(i - 1) + 1),
                i,
                "the value after bucket {}",
                i - 1
            );
            assert_eq!(bucket_of(bound_of(i)), i);
        }
        assert_eq!(bound_of(BUCKETS - 1), (1 << 36) - 1);
    }

    #[test]
    fn a_histogram_reports_its_non_empty_buckets_count_sum_and_max() {
        let h = Histogram::default();
        for us in [3, 3, 100, 2_000_000] {
            h.record(Duration::from_micros(us));
        }
        let p = h.to_proto();
        assert_eq!((p.count, p.sum_us, p.max_us), (4, 2_000_106, 2_000_000));
        let pairs: Vec<(u64, u64)> = p.buckets.iter().map(|b| (b.le_us, b.count)).collect();
        assert_eq!(
            pairs,
            vec![(3, 2), (103, 1), (bound_of(bucket_of(2_000_000)), 1)]
        );
    }

    #[test]
    fn quantiles_are_the_bound_of_the_nearest_rank_bucket_capped_by_the_max() {
        let b = |le_us, count| v1::LatencyBucket { le_us, count };
        let x = v1::LatencyHistogram {
            buckets: vec![b(3, 50), b(1087, 49), b(9215, 1)],
            count: 100,
            sum_us: 0,
            max_us: 8300,
        };
        assert_eq!(quantile_us(&x, 0.5), 3);
        assert_eq!(quantile_us(&x, 0.51), 1087);
        assert_eq!(quantile_us(&x, 0.99), 1087);
        assert_eq!(quantile_us(&x, 1.0), 8300);
        assert_eq!(quantile_us(&v1::LatencyHistogram::default(), 0.99), 0);
        // Read from a real histogram: never low, less than 1/8 high.
        let h = Histogram::default();
        for us in 1..=10_000u64 {
            h.record(Duration::from_micros(us * 7));
        }
        let p = h.to_proto();
        for q in [0.5, 0.9, 0.99, 0.999] {
            let exact = (q * 10_000f64).ceil() as u64 * 7;
            let got = quantile_us(&p, q);
            assert!(
                got >= exact && got * 8 < exact * 9,
                "{q}: {got} against {exact}"
            );
        }
    }

    #[test]
    fn the_stalled_time_counts_overlapping_syncs_once() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // A 300 ms sync and a 298 ms one that started 1 ms later, both stuck on one stall: the
        // union of their spans past 10 ms is [10, 300]. Ending in this order it counts whole;
        // in the other, the first millisecond of the earlier span is lost (a lower bound).
        for (first, second, want) in [
            ((t0, ms(300)), (t0 + ms(1), ms(298)), 290),
            ((t0 + ms(1), ms(298)), (t0, ms(300)), 289),
        ] {
            let s = IngestStats::new(t0);
            s.sync(t0, ms(9), false); // short syncs add nothing
            s.sync(first.0, first.1, true);
            s.sync(second.0, second.1, true);
            s.sync(t0 + ms(1000), ms(30), false); // a later sync adds its last 20 ms
            let p = s.to_proto(t0 + ms(2000));
            assert_eq!(p.sync_over_10ms_us, (want + 20) * 1000);
            assert_eq!(p.slow_syncs, 2);
            assert_eq!(p.sync_latency.unwrap().count, 4);
            assert_eq!(p.uptime_ms, 2000);
        }
    }

    #[test]
    fn the_answer_carries_the_process_cpu_time_and_it_only_grows() {
        let s = IngestStats::new(Instant::now());
        let first = s.to_proto(Instant::now()).cpu_us;
        assert!(first > 0, "this process has run");
        // Burn CPU, reading the figure as it goes, until it shows 10 ms more. The wall-clock
        // bound is generous, so that a busy host (which takes the CPU away for a while) does
        // not fail the test; a figure that never moves still does.
        let until = Instant::now() + Duration::from_secs(5);
        let mut second = first;
        while second < first + 10_000 && Instant::now() < until {
            second = s.to_proto(Instant::now()).cpu_us;
        }
        assert!(second >= first + 10_000, "{first} then {second}");
    }

    #[test]
    fn a_group_counts_its_receipts_from_when_each_was_taken_and_stage_by_stage() {
        let t0 = Instant::now();
        let s = IngestStats::new(t0);
        let ms = Duration::from_millis;
        // Taken at 0 and 1 ms, the group closed at 2, verified at 3.5, applied at 4, released at 6.
        let stamps = crate::pipeline::Stamps {
            closed: t0 + ms(2),
            verified: t0 + Duration::from_micros(3500),
            applied: t0 + ms(4),
        };
        s.group(t0 + ms(6), [t0, t0 + ms(1)], 1, &stamps);
        s.group(t0 + ms(9), [], 0, &stamps);
        s.hold(Duration::from_micros(1500));
        let p = s.to_proto(t0 + ms(10));
        assert_eq!((p.groups, p.accepted, p.hold_us), (2, 1, 1500));
        let sums = |h: Option<v1::LatencyHistogram>| {
            let h = h.unwrap();
            (h.count, h.sum_us, h.max_us)
        };
        // Each receipt's stages add up to its time: 11 ms for the two.
        assert_eq!(sums(p.receipt_latency), (2, 11_000, 6000));
        assert_eq!(sums(p.queued_latency), (2, 3000, 2000));
        assert_eq!(sums(p.verify_latency), (2, 3000, 1500));
        assert_eq!(sums(p.apply_latency), (2, 1000, 500));
        assert_eq!(sums(p.durable_latency), (2, 4000, 2000));
    }
}
