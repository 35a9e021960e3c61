//! Machines' significant events (proto `MachineEvent`): what SAS exceptions and G2S events report
//! besides the meters, replayed against the meters, the games and the jackpot awards.
//!
//! # What the book keeps
//!
//! A machine gets an [`EventState`] with its first significant event (a machine that reports
//! none is checked, and serialised, exactly as before): which doors are open, whether it is
//! powered off, its uncleared tilts and device faults, the link to its agent, the last low
//! battery, pending hand pays, outstanding progressive hits, and the current **reading window**
//! (what happened since its last meter reading). Every event is also logged as per-event
//! detail ([`LoggedEvent`]: held, or handed out like the meter increases, for the
//! significant-events report).
//!
//! # Checks (P217/2007 T.III; where the Portuguese text is silent, `Review` and the standard
//! followed, see [`crate::CHECKS`])
//!
//! * **Play while the machine cannot be played.** A machine is *unplayable* while powered off,
//!   under a tilt or device fault that `disables_play`, or with a door open (25 CFR 547.10(a),
//!   (b)). At a reading, if the play meters (`coin_in`, `coin_out`, `games_played`) went up and
//!   either the machine was unplayable over the whole window (unplayable at the previous reading
//!   and never playable since) or a game was recorded while it was unplayable:
//!   `SLOT_METERS_MOVED_OUT_OF_SERVICE` (powered off, fault) or `SLOT_METERS_MOVED_DOOR_OPEN`.
//!   A window with movement and no game at all, on a machine that reports its games:
//!   `SLOT_METERS_WITHOUT_GAMES`. At most one of the three per window; none where an existing
//!   check already covers the movement (a meter fault, which a critical memory error now sets,
//!   or a `MachineFault` out of service: `SLOT_PLAYED_WITH_FAULTY_METER`,
//!   `SLOT_PLAYED_OUT_OF_SERVICE`).
//! * **Hand pays** (r.13, r.14): the hand pays reset in a window must equal the increase of the
//!   `hand_paid` meter at the reading that closes it (`SLOT_HANDPAY_METER_MISMATCH`, also when
//!   the meter went up with no hand pay, or the reading lacks it; not when the meter is only
//!   being baselined).
//! * **Progressives** (r.5, r.14): a hit must be awarded (`JackpotAwarded`, same pool and
//!   machine) before the machine's progressive reset or its next hit of the pool
//!   (`SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD`); an award on a machine that reports significant
//!   events needs an outstanding hit (`SLOT_AWARD_WITHOUT_HIT`).
//! * **Lost events**: every `EventsLost` is a gap in the record (`SLOT_EVENTS_LOST`), never
//!   silent.
//! * **Software** (r.7, r.8): a failed authentication (`SLOT_SOFTWARE_AUTH_FAILED`); a passed
//!   one whose (component, algorithm, signature) none of the model's `ProgramApproved` lists,
//!   when the model has approved programs (`SLOT_SOFTWARE_SIGNATURE_MISMATCH`).
//! * **Configuration changes** (r.8 reading): each cites one operator `MachineChangeAuthorized`
//!   for that machine, used once (`SLOT_CONFIG_CHANGE_UNAUTHORIZED`).
//!
//! Nothing here changes money: the machine's meters and the pools are settled as recorded and
//! the breach is flagged (the regulation prescribes no consequence). A critical memory error
//! marks the meters faulty (r.9) until `MachineRestored`, which also clears the tilts, device
//! faults and low battery (a technician verified the machine).

use std::collections::BTreeMap;

use rules_core::{Cents, Id};
use serde::{Deserialize, Serialize};

use crate::amount::add;
use crate::book::{Book, check_cents, check_id};
use crate::error::ApplyError;
use crate::event::{
    ChangeAuthorized, Door, DoorAction, EventCtx, HandPayState, JackpotAwarded, LostReporter,
    MachineEvent, ProgramApproved, Significant,
};
use crate::finding::{
    AWARD_WITHOUT_HIT, CONFIG_CHANGE_UNAUTHORIZED, EVENTS_LOST, Finding, HANDPAY_METER_MISMATCH,
    METERS_MOVED_DOOR_OPEN, METERS_MOVED_OUT_OF_SERVICE, METERS_WITHOUT_GAMES,
    PROGRESSIVE_HIT_WITHOUT_AWARD, SOFTWARE_AUTH_FAILED, SOFTWARE_SIGNATURE_MISMATCH,
};
use crate::state::{GameTally, Machine, Mark, MeterDelta};

/// One significant event as the book logged it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedEvent {
    pub index: u64,
    pub at_ms: i64,
    pub event: MachineEvent,
}

/// Why a machine cannot be played.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Why {
    /// The event that made it so.
    pub since: u64,
    /// A door is open (otherwise: powered off, or a fault).
    pub door: bool,
    pub what: String,
}

/// A tilt or device fault not yet cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActiveFault {
    pub since: u64,
    pub disables_play: bool,
}

/// A progressive hit the machine recorded, until its reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    pub at: u64,
    pub amount_cents: Cents,
    #[serde(default)]
    pub awarded: bool,
}

/// What happened since the machine's last reading.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Unplayable since the window began, without a break.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unplayable: Option<Why>,
    /// The first game recorded while unplayable (why, and the game's index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_unplayable: Option<(Why, u64)>,
    /// Hand pays reset: how many, their sum, the first one's index.
    #[serde(default)]
    pub handpays: u64,
    #[serde(default)]
    pub handpaid_cents: i128,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handpay_first: Option<u64>,
}

/// What a machine's significant events left standing ([`Machine::events`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub powered_off: Option<u64>,
    /// Open doors, since when.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub doors_open: BTreeMap<Door, u64>,
    /// Uncleared tilts and device faults, by `device/code`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub faults: BTreeMap<String, ActiveFault>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_down: Option<u64>,
    /// The last low-battery report, until a restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub battery_low: Option<u64>,
    #[serde(default)]
    pub handpays_pending: u64,
    /// Outstanding progressive hits, by pool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hits: BTreeMap<Id, Hit>,
    /// The machine reported a game (GamePlayed or GameEnded) since it reports events.
    #[serde(default)]
    pub reports_games: bool,
    #[serde(default)]
    pub window: Window,
    /// Logged events not handed out (per-event detail, [`Book::hand_out_detail`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LoggedEvent>,
    /// Events handed out of `log`.
    #[serde(default)]
    pub logged_out: u64,
}

impl EventState {
    /// Why the machine cannot be played now (powered off first, then a fault, then a door).
    pub fn unplayable_now(&self) -> Option<Why> {
        if let Some(since) = self.powered_off {
            return Some(Why {
                since,
                door: false,
                what: "powered off".into(),
            });
        }
        if let Some((key, f)) = self.faults.iter().find(|(_, f)| f.disables_play) {
            return Some(Why {
                since: f.since,
                door: false,
                what: format!("fault `{key}` not cleared"),
            });
        }
        self.doors_open.iter().next().map(|(door, since)| Why {
            since: *since,
            door: true,
            what: format!("{} door open", door.name()),
        })
    }

    /// After a change: a playable machine breaks the window's "unplayable throughout".
    fn settle(&mut self) {
        if self.unplayable_now().is_none() {
            self.window.unplayable = None;
        }
    }

    /// `MachineRestored`: a technician verified the machine (tilts, device faults and the low
    /// battery end; doors and power are physical states, reported by their own events).
    pub(crate) fn restored(&mut self) {
        self.faults.clear();
        self.battery_low = None;
        self.settle();
    }

    /// A game was recorded at `index`.
    pub(crate) fn note_game(&mut self, index: u64) {
        if self.window.game_unplayable.is_none()
            && let Some(why) = self.unplayable_now()
        {
            self.window.game_unplayable = Some((why, index));
        }
    }

    /// A new window begins (at a reading or a RAM clear).
    pub(crate) fn reset_window(&mut self) {
        self.window = Window {
            unplayable: self.unplayable_now(),
            ..Window::default()
        };
    }
}

/// A configuration-change authorisation of the operator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeAuth {
    pub machine_id: Id,
    pub at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_at: Option<u64>,
}

/// The `hand_paid` meter at a reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandPaid {
    /// Not in the reading.
    Absent,
    /// In the reading, but its increase over the window is not known (baseline, went back).
    Unknown,
    /// Its increase over exactly the window.
    Increase(u64),
}

/// What [`reading_checks`] is told about a reading.
pub(crate) struct ReadingFacts {
    pub delta: MeterDelta,
    pub games: u64,
    pub hand_paid: HandPaid,
    /// An older check already covers play in this window (meter fault, out of service).
    pub covered: bool,
}

/// The checks of a reading window (machines that report significant events), then a new
/// window. Called by the meter reading (and the "before" of a RAM clear) before it takes the
/// window's games.
pub(crate) fn reading_checks(machine: &mut Machine, facts: ReadingFacts) -> Vec<Finding> {
    let Some(ev) = machine.events.as_mut() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let d = facts.delta;
    let moved: Vec<String> = [
        ("coin_in", d.coin_in),
        ("coin_out", d.coin_out),
        ("games_played", d.games_played),
    ]
    .iter()
    .filter_map(|(n, v)| v.filter(|v| *v > 0).map(|v| format!("{n} +{v}")))
    .collect();
    if !moved.is_empty() && !facts.covered {
        let moved = moved.join(", ");
        let w = &ev.window;
        let found = if let Some((why, game)) = &w.game_unplayable {
            Some((why, Some(*game), "a game was recorded while"))
        } else {
            w.unplayable
                .as_ref()
                .map(|why| (why, None, "the machine was, over the whole window,"))
        };
        if let Some((why, game, how)) = found {
            let check = if why.door {
                &METERS_MOVED_DOOR_OPEN
            } else {
                &METERS_MOVED_OUT_OF_SERVICE
            };
            out.push(
                Finding::new(
                    check,
                    format!(
                        "machine `{}`: meters moved ({moved}) since the last reading and {how} {}",
                        machine.id, why.what
                    ),
                )
                .evidence([why.since].into_iter().chain(game)),
            );
        } else if facts.games == 0 && ev.reports_games {
            out.push(Finding::new(
                &METERS_WITHOUT_GAMES,
                format!(
                    "machine `{}`: meters moved ({moved}) since the last reading, and it reported no game",
                    machine.id
                ),
            ));
        }
    }
    let w = &ev.window;
    let reset = w.handpaid_cents;
    let mismatch = match facts.hand_paid {
        HandPaid::Absent if w.handpays > 0 => {
            Some("the reading has no hand_paid meter".to_string())
        }
        HandPaid::Increase(inc) if i128::from(inc) != reset => {
            Some(format!("the hand_paid meter went up by {inc} cents"))
        }
        _ => None,
    };
    if let Some(meter) = mismatch {
        let due = i64::try_from(reset).unwrap_or(i64::MAX);
        let reported = match facts.hand_paid {
            HandPaid::Increase(inc) => i64::try_from(inc).unwrap_or(i64::MAX),
            _ => 0,
        };
        out.push(
            Finding::new(
                &HANDPAY_METER_MISMATCH,
                format!(
                    "machine `{}`: {} hand pay(s) totalling {reset} cents were reset since the last reading; {meter}",
                    machine.id, w.handpays
                ),
            )
            .amounts(crate::amount::e4(due), reported)
            .evidence(w.handpay_first),
        );
    }
    ev.reset_window();
    out.into_iter()
        .map(|f| f.machine(&machine.id).casino(&machine.casino_id))
        .collect()
}

/// Field checks of a significant event (the book's own, whatever ingest did).
fn validate(e: &MachineEvent) -> Result<(), ApplyError> {
    check_id("machine_id", &e.machine_id)?;
    match &e.event {
        Significant::HandPay { amount_cents, .. } => {
            check_cents("amount_cents", *amount_cents)?;
            if *amount_cents == 0 {
                return Err(ApplyError::invalid("amount_cents", "a hand pay of nothing"));
            }
        }
        Significant::ProgressiveHit {
            pool_id,
            amount_cents,
            ..
        } => {
            check_id("pool_id", pool_id)?;
            check_cents("amount_cents", *amount_cents)?;
        }
        Significant::ProgressiveReset { pool_id } => check_id("pool_id", pool_id)?,
        Significant::DeviceFault { device, code, .. } => {
            check_id("device", device)?;
            check_id("code", code)?;
        }
        Significant::SoftwareAuthenticated {
            component,
            signature,
            ..
        } => {
            check_id("component", component)?;
            check_id("signature", signature)?;
        }
        Significant::ConfigurationChanged {
            changes,
            authorization_id,
        } => {
            if changes.is_empty() {
                return Err(ApplyError::invalid("changes", "no option changed"));
            }
            for (i, c) in changes.iter().enumerate() {
                check_id(&format!("changes[{i}].option"), &c.option)?;
            }
            if let Some(a) = authorization_id {
                check_id("authorization_id", a)?;
            }
        }
        Significant::GameStarted { wager_cents, .. } => check_cents("wager_cents", *wager_cents)?,
        Significant::GameEnded {
            wager_cents,
            win_cents,
            ..
        } => {
            check_cents("wager_cents", *wager_cents)?;
            check_cents("win_cents", *win_cents)?;
        }
        Significant::Door { .. }
        | Significant::Power { .. }
        | Significant::MemoryError
        | Significant::BatteryLow
        | Significant::Link { .. }
        | Significant::EventsLost { .. } => {}
    }
    Ok(())
}

impl Book {
    pub(crate) fn on_machine_event(
        &mut self,
        e: &MachineEvent,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        validate(e)?;
        let idx = ctx.ledger_index;
        let machine = self
            .machines
            .get(&*e.machine_id)
            .ok_or_else(|| ApplyError::unknown("machine_id", "machine", &e.machine_id))?;
        // ---- read-only: what the event needs from the rest of the book
        let mut out = Vec::new();
        let mut tally = None;
        match &e.event {
            Significant::ProgressiveHit { pool_id, .. }
            | Significant::ProgressiveReset { pool_id }
                if !self.pools.contains_key(&**pool_id) =>
            {
                return Err(ApplyError::unknown("pool_id", "pool", pool_id));
            }
            Significant::SoftwareAuthenticated {
                component,
                algorithm,
                signature,
                passed,
            } => {
                let model = self.models.get(&*machine.model_id);
                if !passed {
                    out.push(
                        Finding::new(
                            &SOFTWARE_AUTH_FAILED,
                            format!(
                                "machine `{}`: its program `{component}` failed authentication ({} {signature})",
                                machine.id,
                                if algorithm.is_empty() { "signature" } else { algorithm }
                            ),
                        )
                        .model(&machine.model_id),
                    );
                } else if let Some(model) = model.filter(|m| !m.programs.is_empty()) {
                    let approved = model
                        .programs
                        .get(component)
                        .is_some_and(|s| s.contains(&(algorithm.clone(), signature.clone())));
                    if !approved {
                        out.push(
                            Finding::new(
                                &SOFTWARE_SIGNATURE_MISMATCH,
                                format!(
                                    "machine `{}`: program `{component}` signature {algorithm} {signature} is not one \
                                     approved for model `{}`",
                                    machine.id, model.id
                                ),
                            )
                            .model(&model.id)
                            .evidence([model.approved_at]),
                        );
                    }
                }
            }
            Significant::ConfigurationChanged {
                authorization_id, ..
            } => {
                let problem = match authorization_id {
                    None => Some("cites no operator authorisation".to_string()),
                    Some(a) => match self.change_auths.get(a) {
                        None => Some(format!("cites `{a}`, which the operator never issued")),
                        Some(c) if c.machine_id != machine.id => Some(format!(
                            "cites `{a}`, which the operator issued for machine `{}`",
                            c.machine_id
                        )),
                        Some(ChangeAuth {
                            used_at: Some(u), ..
                        }) => Some(format!("cites `{a}`, already used by entry {u}")),
                        Some(_) => None,
                    },
                };
                if let Some(problem) = problem {
                    let issued = authorization_id
                        .as_ref()
                        .and_then(|a| self.change_auths.get(a))
                        .map(|c| c.at);
                    out.push(
                        Finding::new(
                            &CONFIG_CHANGE_UNAUTHORIZED,
                            format!("machine `{}`: a configuration change {problem}", machine.id),
                        )
                        .evidence(issued),
                    );
                }
            }
            Significant::GameEnded {
                wager_cents,
                win_cents,
                ..
            } => {
                let g = &machine.games;
                tally = Some(GameTally {
                    count: g
                        .count
                        .checked_add(1)
                        .ok_or_else(|| ApplyError::overflow("game count"))?,
                    wager_cents: add(g.wager_cents, i128::from(*wager_cents), "game wagers")?,
                    win_cents: add(g.win_cents, i128::from(*win_cents), "game wins")?,
                    first: g.first.or(Some(idx)),
                });
            }
            Significant::HandPay {
                state: HandPayState::Reset,
                amount_cents,
                ..
            } => {
                let w = machine.events.as_ref().map(|s| &s.window);
                add(
                    w.map_or(0, |w| w.handpaid_cents),
                    i128::from(*amount_cents),
                    "hand pays",
                )?;
            }
            _ => {}
        }

        // ---- commit
        if let Significant::ConfigurationChanged {
            authorization_id: Some(a),
            ..
        } = &e.event
            && out.is_empty()
            && let Some(c) = self.change_auths.get_mut(a)
        {
            c.used_at = Some(idx);
        }
        let Some(machine) = self.machines.get_mut(&*e.machine_id) else {
            return Ok(out);
        };
        let mut played = Vec::new();
        if let Some(t) = tally {
            machine.games = t;
        }
        if let Significant::GameEnded { wager_cents, .. } = &e.event
            && *wager_cents > 0
        {
            crate::meters::played_check(machine, idx, idx, &mut played);
        }
        if matches!(e.event, Significant::MemoryError) && machine.meter_fault.is_none() {
            machine.meter_fault = Some(Mark {
                since: idx,
                code: "memory_error".into(),
                by_reading: false,
            });
        }
        let ev = machine.events.get_or_insert_with(Default::default);
        match &e.event {
            Significant::Door { door, action } => match action {
                DoorAction::Opened => {
                    ev.doors_open.entry(*door).or_insert(idx);
                }
                DoorAction::Closed => {
                    ev.doors_open.remove(door);
                }
                DoorAction::OpenedWhilePoweredOff => {}
            },
            Significant::Power { on } => {
                if *on {
                    ev.powered_off = None;
                } else if ev.powered_off.is_none() {
                    ev.powered_off = Some(idx);
                }
            }
            Significant::MemoryError => {}
            Significant::BatteryLow => ev.battery_low = Some(idx),
            Significant::HandPay {
                state,
                amount_cents,
                ..
            } => match state {
                HandPayState::Pending => {
                    ev.handpays_pending = ev.handpays_pending.saturating_add(1);
                }
                HandPayState::Reset => {
                    ev.handpays_pending = ev.handpays_pending.saturating_sub(1);
                    let w = &mut ev.window;
                    w.handpays = w.handpays.saturating_add(1);
                    w.handpaid_cents = w.handpaid_cents.saturating_add(i128::from(*amount_cents));
                    w.handpay_first = w.handpay_first.or(Some(idx));
                }
            },
            Significant::ProgressiveHit {
                pool_id,
                amount_cents,
                ..
            } => {
                if let Some(old) = ev.hits.get(pool_id).filter(|h| !h.awarded) {
                    out.push(
                        Finding::new(
                            &PROGRESSIVE_HIT_WITHOUT_AWARD,
                            format!(
                                "machine `{}`: its hit of pool `{pool_id}` ({} cents) was never awarded before it hit \
                                 the pool again",
                                machine.id, old.amount_cents
                            ),
                        )
                        .pool(pool_id)
                        .evidence([old.at]),
                    );
                }
                ev.hits.insert(
                    pool_id.clone(),
                    Hit {
                        at: idx,
                        amount_cents: *amount_cents,
                        awarded: false,
                    },
                );
            }
            Significant::ProgressiveReset { pool_id } => {
                if let Some(old) = ev.hits.remove(pool_id)
                    && !old.awarded
                {
                    out.push(
                        Finding::new(
                            &PROGRESSIVE_HIT_WITHOUT_AWARD,
                            format!(
                                "machine `{}`: its hit of pool `{pool_id}` ({} cents) was reset with no award",
                                machine.id, old.amount_cents
                            ),
                        )
                        .pool(pool_id)
                        .evidence([old.at]),
                    );
                }
            }
            Significant::DeviceFault {
                device,
                code,
                cleared,
                disables_play,
            } => {
                let key = format!("{device}/{code}");
                if *cleared {
                    ev.faults.remove(&key);
                } else {
                    ev.faults.entry(key).or_insert(ActiveFault {
                        since: idx,
                        disables_play: *disables_play,
                    });
                }
            }
            Significant::Link { up } => {
                if *up {
                    ev.link_down = None;
                } else if ev.link_down.is_none() {
                    ev.link_down = Some(idx);
                }
            }
            Significant::EventsLost {
                reporter,
                count,
                from_ms,
                to_ms,
            } => {
                let who = match reporter {
                    LostReporter::Machine => "the machine",
                    LostReporter::Agent => "its agent",
                };
                let how_many = if *count == 0 {
                    "an unknown number of".to_string()
                } else {
                    count.to_string()
                };
                let span = if *from_ms > 0 || *to_ms > 0 {
                    format!(" (between {from_ms} and {to_ms} ms)")
                } else {
                    String::new()
                };
                out.push(Finding::new(
                    &EVENTS_LOST,
                    format!(
                        "machine `{}`: {who} lost {how_many} event(s) before they could be reported{span}",
                        machine.id
                    ),
                ));
            }
            Significant::GameStarted { .. } | Significant::GameEnded { .. } => {
                ev.note_game(idx);
                if matches!(e.event, Significant::GameEnded { .. }) {
                    ev.reports_games = true;
                }
            }
            Significant::SoftwareAuthenticated { .. }
            | Significant::ConfigurationChanged { .. } => {}
        }
        ev.settle();
        ev.log.push(LoggedEvent {
            index: idx,
            at_ms: ctx.at_ms,
            event: e.clone(),
        });
        out.extend(played);
        Ok(out
            .into_iter()
            .map(|f| f.machine(&machine.id).casino(&machine.casino_id))
            .collect())
    }

    /// After an accepted `JackpotAwarded`: on a machine that reports significant events, a
    /// machine pool's award needs the machine's outstanding hit of that pool.
    pub(crate) fn award_hit_check(&mut self, e: &JackpotAwarded, _ctx: EventCtx) -> Vec<Finding> {
        let machine_pool = self
            .pools
            .get(&*e.pool_id)
            .is_some_and(|p| p.kind.is_machine_pool());
        let Some(machine) = self.machines.get_mut(&*e.machine_id) else {
            return Vec::new();
        };
        let Some(ev) = machine.events.as_mut() else {
            return Vec::new();
        };
        if !machine_pool {
            return Vec::new();
        }
        match ev.hits.get_mut(&e.pool_id) {
            Some(h) if !h.awarded => {
                h.awarded = true;
                Vec::new()
            }
            other => {
                let why = if other.is_some() {
                    "its last hit of the pool was already awarded"
                } else {
                    "the machine recorded no hit of the pool"
                };
                let f = Finding::new(
                    &AWARD_WITHOUT_HIT,
                    format!(
                        "pool `{}` awarded {} cents on machine `{}`: {why}",
                        e.pool_id, e.amount_cents, machine.id
                    ),
                )
                .machine(&machine.id)
                .pool(&e.pool_id)
                .casino(&machine.casino_id)
                .evidence(other.map(|h| h.at));
                vec![f]
            }
        }
    }

    pub(crate) fn on_change_authorized(
        &mut self,
        e: &ChangeAuthorized,
        ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("authorization_id", &e.authorization_id)?;
        check_id("machine_id", &e.machine_id)?;
        if !self.machines.contains_key(&*e.machine_id) {
            return Err(ApplyError::unknown("machine_id", "machine", &e.machine_id));
        }
        if let Some(c) = self.change_auths.get(&*e.authorization_id) {
            if c.machine_id == e.machine_id {
                return Ok(Vec::new());
            }
            return Err(ApplyError::invalid(
                "authorization_id",
                format!(
                    "`{}` already authorises a change of machine `{}`",
                    e.authorization_id, c.machine_id
                ),
            ));
        }
        self.change_auths.insert(
            e.authorization_id.clone(),
            ChangeAuth {
                machine_id: e.machine_id.clone(),
                at: ctx.ledger_index,
                used_at: None,
            },
        );
        Ok(Vec::new())
    }

    pub(crate) fn on_program_approved(
        &mut self,
        e: &ProgramApproved,
        _ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("model_id", &e.model_id)?;
        check_id("component", &e.component)?;
        check_id("signature", &e.signature)?;
        let model = self
            .models
            .get_mut(&*e.model_id)
            .ok_or_else(|| ApplyError::unknown("model_id", "model", &e.model_id))?;
        model
            .programs
            .entry(e.component.clone())
            .or_default()
            .insert((e.algorithm.clone(), e.signature.clone()));
        Ok(Vec::new())
    }

    /// Hand `machine_id`'s logged events out (hand-out mode).
    pub(crate) fn hand_out_events(&mut self, machine_id: &str) {
        let Some(m) = self.machines.get_mut(machine_id) else {
            return;
        };
        let Some(ev) = m.events.as_mut() else {
            return;
        };
        for event in std::mem::take(&mut ev.log) {
            ev.logged_out = ev.logged_out.saturating_add(1);
            self.outbox.push(crate::detail::Detail::Event {
                machine_id: m.id.clone(),
                event,
            });
        }
    }
}

// ------------------------------------------------------------------------------ the report

/// A page of a machine's significant events over a period: the significant-events report
/// (`ledgerctl jackpot events`, the `Jackpots.GetMachineEvents` RPC).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsReport {
    pub machine_id: Id,
    pub casino_id: Id,
    pub model_id: Id,
    /// What the machine's events leave standing now (doors open, power, faults, link, pending
    /// hand pays, outstanding hits, the current reading window), without the log; absent for a
    /// machine that never reported a significant event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<EventState>,
    /// The page, oldest first.
    pub events: Vec<LoggedEvent>,
    /// Events of this page by kind.
    pub counts: BTreeMap<String, u64>,
    /// More events match: pass this index as `after_index` for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after: Option<u64>,
}

impl EventsReport {
    /// The report of `events` (a page), with the machine's current state.
    pub fn new(machine: &Machine, events: Vec<LoggedEvent>, more: bool) -> EventsReport {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for e in &events {
            let n = counts.entry(e.event.event.name().to_string()).or_default();
            *n = n.saturating_add(1);
        }
        let status = machine.events.as_ref().map(|s| {
            let mut s = EventState::clone(s);
            s.log.clear();
            s
        });
        EventsReport {
            machine_id: machine.id.clone(),
            casino_id: machine.casino_id.clone(),
            model_id: machine.model_id.clone(),
            status,
            next_after: if more {
                events.last().map(|e| e.index)
            } else {
                None
            },
            events,
            counts,
        }
    }
}

/// Which of a machine's events a query wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventQuery {
    pub period: crate::report::Period,
    /// Only events after this ledger index (paging).
    pub after_index: Option<u64>,
    /// Only these kinds ([`Significant::name`]); empty: every kind.
    pub kinds: Vec<String>,
}

impl Default for EventQuery {
    fn default() -> EventQuery {
        EventQuery {
            period: crate::report::Period::All,
            after_index: None,
            kinds: Vec::new(),
        }
    }
}

impl EventQuery {
    /// Whether `e` is wanted.
    pub fn matches(&self, e: &LoggedEvent) -> bool {
        self.period.contains(e.index, e.at_ms)
            && self.after_index.is_none_or(|a| e.index > a)
            && (self.kinds.is_empty() || self.kinds.iter().any(|k| k == e.event.event.name()))
    }
}

/// The kinds a query may name.
pub const EVENT_KINDS: [&str; 14] = [
    "door",
    "power",
    "memory_error",
    "battery_low",
    "hand_pay",
    "progressive_hit",
    "progressive_reset",
    "device_fault",
    "link",
    "events_lost",
    "software_authenticated",
    "configuration_changed",
    "game_started",
    "game_ended",
];

impl Book {
    /// Up to `limit` of `machine_id`'s significant events matching `query`, oldest first, and
    /// whether more match, read from `source` ([`crate::Held`] or a store of handed-out detail).
    pub fn machine_events_from<S: crate::DetailSource + ?Sized>(
        &self,
        source: &S,
        machine_id: &str,
        query: &EventQuery,
        limit: usize,
    ) -> Result<(Vec<LoggedEvent>, bool), crate::QueryError> {
        if !self.machines.contains_key(machine_id) {
            return Err(crate::QueryError::unknown("machine", machine_id));
        }
        let mut events = source.machine_events(machine_id, query, limit.saturating_add(1))?;
        let more = events.len() > limit;
        events.truncate(limit);
        Ok((events, more))
    }

    /// [`Book::machine_events_from`] and the machine's state, as the report.
    pub fn events_report_from<S: crate::DetailSource + ?Sized>(
        &self,
        source: &S,
        machine_id: &str,
        query: &EventQuery,
        limit: usize,
    ) -> Result<EventsReport, crate::QueryError> {
        let (events, more) = self.machine_events_from(source, machine_id, query, limit)?;
        let machine = self
            .machines
            .get(machine_id)
            .ok_or_else(|| crate::QueryError::unknown("machine", machine_id))?;
        Ok(EventsReport::new(machine, events, more))
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
    use crate::event::{
        COIN_IN, COIN_OUT, Event, GAMES_PLAYED, GamePlayed, HAND_PAID, HandPayKind,
        MachineRegistered, MachineRestored, Meter, MeterReading, ModelApproved, OptionChange,
        PoolConfigured, PoolKind, TOTAL_DROP,
    };
    use crate::finding::codes::*;

    /// A book with model K (program `game` sha256 `aa11` approved), machines m1 and m2, and m1's
    /// jackpot `jp1`; m1 has a first reading.
    struct Floor {
        book: Book,
        index: u64,
        coin_in: u64,
        coin_out: u64,
        games: u64,
        hand_paid: u64,
    }

    impl Floor {
        fn new() -> Floor {
            let mut f = Floor {
                book: Book::new(),
                index: 0,
                coin_in: 1_000_000,
                coin_out: 900_000,
                games: 10_000,
                hand_paid: 0,
            };
            f.ok(Event::ModelApproved(ModelApproved {
                model_id: "K".into(),
                theoretical_rtp_bp: 9_000,
                bet_values_cents: vec![100],
                approval_ref: "IGJ-1".into(),
            }));
            f.ok(Event::ProgramApproved(ProgramApproved {
                model_id: "K".into(),
                component: "game".into(),
                algorithm: "sha256".into(),
                signature: "aa11".into(),
                approval_ref: "IGJ-1/sw".into(),
            }));
            for m in ["m1", "m2"] {
                f.ok(Event::MachineRegistered(MachineRegistered {
                    machine_id: m.into(),
                    casino_id: "A".into(),
                    model_id: "K".into(),
                    bet_values_cents: vec![100],
                }));
            }
            f.ok(Event::PoolConfigured(PoolConfigured {
                pool_id: "jp1".into(),
                kind: PoolKind::Jackpot,
                casino_ids: vec![],
                member_machine_ids: vec!["m1".into()],
                member_table_ids: vec![],
                contribution_bp: 100,
                start_value_cents: 10_000,
                reset_value_cents: 0,
            }));
            f.read();
            f
        }

        fn apply(&mut self, e: Event) -> Result<Vec<Finding>, ApplyError> {
            self.index += 1;
            self.book.apply(
                &e,
                EventCtx {
                    ledger_index: self.index,
                    at_ms: 1_767_225_600_000 + self.index as i64,
                },
            )
        }

        fn ok(&mut self, e: Event) -> Vec<String> {
            self.apply(e)
                .unwrap()
                .into_iter()
                .map(|f| f.code.to_string())
                .collect()
        }

        fn sig(&mut self, event: Significant) -> Vec<String> {
            self.ok(Event::MachineEvent(MachineEvent {
                machine_id: "m1".into(),
                source_code: String::new(),
                detail: String::new(),
                event,
            }))
        }

        /// m1 reads its meters (hand_paid among them when `with_hand_paid`).
        fn reading(&mut self, with_hand_paid: bool) -> Vec<String> {
            let mut meters = vec![
                Meter::new(COIN_IN, self.coin_in, 0),
                Meter::new(COIN_OUT, self.coin_out, 0),
                Meter::new(TOTAL_DROP, 0, 0),
                Meter::new(GAMES_PLAYED, self.games, 0),
            ];
            if with_hand_paid {
                meters.push(Meter::new(HAND_PAID, self.hand_paid, 0));
            }
            self.ok(Event::MeterReading(MeterReading {
                machine_id: "m1".into(),
                meters,
            }))
        }

        fn read(&mut self) -> Vec<String> {
            self.reading(true)
        }

        /// One game of 100 cents played on the meters, reported as GameStarted + GameEnded
        /// (`report`), or not at all.
        fn play(&mut self, report: bool) -> Vec<String> {
            self.coin_in += 100;
            self.coin_out += 50;
            self.games += 1;
            if !report {
                return Vec::new();
            }
            let n = self.games;
            let mut out = self.sig(Significant::GameStarted {
                game_number: n,
                wager_cents: 100,
            });
            out.extend(self.sig(Significant::GameEnded {
                game_number: n,
                wager_cents: 100,
                win_cents: 50,
            }));
            out
        }

        fn door(&mut self, door: Door, action: DoorAction) -> Vec<String> {
            self.sig(Significant::Door { door, action })
        }

        fn award(&mut self, amount: Cents) -> Vec<String> {
            self.ok(Event::JackpotAwarded(JackpotAwarded {
                pool_id: "jp1".into(),
                machine_id: "m1".into(),
                amount_cents: amount,
                winner: String::new(),
                game_number: 0,
            }))
        }

        fn captive(&self) -> Cents {
            crate::amount::to_cents(self.book.pool("jp1").unwrap().captive_e4)
        }
    }

    fn none() -> Vec<String> {
        Vec::new()
    }

    fn one(code: &str) -> Vec<String> {
        vec![code.to_string()]
    }

    /// An honest machine's day: doors, power, a tilt, a hand pay, a progressive, its software,
    /// an authorised change, games and readings: no finding, twice the same state.
    fn honest_day(f: &mut Floor) -> Vec<String> {
        let mut all = Vec::new();
        let mut add = |v: Vec<String>| all.extend(v);
        add(f.sig(Significant::SoftwareAuthenticated {
            component: "game".into(),
            algorithm: "sha256".into(),
            signature: "aa11".into(),
            passed: true,
        }));
        for _ in 0..3 {
            add(f.play(true));
        }
        add(f.read());
        add(f.door(Door::Main, DoorAction::Opened));
        add(f.read());
        add(f.door(Door::Main, DoorAction::Closed));
        add(f.sig(Significant::Power { on: false }));
        add(f.read());
        add(f.door(Door::Logic, DoorAction::OpenedWhilePoweredOff));
        add(f.sig(Significant::Power { on: true }));
        add(f.play(true));
        add(f.sig(Significant::DeviceFault {
            device: "printer".into(),
            code: "paper_out".into(),
            cleared: false,
            disables_play: true,
        }));
        add(f.sig(Significant::DeviceFault {
            device: "printer".into(),
            code: "paper_out".into(),
            cleared: true,
            disables_play: true,
        }));
        add(f.play(true));
        add(f.read());
        add(f.sig(Significant::HandPay {
            state: HandPayState::Pending,
            pay_kind: HandPayKind::CancelledCredits,
            handpay_id: "hp1".into(),
            amount_cents: 150_000,
        }));
        add(f.sig(Significant::HandPay {
            state: HandPayState::Reset,
            pay_kind: HandPayKind::CancelledCredits,
            handpay_id: "hp1".into(),
            amount_cents: 150_000,
        }));
        f.hand_paid += 150_000;
        add(f.read());
        let captive = f.captive();
        add(f.sig(Significant::ProgressiveHit {
            pool_id: "jp1".into(),
            amount_cents: captive,
            level: 1,
        }));
        add(f.award(captive));
        add(f.sig(Significant::ProgressiveReset {
            pool_id: "jp1".into(),
        }));
        add(f.ok(Event::ChangeAuthorized(ChangeAuthorized {
            authorization_id: "CH-1".into(),
            machine_id: "m1".into(),
            detail: "sound off".into(),
        })));
        add(f.sig(Significant::ConfigurationChanged {
            changes: vec![OptionChange {
                option: "sound".into(),
                old_value: "on".into(),
                new_value: "off".into(),
            }],
            authorization_id: Some("CH-1".into()),
        }));
        add(f.sig(Significant::Link { up: false }));
        add(f.sig(Significant::Link { up: true }));
        add(f.sig(Significant::BatteryLow));
        add(f.play(true));
        add(f.read());
        all
    }

    #[test]
    fn an_honest_machine_raises_nothing_and_replays_identically() {
        let mut a = Floor::new();
        assert_eq!(honest_day(&mut a), none());
        let ev = a.book.machine("m1").unwrap().events.as_ref().unwrap();
        assert!(ev.doors_open.is_empty() && ev.faults.is_empty() && ev.hits.is_empty());
        assert_eq!(ev.battery_low.map(|_| ()), Some(()));
        assert_eq!(ev.log.len(), 28);
        let mut b = Floor::new();
        honest_day(&mut b);
        assert_eq!(
            serde_json::to_string(&a.book).unwrap(),
            serde_json::to_string(&b.book).unwrap()
        );
        // The state round-trips through its snapshot form.
        let back: Book = serde_json::from_str(&serde_json::to_string(&a.book).unwrap()).unwrap();
        assert_eq!(back, a.book);
    }

    #[test]
    fn a_machine_without_significant_events_is_checked_as_before() {
        let mut f = Floor::new();
        assert!(f.book.machine("m1").unwrap().events.is_none());
        f.play(false);
        assert_eq!(f.read(), none());
        // No hit needed for an award either.
        let captive = f.captive();
        assert_eq!(f.award(captive), none());
        assert!(
            !serde_json::to_string(&f.book)
                .unwrap()
                .contains("\"events\"")
        );
    }

    #[test]
    fn meters_moving_while_powered_off_or_tilted() {
        let mut f = Floor::new();
        f.sig(Significant::Power { on: false });
        assert_eq!(f.read(), none());
        // Off over the whole window, and the meters moved.
        f.play(false);
        assert_eq!(f.read(), one(SLOT_METERS_MOVED_OUT_OF_SERVICE));
        // Still off, nothing moved: nothing.
        assert_eq!(f.read(), none());
        // Powered on within the window: the play may have followed it.
        f.sig(Significant::Power { on: true });
        f.play(true);
        assert_eq!(f.read(), none());
        // A game recorded under a play-disabling tilt, in a window that began playable.
        f.sig(Significant::DeviceFault {
            device: "reels".into(),
            code: "tilt".into(),
            cleared: false,
            disables_play: true,
        });
        f.play(true);
        f.sig(Significant::DeviceFault {
            device: "reels".into(),
            code: "tilt".into(),
            cleared: true,
            disables_play: true,
        });
        let got = f.read();
        assert_eq!(got, one(SLOT_METERS_MOVED_OUT_OF_SERVICE));
        // A fault that does not disable play is no obstacle.
        f.sig(Significant::DeviceFault {
            device: "printer".into(),
            code: "paper_low".into(),
            cleared: false,
            disables_play: false,
        });
        f.play(true);
        assert_eq!(f.read(), none());
    }

    #[test]
    fn meters_moving_under_an_open_door() {
        let mut f = Floor::new();
        f.door(Door::CashBox, DoorAction::Opened);
        assert_eq!(f.read(), none());
        f.play(true);
        let findings = f.apply(Event::MeterReading(MeterReading {
            machine_id: "m1".into(),
            meters: vec![
                Meter::new(COIN_IN, f.coin_in, 0),
                Meter::new(COIN_OUT, f.coin_out, 0),
                Meter::new(TOTAL_DROP, 0, 0),
                Meter::new(GAMES_PLAYED, f.games, 0),
                Meter::new(HAND_PAID, f.hand_paid, 0),
            ],
        }));
        let findings = findings.unwrap();
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, SLOT_METERS_MOVED_DOOR_OPEN);
        assert_eq!(findings[0].confidence, rules_core::Confidence::Review);
        assert!(findings[0].message.contains("cash box door open"));
        assert_eq!(findings[0].machine_id.as_deref(), Some("m1"));
        // The door closed before the play: nothing.
        f.door(Door::CashBox, DoorAction::Closed);
        f.play(true);
        assert_eq!(f.read(), none());
        // Powered off and a door open: one finding, for the power.
        f.door(Door::Belly, DoorAction::Opened);
        f.sig(Significant::Power { on: false });
        f.play(true);
        assert_eq!(f.read(), one(SLOT_METERS_MOVED_OUT_OF_SERVICE));
    }

    #[test]
    fn meters_moving_without_the_games_that_explain_them() {
        let mut f = Floor::new();
        f.play(true);
        assert_eq!(f.read(), none());
        f.play(false);
        assert_eq!(f.read(), one(SLOT_METERS_WITHOUT_GAMES));
        // GamePlayed explains them as well.
        f.coin_in += 100;
        f.games += 1;
        f.ok(Event::GamePlayed(GamePlayed {
            machine_id: "m1".into(),
            game_number: f.games,
            wager_cents: 100,
            win_cents: 0,
        }));
        assert_eq!(f.read(), none());
        // A machine that never reported a game is not asked for them.
        let mut g = Floor::new();
        g.sig(Significant::BatteryLow);
        g.play(false);
        assert_eq!(g.read(), none());
    }

    #[test]
    fn play_an_older_check_covers_is_not_flagged_twice() {
        let mut f = Floor::new();
        f.play(true);
        f.read();
        // A critical memory error is a meter fault (r.9).
        f.sig(Significant::MemoryError);
        assert_eq!(
            f.book
                .machine("m1")
                .unwrap()
                .meter_fault
                .as_ref()
                .unwrap()
                .code,
            "memory_error"
        );
        f.sig(Significant::Power { on: false });
        f.read();
        f.play(false);
        assert_eq!(f.read(), one(SLOT_PLAYED_WITH_FAULTY_METER));
        // Restored: the fault ends; the machine is still off.
        f.ok(Event::MachineRestored(MachineRestored {
            machine_id: "m1".into(),
            detail: String::new(),
            pool_ids: vec![],
        }));
        f.play(false);
        assert_eq!(f.read(), one(SLOT_METERS_MOVED_OUT_OF_SERVICE));
    }

    #[test]
    fn hand_pays_against_the_hand_paid_meter() {
        let reset = |f: &mut Floor, amount| {
            f.sig(Significant::HandPay {
                state: HandPayState::Reset,
                pay_kind: HandPayKind::Jackpot,
                handpay_id: String::new(),
                amount_cents: amount,
            })
        };
        let mut f = Floor::new();
        reset(&mut f, 120_000);
        f.hand_paid += 120_000;
        assert_eq!(f.read(), none());
        // Paid by hand, and the meter did not move.
        reset(&mut f, 80_000);
        let got = f
            .apply(Event::MeterReading(MeterReading {
                machine_id: "m1".into(),
                meters: vec![
                    Meter::new(COIN_IN, f.coin_in, 0),
                    Meter::new(COIN_OUT, f.coin_out, 0),
                    Meter::new(TOTAL_DROP, 0, 0),
                    Meter::new(HAND_PAID, f.hand_paid, 0),
                ],
            }))
            .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].code, SLOT_HANDPAY_METER_MISMATCH);
        let a = got[0].amounts.unwrap();
        assert_eq!((a.due_cents, a.reported_cents), (80_000, 0));
        // The meter moved with no hand pay.
        f.hand_paid += 5_000;
        assert_eq!(f.read(), one(SLOT_HANDPAY_METER_MISMATCH));
        // A reading without the meter, after a hand pay.
        reset(&mut f, 1_000);
        assert_eq!(f.reading(false), one(SLOT_HANDPAY_METER_MISMATCH));
        // The meter's next reading is its baseline again: not comparable, nothing.
        reset(&mut f, 1_000);
        f.hand_paid += 7;
        assert_eq!(f.reading(true), none());
        // Two in one window, summed.
        reset(&mut f, 300);
        reset(&mut f, 400);
        f.hand_paid += 700;
        assert_eq!(f.read(), none());
    }

    #[test]
    fn progressive_hits_and_awards() {
        let hit = |f: &mut Floor| {
            let c = f.captive();
            f.sig(Significant::ProgressiveHit {
                pool_id: "jp1".into(),
                amount_cents: c,
                level: 1,
            })
        };
        let reset = |f: &mut Floor| {
            f.sig(Significant::ProgressiveReset {
                pool_id: "jp1".into(),
            })
        };
        let mut f = Floor::new();
        f.sig(Significant::BatteryLow);
        // A hit reset with no award.
        assert_eq!(hit(&mut f), none());
        assert_eq!(reset(&mut f), one(SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD));
        // A hit, then another hit of the pool, with no award in between.
        hit(&mut f);
        assert_eq!(hit(&mut f), one(SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD));
        let c = f.captive();
        assert_eq!(f.award(c), none());
        assert_eq!(reset(&mut f), none());
        // An award with no hit, and a second award of one hit.
        f.play(true);
        f.read();
        let c = f.captive();
        assert_eq!(f.award(c), one(SLOT_AWARD_WITHOUT_HIT));
        hit(&mut f);
        let c = f.captive();
        assert_eq!(f.award(c), none());
        assert_eq!(f.award(1), {
            let mut v = one(SLOT_JACKPOT_AWARD_MISMATCH);
            v.push(SLOT_AWARD_WITHOUT_HIT.into());
            v
        });
        // A reset with no hit at all is nothing to check.
        reset(&mut f);
        assert_eq!(reset(&mut f), none());
    }

    #[test]
    fn lost_events_are_always_reported() {
        let mut f = Floor::new();
        for reporter in [LostReporter::Machine, LostReporter::Agent] {
            let got = f
                .apply(Event::MachineEvent(MachineEvent {
                    machine_id: "m1".into(),
                    source_code: "SAS:70".into(),
                    detail: String::new(),
                    event: Significant::EventsLost {
                        reporter,
                        count: 0,
                        from_ms: 0,
                        to_ms: 0,
                    },
                }))
                .unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].code, SLOT_EVENTS_LOST);
            assert!(
                got[0].message.contains("unknown number"),
                "{}",
                got[0].message
            );
        }
    }

    #[test]
    fn software_authentication() {
        let auth = |f: &mut Floor, component: &str, algorithm: &str, sig: &str, passed| {
            f.sig(Significant::SoftwareAuthenticated {
                component: component.into(),
                algorithm: algorithm.into(),
                signature: sig.into(),
                passed,
            })
        };
        let mut f = Floor::new();
        assert_eq!(auth(&mut f, "game", "sha256", "aa11", true), none());
        assert_eq!(
            auth(&mut f, "game", "sha256", "aa11", false),
            one(SLOT_SOFTWARE_AUTH_FAILED)
        );
        assert_eq!(
            auth(&mut f, "game", "sha256", "bb22", true),
            one(SLOT_SOFTWARE_SIGNATURE_MISMATCH)
        );
        assert_eq!(
            auth(&mut f, "game", "sha1", "aa11", true),
            one(SLOT_SOFTWARE_SIGNATURE_MISMATCH)
        );
        assert_eq!(
            auth(&mut f, "os", "sha256", "aa11", true),
            one(SLOT_SOFTWARE_SIGNATURE_MISMATCH)
        );
        // A second version approved: both pass.
        f.ok(Event::ProgramApproved(ProgramApproved {
            model_id: "K".into(),
            component: "game".into(),
            algorithm: "sha256".into(),
            signature: "bb22".into(),
            approval_ref: String::new(),
        }));
        assert_eq!(auth(&mut f, "game", "sha256", "bb22", true), none());
        assert_eq!(auth(&mut f, "game", "sha256", "aa11", true), none());
        // A re-approval of the model keeps its programs.
        f.ok(Event::ModelApproved(ModelApproved {
            model_id: "K".into(),
            theoretical_rtp_bp: 9_100,
            bet_values_cents: vec![100],
            approval_ref: "IGJ-2".into(),
        }));
        assert_eq!(auth(&mut f, "game", "sha256", "bb22", true), none());
        // A model with no approved program: nothing to compare.
        let mut g = Floor::new();
        g.book.models.get_mut("K").unwrap().programs.clear();
        assert_eq!(auth(&mut g, "game", "md5", "00", true), none());
        // A program of an unknown model is refused.
        let e = g
            .apply(Event::ProgramApproved(ProgramApproved {
                model_id: "Q".into(),
                component: "game".into(),
                algorithm: String::new(),
                signature: "00".into(),
                approval_ref: String::new(),
            }))
            .unwrap_err();
        assert!(e.to_string().contains("model_id"), "{e}");
    }

    #[test]
    fn configuration_changes_need_an_operator_authorisation() {
        let change = |f: &mut Floor, machine: &str, auth: Option<&str>| {
            f.ok(Event::MachineEvent(MachineEvent {
                machine_id: machine.into(),
                source_code: String::new(),
                detail: String::new(),
                event: Significant::ConfigurationChanged {
                    changes: vec![OptionChange {
                        option: "max_bet".into(),
                        old_value: "100".into(),
                        new_value: "200".into(),
                    }],
                    authorization_id: auth.map(Id::from),
                },
            }))
        };
        let authorise = |f: &mut Floor, id: &str, machine: &str| {
            f.ok(Event::ChangeAuthorized(ChangeAuthorized {
                authorization_id: id.into(),
                machine_id: machine.into(),
                detail: String::new(),
            }))
        };
        let mut f = Floor::new();
        assert_eq!(
            change(&mut f, "m1", None),
            one(SLOT_CONFIG_CHANGE_UNAUTHORIZED)
        );
        assert_eq!(
            change(&mut f, "m1", Some("CH-9")),
            one(SLOT_CONFIG_CHANGE_UNAUTHORIZED)
        );
        authorise(&mut f, "CH-1", "m1");
        authorise(&mut f, "CH-2", "m2");
        assert_eq!(
            change(&mut f, "m1", Some("CH-2")),
            one(SLOT_CONFIG_CHANGE_UNAUTHORIZED)
        );
        assert_eq!(change(&mut f, "m1", Some("CH-1")), none());
        assert_eq!(
            change(&mut f, "m1", Some("CH-1")),
            one(SLOT_CONFIG_CHANGE_UNAUTHORIZED)
        );
        assert_eq!(change(&mut f, "m2", Some("CH-2")), none());
        // The same authorisation again is idempotent; for another machine, refused.
        authorise(&mut f, "CH-1", "m1");
        assert!(
            f.apply(Event::ChangeAuthorized(ChangeAuthorized {
                authorization_id: "CH-1".into(),
                machine_id: "m2".into(),
                detail: String::new(),
            }))
            .is_err()
        );
    }

    #[test]
    fn what_the_book_cannot_read_changes_nothing() {
        let mut f = Floor::new();
        f.sig(Significant::Power { on: false });
        let before = f.book.clone();
        let bad = [
            MachineEvent {
                machine_id: "nope".into(),
                source_code: String::new(),
                detail: String::new(),
                event: Significant::BatteryLow,
            },
            MachineEvent {
                machine_id: "m1".into(),
                source_code: String::new(),
                detail: String::new(),
                event: Significant::ProgressiveHit {
                    pool_id: "nope".into(),
                    amount_cents: 1,
                    level: 0,
                },
            },
            MachineEvent {
                machine_id: "m1".into(),
                source_code: String::new(),
                detail: String::new(),
                event: Significant::HandPay {
                    state: HandPayState::Reset,
                    pay_kind: HandPayKind::Jackpot,
                    handpay_id: String::new(),
                    amount_cents: -5,
                },
            },
            MachineEvent {
                machine_id: "m1".into(),
                source_code: String::new(),
                detail: String::new(),
                event: Significant::GameEnded {
                    game_number: 1,
                    wager_cents: 1,
                    win_cents: rules_core::MAX_AMOUNT_CENTS + 1,
                },
            },
        ];
        for e in bad {
            let err = f.apply(Event::MachineEvent(e)).unwrap_err();
            assert!(!err.to_string().is_empty());
            let mut b = before.clone();
            // Only the index moved on in `f`; the book is as it was.
            b.last_index = f.book.last_index;
            assert_eq!(f.book, b);
        }
    }

    type Step = Box<dyn Fn(&mut Floor) -> Vec<String>>;

    fn episode() -> Vec<Step> {
        vec![
            Box::new(|f| f.door(Door::Main, DoorAction::Opened)),
            Box::new(|f| f.read()),
            Box::new(|f| {
                let c = f.captive();
                f.sig(Significant::ProgressiveHit {
                    pool_id: "jp1".into(),
                    amount_cents: c,
                    level: 1,
                })
            }),
            Box::new(|f| {
                f.sig(Significant::HandPay {
                    state: HandPayState::Reset,
                    pay_kind: HandPayKind::Jackpot,
                    handpay_id: String::new(),
                    amount_cents: 999,
                })
            }),
            Box::new(|f| f.play(true)),
            Box::new(|f| f.read()),
            Box::new(|f| {
                f.sig(Significant::ProgressiveReset {
                    pool_id: "jp1".into(),
                })
            }),
        ]
    }

    #[test]
    fn a_snapshot_mid_episode_resumes_to_the_same_findings() {
        let steps = episode();
        let mut whole = Floor::new();
        let expected: Vec<String> = steps.iter().flat_map(|s| s(&mut whole)).collect();
        assert_eq!(
            expected,
            vec![
                SLOT_METERS_MOVED_DOOR_OPEN.to_string(),
                SLOT_HANDPAY_METER_MISMATCH.to_string(),
                SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD.to_string()
            ]
        );
        for cut in 0..=steps.len() {
            let mut f = Floor::new();
            let mut got: Vec<String> = steps[..cut].iter().flat_map(|s| s(&mut f)).collect();
            let snapshot = serde_json::to_string(&f.book).unwrap();
            f.book = serde_json::from_str(&snapshot).unwrap();
            got.extend(steps[cut..].iter().flat_map(|s| s(&mut f)));
            assert_eq!(got, expected, "snapshot after step {cut}");
            assert_eq!(
                serde_json::to_string(&f.book).unwrap(),
                serde_json::to_string(&whole.book).unwrap()
            );
        }
    }

    #[test]
    fn the_report_pages_filters_and_shows_what_stands_open() {
        let mut f = Floor::new();
        assert!(f.book.machine("m1").unwrap().events.is_none());
        let empty = f
            .book
            .events_report_from(&f.book.held(), "m1", &EventQuery::default(), 10)
            .unwrap();
        assert!(empty.events.is_empty() && empty.status.is_none() && empty.next_after.is_none());
        honest_day(&mut f);
        f.door(Door::Belly, DoorAction::Opened);
        let all = f
            .book
            .events_report_from(&f.book.held(), "m1", &EventQuery::default(), 1000)
            .unwrap();
        assert_eq!(all.events.len(), 29);
        assert_eq!(all.counts["game_ended"], 6);
        assert_eq!(all.counts["door"], 4);
        let status = all.status.as_ref().unwrap();
        assert!(status.log.is_empty());
        assert_eq!(
            status.doors_open.keys().copied().collect::<Vec<_>>(),
            [Door::Belly]
        );
        // Pages of 10, in order, without a gap.
        let mut q = EventQuery::default();
        let mut seen = Vec::new();
        loop {
            let page = f
                .book
                .events_report_from(&f.book.held(), "m1", &q, 10)
                .unwrap();
            seen.extend(page.events.iter().map(|e| e.index));
            match page.next_after {
                Some(n) => q.after_index = Some(n),
                None => break,
            }
        }
        assert_eq!(seen, all.events.iter().map(|e| e.index).collect::<Vec<_>>());
        // The last-games recall: game ends only, within a period of indexes.
        let from = all.events[10].index;
        let q = EventQuery {
            period: crate::report::Period::Indexes { from, to: u64::MAX },
            after_index: None,
            kinds: vec!["game_ended".into()],
        };
        let games = f
            .book
            .events_report_from(&f.book.held(), "m1", &q, 100)
            .unwrap();
        assert!(
            games
                .events
                .iter()
                .all(|e| e.index >= from && matches!(e.event.event, Significant::GameEnded { .. }))
        );
        assert_eq!(games.counts.len(), 1);
        assert!(
            f.book
                .events_report_from(&f.book.held(), "nope", &EventQuery::default(), 1)
                .is_err()
        );
        // A book that hands its detail out answers from where it was handed.
        f.book.hand_out_detail();
        assert_eq!(
            f.book
                .events_report_from(&f.book.held(), "m1", &EventQuery::default(), 1)
                .unwrap_err(),
            crate::QueryError::NotHeld
        );
    }

    #[test]
    fn events_are_handed_out_like_the_other_detail() {
        let mut f = Floor::new();
        f.book.hand_out_detail();
        f.book.take_detail();
        f.sig(Significant::BatteryLow);
        f.door(Door::Main, DoorAction::Opened);
        let detail = f.book.take_detail();
        let events: Vec<_> = detail
            .iter()
            .filter_map(|d| match d {
                crate::detail::Detail::Event { machine_id, event } => {
                    Some((machine_id.to_string(), event.event.event.name()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            events,
            vec![
                ("m1".to_string(), "battery_low"),
                ("m1".to_string(), "door")
            ]
        );
        let ev = f.book.machine("m1").unwrap().events.as_ref().unwrap();
        assert!(ev.log.is_empty());
        assert_eq!(ev.logged_out, 2);
    }
}
