//! Criterion bench of the store's append path: apply a group of 1,024 prechecked, signature-checked
//! events (decisions, chain hashing, the group commit's sled inserts), then the durable sync (sled flush +
//! fsync of `db`). Run: `cargo bench -p ledger-store --bench append`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ed25519_dalek::SigningKey;
use ledger_core::proto::{self as v1, event_body::Payload as P};
use ledger_core::signing::{EVENT_DOMAIN, sign};
use ledger_core::{SignerRole, TimePolicy};
use ledger_store::{OpenConfig, PrincipalConfig, Store, precheck, verify_prechecked};
use prost::Message;

const GROUP: u64 = 1024;

fn env(key: &SigningKey, dev: &str, seq: u64, payload: P) -> v1::Envelope {
    let body = v1::EventBody {
        device_id: dev.into(),
        sequence: seq,
        occurred_at_ms: 1_800_000_000_000,
        payload: Some(payload),
    }
    .encode_to_vec();
    let signature = sign(key, EVENT_DOMAIN, &body).to_bytes().to_vec();
    v1::Envelope { body, signature }
}

fn game(seq: u64) -> P {
    P::GamePlayed(v1::GamePlayed {
        machine_id: "slot-01".into(),
        game_number: seq,
        wager_cents: 100,
        win_cents: 0,
    })
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let op = SigningKey::from_bytes(&[1; 32]);
    let dev = SigningKey::from_bytes(&[2; 32]);
    let (store, mut a) = Store::open_writer(
        dir.path(),
        &OpenConfig {
            cache_capacity_bytes: 256 << 20,
            ledger_id: "bench".into(),
            principals: vec![PrincipalConfig {
                id: "op".into(),
                role: SignerRole::Operator,
                key: op.verifying_key(),
            }],
        },
    )
    .unwrap();
    let reg = env(
        &op,
        "op",
        1,
        P::DeviceRegistered(v1::DeviceRegistered {
            device_id: "slot-01".into(),
            public_key: dev.verifying_key().as_bytes().to_vec(),
            kind: v1::DeviceKind::Machine as i32,
            casino_id: "c".into(),
            model_id: "m".into(),
            bet_values_cents: vec![100],
            ..Default::default()
        }),
    );
    let time = TimePolicy::default();
    let now = 1_800_000_000_000;
    let mut items = vec![precheck(&store, reg, 65536, &time, now)];
    verify_prechecked(&mut items);
    a.apply(items, now).unwrap();
    let mut seq = 0u64;
    let mut g = c.benchmark_group("store");
    g.throughput(Throughput::Elements(GROUP));
    g.bench_function(
        "append: apply a group of 1024 (decide, hash, the group commit's inserts), no sync",
        |b| {
            b.iter_batched(
                || {
                    // Signed here, outside the timed routine.
                    let start = seq;
                    seq += GROUP;
                    let mut items: Vec<_> = (start + 1..=start + GROUP)
                        .map(|s| env(&dev, "slot-01", s, game(s)))
                        .map(|e| precheck(&store, e, 65536, &time, now))
                        .collect();
                    verify_prechecked(&mut items);
                    items
                },
                |items| a.apply(items, now).unwrap(),
                criterion::BatchSize::PerIteration,
            )
        },
    );
    g.throughput(Throughput::Elements(1));
    g.bench_function(
        "durability: sync (sled flush + fsync of db) after one small write",
        |b| {
            b.iter(|| {
                store.sync().unwrap();
            })
        },
    );
    g.finish();
}

criterion_group! {
    name = append;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4)).warm_up_time(std::time::Duration::from_secs(1));
    targets = benches
}
criterion_main!(append);
