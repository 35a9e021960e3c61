//! Criterion bench of the evidence the store serves from a ledger of 2^18 entries: inclusion and
//! consistency proofs (generated from the stored tiles, and checked as a client checks them), and
//! C2SP tlog-tiles resources (a full hash tile, a full entry bundle). Run:
//! `cargo bench -p ledger-store --bench proofs`. Figures: docs/evidence.md, "Cost".

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ed25519_dalek::SigningKey;
use ledger_core::merkle;
use ledger_core::proto::{self as v1, event_body::Payload as P};
use ledger_core::signing::{EVENT_DOMAIN, sign};
use ledger_core::tiles::tile_of;
use ledger_core::{SignerRole, TimePolicy};
use ledger_store::{OpenConfig, PrincipalConfig, Store, precheck, verify_prechecked};
use prost::Message;

const GROUPS: u64 = 256;
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

/// A ledger of genesis, principals, one machine and `GROUPS * GROUP` of its games.
fn ledger(dir: &std::path::Path) -> std::sync::Arc<Store> {
    let op = SigningKey::from_bytes(&[1; 32]);
    let dev = SigningKey::from_bytes(&[2; 32]);
    let (store, mut a) = Store::open_writer(
        dir,
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
    let time = TimePolicy::default();
    let now = 1_800_000_000_000;
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
    let mut items = vec![precheck(&store, reg, 65536, &time, now)];
    verify_prechecked(&mut items);
    a.apply(items, now).unwrap();
    for g in 0..GROUPS {
        let mut items: Vec<_> = (g * GROUP + 1..=(g + 1) * GROUP)
            .map(|s| {
                let game = P::GamePlayed(v1::GamePlayed {
                    machine_id: "slot-01".into(),
                    game_number: s,
                    wager_cents: 100,
                    win_cents: (s % 7) as i64 * 50,
                });
                env(&dev, "slot-01", s, game)
            })
            .map(|e| precheck(&store, e, 65536, &time, now))
            .collect();
        verify_prechecked(&mut items);
        a.apply(items, now).unwrap();
    }
    store.sync().unwrap();
    store
}

/// A cheap deterministic spread of indexes (xorshift).
fn spread(state: &mut u64, below: u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state % below
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = ledger(dir.path());
    let size = store.head().unwrap().unwrap().0 + 1;
    let root = store.tree_root(size).unwrap();
    let leaves: Vec<merkle::TreeHash> = store
        .entries(0, size - 1)
        .map(|e| merkle::leaf_hash(&e.unwrap().encode_to_vec()))
        .collect();
    let mut g = c.benchmark_group("evidence");
    g.throughput(Throughput::Elements(1));
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    g.bench_function(format!("inclusion proof: generate, tree of {size}"), |b| {
        b.iter(|| {
            let i = spread(&mut s, size);
            store.inclusion_proof(i, size).unwrap()
        })
    });
    let proofs: Vec<(u64, Vec<merkle::TreeHash>)> = (0..1024)
        .map(|_| {
            let i = spread(&mut s, size);
            (i, store.inclusion_proof(i, size).unwrap())
        })
        .collect();
    let mut k = 0usize;
    g.bench_function(format!("inclusion proof: verify, tree of {size}"), |b| {
        b.iter(|| {
            let (i, p) = &proofs[k % proofs.len()];
            k += 1;
            merkle::verify_inclusion(&leaves[*i as usize], *i, size, p, &root).unwrap()
        })
    });
    g.bench_function(format!("consistency proof: generate, to {size}"), |b| {
        b.iter(|| {
            let from = 1 + spread(&mut s, size - 1);
            store.consistency_proof(from, size).unwrap()
        })
    });
    let roots: Vec<(u64, merkle::TreeHash, Vec<merkle::TreeHash>)> = (0..64)
        .map(|_| {
            let from = 1 + spread(&mut s, size - 1);
            (
                from,
                store.tree_root(from).unwrap(),
                store.consistency_proof(from, size).unwrap(),
            )
        })
        .collect();
    g.bench_function(format!("consistency proof: verify, to {size}"), |b| {
        b.iter(|| {
            let (from, r1, p) = &roots[k % roots.len()];
            k += 1;
            merkle::verify_consistency(*from, size, p, r1, &root).unwrap()
        })
    });
    let full = size / 256;
    g.bench_function("tile: a full level-0 hash tile (8 KiB)", |b| {
        b.iter(|| {
            let t = tile_of(0, spread(&mut s, full) * 256, size);
            store.tile_data(&t, size).unwrap()
        })
    });
    g.bench_function("tile: a full entry bundle (256 entries)", |b| {
        b.iter(|| {
            let mut t = tile_of(0, spread(&mut s, full) * 256, size);
            t.level = None;
            store.tile_data(&t, size).unwrap()
        })
    });
    g.finish();
}

criterion_group! {
    name = proofs;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = benches
}
criterion_main!(proofs);
