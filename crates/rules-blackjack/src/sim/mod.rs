//! # Simulation: playing blackjack/21 by the rules ([`rules_core::Simulate`])
//!
//! [`BlackjackEngine`] plays one complete round of a land (`blackjack`) or online
//! (`blackjack_online`) table:
//!
//! * **Shoe** (module `shoe`): the cards not yet seen since the last shuffle are rebuilt from
//!   [`BlackjackState::shoe`] and drawn uniformly, which is exactly a shuffled shoe: no card
//!   leaves a shoe more often than there are decks (r.3). Manual shoe: a new shoe starts with
//!   the cards spread, `shuffle`, `cut` (offered to the lowest seat playing, r.8) and a burned
//!   card (r.10); the warning card stands 50 cards from the end (r.9) and, when it comes out,
//!   `warning_card` and `last_round` are announced; that round is played to its end and the next
//!   one starts with a new shoe (r.11). The r.9 placement near the middle for a lone player is
//!   not simulated (the state does not say where the card was put). Batch shuffler: loaded once
//!   per session with a fiscal-chefe present (r.54), a new shoe once 75% is dealt, no cut and no
//!   warning card (r.52). Continuous shuffler: the same load; the engine counts the cards back in
//!   after every round. Online: the shoe is reshuffled once 75% of it is dealt.
//! * **Players** (land): 1 to 7 titulars (mostly 3 to 5) with main bets of 1 to 20 minimums
//!   (r.14), jackpot chips from about 2 in 5 of them (one chip, on their main bet, before "jogo
//!   feito, nada mais", r.45-r.48), now and then a bet on a vacant box (sometimes two bettors
//!   sharing it, the r.16 decider by amount then home seat) and complementary bets on other
//!   players' boxes within the seat maximum (r.15). Online: players open sessions, sit out
//!   rounds, are warned after more than five rounds without a bet and their session ended the
//!   round after (ROBJ r.35(b), r.36), or leave (r.34).
//! * **Deal** in the r.17 order, the hole card face down; with an ace up, even money for about
//!   one blackjack in three and insurance (half the bet) for about one box bet in seven
//!   (r.33, r.34).
//! * **Decisions** by a basic-strategy-like policy: hit to 12 at least (never stand on 11 or
//!   less, r.18), stiff totals against the up-card with a little hunch play, soft totals, doubles
//!   on hard 9/10/11 (r.29; split hands too, r.31), splits of pairs by the book (aces and eights
//!   always, never tens; split aces take one card, r.26; re-splits up to four hands, r.27),
//!   surrender on 16 against 9/10 and 15 against 10 about half the time (not against an ace,
//!   only as the first decision, P1364: before any additional card, r.36). Complementary
//!   bettors follow the titular, and choose for themselves to follow splits and doubles (r.28,
//!   r.30).
//! * **Dealer** by the drawing rule (r.19, r.6(a): stands on soft 17; online the table setting),
//!   no draw when every hand has busted or surrendered (r.22) or only naturals are left.
//! * **Online**: about 1 round in 60 a player's connection drops (the round goes on, r.29);
//!   about 1 in 300 the operator's system fails before the result is known (during the deal,
//!   after a request for a card or before the dealer's draw): `malfunction`, `void`, every bet
//!   returned (r.27, r.28).
//! * **Settlement**: the engine adjudicates a copy of the state and the honest settlement is
//!   [`rules_core::honest_settlement`]; losing bets are collected, then winners paid
//!   (jackpot prizes in full: the chip is not returned), and the jackpot display shown before
//!   the deal (with the round's chips) and after it (r.40, r.41).
//!
//! ## The jackpot value
//!
//! The engine keeps no jackpot value in its state: the ledger's pool accounts supply it as
//! [`Round::jackpot_before_cents`]. [`Simulate::simulate`] sets that field to
//! [`default_jackpot_before`] (the configured start value, i.e. a freshly reset jackpot) and
//! prices the round's prizes and displays from it. A caller that keeps the pool plays with
//! [`simulate_with_jackpot`] (the value given), or overrides the field of a simulated round
//! with [`reprice_jackpot`], which re-derives the jackpot bets' results, prizes paid and
//! displays for the new value and leaves every other result (and any injected mistake) as it
//! was.
//!
//! ## Mistakes ([`MISTAKES`])
//!
//! The round is steered so that the mistake applies (the cards it needs are taken from the
//! shoe, a new shoe started if the shoe no longer holds them), then the simulator adjudicates
//! it and redraws (up to 24 times) in the rare case the drawn cards add a finding the spec does
//! not list (e.g. a disputed result resting on a reading, repeated for review). Mistakes that
//! could multiply their findings play with a single player.

mod shoe;
mod table;

use rules_core::{
    Cents, Engine, EventKind, GameId, Id, JackpotConfig, JackpotPrize, MistakeSpec, Options, Round,
    RoundEvent, Setting, SimError, SimRng, Simulate, TableConfig, honest_settlement,
};

use crate::config::BlackjackConfig;
use crate::state::BlackjackState;
use crate::{BlackjackEngine, config::Shuffler};
use shoe::Pick;
use table::{Interrupt, Kind, Table};

pub use table::WARNING_FROM_END;

/// The mistakes a simulated blackjack table can be told to make.
pub const MISTAKES: &[MistakeSpec] = &[
    MistakeSpec {
        id: "dealer_hits_soft_17",
        description: "the dealer draws on a soft 17 (A+6) and the casino settles against the drawn card (a 4: the player's 20 is collected against 21)",
        codes: &["BJ_DEALER_DREW_ON_17", "BJ_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "overpay_blackjack",
        description: "a natural paid 2 to 1 instead of 3 to 2",
        codes: &["BJ_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "insurance_over_half",
        description: "insurance accepted above half the insured bet",
        codes: &["BJ_INSURANCE_OVER_HALF"],
    },
    MistakeSpec {
        id: "double_on_12",
        description: "a hard 12 doubled (doubling is on 9, 10 or 11)",
        codes: &["BJ_DOUBLE_NOT_ALLOWED"],
    },
    MistakeSpec {
        id: "short_paid_split_hand",
        description: "a winning split hand paid as a push (the titular's bet short by one hand's stake)",
        codes: &["BJ_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "surrender_vs_ace",
        description: "a surrender accepted against the dealer's ace",
        codes: &["BJ_SURRENDER_VS_ACE"],
    },
    MistakeSpec {
        id: "late_bet",
        description: "a complementary bet accepted after the deal began",
        codes: &["BJ_LATE_BET"],
    },
    MistakeSpec {
        id: "online_failure_settled",
        description: "online: the operator's system fails before the result is known, and the round is settled anyway (one bet collected) instead of voided",
        codes: &["BJO_VOID_ROUND_SETTLED"],
    },
];

/// The mistakes a table of `game` can make (their ids, in [`MISTAKES`] order): the land and
/// online tables share the game's mistakes; `online_failure_settled` is online only.
pub fn mistakes_of(game: GameId) -> Vec<&'static str> {
    MISTAKES
        .iter()
        .map(|m| m.id)
        .filter(|id| match game {
            GameId::Blackjack => *id != "online_failure_settled",
            GameId::BlackjackOnline => true,
            _ => false,
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mistake {
    DealerHitsSoft17,
    OverpayBlackjack,
    InsuranceOverHalf,
    DoubleOn12,
    ShortPaidSplitHand,
    SurrenderVsAce,
    LateBet,
    OnlineFailureSettled,
}

impl Mistake {
    fn parse(id: &str) -> Option<Mistake> {
        Some(match id {
            "dealer_hits_soft_17" => Mistake::DealerHitsSoft17,
            "overpay_blackjack" => Mistake::OverpayBlackjack,
            "insurance_over_half" => Mistake::InsuranceOverHalf,
            "double_on_12" => Mistake::DoubleOn12,
            "short_paid_split_hand" => Mistake::ShortPaidSplitHand,
            "surrender_vs_ace" => Mistake::SurrenderVsAce,
            "late_bet" => Mistake::LateBet,
            "online_failure_settled" => Mistake::OnlineFailureSettled,
            _ => return None,
        })
    }

    fn spec(self) -> &'static MistakeSpec {
        let id = match self {
            Mistake::DealerHitsSoft17 => "dealer_hits_soft_17",
            Mistake::OverpayBlackjack => "overpay_blackjack",
            Mistake::InsuranceOverHalf => "insurance_over_half",
            Mistake::DoubleOn12 => "double_on_12",
            Mistake::ShortPaidSplitHand => "short_paid_split_hand",
            Mistake::SurrenderVsAce => "surrender_vs_ace",
            Mistake::LateBet => "late_bet",
            Mistake::OnlineFailureSettled => "online_failure_settled",
        };
        MISTAKES.iter().find(|m| m.id == id).unwrap_or(&MISTAKES[0])
    }
}

fn not_applicable(id: &str, why: impl Into<String>) -> SimError {
    SimError::MistakeNotApplicable {
        mistake: id.to_string(),
        reason: why.into(),
    }
}

fn parse_mistake(cfg: &BlackjackConfig, id: Option<&str>) -> Result<Option<Mistake>, SimError> {
    let Some(id) = id else { return Ok(None) };
    let m = Mistake::parse(id).ok_or_else(|| SimError::UnknownMistake(id.to_string()))?;
    if !mistakes_of(cfg.game).contains(&id) {
        return Err(not_applicable(
            id,
            format!("{} has no void rounds (online only)", cfg.game),
        ));
    }
    if m == Mistake::DealerHitsSoft17 && cfg.hits_soft_17 {
        return Err(not_applicable(
            id,
            "this table's approved rules have the dealer draw on soft 17",
        ));
    }
    Ok(Some(m))
}

/// A typical approved table of `game`.
///
/// * `blackjack`: P217/2007, €10 minimum, €300 maximum (30 x, r.37), 6 decks (r.3), 7 seats,
///   manual shoe, and a jackpot (pool `TJP-BJ`): a €2 chip, 75% of it to the display, a start
///   value of €25,000 (12,500 x the chip, r.44), and an approved pay table (r.43): four aces of
///   one colour the whole jackpot, three aces of one suit 10% of it, three aces 500 x, two aces
///   of one suit 100 x, suited 6-7-8 100 x, a suited blackjack 50 x, two aces 25 x, three 7s
///   25 x.
/// * `blackjack_online`: ROBJ/2015, €1 minimum, €500 maximum, 6 decks, 7 seats of a
///   multi-player table, a blackjack paid 3 to 2, a blackjack beating a 21 of more cards, the
///   dealer standing on soft 17 (the land rules, 13.16).
pub fn example_table(game: GameId) -> TableConfig {
    let mut t = TableConfig::new(game);
    t.decks = Some(6);
    t.seats = Some(7);
    if game == GameId::BlackjackOnline {
        t.regulation = Some("ROBJ/2015".into());
        t.table_id = Some("BJO-SIM-1".into());
        t.min_bet_cents = Some(100);
        t.max_bet_cents = Some(50_000);
        t.settings
            .insert("blackjack_pays".into(), Setting::List(vec![3, 2]));
        t.settings
            .insert("online_blackjack_beats_21".into(), Setting::Bool(true));
        t.settings
            .insert("dealer_hits_soft_17".into(), Setting::Bool(false));
        t.settings
            .insert("single_player_table".into(), Setting::Bool(false));
        return t;
    }
    use rules_core::Award;
    let line = |c: &str, award: Award| JackpotPrize {
        combination: c.into(),
        award,
    };
    t.regulation = Some("P217/2007".into());
    t.table_id = Some("BJ-SIM-1".into());
    t.min_bet_cents = Some(1_000);
    t.max_bet_cents = Some(30_000);
    t.jackpot = Some(JackpotConfig {
        pool_id: Some("TJP-BJ".into()),
        bet_amount_cents: 200,
        increment_bp: 7_500,
        start_value_cents: 2_500_000,
        paytable: vec![
            line("four_aces_same_colour", Award::Whole),
            line("three_aces_same_suit", Award::Percent { bp: 1_000 }),
            line("three_aces", Award::Multiple { times: 500 }),
            line("two_aces_same_suit", Award::Multiple { times: 100 }),
            line("suited_678", Award::Multiple { times: 100 }),
            line("suited_blackjack", Award::Multiple { times: 50 }),
            line("two_aces", Award::Multiple { times: 25 }),
            line("three_sevens", Award::Multiple { times: 25 }),
        ],
        collection: Some("automatic".into()),
    });
    t.settings
        .insert("shuffler".into(), Setting::Text("none".into()));
    t.settings
        .insert("split_unlike_tens".into(), Setting::Bool(true));
    t
}

/// The jackpot value [`Simulate::simulate`] plays with when the table has a jackpot: the
/// configured start value (a freshly reset jackpot). `None` without a jackpot.
pub fn default_jackpot_before(cfg: &BlackjackConfig) -> Option<Cents> {
    cfg.jackpot.as_ref().map(|j| j.start)
}

/// How many times the simulator redraws a mistake's round before giving up.
const ATTEMPTS: u32 = 24;

/// [`Simulate::simulate`] with the jackpot's value before the round (`None`: the
/// [`default_jackpot_before`]); ignored at a table without a jackpot. The returned round
/// carries it in [`Round::jackpot_before_cents`] and its prizes and displays are priced from
/// it.
#[allow(clippy::too_many_arguments)]
pub fn simulate_with_jackpot(
    table: &TableConfig,
    cfg: &BlackjackConfig,
    state: &BlackjackState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    mistake: Option<&str>,
    jackpot_before_cents: Option<Cents>,
) -> Result<Round, SimError> {
    let m = parse_mistake(cfg, mistake)?;
    let jp = cfg
        .jackpot
        .as_ref()
        .map(|j| jackpot_before_cents.unwrap_or(j.start));
    let Some(m) = m else {
        let (round, _) = build(table, cfg, state, &round_id, start_ms, rng, None, jp, false)?;
        return Ok(round);
    };
    let spec = m.spec();
    let mut want: Vec<&str> = spec.codes.to_vec();
    want.sort_unstable();
    let mut fresh = false;
    for _ in 0..ATTEMPTS {
        let (round, steered) = build(
            table,
            cfg,
            state,
            &round_id,
            start_ms,
            rng,
            Some(m),
            jp,
            fresh,
        )?;
        if !steered {
            // The shoe no longer holds the cards the mistake needs: a new shoe.
            fresh = true;
            continue;
        }
        let adj =
            BlackjackEngine::adjudicate(cfg, &mut state.clone(), &round, &Options::default())?;
        let mut got: Vec<&str> = adj
            .violations
            .iter()
            .map(|v| &*v.code)
            .chain(adj.discrepancies.iter().map(|d| &*d.code))
            .collect();
        got.sort_unstable();
        if got == want {
            return Ok(round);
        }
    }
    Err(not_applicable(
        spec.id,
        format!("no round drawn in {ATTEMPTS} attempts allowed it"),
    ))
}

/// Override the jackpot value of a simulated round: set [`Round::jackpot_before_cents`] and
/// re-derive what depends on it (the jackpot bets' reported results, their prizes paid and the
/// jackpot displays), every other result left as reported. `state` is the table state the round
/// was simulated from.
pub fn reprice_jackpot(
    cfg: &BlackjackConfig,
    state: &BlackjackState,
    round: &mut Round,
    jackpot_before_cents: Cents,
) -> Result<(), SimError> {
    if cfg.jackpot.is_none() {
        return Ok(());
    }
    round.jackpot_before_cents = Some(jackpot_before_cents);
    let mut bare = round.clone();
    bare.settlement = None;
    let adj = BlackjackEngine::adjudicate(cfg, &mut state.clone(), &bare, &Options::default())?;
    let jackpot_bets: Vec<Id> = round
        .bets()
        .filter(|(_, b)| b.bet_type == "jackpot")
        .map(|(_, b)| b.id.clone())
        .collect();
    if let Some(s) = round.settlement.as_mut() {
        for r in &mut s.results {
            if jackpot_bets.contains(&r.bet_id)
                && let Some(o) = adj.bet(&r.bet_id)
            {
                r.net_cents = o.due_net_cents;
            }
        }
    }
    // The deal begins with the first card to a seat or the dealer (a burned card is not).
    let first_card = round.events.iter().position(|e| {
        matches!(
            e.kind,
            EventKind::Card {
                to: rules_core::Recipient::Seat { .. } | rules_core::Recipient::Dealer,
                ..
            }
        )
    });
    let (v1, v2) = display_values(&adj, jackpot_before_cents);
    for (i, e) in round.events.iter_mut().enumerate() {
        match &mut e.kind {
            EventKind::Pay {
                bet_id,
                amount_cents,
            } => {
                if let Some(w) = adj.jackpot_wins.iter().find(|w| w.bet_id == *bet_id) {
                    *amount_cents = w.prize_cents;
                }
            }
            EventKind::JackpotDisplay { value_cents } => {
                *value_cents = if first_card.is_none_or(|f| i < f) {
                    v1
                } else {
                    v2
                };
            }
            _ => {}
        }
    }
    Ok(())
}

/// The display before the deal (with the round's chips) and after the round, truncated to the
/// cent.
fn display_values(adj: &rules_core::Adjudication, before: Cents) -> (Cents, Cents) {
    match &adj.jackpot {
        Some(a) => (
            ((i128::from(before) * 10_000 + i128::from(a.contributions_e4)) / 10_000) as Cents,
            a.value_after_e4 / 10_000,
        ),
        None => (before, before),
    }
}

/// The players of a land round: 1 to 7 titulars, mostly 3 to 5.
fn land_sitting(t: &mut Table, single: bool) -> Vec<(u8, Id)> {
    let seats = t.cfg.seats.max(1);
    let n = if single {
        1
    } else {
        let weights: [u64; 7] = [2, 3, 5, 6, 5, 3, 2];
        let max_n = usize::from(seats).min(7);
        let total: u64 = weights[..max_n].iter().sum();
        let mut r = t.rng.below(total);
        let mut n = 1;
        for (k, w) in weights[..max_n].iter().enumerate() {
            if r < *w {
                n = k + 1;
                break;
            }
            r -= w;
        }
        n
    };
    let mut all: Vec<u8> = (1..=seats).collect();
    t.rng.shuffle(&mut all);
    let mut chosen: Vec<u8> = all.into_iter().take(n).collect();
    chosen.sort_unstable();
    chosen
        .into_iter()
        .map(|s| (s, Id::from(format!("P{s}"))))
        .collect()
}

/// The players of an online round, with their session procedures (ROBJ/2015 r.34-r.36).
fn online_sitting(t: &mut Table, single: bool) -> Vec<(u8, Id)> {
    let cfg = t.cfg;
    let state = t.state;
    let mut sitting: Vec<(u8, Id)> = Vec::new();
    let mut ended: Vec<u8> = Vec::new();
    let mut open: Vec<u8> = Vec::new();
    let player = |seat: u8| -> Id { format!("acct-{seat:02}").into() };
    for seat in 1..=cfg.seats {
        match state.online_seats.iter().find(|e| e.seat == seat) {
            Some(e) => {
                if single && !sitting.is_empty() {
                    break;
                }
                if t.rng.chance(1, 40) {
                    t.session("session_ended", Some("player"), seat);
                    ended.push(seat);
                    continue;
                }
                // A player sitting out tends to go on sitting out.
                let bets = if e.idle_rounds > 0 {
                    t.rng.chance(1, 5)
                } else {
                    t.rng.chance(7, 8)
                };
                if bets {
                    sitting.push((seat, player(seat)));
                    continue;
                }
                open.push(seat);
                if !cfg.single_player {
                    if e.warned && e.idle_rounds > e.idle_at_warning {
                        // The warned player still did not bet: the operator ends it (r.36).
                        t.session("session_ended", Some("inactivity"), seat);
                        ended.push(seat);
                        open.retain(|s| *s != seat);
                    } else if !e.warned && e.idle_rounds > 5 {
                        t.session("session_warning", None, seat);
                    }
                }
            }
            None => {
                if (single && !sitting.is_empty()) || !t.rng.chance(1, 5) {
                    continue;
                }
                t.session("session_start", None, seat);
                sitting.push((seat, player(seat)));
            }
        }
    }
    if sitting.is_empty() {
        // Someone always plays: a seated player, else a newcomer.
        if let Some(&seat) = open.first() {
            sitting.push((seat, player(seat)));
        } else {
            // A free seat, else one just given up: a new player sits down.
            let seat = (1..=cfg.seats).find(|s| !ended.contains(s)).unwrap_or(1);
            let has_session =
                !ended.contains(&seat) && state.online_seats.iter().any(|e| e.seat == seat);
            if !has_session {
                t.session("session_start", None, seat);
            }
            sitting.push((seat, player(seat)));
        }
    }
    if single {
        sitting.truncate(1);
    }
    sitting.sort_unstable_by_key(|(s, _)| *s);
    sitting
}

/// Steer the mistake's round: the seat and the cards it needs.
fn steer(t: &mut Table, m: Mistake, sitting: &[(u8, Id)]) {
    let mut seat = t.rng.pick(sitting).map(|(s, _)| *s).unwrap_or(1);
    if m == Mistake::SurrenderVsAce {
        // The first seat to act: no card has been dealt after the deal yet (P1364/2001 allows
        // surrender only then).
        seat = sitting.first().map_or(1, |(s, _)| *s);
    }
    let k12 = 2 + t.rng.below(4) as u32;
    let ace_first = t.rng.chance(1, 2);
    let s = &mut t.steer;
    s.seat = Some(seat);
    match m {
        Mistake::DealerHitsSoft17 => {
            // The player stands on 20; the dealer's 6 up and ace in the hole make a soft 17.
            s.seat_cards = [Some(Pick::Ten), Some(Pick::Ten)];
            s.up = Some(Pick::Rank(rules_core::Rank::Six));
            s.hole = Some(Pick::Rank(rules_core::Rank::Ace));
        }
        Mistake::OverpayBlackjack => {
            let (a, b) = (Pick::Rank(rules_core::Rank::Ace), Pick::Ten);
            s.seat_cards = if ace_first {
                [Some(a), Some(b)]
            } else {
                [Some(b), Some(a)]
            };
            // The dealer stands on 17-19 with two cards: no blackjack, and online no 21
            // that would make the natural's result rest on reading 13.16.
            s.up = Some(Pick::Value(7, 9));
            s.hole = Some(Pick::Ten);
        }
        Mistake::InsuranceOverHalf => {
            s.up = Some(Pick::Rank(rules_core::Rank::Ace));
        }
        Mistake::DoubleOn12 => {
            // A hard 12 that is no pair: T+2, 9+3, 8+4 or 7+5.
            let k = k12;
            let a = if k == 2 {
                Pick::Ten
            } else {
                Pick::Value(12 - k, 12 - k)
            };
            s.seat_cards = [Some(a), Some(Pick::Value(k, k))];
        }
        Mistake::ShortPaidSplitHand => {
            // Eights split against a 10 up; the dealer stands on a hard 17; hand 1 makes 18.
            s.seat_cards = [
                Some(Pick::Rank(rules_core::Rank::Eight)),
                Some(Pick::Rank(rules_core::Rank::Eight)),
            ];
            s.up = Some(Pick::Ten);
            s.hole = Some(Pick::Rank(rules_core::Rank::Seven));
            s.must_split = true;
            s.after_split = Some(Pick::Ten);
        }
        Mistake::SurrenderVsAce => {
            s.seat_cards = [Some(Pick::Ten), Some(Pick::Value(5, 6))];
            s.up = Some(Pick::Rank(rules_core::Rank::Ace));
        }
        Mistake::LateBet | Mistake::OnlineFailureSettled => {}
    }
}

/// Play one round (the mistake `m` steered in) and settle it honestly, then apply the
/// mistake's settlement. The flag is false when the steered cards were not in the shoe.
#[allow(clippy::too_many_arguments)]
fn build(
    _table: &TableConfig,
    cfg: &BlackjackConfig,
    state: &BlackjackState,
    round_id: &Id,
    start_ms: i64,
    rng: &mut SimRng,
    m: Option<Mistake>,
    jp_before: Option<Cents>,
    fresh_shoe: bool,
) -> Result<(Round, bool), SimError> {
    let online = cfg.online();
    let single = matches!(
        m,
        Some(Mistake::DealerHitsSoft17 | Mistake::OnlineFailureSettled)
    );
    let mut t = Table::new(cfg, state, rng, round_id, m, start_ms);
    t.steer.single_player = single;
    let sitting = if online {
        t.open(fresh_shoe, 1);
        online_sitting(&mut t, single || cfg.single_player)
    } else {
        let sitting = land_sitting(&mut t, single);
        let first = sitting.first().map_or(1, |(s, _)| *s);
        t.open(fresh_shoe, first);
        sitting
    };
    if let Some(m) = m {
        steer(&mut t, m, &sitting);
    }
    if online {
        let interrupt =
            if m == Some(Mistake::OnlineFailureSettled) || (m.is_none() && t.rng.chance(1, 300)) {
                let n = sitting.len();
                if m.is_some() || t.rng.chance(1, 2) {
                    Some(Interrupt::Deal(t.rng.below(2 * n as u64 + 1) as usize))
                } else {
                    Some(Interrupt::Play)
                }
            } else {
                None
            };
        t.set_interrupt(interrupt);
        if m.is_none() && t.rng.chance(1, 60) {
            let seat = t.rng.pick(&sitting).map(|(s, _)| *s);
            t.set_disconnect(seat);
        }
    }
    t.place_bets(&sitting, cfg.jackpot.is_some());
    let target = t.steer.seat.and_then(|seat| {
        t.bets
            .iter()
            .position(|b| b.seat == seat && b.kind == Kind::Main)
    });
    t.no_more_bets();
    if let (Some(jp), Some(before)) = (cfg.jackpot.as_ref(), jp_before) {
        let chips = t.bets.iter().filter(|b| b.kind == Kind::Jackpot).count() as i128;
        let v1 = (i128::from(before) * 10_000
            + chips * i128::from(jp.chip) * i128::from(jp.increment_bp))
            / 10_000;
        t.display(v1 as Cents);
    }
    let mut complete = t.deal();
    if complete {
        t.insurance();
        complete = t.play();
    }
    if complete {
        let extra =
            (m == Some(Mistake::DealerHitsSoft17)).then_some(Pick::Rank(rules_core::Rank::Four));
        t.dealer_plays(extra);
    }
    let played = t.finish(target);
    let steered = !played.steer_failed;
    let mut round = Round {
        round_id: round_id.clone(),
        opened_at_ms: Some(start_ms),
        jackpot_before_cents: jp_before,
        events: played.events,
        settlement: None,
    };
    let adj = BlackjackEngine::adjudicate(cfg, &mut state.clone(), &round, &Options::default())?;
    let mut settlement = honest_settlement(&adj);
    let target_id = played.target.map(|i| played.bets[i].id.clone());
    let report = |s: &mut rules_core::Settlement, id: &Id, net: Cents| {
        if let Some(r) = s.results.iter_mut().find(|r| &r.bet_id == id) {
            r.net_cents = net;
        }
    };
    if let (Some(m), Some(id)) = (m, target_id.as_ref()) {
        let due = adj.bet(id).map_or(0, |o| o.due_net_cents);
        let stake = adj.bet(id).map_or(0, |o| o.stake_cents);
        let amount = played.target.map_or(0, |i| played.bets[i].amount);
        match m {
            // The casino settles against the drawn card: the player's 20 loses to 21.
            Mistake::DealerHitsSoft17 => report(&mut settlement, id, -stake),
            Mistake::OverpayBlackjack => report(&mut settlement, id, 2 * amount),
            Mistake::ShortPaidSplitHand => report(&mut settlement, id, due - amount),
            Mistake::OnlineFailureSettled => {
                settlement.void = false;
                report(&mut settlement, id, -amount);
            }
            _ => {}
        }
    }
    // Collection, then payments (r.25); the jackpot display after the round (r.41).
    let mut t_ms = played.t + 2_000;
    let mut tail: Vec<EventKind> = Vec::new();
    if !settlement.void && !played.interrupted {
        let losers: Vec<Id> = settlement
            .results
            .iter()
            .filter(|r| r.net_cents < 0)
            .map(|r| r.bet_id.clone())
            .collect();
        if !losers.is_empty() {
            tail.push(EventKind::Collect { bet_ids: losers });
        }
        for r in settlement.results.iter().filter(|r| r.net_cents > 0) {
            let amount = adj
                .jackpot_wins
                .iter()
                .find(|w| w.bet_id == r.bet_id)
                .map_or(r.net_cents, |w| w.prize_cents);
            tail.push(EventKind::Pay {
                bet_id: r.bet_id.clone(),
                amount_cents: amount,
            });
        }
        if let Some(before) = jp_before
            && adj.jackpot.is_some()
        {
            let (_, v2) = display_values(&adj, before);
            tail.push(EventKind::JackpotDisplay { value_cents: v2 });
        }
    }
    for (k, e) in tail.into_iter().enumerate() {
        round.events.push(RoundEvent::at(t_ms, e));
        t_ms += 1_500 + 500 * (k as i64 % 3);
    }
    if cfg.shuffler == Shuffler::Continuous && !online && !played.interrupted {
        // The round's cards go back into the continuous shuffler (r.59).
        round.events.push(RoundEvent::at(
            t_ms,
            EventKind::Procedure {
                name: "cards_to_shuffler".into(),
                value: None,
                seat: None,
                amount_cents: None,
            },
        ));
    }
    round.settlement = Some(settlement);
    Ok((round, steered))
}

impl Simulate for BlackjackEngine {
    fn mistakes() -> &'static [MistakeSpec] {
        MISTAKES
    }

    fn simulate_with_jackpot(
        table: &TableConfig,
        config: &Self::Config,
        state: &Self::State,
        round_id: Id,
        start_ms: i64,
        rng: &mut SimRng,
        mistake: Option<&str>,
        jackpot_before_cents: Option<Cents>,
    ) -> Result<Round, SimError> {
        simulate_with_jackpot(
            table,
            config,
            state,
            round_id,
            start_ms,
            rng,
            mistake,
            jackpot_before_cents,
        )
    }

    fn mistakes_for(game: GameId) -> Vec<&'static MistakeSpec> {
        let ids = mistakes_of(game);
        MISTAKES.iter().filter(|m| ids.contains(&m.id)).collect()
    }

    fn example_table(game: GameId) -> TableConfig {
        example_table(game)
    }

    fn simulate(
        table: &TableConfig,
        config: &BlackjackConfig,
        state: &BlackjackState,
        round_id: Id,
        start_ms: i64,
        rng: &mut SimRng,
        mistake: Option<&str>,
    ) -> Result<Round, SimError> {
        simulate_with_jackpot(table, config, state, round_id, start_ms, rng, mistake, None)
    }
}
