//! The `ledger-agent` tool against a real ledgerd: JSON Lines from a file, standard input or a
//! spool directory; its crash-safe outbox through `kill -9` of the agent and of ledgerd; what it
//! refuses (a bad line, an unregistered device, an old copy of its outbox).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use casino_play::sim::DeviceSpec;
use e2e::*;
use ledger_core::proto::{self as v1, event_body::Payload as P, query_client::QueryClient};
use prost::Message;
use tokio_stream::StreamExt;

const MACHINE: &str = "M-01";

fn machine() -> DeviceSpec {
    DeviceSpec {
        device_id: "agent-m-01".into(),
        kind: ledger_core::DeviceKind::Machine,
        casino_id: "casino-lisboa".into(),
        table_ids: vec![],
        machine_id: MACHINE.into(),
        model_id: "MODEL-A".into(),
        bet_values_cents: vec![100],
        description: "slot machine".into(),
    }
}

/// A ledger with the machine registered, and its key file: (dir, ledgerd, key file).
async fn ledger_with_machine() -> (tempfile::TempDir, Ledgerd, PathBuf) {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let signer = register(&l.url(), 1, &[machine()]).await.remove(0);
    let key = dir.path().join("machine.key");
    std::fs::write(&key, hex::encode(signer.key().to_bytes())).unwrap();
    (dir, l, key)
}

/// Game `n` as one JSON line.
fn game_line(n: u64) -> String {
    format!(
        "{{\"occurredAtMs\":\"{}\",\"gamePlayed\":{{\"machineId\":\"{MACHINE}\",\"gameNumber\":\"{n}\",\"wagerCents\":\"100\",\"winCents\":\"{}\"}}}}\n",
        now_ms() - 1_000,
        if n.is_multiple_of(7) { 500 } else { 0 }
    )
}

fn write_games(path: &Path, from: u64, to: u64) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for n in from..=to {
        f.write_all(game_line(n).as_bytes()).unwrap();
    }
}

/// `ledger-agent SUB [--server URL] --device-id .. --key KEY --outbox OUTBOX EXTRA..`.
fn agent_args(sub: &str, url: &str, key: &Path, outbox: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![sub.to_string()];
    if sub != "status" && sub != "receipt" {
        a.extend(["--server".into(), url.to_string()]);
    }
    a.extend([
        "--device-id".into(),
        machine().device_id,
        "--key".into(),
        key.display().to_string(),
        "--outbox".into(),
        outbox.display().to_string(),
    ]);
    a.extend(extra.iter().map(|e| e.to_string()));
    a
}

fn spawn_agent(args: &[String], stdin: Stdio) -> Child {
    // A device principal: what a machine's agent is given (ingest, its device's registration
    // and entries).
    Command::new(bin("ledger-agent"))
        .args(args)
        .envs(tls_env("e2e-device"))
        .env("RUST_LOG", "warn")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ledger-agent")
}

/// Run the agent to its end (at most `limit`): (exit code, stdout, stderr).
fn run_agent(args: &[String], limit: Duration) -> (i32, String, String) {
    let child = spawn_agent(args, Stdio::null());
    wait_agent(child, limit)
}

fn wait_agent(mut child: Child, limit: Duration) -> (i32, String, String) {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "ledger-agent did not end within {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The machine's entries in the ledger: (sequence, game number) in sequence order.
async fn games_in_ledger(url: &str) -> Vec<(u64, u64)> {
    let ch = ledger_agent::connect(url).await.unwrap();
    let entries: Vec<_> = QueryClient::new(ch)
        .list_device_entries(v1::ListDeviceEntriesRequest {
            device_id: machine().device_id,
            from_sequence: 1,
        })
        .await
        .unwrap()
        .into_inner()
        .collect::<Vec<_>>()
        .await;
    entries
        .into_iter()
        .map(|e| {
            let b = v1::EventBody::decode(e.unwrap().body.as_slice()).unwrap();
            match b.payload {
                Some(P::GamePlayed(g)) => (b.sequence, g.game_number),
                other => panic!("{other:?}"),
            }
        })
        .collect()
}

/// Exactly games 1..=n, once each, in order, at sequences 1..=n.
fn assert_exactly_once(got: &[(u64, u64)], n: u64) {
    assert_eq!(got.len() as u64, n, "events stored");
    for (i, (seq, game)) in got.iter().enumerate() {
        assert_eq!((*seq, *game), (i as u64 + 1, i as u64 + 1), "entry {i}");
    }
}

/// No ledger-signed security finding (an equivocation) anywhere in the chain.
async fn assert_no_security_finding(url: &str) {
    let ch = ledger_agent::connect(url).await.unwrap();
    let mut all = QueryClient::new(ch)
        .list_entries(v1::ListEntriesRequest {
            from_index: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    while let Some(e) = all.next().await {
        let e = e.unwrap();
        if e.kind == v1::RecordKind::Ledger as i32 {
            let r = v1::LedgerRecordBody::decode(e.body.as_slice()).unwrap();
            assert!(
                !matches!(
                    r.record,
                    Some(v1::ledger_record_body::Record::SecurityFinding(_))
                ),
                "a security finding at entry {}",
                e.index
            );
        }
    }
}

fn verify_offline(l: Ledgerd) {
    let data = l.data_dir.clone();
    l.stop();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_is_taken_once_and_the_agent_exits_when_every_event_is_acknowledged() {
    let (dir, l, key) = ledger_with_machine().await;
    let url = l.url();
    let outbox = dir.path().join("outbox");
    let input = dir.path().join("games.jsonl");
    write_games(&input, 1, 300);
    let args = agent_args(
        "run",
        &url,
        &key,
        &outbox,
        &["--input", &input.display().to_string(), "--json"],
    );
    let (code, out, err) = run_agent(&args, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    let done: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(done["done"]["taken"], 300, "{out}");
    assert_eq!(done["done"]["acknowledged"], 300, "{out}");
    assert_exactly_once(&games_in_ledger(&url).await, 300);
    // The same file again: nothing new.
    let (code, out, err) = run_agent(&args, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"taken\":0"), "{out}");
    // Lines appended: only they are taken.
    write_games(&input, 301, 350);
    let (code, out, err) = run_agent(&args, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"taken\":50"), "{out}");
    assert_exactly_once(&games_in_ledger(&url).await, 350);
    // The file rewritten under it: refused, nothing sent.
    std::fs::write(&input, game_line(1)).unwrap();
    let (code, _, err) = run_agent(&args, Duration::from_secs(60));
    assert_eq!(code, 1);
    assert!(err.contains("the file changed"), "{err}");
    // The outbox's state.
    let mut st = agent_args("status", &url, &key, &outbox, &[]);
    st.push("--json".into());
    let (code, out, err) = run_agent(&st, Duration::from_secs(30));
    assert_eq!(code, 0, "{err}");
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["pending"], 0);
    assert_eq!(s["next_sequence"], 351);
    assert_eq!(s["last_receipt"]["sequence"], 350);
    assert_no_security_finding(&url).await;
    verify_offline(l);
}

/// Signed receipts end to end: the agent keeps each with its envelope, `ledger-agent receipt`
/// writes it, `ledgerctl verify-receipt` checks it offline with the ledger's key alone and
/// refuses every kind of tampering with its reason; a ledger that does not sign receipts leaves
/// nothing to prove with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_receipt_proves_the_acknowledgement_offline() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let (dir, l, key) = ledger_with_machine().await;
    let url = l.url();
    let outbox = dir.path().join("outbox");
    let input = dir.path().join("games.jsonl");
    write_games(&input, 1, 120);
    let run = agent_args(
        "run",
        &url,
        &key,
        &outbox,
        &["--input", input.to_str().unwrap()],
    );
    let (code, out, err) = run_agent(&run, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    let write = |seq: u64| {
        let f = dir.path().join(format!("receipt-{seq}.json"));
        let s = seq.to_string();
        let args = agent_args(
            "receipt",
            &url,
            &key,
            &outbox,
            &["--sequence", &s, "--out", f.to_str().unwrap()],
        );
        let (code, out, err) = run_agent(&args, Duration::from_secs(30));
        assert_eq!(code, 0, "{out}{err}");
        f
    };
    let files: Vec<PathBuf> = [1, 60, 120].into_iter().map(write).collect();
    let mut args = vec!["verify-receipt", "--ledger-key", &l.ledger_key, "--json"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (code, out, err) = ledgerctl(&args);
    assert_eq!(code, 0, "{out}{err}");
    let ok: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ok.len(), 3, "{out}");
    for (v, seq) in ok.iter().zip([1, 60, 120]) {
        assert_eq!(
            (v["ok"].as_bool(), v["sequence"].as_u64()),
            (Some(true), Some(seq)),
            "{v}"
        );
        // The entry the receipt names is the one the ledger serves at that index.
        let index = v["index"].as_u64().unwrap();
        let mut q = QueryClient::new(ledger_agent::connect(&url).await.unwrap());
        let e = q
            .get_entry(v1::GetEntryRequest { index })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            hex::encode(&e.entry_hash),
            v["entry_hash"].as_str().unwrap()
        );
    }

    // Tampering, each refused with its reason.
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    let receipt = v1::Receipt::decode(
        b64.decode(original["receipt"].as_str().unwrap())
            .unwrap()
            .as_slice(),
    )
    .unwrap();
    let refused = |edit: &dyn Fn(&mut serde_json::Value), why: &str| {
        let mut v = original.clone();
        edit(&mut v);
        let f = dir.path().join("tampered.json");
        std::fs::write(&f, v.to_string()).unwrap();
        let (code, out, err) = ledgerctl(&[
            "verify-receipt",
            "--ledger-key",
            &l.ledger_key,
            f.to_str().unwrap(),
        ]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains(why), "{why:?} not in {err}");
    };
    let with_receipt = |edit: &dyn Fn(&mut v1::Receipt)| {
        let mut r = receipt.clone();
        edit(&mut r);
        serde_json::Value::String(b64.encode(r.encode_to_vec()))
    };
    let path_hash = with_receipt(&|r| {
        let mut p = r.group_path.to_vec();
        p[3] ^= 1;
        r.group_path = p.into();
    });
    refused(
        &|v| v["receipt"] = path_hash.clone(),
        "does not lead to the signed group root",
    );
    let signature = with_receipt(&|r| {
        let g = r.group.as_mut().unwrap();
        let mut sig = g.signature.to_vec();
        sig[9] ^= 1;
        g.signature = sig.into();
    });
    refused(
        &|v| v["receipt"] = signature.clone(),
        "signature of the group head is not valid",
    );
    let time = with_receipt(&|r| r.received_at_ms -= 1);
    refused(
        &|v| v["receipt"] = time.clone(),
        "do not make the acknowledged entry",
    );
    let other: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[2]).unwrap()).unwrap();
    refused(
        &|v| v["envelope"] = other["envelope"].clone(),
        "the receipt is for",
    );
    refused(&|v| v["index"] = 3.into(), "the file says");
    let other_key = hex::encode(
        ed25519_dalek::SigningKey::from_bytes(&[5; 32])
            .verifying_key()
            .as_bytes(),
    );
    let (code, _, err) = ledgerctl(&[
        "verify-receipt",
        "--ledger-key",
        &other_key,
        files[0].to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("is signed by ledger key"), "{err}");
    verify_offline(l);

    // A ledger that does not sign receipts: the agent keeps none to prove with.
    let dir2 = tempdir();
    let cfg = write_config(dir2.path(), "[ingest]\nsigned_receipts = false");
    let l2 = Ledgerd::start(&dir2.path().join("data"), &cfg, "127.0.0.1:0");
    let signer = register(&l2.url(), 1, &[machine()]).await.remove(0);
    let key2 = dir2.path().join("machine.key");
    std::fs::write(&key2, hex::encode(signer.key().to_bytes())).unwrap();
    let outbox2 = dir2.path().join("outbox");
    let input2 = dir2.path().join("games.jsonl");
    write_games(&input2, 1, 5);
    let run = agent_args(
        "run",
        &l2.url(),
        &key2,
        &outbox2,
        &["--input", input2.to_str().unwrap()],
    );
    let (code, out, err) = run_agent(&run, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    let args = agent_args("receipt", &l2.url(), &key2, &outbox2, &["--sequence", "3"]);
    let (code, _, err) = run_agent(&args, Duration::from_secs(30));
    assert_eq!(code, 1);
    assert!(err.contains("keeps no signed receipt"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_input_and_a_spool_directory() {
    let (dir, l, key) = ledger_with_machine().await;
    let url = l.url();
    let outbox = dir.path().join("outbox");
    let args = agent_args("run", &url, &key, &outbox, &[]);
    let mut child = spawn_agent(&args, Stdio::piped());
    {
        let mut stdin = child.stdin.take().unwrap();
        for n in 1..=100 {
            stdin.write_all(game_line(n).as_bytes()).unwrap();
        }
    }
    let (code, out, err) = wait_agent(child, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("100 events taken, 100 acknowledged"), "{out}");
    // Spool: files taken whole in name order and removed; a temporary name is left alone.
    let spool = dir.path().join("spool");
    std::fs::create_dir(&spool).unwrap();
    write_games(&spool.join("b.jsonl"), 151, 200);
    write_games(&spool.join("a.jsonl"), 101, 150);
    write_games(&spool.join("c.jsonl.tmp"), 201, 210);
    let mut a = args.clone();
    a.extend([
        "--spool".into(),
        spool.display().to_string(),
        "--once".into(),
    ]);
    let (code, out, err) = run_agent(&a, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    assert_exactly_once(&games_in_ledger(&url).await, 200);
    let left: Vec<_> = std::fs::read_dir(&spool)
        .unwrap()
        .map(|f| f.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, ["c.jsonl.tmp"]);
    verify_offline(l);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_agent_refuses() {
    let (dir, l, key) = ledger_with_machine().await;
    let url = l.url();
    let outbox = dir.path().join("outbox");
    // A bad line: what came before it is taken and acknowledged, it and what follows are not.
    let input = dir.path().join("games.jsonl");
    write_games(&input, 1, 2);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap()
        .write_all(b"{\"gamePlayed\":{\"machineId\":\"M-01\",\"wagerCents\":\"-1\"}}\n")
        .unwrap();
    write_games(&input, 3, 4);
    let args = agent_args(
        "run",
        &url,
        &key,
        &outbox,
        &["--input", &input.display().to_string()],
    );
    let (code, _, err) = run_agent(&args, Duration::from_secs(60));
    assert_eq!(code, 1);
    assert!(
        err.contains("games.jsonl:3") && err.contains("wager_cents"),
        "{err}"
    );
    assert_exactly_once(&games_in_ledger(&url).await, 2);
    // An unregistered device: nothing is signed.
    let stranger = dir.path().join("stranger.key");
    std::fs::write(&stranger, hex::encode([9u8; 32])).unwrap();
    let mut s = vec!["run".to_string(), "--server".into(), url.clone()];
    s.extend([
        "--device-id".into(),
        "nobody".into(),
        "--key".into(),
        stranger.display().to_string(),
        "--outbox".into(),
        dir.path().join("outbox-nobody").display().to_string(),
        "--input".into(),
        input.display().to_string(),
    ]);
    let (code, _, err) = run_agent(&s, Duration::from_secs(60));
    assert_eq!(code, 1);
    assert!(err.contains("not registered"), "{err}");
    // Another key for this device's outbox: refused.
    let other = agent_args(
        "run",
        &url,
        &stranger,
        &outbox,
        &["--input", &input.display().to_string()],
    );
    let (code, _, err) = run_agent(&other, Duration::from_secs(60));
    assert_eq!(code, 1);
    assert!(err.contains("another key"), "{err}");
    // An old copy of the outbox: once the ledger holds what the live outbox numbered after the
    // copy, the copy refuses to sign anything (it would reuse those sequence numbers).
    let copy = dir.path().join("outbox-copy");
    copy_dir(&outbox, &copy);
    let more = dir.path().join("more.jsonl");
    write_games(&more, 3, 10);
    let live = agent_args(
        "run",
        &url,
        &key,
        &outbox,
        &["--input", &more.display().to_string()],
    );
    let (code, out, err) = run_agent(&live, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    let later = dir.path().join("later.jsonl");
    write_games(&later, 11, 12);
    let old = agent_args(
        "run",
        &url,
        &key,
        &copy,
        &["--input", &later.display().to_string()],
    );
    let (code, _, err) = run_agent(&old, Duration::from_secs(60));
    assert_eq!(code, 1);
    assert!(err.contains("old copy"), "{err}");
    assert_exactly_once(&games_in_ledger(&url).await, 10);
    assert_no_security_finding(&url).await;
    verify_offline(l);
}

/// A small deterministic generator for kill times (the seed is printed).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn seed() -> u64 {
    std::env::var("AGENT_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| now_ms() as u64)
}

/// kill -9 of the agent at random points while it takes and streams a file that keeps growing
/// (2,000 lines more before each start, so that every kill finds work under way: reconciling,
/// taking, signing, streaming, recording receipts); then a run to the end. Every event is stored
/// exactly once, in order, no equivocation, and the chain verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_of_the_agent_loses_and_duplicates_nothing() {
    let cycles: u64 = std::env::var("AGENT_KILL_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    const PER_CYCLE: u64 = 2_000;
    let n = cycles * PER_CYCLE;
    let (dir, l, key) = ledger_with_machine().await;
    let url = l.url();
    let outbox = dir.path().join("outbox");
    let input = dir.path().join("games.jsonl");
    let args = agent_args(
        "run",
        &url,
        &key,
        &outbox,
        &["--input", &input.display().to_string(), "--batch", "256"],
    );
    let seed = seed();
    let mut rng = Lcg(seed);
    let mut killed_mid_run = 0;
    for c in 0..cycles {
        write_games(&input, c * PER_CYCLE + 1, (c + 1) * PER_CYCLE);
        let mut child = spawn_agent(&args, Stdio::null());
        std::thread::sleep(Duration::from_millis(20 + rng.below(800)));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let stored_before_last = games_in_ledger(&url).await.len();
    let (code, out, err) = run_agent(&args, Duration::from_secs(300));
    assert_eq!(code, 0, "{out}{err}");
    let got = games_in_ledger(&url).await;
    eprintln!(
        "agent kill -9 campaign (seed {seed}): {cycles} cycles, {killed_mid_run} killed mid-run, \
         {stored_before_last} of {n} stored before the last run, {} after it; agent's last run: {}",
        got.len(),
        out.trim()
    );
    assert!(killed_mid_run > 0, "no kill landed mid-run (seed {seed})");
    assert_exactly_once(&got, n);
    assert_no_security_finding(&url).await;
    verify_offline(l);
}

/// kill -9 of ledgerd at random points while the agent streams (the agent keeps running,
/// reconnecting with backoff); ledgerd restarted on the same address each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_of_ledgerd_under_the_agent_loses_and_duplicates_nothing() {
    let cycles: u64 = std::env::var("AGENT_KILL_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(4, |c: u64| c.div_ceil(3));
    const N: u64 = 30_000;
    let (dir, l, key) = ledger_with_machine().await;
    let (addr, data, cfg) = (l.addr.clone(), l.data_dir.clone(), l.config.clone());
    let url = l.url();
    let outbox = dir.path().join("outbox");
    let input = dir.path().join("games.jsonl");
    write_games(&input, 1, N);
    let args = agent_args(
        "run",
        &url,
        &key,
        &outbox,
        &["--input", &input.display().to_string(), "--batch", "256"],
    );
    let mut child = spawn_agent(&args, Stdio::null());
    let seed = seed();
    let mut rng = Lcg(seed);
    let mut l = l;
    let mut under_the_agent = 0;
    for _ in 0..cycles {
        std::thread::sleep(Duration::from_millis(100 + rng.below(600)));
        under_the_agent += child.try_wait().unwrap().is_none() as u32;
        l.kill9();
        std::thread::sleep(Duration::from_millis(rng.below(300)));
        l = Ledgerd::start(&data, &cfg, &addr);
    }
    let (code, out, err) = wait_agent(child, Duration::from_secs(300));
    assert_eq!(code, 0, "{out}{err}");
    let got = games_in_ledger(&url).await;
    eprintln!(
        "ledgerd kill -9 campaign (seed {seed}): {cycles} kills, {under_the_agent} while the \
         agent streamed, {} of {N} stored, agent: {}",
        got.len(),
        out.trim()
    );
    assert!(
        under_the_agent > 0,
        "no kill landed while the agent ran (seed {seed})"
    );
    assert_exactly_once(&got, N);
    assert_no_security_finding(&url).await;
    verify_offline(l);
}

/// A spool directory watched for ever: files dropped while the agent runs (written under a
/// temporary name, then renamed) are taken in name order; SIGTERM stops it (exit 143) with
/// nothing lost, and a later run settles what was pending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_spool_takes_files_as_they_come() {
    let (dir, l, key) = ledger_with_machine().await;
    let url = l.url();
    let outbox = dir.path().join("outbox");
    let spool = dir.path().join("spool");
    std::fs::create_dir(&spool).unwrap();
    let mut args = agent_args(
        "run",
        &url,
        &key,
        &outbox,
        &["--spool", &spool.display().to_string(), "--poll-ms", "50"],
    );
    let child = spawn_agent(&args, Stdio::null());
    for f in 0..5u64 {
        let tmp = spool.join(format!("{f:03}.jsonl.tmp"));
        write_games(&tmp, f * 40 + 1, (f + 1) * 40);
        std::fs::rename(&tmp, spool.join(format!("{f:03}.jsonl"))).unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while games_in_ledger(&url).await.len() < 200 {
        assert!(
            Instant::now() < deadline,
            "the spool's events did not all arrive"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let (code, _, err) = wait_agent(child, Duration::from_secs(30));
    assert_eq!(code, 143, "{err}");
    assert_exactly_once(&games_in_ledger(&url).await, 200);
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0);
    // Receipts that came just before the signal may not be in the outbox yet: a run on the empty
    // spool resends those events, which the ledger answers DUPLICATE.
    args.push("--once".into());
    let (code, out, err) = run_agent(&args, Duration::from_secs(60));
    assert_eq!(code, 0, "{out}{err}");
    assert_exactly_once(&games_in_ledger(&url).await, 200);
    let mut st = agent_args("status", &url, &key, &outbox, &[]);
    st.push("--json".into());
    let (_, out, _) = run_agent(&st, Duration::from_secs(30));
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["pending"], 0, "{out}");
    verify_offline(l);
}

/// The payload's field name in the proto's JSON (`gamePlayed`), from the serialised body.
fn json_payload_name(body: &v1::EventBody) -> String {
    let v = serde_json::to_value(body).expect("serialises");
    v.as_object()
        .expect("an object")
        .keys()
        .find(|k| *k != "occurredAtMs")
        .cloned()
        .expect("a payload")
}

/// The fields of a oneof in events.proto, the first whose block starts with `opening` after
/// `after`: (JSON name, message, field number).
fn oneof_in_the_proto(after: &str, opening: &str) -> Vec<(String, String, u32)> {
    let proto = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto/casino_ledger/v1/events.proto"),
    )
    .unwrap();
    let from = proto.find(after).expect("the message");
    let start = from + proto[from..].find(opening).expect("the oneof");
    let block = &proto[start..start + proto[start..].find('}').unwrap()];
    block
        .lines()
        .filter_map(|l| {
            let l = l.split("//").next().unwrap().trim().trim_end_matches(';');
            let (lhs, number) = l.split_once('=')?;
            let mut words = lhs.split_whitespace();
            let (message, field) = (words.next()?, words.next()?);
            let mut json = String::new();
            let mut up = false;
            for c in field.chars() {
                match c {
                    '_' => up = true,
                    c if up => {
                        json.extend(c.to_uppercase());
                        up = false
                    }
                    c => json.push(c),
                }
            }
            Some((json, message.to_string(), number.trim().parse().ok()?))
        })
        .collect()
}

/// The payloads of `EventBody`.
fn payloads_in_the_proto() -> Vec<(String, String, u32)> {
    oneof_in_the_proto("message EventBody {", "oneof payload {")
}

/// The kind of a `MachineEvent` in the proto's JSON (`door`, `handPay`, ...).
fn machine_event_kind(body: &v1::EventBody) -> Option<String> {
    let v = serde_json::to_value(body).ok()?;
    let e = v.get("machineEvent")?.as_object()?;
    e.keys()
        .find(|k| !matches!(k.as_str(), "machineId" | "sourceCode" | "detail"))
        .cloned()
}

/// Who signs a payload, by its field number's range in events.proto.
fn signer_of(number: u32) -> &'static str {
    match number {
        10..=19 | 70..=79 => "an operator",
        20..=49 => "a table device",
        50..=69 => "a machine's agent",
        _ => "a regulator",
    }
}

/// Examples for payloads the simulated session may not produce, in the agent's JSON: each fills a
/// gap only.
const HAND_MADE: &[&str] = &[
    r#"{"gamePlayed":{"machineId":"M-LX-01","gameNumber":"18211","wagerCents":"100","winCents":"500"}}"#,
    r#"{"machineEvent":{"machineId":"M-LX-01","sourceCode":"SAS:17","power":{"action":"POWER_ACTION_ON"}}}"#,
    r#"{"machineEvent":{"machineId":"M-LX-01","sourceCode":"SAS:31","memoryError":{},"detail":"critical memory error: backup RAM checksum"}}"#,
    r#"{"machineEvent":{"machineId":"M-LX-01","sourceCode":"SAS:32","batteryLow":{}}}"#,
    r#"{"machineEvent":{"machineId":"M-LX-01","sourceCode":"SAS:51","progressiveHit":{"poolId":"JP-LX-01","amountCents":"125000","level":1}}}"#,
    r#"{"machineEvent":{"machineId":"M-LX-01","progressiveReset":{"poolId":"JP-LX-01"}}}"#,
    r#"{"machineEvent":{"machineId":"M-LX-01","link":{"action":"LINK_ACTION_DOWN"},"detail":"agent lost the SAS poll for 40 s"}}"#,
    r#"{"machineEvent":{"machineId":"M-LX-01","configurationChanged":{"changes":[{"option":"denominations","oldValue":"100","newValue":"50,100"}],"authorizationId":"CHG-2026-0031"}}}"#,
    r#"{"machineChangeAuthorized":{"authorizationId":"CHG-2026-0031","machineId":"M-LX-01","detail":"denomination 0.50 added, technician 114"}}"#,
    r#"{"deviceRegistered":{"deviceId":"M-07","publicKey":"1X2pqPqVtUE8e5UYeSPwTxH6rQwK0zTqlH4J8gLZAj8=","kind":"DEVICE_KIND_MACHINE","casinoId":"casino-lisboa","machineId":"M-07","modelId":"MODEL-A","betValuesCents":["50","100"],"description":"floor 2, bank 3"}}"#,
    r#"{"deviceRevoked":{"deviceId":"M-07","reason":"key exposed during maintenance"}}"#,
    r#"{"deviceKeyRotated":{"deviceId":"M-07","publicKey":"6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw=","reason":"agent board replaced"}}"#,
    r#"{"betChanged":{"tableId":"T02-roulette-french","roundId":"T02-roulette-french-00012","betId":"b3","amountCents":"1500"}}"#,
    r#"{"betWithdrawn":{"tableId":"T02-roulette-french","roundId":"T02-roulette-french-00012","betId":"b4"}}"#,
    r#"{"faultDeclared":{"tableId":"T13-chemin-de-fer","roundId":"T13-chemin-de-fer-00007","code":"CF_DEALER_CARD_EXPOSED","detail":"the dealer exposed a card drawing from the shoe"}}"#,
    r#"{"throwVoided":{"tableId":"T05-craps","roundId":"T05-craps-00031","reason":"die left the table"}}"#,
    r#"{"roundVoided":{"tableId":"T07-blackjack","roundId":"T07-blackjack-00044","reason":"shuffler fault before the first card"}}"#,
    r#"{"jackpotContribution":{"poolId":"JP-LX-01","machineId":"M-LX-01","amountCents":"12"}}"#,
    r#"{"jackpotAwarded":{"poolId":"JP-LX-01","machineId":"M-LX-01","amountCents":"125000","winner":"ticket 0042-7731","gameNumber":"18211"}}"#,
    r#"{"ramClear":{"machineId":"M-LX-01","before":[{"name":"coin_in","value":"1204500","rollover":"100000000"},{"name":"coin_out","value":"1098800","rollover":"100000000"}],"after":[{"name":"coin_in","value":"0","rollover":"100000000"},{"name":"coin_out","value":"0","rollover":"100000000"}]}}"#,
    r#"{"transferAuthorized":{"authorizationId":"SRIJ-2026-0117","fromPoolId":"JP-LX-02","toPoolId":"SJP-TEJO","reference":"letter of 2026-11-20"}}"#,
];

/// docs/json-examples.md: one event of every payload, as `ledger-agent` reads it. Taken from the
/// simulated casino where it produces the payload, hand-made otherwise; every example must decode
/// and pass the ledger's own checks of a body, and the file must be what this test writes
/// (`UPDATE_DOCS=1` rewrites it).
#[test]
fn every_payload_has_a_json_example_that_the_agent_reads() {
    const AT: i64 = 1_764_300_000_000;
    let session = casino_play::sim::generate(&casino_play::sim::standard_plan(
        3,
        0,
        2,
        true,
        "operator-1",
        "inspectorate",
    ))
    .unwrap();
    let mut examples = std::collections::BTreeMap::new();
    // A machine's significant events: one of every kind.
    let mut machine_events = std::collections::BTreeMap::new();
    let bodies = session
        .events
        .iter()
        .map(|e| v1::EventBody {
            payload: Some(e.payload.clone()),
            ..Default::default()
        })
        .chain(
            HAND_MADE
                .iter()
                .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"))),
        );
    for b in bodies {
        if let Some(kind) = machine_event_kind(&b) {
            machine_events.entry(kind).or_insert_with(|| b.clone());
        }
        examples.entry(json_payload_name(&b)).or_insert(b);
    }
    let mut doc = String::from(
        "# One event of every payload, as `ledger-agent` reads it\n\n\
         One line of JSON Lines each: an `EventBody` in the proto's canonical JSON mapping, without \
         `deviceId` and `sequence` (the tool numbers events; see [agents.md](agents.md), section 8). \
         What each field means: [events.md](events.md). Written by \
         `UPDATE_DOCS=1 cargo test -p e2e --test agent json_example`, from the simulated casino where \
         it plays the payload; the same test checks that every line decodes and passes the ledger's \
         own checks of a body.\n",
    );
    let mut missing = Vec::new();
    for (i, (json, message, number)) in payloads_in_the_proto().into_iter().enumerate() {
        let Some(b) = examples.remove(&json) else {
            missing.push(json);
            continue;
        };
        let mut these = vec![b];
        let mut what = format!("`{message}` ({number}), signed by {}.", signer_of(number));
        if json == "machineEvent" {
            these.clear();
            for (kind, _, _) in oneof_in_the_proto("message MachineEvent {", "oneof event {") {
                match machine_events.remove(&kind) {
                    Some(b) => these.push(b),
                    None => missing.push(format!("machineEvent.{kind}")),
                }
            }
            what.push_str(" One line of every kind.");
        }
        let mut lines = String::new();
        for (k, mut b) in these.into_iter().enumerate() {
            b.occurred_at_ms = AT + 60_000 * i as i64 + 1_000 * k as i64;
            let line = serde_json::to_string(&b).unwrap();
            // What the agent does with a line: decode it, then the ledger's checks.
            let back: v1::EventBody = serde_json::from_str(&line).unwrap();
            assert_eq!(back, b, "{line}");
            ledger_core::Event::from_proto(v1::EventBody {
                device_id: "example-device".into(),
                sequence: 1,
                ..back
            })
            .unwrap_or_else(|e| panic!("{json}: {e}: {line}"));
            lines.push_str(&line);
            lines.push('\n');
        }
        doc.push_str(&format!("\n## `{json}`\n\n{what}\n\n```json\n{lines}```\n"));
    }
    assert!(
        missing.is_empty(),
        "payloads without an example: {missing:?}"
    );
    assert!(
        examples.is_empty(),
        "examples of no payload: {:?}",
        examples.keys()
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/json-examples.md");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &doc).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == doc,
        "docs/json-examples.md is not what the proto and the simulator give: run \
         UPDATE_DOCS=1 cargo test -p e2e --test agent json_example"
    );
}

/// Compact receipts (request metadata `casino-ledger-receipts: compact`, ledger_core::receipt::
/// compact): a stream that asks gets a group's signed head once and, after it, only the part of
/// each path that differs; made whole, each receipt proves its event offline. A stream that does
/// not ask gets every receipt whole, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_receipts_are_made_whole_and_prove_their_events() {
    use ledger_core::receipt::{compact, verify_receipt};
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut m = register(&url, 1, &[machine()]).await.remove(0);
    let envs: Vec<v1::Envelope> = (1..=2000)
        .map(|n| {
            m.sign(
                now_ms(),
                P::GamePlayed(v1::GamePlayed {
                    machine_id: MACHINE.into(),
                    game_number: n,
                    wager_cents: 100,
                    win_cents: 0,
                }),
            )
        })
        .collect();
    let key = ledger_core::signing::parse_public_key_hex(&l.ledger_key).unwrap();
    let stream = |ask: bool, envs: Vec<v1::Envelope>| {
        let url = url.clone();
        async move {
            let mut c =
                v1::ingest_client::IngestClient::new(ledger_agent::connect(&url).await.unwrap());
            let mut req = tonic::Request::new(tokio_stream::iter(envs));
            if ask {
                req.metadata_mut()
                    .insert(compact::HEADER, compact::COMPACT.parse().unwrap());
            }
            let receipts = c.submit(req).await.unwrap().into_inner();
            receipts.map(|r| r.unwrap()).collect::<Vec<_>>().await
        }
    };
    let (first, second) = envs.split_at(1000);
    let compacted = stream(true, first.to_vec()).await;
    let full = stream(false, second.to_vec()).await;
    assert_eq!((compacted.len(), full.len()), (1000, 1000));

    let without_head = compacted.iter().filter(|r| r.group_as_before).count();
    assert!(
        without_head >= 500,
        "{without_head} of 1000 receipts left their head out"
    );
    assert!(compacted.iter().any(|r| r.path_from_before > 0));
    let bytes = |rs: &[v1::Receipt]| rs.iter().map(|r| r.encoded_len()).sum::<usize>();
    assert!(
        bytes(&compacted) * 2 < bytes(&full),
        "compact {} bytes, full {}",
        bytes(&compacted),
        bytes(&full)
    );
    assert!(
        full.iter()
            .all(|r| r.group.is_some() && !r.group_as_before && r.path_from_before == 0)
    );

    let mut expander = compact::Expander::default();
    for (r, e) in compacted.into_iter().zip(first) {
        let mut r = r;
        expander.expand(&mut r).unwrap();
        verify_receipt(&r, e, &key).unwrap_or_else(|err| panic!("{err}: {r:?}"));
    }
    for (r, e) in full.iter().zip(second) {
        verify_receipt(r, e, &key).unwrap();
    }
}
