//! `ledgerd restore --from MIRROR`: rebuild a damaged or lost ledger's store from a mirror of it.
//!
//! The damaged data directory is moved aside (`<dir>.damaged-<ms>`; never deleted: it is
//! evidence), a new store is filled from the mirror's entries and checkpoints, each group verified
//! as a mirror verifies what it copies (the ledger's genesis key pinned), and the ledger's key
//! (`ledger.key` of the old directory, or `ledger_key_file`) is what signs from there on. Every
//! checkpoint in the damaged directory's `checkpoints.log` must be in the copy, identical:
//! otherwise the mirror lacks acknowledged entries and the restore is refused. The ledger then
//! starts as usual and carries on with its own key and history.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, query_client::QueryClient,
};
use ledger_store::{LEDGER_KEY_FILE, Store};

use super::follow::{self, Copy, Stop};
use crate::config::{Config, MirrorSection};

/// What a restore did.
#[derive(Debug)]
pub struct Restored {
    pub entries: u64,
    pub checkpoints: u64,
    /// Where the damaged directory was moved (if there was one).
    pub damaged: Option<PathBuf>,
    pub seconds: f64,
}

/// The ledger's genesis key: pinned in the configuration, or the public half of its key file.
fn ledger_key(cfg: &Config, old_dir: Option<&Path>) -> anyhow::Result<ed25519_dalek::VerifyingKey> {
    if let Some(k) = &cfg.ledger_public_key {
        return ledger_core::signing::parse_public_key_hex(k)
            .map_err(|e| anyhow::anyhow!("ledger_public_key: {e}"));
    }
    let path = match (&cfg.ledger_key_file, old_dir) {
        (Some(f), _) => f.clone(),
        (None, Some(d)) => d.join(LEDGER_KEY_FILE),
        (None, None) => bail!(
            "no ledger key to restore with: set ledger_public_key, or ledger_key_file (the data directory and its {LEDGER_KEY_FILE} are gone)"
        ),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name == LEDGER_KEY_FILE {
        Ok(ledger_store::load_ledger_key(dir, false)
            .with_context(|| format!("the ledger's key {}", path.display()))?
            .verifying_key())
    } else {
        bail!(
            "set ledger_public_key in the configuration: the restore pins the ledger's genesis key"
        )
    }
}

fn stop_err(s: Stop) -> anyhow::Error {
    match s {
        Stop::Transport(m) => anyhow::anyhow!("{m}"),
        Stop::Alarm(a) => anyhow::anyhow!(
            "the mirror's copy does not verify ({}{}): {}; nothing after it was restored",
            a.kind,
            a.index
                .map(|i| format!(" at entry {i}"))
                .unwrap_or_default(),
            a.detail
        ),
        Stop::Store(e) => anyhow::anyhow!("the new store: {e}"),
    }
}

/// The checkpoints of a damaged directory's `checkpoints.log` (a plain, fsynced file that
/// outlives damage to sled's files): each line's signed body, signature and note. Lines that
/// cannot be read are left out (the copy is then checked against the others).
fn logged_checkpoints(dir: &Path) -> Vec<v1::Checkpoint> {
    let Ok(text) = std::fs::read_to_string(dir.join(ledger_store::CHECKPOINT_LOG)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            Some(v1::Checkpoint {
                body: hex::decode(v.get("body")?.as_str()?).ok()?,
                signature: hex::decode(v.get("signature")?.as_str()?).ok()?,
                note: v
                    .get("note")
                    .and_then(|n| n.as_str())
                    .unwrap_or_default()
                    .to_string(),
            })
        })
        .collect()
}

/// Rebuild the ledger of `cfg` in `data_dir` from the mirror at `from` (`tls`: the CA of the
/// mirror's certificate and a client certificate it admits to read entries).
pub async fn restore(
    cfg: &Config,
    data_dir: &Path,
    from: &str,
    tls: (Option<PathBuf>, Option<PathBuf>, Option<PathBuf>),
) -> anyhow::Result<Restored> {
    let t0 = Instant::now();
    let holds = data_dir.exists() && std::fs::read_dir(data_dir)?.next().is_some();
    // Never from under a running ledgerd (it holds sled's lock); a damaged store may not open
    // at all, which is why it is restored.
    if holds && data_dir.join("db").exists() {
        let dir = data_dir.to_path_buf();
        if let Err(ledger_store::StoreError::Refused(m)) =
            tokio::task::spawn_blocking(move || Store::open_existing(&dir).map(drop)).await?
            && m.contains("in use")
        {
            bail!("{m}");
        }
    }
    let damaged = if holds {
        let to = PathBuf::from(format!(
            "{}.damaged-{}",
            data_dir.display(),
            ledger_store::now_ms()
        ));
        std::fs::rename(data_dir, &to)
            .with_context(|| format!("moving {} aside to {}", data_dir.display(), to.display()))?;
        tracing::warn!(damaged = %to.display(), "the damaged data directory was moved aside (kept as evidence)");
        Some(to)
    } else {
        None
    };
    let key = ledger_key(cfg, damaged.as_deref())?;
    std::fs::create_dir_all(data_dir)?;
    if cfg.ledger_key_file.is_none()
        && cfg.ledger_key.is_none()
        && let Some(old) = &damaged
    {
        let (a, b) = (old.join(LEDGER_KEY_FILE), data_dir.join(LEDGER_KEY_FILE));
        std::fs::copy(&a, &b).with_context(|| format!("copying {}", a.display()))?;
    }
    let source = MirrorSection {
        source: from.to_string(),
        source_ledger_id: cfg.ledger_id.clone(),
        source_ledger_key: hex::encode(key.as_bytes()),
        tls_ca: tls.0,
        tls_cert: tls.1,
        tls_key: tls.2,
        max_group: 4096,
        poll_ms: 500,
    };
    let channel = follow::connect(&source).await.map_err(stop_err)?;
    let mut query = QueryClient::new(channel.clone()).max_decoding_message_size(64 << 20);
    let head = query
        .get_head(v1::GetHeadRequest {})
        .await
        .context("the mirror's head")?
        .into_inner();
    if head.ledger_id != cfg.ledger_id {
        bail!(
            "{from} holds ledger {:?}, this configuration's is {:?}",
            head.ledger_id,
            cfg.ledger_id
        );
    }
    let (dir, id, cache) = (
        data_dir.to_path_buf(),
        cfg.ledger_id.clone(),
        cfg.store.cache_capacity_mb << 20,
    );
    let mut copy = tokio::task::spawn_blocking(move || -> anyhow::Result<Copy> {
        let (store, appender) = Store::open_mirror(&dir, cache, &id, &key)?;
        Copy::open(store, appender, key, &id).map_err(|e| anyhow::anyhow!(e))
    })
    .await??;
    let mut entries = query
        .list_entries(v1::ListEntriesRequest {
            from_index: 0,
            to_index: u64::MAX,
        })
        .await
        .context("the mirror's entries")?
        .into_inner();
    let mut batch = Vec::with_capacity(4096);
    loop {
        let e = entries.message().await.context("the mirror's entries")?;
        let done = e.is_none();
        batch.extend(e);
        if batch.len() >= 4096 || (done && !batch.is_empty()) {
            let group = std::mem::take(&mut batch);
            copy = tokio::task::spawn_blocking(move || {
                let r = copy.take(group);
                r.map(|_| copy)
            })
            .await?
            .map_err(stop_err)?;
        }
        if done {
            break;
        }
    }
    let mut list = CheckpointsClient::new(channel)
        .max_decoding_message_size(64 << 20)
        .list(v1::ListCheckpointsRequest { after_number: 0 })
        .await
        .context("the mirror's checkpoints")?
        .into_inner();
    let mut checkpoints = 0;
    while let Some(cp) = list.message().await.context("the mirror's checkpoints")? {
        if !copy.checkpoint(&cp).map_err(stop_err)? {
            bail!("the mirror's checkpoint covers an entry it does not serve");
        }
        checkpoints += 1;
    }
    let store = copy.store.clone();
    let restored = store.head()?.map_or(0, |(i, _)| i + 1);
    // The damaged ledger's own checkpoint file: each checkpoint the mirror has must be the same,
    // and any the mirror had not yet copied (signed just before the damage) must verify against
    // the entries restored and is kept, so that the ledger's checkpoints stay the ones it
    // published.
    if let Some(old) = &damaged {
        for cp in logged_checkpoints(old) {
            let info = ledger_core::record::check_checkpoint(&cp, None).map_err(|e| {
                anyhow::anyhow!("the damaged {}: {e}", ledger_store::CHECKPOINT_LOG)
            })?;
            let ours = store.all_checkpoints()?;
            match ours.get(info.number as usize - 1) {
                Some(held) if held == &cp => {}
                Some(_) => bail!(
                    "checkpoint #{} differs between the mirror and the damaged ledger's {}",
                    info.number,
                    ledger_store::CHECKPOINT_LOG
                ),
                None => match copy.checkpoint(&cp) {
                    Ok(true) => checkpoints += 1,
                    _ => bail!(
                        "the damaged ledger's checkpoint #{} (entry {}) does not verify against the \
                         mirror's copy: the mirror lacks acknowledged entries; the partial copy is \
                         left in {}",
                        info.number,
                        info.index,
                        data_dir.display()
                    ),
                },
            }
        }
    }
    store.sync()?;
    Ok(Restored {
        entries: restored,
        checkpoints,
        damaged,
        seconds: t0.elapsed().as_secs_f64(),
    })
}
