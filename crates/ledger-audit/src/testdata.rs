//! The tests' chain: the simulator's standard session, with its mistakes, as chain entries.

use std::path::Path;
use std::sync::Arc;

use ledger_core::ed25519_dalek::SigningKey;
use ledger_core::{GENESIS_PREV_HASH, RecordKind, make_entry};
use ledger_proto::v1;
use ledger_store::Store;
use prost::Message;

/// A chain store holding the standard session with its mistakes (tables, a slot floor with
/// jackpots), after a genesis: written as a mirror writes a copy (the audit reads entries,
/// it does not verify signatures). Returns the store and its head.
pub(crate) fn chain(dir: &Path) -> (Arc<Store>, u64) {
    let plan = casino_sim::standard_plan(5, 1_767_225_600_000, 40, true, "op", "reg");
    let s = casino_sim::generate(&plan).unwrap();
    let key = SigningKey::from_bytes(&[7; 32]);
    let (body, signature) = ledger_core::record::sign_ledger_record(
        &key,
        plan.start_ms,
        v1::ledger_record_body::Record::Genesis(v1::LedgerGenesis {
            ledger_id: "test".into(),
            ledger_public_key: key.verifying_key().as_bytes().to_vec(),
        }),
    );
    let mut entries = vec![make_entry(
        &GENESIS_PREV_HASH,
        0,
        plan.start_ms,
        RecordKind::Ledger,
        body,
        signature,
    )];
    let mut sequences = std::collections::HashMap::<String, u64>::new();
    let mut push = |device: &str, at: i64, payload, out: &mut Vec<v1::ChainEntry>| {
        let sequence = sequences.entry(device.to_string()).or_default();
        *sequence += 1;
        let body = v1::EventBody {
            device_id: device.to_string(),
            sequence: *sequence,
            occurred_at_ms: at,
            payload: Some(payload),
        }
        .encode_to_vec();
        let prev: [u8; 32] = out
            .last()
            .unwrap()
            .entry_hash
            .as_slice()
            .try_into()
            .unwrap();
        let e = make_entry(
            &prev,
            out.len() as u64,
            at,
            RecordKind::Event,
            body,
            vec![0x5a; 64],
        );
        out.push(e);
    };
    for d in &s.devices {
        if d.kind == ledger_core::DeviceKind::Machine {
            push(
                "op",
                plan.start_ms,
                v1::event_body::Payload::DeviceRegistered(v1::DeviceRegistered {
                    device_id: d.device_id.clone(),
                    public_key: [&[0x58u8][..], &[0x66; 31]].concat(),
                    kind: v1::DeviceKind::Machine as i32,
                    casino_id: d.casino_id.clone(),
                    machine_id: d.machine_id.clone(),
                    model_id: d.model_id.clone(),
                    bet_values_cents: d.bet_values_cents.clone(),
                    ..Default::default()
                }),
                &mut entries,
            );
        }
    }
    for e in &s.events {
        push(
            &e.device_id,
            e.occurred_at_ms,
            e.payload.clone(),
            &mut entries,
        );
    }
    let head = entries.len() as u64 - 1;
    let (store, mut appender) =
        Store::open_mirror(dir, 16 << 20, "test", &key.verifying_key()).unwrap();
    appender.append_verbatim(entries).unwrap();
    store.sync().unwrap();
    (store, head)
}
