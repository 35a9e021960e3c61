//! The standard casino session (every table game over two casinos, the slot floor with its
//! jackpots and superjackpot, the injected mistakes) streamed over real gRPC into the real ledgerd,
//! with two kill -9 while the live audit is behind the head:
//! * (a) the audit's ListFindings is exactly the expected set: codes, subjects, rounds, and the
//!   due and reported amounts (those of the library-level replay of the same session, and the
//!   reported ones those of the settlements the tables signed);
//! * (d) after the restarts the findings' sequence runs from 0 without a gap or a duplicate;
//! * (c) the live digest equals a full replay's: `ledgerctl audit --from-genesis --file` of an
//!   export taken while ledgerd runs, and `--data-dir` after it stopped;
//! * (d) an offline replay with `--out DIR` killed midway, then `--resume`d, gives the same digest.

#[path = "support/play.rs"]
mod play;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use casino_play::sim;
use e2e::*;
use ledger_core::proto::{self as v1, event_body::Payload as P};

const SEED: u64 = 2026;
/// Rounds per table: 16 tables, so 4,800 rounds (about 160,000 events).
const ROUNDS: usize = 300;

/// What a library-level finding is about (as `play::subject`).
fn library_key(f: &audit::Finding) -> (String, String, Option<String>, String) {
    let subject = f
        .table_id
        .clone()
        .filter(|_| f.round_id.is_some())
        .or(f.pool_id.clone())
        .or(f.machine_id.clone())
        .or(f.table_id.clone())
        .or(f.device_id.clone())
        .unwrap_or_default();
    (
        f.code.clone(),
        subject,
        f.round_id.clone(),
        f.bet_id.clone().unwrap_or_default(),
    )
}

type Amounts = (Option<i64>, Option<i64>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standard_session_over_grpc_finds_exactly_the_injected_mistakes_through_restarts() {
    let t0 = Instant::now();
    let plan = sim::standard_plan(SEED, 0, ROUNDS, true, play::OPERATOR, "inspectorate");
    let offset = plan.misreported_pool.clone().expect("a misreported pool").1;
    let session = sim::generate(&plan).expect("generate");
    assert_eq!(session.rounds, 16 * ROUNDS);
    let signed = play::sign(&session, SEED);
    let events = signed.events() as u64;
    eprintln!(
        "session: {} rounds, {events} events, {} expected findings; generated and signed in {:.1} s",
        session.rounds,
        session.expected.len(),
        t0.elapsed().as_secs_f64()
    );

    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let data = dir.path().join("data");
    let mut l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let addr = l.addr.clone();
    let url = l.url();
    play::register_and_open(&url, &signed).await;
    let base = play::status(&url).await.head;

    // Stream every group concurrently; the agents resend from their last receipt after a kill.
    let t = Instant::now();
    let agents = {
        let (url, signed) = (url.clone(), signed.clone());
        tokio::spawn(async move { play::stream(&url, &signed, &play::patient()).await })
    };
    let mut behind = Vec::new();
    for k in 1..=2u64 {
        let threshold = base + k * events / 3;
        loop {
            let s = play::status(&url).await;
            if s.head >= threshold {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let s = play::status(&url).await;
        behind.push((s.position, s.head));
        l.kill9();
        tokio::time::sleep(Duration::from_millis(300)).await;
        l = Ledgerd::start(&data, &cfg, &addr);
    }
    agents.await.expect("the agents finished");
    let stream_secs = t.elapsed().as_secs_f64();
    assert!(
        behind.iter().any(|(p, h)| *p < *h as i64),
        "the live audit was behind the head at a kill: {behind:?}"
    );
    let t = Instant::now();
    let status = play::wait_caught_up(&url, Duration::from_secs(600)).await;
    eprintln!(
        "streamed {events} events through 2 kill -9 (audit at/head when killed: {behind:?}) in {stream_secs:.1} s; caught up {:.1} s later",
        t.elapsed().as_secs_f64()
    );

    // (a) exactly the expected findings, over gRPC.
    let found = play::findings(&url).await;
    assert_eq!(found.len() as u64, status.findings);
    play::assert_contiguous_and_unique(&found);
    let mut got: Vec<play::Key> = found.iter().map(play::key).collect();
    got.sort();
    got.dedup();
    assert_eq!(
        got,
        play::expected_keys(&session.expected),
        "\nfound:\n{}",
        play::describe(&found)
    );
    // The amounts: those of the library-level replay of the same session, finding for finding.
    let mut library: BTreeMap<(String, String, Option<String>, String), Vec<Amounts>> =
        BTreeMap::new();
    for f in play::library_findings(&session) {
        library
            .entry(library_key(&f))
            .or_default()
            .push((f.due_cents, f.reported_cents));
    }
    let mut live: BTreeMap<(String, String, Option<String>, String), Vec<Amounts>> =
        BTreeMap::new();
    for f in &found {
        let (code, subject, round) = play::key(f);
        live.entry((code, subject, round, f.bet_id.clone()))
            .or_default()
            .push((f.due_cents, f.reported_cents));
    }
    assert_eq!(live, library, "\nfound:\n{}", play::describe(&found));
    // The reported amounts are those the tables signed; the misreported captive value is off
    // by exactly the injected amount.
    let mut settled: BTreeMap<(String, String), &v1::RoundSettled> = BTreeMap::new();
    for e in &session.events {
        if let P::RoundSettled(s) = &e.payload {
            settled.insert((s.table_id.clone(), s.round_id.clone()), s);
        }
    }
    let mut with_amounts = 0;
    for f in &found {
        if let (Some(due), Some(reported)) = (f.due_cents, f.reported_cents) {
            with_amounts += 1;
            assert_ne!(due, reported, "a discrepancy: {f:?}");
            if f.code == "SLOT_JACKPOT_CAPTIVE_MISMATCH" {
                assert_eq!(reported - due, offset, "{f:?}");
            }
            if !f.round_id.is_empty() && !f.bet_id.is_empty() {
                let s = settled
                    .get(&(f.table_id.clone(), f.round_id.clone()))
                    .unwrap_or_else(|| panic!("no settlement for {f:?}"));
                let signed_net: i64 = s
                    .results
                    .iter()
                    .filter(|r| {
                        r.bet_id == f.bet_id || f.bet_id.ends_with(&format!("/{}", r.bet_id))
                    })
                    .map(|r| r.net_cents)
                    .sum();
                assert_eq!(reported, signed_net, "{f:?}");
            }
        }
    }
    assert!(with_amounts >= 4, "\n{}", play::describe(&found));

    // (c) an export taken while ledgerd runs, replayed from genesis offline.
    let export = dir.path().join("chain.export");
    let (code, out, err) = ledgerctl(&[
        "export",
        "--server",
        &url,
        "--out",
        export.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let live_digest = (status.findings, status.findings_digest.clone());
    let from_file = play::ledgerctl_audit(&["--from-genesis", "--file", export.to_str().unwrap()]);
    assert_eq!(play::digest_of(&from_file), live_digest, "{from_file}");

    // ... and the stopped ledger's data directory.
    l.stop();
    let d = data.to_str().unwrap();
    let out_dir = dir.path().join("replay");
    let o = out_dir.to_str().unwrap();
    let t = Instant::now();
    let full = play::ledgerctl_audit(&["--from-genesis", "--data-dir", d, "--out", o]);
    let full_secs = t.elapsed().as_secs_f64();
    assert_eq!(play::digest_of(&full), live_digest, "{full}");
    let head = full["position"].as_u64().expect("position");

    // (d) the offline replay, killed midway, resumed: the same digest.
    let mut midway = None;
    for fraction in [0.5, 0.3, 0.7, 0.15, 0.85] {
        let _ = std::fs::remove_dir_all(&out_dir);
        let mut child = std::process::Command::new(bin("ledgerctl"))
            .args([
                "audit",
                "--from-genesis",
                "--data-dir",
                d,
                "--out",
                o,
                "--snapshot-every",
                "0",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn ledgerctl");
        std::thread::sleep(Duration::from_secs_f64(full_secs * fraction));
        let finished = child.try_wait().expect("wait").is_some();
        let _ = child.kill();
        let _ = child.wait();
        if finished {
            continue;
        }
        let position = {
            let store = ledger_audit::store::AuditStore::open(&out_dir).expect("open --out");
            ledger_audit::live::Follower::with_store(store, false)
                .expect("resume")
                .position()
        };
        if let Some(p) = position.filter(|p| *p > 0 && *p < head) {
            midway = Some(p);
            break;
        }
    }
    let midway = midway.expect("an interrupted replay with a snapshot midway");
    let resumed =
        play::ledgerctl_audit(&["--from-genesis", "--data-dir", d, "--out", o, "--resume"]);
    assert_eq!(resumed["resumed_after"].as_u64(), Some(midway), "{resumed}");
    assert_eq!(play::digest_of(&resumed), live_digest, "{resumed}");
    eprintln!(
        "digest {} over {} findings: live = export replay = full replay = replay resumed after entry {midway} of {head}; test took {:.1} s",
        live_digest.1,
        live_digest.0,
        t0.elapsed().as_secs_f64()
    );
}

/// The audit store is derived data: a damaged one (here its sled settings file, whose checksum
/// then fails) must not keep the ledger from starting and taking events. ledgerd keeps it for
/// inspection as `audit.damaged-<time>`, says so in its log, and rebuilds the audit from the
/// chain: the same findings, digest and rounds as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_audit_store_is_set_aside_and_rebuilt_from_the_chain() {
    let plan = sim::standard_plan(SEED, 0, 6, true, play::OPERATOR, "inspectorate");
    let session = sim::generate(&plan).expect("generate");
    let signed = play::sign(&session, SEED);
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    play::register_and_open(&url, &signed).await;
    play::stream(&url, &signed, &play::patient()).await;
    let before = play::wait_caught_up(&url, Duration::from_secs(120)).await;
    let found = play::findings(&url).await;
    assert!(!found.is_empty());
    l.stop();

    std::fs::write(
        data.join("audit").join("conf"),
        b"segment_size: 1\nversion: 0.\n",
    )
    .unwrap();
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let after = play::wait_caught_up(&url, Duration::from_secs(120)).await;
    assert_eq!(
        (
            after.head,
            after.findings,
            &after.findings_digest,
            after.rounds
        ),
        (
            before.head,
            before.findings,
            &before.findings_digest,
            before.rounds
        )
    );
    assert_eq!(play::findings(&url).await, found);
    // Events are still taken after the rebuild.
    let op_next = signed.next_sequence[play::OPERATOR];
    let t = register(&url, op_next, &[table("rebuilt-t", "RB-01")]).await;
    assert_eq!(t.len(), 1);
    let log = l.stderr_text();
    assert!(
        log.contains("the audit store is damaged: set aside"),
        "{log}"
    );
    l.stop();
    let aside: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("audit.damaged-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    let kept = std::fs::read(data.join(&aside[0]).join("conf")).unwrap();
    assert_eq!(
        kept, b"segment_size: 1\nversion: 0.\n",
        "the damaged store is kept as it was"
    );
}
