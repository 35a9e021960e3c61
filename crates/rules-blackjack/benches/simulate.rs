//! Simulation throughput: rounds simulated per second per game (honest rounds, from the table
//! states of a played session), and a whole session step (simulate, then adjudicate to advance
//! the state). `cargo bench -p rules-blackjack --bench simulate`; criterion reports the rate as
//! `thrpt` in elements (= rounds) per second.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::*;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    for game in BlackjackEngine::games() {
        let table = BlackjackEngine::example_table(*game);
        let cfg = BlackjackEngine::configure(&table).unwrap().config;
        // 256 table states of a played session (shoes at every depth), each with its next
        // start time.
        let mut rng = SimRng::new(1);
        let mut st = BlackjackState::default();
        let mut t = 1_700_000_000_000i64;
        let mut states = Vec::with_capacity(256);
        for i in 0..256 {
            states.push((st.clone(), t));
            let r = BlackjackEngine::simulate(
                &table,
                &cfg,
                &st,
                format!("r{i}").into(),
                t,
                &mut rng,
                None,
            )
            .unwrap();
            BlackjackEngine::adjudicate(&cfg, &mut st, &r, &Options::default()).unwrap();
            t = r.events.last().and_then(|e| e.at_ms).unwrap_or(t) + 10_000;
        }
        let id: Id = "r".into();
        let mut g = c.benchmark_group("simulate");
        g.throughput(Throughput::Elements(1));
        let mut i = 0usize;
        g.bench_function(game.as_str(), |b| {
            b.iter(|| {
                let (st, t) = &states[i % states.len()];
                i += 1;
                black_box(
                    BlackjackEngine::simulate(&table, &cfg, st, id.clone(), *t, &mut rng, None)
                        .unwrap(),
                )
            })
        });
        g.finish();
        let mut g = c.benchmark_group("session_step");
        g.throughput(Throughput::Elements(1));
        let mut st = BlackjackState::default();
        let mut t = 1_700_000_000_000i64;
        g.bench_function(game.as_str(), |b| {
            b.iter(|| {
                let r = BlackjackEngine::simulate(&table, &cfg, &st, id.clone(), t, &mut rng, None)
                    .unwrap();
                let a =
                    BlackjackEngine::adjudicate(&cfg, &mut st, &r, &Options::default()).unwrap();
                t = r.events.last().and_then(|e| e.at_ms).unwrap_or(t) + 10_000;
                black_box(a)
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
