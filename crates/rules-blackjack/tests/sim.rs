//! The simulator (rules_core::Simulate): honest sessions adjudicate clean and cover the game,
//! every mistake is found exactly, the same seed replays the same session.
use std::collections::BTreeMap;

use rules_blackjack::sim::{mistakes_of, reprice_jackpot, simulate_with_jackpot};
use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::testkit::{SimTable, finding_codes as findings, json, mistake_codes};
use rules_core::*;

const GAMES: [GameId; 2] = [GameId::Blackjack, GameId::BlackjackOnline];

type Table = SimTable<BlackjackEngine>;

fn decisions(r: &Round) -> impl Iterator<Item = &Decision> {
    r.events.iter().filter_map(|e| match &e.kind {
        EventKind::Decision(d) => Some(d),
        _ => None,
    })
}

fn procedures(r: &Round) -> impl Iterator<Item = &str> {
    r.events.iter().filter_map(|e| match &e.kind {
        EventKind::Procedure { name, .. } => Some(name.as_str()),
        _ => None,
    })
}

/// Count what an honest session shows.
fn cover(r: &Round, a: &Adjudication, c: &mut BTreeMap<&'static str, u32>) {
    let mut add = |k: &'static str, yes: bool| {
        if yes {
            *c.entry(k).or_default() += 1;
        }
    };
    add("rounds", true);
    for d in decisions(r) {
        add(
            match d.action.as_str() {
                "hit" => "hit",
                "stand" => "stand",
                "double" if d.bet_id.is_some() => "follower double",
                "double" => "double",
                "split" if d.bet_id.is_some() => "follower split",
                "split" => "split",
                "surrender" => "surrender",
                "even_money" => "even money",
                _ => "other",
            },
            true,
        );
        add(
            "re-split",
            d.action == "split" && d.hand > 1 && d.bet_id.is_none(),
        );
    }
    for (_, b) in r.bets() {
        add(
            match b.bet_type.as_str() {
                "main" => "main",
                "vacant" => "vacant",
                "complementary" => "complementary",
                "insurance" => "insurance",
                "jackpot" => "jackpot chip",
                _ => "other",
            },
            true,
        );
    }
    let mut vacant_seats: Vec<u8> = r
        .bets()
        .filter(|(_, b)| b.bet_type == "vacant")
        .filter_map(|(_, b)| b.seat)
        .collect();
    let n = vacant_seats.len();
    vacant_seats.dedup();
    add("shared vacant box", vacant_seats.len() < n);
    for p in procedures(r) {
        add(
            match p {
                "shuffle" => "shuffle",
                "warning_card" => "warning card",
                "session_start" => "session start",
                "session_warning" => "session warning",
                "session_ended" => "session ended",
                _ => "other",
            },
            true,
        );
    }
    for e in &r.events {
        if let EventKind::Fault { code, .. } = &e.kind {
            add(
                if code == "malfunction" {
                    "malfunction"
                } else {
                    "disconnection"
                },
                true,
            );
        }
    }
    add("jackpot win", !a.jackpot_wins.is_empty());
    add("void", a.void.is_some());
    let dealer_cards = r
        .events
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                EventKind::Card {
                    to: Recipient::Dealer,
                    ..
                }
            )
        })
        .count();
    add("dealer drew", dealer_cards > 2);
    add(
        "dealer did not need to draw",
        a.void.is_none() && dealer_cards == 2,
    );
    add(
        "blackjack paid",
        a.bets
            .iter()
            .any(|b| b.reason.starts_with("blackjack paid")),
    );
    add(
        "dealer blackjack",
        a.bets
            .iter()
            .any(|b| b.reason.starts_with("the dealer's blackjack")),
    );
    add(
        "special prize",
        a.bets.iter().any(|b| b.reason.starts_with("special prize")),
    );
    add(
        "dealer busted",
        a.bets.iter().any(|b| b.reason == "the dealer went over 21"),
    );
    add(
        "insurance won",
        a.bets
            .iter()
            .any(|b| b.reason.starts_with("insurance: the dealer has blackjack")),
    );
    add(
        "everyone out",
        a.void.is_none()
            && a.bets
                .iter()
                .filter(|b| !b.reason.starts_with("insurance") && !b.reason.contains("jackpot"))
                .all(|b| b.reason.starts_with("over 21") || b.reason.starts_with("surrendered")),
    );
}

#[test]
fn honest_sessions_adjudicate_clean_and_cover_the_game() {
    for game in GAMES {
        let mut c: BTreeMap<&'static str, u32> = BTreeMap::new();
        for seed in [1u64, 2, 3] {
            let mut t = Table::new(game);
            let mut rng = SimRng::new(seed ^ ((game as u64) << 32));
            for _ in 0..2_000 {
                let (r, a) = t.play(&mut rng, None);
                assert!(
                    a.violations.is_empty() && a.discrepancies.is_empty(),
                    "{game} seed {seed}: {:?} {:?}\n{}",
                    a.violations,
                    a.discrepancies,
                    json(&r)
                );
                assert_eq!(r.settlement.as_ref(), Some(&honest_settlement(&a)));
                cover(&r, &a, &mut c);
            }
        }
        eprintln!("{game}: {c:?}");
        let mut want = vec![
            "hit",
            "stand",
            "double",
            "split",
            "re-split",
            "surrender",
            "even money",
            "insurance",
            "insurance won",
            "shuffle",
            "dealer drew",
            "dealer did not need to draw",
            "blackjack paid",
            "dealer blackjack",
            "dealer busted",
            "special prize",
            "everyone out",
        ];
        if game == GameId::Blackjack {
            want.extend([
                "vacant",
                "shared vacant box",
                "complementary",
                "follower double",
                "follower split",
                "jackpot chip",
                "jackpot win",
                "warning card",
            ]);
        } else {
            want.extend([
                "session start",
                "session warning",
                "session ended",
                "malfunction",
                "void",
                "disconnection",
            ]);
        }
        for k in want {
            assert!(c.get(k).copied().unwrap_or(0) > 0, "{game}: no {k}: {c:?}");
        }
        // Voids are rare online and never on land.
        let voids = c.get("void").copied().unwrap_or(0);
        if game == GameId::Blackjack {
            assert_eq!(voids, 0);
        } else {
            assert!(voids < 60, "{voids}");
        }
    }
}

#[test]
fn every_mistake_is_found_exactly_and_the_session_goes_on_clean() {
    for game in GAMES {
        for id in mistakes_of(game) {
            let want = mistake_codes::<BlackjackEngine>(id);
            for seed in 0..50u64 {
                let mut t = Table::new(game);
                let mut rng = SimRng::new(seed * 7919 + 13);
                // From a fresh table, or deep into a shoe.
                let warm = if seed % 5 == 0 {
                    60 + rng.below(40)
                } else {
                    rng.below(8)
                };
                t.check_mistake(&mut rng, id, &want, warm, seed, findings);
            }
        }
    }
}

#[test]
fn mistakes_per_game_and_unknown_ids() {
    assert_eq!(
        mistakes_of(GameId::BlackjackOnline).len(),
        BlackjackEngine::mistakes().len()
    );
    assert!(!mistakes_of(GameId::Blackjack).contains(&"online_failure_settled"));
    for game in GAMES {
        let ids: Vec<&str> = BlackjackEngine::mistakes_for(game)
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(ids, mistakes_of(game));
        for need in [
            "dealer_hits_soft_17",
            "overpay_blackjack",
            "insurance_over_half",
            "double_on_12",
            "short_paid_split_hand",
        ] {
            assert!(ids.contains(&need), "{game} {need}");
        }
    }
    let t = Table::new(GameId::Blackjack);
    let e = BlackjackEngine::simulate(
        &t.table,
        &t.cfg,
        &t.state,
        "r".into(),
        0,
        &mut SimRng::new(1),
        Some("online_failure_settled"),
    )
    .unwrap_err();
    assert!(matches!(e, SimError::MistakeNotApplicable { .. }), "{e}");
    let e = BlackjackEngine::simulate(
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
    // An online table whose dealer draws on soft 17 cannot make that mistake.
    let mut table = BlackjackEngine::example_table(GameId::BlackjackOnline);
    table
        .settings
        .insert("dealer_hits_soft_17".into(), Setting::Bool(true));
    let t = Table::with(table);
    let e = BlackjackEngine::simulate(
        &t.table,
        &t.cfg,
        &t.state,
        "r".into(),
        0,
        &mut SimRng::new(1),
        Some("dealer_hits_soft_17"),
    )
    .unwrap_err();
    assert!(matches!(e, SimError::MistakeNotApplicable { .. }), "{e}");
}

#[test]
fn the_same_seed_replays_the_same_session() {
    for game in GAMES {
        let session = |seed: u64| -> Vec<String> {
            let mut t = Table::new(game);
            let mut rng = SimRng::new(seed);
            (0..300)
                .map(|i| {
                    let m = (i == 150).then_some("overpay_blackjack");
                    serde_json::to_string(&t.play(&mut rng, m).0).unwrap()
                })
                .collect()
        };
        assert_eq!(session(42), session(42), "{game}");
        assert_ne!(session(42), session(43), "{game}");
    }
}

#[test]
fn example_tables_configure_clean() {
    for game in GAMES {
        let table = BlackjackEngine::example_table(game);
        assert_eq!(table.game, game);
        let c = BlackjackEngine::configure(&table).unwrap();
        assert!(c.violations.is_empty(), "{game}: {:?}", c.violations);
    }
    let land = BlackjackEngine::example_table(GameId::Blackjack);
    let j = land.jackpot.as_ref().unwrap();
    assert_eq!(j.pool_id.as_deref(), Some("TJP-BJ"));
    assert!(j.start_value_cents >= 10_000 * j.bet_amount_cents);
    assert_eq!(land.decks, Some(6));
    assert!(land.max_bet_cents.unwrap() <= 30 * land.min_bet_cents.unwrap());
}

#[test]
fn the_shoe_never_repeats_a_card_beyond_its_decks_and_is_reshuffled_after_the_warning_card() {
    let mut t = Table::new(GameId::Blackjack);
    let mut rng = SimRng::new(77);
    let mut rounds_since_shuffle = 0u32;
    let mut warned_rounds = 0u32;
    let mut shoes = 0u32;
    let mut after_warning: Option<u32> = None;
    for _ in 0..2_000 {
        let (r, _) = t.play(&mut rng, None);
        let procs: Vec<&str> = procedures(&r).collect();
        if procs.contains(&"shuffle") {
            shoes += 1;
            // The round of the warning card is the last of the shoe: the next one starts a
            // new shoe (r.11).
            if let Some(k) = after_warning {
                assert_eq!(
                    k, 0,
                    "{k} rounds played after the round of the warning card"
                );
            }
            after_warning = None;
            rounds_since_shuffle = 0;
        } else if let Some(k) = after_warning.as_mut() {
            *k += 1;
        }
        if procs.contains(&"warning_card") {
            warned_rounds += 1;
            assert!(procs.contains(&"last_round"));
            after_warning = Some(0);
        }
        rounds_since_shuffle += 1;
        // No card beyond its decks since the shuffle (the engine would flag it).
        for c in Card::deck() {
            assert!(t.state.shoe.get(c) <= 6);
        }
    }
    assert!(
        shoes > 20 && warned_rounds + 1 >= shoes,
        "{shoes} {warned_rounds}"
    );
    let _ = rounds_since_shuffle;
}

#[test]
fn other_configurations_play_clean_too() {
    // P1364/2001 with its fixed jackpot table; batch and continuous shufflers; 4 decks and
    // 6 seats; an online table paying 6 to 5, drawing on soft 17 and tying 21 with a
    // blackjack; a single-player online table.
    let mut tables = Vec::new();
    let mut t = BlackjackEngine::example_table(GameId::Blackjack);
    t.regulation = Some("P1364/2001".into());
    t.max_bet_cents = Some(30 * t.min_bet_cents.unwrap());
    if let Some(j) = t.jackpot.as_mut() {
        j.paytable.clear();
    }
    tables.push(t);
    let mut t = BlackjackEngine::example_table(GameId::Blackjack);
    t.settings
        .insert("shuffler".into(), Setting::Text("batch".into()));
    t.decks = Some(4);
    t.seats = Some(6);
    tables.push(t);
    let mut t = BlackjackEngine::example_table(GameId::Blackjack);
    t.settings
        .insert("shuffler".into(), Setting::Text("continuous".into()));
    t.jackpot = None;
    tables.push(t);
    let mut t = BlackjackEngine::example_table(GameId::BlackjackOnline);
    t.settings
        .insert("blackjack_pays".into(), Setting::List(vec![6, 5]));
    t.settings
        .insert("dealer_hits_soft_17".into(), Setting::Bool(true));
    t.settings
        .insert("online_blackjack_beats_21".into(), Setting::Bool(false));
    t.min_bet_cents = Some(250);
    tables.push(t);
    let mut t = BlackjackEngine::example_table(GameId::BlackjackOnline);
    t.settings
        .insert("single_player_table".into(), Setting::Bool(true));
    t.seats = Some(1);
    tables.push(t);
    for table in tables {
        let mut t = Table::with(table);
        let mut rng = SimRng::new(99);
        let mut hits_soft_17 = 0;
        for _ in 0..1_500 {
            let (r, a) = t.play(&mut rng, None);
            assert!(
                findings(&a).is_empty(),
                "{} {:?}: {:?}\n{}",
                t.table.game,
                t.table.settings,
                findings(&a),
                json(&r)
            );
            let _ = &mut hits_soft_17;
        }
        for id in mistakes_of(t.table.game) {
            let r = BlackjackEngine::simulate(
                &t.table,
                &t.cfg,
                &t.state,
                "m".into(),
                t.t,
                &mut rng,
                Some(id),
            );
            let r = match r {
                Ok(r) => r,
                Err(SimError::MistakeNotApplicable { .. })
                    if id == "dealer_hits_soft_17" && t.cfg.hits_soft_17 =>
                {
                    continue;
                }
                Err(e) => panic!("{} {id}: {e}", t.table.game),
            };
            let a =
                BlackjackEngine::adjudicate(&t.cfg, &mut t.state.clone(), &r, &Options::default())
                    .unwrap();
            let want = mistake_codes::<BlackjackEngine>(id);
            assert_eq!(findings(&a), want, "{} {id}", t.table.game);
        }
    }
}

#[test]
fn the_jackpot_value_is_the_callers() {
    // Played with a value, or overridden afterwards: the same round, the same results.
    let table = BlackjackEngine::example_table(GameId::Blackjack);
    let cfg = BlackjackEngine::configure(&table).unwrap().config;
    let mut state = BlackjackState::default();
    let mut rng = SimRng::new(5);
    let mut t = 1_700_000_000_000;
    let mut checked = 0;
    for i in 0..3_000 {
        let mut r1 = rng.clone();
        let mut r2 = rng.clone();
        let id: Id = format!("r{i}").into();
        let big = 7_654_321;
        let played = simulate_with_jackpot(
            &table,
            &cfg,
            &state,
            id.clone(),
            t,
            &mut r1,
            None,
            Some(big),
        )
        .unwrap();
        let mut repriced =
            BlackjackEngine::simulate(&table, &cfg, &state, id, t, &mut r2, None).unwrap();
        assert_eq!(
            repriced.jackpot_before_cents,
            rules_blackjack::sim::default_jackpot_before(&cfg)
        );
        reprice_jackpot(&cfg, &state, &mut repriced, big).unwrap();
        assert_eq!(played, repriced);
        let a =
            BlackjackEngine::adjudicate(&cfg, &mut state, &played, &Options::default()).unwrap();
        assert!(findings(&a).is_empty(), "{:?}", findings(&a));
        if !a.jackpot_wins.is_empty() {
            checked += 1;
        }
        rng = r1;
        t = played.events.last().and_then(|e| e.at_ms).unwrap() + 10_000;
    }
    assert!(checked > 0);
}

/// Soak: 5 configurations x 40 seeds x 3,000 chained rounds, a mistake every 97th round, every
/// round with exactly its findings. `cargo test --release -p rules-blackjack --test sim --
/// --ignored`.
#[test]
#[ignore]
fn soak() {
    let mut tables = vec![
        BlackjackEngine::example_table(GameId::Blackjack),
        BlackjackEngine::example_table(GameId::BlackjackOnline),
    ];
    let mut t = BlackjackEngine::example_table(GameId::Blackjack);
    t.regulation = Some("P1364/2001".into());
    t.decks = Some(4);
    if let Some(j) = t.jackpot.as_mut() {
        j.paytable.clear();
    }
    tables.push(t);
    let mut t = BlackjackEngine::example_table(GameId::Blackjack);
    t.settings
        .insert("shuffler".into(), Setting::Text("continuous".into()));
    tables.push(t);
    let mut t = BlackjackEngine::example_table(GameId::BlackjackOnline);
    t.settings
        .insert("blackjack_pays".into(), Setting::List(vec![6, 5]));
    t.settings
        .insert("online_blackjack_beats_21".into(), Setting::Bool(false));
    t.min_bet_cents = Some(250);
    tables.push(t);
    for table in tables {
        for seed in 0..40u64 {
            let mut t = Table::with(table.clone());
            let mut rng = SimRng::new(seed * 31 + 7);
            let ids = mistakes_of(table.game);
            for i in 0..3_000usize {
                let m = (i % 97 == 50).then(|| ids[(i / 97) % ids.len()]);
                let (r, a) = t.play(&mut rng, m);
                let mut want: Vec<String> = m
                    .map(|id| {
                        let spec = BlackjackEngine::mistakes().iter().find(|x| x.id == id);
                        spec.unwrap().codes.iter().map(|c| c.to_string()).collect()
                    })
                    .unwrap_or_default();
                want.sort();
                assert_eq!(
                    findings(&a),
                    want,
                    "{m:?} seed {seed} round {i}\n{}",
                    json(&r)
                );
            }
        }
    }
}
