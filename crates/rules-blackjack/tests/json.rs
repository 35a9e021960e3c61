//! The JSON round examples in docs/rounds/ (one `RoundInput` each) adjudicate as documented.

use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::{Engine, Options, RoundInput};

fn load(json: &str) -> rules_core::Adjudication {
    let input: RoundInput = serde_json::from_str(json).expect("valid RoundInput");
    let cfg = BlackjackEngine::configure(&input.table).unwrap();
    assert!(cfg.violations.is_empty(), "{:?}", cfg.violations);
    let mut st: BlackjackState = match input.state {
        Some(v) => serde_json::from_value(v).unwrap(),
        None => BlackjackState::default(),
    };
    let a = BlackjackEngine::adjudicate(
        &cfg.config,
        &mut st,
        &input.round,
        &Options { explain: true },
    )
    .unwrap();
    // Round-trips and is deterministic.
    let again = BlackjackEngine::adjudicate(
        &cfg.config,
        &mut BlackjackState::default(),
        &input.round,
        &Options { explain: true },
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    a
}

/// docs/rounds/blackjack.json: a split with a double, a complementary bettor following a
/// double, insurance, a jackpot chip, soft 17 (P217/2007).
#[test]
fn blackjack_json_example() {
    let a = load(include_str!("../../../docs/rounds/blackjack.json"));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    let net = |id: &str| a.bet(id).unwrap().due_net_cents;
    assert_eq!(net("b1"), 15_000);
    assert_eq!(a.bet("b1").unwrap().stake_cents, 15_000);
    assert_eq!(net("j1"), -200);
    assert_eq!(net("b3"), 4_000);
    assert_eq!(net("i3"), -2_000);
    assert_eq!(net("b5"), 4_000);
    assert_eq!(net("c5"), 2_000);
    let j = a.jackpot.unwrap();
    assert_eq!(j.contributions_e4, 150 * 10_000);
    assert_eq!(j.value_after_e4, 2_500_150 * 10_000);
    assert!(!a.notes.is_empty());
}

/// docs/rounds/blackjack_online.json: blackjack 3:2, three 7s special prize, a player
/// connection loss that does not void the round (ROBJ/2015 r.25(i), r.29, r.30).
#[test]
fn blackjack_online_json_example() {
    let a = load(include_str!("../../../docs/rounds/blackjack_online.json"));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    assert!(a.void.is_none());
    assert_eq!(a.bet("b1").unwrap().due_net_cents, 1_500);
    assert_eq!(a.bet("b2").unwrap().due_net_cents, 2_000);
}
