//! The JSON round examples in docs/rounds/ load and adjudicate as documented.
use rules_core::*;
use rules_dice::{DiceEngine, DiceState};

fn adjudicate(doc: &str) -> (Adjudication, DiceState, Vec<Violation>) {
    let input: RoundInput = serde_json::from_str(doc).unwrap();
    let configured = DiceEngine::configure(&input.table).unwrap();
    let mut state: DiceState = input
        .state
        .map(|v| serde_json::from_value(v).unwrap())
        .unwrap_or_default();
    let a = DiceEngine::adjudicate(
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
}

#[test]
fn banca_francesa_json() {
    let (a, st, v) = adjudicate(include_str!("../../../docs/rounds/banca_francesa.json"));
    assert_clean(&a, &v);
    assert_eq!(
        a.bets[0].bet_id.as_ref(),
        "c7",
        "the carried bet comes first"
    );
    assert_eq!(a.bet("d3").unwrap().stake_cents, 2000);
    let DiceState::BancaFrancesa(s) = st else {
        panic!()
    };
    assert!(s.open_bets.is_empty());
}

#[test]
fn craps_json() {
    let (a, st, v) = adjudicate(include_str!("../../../docs/rounds/craps.json"));
    assert_clean(&a, &v);
    assert_eq!(a.bet("k2").unwrap().due_net_cents, 1200);
    assert_eq!(a.bet("k3").unwrap().outcome, Outcome::Open);
    assert_eq!(a.bet("k4").unwrap().outcome, Outcome::Open);
    let DiceState::Craps(s) = st else { panic!() };
    assert_eq!(s.point, None);
    let ids: Vec<(&str, Option<u8>)> = s
        .open_bets
        .iter()
        .map(|b| (b.id.as_ref(), b.number))
        .collect();
    assert_eq!(ids, vec![("k3", Some(6)), ("k4", Some(5)), ("k6", None)]);
}

#[test]
fn cussec_json() {
    let (a, _, v) = adjudicate(include_str!("../../../docs/rounds/cussec.json"));
    assert_clean(&a, &v);
    assert_eq!(
        a.total_due_net_cents(),
        -1000 + 3000 + 30000 + 95000 + 32000 + 7000 - 400
    );
}
