//! `ledgerctl device register|revoke|rotate-key|list|show|entries`.

use std::path::PathBuf;

use anyhow::{Context, bail};
use ledger_agent::DeviceSigner;
use ledger_core::proto::{self as v1, event_body::Payload, query_client::QueryClient};

use crate::common::{self, ServerArg};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Register a device and its public key (an event signed by an operator key).
    Register(Register),
    /// Revoke a device: its later events are rejected (an event signed by an operator key).
    Revoke(Revoke),
    /// Replace a device's key; its sequence goes on (an event signed by an operator key).
    RotateKey(RotateKey),
    /// List every device and principal the ledger knows, with its last sequence number.
    List(List),
    /// One device and its registration, key rotations and revocation (entry, time, signer).
    Show(Show),
    /// One device's entries in sequence order, as `tail` prints them.
    Entries(Entries),
}

/// Who signs a registry event.
#[derive(clap::Args, Debug)]
pub struct Operator {
    /// The operator's secret key file (from `ledgerctl keygen`).
    #[arg(long, value_name = "FILE")]
    pub operator_key: PathBuf,
    /// The operator's id, as in ledgerd's configuration ([[principals]] id).
    #[arg(long, value_name = "ID")]
    pub operator_id: String,
}

#[derive(clap::Args, Debug)]
pub struct Register {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub operator: Operator,
    /// The new device's id (letters, digits and punctuation, no spaces; never reused).
    #[arg(long, value_name = "ID")]
    pub device_id: String,
    /// "table" (a dealer terminal or table system) or "machine" (a slot machine's agent).
    #[arg(long, value_name = "KIND")]
    pub kind: String,
    /// The device's public key: a .pub file or 64 hex digits.
    #[arg(long, value_name = "FILE|HEX")]
    pub public_key: String,
    /// Casino id.
    #[arg(long, value_name = "ID")]
    pub casino: String,
    /// Tables a table device may report for (repeat the option); none = any table.
    #[arg(long = "table", value_name = "ID")]
    pub tables: Vec<String>,
    /// Machines: the machine id (default: the device id).
    #[arg(long, value_name = "ID", default_value = "")]
    pub machine_id: String,
    /// Machines: the approved model id (required for machines).
    #[arg(long, value_name = "ID", default_value = "")]
    pub model: String,
    /// Machines: a bet value offered, in cents (repeat; at least one for machines).
    #[arg(long = "bet-value", value_name = "CENTS")]
    pub bet_values: Vec<i64>,
    /// Free text: location, serial number.
    #[arg(long, default_value = "")]
    pub description: String,
}

#[derive(clap::Args, Debug)]
pub struct Revoke {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub operator: Operator,
    /// The device to revoke.
    #[arg(long, value_name = "ID")]
    pub device_id: String,
    /// Why (recorded in the chain).
    #[arg(long)]
    pub reason: String,
}

#[derive(clap::Args, Debug)]
pub struct RotateKey {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub operator: Operator,
    /// The device whose key is replaced.
    #[arg(long, value_name = "ID")]
    pub device_id: String,
    /// The device's new public key: a .pub file or 64 hex digits.
    #[arg(long, value_name = "FILE|HEX")]
    pub public_key: String,
    /// Why (recorded in the chain).
    #[arg(long, default_value = "")]
    pub reason: String,
}

#[derive(clap::Args, Debug)]
pub struct List {
    #[command(flatten)]
    pub server: ServerArg,
}

#[derive(clap::Args, Debug)]
pub struct Show {
    #[command(flatten)]
    pub server: ServerArg,
    /// The device's (or principal's) id.
    #[arg(long, value_name = "ID")]
    pub device_id: String,
}

#[derive(clap::Args, Debug)]
pub struct Entries {
    #[command(flatten)]
    pub server: ServerArg,
    /// The device's (or principal's) id.
    #[arg(long, value_name = "ID")]
    pub device_id: String,
    /// First sequence number to show.
    #[arg(long, value_name = "SEQ", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub from_sequence: u64,
    /// Stop after this many entries (default: all of them, up to the durable head).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Prove each entry is in the latest checkpoint (checked against the one held; docs/evidence.md).
    #[arg(long)]
    pub verified: bool,
}

pub async fn run(c: Command, json: bool) -> anyhow::Result<i32> {
    match c {
        Command::Register(r) => {
            let kind = match r.kind.as_str() {
                "table" => v1::DeviceKind::Table,
                "machine" => v1::DeviceKind::Machine,
                other => bail!("--kind {other:?}: must be \"table\" or \"machine\""),
            };
            if kind == v1::DeviceKind::Table && r.tables.is_empty() {
                bail!(
                    "--table: a table device is registered with the tables it reports for (repeat --table); ledgerd refuses it without"
                );
            }
            let key = ledger_agent::keys::read_public(&r.public_key).context("--public-key")?;
            let payload = Payload::DeviceRegistered(v1::DeviceRegistered {
                device_id: r.device_id,
                public_key: key.as_bytes().to_vec(),
                kind: kind as i32,
                casino_id: r.casino,
                table_ids: r.tables,
                machine_id: r.machine_id,
                model_id: r.model,
                bet_values_cents: r.bet_values,
                description: r.description,
            });
            send_signed(&r.server.server, &r.operator, payload, json).await
        }
        Command::Revoke(r) => {
            let payload = Payload::DeviceRevoked(v1::DeviceRevoked {
                device_id: r.device_id,
                reason: r.reason,
            });
            send_signed(&r.server.server, &r.operator, payload, json).await
        }
        Command::RotateKey(r) => {
            let key = ledger_agent::keys::read_public(&r.public_key).context("--public-key")?;
            let payload = Payload::DeviceKeyRotated(v1::DeviceKeyRotated {
                device_id: r.device_id,
                public_key: key.as_bytes().to_vec(),
                reason: r.reason,
            });
            send_signed(&r.server.server, &r.operator, payload, json).await
        }
        Command::List(l) => {
            let mut q = QueryClient::new(common::channel(&l.server.server).await?)
                .max_decoding_message_size(usize::MAX);
            // A page at a time, in id order, until a page names no next one.
            let mut list = v1::DeviceList::default();
            loop {
                let page = q
                    .list_devices(v1::ListDevicesRequest {
                        after_device_id: std::mem::take(&mut list.next_after_device_id),
                        limit: 0,
                    })
                    .await
                    .map_err(|s| crate::present::status_error("listing the devices", s))?
                    .into_inner();
                list.devices.extend(page.devices);
                if page.next_after_device_id.is_empty() {
                    break;
                }
                list.next_after_device_id = page.next_after_device_id;
            }
            if json {
                let v: Vec<_> = list
                    .devices
                    .iter()
                    .map(|d| {
                        serde_json::json!({
                            "device_id": d.device_id, "kind": d.kind, "public_key": hex::encode(&d.public_key),
                            "casino_id": d.casino_id, "table_ids": d.table_ids, "machine_id": d.machine_id,
                            "model_id": d.model_id, "bet_values_cents": d.bet_values_cents, "description": d.description,
                            "registered_at_index": d.registered_at_index, "revoked": d.revoked,
                            "revoked_at_index": d.revoked.then_some(d.revoked_at_index),
                            "last_sequence": d.last_sequence, "last_index": d.last_index,
                        })
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                use crate::present::{Align, table};
                let rows: Vec<Vec<String>> = list
                    .devices
                    .iter()
                    .map(|d| {
                        vec![
                            d.device_id.clone(),
                            d.kind.to_string(),
                            if d.revoked { "revoked" } else { "active" }.into(),
                            d.last_sequence.to_string(),
                            d.registered_at_index.to_string(),
                            hex::encode(&d.public_key),
                        ]
                    })
                    .collect();
                print!(
                    "{}",
                    table(
                        &[
                            ("id", Align::Left),
                            ("kind", Align::Left),
                            ("status", Align::Left),
                            ("last seq", Align::Right),
                            ("registered", Align::Right),
                            ("public key", Align::Left),
                        ],
                        &rows,
                    )
                );
            }
            Ok(0)
        }
        Command::Show(c) => {
            let mut q = QueryClient::new(common::channel(&c.server.server).await?);
            let h = q
                .get_device_history(v1::GetDeviceRequest {
                    device_id: c.device_id.clone(),
                })
                .await
                .map_err(|s| {
                    crate::present::status_error(&format!("--device-id {}", c.device_id), s)
                })?
                .into_inner();
            print_history(&h, json)?;
            Ok(0)
        }
        Command::Entries(e) => {
            let ch = common::channel(&e.server.server).await?;
            let mut q = QueryClient::new(ch.clone());
            let held = if e.verified {
                Some(crate::trust::latest(ch.clone(), None).await?.held)
            } else {
                None
            };
            let s = q
                .list_device_entries(v1::ListDeviceEntriesRequest {
                    device_id: e.device_id,
                    from_sequence: e.from_sequence,
                })
                .await?
                .into_inner();
            match held {
                None => common::print_entries(s, e.limit, json).await?,
                Some(h) => print_verified(ch, &h, s, e.limit, json).await?,
            }
            Ok(0)
        }
    }
}

/// A device and its registry history, as `device show` prints it.
fn print_history(h: &v1::DeviceHistory, json: bool) -> anyhow::Result<()> {
    use crate::present::{Align, table, time};
    let d = h.device.clone().unwrap_or_default();
    if json {
        let entries: Vec<_> = h
            .entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "index": e.index, "action": e.action, "received_at_ms": e.received_at_ms,
                    "occurred_at_ms": e.occurred_at_ms, "signed_by": e.signed_by,
                    "public_key": (!e.public_key.is_empty()).then(|| hex::encode(&e.public_key)),
                    "reason": e.reason,
                })
            })
            .collect();
        let v = serde_json::json!({
            "device_id": d.device_id, "kind": d.kind, "casino_id": d.casino_id,
            "table_ids": d.table_ids, "machine_id": d.machine_id, "model_id": d.model_id,
            "public_key": hex::encode(&d.public_key), "revoked": d.revoked,
            "last_sequence": d.last_sequence, "history": entries,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("device      {} ({})", d.device_id, d.kind);
    if !d.casino_id.is_empty() {
        println!("casino      {}", d.casino_id);
    }
    if !d.table_ids.is_empty() {
        println!("tables      {}", d.table_ids.join(", "));
    }
    if !d.machine_id.is_empty() {
        println!("machine     {} (model {})", d.machine_id, d.model_id);
    }
    println!("key         {}", hex::encode(&d.public_key));
    println!(
        "status      {}",
        if d.revoked { "revoked" } else { "active" }
    );
    println!("last seq    {}", d.last_sequence);
    println!();
    let rows: Vec<Vec<String>> = h
        .entries
        .iter()
        .map(|e| {
            vec![
                e.index.to_string(),
                e.action.replace('_', " "),
                time(e.received_at_ms),
                e.signed_by.clone(),
                hex::encode(&e.public_key),
                e.reason.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                ("entry", Align::Right),
                ("action", Align::Left),
                ("received", Align::Left),
                ("signed by", Align::Left),
                ("key", Align::Left),
                ("reason", Align::Left),
            ],
            &rows,
        )
    );
    Ok(())
}

/// Sign `payload` as the operator with its next sequence number (asked from the ledger) and
/// submit it.
/// The flag a field of the operator's event comes from.
fn flag_of(field: &str) -> Option<&'static str> {
    if field == "device_id" {
        return Some("--operator-id"); // the event's signer
    }
    let last = field.rsplit('.').next().unwrap_or(field);
    Some(match last.split('[').next().unwrap_or(last) {
        "device_id" => "--device-id",
        "casino_id" => "--casino",
        "table_ids" => "--table",
        "machine_id" => "--machine-id",
        "model_id" => "--model",
        "bet_values_cents" => "--bet-value",
        "description" => "--description",
        "reason" => "--reason",
        _ => return None,
    })
}

/// The checks ledgerd makes of the event's body, before anything is sent: a bad value is named
/// by its flag and the rule it breaks (not as a REJECTED receipt for a "malformed body").
fn check_flags(operator_id: &str, payload: &Payload) -> anyhow::Result<()> {
    let body = v1::EventBody {
        device_id: operator_id.to_string(),
        sequence: 1,
        occurred_at_ms: chrono::Utc::now().timestamp_millis(),
        payload: Some(payload.clone()),
    };
    match ledger_core::event::Event::from_proto(body) {
        Ok(_) => Ok(()),
        Err(ledger_core::event::BodyError::Malformed { field, problem }) => match flag_of(&field) {
            Some(flag) => bail!("{flag}: {problem}"),
            None => bail!("{field}: {problem}"),
        },
        Err(e) => bail!("{e}"),
    }
}

async fn send_signed(
    server: &str,
    op: &Operator,
    payload: Payload,
    json: bool,
) -> anyhow::Result<i32> {
    check_flags(&op.operator_id, &payload)?;
    let key = ledger_agent::keys::read_secret(&op.operator_key).context("--operator-key")?;
    let ch = common::channel(server).await?;
    let info = QueryClient::new(ch)
        .get_device(v1::GetDeviceRequest {
            device_id: op.operator_id.clone(),
        })
        .await
        .with_context(|| {
            format!(
                "operator {} is not a principal of this ledger (check ledgerd's [[principals]])",
                op.operator_id
            )
        })?
        .into_inner();
    if info.public_key != key.verifying_key().as_bytes() {
        bail!(
            "--operator-key does not match the key the ledger has for {}",
            op.operator_id
        );
    }
    let mut signer = DeviceSigner::new(&op.operator_id, key, info.last_sequence + 1);
    let env = signer.sign(chrono::Utc::now().timestamp_millis(), payload);
    let receipts = ledger_agent::submit_all(server, &[env], &Default::default()).await?;
    let r = &receipts[0];
    if json {
        println!("{}", common::receipt_json(r));
    } else {
        println!("{}", common::receipt_line(r));
    }
    Ok(if common::status_name(r) == "accepted" {
        0
    } else {
        1
    })
}

/// Each entry with the proof of its inclusion in the held checkpoint checked first; an entry
/// that fails stops the listing with the reason.
async fn print_verified(
    ch: tonic::transport::Channel,
    held: &crate::trust::Held,
    mut s: tonic::Streaming<v1::ChainEntry>,
    limit: Option<u64>,
    json: bool,
) -> anyhow::Result<()> {
    let (mut n, mut unproven) = (0u64, 0u64);
    while limit.is_none_or(|l| n < l) {
        let Some(e) = s.message().await? else {
            break;
        };
        let proven = crate::trust::check_entry(ch.clone(), held, &e).await?;
        unproven += u64::from(!proven);
        if json {
            let mut j = common::entry_json(&e);
            j["proven"] = serde_json::Value::Bool(proven);
            println!("{j}");
        } else {
            let mark = if proven {
                "proven"
            } else {
                "after the checkpoint"
            };
            println!("{}  [{mark}]", common::entry_line(&e));
        }
        n += 1;
    }
    if !json {
        eprintln!(
            "{} entries proven in {}'s tree of {} entries{}",
            n - unproven,
            held.text.origin,
            held.text.size,
            if unproven > 0 {
                format!("; {unproven} after it (ask for a checkpoint to prove them)")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_is_named_by_its_flag_before_anything_is_sent() {
        let reg = |device: &str, casino: &str, tables: &[&str]| {
            Payload::DeviceRegistered(v1::DeviceRegistered {
                device_id: device.into(),
                public_key: ed25519_dalek::SigningKey::from_bytes(&[7; 32])
                    .verifying_key()
                    .to_bytes()
                    .to_vec(),
                kind: v1::DeviceKind::Table as i32,
                casino_id: casino.into(),
                table_ids: tables.iter().map(|t| t.to_string()).collect(),
                ..Default::default()
            })
        };
        let e = |op: &str, p: Payload| format!("{:#}", check_flags(op, &p).unwrap_err());
        let m = e("operator-1", reg("table 1", "lisboa", &["RF-01"]));
        assert!(m.starts_with("--device-id: character ' '"), "{m}");
        let m = e("operator-1", reg("table-1", "", &["RF-01"]));
        assert!(m.starts_with("--casino: missing"), "{m}");
        let m = e("operator-1", reg("table-1", "lisboa", &["RF 01"]));
        assert!(m.starts_with("--table: "), "{m}");
        let m = e("op 1", reg("table-1", "lisboa", &["RF-01"]));
        assert!(m.starts_with("--operator-id: "), "{m}");
        let revoke = Payload::DeviceRevoked(v1::DeviceRevoked {
            device_id: "t1".into(),
            reason: "x".repeat(100_000),
        });
        let m = e("operator-1", revoke);
        assert!(m.starts_with("--reason: longer than"), "{m}");
        assert!(
            check_flags("operator-1", &reg("table-1", "lisboa", &["RF-01"])).is_ok(),
            "a good registration passes"
        );
    }
}
