//! proptest robustness: random rounds built from the vocabulary plus junk never panic;
//! adjudicating twice gives identical output; the state is unchanged on Err; carried craps and
//! banca bets survive a sequence of rounds.
mod common;
use common::*;
use proptest::prelude::*;
use rules_core::*;
use rules_dice::{DiceEngine, DiceState};

const TYPES: &[&str] = &[
    "aces",
    "small",
    "big",
    "small_line",
    "big_line",
    "pass_line",
    "dont_pass",
    "come",
    "dont_come",
    "big_6",
    "big_8",
    "under_7",
    "over_7",
    "odds",
    "any_craps",
    "hard_4",
    "hard_6",
    "hard_8",
    "hard_10",
    "any_seven",
    "total_2",
    "total_3",
    "total_11",
    "total_12",
    "place",
    "place_to_lose",
    "field",
    "single",
    "two_dice_combo",
    "double",
    "triple",
    "any_triple",
    "total",
    "junk",
];
const IDS: &[&str] = &["a", "b", "c", "d", "e"];

fn event() -> impl Strategy<Value = RoundEvent> {
    let id = prop::sample::select(IDS);
    prop_oneof![
        4 => (id.clone(), prop::sample::select(TYPES), prop::collection::vec(0u8..19, 0..3), prop_oneof![Just(1000i64), Just(600), -5i64..5000, Just(MAX_AMOUNT_CENTS + 1)], prop::option::of(id.clone()), prop::option::of(prop::sample::select(vec!["p1", "p2"])))
            .prop_map(|(id, t, sel, amt, on, pl)| {
                let mut b = Bet::new(id, t, amt).selection(&sel);
                b.on_bet = on.map(Into::into);
                b.player = pl.map(Into::into);
                EventKind::Bet(b).into()
            }),
        1 => (id.clone(), -5i64..3000).prop_map(|(id, a)| EventKind::BetChanged { bet_id: id.into(), amount_cents: a }.into()),
        1 => id.clone().prop_map(|id| EventKind::BetWithdrawn { bet_id: id.into() }.into()),
        1 => Just(EventKind::NoMoreBets.into()),
        5 => (prop::collection::vec(0u8..8, 1..4), prop::option::of(3u8..7), prop::option::of(0i64..8_000_000)).prop_map(|(d, c, t)| RoundEvent { at_ms: t, kind: EventKind::Dice { dice: d, chosen_from: c } }),
        4 => (prop::collection::vec(1u8..7, 2..4)).prop_map(|d| EventKind::Dice { dice: d, chosen_from: None }.into()),
        1 => prop::sample::select(vec!["stacked_dice", "short_throw", "die_off_table", "foreign_object", "x"]).prop_map(|r| EventKind::Void { reason: r.into() }.into()),
        1 => prop::sample::select(vec!["dice_touched_before_announce", "x"]).prop_map(|c| EventKind::Fault { code: c.into(), seat: None, detail: None }.into()),
        1 => (prop::sample::select(vec!["lever_press", "dome_covered", "dice_set", "announcement", "x"]), prop::option::of(prop::sample::select(vec!["3", "A", "B", "x"])), prop::option::of(0i64..8_000_000)).prop_map(|(n, v, t)| RoundEvent { at_ms: t, kind: EventKind::Procedure { name: n.into(), value: v.map(String::from), seat: None, amount_cents: None } }),
        1 => (prop::sample::select(vec!["shooter", "thrower", "dealer", "x"]), prop::option::of(0u8..3), prop::option::of(prop::sample::select(vec!["p1", "p2"]))).prop_map(|(r, s, p)| EventKind::Role { role: r.into(), seat: s, player: p.map(Into::into) }.into()),
        1 => prop::collection::vec(id.clone(), 0..3).prop_map(|ids| EventKind::Collect { bet_ids: ids.into_iter().map(Into::into).collect() }.into()),
        1 => id.clone().prop_map(|id| EventKind::Pay { bet_id: id.into(), amount_cents: 1 }.into()),
        1 => (0u8..40).prop_map(|p| EventKind::Ball { pocket: p }.into()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]
    #[test]
    fn never_panics_is_deterministic_and_keeps_state_on_error(
        rounds in prop::collection::vec(prop::collection::vec(event(), 0..10), 1..4),
        results in prop::collection::vec((prop::sample::select(IDS), -5000i64..5000), 0..4),
    ) {
        for c in [banca(), craps(), cussec()] {
            let mut st = DiceState::default();
            for (n, events) in rounds.iter().enumerate() {
                let mut r = settled(events.clone(), &[]);
                r.round_id = format!("r{n}").into();
                r.settlement.as_mut().unwrap().results = results.iter().map(|(b, v)| ReportedNet { bet_id: (*b).into(), net_cents: *v }).collect();
                let st0 = st.clone();
                let mut s2 = st.clone();
                let a1 = DiceEngine::adjudicate(&c, &mut st, &r, &Options { explain: true });
                let a2 = DiceEngine::adjudicate(&c, &mut s2, &r, &Options { explain: true });
                prop_assert_eq!(&a1, &a2);
                prop_assert_eq!(&st, &s2);
                match a1 {
                    Err(_) => prop_assert_eq!(&st, &st0),
                    Ok(a) => {
                        prop_assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&a2.unwrap()).unwrap());
                        let back: DiceState = serde_json::from_str(&serde_json::to_string(&st).unwrap()).unwrap();
                        prop_assert_eq!(&back, &st);
                        for b in &a.bets {
                            if matches!(b.outcome, Outcome::Void | Outcome::Withdrawn | Outcome::Push | Outcome::Open) {
                                prop_assert_eq!(b.due_net_cents, 0);
                            }
                        }
                    }
                }
            }
        }
    }
}
