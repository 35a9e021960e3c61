//! One hand played by the rules: seats and caves, blinds or antes, the deal, the betting rounds
//! and the board, recorded event by event.
//!
//! The betting follows the engine's own reading of the turn order ([`crate::hand`]): the same
//! cursor, the same "who still has to act" test, the same raise count, so an honest hand never
//! shows a player acting out of turn, a round closed short or a raise over the cap.

use rules_core::{
    Bet, Card, Cents, Decision, EventKind, Id, MAX_AMOUNT_CENTS, Recipient, Round, RoundEvent,
    SimRng,
};

use super::deal::{self, Deal};
use super::seating::{Seating, mix};
use crate::config::{Commission, Limit, PokerConfig, Regulation};
use crate::eval::{self, Category, HandValue, Ranking, Selection};
use crate::hand::{SEAT_SLOTS, mul_bp};
use crate::state::PokerState;
use crate::variant::{Forced, Streets};

/// What the hand is steered towards.
#[derive(Clone, Copy, Debug, Default)]
pub struct Steer {
    /// Rig a tie between two players, who then never fold (a split pot at the showdown).
    pub tie: bool,
    /// Loose, aggressive play with deep caves (big pots: a binding commission cap).
    pub big_pot: bool,
    /// One raise adding less than the table minimum (r.86).
    pub raise_below_min: bool,
    /// Raises in one betting round until one goes beyond the cap (r.87; Reg806 r.38).
    pub raise_war: bool,
    /// Honest incidents: exposed hole cards, misdeals, timeouts, disconnections, occasional
    /// rigged ties.
    pub incidents: bool,
}

/// A played hand (no settlement yet) and what the steering achieved.
#[derive(Clone, Debug)]
pub struct Played {
    pub round: Round,
    /// The two seats rigged to tie, when the deal could be rigged.
    pub tie: Option<(u8, u8)>,
    /// The hand went to a showdown.
    pub showdown: bool,
    /// The steered raise (below the minimum, or over the cap) was made.
    pub applied: bool,
    /// Event indices where an operator failure could cut the hand: every hole card dealt, at
    /// least two players in, fewer than five common cards.
    pub cut_points: Vec<usize>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Seat {
    cave: Cents,
    round_in: Cents,
    folded: bool,
    all_in: bool,
    acted: bool,
    /// Holds a rigged tie: never folds, never times out.
    stubborn: bool,
    disconnected: bool,
    /// Style, 0-100: how readily the player enters pots and how often he bets or raises.
    loose: u32,
    aggr: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    Fold,
    Check,
    Call(Cents),
    Bet(Cents),
    Raise(Cents),
    AllIn,
    Timeout,
    Disconnect,
}

/// Index in `ring` of the first seat strictly after `seat` clockwise.
fn pos_after(ring: &[u8], seat: u8) -> usize {
    ring.iter().position(|&s| s > seat).unwrap_or(0)
}

/// Index in `ring` of the first seat at or after `seat` clockwise.
fn pos_at_or_after(ring: &[u8], seat: u8) -> usize {
    ring.iter().position(|&s| s >= seat).unwrap_or(0)
}

struct Play<'a> {
    cfg: &'a PokerConfig,
    rng: &'a mut SimRng,
    steer: Steer,
    events: Vec<RoundEvent>,
    clock: i64,
    ring: Vec<u8>,
    button: u8,
    seats: [Seat; SEAT_SLOTS],
    hole: Vec<Vec<Card>>,
    board: Vec<Card>,
    // The engine's betting state, mirrored.
    opened: bool,
    bround: usize,
    cursor: usize,
    current_bet: Cents,
    raises: u32,
    last_inc: Cents,
    first_seat: u8,
    prev_first: u8,
    last_aggressor: Option<u8>,
    prev_aggressor: Option<u8>,
    pot: Cents,
    po_min_open: Cents,
    // Steering.
    applied: bool,
    war_round: Option<usize>,
    cut_points: Vec<usize>,
    dealt: bool,
    /// Per seat: the made hand's value and the board length it was computed for.
    made: [(usize, HandValue); SEAT_SLOTS],
}

/// Play one hand at a table configured as `cfg`, from `state`, with `seating`.
#[allow(clippy::too_many_arguments)]
pub fn play(
    cfg: &PokerConfig,
    state: &PokerState,
    seating: &Seating,
    key: u64,
    round_id: &Id,
    start_ms: i64,
    rng: &mut SimRng,
    steer: Steer,
) -> Played {
    let mut ring = seating.ring.clone();
    let online = cfg.regulation == Regulation::Reg806;
    // r.29, r.30; Reg806 r.4(c), r.46, r.47, r.64: the mão/button moves to the next seat in the
    // hand clockwise; at a new table the mão starts at the first player left of the dealer
    // (r.29), online the button is drawn (Reg806 r.46).
    let (mut button, drawn) = match state.button {
        Some(prev) => (ring[pos_after(&ring, prev)], false),
        None if online => (ring[rng.below(ring.len() as u64) as usize], true),
        None => (ring[0], false),
    };
    // r.80: a newcomer does not take the seat holding the mão; he plays from the next hand and
    // the mão passes to the occupied seat on his left.
    if let Some(prev) = state.button
        && cfg.rules.forced == Forced::MaoBlinds
    {
        while seating.newcomers.contains(&button) && ring.len() > cfg.rules.min_players {
            ring.retain(|&s| s != button);
            button = ring[pos_after(&ring, prev)];
        }
    }
    let mut p = Play {
        cfg,
        rng,
        steer,
        events: Vec::with_capacity(64),
        clock: start_ms,
        ring,
        button,
        seats: [Seat::default(); SEAT_SLOTS],
        hole: vec![Vec::new(); SEAT_SLOTS],
        board: Vec::with_capacity(5),
        opened: false,
        bround: 0,
        cursor: 0,
        current_bet: 0,
        raises: 0,
        last_inc: cfg.min_bet,
        first_seat: 0,
        prev_first: 0,
        last_aggressor: None,
        prev_aggressor: None,
        pot: 0,
        po_min_open: 0,
        applied: false,
        war_round: None,
        cut_points: Vec::new(),
        dealt: false,
        made: [(0, HandValue::default()); SEAT_SLOTS],
    };
    let mut out = Played {
        round: Round {
            round_id: round_id.clone(),
            opened_at_ms: Some(start_ms),
            jackpot_before_cents: None,
            events: Vec::new(),
            settlement: None,
        },
        tie: None,
        showdown: false,
        applied: false,
        cut_points: Vec::new(),
    };
    p.setup(state, seating, key, drawn);
    let null = p.deal_and_play(&mut out);
    out.showdown = !null && p.live_count() >= 2 && p.board.len() == 5;
    out.applied = p.applied;
    out.cut_points = std::mem::take(&mut p.cut_points);
    out.round.events = p.events;
    out
}

impl Play<'_> {
    fn online(&self) -> bool {
        self.cfg.regulation == Regulation::Reg806
    }

    fn emit(&mut self, dt: i64, kind: EventKind) {
        self.clock += dt;
        self.events.push(RoundEvent::at(self.clock, kind));
    }

    fn decision(&mut self, dt: i64, seat: u8, action: &str, amount: Option<Cents>) {
        let mut d = Decision::new(seat, action);
        d.amount_cents = amount;
        self.emit(dt, EventKind::Decision(d));
    }

    fn procedure(&mut self, name: &str, seat: Option<u8>, amount: Option<Cents>) {
        self.emit(
            0,
            EventKind::Procedure {
                name: name.to_string(),
                value: None,
                seat,
                amount_cents: amount,
            },
        );
    }

    fn think_ms(&mut self) -> i64 {
        if self.online() {
            self.rng.range(700, 9_000) as i64
        } else {
            self.rng.range(1_500, 14_000) as i64
        }
    }

    fn card_ms(&mut self) -> i64 {
        if self.online() {
            40
        } else {
            self.rng.range(300, 700) as i64
        }
    }

    /// A cave: mostly 20-100 big blinds, some short stacks (all-ins, side pots), some deep.
    fn draw_cave(&mut self) -> Cents {
        let bb = self.cfg.min_bet;
        let unit = (bb / 2).max(1);
        let r = self.rng.below(100);
        let bbs = if self.steer.big_pot || self.steer.raise_war || self.steer.raise_below_min {
            self.rng.range(20, 200)
        } else if r < 12 {
            self.rng.range(4, 15)
        } else if r < 78 {
            self.rng.range(20, 100)
        } else {
            self.rng.range(100, 250)
        };
        let mut cave = bbs as Cents * bb + unit * self.rng.below(2) as Cents;
        if self.online() {
            cave += self.rng.below(unit as u64) as Cents;
        }
        cave.min(MAX_AMOUNT_CENTS)
    }

    fn setup(&mut self, state: &PokerState, seating: &Seating, key: u64, drawn: bool) {
        let cfg = self.cfg;
        let bb = cfg.min_bet;
        let ring = self.ring.clone();
        let blinds = cfg.rules.forced == Forced::MaoBlinds;
        for &s in &ring {
            let style = mix(&[key, s as u64, seating.stint[s as usize], 11]);
            let mut cave = self.draw_cave();
            if blinds {
                cave += state.missed_blinds_cents.get(&s).copied().unwrap_or(0);
                if state.idle_hands.get(&s).is_some_and(|&n| n >= 5) {
                    cave += bb;
                }
            }
            self.seats[s as usize] = Seat {
                cave: cave.min(MAX_AMOUNT_CENTS),
                loose: 10 + (style % 41) as u32,
                aggr: 10 + ((style >> 8) % 51) as u32,
                ..Seat::default()
            };
        }
        let player = |s: u8| {
            format!(
                "P{:08X}",
                mix(&[key, s as u64, seating.stint[s as usize]]) as u32
            )
        };
        // Departures and arrivals between hands.
        for &s in &seating.leavers {
            self.procedure("leave", Some(s), None);
        }
        for &s in &seating.newcomers {
            // A newcomer waiting for the next hand (r.80) buys in all the same.
            let cave = if ring.contains(&s) {
                self.seats[s as usize].cave
            } else {
                self.draw_cave()
            };
            self.procedure("buy_in", Some(s), Some(cave));
            // Reg806 r.17(b): the entry fee on the buy-in.
            if let Commission::BuyIn { bp } = cfg.commission {
                self.procedure("entry_fee", Some(s), Some(mul_bp(cave, bp)));
            }
        }
        for &s in &ring {
            let cave = self.seats[s as usize].cave;
            let bet = Bet::new(&format!("s{s}"), "seat", cave)
                .seat(s)
                .player(&player(s));
            self.emit(0, EventKind::Bet(bet));
        }
        for &s in &seating.away {
            self.procedure("absent", Some(s), None);
        }
        if drawn {
            self.procedure("button_draw", None, None);
        }
        self.emit(
            0,
            EventKind::Role {
                role: "button".into(),
                seat: Some(self.button),
                player: None,
            },
        );
        self.procedure("shuffle", None, None);
        match cfg.rules.streets {
            // r.101: cut by the player at the right of the mão holder.
            Streets::OneByOne => {
                let n = ring.len();
                let b = ring.iter().position(|&s| s == self.button).unwrap_or(0);
                self.procedure("cut", Some(ring[(b + n - 1) % n]), None);
            }
            // r.32: the dealer cuts.
            _ if cfg.rules.land => self.procedure("cut", None, None),
            _ => {}
        }
        // P461 r.49: after a pó the opener bets at least the sum put up.
        if cfg.regulation == Regulation::P461 && state.po_carry_cents > 0 {
            self.pot = state.po_carry_cents;
            self.po_min_open = bb.saturating_mul(ring.len() as Cents);
        }
        self.post_forced(state);
    }

    fn put(&mut self, s: u8, a: Cents, round: bool) {
        let x = &mut self.seats[s as usize];
        x.cave -= a;
        if round {
            x.round_in += a;
        }
        if x.cave == 0 {
            x.all_in = true;
        }
        self.pot += a;
    }

    /// Blinds (r.81-r.83; Reg806 r.22, r.48), the big blind owed after five idle hands (r.89),
    /// missed blinds as dead money (r.90), or the sintético antes (r.102).
    fn post_forced(&mut self, state: &PokerState) {
        let cfg = self.cfg;
        let bb = cfg.min_bet;
        let ring = self.ring.clone();
        let n = ring.len();
        match cfg.rules.forced {
            Forced::MaoBlinds | Forced::ButtonBlinds => {
                let (sb_seat, bb_seat) = if cfg.rules.forced == Forced::MaoBlinds {
                    (self.button, ring[pos_after(&ring, self.button)])
                } else {
                    let sb = ring[pos_after(&ring, self.button)];
                    (sb, ring[pos_after(&ring, sb)])
                };
                let sb = cfg.small_blind.unwrap_or(bb / 2).max(1);
                let dt = self.think_ms() / 4;
                self.decision(dt, sb_seat, "post_sb", Some(sb));
                self.put(sb_seat, sb, true);
                let dt = self.think_ms() / 4;
                self.decision(dt, bb_seat, "post_bb", Some(bb));
                self.put(bb_seat, bb, true);
                if cfg.rules.forced == Forced::MaoBlinds {
                    let start = pos_after(&ring, bb_seat);
                    for k in 0..n {
                        let s = ring[(start + k) % n];
                        if s != bb_seat && state.idle_hands.get(&s).is_some_and(|&i| i >= 5) {
                            self.decision(800, s, "post_forced_bb", Some(bb));
                            self.put(s, bb, true);
                        }
                        if let Some(&owed) = state.missed_blinds_cents.get(&s)
                            && owed > 0
                        {
                            self.decision(800, s, "post_dead", Some(owed));
                            self.put(s, owed, false);
                        }
                    }
                }
            }
            Forced::Antes => {
                let start = pos_after(&ring, self.button);
                for k in 0..n {
                    let s = ring[(start + k) % n];
                    self.decision(600, s, "post_ante", Some(bb));
                    self.put(s, bb, false);
                }
            }
        }
    }

    // ------------------------------------------------------------- the deal

    /// Deal and play the hand; true when it ended null (a misdeal).
    fn deal_and_play(&mut self, out: &mut Played) -> bool {
        let cfg = self.cfg;
        let rules = cfg.rules;
        let ring = self.ring.clone();
        let n = ring.len();
        // r.35, r.77: from the small blind (the mão holder) clockwise; Reg806 r.49: from the
        // small blind; sintético (P461 r.42, digest N15): from the mão holder.
        let start = match rules.forced {
            Forced::ButtonBlinds => pos_after(&ring, self.button),
            _ => pos_at_or_after(&ring, self.button),
        };
        let want_tie = self.steer.tie || (self.steer.incidents && self.rng.chance(3, 100));
        let mut deal: Option<Deal> = None;
        if want_tie && n >= 2 {
            let a = self.rng.below(n as u64) as usize;
            let b = (a + 1 + self.rng.below(n as u64 - 1) as usize) % n;
            if let Some(d) = deal::tied(self.rng, &rules, n, a, b) {
                self.seats[ring[a] as usize].stubborn = true;
                self.seats[ring[b] as usize].stubborn = true;
                out.tie = Some((ring[a], ring[b]));
                deal = Some(d);
            }
        }
        let mut deal = match deal {
            Some(d) => d,
            None => deal::shuffled(self.rng, &rules, n, start),
        };
        // r.70(c): one hole card turned while dealing: dealing goes on, the seat is served last
        // and the card is the flop's burn.
        let exposure = if self.steer.incidents
            && rules.forced == Forced::MaoBlinds
            && rules.burns
            && self.rng.chance(1, 100)
        {
            let pass = self.rng.below(rules.hole_cards as u64) as usize;
            let k = self.rng.below(n as u64) as usize;
            deal.stub.pop().map(|c| (pass, (start + k) % n, c))
        } else {
            None
        };
        for pass in 0..rules.hole_cards {
            for k in 0..n {
                let i = (start + k) % n;
                let s = ring[i];
                let dt = self.card_ms();
                match exposure {
                    Some((ep, ei, c)) if ep == pass && ei == i => {
                        self.emit(
                            dt,
                            EventKind::Card {
                                to: Recipient::seat(s),
                                card: c,
                                face_up: true,
                            },
                        );
                        self.emit(
                            0,
                            EventKind::Fault {
                                code: "card_exposed".into(),
                                seat: Some(s),
                                detail: Some(format!("{c} turned while dealing (r.70(c))")),
                            },
                        );
                    }
                    _ => {
                        let card = deal.hole[i][pass];
                        self.emit(
                            dt,
                            EventKind::Card {
                                to: Recipient::seat(s),
                                card,
                                face_up: false,
                            },
                        );
                    }
                }
            }
        }
        if let Some((ep, ei, _)) = exposure {
            let dt = self.card_ms();
            self.emit(
                dt,
                EventKind::Card {
                    to: Recipient::seat(ring[ei]),
                    card: deal.hole[ei][ep],
                    face_up: false,
                },
            );
        }
        for (i, &s) in ring.iter().enumerate() {
            self.hole[s as usize] = deal.hole[i].clone();
        }
        self.dealt = true;
        // r.69; r.109; P461 r.62: a misdeal makes the hand null.
        if self.steer.incidents && rules.land && self.rng.chance(3, 1000) {
            self.emit(
                2_000,
                EventKind::Fault {
                    code: "misdeal".into(),
                    seat: None,
                    detail: None,
                },
            );
            self.emit(
                500,
                EventKind::Void {
                    reason: "misdeal".into(),
                },
            );
            return true;
        }
        if self.steer.raise_war {
            self.war_round = Some(match rules.streets {
                Streets::OneByOne => 1 + self.rng.below(2) as usize,
                Streets::FlopTurnRiver => usize::from(self.rng.chance(3, 10)),
            });
        }
        match rules.streets {
            Streets::FlopTurnRiver => {
                self.preflop();
                for street in 0..3 {
                    if self.live_count() <= 1 {
                        break;
                    }
                    if rules.burns {
                        let burn = match exposure {
                            Some((_, _, c)) if street == 0 => c,
                            _ => deal.burns[street],
                        };
                        let dt = self.card_ms();
                        self.emit(
                            dt,
                            EventKind::Card {
                                to: Recipient::Burn,
                                card: burn,
                                face_up: false,
                            },
                        );
                    }
                    let cards: &[Card] = match street {
                        0 => &deal.board[0..3],
                        1 => &deal.board[3..4],
                        _ => &deal.board[4..5],
                    };
                    for &c in cards {
                        self.board_card(c);
                    }
                    self.open_round(street + 1);
                    self.betting();
                }
            }
            Streets::OneByOne => {
                if cfg.stardilho
                    && n >= 3
                    && self
                        .rng
                        .chance(if self.steer.incidents { 10 } else { 4 }, 100)
                {
                    self.star_phase();
                }
                for k in 0..5 {
                    if self.live_count() <= 1 {
                        break;
                    }
                    self.board_card(deal.board[k]);
                    self.open_round(k + 1);
                    self.betting();
                }
            }
        }
        false
    }

    fn board_card(&mut self, c: Card) {
        self.cut_point();
        let dt = self.card_ms() + 1_000;
        self.emit(
            dt,
            EventKind::Card {
                to: Recipient::Board,
                card: c,
                face_up: true,
            },
        );
        self.board.push(c);
    }

    fn cut_point(&mut self) {
        if self.dealt && self.board.len() < 5 && self.live_count() >= 2 {
            self.cut_points.push(self.events.len());
        }
    }

    // ------------------------------------------------- the engine's turn order

    fn active(&self, s: u8) -> bool {
        let x = &self.seats[s as usize];
        !x.folded && !x.all_in
    }

    fn active_count(&self) -> usize {
        self.ring.iter().filter(|&&s| self.active(s)).count()
    }

    fn live_count(&self) -> usize {
        self.ring
            .iter()
            .filter(|&&s| !self.seats[s as usize].folded)
            .count()
    }

    fn needs_to_act(&self, s: u8, active: usize) -> bool {
        let x = &self.seats[s as usize];
        if !self.active(s) {
            return false;
        }
        if x.round_in < self.current_bet {
            return true;
        }
        if x.acted {
            return false;
        }
        active > 1
    }

    fn expected(&self) -> Option<(usize, u8)> {
        let n = self.ring.len();
        let active = self.active_count();
        (0..n)
            .map(|k| (self.cursor + k) % n)
            .map(|p| (p, self.ring[p]))
            .find(|&(_, s)| self.needs_to_act(s, active))
    }

    /// Round 1 of the blind games: first to act is the player left of the big blind (r.84;
    /// Reg806 r.51).
    fn preflop(&mut self) {
        let bb = self.big_blind_seat();
        self.opened = true;
        self.bround = 0;
        self.cursor = pos_after(&self.ring, bb);
        self.current_bet = self
            .ring
            .iter()
            .map(|&s| self.seats[s as usize].round_in)
            .max()
            .unwrap_or(0);
        self.raises = 0;
        self.last_inc = self.cfg.min_bet;
        self.first_seat = self
            .expected()
            .map(|(_, s)| s)
            .unwrap_or(self.ring[self.cursor]);
        self.betting();
    }

    fn big_blind_seat(&self) -> u8 {
        let ring = &self.ring;
        match self.cfg.rules.forced {
            Forced::MaoBlinds => ring[pos_after(ring, self.button)],
            _ => {
                let sb = ring[pos_after(ring, self.button)];
                ring[pos_after(ring, sb)]
            }
        }
    }

    /// A betting round on a new street (r.85, r.42-r.46; Reg806 r.54-r.58; r.107, r.108).
    fn open_round(&mut self, r: usize) {
        if self.opened {
            self.prev_aggressor = self.last_aggressor;
            self.prev_first = self.first_seat;
        }
        self.bround = r;
        self.opened = true;
        self.current_bet = 0;
        self.raises = 0;
        self.last_inc = self.cfg.min_bet;
        self.last_aggressor = None;
        for k in 0..self.ring.len() {
            let s = self.ring[k] as usize;
            self.seats[s].round_in = 0;
            self.seats[s].acted = false;
        }
        let ring = &self.ring;
        let b = self.button;
        let start = match (self.cfg.rules.streets, self.cfg.rules.forced) {
            (Streets::FlopTurnRiver, Forced::MaoBlinds) => pos_at_or_after(ring, b),
            (Streets::FlopTurnRiver, _) => pos_after(ring, b),
            (Streets::OneByOne, _) if r <= 1 => pos_after(ring, b),
            (Streets::OneByOne, _) => match self.prev_aggressor {
                Some(a) => pos_at_or_after(ring, a),
                None => pos_at_or_after(ring, self.prev_first),
            },
        };
        self.cursor = start;
        self.first_seat = self.expected().map(|(_, s)| s).unwrap_or(self.ring[start]);
    }

    fn betting(&mut self) {
        let n = self.ring.len();
        while let Some((p, s)) = self.expected() {
            self.cut_point();
            self.cursor = (p + 1) % n;
            let act = self.decide(s);
            self.act(s, act);
            if self.live_count() <= 1 {
                break;
            }
        }
    }

    /// The raise cap in force now (r.87, r.88; sintético r.47; Reg806 r.38), as the engine
    /// counts it.
    fn raise_cap(&self) -> Option<u32> {
        let live = self.live_count();
        match self.cfg.rules.fixed_raise_cap {
            Some(cap) if live > 2 => Some(cap),
            Some(_) => None,
            None => match self.cfg.max_raises {
                Some(m) if self.online() || live > 2 => Some(m),
                _ => None,
            },
        }
    }

    fn act(&mut self, s: u8, act: Act) {
        let x = self.seats[s as usize];
        let to_call = (self.current_bet - x.round_in).max(0);
        let dt = self.think_ms();
        let put = match act {
            Act::Fold => {
                self.decision(dt, s, "fold", None);
                None
            }
            Act::Check => {
                self.decision(dt, s, "check", None);
                Some(0)
            }
            Act::Call(a) => {
                self.decision(dt, s, "call", Some(a));
                Some(a)
            }
            Act::Bet(a) => {
                self.decision(dt, s, "bet", Some(a));
                Some(a)
            }
            Act::Raise(a) => {
                self.decision(dt, s, "raise", Some(a));
                Some(a)
            }
            Act::AllIn => {
                self.decision(dt, s, "all_in", Some(x.cave));
                Some(x.cave)
            }
            // Reg806 r.45 (and r.73, N18): check if possible, else fold.
            Act::Timeout => {
                self.decision(15_000, s, "timeout", None);
                (to_call == 0).then_some(0)
            }
            Act::Disconnect => {
                if !x.disconnected {
                    self.emit(
                        dt,
                        EventKind::Fault {
                            code: "player_disconnect".into(),
                            seat: Some(s),
                            detail: None,
                        },
                    );
                    self.seats[s as usize].disconnected = true;
                }
                self.decision(15_000, s, "disconnect", None);
                (to_call == 0).then_some(0)
            }
        };
        match put {
            None => {
                self.seats[s as usize].folded = true;
                self.seats[s as usize].acted = true;
            }
            Some(0) => self.seats[s as usize].acted = true,
            Some(a) => self.chips(s, a),
        }
    }

    /// Chips put in by a decision, with the engine's effect on the bet to match and the raise
    /// count.
    fn chips(&mut self, s: u8, a: Cents) {
        let new = self.seats[s as usize].round_in + a;
        if new > self.current_bet {
            if self.current_bet > 0 {
                self.raises += 1;
                if self.steer.raise_war && self.raise_cap().is_some_and(|c| self.raises > c) {
                    self.applied = true;
                }
            }
            self.po_min_open = 0;
            self.last_inc = self.last_inc.max(new - self.current_bet);
            self.current_bet = new;
            self.last_aggressor = Some(s);
            for k in 0..self.ring.len() {
                let o = self.ring[k];
                if o != s {
                    self.seats[o as usize].acted = false;
                }
            }
        }
        self.put(s, a, true);
        self.seats[s as usize].acted = true;
    }

    // --------------------------------------------------------- the stardilho

    /// r.106 (P461 r.43): before the first common card a player puts up S; whoever stays puts
    /// 2S and the stardilho player completes with S; a restardilho doubles to 2S, the others then
    /// put 4S.
    fn star_phase(&mut self) {
        let ring = self.ring.clone();
        let n = ring.len();
        let min = self.cfg.min_bet;
        let p0 = self.rng.below(n as u64) as usize;
        let s0 = ring[p0];
        let stake = min * self.rng.range(1, 3) as Cents;
        if self.seats[s0 as usize].cave <= 4 * stake {
            return;
        }
        self.opened = true;
        self.bround = 0;
        self.cursor = pos_after(&ring, self.button);
        let dt = self.think_ms();
        self.decision(dt, s0, "stardilho", Some(stake));
        self.put(s0, stake, true);
        self.current_bet = self.current_bet.max(2 * stake);
        let mut restar = None;
        if self.rng.chance(3, 10) {
            let k = 1 + self.rng.below(n as u64 - 1) as usize;
            let r0 = ring[(p0 + k) % n];
            if self.seats[r0 as usize].cave > 4 * stake {
                let dt = self.think_ms();
                self.decision(dt, r0, "restardilho", Some(2 * stake));
                self.put(r0, 2 * stake, true);
                let now = self.seats[r0 as usize].round_in;
                self.current_bet = self.current_bet.max(4 * stake).max(now);
                restar = Some(r0);
            }
        }
        let need = self.current_bet;
        let mut stayed = 0;
        for k in 1..n {
            let s = ring[(p0 + k) % n];
            if Some(s) == restar {
                continue;
            }
            let x = self.seats[s as usize];
            let (st, _) = self.strength(s);
            let stay = x.stubborn
                || self.steer.big_pot
                || self.rng.below(100) < (25 + st / 2 + x.loose / 3) as u64;
            if stay {
                self.star_put(s, need - x.round_in);
                stayed += 1;
            } else {
                let dt = self.think_ms();
                self.decision(dt, s, "fold", None);
                self.seats[s as usize].folded = true;
            }
        }
        let mut inits = vec![s0];
        inits.extend(restar);
        for &s in &inits {
            let x = self.seats[s as usize];
            let target = if stayed > 0 {
                need
            } else if let Some(r0) = restar {
                if s == r0 {
                    continue;
                }
                self.seats[r0 as usize].round_in
            } else {
                continue;
            };
            if x.stubborn || self.rng.chance(85, 100) {
                self.star_put(s, target - x.round_in);
            } else {
                let dt = self.think_ms();
                self.decision(dt, s, "fold", None);
                self.seats[s as usize].folded = true;
            }
        }
    }

    fn star_put(&mut self, s: u8, owe: Cents) {
        let cave = self.seats[s as usize].cave;
        let dt = self.think_ms();
        if owe >= cave {
            self.decision(dt, s, "all_in", Some(cave));
            self.put(s, cave, true);
        } else if owe > 0 {
            self.decision(dt, s, "call", Some(owe));
            self.put(s, owe, true);
        }
        let now = self.seats[s as usize].round_in;
        if now > self.current_bet {
            self.current_bet = now;
            self.last_aggressor = Some(s);
        }
    }

    // ------------------------------------------------------------ decisions

    /// How good the seat's hand looks to its player now, 0-100, and whether that is a made
    /// five-card hand (after the flop) or a guess from the hole cards.
    fn strength(&mut self, s: u8) -> (u32, bool) {
        let rules = &self.cfg.rules;
        let hole = &self.hole[s as usize];
        let board = &self.board;
        let made = match rules.selection {
            Selection::BestOfAll => hole.len() + board.len() >= 5,
            Selection::TwoPlusThree => hole.len() >= 2 && board.len() >= 3,
        };
        if made {
            let v = match self.made[s as usize] {
                (n, v) if n == board.len() => v,
                _ => {
                    let v = eval::best_hand(rules.ranking, rules.selection, hole, board)
                        .unwrap_or_default();
                    self.made[s as usize] = (board.len(), v);
                    v
                }
            };
            // Omaha's four hole cards and sintético's short deck make big hands common; every
            // opponent still in makes a hand worth less.
            let common = match (rules.hole_cards, rules.ranking) {
                (4, _) => 15,
                (_, Ranking::Sintetico) => 10,
                _ => 0,
            };
            let crowd = 3 * (self.live_count() as u32).saturating_sub(2);
            return (
                made_strength(rules.ranking, v).saturating_sub(common + crowd),
                true,
            );
        }
        // Before the flop (or the third sintético card): pairs, high cards, suits, matches
        // with the common cards seen.
        let low = if rules.ranking == Ranking::Sintetico {
            8
        } else {
            2
        };
        let span = 14 - low;
        let mut best = 0;
        for i in 0..hole.len() {
            for j in i + 1..hole.len() {
                let (a, b) = (hole[i], hole[j]);
                let (hi, lo) = if a.rank >= b.rank {
                    (a.rank as u32, b.rank as u32)
                } else {
                    (b.rank as u32, a.rank as u32)
                };
                let v = if hi == lo {
                    40 + (hi - low) * 48 / span
                } else {
                    (hi - low) * 30 / span
                        + (lo - low) * 18 / span
                        + if a.suit == b.suit { 6 } else { 0 }
                        + if hi - lo == 1 { 4 } else { 0 }
                };
                best = best.max(v);
            }
        }
        if hole.len() > 2 {
            best = best.saturating_sub(4);
        }
        let matches = board
            .iter()
            .filter(|c| hole.iter().any(|h| h.rank == c.rank))
            .count() as u32;
        ((best + 18 * matches).min(95), false)
    }

    fn decide(&mut self, s: u8) -> Act {
        let x = self.seats[s as usize];
        let to_call = (self.current_bet - x.round_in).max(0);
        if self.online() && x.disconnected {
            return Act::Disconnect;
        }
        let war = self.steer.raise_war && !self.applied && self.war_round == Some(self.bround);
        if self.online() && self.steer.incidents && !x.stubborn {
            if self.rng.chance(1, 400) {
                return Act::Disconnect;
            }
            if self.rng.chance(1, 60) {
                return Act::Timeout;
            }
        }
        if self.steer.raise_below_min
            && !self.applied
            && let Some(a) = self.below_min_raise(s, to_call)
            && self.rng.chance(1, 3)
        {
            self.applied = true;
            return Act::Raise(a);
        }
        if war && let Some(act) = self.war_act(s, to_call) {
            return act;
        }
        self.choose(s, to_call)
    }

    /// A raise adding less than the table minimum, not all-in (r.86), if one can be made here.
    fn below_min_raise(&mut self, s: u8, to_call: Cents) -> Option<Cents> {
        let min = self.cfg.min_bet;
        if self.current_bet == 0 || min < 2 || self.raise_cap().is_some_and(|c| self.raises >= c) {
            return None;
        }
        let inc = match self.rng.below(3) {
            0 => min / 2,
            1 => min - min / 4,
            _ => min / 4,
        }
        .clamp(1, min - 1);
        let a = to_call + inc;
        (a < self.seats[s as usize].cave).then_some(a)
    }

    /// In the steered betting round: bet, then raise by the minimum until one raise goes over
    /// the cap; nobody folds meanwhile.
    fn war_act(&mut self, s: u8, to_call: Cents) -> Option<Act> {
        let cap = self.raise_cap()?;
        let cave = self.seats[s as usize].cave;
        let min = self.cfg.min_bet;
        if self.current_bet == 0 {
            let open = min.max(self.po_min_open);
            return Some(if open < cave {
                Act::Bet(open)
            } else {
                Act::Check
            });
        }
        if self.raises <= cap {
            let a = to_call + min.max(self.last_inc);
            if a < cave {
                return Some(Act::Raise(a));
            }
        }
        Some(if to_call == 0 {
            Act::Check
        } else if to_call < cave {
            Act::Call(to_call)
        } else {
            Act::AllIn
        })
    }

    fn unit(&self) -> Cents {
        (self.cfg.min_bet / 2).max(1)
    }

    /// `frac` (in percent) of `base`, in whole chips.
    fn sized(&self, base: Cents, pct: Cents) -> Cents {
        let u = self.unit();
        (base * pct / 100) / u * u
    }

    fn pick_pct(&mut self) -> Cents {
        [33, 50, 66, 75, 100][self.rng.below(5) as usize]
    }

    /// A normal player's decision.
    fn choose(&mut self, s: u8, to_call: Cents) -> Act {
        let cfg = self.cfg;
        let x = self.seats[s as usize];
        let cave = x.cave;
        let pot = self.pot;
        let min = cfg.min_bet;
        let (st, made) = self.strength(s);
        let big = self.steer.big_pot;
        let fac = 70 + x.aggr;
        let raise_room = self.raise_cap().is_none_or(|c| self.raises < c);
        let raises = self.raises.min(4);
        let roll = |rng: &mut SimRng, p: u32| rng.below(100) < p as u64;

        if self.current_bet == 0 {
            // Check or open the betting (r.20; Reg806 r.23, r.24).
            let min_open = min.max(self.po_min_open);
            let limit_max = match cfg.limit {
                Limit::NoLimit => Cents::MAX,
                Limit::PotLimit => pot,
                Limit::Limit => pot / 2,
            };
            let full_ok = min_open <= limit_max.min(cave) && min_open < cave;
            let shove_ok = cave <= limit_max;
            let mut p = match st {
                80.. => 72,
                60..80 => 60,
                40..60 => 45,
                25..40 => 30,
                _ => 20,
            } * fac
                / 100;
            if !made {
                p = p * 7 / 10;
            }
            // The last round's aggressor follows through.
            if self.prev_aggressor == Some(s) {
                p += 25;
            }
            if big {
                p += 35;
            }
            if (full_ok || shove_ok) && roll(self.rng, p.min(95)) {
                let pct = self.pick_pct();
                let size = self.sized(pot, pct).max(min_open);
                if shove_ok && (!full_ok || size >= cave - min || (st >= 90 && roll(self.rng, 30)))
                {
                    return Act::AllIn;
                }
                if full_ok {
                    return Act::Bet(size.min(limit_max).min(cave - 1).max(min_open));
                }
            }
            return Act::Check;
        }

        // Facing a bet (or the big blind's option).
        let min_inc = min.max(self.last_inc);
        let limit_inc = match cfg.limit {
            Limit::NoLimit => Cents::MAX,
            Limit::PotLimit => pot + to_call,
            Limit::Limit => (pot + to_call) / 2,
        };
        let full_ok = raise_room && min_inc <= limit_inc && to_call + min_inc < cave;
        let shove_ok = raise_room && cave > to_call && cave - to_call <= limit_inc;

        if to_call == 0 {
            let p = (match st {
                70.. => 60,
                50..70 => 25,
                _ => 5,
            } * fac
                / 100
                + if big { 30 } else { 0 })
                >> raises;
            if (full_ok || shove_ok) && roll(self.rng, p) {
                return self.raise_act(s, to_call, min_inc, limit_inc, full_ok, shove_ok, st);
            }
            return Act::Check;
        }

        if to_call >= cave {
            // Calling puts the whole cave in.
            let p = if x.stubborn {
                100
            } else {
                let base = match st {
                    70.. => 90,
                    55..70 => 55,
                    40..55 => 25,
                    _ => 8,
                };
                base + if big { 30 } else { 0 }
            };
            return if roll(self.rng, p) {
                Act::AllIn
            } else {
                Act::Fold
            };
        }

        // Short stacks push with a fair hand.
        if shove_ok && cave <= 12 * min && st >= 60 && roll(self.rng, 50) {
            return Act::AllIn;
        }
        let mut fold: i64 = if made {
            match st {
                0..15 => 85,
                15..30 => 65,
                30..45 => 40,
                45..60 => 14,
                60..75 => 6,
                _ => 1,
            }
        } else {
            let base = match st {
                0..20 => 92,
                20..30 => 78,
                30..40 => 55,
                40..50 => 28,
                50..60 => 12,
                _ => 3,
            };
            base + if raises > 0 && st < 60 { 15 } else { 0 }
        };
        let ratio = to_call * 100 / pot.max(1);
        if ratio > 60 {
            fold += 12;
        } else if ratio < 25 {
            fold -= 10;
        }
        fold -= x.loose as i64 / 3;
        if big {
            fold /= 3;
        }
        if x.stubborn {
            fold = 0;
        }
        if roll(self.rng, fold.clamp(0, 97) as u32) {
            return Act::Fold;
        }
        let base = if made {
            match st {
                80.. => 45,
                65..80 => 22,
                45..65 => 6,
                _ => 4,
            }
        } else {
            match st {
                60.. => 55,
                45..60 => 22,
                _ => 5,
            }
        };
        let p = (base * fac / 100 + if big { 25 } else { 0 }) >> raises;
        if (full_ok || shove_ok) && roll(self.rng, p) {
            return self.raise_act(s, to_call, min_inc, limit_inc, full_ok, shove_ok, st);
        }
        Act::Call(to_call)
    }

    #[allow(clippy::too_many_arguments)]
    fn raise_act(
        &mut self,
        s: u8,
        to_call: Cents,
        min_inc: Cents,
        limit_inc: Cents,
        full_ok: bool,
        shove_ok: bool,
        st: u32,
    ) -> Act {
        let cave = self.seats[s as usize].cave;
        let min = self.cfg.min_bet;
        let big = self.steer.big_pot;
        let shove = shove_ok
            && (!full_ok
                || (st >= 88 && self.rng.chance(35, 100))
                || (big && self.rng.chance(1, 4))
                || cave <= 15 * min);
        if shove {
            return Act::AllIn;
        }
        let pct = self.pick_pct();
        let inc = self
            .sized(self.pot + to_call, pct)
            .max(min_inc)
            .min(limit_inc);
        let a = to_call + inc;
        if a >= cave - min {
            if shove_ok {
                return Act::AllIn;
            }
            return Act::Raise(to_call + min_inc);
        }
        Act::Raise(a)
    }
}

/// A made hand's strength, 0-100, by category and ranks.
fn made_strength(ranking: Ranking, v: HandValue) -> u32 {
    let r = v.ranks();
    let top = r[0] as u32;
    match v.category() {
        Category::HighCard => top.saturating_sub(2),
        Category::OnePair => 22 + top.saturating_sub(2) * 2,
        Category::TwoPair => 50 + top.saturating_sub(2),
        Category::FigurasSimples => 62,
        Category::FigurasComPares => 68,
        Category::ThreeOfAKind => 68 + top.saturating_sub(2) / 2,
        Category::Straight => 78,
        Category::Flush if ranking == Ranking::Sintetico => 92,
        Category::Flush => 84,
        Category::FullHouse if ranking == Ranking::Sintetico => 88,
        Category::FullHouse => 90,
        Category::FourOfAKind => 96,
        Category::StraightFlush => 99,
        Category::RoyalFlush => 100,
    }
}
