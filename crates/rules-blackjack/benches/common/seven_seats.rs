// The 7-seat benchmark round, shared by the criterion bench and the CPU-time test.

/// A 7-seat P217/2007 round with a split, doubles, a complementary bet, insurance, a jackpot
/// chip and a reported settlement.
pub fn seven_seat_round() -> (rules_blackjack::BlackjackConfig, Round) {
    let mut input: RoundInput =
        serde_json::from_str(include_str!("../../../../docs/rounds/blackjack.json")).unwrap();
    let cfg = BlackjackEngine::configure(&input.table).unwrap().config;
    // Add seats 2, 4, 6, 7 to the documented round (3 seats): simple stand/hit hands.
    let extra: serde_json::Value = serde_json::json!([
        {"type":"bet","id":"b2","bet_type":"main","seat":2,"amount_cents":1000},
        {"type":"bet","id":"b4","bet_type":"main","seat":4,"amount_cents":3000},
        {"type":"bet","id":"b6","bet_type":"main","seat":6,"amount_cents":2000},
        {"type":"bet","id":"b7","bet_type":"main","seat":7,"amount_cents":1000}
    ]);
    let extra: Vec<rules_core::RoundEvent> = serde_json::from_value(extra).unwrap();
    let mut ev = extra;
    ev.append(&mut input.round.events);
    // Re-deal: replace the documented deal by one for seats 1-7.
    let json = serde_json::json!([
        {"type":"card","to":"seat:1","card":"8S"},{"type":"card","to":"seat:2","card":"TS"},
        {"type":"card","to":"seat:3","card":"TH"},{"type":"card","to":"seat:4","card":"9D"},
        {"type":"card","to":"seat:5","card":"5H"},{"type":"card","to":"seat:6","card":"KC"},
        {"type":"card","to":"seat:7","card":"4C"},{"type":"card","to":"dealer","card":"AC"},
        {"type":"card","to":"seat:1","card":"8D"},{"type":"card","to":"seat:2","card":"7S"},
        {"type":"card","to":"seat:3","card":"9C"},{"type":"card","to":"seat:4","card":"9H"},
        {"type":"card","to":"seat:5","card":"6D"},{"type":"card","to":"seat:6","card":"QD"},
        {"type":"card","to":"seat:7","card":"5C"},{"type":"card","to":"dealer","card":"6H","face_up":false},
        {"type":"bet","id":"i3","bet_type":"insurance","seat":3,"amount_cents":2000,"on_bet":"b3"},
        {"type":"decision","seat":1,"action":"split","amount_cents":5000},
        {"type":"card","to":"seat:1","card":"3C"},
        {"type":"decision","seat":1,"action":"double","amount_cents":5000},
        {"type":"card","to":"seat:1","card":"KH"},
        {"type":"card","to":"seat:1/2","card":"TC"},
        {"type":"decision","seat":1,"hand":2,"action":"stand"},
        {"type":"decision","seat":2,"action":"stand"},
        {"type":"decision","seat":3,"action":"stand"},
        {"type":"decision","seat":4,"action":"stand"},
        {"type":"decision","seat":5,"action":"double","amount_cents":2000},
        {"type":"decision","seat":5,"action":"double","amount_cents":1000,"bet_id":"c5"},
        {"type":"card","to":"seat:5","card":"9S"},
        {"type":"decision","seat":6,"action":"stand"},
        {"type":"decision","seat":7,"action":"hit"},
        {"type":"card","to":"seat:7","card":"2H"},
        {"type":"decision","seat":7,"action":"hit"},
        {"type":"card","to":"seat:7","card":"7H"},
        {"type":"decision","seat":7,"action":"stand"}
    ]);
    let deal: Vec<rules_core::RoundEvent> = serde_json::from_value(json).unwrap();
    let keep: Vec<_> = ev
        .into_iter()
        .filter(|e| {
            matches!(
                e.kind,
                rules_core::EventKind::Bet(_)
                    | rules_core::EventKind::NoMoreBets
                    | rules_core::EventKind::Role { .. }
            ) && !matches!(&e.kind, rules_core::EventKind::Bet(b) if b.bet_type == "insurance")
        })
        .collect();
    input.round.events = keep.into_iter().chain(deal).collect();
    let s = input.round.settlement.get_or_insert_with(Default::default);
    for (id, n) in [("b2", 0), ("b4", 3000), ("b6", 2000), ("b7", 1000)] {
        s.results.push(rules_core::ReportedNet {
            bet_id: id.into(),
            net_cents: n,
        });
    }
    (cfg, input.round)
}
