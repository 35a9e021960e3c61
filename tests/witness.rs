//! End-to-end: `ledgerctl witness serve` (C2SP tlog-witness) cosigns a real ledger's
//! checkpoints only along a consistent history: the first one, then each newer one with a
//! consistency proof from the last; every refusal with the protocol's status; and the attack
//! the witness exists for, a history rewritten by someone holding the ledger's key, refused.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};

use e2e::*;
use ledger_core::ed25519_dalek::SigningKey;
use ledger_core::note::{self, CheckpointText, SignedNote};

struct Witness {
    child: Child,
    addr: String,
    key: ledger_core::ed25519_dalek::VerifyingKey,
}

impl Drop for Witness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const NAME: &str = "inspectorate.test/w1";

fn start_witness(dir: &std::path::Path, ledger_key: &str) -> Witness {
    let base = dir.join("witness");
    let (code, out, err) = ledgerctl(&["keygen", "--out", base.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let key = ledger_agent::keys::read_secret(&base.with_extension("key")).unwrap();
    let mut child = Command::new(bin("ledgerctl"))
        .args([
            "witness",
            "serve",
            "--name",
            NAME,
            "--key",
            base.with_extension("key").to_str().unwrap(),
            "--log",
            &format!("casino-ledger/e2e={ledger_key}"),
            "--state",
            dir.join("witness-state").to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split_whitespace()
        .skip_while(|w| *w != "on")
        .nth(1)
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    assert!(
        line.contains(&note::cosigner_vkey(NAME, &key.verifying_key())),
        "{line}"
    );
    Witness {
        child,
        addr,
        key: key.verifying_key(),
    }
}

/// POST /add-checkpoint: (status, content type, body).
fn post(addr: &str, body: &str) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /add-checkpoint HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let ct = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    (status, ct, body.to_string())
}

/// A checkpoint of the ledger at `url`, asked by a client that keeps what it verified in
/// `state` (the insider's fork below gets a client of its own: a client of the real ledger
/// would refuse it, see tests/proofs.rs).
fn checkpoint_note(url: &str, state: &std::path::Path) -> String {
    let out = Command::new(bin("ledgerctl"))
        .args(["checkpoint", "--server", url, "--json"])
        .envs(tls_env("e2e-admin"))
        .env("LEDGER_STATE_DIR", state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    v["note"].as_str().unwrap().to_string()
}

fn size_of(n: &str) -> u64 {
    CheckpointText::parse(&SignedNote::parse(n).unwrap().text)
        .unwrap()
        .size
}

/// The consistency proof from the tree of `from` (a note) to the ledger's latest checkpoint:
/// (the newer note, the proof hashes in base64).
fn consistency(dir: &std::path::Path, url: &str, from: &str) -> (String, Vec<String>) {
    let held = dir.join("held.note");
    std::fs::write(&held, from).unwrap();
    let out_file = dir.join("consistency.json");
    let (code, out, err) = ledgerctl_as(
        "e2e-admin",
        &[
            "prove",
            "consistency",
            "--server",
            url,
            "--from-note",
            held.to_str().unwrap(),
            "--out",
            out_file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    (
        v["checkpoint"].as_str().unwrap().to_string(),
        v["hashes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap().to_string())
            .collect(),
    )
}

fn body(old: u64, proof: &[String], note: &str) -> String {
    let mut b = format!("old {old}\n");
    for h in proof {
        b.push_str(h);
        b.push('\n');
    }
    b.push('\n');
    b + note
}

#[tokio::test]
async fn a_witness_cosigns_a_consistent_history_and_refuses_a_rewritten_one() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "[checkpoint]\ninterval_secs = 0\n");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let ledger_key = l.ledger_key.clone();
    let w = start_witness(dir.path(), &ledger_key);
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    submit(
        &url,
        &(1..=40)
            .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
            .collect::<Vec<_>>(),
    )
    .await;
    let state = dir.path().join("client");
    let n1 = checkpoint_note(&url, &state);

    // First contact: old 0, no proof; the answer is a cosignature over the note.
    let (status, _, answer) = post(&w.addr, &body(0, &[], &n1));
    assert_eq!(status, 200, "{answer}");
    let mut cosigned = SignedNote::parse(&n1).unwrap();
    cosigned.add_signatures(&note::parse_signature_lines(&answer).unwrap());
    let ts = cosigned.cosigned_by(NAME, w.key).unwrap();
    assert!(ts > 1_700_000_000);
    // Again from 0: the witness holds n1's size now.
    let (status, ct, answer) = post(&w.addr, &body(0, &[], &n1));
    assert_eq!(
        (status, ct.as_str(), answer.clone()),
        (409, "text/x.tlog.size", format!("{}\n", size_of(&n1)))
    );
    // The same checkpoint again is cosigned again (same size, same root).
    assert_eq!(post(&w.addr, &body(size_of(&n1), &[], &n1)).0, 200);

    // Stop; keep a copy (its key included) for the insider; the ledger grows.
    l.stop();
    let fork = dir.path().join("fork");
    copy_dir(&data, &fork);
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    submit(
        &url,
        &(41..=90)
            .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
            .collect::<Vec<_>>(),
    )
    .await;
    checkpoint_note(&url, &state);
    let (n2, proof) = consistency(dir.path(), &url, &n1);
    assert!(size_of(&n2) > size_of(&n1));
    // A damaged proof: 422, kept as evidence; the right one: 200.
    let mut bad = proof.clone();
    bad[0] = format!(
        "{}{}",
        if bad[0].starts_with('A') { "B" } else { "A" },
        &bad[0][1..]
    );
    assert_eq!(post(&w.addr, &body(size_of(&n1), &bad, &n2)).0, 422);
    assert!(
        std::fs::read_dir(dir.path().join("witness-state/refused"))
            .unwrap()
            .count()
            >= 1
    );
    let (status, _, answer) = post(&w.addr, &body(size_of(&n1), &proof, &n2));
    assert_eq!(status, 200, "{answer}");
    l.stop();

    // The insider: the copy, its key, other events, a checkpoint past n2 with a valid proof of
    // its own history from n1's size. The witness holds n2: the fork must prove consistency
    // from n2's size, which it cannot.
    let f = Ledgerd::start(&fork, &cfg, "127.0.0.1:0");
    let furl = f.url();
    let mut t2 = ledger_agent::DeviceSigner::new("table-1", t.key().clone(), 41);
    submit(
        &furl,
        &(41..=200)
            .map(|n| t2.sign(now_ms(), bet("T1", "forked", n)))
            .collect::<Vec<_>>(),
    )
    .await;
    checkpoint_note(&furl, &dir.path().join("insider"));
    let (n3, _) = consistency(dir.path(), &furl, &n1);
    let fork_note_at_n2_size = {
        // The fork's own proof from the witness's size: valid for the fork's tree, not for n2.
        let mut held = SignedNote::parse(&n2).unwrap();
        held.signatures.truncate(1);
        held.encode()
    };
    let (n3b, proof_from_n2) = consistency(dir.path(), &furl, &fork_note_at_n2_size);
    assert_eq!(n3, n3b);
    let (status, _, answer) = post(&w.addr, &body(size_of(&n2), &proof_from_n2, &n3));
    assert_eq!(status, 422, "the rewritten history was cosigned: {answer}");
    f.stop();

    // Unknown origins, signatures by another key, malformed bodies.
    let stranger = SigningKey::from_bytes(&[9; 32]);
    let text = SignedNote::parse(&n2).unwrap().text;
    let forged = SignedNote::sign(&text, "casino-ledger/e2e", &stranger)
        .unwrap()
        .encode();
    assert_eq!(post(&w.addr, &body(size_of(&n2), &[], &forged)).0, 403);
    let other_text = text.replacen("casino-ledger/e2e", "casino-ledger/porto", 1);
    let other = SignedNote::sign(&other_text, "casino-ledger/porto", &stranger)
        .unwrap()
        .encode();
    assert_eq!(post(&w.addr, &body(0, &[], &other)).0, 404);
    assert_eq!(post(&w.addr, &format!("old 01\n\n{n2}")).0, 400);
    assert_eq!(post(&w.addr, &body(size_of(&n2) + 1, &[], &n2)).0, 400);
}

/// ledgerd submits each checkpoint to its configured witness and serves the cosignature in the
/// checkpoint's note; `GetLatest` with `cosigned` gives the newest checkpoint its policy counts
/// as cosigned.
#[tokio::test]
async fn ledgerd_gets_its_checkpoints_cosigned() {
    use ledger_core::proto::{self as v1, checkpoints_client::CheckpointsClient};
    let dir = tempdir();
    let data = dir.path().join("data");
    let plain = write_config(dir.path(), "[checkpoint]\ninterval_secs = 0\n");
    let l = Ledgerd::start(&data, &plain, "127.0.0.1:0");
    let ledger_key = l.ledger_key.clone();
    l.stop();
    let w = start_witness(dir.path(), &ledger_key);
    let witness_pub = hex::encode(w.key.as_bytes());
    let cfg_dir = dir.path().join("with-witness");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    let cfg = write_config(
        &cfg_dir,
        &format!(
            "[checkpoint]\ninterval_secs = 0\nwitnesses_required = 1\n\n[[witnesses]]\nname = \"{NAME}\"\nurl = \"http://{}\"\npublic_key = \"{witness_pub}\"\n",
            w.addr
        ),
    );
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    for round in 0..2u64 {
        submit(
            &url,
            &(1..=30)
                .map(|n| t.sign(now_ms(), bet("T1", "r", round * 100 + n)))
                .collect::<Vec<_>>(),
        )
        .await;
        let n = checkpoint_note(&url, &dir.path().join("client"));
        let size = size_of(&n);
        let mut c = CheckpointsClient::new(ledger_agent::connect(&url).await.unwrap());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let cosigned = loop {
            let cp = c
                .get_latest(v1::GetCheckpointRequest { cosigned: true })
                .await
                .map(|r| r.into_inner());
            if let Ok(cp) = cp
                && size_of(&cp.note) == size
            {
                break cp;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not cosigned in time: {}",
                l.stderr_text()
            );
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        };
        let note = SignedNote::parse(&cosigned.note).unwrap();
        note.cosigned_by(NAME, w.key).unwrap();
        // The same cosignature in the latest checkpoint's note.
        let latest = c
            .get_latest(v1::GetCheckpointRequest::default())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(latest.note, cosigned.note);
    }
    l.stop();
}

/// The witness refusals in the chain of the ledger at `url`: (entry, checkpoint number, status).
async fn refusals_in_chain(url: &str) -> Vec<(u64, u64, u32)> {
    use ledger_core::proto::{self as v1, query_client::QueryClient};
    use prost::Message;
    use tokio_stream::StreamExt;
    let ch = ledger_agent::connect(url).await.unwrap();
    let mut all = QueryClient::new(ch)
        .list_entries(v1::ListEntriesRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(e) = all.next().await {
        let e = e.unwrap();
        if e.kind == v1::RecordKind::Ledger as i32
            && let Some(v1::ledger_record_body::Record::WitnessRefused(w)) =
                v1::LedgerRecordBody::decode(e.body.as_slice())
                    .unwrap()
                    .record
        {
            assert_eq!(w.witness, NAME);
            out.push((e.index, w.checkpoint_number, w.http_status));
        }
    }
    out
}

/// GET /metrics as the admin.
fn scrape(at: std::net::SocketAddr) -> String {
    let mut s = tls_stream(at, "e2e-admin");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8(out).unwrap()
}

/// Wait until the checkpoint of tree size `size` is cosigned.
async fn wait_cosigned(l: &Ledgerd, size: u64) {
    use ledger_core::proto::{self as v1, checkpoints_client::CheckpointsClient};
    let mut c = CheckpointsClient::new(ledger_agent::connect(&l.url()).await.unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Ok(cp) = c
            .get_latest(v1::GetCheckpointRequest { cosigned: true })
            .await
            && size_of(&cp.into_inner().note) >= size
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "size {size} not cosigned in time: {}",
            l.stderr_text()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// An insider restarts the ledger from an older copy of its data directory (its key included)
/// and writes another history. The witness, which cosigned the newer real history, refuses it:
/// the fork's ledgerd counts each refusal, records it in its own chain once per checkpoint, and
/// `verify --witness-key` accepts the real ledger, reporting what the witness cosigned, and
/// refuses the fork, naming the recorded refusal.
#[tokio::test]
async fn a_witness_refusal_is_recorded_in_the_chain_and_verify_with_its_key_refuses_the_fork() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let plain = write_config(dir.path(), "[checkpoint]\ninterval_secs = 0\n");
    let l = Ledgerd::start(&data, &plain, "127.0.0.1:0");
    let ledger_key = l.ledger_key.clone();
    l.stop();
    let w = start_witness(dir.path(), &ledger_key);
    let vkey = note::cosigner_vkey(NAME, &w.key);
    let at = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    let cfg_dir = dir.path().join("with-witness");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    let cfg = write_config(
        &cfg_dir,
        &format!(
            "[checkpoint]\ninterval_secs = 0\n\n[metrics]\nlisten = \"{at}\"\n\n[[witnesses]]\nname = \"{NAME}\"\nurl = \"http://{}\"\npublic_key = \"{}\"\n",
            w.addr,
            hex::encode(w.key.as_bytes())
        ),
    );
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let mut t = register(&l.url(), 1, &[table("table-1", "T1")])
        .await
        .remove(0);
    let events =
        |t: &mut ledger_agent::DeviceSigner, round: &str, range: std::ops::RangeInclusive<u64>| {
            range
                .map(|n| t.sign(now_ms(), bet("T1", round, n)))
                .collect::<Vec<_>>()
        };
    submit(&l.url(), &events(&mut t, "r", 1..=30)).await;
    let s1 = size_of(&checkpoint_note(&l.url(), &dir.path().join("client")));
    wait_cosigned(&l, s1).await;
    l.stop();
    let fork = dir.path().join("fork");
    copy_dir(&data, &fork);

    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    submit(&l.url(), &events(&mut t, "r", 31..=80)).await;
    let s2 = size_of(&checkpoint_note(&l.url(), &dir.path().join("client")));
    wait_cosigned(&l, s2).await;
    assert!(refusals_in_chain(&l.url()).await.is_empty());
    l.stop();

    // The fork: its newest checkpoint is older than what the witness holds (409, a rollback),
    // then its own history past it cannot be proven consistent with the real one (422).
    let f = Ledgerd::start(&fork, &cfg, "127.0.0.1:0");
    let mut t2 = ledger_agent::DeviceSigner::new("table-1", t.key().clone(), 31);
    submit(&f.url(), &events(&mut t2, "forked", 31..=200)).await;
    let s3 = size_of(&checkpoint_note(&f.url(), &dir.path().join("insider")));
    assert!(s3 > s2);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let refusals = loop {
        let r = refusals_in_chain(&f.url()).await;
        if r.iter().any(|(_, _, status)| *status == 422) {
            break r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no 422 refusal recorded: {r:?}\n{}",
            f.stderr_text()
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    // Once per witness and checkpoint, however often the submission is retried.
    let mut numbers: Vec<u64> = refusals.iter().map(|r| r.1).collect();
    numbers.dedup();
    assert_eq!(numbers.len(), refusals.len(), "{refusals:?}");
    assert!(
        refusals.iter().all(|r| r.2 == 409 || r.2 == 422),
        "{refusals:?}"
    );
    let text = scrape(at);
    let figure = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}{{witness=\"{NAME}\"}} ")))
            .unwrap_or_else(|| panic!("no {name}:\n{text}"))
            .parse()
            .unwrap()
    };
    let counted = figure("ledger_witness_refusals_total");
    assert!(counted >= refusals.len() as f64, "{counted} < {refusals:?}");
    let answered = figure("ledger_witness_round_trip_seconds_count");
    assert!(answered >= counted, "{text}");
    eprintln!(
        "witness round trip: {answered} answers, mean {:.1} ms (debug build, loopback, witness fsync)",
        1e3 * figure("ledger_witness_round_trip_seconds_sum") / answered
    );
    f.stop();

    // verify with the witness's key: the real ledger passes and says what was cosigned.
    let (code, out, err) = ledgerctl(&[
        "--json",
        "verify",
        "--data-dir",
        data.to_str().unwrap(),
        "--witness-key",
        &vkey,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let ws = &v["witnesses"][0];
    assert_eq!(ws["name"], NAME);
    assert!(ws["cosigned"].as_u64().unwrap() >= 2, "{v}");
    assert!(
        ws["newest_cosigned"]["tree_size"].as_u64().unwrap() >= s2,
        "{v}"
    );
    assert_eq!(v["witness_refusals"].as_array().unwrap().len(), 0);
    // The fork holds together under the ledger's key alone, and is refused with the witness's.
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", fork.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("WITNESS REFUSED"), "{out}");
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--data-dir",
        fork.to_str().unwrap(),
        "--witness-key",
        &vkey,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let last = refusals.last().unwrap();
    assert!(
        err.contains(&format!("refused checkpoint #{}", last.1))
            && err.contains("cosigned nothing after it"),
        "{err}"
    );
    // The same through an export file.
    let export = dir.path().join("fork.export");
    let (code, out, err) = ledgerctl(&[
        "export",
        "--data-dir",
        fork.to_str().unwrap(),
        "--out",
        export.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = ledgerctl(&[
        "verify",
        "--file",
        export.to_str().unwrap(),
        "--witness-key",
        &vkey,
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cosigned nothing after it"), "{err}");
}

/// Python (the example agent's venv, with `cryptography` and its ML-DSA) for
/// scripts/c2sp-mldsa44.py, made by examples/python/setup.sh when missing as in
/// tests/python_agent.rs.
fn python_with_ml_dsa() -> std::path::PathBuf {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let venv = std::env::var_os("PYTHON_AGENT_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| repo.join("target"))
                .join("python-agent")
        });
    let py = venv.join("bin").join("python");
    let ok = |py: &std::path::Path| {
        Command::new(py)
            .args([
                "-c",
                "from cryptography.hazmat.primitives.asymmetric import mldsa",
            ])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(&py) {
        let st = Command::new("bash")
            .arg(repo.join("examples/python/setup.sh"))
            .env("PYTHON_AGENT_VENV", &venv)
            .status();
        eprintln!("examples/python/setup.sh: {st:?}");
    }
    assert!(
        ok(&py),
        "{}: no Python with cryptography's ML-DSA (examples/python/setup.sh makes it)",
        py.display()
    );
    py
}

/// A witness with an ed25519 and an ML-DSA-44 key (`keygen --ml-dsa-44`, `witness serve
/// --ml-dsa-key`) and a ledgerd configured with both: each cosigned checkpoint's note carries
/// both lines, and both verify (the ML-DSA-44 one also with Python's `cryptography`, an
/// independent implementation); `verify --data-dir --witness-key` passes with the ML-DSA-44
/// vkey, and fails with another ML-DSA-44 key under the witness's name.
#[tokio::test]
async fn a_witness_cosigns_with_ml_dsa_44_too_and_verify_takes_its_key() {
    use ledger_core::note::{CosignerKey, ml_dsa_44_public_from_pem};
    use ledger_core::proto::{self as v1, checkpoints_client::CheckpointsClient};
    let dir = tempdir();
    let data = dir.path().join("data");
    let plain = write_config(dir.path(), "[checkpoint]\ninterval_secs = 0\n");
    let l = Ledgerd::start(&data, &plain, "127.0.0.1:0");
    let ledger_key = l.ledger_key.clone();
    l.stop();

    let keygen = |base: &std::path::Path, ml: bool| {
        let mut args = vec!["keygen", "--out", base.to_str().unwrap()];
        if ml {
            args.push("--ml-dsa-44");
        }
        ledgerctl(&args)
    };
    let (ed_base, ml_base) = (dir.path().join("w-ed"), dir.path().join("w-ml"));
    for (b, ml) in [(&ed_base, false), (&ml_base, true)] {
        let (code, out, err) = keygen(b, ml);
        assert_eq!(code, 0, "{out}{err}");
    }
    let (code, _, err) = keygen(&ml_base, true);
    assert_ne!(code, 0, "keygen overwrote a key");
    assert!(err.contains("w-ml.pub"), "{err}");
    let ml_secret = ml_base.with_extension("key");
    let ml_pub = ml_base.with_extension("pub");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&ml_secret).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let secret_text = std::fs::read_to_string(&ml_secret).unwrap();
    assert!(secret_text.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    let ml_key = CosignerKey::from(
        ml_dsa_44_public_from_pem(&std::fs::read_to_string(&ml_pub).unwrap()).unwrap(),
    );
    let ed_key = ledger_agent::keys::read_secret(&ed_base.with_extension("key"))
        .unwrap()
        .verifying_key();

    let mut child = Command::new(bin("ledgerctl"))
        .args([
            "witness",
            "serve",
            "--name",
            NAME,
            "--key",
            ed_base.with_extension("key").to_str().unwrap(),
            "--ml-dsa-key",
            ml_secret.to_str().unwrap(),
            "--log",
            &format!("casino-ledger/e2e={ledger_key}"),
            "--state",
            dir.path().join("witness-state").to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    let w = Witness {
        child,
        addr: first
            .split_whitespace()
            .skip_while(|w| *w != "on")
            .nth(1)
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string(),
        key: ed_key,
    };
    assert!(
        first.contains(&note::cosigner_vkey(NAME, &ed_key)),
        "{first}"
    );
    let ml_vkey = ml_key.vkey(NAME);
    assert_eq!(
        second,
        format!("witness {NAME} ML-DSA-44 vkey {ml_vkey}"),
        "the vkey printed is the one of the public key file"
    );

    let cfg_dir = dir.path().join("with-witness");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    let cfg = write_config(
        &cfg_dir,
        &format!(
            "[checkpoint]\ninterval_secs = 0\nwitnesses_required = 1\n\n[[witnesses]]\nname = \"{NAME}\"\nurl = \"http://{}\"\npublic_key = \"{}\"\nml_dsa_public_key = \"{}\"\n",
            w.addr,
            hex::encode(ed_key.as_bytes()),
            ml_pub.display()
        ),
    );
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    submit(
        &url,
        &(1..=20)
            .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
            .collect::<Vec<_>>(),
    )
    .await;
    let size = size_of(&checkpoint_note(&url, &dir.path().join("client")));
    wait_cosigned(&l, size).await;
    let mut c = CheckpointsClient::new(ledger_agent::connect(&url).await.unwrap());
    let cosigned = c
        .get_latest(v1::GetCheckpointRequest { cosigned: true })
        .await
        .unwrap()
        .into_inner();
    l.stop();
    let n = SignedNote::parse(&cosigned.note).unwrap();
    assert_eq!(n.signatures.len(), 3, "{}", cosigned.note);
    let t_ed = n.cosigned_by(NAME, ed_key).unwrap();
    let t_ml = n.cosigned_by(NAME, &ml_key).unwrap();
    assert_eq!(t_ed, t_ml, "one answer, one time");
    let ml_line = n
        .signatures
        .iter()
        .find(|s| s.key_id == ml_key.key_id(NAME))
        .unwrap();
    assert_eq!(ml_line.signature.len(), 8 + 2420);

    // The independent check: Python's cryptography with the message built from the spec.
    let mut py = Command::new(python_with_ml_dsa())
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/c2sp-mldsa44.py"))
        .args(["verify", &ml_vkey])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    py.stdin
        .take()
        .unwrap()
        .write_all(cosigned.note.as_bytes())
        .unwrap();
    let out = py.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        t_ml.to_string()
    );

    // verify with the ML-DSA-44 vkey (and with both).
    let (code, out, err) = ledgerctl(&[
        "--json",
        "verify",
        "--data-dir",
        data.to_str().unwrap(),
        "--witness-key",
        &ml_vkey,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["witnesses"][0]["name"], NAME);
    assert!(v["witnesses"][0]["cosigned"].as_u64().unwrap() >= 1, "{v}");
    let ed_vkey = note::cosigner_vkey(NAME, &ed_key);
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--data-dir",
        data.to_str().unwrap(),
        "--witness-key",
        &ed_vkey,
        "--witness-key",
        &ml_vkey,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // Another ML-DSA-44 key under the witness's name cosigned nothing.
    let other = dir.path().join("other-ml");
    let (code, out, err) = keygen(&other, true);
    assert_eq!(code, 0, "{out}{err}");
    let other_vkey = CosignerKey::from(
        ml_dsa_44_public_from_pem(&std::fs::read_to_string(other.with_extension("pub")).unwrap())
            .unwrap(),
    )
    .vkey(NAME);
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--data-dir",
        data.to_str().unwrap(),
        "--witness-key",
        &other_vkey,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("cosigned none"), "{err}");
    drop(w);
}
