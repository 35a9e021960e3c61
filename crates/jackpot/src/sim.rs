//! A seeded slot floor: machines that play games at their approved return, read their meters,
//! report and award their jackpots and superjackpots, fail, and have their captive values
//! transferred, producing exactly the events a casino's reporting agents, operator and the
//! inspectorate would sign. Machines chosen with [`Floor::report_events`] also report their
//! significant events (honest episodes every step; [`Floor::lose_events`] and
//! [`Floor::unmetered_hand_pay`] are the mistakes).
//!
//! The floor keeps a shadow [`Book`] of everything it emits, so what an honest machine reports
//! (the captive value it shows, the amount it awards, the amount a transfer moves) is exactly
//! what the ledger's own accounts will say. A mistake is the same event with a wrong number.
//!
//! Pure and deterministic: the same plan and seed give the same events on every machine.
//!
//! Unlike the book, the simulator never sees network input: it runs plans written by the demo
//! and the tests, with counters (u64 cents) that stay orders of magnitude below overflow, so the
//! crate's no-arithmetic-side-effects discipline is relaxed here.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};

use rules_core::{Cents, Id, SimRng};

use crate::Book;
use crate::event::{
    COIN_IN, COIN_OUT, CaptiveValueReported, Event, EventCtx, GAMES_PLAYED, GamePlayed, JACKPOT,
    JackpotAwarded, JackpotTransfer, MachineFault, MachineRegistered, Meter, MeterReading,
    ModelApproved, PoolConfigured, TOTAL_DROP, TransferAuthorized,
};
use crate::event::{
    ChangeAuthorized, Door, DoorAction, HAND_PAID, HandPayKind, HandPayState, LostReporter,
    MachineEvent, OptionChange, ProgramApproved, Significant,
};

/// A machine of the floor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloorMachine {
    pub machine_id: Id,
    pub casino_id: Id,
    pub model_id: Id,
    pub bet_values_cents: Vec<Cents>,
    /// Meter rollover (0 = never wraps).
    pub rollover: u64,
    /// Meter values at the first reading (a machine is not new when the ledger starts).
    pub initial_coin_in: u64,
    /// Report every game (`GamePlayed`) besides the meters.
    pub report_games: bool,
}

/// What the floor is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FloorPlan {
    pub models: Vec<ModelApproved>,
    pub machines: Vec<FloorMachine>,
    pub pools: Vec<PoolConfigured>,
}

/// Who signs an event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Signer {
    /// The machine's reporting agent.
    Machine(Id),
    /// The casino operator (models, pools, transfers).
    Operator,
    /// The inspectorate (transfer authorisations).
    Regulator,
}

/// One event of the floor, with its signer and time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloorEvent {
    pub signer: Signer,
    pub at_ms: i64,
    pub event: Event,
}

#[derive(Clone, Debug, Default)]
struct Counters {
    coin_in: u64,
    coin_out: u64,
    drop: u64,
    jackpot: u64,
    games: u64,
    hand_paid: u64,
}

/// Multipliers of the simulated pay table and their base weights (out of 10,000 games), whose
/// return is Σ weight × multiplier = 9,400 basis points; a model's table scales the weights to
/// its approved return.
const PAYS: [(u64, u64); 6] = [
    (1, 1500),
    (2, 1000),
    (5, 500),
    (10, 200),
    (50, 20),
    (200, 2),
];
const BASE_RETURN_BP: u64 = 9400;

/// The simulated floor.
pub struct Floor {
    plan: FloorPlan,
    rng: SimRng,
    shadow: Book,
    index: u64,
    now_ms: i64,
    counters: BTreeMap<Id, Counters>,
    /// Cumulative pay-table weights per model: (multiplier, cumulative weight out of 10,000).
    pay_tables: BTreeMap<Id, Vec<(u64, u64)>>,
    /// One in how many games wins a pool (per pool).
    hit_odds: BTreeMap<Id, u64>,
    /// Machines that report significant events ([`Floor::report_events`]).
    event_machines: BTreeSet<Id>,
    /// Steps played ([`Floor::play`]), which choose the honest episodes of significant events.
    steps: u64,
}

impl Floor {
    /// A floor at `start_ms`. Call [`Floor::setup`] first.
    pub fn new(plan: FloorPlan, seed: u64, start_ms: i64) -> Floor {
        let mut pay_tables = BTreeMap::new();
        for m in &plan.models {
            let target = u64::from(m.theoretical_rtp_bp);
            let mut cumulative = 0u64;
            let table: Vec<(u64, u64)> = PAYS
                .iter()
                .map(|&(mult, w)| {
                    cumulative += w * target / BASE_RETURN_BP;
                    (mult, cumulative.min(10_000))
                })
                .collect();
            pay_tables.insert(m.model_id.clone(), table);
        }
        let hit_odds = plan
            .pools
            .iter()
            .map(|p| {
                let odds = if p.member_machine_ids.len() > 1 {
                    40_000
                } else {
                    15_000
                };
                (p.pool_id.clone(), odds)
            })
            .collect();
        Floor {
            plan,
            rng: SimRng::new(seed),
            shadow: Book::new(),
            index: 0,
            now_ms: start_ms,
            counters: BTreeMap::new(),
            pay_tables,
            hit_odds,
            event_machines: BTreeSet::new(),
            steps: 0,
        }
    }

    /// Make `machine_id` report its significant events (call before [`Floor::setup`]): its
    /// program is authenticated at set-up against its model's approved signature (an operator
    /// `ProgramApproved`), its readings carry a `hand_paid` meter, every game is a GameStarted +
    /// GameEnded (instead of GamePlayed), its progressives are hit, hand paid and reset around
    /// their award, and every step of play brings one honest episode in turn: the main door
    /// opened and closed, a printer fault and its clearing, a power cycle with a door opened
    /// while off, the link to the agent down and up, a hand pay of cancelled credits, an
    /// authorised configuration change.
    pub fn report_events(&mut self, machine_id: &str) {
        self.event_machines.insert(machine_id.into());
    }

    fn reports_events(&self, machine_id: &str) -> bool {
        self.event_machines.contains(machine_id)
    }

    /// The approved program signature of a model (a stand-in digest of its id).
    pub fn program_signature(model_id: &str) -> String {
        // FNV-1a, twice, as 32 hex digits: deterministic, and not what any other model gets.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut out = String::new();
        for round in 0..2u8 {
            for b in model_id.bytes().chain([round]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            out.push_str(&format!("{h:016x}"));
        }
        out
    }

    fn significant(&mut self, out: &mut Vec<FloorEvent>, machine_id: &Id, event: Significant) {
        self.push(
            out,
            Signer::Machine(machine_id.clone()),
            Event::MachineEvent(MachineEvent {
                machine_id: machine_id.clone(),
                source_code: String::new(),
                detail: String::new(),
                event,
            }),
        );
    }

    /// One honest episode of significant events on `machine_id`, chosen by `n`.
    fn episode(&mut self, out: &mut Vec<FloorEvent>, machine_id: &Id, n: u64) {
        let door = |door, action| Significant::Door { door, action };
        match n % 6 {
            0 => {
                self.significant(out, machine_id, door(Door::Main, DoorAction::Opened));
                self.now_ms += 20_000;
                self.significant(out, machine_id, door(Door::Main, DoorAction::Closed));
            }
            1 => {
                let fault = |cleared| Significant::DeviceFault {
                    device: "printer".into(),
                    code: "paper_out".into(),
                    cleared,
                    disables_play: true,
                };
                self.significant(out, machine_id, fault(false));
                self.now_ms += 60_000;
                self.significant(out, machine_id, fault(true));
            }
            2 => {
                self.significant(out, machine_id, Significant::Power { on: false });
                self.reading(out, machine_id);
                self.now_ms += 120_000;
                self.significant(
                    out,
                    machine_id,
                    door(Door::Logic, DoorAction::OpenedWhilePoweredOff),
                );
                self.significant(out, machine_id, Significant::Power { on: true });
            }
            3 => {
                self.significant(out, machine_id, Significant::Link { up: false });
                self.now_ms += 30_000;
                self.significant(out, machine_id, Significant::Link { up: true });
            }
            4 => {
                let amount = 10_000 + 500 * (self.rng.below(40) as Cents);
                self.hand_pay(out, machine_id, HandPayKind::CancelledCredits, amount, true);
                self.reading(out, machine_id);
            }
            _ => {
                // Unique: the floor's event index.
                let id: Id = format!("CH-{machine_id}-{}", self.index + 1).into();
                self.push(
                    out,
                    Signer::Operator,
                    Event::ChangeAuthorized(ChangeAuthorized {
                        authorization_id: id.clone(),
                        machine_id: machine_id.clone(),
                        detail: "sound volume".into(),
                    }),
                );
                self.significant(
                    out,
                    machine_id,
                    Significant::ConfigurationChanged {
                        changes: vec![OptionChange {
                            option: "sound_volume".into(),
                            old_value: format!("{}", n % 10),
                            new_value: format!("{}", (n + 1) % 10),
                        }],
                        authorization_id: Some(id),
                    },
                );
            }
        }
    }

    /// A hand pay: pending, then paid and reset; the hand-paid meter records it when
    /// `metered` (a mistake when not).
    fn hand_pay(
        &mut self,
        out: &mut Vec<FloorEvent>,
        machine_id: &Id,
        pay_kind: HandPayKind,
        amount: Cents,
        metered: bool,
    ) {
        let handpay_id = format!("HP-{}", self.index + 1);
        let hp = |state| Significant::HandPay {
            state,
            pay_kind,
            handpay_id: handpay_id.clone(),
            amount_cents: amount,
        };
        self.significant(out, machine_id, hp(HandPayState::Pending));
        self.now_ms += 90_000;
        self.significant(out, machine_id, hp(HandPayState::Reset));
        if metered && let Some(c) = self.counters.get_mut(machine_id) {
            c.hand_paid += amount.max(0) as u64;
        }
    }

    /// A mistake: `machine_id`'s agent declares `count` events lost (an event buffer overflow).
    pub fn lose_events(&mut self, machine_id: &Id, count: u64) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        let to_ms = self.now_ms;
        self.significant(
            &mut out,
            machine_id,
            Significant::EventsLost {
                reporter: LostReporter::Agent,
                count,
                from_ms: to_ms - 600_000,
                to_ms,
            },
        );
        out
    }

    /// A mistake: an attendant pays `amount_cents` of cancelled credits by hand on `machine_id`,
    /// and its hand-paid meter does not record it; the machine then reads its meters.
    pub fn unmetered_hand_pay(&mut self, machine_id: &Id, amount_cents: Cents) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        self.hand_pay(
            &mut out,
            machine_id,
            HandPayKind::CancelledCredits,
            amount_cents,
            false,
        );
        self.reading(&mut out, machine_id);
        out
    }

    /// Make `pool_id` be won once in `odds` games on average (per member game).
    pub fn set_hit_odds(&mut self, pool_id: &str, odds: u64) {
        self.hit_odds.insert(pool_id.into(), odds.max(1));
    }

    /// The floor's own view of the accounts (what honest machines report from).
    pub fn book(&self) -> &Book {
        &self.shadow
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// The exact captive value of `pool_id`, floored to the cent.
    pub fn captive_cents(&self, pool_id: &str) -> Option<Cents> {
        self.shadow
            .captive_values()
            .into_iter()
            .find(|c| &*c.pool_id == pool_id)
            .map(|c| c.captive_cents)
    }

    fn push(&mut self, out: &mut Vec<FloorEvent>, signer: Signer, event: Event) {
        self.index += 1;
        self.now_ms += 1;
        // The shadow book sees exactly what the ledger will; a refused event changes nothing
        // there either.
        let _ = self.shadow.apply(
            &event,
            EventCtx {
                ledger_index: self.index,
                at_ms: self.now_ms,
            },
        );
        out.push(FloorEvent {
            signer,
            at_ms: self.now_ms,
            event,
        });
    }

    /// The machines' registrations (the shadow book needs them; the ledger learns them from the
    /// operator's device registrations), the approved models, the pools, and a first meter
    /// reading of every machine.
    pub fn setup(&mut self) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        for m in self.plan.machines.clone() {
            let reg = Event::MachineRegistered(MachineRegistered {
                machine_id: m.machine_id.clone(),
                casino_id: m.casino_id.clone(),
                model_id: m.model_id.clone(),
                bet_values_cents: m.bet_values_cents.clone(),
            });
            // Not emitted: the registration is the operator's DeviceRegistered.
            self.index += 1;
            let _ = self.shadow.apply(
                &reg,
                EventCtx {
                    ledger_index: self.index,
                    at_ms: self.now_ms,
                },
            );
            self.counters.insert(
                m.machine_id.clone(),
                Counters {
                    coin_in: m.initial_coin_in,
                    coin_out: m.initial_coin_in / 10 * 9,
                    drop: m.initial_coin_in / 2,
                    jackpot: 0,
                    games: m.initial_coin_in / 100,
                    hand_paid: 0,
                },
            );
        }
        for model in self.plan.models.clone() {
            let id = model.model_id.clone();
            self.push(&mut out, Signer::Operator, Event::ModelApproved(model));
            let reporting = self
                .plan
                .machines
                .iter()
                .any(|m| m.model_id == id && self.reports_events(&m.machine_id));
            if reporting {
                self.push(
                    &mut out,
                    Signer::Operator,
                    Event::ProgramApproved(ProgramApproved {
                        model_id: id.clone(),
                        component: "game".into(),
                        algorithm: "sha1".into(),
                        signature: Floor::program_signature(&id),
                        approval_ref: "IGJ software certificate".into(),
                    }),
                );
            }
        }
        let reporting: Vec<(Id, Id)> = self
            .plan
            .machines
            .iter()
            .filter(|m| self.reports_events(&m.machine_id))
            .map(|m| (m.machine_id.clone(), m.model_id.clone()))
            .collect();
        for (m, model) in &reporting {
            self.significant(
                &mut out,
                m,
                Significant::SoftwareAuthenticated {
                    component: "game".into(),
                    algorithm: "sha1".into(),
                    signature: Floor::program_signature(model),
                    passed: true,
                },
            );
        }
        let machines: Vec<Id> = self
            .plan
            .machines
            .iter()
            .map(|m| m.machine_id.clone())
            .collect();
        for id in &machines {
            self.reading(&mut out, id);
        }
        for pool in self.plan.pools.clone() {
            self.push(&mut out, Signer::Operator, Event::PoolConfigured(pool));
        }
        out
    }

    fn machine(&self, id: &str) -> Option<&FloorMachine> {
        self.plan.machines.iter().find(|m| &*m.machine_id == id)
    }

    /// A meter reading of `machine_id` as it stands.
    fn reading(&mut self, out: &mut Vec<FloorEvent>, machine_id: &Id) {
        let Some(m) = self.machine(machine_id) else {
            return;
        };
        let rollover = m.rollover;
        let Some(c) = self.counters.get(machine_id) else {
            return;
        };
        let wrap = |v: u64| if rollover == 0 { v } else { v % rollover };
        let mut meters = vec![
            Meter::new(COIN_IN, wrap(c.coin_in), rollover),
            Meter::new(COIN_OUT, wrap(c.coin_out), rollover),
            Meter::new(TOTAL_DROP, wrap(c.drop), rollover),
            Meter::new(JACKPOT, wrap(c.jackpot), rollover),
            Meter::new(GAMES_PLAYED, c.games, 0),
        ];
        if self.reports_events(machine_id) {
            meters.push(Meter::new(HAND_PAID, wrap(c.hand_paid), rollover));
        }
        self.push(
            out,
            Signer::Machine(machine_id.clone()),
            Event::MeterReading(MeterReading {
                machine_id: machine_id.clone(),
                meters,
            }),
        );
    }

    /// Pools `machine_id` feeds.
    /// The pools `machine_id` feeds and can award (not those its part in is under force
    /// majeure: a superjackpot whose link is down is not won there).
    fn pools_of(&self, machine_id: &str) -> Vec<PoolConfigured> {
        let down = self
            .shadow
            .machine(machine_id)
            .map(|m| m.pool_force_majeure.clone())
            .unwrap_or_default();
        self.plan
            .pools
            .iter()
            .filter(|p| {
                p.member_machine_ids.iter().any(|m| &**m == machine_id)
                    && !down.contains_key(&p.pool_id)
            })
            .cloned()
            .collect()
    }

    /// Every in-service machine plays `games` games; then every machine reads its meters and
    /// every pool's controller reports its captive value. A pool may be won along the way
    /// (members read their meters first, then the award pays the whole captive value).
    pub fn play(&mut self, games: u32) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        let machines: Vec<FloorMachine> = self
            .plan
            .machines
            .iter()
            .filter(|m| {
                self.shadow
                    .machine(&m.machine_id)
                    .is_none_or(|s| s.out_of_service.is_none() && s.force_majeure.is_none())
            })
            .cloned()
            .collect();
        self.steps += 1;
        for (i, m) in machines.iter().enumerate() {
            if self.reports_events(&m.machine_id) {
                let n = self.steps + i as u64;
                self.episode(&mut out, &m.machine_id, n);
            }
        }
        for m in &machines {
            let pools = self.pools_of(&m.machine_id);
            let events = self.reports_events(&m.machine_id);
            for _ in 0..games {
                let wager = *self.rng.pick(&m.bet_values_cents).unwrap_or(&100) as u64;
                let roll = self.rng.below(10_000);
                let mult = self
                    .pay_tables
                    .get(&m.model_id)
                    .and_then(|t| t.iter().find(|(_, cum)| roll < *cum))
                    .map_or(0, |(mult, _)| *mult);
                let win = wager * mult;
                let game_number = {
                    let c = self.counters.entry(m.machine_id.clone()).or_default();
                    c.coin_in += wager;
                    c.coin_out += win;
                    c.drop += wager - wager / 4;
                    c.games += 1;
                    c.games
                };
                self.now_ms += 3_000;
                if events {
                    let id = &m.machine_id;
                    self.significant(
                        &mut out,
                        id,
                        Significant::GameStarted {
                            game_number,
                            wager_cents: wager as Cents,
                        },
                    );
                    self.significant(
                        &mut out,
                        id,
                        Significant::GameEnded {
                            game_number,
                            wager_cents: wager as Cents,
                            win_cents: win as Cents,
                        },
                    );
                } else if m.report_games {
                    self.push(
                        &mut out,
                        Signer::Machine(m.machine_id.clone()),
                        Event::GamePlayed(GamePlayed {
                            machine_id: m.machine_id.clone(),
                            game_number,
                            wager_cents: wager as Cents,
                            win_cents: win as Cents,
                        }),
                    );
                }
                for p in &pools {
                    let odds = self.hit_odds.get(&p.pool_id).copied().unwrap_or(20_000);
                    if self.rng.below(odds) == 0 {
                        let award = self.award_events(&p.pool_id, &m.machine_id, game_number, 0);
                        out.extend(award);
                    }
                }
            }
        }
        for m in &machines {
            self.reading(&mut out, &m.machine_id);
        }
        let pools: Vec<Id> = self.plan.pools.iter().map(|p| p.pool_id.clone()).collect();
        for p in pools {
            out.extend(self.report_captive(&p, 0));
        }
        out
    }

    /// The member machines of `pool_id` read their meters, then the controller (the first member
    /// in service) reports the captive value, off by `error_cents` (0 = honest; never below 0).
    pub fn report_captive(&mut self, pool_id: &str, error_cents: Cents) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        let Some(pool) = self
            .plan
            .pools
            .iter()
            .find(|p| &*p.pool_id == pool_id)
            .cloned()
        else {
            return out;
        };
        let Some(reporter) = pool
            .member_machine_ids
            .iter()
            .find(|m| {
                self.shadow
                    .machine(m)
                    .is_none_or(|s| s.out_of_service.is_none() && s.force_majeure.is_none())
            })
            .cloned()
        else {
            return out;
        };
        for m in &pool.member_machine_ids {
            self.reading(&mut out, m);
        }
        // A reported value is never negative (ingest refuses it as malformed).
        let value = (self.captive_cents(pool_id).unwrap_or(0) + error_cents).max(0);
        self.push(
            &mut out,
            Signer::Machine(reporter),
            Event::CaptiveValueReported(CaptiveValueReported {
                pool_id: pool.pool_id.clone(),
                value_cents: value,
            }),
        );
        out
    }

    /// `pool_id` is won on `machine_id`: members read their meters, the machine awards the whole
    /// captive value, short by `short_cents` (0 = honest; never below one cent).
    pub fn award_events(
        &mut self,
        pool_id: &str,
        machine_id: &Id,
        game_number: u64,
        short_cents: Cents,
    ) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        let Some(pool) = self
            .plan
            .pools
            .iter()
            .find(|p| &*p.pool_id == pool_id)
            .cloned()
        else {
            return out;
        };
        for m in &pool.member_machine_ids {
            self.reading(&mut out, m);
        }
        // An award is a positive amount (ingest refuses any other as malformed): a short award
        // of a pool holding less than the shortfall pays one cent.
        let captive = self.captive_cents(pool_id).unwrap_or(0);
        if captive < 1 {
            return out; // nothing to award
        }
        let amount = if short_cents > 0 {
            (captive - short_cents).max(1)
        } else {
            captive
        };
        let ticket = self.rng.below(1_000_000);
        let events = self.reports_events(machine_id);
        let handpay_id = format!("HP-{}", self.index + 1);
        let hp = |state| Significant::HandPay {
            state,
            pay_kind: HandPayKind::Progressive,
            handpay_id: handpay_id.clone(),
            amount_cents: amount,
        };
        if events {
            self.significant(
                &mut out,
                machine_id,
                Significant::ProgressiveHit {
                    pool_id: pool.pool_id.clone(),
                    amount_cents: captive,
                    level: 1,
                },
            );
            self.significant(&mut out, machine_id, hp(HandPayState::Pending));
        }
        self.push(
            &mut out,
            Signer::Machine(machine_id.clone()),
            Event::JackpotAwarded(JackpotAwarded {
                pool_id: pool.pool_id.clone(),
                machine_id: machine_id.clone(),
                amount_cents: amount,
                winner: format!("ticket-{ticket:06}"),
                game_number,
            }),
        );
        if let Some(c) = self.counters.get_mut(machine_id) {
            c.jackpot += amount.max(0) as u64;
            if events {
                c.hand_paid += amount.max(0) as u64;
            }
        }
        if events {
            self.significant(&mut out, machine_id, hp(HandPayState::Reset));
            self.significant(
                &mut out,
                machine_id,
                Significant::ProgressiveReset {
                    pool_id: pool.pool_id.clone(),
                },
            );
        }
        // The hand-paid jackpot meter moved: read it so the return counts the prize.
        self.reading(&mut out, machine_id);
        out
    }

    /// `machine_id` fails (`force_majeure`: destroyed, the captive value can no longer be
    /// awarded there; otherwise an ordinary out-of-service fault). It reads its meters first.
    pub fn fail(&mut self, machine_id: &Id, code: &str, force_majeure: bool) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        self.reading(&mut out, machine_id);
        self.push(
            &mut out,
            Signer::Machine(machine_id.clone()),
            Event::MachineFault(MachineFault {
                machine_id: machine_id.clone(),
                code: code.to_string(),
                out_of_service: true,
                force_majeure,
                detail: if force_majeure {
                    "machine destroyed; captive values cannot be awarded".to_string()
                } else {
                    String::new()
                },
                pool_ids: Vec::new(),
            }),
        );
        out
    }

    /// The inspectorate authorises `to_pool_id` as the target of `from_pool_id`'s captive value.
    pub fn authorize(
        &mut self,
        authorization_id: &str,
        from_pool_id: &str,
        to_pool_id: &str,
    ) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        self.push(
            &mut out,
            Signer::Regulator,
            Event::TransferAuthorized(TransferAuthorized {
                authorization_id: authorization_id.into(),
                from_pool_id: from_pool_id.into(),
                to_pool_id: to_pool_id.into(),
                reference: format!("IGJ despacho {authorization_id}"),
            }),
        );
        out
    }

    /// The operator transfers the whole captive value of `from_pool_id` to `to_pool_id` (nothing
    /// when the pool holds nothing).
    pub fn transfer(
        &mut self,
        transfer_id: &str,
        from_pool_id: &str,
        to_pool_id: &str,
        authorization_id: Option<&str>,
    ) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        let amount = self.captive_cents(from_pool_id).unwrap_or(0);
        if amount < 1 {
            return out; // nothing to transfer (a transfer is a positive amount)
        }
        self.push(
            &mut out,
            Signer::Operator,
            Event::JackpotTransfer(JackpotTransfer {
                transfer_id: transfer_id.into(),
                from_pool_id: from_pool_id.into(),
                to_pool_id: to_pool_id.into(),
                amount_cents: amount,
                reason: "force majeure (P217/2007 T.III r.6)".to_string(),
                authorization_id: authorization_id.map(Id::from),
            }),
        );
        out
    }

    /// `pool_id`'s link, controller or server fails for good (force majeure of the pool, r.6):
    /// every member machine reports it for that pool only, and stays in service for the rest.
    pub fn pool_link_lost(&mut self, pool_id: &str, detail: &str) -> Vec<FloorEvent> {
        let members: Vec<Id> = self
            .plan
            .pools
            .iter()
            .find(|p| &*p.pool_id == pool_id)
            .map(|p| p.member_machine_ids.clone())
            .unwrap_or_default();
        let mut out = Vec::new();
        for m in members {
            out.extend(self.pool_link(&m, pool_id, false, detail));
        }
        out
    }

    /// `machine_id`'s link to `pool_id` is lost (`up`: false; force majeure of its part in that
    /// pool only: the pool cannot be won there, the machine plays on) or restored (`up`: true,
    /// a `MachineRestored` of that pool only). The machine reads its meters first.
    pub fn pool_link(
        &mut self,
        machine_id: &Id,
        pool_id: &str,
        up: bool,
        detail: &str,
    ) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        self.reading(&mut out, machine_id);
        let event = if up {
            Event::MachineRestored(crate::event::MachineRestored {
                machine_id: machine_id.clone(),
                detail: detail.to_string(),
                pool_ids: vec![pool_id.into()],
            })
        } else {
            Event::MachineFault(MachineFault {
                machine_id: machine_id.clone(),
                code: "link_down".to_string(),
                out_of_service: false,
                force_majeure: true,
                detail: detail.to_string(),
                pool_ids: vec![pool_id.into()],
            })
        };
        self.push(&mut out, Signer::Machine(machine_id.clone()), event);
        out
    }

    /// The machine is verified and put back into service (ends every fault mark, r.9).
    pub fn restore(&mut self, machine_id: &Id, detail: &str) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        self.push(
            &mut out,
            Signer::Machine(machine_id.clone()),
            Event::MachineRestored(crate::event::MachineRestored {
                machine_id: machine_id.clone(),
                detail: detail.to_string(),
                pool_ids: Vec::new(),
            }),
        );
        self.reading(&mut out, machine_id);
        out
    }

    /// A meter reading of `machine_id` whose `coin_in` went back by `back_cents` without a RAM
    /// clear (a mistake: the meter is not reliable). The machine's counters are not changed, so
    /// its next honest reading goes forward again.
    pub fn backwards_reading(&mut self, machine_id: &Id, back_cents: u64) -> Vec<FloorEvent> {
        let mut out = Vec::new();
        if let Some(c) = self.counters.get_mut(machine_id) {
            c.coin_in = c.coin_in.saturating_sub(back_cents);
        }
        self.reading(&mut out, machine_id);
        if let Some(c) = self.counters.get_mut(machine_id) {
            c.coin_in += back_cents;
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::event::PoolKind;

    pub(crate) fn plan() -> FloorPlan {
        let machine =
            |id: &str, casino: &str, model: &str, rollover: u64, start: u64| FloorMachine {
                machine_id: id.into(),
                casino_id: casino.into(),
                model_id: model.into(),
                bet_values_cents: vec![50, 100, 200],
                rollover,
                initial_coin_in: start,
                report_games: id.ends_with('1'),
            };
        FloorPlan {
            models: vec![
                ModelApproved {
                    model_id: "K".into(),
                    theoretical_rtp_bp: 9200,
                    bet_values_cents: vec![50, 100, 200],
                    approval_ref: "IGJ-K".into(),
                },
                ModelApproved {
                    model_id: "L".into(),
                    theoretical_rtp_bp: 8800,
                    bet_values_cents: vec![50, 100, 200],
                    approval_ref: "IGJ-L".into(),
                },
            ],
            machines: vec![
                machine("A1", "C1", "K", 100_000_000, 99_990_000),
                machine("A2", "C1", "K", 0, 5_000_000),
                machine("B1", "C2", "K", 0, 7_000_000),
                machine("B2", "C2", "L", 0, 1_000_000),
            ],
            pools: vec![
                PoolConfigured {
                    pool_id: "JP-A2".into(),
                    kind: PoolKind::Jackpot,
                    casino_ids: vec!["C1".into()],
                    member_machine_ids: vec!["A2".into()],
                    member_table_ids: vec![],
                    contribution_bp: 120,
                    start_value_cents: 40_000,
                    reset_value_cents: 40_000,
                },
                PoolConfigured {
                    pool_id: "JP-B1".into(),
                    kind: PoolKind::Jackpot,
                    casino_ids: vec!["C2".into()],
                    member_machine_ids: vec!["B1".into()],
                    member_table_ids: vec![],
                    contribution_bp: 120,
                    start_value_cents: 40_000,
                    reset_value_cents: 40_000,
                },
                PoolConfigured {
                    pool_id: "SJP".into(),
                    kind: PoolKind::Superjackpot,
                    casino_ids: vec!["C1".into(), "C2".into()],
                    member_machine_ids: vec!["A1".into(), "B1".into(), "B2".into()],
                    member_table_ids: vec![],
                    contribution_bp: 80,
                    start_value_cents: 300_000,
                    reset_value_cents: 300_000,
                },
            ],
        }
    }

    /// Apply a floor's events to a fresh book the way the ledger would, collecting findings.
    fn replay(events: &[FloorEvent], plan: &FloorPlan) -> (Book, Vec<String>) {
        let mut book = Book::new();
        let mut index = 0;
        for m in &plan.machines {
            index += 1;
            book.apply(
                &Event::MachineRegistered(MachineRegistered {
                    machine_id: m.machine_id.clone(),
                    casino_id: m.casino_id.clone(),
                    model_id: m.model_id.clone(),
                    bet_values_cents: m.bet_values_cents.clone(),
                }),
                EventCtx {
                    ledger_index: index,
                    at_ms: 0,
                },
            )
            .unwrap();
        }
        let mut codes = Vec::new();
        for e in events {
            index += 1;
            let found = book
                .apply(
                    &e.event,
                    EventCtx {
                        ledger_index: index,
                        at_ms: e.at_ms,
                    },
                )
                .unwrap();
            codes.extend(found.into_iter().map(|f| f.code.to_string()));
        }
        (book, codes)
    }

    #[test]
    fn an_honest_floor_gives_no_finding_and_conserves_the_money_in_trust() {
        let plan = plan();
        let mut floor = Floor::new(plan.clone(), 7, 1_767_225_600_000);
        floor.set_hit_odds("JP-A2", 2_000);
        floor.set_hit_odds("SJP", 5_000);
        let mut events = floor.setup();
        for _ in 0..40 {
            events.extend(floor.play(250));
        }
        let (book, codes) = replay(&events, &plan);
        assert!(codes.is_empty(), "{codes:?}");
        assert!(book.conservation().holds, "{:?}", book.conservation());
        // The 8-digit meter of A1 wrapped during the session.
        assert!(
            events
                .iter()
                .any(|e| matches!(&e.event, Event::MeterReading(r)
            if &*r.machine_id == "A1" && r.meters[0].value < 1_000_000))
        );
        // Jackpots were won.
        assert!(
            events
                .iter()
                .any(|e| matches!(e.event, Event::JackpotAwarded(_)))
        );
        // The floor's shadow accounts agree with the replay.
        assert_eq!(book.captive_values(), floor.book().captive_values());
    }

    #[test]
    fn machines_that_report_significant_events_are_honest_and_their_mistakes_are_found() {
        let plan = plan();
        let mut floor = Floor::new(plan.clone(), 11, 1_767_225_600_000);
        floor.set_hit_odds("JP-A2", 1_500);
        floor.set_hit_odds("SJP", 3_000);
        floor.report_events("A2");
        floor.report_events("B1");
        let mut events = floor.setup();
        for _ in 0..13 {
            events.extend(floor.play(150));
        }
        let (book, codes) = replay(&events, &plan);
        assert!(codes.is_empty(), "{codes:?}");
        assert!(book.conservation().holds);
        // Every episode, a progressive hit and a hand pay happened.
        let kinds: BTreeSet<&str> = events
            .iter()
            .filter_map(|e| match &e.event {
                Event::MachineEvent(m) => Some(m.event.name()),
                _ => None,
            })
            .collect();
        for k in [
            "door",
            "power",
            "device_fault",
            "link",
            "hand_pay",
            "configuration_changed",
            "software_authenticated",
            "progressive_hit",
            "progressive_reset",
            "game_started",
            "game_ended",
        ] {
            assert!(kinds.contains(k), "no {k} event: {kinds:?}");
        }
        // A machine that does not report events sends none.
        assert!(
            !events
                .iter()
                .any(|e| matches!(&e.event, Event::MachineEvent(m) if &*m.machine_id == "A1"))
        );
        // The planted mistakes: exactly their findings.
        let mut more = floor.lose_events(&"B1".into(), 12);
        more.extend(floor.unmetered_hand_pay(&"A2".into(), 25_000));
        more.extend(floor.play(20));
        let mut all = events.clone();
        all.extend(more);
        let (_, codes) = replay(&all, &plan);
        assert_eq!(
            codes,
            ["SLOT_EVENTS_LOST", "SLOT_HANDPAY_METER_MISMATCH"],
            "{codes:?}"
        );
    }

    #[test]
    fn the_return_follows_the_approved_pay_table() {
        let plan = plan();
        let mut floor = Floor::new(plan, 11, 0);
        floor.setup();
        for _ in 0..40 {
            floor.play(500);
        }
        let c = &floor.counters[&Id::from("A2")];
        let played = c.coin_in - 5_000_000;
        let won = c.coin_out + c.jackpot - 4_500_000;
        let rtp_bp = won * 10_000 / played;
        assert!((8_600..9_800).contains(&rtp_bp), "{rtp_bp}");
    }

    #[test]
    fn force_majeure_and_transfers() {
        let plan = plan();
        // To B1's jackpot, same model and bets: valid, the whole value moves.
        let mut floor = Floor::new(plan.clone(), 3, 0);
        let mut events = floor.setup();
        events.extend(floor.play(300));
        events.extend(floor.fail(&"A2".into(), "destroyed", true));
        let moved = floor.captive_cents("JP-A2").unwrap();
        let target_before = floor.captive_cents("JP-B1").unwrap();
        assert!(moved >= 40_000);
        events.extend(floor.transfer("T-ok", "JP-A2", "JP-B1", None));
        let (book, codes) = replay(&events, &plan);
        assert!(codes.is_empty(), "{codes:?}");
        assert!(book.conservation().holds);
        assert_eq!(floor.captive_cents("JP-A2"), Some(0));
        let after = floor.captive_cents("JP-B1").unwrap();
        assert!(
            (after - (target_before + moved)).abs() <= 1,
            "{after} {target_before} {moved}"
        );

        // To a group of mixed models while machines of A2's model and bets exist: ineligible
        // (r.6: the inspectorate's route is only "na sua falta"), flagged, and booked as carried
        // out (r.5): the superjackpot now holds the value, and its declarations agree.
        let mut floor = Floor::new(plan.clone(), 3, 0);
        let mut events = floor.setup();
        events.extend(floor.play(300));
        events.extend(floor.fail(&"A2".into(), "destroyed", true));
        let moved = floor.captive_cents("JP-A2").unwrap();
        let target_before = floor.captive_cents("SJP").unwrap();
        events.extend(floor.transfer("T-bad", "JP-A2", "SJP", None));
        assert_eq!(floor.captive_cents("JP-A2"), Some(0));
        let after = floor.captive_cents("SJP").unwrap();
        assert!((after - (target_before + moved)).abs() <= 1);
        events.extend(floor.play(100));
        events.extend(floor.report_captive("SJP", 0));
        let (book, codes) = replay(&events, &plan);
        assert_eq!(codes, ["SLOT_TRANSFER_TARGET_INVALID"]);
        assert!(book.conservation().holds);

        // The superjackpot's link is lost (force majeure of the pool, not of its machines): its
        // members play on, it is won nowhere, and its value goes to a pool of the same model
        // and bets.
        let mut floor = Floor::new(plan.clone(), 5, 0);
        floor.set_hit_odds("SJP", 1);
        let mut events = floor.setup();
        events.extend(floor.play(50));
        events.extend(floor.pool_link_lost("SJP", "superjackpot controller destroyed"));
        let before = floor.book().machine("A1").unwrap().lifetime_coin_in_cents;
        let awards = floor.book().pool("SJP").unwrap().totals.awarded_e4;
        events.extend(floor.play(50));
        assert!(floor.book().machine("A1").unwrap().lifetime_coin_in_cents > before);
        assert_eq!(floor.book().pool("SJP").unwrap().totals.awarded_e4, awards);
        events.extend(floor.transfer("T-link", "SJP", "JP-A2", None));
        assert_eq!(floor.captive_cents("SJP"), Some(0));
        let (book, codes) = replay(&events, &plan);
        assert!(codes.is_empty(), "{codes:?}");
        assert_eq!(book.transfers().len(), 1);
    }

    #[test]
    fn mistakes_are_found() {
        let plan = plan();
        let mut floor = Floor::new(plan.clone(), 5, 0);
        let mut events = floor.setup();
        events.extend(floor.play(100));
        events.extend(floor.report_captive("JP-A2", 500));
        events.extend(floor.backwards_reading(&"B1".into(), 10_000));
        let (_, codes) = replay(&events, &plan);
        assert!(
            codes.contains(&"SLOT_JACKPOT_CAPTIVE_MISMATCH".to_string()),
            "{codes:?}"
        );
        assert!(
            codes.contains(&"SLOT_METER_DECREASED".to_string()),
            "{codes:?}"
        );
    }

    #[test]
    fn deterministic() {
        let run = || {
            let mut f = Floor::new(plan(), 42, 0);
            let mut e = f.setup();
            e.extend(f.play(200));
            e
        };
        assert_eq!(run(), run());
    }
}
