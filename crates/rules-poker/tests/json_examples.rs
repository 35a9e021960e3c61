//! The JSON round format examples in docs/rounds/ (one per game), adjudicated.

use rules_core::{Adjudication, Engine, GameId, Options, RoundInput};
use rules_poker::{PokerEngine, PokerState};

fn adjudicate(json: &str, game: GameId) -> (Adjudication, PokerState) {
    let input: RoundInput = serde_json::from_str(json).expect("RoundInput");
    assert_eq!(input.table.game, game);
    let configured = PokerEngine::configure(&input.table).expect("table");
    assert!(configured.violations.is_empty());
    let mut state: PokerState = match &input.state {
        Some(v) => serde_json::from_value(v.clone()).expect("state"),
        None => PokerState::default(),
    };
    let before = state.clone();
    let a = PokerEngine::adjudicate(
        &configured.config,
        &mut state,
        &input.round,
        &Options::default(),
    )
    .expect("adjudication");
    // explained, the same verdict with notes
    let mut st2 = before;
    let e = PokerEngine::adjudicate(
        &configured.config,
        &mut st2,
        &input.round,
        &Options { explain: true },
    )
    .unwrap();
    assert!(!e.notes.is_empty());
    assert_eq!(e.bets, a.bets);
    assert_eq!(st2, state);
    // the document round-trips
    let back: RoundInput = serde_json::from_str(&serde_json::to_string(&input).unwrap()).unwrap();
    assert_eq!(back, input);
    assert!(a.violations.is_empty(), "{:#?}", a.violations);
    assert!(a.discrepancies.is_empty(), "{:#?}", a.discrepancies);
    (a, state)
}

fn net(a: &Adjudication, id: &str) -> i64 {
    a.bet(id).unwrap().due_net_cents
}

fn commission(a: &Adjudication) -> i64 {
    a.house
        .iter()
        .filter(|h| h.kind == "commission")
        .map(|h| h.amount_cents)
        .sum()
}

/// Hold'em with an all-in and a side pot (E2 at a five-seat table).
#[test]
fn holdem_example() {
    let (a, st) = adjudicate(
        include_str!("../../../docs/rounds/poker_holdem.json"),
        GameId::PokerHoldem,
    );
    assert_eq!(net(&a, "s1"), 7400);
    assert_eq!(net(&a, "s2"), 1400);
    assert_eq!(net(&a, "s3"), -10_000);
    assert_eq!(commission(&a), 1200);
    assert_eq!(st.button, Some(1));
    assert_eq!(st.hands, 42);
}

/// Omaha: exactly two hole cards (E3): the king-high flush wins.
#[test]
fn omaha_example() {
    let (a, _) = adjudicate(
        include_str!("../../../docs/rounds/poker_omaha.json"),
        GameId::PokerOmaha,
    );
    assert_eq!(net(&a, "s2"), 6350);
    assert_eq!(net(&a, "s1"), -6000);
    assert_eq!(commission(&a), 650);
}

/// Sintético with a stardilho.
#[test]
fn sintetico_example() {
    let (a, _) = adjudicate(
        include_str!("../../../docs/rounds/poker_sintetico.json"),
        GameId::PokerSintetico,
    );
    assert_eq!(net(&a, "s3"), 5550);
    assert_eq!(net(&a, "s2"), -3000);
    assert_eq!(commission(&a), 450);
}

/// Hold'em online with an all-in, a side pot and a timeout (E5).
#[test]
fn holdem_online_example() {
    let (a, _) = adjudicate(
        include_str!("../../../docs/rounds/poker_holdem_online.json"),
        GameId::PokerHoldemOnline,
    );
    assert_eq!(net(&a, "s3"), 6215);
    assert_eq!(net(&a, "s4"), 1700);
    assert_eq!(commission(&a), 585);
}
