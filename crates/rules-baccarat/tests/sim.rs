//! The simulator (rules_core::Simulate): honest sessions adjudicate clean and cover the game,
//! every mistake is found exactly, the same seed replays the same session.
use std::collections::BTreeMap;

use rules_baccarat::BaccaratEngine;
use rules_baccarat::sim::mistakes_of;
use rules_core::testkit::{SimTable, finding_codes, json, mistake_codes};
use rules_core::*;

const GAMES: [GameId; 3] = [
    GameId::BaccaratPuntoBanco,
    GameId::BaccaratMacau,
    GameId::BaccaratCheminDeFer,
];

type Table = SimTable<BaccaratEngine>;

/// The codes of a coup's findings (violations and discrepancies), each once, sorted.
/// The finding codes a mistake must give, sorted.
fn codes_of(id: &str) -> Vec<String> {
    mistake_codes::<BaccaratEngine>(id)
}

fn findings(a: &Adjudication) -> Vec<String> {
    let mut v = finding_codes(a);
    v.dedup();
    v
}

fn cards_to(r: &Round, to: Recipient) -> Vec<Card> {
    r.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Card { to: t, card, .. } if *t == to => Some(*card),
            _ => None,
        })
        .collect()
}

fn score(cards: &[Card]) -> u8 {
    cards
        .iter()
        .map(|c| rules_baccarat::cards::card_value(*c))
        .sum::<u8>()
        % 10
}

fn procedures(r: &Round, name: &str) -> usize {
    r.events
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::Procedure { name: n, .. } if n == name))
        .count()
}

fn decisions(r: &Round, action: &str) -> usize {
    r.events
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::Decision(d) if d.action == action))
        .count()
}

fn count(seen: &mut BTreeMap<&'static str, u32>, what: &'static str, yes: bool) {
    if yes {
        *seen.entry(what).or_default() += 1;
    }
}

fn check_clean(game: GameId, seed: u64, r: &Round, a: &Adjudication) {
    assert!(
        a.violations.is_empty() && a.discrepancies.is_empty(),
        "{game} seed {seed}: {:?} {:?}\n{}",
        a.violations,
        a.discrepancies,
        json(r)
    );
    assert!(a.void.is_none(), "{game}: {}", json(r));
    assert_eq!(
        r.settlement.as_ref(),
        Some(&honest_settlement(a)),
        "{game}: the honest settlement"
    );
}

#[test]
fn honest_ponto_e_banca_sessions_adjudicate_clean_and_cover_the_game() {
    for game in [GameId::BaccaratPuntoBanco, GameId::BaccaratMacau] {
        let mut seen = BTreeMap::new();
        for seed in [1u64, 2, 3] {
            let mut t = Table::new(game);
            let mut rng = SimRng::new(seed ^ (game as u64) << 32);
            for _ in 0..2_000 {
                let (r, a) = t.play(&mut rng, None);
                check_clean(game, seed, &r, &a);
                let (p, b) = (
                    cards_to(&r, Recipient::Ponto),
                    cards_to(&r, Recipient::Banca),
                );
                assert!((2..=3).contains(&p.len()) && (2..=3).contains(&b.len()));
                let natural = score(&p[..2]) >= 8 || score(&b[..2]) >= 8;
                count(&mut seen, "natural", natural);
                count(&mut seen, "ponto third card", p.len() == 3);
                count(&mut seen, "banca third card", b.len() == 3);
                count(
                    &mut seen,
                    "banca third card, ponto stood",
                    b.len() == 3 && p.len() == 2,
                );
                count(&mut seen, "tie coup", score(&p) == score(&b));
                count(&mut seen, "ponto pair", p[0].rank == p[1].rank);
                count(&mut seen, "shuffle", procedures(&r, "shuffle") > 0);
                count(
                    &mut seen,
                    "warning card",
                    procedures(&r, "warning_card") > 0,
                );
                let burns = cards_to(&r, Recipient::Burn).len();
                count(&mut seen, "8 burned", burns == 8);
                count(&mut seen, "1 burned", burns == 1);
                let bets: Vec<&Bet> = r.bets().map(|(_, b)| b).collect();
                assert!(
                    bets.iter()
                        .any(|b| b.bet_type == "ponto" || b.bet_type == "banca")
                );
                let seated: std::collections::BTreeSet<u8> = bets
                    .iter()
                    .filter(|b| !b.attrs.contains_key("standing"))
                    .filter_map(|b| b.seat)
                    .collect();
                assert!(seated.len() <= 9, "{}", json(&r));
                count(
                    &mut seen,
                    "standing bet",
                    bets.iter().any(|b| b.attrs.contains_key("standing")),
                );
                for kind in ["tie", "pair_ponto", "pair_banca"] {
                    count(&mut seen, kind, bets.iter().any(|b| b.bet_type == kind));
                }
                count(
                    &mut seen,
                    "pair won",
                    a.bets.iter().any(|o| o.due_net_cents > 10 * o.stake_cents),
                );
                count(
                    &mut seen,
                    "commission",
                    a.bets
                        .iter()
                        .any(|o| o.outcome == Outcome::Won && o.due_net_cents < o.stake_cents),
                );
                count(
                    &mut seen,
                    "bet changed",
                    r.events
                        .iter()
                        .any(|e| matches!(e.kind, EventKind::BetChanged { .. })),
                );
                count(
                    &mut seen,
                    "bet withdrawn",
                    r.events
                        .iter()
                        .any(|e| matches!(e.kind, EventKind::BetWithdrawn { .. })),
                );
                if game == GameId::BaccaratMacau {
                    let both = bets.iter().any(|x| {
                        x.bet_type == "ponto"
                            && bets
                                .iter()
                                .any(|y| y.bet_type == "banca" && y.player == x.player)
                    });
                    count(&mut seen, "one player on both sides", both);
                }
            }
        }
        let mut want = vec![
            "natural",
            "ponto third card",
            "banca third card",
            "banca third card, ponto stood",
            "tie coup",
            "ponto pair",
            "shuffle",
            "warning card",
            "8 burned",
            "1 burned",
            "standing bet",
            "tie",
            "pair_ponto",
            "pair_banca",
            "pair won",
            "commission",
            "bet changed",
            "bet withdrawn",
        ];
        if game == GameId::BaccaratMacau {
            want.push("one player on both sides");
        }
        for w in want {
            assert!(
                seen.get(w).copied().unwrap_or(0) >= 10,
                "{game}: {w}: {seen:?}"
            );
        }
        // About 70 (8 decks) or 55 (6 decks) coups per shoe.
        let shoes = seen["shuffle"];
        assert!((60..200).contains(&shoes), "{game}: {shoes} shoes");
        assert_eq!(seen["shuffle"], seen["8 burned"], "{game}");
        // Every shoe but the last of each session ends with its warning card.
        assert_eq!(seen["warning card"] + 3, shoes, "{game}");
        println!("{game}: {seen:?}");
    }
}

#[test]
fn honest_chemin_de_fer_sessions_adjudicate_clean_and_cover_the_game() {
    let game = GameId::BaccaratCheminDeFer;
    let mut seen = BTreeMap::new();
    for seed in [1u64, 2, 3] {
        let mut t = Table::new(game);
        let mut rng = SimRng::new(seed ^ (game as u64) << 32);
        for _ in 0..2_000 {
            let prev = t.state.hand.clone();
            let (r, a) = t.play(&mut rng, None);
            check_clean(game, seed, &r, &a);
            let h = &t.state.hand;
            let mask = h.seated_mask;
            assert!(mask.count_ones() >= 4, "{}", json(&r));
            let bets: Vec<&Bet> = r.bets().map(|(_, b)| b).collect();
            let capital: i64 = bets
                .iter()
                .filter(|b| b.bet_type == "bank" || b.bet_type == "associate")
                .map(|b| b.amount_cents)
                .sum();
            let punters: i64 = bets
                .iter()
                .filter(|b| b.bet_type != "bank" && b.bet_type != "associate")
                .map(|b| {
                    if b.attrs.get("on_line").is_some_and(|v| v == "true") {
                        b.amount_cents / 2
                    } else {
                        b.amount_cents
                    }
                })
                .sum();
            assert!(punters <= capital, "{}", json(&r));
            for kind in ["banco", "banco_suivi", "banco_avec_la_table", "associate"] {
                count(&mut seen, kind, bets.iter().any(|b| b.bet_type == kind));
            }
            count(&mut seen, "partial cover", punters < capital);
            let callers: Vec<&Decision> = r
                .events
                .iter()
                .filter_map(|e| match &e.kind {
                    EventKind::Decision(d) if d.action == "banco" => Some(d),
                    _ => None,
                })
                .collect();
            count(&mut seen, "two banco callers", callers.len() == 2);
            count(
                &mut seen,
                "standing banco caller",
                callers
                    .iter()
                    .any(|d| d.player.as_deref().is_some_and(|p| p.starts_with('w'))),
            );
            count(
                &mut seen,
                "standing punter",
                bets.iter().any(|b| b.attrs.contains_key("standing")),
            );
            count(
                &mut seen,
                "on the line",
                bets.iter().any(|b| b.attrs.contains_key("on_line")),
            );
            count(
                &mut seen,
                "null coup",
                h.last_result == Some(rules_baccarat::chemin_de_fer::bank::BankResult::Null),
            );
            let changed = prev
                .banker
                .as_ref()
                .is_some_and(|b| !b.same(h.banker.as_ref().unwrap()));
            count(
                &mut seen,
                "hand to the right after a loss",
                changed
                    && prev.last_result
                        == Some(rules_baccarat::chemin_de_fer::bank::BankResult::Lost),
            );
            count(
                &mut seen,
                "passed hand taken",
                changed && prev.passed.is_some(),
            );
            count(&mut seen, "pass_hand", decisions(&r, "pass_hand") > 0);
            count(&mut seen, "decline_hand", decisions(&r, "decline_hand") > 0);
            count(&mut seen, "auction", procedures(&r, "auction") > 0);
            count(&mut seen, "bid", decisions(&r, "bid") > 0);
            count(&mut seen, "garage", procedures(&r, "garage") > 0);
            count(
                &mut seen,
                "halved after an odd win",
                prev.won_coups >= 3
                    && prev.won_coups % 2 == 1
                    && prev.banker == h.banker
                    && capital * 2 <= prev.bank_cents + prev.won_stakes_cents + 1,
            );
            count(&mut seen, "shuffle", procedures(&r, "shuffle") > 0);
            count(
                &mut seen,
                "warning card",
                procedures(&r, "warning_card") > 0,
            );
            count(&mut seen, "cagnotte", !a.house.is_empty());
            count(
                &mut seen,
                "seat taken",
                r.events
                    .iter()
                    .any(|e| matches!(&e.kind, EventKind::Role { role, .. } if role == "seated"))
                    && prev.census_known,
            );
            count(
                &mut seen,
                "seat left",
                r.events
                    .iter()
                    .any(|e| matches!(&e.kind, EventKind::Role { role, .. } if role == "left")),
            );
            // The coup: the ponto's calls and the banker's table.
            let (p, b) = (
                cards_to(&r, Recipient::Ponto),
                cards_to(&r, Recipient::Banca),
            );
            let (p2, b2) = (score(&p[..2]), score(&b[..2]));
            count(
                &mut seen,
                "ponto abates",
                decisions(&r, "abate") > 0 && p2 >= 8,
            );
            count(&mut seen, "banker abates", b2 >= 8 && p2 < 8);
            count(&mut seen, "ponto draws on 5", p2 == 5 && p.len() == 3);
            count(
                &mut seen,
                "ponto stands on 5",
                p2 == 5 && p.len() == 2 && b2 < 8,
            );
            count(
                &mut seen,
                "false draw in banco",
                (p2 <= 4 && p.len() == 2 && b2 < 8) || ((6..=7).contains(&p2) && p.len() == 3),
            );
            if p.len() == 3 && b2 < 8 {
                let v = rules_baccarat::cards::card_value(p[2]);
                count(
                    &mut seen,
                    "banker 3 v 9 draws",
                    b2 == 3 && v == 9 && b.len() == 3,
                );
                count(
                    &mut seen,
                    "banker 3 v 9 stands",
                    b2 == 3 && v == 9 && b.len() == 2,
                );
                count(
                    &mut seen,
                    "banker 5 v 4 draws",
                    b2 == 5 && v == 4 && b.len() == 3,
                );
                count(
                    &mut seen,
                    "banker 5 v 4 stands",
                    b2 == 5 && v == 4 && b.len() == 2,
                );
            }
        }
    }
    for (w, min) in [
        ("banco", 100),
        ("banco_suivi", 30),
        ("banco_avec_la_table", 30),
        ("associate", 30),
        ("partial cover", 1_000),
        ("two banco callers", 50),
        ("standing banco caller", 50),
        ("standing punter", 100),
        ("on the line", 30),
        ("null coup", 300),
        ("hand to the right after a loss", 1_000),
        ("passed hand taken", 50),
        ("pass_hand", 100),
        ("decline_hand", 20),
        ("auction", 20),
        ("bid", 15),
        ("garage", 30),
        ("halved after an odd win", 5),
        ("shuffle", 60),
        ("warning card", 60),
        ("cagnotte", 1_000),
        ("seat taken", 10),
        ("seat left", 10),
        ("ponto abates", 300),
        ("banker abates", 300),
        ("ponto draws on 5", 50),
        ("ponto stands on 5", 50),
        ("false draw in banco", 3),
        ("banker 3 v 9 draws", 3),
        ("banker 3 v 9 stands", 3),
        ("banker 5 v 4 draws", 3),
        ("banker 5 v 4 stands", 3),
    ] {
        let n = seen.get(w).copied().unwrap_or(0);
        assert!(n >= min, "chemin de fer: {w}: {n} < {min}\n{seen:?}");
    }
    // Every shoe but the last of each session ends with its warning card.
    assert_eq!(seen["warning card"] + 3, seen["shuffle"], "{seen:?}");
    println!("chemin de fer: {seen:?}");
}

#[test]
fn every_mistake_is_found_exactly_and_the_session_goes_on_clean() {
    let mut all: Vec<&str> = Vec::new();
    for game in GAMES {
        let ids = mistakes_of(game);
        assert!(ids.len() >= 3, "{game}");
        assert_eq!(
            BaccaratEngine::mistakes_for(game)
                .iter()
                .map(|m| m.id)
                .collect::<Vec<_>>(),
            ids
        );
        for id in ids {
            all.push(id);
            let want = codes_of(id);
            for seed in 0..50u64 {
                let mut t = Table::new(game);
                let mut rng = SimRng::new(seed * 7919 + 13);
                let warm = rng.below(12);
                t.check_mistake(&mut rng, id, &want, warm, seed, findings);
            }
        }
    }
    all.sort();
    all.dedup();
    let mut listed: Vec<&str> = BaccaratEngine::mistakes().iter().map(|m| m.id).collect();
    listed.sort();
    assert_eq!(all, listed, "every mistake belongs to a game");
}

#[test]
fn mistakes_are_made_at_every_point_of_a_long_session() {
    // Deep into a session (late in a shoe, a passed hand, a big bank, ...), each mistake is
    // still made and found exactly, and the session goes on clean.
    for game in GAMES {
        let mut t = Table::new(game);
        let mut rng = SimRng::new(77 + game as u64);
        let ids = mistakes_of(game);
        for i in 0..1_500 {
            let id = (i % 7 == 3).then(|| ids[(i / 7) % ids.len()]);
            let (r, a) = t.play(&mut rng, id);
            let want: Vec<String> = id.map(codes_of).unwrap_or_default();
            assert_eq!(findings(&a), want, "{game} coup {i} {id:?}\n{}", json(&r));
        }
    }
}

#[test]
fn another_game_s_mistake_is_not_applicable_and_unknown_ids_are_refused() {
    for game in GAMES {
        let t = Table::new(game);
        for spec in BaccaratEngine::mistakes() {
            if mistakes_of(game).contains(&spec.id) {
                continue;
            }
            let e = BaccaratEngine::simulate(
                &t.table,
                &t.cfg,
                &t.state,
                "r".into(),
                0,
                &mut SimRng::new(1),
                Some(spec.id),
            )
            .unwrap_err();
            assert!(matches!(e, SimError::MistakeNotApplicable { .. }), "{e}");
        }
        let e = BaccaratEngine::simulate(
            &t.table,
            &t.cfg,
            &t.state,
            "r".into(),
            0,
            &mut SimRng::new(1),
            Some("overpay_straight"),
        )
        .unwrap_err();
        assert_eq!(e, SimError::UnknownMistake("overpay_straight".into()));
    }
    // A chemin de fer state at a ponto e banca table is refused, not guessed.
    let mut cf = Table::new(GameId::BaccaratCheminDeFer);
    cf.play(&mut SimRng::new(3), None);
    let pb = Table::new(GameId::BaccaratPuntoBanco);
    let e = BaccaratEngine::simulate(
        &pb.table,
        &pb.cfg,
        &cf.state,
        "r".into(),
        0,
        &mut SimRng::new(1),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(e, SimError::Round(RoundError::State { .. })),
        "{e}"
    );
    // A table without a commission cannot pay a banca win without it.
    let mut table = BaccaratEngine::example_table(GameId::BaccaratPuntoBanco);
    table.commission = None;
    let t = Table::with(table);
    let e = BaccaratEngine::simulate(
        &t.table,
        &t.cfg,
        &t.state,
        "r".into(),
        0,
        &mut SimRng::new(1),
        Some("banca_commission_wrong"),
    )
    .unwrap_err();
    assert!(matches!(e, SimError::MistakeNotApplicable { .. }), "{e}");
}

#[test]
fn the_same_seed_replays_the_same_session() {
    for game in GAMES {
        let m = mistakes_of(game)[0];
        let session = |seed: u64| -> Vec<String> {
            let mut t = Table::new(game);
            let mut rng = SimRng::new(seed);
            (0..300)
                .map(|i| {
                    let mistake = (i == 150).then_some(m);
                    serde_json::to_string(&t.play(&mut rng, mistake).0).unwrap()
                })
                .collect()
        };
        assert_eq!(session(42), session(42), "{game}");
        assert_ne!(session(42), session(43), "{game}");
    }
}

#[test]
fn example_tables_are_approved_configurations() {
    for game in GAMES {
        let t = BaccaratEngine::example_table(game);
        assert_eq!(t.game, game);
        let c = BaccaratEngine::configure(&t).unwrap();
        assert!(c.violations.is_empty(), "{game}: {:?}", c.violations);
    }
    // Ponto e banca: the r.21 proportions exactly.
    let t = BaccaratEngine::example_table(GameId::BaccaratPuntoBanco);
    for (chance, k) in [
        ("ponto", 70),
        ("banca", 70),
        ("tie", 15),
        ("pair_ponto", 8),
        ("pair_banca", 8),
    ] {
        let l = t.limit(chance).unwrap();
        assert_eq!(l.max_cents, l.min_cents.map(|m| m * k), "{chance}");
    }
}

#[test]
fn other_configurations_play_clean_too() {
    // Bare tables (no limits, no commission, default decks and seats), a continuous shuffler,
    // Macau with the 5% commission, a chemin de fer table with none of the optional settings.
    let mut csm = BaccaratEngine::example_table(GameId::BaccaratPuntoBanco);
    csm.settings
        .insert("continuous_shuffler".into(), Setting::Bool(true));
    csm.settings.remove("double_table");
    csm.decks = Some(6);
    csm.seats = Some(7);
    let mut macau = BaccaratEngine::example_table(GameId::BaccaratMacau);
    macau.commission = Some("5pct".into());
    macau.settings.remove("pairs_offered");
    let mut bare_macau = TableConfig::new(GameId::BaccaratMacau);
    bare_macau
        .settings
        .insert("max_exposure_cents".into(), Setting::Int(1_000_000));
    let tables = [
        TableConfig::new(GameId::BaccaratPuntoBanco),
        csm,
        macau,
        bare_macau,
        TableConfig::new(GameId::BaccaratCheminDeFer),
    ];
    for table in tables {
        let game = table.game;
        let mut t = Table::with(table);
        let mut rng = SimRng::new(99);
        let mut shuffles = 0;
        for _ in 0..1_500 {
            let (r, a) = t.play(&mut rng, None);
            check_clean(game, 99, &r, &a);
            shuffles += procedures(&r, "shuffle");
        }
        if t.table.bool_setting("continuous_shuffler", false).unwrap() {
            assert_eq!(shuffles, 1);
        } else {
            assert!(shuffles > 10, "{game}: {shuffles}");
        }
        for id in mistakes_of(game) {
            let spec = BaccaratEngine::mistakes()
                .iter()
                .find(|m| m.id == id)
                .unwrap();
            let r = BaccaratEngine::simulate(
                &t.table,
                &t.cfg,
                &t.state,
                "x".into(),
                t.t,
                &mut rng,
                Some(id),
            );
            if id == "banca_commission_wrong" && t.table.commission.is_none() {
                assert!(matches!(r, Err(SimError::MistakeNotApplicable { .. })));
                continue;
            }
            let (_, a) = t.play(&mut rng, Some(id));
            let mut want: Vec<String> = spec.codes.iter().map(|c| c.to_string()).collect();
            want.sort();
            assert_eq!(findings(&a), want, "{game} {id}");
            for _ in 0..5 {
                let (r, a) = t.play(&mut rng, None);
                assert!(
                    findings(&a).is_empty(),
                    "{game} after {id}: {:?}\n{}",
                    a.violations,
                    json(&r)
                );
            }
        }
    }
}

/// A shoe deals each of its physical cards once: between two shuffles no card comes out more
/// often than the table's decks hold (r.1 of each game: 6 or 8 decks), over many shoes.
#[test]
fn no_card_comes_out_of_a_shoe_more_often_than_its_decks_hold() {
    for game in GAMES {
        let mut t = Table::new(game);
        let double = t.table.bool_setting("double_table", false).unwrap_or(false);
        let decks = t.table.decks.unwrap_or(if double { 8 } else { 6 });
        let csm = t
            .table
            .bool_setting("continuous_shuffler", false)
            .unwrap_or(false);
        assert!(!csm, "{game}: the example table must deal from a shoe");
        let mut rng = SimRng::new(404);
        let mut counts = CardCounts::default();
        let (mut shoes, mut most) = (0, 0);
        for _ in 0..600 {
            let (r, _) = t.play(&mut rng, None);
            for e in &r.events {
                match &e.kind {
                    EventKind::Procedure { name, .. } if name == "shuffle" => {
                        counts = CardCounts::default();
                        shoes += 1;
                    }
                    EventKind::Card { card, .. } => {
                        let n = counts.add(*card);
                        most = most.max(n);
                        assert!(
                            n <= u16::from(decks),
                            "{game}: {card} came out {n} times from a shoe of {decks} decks\n{}",
                            json(&r)
                        );
                    }
                    _ => {}
                }
            }
        }
        assert!(shoes >= 3, "{game}: only {shoes} shoes in 600 coups");
        assert_eq!(
            most,
            u16::from(decks),
            "{game}: some card came out of every deck"
        );
    }
}

/// Late in a shoe the cards left may offer no coup a mistake needs (here only tens and court
/// cards are left: every coup is a tie at 0, no ponto on 5-7, no banker on 3). The mistake is
/// still made in the coup asked for, from a new shoe, and the session goes on clean; a coup the
/// cards left do offer (the tie) is dealt from them.
#[test]
fn a_mistake_the_rest_of_the_shoe_cannot_offer_is_made_from_a_new_shoe() {
    for game in GAMES {
        for id in mistakes_of(game) {
            if matches!(id, "burn_missing" | "exposure_exceeded" | "late_bet") {
                continue;
            }
            let want = codes_of(id);
            let mut t = Table::new(game);
            let mut rng = SimRng::new(31 + game as u64);
            for _ in 0..5 {
                t.play(&mut rng, None);
            }
            // One of each card worth 0 left in the shoe, every other card out.
            let double = t.table.bool_setting("double_table", false).unwrap_or(false);
            let decks = u16::from(t.table.decks.unwrap_or(if double { 8 } else { 6 }));
            let mut seen = CardCounts::default();
            let mut left = 0;
            for i in 0..52 {
                let card = Card::from_index(i).unwrap();
                let worth_0 = rules_baccarat::cards::card_value(card) == 0;
                for _ in 0..decks - u16::from(worth_0) {
                    seen.add(card);
                }
                left += u32::from(worth_0);
            }
            let shoe = &mut t.state.shoe;
            assert!(shoe.known && !shoe.warning_out, "{game}");
            shoe.seen = seen;
            shoe.cards_out = u32::from(decks) * 52 - left;
            let (r, a) = t.play(&mut rng, Some(id));
            assert_eq!(findings(&a), want, "{game} {id}\n{}", json(&r));
            let new_shoe = usize::from(id != "tie_paid_9_to_1");
            assert_eq!(
                procedures(&r, "shuffle"),
                new_shoe,
                "{game} {id}\n{}",
                json(&r)
            );
            for _ in 0..10 {
                let (r, a) = t.play(&mut rng, None);
                assert!(findings(&a).is_empty(), "{game} after {id}\n{}", json(&r));
            }
        }
    }
}
