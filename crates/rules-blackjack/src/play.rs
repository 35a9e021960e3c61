//! The round as played: bets, the deal, the players' decisions and the dealer's draw, with the
//! deal-order and drawing checks (P217/2007 T.I C.III S.I r.13-r.36; P1364/2001 alike).
//!
//! The record is walked twice. Pass 1 ([`Ctx::register_bets`]) reads every bet, change and
//! withdrawal and fixes who decides at each seat. Pass 2 ([`Ctx::play`]) follows the cards and
//! decisions in order:
//!
//! * **Initial deal** (r.17): a card to hand 1 of a seat with fewer than two cards, or to a
//!   dealer with fewer than two counted cards, is an initial card. They must come seat by seat
//!   (ascending), then the dealer's up-card face up, then seat by seat again, then the hole card
//!   face down; the first deviation is `BJ_DEAL_ORDER`.
//! * **Hole card exposed** (P217 r.17): a face-up second dealer card goes to the discard and the
//!   next dealer card is the hole card (`BJ_HOLE_CARD_EXPOSED`). P1364/2001 has no such rule: the
//!   card counts and the face-up deal is `BJ_DEAL_ORDER`.
//! * **Requested cards** (r.18): every later card to a player must answer a request: `hit`,
//!   `double` (one card), `split` (one card to each of the two hands). An unrequested card seen
//!   (face up) is annulled; one not seen (face down) goes to the next hand that asks for a card,
//!   or to the dealer if nobody does (`BJ_CARD_DEALT_WITHOUT_REQUEST`). The table may re-report
//!   that card when it is handed over (same card, to its new hand, as the next card event): it
//!   is then not counted twice.
//! * **Dealer's draw** (r.19, r.22): see [`crate::dealer`]; a card drawn at 17 or more does not
//!   count; a card drawn after every player has busted or surrendered is flagged.

use rules_core::{
    Adjudication, Bet, Card, Cents, Decision, EventKind, Id, Rank, Recipient, Round, RoundError,
    Severity, Violation,
};

use crate::cite::{self, Regulation};
use crate::config::{BlackjackConfig, Shuffler};
use crate::dealer::must_draw;
use crate::hand::{self, Count};
use crate::small::{Capped, Filler, Small, same};
use crate::state::BlackjackState;

impl Filler for Hand {
    const FILL: Self = Hand::EMPTY;
}

impl Default for Hand {
    fn default() -> Self {
        Hand::EMPTY
    }
}

impl Filler for Stake {
    const FILL: Self = Stake {
        hand: 0,
        base: 0,
        extra: 0,
    };
}

/// Decision actions (see [`crate::blackjack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Hit,
    Stand,
    Double,
    Split,
    Surrender,
    EvenMoney,
}

#[inline]
fn parse_action(s: &str) -> Option<Action> {
    Some(match s.len() {
        3 if same(s, "hit") => Action::Hit,
        5 if same(s, "stand") => Action::Stand,
        5 if same(s, "split") => Action::Split,
        6 if same(s, "double") => Action::Double,
        9 if same(s, "surrender") => Action::Surrender,
        10 if same(s, "even_money") => Action::EvenMoney,
        _ => return None,
    })
}

/// Bet types (see the crate documentation for their fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BetKind {
    Main,
    Vacant,
    Complementary,
    Insurance,
    Jackpot,
}

impl BetKind {
    #[inline]
    fn parse(s: &str) -> Option<BetKind> {
        Some(match s.len() {
            4 if same(s, "main") => BetKind::Main,
            6 if same(s, "vacant") => BetKind::Vacant,
            13 if same(s, "complementary") => BetKind::Complementary,
            9 if same(s, "insurance") => BetKind::Insurance,
            7 if same(s, "jackpot") => BetKind::Jackpot,
            _ => return None,
        })
    }
    /// A bet in a box, settled on the seat's hands.
    #[inline]
    pub fn is_box(self) -> bool {
        matches!(
            self,
            BetKind::Main | BetKind::Vacant | BetKind::Complementary
        )
    }
}

/// One box bet's stake on one hand of its seat.
#[derive(Clone, Copy, Debug)]
pub struct Stake {
    pub hand: u8,
    /// The bet on this hand (the bet itself, or the stake added on a split).
    pub base: Cents,
    /// Added by doubling.
    pub extra: Cents,
}

/// A bet of the round.
#[derive(Clone, Debug)]
pub struct BetRec<'r> {
    pub bet: &'r Bet,
    pub event: usize,
    pub kind: BetKind,
    pub seat: u8,
    /// Amount after any `bet_changed`.
    pub amount: Cents,
    pub withdrawn: bool,
    /// The bet this one rides on (complementary, insurance, jackpot with `on_bet`).
    pub on: Option<usize>,
    /// Box bets: stakes per hand.
    pub stakes: Small<Stake, 3>,
    /// Jackpot chips: accepted as a jackpot bet (r.45, r.47, r.48).
    pub jackpot_valid: bool,
    /// The due result rests on a reading of the digest (for review if disputed).
    pub reading: Option<&'static str>,
    /// Placed in time (r.13, by the table's regulation): the seat is then in the deal (r.17).
    pub timely: bool,
}

/// How far the first round of the deal had gone when an event came (pass 1).
#[derive(Clone, Copy, Default)]
struct DealtTo {
    /// The highest-numbered seat that had received a card.
    max_seat: Option<u8>,
    /// The dealer had received a card.
    dealer: bool,
}

/// One hand at a seat.
#[derive(Clone, Copy, Debug)]
pub struct Hand {
    pub number: u8,
    pub cards: Capped<Card, 12>,
    pub count: Count,
    /// Comes from a split (r.20: an ace and a ten here is 21, not blackjack).
    pub split: bool,
    /// A split ace: one card only (r.26).
    pub split_aces: bool,
    pub doubled: bool,
    pub cards_after_double: u32,
    pub surrendered: bool,
    pub even_money: bool,
    pub stood: bool,
    /// Cards asked for and not dealt yet.
    pub pending: u32,
    /// The hand created by this hand's latest split (followers attach to it, r.28).
    pub split_child: Option<u8>,
    /// Already flagged `BJ_STOOD_ON_11_OR_LESS`.
    pub stand_flagged: bool,
}

impl Hand {
    pub const EMPTY: Hand = Hand {
        number: 0,
        cards: Capped::EMPTY,
        count: Count {
            hard: 0,
            aces: 0,
            locked: 0,
        },
        split: false,
        split_aces: false,
        doubled: false,
        cards_after_double: 0,
        surrendered: false,
        even_money: false,
        stood: false,
        pending: 0,
        split_child: None,
        stand_flagged: false,
    };

    #[inline]
    pub fn total(&self) -> u32 {
        self.count.player_total()
    }
    /// r.1(a), r.20: ace and ten-value as the first two cards of a hand not from a split.
    #[inline]
    pub fn is_blackjack(&self) -> bool {
        !self.split && self.cards.len() == 2 && hand::is_ace_ten(&self.cards)
    }
    #[inline]
    pub fn bust(&self) -> bool {
        self.total() > 21
    }
}

/// A seat with at least one box bet.
#[derive(Clone, Debug)]
pub struct SeatPlay {
    pub seat: u8,
    pub hands: Small<Hand, 2>,
    /// The bet whose owner decides (titular's `main`, or the r.16 decider on a vacant seat).
    pub lead: usize,
    /// The seat's first four cards in dealing order, all hands (jackpot, r.42).
    pub first: Capped<Card, 4>,
    /// Dealt in the initial deal (before the first card).
    pub in_deal: bool,
    /// Sum and number of the (not withdrawn) box bets at the seat (r.15, r.16).
    pub total: Cents,
    pub n_box: u32,
}

/// The working context of one adjudication.
pub struct Ctx<'a> {
    pub cfg: &'a BlackjackConfig,
    pub round: &'a Round,
    pub explain: bool,
    pub adj: Adjudication,
    pub bets: Vec<BetRec<'a>>,
    pub seats: Vec<SeatPlay>,
    pub dealer: Capped<Card, 16>,
    pub dealer_count: Count,
    /// First card to a seat or the dealer.
    pub deal_start: Option<usize>,
    pub no_more_bets: Option<usize>,
    pub last_card: Option<usize>,
    /// Expected initial deal and position in it (None once out of sequence).
    pos: Option<usize>,
    held: Vec<(Card, usize)>,
    echo: Option<(Recipient, Card)>,
    cur_seat: u8,
    dealer_drew: bool,
    post_deal_card: bool,
    flagged_order: [bool; 4],
    pub fiscal_chefe: bool,
    pub inserted_at: Option<usize>,
    pub malfunction: Option<usize>,
    pub player_connection: Option<usize>,
    pub void_event: Option<(usize, &'a str)>,
    pub pays: bool,
    pub displays: Vec<(usize, Cents)>,
    pub shuffled_before_first_card: bool,
    pub warning_event: Option<usize>,
    pub cards_not_inserted: bool,
    pub seat_bets_this_round: Vec<u8>,
    pub hole_exposed: Option<usize>,
    /// Seats dealt in the initial deal, ascending (r.17), and how many.
    dealt: [u8; 8],
    n_dealt: usize,
    /// Index in `seats` by seat number (`u8::MAX`: none), filled once the seats are known.
    seat_pos: [u8; 256],
    /// The warning card's state when the round's first card was dealt.
    pub warning_at_start: Option<crate::state::WarningCard>,
}

fn ev_err(round: &Round, i: usize, msg: impl Into<String>) -> RoundError {
    RoundError::event(round, i, msg)
}

impl<'a> Ctx<'a> {
    pub fn new(cfg: &'a BlackjackConfig, round: &'a Round, explain: bool) -> Ctx<'a> {
        Ctx {
            cfg,
            round,
            explain,
            adj: Adjudication::new(cfg.game, round.round_id.clone()),
            bets: Vec::with_capacity(16),
            seats: Vec::with_capacity(8),
            dealer: Capped::EMPTY,
            dealer_count: Count::default(),
            deal_start: None,
            no_more_bets: None,
            last_card: None,
            pos: Some(0),
            held: Vec::new(),
            echo: None,
            cur_seat: 0,
            dealer_drew: false,
            post_deal_card: false,
            flagged_order: [false; 4],
            fiscal_chefe: false,
            inserted_at: None,
            malfunction: None,
            player_connection: None,
            void_event: None,
            pays: false,
            displays: Vec::new(),
            shuffled_before_first_card: false,
            warning_event: None,
            cards_not_inserted: false,
            seat_bets_this_round: Vec::new(),
            hole_exposed: None,
            dealt: [0; 8],
            n_dealt: 0,
            seat_pos: [u8::MAX; 256],
            warning_at_start: None,
        }
    }

    #[inline]
    pub fn reg(&self) -> Regulation {
        self.cfg.regulation
    }

    #[inline]
    pub fn c(&self, c: cite::Cite) -> &'static str {
        c.get(self.cfg.regulation)
    }

    #[inline]
    pub fn push(&mut self, v: Violation) {
        self.adj.violations.push(v);
    }

    #[inline]
    fn find_bet(&self, id: &str) -> Option<usize> {
        self.bets.iter().position(|b| same(&b.bet.id, id))
    }

    #[inline]
    pub fn seat_index(&self, seat: u8) -> Option<usize> {
        match self.seat_pos[seat as usize] {
            u8::MAX => self.seats.iter().position(|s| s.seat == seat),
            k => Some(k as usize),
        }
    }

    fn seat_valid(&self, seat: u8) -> bool {
        (1..=self.cfg.seats).contains(&seat)
    }

    fn flag_seat(&mut self, seat: u8, i: usize) {
        if !self.seat_valid(seat) {
            let v = Violation::new(
                "BJ_SEAT_INVALID",
                Severity::Medium,
                self.c(cite::R2),
                format!(
                    "seat {seat} is outside the table's {} seats",
                    self.cfg.seats
                ),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        }
    }

    // ------------------------------------------------------------------ pass 1: bets

    /// Pass 1: every bet, change and withdrawal; limits; who decides at each seat (r.13-r.16,
    /// r.45-r.48).
    pub fn register_bets(&mut self) -> Result<(), RoundError> {
        let round = self.round;
        let p1364 = self.reg() == Regulation::P1364;
        // How far the first round of the deal has gone (the P1364 r.13 deadline per seat).
        let mut dealt_to = DealtTo::default();
        for (i, e) in round.events.iter().enumerate() {
            match &e.kind {
                EventKind::Card { to, .. } => {
                    self.last_card = Some(i);
                    match to {
                        Recipient::Seat { seat, .. } => {
                            self.deal_start.get_or_insert(i);
                            dealt_to.max_seat = dealt_to.max_seat.max(Some(*seat));
                        }
                        Recipient::Dealer => {
                            self.deal_start.get_or_insert(i);
                            dealt_to.dealer = true;
                        }
                        _ => {}
                    }
                }
                EventKind::NoMoreBets => {
                    self.no_more_bets.get_or_insert(i);
                }
                EventKind::Bet(b) => self.register_bet(i, b, dealt_to, p1364)?,
                EventKind::BetChanged {
                    bet_id,
                    amount_cents,
                } => {
                    let bi = self.find_bet(bet_id).ok_or_else(|| {
                        ev_err(round, i, format!("bet_changed on unknown bet `{bet_id}`"))
                    })?;
                    rules_core::check_stake(round, bet_id, *amount_cents)?;
                    self.bets[bi].amount = *amount_cents;
                    self.late_change(bi, i, dealt_to, p1364, "changed");
                }
                EventKind::BetWithdrawn { bet_id } => {
                    let bi = self.find_bet(bet_id).ok_or_else(|| {
                        ev_err(round, i, format!("bet_withdrawn on unknown bet `{bet_id}`"))
                    })?;
                    self.bets[bi].withdrawn = true;
                    self.late_change(bi, i, dealt_to, p1364, "withdrawn");
                }
                _ => {}
            }
        }
        self.build_seats()?;
        self.check_limits();
        self.check_jackpot_chips();
        Ok(())
    }

    fn late_for_seat(&self, seat: u8, i: usize, dealt_to: DealtTo, p1364: bool) -> bool {
        if p1364 {
            // P1364/2001 r.13 ("antes de chegar o momento de, na respectiva ordem, lhe caber a
            // distribuição da primeira carta"): before that seat's first card is due in the
            // r.17 order, i.e. before a card has gone to it, to a higher-numbered seat or to
            // the dealer.
            dealt_to.dealer || dealt_to.max_seat.is_some_and(|m| m >= seat)
        } else {
            // P217/2007 r.13: before the deal begins.
            self.deal_start.is_some_and(|d| d < i)
        }
    }

    fn late_change(&mut self, bi: usize, i: usize, dealt_to: DealtTo, p1364: bool, what: &str) {
        let b = &self.bets[bi];
        if !b.kind.is_box() || !self.late_for_seat(b.seat, i, dealt_to, p1364) {
            return;
        }
        let v = Violation::new(
            "BJ_LATE_BET",
            Severity::Medium,
            self.c(cite::R13),
            format!("bet `{}` {what} after the deal began", b.bet.id),
        )
        .bet(&b.bet.id)
        .seat(b.seat)
        .event(i);
        self.push(v);
    }

    fn register_bet(
        &mut self,
        i: usize,
        b: &'a Bet,
        dealt_to: DealtTo,
        p1364: bool,
    ) -> Result<(), RoundError> {
        let round = self.round;
        if self.find_bet(&b.id).is_some() {
            return Err(RoundError::bet(round, &b.id, "duplicate bet id"));
        }
        rules_core::check_stake(round, &b.id, b.amount_cents)?;
        let kind = BetKind::parse(&b.bet_type).ok_or_else(|| {
            RoundError::bet(
                round,
                &b.id,
                format!(
                    "unknown bet_type `{}` (main, vacant, complementary, insurance, jackpot)",
                    b.bet_type.chars().take(32).collect::<String>()
                ),
            )
        })?;
        if !b.selection.is_empty() {
            return Err(RoundError::bet(
                round,
                &b.id,
                "blackjack bets have no selection",
            ));
        }
        for k in b.attrs.keys() {
            if !(kind == BetKind::Vacant && k == "home_seat") {
                return Err(RoundError::bet(
                    round,
                    &b.id,
                    format!(
                        "unknown attribute `{}` (only `home_seat` on vacant bets)",
                        k.chars().take(32).collect::<String>()
                    ),
                ));
            }
        }
        let on = match &b.on_bet {
            None => None,
            Some(t) => Some(self.find_bet(t).ok_or_else(|| {
                RoundError::bet(
                    round,
                    &b.id,
                    format!("on_bet `{t}` is not an earlier bet of the round"),
                )
            })?),
        };
        let seat = match kind {
            BetKind::Main | BetKind::Vacant => {
                if on.is_some() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "main and vacant bets ride on no other bet",
                    ));
                }
                b.seat.ok_or_else(|| {
                    RoundError::bet(round, &b.id, "main/vacant bet without a seat")
                })?
            }
            BetKind::Complementary | BetKind::Insurance => {
                let t = on.ok_or_else(|| {
                    RoundError::bet(
                        round,
                        &b.id,
                        "complementary and insurance bets need on_bet (the box bet)",
                    )
                })?;
                let target = &self.bets[t];
                let ok = match kind {
                    BetKind::Complementary => {
                        matches!(target.kind, BetKind::Main | BetKind::Vacant)
                    }
                    _ => target.kind.is_box(),
                };
                if !ok {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "on_bet names a bet of the wrong type",
                    ));
                }
                if b.seat.is_some_and(|s| s != target.seat) {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "seat differs from the seat of on_bet",
                    ));
                }
                target.seat
            }
            BetKind::Jackpot => {
                let s = b
                    .seat
                    .ok_or_else(|| RoundError::bet(round, &b.id, "jackpot bet without a seat"))?;
                if let Some(t) = on
                    && (!self.bets[t].kind.is_box() || self.bets[t].seat != s)
                {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "on_bet of a jackpot chip must be a box bet at its seat",
                    ));
                }
                if self.cfg.jackpot.is_none() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "the table has no jackpot configured",
                    ));
                }
                s
            }
        };
        if kind == BetKind::Vacant
            && let Some(h) = b.attrs.get("home_seat")
            && h.parse::<u8>().is_err()
        {
            return Err(RoundError::bet(
                round,
                &b.id,
                "home_seat must be a seat number",
            ));
        }
        self.flag_seat(seat, i);
        let late = kind.is_box() && self.late_for_seat(seat, i, dealt_to, p1364);
        if late {
            let v = Violation::new(
                "BJ_LATE_BET",
                Severity::Medium,
                self.c(cite::R13),
                format!("bet `{}` placed after the deal began", b.id),
            )
            .bet(&b.id)
            .seat(seat)
            .event(i);
            self.push(v);
        }
        if self.cfg.online() && kind.is_box() && !self.seat_bets_this_round.contains(&seat) {
            self.seat_bets_this_round.push(seat);
        }
        self.bets.push(BetRec {
            bet: b,
            event: i,
            kind,
            seat,
            amount: b.amount_cents,
            withdrawn: false,
            on,
            stakes: Small::default(),
            jackpot_valid: kind == BetKind::Jackpot,
            reading: None,
            timely: !late,
        });
        Ok(())
    }

    /// Seats and their deciders (r.15, r.16).
    fn build_seats(&mut self) -> Result<(), RoundError> {
        let round = self.round;
        for bi in 0..self.bets.len() {
            let (kind, seat) = (self.bets[bi].kind, self.bets[bi].seat);
            if !kind.is_box() {
                continue;
            }
            // Part of the expected deal order (r.17): a box bet placed in time (r.13: P217
            // before the deal begins; P1364 before the seat's own first card is due).
            let in_deal = self.bets[bi].timely;
            match self.seat_index(seat) {
                None => {
                    self.seats.push(SeatPlay {
                        seat,
                        hands: {
                            let mut h: Small<Hand, 2> = Small::default();
                            h.push(Hand {
                                number: 1,
                                ..Hand::EMPTY
                            });
                            h
                        },
                        lead: bi,
                        total: 0,
                        n_box: 0,
                        first: Capped::EMPTY,
                        in_deal: in_deal && !self.bets[bi].withdrawn,
                    });
                }
                Some(si) => {
                    let lead = self.seats[si].lead;
                    let lead_kind = self.bets[lead].kind;
                    self.seats[si].in_deal |= in_deal && !self.bets[bi].withdrawn;
                    match (lead_kind, kind) {
                        (_, BetKind::Complementary) => {}
                        (BetKind::Main, BetKind::Main) => {
                            return Err(RoundError::bet(
                                round,
                                &self.bets[bi].bet.id,
                                format!(
                                    "seat {seat} already has a titular main bet (use complementary, or vacant for a vacant seat)"
                                ),
                            ));
                        }
                        (BetKind::Main, BetKind::Vacant) | (BetKind::Vacant, BetKind::Main) => {
                            return Err(RoundError::bet(
                                round,
                                &self.bets[bi].bet.id,
                                format!(
                                    "seat {seat} mixes a titular main bet with vacant-seat bets"
                                ),
                            ));
                        }
                        (BetKind::Vacant, BetKind::Vacant) => {
                            // r.16: the largest bet decides; equal -> the bettor in the
                            // lowest-numbered seat (home_seat); then the first placed.
                            let home = |b: &BetRec| {
                                b.bet
                                    .attrs
                                    .get("home_seat")
                                    .and_then(|h| h.parse::<u8>().ok())
                                    .unwrap_or(u8::MAX)
                            };
                            let (cur, new) = (&self.bets[lead], &self.bets[bi]);
                            if new.amount > cur.amount
                                || (new.amount == cur.amount && home(new) < home(cur))
                            {
                                self.seats[si].lead = bi;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        self.seats.sort_by_key(|s| s.seat);
        for (k, s) in self.seats.iter().enumerate().take(255) {
            self.seat_pos[s.seat as usize] = k as u8;
        }
        // The initial deal (r.17) when every dealt seat fits the table's numbering; a record
        // with more dealt seats than a table has is checked against its first eight.
        for s in self.seats.iter().filter(|s| s.in_deal) {
            if self.n_dealt < self.dealt.len() {
                self.dealt[self.n_dealt] = s.seat;
                self.n_dealt += 1;
            }
        }
        for bi in 0..self.bets.len() {
            if self.bets[bi].kind.is_box() && !self.bets[bi].withdrawn {
                let a = self.bets[bi].amount;
                if let Some(si) = self.seat_index(self.bets[bi].seat) {
                    let s = &mut self.seats[si];
                    s.total = s.total.saturating_add(a);
                    s.n_box += 1;
                }
                self.bets[bi].stakes.push(Stake {
                    hand: 1,
                    base: a,
                    extra: 0,
                });
            }
        }
        Ok(())
    }

    /// r.14, r.15, r.16: amounts and the seat maximum.
    fn check_limits(&mut self) {
        let (Some(min), max) = (self.cfg.min, self.cfg.max) else {
            return self.check_seat_max();
        };
        for bi in 0..self.bets.len() {
            let b = &self.bets[bi];
            if !b.kind.is_box() || b.withdrawn {
                continue;
            }
            let (seat, a, ev) = (b.seat, b.amount, b.event);
            if a >= min && a % min == 0 && max.is_none_or(|mx| a <= mx) {
                continue;
            }
            let id = b.bet.id.clone();
            let cite14 = self.c(cite::R14);
            if a < min {
                self.push(
                    Violation::new(
                        "BJ_BET_BELOW_MIN",
                        Severity::Medium,
                        cite14,
                        format!("bet `{id}` of {a} is below the table minimum {min}"),
                    )
                    .bet(&id)
                    .seat(seat)
                    .event(ev),
                );
            } else if a % min != 0 {
                self.push(
                    Violation::new(
                        "BJ_BET_NOT_MULTIPLE_OF_MIN",
                        Severity::Medium,
                        cite14,
                        format!("bet `{id}` of {a} is not a multiple of the minimum {min}"),
                    )
                    .bet(&id)
                    .seat(seat)
                    .event(ev),
                );
            }
            if let Some(mx) = max
                && a > mx
            {
                self.push(
                    Violation::new(
                        "BJ_BET_ABOVE_MAX",
                        Severity::Medium,
                        cite14,
                        format!("bet `{id}` of {a} is above the table maximum {mx}"),
                    )
                    .bet(&id)
                    .seat(seat)
                    .event(ev),
                );
            }
        }
        self.check_seat_max();
    }

    fn check_seat_max(&mut self) {
        let Some(mx) = self.cfg.max else { return };
        for si in 0..self.seats.len() {
            let (seat, total, n) = (
                self.seats[si].seat,
                self.seats[si].total,
                self.seats[si].n_box,
            );
            if n > 1 && total > mx {
                let v = Violation::new(
                    "BJ_SEAT_TOTAL_OVER_MAX",
                    Severity::Medium,
                    self.c(cite::R15_16),
                    format!("bets on seat {seat} total {total}, above the table maximum {mx}"),
                )
                .seat(seat);
                self.push(v);
            }
        }
    }

    /// r.45, r.47, r.48: which jackpot chips are jackpot bets. A chip outside these conditions
    /// is not accepted as a jackpot bet: it is returned (net 0) and wins nothing. The rules
    /// prescribe no consequence in words: this is a reading, and the findings say so.
    fn check_jackpot_chips(&mut self) {
        let Some(jp) = &self.cfg.jackpot else { return };
        let chip = jp.chip;
        for bi in 0..self.bets.len() {
            if self.bets[bi].kind != BetKind::Jackpot || self.bets[bi].withdrawn {
                continue;
            }
            let b = &self.bets[bi];
            let (seat, ev) = (b.seat, b.event);
            let bet: &'a Bet = b.bet;
            let id = &bet.id;
            let player = bet.player.as_deref();
            // r.45: only a player with a main bet (at that seat).
            let has_main = self.bets.iter().any(|m| {
                m.kind.is_box()
                    && !m.withdrawn
                    && m.seat == seat
                    && (player.is_none()
                        || m.bet.player.is_none()
                        || m.bet.player.as_deref() == player)
            });
            let mut problems: Vec<Violation> = Vec::new();
            if !has_main {
                problems.push(
                    Violation::new(
                        "BJ_JACKPOT_WITHOUT_MAIN_BET",
                        Severity::High,
                        self.c(cite::R45),
                        format!("jackpot chip `{id}` at seat {seat} has no main bet of its player: not a valid jackpot bet, chip returned"),
                    )
                    .review(),
                );
            }
            // r.40, r.47: exactly one chip of the preset amount per player per hand.
            let dup = self.bets[..bi].iter().any(|o| {
                o.kind == BetKind::Jackpot
                    && !o.withdrawn
                    && o.seat == seat
                    && o.bet.player.as_deref() == player
                    && o.jackpot_valid
            });
            let amount = self.bets[bi].amount;
            let chips = self.bets[bi].bet.chips;
            // A chip without a main bet (r.45) or a second chip for the same hand (r.47: "apenas
            // por uma ficha por cada jogador") is not a jackpot bet: returned. A chip of the
            // wrong amount or placed late is flagged and settled as played (not returned): the
            // rules prescribe no consequence (ARCHITECTURE.md conventions), as póquer sem
            // descarte's r.8/r.16.
            let returned = !has_main || dup;
            if amount != chip || chips.is_some_and(|c| c != 1) || dup {
                problems.push(
                    Violation::new(
                        "BJ_JACKPOT_WRONG_AMOUNT",
                        Severity::Medium,
                        self.c(cite::R40_47),
                        format!(
                            "jackpot bet `{id}` is {amount} cents{}{}; one chip of {chip} per player and hand: {}",
                            chips.filter(|&c| c != 1).map(|c| format!(" in {c} chips")).unwrap_or_default(),
                            if dup { ", a second chip for the same hand" } else { "" },
                            if dup { "chip returned" } else { "settled as played" }
                        ),
                    ),
                );
            }
            // r.48: placed before the deal ("jogo feito, nada mais", then the deal).
            let late_deal = self.deal_start.is_some_and(|d| d < ev);
            let late_call = self.no_more_bets.is_some_and(|n| n < ev);
            if late_deal || late_call {
                problems.push(Violation::new(
                    "BJ_JACKPOT_BET_LATE",
                    Severity::Medium,
                    self.c(cite::R48),
                    format!(
                        "jackpot chip `{id}` placed after {}: {}",
                        if late_deal {
                            "the deal began"
                        } else {
                            "\"jogo feito, nada mais\""
                        },
                        if returned {
                            "chip returned"
                        } else {
                            "settled as played"
                        }
                    ),
                ));
            }
            if !problems.is_empty() {
                self.bets[bi].jackpot_valid = !returned;
                for p in problems {
                    self.adj.violations.push(p.bet(id).seat(seat).event(ev));
                }
            }
        }
    }

    // ------------------------------------------------------------------ pass 2: play

    /// Pass 2: the events in order.
    pub fn play(&mut self, state: &mut BlackjackState) -> Result<(), RoundError> {
        let round = self.round;
        let mut first_card_seen = false;
        for (i, e) in round.events.iter().enumerate() {
            match &e.kind {
                EventKind::Card { to, card, face_up } => {
                    if matches!(to, Recipient::Ponto | Recipient::Banca | Recipient::Board) {
                        return Err(ev_err(
                            round,
                            i,
                            format!("`{to}` is not a blackjack card recipient"),
                        ));
                    }
                    if let Some((r, c)) = self.echo.take()
                        && r == *to
                        && c == *card
                    {
                        continue; // the re-reported reassigned card
                    }
                    if !first_card_seen && matches!(to, Recipient::Seat { .. } | Recipient::Dealer)
                    {
                        first_card_seen = true;
                        crate::shoe::round_starts(self, state, i);
                    }
                    crate::shoe::count_card(self, state, *card, i);
                    match to {
                        Recipient::Dealer => self.dealer_card(i, *card, *face_up),
                        Recipient::Seat { seat, hand } => {
                            self.seat_card(i, *seat, *hand, *card, *face_up)?
                        }
                        _ => {}
                    }
                }
                EventKind::Decision(d) => {
                    self.echo = None;
                    self.decision(i, d)?;
                }
                EventKind::Procedure {
                    name, value, seat, ..
                } => {
                    crate::shoe::procedure(self, state, i, name, value.as_deref(), *seat, e.at_ms)?;
                }
                EventKind::Role { role, .. } => match role.as_str() {
                    "fiscal_chefe" => self.fiscal_chefe = true,
                    "dealer" | "fiscal_banca" | "technician" => {}
                    other => {
                        return Err(ev_err(
                            round,
                            i,
                            format!(
                                "unknown role `{}` (dealer, fiscal_chefe, fiscal_banca, technician)",
                                other.chars().take(32).collect::<String>()
                            ),
                        ));
                    }
                },
                EventKind::Fault { code, .. } => match (self.cfg.online(), code.as_str()) {
                    (true, "malfunction") => {
                        self.malfunction.get_or_insert(i);
                    }
                    (true, "player_connection") => {
                        self.player_connection.get_or_insert(i);
                    }
                    (false, "shuffler_jam" | "damaged_card") => {}
                    (_, other) => {
                        return Err(ev_err(
                            round,
                            i,
                            format!(
                                "unknown fault `{}` ({})",
                                other.chars().take(32).collect::<String>(),
                                if self.cfg.online() {
                                    "malfunction, player_connection"
                                } else {
                                    "shuffler_jam, damaged_card"
                                }
                            ),
                        ));
                    }
                },
                EventKind::Void { reason } => {
                    self.void_event.get_or_insert((i, reason.as_str()));
                }
                EventKind::Pay { .. } => self.pays = true,
                EventKind::JackpotDisplay { value_cents } => self.displays.push((i, *value_cents)),
                EventKind::Bet(_)
                | EventKind::BetChanged { .. }
                | EventKind::BetWithdrawn { .. }
                | EventKind::NoMoreBets
                | EventKind::Collect { .. } => {}
                EventKind::Dice { .. } | EventKind::Ball { .. } | EventKind::Launch { .. } => {
                    return Err(ev_err(round, i, "not a blackjack event"));
                }
            }
        }
        self.finish_play(state);
        Ok(())
    }

    fn order(
        &mut self,
        kind: usize,
        i: usize,
        citation: &'static str,
        msg: impl FnOnce() -> String,
    ) {
        if self.flagged_order[kind] {
            return;
        }
        self.flagged_order[kind] = true;
        let v = Violation::new("BJ_DEAL_ORDER", Severity::High, citation, msg()).event(i);
        self.push(v);
    }

    #[inline]
    fn expected_len(&self) -> usize {
        match self.n_dealt {
            0 => 0,
            k => 2 * (k + 1),
        }
    }

    /// The recipient of the `p`-th initial card (r.17): seats in order, the up-card, seats in
    /// order, the hole card.
    #[inline]
    fn expected_at(&self, p: usize) -> Option<Recipient> {
        let k = self.n_dealt;
        if k == 0 || p >= 2 * (k + 1) {
            return None;
        }
        let j = p % (k + 1);
        if j == k {
            return Some(Recipient::Dealer);
        }
        self.dealt.get(j).map(|&s| Recipient::seat(s))
    }

    /// Compare an initial card with the expected deal (r.17).
    fn check_initial(&mut self, i: usize, to: Recipient) {
        let Some(p) = self.pos else { return };
        match self.expected_at(p).as_ref() {
            Some(&exp) if exp == to => self.pos = Some(p + 1),
            exp => {
                let exp = exp.copied();
                self.pos = None;
                let c = self.c(cite::R17);
                self.order(0, i, c, || match exp {
                    Some(e) => format!("initial card to {to}, expected {e} (seat order, up-card, seat order, hole card)"),
                    None => format!("initial card to {to} after the deal was complete"),
                });
            }
        }
    }

    /// A play event (decision or later card) while the initial deal is still incomplete, or
    /// after the dealer has begun drawing.
    fn check_play_order(&mut self, i: usize, seat: u8) {
        if let Some(p) = self.pos
            && p < self.expected_len()
        {
            let c = self.c(cite::R17);
            self.pos = None;
            self.order(0, i, c, || {
                format!("play at seat {seat} began before the initial deal was complete")
            });
        }
        if self.dealer_drew {
            let c = self.c(cite::R18);
            self.order(2, i, c, || {
                format!("seat {seat} played after the dealer had begun drawing")
            });
        }
        if seat < self.cur_seat {
            let c = self.c(cite::R18);
            let cur = self.cur_seat;
            self.order(1, i, c, || {
                format!("seat {seat} played after seat {cur}: players are asked in seat order")
            });
        } else {
            self.cur_seat = seat;
        }
    }

    fn dealer_card(&mut self, i: usize, card: Card, face_up: bool) {
        let n = self.dealer.len();
        if n < 2 {
            // Initial dealer card: up-card (face up) then hole card (face down), r.17.
            if n == 1 && face_up {
                match self.reg() {
                    // P217/2007 r.17: turned up while dealing -> discard, new card.
                    Regulation::P217 => {
                        self.hole_exposed = Some(i);
                        let v = Violation::new(
                            "BJ_HOLE_CARD_EXPOSED",
                            Severity::Low,
                            cite::R17.p217,
                            format!("the dealer's second card {card} was turned up while dealt: it goes to the discard and the dealer takes a new card"),
                        )
                        .event(i);
                        self.push(v);
                        return;
                    }
                    _ => {
                        let c = self.c(cite::R17);
                        self.order(3, i, c, || format!("the dealer's second card {card} was dealt face up (no remedy in this regulation; it counts)"));
                    }
                }
            }
            if n == 0 && !face_up {
                let c = self.c(cite::R17);
                self.order(3, i, c, || {
                    format!("the dealer's up-card {card} was dealt face down")
                });
            }
            if n == 1 && self.hole_exposed.is_some() {
                // The replacement: out of the expected sequence check (the slot is the hole).
            }
            self.check_initial(i, Recipient::Dealer);
            self.dealer.push(card);
            self.dealer_count.add(card);
            return;
        }
        // Unseen unrequested cards nobody asked for go to the dealer (r.18).
        while !self.held.is_empty() {
            let (h, _) = self.held.remove(0);
            self.dealer_draw(i, h, true);
            if h == card {
                // The record shows that card going to the dealer: it is the same card.
                return;
            }
        }
        self.dealer_draw(i, card, false);
    }

    /// Every hand of every seat has busted or surrendered (r.22).
    fn all_out(&self) -> bool {
        let mut any = false;
        for s in &self.seats {
            for h in s.hands.iter() {
                if h.cards.is_empty() {
                    continue;
                }
                any = true;
                if !(h.bust() || h.surrendered) {
                    return false;
                }
            }
        }
        any
    }

    fn dealer_draw(&mut self, i: usize, card: Card, from_held: bool) {
        self.dealer_drew = true;
        self.post_deal_card = true;
        if self.all_out() {
            let v = Violation::new(
                "BJ_DEALER_DREW_AFTER_ALL_OUT",
                Severity::High,
                self.c(cite::R22),
                format!("the dealer drew {card} although every player had busted or surrendered; the round had ended"),
            )
            .event(i);
            self.push(v);
            return;
        }
        if !must_draw(&self.dealer_count, self.cfg.hits_soft_17) {
            let t = self.dealer_count.dealer_total();
            let n = self.dealer.len();
            let mut v = Violation::new(
                "BJ_DEALER_DREW_ON_17",
                Severity::High,
                self.c(cite::R19_6A),
                format!(
                    "the dealer drew {card} on {t} with {n} cards{}: the card does not count",
                    if from_held {
                        " (an unrequested card passed to the dealer)"
                    } else {
                        ""
                    }
                ),
            )
            .event(i);
            if n > 2 || from_held {
                // r.19 is written for two cards; beyond (13.18) and for the r.18 card it is a
                // reading.
                v = v.review();
            }
            self.push(v);
            return;
        }
        self.dealer.push(card);
        self.dealer_count.add(card);
    }

    fn seat_card(
        &mut self,
        i: usize,
        seat: u8,
        hand: u8,
        card: Card,
        face_up: bool,
    ) -> Result<(), RoundError> {
        let Some(si) = self.seat_index(seat) else {
            self.flag_seat(seat, i);
            let c = self.c(cite::R17);
            self.order(3, i, c, || {
                format!("card {card} dealt to seat {seat}, which has no bet")
            });
            return Ok(());
        };
        let hi = usize::from(hand).wrapping_sub(1);
        if hi >= self.seats[si].hands.len() {
            return Err(ev_err(
                self.round,
                i,
                format!("card to seat {seat} hand {hand}, which does not exist"),
            ));
        }
        let initial = hi == 0
            && self.seats[si].hands.len() == 1
            && self.seats[si].hands[0].cards.len() < 2
            && self.seats[si].hands[0].pending == 0;
        if initial {
            if !face_up {
                let c = self.c(cite::R17);
                self.order(3, i, c, || {
                    format!("initial card {card} to seat {seat} dealt face down")
                });
            }
            self.check_initial(i, Recipient::seat(seat));
            self.add_card(si, 0, card, false);
            return Ok(());
        }
        self.post_deal_card = true;
        if self.seats[si].hands[hi].pending > 0 {
            self.check_play_order(i, seat);
            self.seats[si].hands[hi].pending -= 1;
            self.deliver(si, hi, card, i);
            return Ok(());
        }
        // r.18: a card the player did not ask for.
        let c = self.c(cite::R18);
        if face_up {
            let v = Violation::new(
                "BJ_CARD_DEALT_WITHOUT_REQUEST",
                Severity::High,
                c,
                format!("card {card} dealt to seat {seat} hand {hand} without a request and seen: annulled, it does not count"),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        } else {
            let v = Violation::new(
                "BJ_CARD_DEALT_WITHOUT_REQUEST",
                Severity::High,
                c,
                format!("card {card} drawn for seat {seat} hand {hand} without a request, unseen: it goes to the next player who asks for a card, else to the dealer"),
            )
            .seat(seat)
            .event(i);
            self.push(v);
            self.held.push((card, i));
        }
        Ok(())
    }

    /// Add a card to a hand (no checks) and to the seat's jackpot cards.
    #[inline]
    fn add_card(&mut self, si: usize, hi: usize, card: Card, after_deal: bool) {
        let s = &mut self.seats[si];
        let h = &mut s.hands[hi];
        h.cards.push(card);
        h.count.add(card);
        if h.doubled && after_deal {
            h.cards_after_double += 1;
        }
        if s.first.len() < 4 {
            s.first.push(card);
        }
    }

    /// A requested card reaches a hand: checks of r.18, r.26, r.29.
    fn deliver(&mut self, si: usize, hi: usize, card: Card, i: usize) {
        let seat = self.seats[si].seat;
        let h = &self.seats[si].hands[hi];
        let number = h.number;
        if h.doubled && h.cards_after_double >= 1 {
            let v = Violation::new(
                "BJ_EXTRA_CARD_AFTER_DOUBLE",
                Severity::High,
                self.c(cite::R29),
                format!("card {card} to seat {seat} hand {number} after its one double card"),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        } else if h.split_aces && h.cards.len() >= 2 {
            let v = Violation::new(
                "BJ_HIT_AFTER_SPLIT_ACES",
                Severity::High,
                self.c(cite::R26),
                format!("card {card} to split ace hand {number} at seat {seat}, which takes one card only"),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        } else if h.cards.len() >= 2 && (h.is_blackjack() || h.total() == 21) {
            let soft = !h.is_blackjack() && h.count.is_soft();
            let mut v = Violation::new(
                "BJ_HIT_ON_21",
                Severity::High,
                self.c(cite::R18),
                format!("card {card} given to seat {seat} hand {number} already at 21"),
            )
            .seat(seat)
            .event(i);
            if soft {
                v = v.review(); // a soft 21 may be counted 11 by the player (reading 13.4)
            }
            self.push(v);
        }
        self.add_card(si, hi, card, true);
    }

    /// A hand asks for a card: an unseen unrequested card waiting goes to it (r.18).
    fn request(&mut self, si: usize, hi: usize, i: usize) {
        if !self.held.is_empty() {
            let (card, _) = self.held.remove(0);
            let to = Recipient::Seat {
                seat: self.seats[si].seat,
                hand: self.seats[si].hands[hi].number,
            };
            self.deliver(si, hi, card, i);
            self.echo = Some((to, card));
        } else {
            self.seats[si].hands[hi].pending += 1;
        }
    }

    fn amount(&self, i: usize, d: &Decision) -> Result<Option<Cents>, RoundError> {
        match d.amount_cents {
            None => Ok(None),
            Some(a) if a <= 0 || a > rules_core::MAX_AMOUNT_CENTS => Err(ev_err(
                self.round,
                i,
                format!("decision amount_cents {a} must be positive and at most MAX_AMOUNT_CENTS"),
            )),
            Some(a) => Ok(Some(a)),
        }
    }

    fn decision(&mut self, i: usize, d: &Decision) -> Result<(), RoundError> {
        let round = self.round;
        let seat = d
            .seat
            .ok_or_else(|| ev_err(round, i, "decision without a seat"))?;
        let si = self.seat_index(seat).ok_or_else(|| {
            ev_err(
                round,
                i,
                format!("decision at seat {seat}, which has no bet"),
            )
        })?;
        let hi = usize::from(d.hand).wrapping_sub(1);
        if hi >= self.seats[si].hands.len() {
            return Err(ev_err(
                round,
                i,
                format!(
                    "decision on seat {seat} hand {}, which does not exist",
                    d.hand
                ),
            ));
        }
        let lead = self.seats[si].lead;
        let follower = match &d.bet_id {
            None => None,
            Some(id) => {
                let bi = self
                    .find_bet(id)
                    .ok_or_else(|| ev_err(round, i, format!("decision on unknown bet `{id}`")))?;
                if !self.bets[bi].kind.is_box() || self.bets[bi].seat != seat {
                    return Err(ev_err(
                        round,
                        i,
                        format!("bet `{id}` is not a box bet at seat {seat}"),
                    ));
                }
                if bi == lead { None } else { Some(bi) }
            }
        };
        let amount = self.amount(i, d)?;
        let Some(action) = parse_action(&d.action) else {
            return Err(ev_err(
                round,
                i,
                format!(
                    "unknown action `{}` (hit, stand, double, split, surrender, even_money)",
                    d.action.chars().take(32).collect::<String>()
                ),
            ));
        };
        match (action, follower) {
            (Action::Hit, None) => {
                self.check_play_order(i, seat);
                self.request(si, hi, i);
            }
            (Action::Stand, None) => {
                self.check_play_order(i, seat);
                self.stand(si, hi, i);
            }
            (Action::Double, None) => {
                self.check_play_order(i, seat);
                self.double(si, hi, i, amount);
            }
            (Action::Split, None) => {
                self.check_play_order(i, seat);
                self.split(si, hi, i, amount)?;
            }
            (Action::Surrender, None) => {
                self.check_play_order(i, seat);
                self.surrender(si, hi, i);
            }
            (Action::EvenMoney, None) => self.even_money(si, hi, i)?,
            (Action::Double, Some(f)) => self.follow_double(si, hi, f, i, amount)?,
            (Action::Split, Some(f)) => self.follow_split(si, hi, f, i, amount)?,
            (Action::Hit | Action::Stand | Action::Surrender | Action::EvenMoney, Some(_)) => {
                return Err(ev_err(
                    round,
                    i,
                    "complementary bets follow the titular's decisions (r.15): only split and double choices are recorded per follower",
                ));
            }
        }
        Ok(())
    }

    /// r.18: stand only above 11.
    fn stand(&mut self, si: usize, hi: usize, i: usize) {
        let seat = self.seats[si].seat;
        let h = &mut self.seats[si].hands[hi];
        h.stood = true;
        if !h.doubled
            && !h.split_aces
            && !h.is_blackjack()
            && h.cards.len() >= 2
            && h.total() <= 11
            && !h.stand_flagged
        {
            h.stand_flagged = true;
            let (t, n) = (h.total(), h.number);
            let v = Violation::new(
                "BJ_STOOD_ON_11_OR_LESS",
                Severity::Low,
                self.c(cite::R18),
                format!("seat {seat} hand {n} stood on {t}; standing requires more than 11"),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        }
    }

    /// r.29, r.31, r.32: double on two cards totalling 9, 10 or 11, one card, ace lock.
    fn double(&mut self, si: usize, hi: usize, i: usize, amount: Option<Cents>) {
        let seat = self.seats[si].seat;
        let lead = self.seats[si].lead;
        let h = &self.seats[si].hands[hi];
        let number = h.number;
        let two = h.cards.len() == 2;
        let hard = h.count.hard;
        let ok = two && (9..=11).contains(&hard) && !h.is_blackjack() && !h.doubled;
        let split_aces = h.split_aces;
        if !ok {
            let v = Violation::new(
                "BJ_DOUBLE_NOT_ALLOWED",
                Severity::Medium,
                self.c(cite::R29_31),
                format!(
                    "seat {seat} hand {number} doubled with {} cards totalling {hard}; doubling is on two cards totalling 9, 10 or 11",
                    h.cards.len()
                ),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        } else if split_aces {
            // Reading 13.6: whether a split ace may be doubled is unclear.
            let v = Violation::new(
                "BJ_DOUBLE_NOT_ALLOWED",
                Severity::Medium,
                self.c(cite::R26),
                format!("seat {seat} doubled split ace hand {number}: a split ace takes one card (r.26) though r.31 allows doubling split hands"),
            )
            .seat(seat)
            .event(i)
            .review();
            self.push(v);
        }
        let base = self.stake_of(lead, number).map_or(0, |s| s.base);
        let add = amount.unwrap_or(base);
        if add != base {
            let id = self.bets[lead].bet.id.clone();
            let v = Violation::new(
                "BJ_DOUBLE_AMOUNT_NOT_EQUAL",
                Severity::Medium,
                self.c(cite::R29),
                format!("seat {seat} hand {number} doubled with {add}, the bet is {base}"),
            )
            .bet(&id)
            .seat(seat)
            .event(i);
            self.push(v);
        }
        if let Some(st) = self.stake_mut(lead, number) {
            st.extra = st.extra.saturating_add(add);
        }
        let h = &mut self.seats[si].hands[hi];
        // r.32: A+8 / A+9 doubled as 9 / 10: that ace stays 1 to the end.
        if two && h.count.aces > 0 && (hard == 9 || hard == 10) {
            h.count.locked = 1;
        }
        h.doubled = true;
        self.request(si, hi, i);
    }

    #[inline]
    fn stake_of(&self, bi: usize, hand: u8) -> Option<&Stake> {
        self.bets.get(bi)?.stakes.iter().find(|s| s.hand == hand)
    }

    #[inline]
    fn stake_mut(&mut self, bi: usize, hand: u8) -> Option<&mut Stake> {
        self.bets
            .get_mut(bi)?
            .stakes
            .iter_mut()
            .find(|s| s.hand == hand)
    }

    /// r.30: a complementary bettor may double his own bet when the titular doubles.
    fn follow_double(
        &mut self,
        si: usize,
        hi: usize,
        f: usize,
        i: usize,
        amount: Option<Cents>,
    ) -> Result<(), RoundError> {
        let seat = self.seats[si].seat;
        let h = &self.seats[si].hands[hi];
        let number = h.number;
        let doubled = h.doubled;
        let id = self.bets[f].bet.id.clone();
        let Some(st) = self.stake_of(f, number).copied() else {
            return Err(ev_err(
                self.round,
                i,
                format!("bet `{id}` has no stake on seat {seat} hand {number}"),
            ));
        };
        if !doubled || st.extra > 0 {
            // Reading 13.19: a follower cannot double alone.
            let v = Violation::new(
                "BJ_DOUBLE_NOT_ALLOWED",
                Severity::Medium,
                self.c(cite::R30),
                format!("complementary bet `{id}` doubled on seat {seat} hand {number}, which the titular did not double"),
            )
            .bet(&id)
            .seat(seat)
            .event(i)
            .review();
            self.push(v);
        }
        let add = amount.unwrap_or(st.base);
        if add != st.base {
            let v = Violation::new(
                "BJ_DOUBLE_AMOUNT_NOT_EQUAL",
                Severity::Medium,
                self.c(cite::R30),
                format!(
                    "complementary bet `{id}` doubled with {add}, its bet is {}",
                    st.base
                ),
            )
            .bet(&id)
            .seat(seat)
            .event(i);
            self.push(v);
        }
        if let Some(s) = self.stake_mut(f, number) {
            s.extra = s.extra.saturating_add(add);
        }
        Ok(())
    }

    /// r.26, r.27: split two cards of the same value into two hands, each with a stake equal to
    /// the original bet; split aces take one card each.
    fn split(
        &mut self,
        si: usize,
        hi: usize,
        i: usize,
        amount: Option<Cents>,
    ) -> Result<(), RoundError> {
        let round = self.round;
        let seat = self.seats[si].seat;
        let lead = self.seats[si].lead;
        let n_hands = self.seats[si].hands.len();
        let h = &self.seats[si].hands[hi];
        let number = h.number;
        if h.cards.len() != 2 {
            return Err(ev_err(
                round,
                i,
                format!(
                    "split of seat {seat} hand {number}, which has {} cards (a split separates two)",
                    h.cards.len()
                ),
            ));
        }
        if n_hands >= 255 {
            return Err(ev_err(round, i, "too many split hands"));
        }
        let (a, b) = (h.cards[0], h.cards[1]);
        let was_split_ace = h.split_aces;
        let c26 = self.c(cite::R26);
        if !hand::same_value(a, b, true) {
            let v = Violation::new(
                "BJ_SPLIT_NOT_PAIR",
                Severity::Medium,
                c26,
                format!("seat {seat} split {a} {b}, which are not of the same value"),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        } else if hand::unlike_tens(a, b) {
            // Reading 13.5: "same value" seems to allow K+Q; flagged, not judged.
            let allowed = self.cfg.split_unlike_tens;
            let v = Violation::new(
                "BJ_SPLIT_NOT_PAIR",
                if allowed {
                    Severity::Info
                } else {
                    Severity::Medium
                },
                c26,
                format!(
                    "seat {seat} split {a} {b}: ten-value cards of different ranks ({})",
                    if allowed {
                        "allowed by the table's reading of r.26"
                    } else {
                        "the table reads r.26 as same rank"
                    }
                ),
            )
            .seat(seat)
            .event(i)
            .review();
            self.push(v);
        }
        if was_split_ace {
            // Reading 13.6: re-splitting a split ace is unclear (r.26 one card vs r.27).
            let v = Violation::new(
                "BJ_HIT_AFTER_SPLIT_ACES",
                Severity::Low,
                c26,
                format!("seat {seat} re-split split ace hand {number} ({a} {b})"),
            )
            .seat(seat)
            .event(i)
            .review();
            self.push(v);
        }
        let original = self.bets[lead].amount;
        let stake = amount.unwrap_or(original);
        if stake != original {
            let id = self.bets[lead].bet.id.clone();
            let v = Violation::new(
                "BJ_SPLIT_AMOUNT_NOT_EQUAL",
                Severity::Medium,
                c26,
                format!(
                    "seat {seat} split with a stake of {stake}; the original bet is {original}"
                ),
            )
            .bet(&id)
            .seat(seat)
            .event(i);
            self.push(v);
        }
        let new_number = (n_hands + 1) as u8;
        let aces = a.rank == Rank::Ace && b.rank == Rank::Ace;
        {
            let h = &mut self.seats[si].hands[hi];
            h.cards.truncate(1);
            h.count = hand::count(&h.cards);
            h.split = true;
            h.split_aces = aces;
            h.split_child = Some(new_number);
        }
        let mut nh = Hand {
            number: new_number,
            split: true,
            split_aces: aces,
            ..Hand::default()
        };
        nh.cards.push(b);
        nh.count.add(b);
        self.seats[si].hands.push(nh);
        if !self.bets[lead].withdrawn {
            self.bets[lead].stakes.push(Stake {
                hand: new_number,
                base: stake,
                extra: 0,
            });
        }
        self.request(si, hi, i);
        let nhi = self.seats[si].hands.len() - 1;
        self.request(si, nhi, i);
        Ok(())
    }

    /// r.28: a complementary bettor may add an equal stake on the titular's second hand.
    fn follow_split(
        &mut self,
        si: usize,
        hi: usize,
        f: usize,
        i: usize,
        amount: Option<Cents>,
    ) -> Result<(), RoundError> {
        let round = self.round;
        let seat = self.seats[si].seat;
        let h = &self.seats[si].hands[hi];
        let number = h.number;
        let id = self.bets[f].bet.id.clone();
        let Some(child) = h.split_child else {
            return Err(ev_err(
                round,
                i,
                format!(
                    "bet `{id}` follows a split of seat {seat} hand {number}, which was not split"
                ),
            ));
        };
        if self.stake_of(f, number).is_none() || self.stake_of(f, child).is_some() {
            return Err(ev_err(
                round,
                i,
                format!(
                    "bet `{id}` cannot follow the split of hand {number} (no stake there, or already followed)"
                ),
            ));
        }
        let own = self.bets[f].amount;
        let stake = amount.unwrap_or(own);
        if stake != own {
            let v = Violation::new(
                "BJ_SPLIT_AMOUNT_NOT_EQUAL",
                Severity::Medium,
                self.c(cite::R28),
                format!(
                    "complementary bet `{id}` followed the split with {stake}; its bet is {own}"
                ),
            )
            .bet(&id)
            .seat(seat)
            .event(i);
            self.push(v);
        }
        self.bets[f].stakes.push(Stake {
            hand: child,
            base: stake,
            extra: 0,
        });
        Ok(())
    }

    /// r.36: surrender on the first two cards, not against an ace; P1364/2001 preamble: before
    /// the dealer deals any additional card.
    fn surrender(&mut self, si: usize, hi: usize, i: usize) {
        let seat = self.seats[si].seat;
        let up_ace = self.dealer.first().is_some_and(|c| c.rank == Rank::Ace);
        let h = &self.seats[si].hands[hi];
        let number = h.number;
        let drew = h.cards.len() != 2 || h.split || h.doubled;
        if up_ace {
            let v = Violation::new(
                "BJ_SURRENDER_VS_ACE",
                Severity::Medium,
                self.c(cite::R36),
                format!("seat {seat} surrendered against the dealer's ace"),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        }
        if drew {
            let v = Violation::new(
                "BJ_SURRENDER_AFTER_DRAW",
                Severity::Medium,
                self.c(cite::R36_TIMING),
                format!(
                    "seat {seat} hand {number} surrendered after drawing, splitting or doubling"
                ),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        } else if self.reg() == Regulation::P1364 && self.post_deal_card {
            // P1364/2001 preamble: only before the dealer deals any additional card; whether
            // a card to another seat counts is unclear (13.7).
            let v = Violation::new(
                "BJ_SURRENDER_AFTER_DRAW",
                Severity::Medium,
                self.c(cite::R36_TIMING),
                format!("seat {seat} surrendered after the dealer had dealt an additional card to another hand"),
            )
            .seat(seat)
            .event(i)
            .review();
            self.push(v);
        }
        self.seats[si].hands[hi].surrendered = true;
    }

    /// r.34: even money for a blackjack against an ace.
    fn even_money(&mut self, si: usize, hi: usize, i: usize) -> Result<(), RoundError> {
        let seat = self.seats[si].seat;
        if !self.seats[si].hands[hi].is_blackjack() {
            return Err(ev_err(
                self.round,
                i,
                format!("even money at seat {seat}, whose hand is not a blackjack"),
            ));
        }
        let up_ace = self.dealer.first().is_some_and(|c| c.rank == Rank::Ace);
        if !up_ace {
            let v = Violation::new(
                "BJ_EVEN_MONEY_NOT_ACE",
                Severity::Medium,
                self.c(cite::R34),
                format!(
                    "seat {seat} took even money with the dealer's up-card {}",
                    self.dealer
                        .first()
                        .map_or("none".to_string(), |c| c.to_string())
                ),
            )
            .seat(seat)
            .event(i);
            self.push(v);
        }
        self.seats[si].hands[hi].even_money = true;
        Ok(())
    }

    /// End of the record: cards still waiting, incomplete deals, implicit stands, the dealer's
    /// final total.
    fn finish_play(&mut self, state: &mut BlackjackState) {
        let last = self.round.events.len().saturating_sub(1);
        while !self.held.is_empty() && self.dealer.len() >= 2 {
            let (h, i) = self.held.remove(0);
            // Nobody asked: the card is for the dealer (r.18) if he may draw.
            if must_draw(&self.dealer_count, self.cfg.hits_soft_17) && !self.all_out() {
                self.dealer.push(h);
                self.dealer_count.add(h);
            } else {
                let _ = i;
            }
        }
        // An interrupted online round (r.27) is judged by the void rules, not the deal order.
        let interrupted = self.malfunction.is_some();
        if let Some(p) = self.pos
            && p > 0
            && p < self.expected_len()
            && !interrupted
        {
            let c = self.c(cite::R17);
            self.order(0, last, c, || "the initial deal is incomplete".to_string());
        }
        for si in 0..self.seats.len() {
            let seat = self.seats[si].seat;
            for hi in 0..self.seats[si].hands.len() {
                let h = &self.seats[si].hands[hi];
                if h.cards.len() == 1 && !h.surrendered && !interrupted {
                    let n = h.number;
                    let c = self.c(cite::R17);
                    self.order(3, last, c, || {
                        format!("seat {seat} hand {n} ended with one card")
                    });
                }
                let h = &self.seats[si].hands[hi];
                if self.dealer.len() >= 2
                    && !interrupted
                    && !h.stand_flagged
                    && !h.doubled
                    && !h.split_aces
                    && !h.surrendered
                    && !h.even_money
                    && !h.is_blackjack()
                    && h.cards.len() >= 2
                    && h.total() <= 11
                {
                    let (n, t) = (h.number, h.total());
                    let v = Violation::new(
                        "BJ_STOOD_ON_11_OR_LESS",
                        Severity::Low,
                        self.c(cite::R18),
                        format!(
                            "seat {seat} hand {n} stopped on {t}; standing requires more than 11"
                        ),
                    )
                    .seat(seat);
                    self.push(v);
                    self.seats[si].hands[hi].stand_flagged = true;
                }
            }
        }
        if self.dealer.len() >= 2
            && !interrupted
            && self.live_hands()
            && must_draw(&self.dealer_count, self.cfg.hits_soft_17)
        {
            let t = self.dealer_count.dealer_total();
            let v = Violation::new(
                "BJ_DEALER_STOOD_BELOW_17",
                Severity::High,
                self.c(cite::R19),
                format!("the dealer stopped on {t} while players were still in"),
            );
            self.push(v);
        }
        crate::shoe::round_ends(self, state);
    }

    /// Some hand's result depends on the dealer's total (r.19, r.22; reading 13.17).
    pub fn live_hands(&self) -> bool {
        self.seats.iter().flat_map(|s| s.hands.iter()).any(|h| {
            !h.cards.is_empty() && !h.bust() && !h.surrendered && !h.even_money && !h.is_blackjack()
        })
    }

    pub fn dealer_blackjack(&self) -> bool {
        hand::is_ace_ten(self.dealer.get(..2).unwrap_or(&[]))
    }

    pub fn id_of(&self, bi: usize) -> &Id {
        &self.bets[bi].bet.id
    }

    pub fn shuffler(&self) -> Shuffler {
        self.cfg.shuffler
    }
}
