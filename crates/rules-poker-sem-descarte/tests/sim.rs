//! The simulator (rules_core::Simulate): honest sessions adjudicate clean and cover the game,
//! every mistake is found exactly, the same seed replays the same session.
use std::collections::BTreeMap;

use rules_core::testkit::{SimTable, finding_codes as findings, json, mistake_codes};
use rules_core::*;
use rules_poker_sem_descarte::eval::{self, Category};
use rules_poker_sem_descarte::sim::{
    default_jackpot_before, mistakes_of, reprice_jackpot, simulate_with_jackpot,
};
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdState};

const GAME: GameId = GameId::PokerSemDescarte;

type Table = SimTable<PokerSemDescarteEngine>;

fn cover(r: &Round, a: &Adjudication, c: &mut BTreeMap<&'static str, u32>) {
    let mut add = |k: &'static str, n: usize| {
        if n > 0 {
            *c.entry(k).or_default() += n as u32;
        }
    };
    add("rounds", 1);
    let bets = |t: &str| r.bets().filter(|(_, b)| b.bet_type == t).count();
    add("ante", bets("ante"));
    add("call", bets("call"));
    add("jackpot chip", bets("jackpot"));
    add(
        "pass",
        r.events
            .iter()
            .filter(|e| matches!(&e.kind, EventKind::Decision(d) if d.action == "pass"))
            .count(),
    );
    let reason = |s: &str| a.bets.iter().filter(|b| b.reason.starts_with(s)).count();
    add(
        "bank does not qualify",
        reason("the bank does not qualify (no ace"),
    );
    add(
        "player beats the bank",
        reason("beats a qualifying bank: ante"),
    );
    add(
        "bank beats the player",
        reason("lower than the qualifying bank"),
    );
    add("tie", reason("tie with the bank"));
    add("forfeit", reason("cards shown"));
    add("call paid 2x or more", {
        a.bets
            .iter()
            .filter(|b| {
                b.reason.starts_with("beats a qualifying bank with") && !b.reason.ends_with("1 x")
            })
            .count()
    });
    add("jackpot win", a.jackpot_wins.len());
    add("void", usize::from(a.void.is_some()));
    add(
        "shuffle",
        r.events
            .iter()
            .filter(|e| matches!(&e.kind, EventKind::Procedure { name, .. } if name == "shuffle"))
            .count(),
    );
}

#[test]
fn honest_sessions_adjudicate_clean_and_cover_the_game() {
    let mut c: BTreeMap<&'static str, u32> = BTreeMap::new();
    // With one deck a tie needs the bank to hold exactly the player's ranks (or the same
    // straight): about one call in 10,000. These seeds' sessions include some (the generator
    // is pinned, so they always will while the simulator draws the same way).
    for seed in [6u64, 88, 103] {
        let mut t = Table::new(GAME);
        let mut rng = SimRng::new(seed ^ 0x50D5_0000_0000);
        for _ in 0..2_000 {
            let (r, a) = t.play(&mut rng, None);
            assert!(
                a.violations.is_empty() && a.discrepancies.is_empty(),
                "seed {seed}: {:?} {:?}\n{}",
                a.violations,
                a.discrepancies,
                json(&r)
            );
            assert_eq!(r.settlement.as_ref(), Some(&honest_settlement(&a)));
            cover(&r, &a, &mut c);
        }
    }
    eprintln!("{c:?}");
    for k in [
        "ante",
        "call",
        "pass",
        "jackpot chip",
        "jackpot win",
        "bank does not qualify",
        "player beats the bank",
        "bank beats the player",
        "call paid 2x or more",
        "tie",
    ] {
        assert!(c.get(k).copied().unwrap_or(0) > 0, "no {k}: {c:?}");
    }
    // A misdeal or a player showing his cards is a finding: never in an honest round.
    assert!(
        !c.contains_key("void") && !c.contains_key("forfeit"),
        "{c:?}"
    );
}

#[test]
fn every_mistake_is_found_exactly_and_the_session_goes_on_clean() {
    for id in mistakes_of(GAME) {
        let want = mistake_codes::<PokerSemDescarteEngine>(id);
        for seed in 0..50u64 {
            let mut t = Table::new(GAME);
            let mut rng = SimRng::new(seed * 7919 + 13);
            let warm = rng.below(6);
            t.check_mistake(&mut rng, id, &want, warm, seed, findings);
        }
    }
}

#[test]
fn mistakes_and_unknown_ids() {
    let ids: Vec<&str> = PokerSemDescarteEngine::mistakes_for(GAME)
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, mistakes_of(GAME));
    for need in [
        "paid_multiple_on_non_qualifying_bank",
        "misdeal_settled",
        "call_not_double_ante",
    ] {
        assert!(ids.contains(&need), "{need}");
    }
    assert!(mistakes_of(GameId::Blackjack).is_empty());
    let t = Table::new(GAME);
    let e = PokerSemDescarteEngine::simulate(
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
    // Without a jackpot, no late jackpot chip.
    let mut table = PokerSemDescarteEngine::example_table(GAME);
    table.jackpot = None;
    let t = Table::with(table);
    let e = PokerSemDescarteEngine::simulate(
        &t.table,
        &t.cfg,
        &t.state,
        "r".into(),
        0,
        &mut SimRng::new(1),
        Some("jackpot_chip_late"),
    )
    .unwrap_err();
    assert!(matches!(e, SimError::MistakeNotApplicable { .. }), "{e}");
}

#[test]
fn the_same_seed_replays_the_same_session() {
    let session = |seed: u64| -> Vec<String> {
        let mut t = Table::new(GAME);
        let mut rng = SimRng::new(seed);
        (0..300)
            .map(|i| {
                let m = (i == 150).then_some("call_not_double_ante");
                serde_json::to_string(&t.play(&mut rng, m).0).unwrap()
            })
            .collect()
    };
    assert_eq!(session(42), session(42));
    assert_ne!(session(42), session(43));
}

#[test]
fn the_example_table_configures_clean() {
    let table = PokerSemDescarteEngine::example_table(GAME);
    let c = PokerSemDescarteEngine::configure(&table).unwrap();
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    let j = table.jackpot.as_ref().unwrap();
    assert_eq!(j.pool_id.as_deref(), Some("TJP-PSD"));
    assert!(j.start_value_cents >= 10_000 * j.bet_amount_cents);
    assert!(table.max_bet_cents.unwrap() <= 25 * table.min_bet_cents.unwrap());
}

#[test]
fn the_deal_is_the_regulations() {
    // By hand: one card at a time, the bank last, its fifth card face up; a shuffler deals
    // five at a time and is never cut. No card twice in a round.
    let mut shuffler = PokerSemDescarteEngine::example_table(GAME);
    shuffler
        .settings
        .insert("shuffler".into(), Setting::Bool(true));
    for table in [PokerSemDescarteEngine::example_table(GAME), shuffler] {
        let by_hand = table.setting("shuffler") == Some(&Setting::Bool(false));
        let mut t = Table::with(table);
        let mut rng = SimRng::new(8);
        for _ in 0..500 {
            let (r, a) = t.play(&mut rng, None);
            if a.void.is_some() {
                continue;
            }
            let cards: Vec<(Recipient, Card, bool)> = r
                .events
                .iter()
                .filter_map(|e| match &e.kind {
                    EventKind::Card { to, card, face_up } => Some((*to, *card, *face_up)),
                    _ => None,
                })
                .collect();
            let mut seen = std::collections::BTreeSet::new();
            assert!(cards.iter().all(|(_, c, _)| seen.insert(*c)));
            let cuts = r
                .events
                .iter()
                .filter(|e| matches!(&e.kind, EventKind::Procedure { name, .. } if name == "cut"))
                .count();
            assert_eq!(cuts, usize::from(by_hand));
            let dealt: Vec<&(Recipient, Card, bool)> = cards
                .iter()
                .filter(|(to, _, _)| *to != Recipient::Burn)
                .collect();
            let dealer: Vec<usize> = dealt
                .iter()
                .enumerate()
                .filter(|(_, (to, _, _))| *to == Recipient::Dealer)
                .map(|(i, _)| i)
                .collect();
            assert_eq!(dealer.len(), 5);
            assert_eq!(*dealer.last().unwrap(), dealt.len() - 1);
            if !by_hand {
                assert_eq!(dealer[0], dealt.len() - 5);
            }
            // Only the bank's fifth card, the last card dealt, is face up.
            for (i, (_, _, up)) in dealt.iter().enumerate() {
                assert_eq!(*up, i == dealt.len() - 1, "{}", json(&r));
            }
        }
    }
}

#[test]
fn other_configurations_play_clean_too() {
    // P461/2001 with its fixed jackpot table; a shuffler table; four boxes and no jackpot;
    // equal high cards read literally as a tie (10.4).
    let mut tables = Vec::new();
    let mut t = PokerSemDescarteEngine::example_table(GAME);
    t.regulation = Some("P461/2001".into());
    if let Some(j) = t.jackpot.as_mut() {
        j.paytable.clear();
    }
    tables.push(t);
    let mut t = PokerSemDescarteEngine::example_table(GAME);
    t.settings.insert("shuffler".into(), Setting::Bool(true));
    tables.push(t);
    let mut t = PokerSemDescarteEngine::example_table(GAME);
    t.seats = Some(4);
    t.jackpot = None;
    t.settings
        .insert("high_card_suit_tiebreak".into(), Setting::Bool(false));
    tables.push(t);
    for table in tables {
        let mut t = Table::with(table);
        let mut rng = SimRng::new(99);
        for _ in 0..1_500 {
            let (r, a) = t.play(&mut rng, None);
            assert!(
                findings(&a).is_empty(),
                "{:?}: {:?}\n{}",
                t.table,
                findings(&a),
                json(&r)
            );
            let players = r.bets().filter(|(_, b)| b.bet_type == "ante").count();
            assert!(players >= 1 && players <= usize::from(t.cfg.seats.min(7)));
        }
        for id in mistakes_of(GAME) {
            let r = match PokerSemDescarteEngine::simulate(
                &t.table,
                &t.cfg,
                &t.state,
                "m".into(),
                t.t,
                &mut rng,
                Some(id),
            ) {
                Ok(r) => r,
                Err(SimError::MistakeNotApplicable { .. })
                    if id == "jackpot_chip_late" && t.cfg.jackpot.is_none() =>
                {
                    continue;
                }
                Err(e) => panic!("{id}: {e}"),
            };
            let a = PokerSemDescarteEngine::adjudicate(
                &t.cfg,
                &mut t.state.clone(),
                &r,
                &Options::default(),
            )
            .unwrap();
            let want = mistake_codes::<PokerSemDescarteEngine>(id);
            assert_eq!(findings(&a), want, "{id}");
        }
    }
}

#[test]
fn the_jackpot_value_is_the_callers() {
    let table = PokerSemDescarteEngine::example_table(GAME);
    let cfg = PokerSemDescarteEngine::configure(&table).unwrap().config;
    let mut state = PsdState::default();
    let mut rng = SimRng::new(5);
    let mut t = 1_700_000_000_000;
    let mut wins = 0;
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
            PokerSemDescarteEngine::simulate(&table, &cfg, &state, id, t, &mut r2, None).unwrap();
        assert_eq!(repriced.jackpot_before_cents, default_jackpot_before(&cfg));
        reprice_jackpot(&cfg, &state, &mut repriced, big).unwrap();
        assert_eq!(played, repriced);
        let a = PokerSemDescarteEngine::adjudicate(&cfg, &mut state, &played, &Options::default())
            .unwrap();
        assert!(findings(&a).is_empty(), "{:?}", findings(&a));
        wins += a.jackpot_wins.len();
        rng = r1;
        t = played.events.last().and_then(|e| e.at_ms).unwrap() + 10_000;
    }
    assert!(wins > 0);
}

/// Soak: 3 configurations x 40 seeds x 3,000 chained rounds, a mistake every 37th round, every
/// round with exactly its findings. `cargo test --release -p rules-poker-sem-descarte --test
/// sim -- --ignored`.
#[test]
#[ignore]
fn soak() {
    let mut tables = vec![PokerSemDescarteEngine::example_table(GAME)];
    let mut t = PokerSemDescarteEngine::example_table(GAME);
    t.regulation = Some("P461/2001".into());
    if let Some(j) = t.jackpot.as_mut() {
        j.paytable.clear();
    }
    t.settings.insert("shuffler".into(), Setting::Bool(true));
    tables.push(t);
    let mut t = PokerSemDescarteEngine::example_table(GAME);
    t.settings
        .insert("high_card_suit_tiebreak".into(), Setting::Bool(false));
    t.seats = Some(5);
    tables.push(t);
    let ids = mistakes_of(GAME);
    for table in tables {
        for seed in 0..40u64 {
            let mut t = Table::with(table.clone());
            let mut rng = SimRng::new(seed * 31 + 7);
            for i in 0..3_000usize {
                let m = (i % 37 == 20).then(|| ids[(i / 37) % ids.len()]);
                let (r, a) = t.play(&mut rng, m);
                let mut want: Vec<String> = m
                    .map(|id| {
                        let spec = PokerSemDescarteEngine::mistakes()
                            .iter()
                            .find(|x| x.id == id);
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

/// The players follow the policy the module documents (r.17's choice): a pair above fives or
/// better always calls, a low pair about 7 times in 8, ace-king about 3 in 4, another ace about
/// 1 in 6, anything else about 1 in 20.
#[test]
fn players_follow_the_documented_policy() {
    let mut t = Table::new(GAME);
    let mut rng = SimRng::new(77);
    // [calls, hands] per class: better than a low pair, low pair, A-K, other ace, other.
    let mut n = [[0u32; 2]; 5];
    for _ in 0..1_500 {
        let (r, _) = t.play(&mut rng, None);
        let mut hands: BTreeMap<u8, Vec<Card>> = BTreeMap::new();
        for e in &r.events {
            if let EventKind::Card {
                to: Recipient::Seat { seat, .. },
                card,
                ..
            } = &e.kind
            {
                hands.entry(*seat).or_default().push(*card);
            }
        }
        let called: Vec<u8> = r
            .bets()
            .filter(|(_, b)| b.bet_type == "call")
            .filter_map(|(_, b)| b.seat)
            .collect();
        for (seat, cards) in hands {
            let k = eval::rank(&cards.try_into().unwrap());
            let class = match k.category {
                Category::HighCard if k.key[0] == 14 && k.key[1] == 13 => 2,
                Category::HighCard if k.key[0] == 14 => 3,
                Category::HighCard => 4,
                Category::Pair if k.key[0] <= 5 => 1,
                _ => 0,
            };
            n[class][1] += 1;
            n[class][0] += u32::from(called.contains(&seat));
        }
    }
    eprintln!("[calls, hands] per class: {n:?}");
    let rate = |c: usize| f64::from(n[c][0]) / f64::from(n[c][1]);
    assert_eq!(n[0][0], n[0][1], "{n:?}");
    for (class, lo, hi) in [
        (1, 0.80, 0.95),
        (2, 0.62, 0.87),
        (3, 0.10, 0.24),
        (4, 0.025, 0.08),
    ] {
        assert!(
            n[class][1] > 200 && (lo..=hi).contains(&rate(class)),
            "class {class}: {n:?}"
        );
    }
}

/// The simulated table keeps time like a table: every event after the previous one, by 0.3 to
/// 40 seconds (the shuffle the longest); the payments after the decisions 1.5 to 2.5 seconds
/// apart.
#[test]
fn events_are_paced_like_a_table() {
    let mut t = Table::new(GAME);
    let mut rng = SimRng::new(12);
    let mut gaps = std::collections::BTreeSet::new();
    for _ in 0..300 {
        let (r, _) = t.play(&mut rng, None);
        let times: Vec<i64> = r.events.iter().map(|e| e.at_ms.unwrap()).collect();
        for w in times.windows(2) {
            assert!((300..=40_000).contains(&(w[1] - w[0])), "{}", json(&r));
        }
        let reveal = r
            .events
            .iter()
            .position(
                |e| matches!(&e.kind, EventKind::Procedure { name, .. } if name == "reveal_dealer"),
            )
            .unwrap();
        let tail = &times[reveal..];
        for w in tail.windows(2).skip(1) {
            gaps.insert(w[1] - w[0]);
        }
        if tail.len() > 1 {
            assert!((4_000..=7_000).contains(&(tail[1] - tail[0])));
        }
    }
    assert_eq!(gaps.into_iter().collect::<Vec<_>>(), [1_500, 2_000, 2_500]);
    // The deal: 0.4 to 1 second from one card to the next, every value of that range drawn.
    let (mut lo, mut hi) = (i64::MAX, 0);
    for _ in 0..300 {
        let (r, _) = t.play(&mut rng, None);
        let cards: Vec<i64> = r
            .events
            .iter()
            .filter(|e| matches!(&e.kind, EventKind::Card { to, .. } if *to != Recipient::Burn))
            .map(|e| e.at_ms.unwrap())
            .collect();
        for w in cards.windows(2) {
            lo = lo.min(w[1] - w[0]);
            hi = hi.max(w[1] - w[0]);
        }
    }
    assert_eq!((lo, hi), (400, 1_000));
}

/// Each seat's five cards and whether it called.
fn hands_and_calls(r: &Round) -> BTreeMap<u8, (Vec<Card>, bool)> {
    let mut hands: BTreeMap<u8, (Vec<Card>, bool)> = BTreeMap::new();
    for e in &r.events {
        match &e.kind {
            EventKind::Card {
                to: Recipient::Seat { seat, .. },
                card,
                ..
            } => hands.entry(*seat).or_default().0.push(*card),
            EventKind::Bet(b) if b.bet_type == "call" => {
                hands.entry(b.seat.unwrap()).or_default().1 = true;
            }
            _ => {}
        }
    }
    hands
}

/// Who plays (module doc): 1 to 7 players, mostly 3 to 5 (weights 2, 3, 5, 6, 5, 3, 2 of 26);
/// antes of 1 to 25 minimums, never above the table's maximum; a jackpot chip from about half
/// of the players.
#[test]
fn players_antes_and_chips() {
    let mut t = Table::new(GAME);
    let mut rng = SimRng::new(31);
    let mut players = [0u32; 8];
    let (mut chips, mut antes) = (0u32, 0u32);
    let mut sizes = std::collections::BTreeSet::new();
    let rounds = 1_500;
    for _ in 0..rounds {
        let (r, _) = t.play(&mut rng, None);
        let a: Vec<i64> = r
            .bets()
            .filter(|(_, b)| b.bet_type == "ante")
            .map(|(_, b)| b.amount_cents)
            .collect();
        players[a.len()] += 1;
        antes += a.len() as u32;
        chips += r.bets().filter(|(_, b)| b.bet_type == "jackpot").count() as u32;
        for x in a {
            assert_eq!(x % 1_000, 0);
            sizes.insert(x / 1_000);
        }
    }
    for (n, w) in [2, 3, 5, 6, 5, 3, 2].into_iter().enumerate() {
        let f = f64::from(players[n + 1]) / f64::from(rounds);
        assert!((f - f64::from(w) / 26.0).abs() < 0.025, "{players:?}");
    }
    assert_eq!(
        sizes.into_iter().collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 10, 25]
    );
    let f = f64::from(chips) / f64::from(antes);
    assert!((0.45..=0.55).contains(&f), "{chips} of {antes}");
    // A table whose maximum is 5 minimums: antes of 1 to 5 minimums, no finding.
    let mut table = PokerSemDescarteEngine::example_table(GAME);
    table.max_bet_cents = Some(5_000);
    let mut t = Table::with(table);
    let mut sizes = std::collections::BTreeSet::new();
    for _ in 0..300 {
        let (r, a) = t.play(&mut rng, None);
        assert!(findings(&a).is_empty(), "{:?}", findings(&a));
        sizes.extend(
            r.bets()
                .filter(|(_, b)| b.bet_type == "ante")
                .map(|(_, b)| b.amount_cents),
        );
    }
    assert_eq!(
        sizes.into_iter().collect::<Vec<_>>(),
        [1_000, 2_000, 3_000, 4_000, 5_000]
    );
}

/// r.17 at the honest table: each pass is followed by the collection of that ante; after the
/// bank is revealed the losing bets are collected (once) and the winning ones paid, a jackpot
/// prize in full (the chip is not returned).
#[test]
fn collections_and_payments_follow_the_settlement() {
    let mut t = Table::new(GAME);
    let mut rng = SimRng::new(4);
    let mut passes = 0;
    for _ in 0..500 {
        let (r, a) = t.play(&mut rng, None);
        let ante_of = |seat: u8| {
            r.bets()
                .find(|(_, b)| b.bet_type == "ante" && b.seat == Some(seat))
                .map(|(_, b)| b.id.clone())
                .unwrap()
        };
        let mut collected = Vec::new();
        let mut paid = BTreeMap::new();
        for (i, e) in r.events.iter().enumerate() {
            match &e.kind {
                EventKind::Decision(d) => {
                    passes += 1;
                    assert_eq!(
                        r.events[i + 1].kind,
                        EventKind::Collect {
                            bet_ids: vec![ante_of(d.seat.unwrap())]
                        }
                    );
                }
                EventKind::Collect { bet_ids } => collected.extend(bet_ids.iter().cloned()),
                EventKind::Pay {
                    bet_id,
                    amount_cents,
                } => {
                    assert!(paid.insert(bet_id.clone(), *amount_cents).is_none());
                }
                _ => {}
            }
        }
        let mut losers: Vec<Id> = a
            .bets
            .iter()
            .filter(|b| b.due_net_cents < 0)
            .map(|b| b.bet_id.clone())
            .collect();
        losers.sort();
        collected.sort();
        assert_eq!(collected, losers, "{}", json(&r));
        let winners: BTreeMap<Id, i64> = a
            .bets
            .iter()
            .filter(|b| b.due_net_cents > 0)
            .map(|b| {
                let prize = a
                    .jackpot_wins
                    .iter()
                    .find(|w| w.bet_id == b.bet_id)
                    .map_or(b.due_net_cents, |w| w.prize_cents);
                (b.bet_id.clone(), prize)
            })
            .collect();
        assert_eq!(paid, winners, "{}", json(&r));
    }
    assert!(passes > 100);
}

/// The mistakes are steered (module doc): `pass_paid` and `misdeal_settled` make a player pass
/// and `paid_multiple_on_non_qualifying_bank` makes one call whatever his cards, so at a
/// one-box table the forced choice shows on any hand (the policy alone would call with every
/// pair above fives and pass nearly every hand below ace-king).
#[test]
fn mistakes_force_the_choice_they_need() {
    let mut table = PokerSemDescarteEngine::example_table(GAME);
    table.seats = Some(1);
    let mut t = Table::with(table);
    let mut rng = SimRng::new(8);
    for id in ["pass_paid", "misdeal_settled"] {
        let mut strong_passed = 0;
        for _ in 0..60 {
            let (r, _) = t.play(&mut rng, Some(id));
            let (cards, called) = &hands_and_calls(&r)[&1];
            assert!(!called, "{id}: {}", json(&r));
            let k = eval::rank(&cards.clone().try_into().unwrap());
            if k.category > Category::Pair || (k.category == Category::Pair && k.key[0] > 5) {
                strong_passed += 1;
            }
        }
        assert!(strong_passed >= 10, "{id}: {strong_passed}");
    }
    let mut weak_called = 0;
    for _ in 0..60 {
        let (r, _) = t.play(&mut rng, Some("paid_multiple_on_non_qualifying_bank"));
        let (cards, called) = &hands_and_calls(&r)[&1];
        assert!(called, "{}", json(&r));
        let k = eval::rank(&cards.clone().try_into().unwrap());
        if k.category == Category::HighCard && k.key[0] < 14 {
            weak_called += 1;
        }
    }
    assert!(weak_called >= 10, "{weak_called}");
}
