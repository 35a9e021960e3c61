//! proptest robustness: random records from the vocabulary plus junk never panic; adjudicating
//! twice gives byte-identical output; on Err the state is unchanged; explaining changes nothing
//! but the notes; honestly dealt coups raise no finding.

mod common;
use common::*;
use proptest::prelude::*;
use rules_baccarat::punto_banco::{Chance, play_from_shoe};
use rules_baccarat::{BaccaratConfig, BaccaratEngine, BaccaratState};
use rules_core::{
    Bet, Card, Decision, Engine, EventKind, GameId, Options, Recipient, ReportedNet, Round,
    RoundEvent, Setting, Settlement, TableConfig,
};

fn card() -> impl Strategy<Value = Card> {
    (0usize..52).prop_map(|i| Card::from_index(i).unwrap())
}

const PB_BETS: &[&str] = &["ponto", "banca", "tie", "pair_ponto", "pair_banca"];
const CF_BETS: &[&str] = &[
    "ponto",
    "ponto",
    "ponto",
    "associate",
    "banco",
    "banco_suivi",
    "banco_seul",
    "banco_avec_la_table",
];
const CF_ACTIONS: &[&str] = &[
    "carta",
    "nao",
    "abate",
    "carta",
    "nao",
    "banco",
    "banco_suivi",
    "banco_seul",
    "banco_avec_la_table",
    "bid",
    "bid_associated",
    "pass_hand",
    "decline_hand",
    "refuse_hand",
];
const PB_PROCS: &[&str] = &[
    "shuffle",
    "cut",
    "warning_card",
    "correction",
    "card_annulled",
    "card_to_ponto",
    "card_to_banca",
    "cards_to_shuffler",
];
const CF_PROCS: &[&str] = &[
    "shuffle",
    "cut",
    "warning_card",
    "banker_plays_by_table",
    "advice",
    "advice",
    "unknowing_ponto",
    "garage",
    "auction",
    "seat_change",
    "cards_spread",
];
const PB_ROLES: &[&str] = &["dealer", "card_handler"];
const CF_ROLES: &[&str] = &[
    "card_holder",
    "seated",
    "seated",
    "left",
    "standing",
    "dealer",
    "fiscal",
];
const FAULTS: &[&str] = &[
    "CF_PUNTER_FALSE_DRAW",
    "CF_BANKER_WITHDREW_AFTER_DRAW",
    "CF_BANKER_EXPOSED_PONTO_CARD",
    "CF_STUCK_CARDS",
    "CF_BANKER_EXTRA_CARD_IN_DEAL",
    "CF_BANKER_DREW_TWO_CARDS",
    "CF_FIFTH_CARD_IN_DEAL",
    "CF_PONTO_THREE_CARDS_IN_DEAL",
    "CF_PONTO_FOUR_CARDS",
    "CF_PONTO_CARD_DROPPED",
    "CF_PONTO_CARD_DISCARDED_BY_BANKER",
    "CF_CARD_DROPPED",
    "CF_BANKER_DREW_AGAINST_INDICATION",
    "CF_PUNTER_FAILED_TO_ABATE",
    "CF_PUNTER_CHANGED_ANNOUNCEMENT",
    "CF_PUNTER_DELAY",
    "CF_DEALER_EXPOSED_CARD",
    "CF_DEALER_FALSE_CARTA",
    "CF_DEALER_CARD_FAULT",
    "CF_LAST_COUP_TOO_FEW_CARDS",
    "CF_CARDS_DISCARDED_BY_PLAYER",
    "CF_CARDS_DISCARDED_BY_DEALER",
    "CF_CARD_RETURNED_TO_SHOE",
];
const CF_VOIDS: &[&str] = &[
    "stuck_cards",
    "dealer_card_fault",
    "last_coup_too_few_cards",
    "cards_discarded_by_dealer",
];
const IDS: &[&str] = &["b0", "b1", "b2", "b3", "b4", "b5"];

/// A word of `vocab`, rarely junk.
fn word(vocab: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        60 => proptest::sample::select(vocab).prop_map(|s| s.to_string()),
        1 => "[a-z_]{0,12}",
    ]
}

fn amount() -> impl Strategy<Value = i64> {
    prop_oneof![
        60 => (1i64..40).prop_map(|k| k * 10_000),
        20 => 1i64..400_000,
        1 => Just(0i64),
        1 => Just(-5i64),
        1 => Just(rules_core::MAX_AMOUNT_CENTS),
        1 => Just(i64::MAX),
    ]
}

fn seat() -> impl Strategy<Value = Option<u8>> {
    prop_oneof![40 => (1u8..10).prop_map(Some), 4 => Just(None), 1 => (10u8..=255).prop_map(Some)]
}

fn recipient() -> impl Strategy<Value = Recipient> {
    prop_oneof![
        60 => Just(Recipient::Ponto),
        60 => Just(Recipient::Banca),
        20 => Just(Recipient::Burn),
        10 => Just(Recipient::Discard),
        1 => Just(Recipient::Dealer),
        1 => (0u8..12).prop_map(Recipient::seat),
    ]
}

fn junk() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        Just(EventKind::Ball { pocket: 3 }),
        Just(EventKind::Dice {
            dice: vec![1, 2],
            chosen_from: None
        }),
        Just(EventKind::JackpotDisplay { value_cents: 5 }),
    ]
}

fn event(cf: bool) -> impl Strategy<Value = EventKind> {
    let bets: &'static [&'static str] = if cf { CF_BETS } else { PB_BETS };
    let procs: &'static [&'static str] = if cf { CF_PROCS } else { PB_PROCS };
    let roles: &'static [&'static str] = if cf { CF_ROLES } else { PB_ROLES };
    let voids: &'static [&'static str] = if cf {
        CF_VOIDS
    } else {
        &["uncorrectable_lapse"]
    };
    prop_oneof![
        30 => (proptest::sample::select(IDS), word(bets), amount(), seat(), 0u8..10, 0u8..10, proptest::option::of(proptest::sample::select(IDS)), proptest::option::of("[a-c]"))
            .prop_map(move |(id, ty, a, s, standing, line, on, player)| {
                let mut b = Bet::new(id, &ty, a);
                b.seat = s;
                b.player = player.map(|p| p.as_str().into());
                if standing == 0 { b = b.attr("standing", "true"); }
                if line == 0 && cf { b = b.attr("on_line", "true"); }
                if line == 1 && on.is_some() { b.on_bet = on.map(Into::into); }
                EventKind::Bet(b)
            }),
        60 => (recipient(), card(), 0u8..8).prop_map(|(to, card, up)| EventKind::Card { to, card, face_up: up == 0 }),
        8 => Just(EventKind::NoMoreBets),
        (if cf { 16 } else { 1 }) => (seat(), word(CF_ACTIONS), proptest::option::of(amount())).prop_map(|(s, a, amt)| {
            let mut d = Decision::new(s.unwrap_or(3), &a);
            d.seat = s;
            d.amount_cents = amt;
            EventKind::Decision(d)
        }),
        8 => (word(procs), proptest::option::of(prop_oneof![card().prop_map(|c| c.to_string()), Just("carta".to_string()), Just("nao".to_string()), "[a-z]{0,4}"]), seat(), proptest::option::of(amount()))
            .prop_map(|(name, value, seat, amount_cents)| EventKind::Procedure { name, value, seat, amount_cents }),
        4 => (word(roles), seat()).prop_map(|(role, seat)| EventKind::Role { role, seat, player: None }),
        (if cf { 6 } else { 1 }) => (word(FAULTS), seat(), proptest::option::of(prop_oneof![Just("banker".to_string()), Just("ponto".to_string()), "[a-z]{0,3}"]))
            .prop_map(|(code, seat, detail)| EventKind::Fault { code, seat, detail }),
        1 => word(voids).prop_map(|reason| EventKind::Void { reason }),
        3 => (proptest::sample::select(IDS), amount()).prop_map(|(id, a)| EventKind::BetChanged { bet_id: id.into(), amount_cents: a }),
        2 => proptest::sample::select(IDS).prop_map(|id| EventKind::BetWithdrawn { bet_id: id.into() }),
        1 => proptest::sample::select(IDS).prop_map(|id| EventKind::Pay { bet_id: id.into(), amount_cents: 1 }),
        1 => junk(),
    ]
}

fn settlement() -> impl Strategy<Value = Option<Settlement>> {
    proptest::option::of(
        (
            proptest::bool::weighted(0.05),
            proptest::collection::vec((proptest::sample::select(IDS), -500_000i64..500_000), 0..6),
            proptest::option::of(0i64..10_000),
        )
            .prop_map(|(void, results, house)| Settlement {
                void,
                results: results
                    .into_iter()
                    .map(|(id, n)| ReportedNet {
                        bet_id: id.into(),
                        net_cents: n,
                    })
                    .collect(),
                house_cents: house,
            }),
    )
}

fn rounds(cf: bool) -> impl Strategy<Value = Vec<Round>> {
    proptest::collection::vec(
        (
            proptest::collection::vec(event(cf), 0..24),
            settlement(),
            proptest::bool::weighted(0.9),
        )
            .prop_map(|(mut events, settlement, unique)| {
                if unique {
                    // Mostly unique bet ids (references stay random among b0..b5).
                    let mut k = 0;
                    for e in &mut events {
                        if let EventKind::Bet(b) = e {
                            b.id = format!("b{k}").into();
                            k += 1;
                        }
                    }
                }
                Round {
                    round_id: "r".into(),
                    opened_at_ms: None,
                    jackpot_before_cents: None,
                    events: events.into_iter().map(RoundEvent::new).collect(),
                    settlement,
                }
            }),
        1..4,
    )
}

fn tables() -> Vec<TableConfig> {
    let mut p = set(pb("5pct"), "pairs_offered", Setting::Bool(true));
    p.min_bet_cents = Some(500);
    p.max_bet_cents = Some(35_000);
    p.seats = Some(7);
    let mut m = macau("half_on_5", 100_000);
    m.min_bet_cents = Some(1000);
    let mut c = set(
        set(cdf(), "cagnotte_bp", Setting::Int(500)),
        "min_bank_cents",
        Setting::Int(100_000),
    );
    c.min_bet_cents = Some(10_000);
    let c = set(
        set(c, "auction_base_cents", Setting::Int(100_000)),
        "auction_increment_cents",
        Setting::Int(10_000),
    );
    vec![p, m, c]
}

/// Prefix a round with a plausible coup so that random events also reach the deep paths.
fn with_coup(mut r: Round, game: GameId) -> Round {
    let mut ev: Vec<EventKind> = Vec::new();
    if game == GameId::BaccaratCheminDeFer {
        ev.push(bet_at("bank", "bank", 200_000, 1));
        ev.push(bet_at("pfx", "ponto", 100_000, 3));
    } else {
        ev.push(bet("pfx", "ponto", 1000));
    }
    ev.extend(cards("p:2S b:3D p:AC b:2S"));
    let mut events: Vec<RoundEvent> = ev.into_iter().map(RoundEvent::new).collect();
    events.append(&mut r.events);
    r.events = events;
    r
}

fn check_rounds(t: &TableConfig, rs: &[Round]) -> Result<(), TestCaseError> {
    let cfg = BaccaratEngine::configure(t).unwrap().config;
    let mut st = BaccaratState::default();
    for r in rs {
        for r in [r.clone(), with_coup(r.clone(), t.game)] {
            let before = st.clone();
            let mut st2 = st.clone();
            let mut st3 = st.clone();
            let a = BaccaratEngine::adjudicate(&cfg, &mut st, &r, &Options::default());
            let b = BaccaratEngine::adjudicate(&cfg, &mut st2, &r, &Options::default());
            let e = BaccaratEngine::adjudicate(&cfg, &mut st3, &r, &Options { explain: true });
            match (&a, &b, &e) {
                (Ok(a), Ok(b), Ok(e)) => {
                    prop_assert_eq!(
                        serde_json::to_string(a).unwrap(),
                        serde_json::to_string(b).unwrap()
                    );
                    prop_assert_eq!(&st, &st2);
                    prop_assert_eq!(&st, &st3);
                    prop_assert!(a.notes.is_empty());
                    let mut e = e.clone();
                    e.notes.clear();
                    prop_assert_eq!(a, &e);
                    // The state round-trips through JSON.
                    let j = serde_json::to_string(&st).unwrap();
                    prop_assert_eq!(&serde_json::from_str::<BaccaratState>(&j).unwrap(), &st);
                    // Every bet has one outcome.
                    prop_assert_eq!(a.bets.len(), r.bets().count());
                }
                (Err(x), Err(y), Err(z)) => {
                    prop_assert_eq!(x, y);
                    prop_assert_eq!(x, z);
                    prop_assert_eq!(&st, &before);
                    prop_assert_eq!(&st2, &before);
                }
                _ => prop_assert!(false, "explain or a second run changed Ok/Err"),
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn random_pb_records_never_panic_and_are_deterministic(rs in rounds(false), which in 0usize..2) {
        check_rounds(&tables()[which], &rs)?;
    }

    #[test]
    fn random_cf_records_never_panic_and_are_deterministic(rs in rounds(true)) {
        check_rounds(&tables()[2], &rs)?;
    }

    /// A shoe dealt by the tableau raises no finding and pays what `due_net` says.
    #[test]
    fn honest_pb_coups(shoe in proptest::collection::vec(card(), 6), stakes in proptest::collection::vec(1i64..100_000, 5)) {
        let t = set(pb("5pct"), "pairs_offered", Setting::Bool(true));
        let BaccaratConfig::PuntoBanco(cfg) = config(&t) else { unreachable!() };
        let s = play_from_shoe(&shoe).unwrap();
        let mut ev = Vec::new();
        for (i, ch) in Chance::ALL.iter().enumerate() {
            ev.push(bet(&format!("b{i}"), ch.as_str(), stakes[i] * 20));
        }
        ev.push(nmb());
        let order = [Recipient::Ponto, Recipient::Banca, Recipient::Ponto, Recipient::Banca];
        for (k, c) in shoe.iter().take(s.cards_used).enumerate() {
            let to = if k < 4 {
                order[k]
            } else if k == 4 && (s.cards_used == 6 || rules_baccarat::tableau::pb_ponto_draws(rules_baccarat::cards::score(&[shoe[0], shoe[2]]))) {
                Recipient::Ponto
            } else {
                Recipient::Banca
            };
            ev.push(EventKind::Card { to, card: *c, face_up: true });
        }
        let a = run(&t, &round(ev));
        prop_assert!(a.violations.is_empty(), "{:?}", a.violations);
        for (i, ch) in Chance::ALL.iter().enumerate() {
            prop_assert_eq!(net(&a, &format!("b{i}")), rules_baccarat::punto_banco::due_net(&cfg, *ch, stakes[i] * 20, &s));
        }
    }

    /// Honest chemin de fer coups (the ponto by r.64 with his choice on 5, the banker by r.67
    /// with his options) raise no finding, and with full cover the bank's net is minus the
    /// punters'.
    #[test]
    fn honest_cf_coups(shoe in proptest::collection::vec(card(), 6), draw_on_5 in any::<bool>(), options in any::<bool>()) {
        use rules_baccarat::tableau::{Cf, CfPonto, cf_banker, cf_ponto};
        use rules_baccarat::cards::{card_value, score};
        let mut ev = vec![bet_at("bank", "bank", 200_000, 1), bet_at("p", "ponto", 200_000, 3), nmb()];
        let order = [Recipient::Ponto, Recipient::Banca, Recipient::Ponto, Recipient::Banca];
        for k in 0..4 {
            ev.push(EventKind::Card { to: order[k], card: shoe[k], face_up: false });
        }
        let p2 = score(&[shoe[0], shoe[2]]);
        let b2 = score(&[shoe[1], shoe[3]]);
        let mut next = 4;
        let call = match cf_ponto(p2) {
            CfPonto::Abate => "abate",
            CfPonto::Stand => "nao",
            CfPonto::Draw => "carta",
            CfPonto::Free => if draw_on_5 { "carta" } else { "nao" },
        };
        ev.push(decide(3, call));
        if call != "abate" && b2 < 8 {
            let mut p3 = None;
            if call == "carta" {
                ev.push(EventKind::Card { to: Recipient::Ponto, card: shoe[next], face_up: true });
                p3 = Some(card_value(shoe[next]));
                next += 1;
            }
            let draws = match cf_banker(b2, p3) { Cf::T => true, Cf::F => false, Cf::O => options };
            if draws {
                ev.push(EventKind::Card { to: Recipient::Banca, card: shoe[next], face_up: true });
            }
        }
        let a = run(&{ let mut t = cdf(); t.min_bet_cents = Some(10_000); t }, &round(ev));
        prop_assert!(a.violations.is_empty(), "{:?}", a.violations);
        prop_assert_eq!(net(&a, "bank"), -net(&a, "p"));
    }
}
