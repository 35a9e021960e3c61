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
//! Building and checking are in `ledger-evidence` (shared with the console); this is the CLI.

use anyhow::{Context, bail};
use ed25519_dalek::VerifyingKey;
use ledger_core::proto::{self as v1, audit_client::AuditClient};

use crate::common::{self, ServerArg};

pub use ledger_evidence::{Verified, parse_witness_vkey};

/// [`ledger_evidence::build`].
pub async fn build(
    ch: &tonic::transport::Channel,
    table: &str,
    round: &str,
    cosigned: bool,
) -> anyhow::Result<serde_json::Value> {
    Ok(ledger_evidence::build(ch, table, round, cosigned).await?)
}

/// [`ledger_evidence::verify`].
pub fn verify(
    bundle: &serde_json::Value,
    ledger_key: &VerifyingKey,
    witnesses: &[(String, ledger_core::note::CosignerKey)],
) -> anyhow::Result<Verified> {
    Ok(ledger_evidence::verify(bundle, ledger_key, witnesses)?)
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArg,
    /// The round to bundle.
    #[arg(long, required_unless_present_any = ["finding", "device"])]
    pub round: Option<String>,
    /// The round's table (needed when the round id was used at several tables).
    #[arg(long)]
    pub table: Option<String>,
    /// Bundle the round of this finding (its id, as `ledgerctl findings` shows it).
    #[arg(long, conflicts_with = "round")]
    pub finding: Option<String>,
    /// Bundle this device's events (with --from-seq and --to-seq) instead of a round.
    #[arg(long, conflicts_with_all = ["round", "finding", "table"], requires_all = ["from_seq", "to_seq"])]
    pub device: Option<String>,
    /// The device's first sequence in the bundle.
    #[arg(long, value_name = "SEQ", requires = "device")]
    pub from_seq: Option<u64>,
    /// The device's last sequence in the bundle.
    #[arg(long, value_name = "SEQ", requires = "device")]
    pub to_seq: Option<u64>,
    /// Use the newest checkpoint the configured witnesses cosigned.
    #[arg(long)]
    pub cosigned: bool,
    /// Write the bundle here.
    #[arg(long, short)]
    pub out: std::path::PathBuf,
}

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
    if let (Some(d), Some(from), Some(to)) = (&a.device, a.from_seq, a.to_seq) {
        let bundle = ledger_evidence::build_device(&ch, d, from, to, a.cosigned).await?;
        let text_out = serde_json::to_string_pretty(&bundle)? + "\n";
        std::fs::write(&a.out, text_out).with_context(|| format!("--out {}", a.out.display()))?;
        let entries = bundle["entries"].as_array().map_or(0, Vec::len);
        if json {
            println!(
                "{}",
                serde_json::json!({"written": a.out.display().to_string(), "device_id": d,
                    "from_sequence": from, "to_sequence": to, "entries": entries})
            );
        } else {
            println!(
                "evidence of device {d}'s events {from}..{to} written to {}: {entries} entries with their proofs",
                a.out.display()
            );
        }
        return Ok(0);
    }
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
        .map(|w| parse_witness_vkey(w).map_err(anyhow::Error::from))
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
                "sequence_gaps": v.sequence_gaps,
                "device": v.device.as_ref().map(|(d, from, to)| serde_json::json!({"device_id": d, "from_sequence": from, "to_sequence": to}))})
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
        if let Some((d, from, to)) = &v.device {
            println!("  device {d}'s events {from}..{to}, each once, in the ledger's order");
            return Ok(0);
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
