//! ledgerd's ingest figures (`Query.GetIngestStats`) as `ledgerctl status` and `ledgerctl bench`
//! show them: since ledgerd started, or between two answers (a bench run).

use ledger_core::proto::{self as v1, query_client::QueryClient};
use ledgerd::pipeline::SLOW_SYNC;
use ledgerd::stats::quantile_us;

use crate::disk_check::STALL_SHARE_LIMIT;

/// ledgerd's figures now, or `None` from a ledgerd too old to give them.
pub async fn fetch(
    ch: &tonic::transport::Channel,
) -> Result<Option<v1::IngestStats>, tonic::Status> {
    match QueryClient::new(ch.clone())
        .get_ingest_stats(v1::GetIngestStatsRequest {})
        .await
    {
        Ok(r) => Ok(Some(r.into_inner())),
        Err(s) if s.code() == tonic::Code::Unimplemented => Ok(None),
        Err(s) => Err(s),
    }
}

/// What was recorded after `before` and up to `after`. The largest value of the difference is
/// not known exactly: it is `after`'s when that grew, otherwise the bound of the highest bucket
/// that grew (never low).
fn histogram_since(
    after: &Option<v1::LatencyHistogram>,
    before: &Option<v1::LatencyHistogram>,
) -> v1::LatencyHistogram {
    let (after, before) = (
        after.clone().unwrap_or_default(),
        before.clone().unwrap_or_default(),
    );
    let earlier: std::collections::HashMap<u64, u64> =
        before.buckets.iter().map(|b| (b.le_us, b.count)).collect();
    let buckets: Vec<v1::LatencyBucket> = after
        .buckets
        .iter()
        .filter_map(|b| {
            let count = b
                .count
                .saturating_sub(earlier.get(&b.le_us).copied().unwrap_or(0));
            (count > 0).then_some(v1::LatencyBucket {
                le_us: b.le_us,
                count,
            })
        })
        .collect();
    let max_us = if after.max_us > before.max_us {
        after.max_us
    } else {
        buckets.last().map_or(0, |b| b.le_us.min(after.max_us))
    };
    v1::LatencyHistogram {
        count: buckets.iter().map(|b| b.count).sum(),
        buckets,
        sum_us: after.sum_us.saturating_sub(before.sum_us),
        max_us,
    }
}

/// The figures of a span of ledgerd's time: since it started, or between two answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub seconds: f64,
    pub accepted: u64,
    pub groups: u64,
    pub receipts: v1::LatencyHistogram,
    /// Where the receipts' time went: queued (for a group), the batch check, the apply, durable
    /// (waiting for and in a sync); see [`STAGES`].
    pub stages: [v1::LatencyHistogram; 4],
    pub syncs: v1::LatencyHistogram,
    /// Time in which a sync had run for more than 10 ms.
    pub over_10ms_us: u64,
    pub slow_syncs: u64,
    /// The hold given to the latest group, µs.
    pub hold_us: u64,
    /// CPU time ledgerd's process used in the span, µs (0: it does not say).
    pub cpu_us: u64,
    /// Envelopes refused for a bad signature.
    pub bad_signatures: u64,
    /// Envelopes from streams not yet shown to hold a device key.
    pub unproven_envelopes: u64,
}

/// The names of [`Span::stages`], in order.
pub const STAGES: [&str; 4] = ["queued", "verify", "apply", "durable"];

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl Span {
    /// Since ledgerd started.
    pub fn since_start(s: &v1::IngestStats) -> Span {
        Span::between(&v1::IngestStats::default(), s)
    }

    /// From `before` to `after` (two answers of the same ledgerd process).
    pub fn between(before: &v1::IngestStats, after: &v1::IngestStats) -> Span {
        Span {
            seconds: after.uptime_ms.saturating_sub(before.uptime_ms) as f64 / 1000.0,
            accepted: after.accepted.saturating_sub(before.accepted),
            groups: after.groups.saturating_sub(before.groups),
            receipts: histogram_since(&after.receipt_latency, &before.receipt_latency),
            stages: [
                histogram_since(&after.queued_latency, &before.queued_latency),
                histogram_since(&after.verify_latency, &before.verify_latency),
                histogram_since(&after.apply_latency, &before.apply_latency),
                histogram_since(&after.durable_latency, &before.durable_latency),
            ],
            syncs: histogram_since(&after.sync_latency, &before.sync_latency),
            over_10ms_us: after
                .sync_over_10ms_us
                .saturating_sub(before.sync_over_10ms_us),
            slow_syncs: after.slow_syncs.saturating_sub(before.slow_syncs),
            hold_us: after.hold_us,
            cpu_us: after.cpu_us.saturating_sub(before.cpu_us),
            bad_signatures: after.bad_signatures.saturating_sub(before.bad_signatures),
            unproven_envelopes: after
                .unproven_envelopes
                .saturating_sub(before.unproven_envelopes),
        }
    }

    /// ledgerd's CPU time per receipt released in the span, µs, and the cores it used on
    /// average. `None` when it gave no CPU time or released nothing.
    pub fn cpu(&self) -> Option<(f64, f64)> {
        if self.cpu_us == 0 || self.receipts.count == 0 || self.seconds <= 0.0 {
            return None;
        }
        Some((
            self.cpu_us as f64 / self.receipts.count as f64,
            self.cpu_us as f64 / 1e6 / self.seconds,
        ))
    }

    /// The share of the span's time in which a sync had run for more than 10 ms, percent: the
    /// share of the envelopes arriving at an even pace that the disk alone held past 10 ms.
    pub fn over_10ms_percent(&self) -> f64 {
        if self.seconds > 0.0 {
            (ms(self.over_10ms_us) / 10.0 / self.seconds).min(100.0)
        } else {
            0.0
        }
    }

    /// Whether the disk alone put a receipt p99 of 10 ms out of reach: a sync had run over
    /// 10 ms for more than 1% of the span ([`STALL_SHARE_LIMIT`], `ledgerctl disk-check`'s
    /// verdict), so more than 1% of the envelopes arriving at an even pace waited over 10 ms for
    /// the disk, whatever ledgerd did. (Below that the disk may still
    /// have cost the p99 its target; this says only when no ledger could have met it.)
    pub fn disk_denies_10ms_p99(&self) -> bool {
        self.over_10ms_percent() > STALL_SHARE_LIMIT * 100.0
    }

    /// One line (without a trailing newline).
    pub fn line(&self) -> String {
        let q = |h: &v1::LatencyHistogram| {
            format!(
                "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                ms(quantile_us(h, 0.5)),
                ms(quantile_us(h, 0.99)),
                ms(h.max_us)
            )
        };
        let per_group = if self.groups > 0 {
            format!(
                " ({:.1} receipts a group)",
                self.receipts.count as f64 / self.groups as f64
            )
        } else {
            String::new()
        };
        let cpu = match self.cpu() {
            Some((per, cores)) => format!(", its CPU {per:.1} µs a receipt ({cores:.2} cores)"),
            None => String::new(),
        };
        format!(
            "ledgerd: {} receipts in {} groups{per_group}{cpu}, from stream to release {}; {} syncs (flush + fsync) {}; \
             a sync had run over 10 ms for {:.2}% of the time, {} took {} ms or more{}",
            self.receipts.count,
            self.groups,
            q(&self.receipts),
            self.syncs.count,
            q(&self.syncs),
            self.over_10ms_percent(),
            self.slow_syncs,
            SLOW_SYNC.as_millis(),
            if self.disk_denies_10ms_p99() {
                ": the disk alone put a receipt p99 of 10 ms out of reach"
            } else {
                ""
            }
        )
    }

    /// Where the receipts' time went inside ledgerd, stage by stage: the means add up to the
    /// receipts' mean. `None` before any receipt (or from a ledgerd that does not say).
    pub fn stages_line(&self) -> Option<String> {
        if self.stages.iter().any(|h| h.count == 0) {
            return None;
        }
        let mean = |h: &v1::LatencyHistogram| ms(h.sum_us) / h.count as f64;
        let parts: Vec<String> = STAGES
            .iter()
            .zip(&self.stages)
            .map(|(name, h)| format!("{name} {:.2} / {:.2}", mean(h), ms(quantile_us(h, 0.99))))
            .collect();
        Some(format!(
            "ledgerd's stages, mean / p99 ms: {} (receipts {:.2} / {:.2}; queued: for the verifier to close a group; durable: appended to released by a sync)",
            parts.join(", "),
            mean(&self.receipts),
            ms(quantile_us(&self.receipts, 0.99))
        ))
    }

    pub fn json(&self) -> serde_json::Value {
        let q = |h: &v1::LatencyHistogram| {
            serde_json::json!({
                "count": h.count, "p50": ms(quantile_us(h, 0.5)), "p90": ms(quantile_us(h, 0.9)),
                "p99": ms(quantile_us(h, 0.99)), "max": ms(h.max_us),
            })
        };
        let stages: serde_json::Map<String, serde_json::Value> = STAGES
            .iter()
            .zip(&self.stages)
            .map(|(name, h)| {
                let mut v = q(h);
                v["mean"] = (ms(h.sum_us) / h.count.max(1) as f64).into();
                (name.to_string(), v)
            })
            .collect();
        serde_json::json!({
            "seconds": self.seconds, "accepted": self.accepted, "groups": self.groups,
            "stage_latency_ms": stages,
            "receipt_latency_ms": q(&self.receipts), "sync_latency_ms": q(&self.syncs),
            "sync_over_10ms_percent": self.over_10ms_percent(), "slow_syncs": self.slow_syncs,
            "disk_denies_10ms_p99": self.disk_denies_10ms_p99(), "hold_us": self.hold_us,
            "cpu_us_per_receipt": self.cpu().map(|c| c.0), "cores": self.cpu().map(|c| c.1),
            "bad_signatures": self.bad_signatures, "unproven_envelopes": self.unproven_envelopes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(u64, u64)], max_us: u64) -> v1::LatencyHistogram {
        v1::LatencyHistogram {
            buckets: pairs
                .iter()
                .map(|&(le_us, count)| v1::LatencyBucket { le_us, count })
                .collect(),
            count: pairs.iter().map(|p| p.1).sum(),
            sum_us: pairs.iter().map(|p| p.0 * p.1).sum(),
            max_us,
        }
    }

    #[test]
    fn a_span_between_two_answers_holds_only_what_came_between() {
        let before = v1::IngestStats {
            uptime_ms: 1_000,
            accepted: 10,
            groups: 2,
            receipt_latency: Some(h(&[(3, 10)], 3)),
            sync_latency: Some(h(&[(511, 2)], 500)),
            sync_over_10ms_us: 5_000,
            slow_syncs: 0,
            hold_us: 0,
            ..Default::default()
        };
        let after = v1::IngestStats {
            uptime_ms: 11_000,
            accepted: 110,
            groups: 12,
            receipt_latency: Some(h(&[(3, 10), (1087, 100)], 1050)),
            sync_latency: Some(h(&[(511, 11), (61439, 1)], 60_000)),
            sync_over_10ms_us: 55_000,
            slow_syncs: 1,
            hold_us: 1500,
            cpu_us: 3_250_000,
            ..Default::default()
        };
        let before = v1::IngestStats {
            cpu_us: 1_000_000,
            ..before
        };
        let s = Span::between(&before, &after);
        assert_eq!((s.seconds, s.accepted, s.groups), (10.0, 100, 10));
        assert_eq!(s.receipts, h(&[(1087, 100)], 1050));
        assert_eq!(s.syncs.count, 10);
        assert_eq!(quantile_us(&s.syncs, 0.5), 511);
        assert_eq!(s.syncs.max_us, 60_000);
        assert!((s.over_10ms_percent() - 0.5).abs() < 1e-9);
        assert!(!s.disk_denies_10ms_p99(), "0.5% of the time");
        let line = s.line();
        assert!(
            line.contains(
                "100 receipts in 10 groups (10.0 receipts a group), its CPU 22500.0 µs a receipt \
                 (0.23 cores)"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("0.50% of the time, 1 took 50 ms or more"),
            "{line}"
        );
        assert_eq!(s.stages_line(), None, "no stage figures in these answers");
        let j = s.json();
        assert_eq!(j["sync_latency_ms"]["max"], 60.0);
        assert_eq!(j["receipt_latency_ms"]["p99"], 1.05);
        assert_eq!(j["disk_denies_10ms_p99"], false);
        assert_eq!(j["cpu_us_per_receipt"], 22_500.0);
        assert_eq!(j["cores"], 0.225);
        // A ledgerd that gives no CPU time: no CPU figure, rather than a wrong one.
        let quiet = Span::between(
            &v1::IngestStats {
                cpu_us: 0,
                ..before.clone()
            },
            &v1::IngestStats {
                cpu_us: 0,
                ..after.clone()
            },
        );
        assert_eq!(quiet.cpu(), None);
        assert!(!quiet.line().contains("CPU"), "{}", quiet.line());
        assert_eq!(quiet.json()["cpu_us_per_receipt"], serde_json::Value::Null);
        // 100 ms of the 10 s: 1%, still within reach (the 99th percentile may not wait); 101 ms:
        // the disk's own.
        let at_limit = v1::IngestStats {
            sync_over_10ms_us: 105_000,
            ..after.clone()
        };
        assert!(!Span::between(&before, &at_limit).disk_denies_10ms_p99());
        let worse = v1::IngestStats {
            sync_over_10ms_us: 106_000,
            ..after
        };
        let s = Span::between(&before, &worse);
        assert!(s.disk_denies_10ms_p99());
        assert!(s.line().ends_with("1.01% of the time, 1 took 50 ms or more: the disk alone put a receipt p99 of 10 ms out of reach"), "{}", s.line());
    }

    #[test]
    fn when_the_max_did_not_grow_the_span_takes_the_bound_of_its_highest_bucket() {
        let before = v1::IngestStats {
            sync_latency: Some(h(&[(511, 1), (99327, 1)], 99_000)),
            ..Default::default()
        };
        let after = v1::IngestStats {
            uptime_ms: 1000,
            sync_latency: Some(h(&[(511, 5), (99327, 1)], 99_000)),
            ..Default::default()
        };
        let s = Span::between(&before, &after);
        assert_eq!((s.syncs.count, s.syncs.max_us), (4, 511));
        assert!(!s.disk_denies_10ms_p99());
        assert_eq!(Span::since_start(&after).syncs.max_us, 99_000);
    }
}

#[cfg(test)]
mod stage_tests {
    use super::*;

    #[test]
    fn the_stages_line_gives_each_stage_mean_and_p99() {
        let one = |us: u64| {
            Some(v1::LatencyHistogram {
                buckets: vec![v1::LatencyBucket {
                    le_us: us,
                    count: 2,
                }],
                count: 2,
                sum_us: 2 * us,
                max_us: us,
            })
        };
        let s = Span::since_start(&v1::IngestStats {
            uptime_ms: 1000,
            receipt_latency: one(4000),
            queued_latency: one(1500),
            verify_latency: one(1000),
            apply_latency: one(500),
            durable_latency: one(1000),
            ..Default::default()
        });
        assert_eq!(
            s.stages_line().unwrap(),
            "ledgerd's stages, mean / p99 ms: queued 1.50 / 1.50, verify 1.00 / 1.00, apply \
             0.50 / 0.50, durable 1.00 / 1.00 (receipts 4.00 / 4.00; queued: for the verifier \
             to close a group; durable: appended to released by a sync)"
        );
        assert_eq!(s.json()["stage_latency_ms"]["apply"]["mean"], 0.5);
    }
}
