//! Helpers for the end-to-end tests: start the real `ledgerd` binary on a loopback port, talk real
//! gRPC to it, run the real `ledgerctl`.
//!
//! The binaries are found next to the test executable (target/<profile>/). `cargo test
//! --workspace` builds them (ledgerd and ledgerctl have their own integration tests); when running
//! only this package, build them first: `cargo build -p ledgerd -p ledgerctl`, or set
//! LEDGERD_BIN / LEDGERCTL_BIN.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod slots;

use casino_play::sim::DeviceSpec;
use ed25519_dalek::SigningKey;
use ledger_agent::DeviceSigner;
use ledger_core::proto::{self as v1, event_body::Payload as P};

/// The test deployment's certificates, made once per test process with `ledgerctl pki` (the
/// real tool): a CA, ledgerd's certificate for 127.0.0.1 and localhost, and one client per
/// principal of [`CLIENTS`]. Every test ledger serves TLS with them; in-process clients use
/// [`DEFAULT_CLIENT`] (a regulator: it may submit and read everything), child processes get it
/// through LEDGER_CA/LEDGER_CERT/LEDGER_KEY ([`tls_env`]).
pub struct Pki {
    pub dir: PathBuf,
    fingerprints: Vec<(&'static str, String)>,
}

/// The principals every test ledger knows: (name, role, casinos).
pub const CLIENTS: &[(&str, &str, &[&str])] = &[
    ("e2e-regulator", "regulator", &[]),
    ("e2e-admin", "admin", &[]),
    ("e2e-operator", "operator", &[]),
    ("e2e-compliance", "compliance", &[]),
    ("e2e-device", "device", &[]),
    ("lisboa-compliance", "compliance", &["lisboa"]),
    ("lisboa-device", "device", &["lisboa"]),
    ("lisboa-operator", "operator", &["lisboa"]),
    ("porto-compliance", "compliance", &["porto"]),
];

/// The identity of in-process clients and of child processes by default.
pub const DEFAULT_CLIENT: &str = "e2e-regulator";

impl Pki {
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    pub fn cert(&self, client: &str) -> PathBuf {
        self.dir.join(format!("{client}.pem"))
    }
    pub fn key(&self, client: &str) -> PathBuf {
        self.dir.join(format!("{client}.key"))
    }
    /// A client's TLS material, for in-process gRPC clients.
    pub fn identity(&self, client: &str) -> ledger_agent::tls::ClientTls {
        ledger_agent::tls::ClientTls::from_files(
            &self.ca(),
            Some(&self.cert(client)),
            Some(&self.key(client)),
        )
        .expect("test client certificate")
    }
    pub fn fingerprint(&self, client: &str) -> &str {
        &self
            .fingerprints
            .iter()
            .find(|(n, _)| *n == client)
            .expect("a test client")
            .1
    }

    /// The `[tls]` section and `[[clients]]` of a test ledger's configuration.
    pub fn config(&self) -> String {
        let mut t = format!(
            "[tls]\ncert_chain = {:?}\nkey = {:?}\nclient_ca = [{:?}]\n",
            self.dir.join("ledgerd.pem"),
            self.dir.join("ledgerd.key"),
            self.ca()
        );
        for (name, role, casinos) in CLIENTS {
            t += &format!(
                "[[clients]]\nname = \"{name}\"\nrole = \"{role}\"\ncasinos = {casinos:?}\nfingerprint = \"{}\"\n",
                self.fingerprint(name)
            );
        }
        t
    }
}

/// The test process's certificates (made on first use).
pub fn pki() -> &'static Pki {
    static PKI: std::sync::OnceLock<Pki> = std::sync::OnceLock::new();
    PKI.get_or_init(|| {
        let dir = tempdir().keep();
        let ctl = |args: &[&str]| {
            let out = Command::new(bin("ledgerctl"))
                .args(args)
                .arg("--dir")
                .arg(&dir)
                .env_remove("LEDGER_CA")
                .env_remove("LEDGER_CERT")
                .env_remove("LEDGER_KEY")
                .output()
                .expect("run ledgerctl pki");
            assert!(out.status.success(), "ledgerctl {args:?}: {out:?}");
            String::from_utf8(out.stdout).expect("utf-8")
        };
        ctl(&["pki", "ca", "--name", "e2e CA"]);
        ctl(&[
            "pki",
            "server",
            "--host",
            "127.0.0.1",
            "--host",
            "localhost",
        ]);
        let mut fingerprints = Vec::new();
        for (name, role, _) in CLIENTS {
            let out = ctl(&["--json", "pki", "client", "--name", name, "--role", role]);
            let v: serde_json::Value = serde_json::from_str(&out).expect("pki client --json");
            fingerprints.push((
                *name,
                v["fingerprint"].as_str().expect("fingerprint").to_string(),
            ));
        }
        let pki = Pki { dir, fingerprints };
        ledger_agent::tls::set_default(pki.identity(DEFAULT_CLIENT));
        pki
    })
}

/// LEDGER_CA, LEDGER_CERT and LEDGER_KEY for a child process acting as `client`.
pub fn tls_env(client: &str) -> Vec<(&'static str, PathBuf)> {
    let p = pki();
    vec![
        ("LEDGER_CA", p.ca()),
        ("LEDGER_CERT", p.cert(client)),
        ("LEDGER_KEY", p.key(client)),
    ]
}

/// A TLS connection as `client` to a plain TLS (HTTP/1.1) listener, e.g. the metrics endpoint.
pub fn tls_stream(
    addr: std::net::SocketAddr,
    client: &str,
) -> rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let p = pki();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(p.ca()).expect("ca.pem"))
        .expect("a CA");
    let chain = vec![CertificateDer::from_pem_file(p.cert(client)).expect("client cert")];
    let key = PrivateKeyDer::from_pem_file(p.key(client)).expect("client key");
    let cfg = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_client_auth_cert(chain, key)
    .expect("client certificate");
    let name = rustls::pki_types::ServerName::try_from(addr.ip().to_string()).expect("an IP");
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(cfg), name).expect("TLS client");
    let tcp = std::net::TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    rustls::StreamOwned::new(conn, tcp)
}

/// The operator key every test ledger trusts.
pub fn operator_key() -> SigningKey {
    SigningKey::from_bytes(&[0x11; 32])
}

/// Path of a workspace binary.
pub fn bin(name: &str) -> PathBuf {
    let var = format!("{}_BIN", name.to_uppercase().replace('-', "_"));
    if let Ok(p) = std::env::var(&var) {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>/deps");
    let p = dir.join(name);
    assert!(
        p.is_file(),
        "{} not found: run `cargo test --workspace`, or `cargo build -p ledgerd -p ledgerctl -p ledger-agent-cli` first, or set {var}",
        p.display()
    );
    p
}

/// A temporary directory for a test's ledger: under `E2E_TMPDIR` if set, else under the build's
/// own `target/tmp`, on the disk that holds the build, not the system's `/tmp` (often a small
/// tmpfs on CI machines, and a 100,000-round ledger takes over 2 GB).
pub fn tempdir() -> tempfile::TempDir {
    let base = match std::env::var_os("E2E_TMPDIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let exe = std::env::current_exe().expect("test executable path");
            exe.ancestors()
                .nth(3)
                .expect("target/<profile>/deps/<test>")
                .join("tmp")
        }
    };
    std::fs::create_dir_all(&base).unwrap_or_else(|e| panic!("create {}: {e}", base.display()));
    tempfile::Builder::new()
        .prefix("e2e-")
        .tempdir_in(&base)
        .unwrap_or_else(|e| panic!("temporary directory in {}: {e}", base.display()))
}

/// A running ledgerd process.
pub struct Ledgerd {
    pub child: Child,
    pub addr: String,
    /// The ledger's public key, hex, as ledgerd printed it.
    pub ledger_key: String,
    pub data_dir: PathBuf,
    pub config: PathBuf,
    stderr: StderrTail,
}

/// How many of ledgerd's last stderr lines a failing test shows.
const STDERR_TAIL_LINES: usize = 200;

/// ledgerd's stderr, drained continuously on a thread of its own (an undrained pipe would block
/// the server's logging once the pipe buffer fills), keeping the last lines for failure reports.
#[derive(Clone, Default)]
struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn drain(child: &mut Child) -> (StderrTail, std::thread::JoinHandle<()>) {
        let tail = StderrTail::default();
        let stderr = child.stderr.take().expect("stderr");
        let t = tail.clone();
        let h = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut q = t.0.lock().unwrap_or_else(|e| e.into_inner());
                if q.len() == STDERR_TAIL_LINES {
                    q.pop_front();
                }
                q.push_back(line);
            }
        });
        (tail, h)
    }

    fn text(&self) -> String {
        let q = self.0.lock().unwrap_or_else(|e| e.into_inner());
        q.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// Every thread's stack of the process `pid`, by gdb where it is installed (a hung ledgerd's
/// stacks say where it hangs), else a line saying why not.
fn thread_backtraces(pid: u32) -> String {
    match Command::new("timeout")
        .args([
            "60",
            "gdb",
            "-p",
            &pid.to_string(),
            "-batch",
            "-ex",
            "thread apply all bt",
        ])
        .stdin(Stdio::null())
        .output()
    {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let frames: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("Thread ") || l.starts_with('#'))
                .collect();
            if frames.is_empty() {
                format!(
                    "(gdb gave none: {})",
                    String::from_utf8_lossy(&o.stderr).trim()
                )
            } else {
                frames.join("\n")
            }
        }
        Err(e) => format!("(no gdb to show them: {e})"),
    }
}

/// Write a config with the test operator, TLS with the test certificates ([`pki`]) and extra
/// TOML (which may not have a `[tls]` section of its own: see [`write_config_without_tls`]).
pub fn write_config(dir: &Path, extra: &str) -> PathBuf {
    write_config_without_tls(dir, &format!("{extra}\n{}", pki().config()))
}

/// Write a config with the test operator and `extra` TOML only.
pub fn write_config_without_tls(dir: &Path, extra: &str) -> PathBuf {
    let p = dir.join("ledgerd.toml");
    let text = format!(
        "ledger_id = \"e2e\"\n[[principals]]\nid = \"operator-1\"\nrole = \"operator\"\npublic_key = \"{}\"\n{extra}\n",
        hex::encode(operator_key().verifying_key().as_bytes())
    );
    std::fs::write(&p, text).expect("write config");
    p
}

impl Ledgerd {
    /// Start ledgerd on `listen` (use "127.0.0.1:0" for any port) and wait for it to serve.
    pub fn start(data_dir: &Path, config: &Path, listen: &str) -> Ledgerd {
        Self::try_start(data_dir, config, listen)
            .unwrap_or_else(|e| panic!("ledgerd did not start: {e}"))
    }

    /// Start, or return what ledgerd said when it refused to.
    pub fn try_start(data_dir: &Path, config: &Path, listen: &str) -> Result<Ledgerd, String> {
        Self::try_start_with_env::<&str>(data_dir, config, listen, &[])
    }

    /// [`Ledgerd::try_start`] with more environment variables for ledgerd (e.g. `SOFTHSM2_CONF`,
    /// or libfaketime's).
    pub fn try_start_with_env<V: AsRef<std::ffi::OsStr>>(
        data_dir: &Path,
        config: &Path,
        listen: &str,
        env: &[(&str, V)],
    ) -> Result<Ledgerd, String> {
        pki();
        // A new ledger is created only when asked for: the first start in a directory.
        let init = !data_dir.join("db").exists();
        let mut child = Command::new(bin("ledgerd"))
            .args(init.then_some("--init"))
            .args([
                "--config",
                config.to_str().unwrap(),
                "--data-dir",
                data_dir.to_str().unwrap(),
                "--listen",
                listen,
            ])
            .env("RUST_LOG", "warn")
            .envs(env.iter().map(|(k, v)| (*k, v.as_ref())))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ledgerd");
        let (stderr, stderr_thread) = StderrTail::drain(&mut child);
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(l)) = lines.next() {
                let _ = tx.send(l);
            }
            for _ in lines {}
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                let word = |n: usize| {
                    line.split_whitespace()
                        .nth(n)
                        .expect("ledgerd listening on ADDR ledger_key KEY")
                        .to_string()
                };
                Ok(Ledgerd {
                    child,
                    addr: word(3),
                    ledger_key: word(5),
                    data_dir: data_dir.to_path_buf(),
                    config: config.to_path_buf(),
                    stderr,
                })
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = stderr_thread.join();
                Err(stderr.text())
            }
        }
    }

    /// ledgerd's last stderr lines so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.text()
    }

    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// SIGTERM and wait for a clean exit.
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                assert!(
                    st.success(),
                    "ledgerd exited with {st}; its last stderr lines:\n{}",
                    self.stderr.text()
                );
                return;
            }
            if Instant::now() >= deadline {
                let threads = thread_backtraces(self.child.id());
                panic!(
                    "ledgerd did not stop within 30 s of SIGTERM; its threads:\n{threads}\nits last stderr lines:\n{}",
                    self.stderr.text()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// kill -9.
    pub fn kill9(mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// A test that panics must not leave its ledgerd running (on a 2-core machine, an orphan whose
/// data directory was deleted with the test's temporary directory keeps a core busy), and shows
/// what ledgerd said: whether it was still running, its exit status, its last stderr lines.
impl Drop for Ledgerd {
    fn drop(&mut self) {
        let state = match self.child.try_wait() {
            Ok(None) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                "was still running (killed by the harness)".to_string()
            }
            Ok(Some(st)) => format!("had already exited: {st}"),
            Err(e) => format!("state unknown: {e}"),
        };
        if std::thread::panicking() {
            let df = Command::new("df")
                .args(["-h", &self.data_dir.to_string_lossy()])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            eprintln!(
                "ledgerd at {} {state}; space where its data is:\n{df}its last stderr lines:\n{}",
                self.addr,
                self.stderr.text()
            );
        }
    }
}

/// Copy a directory tree (a stopped ledger's data directory, to fork or keep it).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Run ledgerctl; returns (exit code, stdout, stderr).
pub fn ledgerctl(args: &[&str]) -> (i32, String, String) {
    ledgerctl_as(DEFAULT_CLIENT, args)
}

/// Where ledgerctl keeps the checkpoints it verified (its `LEDGER_STATE_DIR`): one directory
/// for this test process, not the user's home.
pub fn ledgerctl_state_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a state directory"))
        .path()
}

/// Run ledgerctl with `client`'s certificate; returns (exit code, stdout, stderr).
pub fn ledgerctl_as(client: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin("ledgerctl"))
        .args(args)
        .envs(tls_env(client))
        .env("LEDGER_STATE_DIR", ledgerctl_state_dir())
        .output()
        .expect("run ledgerctl");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A table device spec.
pub fn table(id: &str, table: &str) -> DeviceSpec {
    DeviceSpec {
        device_id: id.into(),
        kind: ledger_core::DeviceKind::Table,
        casino_id: "e2e".into(),
        table_ids: vec![table.into()],
        machine_id: String::new(),
        model_id: String::new(),
        bet_values_cents: vec![],
        description: String::new(),
    }
}

/// Now in ms.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Register devices with the operator (starting at operator sequence `op_seq`); returns the signers.
pub async fn register(url: &str, op_seq: u64, specs: &[DeviceSpec]) -> Vec<DeviceSigner> {
    let mut op = DeviceSigner::new("operator-1", operator_key(), op_seq);
    let mut signers = Vec::new();
    let mut envs = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let k = SigningKey::from_bytes(&[(i as u8).wrapping_add(0x40); 32]);
        envs.push(op.sign(now_ms(), casino_play::registration(s, &k.verifying_key())));
        signers.push(DeviceSigner::new(&s.device_id, k, 1));
    }
    let r = ledger_agent::submit_all(url, &envs, &Default::default())
        .await
        .expect("register");
    for x in &r {
        assert_eq!(x.status, v1::ReceiptStatus::Accepted as i32, "{x:?}");
    }
    signers
}

/// A bet on table `t`.
pub fn bet(t: &str, round: &str, n: u64) -> P {
    P::BetPlaced(v1::BetPlaced {
        table_id: t.into(),
        round_id: round.into(),
        bet_id: format!("b{n}"),
        bet_type: "straight".into(),
        selection: vec![(n % 37) as u32],
        amount_cents: 100 + n as i64,
        ..Default::default()
    })
}

/// Submit on one stream and return the receipts.
pub async fn submit(url: &str, envs: &[v1::Envelope]) -> Vec<v1::Receipt> {
    ledger_agent::submit_all(url, envs, &Default::default())
        .await
        .expect("submit")
}

pub fn st(r: &v1::Receipt) -> v1::ReceiptStatus {
    v1::ReceiptStatus::try_from(r.status).expect("status")
}

pub fn why(r: &v1::Receipt) -> v1::RejectReason {
    v1::RejectReason::try_from(r.reason).expect("reason")
}

/// A ledgerd serving `[metrics]` on a free loopback port (its gRPC port is chosen by ledgerd):
/// the temporary directory, the server and the metrics address.
pub fn with_metrics() -> (tempfile::TempDir, Ledgerd, std::net::SocketAddr) {
    let dir = tempdir();
    let at = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port");
    let cfg = write_config(dir.path(), &format!("[metrics]\nlisten = \"{at}\"\n"));
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    (dir, l, at)
}
