//! Test support (feature `testkit`): a small script language for round records, so engine tests
//! read like the rules they check.
//!
//! Commands separated by `;` or new lines, optionally prefixed by `@MS` (event time):
//! `bet ID TYPE SEAT AMOUNT [on=ID] [player=P] [chips=N] [home=N]`, `card TO CARD [down]`,
//! `dec SEAT[/HAND] ACTION [AMOUNT] [bet=ID]`, `proc NAME [VALUE] [seat=N]`, `role NAME`,
//! `fault CODE`, `void REASON`, `nmb`, `display V`, `change ID A`, `withdraw ID`, `pay ID A`,
//! `settle ID NET`, `settle_void`, `jackpot V`, `opened MS`.

use crate::{
    Adjudication, Bet, Cents, Decision, Engine, EventKind, GameId, Options, ReportedNet, Round,
    RoundEvent, Settlement, SimRng, Simulate, TableConfig,
};

pub fn round(script: &str) -> Round {
    let mut r = Round {
        round_id: "r1".into(),
        opened_at_ms: None,
        jackpot_before_cents: None,
        events: Vec::new(),
        settlement: None,
    };
    for line in script.split([';', '\n']) {
        let mut w: Vec<&str> = line.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        let mut at = None;
        if let Some(t) = w[0].strip_prefix('@') {
            at = Some(t.parse::<i64>().unwrap());
            w.remove(0);
        }
        let kv = |k: &str| {
            w.iter()
                .find_map(|x| x.strip_prefix(&format!("{k}=")).map(|v| v.to_string()))
        };
        let kind = match w[0] {
            "bet" => {
                let mut b = Bet::new(w[1], w[2], w[4].parse().unwrap());
                if w[3] != "-" {
                    b = b.seat(w[3].parse().unwrap());
                }
                if let Some(o) = kv("on") {
                    b = b.on_bet(&o);
                }
                if let Some(p) = kv("player") {
                    b = b.player(&p);
                }
                if let Some(c) = kv("chips") {
                    b = b.chips(c.parse().unwrap());
                }
                if let Some(h) = kv("home") {
                    b = b.attr("home_seat", &h);
                }
                EventKind::Bet(b)
            }
            "card" => EventKind::Card {
                to: w[1].parse().unwrap(),
                card: w[2].parse().unwrap(),
                face_up: !w.contains(&"down"),
            },
            "dec" => {
                let (s, h) = match w[1].split_once('/') {
                    Some((s, h)) => (s.parse().unwrap(), h.parse().unwrap()),
                    None => (w[1].parse().unwrap(), 1),
                };
                let mut d = Decision::new(s, w[2]).hand(h);
                if let Some(a) = w.get(3).and_then(|a| a.parse::<i64>().ok()) {
                    d = d.amount(a);
                }
                if let Some(b) = kv("bet") {
                    d = d.bet(&b);
                }
                EventKind::Decision(d)
            }
            "proc" => EventKind::Procedure {
                name: w[1].to_string(),
                value: w.get(2).filter(|v| !v.contains('=')).map(|v| v.to_string()),
                seat: kv("seat").map(|s| s.parse().unwrap()),
                amount_cents: None,
            },
            "role" => EventKind::Role {
                role: w[1].to_string(),
                seat: None,
                player: None,
            },
            "fault" => EventKind::Fault {
                code: w[1].to_string(),
                seat: kv("seat").map(|s| s.parse().unwrap()),
                detail: None,
            },
            "void" => EventKind::Void {
                reason: w[1].to_string(),
            },
            "nmb" => EventKind::NoMoreBets,
            "display" => EventKind::JackpotDisplay {
                value_cents: w[1].parse().unwrap(),
            },
            "change" => EventKind::BetChanged {
                bet_id: w[1].into(),
                amount_cents: w[2].parse().unwrap(),
            },
            "withdraw" => EventKind::BetWithdrawn {
                bet_id: w[1].into(),
            },
            "pay" => EventKind::Pay {
                bet_id: w[1].into(),
                amount_cents: w[2].parse().unwrap(),
            },
            "settle" => {
                let s = r.settlement.get_or_insert_with(Settlement::default);
                s.results.push(ReportedNet {
                    bet_id: w[1].into(),
                    net_cents: w[2].parse().unwrap(),
                });
                continue;
            }
            "settle_void" => {
                r.settlement.get_or_insert_with(Settlement::default).void = true;
                continue;
            }
            "jackpot" => {
                r.jackpot_before_cents = Some(w[1].parse().unwrap());
                continue;
            }
            "opened" => {
                r.opened_at_ms = Some(w[1].parse().unwrap());
                continue;
            }
            other => panic!("unknown script command {other}"),
        };
        r.events.push(RoundEvent { at_ms: at, kind });
    }
    r
}

pub fn table(json: &str) -> TableConfig {
    serde_json::from_str(json).unwrap()
}

pub fn explain() -> Options {
    Options { explain: true }
}

pub fn codes(a: &Adjudication) -> Vec<String> {
    a.violations.iter().map(|v| v.code.to_string()).collect()
}

pub fn net(a: &Adjudication, id: &str) -> i64 {
    a.bet(id)
        .unwrap_or_else(|| panic!("no bet {id}"))
        .due_net_cents
}

/// A round as pretty JSON (for failure messages).
pub fn json(r: &Round) -> String {
    serde_json::to_string_pretty(r).expect("a round serializes")
}

/// The finding codes the simulated mistake `id` of engine `E` must give, sorted. Panics on an
/// unknown id (a test's mistake).
pub fn mistake_codes<E: Simulate>(id: &str) -> Vec<String> {
    let spec = E::mistakes()
        .iter()
        .find(|m| m.id == id)
        .unwrap_or_else(|| panic!("no mistake {id}"));
    let mut want: Vec<String> = spec.codes.iter().map(|c| c.to_string()).collect();
    want.sort();
    want
}

/// The codes of an adjudication's violations and discrepancies, sorted (repeats kept).
pub fn finding_codes(a: &Adjudication) -> Vec<String> {
    let mut v: Vec<String> = a
        .violations
        .iter()
        .map(|v| v.code.to_string())
        .chain(a.discrepancies.iter().map(|d| d.code.to_string()))
        .collect();
    v.sort();
    v
}

/// One simulated table for the simulators' tests: plays rounds with [`Simulate`], adjudicates them
/// to advance the state, carries the table jackpot's pool from round to round as the ledger's
/// accounts would, and checks what every simulated round must satisfy (simulating leaves the
/// state alone, the jackpot value is the caller's, every event is dated, in order, after the
/// previous round).
pub struct SimTable<E: Engine> {
    pub table: TableConfig,
    pub cfg: E::Config,
    pub state: E::State,
    /// The table jackpot's value before the next round (tables with a jackpot).
    pub pool: Option<Cents>,
    pub t: i64,
    pub n: u64,
}

impl<E: Engine + Simulate> SimTable<E> {
    /// The engine's example table for `game`.
    pub fn new(game: GameId) -> Self {
        Self::with(E::example_table(game))
    }

    /// A table that must configure without violations.
    pub fn with(table: TableConfig) -> Self {
        let c = E::configure(&table).unwrap_or_else(|e| panic!("{}: {e}", table.game));
        assert!(
            c.violations.is_empty(),
            "{}: {:?}",
            table.game,
            c.violations
        );
        let pool = table.jackpot.as_ref().map(|j| j.start_value_cents);
        SimTable {
            table,
            cfg: c.config,
            state: E::State::default(),
            pool,
            t: 1_700_000_000_000,
            n: 0,
        }
    }

    /// One seed of a simulator's mistake check: `warm` honest rounds with no finding, then one
    /// round with the mistake `id`, whose finding codes (as `findings` lists them) must be exactly
    /// `want`, then ten honest rounds with none: the session goes on clean.
    pub fn check_mistake(
        &mut self,
        rng: &mut SimRng,
        id: &str,
        want: &[String],
        warm: u64,
        seed: u64,
        findings: impl Fn(&Adjudication) -> Vec<String>,
    ) {
        let game = self.table.game;
        for _ in 0..warm {
            let (_, a) = self.play(rng, None);
            assert!(findings(&a).is_empty());
        }
        let (r, a) = self.play(rng, Some(id));
        assert_eq!(
            findings(&a),
            want,
            "{game} {id} seed {seed}: {:?} {:?}\n{}",
            a.violations,
            a.discrepancies,
            json(&r)
        );
        for _ in 0..10 {
            let (r, a) = self.play(rng, None);
            assert!(
                findings(&a).is_empty(),
                "{game} after {id} seed {seed}: {:?}\n{}",
                findings(&a),
                json(&r)
            );
        }
    }

    /// Simulate one round and advance the state (and the pool) by adjudicating it.
    pub fn play(&mut self, rng: &mut SimRng, mistake: Option<&str>) -> (Round, Adjudication) {
        self.n += 1;
        let before = self.state.clone();
        let r = E::simulate_with_jackpot(
            &self.table,
            &self.cfg,
            &self.state,
            format!("r{}", self.n).into(),
            self.t,
            rng,
            mistake,
            self.pool,
        )
        .unwrap_or_else(|e| panic!("{} {mistake:?}: {e}", self.table.game));
        assert_eq!(self.state, before, "simulate must not modify the state");
        assert_eq!(r.jackpot_before_cents, self.pool);
        let a = E::adjudicate(&self.cfg, &mut self.state, &r, &Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", self.table.game, json(&r)));
        if let Some(j) = &a.jackpot {
            self.pool = Some(j.value_after_e4 / 10_000);
        }
        let times: Vec<i64> = r.events.iter().filter_map(|e| e.at_ms).collect();
        assert_eq!(times.len(), r.events.len(), "every event is dated");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{}", json(&r));
        assert!(times[0] >= self.t);
        self.t = times.last().copied().unwrap_or(self.t) + 5_000 + rng.below(20_000) as i64;
        (r, a)
    }
}
