//! systemd's service notifications (sd_notify(3), through the `sd-notify` crate), for the unit's
//! `Type=notify` and `WatchdogSec=` (deploy/ledgerd.service): `READY=1` once ledgerd serves (its
//! listeners bound, the ledger opened and its tail checked), `WATCHDOG=1` at half the interval
//! systemd gives in `WATCHDOG_USEC` from the loop that also waits for signals and for the server
//! to end, and `STOPPING=1` when a signal stops it. Without `NOTIFY_SOCKET` (not under systemd)
//! each is nothing. A notification that cannot be sent is logged, never fatal.

use std::net::SocketAddr;
use std::time::Duration;

use sd_notify::NotifyState;

fn send(states: &[NotifyState]) {
    if let Err(e) = sd_notify::notify(states) {
        tracing::warn!(error = %e, "cannot notify systemd (NOTIFY_SOCKET)");
    }
}

/// ledgerd serves on `addr`.
pub fn ready(addr: SocketAddr) {
    let status = format!("serving on {addr}");
    send(&[NotifyState::Ready, NotifyState::Status(&status)]);
}

/// Still alive (the watchdog's keep-alive).
pub fn alive() {
    send(&[NotifyState::Watchdog]);
}

/// A clean stop has begun.
pub fn stopping() {
    send(&[NotifyState::Stopping, NotifyState::Status("stopping")]);
}

/// The keep-alive interval, half of systemd's watchdog interval, when it has one for this
/// process.
pub fn watchdog() -> Option<tokio::time::Interval> {
    let every = sd_notify::watchdog_enabled()?.checked_div(2)?;
    if every.is_zero() {
        return None;
    }
    let mut i = tokio::time::interval(every.max(Duration::from_millis(1)));
    i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    Some(i)
}

/// The next keep-alive tick; never, without a watchdog.
pub async fn tick(watchdog: &mut Option<tokio::time::Interval>) {
    match watchdog {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
    }
}
