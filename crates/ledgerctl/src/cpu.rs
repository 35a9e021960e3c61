//! `ledgerctl bench`'s CPU accounting: how busy the machine's cores were over a run, how much of
//! that the host took back (steal), and how much this process used.
//!
//! The latency target is set at half of the measured peak. How much headroom that leaves depends
//! on how much more an event costs at moderate load than at the peak (smaller groups, more
//! wake-ups, more syncs per event), so the share of the cores a run kept busy is the first thing
//! to read next to its p99. On a virtual machine, steal time is the host running something else
//! on the cores it lent; a guest that does not report steal shows it only as slower runs.
//!
//! Read from Linux's `/proc/stat` and `/proc/self/stat` (both in clock ticks); elsewhere there
//! is nothing to read and the bench reports no CPU figures. A kernel built with
//! `CONFIG_TICK_CPU_ACCOUNTING` fills `/proc/stat` by sampling at its tick (250 Hz on the Zen 3
//! development VM), so at low rates, where threads run for microseconds between ticks, the busy
//! share reads low (a process's own figure is scaled to its exact run time, so it does not): at
//! 2,000 events/s it read 2-24% of the machine while ledgerd's exact count
//! (`CLOCK_PROCESS_CPUTIME_ID`, the `ledgerd:` line) said 20-25%. At the loads the latency
//! target is about, the two agree.

/// Cumulative CPU times at one moment, in clock ticks (summed over every core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Cores (`cpuN` lines of `/proc/stat`).
    pub cores: usize,
    /// Every tick of every core: busy, idle and waiting for I/O.
    pub total: u64,
    /// Ticks spent running something: user, nice, system, irq, softirq and steal.
    pub busy: u64,
    /// Ticks the host gave to someone else while this guest had work (virtual machines).
    pub steal: u64,
    /// This process's user and system ticks (with the embedded ledger, its threads too).
    pub process: u64,
}

/// CPU use between two snapshots, in cores (1.0 = one core busy the whole time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Use {
    pub cores: usize,
    pub busy_cores: f64,
    pub steal_cores: f64,
    pub process_cores: f64,
}

impl Use {
    /// The busy share of all the cores, percent.
    pub fn busy_percent(&self) -> f64 {
        if self.cores == 0 {
            return 0.0;
        }
        self.busy_cores / self.cores as f64 * 100.0
    }

    /// The report's line, e.g. `cpu: this machine's 2 cores 78% busy (1.56 cores, of which
    /// steal 0.00), this process (the load generator) 0.21 cores`. "This machine" is the one
    /// the bench runs on: with `--server` on another host, the ledger's cores are not in it.
    pub fn line(&self, process: &str) -> String {
        format!(
            "cpu: this machine's {} cores {:.0}% busy ({:.2} cores, of which steal {:.2}), {process} {:.2} cores",
            self.cores,
            self.busy_percent(),
            self.busy_cores,
            self.steal_cores,
            self.process_cores
        )
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "cores": self.cores,
            "busy_percent": self.busy_percent(),
            "busy_cores": self.busy_cores,
            "steal_cores": self.steal_cores,
            "process_cores": self.process_cores,
        })
    }
}

impl Snapshot {
    /// Now, or `None` where `/proc` cannot be read or parsed (not Linux).
    pub fn now() -> Option<Snapshot> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        Snapshot::parse(&stat, &own)
    }

    /// From the texts of `/proc/stat` and `/proc/<pid>/stat`.
    pub fn parse(proc_stat: &str, process_stat: &str) -> Option<Snapshot> {
        let mut lines = proc_stat.lines();
        let all = lines.next()?.strip_prefix("cpu ")?;
        let f: Vec<u64> = all
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        // user nice system idle iowait irq softirq steal (guest time is inside user already).
        let [user, nice, system, idle, iowait, irq, softirq, steal] = *f.get(..8)? else {
            return None;
        };
        let cores = lines
            .filter(|l| {
                l.strip_prefix("cpu")
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            })
            .count();
        // The command name (field 2) is in parentheses and may hold spaces or parentheses itself:
        // the fields that follow start after the last ')'. utime and stime are fields 14 and 15.
        let rest = &process_stat[process_stat.rfind(')')? + 1..];
        let p: Vec<&str> = rest.split_whitespace().collect();
        let utime: u64 = p.get(11)?.parse().ok()?;
        let stime: u64 = p.get(12)?.parse().ok()?;
        // Counters too large to add up are not procfs either.
        let sum = |v: &[u64]| v.iter().try_fold(0u64, |a, &b| a.checked_add(b));
        let busy = sum(&[user, nice, system, irq, softirq, steal])?;
        (cores > 0).then_some(Snapshot {
            cores,
            total: sum(&[busy, idle, iowait])?,
            busy,
            steal,
            process: sum(&[utime, stime])?,
        })
    }

    /// Use from `earlier` to this snapshot; `None` when no tick passed between them or the
    /// counters went backwards (a different machine's snapshot, or counters reset).
    pub fn since(&self, earlier: &Snapshot) -> Option<Use> {
        let ticks = self.total.checked_sub(earlier.total)?;
        if ticks == 0 || self.cores != earlier.cores {
            return None;
        }
        // Ticks of one core over the interval: the whole machine's ticks over the cores.
        let per_core = ticks as f64 / self.cores as f64;
        let cores_of = |now: u64, then: u64| Some(now.checked_sub(then)? as f64 / per_core);
        Some(Use {
            cores: self.cores,
            busy_cores: cores_of(self.busy, earlier.busy)?,
            steal_cores: cores_of(self.steal, earlier.steal)?,
            process_cores: cores_of(self.process, earlier.process)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_0: &str = "cpu  1000 10 300 5000 40 5 25 20 0 0\n\
                          cpu0 500 5 150 2500 20 3 12 10 0 0\n\
                          cpu1 500 5 150 2500 20 2 13 10 0 0\n\
                          intr 123 4 5\n\
                          ctxt 999\n";
    const STAT_1: &str = "cpu  1150 10 330 5040 40 5 35 30 0 0\n\
                          cpu0 575 5 165 2515 20 3 17 15 0 0\n\
                          cpu1 575 5 165 2515 20 2 18 15 0 0\n\
                          ctxt 1999\n";
    // A command name with a space and a parenthesis: fields are counted after the last ')'.
    const SELF_0: &str =
        "4242 (ledger ctl) S 1 4242 4242 0 -1 4194560 100 0 0 0 70 30 0 0 20 0 9 0 100 1000 50";
    const SELF_1: &str =
        "4242 (ledger ctl) S 1 4242 4242 0 -1 4194560 100 0 0 0 160 40 0 0 20 0 9 0 100 1000 50";

    #[test]
    fn a_snapshot_reads_the_machine_and_the_process() {
        let s = Snapshot::parse(STAT_0, SELF_0).unwrap();
        assert_eq!(
            s,
            Snapshot {
                cores: 2,
                total: 1000 + 10 + 300 + 5000 + 40 + 5 + 25 + 20,
                busy: 1000 + 10 + 300 + 5 + 25 + 20,
                steal: 20,
                process: 100,
            }
        );
        let odd = "7 (a) b) c) R 1 7 7 0 -1 0 0 0 0 0 11 4 0 0";
        assert_eq!(Snapshot::parse(STAT_0, odd).unwrap().process, 15);
    }

    #[test]
    fn use_between_snapshots_is_in_cores() {
        let a = Snapshot::parse(STAT_0, SELF_0).unwrap();
        let b = Snapshot::parse(STAT_1, SELF_1).unwrap();
        // 240 ticks passed over 2 cores: 120 per core. Busy 200 ticks, steal 10, this process 100.
        let u = b.since(&a).unwrap();
        assert_eq!(u.cores, 2);
        assert!((u.busy_cores - 200.0 / 120.0).abs() < 1e-9, "{u:?}");
        assert!((u.steal_cores - 10.0 / 120.0).abs() < 1e-9, "{u:?}");
        assert!((u.process_cores - 100.0 / 120.0).abs() < 1e-9, "{u:?}");
        assert!((u.busy_percent() - 200.0 / 240.0 * 100.0).abs() < 1e-9);
        assert_eq!(
            u.line("this process (the load generator)"),
            "cpu: this machine's 2 cores 83% busy (1.67 cores, of which steal 0.08), this process (the load generator) 0.83 cores"
        );
        assert_eq!(u.json()["busy_cores"], serde_json::json!(200.0 / 120.0));
        // No tick between them, or counters that went backwards: nothing to say.
        assert_eq!(a.since(&a), None);
        assert_eq!(a.since(&b), None);
    }

    #[test]
    fn text_that_is_not_procfs_gives_nothing() {
        assert_eq!(Snapshot::parse("", SELF_0), None);
        assert_eq!(Snapshot::parse("intr 1 2\n", SELF_0), None);
        assert_eq!(Snapshot::parse("cpu  1 2 3\ncpu0 1 2 3\n", SELF_0), None);
        assert_eq!(Snapshot::parse("cpu  1 2 3 4 5 6 7 x\n", SELF_0), None);
        // The total line but no per-core line.
        assert_eq!(Snapshot::parse("cpu  1 2 3 4 5 6 7 8\n", SELF_0), None);
        assert_eq!(Snapshot::parse(STAT_0, "4242 (ledgerctl) S 1"), None);
        assert_eq!(Snapshot::parse(STAT_0, "no parenthesis at all"), None);
        let huge = format!("cpu  {} 1 1 1 1 1 1 1\ncpu0 1\n", u64::MAX);
        assert_eq!(Snapshot::parse(&huge, SELF_0), None);
    }

    #[test]
    fn this_machine_can_be_read_where_there_is_a_proc() {
        if std::path::Path::new("/proc/stat").exists() {
            let s = Snapshot::now().expect("a readable /proc/stat");
            assert!(s.cores >= 1 && s.busy <= s.total, "{s:?}");
        }
    }
}
