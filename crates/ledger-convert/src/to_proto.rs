//! Domain → proto: what a table system or a machine's reporting agent signs for what happened.

use jackpot::Event as J;
use ledger_proto::v1::{self, event_body::Payload as P};
use rules_core::{Award, Direction, EventKind, RoundEvent, Setting, Settlement, TableConfig};

fn direction(d: Option<Direction>) -> i32 {
    match d {
        Some(Direction::Clockwise) => v1::Direction::Clockwise as i32,
        Some(Direction::Counterclockwise) => v1::Direction::Counterclockwise as i32,
        None => v1::Direction::Unspecified as i32,
    }
}

fn id(v: &Option<rules_core::Id>) -> String {
    v.as_deref().unwrap_or_default().to_string()
}

/// A table configuration, as the table system declares it.
pub fn table_configured(table_id: &str, casino_id: &str, t: &TableConfig) -> P {
    P::TableConfigured(v1::TableConfigured {
        table_id: table_id.to_string(),
        casino_id: casino_id.to_string(),
        game: t.game.as_str().to_string(),
        regulation: t.regulation.clone().unwrap_or_default(),
        min_bet_cents: t.min_bet_cents,
        max_bet_cents: t.max_bet_cents,
        limits: t
            .limits
            .iter()
            .map(|l| v1::ChanceLimit {
                chance: l.chance.clone(),
                min_cents: l.min_cents,
                max_cents: l.max_cents,
            })
            .collect(),
        commission: t.commission.clone().unwrap_or_default(),
        decks: t.decks.map(u32::from),
        seats: t.seats.map(u32::from),
        jackpot: t.jackpot.as_ref().map(|j| v1::TableJackpot {
            pool_id: j.pool_id.clone().unwrap_or_default(),
            bet_amount_cents: j.bet_amount_cents,
            increment_bp: j.increment_bp,
            start_value_cents: j.start_value_cents,
            paytable: j
                .paytable
                .iter()
                .map(|p| v1::JackpotPrize {
                    combination: p.combination.clone(),
                    award: Some(match p.award {
                        Award::Whole => v1::jackpot_prize::Award::Whole(true),
                        Award::Percent { bp } => v1::jackpot_prize::Award::PercentBp(bp),
                        Award::Multiple { times } => v1::jackpot_prize::Award::Multiple(times),
                    }),
                })
                .collect(),
            collection: j.collection.clone().unwrap_or_default(),
        }),
        settings: t
            .settings
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    Setting::Bool(b) => v1::setting_value::Value::Flag(*b),
                    Setting::Int(i) => v1::setting_value::Value::Int(*i),
                    Setting::Text(s) => v1::setting_value::Value::Text(s.clone()),
                    Setting::List(l) => {
                        v1::setting_value::Value::List(v1::IntList { values: l.clone() })
                    }
                };
                (k.clone(), v1::SettingValue { value: Some(value) })
            })
            .collect(),
    })
}

pub fn round_opened(table_id: &str, round_id: &str) -> P {
    P::RoundOpened(v1::RoundOpened {
        table_id: table_id.to_string(),
        round_id: round_id.to_string(),
    })
}

/// One event of a round.
pub fn round_event(table_id: &str, round_id: &str, e: &RoundEvent) -> P {
    let t = table_id.to_string();
    let r = round_id.to_string();
    match &e.kind {
        EventKind::Bet(b) => P::BetPlaced(v1::BetPlaced {
            table_id: t,
            round_id: r,
            bet_id: b.id.to_string(),
            bet_type: b.bet_type.clone(),
            seat: b.seat.map(u32::from),
            player_id: id(&b.player),
            selection: b.selection.iter().map(|&s| u32::from(s)).collect(),
            amount_cents: b.amount_cents,
            chips: b.chips,
            on_bet_id: id(&b.on_bet),
            attrs: b.attrs.clone().into_iter().collect(),
        }),
        EventKind::BetChanged {
            bet_id,
            amount_cents,
        } => P::BetChanged(v1::BetChanged {
            table_id: t,
            round_id: r,
            bet_id: bet_id.to_string(),
            amount_cents: *amount_cents,
        }),
        EventKind::BetWithdrawn { bet_id } => P::BetWithdrawn(v1::BetWithdrawn {
            table_id: t,
            round_id: r,
            bet_id: bet_id.to_string(),
        }),
        EventKind::NoMoreBets => P::BetsClosed(v1::BetsClosed {
            table_id: t,
            round_id: r,
        }),
        EventKind::Card { to, card, face_up } => P::CardDealt(v1::CardDealt {
            table_id: t,
            round_id: r,
            recipient: to.to_string(),
            card: card.to_string(),
            face_up: *face_up,
        }),
        EventKind::Dice { dice, chosen_from } => P::DiceThrown(v1::DiceThrown {
            table_id: t,
            round_id: r,
            dice: dice.iter().map(|&d| u32::from(d)).collect(),
            chosen_from: chosen_from.map(u32::from),
        }),
        EventKind::Ball { pocket } => P::BallLanded(v1::BallLanded {
            table_id: t,
            round_id: r,
            pocket: u32::from(*pocket),
        }),
        EventKind::Launch {
            ball_direction,
            wheel_direction,
            from_pocket,
            ball_id,
        } => P::BallLaunched(v1::BallLaunched {
            table_id: t,
            round_id: r,
            ball_direction: direction(*ball_direction),
            wheel_direction: direction(*wheel_direction),
            from_pocket: from_pocket.map(u32::from),
            ball_id: ball_id.clone().unwrap_or_default(),
        }),
        EventKind::Decision(d) => P::PlayerDecision(v1::PlayerDecision {
            table_id: t,
            round_id: r,
            seat: d.seat.map(u32::from),
            hand: u32::from(d.hand),
            player_id: id(&d.player),
            action: d.action.clone(),
            amount_cents: d.amount_cents,
            bet_id: id(&d.bet_id),
        }),
        EventKind::Role { role, seat, player } => P::RoleAssigned(v1::RoleAssigned {
            table_id: t,
            round_id: r,
            role: role.clone(),
            seat: seat.map(u32::from),
            player_id: id(player),
        }),
        EventKind::Procedure {
            name,
            value,
            seat,
            amount_cents,
        } => P::TableProcedure(v1::TableProcedure {
            table_id: t,
            round_id: r,
            name: name.clone(),
            value: value.clone().unwrap_or_default(),
            seat: seat.map(u32::from),
            amount_cents: *amount_cents,
        }),
        EventKind::Fault { code, seat, detail } => P::FaultDeclared(v1::FaultDeclared {
            table_id: t,
            round_id: r,
            code: code.clone(),
            seat: seat.map(u32::from),
            detail: detail.clone().unwrap_or_default(),
        }),
        EventKind::Void { reason } => P::ThrowVoided(v1::ThrowVoided {
            table_id: t,
            round_id: r,
            reason: reason.clone(),
        }),
        EventKind::Collect { bet_ids } => P::BetsCollected(v1::BetsCollected {
            table_id: t,
            round_id: r,
            bet_ids: bet_ids.iter().map(|b| b.to_string()).collect(),
        }),
        EventKind::Pay {
            bet_id,
            amount_cents,
        } => P::PrizePaid(v1::PrizePaid {
            table_id: t,
            round_id: r,
            bet_id: bet_id.to_string(),
            amount_cents: *amount_cents,
        }),
        EventKind::JackpotDisplay { value_cents } => P::JackpotDisplayed(v1::JackpotDisplayed {
            table_id: t,
            round_id: r,
            value_cents: *value_cents,
        }),
    }
}

/// The settlement the casino reports (a void round is a `RoundVoided` with `void_reason`).
pub fn round_settled(table_id: &str, round_id: &str, s: &Settlement, void_reason: &str) -> P {
    if s.void && s.results.is_empty() {
        return P::RoundVoided(v1::RoundVoided {
            table_id: table_id.to_string(),
            round_id: round_id.to_string(),
            reason: void_reason.to_string(),
        });
    }
    P::RoundSettled(v1::RoundSettled {
        table_id: table_id.to_string(),
        round_id: round_id.to_string(),
        results: s
            .results
            .iter()
            .map(|r| v1::BetResult {
                bet_id: r.bet_id.to_string(),
                net_cents: r.net_cents,
            })
            .collect(),
        house_cents: s.house_cents,
    })
}

fn meters(ms: &[jackpot::Meter]) -> Vec<v1::Meter> {
    ms.iter()
        .map(|m| v1::Meter {
            name: m.name.clone(),
            value: m.value,
            rollover: m.rollover,
        })
        .collect()
}

/// A slot, pool or inspectorate event. Machine registrations are the operator's
/// `DeviceRegistered` (with the machine's key), table jackpot rounds are computed, not signed:
/// both give `None`.
pub fn jackpot_event(e: &J) -> Option<P> {
    Some(match e {
        J::MachineRegistered(_) | J::TableJackpotRound(_) => return None,
        J::ModelApproved(m) => P::MachineModelApproved(v1::MachineModelApproved {
            model_id: m.model_id.to_string(),
            theoretical_rtp_bp: m.theoretical_rtp_bp,
            bet_values_cents: m.bet_values_cents.clone(),
            approval_ref: m.approval_ref.clone(),
        }),
        J::PoolConfigured(p) => P::PoolConfigured(v1::PoolConfigured {
            pool_id: p.pool_id.to_string(),
            kind: match p.kind {
                jackpot::PoolKind::Jackpot => v1::PoolKind::Jackpot,
                jackpot::PoolKind::Superjackpot => v1::PoolKind::Superjackpot,
                jackpot::PoolKind::TableJackpot => v1::PoolKind::TableJackpot,
            } as i32,
            casino_ids: p.casino_ids.iter().map(|c| c.to_string()).collect(),
            member_machine_ids: p.member_machine_ids.iter().map(|c| c.to_string()).collect(),
            member_table_ids: p.member_table_ids.iter().map(|c| c.to_string()).collect(),
            contribution_bp: p.contribution_bp,
            start_value_cents: p.start_value_cents,
            reset_value_cents: p.reset_value_cents,
        }),
        J::MeterReading(m) => P::MeterReading(v1::MeterReading {
            machine_id: m.machine_id.to_string(),
            meters: meters(&m.meters),
        }),
        J::GamePlayed(g) => P::GamePlayed(v1::GamePlayed {
            machine_id: g.machine_id.to_string(),
            game_number: g.game_number,
            wager_cents: g.wager_cents,
            win_cents: g.win_cents,
        }),
        J::JackpotContribution(c) => P::JackpotContribution(v1::JackpotContribution {
            pool_id: c.pool_id.to_string(),
            machine_id: c.machine_id.to_string(),
            amount_cents: c.amount_cents,
        }),
        J::CaptiveValueReported(c) => P::CaptiveValueReported(v1::CaptiveValueReported {
            pool_id: c.pool_id.to_string(),
            value_cents: c.value_cents,
        }),
        J::JackpotAwarded(a) => P::JackpotAwarded(v1::JackpotAwarded {
            pool_id: a.pool_id.to_string(),
            machine_id: a.machine_id.to_string(),
            amount_cents: a.amount_cents,
            winner: a.winner.clone(),
            game_number: a.game_number,
        }),
        J::MachineFault(f) => P::MachineFault(v1::MachineFault {
            machine_id: f.machine_id.to_string(),
            code: f.code.clone(),
            out_of_service: f.out_of_service,
            force_majeure: f.force_majeure,
            detail: f.detail.clone(),
            pool_ids: f.pool_ids.iter().map(|p| p.to_string()).collect(),
        }),
        J::MachineRestored(m) => P::MachineRestored(v1::MachineRestored {
            machine_id: m.machine_id.to_string(),
            detail: m.detail.clone(),
            pool_ids: m.pool_ids.iter().map(|p| p.to_string()).collect(),
        }),
        J::RamClear(c) => P::RamClear(v1::RamClear {
            machine_id: c.machine_id.to_string(),
            before: meters(&c.before),
            after: meters(&c.after),
        }),
        J::MachineEvent(e) => P::MachineEvent(machine_event(e)),
        J::ChangeAuthorized(a) => P::MachineChangeAuthorized(v1::MachineChangeAuthorized {
            authorization_id: a.authorization_id.to_string(),
            machine_id: a.machine_id.to_string(),
            detail: a.detail.clone(),
        }),
        J::ProgramApproved(p) => P::ProgramApproved(v1::ProgramApproved {
            model_id: p.model_id.to_string(),
            component: p.component.clone(),
            algorithm: p.algorithm.clone(),
            signature: p.signature.clone(),
            approval_ref: p.approval_ref.clone(),
        }),
        J::JackpotTransfer(t) => P::JackpotTransfer(v1::JackpotTransfer {
            transfer_id: t.transfer_id.to_string(),
            from_pool_id: t.from_pool_id.to_string(),
            to_pool_id: t.to_pool_id.to_string(),
            amount_cents: t.amount_cents,
            reason: t.reason.clone(),
            authorization_id: id(&t.authorization_id),
        }),
        J::TransferAuthorized(a) => P::TransferAuthorized(v1::TransferAuthorized {
            authorization_id: a.authorization_id.to_string(),
            from_pool_id: a.from_pool_id.to_string(),
            to_pool_id: a.to_pool_id.to_string(),
            reference: a.reference.clone(),
        }),
    })
}

/// A machine's significant event.
pub fn machine_event(e: &jackpot::MachineEvent) -> v1::MachineEvent {
    use jackpot::Significant as S;
    use v1::machine_event::Event as K;
    let event = match &e.event {
        S::Door { door, action } => K::Door(v1::DoorEvent {
            door: match door {
                jackpot::Door::Main => v1::Door::Main,
                jackpot::Door::Logic => v1::Door::Logic,
                jackpot::Door::CashBox => v1::Door::CashBox,
                jackpot::Door::Drop => v1::Door::Drop,
                jackpot::Door::Belly => v1::Door::Belly,
                jackpot::Door::Stacker => v1::Door::Stacker,
                jackpot::Door::TopBox => v1::Door::TopBox,
            } as i32,
            action: match action {
                jackpot::DoorAction::Opened => v1::DoorAction::Opened,
                jackpot::DoorAction::Closed => v1::DoorAction::Closed,
                jackpot::DoorAction::OpenedWhilePoweredOff => v1::DoorAction::OpenedWhilePoweredOff,
            } as i32,
        }),
        S::Power { on } => K::Power(v1::PowerEvent {
            action: if *on {
                v1::PowerAction::On
            } else {
                v1::PowerAction::Off
            } as i32,
        }),
        S::MemoryError => K::MemoryError(v1::MemoryError {}),
        S::BatteryLow => K::BatteryLow(v1::BatteryLow {}),
        S::HandPay {
            state,
            pay_kind,
            handpay_id,
            amount_cents,
        } => K::HandPay(v1::HandPay {
            state: match state {
                jackpot::HandPayState::Pending => v1::HandPayState::Pending,
                jackpot::HandPayState::Reset => v1::HandPayState::Reset,
            } as i32,
            kind: match pay_kind {
                jackpot::HandPayKind::CancelledCredits => v1::HandPayKind::CancelledCredits,
                jackpot::HandPayKind::Jackpot => v1::HandPayKind::Jackpot,
                jackpot::HandPayKind::Progressive => v1::HandPayKind::Progressive,
            } as i32,
            handpay_id: handpay_id.clone(),
            amount_cents: *amount_cents,
        }),
        S::ProgressiveHit {
            pool_id,
            amount_cents,
            level,
        } => K::ProgressiveHit(v1::ProgressiveHit {
            pool_id: pool_id.to_string(),
            amount_cents: *amount_cents,
            level: *level,
        }),
        S::ProgressiveReset { pool_id } => K::ProgressiveReset(v1::ProgressiveReset {
            pool_id: pool_id.to_string(),
        }),
        S::DeviceFault {
            device,
            code,
            cleared,
            disables_play,
        } => K::DeviceFault(v1::DeviceFault {
            device: device.clone(),
            code: code.clone(),
            cleared: *cleared,
            disables_play: *disables_play,
        }),
        S::Link { up } => K::Link(v1::LinkEvent {
            action: if *up {
                v1::LinkAction::Up
            } else {
                v1::LinkAction::Down
            } as i32,
        }),
        S::EventsLost {
            reporter,
            count,
            from_ms,
            to_ms,
        } => K::EventsLost(v1::EventsLost {
            reporter: match reporter {
                jackpot::LostReporter::Machine => v1::EventsLostReporter::Machine,
                jackpot::LostReporter::Agent => v1::EventsLostReporter::Agent,
            } as i32,
            count: *count,
            from_ms: *from_ms,
            to_ms: *to_ms,
        }),
        S::SoftwareAuthenticated {
            component,
            algorithm,
            signature,
            passed,
        } => K::SoftwareAuthenticated(v1::SoftwareAuthenticated {
            component: component.clone(),
            algorithm: algorithm.clone(),
            signature: signature.clone(),
            passed: *passed,
        }),
        S::ConfigurationChanged {
            changes,
            authorization_id,
        } => K::ConfigurationChanged(v1::ConfigurationChanged {
            changes: changes
                .iter()
                .map(|o| v1::OptionChange {
                    option: o.option.clone(),
                    old_value: o.old_value.clone(),
                    new_value: o.new_value.clone(),
                })
                .collect(),
            authorization_id: id(authorization_id),
        }),
        S::GameStarted {
            game_number,
            wager_cents,
        } => K::GameStarted(v1::GameStarted {
            game_number: *game_number,
            wager_cents: *wager_cents,
        }),
        S::GameEnded {
            game_number,
            wager_cents,
            win_cents,
        } => K::GameEnded(v1::GameEnded {
            game_number: *game_number,
            wager_cents: *wager_cents,
            win_cents: *win_cents,
        }),
    };
    v1::MachineEvent {
        machine_id: e.machine_id.to_string(),
        source_code: e.source_code.clone(),
        detail: e.detail.clone(),
        event: Some(event),
    }
}
