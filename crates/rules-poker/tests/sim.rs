//! The simulator ([`rules_core::Simulate`] for [`PokerEngine`]): long honest chains adjudicate
//! clean and cover the game; every mistake gives exactly its codes; same seed, same hands.

use std::collections::{BTreeMap, BTreeSet};

use rules_core::{
    Adjudication, Engine, EventKind, GameId, Options, Outcome, Round, Setting, SimError, SimRng,
    Simulate, TableConfig,
};
use rules_poker::config::{Commission, Regulation};
use rules_poker::{PokerConfig, PokerEngine, PokerState};

const START_MS: i64 = 1_767_225_600_000;

fn configure(table: &TableConfig) -> PokerConfig {
    let c = PokerEngine::configure(table).expect("configure");
    assert!(c.violations.is_empty(), "{:?}", c.violations);
    c.config
}

fn codes(a: &Adjudication) -> BTreeSet<String> {
    a.violations
        .iter()
        .map(|v| v.code.to_string())
        .chain(a.discrepancies.iter().map(|d| d.code.to_string()))
        .collect()
}

struct Chain {
    table: TableConfig,
    cfg: PokerConfig,
    state: PokerState,
    rng: SimRng,
    n: u64,
}

impl Chain {
    fn new(table: TableConfig, seed: u64) -> Chain {
        let cfg = configure(&table);
        Chain {
            table,
            cfg,
            state: PokerState::default(),
            rng: SimRng::new(seed),
            n: 0,
        }
    }

    fn sim(&mut self, mistake: Option<&str>) -> Result<Round, SimError> {
        let before = self.state.clone();
        let r = PokerEngine::simulate(
            &self.table,
            &self.cfg,
            &self.state,
            format!("hand-{}", self.n).into(),
            START_MS + self.n as i64 * 150_000,
            &mut self.rng,
            mistake,
        );
        assert_eq!(before, self.state, "simulate must not modify the state");
        r
    }

    /// Simulate, adjudicate (advancing the state), return both.
    fn step(&mut self, mistake: Option<&str>, explain: bool) -> (Round, Adjudication) {
        let r = self.sim(mistake).unwrap_or_else(|e| {
            panic!("{} hand {}: {e}", self.table.game, self.n);
        });
        let a = PokerEngine::adjudicate(&self.cfg, &mut self.state, &r, &Options { explain })
            .unwrap_or_else(|e| panic!("{} hand {}: {e}", self.table.game, self.n));
        self.n += 1;
        (r, a)
    }

    fn honest(&mut self, k: usize) {
        for _ in 0..k {
            let (r, a) = self.step(None, false);
            assert_clean(&self.cfg, &r, &a);
        }
    }
}

fn assert_clean(cfg: &PokerConfig, r: &Round, a: &Adjudication) {
    assert!(
        a.violations.is_empty() && a.discrepancies.is_empty(),
        "{} {}: {:#?}\n{}",
        cfg.rules.game,
        r.round_id,
        a.violations,
        serde_json::to_string_pretty(r).unwrap()
    );
}

/// What a chain of honest hands showed.
#[derive(Default)]
struct Coverage {
    actions: BTreeMap<String, u64>,
    side_pots: u64,
    split_pots: u64,
    folds_to_a_bet: u64,
    showdowns: u64,
    null_hands: u64,
    exposed_cards: u64,
    players: BTreeMap<usize, u64>,
}

fn honest_chain(game: GameId, seeds: &[u64], hands: usize) -> Coverage {
    let mut cov = Coverage::default();
    for &seed in seeds {
        let mut ch = Chain::new(PokerEngine::example_table(game), seed);
        for _ in 0..hands {
            let (r, a) = ch.step(None, true);
            assert_clean(&ch.cfg, &r, &a);
            // Timestamps from the start, never going back.
            let mut t = r.opened_at_ms.unwrap();
            for e in &r.events {
                let at = e.at_ms.expect("every event is timed");
                assert!(at >= t, "{}: time goes back", r.round_id);
                t = at;
            }
            // Money is conserved: the nets and the commission sum to zero.
            let s = r.settlement.as_ref().unwrap();
            let total: i64 = s.results.iter().map(|x| x.net_cents).sum();
            assert_eq!(total + s.house_cents.unwrap_or(0), 0, "{}", r.round_id);
            *cov.players.entry(r.bets().count()).or_default() += 1;
            let mut last_action = "";
            for e in &r.events {
                match &e.kind {
                    EventKind::Decision(d) => {
                        *cov.actions.entry(d.action.clone()).or_default() += 1;
                        last_action = if d.action == "fold" { "fold" } else { "other" };
                    }
                    EventKind::Card {
                        face_up: true, to, ..
                    } if *to != rules_core::Recipient::Board => cov.exposed_cards += 1,
                    _ => {}
                }
            }
            if a.void.is_some() {
                cov.null_hands += 1;
                assert!(s.void && s.house_cents.is_none());
                assert!(a.bets.iter().all(|b| b.outcome == Outcome::Void));
            }
            let notes = |needle: &str| a.notes.iter().any(|n| n.text.contains(needle));
            if notes("side pot 1") {
                cov.side_pots += 1;
            }
            if notes("shares it") {
                cov.split_pots += 1;
            }
            if notes("best hand") {
                cov.showdowns += 1;
            }
            // The hand ends on a fold and the last bet goes back uncalled.
            if last_action == "fold" && notes("were not called") {
                cov.folds_to_a_bet += 1;
            }
        }
    }
    cov
}

fn check_coverage(game: GameId, cov: &Coverage, actions: &[&str]) {
    let hands: u64 = cov.players.values().sum();
    for a in actions {
        assert!(
            cov.actions.get(*a).copied().unwrap_or(0) > 0,
            "{game}: action `{a}` never used: {:?}",
            cov.actions
        );
    }
    for a in cov.actions.keys() {
        assert!(actions.contains(&a.as_str()), "{game}: unexpected `{a}`");
    }
    assert!(
        cov.side_pots >= hands / 100,
        "{game}: side pots {}",
        cov.side_pots
    );
    assert!(
        cov.split_pots >= hands / 100,
        "{game}: split pots {}",
        cov.split_pots
    );
    assert!(
        cov.folds_to_a_bet >= hands / 20,
        "{game}: folds to a bet {}",
        cov.folds_to_a_bet
    );
    assert!(
        cov.showdowns > hands / 4 && cov.showdowns < hands * 9 / 10,
        "{game}: showdowns {}",
        cov.showdowns
    );
    assert!(cov.null_hands > 0, "{game}: no null hand");
    let (lo, hi) = if game == GameId::PokerHoldemOnline {
        (2, 10)
    } else {
        (4, 10)
    };
    assert!(
        cov.players.keys().all(|&n| (lo..=hi).contains(&n)),
        "{game}: players {:?}",
        cov.players
    );
    assert!(cov.players.len() >= 4, "{game}: players {:?}", cov.players);
}

const SEEDS: [u64; 3] = [1, 2, 3];
const HANDS: usize = 2_000;

const BLIND_ACTIONS: [&str; 10] = [
    "post_sb",
    "post_bb",
    "post_forced_bb",
    "post_dead",
    "check",
    "call",
    "bet",
    "raise",
    "all_in",
    "fold",
];

#[test]
fn holdem_chains_are_clean_and_cover_the_game() {
    let cov = honest_chain(GameId::PokerHoldem, &SEEDS, HANDS);
    check_coverage(GameId::PokerHoldem, &cov, &BLIND_ACTIONS);
    assert!(cov.exposed_cards > 0);
}

#[test]
fn omaha_chains_are_clean_and_cover_the_game() {
    let cov = honest_chain(GameId::PokerOmaha, &SEEDS, HANDS);
    check_coverage(GameId::PokerOmaha, &cov, &BLIND_ACTIONS);
    assert!(cov.exposed_cards > 0);
}

#[test]
fn sintetico_chains_are_clean_and_cover_the_game() {
    let cov = honest_chain(GameId::PokerSintetico, &SEEDS, HANDS);
    check_coverage(
        GameId::PokerSintetico,
        &cov,
        &[
            "post_ante",
            "stardilho",
            "restardilho",
            "check",
            "call",
            "bet",
            "raise",
            "all_in",
            "fold",
        ],
    );
}

#[test]
fn online_chains_are_clean_and_cover_the_game() {
    let cov = honest_chain(GameId::PokerHoldemOnline, &SEEDS, HANDS);
    check_coverage(
        GameId::PokerHoldemOnline,
        &cov,
        &[
            "post_sb",
            "post_bb",
            "check",
            "call",
            "bet",
            "raise",
            "all_in",
            "fold",
            "timeout",
            "disconnect",
        ],
    );
}

/// Which mistakes each example table can make (the others are refused as not applicable).
fn applicable(game: GameId, mistake: &str) -> bool {
    match mistake {
        "short_paid_split_pot" | "fourth_raise" => true,
        "commission_over_cap" => game != GameId::PokerHoldemOnline,
        "raise_below_min" => matches!(game, GameId::PokerHoldem | GameId::PokerOmaha),
        "online_failure_settled" => game == GameId::PokerHoldemOnline,
        other => panic!("untested mistake {other}"),
    }
}

fn mistake_runs(game: GameId) {
    for spec in PokerEngine::mistakes() {
        let want: BTreeSet<String> = spec.codes.iter().map(|c| c.to_string()).collect();
        for seed in 0..50u64 {
            let mut ch = Chain::new(PokerEngine::example_table(game), 1_000 + seed);
            ch.honest(3 + (seed % 4) as usize);
            if !applicable(game, spec.id) {
                match ch.sim(Some(spec.id)) {
                    Err(SimError::MistakeNotApplicable { mistake, .. }) => {
                        assert_eq!(mistake, spec.id)
                    }
                    other => panic!("{game} {}: {other:?}", spec.id),
                }
                break;
            }
            let (r, a) = ch.step(Some(spec.id), false);
            assert_eq!(
                codes(&a),
                want,
                "{game} {} seed {seed}: {:#?}\n{:#?}\n{}",
                spec.id,
                a.violations,
                a.discrepancies,
                serde_json::to_string(&r).unwrap()
            );
            ch.honest(3);
        }
    }
}

#[test]
fn holdem_mistakes_give_exactly_their_codes() {
    mistake_runs(GameId::PokerHoldem);
}

#[test]
fn omaha_mistakes_give_exactly_their_codes() {
    mistake_runs(GameId::PokerOmaha);
}

#[test]
fn sintetico_mistakes_give_exactly_their_codes() {
    mistake_runs(GameId::PokerSintetico);
}

#[test]
fn online_mistakes_give_exactly_their_codes() {
    mistake_runs(GameId::PokerHoldemOnline);
}

#[test]
fn the_mistakes_do_what_they_say() {
    // short_paid_split_pot: a split pot, one winner short.
    let mut ch = Chain::new(PokerEngine::example_table(GameId::PokerHoldem), 5);
    ch.honest(2);
    let (_, a) = ch.step(Some("short_paid_split_pot"), false);
    assert_eq!(a.discrepancies.len(), 1);
    let d = &a.discrepancies[0];
    assert!(d.reported_net_cents.unwrap() < d.due_net_cents);
    // commission_over_cap: the house took more than the cap.
    let (r, a) = ch.step(Some("commission_over_cap"), false);
    let cap = 600;
    assert!(r.settlement.unwrap().house_cents.unwrap() > cap);
    assert_eq!(a.house[0].amount_cents, cap);
    // online_failure_settled: a null hand, chips moved.
    let mut ch = Chain::new(PokerEngine::example_table(GameId::PokerHoldemOnline), 5);
    let (r, a) = ch.step(Some("online_failure_settled"), false);
    assert_eq!(a.void.as_ref().unwrap().reason, "system_failure");
    assert!(!r.settlement.unwrap().void);
}

#[test]
fn unknown_mistakes_are_refused() {
    let mut ch = Chain::new(PokerEngine::example_table(GameId::PokerHoldem), 1);
    assert_eq!(
        ch.sim(Some("dealer_hits_soft_17")).unwrap_err(),
        SimError::UnknownMistake("dealer_hits_soft_17".into())
    );
}

fn json_chain(table: TableConfig, seed: u64, n: usize, mistake_every: usize) -> Vec<String> {
    let mut ch = Chain::new(table, seed);
    let mistakes: Vec<&str> = PokerEngine::mistakes().iter().map(|m| m.id).collect();
    (0..n)
        .map(|i| {
            let m = (i % mistake_every == mistake_every - 1)
                .then(|| mistakes[(i / mistake_every) % mistakes.len()]);
            let r = match ch.sim(m) {
                Ok(r) => r,
                Err(SimError::MistakeNotApplicable { .. }) => ch.sim(None).unwrap(),
                Err(e) => panic!("{e}"),
            };
            PokerEngine::adjudicate(&ch.cfg, &mut ch.state, &r, &Options::default()).unwrap();
            ch.n += 1;
            serde_json::to_string(&r).unwrap()
        })
        .collect()
}

#[test]
fn same_seed_same_rounds() {
    for game in rules_poker::GAMES {
        let t = PokerEngine::example_table(game);
        let a = json_chain(t.clone(), 42, 150, 7);
        let b = json_chain(t.clone(), 42, 150, 7);
        assert_eq!(a, b, "{game}");
        let c = json_chain(t, 43, 150, 7);
        assert_ne!(a, c, "{game}");
    }
}

#[test]
fn example_tables_are_approved_configurations() {
    for game in rules_poker::GAMES {
        let t = PokerEngine::example_table(game);
        let cfg = configure(&t);
        assert_eq!(cfg.rules.game, game);
        match (cfg.regulation, cfg.commission) {
            (Regulation::P217, Commission::PerHand { bp, cap }) => {
                assert!(bp > 0 && bp <= 500);
                assert!(cap.is_some(), "{game}: land tables cap the commission");
            }
            (Regulation::Reg806, Commission::PerHand { bp, cap }) => {
                assert!((100..=500).contains(&bp));
                assert_eq!(cap, None);
            }
            other => panic!("{game}: {other:?}"),
        }
        assert_eq!(cfg.stardilho, game == GameId::PokerSintetico);
    }
    // A game this engine does not play gets a table that it refuses.
    assert!(PokerEngine::configure(&PokerEngine::example_table(GameId::Craps)).is_err());
}

fn setting(mut t: TableConfig, name: &str, v: Setting) -> TableConfig {
    t.settings.insert(name.into(), v);
    t
}

/// Other approved tables play clean too: the older sintético (3% of the pot, pó hands carried
/// over), buy-in and per-session commission, no commission, limit and pot-limit online, heads-up
/// online, sintético without stardilho.
#[test]
fn other_approved_tables_play_clean() {
    let ex = PokerEngine::example_table;
    let mut tables = Vec::new();
    let mut p461 = TableConfig::new(GameId::PokerSintetico);
    p461.regulation = Some("P461/2001".into());
    p461.min_bet_cents = Some(1_000);
    tables.push(setting(p461, "stardilho", Setting::Bool(true)));
    let mut buy_in = ex(GameId::PokerHoldemOnline);
    buy_in.commission = Some("buy_in".into());
    buy_in
        .settings
        .insert("commission_bp".into(), Setting::Int(1_000));
    tables.push(buy_in);
    let mut session = ex(GameId::PokerHoldem);
    session.commission = Some("per_session".into());
    session.settings.remove("commission_cap_cents");
    session
        .settings
        .insert("commission_bp".into(), Setting::Int(1_000));
    tables.push(session);
    let mut none = ex(GameId::PokerOmaha);
    none.commission = Some("none".into());
    none.settings.remove("commission_cap_cents");
    none.settings.remove("commission_bp");
    tables.push(none);
    for limit in ["limit", "pot_limit"] {
        let mut t = setting(
            ex(GameId::PokerHoldemOnline),
            "limit",
            Setting::Text(limit.into()),
        );
        t.settings.remove("max_raises");
        tables.push(t);
    }
    let mut heads_up = ex(GameId::PokerHoldemOnline);
    heads_up.seats = Some(2);
    tables.push(heads_up);
    tables.push(setting(
        ex(GameId::PokerSintetico),
        "stardilho",
        Setting::Bool(false),
    ));
    for (k, t) in tables.into_iter().enumerate() {
        let mut ch = Chain::new(t, 77 + k as u64);
        for _ in 0..400 {
            let (r, a) = ch.step(None, false);
            assert_clean(&ch.cfg, &r, &a);
        }
    }
}

/// Many table configurations (every game, odd and tiny minimums, every regime, raise caps of
/// one and two, two to eleven seats), honest hands with a mistake now and then: exactly the
/// expected codes every time.
#[test]
fn configuration_grid_plays_by_the_rules() {
    let mistakes: Vec<&str> = PokerEngine::mistakes().iter().map(|m| m.id).collect();
    let mut tables = 0;
    for game in rules_poker::GAMES {
        for min in [1, 2, 7, 100, 123_457] {
            for limit in ["no_limit", "pot_limit", "limit"] {
                for raises in [None, Some(1), Some(2)] {
                    for seats in [2u8, 4, 5, 11] {
                        let mut t = TableConfig::new(game);
                        t.min_bet_cents = Some(min);
                        t.seats = Some(seats);
                        t.commission = Some("per_hand".into());
                        let online = game == GameId::PokerHoldemOnline;
                        t = setting(
                            t,
                            "commission_bp",
                            Setting::Int(if online { 500 } else { 300 }),
                        );
                        t = setting(t, "limit", Setting::Text(limit.into()));
                        if let Some(r) = raises {
                            t = setting(t, "max_raises", Setting::Int(r));
                        }
                        if !online {
                            t = setting(t, "commission_cap_cents", Setting::Int(min * 3));
                        }
                        if game == GameId::PokerSintetico {
                            t = setting(t, "stardilho", Setting::Bool(true));
                        }
                        let Ok(c) = PokerEngine::configure(&t) else {
                            continue;
                        };
                        if !c.violations.is_empty()
                            || (c.config.seats as usize) < c.config.rules.min_players
                        {
                            continue;
                        }
                        tables += 1;
                        let mut ch = Chain::new(t, min as u64 * 31 + seats as u64);
                        for i in 0..120 {
                            let m = (i % 9 == 8).then(|| mistakes[i / 9 % mistakes.len()]);
                            let r = match ch.sim(m) {
                                Ok(r) => r,
                                Err(SimError::MistakeNotApplicable { .. }) => continue,
                                Err(e) => panic!("{e}"),
                            };
                            let a = PokerEngine::adjudicate(
                                &ch.cfg,
                                &mut ch.state,
                                &r,
                                &Options::default(),
                            )
                            .unwrap();
                            ch.n += 1;
                            let want: BTreeSet<String> = m
                                .map(|m| {
                                    let spec = PokerEngine::mistakes().iter().find(|s| s.id == m);
                                    spec.unwrap().codes.iter().map(|c| c.to_string()).collect()
                                })
                                .unwrap_or_default();
                            assert_eq!(
                                codes(&a),
                                want,
                                "{game} min {min} {limit} {raises:?} seats {seats}: {}",
                                serde_json::to_string(&r).unwrap()
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(tables > 100, "{tables}");
}

/// At a buy-in commission table the entry fees are house takes of the adjudication but not part
/// of `house_cents` (the engine compares `house_cents` with the pot commission only), so the
/// settlement leaves them out: `rules_core::honest_settlement` counts only the takes out of the
/// round's money (kinds not ending in `_fee`), and agrees with the simulator's settlement.
#[test]
fn entry_fees_stay_out_of_house_cents() {
    let mut t = PokerEngine::example_table(GameId::PokerHoldemOnline);
    t.commission = Some("buy_in".into());
    t.settings
        .insert("commission_bp".into(), Setting::Int(1_000));
    let mut ch = Chain::new(t, 3);
    // The first hand: everyone buys in.
    let r = ch.sim(None).unwrap();
    let a =
        PokerEngine::adjudicate(&ch.cfg, &mut ch.state.clone(), &r, &Options::default()).unwrap();
    assert_clean(&ch.cfg, &r, &a);
    assert!(a.house.iter().any(|h| h.kind == "entry_fee"));
    assert_eq!(r.settlement.as_ref().unwrap().house_cents, None);
    assert_eq!(
        rules_poker::sim::settlement(&a),
        *r.settlement.as_ref().unwrap()
    );
    assert_eq!(
        rules_core::honest_settlement(&a),
        rules_poker::sim::settlement(&a)
    );
    let mut raw = r.clone();
    raw.settlement = Some(rules_core::honest_settlement(&a));
    let b =
        PokerEngine::adjudicate(&ch.cfg, &mut ch.state.clone(), &raw, &Options::default()).unwrap();
    assert_eq!(codes(&b), BTreeSet::new());
}

/// r.80: a player who has just sat down in the seat that would hold the mão does not play that
/// hand; the mão passes to the seat on his left (unless the game would fall below four players,
/// r.24).
#[test]
fn a_newcomer_never_takes_the_mao() {
    for game in [GameId::PokerHoldem, GameId::PokerOmaha] {
        let mut ch = Chain::new(PokerEngine::example_table(game), 9);
        for _ in 0..2_000 {
            let (r, _) = ch.step(None, false);
            let button = r.events.iter().find_map(|e| match &e.kind {
                EventKind::Role { seat, .. } => *seat,
                _ => None,
            });
            let bought_in = r.events.iter().any(|e| {
                matches!(&e.kind, EventKind::Procedure { name, seat, .. }
                    if name == "buy_in" && *seat == button)
            });
            // (unless the game would fall below four players without him)
            assert!(
                !bought_in || ch.n == 1 || r.bets().count() == 4,
                "{}",
                r.round_id
            );
        }
    }
}

/// Whatever the state says is respected: the mão moves on from any seat, a seat five hands idle
/// posts the big blind it owes (r.89), a returning seat posts its missed blinds dead (r.90),
/// and after a P461 pó the opener bets at least the sum of the antes (P461 r.49).
#[test]
fn arbitrary_states_are_respected() {
    let mut forced = 0;
    let mut dead = 0;
    for game in [GameId::PokerHoldem, GameId::PokerOmaha] {
        let table = PokerEngine::example_table(game);
        let cfg = configure(&table);
        let mut rng = SimRng::new(11);
        for k in 0..400u64 {
            let mut st = PokerState {
                hands: k * 7,
                button: Some(1 + (k % 10) as u8),
                ..PokerState::default()
            };
            for s in 1..=10u8 {
                match rng.below(6) {
                    0 => {
                        st.idle_hands.insert(s, 5 + rng.below(3) as u32);
                    }
                    1 => {
                        st.missed_blinds_cents
                            .insert(s, [100, 200, 300][rng.below(3) as usize]);
                    }
                    _ => {}
                }
            }
            let r =
                PokerEngine::simulate(&table, &cfg, &st, "r".into(), 0, &mut rng, None).unwrap();
            let a =
                PokerEngine::adjudicate(&cfg, &mut st.clone(), &r, &Options::default()).unwrap();
            assert_clean(&cfg, &r, &a);
            for e in &r.events {
                if let EventKind::Decision(d) = &e.kind {
                    forced += u32::from(d.action == "post_forced_bb");
                    dead += u32::from(d.action == "post_dead");
                }
            }
        }
    }
    assert!(forced > 100 && dead > 100, "{forced} {dead}");
    // P461: a pó carried in.
    let mut t = TableConfig::new(GameId::PokerSintetico);
    t.regulation = Some("P461/2001".into());
    t.min_bet_cents = Some(1_000);
    let cfg = configure(&t);
    let mut rng = SimRng::new(12);
    for k in 0..300u64 {
        let st = PokerState {
            hands: k,
            button: Some(1 + (k % 11) as u8),
            po_carry_cents: 6_000,
            ..PokerState::default()
        };
        let r = PokerEngine::simulate(&t, &cfg, &st, "r".into(), 0, &mut rng, None).unwrap();
        let a = PokerEngine::adjudicate(&cfg, &mut st.clone(), &r, &Options::default()).unwrap();
        assert_clean(&cfg, &r, &a);
    }
}
