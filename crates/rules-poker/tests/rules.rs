//! One test per rule (named or commented with its citation) and every violation code of the
//! digest's check table triggered at least once.

mod common;
use common::*;
use rules_core::{Confidence, Engine, GameId, Options, Outcome, Recipient, Setting};
use rules_poker::{PokerEngine, PokerState};

// ------------------------------------------------------------------ helpers

/// Four hold'em seats, button (mão) 1 posts the small blind, 2 the big blind, cards dealt from
/// seat 1. Seat 3 has the best hand (aces), then 4 (queens), 2 (kings... lower than aces, higher
/// than queens), 1 nothing.
fn pre() -> H {
    H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "2C 7D"), (2, "KS KH"), (3, "AS AH"), (4, "QS QH")])
}

fn checks(mut h: H, seats: &[u8]) -> H {
    for &s in seats {
        h = h.d(s, "check");
    }
    h
}

/// Flop, turn, river with a burn each and everyone in `seats` checking.
fn check_down(h: H, seats: &[u8]) -> H {
    let h = checks(h.burn("4C").board("9C 8D 3H"), seats);
    let h = checks(h.burn("4D").board("2S"), seats);
    checks(h.burn("4H").board("JC"), seats)
}

/// An honest hand: everyone limps, checks down; seat 3 wins 4000 less 5%.
fn honest() -> H {
    let h = pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check");
    check_down(h, &[1, 2, 3, 4])
}

fn online() -> rules_core::TableConfig {
    set(
        table(GameId::PokerHoldemOnline, 1000, "per_hand", Some(300)),
        "small_blind_cents",
        Setting::Int(500),
    )
}

fn online_pre() -> H {
    H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(4)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "2C 7D"), (2, "KS KH"), (3, "AS AH"), (4, "QS QH")])
}

fn online_check_down(h: H, seats: &[u8]) -> H {
    let h = checks(h.board("9C 8D 3H"), seats);
    let h = checks(h.board("2S"), seats);
    checks(h.board("JC"), seats)
}

fn sint_table() -> rules_core::TableConfig {
    table(GameId::PokerSintetico, 1000, "per_hand", Some(500))
}

fn sint_pre(ante: i64) -> H {
    H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_ante", ante)
        .da(2, "post_ante", ante)
        .da(3, "post_ante", ante)
        .da(4, "post_ante", ante)
        .deal(&[(1, "8S 9H"), (2, "KS KH"), (3, "AS AH"), (4, "QS QH")])
}

/// Five common cards with everyone in `order` checking after each.
fn sint_check_down(mut h: H, order: &[u8]) -> H {
    for c in ["AD", "TD", "9C", "KC", "QD"] {
        h = checks(h.board(c), order);
    }
    h
}

// ------------------------------------------------------------- honest hands

#[test]
fn honest_hands_trigger_nothing() {
    let a = run(
        &holdem_table(),
        &honest().settle(&[(1, -1000), (2, -1000), (3, 2800), (4, -1000)], Some(200)),
    );
    assert_clean(&a);
    assert_eq!(a.bet("s3").unwrap().outcome, Outcome::Won);
    let h = online_pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check");
    let a = run(
        &online(),
        &online_check_down(h, &[1, 2, 3, 4])
            .settle(&[(1, -1000), (2, -1000), (3, 2880), (4, -1000)], Some(120)),
    );
    assert_clean(&a);
    let a = run(
        &sint_table(),
        &sint_check_down(sint_pre(1000), &[2, 3, 4, 1])
            .settle(&[(1, -1000), (2, -1000), (3, 2800), (4, -1000)], Some(200)),
    );
    assert_clean(&a);
}

/// r.18(g) through the engine: a kicker decides between two pairs of the same rank.
#[test]
fn r18_kicker_decides_the_pot() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "AS KD"), (2, "AH QD"), (3, "2C 3D"), (4, "5C 6D")])
        .d(3, "fold")
        .d(4, "fold")
        .da(1, "call", 500)
        .d(2, "check");
    let h = check_down(h, &[1, 2]);
    // board 9C 8D 3H 2S JC: pair? no: A K J 9 8 vs A Q J 9 8 -> seat 1 high card wins on the 2nd card
    let a = run(&holdem_table(), &h);
    assert_clean(&a);
    assert_eq!(net(&a, 1), 2000 - 100 - 1000);
}

// ----------------------------------------------------------------- payouts

/// r.49, r.50, r.64-r.66: a wrong net is a POKER_PAYOUT_MISMATCH discrepancy.
#[test]
fn r65_wrong_payout_is_a_discrepancy() {
    let a = run(
        &holdem_table(),
        &honest().settle(&[(1, -1000), (2, -1000), (3, 3000), (4, -1000)], Some(0)),
    );
    assert_eq!(a.discrepancies.len(), 1);
    assert_eq!(a.discrepancies[0].code, "POKER_PAYOUT_MISMATCH");
    assert_eq!(a.discrepancies[0].due_net_cents, 2800);
    assert_eq!(a.discrepancies[0].reported_net_cents, Some(3000));
    assert!(has(&a, "POKER_COMMISSION_WRONG"));
}

/// r.51: an uncalled bet wins the pot without a showdown; the excess goes back.
#[test]
fn r51_uncontested_pot() {
    let h = pre()
        .da(3, "raise", 4000)
        .d(4, "fold")
        .d(1, "fold")
        .d(2, "fold")
        .settle(&[(1, -500), (2, -1000), (3, 1425), (4, 0)], Some(75));
    let a = run(&holdem_table(), &h);
    assert_clean(&a);
    assert_eq!(net(&a, 3), 1425);
    // N6: at land tables the commission on an uncontested pot is not audited
    let a = run(
        &holdem_table(),
        &h.clone()
            .settle(&[(1, -500), (2, -1000), (3, 1500), (4, 0)], Some(0)),
    );
    assert_clean(&a);
    // ... within the rate on all chips wagered; more is flagged for review
    let a = run(
        &holdem_table(),
        &h.settle(&[(1, -500), (2, -1000), (3, 500), (4, 0)], Some(1000)),
    );
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_COMMISSION_WRONG")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
}

/// r.66, r.67: a split pot in units of the table minimum, the largest part to the mão.
#[test]
fn r67_split_pot_odd_chips_to_the_mao() {
    // Seats 2 and 4 tie with the board's straight; pot 5500 (seat 1 folded a 500 small blind).
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "2C 7D"), (2, "KS 2H"), (3, "3S 3H"), (4, "5S 2D")])
        .d(3, "fold")
        .da(4, "call", 1000)
        .d(1, "fold")
        .d(2, "check")
        .burn("4C")
        .board("9C TD JH")
        .da(2, "bet", 1000)
        .da(4, "call", 1000)
        .burn("4D")
        .board("8S")
        .da(2, "bet", 2000)
        .da(4, "call", 2000)
        .burn("4H")
        .board("7C")
        .d(2, "check")
        .d(4, "check");
    // pot = 500 + 2*4000 = 8500: units of 1000: 8 units -> 4 each, 500 to the first winner
    // from the mão (seat 1 folded): seat 2. Commission 0.
    let t = table(GameId::PokerHoldem, 1000, "none", None);
    let a = run(&t, &h);
    assert_eq!(net(&a, 2), 4500 - 4000);
    assert_eq!(net(&a, 4), 4000 - 4000);
    // N10: the split is not exact in units of the minimum -> a mismatch is for review
    let a = run(
        &t,
        &h.settle(&[(1, -500), (2, 250), (3, 0), (4, 250)], Some(0)),
    );
    assert_eq!(a.discrepancies.len(), 2);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_PAYOUT_MISMATCH")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
}

/// Reg806 r.62: online equal parts to the cent, the odd cent from the button clockwise.
#[test]
fn reg806_r62_online_split_to_the_cent() {
    let t = set(
        table(GameId::PokerHoldemOnline, 1001, "per_hand", Some(100)),
        "small_blind_cents",
        Setting::Int(500),
    );
    // seats 1 and 2 both play the board's straight
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000)])
        .button(3)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1001)
        .deal(&[(1, "KS 2H"), (2, "5S 2D"), (3, "3S 3H")])
        .d(3, "fold")
        .da(1, "call", 501)
        .d(2, "check")
        .board("9C TD JH")
        .d(1, "check")
        .d(2, "check")
        .board("8S")
        .d(1, "check")
        .d(2, "check")
        .board("7C")
        .d(1, "check")
        .d(2, "check");
    let a = run(&t, &h);
    // pot 2002, 1% per part: 1001 each -> commission 10 each
    assert_eq!(net(&a, 1), 1001 - 10 - 1001);
    assert_eq!(net(&a, 2), 1001 - 10 - 1001);
    assert_eq!(house(&a), 20);
}

/// r.104 (P461 r.26): sintético ties with unequal stakes keep each stake; N9 marks it.
#[test]
fn r104_sintetico_tie_keeps_stakes() {
    // seat 3 all-in for 3000 ties with seat 2 (both A A 10 10 K); seat 4 loses.
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 3000), (4, 20_000)])
        .button(1)
        .da(1, "post_ante", 1000)
        .da(2, "post_ante", 1000)
        .da(3, "post_ante", 1000)
        .da(4, "post_ante", 1000)
        .deal(&[(1, "8S 9H"), (2, "AS TS"), (3, "AH TH"), (4, "QS QH")])
        .board("AD")
        .da(2, "bet", 2000)
        .da(3, "all_in", 2000)
        .da(4, "call", 2000)
        .d(1, "fold")
        .board("TD")
        .da(2, "bet", 3000)
        .da(4, "call", 3000)
        .board("KC")
        .d(2, "check")
        .d(4, "check")
        .board("9C")
        .d(2, "check")
        .d(4, "check")
        .board("8H")
        .d(2, "check")
        .d(4, "check");
    let t = table(GameId::PokerSintetico, 1000, "none", None);
    let a = run(&t, &h);
    // main pot: 1000 (seat 1) + 3 x 3000 = 10000; tied 2 and 3 keep 3000 each, losing 4000 split
    // 2000 each -> 5000 each. Side pot 2 x 3000 = 6000 to seat 2.
    assert_eq!(net(&a, 3), 5000 - 3000);
    assert_eq!(net(&a, 2), 5000 + 6000 - 6000);
    assert_eq!(net(&a, 4), -6000);
    assert_eq!(net(&a, 1), -1000);
}

// ------------------------------------------------------------- commission

/// r.7 (P217), P461 r.55, Reg806 r.17: illegal rates are config violations.
#[test]
fn r7_commission_rate_illegal() {
    let bad = [
        table(GameId::PokerHoldem, 1000, "per_hand", Some(600)),
        {
            let mut t = table(GameId::PokerOmaha, 1000, "per_session", Some(400));
            t.max_bet_cents = Some(5000);
            t
        },
        {
            let mut t = table(GameId::PokerSintetico, 1000, "per_hand", Some(500));
            t.regulation = Some("P461/2001".into());
            t
        },
        table(GameId::PokerHoldemOnline, 1000, "per_hand", Some(50)),
        table(GameId::PokerHoldemOnline, 1000, "buy_in", Some(2500)),
        table(GameId::PokerHoldemOnline, 1000, "none", None),
    ];
    for t in bad {
        let c = PokerEngine::configure(&t).unwrap();
        assert_eq!(c.violations.len(), 1, "{t:?}");
        assert_eq!(c.violations[0].code, "POKER_COMMISSION_RATE_ILLEGAL");
    }
    let good = [
        table(GameId::PokerHoldem, 1000, "per_hand", Some(500)),
        table(GameId::PokerHoldem, 1000, "none", None),
        {
            let mut t = TableConfigExt::sint_p461();
            t.commission = None;
            t
        },
        table(GameId::PokerHoldemOnline, 1000, "per_hand", Some(100)),
        table(GameId::PokerHoldemOnline, 1000, "buy_in", Some(2000)),
    ];
    for t in good {
        assert!(
            PokerEngine::configure(&t).unwrap().violations.is_empty(),
            "{t:?}"
        );
    }
}

struct TableConfigExt;
impl TableConfigExt {
    fn sint_p461() -> rules_core::TableConfig {
        let mut t = table(GameId::PokerSintetico, 1000, "per_hand", None);
        t.regulation = Some("P461/2001".into());
        t
    }
}

#[test]
fn configuration_errors_name_the_field() {
    let mut t = holdem_table();
    t.min_bet_cents = Some(1001);
    assert!(
        PokerEngine::configure(&t)
            .unwrap_err()
            .to_string()
            .contains("min_bet_cents")
    );
    let t = set(holdem_table(), "max_raises", Setting::Int(4));
    assert!(
        PokerEngine::configure(&t)
            .unwrap_err()
            .to_string()
            .contains("r.87")
    );
    let t = set(holdem_table(), "colour", Setting::Int(4));
    assert!(PokerEngine::configure(&t).is_err());
    let mut t = holdem_table();
    t.commission = None;
    assert!(
        PokerEngine::configure(&t)
            .unwrap_err()
            .to_string()
            .contains("commission")
    );
    let mut t = holdem_table();
    t.regulation = Some("P461/2001".into());
    assert!(PokerEngine::configure(&t).is_err());
    let t = set(
        table(GameId::PokerHoldemOnline, 1000, "per_hand", Some(300)),
        "commission_cap_cents",
        Setting::Int(100),
    );
    assert!(PokerEngine::configure(&t).is_err());
    let t = table(GameId::Craps, 1000, "per_hand", Some(300));
    assert!(PokerEngine::configure(&t).is_err());
}

/// r.7(a), r.65: a wrong house take is POKER_COMMISSION_WRONG; E1's cap ignored.
#[test]
fn r7a_commission_wrong() {
    let a = run(
        &holdem_table(),
        &honest().settle(&[(1, -1000), (2, -1000), (3, 2800), (4, -1000)], Some(250)),
    );
    assert!(has(&a, "POKER_COMMISSION_WRONG"));
    assert!(a.discrepancies.is_empty());
}

/// P461 r.55: a fixed 3% of the POT and of the all-in payments.
#[test]
fn p461_r55_three_percent() {
    let t = TableConfigExt::sint_p461();
    let h = sint_pre(1000)
        .board("AD")
        .da(2, "bet", 1000)
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 1000);
    let mut h = h;
    for c in ["TD", "9C", "KC", "QD"] {
        h = checks(h.board(c), &[2, 3, 4, 1]);
    }
    let a = run(&t, &h);
    assert_clean(&a);
    assert_eq!(house(&a), 240);
    assert_eq!(net(&a, 3), 8000 - 240 - 2000);
}

/// P217 r.7(b): session fee once per session, none from the pot; charged twice is wrong; a
/// player seated more than 30 minutes into the session is not charged (review).
#[test]
fn r7b_session_fee() {
    let mut t = table(GameId::PokerHoldem, 1000, "per_session", Some(1000));
    t.max_bet_cents = Some(10_000);
    let mut st = PokerState::default();
    let h = honest()
        .proc("session_fee", Some(3), Some(1000))
        .at(0)
        .settle(&[(1, -1000), (2, -1000), (3, 3000), (4, -1000)], Some(0));
    let a = run_with(&t, &mut st, &h, false).unwrap();
    assert_clean(&a);
    assert_eq!(
        a.house
            .iter()
            .find(|h| h.kind == "session_fee")
            .unwrap()
            .amount_cents,
        1000
    );
    // the same seat charged again in the same session
    // (the button moves to seat 2 and the blinds with it)
    let h2 = rotate_to_2(honest().proc("session_fee", Some(3), Some(1000)).at(60_000));
    let a = run_with(&t, &mut st, &h2, false).unwrap();
    assert!(has(&a, "POKER_COMMISSION_WRONG"), "{:#?}", a.violations);
    // a pot commission at a session table
    let mut st = PokerState::default();
    let a = run_with(
        &t,
        &mut st,
        &honest()
            .at(0)
            .settle(&[(1, -1000), (2, -1000), (3, 2800), (4, -1000)], Some(200)),
        false,
    )
    .unwrap();
    assert!(has(&a, "POKER_COMMISSION_WRONG"));
    // wrong amount (the configured rate on the table maximum gives 1000)
    let mut st = PokerState::default();
    let a = run_with(
        &t,
        &mut st,
        &honest().at(0).proc("session_fee", Some(1), Some(1500)),
        false,
    )
    .unwrap();
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_COMMISSION_WRONG")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
    // a seat first dealt in 40 minutes into the session
    let mut st = PokerState::default();
    let five = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .d(3, "fold")
        .d(4, "fold")
        .d(1, "fold")
        .at(0);
    run_with(&t, &mut st, &five, false).unwrap();
    let late = H::new()
        .seats(&[
            (1, 20_000),
            (2, 20_000),
            (3, 20_000),
            (4, 20_000),
            (5, 20_000),
        ])
        .button(2)
        .da(2, "post_sb", 500)
        .da(3, "post_bb", 1000)
        .d(4, "fold")
        .d(5, "fold")
        .d(1, "fold")
        .d(2, "fold")
        .proc("session_fee", Some(5), Some(1000))
        .at(40 * 60_000);
    let a = run_with(&t, &mut st, &late, false).unwrap();
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_COMMISSION_WRONG")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
    assert_eq!(
        st.session.as_ref().unwrap().joined_at_ms.get(&5),
        Some(&(40 * 60_000))
    );
}

/// The honest hand with the button on seat 2 (blinds by 2 and 3).
fn rotate_to_2(h: H) -> H {
    let mut out = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(2)
        .da(2, "post_sb", 500)
        .da(3, "post_bb", 1000)
        .deal(&[(2, "KS KH"), (3, "AS AH"), (4, "QS QH"), (1, "2C 7D")])
        .da(4, "call", 1000)
        .da(1, "call", 1000)
        .da(2, "call", 500)
        .d(3, "check");
    out = check_down(out, &[2, 3, 4, 1]);
    for e in h.events {
        if let rules_core::EventKind::Procedure { .. } = e.kind {
            out.events.push(e);
        }
    }
    out.opened_at_ms = h.opened_at_ms;
    out
}

/// Reg806 r.17(b): the entry fee is the rate on each buy-in and rebuy; nothing from the pot.
#[test]
fn reg806_r17b_entry_fee() {
    let t = table(GameId::PokerHoldemOnline, 1000, "buy_in", Some(1000));
    let base = online_pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check");
    let h = online_check_down(base, &[1, 2, 3, 4]);
    let mut ok =
        H::new()
            .proc("buy_in", Some(1), Some(20_000))
            .proc("entry_fee", Some(1), Some(2000));
    ok.events.extend(h.events.clone());
    let a = run(
        &t,
        &ok.settle(&[(1, -1000), (2, -1000), (3, 3000), (4, -1000)], Some(0)),
    );
    assert_clean(&a);
    assert_eq!(
        a.house
            .iter()
            .find(|h| h.kind == "entry_fee")
            .unwrap()
            .amount_cents,
        2000
    );
    let mut bad =
        H::new()
            .proc("buy_in", Some(1), Some(20_000))
            .proc("entry_fee", Some(1), Some(2500));
    bad.events.extend(h.events);
    assert!(has(&run(&t, &bad), "POKER_COMMISSION_WRONG"));
}

// ------------------------------------------------------------- null hands

/// r.69: a misdeal makes the hand null; chips moved in a null hand are POKER_VOID_HAND_SETTLED.
#[test]
fn r69_misdeal_null_hand() {
    let h = pre().fault("misdeal", None);
    let a = run(
        &holdem_table(),
        &h.clone().settle(&[(1, 0), (2, 0), (3, 0), (4, 0)], Some(0)),
    );
    assert!(a.void.is_some());
    assert_clean(&a);
    assert!(
        a.bets
            .iter()
            .all(|b| b.due_net_cents == 0 && b.outcome == Outcome::Void)
    );
    let a = run(
        &holdem_table(),
        &honest()
            .fault("misdeal", None)
            .settle(&[(1, -1000), (2, -1000), (3, 2800), (4, -1000)], Some(200)),
    );
    assert_eq!(codes(&a), vec!["POKER_VOID_HAND_SETTLED"]);
    assert!(a.discrepancies.is_empty());
}

/// r.35, r.69(a): hole cards dealt out of order make the hand null.
#[test]
fn r69a_cards_out_of_order() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(2, "KS KH"), (3, "AS AH"), (4, "QS QH"), (1, "2C 7D")])
        .d(3, "fold")
        .d(4, "fold")
        .d(1, "fold");
    let a = run(&holdem_table(), &h);
    assert_eq!(a.void.as_ref().unwrap().reason, "cards_out_of_order");
}

/// r.69(g): the dealer turns more than one card while dealing: null.
#[test]
fn r69g_two_cards_exposed_null() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .card(Recipient::seat(1), "2C", true)
        .card(Recipient::seat(2), "KS", true);
    let a = run(&holdem_table(), &h);
    assert_eq!(a.void.as_ref().unwrap().reason, "several_cards_exposed");
}

/// r.109(c), (d): at sintético any card turned while dealing makes the hand null.
#[test]
fn r109_sintetico_exposed_card_null() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_ante", 1000)
        .da(2, "post_ante", 1000)
        .da(3, "post_ante", 1000)
        .da(4, "post_ante", 1000)
        .card(Recipient::seat(1), "AS", true);
    let a = run(&sint_table(), &h);
    assert!(a.void.is_some());
}

/// r.4, r.69(e), r.95: a card outside the deck or dealt twice: POKER_INVALID_DECK, null hand.
#[test]
fn r95_invalid_deck() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_ante", 1000)
        .da(2, "post_ante", 1000)
        .da(3, "post_ante", 1000)
        .da(4, "post_ante", 1000)
        .deal(&[(2, "KS KH"), (3, "AS AH"), (4, "QS QH"), (1, "7C 8D")]);
    let a = run(&sint_table(), &h);
    assert!(has(&a, "POKER_INVALID_DECK"));
    assert_eq!(a.void.as_ref().unwrap().reason, "invalid_deck");
    let h = pre().burn("AS");
    let a = run(&holdem_table(), &h);
    assert!(has(&a, "POKER_INVALID_DECK"));
}

/// Reg806 r.72: a failure of the operator's system voids the hand, bets returned.
#[test]
fn reg806_r72_system_failure_voids() {
    let h = online_pre()
        .da(3, "raise", 3000)
        .fault("system_failure", None);
    let a = run(&online(), &h.clone().settle_void());
    assert_clean(&a);
    assert_eq!(a.void.as_ref().unwrap().reason, "system_failure");
    let a = run(
        &online(),
        &h.settle(&[(1, -500), (2, -1000), (3, 1500), (4, 0)], Some(0)),
    );
    assert!(has(&a, "POKER_VOID_HAND_SETTLED"));
}

/// Reg806 r.73 (N18): the player's own disconnection does not void the hand; his decision is a
/// timeout.
#[test]
fn reg806_r73_player_disconnect_stands() {
    let h = online_pre()
        .fault("player_disconnect", Some(3))
        .d(3, "disconnect")
        .d(4, "fold")
        .d(1, "fold");
    let a = run(
        &online(),
        &h.clone()
            .settle(&[(1, -500), (2, 500), (3, 0), (4, 0)], Some(0)),
    );
    assert_clean(&a);
    let a = run(&online(), &h.void("player_disconnect").settle_void());
    assert_eq!(codes(&a), vec!["POKER_WRONGLY_VOIDED"]);
    // One breach, one finding (issue 38; rules-core): no POKER_PAYOUT_MISMATCH as well.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
}

/// Reg806 r.45: a timeout checks when it can, else folds.
#[test]
fn reg806_r45_timeout_check_or_fold() {
    let h = online_pre()
        .da(3, "call", 1000)
        .d(4, "timeout")
        .da(1, "call", 500)
        .d(2, "timeout");
    let h = online_check_down(h, &[1, 2, 3]);
    let a = run(&online(), &h);
    assert_clean(&a);
    assert_eq!(net(&a, 4), 0); // folded facing the big blind
    assert_eq!(a.bet("s2").unwrap().stake_cents, 1000); // checked its option
}

// ------------------------------------------------------------ blinds/antes

/// r.81; Reg806 r.48: blinds by the wrong seats.
#[test]
fn r81_blind_wrong_seat() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(2, "post_sb", 500)
        .da(3, "post_bb", 1000)
        .deal(&[(1, "2C 7D"), (2, "KS KH"), (3, "AS AH"), (4, "QS QH")]);
    let a = run(&holdem_table(), &h);
    assert!(has(&a, "POKER_BLIND_WRONG_SEAT"));
    // online: the blinds are the two seats left of the button
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000);
    assert!(has(&run(&online(), &h), "POKER_BLIND_WRONG_SEAT"));
}

/// r.29, r.30; Reg806 r.64: the mão/button moves one seat clockwise each hand (review).
#[test]
fn r30_button_rotation() {
    let mut st = PokerState::default();
    run_with(&holdem_table(), &mut st, &honest(), false).unwrap();
    assert_eq!(st.button, Some(1));
    let a = run_with(&holdem_table(), &mut st, &honest(), false).unwrap();
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_BLIND_WRONG_SEAT")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
    let mut st = PokerState {
        button: Some(4),
        ..Default::default()
    };
    let a = run_with(&holdem_table(), &mut st, &honest(), false).unwrap();
    assert_clean(&a);
}

/// r.82, r.83; Reg806 r.22: blind amounts.
#[test]
fn r82_r83_blind_amount_wrong() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 400)
        .da(2, "post_bb", 1000);
    assert!(has(&run(&holdem_table(), &h), "POKER_BLIND_AMOUNT_WRONG"));
    let h = online_pre().da(3, "call", 1000);
    let mut h2 = h.clone();
    h2.events[5] = rules_core::RoundEvent::new(rules_core::EventKind::Decision(
        rules_core::Decision::new(2, "post_bb").amount(800),
    ));
    assert!(has(&run(&online(), &h2), "POKER_BLIND_AMOUNT_WRONG"));
    // a short all-in blind is not wrong
    let h = H::new()
        .seats(&[(1, 300), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 300)
        .da(2, "post_bb", 1000);
    assert!(!has(&run(&holdem_table(), &h), "POKER_BLIND_AMOUNT_WRONG"));
}

/// r.90: missed blinds accrue while absent and must be posted dead on return.
#[test]
fn r90_missed_blinds() {
    let mut st = PokerState {
        button: Some(4),
        ..Default::default()
    };
    // seat 3 absent: the big blind passes it (seat 2 is the mão, 4 posts the big blind)
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (4, 20_000), (5, 20_000)])
        .proc("absent", Some(3), None)
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .d(4, "fold")
        .d(5, "fold")
        .d(1, "fold");
    run_with(&holdem_table(), &mut st, &h, false).unwrap();
    assert_eq!(st.missed_blinds_cents.get(&3), None);
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (4, 20_000), (5, 20_000)])
        .proc("absent", Some(3), None)
        .button(2)
        .da(2, "post_sb", 500)
        .da(4, "post_bb", 1000)
        .d(5, "fold")
        .d(1, "fold")
        .d(2, "fold");
    let a = run_with(&holdem_table(), &mut st, &h, false).unwrap();
    assert_clean(&a);
    assert_eq!(st.missed_blinds_cents.get(&3), Some(&1000));
    // seat 3 returns and plays without posting: flagged
    let back = H::new()
        .seats(&[
            (1, 20_000),
            (2, 20_000),
            (3, 20_000),
            (4, 20_000),
            (5, 20_000),
        ])
        .button(4)
        .da(4, "post_sb", 500)
        .da(5, "post_bb", 1000)
        .da(1, "call", 1000)
        .d(2, "fold")
        .da(3, "call", 1000)
        .d(4, "fold")
        .d(5, "check");
    let mut st2 = st.clone();
    let a = run_with(&holdem_table(), &mut st2, &back, false).unwrap();
    assert!(has(&a, "POKER_MISSED_BLINDS_NOT_POSTED"));
    assert!(st2.missed_blinds_cents.is_empty());
    // posting them dead is fine, and they stay in the pot for its winner (N21)
    let back = H::new()
        .seats(&[
            (1, 20_000),
            (2, 20_000),
            (3, 20_000),
            (4, 20_000),
            (5, 20_000),
        ])
        .button(4)
        .da(3, "post_dead", 1000)
        .da(4, "post_sb", 500)
        .da(5, "post_bb", 1000)
        .d(1, "fold")
        .d(2, "fold")
        .da(3, "raise", 3000)
        .d(4, "fold")
        .d(5, "fold");
    let a = run_with(&holdem_table(), &mut st, &back, false).unwrap();
    assert!(
        !has(&a, "POKER_MISSED_BLINDS_NOT_POSTED"),
        "{:#?}",
        a.violations
    );
    // pot 3500 (dead 1000, blinds 1500, 1000 of its raise called by nobody but the big blind);
    // the 2000 uncalled go back; 5% of 3500 = 175
    assert_eq!(net(&a, 3), 3500 - 175 - 2000);
}

/// r.89: five hands without a bet owe a big blind in the next (review).
#[test]
fn r89_idle_player_owes_big_blind() {
    let mut st = PokerState::default();
    st.idle_hands.insert(4, 5);
    st.button = Some(4);
    let a = run_with(&holdem_table(), &mut st.clone(), &honest(), false).unwrap();
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_MISSED_BLINDS_NOT_POSTED")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .da(4, "post_forced_bb", 1000)
        .d(3, "fold")
        .d(4, "check")
        .d(1, "fold")
        .d(2, "check");
    let a = run_with(&holdem_table(), &mut st, &h, false);
    let a = a.unwrap();
    assert!(!has(&a, "POKER_MISSED_BLINDS_NOT_POSTED"));
    // counting: a seat that put nothing in counts one more idle hand
    let mut st = PokerState::default();
    let h = pre().d(3, "fold").d(4, "fold").d(1, "fold");
    run_with(&holdem_table(), &mut st, &h, false).unwrap();
    assert_eq!(st.idle_hands.get(&3), Some(&1));
    assert_eq!(st.idle_hands.get(&1), None);
}

/// r.102, r.111; P461 r.38: the sintético ante is the minimum bet.
#[test]
fn r102_ante_wrong() {
    let a = run(
        &sint_table(),
        &sint_check_down(sint_pre(500), &[2, 3, 4, 1]),
    );
    assert!(has(&a, "POKER_ANTE_WRONG"));
}

// --------------------------------------------------------------- betting

/// r.20; Reg806 r.23: an opening bet below the minimum.
#[test]
fn r20_bet_below_min() {
    let h = pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check")
        .burn("4C")
        .board("9C 8D 3H")
        .da(1, "bet", 500);
    assert!(has(&run(&holdem_table(), &h), "POKER_BET_BELOW_MIN"));
}

/// r.86: raises add at least the table minimum.
#[test]
fn r86_raise_below_min() {
    let h = pre().da(3, "raise", 1500);
    assert!(has(&run(&holdem_table(), &h), "POKER_RAISE_BELOW_MIN"));
    let h = pre().da(3, "raise", 2000);
    assert!(!has(&run(&holdem_table(), &h), "POKER_RAISE_BELOW_MIN"));
}

/// r.87: at most three raises per round with more than two players in the hand.
#[test]
fn r87_raise_cap() {
    let h = pre()
        .da(3, "raise", 2000)
        .da(4, "raise", 3000)
        .da(1, "raise", 4500)
        .da(2, "raise", 5000);
    let a = run(&holdem_table(), &h);
    assert!(has(&a, "POKER_RAISE_CAP_EXCEEDED"));
    assert_eq!(
        a.violations
            .iter()
            .filter(|v| v.code == "POKER_RAISE_CAP_EXCEEDED")
            .count(),
        1
    );
}

/// r.88: unlimited raises when only two players are in the hand.
#[test]
fn r88_heads_up_unlimited() {
    let h = pre()
        .d(3, "fold")
        .d(4, "fold")
        .da(1, "raise", 1500)
        .da(2, "raise", 2000)
        .da(1, "raise", 2000)
        .da(2, "raise", 2000)
        .da(1, "raise", 2000);
    let a = run(&holdem_table(), &h);
    assert!(!has(&a, "POKER_RAISE_CAP_EXCEEDED"), "{:#?}", a.violations);
}

/// Reg806 r.38: the operator's raise cap.
#[test]
fn reg806_r38_configured_cap() {
    let t = set(online(), "max_raises", Setting::Int(1));
    let h = online_pre().da(3, "raise", 2000).da(4, "raise", 4000);
    assert!(has(&run(&t, &h), "POKER_RAISE_CAP_EXCEEDED"));
}

/// Reg806 r.24(b): a pot-limit opening bet larger than the pot.
#[test]
fn reg806_r24b_bet_over_max() {
    let t = set(online(), "limit", Setting::Text("pot_limit".into()));
    let h = online_pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check")
        .board("9C 8D 3H")
        .da(1, "bet", 5000);
    assert!(has(&run(&t, &h), "POKER_BET_OVER_MAX"));
    let h = online_pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check")
        .board("9C 8D 3H")
        .da(1, "bet", 4000);
    assert!(!has(&run(&t, &h), "POKER_BET_OVER_MAX"));
}

/// r.39(b): no check facing a bet (review).
#[test]
fn r39b_illegal_check() {
    let h = pre().d(3, "check");
    let a = run(&holdem_table(), &h);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_ILLEGAL_CHECK")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
    assert_eq!(v.seat, Some(3));
}

/// r.84, r.85, r.37: acting out of turn (the act stands).
#[test]
fn r84_out_of_turn() {
    let h = pre().da(4, "call", 1000);
    let a = run(&holdem_table(), &h);
    assert!(has(&a, "POKER_OUT_OF_TURN"));
    // r.85: after the flop the mão holder speaks first
    let h = pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check")
        .burn("4C")
        .board("9C 8D 3H")
        .d(2, "check");
    assert!(has(&run(&holdem_table(), &h), "POKER_OUT_OF_TURN"));
}

/// r.71(f): an out-of-turn bettor may not increase it when his turn comes (review).
#[test]
fn r71f_out_of_turn_increased() {
    let h = pre()
        .da(4, "call", 1000)
        .da(3, "raise", 2000)
        .da(4, "raise", 2000);
    let a = run(&holdem_table(), &h);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_OUT_OF_TURN_INCREASED")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
}

/// r.70(d), r.70(h): after a flop card is exposed early, who had not bet may only call (review).
#[test]
fn r70h_raise_after_early_exposure() {
    let h = pre()
        .da(3, "call", 1000)
        .card(Recipient::Discard, "9C", true)
        .da(4, "raise", 2000);
    let a = run(&holdem_table(), &h);
    assert!(has(&a, "POKER_RAISE_AFTER_EARLY_EXPOSURE"));
    // the withdrawn card may come back on the re-dealt flop, without a burn
    let h = pre()
        .card(Recipient::Discard, "9C", true)
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check")
        .board("9C 8D 3H")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .burn("4D")
        .board("2S")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .burn("4H")
        .board("JC")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check");
    let a = run(&holdem_table(), &h);
    assert_clean(&a);
}

/// r.41, r.43, r.45: a burn before flop, turn and river (review).
#[test]
fn r41_burn_missing() {
    let h = pre()
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 500)
        .d(2, "check")
        .board("9C 8D 3H");
    let a = run(&holdem_table(), &h);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_BURN_MISSING")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
}

/// r.93, r.77, r.96: the number of hole cards (review; sintético null, r.109(b)).
#[test]
fn r93_hole_card_count() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "2C 7D"), (2, "KS KH 5S"), (3, "AS AH"), (4, "QS QH")])
        .d(3, "fold")
        .d(4, "fold")
        .d(1, "fold");
    let a = run(&holdem_table(), &h);
    assert!(has(&a, "POKER_HOLE_CARD_COUNT"));
    assert!(a.void.is_none());
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(1)
        .da(1, "post_ante", 1000)
        .da(2, "post_ante", 1000)
        .da(3, "post_ante", 1000)
        .da(4, "post_ante", 1000)
        .deal(&[(1, "8S 9H"), (2, "KS"), (3, "AS AH"), (4, "QS QH")]);
    let a = run(&sint_table(), &h);
    assert!(has(&a, "POKER_HOLE_CARD_COUNT"));
    assert_eq!(a.void.as_ref().unwrap().reason, "wrong_card_count");
}

/// r.24; Reg806 r.7: too few players (review).
#[test]
fn r24_too_few_players() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .d(3, "fold")
        .d(1, "fold");
    let a = run(&holdem_table(), &h);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_TOO_FEW_PLAYERS")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
}

/// r.39(c), r.48, r.71(c), r.71(d): betting records no other code names.
#[test]
fn r48_betting_irregular() {
    // a short call that is not all-in
    let h = pre().da(3, "call", 600);
    assert!(has(&run(&holdem_table(), &h), "POKER_BETTING_IRREGULAR"));
    // r.71(d): a call with too many chips counts as a call, the excess returned
    let h = pre()
        .da(3, "call", 3000)
        .d(4, "fold")
        .d(1, "fold")
        .d(2, "check");
    let h = check_down(h, &[2, 3]);
    let a = run(&holdem_table(), &h);
    assert!(has(&a, "POKER_BETTING_IRREGULAR"));
    assert_eq!(a.bet("s3").unwrap().stake_cents, 1000);
}

// ---------------------------------------------------------------- caves

/// r.14(e); Reg806 r.11(b): chips added during the hand.
#[test]
fn r14e_topup_during_hand() {
    let h = pre().proc("top_up", Some(3), Some(5000));
    assert!(has(
        &run(&holdem_table(), &h),
        "POKER_CAVE_TOPUP_DURING_HAND"
    ));
    let h = H::new().proc("rebuy", Some(3), Some(5000));
    let mut h2 = h.clone();
    h2.events.extend(honest().events);
    assert!(!has(
        &run(&holdem_table(), &h2),
        "POKER_CAVE_TOPUP_DURING_HAND"
    ));
}

/// Reg806 r.11(a); P461 r.61: chips taken off a cave while seated.
#[test]
fn reg806_r11a_withdrawal() {
    let h = online_pre().proc("withdraw", Some(4), Some(5000));
    assert!(has(&run(&online(), &h), "POKER_CAVE_WITHDRAWAL"));
}

// ------------------------------------------------------------- sintético

/// r.106: stardilho S: others stay with 2S, the stardilho player completes with S.
#[test]
fn r106_stardilho() {
    let t = set(sint_table(), "stardilho", Setting::Bool(true));
    let h = sint_pre(1000)
        .da(2, "stardilho", 1000)
        .da(3, "call", 2000)
        .d(4, "fold")
        .d(1, "fold")
        .da(2, "call", 1000);
    let h = sint_check_down(h, &[2, 3]);
    let a = run(&t, &h);
    assert_clean(&a);
    // seat 3 (aces) wins 4 antes + 2 x 2000
    assert_eq!(net(&a, 3), 8000 - 400 - 3000);
    // others staying with S instead of 2S
    let h = sint_pre(1000).da(2, "stardilho", 1000).da(3, "call", 1000);
    assert!(has(&run(&t, &h), "POKER_STARDILHO_AMOUNT_WRONG"));
    // the stardilho player completing with other than S
    let h = sint_pre(1000)
        .da(2, "stardilho", 1000)
        .da(3, "call", 2000)
        .d(4, "fold")
        .d(1, "fold")
        .da(2, "call", 2000);
    assert!(has(&run(&t, &h), "POKER_STARDILHO_AMOUNT_WRONG"));
    // a restardilho is twice the stardilho
    let h = sint_pre(1000)
        .da(2, "stardilho", 1000)
        .da(3, "restardilho", 3000);
    assert!(has(&run(&t, &h), "POKER_STARDILHO_AMOUNT_WRONG"));
    // the stardilho player who drops out loses S
    let h = sint_pre(1000)
        .da(2, "stardilho", 1000)
        .da(3, "call", 2000)
        .d(4, "fold")
        .d(1, "fold");
    let h = sint_check_down(h, &[3]);
    let a = run(&t, &h);
    assert_eq!(net(&a, 2), -2000);
}

/// r.106: a stardilho needs the concessionaire's decision (review).
#[test]
fn r106_stardilho_not_enabled() {
    let h = sint_pre(1000).da(2, "stardilho", 1000);
    let a = run(&sint_table(), &h);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_STARDILHO_NOT_ENABLED")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
}

/// r.107, r.108 (N14): round 1 from the left of the mão holder, later rounds from the highest
/// bettor of the round before.
#[test]
fn r108_sintetico_betting_order() {
    let h = sint_pre(1000)
        .board("AD")
        .d(2, "check")
        .da(3, "bet", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 1000)
        .da(2, "call", 1000)
        .board("TD")
        .d(3, "check")
        .d(4, "check")
        .d(1, "check")
        .d(2, "check");
    let a = run(&sint_table(), &h);
    assert!(!has(&a, "POKER_OUT_OF_TURN"), "{:#?}", a.violations);
    let h = sint_pre(1000)
        .board("AD")
        .d(2, "check")
        .da(3, "bet", 1000)
        .da(4, "call", 1000)
        .da(1, "call", 1000)
        .da(2, "call", 1000)
        .board("TD")
        .d(2, "check");
    assert!(has(&run(&sint_table(), &h), "POKER_OUT_OF_TURN"));
}

/// P461 r.49: nobody bets: pó, the chips carry to the next hand; the opener then bets at least
/// the sum of the antes (review).
#[test]
fn p461_r49_po() {
    let t = TableConfigExt::sint_p461();
    let mut st = PokerState::default();
    let a = run_with(
        &t,
        &mut st,
        &sint_check_down(sint_pre(1000), &[2, 3, 4, 1]),
        false,
    )
    .unwrap();
    assert!(a.bets.iter().all(|b| b.due_net_cents == -1000));
    assert!(a.house.is_empty());
    assert_eq!(st.po_carry_cents, 4000);
    let h = sint_pre(1000)
        .board("AD")
        .da(2, "bet", 1000)
        .d(3, "fold")
        .d(4, "fold")
        .d(1, "fold");
    let a = run_with(&t, &mut st.clone(), &h, false).unwrap();
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "POKER_BET_BELOW_MIN")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
    let h = sint_pre(1000)
        .board("AD")
        .da(2, "bet", 4000)
        .d(3, "fold")
        .d(4, "fold")
        .d(1, "fold");
    let a = run_with(&t, &mut st, &h, false).unwrap();
    assert!(!has(&a, "POKER_BET_BELOW_MIN"));
    // seat 2 takes the carried 4000, the antes 4000 (its own bet back); 3% of the pot 8000
    assert_eq!(net(&a, 2), 8000 - 240 - 1000);
    assert_eq!(st.po_carry_cents, 0);
}

// ---------------------------------------------------------- explanations

#[test]
fn explain_fills_notes_citing_rules_and_nothing_else_changes() {
    let t = holdem_table();
    let h = honest().settle(&[(1, -1000), (2, -1000), (3, 2800), (4, -1000)], Some(200));
    let mut st = PokerState::default();
    let plain = run_with(&t, &mut st, &h, false).unwrap();
    assert!(plain.notes.is_empty());
    let mut st = PokerState::default();
    let full = run_with(&t, &mut st, &h, true).unwrap();
    assert!(full.notes.len() > 10);
    assert!(
        full.notes
            .iter()
            .all(|n| n.citation.starts_with("P217/2007"))
    );
    assert!(full.notes.iter().any(|n| n.text.contains("AS AH")));
    assert!(full.notes.iter().any(|n| n.text.contains("main pot")));
    let mut stripped = full.clone();
    stripped.notes.clear();
    assert_eq!(stripped, plain);
    let _ = Options::default();
}

/// Every violation code the engine can emit is asserted by at least one test above (or in the
/// worked examples).
#[test]
fn every_code_is_exercised_by_a_test() {
    let src = [include_str!("rules.rs"), include_str!("worked_examples.rs")].concat();
    for (code, _) in rules_poker::codes::ALL {
        let uses = src.matches(&format!("\"{code}\"")).count();
        // the line below names each code once more; the tests must name it too
        assert!(uses >= 1, "{code} is not exercised by a test");
    }
}
