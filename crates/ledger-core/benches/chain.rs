//! Criterion benches of the chain's pure core: building an entry (record hash + entry hash),
//! checking one (structure, link, registry, sequence), and signature verification (batched vs
//! strict single). Run: `cargo bench -p ledger-core --bench chain`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use ed25519_dalek::SigningKey;
use ledger_core::proto::{self as v1, event_body::Payload as P, ledger_record_body::Record};
use ledger_core::record::{make_entry, sign_ledger_record};
use ledger_core::signing::{EVENT_DOMAIN, PreparedSignature, SignatureCheck, sign, signed_message};
use ledger_core::{ChainVerifier, GENESIS_PREV_HASH, Hash32, RecordKind, verify_many};
use prost::Message;

fn body(seq: u64) -> Vec<u8> {
    v1::EventBody {
        device_id: "table-roulette-1".into(),
        sequence: seq,
        occurred_at_ms: 1_800_000_000_000 + seq as i64,
        payload: Some(P::BetPlaced(v1::BetPlaced {
            table_id: "RF-01".into(),
            round_id: "RF-01-00042".into(),
            bet_id: format!("b{seq}"),
            bet_type: "straight".into(),
            seat: Some(3),
            player_id: "p3".into(),
            selection: vec![17],
            amount_cents: 2_500,
            ..Default::default()
        })),
    }
    .encode_to_vec()
}

/// A chain: genesis, principals, a device registration, then `n` events of that device.
fn build_chain(n: u64) -> Vec<v1::ChainEntry> {
    let ledger = SigningKey::from_bytes(&[1; 32]);
    let op = SigningKey::from_bytes(&[2; 32]);
    let dev = SigningKey::from_bytes(&[3; 32]);
    let mut out = Vec::new();
    let mut prev: Hash32 = GENESIS_PREV_HASH;
    let mut push = |kind, body: Vec<u8>, sig: Vec<u8>, out: &mut Vec<v1::ChainEntry>| {
        let e = make_entry(&prev, out.len() as u64, 1_800_000_000_000, kind, body, sig);
        prev = e.entry_hash.as_slice().try_into().unwrap();
        out.push(e);
    };
    let (b, s) = sign_ledger_record(
        &ledger,
        0,
        Record::Genesis(v1::LedgerGenesis {
            ledger_id: "bench".into(),
            ledger_public_key: ledger.verifying_key().as_bytes().to_vec(),
        }),
    );
    push(RecordKind::Ledger, b, s, &mut out);
    let (b, s) = sign_ledger_record(
        &ledger,
        0,
        Record::PrincipalsDeclared(v1::PrincipalsDeclared {
            principals: vec![v1::Principal {
                id: "op".into(),
                role: v1::PrincipalRole::Operator as i32,
                public_key: op.verifying_key().as_bytes().to_vec(),
            }],
        }),
    );
    push(RecordKind::Ledger, b, s, &mut out);
    let reg = v1::EventBody {
        device_id: "op".into(),
        sequence: 1,
        occurred_at_ms: 1_800_000_000_000,
        payload: Some(P::DeviceRegistered(v1::DeviceRegistered {
            device_id: "table-roulette-1".into(),
            public_key: dev.verifying_key().as_bytes().to_vec(),
            kind: v1::DeviceKind::Table as i32,
            casino_id: "c".into(),
            ..Default::default()
        })),
    }
    .encode_to_vec();
    let s = sign(&op, EVENT_DOMAIN, &reg).to_bytes().to_vec();
    push(RecordKind::Event, reg, s, &mut out);
    for seq in 1..=n {
        let b = body(seq);
        let s = sign(&dev, EVENT_DOMAIN, &b).to_bytes().to_vec();
        push(RecordKind::Event, b, s, &mut out);
    }
    out
}

fn benches(c: &mut Criterion) {
    let b = body(1);
    let sig = vec![7u8; 64];
    let mut g = c.benchmark_group("chain");
    g.throughput(Throughput::Elements(1));
    g.bench_function(
        "append: make_entry (record hash + entry hash, ~110 B body)",
        |bn| {
            let mut prev = GENESIS_PREV_HASH;
            let mut i = 0u64;
            bn.iter_batched(
                || b.clone(),
                |body| {
                    let e = make_entry(&prev, i, 1, RecordKind::Event, body, sig.clone());
                    prev = e.entry_hash.as_slice().try_into().unwrap();
                    i += 1;
                    e
                },
                BatchSize::SmallInput,
            )
        },
    );
    let entries = build_chain(4096);
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.bench_function(
        "verify: check_entry x4099 (hashes, link, decode, registry, sequence; no signatures)",
        |bn| {
            bn.iter(|| {
                let mut v = ChainVerifier::new(None);
                let mut n = 0;
                for e in &entries {
                    n += v.check_entry(e).unwrap().len();
                }
                n
            })
        },
    );
    // What the Merkle tree adds per entry, at the writer and in verify: SHA-256 of the entry's
    // encoding (the leaf) and the frontier's node hashes.
    let encoded: Vec<Vec<u8>> = entries.iter().map(prost::Message::encode_to_vec).collect();
    g.bench_function(
        "tree: leaf hash + frontier push x4099 (entries as stored)",
        |bn| {
            bn.iter(|| {
                let mut f = ledger_core::merkle::Frontier::new();
                for e in &encoded {
                    f.push(ledger_core::merkle::leaf_hash(e));
                }
                f.root()
            })
        },
    );
    g.finish();
    signatures(c);
}

/// Batch verification against the batch size and the number of devices that signed it (terms
/// summed per device), with ed25519-dalek's own `verify_batch` (a term per signature and key) and
/// strict single verification for reference.
fn signatures(c: &mut Criterion) {
    let mut g = c.benchmark_group("signatures");
    let keys: Vec<SigningKey> = (0..=255u8)
        .map(|i| SigningKey::from_bytes(&[i; 32]))
        .collect();
    // 150 by 8: about the group at half of the peak on a 2-vCPU AVX2 VM
    // (`docs/performance-history.md`), where the batch's multiscalar multiplication costs more a
    // signature than in a peak group.
    for (n, devices) in [
        (48usize, 8usize),
        (150, 8),
        (256, 1),
        (256, 8),
        (256, 256),
        (2048, 8),
    ] {
        let checks: Vec<SignatureCheck> = (1..=n as u64)
            .map(|s| {
                let k = &keys[s as usize % devices];
                let b = body(s);
                SignatureCheck {
                    message: signed_message(EVENT_DOMAIN, &b),
                    signature: sign(k, EVENT_DOMAIN, &b),
                    key: k.verifying_key(),
                }
            })
            .collect();
        g.throughput(Throughput::Elements(n as u64));
        if (n, devices) == (256, 8) {
            // What ingest does per envelope as it arrives: checks on s, R and the key, R
            // decoded, the challenge hashed.
            g.bench_function("PreparedSignature::new: 256", |bn| {
                bn.iter(|| {
                    checks.iter().all(|c| {
                        PreparedSignature::new(&c.key, &[], &c.message, &c.signature).is_some()
                    })
                })
            });
        }
        g.bench_function(format!("verify_many: {n} by {devices} devices"), |bn| {
            bn.iter(|| assert!(verify_many(&checks).iter().all(|&x| x)))
        });
        if n == 150 {
            // One spoiled signature in the group: the batch fails and is halved down to it. What
            // one bad envelope from a client without a key costs the group it falls in.
            let mut spoiled = checks.clone();
            let mut sig = spoiled[77].signature.to_bytes();
            sig[40] ^= 1;
            spoiled[77].signature = ed25519_dalek::Signature::from_bytes(&sig);
            g.bench_function(
                format!("verify_many: {n} by {devices} devices, one spoiled"),
                |bn| {
                    bn.iter(|| assert_eq!(verify_many(&spoiled).iter().filter(|&&x| !x).count(), 1))
                },
            );
        }
        if n == 256 {
            let msgs: Vec<&[u8]> = checks.iter().map(|c| c.message.as_slice()).collect();
            let sigs: Vec<_> = checks.iter().map(|c| c.signature).collect();
            let ks: Vec<_> = checks.iter().map(|c| c.key).collect();
            g.bench_function(
                format!("ed25519_dalek::verify_batch: {n} by {devices} devices"),
                |bn| bn.iter(|| ed25519_dalek::verify_batch(&msgs, &sigs, &ks).unwrap()),
            );
        }
        if (n, devices) == (256, 8) {
            g.bench_function("verify_strict: 256 by 8 devices, one at a time", |bn| {
                bn.iter(|| {
                    checks
                        .iter()
                        .all(|c| c.key.verify_strict(&c.message, &c.signature).is_ok())
                })
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = chain_benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = benches
}
criterion_main!(chain_benches);
