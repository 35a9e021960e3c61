//! Adjudication throughput: a 7-seat round (antes, calls, a pass, jackpot chips, a reported
//! settlement); explain off.

use criterion::{Criterion, criterion_group, criterion_main};
use rules_core::{
    Bet, Card, Decision, Engine, EventKind, Options, Recipient, ReportedNet, Round, RoundEvent,
    Settlement, TableConfig,
};
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdState};

include!("common/seven_seats.rs");

fn bench(c: &mut Criterion) {
    let (cfg, round) = setup();
    let opts = Options::default();
    c.bench_function("poker_sem_descarte_7_seats_settled", |b| {
        b.iter(|| {
            let mut st = PsdState::default();
            std::hint::black_box(
                PokerSemDescarteEngine::adjudicate(
                    &cfg,
                    &mut st,
                    std::hint::black_box(&round),
                    &opts,
                )
                .unwrap(),
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
