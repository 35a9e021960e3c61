//! The one place where the ledger's signed proto payloads become the audit's and the jackpot
//! book's domain inputs (the reverse direction, domain to proto, is `ledger-agent`'s session
//! module). Every entry converts: a payload the audit does not use becomes a tick (time passes).

use std::collections::BTreeMap;

use audit::{AuditInput, EntryMeta};
use ledger_core::event::{DeviceKind, Event, Payload};
use ledger_core::record::{RecordKind, decode_ledger_record};
use ledger_proto::v1::{self, event_body::Payload as P};
use rules_core::{
    Award, Bet, Card, ChanceLimit, Decision, Direction, EventKind, GameId, JackpotConfig,
    JackpotPrize, Recipient, ReportedNet, RoundEvent, Setting, Settlement, TableConfig,
};

/// What one chain entry means to the audit and to the jackpot accounts.
#[derive(Clone, Debug, PartialEq)]
pub enum Routed {
    /// A table-game input (and time passes for the jackpot accounts).
    Audit(AuditInput),
    /// A slot, pool or inspectorate event (and time passes for the table audit).
    Jackpot(jackpot::Event),
    /// Nothing to do but let time pass (registrations of tables, revocations, genesis, ...).
    Tick,
}

/// A chain entry the audit cannot read. Ingest checked every entry, so this means the stored
/// bytes are not what ingest accepted: the audit reports it and `ledgerctl verify` explains it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entry {index}: {reason}")]
pub struct ConvertError {
    pub index: u64,
    pub reason: String,
}

/// Read one chain entry.
pub fn route(entry: &v1::ChainEntry) -> Result<(EntryMeta, Routed), ConvertError> {
    route_parts(entry.index, entry.received_at_ms, entry.kind, &entry.body)
}

/// Read one chain entry given by its fields: index, the ledger's receipt time, its record kind
/// and its signed body (what a reader that does not decode the whole entry has).
pub fn route_parts(
    index: u64,
    received_at_ms: i64,
    kind: i32,
    body: &[u8],
) -> Result<(EntryMeta, Routed), ConvertError> {
    let err = |reason: String| ConvertError { index, reason };
    let meta = |signer: String| EntryMeta {
        index,
        received_at_ms,
        signer,
    };
    match RecordKind::from_proto(kind) {
        Some(RecordKind::Event) => {
            let event = Event::decode(body).map_err(|e| err(e.to_string()))?;
            let occurred_at_ms = event.occurred_at.timestamp_millis();
            let routed = route_event(event.payload, occurred_at_ms);
            Ok((meta(event.device_id), routed))
        }
        Some(RecordKind::Ledger) => {
            let record = decode_ledger_record(body).map_err(err)?;
            let routed = match record.record {
                Some(v1::ledger_record_body::Record::SecurityFinding(f)) => {
                    Routed::Audit(AuditInput::Security {
                        code: format!("SECURITY_{}", f.code.to_ascii_uppercase()),
                        device_id: f.device_id.clone(),
                        message: format!(
                            "device {} signed two different events with sequence {} (the first is entry {}): {}",
                            f.device_id, f.sequence, f.original_index, f.detail
                        ),
                        evidence: vec![f.original_index],
                    })
                }
                _ => Routed::Tick,
            };
            Ok((meta("ledger".to_string()), routed))
        }
        None => Err(err(format!("unknown record kind {kind}"))),
    }
}

/// [`route_parts`], with an event's own time (`occurred_at_ms`, its signer's clock) read from
/// the same decoding of its body: what a reader that also checks devices' clocks needs (the
/// audit's replay), for one decoding instead of two. The time is `None` for a ledger record,
/// and for an event whose body does not decode as an `EventBody` (the routing's error then
/// says why, as [`route_parts`] does).
pub fn route_parts_timed(
    index: u64,
    received_at_ms: i64,
    kind: i32,
    body: &[u8],
) -> (Option<i64>, Result<(EntryMeta, Routed), ConvertError>) {
    use prost::Message;
    if RecordKind::from_proto(kind) != Some(RecordKind::Event) {
        return (None, route_parts(index, received_at_ms, kind, body));
    }
    let Ok(b) = v1::EventBody::decode(body) else {
        return (None, route_parts(index, received_at_ms, kind, body));
    };
    let occurred = b.occurred_at_ms;
    let routed = Event::from_proto(b)
        .map_err(|e| ConvertError {
            index,
            reason: e.to_string(),
        })
        .map(|event| {
            let occurred_at_ms = event.occurred_at.timestamp_millis();
            let routed = route_event(event.payload, occurred_at_ms);
            (
                EntryMeta {
                    index,
                    received_at_ms,
                    signer: event.device_id,
                },
                routed,
            )
        });
    (Some(occurred), routed)
}

fn route_event(payload: Payload, at_ms: i64) -> Routed {
    match payload {
        Payload::DeviceRegistered(r) if r.kind == DeviceKind::Machine => {
            let machine_id = if r.machine_id.is_empty() {
                r.device_id.clone()
            } else {
                r.machine_id.clone()
            };
            Routed::Jackpot(jackpot::Event::MachineRegistered(
                jackpot::MachineRegistered {
                    machine_id: machine_id.into(),
                    casino_id: r.casino_id.into(),
                    model_id: r.model_id.into(),
                    bet_values_cents: r.bet_values_cents,
                },
            ))
        }
        Payload::DeviceRegistered(_)
        | Payload::DeviceRevoked { .. }
        | Payload::DeviceKeyRotated { .. } => Routed::Tick,
        Payload::Table { table_id, event } => table(table_id, event, at_ms),
        Payload::Machine { event, .. } | Payload::Operator(event) | Payload::Regulator(event) => {
            machine(event).map_or(Routed::Tick, Routed::Jackpot)
        }
    }
}

fn ev(table_id: String, round_id: String, at_ms: i64, kind: EventKind) -> Routed {
    Routed::Audit(AuditInput::RoundEvent {
        table_id,
        round_id,
        event: RoundEvent::at(at_ms, kind),
    })
}

fn opt_id(s: String) -> Option<rules_core::Id> {
    if s.is_empty() { None } else { Some(s.into()) }
}

fn opt_text(s: String) -> Option<String> {
    if s.is_empty() { None } else { Some(s) }
}

fn seat(s: Option<u32>) -> Option<u8> {
    s.and_then(|v| u8::try_from(v).ok())
}

fn direction(d: i32) -> Option<Direction> {
    match v1::Direction::try_from(d).ok()? {
        v1::Direction::Clockwise => Some(Direction::Clockwise),
        v1::Direction::Counterclockwise => Some(Direction::Counterclockwise),
        v1::Direction::Unspecified => None,
    }
}

/// A table payload. Ingest has checked identifiers, amounts, cards and recipients, so the
/// conversions below cannot fail on a stored entry; anything that still does not fit becomes a
/// fault event the engine will refuse by name, never a silent drop.
fn table(table_id: String, p: P, at_ms: i64) -> Routed {
    match p {
        P::TableConfigured(m) => match m.game.parse::<GameId>() {
            Ok(game) => Routed::Audit(AuditInput::TableConfigured {
                table_id: m.table_id.clone(),
                config: table_config(game, m),
            }),
            Err(_) => Routed::Audit(AuditInput::UnknownGame {
                table_id: m.table_id,
                casino_id: m.casino_id,
                game: m.game,
            }),
        },
        P::RoundOpened(m) => Routed::Audit(AuditInput::RoundOpened {
            table_id: m.table_id,
            round_id: m.round_id,
        }),
        P::BetPlaced(m) => {
            let bet = Bet {
                id: m.bet_id.into(),
                bet_type: m.bet_type,
                seat: seat(m.seat),
                player: opt_id(m.player_id),
                selection: m
                    .selection
                    .iter()
                    .map(|&s| u8::try_from(s).unwrap_or(u8::MAX))
                    .collect(),
                amount_cents: m.amount_cents,
                chips: m.chips,
                on_bet: opt_id(m.on_bet_id),
                attrs: m.attrs.into_iter().collect::<BTreeMap<_, _>>(),
            };
            ev(m.table_id, m.round_id, at_ms, EventKind::Bet(bet))
        }
        P::BetChanged(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::BetChanged {
                bet_id: m.bet_id.into(),
                amount_cents: m.amount_cents,
            },
        ),
        P::BetWithdrawn(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::BetWithdrawn {
                bet_id: m.bet_id.into(),
            },
        ),
        P::BetsClosed(m) => ev(m.table_id, m.round_id, at_ms, EventKind::NoMoreBets),
        P::CardDealt(m) => {
            let kind = match (m.recipient.parse::<Recipient>(), m.card.parse::<Card>()) {
                (Ok(to), Ok(card)) => EventKind::Card {
                    to,
                    card,
                    face_up: m.face_up,
                },
                _ => unreadable("card_dealt", &format!("{} to {}", m.card, m.recipient)),
            };
            ev(m.table_id, m.round_id, at_ms, kind)
        }
        P::DiceThrown(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Dice {
                dice: m
                    .dice
                    .iter()
                    .map(|&d| u8::try_from(d).unwrap_or(u8::MAX))
                    .collect(),
                chosen_from: m.chosen_from.and_then(|v| u8::try_from(v).ok()),
            },
        ),
        P::BallLaunched(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Launch {
                ball_direction: direction(m.ball_direction),
                wheel_direction: direction(m.wheel_direction),
                from_pocket: m.from_pocket.and_then(|v| u8::try_from(v).ok()),
                ball_id: opt_text(m.ball_id),
            },
        ),
        P::BallLanded(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Ball {
                pocket: u8::try_from(m.pocket).unwrap_or(u8::MAX),
            },
        ),
        P::PlayerDecision(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Decision(Decision {
                seat: seat(m.seat),
                hand: u8::try_from(m.hand.max(1)).unwrap_or(u8::MAX),
                player: opt_id(m.player_id),
                action: m.action,
                amount_cents: m.amount_cents,
                bet_id: opt_id(m.bet_id),
            }),
        ),
        P::RoleAssigned(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Role {
                role: m.role,
                seat: seat(m.seat),
                player: opt_id(m.player_id),
            },
        ),
        P::TableProcedure(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Procedure {
                name: m.name,
                value: opt_text(m.value),
                seat: seat(m.seat),
                amount_cents: m.amount_cents,
            },
        ),
        P::FaultDeclared(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Fault {
                code: m.code,
                seat: seat(m.seat),
                detail: opt_text(m.detail),
            },
        ),
        P::ThrowVoided(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Void { reason: m.reason },
        ),
        P::BetsCollected(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Collect {
                bet_ids: m.bet_ids.into_iter().map(Into::into).collect(),
            },
        ),
        P::PrizePaid(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::Pay {
                bet_id: m.bet_id.into(),
                amount_cents: m.amount_cents,
            },
        ),
        P::JackpotDisplayed(m) => ev(
            m.table_id,
            m.round_id,
            at_ms,
            EventKind::JackpotDisplay {
                value_cents: m.value_cents,
            },
        ),
        P::RoundSettled(m) => Routed::Audit(AuditInput::RoundSettled {
            table_id: m.table_id,
            round_id: m.round_id,
            settlement: Settlement {
                void: false,
                results: m
                    .results
                    .into_iter()
                    .map(|r| ReportedNet {
                        bet_id: r.bet_id.into(),
                        net_cents: r.net_cents,
                    })
                    .collect(),
                house_cents: m.house_cents,
            },
        }),
        P::RoundVoided(m) => Routed::Audit(AuditInput::RoundVoided {
            table_id: m.table_id,
            round_id: m.round_id,
            reason: m.reason,
        }),
        // Ingest only classifies table payloads as table events.
        _ => {
            let _ = table_id;
            Routed::Tick
        }
    }
}

/// An event the engines will refuse by name (unknown fault code), keeping the record complete.
fn unreadable(what: &str, detail: &str) -> EventKind {
    EventKind::Fault {
        code: format!("unreadable_{what}"),
        seat: None,
        detail: Some(detail.chars().take(200).collect()),
    }
}

/// The proto table configuration as the engines' [`TableConfig`].
pub fn table_config(game: GameId, m: v1::TableConfigured) -> TableConfig {
    let mut settings = BTreeMap::new();
    for (k, v) in m.settings {
        let value = match v.value {
            Some(v1::setting_value::Value::Flag(b)) => Setting::Bool(b),
            Some(v1::setting_value::Value::Int(i)) => Setting::Int(i),
            Some(v1::setting_value::Value::Text(t)) => Setting::Text(t),
            Some(v1::setting_value::Value::List(l)) => Setting::List(l.values),
            None => continue,
        };
        settings.insert(k, value);
    }
    let jackpot = m
        .jackpot
        .filter(|j| !j.pool_id.is_empty())
        .map(|j| JackpotConfig {
            pool_id: Some(j.pool_id),
            bet_amount_cents: j.bet_amount_cents,
            increment_bp: j.increment_bp,
            start_value_cents: j.start_value_cents,
            paytable: j
                .paytable
                .into_iter()
                .filter_map(|p| {
                    let award = match p.award? {
                        v1::jackpot_prize::Award::Whole(_) => Award::Whole,
                        v1::jackpot_prize::Award::PercentBp(bp) => Award::Percent { bp },
                        v1::jackpot_prize::Award::Multiple(times) => Award::Multiple { times },
                    };
                    Some(JackpotPrize {
                        combination: p.combination,
                        award,
                    })
                })
                .collect(),
            collection: opt_text(j.collection),
        });
    TableConfig {
        game,
        table_id: Some(m.table_id),
        casino_id: Some(m.casino_id),
        regulation: opt_text(m.regulation),
        min_bet_cents: m.min_bet_cents,
        max_bet_cents: m.max_bet_cents,
        limits: m
            .limits
            .into_iter()
            .map(|l| ChanceLimit {
                chance: l.chance,
                min_cents: l.min_cents,
                max_cents: l.max_cents,
            })
            .collect(),
        commission: opt_text(m.commission),
        decks: m.decks.and_then(|d| u8::try_from(d).ok()),
        seats: m.seats.and_then(|d| u8::try_from(d).ok()),
        jackpot,
        settings,
    }
}

fn meters(ms: Vec<v1::Meter>) -> Vec<jackpot::Meter> {
    ms.into_iter()
        .map(|m| jackpot::Meter {
            name: m.name,
            value: m.value,
            rollover: m.rollover,
        })
        .collect()
}

/// A slot, pool or inspectorate payload as a jackpot book event.
fn machine(p: P) -> Option<jackpot::Event> {
    use jackpot::Event as E;
    Some(match p {
        P::MeterReading(m) => E::MeterReading(jackpot::MeterReading {
            machine_id: m.machine_id.into(),
            meters: meters(m.meters),
        }),
        P::GamePlayed(m) => E::GamePlayed(jackpot::GamePlayed {
            machine_id: m.machine_id.into(),
            game_number: m.game_number,
            wager_cents: m.wager_cents,
            win_cents: m.win_cents,
        }),
        P::JackpotContribution(m) => E::JackpotContribution(jackpot::JackpotContribution {
            pool_id: m.pool_id.into(),
            machine_id: m.machine_id.into(),
            amount_cents: m.amount_cents,
        }),
        P::CaptiveValueReported(m) => E::CaptiveValueReported(jackpot::CaptiveValueReported {
            pool_id: m.pool_id.into(),
            value_cents: m.value_cents,
        }),
        P::JackpotAwarded(m) => E::JackpotAwarded(jackpot::JackpotAwarded {
            pool_id: m.pool_id.into(),
            machine_id: m.machine_id.into(),
            amount_cents: m.amount_cents,
            winner: m.winner,
            game_number: m.game_number,
        }),
        P::MachineFault(m) => E::MachineFault(jackpot::MachineFault {
            machine_id: m.machine_id.into(),
            code: m.code,
            out_of_service: m.out_of_service,
            force_majeure: m.force_majeure,
            detail: m.detail,
            pool_ids: m.pool_ids.into_iter().map(Into::into).collect(),
        }),
        P::MachineRestored(m) => E::MachineRestored(jackpot::MachineRestored {
            machine_id: m.machine_id.into(),
            detail: m.detail,
            pool_ids: m.pool_ids.into_iter().map(Into::into).collect(),
        }),
        P::RamClear(m) => E::RamClear(jackpot::RamClear {
            machine_id: m.machine_id.into(),
            before: meters(m.before),
            after: meters(m.after),
        }),
        P::MachineEvent(m) => E::MachineEvent(machine_event(m)?),
        P::MachineChangeAuthorized(m) => E::ChangeAuthorized(jackpot::ChangeAuthorized {
            authorization_id: m.authorization_id.into(),
            machine_id: m.machine_id.into(),
            detail: m.detail,
        }),
        P::ProgramApproved(m) => E::ProgramApproved(jackpot::ProgramApproved {
            model_id: m.model_id.into(),
            component: m.component,
            algorithm: m.algorithm,
            signature: m.signature,
            approval_ref: m.approval_ref,
        }),
        P::MachineModelApproved(m) => E::ModelApproved(jackpot::ModelApproved {
            model_id: m.model_id.into(),
            theoretical_rtp_bp: m.theoretical_rtp_bp,
            bet_values_cents: m.bet_values_cents,
            approval_ref: m.approval_ref,
        }),
        P::PoolConfigured(m) => {
            let kind = match v1::PoolKind::try_from(m.kind).ok()? {
                v1::PoolKind::Jackpot => jackpot::PoolKind::Jackpot,
                v1::PoolKind::Superjackpot => jackpot::PoolKind::Superjackpot,
                v1::PoolKind::TableJackpot => jackpot::PoolKind::TableJackpot,
                v1::PoolKind::Unspecified => return None,
            };
            E::PoolConfigured(jackpot::PoolConfigured {
                pool_id: m.pool_id.into(),
                kind,
                casino_ids: m.casino_ids.into_iter().map(Into::into).collect(),
                member_machine_ids: m.member_machine_ids.into_iter().map(Into::into).collect(),
                member_table_ids: m.member_table_ids.into_iter().map(Into::into).collect(),
                contribution_bp: m.contribution_bp,
                start_value_cents: m.start_value_cents,
                reset_value_cents: m.reset_value_cents,
            })
        }
        P::JackpotTransfer(m) => E::JackpotTransfer(jackpot::JackpotTransfer {
            transfer_id: m.transfer_id.into(),
            from_pool_id: m.from_pool_id.into(),
            to_pool_id: m.to_pool_id.into(),
            amount_cents: m.amount_cents,
            reason: m.reason,
            authorization_id: opt_id(m.authorization_id),
        }),
        P::TransferAuthorized(m) => E::TransferAuthorized(jackpot::TransferAuthorized {
            authorization_id: m.authorization_id.into(),
            from_pool_id: m.from_pool_id.into(),
            to_pool_id: m.to_pool_id.into(),
            reference: m.reference,
        }),
        _ => return None,
    })
}

/// A significant event (`None` for an unspecified enum, which ingest refuses).
fn machine_event(m: v1::MachineEvent) -> Option<jackpot::MachineEvent> {
    use jackpot::Significant as S;
    use v1::machine_event::Event as K;
    let event = match m.event? {
        K::Door(d) => S::Door {
            door: match v1::Door::try_from(d.door).ok()? {
                v1::Door::Unspecified => return None,
                v1::Door::Main => jackpot::Door::Main,
                v1::Door::Logic => jackpot::Door::Logic,
                v1::Door::CashBox => jackpot::Door::CashBox,
                v1::Door::Drop => jackpot::Door::Drop,
                v1::Door::Belly => jackpot::Door::Belly,
                v1::Door::Stacker => jackpot::Door::Stacker,
                v1::Door::TopBox => jackpot::Door::TopBox,
            },
            action: match v1::DoorAction::try_from(d.action).ok()? {
                v1::DoorAction::Unspecified => return None,
                v1::DoorAction::Opened => jackpot::DoorAction::Opened,
                v1::DoorAction::Closed => jackpot::DoorAction::Closed,
                v1::DoorAction::OpenedWhilePoweredOff => jackpot::DoorAction::OpenedWhilePoweredOff,
            },
        },
        K::Power(p) => S::Power {
            on: match v1::PowerAction::try_from(p.action).ok()? {
                v1::PowerAction::Unspecified => return None,
                v1::PowerAction::Off => false,
                v1::PowerAction::On => true,
            },
        },
        K::MemoryError(_) => S::MemoryError,
        K::BatteryLow(_) => S::BatteryLow,
        K::HandPay(h) => S::HandPay {
            state: match v1::HandPayState::try_from(h.state).ok()? {
                v1::HandPayState::Unspecified => return None,
                v1::HandPayState::Pending => jackpot::HandPayState::Pending,
                v1::HandPayState::Reset => jackpot::HandPayState::Reset,
            },
            pay_kind: match v1::HandPayKind::try_from(h.kind).ok()? {
                v1::HandPayKind::Unspecified => return None,
                v1::HandPayKind::CancelledCredits => jackpot::HandPayKind::CancelledCredits,
                v1::HandPayKind::Jackpot => jackpot::HandPayKind::Jackpot,
                v1::HandPayKind::Progressive => jackpot::HandPayKind::Progressive,
            },
            handpay_id: h.handpay_id,
            amount_cents: h.amount_cents,
        },
        K::ProgressiveHit(h) => S::ProgressiveHit {
            pool_id: h.pool_id.into(),
            amount_cents: h.amount_cents,
            level: h.level,
        },
        K::ProgressiveReset(r) => S::ProgressiveReset {
            pool_id: r.pool_id.into(),
        },
        K::DeviceFault(f) => S::DeviceFault {
            device: f.device,
            code: f.code,
            cleared: f.cleared,
            disables_play: f.disables_play,
        },
        K::Link(l) => S::Link {
            up: match v1::LinkAction::try_from(l.action).ok()? {
                v1::LinkAction::Unspecified => return None,
                v1::LinkAction::Down => false,
                v1::LinkAction::Up => true,
            },
        },
        K::EventsLost(l) => S::EventsLost {
            reporter: match v1::EventsLostReporter::try_from(l.reporter).ok()? {
                v1::EventsLostReporter::Unspecified => return None,
                v1::EventsLostReporter::Machine => jackpot::LostReporter::Machine,
                v1::EventsLostReporter::Agent => jackpot::LostReporter::Agent,
            },
            count: l.count,
            from_ms: l.from_ms,
            to_ms: l.to_ms,
        },
        K::SoftwareAuthenticated(a) => S::SoftwareAuthenticated {
            component: a.component,
            algorithm: a.algorithm,
            signature: a.signature,
            passed: a.passed,
        },
        K::ConfigurationChanged(c) => S::ConfigurationChanged {
            changes: c
                .changes
                .into_iter()
                .map(|o| jackpot::OptionChange {
                    option: o.option,
                    old_value: o.old_value,
                    new_value: o.new_value,
                })
                .collect(),
            authorization_id: opt_id(c.authorization_id),
        },
        K::GameStarted(g) => S::GameStarted {
            game_number: g.game_number,
            wager_cents: g.wager_cents,
        },
        K::GameEnded(g) => S::GameEnded {
            game_number: g.game_number,
            wager_cents: g.wager_cents,
            win_cents: g.win_cents,
        },
    };
    Some(jackpot::MachineEvent {
        machine_id: m.machine_id.into(),
        source_code: m.source_code,
        detail: m.detail,
        event,
    })
}
