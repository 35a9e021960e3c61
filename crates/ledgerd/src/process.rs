//! The standard process figures a Prometheus scrape expects (`process_*`: CPU time, resident and
//! virtual memory, open and allowed file descriptors, start time), read from `/proc/self` on
//! Linux at each scrape. Elsewhere [`sample`] gives `None` and the endpoint leaves them out.

/// One reading of the process's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Process {
    pub cpu_seconds: f64,
    pub resident_bytes: u64,
    pub virtual_bytes: u64,
    pub open_fds: u64,
    /// The soft limit on open file descriptors (`RLIMIT_NOFILE`).
    pub max_fds: u64,
    /// Seconds since the Unix epoch.
    pub start_time_seconds: f64,
}

/// The figures now, or `None` where `/proc` does not have them.
pub fn sample() -> Option<Process> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot = boot_time(&std::fs::read_to_string("/proc/stat").ok()?)?;
    // SAFETY: sysconf only reads configuration values.
    let (ticks, page) = unsafe {
        (
            libc::sysconf(libc::_SC_CLK_TCK),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let s = parse_stat(
        &stat,
        u64::try_from(ticks).ok()?,
        u64::try_from(page).ok()?,
        boot,
    )?;
    let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through a pointer to a live, writable one.
    let max_fds = match unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } {
        0 => limit.rlim_cur,
        _ => 0,
    };
    Some(Process {
        open_fds,
        max_fds,
        ..s
    })
}

/// The filesystem holding `dir`: (bytes available to an unprivileged writer, its size), by
/// statvfs; `None` if it cannot be read.
pub fn filesystem(dir: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path and `st` is written by statvfs before it is read.
    if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    // The field types differ between platforms (u64 here).
    #[allow(clippy::unnecessary_cast)]
    let (frsize, avail, blocks) = (st.f_frsize as u64, st.f_bavail as u64, st.f_blocks as u64);
    Some((avail.saturating_mul(frsize), blocks.saturating_mul(frsize)))
}

/// `btime` (boot time, seconds since the epoch) from `/proc/stat`.
fn boot_time(proc_stat: &str) -> Option<u64> {
    proc_stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// CPU time, start time and memory from `/proc/self/stat` (proc(5)): the fields after the
/// command name, which is in parentheses and may itself hold spaces and parentheses.
fn parse_stat(stat: &str, ticks: u64, page: u64, boot: u64) -> Option<Process> {
    if ticks == 0 {
        return None;
    }
    let rest = &stat[stat.rfind(')')? + 1..];
    // rest starts at field 3 (state); field n is at rest[n - 3].
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
    let (utime, stime, start, vsize, rss) =
        (field(14)?, field(15)?, field(22)?, field(23)?, field(24)?);
    Some(Process {
        cpu_seconds: (utime + stime) as f64 / ticks as f64,
        resident_bytes: rss.saturating_mul(page),
        virtual_bytes: vsize,
        open_fds: 0,
        max_fds: 0,
        start_time_seconds: boot as f64 + start as f64 / ticks as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stat_line_is_read_after_a_command_name_with_spaces_and_parentheses() {
        // Fields 1..=24 of a real line, the command name made awkward on purpose.
        let line = "4242 (led (gerd) x) S 1 4242 4242 0 -1 4194560 900 0 0 0 \
                    250 150 0 0 20 0 12 0 123400 987654321 2500 18446744073709551615";
        let p = parse_stat(line, 100, 4096, 1_700_000_000).unwrap();
        assert_eq!(p.cpu_seconds, 4.0);
        assert_eq!(p.start_time_seconds, 1_700_000_000.0 + 1234.0);
        assert_eq!(p.virtual_bytes, 987_654_321);
        assert_eq!(p.resident_bytes, 2500 * 4096);
        assert_eq!(
            parse_stat("4242 (x) S 1 2", 100, 4096, 0),
            None,
            "too short"
        );
        assert_eq!(parse_stat("no parenthesis", 100, 4096, 0), None);
        assert_eq!(parse_stat(line, 0, 4096, 0), None, "no clock ticks");
        assert_eq!(
            boot_time("cpu 1 2\nbtime 1700000000\nprocesses 9\n"),
            Some(1_700_000_000)
        );
        assert_eq!(boot_time("cpu 1 2\n"), None);
    }

    #[test]
    fn the_filesystem_of_a_directory_has_a_size_and_room_within_it() {
        let dir = tempfile::tempdir().unwrap();
        let (avail, size) = filesystem(dir.path()).unwrap();
        assert!(size > 0 && avail <= size, "{avail} of {size}");
        assert_eq!(filesystem(&dir.path().join("missing")), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_memory_open_files_and_started_in_the_past() {
        let p = sample().expect("/proc/self on Linux");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            p.resident_bytes > 0 && p.virtual_bytes >= p.resident_bytes,
            "{p:?}"
        );
        assert!(p.open_fds >= 3 && p.max_fds >= p.open_fds, "{p:?}");
        assert!(
            p.start_time_seconds > 1e9 && p.start_time_seconds <= now + 1.0,
            "{p:?}"
        );
    }
}
