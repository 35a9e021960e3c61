#![allow(dead_code)]
use rules_core::*;
use rules_dice::{DiceConfig, DiceEngine, DiceState};

pub fn table(game: GameId, settings: &[(&str, Setting)]) -> TableConfig {
    let mut t = TableConfig::new(game);
    for (k, v) in settings {
        t.settings.insert(k.to_string(), v.clone());
    }
    t
}
pub fn cfg(t: &TableConfig) -> DiceConfig {
    DiceEngine::configure(t).unwrap().config
}
pub fn banca() -> DiceConfig {
    cfg(&table(GameId::BancaFrancesa, &[]))
}
pub fn cussec() -> DiceConfig {
    cfg(&table(GameId::Cussec, &[]))
}
pub fn craps() -> DiceConfig {
    cfg(&table(
        GameId::Craps,
        &[
            ("bar", Setting::Int(12)),
            ("dont_odds_payout", Setting::Text("lay".into())),
        ],
    ))
}
pub fn bet(id: &str, t: &str, sel: &[u8], amount: Cents) -> RoundEvent {
    EventKind::Bet(Bet::new(id, t, amount).selection(sel)).into()
}
pub fn odds(id: &str, on: &str, amount: Cents) -> RoundEvent {
    EventKind::Bet(Bet::new(id, "odds", amount).on_bet(on)).into()
}
pub fn dice(d: &[u8]) -> RoundEvent {
    EventKind::Dice {
        dice: d.to_vec(),
        chosen_from: None,
    }
    .into()
}
pub fn void(r: &str) -> RoundEvent {
    EventKind::Void { reason: r.into() }.into()
}
pub fn nmb() -> RoundEvent {
    EventKind::NoMoreBets.into()
}
pub fn proc_(name: &str, value: Option<&str>) -> RoundEvent {
    EventKind::Procedure {
        name: name.into(),
        value: value.map(String::from),
        seat: None,
        amount_cents: None,
    }
    .into()
}
pub fn levers() -> RoundEvent {
    proc_("lever_press", Some("3"))
}
pub fn round(events: Vec<RoundEvent>) -> Round {
    Round {
        round_id: "r1".into(),
        opened_at_ms: None,
        jackpot_before_cents: None,
        events,
        settlement: None,
    }
}
pub fn settled(events: Vec<RoundEvent>, results: &[(&str, Cents)]) -> Round {
    let mut r = round(events);
    r.settlement = Some(Settlement {
        void: false,
        results: results
            .iter()
            .map(|(b, n)| ReportedNet {
                bet_id: (*b).into(),
                net_cents: *n,
            })
            .collect(),
        house_cents: None,
    });
    r
}
pub fn run(c: &DiceConfig, events: Vec<RoundEvent>) -> Adjudication {
    DiceEngine::adjudicate(
        c,
        &mut DiceState::default(),
        &round(events),
        &Options::default(),
    )
    .unwrap()
}
pub fn run_st(c: &DiceConfig, st: &mut DiceState, events: Vec<RoundEvent>) -> Adjudication {
    DiceEngine::adjudicate(c, st, &round(events), &Options::default()).unwrap()
}
pub fn net(a: &Adjudication, id: &str) -> Cents {
    a.bet(id)
        .unwrap_or_else(|| panic!("no bet {id} in {a:?}"))
        .due_net_cents
}
pub fn outcome(a: &Adjudication, id: &str) -> Outcome {
    a.bet(id).unwrap().outcome
}
