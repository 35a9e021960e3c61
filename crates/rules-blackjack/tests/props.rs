//! Exhaustive enumerations (naturals, special prize) and proptest robustness.

mod common;
use common::*;
use proptest::prelude::*;
use rules_blackjack::hand::{SpecialPrize, is_ace_ten, special_prize};
use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::Engine;
use rules_core::{
    Bet, Card, Decision, EventKind, Options, Recipient, ReportedNet, Round, RoundEvent, Settlement,
};

const P217: &str = r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":6}"#;

/// r.1(a), r.21: every ordered two-card start (infinite deck, 52 x 52): exactly the 128
/// ace/ten-value pairs are naturals (P = 8/169), each paid 3:2 by the engine against a 9 up,
/// so the naturals' expected return per unit is 128 x 1.5 / 2704.
#[test]
fn r21_naturals_over_every_two_card_start() {
    let cfg = BlackjackEngine::configure(&table(P217)).unwrap().config;
    let deck: Vec<Card> = Card::deck().collect();
    let mut naturals = 0u32;
    let mut paid: i64 = 0;
    for a in &deck {
        for b in &deck {
            let bj = is_ace_ten(&[*a, *b]);
            let s = format!(
                "bet b1 main 1 1000; card seat:1 {a}; card dealer 9S; card seat:1 {b}; card dealer 7S down; {}",
                if bj { "" } else { "dec 1 stand" }
            );
            let adj = BlackjackEngine::adjudicate(
                &cfg,
                &mut BlackjackState::default(),
                &round(&s),
                &Options::default(),
            )
            .unwrap();
            if bj {
                naturals += 1;
                assert_eq!(net(&adj, "b1"), 1500);
                paid += net(&adj, "b1");
            }
        }
    }
    assert_eq!(naturals, 128);
    assert_eq!(naturals as u64 * 169, 8 * 2704);
    assert_eq!(paid, 128 * 1500);
}

/// r.35: every ordered three-card hand (52^3): 24 suited 6-7-8 and 64 three-7s hands; the
/// engine adds exactly 3 x the bet for each of them.
#[test]
fn r35_special_prize_over_every_three_cards() {
    let deck: Vec<Card> = Card::deck().collect();
    let (mut suited, mut sevens) = (0u32, 0u32);
    let mut prize_hands = Vec::new();
    for a in &deck {
        for b in &deck {
            for c in &deck {
                match special_prize(&[*a, *b, *c]) {
                    Some(SpecialPrize::Suited678) => {
                        suited += 1;
                        prize_hands.push([*a, *b, *c]);
                    }
                    Some(SpecialPrize::ThreeSevens) => {
                        sevens += 1;
                        prize_hands.push([*a, *b, *c]);
                    }
                    None => {}
                }
            }
        }
    }
    assert_eq!((suited, sevens), (24, 64));
    let cfg = BlackjackEngine::configure(&table(P217)).unwrap().config;
    for [a, b, c] in prize_hands {
        // Dealer 9 + 8 = 17: the 21 wins 1:1 plus the 3x prize.
        let s = format!(
            "bet b1 main 1 1000; card seat:1 {a}; card dealer 9S; card seat:1 {b}; card dealer 8S down; dec 1 hit; card seat:1 {c}; dec 1 stand"
        );
        let adj = BlackjackEngine::adjudicate(
            &cfg,
            &mut BlackjackState::default(),
            &round(&s),
            &Options::default(),
        )
        .unwrap();
        assert_eq!(net(&adj, "b1"), 1000 + 3000, "{a} {b} {c}");
    }
}

fn tables() -> Vec<rules_blackjack::BlackjackConfig> {
    [
        P217,
        r#"{"game":"blackjack","regulation":"P1364/2001","min_bet_cents":1000,"max_bet_cents":30000,"decks":6,"jackpot":{"bet_amount_cents":200,"increment_bp":7500,"start_value_cents":2000000}}"#,
        r#"{"game":"blackjack","min_bet_cents":1000,"max_bet_cents":30000,"decks":4,"settings":{"shuffler":"continuous"},"jackpot":{"bet_amount_cents":200,"increment_bp":7500,"start_value_cents":2000000,"paytable":[{"combination":"four_aces","award":{"kind":"whole"}},{"combination":"two_aces","award":{"kind":"percent","bp":500}}]}}"#,
        r#"{"game":"blackjack_online","min_bet_cents":100,"max_bet_cents":10000,"decks":6,"settings":{"online_blackjack_beats_21":false}}"#,
    ]
    .iter()
    .map(|t| BlackjackEngine::configure(&table(t)).unwrap().config)
    .collect()
}

fn card_strategy() -> impl Strategy<Value = Card> {
    (0usize..52).prop_map(|i| Card::from_index(i).unwrap())
}

fn event_strategy(has_jp: bool, online: bool) -> impl Strategy<Value = EventKind> {
    let amount = prop::sample::select(vec![200i64, 500, 1000, 1000, 2000, 30000, 1500]);
    let recip = prop::sample::select(vec![
        "seat:1", "seat:1", "seat:1", "seat:1", "seat:1", "seat:2", "seat:1/2", "dealer", "dealer",
        "dealer", "dealer", "burn", "discard",
    ]);
    prop_oneof![
        3 => (prop::sample::select(vec!["b2", "c1", "i1", "v1", "v2", "j1"]), 1u8..4, amount.clone())
            .prop_map(move |(id, seat, a)| {
                let t = match id {
                    "b2" => "main",
                    "c1" => "complementary",
                    "i1" => "insurance",
                    "j1" if has_jp => "jackpot",
                    "j1" => "insurance",
                    _ => "vacant",
                };
                let mut b = Bet::new(id, t, a);
                match t {
                    "complementary" | "insurance" => b = b.on_bet("b1"),
                    "main" => b = b.seat(2),
                    "vacant" => b = b.seat(3),
                    _ => b = b.seat(seat.min(2)),
                }
                EventKind::Bet(b)
            }),
        10 => (recip, card_strategy(), prop::bool::weighted(0.85))
            .prop_map(|(to, card, face_up)| EventKind::Card { to: to.parse::<Recipient>().unwrap(), card, face_up }),
        6 => (prop::sample::select(vec![1u8, 1, 1, 1, 1, 2]), prop::sample::select(vec![1u8, 1, 1, 1, 1, 1, 2]), prop::sample::select(vec!["hit", "hit", "hit", "stand", "stand", "double", "split", "surrender", "even_money"]), prop::option::of(amount.clone()))
            .prop_map(|(s, h, a, amt)| {
                let mut d = Decision::new(s, a).hand(h);
                d.amount_cents = amt;
                EventKind::Decision(d)
            }),
        1 => prop::sample::select(vec!["shuffle", "cut", "warning_card", "shuffler_load", "cards_to_shuffler", "cards_not_inserted", "table_open"])
            .prop_map(|n| EventKind::Procedure { name: n.to_string(), value: None, seat: Some(1), amount_cents: None }),
        1 => Just(EventKind::Fault { code: if online { "malfunction".into() } else { "shuffler_jam".into() }, seat: None, detail: None }),
        1 => Just(EventKind::NoMoreBets),
        1 => Just(EventKind::Void { reason: "malfunction".into() }),
        1 => (-10i64..5_000_000).prop_map(|v| EventKind::JackpotDisplay { value_cents: v }),
        1 => amount.prop_map(|a| EventKind::BetChanged { bet_id: "b1".into(), amount_cents: a }),
        1 => Just(EventKind::BetWithdrawn { bet_id: "b1".into() }),
        1 => Just(EventKind::Role { role: "fiscal_chefe".into(), seat: None, player: None }),
    ]
}

/// Junk the engine must refuse with a `RoundError` (or survive).
fn junk_strategy() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        prop::sample::select(vec![-5i64, 0, 1_000_000_000_001])
            .prop_map(|a| EventKind::Bet(Bet::new("bad", "main", a).seat(4))),
        Just(EventKind::Bet(Bet::new("b1", "main", 1000).seat(5))),
        Just(EventKind::Bet(Bet::new("x", "straight", 1000).seat(5))),
        Just(EventKind::Bet(
            Bet::new("y", "insurance", 1000).on_bet("nope")
        )),
        Just(EventKind::Decision(Decision::new(9, "hit"))),
        Just(EventKind::Decision(Decision::new(1, "fold"))),
        Just(EventKind::Decision(Decision::new(1, "hit").hand(7))),
        Just(EventKind::Card {
            to: Recipient::Ponto,
            card: Card::from_index(0).unwrap(),
            face_up: true
        }),
        Just(EventKind::Procedure {
            name: "bogus".into(),
            value: None,
            seat: None,
            amount_cents: None
        }),
        Just(EventKind::Fault {
            code: "bogus".into(),
            seat: None,
            detail: None
        }),
        Just(EventKind::Ball { pocket: 3 }),
        Just(EventKind::BetWithdrawn {
            bet_id: "ghost".into()
        }),
    ]
}

/// A plausible round: bets, a correct deal, then random events, sometimes with junk.
fn round_strategy(has_jp: bool, online: bool) -> impl Strategy<Value = Round> {
    (
        prop::collection::vec(card_strategy(), 4),
        prop::collection::vec(event_strategy(has_jp, online), 0..24),
        prop::option::weighted(0.25, (junk_strategy(), 0usize..30)),
        prop::option::of(prop::collection::vec(
            (
                prop::sample::select(vec!["b1", "b2", "j1", "i1", "q"]),
                -5000i64..5000,
            ),
            0..4,
        )),
        prop::option::of(0i64..5_000_000),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(deal, rest, junk, settle, jp, void)| {
            let mut ev = vec![
                EventKind::Bet(Bet::new("b1", "main", 1000).seat(1)),
                EventKind::Card {
                    to: Recipient::seat(1),
                    card: deal[0],
                    face_up: true,
                },
                EventKind::Card {
                    to: Recipient::Dealer,
                    card: deal[1],
                    face_up: true,
                },
                EventKind::Card {
                    to: Recipient::seat(1),
                    card: deal[2],
                    face_up: true,
                },
                EventKind::Card {
                    to: Recipient::Dealer,
                    card: deal[3],
                    face_up: false,
                },
            ];
            ev.extend(rest);
            // Bet ids unique within the round (a duplicate id is junk, added on purpose below).
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

    /// Never panics; deterministic; state untouched on error; explain changes only the notes.
    #[test]
    fn random_rounds_never_panic((which, round) in (0usize..4).prop_flat_map(|w| (Just(w), round_strategy(w == 1 || w == 2, w == 3))), prior in prop::collection::vec(card_strategy(), 0..30)) {
        let cfgs = tables();
        let cfg = &cfgs[which];
        let mut st = BlackjackState::default();
        for c in prior { st.shoe.add(c); }
        let before = st.clone();
        let mut st1 = st.clone();
        let r1 = BlackjackEngine::adjudicate(cfg, &mut st1, &round, &Options { explain: true });
        let mut st2 = st.clone();
        let r2 = BlackjackEngine::adjudicate(cfg, &mut st2, &round, &Options { explain: true });
        let mut st3 = st.clone();
        let r3 = BlackjackEngine::adjudicate(cfg, &mut st3, &round, &Options::default());
        match (&r1, &r2, &r3) {
            (Ok(a), Ok(b), Ok(c)) => {
                prop_assert_eq!(serde_json::to_string(a).unwrap(), serde_json::to_string(b).unwrap());
                prop_assert_eq!(&st1, &st2);
                prop_assert_eq!(&st1, &st3);
                let mut a2 = a.clone();
                a2.notes.clear();
                prop_assert_eq!(serde_json::to_string(&a2).unwrap(), serde_json::to_string(c).unwrap());
                // the state serialises and reads back
                let s: BlackjackState = serde_json::from_str(&serde_json::to_string(&st1).unwrap()).unwrap();
                prop_assert_eq!(s, st1);
            }
            (Err(a), Err(b), Err(c)) => {
                prop_assert_eq!(a, b);
                prop_assert_eq!(a, c);
                prop_assert_eq!(&st1, &before);
                prop_assert_eq!(&st3, &before);
            }
            _ => prop_assert!(false, "explain changed success"),
        }
    }
}
