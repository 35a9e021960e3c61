//! The book's input events: one per signed proto message of the slot-machine, model/pool and
//! inspectorate families (`proto/casino_ledger/v1/events.proto`), plus one for the table-jackpot
//! movement a table rule engine computed for a round.
//!
//! They mirror the proto messages field for field (the integration converts; this crate never
//! sees protobuf). Differences, all on purpose:
//! * ids are [`Id`] (`Arc<str>`), money is [`Cents`] (`i64`): a negative amount is refused with
//!   an [`crate::ApplyError`] naming the field;
//! * `JackpotTransfer::authorization_id` is an `Option` (proto's empty string = `None`);
//! * `DeviceRegistered` becomes [`MachineRegistered`] (machine devices only; table devices carry
//!   nothing the book needs);
//! * a table round's jackpot movement, which has no proto message of its own (it is computed by
//!   the rule engine from the round's events), is [`TableJackpotRound`].
//!
//! See the crate documentation for the full proto → event mapping table.

use rules_core::{Cents, GameId, Id, JackpotAccount, JackpotWin};
use serde::{Deserialize, Serialize};

/// Mandatory meter "apostas" (bets, wagered; SAS/G2S `coin_in`), money in cents (r.9).
pub const COIN_IN: &str = "coin_in";
/// Mandatory meter "prémios" (prizes, won; SAS/G2S `coin_out`), money in cents (r.9).
pub const COIN_OUT: &str = "coin_out";
/// Mandatory meter "arrecadação" (drop, takings; SAS/G2S `total_drop`), money in cents (r.9).
pub const TOTAL_DROP: &str = "total_drop";
/// Optional meter: jackpots (hand-)paid, money in cents. Counted as prizes in the return.
pub const JACKPOT: &str = "jackpot";
/// Optional meter: games played, a count.
pub const GAMES_PLAYED: &str = "games_played";
/// Optional meter: money paid by hand by an attendant (cancelled credits and jackpots; SAS and
/// G2S keep hand-paid meters), in cents. Compared with the hand pays reset between two readings
/// (`SLOT_HANDPAY_METER_MISMATCH`); not counted in the return (those prizes are already in
/// `coin_out` or `jackpot`).
pub const HAND_PAID: &str = "hand_paid";
/// The three meters every machine must have (P217/2007 T.III r.9).
pub const MANDATORY_METERS: [&str; 3] = [COIN_IN, COIN_OUT, TOTAL_DROP];

/// Where an event sits in the ledger: its index in the chain (strictly increasing from one
/// applied event to the next) and its time (ms since the epoch, UTC; the daemon's choice of
/// source or receive time, used only for time-range queries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventCtx {
    pub ledger_index: u64,
    pub at_ms: i64,
}

/// One event the book applies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    MachineRegistered(MachineRegistered),
    ModelApproved(ModelApproved),
    PoolConfigured(PoolConfigured),
    MeterReading(MeterReading),
    GamePlayed(GamePlayed),
    JackpotContribution(JackpotContribution),
    CaptiveValueReported(CaptiveValueReported),
    JackpotAwarded(JackpotAwarded),
    MachineFault(MachineFault),
    MachineRestored(MachineRestored),
    RamClear(RamClear),
    JackpotTransfer(JackpotTransfer),
    TransferAuthorized(TransferAuthorized),
    TableJackpotRound(TableJackpotRound),
    /// A machine's significant event (proto `MachineEvent`).
    MachineEvent(MachineEvent),
    /// The operator authorises one configuration change of a machine.
    ChangeAuthorized(ChangeAuthorized),
    /// An approved program signature of a model.
    ProgramApproved(ProgramApproved),
}

/// A machine and what the force-majeure transfer rule compares: its casino, approved model and
/// bet values (proto `DeviceRegistered` of kind MACHINE). Registering an id again updates it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineRegistered {
    pub machine_id: Id,
    pub casino_id: Id,
    pub model_id: Id,
    /// Bet values offered, in cents (order and repetitions irrelevant).
    pub bet_values_cents: Vec<Cents>,
}

/// An approved machine model (proto `MachineModelApproved`; r.7, r.8). Approving an id again is
/// an approved change of its characteristics.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelApproved {
    pub model_id: Id,
    /// Theoretical return of the approved pay table, in basis points (8000 = 80%, r.2), not
    /// counting jackpot contributions.
    pub theoretical_rtp_bp: u32,
    pub bet_values_cents: Vec<Cents>,
    #[serde(default)]
    pub approval_ref: String,
}

/// What a pool is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolKind {
    /// One machine's jackpot (r.3).
    Jackpot,
    /// A group of machines of one or several casinos (r.4).
    Superjackpot,
    /// A table jackpot ("prémio acumulado": blackjack, póquer sem descarte), fed by the table
    /// rule engines' [`JackpotAccount`].
    TableJackpot,
}

impl PoolKind {
    /// Jackpots and superjackpots: the pools of T.III (machines).
    pub fn is_machine_pool(self) -> bool {
        matches!(self, PoolKind::Jackpot | PoolKind::Superjackpot)
    }
}

/// A pool's configuration (proto `PoolConfigured`). The first one creates the pool at its start
/// value; later ones change members, rate and reset value (the captive value carries over).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolConfigured {
    pub pool_id: Id,
    pub kind: PoolKind,
    /// Casinos the pool spans. May be empty for machine pools (then taken from the members);
    /// required for table jackpots.
    #[serde(default)]
    pub casino_ids: Vec<Id>,
    /// Jackpot: exactly one; superjackpot: one or more; table jackpot: none.
    #[serde(default)]
    pub member_machine_ids: Vec<Id>,
    /// Table jackpot: one or more; machine pools: none.
    #[serde(default)]
    pub member_table_ids: Vec<Id>,
    /// Contribution, basis points of wagers (120 = 1.2%); for a table jackpot, the increment
    /// share of each jackpot chip (informational: the engine computes contributions).
    pub contribution_bp: u32,
    /// Captive value when the pool is created (cents).
    pub start_value_cents: Cents,
    /// Captive value after each award (cents). The rules provide no seed (M6): 0 follows them.
    pub reset_value_cents: Cents,
}

/// One meter of a reading: a cumulative counter that wraps at `rollover` (0 = never wraps).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meter {
    /// [`COIN_IN`], [`COIN_OUT`], [`TOTAL_DROP`], [`JACKPOT`], [`GAMES_PLAYED`]; other names are
    /// kept and checked for monotonicity but not otherwise used.
    pub name: String,
    pub value: u64,
    #[serde(default)]
    pub rollover: u64,
}

impl Meter {
    pub fn new(name: &str, value: u64, rollover: u64) -> Meter {
        Meter {
            name: name.to_string(),
            value,
            rollover,
        }
    }
}

/// A reading of a machine's meters (proto `MeterReading`; r.9).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeterReading {
    pub machine_id: Id,
    pub meters: Vec<Meter>,
}

/// One game (proto `GamePlayed`): compared, in sum, with the meter increase at the next reading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GamePlayed {
    pub machine_id: Id,
    #[serde(default)]
    pub game_number: u64,
    pub wager_cents: Cents,
    pub win_cents: Cents,
}

/// A contribution a machine reports (proto `JackpotContribution`): informational, compared with
/// the book's own at the machine's next reading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JackpotContribution {
    pub pool_id: Id,
    pub machine_id: Id,
    pub amount_cents: Cents,
}

/// The captive value a machine, controller or table shows for a pool (proto
/// `CaptiveValueReported`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptiveValueReported {
    pub pool_id: Id,
    pub value_cents: Cents,
}

/// A jackpot or superjackpot won on a machine (proto `JackpotAwarded`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JackpotAwarded {
    pub pool_id: Id,
    /// Where it was won (a machine; a table for a table jackpot).
    pub machine_id: Id,
    pub amount_cents: Cents,
    #[serde(default)]
    pub winner: String,
    #[serde(default)]
    pub game_number: u64,
}

/// A machine fault (proto `MachineFault`). Without `pool_ids`, `force_majeure` concerns the whole
/// machine and implies out of service.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineFault {
    pub machine_id: Id,
    /// e.g. `meter_fault` (any code starting with `meter` is a meter fault, r.9), `door_open`,
    /// `destroyed`, `link_down`.
    pub code: String,
    #[serde(default)]
    pub out_of_service: bool,
    #[serde(default)]
    pub force_majeure: bool,
    #[serde(default)]
    pub detail: String,
    /// The pools the fault concerns, when it concerns only the machine's part in them (a
    /// superjackpot's link, controller or server): with `force_majeure`, those pools cannot be
    /// awarded on this machine (r.6), and the machine stays in service for everything else
    /// (unless `out_of_service` says otherwise). Empty: the whole machine. Each must be a pool
    /// the machine feeds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pool_ids: Vec<Id>,
}

/// The machine was repaired / verified (proto `MachineRestored`). Without `pool_ids` every
/// fault, out-of-service and force-majeure mark ends (the machine's own and those of its part in
/// any pool); with them, only the force majeure of its part in those pools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineRestored {
    pub machine_id: Id,
    #[serde(default)]
    pub detail: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pool_ids: Vec<Id>,
}

/// A RAM clear with every meter before and after (proto `RamClear`): the only way meters may go
/// back (machines.md M2: "an explicit re-baselining event").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RamClear {
    pub machine_id: Id,
    #[serde(default)]
    pub before: Vec<Meter>,
    #[serde(default)]
    pub after: Vec<Meter>,
}

/// Moves a pool's captive value to another pool after force majeure (proto `JackpotTransfer`,
/// r.6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JackpotTransfer {
    pub transfer_id: Id,
    pub from_pool_id: Id,
    pub to_pool_id: Id,
    pub amount_cents: Cents,
    #[serde(default)]
    pub reason: String,
    /// The inspectorate's authorisation, when the target is not of the same model and bets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_id: Option<Id>,
}

/// The inspectorate authorises a target for a pool's captive values (proto
/// `TransferAuthorized`, regulator-signed; r.6 "máquinas que vierem a ser autorizadas pela
/// Inspecção-Geral de Jogos, sob proposta da concessionária").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferAuthorized {
    pub authorization_id: Id,
    pub from_pool_id: Id,
    pub to_pool_id: Id,
    #[serde(default)]
    pub reference: String,
}

/// How a table round moved its table jackpot: the rule engine's `Adjudication::jackpot` and
/// `Adjudication::jackpot_wins` for a round of a table with a jackpot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableJackpotRound {
    pub pool_id: Id,
    pub table_id: Id,
    pub round_id: Id,
    /// The table's game (chooses the citation and code of the display check).
    pub game: GameId,
    pub account: JackpotAccount,
    #[serde(default)]
    pub wins: Vec<JackpotWin>,
}

// ------------------------------------------------------------------ significant events

/// A machine's significant event (proto `MachineEvent`): what SAS exceptions and G2S events
/// report besides the meters. See [`crate::significant`] for what the book checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineEvent {
    pub machine_id: Id,
    /// The machine's own code (`SAS:11`, `G2S_CBE101`), for tracing; may be empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_code: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    pub event: Significant,
}

/// The kinds of significant event (proto `MachineEvent.event`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Significant {
    Door {
        door: Door,
        action: DoorAction,
    },
    Power {
        on: bool,
    },
    /// A critical memory error: a meter fault (r.9) until `MachineRestored`.
    MemoryError,
    BatteryLow,
    HandPay {
        state: HandPayState,
        pay_kind: HandPayKind,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        handpay_id: String,
        amount_cents: Cents,
    },
    ProgressiveHit {
        pool_id: Id,
        amount_cents: Cents,
        #[serde(default)]
        level: u32,
    },
    ProgressiveReset {
        pool_id: Id,
    },
    /// A tilt or device fault, or (`cleared`) its clearing.
    DeviceFault {
        device: String,
        code: String,
        #[serde(default)]
        cleared: bool,
        #[serde(default)]
        disables_play: bool,
    },
    Link {
        up: bool,
    },
    EventsLost {
        reporter: LostReporter,
        /// 0 = unknown.
        #[serde(default)]
        count: u64,
        #[serde(default)]
        from_ms: i64,
        #[serde(default)]
        to_ms: i64,
    },
    SoftwareAuthenticated {
        component: String,
        #[serde(default)]
        algorithm: String,
        /// Lowercase hex.
        signature: String,
        passed: bool,
    },
    ConfigurationChanged {
        #[serde(default)]
        changes: Vec<OptionChange>,
        /// Proto's empty string = `None`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authorization_id: Option<Id>,
    },
    GameStarted {
        #[serde(default)]
        game_number: u64,
        wager_cents: Cents,
    },
    /// Counted with `GamePlayed` between two readings (a game is reported one way or the other).
    GameEnded {
        #[serde(default)]
        game_number: u64,
        wager_cents: Cents,
        win_cents: Cents,
    },
}

impl Significant {
    /// The kind's name (as in the proto oneof).
    pub fn name(&self) -> &'static str {
        match self {
            Significant::Door { .. } => "door",
            Significant::Power { .. } => "power",
            Significant::MemoryError => "memory_error",
            Significant::BatteryLow => "battery_low",
            Significant::HandPay { .. } => "hand_pay",
            Significant::ProgressiveHit { .. } => "progressive_hit",
            Significant::ProgressiveReset { .. } => "progressive_reset",
            Significant::DeviceFault { .. } => "device_fault",
            Significant::Link { .. } => "link",
            Significant::EventsLost { .. } => "events_lost",
            Significant::SoftwareAuthenticated { .. } => "software_authenticated",
            Significant::ConfigurationChanged { .. } => "configuration_changed",
            Significant::GameStarted { .. } => "game_started",
            Significant::GameEnded { .. } => "game_ended",
        }
    }
}

/// A machine's doors (SAS and G2S name these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Door {
    Main,
    Logic,
    CashBox,
    Drop,
    Belly,
    Stacker,
    TopBox,
}

impl Door {
    /// The door's name for a reader ("cash box").
    pub fn name(self) -> &'static str {
        match self {
            Door::Main => "main",
            Door::Logic => "logic",
            Door::CashBox => "cash box",
            Door::Drop => "drop",
            Door::Belly => "belly",
            Door::Stacker => "stacker",
            Door::TopBox => "top box",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DoorAction {
    Opened,
    Closed,
    /// Reported at power-up: opened while the machine was off (closed now).
    OpenedWhilePoweredOff,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandPayState {
    Pending,
    Reset,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandPayKind {
    CancelledCredits,
    Jackpot,
    Progressive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LostReporter {
    Machine,
    Agent,
}

/// One option of a configuration change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionChange {
    pub option: String,
    #[serde(default)]
    pub old_value: String,
    #[serde(default)]
    pub new_value: String,
}

/// The operator authorises one configuration change of a machine (proto
/// `MachineChangeAuthorized`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeAuthorized {
    pub authorization_id: Id,
    pub machine_id: Id,
    #[serde(default)]
    pub detail: String,
}

/// An approved program signature of a model (proto `ProgramApproved`; r.7, r.8).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramApproved {
    pub model_id: Id,
    pub component: String,
    #[serde(default)]
    pub algorithm: String,
    /// Lowercase hex.
    pub signature: String,
    #[serde(default)]
    pub approval_ref: String,
}
