//! Helpers to write rounds tersely in tests.
#![allow(dead_code)]

use rules_baccarat::{BaccaratConfig, BaccaratEngine, BaccaratState};
use rules_core::{
    Adjudication, Bet, Card, Decision, Engine, EventKind, GameId, Options, Recipient, ReportedNet,
    Round, RoundError, RoundEvent, Setting, Settlement, TableConfig,
};

pub fn table(game: GameId) -> TableConfig {
    TableConfig::new(game)
}

pub fn pb(commission: &str) -> TableConfig {
    let mut t = TableConfig::new(GameId::BaccaratPuntoBanco);
    t.commission = Some(commission.to_string());
    t
}

pub fn macau(commission: &str, m: i64) -> TableConfig {
    let mut t = TableConfig::new(GameId::BaccaratMacau);
    t.commission = Some(commission.to_string());
    t.settings
        .insert("max_exposure_cents".into(), Setting::Int(m));
    t
}

pub fn cdf() -> TableConfig {
    TableConfig::new(GameId::BaccaratCheminDeFer)
}

pub fn set(mut t: TableConfig, name: &str, v: Setting) -> TableConfig {
    t.settings.insert(name.to_string(), v);
    t
}

pub fn config(t: &TableConfig) -> BaccaratConfig {
    BaccaratEngine::configure(t).expect("config").config
}

pub fn c(s: &str) -> Card {
    s.parse().unwrap()
}

/// Cards: "p:7D b:2H p:KC b:4S x:5C d:3H" (p ponto, b banca, x burn, d discard, u: face up
/// prefix like "pu:7D").
pub fn cards(spec: &str) -> Vec<EventKind> {
    spec.split_whitespace()
        .map(|t| {
            let (who, card) = t.split_once(':').unwrap();
            let face_up = who.ends_with('u');
            let to = match &who[..1] {
                "p" => Recipient::Ponto,
                "b" => Recipient::Banca,
                "x" => Recipient::Burn,
                "d" => Recipient::Discard,
                "t" => Recipient::Board,
                other => panic!("{other}"),
            };
            EventKind::Card {
                to,
                card: c(card),
                face_up,
            }
        })
        .collect()
}

pub fn bet(id: &str, ty: &str, amount: i64) -> EventKind {
    EventKind::Bet(Bet::new(id, ty, amount))
}

pub fn bet_at(id: &str, ty: &str, amount: i64, seat: u8) -> EventKind {
    EventKind::Bet(Bet::new(id, ty, amount).seat(seat))
}

pub fn bet_full(b: Bet) -> EventKind {
    EventKind::Bet(b)
}

pub fn nmb() -> EventKind {
    EventKind::NoMoreBets
}

pub fn proc_(name: &str) -> EventKind {
    EventKind::Procedure {
        name: name.into(),
        value: None,
        seat: None,
        amount_cents: None,
    }
}

pub fn proc_v(name: &str, value: &str) -> EventKind {
    EventKind::Procedure {
        name: name.into(),
        value: Some(value.into()),
        seat: None,
        amount_cents: None,
    }
}

pub fn proc_seat(name: &str, value: Option<&str>, seat: u8) -> EventKind {
    EventKind::Procedure {
        name: name.into(),
        value: value.map(Into::into),
        seat: Some(seat),
        amount_cents: None,
    }
}

pub fn proc_amount(name: &str, amount: i64) -> EventKind {
    EventKind::Procedure {
        name: name.into(),
        value: None,
        seat: None,
        amount_cents: Some(amount),
    }
}

pub fn decide(seat: u8, action: &str) -> EventKind {
    EventKind::Decision(Decision::new(seat, action))
}

pub fn decide_amount(seat: u8, action: &str, amount: i64) -> EventKind {
    EventKind::Decision(Decision::new(seat, action).amount(amount))
}

pub fn role(role: &str, seat: u8) -> EventKind {
    EventKind::Role {
        role: role.into(),
        seat: Some(seat),
        player: None,
    }
}

pub fn fault(code: &str) -> EventKind {
    EventKind::Fault {
        code: code.into(),
        seat: None,
        detail: None,
    }
}

pub fn fault_d(code: &str, seat: Option<u8>, detail: Option<&str>) -> EventKind {
    EventKind::Fault {
        code: code.into(),
        seat,
        detail: detail.map(Into::into),
    }
}

pub fn void(reason: &str) -> EventKind {
    EventKind::Void {
        reason: reason.into(),
    }
}

pub fn round(events: Vec<EventKind>) -> Round {
    Round {
        round_id: "r1".into(),
        opened_at_ms: None,
        jackpot_before_cents: None,
        events: events.into_iter().map(RoundEvent::new).collect(),
        settlement: None,
    }
}

pub fn with_settlement(mut r: Round, results: &[(&str, i64)]) -> Round {
    r.settlement = Some(Settlement {
        void: false,
        results: results
            .iter()
            .map(|(id, n)| ReportedNet {
                bet_id: (*id).into(),
                net_cents: *n,
            })
            .collect(),
        house_cents: None,
    });
    r
}

pub fn run(t: &TableConfig, r: &Round) -> Adjudication {
    let cfg = config(t);
    let mut st = BaccaratState::default();
    BaccaratEngine::adjudicate(&cfg, &mut st, r, &Options::default()).expect("adjudicate")
}

pub fn run_state(t: &TableConfig, st: &mut BaccaratState, r: &Round) -> Adjudication {
    let cfg = config(t);
    BaccaratEngine::adjudicate(&cfg, st, r, &Options::default()).expect("adjudicate")
}

pub fn run_err(t: &TableConfig, r: &Round) -> RoundError {
    let cfg = config(t);
    let mut st = BaccaratState::default();
    let before = st.clone();
    let e = BaccaratEngine::adjudicate(&cfg, &mut st, r, &Options::default()).unwrap_err();
    assert_eq!(st, before, "state unchanged on Err");
    e
}

pub fn explain(t: &TableConfig, r: &Round) -> Adjudication {
    let cfg = config(t);
    let mut st = BaccaratState::default();
    BaccaratEngine::adjudicate(&cfg, &mut st, r, &Options { explain: true }).expect("adjudicate")
}

pub fn net(a: &Adjudication, id: &str) -> i64 {
    a.bet(id)
        .unwrap_or_else(|| panic!("no bet {id}"))
        .due_net_cents
}

pub fn codes(a: &Adjudication) -> Vec<String> {
    let mut v: Vec<String> = a.violations.iter().map(|v| v.code.to_string()).collect();
    v.sort();
    v
}

pub fn has(a: &Adjudication, code: &str) -> bool {
    a.has_violation(code)
}

pub fn cat(parts: Vec<Vec<EventKind>>) -> Vec<EventKind> {
    parts.into_iter().flatten().collect()
}
