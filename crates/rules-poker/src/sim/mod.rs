//! # Simulation: non-banked poker played by the rules
//!
//! [`rules_core::Simulate`] for [`PokerEngine`]: hands of hold'em, omaha, póquer sintético and
//! hold'em online as a casino records them, with the settlement an honest casino reports, or
//! with one chosen mistake whose findings are known in advance.
//!
//! ## The table
//!
//! [`crate::PokerState`] carries no seating and no caves, so who sits where is derived from a
//! stable key of the table (game, table id, casino id) and the number of hands the state has
//! seen ([`seating`]): players arrive (`buy_in`, with the `entry_fee` at buy-in commission
//! tables), stay for stints of a few dozen hands, sometimes step away for a few hands
//! (`absent`: they owe the blinds that pass them and post them dead on return, r.90) and leave
//! (`leave`). Land tables deal 4-10 players (r.24, r.6), online tables 2-10 (Reg806 r.5, r.7).
//! Caves are drawn per hand: mostly 20-100 big blinds, one player in eight short (4-15, the
//! all-ins and side pots), one in five deep.
//!
//! ## The hand
//!
//! * The mão/button moves to the next seat in the hand clockwise from the state's (r.29, r.30;
//!   Reg806 r.47, r.64); a new online table draws it (`button_draw`, Reg806 r.46), a new land
//!   table gives it to the first player (r.29).
//! * Forced bets by the right seats and amounts: the mão holder's small blind and his left
//!   neighbour's big blind (r.81-r.83); online the first and second seats left of the button
//!   (Reg806 r.22, r.48); the big blind owed after five idle hands (r.89) and the missed blinds
//!   (r.90) as the state says; the sintético antes (r.102).
//! * A shuffled 52-card deck (28 at sintético, r.95), hole cards one per pass from the small
//!   blind / mão clockwise (r.35, r.77; Reg806 r.49), a burn before flop, turn and river at the
//!   land tables (r.41, r.43, r.45), none online or at sintético (r.100), whose five common
//!   cards come one at a time from the bottom with a betting round after each (r.107, r.108).
//! * Betting in the engine's turn order. Each player has a style (how loose, how aggressive,
//!   stable over his stint) and reads his hand: pairs and high cards before the flop, the made
//!   hand's category after. He folds weak hands facing bets (more readily facing big ones),
//!   calls, bets or raises his strong ones with pot-fraction sizes, within the table's regime
//!   (half pot, pot, or cave: r.21; Reg806 r.24), the minimum opening bet (r.20) and raise
//!   (the table minimum, or the last raise if larger: r.86) and the raise cap (r.87, r.88;
//!   Reg806 r.38); short stacks push. All-ins for different amounts make side pots; a bet
//!   nobody calls wins the pot (r.51).
//! * Ties: one hand in about thirty is dealt so that two players hold the same ranks in other
//!   suits on a board with at most two cards of a suit (no flush possible): equal hands, the
//!   best at the table; they play on to the showdown and split. Boards that play make more.
//! * Sintético: the estardilho / restardilho (r.106) where the table allows it.
//! * Online: a player sometimes times out (`timeout`, checked or folded, Reg806 r.45) or loses
//!   his own connection (`player_disconnect` fault, then `disconnect` decisions: the hand stands,
//!   r.73); rarely the operator's system fails (`system_failure`: the hand is null, r.72).
//! * Land incidents: rarely a hole card turned while dealing (r.70(c): the seat is served last
//!   and the card is the flop's burn), or a misdeal (the hand is null, r.69, r.109).
//! * Timestamps from `start_ms`: a few hundred milliseconds per card, seconds per decision.
//! * The settlement: the engine adjudicates a clone of the state and the casino reports every
//!   seat's due net and the pot commission ([`rules_core::honest_settlement`]; fees charged at
//!   buy-in are recorded by their procedures, not in `house_cents`, see [`settlement`]).
//!
//! ## Mistakes
//!
//! [`MISTAKES`]; the adjudication of the mistaken hand contains exactly these codes (violations
//! and discrepancies together), and the hands after it none:
//!
//! | id | tables | steering | codes |
//! |---|---|---|---|
//! | `short_paid_split_pot` | all | a rigged tie played to the showdown; one of the two winners is reported a unit short (the table minimum at land tables, r.67; 1 cent to the minimum online) | `POKER_PAYOUT_MISMATCH` (the discrepancy on his bet; at land tables usually also a `review` violation of the same code, the split resting on reading N10) |
//! | `commission_over_cap` | per-hand commission with a cap (P217 r.7(a)) | loose, aggressive play with deep caves until the cap binds; the settlement is the honest one of the same table without the cap | `POKER_COMMISSION_WRONG` (a `review` violation when the cap is shared by several payments, N7, or the pot was uncontested, N6) and `POKER_PAYOUT_MISMATCH` (a discrepancy per winner, plus a `review` violation of the same code when the due result rests on a reading) |
//! | `raise_below_min` | omaha, hold'em (r.86) | a raise adding a quarter, half or three quarters of the minimum, not all-in | `POKER_RAISE_BELOW_MIN` |
//! | `fourth_raise` | omaha, hold'em (r.87, three or more players in); tables with `max_raises` | a betting round of minimum raises until one goes beyond the cap | `POKER_RAISE_CAP_EXCEEDED` |
//! | `online_failure_settled` | online (Reg806 r.72) | the hand is cut by a `system_failure` after the deal, before the river, and settled as the full hand would have been | `POKER_VOID_HAND_SETTLED` |
//!
//! A mistaken hand is steered so that the mistake applies and retried with other random draws
//! (up to 64) when a draw did not get there; [`rules_core::SimError::MistakeNotApplicable`] only
//! where the table makes the mistake impossible (the column "tables"), and
//! [`rules_core::SimError::UnknownMistake`] for any other id.
//!
//! A land table configured with fewer seats than the game's minimum of four players (r.24)
//! cannot deal a legal hand: its hands show `POKER_TOO_FEW_PLAYERS`.

mod deal;
mod play;
pub mod seating;

use rules_core::{
    Adjudication, Cents, Engine, EventKind, GameId, Id, MistakeSpec, Options, Round, RoundEvent,
    Setting, Settlement, SimError, SimRng, Simulate, TableConfig, honest_settlement,
};

use crate::PokerEngine;
use crate::codes;
use crate::config::{Commission, PokerConfig, Regulation};
use crate::state::PokerState;

use play::Steer;

/// The mistakes the simulator can make, and exactly what the audit then finds.
pub const MISTAKES: [MistakeSpec; 5] = [
    MistakeSpec {
        id: "short_paid_split_pot",
        description: "one of the winners of a split pot is paid less than his share",
        codes: &[codes::PAYOUT_MISMATCH],
    },
    MistakeSpec {
        id: "commission_over_cap",
        description: "where the per-hand commission cap binds, the house takes the uncapped commission and the winners are paid that much less",
        codes: &[codes::COMMISSION_WRONG, codes::PAYOUT_MISMATCH],
    },
    MistakeSpec {
        id: "raise_below_min",
        description: "a player raises by less than the table minimum without being all-in (omaha, hold'em)",
        codes: &[codes::RAISE_BELOW_MIN],
    },
    MistakeSpec {
        id: "fourth_raise",
        description: "one raise more than the cap in a betting round (a fourth raise with three or more players in the hand at omaha and hold'em; beyond `max_raises` elsewhere)",
        codes: &[codes::RAISE_CAP_EXCEEDED],
    },
    MistakeSpec {
        id: "online_failure_settled",
        description: "an online hand cut short by a failure of the operator's system (null, Reg806 r.72) is settled as if it had been played out",
        codes: &[codes::VOID_HAND_SETTLED],
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mistake {
    ShortPaidSplit,
    CommissionOverCap,
    RaiseBelowMin,
    FourthRaise,
    OnlineFailureSettled,
}

fn parse(id: &str) -> Result<Mistake, SimError> {
    Ok(match id {
        "short_paid_split_pot" => Mistake::ShortPaidSplit,
        "commission_over_cap" => Mistake::CommissionOverCap,
        "raise_below_min" => Mistake::RaiseBelowMin,
        "fourth_raise" => Mistake::FourthRaise,
        "online_failure_settled" => Mistake::OnlineFailureSettled,
        other => return Err(SimError::UnknownMistake(other.chars().take(64).collect())),
    })
}

/// Attempts (each with fresh random draws) to steer a mistaken hand before giving up.
const ATTEMPTS: u64 = 64;

impl Simulate for PokerEngine {
    fn mistakes() -> &'static [MistakeSpec] {
        &MISTAKES
    }

    fn example_table(game: GameId) -> TableConfig {
        example_table(game)
    }

    fn simulate(
        table: &TableConfig,
        config: &PokerConfig,
        state: &PokerState,
        round_id: Id,
        start_ms: i64,
        rng: &mut SimRng,
        mistake: Option<&str>,
    ) -> Result<Round, SimError> {
        simulate(table, config, state, round_id, start_ms, rng, mistake)
    }
}

/// A typical approved table for `game` (an unconfigured table for a game this engine does not
/// play):
///
/// | game | minimum (big blind / ante) | regime | commission | other |
/// |---|---|---|---|---|
/// | poker_holdem | 2 € (small blind 1 €), max 10 € | no limit | 5% per hand, cap 6 € | 10 seats |
/// | poker_omaha | 4 € (small blind 2 €), max 20 € | pot limit | 5% per hand, cap 10 € | 10 seats |
/// | poker_sintetico | ante 5 €, max 25 € | limit (half the pot) | 4% per hand, cap 15 € | 11 seats, stardilho, 3 raises |
/// | poker_holdem_online | 1 € (small blind 0.50 €) | no limit | 3% per hand | 10 seats, 3 raises |
pub fn example_table(game: GameId) -> TableConfig {
    let mut t = TableConfig::new(game);
    let (min, max, bp, cap, limit, seats) = match game {
        GameId::PokerHoldem => (200, Some(1_000), 500, Some(600), "no_limit", 10),
        GameId::PokerOmaha => (400, Some(2_000), 500, Some(1_000), "pot_limit", 10),
        GameId::PokerSintetico => (500, Some(2_500), 400, Some(1_500), "limit", 11),
        GameId::PokerHoldemOnline => (100, None, 300, None, "no_limit", 10),
        _ => return t,
    };
    t.table_id = Some(format!("sim-{game}"));
    t.regulation = Some(
        if game == GameId::PokerHoldemOnline {
            "Reg806/2015"
        } else {
            "P217/2007"
        }
        .into(),
    );
    t.min_bet_cents = Some(min);
    t.max_bet_cents = max;
    t.commission = Some("per_hand".into());
    t.seats = Some(seats);
    let mut set = |k: &str, v: Setting| {
        t.settings.insert(k.into(), v);
    };
    set("commission_bp", Setting::Int(bp));
    if let Some(cap) = cap {
        set("commission_cap_cents", Setting::Int(cap));
    }
    set("limit", Setting::Text(limit.into()));
    match game {
        GameId::PokerSintetico => {
            set("stardilho", Setting::Bool(true));
            set("max_raises", Setting::Int(3));
        }
        GameId::PokerHoldemOnline => {
            set("small_blind_cents", Setting::Int(min / 2));
            set("max_raises", Setting::Int(3));
        }
        _ => {}
    }
    t
}

/// Why `mistake` cannot be made at a table configured as `cfg`, if it cannot.
fn impossible(cfg: &PokerConfig, mistake: Mistake) -> Option<&'static str> {
    match mistake {
        Mistake::ShortPaidSplit => None,
        Mistake::CommissionOverCap => match cfg.commission {
            Commission::PerHand { bp, cap: Some(_) } if bp > 0 => None,
            _ => Some("the table has no capped per-hand commission (P217 r.7(a))"),
        },
        Mistake::RaiseBelowMin => {
            if !cfg.rules.raise_min_is_table_min {
                Some("only omaha and hold'em set a minimum raise (r.86)")
            } else if cfg.min_bet < 2 {
                Some("a table minimum of one cent leaves no raise below it")
            } else {
                None
            }
        }
        Mistake::FourthRaise => {
            if cfg.rules.fixed_raise_cap.is_some() || cfg.max_raises.is_some() {
                None
            } else {
                Some("the table sets no raise cap (`max_raises`)")
            }
        }
        Mistake::OnlineFailureSettled => (cfg.regulation != Regulation::Reg806).then_some(
            "only online hands are voided by an operator's system failure (Reg806 r.72)",
        ),
    }
}

fn steer(mistake: Option<Mistake>) -> Steer {
    let mut s = Steer::default();
    match mistake {
        None => s.incidents = true,
        Some(Mistake::ShortPaidSplit) => s.tie = true,
        Some(Mistake::CommissionOverCap) => s.big_pot = true,
        Some(Mistake::RaiseBelowMin) => s.raise_below_min = true,
        Some(Mistake::FourthRaise) => s.raise_war = true,
        Some(Mistake::OnlineFailureSettled) => {}
    }
    s
}

/// The settlement an honest casino reports: [`honest_settlement`], with `house_cents` the pot
/// commission only (the engine's reading: fees taken from caves, `session_fee` and
/// `entry_fee`, are recorded by their procedures and are not part of `house_cents`).
pub fn settlement(adj: &Adjudication) -> Settlement {
    let mut s = honest_settlement(adj);
    if adj.house.iter().any(|h| h.kind != "commission") {
        let c = commission(adj);
        s.house_cents = (c > 0).then_some(c);
    }
    s
}

fn commission(adj: &Adjudication) -> Cents {
    adj.house
        .iter()
        .filter(|h| h.kind == "commission")
        .map(|h| h.amount_cents)
        .sum()
}

fn adjudicate(
    cfg: &PokerConfig,
    state: &PokerState,
    round: &Round,
) -> Result<Adjudication, SimError> {
    let mut st = state.clone();
    Ok(PokerEngine::adjudicate(
        cfg,
        &mut st,
        round,
        &Options::default(),
    )?)
}

/// Cut the hand at event `at` by a failure of the operator's system (Reg806 r.72).
fn system_failure(round: &mut Round, at: usize) {
    round.events.truncate(at);
    let t = round
        .events
        .last()
        .and_then(|e| e.at_ms)
        .or(round.opened_at_ms)
        .unwrap_or(0);
    round.events.push(RoundEvent::at(
        t + 1_500,
        EventKind::Fault {
            code: "system_failure".into(),
            seat: None,
            detail: Some("the operator's gaming system stopped the hand (Reg806 r.72)".into()),
        },
    ));
    round.events.push(RoundEvent::at(
        t + 60_000,
        EventKind::Void {
            reason: "system_failure".into(),
        },
    ));
}

/// Play one hand (see the module documentation).
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    table: &TableConfig,
    cfg: &PokerConfig,
    state: &PokerState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    mistake: Option<&str>,
) -> Result<Round, SimError> {
    let mistake = mistake.map(parse).transpose()?;
    if let Some(m) = mistake
        && let Some(reason) = impossible(cfg, m)
    {
        return Err(SimError::MistakeNotApplicable {
            mistake: MISTAKES
                .iter()
                .find(|s| parse(s.id).ok() == Some(m))
                .map(|s| s.id)
                .unwrap_or_default()
                .to_string(),
            reason: format!("{reason} at this {} table", cfg.rules.game),
        });
    }
    let key = seating::table_key(table);
    let seats = seating::seating(key, cfg, state.hands);
    let steer = steer(mistake);
    let online = cfg.regulation == Regulation::Reg806;
    let attempts = if mistake.is_some() { ATTEMPTS } else { 1 };
    for attempt in 0..attempts {
        let mut fork = mistake.is_some().then(|| rng.fork(attempt));
        let r: &mut SimRng = match fork.as_mut() {
            Some(f) => f,
            None => &mut *rng,
        };
        let played = play::play(cfg, state, &seats, key, &round_id, start_ms, r, steer);
        let mut round = played.round;
        let Some(m) = mistake else {
            if online && !played.cut_points.is_empty() && r.chance(1, 250) {
                let at = played.cut_points[r.below(played.cut_points.len() as u64) as usize];
                system_failure(&mut round, at);
            }
            let adj = adjudicate(cfg, state, &round)?;
            round.settlement = Some(settlement(&adj));
            return Ok(round);
        };
        let adj = adjudicate(cfg, state, &round)?;
        let honest = settlement(&adj);
        let s = match m {
            Mistake::ShortPaidSplit => {
                let Some((a, b)) = played.tie else { continue };
                if !played.showdown || adj.void.is_some() {
                    continue;
                }
                let w = if r.chance(1, 2) { a } else { b };
                let short = if cfg.rules.land {
                    cfg.min_bet
                } else {
                    r.range(1, cfg.min_bet.max(1) as u64) as Cents
                };
                let mut s = honest;
                let id = format!("s{w}");
                match s.results.iter_mut().find(|x| *x.bet_id == *id) {
                    Some(x) => x.net_cents -= short,
                    None => continue,
                }
                s
            }
            Mistake::CommissionOverCap => {
                let mut uncapped = cfg.clone();
                if let Commission::PerHand { bp, .. } = cfg.commission {
                    uncapped.commission = Commission::PerHand { bp, cap: None };
                }
                let adj2 = adjudicate(&uncapped, state, &round)?;
                if adj.void.is_some() || commission(&adj2) <= commission(&adj) {
                    continue;
                }
                settlement(&adj2)
            }
            Mistake::RaiseBelowMin | Mistake::FourthRaise => {
                if !played.applied {
                    continue;
                }
                honest
            }
            Mistake::OnlineFailureSettled => {
                let moved = honest.results.iter().any(|x| x.net_cents != 0)
                    || honest.house_cents.unwrap_or(0) != 0;
                if played.cut_points.is_empty() || !moved || adj.void.is_some() {
                    continue;
                }
                let at = played.cut_points[r.below(played.cut_points.len() as u64) as usize];
                system_failure(&mut round, at);
                honest
            }
        };
        round.settlement = Some(s);
        return Ok(round);
    }
    Err(SimError::MistakeNotApplicable {
        mistake: mistake
            .and_then(|m| MISTAKES.iter().find(|s| parse(s.id).ok() == Some(m)))
            .map(|s| s.id)
            .unwrap_or_default()
            .to_string(),
        reason: format!("the simulation did not get there in {ATTEMPTS} attempts"),
    })
}
