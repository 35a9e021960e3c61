//! Offline verification of a whole chain, one entry at a time (memory grows with the number of
//! signers and checkpoints, never with the number of entries).
//!
//! [`ChainVerifier::check_entry`] recomputes the entry's hashes and link, decodes the signed body,
//! and applies the registry, authorisation and sequence rules from the chain's own history. It
//! returns the signatures to check rather than checking them, so a caller can verify them in
//! batches, on other threads; [`crate::signing::verify_many`] does that. The first broken index
//! is the smallest index at which either kind of check failed.

use std::collections::{BTreeMap, HashMap, HashSet};

use ed25519_dalek::VerifyingKey;
use ledger_proto::v1::{self, ledger_record_body::Record};

use crate::event::{Event, Payload};
use crate::hashing::{GENESIS_PREV_HASH, Hash32, entry_hash, hex32, record_hash};
use crate::record::{
    CheckpointInfo, ENTRY_FORMAT, RecordKind, check_checkpoint, decode_ledger_record,
};
use crate::signers::{
    Signer, SignerRole, authorize, check_registration, check_revocation, principal_from_proto,
};
use crate::signing::{
    EVENT_DOMAIN, LEDGER_RECORD_DOMAIN, SignatureCheck, parse_public_key, parse_signature,
    signed_message,
};

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

/// Recompute an entry's hash from its stored fields, check it links to `prev_hash` and matches the
/// stored hash. Returns the hash.
pub fn check_link(
    entry: &v1::ChainEntry,
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
    if entry.prev_hash.as_slice() != prev_hash {
        return Err(VerifyError::at(
            i,
            format!(
                "prev_hash {} does not match the previous entry's hash {}",
                hex::encode(&entry.prev_hash),
                hex32(prev_hash)
            ),
        ));
    }
    let rh = record_hash(kind, &entry.body, &entry.signature);
    let h = entry_hash(prev_hash, i, entry.received_at_ms, kind, &rh);
    if entry.entry_hash.as_slice() != h {
        return Err(VerifyError::at(
            i,
            format!(
                "stored entry_hash {} but the content hashes to {}",
                hex::encode(&entry.entry_hash),
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
    pub checkpoints: u64,
    pub signers: u64,
    pub revoked: u64,
    pub head_hash: Option<Hash32>,
    pub ledger_key: Option<VerifyingKey>,
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
}

/// The streaming verifier.
pub struct ChainVerifier {
    expected_key: Option<VerifyingKey>,
    ledger_key: Option<VerifyingKey>,
    next_index: u64,
    prev_hash: Hash32,
    last_received_at_ms: i64,
    signers: HashMap<String, Signer>,
    /// Checkpoints by the index they cover.
    checkpoints: BTreeMap<u64, Vec<CheckpointInfo>>,
    checkpoint_count: u64,
    last_checkpoint: Option<CheckpointInfo>,
    /// Checkpoints the caller holds out of band.
    held: u64,
    summary: Summary,
}

impl ChainVerifier {
    /// `expected_key`: the ledger key the regulator trusts (out of band); when `None`, the key in
    /// the genesis record is used and reported.
    pub fn new(expected_key: Option<VerifyingKey>) -> ChainVerifier {
        ChainVerifier {
            expected_key,
            ledger_key: None,
            next_index: 0,
            prev_hash: GENESIS_PREV_HASH,
            last_received_at_ms: i64::MIN,
            signers: HashMap::new(),
            checkpoints: BTreeMap::new(),
            checkpoint_count: 0,
            last_checkpoint: None,
            held: 0,
            summary: Summary::default(),
        }
    }

    /// Add the checkpoints, oldest first, before the entries. Checks their signatures, numbering
    /// and that none goes back on an earlier one (index and time never decrease).
    pub fn add_checkpoint(&mut self, cp: &v1::Checkpoint) -> Result<(), VerifyError> {
        let n = self.checkpoint_count + 1;
        let info = check_checkpoint(cp, self.expected_key.as_ref())
            .map_err(|e| VerifyError::general(format!("checkpoint #{n}: {e}")))?;
        if info.number != n {
            return Err(VerifyError::general(format!(
                "checkpoint #{n} is numbered {} (checkpoints missing or reordered)",
                info.number
            )));
        }
        if let Some(last) = &self.last_checkpoint {
            let (num, idx) = (last.number, last.index);
            if info.index < idx {
                return Err(VerifyError::general(format!(
                    "checkpoint #{} covers entry {} but the earlier checkpoint #{num} already covered entry {idx}",
                    info.number, info.index
                )));
            }
            if info.created_at_ms < last.created_at_ms {
                return Err(VerifyError::general(format!(
                    "checkpoint #{} is dated before checkpoint #{num}",
                    info.number
                )));
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
        let held = check_checkpoint(cp, self.expected_key.as_ref())
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
        let i = self.next_index;
        let h = check_link(entry, i, &self.prev_hash)?;
        if entry.received_at_ms < self.last_received_at_ms {
            return Err(VerifyError::at(
                i,
                format!(
                    "received_at_ms {} is before the previous entry's {}",
                    entry.received_at_ms, self.last_received_at_ms
                ),
            ));
        }
        let sig =
            parse_signature(&entry.signature).map_err(|e| VerifyError::at(i, e.to_string()))?;
        let mut pending = Vec::with_capacity(1);
        match RecordKind::from_proto(entry.kind) {
            Some(RecordKind::Event) => {
                if i == 0 {
                    return Err(VerifyError::at(
                        0,
                        "entry 0 must be the ledger's genesis record",
                    ));
                }
                let ev =
                    Event::decode(&entry.body).map_err(|e| VerifyError::at(i, e.to_string()))?;
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
                if ev.sequence != signer.last_sequence + 1 {
                    return Err(VerifyError::at(
                        i,
                        format!(
                            "{} sequence {} but the previous was {} (sequences must be contiguous)",
                            ev.device_id, ev.sequence, signer.last_sequence
                        ),
                    ));
                }
                pending.push(PendingSignature {
                    index: i,
                    what: "device signature",
                    check: SignatureCheck {
                        message: signed_message(EVENT_DOMAIN, &entry.body),
                        signature: sig,
                        key: signer.key,
                    },
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
                    _ => {}
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
                let rec = decode_ledger_record(&entry.body).map_err(|e| VerifyError::at(i, e))?;
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
                pending.push(PendingSignature {
                    index: i,
                    what: "ledger signature",
                    check: SignatureCheck {
                        message: signed_message(LEDGER_RECORD_DOMAIN, &entry.body),
                        signature: sig,
                        key,
                    },
                });
                match &rec.record {
                    Some(Record::PrincipalsDeclared(p)) => self.declare_principals(i, p)?,
                    Some(Record::SecurityFinding(f)) => {
                        pending.push(self.check_finding(i, f)?);
                        self.summary.security_findings += 1;
                    }
                    _ => {}
                }
                self.summary.ledger_records += 1;
            }
            None => unreachable!("check_link refuses unknown kinds"),
        }
        if let Some(cps) = self.checkpoints.get(&i) {
            for cp in cps {
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
        Ok(pending)
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
    ) -> Result<PendingSignature, VerifyError> {
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
        Ok(PendingSignature {
            index: i,
            what: "finding evidence signature",
            check: SignatureCheck {
                message: signed_message(EVENT_DOMAIN, &env.body),
                signature: sig,
                key: signer.key,
            },
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
        let key = self.ledger_key.expect("genesis checked");
        for cp in self.checkpoints.values().flatten() {
            if cp.ledger_public_key != key {
                return Err(VerifyError::general(format!(
                    "checkpoint #{} is signed by another key than the ledger's",
                    cp.number
                )));
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
        s.ledger_key = self.ledger_key;
        s.last_checkpoint = self.last_checkpoint;
        s.held_checkpoints = self.held;
        Ok(self.summary)
    }

    /// The signers known so far (for reports).
    pub fn signers(&self) -> impl Iterator<Item = &Signer> {
        self.signers.values()
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
        let mut v = ChainVerifier::new(None);
        v.add_checkpoint(cp)?;
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
        let mut v = ChainVerifier::new(None);
        for cp in checkpoints {
            v.add_checkpoint(cp)?;
        }
        for cp in held {
            v.add_held_checkpoint(cp)?;
        }
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
