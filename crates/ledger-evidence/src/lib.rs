//! Evidence bundles of disputed rounds: [`build`] gathers one from a ledgerd (the round's
//! entries as the ledger stores them, the entries that prove the signers' keys, each entry's
//! inclusion proof in one checkpoint's tree, the audit's adjudication and the round's findings);
//! [`verify`] checks one offline with the ledger's key (and witnesses' keys), down to the payouts
//! recomputed by the rule engine. The format is in docs/evidence.md. Used by `ledgerctl evidence`
//! / `verify --evidence` and by the console's Round and Verify pages.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, VerifyingKey};
use ledger_core::merkle::{self, TreeHash};
use ledger_core::note::{CheckpointText, SignedNote};
use ledger_core::proto::{
    self as v1, audit_client::AuditClient, checkpoints_client::CheckpointsClient,
    event_body::Payload as P, ledger_record_body::Record, proofs_client::ProofsClient,
    query_client::QueryClient,
};
use ledger_core::signing::{self, EVENT_DOMAIN, LEDGER_RECORD_DOMAIN};
use prost::Message;

/// Why a bundle could not be built or was refused: the reason, with its context
/// (`entries[3]: entry is not base64: ...`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Error(String);

impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Error {
        Error(format!("{e:#}"))
    }
}

/// The `format` of an evidence bundle.
pub const FORMAT: &str = "casino-ledger-evidence/v1";

/// Why an entry is in a bundle.
const ROLES: &[&str] = &[
    "genesis",
    "principals",
    "registration",
    "rotation",
    "configuration",
    "opening",
    "event",
    "settlement",
];

/// A signed checkpoint note of a ledger (origin `casino-ledger/...`, or the one of `ledger_id`),
/// checked against the ledger's key; `what` names it in errors.
pub fn checked_note(
    note: &str,
    key: &VerifyingKey,
    ledger_id: Option<&str>,
    what: &str,
) -> Result<CheckpointText, Error> {
    let n = SignedNote::parse(note).with_context(|| what.to_string())?;
    let t = CheckpointText::parse(&n.text).with_context(|| what.to_string())?;
    if let Some(id) = ledger_id {
        let want = ledger_core::note::origin_of(id);
        if t.origin != want {
            return Err(Error(format!(
                "{what}: the note is of log {:?}, not {want:?}",
                t.origin
            )));
        }
    } else if !t.origin.starts_with("casino-ledger/") {
        return Err(Error(format!(
            "{what}: origin {:?} is not a ledger's",
            t.origin
        )));
    }
    n.verify(&t.origin, key)
        .with_context(|| format!("{what}: not signed by the ledger key you gave"))?;
    Ok(t)
}

/// The evidence bundle of round `round` at `table` (empty: the only table that has it), under
/// the latest checkpoint (the latest cosigned one with `cosigned`).
pub async fn build(
    ch: &tonic::transport::Channel,
    table: &str,
    round: &str,
    cosigned: bool,
) -> Result<serde_json::Value, Error> {
    Ok(build_bundle(ch, table, round, cosigned).await?)
}

async fn build_bundle(
    ch: &tonic::transport::Channel,
    table: &str,
    round: &str,
    cosigned: bool,
) -> anyhow::Result<serde_json::Value> {
    let mut audit = AuditClient::new(ch.clone()).max_decoding_message_size(64 << 20);
    let (table, round) = (table.to_string(), round.to_string());
    let detail = audit
        .get_round(v1::GetRoundRequest {
            table_id: table.clone(),
            round_id: round.clone(),
            explain: false,
        })
        .await
        .with_context(|| format!("round {round}"))?
        .into_inner();
    let summary: audit::RoundSummary =
        serde_json::from_str(&detail.summary_json).context("the round's summary")?;

    // Which entries, and why.
    let mut roles: BTreeMap<u64, &str> = BTreeMap::new();
    roles.insert(summary.config_index, "configuration");
    roles.insert(summary.opened_index, "opening");
    for &i in &summary.event_indexes {
        roles.insert(i, "event");
    }
    roles.insert(summary.closed_index, "settlement");
    roles.insert(0, "genesis");
    let mut signers = BTreeSet::new();
    for e in &detail.entries {
        if e.kind == v1::RecordKind::Event as i32
            && let Ok(b) = v1::EventBody::decode(e.body.as_slice())
        {
            signers.insert(b.device_id);
        }
    }
    let last = *roles.keys().next_back().expect("entries");
    prove_signers(ch, &signers, last, &mut roles).await?;
    let (note, entries) = proven_entries(ch, &roles, cosigned).await?;
    let findings: Vec<serde_json::Value> = detail
        .findings
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    let bundle = serde_json::json!({
        "format": FORMAT,
        "kind": "round",
        "table_id": summary.table_id,
        "round_id": summary.round_id,
        "checkpoint": note,
        "entries": entries,
        "round": serde_json::from_str::<serde_json::Value>(&detail.summary_json)?,
        "adjudication": serde_json::from_str::<serde_json::Value>(&detail.adjudication_json)?,
        "findings": findings,
    });
    Ok(bundle)
}

/// Add to `roles` the entries that prove the keys of `signers` (devices or principals) as of
/// entry `until`: each device's registration and the operator's key rotations of it before
/// `until`, and the principals' declarations of the operators who signed those.
async fn prove_signers(
    ch: &tonic::transport::Channel,
    signers: &BTreeSet<String>,
    until: u64,
    roles: &mut BTreeMap<u64, &'static str>,
) -> anyhow::Result<()> {
    let mut query = QueryClient::new(ch.clone());
    let mut principals = BTreeSet::new();
    let mut operators = BTreeMap::new();
    for id in signers {
        let d = query
            .get_device(v1::GetDeviceRequest {
                device_id: id.clone(),
            })
            .await
            .with_context(|| format!("device {id}"))?
            .into_inner();
        if d.kind == "operator" || d.kind == "regulator" {
            principals.insert(d.registered_at_index);
            continue;
        }
        roles.entry(d.registered_at_index).or_insert("registration");
        // The registration's signer: an operator principal, declared by the ledger.
        let reg = proofs_entry(ch, d.registered_at_index, 0).await?.entry;
        let by = reg
            .and_then(|e| v1::EventBody::decode(e.body.as_slice()).ok())
            .map(|b| b.device_id)
            .with_context(|| {
                format!(
                    "device {id}: the ledger did not return its registration entry {} as an event",
                    d.registered_at_index
                )
            })?;
        let op = query
            .get_device(v1::GetDeviceRequest {
                device_id: by.clone(),
            })
            .await
            .with_context(|| format!("principal {by}"))?
            .into_inner();
        principals.insert(op.registered_at_index);
        operators
            .entry(by)
            .or_insert_with(BTreeSet::new)
            .insert(id.clone());
    }
    // Key rotations (operator-signed, `ledgerctl device rotate-key`) of those devices before
    // `until`: the operator's own entries say where.
    for (op, devices) in &operators {
        let mut s = query
            .list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: op.clone(),
                from_sequence: 0,
            })
            .await
            .with_context(|| format!("the entries of principal {op}"))?
            .into_inner();
        while let Some(e) = s.message().await? {
            if e.index >= until {
                break;
            }
            if let Ok(b) = v1::EventBody::decode(e.body.as_slice())
                && let Some(P::DeviceKeyRotated(r)) = b.payload
                && devices.contains(&r.device_id)
            {
                roles.entry(e.index).or_insert("rotation");
            }
        }
    }
    for i in principals {
        roles.entry(i).or_insert("principals");
    }
    roles.insert(0, "genesis");
    Ok(())
}

/// The latest checkpoint (cosigned, with `cosigned`) that covers every entry of `roles`, and
/// each entry with its role and inclusion proof in that checkpoint's tree.
async fn proven_entries(
    ch: &tonic::transport::Channel,
    roles: &BTreeMap<u64, &'static str>,
    cosigned: bool,
) -> anyhow::Result<(String, Vec<serde_json::Value>)> {
    let cp = CheckpointsClient::new(ch.clone())
        .get_latest(v1::GetCheckpointRequest { cosigned })
        .await
        .context("the latest checkpoint")?
        .into_inner();
    if cp.note.is_empty() {
        bail!("the latest checkpoint has no tree head (a ledger older than the tree)");
    }
    let text = CheckpointText::parse(&SignedNote::parse(&cp.note)?.text)?;
    let last = *roles.keys().next_back().expect("entries");
    if text.size <= last {
        bail!(
            "the latest {}checkpoint covers {} entries, not entry {last}: ask for a new one \
             (`ledgerctl checkpoint` as regulator or admin) and run this again",
            if cosigned { "cosigned " } else { "" },
            text.size
        );
    }
    let mut entries = Vec::new();
    for (&index, role) in roles {
        let p = proofs_entry(ch, index, text.size).await?;
        let e = p.entry.context("the ledger sent no entry")?;
        entries.push(serde_json::json!({
            "index": index,
            "role": role,
            "entry": B64.encode(e.encode_to_vec()),
            "proof": p.hashes.iter().map(|h| B64.encode(h)).collect::<Vec<_>>(),
        }));
    }
    Ok((cp.note, entries))
}

/// The most events a device bundle holds.
pub const MAX_DEVICE_EVENTS: u64 = 10_000;

/// The evidence bundle of device `device`'s events of sequences `from..=to` (what a machine's
/// or a table's dispute is about: meters, games, a transfer): the events as the ledger stores
/// them, the entries that prove the device's key, each entry's proof in the latest
/// (`cosigned`: cosigned) checkpoint's tree.
pub async fn build_device(
    ch: &tonic::transport::Channel,
    device: &str,
    from: u64,
    to: u64,
    cosigned: bool,
) -> Result<serde_json::Value, Error> {
    Ok(build_device_bundle(ch, device, from, to, cosigned).await?)
}

async fn build_device_bundle(
    ch: &tonic::transport::Channel,
    device: &str,
    from: u64,
    to: u64,
    cosigned: bool,
) -> anyhow::Result<serde_json::Value> {
    if from == 0 || to < from {
        bail!("sequences {from}..{to}: the first is 1 or more and the last not before it");
    }
    if to - from + 1 > MAX_DEVICE_EVENTS {
        bail!(
            "sequences {from}..{to}: at most {MAX_DEVICE_EVENTS} events a bundle; split the range"
        );
    }
    let mut s = QueryClient::new(ch.clone())
        .max_decoding_message_size(64 << 20)
        .list_device_entries(v1::ListDeviceEntriesRequest {
            device_id: device.to_string(),
            from_sequence: from,
        })
        .await
        .with_context(|| format!("the entries of device {device}"))?
        .into_inner();
    let mut roles: BTreeMap<u64, &'static str> = BTreeMap::new();
    let mut next = from;
    while let Some(e) = s.message().await? {
        let b = v1::EventBody::decode(e.body.as_slice())
            .with_context(|| format!("entry {}", e.index))?;
        if b.sequence > to {
            break;
        }
        if b.sequence != next {
            bail!(
                "the ledger gave sequence {} of device {device} where {next} was due",
                b.sequence
            );
        }
        roles.insert(e.index, "event");
        next += 1;
    }
    if next <= to {
        bail!(
            "device {device} has no event of sequence {next} in the ledger (its events {from}..{to} were asked)"
        );
    }
    drop(s);
    let last = *roles.keys().next_back().expect("events");
    prove_signers(ch, &BTreeSet::from([device.to_string()]), last, &mut roles).await?;
    let (note, entries) = proven_entries(ch, &roles, cosigned).await?;
    Ok(serde_json::json!({
        "format": FORMAT,
        "kind": "device",
        "device_id": device,
        "from_sequence": from,
        "to_sequence": to,
        "checkpoint": note,
        "entries": entries,
    }))
}

async fn proofs_entry(
    ch: &tonic::transport::Channel,
    index: u64,
    tree_size: u64,
) -> anyhow::Result<v1::InclusionProof> {
    Ok(ProofsClient::new(ch.clone())
        .get_inclusion_proof(v1::InclusionProofRequest {
            entry: Some(v1::inclusion_proof_request::Entry::Index(index)),
            tree_size,
        })
        .await
        .with_context(|| format!("the proof of entry {index}"))?
        .into_inner())
}

/// A witness's verifier key, `<name>+<hex key id>+<base64(type ‖ key)>` as `ledgerctl witness
/// serve` prints it: type 0x04 (an ed25519 `cosignature/v1` key) or 0x06 (ML-DSA-44).
pub fn parse_witness_vkey(s: &str) -> Result<(String, ledger_core::note::CosignerKey), Error> {
    ledger_core::note::CosignerKey::parse_vkey(s)
        .map_err(|e| Error(format!("--witness-key {:?}: {e}", s.trim())))
}

/// What [`verify`] established.
#[derive(Debug)]
pub struct Verified {
    pub origin: String,
    pub tree_size: u64,
    pub entries: usize,
    pub signatures: usize,
    pub witnesses: Vec<(String, u64)>,
    pub table_id: String,
    pub round_id: String,
    pub bets: usize,
    pub due_player_net_cents: i64,
    pub findings_rederived: usize,
    pub audit_findings: Vec<String>,
    pub sequence_gaps: Vec<String>,
    /// A device bundle's device and its sequences (first, last); round fields are empty then.
    pub device: Option<(String, u64, u64)>,
}

fn str_of<'a>(v: &'a serde_json::Value, name: &str) -> anyhow::Result<&'a str> {
    v.get(name)
        .and_then(|x| x.as_str())
        .with_context(|| format!("no \"{name}\" text"))
}

/// Check a bundle offline with the ledger's key and the witnesses' keys.
pub fn verify(
    bundle: &serde_json::Value,
    ledger_key: &VerifyingKey,
    witnesses: &[(String, ledger_core::note::CosignerKey)],
) -> Result<Verified, Error> {
    Ok(verify_bundle(bundle, ledger_key, witnesses)?)
}

fn verify_bundle(
    bundle: &serde_json::Value,
    ledger_key: &VerifyingKey,
    witnesses: &[(String, ledger_core::note::CosignerKey)],
) -> anyhow::Result<Verified> {
    if bundle.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        bail!("not an evidence bundle (format is not {FORMAT:?})");
    }
    let kind = bundle.get("kind").and_then(|f| f.as_str());
    if !matches!(kind, Some("round" | "device")) {
        bail!("kind: a bundle is of a \"round\" or a \"device\"");
    }
    // The checkpoint: the ledger's signature, and each witness's cosignature.
    let note = str_of(bundle, "checkpoint")?;
    let cp = checked_note(note, ledger_key, None, "checkpoint")?;
    let signed = SignedNote::parse(note)?;
    let mut cosigned = Vec::new();
    for (name, key) in witnesses {
        let at = signed
            .cosigned_by(name, key)
            .with_context(|| format!("the checkpoint is not cosigned by witness {name}"))?;
        cosigned.push((name.clone(), at));
    }

    // Every entry in the checkpoint's tree.
    let mut by_index: BTreeMap<u64, (v1::ChainEntry, String)> = BTreeMap::new();
    let list = bundle
        .get("entries")
        .and_then(|e| e.as_array())
        .context("no \"entries\" list")?;
    for (k, item) in list.iter().enumerate() {
        let what = format!("entries[{k}]");
        let index = item
            .get("index")
            .and_then(|i| i.as_u64())
            .with_context(|| format!("{what}: no index"))?;
        let role = str_of(item, "role").with_context(|| what.clone())?;
        if !ROLES.contains(&role) {
            bail!("{what}: unknown role {role:?}");
        }
        let bytes = B64
            .decode(str_of(item, "entry").with_context(|| what.clone())?)
            .with_context(|| format!("{what}: entry is not base64"))?;
        let entry = v1::ChainEntry::decode(bytes.as_slice())
            .with_context(|| format!("{what}: not a ChainEntry"))?;
        if entry.index != index {
            bail!(
                "{what}: the entry says index {}, the bundle {index}",
                entry.index
            );
        }
        let proof: Vec<TreeHash> = item
            .get("proof")
            .and_then(|p| p.as_array())
            .with_context(|| format!("{what}: no proof"))?
            .iter()
            .map(|h| {
                h.as_str()
                    .and_then(|s| B64.decode(s).ok())
                    .and_then(|b| TreeHash::try_from(b).ok())
                    .with_context(|| format!("{what}: a proof hash is not 32 bytes in base64"))
            })
            .collect::<anyhow::Result<_>>()?;
        merkle::verify_inclusion(&merkle::leaf_hash(&bytes), index, cp.size, &proof, &cp.root)
            .with_context(|| {
                format!(
                    "entry {index} is not in the checkpoint's tree of {} entries",
                    cp.size
                )
            })?;
        let prev: [u8; 32] = entry
            .prev_hash
            .as_slice()
            .try_into()
            .with_context(|| format!("entry {index}: prev_hash is not 32 bytes"))?;
        let kind = ledger_core::RecordKind::from_proto(entry.kind)
            .with_context(|| format!("entry {index}: unknown kind"))?;
        let again = ledger_core::make_entry(
            &prev,
            index,
            entry.received_at_ms,
            kind,
            entry.body.clone(),
            entry.signature.clone(),
        );
        if again.entry_hash != entry.entry_hash {
            bail!("entry {index}: its entry_hash is not the hash of its contents");
        }
        if by_index.insert(index, (entry, role.to_string())).is_some() {
            bail!("entry {index} is in the bundle twice");
        }
    }

    // Every signature, from the ledger's key down: the ledger signs the principals, an operator
    // registers each device, each device signs its events.
    let mut principals: BTreeMap<String, VerifyingKey> = BTreeMap::new();
    let mut devices: BTreeMap<String, VerifyingKey> = BTreeMap::new();
    let mut signatures = 0;
    for (index, (e, role)) in &by_index {
        let sig = Signature::from_slice(&e.signature)
            .with_context(|| format!("entry {index}: the signature is not 64 bytes"))?;
        if e.kind == v1::RecordKind::Ledger as i32 {
            if !signing::verify_strict(ledger_key, LEDGER_RECORD_DOMAIN, &e.body, &sig) {
                bail!("entry {index} ({role}): not signed by the ledger key");
            }
            signatures += 1;
            let body = v1::LedgerRecordBody::decode(e.body.as_slice())
                .with_context(|| format!("entry {index}: not a ledger record"))?;
            match body.record {
                Some(Record::Genesis(g)) => {
                    if *index != 0 || g.ledger_public_key != ledger_key.as_bytes() {
                        bail!("entry {index}: a genesis that is not this ledger's first entry");
                    }
                    if cp.origin != ledger_core::note::origin_of(&g.ledger_id) {
                        bail!(
                            "the checkpoint is of {:?}, the genesis names ledger {:?}",
                            cp.origin,
                            g.ledger_id
                        );
                    }
                }
                Some(Record::PrincipalsDeclared(d)) => {
                    principals.clear();
                    for p in d.principals {
                        let k = signing::parse_public_key(&p.public_key)
                            .with_context(|| format!("entry {index}: principal {}", p.id))?;
                        principals.insert(p.id, k);
                    }
                }
                _ => {}
            }
            continue;
        }
        let body = v1::EventBody::decode(e.body.as_slice())
            .with_context(|| format!("entry {index}: not an event"))?;
        let key = principals
            .get(&body.device_id)
            .or_else(|| devices.get(&body.device_id))
            .with_context(|| {
                format!(
                    "entry {index} ({role}) is signed by {}, whose key the bundle does not prove",
                    body.device_id
                )
            })?;
        if !signing::verify_strict(key, EVENT_DOMAIN, &e.body, &sig) {
            bail!(
                "entry {index} ({role}): the signature is not {}'s (a changed event?)",
                body.device_id
            );
        }
        signatures += 1;
        match body.payload {
            Some(P::DeviceRegistered(r)) if principals.contains_key(&body.device_id) => {
                let k = signing::parse_public_key(&r.public_key)
                    .with_context(|| format!("entry {index}: device {}", r.device_id))?;
                devices.insert(r.device_id, k);
            }
            Some(P::DeviceKeyRotated(r)) if principals.contains_key(&body.device_id) => {
                let k = signing::parse_public_key(&r.public_key)
                    .with_context(|| format!("entry {index}: device {}", r.device_id))?;
                devices.insert(r.device_id, k);
            }
            _ => {}
        }
    }

    if kind == Some("device") {
        return verify_device(bundle, &by_index, cp, cosigned, signatures);
    }

    // The round: exactly the entries its summary names, adjudicated again.
    let summary: audit::RoundSummary = serde_json::from_value(
        bundle
            .get("round")
            .cloned()
            .context("no \"round\" summary")?,
    )
    .context("round: not a round summary")?;
    let named: BTreeSet<u64> = [
        summary.config_index,
        summary.opened_index,
        summary.closed_index,
    ]
    .into_iter()
    .chain(summary.event_indexes.iter().copied())
    .collect();
    let in_round: BTreeSet<u64> = by_index
        .iter()
        .filter(|(_, (_, r))| {
            ["configuration", "opening", "event", "settlement"].contains(&r.as_str())
        })
        .map(|(i, _)| *i)
        .collect();
    if named != in_round {
        bail!(
            "the round names entries {:?}, the bundle's round entries are {:?}",
            named,
            in_round
        );
    }
    let (_, adjudication) = ledger_audit::query::readjudicate(
        &summary,
        |i| {
            by_index.get(&i).map(|(e, _)| e.clone()).ok_or_else(|| {
                ledger_audit::query::QueryError::Invalid(format!("entry {i} is missing"))
            })
        },
        false,
    )
    .map_err(|e| anyhow::anyhow!("the rules cannot adjudicate the round: {e}"))?;
    let recomputed = serde_json::to_value(&adjudication)?;
    let stated = bundle.get("adjudication").context("no \"adjudication\"")?;
    if &recomputed != stated {
        bail!(
            "the adjudication in the bundle is not what the rules give for these events: {}",
            first_difference(stated, &recomputed)
        );
    }

    // Findings: one for each violation and each discrepancy the rules give, and no other of the
    // engine's; the audit's own (AUDIT_*, SECURITY_*) are listed as such.
    let stated: Vec<v1::Finding> = bundle
        .get("findings")
        .and_then(|f| f.as_array())
        .context("no \"findings\" list")?
        .iter()
        .map(|f| serde_json::from_value(f.clone()))
        .collect::<Result<_, _>>()
        .context("findings: not findings")?;
    type Key = (String, String, String, Option<i64>, Option<i64>);
    let mut want: Vec<Key> = adjudication
        .violations
        .iter()
        .map(|v| {
            (
                v.code.to_string(),
                v.citation.to_string(),
                v.bet_id.as_ref().map(|b| b.to_string()).unwrap_or_default(),
                None,
                None,
            )
        })
        .chain(adjudication.discrepancies.iter().map(|d| {
            (
                d.code.to_string(),
                d.citation.to_string(),
                d.bet_id.to_string(),
                Some(d.due_net_cents),
                d.reported_net_cents,
            )
        }))
        .collect();
    let mut audit_findings = Vec::new();
    for f in &stated {
        if f.round_id != summary.round_id || f.table_id != summary.table_id {
            bail!(
                "finding {} is about round {} at {}, not this round",
                f.id,
                f.round_id,
                f.table_id
            );
        }
        if f.code.starts_with("AUDIT_") || f.code.starts_with("SECURITY_") {
            audit_findings.push(format!("{} {}", f.code, f.id));
            continue;
        }
        let key: Key = (
            f.code.clone(),
            f.citation.clone(),
            f.bet_id.clone(),
            f.due_cents,
            f.reported_cents,
        );
        let Some(at) = want.iter().position(|w| *w == key) else {
            bail!(
                "finding {} ({} {}, bet {:?}) does not follow from the events: the rules give no such breach",
                f.id,
                f.code,
                f.citation,
                f.bet_id
            );
        };
        want.remove(at);
    }
    if let Some((code, citation, bet, ..)) = want.first() {
        bail!(
            "the rules find {code} ({citation}, bet {bet:?}) in this round, and the bundle has no finding for it"
        );
    }

    // Each device's events in the round: contiguous sequences, or the gap named.
    let mut seqs: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for i in &summary.event_indexes {
        if let Some((e, _)) = by_index.get(i)
            && let Ok(b) = v1::EventBody::decode(e.body.as_slice())
        {
            seqs.entry(b.device_id).or_default().push(b.sequence);
        }
    }
    let mut sequence_gaps = Vec::new();
    for (d, s) in &seqs {
        for w in s.windows(2) {
            if w[1] != w[0] + 1 {
                sequence_gaps.push(format!("{d} {}..{}", w[0] + 1, w[1] - 1));
            }
        }
    }
    let due: i64 = adjudication.bets.iter().map(|b| b.due_net_cents).sum();
    Ok(Verified {
        origin: cp.origin,
        tree_size: cp.size,
        entries: by_index.len(),
        signatures,
        witnesses: cosigned,
        table_id: summary.table_id,
        round_id: summary.round_id,
        bets: adjudication.bets.len(),
        due_player_net_cents: due,
        findings_rederived: stated.len() - audit_findings.len(),
        audit_findings,
        sequence_gaps,
        device: None,
    })
}

/// A device bundle: its events are exactly the device's sequences `from_sequence..=to_sequence`,
/// each once, in the ledger's order (their signatures and proofs are checked by the caller).
fn verify_device(
    bundle: &serde_json::Value,
    by_index: &BTreeMap<u64, (v1::ChainEntry, String)>,
    cp: CheckpointText,
    cosigned: Vec<(String, u64)>,
    signatures: usize,
) -> anyhow::Result<Verified> {
    let device = str_of(bundle, "device_id")?;
    let seq = |name: &str| {
        bundle
            .get(name)
            .and_then(|x| x.as_u64())
            .with_context(|| format!("no \"{name}\" number"))
    };
    let (from, to) = (seq("from_sequence")?, seq("to_sequence")?);
    if from == 0 || to < from {
        bail!("sequences {from}..{to} are not a range");
    }
    let mut next = from;
    for (index, (e, role)) in by_index {
        if role != "event" {
            if !["genesis", "principals", "registration", "rotation"].contains(&role.as_str()) {
                bail!("entry {index}: the role \"{role}\" has no place in a device bundle");
            }
            continue;
        }
        let b = v1::EventBody::decode(e.body.as_slice())
            .with_context(|| format!("entry {index}: not an event"))?;
        if b.device_id != device {
            bail!("entry {index} is {}'s event, not {device}'s", b.device_id);
        }
        if b.sequence != next {
            bail!(
                "entry {index} is {device}'s sequence {}, where {next} was due: the bundle is not its events {from}..{to}",
                b.sequence
            );
        }
        next += 1;
    }
    if next != to + 1 {
        bail!(
            "the bundle holds {device}'s events {from}..{}, not up to {to}",
            next - 1
        );
    }
    Ok(Verified {
        origin: cp.origin,
        tree_size: cp.size,
        entries: by_index.len(),
        signatures,
        witnesses: cosigned,
        table_id: String::new(),
        round_id: String::new(),
        bets: 0,
        due_player_net_cents: 0,
        findings_rederived: 0,
        audit_findings: Vec::new(),
        sequence_gaps: Vec::new(),
        device: Some((device.to_string(), from, to)),
    })
}

/// Where two JSON values first differ, as a path and the two values (short).
fn first_difference(a: &serde_json::Value, b: &serde_json::Value) -> String {
    fn walk(a: &serde_json::Value, b: &serde_json::Value, path: String) -> Option<String> {
        use serde_json::Value as V;
        match (a, b) {
            (V::Object(x), V::Object(y)) => {
                let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                keys.into_iter().find_map(|k| {
                    walk(
                        x.get(k).unwrap_or(&V::Null),
                        y.get(k).unwrap_or(&V::Null),
                        format!("{path}.{k}"),
                    )
                })
            }
            (V::Array(x), V::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| walk(p, q, format!("{path}[{i}]"))),
            _ if a == b => None,
            _ => Some(format!("{path}: the bundle says {a}, the rules give {b}")),
        }
    }
    walk(a, b, "adjudication".into()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../../../docs/examples/evidence-round.json");
    const KEY: &str = include_str!("../../../docs/examples/evidence-ledger.pub");

    fn example() -> (serde_json::Value, VerifyingKey) {
        (
            serde_json::from_str(EXAMPLE).unwrap(),
            signing::parse_public_key_hex(KEY.trim()).unwrap(),
        )
    }

    /// The example in docs/evidence.md verifies, and says what it proves.
    #[test]
    fn the_documented_example_verifies() {
        let (b, key) = example();
        let v = verify(&b, &key, &[]).unwrap();
        assert_eq!(v.round_id, "T02-roulette-french-00004");
        assert_eq!((v.entries, v.signatures), (22, 22));
        assert_eq!(v.findings_rederived, 1);
        assert!(v.sequence_gaps.is_empty(), "{:?}", v.sequence_gaps);
    }

    /// The checks that e2e tampering does not reach: keys, roles, counts and kinds.
    #[test]
    fn a_bundle_is_refused_for_what_it_cannot_prove() {
        let (b, key) = example();
        let err = |b: &serde_json::Value| format!("{:#}", verify(b, &key, &[]).unwrap_err());
        let other = ed25519_dalek::SigningKey::from_bytes(&[4; 32]).verifying_key();
        assert!(
            format!("{:#}", verify(&b, &other, &[]).unwrap_err())
                .contains("not signed by the ledger key")
        );
        // Without the registration, the device's key is not proven.
        let mut x = b.clone();
        x["entries"]
            .as_array_mut()
            .unwrap()
            .retain(|e| e["role"] != "registration");
        assert!(
            err(&x).contains("whose key the bundle does not prove"),
            "{}",
            err(&x)
        );
        // Without the principals' declaration, the registration's signer is not proven either.
        let mut x = b.clone();
        x["entries"]
            .as_array_mut()
            .unwrap()
            .retain(|e| e["role"] != "principals");
        assert!(
            err(&x).contains("whose key the bundle does not prove"),
            "{}",
            err(&x)
        );
        let mut x = b.clone();
        x["entries"][4]["role"] = "witness".into();
        assert!(err(&x).contains("unknown role"));
        let mut x = b.clone();
        let dup = x["entries"][5].clone();
        x["entries"].as_array_mut().unwrap().push(dup);
        assert!(err(&x).contains("twice"));
        let mut x = b.clone();
        x["entries"][5]["index"] = 7.into();
        assert!(err(&x).contains("the entry says index"));
        let mut x = b.clone();
        x["format"] = "casino-ledger-evidence/v0".into();
        assert!(err(&x).contains("not an evidence bundle"));
        // A finding of another round cannot be slipped in.
        let mut x = b.clone();
        x["findings"][0]["roundId"] = "T02-roulette-french-00005".into();
        assert!(err(&x).contains("not this round"));
        // A witness key that is not well formed.
        assert!(parse_witness_vkey("w+00000000+AAAA").is_err());
        let w = ledger_core::note::cosigner_vkey("w.example/1", &other);
        // A key whose base64 holds a '+'.
        let plus = (0u8..=255)
            .map(|i| ed25519_dalek::SigningKey::from_bytes(&[i; 32]).verifying_key())
            .find(|k| {
                ledger_core::note::cosigner_vkey("w", k)
                    .matches('+')
                    .count()
                    > 2
            })
            .unwrap();
        let vk = ledger_core::note::cosigner_vkey("w", &plus);
        assert_eq!(
            parse_witness_vkey(&vk).unwrap(),
            ("w".to_string(), plus.into())
        );
        assert_eq!(
            parse_witness_vkey(&w).unwrap(),
            ("w.example/1".to_string(), other.into())
        );
        assert!(parse_witness_vkey(&w.replacen("w.example/1", "w.example/2", 1)).is_err());
    }

    /// The example's checkpoint is the demo ledger's, and not another's when one is named.
    #[test]
    fn a_checkpoint_is_checked_against_the_ledger_named() {
        let (b, key) = example();
        let n = b["checkpoint"].as_str().unwrap();
        let t = checked_note(n, &key, Some("casino-ledger-demo"), "checkpoint").unwrap();
        assert_eq!(
            (t.origin.as_str(), t.size),
            ("casino-ledger/casino-ledger-demo", 16339)
        );
        let e = checked_note(n, &key, Some("casino-lisboa"), "checkpoint").unwrap_err();
        assert_eq!(
            e.to_string(),
            "checkpoint: the note is of log \"casino-ledger/casino-ledger-demo\", not \"casino-ledger/casino-lisboa\""
        );
    }

    /// The audit's own findings (AUDIT_*, SECURITY_*) are listed as such, not rederived; a
    /// finding of the engine's must follow from the events, and each the rules give be there.
    #[test]
    fn findings_are_rederived_or_listed_as_the_audits() {
        let (b, key) = example();
        let mut x = b.clone();
        let mut audit = x["findings"][0].clone();
        audit["code"] = "AUDIT_SEQUENCE_GAP".into();
        audit["id"] = "Fa1".into();
        x["findings"].as_array_mut().unwrap().push(audit);
        let v = verify(&x, &key, &[]).unwrap();
        assert_eq!(v.audit_findings, ["AUDIT_SEQUENCE_GAP Fa1"]);
        assert_eq!(v.findings_rederived, 1);
        let mut security = x["findings"][0].clone();
        security["code"] = "SECURITY_EQUIVOCATION".into();
        security["id"] = "Fs1".into();
        x["findings"].as_array_mut().unwrap().push(security);
        let v = verify(&x, &key, &[]).unwrap();
        assert_eq!(
            v.audit_findings,
            ["AUDIT_SEQUENCE_GAP Fa1", "SECURITY_EQUIVOCATION Fs1"]
        );
        assert_eq!(v.findings_rederived, 1);

        let mut x = b.clone();
        x["findings"][0]["code"] = "RL_WRONG_BALL".into();
        let e = verify(&x, &key, &[]).unwrap_err().to_string();
        assert!(e.contains("does not follow from the events"), "{e}");
        let mut x = b.clone();
        x["findings"].as_array_mut().unwrap().clear();
        let e = verify(&x, &key, &[]).unwrap_err().to_string();
        assert!(
            e.contains("the rules find RL_WRONG_PAYOUT")
                && e.contains("and the bundle has no finding for it"),
            "{e}"
        );
        // A finding of another table cannot be slipped in either.
        let mut x = b.clone();
        x["findings"][0]["tableId"] = "T03-roulette-french".into();
        let e = verify(&x, &key, &[]).unwrap_err().to_string();
        assert!(e.contains("not this round"), "{e}");
    }

    /// An adjudication that is not the rules' is refused, with where it first differs.
    #[test]
    fn a_changed_adjudication_is_refused_where_it_differs() {
        let (b, key) = example();
        let mut x = b.clone();
        let due = x["adjudication"]["bets"][0]["due_net_cents"]
            .as_i64()
            .unwrap();
        x["adjudication"]["bets"][0]["due_net_cents"] = (due + 1).into();
        let e = verify(&x, &key, &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "the adjudication in the bundle is not what the rules give for these events: \
                 adjudication.bets[0].due_net_cents: the bundle says {}, the rules give {due}",
                due + 1
            )
        );
        // A bet left out: lists of other lengths are shown whole.
        let mut x = b.clone();
        x["adjudication"]["bets"].as_array_mut().unwrap().pop();
        let e = verify(&x, &key, &[]).unwrap_err().to_string();
        assert!(
            e.contains("for these events: adjudication.bets: the bundle says [{"),
            "{e}"
        );
        assert_eq!(first_difference(&b, &b), "");
    }

    /// The round's entries are exactly those its summary names.
    #[test]
    fn a_round_entry_left_out_is_named() {
        let (b, key) = example();
        let mut x = b.clone();
        x["entries"]
            .as_array_mut()
            .unwrap()
            .retain(|e| e["index"] != 1075);
        let e = verify(&x, &key, &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("the round names entries") && e.contains("1075"),
            "{e}"
        );
    }

    /// An ML-DSA-44 vkey (type 0x06) is a witness key too; its id must match.
    #[test]
    fn an_ml_dsa_44_witness_vkey_parses() {
        use ledger_core::note::{CosignerKey, ml_dsa_44_from_seed, ml_dsa_44_public};
        let k = CosignerKey::from(ml_dsa_44_public(&ml_dsa_44_from_seed(&[3; 32])));
        let v = k.vkey("w.example/1");
        assert_eq!(
            parse_witness_vkey(&v).unwrap(),
            ("w.example/1".to_string(), k)
        );
        let e = parse_witness_vkey(&v.replacen("w.example/1", "w.example/2", 1)).unwrap_err();
        assert!(e.to_string().contains("--witness-key"), "{e}");
    }
}
