//! Reading one hand: the record checked event by event against the betting and dealing rules.
//!
//! [`simulate`] walks the round's events in order, keeps each seat's cave, contributions and
//! status, whose turn it is, the raise count and the cards, and records every violation it sees.
//! Records it cannot make sense of are [`RoundError`]s naming the event or bet.

use rules_core::{
    Adjudication, Bet, Card, Cents, EventKind, MAX_AMOUNT_CENTS, Recipient, Round, RoundError,
    Violation, check_stake,
};

use crate::codes;
use crate::config::{Limit, PokerConfig, Regulation};
use crate::eval::CardSet;
use crate::state::PokerState;
use crate::variant::{Forced, Streets};

/// Seats are 1..=11; index 0 is unused.
pub const SEAT_SLOTS: usize = 12;

/// Why a hand is null, and the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NullCause {
    pub reason: &'static str,
    pub citation: &'static str,
}

/// One seat's part in the hand.
#[derive(Clone, Copy, Debug)]
pub struct SeatRec {
    pub in_hand: bool,
    /// Index of the seat's `Bet` event.
    pub bet_event: usize,
    /// Cave at the start of the hand (the bet's `amount_cents`).
    pub start_cave: Cents,
    /// Chips left.
    pub cave: Cents,
    /// Live chips put in the pot (antes, blinds, bets, calls, raises).
    pub live: Cents,
    /// Dead money (missed blinds, r.90; P461 pó carry is not a seat's).
    pub dead: Cents,
    pub round_in: Cents,
    pub folded: bool,
    pub all_in: bool,
    acted: bool,
    oot: bool,
    acted_before_exposure: bool,
    pub posted_sb: bool,
    pub posted_bb: Cents,
    pub posted_ante: bool,
    /// Chips put in by decisions (calls, bets, raises, stardilho), not blinds or antes.
    pub voluntary: Cents,
    pub hole: [Card; 8],
    pub hole_n: usize,
    /// Cards recorded for the seat beyond the eight kept.
    pub hole_overflow: usize,
}

const NO_CARD: Card = Card::new(rules_core::Rank::Two, rules_core::Suit::Spades);

impl Default for SeatRec {
    fn default() -> Self {
        SeatRec {
            in_hand: false,
            bet_event: 0,
            start_cave: 0,
            cave: 0,
            live: 0,
            dead: 0,
            round_in: 0,
            folded: false,
            all_in: false,
            acted: false,
            oot: false,
            acted_before_exposure: false,
            posted_sb: false,
            posted_bb: 0,
            posted_ante: false,
            voluntary: 0,
            hole: [NO_CARD; 8],
            hole_n: 0,
            hole_overflow: 0,
        }
    }
}

impl SeatRec {
    pub fn hole(&self) -> &[Card] {
        &self.hole[..self.hole_n]
    }

    pub fn hole_count(&self) -> usize {
        self.hole_n + self.hole_overflow
    }

    fn active(&self) -> bool {
        self.in_hand && !self.folded && !self.all_in
    }
}

/// A fee recorded by a procedure (session fee or entry fee).
#[derive(Clone, Debug)]
pub struct Fee {
    pub kind: &'static str,
    pub seat: u8,
    pub recorded: Cents,
}

/// The hand as read.
#[derive(Clone, Debug)]
pub struct HandRec {
    pub seats: [SeatRec; SEAT_SLOTS],
    /// Participating seats, ascending.
    pub ring: Vec<u8>,
    pub button: u8,
    pub board: Vec<Card>,
    pub null: Option<NullCause>,
    /// A `void` event (or void-declaring fault) for a reason the rules do not make null.
    pub wrongly_voided_event: Option<usize>,
    /// A chip was put in voluntarily (a call, bet or raise, not a blind or ante).
    pub voluntary: bool,
    /// The betting round the hand ended in.
    pub last_round: usize,
    /// P461 r.49 chips carried in from the last hand (dead money in the main pot).
    pub carried_in: Cents,
    pub fees: Vec<Fee>,
    /// Seats that were absent (procedure `absent`).
    pub absent: Vec<u8>,
    pub button_drawn: bool,
    /// Seats that left (procedure `leave`).
    pub left: Vec<u8>,
    /// The seat that posted the big blind (or should have).
    pub bb_at: Option<u8>,
    /// Chips bought (procedures `buy_in`, `rebuy`, `top_up`), by seat, in order.
    pub buy_ins: Vec<(u8, Cents)>,
}

impl HandRec {
    pub fn live_seats(&self) -> impl Iterator<Item = u8> + '_ {
        self.ring
            .iter()
            .copied()
            .filter(|&s| !self.seats[s as usize].folded)
    }
}

/// Index in `ring` of the first seat strictly after `seat` clockwise.
fn pos_after(ring: &[u8], seat: u8) -> usize {
    ring.iter().position(|&s| s > seat).unwrap_or(0)
}

/// Index in `ring` of the first seat at or after `seat` clockwise.
fn pos_at_or_after(ring: &[u8], seat: u8) -> usize {
    ring.iter().position(|&s| s >= seat).unwrap_or(0)
}

/// Clockwise distance from seat `a` to seat `b` on a table of `n` seats (0 when equal).
pub fn dist(a: u8, b: u8, n: u8) -> u8 {
    let n = n.max(1) as i16;
    (((b as i16 - a as i16) % n + n) % n) as u8
}

struct Sim<'a> {
    cfg: &'a PokerConfig,
    round: &'a Round,
    adj: &'a mut Adjudication,
    explain: bool,
    h: HandRec,
    // betting
    bround: usize,
    opened: bool,
    current_bet: Cents,
    raises: u32,
    cursor: usize,
    first_seat: u8,
    prev_first: u8,
    last_aggressor: Option<u8>,
    prev_aggressor: Option<u8>,
    early_exposure: bool,
    // stardilho
    star: Option<(u8, Cents)>,
    restar: Option<u8>,
    /// Seats that stayed in after a stardilho with the wrong amount (flagged, r.106(a)): they
    /// play on, settled as played.
    star_stayed_short: Vec<u8>,
    // cards
    seen: CardSet,
    deal_seq: Vec<u8>,
    hole_after_board: bool,
    exposed_hole: Option<(u8, Card)>,
    exposed_count: usize,
    exposed_used_as_burn: bool,
    burn_since_street: bool,
    burn_waived: bool,
    started: bool,
    // blinds
    sb_seat: Option<u8>,
    bb_seat: Option<u8>,
    bb_poster: Option<u8>,
    sb_poster: Option<u8>,
    heads_up_online: bool,
    // P461 pó: the opener's minimum in the hand after a pó
    po_min_open: Cents,
    pot_total: Cents,
}

fn event_err(round: &Round, i: usize, reason: impl Into<String>) -> RoundError {
    RoundError::event(round, i, reason)
}

fn check_amount(round: &Round, i: usize, a: Cents) -> Result<Cents, RoundError> {
    if a <= 0 {
        return Err(event_err(
            round,
            i,
            format!("amount_cents must be positive, got {a}"),
        ));
    }
    if a > MAX_AMOUNT_CENTS {
        return Err(event_err(
            round,
            i,
            format!("amount_cents {a} is above the ledger's ceiling of {MAX_AMOUNT_CENTS}"),
        ));
    }
    Ok(a)
}

/// Read the hand. Violations go to `adj`; explanation notes too when `explain`.
pub fn simulate(
    cfg: &PokerConfig,
    state: &PokerState,
    round: &Round,
    adj: &mut Adjudication,
    explain: bool,
) -> Result<HandRec, RoundError> {
    let rules = &cfg.rules;
    // Pre-scan: seats (bets), button, absent seats.
    let mut seats = [SeatRec::default(); SEAT_SLOTS];
    let mut ring: Vec<u8> = Vec::with_capacity(11);
    let mut button: Option<u8> = None;
    let mut absent: Vec<u8> = Vec::new();
    let mut button_drawn = false;
    let mut ids: Vec<&str> = Vec::with_capacity(11);
    for (i, e) in round.events.iter().enumerate() {
        match &e.kind {
            EventKind::Bet(b) => {
                let seat = check_bet(cfg, round, b)?;
                let s = &mut seats[seat as usize];
                if s.in_hand {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        format!("seat {seat} has two seat bets in the hand"),
                    ));
                }
                if ids.contains(&&*b.id) {
                    return Err(RoundError::bet(round, &b.id, "bet id used twice"));
                }
                ids.push(&b.id);
                s.in_hand = true;
                s.bet_event = i;
                s.start_cave = b.amount_cents;
                s.cave = b.amount_cents;
                ring.push(seat);
            }
            EventKind::Role { role, seat, .. } => match role.as_str() {
                "button" => {
                    let seat =
                        seat.ok_or_else(|| event_err(round, i, "button role without a seat"))?;
                    if seat == 0 || seat > cfg.seats {
                        return Err(event_err(
                            round,
                            i,
                            format!(
                                "button seat {seat} is not a seat of this table (1-{})",
                                cfg.seats
                            ),
                        ));
                    }
                    if button.is_some_and(|b| b != seat) {
                        return Err(event_err(round, i, "the button is given to two seats"));
                    }
                    button = Some(seat);
                }
                "dealer" => {}
                other => {
                    return Err(event_err(
                        round,
                        i,
                        format!(
                            "role `{}` is not a role of {} (button, dealer)",
                            other.chars().take(32).collect::<String>(),
                            rules.game
                        ),
                    ));
                }
            },
            EventKind::Procedure { name, seat, .. } if name == "absent" => {
                let s = procedure_seat(cfg, round, i, *seat)?;
                absent.push(s);
            }
            EventKind::Procedure { name, .. } if name == "button_draw" => button_drawn = true,
            _ => {}
        }
    }
    ring.sort_unstable();
    if ring.is_empty() {
        return Err(RoundError::round(
            round,
            "no seat takes part in the hand (no `seat` bet)",
        ));
    }
    for &a in &absent {
        if seats[a as usize].in_hand {
            return Err(RoundError::round(
                round,
                format!("seat {a} is recorded absent but takes part in the hand"),
            ));
        }
    }
    let button = button.ok_or_else(|| {
        RoundError::round(
            round,
            "no `button` role event: the mão/button seat is needed",
        )
    })?;

    let carried_in = if cfg.regulation == Regulation::P461 {
        state.po_carry_cents
    } else {
        0
    };
    let n = ring.len();
    let mut sim = Sim {
        cfg,
        round,
        adj,
        explain,
        h: HandRec {
            seats,
            ring,
            button,
            board: Vec::with_capacity(5),
            null: None,
            wrongly_voided_event: None,
            voluntary: false,
            last_round: 0,
            carried_in,
            fees: Vec::new(),
            absent,
            button_drawn,
            left: Vec::new(),
            bb_at: None,
            buy_ins: Vec::new(),
        },
        bround: 0,
        opened: false,
        current_bet: 0,
        raises: 0,
        cursor: 0,
        first_seat: 0,
        prev_first: 0,
        last_aggressor: None,
        prev_aggressor: None,
        early_exposure: false,
        star: None,
        restar: None,
        star_stayed_short: Vec::new(),
        seen: CardSet::EMPTY,
        deal_seq: Vec::with_capacity(n * rules.hole_cards + 1),
        hole_after_board: false,
        exposed_hole: None,
        exposed_count: 0,
        exposed_used_as_burn: false,
        burn_since_street: false,
        burn_waived: false,
        started: false,
        sb_seat: None,
        bb_seat: None,
        bb_poster: None,
        sb_poster: None,
        heads_up_online: false,
        po_min_open: 0,
        pot_total: carried_in,
    };
    sim.setup_blinds();
    if cfg.regulation == Regulation::P461 && state.po_carry_cents > 0 {
        // P461 r.49: after a pó the opener bets at least the sum of the antes.
        sim.po_min_open = cfg.min_bet.saturating_mul(sim.h.ring.len() as i64);
    }
    sim.before_hand(state);
    for i in 0..round.events.len() {
        sim.event(i)?;
    }
    sim.finish()?;
    Ok(sim.h)
}

fn check_bet(cfg: &PokerConfig, round: &Round, b: &Bet) -> Result<u8, RoundError> {
    if b.bet_type != "seat" {
        return Err(RoundError::bet(
            round,
            &b.id,
            format!(
                "bet_type `{}` is not a bet of {} (the only bet type is `seat`)",
                b.bet_type.chars().take(32).collect::<String>(),
                cfg.rules.game
            ),
        ));
    }
    let seat = b
        .seat
        .ok_or_else(|| RoundError::bet(round, &b.id, "a seat bet needs its seat"))?;
    if seat == 0 || seat > cfg.seats {
        return Err(RoundError::bet(
            round,
            &b.id,
            format!("seat {seat} is not a seat of this table (1-{})", cfg.seats),
        ));
    }
    check_stake(round, &b.id, b.amount_cents)?;
    if b.on_bet.is_some() || !b.selection.is_empty() {
        return Err(RoundError::bet(
            round,
            &b.id,
            "a seat bet has no selection and rides on no other bet",
        ));
    }
    Ok(seat)
}

fn procedure_seat(
    cfg: &PokerConfig,
    round: &Round,
    i: usize,
    seat: Option<u8>,
) -> Result<u8, RoundError> {
    let s = seat.ok_or_else(|| event_err(round, i, "this procedure needs a seat"))?;
    if s == 0 || s > cfg.seats {
        return Err(event_err(
            round,
            i,
            format!("seat {s} is not a seat of this table (1-{})", cfg.seats),
        ));
    }
    Ok(s)
}

impl Sim<'_> {
    fn v(&mut self, code: &'static str, citation: &'static str, message: String) -> &mut Violation {
        self.adj.violations.push(Violation::new(
            code,
            codes::severity(code),
            citation,
            message,
        ));
        let n = self.adj.violations.len() - 1;
        &mut self.adj.violations[n]
    }

    fn flag(
        &mut self,
        code: &'static str,
        citation: &'static str,
        seat: Option<u8>,
        i: Option<usize>,
        review: bool,
        message: String,
    ) {
        let v = self.v(code, citation, message);
        if let Some(s) = seat {
            v.seat = Some(s);
        }
        if let Some(i) = i {
            v.event_index = u32::try_from(i).ok();
        }
        if review {
            v.confidence = rules_core::Confidence::Review;
        }
    }

    fn note(&mut self, citation: &'static str, text: String) {
        if self.explain {
            self.adj.note(citation, text);
        }
    }

    fn set_null(&mut self, reason: &'static str, citation: &'static str) {
        if self.h.null.is_none() {
            self.h.null = Some(NullCause { reason, citation });
        }
    }

    fn checks_order(&self) -> bool {
        self.cfg.regulation != Regulation::P461
    }

    /// Expected blind seats (r.81; Reg806 r.48).
    fn setup_blinds(&mut self) {
        let ring = &self.h.ring;
        let b = self.h.button;
        match self.cfg.rules.forced {
            Forced::MaoBlinds => {
                self.sb_seat = Some(b).filter(|s| ring.contains(s));
                self.bb_seat =
                    Some(ring[pos_after(ring, b)]).filter(|&s| s != b || ring.len() == 1);
            }
            Forced::ButtonBlinds => {
                let sb = ring[pos_after(ring, b)];
                let bb = ring[pos_after(ring, sb)];
                self.sb_seat = Some(sb);
                self.bb_seat = Some(bb);
                // N17: heads-up blind positions are not flagged.
                self.heads_up_online = ring.len() <= 2;
            }
            Forced::Antes => {}
        }
    }

    /// Checks that need the state before the hand: player count, button rotation.
    fn before_hand(&mut self, state: &PokerState) {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let n = self.h.ring.len();
        if n < cfg.rules.min_players {
            self.flag(
                codes::TOO_FEW_PLAYERS,
                c.too_few,
                None,
                None,
                true,
                format!(
                    "the hand is dealt to {n} players; the game needs at least {}",
                    cfg.rules.min_players
                ),
            );
        }
        // r.29, r.30; Reg806 r.4(c), r.64: the mão/button moves to the next seat clockwise.
        if cfg.rules.forced != Forced::Antes
            && !self.h.button_drawn
            && let Some(prev) = state.button
        {
            let ring = &self.h.ring;
            let expected = ring[pos_after(ring, prev)];
            if self.h.button != expected {
                let b = self.h.button;
                self.flag(
                    codes::BLIND_WRONG_SEAT,
                    c.button_rotation,
                    Some(b),
                    None,
                    true,
                    format!(
                        "the mão/button is at seat {b}; after seat {prev} it should move to seat {expected}"
                    ),
                );
            }
        }
        self.note(
            c.button_rotation,
            format!(
                "seats in the hand: {:?}; mão/button at seat {}",
                self.h.ring, self.h.button
            ),
        );
    }

    fn event(&mut self, i: usize) -> Result<(), RoundError> {
        let round = self.round;
        let e = &round.events[i];
        match &e.kind {
            EventKind::Bet(_) | EventKind::Role { .. } => Ok(()),
            EventKind::Card { to, card, face_up } => self.card(i, *to, *card, *face_up),
            EventKind::Decision(d) => {
                let seat = d
                    .seat
                    .ok_or_else(|| event_err(round, i, "a decision needs its seat"))?;
                if seat == 0 || seat as usize >= SEAT_SLOTS || !self.h.seats[seat as usize].in_hand
                {
                    return Err(event_err(
                        round,
                        i,
                        format!("seat {seat} is not in the hand (no seat bet)"),
                    ));
                }
                if d.hand != 1 {
                    return Err(event_err(
                        round,
                        i,
                        "poker seats play one hand (hand must be 1)",
                    ));
                }
                if let Some(b) = &d.bet_id {
                    let own = match &round.events[self.h.seats[seat as usize].bet_event].kind {
                        EventKind::Bet(bet) => bet.id == *b,
                        _ => false,
                    };
                    if !own {
                        return Err(event_err(
                            round,
                            i,
                            format!("bet `{b}` is not seat {seat}'s bet"),
                        ));
                    }
                }
                let amount = match d.amount_cents {
                    Some(a) => Some(check_amount(round, i, a)?),
                    None => None,
                };
                self.started = true;
                self.decision(i, seat, d.action.as_str(), amount)
            }
            EventKind::Procedure {
                name,
                seat,
                amount_cents,
                ..
            } => self.procedure(i, name, *seat, *amount_cents),
            EventKind::Fault { code, seat, .. } => self.fault(i, code, *seat),
            EventKind::Void { reason } => self.void(i, reason),
            other => Err(event_err(
                round,
                i,
                format!(
                    "event `{}` is not part of {}'s vocabulary",
                    other.type_name(),
                    self.cfg.rules.game
                ),
            )),
        }
    }

    // ---------------------------------------------------------------- cards

    fn card(
        &mut self,
        i: usize,
        to: Recipient,
        card: Card,
        face_up: bool,
    ) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        self.started = true;
        // r.4, r.31, r.69(e), r.95; Reg806 r.4(b): a card of the variant's deck, each once.
        let in_deck = cfg.rules.deck.contains(card);
        if !in_deck {
            self.flag(
                codes::INVALID_DECK,
                c.invalid_deck,
                None,
                Some(i),
                false,
                format!("{card} is not a card of the {} deck", deck_name(cfg)),
            );
            self.set_null("invalid_deck", c.invalid_deck);
        }
        let reburn = matches!(to, Recipient::Burn)
            && self.exposed_hole.is_some_and(|(_, x)| x == card)
            && !self.exposed_used_as_burn;
        if reburn {
            // r.70(c): the exposed hole card becomes the next phase's burn card.
            self.exposed_used_as_burn = true;
            self.burn_since_street = true;
            return Ok(());
        }
        if self.seen.contains(card) {
            self.flag(
                codes::INVALID_DECK,
                c.invalid_deck,
                None,
                Some(i),
                false,
                format!("{card} is dealt twice"),
            );
            self.set_null("invalid_deck", c.invalid_deck);
        }
        match to {
            Recipient::Seat { seat, hand } => {
                if hand != 1 {
                    return Err(event_err(
                        self.round,
                        i,
                        "poker seats hold one hand (seat:N)",
                    ));
                }
                if seat == 0 || seat as usize >= SEAT_SLOTS || !self.h.seats[seat as usize].in_hand
                {
                    return Err(event_err(
                        self.round,
                        i,
                        format!("card to seat {seat}, which is not in the hand"),
                    ));
                }
                self.seen = self.seen.with(card);
                if !self.h.board.is_empty() {
                    self.hole_after_board = true;
                }
                self.deal_seq.push(seat);
                let exposed = face_up && cfg.rules.game != rules_core::GameId::PokerHoldemOnline;
                if exposed {
                    self.exposed_count += 1;
                    match cfg.rules.forced {
                        Forced::Antes => {
                            // r.109(c), (d); P461 r.62(c), (d): a card face up while dealing.
                            self.set_null("card_exposed_while_dealing", c.exposed_hole_card);
                            self.push_hole(seat, card);
                        }
                        _ => {
                            if self.exposed_count == 1 {
                                // r.70(c): one card turned: replaced at the end, burned next.
                                self.exposed_hole = Some((seat, card));
                                self.note(
                                    c.exposed_hole_card,
                                    format!(
                                        "{card} dealt face up to seat {seat}: dealing goes on, the seat gets a replacement at the end and {card} is the next burn card (r.70(c))"
                                    ),
                                );
                            } else {
                                // r.69(g): the dealer turned more than one card.
                                self.set_null("several_cards_exposed", c.exposed_hole_card);
                                self.push_hole(seat, card);
                            }
                        }
                    }
                } else {
                    self.push_hole(seat, card);
                }
            }
            Recipient::Board => {
                self.seen = self.seen.with(card);
                let n = self.h.board.len() + 1;
                if cfg.rules.burns && cfg.rules.streets.opens_street(n) && !self.burn_waived {
                    let by_exposed = n == 1 && self.exposed_hole.is_some();
                    if !self.burn_since_street && !by_exposed {
                        let name = match n {
                            1 => "flop",
                            4 => "turn",
                            _ => "river",
                        };
                        self.flag(
                            codes::BURN_MISSING,
                            c.burn,
                            None,
                            Some(i),
                            true,
                            format!("no card burned before the {name}"),
                        );
                    }
                }
                if cfg.rules.streets.opens_street(n) {
                    self.burn_since_street = false;
                }
                self.h.board.push(card);
                let new_round = cfg.rules.streets.round_for_board(n);
                if new_round > self.bround {
                    self.close_round(i);
                    self.open_round(new_round);
                }
            }
            Recipient::Burn => {
                self.seen = self.seen.with(card);
                self.burn_since_street = true;
            }
            Recipient::Discard => {
                // r.70(d)-(f); P461 r.63-r.65: a common card exposed early is withdrawn to the
                // stub (it may be dealt again); those who had not bet may only call (r.70(h)).
                self.mark_early_exposure();
                self.burn_waived = true;
                self.note(
                    c.early_exposure,
                    format!("{card} exposed early and withdrawn to the stub"),
                );
            }
            other => {
                return Err(event_err(
                    self.round,
                    i,
                    format!("cards go to seat:N, board, burn or discard in poker, not {other}"),
                ));
            }
        }
        Ok(())
    }

    fn push_hole(&mut self, seat: u8, card: Card) {
        let s = &mut self.h.seats[seat as usize];
        if s.hole_n < s.hole.len() {
            s.hole[s.hole_n] = card;
            s.hole_n += 1;
        } else {
            s.hole_overflow += 1;
        }
    }

    fn mark_early_exposure(&mut self) {
        if !self.early_exposure {
            self.early_exposure = true;
            for s in self.h.ring.clone() {
                let r = &mut self.h.seats[s as usize];
                r.acted_before_exposure = r.acted;
            }
        }
    }

    // -------------------------------------------------------------- rounds

    fn active_count(&self) -> usize {
        self.h
            .ring
            .iter()
            .filter(|&&s| self.h.seats[s as usize].active())
            .count()
    }

    fn live_count(&self) -> usize {
        self.h
            .ring
            .iter()
            .filter(|&&s| !self.h.seats[s as usize].folded)
            .count()
    }

    fn needs_to_act(&self, s: u8, active: usize) -> bool {
        let r = &self.h.seats[s as usize];
        if !r.active() {
            return false;
        }
        if r.round_in < self.current_bet {
            return true;
        }
        if r.acted {
            return false;
        }
        // A lone active player facing nobody who can bet needs no decision.
        active > 1
    }

    fn expected(&self) -> Option<(usize, u8)> {
        let n = self.h.ring.len();
        let active = self.active_count();
        (0..n)
            .map(|k| (self.cursor + k) % n)
            .map(|p| (p, self.h.ring[p]))
            .find(|&(_, s)| self.needs_to_act(s, active))
    }

    /// Start betting round `r` (on its street's card, or at the first decision of round 0).
    fn open_round(&mut self, r: usize) {
        let cfg = self.cfg;
        if self.opened {
            self.prev_aggressor = self.last_aggressor;
            self.prev_first = self.first_seat;
        }
        let prev_first = self.prev_first;
        self.bround = r;
        self.h.last_round = r;
        self.opened = true;
        self.current_bet = 0;
        self.raises = 0;
        self.last_aggressor = None;
        self.early_exposure = false;
        for k in 0..self.h.ring.len() {
            let s = self.h.ring[k];
            let x = &mut self.h.seats[s as usize];
            x.round_in = 0;
            x.acted = false;
            x.oot = false;
            x.acted_before_exposure = false;
        }
        let ring = &self.h.ring;
        let b = self.h.button;
        let start_pos = match (cfg.rules.streets, cfg.rules.forced) {
            // r.85; SS.I r.42, r.44, r.46: the mão holder starts.
            (Streets::FlopTurnRiver, Forced::MaoBlinds) => pos_at_or_after(ring, b),
            // Reg806 r.54, r.56, r.58: the first seat left of the button.
            (Streets::FlopTurnRiver, _) => pos_after(ring, b),
            // r.107: round 1 from the player left of the mão holder.
            (Streets::OneByOne, _) if r <= 1 => pos_after(ring, b),
            // r.108 (N14): the player who made the highest bet before, else the previous first.
            (Streets::OneByOne, _) => match self.prev_aggressor {
                Some(a) => pos_at_or_after(ring, a),
                None => pos_at_or_after(ring, prev_first),
            },
        };
        self.cursor = start_pos;
        self.first_seat = self
            .expected()
            .map(|(_, s)| s)
            .unwrap_or(self.h.ring[start_pos]);
        let name = cfg.rules.streets.round_name(r);
        let cite = if r == 0 || (r == 1 && cfg.rules.streets == Streets::OneByOne) {
            cfg.cites.order_first
        } else {
            cfg.cites.order_later
        };
        if self.explain {
            let first = self.first_seat;
            let board = crate::eval::cards_text(&self.h.board);
            self.note(
                cite,
                format!("{name} betting round (board {board}): first to act seat {first}"),
            );
        }
    }

    /// Round 0 of the blind games opens at its first voluntary decision: the first to act is the
    /// player left of the big blind (r.84; Reg806 r.51).
    fn open_first_round(&mut self) {
        self.opened = true;
        self.bround = 0;
        let ring = &self.h.ring;
        let start = match self.cfg.rules.forced {
            Forced::Antes => pos_after(ring, self.h.button),
            _ => {
                let bb = self.bb_poster.or(self.bb_seat).unwrap_or(self.h.button);
                pos_after(ring, bb)
            }
        };
        self.cursor = start;
        self.current_bet = self
            .h
            .ring
            .iter()
            .map(|&s| self.h.seats[s as usize].round_in)
            .max()
            .unwrap_or(0);
        self.first_seat = self
            .expected()
            .map(|(_, s)| s)
            .unwrap_or(self.h.ring[start]);
        if self.explain {
            let name = self.cfg.rules.streets.round_name(0);
            let first = self.first_seat;
            let cb = self.current_bet;
            self.note(
                self.cfg.cites.order_first,
                format!("{name} betting round: {cb} cents to call, first to act seat {first}"),
            );
        }
    }

    /// A betting round ends: every active player must have matched (r.48; Reg806 r.40).
    fn close_round(&mut self, i: usize) {
        if !self.opened && self.bround == 0 {
            // Round 0 never opened (no decision before the street card).
            if self.cfg.rules.streets == Streets::OneByOne {
                return;
            }
            self.open_first_round();
        }
        if self.cfg.rules.streets == Streets::OneByOne && self.bround == 0 {
            // r.106(a): whoever did not put up the stardilho amount is out of the hand; the
            // stardilho (restardilho) player who does not complete loses what he advanced,
            // unless nobody else stayed.
            let initiators = [self.star.map(|s| s.0), self.restar];
            let is_init = |s: u8| initiators.contains(&Some(s));
            let short = |sim: &Self, s: u8| {
                let r = sim.h.seats[s as usize];
                r.active() && r.round_in < sim.current_bet
            };
            let ring = self.h.ring.clone();
            // A player who stayed in with less than double (flagged when he called) plays on.
            let mut out: Vec<u8> = ring
                .iter()
                .copied()
                .filter(|&s| !is_init(s) && short(self, s) && !self.star_stayed_short.contains(&s))
                .collect();
            let others_stay = ring
                .iter()
                .any(|&s| !is_init(s) && !out.contains(&s) && !self.h.seats[s as usize].folded);
            if others_stay {
                out.extend(
                    ring.iter()
                        .copied()
                        .filter(|&s| is_init(s) && short(self, s)),
                );
            } else if let (Some((s0, _)), Some(r0)) = (self.star, self.restar) {
                let (a, b) = (self.h.seats[s0 as usize], self.h.seats[r0 as usize]);
                if !a.folded && !b.folded && a.round_in < b.round_in && !a.all_in {
                    out.push(s0);
                }
            }
            for s in out {
                self.h.seats[s as usize].folded = true;
                self.note(
                    self.cfg.cites.stardilho_amount,
                    format!("seat {s} did not put up the stardilho amount and is out of the hand"),
                );
            }
            return;
        }
        if self.live_count() <= 1 {
            return;
        }
        let short: Vec<u8> = self
            .h
            .ring
            .iter()
            .copied()
            .filter(|&s| {
                let r = &self.h.seats[s as usize];
                r.active() && r.round_in < self.current_bet
            })
            .collect();
        for s in short {
            let r = self.h.seats[s as usize];
            let cb = self.current_bet;
            self.flag(
                codes::BETTING_IRREGULAR,
                self.cfg.cites.irregular,
                Some(s),
                Some(i),
                false,
                format!(
                    "the betting round closed with seat {s} at {} cents against a bet of {cb}",
                    r.round_in
                ),
            );
        }
    }

    // ----------------------------------------------------------- decisions

    fn decision(
        &mut self,
        i: usize,
        seat: u8,
        action: &str,
        amount: Option<Cents>,
    ) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let forced = cfg.rules.forced;
        let blinds_game = forced != Forced::Antes;
        match action {
            "post_sb" | "post_bb" | "post_forced_bb" | "post_dead" if !blinds_game => {
                return Err(self.not_action(i, action));
            }
            "post_forced_bb" | "post_dead" if forced != Forced::MaoBlinds => {
                return Err(self.not_action(i, action));
            }
            "post_ante" | "stardilho" | "restardilho" if blinds_game => {
                return Err(self.not_action(i, action));
            }
            "timeout" | "disconnect" if cfg.regulation != Regulation::Reg806 => {
                return Err(self.not_action(i, action));
            }
            _ => {}
        }
        let r = self.h.seats[seat as usize];
        if r.folded {
            return Err(event_err(
                self.round,
                i,
                format!("seat {seat} acts after folding"),
            ));
        }
        match action {
            "post_sb" | "post_bb" | "post_forced_bb" | "post_dead" | "post_ante" => {
                let a =
                    amount.ok_or_else(|| event_err(self.round, i, "a post needs amount_cents"))?;
                if a > r.cave {
                    return Err(self.over_cave(i, seat, a));
                }
                self.post(i, seat, action, a);
                Ok(())
            }
            "stardilho" | "restardilho" => {
                let a = amount
                    .ok_or_else(|| event_err(self.round, i, "a stardilho needs amount_cents"))?;
                if a > r.cave {
                    return Err(self.over_cave(i, seat, a));
                }
                if !self.h.board.is_empty() {
                    // r.106(a): before the first common card is drawn.
                    return Err(event_err(
                        self.round,
                        i,
                        "a stardilho comes before the first common card (r.106(a))",
                    ));
                }
                self.stardilho(i, seat, action == "restardilho", a)
            }
            "check" | "fold" | "call" | "bet" | "raise" | "all_in" | "timeout" | "disconnect" => {
                if r.all_in {
                    return Err(event_err(
                        self.round,
                        i,
                        format!("seat {seat} is all-in and has no decision to take"),
                    ));
                }
                if matches!(action, "check" | "fold" | "timeout" | "disconnect") && amount.is_some()
                {
                    return Err(event_err(
                        self.round,
                        i,
                        format!("`{action}` puts no chips in (no amount_cents)"),
                    ));
                }
                if !self.opened {
                    if cfg.rules.streets == Streets::OneByOne {
                        // Betting before the first common card without a stardilho.
                        self.opened = true;
                        self.bround = 0;
                        self.cursor = pos_after(&self.h.ring, self.h.button);
                        if self.star.is_none() {
                            self.flag(
                                codes::BETTING_IRREGULAR,
                                c.order_first,
                                Some(seat),
                                Some(i),
                                false,
                                format!("seat {seat} bets before the first common card without a stardilho"),
                            );
                        }
                    } else {
                        self.open_first_round();
                    }
                }
                self.action(i, seat, action, amount)
            }
            _ => Err(self.not_action(i, action)),
        }
    }

    fn not_action(&self, i: usize, action: &str) -> RoundError {
        event_err(
            self.round,
            i,
            format!(
                "action `{}` is not an action of {}",
                action.chars().take(32).collect::<String>(),
                self.cfg.rules.game
            ),
        )
    }

    fn over_cave(&self, i: usize, seat: u8, a: Cents) -> RoundError {
        event_err(
            self.round,
            i,
            format!(
                "seat {seat} puts in {a} cents but has {} left",
                self.h.seats[seat as usize].cave
            ),
        )
    }

    fn add_chips(&mut self, seat: u8, a: Cents, live: bool, round: bool) {
        let r = &mut self.h.seats[seat as usize];
        r.cave -= a;
        if live {
            r.live += a;
        } else {
            r.dead += a;
        }
        if round {
            r.round_in += a;
        }
        if r.cave == 0 {
            r.all_in = true;
        }
        self.pot_total = self.pot_total.saturating_add(a);
    }

    fn post(&mut self, i: usize, seat: u8, action: &str, a: Cents) {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let all_in = a == self.h.seats[seat as usize].cave;
        match action {
            "post_sb" => {
                // r.81; Reg806 r.48: who posts the small blind.
                if !self.heads_up_online
                    && let Some(exp) = self.sb_seat
                    && exp != seat
                {
                    self.flag(
                        codes::BLIND_WRONG_SEAT,
                        c.blind_seat,
                        Some(seat),
                        Some(i),
                        false,
                        format!("seat {seat} posts the small blind; it is seat {exp}'s"),
                    );
                } else if self.sb_seat.is_none() && !self.heads_up_online {
                    let b = self.h.button;
                    self.flag(codes::BLIND_WRONG_SEAT, c.blind_seat, Some(seat), Some(i), false,
                        format!("seat {seat} posts the small blind; the mão holder (seat {b}) is not in the hand"));
                }
                // r.82; Reg806 r.22: its amount.
                if let Some(sb) = cfg.small_blind
                    && a != sb
                    && !(all_in && a < sb)
                {
                    self.flag(
                        codes::BLIND_AMOUNT_WRONG,
                        c.blind_amount,
                        Some(seat),
                        Some(i),
                        false,
                        format!("small blind of {a} cents; it must be {sb}"),
                    );
                }
                self.h.seats[seat as usize].posted_sb = true;
                self.sb_poster.get_or_insert(seat);
                self.add_chips(seat, a, true, true);
                self.note(
                    c.blind_seat,
                    format!("seat {seat} posts the small blind, {a} cents"),
                );
            }
            "post_bb" => {
                if !self.heads_up_online
                    && let Some(exp) = self.bb_seat
                    && exp != seat
                {
                    self.flag(
                        codes::BLIND_WRONG_SEAT,
                        c.blind_seat,
                        Some(seat),
                        Some(i),
                        false,
                        format!("seat {seat} posts the big blind; it is seat {exp}'s"),
                    );
                }
                let min = cfg.min_bet;
                // r.83; Reg806 r.22: the big blind is the table minimum.
                if a != min && !(all_in && a < min) {
                    self.flag(
                        codes::BLIND_AMOUNT_WRONG,
                        c.blind_amount,
                        Some(seat),
                        Some(i),
                        false,
                        format!("big blind of {a} cents; it must be the table minimum {min}"),
                    );
                }
                self.h.seats[seat as usize].posted_bb += a;
                self.bb_poster.get_or_insert(seat);
                self.add_chips(seat, a, true, true);
                self.note(
                    c.blind_seat,
                    format!("seat {seat} posts the big blind, {a} cents"),
                );
            }
            "post_forced_bb" => {
                // r.89: the big blind owed after five hands without a bet (live).
                let min = cfg.min_bet;
                if a != min && !(all_in && a < min) {
                    self.flag(
                        codes::BLIND_AMOUNT_WRONG,
                        c.idle_big_blind,
                        Some(seat),
                        Some(i),
                        false,
                        format!("big blind owed under r.89 posted as {a} cents; it must be {min}"),
                    );
                }
                self.h.seats[seat as usize].posted_bb += a;
                self.add_chips(seat, a, true, true);
                self.note(c.idle_big_blind, format!("seat {seat} posts the big blind owed after five hands without a bet, {a} cents"));
            }
            "post_dead" => {
                // r.90: missed blinds, not counted toward the seat's bets (N21).
                self.add_chips(seat, a, false, false);
                self.note(
                    c.missed_blinds,
                    format!("seat {seat} posts {a} cents of missed blinds as dead money"),
                );
            }
            _ => {
                // post_ante: r.102; P461 r.38: an ante equal to the minimum bet.
                let min = cfg.min_bet;
                if self.h.seats[seat as usize].posted_ante {
                    self.flag(
                        codes::ANTE_WRONG,
                        c.ante,
                        Some(seat),
                        Some(i),
                        false,
                        format!("seat {seat} posts a second ante"),
                    );
                }
                if a != min && !(all_in && a < min) {
                    self.flag(
                        codes::ANTE_WRONG,
                        c.ante,
                        Some(seat),
                        Some(i),
                        false,
                        format!("ante of {a} cents; it must be the minimum bet {min}"),
                    );
                }
                self.h.seats[seat as usize].posted_ante = true;
                self.add_chips(seat, a, true, false);
                self.note(c.ante, format!("seat {seat} posts the ante, {a} cents"));
            }
        }
        if self.opened && self.bround == 0 && self.cfg.rules.streets == Streets::FlopTurnRiver {
            let ri = self.h.seats[seat as usize].round_in;
            if ri > self.current_bet {
                self.current_bet = ri;
            }
        }
    }

    fn stardilho(&mut self, i: usize, seat: u8, re: bool, a: Cents) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let all_in = a == self.h.seats[seat as usize].cave;
        if !self.opened {
            self.opened = true;
            self.bround = 0;
            self.cursor = pos_after(&self.h.ring, self.h.button);
        }
        if !cfg.stardilho && (!re || self.star.is_none()) {
            // r.106: only where the concessionaire decided so.
            self.flag(
                codes::STARDILHO_NOT_ENABLED,
                c.stardilho_enabled,
                Some(seat),
                Some(i),
                true,
                format!(
                    "seat {seat} announces a{} at a table without estardilho",
                    if re { " restardilho" } else { " stardilho" }
                ),
            );
        }
        if !re {
            if self.star.is_some() {
                return Err(event_err(
                    self.round,
                    i,
                    "a second stardilho in the hand: record it as a restardilho",
                ));
            }
            self.star = Some((seat, a));
            self.add_chips(seat, a, true, true);
            self.h.seats[seat as usize].voluntary += a;
            self.current_bet = self.current_bet.max(a.saturating_mul(2));
            self.h.voluntary = true;
            self.note(
                c.stardilho_amount,
                format!(
                    "seat {seat} stardilhos {a} cents: whoever stays puts {} (r.106(a))",
                    a.saturating_mul(2)
                ),
            );
        } else {
            let Some((s0, s)) = self.star else {
                return Err(event_err(
                    self.round,
                    i,
                    "a restardilho needs a stardilho before it",
                ));
            };
            if s0 == seat {
                return Err(event_err(
                    self.round,
                    i,
                    "the stardilho player cannot restardilho himself",
                ));
            }
            let want = s.saturating_mul(2);
            // r.106(b): the restardilho doubles the amount the stardilho player advanced.
            if a != want && !(all_in && a < want) {
                self.flag(
                    codes::STARDILHO_AMOUNT_WRONG,
                    c.stardilho_amount,
                    Some(seat),
                    Some(i),
                    false,
                    format!("restardilho of {a} cents after a stardilho of {s}; it must be {want}"),
                );
            }
            self.restar = Some(seat);
            self.add_chips(seat, a, true, true);
            self.h.seats[seat as usize].voluntary += a;
            // r.106(b) with (a): whoever stays puts twice the restardilho.
            let now = self.h.seats[seat as usize].round_in;
            self.current_bet = self.current_bet.max(a.saturating_mul(2)).max(now);
            self.h.voluntary = true;
            self.note(
                c.stardilho_amount,
                format!("seat {seat} restardilhos {a} cents"),
            );
        }
        for s in self.h.ring.clone() {
            self.h.seats[s as usize].acted = false;
        }
        self.h.seats[seat as usize].acted = true;
        Ok(())
    }

    fn action(
        &mut self,
        i: usize,
        seat: u8,
        action: &str,
        amount: Option<Cents>,
    ) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let in_star = cfg.rules.streets == Streets::OneByOne && self.bround == 0;
        // Turn order (r.37, r.84, r.85, r.107, r.108; Reg806 r.51, r.54): not at P461 tables
        // (digest N24) nor in the stardilho phase (no order is written).
        if self.checks_order() && !in_star {
            match self.expected() {
                Some((p, s)) if s == seat => self.cursor = (p + 1) % self.h.ring.len(),
                exp => {
                    let msg = match exp {
                        Some((_, s)) => {
                            format!("seat {seat} acts ({action}) while it is seat {s}'s turn")
                        }
                        None => format!(
                            "seat {seat} acts ({action}) after the betting round was complete"
                        ),
                    };
                    self.flag(
                        codes::OUT_OF_TURN,
                        c.out_of_turn,
                        Some(seat),
                        Some(i),
                        false,
                        msg,
                    );
                    self.h.seats[seat as usize].oot = true;
                }
            }
        } else if let Some(p) = self.h.ring.iter().position(|&s| s == seat) {
            self.cursor = (p + 1) % self.h.ring.len();
        }
        let r = self.h.seats[seat as usize];
        let to_call = (self.current_bet - r.round_in).max(0);
        let mut action = action;
        if matches!(action, "timeout" | "disconnect") {
            // Reg806 r.45 (and r.73, N18): check if possible, else fold.
            action = if to_call == 0 { "check" } else { "fold" };
            self.note(
                c.timeout,
                format!("seat {seat} timed out: taken to {action} (Reg806 r.45)"),
            );
        }
        match action {
            "fold" => {
                self.h.seats[seat as usize].folded = true;
                self.h.seats[seat as usize].acted = true;
                if self.explain {
                    self.note(c.irregular, format!("seat {seat} folds"));
                }
                return Ok(());
            }
            "check" => {
                if to_call > 0 {
                    // r.39(b); Reg806 r.34(b): no check facing a bet.
                    self.flag(
                        codes::ILLEGAL_CHECK,
                        c.illegal_check,
                        Some(seat),
                        Some(i),
                        true,
                        format!("seat {seat} checks facing {to_call} cents to call"),
                    );
                }
                self.h.seats[seat as usize].acted = true;
                return Ok(());
            }
            _ => {}
        }
        let cave = r.cave;
        let mut a = match (action, amount) {
            ("call", None) => to_call.min(cave),
            ("all_in", None) => cave,
            (_, Some(a)) => a,
            (_, None) => {
                return Err(event_err(
                    self.round,
                    i,
                    format!("`{action}` needs amount_cents"),
                ));
            }
        };
        if a > cave {
            return Err(self.over_cave(i, seat, a));
        }
        if action == "all_in" && a != cave {
            return Err(event_err(
                self.round,
                i,
                format!("all_in of {a} cents but seat {seat} has {cave} left"),
            ));
        }
        if in_star && self.star.is_some() {
            return self.star_action(i, seat, action, a);
        }
        if action == "call" && a > to_call {
            // r.71(d): chips beyond the call without announcing a raise count as a call; the
            // excess goes back.
            self.flag(codes::BETTING_IRREGULAR, c.irregular, Some(seat), Some(i), false,
                format!("seat {seat} calls with {a} cents where {to_call} were due; the excess is returned (r.71(d))"));
            a = to_call;
        }
        if a == 0 {
            // a call of nothing is a check
            self.h.seats[seat as usize].acted = true;
            return Ok(());
        }
        let all_in = a == cave;
        let new = r.round_in + a;
        let pot_before = self.pot_total;
        if new < self.current_bet {
            if !all_in {
                // r.39(c), r.48, r.71(c): a call must match.
                self.flag(
                    codes::BETTING_IRREGULAR,
                    c.irregular,
                    Some(seat),
                    Some(i),
                    false,
                    format!("seat {seat} puts in {a} cents where {to_call} were due to call"),
                );
            }
        } else if new == self.current_bet {
            if matches!(action, "bet" | "raise") && !all_in {
                if cfg.rules.raise_min_is_table_min && action == "raise" {
                    self.flag(
                        codes::RAISE_BELOW_MIN,
                        c.raise_min,
                        Some(seat),
                        Some(i),
                        false,
                        format!(
                            "seat {seat}'s raise adds nothing to the bet of {}",
                            self.current_bet
                        ),
                    );
                } else {
                    self.flag(
                        codes::BETTING_IRREGULAR,
                        c.irregular,
                        Some(seat),
                        Some(i),
                        false,
                        format!("seat {seat}'s {action} of {a} cents only calls"),
                    );
                }
            }
        } else if self.current_bet == 0 {
            // An opening bet.
            let min = cfg.min_bet;
            if new < min && !all_in {
                // r.20; Reg806 r.23.
                self.flag(
                    codes::BET_BELOW_MIN,
                    c.bet_min,
                    Some(seat),
                    Some(i),
                    false,
                    format!("seat {seat} opens with {new} cents, below the table minimum {min}"),
                );
            }
            if self.po_min_open > 0 {
                let m = self.po_min_open;
                if new < m && !all_in {
                    // P461 r.49: after a pó the opener bets at least the sum put up.
                    self.flag(codes::BET_BELOW_MIN, c.po, Some(seat), Some(i), true,
                        format!("seat {seat} opens with {new} cents after a pó; the opener bets at least {m}"));
                }
                self.po_min_open = 0;
            }
            if cfg.regulation == Regulation::Reg806 {
                match cfg.limit {
                    // Reg806 r.24(b): at a pot-limit table the bet is at most the pot.
                    Limit::PotLimit if new > pot_before => {
                        self.flag(codes::BET_OVER_MAX, c.bet_max, Some(seat), Some(i), false,
                            format!("seat {seat} opens with {new} cents at a pot-limit table; the pot is {pot_before}"));
                    }
                    // Reg806 r.24(a): half the pot (or a number of raises): a reading.
                    Limit::Limit if new > pot_before / 2 && cfg.max_raises.is_none() => {
                        self.flag(codes::BET_OVER_MAX, c.bet_max, Some(seat), Some(i), true,
                            format!("seat {seat} opens with {new} cents at a limit table; half the pot is {}", pot_before / 2));
                    }
                    _ => {}
                }
            }
            if action == "call" {
                self.flag(
                    codes::BETTING_IRREGULAR,
                    c.irregular,
                    Some(seat),
                    Some(i),
                    false,
                    format!("seat {seat}'s call of {a} cents opens the betting"),
                );
            }
            self.increase(seat, new);
        } else {
            self.raise(i, seat, new, all_in);
        }
        self.add_chips(seat, a, true, true);
        self.h.seats[seat as usize].voluntary += a;
        self.h.seats[seat as usize].acted = true;
        self.h.voluntary = true;
        if self.explain {
            let total = self.h.seats[seat as usize].round_in;
            let tag = if self.h.seats[seat as usize].all_in {
                " (all-in)"
            } else {
                ""
            };
            self.note(
                c.irregular,
                format!("seat {seat} {action}s {a} cents, {total} in this round{tag}"),
            );
        }
        Ok(())
    }

    fn increase(&mut self, seat: u8, new: Cents) {
        self.current_bet = new;
        self.last_aggressor = Some(seat);
        for k in 0..self.h.ring.len() {
            let s = self.h.ring[k];
            if s != seat {
                self.h.seats[s as usize].acted = false;
            }
        }
    }

    fn raise(&mut self, i: usize, seat: u8, new: Cents, all_in: bool) {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let inc = new - self.current_bet;
        self.raises += 1;
        // r.87, r.88, r.47: at most three raises per round unless only two players are in the
        // hand (N3); Reg806 r.38 and sintético r.47: the configured cap.
        let live = self.live_count();
        let cap = match cfg.rules.fixed_raise_cap {
            Some(cap) if live > 2 => Some(cap),
            Some(_) => None,
            None => match cfg.max_raises {
                Some(m) if cfg.regulation == Regulation::Reg806 || live > 2 => Some(m),
                _ => None,
            },
        };
        if let Some(cap) = cap
            && self.raises > cap
        {
            let k = self.raises;
            self.flag(codes::RAISE_CAP_EXCEEDED, c.raise_cap, Some(seat), Some(i), false,
                format!("raise number {k} in the {} round with {live} players in the hand; the cap is {cap}", cfg.rules.streets.round_name(self.bround)));
        }
        // r.86: raises add at least the table minimum.
        if cfg.rules.raise_min_is_table_min && inc < cfg.min_bet && !all_in {
            let m = cfg.min_bet;
            self.flag(
                codes::RAISE_BELOW_MIN,
                c.raise_min,
                Some(seat),
                Some(i),
                false,
                format!("seat {seat} raises by {inc} cents, below the table minimum {m}"),
            );
        }
        // r.71(f): an out-of-turn bet cannot be increased when the turn comes.
        if self.h.seats[seat as usize].oot {
            self.flag(
                codes::OUT_OF_TURN_INCREASED,
                c.oot_increased,
                Some(seat),
                Some(i),
                true,
                format!("seat {seat} acted out of turn in this round and now raises"),
            );
        }
        // r.70(h); P461 r.65: after an early exposure, who had not bet may only call.
        if self.early_exposure && !self.h.seats[seat as usize].acted_before_exposure {
            self.flag(
                codes::RAISE_AFTER_EARLY_EXPOSURE,
                c.early_exposure,
                Some(seat),
                Some(i),
                true,
                format!("seat {seat} raises after a common card was exposed early"),
            );
        }
        self.increase(seat, new);
    }

    /// Actions after a stardilho, before the first common card (r.106).
    fn star_action(
        &mut self,
        i: usize,
        seat: u8,
        action: &str,
        a: Cents,
    ) -> Result<(), RoundError> {
        let c = &self.cfg.cites;
        let Some((s0, s)) = self.star else {
            return Ok(());
        };
        let all_in = a == self.h.seats[seat as usize].cave;
        if action == "call" && self.restar.is_none() {
            // r.106(a): others stay in with 2S; the stardilho player completes with S.
            let want = if seat == s0 { s } else { s.saturating_mul(2) };
            let before = self.h.seats[seat as usize].round_in;
            let first_time = if seat == s0 { before == s } else { before == 0 };
            if first_time && a != want && !(all_in && a < want) {
                let who = if seat == s0 {
                    "the stardilho player completes"
                } else {
                    "stays in"
                };
                self.flag(codes::STARDILHO_AMOUNT_WRONG, c.stardilho_amount, Some(seat), Some(i), false,
                    format!("seat {seat} {who} with {a} cents after a stardilho of {s}; it must be {want}: settled as played"));
                if seat != s0 && a < want {
                    // He chose to stay in: the breach is flagged, the hand goes on with him
                    // (no consequence is prescribed; ARCHITECTURE.md conventions).
                    self.star_stayed_short.push(seat);
                }
            }
        }
        self.add_chips(seat, a, true, true);
        self.h.seats[seat as usize].voluntary += a;
        let now = self.h.seats[seat as usize].round_in;
        if now > self.current_bet {
            self.increase(seat, now);
        }
        self.h.seats[seat as usize].acted = true;
        self.h.voluntary = true;
        if self.explain {
            self.note(
                c.stardilho_amount,
                format!("seat {seat} puts {a} cents in the stardilho ({now} in all)"),
            );
        }
        Ok(())
    }

    // ---------------------------------------------------------- procedures

    fn procedure(
        &mut self,
        i: usize,
        name: &str,
        seat: Option<u8>,
        amount: Option<Cents>,
    ) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        match name {
            "shuffle" | "cut" | "absent" | "button_draw" => Ok(()),
            "leave" => {
                let s = procedure_seat(cfg, self.round, i, seat)?;
                self.h.left.push(s);
                Ok(())
            }
            "buy_in" | "rebuy" | "top_up" | "withdraw" | "session_fee" | "entry_fee" => {
                let s = procedure_seat(cfg, self.round, i, seat)?;
                let a = amount.ok_or_else(|| {
                    event_err(self.round, i, format!("`{name}` needs amount_cents"))
                })?;
                let a = check_amount(self.round, i, a)?;
                match name {
                    "buy_in" | "rebuy" | "top_up" => {
                        self.h.buy_ins.push((s, a));
                        if self.started {
                            // r.14(e); Reg806 r.11(b); P461 r.60: no chips added during a hand.
                            self.flag(
                                codes::CAVE_TOPUP_DURING_HAND,
                                c.topup,
                                Some(s),
                                Some(i),
                                false,
                                format!("seat {s} adds {a} cents to its cave during the hand"),
                            );
                            let r = &mut self.h.seats[s as usize];
                            if r.in_hand {
                                r.cave = r
                                    .cave
                                    .checked_add(a)
                                    .ok_or_else(|| event_err(self.round, i, "cave overflows"))?;
                                if r.cave > MAX_AMOUNT_CENTS.saturating_mul(1000) {
                                    return Err(event_err(
                                        self.round,
                                        i,
                                        "the cave exceeds the ledger's range",
                                    ));
                                }
                                if r.cave > 0 {
                                    r.all_in = false;
                                }
                            }
                        }
                        Ok(())
                    }
                    "withdraw" => {
                        // Reg806 r.11(a); P461 r.61 (P217 r.14(g), (h) as a reading).
                        let review = cfg.regulation == Regulation::P217;
                        self.flag(
                            codes::CAVE_WITHDRAWAL,
                            c.withdrawal,
                            Some(s),
                            Some(i),
                            review,
                            format!("seat {s} takes {a} cents off its cave while seated"),
                        );
                        let r = &mut self.h.seats[s as usize];
                        if r.in_hand {
                            if a > r.cave {
                                return Err(self.over_cave(i, s, a));
                            }
                            r.cave -= a;
                        }
                        Ok(())
                    }
                    "session_fee" => {
                        self.h.fees.push(Fee {
                            kind: "session_fee",
                            seat: s,
                            recorded: a,
                        });
                        Ok(())
                    }
                    _ => {
                        self.h.fees.push(Fee {
                            kind: "entry_fee",
                            seat: s,
                            recorded: a,
                        });
                        Ok(())
                    }
                }
            }
            other => Err(event_err(
                self.round,
                i,
                format!(
                    "procedure `{}` is not part of {}'s vocabulary",
                    other.chars().take(32).collect::<String>(),
                    cfg.rules.game
                ),
            )),
        }
    }

    fn fault(&mut self, i: usize, code: &str, _seat: Option<u8>) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let online = cfg.regulation == Regulation::Reg806;
        match code {
            "misdeal" if !online => {
                // r.69; r.109; P461 r.62: the hand is null.
                self.set_null("misdeal", c.null_hand);
                Ok(())
            }
            "card_exposed" if !online => Ok(()),
            "board_exposed_early" if !online => {
                self.mark_early_exposure();
                self.burn_waived = true;
                Ok(())
            }
            "system_failure" if online => {
                // Reg806 r.72: the hand is null, the bets returned.
                self.set_null("system_failure", c.null_hand);
                Ok(())
            }
            "player_disconnect" if online => {
                // Reg806 r.73: the hand stands.
                self.note(
                    c.wrongly_voided,
                    "a player's own connection failed: the hand stands (Reg806 r.73)".to_string(),
                );
                Ok(())
            }
            other => Err(event_err(
                self.round,
                i,
                format!(
                    "fault `{}` is not a fault code of {}",
                    other.chars().take(32).collect::<String>(),
                    cfg.rules.game
                ),
            )),
        }
    }

    fn void(&mut self, i: usize, reason: &str) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        let online = cfg.regulation == Regulation::Reg806;
        match reason {
            "misdeal" if !online => self.set_null("misdeal", c.null_hand),
            "system_failure" if online => self.set_null("system_failure", c.null_hand),
            "invalid_deck" => self.set_null("invalid_deck", c.invalid_deck),
            "card_exposed" if cfg.rules.forced == Forced::Antes => {
                self.set_null("card_exposed_while_dealing", c.exposed_hole_card)
            }
            // Reg806 r.73; r.70(c): these hands stand.
            "player_disconnect" if online => {
                self.h.wrongly_voided_event.get_or_insert(i);
            }
            "card_exposed" if !online => {
                self.h.wrongly_voided_event.get_or_insert(i);
            }
            other => {
                return Err(event_err(
                    self.round,
                    i,
                    format!(
                        "void reason `{}` is not one of {} (misdeal, invalid_deck, card_exposed{})",
                        other.chars().take(32).collect::<String>(),
                        cfg.rules.game,
                        if online {
                            ", system_failure, player_disconnect"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------- the end

    fn finish(&mut self) -> Result<(), RoundError> {
        let cfg = self.cfg;
        let c = &cfg.cites;
        self.h.bb_at = self.bb_poster.or(self.bb_seat);
        let n_events = self.round.events.len();
        // The last betting round must be closed with everyone matched.
        if self.opened || cfg.rules.streets == Streets::FlopTurnRiver {
            let complete_board = self.h.board.len() >= 5;
            if complete_board || self.live_count() <= 1 {
                self.close_round(n_events.saturating_sub(1));
            }
        }
        // Blinds and antes not posted by seats that took part (r.81, r.91; r.102, r.111).
        let ring = self.h.ring.clone();
        for &s in &ring {
            let r = self.h.seats[s as usize];
            let took_part = !r.folded || r.voluntary > 0;
            match cfg.rules.forced {
                Forced::MaoBlinds | Forced::ButtonBlinds if !self.heads_up_online => {
                    if self.sb_seat == Some(s)
                        && !r.posted_sb
                        && self.sb_poster.is_none()
                        && took_part
                    {
                        self.flag(codes::BLIND_WRONG_SEAT, c.blind_seat, Some(s), None, false,
                            format!("seat {s} owes the small blind and plays the hand without posting it"));
                    }
                    if self.bb_seat == Some(s)
                        && r.posted_bb == 0
                        && self.bb_poster.is_none()
                        && took_part
                    {
                        self.flag(
                            codes::BLIND_WRONG_SEAT,
                            c.blind_seat,
                            Some(s),
                            None,
                            false,
                            format!(
                                "seat {s} owes the big blind and plays the hand without posting it"
                            ),
                        );
                    }
                }
                Forced::Antes if !r.posted_ante && took_part => {
                    self.flag(
                        codes::ANTE_WRONG,
                        c.ante,
                        Some(s),
                        None,
                        false,
                        format!("seat {s} plays the hand without posting the ante"),
                    );
                }
                _ => {}
            }
        }
        // Hole cards: count (r.77, r.93, r.96; r.109(b)) and dealing order (r.35, r.69(a);
        // r.109(a)).
        let any_hole = ring
            .iter()
            .any(|&s| self.h.seats[s as usize].hole_count() > 0)
            || self.exposed_hole.is_some();
        // A hand already null (r.69: "a jogada será considerada nula e iniciada nova mão", e.g.
        // r.69(g) two cards turned, a declared misdeal) is not dealt on: the cards it never gave
        // are the consequence of a fault rightly handled, not a second breach.
        if any_hole && self.h.null.is_none() {
            let want = cfg.rules.hole_cards;
            let mut counts_ok = true;
            for &s in &ring {
                let got = self.h.seats[s as usize].hole_count();
                if got != want {
                    counts_ok = false;
                    self.flag(
                        codes::HOLE_CARD_COUNT,
                        c.hole_count,
                        Some(s),
                        None,
                        true,
                        format!("seat {s} was dealt {got} hole cards; the game deals {want}"),
                    );
                    if cfg.rules.forced == Forced::Antes {
                        self.set_null("wrong_card_count", c.null_hand);
                    }
                }
            }
            if counts_ok && cfg.rules.land && self.h.null.is_none() && !self.dealing_order_ok() {
                self.set_null("cards_out_of_order", c.dealing_order);
            }
        }
        Ok(())
    }

    fn dealing_order_ok(&self) -> bool {
        if self.hole_after_board {
            return false;
        }
        let ring = &self.h.ring;
        let n = ring.len();
        let seq = &self.deal_seq;
        let passes = self.cfg.rules.hole_cards;
        let base_len = n * passes;
        let extra = usize::from(self.exposed_hole.is_some());
        if seq.len() != base_len + extra || seq.is_empty() {
            return false;
        }
        if let Some((s, _)) = self.exposed_hole
            && seq[base_len] != s
        {
            return false;
        }
        let start = match self.cfg.rules.forced {
            // r.35: starting with the player who made the first bet (the small blind).
            Forced::MaoBlinds => {
                let first = self.sb_poster.unwrap_or(self.h.button);
                pos_at_or_after(ring, first)
            }
            // N15: sintético only "in rotation" (any start seat).
            _ => match ring.iter().position(|&s| s == seq[0]) {
                Some(p) => p,
                None => return false,
            },
        };
        (0..base_len).all(|k| seq[k] == ring[(start + k % n) % n])
    }
}

/// `amount × bp / 10000`, rounded down (never more than the rate).
pub fn mul_bp(amount: Cents, bp: u32) -> Cents {
    ((amount as i128 * bp as i128) / 10_000) as Cents
}

fn deck_name(cfg: &PokerConfig) -> &'static str {
    match cfg.rules.deck {
        crate::eval::Deck::Standard52 => "52-card",
        crate::eval::Deck::Sintetico28 => "28-card sintético",
    }
}
