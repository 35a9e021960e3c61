//! Adjudication throughput: a ponto e banca coup with 7 seats (10 bets, a settlement), the
//! same at a Macau table, and a chemin de fer coup, taken from the JSON examples.
//!
//! cargo bench -p rules-baccarat -- --warm-up-time 1 --measurement-time 3

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rules_baccarat::{BaccaratEngine, BaccaratState};
use rules_core::{Engine, Options, RoundInput};

fn load(
    json: &str,
) -> (
    rules_baccarat::BaccaratConfig,
    BaccaratState,
    rules_core::Round,
) {
    let input: RoundInput = serde_json::from_str(json).expect("example");
    let cfg = BaccaratEngine::configure(&input.table)
        .expect("config")
        .config;
    let state = input
        .state
        .map(|s| serde_json::from_value(s).expect("state"))
        .unwrap_or_default();
    (cfg, state, input.round)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("adjudicate");
    g.throughput(Throughput::Elements(1));
    for (name, json) in [
        (
            "punto_banco_7_seats_10_bets",
            include_str!("../../../docs/rounds/baccarat_punto_banco.json"),
        ),
        (
            "macau_7_bets",
            include_str!("../../../docs/rounds/baccarat_macau.json"),
        ),
        (
            "chemin_de_fer_coup",
            include_str!("../../../docs/rounds/baccarat_chemin_de_fer.json"),
        ),
    ] {
        let (cfg, state, round) = load(json);
        let opts = Options::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut st = state.clone();
                let a =
                    BaccaratEngine::adjudicate(black_box(&cfg), &mut st, black_box(&round), &opts);
                black_box(a)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
