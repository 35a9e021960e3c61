//! Adjudication throughput: a 7-seat P217/2007 round with a split, doubles, a complementary
//! bet, insurance, a jackpot chip and a reported settlement; explain off.

use criterion::{Criterion, criterion_group, criterion_main};
use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::{Engine, Options, Round, RoundInput};

include!("common/seven_seats.rs");

fn bench(c: &mut Criterion) {
    let (cfg, round) = seven_seat_round();
    let a = BlackjackEngine::adjudicate(
        &cfg,
        &mut BlackjackState::default(),
        &round,
        &Options::default(),
    )
    .unwrap();
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    let opts = Options::default();
    c.bench_function("blackjack_7_seats_settled", |b| {
        b.iter(|| {
            let mut st = BlackjackState::default();
            std::hint::black_box(
                BlackjackEngine::adjudicate(&cfg, &mut st, std::hint::black_box(&round), &opts)
                    .unwrap(),
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
