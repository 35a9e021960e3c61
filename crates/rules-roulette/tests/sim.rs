//! The simulator (rules_core::Simulate): honest sessions adjudicate clean, every mistake is found
//! exactly, the same seed replays the same session.
use std::collections::BTreeSet;

use rules_core::testkit::{SimTable, finding_codes as findings, json, mistake_codes};
use rules_core::*;
use rules_roulette::sim::mistakes_of;
use rules_roulette::{RouletteEngine, RouletteState};

const GAMES: [GameId; 3] = [
    GameId::RouletteAmerican,
    GameId::RouletteFrench,
    GameId::RouletteFrenchOnline,
];

type Table = SimTable<RouletteEngine>;

#[test]
fn honest_sessions_adjudicate_clean_and_cover_every_bet_type() {
    for game in GAMES {
        let mut voids = 0;
        let mut void_spins = 0;
        for seed in [1u64, 2, 3] {
            let mut t = Table::new(game);
            let mut rng = SimRng::new(seed ^ (game as u64) << 32);
            let mut kinds = BTreeSet::new();
            for _ in 0..2_000 {
                let (r, a) = t.play(&mut rng, None);
                assert!(
                    a.violations.is_empty() && a.discrepancies.is_empty(),
                    "{game} seed {seed}: {:?} {:?}\n{}",
                    a.violations,
                    a.discrepancies,
                    json(&r)
                );
                if r.events
                    .iter()
                    .any(|e| matches!(e.kind, EventKind::Void { .. }))
                {
                    void_spins += 1;
                }
                if a.void.is_some() {
                    voids += 1;
                    assert!(r.settlement.as_ref().unwrap().void);
                }
                for (_, b) in r.bets() {
                    kinds.insert(b.bet_type.clone());
                }
            }
            let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
            let mut want: Vec<&str> = vec![
                "black",
                "column",
                "column_split",
                "corner",
                "dozen",
                "dozen_split",
                "even",
                "high",
                "line",
                "low",
                "neighbours",
                "odd",
                "red",
                "series_grande",
                "series_orfaos",
                "series_pequena",
                "split",
                "straight",
                "street",
            ];
            if game == GameId::RouletteFrenchOnline {
                want.push("finals");
                want.sort();
            }
            assert_eq!(kinds, want, "{game} seed {seed}");
        }
        // Voids are rare: land void spins are relaunched (the round is never void), online the
        // operator voids about one round in a thousand.
        assert!(void_spins > 0 && void_spins < 100, "{game}: {void_spins}");
        if game == GameId::RouletteFrenchOnline {
            assert!(voids > 0 && voids < 30, "{game}: {voids}");
        } else {
            assert_eq!(voids, 0, "{game}");
        }
    }
}

#[test]
fn every_mistake_is_found_exactly_and_the_session_goes_on_clean() {
    for game in GAMES {
        for id in mistakes_of(game) {
            let want = mistake_codes::<RouletteEngine>(id);
            for seed in 0..50u64 {
                let mut t = Table::new(game);
                let mut rng = SimRng::new(seed * 7919 + 13);
                let warm = rng.below(6);
                t.check_mistake(&mut rng, id, &want, warm, seed, findings);
            }
        }
    }
}

#[test]
fn land_procedure_mistakes_are_not_applicable_online_and_unknown_ids_are_refused() {
    assert_eq!(
        mistakes_of(GameId::RouletteAmerican).len(),
        RouletteEngine::mistakes().len()
    );
    assert_eq!(
        mistakes_of(GameId::RouletteFrench).len(),
        RouletteEngine::mistakes().len()
    );
    let t = Table::new(GameId::RouletteFrenchOnline);
    for id in ["launch_same_direction", "paid_before_collecting"] {
        assert!(!mistakes_of(GameId::RouletteFrenchOnline).contains(&id));
        let e = RouletteEngine::simulate(
            &t.table,
            &t.cfg,
            &t.state,
            "r".into(),
            0,
            &mut SimRng::new(1),
            Some(id),
        )
        .unwrap_err();
        assert!(matches!(e, SimError::MistakeNotApplicable { .. }), "{e}");
    }
    let e = RouletteEngine::simulate(
        &t.table,
        &t.cfg,
        &t.state,
        "r".into(),
        0,
        &mut SimRng::new(1),
        Some("dealer_hits_soft_17"),
    )
    .unwrap_err();
    assert_eq!(e, SimError::UnknownMistake("dealer_hits_soft_17".into()));
}

#[test]
fn the_same_seed_replays_the_same_session() {
    for game in GAMES {
        let session = |seed: u64| -> Vec<String> {
            let mut t = Table::new(game);
            let mut rng = SimRng::new(seed);
            (0..200)
                .map(|i| {
                    let m = (i == 100).then_some("overpay_straight");
                    serde_json::to_string(&t.play(&mut rng, m).0).unwrap()
                })
                .collect()
        };
        assert_eq!(session(42), session(42), "{game}");
        assert_ne!(session(42), session(43), "{game}");
    }
}

#[test]
fn the_procedure_is_the_regulation_s() {
    // Staff and balls rotate within the hour, launches alternate, relaunches come from the
    // previous number: a long session shows each of them (their checks stayed silent above).
    let mut t = Table::new(GameId::RouletteAmerican);
    let mut rng = SimRng::new(5);
    let (mut spinners, mut balls, mut relaunches) = (0, 0, 0);
    for _ in 0..2_000 {
        let (r, _) = t.play(&mut rng, None);
        for e in &r.events {
            match &e.kind {
                EventKind::Role { role, .. } if role == "spinner" => spinners += 1,
                EventKind::Procedure { name, .. } if name == "ball_change" => balls += 1,
                EventKind::Launch {
                    from_pocket: Some(_),
                    ..
                } => relaunches += 1,
                _ => {}
            }
        }
    }
    assert!(
        spinners > 10 && balls > 10 && relaunches > 0,
        "{spinners} {balls} {relaunches}"
    );
}

#[test]
fn other_configurations_play_clean_too() {
    // The simulator reads the compiled configuration: an American-order wheel (no announced
    // bets), a French table refusing announced bets but allowing the 0-1-2-3 corner, an online
    // table losing outside bets on 0 with no call bets, a table without posted limits.
    let mut tables = Vec::new();
    let mut t = RouletteEngine::example_table(GameId::RouletteAmerican);
    t.settings
        .insert("wheel".into(), Setting::Text("american".into()));
    tables.push((t, vec!["series_grande", "neighbours"]));
    let mut t = RouletteEngine::example_table(GameId::RouletteFrench);
    t.settings
        .insert("announced_bets".into(), Setting::Bool(false));
    t.settings
        .insert("zero_corner_allowed".into(), Setting::Bool(true));
    tables.push((t, vec!["series_orfaos", "neighbours"]));
    let mut t = TableConfig::new(GameId::RouletteFrenchOnline);
    t.settings
        .insert("zero_rule".into(), Setting::Text("lose".into()));
    tables.push((t, vec!["finals", "series_pequena"]));
    let mut t = TableConfig::new(GameId::RouletteAmerican);
    t.settings
        .insert("wheel".into(), Setting::Text("french".into()));
    tables.push((t, vec![]));
    for (table, absent) in tables {
        let c = RouletteEngine::configure(&table).unwrap();
        assert!(c.violations.is_empty(), "{:?}", c.violations);
        let mut t = Table {
            table,
            cfg: c.config,
            state: RouletteState::default(),
            pool: None,
            t: 0,
            n: 0,
        };
        let mut rng = SimRng::new(99);
        let mut kinds = BTreeSet::new();
        let mut zero_corner = false;
        for _ in 0..1_000 {
            let (r, a) = t.play(&mut rng, None);
            assert!(findings(&a).is_empty(), "{:?}\n{}", findings(&a), json(&r));
            for (_, b) in r.bets() {
                kinds.insert(b.bet_type.clone());
                zero_corner |= b.bet_type == "corner" && b.selection == [0, 1, 2, 3];
            }
        }
        for k in absent {
            assert!(!kinds.contains(k), "{} offers no {k}", t.table.game);
        }
        assert_eq!(zero_corner, t.cfg.zero_corner_allowed, "{}", t.table.game);
        for id in mistakes_of(t.table.game) {
            let (_, a) = t.play(&mut rng, Some(id));
            let want = mistake_codes::<RouletteEngine>(id);
            assert_eq!(findings(&a), want, "{} {id}", t.table.game);
        }
    }
}
