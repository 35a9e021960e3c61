//! How busy ledgerd is, and how long the verifier holds a small group because of it.
//!
//! Every group costs a fixed amount on top of its events: thread wake-ups in every stage, a
//! batch verification's setup, sled's log write (whose pool wakes all its idle threads), a flush
//! and an fsync. At the peak the queue always holds a full group and that cost is spread thin;
//! at moderate load a group is one burst of envelopes, and the fixed cost is most of what an
//! event costs. On the 2-core development VM ledgerd used 15 µs of CPU per event at its peak,
//! 25 at 55,000 events/s (half the peak), 36 at 30,000 and 51 at 15,000. So at half of the peak
//! the cores were 80% busy, not 50%, and any slower spell of the machine queued work for
//! milliseconds.
//!
//! Waiting lets a group take in more envelopes and pays that fixed cost once for all of them,
//! but it adds to every receipt's latency, which is worth it only when the CPU is scarce. So
//! the verifier measures the share of the machine's cores that ledgerd's threads use
//! ([`BusyMeter`]) and holds a group smaller than `ingest.coalesce_events` for a time that
//! grows with it ([`hold_for`]): nothing below [`HOLD_FROM_BUSY`], the whole `ingest.hold_us`
//! from [`HOLD_FULL_BUSY`] on. Holding lowers the busy share, which shortens the hold: the two
//! settle where the cost of the wait and the CPU it saves balance.

use std::time::{Duration, Instant};

/// Below this share of the machine's cores in use by ledgerd, a small group is not held.
pub const HOLD_FROM_BUSY: f64 = 0.35;

/// From this share on, a small group is held for the whole `ingest.hold_us`.
pub const HOLD_FULL_BUSY: f64 = 0.60;

/// The shortest span over which the busy share is measured.
pub const BUSY_WINDOW: Duration = Duration::from_millis(20);

/// How long to hold a small group when ledgerd's threads use `busy` (0..=1) of the machine's
/// cores: zero up to [`HOLD_FROM_BUSY`], rising in a straight line to `max` at
/// [`HOLD_FULL_BUSY`].
pub fn hold_for(busy: f64, max: Duration) -> Duration {
    let ramp = (busy - HOLD_FROM_BUSY) / (HOLD_FULL_BUSY - HOLD_FROM_BUSY);
    if ramp.is_nan() || ramp <= 0.0 {
        return Duration::ZERO;
    }
    max.mul_f64(ramp.min(1.0))
}

/// The share of the machine's cores that this process used lately, from its CPU time.
#[derive(Debug)]
pub struct BusyMeter {
    cores: f64,
    /// When the current window began, and the process's CPU time then.
    since: Option<(Instant, Duration)>,
    busy: f64,
}

impl BusyMeter {
    /// A meter for a machine of `cores` cores (at least 1).
    pub fn new(cores: usize) -> BusyMeter {
        BusyMeter {
            cores: cores.max(1) as f64,
            since: None,
            busy: 0.0,
        }
    }

    /// The busy share at `now` (0..=1). `cpu` reads the process's CPU time; it is called only
    /// when a window of at least [`BUSY_WINDOW`] has ended, so calling this once a group costs
    /// one clock read. Each window's share is averaged with the previous figure (half each), so
    /// one odd window moves it only halfway; after a quiet spell of ten windows or more the old
    /// figure is dropped. Until `cpu` has answered twice, the share is 0.
    pub fn observe(&mut self, now: Instant, cpu: impl FnOnce() -> Option<Duration>) -> f64 {
        match self.since {
            None => self.since = cpu().map(|c| (now, c)),
            Some((t0, c0)) => {
                let span = now.saturating_duration_since(t0);
                if span >= BUSY_WINDOW
                    && let Some(c) = cpu()
                {
                    let used = c.saturating_sub(c0).as_secs_f64() / span.as_secs_f64();
                    let share = (used / self.cores).clamp(0.0, 1.0);
                    self.busy = if span >= BUSY_WINDOW * 10 {
                        share
                    } else {
                        (self.busy + share) / 2.0
                    };
                    self.since = Some((now, c));
                }
            }
        }
        self.busy
    }
}

/// The CPU time this process has used, all threads together (`CLOCK_PROCESS_CPUTIME_ID`).
/// `None` where that clock is not available; the verifier then never holds a group.
pub fn process_cpu() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec through the pointer, which points to a
        // live, writable timespec.
        let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        if r != 0 {
            return None;
        }
        Some(Duration::new(
            u64::try_from(ts.tv_sec).ok()?,
            u32::try_from(ts.tv_nsec).ok()?,
        ))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

// ------------------------------------------------------------------ the export's yielding

/// The export to NATS ([`crate::export_nats`]) waits while ingest is at its peak: while the
/// machine has less than this share of its cores idle ...
pub const EXPORT_IDLE_BELOW: f64 = 0.15;

/// ... and ledgerd's threads other than the export's use at least this share of the cores.
/// Both: a machine kept busy by other processes alone (builds, the NATS servers the export
/// feeds) does not stop the export, and an ingest that leaves cores idle is not at its peak.
pub const EXPORT_INGEST_FROM: f64 = 0.25;

/// The shortest span over which the machine's idle share is measured (the kernel counts in
/// ticks of 10 ms: 20 of them on 2 cores).
pub const IDLE_WINDOW: Duration = Duration::from_millis(100);

/// Whether the export should wait (publish only a trickle) when the machine has `idle` (0..=1)
/// of its cores idle and ledgerd's other threads use `ingest` (0..=1) of them.
pub fn export_yields(idle: f64, ingest: f64) -> bool {
    idle < EXPORT_IDLE_BELOW && ingest >= EXPORT_INGEST_FROM
}

/// The share of the machine's cores that were idle lately, from the kernel's counters
/// ([`machine_ticks`]).
#[derive(Debug, Default)]
pub struct IdleMeter {
    /// When the current window began, and the counters then (idle ticks, all ticks).
    since: Option<(Instant, (u64, u64))>,
    idle: f64,
}

impl IdleMeter {
    /// The idle share at `now` (0..=1): over the last window of at least [`IDLE_WINDOW`]
    /// (`ticks` is read only once a window has ended). Until `ticks` has answered twice, the
    /// machine counts as idle.
    pub fn observe(&mut self, now: Instant, ticks: impl FnOnce() -> Option<(u64, u64)>) -> f64 {
        match self.since {
            None => {
                self.since = ticks().map(|t| (now, t));
                self.idle = 1.0;
            }
            Some((t0, (idle0, all0))) => {
                if now.saturating_duration_since(t0) >= IDLE_WINDOW
                    && let Some((idle, all)) = ticks()
                {
                    let span = all.saturating_sub(all0);
                    if span > 0 {
                        self.idle =
                            (idle.saturating_sub(idle0) as f64 / span as f64).clamp(0.0, 1.0);
                        self.since = Some((now, (idle, all)));
                    }
                }
            }
        }
        self.idle
    }
}

/// The machine's CPU ticks so far, all cores together: (idle and waiting for I/O, all), from
/// the first line of `/proc/stat`. `None` where it cannot be read; the export then never waits.
pub fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_line(stat.lines().next()?)
}

/// `cpu  user nice system idle iowait irq softirq steal guest guest_nice` → (idle + iowait,
/// the sum of the first eight; guest time is already in user and nice).
fn parse_cpu_line(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 5 {
        return None;
    }
    Some((v[3] + v[4], v.iter().sum()))
}

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec through the pointer, which points to a
        // live, writable timespec.
        let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if r != 0 {
            return None;
        }
        Some(Duration::new(
            u64::try_from(ts.tv_sec).ok()?,
            u32::try_from(ts.tv_nsec).ok()?,
        ))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Run the calling thread at `nice` (Linux applies a nice value to one thread); a failure is
/// returned for the caller to log.
pub fn lower_this_thread(nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority on the calling thread (who = 0) with a nice value in range.
        let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_yields_only_to_a_busy_ingest_on_a_full_machine() {
        assert!(
            export_yields(0.0, 0.6),
            "the peak: no core idle, ledgerd busy"
        );
        assert!(export_yields(0.1, EXPORT_INGEST_FROM));
        assert!(!export_yields(0.4, 0.6), "half load: cores idle");
        assert!(!export_yields(EXPORT_IDLE_BELOW, 0.9));
        assert!(
            !export_yields(0.0, 0.05),
            "others keep the machine busy, not ingest"
        );
        assert!(!export_yields(0.0, f64::NAN));
    }

    #[test]
    fn the_idle_share_is_of_all_ticks_over_a_window() {
        let mut m = IdleMeter::default();
        let t = Instant::now();
        assert_eq!(
            m.observe(t, || Some((1_000, 4_000))),
            1.0,
            "nothing known yet"
        );
        // Too soon: the counters are not read.
        assert_eq!(
            m.observe(t + IDLE_WINDOW / 2, || panic!("read too soon")),
            1.0
        );
        // 20 ticks on 2 cores, 5 of them idle.
        assert_eq!(m.observe(t + IDLE_WINDOW, || Some((1_005, 4_020))), 0.25);
        // Counters that did not move keep the figure.
        assert_eq!(
            m.observe(t + IDLE_WINDOW * 2, || Some((1_005, 4_020))),
            0.25
        );
        assert_eq!(m.observe(t + IDLE_WINDOW * 3, || Some((1_025, 4_040))), 1.0);
        assert_eq!(m.observe(t + IDLE_WINDOW * 4, || None), 1.0);
    }

    #[test]
    fn the_kernels_cpu_line_is_read_and_others_refused() {
        assert_eq!(
            parse_cpu_line("cpu  10 20 30 400 5 6 7 8 9 9"),
            Some((405, 486))
        );
        assert_eq!(parse_cpu_line("cpu0 10 20 30 400 5 6 7 8"), None);
        assert_eq!(parse_cpu_line("cpu 10 x 30 400 5"), None);
        assert_eq!(parse_cpu_line("cpu 10 20"), None);
        if cfg!(target_os = "linux") {
            let (idle, all) = machine_ticks().expect("/proc/stat");
            assert!(idle <= all && all > 0);
        }
    }

    #[test]
    fn this_thread_has_a_cpu_clock_and_can_be_lowered() {
        if !cfg!(unix) {
            return;
        }
        std::thread::spawn(|| {
            let a = thread_cpu().unwrap();
            let mut x = 0u64;
            while thread_cpu().unwrap() <= a {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            lower_this_thread(10).unwrap();
            #[cfg(target_os = "linux")]
            {
                // SAFETY: getpriority on the calling thread.
                let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
                assert_eq!(nice, 10);
            }
        })
        .join()
        .unwrap();
    }

    const MAX: Duration = Duration::from_micros(2000);

    #[test]
    fn the_hold_rises_from_nothing_to_the_whole_limit() {
        assert_eq!(hold_for(0.0, MAX), Duration::ZERO);
        assert_eq!(hold_for(HOLD_FROM_BUSY, MAX), Duration::ZERO);
        let mid = (HOLD_FROM_BUSY + HOLD_FULL_BUSY) / 2.0;
        let half = hold_for(mid, MAX);
        assert!(
            half.abs_diff(MAX / 2) < Duration::from_micros(1),
            "{half:?}"
        );
        assert_eq!(hold_for(HOLD_FULL_BUSY, MAX), MAX);
        assert_eq!(hold_for(1.0, MAX), MAX);
        assert_eq!(hold_for(0.9, Duration::ZERO), Duration::ZERO);
        assert_eq!(hold_for(f64::NAN, MAX), Duration::ZERO);
        // Never shorter for a busier ledger.
        let mut last = Duration::ZERO;
        for b in 0..=100 {
            let h = hold_for(b as f64 / 100.0, MAX);
            assert!(h >= last && h <= MAX);
            last = h;
        }
    }

    /// A meter fed by a scripted clock and CPU counter.
    struct Fed {
        meter: BusyMeter,
        t: Instant,
        cpu: Duration,
        reads: usize,
    }

    impl Fed {
        fn new(cores: usize) -> Fed {
            Fed {
                meter: BusyMeter::new(cores),
                t: Instant::now(),
                cpu: Duration::ZERO,
                reads: 0,
            }
        }
        /// `ms` of wall time pass while the process uses `cores_used` cores; then observe.
        fn run(&mut self, ms: u64, cores_used: f64) -> f64 {
            self.t += Duration::from_millis(ms);
            self.cpu += Duration::from_millis(ms).mul_f64(cores_used);
            let (cpu, reads) = (self.cpu, &mut self.reads);
            self.meter.observe(self.t, || {
                *reads += 1;
                Some(cpu)
            })
        }
    }

    #[test]
    fn the_share_is_of_all_the_cores_and_smoothed() {
        let mut f = Fed::new(2);
        assert_eq!(f.run(0, 0.0), 0.0, "nothing known before a window");
        assert_eq!(f.run(20, 1.0), 0.25, "half the machine, averaged with 0");
        assert_eq!(f.run(20, 1.0), 0.375);
        for _ in 0..30 {
            f.run(20, 1.0);
        }
        assert!((f.run(20, 1.0) - 0.5).abs() < 1e-6);
        // Beyond every core (a clock's rounding) is the whole machine.
        let mut f = Fed::new(1);
        f.run(0, 0.0);
        f.run(400, 1.5);
        assert_eq!(f.run(400, 1.5), 1.0);
    }

    #[test]
    fn the_cpu_is_read_once_a_window() {
        let mut f = Fed::new(2);
        f.run(0, 0.0);
        for _ in 0..19 {
            f.run(1, 2.0);
        }
        assert_eq!(f.reads, 1, "19 ms: the window is still open");
        assert_eq!(f.run(1, 2.0), 0.5, "20 ms of both cores, averaged with 0");
        assert_eq!(f.reads, 2);
    }

    #[test]
    fn after_a_quiet_spell_the_old_figure_is_dropped() {
        let mut f = Fed::new(2);
        f.run(0, 0.0);
        for _ in 0..20 {
            f.run(20, 2.0);
        }
        assert!(f.run(20, 2.0) > 0.99);
        // A second of nothing: idle at once, not halfway.
        assert!(f.run(1000, 0.0) < 0.01);
    }

    #[test]
    fn a_meter_without_a_clock_never_reports_busy() {
        let mut m = BusyMeter::new(2);
        let t = Instant::now();
        for i in 0..10 {
            assert_eq!(m.observe(t + BUSY_WINDOW * i, || None), 0.0);
        }
    }

    #[test]
    fn this_process_has_a_cpu_clock_that_moves() {
        if !cfg!(unix) {
            assert_eq!(process_cpu(), None);
            return;
        }
        let a = process_cpu().expect("every unix has CLOCK_PROCESS_CPUTIME_ID");
        let mut x = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let b = process_cpu().unwrap();
        assert!(b > a, "30 ms of spinning used CPU: {a:?} -> {b:?} ({x})");
    }
}
