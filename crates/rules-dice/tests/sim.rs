//! The simulator (rules_core::Simulate): honest sessions adjudicate clean, every mistake is found
//! exactly, the same seed replays the same session.
use std::collections::BTreeSet;

use rules_core::testkit::{SimTable, finding_codes as findings, json, mistake_codes};
use rules_core::*;
use rules_dice::sim::mistakes_of;
use rules_dice::{DiceEngine, DiceState};

const GAMES: [GameId; 3] = [GameId::BancaFrancesa, GameId::Craps, GameId::Cussec];

type Table = SimTable<DiceEngine>;

fn bet_types(game: GameId) -> Vec<&'static str> {
    let mut v = match game {
        GameId::BancaFrancesa => vec!["aces", "small", "big", "small_line", "big_line"],
        GameId::Craps => vec![
            "pass_line",
            "dont_pass",
            "come",
            "dont_come",
            "big_6",
            "big_8",
            "under_7",
            "over_7",
            "odds",
            "any_craps",
            "hard_4",
            "hard_6",
            "hard_8",
            "hard_10",
            "any_seven",
            "total_2",
            "total_3",
            "total_11",
            "total_12",
            "place",
            "place_to_lose",
            "field",
        ],
        _ => vec![
            "small",
            "big",
            "single",
            "two_dice_combo",
            "double",
            "triple",
            "any_triple",
            "total",
        ],
    };
    v.sort();
    v
}

#[test]
fn honest_sessions_adjudicate_clean_and_cover_every_bet_type() {
    for game in GAMES {
        let mut voids = 0;
        let mut carried = 0;
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
                // Dice rounds are never void as a whole: a void throw is thrown again.
                assert!(a.void.is_none(), "{game}: {}", json(&r));
                if r.events
                    .iter()
                    .any(|e| matches!(e.kind, EventKind::Void { .. }))
                {
                    voids += 1;
                }
                let own: BTreeSet<&str> = r.bets().map(|(_, b)| &*b.id).collect();
                carried += a.bets.iter().filter(|b| !own.contains(&*b.bet_id)).count();
                for (_, b) in r.bets() {
                    kinds.insert(b.bet_type.clone());
                }
            }
            let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
            assert_eq!(kinds, bet_types(game), "{game} seed {seed}");
        }
        assert!(
            voids > 0 && voids < 300,
            "{game}: {voids} rounds with a void throw"
        );
        if game != GameId::Cussec {
            assert!(carried > 1_000, "{game}: {carried} bets carried over");
        }
    }
}

#[test]
fn every_mistake_is_found_exactly_and_the_session_goes_on_clean() {
    let mut all: Vec<&str> = Vec::new();
    for game in GAMES {
        let ids = mistakes_of(game);
        assert!(ids.len() >= 2, "{game}");
        for id in ids {
            all.push(id);
            let want = mistake_codes::<DiceEngine>(id);
            for seed in 0..50u64 {
                let mut t = Table::new(game);
                let mut rng = SimRng::new(seed * 7919 + 13);
                let warm = rng.below(8);
                t.check_mistake(&mut rng, id, &want, warm, seed, findings);
            }
        }
    }
    all.sort();
    let mut listed: Vec<&str> = DiceEngine::mistakes().iter().map(|m| m.id).collect();
    listed.sort();
    assert_eq!(all, listed, "every mistake belongs to one game");
}

#[test]
fn another_game_s_mistake_is_not_applicable_and_unknown_ids_are_refused() {
    for game in GAMES {
        let t = Table::new(game);
        for spec in DiceEngine::mistakes() {
            if mistakes_of(game).contains(&spec.id) {
                continue;
            }
            let e = DiceEngine::simulate(
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
        let e = DiceEngine::simulate(
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
    // A state of another game is refused, not guessed.
    let craps = Table::new(GameId::Craps);
    let e = DiceEngine::simulate(
        &craps.table,
        &craps.cfg,
        &DiceState::Cussec(Default::default()),
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
}

#[test]
fn the_same_seed_replays_the_same_session() {
    for game in GAMES {
        let m = mistakes_of(game)[0];
        let session = |seed: u64| -> Vec<String> {
            let mut t = Table::new(game);
            let mut rng = SimRng::new(seed);
            (0..200)
                .map(|i| {
                    let mistake = (i == 100).then_some(m);
                    serde_json::to_string(&t.play(&mut rng, mistake).0).unwrap()
                })
                .collect()
        };
        assert_eq!(session(42), session(42), "{game}");
        assert_ne!(session(42), session(43), "{game}");
    }
}

#[test]
fn craps_respects_the_table_across_rounds() {
    // Over a long session: come bets only with a point, odds only on standing bases, rounds of
    // one to three valid throws, a seven-out passes the dice, the open bets stay bounded.
    let mut t = Table::new(GameId::Craps);
    let mut rng = SimRng::new(11);
    let mut shooters = 0;
    for _ in 0..3_000 {
        let (r, _) = t.play(&mut rng, None);
        let throws = r
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Dice { .. }))
            .count();
        let voids = r
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Void { .. }))
            .count();
        assert!((1..=3).contains(&(throws - voids)), "{}", json(&r));
        shooters += r
            .events
            .iter()
            .filter(|e| matches!(&e.kind, EventKind::Role { role, .. } if role == "shooter"))
            .count();
        let DiceState::Craps(s) = &t.state else {
            panic!()
        };
        assert!(s.open_bets.len() < 80, "{}", s.open_bets.len());
    }
    assert!(shooters > 100, "{shooters}");
}

#[test]
fn other_configurations_play_clean_too() {
    // Tables without posted limits, craps barring 2 with the default number-box minimums and
    // don't-side odds table (an Info configuration finding, not a round finding).
    let mut craps = TableConfig::new(GameId::Craps);
    craps.settings.insert("bar".into(), Setting::Int(2));
    let tables = [
        TableConfig::new(GameId::BancaFrancesa),
        craps,
        TableConfig::new(GameId::Cussec),
    ];
    for table in tables {
        let c = DiceEngine::configure(&table).unwrap();
        let mut t = Table {
            table,
            cfg: c.config,
            state: DiceState::default(),
            pool: None,
            t: 0,
            n: 0,
        };
        let mut rng = SimRng::new(99);
        for _ in 0..1_000 {
            let (r, a) = t.play(&mut rng, None);
            assert!(findings(&a).is_empty(), "{:?}\n{}", findings(&a), json(&r));
        }
        for id in mistakes_of(t.table.game) {
            if id == "place_not_multiple_of_min" {
                // No minimum fixed for the number boxes: nothing to break.
                let e = DiceEngine::simulate(
                    &t.table,
                    &t.cfg,
                    &t.state,
                    "x".into(),
                    t.t,
                    &mut rng,
                    Some(id),
                )
                .unwrap_err();
                assert!(matches!(e, SimError::MistakeNotApplicable { .. }), "{e}");
                continue;
            }
            let (_, a) = t.play(&mut rng, Some(id));
            let want = mistake_codes::<DiceEngine>(id);
            assert_eq!(findings(&a), want, "{} {id}", t.table.game);
            for _ in 0..5 {
                let (_, a) = t.play(&mut rng, None);
                assert!(findings(&a).is_empty(), "{} after {id}", t.table.game);
            }
        }
    }
}
