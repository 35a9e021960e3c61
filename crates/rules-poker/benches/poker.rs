//! Benchmarks: hand evaluation and a 9-seat hold'em showdown adjudication.
//!
//! `cargo bench -p rules-poker -- --warm-up-time 1 --measurement-time 3`
#![allow(clippy::needless_range_loop)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rules_core::{
    Bet, Card, Decision, Engine, EventKind, GameId, Options, Recipient, ReportedNet, Round,
    RoundEvent, Setting, Settlement, TableConfig,
};
use rules_poker::PokerEngine;
use rules_poker::eval::{self, CardSet, Ranking, Selection};

/// A fixed pseudo-random list of 7-card hands (xorshift; no dependency).
fn hands(n: usize) -> Vec<[Card; 9]> {
    let deck: Vec<Card> = Card::deck().collect();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            let mut d = deck.clone();
            for i in 0..9 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let j = i + (x % (52 - i as u64)) as usize;
                d.swap(i, j);
            }
            [d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8]]
        })
        .collect()
}

fn nine_seat_showdown() -> Round {
    let mut ev: Vec<RoundEvent> = Vec::new();
    let mut push = |k: EventKind| ev.push(RoundEvent::new(k));
    for s in 1..=9u8 {
        push(EventKind::Bet(
            Bet::new(&format!("s{s}"), "seat", 50_000).seat(s),
        ));
    }
    push(EventKind::Role {
        role: "button".into(),
        seat: Some(1),
        player: None,
    });
    push(EventKind::Decision(Decision::new(1, "post_sb").amount(500)));
    push(EventKind::Decision(
        Decision::new(2, "post_bb").amount(1000),
    ));
    let hole = [
        "AS KS", "AH KH", "QS QH", "JS JH", "TS TH", "9S 9H", "8S 8H", "7S 7H", "6S 6H",
    ];
    let hole: Vec<Vec<Card>> = hole
        .iter()
        .map(|h| h.split(' ').map(|c| c.parse().unwrap()).collect())
        .collect();
    for k in 0..2 {
        for s in 0..9 {
            push(EventKind::Card {
                to: Recipient::seat(s as u8 + 1),
                card: hole[s][k],
                face_up: false,
            });
        }
    }
    for s in 3..=9u8 {
        push(EventKind::Decision(Decision::new(s, "call").amount(1000)));
    }
    push(EventKind::Decision(Decision::new(1, "call").amount(500)));
    push(EventKind::Decision(Decision::new(2, "check")));
    let streets: [(&str, &[&str]); 3] = [
        ("2C", &["AD", "KD", "3D"]),
        ("2D", &["4C"]),
        ("2H", &["2S"]),
    ];
    for (burn, cards) in streets {
        push(EventKind::Card {
            to: Recipient::Burn,
            card: burn.parse().unwrap(),
            face_up: false,
        });
        for c in cards {
            push(EventKind::Card {
                to: Recipient::Board,
                card: c.parse().unwrap(),
                face_up: true,
            });
        }
        for s in 1..=9u8 {
            push(EventKind::Decision(Decision::new(s, "check")));
        }
    }
    // seats 1 and 2 split with aces and kings: 9000 in units of 1000, the odd unit to the mão
    // (seat 1): 5000 and 4000, less 5%
    let results = (1..=9u8)
        .map(|s| ReportedNet {
            bet_id: format!("s{s}").into(),
            net_cents: match s {
                1 => 3750,
                2 => 2800,
                _ => -1000,
            },
        })
        .collect();
    Round {
        round_id: "bench".into(),
        opened_at_ms: None,
        jackpot_before_cents: None,
        events: ev,
        settlement: Some(Settlement {
            void: false,
            results,
            house_cents: Some(450),
        }),
    }
}

fn bench(c: &mut Criterion) {
    let hs = hands(1024);
    c.bench_function("eval_holdem_7_cards", |b| {
        let mut i = 0;
        b.iter(|| {
            let h = &hs[i & 1023];
            i += 1;
            black_box(eval::eval_standard(CardSet::from_cards(black_box(&h[..7]))))
        })
    });
    c.bench_function("eval_omaha_4_plus_5", |b| {
        let mut i = 0;
        b.iter(|| {
            let h = &hs[i & 1023];
            i += 1;
            black_box(eval::best_hand(
                Ranking::Standard,
                Selection::TwoPlusThree,
                &h[..4],
                &h[4..9],
            ))
        })
    });
    c.bench_function("eval_sintetico_2_plus_5", |b| {
        let mut i = 0;
        b.iter(|| {
            let h = &hs[i & 1023];
            i += 1;
            black_box(eval::best_hand(
                Ranking::Sintetico,
                Selection::TwoPlusThree,
                &h[..2],
                &h[2..7],
            ))
        })
    });
    let mut t = TableConfig::new(GameId::PokerHoldem);
    t.min_bet_cents = Some(1000);
    t.commission = Some("per_hand".into());
    t.settings.insert("commission_bp".into(), Setting::Int(500));
    let cfg = PokerEngine::configure(&t).unwrap().config;
    let round = nine_seat_showdown();
    {
        let mut st = Default::default();
        let a = PokerEngine::adjudicate(&cfg, &mut st, &round, &Options::default()).unwrap();
        assert!(
            a.violations.is_empty() && a.discrepancies.is_empty(),
            "{a:#?}"
        );
    }
    c.bench_function("adjudicate_holdem_9_seat_showdown", |b| {
        b.iter(|| {
            let mut st = Default::default();
            black_box(
                PokerEngine::adjudicate(&cfg, &mut st, black_box(&round), &Options::default())
                    .unwrap(),
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
