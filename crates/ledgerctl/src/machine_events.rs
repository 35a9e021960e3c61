//! `ledgerctl jackpot events MACHINE`: a machine's significant events over a period, read a page
//! at a time from the live audit (Jackpots.GetMachineEvents), and what they leave standing.

use anyhow::{Context, bail};
use jackpot::{
    DoorAction, EventState, EventsReport, HandPayKind, HandPayState, LoggedEvent, LostReporter,
    Significant,
};
use ledger_core::proto::{self as v1, jackpots_client::JackpotsClient};

use crate::common::{self, ServerArg};
use crate::present::{Align, eur, status_error, table, time};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Kinds (--kind, repeatable): door, power, memory_error, battery_low, hand_pay, progressive_hit,
progressive_reset, device_fault, link, events_lost, software_authenticated,
configuration_changed, game_started, game_ended. `--kind game_ended --last 10` is the last-games
recall. The state shown (doors open, power, faults, link, pending hand pays, progressive hits
not yet reset) is the machine's now, whatever the period. The findings these events raise are
listed by `ledgerctl findings --code SLOT_...`.

Examples:
  ledgerctl jackpot events M-LX-01
  ledgerctl jackpot events M-LX-01 --from 2026-11-01 --to 2026-11-02 --kind door --kind power
  ledgerctl jackpot events M-LX-01 --kind game_ended --last 10 --json")]
pub struct EventsArgs {
    /// The machine id.
    #[arg(value_name = "MACHINE")]
    pub machine_id: String,
    /// Start of the period (RFC 3339 or a date, ledger time); default: everything.
    #[arg(long, value_name = "TIME", requires = "to")]
    pub from: Option<String>,
    /// End of the period, exclusive.
    #[arg(long, value_name = "TIME", requires = "from")]
    pub to: Option<String>,
    /// Only events of this kind (repeatable).
    #[arg(long = "kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Only the last N events of the period (0: all).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub last: usize,
    #[command(flatten)]
    pub server: ServerArg,
}

pub async fn run(a: EventsArgs, json: bool) -> anyhow::Result<i32> {
    if let Some(k) = a
        .kinds
        .iter()
        .find(|k| !jackpot::EVENT_KINDS.contains(&k.as_str()))
    {
        bail!(
            "--kind {k}: not a kind of event (one of {})",
            jackpot::EVENT_KINDS.join(", ")
        );
    }
    let (from_ms, to_ms) = crate::findings::parse_period(&a.from, &a.to)?;
    let mut client = JackpotsClient::new(common::channel(&a.server.server).await?)
        .max_decoding_message_size(256 << 20);
    // Every page, oldest first (only the last N kept).
    let mut report: Option<EventsReport> = None;
    let mut after = None;
    loop {
        let doc = client
            .get_machine_events(v1::MachineEventsRequest {
                machine_id: a.machine_id.clone(),
                from_ms,
                to_ms,
                kinds: a.kinds.clone(),
                after_index: after,
                limit: 0,
            })
            .await
            .map_err(|s| status_error(&format!("reading machine {}'s events", a.machine_id), s))?
            .into_inner();
        let page: EventsReport = serde_json::from_str(&doc.json)
            .context("the ledger's significant-events report does not decode")?;
        after = page.next_after;
        match &mut report {
            None => report = Some(page),
            Some(r) => {
                r.events.extend(page.events);
                r.status = page.status;
            }
        }
        if let Some(r) = &mut report
            && a.last > 0
            && r.events.len() > a.last
        {
            let cut = r.events.len() - a.last;
            r.events.drain(..cut);
        }
        if after.is_none() {
            break;
        }
    }
    let Some(mut report) = report else {
        bail!("the ledger sent no report");
    };
    report.next_after = None;
    report.counts.clear();
    for e in &report.events {
        *report
            .counts
            .entry(e.event.event.name().to_string())
            .or_default() += 1;
    }
    if json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(0);
    }
    print_report(&report, from_ms.zip(to_ms));
    Ok(0)
}

fn print_report(r: &EventsReport, period: Option<(i64, i64)>) {
    let when = match period {
        Some((f, t)) => format!("{} to {} (exclusive)", time(f), time(t)),
        None => "all time".to_string(),
    };
    println!(
        "Machine {} (casino {}, model {}): significant events, {when}",
        r.machine_id, r.casino_id, r.model_id
    );
    match &r.status {
        None => println!("  the machine has reported no significant event"),
        Some(s) => println!("  now: {}", standing(s)),
    }
    if r.events.is_empty() {
        println!("  no event in the period");
        return;
    }
    let rows: Vec<Vec<String>> = r.events.iter().map(row).collect();
    for l in table(
        &[
            ("entry", Align::Right),
            ("time", Align::Left),
            ("kind", Align::Left),
            ("what", Align::Left),
            ("source", Align::Left),
        ],
        &rows,
    )
    .lines()
    {
        println!("  {l}");
    }
    let counts: Vec<String> = r.counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!("  {} event(s): {}", r.events.len(), counts.join(", "));
}

fn standing(s: &EventState) -> String {
    let mut parts = Vec::new();
    if let Some(i) = s.powered_off {
        parts.push(format!("powered off since entry {i}"));
    }
    for (d, i) in &s.doors_open {
        parts.push(format!("{} door open since entry {i}", d.name()));
    }
    for (k, f) in &s.faults {
        let how = if f.disables_play {
            "disabling play"
        } else {
            ""
        };
        parts.push(
            format!("fault {k} since entry {} {how}", f.since)
                .trim()
                .to_string(),
        );
    }
    if let Some(i) = s.link_down {
        parts.push(format!("link down since entry {i}"));
    }
    if let Some(i) = s.battery_low {
        parts.push(format!("battery low (entry {i})"));
    }
    if s.handpays_pending > 0 {
        parts.push(format!("{} hand pay(s) pending", s.handpays_pending));
    }
    for (p, h) in &s.hits {
        let state = if h.awarded {
            "awarded, not reset"
        } else {
            "not awarded"
        };
        parts.push(format!(
            "hit of {p} for {} at entry {} ({state})",
            eur(h.amount_cents),
            h.at
        ));
    }
    if parts.is_empty() {
        "in service (doors closed, powered, no fault)".to_string()
    } else {
        parts.join("; ")
    }
}

fn row(e: &LoggedEvent) -> Vec<String> {
    let what = match &e.event.event {
        Significant::Door { door: d, action } => match action {
            DoorAction::Opened => format!("{} door opened", d.name()),
            DoorAction::Closed => format!("{} door closed", d.name()),
            DoorAction::OpenedWhilePoweredOff => {
                format!("{} door was opened while powered off", d.name())
            }
        },
        Significant::Power { on: true } => "power on".into(),
        Significant::Power { on: false } => "power off".into(),
        Significant::MemoryError => "critical memory error".into(),
        Significant::BatteryLow => "low battery".into(),
        Significant::HandPay {
            state,
            pay_kind,
            handpay_id,
            amount_cents,
        } => {
            let what = match pay_kind {
                HandPayKind::CancelledCredits => "cancelled credits",
                HandPayKind::Jackpot => "jackpot",
                HandPayKind::Progressive => "progressive",
            };
            let state = match state {
                HandPayState::Pending => "pending",
                HandPayState::Reset => "paid and reset",
            };
            let id = if handpay_id.is_empty() {
                String::new()
            } else {
                format!(" ({handpay_id})")
            };
            format!("hand pay {state}: {} {what}{id}", eur(*amount_cents))
        }
        Significant::ProgressiveHit {
            pool_id,
            amount_cents,
            level,
        } => format!(
            "progressive hit: {pool_id} level {level}, {}",
            eur(*amount_cents)
        ),
        Significant::ProgressiveReset { pool_id } => format!("progressive reset: {pool_id}"),
        Significant::DeviceFault {
            device,
            code,
            cleared,
            disables_play,
        } => {
            if *cleared {
                format!("{device} fault {code} cleared")
            } else if *disables_play {
                format!("{device} fault {code} (play disabled)")
            } else {
                format!("{device} fault {code}")
            }
        }
        Significant::Link { up: true } => "link to the agent up".into(),
        Significant::Link { up: false } => "link to the agent down".into(),
        Significant::EventsLost {
            reporter, count, ..
        } => {
            let who = match reporter {
                LostReporter::Machine => "the machine",
                LostReporter::Agent => "the agent",
            };
            if *count == 0 {
                format!("EVENTS LOST by {who} (how many unknown)")
            } else {
                format!("EVENTS LOST by {who}: {count}")
            }
        }
        Significant::SoftwareAuthenticated {
            component,
            algorithm,
            signature,
            passed,
        } => format!(
            "software {component} {algorithm} {signature}: {}",
            if *passed { "passed" } else { "FAILED" }
        ),
        Significant::ConfigurationChanged {
            changes,
            authorization_id,
        } => {
            let list: Vec<String> = changes
                .iter()
                .map(|c| format!("{} {} → {}", c.option, c.old_value, c.new_value))
                .collect();
            format!(
                "configuration: {} (authorisation {})",
                list.join(", "),
                authorization_id.as_deref().unwrap_or("none")
            )
        }
        Significant::GameStarted {
            game_number,
            wager_cents,
        } => format!("game {game_number} started: bet {}", eur(*wager_cents)),
        Significant::GameEnded {
            game_number,
            wager_cents,
            win_cents,
        } => format!(
            "game {game_number} ended: bet {}, won {}",
            eur(*wager_cents),
            eur(*win_cents)
        ),
    };
    vec![
        e.index.to_string(),
        time(e.at_ms),
        e.event.event.name().to_string(),
        what,
        e.event.source_code.clone(),
    ]
}
