//! `ledgerctl demo`: the whole story in one command. Starts a ledger on a local data directory,
//! registers the simulated casino's devices (operator-signed), streams a session over real gRPC
//! (one stream per device, every event signed by its device), shows how the ledger answers
//! resends, forgeries, gaps and equivocation, revokes a device, then stops the ledger, verifies
//! the data directory offline, exports it, verifies the export, and prints a summary.
//!
//! The pipeline (register → stream → verify → summary) does not depend on the generator: it
//! takes `SimEvent`s (device id, time, unsigned payload) from `ledger_agent::sim`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use ed25519_dalek::SigningKey;
use ledger_agent::{DeviceSigner, sim};
use ledger_core::proto::{self as v1, event_body::Payload as P};

use crate::common;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Working directory of the demo: the ledger (DIR/ledger), keys (DIR/keys) and the export
    /// (DIR/export.jsonl). Emptied at the start if it holds a previous demo.
    #[arg(long, value_name = "DIR", default_value = "demo-data")]
    pub data_dir: PathBuf,
    /// Rounds played at each table.
    #[arg(long, default_value_t = 60)]
    pub rounds: usize,
    /// Games played on each slot machine.
    #[arg(long, default_value_t = 120)]
    pub games: usize,
    /// Number of slot machines.
    #[arg(long, default_value_t = 4)]
    pub machines: usize,
    /// Seed of the simulated session (same seed, same session).
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
}

const MARKER: &str = ".ledgerctl-demo";

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

struct Tally {
    receipts: BTreeMap<&'static str, u64>,
}

impl Tally {
    fn add(&mut self, rs: &[v1::Receipt]) {
        for r in rs {
            *self.receipts.entry(common::status_name(r)).or_default() += 1;
        }
    }
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let dir = a.data_dir.clone();
    prepare(&dir)?;
    let say = |s: String| {
        if !json {
            println!("{s}");
        }
    };
    // Keys: the operator's (registry) and the inspectorate's.
    let operator = ledger_agent::keys::generate();
    let regulator = ledger_agent::keys::generate();
    ledger_agent::keys::write_pair(&dir.join("keys/operator-1"), &operator)?;
    ledger_agent::keys::write_pair(&dir.join("keys/inspectorate"), &regulator)?;
    let mut cfg = ledgerd::Config {
        listen: "127.0.0.1:0".parse()?,
        ledger_id: "casino-lisboa-demo".into(),
        ..Default::default()
    };
    cfg.principals = vec![
        ledgerd::config::PrincipalEntry {
            id: "operator-1".into(),
            role: "operator".into(),
            public_key: hex::encode(operator.verifying_key().as_bytes()),
        },
        ledgerd::config::PrincipalEntry {
            id: "inspectorate".into(),
            role: "regulator".into(),
            public_key: hex::encode(regulator.verifying_key().as_bytes()),
        },
    ];
    let ledger_dir = dir.join("ledger");
    let server = ledgerd::Server::start(cfg, ledger_dir.clone()).await?;
    let url = format!("http://{}", server.addr);
    say(format!(
        "ledger started on {url}, data in {}, ledger key {}",
        ledger_dir.display(),
        server.ledger_public_key
    ));

    let mut tally = Tally {
        receipts: BTreeMap::new(),
    };
    let opts = ledger_agent::ClientOptions::default();

    // 1. Register the devices (operator-signed events, in the chain).
    let mut generator = sim::CasinoSim::new(a.seed, a.machines);
    let devices = generator.devices();
    let mut op = DeviceSigner::new("operator-1", operator.clone(), 1);
    let mut keys: HashMap<String, SigningKey> = HashMap::new();
    let now = chrono::Utc::now().timestamp_millis();
    let mut regs = Vec::new();
    for d in &devices {
        let k = ledger_agent::keys::generate();
        ledger_agent::keys::write_pair(&dir.join("keys").join(&d.device_id), &k)?;
        regs.push(op.sign(
            now,
            ledger_agent::signer::registration(d, &k.verifying_key()),
        ));
        keys.insert(d.device_id.clone(), k);
    }
    let r = ledger_agent::submit_all(&url, &regs, &opts).await?;
    tally.add(&r);
    if let Some(bad) = r.iter().find(|r| common::status_name(r) != "accepted") {
        bail!("registration refused: {}", common::receipt_line(bad));
    }
    say(format!(
        "registered {} devices ({} tables, {} slot machines), signed by operator-1",
        devices.len(),
        3,
        a.machines
    ));

    // 2. The session: sign every event on its device, one gRPC stream per device.
    // The session is dated so that it ends now (events far in the future are refused).
    let events = generator.session(0, a.rounds, a.games);
    let span = events.last().map(|e| e.occurred_at_ms).unwrap_or(0);
    let start_ms = now - span - 1_000;
    let mut per_device: BTreeMap<String, Vec<v1::Envelope>> = BTreeMap::new();
    let mut signers: HashMap<String, DeviceSigner> = keys
        .iter()
        .map(|(id, k)| (id.clone(), DeviceSigner::new(id, k.clone(), 1)))
        .collect();
    for e in &events {
        let s = signers
            .get_mut(&e.device_id)
            .context("event of an unknown simulated device")?;
        per_device
            .entry(e.device_id.clone())
            .or_default()
            .push(s.sign(start_ms + e.occurred_at_ms, e.payload.clone()));
    }
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for (dev, envs) in per_device.clone() {
        let (url, opts) = (url.clone(), opts.clone());
        tasks.push(tokio::spawn(async move {
            (dev, ledger_agent::submit_all(&url, &envs, &opts).await)
        }));
    }
    let mut session_receipts = 0usize;
    for t in tasks {
        let (dev, r) = t.await?;
        let r = r.with_context(|| format!("streaming {dev}"))?;
        if let Some(bad) = r.iter().find(|r| common::status_name(r) != "accepted") {
            bail!("{dev}: {}", common::receipt_line(bad));
        }
        session_receipts += r.len();
        tally.add(&r);
    }
    let secs = t0.elapsed().as_secs_f64();
    say(format!(
        "streamed {session_receipts} signed events on {} concurrent streams in {secs:.2} s: all accepted and durable",
        per_device.len()
    ));

    // 3. What the ledger does with resends, forgeries, gaps and equivocation.
    say("\ntamper and failure drills:".into());
    let roulette = &per_device["table-roulette-1"];
    let resend: Vec<_> = roulette[roulette.len() - 3..].to_vec();
    let r = ledger_agent::submit_all(&url, &resend, &opts).await?;
    tally.add(&r);
    say(format!(
        "  agent resends its last 3 events after a reconnect -> {} (original receipts returned)",
        r.iter()
            .map(common::status_name)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let slot1 = signers.get_mut("slot-01").context("slot-01")?;
    let mut forged = slot1.sign(
        now,
        P::GamePlayed(v1::GamePlayed {
            machine_id: "slot-01".into(),
            game_number: 999_999,
            wager_cents: 100,
            win_cents: 1_000_000,
        }),
    );
    slot1.next_sequence -= 1;
    forged.signature[10] ^= 0x55;
    let stranger = ledger_agent::keys::generate();
    let unknown = DeviceSigner::new("slot-99", stranger, 1).sign(
        now,
        P::GamePlayed(v1::GamePlayed {
            machine_id: "slot-99".into(),
            game_number: 1,
            wager_cents: 100,
            win_cents: 0,
        }),
    );
    let bj = signers.get_mut("table-blackjack-1").context("bj")?;
    bj.next_sequence += 4;
    let gap = bj.sign(
        now,
        P::RoundOpened(v1::RoundOpened {
            table_id: "BJ-01".into(),
            round_id: "BJ-01-99999".into(),
        }),
    );
    bj.next_sequence -= 5;
    let slot2_key = keys["slot-02"].clone();
    let equivocation = DeviceSigner::new("slot-02", slot2_key, 5).sign(
        start_ms,
        P::GamePlayed(v1::GamePlayed {
            machine_id: "slot-02".into(),
            game_number: 4,
            wager_cents: 100,
            win_cents: 50_000,
        }),
    );
    let drills = [
        ("a forged game result (signature altered)", forged),
        ("an event from an unregistered machine", unknown),
        ("a table skipping 4 sequence numbers", gap),
        (
            "slot-02 signs a different event with an already used sequence",
            equivocation,
        ),
    ];
    let envs: Vec<_> = drills.iter().map(|d| d.1.clone()).collect();
    let r = ledger_agent::submit_all(&url, &envs, &opts).await?;
    tally.add(&r);
    for ((what, _), rc) in drills.iter().zip(&r) {
        say(format!("  {what} -> {}", common::receipt_line(rc)));
    }
    // Revoke a machine: its later events are refused.
    let revoke = op.sign(
        now,
        P::DeviceRevoked(v1::DeviceRevoked {
            device_id: format!("slot-{:02}", a.machines),
            reason: "machine removed from the floor".into(),
        }),
    );
    let mut last = signers
        .remove(&format!("slot-{:02}", a.machines))
        .context("last slot")?;
    let after = last.sign(
        now,
        P::GamePlayed(v1::GamePlayed {
            machine_id: last.device_id.clone(),
            game_number: 100_000,
            wager_cents: 100,
            win_cents: 0,
        }),
    );
    let r = ledger_agent::submit_all(&url, &[revoke, after], &opts).await?;
    tally.add(&r);
    say(format!(
        "  operator-1 revokes {} -> {}",
        last.device_id,
        common::receipt_line(&r[0])
    ));
    say(format!(
        "  {} reports again -> {}",
        last.device_id,
        common::receipt_line(&r[1])
    ));

    // 4. Checkpoint, stop, verify offline, export, verify the export.
    server.stop().await?;
    say("\nledger stopped (shutdown checkpoint signed); verifying offline...".into());
    let t = Instant::now();
    let vd = {
        let d = ledger_dir.clone();
        tokio::task::spawn_blocking(move || crate::verify::verify_dir(&d, None)).await?
    };
    let vd_secs = t.elapsed().as_secs_f64();
    let export_path = dir.join("export.jsonl");
    let (d, e) = (ledger_dir.clone(), export_path.clone());
    let exported = tokio::task::spawn_blocking(move || crate::export::export_dir(&d, &e)).await??;
    let e = export_path.clone();
    let vf = tokio::task::spawn_blocking(move || crate::verify::verify_file(&e, None)).await?;

    // 5. Summary.
    let summary = session_summary(&events);
    let ok = vd.is_ok() && vf.is_ok();
    if json {
        let s = vd.as_ref().ok();
        println!(
            "{}",
            serde_json::json!({
                "ok": ok,
                "data_dir": ledger_dir, "export": export_path, "exported_entries": exported,
                "devices": devices.len(), "session_events": session_receipts, "stream_seconds": secs,
                "receipts": tally.receipts,
                "verify_data_dir": s.map(|s| crate::verify::summary_json(&ledger_dir.display().to_string(), s, vd_secs)),
                "verify_data_dir_error": vd.as_ref().err().map(|e| e.to_string()),
                "verify_export_error": vf.as_ref().err().map(|e| e.to_string()),
                "session": summary,
            })
        );
    } else {
        println!("\nsummary");
        println!(
            "  receipts: {}",
            tally
                .receipts
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (k, v) in summary.as_object().into_iter().flatten() {
            let shown = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Object(o) => o
                    .iter()
                    .map(|(a, b)| format!("{a} {b}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            println!("  {}: {shown}", k.replace('_', " "));
        }
        match &vd {
            Ok(s) => println!(
                "  verify {}: OK, {} entries ({} events, {} ledger records incl. {} security finding), {} checkpoints, head {}",
                ledger_dir.display(),
                s.entries,
                s.events,
                s.ledger_records,
                s.security_findings,
                s.checkpoints,
                s.head_hash
                    .map(|h| ledger_core::hex32(&h))
                    .unwrap_or_default()
            ),
            Err(e) => println!("  verify {}: FAILED: {e}", ledger_dir.display()),
        }
        match &vf {
            Ok(s) => println!(
                "  verify {}: OK, {} entries",
                export_path.display(),
                s.entries
            ),
            Err(e) => println!("  verify {}: FAILED: {e}", export_path.display()),
        }
        println!(
            "\nnext: ledgerctl verify --data-dir {}   |   ledgerctl verify --file {}",
            ledger_dir.display(),
            export_path.display()
        );
    }
    Ok(if ok { 0 } else { 1 })
}

/// What happened in the session, from the events themselves.
fn session_summary(events: &[sim::SimEvent]) -> serde_json::Value {
    let mut rounds: BTreeMap<String, u64> = BTreeMap::new();
    let (mut staked, mut player_net) = (0i64, 0i64);
    let (mut coin_in, mut coin_out, mut games) = (0i64, 0i64, 0u64);
    for e in events {
        match &e.payload {
            P::RoundOpened(r) => *rounds.entry(r.table_id.clone()).or_default() += 1,
            P::BetPlaced(b) => staked += b.amount_cents,
            P::RoundSettled(s) => player_net += s.results.iter().map(|r| r.net_cents).sum::<i64>(),
            P::GamePlayed(g) => {
                coin_in += g.wager_cents;
                coin_out += g.win_cents;
                games += 1;
            }
            _ => {}
        }
    }
    let eur = |c: i64| {
        format!(
            "{}{}.{:02} EUR",
            if c < 0 { "-" } else { "" },
            c.abs() / 100,
            c.abs() % 100
        )
    };
    serde_json::json!({
        "rounds_per_table": rounds,
        "table_stakes": eur(staked),
        "table_house_result": eur(-player_net),
        "slot_games": games,
        "slot_coin_in": eur(coin_in),
        "slot_coin_out": eur(coin_out),
    })
}
