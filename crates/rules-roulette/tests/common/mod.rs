#![allow(dead_code)]
use rules_core::*;
use rules_roulette::{RouletteConfig, RouletteEngine, RouletteState};

pub fn table(game: GameId, settings: &[(&str, Setting)]) -> TableConfig {
    let mut t = TableConfig::new(game);
    for (k, v) in settings {
        t.settings.insert(k.to_string(), v.clone());
    }
    t
}

pub fn text(s: &str) -> Setting {
    Setting::Text(s.into())
}

pub fn american() -> RouletteConfig {
    RouletteEngine::configure(&table(
        GameId::RouletteAmerican,
        &[("wheel", text("french"))],
    ))
    .unwrap()
    .config
}
pub fn french() -> RouletteConfig {
    RouletteEngine::configure(&table(GameId::RouletteFrench, &[]))
        .unwrap()
        .config
}
pub fn online() -> RouletteConfig {
    RouletteEngine::configure(&table(
        GameId::RouletteFrenchOnline,
        &[("zero_rule", text("lose"))],
    ))
    .unwrap()
    .config
}

pub fn bet(id: &str, t: &str, sel: &[u8], amount: Cents) -> RoundEvent {
    EventKind::Bet(Bet::new(id, t, amount).selection(sel)).into()
}
pub fn chips_bet(id: &str, t: &str, sel: &[u8], amount: Cents, chips: u32) -> RoundEvent {
    EventKind::Bet(Bet::new(id, t, amount).selection(sel).chips(chips)).into()
}
pub fn ball(p: u8) -> RoundEvent {
    EventKind::Ball { pocket: p }.into()
}
pub fn nmb() -> RoundEvent {
    EventKind::NoMoreBets.into()
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
pub fn run(cfg: &RouletteConfig, events: Vec<RoundEvent>) -> Adjudication {
    let mut st = RouletteState::default();
    RouletteEngine::adjudicate(cfg, &mut st, &round(events), &Options::default()).unwrap()
}
pub fn run_round(cfg: &RouletteConfig, st: &mut RouletteState, r: &Round) -> Adjudication {
    RouletteEngine::adjudicate(cfg, st, r, &Options::default()).unwrap()
}
pub fn net(a: &Adjudication, id: &str) -> Cents {
    a.bet(id).unwrap().due_net_cents
}
pub fn codes(a: &Adjudication) -> Vec<String> {
    a.violations.iter().map(|v| v.code.to_string()).collect()
}
