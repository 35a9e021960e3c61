//! Submitting checkpoints to witnesses (C2SP tlog-witness, `[[witnesses]]`): each new
//! checkpoint that has a tree head goes to every witness with a consistency proof from the
//! last size that witness cosigned; a valid cosignature is kept with the checkpoint
//! (`Store::add_cosignature`) and served in its note. A refusal is logged as an error: a
//! witness that holds another history than this ledger's is what a rewrite looks like from
//! outside.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ed25519_dalek::VerifyingKey;
use http_body_util::{BodyExt, Full, Limited};
use ledger_core::note::{self, AddCheckpoint, SignedNote};
use ledger_store::Store;

/// A witness and what ledgerd knows of it.
pub struct Witness {
    pub name: String,
    /// host:port of its submission prefix.
    pub authority: String,
    pub path_prefix: String,
    pub key: VerifyingKey,
    /// The size it last cosigned, as far as ledgerd knows (0 at start: its first answer, a 409,
    /// tells).
    old_size: u64,
}

impl Witness {
    pub fn new(name: &str, url: &str, key: VerifyingKey) -> Result<Witness, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("witness {name}: url {url:?} is not http://"))?;
        let (authority, path) = match rest.split_once('/') {
            Some((a, p)) => (a.to_string(), format!("/{}", p.trim_end_matches('/'))),
            None => (rest.to_string(), String::new()),
        };
        Ok(Witness {
            name: name.to_string(),
            authority,
            path_prefix: path.trim_end_matches('/').to_string(),
            key,
            old_size: 0,
        })
    }
}

/// What a witness answered.
enum Answer {
    Cosigned(note::NoteSignature),
    /// 409 with the size it holds.
    Holds(u64),
    Refused(u16, String),
}

async fn post(
    w: &Witness,
    body: String,
    timeout: Duration,
) -> Result<(u16, String, String), String> {
    let fut = async {
        let stream = tokio::net::TcpStream::connect(&w.authority)
            .await
            .map_err(|e| format!("connect {}: {e}", w.authority))?;
        let (mut send, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(conn);
        let req = hyper::Request::post(format!("{}/add-checkpoint", w.path_prefix))
            .header("host", &w.authority)
            .header("content-type", "text/plain")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let resp = send
            .send_request(req)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let status = resp.status().as_u16();
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = Limited::new(resp.into_body(), 64 * 1024)
            .collect()
            .await
            .map_err(|e| format!("answer: {e}"))?
            .to_bytes();
        Ok((status, ct, String::from_utf8_lossy(&body).into_owned()))
    };
    tokio::time::timeout(timeout, fut)
        .await
        .map_err(|_| format!("no answer within {} ms", timeout.as_millis()))?
}

async fn submit(
    store: &Arc<Store>,
    w: &Witness,
    note_text: &str,
    size: u64,
    timeout: Duration,
) -> Result<Answer, String> {
    let proof = if w.old_size == 0 || w.old_size == size {
        Vec::new()
    } else {
        let (store, from) = (store.clone(), w.old_size);
        tokio::task::spawn_blocking(move || store.consistency_proof(from, size))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?
    };
    let body = AddCheckpoint {
        old_size: w.old_size,
        proof,
        checkpoint: note_text.to_string(),
    }
    .encode();
    let (status, ct, text) = post(w, body, timeout).await?;
    Ok(match status {
        200 => {
            let lines = note::parse_signature_lines(&text).map_err(|e| e.to_string())?;
            let mut n = SignedNote::parse(note_text).map_err(|e| e.to_string())?;
            n.add_signatures(&lines);
            n.cosigned_by(&w.name, &w.key)
                .map_err(|e| format!("its answer: {e}"))?;
            let id = note::cosigner_key_id(&w.name, &w.key);
            let line = lines
                .into_iter()
                .find(|l| l.name == w.name && l.key_id == id)
                .ok_or("no cosignature of its own in its answer")?;
            Answer::Cosigned(line)
        }
        409 if ct.starts_with("text/x.tlog.size") => match text.trim().parse() {
            Ok(n) => Answer::Holds(n),
            Err(_) => Answer::Refused(409, text),
        },
        s => Answer::Refused(s, text),
    })
}

/// Follow the latest checkpoint and submit each new one to every witness, until the process
/// ends.
pub async fn run(store: Arc<Store>, mut witnesses: Vec<Witness>, timeout: Duration) {
    let mut done = 0u64;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let s = store.clone();
        let latest = match tokio::task::spawn_blocking(move || s.latest_checkpoint()).await {
            Ok(Ok(Some(l))) => l,
            _ => continue,
        };
        let (cp, info) = latest;
        let Some(tree) = info.tree.clone() else {
            continue;
        };
        if info.number <= done {
            continue;
        }
        let mut all = true;
        for w in witnesses.iter_mut() {
            // A witness that holds an older size tells it with a 409; then once more from it.
            for _ in 0..2 {
                match submit(&store, w, &cp.note, tree.size, timeout).await {
                    Ok(Answer::Cosigned(line)) => {
                        w.old_size = tree.size;
                        let (s, n) = (store.clone(), info.number);
                        match tokio::task::spawn_blocking(move || s.add_cosignature(n, &line)).await
                        {
                            Ok(Ok(())) => {
                                tracing::info!(witness = %w.name, number = info.number, size = tree.size, "checkpoint cosigned")
                            }
                            Ok(Err(e)) => {
                                tracing::error!(witness = %w.name, error = %e, "cannot keep a cosignature")
                            }
                            Err(e) => {
                                tracing::error!(witness = %w.name, error = %e, "cannot keep a cosignature")
                            }
                        }
                        break;
                    }
                    Ok(Answer::Holds(n)) if n != w.old_size && n <= tree.size => {
                        w.old_size = n;
                        continue;
                    }
                    Ok(Answer::Holds(n)) => {
                        all = false;
                        tracing::error!(witness = %w.name, holds = n, size = tree.size, "the witness holds a checkpoint this ledger cannot extend: it saw another history");
                        break;
                    }
                    Ok(Answer::Refused(status, text)) => {
                        all = false;
                        tracing::error!(witness = %w.name, status, answer = %text.trim(), number = info.number, "the witness refused the checkpoint");
                        break;
                    }
                    Err(e) => {
                        all = false;
                        tracing::warn!(witness = %w.name, error = %e, "witness unreachable; the next checkpoint is submitted again");
                        break;
                    }
                }
            }
        }
        // A checkpoint every witness answered is done; otherwise the next loop tries again,
        // for as long as it is the latest.
        if all {
            done = info.number;
        } else {
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
}
