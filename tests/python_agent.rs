//! The example Python agent (`examples/python/agent.py`, grpcio and `cryptography`, stubs
//! generated from `proto/` at run time) against the real ledgerd on loopback: a standard gRPC
//! client that half-closes and reads to the end of the call must end by itself, with every event
//! in the chain; a rerun continues the device's sequence; a refused run says why and exits
//! non-zero; a ledger killed mid-stream costs nothing but a resend.
//!
//! Needs the venv made by `examples/python/setup.sh`: `.ci/run` runs it, and these tests run it
//! themselves when the venv is missing (pip from PyPI, about 15 s); if that fails, they fail
//! saying so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use e2e::slots::write_key_file;
use e2e::{Ledgerd, ledgerctl, operator_key, tempdir, tls_env, write_config};
use ledger_core::proto::{self as v1, event_body::Payload, query_client::QueryClient};
use prost::Message as _;

/// How long one agent run may take: it needs well under a second here; a client that waits for
/// a call the ledger never ends hits it.
const AGENT_TIMEOUT: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace holds tests/")
        .to_path_buf()
}

/// The venv's python with the agent's dependencies (made by setup.sh, once per test process,
/// when missing), or a failure saying how to get it.
fn python() -> PathBuf {
    static PY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        let venv = venv();
        if !has_deps(&venv) {
            let st = Command::new("bash")
                .arg(repo().join("examples/python/setup.sh"))
                .env("PYTHON_AGENT_VENV", &venv)
                .status();
            eprintln!("examples/python/setup.sh: {st:?}");
        }
        assert!(
            has_deps(&venv),
            "the Python agent's dependencies are not installed in {}: run \
             examples/python/setup.sh (.ci/run does; PYTHON_AGENT_VENV names another venv)",
            venv.display()
        );
        venv.join("bin").join("python")
    })
    .clone()
}

fn venv() -> PathBuf {
    match std::env::var_os("PYTHON_AGENT_VENV") {
        Some(v) => PathBuf::from(v),
        None => std::env::current_exe()
            .expect("test executable path")
            .ancestors()
            .nth(3)
            .expect("target/<profile>/deps/<test>")
            .join("python-agent"),
    }
}

fn has_deps(venv: &Path) -> bool {
    let py = venv.join("bin").join("python");
    py.is_file()
        && Command::new(&py)
            .args([
                "-c",
                "import grpc, grpc_tools.protoc, google.protobuf, cryptography",
            ])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// One agent run's outcome.
struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "agent exited with {}\n--- stdout\n{}--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Start `agent.py` for `device` (key `dir/<device>.key`), output into files in `dir`.
fn spawn_agent(dir: &Path, addr: &str, device: &str, extra: &[&str]) -> (Child, PathBuf) {
    let out = dir.join(format!("{device}.agent"));
    let file = |ext: &str| std::fs::File::create(out.with_extension(ext)).expect("output file");
    let key = dir.join(format!("{device}.key"));
    let child = Command::new(python())
        .arg(repo().join("examples/python/agent.py"))
        .envs(tls_env("e2e-device"))
        .args(["--server", addr, "--device-id", device])
        .arg("--key")
        .arg(&key)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(file("stdout"))
        .stderr(file("stderr"))
        .spawn()
        .expect("spawn the Python agent");
    (child, out)
}

/// Wait for the agent to exit by itself within `limit`; kill it and fail otherwise.
fn wait_agent(mut child: Child, out: &Path, limit: Duration) -> Run {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for the agent") {
            break Some(st);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |ext: &str| std::fs::read_to_string(out.with_extension(ext)).unwrap_or_default();
    let (stdout, stderr) = (read("stdout"), read("stderr"));
    let Some(status) = status else {
        panic!(
            "the Python agent did not exit within {limit:?} (killed): it half-closed its stream \
             and waits for the ledger to end the call\n--- stdout\n{stdout}--- stderr\n{stderr}"
        );
    };
    Run {
        status,
        stdout,
        stderr,
    }
}

fn agent(dir: &Path, addr: &str, device: &str, extra: &[&str]) -> Run {
    let (child, out) = spawn_agent(dir, addr, device, extra);
    wait_agent(child, &out, AGENT_TIMEOUT)
}

/// A ledger with the test operator, and its key file in `dir` for `ledgerctl`.
fn ledger(dir: &Path) -> Ledgerd {
    write_key_file(&dir.join("operator-1.key"), &operator_key());
    let cfg = write_config(dir, "");
    Ledgerd::start(&dir.join("data"), &cfg, "127.0.0.1:0")
}

/// `ledgerctl keygen` a device key into `dir`.
fn keygen(dir: &Path, device: &str) {
    let base = dir.join(device);
    let (code, out, err) = ledgerctl(&["keygen", "--out", base.to_str().unwrap()]);
    assert_eq!(code, 0, "keygen: {out}{err}");
}

/// Register `device` as a slot machine (operator-signed, through `ledgerctl`).
fn register_machine(l: &Ledgerd, dir: &Path, device: &str) {
    let url = l.url();
    let (op, public) = (
        dir.join("operator-1.key"),
        dir.join(format!("{device}.pub")),
    );
    let (code, out, err) = ledgerctl(&[
        "device",
        "register",
        "--server",
        &url,
        "--operator-key",
        op.to_str().unwrap(),
        "--operator-id",
        "operator-1",
        "--device-id",
        device,
        "--kind",
        "machine",
        "--public-key",
        public.to_str().unwrap(),
        "--casino",
        "casino-e2e",
        "--model",
        "K",
        "--bet-value",
        "50",
        "--bet-value",
        "100",
        "--bet-value",
        "200",
    ]);
    assert_eq!(code, 0, "register {device}: {out}{err}");
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// The device's entries in the chain, in sequence order, each with its decoded body.
fn device_entries(url: &str, device: &str) -> Vec<(v1::ChainEntry, v1::EventBody)> {
    block_on(async {
        let mut q = QueryClient::new(ledger_agent::connect(url).await.expect("connect"));
        let mut s = q
            .list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: device.into(),
                from_sequence: 0,
            })
            .await
            .expect("ListDeviceEntries")
            .into_inner();
        let mut all = Vec::new();
        while let Some(e) = s.message().await.expect("entry") {
            let body = v1::EventBody::decode(e.body.as_slice()).expect("an EventBody");
            all.push((e, body));
        }
        all
    })
}

fn get_device(url: &str, device: &str) -> Result<v1::DeviceInfo, tonic::Status> {
    block_on(async {
        let mut q = QueryClient::new(ledger_agent::connect(url).await.expect("connect"));
        q.get_device(v1::GetDeviceRequest {
            device_id: device.into(),
        })
        .await
        .map(|r| r.into_inner())
    })
}

/// The receipts the agent wrote (`--receipts`): sequence → (status, entry hash).
fn receipts(path: &Path) -> BTreeMap<u64, (String, String)> {
    let text = std::fs::read_to_string(path).expect("receipts file");
    let mut by_seq = BTreeMap::new();
    for line in text.lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("a JSON receipt");
        let seq = r["sequence"].as_u64().expect("sequence");
        let got = (
            r["status"].as_str().expect("status").to_string(),
            r["entry_hash"].as_str().expect("entry_hash").to_string(),
        );
        assert!(
            by_seq.insert(seq, got).is_none(),
            "two receipts for sequence {seq}"
        );
    }
    by_seq
}

/// The chain holds exactly sequences 1..=`last` of `device`, each the entry its receipt named:
/// games numbered from 1, and a meter reading at each sequence of `meter_at` (a run's last).
fn assert_chain_holds(
    url: &str,
    device: &str,
    last: u64,
    meter_at: &[u64],
    receipts: &BTreeMap<u64, (String, String)>,
) {
    let entries = device_entries(url, device);
    let seqs: Vec<u64> = entries.iter().map(|(_, b)| b.sequence).collect();
    assert_eq!(
        seqs,
        (1..=last).collect::<Vec<_>>(),
        "the device's sequences"
    );
    let mut games = 0;
    for (e, b) in &entries {
        assert_eq!(b.device_id, device);
        match &b.payload {
            Some(Payload::GamePlayed(g)) => {
                games += 1;
                assert!(!meter_at.contains(&b.sequence), "{b:?}");
                assert_eq!((g.machine_id.as_str(), g.game_number), (device, games));
            }
            Some(Payload::MeterReading(m)) => {
                assert!(meter_at.contains(&b.sequence), "{b:?}");
                let played = m.meters.iter().find(|m| m.name == "games_played");
                assert_eq!(played.map(|m| m.value), Some(games), "{m:?}");
            }
            other => panic!("unexpected payload {other:?}"),
        }
        let (status, hash) = receipts
            .get(&b.sequence)
            .unwrap_or_else(|| panic!("no receipt for sequence {}", b.sequence));
        assert!(status == "ACCEPTED" || status == "DUPLICATE", "{status}");
        assert_eq!(hash, &hex::encode(&e.entry_hash), "sequence {}", b.sequence);
    }
    let info = get_device(url, device).expect("GetDevice");
    assert_eq!(info.last_sequence, last);
}

#[test]
fn the_python_agent_streams_ends_by_itself_and_a_rerun_continues_the_sequence() {
    let dir = tempdir();
    let d = dir.path();
    let l = ledger(d);
    let (url, addr) = (l.url(), l.addr.clone());
    keygen(d, "M-PY-01");
    register_machine(&l, d, "M-PY-01");
    let rec = d.join("receipts.jsonl");
    let rec_arg = rec.to_str().unwrap();

    let run = agent(
        d,
        &addr,
        "M-PY-01",
        &["--games", "20", "--receipts", rec_arg],
    );
    assert!(run.status.success(), "{run:?}");
    assert!(
        run.stdout
            .contains("21 events, sequences 1..21: 21 accepted, 0 duplicate, 0 rejected"),
        "{run:?}"
    );
    assert_chain_holds(&url, "M-PY-01", 21, &[21], &receipts(&rec));

    // A second run asks the ledger where the device stands and continues from there.
    let run = agent(
        d,
        &addr,
        "M-PY-01",
        &["--games", "5", "--receipts", rec_arg],
    );
    assert!(run.status.success(), "{run:?}");
    assert!(
        run.stdout.contains("sequences 22..27: 6 accepted"),
        "{run:?}"
    );
    assert_chain_holds(&url, "M-PY-01", 27, &[21, 27], &receipts(&rec));
    let outbox = std::fs::read_to_string(d.join("M-PY-01.outbox")).expect("outbox");
    assert!(outbox.is_empty(), "every envelope was answered: {outbox}");

    // Reusing a sequence with other bytes (a drill) is an equivocation: refused, exit 1.
    let run = agent(
        d,
        &addr,
        "M-PY-01",
        &["--games", "0", "--start-sequence", "1"],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.stderr.contains("EQUIVOCATION sequence 1"), "{run:?}");
    assert_chain_holds(&url, "M-PY-01", 27, &[21, 27], &receipts(&rec));
    l.stop();
}

#[test]
fn the_python_agent_of_an_unregistered_device_exits_non_zero_naming_the_reason() {
    let dir = tempdir();
    let d = dir.path();
    let l = ledger(d);
    keygen(d, "M-PY-GHOST");
    let run = agent(d, &l.addr, "M-PY-GHOST", &["--games", "3"]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains("REJECTED sequence 1: REJECT_REASON_UNKNOWN_DEVICE"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("0 accepted, 0 duplicate, 4 rejected"),
        "{run:?}"
    );
    assert!(device_entries(&l.url(), "M-PY-GHOST").is_empty());
    l.stop();
}

#[test]
fn the_python_agent_resends_what_got_no_receipt_when_the_ledger_dies_mid_stream() {
    const GAMES: u64 = 20_000;
    let dir = tempdir();
    let d = dir.path();
    let l = ledger(d);
    let (url, addr) = (l.url(), l.addr.clone());
    keygen(d, "M-PY-02");
    register_machine(&l, d, "M-PY-02");
    let rec = d.join("receipts.jsonl");
    let games = GAMES.to_string();
    let (child, out) = spawn_agent(
        d,
        &addr,
        "M-PY-02",
        &[
            "--games",
            &games,
            "--receipts",
            rec.to_str().unwrap(),
            "--max-attempts",
            "0",
        ],
    );
    // kill -9 once receipts flow, then start it again on the same address.
    let deadline = Instant::now() + AGENT_TIMEOUT;
    while std::fs::metadata(&rec).map_or(0, |m| m.len()) == 0 {
        assert!(
            Instant::now() < deadline,
            "no receipt within {AGENT_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    l.kill9();
    std::thread::sleep(Duration::from_millis(300));
    let l = Ledgerd::start(&d.join("data"), &d.join("ledgerd.toml"), &addr);
    let run = wait_agent(child, &out, 2 * AGENT_TIMEOUT);
    assert!(run.status.success(), "{run:?}");
    assert!(
        run.stderr.contains("Ingest.Submit ("),
        "it had to resend: {run:?}"
    );
    assert!(run.stderr.contains("retrying in"), "{run:?}");
    assert_chain_holds(&url, "M-PY-02", GAMES + 1, &[GAMES + 1], &receipts(&rec));
    l.stop();
}

/// The same standard client while other devices load the ledger: it still ends by itself, with
/// every event in the chain.
#[test]
fn the_python_agent_ends_by_itself_under_load() {
    let dir = tempdir();
    let d = dir.path();
    let l = ledger(d);
    let (url, addr) = (l.url(), l.addr.clone());
    keygen(d, "M-PY-03");
    register_machine(&l, d, "M-PY-03");
    // Four table devices stream 20,000 events each meanwhile (operator sequence 2 on: the
    // machine's registration took 1).
    let load_url = url.clone();
    let load = std::thread::spawn(move || {
        block_on(async move {
            let specs: Vec<_> = (0..4)
                .map(|i| e2e::table(&format!("load-{i}"), &format!("L{i}")))
                .collect();
            let signers = e2e::register(&load_url, 2, &specs).await;
            let streams: Vec<_> = signers
                .into_iter()
                .enumerate()
                .map(|(i, mut s)| {
                    let envs: Vec<_> = (1..=20_000)
                        .map(|n| s.sign(e2e::now_ms(), e2e::bet(&format!("L{i}"), "r", n)))
                        .collect();
                    let url = load_url.clone();
                    tokio::spawn(async move { e2e::submit(&url, &envs).await.len() })
                })
                .collect();
            let mut n = 0;
            for s in streams {
                n += s.await.expect("a load stream");
            }
            n
        })
    });
    // Start once the load is flowing.
    let deadline = Instant::now() + AGENT_TIMEOUT;
    while get_device(&url, "load-3").map_or(0, |i| i.last_sequence) == 0 {
        assert!(Instant::now() < deadline, "the load did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let rec = d.join("receipts.jsonl");
    let run = agent(
        d,
        &addr,
        "M-PY-03",
        &["--games", "2000", "--receipts", rec.to_str().unwrap()],
    );
    let busy = get_device(&url, "load-3").map_or(0, |i| i.last_sequence) < 20_000;
    assert!(run.status.success(), "{run:?}");
    assert_chain_holds(&url, "M-PY-03", 2001, &[2001], &receipts(&rec));
    assert_eq!(load.join().expect("the load"), 80_000);
    eprintln!("the load was still streaming when the Python agent ended: {busy}");
    l.stop();
}
