//! Chemin de fer: the bank and the hand across coups (P217/2007 T.II S.I r.29-r.35, r.46,
//! r.51-r.57, r.61, r.76-r.92), and the rule-by-rule explanation.

mod common;
use common::*;
use rules_baccarat::BaccaratState;
use rules_core::{Bet, EventKind, Options, Round, Setting, TableConfig};

fn t() -> TableConfig {
    let mut t = cdf();
    t.min_bet_cents = Some(10_000);
    t.settings
        .insert("min_bank_cents".into(), Setting::Int(100_000));
    set(
        set(t, "auction_base_cents", Setting::Int(100_000)),
        "auction_increment_cents",
        Setting::Int(10_000),
    )
}

const WIN: &str = "p:7D b:9S p:KC b:KH"; // the banker abates 9
const LOSE: &str = "p:9D b:2S p:KC b:KH"; // the ponto abates 9
const NULL: &str = "p:7D b:7S p:KC b:KH"; // 7 all

/// A coup of the banker at `seat` with `bank`, one punter at seat 3 for `stake`.
fn coup(
    pre: Vec<EventKind>,
    seat: u8,
    bank: i64,
    stake: i64,
    deal: &str,
    post: Vec<EventKind>,
) -> Round {
    let mut ev = pre;
    ev.push(bet_at("bank", "bank", bank, seat));
    ev.push(bet_at("p", "ponto", stake, 3));
    ev.push(nmb());
    ev.extend(cards(deal));
    ev.extend(post);
    round(ev)
}

fn census(seats: &[u8]) -> Vec<EventKind> {
    seats.iter().map(|s| role("seated", *s)).collect()
}

/// P217/2007 T.II S.I r.76: after a null coup the bank stays as it was.
#[test]
fn r76_null_coup_bank_unchanged() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(vec![], 1, 200_000, 100_000, NULL, vec![]),
    );
    assert!(
        run_state(
            &t(),
            &mut st.clone(),
            &coup(vec![], 1, 200_000, 100_000, WIN, vec![])
        )
        .violations
        .is_empty()
    );
    let a = run_state(
        &t(),
        &mut st,
        &coup(vec![], 1, 300_000, 100_000, WIN, vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_BANK_LEVEL_INVALID"]);
}

/// P217/2007 T.II S.I r.33 (note 9): keeping the hand into a new shoe, keep or halve; halving
/// after a 1st win in the same shoe is doubtful (low, review).
#[test]
fn r33_r34_halving() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(vec![], 1, 200_000, 100_000, WIN, vec![]),
    );
    // Same shoe, first win: halving 300 000 → 150 000 is not allowed.
    let a = run_state(
        &t(),
        &mut st.clone(),
        &coup(vec![], 1, 150_000, 100_000, WIN, vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_BANK_LEVEL_INVALID"]);
    assert_eq!(a.violations[0].severity, rules_core::Severity::Low);
    assert_eq!(a.violations[0].confidence, rules_core::Confidence::Review);
    // A new shoe: allowed (r.33).
    let mut st2 = st.clone();
    st2.shoe.known = true;
    let a = run_state(
        &t(),
        &mut st2,
        &coup(vec![proc_("shuffle")], 1, 150_000, 100_000, WIN, vec![]),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.II S.I r.85: no bidder: the next player in priority takes the hand with the
/// minimum capital.
#[test]
fn r85_no_bidder() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(
            census(&[1, 2, 3, 4, 5]),
            1,
            200_000,
            100_000,
            WIN,
            vec![decide(1, "pass_hand")],
        ),
    );
    let ok = coup(vec![proc_("auction")], 2, 100_000, 100_000, WIN, vec![]);
    assert!(run_state(&t(), &mut st.clone(), &ok).violations.is_empty());
    let bad = coup(vec![proc_("auction")], 4, 100_000, 100_000, WIN, vec![]);
    assert_eq!(
        codes(&run_state(&t(), &mut st.clone(), &bad)),
        vec!["CF_AUCTION_AWARD"]
    );
}

/// P217/2007 T.II S.I r.85, r.86: with no bidder, priority passes over the passer's associate,
/// who may not take part in the auction: the hand goes to the next player after him.
#[test]
fn r85_r86_no_bidder_passes_over_the_associate() {
    let mut st = BaccaratState::default();
    let mut first = census(&[1, 2, 3, 4, 5]);
    first.push(bet_at("bank", "bank", 200_000, 1));
    first.push(bet_full(
        Bet::new("assoc", "associate", 200_000)
            .seat(2)
            .on_bet("bank"),
    ));
    first.push(bet_at("p", "ponto", 100_000, 3));
    first.push(nmb());
    first.extend(cards(WIN));
    first.push(decide(1, "pass_hand"));
    let a = run_state(&t(), &mut st, &round(first));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let ok = coup(vec![proc_("auction")], 3, 100_000, 100_000, WIN, vec![]);
    let a = run_state(&t(), &mut st.clone(), &ok);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let associate = coup(vec![proc_("auction")], 2, 100_000, 100_000, WIN, vec![]);
    let a = run_state(&t(), &mut st.clone(), &associate);
    assert!(
        has(&a, "CF_AUCTION_INELIGIBLE_BIDDER"),
        "{:?}",
        a.violations
    );
}

/// P217/2007 T.II S.I r.83, r.84, r.87 (note 14): equal bids: a lone bidder first, then seated
/// before standing, then the nearest to the passer's right.
#[test]
fn r84_r87_equal_bids() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(
            vec![],
            1,
            200_000,
            100_000,
            WIN,
            vec![decide(1, "pass_hand")],
        ),
    );
    let bids = vec![
        proc_("auction"),
        decide_amount(4, "bid_associated", 300_000),
        decide_amount(6, "bid_associated", 300_000),
        decide_amount(7, "bid", 300_000),
        decide_amount(5, "bid", 300_000),
    ];
    // Lone bidders 5 and 7 tie; seat 5 is nearer the passer's (seat 1) right.
    let a = run_state(
        &t(),
        &mut st.clone(),
        &coup(bids.clone(), 5, 300_000, 100_000, WIN, vec![]),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let a = run_state(
        &t(),
        &mut st.clone(),
        &coup(bids.clone(), 7, 300_000, 100_000, WIN, vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_AUCTION_AWARD"]);
    let a = run_state(
        &t(),
        &mut st.clone(),
        &coup(bids, 4, 300_000, 100_000, WIN, vec![]),
    );
    assert_eq!(
        codes(&a),
        vec!["CF_AUCTION_AWARD"],
        "an associated bid yields to a lone one"
    );
    // r.82: bids from the base by whole increments.
    let off = vec![proc_("auction"), decide_amount(5, "bid", 305_000)];
    let a = run_state(&t(), &mut st, &coup(off, 5, 305_000, 100_000, WIN, vec![]));
    assert_eq!(codes(&a), vec!["CF_AUCTION_AWARD"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.82");
}

/// P217/2007 T.II S.I r.88: the winner who refuses to deal may not bid again.
#[test]
fn r88_refusal() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(
            vec![],
            1,
            200_000,
            100_000,
            WIN,
            vec![decide(1, "pass_hand")],
        ),
    );
    let pre = vec![
        proc_("auction"),
        decide_amount(5, "bid", 300_000),
        decide(5, "refuse_hand"),
        proc_("auction"),
        decide_amount(5, "bid", 250_000),
        decide_amount(6, "bid", 200_000),
    ];
    let a = run_state(
        &t(),
        &mut st.clone(),
        &coup(pre.clone(), 5, 250_000, 100_000, WIN, vec![]),
    );
    assert!(
        has(&a, "CF_AUCTION_INELIGIBLE_BIDDER"),
        "{:?}",
        a.violations
    );
    let a = run_state(&t(), &mut st, &coup(pre, 6, 200_000, 100_000, WIN, vec![]));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.II S.I r.89: who passes after a null coup may not banco on the next coup.
#[test]
fn r89_null_pass_no_banco() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(
            vec![],
            1,
            200_000,
            100_000,
            NULL,
            vec![decide(1, "pass_hand")],
        ),
    );
    let mut ev = vec![
        bet_at("bank", "bank", 200_000, 2),
        bet_at("b", "banco", 200_000, 1),
        nmb(),
    ];
    ev.extend(cards(WIN));
    let a = run_state(&t(), &mut st, &round(ev));
    assert_eq!(codes(&a), vec!["CF_BANCO_PRIORITY"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.89");
}

/// P217/2007 T.II S.I r.91: a passed hand taken by a standing player and lost returns to the
/// right of the last seated banker.
#[test]
fn r91_standing_banker_loses() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(
            census(&[1, 2, 3, 4, 5]),
            4,
            200_000,
            100_000,
            WIN,
            vec![decide(4, "pass_hand")],
        ),
    );
    let mut ev = vec![
        bet_full(
            Bet::new("bank", "bank", 300_000)
                .player("w")
                .attr("standing", "true")
                .seat(4),
        ),
        bet_at("p", "ponto", 100_000, 3),
        nmb(),
    ];
    ev.extend(cards(LOSE));
    let a = run_state(&t(), &mut st, &round(ev));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // The hand returns to seat 5, right of seat 4.
    assert!(
        run_state(
            &t(),
            &mut st.clone(),
            &coup(vec![], 5, 100_000, 100_000, WIN, vec![])
        )
        .violations
        .is_empty()
    );
    assert!(has(
        &run_state(
            &t(),
            &mut st,
            &coup(vec![], 1, 100_000, 100_000, WIN, vec![])
        ),
        "CF_HAND_ORDER"
    ));
}

/// P217/2007 T.II S.I r.21, r.32, r.92: after a loss the hand goes to the next occupied seat
/// on the right; a player who changed seat lets it pass once ("A mão salta").
#[test]
fn r32_r92_hand_to_the_right() {
    let mut st = BaccaratState::default();
    run_state(
        &t(),
        &mut st,
        &coup(census(&[1, 3, 5, 7]), 1, 200_000, 100_000, LOSE, vec![]),
    );
    assert!(
        run_state(
            &t(),
            &mut st.clone(),
            &coup(vec![], 3, 100_000, 100_000, WIN, vec![])
        )
        .violations
        .is_empty(),
        "seat 2 is vacant"
    );
    assert!(has(
        &run_state(
            &t(),
            &mut st.clone(),
            &coup(vec![], 5, 100_000, 100_000, WIN, vec![])
        ),
        "CF_HAND_ORDER"
    ));
    // Seat 3's player moved there to get the hand sooner: it skips him.
    let mut s2 = BaccaratState::default();
    run_state(
        &t(),
        &mut s2,
        &coup(
            cat(vec![
                census(&[1, 3, 5, 7]),
                vec![proc_seat("seat_change", None, 3)],
            ]),
            1,
            200_000,
            100_000,
            LOSE,
            vec![],
        ),
    );
    assert!(has(
        &run_state(
            &t(),
            &mut s2.clone(),
            &coup(vec![], 3, 100_000, 100_000, WIN, vec![])
        ),
        "CF_HAND_ORDER"
    ));
    assert!(
        run_state(
            &t(),
            &mut s2,
            &coup(vec![], 5, 100_000, 100_000, WIN, vec![])
        )
        .violations
        .is_empty()
    );
}

/// P217/2007 T.II S.I r.54: the suivi right follows a passed hand.
#[test]
fn r54_suivi_follows_passed_hand() {
    let mut st = BaccaratState::default();
    let mut ev = vec![
        bet_at("bank", "bank", 200_000, 1),
        bet_at("b", "banco", 200_000, 3),
        nmb(),
    ];
    ev.extend(cards(WIN));
    ev.push(decide(1, "pass_hand"));
    run_state(&t(), &mut st, &round(ev));
    let mut ev = vec![bet_at("bank", "bank", 400_000, 2), nmb()];
    ev.extend(cards(WIN));
    ev.push(bet_at("s", "banco_suivi", 400_000, 3));
    let a = run_state(&t(), &mut st, &round(ev));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.II S.I r.56: a standing banco avec la table is displaced by a seated one; a
/// banco seul takes precedence over both.
#[test]
fn r56_banco_seul() {
    let standing = |k: &str| decide_standing(k);
    let mut ev = vec![
        bet_at("bank", "bank", 200_000, 1),
        standing("banco_avec_la_table"),
        decide(6, "banco_avec_la_table"),
        decide(8, "banco_seul"),
    ];
    ev.push(bet_at("b", "banco_seul", 200_000, 8));
    ev.push(nmb());
    ev.extend(cards(WIN));
    assert!(run(&t(), &round(ev.clone())).violations.is_empty());
    ev[4] = bet_at("b", "banco_avec_la_table", 100_000, 6);
    assert!(has(&run(&t(), &round(ev)), "CF_BANCO_PRIORITY"));
}

fn decide_standing(action: &str) -> EventKind {
    let mut d = rules_core::Decision::new(5, action);
    d.player = Some("w".into());
    EventKind::Decision(d)
}

/// P217/2007 T.II S.I r.61: equal highest bets: the seat nearest the banker's right.
#[test]
fn r61_equal_bets_seat_priority() {
    let bets = |holder: u8| {
        let mut ev = vec![
            bet_at("bank", "bank", 200_000, 5),
            bet_at("a", "ponto", 50_000, 3),
            bet_at("b", "ponto", 50_000, 7),
            nmb(),
            role("card_holder", holder),
        ];
        ev.extend(cards("p:7D b:2S p:KC b:5H"));
        ev.push(decide(holder, "nao"));
        round(ev)
    };
    let a = run(&t(), &bets(7));
    assert!(
        a.violations.is_empty(),
        "seat 7 is nearer the banker's (5) right than seat 3: {:?}",
        a.violations
    );
    assert_eq!(codes(&run(&t(), &bets(3))), vec!["CF_CARDS_TO_WRONG_PONTO"]);
}

/// Options.explain: a rule-by-rule explanation citing each rule; nothing without it.
#[test]
fn explain_notes_cite_rules() {
    let r = coup(
        vec![],
        1,
        200_000,
        100_000,
        "p:QS b:AD p:3D b:2C",
        cat(vec![vec![decide(3, "carta")], cards("p:9H b:6S")]),
    );
    let a = explain(&t(), &r);
    assert!(a.notes.len() >= 5, "{:?}", a.notes);
    assert!(
        a.notes
            .iter()
            .all(|n| n.citation.starts_with("P217/2007 T.II S.I r."))
    );
    let text: String = a
        .notes
        .iter()
        .map(|n| n.text.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("scores 3")
            && text.contains("carta")
            && text.contains("banker 9 beats ponto 2"),
        "{text}"
    );
    let quiet = run(&t(), &r);
    assert!(quiet.notes.is_empty());
    let pb = explain(
        &pb("5pct"),
        &round(cat(vec![
            vec![bet("b", "banca", 4000), nmb()],
            cards("p:3S b:4D p:AH b:AS p:4C b:4H"),
        ])),
    );
    let text: String = pb
        .notes
        .iter()
        .map(|n| format!("{} | {}", n.citation, n.text))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("r.13 | banca on 5 against a third card of 4: must draw"),
        "{text}"
    );
    assert!(text.contains("r.20(a) | bet `b`"), "{text}");
    let _ = Options::default();
}

/// P217/2007 T.II S.I r.34, r.80 (note 15): a bank halved into the garage at the start of a coup
/// is already out of that coup's bank bet. If the banker wins that coup and passes, the hand is
/// offered at the accumulated bank: the earlier garage is not subtracted a second time. Only a
/// reduction declared after the deal, before "Passo a mão", lowers the level.
#[test]
fn r80_garage_before_the_deal_does_not_lower_the_passed_level() {
    let mut st = BaccaratState::default();
    // Three won coups, fully covered: 100 000 → 200 000 → 400 000 → 800 000.
    for bank in [100_000, 200_000, 400_000] {
        let a = run_state(&t(), &mut st, &coup(vec![], 1, bank, bank, WIN, vec![]));
        assert!(a.violations.is_empty(), "{:?}", a.violations);
    }
    // After the 3rd win he halves (r.34): 400 000 in play, 400 000 to the garage; he wins
    // 100 000 and passes the hand.
    let before_pass = st.clone();
    let a = run_state(
        &t(),
        &mut st,
        &coup(
            vec![proc_amount("garage", 400_000)],
            1,
            400_000,
            100_000,
            WIN,
            vec![decide(1, "pass_hand")],
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(
        st.hand.passed.as_ref().map(|p| p.level_cents),
        Some(500_000)
    );
    let a = run_state(
        &t(),
        &mut st.clone(),
        &coup(vec![], 2, 500_000, 100_000, WIN, vec![]),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // A reduction declared once the coup is decided, before passing, lowers the level.
    let mut st = before_pass;
    run_state(
        &t(),
        &mut st,
        &coup(
            vec![proc_amount("garage", 400_000)],
            1,
            400_000,
            100_000,
            WIN,
            vec![proc_amount("garage", 100_000), decide(1, "pass_hand")],
        ),
    );
    assert_eq!(
        st.hand.passed.as_ref().map(|p| p.level_cents),
        Some(400_000)
    );
}

/// P217/2007 T.II S.I r.48, r.49: seated punters call banco before standing ones. A standing
/// player (known by his `standing` role or a standing bet of his) who calls banco nearer the
/// banker's right does not take the priority from a seated caller.
#[test]
fn r49_standing_callers_come_after_seated_ones() {
    let standing_role = EventKind::Role {
        role: "standing".into(),
        seat: Some(2),
        player: Some("w".into()),
    };
    let call = |seat: u8, player: &str| {
        let mut d = rules_core::Decision::new(seat, "banco");
        d.player = Some(player.into());
        EventKind::Decision(d)
    };
    let coup_with = |pre: Vec<EventKind>, banco: Bet| {
        let mut ev = vec![bet_at("bank", "bank", 200_000, 1)];
        ev.extend(pre);
        ev.push(bet_full(banco));
        ev.push(nmb());
        ev.extend(cards(WIN));
        round(ev)
    };
    // The standing player behind seat 2 calls first, the seated player at seat 5 too: the banco
    // is seat 5's.
    let r = coup_with(
        vec![standing_role.clone(), call(2, "w"), call(5, "p5")],
        Bet::new("b", "banco", 200_000).seat(5).player("p5"),
    );
    let a = run(&t(), &r);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Given to the standing player, it breaks r.49.
    let r = coup_with(
        vec![standing_role, call(2, "w"), call(5, "p5")],
        Bet::new("b", "banco", 200_000)
            .seat(2)
            .player("w")
            .attr("standing", "true"),
    );
    assert_eq!(codes(&run(&t(), &r)), vec!["CF_BANCO_PRIORITY"]);
    // Without the role, the standing bet tells who stands.
    let r = coup_with(
        vec![call(2, "w"), call(5, "p5")],
        Bet::new("b", "banco", 200_000)
            .seat(2)
            .player("w")
            .attr("standing", "true"),
    );
    assert_eq!(codes(&run(&t(), &r)), vec!["CF_BANCO_PRIORITY"]);
}
