//! Every check of the digest's "What an auditor can check" table (poker-sem-descarte.md
//! section 8), each triggered at least once; rule tests name their citation.

mod common;
use common::*;
#[allow(dead_code)]
mod examples_support {
    include!("support.rs");
}
use examples_support::deal;
use rules_core::{Adjudication, Confidence, Engine, Outcome};
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdState};

const P217: &str = r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000}"#;
const P461: &str = r#"{"game":"poker_sem_descarte","regulation":"P461/2001","min_bet_cents":1000,"max_bet_cents":25000,
  "jackpot":{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000}}"#;
const JP217: &str = r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"settings":{"prize_cap_cents":10000},
  "jackpot":{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":1000000,
  "paytable":[{"combination":"royal_flush","award":{"kind":"whole"}},{"combination":"flush","award":{"kind":"multiple","times":50}}]}}"#;
const SHUF: &str = r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"settings":{"shuffler":true}}"#;

fn run(t: &str, s: &str) -> Adjudication {
    let cfg = PokerSemDescarteEngine::configure(&table(t)).unwrap();
    PokerSemDescarteEngine::adjudicate(&cfg.config, &mut PsdState::default(), &round(s), &explain())
        .unwrap()
}

fn config_codes(t: &str) -> Vec<String> {
    PokerSemDescarteEngine::configure(&table(t))
        .unwrap()
        .violations
        .iter()
        .map(|v| v.code.to_string())
        .collect()
}

/// One seat against the bank: seat 1 holds `p`, the bank `b`; the player calls.
fn one(p: &str, b: &str) -> String {
    format!(
        "bet a1 ante 1 1000; nmb; {} bet c1 call 1 2000 on=a1;",
        deal(&[(1, p)], b)
    )
}

const ALL: &[&str] = &[
    "PSD_DUPLICATE_CARD",
    "PSD_TOO_MANY_PLAYERS",
    "PSD_MULTIPLE_BOXES",
    "PSD_ANTE_BELOW_MIN",
    "PSD_ANTE_ABOVE_MAX",
    "PSD_TABLE_MAX_OVER_25X_MIN",
    "PSD_LATE_BET",
    "PSD_JACKPOT_BET_LATE",
    "PSD_JACKPOT_WITHOUT_ANTE",
    "PSD_JACKPOT_WRONG_AMOUNT",
    "PSD_JACKPOT_DISPLAY_MISMATCH",
    "PSD_JACKPOT_START_BELOW_MIN",
    "PSD_DEAL_ORDER",
    "PSD_CUT_WITH_SHUFFLER",
    "PSD_CALL_NOT_DOUBLE_ANTE",
    "PSD_PASS_REVERSED",
    "PSD_PLAYER_EXPOSED_CARDS",
    "PSD_MISDEAL",
    "PSD_VOID_ROUND_SETTLED",
    "PSD_DEALER_CARD_EXPOSED_EARLY",
    "PSD_WRONG_PAYOUT",
    "PSD_PRIZE_CAP_EXCEEDED",
];

type Scenario = fn() -> Vec<String>;
const SCENARIOS: &[Scenario] = &[
    || config_codes(r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":30000}"#),
    || {
        config_codes(
            r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"jackpot":{"bet_amount_cents":100,"increment_bp":8000,"start_value_cents":100000,"paytable":[{"combination":"flush","award":{"kind":"multiple","times":50}}]}}"#,
        )
    },
    || codes(&run(P217, &one("AS KS 9D 7C 2H", "AS QD TD 8C 3S"))),
    || {
        codes(&run(
            r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"seats":2}"#,
            &three_players(),
        ))
    },
    || codes(&run(P217, &limits())),
    || codes(&run(JP217, &jackpot_chips())),
    || {
        codes(&run(
            SHUF,
            &format!("proc cut; {}", one("AS KS 9D 7C 2H", "QS QD TD 8C 3S")),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "bet a1 ante 1 1000; {} dec 1 pass; bet c1 call 1 3000 on=a1",
                deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "{} fault player_exposed_cards seat=1",
                one("AS KS 9D 7C 2H", "QS QD TD 8C 3S")
            ),
        ))
    },
    || {
        codes(&run(
            P217,
            "bet a1 ante 1 1000; card seat:1 AS; card dealer QS down; card seat:1 KS; card dealer QD down; bet c1 call 1 2000 on=a1; settle a1 1000; settle c1 2000",
        ))
    },
    || {
        codes(&run(
            P217,
            &format!(
                "bet a1 ante 1 1000; {} bet c1 call 1 2000 on=a1",
                deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
                    .replacen("card dealer QD down", "card dealer QD", 1)
                    .replacen("card dealer 3S;", "card dealer 3S down;", 1)
            ),
        ))
    },
    || {
        run(
            P217,
            &format!(
                "{} settle a1 0; settle c1 0",
                one("AS KS 9D 7C 2H", "QS QD TD 8C 3S")
            ),
        )
        .discrepancies
        .iter()
        .map(|d| d.code.to_string())
        .collect()
    },
    || codes(&run(P217, &deal_order())),
];

fn three_players() -> String {
    format!(
        "bet a1 ante 1 1000 player=P; bet a2 ante 2 1000 player=P; bet a3 ante 3 1000; {} bet c1 call 1 2000 on=a1; bet c2 call 2 2000 on=a2; bet c3 call 3 2000 on=a3",
        deal(
            &[
                (1, "2C 3C 4D 9H JS"),
                (2, "2D 3D 4H 9S JC"),
                (3, "2H 3H 4S 9C JD")
            ],
            "AS KS 7C 7D 8H"
        )
    )
}

fn limits() -> String {
    format!(
        "bet a1 ante 1 500; bet a2 ante 2 30000; nmb; bet a3 ante 3 1000; {} bet c1 call 1 1500 on=a1; bet c2 call 2 60000 on=a2; bet c3 call 3 2000 on=a3",
        deal(
            &[
                (1, "2C 3C 4D 9H JS"),
                (2, "2D 3D 4H 9S JC"),
                (3, "2H 3H 4S 9C JD")
            ],
            "AS KS 7C 7D 8H"
        )
    )
}

fn jackpot_chips() -> String {
    format!(
        "jackpot 1000000; bet a1 ante 1 1000; bet a2 ante 2 1000; bet j1 jackpot 1 150; bet j5 jackpot 5 100; nmb; bet j2 jackpot 1 100 chips=1; display 999; {} bet c1 call 1 2000 on=a1; dec 2 pass",
        deal(
            &[(1, "AS KS 9S 7S 2S"), (2, "2D 3D 4H 9D JC")],
            "QS QD TD 8C 3C"
        )
    )
}

fn deal_order() -> String {
    // The bank's card dealt before seat 2's in the first round.
    let d = deal(
        &[(1, "2C 3C 4D 9H JS"), (2, "2D 3D 4H 9S JC")],
        "AS KS 7C 7D 8H",
    );
    let d = d.replacen(
        "card seat:2 2D down;card dealer AS down;",
        "card dealer AS down;card seat:2 2D down;",
        1,
    );
    format!(
        "bet a1 ante 1 1000; bet a2 ante 2 1000; {d} bet c1 call 1 2000 on=a1; bet c2 call 2 2000 on=a2"
    )
}

/// Every code of the table is produced by the scenarios.
#[test]
fn every_code_is_triggered() {
    let mut seen: Vec<String> = Vec::new();
    for f in SCENARIOS {
        seen.extend(f());
    }
    for code in ALL {
        assert!(
            seen.iter().any(|s| s == code),
            "{code} never triggered: {seen:?}"
        );
    }
}

/// r.1: one deck: a card twice is flagged.
#[test]
fn r1_duplicate_card() {
    let a = run(P217, &one("AS KS 9D 7C 2H", "AS QD TD 8C 3S"));
    assert!(a.has_violation("PSD_DUPLICATE_CARD"));
}

/// r.5: at most 7 players and no more than the boxes; one box per player.
#[test]
fn r5_players_and_boxes() {
    let a = run(
        r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"seats":2}"#,
        &three_players(),
    );
    assert!(a.has_violation("PSD_TOO_MANY_PLAYERS") && a.has_violation("PSD_MULTIPLE_BOXES"));
}

/// r.13, r.14, r.16, r.17: limits, late ante, call amount (settled as played).
#[test]
fn r13_r17_limits() {
    let a = run(P217, &limits());
    for c in [
        "PSD_ANTE_BELOW_MIN",
        "PSD_ANTE_ABOVE_MAX",
        "PSD_LATE_BET",
        "PSD_CALL_NOT_DOUBLE_ANTE",
    ] {
        assert!(a.has_violation(c), "{c}");
    }
    // Bank AK qualifies with high cards; the three jack-high players lose to it.
    assert_eq!(net(&a, "c2"), -60_000);
    assert_eq!(
        config_codes(r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":30000}"#),
        vec!["PSD_TABLE_MAX_OVER_25X_MIN"]
    );
}

/// r.3, r.4, r.8, r.16: jackpot chips; P217 needs an ante (chip returned), the wrong amount and
/// late chips are settled as played; the display is checked; r.15 the bank's cap.
#[test]
fn r8_r16_jackpot_chips_and_cap() {
    let a = run(JP217, &jackpot_chips());
    for c in [
        "PSD_JACKPOT_WRONG_AMOUNT",
        "PSD_JACKPOT_WITHOUT_ANTE",
        "PSD_JACKPOT_BET_LATE",
        "PSD_JACKPOT_DISPLAY_MISMATCH",
    ] {
        assert!(a.has_violation(c), "{c}");
    }
    assert_eq!(net(&a, "j5"), 0);
    assert_eq!(a.bet("j5").unwrap().outcome, Outcome::Withdrawn);
    // Seat 1's flush wins 50 x 100 on each of its two chips (the late and the wrong-amount
    // chip are settled as played): P217 r.12(c) divides the line between them.
    assert_eq!(net(&a, "j1"), 2500 - 150);
    assert_eq!(net(&a, "j2"), 2500 - 100);
    // Flush beats the pair of queens: call 5 x 2000 = 10,000, ante 1,000: 11,000 > cap 10,000.
    assert!(a.has_violation("PSD_PRIZE_CAP_EXCEEDED"));
    // P461: no ante requirement.
    let s = format!(
        "bet a1 ante 1 1000; bet j2 jackpot 2 100; nmb; {} bet c1 call 1 2000 on=a1",
        deal(&[(1, "AS KS 9S 7S 2S")], "QS QD TD 8C 3C")
    );
    let a = run(P461, &s);
    assert!(!a.has_violation("PSD_JACKPOT_WITHOUT_ANTE"));
}

/// r.16: deal patterns; shuffler: five at a time, no cut.
#[test]
fn r16_deal_patterns() {
    assert!(run(P217, &deal_order()).has_violation("PSD_DEAL_ORDER"));
    let a = run(
        SHUF,
        &format!("proc cut; {}", one("AS KS 9D 7C 2H", "QS QD TD 8C 3S")),
    );
    assert!(a.has_violation("PSD_CUT_WITH_SHUFFLER") && a.has_violation("PSD_DEAL_ORDER"));
    let five = "bet a1 ante 1 1000; bet a2 ante 2 1000; card seat:1 AS down; card seat:1 KS down; card seat:1 9D down; card seat:1 7C down; card seat:1 2H down;
                card seat:2 2C down; card seat:2 3C down; card seat:2 4D down; card seat:2 9H down; card seat:2 JS down;
                card dealer QS down; card dealer QD down; card dealer TD down; card dealer 8C down; card dealer 3S;
                bet c1 call 1 2000 on=a1; dec 2 pass";
    let a = run(SHUF, five);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(run(P217, five).has_violation("PSD_DEAL_ORDER"));
}

/// P217/2007 T.I C.III S.II r.16 ("Também antes da distribuição das cartas, os jogadores devem
/// colocar as suas apostas iniciais"): an ante placed after the deal began is PSD_LATE_BET; if
/// the cards then follow r.16's order exactly with that seat in it (its turn had not passed),
/// that is not also a PSD_DEAL_ORDER. If its turn had passed, the order is broken as well.
#[test]
fn r16_late_ante_dealt_in_order_is_one_finding() {
    let d = deal(
        &[(1, "2C 3C 4D 9H JS"), (2, "2D 3D 4H 9S JC")],
        "AS KS 7C 7D 8H",
    );
    // Seat 2's ante comes after seat 1's first card, before its own.
    let late = d.replacen(
        "card seat:1 2C down;",
        "card seat:1 2C down;bet a2 ante 2 1000;",
        1,
    );
    let s =
        format!("bet a1 ante 1 1000; {late} bet c1 call 1 2000 on=a1; bet c2 call 2 2000 on=a2");
    let a = run(P217, &s);
    assert_eq!(codes(&a), vec!["PSD_LATE_BET"], "{:?}", a.violations);
    // Placed after the bank's first card: seat 2's turn had passed.
    let passed = d.replacen(
        "card dealer AS down;",
        "card dealer AS down;bet a2 ante 2 1000;",
        1,
    );
    let s =
        format!("bet a1 ante 1 1000; {passed} bet c1 call 1 2000 on=a1; bet c2 call 2 2000 on=a2");
    let a = run(P217, &s);
    assert!(a.has_violation("PSD_LATE_BET") && a.has_violation("PSD_DEAL_ORDER"));
}

/// r.17: passing is irreversible; exposed cards forfeit the bet.
#[test]
fn r17_pass_and_forfeit() {
    let a = run(
        P217,
        &format!(
            "bet a1 ante 1 1000; {} dec 1 pass; bet c1 call 1 3000 on=a1",
            deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
        ),
    );
    assert!(a.has_violation("PSD_PASS_REVERSED"));
    assert_eq!(net(&a, "a1"), -1000);
    assert_eq!(net(&a, "c1"), 0);
    let a = run(
        P217,
        &format!(
            "{} fault player_exposed_cards seat=1",
            one("AS AD 9D 7C 2H", "QS QD TD 8C 3S")
        ),
    );
    assert!(a.has_violation("PSD_PLAYER_EXPOSED_CARDS"));
    assert_eq!(net(&a, "a1"), -1000);
    assert_eq!(net(&a, "c1"), -2000);
    assert_eq!(a.bet("c1").unwrap().outcome, Outcome::Forfeited);
}

/// r.19: misdeal voids the round; the dealer's own early card does not.
#[test]
fn r19_misdeal_and_early_dealer_card() {
    let a = run(
        P217,
        "bet a1 ante 1 1000; card seat:1 AS; card dealer QS down; card seat:1 KS; card dealer QD down; bet c1 call 1 2000 on=a1; settle a1 1000; settle c1 2000",
    );
    assert!(a.has_violation("PSD_MISDEAL") && a.has_violation("PSD_VOID_ROUND_SETTLED"));
    assert!(a.void.is_some());
    assert_eq!(net(&a, "a1"), 0);
    // One breach, one finding (issue 38; rules-core): no PSD_WRONG_PAYOUT for the same bets.
    assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
    let s = format!(
        "bet a1 ante 1 1000; {} bet c1 call 1 2000 on=a1",
        deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
            .replacen("card dealer QD down", "card dealer QD", 1)
            .replacen("card dealer 3S;", "card dealer 3S down;", 1)
    );
    let a = run(P217, &s);
    assert_eq!(codes(&a), vec!["PSD_DEALER_CARD_EXPOSED_EARLY"]);
    assert!(
        a.violations[0]
            .message
            .starts_with("the dealer turned up his card 2 before the last"),
        "{}",
        a.violations[0].message
    );
    assert!(a.void.is_none());
    assert_eq!(net(&a, "c1"), -2000);
}

/// r.6 last paragraph, r.7: a tie keeps the bets; a result decided on a reading is reviewed
/// when disputed.
#[test]
fn r6_r7_ties_and_readings() {
    let a = run(P217, &one("AH KD 7C 4S 2H", "AC KH 7D 4D 2C"));
    assert_eq!(net(&a, "a1"), 0);
    assert_eq!(net(&a, "c1"), 0);
    // Pair of nines, second kicker decides (reading 10.5).
    let a = run(
        P217,
        &format!(
            "{} settle a1 -1000; settle c1 -2000",
            one("9S 9H KD 4C 2S", "9D 9C KH 3S 2D")
        ),
    );
    assert_eq!(net(&a, "c1"), 2000);
    let v = a
        .violations
        .iter()
        .find(|v| v.code == "PSD_WRONG_PAYOUT")
        .unwrap();
    assert_eq!(v.confidence, Confidence::Review);
    assert_eq!(a.discrepancies.len(), 2);
}

/// The settlement check.
#[test]
fn wrong_payout() {
    let a = run(
        P217,
        &format!(
            "{} settle a1 0; settle c1 0",
            one("AS KS 9D 7C 2H", "QS QD TD 8C 3S")
        ),
    );
    assert_eq!(a.discrepancies.len(), 2);
    assert!(a.discrepancies.iter().all(|d| d.code == "PSD_WRONG_PAYOUT"));
}

/// r.6(j), reading 10.4: equal high cards; three of one suit wins (default), or a tie when the
/// table reads "cor" as colour.
#[test]
fn r6j_high_card_tie_break_setting() {
    // Bank A-K high qualifies; the player must hold A-K too for the tie-break to matter.
    let s = one("AS KS 7S 4H 2D", "AH KD 7C 4C 2H");
    let a = run(P217, &s);
    assert_eq!(net(&a, "c1"), 2000);
    let t = r#"{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"settings":{"high_card_suit_tiebreak":false}}"#;
    let a = run(t, &s);
    assert_eq!(net(&a, "c1"), 0);
}

/// r.22: rounds without an ante are counted per seat (state).
#[test]
fn r22_idle_rounds_in_state() {
    let cfg = PokerSemDescarteEngine::configure(&table(P217))
        .unwrap()
        .config;
    let mut st = PsdState::default();
    let s = one("AS KS 9D 7C 2H", "QS QD TD 8C 3S");
    for _ in 0..3 {
        PokerSemDescarteEngine::adjudicate(
            &cfg,
            &mut st,
            &round(&s),
            &rules_core::Options::default(),
        )
        .unwrap();
    }
    assert_eq!(st.idle_rounds[0], 0);
    assert_eq!(st.idle_rounds[1], 3);
}

/// Records the engine cannot make sense of: RoundErrors naming the event or bet.
#[test]
fn record_errors() {
    let cfg = PokerSemDescarteEngine::configure(&table(P217))
        .unwrap()
        .config;
    for s in [
        "bet a1 ante 1 1000; bet a1 ante 2 1000",
        "bet a1 ante 1 -3",
        "bet a1 ante 1 1000; bet a2 ante 1 1000",
        "bet a1 ante 1 1000; bet c1 call 1 2000",
        "bet a1 ante 1 1000; dec 2 pass",
        "bet a1 ante 1 1000; dec 1 fold",
        "bet a1 ante 1 1000; card seat:1/2 AS",
        "bet a1 ante 1 1000; card board AS",
        "bet a1 ante 1 1000; fault bogus",
        "bet a1 ante 1 1000; bet j1 jackpot 1 100",
        &format!(
            "bet a1 ante 1 1000; {}",
            deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
        ),
    ] {
        let mut st = PsdState::default();
        st.idle_rounds[3] = 2;
        let before = st.clone();
        let e = PokerSemDescarteEngine::adjudicate(
            &cfg,
            &mut st,
            &round(s),
            &rules_core::Options::default(),
        );
        assert!(e.is_err(), "{s}");
        assert_eq!(st, before);
    }
}

/// P217/2007 T.I C.III S.II r.17 ("Os que tenham optado por retirar-se do jogo perdem o valor
/// correspondente à aposta inicial, que é retirado pelo pagador"): a passed ante reported paid or
/// returned is a payout error (PSD_WRONG_PAYOUT), not a reversed pass ("A decisão de passar é
/// irreversível" is about the decision).
#[test]
fn r17_passed_ante_not_collected_is_a_payout_error() {
    for reported in [1000, 0] {
        let s = format!(
            "bet a1 ante 1 1000; {} dec 1 pass; settle a1 {reported}",
            deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
        );
        let a = run(P217, &s);
        assert!(!a.has_violation("PSD_PASS_REVERSED"), "{:?}", a.violations);
        assert_eq!(a.discrepancies.len(), 1);
        assert_eq!(a.discrepancies[0].code, "PSD_WRONG_PAYOUT");
        assert_eq!(a.discrepancies[0].due_net_cents, -1000);
    }
    let s = format!(
        "bet a1 ante 1 1000; {} dec 1 pass; settle a1 -1000",
        deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
    );
    assert!(run(P217, &s).violations.is_empty());
}

/// The rule each finding enforces (the digest's section 8), in section 0's citation form.
fn rule_of(code: &str) -> &'static str {
    match code {
        "PSD_DUPLICATE_CARD" => "r.1",
        "PSD_TOO_MANY_PLAYERS" | "PSD_MULTIPLE_BOXES" => "r.5",
        "PSD_ANTE_BELOW_MIN" | "PSD_ANTE_ABOVE_MAX" => "r.13, r.16",
        "PSD_TABLE_MAX_OVER_25X_MIN" => "r.14",
        "PSD_LATE_BET" | "PSD_JACKPOT_BET_LATE" | "PSD_DEAL_ORDER" | "PSD_JACKPOT_WITHOUT_ANTE" => {
            "r.16"
        }
        "PSD_JACKPOT_WRONG_AMOUNT" => "r.8",
        "PSD_JACKPOT_DISPLAY_MISMATCH" => "r.3, r.4",
        "PSD_JACKPOT_START_BELOW_MIN" => "r.10",
        "PSD_CUT_WITH_SHUFFLER" => "r.16(a)",
        "PSD_CALL_NOT_DOUBLE_ANTE" | "PSD_PASS_REVERSED" | "PSD_PLAYER_EXPOSED_CARDS" => "r.17",
        "PSD_MISDEAL" | "PSD_VOID_ROUND_SETTLED" | "PSD_DEALER_CARD_EXPOSED_EARLY" => "r.19",
        "PSD_WRONG_PAYOUT" => "r.6, r.7, r.9, r.12, r.17, r.18",
        "PSD_PRIZE_CAP_EXCEEDED" => "r.15",
        other => panic!("no rule for {other}"),
    }
}

const P217_CITE: &str = "P217/2007 T.I C.III S.II ";
const P461_CITE: &str = "P461/2001 Anexo I ";

/// Every finding of `a` cites its rule in the regulation `prefix` names (P217/2007 r.16's
/// jackpot-without-ante rule exists only in P217); returns the codes seen.
fn check_citations(a: &Adjudication, prefix: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for v in &a.violations {
        let p = if v.code == "PSD_JACKPOT_WITHOUT_ANTE" {
            P217_CITE
        } else {
            prefix
        };
        assert_eq!(
            v.citation,
            format!("{p}{}", rule_of(&v.code)),
            "{}: {}",
            v.code,
            v.message
        );
        seen.push(v.code.to_string());
    }
    for d in &a.discrepancies {
        assert_eq!(d.citation, format!("{prefix}{}", rule_of(&d.code)));
        seen.push(d.code.to_string());
    }
    seen
}

/// Findings and results name the rule they apply in the table's regulation: P217/2007 T.I C.III
/// S.II r.N by default, P461/2001 Anexo I r.N on a P461 table (the digest's section 0: same
/// numbers, same content unless section 11 says otherwise).
#[test]
fn findings_and_results_cite_the_tables_regulation() {
    const P461_PLAIN: &str = r#"{"game":"poker_sem_descarte","regulation":"P461/2001","min_bet_cents":1000,"max_bet_cents":25000}"#;
    const P461_SHUF: &str = r#"{"game":"poker_sem_descarte","regulation":"P461/2001","min_bet_cents":1000,"max_bet_cents":25000,"settings":{"shuffler":true,"prize_cap_cents":10000}}"#;
    let pass_reversed = format!(
        "bet a1 ante 1 1000; {} dec 1 pass; bet c1 call 1 3000 on=a1",
        deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
    );
    let exposed = format!(
        "{} fault player_exposed_cards seat=1",
        one("AS KS 9D 7C 2H", "QS QD TD 8C 3S")
    );
    let misdeal = "bet a1 ante 1 1000; card seat:1 AS; card dealer QS down; card seat:1 KS; card dealer QD down; bet c1 call 1 2000 on=a1; settle a1 1000; settle c1 2000";
    let early = format!(
        "bet a1 ante 1 1000; {} bet c1 call 1 2000 on=a1",
        deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
            .replacen("card dealer QD down", "card dealer QD", 1)
            .replacen("card dealer 3S;", "card dealer 3S down;", 1)
    );
    let wrong = format!(
        "{} settle a1 0; settle c1 0",
        one("AS KS 9D 7C 2H", "QS QD TD 8C 3S")
    );
    let flush_wins = one("AS KS 9S 7S 2S", "QS QD TD 8C 3C");
    let cut = format!("proc cut; {}", one("AS KS 9D 7C 2H", "QS QD TD 8C 3S"));
    let dup = one("AS KS 9D 7C 2H", "AS QD TD 8C 3S");
    let seats2 = |t: &str| {
        t.replacen(
            "\"max_bet_cents\":25000",
            "\"max_bet_cents\":25000,\"seats\":2",
            1,
        )
    };
    for (plain, jackpot, shuffler, capped, prefix) in [
        (P217, JP217, SHUF, JP217, P217_CITE),
        (P461_PLAIN, P461, P461_SHUF, P461_SHUF, P461_CITE),
    ] {
        let mut seen = Vec::new();
        for (t, s) in [
            (plain, dup.as_str()),
            (seats2(plain).as_str(), three_players().as_str()),
            (plain, limits().as_str()),
            (jackpot, jackpot_chips().as_str()),
            (shuffler, cut.as_str()),
            (plain, pass_reversed.as_str()),
            (plain, exposed.as_str()),
            (plain, misdeal),
            (plain, early.as_str()),
            (plain, wrong.as_str()),
            (plain, deal_order().as_str()),
            (capped, flush_wins.as_str()),
        ] {
            seen.extend(check_citations(&run(t, s), prefix));
        }
        for t in [
            plain.replacen("25000", "30000", 1),
            jackpot.replacen("1000000", "100000", 1),
        ] {
            for v in PokerSemDescarteEngine::configure(&table(&t))
                .unwrap()
                .violations
            {
                assert_eq!(v.citation, format!("{prefix}{}", rule_of(&v.code)));
                seen.push(v.code.to_string());
            }
        }
        for code in ALL {
            if *code == "PSD_JACKPOT_WITHOUT_ANTE" && prefix == P461_CITE {
                continue;
            }
            assert!(seen.iter().any(|s| s == code), "{prefix}: {code} not seen");
        }
        // The results: the flush beats the qualifying pair of queens (r.6, r.18); the A-K high
        // loses to it (r.18); a tie keeps the bets (r.7); a pass loses the ante (r.17).
        let cite = |a: &Adjudication, id: &str| a.bet(id).unwrap().citation.to_string();
        let a = run(plain, &flush_wins);
        assert_eq!(cite(&a, "a1"), format!("{prefix}r.18"));
        assert_eq!(cite(&a, "c1"), format!("{prefix}r.6, r.18"));
        let a = run(plain, &one("AH KD 7C 4S 2H", "AC KH 7D 4D 2C"));
        assert_eq!(cite(&a, "c1"), format!("{prefix}r.7"));
        let a = run(plain, &pass_reversed);
        assert_eq!(cite(&a, "a1"), format!("{prefix}r.17"));
        let a = run(plain, misdeal);
        assert_eq!(cite(&a, "a1"), format!("{prefix}r.19"));
        assert_eq!(a.void.as_ref().unwrap().citation, format!("{prefix}r.19"));
    }
}

fn try_run(t: &str, r: &rules_core::Round) -> Result<Adjudication, rules_core::RoundError> {
    let cfg = PokerSemDescarteEngine::configure(&table(t)).unwrap();
    PokerSemDescarteEngine::adjudicate(&cfg.config, &mut PsdState::default(), r, &explain())
}

/// The event index of each finding with `code`.
fn at(a: &Adjudication, code: &str) -> Vec<Option<u32>> {
    a.violations
        .iter()
        .filter(|v| v.code == code)
        .map(|v| v.event_index)
        .collect()
}

/// A record the engine cannot read names the event or the bet it stops at.
#[test]
fn record_errors_name_the_event_or_bet() {
    use rules_core::RoundError;
    let event = |s: &str| match try_run(P217, &round(s)) {
        Err(RoundError::Event { index, .. }) => index,
        other => panic!("{s}: {other:?}"),
    };
    let bet = |r: &rules_core::Round| match try_run(P461, r) {
        Err(RoundError::Bet { bet_id, reason, .. }) => (bet_id, reason),
        other => panic!("{other:?}"),
    };
    assert_eq!(event("bet a1 ante 1 1000; nmb; dec 2 pass"), 2);
    assert_eq!(event("bet a1 ante 1 1000; card seat:1/2 AS"), 1);
    assert_eq!(event("bet a1 ante 1 1000; nmb; card board AS"), 2);
    assert_eq!(event("bet a1 ante 1 1000; role croupier"), 1);
    assert_eq!(event("bet a1 ante 1 1000; change a9 2000"), 1);
    assert_eq!(event("bet a1 ante 1 1000; withdraw a9"), 1);
    // A bet carries no selection and no attributes: each alone is refused.
    let mut r = round("bet a1 ante 1 1000");
    if let rules_core::EventKind::Bet(b) = &mut r.events[0].kind {
        b.selection = vec![1];
    }
    assert_eq!(bet(&r).0, "a1");
    assert_eq!(bet(&round("bet j1 jackpot 1 100 home=2")).0, "j1");
    // An ante rides on no other bet; a jackpot chip may name one (it is ignored).
    let (id, reason) = bet(&round("bet a1 ante 1 1000; bet a2 ante 2 1000 on=a1"));
    assert_eq!(
        (id.as_str(), reason.as_str()),
        ("a2", "an ante rides on no other bet")
    );
    let s = format!(
        "bet a1 ante 1 1000; bet j1 jackpot 1 100 on=a1; nmb; {} dec 1 pass",
        deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
    );
    assert!(try_run(P461, &round(&s)).is_ok());
    // The roles of the record.
    for role in ["dealer", "fiscal_banca", "fiscal_chefe"] {
        let s = format!("role {role}; {}", one("AS KS 9D 7C 2H", "QS QD TD 8C 3S"));
        assert!(run(P217, &s).violations.is_empty(), "{role}");
    }
}

/// P217/2007 T.I C.III S.II r.17 ("A decisão de passar é irreversível"): a pass after a call, or
/// a second pass, is PSD_PASS_REVERSED and the first decision stands.
#[test]
fn r17_pass_after_a_decision() {
    let d = deal(&[(1, "AS KS 9S 7S 2S")], "QS QD TD 8C 3C");
    let a = run(
        P217,
        &format!("bet a1 ante 1 1000; {d} bet c1 call 1 2000 on=a1; dec 1 pass"),
    );
    assert_eq!(codes(&a), ["PSD_PASS_REVERSED"]);
    assert_eq!(at(&a, "PSD_PASS_REVERSED"), [Some(12)]);
    // The call stands: the flush beats the pair of queens, 5 x the call.
    assert_eq!((net(&a, "a1"), net(&a, "c1")), (1000, 10_000));
    let a = run(
        P217,
        &format!("bet a1 ante 1 1000; {d} dec 1 pass; dec 1 pass"),
    );
    assert_eq!(codes(&a), ["PSD_PASS_REVERSED"]);
    assert_eq!(at(&a, "PSD_PASS_REVERSED"), [Some(12)]);
    assert_eq!(net(&a, "a1"), -1000);
}

/// P217/2007 T.I C.III S.II r.16 ("Também antes da distribuição das cartas, os jogadores devem
/// colocar as suas apostas iniciais"): an ante changed or withdrawn after the deal began is
/// PSD_LATE_BET; before it, or a change of another bet, is not.
#[test]
fn r16_ante_changed_after_the_deal_began() {
    let d = deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S");
    let a = run(
        P217,
        &format!("bet a1 ante 1 1000; change a1 2000; nmb; {d} bet c1 call 1 4000 on=a1"),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(net(&a, "a1"), -2000);
    let a = run(
        P217,
        &format!(
            "bet a1 ante 1 1000; nmb; card seat:1 AS down; change a1 2000; {} bet c1 call 1 4000 on=a1",
            &d[d.find(';').unwrap() + 1..]
        ),
    );
    assert_eq!(codes(&a), ["PSD_LATE_BET"]);
    assert_eq!(at(&a, "PSD_LATE_BET"), [Some(3)]);
    let a = run(
        P217,
        &format!("bet a1 ante 1 1000; nmb; {d} bet c1 call 1 2000 on=a1; change c1 4000"),
    );
    assert_eq!(codes(&a), ["PSD_CALL_NOT_DOUBLE_ANTE"]);
    let a = run(
        P217,
        &format!(
            "bet a1 ante 1 1000; bet a2 ante 2 1000; nmb; {} withdraw a2; bet c1 call 1 2000 on=a1",
            deal(
                &[(1, "AS KS 9D 7C 2H"), (2, "4S 4D 5C 6C 8H")],
                "QS QD TD 8C 3S"
            )
        ),
    );
    assert!(a.has_violation("PSD_LATE_BET"));
}

/// r.16's order counts the antes in play when the deal begins: an ante withdrawn before it has
/// no turn; a late ante whose turn has passed breaks the order at the next card (event index).
#[test]
fn r16_deal_order_follows_the_antes_in_play() {
    let d = deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S");
    let a = run(
        P217,
        &format!(
            "bet a1 ante 1 1000; bet a2 ante 2 1000; withdraw a2; nmb; {d} bet c1 call 1 2000 on=a1"
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Seat 2's ante after the bank's first card: its turn has passed, so the order stays seat 1
    // and the bank, and breaks at seat 2's first card (not before it).
    let late = "bet a1 ante 1 1000; card seat:1 2C down; card dealer AS down; bet a2 ante 2 1000;
        card seat:1 3C down; card dealer KS down; card seat:2 2D down; card seat:2 3D down;
        card seat:1 4D down; card seat:2 4H down; card dealer 7C down; card seat:1 9H down;
        card seat:2 9S down; card dealer 7D down; card seat:1 JS down; card seat:2 JC down;
        card dealer 8H; bet c1 call 1 2000 on=a1; bet c2 call 2 2000 on=a2";
    let a = run(P217, late);
    assert_eq!(at(&a, "PSD_LATE_BET"), [Some(3)]);
    assert_eq!(at(&a, "PSD_DEAL_ORDER"), [Some(6)]);
}

/// P217/2007 T.I C.III S.II r.19: six cards to the bank or to a player is a dealing error that
/// annuls the round.
#[test]
fn r19_a_sixth_card_is_a_misdeal() {
    let d = deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S");
    for extra in ["card dealer 4C down", "card seat:1 4C down"] {
        let a = run(
            P217,
            &format!("bet a1 ante 1 1000; {d} {extra}; bet c1 call 1 2000 on=a1"),
        );
        assert!(a.has_violation("PSD_MISDEAL"), "{extra}");
        assert!(a.void.is_some());
        assert_eq!(net(&a, "c1"), 0);
    }
}

/// P217/2007 T.I C.III S.II r.16 and r.19 on the bank's cards: its fifth card face up; one of
/// its own cards up before the last is its open card (the round stands); two up, or a wrong
/// count, is a misdeal, reported at the record's last event.
#[test]
fn r16_r19_the_banks_cards() {
    let d = deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S");
    let s = |d: &str| format!("bet a1 ante 1 1000; {d} bet c1 call 1 2000 on=a1");
    // All five down: an r.16 order finding, no misdeal.
    let a = run(
        P217,
        &s(&d.replacen("card dealer 3S;", "card dealer 3S down;", 1)),
    );
    assert_eq!(codes(&a), ["PSD_DEAL_ORDER"]);
    assert!(a.void.is_none());
    // Two of the bank's cards up: a misdeal at the last event (12).
    let a = run(
        P217,
        &s(&d.replacen("card dealer QD down", "card dealer QD", 1)),
    );
    assert_eq!(codes(&a), ["PSD_MISDEAL"]);
    assert_eq!(at(&a, "PSD_MISDEAL"), [Some(11)]);
    // Four cards to the bank, none up (its fifth never came): a misdeal only.
    let a = run(P217, &s(&d.replacen("card dealer 3S;", "", 1)));
    assert_eq!(codes(&a), ["PSD_MISDEAL"]);
    assert_eq!(at(&a, "PSD_MISDEAL"), [Some(10)]);
    // Four cards to the bank, its second up: a misdeal, not an early open card.
    let four =
        d.replacen("card dealer 3S;", "", 1)
            .replacen("card dealer QD down", "card dealer QD", 1);
    let a = run(P217, &s(&four));
    assert_eq!(codes(&a), ["PSD_MISDEAL"]);
    // A box without an ante that receives cards: a misdeal.
    let a = run(
        P217,
        &s(&deal(
            &[(1, "AS KS 9D 7C 2H"), (2, "4S 4D 5C 6C 8H")],
            "QS QD TD 8C 3S",
        )),
    );
    assert!(a.has_violation("PSD_MISDEAL"));
}

/// P217/2007 T.I C.III S.II r.5: at most 7 players and no more than the boxes, no box outside
/// the table; one box per player, one finding per player.
#[test]
fn r5_boxes_and_players_counted() {
    let hands = [
        "2C 3C 4D 9H JS",
        "2D 3D 4H 9S JC",
        "2H 3H 4S 9C JD",
        "5C 6C 7D TH QS",
        "5D 6D 7H TS QC",
        "5H 6H 7S TC QD",
        "8C 8D 2S 3S 4C",
        "6S 7C 8H 8S TD",
    ];
    let table_of = |seats: u8, players: &[u8], player: &dyn Fn(u8) -> String| {
        let mut s = String::new();
        for &p in players {
            s.push_str(&format!("bet a{p} ante {p} 1000 player={};", player(p)));
        }
        let hs: Vec<(u8, &str)> = players
            .iter()
            .map(|&p| (p, hands[p as usize - 1]))
            .collect();
        s.push_str(&deal(&hs, "AS KS AH KH QH"));
        for &p in players {
            s.push_str(&format!("dec {p} pass;"));
        }
        run(
            &format!(
                r#"{{"game":"poker_sem_descarte","min_bet_cents":1000,"max_bet_cents":25000,"seats":{seats}}}"#
            ),
            &s,
        )
    };
    let own = |p: u8| format!("P{p}");
    let seven: Vec<u8> = (1..=7).collect();
    let a = table_of(7, &seven, &own);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let eight: Vec<u8> = (1..=8).collect();
    assert_eq!(codes(&table_of(8, &eight, &own)), ["PSD_TOO_MANY_PLAYERS"]);
    assert_eq!(codes(&table_of(3, &[1, 4], &own)), ["PSD_TOO_MANY_PLAYERS"]);
    assert!(table_of(3, &[1, 3], &own).violations.is_empty());
    // One player on three boxes: one finding.
    let a = table_of(7, &[1, 2, 3], &|_| "P".to_string());
    assert_eq!(codes(&a), ["PSD_MULTIPLE_BOXES"]);
    // Two players on two boxes each: two findings.
    let a = table_of(7, &[1, 2, 3, 4], &|p| format!("P{}", p % 2));
    assert_eq!(codes(&a), ["PSD_MULTIPLE_BOXES", "PSD_MULTIPLE_BOXES"]);
    // Seat 0 is no box.
    let s = format!(
        "bet a0 ante 0 1000; {} dec 0 pass",
        deal(&[(0, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
    );
    assert_eq!(codes(&run(P217, &s)), ["PSD_TOO_MANY_PLAYERS"]);
    // A withdrawn ante is no second box.
    let s = format!(
        "bet a1 ante 1 1000 player=P; bet a2 ante 2 1000 player=P; withdraw a2; {} dec 1 pass",
        deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S")
    );
    assert!(run(P217, &s).violations.is_empty());
}

/// r.8: the jackpot bet is one chip of the fixed amount; P217 r.16: only with an ante in play
/// (a withdrawn ante is none); the ante's limits are inclusive (r.13).
#[test]
fn r8_r13_r16_amounts_at_their_bounds() {
    let d = deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S");
    let a = run(
        JP217,
        &format!(
            "jackpot 1000000; bet a1 ante 1 1000; bet j1 jackpot 1 100 chips=2; nmb; {d} dec 1 pass"
        ),
    );
    assert_eq!(codes(&a), ["PSD_JACKPOT_WRONG_AMOUNT"]);
    let a = run(
        JP217,
        &format!(
            "jackpot 1000000; bet a1 ante 1 1000; bet a2 ante 2 1000; bet j2 jackpot 2 100; withdraw a2; nmb; {d} dec 1 pass"
        ),
    );
    assert_eq!(codes(&a), ["PSD_JACKPOT_WITHOUT_ANTE"]);
    assert_eq!(net(&a, "j2"), 0);
    for ante in [1000, 25000] {
        let s = format!(
            "bet a1 ante 1 {ante}; {} bet c1 call 1 {} on=a1",
            deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S"),
            2 * ante
        );
        assert!(run(P217, &s).violations.is_empty(), "{ante}");
    }
}

/// The engine adjudicates póquer sem descarte and nothing else.
#[test]
fn the_engines_game() {
    assert_eq!(
        PokerSemDescarteEngine::games(),
        [rules_core::GameId::PokerSemDescarte]
    );
}

/// P217/2007 T.I C.III S.II r.19 ("anula-se a jogada"): a round declared void returns every bet
/// (the jackpot chips too, reading 10.12; the display keeps its value); a round with no cards
/// dealt and a live ante cannot be settled.
#[test]
fn r19_declared_void_and_undealt_rounds() {
    let a = run(
        JP217,
        "jackpot 1000000; bet a1 ante 1 1000; bet a2 ante 2 1000; bet j1 jackpot 1 100; withdraw a2; nmb; void misdeal",
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    let v = a.void.as_ref().unwrap();
    assert_eq!(v.reason, "declared void by the table");
    assert_eq!(v.citation, "P217/2007 T.I C.III S.II r.19");
    assert_eq!(a.bet("a1").unwrap().outcome, Outcome::Void);
    assert_eq!(a.bet("j1").unwrap().outcome, Outcome::Void);
    assert_eq!(a.bet("a2").unwrap().outcome, Outcome::Withdrawn);
    assert!(a.bets.iter().all(|b| b.due_net_cents == 0));
    let j = a.jackpot.as_ref().unwrap();
    assert_eq!(
        (j.value_before_cents, j.contributions_e4, j.prizes_cents),
        (1_000_000, 0, 0)
    );
    assert_eq!(j.value_after_e4, 1_000_000 * 10_000);
    let a = run(
        P217,
        "bet a1 ante 1 1000; card seat:1 AS; card dealer QS down",
    );
    assert_eq!(a.void.as_ref().unwrap().reason, "dealing error");
    // Nothing dealt: a withdrawn ante is settled (withdrawn), a live one cannot be.
    let a = run(P217, "bet a1 ante 1 1000; withdraw a1");
    assert_eq!(a.bet("a1").unwrap().outcome, Outcome::Withdrawn);
    assert!(try_run(P217, &round("bet a1 ante 1 1000; nmb")).is_err());
    assert!(
        try_run(
            JP217,
            &round("jackpot 1000000; bet a1 ante 1 1000; bet j1 jackpot 1 100; withdraw a1")
        )
        .is_ok()
    );
}

/// r.19: a misdealt round is settled when its settlement (not marked void) moves money, or when
/// something is paid and the table did not declare it void.
#[test]
fn r19_when_a_misdealt_round_counts_as_settled() {
    let m = "bet a1 ante 1 1000; card seat:1 AS; card dealer QS down";
    let settled = |s: &str| {
        let a = run(P217, &format!("{m}; {s}"));
        assert!(a.has_violation("PSD_MISDEAL"), "{s}");
        a.has_violation("PSD_VOID_ROUND_SETTLED")
    };
    assert!(!settled(""));
    assert!(!settled("settle a1 0"));
    assert!(!settled("settle_void"));
    assert!(settled("settle a1 1000"));
    assert!(settled("pay a1 1000"));
    assert!(!settled("void misdeal; pay a1 1000"));
    assert!(!settled("pay a1 1000; settle_void"));
    assert!(settled("void misdeal; settle a1 -1000"));
}

/// r.15 ("o máximo de prémios a pagar pela banca em cada jogada"): the cap is a maximum, paying
/// exactly it is no finding; jackpot prizes are not the bank's.
#[test]
fn r15_the_banks_cap_is_inclusive() {
    // Two pairs beat the bank's pair of queens: ante 2,000 + call 2 x 4,000 = 10,000 = the cap.
    let s = |p: &str| {
        format!(
            "jackpot 1000000; bet a1 ante 1 2000; bet j1 jackpot 1 100; nmb; {} bet c1 call 1 4000 on=a1",
            deal(&[(1, p)], "QS QD TD 8C 3C")
        )
    };
    let a = run(JP217, &s("AS AD 9D 9C 2H"));
    assert_eq!(net(&a, "c1"), 8000);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    // Three of a kind: 2,000 + 3 x 4,000 = 14,000.
    let a = run(JP217, &s("AS AD AH 9C 2H"));
    assert_eq!(codes(&a), ["PSD_PRIZE_CAP_EXCEEDED"]);
}

/// P217/2007 r.3, r.4 and reading 10.9: the chips accepted (not withdrawn, not refused) raise
/// the display before the deal; before the first card it may show the value before or after
/// them, after it the value after them or after the round's prizes.
#[test]
fn r3_r4_jackpot_display_before_and_after_the_deal() {
    // One chip of 100 at 80%: 1,000,000 -> 1,000,080; seat 1's flush wins 50 x 100 = 5,000:
    // 995,080 after it.
    let s = |before: i64, after: i64| {
        format!(
            "jackpot 1000000; bet a1 ante 1 1000; bet j1 jackpot 1 100; bet j9 jackpot 1 100; withdraw j9; bet j3 jackpot 3 100; nmb; display {before}; {} dec 1 pass; display {after}",
            deal(&[(1, "AS KS 9S 7S 2S")], "QH QD TD 8C 3C")
        )
    };
    let a = run(JP217, &s(1_000_000, 1_000_080));
    assert_eq!(codes(&a), ["PSD_JACKPOT_WITHOUT_ANTE"]);
    let j = a.jackpot.as_ref().unwrap();
    assert_eq!(j.contributions_e4, 80 * 10_000);
    assert_eq!(j.value_after_e4, 995_080 * 10_000);
    assert_eq!(net(&a, "j1"), 4900);
    assert_eq!(a.bet("j9").unwrap().outcome, Outcome::Withdrawn);
    assert!(run(JP217, &s(1_000_080, 995_080)).violations.len() == 1);
    // Events 6 (before the deal) and 18 (after it).
    for (before, after, bad) in [
        (995_080, 995_080, vec![Some(6)]),
        (1_000_000, 1_000_000, vec![Some(18)]),
        (1_000_081, 1_000_079, vec![Some(6), Some(18)]),
    ] {
        let a = run(JP217, &s(before, after));
        assert_eq!(
            at(&a, "PSD_JACKPOT_DISPLAY_MISMATCH"),
            bad,
            "{before} {after}"
        );
    }
    // The value before the round is 0 to MAX_AMOUNT_CENTS.
    for v in [-1i64, 1_000_000_000_001] {
        let r =
            round(&s(1_000_000, 1_000_080).replacen("jackpot 1000000", &format!("jackpot {v}"), 1));
        assert!(try_run(JP217, &r).is_err(), "{v}");
    }
    let r = round(&s(0, 0).replacen("jackpot 1000000", "jackpot 0", 1));
    assert!(try_run(JP217, &r).is_ok());
}

/// Reading 10.7: a jackpot award to a player who passed or showed his cards rests on a reading,
/// so a disputed one is a finding for review; a dispute of a result that rests on no reading is
/// only the discrepancy.
#[test]
fn readings_mark_only_their_own_bets() {
    for out in [
        "dec 1 pass",
        "fault player_exposed_cards seat=1; dec 1 pass",
    ] {
        let s = format!(
            "jackpot 1000000; bet a1 ante 1 1000; bet j1 jackpot 1 100; nmb; {} {out}; settle a1 -1000; settle j1 -100",
            deal(&[(1, "AS KS 9S 7S 2S")], "QH QD TD 8C 3C")
        );
        let a = run(JP217, &s);
        let v: Vec<&rules_core::Violation> = a
            .violations
            .iter()
            .filter(|v| v.code == "PSD_WRONG_PAYOUT")
            .collect();
        assert_eq!(v.len(), 1, "{out}: {:?}", a.violations);
        assert_eq!(v[0].confidence, Confidence::Review);
        assert!(v[0].message.contains("reading 10.7"), "{}", v[0].message);
    }
    // Seat 1's pair of nines beats the bank's on the second kicker (reading 10.5), reported
    // right; seat 2's plain loss is reported wrong: a discrepancy, no finding for review.
    let s = format!(
        "bet a1 ante 1 1000; bet a2 ante 2 1000; {} bet c1 call 1 2000 on=a1; bet c2 call 2 2000 on=a2;
         settle a1 1000; settle c1 2000; settle a2 0; settle c2 -2000",
        deal(&[(1, "9S 9H KD 4C 2S"), (2, "3H 4H 6D 7C JS")], "9D 9C KH 3S 2D")
    );
    let a = run(P217, &s);
    assert_eq!(a.discrepancies.len(), 1);
    assert_eq!(&*a.discrepancies[0].bet_id, "a2");
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}

/// The explanation names the hands it settles (cards and combination).
#[test]
fn the_explanation_names_the_cards() {
    let a = run(P217, &one("AS KS 9D 7C 2H", "QS QD TD 8C 3S"));
    let text: Vec<&str> = a.notes.iter().map(|n| n.text.as_str()).collect();
    assert!(
        text.contains(&"bank: QS QD TD 8C 3S = pair; qualifies (an ace and a king or better)"),
        "{text:?}"
    );
    assert!(
        text.contains(&"seat 1: AS KS 9D 7C 2H = high_card"),
        "{text:?}"
    );
}

/// r.13, r.16: an ante outside the limits is named for the limit it breaks; r.5: a player who
/// withdrew his ante from one box and plays another holds one box.
#[test]
fn r5_r13_one_ante_one_finding() {
    let d = deal(&[(1, "AS KS 9D 7C 2H")], "QS QD TD 8C 3S");
    for (ante, code) in [(999, "PSD_ANTE_BELOW_MIN"), (25_001, "PSD_ANTE_ABOVE_MAX")] {
        let a = run(P217, &format!("bet a1 ante 1 {ante}; {d} dec 1 pass"));
        assert_eq!(codes(&a), [code]);
        assert_eq!(a.violations[0].bet_id.as_deref(), Some("a1"));
    }
    let a = run(
        P217,
        &format!(
            "bet a2 ante 2 1000 player=P; withdraw a2; bet a1 ante 1 1000 player=P; {d} dec 1 pass"
        ),
    );
    assert!(a.violations.is_empty(), "{:?}", a.violations);
}
