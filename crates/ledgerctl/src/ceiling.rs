//! The signature ceiling (issue 43): how many event signatures this machine can check a second
//! with every core at it, measured the way ingest checks them (`ledger_core::signing::
//! verify_many`: groups of 2,048 signatures by 8 devices, the peak's group). `ledgerctl bench`
//! measures it in the same run, after its loads, and states its peak as a share of it: the
//! machine's own limit for durable signed ingest, so figures from different or noisy machines
//! compare as ratios.

use std::time::{Duration, Instant};

use anyhow::bail;
use ed25519_dalek::SigningKey;
use ledger_core::signing::{EVENT_DOMAIN, SignatureCheck, sign, signed_message, verify_many};

/// Signatures in a group, and the devices that signed them.
const GROUP: usize = 2048;
const DEVICES: usize = 8;

/// What one measurement found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    /// Signatures checked a second, all threads together.
    pub per_second: f64,
    /// Threads that checked (one per core).
    pub threads: usize,
    pub seconds: f64,
}

impl Ceiling {
    /// `threads` threads check groups for about `for_how_long` each; the rate is the sum of
    /// theirs. Every signature must verify: a failed one means the measurement checked nothing
    /// worth counting.
    pub fn measure(threads: usize, for_how_long: Duration) -> anyhow::Result<Ceiling> {
        let threads = threads.max(1);
        let group = group();
        let started = Instant::now();
        let rates = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let t0 = Instant::now();
                        let mut checked = 0usize;
                        loop {
                            let verdicts = verify_many(&group);
                            if verdicts.iter().any(|ok| !ok) {
                                return None;
                            }
                            checked += verdicts.len();
                            let spent = t0.elapsed();
                            if spent >= for_how_long {
                                return Some(checked as f64 / spent.as_secs_f64());
                            }
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().ok().flatten())
                .collect::<Vec<_>>()
        });
        let mut per_second = 0.0;
        for r in rates {
            match r {
                Some(r) => per_second += r,
                None => bail!("the signature ceiling's check refused a valid signature"),
            }
        }
        Ok(Ceiling {
            per_second,
            threads,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// `events_per_second` as a share of the ceiling.
    pub fn share(&self, events_per_second: f64) -> f64 {
        if self.per_second > 0.0 {
            events_per_second / self.per_second
        } else {
            0.0
        }
    }

    /// One line: the ceiling, and the peak against it.
    pub fn line(&self, peak: f64) -> String {
        self.line_for(&format!("peak {peak:.0} events/s"), peak)
    }

    /// One line: the ceiling, and `what` (which goes at `rate` a second) against it.
    pub fn line_for(&self, what: &str, rate: f64) -> String {
        format!(
            "signature ceiling: {:.0} signatures/s on {} thread{} ({GROUP}-signature groups by {DEVICES} devices, {:.1} s); {what} = {:.1}% of it",
            self.per_second,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.seconds,
            100.0 * self.share(rate)
        )
    }

    pub fn json(&self, peak: f64) -> serde_json::Value {
        serde_json::json!({
            "run": "signature ceiling",
            "signatures_per_second": self.per_second,
            "threads": self.threads,
            "seconds": self.seconds,
            "group": GROUP,
            "devices": DEVICES,
            "peak_events_per_second": peak,
            "peak_share": self.share(peak),
        })
    }
}

/// A group as ingest sees one at the peak: distinct bodies of an event's size, 8 signers.
fn group() -> Vec<SignatureCheck> {
    let keys: Vec<SigningKey> = (0..DEVICES as u8)
        .map(|i| SigningKey::from_bytes(&[i.wrapping_add(1); 32]))
        .collect();
    (0..GROUP)
        .map(|n| {
            let key = &keys[n % DEVICES];
            // About the size of a slot game's body (72 bytes), different for each.
            let mut body = vec![0u8; 72];
            body[..8].copy_from_slice(&(n as u64).to_le_bytes());
            SignatureCheck {
                message: signed_message(EVENT_DOMAIN, &body),
                signature: sign(key, EVENT_DOMAIN, &body),
                key: key.verifying_key(),
            }
        })
        .collect()
}

/// The cores the ceiling is measured on: every one this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_is_valid_signatures_by_eight_devices() {
        let g = group();
        assert_eq!(g.len(), GROUP);
        assert!(verify_many(&g).iter().all(|ok| *ok));
        let keys: std::collections::BTreeSet<_> = g.iter().map(|c| c.key.to_bytes()).collect();
        assert_eq!(keys.len(), DEVICES);
        let bodies: std::collections::BTreeSet<_> = g.iter().map(|c| c.message.clone()).collect();
        assert_eq!(bodies.len(), GROUP, "every body differs");
    }

    #[test]
    fn a_measurement_counts_whole_groups_on_every_thread() {
        let c = Ceiling::measure(2, Duration::ZERO).unwrap();
        assert_eq!(c.threads, 2);
        // Each thread checks at least one group however short the time.
        assert!(c.per_second > 0.0);
        assert!(c.seconds > 0.0);
        assert_eq!(Ceiling::measure(0, Duration::ZERO).unwrap().threads, 1);
    }

    #[test]
    fn the_peak_is_stated_as_a_share_of_the_ceiling() {
        let c = Ceiling {
            per_second: 300_000.0,
            threads: 2,
            seconds: 2.0,
        };
        assert!((c.share(200_000.0) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            c.line(123_000.0),
            "signature ceiling: 300000 signatures/s on 2 threads (2048-signature groups by 8 devices, 2.0 s); peak 123000 events/s = 41.0% of it"
        );
        assert_eq!(
            c.line_for("verify 240000 entries/s", 240_000.0),
            "signature ceiling: 300000 signatures/s on 2 threads (2048-signature groups by 8 devices, 2.0 s); verify 240000 entries/s = 80.0% of it"
        );
        let j = c.json(150_000.0);
        assert_eq!(j["peak_share"], 0.5);
        assert_eq!(j["signatures_per_second"], 300_000.0);
        let none = Ceiling {
            per_second: 0.0,
            ..c
        };
        assert_eq!(none.share(1.0), 0.0);
    }
}
