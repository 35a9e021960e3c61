//! The follower: source → verify → store, resumable, with alarms.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use backon::BackoffBuilder;
use ed25519_dalek::VerifyingKey;
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, query_client::QueryClient,
    replication_client::ReplicationClient,
};
use ledger_core::record::check_checkpoint;
use ledger_core::{ChainVerifier, Hash32, hex32};
use ledger_store::{Alarm, Appender, Store, StoreError};
use tokio::sync::watch;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use super::Status;
use crate::config::MirrorSection;

/// A task aborted when its handle is dropped (a session's reporter ends with the session).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why a session with the source ended.
#[derive(Debug)]
pub enum Stop {
    /// The connection or a call failed: reconnect after a backoff.
    Transport(String),
    /// Something could not be verified or extended consistently: alarm, stop following, retry
    /// after a backoff (the source may be mended).
    Alarm(Alarm),
    /// The mirror's own store failed: the mirror stops following for good.
    Store(StoreError),
}

fn alarm(kind: &str, index: Option<u64>, detail: impl Into<String>) -> Stop {
    Stop::Alarm(Alarm {
        at_ms: ledger_store::now_ms(),
        kind: kind.into(),
        index,
        detail: detail.into(),
    })
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Stop {
        Stop::Store(e)
    }
}

impl From<tonic::Status> for Stop {
    fn from(s: tonic::Status) -> Stop {
        Stop::Transport(format!("{}: {}", s.code(), s.message()))
    }
}

/// The verifier and the writer of the mirror's copy.
pub struct Copy {
    pub store: Arc<Store>,
    appender: Appender,
    verifier: ChainVerifier,
    key: VerifyingKey,
    ledger_id: String,
    /// The verifier took entries or a checkpoint that were not stored (a failed step): it must
    /// be rebuilt from the store before the next step.
    dirty: bool,
}

/// Verify every signature of `checks`; the index and kind of the first that fails.
fn first_bad(checks: &[ledger_core::verify::PendingSignature]) -> Option<(u64, &'static str)> {
    let ok = ledger_core::verify_many(&checks.iter().map(|c| c.check.clone()).collect::<Vec<_>>());
    ok.iter()
        .position(|b| !b)
        .map(|i| (checks[i].index, checks[i].what))
}

impl Copy {
    /// The verifier's state rebuilt from the mirror's own store (every entry, checkpoint and
    /// signature checked again: a store damaged since is refused).
    pub fn open(
        store: Arc<Store>,
        appender: Appender,
        key: VerifyingKey,
        ledger_id: &str,
    ) -> Result<Copy, String> {
        let verifier = Self::rebuild(&store, key)?;
        Ok(Copy {
            store,
            appender,
            verifier,
            key,
            ledger_id: ledger_id.to_string(),
            dirty: false,
        })
    }

    fn rebuild(store: &Store, key: VerifyingKey) -> Result<ChainVerifier, String> {
        let mut v = ChainVerifier::new(Some(key));
        for cp in store.all_checkpoints().map_err(|e| e.to_string())? {
            v.add_checkpoint(&cp).map_err(|e| e.to_string())?;
        }
        let mut checks = Vec::new();
        for e in store.entries(0, u64::MAX) {
            let e = e.map_err(|e| e.to_string())?;
            checks.extend(v.check_entry(&e).map_err(|e| e.to_string())?);
            if checks.len() >= 4096 {
                if let Some((i, what)) = first_bad(&checks) {
                    return Err(format!("entry {i}: {what} does not verify"));
                }
                checks.clear();
            }
        }
        if let Some((i, what)) = first_bad(&checks) {
            return Err(format!("entry {i}: {what} does not verify"));
        }
        Ok(v)
    }

    /// After an alarm the verifier may have taken entries that were not stored: start it again
    /// from the store.
    fn reset(&mut self) -> Result<(), Stop> {
        if !self.dirty {
            return Ok(());
        }
        self.dirty = false;
        self.verifier = Self::rebuild(&self.store, self.key)
            .map_err(|e| Stop::Store(StoreError::Corrupt(format!("the mirror's own copy: {e}"))))?;
        Ok(())
    }

    /// Entries held.
    pub fn next(&self) -> u64 {
        self.verifier.entries()
    }

    /// Verify a group of the source's entries and, only if all of it verifies, store it and
    /// make it durable. Returns the new head.
    pub fn take(&mut self, batch: Vec<v1::ChainEntry>) -> Result<(u64, Hash32), Stop> {
        let r = self.take_inner(batch);
        self.dirty |= r.is_err();
        r
    }

    fn take_inner(&mut self, batch: Vec<v1::ChainEntry>) -> Result<(u64, Hash32), Stop> {
        let first = self.next();
        let mut checks = Vec::with_capacity(batch.len());
        for e in &batch {
            match self.verifier.check_entry(e) {
                Ok(p) => checks.extend(p),
                Err(err) => {
                    let i = err.index.unwrap_or(e.index);
                    let kind = if i == first && first > 0 && err.what.contains("prev_hash") {
                        "history_rewritten"
                    } else {
                        "entry_unverified"
                    };
                    return Err(alarm(kind, Some(i), err.what));
                }
            }
        }
        if let Some((i, what)) = first_bad(&checks) {
            return Err(alarm(
                "entry_unverified",
                Some(i),
                format!("{what} does not verify"),
            ));
        }
        let applied = self.appender.append_verbatim(batch)?;
        self.store.sync()?;
        Ok((applied.head_index, applied.head_hash))
    }

    /// Check a source checkpoint of an entry held against the entries and copy it. `Ok(false)`:
    /// it covers an entry not held yet (taken again later).
    pub fn checkpoint(&mut self, cp: &v1::Checkpoint) -> Result<bool, Stop> {
        let r = self.checkpoint_inner(cp);
        self.dirty |= r.is_err();
        r
    }

    fn checkpoint_inner(&mut self, cp: &v1::Checkpoint) -> Result<bool, Stop> {
        let info = check_checkpoint(cp, None)
            .map_err(|e| alarm("checkpoint_contradicts", None, format!("a checkpoint: {e}")))?;
        let n = info.number;
        if info.index >= self.next() {
            return Ok(false);
        }
        let bad = |what: String| {
            alarm(
                "checkpoint_contradicts",
                Some(info.index),
                format!("checkpoint #{n}: {what}"),
            )
        };
        self.verifier
            .add_checkpoint(cp)
            .map_err(|e| bad(e.what.clone()))?;
        let e = self
            .store
            .entry(info.index)?
            .ok_or_else(|| bad("its entry is not held".into()))?;
        if e.entry_hash.as_slice() != info.head_hash {
            return Err(bad(format!(
                "signs hash {} for entry {}, the entry held is {}",
                hex32(&info.head_hash),
                info.index,
                hex::encode(&e.entry_hash)
            )));
        }
        if let Some(t) = &info.tree {
            let origin = ledger_core::note::origin_of(&self.ledger_id);
            if t.origin != origin {
                return Err(bad(format!("names log {:?}, not {origin:?}", t.origin)));
            }
            let root = self.store.tree_root(t.size)?;
            if root != t.root {
                return Err(bad(format!(
                    "signs Merkle root {} for {} entries, the entries held give {}",
                    hex::encode(t.root),
                    t.size,
                    hex::encode(root)
                )));
            }
        }
        if self.verifier.ledger_key_at(info.index) != Some(info.ledger_public_key) {
            return Err(bad("is not signed by the ledger's key at its entry".into()));
        }
        self.store.copy_checkpoint(cp).map_err(|e| match e {
            StoreError::Refused(m) => bad(m),
            other => Stop::Store(other),
        })?;
        Ok(true)
    }
}

/// A channel to the source, with the mirror's TLS identity.
pub async fn connect(cfg: &MirrorSection) -> Result<Channel, Stop> {
    let mut e = Endpoint::from_shared(cfg.source.clone())
        .map_err(|e| Stop::Transport(format!("mirror.source {:?}: {e}", cfg.source)))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(20))
        .initial_stream_window_size(Some(4 << 20))
        .initial_connection_window_size(Some(8 << 20));
    if cfg.source.starts_with("https://") {
        let read = |p: &std::path::Path| {
            std::fs::read(p).map_err(|e| Stop::Transport(format!("{}: {e}", p.display())))
        };
        let mut tls = ClientTlsConfig::new();
        if let Some(ca) = &cfg.tls_ca {
            tls = tls.ca_certificate(Certificate::from_pem(read(ca)?));
        }
        if let (Some(c), Some(k)) = (&cfg.tls_cert, &cfg.tls_key) {
            tls = tls.identity(Identity::from_pem(read(c)?, read(k)?));
        }
        e = e
            .tls_config(tls)
            .map_err(|e| Stop::Transport(format!("mirror TLS: {e}")))?;
    }
    e.connect()
        .await
        .map_err(|e| Stop::Transport(format!("cannot connect to {}: {e}", cfg.source)))
}

/// Run a blocking step of the copy on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    copy: &mut Option<Copy>,
    f: impl FnOnce(&mut Copy) -> T + Send + 'static,
) -> T {
    let mut c = copy.take().expect("the copy is back after every step");
    let (c, r) = tokio::task::spawn_blocking(move || {
        let r = f(&mut c);
        (c, r)
    })
    .await
    .expect("a mirror step panicked");
    *copy = Some(c);
    r
}

/// Follow the source until `stop` turns true or the mirror's store fails.
pub async fn run(
    cfg: MirrorSection,
    copy: Copy,
    durable: watch::Sender<(u64, Hash32)>,
    status: Arc<Status>,
    mut stop: watch::Receiver<bool>,
) {
    let mut copy = Some(copy);
    let mut backoff = new_backoff();
    let mut last_alarm: Option<(String, Option<u64>)> = None;
    loop {
        if *stop.borrow() {
            return;
        }
        let progressed_before = status.mirrored.load(Relaxed);
        let r = session(&cfg, &mut copy, &durable, &status, &mut stop).await;
        status.connected.store(false, Relaxed);
        if status.mirrored.load(Relaxed) > progressed_before {
            backoff = new_backoff();
        }
        match r {
            Ok(()) => return,
            Err(Stop::Transport(m)) => {
                tracing::warn!(source = %cfg.source, "mirror: {m}; reconnecting");
            }
            Err(Stop::Store(e)) => {
                tracing::error!(error = %e, "mirror: the mirror's own store failed; it stops following");
                status.halted.store(true, Relaxed);
                return;
            }
            Err(Stop::Alarm(a)) => {
                status.halted.store(true, Relaxed);
                let key = (a.kind.clone(), a.index);
                tracing::error!(kind = %a.kind, index = ?a.index, detail = %a.detail, source = %cfg.source,
                    "mirror alarm: following stopped; nothing unverified is stored");
                if last_alarm.as_ref() != Some(&key) {
                    let rec = a.clone();
                    let r = blocking(&mut copy, move |c| c.store.record_alarm(&rec)).await;
                    if let Err(e) = r {
                        tracing::error!(error = %e, "mirror: cannot record the alarm; it stops following");
                        return;
                    }
                    status.alarms.fetch_add(1, Relaxed);
                    last_alarm = Some(key);
                }
                if let Err(Stop::Store(e)) = blocking(&mut copy, |c| c.reset()).await {
                    tracing::error!(error = %e, "mirror: it stops following");
                    return;
                }
            }
        }
        let pause = backoff.next().unwrap_or(Duration::from_secs(10));
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stop.changed() => return,
        }
    }
}

fn new_backoff() -> impl Iterator<Item = Duration> {
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_secs(10))
        .with_jitter()
        .without_max_times()
        .build()
}

/// One connection to the source: check that it still holds what the mirror holds, then follow
/// its tail.
async fn session(
    cfg: &MirrorSection,
    copy: &mut Option<Copy>,
    durable: &watch::Sender<(u64, Hash32)>,
    status: &Status,
    stop: &mut watch::Receiver<bool>,
) -> Result<(), Stop> {
    let channel = connect(cfg).await?;
    let query_channel = channel.clone();
    let max = 64 << 20;
    let mut query = QueryClient::new(channel.clone()).max_decoding_message_size(max);
    let mut cps = CheckpointsClient::new(channel).max_decoding_message_size(max);
    let head = query.get_head(v1::GetHeadRequest {}).await?.into_inner();
    if head.ledger_id != cfg.source_ledger_id {
        return Err(alarm(
            "wrong_ledger",
            None,
            format!(
                "{} serves ledger {:?}, not {:?}",
                cfg.source, head.ledger_id, cfg.source_ledger_id
            ),
        ));
    }
    status.source_entries.store(head.length, Relaxed);
    // What the mirror holds must still be the source's.
    let store = copy.as_ref().expect("copy").store.clone();
    if let Some((i, h)) = store.head()? {
        if head.length <= i {
            return Err(alarm(
                "history_rewritten",
                Some(i),
                format!(
                    "the source now holds {} entries, the mirror holds {} of it",
                    head.length,
                    i + 1
                ),
            ));
        }
        let theirs = query
            .get_entry(v1::GetEntryRequest { index: i })
            .await?
            .into_inner();
        if theirs.entry_hash.as_slice() != h {
            return Err(alarm(
                "history_rewritten",
                Some(i),
                format!(
                    "the source's entry {i} is {}, the mirror holds {}",
                    hex::encode(&theirs.entry_hash),
                    hex32(&h)
                ),
            ));
        }
    }
    if let Some((ours, info)) = store.latest_checkpoint()? {
        let mut s = cps
            .list(v1::ListCheckpointsRequest {
                after_number: info.number - 1,
            })
            .await?
            .into_inner();
        match s.message().await? {
            Some(theirs) if theirs == ours => {}
            Some(_) => {
                return Err(alarm(
                    "checkpoint_contradicts",
                    Some(info.index),
                    format!(
                        "the source's checkpoint #{} is not the one the mirror holds",
                        info.number
                    ),
                ));
            }
            None => {
                return Err(alarm(
                    "checkpoint_contradicts",
                    Some(info.index),
                    format!("the source no longer has checkpoint #{}", info.number),
                ));
            }
        }
    }
    // What the mirror holds, reported to the source after every durable group (a source with
    // `[replication]` waits for it before its receipts; others answer UNIMPLEMENTED).
    let reports = {
        use tokio_stream::StreamExt;
        let held = tokio_stream::wrappers::WatchStream::new(durable.subscribe()).map(|(i, h)| {
            v1::DurableReport {
                entries: i + 1,
                head_hash: h.to_vec(),
            }
        });
        let mut client = ReplicationClient::new(query_channel.clone());
        let source = cfg.source.clone();
        AbortOnDrop(tokio::spawn(async move {
            match client.report_durable(held).await {
                Err(s) if s.code() == tonic::Code::Unimplemented => {}
                Err(s) => tracing::warn!(%source, "mirror: reporting what it holds: {s}"),
                Ok(_) => {}
            }
        }))
    };
    let _reports = reports;
    let next = copy.as_ref().expect("copy").next();
    let mut tail = query
        .tail(v1::TailRequest { from_index: next })
        .await?
        .into_inner();
    status.connected.store(true, Relaxed);
    status.observe(ledger_store::now_ms());
    tracing::info!(source = %cfg.source, from = next, "mirror: following the source");
    let mut poll = tokio::time::interval(Duration::from_millis(cfg.poll_ms));
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.changed() => return Ok(()),
            m = tail.message() => {
                let Some(e) = m? else {
                    return Err(Stop::Transport("the source ended the tail".into()));
                };
                let mut batch = vec![e];
                while batch.len() < cfg.max_group {
                    match tokio::time::timeout(Duration::ZERO, tail.message()).await {
                        Ok(Ok(Some(e))) => batch.push(e),
                        Ok(Ok(None)) | Err(_) => break,
                        Ok(Err(s)) => return Err(s.into()),
                    }
                }
                let received: Vec<i64> = batch.iter().map(|e| e.received_at_ms).collect();
                let (head, hash) = blocking(copy, move |c| c.take(batch)).await?;
                let now = ledger_store::now_ms();
                for at in received {
                    status.lag.record(Duration::from_millis(now.saturating_sub(at).max(0) as u64));
                }
                status.mirrored.store(head + 1, Relaxed);
                status.halted.store(false, Relaxed);
                if status.source_entries.load(Relaxed) < head + 1 {
                    status.source_entries.store(head + 1, Relaxed);
                }
                status.observe(now);
                let _ = durable.send((head, hash));
            }
            _ = poll.tick() => {
                let head = query.get_head(v1::GetHeadRequest {}).await?.into_inner();
                status.source_entries.store(head.length, Relaxed);
                status.observe(ledger_store::now_ms());
                let held = store.latest_checkpoint()?.map_or(0, |(_, i)| i.number);
                let mut s = cps
                    .list(v1::ListCheckpointsRequest { after_number: held })
                    .await?
                    .into_inner();
                let mut new = Vec::new();
                while let Some(cp) = s.message().await? {
                    new.push(cp);
                }
                for cp in new {
                    if !blocking(copy, move |c| c.checkpoint(&cp)).await? {
                        break;
                    }
                    status.checkpoints.fetch_add(1, Relaxed);
                }
            }
        }
    }
}

/// A new mirror's first entries (the source's genesis at least), before it serves anything:
/// retried with a backoff while the source cannot be reached; an entry that fails verification
/// is an error (a wrong key or ledger id in the configuration).
pub async fn bootstrap(cfg: &MirrorSection, copy: Copy) -> anyhow::Result<Copy> {
    let mut copy = Some(copy);
    let mut backoff = new_backoff();
    loop {
        let r: Result<(), Stop> = async {
            let channel = connect(cfg).await?;
            let mut query = QueryClient::new(channel).max_decoding_message_size(64 << 20);
            let mut tail = query
                .tail(v1::TailRequest { from_index: 0 })
                .await?
                .into_inner();
            let Some(first) = tail.message().await? else {
                return Err(Stop::Transport("the source ended the tail".into()));
            };
            blocking(&mut copy, move |c| c.take(vec![first])).await?;
            Ok(())
        }
        .await;
        match r {
            Ok(()) => return Ok(copy.take().expect("copy")),
            Err(Stop::Transport(m)) => {
                tracing::warn!(source = %cfg.source, "mirror: {m}; a new mirror waits for its source's genesis");
                tokio::time::sleep(backoff.next().unwrap_or(Duration::from_secs(10))).await;
            }
            Err(Stop::Alarm(a)) => anyhow::bail!(
                "the source's genesis does not verify against [mirror]: {} (check source_ledger_id and source_ledger_key)",
                a.detail
            ),
            Err(Stop::Store(e)) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;
    use ledger_core::RecordKind;
    use ledger_core::record::make_entry;
    use ledger_store::{OpenConfig, PrincipalConfig};

    fn cfg(seed: u8) -> OpenConfig {
        OpenConfig {
            cache_capacity_bytes: 16 << 20,
            ledger_id: "src".into(),
            principals: vec![PrincipalConfig {
                id: "operator-1".into(),
                role: ledger_core::SignerRole::Operator,
                key: SigningKey::from_bytes(&[seed; 32]).verifying_key(),
            }],
        }
    }

    /// A source ledger of 3 entries (genesis, two principals records) and 2 checkpoints; its
    /// entries, checkpoints and genesis key.
    fn source(dir: &std::path::Path) -> (Vec<v1::ChainEntry>, Vec<v1::Checkpoint>, VerifyingKey) {
        {
            let (s, _a) = Store::open_writer(dir, &cfg(1)).unwrap();
            let (i, h) = s.head().unwrap().unwrap();
            s.write_checkpoint(i, &h, ledger_store::now_ms(), "test")
                .unwrap();
        }
        let (s, _a) = Store::open_writer(dir, &cfg(2)).unwrap();
        let (i, h) = s.head().unwrap().unwrap();
        s.write_checkpoint(i, &h, ledger_store::now_ms(), "test")
            .unwrap();
        let key = s.ledger_public_key().unwrap();
        let es = s.entries(0, u64::MAX).map(|e| e.unwrap()).collect();
        (es, s.all_checkpoints().unwrap(), key)
    }

    fn mirror(dir: &std::path::Path, key: VerifyingKey) -> Copy {
        let (store, appender) = Store::open_mirror(dir, 16 << 20, "src", &key).unwrap();
        Copy::open(store, appender, key, "src").unwrap()
    }

    fn kind_of(r: Result<impl std::fmt::Debug, Stop>) -> (String, Option<u64>) {
        match r {
            Err(Stop::Alarm(a)) => (a.kind, a.index),
            other => panic!("not an alarm: {other:?}"),
        }
    }

    #[test]
    fn a_group_with_an_entry_that_fails_verification_is_not_stored_at_all() {
        let (s, m) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (es, cps, key) = source(s.path());
        let mut c = mirror(m.path(), key);
        // A signature changed, with the hashes made again so that the chain still links: only
        // the signature check can catch it.
        let mut bad = es[1].clone();
        bad.signature[5] ^= 1;
        let bad = make_entry(
            &es[0].entry_hash.as_slice().try_into().unwrap(),
            1,
            bad.received_at_ms,
            RecordKind::Ledger,
            bad.body,
            bad.signature,
        );
        let r = c.take(vec![es[0].clone(), bad]);
        assert_eq!(kind_of(r), ("entry_unverified".into(), Some(1)));
        assert_eq!(
            c.store.head().unwrap(),
            None,
            "nothing of the group is stored"
        );
        c.reset().unwrap();
        // A byte of a body changed: the stored hash no longer matches.
        let mut bad = es[0].clone();
        bad.body[3] ^= 1;
        assert_eq!(
            kind_of(c.take(vec![bad])),
            ("entry_unverified".into(), Some(0))
        );
        c.reset().unwrap();
        // The genuine entries are taken; the source's checkpoints are checked and copied.
        c.take(vec![es[0].clone()]).unwrap();
        assert!(!c.checkpoint(&cps[0]).unwrap(), "its entry is not held yet");
        c.take(es[1..].to_vec()).unwrap();
        assert!(c.checkpoint(&cps[0]).unwrap());
        assert!(c.checkpoint(&cps[1]).unwrap());
        assert_eq!(c.store.all_checkpoints().unwrap(), cps);
        assert_eq!(c.store.head().unwrap().unwrap().0, es.len() as u64 - 1);
    }

    #[test]
    fn another_history_or_another_ledgers_checkpoint_raises_an_alarm() {
        let (s, other, m) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let (es, cps, key) = source(s.path());
        // Another ledger under the same id: its own key, its own entries.
        let (os, ocps, _) = source(other.path());
        let mut c = mirror(m.path(), key);
        c.take(vec![es[0].clone()]).unwrap();
        // Another history from entry 1 on: its first entry does not link to what is held.
        let r = c.take(vec![os[1].clone()]);
        assert_eq!(kind_of(r), ("history_rewritten".into(), Some(1)));
        c.reset().unwrap();
        c.take(es[1..].to_vec()).unwrap();
        // A checkpoint signed by the other ledger's key, of an entry held.
        let r = c.checkpoint(&ocps[0]);
        assert_eq!(kind_of(r).0, "checkpoint_contradicts");
        c.reset().unwrap();
        assert!(c.checkpoint(&cps[0]).unwrap());
        assert_eq!(c.store.all_checkpoints().unwrap(), cps[..1]);
        // A genesis under another key is refused from the start.
        let m2 = tempfile::tempdir().unwrap();
        let mut c2 = mirror(m2.path(), key);
        assert_eq!(
            kind_of(c2.take(vec![os[0].clone()])),
            ("entry_unverified".into(), Some(0))
        );
    }
}
