//! Adjudication throughput: a 10-bet roulette round with a settlement, explain off.
use criterion::{Criterion, criterion_group, criterion_main};
use rules_core::*;
use rules_roulette::{RouletteEngine, RouletteState};
use std::hint::black_box;

fn round() -> Round {
    let bets: Vec<Bet> = vec![
        Bet::new("b1", "straight", 500).selection(&[17]).seat(1),
        Bet::new("b2", "split", 500).selection(&[17, 20]).seat(1),
        Bet::new("b3", "street", 500)
            .selection(&[16, 17, 18])
            .seat(2),
        Bet::new("b4", "corner", 500)
            .selection(&[13, 14, 16, 17])
            .seat(2),
        Bet::new("b5", "line", 500)
            .selection(&[13, 14, 15, 16, 17, 18])
            .seat(3),
        Bet::new("b6", "dozen", 1000).selection(&[2]).seat(3),
        Bet::new("b7", "column", 1000).selection(&[2]).seat(4),
        Bet::new("b8", "red", 2000).seat(4),
        Bet::new("b9", "odd", 2000).seat(5),
        Bet::new("b10", "series_orfaos", 2500).chips(5).seat(5),
    ];
    let mut events: Vec<RoundEvent> = bets.into_iter().map(|b| EventKind::Bet(b).into()).collect();
    events.push(EventKind::NoMoreBets.into());
    events.push(EventKind::Ball { pocket: 17 }.into());
    let nets = [
        17500, 8500, 5500, 4000, 2500, 2000, 2000, -2000, 2000, 15500,
    ];
    Round {
        round_id: "r".into(),
        opened_at_ms: None,
        jackpot_before_cents: None,
        events,
        settlement: Some(Settlement {
            void: false,
            results: nets
                .iter()
                .enumerate()
                .map(|(i, n)| ReportedNet {
                    bet_id: format!("b{}", i + 1).into(),
                    net_cents: *n,
                })
                .collect(),
            house_cents: None,
        }),
    }
}

fn bench(c: &mut Criterion) {
    let mut t = TableConfig::new(GameId::RouletteAmerican);
    t.settings
        .insert("wheel".into(), Setting::Text("french".into()));
    let cfg = RouletteEngine::configure(&t).unwrap().config;
    let r = round();
    let a =
        RouletteEngine::adjudicate(&cfg, &mut RouletteState::default(), &r, &Options::default())
            .unwrap();
    assert!(
        a.discrepancies.is_empty() && a.violations.is_empty(),
        "{a:?}"
    );
    c.bench_function("roulette_american_10_bets", |b| {
        b.iter(|| {
            let mut st = RouletteState::default();
            black_box(
                RouletteEngine::adjudicate(
                    black_box(&cfg),
                    &mut st,
                    black_box(&r),
                    &Options::default(),
                )
                .unwrap(),
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
