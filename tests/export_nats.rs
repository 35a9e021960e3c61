//! The export to NATS JetStream (`[export.nats]`, `ledgerd::export_nats`) against a real
//! three-node JetStream cluster on loopback (Debian's nats-server: `scripts/install-nats.sh`),
//! stream replicas 3: a node killed during the export, ledgerd killed mid-export and restarted;
//! every entry reaches a consumer exactly once, in order, and verifies against the ledger's
//! signed checkpoint (chain links and the Merkle root, recomputed here with ledger-core).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer::pull::OrderedConfig};
use casino_play::sim::DeviceSpec;
use e2e::*;
use ledger_agent::DeviceSigner;
use ledger_core::merkle::{Frontier, leaf_hash};
use ledger_core::proto as v1;
use prost::Message as _;
use tokio_stream::StreamExt as _;

const STREAM: &str = "E2E_EXPORT";

/// nats-server: `NATS_SERVER_BIN`, the PATH, or where Debian puts it.
fn nats_server() -> PathBuf {
    if let Some(p) = std::env::var_os("NATS_SERVER_BIN") {
        return p.into();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())
        .expect("nats-server not found: run scripts/install-nats.sh (or set NATS_SERVER_BIN)")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A JetStream cluster of nats-server processes on loopback, each with its own store in a
/// temporary directory; killed when dropped.
struct Cluster {
    _dir: tempfile::TempDir,
    nodes: Vec<Option<Child>>,
    names: Vec<String>,
    ports: Vec<u16>,
}

impl Cluster {
    fn start(n: usize) -> Cluster {
        Self::start_with(n, "")
    }

    /// `extra`: more of each node's configuration (e.g. a `tls` block).
    fn start_with(n: usize, extra: &str) -> Cluster {
        let dir = tempdir();
        let ports: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let routes: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let mut nodes = Vec::new();
        let mut names = Vec::new();
        for i in 0..n {
            let name = format!("n{}", i + 1);
            let others: Vec<String> = (0..n)
                .filter(|&j| j != i)
                .map(|j| format!("\"nats-route://127.0.0.1:{}\"", routes[j]))
                .collect();
            let conf = dir.path().join(format!("{name}.conf"));
            std::fs::write(
                &conf,
                format!(
                    "server_name: {name}\nlisten: 127.0.0.1:{}\n\
                     jetstream {{ store_dir: {:?}, max_memory_store: 64MB, max_file_store: 2GB }}\n{}{extra}\n",
                    ports[i],
                    dir.path().join(&name),
                    if n > 1 {
                        format!(
                            "cluster {{ name: e2e, listen: 127.0.0.1:{}, routes: [{}] }}\n",
                            routes[i],
                            others.join(", ")
                        )
                    } else {
                        String::new()
                    }
                ),
            )
            .unwrap();
            let log = std::fs::File::create(dir.path().join(format!("{name}.log"))).unwrap();
            let child = Command::new(nats_server())
                .arg("-c")
                .arg(&conf)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("spawn nats-server");
            nodes.push(Some(child));
            names.push(name);
        }
        Cluster {
            _dir: dir,
            nodes,
            names,
            ports,
        }
    }

    fn urls(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| format!("nats://127.0.0.1:{p}"))
            .collect()
    }

    /// kill -9 the node named `name`.
    fn kill(&mut self, name: &str) {
        let i = self.names.iter().position(|n| n == name).expect("a node");
        if let Some(mut c) = self.nodes[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A JetStream client of the nodes still running (every node's address: the client moves).
    async fn client(&self) -> jetstream::Context {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let addrs: Vec<async_nats::ServerAddr> =
                self.urls().iter().map(|u| u.parse().unwrap()).collect();
            match async_nats::ConnectOptions::new()
                .connection_timeout(Duration::from_secs(2))
                .connect(addrs)
                .await
            {
                Ok(c) => return jetstream::new(c),
                Err(e) if Instant::now() < deadline => {
                    eprintln!("connect: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("cannot connect to the cluster: {e}"),
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in self.nodes.iter_mut().flatten() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The stream's (last sequence, messages, leader, replicas), once the cluster answers.
async fn stream_state(js: &jetstream::Context) -> Option<(u64, u64, String, usize)> {
    let mut s = js.get_stream(STREAM).await.ok()?;
    let info = s.info().await.ok()?;
    let leader = info
        .cluster
        .as_ref()
        .and_then(|c| c.leader.clone())
        .unwrap_or_default();
    Some((
        info.state.last_sequence,
        info.state.messages,
        leader,
        info.config.num_replicas,
    ))
}

/// Wait until the stream holds `entries` messages; panics after `secs`.
async fn wait_for(js: &jetstream::Context, entries: u64, secs: u64, l: &Ledgerd) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut last = None;
    while Instant::now() < deadline {
        last = stream_state(js).await;
        if matches!(&last, Some((_, m, _, _)) if *m >= entries) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the stream did not reach {entries} messages in {secs}s: {last:?}\nledgerd:\n{}",
        l.stderr_text()
    );
}

fn export_config(dir: &Path, cluster: &Cluster, metrics: std::net::SocketAddr) -> PathBuf {
    let servers: Vec<String> = cluster.urls().iter().map(|u| format!("{u:?}")).collect();
    write_config(
        dir,
        &format!(
            "[metrics]\nlisten = \"{metrics}\"\n\
             [export.nats]\nservers = [{}]\nstream = \"{STREAM}\"\nreplicas = 3\nack_timeout_ms = 2000\n",
            servers.join(", ")
        ),
    )
}

fn spec(id: &str, casino: &str, table: &str) -> DeviceSpec {
    DeviceSpec {
        casino_id: casino.into(),
        ..e2e::table(id, table)
    }
}

/// `n` bets from each signer, interleaved.
fn bets(signers: &mut [(DeviceSigner, &str)], round: &str, n: u64) -> Vec<v1::Envelope> {
    let mut out = Vec::new();
    for k in 0..n {
        for (s, t) in signers.iter_mut() {
            out.push(s.sign(now_ms(), bet(t, round, k)));
        }
    }
    out
}

async fn submit_ok(url: &str, envs: &[v1::Envelope]) {
    for r in submit(url, envs).await {
        assert_eq!(st(&r), v1::ReceiptStatus::Accepted, "{r:?}");
    }
}

async fn head(url: &str) -> u64 {
    v1::query_client::QueryClient::new(ledger_agent::connect(url).await.unwrap())
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner()
        .index
}

/// One message as the consumer got it.
struct Got {
    seq: u64,
    subject: String,
    index: Option<String>,
    hash: Option<String>,
    msg_id: Option<String>,
    casino: Option<String>,
    payload: Vec<u8>,
}

/// Every message of the stream, from the first, through an ordered consumer; stops after
/// `at_least` messages and a quiet second (to see any message beyond them).
async fn consume(js: &jetstream::Context, at_least: u64) -> Vec<Got> {
    // After a node was killed the cluster may still be electing leaders: try for a while.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut msgs = loop {
        let made = async {
            js.get_stream(STREAM)
                .await?
                .create_consumer(OrderedConfig::default())
                .await?
                .messages()
                .await
                .map_err(async_nats::Error::from)
        };
        match made.await {
            Ok(m) => break m,
            Err(e) if Instant::now() < deadline => {
                eprintln!("an ordered consumer: {e}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("no ordered consumer: {e}"),
        }
    };
    let mut out = Vec::new();
    loop {
        let wait = if (out.len() as u64) < at_least {
            Duration::from_secs(30)
        } else {
            Duration::from_secs(1)
        };
        let m = match tokio::time::timeout(wait, msgs.next()).await {
            Ok(Some(m)) => m.expect("a message"),
            _ => break,
        };
        let h = |n: &str| {
            m.headers
                .as_ref()
                .and_then(|h| h.get(n))
                .map(|v| v.as_str().to_string())
        };
        out.push(Got {
            seq: m.info().unwrap().stream_sequence,
            subject: m.subject.to_string(),
            index: h("Ledger-Index"),
            hash: h("Ledger-Entry-Hash"),
            msg_id: h("Nats-Msg-Id"),
            casino: h("Ledger-Casino"),
            payload: m.payload.to_vec(),
        });
    }
    out
}

/// The ledger's latest checkpoint (signed on request, covering the head) as `ledgerctl --json
/// checkpoint` prints it, written to `dir/cp.json`.
fn checkpoint(l: &Ledgerd, dir: &Path) -> (PathBuf, v1::Checkpoint) {
    let (code, out, err) = ledgerctl(&["--json", "checkpoint", "--server", &l.url()]);
    assert_eq!(code, 0, "{out}{err}");
    let p = dir.join("cp.json");
    std::fs::write(&p, &out).unwrap();
    let cp = nats_consumer::checkpoint_from_json(&out).unwrap();
    (p, cp)
}

/// Exactly the entries 0..=head, once each, in order, in consecutive stream sequences from 1;
/// each links to the one before; the checkpoint's head hash and Merkle root are those of the
/// messages' bytes. (Checked here with ledger-core alone, not with the example's verifier.)
fn check_export(got: &[Got], head: u64, cp: &v1::Checkpoint, key: &str) {
    assert_eq!(
        got.len() as u64,
        head + 1,
        "messages {} for entries 0..={head}",
        got.len()
    );
    let key = ledger_core::signing::parse_public_key_hex(key).unwrap();
    let info = ledger_core::record::check_checkpoint(cp, Some(&key)).expect("a signed checkpoint");
    let tree = info.tree.clone().expect("a tree head");
    assert_eq!(info.index, head, "the checkpoint covers the head");
    let mut prev = ledger_core::GENESIS_PREV_HASH;
    let mut frontier = Frontier::new();
    for (i, g) in got.iter().enumerate() {
        let i = i as u64;
        assert_eq!(g.seq, i + 1, "stream sequence of entry {i}");
        let e = v1::ChainEntry::decode(g.payload.as_slice()).expect("a ChainEntry");
        assert_eq!(e.index, i, "message {} holds entry {}", g.seq, e.index);
        assert_eq!(g.index.as_deref(), Some(i.to_string().as_str()));
        assert_eq!(g.msg_id.as_deref(), Some(format!("e2e:{i}").as_str()));
        let h = ledger_core::verify::check_link(&e, i, &prev).expect("links to the one before");
        assert_eq!(g.hash.as_deref(), Some(hex::encode(h).as_str()));
        prev = h;
        frontier.push(leaf_hash(&g.payload));
    }
    assert_eq!(prev, info.head_hash, "chain head");
    assert_eq!(
        (frontier.root(), head + 1),
        (tree.root, tree.size),
        "Merkle root"
    );
}

/// The example consumer, run as a downstream system would.
/// Run the example consumer. It retries while the cluster re-elects leaders after a node was
/// killed (each try may wait out a NATS request timeout), so give it a minute.
fn run_example(cluster: &Cluster, cp: &Path, key: &str) -> (i32, String, String) {
    let mut cmd = Command::new(bin("nats-consumer"));
    for u in cluster.urls() {
        cmd.args(["--server", &u]);
    }
    let out = cmd
        .args(["--stream", STREAM, "--ledger-key", key, "--idle-secs", "60"])
        .arg("--checkpoint")
        .arg(cp)
        .output()
        .expect("run nats-consumer (cargo build -p nats-consumer)");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn scrape(at: std::net::SocketAddr) -> String {
    use std::io::{Read, Write};
    let mut s = tls_stream(at, "e2e-admin");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8(out).unwrap()
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} missing:\n{text}"))
        .parse()
        .unwrap()
}

/// The stream's leader is killed while the export runs: the exporter resumes on the two left
/// (replicas 3), and a consumer gets every entry once, in order, verifiable against the ledger's
/// checkpoint; the example consumer agrees, and refuses an export with an entry twice, one
/// missing, or one byte changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_during_the_export_loses_and_repeats_nothing() {
    let mut cluster = Cluster::start(3);
    let dir = tempdir();
    let at = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    let cfg = export_config(dir.path(), &cluster, at);
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let specs = [
        spec("T-L1", "lisboa", "RL-1"),
        spec("T-L2", "lisboa", "RL-2"),
        spec("T-P1", "porto.norte", "RP-1"),
    ];
    let signers = register(&url, 1, &specs).await;
    let mut signers: Vec<(DeviceSigner, &str)> =
        signers.into_iter().zip(["RL-1", "RL-2", "RP-1"]).collect();
    let js = cluster.client().await;

    submit_ok(&url, &bets(&mut signers, "R1", 700)).await;
    // The exporter made the stream with three replicas; kill its leader while entries flow.
    let mut leader = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while leader.is_empty() {
        assert!(
            Instant::now() < deadline,
            "no stream leader: {}",
            l.stderr_text()
        );
        if let Some((_, _, ld, replicas)) = stream_state(&js).await {
            assert_eq!(replicas, 3);
            leader = ld;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let send = {
        let (url, envs) = (url.clone(), bets(&mut signers, "R2", 700));
        tokio::spawn(async move { submit_ok(&url, &envs).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let exported = stream_state(&js).await.map(|s| s.1).unwrap_or_default();
    cluster.kill(&leader);
    send.await.unwrap();
    submit_ok(&url, &bets(&mut signers, "R3", 300)).await;
    let head = head(&url).await;
    eprintln!("killed the leader {leader} with {exported} entries exported; head {head}");

    let js = cluster.client().await;
    wait_for(&js, head + 1, 180, &l).await;
    let (cp_file, cp) = checkpoint(&l, dir.path());
    // The checkpoint request itself signs no entry: the head is unchanged.
    let got = consume(&js, head + 1).await;
    check_export(&got, head, &cp, &l.ledger_key);
    let (last_seq, messages, ..) = stream_state(&js).await.unwrap();
    assert_eq!((last_seq, messages), (head + 1, head + 1));

    // Subjects: per casino and kind; principals' and the ledger's own apart.
    let subjects = |s: &str| got.iter().filter(|g| g.subject == s).count();
    assert_eq!(subjects("ledger.ledger.genesis"), 1);
    assert_eq!(subjects("ledger.principal.device_registered"), 3);
    assert_eq!(subjects("ledger.casino.lisboa.bet_placed"), 2 * 1700);
    assert_eq!(subjects("ledger.casino.porto%2Enorte.bet_placed"), 1700);
    assert!(
        got.iter()
            .filter(|g| g.subject.contains("porto"))
            .all(|g| g.casino.as_deref() == Some("porto.norte"))
    );

    // The lag, in ledgerd's metrics.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = scrape(at);
        if metric(&text, "ledger_export_nats_lag_entries") == 0.0
            && metric(&text, "ledger_export_nats_lag_seconds") == 0.0
        {
            assert_eq!(
                metric(&text, "ledger_export_nats_exported_entries"),
                (head + 1) as f64
            );
            assert_eq!(metric(&text, "ledger_export_nats_connected"), 1.0);
            eprintln!(
                "exporter: {} published, {} duplicates, {} resumes",
                metric(&text, "ledger_export_nats_published_total"),
                metric(&text, "ledger_export_nats_duplicates_total"),
                metric(&text, "ledger_export_nats_resumes_total")
            );
            assert!(metric(&text, "ledger_export_nats_published_total") >= 1.0);
            break;
        }
        assert!(Instant::now() < deadline, "lag never 0:\n{text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The example consumer verifies the same export ...
    let (code, out, err) = run_example(&cluster, &cp_file, &l.ledger_key);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "verified entries 0 to {head} against the checkpoint"
        )),
        "{out}"
    );
    // ... and its verifier refuses a duplicate, a gap and a changed byte.
    let key = ledger_core::signing::parse_public_key_hex(&l.ledger_key).unwrap();
    let feed = |msgs: Vec<&Got>| -> Result<bool, String> {
        let mut v = nats_consumer::Verifier::new(&cp, &key).map_err(|e| e.to_string())?;
        for g in msgs {
            v.accept(g.seq, g.index.as_deref(), g.hash.as_deref(), &g.payload)
                .map_err(|e| e.to_string())?;
        }
        Ok(v.verified())
    };
    assert_eq!(feed(got.iter().collect()), Ok(true));
    let mut dup: Vec<&Got> = got.iter().collect();
    dup.insert(100, &got[99]);
    assert!(feed(dup).unwrap_err().contains("duplicate"));
    let mut gap: Vec<&Got> = got.iter().collect();
    gap.remove(100);
    assert!(feed(gap).unwrap_err().contains("missing"));
    let mut changed = Got {
        payload: got[100].payload.clone(),
        subject: String::new(),
        index: got[100].index.clone(),
        hash: got[100].hash.clone(),
        msg_id: None,
        casino: None,
        seq: got[100].seq,
    };
    let n = changed.payload.len();
    changed.payload[n - 40] ^= 1;
    let mut tampered: Vec<&Got> = got.iter().collect();
    tampered[100] = &changed;
    assert!(feed(tampered).is_err());
    l.stop();
}

/// ledgerd killed (-9) while the export runs, then restarted: the exporter resumes from the
/// stream's last message; no gap, no duplicate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ledgerd_killed_mid_export_resumes_without_gap_or_duplicate() {
    let cluster = Cluster::start(3);
    let dir = tempdir();
    let at = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    let cfg = export_config(dir.path(), &cluster, at);
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let signers = register(&url, 1, &[spec("T-L1", "lisboa", "RL-1")]).await;
    let mut signers: Vec<(DeviceSigner, &str)> = signers.into_iter().zip(["RL-1"]).collect();
    let js = cluster.client().await;
    // Wait for the stream (the first entries exported), then kill ledgerd right after a
    // batch is acknowledged, before the export has caught up with it.
    wait_for(&js, 1, 60, &l).await;
    let mut round = 0;
    let mut l = l;
    loop {
        round += 1;
        let url = l.url();
        submit_ok(&url, &bets(&mut signers, &format!("R{round}"), 3000)).await;
        let head = head(&url).await;
        l.kill9();
        let after = stream_state(&js).await.map(|s| s.1).unwrap_or_default();
        eprintln!("ledgerd killed at head {head} with {after} entries exported");
        l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
        if after < head + 1 {
            break;
        }
        assert!(round < 5, "the export always caught up before the kill");
    }
    let url = l.url();
    submit_ok(&url, &bets(&mut signers, "after", 500)).await;
    let head = head(&url).await;
    wait_for(&js, head + 1, 120, &l).await;
    let (_, cp) = checkpoint(&l, dir.path());
    let got = consume(&js, head + 1).await;
    check_export(&got, head, &cp, &l.ledger_key);
    let (last_seq, messages, ..) = stream_state(&js).await.unwrap();
    assert_eq!((last_seq, messages), (head + 1, head + 1));
    l.stop();
}

/// Over TLS to a NATS server that requires a client certificate: the export presents
/// `export.nats.tls_cert`/`tls_key` and checks the server against `tls_ca`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_goes_over_tls_with_a_client_certificate() {
    let p = pki();
    let tls = format!(
        "tls {{ cert_file: {:?}, key_file: {:?}, ca_file: {:?}, verify: true }}",
        p.dir.join("ledgerd.pem"),
        p.dir.join("ledgerd.key"),
        p.ca()
    );
    let cluster = Cluster::start_with(1, &tls);
    let dir = tempdir();
    let cfg = write_config(
        dir.path(),
        &format!(
            "[export.nats]\nservers = [\"tls://127.0.0.1:{}\"]\nstream = \"{STREAM}\"\nreplicas = 1\n\
             tls_ca = {:?}\ntls_cert = {:?}\ntls_key = {:?}\n",
            cluster.ports[0],
            p.ca(),
            p.cert("e2e-admin"),
            p.key("e2e-admin")
        ),
    );
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let signers = register(&url, 1, &[spec("T-L1", "lisboa", "RL-1")]).await;
    let mut signers: Vec<(DeviceSigner, &str)> = signers.into_iter().zip(["RL-1"]).collect();
    submit_ok(&url, &bets(&mut signers, "R1", 200)).await;
    let head = head(&url).await;
    let client = async_nats::ConnectOptions::new()
        .add_root_certificates(p.ca())
        .add_client_certificate(p.cert("e2e-regulator"), p.key("e2e-regulator"))
        .require_tls(true)
        .connect(format!("tls://127.0.0.1:{}", cluster.ports[0]))
        .await
        .expect("a TLS client of the cluster");
    let js = jetstream::new(client);
    wait_for(&js, head + 1, 60, &l).await;
    let (_, cp) = checkpoint(&l, dir.path());
    check_export(&consume(&js, head + 1).await, head, &cp, &l.ledger_key);
    // A client without a certificate is refused by the server (the stream is not open to it).
    let plain = async_nats::ConnectOptions::new()
        .add_root_certificates(p.ca())
        .require_tls(true)
        .connection_timeout(Duration::from_secs(3))
        .connect(format!("tls://127.0.0.1:{}", cluster.ports[0]))
        .await;
    assert!(plain.is_err(), "a client without a certificate was let in");
    l.stop();
}
