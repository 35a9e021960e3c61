//! Adjudication throughput: 10-bet dice rounds with a settlement, explain off.
use criterion::{Criterion, criterion_group, criterion_main};
use rules_core::*;
use rules_dice::{DiceEngine, DiceState};
use std::hint::black_box;

fn round(bets: Vec<Bet>, tail: Vec<EventKind>, nets: &[Cents]) -> Round {
    let ids: Vec<Id> = bets.iter().map(|b| b.id.clone()).collect();
    let mut events: Vec<RoundEvent> = bets.into_iter().map(|b| EventKind::Bet(b).into()).collect();
    events.extend(tail.into_iter().map(RoundEvent::from));
    Round {
        round_id: "r".into(),
        opened_at_ms: None,
        jackpot_before_cents: None,
        events,
        settlement: Some(Settlement {
            void: false,
            results: ids
                .into_iter()
                .zip(nets)
                .map(|(bet_id, n)| ReportedNet {
                    bet_id,
                    net_cents: *n,
                })
                .collect(),
            house_cents: None,
        }),
    }
}

fn bench(c: &mut Criterion) {
    let mk = |i: usize, t: &str, sel: &[u8], a: Cents| {
        Bet::new(&format!("b{i}"), t, a)
            .selection(sel)
            .seat((i % 7) as u8)
    };
    // cussec: 10 bets, one throw
    let cs = DiceEngine::configure(&TableConfig::new(GameId::Cussec))
        .unwrap()
        .config;
    let mut cs_round = round(
        vec![
            mk(1, "small", &[], 1000),
            mk(2, "big", &[], 1000),
            mk(3, "single", &[3], 1000),
            mk(4, "double", &[3], 1000),
            mk(5, "triple", &[3], 500),
            mk(6, "any_triple", &[], 1000),
            mk(7, "total", &[9], 1000),
            mk(8, "two_dice_combo", &[1, 3], 400),
            mk(9, "single", &[5], 1000),
            mk(10, "total", &[10], 1000),
        ],
        vec![
            EventKind::NoMoreBets,
            EventKind::Dice {
                dice: vec![3, 3, 3],
                chosen_from: None,
            },
        ],
        &[
            -1000, -1000, 3000, 30000, 95000, 32000, 7000, -400, -1000, -1000,
        ],
    );
    cs_round.events.insert(
        0,
        EventKind::Procedure {
            name: "lever_press".into(),
            value: Some("3".into()),
            seat: None,
            amount_cents: None,
        }
        .into(),
    );
    // banca francesa: 10 bets, one deciding throw
    let bf = DiceEngine::configure(&TableConfig::new(GameId::BancaFrancesa))
        .unwrap()
        .config;
    let bf_round = round(
        (1..=10)
            .map(|i| {
                mk(
                    i,
                    ["aces", "small", "big", "small_line", "big_line"][i % 5],
                    &[],
                    2000,
                )
            })
            .collect(),
        vec![EventKind::Dice {
            dice: vec![1, 2, 3],
            chosen_from: None,
        }],
        &[
            2000, -2000, 1000, -1000, -2000, 2000, -2000, 1000, -1000, -2000,
        ],
    );
    // craps: 10 bets, two throws (point 6, then made)
    let mut t = TableConfig::new(GameId::Craps);
    t.settings.insert("bar".into(), Setting::Int(12));
    t.settings
        .insert("dont_odds_payout".into(), Setting::Text("lay".into()));
    let cr = DiceEngine::configure(&t).unwrap().config;
    let cr_round = round(
        vec![
            mk(1, "pass_line", &[], 1000),
            mk(2, "dont_pass", &[], 1000),
            mk(3, "field", &[], 1000),
            mk(4, "any_craps", &[], 1000),
            mk(5, "big_6", &[], 1000),
            mk(6, "hard_6", &[], 1000),
            mk(7, "place", &[6], 1200),
            mk(8, "place_to_lose", &[6], 1300),
            mk(9, "over_7", &[], 1000),
            mk(10, "under_7", &[], 1000),
        ],
        vec![
            EventKind::Dice {
                dice: vec![2, 4],
                chosen_from: Some(5),
            },
            EventKind::Dice {
                dice: vec![3, 3],
                chosen_from: Some(5),
            },
        ],
        &[
            1000, -1000, -1000, -1000, 1000, -1000, 1400, -1300, -1000, 1000,
        ],
    );
    for (name, cfg, r) in [
        ("cussec_10_bets", &cs, &cs_round),
        ("banca_francesa_10_bets", &bf, &bf_round),
        ("craps_10_bets_2_throws", &cr, &cr_round),
    ] {
        let a =
            DiceEngine::adjudicate(cfg, &mut DiceState::default(), r, &Options::default()).unwrap();
        assert!(
            a.discrepancies.is_empty() && a.violations.is_empty(),
            "{name}: {a:?}"
        );
        c.bench_function(name, |b| {
            b.iter(|| {
                let mut st = DiceState::default();
                black_box(
                    DiceEngine::adjudicate(
                        black_box(cfg),
                        &mut st,
                        black_box(r),
                        &Options::default(),
                    )
                    .unwrap(),
                )
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
