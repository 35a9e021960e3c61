//! The JSON round examples in docs/rounds/ load and adjudicate as documented.
use rules_core::*;
use rules_roulette::{RouletteEngine, RouletteState};

fn adjudicate(doc: &str) -> (Adjudication, RouletteState, Vec<Violation>) {
    let input: RoundInput = serde_json::from_str(doc).unwrap();
    let configured = RouletteEngine::configure(&input.table).unwrap();
    let mut state: RouletteState = match input.state {
        Some(v) => serde_json::from_value(v).unwrap(),
        None => RouletteState::default(),
    };
    let a = RouletteEngine::adjudicate(
        &configured.config,
        &mut state,
        &input.round,
        &Options::default(),
    )
    .unwrap();
    (a, state, configured.violations)
}

fn assert_clean(a: &Adjudication, cfg_v: &[Violation]) {
    assert!(cfg_v.is_empty(), "{cfg_v:?}");
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    assert!(
        a.bets
            .iter()
            .all(|b| b.reported_net_cents == Some(b.due_net_cents))
    );
}

#[test]
fn roulette_american_json() {
    let (a, st, v) = adjudicate(include_str!("../../../docs/rounds/roulette_american.json"));
    assert_clean(&a, &v);
    assert_eq!(a.bet("b1").unwrap().due_net_cents, 9000);
    assert_eq!(
        a.total_due_net_cents(),
        9000 - 2500 - 2000 + 17500 + 8000 + 2000 + 2000
    );
    assert_eq!(st.last_number, Some(26));
    assert_eq!(st.last_ball_direction, Some(Direction::Counterclockwise));
}

#[test]
fn roulette_french_json() {
    let (a, st, v) = adjudicate(include_str!("../../../docs/rounds/roulette_french.json"));
    assert_clean(&a, &v);
    assert_eq!(a.bet("f3").unwrap().due_net_cents, 17000);
    assert_eq!(st.last_number, Some(0));
}

#[test]
fn roulette_french_online_json() {
    let (a, _, v) = adjudicate(include_str!(
        "../../../docs/rounds/roulette_french_online.json"
    ));
    assert_clean(&a, &v);
    assert_eq!(
        a.bet("o2").unwrap().due_net_cents,
        -501,
        "la partage: half of 1001 rounded down returned"
    );
}
