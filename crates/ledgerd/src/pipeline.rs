//! The writer pipeline: durable group commit across every ingest stream.
//!
//! ```text
//!  streams ──(envelope, reply)──▶ [A] batch + precheck + batch-verify ──▶ [B] apply ──▶ [C] sync ──▶ receipts
//!                                  tokio task; verification on the         thread: one    thread: sled flush +
//!                                  blocking pool, split over both cores    sled batch     fsync of `db`, then answer
//! ```
//!
//! * A takes whatever is queued (up to `max_batch`) as one group, so the group grows with load
//!   and no time is spent waiting for a fuller batch. A verifies up to two groups at once (one
//!   per core; groups of 512+ are also split in two) and hands them to B in arrival order; while
//!   it verifies groups k+1 and k+2, B and C are applying and syncing group k.
//! * C drains every applied group that is waiting and covers them with one flush + fsync, and
//!   only then sends their receipts: nothing is acknowledged before it is durable.
//! * A sync error is fatal: C stops, every waiting and later submission gets UNAVAILABLE, and
//!   the `fatal` signal tells the server to exit (systemd restarts it; startup re-verifies the
//!   tail). An fsync is never retried.
//! * Checkpoint requests travel the same path, so a checkpoint covers exactly the entries
//!   before it, after they are durable.

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;

use ledger_core::proto as v1;
use ledger_core::{Hash32, TimePolicy};
use ledger_store::{Appender, PreOutcome, Store, now_ms, precheck, verify_prechecked};
use tokio::sync::{mpsc, oneshot, watch};
use tonic::Status;

type Reply = oneshot::Sender<Result<v1::Receipt, Status>>;
type CheckpointReply = oneshot::Sender<Result<v1::Checkpoint, Status>>;
/// A prechecked group on its way to the appender, with its replies and an optional checkpoint
/// request that follows it.
type Group = (
    Vec<PreOutcome>,
    Vec<Reply>,
    Option<(&'static str, CheckpointReply)>,
);

enum Msg {
    Event(v1::Envelope, Reply),
    Checkpoint(&'static str, CheckpointReply),
}

enum Applied {
    Group {
        receipts: Vec<v1::Receipt>,
        replies: Vec<Reply>,
        head: (u64, Hash32),
    },
    Checkpoint(&'static str, CheckpointReply),
}

/// Tuning of the pipeline.
#[derive(Clone, Debug)]
pub struct PipelineConfig {
    pub max_batch: usize,
    pub queue_capacity: usize,
    pub max_body_bytes: usize,
    pub time: TimePolicy,
}

/// Handle to the writer. Cheap to clone.
#[derive(Clone)]
pub struct Ledger {
    tx: mpsc::Sender<Msg>,
    store: Arc<Store>,
    durable: watch::Receiver<(u64, Hash32)>,
    fatal: watch::Receiver<Option<String>>,
}

fn unavailable(fatal: &watch::Receiver<Option<String>>) -> Status {
    match &*fatal.borrow() {
        Some(m) => Status::unavailable(format!(
            "the ledger stopped acknowledging after a storage failure: {m}"
        )),
        None => Status::unavailable("the ledger is shutting down"),
    }
}

impl Ledger {
    /// Start the pipeline over an opened store.
    pub fn start(appender: Appender, cfg: PipelineConfig) -> Ledger {
        let store = appender.store().clone();
        let head = appender.head().expect("an opened ledger has a genesis");
        let (tx, rx) = mpsc::channel(cfg.queue_capacity);
        let (durable_tx, durable) = watch::channel(head);
        let (fatal_tx, fatal) = watch::channel(None);
        let (b_tx, b_rx) = tokio::sync::mpsc::channel::<Group>(2);
        let (c_tx, c_rx) = std_mpsc::sync_channel::<Applied>(4);
        tokio::spawn(stage_a(rx, b_tx, store.clone(), cfg));
        let fatal_b = fatal_tx.clone();
        std::thread::Builder::new()
            .name("ledger-apply".into())
            .spawn(move || stage_b(appender, b_rx, c_tx, fatal_b))
            .expect("spawn apply thread");
        let store_c = store.clone();
        std::thread::Builder::new()
            .name("ledger-sync".into())
            .spawn(move || stage_c(store_c, c_rx, durable_tx, fatal_tx))
            .expect("spawn sync thread");
        Ledger {
            tx,
            store,
            durable,
            fatal,
        }
    }

    /// Submit one envelope; the receiver yields its receipt once it is decided and durable.
    pub async fn submit(
        &self,
        env: v1::Envelope,
    ) -> oneshot::Receiver<Result<v1::Receipt, Status>> {
        let (reply, rx) = oneshot::channel();
        if let Err(mpsc::error::SendError(Msg::Event(_, reply))) =
            self.tx.send(Msg::Event(env, reply)).await
        {
            let _ = reply.send(Err(unavailable(&self.fatal)));
        }
        rx
    }

    /// Sign a checkpoint of everything submitted before this call, once it is durable.
    pub async fn checkpoint(&self, reason: &'static str) -> Result<v1::Checkpoint, Status> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Checkpoint(reason, reply))
            .await
            .map_err(|_| unavailable(&self.fatal))?;
        rx.await.map_err(|_| unavailable(&self.fatal))?
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The last durable entry (index, hash); changes as groups become durable.
    pub fn durable(&self) -> watch::Receiver<(u64, Hash32)> {
        self.durable.clone()
    }

    /// Becomes `Some(reason)` when the pipeline stopped after a storage failure.
    pub fn fatal(&self) -> watch::Receiver<Option<String>> {
        self.fatal.clone()
    }
}

async fn stage_a(
    mut rx: mpsc::Receiver<Msg>,
    b_tx: mpsc::Sender<Group>,
    store: Arc<Store>,
    cfg: PipelineConfig,
) {
    // Up to two groups are verified at once (one per core); a forwarder hands them to the
    // appender in arrival order. Under load, this queue fills and the groups grow.
    type Verifying = (
        tokio::task::JoinHandle<Vec<PreOutcome>>,
        Vec<Reply>,
        Option<(&'static str, CheckpointReply)>,
    );
    let (v_tx, mut v_rx) = mpsc::channel::<Verifying>(1);
    tokio::spawn(async move {
        while let Some((handle, replies, control)) = v_rx.recv().await {
            let items = handle.await.expect("precheck does not panic");
            if b_tx.send((items, replies, control)).await.is_err() {
                return;
            }
        }
    });
    let cfg = Arc::new(cfg);
    while let Some(first) = rx.recv().await {
        let mut envs = Vec::new();
        let mut replies = Vec::new();
        let mut control = None;
        let mut next = Some(first);
        while let Some(m) = next.take() {
            match m {
                Msg::Event(e, r) => {
                    envs.push(e);
                    replies.push(r);
                }
                Msg::Checkpoint(why, r) => {
                    control = Some((why, r));
                    break;
                }
            }
            if envs.len() >= cfg.max_batch {
                break;
            }
            next = rx.try_recv().ok();
        }
        let now = now_ms();
        let (store, cfg2) = (store.clone(), cfg.clone());
        let handle = tokio::spawn(async move {
            let n = envs.len();
            let t = std::time::Instant::now();
            let items = precheck_group(&store, envs, &cfg2, now).await;
            tracing::trace!(
                n,
                us = t.elapsed().as_micros() as u64,
                "stage A: precheck + verify"
            );
            items
        });
        if v_tx.send((handle, replies, control)).await.is_err() {
            return;
        }
    }
}

/// Groups at least this large are verified on two threads at once. Smaller groups (moderate load)
/// use one, which leaves the other core to gRPC, the appender and the sync, and keeps latency low;
/// under heavy load groups grow past this and verification uses both cores.
const SPLIT_AT: usize = 512;

/// Precheck and batch-verify a group, split over two blocking threads when it is large enough
/// (this machine has two cores; tokio's own workers mostly wait on I/O meanwhile).
async fn precheck_group(
    store: &Arc<Store>,
    envs: Vec<v1::Envelope>,
    cfg: &PipelineConfig,
    now: i64,
) -> Vec<PreOutcome> {
    let work = |store: Arc<Store>, envs: Vec<v1::Envelope>, max: usize, time: TimePolicy| {
        move || {
            let mut items: Vec<PreOutcome> = envs
                .into_iter()
                .map(|e| precheck(&store, e, max, &time, now))
                .collect();
            verify_prechecked(&mut items);
            items
        }
    };
    let (max, time) = (cfg.max_body_bytes, cfg.time);
    if envs.len() < SPLIT_AT {
        return tokio::task::spawn_blocking(work(store.clone(), envs, max, time))
            .await
            .expect("precheck does not panic");
    }
    let mut first = envs;
    let second = first.split_off(first.len() / 2);
    let a = tokio::task::spawn_blocking(work(store.clone(), first, max, time));
    let b = tokio::task::spawn_blocking(work(store.clone(), second, max, time));
    let (a, b) = (
        a.await.expect("precheck does not panic"),
        b.await.expect("precheck does not panic"),
    );
    let mut items = a;
    items.extend(b);
    items
}

type BRx = mpsc::Receiver<Group>;

fn stage_b(
    mut appender: Appender,
    mut rx: BRx,
    c_tx: std_mpsc::SyncSender<Applied>,
    fatal: watch::Sender<Option<String>>,
) {
    while let Some((items, replies, control)) = rx.blocking_recv() {
        if fatal.borrow().is_some() {
            return; // dropping replies answers UNAVAILABLE
        }
        if !items.is_empty() {
            let (n, t) = (items.len(), std::time::Instant::now());
            let applied = appender.apply(items, now_ms());
            tracing::trace!(n, us = t.elapsed().as_micros() as u64, "stage B: apply");
            match applied {
                Ok((receipts, applied)) => {
                    let group = Applied::Group {
                        receipts,
                        replies,
                        head: (applied.head_index, applied.head_hash),
                    };
                    if c_tx.send(group).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "append failed; the ledger stops acknowledging");
                    let _ = fatal.send(Some(format!("append failed: {e}")));
                    return;
                }
            }
        }
        if let Some((why, r)) = control
            && c_tx.send(Applied::Checkpoint(why, r)).is_err()
        {
            return;
        }
    }
}

fn stage_c(
    store: Arc<Store>,
    rx: std_mpsc::Receiver<Applied>,
    durable: watch::Sender<(u64, Hash32)>,
    fatal: watch::Sender<Option<String>>,
) {
    while let Ok(first) = rx.recv() {
        // Everything already applied and waiting shares this sync.
        let mut waiting = vec![first];
        while let Ok(m) = rx.try_recv() {
            waiting.push(m);
        }
        let has_groups = waiting.iter().any(|m| matches!(m, Applied::Group { .. }));
        let t = std::time::Instant::now();
        let synced = if has_groups { store.sync() } else { Ok(()) };
        tracing::trace!(
            groups = waiting.len(),
            us = t.elapsed().as_micros() as u64,
            "stage C: sync"
        );
        if let Err(e) = synced {
            tracing::error!(error = %e, "flush/fsync failed; the ledger stops acknowledging and exits");
            let _ = fatal.send(Some(format!("flush/fsync failed: {e}")));
            return; // dropping every reply answers UNAVAILABLE; never retry an fsync
        }
        for m in waiting {
            match m {
                Applied::Group {
                    receipts,
                    replies,
                    head,
                } => {
                    durable.send_if_modified(|h| {
                        let changed = *h != head;
                        *h = head;
                        changed
                    });
                    for (r, reply) in receipts.into_iter().zip(replies) {
                        let _ = reply.send(Ok(r));
                    }
                }
                Applied::Checkpoint(why, reply) => {
                    let (index, hash) = *durable.borrow();
                    let r = store
                        .write_checkpoint(index, &hash, now_ms(), why)
                        .map_err(|e| Status::internal(format!("checkpoint failed: {e}")));
                    if let Err(e) = &r {
                        tracing::error!(error = %e, "checkpoint write failed; the ledger stops acknowledging");
                        let _ = fatal.send(Some(e.message().to_string()));
                        let _ = reply.send(r);
                        return;
                    }
                    let _ = reply.send(r);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;
    use ledger_core::SignerRole;
    use ledger_core::proto::event_body::Payload as P;
    use ledger_core::signing::{EVENT_DOMAIN, sign};
    use ledger_store::{OpenConfig, PrincipalConfig};
    use prost::Message;

    fn env(key: &SigningKey, dev: &str, seq: u64, payload: P) -> v1::Envelope {
        let body = v1::EventBody {
            device_id: dev.into(),
            sequence: seq,
            occurred_at_ms: now_ms(),
            payload: Some(payload),
        }
        .encode_to_vec();
        let signature = sign(key, EVENT_DOMAIN, &body).to_bytes().to_vec();
        v1::Envelope { body, signature }
    }

    /// A failed fsync stops every acknowledgement: the group it covered, and all later ones.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_sync_stops_acknowledging() {
        let dir = tempfile::tempdir().unwrap();
        let op = SigningKey::from_bytes(&[1; 32]);
        let (store, appender) = Store::open_writer(
            dir.path(),
            &OpenConfig {
                cache_capacity_bytes: 8 << 20,
                ledger_id: "t".into(),
                principals: vec![PrincipalConfig {
                    id: "op".into(),
                    role: SignerRole::Operator,
                    key: op.verifying_key(),
                }],
            },
        )
        .unwrap();
        let ledger = Ledger::start(
            appender,
            PipelineConfig {
                max_batch: 64,
                queue_capacity: 64,
                max_body_bytes: 65536,
                time: TimePolicy::default(),
            },
        );
        let model = |n: u32| {
            P::MachineModelApproved(v1::MachineModelApproved {
                model_id: format!("m{n}"),
                theoretical_rtp_bp: 9000,
                bet_values_cents: vec![10],
                approval_ref: String::new(),
            })
        };
        let ok = ledger
            .submit(env(&op, "op", 1, model(1)))
            .await
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ok.status, v1::ReceiptStatus::Accepted as i32);
        store.inject_sync_failures_for_tests();
        let failed = ledger.submit(env(&op, "op", 2, model(2))).await.await;
        assert!(
            !matches!(failed, Ok(Ok(_))),
            "no receipt after a failed sync: {failed:?}"
        );
        let mut fatal = ledger.fatal();
        fatal.wait_for(|f| f.is_some()).await.unwrap();
        assert!(fatal.borrow().as_deref().unwrap().contains("fsync"));
        let later = ledger.submit(env(&op, "op", 2, model(2))).await.await;
        assert!(
            !matches!(later, Ok(Ok(_))),
            "nothing is acknowledged any more: {later:?}"
        );
        assert_eq!(
            ledger.durable().borrow().0,
            ok.index,
            "the durable head stays where the last good sync left it"
        );
    }
}
