//! Playing a simulated casino session ([`casino_sim`]) against a ledger: every device gets a key,
//! the operator registers them, every event is numbered and signed by its device (before anything
//! is streamed, on every core), and the events go out as concurrent agents, one per device group,
//! each resending from its last receipt after a failure ([`ledger_agent::submit_all`]).
//!
//! ## Why groups, and in which order
//!
//! The chain's order is the order the ledger received the events in, and the audit replays that
//! order. Events whose meaning depends on each other's order must therefore travel on one stream:
//! * a **table** device's events only depend on its own (one group per table);
//! * the **floor** (every machine, plus the operator's and the inspectorate's events) shares pools
//!   across machines and casinos: a jackpot pays the captive value the other machines' games made,
//!   so the whole floor is one group, in the session's time order;
//! * the **opening** (every event up to the last table, model or pool configuration, in time order)
//!   goes first, alone: a table's jackpot pool is configured by the operator (floor group) before
//!   that table's first round.
//!
//! Each signer's events stay in its own order, so sequence numbers arrive without gaps.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use casino_sim::{DeviceSpec, Session, SimEvent};
use ed25519_dalek::SigningKey;
use ledger_core::DeviceKind;
use ledger_core::proto::{self as v1, event_body::Payload as P};
use ledger_core::signing::{EVENT_DOMAIN, sign};
use prost::Message;

use ledger_agent::{AgentError, ClientOptions, submit_shared, submit_shared_with};

/// A key derived from a seed and a name, so that a demo or a test is the same, signature for
/// signature, every time it runs with the same seed. **Never** a way to make real device keys.
pub fn derived_key(seed: u64, name: &str) -> SigningKey {
    let mut h = blake3::Hasher::new_derive_key("casino-ledger 2026-11 simulated device key v1");
    h.update(&seed.to_be_bytes());
    h.update(name.as_bytes());
    SigningKey::from_bytes(h.finalize().as_bytes())
}

/// Who signs what: the devices' keys and the principals' (operator, inspectorate).
#[derive(Clone)]
pub struct Keys {
    pub by_signer: HashMap<String, SigningKey>,
    pub operator_id: String,
}

impl Keys {
    /// Derive a key for every device of `devices` from `seed`; the principals' keys are given
    /// (they must be those in the ledger's configuration).
    pub fn derive(
        seed: u64,
        devices: &[DeviceSpec],
        principals: &[(&str, &SigningKey)],
        operator_id: &str,
    ) -> Keys {
        let mut by_signer: HashMap<String, SigningKey> = devices
            .iter()
            .map(|d| (d.device_id.clone(), derived_key(seed, &d.device_id)))
            .collect();
        for (id, k) in principals {
            by_signer.insert((*id).to_string(), (*k).clone());
        }
        Keys {
            by_signer,
            operator_id: operator_id.to_string(),
        }
    }

    pub fn get(&self, signer: &str) -> Option<&SigningKey> {
        self.by_signer.get(signer)
    }
}

/// Envelopes packed in one buffer: each one's body, then its signature, one after the other,
/// and where each of the two ends. A `Vec<v1::Envelope>` costs two allocations and a 48-byte
/// struct an envelope besides the bytes: for the demo's 1.6 M events, about 0.15 GB more.
/// Streaming makes each envelope as it sends it ([`ledger_agent::Envelopes`]), as it would
/// clone it from a `Vec`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packed {
    data: Vec<u8>,
    /// The end of each envelope's body and of its signature in `data`.
    ends: Vec<(usize, usize)>,
}

impl Packed {
    pub fn push(&mut self, e: &v1::Envelope) {
        self.data.extend_from_slice(&e.body);
        let body_end = self.data.len();
        self.data.extend_from_slice(&e.signature);
        self.ends.push((body_end, self.data.len()));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th envelope, if there is one.
    pub fn get(&self, i: usize) -> Option<v1::Envelope> {
        let &(body_end, end) = self.ends.get(i)?;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1].1,
        };
        Some(v1::Envelope {
            body: self.data[start..body_end].to_vec(),
            signature: self.data[body_end..end].to_vec(),
        })
    }

    pub fn last(&self) -> Option<v1::Envelope> {
        self.get(self.len().checked_sub(1)?)
    }

    pub fn iter(&self) -> impl Iterator<Item = v1::Envelope> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    pub fn to_vec(&self) -> Vec<v1::Envelope> {
        self.iter().collect()
    }

    /// Let go of the room grown for pushes.
    pub fn shrink_to_fit(&mut self) {
        self.data.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

impl FromIterator<v1::Envelope> for Packed {
    fn from_iter<I: IntoIterator<Item = v1::Envelope>>(iter: I) -> Packed {
        let mut p = Packed::default();
        for e in iter {
            p.push(&e);
        }
        p.shrink_to_fit();
        p
    }
}

impl ledger_agent::Envelopes for Packed {
    fn count(&self) -> usize {
        self.len()
    }
    fn envelope(&self, i: usize) -> v1::Envelope {
        self.get(i).unwrap_or_default()
    }
}

/// Envelopes that travel on one stream, in order.
#[derive(Clone, Debug, Default)]
pub struct Group {
    /// A table device's id, `floor`, or `opening`.
    pub name: String,
    /// Shared, so that streaming (and resending) never copies them.
    pub envelopes: Arc<Packed>,
    /// Positions (in `envelopes`) of round settlements.
    pub settlements: Vec<usize>,
}

/// A session, signed and grouped, ready to stream.
#[derive(Clone, Debug, Default)]
pub struct SignedSession {
    /// Every device's registration, signed by the operator: stream first.
    pub registrations: Vec<v1::Envelope>,
    /// The session's opening (see the module documentation): stream second, alone.
    pub opening: Group,
    /// The rest: one group per table device and one for the floor, to stream concurrently.
    pub groups: Vec<Group>,
    /// The sequence number each signer's next event gets.
    pub next_sequence: BTreeMap<String, u64>,
}

impl SignedSession {
    /// Events of the session proper (registrations excluded).
    pub fn events(&self) -> usize {
        self.opening.envelopes.len() + self.groups.iter().map(|g| g.envelopes.len()).sum::<usize>()
    }
}

/// How to sign.
#[derive(Clone, Debug)]
pub struct SignOptions {
    /// Added to every event's time (the session is generated from time 0 or any base; this puts
    /// it where it belongs: in the ledger's past).
    pub offset_ms: i64,
    /// Time of the registrations.
    pub registered_at_ms: i64,
    /// The operator's next sequence number (1 on a new ledger).
    pub operator_next_sequence: u64,
    /// Signing threads (0: one per core).
    pub threads: usize,
}

fn is_configuration(p: &P) -> bool {
    matches!(
        p,
        P::TableConfigured(_) | P::PoolConfigured(_) | P::MachineModelApproved(_)
    )
}

/// What [`sign_session`] needs of a session's event: a [`SimEvent`], or the compact
/// [`EncodedEvent`] of [`generate_encoded`].
pub trait PlayEvent {
    /// The device or principal that signs it.
    fn signer(&self) -> &str;
    /// A table, machine model or pool configuration (the opening ends with the last one).
    fn is_configuration(&self) -> bool;
    /// A round's settlement.
    fn is_settlement(&self) -> bool;
    /// Its encoded `EventBody`, numbered `sequence`, dated `offset_ms` after its time.
    fn body(&self, sequence: u64, offset_ms: i64) -> Vec<u8>;
}

impl PlayEvent for SimEvent {
    fn signer(&self) -> &str {
        &self.device_id
    }
    fn is_configuration(&self) -> bool {
        is_configuration(&self.payload)
    }
    fn is_settlement(&self) -> bool {
        matches!(self.payload, P::RoundSettled(_))
    }
    fn body(&self, sequence: u64, offset_ms: i64) -> Vec<u8> {
        v1::EventBody {
            device_id: self.device_id.clone(),
            sequence,
            occurred_at_ms: self.occurred_at_ms + offset_ms,
            payload: Some(self.payload.clone()),
        }
        .encode_to_vec()
    }
}

/// An event of a session kept small: its signer (shared), its time and its payload already
/// encoded (the `EventBody` field, tag included). A [`SimEvent`] of the standard session takes
/// about 900 bytes (its payload is as large as the largest kind of event, and every id is a
/// string of its own); this takes its encoded size plus 40.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedEvent {
    signer: Arc<str>,
    occurred_at_ms: i64,
    payload: Box<[u8]>,
    configuration: bool,
    settlement: bool,
}

impl EncodedEvent {
    /// `payload` signed by `signer` at `occurred_at_ms` (`signer` shared with the other events
    /// of the same signer).
    pub fn new(signer: Arc<str>, occurred_at_ms: i64, payload: &P) -> EncodedEvent {
        let mut bytes = Vec::with_capacity(payload.encoded_len());
        payload.encode(&mut bytes);
        EncodedEvent {
            signer,
            occurred_at_ms,
            payload: bytes.into_boxed_slice(),
            configuration: is_configuration(payload),
            settlement: matches!(payload, P::RoundSettled(_)),
        }
    }
}

impl PlayEvent for EncodedEvent {
    fn signer(&self) -> &str {
        &self.signer
    }
    fn is_configuration(&self) -> bool {
        self.configuration
    }
    fn is_settlement(&self) -> bool {
        self.settlement
    }
    /// The bytes prost gives for the same `EventBody`: its fields in order, each left out when
    /// it has its default value, then the payload's field.
    fn body(&self, sequence: u64, offset_ms: i64) -> Vec<u8> {
        use prost::encoding::{WireType, encode_key, encode_varint, int64, uint64};
        let at = self.occurred_at_ms + offset_ms;
        let mut b = Vec::with_capacity(self.signer.len() + self.payload.len() + 24);
        if !self.signer.is_empty() {
            encode_key(1, WireType::LengthDelimited, &mut b);
            encode_varint(self.signer.len() as u64, &mut b);
            b.extend_from_slice(self.signer.as_bytes());
        }
        if sequence != 0 {
            uint64::encode(2, &sequence, &mut b);
        }
        if at != 0 {
            int64::encode(3, &at, &mut b);
        }
        b.extend_from_slice(&self.payload);
        b
    }
}

/// [`casino_sim::generate`], each event kept as an [`EncodedEvent`]: the same session in a
/// fraction of the memory (the demo's 1.6 M events: about 1.5 GB as `SimEvent`s).
// The error is casino-sim's, as `casino_sim::generate` returns it.
#[allow(clippy::result_large_err)]
pub fn generate_encoded(
    plan: &casino_sim::SessionPlan,
) -> Result<Session<EncodedEvent>, casino_sim::SessionError> {
    let mut signers: HashMap<String, Arc<str>> = HashMap::new();
    casino_sim::generate_as(plan, |device, at_ms, payload| {
        let signer = match signers.get(device) {
            Some(s) => s.clone(),
            None => {
                let s: Arc<str> = Arc::from(device);
                signers.insert(device.to_string(), s.clone());
                s
            }
        };
        EncodedEvent::new(signer, at_ms, &payload)
    })
}

/// Number, encode and sign every event of `session` (and the registrations of its devices).
pub fn sign_session<E: PlayEvent>(
    session: &Session<E>,
    keys: &Keys,
    opts: &SignOptions,
) -> Result<SignedSession, AgentError> {
    let missing = |who: &str| AgentError::Key(format!("no key for signer `{who}`"));
    let mut next: BTreeMap<String, u64> = BTreeMap::new();
    next.insert(keys.operator_id.clone(), opts.operator_next_sequence.max(1));
    let mut number = |signer: &str| -> u64 {
        let n = match next.get_mut(signer) {
            Some(n) => n,
            None => next.entry(signer.to_string()).or_insert(1),
        };
        *n += 1;
        *n - 1
    };
    // Registrations.
    let mut reg_bodies = Vec::with_capacity(session.devices.len());
    for d in &session.devices {
        let k = keys
            .get(&d.device_id)
            .ok_or_else(|| missing(&d.device_id))?;
        reg_bodies.push((
            keys.operator_id.as_str(),
            SimEvent {
                device_id: keys.operator_id.clone(),
                occurred_at_ms: opts.registered_at_ms,
                payload: crate::registration(d, &k.verifying_key()),
            }
            .body(number(&keys.operator_id), 0),
        ));
    }
    // The opening, then the groups.
    let tables: std::collections::HashSet<&str> = session
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Table)
        .map(|d| d.device_id.as_str())
        .collect();
    let cut = session
        .events
        .iter()
        .rposition(|e| e.is_configuration())
        .map_or(0, |i| i + 1);
    let mut order: Vec<String> = vec!["opening".to_string()];
    let mut index_of: HashMap<String, usize> = HashMap::from([("opening".to_string(), 0)]);
    // (group position, is settlement) and (signer, body) of each event, in order.
    let mut placement = Vec::with_capacity(session.events.len());
    let mut items: Vec<(&str, Vec<u8>)> = Vec::with_capacity(session.events.len());
    for (i, e) in session.events.iter().enumerate() {
        let g = if i < cut {
            0
        } else {
            let name = if tables.contains(e.signer()) {
                e.signer()
            } else {
                "floor"
            };
            match index_of.get(name) {
                Some(&g) => g,
                None => {
                    order.push(name.to_string());
                    index_of.insert(name.to_string(), order.len() - 1);
                    order.len() - 1
                }
            }
        };
        placement.push((g, e.is_settlement()));
        items.push((e.signer(), e.body(number(e.signer()), opts.offset_ms)));
    }
    // Sign everything, on every core.
    let signed_regs = sign_all(reg_bodies, keys, opts.threads)?;
    let signed = sign_all(items, keys, opts.threads)?;
    // Packed as they are placed: each signed envelope is freed once copied.
    let mut lists: Vec<(Packed, Vec<usize>)> = vec![Default::default(); order.len()];
    for ((g, settled), env) in placement.into_iter().zip(signed) {
        let (envs, settlements) = &mut lists[g];
        if settled {
            settlements.push(envs.len());
        }
        envs.push(&env);
    }
    for (envs, _) in &mut lists {
        envs.shrink_to_fit();
    }
    let mut groups: Vec<Group> = order
        .into_iter()
        .zip(lists)
        .map(|(name, (envelopes, settlements))| Group {
            name,
            envelopes: Arc::new(envelopes),
            settlements,
        })
        .collect();
    let opening = groups.remove(0);
    Ok(SignedSession {
        registrations: signed_regs,
        opening,
        groups,
        next_sequence: next,
    })
}

/// Sign `(signer, body)` pairs, in order, on `threads` threads (0: one per core).
pub fn sign_all(
    mut items: Vec<(&str, Vec<u8>)>,
    keys: &Keys,
    threads: usize,
) -> Result<Vec<v1::Envelope>, AgentError> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        threads
    };
    let chunk = items.len().div_ceil(threads).max(1);
    let mut parts = Vec::with_capacity(threads);
    while items.len() > chunk {
        let rest = items.split_off(chunk);
        parts.push(std::mem::replace(&mut items, rest));
    }
    parts.push(items);
    let total = parts.iter().map(Vec::len).sum();
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| {
                s.spawn(move || {
                    part.into_iter()
                        .map(|(signer, body)| {
                            let key = keys.get(signer).ok_or_else(|| {
                                AgentError::Key(format!("no key for signer `{signer}`"))
                            })?;
                            let signature = sign(key, EVENT_DOMAIN, &body).to_bytes().to_vec();
                            Ok(v1::Envelope { body, signature })
                        })
                        .collect::<Result<Vec<_>, AgentError>>()
                })
            })
            .collect();
        let mut out = Vec::with_capacity(total);
        for h in handles {
            out.extend(
                h.join()
                    .map_err(|_| AgentError::Key("signing thread panicked".into()))??,
            );
        }
        Ok(out)
    })
}

/// Stream the groups concurrently, one agent (one stream, resending from its last receipt) per
/// group; returns every group's receipts, in order.
pub async fn stream_groups(
    url: &str,
    groups: &[Group],
    opts: &ClientOptions,
) -> Result<Vec<Vec<v1::Receipt>>, AgentError> {
    let mut tasks = Vec::with_capacity(groups.len());
    for g in groups {
        let (url, opts, envs) = (url.to_string(), opts.clone(), g.envelopes.clone());
        tasks.push(tokio::spawn(async move {
            submit_shared(&url, envs, &opts).await
        }));
    }
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(t.await.map_err(|e| AgentError::GaveUp {
            attempts: 0,
            last: e.to_string(),
        })??);
    }
    Ok(out)
}

/// [`stream_groups`], keeping of each group's receipts only how many came and the first that is
/// neither accepted nor a duplicate: millions of receipts, each with its signed group head and
/// inclusion path, are not held.
pub async fn stream_groups_checked(
    url: &str,
    groups: &[Group],
    opts: &ClientOptions,
) -> Result<Vec<Streamed>, AgentError> {
    let mut tasks = Vec::with_capacity(groups.len());
    for g in groups {
        let (url, opts, envs) = (url.to_string(), opts.clone(), g.envelopes.clone());
        tasks.push(tokio::spawn(async move {
            let mut refused = None;
            let kept = submit_shared_with(&url, envs, &opts, |r| {
                if refused.is_none() && first_refused(std::slice::from_ref(&r)).is_some() {
                    refused = Some(r);
                }
            })
            .await?;
            Ok::<_, AgentError>(Streamed {
                receipts: kept.len(),
                refused,
            })
        }));
    }
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(t.await.map_err(|e| AgentError::GaveUp {
            attempts: 0,
            last: e.to_string(),
        })??);
    }
    Ok(out)
}

/// What [`stream_groups_checked`] keeps of a group's receipts.
#[derive(Clone, Debug, Default)]
pub struct Streamed {
    /// Receipts received (one per envelope).
    pub receipts: usize,
    /// The first that is neither accepted nor a duplicate.
    pub refused: Option<v1::Receipt>,
}

/// The first receipt that is neither accepted nor a duplicate (a resend's original receipt).
pub fn first_refused(receipts: &[v1::Receipt]) -> Option<&v1::Receipt> {
    receipts.iter().find(|r| {
        r.status != v1::ReceiptStatus::Accepted as i32
            && r.status != v1::ReceiptStatus::Duplicate as i32
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_envelopes_come_back_as_they_went_in() {
        use ledger_agent::Envelopes;
        let envs: Vec<v1::Envelope> = (0..50u8)
            .map(|i| v1::Envelope {
                body: vec![i; usize::from(i % 7) * 13],
                signature: vec![255 - i; if i == 3 { 0 } else { 64 }],
            })
            .collect();
        let p: Packed = envs.iter().cloned().collect();
        assert_eq!(p.len(), 50);
        assert!(!p.is_empty());
        assert_eq!(p.to_vec(), envs);
        assert_eq!(p.get(0).as_ref(), envs.first());
        assert_eq!(p.get(49).as_ref(), envs.last());
        assert_eq!(p.last().as_ref(), envs.last());
        assert_eq!(p.get(50), None);
        assert_eq!(p.count(), 50);
        assert_eq!(p.envelope(7), envs[7]);
        assert_eq!(Packed::default().last(), None);
        assert!(Packed::default().is_empty());
    }

    #[test]
    fn an_encoded_session_signs_to_the_same_envelopes_byte_for_byte() {
        let plan = casino_sim::standard_plan(5, 0, 20, true, "operator-1", "inspectorate");
        let session = casino_sim::generate(&plan).unwrap();
        let encoded = generate_encoded(&plan).unwrap();
        assert_eq!(encoded.events.len(), session.events.len());
        assert_eq!(encoded.devices, session.devices);
        assert_eq!(encoded.expected, session.expected);
        let op = derived_key(1, "operator");
        let keys = Keys::derive(5, &session.devices, &[("operator-1", &op)], "operator-1");
        let opts = SignOptions {
            offset_ms: 1_000_000_000_000,
            registered_at_ms: 1_000_000_000_000,
            operator_next_sequence: 3,
            threads: 2,
        };
        let a = sign_session(&session, &keys, &opts).unwrap();
        let b = sign_session(&encoded, &keys, &opts).unwrap();
        assert_eq!(a.registrations, b.registrations);
        // Two generations hold their map fields (a table's settings) in hash maps of their own,
        // whose order prost follows: the same events, in bytes that may differ there.
        let decoded = |g: &Group| -> Vec<v1::EventBody> {
            g.envelopes
                .iter()
                .map(|e| v1::EventBody::decode(e.body.as_slice()).unwrap())
                .collect()
        };
        assert_eq!(decoded(&a.opening), decoded(&b.opening));
        assert_eq!(a.opening.settlements, b.opening.settlements);
        assert_eq!(a.groups.len(), b.groups.len());
        for (x, y) in a.groups.iter().zip(&b.groups) {
            assert_eq!(x.name, y.name);
            assert_eq!(decoded(x), decoded(y), "{}", x.name);
            assert_eq!(x.settlements, y.settlements, "{}", x.name);
        }
        assert_eq!(a.next_sequence, b.next_sequence);
        // From the same payload, the bytes are prost's, event for event (every kind the session
        // has), and with the defaults prost leaves out (sequence 0, a time of 0).
        for e in &session.events {
            let enc = EncodedEvent::new(
                Arc::from(e.device_id.as_str()),
                e.occurred_at_ms,
                &e.payload,
            );
            assert_eq!(enc.is_configuration(), e.is_configuration());
            assert_eq!(enc.is_settlement(), e.is_settlement());
            for (seq, offset) in [(0, 0), (1, -e.occurred_at_ms), (7, 5)] {
                assert_eq!(enc.body(seq, offset), e.body(seq, offset));
            }
        }
    }

    #[test]
    fn every_signer_numbers_its_events_once_in_order_and_groups_keep_dependent_events_together() {
        let plan = casino_sim::standard_plan(3, 0, 12, true, "operator-1", "inspectorate");
        let session = casino_sim::generate(&plan).unwrap();
        let op = derived_key(1, "operator");
        let keys = Keys::derive(3, &session.devices, &[("operator-1", &op)], "operator-1");
        let signed = sign_session(
            &session,
            &keys,
            &SignOptions {
                offset_ms: 1_000_000_000_000,
                registered_at_ms: 1_000_000_000_000,
                operator_next_sequence: 1,
                threads: 2,
            },
        )
        .unwrap();
        assert_eq!(signed.registrations.len(), session.devices.len());
        assert_eq!(signed.events(), session.events.len());
        let decode = |e: &v1::Envelope| v1::EventBody::decode(e.body.as_slice()).unwrap();
        // Per signer: 1, 2, 3, ... over the registrations, the opening, then its one group.
        let mut next: BTreeMap<String, u64> = BTreeMap::new();
        let mut group_of: BTreeMap<String, String> = BTreeMap::new();
        let all = std::iter::once(("registrations", signed.registrations.clone()))
            .chain(std::iter::once((
                "opening",
                signed.opening.envelopes.to_vec(),
            )))
            .chain(
                signed
                    .groups
                    .iter()
                    .map(|g| (g.name.as_str(), g.envelopes.to_vec())),
            );
        for (name, envs) in all {
            for e in &envs {
                let b = decode(e);
                let n = next.entry(b.device_id.clone()).or_insert(1);
                assert_eq!(b.sequence, *n, "{}", b.device_id);
                *n += 1;
                let key = keys.get(&b.device_id).unwrap().verifying_key();
                let sig = ed25519_dalek::Signature::from_slice(&e.signature).unwrap();
                assert!(ledger_core::signing::verify_strict(
                    &key,
                    EVENT_DOMAIN,
                    &e.body,
                    &sig
                ));
                if name != "registrations" && name != "opening" {
                    let g = group_of.entry(b.device_id.clone()).or_insert(name.into());
                    assert_eq!(g, name, "{} streams in one group", b.device_id);
                }
            }
        }
        assert_eq!(signed.next_sequence, next);
        // The opening ends with the last configuration; tables have a group each, the floor one.
        let last = decode(&signed.opening.envelopes.last().unwrap());
        assert!(is_configuration(last.payload.as_ref().unwrap()));
        let tables = session
            .devices
            .iter()
            .filter(|d| d.kind == DeviceKind::Table)
            .count();
        assert_eq!(signed.groups.len(), tables + 1);
        assert_eq!(
            group_of.get("operator-1").map(String::as_str),
            Some("floor")
        );
        // Settlements are marked.
        for g in &signed.groups {
            for (i, e) in g.envelopes.iter().enumerate() {
                let settled = matches!(decode(&e).payload, Some(P::RoundSettled(_)));
                assert_eq!(settled, g.settlements.contains(&i), "{} #{i}", g.name);
            }
        }
    }
}
