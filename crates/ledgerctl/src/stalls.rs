//! `ledgerctl bench --stall-probe`: how late the machine runs a thread that asked to wake up.
//!
//! A thread sleeps 1 ms at a time and records every wake-up that came more than 2 ms late. On a
//! virtual machine, the host may not run a virtual CPU for a while: then nothing in the guest
//! runs, every receipt in flight waits, and one such pause of 20-50 ms can set a run's p99 by
//! itself. The probe tells those runs apart from the ledger's own tail.
//!
//! The probe asks for the real-time class (`SCHED_FIFO`, the lowest priority), so that waiting
//! for a core behind the ledger's and the load generator's threads does not count. Without the
//! privilege (`CAP_SYS_NICE`), it runs at the normal priority, and the report says that its
//! delays then include those waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the probe sleeps each time.
pub const PERIOD: Duration = Duration::from_millis(1);
/// A wake-up later than this is recorded.
pub const LATE: Duration = Duration::from_millis(2);

/// One late wake-up: when the sleep began (µs after the run's start, 0 if before it) and by how
/// much the thread ran later than asked (µs).
pub type Stall = (u64, u64);

/// What the probe saw over a run.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Stalls {
    /// Whether the probe ran in the real-time class (else waits for a core are included).
    pub realtime: bool,
    /// Seconds probed.
    pub seconds: f64,
    /// Every wake-up more than [`LATE`] late, in time order.
    pub late: Vec<Stall>,
}

impl Stalls {
    /// Late wake-ups of more than `ms` milliseconds.
    pub fn count_over_ms(&self, ms: u64) -> usize {
        self.late.iter().filter(|s| s.1 > ms * 1000).count()
    }

    /// The latest wake-up, ms (0 if none was late).
    pub fn max_ms(&self) -> f64 {
        self.late.iter().map(|s| s.1).max().unwrap_or(0) as f64 / 1000.0
    }

    /// The share of the run spent in late wake-ups' delays, percent.
    pub fn lost_percent(&self) -> f64 {
        if self.seconds <= 0.0 {
            return 0.0;
        }
        self.late.iter().map(|s| s.1).sum::<u64>() as f64 / 1e6 / self.seconds * 100.0
    }

    /// The latest wake-up among sleeps that began in `[from_us, to_us)`, ms (0 if none).
    pub fn max_ms_between(&self, from_us: u64, to_us: u64) -> f64 {
        self.late
            .iter()
            .filter(|s| s.0 >= from_us && s.0 < to_us)
            .map(|s| s.1)
            .max()
            .unwrap_or(0) as f64
            / 1000.0
    }

    /// The report's line.
    pub fn line(&self) -> String {
        format!(
            "machine stalls ({}): a 1 ms sleep woke more than 2 ms late {}, more than 10 ms late {}, at worst {:.1} ms late; {:.2}% of the run lost in them",
            if self.realtime {
                "real-time probe"
            } else {
                "probe at normal priority, so waits for a core count too"
            },
            times(self.late.len()),
            times(self.count_over_ms(10)),
            self.max_ms(),
            self.lost_percent()
        )
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "realtime": self.realtime,
            "late_over_2ms": self.late.len(),
            "late_over_10ms": self.count_over_ms(10),
            "max_late_ms": self.max_ms(),
            "lost_percent": self.lost_percent(),
        })
    }
}

/// "never", "once", "N times".
fn times(n: usize) -> String {
    match n {
        0 => "never".into(),
        1 => "once".into(),
        n => format!("{n} times"),
    }
}

/// The lateness of a sleep of `period` that began at `asleep` and ended at `awake`, if it is
/// more than `late` (µs).
fn lateness(asleep: Instant, awake: Instant, period: Duration, late: Duration) -> Option<u64> {
    let over = awake
        .saturating_duration_since(asleep)
        .checked_sub(period)?;
    (over > late).then_some(over.as_micros() as u64)
}

/// A running probe; [`StallProbe::finish`] stops it and hands over what it saw.
pub struct StallProbe {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(bool, Vec<Stall>)>,
    origin: Instant,
}

impl StallProbe {
    /// Start probing; times are reported relative to `origin` (the run's start).
    pub fn start(origin: Instant) -> anyhow::Result<StallProbe> {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("stall-probe".into())
            .spawn(move || {
                let realtime = realtime();
                let mut late = Vec::new();
                while !stop2.load(Ordering::Relaxed) {
                    let asleep = Instant::now();
                    std::thread::sleep(PERIOD);
                    if let Some(us) = lateness(asleep, Instant::now(), PERIOD, LATE) {
                        let at = asleep.saturating_duration_since(origin).as_micros() as u64;
                        late.push((at, us));
                    }
                }
                (realtime, late)
            })?;
        Ok(StallProbe {
            stop,
            thread,
            origin,
        })
    }

    /// Stop and collect.
    pub fn finish(self) -> Stalls {
        self.stop.store(true, Ordering::Relaxed);
        let seconds = self.origin.elapsed().as_secs_f64();
        let (realtime, late) = self.thread.join().unwrap_or_default();
        Stalls {
            realtime,
            seconds,
            late,
        }
    }
}

/// Put the calling thread in the real-time class at the lowest priority; false if not allowed.
#[cfg(target_os = "linux")]
fn realtime() -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: sched_setscheduler reads `param` during the call only; pid 0 is this thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn realtime() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stalls(late: Vec<Stall>) -> Stalls {
        Stalls {
            realtime: true,
            seconds: 10.0,
            late,
        }
    }

    #[test]
    fn only_wake_ups_later_than_the_threshold_count() {
        let t = Instant::now();
        let (p, l) = (Duration::from_millis(1), Duration::from_millis(2));
        assert_eq!(lateness(t, t + Duration::from_micros(2_900), p, l), None);
        assert_eq!(lateness(t, t + Duration::from_micros(3_000), p, l), None);
        assert_eq!(
            lateness(t, t + Duration::from_micros(3_001), p, l),
            Some(2_001)
        );
        assert_eq!(
            lateness(t, t + Duration::from_millis(51), p, l),
            Some(50_000)
        );
        // Woken early (cannot happen with sleep, but never an underflow).
        assert_eq!(lateness(t, t, p, l), None);
        assert_eq!(lateness(t + p, t, p, l), None);
    }

    #[test]
    fn the_summary_counts_the_worst_and_the_time_lost() {
        let s = stalls(vec![(100, 2_500), (1_000_000, 12_000), (2_400_000, 50_000)]);
        assert_eq!(s.count_over_ms(10), 2);
        assert_eq!(s.count_over_ms(20), 1);
        assert_eq!(s.max_ms(), 50.0);
        // 64.5 ms of 10 s.
        assert!((s.lost_percent() - 0.645).abs() < 1e-9);
        assert_eq!(s.max_ms_between(0, 1_000_000), 2.5);
        assert_eq!(s.max_ms_between(1_000_000, 2_000_000), 12.0);
        assert_eq!(s.max_ms_between(2_000_000, 2_400_000), 0.0);
        let line = s.line();
        assert!(line.contains("more than 2 ms late 3 times"), "{line}");
        assert!(line.contains("more than 10 ms late 2 times"), "{line}");
        assert_eq!(
            [times(0), times(1), times(2)],
            ["never", "once", "2 times"].map(String::from)
        );
        assert!(line.contains("at worst 50.0 ms late"), "{line}");
        assert!(line.contains("real-time probe"), "{line}");
        let j = s.json();
        assert_eq!(j["late_over_2ms"], 3);
        assert_eq!(j["late_over_10ms"], 2);
        assert_eq!(j["max_late_ms"], 50.0);
    }

    #[test]
    fn a_quiet_run_reports_zeroes_and_says_when_the_probe_was_not_real_time() {
        let s = Stalls {
            realtime: false,
            seconds: 0.0,
            late: vec![],
        };
        assert_eq!(s.max_ms(), 0.0);
        assert_eq!(s.lost_percent(), 0.0);
        assert!(s.line().contains("waits for a core count too"));
    }

    #[test]
    fn the_probe_stops_when_asked_and_reports_the_time_it_ran() {
        let origin = Instant::now();
        let p = StallProbe::start(origin).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let s = p.finish();
        assert!(s.seconds >= 0.02, "{s:?}");
        // Every record is a sleep that began after the origin and came more than 2 ms late.
        assert!(s.late.iter().all(|&(_, us)| us > 2_000), "{s:?}");
    }
}
