//! Every worked example of the chemin de fer digest (section 7), in exact cents (min bank
//! 1000 €, min bet 100 €).

mod common;
use common::*;
use rules_baccarat::BaccaratState;
use rules_core::{Bet, Setting, TableConfig};

fn table() -> TableConfig {
    let mut t = cdf();
    t.min_bet_cents = Some(10_000);
    t.settings
        .insert("min_bank_cents".into(), Setting::Int(100_000));
    t
}

fn seated(seats: &[u8]) -> Vec<rules_core::EventKind> {
    seats.iter().map(|s| role("seated", *s)).collect()
}

/// Example 1: partial cover; the banker's option 3 against a 9 (P217/2007 T.II S.I r.67(d));
/// the uncovered 500 € was never at risk (r.45); next coup 5500 or 5000 (r.46).
#[test]
fn example_1_partial_cover_and_option() {
    let t = table();
    let mut st = BaccaratState::default();
    let r = round(cat(vec![
        seated(&[1, 3, 5, 7]),
        vec![
            bet_at("bank", "bank", 300_000, 1),
            bet_at("s5", "ponto", 150_000, 5),
            bet_at("s7", "ponto", 100_000, 7),
            nmb(),
            role("card_holder", 5),
        ],
        cards("p:QS b:AD p:3D b:2C"),
        vec![decide(5, "carta")],
        cards("p:9H b:6S"),
    ]));
    let a = run_state(&t, &mut st, &r);
    assert_eq!(net(&a, "s5"), -150_000);
    assert_eq!(net(&a, "s7"), -100_000);
    assert_eq!(net(&a, "bank"), 250_000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(st.hand.won_stakes_cents, 250_000);
    assert!(!st.hand.fully_covered);
    // Next coup: 5500 (accumulated) and 5000 (twice the stakes won) are allowed, 5200 is not.
    for (bank, ok) in [(550_000, true), (500_000, true), (520_000, false)] {
        let mut s2 = st.clone();
        let r2 = round(cat(vec![
            vec![
                bet_at("bank", "bank", bank, 1),
                bet_at("s3", "ponto", 10_000, 3),
                nmb(),
            ],
            cards("p:7D b:2H p:KC b:4S"),
            vec![decide(3, "nao")],
        ]));
        let a2 = run_state(&t, &mut s2, &r2);
        assert_eq!(
            !has(&a2, "CF_BANK_LEVEL_INVALID"),
            ok,
            "bank {bank}: {:?}",
            a2.violations
        );
    }
}

/// Example 2: the dealer's false "carta" (r.106(b)): the ponto stands on 6, the banker on 3
/// takes the first card (7C) for 0, the second (2D) is burned; ponto 6 wins.
#[test]
fn example_2_dealer_false_carta() {
    let r = with_settlement(
        round(cat(vec![
            vec![
                bet_at("bank", "bank", 200_000, 1),
                bet_at("banco", "banco", 200_000, 3),
                nmb(),
            ],
            cards("p:2H b:KD p:4C b:3S"),
            vec![decide(3, "nao"), fault("CF_DEALER_FALSE_CARTA")],
            cards("p:7C b:2D"),
        ])),
        &[("banco", 200_000), ("bank", -200_000)],
    );
    let a = run(&table(), &r);
    assert_eq!(net(&a, "banco"), 200_000);
    assert_eq!(net(&a, "bank"), -200_000);
    assert_eq!(codes(&a), vec!["CF_DEALER_FALSE_CARTA"]);
    assert!(a.discrepancies.is_empty());
    let v = &a.violations[0];
    assert_eq!(v.citation, "P217/2007 T.II S.I r.106(b)");
    // Settled as dealt (ponto 6+7 = 3 against banker 3+2 = 5) it would be a wrong payout.
    let bad = with_settlement(r.clone(), &[("banco", -200_000), ("bank", 200_000)]);
    let a = run(&table(), &bad);
    assert_eq!(a.discrepancies.len(), 2);
    assert!(
        !has(&a, "CF_REMEDY_NOT_APPLIED"),
        "r.106(b) is a dealer fault, not the banker's"
    );
}

/// Example 3: the banker drew two cards for himself (r.104(e)): the lowest score of 3 of the 4
/// is 2 (both readings of note 4 agree); 3D burned; ponto 5 beats 2.
#[test]
fn example_3_banker_draws_two_cards() {
    let r = round(cat(vec![
        vec![
            bet_at("bank", "bank", 100_000, 1),
            bet_at("p", "ponto", 100_000, 4),
            nmb(),
        ],
        cards("p:KH b:2S p:QC b:2H"),
        vec![decide(4, "carta")],
        cards("p:5D b:8C b:3D"),
    ]));
    let a = run(&table(), &r);
    assert_eq!(net(&a, "p"), 100_000);
    assert_eq!(net(&a, "bank"), -100_000);
    assert_eq!(codes(&a), vec!["CF_BANKER_DREW_TWO_CARDS"]);
    assert_eq!(a.violations[0].confidence, rules_core::Confidence::Certain);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.104(e)");
}

fn coup(
    bank: i64,
    bets: Vec<Bet>,
    ponto_seat: u8,
    spec_deal: &str,
    call: &str,
    spec_draw: &str,
) -> Vec<rules_core::EventKind> {
    let mut v = vec![bet_at("bank", "bank", bank, 1)];
    v.extend(bets.into_iter().map(bet_full));
    v.push(nmb());
    v.extend(cards(spec_deal));
    v.push(decide(ponto_seat, call));
    v.extend(cards(spec_draw));
    v
}

/// Example 4: bank evolution (r.46, r.34, r.45, r.96(c)).
#[test]
fn example_4_bank_evolution() {
    let t = table();
    let mut st = BaccaratState::default();
    // Banker wins: ponto 7D KC = 7 stands, banker 9S KH = 9 abates.
    let win = ("p:7D b:9S p:KC b:KH", "nao", "");
    // 1. A (seat 1) starts with 1000 €; punters cover 600; A wins: 1600.
    let r1 = round(coup(
        100_000,
        vec![Bet::new("a", "ponto", 60_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    ));
    let a1 = run_state(&t, &mut st, &r1);
    assert_eq!(net(&a1, "bank"), 60_000);
    assert!(a1.violations.is_empty(), "{:?}", a1.violations);
    // 2. He keeps 1600; banco of 1600; A wins: 3200.
    let r2 = round(coup(
        160_000,
        vec![Bet::new("b", "banco", 160_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    ));
    let a2 = run_state(&t, &mut st, &r2);
    assert!(a2.violations.is_empty(), "{:?}", a2.violations);
    assert_eq!(net(&a2, "bank"), 160_000);
    assert!(
        st.hand.suivi.is_some(),
        "the banco lost: suivi right (r.51)"
    );
    // 3. Covered 3200; A wins: 6400, his 3rd win.
    let r3 = round(coup(
        320_000,
        vec![Bet::new("c", "banco", 320_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    ));
    let a3 = run_state(&t, &mut st, &r3);
    assert!(a3.violations.is_empty(), "{:?}", a3.violations);
    assert_eq!(st.hand.won_coups, 3);
    // 4. He halves (r.34): 3200 in play, 3200 to the garage; punters cover 2500; A loses.
    let lose = ("p:9D b:2S p:KC b:KH", "abate", "");
    let r4 = round(coup(
        320_000,
        vec![
            Bet::new("d", "ponto", 150_000).seat(3),
            Bet::new("e", "ponto", 100_000).seat(4),
        ],
        3,
        lose.0,
        lose.1,
        lose.2,
    ));
    let a4 = run_state(&t, &mut st, &r4);
    assert!(a4.violations.is_empty(), "{:?}", a4.violations);
    assert_eq!(net(&a4, "bank"), -250_000);
    assert_eq!(net(&a4, "d"), 150_000);
    assert_eq!(st.hand.garage_cents, 320_000);
    // The uncovered 700 € stays with A: only the covered part was at risk.
    assert_eq!(a4.bet("bank").unwrap().due_net_cents, -250_000);
    // The hand passes to his right (seat 2): keeping it is CF_HAND_ORDER.
    let mut s5 = st.clone();
    let r5 = round(coup(
        100_000,
        vec![Bet::new("f", "ponto", 10_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    ));
    let a5 = run_state(&t, &mut s5, &r5);
    assert!(has(&a5, "CF_HAND_ORDER"));
    let mut s5 = st.clone();
    let mut ev = coup(
        100_000,
        vec![Bet::new("f", "ponto", 10_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    );
    ev[0] = bet_at("bank", "bank", 100_000, 2);
    let a5 = run_state(&t, &mut s5, &round(ev));
    assert!(!has(&a5, "CF_HAND_ORDER"), "{:?}", a5.violations);
}

/// Example 4, variant: A passes after coup 2; the hand is offered at 3200 € (r.78, r.80); with
/// no taker it is auctioned and A may not bid (r.86).
#[test]
fn example_4_passed_hand_level_and_auction() {
    let t = table();
    let mut st = BaccaratState::default();
    let win = ("p:7D b:9S p:KC b:KH", "nao", "");
    let r1 = round(coup(
        100_000,
        vec![Bet::new("a", "ponto", 60_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    ));
    run_state(&t, &mut st, &r1);
    let mut ev = coup(
        160_000,
        vec![Bet::new("b", "banco", 160_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    );
    ev.push(decide(1, "pass_hand"));
    run_state(&t, &mut st, &round(ev));
    assert_eq!(st.hand.passed.as_ref().unwrap().level_cents, 320_000);
    // Taken at the offer by seat 2 with 3200 €: fine; with 3000 €: CF_PASSED_HAND_LEVEL.
    for (amount, ok) in [(320_000, true), (300_000, false)] {
        let mut s = st.clone();
        let mut ev = coup(
            amount,
            vec![Bet::new("c", "ponto", 10_000).seat(3)],
            3,
            win.0,
            win.1,
            win.2,
        );
        ev[0] = bet_at("bank", "bank", amount, 2);
        let a = run_state(&t, &mut s, &round(ev));
        assert_eq!(
            !has(&a, "CF_PASSED_HAND_LEVEL"),
            ok,
            "{amount}: {:?}",
            a.violations
        );
    }
    // Auction: A bids and wins: CF_AUCTION_INELIGIBLE_BIDDER.
    let mut s = st.clone();
    let mut ev = vec![
        proc_("auction"),
        decide_amount(1, "bid", 400_000),
        decide_amount(4, "bid", 200_000),
    ];
    ev.extend(coup(
        400_000,
        vec![Bet::new("c", "ponto", 10_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    ));
    let a = run_state(&t, &mut s, &round(ev));
    assert!(
        has(&a, "CF_AUCTION_INELIGIBLE_BIDDER"),
        "{:?}",
        a.violations
    );
    // Seat 4 wins with the best eligible bid: fine.
    let mut s = st.clone();
    let mut ev = vec![
        proc_("auction"),
        decide_amount(1, "bid", 400_000),
        decide_amount(4, "bid", 200_000),
    ];
    let mut c = coup(
        200_000,
        vec![Bet::new("c", "ponto", 10_000).seat(3)],
        3,
        win.0,
        win.1,
        win.2,
    );
    c[0] = bet_at("bank", "bank", 200_000, 4);
    ev.extend(c);
    let a = run_state(&t, &mut s, &round(ev));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.II S.I r.106(b) ("Se o pagador anunciar, por engano, «carta», quando o ponto tenha
/// dito «não», o golpe será restabelecido de acordo com a tabela. Assim, se o banqueiro tiver a
/// pontuação de bacará, 1, 2, 3, 4 ou 5 e tenha tirado apenas uma carta, esta ser-lhe-á
/// atribuída [...]; se tiver 6 ou 7 e tirou uma ou duas cartas, estas serão queimadas"): the
/// card that follows the dealer's false "carta" came from the dealer's call, not from a
/// decision of the banker: no CF_BANKER_FALSE_DRAW (also against a partial cover, where the
/// banker's decisions are judged), and on 6 or 7 the card is burned, whoever it was given to.
#[test]
fn r106b_false_carta_card_to_banker_is_no_banker_decision() {
    let coup_with = |banker: &str, draw: &str| {
        round(cat(vec![
            vec![
                bet_at("bank", "bank", 200_000, 1),
                bet_at("p", "ponto", 100_000, 3),
                nmb(),
            ],
            cards(&format!("p:2H b:KD p:4C b:{banker}")),
            vec![decide(3, "nao"), fault("CF_DEALER_FALSE_CARTA")],
            cards(draw),
        ]))
    };
    // Banker on 3: the card is his (3 + 7 = 0); ponto 6 wins.
    let a = run(&table(), &coup_with("3S", "b:7C"));
    assert_eq!(
        codes(&a),
        vec!["CF_DEALER_FALSE_CARTA"],
        "{:?}",
        a.violations
    );
    assert_eq!(net(&a, "p"), 100_000);
    // Banker on 6: the card given to him is burned: 6 against 6, a null coup (r.2).
    let a = run(&table(), &coup_with("6S", "b:7C"));
    assert_eq!(
        codes(&a),
        vec!["CF_DEALER_FALSE_CARTA"],
        "{:?}",
        a.violations
    );
    assert_eq!(net(&a, "p"), 0);
    // Banker on 7: burned; 7 beats 6.
    let a = run(&table(), &coup_with("7S", "b:7C x:2D"));
    assert_eq!(
        codes(&a),
        vec!["CF_DEALER_FALSE_CARTA"],
        "{:?}",
        a.violations
    );
    assert_eq!(net(&a, "p"), -100_000);
}
