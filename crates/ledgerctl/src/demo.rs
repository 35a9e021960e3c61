//! `ledgerctl demo`: the whole story in one command.
//!
//! 1. Starts a ledger (the real ledgerd, embedded) on a local data directory, with the live audit.
//! 2. Generates the standard casino session (`casino-sim`): one table of every game over two
//!    casinos, a slot floor with two jackpots and a superjackpot across both casinos, a machine
//!    that fails with its captive value transferred to an ineligible pool (booked as carried
//!    out, P217/2007 T.III r.5, and flagged), and the injected mistakes with the exact findings
//!    they must produce.
//! 3. Registers every device (operator-signed, real keys), signs every event on its device (on
//!    every core, before streaming), and streams the session over real gRPC: one agent per device
//!    group, concurrently, each resending from its last receipt after a failure.
//! 4. Runs the ingest drills (a resend, a forgery, an unknown device, a gap, an equivocation, a
//!    revocation).
//! 5. Waits until the live audit has caught up, then reads over gRPC: the findings (checked to be
//!    **exactly** the injected ones), the findings digest, the report per table and game, and
//!    the liability report.
//! 6. Unless `--no-mirror`: waits until the mirror (a second ledgerd copying the ledger, started
//!    after the streaming, `demo_mirror`) holds the ledger's head, and compares its live audit's
//!    findings digest with the ledger's.
//! 7. Stops the ledger, verifies the chain offline, replays it from genesis offline and checks
//!    that the digest (and the liabilities) equal the live audit's.
//! 8. Prints the summary (`--json` for scripts); exits 1 if any check failed.
//!
//! Deterministic for a seed: the same session, the same keys (derived from the seed: a demo
//! only), the same findings. The chain's order (concurrent streams) and the ledger's receive
//! times differ from run to run, and with them the findings' evidence indexes and the digest; the
//! live and the offline digests are equal in every run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use casino_play::session::{self, Keys, SignOptions};
use casino_play::sim;
use ledger_agent::DeviceSigner;
use ledger_audit::live::Follower;
use ledger_audit::store::AuditStore;
use ledger_core::proto::{
    self as v1, audit_client::AuditClient, checkpoints_client::CheckpointsClient,
    event_body::Payload as P, jackpots_client::JackpotsClient, query_client::QueryClient,
};
use ledger_store::Store;

use crate::common;

/// Rounds per table by default: about a minute and a half of demo on two cores (release build).
pub const DEFAULT_ROUNDS: usize = 3000;

const OPERATOR: &str = "operator-1";
const REGULATOR: &str = "inspectorate";
/// The machine whose agent signs a second, different event with an already used sequence number.
const EQUIVOCATOR: &str = "M-LX-03";

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Examples:
  ledgerctl demo                      the standard session: 3,000 rounds at each of 16 tables
                                      (48,000 rounds, about 1.6 million signed events)
  ledgerctl demo --rounds 300         a tenth of it, in a few seconds
  ledgerctl demo --seed 7 --json      another session, as one JSON document
  ledgerctl demo --honest             no injected mistake: the audit must find nothing but the
                                      drill's equivocation

Afterwards, on the data directory it leaves (DIR/ledger):
  ledgerd --config DIR/ledgerd.toml   serves it again (its client: DIR/pki/demo-regulator.pem)
  ledger-console serve --config DIR/console.toml
                                      the compliance console over it (account and password
                                      printed by the demo)
  ledgerctl verify --data-dir DIR/ledger
  ledgerctl verify --data-dir DIR/mirror
                                      the mirror's copy, verified on its own
  ledgerctl audit --from-genesis --data-dir DIR/ledger --findings")]
pub struct Args {
    /// Working directory: the ledger (DIR/ledger), keys, certificates, ledgerd.toml; emptied first.
    #[arg(long, value_name = "DIR", default_value = "demo-data")]
    pub data_dir: PathBuf,
    /// Rounds played at each of the 16 tables (at least 11 with the injected mistakes).
    #[arg(long, default_value_t = DEFAULT_ROUNDS)]
    pub rounds: usize,
    /// Seed of the simulated session and of the demo's keys (same seed, same session).
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Play without the injected mistakes.
    #[arg(long)]
    pub honest: bool,
    /// Run without the mirror (a second ledgerd copying the ledger into DIR/mirror).
    #[arg(long)]
    pub no_mirror: bool,
}

const MARKER: &str = ".ledgerctl-demo";

/// The demo's TLS client: a regulator principal.
const DEMO_CLIENT: &str = "demo-regulator";
/// The name of the demo's witness (its cosignatures' key name).
const WITNESS: &str = "inspectorate.demo/w1";

fn prepare(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        let empty = std::fs::read_dir(dir)?.next().is_none();
        if !empty && !dir.join(MARKER).exists() {
            bail!(
                "{} exists and is not a demo directory; choose another --data-dir",
                dir.display()
            );
        }
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir.join("keys"))?;
    std::fs::write(
        dir.join(MARKER),
        "created by ledgerctl demo; deleted by the next demo run\n",
    )?;
    Ok(())
}

/// What a finding is about, as the expectations name it: the table of a round finding, else the
/// pool, the machine, the table or the device.
pub fn subject(f: &v1::Finding) -> String {
    [
        if f.round_id.is_empty() {
            ""
        } else {
            &f.table_id
        },
        &f.pool_id,
        &f.machine_id,
        &f.table_id,
        &f.device_id,
    ]
    .into_iter()
    .find(|s| !s.is_empty())
    .unwrap_or_default()
    .to_string()
}

/// The key findings are matched on: (code, subject, round).
pub type Key = (String, String, Option<String>);

pub fn key_of(f: &v1::Finding) -> Key {
    (
        f.code.clone(),
        subject(f),
        (!f.round_id.is_empty()).then(|| f.round_id.clone()),
    )
}

/// Expected against found: the expected keys not found, and the findings not expected.
pub fn compare<'a>(
    expected: &[sim::Expected],
    found: &'a [v1::Finding],
) -> (Vec<Key>, Vec<&'a v1::Finding>) {
    let want: BTreeSet<Key> = expected
        .iter()
        .map(|e| (e.code.clone(), e.subject.clone(), e.round_id.clone()))
        .collect();
    let have: BTreeSet<Key> = found.iter().map(key_of).collect();
    let missing = want.difference(&have).cloned().collect();
    let unexpected = found
        .iter()
        .filter(|f| !want.contains(&key_of(f)))
        .collect();
    (missing, unexpected)
}

/// Every finding, over gRPC (paged).
pub async fn list_findings(ch: &tonic::transport::Channel) -> anyhow::Result<Vec<v1::Finding>> {
    let mut client = AuditClient::new(ch.clone()).max_decoding_message_size(64 << 20);
    let mut req = v1::ListFindingsRequest {
        limit: 10_000,
        ..Default::default()
    };
    let mut out = Vec::new();
    loop {
        let page = client.list_findings(req.clone()).await?.into_inner();
        out.extend(page.findings);
        match page.next_after_seq {
            Some(s) => req.after_seq = Some(s),
            None => return Ok(out),
        }
    }
}

/// Wait until the live audit has committed everything up to the durable head (and the head has
/// not moved), or `timeout`.
pub async fn wait_caught_up(
    ch: &tonic::transport::Channel,
    timeout: Duration,
) -> anyhow::Result<v1::AuditStatus> {
    let mut client = AuditClient::new(ch.clone());
    let deadline = Instant::now() + timeout;
    loop {
        let s = client
            .get_status(v1::AuditStatusRequest {})
            .await?
            .into_inner();
        if s.position >= 0 && s.position as u64 >= s.head && !s.findings_digest.is_empty() {
            return Ok(s);
        }
        if Instant::now() > deadline {
            bail!(
                "the live audit did not catch up within {} s (at entry {} of {})",
                timeout.as_secs(),
                s.position,
                s.head
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Digits in groups of three: 1,564,300.
fn thousands(n: u64) -> String {
    ledger_fmt::group_digits(n.into(), ledger_fmt::Locale::En)
}

fn eur(c: i64) -> String {
    crate::present::eur(c)
}

fn pct(bp: i64) -> String {
    format!(
        "{}{}.{:02}%",
        if bp < 0 { "-" } else { "" },
        bp.abs() / 100,
        bp.abs() % 100
    )
}

/// The drills' envelopes and what each must get.
struct Drill {
    what: String,
    envelope: v1::Envelope,
}

/// The ingest drills, after the session: a resend, a forgery, an unknown device, a gap, an
/// equivocation (the one drill that leaves a finding), then a revocation and a refused report.
fn drills(
    devices: &[sim::DeviceSpec],
    keys: &Keys,
    next: &BTreeMap<String, u64>,
    signed: &session::SignedSession,
    now: i64,
) -> anyhow::Result<(Vec<Drill>, Vec<Drill>, sim::Expected)> {
    let mut first = Vec::new();
    // A table agent reconnects and resends its last 3 events: the original receipts come back.
    let table_group = signed
        .groups
        .iter()
        .find(|g| g.name != "floor")
        .context("no table group")?;
    let n = table_group.envelopes.len();
    for e in (n.saturating_sub(3)..n).filter_map(|i| table_group.envelopes.get(i)) {
        first.push(Drill {
            what: format!("{} resends an event after a reconnect", table_group.name),
            envelope: e,
        });
    }
    let key = |id: &str| keys.get(id).cloned().context("no key");
    let table_of = |id: &str| {
        devices
            .iter()
            .find(|d| d.device_id == id)
            .and_then(|d| d.table_ids.first().cloned())
            .unwrap_or_default()
    };
    let next_of = |id: &str| next.get(id).copied().unwrap_or(1);
    // A game result whose signature was altered on the way.
    let mut forged = DeviceSigner::new("M-LX-01", key("M-LX-01")?, next_of("M-LX-01")).sign(
        now,
        P::GamePlayed(v1::GamePlayed {
            machine_id: "M-LX-01".into(),
            game_number: 999_999,
            wager_cents: 100,
            win_cents: 1_000_000,
        }),
    );
    forged.signature[10] ^= 0x55;
    first.push(Drill {
        what: "a forged game result (signature altered)".into(),
        envelope: forged,
    });
    first.push(Drill {
        what: "an event from an unregistered machine".into(),
        envelope: DeviceSigner::new("M-XX-99", session::derived_key(0, "stranger"), 1).sign(
            now,
            P::GamePlayed(v1::GamePlayed {
                machine_id: "M-XX-99".into(),
                game_number: 1,
                wager_cents: 100,
                win_cents: 0,
            }),
        ),
    });
    let gap_table = &table_group.name;
    first.push(Drill {
        what: format!("{gap_table} skips 4 sequence numbers"),
        envelope: DeviceSigner::new(gap_table, key(gap_table)?, next_of(gap_table) + 4).sign(
            now,
            P::RoundOpened(v1::RoundOpened {
                table_id: table_of(gap_table),
                round_id: "after-hours-1".into(),
            }),
        ),
    });
    // A sequence the machine has used (5, or its last in a short session).
    let used = next_of(EQUIVOCATOR).saturating_sub(1).clamp(1, 5);
    first.push(Drill {
        what: format!(
            "{EQUIVOCATOR} signs a different event with its already used sequence {used}"
        ),
        envelope: DeviceSigner::new(EQUIVOCATOR, key(EQUIVOCATOR)?, used).sign(
            now,
            P::GamePlayed(v1::GamePlayed {
                machine_id: EQUIVOCATOR.into(),
                game_number: 4,
                wager_cents: 100,
                win_cents: 50_000,
            }),
        ),
    });
    // The operator revokes the last table's device; its next report is refused.
    let revoked = signed
        .groups
        .iter()
        .rev()
        .find(|g| g.name != "floor")
        .context("no table group")?
        .name
        .clone();
    let mut op = DeviceSigner::new(OPERATOR, key(OPERATOR)?, next_of(OPERATOR));
    let second = vec![
        Drill {
            what: format!("{OPERATOR} revokes {revoked} (table closed)"),
            envelope: op.sign(
                now,
                P::DeviceRevoked(v1::DeviceRevoked {
                    device_id: revoked.clone(),
                    reason: "table closed for the night".into(),
                }),
            ),
        },
        Drill {
            what: format!("{revoked} reports again"),
            envelope: DeviceSigner::new(&revoked, key(&revoked)?, next_of(&revoked)).sign(
                now,
                P::RoundOpened(v1::RoundOpened {
                    table_id: table_of(&revoked),
                    round_id: "after-hours-2".into(),
                }),
            ),
        },
    ];
    let expected = sim::Expected {
        code: "SECURITY_EQUIVOCATION".into(),
        subject: EQUIVOCATOR.into(),
        round_id: None,
        because: "the equivocation drill".into(),
    };
    Ok((first, second, expected))
}

/// One line per finding, for the summary.
fn finding_lines(f: &v1::Finding) -> String {
    let money = match (f.due_cents, f.reported_cents) {
        (Some(d), Some(r)) => format!("  due {}, reported {}", eur(d), eur(r)),
        (Some(d), None) => format!("  due {}", eur(d)),
        (None, Some(r)) => format!("  reported {}", eur(r)),
        _ => String::new(),
    };
    let round = if f.round_id.is_empty() {
        String::new()
    } else {
        format!(" round {}", f.round_id)
    };
    format!(
        "  #{:<3} {} {}{round}{money}\n        {}\n        rule: {}",
        f.seq,
        f.code,
        subject(f),
        f.message,
        f.citation
    )
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let started = Instant::now();
    // Generating and signing the session leave about 0.6 GB of temporaries, and streaming frees
    // the envelopes it sent and the ledger's passing buffers: freed memory goes back to the OS
    // at once, all through the demo (`ledgerd::allocator`). The demo shows a session, not a
    // latency figure: ledgerd itself keeps freed memory, for its receipts' latency.
    ledgerd::allocator::return_freed_memory();
    if a.rounds == 0 || (!a.honest && a.rounds <= 10) {
        bail!(
            "--rounds {}: the injected mistakes need at least 11 rounds a table (or --honest and at least 1)",
            a.rounds
        );
    }
    let dir = a.data_dir.clone();
    prepare(&dir)?;
    let say = |s: String| {
        if !json {
            println!("{s}");
        }
    };
    let mut checks: Vec<(String, bool)> = Vec::new();

    // ---- the session
    let t = Instant::now();
    let plan = sim::standard_plan(a.seed, 0, a.rounds, !a.honest, OPERATOR, REGULATOR);
    let tables = plan.tables.len();
    // The round an evidence bundle is made of when no payout finding was planted (--honest).
    let honest_round = plan
        .tables
        .first()
        .map(|t| (t.table_id.clone(), sim::round_id(&t.table_id, 0)));
    let session = tokio::task::spawn_blocking(move || {
        session::generate_encoded(&plan).map_err(anyhow::Error::from)
    })
    .await?
    .context("generating the session")?;
    let gen_secs = t.elapsed().as_secs_f64();
    let machines = session
        .devices
        .iter()
        .filter(|d| d.kind == ledger_core::DeviceKind::Machine)
        .count();
    say(format!(
        "casino session (seed {}): {tables} tables (one of every game, 2 casinos), {machines} slot machines, {} rounds ({} honest), {} events; {} findings expected; generated in {gen_secs:.1} s",
        a.seed,
        thousands(session.rounds as u64),
        thousands(session.honest_rounds as u64),
        thousands(session.events.len() as u64),
        session.expected.len(),
    ));

    // ---- keys and the ledger
    let operator = session::derived_key(a.seed, OPERATOR);
    let regulator = session::derived_key(a.seed, REGULATOR);
    ledger_agent::keys::write_pair(&dir.join("keys").join(OPERATOR), &operator)?;
    ledger_agent::keys::write_pair(&dir.join("keys").join(REGULATOR), &regulator)?;
    let keys = Keys::derive(
        a.seed,
        &session.devices,
        &[(OPERATOR, &operator), (REGULATOR, &regulator)],
        OPERATOR,
    );
    for d in &session.devices {
        if let Some(k) = keys.get(&d.device_id) {
            ledger_agent::keys::write_pair(&dir.join("keys").join(&d.device_id), k)?;
        }
    }
    let mut cfg = ledgerd::Config {
        listen: "127.0.0.1:0".parse()?,
        ledger_id: "casino-ledger-demo".into(),
        ..Default::default()
    };
    // The session is dated back to end a minute ago, days of play sent at once: a backlog, which
    // a long one makes older than the default age limit (seven days).
    cfg.ingest.max_past_age_ms = 0;
    // sled's cache: the demo writes and reads its ledger once, in order (the live audit reads
    // each group just written), so 64 MB serve it as 256 do, with 190 MB less memory.
    cfg.store.cache_capacity_mb = 64;
    cfg.principals = vec![
        ledgerd::config::PrincipalEntry {
            id: OPERATOR.into(),
            role: "operator".into(),
            public_key: hex::encode(operator.verifying_key().as_bytes()),
        },
        ledgerd::config::PrincipalEntry {
            id: REGULATOR.into(),
            role: "regulator".into(),
            public_key: hex::encode(regulator.verifying_key().as_bytes()),
        },
    ];
    // TLS with client certificates, as a deployment runs it: a CA, ledgerd's certificate, and
    // the demo's client, a regulator principal (it submits every device's signed events and
    // reads everything back).
    let pki = dir.join("pki");
    crate::pki::create_ca(&pki, "casino-ledger demo CA", 2)?;
    let (server_cert, server_key) = crate::pki::issue_server(
        &pki,
        "ledgerd",
        &["127.0.0.1".into(), "localhost".into()],
        2,
    )?;
    let (client_cert, client_key) = crate::pki::issue_client(&pki, DEMO_CLIENT, 2)?;
    cfg.tls.cert_chain = Some(server_cert);
    cfg.tls.key = Some(server_key);
    cfg.tls.client_ca = vec![pki.join("ca.pem")];
    cfg.clients = vec![ledgerd::config::ClientEntry {
        name: DEMO_CLIENT.into(),
        role: "regulator".into(),
        casinos: vec![],
        fingerprint: crate::pki::fingerprint(&client_cert)?,
    }];
    // The mirror's certificate at the ledger: a regulator there, as a regulator's mirror is.
    let mirror_client = if a.no_mirror {
        None
    } else {
        let (entry, cert, key) = crate::demo_mirror::client(&pki)?;
        cfg.clients.push(entry);
        Some((cert, key))
    };
    // The first identity set wins: `--tls-ca/--tls-cert/--tls-key` given to ledgerctl would be for another
    // ledger, so the demo's own is set only when none was.
    if !ledger_agent::tls::set_default(ledger_agent::tls::ClientTls::from_files(
        &pki.join("ca.pem"),
        Some(&client_cert),
        Some(&client_key),
    )?) {
        anyhow::bail!(
            "ledgerctl demo makes its own certificates: run it without --tls-ca/--tls-cert/--tls-key (and LEDGER_CA/LEDGER_CERT/LEDGER_KEY)"
        );
    }
    // The ledger's key, and a witness as an inspectorate runs one (C2SP tlog-witness): it
    // cosigns each checkpoint it can check against the one it cosigned before.
    let ledger_key = session::derived_key(a.seed, "ledger");
    let (ledger_key_file, _) =
        ledger_agent::keys::write_pair(&dir.join("keys").join("ledger"), &ledger_key)?;
    cfg.ledger_key_file = Some(ledger_key_file);
    let witness_key = session::derived_key(a.seed, WITNESS);
    let witness_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let witness_addr = witness_listener.local_addr()?;
    let _witness = crate::witness::spawn(
        WITNESS.into(),
        witness_key.clone(),
        [(
            ledger_core::note::origin_of(&cfg.ledger_id),
            ledger_key.verifying_key(),
        )]
        .into(),
        dir.join("witness"),
        witness_listener,
    )?;
    let witness_public = witness_key.verifying_key();
    let mut kept_cfg = cfg.clone();
    kept_cfg.store.cache_capacity_mb = ledgerd::Config::default().store.cache_capacity_mb;
    cfg.witnesses = vec![ledgerd::config::WitnessEntry {
        name: WITNESS.into(),
        url: format!("http://{witness_addr}"),
        public_key: hex::encode(witness_public.as_bytes()),
        ml_dsa_public_key: None,
    }];
    // The configuration left behind serves the ledger without the demo's witness, which stops
    // with the demo.
    kept_cfg.witnesses.clear();
    let ledger_dir = dir.join("ledger");
    let server = ledgerd::Server::start(cfg, ledger_dir.clone(), ledgerd::Init::Create).await?;
    let ledger_public_key = server.ledger_public_key.clone();
    let url = format!("https://{}", server.addr);
    say(format!(
        "ledger started on {url} (TLS, client certificates in {}), data in {}, ledger key {}",
        pki.display(),
        ledger_dir.display(),
        server.ledger_public_key
    ));

    // ---- sign everything, dated so that the session ends a minute ago (start on the hour)
    let now = chrono::Utc::now().timestamp_millis();
    let offset = (now - session.end_ms - 60_000).div_euclid(3_600_000) * 3_600_000;
    let t = Instant::now();
    let events = session.events.len();
    let (mut session, signed) = {
        let keys = keys.clone();
        tokio::task::spawn_blocking(move || {
            let signed = session::sign_session(
                &session,
                &keys,
                &SignOptions {
                    offset_ms: offset,
                    registered_at_ms: offset,
                    operator_next_sequence: 1,
                    threads: 0,
                },
            );
            (session, signed)
        })
        .await?
    };
    let signed = signed?;
    // The envelopes are all the demo needs from now on.
    session.events = Vec::new();
    let sign_secs = t.elapsed().as_secs_f64();
    let start_time = chrono::DateTime::from_timestamp_millis(offset)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default();
    say(format!(
        "signed {} events on {} devices in {sign_secs:.1} s (session dated from {start_time})",
        thousands(signed.events() as u64),
        session.devices.len(),
    ));

    // ---- register, then stream
    let opts = ledger_agent::ClientOptions::default();
    let r = ledger_agent::submit_all(&url, &signed.registrations, &opts).await?;
    if let Some(bad) = session::first_refused(&r) {
        bail!("registration refused: {}", common::receipt_line(bad));
    }
    say(format!(
        "registered {} devices ({tables} table systems, {machines} machine agents), signed by {OPERATOR}",
        r.len()
    ));
    let ch = common::channel(&url).await?;
    let total = signed.events() as u64;
    let pb = common::progress(total, "streaming");
    let base = r.last().map_or(0, |x| x.index);
    let poll = {
        let (ch, pb) = (ch.clone(), pb.clone());
        tokio::spawn(async move {
            let mut q = QueryClient::new(ch);
            loop {
                if let Ok(h) = q.get_head(v1::GetHeadRequest {}).await {
                    pb.set_position(h.into_inner().index.saturating_sub(base));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let t = Instant::now();
    let opening =
        ledger_agent::submit_shared(&url, signed.opening.envelopes.clone(), &opts).await?;
    if let Some(bad) = session::first_refused(&opening) {
        bail!("{}", common::receipt_line(bad));
    }
    let streams = session::stream_groups_checked(&url, &signed.groups, &opts).await?;
    let stream_secs = t.elapsed().as_secs_f64();
    poll.abort();
    pb.finish_and_clear();
    for (g, s) in signed.groups.iter().zip(&streams) {
        if let Some(bad) = &s.refused {
            bail!("{}: {}", g.name, common::receipt_line(bad));
        }
    }
    let streamed = opening.len() + streams.iter().map(|s| s.receipts).sum::<usize>();
    let rate = streamed as f64 / stream_secs;
    say(format!(
        "streamed {} events ({} rounds) on {} concurrent agents in {stream_secs:.1} s: {} events/s, every one accepted and durable",
        thousands(streamed as u64),
        thousands(session.rounds as u64),
        signed.groups.len(),
        thousands(rate as u64),
    ));

    // ---- drills
    let (first, second, drill_expected) =
        drills(&session.devices, &keys, &signed.next_sequence, &signed, now)?;
    // The session's envelopes are sent: their memory goes back before the mirror starts.
    let agents = signed.groups.len();
    drop(signed);
    say("\ningest drills:".into());
    let mut drill_json = Vec::new();
    for batch in [first, second] {
        let envs: Vec<_> = batch.iter().map(|d| d.envelope.clone()).collect();
        let r = ledger_agent::submit_all(&url, &envs, &opts).await?;
        for (d, rc) in batch.iter().zip(&r) {
            say(format!("  {} -> {}", d.what, common::receipt_line(rc)));
            drill_json
                .push(serde_json::json!({"drill": d.what, "receipt": common::receipt_json(rc)}));
        }
    }
    let mut expected = session.expected.clone();
    expected.push(drill_expected);
    expected.sort();

    // ---- the mirror: a second ledgerd copying the ledger, beside it, from now on
    let mirror = match mirror_client {
        None => None,
        Some((client_cert, client_key)) => {
            let m = crate::demo_mirror::start(
                crate::demo_mirror::Setup {
                    source: &url,
                    ledger_id: "casino-ledger-demo",
                    ledger_key: &ledger_public_key,
                    ca: pki.join("ca.pem"),
                    client_cert,
                    client_key,
                    server_cert: pki.join("ledgerd.pem"),
                    server_key: pki.join("ledgerd.key"),
                    readers: kept_cfg
                        .clients
                        .iter()
                        .filter(|c| c.name == DEMO_CLIENT)
                        .cloned()
                        .collect(),
                },
                dir.join("mirror"),
                &ch,
            )
            .await?;
            say(format!(
                "mirror started on {} (its own store in {}, client {} at the ledger): copying and re-verifying every entry",
                m.url,
                m.dir.display(),
                crate::demo_mirror::CLIENT
            ));
            Some(m)
        }
    };

    // ---- the live audit
    let t = Instant::now();
    let status = wait_caught_up(&ch, Duration::from_secs(600)).await?;
    let catch_up_secs = t.elapsed().as_secs_f64();
    say(format!(
        "\nlive audit caught up {catch_up_secs:.1} s after the last receipt: entry {} of {}, {} findings",
        status.position, status.head, status.findings
    ));
    let findings = list_findings(&ch).await?;
    let (missing, unexpected) = compare(&expected, &findings);
    let exact = missing.is_empty() && unexpected.is_empty();
    checks.push(("findings are exactly the injected ones".into(), exact));
    let report = AuditClient::new(ch.clone())
        .get_report(v1::ReportRequest {
            from_ms: Some(0),
            to_ms: Some(chrono::Utc::now().timestamp_millis() + 86_400_000),
            ..Default::default()
        })
        .await?
        .into_inner();
    let live_trust: serde_json::Value = serde_json::from_str(
        &JackpotsClient::new(ch.clone())
            .get_liability(v1::LiabilityRequest {
                casino_id: String::new(),
            })
            .await?
            .into_inner()
            .json,
    )?;
    // ---- evidence of one disputed round: a bundle that an arbitrator checks offline
    let disputed = findings
        .iter()
        .find(|f| f.due_cents.is_some() && !f.round_id.is_empty())
        .map(|f| (f.table_id.clone(), f.round_id.clone()));
    let evidence = match disputed.or(if a.honest { honest_round } else { None }) {
        None => Err(anyhow::anyhow!("no planted payout finding to bundle")),
        Some((table_id, round_id)) => {
            let made = async {
                let mut checkpoints = CheckpointsClient::new(ch.clone());
                let cp = checkpoints
                    .create(v1::CreateCheckpointRequest {})
                    .await?
                    .into_inner();
                let size = ledger_core::record::check_checkpoint(&cp, None)
                    .map_err(|e| anyhow::anyhow!("{e}"))?
                    .tree
                    .map_or(0, |t| t.size);
                // ledgerd sends each new checkpoint to its witnesses; wait for the cosignature.
                let deadline = Instant::now() + Duration::from_secs(20);
                loop {
                    let got = checkpoints
                        .get_latest(v1::GetCheckpointRequest { cosigned: true })
                        .await
                        .ok()
                        .and_then(|c| {
                            ledger_core::record::check_checkpoint(&c.into_inner(), None).ok()
                        })
                        .and_then(|i| i.tree)
                        .map_or(0, |t| t.size);
                    if got >= size {
                        break;
                    }
                    if Instant::now() > deadline {
                        bail!(
                            "the demo's witness did not cosign the checkpoint of {size} entries within 20 s"
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let bundle = crate::evidence::build(&ch, &table_id, &round_id, true).await?;
                let file = dir.join(format!("evidence-{round_id}.json"));
                std::fs::write(&file, serde_json::to_string_pretty(&bundle)? + "\n")?;
                let key = ledger_core::signing::parse_public_key_hex(&ledger_public_key)?;
                let v = crate::evidence::verify(
                    &bundle,
                    &key,
                    &[(WITNESS.to_string(), witness_public.into())],
                )?;
                anyhow::Ok((file, v))
            };
            made.await
        }
    };
    match &evidence {
        Ok((file, v)) => say(format!(
            "\nevidence of the round {} at {}: {} ({} entries proven against the \
             checkpoint of {} entries cosigned by witness {WITNESS}, {} signatures, the rules \
             give the same {} findings)\n  check it: ledgerctl verify --evidence {} \
             --ledger-key {ledger_public_key} --witness-key {}",
            v.round_id,
            v.table_id,
            file.display(),
            v.entries,
            v.tree_size,
            v.signatures,
            v.findings_rederived,
            file.display(),
            ledger_core::note::cosigner_vkey(WITNESS, &witness_public)
        )),
        Err(e) => say(format!("\nevidence bundle: FAILED: {e:#}")),
    }
    checks.push((
        "a witness cosigned the checkpoint; an evidence bundle of a round verifies offline".into(),
        evidence.is_ok(),
    ));
    let mirrored = match mirror {
        None => None,
        Some(m) => Some(m.finish().await),
    };
    if let Some(m) = &mirrored {
        checks.push((
            "the mirror holds the ledger's head; its live digest = the ledger's".into(),
            m.as_ref().is_ok_and(|o| o.equal),
        ));
    }
    drop(ch);

    // ---- stop, verify, replay from genesis
    server.stop().await?;
    let serve_config = leave_config(&dir, kept_cfg, &ledger_public_key)?;
    let (console_config, console_password) = leave_console_config(&dir, &ledger_public_key)?;
    let t = Instant::now();
    let verified = {
        let d = ledger_dir.clone();
        tokio::task::spawn_blocking(move || crate::verify::verify_dir(&d, &Default::default()))
            .await?
    };
    let verify_secs = t.elapsed().as_secs_f64();
    checks.push(("the chain verifies offline".into(), verified.is_ok()));
    let t = Instant::now();
    let replay = {
        let d = ledger_dir.clone();
        tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            let head = Store::open_existing(&d)?.head()?.map_or(0, |(i, _)| i);
            let mut f = Follower::with_store(AuditStore::temporary()?, false)?;
            f.set_keep_rounds(false); // only the digest and the accounts are compared
            f.run_to_dir(&d, head, |_| {})?;
            let r = f.replayer();
            let r = r.read().map_err(|_| anyhow::anyhow!("poisoned"))?;
            Ok((
                head + 1,
                r.digest(),
                serde_json::to_value(r.book().trust_report())?,
                r.book().transfers().to_vec(),
                r.book().conservation().holds,
            ))
        })
        .await??
    };
    let replay_secs = t.elapsed().as_secs_f64();
    let (entries, digest, trust, transfers, conserved) = replay;
    let same_digest = digest.hex() == status.findings_digest && digest.count == status.findings;
    checks.push((
        "live digest = offline full-replay digest".into(),
        same_digest,
    ));
    checks.push((
        "live liabilities = offline full replay's".into(),
        trust == live_trust,
    ));
    checks.push(("captive values conserved to the cent".into(), conserved));
    let ok = checks.iter().all(|(_, ok)| *ok);

    // ---- summary
    let rows: Vec<&v1::ReportRow> = report
        .periods
        .first()
        .map(|p| {
            p.rows
                .iter()
                .filter(|r| r.table_id != "*" && r.casino_id != "*")
                .collect()
        })
        .unwrap_or_default();
    let grand = report
        .periods
        .first()
        .and_then(|p| p.rows.iter().find(|r| r.casino_id == "*"));
    let trust_report: jackpot::TrustReport = serde_json::from_value(trust.clone())?;
    let elapsed = started.elapsed().as_secs_f64();
    if json {
        let doc = serde_json::json!({
            "ok": ok,
            "checks": checks.iter().map(|(c, ok)| serde_json::json!({"check": c, "ok": ok})).collect::<Vec<_>>(),
            "seed": a.seed, "rounds_per_table": a.rounds, "honest": a.honest,
            "data_dir": ledger_dir,
            "config": serve_config,
            "console": {
                "config": console_config, "url": format!("https://{CONSOLE_LISTEN}"),
                "account": CONSOLE_ACCOUNT, "password": console_password,
            },
            "session": {
                "tables": tables, "machines": machines, "devices": session.devices.len(),
                "rounds": session.rounds, "honest_rounds": session.honest_rounds,
                "events": events, "generate_seconds": gen_secs,
                "start_ms": offset,
            },
            "stream": {
                "events": streamed, "agents": agents, "seconds": stream_secs,
                "events_per_second": rate, "sign_seconds": sign_secs,
            },
            "drills": drill_json,
            "mirror": match &mirrored {
                None => serde_json::Value::Null,
                Some(Ok(o)) => serde_json::to_value(o)?,
                Some(Err(e)) => serde_json::json!({"error": format!("{e:#}")}),
            },
            "evidence": match &evidence {
                Ok((file, v)) => serde_json::json!({"file": file, "round_id": v.round_id,
                    "table_id": v.table_id, "entries": v.entries, "findings": v.findings_rederived,
                    "witness_key": ledger_core::note::cosigner_vkey(WITNESS, &witness_public)}),
                Err(e) => serde_json::json!({"error": format!("{e:#}")}),
            },
            "live_audit": {
                "position": status.position, "head": status.head, "findings": status.findings,
                "findings_digest": status.findings_digest, "catch_up_seconds": catch_up_secs,
            },
            "findings": findings.iter().map(crate::findings::finding_json).collect::<Vec<_>>(),
            "expected": expected.iter().map(|e| serde_json::json!({
                "code": e.code, "subject": e.subject, "round_id": e.round_id, "because": e.because,
            })).collect::<Vec<_>>(),
            "missing": missing.iter().map(|(c, s, r)| serde_json::json!({"code": c, "subject": s, "round_id": r})).collect::<Vec<_>>(),
            "unexpected": unexpected.iter().map(|f| crate::findings::finding_json(f)).collect::<Vec<_>>(),
            "verify": match &verified {
                Ok(s) => crate::verify::summary_json(&ledger_dir.display().to_string(), s, verify_secs),
                Err(e) => serde_json::json!({"error": e.to_string()}),
            },
            "replay": {
                "entries": entries, "findings": digest.count, "findings_digest": digest.hex(),
                "seconds": replay_secs, "entries_per_second": entries as f64 / replay_secs,
            },
            "report": rows.iter().map(|r| serde_json::json!({
                "casino_id": r.casino_id, "table_id": r.table_id, "game": r.game,
                "rounds": r.rounds, "handle_cents": r.handle_cents,
                "reported_win_cents": r.reported_win_cents, "due_win_cents": r.due_win_cents,
                "hold_bp": r.hold_bp, "due_hold_bp": r.due_hold_bp,
                "discrepancies": r.discrepancies,
            })).collect::<Vec<_>>(),
            "liability": trust,
            "transfers": transfers,
            "seconds": elapsed,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(if ok { 0 } else { 1 });
    }

    println!(
        "\nfindings ({}, from the live audit over gRPC):",
        findings.len()
    );
    for f in &findings {
        println!("{}", finding_lines(f));
    }
    if exact {
        println!(
            "  = exactly the {} expected: {}",
            expected.len(),
            expected
                .iter()
                .map(|e| format!("{} at {}", e.code, e.subject))
                .collect::<Vec<_>>()
                .join(", ")
        );
    } else {
        for (c, s, r) in &missing {
            println!(
                "  MISSING: {c} at {s}{}",
                r.as_ref()
                    .map(|r| format!(" round {r}"))
                    .unwrap_or_default()
            );
        }
        for f in &unexpected {
            println!(
                "  UNEXPECTED: #{} {} at {}{}: {}",
                f.seq,
                f.code,
                subject(f),
                if f.round_id.is_empty() {
                    String::new()
                } else {
                    format!(" round {}", f.round_id)
                },
                f.message
            );
        }
    }

    println!("\nfindings digest");
    println!(
        "  live audit (GetStatus):        {} ({} findings)",
        status.findings_digest, status.findings
    );
    println!(
        "  offline replay from genesis:   {} ({} findings; {} entries in {replay_secs:.1} s, {} entries/s)",
        digest.hex(),
        digest.count,
        thousands(entries),
        thousands((entries as f64 / replay_secs) as u64),
    );
    println!("  {}", if same_digest { "equal" } else { "DIFFERENT" });
    match &mirrored {
        None => {}
        Some(Ok(o)) => {
            println!(
                "\nmirror {}: holds the ledger's head, entry {} ({}...), {} checkpoints, {} alarms; it held the head {:.1} s after it started",
                o.data_dir.display(),
                thousands(o.entries.saturating_sub(1)),
                &o.head_hash[..o.head_hash.len().min(16)],
                o.checkpoints,
                o.alarms,
                o.catch_up_seconds
            );
            println!(
                "  ledger's live audit (GetStatus): {} ({} findings)",
                o.source_findings_digest, o.source_findings
            );
            println!(
                "  mirror's live audit (GetStatus): {} ({} findings)",
                o.findings_digest, o.findings
            );
            println!("  {}", if o.equal { "equal" } else { "DIFFERENT" });
        }
        Some(Err(e)) => println!("\nmirror: FAILED: {e:#}"),
    }

    match &verified {
        Ok(s) => println!(
            "\nverify {}: OK in {verify_secs:.1} s: {} entries ({} events, {} ledger records incl. {} security finding), {} checkpoints, head {}",
            ledger_dir.display(),
            thousands(s.entries),
            thousands(s.events),
            s.ledger_records,
            s.security_findings,
            s.checkpoints,
            s.head_hash
                .map(|h| ledger_core::hex32(&h))
                .unwrap_or_default()
        ),
        Err(e) => println!("\nverify {}: FAILED: {e}", ledger_dir.display()),
    }

    println!("\ntables (GetReport; hold = casino win / handle, reported and due):");
    println!(
        "  {:<16} {:<26} {:>6} {:>16} {:>8} {:>8}",
        "casino", "table", "rounds", "handle", "hold", "due"
    );
    for r in &rows {
        println!(
            "  {:<16} {:<26} {:>6} {:>16} {:>8} {:>8}{}",
            r.casino_id,
            r.table_id,
            r.rounds,
            eur(r.handle_cents),
            pct(r.hold_bp),
            pct(r.due_hold_bp),
            if r.discrepancies > 0 {
                format!(
                    "  {} discrepanc{} ({})",
                    r.discrepancies,
                    if r.discrepancies == 1 { "y" } else { "ies" },
                    eur(r.discrepancy_abs_cents)
                )
            } else {
                String::new()
            }
        );
    }
    if let Some(g) = grand {
        println!(
            "  {:<16} {:<26} {:>6} {:>16} {:>8} {:>8}",
            "all",
            "",
            g.rounds,
            eur(g.handle_cents),
            pct(g.hold_bp),
            pct(g.due_hold_bp)
        );
    }

    println!("\ncaptive values held in trust (GetLiability):");
    for c in &trust_report.casinos {
        println!(
            "  {}: {} ({} sole, {} joint)",
            c.casino_id,
            eur(c.total_cents),
            eur(c.sole_cents),
            eur(c.joint_cents)
        );
        for p in &c.pools {
            let kind = serde_json::to_value(p.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            println!(
                "    {:<32} {:<13} {:>12}{}",
                p.pool_id.to_string(),
                kind,
                eur(p.captive_cents),
                if p.joint {
                    format!(
                        "  (joint with {})",
                        p.shared_with
                            .iter()
                            .map(|s| s.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                } else {
                    String::new()
                }
            );
        }
    }
    println!(
        "  every pool once: {}; conservation {}",
        eur(trust_report.total_cents),
        if conserved { "holds" } else { "BROKEN" }
    );
    for t in &transfers {
        println!(
            "  transfer {}: {} -> {}: {}",
            t.transfer.transfer_id,
            t.transfer.from_pool_id,
            t.transfer.to_pool_id,
            match (t.booked, t.codes.is_empty()) {
                (true, true) => format!(
                    "eligible, {} moved",
                    eur(jackpot::amount::to_cents(t.due_e4))
                ),
                (true, false) => format!(
                    "booked as carried out, {} moved, flagged ({})",
                    eur(jackpot::amount::to_cents(t.due_e4)),
                    codes_text(&t.codes)
                ),
                (false, _) => format!("not booked ({}), nothing moved", codes_text(&t.codes)),
            }
        );
    }

    println!("\nchecks:");
    for (c, ok) in &checks {
        println!("  [{}] {c}", if *ok { "ok" } else { "FAILED" });
    }
    println!(
        "\n{} in {elapsed:.0} s. Next: ledgerctl verify --data-dir {d}   |   ledgerctl audit --from-genesis --data-dir {d} --findings",
        if ok { "demo OK" } else { "demo FAILED" },
        d = ledger_dir.display()
    );
    let p = |f: &str| dir.join("pki").join(f).display().to_string();
    println!(
        "Serve it again: ledgerd --config {}   then: LEDGER_CA={} LEDGER_CERT={} LEDGER_KEY={} ledgerctl status",
        serve_config.display(),
        p("ca.pem"),
        p(&format!("{DEMO_CLIENT}.pem")),
        p(&format!("{DEMO_CLIENT}.key")),
    );
    println!(
        "The compliance console over it: ledger-console serve --config {}   then https://{CONSOLE_LISTEN} as {CONSOLE_ACCOUNT} / {console_password}",
        console_config.display(),
    );
    Ok(if ok { 0 } else { 1 })
}

/// The console's address in the configuration the demo leaves.
const CONSOLE_LISTEN: &str = "127.0.0.1:8443";
const CONSOLE_ACCOUNT: &str = "inspector";

/// Write DIR/console.toml (mode 0600): the compliance console over the ledger that
/// DIR/ledgerd.toml serves, one account with the demo's regulator certificate and a random
/// password (returned, for the demo to print), and the ledger's key for evidence bundles.
fn leave_console_config(dir: &Path, ledger_public_key: &str) -> anyhow::Result<(PathBuf, String)> {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::fs::canonicalize(dir)?;
    let password = ledger_console::auth::random_token()[..16].to_string();
    let hash = ledger_console::auth::hash_password(&password)
        .map_err(|e| anyhow::anyhow!("argon2id: {e}"))?;
    let p = |f: &str| dir.join("pki").join(f);
    let path = dir.join("console.toml");
    let text = format!(
        "# Left by `ledgerctl demo`: the compliance console over the demo's ledger (serve the ledger\n\
         # with ledgerd --config {ledgerd}, then ledger-console serve --config {this}).\n\
         listen = \"{CONSOLE_LISTEN}\"\n\
         ledgerd = \"https://{server}\"\n\
         ledgerd_ca = {ca:?}\n\
         ledger_public_key = \"{ledger_public_key}\"\n\
         [tls]\n\
         cert_chain = {cert:?}\n\
         key = {key:?}\n\
         [[accounts]]\n\
         name = \"{CONSOLE_ACCOUNT}\"\n\
         display_name = \"Demo inspector\"\n\
         password_hash = \"{hash}\"\n\
         client_cert = {client_cert:?}\n\
         client_key = {client_key:?}\n",
        ledgerd = dir.join("ledgerd.toml").display(),
        this = path.display(),
        server = crate::common::DEFAULT_SERVER,
        ca = p("ca.pem"),
        cert = p("ledgerd.pem"),
        key = p("ledgerd.key"),
        client_cert = p(&format!("{DEMO_CLIENT}.pem")),
        client_key = p(&format!("{DEMO_CLIENT}.key")),
    );
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok((path, password))
}

/// Write DIR/ledgerd.toml: the demo's configuration serving its ledger on the default address
/// (files relative to it, the ledger's key pinned), so that `ledgerd --config DIR/ledgerd.toml`
/// serves the demo's ledger afterwards.
fn leave_config(
    dir: &Path,
    mut cfg: ledgerd::Config,
    ledger_public_key: &str,
) -> anyhow::Result<PathBuf> {
    let dir = std::fs::canonicalize(dir)?;
    cfg.listen = crate::common::DEFAULT_SERVER.parse()?;
    cfg.data_dir = Some(dir.join("ledger"));
    cfg.ledger_public_key = Some(ledger_public_key.to_string());
    cfg.tls.cert_chain = Some("pki/ledgerd.pem".into());
    cfg.tls.key = Some("pki/ledgerd.key".into());
    cfg.tls.client_ca = vec!["pki/ca.pem".into()];
    // Relative to the configuration file, as the TLS files: the demo ran with DIR as given
    // (e.g. the relative `demo-data`), which ledgerd would otherwise join to DIR once more.
    if cfg.ledger_key_file.is_some() {
        cfg.ledger_key_file = Some("keys/ledger.key".into());
    }
    let path = dir.join("ledgerd.toml");
    let text = format!(
        "# Left by `ledgerctl demo`: serves its ledger (ledgerd --config {}). Its certificates\n\
         # are valid for 2 days.\n{}",
        path.display(),
        toml::to_string(&cfg)?
    );
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

fn codes_text(codes: &[rules_core::adjudication::Text]) -> String {
    codes
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_configuration_left_loads_and_its_password_signs_in() {
        let d = tempfile::tempdir().unwrap();
        let key = hex::encode(
            ed25519_dalek::SigningKey::from_bytes(&[7; 32])
                .verifying_key()
                .as_bytes(),
        );
        let (path, password) = leave_console_config(d.path(), &key).unwrap();
        let cfg = ledger_console::config::Config::load(&path).unwrap();
        assert!(cfg.evidence_keys().unwrap().is_some());
        assert_eq!(cfg.listen.to_string(), CONSOLE_LISTEN);
        assert_eq!(
            cfg.ledgerd,
            format!("https://{}", crate::common::DEFAULT_SERVER)
        );
        let a = &cfg.accounts[0];
        assert_eq!(a.name, CONSOLE_ACCOUNT);
        assert!(a.client_cert.ends_with("pki/demo-regulator.pem"));
        let hash = a.password_hash.as_deref().unwrap();
        assert!(ledger_console::auth::verify_password(&password, hash));
        assert!(!ledger_console::auth::verify_password("guess", hash));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    fn finding(seq: u64, code: &str, table: &str, round: &str, pool: &str) -> v1::Finding {
        v1::Finding {
            seq,
            code: code.into(),
            table_id: table.into(),
            round_id: round.into(),
            pool_id: pool.into(),
            ..Default::default()
        }
    }

    fn expected(code: &str, subject: &str, round: Option<&str>) -> sim::Expected {
        sim::Expected {
            code: code.into(),
            subject: subject.into(),
            round_id: round.map(str::to_string),
            because: String::new(),
        }
    }

    #[test]
    fn a_missing_and_an_unexpected_finding_are_both_named() {
        let want = vec![
            expected("RL_WRONG_PAYOUT", "T02", Some("T02-00007")),
            expected("SLOT_TRANSFER_TARGET_INVALID", "JP-1", None),
        ];
        // Two findings for one expected key are fine; a key not expected is not.
        let found = vec![
            finding(0, "RL_WRONG_PAYOUT", "T02", "T02-00007", ""),
            finding(1, "RL_WRONG_PAYOUT", "T02", "T02-00007", ""),
            finding(2, "AUDIT_ROUND_NOT_SETTLED", "T05", "T05-00001", ""),
        ];
        let (missing, unexpected) = compare(&want, &found);
        assert_eq!(
            missing,
            vec![(
                "SLOT_TRANSFER_TARGET_INVALID".to_string(),
                "JP-1".to_string(),
                None
            )]
        );
        assert_eq!(unexpected.len(), 1);
        assert_eq!(unexpected[0].seq, 2);
        let (missing, unexpected) = compare(&want[..1], &found[..2]);
        assert!(missing.is_empty() && unexpected.is_empty());
        // A pool finding's subject is its pool, a round finding's its table.
        assert_eq!(subject(&finding(0, "X", "T1", "", "P1")), "P1");
        assert_eq!(subject(&finding(0, "X", "T1", "R1", "P1")), "T1");
    }
}
