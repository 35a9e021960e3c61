//! Chemin de fer: one test per rule (named with its citation), every fault of r.75, r.97 and
//! r.104-r.106 with its reconstruction, and every code of the digest's section 6.

mod common;
use common::*;
use rules_baccarat::BaccaratState;
use rules_core::{Bet, Confidence, EventKind, Outcome, Round, Setting, Severity, TableConfig};

fn t() -> TableConfig {
    let mut t = cdf();
    t.min_bet_cents = Some(10_000);
    t.settings
        .insert("min_bank_cents".into(), Setting::Int(100_000));
    t
}

/// A coup: bank 2000 € by seat 1; `bets`; "nada mais"; the deal; the ponto's (seat 3) events;
/// the draw; then `post`.
fn coup(
    bets: Vec<Bet>,
    deal: &str,
    call: Vec<EventKind>,
    draw: &str,
    post: Vec<EventKind>,
) -> Round {
    let mut ev = vec![bet_at("bank", "bank", 200_000, 1)];
    ev.extend(bets.into_iter().map(bet_full));
    ev.push(nmb());
    ev.extend(cards(deal));
    ev.extend(call);
    ev.extend(cards(draw));
    ev.extend(post);
    round(ev)
}

fn ponto(amount: i64) -> Vec<Bet> {
    vec![Bet::new("p", "ponto", amount).seat(3)]
}

fn banco() -> Vec<Bet> {
    vec![Bet::new("p", "banco", 200_000).seat(3)]
}

fn call(action: &str) -> Vec<EventKind> {
    vec![decide(3, action)]
}

// ---------------------------------------------------------------- honest play (r.62-r.69)

/// P217/2007 T.II S.I r.2, r.64, r.67: an honest coup raises nothing; 1 to 1 against the bank.
#[test]
fn r2_r67_honest_coups() {
    // Ponto 5 (free choice) stands; banker 5 draws against a ponto who stood; 4 + 5 + AH = 0.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:3C b:AS",
            call("nao"),
            "b:5H",
            vec![],
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!((net(&a, "p"), net(&a, "bank")), (100_000, -100_000));
    // Ponto 5 draws (his choice), 5 v 4 is the banker's option: he stands.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:3C b:AS",
            call("carta"),
            "p:4H",
            vec![],
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "p"), 100_000, "ponto 9 beats banker 5");
    // Equal scores: null coup (r.2, r.76).
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:7D p:KC b:KS",
            call("nao"),
            "",
            vec![],
        ),
    );
    assert!(a.violations.is_empty());
    assert_eq!(a.bet("p").unwrap().outcome, Outcome::Push);
    assert_eq!(net(&a, "bank"), 0);
}

// ---------------------------------------------------------------- false draws (r.70, r.71)

/// P217/2007 T.II S.I r.71: a false draw without a full banco is rebuilt; surplus burned.
#[test]
fn r71_punter_false_draw_rebuilt() {
    // Ponto 6 calls carta (must stand) and gets 3D; banker 4 against a 3 draws 9C.
    // Rebuilt: ponto stands on 6; banker 4 with a ponto who stood draws the first card, 3D: 7.
    let r = with_settlement(
        coup(
            ponto(100_000),
            "p:6S b:KD p:KC b:4S",
            call("carta"),
            "p:3D b:9C",
            vec![],
        ),
        &[("p", 100_000), ("bank", -100_000)],
    );
    let a = run(&t(), &r);
    assert_eq!(codes(&a), vec!["CF_PUNTER_FALSE_DRAW"]);
    assert_eq!(net(&a, "p"), -100_000);
    assert_eq!(
        a.discrepancies.len(),
        2,
        "the false draw is the punter's: no r.104(l) relief"
    );
    assert!(a.discrepancies.iter().all(|d| d.code == "CF_WRONG_PAYOUT"));
    assert_eq!(
        a.violations[0].confidence,
        Confidence::Review,
        "note 3: a card went to the other side"
    );
}

/// P217/2007 T.II S.I r.70: with a full banco the ponto may make false draws.
#[test]
fn r70_banco_false_draw_allowed() {
    let a = run(
        &t(),
        &coup(
            banco(),
            "p:6S b:KD p:KC b:4S",
            call("carta"),
            "p:3D b:9C",
            vec![],
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "p"), 200_000, "as played: ponto 9 beats banker 3");
}

/// P217/2007 T.II S.I r.67, r.70: the banker's deviation without banco is flagged and settled as
/// played (note 11).
#[test]
fn r70_banker_false_draw() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:6D p:KC b:KS",
            call("nao"),
            "b:3H",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_FALSE_DRAW"]);
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    assert_eq!(
        net(&a, "p"),
        -100_000,
        "as played: banker 6 + 3 = 9 beats 7"
    );
}

/// P217/2007 T.II S.I r.67(c), r.70: the banker on bacará must draw, even in banco.
#[test]
fn r67c_banker_bacara_must_draw() {
    let a = run(
        &t(),
        &coup(banco(), "p:7S b:KD p:KC b:QS", call("nao"), "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_BACARA_NO_DRAW"]);
    assert_eq!(net(&a, "p"), 200_000);
}

/// P217/2007 T.II S.I r.102: "O banqueiro joga segundo a tabela": both options are draws.
#[test]
fn r102_unknowing_banker_must_draw_in_options() {
    let mut ev = vec![proc_("banker_plays_by_table")];
    ev.extend(call("carta"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:2S b:AD p:AC b:2S", ev, "p:9H", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_OPTION_USED_WHEN_FORCED"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.102");
}

/// P217/2007 T.II S.I r.67(a), note 1: the banker's abate ends the coup before the ponto's card.
#[test]
fn r67a_ponto_card_after_banker_abate_removed() {
    let r = with_settlement(
        coup(
            ponto(100_000),
            "p:2S b:8D p:AC b:KS",
            call("carta"),
            "p:6H",
            vec![],
        ),
        &[("p", -100_000), ("bank", 100_000)],
    );
    let a = run(&t(), &r);
    assert_eq!(codes(&a), vec!["CF_PONTO_DRAWN_AFTER_BANKER_ABATE"]);
    assert_eq!(net(&a, "p"), -100_000, "banker 8 beats 3");
    assert!(a.discrepancies.is_empty());
}

// ---------------------------------------------------------------- advice (r.98-r.102)

/// P217/2007 T.II S.I r.98, r.100: wrong advice to the banker: rebuilt by the table.
#[test]
fn r100_wrong_advice_rebuilt() {
    // Banker 6, ponto stood on 7; advised "carta" (the table says stand); he drew 2H (8).
    // Rebuilt: the banker stands on 6 and the 2H is burned: ponto 7 wins.
    let mut post = vec![proc_seat("advice", Some("carta"), 1)];
    post.extend(cards("b:2H"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:7S b:6D p:KC b:KS", call("nao"), "", post),
    );
    assert_eq!(codes(&a), vec!["CF_EMPLOYEE_WRONG_ADVICE"]);
    assert_eq!(net(&a, "p"), 100_000);
}

/// P217/2007 T.II S.I r.99: an employee may never tell a ponto to draw on 5.
#[test]
fn r99_advice_to_draw_on_five() {
    let mut ev = vec![proc_seat("advice", Some("carta"), 3)];
    ev.extend(call("carta"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:2S b:4D p:3C b:AS", ev, "p:4H", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_EMPLOYEE_ADVISED_DRAW_ON_5"]);
    assert_eq!(a.violations[0].severity, Severity::Low);
    assert_eq!(net(&a, "p"), 100_000, "the choice stands");
}

/// P217/2007 T.II S.I r.104(n): the banker drew against the dealer's indication: burned.
#[test]
fn r104n_drew_against_indication() {
    // Banker 6 against a ponto who stood: "não" indicated (right); he drew 3H: burned.
    let mut post = vec![proc_seat("advice", Some("nao"), 1)];
    post.extend(cards("b:3H"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:7S b:6D p:KC b:KS", call("nao"), "", post),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_DREW_AGAINST_INDICATION"]);
    assert_eq!(net(&a, "p"), 100_000);
}

// ---------------------------------------------------------------- who holds the cards

/// P217/2007 T.II S.I r.60, r.61, r.101: the highest seated bettor, seat priority from the
/// banker's right; never a ponto who does not know the game unless he made banco.
#[test]
fn r60_r61_r101_card_holder() {
    let bets = vec![
        Bet::new("a", "ponto", 50_000).seat(5),
        Bet::new("b", "ponto", 50_000).seat(3),
        Bet::new("c", "ponto", 20_000).seat(2),
    ];
    let pre = |holder: u8, unknowing: bool| {
        let mut v = Vec::new();
        if unknowing {
            v.push(proc_seat("unknowing_ponto", None, 3));
        }
        v.push(role("card_holder", holder));
        v.extend(call("nao"));
        v
    };
    let honest = run(
        &t(),
        &coup(
            bets.clone(),
            "p:7S b:7D p:KC b:KS",
            pre(3, false),
            "",
            vec![],
        ),
    );
    assert!(honest.violations.is_empty(), "{:?}", honest.violations);
    let a = run(
        &t(),
        &coup(
            bets.clone(),
            "p:7S b:7D p:KC b:KS",
            pre(5, false),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_CARDS_TO_WRONG_PONTO"]);
    let a = run(
        &t(),
        &coup(
            bets.clone(),
            "p:7S b:7D p:KC b:KS",
            pre(3, true),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_CARDS_TO_UNKNOWING_PONTO"]);
    let a = run(
        &t(),
        &coup(bets, "p:7S b:7D p:KC b:KS", pre(5, true), "", vec![]),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

// ---------------------------------------------------------------- banker's faults (r.104)

/// P217/2007 T.II S.I r.104(a): having drawn, the banker must deal the coup.
#[test]
fn r104a_withdrew_after_draw() {
    let mut post = vec![fault("CF_BANKER_WITHDREW_AFTER_DRAW")];
    post.extend(call("nao"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:7S b:7D p:KC b:KS", post, "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_WITHDREW_AFTER_DRAW"]);
}

/// P217/2007 T.II S.I r.104(b): after exposing a ponto card the banker draws in both options.
#[test]
fn r104b_exposed_ponto_card() {
    let mut ev = vec![fault("CF_BANKER_EXPOSED_PONTO_CARD")];
    ev.extend(call("carta"));
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:3C b:AS",
            ev.clone(),
            "p:4H",
            vec![],
        ),
    );
    assert_eq!(
        codes(&a),
        vec!["CF_BANKER_EXPOSED_PONTO_CARD", "CF_OPTION_USED_WHEN_FORCED"]
    );
    assert_eq!(
        a.violations
            .iter()
            .find(|v| v.code == "CF_OPTION_USED_WHEN_FORCED")
            .unwrap()
            .citation,
        "P217/2007 T.II S.I r.104(b)"
    );
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:3C b:AS",
            ev,
            "p:4H b:2C",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_EXPOSED_PONTO_CARD"]);
}

/// P217/2007 T.II S.I r.104(c): stuck cards on the ponto's draw: annulled unless rebuilt.
#[test]
fn r104c_stuck_cards() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:7D p:KC b:KS",
            call("carta"),
            "p:3H p:4H",
            vec![void("stuck_cards")],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_STUCK_CARDS"]);
    assert!(a.void.is_some());
    assert!(
        a.bets
            .iter()
            .all(|b| b.due_net_cents == 0 && b.outcome == Outcome::Void)
    );
    // Not annulled: rebuilt in shoe order (ponto 3H, 4H burned), for review.
    let mut ev = call("carta");
    ev.push(fault("CF_STUCK_CARDS"));
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:7D p:KC b:KS",
            ev,
            "p:3H p:4H",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_STUCK_CARDS"]);
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    assert_eq!(net(&a, "p"), -100_000, "ponto 5 against 7");
}

/// P217/2007 T.II S.I r.104(d): more than two banker cards after the deal count bacará; he is
/// entitled to a card even after the ponto's abate (note 5).
#[test]
fn r104d_banker_extra_card_in_deal() {
    // Banker 9 + 9 + KS would be 8; it counts 0; the ponto abates 8; the banker draws 9H: 9.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:4S b:9D p:4C b:9S b:KS",
            call("abate"),
            "b:9H",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_EXTRA_CARD_IN_DEAL"]);
    assert_eq!(net(&a, "p"), -100_000);
}

/// P217/2007 T.II S.I r.104(e), note 4: two cards drawn for himself: the lowest of 3 of 4; when
/// the readings differ, any 3 of the 4 and review.
#[test]
fn r104e_banker_drew_two_cards_readings() {
    // Banker 4D 3S = 7? no: 2D 2H = 4, drew 5C and AS: any 3 of 4: 2+2+5=9, 2+2+1=5,
    // 2+5+1=8, 2+5+1=8: lowest 5; keeping 2D 2H: 9 or 5: lowest 5: same.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:KH b:2D p:QC b:2H",
            call("carta"),
            "p:2C b:5C b:AS",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_DREW_TWO_CARDS"]);
    assert_eq!(net(&a, "p"), -100_000, "ponto 2 against 5");
    // 4D 4H = 8? natural. Use 3D 3H = 6 drawing (ponto 6? no) ...: 2S AH = 3 drew 7C 6C:
    // any 3: 2+1+7=0, 2+1+6=9, 2+7+6=5, 1+7+6=4: lowest 0; keeping the first two: 0 or 9: 0.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:KH b:2S p:QC b:AH",
            call("carta"),
            "p:2C b:7C b:6C",
            vec![],
        ),
    );
    assert_eq!(a.violations[0].confidence, Confidence::Certain);
    // 5S 5H = 0 drew 4C 3C: any 3: 5+5+4=4, 5+5+3=3, 5+4+3=2, 5+4+3=2: lowest 2; keeping 5S 5H:
    // 4 or 3: lowest 3: the readings differ: 2, for review.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:KH b:5S p:QC b:5H",
            call("carta"),
            "p:2C b:4C b:3C",
            vec![],
        ),
    );
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    assert_eq!(net(&a, "p"), 0, "ponto 2 ties the banker's 2");
}

/// P217/2007 T.II S.I r.104(f): a fifth card in the deal is the ponto's third if he calls
/// carta, else forced on the banker, who loses his abate.
#[test]
fn r104f_fifth_card() {
    // Deal P 7S B 9D P KC B KS + fifth 2H; ponto says não: the 2H is the banker's: 9+0+2 = 1.
    let mut ev = vec![fault("CF_FIFTH_CARD_IN_DEAL")];
    ev.extend(call("nao"));
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:9D p:KC b:KS b:2H",
            ev.clone(),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_FIFTH_CARD_IN_DEAL"]);
    assert_eq!(net(&a, "p"), 100_000);
    // Ponto 3 calls carta: the fifth (2H) is his: 5; banker 7 stands: banker wins.
    let mut ev = vec![fault("CF_FIFTH_CARD_IN_DEAL")];
    ev.extend(call("carta"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:3S b:7D p:KC b:KS p:2H", ev, "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_FIFTH_CARD_IN_DEAL"]);
    assert_eq!(net(&a, "p"), -100_000);
}

/// P217/2007 T.II S.I r.104(g), note 6: three ponto cards after the deal: the highest score of
/// 2 or 3 of them; settled as recorded, for review.
#[test]
fn r104g_ponto_three_cards() {
    let r = with_settlement(
        coup(
            ponto(100_000),
            "p:3S b:7D p:KC p:5H b:KS",
            call("nao"),
            "",
            vec![],
        ),
        &[("p", 100_000), ("bank", -100_000)],
    );
    let a = run(&t(), &r);
    assert_eq!(codes(&a), vec!["CF_PONTO_THREE_CARDS_IN_DEAL"]);
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    assert_eq!(net(&a, "p"), 100_000, "as recorded");
    assert!(a.discrepancies.is_empty());
    let as_recorded = |outcome: Outcome, stake: i64, net: i64| {
        (
            outcome,
            stake,
            net,
            "r.104(g): settled as the casino recorded, for review".to_string(),
            "P217/2007 T.II S.I r.104(g)".to_string(),
        )
    };
    assert_eq!(
        settled(&a, "p"),
        as_recorded(Outcome::Won, 100_000, 100_000)
    );
    assert_eq!(
        settled(&a, "bank"),
        as_recorded(Outcome::Lost, 200_000, -100_000)
    );
}

/// P217/2007 T.II S.I r.104(h): four ponto cards: the highest score of 3 of them.
#[test]
fn r104h_ponto_four_cards() {
    // Ponto 2S AC = 3, calls carta, gets 4H and 2D: 3 of 4: 2+1+4=7, 2+1+2=5, 2+4+2=8,
    // 1+4+2=7: highest 8 (keeping 2S AC: 7 or 5: 7: the readings differ: review).
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:7D p:AC b:KS",
            call("carta"),
            "p:4H p:2D",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_PONTO_FOUR_CARDS"]);
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    assert_eq!(net(&a, "p"), 100_000, "8 against 7");
}

/// P217/2007 T.II S.I r.104(i): a ponto card dropped in the deal: the ponto abates 9.
#[test]
fn r104i_ponto_card_dropped() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:7D p:AC b:KS",
            vec![fault("CF_PONTO_CARD_DROPPED")],
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_PONTO_CARD_DROPPED"]);
    assert_eq!(net(&a, "p"), 100_000);
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:AC b:5S",
            vec![fault("CF_PONTO_CARD_DROPPED")],
            "",
            vec![],
        ),
    );
    assert_eq!(net(&a, "p"), 0, "the banker's own 9 ties");
}

/// P217/2007 T.II S.I r.104(j): the ponto's requested card discarded: the ponto scores 9, the
/// banker keeps his draw except on 7.
#[test]
fn r104j_requested_card_discarded() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:AC b:4S",
            call("carta"),
            "d:5H b:AH",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_PONTO_CARD_DISCARDED_BY_BANKER"]);
    assert_eq!(net(&a, "p"), 0, "banker 8 + 1 = 9 ties the ponto's 9");
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:AC b:3S",
            call("carta"),
            "d:5H b:2H",
            vec![],
        ),
    );
    assert_eq!(
        net(&a, "p"),
        100_000,
        "the banker on 7 may not draw: 9 beats 7"
    );
}

/// P217/2007 T.II S.I r.104(m): dropped cards keep their value (informational, review).
#[test]
fn r104m_card_dropped() {
    let mut ev = vec![fault("CF_CARD_DROPPED")];
    ev.extend(call("nao"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:7S b:2D p:KC b:4S", ev, "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_CARD_DROPPED"]);
    assert_eq!(a.violations[0].severity, Severity::Info);
}

/// P217/2007 T.II S.I r.104(l): a banker's error settled as dealt after the coup concluded:
/// CF_REMEDY_NOT_APPLIED instead of CF_WRONG_PAYOUT.
#[test]
fn r104l_no_claim_after_conclusion() {
    // Digest example 3 settled as dealt: banker 2+2+8+3 = 5 ties the ponto's 5: null.
    let r = with_settlement(
        coup(
            ponto(100_000),
            "p:KH b:2S p:QC b:2H",
            call("carta"),
            "p:5D b:8C b:3D",
            vec![],
        ),
        &[("p", 0), ("bank", 0)],
    );
    let a = run(&t(), &r);
    assert_eq!(
        codes(&a),
        vec!["CF_BANKER_DREW_TWO_CARDS", "CF_REMEDY_NOT_APPLIED"]
    );
    assert!(a.discrepancies.is_empty());
    assert_eq!(net(&a, "p"), 100_000, "the due result stays the remedy's");
}

// ---------------------------------------------------------------- ponto's faults (r.105)

/// P217/2007 T.II S.I r.105(a), (b): not abating at the proper time; 9 not abated loses to an
/// abated 8.
#[test]
fn r105ab_failed_to_abate() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:4S b:4D p:5C b:4S",
            call("nao"),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_PUNTER_FAILED_TO_ABATE"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.105(b)");
    assert_eq!(net(&a, "p"), -100_000);
    // 8 not abated against an abated 8: null by r.2, doubtful (note 2).
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:4S b:4D p:4C b:4S",
            call("nao"),
            "",
            vec![],
        ),
    );
    assert_eq!(net(&a, "p"), 0);
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    // 9 not abated, the banker on 5 plays on: the ponto's 9 still counts.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:4S b:4D p:5C b:AS",
            call("nao"),
            "b:2H",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_PUNTER_FAILED_TO_ABATE"]);
    assert_eq!(net(&a, "p"), 100_000);
}

/// P217/2007 T.II S.I r.105(c), (d): a changed call: on 5 the first stands; otherwise the
/// banker chooses.
#[test]
fn r105cd_changed_announcement() {
    let ev = vec![decide(3, "carta"), decide(3, "nao")];
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:7D p:3C b:KS",
            ev.clone(),
            "p:4H",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_PUNTER_CHANGED_ANNOUNCEMENT"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.105(d)");
    assert_eq!(net(&a, "p"), 100_000, "on 5 carta stands: 9 beats 7");
    // On 3 the banker refused the card: the ponto stands on 3 (no false draw reported).
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:2S b:7D p:AC b:KS", ev, "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_PUNTER_CHANGED_ANNOUNCEMENT"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.105(c)");
    assert_eq!(net(&a, "p"), -100_000);
}

/// P217/2007 T.II S.I r.105(e): a slow ponto (informational).
#[test]
fn r105e_delay() {
    let mut ev = vec![fault_d("CF_PUNTER_DELAY", Some(3), None)];
    ev.extend(call("nao"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:7S b:2D p:KC b:4S", ev, "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_PUNTER_DELAY"]);
}

// ---------------------------------------------------------------- dealer's faults (r.106, r.75, r.97)

/// P217/2007 T.II S.I r.106(a): cards out of the shoe face up are burned; the coup is rebuilt.
#[test]
fn r106a_exposed_card_burned() {
    // The KC came out face up and was dealt to the ponto: burned; the deal shifts:
    // ponto 7S 4S = 1, banker 2D 3H = 5; ponto draws 9C: 0; banker 5 v 9 stands: banker wins.
    let mut ev = vec![fault("CF_DEALER_EXPOSED_CARD")];
    ev.extend(call("nao"));
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D pu:KC b:4S",
            ev,
            "p:3H b:9C",
            vec![],
        ),
    );
    assert!(has(&a, "CF_DEALER_EXPOSED_CARD"));
    assert_eq!(net(&a, "p"), -100_000);
    // Burned properly: nothing changes.
    let mut ev = vec![fault("CF_DEALER_EXPOSED_CARD")];
    ev.extend(call("nao"));
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "xu:QD p:7S b:2D p:KC b:3S",
            ev,
            "b:AH",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_DEALER_EXPOSED_CARD"]);
    assert_eq!(a.violations[0].severity, Severity::Low);
}

/// P217/2007 T.II S.I r.106(c): a dealer fault passing the cards: annulled unless rebuilt.
#[test]
fn r106c_dealer_card_fault() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:4S",
            call("nao"),
            "",
            vec![void("dealer_card_fault")],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_DEALER_CARD_FAULT"]);
    assert!(a.void.is_some());
    // Ponto called carta and was given nothing: rebuilt in shoe order (the banker's card is his).
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2S b:4D p:AC b:KS",
            call("carta"),
            "b:5H",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_DEALER_CARD_FAULT"]);
    assert_eq!(a.violations[0].confidence, Confidence::Review);
    assert_eq!(
        net(&a, "p"),
        100_000,
        "ponto 3 + 5 = 8; the banker's card never left the shoe: 4"
    );
}

/// P217/2007 T.II S.I r.106(d), note 13: the last coup needs 6 cards besides the warning card.
#[test]
fn r106d_last_coup_too_few_cards() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:4S",
            call("nao"),
            "",
            vec![void("last_coup_too_few_cards")],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_LAST_COUP_TOO_FEW_CARDS"]);
    // Derived from the shoe: 308 of 312 cards out before the coup.
    let mut st = BaccaratState::default();
    st.shoe.known = true;
    st.shoe.coups = 60;
    st.shoe.cards_out = 308;
    let a = run_state(
        &t(),
        &mut st,
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:4S",
            call("nao"),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_LAST_COUP_TOO_FEW_CARDS"]);
    assert!(a.void.is_some());
}

/// P217/2007 T.II S.I r.75: the player who discards loses; the dealer who discards annuls.
#[test]
fn r75_discards() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:9D p:KC b:KS",
            call("nao"),
            "",
            vec![fault_d(
                "CF_CARDS_DISCARDED_BY_PLAYER",
                None,
                Some("banker"),
            )],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_CARDS_DISCARDED_BY_PLAYER"]);
    assert_eq!(
        net(&a, "p"),
        100_000,
        "the banker's 9 is lost with the discard"
    );
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:KS",
            call("nao"),
            "",
            vec![fault_d("CF_CARDS_DISCARDED_BY_PLAYER", Some(3), None)],
        ),
    );
    assert_eq!(net(&a, "p"), -100_000);
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:KS",
            call("nao"),
            "",
            vec![fault("CF_CARDS_DISCARDED_BY_DEALER")],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_CARDS_DISCARDED_BY_DEALER"]);
    assert!(a.void.is_some());
}

/// P217/2007 T.II S.I r.97: no card goes back into the shoe.
#[test]
fn r97_card_returned() {
    let mut ev = call("nao");
    ev.push(fault("CF_CARD_RETURNED_TO_SHOE"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:7S b:2D p:KC b:4S", ev, "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_CARD_RETURNED_TO_SHOE"]);
}

// ---------------------------------------------------------------- bets and the bank

/// P217/2007 T.II S.I r.40: a bet after "nada mais" is withdrawn.
#[test]
fn r40_late_bet_withdrawn() {
    let mut ev = vec![
        bet_at("bank", "bank", 200_000, 1),
        bet_at("p", "ponto", 100_000, 3),
        nmb(),
        bet_at("q", "ponto", 50_000, 4),
    ];
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    ev.push(decide(3, "nao"));
    let a = run(&t(), &round(ev));
    assert_eq!(codes(&a), vec!["CF_LATE_BET"]);
    assert_eq!(a.bet("q").unwrap().outcome, Outcome::Withdrawn);
    assert_eq!(net(&a, "q"), 0);
    assert_eq!(net(&a, "bank"), -100_000);
}

/// P217/2007 T.II S.I r.51: banco suivi may come after the deal, by the punter who lost a banco.
#[test]
fn r51_banco_suivi() {
    let mut st = BaccaratState::default();
    let lost = coup(banco(), "p:7S b:9D p:KC b:KS", call("nao"), "", vec![]);
    run_state(&t(), &mut st, &lost);
    let mut ev = vec![bet_at("bank", "bank", 400_000, 1), nmb()];
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    ev.push(bet_at("s", "banco_suivi", 400_000, 3));
    ev.push(decide(3, "nao"));
    let a = run_state(&t(), &mut st.clone(), &round(ev.clone()));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "s"), 400_000);
    // By someone else after the deal: a late banco, withdrawn (r.40, r.51).
    ev[6] = bet_at("s", "banco_suivi", 400_000, 5);
    let a = run_state(&t(), &mut st.clone(), &round(ev));
    assert_eq!(codes(&a), vec!["CF_LATE_BET"]);
    assert_eq!(a.bet("s").unwrap().outcome, Outcome::Withdrawn);
    // By someone else before "nada mais": a suivi he has no right to.
    let mut ev = vec![
        bet_at("bank", "bank", 400_000, 1),
        bet_at("s", "banco_suivi", 400_000, 5),
        nmb(),
    ];
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    let a = run_state(&t(), &mut st, &round(ev));
    assert_eq!(codes(&a), vec!["CF_BANCO_PRIORITY"]);
}

/// P217/2007 T.II S.I r.36: the minimum or a multiple; r.43: the line plays half.
#[test]
fn r36_r43_bet_amounts() {
    let a = run(
        &t(),
        &coup(
            vec![Bet::new("p", "ponto", 15_000).seat(3)],
            "p:7S b:2D p:KC b:4S",
            call("nao"),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_BET_NOT_MULTIPLE_OF_MIN"]);
    let a = run(
        &t(),
        &coup(
            vec![
                Bet::new("p", "ponto", 40_000)
                    .seat(3)
                    .attr("on_line", "true"),
            ],
            "p:7S b:2D p:KC b:4S",
            call("nao"),
            "",
            vec![],
        ),
    );
    assert!(a.violations.is_empty());
    assert_eq!(net(&a, "p"), 20_000, "chips on the line play half");
}

/// P217/2007 T.II S.I r.35: the bank at least the table minimum.
#[test]
fn r35_bank_below_min() {
    let mut ev = vec![
        bet_at("bank", "bank", 50_000, 1),
        bet_at("p", "ponto", 10_000, 3),
        nmb(),
    ];
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    let a = run(&t(), &round(ev));
    assert_eq!(codes(&a), vec!["CF_BANK_BELOW_MIN"]);
}

/// P217/2007 T.II S.I r.45, r.58: bets up to the bank; the excess is not in play.
#[test]
fn r45_bets_exceed_bank() {
    let bets = vec![
        Bet::new("a", "ponto", 150_000).seat(3),
        Bet::new("b", "ponto", 100_000).seat(4),
    ];
    let a = run(
        &t(),
        &coup(bets, "p:7S b:2D p:KC b:4S", call("nao"), "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_BETS_EXCEED_BANK"]);
    assert_eq!(
        (net(&a, "a"), net(&a, "b"), net(&a, "bank")),
        (150_000, 50_000, -200_000)
    );
}

/// P217/2007 T.II S.I r.55, r.57: banco avec la table at least half the bank, not twice running.
#[test]
fn r55_r57_banco_avec_la_table() {
    let bets = vec![Bet::new("a", "banco_avec_la_table", 90_000).seat(3)];
    let a = run(
        &t(),
        &coup(bets, "p:7S b:2D p:KC b:4S", call("nao"), "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_BANCO_AVEC_LA_TABLE_UNDER_HALF"]);
    let mut st = BaccaratState::default();
    let bets = vec![
        Bet::new("a", "banco_avec_la_table", 100_000).seat(3),
        Bet::new("b", "ponto", 100_000).seat(4),
    ];
    let a = run_state(
        &t(),
        &mut st,
        &coup(bets.clone(), "p:7S b:9D p:KC b:KS", call("nao"), "", vec![]),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let mut ev = vec![bet_at("bank", "bank", 400_000, 1)];
    ev.push(bet_full(
        Bet::new("a", "banco_avec_la_table", 200_000).seat(3),
    ));
    ev.push(nmb());
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    let a = run_state(&t(), &mut st, &round(ev));
    assert!(has(&a, "CF_BANCO_PRIORITY"));
}

/// P217/2007 T.II S.I r.48-r.50: banco priority from the banker's right; banco before
/// association.
#[test]
fn r48_banco_priority() {
    let mut ev = vec![
        bet_at("bank", "bank", 200_000, 1),
        decide(5, "banco"),
        decide(2, "banco"),
        bet_at("b", "banco", 200_000, 5),
        nmb(),
    ];
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    let a = run(&t(), &round(ev));
    assert_eq!(codes(&a), vec!["CF_BANCO_PRIORITY"]);
    let mut ev = vec![
        bet_at("bank", "bank", 100_000, 1),
        bet_full(Bet::new("as", "associate", 100_000).seat(4)),
        decide(5, "banco"),
        bet_at("p", "ponto", 100_000, 5),
        nmb(),
    ];
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    let a = run(&t(), &round(ev));
    assert!(has(&a, "CF_BANCO_PRIORITY"));
}

/// P217/2007 T.II S.I r.59: pooling bets to get the cards is forbidden.
#[test]
fn r59_pooled_bets() {
    let bets = vec![
        Bet::new("a", "ponto", 50_000).seat(3),
        Bet::new("b", "ponto", 50_000).seat(4).on_bet("a"),
    ];
    let a = run(
        &t(),
        &coup(bets, "p:7S b:2D p:KC b:4S", call("nao"), "", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_POOLED_BETS"]);
}

/// P217/2007 T.II S.I r.31: the associate adds an equal amount and shares equally.
#[test]
fn r31_associate() {
    let mut ev = vec![
        bet_at("bank", "bank", 100_000, 1),
        bet_full(Bet::new("as", "associate", 100_000).seat(4).on_bet("bank")),
        bet_at("p", "ponto", 150_001, 3),
        nmb(),
    ];
    ev.extend(cards("p:7S b:9D p:KC b:KS"));
    let a = run(&t(), &round(ev));
    assert_eq!(net(&a, "bank") + net(&a, "as"), 150_001);
    assert_eq!((net(&a, "bank"), net(&a, "as")), (75_001, 75_000));
    let mut ev = vec![
        bet_at("bank", "bank", 100_000, 1),
        bet_full(Bet::new("as", "associate", 50_000).seat(4)),
        bet_at("p", "ponto", 100_000, 3),
        nmb(),
    ];
    ev.extend(cards("p:7S b:9D p:KC b:KS"));
    assert!(has(&run(&t(), &round(ev)), "CF_ASSOCIATE_IRREGULAR"));
}

/// P217/2007 T.II S.I r.47: the cagnotte reported apart from the nets.
#[test]
fn r47_cagnotte() {
    let tt = set(t(), "cagnotte_bp", Setting::Int(500));
    let mut r = coup(
        ponto(100_000),
        "p:7S b:9D p:KC b:KS",
        call("nao"),
        "",
        vec![],
    );
    r.settlement = Some(rules_core::Settlement {
        void: false,
        results: vec![],
        house_cents: Some(4000),
    });
    let a = run(&tt, &r);
    assert_eq!(a.house.len(), 1);
    assert_eq!(a.house[0].amount_cents, 5000);
    assert_eq!(
        net(&a, "bank"),
        100_000,
        "the bank's net leaves the cagnotte out"
    );
    assert!(has(&a, "CF_WRONG_PAYOUT"));
}

/// P217/2007 T.II S.I r.47: a cagnotte only on what the bank wins, and only where the table
/// takes one.
#[test]
fn r47_no_cagnotte_when_the_bank_loses_or_the_table_takes_none() {
    let ponto_wins = coup(
        ponto(100_000),
        "p:7S b:2D p:KC b:4S",
        call("nao"),
        "",
        vec![],
    );
    let with_cagnotte = set(t(), "cagnotte_bp", Setting::Int(500));
    let a = run(&with_cagnotte, &ponto_wins);
    assert_eq!(net(&a, "p"), 100_000);
    assert!(a.house.is_empty(), "{:?}", a.house);
    let bank_wins = coup(
        ponto(100_000),
        "p:7S b:9D p:KC b:KS",
        call("nao"),
        "",
        vec![],
    );
    let a = run(&t(), &bank_wins);
    assert_eq!(net(&a, "bank"), 100_000);
    assert!(a.house.is_empty(), "{:?}", a.house);
}

/// P217/2007 T.II S.I r.16: at least four seated players.
#[test]
fn r16_too_few_seated() {
    let mut ev = vec![role("seated", 1), role("seated", 3), role("seated", 5)];
    ev.extend(
        coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:4S",
            call("nao"),
            "",
            vec![],
        )
        .events
        .into_iter()
        .map(|e| e.kind),
    );
    let a = run(&t(), &round(ev));
    assert_eq!(codes(&a), vec!["CF_TOO_FEW_SEATED"]);
}

/// P217/2007 T.II S.I r.14: no coup after the warning-card coup without a reshuffle.
#[test]
fn r14_coup_after_last_of_shoe() {
    let mut st = BaccaratState::default();
    let last = coup(
        ponto(100_000),
        "p:7S b:2D p:KC b:4S",
        call("nao"),
        "",
        vec![proc_("warning_card")],
    );
    run_state(&t(), &mut st, &last);
    let mut ev = vec![
        bet_at("bank", "bank", 200_000, 1),
        bet_at("p", "ponto", 100_000, 3),
        nmb(),
    ];
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    let a = run_state(&t(), &mut st, &round(ev));
    assert!(has(&a, "CF_COUP_AFTER_LAST_OF_SHOE"));
}

/// P217/2007 T.II S.I r.82-r.85, r.87: the auction goes to the highest bid.
#[test]
fn r83_auction_award() {
    let mut st = BaccaratState::default();
    let mut ev = coup(
        ponto(100_000),
        "p:7S b:9D p:KC b:KS",
        call("nao"),
        "",
        vec![decide(1, "pass_hand")],
    )
    .events
    .into_iter()
    .map(|e| e.kind)
    .collect::<Vec<_>>();
    let _ = &mut ev;
    run_state(&t(), &mut st, &round(ev));
    let mut ev = vec![
        proc_("auction"),
        decide_amount(4, "bid", 200_000),
        decide_amount(5, "bid", 300_000),
    ];
    ev.push(bet_at("bank", "bank", 200_000, 4));
    ev.push(bet_at("p", "ponto", 100_000, 3));
    ev.push(nmb());
    ev.extend(cards("p:7S b:2D p:KC b:4S"));
    let a = run_state(&t(), &mut st, &round(ev));
    assert_eq!(codes(&a), vec!["CF_AUCTION_AWARD"]);
}

/// P217/2007 T.II S.I r.29: the first hand goes to the first seated player on the dealer's
/// right; r.92 a seat changer lets the hand pass once.
#[test]
fn r29_r92_hand_order() {
    let mut ev = vec![
        role("seated", 2),
        role("seated", 3),
        role("seated", 5),
        role("seated", 7),
    ];
    ev.extend(
        coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:4S",
            call("nao"),
            "",
            vec![],
        )
        .events
        .into_iter()
        .map(|e| e.kind),
    );
    let a = run(&t(), &round(ev));
    assert_eq!(codes(&a), vec!["CF_HAND_ORDER"]);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.29");
}

// ---------------------------------------------------------------- records that make no sense

#[test]
fn round_errors() {
    let e = run_err(
        &t(),
        &round(cat(vec![
            vec![bet_at("p", "ponto", 1000, 3), nmb()],
            cards("p:7S b:2D p:KC b:4S"),
        ])),
    );
    assert!(e.to_string().contains("no bank"), "{e}");
    let e = run_err(
        &t(),
        &coup(ponto(100_000), "p:7S b:2D p:KC", call("nao"), "", vec![]),
    );
    assert!(e.to_string().contains("incomplete"), "{e}");
    let e = run_err(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:4S",
            vec![fault("CF_NOT_A_FAULT")],
            "",
            vec![],
        ),
    );
    assert!(e.to_string().contains("CF_NOT_A_FAULT"), "{e}");
    let e = run_err(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:4S",
            vec![decide(3, "hit")],
            "",
            vec![],
        ),
    );
    assert!(e.to_string().contains("hit"), "{e}");
    let e = run_err(
        &t(),
        &coup(
            vec![Bet::new("p", "ponto", 1000).seat(12)],
            "p:7S b:2D p:KC b:4S",
            vec![],
            "",
            vec![],
        ),
    );
    assert!(e.to_string().contains("seat 12"), "{e}");
}

// ------------------------------------- neutral facts: the engine finds the fault (issue 38)

/// P217/2007 T.II S.I r.106(b) found from the dealer's spoken call (`procedure dealer_call`), no
/// fault declared: "Se o pagador anunciar, por engano, «carta», quando o ponto tenha dito
/// «não», o golpe será restabelecido de acordo com a tabela".
#[test]
fn r106b_false_carta_found_from_the_dealers_call() {
    let mut ev = call("nao");
    ev.push(proc_v("dealer_call", "carta"));
    // Ponto 6 stands; the dealer calls carta; the 7C goes to the banker on 6: burned, 6 v 6.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2H b:KD p:4C b:6S",
            ev.clone(),
            "b:7C",
            vec![],
        ),
    );
    assert_eq!(
        codes(&a),
        vec!["CF_DEALER_FALSE_CARTA"],
        "{:?}",
        a.violations
    );
    assert_eq!(a.violations[0].confidence, Confidence::Certain);
    assert_eq!(a.violations[0].citation, "P217/2007 T.II S.I r.106(b)");
    assert_eq!(net(&a, "p"), 0);
    // Banker on 3: the card is his (0); ponto 6 wins.
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:2H b:KD p:4C b:3S", ev, "b:7C", vec![]),
    );
    assert_eq!(codes(&a), vec!["CF_DEALER_FALSE_CARTA"]);
    assert_eq!(net(&a, "p"), 100_000);
    // Without the dealer's call the card is the banker's own draw on 6: his false draw.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:2H b:KD p:4C b:6S",
            call("nao"),
            "b:7C",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_BANKER_FALSE_DRAW"]);
    // The dealer calling carta for a ponto who asked for it is his job.
    let mut ev = call("carta");
    ev.push(proc_v("dealer_call", "carta"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:2H b:KD p:3C b:6S", ev, "p:2D", vec![]),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// P217/2007 T.II S.I r.106(a) found from the cards as recorded, no fault declared: "As cartas
/// que saiam a descoberto do sabot serão queimadas". A deal card recorded face up is burned and
/// the coup rebuilt; a card burned face up changes nothing.
#[test]
fn r106a_exposed_card_found_from_the_record() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D pu:KC b:4S",
            call("nao"),
            "p:3H b:9C",
            vec![],
        ),
    );
    assert!(has(&a, "CF_DEALER_EXPOSED_CARD"), "{:?}", a.violations);
    assert_eq!(net(&a, "p"), -100_000);
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S xu:QD b:2D p:KC b:3S",
            call("nao"),
            "b:AH",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_DEALER_EXPOSED_CARD"]);
    assert_eq!(a.violations[0].severity, Severity::Low);
}

/// P217/2007 T.II S.I r.104(f) found from a card left on the table in the deal (recipient
/// `board`), no fault declared: "esta será atribuída ao ponto, se ele pedir carta, mas, se vier
/// a dizer «não», ela será atribuída obrigatoriamente ao banqueiro".
#[test]
fn r104f_fifth_card_left_on_the_table() {
    // Ponto 7 says não: the 2H is the banker's: 9 + 0 + 2 = 1; the ponto wins.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:9D p:KC b:KS t:2H",
            call("nao"),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_FIFTH_CARD_IN_DEAL"]);
    assert_eq!(net(&a, "p"), 100_000);
    // Ponto 3 calls carta: the 2H is his: 5; the banker's 7 wins.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:3S b:7D p:KC b:KS t:2H",
            call("carta"),
            "",
            vec![],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_FIFTH_CARD_IN_DEAL"]);
    assert_eq!(net(&a, "p"), -100_000);
    // A card left on the table after the deal makes no sense: a record error.
    let e = run_err(
        &t(),
        &coup(
            ponto(100_000),
            "p:3S b:7D p:KC b:KS",
            call("carta"),
            "t:2H",
            vec![],
        ),
    );
    assert!(e.to_string().contains("r.104(f)"), "{e}");
}

/// P217/2007 T.II S.I r.75 found from who put cards in the discard (`procedure
/// cards_to_discard`) and when the scores were announced (`procedure scores_announced`): "O
/// banqueiro ou ponto que deitem no depósito uma ou mais cartas [...] perderá a jogada. Se a
/// falta for cometida pelo pagador (lançando as cartas no depósito antes de exibidas e
/// anunciadas as pontuações), o golpe será anulado."
#[test]
fn r75_discards_found_from_the_record() {
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:9D p:KC b:KS",
            call("nao"),
            "",
            vec![proc_v("cards_to_discard", "banker")],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_CARDS_DISCARDED_BY_PLAYER"]);
    assert_eq!(net(&a, "p"), 100_000);
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:7S b:2D p:KC b:KS",
            call("nao"),
            "",
            vec![proc_v("cards_to_discard", "ponto")],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_CARDS_DISCARDED_BY_PLAYER"]);
    assert_eq!(net(&a, "p"), -100_000);
    // The dealer before the scores were announced: annulled.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:6S b:7D p:KC b:KS",
            call("nao"),
            "",
            vec![proc_v("cards_to_discard", "dealer")],
        ),
    );
    assert_eq!(codes(&a), vec!["CF_CARDS_DISCARDED_BY_DEALER"]);
    assert!(a.void.is_some());
    // After the scores were shown and announced: the end of an honest coup.
    let a = run(
        &t(),
        &coup(
            ponto(100_000),
            "p:6S b:7D p:KC b:KS",
            call("nao"),
            "",
            vec![
                proc_("scores_announced"),
                proc_v("cards_to_discard", "dealer"),
            ],
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "p"), -100_000);
}

/// P217/2007 T.II S.I r.104(b) found from who turned a ponto card (`procedure
/// ponto_card_turned`): "Se na distribuição o banqueiro voltar uma ou as duas cartas do ponto,
/// o banqueiro fica obrigado a jogar segundo a tabela, tirando carta nos dois casos em que tal
/// é, normalmente, facultativo".
#[test]
fn r104b_ponto_card_turned_by_the_banker() {
    let mut ev = vec![proc_v("ponto_card_turned", "banker")];
    ev.extend(call("carta"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:2S b:4D p:3C b:AS", ev, "p:4H", vec![]),
    );
    assert_eq!(
        codes(&a),
        vec!["CF_BANKER_EXPOSED_PONTO_CARD", "CF_OPTION_USED_WHEN_FORCED"]
    );
    // Turned by the ponto himself: the banker keeps his option.
    let mut ev = vec![proc_v("ponto_card_turned", "ponto")];
    ev.extend(call("carta"));
    let a = run(
        &t(),
        &coup(ponto(100_000), "p:2S b:4D p:3C b:AS", ev, "p:4H", vec![]),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// Each bet's settlement as (outcome, stake in play, due net, reason, citation).
fn settled(a: &rules_core::Adjudication, id: &str) -> (Outcome, i64, i64, String, String) {
    let b = a.bet(id).unwrap();
    (
        b.outcome,
        b.stake_cents,
        b.due_net_cents,
        b.reason.to_string(),
        b.citation.to_string(),
    )
}

/// P217/2007 T.II S.I r.45, r.58, r.40, r.2, r.76: the bank covers the bancos first, then the
/// pontos in the order placed, up to its capital; a bet it does not reach is not in play; a bet
/// withdrawn before "nada mais" or placed after it is withdrawn; the covered stakes are paid or
/// collected 1 to 1 and the bank's net is minus the punters'; equal scores are a null coup.
#[test]
fn r45_r58_r40_each_bet_settled_by_what_the_bank_covers() {
    // Bank 2,000 €: a (1,500 €) covered in full, b (1,000 €) for 500 €, c (500 €) not at all;
    // w withdrawn, l late.
    let coup_of = |deal: &str| {
        let mut ev = vec![
            bet_at("bank", "bank", 200_000, 1),
            bet_at("a", "ponto", 150_000, 3),
            bet_at("b", "ponto", 100_000, 4),
            bet_at("w", "ponto", 50_000, 6),
            bet_at("c", "ponto", 50_000, 5),
            EventKind::BetWithdrawn { bet_id: "w".into() },
            nmb(),
            bet_at("l", "ponto", 50_000, 7),
        ];
        ev.extend(cards(deal));
        ev.push(decide(3, "nao"));
        round(ev)
    };
    let won = (
        Outcome::Won,
        "the ponto won: paid 1 to 1",
        "P217/2007 T.II S.I r.2",
    );
    let lost = (Outcome::Lost, "the banker won", "P217/2007 T.II S.I r.2");
    let bank = "the bank pays or collects the covered stakes";
    let uncovered = (
        Outcome::Push,
        0,
        0,
        "not covered by the bank".to_string(),
        "P217/2007 T.II S.I r.45".to_string(),
    );
    let withdrawn = |reason: &str| {
        (
            Outcome::Withdrawn,
            0,
            0,
            reason.to_string(),
            "P217/2007 T.II S.I r.40".to_string(),
        )
    };
    let full = |o: (Outcome, &str, &str), stake: i64, net: i64| {
        (o.0, stake, net, o.1.to_string(), o.2.to_string())
    };

    // The ponto wins (7 against the banker's 6).
    let a = run(&t(), &coup_of("p:7S b:2D p:KC b:4S"));
    assert_eq!(settled(&a, "a"), full(won, 150_000, 150_000));
    assert_eq!(settled(&a, "b"), full(won, 50_000, 50_000));
    assert_eq!(settled(&a, "c"), uncovered);
    assert_eq!(
        settled(&a, "w"),
        withdrawn("withdrawn before \"nada mais\"")
    );
    assert_eq!(
        settled(&a, "l"),
        withdrawn("placed after \"nada mais\": withdrawn")
    );
    assert_eq!(
        settled(&a, "bank"),
        (
            Outcome::Lost,
            200_000,
            -200_000,
            bank.to_string(),
            "P217/2007 T.II S.I r.45".to_string()
        )
    );

    // The banker wins (9 against 7).
    let a = run(&t(), &coup_of("p:7S b:9D p:KC b:KS"));
    assert_eq!(settled(&a, "a"), full(lost, 150_000, -150_000));
    assert_eq!(settled(&a, "b"), full(lost, 50_000, -50_000));
    assert_eq!(settled(&a, "c"), uncovered);
    assert_eq!(settled(&a, "l").0, Outcome::Withdrawn);
    assert_eq!(settled(&a, "bank").0, Outcome::Won);
    assert_eq!(settled(&a, "bank").2, 200_000);

    // Equal scores: a null coup, every bet in play pushed.
    let a = run(&t(), &coup_of("p:7S b:7D p:KC b:KS"));
    let null = |stake: i64| {
        (
            Outcome::Push,
            stake,
            0,
            "equal scores: null coup".to_string(),
            "P217/2007 T.II S.I r.76".to_string(),
        )
    };
    assert_eq!(settled(&a, "a"), null(150_000));
    assert_eq!(settled(&a, "b"), null(50_000));
    assert_eq!(settled(&a, "c"), null(0));
    assert_eq!(settled(&a, "bank"), null(200_000));
    assert_eq!(settled(&a, "w").0, Outcome::Withdrawn);
}

/// P217/2007 T.II S.I r.45: a banco is covered before the pontos placed ahead of it.
#[test]
fn r45_bancos_are_covered_first() {
    let mut ev = vec![
        bet_at("bank", "bank", 200_000, 1),
        bet_at("a", "ponto", 150_000, 3),
        bet_full(Bet::new("t", "banco_avec_la_table", 100_000).seat(4)),
        nmb(),
    ];
    ev.extend(cards("p:7S b:9D p:KC b:KS"));
    let a = run(&t(), &round(ev));
    assert_eq!(
        (settled(&a, "t").1, settled(&a, "a").1),
        (100_000, 100_000),
        "the banco in full, the ponto for what is left"
    );
    assert_eq!(
        (net(&a, "t"), net(&a, "a"), net(&a, "bank")),
        (-100_000, -100_000, 200_000)
    );
}

/// P217/2007 T.II S.I r.31: the associate's share of the bank's result is in proportion to
/// what each put in, rounded toward zero for the associate; the bank takes the rest.
#[test]
fn r31_the_associate_shares_in_proportion() {
    let coup_with = |deal: &str, call: Vec<EventKind>| {
        let mut ev = vec![
            bet_at("bank", "bank", 100_000, 1),
            bet_full(Bet::new("as", "associate", 100_000).seat(4).on_bet("bank")),
            bet_at("p", "ponto", 150_001, 3),
            nmb(),
        ];
        ev.extend(cards(deal));
        ev.extend(call);
        round(ev)
    };
    // The banker wins 150,001 (the bank's and the associate's 200,000 cover it).
    let a = run(&t(), &coup_with("p:7S b:9D p:KC b:KS", vec![]));
    assert_eq!(
        (net(&a, "p"), net(&a, "bank"), net(&a, "as")),
        (-150_001, 75_001, 75_000)
    );
    assert_eq!(
        settled(&a, "as").3,
        "the associate's equal share of the bank's result"
    );
    assert_eq!(settled(&a, "as").4, "P217/2007 T.II S.I r.31");
    // The ponto wins: the bank pays, the associate's share rounded toward zero.
    let a = run(&t(), &coup_with("p:7S b:2D p:KC b:4S", call("nao")));
    assert_eq!(
        (net(&a, "p"), net(&a, "bank"), net(&a, "as")),
        (150_001, -75_001, -75_000)
    );
}
