//! The digest's worked examples E1–E8 (section 12), to the cent.

mod common;
use common::*;
use rules_core::{GameId, Recipient, Setting};

/// E1 — per-hand commission with a cap (P217 r.7(a)): 4%, cap 1200, pot 36000.
#[test]
fn e1_per_hand_commission_with_cap() {
    let t = set(
        table(GameId::PokerHoldem, 1000, "per_hand", Some(400)),
        "commission_cap_cents",
        Setting::Int(1200),
    );
    let h = H::new()
        .seats(&[(1, 50_000), (2, 50_000), (3, 50_000), (4, 50_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "2C 3D"), (2, "4H 5S"), (3, "9C 9D"), (4, "AS AH")])
        .d(3, "fold")
        .da(4, "raise", 12_000)
        .da(1, "call", 11_500)
        .da(2, "call", 11_000)
        .burn("6C")
        .board("KC 8D 7H")
        .d(1, "check")
        .d(2, "check")
        .d(4, "check")
        .burn("6D")
        .board("2S")
        .d(1, "check")
        .d(2, "check")
        .d(4, "check")
        .burn("6H")
        .board("JC")
        .d(1, "check")
        .d(2, "check")
        .d(4, "check")
        .settle(
            &[(1, -12_000), (2, -12_000), (3, 0), (4, 22_800)],
            Some(1200),
        );
    let a = run(&t, &h);
    assert_clean(&a);
    assert_eq!(net(&a, 4), 22_800);
    assert_eq!(net(&a, 1), -12_000);
    assert_eq!(net(&a, 2), -12_000);
    assert_eq!(net(&a, 3), 0);
    assert_eq!(house(&a), 1200);
}

/// E2 — all-in and side pot (P217 r.38, r.49, r.50, r.65; 5%).
#[test]
fn e2_all_in_and_side_pot() {
    let t = holdem_table();
    let h = H::new()
        .seats(&[(1, 4000), (2, 50_000), (3, 50_000), (4, 50_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "AS AH"), (2, "KS KH"), (3, "QS QH"), (4, "2C 7D")])
        .da(3, "raise", 4000)
        .d(4, "fold")
        .da(1, "all_in", 3500)
        .da(2, "call", 3000)
        .burn("3C")
        .board("9C 8D 4H")
        .da(2, "bet", 6000)
        .da(3, "call", 6000)
        .burn("3D")
        .board("2S")
        .d(2, "check")
        .d(3, "check")
        .burn("3H")
        .board("JC")
        .d(2, "check")
        .d(3, "check")
        .settle(&[(1, 7400), (2, 1400), (3, -10_000), (4, 0)], Some(1200));
    let a = run(&t, &h);
    assert_clean(&a);
    assert_eq!(net(&a, 1), 7400);
    assert_eq!(net(&a, 2), 1400);
    assert_eq!(net(&a, 3), -10_000);
    assert_eq!(net(&a, 4), 0);
    assert_eq!(house(&a), 1200);
}

/// E3 — omaha hand reading (r.73): Y's king-high flush beats X's two pairs.
#[test]
fn e3_omaha_hand_reading() {
    let t = table(GameId::PokerOmaha, 1000, "per_hand", Some(0));
    let h = H::new()
        .seats(&[(1, 10_000), (2, 10_000), (3, 10_000), (4, 10_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[
            (1, "AS 9H 9C 3D"),
            (2, "JS TS 5H 4H"),
            (3, "2C 2D 3C 4C"),
            (4, "5C 6C 8D 8H"),
        ])
        .d(3, "fold")
        .d(4, "fold")
        .da(1, "call", 500)
        .d(2, "check")
        .burn("AD")
        .board("KS QS 7S")
        .d(1, "check")
        .d(2, "check")
        .burn("AH")
        .board("2S")
        .d(1, "check")
        .d(2, "check")
        .burn("AC")
        .board("7D")
        .d(1, "check")
        .d(2, "check");
    let a = run(&t, &h);
    assert_clean(&a);
    assert_eq!(net(&a, 2), 1000);
    assert_eq!(net(&a, 1), -1000);
}

/// E4 — sintético ranking (r.95, r.103, r.97): flush > full house > straight.
#[test]
fn e4_sintetico_ranking() {
    let t = table(GameId::PokerSintetico, 1000, "per_hand", Some(0));
    let h = H::new()
        .seats(&[(1, 10_000), (2, 10_000), (3, 10_000), (4, 10_000)])
        .button(4)
        .da(1, "post_ante", 1000)
        .da(2, "post_ante", 1000)
        .da(3, "post_ante", 1000)
        .da(4, "post_ante", 1000)
        .deal(&[(4, "8S 8H"), (1, "QH JH"), (2, "9D 8C"), (3, "TS JC")])
        .board("AH")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .board("KH")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .board("9H")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .board("9C")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .board("8D")
        .d(1, "check")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check");
    let a = run(&t, &h);
    assert_clean(&a);
    assert_eq!(net(&a, 1), 3000);
    assert_eq!(net(&a, 2), -1000);
    assert_eq!(net(&a, 3), -1000);
    assert_eq!(net(&a, 4), -1000);
}

fn online_table() -> rules_core::TableConfig {
    set(
        table(GameId::PokerHoldemOnline, 1000, "per_hand", Some(300)),
        "small_blind_cents",
        Setting::Int(500),
    )
}

/// E5 — online side pots with a dead blind (Reg806 r.41, r.42, r.63, r.19; 3%).
#[test]
fn e5_online_side_pots_dead_blind() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 3000), (4, 20_000)])
        .button(4)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "2C 7D"), (2, "KS 4H"), (3, "AS AH"), (4, "QS QH")])
        .da(3, "all_in", 3000)
        .da(4, "call", 3000)
        .d(1, "fold")
        .da(2, "call", 2000)
        .board("9C 8D 3H")
        .da(2, "bet", 5000)
        .da(4, "call", 5000)
        .board("2S")
        .d(2, "check")
        .d(4, "check")
        .board("JC")
        .d(2, "check")
        .d(4, "check")
        .settle(&[(1, -500), (2, -8000), (3, 6215), (4, 1700)], Some(585));
    let a = run(&online_table(), &h);
    assert_clean(&a);
    assert_eq!(net(&a, 3), 6215);
    assert_eq!(net(&a, 4), 1700);
    assert_eq!(net(&a, 2), -8000);
    assert_eq!(net(&a, 1), -500);
    assert_eq!(house(&a), 585);
}

/// E6 — online walk (Reg806 r.18): no commission, the big blind nets the small blind.
#[test]
fn e6_online_walk_no_commission() {
    let h = H::new()
        .seats(&[(1, 20_000), (2, 20_000), (3, 20_000), (4, 20_000)])
        .button(4)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .deal(&[(1, "2C 7D"), (2, "KS 4H"), (3, "AS AH"), (4, "QS QH")])
        .d(3, "fold")
        .d(4, "fold")
        .d(1, "fold")
        .settle(&[(1, -500), (2, 500), (3, 0), (4, 0)], Some(0));
    let a = run(&online_table(), &h);
    assert_clean(&a);
    assert_eq!(net(&a, 2), 500);
    assert_eq!(net(&a, 1), -500);
    assert!(a.house.is_empty());
    // Taking 3% of that pot is wrong.
    let h = h.settle(&[(1, -500), (2, 455), (3, 0), (4, 0)], Some(45));
    let a = run(&online_table(), &h);
    assert!(has(&a, "POKER_COMMISSION_WRONG"));
}

/// E7 — sintético tie (r.104): losing bets 10000 split, each tied player +5000; session-fee table.
#[test]
fn e7_sintetico_tie() {
    let mut t = table(GameId::PokerSintetico, 1000, "per_session", Some(1000));
    t.max_bet_cents = Some(5000);
    let h = H::new()
        .seats(&[(1, 10_000), (2, 10_000), (3, 10_000), (4, 10_000)])
        .button(1)
        .da(1, "post_ante", 1000)
        .da(2, "post_ante", 1000)
        .da(3, "post_ante", 1000)
        .da(4, "post_ante", 1000)
        .deal(&[(1, "AS TS"), (2, "9D 8D"), (3, "AH TH"), (4, "KD QH")])
        .board("AD")
        .da(2, "bet", 4000)
        .da(3, "call", 4000)
        .da(4, "call", 4000)
        .da(1, "call", 4000)
        .board("TD")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .d(1, "check")
        .board("KC")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .d(1, "check")
        .board("9C")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .d(1, "check")
        .board("8H")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .d(1, "check")
        .settle(&[(1, 5000), (2, -5000), (3, 5000), (4, -5000)], Some(0));
    let a = run(&t, &h);
    assert_clean(&a);
    assert_eq!(net(&a, 1), 5000);
    assert_eq!(net(&a, 3), 5000);
    assert_eq!(net(&a, 2), -5000);
    assert_eq!(net(&a, 4), -5000);
    assert!(a.house.is_empty());
}

fn e8_hand() -> H {
    // Seat 4's first card is turned while dealing: dealing continues, seat 4 gets a replacement
    // after everyone else, the exposed card is the burn before the flop (r.70(c)).
    H::new()
        .seats(&[(1, 10_000), (2, 10_000), (3, 10_000), (4, 10_000)])
        .button(1)
        .da(1, "post_sb", 500)
        .da(2, "post_bb", 1000)
        .card(Recipient::seat(1), "2C", false)
        .card(Recipient::seat(2), "KS", false)
        .card(Recipient::seat(3), "AS", false)
        .card(Recipient::seat(4), "9H", true)
        .card(Recipient::seat(1), "7D", false)
        .card(Recipient::seat(2), "4H", false)
        .card(Recipient::seat(3), "AH", false)
        .card(Recipient::seat(4), "QS", false)
        .card(Recipient::seat(4), "QH", false)
        .da(3, "call", 1000)
        .da(4, "call", 1000)
        .d(1, "fold")
        .d(2, "check")
        .board("9C 8D 3H")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .burn("5C")
        .board("2S")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
        .burn("5D")
        .board("JC")
        .d(2, "check")
        .d(3, "check")
        .d(4, "check")
}

/// E8 — one exposed card (r.70(c)): the hand stands; voiding it is POKER_WRONGLY_VOIDED.
#[test]
fn e8_one_exposed_card_hand_stands() {
    let t = table(GameId::PokerHoldem, 1000, "per_hand", Some(0));
    let h = e8_hand().settle(&[(1, -500), (2, -1000), (3, 2500), (4, -1000)], Some(0));
    let a = run(&t, &h);
    assert_clean(&a);
    assert!(a.void.is_none());
    assert_eq!(net(&a, 3), 2500);
    let a = run(&t, &e8_hand().settle_void());
    assert_eq!(codes(&a), vec!["POKER_WRONGLY_VOIDED"]);
    assert!(a.discrepancies.is_empty());
    let a = run(&t, &e8_hand().void("card_exposed").settle_void());
    assert_eq!(codes(&a), vec!["POKER_WRONGLY_VOIDED"]);
}
