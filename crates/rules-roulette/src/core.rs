//! The adjudication shared by the three roulette games. Each rule is implemented next to its
//! citation; the per-game citations come from the game modules' [`Cites`].

use std::borrow::Cow;

use rules_core::{
    Adjudication, Bet, BetOutcome, Cents, EventKind, GameId, Id, Options, Outcome, Round,
    RoundError, Severity, Violation, VoidInfo, check_stake,
};

use crate::bets::{Class, Kind, LOST, WON, ordinary_mask};
use crate::tables::{finals_mask, neighbours_mask};
use crate::{RouletteConfig, RouletteState, WheelOrder, ZeroRule};

/// The citations of one game, rule by rule.
pub(crate) struct Cites {
    pub wrong_payout: &'static str,
    pub bets: &'static str,
    pub combos: &'static str,
    pub pay_multiple: &'static str,
    pub pay_simple: &'static str,
    pub pay_series: &'static str,
    pub pay_neighbours: &'static str,
    pub zero: &'static str,
    pub late: &'static str,
    pub void: &'static str,
    pub direction: &'static str,
    pub collect: &'static str,
    pub order: &'static str,
    pub dealer: &'static str,
    pub ball: &'static str,
    pub spin_before: &'static str,
    pub limits: &'static str,
    pub series_chips: &'static str,
    pub neighbours_chips: &'static str,
    pub neighbours_max: &'static str,
    pub series_wheel: &'static str,
}

const HOUR_MS: i64 = 3_600_000;

fn game_cites(g: GameId) -> &'static Cites {
    match g {
        GameId::RouletteAmerican => &crate::american::CITES,
        GameId::RouletteFrench => &crate::french::CITES,
        _ => &crate::french_online::CITES,
    }
}

fn game_kinds(g: GameId) -> &'static [Kind] {
    match g {
        GameId::RouletteFrenchOnline => crate::french_online::KINDS,
        _ => crate::american::KINDS,
    }
}

fn pay_rank(g: GameId, k: Kind) -> Option<u8> {
    match g {
        GameId::RouletteAmerican => crate::american::pay_rank(k),
        GameId::RouletteFrench => crate::french::pay_rank(k),
        _ => None,
    }
}

/// How a bet settles.
#[derive(Clone, Copy, Debug)]
enum Play {
    /// No payout rule at this table (illegal combination, bet type not offered, wrong chips):
    /// net 0 (digest section 11).
    NoRule,
    /// An ordinary bet covering `mask`.
    Ordinary { mask: u64, class: Class },
    /// A series (slot 0-2 of the config), `units` times its base chips, `chips` in all.
    Series { slot: u8, units: i64, chips: i64 },
    /// One straight chip per covered number, `units` each (neighbours, finals), `chips` in all.
    Straights { mask: u64, units: i64, chips: i64 },
}

impl Play {
    fn chips(self) -> i64 {
        match self {
            Play::Series { chips, .. } | Play::Straights { chips, .. } => chips,
            _ => 1,
        }
    }
    fn coverage(self, cfg: &RouletteConfig) -> u64 {
        match self {
            Play::NoRule => 0,
            Play::Ordinary { mask, .. } | Play::Straights { mask, .. } => mask,
            Play::Series { slot, .. } => {
                cfg.series[slot as usize].as_ref().map_or(0, |s| s.coverage)
            }
        }
    }
}

struct PBet<'a> {
    bet: &'a Bet,
    ev: usize,
    amount: Cents,
    withdrawn: bool,
    kind: Option<Kind>,
    play: Play,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner<'a> {
    Player(&'a str),
    Seat(u8),
    Alone(usize),
}

fn owner(b: &Bet, i: usize) -> Owner<'_> {
    match (&b.player, b.seat) {
        (Some(p), _) => Owner::Player(p),
        (None, Some(s)) => Owner::Seat(s),
        _ => Owner::Alone(i),
    }
}

/// `amount × num / den`, rounded down to the cent (the regulation fixes no rounding; only dozen
/// and column splits at 1/2 and operator payouts can leave a fraction).
fn mul_div(amount: Cents, (num, den): (i64, i64)) -> Cents {
    let v = i128::from(amount) * i128::from(num) / i128::from(den.max(1));
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn find_bet(bets: &[PBet<'_>], id: &str) -> Option<usize> {
    bets.iter().position(|b| &*b.bet.id == id)
}

fn event_time(round: &Round, at: Option<i64>) -> Option<i64> {
    at.or(round.opened_at_ms)
}

/// Parse a recorded bet into how it settles, recording the violations its record shows.
fn parse_bet(
    cfg: &RouletteConfig,
    cites: &Cites,
    round: &Round,
    bet: &Bet,
    ev: usize,
    adj: &mut Adjudication,
) -> Result<(Option<Kind>, Play), RoundError> {
    // A selection value that is not a pocket cannot be read at all.
    if let Some(n) = bet.selection.iter().find(|n| **n > 36) {
        return Err(RoundError::bet(
            round,
            &bet.id,
            format!("selection value {n} is not a pocket 0-36"),
        ));
    }
    let illegal = |adj: &mut Adjudication, why: &str| {
        adj.violation(
            Violation::new(
                "RL_ILLEGAL_BET",
                Severity::Medium,
                cites.combos,
                format!(
                    "bet {}: {} {:?} {}",
                    bet.id, bet.bet_type, bet.selection, why
                ),
            )
            .bet(&bet.id)
            .event(ev),
        );
    };
    // The bet type must exist for the game (P217/2007 T.I C.I S.I r.24; S.II r.16; R807/2015 r.7).
    let Some(kind) = Kind::parse(&bet.bet_type).filter(|k| game_kinds(cfg.game).contains(k)) else {
        adj.violation(
            Violation::new(
                "RL_ILLEGAL_BET",
                Severity::Medium,
                cites.bets,
                format!(
                    "bet {}: `{}` is not a bet of {}",
                    bet.id,
                    bet.bet_type.chars().take(40).collect::<String>(),
                    cfg.game
                ),
            )
            .bet(&bet.id)
            .event(ev),
        );
        return Ok((None, Play::NoRule));
    };
    // Face-value chips only on outside bets, marked-value sets anywhere when provided
    // (P217/2007 T.I C.I S.I r.16).
    if cfg.game == GameId::RouletteAmerican {
        match bet.attrs.get("chip_kind").map(String::as_str) {
            None | Some("colour") => {}
            Some(k @ ("face_value" | "marked_value")) => {
                if kind.inside() && (k == "face_value" || !cfg.marked_value_chips) {
                    adj.violation(
                        Violation::new(
                            "RL_FACE_VALUE_CHIP_INSIDE",
                            Severity::Low,
                            "P217/2007 T.I C.I S.I r.16",
                            format!(
                                "bet {}: {} chips on the inside bet {}",
                                bet.id,
                                k,
                                kind.id()
                            ),
                        )
                        .bet(&bet.id)
                        .event(ev),
                    );
                }
            }
            Some(other) => {
                return Err(RoundError::bet(
                    round,
                    &bet.id,
                    format!(
                        "attr chip_kind `{}` is not colour, face_value or marked_value",
                        other.chars().take(40).collect::<String>()
                    ),
                ));
            }
        }
    }
    if let Some(class) = kind.class() {
        // Every split, street, corner and line the layout makes possible, and only those
        // (P217/2007 T.I C.I S.I r.24(a), r.26; S.II r.16, r.17; R807/2015 r.6(d), r.10).
        return Ok(
            match ordinary_mask(kind, &bet.selection, cfg.zero_corner_allowed) {
                Some(mask) => (Some(kind), Play::Ordinary { mask, class }),
                None => {
                    illegal(adj, "is not a combination of the layout");
                    (Some(kind), Play::NoRule)
                }
            },
        );
    }
    // Announced bets.
    let online = cfg.game == GameId::RouletteFrenchOnline;
    if cfg.game == GameId::RouletteAmerican && cfg.wheel == WheelOrder::American {
        // Series and neighbours only on the French numbering (P217/2007 T.I C.I S.I r.25).
        adj.violation(
            Violation::new(
                "RL_SERIES_WRONG_WHEEL",
                Severity::Medium,
                cites.series_wheel,
                format!(
                    "bet {}: {} on a wheel with the American numbering",
                    bet.id,
                    kind.id()
                ),
            )
            .bet(&bet.id)
            .event(ev),
        );
        return Ok((Some(kind), Play::NoRule));
    }
    if !cfg.announced_bets {
        illegal(adj, "is not accepted at this table (announced_bets: false)");
        return Ok((Some(kind), Play::NoRule));
    }
    let offered = match kind {
        Kind::SeriesGrande => cfg.series[0].is_some(),
        Kind::SeriesPequena => cfg.series[1].is_some(),
        Kind::SeriesOrfaos => cfg.series[2].is_some(),
        Kind::Neighbours => !online || cfg.call_neighbours,
        Kind::Finals => cfg.call_finals,
        _ => false,
    };
    if !offered {
        // Call bets exist only as the operator's specific rules define them (R807/2015 r.8).
        adj.violation(
            Violation::new(
                "RLO_CALL_BET_NOT_OFFERED",
                Severity::Medium,
                "R807/2015 r.8",
                format!(
                    "bet {}: call bet {} is not offered by this table's specific rules",
                    bet.id,
                    kind.id()
                ),
            )
            .bet(&bet.id)
            .event(ev),
        );
        return Ok((Some(kind), Play::NoRule));
    }
    let Some(chips) = bet.chips.filter(|c| *c > 0) else {
        return Err(RoundError::bet(
            round,
            &bet.id,
            format!("{} needs a positive chip count (`chips`)", kind.id()),
        ));
    };
    let chips = i64::from(chips);
    let chips_violation =
        |adj: &mut Adjudication, code: &'static str, cite: &'static str, why: String| {
            adj.violation(
                Violation::new(
                    code,
                    Severity::Medium,
                    cite,
                    format!("bet {}: {} of {} chips {}", bet.id, kind.id(), chips, why),
                )
                .bet(&bet.id)
                .event(ev),
            );
        };
    match kind {
        Kind::SeriesGrande | Kind::SeriesPequena | Kind::SeriesOrfaos => {
            if !bet.selection.is_empty() {
                illegal(adj, "(a series takes no selection)");
                return Ok((Some(kind), Play::NoRule));
            }
            let slot = match kind {
                Kind::SeriesGrande => 0u8,
                Kind::SeriesPequena => 1,
                _ => 2,
            };
            let base = cfg.series[slot as usize]
                .as_ref()
                .map_or(1, |s| i64::from(s.base_chips));
            // Whole multiples of 9 / 6 / 5 chips, from 9 to 135 / 6 to 120 / 5 to 50
            // (P217/2007 T.I C.I S.I r.32(c)); a count that is not a multiple cannot be split
            // into the series' components: no payout rule, net 0.
            if chips % base != 0 {
                chips_violation(
                    adj,
                    "RL_SERIES_CHIPS",
                    cites.series_chips,
                    format!("is not a whole multiple of {base}"),
                );
                return Ok((Some(kind), Play::NoRule));
            }
            if cfg.game == GameId::RouletteAmerican {
                let max = match slot {
                    0 => 135,
                    1 => 120,
                    _ => 50,
                };
                if chips > max {
                    chips_violation(
                        adj,
                        "RL_SERIES_CHIPS",
                        cites.series_chips,
                        format!("is above the {max}-chip maximum"),
                    );
                }
            }
            Ok((
                Some(kind),
                Play::Series {
                    slot,
                    units: chips / base,
                    chips,
                },
            ))
        }
        Kind::Neighbours => {
            let [center] = bet.selection[..] else {
                illegal(adj, "(neighbours take one centre number)");
                return Ok((Some(kind), Play::NoRule));
            };
            // 3, 5 or 7 chips: the number and 1, 2 or 3 neighbours each side in wheel order
            // (P217/2007 T.I C.I S.I r.25(b); R807/2015 r.8(d); digest note N8).
            if !matches!(chips, 3 | 5 | 7) {
                chips_violation(
                    adj,
                    "RL_NEIGHBOURS_CHIPS",
                    cites.neighbours_chips,
                    "is not 3, 5 or 7 chips".into(),
                );
                return Ok((Some(kind), Play::NoRule));
            }
            let k = (chips - 1) / 2;
            Ok((
                Some(kind),
                Play::Straights {
                    mask: neighbours_mask(center, k as u32),
                    units: 1,
                    chips,
                },
            ))
        }
        _ => {
            // Finals: the numbers ending in d (R807/2015 r.8(e)).
            let [d @ 0..=9] = bet.selection[..] else {
                illegal(adj, "(finals take one digit 0-9)");
                return Ok((Some(kind), Play::NoRule));
            };
            let mask = finals_mask(d);
            let count = i64::from(mask.count_ones());
            if chips % count != 0 {
                chips_violation(
                    adj,
                    "RL_SERIES_CHIPS",
                    cites.series_chips,
                    format!("is not a whole multiple of the {count} numbers covered"),
                );
                return Ok((Some(kind), Play::NoRule));
            }
            Ok((
                Some(kind),
                Play::Straights {
                    mask,
                    units: chips / count,
                    chips,
                },
            ))
        }
    }
}

/// The due result of a bet on pocket `p`.
fn settle(
    cfg: &RouletteConfig,
    cites: &Cites,
    play: Play,
    amount: Cents,
    p: u8,
) -> (Cents, Outcome, &'static str, &'static str) {
    let bit = 1u64 << p;
    match play {
        Play::NoRule => (
            0,
            Outcome::Void,
            "not a bet of this table: no payout rule, stake returned",
            cites.bets,
        ),
        Play::Ordinary { mask, class } => {
            let cite = if class == Class::EvenMoney {
                cites.pay_simple
            } else {
                cites.pay_multiple
            };
            if mask & bit != 0 {
                // A winning bet stays the player's and is paid its multiple (S.I r.27(a)(b);
                // S.II r.18(a)(b); online: the operator's payouts).
                (
                    mul_div(amount, cfg.payout(class)),
                    Outcome::Won,
                    WON[class as usize],
                    cite,
                )
            } else if p == 0
                && !matches!(
                    class,
                    Class::Straight | Class::Split | Class::Street | Class::Corner | Class::Line
                )
            {
                // 0 makes every bet on the simple chances, dozens, columns and their splits lose
                // (S.I r.28; S.II r.19); online: the operator's zero rule.
                if cfg.zero_rule == ZeroRule::LaPartage && class == Class::EvenMoney {
                    (
                        -(amount - amount / 2),
                        Outcome::Lost,
                        "simple chance on 0: half the stake lost (la partage)",
                        cites.zero,
                    )
                } else {
                    (
                        -amount,
                        Outcome::Lost,
                        "outside bet lost outright on 0",
                        cites.zero,
                    )
                }
            } else {
                (-amount, Outcome::Lost, LOST[class as usize], cite)
            }
        }
        Play::Series { slot, units, chips } => {
            let Some(series) = cfg.series[slot as usize].as_ref() else {
                return (0, Outcome::Void, "series not offered", cites.pay_series);
            };
            let chip = amount / chips.max(1);
            // Each component containing the number is paid as the ordinary bet; every other
            // chip of the series loses (S.I r.27(c)).
            let mut net: i128 = 0;
            for c in &series.comps {
                let stake = i128::from(c.chips) * i128::from(units) * i128::from(chip);
                if c.mask & bit != 0 {
                    let (n, d) = cfg.payout(c.class);
                    net += stake * i128::from(n) / i128::from(d.max(1));
                } else {
                    net -= stake;
                }
            }
            let net = i64::try_from(net).unwrap_or(0);
            let (o, r) = outcome_of(
                net,
                "series: the winning component paid, the other chips lost",
                "series: no component won, every chip lost",
            );
            (net, o, r, cites.pay_series)
        }
        Play::Straights { mask, units, chips } => {
            let chip = amount / chips.max(1);
            let per = i128::from(units) * i128::from(chip);
            let count = i128::from(mask.count_ones());
            let net = if mask & bit != 0 {
                // The chip on the winning number is paid as a straight, the others lose
                // (S.I r.27(d)).
                let (n, d) = cfg.payout(Class::Straight);
                per * i128::from(n) / i128::from(d.max(1)) - (count - 1) * per
            } else {
                -count * per
            };
            let net = i64::try_from(net).unwrap_or(0);
            let (o, r) = outcome_of(
                net,
                "the chip on the number paid as a straight, the other chips lost",
                "number not covered: every chip lost",
            );
            (net, o, r, cites.pay_neighbours)
        }
    }
}

fn outcome_of(net: Cents, won: &'static str, lost: &'static str) -> (Outcome, &'static str) {
    match net.signum() {
        1 => (Outcome::Won, won),
        -1 => (Outcome::Lost, lost),
        _ => (Outcome::Push, "components won and lost evenly"),
    }
}

fn colour(p: u8) -> &'static str {
    if p == 0 {
        "zero"
    } else if crate::tables::RED_MASK & (1u64 << p) != 0 {
        "red"
    } else {
        "black"
    }
}

pub(crate) fn adjudicate(
    cfg: &RouletteConfig,
    state: &mut RouletteState,
    round: &Round,
    options: &Options,
) -> Result<Adjudication, RoundError> {
    let cites = game_cites(cfg.game);
    let land = cfg.land();
    let mut adj = Adjudication::new(cfg.game, round.round_id.clone());
    let n_bets = round
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Bet(_)))
        .count();
    let mut bets: Vec<PBet<'_>> = Vec::with_capacity(n_bets);

    // Spin tracking.
    let mut pocket: Option<u8> = None;
    let mut void_reason: Option<&str> = None;
    let mut awaiting_relaunch = false;
    let mut no_more_bets = false;
    let mut launches = 0u32;
    let mut last_dir = state.last_ball_direction;
    // Staff and equipment (changes from this round; state is written only on success).
    let mut new_spinner: Option<(&str, Option<i64>)> = None;
    let mut new_ball: Option<(&str, Option<i64>)> = None;
    let mut dealer_flagged = false;
    let mut ball_flagged = false;
    // Collection and payment.
    let mut first_pay: Option<usize> = None;
    let mut collect_after_pay = false;
    let mut last_payment_at: Option<i64> = None;
    let mut pay_block: Option<(Owner<'_>, u8)> = None;
    let mut pay_high: Option<u8> = None;
    let mut order_flagged = false;
    let mut seat_buf = String::new();

    for (i, ev) in round.events.iter().enumerate() {
        let t = event_time(round, ev.at_ms);
        match &ev.kind {
            EventKind::Bet(b) => {
                check_stake(round, &b.id, b.amount_cents)?;
                if find_bet(&bets, &b.id).is_some() {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("duplicate bet id `{}`", b.id),
                    ));
                }
                let (kind, play) = parse_bet(cfg, cites, round, b, i, &mut adj)?;
                if play.chips() > 1 && b.amount_cents % play.chips() != 0 {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        format!(
                            "amount {} is not a whole number of its {} chips",
                            b.amount_cents,
                            play.chips()
                        ),
                    ));
                }
                // No bet may be placed after "Jogo feito. Nada mais." (S.I r.20; S.II r.12).
                if no_more_bets {
                    late_bet(&mut adj, cites, &b.id, i, "placed", land);
                }
                bets.push(PBet {
                    bet: b,
                    ev: i,
                    amount: b.amount_cents,
                    withdrawn: false,
                    kind,
                    play,
                });
            }
            EventKind::BetChanged {
                bet_id,
                amount_cents,
            } => {
                let Some(k) = find_bet(&bets, bet_id) else {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("bet_changed names unknown bet `{bet_id}`"),
                    ));
                };
                check_stake(round, bet_id, *amount_cents)?;
                let chips = bets[k].play.chips();
                if chips > 1 && amount_cents % chips != 0 {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "amount {amount_cents} is not a whole number of the {chips} chips of bet `{bet_id}`"
                        ),
                    ));
                }
                // Nor may a bet be changed after the call (S.I r.20; S.II r.12).
                if no_more_bets {
                    late_bet(&mut adj, cites, bet_id, i, "changed", land);
                }
                bets[k].amount = *amount_cents;
            }
            EventKind::BetWithdrawn { bet_id } => {
                let Some(k) = find_bet(&bets, bet_id) else {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("bet_withdrawn names unknown bet `{bet_id}`"),
                    ));
                };
                if no_more_bets {
                    late_bet(&mut adj, cites, bet_id, i, "withdrawn", land);
                }
                bets[k].withdrawn = true;
            }
            EventKind::NoMoreBets => no_more_bets = true,
            EventKind::Launch {
                ball_direction,
                wheel_direction,
                from_pocket,
                ball_id,
            } => {
                if let Some(p) = from_pocket
                    && *p > 36
                {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("from_pocket {p} is not a pocket 0-36"),
                    ));
                }
                launches += 1;
                if !land {
                    continue;
                }
                // The ball is launched only after the previous round's payments and change
                // (S.I r.19; S.II r.11).
                if launches == 1
                    && let (Some(t), Some(paid)) = (t, state.last_payment_at_ms)
                    && t < paid
                {
                    adj.violation(Violation::new("RL_SPIN_BEFORE_PAYMENTS", Severity::Low, cites.spin_before, format!("ball launched at {t} before the previous round's last payment at {paid}")).event(i));
                }
                // After a void spin the ball is put in the previous spin's number and launched
                // again (S.I r.22; S.II r.14).
                if awaiting_relaunch {
                    awaiting_relaunch = false;
                    if let (Some(prev), Some(from)) = (state.last_number, *from_pocket)
                        && prev != from
                    {
                        adj.violation(Violation::new("RL_RELAUNCH_NOT_FROM_PREVIOUS", Severity::Low, cites.void, format!("relaunch after a void spin from pocket {from}, not from the previous number {prev}")).event(i));
                    }
                }
                // Launches alternate left-right / right-left, the wheel head turning against
                // the ball (S.I r.21; S.II r.13).
                if let Some(d) = ball_direction {
                    if last_dir == Some(*d) {
                        adj.violation(
                            Violation::new(
                                "RL_LAUNCH_DIRECTION",
                                Severity::Low,
                                cites.direction,
                                format!("ball launched {d:?} like the previous launch"),
                            )
                            .event(i),
                        );
                    }
                    if *wheel_direction == Some(*d) {
                        adj.violation(
                            Violation::new(
                                "RL_LAUNCH_DIRECTION",
                                Severity::Low,
                                cites.direction,
                                format!("wheel head turning {d:?}, the same way as the ball"),
                            )
                            .event(i),
                        );
                    }
                    last_dir = Some(*d);
                }
                // Two balls used alternately, hour by hour (S.I r.17; S.II r.9).
                if let Some(id) = ball_id.as_deref() {
                    let cur = new_ball
                        .map(|(b, s)| (Some(b), s))
                        .unwrap_or((state.ball_id.as_deref(), state.ball_since_ms));
                    if cur.0 != Some(id) {
                        new_ball = Some((id, t));
                    } else if let (Some(t), Some(since)) = (t, cur.1)
                        && t.saturating_sub(since) > HOUR_MS
                        && !ball_flagged
                    {
                        ball_flagged = true;
                        adj.violation(
                            Violation::new(
                                "RL_BALL_NOT_ALTERNATED",
                                Severity::Low,
                                cites.ball,
                                format!(
                                    "ball {id} in use since {since}, more than one hour at {t}"
                                ),
                            )
                            .event(i),
                        );
                    }
                }
                // The spinning dealer stays at most one hour (S.I r.33; S.II r.25).
                let sp = new_spinner
                    .map(|(s, since)| (Some(s), since))
                    .unwrap_or((state.spinner.as_deref(), state.spinner_since_ms));
                if let (Some(who), Some(t), Some(since)) = (sp.0, t, sp.1)
                    && t.saturating_sub(since) > HOUR_MS
                    && !dealer_flagged
                {
                    dealer_flagged = true;
                    adj.violation(Violation::new("RL_DEALER_OVER_ONE_HOUR", Severity::Low, cites.dealer, format!("spinning dealer {who} on the table since {since}, more than one hour at {t}")).event(i));
                }
            }
            EventKind::Ball { pocket: p } => {
                // 37 pockets, 0-36 (S.I r.2; S.II r.2; R807/2015 r.6(a)).
                if *p > 36 {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("pocket {p} is not 0-36"),
                    ));
                }
                if pocket.is_some() {
                    return Err(RoundError::event(
                        round,
                        i,
                        "a second result for the same spin without a void spin between",
                    ));
                }
                pocket = Some(*p);
            }
            EventKind::Void { reason } => {
                let known = if land {
                    matches!(reason.as_str(), "chip_fell" | "ball_fell" | "object_fell")
                } else {
                    reason == "malfunction"
                };
                if !known {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "void reason `{}` is not one of {}",
                            reason.chars().take(40).collect::<String>(),
                            if land {
                                "chip_fell, ball_fell, object_fell"
                            } else {
                                "malfunction"
                            }
                        ),
                    ));
                }
                // The spin decides nothing; relaunch from the previous number (S.I r.22; S.II r.14).
                pocket = None;
                void_reason = Some(reason);
                awaiting_relaunch = true;
            }
            EventKind::Collect { bet_ids } => {
                for id in bet_ids {
                    if find_bet(&bets, id).is_none() {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!("collect names unknown bet `{id}`"),
                        ));
                    }
                }
                if first_pay.is_some() {
                    collect_after_pay = true;
                }
                if t.is_some() {
                    last_payment_at = t;
                }
            }
            EventKind::Pay { bet_id, .. } => {
                let Some(k) = find_bet(&bets, bet_id) else {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("pay names unknown bet `{bet_id}`"),
                    ));
                };
                // Losing bets are collected before any prize is paid (S.I r.29; S.II r.20).
                if first_pay.is_none() {
                    first_pay = Some(i);
                }
                if t.is_some() {
                    last_payment_at = t;
                }
                // Prizes in the prescribed order, a player's prizes together (S.I r.29, r.30;
                // S.II r.20, r.21): payments are grouped in blocks of one owner; each block is
                // ranked by its earliest category; blocks must not go back in the order.
                if land && let Some(rank) = bets[k].kind.and_then(|kd| pay_rank(cfg.game, kd)) {
                    let o = owner(bets[k].bet, k);
                    match &mut pay_block {
                        Some((bo, r)) if *bo == o => *r = (*r).min(rank),
                        _ => {
                            if let Some((_, r)) = pay_block.take() {
                                pay_high = Some(pay_high.map_or(r, |h| h.max(r)));
                            }
                            if let Some(h) = pay_high
                                && rank < h
                                && !order_flagged
                            {
                                order_flagged = true;
                                adj.violation(Violation::new("RL_PAYOUT_ORDER", Severity::Low, cites.order, format!("bet {bet_id} ({}) paid after a later category of the payment order", bets[k].bet.bet_type)).bet(bet_id).event(i));
                            }
                            pay_block = Some((o, rank));
                        }
                    }
                }
            }
            EventKind::Role { role, seat, player } => match role.as_str() {
                "spinner" => {
                    let who: &str = match (player, seat) {
                        (Some(p), _) => p,
                        (None, Some(s)) => {
                            seat_buf = format!("seat:{s}");
                            // kept only if it differs from the state (allocation on change only)
                            if state.spinner.as_deref() != Some(seat_buf.as_str()) {
                                new_spinner = Some(("", t));
                            }
                            continue;
                        }
                        _ => {
                            return Err(RoundError::event(
                                round,
                                i,
                                "spinner role without player or seat",
                            ));
                        }
                    };
                    let cur = new_spinner.map(|(s, _)| s).or(state.spinner.as_deref());
                    if cur != Some(who) {
                        new_spinner = Some((who, t));
                    }
                }
                "dealer" => {}
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "role `{}` is not a roulette role (spinner, dealer)",
                            other.chars().take(40).collect::<String>()
                        ),
                    ));
                }
            },
            EventKind::Procedure {
                name,
                value,
                seat,
                amount_cents,
            } => match name.as_str() {
                "ball_change" => {}
                "colour_value" | "late_chip_exchange" | "colour_lost"
                    if cfg.game == GameId::RouletteAmerican =>
                {
                    if name == "colour_value" {
                        let Some(v) = amount_cents else {
                            return Err(RoundError::event(
                                round,
                                i,
                                "colour_value without amount_cents",
                            ));
                        };
                        // A colour's value: the table minimum or another posted value, never
                        // above the straight-up maximum (S.I r.9, r.13).
                        let below = cfg.table_min.is_some_and(|m| *v < m);
                        let above = cfg.straight_max.is_some_and(|m| *v > m);
                        if below || above {
                            let mut v2 = Violation::new("RL_CHIP_VALUE_OUT_OF_RANGE", Severity::Medium, "P217/2007 T.I C.I S.I r.9", format!("colour {} valued at {v} cents, outside table minimum {:?} .. straight maximum {:?}", value.as_deref().unwrap_or("?"), cfg.table_min, cfg.straight_max)).event(i);
                            if let Some(s) = seat {
                                v2 = v2.seat(*s);
                            }
                            adj.violation(v2);
                        }
                    } else if name == "late_chip_exchange" {
                        let chips: Option<i64> = value
                            .as_deref()
                            .and_then(|v| v.parse().ok())
                            .filter(|c| *c > 0 && *c <= 1_000_000);
                        let (Some(chips), Some(paid)) = (chips, amount_cents) else {
                            return Err(RoundError::event(
                                round,
                                i,
                                "late_chip_exchange needs value = chip count and amount_cents",
                            ));
                        };
                        // Late-presented colour chips are worth the table minimum (S.I r.15).
                        if let Some(min) = cfg.table_min
                            && *paid > chips.saturating_mul(min)
                        {
                            let mut v2 = Violation::new("RL_LATE_CHIPS_VALUE", Severity::High, "P217/2007 T.I C.I S.I r.15", format!("{chips} late colour chips exchanged for {paid} cents, more than {chips} × the table minimum {min}")).event(i);
                            if let Some(s) = seat {
                                v2 = v2.seat(*s);
                            }
                            adj.violation(v2);
                        }
                    }
                }
                "result_shown" if !land => {
                    if value
                        .as_deref()
                        .and_then(|v| v.parse::<u8>().ok())
                        .filter(|p| *p <= 36)
                        .is_none()
                    {
                        return Err(RoundError::event(
                            round,
                            i,
                            "result_shown needs value = a pocket 0-36",
                        ));
                    }
                }
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "procedure `{}` is not a {} procedure",
                            other.chars().take(40).collect::<String>(),
                            cfg.game
                        ),
                    ));
                }
            },
            EventKind::Fault { code, .. }
                if land
                    && matches!(
                        code.as_str(),
                        "ball_damaged" | "ball_lost" | "bets_disturbed"
                    ) => {}
            EventKind::Fault { code, .. } => {
                return Err(RoundError::event(
                    round,
                    i,
                    format!(
                        "fault `{}` is not a {} fault",
                        code.chars().take(40).collect::<String>(),
                        cfg.game
                    ),
                ));
            }
            EventKind::Card { .. }
            | EventKind::Dice { .. }
            | EventKind::Decision(_)
            | EventKind::JackpotDisplay { .. } => {
                return Err(RoundError::event(
                    round,
                    i,
                    format!("{} has no such event", cfg.game),
                ));
            }
        }
    }
    if let Some((_, r)) = pay_block.take()
        && let Some(h) = pay_high
        && r < h
        && !order_flagged
    {
        adj.violation(
            Violation::new(
                "RL_PAYOUT_ORDER",
                Severity::Low,
                cites.order,
                "payments to different players out of the prescribed order",
            )
            .review(),
        );
    }
    if collect_after_pay && land {
        adj.violation(
            Violation::new(
                "RL_PAID_BEFORE_COLLECTING",
                Severity::Low,
                cites.collect,
                format!(
                    "a prize was paid (event {}) before every losing bet was collected",
                    first_pay.unwrap_or(0)
                ),
            )
            .event(first_pay.unwrap_or(0)),
        );
    }
    let result = match (pocket, void_reason) {
        (Some(p), _) => Some(p),
        (None, Some(_)) => None,
        (None, None) => {
            return Err(RoundError::round(
                round,
                "the round has no ball result and no void spin",
            ));
        }
    };

    // R807/2015 r.5: on a multi-player wheel every player is bound to the same result.
    if !land
        && cfg.multi_player
        && let Some(p) = result
    {
        for (i, ev) in round.events.iter().enumerate() {
            if let EventKind::Procedure {
                name, value, seat, ..
            } = &ev.kind
                && name == "result_shown"
                && let Some(shown) = value.as_deref().and_then(|v| v.parse::<u8>().ok())
                && shown != p
            {
                let mut v = Violation::new(
                    "RLO_RESULT_NOT_COMMON",
                    Severity::High,
                    "R807/2015 r.5",
                    format!("player at seat {seat:?} was shown {shown}, the common result is {p}"),
                )
                .event(i);
                if let Some(s) = seat {
                    v = v.seat(*s);
                }
                adj.violation(v);
            }
        }
    }

    // Due results.
    adj.bets.reserve_exact(bets.len());
    if options.explain {
        match result {
            Some(p) => adj.note(
                if land { cites.void } else { "R807/2015 r.3(d)" },
                format!("the ball rested in {p} ({})", colour(p)),
            ),
            None => adj.note(
                cites.void,
                format!(
                    "void spin ({}) with no relaunch: every bet returned",
                    void_reason.unwrap_or("")
                ),
            ),
        }
    }
    for b in &bets {
        let (net, outcome, reason, cite) = if b.withdrawn {
            (
                0,
                Outcome::Withdrawn,
                "withdrawn before the decision",
                cites.late,
            )
        } else if let Some(p) = result {
            settle(cfg, cites, b.play, b.amount, p)
        } else {
            (0, Outcome::Void, "void spin: decides nothing", cites.void)
        };
        if options.explain {
            adj.note(
                cite,
                format!(
                    "bet {} ({} {:?}, {} cents): {} → {:+} cents",
                    b.bet.id, b.bet.bet_type, b.bet.selection, b.amount, reason, net
                ),
            );
        }
        adj.bets.push(BetOutcome {
            bet_id: b.bet.id.clone(),
            seat: b.bet.seat,
            stake_cents: b.amount,
            due_net_cents: net,
            outcome,
            reported_net_cents: None,
            reason: Cow::Borrowed(reason),
            citation: Cow::Borrowed(cite),
        });
    }

    // Limits per chance: what one player stakes on one chance (position) in the round
    // (S.I r.26, r.32; S.II r.17, r.24; R807/2015 r.3(b)(c)).
    for (i, b) in bets.iter().enumerate() {
        let (Some(kind), false) = (b.kind, b.withdrawn) else {
            continue;
        };
        if matches!(b.play, Play::NoRule) {
            continue;
        }
        let lim = cfg.limits[kind as usize];
        if lim.min.is_none() && lim.max.is_none() {
            continue;
        }
        let cov = b.play.coverage(cfg);
        let o = owner(b.bet, i);
        let same = |j: usize, c: &PBet<'_>| {
            !c.withdrawn
                && c.kind == Some(kind)
                && c.play.coverage(cfg) == cov
                && owner(c.bet, j) == o
        };
        if bets[..i].iter().enumerate().any(|(j, c)| same(j, c)) {
            continue;
        }
        let total: Cents = bets
            .iter()
            .enumerate()
            .skip(i)
            .filter(|(j, c)| same(*j, c))
            .map(|(_, c)| c.amount)
            .sum();
        if let Some(min) = lim.min
            && total < min
        {
            adj.violation(
                Violation::new(
                    "RL_BET_BELOW_MIN",
                    Severity::Medium,
                    cites.limits,
                    format!(
                        "bet {}: {} staked on {} is below the minimum {min}",
                        b.bet.id,
                        total,
                        kind.id()
                    ),
                )
                .bet(&b.bet.id)
                .event(b.ev),
            );
        }
        if let Some(max) = lim.max
            && total > max
        {
            adj.violation(
                Violation::new(
                    "RL_BET_ABOVE_MAX",
                    Severity::Medium,
                    cites.limits,
                    format!(
                        "bet {}: {} staked on {} is above the maximum {max}",
                        b.bet.id,
                        total,
                        kind.id()
                    ),
                )
                .bet(&b.bet.id)
                .event(b.ev),
            );
        }
    }
    // Number and neighbours: its chip on a number, with the player's straights on it, may not
    // exceed the straight-up maximum (S.I r.32(d)); read per number (digest note N7).
    if cfg.game == GameId::RouletteAmerican
        && let Some(max) = cfg.straight_max
    {
        for (i, b) in bets.iter().enumerate() {
            let Play::Straights { mask, .. } = b.play else {
                continue;
            };
            if b.withdrawn {
                continue;
            }
            let o = owner(b.bet, i);
            let worst = (0..37u8)
                .filter(|n| mask & (1u64 << n) != 0)
                .map(|n| {
                    let bit = 1u64 << n;
                    bets.iter()
                        .enumerate()
                        .filter(|(j, c)| !c.withdrawn && owner(c.bet, *j) == o)
                        .map(|(_, c)| match c.play {
                            Play::Straights { mask, units, chips } if mask & bit != 0 => {
                                units * (c.amount / chips.max(1))
                            }
                            Play::Ordinary {
                                mask,
                                class: Class::Straight,
                            } if mask == bit => c.amount,
                            _ => 0,
                        })
                        .sum::<Cents>()
                })
                .max()
                .unwrap_or(0);
            if worst > max {
                adj.violation(Violation::new("RL_NEIGHBOURS_OVER_PLENO_MAX", Severity::Medium, cites.neighbours_max, format!("bet {}: neighbours chip plus straights on one number total {worst} cents, above the straight-up maximum {max}", b.bet.id)).bet(&b.bet.id).event(b.ev).review());
            }
        }
    }

    if result.is_none() {
        adj.void = Some(VoidInfo {
            reason: Cow::Borrowed("void spin (golpe nulo) not relaunched"),
            citation: Cow::Borrowed(cites.void),
        });
        // A bet reported with a non-zero net on a void spin (S.I r.22; S.II r.14).
        if let Some(s) = &round.settlement {
            for r in &s.results {
                if r.net_cents != 0 && adj.bets.iter().any(|b| b.bet_id == r.bet_id) {
                    adj.violation(
                        Violation::new(
                            "RL_VOID_SPIN_SETTLED",
                            Severity::High,
                            cites.void,
                            format!(
                                "bet {} reported {} cents on a void spin",
                                r.bet_id, r.net_cents
                            ),
                        )
                        .bet(&r.bet_id),
                    );
                }
            }
        }
    }

    adj.reconcile(
        round.settlement.as_ref(),
        "RL_WRONG_PAYOUT",
        cites.wrong_payout,
    );

    // Commit the state (only on success).
    if let Some(p) = result {
        state.last_number = Some(p);
    }
    state.last_ball_direction = last_dir;
    if let Some((id, since)) = new_ball {
        state.ball_id = Some(id.to_string());
        state.ball_since_ms = since;
    }
    if let Some((id, since)) = new_spinner {
        state.spinner = Some(if id.is_empty() {
            seat_buf
        } else {
            id.to_string()
        });
        state.spinner_since_ms = since;
    }
    if last_payment_at.is_some() {
        state.last_payment_at_ms = last_payment_at;
    }
    Ok(adj)
}

fn late_bet(
    adj: &mut Adjudication,
    cites: &'static Cites,
    bet_id: &Id,
    i: usize,
    what: &str,
    land: bool,
) {
    let v = Violation::new(
        "RL_LATE_BET",
        Severity::Medium,
        cites.late,
        format!("bet {bet_id} {what} after \"no more bets\""),
    )
    .bet(bet_id)
    .event(i);
    adj.violation(if land { v } else { v.review() });
}
