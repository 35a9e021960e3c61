//! Benchmark: simulated hands per second per game (each hand includes the engine adjudication the
//! simulator runs to compute the honest settlement).
//!
//! `cargo bench -p rules-poker --bench simulate -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rules_core::{Engine, Options, SimRng, Simulate};
use rules_poker::{PokerEngine, PokerState};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.throughput(Throughput::Elements(1));
    for game in rules_poker::GAMES {
        let table = PokerEngine::example_table(game);
        let cfg = PokerEngine::configure(&table).unwrap().config;
        // A table that has been playing for a while.
        let mut state = PokerState::default();
        let mut rng = SimRng::new(1);
        for i in 0..100 {
            let r = PokerEngine::simulate(&table, &cfg, &state, "warm".into(), i, &mut rng, None)
                .unwrap();
            PokerEngine::adjudicate(&cfg, &mut state, &r, &Options::default()).unwrap();
        }
        let id: rules_core::Id = "bench".into();
        g.bench_function(game.to_string(), |b| {
            b.iter(|| {
                black_box(
                    PokerEngine::simulate(
                        &table,
                        &cfg,
                        black_box(&state),
                        id.clone(),
                        1_767_225_600_000,
                        &mut rng,
                        None,
                    )
                    .unwrap(),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
