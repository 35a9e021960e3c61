//! Simulation throughput: coups simulated per second per game (honest coups, from the table
//! states of a played session), and a whole session step (simulate, then adjudicate to advance
//! the state). `cargo bench -p rules-baccarat --bench simulate`; criterion reports the rate as
//! `thrpt` in elements (= coups) per second.
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rules_baccarat::{BaccaratEngine, BaccaratState};
use rules_core::*;

fn bench(c: &mut Criterion) {
    for game in BaccaratEngine::games() {
        let table = BaccaratEngine::example_table(*game);
        let cfg = BaccaratEngine::configure(&table).unwrap().config;
        // 256 table states of a played session, each with its next start time.
        let mut rng = SimRng::new(1);
        let mut st = BaccaratState::default();
        let mut t = 1_700_000_000_000i64;
        let mut states = Vec::with_capacity(256);
        for i in 0..256 {
            states.push((st.clone(), t));
            let r = BaccaratEngine::simulate(
                &table,
                &cfg,
                &st,
                format!("r{i}").into(),
                t,
                &mut rng,
                None,
            )
            .unwrap();
            BaccaratEngine::adjudicate(&cfg, &mut st, &r, &Options::default()).unwrap();
            t = r.events.last().and_then(|e| e.at_ms).unwrap_or(t) + 10_000;
        }
        let mut g = c.benchmark_group("simulate");
        g.throughput(Throughput::Elements(1));
        let mut i = 0usize;
        g.bench_function(game.as_str(), |b| {
            b.iter(|| {
                let (st, t) = &states[i % states.len()];
                i += 1;
                black_box(
                    BaccaratEngine::simulate(&table, &cfg, st, "r".into(), *t, &mut rng, None)
                        .unwrap(),
                )
            })
        });
        g.finish();
        let mut g = c.benchmark_group("session_step");
        g.throughput(Throughput::Elements(1));
        let mut st = BaccaratState::default();
        let mut t = 1_700_000_000_000i64;
        let mut n = 0u64;
        g.bench_function(game.as_str(), |b| {
            b.iter(|| {
                n += 1;
                let r = BaccaratEngine::simulate(
                    &table,
                    &cfg,
                    &st,
                    format!("s{n}").into(),
                    t,
                    &mut rng,
                    None,
                )
                .unwrap();
                let a = BaccaratEngine::adjudicate(&cfg, &mut st, &r, &Options::default()).unwrap();
                t = r.events.last().and_then(|e| e.at_ms).unwrap_or(t) + 10_000;
                black_box(a)
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
