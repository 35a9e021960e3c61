//! Properties: no input panics; the same input gives the same output; the state is untouched on
//! error; chips are conserved (Σ nets + commission = 0) in random hands with all-ins.

mod common;
use common::*;
use proptest::prelude::*;
use rules_core::{
    Bet, Card, Decision, Engine, EventKind, GameId, Options, Recipient, ReportedNet, Round,
    RoundEvent, Setting, Settlement, TableConfig,
};
use rules_poker::{PokerEngine, PokerState};

const ACTIONS: [&str; 19] = [
    "post_sb",
    "post_bb",
    "post_ante",
    "post_dead",
    "post_forced_bb",
    "check",
    "bet",
    "call",
    "raise",
    "all_in",
    "fold",
    "stardilho",
    "restardilho",
    "timeout",
    "disconnect",
    "hit",
    "",
    "RAISE",
    "call ",
];
const PROCS: [&str; 12] = [
    "shuffle",
    "absent",
    "button_draw",
    "rebuy",
    "top_up",
    "withdraw",
    "leave",
    "session_fee",
    "entry_fee",
    "buy_in",
    "dance",
    "cut",
];
const FAULTS: [&str; 7] = [
    "misdeal",
    "card_exposed",
    "board_exposed_early",
    "system_failure",
    "player_disconnect",
    "bogus",
    "",
];
const VOIDS: [&str; 6] = [
    "misdeal",
    "system_failure",
    "invalid_deck",
    "card_exposed",
    "player_disconnect",
    "rain",
];

fn tables() -> Vec<TableConfig> {
    let mut sess = table(GameId::PokerOmaha, 1000, "per_session", Some(1000));
    sess.max_bet_cents = Some(20_000);
    let mut p461 = table(GameId::PokerSintetico, 1000, "per_hand", None);
    p461.regulation = Some("P461/2001".into());
    vec![
        set(holdem_table(), "commission_cap_cents", Setting::Int(700)),
        sess,
        set(
            table(GameId::PokerSintetico, 1000, "per_hand", Some(500)),
            "stardilho",
            Setting::Bool(true),
        ),
        p461,
        set(
            table(GameId::PokerHoldemOnline, 1000, "per_hand", Some(300)),
            "limit",
            Setting::Text("pot_limit".into()),
        ),
        table(GameId::PokerHoldemOnline, 1000, "buy_in", Some(1000)),
    ]
}

fn amount() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        3 => Just(None),
        6 => (1i64..30_000).prop_map(Some),
        1 => prop_oneof![Just(0i64), Just(-5), Just(i64::MAX), Just(1_000_000_000_001)].prop_map(Some),
    ]
}

fn recipient() -> impl Strategy<Value = Recipient> {
    prop_oneof![
        6 => (0u8..13).prop_map(Recipient::seat),
        3 => Just(Recipient::Board),
        1 => Just(Recipient::Burn),
        1 => Just(Recipient::Discard),
        1 => Just(Recipient::Dealer),
        1 => (1u8..5, 2u8..3).prop_map(|(seat, hand)| Recipient::Seat { seat, hand }),
    ]
}

fn event() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        10 => (0u8..13, 0usize..ACTIONS.len(), amount()).prop_map(|(s, a, m)| {
            let mut d = Decision::new(s, ACTIONS[a]);
            d.amount_cents = m;
            EventKind::Decision(d)
        }),
        8 => (recipient(), 0usize..52, any::<bool>()).prop_map(|(to, c, face_up)| EventKind::Card {
            to,
            card: Card::from_index(c).unwrap(),
            face_up,
        }),
        1 => (0usize..PROCS.len(), proptest::option::of(0u8..13), amount()).prop_map(|(p, seat, a)| {
            EventKind::Procedure { name: PROCS[p].into(), value: None, seat, amount_cents: a }
        }),
        1 => (0usize..FAULTS.len(), proptest::option::of(0u8..13)).prop_map(|(f, seat)| EventKind::Fault {
            code: FAULTS[f].into(),
            seat,
            detail: None,
        }),
        1 => (0usize..VOIDS.len()).prop_map(|v| EventKind::Void { reason: VOIDS[v].into() }),
        1 => (0u8..13, 1i64..5000).prop_map(|(s, a)| EventKind::Bet(Bet::new(&format!("x{s}"), "seat", a).seat(s))),
        1 => Just(EventKind::NoMoreBets),
        1 => (0u8..13).prop_map(|s| EventKind::Role { role: "button".into(), seat: Some(s), player: None }),
    ]
}

fn junk_round() -> impl Strategy<Value = Round> {
    (
        proptest::collection::btree_set(1u8..11, 1..8),
        1u8..11,
        proptest::collection::vec(event(), 0..60),
        proptest::option::of(proptest::collection::vec(
            (1u8..11, -40_000i64..40_000),
            0..8,
        )),
        proptest::option::of(0i64..5000),
        proptest::option::of(0i64..10_000_000),
    )
        .prop_map(|(seats, button, evs, settle, house, at)| {
            let mut events: Vec<RoundEvent> = seats
                .iter()
                .map(|&s| {
                    RoundEvent::new(EventKind::Bet(
                        Bet::new(&format!("s{s}"), "seat", 5000 + s as i64 * 1000).seat(s),
                    ))
                })
                .collect();
            events.push(RoundEvent::new(EventKind::Role {
                role: "button".into(),
                seat: Some(button),
                player: None,
            }));
            events.extend(evs.into_iter().map(RoundEvent::new));
            Round {
                round_id: "fuzz".into(),
                opened_at_ms: at,
                jackpot_before_cents: None,
                events,
                settlement: settle.map(|r| Settlement {
                    void: false,
                    results: r
                        .into_iter()
                        .map(|(s, n)| ReportedNet {
                            bet_id: format!("s{s}").into(),
                            net_cents: n,
                        })
                        .collect(),
                    house_cents: house,
                }),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// No panic on vocabulary plus junk; byte-identical output twice; state untouched on error.
    #[test]
    fn junk_never_panics_and_is_deterministic(round in junk_round(), t in 0usize..6, explain in any::<bool>()) {
        let table = &tables()[t];
        let cfg = PokerEngine::configure(table).unwrap().config;
        let st0 = PokerState { button: Some(3), ..Default::default() };
        let mut st1 = st0.clone();
        let mut st2 = st0.clone();
        let opts = Options { explain };
        let r1 = PokerEngine::adjudicate(&cfg, &mut st1, &round, &opts);
        let r2 = PokerEngine::adjudicate(&cfg, &mut st2, &round, &opts);
        match (&r1, &r2) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(serde_json::to_string(a).unwrap(), serde_json::to_string(b).unwrap());
                prop_assert_eq!(&st1, &st2);
            }
            (Err(a), Err(b)) => {
                prop_assert_eq!(a, b);
                prop_assert_eq!(&st1, &st0);
            }
            _ => prop_assert!(false, "differs between runs"),
        }
    }
}

/// A generator of plausible hold'em hands with all-ins: legal-looking actions in turn, random
/// caves (so short stacks go all-in), a full board.
type Plausible = (Vec<(u8, i64)>, Vec<Card>, Vec<(u8, u8, u32)>);

fn plausible_hand() -> impl Strategy<Value = Plausible> {
    (
        proptest::collection::vec(500i64..20_000, 2..9),
        Just(Card::deck().collect::<Vec<_>>()).prop_shuffle(),
        proptest::collection::vec((0u8..10, 0u8..5, 0u32..10_000), 60),
    )
        .prop_map(|(caves, deck, choices)| {
            let seats: Vec<(u8, i64)> = caves
                .iter()
                .enumerate()
                .map(|(i, &c)| (i as u8 + 1, c))
                .collect();
            (seats, deck, choices)
        })
}

fn build(seats: &[(u8, i64)], deck: &[Card], choices: &[(u8, u8, u32)], online: bool) -> H {
    let n = seats.len();
    let mut cave: Vec<i64> = seats.iter().map(|s| s.1).collect();
    let mut round_in = vec![0i64; n];
    let mut folded = vec![false; n];
    let mut h = H::new().seats(seats);
    // P217: button seat 1 posts the small blind, seat 2 the big; online: button n, 1 and 2 post.
    h = h.button(if online { n as u8 } else { 1 });
    let post =
        |h: H, i: usize, act: &str, amt: i64, cave: &mut Vec<i64>, round_in: &mut Vec<i64>| {
            let a = amt.min(cave[i]);
            cave[i] -= a;
            round_in[i] += a;
            h.da(seats[i].0, act, a)
        };
    h = post(h, 0, "post_sb", 500, &mut cave, &mut round_in);
    h = post(h, 1 % n, "post_bb", 1000, &mut cave, &mut round_in);
    let mut k = 0;
    for _pass in 0..2 {
        for seat in seats {
            h = h.card(Recipient::seat(seat.0), &deck[k].to_string(), false);
            k += 1;
        }
    }
    let mut ci = 0;
    let mut next_choice = || {
        let c = choices[ci % choices.len()];
        ci += 1;
        c
    };
    for street in 0..4 {
        if street > 0 {
            if !online {
                h = h.burn(&deck[k].to_string());
                k += 1;
            }
            let cards = if street == 1 { 3 } else { 1 };
            for _ in 0..cards {
                h = h.board(&deck[k].to_string());
                k += 1;
            }
            round_in.iter_mut().for_each(|r| *r = 0);
        }
        let mut current = *round_in.iter().max().unwrap();
        let start = if street == 0 { 2 % n } else { 0 };
        let mut acted = vec![false; n];
        let mut guard = 0;
        let mut p = start;
        loop {
            guard += 1;
            if guard > 40 {
                break;
            }
            let live = folded.iter().filter(|f| !**f).count();
            if live <= 1 {
                break;
            }
            let needs = |i: usize, acted: &Vec<bool>, current: i64| {
                !folded[i] && cave[i] > 0 && (!acted[i] || round_in[i] < current)
            };
            if !(0..n).any(|i| needs(i, &acted, current)) {
                break;
            }
            while !needs(p, &acted, current) {
                p = (p + 1) % n;
            }
            let (_, kind, x) = next_choice();
            let to_call = current - round_in[p];
            let s = seats[p].0;
            match kind {
                0 if to_call > 0 => {
                    folded[p] = true;
                    h = h.d(s, "fold");
                }
                0 | 1 => {
                    if to_call == 0 {
                        h = h.d(s, "check");
                    } else if to_call >= cave[p] {
                        round_in[p] += cave[p];
                        h = h.da(s, "all_in", cave[p]);
                        cave[p] = 0;
                    } else {
                        round_in[p] += to_call;
                        cave[p] -= to_call;
                        h = h.da(s, "call", to_call);
                    }
                }
                2 | 3 => {
                    let raise = 1000 + (x as i64 % 4) * 1000;
                    let put = to_call + raise;
                    if put >= cave[p] {
                        round_in[p] += cave[p];
                        h = h.da(s, "all_in", cave[p]);
                        cave[p] = 0;
                    } else {
                        round_in[p] += put;
                        cave[p] -= put;
                        h = h.da(s, if current == 0 { "bet" } else { "raise" }, put);
                    }
                    current = current.max(round_in[p]);
                    acted.iter_mut().for_each(|a| *a = false);
                }
                _ => {
                    round_in[p] += cave[p];
                    h = h.da(s, "all_in", cave[p]);
                    cave[p] = 0;
                    current = current.max(round_in[p]);
                    acted.iter_mut().for_each(|a| *a = false);
                }
            }
            acted[p] = true;
            p = (p + 1) % n;
        }
        if folded.iter().filter(|f| !**f).count() <= 1 {
            break;
        }
    }
    // make sure the board is complete when several players remain
    let have = h
        .events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Card {
                    to: Recipient::Board,
                    ..
                }
            )
        })
        .count();
    if folded.iter().filter(|f| !**f).count() > 1 {
        for _ in have..5 {
            h = h.board(&deck[k].to_string());
            k += 1;
        }
    }
    h
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(800))]

    /// r.49, r.50, r.65; Reg806 r.19, r.41, r.42, r.63: chips are conserved: Σ nets + the
    /// commission = 0, every net ≥ −(what the seat put in), across side pots and splits.
    #[test]
    fn chips_are_conserved_with_all_ins((seats, deck, choices) in plausible_hand(), online in any::<bool>(), bp in 0i64..=500) {
        let t = if online {
            set(table(GameId::PokerHoldemOnline, 1000, "per_hand", Some(bp.max(100))), "small_blind_cents", Setting::Int(500))
        } else {
            set(table(GameId::PokerHoldem, 1000, "per_hand", Some(bp)), "commission_cap_cents", Setting::Int(1 + bp * 7))
        };
        let h = build(&seats, &deck, &choices, online);
        let mut st = PokerState::default();
        let a = run_with(&t, &mut st, &h, false).unwrap();
        prop_assert!(a.void.is_none());
        let total: i64 = a.bets.iter().map(|b| b.due_net_cents).sum();
        prop_assert_eq!(total + house(&a), 0, "{:?}", a.bets);
        for b in &a.bets {
            prop_assert!(b.due_net_cents >= -b.stake_cents);
        }
        // the same hand reported as adjudicated reconciles cleanly
        let mut h2 = h.clone();
        h2.settlement = Some(Settlement {
            void: false,
            results: a.bets.iter().map(|b| ReportedNet { bet_id: b.bet_id.clone(), net_cents: b.due_net_cents }).collect(),
            house_cents: Some(house(&a)),
        });
        let mut st = PokerState::default();
        let b = run_with(&t, &mut st, &h2, false).unwrap();
        prop_assert!(b.discrepancies.is_empty());
        prop_assert!(!b.violations.iter().any(|v| v.code == "POKER_COMMISSION_WRONG" || v.code == "POKER_PAYOUT_MISMATCH"));
    }
}
