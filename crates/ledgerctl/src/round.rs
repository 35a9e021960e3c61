//! `ledgerctl round`: one settled round as the live audit sees it (Audit.GetRound): where it sits
//! in the chain, what every bet was due and what the casino reported, its findings, and with
//! `--explain` the rules applied one by one. What a compliance officer opens on a disputed hand.

use anyhow::Context;
use audit::RoundSummary;
use ledger_core::proto as v1;
use rules_core::{Adjudication, Outcome};

use crate::common::{self, ServerArg};
use crate::present::{Align, eur, eur_signed, status_error, table, time};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
The round is rebuilt from its chain entries (the table configuration in force, the opening, every
event, the settlement) and adjudicated again by the game's rule engine from the table state it
was played from, so the due results are the rules' own, not a stored copy. A round appears once
it is settled or voided and the live audit has reached it (`ledgerctl audit --wait`).

Money is in euros; a bet's net is +prize (stake returned besides), -stake, or 0.

Examples:
  ledgerctl round T03-roulette-french-00002
  ledgerctl round 17 --table T07-blackjack --explain
  ledgerctl round T03-roulette-french-00002 --entries --json")]
pub struct Args {
    /// The round id, as the table reported it.
    #[arg(value_name = "ROUND_ID")]
    pub round_id: String,
    /// The table; needed only when the round id exists at several tables.
    #[arg(long, value_name = "TABLE")]
    pub table: Option<String>,
    /// Add the rule-by-rule explanation of every result.
    #[arg(long)]
    pub explain: bool,
    /// Also list the round's chain entries (index, time, signer, event).
    #[arg(long)]
    pub entries: bool,
    #[command(flatten)]
    pub server: ServerArg,
}

/// What GetRound answered, decoded.
pub struct Round {
    pub summary: RoundSummary,
    pub adjudication: Adjudication,
    pub explanation: String,
    pub findings: Vec<v1::Finding>,
    pub entries: Vec<v1::ChainEntry>,
}

/// Ask the live audit for a round.
pub async fn fetch(
    server: &str,
    table: Option<&str>,
    round_id: &str,
    explain: bool,
) -> anyhow::Result<Round> {
    let channel = common::channel(server).await?;
    let detail = v1::audit_client::AuditClient::new(channel)
        .max_decoding_message_size(64 << 20)
        .get_round(v1::GetRoundRequest {
            table_id: table.unwrap_or_default().to_string(),
            round_id: round_id.to_string(),
            explain,
        })
        .await
        .map_err(|s| match s.code() {
            tonic::Code::NotFound => anyhow::anyhow!(
                "ROUND_ID `{round_id}`{}: {} (open rounds are not shown; `ledgerctl audit` says \
                 whether the audit has caught up)",
                table
                    .map(|t| format!(" at table `{t}`"))
                    .unwrap_or_default(),
                s.message()
            ),
            tonic::Code::InvalidArgument => anyhow::anyhow!("{} (use --table)", s.message()),
            _ => status_error(&format!("round {round_id}"), s),
        })?
        .into_inner();
    let summary: RoundSummary =
        serde_json::from_str(&detail.summary_json).context("the round summary does not decode")?;
    let adjudication: Adjudication = serde_json::from_str(&detail.adjudication_json)
        .context("the round's adjudication does not decode")?;
    Ok(Round {
        summary,
        adjudication,
        explanation: detail.explanation,
        findings: detail.findings,
        entries: detail.entries,
    })
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let r = fetch(&a.server.server, a.table.as_deref(), &a.round_id, a.explain).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&to_json(&r, a.entries))?);
    } else {
        print!("{}", render(&r, a.entries));
    }
    Ok(0)
}

fn outcome(o: Outcome) -> &'static str {
    match o {
        Outcome::Won => "won",
        Outcome::Lost => "lost",
        Outcome::Push => "push",
        Outcome::Void => "void",
        Outcome::Withdrawn => "withdrawn",
        Outcome::Open => "still open",
        Outcome::Forfeited => "forfeited",
    }
}

/// The round as JSON: the summary (without the engine's internal table state), the
/// adjudication, the explanation, the findings and optionally the entries.
pub fn to_json(r: &Round, with_entries: bool) -> serde_json::Value {
    let mut summary = serde_json::to_value(&r.summary).unwrap_or_default();
    if let Some(o) = summary.as_object_mut() {
        o.remove("state_before");
        o.insert("due_win_cents".into(), r.summary.due_win_cents().into());
        o.insert(
            "reported_win_cents".into(),
            r.summary.reported_win_cents().into(),
        );
    }
    let mut v = serde_json::json!({
        "summary": summary,
        "adjudication": r.adjudication,
        "findings": r.findings.iter().map(crate::findings::finding_json).collect::<Vec<_>>(),
    });
    if !r.explanation.is_empty() {
        v["explanation"] = r.explanation.clone().into();
    }
    if with_entries {
        v["entries"] = r.entries.iter().map(common::entry_json).collect();
    }
    v
}

/// When and by whom an entry's event was recorded at the table (the device's clock), beside the
/// ledger's receive time.
fn source_time(e: Option<&v1::ChainEntry>) -> String {
    use prost::Message;
    match e
        .filter(|e| e.kind == v1::RecordKind::Event as i32)
        .and_then(|e| v1::EventBody::decode(e.body.as_slice()).ok())
    {
        Some(b) => format!(
            "  (by {} at {} on its clock)",
            b.device_id,
            time(b.occurred_at_ms)
        ),
        None => String::new(),
    }
}

/// The round for a human. Times are the ledger's receive times (UTC), with the table's own.
pub fn render(r: &Round, with_entries: bool) -> String {
    use std::fmt::Write;
    let s = &r.summary;
    let adj = &r.adjudication;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Round {} at table {} ({}), casino {}",
        s.round_id,
        s.table_id,
        s.game,
        s.casino_id.as_deref().unwrap_or("(not configured)")
    );
    let _ = writeln!(
        out,
        "  opened          {}  entry {}{}",
        time(s.opened_ms),
        s.opened_index,
        source_time(r.entries.get(1))
    );
    let _ = writeln!(
        out,
        "  closed          {}  entry {}  {}{}",
        time(s.closed_ms),
        s.closed_index,
        if s.void { "declared void" } else { "settled" },
        source_time(r.entries.last())
    );
    let _ = writeln!(
        out,
        "  configuration   entry {} (the table configuration in force when it opened)",
        s.config_index
    );
    let events = match (s.event_indexes.first(), s.event_indexes.last()) {
        (Some(a), Some(b)) if a != b => format!("{} entries, {a} to {b}", s.event_indexes.len()),
        (Some(a), _) => format!("1 entry, {a}"),
        _ => "none".to_string(),
    };
    let _ = writeln!(out, "  events          {events}");
    if let Some(v) = &adj.void {
        let _ = writeln!(out, "  VOID            {}  [{}]", v.reason, v.citation);
    }
    let _ = writeln!(
        out,
        "  bets            {}, handle {}",
        s.bets,
        eur(s.handle_cents)
    );
    if let Some(j) = s.jackpot_before_cents {
        let _ = writeln!(
            out,
            "  jackpot         {} before the round{}",
            eur(j),
            s.jackpot_pool_id
                .as_deref()
                .map(|p| format!(" (pool {p})"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(out);
    let diff = |due: i64, rep: i64| {
        if due == rep {
            "same".to_string()
        } else {
            format!("DIFFERS by {}", eur_signed(rep.saturating_sub(due)))
        }
    };
    let money = vec![
        vec![
            "players' net".to_string(),
            eur_signed(s.due_player_net_cents),
            eur_signed(s.reported_player_net_cents),
            diff(s.due_player_net_cents, s.reported_player_net_cents),
        ],
        vec![
            "house take".to_string(),
            eur(s.house_due_cents),
            eur(s.house_reported_cents),
            diff(s.house_due_cents, s.house_reported_cents),
        ],
        vec![
            "casino win".to_string(),
            eur_signed(s.due_win_cents()),
            eur_signed(s.reported_win_cents()),
            diff(s.due_win_cents(), s.reported_win_cents()),
        ],
    ];
    for l in table(
        &[
            ("totals", Align::Left),
            ("due", Align::Right),
            ("reported", Align::Right),
            ("", Align::Left),
        ],
        &money,
    )
    .lines()
    {
        let _ = writeln!(out, "  {l}");
    }
    if s.discrepancies > 0 {
        let _ = writeln!(
            out,
            "  discrepancies: {} bet(s), {} in all",
            s.discrepancies,
            eur(s.discrepancy_abs_cents)
        );
    }

    let _ = writeln!(out, "\nBets (players' nets):");
    if adj.bets.is_empty() {
        let _ = writeln!(out, "  (no bet)");
    } else {
        let rows: Vec<Vec<String>> = adj
            .bets
            .iter()
            .map(|b| {
                let reported = b.reported_net_cents;
                vec![
                    b.bet_id.to_string(),
                    b.seat.map(|x| x.to_string()).unwrap_or_else(|| "-".into()),
                    eur(b.stake_cents),
                    outcome(b.outcome).to_string(),
                    eur_signed(b.due_net_cents),
                    reported.map(eur_signed).unwrap_or_else(|| "-".into()),
                    match reported {
                        Some(x) if x != b.due_net_cents => format!(
                            "DIFFERS by {}",
                            eur_signed(x.saturating_sub(b.due_net_cents))
                        ),
                        None if b.due_net_cents != 0 => "NOT REPORTED".to_string(),
                        _ => String::new(),
                    },
                ]
            })
            .collect();
        for l in table(
            &[
                ("bet", Align::Left),
                ("seat", Align::Right),
                ("stake", Align::Right),
                ("outcome", Align::Left),
                ("due", Align::Right),
                ("reported", Align::Right),
                ("", Align::Left),
            ],
            &rows,
        )
        .lines()
        {
            let _ = writeln!(out, "  {l}");
        }
    }
    for w in &adj.jackpot_wins {
        let _ = writeln!(
            out,
            "  jackpot: bet {} wins {} with {}  [{}]",
            w.bet_id,
            eur(w.prize_cents),
            w.combination,
            w.citation
        );
    }
    for h in &adj.house {
        let _ = writeln!(
            out,
            "  house take due: {} ({})  [{}]",
            eur(h.amount_cents),
            h.kind,
            h.citation
        );
    }

    let _ = writeln!(out, "\nFindings ({}):", r.findings.len());
    if r.findings.is_empty() {
        let _ = writeln!(out, "  none: the round was played and settled by the rules");
    }
    for f in &r.findings {
        for l in crate::findings::proto_line(f).lines() {
            let _ = writeln!(out, "  {l}");
        }
    }

    if !r.explanation.is_empty() {
        let _ = writeln!(out, "\nRule by rule:");
        for l in r.explanation.lines() {
            if l.is_empty() {
                let _ = writeln!(out);
            } else {
                let _ = writeln!(out, "  {l}");
            }
        }
    }
    if with_entries {
        let _ = writeln!(out, "\nChain entries ({}):", r.entries.len());
        for e in &r.entries {
            let _ = writeln!(out, "  {}", common::entry_line(e));
        }
    }
    out
}
