//! Simulation throughput: rounds simulated per second per game (honest rounds, from the table
//! states of a played session), and a whole session step (simulate, then adjudicate to advance
//! the state). `cargo bench -p rules-poker-sem-descarte --bench simulate`; criterion reports the
//! rate as `thrpt` in elements (= rounds) per second.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rules_core::*;
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdState};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    for game in PokerSemDescarteEngine::games() {
        let table = PokerSemDescarteEngine::example_table(*game);
        let cfg = PokerSemDescarteEngine::configure(&table).unwrap().config;
        // 256 table states of a played session, each with its next
        // start time.
        let mut rng = SimRng::new(1);
        let mut st = PsdState::default();
        let mut t = 1_700_000_000_000i64;
        let mut states = Vec::with_capacity(256);
        for i in 0..256 {
            states.push((st.clone(), t));
            let r = PokerSemDescarteEngine::simulate(
                &table,
                &cfg,
                &st,
                format!("r{i}").into(),
                t,
                &mut rng,
                None,
            )
            .unwrap();
            PokerSemDescarteEngine::adjudicate(&cfg, &mut st, &r, &Options::default()).unwrap();
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
                    PokerSemDescarteEngine::simulate(
                        &table,
                        &cfg,
                        st,
                        id.clone(),
                        *t,
                        &mut rng,
                        None,
                    )
                    .unwrap(),
                )
            })
        });
        g.finish();
        let mut g = c.benchmark_group("session_step");
        g.throughput(Throughput::Elements(1));
        let mut st = PsdState::default();
        let mut t = 1_700_000_000_000i64;
        g.bench_function(game.as_str(), |b| {
            b.iter(|| {
                let r = PokerSemDescarteEngine::simulate(
                    &table,
                    &cfg,
                    &st,
                    id.clone(),
                    t,
                    &mut rng,
                    None,
                )
                .unwrap();
                let a = PokerSemDescarteEngine::adjudicate(&cfg, &mut st, &r, &Options::default())
                    .unwrap();
                t = r.events.last().and_then(|e| e.at_ms).unwrap_or(t) + 10_000;
                black_box(a)
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
