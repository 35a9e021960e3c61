//! # casino-sim: a whole casino session, played by the rules
//!
//! Tables of every game play rounds through their engines' simulators (shuffled shoes, spun
//! wheels, thrown dice, plausible decisions, honest settlements computed by the engines), a slot
//! floor plays games at its models' approved returns with jackpots and a superjackpot across two
//! casinos, and the plan injects chosen mistakes: a payout error at a table, a machine that
//! fails by force majeure with its captive value transferred to an ineligible pool (booked as
//! carried out, P217/2007 T.III r.5, and flagged), a misreported captive value, a meter that goes
//! backwards; two machines report their significant events (doors, power, tilts, link, hand
//! pays, progressives, software, configuration, games), one of them declares events lost and
//! the other pays credits by hand without its hand-paid meter recording it. The session says in
//! advance which findings the audit must produce: exactly those.
//!
//! The output is what the devices, the operator and the inspectorate sign: a list of
//! [`DeviceSpec`]s to register and a time-ordered list of unsigned [`SimEvent`]s, each naming
//! its signer. `ledger-agent` signs and streams them. Pure and deterministic for a plan.

use std::collections::BTreeMap;

use jackpot::sim::{Floor, FloorEvent, FloorMachine, FloorPlan, Signer};
use jackpot::{Book, EventCtx, ModelApproved, PoolConfigured, PoolKind};
use ledger_convert::to_proto;
use ledger_core::DeviceKind;
use ledger_proto::v1::event_body::Payload as P;
use rules::ConfiguredTable;
use rules_core::{GameId, Id, Options, SimError, SimRng, TableConfig};

/// A device to register (by the operator, with its key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSpec {
    pub device_id: String,
    pub kind: DeviceKind,
    pub casino_id: String,
    pub table_ids: Vec<String>,
    pub machine_id: String,
    pub model_id: String,
    pub bet_values_cents: Vec<i64>,
    pub description: String,
}

/// One unsigned event: who signs it, when it happened, what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct SimEvent {
    pub device_id: String,
    pub occurred_at_ms: i64,
    pub payload: P,
}

/// A finding the audit must produce.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expected {
    pub code: String,
    /// The table, machine or pool concerned.
    pub subject: String,
    /// The round, for table findings.
    pub round_id: Option<String>,
    /// Why (the mistake injected).
    pub because: String,
}

/// A table of the session.
#[derive(Clone, Debug)]
pub struct TablePlan {
    pub table_id: String,
    pub casino_id: String,
    /// The table system's device id.
    pub device_id: String,
    pub config: TableConfig,
}

/// The force-majeure story of the floor: `machine` fails; the casino transfers its pool's
/// captive value to `ineligible_pool` (a group of other models, while machines of its model and
/// bets exist, with no authorisation: `SLOT_TRANSFER_TARGET_INVALID`, P217/2007 T.III r.6). The
/// ledger books the transfer as carried out (r.5: the source restarts at 0, the target holds the
/// whole value), so the target's later declarations, which count it, are clean.
#[derive(Clone, Debug)]
pub struct TransferStory {
    pub machine: String,
    pub pool: String,
    pub ineligible_pool: String,
}

/// What to play.
#[derive(Clone, Debug)]
pub struct SessionPlan {
    pub seed: u64,
    /// When the session starts (UTC ms). Every event happens after it.
    pub start_ms: i64,
    /// The operator and regulator principal ids (as in ledgerd's configuration).
    pub operator_id: String,
    pub regulator_id: String,
    pub tables: Vec<TablePlan>,
    pub rounds_per_table: usize,
    /// Pause between two rounds of one table (ms).
    pub round_gap_ms: i64,
    /// Mistakes: (table id, round number from 0, mistake id of that game's simulator).
    pub table_mistakes: Vec<(String, usize, String)>,
    pub floor: FloorPlan,
    /// Games each machine plays per floor step.
    pub games_per_step: u32,
    /// Pool id → one in how many games it is won.
    pub hit_odds: Vec<(String, u64)>,
    pub transfer: Option<TransferStory>,
    /// A pool whose captive value one report gets wrong by this many cents.
    pub misreported_pool: Option<(String, i64)>,
    /// A machine one of whose readings goes backwards.
    pub meter_backwards: Option<String>,
    /// (machine, pool): an honest episode in which the machine's link to the pool is lost for
    /// a while (force majeure of its part in that pool only, `MachineFault.pool_ids`; P217/2007
    /// T.III r.6) and then restored; the machine plays on. No finding.
    pub pool_link_episode: Option<(String, String)>,
    /// Machines that report significant events, and the mistakes planted on them.
    pub significant: SignificantPlan,
}

/// The floor's significant events ([`jackpot::sim::Floor::report_events`]).
#[derive(Clone, Debug, Default)]
pub struct SignificantPlan {
    /// Machines that report their significant events (honest episodes every step).
    pub machines: Vec<String>,
    /// A machine whose agent declares events lost once (`SLOT_EVENTS_LOST`).
    pub lost_events: Option<String>,
    /// A machine on which cancelled credits are paid by hand once without its hand-paid meter
    /// recording it (`SLOT_HANDPAY_METER_MISMATCH`).
    pub unmetered_hand_pay: Option<String>,
}

/// A generated session. Its events are [`SimEvent`]s, or whatever [`generate_as`] made of them.
#[derive(Clone, Debug)]
pub struct Session<E = SimEvent> {
    pub devices: Vec<DeviceSpec>,
    /// Every event, in time order (and, at equal times, in generation order).
    pub events: Vec<E>,
    /// The findings the audit must produce, sorted.
    pub expected: Vec<Expected>,
    /// Rounds played, and how many of them honestly.
    pub rounds: usize,
    pub honest_rounds: usize,
    /// When the last event happens.
    pub end_ms: i64,
}

/// Why a session could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("table {table}: {error}")]
    Config {
        table: String,
        error: rules_core::ConfigError,
    },
    #[error("table {table}, round {round}: {error}")]
    Sim {
        table: String,
        round: String,
        error: SimError,
    },
    #[error("table {table}, round {round}: the simulated round does not adjudicate: {error}")]
    Round {
        table: String,
        round: String,
        error: rules_core::RoundError,
    },
}

struct Tagged<E> {
    at_ms: i64,
    order: u64,
    event: E,
}

/// Play `plan`.
pub fn generate(plan: &SessionPlan) -> Result<Session, SessionError> {
    generate_as(plan, |device, at_ms, payload| SimEvent {
        device_id: device.to_string(),
        occurred_at_ms: at_ms,
        payload,
    })
}

/// Play `plan`, keeping each event as `make` makes it from its signer, time and payload (called
/// in generation order). The same session as [`generate`]'s, event for event; a caller that
/// keeps a compact form of each (the encoded payload) holds a fraction of the memory that a
/// [`SimEvent`] takes (its payload is as large as the largest event, with every id in a string
/// of its own).
pub fn generate_as<E>(
    plan: &SessionPlan,
    mut make: impl FnMut(&str, i64, P) -> E,
) -> Result<Session<E>, SessionError> {
    let mut rng = SimRng::new(plan.seed);
    let mut out: Vec<Tagged<E>> = Vec::new();
    let mut order = 0u64;
    let mut push = |out: &mut Vec<Tagged<E>>, device: &str, at_ms: i64, payload: P| {
        order += 1;
        out.push(Tagged {
            at_ms,
            order,
            event: make(device, at_ms, payload),
        });
    };
    let mut expected = Vec::new();
    let mut devices = Vec::new();
    let (mut rounds, mut honest_rounds) = (0usize, 0usize);
    let mut end_ms = plan.start_ms;

    // ---- tables
    for (t_index, t) in plan.tables.iter().enumerate() {
        devices.push(DeviceSpec {
            device_id: t.device_id.clone(),
            kind: DeviceKind::Table,
            casino_id: t.casino_id.clone(),
            table_ids: vec![t.table_id.clone()],
            machine_id: String::new(),
            model_id: String::new(),
            bet_values_cents: Vec::new(),
            description: format!("{} table system", t.config.game),
        });
        let table =
            ConfiguredTable::new(t.config.clone()).map_err(|error| SessionError::Config {
                table: t.table_id.clone(),
                error,
            })?;
        let mut t_rng = rng.fork(t_index as u64);
        // Tables open a few seconds apart.
        let mut ms = plan.start_ms + 1_000 + t_index as i64 * 3_000;
        // A table jackpot is a pool of the operator's, fed by the engine's results; configured
        // before the table names it (a table device may name only a pool that lists its table).
        let mut shadow = Book::new();
        let pool = t.config.jackpot.as_ref().and_then(|j| {
            let pool_id = j.pool_id.clone()?;
            let p = PoolConfigured {
                pool_id: pool_id.as_str().into(),
                kind: PoolKind::TableJackpot,
                casino_ids: vec![t.casino_id.as_str().into()],
                member_machine_ids: vec![],
                member_table_ids: vec![t.table_id.as_str().into()],
                contribution_bp: j.increment_bp,
                start_value_cents: j.start_value_cents,
                reset_value_cents: j.start_value_cents,
            };
            let e = jackpot::Event::PoolConfigured(p);
            let _ = shadow.apply(
                &e,
                EventCtx {
                    ledger_index: 1,
                    at_ms: ms,
                },
            );
            let payload = to_proto::jackpot_event(&e)?;
            Some((pool_id, payload))
        });
        if let Some((_, payload)) = &pool {
            push(&mut out, &plan.operator_id, ms, payload.clone());
        }
        push(
            &mut out,
            &t.device_id,
            ms,
            to_proto::table_configured(&t.table_id, &t.casino_id, &t.config),
        );
        let mut shadow_index = 1u64;
        let mut state = table.fresh_state();
        for i in 0..plan.rounds_per_table {
            let round_id = round_id(&t.table_id, i);
            let mistake = plan
                .table_mistakes
                .iter()
                .find(|(table, n, _)| table == &t.table_id && *n == i)
                .map(|(_, _, m)| m.as_str());
            let jackpot_before = pool.as_ref().and_then(|(id, _)| {
                shadow
                    .pool(id)
                    .map(|p| jackpot::amount::to_cents(p.captive_e4))
            });
            let round = table
                .simulate_with_jackpot(
                    &state,
                    round_id.as_str().into(),
                    ms + 1_000,
                    &mut t_rng,
                    mistake,
                    jackpot_before,
                )
                .map_err(|error| SessionError::Sim {
                    table: t.table_id.clone(),
                    round: round_id.clone(),
                    error,
                })?;
            let adj = table
                .adjudicate(&mut state, &round, &Options::default())
                .map_err(|error| SessionError::Round {
                    table: t.table_id.clone(),
                    round: round_id.clone(),
                    error,
                })?;
            if let (Some((pool_id, _)), Some(account)) = (&pool, &adj.jackpot) {
                shadow_index += 1;
                let e = jackpot::Event::TableJackpotRound(jackpot::TableJackpotRound {
                    pool_id: pool_id.as_str().into(),
                    table_id: t.table_id.as_str().into(),
                    round_id: round_id.as_str().into(),
                    game: t.config.game,
                    account: account.clone(),
                    wins: adj.jackpot_wins.clone(),
                });
                let _ = shadow.apply(
                    &e,
                    EventCtx {
                        ledger_index: shadow_index,
                        at_ms: ms,
                    },
                );
            }
            let first = round
                .events
                .iter()
                .filter_map(|e| e.at_ms)
                .min()
                .unwrap_or(ms + 1_000);
            push(
                &mut out,
                &t.device_id,
                first - 1,
                to_proto::round_opened(&t.table_id, &round_id),
            );
            let mut last = first;
            for e in &round.events {
                let at = e.at_ms.unwrap_or(last).max(last);
                last = at;
                push(
                    &mut out,
                    &t.device_id,
                    at,
                    to_proto::round_event(&t.table_id, &round_id, e),
                );
            }
            let settlement = round.settlement.clone().unwrap_or_default();
            push(
                &mut out,
                &t.device_id,
                last + 1,
                to_proto::round_settled(
                    &t.table_id,
                    &round_id,
                    &settlement,
                    "operator system failure",
                ),
            );
            rounds += 1;
            match mistake {
                None => honest_rounds += 1,
                Some(m) => {
                    let spec = rules::mistakes(t.config.game)
                        .into_iter()
                        .find(|s| s.id == m);
                    let mut codes: Vec<&str> = spec.map(|s| s.codes.to_vec()).unwrap_or_default();
                    codes.sort_unstable();
                    codes.dedup();
                    for code in codes {
                        expected.push(Expected {
                            code: code.to_string(),
                            subject: t.table_id.clone(),
                            round_id: Some(round_id.clone()),
                            because: format!("mistake `{m}` injected"),
                        });
                    }
                }
            }
            ms = last + 1 + plan.round_gap_ms;
        }
        end_ms = end_ms.max(ms);
    }

    // ---- the slot floor, over the same stretch of time
    if !plan.floor.machines.is_empty() {
        for m in &plan.floor.machines {
            devices.push(DeviceSpec {
                device_id: m.machine_id.to_string(),
                kind: DeviceKind::Machine,
                casino_id: m.casino_id.to_string(),
                table_ids: Vec::new(),
                machine_id: m.machine_id.to_string(),
                model_id: m.model_id.to_string(),
                bet_values_cents: m.bet_values_cents.clone(),
                description: format!("slot machine, model {}", m.model_id),
            });
        }
        let mut floor = Floor::new(plan.floor.clone(), rng.next_u64(), plan.start_ms + 500);
        for (pool, odds) in &plan.hit_odds {
            floor.set_hit_odds(pool, *odds);
        }
        for m in &plan.significant.machines {
            floor.report_events(m);
        }
        let mut planted =
            plan.significant.lost_events.is_none() && plan.significant.unmetered_hand_pay.is_none();
        let two_thirds = plan.start_ms + (end_ms - plan.start_ms) / 3 * 2;
        let mut events: Vec<FloorEvent> = floor.setup();
        let halfway = plan.start_ms + (end_ms - plan.start_ms) / 2;
        let mut story_told = plan.transfer.is_none();
        let mut misreported = plan.misreported_pool.is_none();
        let mut backwards = plan.meter_backwards.is_none();
        // The link episode, only for a machine and pool of this floor.
        let link = plan.pool_link_episode.as_ref().filter(|(m, p)| {
            plan.floor
                .machines
                .iter()
                .any(|x| x.machine_id.as_ref() == m.as_str())
                && plan
                    .floor
                    .pools
                    .iter()
                    .any(|x| x.pool_id.as_ref() == p.as_str())
        });
        let (link_down_at, link_up_at) = (
            plan.start_ms + (end_ms - plan.start_ms) / 5,
            plan.start_ms + (end_ms - plan.start_ms) / 4,
        );
        let mut link_state = if link.is_some() { 0 } else { 2 };
        while floor.now_ms() < end_ms {
            events.extend(floor.play(plan.games_per_step));
            if let Some((m, p)) = link {
                if link_state == 0 && floor.now_ms() > link_down_at {
                    events.extend(floor.pool_link(
                        &m.as_str().into(),
                        p,
                        false,
                        "progressive link cable cut: this machine cannot win the superjackpot",
                    ));
                    link_state = 1;
                } else if link_state == 1 && floor.now_ms() > link_up_at {
                    events.extend(floor.pool_link(
                        &m.as_str().into(),
                        p,
                        true,
                        "progressive link repaired and verified",
                    ));
                    link_state = 2;
                }
            }
            if !backwards && floor.now_ms() > plan.start_ms + (end_ms - plan.start_ms) / 3 {
                if let Some(m) = &plan.meter_backwards {
                    events.extend(floor.backwards_reading(&m.as_str().into(), 50_000));
                    // The casino takes the machine out, has the meters verified, and restores it
                    // before it is played again (r.9).
                    events.extend(floor.restore(
                        &m.as_str().into(),
                        "meters verified by the technician after an unexplained decrease",
                    ));
                    expected.push(Expected {
                        code: "SLOT_METER_DECREASED".into(),
                        subject: m.clone(),
                        round_id: None,
                        because: "a reading 500.00 below the previous one, without a RAM clear"
                            .into(),
                    });
                }
                backwards = true;
            }
            if !misreported && floor.now_ms() > halfway {
                if let Some((pool, off)) = &plan.misreported_pool {
                    events.extend(floor.report_captive(pool, *off));
                    expected.push(Expected {
                        code: "SLOT_JACKPOT_CAPTIVE_MISMATCH".into(),
                        subject: pool.clone(),
                        round_id: None,
                        because: format!("captive value reported {off} cents off"),
                    });
                }
                misreported = true;
            }
            if !planted && floor.now_ms() > two_thirds {
                if let Some(m) = &plan.significant.lost_events {
                    events.extend(floor.lose_events(&m.as_str().into(), 12));
                    expected.push(Expected {
                        code: "SLOT_EVENTS_LOST".into(),
                        subject: m.clone(),
                        round_id: None,
                        because: "the machine's agent declared 12 events lost (buffer overflow)"
                            .into(),
                    });
                }
                if let Some(m) = &plan.significant.unmetered_hand_pay {
                    events.extend(floor.unmetered_hand_pay(&m.as_str().into(), 25_000));
                    expected.push(Expected {
                        code: "SLOT_HANDPAY_METER_MISMATCH".into(),
                        subject: m.clone(),
                        round_id: None,
                        because: "250.00 paid by hand, not on the hand-paid meter".into(),
                    });
                }
                planted = true;
            }
            if !story_told && floor.now_ms() > halfway {
                if let Some(s) = &plan.transfer {
                    events.extend(floor.fail(&s.machine.as_str().into(), "destroyed", true));
                    events.extend(floor.transfer(
                        &format!("TR-{}-1", s.pool),
                        &s.pool,
                        &s.ineligible_pool,
                        None,
                    ));
                    expected.push(Expected {
                        code: "SLOT_TRANSFER_TARGET_INVALID".into(),
                        subject: s.pool.clone(),
                        round_id: None,
                        because: format!(
                            "transfer of {}'s captive value to {}, which is not of the same model and \
                             bets (booked as carried out)",
                            s.pool, s.ineligible_pool
                        ),
                    });
                }
                story_told = true;
            }
        }
        for e in events {
            let Some(payload) = to_proto::jackpot_event(&e.event) else {
                continue;
            };
            let device = match &e.signer {
                Signer::Machine(m) => m.to_string(),
                Signer::Operator => plan.operator_id.clone(),
                Signer::Regulator => plan.regulator_id.clone(),
            };
            push(&mut out, &device, e.at_ms, payload);
            end_ms = end_ms.max(e.at_ms);
        }
    }

    out.sort_by_key(|t| (t.at_ms, t.order));
    expected.sort();
    Ok(Session {
        devices,
        events: out.into_iter().map(|t| t.event).collect(),
        expected,
        rounds,
        honest_rounds,
        end_ms,
    })
}

/// The two casinos of the demo.
pub const CASINOS: [&str; 2] = ["casino-lisboa", "casino-estoril"];

/// The standard session of the demo and the end-to-end tests: one table of every game of the
/// regulations over two casinos, `rounds_per_table` rounds each, a slot floor of eight machines
/// with two jackpots of the same model and bets and a superjackpot across both casinos, and the
/// The id of round `i` (from 0) at a table of the simulated session.
pub fn round_id(table_id: &str, i: usize) -> String {
    format!("{table_id}-{i:05}")
}

/// known mistakes (`with_mistakes`).
pub fn standard_plan(
    seed: u64,
    start_ms: i64,
    rounds_per_table: usize,
    with_mistakes: bool,
    operator_id: &str,
    regulator_id: &str,
) -> SessionPlan {
    let mut tables = Vec::new();
    for (i, game) in GameId::ALL
        .iter()
        .copied()
        .filter(|g| g.is_table_game())
        .enumerate()
    {
        let Some(mut config) = rules::example_table(game) else {
            continue;
        };
        let casino = CASINOS[i % 2];
        let table_id = format!("T{:02}-{}", i + 1, game.as_str().replace('_', "-"));
        config.table_id = Some(table_id.clone());
        config.casino_id = Some(casino.to_string());
        if let Some(j) = config.jackpot.as_mut() {
            j.pool_id = Some(format!("TJP-{table_id}"));
        }
        tables.push(TablePlan {
            device_id: format!("dev-{table_id}"),
            table_id,
            casino_id: casino.to_string(),
            config,
        });
    }
    let find = |game: GameId| {
        tables
            .iter()
            .find(|t| t.config.game == game)
            .map(|t| t.table_id.clone())
            .unwrap_or_default()
    };
    let mut table_mistakes = Vec::new();
    if with_mistakes && rounds_per_table > 10 {
        let at = |k: usize| (rounds_per_table * k / 7).max(1);
        table_mistakes = vec![
            (
                find(GameId::RouletteFrench),
                at(1),
                "overpay_straight".to_string(),
            ),
            (
                find(GameId::Blackjack),
                at(2),
                "dealer_hits_soft_17".to_string(),
            ),
            (
                find(GameId::BaccaratPuntoBanco),
                at(3),
                "third_card_against_tableau".to_string(),
            ),
            (
                find(GameId::PokerHoldem),
                at(4),
                "short_paid_split_pot".to_string(),
            ),
            (
                find(GameId::Craps),
                at(5),
                "odds_paid_even_money".to_string(),
            ),
            (
                find(GameId::BaccaratCheminDeFer),
                at(6),
                "late_bet".to_string(),
            ),
        ];
    }
    let bets = vec![10, 20, 50, 100];
    let machine = |id: &str, casino: &str, model: &str, rollover: u64, start: u64, games: bool| {
        FloorMachine {
            machine_id: id.into(),
            casino_id: casino.into(),
            model_id: model.into(),
            bet_values_cents: bets.clone(),
            rollover,
            initial_coin_in: start,
            report_games: games,
        }
    };
    let pool =
        |id: &str, kind: PoolKind, casinos: &[&str], members: &[&str], bp: u32, start: i64| {
            PoolConfigured {
                pool_id: id.into(),
                kind,
                casino_ids: casinos.iter().map(|c| Id::from(*c)).collect(),
                member_machine_ids: members.iter().map(|c| Id::from(*c)).collect(),
                member_table_ids: vec![],
                contribution_bp: bp,
                start_value_cents: start,
                reset_value_cents: start,
            }
        };
    let [lisboa, estoril] = CASINOS;
    let floor = FloorPlan {
        models: vec![
            ModelApproved {
                model_id: "AZTEC-GOLD-5".into(),
                theoretical_rtp_bp: 9_200,
                bet_values_cents: bets.clone(),
                approval_ref: "IGJ/2024/0173".into(),
            },
            ModelApproved {
                model_id: "LUCKY-SEVENS-3".into(),
                theoretical_rtp_bp: 8_850,
                bet_values_cents: bets.clone(),
                approval_ref: "IGJ/2023/0941".into(),
            },
        ],
        machines: vec![
            machine(
                "M-LX-01",
                lisboa,
                "AZTEC-GOLD-5",
                100_000_000,
                99_950_000,
                true,
            ),
            machine("M-LX-02", lisboa, "AZTEC-GOLD-5", 0, 12_345_600, false),
            machine("M-LX-03", lisboa, "LUCKY-SEVENS-3", 0, 8_000_000, false),
            machine("M-LX-04", lisboa, "LUCKY-SEVENS-3", 0, 3_500_000, false),
            machine("M-ES-01", estoril, "AZTEC-GOLD-5", 0, 7_000_000, false),
            machine("M-ES-02", estoril, "AZTEC-GOLD-5", 0, 9_100_000, false),
            machine("M-ES-03", estoril, "LUCKY-SEVENS-3", 0, 2_000_000, false),
            machine("M-ES-04", estoril, "LUCKY-SEVENS-3", 0, 4_400_000, false),
        ],
        pools: vec![
            pool(
                "JP-LX-02",
                PoolKind::Jackpot,
                &[lisboa],
                &["M-LX-02"],
                120,
                40_000,
            ),
            pool(
                "JP-ES-02",
                PoolKind::Jackpot,
                &[estoril],
                &["M-ES-02"],
                120,
                40_000,
            ),
            pool(
                "SJP-TEJO",
                PoolKind::Superjackpot,
                &[lisboa, estoril],
                &[
                    "M-LX-01", "M-LX-03", "M-LX-04", "M-ES-01", "M-ES-03", "M-ES-04",
                ],
                80,
                300_000,
            ),
        ],
    };
    SessionPlan {
        seed,
        start_ms,
        operator_id: operator_id.to_string(),
        regulator_id: regulator_id.to_string(),
        tables,
        rounds_per_table,
        round_gap_ms: 15_000,
        table_mistakes,
        floor,
        games_per_step: 40,
        hit_odds: vec![
            ("JP-LX-02".into(), 4_000),
            ("JP-ES-02".into(), 4_000),
            ("SJP-TEJO".into(), 12_000),
        ],
        transfer: with_mistakes.then(|| TransferStory {
            machine: "M-LX-02".into(),
            pool: "JP-LX-02".into(),
            ineligible_pool: "SJP-TEJO".into(),
        }),
        misreported_pool: with_mistakes.then(|| ("SJP-TEJO".to_string(), 1_500)),
        meter_backwards: with_mistakes.then(|| "M-ES-03".to_string()),
        pool_link_episode: Some(("M-ES-04".to_string(), "SJP-TEJO".to_string())),
        significant: SignificantPlan {
            machines: vec!["M-LX-01".into(), "M-ES-02".into()],
            lost_events: with_mistakes.then(|| "M-ES-02".to_string()),
            unmetered_hand_pay: with_mistakes.then(|| "M-LX-01".to_string()),
        },
    }
}

/// The session's duration for `rounds_per_table` (to start it early enough that every event is
/// in the ledger's past).
pub fn duration_ms(plan: &SessionPlan) -> Result<i64, SessionError> {
    let s = generate(plan)?;
    Ok(s.end_ms - plan.start_ms)
}

/// Count the events per signer (for summaries).
pub fn events_per_device(events: &[SimEvent]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in events {
        *m.entry(e.device_id.clone()).or_insert(0) += 1;
    }
    m
}
