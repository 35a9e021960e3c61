//! `powercut BACKING MOUNTPOINT`: serve BACKING on MOUNTPOINT, holding unsynced writes in memory.
//! SIGUSR1 cuts the power (drops what is not synced; see the library); SIGTERM or SIGINT
//! unmounts (lazily, if it is still in use) and exits.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Parser;

#[derive(Parser)]
#[command(
    version,
    about = "A FUSE pass-through that drops unsynced writes on SIGUSR1, as a power cut would"
)]
struct Args {
    /// Directory that holds what the "disk" keeps.
    backing: PathBuf,
    /// Where to mount it.
    mountpoint: PathBuf,
    /// Tear the last unsynced write at a cut: keep a prefix chosen by this seed.
    #[arg(long)]
    tear_seed: Option<u64>,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    // Block the signals before the serving threads start, so that only sigwait sees them.
    // SAFETY: plain libc signal-set calls on a local, zero-initialised sigset_t.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGUSR1, libc::SIGTERM, libc::SIGINT] {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            bail!("pthread_sigmask failed");
        }
        set
    };
    let mounted = powercut::mount(&args.backing, &args.mountpoint)
        .with_context(|| format!("mount {}", args.mountpoint.display()))?;
    eprintln!(
        "powercut: serving {} on {}",
        args.backing.display(),
        args.mountpoint.display()
    );
    loop {
        let mut sig = 0;
        // SAFETY: `set` is an initialised signal set and `sig` a valid out-parameter.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            bail!("sigwait failed");
        }
        if sig == libc::SIGUSR1 {
            let r = mounted.handle.cut(args.tear_seed);
            eprintln!("powercut: power cut: {r:?}");
        } else {
            break;
        }
    }
    if let Err(e) = mounted.unmount() {
        // Still in use (EBUSY): detach it, so that it goes once the last user closes its files.
        eprintln!("powercut: unmount: {e}; detaching it lazily");
        let c = std::ffi::CString::new(args.mountpoint.as_os_str().as_encoded_bytes())
            .context("mount point")?;
        // SAFETY: a valid NUL-terminated path.
        if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
            bail!(
                "umount2 {}: {}",
                args.mountpoint.display(),
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(())
}
