//! Offline verification of a whole chain, one entry at a time (memory grows with the number of
//! signers and checkpoints, never with the number of entries).
//!
//! [`ChainVerifier::check_entry`] recomputes the entry's hashes and link, decodes the signed body,
//! and applies the registry, authorisation and sequence rules from the chain's own history. It
//! returns the signatures to check rather than checking them, so a caller can verify them in
//! batches, on other threads; [`crate::signing::verify_many`] does that. The first broken index
//! is the smallest index at which either kind of check failed. [`ChainVerifier::check_stored`]
//! does the same on an entry read in place from its stored bytes ([`crate::stored`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use ed25519_dalek::VerifyingKey;
use ledger_proto::v1::{self, ledger_record_body::Record};
use prost::Message;

use crate::event::{Event, Payload};
use crate::hashing::{GENESIS_PREV_HASH, Hash32, entry_hash, hex32, record_hash};
use crate::record::{
    CheckpointInfo, ENTRY_FORMAT, RecordKind, check_checkpoint, check_clock_step,
    decode_ledger_record,
};
use crate::signers::{
    PoolMembers, Signer, SignerRole, authorize, check_key_rotation, check_pool_authority,
    check_registration, check_revocation, pool_configured, principal_from_proto,
};
use crate::signing::{
    EVENT_DOMAIN, LEDGER_RECORD_DOMAIN, SignatureCheck, parse_public_key, parse_signature,
    signed_message,
};
use crate::stored::{EntryFields, StoredEntry};
use ed25519_dalek::Signature;

/// A broken chain: where (when known) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{what}", match .index { Some(i) => format!("entry {i}: "), None => String::new() })]
pub struct VerifyError {
    pub index: Option<u64>,
    pub what: String,
}

impl VerifyError {
    pub fn at(index: u64, what: impl Into<String>) -> VerifyError {
        VerifyError {
            index: Some(index),
            what: what.into(),
        }
    }
    pub fn general(what: impl Into<String>) -> VerifyError {
        VerifyError {
            index: None,
            what: what.into(),
        }
    }
}

/// A signature the caller must check, and the entry it belongs to.
#[derive(Clone, Debug)]
pub struct PendingSignature {
    pub index: u64,
    pub what: &'static str,
    pub check: SignatureCheck,
}

/// A signature an entry needs checked ([`ChainVerifier::check_stored`]): over `domain ‖` the
/// entry's own body, left where it is, or `domain ‖` another body (a finding's evidence).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySignature {
    pub index: u64,
    pub what: &'static str,
    pub domain: &'static [u8],
    /// `None`: the entry's body.
    pub other_body: Option<Vec<u8>>,
    pub signature: Signature,
    pub key: VerifyingKey,
}

impl EntrySignature {
    /// The signed body, given the entry's.
    pub fn body<'b>(&'b self, entry_body: &'b [u8]) -> &'b [u8] {
        self.other_body.as_deref().unwrap_or(entry_body)
    }

    /// As a [`PendingSignature`], its message copied out (`domain ‖ body`).
    pub fn pending(&self, entry_body: &[u8]) -> PendingSignature {
        PendingSignature {
            index: self.index,
            what: self.what,
            check: SignatureCheck {
                message: signed_message(self.domain, self.body(entry_body)),
                signature: self.signature,
                key: self.key,
            },
        }
    }
}

/// Recompute an entry's hash from its stored fields, check it links to `prev_hash` and matches the
/// stored hash. Returns the hash.
pub fn check_link(
    entry: &v1::ChainEntry,
    expected_index: u64,
    prev_hash: &Hash32,
) -> Result<Hash32, VerifyError> {
    check_link_fields(&EntryFields::of(entry), expected_index, prev_hash)
}

/// [`check_link`] of an entry's fields wherever they are.
pub fn check_link_fields(
    entry: &EntryFields<'_>,
    expected_index: u64,
    prev_hash: &Hash32,
) -> Result<Hash32, VerifyError> {
    let i = expected_index;
    if entry.index != expected_index {
        return Err(VerifyError::at(
            i,
            format!(
                "entry claims index {} (entries missing or reordered)",
                entry.index
            ),
        ));
    }
    if entry.format != ENTRY_FORMAT {
        return Err(VerifyError::at(
            i,
            format!("unknown entry format {}", entry.format),
        ));
    }
    let kind = RecordKind::from_proto(entry.kind)
        .ok_or_else(|| VerifyError::at(i, format!("unknown record kind {}", entry.kind)))?;
    if entry.prev_hash != prev_hash {
        return Err(VerifyError::at(
            i,
            format!(
                "prev_hash {} does not match the previous entry's hash {}",
                hex::encode(entry.prev_hash),
                hex32(prev_hash)
            ),
        ));
    }
    let rh = record_hash(kind, entry.body, entry.signature);
    let h = entry_hash(prev_hash, i, entry.received_at_ms, kind, &rh);
    if entry.entry_hash != h {
        return Err(VerifyError::at(
            i,
            format!(
                "stored entry_hash {} but the content hashes to {}",
                hex::encode(entry.entry_hash),
                hex32(&h)
            ),
        ));
    }
    Ok(h)
}

/// What a verified chain contains.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub entries: u64,
    pub events: u64,
    pub ledger_records: u64,
    pub security_findings: u64,
    /// Ledger-signed records of a step of the ledger's wall clock.
    pub clock_steps: u64,
    /// Ledger-signed reviews of audit findings ([`crate::review`]).
    pub finding_reviews: u64,
    pub checkpoints: u64,
    pub signers: u64,
    pub revoked: u64,
    pub head_hash: Option<Hash32>,
    /// The genesis key: the ledger's identity.
    pub ledger_key: Option<VerifyingKey>,
    /// The key in force at the head (the genesis key unless rotated).
    pub current_ledger_key: Option<VerifyingKey>,
    pub ledger_key_rotations: u64,
    pub ledger_id: String,
    /// Number of events per payload name.
    pub payloads: BTreeMap<&'static str, u64>,
    pub first_received_at_ms: i64,
    pub last_received_at_ms: i64,
    /// The newest of the ledger's checkpoints, which a reader compares with the newest one they
    /// hold: checkpoints deleted from the end leave the entries after the last one kept without
    /// a signature over them.
    pub last_checkpoint: Option<CheckpointInfo>,
    /// How many of the checkpoints were also held by the caller ([`ChainVerifier::add_held_checkpoint`]).
    pub held_checkpoints: u64,
    /// The root of the Merkle tree of all the entries (`crate::merkle`), and how many of the
    /// checkpoints signed a tree head (each checked against the entries).
    pub tree_root: Option<crate::merkle::TreeHash>,
    pub tree_checkpoints: u64,
    /// Witnesses' refusals of this ledger's checkpoints, as the ledger recorded them.
    pub witness_refusals: Vec<WitnessRefusal>,
    /// What each witness the caller named ([`ChainVerifier::add_witness`]) cosigned.
    pub witnesses: Vec<WitnessSummary>,
}

/// What one witness cosigned of the ledger's checkpoints, and refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessSummary {
    pub name: String,
    /// Its cosigning key: ed25519 (`cosignature/v1`) or ML-DSA-44 (`subtree/v1`).
    pub key: crate::note::CosignerKey,
    /// Checkpoints carrying its valid cosignature.
    pub cosigned: u64,
    /// The newest of them: (number, tree size).
    pub newest: Option<(u64, u64)>,
    /// Its refusals recorded in the chain, and the last one: (entry, checkpoint number).
    pub refusals: u64,
    pub last_refusal: Option<(u64, u64)>,
}

/// A [`v1::WitnessRefused`] record found in the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessRefusal {
    /// The entry holding the record.
    pub index: u64,
    pub witness: String,
    pub checkpoint_number: u64,
    pub tree_size: u64,
    pub http_status: u32,
}

/// The streaming verifier.
pub struct ChainVerifier {
    expected_key: Option<VerifyingKey>,
    ledger_key: Option<VerifyingKey>,
    /// The ledger's keys by the first entry whose checkpoints they sign: the genesis key from 0,
    /// each rotated-to key from its `LedgerKeyRotated` record on.
    ledger_keys: Vec<(u64, VerifyingKey)>,
    next_index: u64,
    prev_hash: Hash32,
    last_received_at_ms: i64,
    signers: HashMap<String, Signer>,
    /// Each pool's members, from its latest `PoolConfigured`.
    pools: HashMap<String, PoolMembers>,
    /// Checkpoints by the index they cover.
    checkpoints: BTreeMap<u64, Vec<CheckpointInfo>>,
    checkpoint_count: u64,
    last_checkpoint: Option<CheckpointInfo>,
    /// Checkpoints the caller holds out of band.
    held: u64,
    /// The Merkle tree of the entries so far, rebuilt from their bytes (never read from a store).
    frontier: crate::merkle::Frontier,
    /// The entry being checked, encoded for its Merkle leaf (kept, to allocate it once).
    encoded: Vec<u8>,
    /// Checkpoints dated before the one before them: (number, the earlier one's index, its
    /// index). Each needs a clock step back in the entries between the two.
    dated_back: Vec<(u64, u64, u64)>,
    summary: Summary,
}

/// The witness policy a caller may add: see [`ChainVerifier::add_witness`].
fn cosignature_error(number: u64, w: &WitnessSummary, e: crate::note::NoteError) -> VerifyError {
    VerifyError::general(format!(
        "checkpoint #{number}: the cosignature of witness {} does not verify: {e}",
        w.name
    ))
}

impl ChainVerifier {
    /// `expected_key`: the ledger key the regulator trusts (out of band); when `None`, the key in
    /// the genesis record is used and reported.
    pub fn new(expected_key: Option<VerifyingKey>) -> ChainVerifier {
        ChainVerifier {
            expected_key,
            ledger_key: None,
            ledger_keys: Vec::new(),
            next_index: 0,
            prev_hash: GENESIS_PREV_HASH,
            last_received_at_ms: i64::MIN,
            signers: HashMap::new(),
            pools: HashMap::new(),
            checkpoints: BTreeMap::new(),
            checkpoint_count: 0,
            last_checkpoint: None,
            held: 0,
            frontier: crate::merkle::Frontier::new(),
            encoded: Vec::new(),
            dated_back: Vec::new(),
            summary: Summary::default(),
        }
    }

    /// A witness whose cosignatures the caller trusts, before the checkpoints. Every cosignature
    /// line of its name and key id must verify; at [`Self::finish`] it must have cosigned at least
    /// one checkpoint, and none of its refusals recorded in the chain may come after the newest
    /// checkpoint it cosigned (a history it disputes and never cosigned since). The key is an
    /// ed25519 or an ML-DSA-44 cosigning key; a witness with both is added once for each.
    pub fn add_witness(&mut self, name: &str, key: impl Into<crate::note::CosignerKey>) {
        self.summary.witnesses.push(WitnessSummary {
            name: name.to_string(),
            key: key.into(),
            cosigned: 0,
            newest: None,
            refusals: 0,
            last_refusal: None,
        });
    }

    /// Add the checkpoints, oldest first, before the entries. Checks their signatures, numbering
    /// and that none goes back on an earlier one (index and time never decrease).
    pub fn add_checkpoint(&mut self, cp: &v1::Checkpoint) -> Result<(), VerifyError> {
        let n = self.checkpoint_count + 1;
        // Signed by the key it names; that this is the ledger's key for the entry it covers (the
        // genesis key, which `expected_key` pins, or one it rotated to) is checked at `finish`.
        let info = check_checkpoint(cp, None)
            .map_err(|e| VerifyError::general(format!("checkpoint #{n}: {e}")))?;
        if info.number != n {
            return Err(VerifyError::general(format!(
                "checkpoint #{n} is numbered {} (checkpoints missing or reordered)",
                info.number
            )));
        }
        if let Some(last) = &self.last_checkpoint {
            let (num, idx) = (last.number, last.index);
            if last.tree.is_some() && info.tree.is_none() {
                return Err(VerifyError::general(format!(
                    "checkpoint #{} has no Merkle tree head but the earlier checkpoint #{num} has one",
                    info.number
                )));
            }
            if info.index < idx {
                return Err(VerifyError::general(format!(
                    "checkpoint #{} covers entry {} but the earlier checkpoint #{num} already covered entry {idx}",
                    info.number, info.index
                )));
            }
            if info.created_at_ms < last.created_at_ms {
                // Only after the ledger's clock stepped back: checked as the entries pass.
                self.dated_back.push((info.number, idx, info.index));
            }
        }
        if !self.summary.witnesses.is_empty() && !cp.note.is_empty() {
            let note = crate::note::SignedNote::parse(&cp.note)
                .map_err(|e| VerifyError::general(format!("checkpoint #{n}'s note: {e}")))?;
            for w in &mut self.summary.witnesses {
                match note.cosigned_by(&w.name, &w.key) {
                    Ok(_) => {
                        w.cosigned += 1;
                        w.newest = Some((n, info.index + 1));
                    }
                    Err(crate::note::NoteError::Unsigned(_)) => {}
                    Err(e) => return Err(cosignature_error(n, w, e)),
                }
            }
        }
        self.last_checkpoint = Some(info.clone());
        self.checkpoint_count = n;
        self.checkpoints.entry(info.index).or_default().push(info);
        Ok(())
    }

    /// Add a checkpoint the caller kept out of band (fetched from the running ledger earlier),
    /// after the ledger's own ([`ChainVerifier::add_checkpoint`]) and before the entries.
    ///
    /// A chain with checkpoints can still be cut or rewritten after its last one if the
    /// checkpoints from there on are deleted with it: nothing left in the ledger then covers those
    /// entries. A held checkpoint closes that gap: the ledger must still hold the same checkpoint
    /// (by number, identical), and the chain must reach its entry with its hash. Its signature is
    /// checked like the ledger's own (by the trusted key, or the genesis key at [`Self::finish`]).
    pub fn add_held_checkpoint(&mut self, cp: &v1::Checkpoint) -> Result<(), VerifyError> {
        let held = check_checkpoint(cp, None)
            .map_err(|e| VerifyError::general(format!("the checkpoint you hold: {e}")))?;
        let n = held.number;
        if n == 0 || n > self.checkpoint_count {
            return Err(VerifyError::general(format!(
                "the ledger holds {} checkpoints but you hold checkpoint #{n} (covering entry {}): checkpoints were removed from the ledger",
                self.checkpoint_count, held.index
            )));
        }
        let ours = self
            .checkpoints
            .values()
            .flatten()
            .find(|c| c.number == n)
            .ok_or_else(|| VerifyError::general(format!("checkpoint #{n} is missing")))?;
        if ours.ledger_public_key != held.ledger_public_key {
            return Err(VerifyError::general(format!(
                "the checkpoint you hold (#{n}) is signed by ledger key {}, the ledger's by {}",
                hex::encode(held.ledger_public_key.as_bytes()),
                hex::encode(ours.ledger_public_key.as_bytes())
            )));
        }
        if ours != &held {
            return Err(VerifyError::general(format!(
                "the ledger's checkpoint #{n} (entry {}, hash {}, {} ms) is not the one you hold (entry {}, hash {}, {} ms)",
                ours.index,
                hex32(&ours.head_hash),
                ours.created_at_ms,
                held.index,
                hex32(&held.head_hash),
                held.created_at_ms
            )));
        }
        self.held += 1;
        Ok(())
    }

    /// Check the next entry. Returns the signatures to verify for it.
    pub fn check_entry(
        &mut self,
        entry: &v1::ChainEntry,
    ) -> Result<Vec<PendingSignature>, VerifyError> {
        let mut sigs = Vec::with_capacity(1);
        self.check_fields(
            &EntryFields::of(entry),
            |buf| {
                buf.clear();
                entry.encode(buf).expect("a Vec grows as needed");
                crate::merkle::leaf_hash(buf)
            },
            &mut sigs,
        )?;
        Ok(sigs.iter().map(|s| s.pending(&entry.body)).collect())
    }

    /// Check the next entry, read in place: the same checks as [`Self::check_entry`] on the
    /// decoded entry, with the same verdict (its Merkle leaf is its stored bytes, which are
    /// what `check_entry` encodes again). Appends the signatures to verify for it to `sigs`
    /// (nothing when it fails), their bodies left in place.
    pub fn check_stored(
        &mut self,
        entry: &StoredEntry<'_>,
        sigs: &mut Vec<EntrySignature>,
    ) -> Result<(), VerifyError> {
        let before = sigs.len();
        let r = self.check_fields(entry.fields(), |_| entry.leaf_hash(), sigs);
        if r.is_err() {
            sigs.truncate(before);
        }
        r
    }

    /// What [`Self::check_entry`] and [`Self::check_stored`] check; `leaf` gives the entry's
    /// Merkle leaf hash (with a buffer to encode it in).
    fn check_fields(
        &mut self,
        entry: &EntryFields<'_>,
        leaf: impl FnOnce(&mut Vec<u8>) -> crate::merkle::TreeHash,
        pending: &mut Vec<EntrySignature>,
    ) -> Result<(), VerifyError> {
        let i = self.next_index;
        let h = check_link_fields(entry, i, &self.prev_hash)?;
        // Received times never decrease, except at a clock step record that declares it.
        let back = entry.received_at_ms < self.last_received_at_ms;
        let went_back = || {
            VerifyError::at(
                i,
                format!(
                    "received_at_ms {} is before the previous entry's {} (only a ledger clock step record may go back)",
                    entry.received_at_ms, self.last_received_at_ms
                ),
            )
        };
        let sig =
            parse_signature(entry.signature).map_err(|e| VerifyError::at(i, e.to_string()))?;
        match RecordKind::from_proto(entry.kind) {
            Some(RecordKind::Event) => {
                if i == 0 {
                    return Err(VerifyError::at(
                        0,
                        "entry 0 must be the ledger's genesis record",
                    ));
                }
                if back {
                    return Err(went_back());
                }
                let ev =
                    Event::decode(entry.body).map_err(|e| VerifyError::at(i, e.to_string()))?;
                let signer = self.signers.get(&ev.device_id).ok_or_else(|| {
                    VerifyError::at(i, format!("signed by unknown device {}", ev.device_id))
                })?;
                if let Some(r) = signer.revoked_at_index {
                    return Err(VerifyError::at(
                        i,
                        format!("signed by {} which was revoked at entry {r}", ev.device_id),
                    ));
                }
                authorize(signer, &ev.payload).map_err(|e| VerifyError::at(i, e))?;
                check_pool_authority(signer, &ev.payload, |p| self.pools.get(p))
                    .map_err(|e| VerifyError::at(i, e))?;
                if ev.sequence != signer.last_sequence + 1 {
                    return Err(VerifyError::at(
                        i,
                        format!(
                            "{} sequence {} but the previous was {} (sequences must be contiguous)",
                            ev.device_id, ev.sequence, signer.last_sequence
                        ),
                    ));
                }
                pending.push(EntrySignature {
                    index: i,
                    what: "device signature",
                    domain: EVENT_DOMAIN,
                    other_body: None,
                    signature: sig,
                    key: signer.key,
                });
                let name = ev.payload_name();
                match &ev.payload {
                    Payload::DeviceRegistered(reg) => {
                        check_registration(self.signers.get(&reg.device_id), reg)
                            .map_err(|e| VerifyError::at(i, e))?;
                        self.signers
                            .insert(reg.device_id.clone(), Signer::from_registration(reg, i));
                    }
                    Payload::DeviceRevoked { device_id, .. } => {
                        check_revocation(self.signers.get(device_id), device_id)
                            .map_err(|e| VerifyError::at(i, e))?;
                        if let Some(s) = self.signers.get_mut(device_id) {
                            s.revoked_at_index = Some(i);
                        }
                    }
                    // Entries before this one were checked with the old key as they came.
                    Payload::DeviceKeyRotated {
                        device_id,
                        public_key,
                        ..
                    } => {
                        check_key_rotation(self.signers.get(device_id), device_id, public_key)
                            .map_err(|e| VerifyError::at(i, e))?;
                        if let Some(s) = self.signers.get_mut(device_id) {
                            s.key = *public_key;
                        }
                    }
                    p => {
                        if let Some(pool) = pool_configured(p) {
                            self.pools
                                .insert(pool.pool_id.clone(), PoolMembers::of(pool));
                        }
                    }
                }
                // Registering or revoking oneself is impossible (operators are principals), so the
                // signer is still there.
                if let Some(s) = self.signers.get_mut(&ev.device_id) {
                    s.last_sequence = ev.sequence;
                    s.last_index = i;
                }
                self.summary.events += 1;
                *self.summary.payloads.entry(name).or_default() += 1;
            }
            Some(RecordKind::Ledger) => {
                let rec = decode_ledger_record(entry.body).map_err(|e| VerifyError::at(i, e))?;
                match &rec.record {
                    Some(Record::ClockStep(step)) if i > 0 => {
                        check_clock_step(
                            step,
                            rec.created_at_ms,
                            entry.received_at_ms,
                            self.last_received_at_ms,
                        )
                        .map_err(|e| VerifyError::at(i, e))?;
                        if back {
                            self.dated_back
                                .retain(|&(_, from, to)| !(from < i && i <= to));
                        }
                        self.summary.clock_steps += 1;
                    }
                    _ if back => return Err(went_back()),
                    _ => {}
                }
                let key = match (&rec.record, i) {
                    (Some(Record::Genesis(g)), 0) => {
                        let k = parse_public_key(&g.ledger_public_key)
                            .map_err(|e| VerifyError::at(0, format!("genesis ledger key: {e}")))?;
                        if let Some(exp) = &self.expected_key
                            && exp != &k
                        {
                            return Err(VerifyError::at(
                                0,
                                format!(
                                    "the genesis names ledger key {} but the trusted ledger key is {}",
                                    hex::encode(k.as_bytes()),
                                    hex::encode(exp.as_bytes())
                                ),
                            ));
                        }
                        self.ledger_key = Some(k);
                        self.ledger_keys.push((0, k));
                        self.summary.ledger_id = g.ledger_id.clone();
                        k
                    }
                    (_, 0) => {
                        return Err(VerifyError::at(
                            0,
                            "entry 0 must be the ledger's genesis record",
                        ));
                    }
                    (Some(Record::Genesis(_)), _) => {
                        return Err(VerifyError::at(i, "a second genesis record"));
                    }
                    _ => self
                        .ledger_key
                        .ok_or_else(|| VerifyError::at(i, "no ledger key"))?,
                };
                pending.push(EntrySignature {
                    index: i,
                    what: "ledger signature",
                    domain: LEDGER_RECORD_DOMAIN,
                    other_body: None,
                    signature: sig,
                    key,
                });
                match &rec.record {
                    Some(Record::PrincipalsDeclared(p)) => self.declare_principals(i, p)?,
                    Some(Record::WitnessRefused(w)) => self.witness_refused(i, w)?,
                    Some(Record::SecurityFinding(f)) => {
                        pending.push(self.check_finding(i, f)?);
                        self.summary.security_findings += 1;
                    }
                    // Signed by the old key (above); the new one signs from here on.
                    Some(Record::LedgerKeyRotated(r)) => {
                        let k = parse_public_key(&r.new_public_key).map_err(|e| {
                            VerifyError::at(i, format!("ledger_key_rotated.new_public_key: {e}"))
                        })?;
                        if Some(k) == self.ledger_key {
                            return Err(VerifyError::at(
                                i,
                                "ledger_key_rotated names the key already in force",
                            ));
                        }
                        self.ledger_key = Some(k);
                        self.ledger_keys.push((i, k));
                    }
                    Some(Record::FindingReviewed(r)) => {
                        crate::review::check_record(r)
                            .map_err(|e| VerifyError::at(i, e.to_string()))?;
                        self.summary.finding_reviews += 1;
                    }
                    _ => {}
                }
                self.summary.ledger_records += 1;
            }
            None => unreachable!("check_link refuses unknown kinds"),
        }
        self.frontier.push(leaf(&mut self.encoded));
        if let Some(cps) = self.checkpoints.get(&i) {
            for cp in cps {
                if let Some(tree) = &cp.tree {
                    let origin = crate::note::origin_of(&self.summary.ledger_id);
                    if tree.origin != origin {
                        return Err(VerifyError::at(
                            i,
                            format!(
                                "checkpoint #{}'s note names log {:?}, this ledger is {origin:?}",
                                cp.number, tree.origin
                            ),
                        ));
                    }
                    let root = self.frontier.root();
                    if tree.root != root {
                        return Err(VerifyError::at(
                            i,
                            format!(
                                "checkpoint #{} signs Merkle root {} for entries 0..={i}, but their root is {}",
                                cp.number,
                                hex::encode(tree.root),
                                hex::encode(root)
                            ),
                        ));
                    }
                }
                if cp.head_hash != h {
                    return Err(VerifyError::at(
                        i,
                        format!(
                            "checkpoint #{} says entry {i} has hash {} but it is {}",
                            cp.number,
                            hex32(&cp.head_hash),
                            hex32(&h)
                        ),
                    ));
                }
            }
        }
        if i == 0 {
            self.summary.first_received_at_ms = entry.received_at_ms;
        }
        self.summary.last_received_at_ms = entry.received_at_ms;
        self.last_received_at_ms = entry.received_at_ms;
        self.prev_hash = h;
        self.next_index += 1;
        Ok(())
    }

    /// A witness's refusal names a witness key and a checkpoint of entries before it: the one
    /// of that number, when the verifier holds it.
    fn witness_refused(&mut self, i: u64, w: &v1::WitnessRefused) -> Result<(), VerifyError> {
        parse_public_key(&w.witness_public_key)
            .map_err(|e| VerifyError::at(i, format!("witness_refused.witness_public_key: {e}")))?;
        if w.witness.is_empty() {
            return Err(VerifyError::at(i, "witness_refused names no witness"));
        }
        if w.tree_size == 0 || w.tree_size > i {
            return Err(VerifyError::at(
                i,
                format!(
                    "witness_refused: a refused checkpoint of tree size {} cannot precede entry {i}",
                    w.tree_size
                ),
            ));
        }
        let known = self
            .checkpoints
            .values()
            .flatten()
            .find(|c| c.number == w.checkpoint_number);
        if let Some(c) = known
            && c.index + 1 != w.tree_size
        {
            return Err(VerifyError::at(
                i,
                format!(
                    "witness_refused: checkpoint #{} covers {} entries, the record says {}",
                    c.number,
                    c.index + 1,
                    w.tree_size
                ),
            ));
        }
        for t in &mut self.summary.witnesses {
            // The record names the witness's ed25519 key (ledgerd submits as that witness); a
            // witness trusted by its ML-DSA-44 key is the same witness by name.
            let same_key = match &t.key {
                crate::note::CosignerKey::Ed25519(k) => {
                    k.as_bytes().as_slice() == w.witness_public_key
                }
                crate::note::CosignerKey::MlDsa44(_) => true,
            };
            if t.name == w.witness && same_key {
                t.refusals += 1;
                t.last_refusal = Some((i, w.checkpoint_number));
            }
        }
        self.summary.witness_refusals.push(WitnessRefusal {
            index: i,
            witness: w.witness.clone(),
            checkpoint_number: w.checkpoint_number,
            tree_size: w.tree_size,
            http_status: w.http_status,
        });
        Ok(())
    }

    fn declare_principals(
        &mut self,
        i: u64,
        p: &v1::PrincipalsDeclared,
    ) -> Result<(), VerifyError> {
        let mut declared = HashSet::new();
        for pr in &p.principals {
            let s = principal_from_proto(pr, i).map_err(|e| VerifyError::at(i, e))?;
            match self.signers.get_mut(&s.id) {
                Some(old) if !old.role.is_principal() => {
                    return Err(VerifyError::at(
                        i,
                        format!("principal {} has the id of a registered device", s.id),
                    ));
                }
                Some(old) => {
                    old.key = s.key;
                    old.role = s.role;
                    old.revoked_at_index = None;
                }
                None => {
                    self.signers.insert(s.id.clone(), s.clone());
                }
            }
            declared.insert(s.id);
        }
        for s in self.signers.values_mut() {
            if s.role.is_principal() && s.revoked_at_index.is_none() && !declared.contains(&s.id) {
                s.revoked_at_index = Some(i);
            }
        }
        Ok(())
    }

    fn check_finding(
        &self,
        i: u64,
        f: &v1::SecurityFinding,
    ) -> Result<EntrySignature, VerifyError> {
        let env = f
            .conflicting
            .as_ref()
            .ok_or_else(|| VerifyError::at(i, "security finding without its evidence"))?;
        let ev = Event::decode(&env.body)
            .map_err(|e| VerifyError::at(i, format!("finding evidence: {e}")))?;
        if ev.device_id != f.device_id || ev.sequence != f.sequence {
            return Err(VerifyError::at(
                i,
                "finding evidence is not the device and sequence it names",
            ));
        }
        let signer = self.signers.get(&f.device_id).ok_or_else(|| {
            VerifyError::at(i, format!("finding about unknown device {}", f.device_id))
        })?;
        if f.sequence > signer.last_sequence || f.original_index >= i {
            return Err(VerifyError::at(
                i,
                "finding names a sequence that was not yet used",
            ));
        }
        let sig = parse_signature(&env.signature)
            .map_err(|e| VerifyError::at(i, format!("finding evidence: {e}")))?;
        Ok(EntrySignature {
            index: i,
            what: "finding evidence signature",
            domain: EVENT_DOMAIN,
            other_body: Some(env.body.clone()),
            signature: sig,
            key: signer.key,
        })
    }

    /// Number of entries checked so far.
    pub fn entries(&self) -> u64 {
        self.next_index
    }

    /// After the last entry: every checkpoint must cover an entry that exists and be signed by the
    /// genesis key.
    pub fn finish(mut self) -> Result<Summary, VerifyError> {
        if self.next_index == 0 {
            return Err(VerifyError::general(
                "the chain is empty (no genesis record)",
            ));
        }
        if let Some((idx, cps)) = self.checkpoints.range(self.next_index..).next() {
            return Err(VerifyError::at(
                self.next_index,
                format!(
                    "checkpoint #{} covers entry {idx} but the chain ends at entry {} (entries missing)",
                    cps[0].number,
                    self.next_index - 1
                ),
            ));
        }
        if let Some((n, from, to)) = self.dated_back.first() {
            return Err(VerifyError::general(format!(
                "checkpoint #{n} is dated before checkpoint #{} but no clock step back lies in entries {} to {to}",
                n - 1,
                from + 1
            )));
        }
        for cp in self.checkpoints.values().flatten() {
            let key = self.ledger_key_at(cp.index);
            if Some(cp.ledger_public_key) != key {
                return Err(VerifyError::general(format!(
                    "checkpoint #{} is signed by another key than the ledger's at entry {} ({})",
                    cp.number,
                    cp.index,
                    key.map(|k| hex::encode(k.as_bytes())).unwrap_or_default()
                )));
            }
        }
        for w in &self.summary.witnesses {
            let Some((_, size)) = w.newest else {
                return Err(VerifyError::general(format!(
                    "witness {} cosigned none of the ledger's {} checkpoints",
                    w.name, self.checkpoint_count
                )));
            };
            if let Some((at, number)) = w.last_refusal
                && at >= size
            {
                return Err(VerifyError::at(
                    at,
                    format!(
                        "witness {} refused checkpoint #{number} (recorded at entry {at}) and cosigned nothing after it: it holds another history",
                        w.name
                    ),
                ));
            }
        }
        let s = &mut self.summary;
        s.entries = self.next_index;
        s.checkpoints = self.checkpoint_count;
        s.signers = self.signers.len() as u64;
        s.revoked = self
            .signers
            .values()
            .filter(|x| x.revoked_at_index.is_some())
            .count() as u64;
        s.head_hash = Some(self.prev_hash);
        s.ledger_key = self.ledger_keys.first().map(|k| k.1);
        s.current_ledger_key = self.ledger_key;
        s.ledger_key_rotations = self.ledger_keys.len().saturating_sub(1) as u64;
        s.tree_checkpoints = self
            .checkpoints
            .values()
            .flatten()
            .filter(|c| c.tree.is_some())
            .count() as u64;
        s.last_checkpoint = self.last_checkpoint;
        s.held_checkpoints = self.held;
        s.tree_root = Some(self.frontier.root());
        Ok(self.summary)
    }

    /// The ledger's key for a checkpoint of entry `index`: the last one in force at it.
    pub fn ledger_key_at(&self, index: u64) -> Option<VerifyingKey> {
        self.ledger_keys
            .iter()
            .take_while(|(from, _)| *from <= index)
            .last()
            .map(|(_, k)| *k)
    }

    /// The ledger's keys so far, by the first entry each signs for (for the store's derived
    /// state): the genesis key from 0, each rotated-to key from its rotation record on.
    pub fn ledger_keys(&self) -> &[(u64, VerifyingKey)] {
        &self.ledger_keys
    }

    /// The signers known so far (for reports).
    pub fn signers(&self) -> impl Iterator<Item = &Signer> {
        self.signers.values()
    }

    /// The pools configured so far, with their members (for the store's derived state).
    pub fn pools(&self) -> impl Iterator<Item = (&String, &PoolMembers)> {
        self.pools.iter()
    }

    /// Role of a known signer.
    pub fn role_of(&self, id: &str) -> Option<SignerRole> {
        self.signers.get(id).map(|s| s.role)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{make_entry, sign_checkpoint, sign_ledger_record};
    use crate::signing::{sign, verify_many};
    use ed25519_dalek::SigningKey;
    use ledger_proto::v1::event_body::Payload as P;
    use proptest::prelude::*;
    use prost::Message;

    fn event(key: &SigningKey, dev: &str, seq: u64, payload: P) -> (Vec<u8>, Vec<u8>) {
        let body = v1::EventBody {
            device_id: dev.into(),
            sequence: seq,
            occurred_at_ms: 1_800_000_000_000,
            payload: Some(payload),
        }
        .encode_to_vec();
        let sig = sign(key, EVENT_DOMAIN, &body).to_bytes().to_vec();
        (body, sig)
    }

    /// A verifier of decoded entries ([`ChainVerifier::check_entry`]) beside two that read the
    /// same entries in place ([`ChainVerifier::check_stored`]): from their encoding, and from it
    /// without the `prev_hash` field, as a linked chunk stores it. On every entry all three must
    /// give the same verdict and the same signatures, and the same summary at the end.
    struct Both {
        decoded: ChainVerifier,
        stored: ChainVerifier,
        linked: ChainVerifier,
    }

    impl Both {
        fn new(mk: impl Fn() -> Result<ChainVerifier, VerifyError>) -> Result<Both, VerifyError> {
            Ok(Both {
                decoded: mk()?,
                stored: mk()?,
                linked: mk()?,
            })
        }

        fn check_entry(
            &mut self,
            e: &v1::ChainEntry,
        ) -> Result<Vec<PendingSignature>, VerifyError> {
            let want = self.decoded.check_entry(e);
            let bytes = e.encode_to_vec();
            let in_place = |v: &mut ChainVerifier, s: &StoredEntry<'_>| {
                let mut sigs = vec![EntrySignature {
                    index: u64::MAX,
                    what: "kept",
                    domain: b"",
                    other_body: None,
                    signature: Signature::from_bytes(&[0; 64]),
                    key: VerifyingKey::from_bytes(&[0; 32]).unwrap(),
                }];
                let r = v.check_stored(s, &mut sigs);
                assert_eq!(sigs[0].what, "kept", "what was in the list stays");
                if r.is_err() {
                    assert_eq!(sigs.len(), 1, "a failed entry adds no signature");
                }
                r.map(|()| {
                    sigs[1..]
                        .iter()
                        .map(|x| x.pending(s.fields().body))
                        .collect::<Vec<_>>()
                })
            };
            let s = StoredEntry::parse(&bytes).expect("prost's encoding is read in place");
            let got = in_place(&mut self.stored, &s);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "entry {}", e.index);
            let n = bytes.len();
            let linked = if e.prev_hash.len() == 32 && e.entry_hash.len() == 32 {
                let stored = [&bytes[..n - 68], &bytes[n - 34..]].concat();
                let s = StoredEntry::parse_without_prev_hash(&stored, &e.prev_hash)
                    .expect("read in place without its prev_hash");
                in_place(&mut self.linked, &s)
            } else {
                in_place(&mut self.linked, &s)
            };
            assert_eq!(
                format!("{linked:?}"),
                format!("{want:?}"),
                "entry {}",
                e.index
            );
            want
        }

        fn entries(&self) -> u64 {
            self.decoded.entries()
        }

        fn finish(self) -> Result<Summary, VerifyError> {
            let want = self.decoded.finish();
            let (got, linked) = (self.stored.finish(), self.linked.finish());
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
            assert_eq!(format!("{linked:?}"), format!("{want:?}"));
            want
        }
    }

    /// genesis, principals, a registration, three bets; and a checkpoint of the last entry.
    fn small_chain() -> (Vec<v1::ChainEntry>, v1::Checkpoint) {
        let ledger = SigningKey::from_bytes(&[1; 32]);
        let op = SigningKey::from_bytes(&[2; 32]);
        let dev = SigningKey::from_bytes(&[3; 32]);
        let mut recs = vec![
            (
                RecordKind::Ledger,
                sign_ledger_record(
                    &ledger,
                    1,
                    Record::Genesis(v1::LedgerGenesis {
                        ledger_id: "t".into(),
                        ledger_public_key: ledger.verifying_key().as_bytes().to_vec(),
                    }),
                ),
            ),
            (
                RecordKind::Ledger,
                sign_ledger_record(
                    &ledger,
                    1,
                    Record::PrincipalsDeclared(v1::PrincipalsDeclared {
                        principals: vec![v1::Principal {
                            id: "op".into(),
                            role: 1,
                            public_key: op.verifying_key().as_bytes().to_vec(),
                        }],
                    }),
                ),
            ),
            (
                RecordKind::Event,
                event(
                    &op,
                    "op",
                    1,
                    P::DeviceRegistered(v1::DeviceRegistered {
                        device_id: "t1".into(),
                        public_key: dev.verifying_key().as_bytes().to_vec(),
                        kind: 1,
                        casino_id: "c".into(),
                        ..Default::default()
                    }),
                ),
            ),
        ];
        for s in 1..=3 {
            let bet = P::BetPlaced(v1::BetPlaced {
                table_id: "T".into(),
                round_id: "r".into(),
                bet_id: format!("b{s}"),
                bet_type: "red".into(),
                amount_cents: 100,
                ..Default::default()
            });
            recs.push((RecordKind::Event, event(&dev, "t1", s, bet)));
        }
        let mut prev = GENESIS_PREV_HASH;
        let mut out = Vec::new();
        for (i, (kind, (body, sig))) in recs.into_iter().enumerate() {
            let e = make_entry(&prev, i as u64, 1000 + i as i64, kind, body, sig);
            prev = e.entry_hash.as_slice().try_into().unwrap();
            out.push(e);
        }
        let cp = sign_checkpoint(&ledger, 1, 5, &prev, 2000, "test");
        (out, cp)
    }

    fn run(entries: &[v1::ChainEntry], cp: &v1::Checkpoint) -> Result<Summary, VerifyError> {
        let mut v = Both::new(|| {
            let mut v = ChainVerifier::new(None);
            v.add_checkpoint(cp)?;
            Ok(v)
        })?;
        let mut pending = Vec::new();
        let mut structural = None;
        for e in entries {
            match v.check_entry(e) {
                Ok(p) => pending.extend(p),
                Err(err) => {
                    structural = Some(err);
                    break;
                }
            }
        }
        let ok = verify_many(&pending.iter().map(|p| p.check.clone()).collect::<Vec<_>>());
        let sig = pending
            .iter()
            .zip(ok)
            .find(|(_, ok)| !ok)
            .map(|(p, _)| VerifyError::at(p.index, p.what));
        match (structural, sig) {
            (Some(a), Some(b)) => Err(if b.index < a.index { b } else { a }),
            (Some(a), None) | (None, Some(a)) => Err(a),
            (None, None) => v.finish(),
        }
    }

    #[test]
    fn a_clean_chain_verifies() {
        let (entries, cp) = small_chain();
        let s = run(&entries, &cp).unwrap();
        assert_eq!(
            (s.entries, s.events, s.checkpoints, s.signers),
            (6, 4, 1, 2)
        );
    }

    #[test]
    fn missing_entries_behind_a_checkpoint_are_found() {
        let (entries, cp) = small_chain();
        let e = run(&entries[..4], &cp).unwrap_err();
        assert_eq!(e.index, Some(4), "{e}");
    }

    /// The chain verified with the ledger's `checkpoints` and the `held` ones.
    fn run_holding(
        entries: &[v1::ChainEntry],
        checkpoints: &[v1::Checkpoint],
        held: &[v1::Checkpoint],
    ) -> Result<Summary, VerifyError> {
        let mut v = Both::new(|| {
            let mut v = ChainVerifier::new(None);
            for cp in checkpoints {
                v.add_checkpoint(cp)?;
            }
            for cp in held {
                v.add_held_checkpoint(cp)?;
            }
            Ok(v)
        })?;
        for e in entries {
            v.check_entry(e)?;
        }
        v.finish()
    }

    /// Checkpoints of entries 2 and 5 of [`small_chain`], numbered 1 and 2.
    fn two_checkpoints(entries: &[v1::ChainEntry]) -> [v1::Checkpoint; 2] {
        let ledger = SigningKey::from_bytes(&[1; 32]);
        let hash = |i: usize| -> Hash32 { entries[i].entry_hash.as_slice().try_into().unwrap() };
        [
            sign_checkpoint(&ledger, 1, 2, &hash(2), 1500, "periodic"),
            sign_checkpoint(&ledger, 2, 5, &hash(5), 2000, "shutdown"),
        ]
    }

    /// Cutting the chain after a checkpoint and deleting that checkpoint (and the later ones)
    /// leaves a shorter chain that holds together: only a checkpoint kept out of band shows it.
    #[test]
    fn a_held_checkpoint_finds_checkpoints_deleted_with_the_tail() {
        let (entries, _) = small_chain();
        let cps = two_checkpoints(&entries);
        let s = run_holding(&entries, &cps, &cps[1..]).unwrap();
        assert_eq!((s.checkpoints, s.held_checkpoints), (2, 1));
        let last = s.last_checkpoint.unwrap();
        assert_eq!((last.number, last.index), (2, 5));

        // Cut after entry 3, checkpoint #2 deleted: consistent on its own...
        let s = run_holding(&entries[..4], &cps[..1], &[]).unwrap();
        assert_eq!((s.entries, s.last_checkpoint.unwrap().number), (4, 1));
        // ...but not against checkpoint #2 held out of band.
        let e = run_holding(&entries[..4], &cps[..1], &cps[1..]).unwrap_err();
        assert!(e.what.contains("checkpoints were removed"), "{e}");
        // Checkpoint #2 left in place, the tail cut: found at the first missing entry.
        let e = run_holding(&entries[..4], &cps, &cps[1..]).unwrap_err();
        assert_eq!(e.index, Some(4), "{e}");
        // An older held checkpoint also holds.
        run_holding(&entries, &cps, &cps[..1]).unwrap();
    }

    /// A held checkpoint must be the ledger's own, byte for byte in what it says.
    #[test]
    fn a_held_checkpoint_that_differs_from_the_ledgers_is_refused() {
        let (entries, _) = small_chain();
        let cps = two_checkpoints(&entries);
        let ledger = SigningKey::from_bytes(&[1; 32]);
        let other = sign_checkpoint(&ledger, 2, 4, &[7; 32], 2000, "shutdown");
        let e = run_holding(&entries, &cps, &[other]).unwrap_err();
        assert!(e.what.contains("is not the one you hold"), "{e}");
        // Signed by another key than the ledger's: refused when the key is pinned...
        let stranger = SigningKey::from_bytes(&[9; 32]);
        let forged = sign_checkpoint(&stranger, 2, 5, &[7; 32], 2000, "shutdown");
        let mut v = ChainVerifier::new(Some(ledger.verifying_key()));
        for cp in &cps {
            v.add_checkpoint(cp).unwrap();
        }
        let e = v.add_held_checkpoint(&forged).unwrap_err();
        assert!(e.what.contains("the checkpoint you hold"), "{e}");
        // ...and a damaged signature always.
        let mut bad = cps[1].clone();
        bad.signature[0] ^= 1;
        let e = run_holding(&entries, &cps, &[bad]).unwrap_err();
        assert!(e.what.contains("bad checkpoint signature"), "{e}");
    }

    /// The Merkle root of the entries, by RFC 6962's definition written out here (not the
    /// crate's tree code).
    fn naive_root(entries: &[v1::ChainEntry]) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        fn mth(leaves: &[[u8; 32]]) -> [u8; 32] {
            if leaves.len() == 1 {
                return leaves[0];
            }
            let mut k = 1;
            while k * 2 < leaves.len() {
                k *= 2;
            }
            let mut h = Sha256::new();
            h.update([1u8]);
            h.update(mth(&leaves[..k]));
            h.update(mth(&leaves[k..]));
            h.finalize().into()
        }
        let leaves: Vec<[u8; 32]> = entries
            .iter()
            .map(|e| {
                let mut h = Sha256::new();
                h.update([0u8]);
                h.update(e.encode_to_vec());
                h.finalize().into()
            })
            .collect();
        mth(&leaves)
    }

    #[test]
    fn checkpoints_with_a_tree_are_checked_against_the_entries() {
        // Genesis, principals, a table and 2 bets: entries 0..=4, and 2 more bets after.
        let c = with_table(4);
        let tree_cp = |c: &Chain, number, index: u64, origin: &str, root: [u8; 32]| {
            let hash: Hash32 = c.entries[index as usize]
                .entry_hash
                .as_slice()
                .try_into()
                .unwrap();
            crate::record::sign_checkpoint_with_tree(
                &c.ledger, number, index, &hash, 3000, "test", origin, &root,
            )
            .unwrap()
        };
        let run_with = |cps: &[v1::Checkpoint]| {
            let mut v = Both::new(|| {
                let mut v = ChainVerifier::new(None);
                for cp in cps {
                    v.add_checkpoint(cp)?;
                }
                Ok(v)
            })?;
            for e in &c.entries {
                v.check_entry(e)?;
            }
            v.finish()
        };
        let root4 = naive_root(&c.entries[..5]);
        let good = [
            c.checkpoint(1, 2, 2000),
            tree_cp(&c, 2, 4, "casino-ledger/t", root4),
        ];
        let s = run_with(&good).unwrap();
        assert_eq!(s.tree_checkpoints, 1);
        assert_eq!(s.tree_root, Some(naive_root(&c.entries)));
        // A root that is not the entries' (the ledger's key signed it: an insider's checkpoint).
        let mut wrong = root4;
        wrong[0] ^= 1;
        let e = run_with(&[
            c.checkpoint(1, 2, 2000),
            tree_cp(&c, 2, 4, "casino-ledger/t", wrong),
        ])
        .unwrap_err();
        assert!(e.what.contains("signs Merkle root"), "{e}");
        assert_eq!(e.index, Some(4));
        // The root of fewer entries.
        let e = run_with(&[tree_cp(
            &c,
            1,
            4,
            "casino-ledger/t",
            naive_root(&c.entries[..4]),
        )])
        .unwrap_err();
        assert!(e.what.contains("signs Merkle root"), "{e}");
        // Another ledger's origin.
        let e = run_with(&[tree_cp(&c, 1, 4, "casino-ledger/other", root4)]).unwrap_err();
        assert!(e.what.contains("names log"), "{e}");
        // A checkpoint without a tree after one with.
        let e = run_with(&[
            tree_cp(&c, 1, 3, "casino-ledger/t", naive_root(&c.entries[..4])),
            c.checkpoint(2, 4, 4000),
        ])
        .unwrap_err();
        assert!(e.what.contains("no Merkle tree head"), "{e}");
    }

    /// Builds a chain entry by entry, each signed as the ledger signs it: the ledger's records
    /// with `ledger`, events with the key given.
    struct Chain {
        ledger: SigningKey,
        entries: Vec<v1::ChainEntry>,
        prev: Hash32,
        at_ms: i64,
    }

    impl Chain {
        /// Genesis and the operator `op` (key seed 2) declared.
        fn new() -> Chain {
            let ledger = SigningKey::from_bytes(&[1; 32]);
            let mut c = Chain {
                ledger: ledger.clone(),
                entries: Vec::new(),
                prev: GENESIS_PREV_HASH,
                at_ms: 1000,
            };
            c.record(Record::Genesis(v1::LedgerGenesis {
                ledger_id: "t".into(),
                ledger_public_key: ledger.verifying_key().as_bytes().to_vec(),
            }));
            c.record(principals(&[("op", 1, 2)]));
            c
        }

        fn push(&mut self, kind: RecordKind, (body, sig): (Vec<u8>, Vec<u8>)) -> u64 {
            let i = self.entries.len() as u64;
            let e = make_entry(&self.prev, i, self.at_ms, kind, body, sig);
            self.prev = e.entry_hash.as_slice().try_into().unwrap();
            self.entries.push(e);
            self.at_ms += 1;
            i
        }

        fn record(&mut self, r: Record) -> u64 {
            let signed = sign_ledger_record(&self.ledger, self.at_ms, r);
            self.push(RecordKind::Ledger, signed)
        }

        fn event(&mut self, seed: u8, dev: &str, seq: u64, p: P) -> u64 {
            let key = SigningKey::from_bytes(&[seed; 32]);
            self.push(RecordKind::Event, event(&key, dev, seq, p))
        }

        fn checkpoint(&self, number: u64, index: u64, created_at_ms: i64) -> v1::Checkpoint {
            let hash: Hash32 = self.entries[index as usize]
                .entry_hash
                .as_slice()
                .try_into()
                .unwrap();
            sign_checkpoint(&self.ledger, number, index, &hash, created_at_ms, "test")
        }

        /// Every check, signatures included (the first failure, as `run` finds it).
        fn verify(&self, expected_key: Option<VerifyingKey>) -> Result<Summary, VerifyError> {
            let mut v = Both::new(|| Ok(ChainVerifier::new(expected_key)))?;
            let mut pending = Vec::new();
            for e in &self.entries {
                pending.extend(v.check_entry(e)?);
                assert_eq!(v.entries(), e.index + 1);
            }
            let checks: Vec<_> = pending.iter().map(|p| p.check.clone()).collect();
            if let Some((p, _)) = pending.iter().zip(verify_many(&checks)).find(|(_, ok)| !ok) {
                return Err(VerifyError::at(p.index, p.what));
            }
            v.finish()
        }

        fn refused(&self) -> VerifyError {
            self.verify(None).expect_err("the chain verified")
        }
    }

    /// `(id, role, key seed)` principals.
    fn principals(list: &[(&str, i32, u8)]) -> Record {
        Record::PrincipalsDeclared(v1::PrincipalsDeclared {
            principals: list
                .iter()
                .map(|&(id, role, seed)| v1::Principal {
                    id: id.into(),
                    role,
                    public_key: SigningKey::from_bytes(&[seed; 32])
                        .verifying_key()
                        .as_bytes()
                        .to_vec(),
                })
                .collect(),
        })
    }

    fn registration(dev: &str, seed: u8) -> P {
        P::DeviceRegistered(v1::DeviceRegistered {
            device_id: dev.into(),
            public_key: SigningKey::from_bytes(&[seed; 32])
                .verifying_key()
                .as_bytes()
                .to_vec(),
            kind: 1,
            casino_id: "c".into(),
            ..Default::default()
        })
    }

    fn bet(n: u64) -> P {
        P::BetPlaced(v1::BetPlaced {
            table_id: "T".into(),
            round_id: "r".into(),
            bet_id: format!("b{n}"),
            bet_type: "red".into(),
            amount_cents: 100,
            ..Default::default()
        })
    }

    /// A chain with a registered table `t1` (key seed 3) and `bets` of its bets.
    fn with_table(bets: u64) -> Chain {
        let mut c = Chain::new();
        c.event(2, "op", 1, registration("t1", 3));
        for n in 1..=bets {
            c.event(3, "t1", n, bet(n));
        }
        c
    }

    fn finding(
        dev: &str,
        sequence: u64,
        original_index: u64,
        evidence: (Vec<u8>, Vec<u8>),
    ) -> Record {
        Record::SecurityFinding(v1::SecurityFinding {
            code: "equivocation".into(),
            device_id: dev.into(),
            sequence,
            original_index,
            conflicting: Some(v1::Envelope {
                body: evidence.0,
                signature: evidence.1,
            }),
            detail: String::new(),
        })
    }

    /// What the summary counts: entries, events by payload, ledger records, findings, signers,
    /// revocations, the first and last received times, the genesis key and id.
    #[test]
    fn the_summary_counts_what_the_chain_holds() {
        let mut c = with_table(3);
        let t1 = SigningKey::from_bytes(&[3; 32]);
        let f = c.record(finding("t1", 2, 4, event(&t1, "t1", 2, bet(99))));
        c.event(
            2,
            "op",
            2,
            P::DeviceRevoked(v1::DeviceRevoked {
                device_id: "t1".into(),
                reason: "retired".into(),
            }),
        );
        let s = c.verify(None).unwrap();
        assert_eq!(f, 6);
        assert_eq!(
            (s.entries, s.events, s.ledger_records, s.security_findings),
            (8, 5, 3, 1)
        );
        assert_eq!((s.signers, s.revoked), (2, 1));
        let payloads: Vec<(&str, u64)> = s.payloads.into_iter().collect();
        assert_eq!(
            payloads,
            [
                ("bet_placed", 3),
                ("device_registered", 1),
                ("device_revoked", 1)
            ]
        );
        assert_eq!(
            (s.first_received_at_ms, s.last_received_at_ms),
            (1000, 1007)
        );
        assert_eq!(s.ledger_id, "t");
        assert_eq!(s.ledger_key, Some(c.ledger.verifying_key()));
        assert_eq!(s.head_hash, Some(c.prev));
    }

    /// The genesis comes first and once, and its key must be the one the reader trusts.
    #[test]
    fn the_genesis_is_first_once_and_by_the_trusted_key() {
        let c = with_table(1);
        c.verify(Some(c.ledger.verifying_key())).unwrap();
        let stranger = SigningKey::from_bytes(&[9; 32]).verifying_key();
        let e = c.verify(Some(stranger)).unwrap_err();
        assert_eq!(e.index, Some(0));
        assert!(e.what.contains("but the trusted ledger key is"), "{e}");

        let mut second = with_table(1);
        second.record(Record::Genesis(v1::LedgerGenesis {
            ledger_id: "t".into(),
            ledger_public_key: second.ledger.verifying_key().as_bytes().to_vec(),
        }));
        assert_eq!(
            second.refused(),
            VerifyError::at(4, "a second genesis record")
        );

        // Entry 0 that is not a genesis: a ledger record or an event.
        let mut headless = Chain::new();
        headless.entries.clear();
        headless.prev = GENESIS_PREV_HASH;
        headless.record(principals(&[("op", 1, 2)]));
        assert_eq!(
            headless.refused(),
            VerifyError::at(0, "entry 0 must be the ledger's genesis record")
        );
        let mut headless = Chain::new();
        headless.entries.clear();
        headless.prev = GENESIS_PREV_HASH;
        headless.event(2, "op", 1, registration("t1", 3));
        assert_eq!(
            headless.refused(),
            VerifyError::at(0, "entry 0 must be the ledger's genesis record")
        );
    }

    /// Received times never go back (equal is fine: a group shares one time).
    #[test]
    fn received_times_may_repeat_but_never_go_back() {
        let mut c = with_table(1);
        c.at_ms -= 1; // the next entry has the previous one's time
        c.event(3, "t1", 2, bet(2));
        c.verify(None).unwrap();
        c.at_ms -= 2;
        c.event(3, "t1", 3, bet(3));
        let e = c.refused();
        assert_eq!(e.index, Some(5));
        assert!(e.what.contains("is before the previous entry's"), "{e}");
    }

    /// A finding review is a ledger record like the others: accepted and counted when it is
    /// well formed, refused (at its index, saying why) when it is not.
    #[test]
    fn finding_reviews_are_accepted_when_well_formed() {
        let review = |comment: &str, previous: v1::FindingStatus| {
            Record::FindingReviewed(v1::FindingReviewed {
                finding_id: "0123abcd".into(),
                action: v1::FindingAction::Resolve as i32,
                comment: comment.into(),
                principal: "compliance-lx".into(),
                principal_role: "compliance".into(),
                principal_fingerprint: "ab".repeat(32),
                casino_id: "lisboa".into(),
                code: "RL_WRONG_PAYOUT".into(),
                finding_seq: 3,
                previous_status: previous as i32,
            })
        };
        let mut c = with_table(1);
        c.record(review("paid back", v1::FindingStatus::Acknowledged));
        let s = c.verify(None).unwrap();
        assert_eq!(s.finding_reviews, 1);
        let at = c.record(review("", v1::FindingStatus::Acknowledged));
        let e = c.refused();
        assert_eq!(e.index, Some(at));
        assert!(e.what.contains("comment: required to resolve"), "{e}");
        let mut c = with_table(1);
        let at = c.record(review("again", v1::FindingStatus::Resolved));
        assert_eq!(c.refused().index, Some(at));
    }

    fn clock_step(c: &Chain, after_ms: i64, mono: u64, across_restart: bool) -> Record {
        Record::ClockStep(v1::ClockStep {
            before_ms: c.entries.last().unwrap().received_at_ms,
            after_ms,
            monotonic_elapsed_ms: mono,
            threshold_ms: 1000,
            across_restart,
        })
    }

    /// A witness's refusal is reported; one naming no valid key, a checkpoint after it, or a
    /// size the checkpoint of that number does not have is refused.
    #[test]
    fn witness_refusals_are_reported_and_checked() {
        let refusal = |size: u64, key: Vec<u8>| {
            Record::WitnessRefused(v1::WitnessRefused {
                witness: "inspectorate.example/w1".into(),
                witness_public_key: key,
                checkpoint_number: 1,
                tree_size: size,
                http_status: 409,
                witness_size: 7,
                answer: "7".into(),
            })
        };
        let wkey = SigningKey::from_bytes(&[9; 32])
            .verifying_key()
            .to_bytes()
            .to_vec();
        let mut c = with_table(1);
        let size = c.entries.len() as u64;
        let cp = c.checkpoint(1, size - 1, c.at_ms);
        let at = c.record(refusal(size, wkey.clone()));
        let mut v = ChainVerifier::new(None);
        v.add_checkpoint(&cp).unwrap();
        for e in &c.entries {
            v.check_entry(e).unwrap();
        }
        let s = v.finish().unwrap();
        assert_eq!(
            s.witness_refusals,
            vec![WitnessRefusal {
                index: at,
                witness: "inspectorate.example/w1".into(),
                checkpoint_number: 1,
                tree_size: size,
                http_status: 409,
            }]
        );

        // The checkpoint of that number covers another size.
        let mut c2 = with_table(1);
        let cp = c2.checkpoint(1, size - 2, c2.at_ms);
        c2.record(refusal(size, wkey.clone()));
        let mut v = ChainVerifier::new(None);
        v.add_checkpoint(&cp).unwrap();
        let e = c2
            .entries
            .iter()
            .try_for_each(|e| v.check_entry(e).map(drop))
            .unwrap_err();
        assert!(e.what.contains("covers"), "{e}");

        // A checkpoint that cannot precede the record, and a key that is not one.
        for (size, key, what) in [
            (size + 1, wkey.clone(), "cannot precede"),
            (0, wkey.clone(), "cannot precede"),
            (size, vec![1, 2, 3], "witness_public_key"),
        ] {
            let mut c3 = with_table(1);
            c3.record(refusal(size, key));
            let e = c3.refused();
            assert!(e.what.contains(what), "{what}: {e}");
        }
    }

    /// With a witness named, its cosignatures are counted, a forged one is refused, a witness
    /// that cosigned nothing fails the verification, and so does a refusal it never cosigned
    /// past.
    #[test]
    fn a_named_witness_must_have_cosigned_and_not_disputed_the_end() {
        const W: &str = "inspectorate.example/w1";
        let wkey = SigningKey::from_bytes(&[9; 32]);
        let tree_cp = |c: &Chain, number: u64, index: u64| {
            let hash: Hash32 = c.entries[index as usize]
                .entry_hash
                .as_slice()
                .try_into()
                .unwrap();
            let root = naive_root(&c.entries[..=index as usize]);
            crate::record::sign_checkpoint_with_tree(
                &c.ledger,
                number,
                index,
                &hash,
                3000 + number as i64,
                "test",
                &crate::note::origin_of("t"),
                &root,
            )
            .unwrap()
        };
        let cosigned = |cp: &v1::Checkpoint, by: &SigningKey| {
            let mut n = crate::note::SignedNote::parse(&cp.note).unwrap();
            let mut line = crate::note::cosign(&n.text, W, by, 1_800_000_000).unwrap();
            // A forger signs with its own key under the witness's name and key id.
            line.key_id = crate::note::cosigner_key_id(W, &wkey.verifying_key());
            n.add_signatures(&[line]);
            v1::Checkpoint {
                note: n.encode(),
                ..cp.clone()
            }
        };
        let run = |c: &Chain, cps: &[v1::Checkpoint]| {
            let mut v = ChainVerifier::new(None);
            v.add_witness(W, wkey.verifying_key());
            for cp in cps {
                v.add_checkpoint(cp)?;
            }
            for e in &c.entries {
                v.check_entry(e)?;
            }
            v.finish()
        };
        let mut c = with_table(2);
        let first = tree_cp(&c, 1, c.entries.len() as u64 - 1);
        c.event(3, "t1", 3, bet(3));
        let second = tree_cp(&c, 2, c.entries.len() as u64 - 1);
        let s = run(&c, &[cosigned(&first, &wkey), cosigned(&second, &wkey)]).unwrap();
        let w = &s.witnesses[0];
        assert_eq!(
            (w.cosigned, w.newest),
            (2, Some((2, c.entries.len() as u64)))
        );
        let s = run(&c, &[cosigned(&first, &wkey), second.clone()]).unwrap();
        assert_eq!(s.witnesses[0].newest, Some((1, c.entries.len() as u64 - 1)));

        let forger = SigningKey::from_bytes(&[8; 32]);
        let e = run(&c, &[first.clone(), cosigned(&second, &forger)]).unwrap_err();
        assert!(e.what.contains("does not verify"), "{e}");
        let e = run(&c, &[first.clone(), second.clone()]).unwrap_err();
        assert!(e.what.contains("cosigned none"), "{e}");

        // The witness refused checkpoint #2 and cosigned only #1: disputed.
        let size = c.entries.len() as u64;
        let at = c.record(Record::WitnessRefused(v1::WitnessRefused {
            witness: W.into(),
            witness_public_key: wkey.verifying_key().to_bytes().to_vec(),
            checkpoint_number: 2,
            tree_size: size,
            http_status: 422,
            witness_size: 0,
            answer: String::new(),
        }));
        let e = run(&c, &[cosigned(&first, &wkey), second.clone()]).unwrap_err();
        assert!(
            e.what.contains("refused checkpoint #2") && e.index == Some(at),
            "{e}"
        );
        // Cosigned past the refusal (the witness's state was restored): accepted.
        let third = tree_cp(&c, 3, at);
        let s = run(
            &c,
            &[cosigned(&first, &wkey), second, cosigned(&third, &wkey)],
        )
        .unwrap();
        assert_eq!((s.witnesses[0].refusals, s.witnesses[0].cosigned), (1, 2));
    }

    /// Received times go back only at a clock step record that declares it (and tells the
    /// truth about its neighbours), and the entries after it follow it.
    #[test]
    fn clock_steps_declare_every_decrease() {
        // Forward a year, then back: both declared; events after each follow it.
        let year = 365 * 86_400_000;
        let mut c = with_table(1);
        c.at_ms += year;
        c.record(clock_step(&c, c.at_ms, 5, false));
        c.event(3, "t1", 2, bet(2));
        let ahead = c.at_ms;
        c.at_ms -= year;
        let back = c.record(clock_step(&c, c.at_ms, 20, false));
        c.event(3, "t1", 3, bet(3));
        let s = c.verify(None).unwrap();
        assert_eq!((s.clock_steps, s.events), (2, 4));

        // A checkpoint dated back after the step back is accepted; one covering only entries
        // before it is not.
        let check = |cps: &[v1::Checkpoint]| -> Result<Summary, VerifyError> {
            let mut v = ChainVerifier::new(None);
            for cp in cps {
                v.add_checkpoint(cp)?;
            }
            for e in &c.entries {
                v.check_entry(e)?;
            }
            v.finish()
        };
        check(&[
            c.checkpoint(1, back - 1, ahead),
            c.checkpoint(2, back, ahead - year),
        ])
        .unwrap();
        let e = check(&[
            c.checkpoint(1, back - 2, ahead),
            c.checkpoint(2, back - 1, ahead - year),
        ])
        .unwrap_err();
        assert!(e.what.contains("no clock step back lies in entries"), "{e}");

        // Two days back with no record: refused at the first entry that goes back.
        let mut c = with_table(1);
        c.at_ms -= 2 * 86_400_000;
        let at = c.event(3, "t1", 2, bet(2));
        let e = c.refused();
        assert_eq!(e.index, Some(at));
        assert!(e.what.contains("only a ledger clock step record"), "{e}");

        // An entry after a step back may not go back again without its own record.
        let mut c = with_table(1);
        c.at_ms -= 2 * 86_400_000;
        c.record(clock_step(&c, c.at_ms, 3, false));
        c.at_ms -= 10;
        let at = c.event(3, "t1", 2, bet(2));
        assert_eq!(c.refused().index, Some(at));

        // Across a restart: back only.
        let mut c = with_table(1);
        c.at_ms -= 2 * 86_400_000;
        c.record(clock_step(&c, c.at_ms, 0, true));
        c.event(3, "t1", 2, bet(2));
        c.verify(None).unwrap();

        // Records that lie: about the previous entry's time, about their own, or a step that
        // is none.
        let lies: [fn(&mut v1::ClockStep); 3] = [
            |s| s.before_ms += 1,
            |s| s.after_ms -= 1,
            |s| s.across_restart = true, // with monotonic time: not found at a restart
        ];
        for lie in lies {
            let mut c = with_table(1);
            c.at_ms -= 2 * 86_400_000;
            let Record::ClockStep(mut step) = clock_step(&c, c.at_ms, 3, false) else {
                unreachable!()
            };
            lie(&mut step);
            let at = c.record(Record::ClockStep(step));
            let e = c.refused();
            assert_eq!(e.index, Some(at), "{e}");
            assert!(e.what.contains("clock step"), "{e}");
        }
        // A step record signed by another key than the ledger's.
        let mut c = with_table(1);
        c.at_ms -= 2 * 86_400_000;
        let r = clock_step(&c, c.at_ms, 3, false);
        let signed = sign_ledger_record(&SigningKey::from_bytes(&[9; 32]), c.at_ms, r);
        let at = c.push(RecordKind::Ledger, signed);
        assert_eq!(c.refused(), VerifyError::at(at, "ledger signature"));
    }

    /// Registry rules from the chain's own history: a revoked device signs nothing more, and
    /// sequences are contiguous.
    #[test]
    fn a_revoked_device_signs_nothing_more_and_sequences_are_contiguous() {
        let mut c = with_table(1);
        c.event(
            2,
            "op",
            2,
            P::DeviceRevoked(v1::DeviceRevoked {
                device_id: "t1".into(),
                reason: "retired".into(),
            }),
        );
        c.event(3, "t1", 2, bet(2));
        assert_eq!(
            c.refused(),
            VerifyError::at(5, "signed by t1 which was revoked at entry 4")
        );
        let mut c = with_table(1);
        c.event(3, "t1", 3, bet(3));
        let e = c.refused();
        assert_eq!(e.index, Some(4));
        assert!(e.what.contains("sequences must be contiguous"), "{e}");
    }

    /// Principals are declared by the ledger: a new declaration replaces a key, revokes the
    /// principals it leaves out, and may not take a registered device's id.
    #[test]
    fn principals_are_replaced_revoked_and_never_a_devices_id() {
        // op's key replaced (seed 2 -> 5): op signs with the new key from then on.
        let mut c = Chain::new();
        c.record(principals(&[("op", 1, 5), ("igj", 2, 6)]));
        c.event(5, "op", 1, registration("t1", 3));
        let s = c.verify(None).unwrap();
        assert_eq!((s.signers, s.revoked), (3, 0));
        let mut old_key = Chain::new();
        old_key.record(principals(&[("op", 1, 5)]));
        old_key.event(2, "op", 1, registration("t1", 3));
        assert_eq!(old_key.refused(), VerifyError::at(3, "device signature"));

        // igj left out of the next declaration: revoked.
        c.record(principals(&[("op", 1, 5)]));
        let s = c.verify(None).unwrap();
        assert_eq!((s.signers, s.revoked), (3, 1));

        // A principal with a registered device's id.
        c.record(principals(&[("op", 1, 5), ("t1", 1, 7)]));
        assert_eq!(
            c.refused(),
            VerifyError::at(5, "principal t1 has the id of a registered device")
        );
    }

    /// A security finding carries its evidence: the conflicting envelope of the device and
    /// sequence it names, a sequence already used, an original entry before it, signed by the
    /// device's key.
    #[test]
    fn a_security_finding_must_carry_its_evidence() {
        let t1 = SigningKey::from_bytes(&[3; 32]);
        let with = |f: Record| {
            let mut c = with_table(2);
            c.record(f);
            c
        };
        let conflicting = |seq| event(&t1, "t1", seq, bet(99));
        with(finding("t1", 2, 4, conflicting(2)))
            .verify(None)
            .unwrap();
        with(finding("t1", 1, 3, conflicting(1)))
            .verify(None)
            .unwrap();
        let not_named = "finding evidence is not the device and sequence it names";
        assert_eq!(
            with(finding("t1", 2, 4, conflicting(1))).refused(),
            VerifyError::at(5, not_named)
        );
        let other_device = event(&t1, "t2", 2, bet(99));
        assert_eq!(
            with(finding("t1", 2, 4, other_device)).refused(),
            VerifyError::at(5, not_named)
        );
        let unused = "finding names a sequence that was not yet used";
        assert_eq!(
            with(finding("t1", 3, 4, conflicting(3))).refused(),
            VerifyError::at(5, unused)
        );
        assert_eq!(
            with(finding("t1", 2, 5, conflicting(2))).refused(),
            VerifyError::at(5, unused)
        );
        let forged = event(&SigningKey::from_bytes(&[8; 32]), "t1", 2, bet(99));
        assert_eq!(
            with(finding("t1", 2, 4, forged)).refused(),
            VerifyError::at(5, "finding evidence signature")
        );
    }

    /// Checkpoints come numbered 1, 2, ... and never go back in index or time (two may cover
    /// the same entry, at the same time).
    fn rotation(dev: &str, seed: u8) -> P {
        P::DeviceKeyRotated(v1::DeviceKeyRotated {
            device_id: dev.into(),
            public_key: SigningKey::from_bytes(&[seed; 32])
                .verifying_key()
                .as_bytes()
                .to_vec(),
            reason: "lost".into(),
        })
    }

    /// A device's key rotated by the operator: its sequence goes on under the new key, its
    /// entries before the rotation stay valid under the old one, and the old key signs nothing
    /// after it. Only an operator rotates, only a registered device's key, to another key.
    #[test]
    fn a_rotated_device_key_signs_from_the_rotation_on() {
        let mut c = with_table(2);
        c.event(2, "op", 2, rotation("t1", 4));
        c.event(4, "t1", 3, bet(3));
        let s = c.verify(None).unwrap();
        assert_eq!(s.payloads.get("device_key_rotated"), Some(&1));
        let mut v = ChainVerifier::new(None);
        for e in &c.entries {
            v.check_entry(e).unwrap();
        }
        let t1 = v.signers().find(|s| s.id == "t1").unwrap();
        assert_eq!(
            (t1.key, t1.last_sequence),
            (SigningKey::from_bytes(&[4; 32]).verifying_key(), 3)
        );

        let mut old_key = with_table(2);
        old_key.event(2, "op", 2, rotation("t1", 4));
        let i = old_key.event(3, "t1", 3, bet(3));
        let e = old_key.refused();
        assert_eq!((e.index, e.what.as_str()), (Some(i), "device signature"));

        let mut by_device = with_table(2);
        let i = by_device.event(3, "t1", 3, rotation("t1", 4));
        let e = by_device.refused();
        assert_eq!(e.index, Some(i));
        assert!(e.what.contains("must be signed by a operator key"), "{e}");

        let mut same = with_table(1);
        let i = same.event(2, "op", 2, rotation("t1", 3));
        let e = same.refused();
        assert_eq!(e.index, Some(i));
        assert!(e.what.contains("already has this key"), "{e}");

        let mut unknown = with_table(1);
        let i = unknown.event(2, "op", 2, rotation("t9", 4));
        assert_eq!(unknown.refused().index, Some(i));
    }

    /// The ledger's key rotated by a record the old key signs: later records and checkpoints of
    /// later entries are the new key's, earlier checkpoints stay the old key's, the genesis key
    /// (what a reader pins) stays the identity; the old key signs nothing after the rotation.
    #[test]
    fn the_ledger_key_rotated_by_a_record_of_the_old_key() {
        let old = SigningKey::from_bytes(&[1; 32]);
        let new = SigningKey::from_bytes(&[8; 32]);
        let rotated = || {
            let mut c = with_table(1);
            let cp_before = c.checkpoint(1, 3, 1500);
            let r = c.record(Record::LedgerKeyRotated(v1::LedgerKeyRotated {
                new_public_key: new.verifying_key().as_bytes().to_vec(),
            }));
            c.ledger = new.clone();
            (c, cp_before, r)
        };
        let with_checkpoints = |c: &Chain, cps: &[v1::Checkpoint]| {
            let mut v = ChainVerifier::new(Some(old.verifying_key()));
            for cp in cps {
                v.add_checkpoint(cp)?;
            }
            let mut checks = Vec::new();
            for e in &c.entries {
                checks.extend(v.check_entry(e)?);
            }
            let all: Vec<_> = checks.iter().map(|p| p.check.clone()).collect();
            if let Some((p, _)) = checks.iter().zip(verify_many(&all)).find(|(_, ok)| !ok) {
                return Err(VerifyError::at(p.index, p.what));
            }
            v.finish()
        };

        let (mut c, cp_before, r) = rotated();
        c.record(principals(&[("op", 1, 2)]));
        let cp_after = c.checkpoint(2, r + 1, 2500);
        let s = with_checkpoints(&c, &[cp_before.clone(), cp_after]).unwrap();
        assert_eq!(s.ledger_key, Some(old.verifying_key()));
        assert_eq!(s.current_ledger_key, Some(new.verifying_key()));
        assert_eq!(s.ledger_key_rotations, 1);

        // A record after the rotation signed by the old key.
        let (mut c, _, r) = rotated();
        c.ledger = old.clone();
        c.record(principals(&[("op", 1, 2)]));
        let e = c.verify(Some(old.verifying_key())).unwrap_err();
        assert_eq!(
            (e.index, e.what.as_str()),
            (Some(r + 1), "ledger signature")
        );

        // A checkpoint of the rotation (or later) signed by the old key.
        let (mut c, cp_before, r) = rotated();
        c.ledger = old.clone();
        let stale = c.checkpoint(2, r, 2500);
        let e = with_checkpoints(&c, &[cp_before, stale]).unwrap_err();
        assert!(
            e.what
                .contains("signed by another key than the ledger's at entry"),
            "{e}"
        );

        // A rotation to the key already in force.
        let mut c = with_table(1);
        let i = c.record(Record::LedgerKeyRotated(v1::LedgerKeyRotated {
            new_public_key: old.verifying_key().as_bytes().to_vec(),
        }));
        let e = c.refused();
        assert_eq!(e.index, Some(i));
    }

    /// `verify` holds machines to their pools as ingest does: a captive value for a pool that
    /// does not list the machine is refused, for one that does it passes, the operator's too.
    #[test]
    fn a_machine_reports_only_for_its_own_pools() {
        let base = || {
            let mut c = Chain::new();
            c.event(
                2,
                "op",
                1,
                P::DeviceRegistered(v1::DeviceRegistered {
                    device_id: "slot-1".into(),
                    public_key: SigningKey::from_bytes(&[5; 32])
                        .verifying_key()
                        .as_bytes()
                        .to_vec(),
                    kind: v1::DeviceKind::Machine as i32,
                    casino_id: "c".into(),
                    machine_id: "slot-1".into(),
                    model_id: "K".into(),
                    bet_values_cents: vec![100],
                    ..Default::default()
                }),
            );
            c.event(
                2,
                "op",
                2,
                P::PoolConfigured(v1::PoolConfigured {
                    pool_id: "P1".into(),
                    kind: v1::PoolKind::Jackpot as i32,
                    member_machine_ids: vec!["slot-1".into()],
                    ..Default::default()
                }),
            );
            c
        };
        let captive = |pool: &str| {
            P::CaptiveValueReported(v1::CaptiveValueReported {
                pool_id: pool.into(),
                value_cents: 100,
            })
        };
        let mut ok = base();
        ok.event(5, "slot-1", 1, captive("P1"));
        ok.event(2, "op", 3, captive("P2"));
        ok.verify(None).unwrap();
        let mut bad = base();
        let i = bad.event(5, "slot-1", 1, captive("P2"));
        let e = bad.refused();
        assert_eq!(
            (e.index, e.what.as_str()),
            (Some(i), "pool P2 is not configured")
        );
    }

    /// `verify` holds a table device to its jackpot pool as ingest does: a configuration naming
    /// a pool that does not list the table is refused, one that does passes.
    #[test]
    fn a_table_is_configured_only_with_a_pool_that_lists_it() {
        let config = |pool: &str| {
            P::TableConfigured(v1::TableConfigured {
                table_id: "T".into(),
                casino_id: "c".into(),
                game: "blackjack".into(),
                jackpot: Some(v1::TableJackpot {
                    pool_id: pool.into(),
                    bet_amount_cents: 100,
                    ..Default::default()
                }),
                ..Default::default()
            })
        };
        let pool = |table: &str| {
            P::PoolConfigured(v1::PoolConfigured {
                pool_id: "TJ".into(),
                kind: v1::PoolKind::TableJackpot as i32,
                casino_ids: vec!["c".into()],
                member_table_ids: vec![table.into()],
                ..Default::default()
            })
        };
        let mut ok = with_table(0);
        ok.event(2, "op", 2, pool("T"));
        ok.event(3, "t1", 1, config("TJ"));
        ok.verify(None).unwrap();
        let mut bad = with_table(0);
        bad.event(2, "op", 2, pool("U"));
        let i = bad.event(3, "t1", 1, config("TJ"));
        let e = bad.refused();
        assert_eq!(
            (e.index, e.what.as_str()),
            (Some(i), "table T (device t1) is not a member of pool TJ")
        );
    }

    #[test]
    fn checkpoints_are_numbered_and_never_go_back() {
        let c = with_table(3);
        let add = |cps: &[v1::Checkpoint]| -> Result<(), VerifyError> {
            let mut v = ChainVerifier::new(None);
            cps.iter().try_for_each(|cp| v.add_checkpoint(cp))
        };
        add(&[c.checkpoint(1, 3, 2000), c.checkpoint(2, 3, 2000)]).unwrap();
        add(&[c.checkpoint(1, 3, 2000), c.checkpoint(2, 5, 2001)]).unwrap();
        let e = add(&[c.checkpoint(1, 3, 2000), c.checkpoint(2, 2, 2001)]).unwrap_err();
        assert!(e.what.contains("already covered entry 3"), "{e}");
        // Dated back: accepted as a checkpoint, refused at the end unless a clock step back
        // lies between the entries the two cover (`clock_steps_declare_every_decrease`).
        add(&[c.checkpoint(1, 3, 2000), c.checkpoint(2, 4, 1999)]).unwrap();
        let mut v = ChainVerifier::new(None);
        v.add_checkpoint(&c.checkpoint(1, 3, 2000)).unwrap();
        v.add_checkpoint(&c.checkpoint(2, 4, 1999)).unwrap();
        for e in &c.entries {
            v.check_entry(e).unwrap();
        }
        let e = v.finish().unwrap_err();
        assert!(e.what.contains("is dated before checkpoint #1"), "{e}");
        let e = add(&[c.checkpoint(2, 3, 2000)]).unwrap_err();
        assert!(e.what.contains("checkpoints missing or reordered"), "{e}");

        // A checkpoint of an entry whose hash is not the one it names.
        let mut v = ChainVerifier::new(None);
        let wrong = sign_checkpoint(&c.ledger, 1, 3, &[7; 32], 2000, "test");
        v.add_checkpoint(&wrong).unwrap();
        let e = c
            .entries
            .iter()
            .try_for_each(|e| v.check_entry(e).map(|_| ()))
            .unwrap_err();
        assert_eq!(e.index, Some(3));
        assert!(
            e.what.contains("checkpoint #1 says entry 3 has hash"),
            "{e}"
        );
    }

    #[test]
    fn the_verifier_names_the_signers_it_knows() {
        let c = with_table(1);
        let mut v = ChainVerifier::new(None);
        for e in &c.entries {
            v.check_entry(e).unwrap();
        }
        assert_eq!(v.role_of("op"), Some(SignerRole::Operator));
        assert_eq!(v.role_of("t1"), Some(SignerRole::Table));
        assert_eq!(v.role_of("t2"), None);
        let mut ids: Vec<&str> = v.signers().map(|s| s.id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["op", "t1"]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Any single changed byte, in any field of any entry, is found at that entry's index
        /// (or, for a changed index field, no later).
        #[test]
        fn any_changed_byte_is_found_at_its_index(entry in 0usize..6, field in 0usize..5, pos in any::<usize>(), bit in 0u8..8) {
            let (mut entries, cp) = small_chain();
            let e = &mut entries[entry];
            let flip = |b: &mut Vec<u8>| { let n = b.len(); b[pos % n] ^= 1 << bit; };
            match field {
                0 => flip(&mut e.body),
                1 => flip(&mut e.signature),
                2 => flip(&mut e.prev_hash),
                3 => flip(&mut e.entry_hash),
                _ => e.received_at_ms ^= 1 << bit,
            }
            let err = run(&entries, &cp).unwrap_err();
            prop_assert_eq!(err.index, Some(entry as u64), "{}", err);
        }
    }
}
