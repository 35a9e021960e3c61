//! Tuning of the allocator (mimalloc, the global allocator of `ledgerd` and `ledgerctl`).

/// `mi_option_purge_delay` in mimalloc 3.3's `mi_option_e` (`include/mimalloc.h`). Options are
/// numbered by their order in that enum; the test below pins the version it was read from.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keep freed memory for reuse instead of returning it to the OS a second after it was freed
/// (mimalloc 3's default purge delay).
///
/// Memory given back comes back as fresh 2 MiB pages that the kernel zeroes on first touch, on
/// whichever thread touches it first, and after a pause of a second or more (a quiet moment at
/// the tables, or the bench's pause between runs) the first envelopes' path (gRPC, precheck,
/// verifier, appender) paid for it. Measured with `ledgerctl bench --also-half` against ledgerd:
/// 20,600-22,600 page faults in ledgerd over the bench with purging, 730 without; peak RSS
/// 454-480 MB with, 506-516 MB without. At the server, receipts slower than 10 ms in the first
/// 50 ms of the half-load run: 519-927 with purging, 19-298 without (four runs each, alternated);
/// the whole run's receipt p99 moved from 19.1-29.5 ms to 9.7-16.3 ms in those runs, and within
/// the noise in runs on a quieter machine. The cost: the process keeps the most memory it ever
/// used, as a database's buffer pool does.
pub fn keep_freed_memory() {
    // SAFETY: `mi_option_set` stores a value in mimalloc's option table, which mimalloc reads
    // atomically; -1 ("never purge") is a documented value of this option.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, -1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_is_option_15_of_mimalloc_3_3() {
        // Another mimalloc may number its options otherwise: read its include/mimalloc.h and
        // update PURGE_DELAY before changing this version.
        // SAFETY: reads a constant.
        let v = unsafe { libmimalloc_sys::mi_version() };
        assert_eq!(v / 100, 303, "mimalloc version {v}");
        keep_freed_memory();
        // SAFETY: reads the option table.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, -1);
    }
}
