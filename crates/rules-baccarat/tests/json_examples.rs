//! The JSON examples in docs/rounds/ (one `RoundInput` per game) parse and adjudicate as
//! documented, so they cannot rot.

use rules_baccarat::{BaccaratEngine, BaccaratState};
use rules_core::{Adjudication, Engine, GameId, Options, RoundInput};

fn adjudicate(json: &str) -> (RoundInput, Adjudication, BaccaratState) {
    let input: RoundInput = serde_json::from_str(json).expect("RoundInput");
    let c = BaccaratEngine::configure(&input.table).expect("configure");
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    let mut state: BaccaratState = match &input.state {
        Some(s) => serde_json::from_value(s.clone()).expect("state"),
        None => BaccaratState::default(),
    };
    let a = BaccaratEngine::adjudicate(
        &c.config,
        &mut state,
        &input.round,
        &Options { explain: true },
    )
    .expect("adjudicate");
    (input, a, state)
}

fn clean(a: &Adjudication) {
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    assert!(!a.notes.is_empty());
    for b in &a.bets {
        assert_eq!(b.reported_net_cents, Some(b.due_net_cents), "{}", b.bet_id);
    }
}

#[test]
fn punto_banco_example() {
    let (input, a, state) = adjudicate(include_str!(
        "../../../docs/rounds/baccarat_punto_banco.json"
    ));
    assert_eq!(input.table.game, GameId::BaccaratPuntoBanco);
    clean(&a);
    assert_eq!(a.bets.len(), 10);
    assert_eq!(a.bet("b2").unwrap().due_net_cents, 9500);
    assert_eq!(a.bet("b5").unwrap().due_net_cents, 2375);
    assert_eq!(
        a.total_due_net_cents(),
        -5000 + 9500 - 1000 - 500 + 2375 - 20000 - 1000 - 5000 - 500 - 500
    );
    assert_eq!(state.shoe.coups, 13);
}

#[test]
fn macau_example() {
    let (input, a, _) = adjudicate(include_str!("../../../docs/rounds/baccarat_macau.json"));
    assert_eq!(input.table.game, GameId::BaccaratMacau);
    clean(&a);
    assert_eq!(
        a.bet("m2").unwrap().due_net_cents,
        150_000,
        "banca wins with 5: half the prize"
    );
    assert_eq!(a.bet("m7").unwrap().due_net_cents, 20_000);
}

#[test]
fn chemin_de_fer_example() {
    let (input, a, state) = adjudicate(include_str!(
        "../../../docs/rounds/baccarat_chemin_de_fer.json"
    ));
    assert_eq!(input.table.game, GameId::BaccaratCheminDeFer);
    clean(&a);
    assert_eq!(a.bet("bank").unwrap().due_net_cents, 450_000);
    assert_eq!(
        a.bet("s8").unwrap().due_net_cents,
        -50_000,
        "chips on the line play half"
    );
    assert_eq!(a.house.len(), 1);
    assert_eq!(a.house[0].amount_cents, 22_500);
    assert_eq!(state.hand.won_coups, 2);
    assert_eq!(state.hand.bank_cents, 450_000);
}
