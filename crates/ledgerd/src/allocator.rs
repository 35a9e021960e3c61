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

/// Return freed memory to the OS at once, until [`keep_freed_memory`] or
/// [`release_freed_memory_and_keep`]: for a process's phases whose latency does not matter and
/// whose temporaries would otherwise stay in its resident set for good (the demo generates and
/// signs its 1.6 M-event session this way: about 0.6 GB of temporaries).
pub fn return_freed_memory() {
    // SAFETY: as in `keep_freed_memory`; 0 ("purge at once") is a documented value.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
}

/// Give the OS what is free now (`mi_collect`), then keep freed memory from here on
/// ([`keep_freed_memory`]).
pub fn release_freed_memory_and_keep() {
    // SAFETY: mi_collect only frees memory mimalloc holds unused; the option as above.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
    keep_freed_memory();
}

/// Turn transparent huge pages off for this process (Linux's `PR_SET_THP_DISABLE`), as
/// databases commonly advise. Call it first thing in `main`.
///
/// mimalloc asks for huge pages on its memory (`madvise(MADV_HUGEPAGE)`), which the kernel
/// honours even in its default "madvise" mode. A huge page is zeroed, 2 MiB at a time, by
/// whichever thread touches it first, and the kernel later splits, compacts and collapses such
/// pages. The ledger's memory grows with the data (sled's tree and its log buffers), so the
/// appender, the verifier and gRPC's threads kept stalling on those faults: in a `perf` profile
/// of the appender at 30 k events/s, 7% of its samples were the kernel zeroing a huge page
/// (`clear_page_erms` under `do_huge_pmd_anonymous_page`), and the appender's and the
/// verifier's groups took 7-20 ms now and then instead of under one. Measured against ledgerd
/// over 600,000 events at 55 k events/s after a warm-up (`ledgerctl bench --server ... --rate
/// 55000 --events 600000 --warmup 100000`, alternated three times): receipt p99 23.7 / 30.8 /
/// 24.1 ms with huge pages, 10.3 / 12.9 / 9.3 ms without; the peak rose from 100-104 k to
/// 126-130 k events/s.
///
/// Elsewhere than Linux this does nothing.
pub fn no_transparent_huge_pages() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE takes plain integers and only sets a flag of this process
        // (inherited by its children).
        let r = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_memory_is_returned_then_kept_again() {
        return_freed_memory();
        // SAFETY: reads the option table.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 0);
        release_freed_memory_and_keep();
        // SAFETY: reads the option table.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, -1);
    }

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

    #[cfg(target_os = "linux")]
    #[test]
    fn transparent_huge_pages_are_off_afterwards() {
        no_transparent_huge_pages().expect("prctl");
        // SAFETY: PR_GET_THP_DISABLE reads a flag of this process.
        assert_eq!(
            unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) },
            1
        );
    }
}
