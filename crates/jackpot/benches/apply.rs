//! Events applied per second: meter readings of machines that each feed two pools (their own
//! jackpot and a superjackpot of ten machines over two casinos).
//!
//! `cargo bench -p jackpot --bench apply`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use jackpot::*;
use rules_core::Id;

const MACHINES: usize = 1_000;
const READINGS: usize = 10_000;

fn setup() -> (Book, u64) {
    let mut book = Book::new();
    let mut idx = 0u64;
    let mut apply = |book: &mut Book, e: Event| {
        idx += 1;
        book.apply(
            &e,
            EventCtx {
                ledger_index: idx,
                at_ms: idx as i64,
            },
        )
        .expect("setup event");
    };
    apply(
        &mut book,
        Event::ModelApproved(ModelApproved {
            model_id: "K".into(),
            theoretical_rtp_bp: 9_200,
            bet_values_cents: vec![100],
            approval_ref: String::new(),
        }),
    );
    for m in 0..MACHINES {
        apply(
            &mut book,
            Event::MachineRegistered(MachineRegistered {
                machine_id: format!("m{m}").into(),
                casino_id: if m % 2 == 0 { "A".into() } else { "B".into() },
                model_id: "K".into(),
                bet_values_cents: vec![100],
            }),
        );
        apply(
            &mut book,
            Event::PoolConfigured(PoolConfigured {
                pool_id: format!("j{m}").into(),
                kind: PoolKind::Jackpot,
                casino_ids: vec![],
                member_machine_ids: vec![format!("m{m}").into()],
                member_table_ids: vec![],
                contribution_bp: 120,
                start_value_cents: 40_000,
                reset_value_cents: 0,
            }),
        );
    }
    for g in 0..MACHINES / 10 {
        apply(
            &mut book,
            Event::PoolConfigured(PoolConfigured {
                pool_id: format!("s{g}").into(),
                kind: PoolKind::Superjackpot,
                casino_ids: vec![],
                member_machine_ids: (g * 10..g * 10 + 10)
                    .map(|m| Id::from(format!("m{m}")))
                    .collect(),
                member_table_ids: vec![],
                contribution_bp: 80,
                start_value_cents: 300_000,
                reset_value_cents: 0,
            }),
        );
    }
    (book, idx)
}

fn readings(count: usize) -> Vec<Event> {
    (0..count)
        .map(|i| {
            let m = i % MACHINES;
            let round = (i / MACHINES) as u64 + 1;
            // Wraps an 8-digit meter now and then.
            let r = 100_000_000;
            let coin_in = (round * 1_234_567) % r;
            Event::MeterReading(MeterReading {
                machine_id: format!("m{m}").into(),
                meters: vec![
                    Meter::new(COIN_IN, coin_in, r),
                    Meter::new(COIN_OUT, coin_in * 9 / 10, r),
                    Meter::new(TOTAL_DROP, coin_in / 4, r),
                    Meter::new(GAMES_PLAYED, round * 1_000, 0),
                ],
            })
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let (book, start) = setup();
    let events = readings(READINGS);
    let mut g = c.benchmark_group("apply");
    g.throughput(Throughput::Elements(READINGS as u64));
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("meter_readings_2_pools", |b| {
        b.iter_batched(
            || book.clone(),
            |mut book| {
                let mut idx = start;
                for e in &events {
                    idx += 1;
                    let f = book
                        .apply(
                            e,
                            EventCtx {
                                ledger_index: idx,
                                at_ms: idx as i64,
                            },
                        )
                        .expect("reading");
                    black_box(f);
                }
                book
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
