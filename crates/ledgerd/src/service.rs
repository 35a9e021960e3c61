//! The gRPC services: Ingest (bidirectional stream of envelopes and receipts), Query and
//! Checkpoints. Queries only ever show durable entries.

use std::pin::Pin;

use ledger_core::proto::{
    self as v1, checkpoints_server::Checkpoints, ingest_server::Ingest, query_server::Query,
};
use ledger_store::StoreError;
use prost::Message as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};
use tokio_stream::{Stream, StreamExt, wrappers::ReceiverStream};
use tonic::{Request, Response, Status, Streaming};

use crate::pipeline::{Ledger, ReceiptBatches, Reply, StreamReceipts};

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

pub(crate) fn store_err(e: StoreError) -> Status {
    tracing::error!(error = %e, "store read failed");
    Status::data_loss(format!("store read failed: {e}"))
}

/// A request field that names a device, table, round, pool, machine or casino: it must have an
/// identifier's form, the one ingest accepts (so nothing can have any other), or the request is
/// INVALID_ARGUMENT naming the field. Checked before the id is looked up, so that an unknown id a
/// NOT_FOUND message repeats is at most [`ledger_core::event::MAX_ID_LEN`] bytes: a longer one
/// made the status too large for HTTP/2's headers, and the client saw INTERNAL.
pub(crate) fn id_arg(field: &str, value: &str) -> Result<(), Status> {
    ledger_core::event::id(field, value).map_err(|e| match e {
        ledger_core::event::BodyError::Malformed { field, problem } => {
            Status::invalid_argument(format!("{field}: {problem}"))
        }
        other => Status::invalid_argument(format!("{field}: {other}")),
    })
}

/// The ingest service.
pub struct IngestService {
    pub ledger: Ledger,
    /// Envelopes one stream may have read and not yet answered (`ingest.max_in_flight_per_stream`).
    pub max_in_flight: usize,
    /// Envelopes read from every ingest stream together and not yet answered
    /// (`ingest.max_in_flight_total`): past it, every stream waits.
    pub in_flight_total: Arc<Semaphore>,
    /// How long a stream may leave receipts waiting without taking any before it is ended
    /// (`ingest.unread_receipts_secs`).
    pub unread_limit: Duration,
    /// Each device's rate (`ingest.device_rate_per_sec`, `ingest.device_burst`); `None`: none.
    pub device_rates: Option<Arc<crate::limits::TokenBuckets>>,
}

#[tonic::async_trait]
impl Ingest for IngestService {
    type SubmitStream = BoxStream<v1::Receipt>;

    async fn submit(
        &self,
        req: Request<Streaming<v1::Envelope>>,
    ) -> Result<Response<Self::SubmitStream>, Status> {
        let peer = req.remote_addr();
        // A client that can make compact receipts whole asks for them (ledger_core::receipt::compact).
        let compact = req
            .metadata()
            .get(ledger_core::receipt::compact::HEADER)
            .is_some_and(|v| v == ledger_core::receipt::compact::COMPACT);
        let mut inbound = req.into_inner();
        // The pipeline puts the receipts onto this stream's queue, in the stream's order (a
        // durable group's receipts for this stream as one batch). At most `max_in_flight`
        // envelopes of this stream, and `in_flight_total` of all streams, wait for theirs: room
        // is taken for each envelope read and given back when its receipt goes out.
        let (out_tx, out_rx) = StreamReceipts::channel();
        let in_flight = self.max_in_flight.max(1);
        let budget = Arc::new(Budget::new(in_flight, self.in_flight_total.clone()));
        let queue = Arc::new(std::sync::Mutex::new(Queue {
            rx: out_rx,
            ready: Default::default(),
        }));
        let ledger = self.ledger.clone();
        let reader = budget.clone();
        let to = out_tx.clone();
        let rates = self.device_rates.clone();
        tokio::spawn(async move {
            let mut position = 0u64;
            while let Some(msg) = inbound.next().await {
                match msg {
                    Ok(env) => {
                        if let Some(r) = &rates
                            && let Err(wait) = r.take(
                                crate::limits::device_id(&env.body),
                                std::time::Instant::now(),
                            )
                        {
                            // Nothing of this envelope is stored: the receipts of those before
                            // it go out, then the stream ends saying when to come back.
                            let device =
                                String::from_utf8_lossy(crate::limits::device_id(&env.body))
                                    .into_owned();
                            tracing::debug!(?peer, %device, ?wait, "device over its rate");
                            crate::limits::Limit::DeviceRate.refused();
                            let mut s = Status::resource_exhausted(format!(
                                "device {device} is over its rate (ingest.device_rate_per_sec): \
                                 retry in {} ms; nothing after its last receipt was stored",
                                wait.as_millis().max(1)
                            ));
                            if let Ok(v) = wait.as_millis().max(1).to_string().parse() {
                                s.metadata_mut().insert("retry-after-ms", v);
                            }
                            if reader.own.acquire_many(in_flight as u32).await.is_ok() {
                                to.send(vec![Err(s)]);
                            }
                            return;
                        }
                        if !reader.take().await {
                            return;
                        }
                        position += 1;
                        ledger
                            .submit_to(env, Reply::to_stream(to.clone(), position))
                            .await;
                    }
                    Err(status) => {
                        tracing::debug!(?peer, %status, "ingest stream ended with an error");
                        // The receipts of the envelopes before it go out first.
                        if reader.own.acquire_many(in_flight as u32).await.is_ok() {
                            to.send(vec![Err(status)]);
                        }
                        return;
                    }
                }
            }
        });
        // The watch holds the queue's sending end weakly: once the client has half-closed its
        // side (the reader above ends) and the pipeline has answered every envelope (its replies
        // hold the other references), the queue closes, the response ends after the last
        // receipt, and the call ends with OK, as every gRPC client expects of a bidirectional
        // stream whose client stopped sending.
        tokio::spawn(watch_unread(
            budget.clone(),
            queue.clone(),
            Arc::downgrade(&out_tx),
            self.unread_limit,
            peer,
        ));
        drop(out_tx);
        Ok(Response::new(Box::pin(Receipts {
            queue,
            budget,
            done: false,
            compact: compact.then(Default::default),
        })))
    }
}

/// One ingest stream's room for envelopes awaiting receipts: its own (`max_in_flight_per_stream`)
/// and its share of all streams' (`max_in_flight_total`), taken by its reader for each envelope
/// read and given back as the client takes the receipts. A client that sends and never reads
/// would otherwise make ledgerd hold every receipt it is owed: a few MB a stream, on as many
/// streams as it opens (measured: 64 such streams on one connection, 166 MB).
struct Budget {
    own: Semaphore,
    shared: Arc<Semaphore>,
    state: std::sync::Mutex<BudgetState>,
}

#[derive(Default)]
struct BudgetState {
    /// Room in `shared` this stream holds.
    held: usize,
    /// Receipts the client has taken so far.
    taken: u64,
    /// The stream is over: it holds nothing and takes nothing more.
    closed: bool,
}

impl Budget {
    fn new(own: usize, shared: Arc<Semaphore>) -> Budget {
        Budget {
            own: Semaphore::new(own),
            shared,
            state: Default::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Room for one more envelope, once there is some; false once the stream is over.
    async fn take(&self) -> bool {
        let Ok(own) = self.own.acquire().await else {
            return false;
        };
        own.forget();
        // `shared` is never closed.
        let Ok(shared) = self.shared.acquire().await else {
            return false;
        };
        let mut st = self.state();
        if st.closed {
            // Dropped: the room goes back.
            return false;
        }
        shared.forget();
        st.held += 1;
        true
    }

    /// The client took `n` receipts: their room goes back.
    fn taken(&self, n: usize) {
        self.own.add_permits(n);
        let mut st = self.state();
        st.taken += n as u64;
        let back = n.min(st.held);
        st.held -= back;
        drop(st);
        self.shared.add_permits(back);
    }

    /// The stream is over: all its room goes back, and its reader stops.
    fn close(&self) {
        let mut st = self.state();
        if st.closed {
            return;
        }
        st.closed = true;
        let back = std::mem::take(&mut st.held);
        drop(st);
        self.shared.add_permits(back);
        self.own.close();
    }
}

/// An ingest stream's receipts not yet taken by its client: batches from the pipeline, and the
/// rest of the batch being sent. Shared by the response and the watch on unread receipts.
struct Queue {
    rx: ReceiptBatches,
    ready: std::collections::VecDeque<Result<v1::Receipt, Status>>,
}

/// Ends a stream whose client leaves receipts waiting and takes none of them for `limit`: its
/// waiting receipts are dropped, its room goes back to the others, what it sends is no longer
/// read, and the pipeline's later receipts for it are dropped too. (HTTP/2 does not let ledgerd
/// close the stream while its client reads nothing; should the client read again, it gets
/// RESOURCE_EXHAUSTED saying why.) Checks four times per `limit`, so a stream ends between
/// `limit` and 1.25 `limit` after its last receipt was taken.
async fn watch_unread(
    budget: Arc<Budget>,
    queue: Arc<std::sync::Mutex<Queue>>,
    to: std::sync::Weak<StreamReceipts>,
    limit: Duration,
    peer: Option<std::net::SocketAddr>,
) {
    let tick = (limit / 4).max(Duration::from_millis(10));
    let mut seen = (0u64, None::<tokio::time::Instant>);
    loop {
        tokio::time::sleep(tick).await;
        let taken = {
            let st = budget.state();
            if st.closed {
                return;
            }
            st.taken
        };
        let waiting = {
            let q = queue.lock().unwrap_or_else(|e| e.into_inner());
            q.ready.len() + q.rx.len()
        };
        let now = tokio::time::Instant::now();
        if waiting == 0 || taken != seen.0 {
            seen = (taken, None);
            continue;
        }
        let since = *seen.1.get_or_insert(now);
        if now.duration_since(since) < limit {
            continue;
        }
        tracing::warn!(
            ?peer,
            waiting,
            seconds = limit.as_secs_f64(),
            "ingest stream ended: its client took none of its receipts for too long"
        );
        // Receipts still to come for it are dropped (the queue may already be closed: the
        // client half-closed and every envelope was answered).
        let to = to.upgrade();
        if let Some(to) = &to {
            to.close();
        }
        budget.close();
        {
            // What the client reads next, should it read again, in place of what waited.
            let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
            q.ready.clear();
            while q.rx.try_recv().is_ok() {}
            q.ready.push_back(Err(Status::resource_exhausted(format!(
                "this stream left its receipts unread for {} s (ingest.unread_receipts_secs): \
                 ended; resend what has no receipt on a new stream",
                limit.as_secs()
            ))));
        }
        // Wakes the response, should it wait on the queue.
        if let Some(to) = to {
            to.send_final(Vec::new());
        }
        return;
    }
}

/// An ingest stream's receipts, in order; it ends after the first error.
struct Receipts {
    queue: Arc<std::sync::Mutex<Queue>>,
    budget: Arc<Budget>,
    done: bool,
    /// The client asked for compact receipts: what this stream last sent of a group head.
    compact: Option<ledger_core::receipt::compact::Compactor>,
}

impl Drop for Receipts {
    fn drop(&mut self) {
        // Nobody reads the receipts any more: the reader stops, the room goes back.
        self.budget.close();
    }
}

impl Stream for Receipts {
    type Item = Result<v1::Receipt, Status>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        if self.done {
            return std::task::Poll::Ready(None);
        }
        let mut item = {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(r) = q.ready.pop_front() {
                    break Some(r);
                }
                match std::task::ready!(q.rx.poll_recv(cx)) {
                    Some(batch) => q.ready.extend(batch),
                    None => break None,
                }
            }
        };
        if let (Some(Ok(r)), Some(c)) = (&mut item, &mut self.compact) {
            c.compact(r);
        }
        match &item {
            Some(Ok(_)) => self.budget.taken(1),
            Some(Err(_)) => self.done = true,
            None => {}
        }
        std::task::Poll::Ready(item)
    }
}

/// The query service.
pub struct QueryService {
    pub ledger: Ledger,
    pub ledger_id: String,
    /// Streams of entries open at once, in all and per principal ([`crate::limits::EntryStreams`]).
    pub entry_streams: Arc<crate::limits::EntryStreams>,
    /// The largest reply (`grpc.max_message_bytes`): a page of devices stops short of it.
    pub max_reply_bytes: usize,
    /// Where the device registry is paged ([`crate::queries::QueryPool`]).
    pub queries: Arc<crate::queries::QueryPool>,
}

/// Signers in one `Query.ListDevices` page when the request names no limit.
pub const DEVICES_PAGE: usize = 1_000;
/// The most signers one `Query.ListDevices` page carries.
pub const DEVICES_PAGE_MAX: usize = 10_000;

/// A page's `limit` field: 0 is `default`, above `max` is INVALID_ARGUMENT.
pub(crate) fn page_limit(limit: u32, default: usize, max: usize) -> Result<usize, Status> {
    match limit as usize {
        0 => Ok(default),
        n if n > max => Err(Status::invalid_argument(format!(
            "limit: {n} is above {max}"
        ))),
        n => Ok(n),
    }
}

/// Room for one stream of entries, held while the stream lasts.
type StreamRoom = crate::limits::StreamRoom;

impl QueryService {
    fn durable_index(&self) -> u64 {
        self.ledger.durable().borrow().0
    }

    /// Room for one more stream of entries of `req`'s caller, or `RESOURCE_EXHAUSTED`: without
    /// a bound, streams their clients leave open would take every thread of the blocking pool,
    /// which the other queries share.
    fn entry_stream<T>(&self, req: &Request<T>) -> Result<StreamRoom, Status> {
        self.entry_streams
            .open(&crate::access::Caller::of(req).name)
    }
}

/// Stream entries `from..=to` from the store on a blocking thread, holding `room` until done.
fn stream_entries(
    ledger: &Ledger,
    from: u64,
    to: u64,
    room: Option<StreamRoom>,
) -> BoxStream<v1::ChainEntry> {
    let (tx, rx) = mpsc::channel(256);
    let store = ledger.store().clone();
    tokio::task::spawn_blocking(move || {
        let _room = room;
        for e in store.entries(from, to) {
            let item = e.map_err(store_err);
            let stop = item.is_err();
            if tx.blocking_send(item).is_err() || stop {
                return;
            }
        }
    });
    Box::pin(ReceiverStream::new(rx))
}

#[tonic::async_trait]
impl Query for QueryService {
    type ListEntriesStream = BoxStream<v1::ChainEntry>;
    type ListDeviceEntriesStream = BoxStream<v1::ChainEntry>;
    type TailStream = BoxStream<v1::ChainEntry>;

    async fn get_head(&self, _: Request<v1::GetHeadRequest>) -> Result<Response<v1::Head>, Status> {
        let (index, hash) = *self.ledger.durable().borrow();
        Ok(Response::new(v1::Head {
            index,
            entry_hash: hash.to_vec(),
            length: index + 1,
            ledger_public_key: self
                .ledger
                .store()
                .genesis_public_key()
                .map(|k| k.as_bytes().to_vec())
                .unwrap_or_default(),
            ledger_id: self.ledger_id.clone(),
        }))
    }

    async fn get_entry(
        &self,
        req: Request<v1::GetEntryRequest>,
    ) -> Result<Response<v1::ChainEntry>, Status> {
        let index = req.into_inner().index;
        if index > self.durable_index() {
            return Err(Status::not_found(format!(
                "entry {index} does not exist (head is {})",
                self.durable_index()
            )));
        }
        match self.ledger.store().entry(index).map_err(store_err)? {
            Some(e) => Ok(Response::new(e)),
            None => Err(Status::data_loss(format!(
                "entry {index} is missing from the store"
            ))),
        }
    }

    async fn list_entries(
        &self,
        req: Request<v1::ListEntriesRequest>,
    ) -> Result<Response<Self::ListEntriesStream>, Status> {
        let room = self.entry_stream(&req)?;
        let r = req.into_inner();
        let head = self.durable_index();
        let to = if r.to_index == 0 {
            head
        } else {
            r.to_index.min(head)
        };
        if r.from_index > to {
            return Err(Status::invalid_argument(if r.from_index > head {
                format!(
                    "from_index {} is after the durable head {head} (Tail follows the head)",
                    r.from_index
                )
            } else {
                format!("from_index {} is after to_index {to}", r.from_index)
            }));
        }
        Ok(Response::new(stream_entries(
            &self.ledger,
            r.from_index,
            to,
            Some(room),
        )))
    }

    async fn list_device_entries(
        &self,
        req: Request<v1::ListDeviceEntriesRequest>,
    ) -> Result<Response<Self::ListDeviceEntriesStream>, Status> {
        let caller = crate::access::Caller::of(&req);
        let room = self.entry_stream(&req)?;
        let r = req.into_inner();
        id_arg("device_id", &r.device_id)?;
        if !caller.casinos.is_empty() {
            // A principal limited to some casinos reads only their devices' entries, and learns
            // nothing of others (the same answer as for a device that does not exist).
            let seen = self
                .ledger
                .store()
                .signer(&r.device_id)
                .map_err(store_err)?;
            if !seen.is_some_and(|s| visible(&caller, &s.to_proto())) {
                return Err(Status::not_found(format!(
                    "no device {} in the casinos {} may read",
                    r.device_id, caller.name
                )));
            }
        }
        let head = self.durable_index();
        let (tx, rx) = mpsc::channel(256);
        let store = self.ledger.store().clone();
        tokio::task::spawn_blocking(move || {
            let _room = room;
            for e in store.device_entries(&r.device_id, r.from_sequence) {
                let item = e.map_err(store_err);
                if matches!(&item, Ok(e) if e.index > head) {
                    return;
                }
                let stop = item.is_err();
                if tx.blocking_send(item).is_err() || stop {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn tail(
        &self,
        req: Request<v1::TailRequest>,
    ) -> Result<Response<Self::TailStream>, Status> {
        let room = self.entry_stream(&req)?;
        let mut next = req.into_inner().from_index;
        // Entries are contiguous and the head only grows: a tail may start at any entry up to
        // the next one. One further ahead is a mistake, and would hold a place among
        // `grpc.max_entry_streams` waiting for entries that may never come.
        let head = self.durable_index();
        if next > head.saturating_add(1) {
            return Err(Status::invalid_argument(format!(
                "from_index: {next} is beyond the next entry ({}): the head is at {head}",
                head.saturating_add(1)
            )));
        }
        let ledger = self.ledger.clone();
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(async move {
            let _room = room;
            let mut durable = ledger.durable();
            loop {
                let head = durable.borrow_and_update().0;
                if next <= head {
                    let mut s = stream_entries(&ledger, next, head, None);
                    while let Some(item) = s.next().await {
                        let stop = item.is_err();
                        if let Ok(e) = &item {
                            next = e.index + 1;
                        }
                        if tx.send(item).await.is_err() || stop {
                            return;
                        }
                    }
                }
                tokio::select! {
                    changed = durable.changed() => if changed.is_err() { return },
                    _ = tx.closed() => return,
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn get_device(
        &self,
        req: Request<v1::GetDeviceRequest>,
    ) -> Result<Response<v1::DeviceInfo>, Status> {
        let caller = crate::access::Caller::of(&req);
        let id = req.into_inner().device_id;
        id_arg("device_id", &id)?;
        match self.ledger.store().signer(&id).map_err(store_err)? {
            Some(s) if visible(&caller, &s.to_proto()) => Ok(Response::new(s.to_proto())),
            _ if !caller.casinos.is_empty() => Err(Status::not_found(format!(
                "no device {id} in the casinos {} may read",
                caller.name
            ))),
            _ => Err(Status::not_found(format!("no device or principal {id}"))),
        }
    }

    async fn get_device_history(
        &self,
        req: Request<v1::GetDeviceRequest>,
    ) -> Result<Response<v1::DeviceHistory>, Status> {
        let caller = crate::access::Caller::of(&req);
        let id = req.into_inner().device_id;
        id_arg("device_id", &id)?;
        let store = self.ledger.store().clone();
        let head = self.durable_index();
        self.queries
            .run(move || {
                let device = match store.signer(&id).map_err(store_err)? {
                    Some(s) if visible(&caller, &s.to_proto()) => s,
                    _ if !caller.casinos.is_empty() => {
                        return Err(Status::not_found(format!(
                            "no device {id} in the casinos {} may read",
                            caller.name
                        )));
                    }
                    _ => return Err(Status::not_found(format!("no device or principal {id}"))),
                };
                let entries = device_history(&store, &device, head)?;
                Ok(Response::new(v1::DeviceHistory {
                    device: Some(device.to_proto()),
                    entries,
                }))
            })
            .await?
    }

    async fn list_devices(
        &self,
        req: Request<v1::ListDevicesRequest>,
    ) -> Result<Response<v1::DeviceList>, Status> {
        let caller = crate::access::Caller::of(&req);
        let q = req.into_inner();
        let limit = page_limit(q.limit, DEVICES_PAGE, DEVICES_PAGE_MAX)?;
        if !q.after_device_id.is_empty() {
            id_arg("after_device_id", &q.after_device_id)?;
        }
        let store = self.ledger.store().clone();
        let mut budget = crate::reply::Budget::new(self.max_reply_bytes);
        self.queries
            .run(move || {
                let after = (!q.after_device_id.is_empty()).then_some(q.after_device_id.as_str());
                let signers = store
                    .signers_after(after)
                    .map(|s| s.map(|s| s.to_proto()).map_err(store_err))
                    .filter(|d| d.as_ref().map_or(true, |d| visible(&caller, d)));
                let (devices, more) = crate::reply::fill(
                    signers,
                    limit,
                    &mut budget,
                    |d| Ok(crate::reply::message_cost(d.encoded_len())),
                    |d| format!("device {}", d.device_id),
                )?;
                let next_after_device_id = match (more, devices.last()) {
                    (true, Some(d)) => d.device_id.clone(),
                    _ => String::new(),
                };
                Ok(Response::new(v1::DeviceList {
                    devices,
                    next_after_device_id,
                }))
            })
            .await?
    }

    async fn get_ingest_stats(
        &self,
        _: Request<v1::GetIngestStatsRequest>,
    ) -> Result<Response<v1::IngestStats>, Status> {
        Ok(Response::new(
            self.ledger.stats().to_proto(std::time::Instant::now()),
        ))
    }
}

/// The checkpoint service.
pub struct CheckpointService {
    pub ledger: Ledger,
    /// Shared with [`QueryService::entry_streams`]: a `List` stream holds a blocking thread.
    pub entry_streams: Arc<crate::limits::EntryStreams>,
    /// Least time between two checkpoints signed on request (`checkpoint.request_interval_ms`).
    pub request_interval: std::time::Duration,
    /// The last checkpoint signed on request, and when it was asked of the pipeline. Held while
    /// a request waits its turn and signs, so requests are served one after another.
    pub requested: tokio::sync::Mutex<Option<(std::time::Instant, v1::Checkpoint)>>,
    /// The configured witnesses (name, key) and how many must cosign (`cosigned` requests).
    /// Each witness's keys: ed25519, and ML-DSA-44 when it has one (a checkpoint counts as
    /// cosigned by it when every key's line verifies).
    pub witnesses: Vec<(String, Vec<ledger_core::note::CosignerKey>)>,
    pub witnesses_required: usize,
}

impl CheckpointService {
    /// A checkpoint service with no checkpoint requested yet.
    pub fn new(
        ledger: Ledger,
        entry_streams: Arc<crate::limits::EntryStreams>,
        request_interval: std::time::Duration,
    ) -> Self {
        CheckpointService {
            ledger,
            entry_streams,
            request_interval,
            requested: tokio::sync::Mutex::new(None),
            witnesses: Vec::new(),
            witnesses_required: 0,
        }
    }

    /// The latest checkpoint, read off the async workers (the first read after start reads
    /// both lists of checkpoints; later ones come from memory).
    async fn latest(&self) -> Result<ledger_store::LatestCheckpoint, Status> {
        let store = self.ledger.store().clone();
        tokio::task::spawn_blocking(move || store.latest_checkpoint())
            .await
            .map_err(|e| Status::internal(format!("checkpoint read failed: {e}")))?
            .map_err(store_err)
    }

    /// The latest checkpoint if it covers the durable head, and so every entry acknowledged
    /// before this call (a receipt goes out only after the head it is under is published).
    async fn covering(&self) -> Result<Option<v1::Checkpoint>, Status> {
        let (index, hash) = *self.ledger.durable().borrow();
        Ok(match self.latest().await? {
            Some((cp, info)) if info.index == index && info.head_hash == hash => Some(cp),
            _ => None,
        })
    }
}

#[tonic::async_trait]
impl Checkpoints for CheckpointService {
    type ListStream = BoxStream<v1::Checkpoint>;

    async fn get_latest(
        &self,
        req: Request<v1::GetCheckpointRequest>,
    ) -> Result<Response<v1::Checkpoint>, Status> {
        let store = self.ledger.store().clone();
        if req.into_inner().cosigned {
            if self.witnesses.is_empty() {
                return Err(Status::failed_precondition(
                    "this ledger has no witnesses configured",
                ));
            }
            let (ws, k) = (self.witnesses.clone(), self.witnesses_required);
            let k = if k == 0 { ws.len() } else { k };
            let cp = tokio::task::spawn_blocking(move || store.latest_cosigned(&ws, k))
                .await
                .map_err(|e| Status::internal(format!("checkpoint read failed: {e}")))?
                .map_err(store_err)?;
            return cp.map(Response::new).ok_or_else(|| {
                Status::not_found(format!(
                    "no checkpoint cosigned by {k} of the witnesses yet"
                ))
            });
        }
        match self.latest().await? {
            Some((cp, _)) => {
                let cp = tokio::task::spawn_blocking(move || store.with_cosignatures(cp))
                    .await
                    .map_err(|e| Status::internal(format!("checkpoint read failed: {e}")))?
                    .map_err(store_err)?;
                Ok(Response::new(cp))
            }
            None => Err(Status::not_found("no checkpoint yet")),
        }
    }

    /// Any client may ask, so signing is rate limited: each one signed on request closes the
    /// verifier's group and costs two fsyncs. Every caller still gets a checkpoint that covers
    /// every entry acknowledged before its call: the latest if it covers the durable head, or
    /// one the pipeline was asked for after the call began (shared by the callers waiting).
    async fn create(
        &self,
        _: Request<v1::CreateCheckpointRequest>,
    ) -> Result<Response<v1::Checkpoint>, Status> {
        // A mirror signs nothing: not even the source's latest checkpoint is handed out as new.
        if let Some(m) = self.ledger.mirror() {
            return Err(Status::failed_precondition(crate::mirror::refusal(
                &m.source,
            )));
        }
        let asked = std::time::Instant::now();
        if let Some(cp) = self.covering().await? {
            return Ok(Response::new(cp));
        }
        let mut last = self.requested.lock().await;
        if let Some((started, cp)) = &*last {
            if *started >= asked {
                return Ok(Response::new(cp.clone()));
            }
            tokio::time::sleep_until((*started + self.request_interval).into()).await;
            if let Some(cp) = self.covering().await? {
                return Ok(Response::new(cp));
            }
        }
        let started = std::time::Instant::now();
        let cp = self.ledger.checkpoint_acknowledged("request").await?;
        *last = Some((started, cp.clone()));
        Ok(Response::new(cp))
    }

    async fn list(
        &self,
        req: Request<v1::ListCheckpointsRequest>,
    ) -> Result<Response<Self::ListStream>, Status> {
        let room = self
            .entry_streams
            .open(&crate::access::Caller::of(&req).name)?;
        let after = req.into_inner().after_number;
        let (tx, rx) = mpsc::channel(64);
        let store = self.ledger.store().clone();
        tokio::task::spawn_blocking(move || {
            let _room = room;
            for cp in store.checkpoints_after(after) {
                let item = cp
                    .and_then(|cp| store.with_cosignatures(cp))
                    .map_err(store_err);
                let stop = item.is_err();
                if tx.blocking_send(item).is_err() || stop {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// Whether a principal limited to some casinos may read `entry`: an event signed by a device of
/// its casinos. The ledger's own records and principals' events concern every casino.
pub(crate) fn entry_visible(
    store: &ledger_store::Store,
    caller: &crate::access::Principal,
    entry: &v1::ChainEntry,
) -> Result<bool, Status> {
    if caller.casinos.is_empty() {
        return Ok(true);
    }
    if ledger_core::RecordKind::from_proto(entry.kind) != Some(ledger_core::RecordKind::Event) {
        return Ok(false);
    }
    let Ok(ev) = ledger_core::Event::decode(&entry.body) else {
        return Ok(false);
    };
    Ok(store
        .signer(&ev.device_id)
        .map_err(store_err)?
        .is_some_and(|s| visible(caller, &s.to_proto())))
}

/// Whether `caller` may see the registry entry `d`: every entry when it is not limited to some
/// casinos; otherwise only devices of its casinos (not the principals' keys).
/// The registry entries of `device` up to entry `head`, oldest first: for a device, its
/// registration, key rotations and revocation, all signed by operator principals, so found
/// among the operators' own entries (rotations are not indexed by device; an operator signs
/// few entries); for a principal, the ledger record that declared it.
fn device_history(
    store: &ledger_store::Store,
    device: &ledger_core::signers::Signer,
    head: u64,
) -> Result<Vec<v1::DeviceHistoryEntry>, Status> {
    use ledger_core::signers::SignerRole;
    use v1::event_body::Payload as P;
    if device.role.is_principal() {
        let e = store
            .entry(device.registered_at_index)
            .map_err(store_err)?
            .ok_or_else(|| {
                Status::data_loss(format!(
                    "entry {} (declaring {}) is missing from the store",
                    device.registered_at_index, device.id
                ))
            })?;
        return Ok(vec![v1::DeviceHistoryEntry {
            index: e.index,
            action: "declared".into(),
            received_at_ms: e.received_at_ms,
            occurred_at_ms: 0,
            signed_by: "ledger".into(),
            public_key: device.key.as_bytes().to_vec(),
            reason: String::new(),
        }]);
    }
    let mut out = Vec::new();
    for op in store.signers_after(None) {
        let op = op.map_err(store_err)?;
        if op.role != SignerRole::Operator {
            continue;
        }
        for e in store.device_entries(&op.id, 0) {
            let e = e.map_err(store_err)?;
            if e.index > head {
                break;
            }
            // Only the operator's registry events of this device; anything else it signed (models,
            // pools, transfers) is skipped.
            let Ok(body) = v1::EventBody::decode(e.body.as_slice()) else {
                continue;
            };
            let (action, key, reason) = match body.payload {
                Some(P::DeviceRegistered(r)) if r.device_id == device.id => {
                    ("registered", r.public_key, String::new())
                }
                Some(P::DeviceKeyRotated(r)) if r.device_id == device.id => {
                    ("key_rotated", r.public_key, r.reason)
                }
                Some(P::DeviceRevoked(r)) if r.device_id == device.id => {
                    ("revoked", Vec::new(), r.reason)
                }
                _ => continue,
            };
            out.push(v1::DeviceHistoryEntry {
                index: e.index,
                action: action.into(),
                received_at_ms: e.received_at_ms,
                occurred_at_ms: body.occurred_at_ms,
                signed_by: body.device_id,
                public_key: key,
                reason,
            });
        }
    }
    out.sort_by_key(|h| h.index);
    Ok(out)
}

fn visible(caller: &crate::access::Principal, d: &v1::DeviceInfo) -> bool {
    caller.casinos.is_empty()
        || (matches!(d.kind.as_str(), "table" | "machine") && caller.casinos.contains(&d.casino_id))
}
