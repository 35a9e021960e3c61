//! A small builder for poker hands in tests.
#![allow(dead_code)]

use rules_core::{
    Adjudication, Bet, Card, Cents, Decision, Engine, EventKind, GameId, Options, Recipient,
    ReportedNet, Round, RoundError, RoundEvent, Setting, Settlement, TableConfig,
};
use rules_poker::{PokerConfig, PokerEngine, PokerState};

pub fn table(game: GameId, min: Cents, commission: &str, bp: Option<i64>) -> TableConfig {
    let mut t = TableConfig::new(game);
    t.min_bet_cents = Some(min);
    t.commission = Some(commission.to_string());
    if let Some(bp) = bp {
        t.settings.insert("commission_bp".into(), Setting::Int(bp));
    }
    t
}

pub fn set(mut t: TableConfig, name: &str, v: Setting) -> TableConfig {
    t.settings.insert(name.into(), v);
    t
}

pub fn cfg(t: &TableConfig) -> PokerConfig {
    PokerEngine::configure(t).expect("config").config
}

#[derive(Clone, Debug)]
pub struct H {
    pub events: Vec<RoundEvent>,
    pub settlement: Option<Settlement>,
    pub opened_at_ms: Option<i64>,
}

pub fn cards(s: &str) -> Vec<Card> {
    s.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

impl H {
    pub fn new() -> H {
        H {
            events: Vec::new(),
            settlement: None,
            opened_at_ms: None,
        }
    }
    pub fn ev(mut self, k: EventKind) -> H {
        self.events.push(RoundEvent::new(k));
        self
    }
    /// Seats with their caves, bet ids `s<seat>`.
    pub fn seats(mut self, seats: &[(u8, Cents)]) -> H {
        for &(s, cave) in seats {
            self = self.ev(EventKind::Bet(
                Bet::new(&format!("s{s}"), "seat", cave).seat(s),
            ));
        }
        self
    }
    pub fn button(self, seat: u8) -> H {
        self.ev(EventKind::Role {
            role: "button".into(),
            seat: Some(seat),
            player: None,
        })
    }
    pub fn d(self, seat: u8, action: &str) -> H {
        self.ev(EventKind::Decision(Decision::new(seat, action)))
    }
    pub fn da(self, seat: u8, action: &str, amount: Cents) -> H {
        self.ev(EventKind::Decision(
            Decision::new(seat, action).amount(amount),
        ))
    }
    pub fn card(self, to: Recipient, c: &str, face_up: bool) -> H {
        self.ev(EventKind::Card {
            to,
            card: c.parse().unwrap(),
            face_up,
        })
    }
    /// Deal hole cards one per pass: `deal(&[(1,"AS KD"),(2,"2C 3C")])` deals AS to 1, 2C to 2,
    /// then KD to 1, 3C to 2.
    pub fn deal(mut self, hands: &[(u8, &str)]) -> H {
        let hs: Vec<(u8, Vec<Card>)> = hands.iter().map(|&(s, h)| (s, cards(h))).collect();
        let n = hs.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
        for k in 0..n {
            for (s, cs) in &hs {
                if let Some(c) = cs.get(k) {
                    self.events.push(RoundEvent::new(EventKind::Card {
                        to: Recipient::seat(*s),
                        card: *c,
                        face_up: false,
                    }));
                }
            }
        }
        self
    }
    pub fn board(mut self, s: &str) -> H {
        for c in cards(s) {
            self.events.push(RoundEvent::new(EventKind::Card {
                to: Recipient::Board,
                card: c,
                face_up: true,
            }));
        }
        self
    }
    pub fn burn(self, c: &str) -> H {
        self.card(Recipient::Burn, c, false)
    }
    pub fn proc(self, name: &str, seat: Option<u8>, amount: Option<Cents>) -> H {
        self.ev(EventKind::Procedure {
            name: name.into(),
            value: None,
            seat,
            amount_cents: amount,
        })
    }
    pub fn fault(self, code: &str, seat: Option<u8>) -> H {
        self.ev(EventKind::Fault {
            code: code.into(),
            seat,
            detail: None,
        })
    }
    pub fn void(self, reason: &str) -> H {
        self.ev(EventKind::Void {
            reason: reason.into(),
        })
    }
    /// Settlement with nets per seat (bet ids `s<seat>`).
    pub fn settle(mut self, nets: &[(u8, Cents)], house: Option<Cents>) -> H {
        self.settlement = Some(Settlement {
            void: false,
            results: nets
                .iter()
                .map(|&(s, n)| ReportedNet {
                    bet_id: format!("s{s}").into(),
                    net_cents: n,
                })
                .collect(),
            house_cents: house,
        });
        self
    }
    pub fn settle_void(mut self) -> H {
        self.settlement = Some(Settlement {
            void: true,
            results: vec![],
            house_cents: None,
        });
        self
    }
    pub fn at(mut self, t: i64) -> H {
        self.opened_at_ms = Some(t);
        self
    }
    pub fn round(&self) -> Round {
        Round {
            round_id: "r1".into(),
            opened_at_ms: self.opened_at_ms,
            jackpot_before_cents: None,
            events: self.events.clone(),
            settlement: self.settlement.clone(),
        }
    }
}

impl Default for H {
    fn default() -> Self {
        H::new()
    }
}

pub fn run_with(
    t: &TableConfig,
    state: &mut PokerState,
    h: &H,
    explain: bool,
) -> Result<Adjudication, RoundError> {
    let c = cfg(t);
    match PokerEngine::adjudicate(&c, state, &h.round(), &Options { explain }) {
        // a hand cut short for a test: complete its board (see `run`)
        Err(e) if e.to_string().contains("common cards") => PokerEngine::adjudicate(
            &c,
            state,
            &complete_board(t, h).round(),
            &Options { explain },
        ),
        r => r,
    }
}

/// Adjudicate on a fresh table. A hand cut short for a test (players left in but fewer than
/// five common cards) gets its board completed with unused cards first.
pub fn run(t: &TableConfig, h: &H) -> Adjudication {
    let mut st = PokerState::default();
    match run_with(t, &mut st, h, false) {
        Ok(a) => a,
        Err(e) => panic!("adjudication: {e}"),
    }
}

pub fn complete_board(t: &TableConfig, h: &H) -> H {
    let mut used = Vec::new();
    let mut board = 0;
    for e in &h.events {
        if let EventKind::Card { card, to, .. } = &e.kind {
            used.push(*card);
            if *to == Recipient::Board {
                board += 1;
            }
        }
    }
    let sint = t.game == GameId::PokerSintetico;
    let mut h = h.clone();
    for c in Card::deck() {
        if board >= 5 {
            break;
        }
        if used.contains(&c) || (sint && (c.rank as u8) < 8) {
            continue;
        }
        h.events.push(RoundEvent::new(EventKind::Card {
            to: Recipient::Board,
            card: c,
            face_up: true,
        }));
        board += 1;
    }
    h
}

pub fn net(a: &Adjudication, seat: u8) -> Cents {
    a.bets
        .iter()
        .find(|b| b.seat == Some(seat))
        .map(|b| b.due_net_cents)
        .unwrap()
}

pub fn house(a: &Adjudication) -> Cents {
    a.house
        .iter()
        .filter(|h| h.kind == "commission")
        .map(|h| h.amount_cents)
        .sum()
}

pub fn codes(a: &Adjudication) -> Vec<String> {
    a.violations.iter().map(|v| v.code.to_string()).collect()
}

pub fn assert_clean(a: &Adjudication) {
    assert!(a.violations.is_empty(), "violations: {:#?}", a.violations);
    assert!(
        a.discrepancies.is_empty(),
        "discrepancies: {:#?}",
        a.discrepancies
    );
}

pub fn has(a: &Adjudication, code: &str) -> bool {
    a.has_violation(code)
}

pub fn holdem_table() -> TableConfig {
    table(GameId::PokerHoldem, 1000, "per_hand", Some(500))
}
