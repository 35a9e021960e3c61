//! Evidence bundles: `ledgerctl evidence --round ID` writes one self-contained file for a
//! disputed round; `ledgerctl verify --evidence FILE --ledger-key K` checks it offline, down to
//! the payouts recomputed by the rule engine. The format is in docs/evidence.md.
//!
//! A bundle holds the round's entries as the ledger stores them (configuration in force,
//! opening, events, settlement), the entries that prove the signers' keys (genesis, the
//! principals' declaration, each device's registration), each entry's inclusion proof in the tree
//! of one checkpoint (cosigned by witnesses when the ledger has them), the audit's adjudication,
//! and the round's findings. The check proves every entry against the checkpoint, every signature
//! from the ledger key down, runs the rules again and compares the adjudication and the findings.

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

use crate::common::{self, ServerArg};

/// The `format` of an evidence bundle.
pub const FORMAT: &str = "casino-ledger-evidence/v1";

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArg,
    /// The round to bundle.
    #[arg(long, required_unless_present = "finding")]
    pub round: Option<String>,
    /// The round's table (needed when the round id was used at several tables).
    #[arg(long)]
    pub table: Option<String>,
    /// Bundle the round of this finding (its id, as `ledgerctl findings` shows it).
    #[arg(long, conflicts_with = "round")]
    pub finding: Option<String>,
    /// Use the newest checkpoint the configured witnesses cosigned.
    #[arg(long)]
    pub cosigned: bool,
    /// Write the bundle here.
    #[arg(long, short)]
    pub out: std::path::PathBuf,
}

/// Why an entry is in a bundle.
const ROLES: &[&str] = &[
    "genesis",
    "principals",
    "registration",
    "configuration",
    "opening",
    "event",
    "settlement",
];

/// The round (table, round id) of finding `id`.
async fn round_of_finding(
    audit: &mut AuditClient<tonic::transport::Channel>,
    id: &str,
) -> anyhow::Result<(String, String)> {
    let mut after = None;
    loop {
        let page = audit
            .list_findings(v1::ListFindingsRequest {
                after_seq: after,
                limit: 10_000,
                ..Default::default()
            })
            .await?
            .into_inner();
        if let Some(f) = page.findings.iter().find(|f| f.id == id) {
            if f.round_id.is_empty() {
                bail!(
                    "--finding {id}: finding {} ({}) is not about a table round; bundles are of rounds",
                    f.id,
                    f.code
                );
            }
            return Ok((f.table_id.clone(), f.round_id.clone()));
        }
        match page.next_after_seq {
            Some(n) => after = Some(n),
            None => bail!("--finding {id}: no finding has this id"),
        }
    }
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    let ch = common::channel(&a.server.server).await?;
    let mut audit = AuditClient::new(ch.clone()).max_decoding_message_size(64 << 20);
    let (table, round) = match (&a.finding, &a.round) {
        (Some(id), _) => round_of_finding(&mut audit, id).await?,
        (None, Some(r)) => (a.table.clone().unwrap_or_default(), r.clone()),
        (None, None) => bail!("give --round or --finding"),
    };
    let bundle = build(&ch, &table, &round, a.cosigned).await?;
    let text_out = serde_json::to_string_pretty(&bundle)? + "\n";
    std::fs::write(&a.out, text_out).with_context(|| format!("--out {}", a.out.display()))?;
    let (entries, findings) = (
        bundle["entries"].as_array().map_or(0, Vec::len),
        bundle["findings"].as_array().map_or(0, Vec::len),
    );
    if json {
        println!(
            "{}",
            serde_json::json!({"written": a.out.display().to_string(), "round_id": bundle["round_id"],
                "table_id": bundle["table_id"], "entries": entries, "findings": findings})
        );
    } else {
        println!(
            "evidence of round {} at table {} written to {}: {entries} entries with their proofs, \
             {findings} findings",
            bundle["round_id"].as_str().unwrap_or_default(),
            bundle["table_id"].as_str().unwrap_or_default(),
            a.out.display(),
        );
    }
    Ok(0)
}

/// The evidence bundle of round `round` at `table` (empty: the only table that has it), under
/// the latest checkpoint (the latest cosigned one with `cosigned`).
pub async fn build(
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
    let mut query = QueryClient::new(ch.clone());
    let mut signers = BTreeSet::new();
    for e in &detail.entries {
        if e.kind == v1::RecordKind::Event as i32
            && let Ok(b) = v1::EventBody::decode(e.body.as_slice())
        {
            signers.insert(b.device_id);
        }
    }
    let mut principals = BTreeSet::new();
    for id in &signers {
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
            .context("the registration entry")?;
        let op = query
            .get_device(v1::GetDeviceRequest {
                device_id: by.clone(),
            })
            .await
            .with_context(|| format!("principal {by}"))?
            .into_inner();
        principals.insert(op.registered_at_index);
    }
    for i in principals {
        roles.entry(i).or_insert("principals");
    }

    // One checkpoint covering every entry, and each entry's proof in its tree.
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
    for (&index, role) in &roles {
        let p = proofs_entry(ch, index, text.size).await?;
        let e = p.entry.context("the ledger sent no entry")?;
        entries.push(serde_json::json!({
            "index": index,
            "role": role,
            "entry": B64.encode(e.encode_to_vec()),
            "proof": p.hashes.iter().map(|h| B64.encode(h)).collect::<Vec<_>>(),
        }));
    }
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
        "checkpoint": cp.note,
        "entries": entries,
        "round": serde_json::from_str::<serde_json::Value>(&detail.summary_json)?,
        "adjudication": serde_json::from_str::<serde_json::Value>(&detail.adjudication_json)?,
        "findings": findings,
    });
    Ok(bundle)
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
pub fn parse_witness_vkey(s: &str) -> anyhow::Result<(String, ledger_core::note::CosignerKey)> {
    ledger_core::note::CosignerKey::parse_vkey(s)
        .map_err(|e| anyhow::anyhow!("--witness-key {:?}: {e}", s.trim()))
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
) -> anyhow::Result<Verified> {
    if bundle.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        bail!("not an evidence bundle (format is not {FORMAT:?})");
    }
    if bundle.get("kind").and_then(|f| f.as_str()) != Some("round") {
        bail!("kind: only \"round\" bundles exist");
    }
    // The checkpoint: the ledger's signature, and each witness's cosignature.
    let note = str_of(bundle, "checkpoint")?;
    let cp = crate::prove::checked_note(note, ledger_key, None, "checkpoint")?;
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

/// `ledgerctl verify --evidence FILE`.
pub fn run_verify(
    file: &std::path::Path,
    ledger_key: &VerifyingKey,
    witness_keys: &[String],
    json: bool,
) -> anyhow::Result<i32> {
    let what = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| what.clone())?;
    let bundle: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{what}: not JSON"))?;
    let witnesses = witness_keys
        .iter()
        .map(|w| parse_witness_vkey(w))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let v = verify(&bundle, ledger_key, &witnesses).with_context(|| format!("{what}: REFUSED"))?;
    if json {
        println!(
            "{}",
            serde_json::json!({"ok": true, "evidence": what, "origin": v.origin,
                "tree_size": v.tree_size, "entries": v.entries, "signatures": v.signatures,
                "witnesses": v.witnesses.iter().map(|(n, t)| serde_json::json!({"name": n, "timestamp": t})).collect::<Vec<_>>(),
                "table_id": v.table_id, "round_id": v.round_id, "bets": v.bets,
                "due_player_net_cents": v.due_player_net_cents,
                "findings_rederived": v.findings_rederived, "audit_findings": v.audit_findings,
                "sequence_gaps": v.sequence_gaps})
        );
    } else {
        println!("OK: {what}");
        println!(
            "  {} entries in {}'s tree of {} entries; {} signatures checked from the ledger key down",
            v.entries, v.origin, v.tree_size, v.signatures
        );
        for (n, t) in &v.witnesses {
            println!("  cosigned by witness {n} (at {t})");
        }
        println!(
            "  round {} at table {}: the rules give the same adjudication ({} bets, players' net due {})",
            v.round_id,
            v.table_id,
            v.bets,
            crate::present::eur_signed(v.due_player_net_cents)
        );
        println!(
            "  {} findings follow from the events{}",
            v.findings_rederived,
            if v.audit_findings.is_empty() {
                String::new()
            } else {
                format!("; the audit's own: {}", v.audit_findings.join(", "))
            }
        );
        for g in &v.sequence_gaps {
            println!(
                "  note: the round holds no event of sequences {g} (other tables' or rounds')"
            );
        }
    }
    Ok(0)
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
