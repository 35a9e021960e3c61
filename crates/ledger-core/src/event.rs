//! The signed event model in domain types: the one place where a device's signed bytes are
//! decoded and checked field by field.
//!
//! A body that passes [`Event::decode`] is structurally sound: every required identifier is
//! present, every amount is integer cents within [`MAX_AMOUNT_CENTS`], cards, recipients, pockets
//! and dice are well formed, enums are known values. Whether it makes sense within its round is the
//! rule engines' business (a later stage), not the ingest's. Table payloads are kept in their
//! proto form here; the audit stage turns them into `rules_core` rounds.

use chrono::{DateTime, TimeZone, Utc};
use ed25519_dalek::VerifyingKey;
use ledger_proto::v1::{self, event_body::Payload as P};
use prost::Message;
use rules_core::{Card, MAX_AMOUNT_CENTS, Recipient};

use crate::signing::{KeyError, parse_public_key};

/// Longest identifier (device, table, round, bet, ...) in bytes.
pub const MAX_ID_LEN: usize = 128;
/// Longest free-text field in bytes.
pub const MAX_TEXT_LEN: usize = 4096;
/// Most elements in any repeated field.
pub const MAX_LIST_LEN: usize = 1024;

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// The bytes are not an EventBody, or a field is missing or out of range.
    #[error("malformed body: {field}: {problem}")]
    Malformed { field: String, problem: String },
    /// A registration with an unusable key.
    #[error("registration refused: {0}")]
    BadKey(KeyError),
}

fn bad(field: impl FieldName, problem: impl Into<String>) -> BodyError {
    BodyError::Malformed {
        field: field.field_name(),
        problem: problem.into(),
    }
}

/// Names a field in an error message. The name is only built when a check fails: the checks run
/// for every event ingested and every entry replayed, and formatting each field's name up front
/// was a sixth of the audit's replay time.
pub trait FieldName {
    fn field_name(&self) -> String;
}

impl FieldName for str {
    fn field_name(&self) -> String {
        self.to_owned()
    }
}

impl FieldName for String {
    fn field_name(&self) -> String {
        self.clone()
    }
}

impl<T: FieldName + ?Sized> FieldName for &T {
    fn field_name(&self) -> String {
        (**self).field_name()
    }
}

/// `payload.field`, e.g. `bet_placed.round_id`.
#[derive(Clone, Copy)]
struct Of<'a>(&'a str, &'a str);

impl FieldName for Of<'_> {
    fn field_name(&self) -> String {
        format!("{}.{}", self.0, self.1)
    }
}

/// `payload.field[i]rest`, e.g. `round_settled.results[3].bet_id`.
#[derive(Clone, Copy)]
struct Nth<'a>(&'a str, &'a str, usize, &'a str);

impl FieldName for Nth<'_> {
    fn field_name(&self) -> String {
        format!("{}.{}[{}]{}", self.0, self.1, self.2, self.3)
    }
}

/// Kind of a registered device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Table,
    Machine,
}

/// A device registration (signed by an operator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceRegistration {
    pub device_id: String,
    pub public_key: VerifyingKey,
    pub kind: DeviceKind,
    pub casino_id: String,
    pub table_ids: Vec<String>,
    /// For machines: the machine id (the device id when the registration leaves it empty).
    pub machine_id: String,
    pub model_id: String,
    pub bet_values_cents: Vec<i64>,
    pub description: String,
}

/// What an event is about, which decides who may sign it.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// Registry, signed by an operator.
    DeviceRegistered(DeviceRegistration),
    /// Registry, signed by an operator.
    DeviceRevoked { device_id: String, reason: String },
    /// Registry, signed by an operator: `device_id`'s key from now on.
    DeviceKeyRotated {
        device_id: String,
        public_key: VerifyingKey,
        reason: String,
    },
    /// A table-game event for `table_id`, signed by a table device registered for that table.
    Table { table_id: String, event: P },
    /// A slot-machine event for `machine_id`, signed by that machine's agent. `machine_id` is
    /// empty for payloads that name no machine (captive values).
    Machine { machine_id: String, event: P },
    /// Machine models, pools and jackpot transfers, signed by an operator.
    Operator(P),
    /// Inspectorate authorisations, signed by a regulator.
    Regulator(P),
}

/// One decoded, structurally valid event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub device_id: String,
    pub sequence: u64,
    pub occurred_at: DateTime<Utc>,
    pub payload: Payload,
}

impl Event {
    /// Decode and check an EventBody's bytes.
    pub fn decode(body: &[u8]) -> Result<Event, BodyError> {
        let b = v1::EventBody::decode(body)
            .map_err(|e| bad("body", format!("not an EventBody: {e}")))?;
        Event::from_proto(b)
    }

    /// Check a decoded EventBody.
    pub fn from_proto(b: v1::EventBody) -> Result<Event, BodyError> {
        id("device_id", &b.device_id)?;
        if b.sequence == 0 {
            return Err(bad("sequence", "must start at 1"));
        }
        let occurred_at = Utc
            .timestamp_millis_opt(b.occurred_at_ms)
            .single()
            .ok_or_else(|| {
                bad(
                    "occurred_at_ms",
                    format!("{} is not a valid time", b.occurred_at_ms),
                )
            })?;
        let p = b.payload.ok_or_else(|| {
            bad(
                "payload",
                "missing (or a payload this ledger version does not know)",
            )
        })?;
        let payload = check_payload(p)?;
        Ok(Event {
            device_id: b.device_id,
            sequence: b.sequence,
            occurred_at,
            payload,
        })
    }

    /// The payload's name as in the proto (`bet_placed`, `meter_reading`, ...).
    pub fn payload_name(&self) -> &'static str {
        match &self.payload {
            Payload::DeviceRegistered(_) => "device_registered",
            Payload::DeviceRevoked { .. } => "device_revoked",
            Payload::DeviceKeyRotated { .. } => "device_key_rotated",
            Payload::Table { event, .. }
            | Payload::Machine { event, .. }
            | Payload::Operator(event)
            | Payload::Regulator(event) => payload_name(event),
        }
    }
}

/// The proto name of a payload.
pub fn payload_name(p: &P) -> &'static str {
    match p {
        P::DeviceRegistered(_) => "device_registered",
        P::DeviceRevoked(_) => "device_revoked",
        P::DeviceKeyRotated(_) => "device_key_rotated",
        P::TableConfigured(_) => "table_configured",
        P::RoundOpened(_) => "round_opened",
        P::BetPlaced(_) => "bet_placed",
        P::BetChanged(_) => "bet_changed",
        P::BetWithdrawn(_) => "bet_withdrawn",
        P::BetsClosed(_) => "bets_closed",
        P::CardDealt(_) => "card_dealt",
        P::DiceThrown(_) => "dice_thrown",
        P::BallLaunched(_) => "ball_launched",
        P::BallLanded(_) => "ball_landed",
        P::PlayerDecision(_) => "player_decision",
        P::RoleAssigned(_) => "role_assigned",
        P::TableProcedure(_) => "table_procedure",
        P::FaultDeclared(_) => "fault_declared",
        P::ThrowVoided(_) => "throw_voided",
        P::BetsCollected(_) => "bets_collected",
        P::PrizePaid(_) => "prize_paid",
        P::JackpotDisplayed(_) => "jackpot_displayed",
        P::RoundSettled(_) => "round_settled",
        P::RoundVoided(_) => "round_voided",
        P::MeterReading(_) => "meter_reading",
        P::GamePlayed(_) => "game_played",
        P::JackpotContribution(_) => "jackpot_contribution",
        P::CaptiveValueReported(_) => "captive_value_reported",
        P::JackpotAwarded(_) => "jackpot_awarded",
        P::MachineFault(_) => "machine_fault",
        P::MachineRestored(_) => "machine_restored",
        P::RamClear(_) => "ram_clear",
        P::MachineEvent(_) => "machine_event",
        P::MachineChangeAuthorized(_) => "machine_change_authorized",
        P::ProgramApproved(_) => "program_approved",
        P::MachineModelApproved(_) => "machine_model_approved",
        P::PoolConfigured(_) => "pool_configured",
        P::JackpotTransfer(_) => "jackpot_transfer",
        P::TransferAuthorized(_) => "transfer_authorized",
    }
}

// ----------------------------------------------------------------------------- field checks

/// An identifier: non-empty, at most [`MAX_ID_LEN`] bytes, printable ASCII without spaces.
pub fn id(field: impl FieldName, v: &str) -> Result<(), BodyError> {
    if v.is_empty() {
        return Err(bad(&field, "missing"));
    }
    if v.len() > MAX_ID_LEN {
        return Err(bad(&field, format!("longer than {MAX_ID_LEN} bytes")));
    }
    if v.bytes().all(|b| b.is_ascii_graphic()) {
        return Ok(());
    }
    let c = v.chars().find(|c| !c.is_ascii_graphic()).unwrap_or(' ');
    Err(bad(
        field,
        format!("character {c:?} not allowed in an identifier"),
    ))
}

fn opt_id(field: impl FieldName, v: &str) -> Result<(), BodyError> {
    if v.is_empty() { Ok(()) } else { id(field, v) }
}

fn text(field: impl FieldName, v: &str) -> Result<(), BodyError> {
    if v.len() > MAX_TEXT_LEN {
        return Err(bad(&field, format!("longer than {MAX_TEXT_LEN} bytes")));
    }
    let plain = |b: u8| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t';
    if !v.bytes().all(plain) && v.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(bad(field, "control characters not allowed"));
    }
    Ok(())
}

/// The pools a machine fault or restore concerns (`MachineFault.pool_ids`): each a pool id,
/// none twice, at most [`MAX_LIST_LEN`]. Whether the machine feeds them is the audit's to judge.
fn pool_ids<F: FieldName>(nth: impl Fn(usize) -> F, v: &[String]) -> Result<(), BodyError> {
    if v.len() > MAX_LIST_LEN {
        return Err(bad(
            nth(MAX_LIST_LEN),
            format!("more than {MAX_LIST_LEN} elements"),
        ));
    }
    for (i, x) in v.iter().enumerate() {
        id(nth(i), x)?;
        if v.iter().take(i).any(|y| y == x) {
            return Err(bad(nth(i), format!("pool `{x}` is listed twice")));
        }
    }
    Ok(())
}

fn list<T>(field: impl FieldName, v: &[T]) -> Result<(), BodyError> {
    if v.len() > MAX_LIST_LEN {
        return Err(bad(field, format!("more than {MAX_LIST_LEN} elements")));
    }
    Ok(())
}

/// Any amount (may be negative: a net result): |v| <= MAX_AMOUNT_CENTS.
fn cents(field: impl FieldName, v: i64) -> Result<(), BodyError> {
    if v.unsigned_abs() > MAX_AMOUNT_CENTS as u64 {
        return Err(bad(
            field,
            format!("{v} cents is beyond the ledger's limit of ±{MAX_AMOUNT_CENTS}"),
        ));
    }
    Ok(())
}

/// A non-negative amount.
fn nonneg(field: impl FieldName, v: i64) -> Result<(), BodyError> {
    if v < 0 {
        return Err(bad(&field, format!("must not be negative, got {v}")));
    }
    cents(field, v)
}

/// A stake: positive.
fn stake(field: impl FieldName, v: i64) -> Result<(), BodyError> {
    if v <= 0 {
        return Err(bad(&field, format!("must be positive, got {v}")));
    }
    cents(field, v)
}

fn seat(field: impl FieldName, v: Option<u32>) -> Result<(), BodyError> {
    match v {
        Some(s) if s > 255 => Err(bad(field, format!("seat {s} out of range 0-255"))),
        _ => Ok(()),
    }
}

fn bp(field: impl FieldName, v: u32) -> Result<(), BodyError> {
    if v > 10_000 {
        return Err(bad(field, format!("{v} basis points is more than 100%")));
    }
    Ok(())
}

fn direction(field: impl FieldName, v: i32) -> Result<(), BodyError> {
    v1::Direction::try_from(v)
        .map(|_| ())
        .map_err(|_| bad(field, format!("unknown direction {v}")))
}

fn meters(field: Of<'_>, ms: &[v1::Meter]) -> Result<(), BodyError> {
    list(field, ms)?;
    for (i, m) in ms.iter().enumerate() {
        id(Nth(field.0, field.1, i, ".name"), &m.name)?;
        if m.rollover != 0 && m.value >= m.rollover {
            return Err(bad(
                Nth(field.0, field.1, i, ".value"),
                format!(
                    "{} is not below the meter's rollover {}",
                    m.value, m.rollover
                ),
            ));
        }
    }
    Ok(())
}

fn table_round(name: &str, table_id: &str, round_id: &str) -> Result<(), BodyError> {
    id(Of(name, "table_id"), table_id)?;
    id(Of(name, "round_id"), round_id)
}

fn check_payload(p: P) -> Result<Payload, BodyError> {
    let name = payload_name(&p);
    macro_rules! f {
        ($field:expr) => {
            Of(name, $field)
        };
        ($field:expr, $i:expr, $rest:expr) => {
            Nth(name, $field, $i, $rest)
        };
    }
    // Table events: check, then classify by table.
    macro_rules! table {
        ($m:expr) => {{
            table_round(name, &$m.table_id, &$m.round_id)?;
            $m.table_id.clone()
        }};
    }
    let table_id = match &p {
        P::DeviceRegistered(r) => return registration(r).map(Payload::DeviceRegistered),
        P::DeviceRevoked(r) => {
            id(f!("device_id"), &r.device_id)?;
            text(f!("reason"), &r.reason)?;
            return Ok(Payload::DeviceRevoked {
                device_id: r.device_id.clone(),
                reason: r.reason.clone(),
            });
        }
        P::DeviceKeyRotated(r) => {
            id(f!("device_id"), &r.device_id)?;
            text(f!("reason"), &r.reason)?;
            let public_key = parse_public_key(&r.public_key)
                .map_err(|e| bad(f!("public_key"), e.to_string()))?;
            return Ok(Payload::DeviceKeyRotated {
                device_id: r.device_id.clone(),
                public_key,
                reason: r.reason.clone(),
            });
        }
        P::TableConfigured(m) => {
            id(f!("table_id"), &m.table_id)?;
            id(f!("casino_id"), &m.casino_id)?;
            id(f!("game"), &m.game)?;
            opt_id(f!("regulation"), &m.regulation)?;
            if let Some(v) = m.min_bet_cents {
                stake(f!("min_bet_cents"), v)?;
            }
            if let Some(v) = m.max_bet_cents {
                stake(f!("max_bet_cents"), v)?;
            }
            if let (Some(lo), Some(hi)) = (m.min_bet_cents, m.max_bet_cents)
                && lo > hi
            {
                return Err(bad(
                    f!("min_bet_cents"),
                    format!("{lo} is above max_bet_cents {hi}"),
                ));
            }
            list(f!("limits"), &m.limits)?;
            for (i, l) in m.limits.iter().enumerate() {
                id(f!("limits", i, ".chance"), &l.chance)?;
                if let Some(v) = l.min_cents {
                    stake(f!("limits", i, ".min_cents"), v)?;
                }
                if let Some(v) = l.max_cents {
                    stake(f!("limits", i, ".max_cents"), v)?;
                }
            }
            opt_id(f!("commission"), &m.commission)?;
            if let Some(j) = &m.jackpot
                && !j.pool_id.is_empty()
            {
                id(f!("jackpot.pool_id"), &j.pool_id)?;
                stake(f!("jackpot.bet_amount_cents"), j.bet_amount_cents)?;
                bp(f!("jackpot.increment_bp"), j.increment_bp)?;
                nonneg(f!("jackpot.start_value_cents"), j.start_value_cents)?;
                list(f!("jackpot.paytable"), &j.paytable)?;
                for (i, pr) in j.paytable.iter().enumerate() {
                    id(f!("jackpot.paytable", i, ".combination"), &pr.combination)?;
                    match pr.award {
                        None => {
                            return Err(bad(f!("jackpot.paytable", i, ".award"), "missing"));
                        }
                        Some(v1::jackpot_prize::Award::PercentBp(b)) => {
                            bp(f!("jackpot.paytable", i, ".percent_bp"), b)?
                        }
                        Some(_) => {}
                    }
                }
                opt_id(f!("jackpot.collection"), &j.collection)?;
            }
            if m.settings.len() > MAX_LIST_LEN {
                return Err(bad(f!("settings"), "too many settings"));
            }
            for (k, v) in &m.settings {
                id(f!("settings key"), k)?;
                match &v.value {
                    None => return Err(bad(f!(&format!("settings[{k}]")), "missing value")),
                    Some(v1::setting_value::Value::Text(t)) => {
                        text(f!(&format!("settings[{k}]")), t)?
                    }
                    Some(v1::setting_value::Value::List(l)) => {
                        list(f!(&format!("settings[{k}]")), &l.values)?
                    }
                    Some(_) => {}
                }
            }
            m.table_id.clone()
        }
        P::RoundOpened(m) => table!(m),
        P::BetPlaced(m) => {
            let t = table!(m);
            id(f!("bet_id"), &m.bet_id)?;
            id(f!("bet_type"), &m.bet_type)?;
            seat(f!("seat"), m.seat)?;
            opt_id(f!("player_id"), &m.player_id)?;
            list(f!("selection"), &m.selection)?;
            if let Some(s) = m.selection.iter().find(|&&s| s > 255) {
                return Err(bad(f!("selection"), format!("{s} out of range 0-255")));
            }
            stake(f!("amount_cents"), m.amount_cents)?;
            opt_id(f!("on_bet_id"), &m.on_bet_id)?;
            if m.attrs.len() > MAX_LIST_LEN {
                return Err(bad(f!("attrs"), "too many attributes"));
            }
            for (k, v) in &m.attrs {
                id(f!("attrs key"), k)?;
                text(f!(&format!("attrs[{k}]")), v)?;
            }
            t
        }
        P::BetChanged(m) => {
            let t = table!(m);
            id(f!("bet_id"), &m.bet_id)?;
            stake(f!("amount_cents"), m.amount_cents)?;
            t
        }
        P::BetWithdrawn(m) => {
            let t = table!(m);
            id(f!("bet_id"), &m.bet_id)?;
            t
        }
        P::BetsClosed(m) => table!(m),
        P::CardDealt(m) => {
            let t = table!(m);
            m.recipient
                .parse::<Recipient>()
                .map_err(|e| bad(f!("recipient"), e.to_string()))?;
            m.card
                .parse::<Card>()
                .map_err(|e| bad(f!("card"), e.to_string()))?;
            t
        }
        P::DiceThrown(m) => {
            let t = table!(m);
            if m.dice.is_empty() || m.dice.len() > 5 {
                return Err(bad(
                    f!("dice"),
                    format!("{} dice; expected 1 to 5", m.dice.len()),
                ));
            }
            if let Some(d) = m.dice.iter().find(|d| !(1..=6).contains(*d)) {
                return Err(bad(f!("dice"), format!("face {d} is not 1-6")));
            }
            if let Some(c) = m.chosen_from
                && c > 255
            {
                return Err(bad(f!("chosen_from"), format!("{c} out of range")));
            }
            t
        }
        P::BallLaunched(m) => {
            let t = table!(m);
            direction(f!("ball_direction"), m.ball_direction)?;
            direction(f!("wheel_direction"), m.wheel_direction)?;
            if let Some(p) = m.from_pocket
                && p > 36
            {
                return Err(bad(f!("from_pocket"), format!("pocket {p} is not 0-36")));
            }
            opt_id(f!("ball_id"), &m.ball_id)?;
            t
        }
        P::BallLanded(m) => {
            let t = table!(m);
            if m.pocket > 36 {
                return Err(bad(
                    f!("pocket"),
                    format!("pocket {} is not 0-36", m.pocket),
                ));
            }
            t
        }
        P::PlayerDecision(m) => {
            let t = table!(m);
            seat(f!("seat"), m.seat)?;
            if m.hand > 255 {
                return Err(bad(f!("hand"), format!("hand {} out of range", m.hand)));
            }
            opt_id(f!("player_id"), &m.player_id)?;
            id(f!("action"), &m.action)?;
            if let Some(v) = m.amount_cents {
                nonneg(f!("amount_cents"), v)?;
            }
            opt_id(f!("bet_id"), &m.bet_id)?;
            t
        }
        P::RoleAssigned(m) => {
            let t = table!(m);
            id(f!("role"), &m.role)?;
            seat(f!("seat"), m.seat)?;
            opt_id(f!("player_id"), &m.player_id)?;
            t
        }
        P::TableProcedure(m) => {
            let t = table!(m);
            id(f!("name"), &m.name)?;
            text(f!("value"), &m.value)?;
            seat(f!("seat"), m.seat)?;
            if let Some(v) = m.amount_cents {
                cents(f!("amount_cents"), v)?;
            }
            t
        }
        P::FaultDeclared(m) => {
            let t = table!(m);
            id(f!("code"), &m.code)?;
            seat(f!("seat"), m.seat)?;
            text(f!("detail"), &m.detail)?;
            t
        }
        P::ThrowVoided(m) => {
            let t = table!(m);
            text(f!("reason"), &m.reason)?;
            t
        }
        P::BetsCollected(m) => {
            let t = table!(m);
            list(f!("bet_ids"), &m.bet_ids)?;
            for (i, b) in m.bet_ids.iter().enumerate() {
                id(f!("bet_ids", i, ""), b)?;
            }
            t
        }
        P::PrizePaid(m) => {
            let t = table!(m);
            id(f!("bet_id"), &m.bet_id)?;
            nonneg(f!("amount_cents"), m.amount_cents)?;
            t
        }
        P::JackpotDisplayed(m) => {
            let t = table!(m);
            nonneg(f!("value_cents"), m.value_cents)?;
            t
        }
        P::RoundSettled(m) => {
            let t = table!(m);
            list(f!("results"), &m.results)?;
            for (i, r) in m.results.iter().enumerate() {
                id(f!("results", i, ".bet_id"), &r.bet_id)?;
                cents(f!("results", i, ".net_cents"), r.net_cents)?;
            }
            if let Some(h) = m.house_cents {
                cents(f!("house_cents"), h)?;
            }
            t
        }
        P::RoundVoided(m) => {
            let t = table!(m);
            text(f!("reason"), &m.reason)?;
            t
        }
        // ------------------------------------------------------------------ slot machines
        P::MeterReading(m) => {
            id(f!("machine_id"), &m.machine_id)?;
            if m.meters.is_empty() {
                return Err(bad(f!("meters"), "at least one meter is required"));
            }
            meters(f!("meters"), &m.meters)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        P::GamePlayed(m) => {
            id(f!("machine_id"), &m.machine_id)?;
            nonneg(f!("wager_cents"), m.wager_cents)?;
            nonneg(f!("win_cents"), m.win_cents)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        P::JackpotContribution(m) => {
            id(f!("pool_id"), &m.pool_id)?;
            id(f!("machine_id"), &m.machine_id)?;
            nonneg(f!("amount_cents"), m.amount_cents)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        P::CaptiveValueReported(m) => {
            id(f!("pool_id"), &m.pool_id)?;
            nonneg(f!("value_cents"), m.value_cents)?;
            return Ok(Payload::Machine {
                machine_id: String::new(),
                event: p,
            });
        }
        P::JackpotAwarded(m) => {
            id(f!("pool_id"), &m.pool_id)?;
            id(f!("machine_id"), &m.machine_id)?;
            stake(f!("amount_cents"), m.amount_cents)?;
            text(f!("winner"), &m.winner)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        P::MachineFault(m) => {
            id(f!("machine_id"), &m.machine_id)?;
            id(f!("code"), &m.code)?;
            text(f!("detail"), &m.detail)?;
            pool_ids(|i| f!("pool_ids", i, ""), &m.pool_ids)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        P::MachineRestored(m) => {
            id(f!("machine_id"), &m.machine_id)?;
            text(f!("detail"), &m.detail)?;
            pool_ids(|i| f!("pool_ids", i, ""), &m.pool_ids)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        P::RamClear(m) => {
            id(f!("machine_id"), &m.machine_id)?;
            meters(f!("before"), &m.before)?;
            meters(f!("after"), &m.after)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        P::MachineEvent(m) => {
            machine_event(m)?;
            return Ok(Payload::Machine {
                machine_id: m.machine_id.clone(),
                event: p,
            });
        }
        // ------------------------------------------------------------ operator / regulator
        P::MachineChangeAuthorized(m) => {
            id(f!("authorization_id"), &m.authorization_id)?;
            id(f!("machine_id"), &m.machine_id)?;
            text(f!("detail"), &m.detail)?;
            return Ok(Payload::Operator(p));
        }
        P::ProgramApproved(m) => {
            id(f!("model_id"), &m.model_id)?;
            id(f!("component"), &m.component)?;
            opt_id(f!("algorithm"), &m.algorithm)?;
            signature_hex(f!("signature"), &m.signature)?;
            text(f!("approval_ref"), &m.approval_ref)?;
            return Ok(Payload::Operator(p));
        }
        P::MachineModelApproved(m) => {
            id(f!("model_id"), &m.model_id)?;
            bp(f!("theoretical_rtp_bp"), m.theoretical_rtp_bp)?;
            list(f!("bet_values_cents"), &m.bet_values_cents)?;
            for (i, v) in m.bet_values_cents.iter().enumerate() {
                stake(f!("bet_values_cents", i, ""), *v)?;
            }
            text(f!("approval_ref"), &m.approval_ref)?;
            return Ok(Payload::Operator(p));
        }
        P::PoolConfigured(m) => {
            id(f!("pool_id"), &m.pool_id)?;
            if v1::PoolKind::try_from(m.kind).unwrap_or(v1::PoolKind::Unspecified)
                == v1::PoolKind::Unspecified
            {
                return Err(bad(
                    f!("kind"),
                    format!("pool kind {} is not a known kind", m.kind),
                ));
            }
            for (fld, ids) in [
                ("casino_ids", &m.casino_ids),
                ("member_machine_ids", &m.member_machine_ids),
                ("member_table_ids", &m.member_table_ids),
            ] {
                list(f!(fld), ids)?;
                for (i, x) in ids.iter().enumerate() {
                    id(f!(fld, i, ""), x)?;
                }
            }
            bp(f!("contribution_bp"), m.contribution_bp)?;
            nonneg(f!("start_value_cents"), m.start_value_cents)?;
            nonneg(f!("reset_value_cents"), m.reset_value_cents)?;
            return Ok(Payload::Operator(p));
        }
        P::JackpotTransfer(m) => {
            transfer_fields(|field| f!(field), m)?;
            return Ok(Payload::Operator(p));
        }
        P::TransferAuthorized(m) => {
            id(f!("authorization_id"), &m.authorization_id)?;
            id(f!("from_pool_id"), &m.from_pool_id)?;
            id(f!("to_pool_id"), &m.to_pool_id)?;
            text(f!("reference"), &m.reference)?;
            return Ok(Payload::Regulator(p));
        }
    };
    Ok(Payload::Table { table_id, event: p })
}

/// Longest program signature, in hex digits (a 512-bit digest is 128).
pub const MAX_SIGNATURE_HEX: usize = 256;

/// A program signature: lowercase hex, an even number of digits, at most [`MAX_SIGNATURE_HEX`].
fn signature_hex(field: impl FieldName, v: &str) -> Result<(), BodyError> {
    if v.is_empty() {
        return Err(bad(field, "missing"));
    }
    if v.len() > MAX_SIGNATURE_HEX {
        return Err(bad(
            field,
            format!("longer than {MAX_SIGNATURE_HEX} hex digits"),
        ));
    }
    if !v
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(bad(field, "must be lowercase hex digits (0-9, a-f)"));
    }
    if !v.len().is_multiple_of(2) {
        return Err(bad(field, "an odd number of hex digits"));
    }
    Ok(())
}

/// An enum value that must be known and not UNSPECIFIED (0).
fn known<E: TryFrom<i32>>(field: impl FieldName, v: i32, what: &str) -> Result<E, BodyError> {
    if v == 0 {
        return Err(bad(field, format!("missing (the {what} is unspecified)")));
    }
    E::try_from(v).map_err(|_| bad(field, format!("unknown {what} {v}")))
}

/// A machine's significant event: the machine, the kind, and the kind's own fields, each error
/// naming `machine_event.<kind>.<field>`.
fn machine_event(m: &v1::MachineEvent) -> Result<(), BodyError> {
    use v1::machine_event::Event as K;
    const N: &str = "machine_event";
    id(Of(N, "machine_id"), &m.machine_id)?;
    opt_id(Of(N, "source_code"), &m.source_code)?;
    text(Of(N, "detail"), &m.detail)?;
    let Some(event) = &m.event else {
        return Err(bad(
            Of(N, "event"),
            "missing (or a kind this ledger version does not know)",
        ));
    };
    match event {
        K::Door(d) => {
            known::<v1::Door>(Of(N, "door.door"), d.door, "door")?;
            known::<v1::DoorAction>(Of(N, "door.action"), d.action, "door action")?;
        }
        K::Power(p) => {
            known::<v1::PowerAction>(Of(N, "power.action"), p.action, "power action")?;
        }
        K::MemoryError(_) | K::BatteryLow(_) => {}
        K::HandPay(h) => {
            known::<v1::HandPayState>(Of(N, "hand_pay.state"), h.state, "hand pay state")?;
            known::<v1::HandPayKind>(Of(N, "hand_pay.kind"), h.kind, "hand pay kind")?;
            opt_id(Of(N, "hand_pay.handpay_id"), &h.handpay_id)?;
            stake(Of(N, "hand_pay.amount_cents"), h.amount_cents)?;
        }
        K::ProgressiveHit(h) => {
            id(Of(N, "progressive_hit.pool_id"), &h.pool_id)?;
            stake(Of(N, "progressive_hit.amount_cents"), h.amount_cents)?;
        }
        K::ProgressiveReset(r) => id(Of(N, "progressive_reset.pool_id"), &r.pool_id)?,
        K::DeviceFault(f) => {
            id(Of(N, "device_fault.device"), &f.device)?;
            id(Of(N, "device_fault.code"), &f.code)?;
        }
        K::Link(l) => {
            known::<v1::LinkAction>(Of(N, "link.action"), l.action, "link action")?;
        }
        K::EventsLost(l) => {
            known::<v1::EventsLostReporter>(Of(N, "events_lost.reporter"), l.reporter, "reporter")?;
            if l.from_ms < 0 {
                return Err(bad(
                    Of(N, "events_lost.from_ms"),
                    format!("must not be negative, got {}", l.from_ms),
                ));
            }
            if l.to_ms < 0 {
                return Err(bad(
                    Of(N, "events_lost.to_ms"),
                    format!("must not be negative, got {}", l.to_ms),
                ));
            }
            // 0 is "not known"; both known (then from_ms > 0 too): in order.
            if l.to_ms > 0 && l.from_ms > l.to_ms {
                return Err(bad(
                    Of(N, "events_lost.to_ms"),
                    format!("{} is before from_ms {}", l.to_ms, l.from_ms),
                ));
            }
        }
        K::SoftwareAuthenticated(a) => {
            id(Of(N, "software_authenticated.component"), &a.component)?;
            opt_id(Of(N, "software_authenticated.algorithm"), &a.algorithm)?;
            signature_hex(Of(N, "software_authenticated.signature"), &a.signature)?;
        }
        K::ConfigurationChanged(c) => {
            const F: &str = "configuration_changed.changes";
            if c.changes.is_empty() {
                return Err(bad(Of(N, F), "at least one option change is required"));
            }
            list(Of(N, F), &c.changes)?;
            for (i, o) in c.changes.iter().enumerate() {
                id(Nth(N, F, i, ".option"), &o.option)?;
                text(Nth(N, F, i, ".old_value"), &o.old_value)?;
                text(Nth(N, F, i, ".new_value"), &o.new_value)?;
            }
            opt_id(
                Of(N, "configuration_changed.authorization_id"),
                &c.authorization_id,
            )?;
        }
        K::GameStarted(g) => nonneg(Of(N, "game_started.wager_cents"), g.wager_cents)?,
        K::GameEnded(g) => {
            nonneg(Of(N, "game_ended.wager_cents"), g.wager_cents)?;
            nonneg(Of(N, "game_ended.win_cents"), g.win_cents)?;
        }
    }
    Ok(())
}

/// A jackpot transfer's fields, checked as ingest checks them, each named by `field`.
fn transfer_fields<F: FieldName>(
    field: impl Fn(&'static str) -> F,
    m: &v1::JackpotTransfer,
) -> Result<(), BodyError> {
    id(field("transfer_id"), &m.transfer_id)?;
    id(field("from_pool_id"), &m.from_pool_id)?;
    id(field("to_pool_id"), &m.to_pool_id)?;
    stake(field("amount_cents"), m.amount_cents)?;
    text(field("reason"), &m.reason)?;
    opt_id(field("authorization_id"), &m.authorization_id)
}

/// Would ingest take this jackpot transfer's fields? The check of a `jackpot_transfer` payload,
/// with the fields named alone (`transfer_id`, not `jackpot_transfer.transfer_id`): for
/// `Jackpots.ValidateTransfer`, which must not call a transfer acceptable that the ledger would
/// refuse as malformed.
pub fn check_jackpot_transfer(m: &v1::JackpotTransfer) -> Result<(), BodyError> {
    transfer_fields(|field| field, m)
}

fn registration(r: &v1::DeviceRegistered) -> Result<DeviceRegistration, BodyError> {
    let name = "device_registered";
    macro_rules! f {
        ($field:expr) => {
            Of(name, $field)
        };
        ($field:expr, $i:expr, $rest:expr) => {
            Nth(name, $field, $i, $rest)
        };
    }
    id(f!("device_id"), &r.device_id)?;
    let kind = match v1::DeviceKind::try_from(r.kind) {
        Ok(v1::DeviceKind::Table) => DeviceKind::Table,
        Ok(v1::DeviceKind::Machine) => DeviceKind::Machine,
        _ => {
            return Err(bad(
                f!("kind"),
                "must be DEVICE_KIND_TABLE or DEVICE_KIND_MACHINE",
            ));
        }
    };
    id(f!("casino_id"), &r.casino_id)?;
    list(f!("table_ids"), &r.table_ids)?;
    for (i, t) in r.table_ids.iter().enumerate() {
        id(f!("table_ids", i, ""), t)?;
    }
    opt_id(f!("machine_id"), &r.machine_id)?;
    list(f!("bet_values_cents"), &r.bet_values_cents)?;
    for (i, v) in r.bet_values_cents.iter().enumerate() {
        stake(f!("bet_values_cents", i, ""), *v)?;
    }
    let mut machine_id = String::new();
    if kind == DeviceKind::Machine {
        id(f!("model_id"), &r.model_id)?;
        if r.bet_values_cents.is_empty() {
            return Err(bad(
                f!("bet_values_cents"),
                "a machine needs its bet values (denomination)",
            ));
        }
        machine_id = if r.machine_id.is_empty() {
            r.device_id.clone()
        } else {
            r.machine_id.clone()
        };
    } else {
        opt_id(f!("model_id"), &r.model_id)?;
    }
    text(f!("description"), &r.description)?;
    let public_key = parse_public_key(&r.public_key).map_err(BodyError::BadKey)?;
    Ok(DeviceRegistration {
        device_id: r.device_id.clone(),
        public_key,
        kind,
        casino_id: r.casino_id.clone(),
        table_ids: r.table_ids.clone(),
        machine_id,
        model_id: r.model_id.clone(),
        bet_values_cents: r.bet_values_cents.clone(),
        description: r.description.clone(),
    })
}

/// The time window an event's `occurred_at_ms` must fall in.
#[derive(Clone, Copy, Debug)]
pub struct TimePolicy {
    /// How far ahead of the ledger's clock an event may be (clock skew), in ms.
    pub max_future_ms: i64,
    /// How far behind the ledger's clock an event may be, in ms; 0 = no limit. Devices resend
    /// old events after an outage, so the default ([`DEFAULT_MAX_PAST_MS`]) is an outage's
    /// length, not a clock's error.
    pub max_past_ms: i64,
    /// The earliest time accepted at all (UTC ms).
    pub earliest_ms: i64,
}

/// The default of [`TimePolicy::max_past_ms`]: 7 days. An agent keeps every event it has not had
/// acknowledged and resends it when the ledger is back, so the limit must outlast the longest
/// outage an operator may take to notice and repair (a long weekend, a holiday, a part to wait
/// for): a week. Older events are refused (a longer outage needs the limit raised for the resend),
/// so a device cannot backdate an event by months or years; an identical resend of a stored event
/// still gets its original receipt, however old.
pub const DEFAULT_MAX_PAST_MS: i64 = 7 * 86_400_000;

impl Default for TimePolicy {
    fn default() -> Self {
        TimePolicy {
            max_future_ms: 5 * 60 * 1000,
            max_past_ms: DEFAULT_MAX_PAST_MS,
            earliest_ms: 946_684_800_000, // 2000-01-01T00:00:00Z
        }
    }
}

impl TimePolicy {
    /// Check `occurred_at_ms` against the ledger's clock `now_ms`; the error says why.
    pub fn check(&self, occurred_at_ms: i64, now_ms: i64) -> Result<(), String> {
        if occurred_at_ms < self.earliest_ms {
            return Err(format!(
                "occurred_at_ms {occurred_at_ms} is before the earliest accepted time {}",
                self.earliest_ms
            ));
        }
        if occurred_at_ms > now_ms.saturating_add(self.max_future_ms) {
            return Err(format!(
                "occurred_at_ms {occurred_at_ms} is {} ms in the future (limit {} ms)",
                occurred_at_ms.saturating_sub(now_ms),
                self.max_future_ms
            ));
        }
        if self.max_past_ms > 0 && occurred_at_ms < now_ms.saturating_sub(self.max_past_ms) {
            return Err(format!(
                "occurred_at_ms {occurred_at_ms} is {} ms in the past (limit {} ms)",
                now_ms.saturating_sub(occurred_at_ms),
                self.max_past_ms
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;
    use proptest::prelude::*;

    fn body(payload: P) -> Vec<u8> {
        v1::EventBody {
            device_id: "table-1".into(),
            sequence: 1,
            occurred_at_ms: 1_700_000_000_000,
            payload: Some(payload),
        }
        .encode_to_vec()
    }

    fn bet(amount: i64) -> P {
        P::BetPlaced(v1::BetPlaced {
            table_id: "t1".into(),
            round_id: "r1".into(),
            bet_id: "b1".into(),
            bet_type: "straight".into(),
            selection: vec![17],
            amount_cents: amount,
            ..Default::default()
        })
    }

    #[test]
    fn a_good_bet_decodes_as_a_table_event() {
        let e = Event::decode(&body(bet(500))).unwrap();
        assert_eq!(e.device_id, "table-1");
        assert_eq!(e.payload_name(), "bet_placed");
        assert!(matches!(e.payload, Payload::Table { ref table_id, .. } if table_id == "t1"));
    }

    #[test]
    fn errors_name_the_field() {
        let e = Event::decode(&body(bet(-5))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed body: bet_placed.amount_cents: must be positive, got -5"
        );
        let card = P::CardDealt(v1::CardDealt {
            table_id: "t1".into(),
            round_id: "r1".into(),
            recipient: "seat:3".into(),
            card: "ZZ".into(),
            face_up: true,
        });
        assert!(
            Event::decode(&body(card))
                .unwrap_err()
                .to_string()
                .contains("card_dealt.card")
        );
        let e = Event::decode(&[0xff, 0xff, 0xff]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("malformed body: body: not an EventBody"),
            "{e}"
        );
        let no_payload = v1::EventBody {
            device_id: "d".into(),
            sequence: 1,
            occurred_at_ms: 1,
            payload: None,
        };
        assert!(
            Event::decode(&no_payload.encode_to_vec())
                .unwrap_err()
                .to_string()
                .contains("payload")
        );
        let zero_seq = v1::EventBody {
            device_id: "d".into(),
            sequence: 0,
            occurred_at_ms: 1,
            payload: Some(bet(1)),
        };
        assert!(
            Event::decode(&zero_seq.encode_to_vec())
                .unwrap_err()
                .to_string()
                .contains("sequence")
        );
    }

    /// P217/2007 T.III r.6: force majeure of a machine's part in some pools (`pool_ids`) is a
    /// machine event; the pools it names are ids, each once.
    #[test]
    fn a_machine_fault_may_name_its_pools() {
        let fault = |pools: &[&str]| {
            P::MachineFault(v1::MachineFault {
                machine_id: "M-1".into(),
                code: "link_down".into(),
                force_majeure: true,
                pool_ids: pools.iter().map(|p| p.to_string()).collect(),
                ..Default::default()
            })
        };
        let e = Event::decode(&body(fault(&["SJP-1"]))).unwrap();
        assert!(
            matches!(e.payload, Payload::Machine { ref machine_id, .. } if machine_id == "M-1")
        );
        let e = Event::decode(&body(fault(&["SJP-1", ""]))).unwrap_err();
        assert!(e.to_string().contains("machine_fault.pool_ids[1]"), "{e}");
        let e = Event::decode(&body(fault(&["SJP-1", "SJP-1"]))).unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
        let restored = P::MachineRestored(v1::MachineRestored {
            machine_id: "M-1".into(),
            detail: String::new(),
            pool_ids: vec!["".into()],
        });
        let e = Event::decode(&body(restored)).unwrap_err();
        assert!(
            e.to_string().contains("machine_restored.pool_ids[0]"),
            "{e}"
        );
    }

    #[test]
    fn registrations_need_a_strong_key_and_machine_details() {
        let key = SigningKey::from_bytes(&[9; 32]).verifying_key();
        let mut r = v1::DeviceRegistered {
            device_id: "slot-1".into(),
            public_key: key.as_bytes().to_vec(),
            kind: v1::DeviceKind::Machine as i32,
            casino_id: "lisboa".into(),
            model_id: "m1".into(),
            bet_values_cents: vec![10, 20],
            ..Default::default()
        };
        let e = Event::decode(&body(P::DeviceRegistered(r.clone()))).unwrap();
        match e.payload {
            Payload::DeviceRegistered(reg) => assert_eq!(reg.machine_id, "slot-1"),
            other => panic!("{other:?}"),
        }
        let mut weak = [0u8; 32];
        weak[0] = 1;
        r.public_key = weak.to_vec();
        assert_eq!(
            Event::decode(&body(P::DeviceRegistered(r.clone()))).unwrap_err(),
            BodyError::BadKey(KeyError::PublicKeyWeak)
        );
        r.public_key = key.as_bytes().to_vec();
        r.bet_values_cents.clear();
        assert!(
            Event::decode(&body(P::DeviceRegistered(r)))
                .unwrap_err()
                .to_string()
                .contains("bet_values_cents")
        );
    }

    fn machine_event(event: v1::machine_event::Event) -> P {
        P::MachineEvent(v1::MachineEvent {
            machine_id: "M-1".into(),
            source_code: "SAS:11".into(),
            detail: String::new(),
            event: Some(event),
        })
    }

    fn refusal(p: P) -> String {
        Event::decode(&body(p)).unwrap_err().to_string()
    }

    #[test]
    fn machine_events_are_checked_field_by_field() {
        use v1::machine_event::Event as K;
        let door = |door, action| machine_event(K::Door(v1::DoorEvent { door, action }));
        let e = Event::decode(&body(door(
            v1::Door::Logic as i32,
            v1::DoorAction::OpenedWhilePoweredOff as i32,
        )))
        .unwrap();
        assert_eq!(e.payload_name(), "machine_event");
        assert!(
            matches!(e.payload, Payload::Machine { ref machine_id, .. } if machine_id == "M-1")
        );
        assert_eq!(
            refusal(door(0, 1)),
            "malformed body: machine_event.door.door: missing (the door is unspecified)"
        );
        assert_eq!(
            refusal(door(1, 9)),
            "malformed body: machine_event.door.action: unknown door action 9"
        );
        assert!(
            refusal(machine_event(K::Power(v1::PowerEvent { action: 0 })))
                .contains("machine_event.power.action")
        );
        let hand_pay = |amount| {
            machine_event(K::HandPay(v1::HandPay {
                state: v1::HandPayState::Reset as i32,
                kind: v1::HandPayKind::Jackpot as i32,
                handpay_id: "hp-1".into(),
                amount_cents: amount,
            }))
        };
        assert!(Event::decode(&body(hand_pay(120_000))).is_ok());
        assert_eq!(
            refusal(hand_pay(-1)),
            "malformed body: machine_event.hand_pay.amount_cents: must be positive, got -1"
        );
        assert!(refusal(hand_pay(MAX_AMOUNT_CENTS + 1)).contains("hand_pay.amount_cents"));
        let hit = machine_event(K::ProgressiveHit(v1::ProgressiveHit {
            pool_id: String::new(),
            amount_cents: 10,
            level: 1,
        }));
        assert_eq!(
            refusal(hit),
            "malformed body: machine_event.progressive_hit.pool_id: missing"
        );
        let fault = machine_event(K::DeviceFault(v1::DeviceFault {
            device: "bill validator".into(),
            code: "jam".into(),
            ..Default::default()
        }));
        assert!(refusal(fault).contains("machine_event.device_fault.device"));
        let lost = |from_ms, to_ms| {
            machine_event(K::EventsLost(v1::EventsLost {
                reporter: v1::EventsLostReporter::Agent as i32,
                count: 3,
                from_ms,
                to_ms,
            }))
        };
        assert!(Event::decode(&body(lost(0, 0))).is_ok());
        assert!(refusal(lost(10, 5)).contains("machine_event.events_lost.to_ms"));
        assert!(refusal(lost(-1, 5)).contains("machine_event.events_lost.from_ms"));
        let auth = |sig: &str| {
            machine_event(K::SoftwareAuthenticated(v1::SoftwareAuthenticated {
                component: "game".into(),
                algorithm: "sha256".into(),
                signature: sig.into(),
                passed: true,
            }))
        };
        assert!(Event::decode(&body(auth("00ff"))).is_ok());
        assert!(refusal(auth("00FF")).contains("lowercase hex"));
        assert!(refusal(auth("0ff")).contains("odd number"));
        assert!(refusal(auth("")).contains("software_authenticated.signature: missing"));
        assert!(refusal(auth(&"a".repeat(MAX_SIGNATURE_HEX + 2))).contains("longer than"));
        let change = |changes: Vec<v1::OptionChange>| {
            machine_event(K::ConfigurationChanged(v1::ConfigurationChanged {
                changes,
                authorization_id: "CH-1".into(),
            }))
        };
        assert!(refusal(change(vec![])).contains("at least one option change"));
        let opt = |o: &str, new: &str| v1::OptionChange {
            option: o.into(),
            old_value: "1".into(),
            new_value: new.into(),
        };
        assert!(Event::decode(&body(change(vec![opt("denomination", "2")]))).is_ok());
        assert_eq!(
            refusal(change(vec![opt("a", "1"), opt("", "2")])),
            "malformed body: machine_event.configuration_changed.changes[1].option: missing"
        );
        assert!(
            refusal(change(vec![opt("a", "\u{7}")]))
                .contains("configuration_changed.changes[0].new_value")
        );
        let game = machine_event(K::GameEnded(v1::GameEnded {
            game_number: 1,
            wager_cents: 100,
            win_cents: -1,
        }));
        assert!(refusal(game).contains("machine_event.game_ended.win_cents"));
        let no_kind = P::MachineEvent(v1::MachineEvent {
            machine_id: "M-1".into(),
            ..Default::default()
        });
        assert!(refusal(no_kind).contains("machine_event.event: missing"));
        let bad_machine = P::MachineEvent(v1::MachineEvent {
            machine_id: "M 1".into(),
            event: Some(K::BatteryLow(v1::BatteryLow {})),
            ..Default::default()
        });
        assert!(refusal(bad_machine).contains("machine_event.machine_id"));
    }

    #[test]
    fn change_authorisations_and_program_approvals_are_operator_events() {
        let auth = P::MachineChangeAuthorized(v1::MachineChangeAuthorized {
            authorization_id: "CH-1".into(),
            machine_id: "M-1".into(),
            detail: "denomination 1 → 2".into(),
        });
        assert!(matches!(
            Event::decode(&body(auth)).unwrap().payload,
            Payload::Operator(_)
        ));
        let program = |sig: &str| {
            P::ProgramApproved(v1::ProgramApproved {
                model_id: "K".into(),
                component: "game".into(),
                algorithm: "sha1".into(),
                signature: sig.into(),
                approval_ref: "IGJ-1".into(),
            })
        };
        assert!(matches!(
            Event::decode(&body(program("ab12"))).unwrap().payload,
            Payload::Operator(_)
        ));
        assert!(refusal(program("xyz")).contains("program_approved.signature"));
        let no_machine = P::MachineChangeAuthorized(v1::MachineChangeAuthorized {
            authorization_id: "CH-1".into(),
            ..Default::default()
        });
        assert!(refusal(no_machine).contains("machine_change_authorized.machine_id: missing"));
    }

    #[test]
    fn time_policy() {
        let p = TimePolicy::default();
        let now = 1_700_000_000_000;
        assert!(p.check(now, now).is_ok());
        assert!(p.check(now + 5 * 60 * 1000, now).is_ok());
        assert!(
            p.check(now + 5 * 60 * 1000 + 1, now)
                .unwrap_err()
                .contains("future")
        );
        assert!(p.check(0, now).unwrap_err().contains("earliest"));
        // Seven days back by default (an agent's outage), not more; 0 = no limit.
        assert!(p.check(now - DEFAULT_MAX_PAST_MS, now).is_ok());
        assert!(
            p.check(now - DEFAULT_MAX_PAST_MS - 1, now)
                .unwrap_err()
                .contains("past")
        );
        let unlimited = TimePolicy {
            max_past_ms: 0,
            ..p
        };
        assert!(unlimited.check(now - 86_400_000 * 365, now).is_ok());
        let strict = TimePolicy {
            max_past_ms: 1000,
            ..p
        };
        assert!(strict.check(now - 1001, now).unwrap_err().contains("past"));
        // Each bound is inside the window.
        assert!(strict.check(now - 1000, now).is_ok());
        assert!(p.check(p.earliest_ms, p.earliest_ms).is_ok());
        assert!(
            p.check(p.earliest_ms - 1, p.earliest_ms)
                .unwrap_err()
                .contains("earliest")
        );
    }

    /// Times at the ends of `i64`, against any policy, are refused or accepted, never an
    /// overflow (the error message's distance included).
    #[test]
    fn time_checks_at_the_edges_of_i64() {
        let policy = |earliest_ms, max_future_ms, max_past_ms| TimePolicy {
            earliest_ms,
            max_future_ms,
            max_past_ms,
        };
        for p in [
            policy(i64::MIN, i64::MAX, i64::MAX),
            policy(i64::MIN, 0, 1),
            policy(0, 300_000, 0),
        ] {
            for t in [i64::MIN, i64::MIN + 1, -1, 0, i64::MAX - 1, i64::MAX] {
                for now in [i64::MIN, 0, 1_800_000_000_000, i64::MAX] {
                    let _ = p.check(t, now);
                }
            }
        }
        assert!(
            policy(i64::MIN, 0, 1)
                .check(i64::MIN, 1_800_000_000_000)
                .is_err()
        );
    }

    fn accepted(p: P) {
        if let Err(e) = Event::decode(&body(p.clone())) {
            panic!("{} refused: {e}", payload_name(&p));
        }
    }

    fn prize(amount_cents: i64) -> P {
        P::PrizePaid(v1::PrizePaid {
            table_id: "t1".into(),
            round_id: "r1".into(),
            bet_id: "b1".into(),
            amount_cents,
        })
    }

    fn seated_bet(seat: Option<u32>, selection: Vec<u32>) -> P {
        P::BetPlaced(v1::BetPlaced {
            table_id: "t1".into(),
            round_id: "r1".into(),
            bet_id: "b1".into(),
            bet_type: "straight".into(),
            seat,
            selection,
            amount_cents: 500,
            ..Default::default()
        })
    }

    fn voided(reason: &str) -> P {
        P::ThrowVoided(v1::ThrowVoided {
            table_id: "t1".into(),
            round_id: "r1".into(),
            reason: reason.into(),
        })
    }

    fn settled(net_cents: i64) -> P {
        P::RoundSettled(v1::RoundSettled {
            table_id: "t1".into(),
            round_id: "r1".into(),
            results: vec![v1::BetResult {
                bet_id: "b1".into(),
                net_cents,
            }],
            house_cents: None,
        })
    }

    /// Each field check takes the last value of its range and refuses the first one past it, with
    /// the field and the value named: a check replaced by `Ok(())`, or a bound moved by one, fails
    /// here.
    #[test]
    fn field_checks_take_their_bounds_and_refuse_one_past() {
        // Non-negative amounts (a prize paid): 0 and the ledger's limit, not -1 nor one past it.
        accepted(prize(0));
        accepted(prize(MAX_AMOUNT_CENTS));
        assert_eq!(
            refusal(prize(-1)),
            "malformed body: prize_paid.amount_cents: must not be negative, got -1"
        );
        assert_eq!(
            refusal(prize(MAX_AMOUNT_CENTS + 1)),
            "malformed body: prize_paid.amount_cents: 1000000000001 cents is beyond the \
             ledger's limit of ±1000000000000"
        );
        // Any amount (a net result): the limit either way.
        accepted(settled(MAX_AMOUNT_CENTS));
        accepted(settled(-MAX_AMOUNT_CENTS));
        assert!(refusal(settled(MAX_AMOUNT_CENTS + 1)).contains("results[0].net_cents"));
        assert!(refusal(settled(-MAX_AMOUNT_CENTS - 1)).contains("results[0].net_cents"));

        // Seats: 0-255, or none.
        accepted(seated_bet(None, vec![17]));
        accepted(seated_bet(Some(0), vec![17]));
        accepted(seated_bet(Some(255), vec![17]));
        assert_eq!(
            refusal(seated_bet(Some(256), vec![17])),
            "malformed body: bet_placed.seat: seat 256 out of range 0-255"
        );

        // Repeated fields: at most MAX_LIST_LEN elements.
        let full: Vec<u32> = (0..MAX_LIST_LEN as u32).map(|i| i % 256).collect();
        accepted(seated_bet(Some(1), full.clone()));
        let mut over = full;
        over.push(17);
        assert_eq!(
            refusal(seated_bet(Some(1), over)),
            "malformed body: bet_placed.selection: more than 1024 elements"
        );

        // Free text: at most MAX_TEXT_LEN bytes, printable (any script), newlines and tabs.
        accepted(voided(&"a".repeat(MAX_TEXT_LEN)));
        accepted(voided(
            "golpe nulo: a bola saltou\n\tmesa 3 — croupier Conceição",
        ));
        accepted(voided(""));
        assert_eq!(
            refusal(voided(&"a".repeat(MAX_TEXT_LEN + 1))),
            "malformed body: throw_voided.reason: longer than 4096 bytes"
        );
        // "é" is two bytes: one past the limit in bytes, though fewer characters.
        let accented = format!("{}é", "a".repeat(MAX_TEXT_LEN - 1));
        assert!(refusal(voided(&accented)).contains("longer than 4096 bytes"));
        for control in [
            "\u{7}",
            "\r",
            "\u{0}",
            "\u{1b}[2J",
            "\u{7f}",
            "\u{85}",
            "ok\u{9b}",
        ] {
            assert_eq!(
                refusal(voided(control)),
                "malformed body: throw_voided.reason: control characters not allowed",
                "{control:?}"
            );
        }

        // Basis points: at most 100%.
        let model = |theoretical_rtp_bp| {
            P::MachineModelApproved(v1::MachineModelApproved {
                model_id: "K".into(),
                theoretical_rtp_bp,
                bet_values_cents: vec![100],
                approval_ref: "IGJ-1".into(),
            })
        };
        accepted(model(10_000));
        assert_eq!(
            refusal(model(10_001)),
            "malformed body: machine_model_approved.theoretical_rtp_bp: 10001 basis points is \
             more than 100%"
        );

        // Identifiers: 1 to MAX_ID_LEN printable ASCII bytes, no spaces.
        let with_bet_id = |bet_id: &str| prize_for(bet_id, 1);
        accepted(with_bet_id(&"b".repeat(MAX_ID_LEN)));
        assert_eq!(
            refusal(with_bet_id(&"b".repeat(MAX_ID_LEN + 1))),
            "malformed body: prize_paid.bet_id: longer than 128 bytes"
        );
        assert_eq!(
            refusal(with_bet_id("b 1")),
            "malformed body: prize_paid.bet_id: character ' ' not allowed in an identifier"
        );
        assert_eq!(
            refusal(with_bet_id("")),
            "malformed body: prize_paid.bet_id: missing"
        );
    }

    fn table_config(f: impl FnOnce(&mut v1::TableConfigured)) -> P {
        let mut m = v1::TableConfigured {
            table_id: "t1".into(),
            casino_id: "lisboa".into(),
            game: "roulette_french".into(),
            ..Default::default()
        };
        f(&mut m);
        P::TableConfigured(m)
    }

    fn dice(dice: Vec<u32>, chosen_from: Option<u32>) -> P {
        P::DiceThrown(v1::DiceThrown {
            table_id: "t1".into(),
            round_id: "r1".into(),
            dice,
            chosen_from,
        })
    }

    /// The checks particular to one payload, each at its bounds (the last value taken, the first
    /// refused) and each naming its field.
    #[test]
    fn payload_checks_take_their_bounds_and_refuse_one_past() {
        use std::collections::HashMap;
        use v1::setting_value::Value;
        // Table limits: min = max is a table; min above max is not.
        accepted(table_config(|m| {
            m.min_bet_cents = Some(500);
            m.max_bet_cents = Some(500);
        }));
        assert_eq!(
            refusal(table_config(|m| {
                m.min_bet_cents = Some(501);
                m.max_bet_cents = Some(500);
            })),
            "malformed body: table_configured.min_bet_cents: 501 is above max_bet_cents 500"
        );
        // A jackpot is checked when it names a pool, and only then.
        let jackpot = |pool_id: &str| v1::TableJackpot {
            pool_id: pool_id.into(),
            bet_amount_cents: 0,
            ..Default::default()
        };
        accepted(table_config(|m| m.jackpot = Some(jackpot(""))));
        assert_eq!(
            refusal(table_config(|m| m.jackpot = Some(jackpot("J1")))),
            "malformed body: table_configured.jackpot.bet_amount_cents: must be positive, got 0"
        );
        // Settings: at most MAX_LIST_LEN of them, their texts and lists checked.
        let settings = |n: usize| -> HashMap<String, v1::SettingValue> {
            (0..n)
                .map(|i| {
                    let v = Value::Int(i as i64);
                    (format!("s{i}"), v1::SettingValue { value: Some(v) })
                })
                .collect()
        };
        accepted(table_config(|m| m.settings = settings(MAX_LIST_LEN)));
        assert_eq!(
            refusal(table_config(|m| m.settings = settings(MAX_LIST_LEN + 1))),
            "malformed body: table_configured.settings: too many settings"
        );
        let one =
            |v: Value| HashMap::from([("k".to_string(), v1::SettingValue { value: Some(v) })]);
        assert!(
            refusal(table_config(
                |m| m.settings = one(Value::Text("a\u{7}".into()))
            ))
            .contains("table_configured.settings[k]: control characters")
        );
        let values = |n: usize| v1::IntList { values: vec![1; n] };
        accepted(table_config(|m| {
            m.settings = one(Value::List(values(MAX_LIST_LEN)))
        }));
        assert!(
            refusal(table_config(
                |m| m.settings = one(Value::List(values(MAX_LIST_LEN + 1)))
            ))
            .contains("table_configured.settings[k]: more than 1024 elements")
        );

        // Bets: selections 0-255, at most MAX_LIST_LEN attributes, an optional player id.
        let bet_with = |f: &dyn Fn(&mut v1::BetPlaced)| {
            let P::BetPlaced(mut m) = seated_bet(None, vec![17]) else {
                unreachable!()
            };
            f(&mut m);
            P::BetPlaced(m)
        };
        accepted(bet_with(&|m| m.selection = vec![0, 255]));
        assert_eq!(
            refusal(bet_with(&|m| m.selection = vec![0, 256])),
            "malformed body: bet_placed.selection: 256 out of range 0-255"
        );
        let attrs = |n: usize| -> HashMap<String, String> {
            (0..n).map(|i| (format!("a{i}"), "x".to_string())).collect()
        };
        accepted(bet_with(&|m| m.attrs = attrs(MAX_LIST_LEN)));
        assert_eq!(
            refusal(bet_with(&|m| m.attrs = attrs(MAX_LIST_LEN + 1))),
            "malformed body: bet_placed.attrs: too many attributes"
        );
        accepted(bet_with(&|m| m.player_id = "p-7".into()));
        assert_eq!(
            refusal(bet_with(&|m| m.player_id = "p 7".into())),
            "malformed body: bet_placed.player_id: character ' ' not allowed in an identifier"
        );
        assert_eq!(
            refusal(bet_with(&|m| m.round_id = String::new())),
            "malformed body: bet_placed.round_id: missing"
        );

        // Dice: one to five, faces 1-6, chosen from at most 255.
        accepted(dice(vec![1], None));
        accepted(dice(vec![1, 2, 3, 4, 6], Some(255)));
        for (d, why) in [
            (
                vec![],
                "malformed body: dice_thrown.dice: 0 dice; expected 1 to 5",
            ),
            (
                vec![1; 6],
                "malformed body: dice_thrown.dice: 6 dice; expected 1 to 5",
            ),
            (
                vec![3, 0],
                "malformed body: dice_thrown.dice: face 0 is not 1-6",
            ),
            (
                vec![7],
                "malformed body: dice_thrown.dice: face 7 is not 1-6",
            ),
        ] {
            assert_eq!(refusal(dice(d, None)), why);
        }
        assert_eq!(
            refusal(dice(vec![1, 1, 1], Some(256))),
            "malformed body: dice_thrown.chosen_from: 256 out of range"
        );

        // Roulette: pockets 0-36, known directions.
        let launched = |from_pocket, ball_direction| {
            P::BallLaunched(v1::BallLaunched {
                table_id: "t1".into(),
                round_id: "r1".into(),
                ball_direction,
                wheel_direction: v1::Direction::Clockwise as i32,
                from_pocket,
                ball_id: String::new(),
            })
        };
        let cw = v1::Direction::Clockwise as i32;
        accepted(launched(Some(36), cw));
        assert_eq!(
            refusal(launched(Some(37), cw)),
            "malformed body: ball_launched.from_pocket: pocket 37 is not 0-36"
        );
        assert_eq!(
            refusal(launched(None, 99)),
            "malformed body: ball_launched.ball_direction: unknown direction 99"
        );
        let landed = |pocket| {
            P::BallLanded(v1::BallLanded {
                table_id: "t1".into(),
                round_id: "r1".into(),
                pocket,
            })
        };
        accepted(landed(36));
        assert_eq!(
            refusal(landed(37)),
            "malformed body: ball_landed.pocket: pocket 37 is not 0-36"
        );

        // A player's hand number: 0-255.
        let decision = |hand| {
            P::PlayerDecision(v1::PlayerDecision {
                table_id: "t1".into(),
                round_id: "r1".into(),
                hand,
                action: "hit".into(),
                ..Default::default()
            })
        };
        accepted(decision(255));
        assert_eq!(
            refusal(decision(256)),
            "malformed body: player_decision.hand: hand 256 out of range"
        );

        // Meters: a value below its rollover (0: none).
        let reading = |value, rollover| {
            P::MeterReading(v1::MeterReading {
                machine_id: "M-1".into(),
                meters: vec![v1::Meter {
                    name: "coin_in".into(),
                    value,
                    rollover,
                }],
            })
        };
        accepted(reading(999, 1000));
        accepted(reading(u64::MAX, 0));
        assert_eq!(
            refusal(reading(1000, 1000)),
            "malformed body: meter_reading.meters[0].value: 1000 is not below the meter's \
             rollover 1000"
        );

        // Pools: a known kind.
        let pool = |kind| {
            P::PoolConfigured(v1::PoolConfigured {
                pool_id: "J1".into(),
                kind,
                casino_ids: vec!["lisboa".into()],
                contribution_bp: 100,
                ..Default::default()
            })
        };
        accepted(pool(v1::PoolKind::Jackpot as i32));
        for kind in [0, 99] {
            assert_eq!(
                refusal(pool(kind)),
                format!(
                    "malformed body: pool_configured.kind: pool kind {kind} is not a known kind"
                )
            );
        }

        // Program signatures: up to MAX_SIGNATURE_HEX digits.
        let program = |sig: String| {
            P::ProgramApproved(v1::ProgramApproved {
                model_id: "K".into(),
                component: "game".into(),
                signature: sig,
                ..Default::default()
            })
        };
        accepted(program("ab".repeat(MAX_SIGNATURE_HEX / 2)));
        assert!(refusal(program("ab".repeat(MAX_SIGNATURE_HEX / 2 + 1))).contains("longer than"));

        // Lost events: times not negative; when both are known (not 0), from before to.
        let lost = |from_ms, to_ms| {
            machine_event(v1::machine_event::Event::EventsLost(v1::EventsLost {
                reporter: v1::EventsLostReporter::Agent as i32,
                count: 3,
                from_ms,
                to_ms,
            }))
        };
        accepted(lost(0, 5));
        accepted(lost(10, 0));
        accepted(lost(5, 5));
        assert_eq!(
            refusal(lost(6, 5)),
            "malformed body: machine_event.events_lost.to_ms: 5 is before from_ms 6"
        );
        assert_eq!(
            refusal(lost(0, -1)),
            "malformed body: machine_event.events_lost.to_ms: must not be negative, got -1"
        );

        // Jackpot transfers, in a payload and alone (`Jackpots.ValidateTransfer`).
        let transfer = |amount_cents| v1::JackpotTransfer {
            transfer_id: "X1".into(),
            from_pool_id: "J1".into(),
            to_pool_id: "J2".into(),
            amount_cents,
            ..Default::default()
        };
        accepted(P::JackpotTransfer(transfer(1)));
        assert_eq!(check_jackpot_transfer(&transfer(1)), Ok(()));
        assert_eq!(
            refusal(P::JackpotTransfer(transfer(0))),
            "malformed body: jackpot_transfer.amount_cents: must be positive, got 0"
        );
        assert_eq!(
            check_jackpot_transfer(&transfer(0))
                .unwrap_err()
                .to_string(),
            "malformed body: amount_cents: must be positive, got 0"
        );
    }

    /// Every way of naming a field names it.
    #[test]
    fn field_names() {
        assert_eq!("seat".field_name(), "seat");
        assert_eq!(String::from("seat").field_name(), "seat");
        assert_eq!((&&String::from("seat")).field_name(), "seat");
        assert_eq!(Of("bet_placed", "seat").field_name(), "bet_placed.seat");
        assert_eq!(
            Nth("round_settled", "results", 3, ".bet_id").field_name(),
            "round_settled.results[3].bet_id"
        );
        assert_eq!(
            id(String::from("limits key"), "").unwrap_err().to_string(),
            "malformed body: limits key: missing"
        );
    }

    fn prize_for(bet_id: &str, amount_cents: i64) -> P {
        P::PrizePaid(v1::PrizePaid {
            table_id: "t1".into(),
            round_id: "r1".into(),
            bet_id: bet_id.into(),
            amount_cents,
        })
    }

    proptest! {
        /// No input bytes make decoding panic.
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = Event::decode(&bytes);
        }

        /// Any stake in range round-trips; any out of range is refused with the field named.
        #[test]
        fn stakes(amount in any::<i64>()) {
            let r = Event::decode(&body(bet(amount)));
            if amount > 0 && amount <= MAX_AMOUNT_CENTS {
                prop_assert!(r.is_ok());
            } else {
                prop_assert!(r.unwrap_err().to_string().contains("amount_cents"));
            }
        }

        /// A non-negative amount is taken exactly when it is 0 to the ledger's limit.
        #[test]
        fn non_negative_amounts(amount in prop_oneof![
            any::<i64>(),
            -2i64..=2,
            (MAX_AMOUNT_CENTS - 2)..=(MAX_AMOUNT_CENTS + 2),
        ]) {
            let r = Event::decode(&body(prize(amount)));
            prop_assert_eq!(r.is_ok(), (0..=MAX_AMOUNT_CENTS).contains(&amount), "{}", amount);
        }

        /// A seat is taken exactly when it is 0-255.
        #[test]
        fn seats(seat in prop_oneof![any::<u32>(), 250u32..=260]) {
            let r = Event::decode(&body(seated_bet(Some(seat), vec![1])));
            prop_assert_eq!(r.is_ok(), seat <= 255, "{}", seat);
        }

        /// Free text is taken exactly when it fits and its only control characters are newlines
        /// and tabs: the check against an oracle written on characters alone.
        #[test]
        fn free_text(text in prop_oneof![
            any::<String>(),
            "[ -~\\n\\t]{0,40}",
            "[a-zà-ÿ \\n\\t\\x00-\\x1f\\x7f-\\u{9f}]{0,40}",
        ]) {
            let oracle = text.len() <= MAX_TEXT_LEN
                && text.chars().all(|c| !c.is_control() || c == '\n' || c == '\t');
            let r = Event::decode(&body(voided(&text)));
            prop_assert_eq!(r.is_ok(), oracle, "{:?}", text);
        }
    }
}
