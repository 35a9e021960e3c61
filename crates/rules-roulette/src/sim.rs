//! # Simulation: playing roulette by the rules ([`rules_core::Simulate`])
//!
//! [`RouletteEngine`] plays one complete spin of any configured roulette table:
//!
//! * **Players**: 1 to 6 players (never every seat: one stays free for a late arrival), each
//!   with a chip value (American: the colour's value, recorded with a `colour_value` procedure,
//!   between the table minimum and the straight-up maximum, r.9; French and online: face-value
//!   chips in multiples of the minimum), placing 1 to 5 bets: every bet type the table offers
//!   (straights, splits, streets, corners, lines, dozens, columns, their splits, the six simple
//!   chances, and the announced bets where the table accepts them: series and neighbours on a
//!   French-order wheel, the online call bets the operator's rules define, finals online), in
//!   whole chips, within the per-chance limits counted per player and position (r.26, r.32), the
//!   neighbours chip plus straights on one number within the straight-up maximum (r.32(d)), the
//!   series chip counts within r.32(c). Now and then a player changes or withdraws an outside
//!   bet before the call, and a few bets are placed while the ball turns.
//! * **Procedure** (land tables): the spinning dealer (`spinner` role) relieved every 50
//!   minutes (r.33), the two balls alternated every 50 minutes with a `ball_change` announcement
//!   (r.17), launches alternating direction with the wheel head turning the other way (r.21),
//!   the launch after the previous round's last payment (r.19), "no more bets" before the ball
//!   rests (r.20), losing bets collected before any prize is paid, prizes paid by player in the
//!   order of r.29 (American) / r.20 (French) (r.30, r.21).
//! * **Void spins**: land, about 1 spin in 250 (a chip, a ball or an object falls in, r.22): the
//!   spin is voided and the ball relaunched from the previous number; online, about 1 round in
//!   1,000 the operator voids the round (`malfunction`), every bet returned.
//! * **Outcome**: the pocket uniformly from the 37 with the [`SimRng`].
//! * **Settlement**: the honest one, computed by the engine itself
//!   ([`rules_core::honest_settlement`]), with the mistake applied when one is asked for.
//!
//! Timestamps start at `start_ms` (or 2 s after the previous round's last payment, if later)
//! and grow by realistic steps: a spin takes about a minute.
//!
//! ## Mistakes ([`MISTAKES`])
//! Each is forced when the drawn round does not offer it (a straight added on the winning
//! number, 0 drawn, ...), so it is always made.

use std::collections::BTreeMap;

use rules_core::{
    Bet, Cents, Direction, Engine, EventKind, GameId, Id, MistakeSpec, Options, ReportedNet, Round,
    RoundEvent, Settlement, SimError, SimRng, Simulate, TableConfig, honest_settlement,
};

use crate::bets::{Class, Kind};
use crate::tables::{finals_mask, neighbours_mask};
use crate::{RouletteConfig, RouletteEngine, RouletteState, WheelOrder};

const MINUTE: i64 = 60_000;
/// Staff and balls are changed a little before the hour the rules allow.
const ROTATE_AFTER_MS: i64 = 50 * MINUTE;

/// The mistakes a simulated roulette table can be told to make.
pub const MISTAKES: &[MistakeSpec] = &[
    MistakeSpec {
        id: "overpay_straight",
        description: "a winning straight paid 36 to 1 instead of 35 to 1",
        codes: &["RL_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "pay_outside_on_zero",
        description: "an even-money bet paid 1 to 1 although 0 came",
        codes: &["RL_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "late_bet",
        description: "a bet accepted after \"no more bets\"",
        codes: &["RL_LATE_BET"],
    },
    MistakeSpec {
        id: "illegal_split",
        description: "a split 3-4 accepted (not adjacent on the layout)",
        codes: &["RL_ILLEGAL_BET"],
    },
    MistakeSpec {
        id: "void_spin_settled",
        description: "a void spin not relaunched, and one bet collected on it anyway",
        codes: &["RL_VOID_SPIN_SETTLED"],
    },
    MistakeSpec {
        id: "launch_same_direction",
        description: "the ball launched the same way as the previous launch (land tables)",
        codes: &["RL_LAUNCH_DIRECTION"],
    },
    MistakeSpec {
        id: "paid_before_collecting",
        description: "a prize paid before the losing bets were collected (land tables)",
        codes: &["RL_PAID_BEFORE_COLLECTING"],
    },
];

/// The mistakes a table of `game` can make (their ids, in [`MISTAKES`] order): every one but the
/// land procedures (`launch_same_direction`, `paid_before_collecting`) online.
pub fn mistakes_of(game: GameId) -> Vec<&'static str> {
    MISTAKES
        .iter()
        .map(|m| m.id)
        .filter(|id| {
            game != GameId::RouletteFrenchOnline
                || !matches!(*id, "launch_same_direction" | "paid_before_collecting")
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mistake {
    OverpayStraight,
    PayOutsideOnZero,
    LateBet,
    IllegalSplit,
    VoidSpinSettled,
    LaunchSameDirection,
    PaidBeforeCollecting,
}

fn parse_mistake(cfg: &RouletteConfig, id: Option<&str>) -> Result<Option<Mistake>, SimError> {
    let Some(id) = id else { return Ok(None) };
    let m = match id {
        "overpay_straight" => Mistake::OverpayStraight,
        "pay_outside_on_zero" => Mistake::PayOutsideOnZero,
        "late_bet" => Mistake::LateBet,
        "illegal_split" => Mistake::IllegalSplit,
        "void_spin_settled" => Mistake::VoidSpinSettled,
        "launch_same_direction" => Mistake::LaunchSameDirection,
        "paid_before_collecting" => Mistake::PaidBeforeCollecting,
        other => return Err(SimError::UnknownMistake(other.to_string())),
    };
    if !cfg.land()
        && matches!(
            m,
            Mistake::LaunchSameDirection | Mistake::PaidBeforeCollecting
        )
    {
        return Err(SimError::MistakeNotApplicable {
            mistake: id.to_string(),
            reason: format!(
                "{} has no launch-direction or collection-order rule (land procedures only)",
                cfg.game
            ),
        });
    }
    Ok(Some(m))
}

/// A per-chance limit as the whole-table examples set it: max = ratio × min (P217/2007 T.I C.I
/// S.I r.32(a)(b); S.II r.24), one minimum for every chance (digest note N3).
fn ratio_limits(min: Cents, scale_pct: i64) -> Vec<rules_core::ChanceLimit> {
    let ratios: [(&str, i64); 15] = [
        ("straight", 30),
        ("split", 60),
        ("street", 90),
        ("corner", 120),
        ("line", 180),
        ("dozen", 360),
        ("column", 360),
        ("dozen_split", 720),
        ("column_split", 720),
        ("even", 540),
        ("odd", 540),
        ("low", 540),
        ("high", 540),
        ("red", 540),
        ("black", 540),
    ];
    ratios
        .iter()
        .map(|(chance, k)| rules_core::ChanceLimit {
            chance: chance.to_string(),
            min_cents: None,
            max_cents: Some(min * k * scale_pct / 100),
        })
        .collect()
}

/// The online call-bet compositions: the land series of P217/2007 T.I C.I S.I r.25(a), which
/// cover exactly the sectors of R807/2015 r.8(a)-(c), as `chips, count, numbers...` groups.
fn composition(t: &[crate::tables::Component]) -> Vec<i64> {
    let mut out = Vec::new();
    for c in t {
        out.push(i64::from(c.chips));
        out.push(c.numbers.len() as i64);
        out.extend(c.numbers.iter().map(|n| i64::from(*n)));
    }
    out
}

fn example_table(game: GameId) -> TableConfig {
    use rules_core::Setting;
    let mut t = TableConfig::new(game);
    match game {
        GameId::RouletteAmerican => {
            // €5 colour chips, one minimum, every chance's maximum at 5/6 of its r.32 ratio.
            t.regulation = Some("P217/2007".into());
            t.min_bet_cents = Some(500);
            t.max_bet_cents = Some(225_000);
            t.limits = ratio_limits(500, 100);
            t.seats = Some(8);
            t.settings
                .insert("wheel".into(), Setting::Text("french".into()));
        }
        GameId::RouletteFrench => {
            t.regulation = Some("P217/2007".into());
            t.min_bet_cents = Some(500);
            t.max_bet_cents = Some(270_000);
            t.limits = ratio_limits(500, 100);
            t.seats = Some(10);
        }
        _ => {
            // Online: €1 minimum per chance; the operator's specific rules: la partage on 0, the
            // land French payouts (the default), the three series as call bets with the land
            // compositions, neighbours and finals, one multi-player wheel.
            t.regulation = Some("R807/2015".into());
            t.min_bet_cents = Some(100);
            t.max_bet_cents = Some(54_000);
            t.limits = ratio_limits(100, 100);
            t.seats = Some(12);
            t.settings
                .insert("zero_rule".into(), Setting::Text("la_partage".into()));
            t.settings.insert(
                "call_series_grande".into(),
                Setting::List(composition(&crate::tables::SERIES_GRANDE)),
            );
            t.settings.insert(
                "call_series_pequena".into(),
                Setting::List(composition(&crate::tables::SERIES_PEQUENA)),
            );
            t.settings.insert(
                "call_series_orfaos".into(),
                Setting::List(composition(&crate::tables::SERIES_ORFAOS)),
            );
            t.settings
                .insert("call_neighbours".into(), Setting::Bool(true));
            t.settings.insert("call_finals".into(), Setting::Bool(true));
            t.settings
                .insert("multi_player".into(), Setting::Bool(true));
        }
    }
    t
}

/// Relative frequency of each bet type among the bets players make.
fn weight(k: Kind) -> u64 {
    match k {
        Kind::Straight => 18,
        Kind::Split => 9,
        Kind::Street => 5,
        Kind::Corner => 7,
        Kind::Line => 4,
        Kind::Dozen => 6,
        Kind::Column => 5,
        Kind::DozenSplit | Kind::ColumnSplit => 2,
        Kind::Even | Kind::Odd | Kind::Low | Kind::High | Kind::Red | Kind::Black => 5,
        Kind::SeriesGrande => 3,
        Kind::SeriesPequena | Kind::SeriesOrfaos => 2,
        Kind::Neighbours => 3,
        Kind::Finals => 2,
    }
}

/// The bet types this table offers (announced bets only where they are accepted).
fn offered(cfg: &RouletteConfig) -> Vec<(Kind, u64)> {
    let kinds: &[Kind] = if cfg.game == GameId::RouletteFrenchOnline {
        crate::french_online::KINDS
    } else {
        crate::american::KINDS
    };
    let online = cfg.game == GameId::RouletteFrenchOnline;
    let announced_ok = cfg.announced_bets
        && !(cfg.game == GameId::RouletteAmerican && cfg.wheel == WheelOrder::American);
    kinds
        .iter()
        .filter(|k| match k {
            Kind::SeriesGrande => announced_ok && cfg.series[0].is_some(),
            Kind::SeriesPequena => announced_ok && cfg.series[1].is_some(),
            Kind::SeriesOrfaos => announced_ok && cfg.series[2].is_some(),
            Kind::Neighbours => announced_ok && (!online || cfg.call_neighbours),
            Kind::Finals => announced_ok && cfg.call_finals,
            _ => true,
        })
        .map(|k| (*k, weight(*k)))
        .collect()
}

/// Payment order rank (American r.29, French r.20; online: the French order, not checked).
fn pay_rank(game: GameId, k: Kind) -> u8 {
    match game {
        GameId::RouletteAmerican => crate::american::pay_rank(k),
        _ => crate::french::pay_rank(k),
    }
    .unwrap_or(u8::MAX)
}

struct Player {
    seat: u8,
    id: Id,
    /// Value of one chip.
    unit: Cents,
    /// Positions already bet (limits are per player and position).
    held: Vec<(Kind, Vec<u8>)>,
    /// Straight-up exposure per number: straights and neighbours chips (S.I r.32(d)).
    exposure: [Cents; 37],
}

/// A bet placed this round, for the settlement procedure.
struct Placed {
    id: Id,
    kind: Kind,
    player: Id,
    sel: Vec<u8>,
    amount: Cents,
    withdrawn: bool,
}

const COLOURS: [&str; 12] = [
    "red", "green", "blue", "yellow", "white", "orange", "purple", "pink", "brown", "grey",
    "black", "cyan",
];
const DEALERS: [&str; 4] = ["dealer-1", "dealer-2", "dealer-3", "dealer-4"];
const BALLS: [&str; 2] = ["ball-1", "ball-2"];

struct Sim<'a> {
    cfg: &'a RouletteConfig,
    rng: &'a mut SimRng,
    round_id: &'a Id,
    events: Vec<RoundEvent>,
    t: i64,
    next_bet: u32,
    offered: Vec<(Kind, u64)>,
    total_weight: u64,
    placed: Vec<Placed>,
}

fn step(rng: &mut SimRng, lo: i64, hi: i64) -> i64 {
    lo + rng.below((hi - lo + 1) as u64) as i64
}

impl<'a> Sim<'a> {
    fn push(&mut self, kind: EventKind) {
        self.events.push(RoundEvent::at(self.t, kind));
    }

    fn wait(&mut self, lo: i64, hi: i64) {
        self.t += step(self.rng, lo, hi);
    }

    fn new_player(&mut self, seat: u8) -> Player {
        let min = self.cfg.table_min.unwrap_or(100);
        let mult = *self.rng.pick(&[1, 1, 1, 2, 2, 4]).unwrap_or(&1);
        let mut unit = min * mult;
        if let Some(max) = self.cfg.straight_max
            && unit > max
        {
            unit = min;
        }
        let p = Player {
            seat,
            id: format!("p{seat}").into(),
            unit,
            held: Vec::new(),
            exposure: [0; 37],
        };
        // American colour chips: the colour's value is recorded on the display (S.I r.9, r.13).
        if self.cfg.game == GameId::RouletteAmerican {
            self.push(EventKind::Procedure {
                name: "colour_value".into(),
                value: Some(COLOURS[usize::from(seat) % COLOURS.len()].into()),
                seat: Some(seat),
                amount_cents: Some(unit),
            });
            self.wait(1_000, 3_000);
        }
        p
    }

    fn pick_kind(&mut self) -> Kind {
        let mut r = self.rng.below(self.total_weight);
        for (k, w) in &self.offered {
            if r < *w {
                return *k;
            }
            r -= w;
        }
        Kind::Straight
    }

    /// A legal selection (and chip count for announced bets) of bet type `k`.
    fn selection(&mut self, k: Kind) -> (Vec<u8>, Option<u32>) {
        let rng = &mut *self.rng;
        match k {
            Kind::Straight => (vec![rng.below(37) as u8], None),
            Kind::Split => (random_split(rng).to_vec(), None),
            Kind::Street => {
                let i = rng.below(14) as u8;
                let s = match i {
                    12 => [0, 1, 2],
                    13 => [0, 2, 3],
                    _ => [3 * i + 1, 3 * i + 2, 3 * i + 3],
                };
                (s.to_vec(), None)
            }
            Kind::Corner => {
                let n_corners = if self.cfg.zero_corner_allowed { 23 } else { 22 };
                let i = rng.below(n_corners) as u8;
                if i == 22 {
                    (vec![0, 1, 2, 3], None)
                } else {
                    let n = 3 * (i / 2) + 1 + i % 2;
                    (vec![n, n + 1, n + 3, n + 4], None)
                }
            }
            Kind::Line => {
                let n = 3 * rng.below(11) as u8 + 1;
                ((n..n + 6).collect(), None)
            }
            Kind::Dozen | Kind::Column => (vec![rng.range(1, 3) as u8], None),
            Kind::DozenSplit | Kind::ColumnSplit => {
                let a = rng.range(1, 2) as u8;
                (vec![a, a + 1], None)
            }
            Kind::Even | Kind::Odd | Kind::Low | Kind::High | Kind::Red | Kind::Black => {
                (Vec::new(), None)
            }
            Kind::SeriesGrande | Kind::SeriesPequena | Kind::SeriesOrfaos => {
                let slot = match k {
                    Kind::SeriesGrande => 0,
                    Kind::SeriesPequena => 1,
                    _ => 2,
                };
                let base = self.cfg.series[slot].as_ref().map_or(1, |s| s.base_chips);
                // 1 to 3 units: within 9-135 / 6-120 / 5-50 chips (S.I r.32(c)).
                let units = *rng.pick(&[1, 1, 1, 2, 2, 3]).unwrap_or(&1);
                (Vec::new(), Some(base * units))
            }
            Kind::Neighbours => {
                let chips = *rng.pick(&[3, 5, 5, 7]).unwrap_or(&5);
                (vec![rng.below(37) as u8], Some(chips))
            }
            Kind::Finals => {
                let d = rng.below(10) as u8;
                let count = finals_mask(d).count_ones();
                let units = rng.range(1, 2) as u32;
                (vec![d], Some(count * units))
            }
        }
    }

    /// Whole chips of `p.unit`, within the chance's limits; `None` if none fit.
    fn ordinary_amount(&mut self, k: Kind, unit: Cents) -> Option<Cents> {
        let lim = self.cfg.limits[k as usize];
        let min = lim.min.unwrap_or(unit);
        let max = lim.max.unwrap_or(unit * 100);
        let lo = ((min + unit - 1) / unit).max(1);
        let hi = max / unit;
        if lo > hi {
            return None;
        }
        let outside = matches!(
            k.class(),
            Some(
                Class::EvenMoney
                    | Class::Dozen
                    | Class::Column
                    | Class::DozenSplit
                    | Class::ColumnSplit
            )
        );
        let mults: &[i64] = if outside {
            &[1, 1, 2, 2, 3, 4, 5, 10]
        } else {
            &[1, 1, 1, 1, 2, 2, 3, 4]
        };
        let n = (lo * self.rng.pick(mults).copied().unwrap_or(1)).min(hi);
        Some(n * unit)
    }

    /// Try to make one legal bet for player `p` of a randomly chosen type, or of type `want`.
    fn make_bet(&mut self, p: &mut Player, want: Option<(Kind, Vec<u8>)>) -> Option<Bet> {
        let (k, sel, chips) = match want {
            Some((k, sel)) => (k, sel, None),
            None => {
                let k = self.pick_kind();
                let (sel, chips) = self.selection(k);
                (k, sel, chips)
            }
        };
        if p.held.iter().any(|(hk, hs)| *hk == k && *hs == sel) {
            return None;
        }
        let amount = match chips {
            None => self.ordinary_amount(k, p.unit)?,
            Some(c) => {
                let a = i64::from(c) * p.unit;
                let lim = self.cfg.limits[k as usize];
                if lim.min.is_some_and(|m| a < m) || lim.max.is_some_and(|m| a > m) {
                    return None;
                }
                a
            }
        };
        // Straight-up exposure per number (S.I r.32(d)).
        let mut per_number: Vec<(u8, Cents)> = Vec::new();
        match k {
            Kind::Straight => per_number.push((sel[0], amount)),
            Kind::Neighbours => {
                let m = neighbours_mask(sel[0], (chips.unwrap_or(3) - 1) / 2);
                for n in 0..37u8 {
                    if m & (1u64 << n) != 0 {
                        per_number.push((n, p.unit));
                    }
                }
            }
            Kind::Finals => {
                let m = finals_mask(sel[0]);
                let per = amount / i64::from(m.count_ones());
                for n in 0..37u8 {
                    if m & (1u64 << n) != 0 {
                        per_number.push((n, per));
                    }
                }
            }
            _ => {}
        }
        if let Some(max) = self.cfg.straight_max
            && per_number
                .iter()
                .any(|(n, a)| p.exposure[usize::from(*n)] + a > max)
        {
            return None;
        }
        for (n, a) in per_number {
            p.exposure[usize::from(n)] += a;
        }
        p.held.push((k, sel.clone()));
        self.next_bet += 1;
        let id: Id = format!("{}/b{}", self.round_id, self.next_bet).into();
        let mut bet = Bet::new(&id, k.id(), amount)
            .seat(p.seat)
            .player(&p.id)
            .selection(&sel);
        bet.chips = chips;
        // Face-value chips on the outside bets now and then (American S.I r.16).
        if self.cfg.game == GameId::RouletteAmerican && !k.inside() && self.rng.chance(1, 5) {
            bet = bet.attr("chip_kind", "face_value");
        }
        self.placed.push(Placed {
            id,
            kind: k,
            player: p.id.clone(),
            sel,
            amount,
            withdrawn: false,
        });
        Some(bet)
    }

    /// Place a bet: the event and its time.
    fn place(&mut self, bet: Bet) {
        self.push(EventKind::Bet(bet));
        self.wait(600, 4_000);
    }
}

fn random_split(rng: &mut SimRng) -> [u8; 2] {
    let i = rng.below(60) as u8;
    if i < 24 {
        let n = 3 * (i / 2) + 1 + i % 2;
        [n, n + 1]
    } else if i < 57 {
        let n = i - 23;
        [n, n + 3]
    } else {
        [0, i - 56]
    }
}

fn opposite(d: Direction) -> Direction {
    match d {
        Direction::Clockwise => Direction::Counterclockwise,
        Direction::Counterclockwise => Direction::Clockwise,
    }
}

fn next_of<'s>(list: &[&'s str], cur: Option<&str>) -> &'s str {
    let i = cur
        .and_then(|c| list.iter().position(|x| *x == c))
        .map_or(0, |i| (i + 1) % list.len());
    list[i]
}

#[allow(clippy::too_many_arguments)]
fn simulate(
    table: &TableConfig,
    cfg: &RouletteConfig,
    state: &RouletteState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    mistake: Option<&str>,
) -> Result<Round, SimError> {
    let m = parse_mistake(cfg, mistake)?;
    let land = cfg.land();
    let offered = offered(cfg);
    let total_weight = offered.iter().map(|(_, w)| w).sum();
    // The launch comes after the previous round's payments (S.I r.19; S.II r.11).
    let t0 = match state.last_payment_at_ms {
        Some(p) => start_ms.max(p.saturating_add(2_000)),
        None => start_ms,
    };
    let mut s = Sim {
        cfg,
        rng,
        round_id: &round_id,
        events: Vec::with_capacity(40),
        t: t0,
        next_bet: 0,
        offered,
        total_weight,
        placed: Vec::new(),
    };

    // The outcome of the wheel, and whether the spin is voided.
    let mut pocket = s.rng.below(37) as u8;
    if m == Some(Mistake::PayOutsideOnZero) {
        pocket = 0;
    }
    let void_spin = land && s.rng.chance(1, 250);
    let round_void = (!land && s.rng.chance(1, 1_000)) || m == Some(Mistake::VoidSpinSettled);

    // Staff and balls (land): spinner at most an hour (S.I r.33), balls alternated hourly
    // (S.I r.17).
    let mut ball_id: Option<String> = None;
    if land {
        let relieve = match (&state.spinner, state.spinner_since_ms) {
            (None, _) => true,
            (Some(_), Some(since)) => t0 - since >= ROTATE_AFTER_MS,
            (Some(_), None) => false,
        };
        if relieve {
            let next = next_of(&DEALERS, state.spinner.as_deref());
            s.push(EventKind::Role {
                role: "spinner".into(),
                seat: None,
                player: Some(next.into()),
            });
            s.wait(2_000, 6_000);
        }
        let ball = match (&state.ball_id, state.ball_since_ms) {
            (None, _) => BALLS[0].to_string(),
            (Some(b), Some(since)) if t0 - since >= ROTATE_AFTER_MS => {
                let nb = next_of(&BALLS, Some(b)).to_string();
                s.push(EventKind::Procedure {
                    name: "ball_change".into(),
                    value: Some(nb.clone()),
                    seat: None,
                    amount_cents: None,
                });
                s.wait(1_000, 3_000);
                nb
            }
            (Some(b), _) => b.clone(),
        };
        ball_id = Some(ball);
    }

    // Players and their bets; one seat stays free for a late arrival.
    let seats = table.seats.unwrap_or(8).clamp(2, 37);
    let n_players = s.rng.range(1, u64::from(seats - 1).min(6)) as usize;
    let mut free: Vec<u8> = (1..=seats).collect();
    s.rng.shuffle(&mut free);
    let mut chosen: Vec<u8> = free.drain(..n_players).collect();
    chosen.sort_unstable();
    let mut players: Vec<Player> = Vec::with_capacity(chosen.len() + 1);
    for seat in chosen {
        let p = s.new_player(seat);
        players.push(p);
    }
    let mut queue: Vec<usize> = Vec::new();
    for (i, _) in players.iter().enumerate() {
        let n = s.rng.range(1, 5) as usize;
        queue.extend(std::iter::repeat_n(i, n));
    }
    s.rng.shuffle(&mut queue);
    for i in queue {
        for _ in 0..4 {
            if let Some(b) = s.make_bet(&mut players[i], None) {
                s.place(b);
                break;
            }
        }
    }
    // Now and then an outside bet is changed, or a bet withdrawn, before the call (r.20).
    if s.rng.chance(1, 12) && !s.placed.is_empty() {
        let k = s.rng.below(s.placed.len() as u64) as usize;
        let outside = s.placed[k].kind.class().is_some_and(|c| {
            matches!(
                c,
                Class::EvenMoney
                    | Class::Dozen
                    | Class::Column
                    | Class::DozenSplit
                    | Class::ColumnSplit
            )
        });
        let lim = cfg.limits[s.placed[k].kind as usize];
        let unit = players
            .iter()
            .find(|p| p.id == s.placed[k].player)
            .map_or(100, |p| p.unit);
        let new_amount = s.placed[k].amount + unit;
        if outside && lim.max.is_none_or(|m| new_amount <= m) {
            let bet_id = s.placed[k].id.clone();
            s.placed[k].amount = new_amount;
            s.push(EventKind::BetChanged {
                bet_id,
                amount_cents: new_amount,
            });
        } else {
            let bet_id = s.placed[k].id.clone();
            s.placed[k].withdrawn = true;
            s.push(EventKind::BetWithdrawn { bet_id });
        }
        s.wait(1_000, 3_000);
    }

    // The extra player who makes the mistake's bet when the table's own bets do not offer it.
    let mut extra: Option<usize> = None;
    let mut extra_player = |s: &mut Sim<'_>, players: &mut Vec<Player>| -> usize {
        if let Some(i) = extra {
            return i;
        }
        let seat = free[0];
        let p = s.new_player(seat);
        players.push(p);
        extra = Some(players.len() - 1);
        players.len() - 1
    };
    let live = |s: &Sim<'_>, f: &dyn Fn(&Placed) -> bool| -> bool {
        s.placed.iter().any(|p| !p.withdrawn && f(p))
    };
    let not_applicable = |why: &str| SimError::MistakeNotApplicable {
        mistake: mistake.unwrap_or_default().to_string(),
        reason: why.to_string(),
    };
    // A bet the mistake needs and the table's own bets do not offer.
    let needed: Option<(Kind, Vec<u8>)> = match m {
        Some(Mistake::OverpayStraight)
            if !live(&s, &|p| p.kind == Kind::Straight && p.sel == [pocket]) =>
        {
            Some((Kind::Straight, vec![pocket]))
        }
        Some(Mistake::PayOutsideOnZero)
            if !live(&s, &|p| p.kind.class() == Some(Class::EvenMoney)) =>
        {
            let simple = [
                Kind::Red,
                Kind::Black,
                Kind::Even,
                Kind::Odd,
                Kind::Low,
                Kind::High,
            ];
            Some((*s.rng.pick(&simple).unwrap_or(&Kind::Red), Vec::new()))
        }
        Some(Mistake::VoidSpinSettled) if !live(&s, &|_| true) => Some((Kind::Red, Vec::new())),
        _ => None,
    };
    if let Some(want) = needed {
        let i = extra_player(&mut s, &mut players);
        let b = s
            .make_bet(&mut players[i], Some(want))
            .ok_or_else(|| not_applicable("the bet it needs does not fit the table limits"))?;
        s.place(b);
    }
    if m == Some(Mistake::IllegalSplit) {
        let i = s.rng.below(players.len() as u64) as usize;
        s.next_bet += 1;
        let id: Id = format!("{}/b{}", s.round_id, s.next_bet).into();
        let p = &players[i];
        let bet = Bet::new(&id, "split", p.unit)
            .seat(p.seat)
            .player(&p.id)
            .selection(&[3, 4]);
        s.placed.push(Placed {
            id,
            kind: Kind::Split,
            player: p.id.clone(),
            sel: vec![3, 4],
            amount: p.unit,
            withdrawn: false,
        });
        s.place(bet);
    }
    if m == Some(Mistake::PaidBeforeCollecting) {
        // A sure winner and a sure loser.
        let i = extra_player(&mut s, &mut players);
        let other = (pocket + 1 + s.rng.below(36) as u8) % 37;
        for n in [pocket, other] {
            let b = s
                .make_bet(&mut players[i], Some((Kind::Straight, vec![n])))
                .ok_or_else(|| not_applicable("two straights do not fit the table limits"))?;
            s.place(b);
        }
    }

    // The launch: alternating direction, the wheel head turning the other way (S.I r.21).
    let mut dir = match state.last_ball_direction {
        Some(d) => opposite(d),
        None => *s
            .rng
            .pick(&[Direction::Clockwise, Direction::Counterclockwise])
            .unwrap_or(&Direction::Clockwise),
    };
    let mut wheel = opposite(dir);
    if m == Some(Mistake::LaunchSameDirection) {
        match state.last_ball_direction {
            Some(d) => {
                dir = d;
                wheel = opposite(d);
            }
            None => wheel = dir,
        }
    }
    s.wait(1_000, 4_000);
    let launch_at = s.t;
    s.push(EventKind::Launch {
        ball_direction: Some(dir),
        wheel_direction: Some(wheel),
        from_pocket: None,
        ball_id: ball_id.clone(),
    });
    // A few bets while the ball turns, before the call.
    s.wait(1_000, 3_000);
    if s.rng.chance(1, 3) {
        let i = s.rng.below(players.len() as u64) as usize;
        if let Some(b) = s.make_bet(&mut players[i], None) {
            s.push(EventKind::Bet(b));
            s.wait(500, 1_500);
        }
    }
    // "Jogo feito. Nada mais." as the ball slows down (S.I r.20).
    s.t = s.t.max(launch_at + step(s.rng, 8_000, 12_000));
    s.push(EventKind::NoMoreBets);
    if m == Some(Mistake::LateBet) {
        s.wait(500, 2_000);
        let mut done = false;
        for _ in 0..8 {
            let i = s.rng.below(players.len() as u64) as usize;
            if let Some(b) = s.make_bet(&mut players[i], None) {
                s.push(EventKind::Bet(b));
                done = true;
                break;
            }
        }
        if !done {
            let i = extra_player(&mut s, &mut players);
            let b = s
                .make_bet(&mut players[i], Some((Kind::Red, Vec::new())))
                .ok_or_else(|| not_applicable("no bet fits the table limits"))?;
            s.push(EventKind::Bet(b));
        }
    }

    let void_reason = || if land { "object_fell" } else { "malfunction" };
    if round_void {
        // The spin is voided and, here, not relaunched: the round is void.
        s.wait(2_000, 6_000);
        s.push(EventKind::Void {
            reason: void_reason().into(),
        });
    } else {
        if void_spin {
            // Something fell into the wheel: void spin, relaunch from the previous number
            // (S.I r.22).
            s.wait(2_000, 6_000);
            let reason = *s
                .rng
                .pick(&["chip_fell", "ball_fell", "object_fell"])
                .unwrap_or(&"chip_fell");
            s.push(EventKind::Void {
                reason: reason.into(),
            });
            s.wait(15_000, 40_000);
            dir = opposite(dir);
            let relaunch_at = s.t;
            s.push(EventKind::Launch {
                ball_direction: Some(dir),
                wheel_direction: Some(opposite(dir)),
                from_pocket: state.last_number,
                ball_id: ball_id.clone(),
            });
            s.t = relaunch_at + step(s.rng, 8_000, 12_000);
            s.push(EventKind::NoMoreBets);
        }
        s.wait(4_000, 12_000);
        s.push(EventKind::Ball { pocket });
        if !land && cfg.multi_player {
            // Every player of the multi-player wheel is shown the one result (R807/2015 r.5).
            let mut seats: Vec<u8> = players.iter().map(|p| p.seat).collect();
            seats.sort_unstable();
            seats.dedup();
            for seat in seats {
                s.push(EventKind::Procedure {
                    name: "result_shown".into(),
                    value: Some(pocket.to_string()),
                    seat: Some(seat),
                    amount_cents: None,
                });
            }
        }
    }

    // What the rules say is due: the engine itself, on a copy of the state.
    let mut round = Round {
        round_id: round_id.clone(),
        opened_at_ms: Some(t0),
        jackpot_before_cents: None,
        events: std::mem::take(&mut s.events),
        settlement: None,
    };
    let adj = RouletteEngine::adjudicate(cfg, &mut state.clone(), &round, &Options::default())?;
    let mut settlement = honest_settlement(&adj);
    let set = |st: &mut Settlement, id: &Id, net: Cents| {
        if let Some(r) = st.results.iter_mut().find(|r| &r.bet_id == id) {
            r.net_cents = net;
        } else {
            st.results.push(ReportedNet {
                bet_id: id.clone(),
                net_cents: net,
            });
        }
    };
    match m {
        Some(Mistake::OverpayStraight) => {
            let b = s
                .placed
                .iter()
                .find(|p| {
                    !p.withdrawn
                        && p.kind == Kind::Straight
                        && adj.bet(&p.id).is_some_and(|o| o.due_net_cents > 0)
                })
                .ok_or_else(|| not_applicable("no winning straight"))?;
            set(&mut settlement, &b.id, b.amount * 36);
        }
        Some(Mistake::PayOutsideOnZero) => {
            let b = s
                .placed
                .iter()
                .find(|p| !p.withdrawn && p.kind.class() == Some(Class::EvenMoney))
                .ok_or_else(|| not_applicable("no simple chance"))?;
            set(&mut settlement, &b.id, b.amount);
        }
        Some(Mistake::VoidSpinSettled) => {
            let b = s
                .placed
                .iter()
                .find(|p| !p.withdrawn && adj.bet(&p.id).is_some())
                .ok_or_else(|| not_applicable("no bet"))?;
            settlement.void = false;
            set(&mut settlement, &b.id, -b.amount);
        }
        _ => {}
    }

    // Collection of the losing bets, then the prizes, by player, in the prescribed order
    // (S.I r.29, r.30; S.II r.20, r.21).
    let kind_of: BTreeMap<&str, (Kind, &Id)> = s
        .placed
        .iter()
        .map(|p| (&*p.id, (p.kind, &p.player)))
        .collect();
    let losers: Vec<Id> = settlement
        .results
        .iter()
        .filter(|r| r.net_cents < 0)
        .map(|r| r.bet_id.clone())
        .collect();
    // One block of payments per player, ranked by its first category; blocks in rank order.
    struct Block<'r> {
        rank: u8,
        owner: &'r Id,
        pays: Vec<(u8, &'r ReportedNet)>,
    }
    let mut blocks: Vec<Block<'_>> = Vec::new();
    for r in settlement.results.iter().filter(|r| r.net_cents > 0) {
        let Some((k, owner)) = kind_of.get(&*r.bet_id) else {
            continue;
        };
        let rank = pay_rank(cfg.game, *k);
        match blocks.iter_mut().find(|b| b.owner == *owner) {
            Some(b) => {
                b.rank = b.rank.min(rank);
                b.pays.push((rank, r));
            }
            None => blocks.push(Block {
                rank,
                owner,
                pays: vec![(rank, r)],
            }),
        }
    }
    blocks.sort_by_key(|b| b.rank);
    let mut pays: Vec<(Id, Cents)> = Vec::new();
    for mut b in blocks {
        b.pays.sort_by_key(|(rank, _)| *rank);
        pays.extend(
            b.pays
                .into_iter()
                .map(|(_, r)| (r.bet_id.clone(), r.net_cents)),
        );
    }
    let mut tail: Vec<EventKind> = Vec::new();
    let collect = (!losers.is_empty()).then_some(EventKind::Collect { bet_ids: losers });
    let pay_events = pays
        .into_iter()
        .map(|(bet_id, amount_cents)| EventKind::Pay {
            bet_id,
            amount_cents,
        });
    if m == Some(Mistake::PaidBeforeCollecting) && !round_void {
        let mut pe = pay_events;
        tail.extend(pe.next());
        tail.extend(collect);
        tail.extend(pe);
    } else {
        tail.extend(collect);
        tail.extend(pay_events);
    }
    s.wait(3_000, 6_000);
    for k in tail {
        let at = s.t;
        round.events.push(RoundEvent::at(at, k));
        s.wait(1_500, 4_000);
    }
    round.settlement = Some(settlement);
    Ok(round)
}

impl Simulate for RouletteEngine {
    fn mistakes() -> &'static [MistakeSpec] {
        MISTAKES
    }

    fn mistakes_for(game: GameId) -> Vec<&'static MistakeSpec> {
        let ids = mistakes_of(game);
        Self::mistakes()
            .iter()
            .filter(|m| ids.contains(&m.id))
            .collect()
    }

    fn example_table(game: GameId) -> TableConfig {
        example_table(game)
    }

    fn simulate(
        table: &TableConfig,
        config: &RouletteConfig,
        state: &RouletteState,
        round_id: Id,
        start_ms: i64,
        rng: &mut SimRng,
        mistake: Option<&str>,
    ) -> Result<Round, SimError> {
        simulate(table, config, state, round_id, start_ms, rng, mistake)
    }
}
