//! proptest robustness: random rounds never panic, are deterministic, leave the state alone on
//! error; explain changes only the notes.

use proptest::prelude::*;
use rules_core::{
    Bet, Card, Decision, Engine, EventKind, Options, Recipient, ReportedNet, Round, RoundEvent,
    Settlement, TableConfig,
};
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdConfig, PsdState};

fn configs() -> Vec<PsdConfig> {
    [
        r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"settings":{"prize_cap_cents":5000}}"#,
        r#"{"game":"poker_sem_descarte","regulation":"P461/2001","min_bet_cents":1000,"max_bet_cents":25000,"jackpot":{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000}}"#,
        r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"settings":{"shuffler":true},"jackpot":{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000,"paytable":[{"combination":"pair","award":{"kind":"percent","bp":100}},{"combination":"high_card","award":{"kind":"whole"}}]}}"#,
    ]
    .iter()
    .filter_map(|t| {
        let t: TableConfig = serde_json::from_str(t).unwrap();
        PokerSemDescarteEngine::configure(&t).ok().map(|c| c.config)
    })
    .collect()
}

fn event() -> impl Strategy<Value = EventKind> {
    let amount = prop::sample::select(vec![100i64, 1000, 2000, 4000, 500, 30000]);
    prop_oneof![
        2 => (prop::sample::select(vec!["a2", "j1", "j2", "a3"]), amount.clone())
            .prop_map(|(id, a)| {
                let b = match id {
                    "a2" => Bet::new(id, "ante", a).seat(2).player("P1"),
                    "a3" => Bet::new(id, "ante", a).seat(9),
                    "j1" => Bet::new(id, "jackpot", a).seat(1),
                    _ => Bet::new(id, "jackpot", a).seat(2),
                };
                EventKind::Bet(b)
            }),
        2 => (prop::sample::select(vec!["seat:1", "seat:2", "dealer", "burn"]), 0usize..52, prop::bool::weighted(0.1))
            .prop_map(|(to, c, up)| EventKind::Card { to: to.parse::<Recipient>().unwrap(), card: Card::from_index(c).unwrap(), face_up: up }),
        2 => Just(EventKind::Decision(Decision::new(1, "pass"))),
        2 => amount.clone().prop_map(|a| EventKind::Bet(Bet::new("c1", "call", a).on_bet("a1"))),
        1 => prop::sample::select(vec!["player_exposed_cards", "card_exposed"]).prop_map(|c| EventKind::Fault { code: c.into(), seat: Some(1), detail: None }),
        1 => prop::sample::select(vec!["cut", "shuffle"]).prop_map(|n| EventKind::Procedure { name: n.into(), value: None, seat: None, amount_cents: None }),
        1 => Just(EventKind::NoMoreBets),
        1 => Just(EventKind::Void { reason: "misdeal".into() }),
        1 => (0i64..3_000_000).prop_map(|v| EventKind::JackpotDisplay { value_cents: v }),
        1 => amount.prop_map(|a| EventKind::BetChanged { bet_id: "a1".into(), amount_cents: a }),
        1 => Just(EventKind::BetWithdrawn { bet_id: "a1".into() }),
    ]
}

fn junk() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        prop::sample::select(vec![-1i64, 0, 1_000_000_000_001])
            .prop_map(|a| EventKind::Bet(Bet::new("bad", "ante", a).seat(3))),
        Just(EventKind::Bet(Bet::new("a1", "ante", 1000).seat(4))),
        Just(EventKind::Bet(Bet::new("x", "bogus", 1000).seat(4))),
        Just(EventKind::Decision(Decision::new(1, "fold"))),
        Just(EventKind::Decision(Decision::new(6, "pass"))),
        Just(EventKind::Card {
            to: Recipient::Board,
            card: Card::from_index(1).unwrap(),
            face_up: true
        }),
        Just(EventKind::Card {
            to: Recipient::Seat { seat: 1, hand: 2 },
            card: Card::from_index(1).unwrap(),
            face_up: true
        }),
        Just(EventKind::Fault {
            code: "bogus".into(),
            seat: None,
            detail: None
        }),
        Just(EventKind::Procedure {
            name: "bogus".into(),
            value: None,
            seat: None,
            amount_cents: None
        }),
        Just(EventKind::Dice {
            dice: vec![1, 2],
            chosen_from: None
        }),
    ]
}

fn round() -> impl Strategy<Value = Round> {
    (
        Just(()).prop_perturb(|_, mut rng| {
            let mut v: Vec<usize> = (0..52).collect();
            for i in (1..52).rev() {
                let j = (rng.next_u32() as usize) % (i + 1);
                v.swap(i, j);
            }
            v
        }),
        prop::collection::vec(event(), 0..8),
        prop::option::weighted(0.25, (junk(), 0usize..20)),
        prop::option::of(prop::collection::vec(
            (
                prop::sample::select(vec!["a1", "c1", "j1", "q"]),
                -5000i64..5000,
            ),
            0..4,
        )),
        prop::option::of(0i64..3_000_000),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.7),
    )
        .prop_map(|(deck, rest, junk, settle, jp, void, call)| {
            let mut ev = vec![EventKind::Bet(Bet::new("a1", "ante", 1000).seat(1))];
            for (k, &c) in deck.iter().take(10).enumerate() {
                let to = if k % 2 == 0 {
                    Recipient::seat(1)
                } else {
                    Recipient::Dealer
                };
                ev.push(EventKind::Card {
                    to,
                    card: Card::from_index(c).unwrap(),
                    face_up: k == 9,
                });
            }
            ev.push(if call {
                EventKind::Bet(Bet::new("c1", "call", 2000).on_bet("a1"))
            } else {
                EventKind::Decision(Decision::new(1, "pass"))
            });
            ev.extend(rest);
            let mut used: Vec<String> = Vec::new();
            for (k, e) in ev.iter_mut().enumerate() {
                if let EventKind::Bet(b) = e {
                    if used.iter().any(|u| **u == *b.id) {
                        b.id = format!("{}_{k}", b.id).into();
                    }
                    used.push(b.id.to_string());
                }
            }
            if let Some((j, at)) = junk {
                let at = at.min(ev.len());
                ev.insert(at, j);
            }
            Round {
                round_id: "p".into(),
                opened_at_ms: None,
                jackpot_before_cents: jp,
                events: ev.into_iter().map(RoundEvent::new).collect(),
                settlement: settle.map(|r| Settlement {
                    void,
                    results: r
                        .into_iter()
                        .map(|(id, n)| ReportedNet {
                            bet_id: id.into(),
                            net_cents: n,
                        })
                        .collect(),
                    house_cents: None,
                }),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_rounds_never_panic(r in round(), which in 0usize..3) {
        let cfgs = configs();
        let cfg = &cfgs[which % cfgs.len()];
        let st = PsdState::default();
        let (mut s1, mut s2, mut s3) = (st.clone(), st.clone(), st.clone());
        let a = PokerSemDescarteEngine::adjudicate(cfg, &mut s1, &r, &Options { explain: true });
        let b = PokerSemDescarteEngine::adjudicate(cfg, &mut s2, &r, &Options { explain: true });
        let c = PokerSemDescarteEngine::adjudicate(cfg, &mut s3, &r, &Options::default());
        match (&a, &b, &c) {
            (Ok(a), Ok(b), Ok(c)) => {
                prop_assert_eq!(serde_json::to_string(a).unwrap(), serde_json::to_string(b).unwrap());
                let mut a2 = a.clone();
                a2.notes.clear();
                prop_assert_eq!(serde_json::to_string(&a2).unwrap(), serde_json::to_string(c).unwrap());
                prop_assert_eq!(&s1, &s2);
            }
            (Err(x), Err(y), Err(z)) => {
                prop_assert_eq!(x, y);
                prop_assert_eq!(x, z);
                prop_assert_eq!(&s1, &st);
                prop_assert_eq!(&s3, &st);
            }
            _ => prop_assert!(false, "explain changed success"),
        }
    }
}
