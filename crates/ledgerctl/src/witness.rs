//! `ledgerctl witness serve`: a C2SP tlog-witness (<https://c2sp.org/tlog-witness>), what an
//! inspectorate runs beside the ledgers it oversees. For each ledger it knows (origin and key)
//! it keeps the latest checkpoint it cosigned, and cosigns a new one only with a valid
//! consistency proof from it, so two checkpoints of one ledger that disagree are never both
//! cosigned: a ledger whose history was rewritten, even by someone holding its key, is refused.
//!
//! `POST /add-checkpoint` (the protocol's only call): 404 for an unknown origin, 403 when no
//! signature verifies with the ledger's key, 400 for a malformed body or an old size above the
//! checkpoint's, 409 (`text/x.tlog.size`, the size held) when the old size is not the one held
//! or the same size has another root, 422 when the proof does not verify, else 200 with the
//! `cosignature/v1` line (and, with `--ml-dsa-key`, the ML-DSA-44 `subtree/v1` line). The state is persisted (written, fsynced, renamed) before the answer,
//! under one lock with the check. A refused request whose signature is valid is kept in
//! `STATE/refused/` as evidence of the ledger's misbehaviour.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use bytes::Bytes;
use ed25519_dalek::{SigningKey, VerifyingKey};
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Request, Response, StatusCode};
use ledger_core::merkle::{self, TreeHash};
use ledger_core::note::{self, CheckpointText, SignedNote};

use crate::trust::safe;

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Serve the C2SP tlog-witness protocol for the ledgers given.
    Serve(ServeArgs),
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The witness's name (its key name in cosignatures), e.g. inspectorate.example/w1.
    #[arg(long)]
    pub name: String,
    /// The witness's ed25519 secret key (PKCS#8 PEM, from `ledgerctl keygen`).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Also cosign with this ML-DSA-44 key (PKCS#8 PEM, from `ledgerctl keygen --ml-dsa-44`).
    #[arg(long, value_name = "FILE")]
    pub ml_dsa_key: Option<PathBuf>,
    /// A ledger it witnesses: ORIGIN=KEY (key in hex or a PEM file); repeat for each.
    #[arg(long = "log", value_name = "ORIGIN=KEY", required = true)]
    pub logs: Vec<String>,
    /// Directory of its state (the latest checkpoint cosigned per ledger).
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// Address to listen on (plain HTTP: loopback, or behind a TLS proxy).
    #[arg(long, default_value = "127.0.0.1:7380")]
    pub listen: SocketAddr,
    /// Allow a non-loopback --listen without TLS (put a TLS proxy in front).
    #[arg(long)]
    pub allow_plain_http: bool,
}

/// Largest request body taken (a checkpoint with many cosignatures and 63 proof lines).
const MAX_BODY: usize = 64 * 1024;

struct Witness {
    name: String,
    key: SigningKey,
    /// The ML-DSA-44 key it also cosigns with, if any.
    ml_dsa: Option<note::MlDsa44Secret>,
    logs: HashMap<String, VerifyingKey>,
    state: PathBuf,
    /// Held across the check and the write of the state, so two requests cannot both pass the
    /// check against the same old size (the race the protocol warns of).
    lock: tokio::sync::Mutex<()>,
}

/// The latest cosigned checkpoint of a ledger: (size, root), or (0, none).
fn held(state: &Path, origin: &str) -> anyhow::Result<(u64, Option<TreeHash>)> {
    let path = state.join(format!("{}.checkpoint", safe(origin)));
    match std::fs::read_to_string(&path) {
        Ok(t) => {
            let n = SignedNote::parse(&t).with_context(|| path.display().to_string())?;
            let c = CheckpointText::parse(&n.text).with_context(|| path.display().to_string())?;
            Ok((c.size, Some(c.root)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((0, None)),
        Err(e) => Err(e).with_context(|| path.display().to_string()),
    }
}

fn write_durably(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = path.parent().expect("in a directory");
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

fn reply(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let ct = if status == StatusCode::CONFLICT && body.trim().parse::<u64>().is_ok() {
        "text/x.tlog.size"
    } else {
        "text/plain; charset=utf-8"
    };
    Response::builder()
        .status(status)
        .header("content-type", ct)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}

impl Witness {
    async fn add_checkpoint(&self, body: &str) -> Response<Full<Bytes>> {
        let req = match note::AddCheckpoint::parse(body) {
            Ok(r) => r,
            Err(e) => return reply(StatusCode::BAD_REQUEST, format!("{e}\n")),
        };
        let Ok(n) = SignedNote::parse(&req.checkpoint) else {
            return reply(
                StatusCode::BAD_REQUEST,
                "the checkpoint is not a signed note\n".into(),
            );
        };
        let Ok(cp) = CheckpointText::parse(&n.text) else {
            return reply(
                StatusCode::BAD_REQUEST,
                "the note is not a ledger checkpoint\n".into(),
            );
        };
        let Some(log_key) = self.logs.get(&cp.origin) else {
            return reply(
                StatusCode::NOT_FOUND,
                format!("unknown log {:?}\n", cp.origin),
            );
        };
        if n.verify(&cp.origin, log_key).is_err() {
            return reply(
                StatusCode::FORBIDDEN,
                "no signature by the log's key\n".into(),
            );
        }
        if req.old_size > cp.size {
            return reply(
                StatusCode::BAD_REQUEST,
                format!(
                    "old size {} is above the checkpoint's {}\n",
                    req.old_size, cp.size
                ),
            );
        }
        let _guard = self.lock.lock().await;
        let (size, root) = match held(&self.state, &cp.origin) {
            Ok(h) => h,
            Err(e) => {
                tracing::error!("{e:#}");
                return reply(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the witness's state cannot be read\n".into(),
                );
            }
        };
        if req.old_size != size {
            return reply(StatusCode::CONFLICT, format!("{size}\n"));
        }
        let consistent = match root {
            None => req.proof.is_empty(),
            Some(r) if size == cp.size => req.proof.is_empty() && r == cp.root,
            Some(r) => merkle::verify_consistency(size, cp.size, &req.proof, &r, &cp.root).is_ok(),
        };
        if !consistent {
            self.keep_refused(&cp, body);
            let status = if root.is_some() && size == cp.size {
                StatusCode::CONFLICT
            } else {
                StatusCode::UNPROCESSABLE_ENTITY
            };
            tracing::warn!(origin = %cp.origin, from = size, to = cp.size, "checkpoint refused: not consistent with the one cosigned");
            return reply(
                status,
                format!(
                    "the checkpoint of {} entries is not consistent with the one of {size} cosigned\n",
                    cp.size
                ),
            );
        }
        let timestamp = chrono::Utc::now().timestamp().max(0) as u64;
        let mut lines = match note::cosign(&n.text, &self.name, &self.key, timestamp) {
            Ok(l) => vec![l],
            Err(e) => return reply(StatusCode::BAD_REQUEST, format!("{e}\n")),
        };
        if let Some(k) = &self.ml_dsa {
            match note::cosign_ml_dsa_44(&n.text, &self.name, k, timestamp) {
                Ok(l) => lines.push(l),
                Err(e) => return reply(StatusCode::BAD_REQUEST, format!("{e}\n")),
            }
        }
        let mut cosigned = n.clone();
        cosigned.add_signatures(&lines);
        let path = self.state.join(format!("{}.checkpoint", safe(&cp.origin)));
        if let Err(e) = write_durably(&path, &cosigned.encode()) {
            tracing::error!("{}: {e:#}", path.display());
            return reply(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the witness's state cannot be written\n".into(),
            );
        }
        tracing::info!(origin = %cp.origin, size = cp.size, "cosigned");
        reply(
            StatusCode::OK,
            lines.iter().map(note::NoteSignature::to_line).collect(),
        )
    }

    /// Keep a refused request whose signature verified: it is evidence against the ledger.
    fn keep_refused(&self, cp: &CheckpointText, body: &str) {
        let path = self.state.join("refused").join(format!(
            "{}-{}-{}.txt",
            safe(&cp.origin),
            cp.size,
            chrono::Utc::now().timestamp_millis()
        ));
        if let Err(e) = write_durably(&path, body) {
            tracing::error!("{}: {e:#}", path.display());
        }
    }
}

async fn handle(
    w: Arc<Witness>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    if req.uri().path() != "/add-checkpoint" {
        return Ok(reply(
            StatusCode::NOT_FOUND,
            "the witness serves POST /add-checkpoint\n".into(),
        ));
    }
    if req.method() != hyper::Method::POST {
        return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, "POST only\n".into()));
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request too large\n".into(),
            ));
        }
    };
    let Ok(body) = std::str::from_utf8(&body) else {
        return Ok(reply(StatusCode::BAD_REQUEST, "not UTF-8\n".into()));
    };
    Ok(w.add_checkpoint(body).await)
}

pub async fn run(c: Command) -> anyhow::Result<i32> {
    let Command::Serve(a) = c;
    if !a.listen.ip().is_loopback() && !a.allow_plain_http {
        bail!(
            "--listen {}: not a loopback address; the witness speaks plain HTTP (put a TLS proxy in front and pass --allow-plain-http)",
            a.listen
        );
    }
    if a.name.is_empty() || a.name.contains(char::is_whitespace) || a.name.contains('+') {
        bail!("--name {:?}: a key name has no spaces or '+'", a.name);
    }
    let key = ledger_agent::keys::read_secret(&a.key).context("--key")?;
    let ml_dsa = match &a.ml_dsa_key {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("--ml-dsa-key {}", p.display()))?;
            Some(
                note::ml_dsa_44_secret_from_pem(&text)
                    .with_context(|| format!("--ml-dsa-key {}", p.display()))?,
            )
        }
        None => None,
    };
    let mut logs = HashMap::new();
    for l in &a.logs {
        let (origin, k) = l
            .split_once('=')
            .with_context(|| format!("--log {l}: expected ORIGIN=KEY"))?;
        let k = ledger_agent::keys::read_public(k).with_context(|| format!("--log {l}"))?;
        logs.insert(origin.to_string(), k);
    }
    let listener = tokio::net::TcpListener::bind(a.listen)
        .await
        .with_context(|| format!("--listen {}", a.listen))?;
    let addr = listener.local_addr()?;
    let vkey = note::cosigner_vkey(&a.name, &key.verifying_key());
    let ml_vkey = ml_dsa
        .as_ref()
        .map(|k| note::CosignerKey::from(note::ml_dsa_44_public(k)).vkey(&a.name));
    let serving = spawn_with(a.name.clone(), key, ml_dsa, logs, a.state, listener)?;
    println!("witness {} listening on {addr} vkey {vkey}", a.name);
    if let Some(v) = ml_vkey {
        println!("witness {} ML-DSA-44 vkey {v}", a.name);
    }
    serving.await?
}

/// Serve the witness on `listener` in a task of its own (what `witness serve` runs; the demo
/// starts one beside its ledger). Its state directory is made and read first.
pub fn spawn(
    name: String,
    key: SigningKey,
    logs: HashMap<String, VerifyingKey>,
    state: PathBuf,
    listener: tokio::net::TcpListener,
) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<i32>>> {
    spawn_with(name, key, None, logs, state, listener)
}

/// [`spawn`] with an ML-DSA-44 key the witness also cosigns with.
pub fn spawn_with(
    name: String,
    key: SigningKey,
    ml_dsa: Option<note::MlDsa44Secret>,
    logs: HashMap<String, VerifyingKey>,
    state: PathBuf,
    listener: tokio::net::TcpListener,
) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<i32>>> {
    std::fs::create_dir_all(&state).with_context(|| format!("--state {}", state.display()))?;
    for origin in logs.keys() {
        held(&state, origin).context("--state")?;
    }
    let w = Arc::new(Witness {
        name,
        key,
        ml_dsa,
        logs,
        state,
        lock: tokio::sync::Mutex::new(()),
    });
    Ok(tokio::spawn(serve(listener, w)))
}

async fn serve(listener: tokio::net::TcpListener, w: Arc<Witness>) -> anyhow::Result<i32> {
    loop {
        let (stream, _) = listener.accept().await?;
        let w = w.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(w.clone(), req));
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(std::time::Duration::from_secs(10))
                .serve_connection(io, svc)
                .await;
        });
    }
}
