//! docs/rounds/poker_sem_descarte.json adjudicates as documented.

use rules_core::{Engine, Options, RoundInput};
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdState};

/// The digest's example A with jackpot chips under P217/2007: a pass, a winning three of a kind
/// (call 3 x), a losing A-K high, a three-of-a-kind jackpot line, the display before and after.
#[test]
fn poker_sem_descarte_json_example() {
    let input: RoundInput =
        serde_json::from_str(include_str!("../../../docs/rounds/poker_sem_descarte.json")).unwrap();
    let cfg = PokerSemDescarteEngine::configure(&input.table).unwrap();
    assert!(cfg.violations.is_empty(), "{:?}", cfg.violations);
    let mut st: PsdState = input
        .state
        .map(|v| serde_json::from_value(v).unwrap())
        .unwrap_or_default();
    let a = PokerSemDescarteEngine::adjudicate(
        &cfg.config,
        &mut st,
        &input.round,
        &Options { explain: true },
    )
    .unwrap();
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    let net = |id: &str| a.bet(id).unwrap().due_net_cents;
    assert_eq!(net("a1"), -2000);
    assert_eq!(net("a4"), 3000);
    assert_eq!(net("c4"), 18000);
    assert_eq!(net("j4"), 400);
    assert_eq!(net("a6"), -2000);
    assert_eq!(net("c6"), -4000);
    assert_eq!(net("j6"), -100);
    let j = a.jackpot.as_ref().unwrap();
    assert_eq!(j.contributions_e4, 160 * 10_000);
    assert_eq!(j.value_after_e4, 1_499_660 * 10_000);
    let again = PokerSemDescarteEngine::adjudicate(
        &cfg.config,
        &mut PsdState::default(),
        &input.round,
        &Options { explain: true },
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}
