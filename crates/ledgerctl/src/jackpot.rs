//! `ledgerctl jackpot ...`: the jackpot accounts as the live audit keeps them (the `Jackpots`
//! gRPC service), and the two signed acts on them: a force-majeure transfer of a pool's captive
//! value (operator, P217/2007 T.III r.6) and the inspectorate's authorisation of a target.
//!
//! Reading: `pools`, `pool`, `liability`, `machines`, `events` (module `machine_events`),
//! `transfer-candidates`. Acting: `transfer`
//! validates first (Jackpots.ValidateTransfer) and refuses to submit an ineligible transfer
//! unless `--force`; it then signs a `JackpotTransfer` with the operator key, submits it over
//! Ingest, waits for the live audit to apply it, and says what happened: applied (the whole
//! captive value moved), applied and flagged (a forced ineligible transfer is booked as carried
//! out, P217/2007 T.III r.5: the whole value moved, the findings recorded), or not booked (the
//! repeat of a transfer id already booked). `authorize` signs a regulator's
//! `TransferAuthorized`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use jackpot::{
    CasinoLiability, EntryKind, MachineOverview, MachineStatus, PoolCandidates, PoolEntry,
    PoolHistoryPage, PoolKind, PoolStatus, Route, TrustReport,
};
use ledger_agent::DeviceSigner;
use ledger_core::proto::{
    self as v1, audit_client::AuditClient, event_body::Payload, jackpots_client::JackpotsClient,
    query_client::QueryClient,
};
use serde::Deserialize;
use tonic::transport::Channel;

use crate::common::{self, ServerArg};
use crate::present::{Align, eur, eur_e4, eur_i128, pct, pct_i128, status_error, table, time};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Every pool: captive value in trust, last declared value, and the conservation check.
    Pools(PoolsArgs),
    /// One pool: configuration, totals and history (contributions, declarations, awards,
    /// transfers).
    Pool(PoolArgs),
    /// Money held in trust per casino, pool by pool (P217/2007 T.III r.5).
    Liability(LiabilityArgs),
    /// Machines: meters, status, and return to player (theoretical vs actual, variance).
    Machines(MachinesArgs),
    /// A machine's significant events over a period (doors, power, tilts, ...) and what is open.
    Events(crate::machine_events::EventsArgs),
    /// Where the captive values of a machine's pools may be transferred (r.6), ranked.
    TransferCandidates(CandidatesArgs),
    /// Transfer a pool's captive value after force majeure (operator-signed; validated first).
    Transfer(TransferArgs),
    /// The inspectorate authorises a transfer target (regulator-signed TransferAuthorized).
    Authorize(AuthorizeArgs),
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Captive values are shown floored to the cent (what can actually be paid) and exactly, in euros
with 6 decimals (the book keeps 1/10,000 cent; contributions are a percentage of bets and the
rules fix no rounding). A declaration matches when it is within one cent of the exact value.

Conservation: start values + contributions + transfers in = captive values + awards + transfers
out, exactly, for every pool. Exit status 1 when it does not hold.

Examples:
  ledgerctl jackpot pools
  ledgerctl jackpot pools --json")]
pub struct PoolsArgs {
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Amounts are in euros; exact amounts (6 decimals) are what the book holds, to 1/10,000 cent.
Exit status 1 when the pool's own conservation does not hold.

The history is read from ledgerd a page at a time (Jackpots.GetPool), newest first; --last 0
reads all of it, however long. With --json: the pool (PoolStatus) and the lines read, as one
PoolHistoryPage.

Examples:
  ledgerctl jackpot pool SJP-TEJO
  ledgerctl jackpot pool JP-LX-02 --last 20
  ledgerctl jackpot pool JP-LX-02 --last 0 --json")]
pub struct PoolArgs {
    /// The pool id.
    #[arg(value_name = "POOL")]
    pub pool_id: String,
    /// Only the last N history lines (0: all).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub last: usize,
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
A superjackpot spanning several casinos is listed under each of them at its full value, marked
joint: the prize is due in full wherever it is won (r.4, r.5). The total over all casinos counts
every pool once.

Examples:
  ledgerctl jackpot liability
  ledgerctl jackpot liability --casino casino-lisboa --json")]
pub struct LiabilityArgs {
    /// Only this casino (default: every casino, and the total).
    #[arg(long, value_name = "CASINO")]
    pub casino: Option<String>,
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
The return to player is computed from the meter increases credited in the period (prizes =
coin_out + hand-paid jackpots). Theoretical: the approved pay table (r.2 binds it: at least 80%);
expected: the pay table plus the contribution rates of the pools the machine feeds; actual: what
the meters show. A short period can be far from the pay table: the observed return is a
statistical indicator, never by itself a breach (machines.md M4).

Examples:
  ledgerctl jackpot machines
  ledgerctl jackpot machines --from 2026-11-01 --to 2026-12-01")]
pub struct MachinesArgs {
    /// Start of the period (RFC 3339 or a date, ledger time); default: everything.
    #[arg(long, value_name = "TIME", requires = "to")]
    pub from: Option<String>,
    /// End of the period, exclusive.
    #[arg(long, value_name = "TIME", requires = "from")]
    pub to: Option<String>,
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
For each jackpot and superjackpot the machine feeds: rank 1 = pools whose machines are all of
the failed machine's own model and bet values (r.6 first route; the output names them); rank
2 = pools the inspectorate authorised for it, eligible only when no machine of that model and
bets exists (\"na sua falta\"). A transfer is allowed only once every member of the source pool
is under force majeure for it (the whole machine, or its part in that pool: a link, controller
or server).

Examples:
  ledgerctl jackpot transfer-candidates M-LX-02")]
pub struct CandidatesArgs {
    /// The machine id.
    #[arg(value_name = "MACHINE")]
    pub machine_id: String,
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
The transfer is checked first against the live accounts (Jackpots.ValidateTransfer): force
majeure on every member of the source, the whole captive value, an eligible target (same model
and bets, or an inspectorate authorisation when no such machine exists), not already moved. An
ineligible transfer is not submitted, and the reasons are printed with the rules they cite.
With --force it is signed and submitted anyway: the ledger records every signed transfer as
carried out (P217/2007 T.III r.5: the source restarts at 0, the target holds the whole captive
value due, whatever amount was declared) and flags each breach.

The command then signs a JackpotTransfer with the operator key (the operator's next sequence
number comes from the ledger), submits it, waits until the live audit has applied it, and
reports the outcome.

Exit status: 0 applied; 1 not submitted (ineligible without --force) or an error; 3 submitted
and booked but flagged by the audit (or, for a transfer id already booked, nothing moved).

Examples:
  ledgerctl jackpot transfer-candidates M-LX-02
  ledgerctl jackpot transfer --from-pool JP-LX-02 --to-pool JP-ES-02 \\
      --operator-key operator-1.key --operator-id operator-1
  ledgerctl jackpot transfer --from-pool JP-LX-02 --to-pool SJP-TEJO --authorization IGJ-2026-17 \\
      --operator-key operator-1.key --operator-id operator-1 --json")]
pub struct TransferArgs {
    /// The pool whose captive value moves.
    #[arg(long, value_name = "POOL")]
    pub from_pool: String,
    /// The pool that receives it.
    #[arg(long, value_name = "POOL")]
    pub to_pool: String,
    /// Amount in cents (default: the source's whole captive value, floored to the cent).
    #[arg(long, value_name = "CENTS")]
    pub amount: Option<i64>,
    /// The inspectorate's authorisation, when the target is not of the same model and bets.
    #[arg(long, value_name = "ID")]
    pub authorization: Option<String>,
    /// The transfer's id (default: TR-<from pool>-<time in ms>).
    #[arg(long, value_name = "ID")]
    pub transfer_id: Option<String>,
    /// Why (recorded in the chain).
    #[arg(long, default_value = "force majeure (P217/2007 T.III r.6)")]
    pub reason: String,
    /// Submit even if validation says ineligible (recorded and flagged; nothing moves).
    #[arg(long)]
    pub force: bool,
    /// How long to wait for the live audit to apply the transfer, seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub wait_secs: u64,
    #[command(flatten)]
    pub operator: crate::device::Operator,
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Signed with a regulator key listed in ledgerd's configuration ([[principals]] role
\"regulator\"). The target pool may not exist yet. An authorisation opens the second route of
r.6 only while no machine of the source's model and bets exists.

Examples:
  ledgerctl jackpot authorize --from-pool JP-LX-02 --to-pool JP-NEW-07 --authorization IGJ-2026-17 \\
      --reference \"despacho 17/2026\" --regulator-key igj.key --regulator-id inspectorate")]
pub struct AuthorizeArgs {
    /// The source pool.
    #[arg(long, value_name = "POOL")]
    pub from_pool: String,
    /// The authorised target pool.
    #[arg(long, value_name = "POOL")]
    pub to_pool: String,
    /// The authorisation's id (what `transfer --authorization` names).
    #[arg(long, value_name = "ID")]
    pub authorization: String,
    /// The inspectorate's reference (decision number, date).
    #[arg(long, default_value = "")]
    pub reference: String,
    /// The regulator's secret key file (from `ledgerctl keygen`).
    #[arg(long, value_name = "FILE")]
    pub regulator_key: PathBuf,
    /// The regulator's id, as in ledgerd's configuration.
    #[arg(long, value_name = "ID")]
    pub regulator_id: String,
    /// How long to wait for the live audit to apply it, seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub wait_secs: u64,
    #[command(flatten)]
    pub server: ServerArg,
}

pub async fn run(c: Command, json: bool) -> anyhow::Result<i32> {
    match c {
        Command::Pools(a) => pools(a, json).await,
        Command::Pool(a) => pool(a, json).await,
        Command::Liability(a) => liability(a, json).await,
        Command::Machines(a) => machines(a, json).await,
        Command::Events(a) => crate::machine_events::run(a, json).await,
        Command::TransferCandidates(a) => candidates(a, json).await,
        Command::Transfer(a) => transfer(a, json).await,
        Command::Authorize(a) => authorize(a, json).await,
    }
}

async fn client(server: &str) -> anyhow::Result<JackpotsClient<Channel>> {
    Ok(JackpotsClient::new(common::channel(server).await?).max_decoding_message_size(256 << 20))
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, doc: &v1::JsonDocument) -> anyhow::Result<T> {
    serde_json::from_str(&doc.json).with_context(|| format!("the ledger's {what} does not decode"))
}

fn kind_name(k: PoolKind) -> &'static str {
    match k {
        PoolKind::Jackpot => "jackpot",
        PoolKind::Superjackpot => "superjackpot",
        PoolKind::TableJackpot => "table jackpot",
    }
}

fn ids<T: std::fmt::Display>(v: impl IntoIterator<Item = T>) -> String {
    let s: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    if s.is_empty() {
        "-".to_string()
    } else {
        s.join(", ")
    }
}

// ------------------------------------------------------------------------------------ pools

fn pool_json(p: &v1::PoolSummary) -> serde_json::Value {
    serde_json::json!({
        "pool_id": p.pool_id, "kind": p.kind, "casino_ids": p.casino_ids,
        "captive_cents": p.captive_cents, "captive_e4": p.captive_e4,
        "last_reported_cents": p.last_reported_cents,
        "last_reported_at_ms": p.last_reported_at_ms,
        "last_reported_held_cents": p.last_reported_held_cents,
        "last_reported_difference_cents": declared_minus_held(p),
        "status": status_word(p),
    })
}

/// The last declaration against what the book held at its moment (not now: the value has moved
/// since), in cents: declared − held then.
fn declared_minus_held(p: &v1::PoolSummary) -> Option<i64> {
    Some(p.last_reported_cents? - p.last_reported_held_cents?)
}

/// The table's cells for the last declaration: declared, held then, the difference, the verdict.
fn declaration_cells(p: &v1::PoolSummary) -> [String; 4] {
    let or_dash = |v: Option<i64>| v.map(eur).unwrap_or_else(|| "-".into());
    [
        or_dash(p.last_reported_cents),
        or_dash(p.last_reported_held_cents),
        or_dash(declared_minus_held(p)),
        status_word(p).to_string(),
    ]
}

fn status_word(p: &v1::PoolSummary) -> &'static str {
    match (p.last_reported_cents, p.reconciled) {
        (None, _) => "never declared",
        (Some(_), true) => "reconciled",
        (Some(_), false) => "MISMATCH",
    }
}

fn e4_of(p: &v1::PoolSummary) -> i128 {
    p.captive_e4
        .parse()
        .unwrap_or(i128::from(p.captive_cents) * 10_000)
}

async fn pools(a: PoolsArgs, json: bool) -> anyhow::Result<i32> {
    let list = client(&a.server.server)
        .await?
        .list_pools(v1::ListPoolsRequest {})
        .await
        .map_err(|s| status_error("listing the pools", s))?
        .into_inner();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "pools": list.pools.iter().map(pool_json).collect::<Vec<_>>(),
                "conservation_holds": list.conservation_holds,
            }))?
        );
    } else {
        if list.pools.is_empty() {
            println!("no pool is configured");
        } else {
            let rows: Vec<Vec<String>> = list
                .pools
                .iter()
                .map(|p| {
                    let mut row = vec![
                        p.pool_id.clone(),
                        p.kind.replace('_', " "),
                        ids(&p.casino_ids),
                        eur(p.captive_cents),
                        eur_e4(e4_of(p)),
                    ];
                    row.extend(declaration_cells(p));
                    row
                })
                .collect();
            print!(
                "{}",
                table(
                    &[
                        ("pool", Align::Left),
                        ("kind", Align::Left),
                        ("casinos", Align::Left),
                        ("captive now", Align::Right),
                        ("exact", Align::Right),
                        ("last declared", Align::Right),
                        ("held then", Align::Right),
                        ("difference", Align::Right),
                        ("declaration", Align::Left),
                    ],
                    &rows,
                )
            );
            let total: i128 = list.pools.iter().map(e4_of).sum();
            println!(
                "total held in trust: {} (exact {}), {} pool(s)",
                eur_i128(total.div_euclid(10_000)),
                eur_e4(total),
                list.pools.len()
            );
        }
        if list.conservation_holds {
            println!(
                "conservation: holds (start values + contributions + transfers in = captive values \
                 + awards + transfers out, exactly)"
            );
        } else {
            println!(
                "conservation: VIOLATED: captive value appeared or vanished without a contribution, \
                 award or transfer (run `ledgerctl audit --from-genesis` and report it)"
            );
        }
    }
    Ok(if list.conservation_holds { 0 } else { 1 })
}

// ------------------------------------------------------------------------------------- pool

/// Most history lines asked for in one Jackpots.GetPool request (the server's maximum).
const HISTORY_PAGE: usize = 10_000;

/// A pool and its newest history lines: pages back from the newest line until `enough` says
/// the lines read so far suffice (or there are no older ones). One page when `enough` is true
/// at once: `first_page` lines.
async fn get_pool(
    server: &str,
    id: &str,
    first_page: usize,
    enough: impl Fn(&[PoolEntry]) -> bool,
) -> anyhow::Result<PoolHistoryPage> {
    let mut jackpots = client(server).await?;
    let mut before = None;
    let mut page_size = first_page.clamp(1, HISTORY_PAGE);
    let mut out: Option<PoolHistoryPage> = None;
    loop {
        let doc = jackpots
            .get_pool(v1::GetPoolRequest {
                pool_id: id.to_string(),
                history_before: before,
                history_limit: page_size as u32,
            })
            .await
            .map_err(|s| match s.code() {
                tonic::Code::NotFound => anyhow::anyhow!(
                    "POOL `{id}`: {} (`ledgerctl jackpot pools` lists them)",
                    s.message()
                ),
                _ => status_error(&format!("pool {id}"), s),
            })?
            .into_inner();
        let page: PoolHistoryPage = parse("pool", &doc)?;
        let next = page.next_before;
        out = Some(match out {
            None => page,
            Some(mut newer) => {
                let mut history = page.history;
                history.append(&mut newer.history);
                PoolHistoryPage {
                    first: page.first,
                    history,
                    next_before: page.next_before,
                    ..newer
                }
            }
        });
        let read = out.as_ref().map(|p| p.history.as_slice()).unwrap_or(&[]);
        match next {
            Some(b) if !enough(read) => before = Some(b),
            _ => break,
        }
        page_size = HISTORY_PAGE;
    }
    out.ok_or_else(|| anyhow::anyhow!("pool {id}: no answer"))
}

fn route_text(r: &Route) -> String {
    match r {
        Route::SameModelAndBets => "same model and bets".to_string(),
        Route::Authorized {
            authorization_id,
            index,
        } => format!("IGJ authorisation {authorization_id} (entry {index})"),
    }
}

fn ok_word(ok: bool) -> &'static str {
    if ok { "matches" } else { "MISMATCH" }
}

/// One history line: (what, amount, detail).
fn history_line(p: &PoolStatus, e: &PoolEntry) -> (String, String, String) {
    match &e.kind {
        EntryKind::Created { start_e4 } => (
            "created".into(),
            format!("+{}", eur_e4(*start_e4)),
            format!(
                "{} at {} bp of bets, reset value {}",
                kind_name(p.kind),
                p.contribution_bp,
                eur(p.reset_value_cents)
            ),
        ),
        EntryKind::Reconfigured {
            contribution_bp,
            reset_value_cents,
            machines,
            tables,
        } => (
            "reconfigured".into(),
            String::new(),
            format!(
                "rate {} bp, reset value {}, members {}",
                contribution_bp,
                eur(*reset_value_cents),
                ids(machines.iter().chain(tables))
            ),
        ),
        EntryKind::Contribution {
            member,
            base_cents,
            amount_e4,
            round_id,
        } => (
            "contribution".into(),
            format!("+{}", eur_e4(*amount_e4)),
            match round_id {
                Some(r) => format!("table {member}, round {r}"),
                None => format!(
                    "machine {member}: {} bp of {} bet",
                    p.contribution_bp,
                    eur(i64::try_from(*base_cents).unwrap_or(i64::MAX))
                ),
            },
        ),
        EntryKind::Reconciliation {
            reported_cents,
            due_e4,
            ok,
        } => (
            "declared".into(),
            String::new(),
            format!(
                "{} declared, {} held: {}",
                eur(*reported_cents),
                eur_e4(*due_e4),
                ok_word(*ok)
            ),
        ),
        EntryKind::Award {
            member,
            winner,
            due_e4,
            paid_cents,
            ok,
            reset_e4,
        } => (
            "award".into(),
            format!("-{}", eur_e4(*due_e4)),
            format!(
                "won on {member}{}, {} paid: {}{}",
                if winner.is_empty() {
                    String::new()
                } else {
                    format!(" ({winner})")
                },
                eur(*paid_cents),
                ok_word(*ok),
                reset_e4
                    .map(|r| format!("; restarts at {}", eur_e4(r)))
                    .unwrap_or_default()
            ),
        ),
        EntryKind::TransferOut {
            transfer_id,
            to_pool,
            amount_e4,
            reported_cents,
            route,
            codes,
        } => (
            if codes.is_empty() {
                "transfer out".into()
            } else {
                "transfer out FLAGGED".into()
            },
            format!("-{}", eur_e4(*amount_e4)),
            format!(
                "{transfer_id} to {to_pool} ({}), {} declared{}",
                route
                    .as_ref()
                    .map_or_else(|| "no eligible route".to_string(), route_text),
                eur(*reported_cents),
                if codes.is_empty() {
                    String::new()
                } else {
                    format!("; booked as carried out: {}", ids(codes))
                }
            ),
        ),
        EntryKind::TransferIn {
            transfer_id,
            from_pool,
            amount_e4,
        } => (
            "transfer in".into(),
            format!("+{}", eur_e4(*amount_e4)),
            format!("{transfer_id} from {from_pool}"),
        ),
        EntryKind::TransferRejected {
            transfer_id,
            to_pool,
            reported_cents,
            codes,
        } => (
            "transfer NOT BOOKED".into(),
            String::new(),
            format!(
                "{transfer_id} to {to_pool}, {} declared; nothing moved: {}",
                eur(*reported_cents),
                ids(codes)
            ),
        ),
    }
}

async fn pool(a: PoolArgs, json: bool) -> anyhow::Result<i32> {
    let want = if a.last == 0 { usize::MAX } else { a.last };
    let mut doc = get_pool(&a.server.server, &a.pool_id, want, |read| {
        read.len() >= want
    })
    .await?;
    // The last `want` lines of what was read (pages may bring a few more).
    let extra = doc.history.len().saturating_sub(want);
    if extra > 0 {
        doc.history.drain(..extra);
        doc.first += extra as u64;
        doc.next_before = Some(doc.first);
    }
    if json {
        println!("{}", serde_json::to_string(&doc)?);
        return Ok(0);
    }
    let p = &doc.pool;
    println!("Pool {} ({})", p.id, kind_name(p.kind));
    println!("  casinos        {}", ids(&p.casinos));
    if p.kind.is_machine_pool() {
        println!("  machines       {}", ids(p.machines.keys()));
    } else {
        println!("  tables         {}", ids(&p.tables));
    }
    println!(
        "  contribution   {} bp ({} % of bets)",
        p.contribution_bp,
        pct(i64::from(p.contribution_bp))
    );
    println!(
        "  start / reset  {} / {}   (configured at entry {})",
        eur(p.start_value_cents),
        eur(p.reset_value_cents),
        p.configured_at
    );
    println!(
        "  captive value  {} (exact {})",
        eur_i128(p.captive_e4.div_euclid(10_000)),
        eur_e4(p.captive_e4)
    );
    match &p.last_report {
        Some(r) => println!(
            "  last declared  {} at entry {}: {} (held then {})",
            eur(r.reported_cents),
            r.index,
            ok_word(r.ok),
            eur_e4(r.due_e4)
        ),
        None => println!("  last declared  never"),
    }
    let t = &p.totals;
    println!(
        "  totals         start values {} + contributions {} + transfers in {} = captive {} + \
         awards {} + transfers out {}",
        eur_e4(t.seeded_e4),
        eur_e4(t.contributed_e4),
        eur_e4(t.transferred_in_e4),
        eur_e4(p.captive_e4),
        eur_e4(t.awarded_e4),
        eur_e4(t.transferred_out_e4)
    );
    let balance = t.seeded_e4 + t.contributed_e4 + t.transferred_in_e4
        - (p.captive_e4 + t.awarded_e4 + t.transferred_out_e4);
    println!(
        "  conservation   {}",
        if balance == 0 {
            "holds".to_string()
        } else {
            format!("VIOLATED: off by {}", eur_e4(balance))
        }
    );
    println!(
        "\nHistory ({} line(s){}):",
        doc.pool.history_lines,
        if doc.first > 0 {
            format!(", the last {}", doc.history.len())
        } else {
            String::new()
        }
    );
    let rows: Vec<Vec<String>> = doc
        .history
        .iter()
        .map(|e| {
            let (what, amount, detail) = history_line(p, e);
            vec![e.index.to_string(), time(e.at_ms), what, amount, detail]
        })
        .collect();
    for l in table(
        &[
            ("entry", Align::Right),
            ("time", Align::Left),
            ("what", Align::Left),
            ("amount", Align::Right),
            ("detail", Align::Left),
        ],
        &rows,
    )
    .lines()
    {
        println!("  {l}");
    }
    Ok(if balance == 0 { 0 } else { 1 })
}

// -------------------------------------------------------------------------------- liability

fn print_liability(c: &CasinoLiability) {
    println!(
        "Casino {}: {} held in trust (sole {}, joint {})",
        c.casino_id,
        eur(c.total_cents),
        eur(c.sole_cents),
        eur(c.joint_cents)
    );
    if c.pools.is_empty() {
        println!("  no pool");
        return;
    }
    let rows: Vec<Vec<String>> = c
        .pools
        .iter()
        .map(|p| {
            vec![
                p.pool_id.to_string(),
                kind_name(p.kind).to_string(),
                eur(p.captive_cents),
                eur_e4(p.captive_e4),
                if p.joint {
                    format!("joint with {}", ids(&p.shared_with))
                } else {
                    "sole".to_string()
                },
                ids(&p.members_here),
                eur_e4(p.contributed_here_e4),
            ]
        })
        .collect();
    for l in table(
        &[
            ("pool", Align::Left),
            ("kind", Align::Left),
            ("captive", Align::Right),
            ("exact", Align::Right),
            ("held", Align::Left),
            ("members here", Align::Left),
            ("contributed here", Align::Right),
        ],
        &rows,
    )
    .lines()
    {
        println!("  {l}");
    }
}

async fn liability(a: LiabilityArgs, json: bool) -> anyhow::Result<i32> {
    let casino = a.casino.clone().unwrap_or_default();
    let doc = client(&a.server.server)
        .await?
        .get_liability(v1::LiabilityRequest {
            casino_id: casino.clone(),
        })
        .await
        .map_err(|s| status_error("liability", s))?
        .into_inner();
    if json {
        println!("{}", doc.json);
        return Ok(0);
    }
    if casino.is_empty() {
        let r: TrustReport = parse("trust report", &doc)?;
        if r.casinos.is_empty() {
            println!("no pool is configured: nothing is held in trust");
        }
        for (i, c) in r.casinos.iter().enumerate() {
            if i > 0 {
                println!();
            }
            print_liability(c);
        }
        println!(
            "\nAll casinos: {} held in trust (exact {}), each pool counted once",
            eur(r.total_cents),
            eur_e4(r.total_e4)
        );
    } else {
        let c: CasinoLiability = parse("liability", &doc)?;
        if c.pools.is_empty() {
            println!(
                "casino {casino} holds no captive value (no pool lists it; `ledgerctl jackpot \
                 liability` shows every casino)"
            );
        } else {
            print_liability(&c);
        }
    }
    Ok(0)
}

// --------------------------------------------------------------------------------- machines

fn machine_status(m: &MachineStatus) -> String {
    let mut s = Vec::new();
    if let Some(f) = &m.force_majeure {
        s.push(format!("FORCE MAJEURE ({}, entry {})", f.code, f.since));
    } else if let Some(o) = &m.out_of_service {
        s.push(format!("OUT OF SERVICE ({}, entry {})", o.code, o.since));
    }
    if let Some(f) = &m.meter_fault {
        s.push(format!("METER FAULT ({}, entry {})", f.code, f.since));
    }
    if s.is_empty() {
        "in service".to_string()
    } else {
        s.join("; ")
    }
}

fn meter(m: &MachineStatus, name: &str, money: bool) -> String {
    match m.meters.get(name) {
        Some(v) if money => eur(i64::try_from(v.value).unwrap_or(i64::MAX)),
        Some(v) => v.value.to_string(),
        None => "-".to_string(),
    }
}

async fn machines(a: MachinesArgs, json: bool) -> anyhow::Result<i32> {
    let (from_ms, to_ms) = crate::findings::parse_period(&a.from, &a.to)?;
    // A page at a time, in id order, until a page names no next one.
    let mut jackpots = client(&a.server.server).await?;
    let mut list: Vec<MachineOverview> = Vec::new();
    let mut after = String::new();
    loop {
        let doc = jackpots
            .list_machines(v1::ListMachinesRequest {
                from_ms,
                to_ms,
                after_machine_id: std::mem::take(&mut after),
                limit: 0,
            })
            .await
            .map_err(|s| status_error("listing the machines", s))?
            .into_inner();
        let page: jackpot::MachineOverviewPage = parse("machine list", &doc)?;
        list.extend(page.machines);
        match page.next_after {
            Some(id) => after = id.to_string(),
            None => break,
        }
    }
    if json {
        println!("{}", serde_json::to_string(&list)?);
        return Ok(0);
    }
    if list.is_empty() {
        println!("no machine is registered");
        return Ok(0);
    }
    println!("Machines and meters (last reading):");
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|d| {
            let m = &d.machine;
            vec![
                m.id.to_string(),
                m.casino_id.to_string(),
                m.model_id.to_string(),
                ids(m.bet_values_cents.iter().map(|b| eur(*b))),
                meter(m, jackpot::COIN_IN, true),
                meter(m, jackpot::COIN_OUT, true),
                meter(m, jackpot::TOTAL_DROP, true),
                meter(m, jackpot::JACKPOT, true),
                meter(m, jackpot::GAMES_PLAYED, false),
                m.last_reading
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "-".into()),
                machine_status(m),
            ]
        })
        .collect();
    for l in table(
        &[
            ("machine", Align::Left),
            ("casino", Align::Left),
            ("model", Align::Left),
            ("bets", Align::Left),
            ("coin_in", Align::Right),
            ("coin_out", Align::Right),
            ("drop", Align::Right),
            ("jackpot", Align::Right),
            ("games", Align::Right),
            ("read at", Align::Right),
            ("status", Align::Left),
        ],
        &rows,
    )
    .lines()
    {
        println!("  {l}");
    }
    let period = match (from_ms, to_ms) {
        (Some(f), Some(t)) => format!("{} to {} (exclusive)", time(f), time(t)),
        _ => "since each machine's first reading".to_string(),
    };
    println!("\nReturn to player, {period}:");
    let opt_pct = |v: Option<i128>| v.map(pct_i128).unwrap_or_else(|| "-".into());
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|d| {
            let id = d.machine.id.to_string();
            match &d.return_to_player {
                None => vec![id, "-".into()],
                Some(r) => vec![
                    id,
                    r.readings.to_string(),
                    eur_i128(r.coin_in_cents),
                    eur_i128(r.won_cents),
                    r.theoretical_rtp_bp
                        .map(|b| pct(i64::from(b)))
                        .unwrap_or_else(|| "-".into()),
                    opt_pct(r.expected_rtp_bp),
                    opt_pct(r.actual_bp),
                    r.variance_cents.map(eur_i128).unwrap_or_else(|| "-".into()),
                    opt_pct(r.variance_bp),
                ],
            }
        })
        .collect();
    for l in table(
        &[
            ("machine", Align::Left),
            ("readings", Align::Right),
            ("coin-in", Align::Right),
            ("prizes", Align::Right),
            ("pay table %", Align::Right),
            ("expected %", Align::Right),
            ("actual %", Align::Right),
            ("variance", Align::Right),
            ("variance %", Align::Right),
        ],
        &rows,
    )
    .lines()
    {
        println!("  {l}");
    }
    println!(
        "  (expected = pay table + the contribution rates of the machine's pools; variance = \
         prizes − expected prizes; informational, r.2 binds the pay table: machines.md M4)"
    );
    Ok(0)
}

// ---------------------------------------------------------------------- transfer candidates

async fn candidates(a: CandidatesArgs, json: bool) -> anyhow::Result<i32> {
    let doc = client(&a.server.server)
        .await?
        .transfer_candidates(v1::TransferCandidatesRequest {
            machine_id: a.machine_id.clone(),
        })
        .await
        .map_err(|s| match s.code() {
            tonic::Code::NotFound => anyhow::anyhow!(
                "MACHINE `{}`: {} (`ledgerctl jackpot machines` lists them)",
                a.machine_id,
                s.message()
            ),
            _ => status_error("transfer candidates", s),
        })?
        .into_inner();
    if json {
        println!("{}", doc.json);
        return Ok(0);
    }
    let list: Vec<PoolCandidates> = parse("transfer candidates", &doc)?;
    if list.is_empty() {
        println!(
            "machine {} feeds no jackpot or superjackpot: nothing to transfer",
            a.machine_id
        );
        return Ok(0);
    }
    for (i, p) in list.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!(
            "Pool {} ({}) of machine {}: captive {} (exact {})",
            p.pool_id,
            kind_name(p.kind),
            a.machine_id,
            eur(p.captive_cents),
            eur_e4(p.captive_e4)
        );
        println!(
            "  compares (r.6 \"do mesmo modelo e apostas\"): model {}, bets {} (machine {}'s own; \
             rank 1 = every member of that model with exactly those bets)",
            if p.model_id.is_empty() {
                "?"
            } else {
                &p.model_id
            },
            if p.bet_values_cents.is_empty() {
                "?".to_string()
            } else {
                p.bet_values_cents
                    .iter()
                    .map(|b| eur(*b))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            a.machine_id
        );
        println!(
            "  force majeure: {}",
            if p.force_majeure {
                "yes, on every member machine for this pool: a transfer is allowed (r.6)"
            } else {
                "no: some member can still award it; a transfer now would be \
                 SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE"
            }
        );
        if p.already_transferred {
            println!(
                "  already transferred in this force-majeure episode: another transfer would be SLOT_TRANSFER_DUPLICATE"
            );
        }
        println!(
            "  machines of that model and bets: {}",
            if p.same_model_machines.is_empty() {
                "none (the inspectorate's route is open: \"na sua falta\")".to_string()
            } else {
                format!(
                    "{} (only same-model targets are eligible)",
                    ids(&p.same_model_machines)
                )
            }
        );
        if p.candidates.is_empty() {
            println!(
                "  no eligible target: no pool of the same model and bets, and no inspectorate \
                 authorisation (`ledgerctl jackpot authorize`)"
            );
            continue;
        }
        let rows: Vec<Vec<String>> = p
            .candidates
            .iter()
            .map(|c| {
                vec![
                    c.rank.to_string(),
                    c.pool_id.to_string(),
                    c.route
                        .as_ref()
                        .map(route_text)
                        .unwrap_or_else(|| "IGJ authorisation".to_string()),
                    if c.eligible { "yes" } else { "NO" }.to_string(),
                    ids(&c.members),
                    c.reason.clone().unwrap_or_default(),
                ]
            })
            .collect();
        for l in table(
            &[
                ("rank", Align::Right),
                ("target", Align::Left),
                ("route", Align::Left),
                ("eligible", Align::Left),
                ("members", Align::Left),
                ("why not", Align::Left),
            ],
            &rows,
        )
        .lines()
        {
            println!("  {l}");
        }
    }
    Ok(0)
}

// --------------------------------------------------------------------------------- transfer

/// Sign `payload` as principal `id` with its next sequence number (asked from the ledger) and
/// submit it; the receipt.
async fn sign_and_submit(
    server: &str,
    key_path: &std::path::Path,
    key_arg: &str,
    id: &str,
    payload: Payload,
) -> anyhow::Result<v1::Receipt> {
    let key = ledger_agent::keys::read_secret(key_path).with_context(|| format!("--{key_arg}"))?;
    let info = QueryClient::new(common::channel(server).await?)
        .get_device(v1::GetDeviceRequest {
            device_id: id.to_string(),
        })
        .await
        .with_context(|| {
            format!("{id} is not a principal of this ledger (check ledgerd's [[principals]])")
        })?
        .into_inner();
    if info.public_key != key.verifying_key().as_bytes() {
        bail!("--{key_arg} does not match the key the ledger has for {id}");
    }
    let mut signer = DeviceSigner::new(id, key, info.last_sequence + 1);
    let env = signer.sign(chrono::Utc::now().timestamp_millis(), payload);
    let mut receipts = ledger_agent::submit_all(server, &[env], &Default::default()).await?;
    receipts
        .pop()
        .ok_or_else(|| anyhow::anyhow!("the ledger sent no receipt"))
}

/// Wait until the live audit has applied entry `index`.
async fn wait_applied(server: &str, index: u64, secs: u64) -> anyhow::Result<()> {
    let mut audit = AuditClient::new(common::channel(server).await?);
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = audit
            .get_status(v1::AuditStatusRequest {})
            .await
            .map_err(|s| status_error("audit status", s))?
            .into_inner();
        if s.position >= 0 && s.position as u64 >= index {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "the live audit has not reached entry {index} within {secs} s (it is at entry {}); \
                 the event is in the ledger: check later with `ledgerctl jackpot pools`",
                s.position
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The findings recorded by entry `index` (their evidence ends with it), among those matching
/// `req`.
async fn findings_of(
    server: &str,
    mut req: v1::ListFindingsRequest,
    index: u64,
) -> anyhow::Result<Vec<v1::Finding>> {
    let mut audit = AuditClient::new(common::channel(server).await?);
    req.limit = 1000;
    let mut out = Vec::new();
    loop {
        let page = audit
            .list_findings(req.clone())
            .await
            .map_err(|s| status_error("listing findings", s))?
            .into_inner();
        out.extend(
            page.findings
                .into_iter()
                .filter(|f| f.evidence.last() == Some(&index)),
        );
        match page.next_after_seq {
            Some(s) => req.after_seq = Some(s),
            None => return Ok(out),
        }
    }
}

fn validation_lines(v: &v1::TransferValidation) -> String {
    let mut s = String::new();
    for f in &v.findings {
        s.push_str(&format!(
            "  {}  [{}]\n      {}\n",
            f.code, f.citation, f.message
        ));
    }
    s
}

fn validation_json(v: &v1::TransferValidation) -> serde_json::Value {
    serde_json::json!({
        "accepted": v.accepted,
        "error": if v.error.is_empty() { serde_json::Value::Null } else { v.error.clone().into() },
        "findings": v.findings.iter().map(|f| serde_json::json!({
            "code": f.code, "citation": f.citation, "message": f.message,
            "severity": crate::findings::finding_json(f)["severity"],
        })).collect::<Vec<_>>(),
    })
}

async fn list_pools(server: &str) -> anyhow::Result<v1::PoolList> {
    Ok(client(server)
        .await?
        .list_pools(v1::ListPoolsRequest {})
        .await
        .map_err(|s| status_error("listing the pools", s))?
        .into_inner())
}

fn find_pool<'a>(
    list: &'a v1::PoolList,
    arg: &str,
    id: &str,
) -> anyhow::Result<&'a v1::PoolSummary> {
    list.pools.iter().find(|p| p.pool_id == id).ok_or_else(|| {
        anyhow::anyhow!("--{arg}: no pool `{id}` (`ledgerctl jackpot pools` lists them)")
    })
}

async fn transfer(a: TransferArgs, json: bool) -> anyhow::Result<i32> {
    let server = a.server.server.clone();
    // Fail on the key before asking anything.
    ledger_agent::keys::read_secret(&a.operator.operator_key).context("--operator-key")?;
    if a.from_pool == a.to_pool {
        bail!("--to-pool must differ from --from-pool ({})", a.from_pool);
    }
    if let Some(x) = a.amount
        && x < 0
    {
        bail!("--amount: {x} is negative (cents)");
    }
    let before = list_pools(&server).await?;
    let src = find_pool(&before, "from-pool", &a.from_pool)?.clone();
    let dst = find_pool(&before, "to-pool", &a.to_pool)?.clone();
    let amount = a.amount.unwrap_or(src.captive_cents);
    let transfer = v1::JackpotTransfer {
        transfer_id: a.transfer_id.clone().unwrap_or_else(|| {
            format!(
                "TR-{}-{}",
                a.from_pool,
                chrono::Utc::now().timestamp_millis()
            )
        }),
        from_pool_id: a.from_pool.clone(),
        to_pool_id: a.to_pool.clone(),
        amount_cents: amount,
        reason: a.reason.clone(),
        authorization_id: a.authorization.clone().unwrap_or_default(),
    };
    let transfer_json = serde_json::json!({
        "transfer_id": transfer.transfer_id, "from_pool_id": transfer.from_pool_id,
        "to_pool_id": transfer.to_pool_id, "amount_cents": transfer.amount_cents,
        "reason": transfer.reason, "authorization_id": a.authorization,
    });

    // 1. Validate against the live accounts.
    let validation = client(&server)
        .await?
        .validate_transfer(transfer.clone())
        .await
        .map_err(|s| status_error("validating the transfer", s))?
        .into_inner();
    if !validation.error.is_empty() {
        bail!(
            "the transfer cannot be read, nothing was submitted: {}",
            validation.error
        );
    }
    if !validation.accepted && !a.force {
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "outcome": "not_submitted",
                    "transfer": transfer_json,
                    "validation": validation_json(&validation),
                }))?
            );
        } else {
            eprintln!(
                "refused: transfer {} of {} from {} to {} is not eligible; nothing was submitted.",
                transfer.transfer_id,
                eur(amount),
                a.from_pool,
                a.to_pool
            );
            eprint!("{}", validation_lines(&validation));
            eprintln!(
                "`ledgerctl jackpot transfer-candidates <machine>` lists the eligible targets. \
                 --force submits it anyway: the ledger books it as carried out (the whole captive \
                 value moves) and flags it."
            );
        }
        return Ok(1);
    }
    if !validation.accepted && !json {
        eprintln!(
            "warning: submitting an ineligible transfer (--force): it will be booked as carried \
             out (the whole captive value moves, r.5) and flagged:"
        );
        eprint!("{}", validation_lines(&validation));
    }

    // 2. Sign and submit.
    let receipt = sign_and_submit(
        &server,
        &a.operator.operator_key,
        "operator-key",
        &a.operator.operator_id,
        Payload::JackpotTransfer(transfer.clone()),
    )
    .await?;
    if !matches!(common::status_name(&receipt), "accepted" | "duplicate") {
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "outcome": "rejected_by_ledger",
                    "transfer": transfer_json,
                    "validation": validation_json(&validation),
                    "receipt": common::receipt_json(&receipt),
                }))?
            );
        } else {
            eprintln!(
                "the ledger did not accept the transfer: {}",
                common::receipt_line(&receipt)
            );
        }
        return Ok(1);
    }
    if !json {
        println!("submitted: {}", common::receipt_line(&receipt));
    }

    // 3. Wait for the audit and read the outcome.
    wait_applied(&server, receipt.index, a.wait_secs).await?;
    // Page back until the lines reach the transfer's entry (the floor may have played since).
    let doc = get_pool(&server, &a.from_pool, 100, |read| {
        read.first().is_some_and(|e| e.index <= receipt.index)
    })
    .await?;
    let line = doc
        .history
        .iter()
        .find(|e| e.index == receipt.index)
        .map(|e| e.kind.clone());
    let after = list_pools(&server).await?;
    let src_after = find_pool(&after, "from-pool", &a.from_pool)?;
    let dst_after = find_pool(&after, "to-pool", &a.to_pool)?;
    let pools_json = serde_json::json!({
        a.from_pool.clone(): {"before_e4": src.captive_e4, "after_e4": src_after.captive_e4,
            "before_cents": src.captive_cents, "after_cents": src_after.captive_cents},
        a.to_pool.clone(): {"before_e4": dst.captive_e4, "after_e4": dst_after.captive_e4,
            "before_cents": dst.captive_cents, "after_cents": dst_after.captive_cents},
    });
    let pool_lines = || {
        format!(
            "  {}: {} → {}\n  {}: {} → {}",
            a.from_pool,
            eur_e4(e4_of(&src)),
            eur_e4(e4_of(src_after)),
            a.to_pool,
            eur_e4(e4_of(&dst)),
            eur_e4(e4_of(dst_after))
        )
    };
    let booked = match &line {
        Some(EntryKind::TransferOut {
            amount_e4,
            route,
            codes,
            ..
        }) => Some((*amount_e4, route.clone(), !codes.is_empty())),
        _ => None,
    };
    // The findings the transfer raised (a forced ineligible one, or one the book did not book).
    let findings = if matches!(booked, Some((_, _, false))) {
        Vec::new()
    } else {
        let mut findings = findings_of(
            &server,
            v1::ListFindingsRequest {
                pool_id: a.from_pool.clone(),
                ..Default::default()
            },
            receipt.index,
        )
        .await?;
        if line.is_none() {
            // The accounts could not even read it (JACKPOT_EVENT_REFUSED, no pool set).
            findings.extend(
                findings_of(
                    &server,
                    v1::ListFindingsRequest {
                        code: "JACKPOT_EVENT_REFUSED".into(),
                        ..Default::default()
                    },
                    receipt.index,
                )
                .await?,
            );
        }
        findings
    };
    let finding_lines = |findings: &[v1::Finding]| {
        for f in findings {
            for l in crate::findings::proto_line(f).lines() {
                println!("  {l}");
            }
        }
    };
    let findings_json = findings
        .iter()
        .map(crate::findings::finding_json)
        .collect::<Vec<_>>();
    match booked {
        Some((amount_e4, route, flagged)) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "outcome": if flagged { "applied_flagged" } else { "applied" },
                        "transfer": transfer_json,
                        "validation": validation_json(&validation),
                        "receipt": common::receipt_json(&receipt),
                        "moved_e4": amount_e4.to_string(),
                        "route": route,
                        "findings": findings_json,
                        "pools": pools_json,
                    }))?
                );
            } else {
                println!(
                    "{}: {} (exact {}, the whole captive value) moved from {} to {} at \
                     entry {}, route: {}",
                    if flagged {
                        "applied and FLAGGED (booked as carried out, P217/2007 T.III r.5)"
                    } else {
                        "applied"
                    },
                    eur_i128(amount_e4.div_euclid(10_000)),
                    eur_e4(amount_e4),
                    a.from_pool,
                    a.to_pool,
                    receipt.index,
                    route
                        .as_ref()
                        .map_or_else(|| "none eligible".to_string(), route_text)
                );
                if flagged {
                    println!("{} finding(s):", findings.len());
                    finding_lines(&findings);
                }
                println!("{}", pool_lines());
            }
            Ok(if flagged { 3 } else { 0 })
        }
        None => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "outcome": "not_booked",
                        "transfer": transfer_json,
                        "validation": validation_json(&validation),
                        "receipt": common::receipt_json(&receipt),
                        "findings": findings_json,
                        "pools": pools_json,
                    }))?
                );
            } else {
                println!(
                    "not booked: nothing moved; the transfer is recorded at entry {} with {} \
                     finding(s):",
                    receipt.index,
                    findings.len()
                );
                finding_lines(&findings);
                println!("{}", pool_lines());
            }
            Ok(3)
        }
    }
}

// -------------------------------------------------------------------------------- authorize

async fn authorize(a: AuthorizeArgs, json: bool) -> anyhow::Result<i32> {
    let server = a.server.server.clone();
    if a.from_pool == a.to_pool {
        bail!("--to-pool must differ from --from-pool ({})", a.from_pool);
    }
    let receipt = sign_and_submit(
        &server,
        &a.regulator_key,
        "regulator-key",
        &a.regulator_id,
        Payload::TransferAuthorized(v1::TransferAuthorized {
            authorization_id: a.authorization.clone(),
            from_pool_id: a.from_pool.clone(),
            to_pool_id: a.to_pool.clone(),
            reference: a.reference.clone(),
        }),
    )
    .await?;
    if !matches!(common::status_name(&receipt), "accepted" | "duplicate") {
        if json {
            println!(
                "{}",
                serde_json::json!({"outcome": "rejected_by_ledger", "receipt": common::receipt_json(&receipt)})
            );
        } else {
            eprintln!(
                "the ledger did not accept the authorisation: {}",
                common::receipt_line(&receipt)
            );
        }
        return Ok(1);
    }
    wait_applied(&server, receipt.index, a.wait_secs).await?;
    let refused = findings_of(
        &server,
        v1::ListFindingsRequest {
            code: "JACKPOT_EVENT_REFUSED".into(),
            ..Default::default()
        },
        receipt.index,
    )
    .await?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "outcome": if refused.is_empty() { "recorded" } else { "refused" },
                "authorization_id": a.authorization, "from_pool_id": a.from_pool,
                "to_pool_id": a.to_pool, "reference": a.reference,
                "receipt": common::receipt_json(&receipt),
                "findings": refused.iter().map(crate::findings::finding_json).collect::<Vec<_>>(),
            }))?
        );
    } else {
        println!("submitted: {}", common::receipt_line(&receipt));
        if refused.is_empty() {
            println!(
                "recorded: authorisation {} lets {}'s captive value go to {} (r.6, when no machine \
                 of the same model and bets exists)",
                a.authorization, a.from_pool, a.to_pool
            );
        } else {
            println!("refused by the jackpot accounts:");
            for f in &refused {
                for l in crate::findings::proto_line(f).lines() {
                    println!("  {l}");
                }
            }
        }
    }
    Ok(if refused.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A declaration is reconciled against what was held at its moment, and the table says both
    /// amounts and the difference beside the verdict (never "reconciled" beside two amounts
    /// that differ without saying why).
    #[test]
    fn a_declaration_is_shown_against_what_was_held_then() {
        let p = v1::PoolSummary {
            pool_id: "JP-1".into(),
            captive_cents: 0,
            last_reported_cents: Some(41_644),
            reconciled: true,
            last_reported_at_ms: Some(1),
            last_reported_held_cents: Some(41_644),
            ..Default::default()
        };
        let cells = declaration_cells(&p);
        assert_eq!(cells[0], cells[1]);
        assert_eq!(cells[2], eur(0));
        assert_eq!(cells[3], "reconciled");
        let off = v1::PoolSummary {
            last_reported_cents: Some(10_000),
            last_reported_held_cents: Some(9_950),
            reconciled: false,
            ..p.clone()
        };
        assert_eq!(declared_minus_held(&off), Some(50));
        let cells = declaration_cells(&off);
        assert_eq!(cells[2], eur(50));
        assert_eq!(cells[3], "MISMATCH");
        assert_eq!(pool_json(&off)["last_reported_difference_cents"], 50);
        assert_eq!(pool_json(&off)["last_reported_held_cents"], 9_950);
        let never = v1::PoolSummary {
            last_reported_cents: None,
            last_reported_held_cents: None,
            ..p
        };
        assert_eq!(
            declaration_cells(&never),
            ["-", "-", "-", "never declared"].map(String::from)
        );
    }
}
