//! Standard output, for every command: ledgerctl's own `println!` and `print!` (macros defined
//! here and shadowing std's in the whole crate, `#[macro_use]` in `main.rs`) write through
//! [`line`] and [`write`], which end the process quietly with exit status 0 when stdout is a
//! pipe whose reader has gone (`ledgerctl tail --from 0 | head -2`): the reader took what it
//! wanted. std's `println!` panics there instead ("failed printing to stdout: Broken pipe",
//! exit 101).
//!
//! Why not restore SIGPIPE's default action (the process killed by the signal, as coreutils
//! are)? Its status is 141, not 0, so a `set -o pipefail` script fails on `| head`; and
//! ledgerctl also writes to sockets (gRPC, the demo's embedded ledgerd), where a peer that
//! went away must be an error to handle, not a signal that kills. Rust ignores SIGPIPE for that
//! reason; this module only decides what a failed write to stdout means.
//!
//! A command that follows the ledger (`tail`, [`crate::common::print_entries`]) may wait long
//! with nothing to print, and would only notice the closed pipe at its next write; it also
//! waits on [`closed`], which polls stdout for the reader's departure.

use std::io::Write;

/// `println!` for ledgerctl: a closed stdout ends the process with status 0.
macro_rules! println {
    () => {
        $crate::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

/// `print!` for ledgerctl: a closed stdout ends the process with status 0.
#[allow(unused_macros)]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

/// Write one line to stdout.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let r = out.write_fmt(args).and_then(|()| out.write_all(b"\n"));
    check(r);
}

/// Write to stdout, no newline.
pub fn write(args: std::fmt::Arguments<'_>) {
    let r = std::io::stdout().lock().write_fmt(args);
    check(r);
}

fn check(r: std::io::Result<()>) {
    match r {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => reader_gone(),
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            std::process::exit(1);
        }
    }
}

/// The reader of stdout has gone: end now, quietly, with status 0.
pub fn reader_gone() -> ! {
    std::process::exit(0)
}

/// Whether stdout is a pipe (or terminal) that nobody reads any more: poll reports an error
/// (a pipe without a reader) or a hang-up. Never true for a file or /dev/null.
pub fn stdout_closed() -> bool {
    let mut p = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// Completes when stdout's reader has gone (checked every 200 ms).
pub async fn closed() {
    loop {
        if stdout_closed() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// A command failed: `error: ...` on stderr, or under `--json` one line `{"error": "..."}` on
/// stdout, where the command's JSON goes (a script reads one stream and checks the status);
/// then status 1.
pub fn failed(json: bool, e: &anyhow::Error) -> ! {
    if json {
        println!("{}", serde_json::json!({ "error": format!("{e:#}") }));
    } else {
        eprintln!("error: {e:#}");
    }
    std::process::exit(1)
}

/// The command line does not parse: clap's message, as `{"error": "..."}` on stdout when
/// `--json` is among the arguments; status 2. Help and version are printed as clap prints them.
pub fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if !json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit()
    }
    let text = e.render().to_string();
    let text = text.trim();
    let text = text.strip_prefix("error: ").unwrap_or(text);
    println!("{}", serde_json::json!({ "error": text }));
    std::process::exit(e.exit_code())
}
