// The 7-seat benchmark round, shared by the criterion bench and the CPU-time test.

pub fn setup() -> (rules_poker_sem_descarte::PsdConfig, Round) {
    let t: TableConfig = serde_json::from_str(
        r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,
        "jackpot":{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000,
        "paytable":[{"combination":"royal_flush","award":{"kind":"whole"}},
        {"combination":"four_of_a_kind","award":{"kind":"multiple","times":500}},
        {"combination":"flush","award":{"kind":"multiple","times":50}}]}}"#,
    )
    .unwrap();
    let cfg = PokerSemDescarteEngine::configure(&t).unwrap().config;
    let deck: Vec<Card> = Card::deck().collect();
    // A fixed shuffle: stride 7 through the deck.
    let order: Vec<Card> = (0..52).map(|i| deck[(i * 7 + 3) % 52]).collect();
    let mut ev = Vec::new();
    for s in 1..=7u8 {
        ev.push(EventKind::Bet(
            Bet::new(&format!("a{s}"), "ante", 2000)
                .seat(s)
                .player(&format!("P{s}")),
        ));
        ev.push(EventKind::Bet(
            Bet::new(&format!("j{s}"), "jackpot", 100).seat(s),
        ));
    }
    ev.push(EventKind::NoMoreBets);
    let mut k = 0;
    for r in 0..5 {
        for s in 1..=7u8 {
            ev.push(EventKind::Card {
                to: Recipient::seat(s),
                card: order[k],
                face_up: false,
            });
            k += 1;
        }
        ev.push(EventKind::Card {
            to: Recipient::Dealer,
            card: order[k],
            face_up: r == 4,
        });
        k += 1;
    }
    ev.push(EventKind::Decision(Decision::new(3, "pass")));
    for s in [1u8, 2, 4, 5, 6, 7] {
        ev.push(EventKind::Bet(
            Bet::new(&format!("c{s}"), "call", 4000)
                .seat(s)
                .on_bet(&format!("a{s}")),
        ));
    }
    let mut round = Round {
        round_id: "bench".into(),
        opened_at_ms: None,
        jackpot_before_cents: Some(2_000_000),
        events: ev.into_iter().map(RoundEvent::new).collect(),
        settlement: None,
    };
    let a = PokerSemDescarteEngine::adjudicate(
        &cfg,
        &mut PsdState::default(),
        &round,
        &Options::default(),
    )
    .unwrap();
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    round.settlement = Some(Settlement {
        void: false,
        results: a
            .bets
            .iter()
            .map(|b| ReportedNet {
                bet_id: b.bet_id.clone(),
                net_cents: b.due_net_cents,
            })
            .collect(),
        house_cents: None,
    });
    (cfg, round)
}
