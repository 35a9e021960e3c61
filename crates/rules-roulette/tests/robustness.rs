//! proptest robustness: random rounds built from the vocabulary plus junk never panic;
//! adjudicating twice gives identical output; the state is unchanged on Err.
mod common;
use common::*;
use proptest::prelude::*;
use rules_core::*;
use rules_roulette::{RouletteEngine, RouletteState};

const TYPES: &[&str] = &[
    "straight",
    "split",
    "street",
    "corner",
    "line",
    "dozen",
    "column",
    "dozen_split",
    "column_split",
    "even",
    "odd",
    "low",
    "high",
    "red",
    "black",
    "series_grande",
    "series_pequena",
    "series_orfaos",
    "neighbours",
    "finals",
    "plein",
    "",
];
const IDS: &[&str] = &["a", "b", "c", "d", "zz"];

fn event() -> impl Strategy<Value = RoundEvent> {
    let id = prop::sample::select(IDS);
    prop_oneof![
        4 => (id.clone(), prop::sample::select(TYPES), prop::collection::vec(0u8..40, 0..7), prop_oneof![Just(100i64), Just(900), -5i64..2000, Just(MAX_AMOUNT_CENTS + 1)], prop::option::of(0u32..140), prop::option::of(prop::sample::select(vec!["colour", "face_value", "marked_value", "junk"])), prop::option::of(0u8..4))
            .prop_map(|(id, t, sel, amt, chips, ck, seat)| {
                let mut b = Bet::new(id, t, amt).selection(&sel);
                b.chips = chips;
                b.seat = seat;
                if let Some(ck) = ck { b = b.attr("chip_kind", ck); }
                EventKind::Bet(b).into()
            }),
        1 => (id.clone(), -5i64..3000).prop_map(|(id, a)| EventKind::BetChanged { bet_id: id.into(), amount_cents: a }.into()),
        1 => id.clone().prop_map(|id| EventKind::BetWithdrawn { bet_id: id.into() }.into()),
        2 => Just(EventKind::NoMoreBets.into()),
        3 => (0u8..39).prop_map(|p| EventKind::Ball { pocket: p }.into()),
        1 => prop::sample::select(vec!["chip_fell", "malfunction", "x"]).prop_map(|r| EventKind::Void { reason: r.into() }.into()),
        2 => (any::<bool>(), any::<bool>(), prop::option::of(0u8..40), prop::option::of(prop::sample::select(vec!["A", "B"])), prop::option::of(0i64..8_000_000)).prop_map(|(b, w, f, id, t)| {
            let d = |x: bool| if x { Direction::Clockwise } else { Direction::Counterclockwise };
            RoundEvent { at_ms: t, kind: EventKind::Launch { ball_direction: Some(d(b)), wheel_direction: Some(d(w)), from_pocket: f, ball_id: id.map(String::from) } }
        }),
        1 => prop::collection::vec(id.clone(), 0..3).prop_map(|ids| EventKind::Collect { bet_ids: ids.into_iter().map(Into::into).collect() }.into()),
        1 => id.clone().prop_map(|id| EventKind::Pay { bet_id: id.into(), amount_cents: 1 }.into()),
        1 => (prop::sample::select(vec!["spinner", "dealer", "x"]), prop::option::of(0u8..3), prop::option::of(prop::sample::select(vec!["d1", "d2"]))).prop_map(|(r, s, p)| EventKind::Role { role: r.into(), seat: s, player: p.map(Into::into) }.into()),
        1 => (prop::sample::select(vec!["colour_value", "late_chip_exchange", "result_shown", "ball_change", "colour_lost", "x"]), prop::option::of(prop::sample::select(vec!["3", "17", "40", "x"])), prop::option::of(-5i64..5000)).prop_map(|(n, v, a)| EventKind::Procedure { name: n.into(), value: v.map(String::from), seat: Some(1), amount_cents: a }.into()),
        1 => prop::sample::select(vec!["ball_lost", "x"]).prop_map(|c| EventKind::Fault { code: c.into(), seat: None, detail: None }.into()),
    ]
}

fn cfgs() -> Vec<rules_roulette::RouletteConfig> {
    let mut t = table(GameId::RouletteAmerican, &[("wheel", text("french"))]);
    t.min_bet_cents = Some(100);
    t.max_bet_cents = Some(1000);
    vec![
        american(),
        RouletteEngine::configure(&t).unwrap().config,
        RouletteEngine::configure(&table(
            GameId::RouletteAmerican,
            &[("wheel", text("american"))],
        ))
        .unwrap()
        .config,
        french(),
        online(),
        RouletteEngine::configure(&table(
            GameId::RouletteFrenchOnline,
            &[
                ("zero_rule", text("la_partage")),
                ("multi_player", Setting::Bool(true)),
                ("call_finals", Setting::Bool(true)),
            ],
        ))
        .unwrap()
        .config,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]
    #[test]
    fn never_panics_is_deterministic_and_keeps_state_on_error(
        events in prop::collection::vec(event(), 0..14),
        results in prop::collection::vec((prop::sample::select(IDS), -5000i64..5000), 0..4),
        last in prop::option::of(0u8..37),
    ) {
        let mut r = settled(events, &[]);
        r.settlement.as_mut().unwrap().results = results.into_iter().map(|(b, n)| ReportedNet { bet_id: b.into(), net_cents: n }).collect();
        for cfg in cfgs() {
            let st0 = RouletteState { last_number: last, ..Default::default() };
            let mut s1 = st0.clone();
            let mut s2 = st0.clone();
            let a1 = RouletteEngine::adjudicate(&cfg, &mut s1, &r, &Options { explain: true });
            let a2 = RouletteEngine::adjudicate(&cfg, &mut s2, &r, &Options { explain: true });
            prop_assert_eq!(&a1, &a2);
            prop_assert_eq!(&s1, &s2);
            match a1 {
                Err(_) => prop_assert_eq!(&s1, &st0),
                Ok(a) => {
                    prop_assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&a2.unwrap()).unwrap());
                    for b in &a.bets {
                        if matches!(b.outcome, Outcome::Void | Outcome::Withdrawn | Outcome::Push) {
                            prop_assert_eq!(b.due_net_cents, 0);
                        }
                    }
                }
            }
        }
    }
}
