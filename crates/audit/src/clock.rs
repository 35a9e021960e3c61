//! Device clock drift: a finding when a device's clock (an event's `occurred_at`) is off the
//! ledger's received time by more than [`crate::auditor::AuditSettings::device_clock_drift_ms`],
//! once per device per episode. Derived from the chain only (both times are in each entry), so
//! every replay finds the same.
//!
//! * **Ahead**: an event that occurred (by the device's clock) more than the threshold after the
//!   ledger received it. Nothing arrives before it happens: the device's clock is ahead.
//! * **Behind**: every event of the device received more than the threshold after it occurred,
//!   by a lag that stays the same (within the threshold) for at least the threshold of received
//!   time: the device sends live, by a clock that is behind. A backlog resent after an outage
//!   is not drift: it arrives faster than it happened, so its lag shrinks from one event to the
//!   next (and the episode starts again) until it is sent.
//!
//! An episode ends at the device's first event within the threshold; the next breach is a new
//! finding. After a step of the ledger's own clock (a `ClockStep` record), every device is off
//! the ledger's time by the step: the findings then name the ledger's clock, not the devices'.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What [`DeviceClocks::observe`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    /// The event occurred `ms` after the ledger received it.
    Ahead { ms: i64 },
    /// The device's events have lagged by more than the threshold since the entry `since_index`,
    /// by `ms` at this one.
    Behind { ms: i64, since_index: u64 },
}

/// One device's episode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Episode {
    /// Received time, lag and index of the first of the device's events that lag beyond the
    /// threshold by about the same (within the threshold), with none in time since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lag_since: Option<(i64, i64, u64)>,
    /// This episode has its finding.
    #[serde(default)]
    reported: bool,
}

/// Every device in an episode of drift (devices whose clocks are right are not kept).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceClocks {
    devices: BTreeMap<String, Episode>,
}

impl DeviceClocks {
    /// An event of `device` at entry `index`, received at `received_ms`, occurred at
    /// `occurred_ms` by the device's clock: the drift to report, once per episode.
    pub fn observe(
        &mut self,
        device: &str,
        index: u64,
        received_ms: i64,
        occurred_ms: i64,
        threshold_ms: i64,
    ) -> Option<Drift> {
        let ahead = i128::from(occurred_ms) - i128::from(received_ms);
        let threshold = i128::from(threshold_ms.max(0));
        if ahead.abs() <= threshold {
            self.devices.remove(device);
            return None;
        }
        let ms = i64::try_from(ahead.unsigned_abs()).unwrap_or(i64::MAX);
        // The device's episode, its name copied only when it starts one (a replayed backlog
        // observes millions of lagging events of a few devices).
        if !self.devices.contains_key(device) {
            self.devices.insert(device.to_string(), Episode::default());
        }
        let e = self.devices.get_mut(device)?;
        if ahead > 0 {
            e.lag_since = None;
            if e.reported {
                return None;
            }
            e.reported = true;
            return Some(Drift::Ahead { ms });
        }
        let lag = ms;
        let (since_ms, since_lag, since_index) =
            *e.lag_since.get_or_insert((received_ms, lag, index));
        if i128::from(lag) - i128::from(since_lag) > threshold
            || i128::from(since_lag) - i128::from(lag) > threshold
        {
            // Not the same lag: a backlog arriving (or the clock moved); start again from here.
            e.lag_since = Some((received_ms, lag, index));
            return None;
        }
        if e.reported || i128::from(received_ms) - i128::from(since_ms) < threshold {
            return None;
        }
        e.reported = true;
        Some(Drift::Behind { ms, since_index })
    }

    /// Devices in an episode now.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_800_000_000_000;
    const MIN: i64 = 60_000;

    #[test]
    fn a_clock_ahead_is_one_finding_per_episode() {
        let mut c = DeviceClocks::default();
        assert_eq!(
            c.observe("m1", 1, T, T + MIN, MIN),
            None,
            "at the threshold"
        );
        assert_eq!(
            c.observe("m1", 2, T, T + MIN + 1, MIN),
            Some(Drift::Ahead { ms: MIN + 1 })
        );
        for i in 3..10 {
            assert_eq!(
                c.observe("m1", i, T + i as i64, T + 5 * MIN, MIN),
                None,
                "same episode"
            );
        }
        // Another device is its own episode.
        assert!(c.observe("m2", 10, T, T + 2 * MIN, MIN).is_some());
        // Back in time ends it; the next breach is a new finding.
        assert_eq!(c.observe("m1", 11, T + 20, T + 20, MIN), None);
        assert_eq!(c.len(), 1, "a device in time is not kept");
        assert!(c.observe("m1", 12, T + 30, T + 3 * MIN, MIN).is_some());
    }

    #[test]
    fn a_clock_behind_must_lag_for_the_threshold_of_received_time() {
        let mut c = DeviceClocks::default();
        // A backlog resent after an hour's outage, in a few seconds, then live events: no drift.
        for i in 0..100 {
            let at = T + 3_600_000 + i * 20;
            assert_eq!(c.observe("m1", i as u64, at, T + i * 30_000, MIN), None);
        }
        // Nor a two weeks' backlog sent over 200 s (events a minute apart, sent 10 ms apart).
        for i in 0..20_000 {
            let at = T + 14 * 86_400_000 + i * 10;
            assert_eq!(c.observe("m3", i as u64, at, T + i * MIN, MIN), None, "{i}");
        }
        let live = T + 14 * 86_400_000 + 200_000;
        assert_eq!(c.observe("m3", 20_000, live, live - 1_000, MIN), None);
        assert_eq!(
            c.observe("m1", 100, T + 3_610_000, T + 3_609_000, MIN),
            None
        );
        assert!(c.is_empty());
        // A clock two minutes behind: found once its lag has lasted a minute of received time.
        assert_eq!(c.observe("m1", 200, T, T - 2 * MIN, MIN), None);
        assert_eq!(c.observe("m1", 201, T + MIN - 1, T - MIN - 1, MIN), None);
        assert_eq!(
            c.observe("m1", 202, T + MIN, T - MIN - 5, MIN),
            Some(Drift::Behind {
                ms: 2 * MIN + 5,
                since_index: 200
            })
        );
        assert_eq!(c.observe("m1", 203, T + 9 * MIN, T + 7 * MIN, MIN), None);
    }

    /// A lag that moves by the threshold or less is the same episode; by more, a new one from
    /// that event.
    #[test]
    fn a_lag_that_moves_by_more_than_the_threshold_starts_again() {
        let behind = |ms, since_index| Some(Drift::Behind { ms, since_index });
        let mut c = DeviceClocks::default();
        // Grows by exactly the threshold: same episode.
        assert_eq!(c.observe("up", 1, T, T - 2 * MIN, MIN), None);
        assert_eq!(
            c.observe("up", 2, T + MIN, T - 2 * MIN, MIN),
            behind(3 * MIN, 1)
        );
        // Shrinks by exactly the threshold: same episode.
        assert_eq!(c.observe("down", 1, T, T - 3 * MIN, MIN), None);
        assert_eq!(
            c.observe("down", 2, T + MIN, T - MIN, MIN),
            behind(2 * MIN, 1)
        );
        // Grows by more: a new episode from there.
        assert_eq!(c.observe("more", 1, T, T - 2 * MIN, MIN), None);
        assert_eq!(c.observe("more", 2, T + MIN, T - 2 * MIN - 1, MIN), None);
        assert_eq!(
            c.observe("more", 3, T + 2 * MIN, T - MIN - 1, MIN),
            behind(3 * MIN + 1, 2)
        );
        // Shrinks by more: a new episode from there.
        assert_eq!(c.observe("less", 1, T, T - 3 * MIN - 1, MIN), None);
        assert_eq!(c.observe("less", 2, T + MIN, T - MIN, MIN), None);
        assert_eq!(
            c.observe("less", 3, T + 2 * MIN, T, MIN),
            behind(2 * MIN, 2)
        );
        assert_eq!(c.len(), 4, "each device in its episode");
        assert!(!c.is_empty());
    }

    /// The state survives a snapshot (the live audit resumes from one) unchanged.
    #[test]
    fn episodes_round_trip_through_json() {
        let mut c = DeviceClocks::default();
        c.observe("m1", 1, T, T - 2 * MIN, MIN);
        c.observe("m2", 2, T, T + 2 * MIN, MIN);
        let back: DeviceClocks = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
