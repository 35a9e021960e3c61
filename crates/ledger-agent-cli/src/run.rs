//! `ledger-agent run`: input → outbox (numbered, signed, fsynced) → one Submit stream at a time
//! → receipts into the outbox; reconnects with jittered exponential backoff and resends every
//! event without a receipt, in order.
//!
//! Three parts, in this order:
//! 1. **Reconcile** with the ledger before anything is signed: the device must be registered
//!    with this key and not revoked; a new outbox starts after the ledger's last sequence for the
//!    device; an outbox whose next sequence the ledger already holds is refused (another agent
//!    signs for the device, or this outbox is an old copy: signing would be an equivocation);
//!    pending events the ledger already holds are compared byte for byte and acknowledged (the
//!    same bytes) or refused (other bytes: never sent).
//! 2. **Take** the input on a thread of its own: each batch of lines is checked, numbered, signed
//!    and written with the input's position in one atomic, fsynced batch before any of it is
//!    sent.
//! 3. **Send** what is pending, oldest first, on one stream; half-close when the input is done and
//!    everything taken was sent; a stream that breaks is opened again after a backoff, from the
//!    oldest event without a receipt.

use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use backon::BackoffBuilder;
use ledger_agent::outbox::{Acked, InputMark, NewEvent, Outbox, input_key, spool_key};
use ledger_core::proto::{
    self as v1, ReceiptStatus, RejectReason, ingest_client::IngestClient, query_client::QueryClient,
};
use ledger_core::receipt::compact;
use prost::Message;
use tokio::sync::{mpsc, watch};
use tokio_stream::StreamExt;
use tonic::transport::Channel;

use crate::input::parse_line;

/// Where events come from.
#[derive(Clone, Debug)]
pub enum Input {
    /// A JSON Lines file. What was taken of it is kept, so a rerun takes only what follows.
    File(PathBuf),
    /// Standard input, to its end.
    Stdin,
    /// `*.jsonl` files appearing in a directory, taken whole in name order and then removed.
    Spool {
        dir: PathBuf,
        once: bool,
        poll: Duration,
    },
}

/// Settings of a run.
pub struct RunOpts {
    pub server: String,
    pub input: Input,
    /// Lines taken, signed and fsynced together at most.
    pub batch: usize,
    /// Give up when no receipt came for this long while events wait (None: never).
    pub give_up_after: Option<Duration>,
}

/// How a run ended well.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    pub taken: u64,
    pub acknowledged: u64,
    pub duplicates: u64,
    pub reconnects: u64,
}

/// What the input thread has done so far.
#[derive(Clone, Copy, Debug, Default)]
struct Taken {
    /// The outbox's next sequence number.
    next: u64,
    /// Events taken in this run.
    count: u64,
    /// The input is exhausted (or failed: see the thread's result).
    done: bool,
}

/// Connect, with jittered exponential backoff until `give_up_after` (or for ever).
async fn connect(server: &str, give_up_after: Option<Duration>) -> anyhow::Result<Channel> {
    let start = std::time::Instant::now();
    let mut delays = backoff();
    loop {
        match ledger_agent::connect(server).await {
            Ok(ch) => return Ok(ch),
            Err(e) => {
                if give_up_after.is_some_and(|g| start.elapsed() >= g) {
                    return Err(anyhow!(e)).context("giving up (--give-up-after)");
                }
                let d = delays.next().unwrap_or(Duration::from_secs(5));
                tracing::warn!(error = %e, retry_in_ms = d.as_millis() as u64, "ledger unreachable");
                tokio::time::sleep(d).await;
            }
        }
    }
}

fn backoff() -> impl Iterator<Item = Duration> {
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_secs(5))
        .with_factor(2.0)
        .with_jitter()
        .without_max_times()
        .build()
}

/// Step 1: agree with the ledger on where this device's sequence stands.
pub async fn reconcile(ch: Channel, outbox: &Outbox) -> anyhow::Result<v1::DeviceInfo> {
    let device = outbox.device_id().to_string();
    let mut q = QueryClient::new(ch).max_decoding_message_size(64 << 20);
    let info = match q
        .get_device(v1::GetDeviceRequest {
            device_id: device.clone(),
        })
        .await
    {
        Ok(r) => r.into_inner(),
        Err(s) if s.code() == tonic::Code::NotFound => bail!(
            "device {device} is not registered at the ledger: register it (ledgerctl device \
             register), then run again"
        ),
        Err(s) => return Err(anyhow!(s)).context("asking the ledger for the device"),
    };
    if info.revoked {
        bail!(
            "device {device} was revoked at the ledger (entry {}): nothing it signs is accepted",
            info.revoked_at_index
        );
    }
    if info.public_key != outbox.public_key().as_bytes() {
        bail!(
            "the ledger knows device {device} by another key ({}); this agent's key is {}: check --key",
            hex::encode(&info.public_key),
            hex::encode(outbox.public_key().as_bytes())
        );
    }
    let Some(next) = outbox.next_sequence()? else {
        outbox.start_at(info.last_sequence + 1)?;
        tracing::info!(device, next = info.last_sequence + 1, "new outbox");
        return Ok(info);
    };
    if info.last_sequence >= next {
        bail!(
            "the ledger holds sequence {} of device {device}, but this outbox has numbered events \
             only up to {}: another agent signs for this device, or this outbox is an old copy. \
             Nothing was signed or sent (signing again would be an equivocation)",
            info.last_sequence,
            next - 1
        );
    }
    // Pending events the ledger already holds: the same bytes are acknowledged here, other
    // bytes are never sent.
    if let Some(first) = outbox.first_pending()?
        && first <= info.last_sequence
    {
        let mut entries = q
            .list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: device.clone(),
                from_sequence: first,
            })
            .await
            .context("reading the device's entries from the ledger")?
            .into_inner();
        let mut acks = Vec::new();
        while let Some(e) = entries.next().await {
            let e = e.context("reading the device's entries from the ledger")?;
            let body = v1::EventBody::decode(e.body.as_slice())
                .context("an entry of the device does not decode")?;
            if body.sequence > info.last_sequence {
                break;
            }
            let Some((seq, p)) = outbox.pending(body.sequence, 1)?.into_iter().next() else {
                continue;
            };
            if seq != body.sequence {
                continue;
            }
            if p.body != e.body {
                bail!(
                    "the ledger holds another event at sequence {seq} of device {device} (entry \
                     {}) than this outbox signed ({}): this outbox is not the one that signed it. \
                     Nothing was sent",
                    e.index,
                    p.source
                );
            }
            acks.push((
                seq,
                Acked {
                    index: e.index,
                    entry_hash: e.entry_hash,
                    received_at_ms: e.received_at_ms,
                    duplicate: true,
                    signed: None,
                    envelope: None,
                },
            ));
        }
        outbox.acknowledge(&acks)?;
    }
    Ok(info)
}

/// Step 2, on a thread of its own.
fn take(
    outbox: Arc<Outbox>,
    input: Input,
    batch: usize,
    progress: watch::Sender<Taken>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> anyhow::Result<()> {
    let next = outbox
        .next_sequence()?
        .context("outbox has no sequence yet")?;
    progress.send_modify(|t| t.next = next);
    let append = |events: Vec<NewEvent>, mark: Option<(&[u8], Vec<u8>)>| -> anyhow::Result<()> {
        let n = events.len() as u64;
        let r = outbox.append(events, mark.map(|(k, v)| (k, v.into())))?;
        progress.send_modify(|t| {
            t.next = r.end;
            t.count += n;
        });
        Ok(())
    };
    let device = outbox.device_id().to_string();
    let now = || chrono::Utc::now().timestamp_millis();
    let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
    match input {
        Input::File(path) => {
            let canon = std::fs::canonicalize(&path)
                .with_context(|| format!("--input {}", path.display()))?;
            let key = input_key(&canon.display().to_string());
            let mut file = std::fs::File::open(&canon)
                .with_context(|| format!("--input {}", path.display()))?;
            let mut hasher = blake3::Hasher::new();
            let (mut lines, mut bytes) = (0u64, 0u64);
            if let Some(m) = outbox.input_mark(&canon.display().to_string())? {
                let mut prefix = (&mut file).take(m.bytes);
                std::io::copy(&mut prefix, &mut hasher)?;
                if prefix.limit() != 0 || hasher.finalize().as_bytes().as_slice() != m.prefix_hash {
                    bail!(
                        "--input {}: the file changed since the agent took its first {} lines: \
                         it only takes lines appended to what it took",
                        path.display(),
                        m.lines
                    );
                }
                (lines, bytes) = (m.lines, m.bytes);
            }
            let mut reader = std::io::BufReader::new(file);
            let mut events = Vec::new();
            let mut line = String::new();
            loop {
                line.clear();
                let n = reader
                    .read_line(&mut line)
                    .with_context(|| format!("--input {}", path.display()))?;
                let parsed = if n == 0 {
                    None
                } else {
                    Some(parse_line(
                        &line,
                        format!("{}:{}", path.display(), lines + 1),
                        &device,
                        now(),
                    ))
                };
                if let Some(Err(bad)) = &parsed {
                    // What came before the bad line is taken; the bad line is not.
                    let mark = mark(lines, bytes, &hasher);
                    append(std::mem::take(&mut events), Some((&key, mark)))?;
                    bail!("{bad}");
                }
                if let Some(Ok(e)) = parsed {
                    hasher.update(line.as_bytes());
                    lines += 1;
                    bytes += n as u64;
                    events.extend(e);
                }
                if (n == 0 || events.len() >= batch) && (n > 0 || lines > 0) {
                    let mark = mark(lines, bytes, &hasher);
                    append(std::mem::take(&mut events), Some((&key, mark)))?;
                }
                if n == 0 || stopped() {
                    break;
                }
            }
        }
        Input::Stdin => {
            // A reader thread, so that each batch is what has arrived (one fsync for it).
            let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<String>>(batch * 2);
            std::thread::spawn(move || {
                for l in std::io::stdin().lock().lines() {
                    if tx.send(l).is_err() {
                        return;
                    }
                }
            });
            let mut number = 0u64;
            'outer: while let Ok(first) = rx.recv() {
                let mut events = Vec::new();
                let mut next_line = Some(first);
                while let Some(l) = next_line.take() {
                    number += 1;
                    let l = l.context("reading standard input")?;
                    match parse_line(&l, format!("stdin:{number}"), &device, now()) {
                        Ok(e) => events.extend(e),
                        Err(bad) => {
                            append(events, None)?;
                            bail!("{bad}");
                        }
                    }
                    if events.len() < batch {
                        next_line = rx.try_recv().ok();
                    }
                }
                append(events, None)?;
                if stopped() {
                    break 'outer;
                }
            }
        }
        Input::Spool { dir, once, poll } => loop {
            for name in spool_files(&dir)? {
                if stopped() {
                    break;
                }
                take_spool_file(&outbox, &dir, &name, &device, &append)?;
            }
            if once || stopped() {
                break;
            }
            std::thread::sleep(poll);
        },
    }
    progress.send_modify(|t| t.done = true);
    Ok(())
}

/// Write events, with the mark of what of the input they came from (key, value), to the outbox.
type Append<'a> = dyn Fn(Vec<NewEvent>, Option<(&[u8], Vec<u8>)>) -> anyhow::Result<()> + 'a;

fn mark(lines: u64, bytes: u64, hasher: &blake3::Hasher) -> Vec<u8> {
    InputMark {
        lines,
        bytes,
        prefix_hash: hasher.finalize().as_bytes().to_vec(),
    }
    .encode_to_vec()
}

/// The spool's ready files: `*.jsonl`, not hidden, in name order (a producer writes another
/// name, e.g. `x.jsonl.tmp`, and renames it when complete).
fn spool_files(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut names = Vec::new();
    for f in std::fs::read_dir(dir).with_context(|| format!("--spool {}", dir.display()))? {
        let f = f.with_context(|| format!("--spool {}", dir.display()))?;
        let Ok(name) = f.file_name().into_string() else {
            continue;
        };
        if name.ends_with(".jsonl") && !name.starts_with('.') && f.file_type()?.is_file() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Take one spool file whole: its events and the mark of its content in one fsynced batch, then
/// remove it. A file the outbox already took (a crash came between the two) is only removed.
fn take_spool_file(
    outbox: &Outbox,
    dir: &Path,
    name: &str,
    device: &str,
    append: &Append,
) -> anyhow::Result<()> {
    let path = dir.join(name);
    let text = std::fs::read(&path).with_context(|| format!("{}", path.display()))?;
    let hash = blake3::hash(&text).as_bytes().to_vec();
    if outbox.spool_taken(name)?.as_deref() != Some(hash.as_slice()) {
        let text =
            String::from_utf8(text).map_err(|e| anyhow!("{}: not UTF-8: {e}", path.display()))?;
        let now = chrono::Utc::now().timestamp_millis();
        let mut events = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let source = format!("{}:{}", path.display(), i + 1);
            events.extend(parse_line(l, source, device, now).map_err(|b| {
                anyhow!("{b} (nothing of this file was taken; fix or remove it, then run again)")
            })?);
        }
        append(events, Some((&spool_key(name), hash)))?;
    }
    std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("--spool {}", dir.display()))?;
    outbox.forget_spool(name)?;
    Ok(())
}

/// Why a stream ended before everything was acknowledged.
enum Broke {
    /// Try again on a new stream (the ledger stopping, a network fault, room exhausted).
    Retry(anyhow::Error),
    /// Resending cannot help: stop.
    Fatal(anyhow::Error),
}

/// What the user sees as receipts come.
pub struct Ui {
    pub bar: indicatif::ProgressBar,
    pub json: bool,
}

impl Ui {
    /// The bar's length: what was pending at the start and what was taken since.
    fn length(&self, pending_at_start: u64, taken: &watch::Receiver<Taken>) {
        self.bar.set_length(pending_at_start + taken.borrow().count);
    }
}

/// Step 3: one stream. Returns how many events it got receipts for.
async fn stream_once(
    ch: Channel,
    outbox: &Arc<Outbox>,
    taken: watch::Receiver<Taken>,
    pending_at_start: u64,
    ui: &Ui,
    outcome: &mut Outcome,
) -> Result<u64, Broke> {
    let fatal = |e: anyhow::Error| Broke::Fatal(e);
    let first = match outbox.first_pending() {
        Ok(Some(f)) => f,
        Ok(None) => taken.borrow().next,
        Err(e) => return Err(fatal(e.into())),
    };
    let sent: Arc<Mutex<VecDeque<(u64, String)>>> = Default::default();
    let (tx, rx) = mpsc::channel::<v1::Envelope>(1024);
    let feeder = {
        let outbox = outbox.clone();
        let sent = sent.clone();
        let mut taken = taken.clone();
        tokio::spawn(async move {
            let mut from = first;
            loop {
                // What was taken is read before the outbox: every event numbered below `t.next`
                // is then either in `batch` or already acknowledged.
                let t = *taken.borrow_and_update();
                let batch = match outbox.pending(from, 512) {
                    Ok(b) => b,
                    Err(e) => {
                        tracing::error!(error = %e, "reading the outbox");
                        return;
                    }
                };
                if batch.is_empty() {
                    from = from.max(t.next);
                    if t.done {
                        return; // dropping `tx` half-closes the stream
                    }
                    if taken.changed().await.is_err() {
                        return;
                    }
                    continue;
                }
                for (seq, p) in batch {
                    sent.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push_back((seq, p.source.clone()));
                    if tx.send(p.envelope()).await.is_err() {
                        return;
                    }
                    from = seq + 1;
                }
            }
        })
    };
    let _stop_feeder = AbortOnDrop(feeder);
    let mut client = IngestClient::new(ch)
        .max_decoding_message_size(16 << 20)
        .max_encoding_message_size(16 << 20);
    // Compact receipts, made whole below as they arrive (ledger_core::receipt::compact).
    let mut request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    request.metadata_mut().insert(
        compact::HEADER,
        tonic::metadata::MetadataValue::from_static(compact::COMPACT),
    );
    let mut inbound = match client.submit(request).await {
        Ok(r) => r.into_inner(),
        Err(s) => return Err(classify(s)),
    };
    let mut expander = compact::Expander::default();
    let mut acks: Vec<(u64, Acked)> = Vec::new();
    let mut got = 0u64;
    let flush = |acks: &mut Vec<(u64, Acked)>| -> Result<(), Broke> {
        outbox
            .acknowledge(acks)
            .map_err(|e| Broke::Fatal(e.into()))?;
        ui.length(pending_at_start, &taken);
        ui.bar.inc(acks.len() as u64);
        acks.clear();
        Ok(())
    };
    loop {
        let next = match tokio::time::timeout(Duration::from_millis(20), inbound.next()).await {
            Ok(n) => n,
            Err(_) => {
                flush(&mut acks)?;
                inbound.next().await
            }
        };
        let r = match next {
            Some(Ok(mut r)) => {
                if let Err(e) = expander.expand(&mut r) {
                    flush(&mut acks)?;
                    return Err(fatal(anyhow!("a receipt from the ledger: {e}")));
                }
                r
            }
            Some(Err(s)) => {
                flush(&mut acks)?;
                return Err(classify(s));
            }
            None => break,
        };
        let Some((seq, source)) = sent.lock().unwrap_or_else(|e| e.into_inner()).pop_front() else {
            return Err(fatal(anyhow!(
                "the ledger sent a receipt for an envelope this agent did not send: {r:?}"
            )));
        };
        if r.sequence != 0 && r.sequence != seq {
            return Err(fatal(anyhow!(
                "receipt for sequence {} where {seq} was expected",
                r.sequence
            )));
        }
        match ReceiptStatus::try_from(r.status) {
            Ok(ReceiptStatus::Accepted) | Ok(ReceiptStatus::Duplicate) => {
                let duplicate = r.status == ReceiptStatus::Duplicate as i32;
                outcome.acknowledged += 1;
                outcome.duplicates += duplicate as u64;
                got += 1;
                // A signed receipt is kept whole (with the envelope, which the outbox adds).
                let signed = r.group.is_some().then(|| r.clone());
                acks.push((
                    seq,
                    Acked {
                        index: r.index,
                        entry_hash: r.entry_hash,
                        received_at_ms: r.received_at_ms,
                        duplicate,
                        signed,
                        envelope: None,
                    },
                ));
                if acks.len() >= 256 {
                    flush(&mut acks)?;
                }
            }
            _ => {
                flush(&mut acks)?;
                if ui.json {
                    println!(
                        "{}",
                        serde_json::json!({"refused": {
                            "sequence": seq, "source": source,
                            "status": ReceiptStatus::try_from(r.status).map(|s| s.as_str_name()).unwrap_or("UNKNOWN"),
                            "reason": RejectReason::try_from(r.reason).map(|s| s.as_str_name()).unwrap_or("UNKNOWN"),
                            "detail": r.detail, "expected_sequence": r.expected_sequence,
                            "index": r.index,
                        }})
                    );
                }
                return Err(fatal(anyhow!(refusal(seq, &source, &r))));
            }
        }
    }
    flush(&mut acks)?;
    Ok(got)
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A stream's error: retried, or not.
fn classify(s: tonic::Status) -> Broke {
    use tonic::Code::*;
    match s.code() {
        Unavailable | ResourceExhausted | Unknown | Internal | Cancelled | DeadlineExceeded
        | Aborted => Broke::Retry(anyhow!(s)),
        _ => Broke::Fatal(anyhow!(
            "the ledger ended the stream with {:?}: {} (resending cannot fix this)",
            s.code(),
            s.message()
        )),
    }
}

/// One line saying which event was refused, why, and what to do.
pub fn refusal(seq: u64, source: &str, r: &v1::Receipt) -> String {
    let status = ReceiptStatus::try_from(r.status).unwrap_or(ReceiptStatus::Unspecified);
    if status == ReceiptStatus::Equivocation {
        return format!(
            "event {seq} ({source}): EQUIVOCATION: the ledger holds another event at sequence \
             {seq} of this device and recorded a security finding (entry {}). Another agent \
             signs for this device, or this outbox is not the one that signed: stop them all",
            r.index
        );
    }
    let reason = RejectReason::try_from(r.reason).unwrap_or(RejectReason::Unspecified);
    let advice = match reason {
        RejectReason::UnknownDevice => {
            "register the device (ledgerctl device register), then run again: the outbox resends it"
                .to_string()
        }
        RejectReason::RevokedDevice => "the device is revoked: nothing it signs is accepted".into(),
        RejectReason::BadSignature => {
            "the ledger knows this device by another key: check --key".into()
        }
        RejectReason::SequenceGap => format!(
            "the ledger expects sequence {}: events this outbox numbered before it are missing \
             there (a ledger restored from an older copy?); ask the ledger's operator",
            r.expected_sequence
        ),
        RejectReason::Unauthorized => {
            "this device may not sign this payload (its kind, or a table or pool it is not \
             registered for)"
                .into()
        }
        _ => format!(
            "resending cannot fix it: `ledger-agent discard --sequence {seq}` drops it and \
             numbers the events after it again"
        ),
    };
    format!(
        "event {seq} ({source}) was REJECTED: {}: {}; {advice}",
        reason.as_str_name(),
        r.detail
    )
}

/// The whole run.
pub async fn run(outbox: Arc<Outbox>, opts: RunOpts, ui: Ui) -> anyhow::Result<Outcome> {
    let ch = connect(&opts.server, opts.give_up_after).await?;
    reconcile(ch.clone(), &outbox).await?;
    let (progress, taken) = watch::channel(Taken::default());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pending_at_start = outbox.counts()?.pending;
    let input = {
        let (outbox, input, stop) = (outbox.clone(), opts.input.clone(), stop.clone());
        let batch = opts.batch.max(1);
        std::thread::Builder::new()
            .name("input".into())
            .spawn(move || take(outbox, input, batch, progress, stop))?
    };
    let mut outcome = Outcome::default();
    let result = send_all(
        &outbox,
        &opts,
        ch,
        (taken.clone(), pending_at_start),
        &ui,
        &mut outcome,
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    outcome.taken = taken.borrow().count;
    match result {
        // The input's own error (a bad line) comes after what it took was acknowledged.
        Ok(()) => match input.join() {
            Ok(r) => r.map(|()| outcome),
            Err(_) => bail!("the input thread panicked"),
        },
        Err(e) => Err(e),
    }
}

async fn send_all(
    outbox: &Arc<Outbox>,
    opts: &RunOpts,
    mut ch: Channel,
    (taken, pending_at_start): (watch::Receiver<Taken>, u64),
    ui: &Ui,
    outcome: &mut Outcome,
) -> anyhow::Result<()> {
    let mut delays = backoff();
    let mut since_progress = std::time::Instant::now();
    let mut taken_rx = taken.clone();
    loop {
        {
            let t = *taken_rx.borrow_and_update();
            ui.length(pending_at_start, &taken_rx);
            if t.done && outbox.first_pending()?.is_none() {
                return Ok(());
            }
            if !t.done && outbox.first_pending()?.is_none() {
                // Nothing to send yet: wait for input (or its end).
                if taken_rx.changed().await.is_err() {
                    let t = *taken_rx.borrow();
                    if !t.done {
                        // The input thread ended without finishing: its error is the result.
                        return Ok(());
                    }
                }
                continue;
            }
        }
        match stream_once(
            ch.clone(),
            outbox,
            taken.clone(),
            pending_at_start,
            ui,
            outcome,
        )
        .await
        {
            Ok(got) if got > 0 => {
                delays = backoff();
                since_progress = std::time::Instant::now();
            }
            // A call that ended well without a receipt while events wait: not progress.
            Ok(_) => {
                outcome.reconnects += 1;
                tokio::time::sleep(delays.next().unwrap_or(Duration::from_secs(5))).await;
            }
            Err(Broke::Fatal(e)) => return Err(e),
            Err(Broke::Retry(e)) => {
                if opts
                    .give_up_after
                    .is_some_and(|g| since_progress.elapsed() >= g)
                {
                    return Err(e.context("giving up (--give-up-after)"));
                }
                outcome.reconnects += 1;
                let d = delays.next().unwrap_or(Duration::from_secs(5));
                tracing::warn!(error = %e, retry_in_ms = d.as_millis() as u64, "stream broke; resending what has no receipt");
                tokio::time::sleep(d).await;
                ch = connect(&opts.server, opts.give_up_after).await?;
            }
        }
    }
}

/// `ledger-agent discard`: drop the oldest pending event, which the ledger refused, after
/// checking that the ledger holds nothing at or after its sequence.
pub async fn discard(outbox: &Outbox, server: &str, seq: u64) -> anyhow::Result<String> {
    let ch = ledger_agent::connect(server).await?;
    let info = QueryClient::new(ch)
        .get_device(v1::GetDeviceRequest {
            device_id: outbox.device_id().to_string(),
        })
        .await
        .context("asking the ledger for the device")?
        .into_inner();
    if info.last_sequence >= seq {
        bail!(
            "the ledger holds sequence {} of {}: event {seq} is stored there and cannot be discarded",
            info.last_sequence,
            outbox.device_id()
        );
    }
    let gone = outbox.discard(seq)?;
    Ok(gone.source)
}
