//! Shared bits: the runtime, the server argument, output helpers.

use std::io::IsTerminal;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ledger_core::proto as v1;

/// Default ledger address.
pub const DEFAULT_SERVER: &str = "127.0.0.1:50051";

/// `--server`, shared by the commands that talk to ledgerd.
#[derive(clap::Args, Debug, Clone)]
pub struct ServerArg {
    /// ledgerd's gRPC address (https:// when --tls-ca is given, else http://, unless it names
    /// its scheme).
    #[arg(long, env = "LEDGER_SERVER", default_value = DEFAULT_SERVER, value_name = "URL")]
    pub server: String,
}

pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

pub async fn channel(server: &str) -> anyhow::Result<tonic::transport::Channel> {
    ledger_agent::connect(server)
        .await
        .with_context(|| format!("is ledgerd running at {server}?"))
}

/// A progress bar on a terminal (stderr), hidden otherwise.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {human_pos}/{human_len} ({per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// Receipt status as a word.
pub fn status_name(r: &v1::Receipt) -> &'static str {
    match v1::ReceiptStatus::try_from(r.status) {
        Ok(v1::ReceiptStatus::Accepted) => "accepted",
        Ok(v1::ReceiptStatus::Duplicate) => "duplicate",
        Ok(v1::ReceiptStatus::Rejected) => "rejected",
        Ok(v1::ReceiptStatus::Equivocation) => "equivocation",
        _ => "unknown",
    }
}

pub fn reason_name(r: &v1::Receipt) -> String {
    v1::RejectReason::try_from(r.reason)
        .map(|x| {
            x.as_str_name()
                .trim_start_matches("REJECT_REASON_")
                .to_lowercase()
        })
        .unwrap_or_else(|_| format!("reason {}", r.reason))
}

/// A receipt as JSON.
pub fn receipt_json(r: &v1::Receipt) -> serde_json::Value {
    serde_json::json!({
        "status": status_name(r),
        "position": r.position,
        "device_id": r.device_id,
        "sequence": r.sequence,
        "index": r.index,
        "entry_hash": hex::encode(&r.entry_hash),
        "received_at_ms": r.received_at_ms,
        "reason": if r.reason == 0 { serde_json::Value::Null } else { reason_name(r).into() },
        "expected_sequence": r.expected_sequence,
        "detail": r.detail,
    })
}

/// A receipt for a human.
pub fn receipt_line(r: &v1::Receipt) -> String {
    match status_name(r) {
        "accepted" | "duplicate" | "equivocation" => format!(
            "{} {}#{} at index {} hash {}{}",
            status_name(r),
            r.device_id,
            r.sequence,
            r.index,
            hex::encode(&r.entry_hash),
            if r.detail.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.detail)
            }
        ),
        _ => format!("rejected ({}): {}", reason_name(r), r.detail),
    }
}

/// An entry as JSON: its place and hashes, and its content decoded (`event`: the event body,
/// or `record`: the ledger's record, in the proto's canonical JSON mapping; null when the body
/// does not decode), besides the signed bytes (`body`, hex) for independent checks.
pub fn entry_json(e: &v1::ChainEntry) -> serde_json::Value {
    let (what, signer, seq) = describe(e);
    let ledger = e.kind == v1::RecordKind::Ledger as i32;
    serde_json::json!({
        "index": e.index,
        "received_at_ms": e.received_at_ms,
        "kind": if ledger { "ledger" } else { "event" },
        "signer": signer,
        "sequence": seq,
        "what": what,
        (if ledger { "record" } else { "event" }): decoded(e),
        "entry_hash": hex::encode(&e.entry_hash),
        "body": hex::encode(&e.body),
        "signature": hex::encode(&e.signature),
    })
}

/// The entry's body decoded, in the proto's canonical JSON mapping (ledger-proto's `json`
/// feature, pbjson); null when it does not decode.
fn decoded(e: &v1::ChainEntry) -> serde_json::Value {
    use prost::Message;
    let json = if e.kind == v1::RecordKind::Ledger as i32 {
        ledger_core::record::decode_ledger_record(&e.body)
            .ok()
            .map(serde_json::to_value)
    } else {
        v1::EventBody::decode(e.body.as_slice())
            .ok()
            .map(serde_json::to_value)
    };
    json.and_then(Result::ok).unwrap_or(serde_json::Value::Null)
}

/// An event's own fields for a line of text: the payload's JSON object, compact (`{}` for
/// one without fields); empty for a ledger record or a body that does not decode.
fn payload_text(e: &v1::ChainEntry) -> String {
    if e.kind == v1::RecordKind::Ledger as i32 {
        return String::new();
    }
    match decoded(e) {
        serde_json::Value::Object(m) => m
            .into_iter()
            .find(|(k, _)| !matches!(k.as_str(), "deviceId" | "sequence" | "occurredAtMs"))
            .map(|(_, v)| v.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// Print a stream of entries, one line each (`entry_line`, or `entry_json` with `json`), until
/// it ends or `limit` entries are printed (`tail`, `device entries`).
pub async fn print_entries(
    mut s: tonic::Streaming<v1::ChainEntry>,
    limit: Option<u64>,
    json: bool,
) -> anyhow::Result<()> {
    let mut n = 0;
    while limit.is_none_or(|l| n < l) {
        // While it waits for the next entry, a closed stdout (`| head -2` satisfied) ends it.
        let next = tokio::select! {
            m = s.message() => m?,
            () = crate::out::closed() => crate::out::reader_gone(),
        };
        let Some(e) = next else {
            break;
        };
        if json {
            println!("{}", entry_json(&e));
        } else {
            println!("{}", entry_line(&e));
        }
        n += 1;
    }
    Ok(())
}

pub fn entry_line(e: &v1::ChainEntry) -> String {
    let (what, signer, seq) = describe(e);
    let t = chrono::DateTime::from_timestamp_millis(e.received_at_ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default();
    let fields = payload_text(e);
    format!(
        "{:>8} {t} {:<20} #{:<6} {what}{}{fields}  {}",
        e.index,
        signer,
        seq,
        if fields.is_empty() { "" } else { " " },
        &hex::encode(&e.entry_hash)[..16]
    )
}

fn describe(e: &v1::ChainEntry) -> (String, String, u64) {
    use prost::Message;
    if e.kind == v1::RecordKind::Ledger as i32 {
        let what = match ledger_core::record::decode_ledger_record(&e.body)
            .ok()
            .and_then(|r| r.record)
        {
            Some(v1::ledger_record_body::Record::Genesis(g)) => {
                format!("genesis of ledger {}", g.ledger_id)
            }
            Some(v1::ledger_record_body::Record::PrincipalsDeclared(p)) => {
                format!(
                    "principals declared: {}",
                    p.principals
                        .iter()
                        .map(|x| x.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            Some(v1::ledger_record_body::Record::SecurityFinding(f)) => {
                format!("SECURITY FINDING {}: {}", f.code, f.detail)
            }
            Some(v1::ledger_record_body::Record::LedgerKeyRotated(r)) => {
                format!("ledger key rotated to {}", hex::encode(&r.new_public_key))
            }
            Some(v1::ledger_record_body::Record::ClockStep(s)) => format!(
                "CLOCK STEP of the ledger's wall clock from {} to {} ms ({} ms of monotonic time{})",
                s.before_ms,
                s.after_ms,
                s.monotonic_elapsed_ms,
                if s.across_restart {
                    ", found at a restart"
                } else {
                    ""
                }
            ),
            Some(v1::ledger_record_body::Record::WitnessRefused(w)) => format!(
                "WITNESS REFUSED checkpoint #{} (tree size {}): {} answered {}{}{}",
                w.checkpoint_number,
                w.tree_size,
                w.witness,
                w.http_status,
                if w.http_status == 409 {
                    format!(", holding tree size {}", w.witness_size)
                } else {
                    String::new()
                },
                if w.answer.is_empty() {
                    String::new()
                } else {
                    format!(": {}", w.answer)
                }
            ),
            Some(v1::ledger_record_body::Record::FindingReviewed(r)) => format!(
                "FINDING REVIEWED {} {} by {} ({}, key {}): {}",
                r.finding_id,
                ledger_core::review::action_name(
                    v1::FindingAction::try_from(r.action).unwrap_or_default()
                ),
                r.principal,
                r.principal_role,
                r.principal_fingerprint
                    .get(..16)
                    .unwrap_or(&r.principal_fingerprint),
                r.comment.escape_debug()
            ),
            None => "unreadable ledger record".into(),
        };
        return (what, "ledger".into(), 0);
    }
    match v1::EventBody::decode(e.body.as_slice()) {
        Ok(b) => {
            let what = b
                .payload
                .as_ref()
                .map(ledger_core::event::payload_name)
                .unwrap_or("?")
                .to_string();
            (what, b.device_id, b.sequence)
        }
        Err(_) => ("undecodable body".into(), "?".into(), 0),
    }
}
