//! The writer's decisions. [`precheck`] and [`verify_prechecked`] need no order and run ahead on
//! other threads; [`Appender::apply`] takes a group of prechecked envelopes in arrival order,
//! decides each one (duplicate, equivocation, gap, registry rules, ...), and writes the accepted
//! entries and the state they change as one group ([`crate::commit`]: all or nothing across a
//! crash, without sled's exclusive batch lock). The caller then calls
//! [`crate::Store::sync`] and only after it succeeds sends the receipts.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ed25519_dalek::{Signature, VerifyingKey};
use ledger_core::event::{BodyError, Event, Payload, TimePolicy};
use ledger_core::proto::{self as v1, ledger_record_body::Record};
use ledger_core::record::{make_entry, try_sign_ledger_record};
use ledger_core::signers::{
    PoolMembers, Signer, authorize, check_key_rotation, check_pool_authority, check_registration,
    check_revocation, pool_configured,
};
use ledger_core::signing::LedgerSigner;
use ledger_core::signing::{EVENT_DOMAIN, PreparedSignature, signed_message, verify_prepared};
use ledger_core::{GENESIS_PREV_HASH, Hash32, RecordKind};
use prost::Message;

use crate::StoreError;
use crate::commit::{UNDO_HEADER, UNDO_MAX, undo_item_len};
use crate::store::{
    K_DERIVED, K_LEDGER_KEYS, SEQ_RUN_MAX, Store, device_key, finding_key, pool_key, pool_record,
    rotations_value, seq_key, seq_key_len, u64_of,
};
use v1::{ReceiptStatus as St, RejectReason as Why};

/// An envelope that passed the order-independent checks.
#[derive(Debug)]
pub struct Ready {
    pub body: Vec<u8>,
    pub signature: Vec<u8>,
    sig: Signature,
    pub event: Event,
    key: Option<VerifyingKey>,
    /// The signature made ready for the group's batch check, when the signer's key was known.
    prepared: Option<PreparedSignature>,
    /// Known when the signer's key was: false at once for a signature that cannot be valid,
    /// otherwise set by [`verify_prechecked`].
    sig_valid: Option<bool>,
    /// Why the event's time is outside the time window at [`precheck`], if it is. Applied by
    /// [`Appender::decide`] after the duplicate and equivocation checks, not in `precheck`: an
    /// identical resend of a stored event gets its original receipt even when its time has
    /// since left the window (a device resending after an outage), an equivocation is recorded
    /// whatever its time, and both need the writer's state, which `precheck` does not read.
    time_error: Option<String>,
    /// From a source that has not shown it holds a device key ([`PreOutcome::mark_untrusted`]):
    /// batch-checked apart from the others.
    untrusted: bool,
}

/// Result of [`precheck`].
#[derive(Debug)]
pub enum PreOutcome {
    /// Refused before any state was consulted; the receipt says why.
    Rejected(Box<v1::Receipt>),
    Ready(Box<Ready>),
}

impl PreOutcome {
    /// The envelope comes from a source that has not shown it holds a device key (an ingest
    /// stream with no accepted envelope yet, or whose last verdict was a bad signature).
    /// [`verify_prechecked`] checks such signatures in a batch of their own: one bad signature
    /// fails its whole batch, which is then halved down to it, about three times the batch's
    /// work, and anyone who can reach the port can send one. Kept apart, what a client without a
    /// key sends costs the bisection of the untrusted signatures only, not the group's.
    pub fn mark_untrusted(&mut self) {
        if let PreOutcome::Ready(r) = self {
            r.untrusted = true;
        }
    }
}

fn reject(reason: Why, device_id: &str, sequence: u64, detail: impl Into<String>) -> v1::Receipt {
    v1::Receipt {
        status: St::Rejected as i32,
        device_id: device_id.to_string(),
        sequence,
        reason: reason as i32,
        detail: detail.into(),
        ..Default::default()
    }
}

/// Order-independent checks: size, decoding, fields. Looks up the signer's key if known, and then
/// prepares the signature for the batch check (about half of verifying it). The time window is
/// checked here against `now_ms`, but its verdict travels in [`Ready`] to the appender, which
/// applies it after the duplicate and equivocation checks (see [`Appender::decide`]); so the
/// signature of an event outside the window is prepared too, as an equivocation's is checked.
pub fn precheck(
    store: &Store,
    env: v1::Envelope,
    max_body_bytes: usize,
    time: &TimePolicy,
    now_ms: i64,
) -> PreOutcome {
    precheck_within(store, env, max_body_bytes, time, &[now_ms])
}

/// [`precheck`] with the time window checked against each of `nows` (the event's time passes if
/// it is inside the window by any of them: [`WindowClock::nows`]).
pub fn precheck_within(
    store: &Store,
    env: v1::Envelope,
    max_body_bytes: usize,
    time: &TimePolicy,
    nows: &[i64],
) -> PreOutcome {
    if env.body.len() > max_body_bytes {
        return PreOutcome::Rejected(Box::new(reject(
            Why::TooLarge,
            "",
            0,
            format!(
                "body is {} bytes; the limit is {max_body_bytes}",
                env.body.len()
            ),
        )));
    }
    // Bodies come from anyone on the network and are decoded before any signature is checked:
    // a decoder bug must cost that envelope a refusal, never the stream (or a worker) a panic.
    let decoded = std::panic::catch_unwind(|| Event::decode(&env.body)).unwrap_or_else(|_| {
        tracing::error!("decoding an event body panicked (a bug): the envelope is refused");
        Err(BodyError::Malformed {
            field: "body".into(),
            problem: "cannot be decoded (the decoder failed; see ledgerd's log)".into(),
        })
    });
    let event = match decoded {
        Ok(e) => e,
        Err(BodyError::BadKey(k)) => {
            // Decode the header for the receipt; the body decoded far enough to know the key is bad.
            let b = v1::EventBody::decode(env.body.as_slice()).unwrap_or_default();
            return PreOutcome::Rejected(Box::new(reject(
                Why::RegistrationRefused,
                &b.device_id,
                b.sequence,
                format!("device_registered.public_key: {k}"),
            )));
        }
        Err(e) => {
            let b = v1::EventBody::decode(env.body.as_slice()).unwrap_or_default();
            return PreOutcome::Rejected(Box::new(reject(
                Why::Malformed,
                &b.device_id,
                b.sequence,
                e.to_string(),
            )));
        }
    };
    let sig = match Signature::from_slice(&env.signature) {
        Ok(s) => s,
        Err(_) => {
            return PreOutcome::Rejected(Box::new(reject(
                Why::BadSignature,
                &event.device_id,
                event.sequence,
                format!("signature must be 64 bytes, got {}", env.signature.len()),
            )));
        }
    };
    let occurred = event.occurred_at.timestamp_millis();
    let mut time_error = None;
    for now in nows {
        match time.check(occurred, *now) {
            Ok(()) => {
                time_error = None;
                break;
            }
            Err(e) => {
                time_error.get_or_insert(e);
            }
        }
    }
    let key = store
        .keys
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&event.device_id)
        .copied();
    let prepared = key.and_then(|k| PreparedSignature::new(&k, EVENT_DOMAIN, &env.body, &sig));
    let sig_valid = match (&key, &prepared) {
        (Some(_), None) => Some(false),
        _ => None,
    };
    PreOutcome::Ready(Box::new(Ready {
        body: env.body,
        signature: env.signature,
        sig,
        event,
        key,
        prepared,
        sig_valid,
        time_error,
        untrusted: false,
    }))
}

/// Batch-verify the prepared signatures of a group (every prechecked envelope whose signer key
/// was known): the untrusted ones ([`PreOutcome::mark_untrusted`]) in a batch of their own.
pub fn verify_prechecked(items: &mut [PreOutcome]) {
    verify_prechecked_with(items, verify_prepared)
}

/// [`verify_prechecked`] with `verify` as the batch check (a test's, to see the batches).
pub(crate) fn verify_prechecked_with(
    items: &mut [PreOutcome],
    mut verify: impl FnMut(&[Option<PreparedSignature>]) -> Vec<bool>,
) {
    for untrusted in [false, true] {
        let mut prepared = Vec::with_capacity(items.len());
        let mut at = Vec::with_capacity(items.len());
        for (i, it) in items.iter_mut().enumerate() {
            if let PreOutcome::Ready(r) = it
                && r.untrusted == untrusted
                && let Some(p) = r.prepared.take()
            {
                prepared.push(Some(p));
                at.push(i);
            }
        }
        if prepared.is_empty() {
            continue;
        }
        for (ok, i) in verify(&prepared).into_iter().zip(at) {
            if let PreOutcome::Ready(r) = &mut items[i] {
                r.sig_valid = Some(ok);
            }
        }
    }
}

/// Head after an apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Applied {
    pub head_index: u64,
    pub head_hash: Hash32,
    /// Entries appended by this apply.
    pub appended: u64,
}

/// The monotonic clock, in ms from any fixed point (injected by tests).
pub type MonotonicMs = Box<dyn Fn() -> u64 + Send>;

/// The monotonic clock of this process (`std::time::Instant`), ms since its first reading.
pub fn monotonic_ms() -> MonotonicMs {
    let start = std::time::Instant::now();
    Box::new(move || start.elapsed().as_millis() as u64)
}

/// The appender's watch on the wall clock ([`Appender::watch_clock`]).
struct ClockWatch {
    threshold_ms: u64,
    mono: MonotonicMs,
    /// The monotonic reading when the last received time was stamped (none since the start).
    last_mono: Option<u64>,
    /// Steps found, shared with whoever reports them (a metric).
    steps: Arc<std::sync::atomic::AtomicU64>,
}

/// The ledger's received-time clock. Received times come from the wall clock; between two
/// stamps they do not go back (a small step back holds them where they were), unless the wall
/// clock moved away from the monotonic clock by more than the watch's threshold: that is a step
/// of the wall clock (a forward one, or the correction of one, or a step back), recorded in the
/// chain as a [`v1::ClockStep`], after which the stamps follow the wall clock again, wherever
/// it went. Without a watch (tests, tools), received times only never decrease.
struct ReceivedClock {
    last_ms: i64,
    watch: Option<ClockWatch>,
}

impl ReceivedClock {
    /// The received time for a stamp at wall-clock time `wall_ms`, and the step to record
    /// first, if the wall clock stepped.
    fn tick(&mut self, wall_ms: i64) -> (i64, Option<v1::ClockStep>) {
        let last = self.last_ms;
        let Some(w) = &mut self.watch else {
            self.last_ms = wall_ms.max(last);
            return (self.last_ms, None);
        };
        let mono = (w.mono)();
        let threshold = w.threshold_ms;
        let step = match w.last_mono {
            _ if last == i64::MIN => None,
            Some(m) => {
                let elapsed = mono.saturating_sub(m);
                let moved = i128::from(wall_ms) - i128::from(last) - i128::from(elapsed);
                (moved.unsigned_abs() > u128::from(threshold)).then_some(v1::ClockStep {
                    before_ms: last,
                    after_ms: wall_ms,
                    monotonic_elapsed_ms: elapsed,
                    threshold_ms: threshold,
                    across_restart: false,
                })
            }
            // No monotonic reference to the last entry (stamped before this process started):
            // only a wall clock well behind it is known to be a step.
            None => (i128::from(wall_ms) < i128::from(last) - i128::from(threshold)).then_some(
                v1::ClockStep {
                    before_ms: last,
                    after_ms: wall_ms,
                    monotonic_elapsed_ms: 0,
                    threshold_ms: threshold,
                    across_restart: true,
                },
            ),
        };
        w.last_mono = Some(mono);
        self.last_ms = if step.is_some() {
            wall_ms
        } else {
            wall_ms.max(last)
        };
        (self.last_ms, step)
    }
}

/// The times an event's `occurred_at` is checked against ([`precheck_within`]): the wall clock,
/// and the ledger's time as it was when this process started (the later of the wall clock and
/// the chain's last received time) carried on by the monotonic clock. The two agree unless the
/// wall clock stepped, or had stepped before the start; then which one is right is not known,
/// and an event inside the window by either is accepted, so that a step of the ledger's clock
/// (a day back, a year ahead) does not make it refuse every device whose clock is right.
pub struct WindowClock {
    base_ms: i64,
    start: std::time::Instant,
}

impl WindowClock {
    /// `last_received_at_ms`: the chain's last received time; `wall_ms`: the wall clock now.
    pub fn new(last_received_at_ms: i64, wall_ms: i64) -> WindowClock {
        WindowClock {
            base_ms: wall_ms.max(last_received_at_ms),
            start: std::time::Instant::now(),
        }
    }

    /// The reference times for a check at wall-clock time `wall_ms`.
    pub fn nows(&self, wall_ms: i64) -> [i64; 2] {
        let carried = self
            .base_ms
            .saturating_add(self.start.elapsed().as_millis() as i64);
        [wall_ms, carried]
    }
}

/// The key of the index of the last step of the clock back in time (u64be), written with the
/// group holding it: a checkpoint may be dated before the previous one only if such a step lies
/// between them ([`Store::checkpoint_may_go_back`]).
pub(crate) const K_CLOCK_BACK: &[u8] = b"@clock-back";

impl Store {
    /// Whether the chain holds a step of the clock back in time after entry `after` (and at or
    /// before `upto`): then a checkpoint of `upto` may be dated before the one of `after`.
    pub(crate) fn checkpoint_may_go_back(&self, after: u64, upto: u64) -> bool {
        match self.tree.get(K_CLOCK_BACK) {
            Ok(Some(v)) => u64_of(&v).is_some_and(|i| after < i && i <= upto),
            _ => false,
        }
    }
}

/// The writer's state: head, received-time clock, and every signer.
pub struct Appender {
    store: Arc<Store>,
    head: Option<(u64, Hash32)>,
    clock: ReceivedClock,
    signers: HashMap<String, Signer>,
    /// Each configured pool's members (`G` records).
    pools: HashMap<String, PoolMembers>,
    /// The ledger key's rotations ([`K_LEDGER_KEYS`]).
    rotations: Vec<(u64, VerifyingKey)>,
    /// The most bytes a group's undo record may take: [`UNDO_MAX`]; tests lower it, so that a
    /// group is split after a few envelopes instead of thousands.
    pub(crate) undo_max: usize,
    /// The right edge of the Merkle tree of the entries appended (`crate::tree`).
    edge: crate::tree::Edge,
    /// Sign each group's head and put it in its ACCEPTED receipts ([`Appender::sign_receipts`]).
    sign_receipts: bool,
    /// The leaf hashes committed by the current [`Appender::apply`] (when signing receipts).
    group_leaves: Vec<ledger_core::merkle::TreeHash>,
    /// The tree's frontier, for the root of each signed group head (when signing receipts):
    /// O(log n) hashes a root instead of the edge's up to 255 a level.
    frontier: ledger_core::merkle::Frontier,
    /// Test record: (first index, undo record length) of every group committed.
    #[cfg(test)]
    pub(crate) undo_written: Vec<(u64, usize)>,
}

/// An entry written in the current group, not yet visible in sled.
struct Pending {
    entries: Vec<v1::ChainEntry>,
    /// Per device: every sequence number accepted in this group (first sequence, entry indices
    /// as u64be). A device's accepted sequences are consecutive (only `last + 1` is accepted),
    /// so one run holds all of them, however many: [`Appender::stored`] finds any sequence
    /// appended earlier in the group here, before the group is in sled. [`Appender::commit`]
    /// cuts it into `S` records of at most [`SEQ_RUN_MAX`] sequences (one per device per group
    /// unless the group holds more of the device's events than that).
    runs: HashMap<String, (u64, Vec<u8>)>,
    /// Derived records to write with the group, in order (a later write of a key wins).
    derived: Vec<(Vec<u8>, Vec<u8>)>,
    dirty: HashSet<String>,
    findings: Vec<(Vec<u8>, u64)>,
    /// The length of the undo record the group's commit would write now (every sequence run,
    /// device record, finding key and `@derived` it names, with their values before the group):
    /// kept at most [`UNDO_MAX`] (`Appender::undo_max`) by [`Appender::apply`].
    undo_bytes: usize,
}

impl Appender {
    pub(crate) fn new_empty(store: Arc<Store>) -> Appender {
        Appender {
            store,
            head: None,
            clock: ReceivedClock {
                last_ms: i64::MIN,
                watch: None,
            },
            signers: HashMap::new(),
            pools: HashMap::new(),
            rotations: Vec::new(),
            undo_max: UNDO_MAX,
            edge: crate::tree::Edge::default(),
            sign_receipts: false,
            group_leaves: Vec::new(),
            frontier: Default::default(),
            #[cfg(test)]
            undo_written: Vec::new(),
        }
    }

    pub(crate) fn load(store: Arc<Store>) -> Result<Appender, StoreError> {
        let head = store.head()?;
        let last_received_at_ms = match head {
            Some((i, _)) => store
                .entry(i)?
                .map(|e| e.received_at_ms)
                .unwrap_or(i64::MIN),
            None => i64::MIN,
        };
        let mut signers = HashMap::new();
        for s in store.signers()? {
            signers.insert(s.id.clone(), s);
        }
        {
            let mut keys = store.keys.write().unwrap_or_else(|e| e.into_inner());
            for s in signers.values() {
                keys.insert(s.id.clone(), s.key);
            }
        }
        let pools = store.pools()?;
        let rotations = match &head {
            Some(_) => store.ledger_keys()?.split_off(1),
            None => Vec::new(),
        };
        let edge = store.load_tree()?;
        store.publish_edge(&edge);
        Ok(Appender {
            store,
            head,
            clock: ReceivedClock {
                last_ms: last_received_at_ms,
                watch: None,
            },
            signers,
            pools,
            rotations,
            undo_max: UNDO_MAX,
            edge,
            sign_receipts: false,
            group_leaves: Vec::new(),
            frontier: Default::default(),
            #[cfg(test)]
            undo_written: Vec::new(),
        })
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Index and hash of the last applied entry (durable only after the next sync).
    pub fn head(&self) -> Option<(u64, Hash32)> {
        self.head
    }

    fn next(&self) -> (u64, Hash32) {
        match self.head {
            Some((i, h)) => (i + 1, h),
            None => (0, GENESIS_PREV_HASH),
        }
    }

    fn push(
        &mut self,
        p: &mut Pending,
        received_at_ms: i64,
        kind: RecordKind,
        body: Vec<u8>,
        signature: Vec<u8>,
    ) -> (u64, Hash32) {
        let (index, prev) = self.next();
        let e = make_entry(&prev, index, received_at_ms, kind, body, signature);
        let hash: Hash32 = e.entry_hash.as_slice().try_into().unwrap_or_default();
        p.entries.push(e);
        self.head = Some((index, hash));
        (index, hash)
    }

    fn ledger_record(
        &mut self,
        p: &mut Pending,
        now_ms: i64,
        record: Record,
    ) -> Result<(u64, Hash32), StoreError> {
        let key = self.store.signing_key()?;
        let (body, sig) = try_sign_ledger_record(key, now_ms, record)?;
        Ok(self.push(p, now_ms, RecordKind::Ledger, body, sig))
    }

    fn begin(&self) -> Pending {
        Pending {
            entries: Vec::new(),
            runs: HashMap::new(),
            derived: Vec::new(),
            dirty: HashSet::new(),
            findings: Vec::new(),
            undo_bytes: UNDO_HEADER + undo_item_len(K_DERIVED.len(), Some(8)),
        }
    }

    fn commit(&mut self, mut p: Pending) -> Result<(), StoreError> {
        let (Some(first), Some(head)) = (p.entries.first().map(|e| e.index), self.head) else {
            return Ok(());
        };
        let chunks = crate::store::encode_chunks(&p.entries);
        // The group's leaves, from the bytes stored; the tiles they complete are written with
        // the group (its undo record removes them if a crash cuts it short).
        let mut leaves = Vec::with_capacity(p.entries.len());
        for (first, chunk) in &chunks {
            leaves.extend(crate::store::leaf_hashes_of(*first, chunk)?);
        }
        if self.sign_receipts {
            self.group_leaves.extend_from_slice(&leaves);
            for l in &leaves {
                self.frontier.push(*l);
            }
        }
        for (k, v) in self.edge.extend(&leaves) {
            p.undo_bytes += undo_item_len(k.len(), None);
            p.derived.push((k, v));
        }
        for (dev, (first, idx)) in p.runs.drain() {
            if idx.len() / 8 <= SEQ_RUN_MAX {
                p.derived.push((seq_key(&dev, first), idx));
            } else {
                // Only with groups larger than SEQ_RUN_MAX (`ingest.max_batch` above its default).
                for (k, part) in idx.chunks(SEQ_RUN_MAX * 8).enumerate() {
                    let at = first + (k * SEQ_RUN_MAX) as u64;
                    p.derived.push((seq_key(&dev, at), part.to_vec()));
                }
            }
        }
        for id in &p.dirty {
            if let Some(s) = self.signers.get(id) {
                p.derived
                    .push((device_key(id), s.to_proto().encode_to_vec()));
            }
        }
        p.write(K_DERIVED.to_vec(), head.0.to_be_bytes().to_vec());
        let undo_len =
            self.store
                .commit_group(first, chunks, std::mem::take(&mut p.derived), head)?;
        debug_assert!(
            undo_len <= p.undo_bytes,
            "undo record of {undo_len} bytes, counted {}",
            p.undo_bytes
        );
        self.store.publish_edge(&self.edge);
        #[cfg(test)]
        self.undo_written.push((first, undo_len));
        let mut keys = self.store.keys.write().unwrap_or_else(|e| e.into_inner());
        for id in &p.dirty {
            if let Some(s) = self.signers.get(id) {
                keys.insert(id.clone(), s.key);
            }
        }
        Ok(())
    }

    /// Watch the wall clock against `mono` from now on: a step of more than `threshold_ms` is
    /// logged, counted in the returned counter and recorded in the chain ([`ReceivedClock`]).
    pub fn watch_clock(
        &mut self,
        threshold_ms: u64,
        mono: MonotonicMs,
        steps: Arc<std::sync::atomic::AtomicU64>,
    ) {
        self.clock.watch = Some(ClockWatch {
            threshold_ms,
            mono,
            last_mono: None,
            steps,
        });
    }

    /// The last received time stamped (`i64::MIN` before the genesis).
    pub fn last_received_at_ms(&self) -> i64 {
        self.clock.last_ms
    }

    /// The received time for the entries of a group started at wall-clock time `now_ms`; if the
    /// wall clock stepped, the step is recorded first ([`v1::ClockStep`]).
    fn stamp(&mut self, p: &mut Pending, now_ms: i64) -> Result<i64, StoreError> {
        let (t, step) = self.clock.tick(now_ms);
        if let Some(step) = step {
            let back = step.after_ms < step.before_ms;
            tracing::warn!(
                before_ms = step.before_ms,
                after_ms = step.after_ms,
                monotonic_elapsed_ms = step.monotonic_elapsed_ms,
                across_restart = step.across_restart,
                "the wall clock stepped by {} ms against the monotonic clock; recorded in the chain, received times follow the wall clock from here",
                step.after_ms - step.before_ms - step.monotonic_elapsed_ms as i64
            );
            if let Some(w) = &self.clock.watch {
                w.steps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            let (index, _) = self.ledger_record(p, t, Record::ClockStep(step))?;
            if back {
                let before = self.store.tree.get(K_CLOCK_BACK)?.map(|v| v.len());
                p.undo_bytes += undo_item_len(K_CLOCK_BACK.len(), before);
                p.write(K_CLOCK_BACK.to_vec(), index.to_be_bytes().to_vec());
            }
        }
        Ok(t)
    }

    pub(crate) fn append_genesis(&mut self, ledger_id: &str) -> Result<(), StoreError> {
        let key = self.store.signing_key()?;
        let record = Record::Genesis(v1::LedgerGenesis {
            ledger_id: ledger_id.to_string(),
            ledger_public_key: key.public_key().as_bytes().to_vec(),
        });
        let mut p = self.begin();
        let now = self.stamp(&mut p, now_ms())?;
        self.ledger_record(&mut p, now, record)?;
        self.commit(p)?;
        self.store.sync()
    }

    /// Record the configured principals in the chain if they differ from what the chain says.
    pub(crate) fn declare_principals(
        &mut self,
        principals: &[crate::PrincipalConfig],
    ) -> Result<(), StoreError> {
        let mut current: Vec<(String, ledger_core::SignerRole, [u8; 32])> = self
            .signers
            .values()
            .filter(|s| s.role.is_principal() && s.revoked_at_index.is_none())
            .map(|s| (s.id.clone(), s.role, s.key.to_bytes()))
            .collect();
        let mut wanted: Vec<_> = principals
            .iter()
            .map(|p| (p.id.clone(), p.role, p.key.to_bytes()))
            .collect();
        current.sort();
        wanted.sort();
        if current == wanted {
            return Ok(());
        }
        for p in principals {
            if let Some(s) = self.signers.get(&p.id)
                && !s.role.is_principal()
            {
                return Err(StoreError::Refused(format!(
                    "configured principal {} has the id of a registered device",
                    p.id
                )));
            }
        }
        let mut p = self.begin();
        let now = self.stamp(&mut p, now_ms())?;
        let record = Record::PrincipalsDeclared(v1::PrincipalsDeclared {
            principals: principals
                .iter()
                .map(|x| v1::Principal {
                    id: x.id.clone(),
                    role: match x.role {
                        ledger_core::SignerRole::Regulator => v1::PrincipalRole::Regulator,
                        _ => v1::PrincipalRole::Operator,
                    } as i32,
                    public_key: x.key.as_bytes().to_vec(),
                })
                .collect(),
        });
        let (index, _) = self.ledger_record(&mut p, now, record)?;
        let declared: Vec<&str> = principals.iter().map(|x| x.id.as_str()).collect();
        for x in principals {
            let s = self
                .signers
                .entry(x.id.clone())
                .or_insert_with(|| Signer::principal(&x.id, x.role, x.key, index));
            s.key = x.key;
            s.role = x.role;
            s.revoked_at_index = None;
            p.mark_dirty(&self.store, x.id.clone())?;
        }
        for s in self.signers.values_mut() {
            if s.role.is_principal()
                && s.revoked_at_index.is_none()
                && !declared.contains(&s.id.as_str())
            {
                s.revoked_at_index = Some(index);
                p.mark_dirty(&self.store, s.id.clone())?;
            }
        }
        tracing::info!(
            index,
            count = principals.len(),
            "principals declared in the chain"
        );
        self.commit(p)?;
        self.store.sync()
    }

    /// Rotate the ledger's key to `new`: a `LedgerKeyRotated` record signed by the key in force,
    /// written and synced with the key in force as derived state ([`K_LEDGER_KEYS`]). From then
    /// on this process's signer (the old key) signs nothing: the ledger is restarted with the new
    /// key. Returns the record's index.
    pub fn rotate_ledger_key(&mut self, new: VerifyingKey) -> Result<u64, StoreError> {
        let old = self.store.signing_key()?.public_key();
        if new == old {
            return Err(StoreError::Refused(format!(
                "the new ledger key {} is the key in force",
                hex::encode(new.as_bytes())
            )));
        }
        let mut p = self.begin();
        let now = self.stamp(&mut p, now_ms())?;
        let (index, _) = self.ledger_record(
            &mut p,
            now,
            Record::LedgerKeyRotated(v1::LedgerKeyRotated {
                new_public_key: new.as_bytes().to_vec(),
            }),
        )?;
        self.note_rotation(&mut p, index, new)?;
        self.commit(p)?;
        // From the record on, whether or not the sync below succeeds.
        self.store.set_in_force(new);
        self.store.sync()?;
        tracing::warn!(
            index,
            old = %hex::encode(old.as_bytes()),
            new = %hex::encode(new.as_bytes()),
            "the ledger's key was rotated"
        );
        Ok(index)
    }

    /// The rotation at `index` to `key` is written with the group.
    fn note_rotation(
        &mut self,
        p: &mut Pending,
        index: u64,
        key: VerifyingKey,
    ) -> Result<(), StoreError> {
        self.rotations.push((index, key));
        let before = self.store.tree.get(K_LEDGER_KEYS)?.map(|v| v.len());
        p.undo_bytes += undo_item_len(K_LEDGER_KEYS.len(), before);
        p.write(K_LEDGER_KEYS.to_vec(), rotations_value(&self.rotations));
        Ok(())
    }

    /// Decide and write a group of prechecked envelopes, in order. Returns one receipt per item
    /// (position not set) and the new head. Nothing is durable until [`Store::sync`].
    ///
    /// The group is written as one commit ([`crate::commit`]) unless its undo record would
    /// outgrow [`UNDO_MAX`]: then it is closed before the envelope that could take it past, and
    /// the rest is written as another (and so on). Each is whole or undone after a crash; none
    /// is acknowledged before the sync after this call, so a crash between them loses nothing
    /// acknowledged (what the first wrote is then a duplicate to the devices that resend).
    pub fn apply(
        &mut self,
        items: Vec<PreOutcome>,
        now_ms: i64,
    ) -> Result<(Vec<v1::Receipt>, Applied), StoreError> {
        let group_first = self.head.map_or(0, |(i, _)| i + 1);
        self.group_leaves.clear();
        let mut p = self.begin();
        let received_at = self.stamp(&mut p, now_ms)?;
        let mut receipts = Vec::with_capacity(items.len());
        let mut appended = 0u64;
        for it in items {
            let r = match it {
                PreOutcome::Rejected(r) => *r,
                PreOutcome::Ready(r) => {
                    if !p.entries.is_empty()
                        && p.undo_bytes + self.undo_most(&p, &r)? > self.undo_max
                    {
                        let full = std::mem::replace(&mut p, self.begin());
                        appended += full.entries.len() as u64;
                        self.commit(full)?;
                    }
                    self.decide(&mut p, *r, received_at)?
                }
            };
            receipts.push(r);
        }
        appended += p.entries.len() as u64;
        self.commit(p)?;
        if self.sign_receipts {
            self.sign_group(group_first, now_ms, &mut receipts)?;
        }
        let (head_index, head_hash) = self.head.unwrap_or((0, GENESIS_PREV_HASH));
        Ok((
            receipts,
            Applied {
                head_index,
                head_hash,
                appended,
            },
        ))
    }

    /// Append one record of the ledger's own (signed by the ledger key) as a group of its own,
    /// for a service that records something on a principal's request (a finding review). Like
    /// [`Appender::apply`], it is durable only after the store's next sync; the receipt names
    /// the entry (signed, when receipts are).
    pub fn append_record(
        &mut self,
        record: Record,
        now_ms: i64,
    ) -> Result<(v1::Receipt, Applied), StoreError> {
        let group_first = self.head.map_or(0, |(i, _)| i + 1);
        self.group_leaves.clear();
        let mut p = self.begin();
        let received_at = self.stamp(&mut p, now_ms)?;
        let (index, hash) = self.ledger_record(&mut p, received_at, record)?;
        let appended = p.entries.len() as u64;
        self.commit(p)?;
        let mut receipts = [v1::Receipt {
            status: St::Accepted as i32,
            index,
            entry_hash: hash.to_vec(),
            received_at_ms: received_at,
            ..Default::default()
        }];
        if self.sign_receipts {
            self.sign_group(group_first, now_ms, &mut receipts)?;
        }
        let [receipt] = receipts;
        Ok((
            receipt,
            Applied {
                head_index: index,
                head_hash: hash,
                appended,
            },
        ))
    }

    /// Sign receipts from now on (`ingest.signed_receipts`): each group's head is signed once
    /// and its ACCEPTED receipts carry it with their entry's path ([`ledger_core::receipt`]).
    pub fn sign_receipts(&mut self, on: bool) {
        if on && !self.sign_receipts {
            self.frontier = self.edge.frontier();
        }
        self.sign_receipts = on;
    }

    /// Sign the head of the entries `first..` this apply committed, and give each ACCEPTED
    /// receipt the head and its entry's path in the group's tree.
    fn sign_group(
        &mut self,
        first: u64,
        now_ms: i64,
        receipts: &mut [v1::Receipt],
    ) -> Result<(), StoreError> {
        let leaves = std::mem::take(&mut self.group_leaves);
        let accepted = |r: &v1::Receipt| r.status == St::Accepted as i32;
        if leaves.is_empty() || !receipts.iter().any(accepted) {
            return Ok(());
        }
        let size = self.edge.size;
        if size != first + leaves.len() as u64 || self.frontier.size() != size {
            // Not reachable: every entry committed goes through `commit`, which feeds both.
            debug_assert!(false, "group {first}+{} vs tree {size}", leaves.len());
            tracing::error!(
                first,
                size,
                "receipts of this group are left unsigned: the group's leaves do not end the tree"
            );
            return Ok(());
        }
        let key = self.store.signing_key()?;
        let tree = ledger_core::merkle::LevelTree::new(leaves);
        let head = ledger_core::receipt::sign_group_head(
            key,
            first,
            size,
            &self.frontier.root(),
            &tree.root(),
            now_ms,
        )?;
        // Every path in one buffer, each receipt's a slice of it; the head's bytes shared:
        // reference counts, not copies.
        let mut paths = Vec::new();
        let mut ends = Vec::with_capacity(receipts.len());
        for r in receipts.iter().filter(|r| accepted(r)) {
            tree.write_path(r.index - first, &mut paths);
            ends.push(paths.len());
        }
        let paths = prost::bytes::Bytes::from(paths);
        let mut start = 0;
        for (r, end) in receipts.iter_mut().filter(|r| accepted(r)).zip(ends) {
            r.group_path = paths.slice(start..end);
            start = end;
            r.group = Some(head.clone());
        }
        Ok(())
    }

    /// The most that deciding `r` can add to the group's undo record: the record of a new
    /// sequence run of its device or that of a security finding about it (keys of one length;
    /// never both), and the record of the device a registry event names, with its value now.
    fn undo_most(&self, p: &Pending, r: &Ready) -> Result<usize, StoreError> {
        let mut most = undo_item_len(seq_key_len(&r.event.device_id), None);
        let named = match &r.event.payload {
            Payload::DeviceRegistered(reg) => Some(reg.device_id.as_str()),
            Payload::DeviceRevoked { device_id, .. }
            | Payload::DeviceKeyRotated { device_id, .. } => Some(device_id.as_str()),
            _ => None,
        };
        if let Some(id) = named
            && !p.dirty.contains(id)
        {
            let key = device_key(id);
            let before = self.store.tree.get(&key)?.map(|v| v.len());
            most += undo_item_len(key.len(), before);
        }
        if let Some(pool) = pool_configured(&r.event.payload) {
            let key = pool_key(&pool.pool_id);
            let before = self.store.tree.get(&key)?.map(|v| v.len());
            most += undo_item_len(key.len(), before);
        }
        Ok(most)
    }

    /// The stored entry of `device`'s sequence `seq`: from this group's run, which holds every
    /// sequence the group accepted for the device, or else from sled, which holds every earlier
    /// group's. `None` only for a sequence never accepted.
    fn stored(
        &self,
        p: &Pending,
        device: &str,
        seq: u64,
    ) -> Result<Option<v1::ChainEntry>, StoreError> {
        if let Some((first, idx)) = p.runs.get(device)
            && seq >= *first
            && ((seq - first) as usize) < idx.len() / 8
        {
            let o = (seq - first) as usize * 8;
            let index = u64_of(&idx[o..]).unwrap_or_default();
            let base = p.entries.first().map(|e| e.index).unwrap_or_default();
            return Ok(p.entries.get((index - base) as usize).cloned());
        }
        match self.store.index_of(device, seq)? {
            None => Ok(None),
            Some(index) => self.store.entry(index),
        }
    }

    /// Decide one envelope, in this order:
    ///
    /// 1. An envelope identical, body and signature, to the stored entry of its device and
    ///    sequence is a duplicate: the original receipt (index, entry hash, received time), and
    ///    nothing else is checked. The issue: "duplicate: the identical event was already stored;
    ///    the original receipt is returned (agents retry safely after a disconnect)". The stored
    ///    envelope passed every check when it was stored, so an agent resending after an outage
    ///    gets its receipt even if the event's time has since left the window, the device has
    ///    been revoked, or an operator's key or role changed.
    /// 2. A used sequence with another body, under a signature that verifies with the device's
    ///    key, by a signer authorised for that payload, is an equivocation (a security finding),
    ///    whether or not the event's time is in the window and the device has since been
    ///    revoked: it proves that the device's key signed two events with one sequence number,
    ///    only that key can make it, and recording it adds no event to the device's chain (one
    ///    finding per device and sequence, so at most one per sequence the device ever used).
    /// 3. The time window (verdict from [`precheck`]); then unknown or revoked signer, signature,
    ///    authorisation.
    /// 4. A used sequence with the same body (under another valid signature) is a duplicate.
    ///    Then gap, registry rules, append.
    fn decide(
        &mut self,
        p: &mut Pending,
        r: Ready,
        received_at: i64,
    ) -> Result<v1::Receipt, StoreError> {
        let dev_owned = r.event.device_id.clone();
        let ev = &r.event;
        let (dev, seq) = (dev_owned.as_str(), ev.sequence);
        let signer = self.signers.get(dev);
        // Looked up only for a used sequence (never on the common path, `last + 1`).
        let orig = match signer {
            Some(s) if seq <= s.last_sequence => {
                let Some(orig) = self.stored(p, dev, seq)? else {
                    return Err(StoreError::Corrupt(format!(
                        "{dev} sequence {seq} is used but its entry is not indexed"
                    )));
                };
                if orig.body == r.body && orig.signature == r.signature {
                    return Ok(duplicate(dev, seq, orig));
                }
                Some(orig)
            }
            _ => None,
        };
        // Set when the signature was checked for an equivocation, so it is not checked twice.
        let mut signature_valid = None;
        if let (Some(o), Some(s)) = (&orig, signer)
            && o.body != r.body
        {
            let valid = signature_ok(s, &r);
            signature_valid = Some(valid);
            if valid && authorize(s, &ev.payload).is_ok() {
                let orig = orig.expect("checked above");
                return self.equivocation(p, r, orig, received_at);
            }
        }
        if let Some(why) = &r.time_error {
            return Ok(reject(Why::TimeOutOfRange, dev, seq, why.clone()));
        }
        let Some(signer) = signer else {
            return Ok(reject(
                Why::UnknownDevice,
                dev,
                seq,
                format!("device {dev} is not registered"),
            ));
        };
        if let Some(at) = signer.revoked_at_index {
            return Ok(reject(
                Why::RevokedDevice,
                dev,
                seq,
                format!("device {dev} was revoked at entry {at}"),
            ));
        }
        if !signature_valid.unwrap_or_else(|| signature_ok(signer, &r)) {
            return Ok(reject(
                Why::BadSignature,
                dev,
                seq,
                format!("signature does not verify with {dev}'s registered key"),
            ));
        }
        if let Err(why) = authorize(signer, &ev.payload) {
            return Ok(reject(Why::Unauthorized, dev, seq, why));
        }
        if let Err(why) = check_pool_authority(signer, &ev.payload, |p| self.pools.get(p)) {
            return Ok(reject(Why::NotPoolMember, dev, seq, why));
        }
        let last = signer.last_sequence;
        // `orig` is set exactly when the sequence is used (`seq <= last`). Another body under a
        // valid, authorised signature was decided at step 2: here it is the same body.
        if let Some(orig) = orig {
            if orig.body == r.body {
                return Ok(duplicate(dev, seq, orig));
            }
            return self.equivocation(p, r, orig, received_at);
        }
        if seq > last + 1 {
            let mut rc = reject(
                Why::SequenceGap,
                dev,
                seq,
                format!("sequence gap: {dev} sent {seq}, expected {}", last + 1),
            );
            rc.expected_sequence = last + 1;
            return Ok(rc);
        }
        // Registry effects, checked before anything is written.
        match &ev.payload {
            Payload::DeviceRegistered(reg) => {
                if let Err(why) = check_registration(self.signers.get(&reg.device_id), reg) {
                    return Ok(reject(Why::RegistrationRefused, dev, seq, why));
                }
                // A table device is authorised for the tables it is registered for: without
                // them it could sign for every table (docs/security.md). Refused at ingest only:
                // chains written before this rule may hold such registrations, and `verify`
                // (and `signers::authorize`, which reads an empty list as "any table") accepts
                // them as they were.
                if reg.kind == ledger_core::DeviceKind::Table && reg.table_ids.is_empty() {
                    return Ok(reject(
                        Why::RegistrationRefused,
                        dev,
                        seq,
                        format!(
                            "table device {} has no table_ids: register it with the tables it reports for",
                            reg.device_id
                        ),
                    ));
                }
            }
            Payload::DeviceRevoked { device_id, .. } => {
                if let Err(why) = check_revocation(self.signers.get(device_id), device_id) {
                    return Ok(reject(Why::RegistrationRefused, dev, seq, why));
                }
            }
            Payload::DeviceKeyRotated {
                device_id,
                public_key,
                ..
            } => {
                if let Err(why) =
                    check_key_rotation(self.signers.get(device_id), device_id, public_key)
                {
                    return Ok(reject(Why::RegistrationRefused, dev, seq, why));
                }
            }
            _ => {}
        }
        let payload = r.event.payload;
        let prev_hash = self.next().1;
        let (index, hash) = self.push(p, received_at, RecordKind::Event, r.body, r.signature);
        // A new run, or a run past a multiple of SEQ_RUN_MAX, is one more record (see `commit`).
        let new_record = match p.runs.get_mut(dev) {
            Some((first, idx)) => {
                debug_assert_eq!(*first + (idx.len() / 8) as u64, seq);
                idx.extend_from_slice(&index.to_be_bytes());
                (idx.len() / 8 - 1) % SEQ_RUN_MAX == 0
            }
            None => {
                p.runs
                    .insert(dev.to_string(), (seq, index.to_be_bytes().to_vec()));
                true
            }
        };
        if new_record {
            p.undo_bytes += undo_item_len(seq_key_len(dev), None);
        }
        let dev = dev.to_string();
        // The signer's record is not rewritten for this: its sequence runs say where it is
        // (`Store::signer`).
        if let Some(s) = self.signers.get_mut(&dev) {
            s.last_sequence = seq;
            s.last_index = index;
        }
        self.registry_effects(p, payload, index)?;
        Ok(v1::Receipt {
            status: St::Accepted as i32,
            device_id: dev,
            sequence: seq,
            index,
            entry_hash: hash.to_vec(),
            received_at_ms: received_at,
            prev_hash: prev_hash.to_vec(),
            ..Default::default()
        })
    }

    fn equivocation(
        &mut self,
        p: &mut Pending,
        r: Ready,
        orig: v1::ChainEntry,
        received_at: i64,
    ) -> Result<v1::Receipt, StoreError> {
        let (dev, seq) = (r.event.device_id.clone(), r.event.sequence);
        let fkey = finding_key(&dev, seq);
        let existing = match p.batch_finding(&fkey) {
            Some(i) => Some(i),
            None => self.store.tree.get(&fkey)?.and_then(|v| u64_of(&v)),
        };
        let detail = format!(
            "equivocation: {dev} already signed a different event with sequence {seq} (entry {}); security finding recorded",
            orig.index
        );
        // The receipt names the finding's entry, with that entry's received time: a resend
        // after a crash gets the same receipt as the first time.
        let (index, hash, received_at) = match existing {
            Some(i) => {
                let e = match p.entries.iter().find(|e| e.index == i) {
                    Some(e) => e.clone(),
                    None => self.store.entry(i)?.ok_or(StoreError::CorruptEntry {
                        index: i,
                        detail: "finding missing".into(),
                    })?,
                };
                let hash = e.entry_hash.as_slice().try_into().unwrap_or_default();
                (i, hash, e.received_at_ms)
            }
            None => {
                tracing::warn!(device = %dev, seq, original = orig.index, "equivocation: recording a security finding");
                let record = Record::SecurityFinding(v1::SecurityFinding {
                    code: "equivocation".into(),
                    device_id: dev.clone(),
                    sequence: seq,
                    original_index: orig.index,
                    conflicting: Some(v1::Envelope {
                        body: r.body,
                        signature: r.signature,
                    }),
                    detail: detail.clone(),
                });
                let (i, h) = self.ledger_record(p, received_at, record)?;
                p.undo_bytes += undo_item_len(fkey.len(), None);
                p.write(fkey.clone(), i.to_be_bytes().to_vec());
                p.findings.push((fkey, i));
                (i, h, received_at)
            }
        };
        Ok(v1::Receipt {
            status: St::Equivocation as i32,
            device_id: dev,
            sequence: seq,
            index,
            entry_hash: hash.to_vec(),
            received_at_ms: received_at,
            detail,
            ..Default::default()
        })
    }
}

impl Appender {
    /// Append entries another ledger formed (a mirror copying its source, a restore from a
    /// mirror), byte for byte, with the derived records and Merkle tiles the writer makes for
    /// them, as one commit (several if the undo record would outgrow its bound; none is
    /// durable before the caller's [`Store::sync`]). The caller has verified them
    /// (`ledger_core::ChainVerifier` and their signatures): here each must only extend the
    /// head (its index next, its `prev_hash` the head's hash), or nothing is written.
    pub fn append_verbatim(&mut self, entries: Vec<v1::ChainEntry>) -> Result<Applied, StoreError> {
        // Nothing is written unless every entry extends the one before it.
        let (mut next, mut prev) = self.next();
        for e in &entries {
            if e.index != next || e.prev_hash.as_slice() != prev {
                return Err(StoreError::Refused(format!(
                    "entry {} does not extend the stored chain (next is entry {next})",
                    e.index
                )));
            }
            prev =
                e.entry_hash.as_slice().try_into().map_err(|_| {
                    StoreError::Refused(format!("entry {}: bad entry_hash", e.index))
                })?;
            next += 1;
        }
        let appended = entries.len() as u64;
        let mut p = self.begin();
        for e in entries {
            // A margin for one more entry's records (a device record is at most about 66 KiB).
            if !p.entries.is_empty() && p.undo_bytes > self.undo_max / 2 {
                let full = std::mem::replace(&mut p, self.begin());
                self.commit(full)?;
            }
            self.derive_verbatim(&mut p, &e)?;
            let hash: Hash32 = e.entry_hash.as_slice().try_into().unwrap_or_default();
            self.clock.last_ms = e.received_at_ms;
            self.head = Some((e.index, hash));
            p.entries.push(e);
        }
        self.commit(p)?;
        let (head_index, head_hash) = self.head.unwrap_or((0, GENESIS_PREV_HASH));
        Ok(Applied {
            head_index,
            head_hash,
            appended,
        })
    }

    /// What an accepted event at `index` changes of the registry and the pools, with the
    /// derived records it writes: for the writer's decisions and a mirror's verbatim copy alike.
    fn registry_effects(
        &mut self,
        p: &mut Pending,
        payload: Payload,
        index: u64,
    ) -> Result<(), StoreError> {
        match payload {
            Payload::DeviceRegistered(reg) => {
                self.signers.insert(
                    reg.device_id.clone(),
                    Signer::from_registration(&reg, index),
                );
                p.mark_dirty(&self.store, reg.device_id)?;
            }
            Payload::DeviceRevoked { device_id, .. } => {
                if let Some(s) = self.signers.get_mut(&device_id) {
                    s.revoked_at_index = Some(index);
                }
                p.mark_dirty(&self.store, device_id)?;
            }
            // The device's sequence goes on under the new key; `commit` hands the key to the
            // signature checks ahead of the appender (`Store::keys`), and until then a check
            // made with the old key is made again (`signature_ok`).
            Payload::DeviceKeyRotated {
                device_id,
                public_key,
                ..
            } => {
                if let Some(s) = self.signers.get_mut(&device_id) {
                    s.key = public_key;
                }
                p.mark_dirty(&self.store, device_id)?;
            }
            other => {
                if let Some(pool) = pool_configured(&other) {
                    let members = PoolMembers::of(pool);
                    let key = pool_key(&pool.pool_id);
                    let before = self.store.tree.get(&key)?.map(|v| v.len());
                    p.undo_bytes += undo_item_len(key.len(), before);
                    p.write(key, pool_record(&pool.pool_id, &members));
                    self.pools.insert(pool.pool_id.clone(), members);
                }
            }
        }
        Ok(())
    }

    /// The derived records of one verified entry, as [`Appender::decide`] and
    /// [`Appender::declare_principals`] make them for the entries they append.
    fn derive_verbatim(&mut self, p: &mut Pending, e: &v1::ChainEntry) -> Result<(), StoreError> {
        let corrupt = |detail: String| StoreError::CorruptEntry {
            index: e.index,
            detail,
        };
        match RecordKind::from_proto(e.kind) {
            Some(RecordKind::Event) => {
                let ev = Event::decode(&e.body).map_err(|x| corrupt(x.to_string()))?;
                let (dev, seq, index) = (ev.device_id.clone(), ev.sequence, e.index);
                let new_record = match p.runs.get_mut(&dev) {
                    Some((first, idx)) if *first + (idx.len() / 8) as u64 == seq => {
                        idx.extend_from_slice(&index.to_be_bytes());
                        (idx.len() / 8 - 1) % SEQ_RUN_MAX == 0
                    }
                    Some(_) => return Err(corrupt(format!("{dev} sequence {seq} is not next"))),
                    None => {
                        p.runs
                            .insert(dev.clone(), (seq, index.to_be_bytes().to_vec()));
                        true
                    }
                };
                if new_record {
                    p.undo_bytes += undo_item_len(seq_key_len(&dev), None);
                }
                if let Some(s) = self.signers.get_mut(&dev) {
                    s.last_sequence = seq;
                    s.last_index = index;
                }
                self.registry_effects(p, ev.payload, index)?;
            }
            Some(RecordKind::Ledger) => {
                let rec = ledger_core::record::decode_ledger_record(&e.body).map_err(corrupt)?;
                match rec.record {
                    Some(Record::PrincipalsDeclared(d)) => {
                        let mut declared = HashSet::new();
                        for x in &d.principals {
                            let s = ledger_core::signers::principal_from_proto(x, e.index)
                                .map_err(corrupt)?;
                            let t = self
                                .signers
                                .entry(s.id.clone())
                                .or_insert_with(|| s.clone());
                            t.key = s.key;
                            t.role = s.role;
                            t.revoked_at_index = None;
                            declared.insert(s.id.clone());
                            p.mark_dirty(&self.store, s.id)?;
                        }
                        let mut revoked = Vec::new();
                        for s in self.signers.values_mut() {
                            if s.role.is_principal()
                                && s.revoked_at_index.is_none()
                                && !declared.contains(&s.id)
                            {
                                s.revoked_at_index = Some(e.index);
                                revoked.push(s.id.clone());
                            }
                        }
                        for id in revoked {
                            p.mark_dirty(&self.store, id)?;
                        }
                    }
                    Some(Record::SecurityFinding(f)) => {
                        let fkey = finding_key(&f.device_id, f.sequence);
                        if p.batch_finding(&fkey).is_none()
                            && !self.store.tree.contains_key(&fkey)?
                        {
                            p.undo_bytes += undo_item_len(fkey.len(), None);
                            p.write(fkey.clone(), e.index.to_be_bytes().to_vec());
                            p.findings.push((fkey, e.index));
                        }
                    }
                    Some(Record::ClockStep(step)) if step.after_ms < step.before_ms => {
                        let before = self.store.tree.get(K_CLOCK_BACK)?.map(|v| v.len());
                        p.undo_bytes += undo_item_len(K_CLOCK_BACK.len(), before);
                        p.write(K_CLOCK_BACK.to_vec(), e.index.to_be_bytes().to_vec());
                    }
                    Some(Record::LedgerKeyRotated(r)) => {
                        let key = ledger_core::signing::parse_public_key(&r.new_public_key)
                            .map_err(|x| corrupt(format!("ledger_key_rotated: {x}")))?;
                        self.note_rotation(p, e.index, key)?;
                    }
                    _ => {}
                }
            }
            None => return Err(corrupt(format!("unknown record kind {}", e.kind))),
        }
        Ok(())
    }
}

impl Pending {
    fn write(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.derived.push((key, value));
    }

    /// The device record of `id` is written with the group; the first time, the undo record
    /// counts its key and its value before the group.
    fn mark_dirty(&mut self, store: &Store, id: String) -> Result<(), StoreError> {
        if !self.dirty.contains(&id) {
            let key = device_key(&id);
            let before = store.tree.get(&key)?.map(|v| v.len());
            self.undo_bytes += undo_item_len(key.len(), before);
            self.dirty.insert(id);
        }
        Ok(())
    }

    fn batch_finding(&self, key: &[u8]) -> Option<u64> {
        self.findings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, i)| *i)
    }
}

/// Whether `r`'s signature verifies with `signer`'s key: the batch check's verdict when it
/// checked that key, else a strict single check.
fn signature_ok(signer: &Signer, r: &Ready) -> bool {
    match (r.sig_valid, r.key) {
        (Some(v), Some(k)) if k == signer.key => v,
        _ => signer
            .key
            .verify_strict(&signed_message(EVENT_DOMAIN, &r.body), &r.sig)
            .is_ok(),
    }
}

/// The original receipt of a stored entry, for a resend of it.
fn duplicate(device_id: &str, sequence: u64, orig: v1::ChainEntry) -> v1::Receipt {
    v1::Receipt {
        status: St::Duplicate as i32,
        device_id: device_id.to_string(),
        sequence,
        index: orig.index,
        entry_hash: orig.entry_hash,
        received_at_ms: orig.received_at_ms,
        detail: "already stored; this is the original receipt".into(),
        ..Default::default()
    }
}

/// Wall-clock now in ms (the ledger's receive time).
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod clock_tests {
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

    use ed25519_dalek::SigningKey;
    use ledger_core::signing::{EVENT_DOMAIN, sign};
    use ledger_core::{ChainVerifier, SignerRole, TimePolicy};
    use v1::event_body::Payload as P;

    use super::*;
    use crate::{OpenConfig, PrincipalConfig};

    const T0: i64 = 1_800_000_000_000;
    const DAY: i64 = 86_400_000;
    const YEAR: i64 = 365 * DAY;

    /// A clock whose monotonic reading the test sets.
    fn watched(last_ms: i64, threshold_ms: u64) -> (ReceivedClock, Arc<AtomicU64>) {
        let mono = Arc::new(AtomicU64::new(0));
        let m = mono.clone();
        let clock = ReceivedClock {
            last_ms,
            watch: Some(ClockWatch {
                threshold_ms,
                mono: Box::new(move || m.load(SeqCst)),
                last_mono: None,
                steps: Default::default(),
            }),
        };
        (clock, mono)
    }

    #[test]
    fn without_a_watch_received_times_only_never_decrease() {
        let mut c = ReceivedClock {
            last_ms: T0,
            watch: None,
        };
        assert_eq!(c.tick(T0 - DAY), (T0, None));
        assert_eq!(c.tick(T0 + 5), (T0 + 5, None));
    }

    #[test]
    fn a_forward_step_and_its_correction_are_both_recorded_and_followed() {
        let (mut c, mono) = watched(T0 - 10, 1000);
        // The first tick of a process only sets the monotonic reference.
        assert_eq!(c.tick(T0), (T0, None));
        mono.store(50, SeqCst);
        assert_eq!(c.tick(T0 + 50), (T0 + 50, None));
        // The wall clock jumps a year ahead; 100 ms of monotonic time passed.
        mono.store(150, SeqCst);
        let (t, step) = c.tick(T0 + 150 + YEAR);
        assert_eq!(t, T0 + 150 + YEAR);
        let step = step.expect("a step");
        assert_eq!(
            (step.before_ms, step.after_ms, step.monotonic_elapsed_ms),
            (T0 + 50, T0 + 150 + YEAR, 100)
        );
        assert!(!step.across_restart);
        mono.store(1150, SeqCst);
        assert_eq!(c.tick(T0 + 1150 + YEAR), (T0 + 1150 + YEAR, None));
        // Corrected: received times are real again, not a year ahead.
        mono.store(2000, SeqCst);
        let (t, step) = c.tick(T0 + 2000);
        assert_eq!(t, T0 + 2000);
        let step = step.expect("the correction is a step");
        assert_eq!(
            (step.before_ms, step.after_ms),
            (T0 + 1150 + YEAR, T0 + 2000)
        );
        assert_eq!(c.tick(T0 + 2000), (T0 + 2000, None));
    }

    #[test]
    fn a_small_step_back_holds_times_and_a_large_one_is_recorded() {
        let (mut c, mono) = watched(i64::MIN, 1000);
        assert_eq!(c.tick(T0), (T0, None));
        // 900 ms back (within the threshold): held at T0, not recorded.
        mono.store(100, SeqCst);
        assert_eq!(c.tick(T0 - 800), (T0, None));
        // Exactly at the threshold: still not a step.
        mono.store(200, SeqCst);
        assert_eq!(c.tick(T0 + 200 - 1000), (T0, None));
        // Two days back.
        mono.store(300, SeqCst);
        let (t, step) = c.tick(T0 + 100 - 2 * DAY);
        assert_eq!(t, T0 + 100 - 2 * DAY);
        assert_eq!(step.unwrap().monotonic_elapsed_ms, 100);
        // Idle for an hour with both clocks: no step.
        mono.store(300 + 3_600_000, SeqCst);
        assert_eq!(
            c.tick(T0 + 100 - 2 * DAY + 3_600_000),
            (T0 + 100 - 2 * DAY + 3_600_000, None)
        );
    }

    #[test]
    fn a_step_back_across_a_restart_is_recorded_without_monotonic_time() {
        let (mut c, _mono) = watched(T0, 1000);
        let (t, step) = c.tick(T0 - 2 * DAY);
        assert_eq!(t, T0 - 2 * DAY);
        let step = step.unwrap();
        assert!(step.across_restart);
        assert_eq!((step.before_ms, step.monotonic_elapsed_ms), (T0, 0));
        // A start with the clock ahead of the chain is ordinary downtime.
        let (mut c, _mono) = watched(T0, 1000);
        assert_eq!(c.tick(T0 + DAY), (T0 + DAY, None));
    }

    fn env(key: &SigningKey, dev: &str, seq: u64, p: P) -> v1::Envelope {
        let body = v1::EventBody {
            device_id: dev.into(),
            sequence: seq,
            occurred_at_ms: T0,
            payload: Some(p),
        }
        .encode_to_vec();
        let signature = sign(key, EVENT_DOMAIN, &body).to_bytes().to_vec();
        v1::Envelope { body, signature }
    }

    /// Through the appender and the store: a year ahead and back, then two days back; every
    /// event accepted (the devices' clocks were right all along), steps recorded, checkpoints
    /// dated back with the clock, and the chain verifies.
    #[test]
    fn steps_are_recorded_in_a_chain_that_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let op = SigningKey::from_bytes(&[1; 32]);
        let table = SigningKey::from_bytes(&[2; 32]);
        let cfg = OpenConfig {
            cache_capacity_bytes: 16 << 20,
            ledger_id: "test".into(),
            principals: vec![PrincipalConfig {
                id: "op".into(),
                role: SignerRole::Operator,
                key: op.verifying_key(),
            }],
        };
        let (store, mut a) = Store::open_writer(dir.path(), &cfg).unwrap();
        let mono = Arc::new(AtomicU64::new(0));
        let m = mono.clone();
        let steps = Arc::new(AtomicU64::new(0));
        a.watch_clock(1000, Box::new(move || m.load(SeqCst)), steps.clone());
        let window = WindowClock {
            base_ms: T0,
            start: std::time::Instant::now(),
        };
        let policy = TimePolicy {
            max_past_ms: 7 * DAY,
            ..Default::default()
        };
        let mut seq = 0;
        let mut send = |a: &mut Appender, wall: i64, mono_ms: u64, p: P| {
            mono.store(mono_ms, SeqCst);
            let (key, dev) = match &p {
                P::DeviceRegistered(_) => (&op, "op"),
                _ => (&table, "t"),
            };
            if dev == "t" {
                seq += 1;
            }
            let s = if dev == "op" { 1 } else { seq };
            let pre = precheck_within(
                &store,
                env(key, dev, s, p),
                65536,
                &policy,
                &[wall, window.nows(wall)[1]],
            );
            let mut items = vec![pre];
            verify_prechecked(&mut items);
            let (r, _) = a.apply(items, wall).unwrap();
            store.sync().unwrap();
            assert_eq!(r[0].status, v1::ReceiptStatus::Accepted as i32, "{r:?}");
            r[0].received_at_ms
        };
        let bet = |n: u64| {
            P::BetPlaced(v1::BetPlaced {
                table_id: "t1".into(),
                round_id: "r1".into(),
                bet_id: format!("b{n}"),
                bet_type: "straight".into(),
                selection: vec![17],
                amount_cents: 500,
                ..Default::default()
            })
        };
        let reg = P::DeviceRegistered(v1::DeviceRegistered {
            device_id: "t".into(),
            public_key: table.verifying_key().as_bytes().to_vec(),
            kind: v1::DeviceKind::Table as i32,
            casino_id: "lisboa".into(),
            table_ids: vec!["t1".into()],
            ..Default::default()
        });
        assert_eq!(send(&mut a, T0, 0, reg), T0);
        assert_eq!(send(&mut a, T0 + 10, 10, bet(1)), T0 + 10);
        let cp = |a: &Appender, at: i64| {
            let (i, h) = a.head().unwrap();
            store.write_checkpoint(i, &h, at, "test").unwrap();
            store.latest_checkpoint().unwrap().unwrap().1.created_at_ms
        };
        assert_eq!(cp(&a, T0 + 10), T0 + 10);
        // A year ahead: the events' own time (T0) is a year in the past by the wall clock, but
        // not by the clock carried on from the start.
        assert_eq!(send(&mut a, T0 + 20 + YEAR, 20, bet(2)), T0 + 20 + YEAR);
        assert_eq!(cp(&a, T0 + 30 + YEAR), T0 + 30 + YEAR);
        assert_eq!(steps.load(SeqCst), 1);
        // Corrected.
        assert_eq!(send(&mut a, T0 + 40, 40, bet(3)), T0 + 40);
        assert_eq!(
            cp(&a, T0 + 50),
            T0 + 50,
            "the checkpoint follows the clock back"
        );
        // Two days back: ingest goes on.
        assert_eq!(
            send(&mut a, T0 + 60 - 2 * DAY, 60, bet(4)),
            T0 + 60 - 2 * DAY
        );
        assert_eq!(
            send(&mut a, T0 + 70 - 2 * DAY, 70, bet(5)),
            T0 + 70 - 2 * DAY
        );
        // No step since: a checkpoint is not dated back.
        assert_eq!(cp(&a, T0 + 80 - 2 * DAY), T0 + 80 - 2 * DAY);
        assert_eq!(cp(&a, T0 + 80 - 3 * DAY), T0 + 80 - 2 * DAY);
        assert_eq!(steps.load(SeqCst), 3);

        let mut v = ChainVerifier::new(None);
        for c in store.all_checkpoints().unwrap() {
            v.add_checkpoint(&c).unwrap();
        }
        let mut checks = Vec::new();
        for e in store.entries(0, u64::MAX) {
            checks.extend(v.check_entry(&e.unwrap()).unwrap());
        }
        let checks: Vec<_> = checks.into_iter().map(|c| c.check).collect();
        assert!(ledger_core::verify_many(&checks).iter().all(|&ok| ok));
        let s = v.finish().unwrap();
        assert_eq!((s.clock_steps, s.events), (3, 6));
        // The derived state rebuilt from the chain (a verifier's pass) accepts it too.
        store.rebuild_derived().unwrap();
    }

    /// Without the second reference, the same event a year in the past is refused: the test
    /// above depends on it.
    #[test]
    fn the_window_takes_either_reference() {
        let w = WindowClock {
            base_ms: T0,
            start: std::time::Instant::now(),
        };
        let [wall, carried] = w.nows(T0 + YEAR);
        assert_eq!(wall, T0 + YEAR);
        assert!((T0..T0 + DAY).contains(&carried));
        let policy = TimePolicy {
            max_past_ms: 7 * DAY,
            ..Default::default()
        };
        assert!(policy.check(T0, wall).is_err());
        assert!(policy.check(T0, carried).is_ok());
    }
}
