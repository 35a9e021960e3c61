//! The round as played: bets, the deal, the players' decisions, the faults (P217/2007 T.I
//! C.III S.II r.1, r.5, r.13-r.17, r.19; P461/2001 alike).
//!
//! * r.16: antes before the deal, within the limits; jackpot chips before "Jogo feito. Nada
//!   mais." (P217: only with an ante); by hand the cards go one at a time face down from the
//!   dealer's left, the bank last, five rounds, the bank's fifth card face up; with a shuffler
//!   five at a time to each player, then five to the bank; no cut with a shuffler.
//! * r.17: each player passes ("passo": the ante is lost, irreversibly) or calls ("vou": a
//!   second bet of twice the ante); a player who shows his cards, or a passing player who
//!   uncovers them, loses his bet.
//! * r.19: any error in dealing (wrong number of cards, a card wrongly face up) annuls the whole
//!   round, unless the dealer turned up one of his own cards before the last: that card becomes
//!   the bank's open card.

use rules_core::{
    Adjudication, Bet, Card, Cents, EventKind, Recipient, Round, RoundError, Severity, Violation,
};

use crate::cite;
use crate::config::PsdConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ante,
    Call,
    Jackpot,
}

#[derive(Clone, Debug)]
pub struct BetRec<'r> {
    pub bet: &'r Bet,
    pub event: usize,
    pub kind: Kind,
    pub seat: u8,
    pub amount: Cents,
    pub withdrawn: bool,
    /// Jackpot: accepted as a jackpot bet. Call: not placed after a pass.
    pub valid: bool,
    pub reading: Option<&'static str>,
}

/// A seat's hand and choices.
#[derive(Clone, Debug)]
pub struct Seat {
    pub seat: u8,
    pub cards: [Card; 5],
    pub n: u32,
    pub face_up: bool,
    pub ante: Option<usize>,
    pub call: Option<usize>,
    pub passed: bool,
    pub forfeited: Option<usize>,
}

const FILL: Card = Card::new(rules_core::Rank::Two, rules_core::Suit::Spades);

pub struct Ctx<'a> {
    pub cfg: &'a PsdConfig,
    pub round: &'a Round,
    pub adj: Adjudication,
    pub bets: Vec<BetRec<'a>>,
    pub seats: Vec<Seat>,
    pub dealer: [Card; 5],
    pub dealer_n: u32,
    /// Dealer cards dealt face up, by position (0-based).
    pub dealer_up: u32,
    pub dealer_up_pos: u32,
    pub deal_start: Option<usize>,
    pub no_more_bets: Option<usize>,
    pub misdeal: Option<(usize, String)>,
    pub void_event: Option<usize>,
    pub pays: bool,
    pub displays: Vec<(usize, Cents)>,
    seen: u64,
    expected: Vec<Recipient>,
    pos: Option<usize>,
    order_flagged: bool,
}

fn err(round: &Round, i: usize, m: impl Into<String>) -> RoundError {
    RoundError::event(round, i, m)
}

impl<'a> Ctx<'a> {
    pub fn new(cfg: &'a PsdConfig, round: &'a Round) -> Ctx<'a> {
        Ctx {
            cfg,
            round,
            adj: Adjudication::new(rules_core::GameId::PokerSemDescarte, round.round_id.clone()),
            bets: Vec::with_capacity(24),
            seats: Vec::with_capacity(8),
            dealer: [FILL; 5],
            dealer_n: 0,
            dealer_up: 0,
            dealer_up_pos: 0,
            deal_start: None,
            no_more_bets: None,
            misdeal: None,
            void_event: None,
            pays: false,
            displays: Vec::new(),
            seen: 0,
            expected: Vec::new(),
            pos: Some(0),
            order_flagged: false,
        }
    }

    pub fn c(&self, c: cite::Cite) -> &'static str {
        self.cfg.c(c)
    }

    pub fn push(&mut self, v: Violation) {
        self.adj.violations.push(v);
    }

    fn find_bet(&self, id: &str) -> Option<usize> {
        self.bets.iter().position(|b| {
            b.bet.id.len() == id.len() && b.bet.id.bytes().zip(id.bytes()).all(|(x, y)| x == y)
        })
    }

    pub fn seat_index(&self, seat: u8) -> Option<usize> {
        self.seats.iter().position(|s| s.seat == seat)
    }

    fn seat_mut(&mut self, seat: u8) -> usize {
        match self.seat_index(seat) {
            Some(i) => i,
            None => {
                self.seats.push(Seat {
                    seat,
                    cards: [FILL; 5],
                    n: 0,
                    face_up: false,
                    ante: None,
                    call: None,
                    passed: false,
                    forfeited: None,
                });
                self.seats.len() - 1
            }
        }
    }

    fn set_misdeal(&mut self, i: usize, why: impl FnOnce() -> String) {
        if self.misdeal.is_none() {
            self.misdeal = Some((i, why()));
        }
    }

    /// Walk the record.
    pub fn walk(&mut self) -> Result<(), RoundError> {
        let round = self.round;
        for (i, e) in round.events.iter().enumerate() {
            match &e.kind {
                EventKind::Bet(b) => self.bet(i, b)?,
                EventKind::BetChanged {
                    bet_id,
                    amount_cents,
                } => {
                    let bi = self.find_bet(bet_id).ok_or_else(|| {
                        err(round, i, format!("bet_changed on unknown bet `{bet_id}`"))
                    })?;
                    rules_core::check_stake(round, bet_id, *amount_cents)?;
                    self.bets[bi].amount = *amount_cents;
                    self.late(bi, i);
                }
                EventKind::BetWithdrawn { bet_id } => {
                    let bi = self.find_bet(bet_id).ok_or_else(|| {
                        err(round, i, format!("bet_withdrawn on unknown bet `{bet_id}`"))
                    })?;
                    self.bets[bi].withdrawn = true;
                    self.late(bi, i);
                }
                EventKind::NoMoreBets => {
                    self.no_more_bets.get_or_insert(i);
                }
                EventKind::Card { to, card, face_up } => self.card(i, *to, *card, *face_up)?,
                EventKind::Decision(d) => {
                    let seat = d
                        .seat
                        .ok_or_else(|| err(round, i, "decision without a seat"))?;
                    let si = self
                        .seat_index(seat)
                        .filter(|&s| self.seats[s].ante.is_some())
                        .ok_or_else(|| {
                            err(
                                round,
                                i,
                                format!("decision at seat {seat}, which has no ante"),
                            )
                        })?;
                    match d.action.as_str() {
                        "pass" => {
                            if self.seats[si].call.is_some() || self.seats[si].passed {
                                let v = Violation::new(
                                    "PSD_PASS_REVERSED",
                                    Severity::High,
                                    self.c(cite::R17),
                                    format!("seat {seat} passed after having already decided; the first decision stands"),
                                )
                                .seat(seat)
                                .event(i);
                                self.push(v);
                            } else {
                                self.seats[si].passed = true;
                            }
                        }
                        other => {
                            return Err(err(
                                round,
                                i,
                                format!(
                                    "unknown action `{}` (pass; the call is a `call` bet)",
                                    other.chars().take(32).collect::<String>()
                                ),
                            ));
                        }
                    }
                }
                EventKind::Fault { code, seat, .. } => match code.as_str() {
                    "player_exposed_cards" => {
                        let seat = seat
                            .ok_or_else(|| err(round, i, "player_exposed_cards needs the seat"))?;
                        let si = self
                            .seat_index(seat)
                            .ok_or_else(|| err(round, i, format!("seat {seat} has no hand")))?;
                        self.seats[si].forfeited.get_or_insert(i);
                    }
                    "card_exposed" => {
                        self.set_misdeal(i, || "a card appeared face up while dealing".to_string())
                    }
                    other => {
                        return Err(err(
                            round,
                            i,
                            format!(
                                "unknown fault `{}` (player_exposed_cards, card_exposed)",
                                other.chars().take(32).collect::<String>()
                            ),
                        ));
                    }
                },
                EventKind::Procedure { name, .. } => match name.as_str() {
                    "cut" => {
                        if self.cfg.shuffler {
                            let v = Violation::new(
                                "PSD_CUT_WITH_SHUFFLER",
                                Severity::Low,
                                self.c(cite::R16A),
                                "cut recorded on a table dealing from an automatic shuffler",
                            )
                            .event(i);
                            self.push(v);
                        }
                    }
                    "shuffle" | "cards_spread" | "deck_change" | "look_at_cards"
                    | "reveal_dealer" => {}
                    other => {
                        return Err(err(
                            round,
                            i,
                            format!(
                                "unknown procedure `{}` (shuffle, cut, cards_spread, deck_change, look_at_cards, reveal_dealer)",
                                other.chars().take(32).collect::<String>()
                            ),
                        ));
                    }
                },
                EventKind::Role { role, .. } => {
                    if !matches!(role.as_str(), "dealer" | "fiscal_banca" | "fiscal_chefe") {
                        return Err(err(
                            round,
                            i,
                            "unknown role (dealer, fiscal_banca, fiscal_chefe)",
                        ));
                    }
                }
                EventKind::Void { .. } => {
                    self.void_event.get_or_insert(i);
                }
                EventKind::Pay { .. } => self.pays = true,
                EventKind::Collect { .. } => {}
                EventKind::JackpotDisplay { value_cents } => self.displays.push((i, *value_cents)),
                EventKind::Dice { .. } | EventKind::Ball { .. } | EventKind::Launch { .. } => {
                    return Err(err(round, i, "not a póquer sem descarte event"));
                }
            }
        }
        self.finish();
        Ok(())
    }

    fn late(&mut self, bi: usize, i: usize) {
        let b = &self.bets[bi];
        if b.kind == Kind::Ante && self.deal_start.is_some_and(|d| d < i) {
            let v = Violation::new(
                "PSD_LATE_BET",
                Severity::Medium,
                self.c(cite::R16),
                format!("ante `{}` changed after the deal began", b.bet.id),
            )
            .bet(&b.bet.id)
            .seat(b.seat)
            .event(i);
            self.push(v);
        }
    }

    fn bet(&mut self, i: usize, b: &'a Bet) -> Result<(), RoundError> {
        let round = self.round;
        if self.find_bet(&b.id).is_some() {
            return Err(RoundError::bet(round, &b.id, "duplicate bet id"));
        }
        rules_core::check_stake(round, &b.id, b.amount_cents)?;
        if !b.selection.is_empty() || !b.attrs.is_empty() {
            return Err(RoundError::bet(
                round,
                &b.id,
                "póquer sem descarte bets have no selection or attributes",
            ));
        }
        let kind = match b.bet_type.as_str() {
            "ante" => Kind::Ante,
            "call" => Kind::Call,
            "jackpot" => Kind::Jackpot,
            other => {
                return Err(RoundError::bet(
                    round,
                    &b.id,
                    format!(
                        "unknown bet_type `{}` (ante, call, jackpot)",
                        other.chars().take(32).collect::<String>()
                    ),
                ));
            }
        };
        let late_call = self.no_more_bets.is_some_and(|n| n < i);
        let late_deal = self.deal_start.is_some_and(|d| d < i);
        let mut valid = true;
        let seat = match kind {
            Kind::Ante | Kind::Jackpot => {
                if b.on_bet.is_some() && kind == Kind::Ante {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "an ante rides on no other bet",
                    ));
                }
                b.seat
                    .ok_or_else(|| RoundError::bet(round, &b.id, "bet without a seat"))?
            }
            Kind::Call => {
                let t = b
                    .on_bet
                    .as_deref()
                    .and_then(|t| self.find_bet(t))
                    .filter(|&t| self.bets[t].kind == Kind::Ante)
                    .ok_or_else(|| {
                        RoundError::bet(round, &b.id, "a call needs on_bet = the seat's ante")
                    })?;
                let seat = self.bets[t].seat;
                if b.seat.is_some_and(|s| s != seat) {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "seat differs from the ante's",
                    ));
                }
                seat
            }
        };
        let si = self.seat_mut(seat);
        match kind {
            Kind::Ante => {
                if self.seats[si].ante.is_some() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        format!("seat {seat} already has an ante"),
                    ));
                }
                self.seats[si].ante = Some(self.bets.len());
                if late_call || late_deal {
                    let v = Violation::new(
                        "PSD_LATE_BET",
                        Severity::Medium,
                        self.c(cite::R16),
                        format!(
                            "ante `{}` placed after {}",
                            b.id,
                            if late_deal {
                                "the deal began"
                            } else {
                                "\"Jogo feito. Nada mais.\""
                            }
                        ),
                    )
                    .bet(&b.id)
                    .seat(seat)
                    .event(i);
                    self.push(v);
                }
            }
            Kind::Call => {
                if self.seats[si].call.is_some() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        format!("seat {seat} already called"),
                    ));
                }
                if self.seats[si].passed {
                    valid = false;
                    let v = Violation::new(
                        "PSD_PASS_REVERSED",
                        Severity::High,
                        self.c(cite::R17),
                        format!("seat {seat} called after passing; passing is irreversible: the call is refused"),
                    )
                    .bet(&b.id)
                    .seat(seat)
                    .event(i);
                    self.push(v);
                } else {
                    self.seats[si].call = Some(self.bets.len());
                }
            }
            Kind::Jackpot => {
                if self.cfg.jackpot.is_none() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "the table has no jackpot configured",
                    ));
                }
                if late_call || late_deal {
                    let v = Violation::new(
                        "PSD_JACKPOT_BET_LATE",
                        Severity::Medium,
                        self.c(cite::R16),
                        format!(
                            "jackpot chip `{}` placed after {}",
                            b.id,
                            if late_deal {
                                "the deal began"
                            } else {
                                "\"Jogo feito. Nada mais.\""
                            }
                        ),
                    )
                    .bet(&b.id)
                    .seat(seat)
                    .event(i);
                    self.push(v);
                }
            }
        }
        self.bets.push(BetRec {
            bet: b,
            event: i,
            kind,
            seat,
            amount: b.amount_cents,
            withdrawn: false,
            valid,
            reading: None,
        });
        if kind == Kind::Ante && late_deal {
            // The late ante is flagged (PSD_LATE_BET); if the seat's cards can still come in
            // r.16's order, that order now includes it.
            self.admit_late_ante(seat);
        }
        Ok(())
    }

    fn card(
        &mut self,
        i: usize,
        to: Recipient,
        card: Card,
        face_up: bool,
    ) -> Result<(), RoundError> {
        let bit = 1u64 << card.index();
        if self.seen & bit != 0 {
            let v = Violation::new(
                "PSD_DUPLICATE_CARD",
                Severity::High,
                self.c(cite::R1),
                format!("{card} appears twice in the round; the game uses one deck"),
            )
            .event(i);
            self.push(v);
        }
        self.seen |= bit;
        match to {
            Recipient::Burn | Recipient::Discard => return Ok(()),
            Recipient::Seat { hand, .. } if hand != 1 => {
                return Err(err(
                    self.round,
                    i,
                    "póquer sem descarte hands are `seat:N` (no split hands)",
                ));
            }
            Recipient::Seat { .. } | Recipient::Dealer => {}
            other => {
                return Err(err(
                    self.round,
                    i,
                    format!("`{other}` is not a póquer sem descarte recipient"),
                ));
            }
        }
        if self.deal_start.is_none() {
            self.deal_start = Some(i);
            self.build_expected();
        }
        // r.16: the expected dealing pattern.
        if let Some(p) = self.pos {
            if self.expected.get(p) == Some(&to) {
                self.pos = Some(p + 1);
            } else {
                self.pos = None;
                if !self.order_flagged {
                    self.order_flagged = true;
                    let exp = self
                        .expected
                        .get(p)
                        .map_or("no further card".to_string(), |e| e.to_string());
                    let v = Violation::new(
                        "PSD_DEAL_ORDER",
                        Severity::High,
                        self.c(cite::R16),
                        format!(
                            "card {} of the deal went to {to}, expected {exp} ({})",
                            p + 1,
                            if self.cfg.shuffler {
                                "five at a time, the bank last"
                            } else {
                                "one at a time from the dealer's left, the bank last"
                            }
                        ),
                    )
                    .event(i);
                    self.push(v);
                }
            }
        }
        match to {
            Recipient::Dealer => {
                let n = self.dealer_n as usize;
                if n < 5 {
                    self.dealer[n] = card;
                }
                if face_up {
                    self.dealer_up += 1;
                    self.dealer_up_pos = self.dealer_n;
                }
                self.dealer_n += 1;
            }
            Recipient::Seat { seat, .. } => {
                let si = self.seat_mut(seat);
                let s = &mut self.seats[si];
                if (s.n as usize) < 5 {
                    s.cards[s.n as usize] = card;
                }
                s.n += 1;
                if face_up {
                    s.face_up = true;
                    self.set_misdeal(i, || {
                        format!("a card of seat {seat} appeared face up while dealing")
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// An ante placed after the deal began (already a PSD_LATE_BET): one breach, one finding.
    /// If the cards dealt so far are also the start of r.16's order with this seat in it (its
    /// turn has not passed), that is the expected order from now on, so cards that then follow
    /// r.16 exactly are no PSD_DEAL_ORDER; otherwise the order stays as it was.
    fn admit_late_ante(&mut self, seat: u8) {
        let Some(p) = self.pos else { return };
        let old = std::mem::take(&mut self.expected);
        self.build_expected();
        let fits = self.expected.len() >= p
            && self.expected[..p] == old[..p]
            && self.expected.contains(&Recipient::seat(seat));
        if !fits {
            self.expected = old;
        }
    }

    fn build_expected(&mut self) {
        let mut seats: Vec<u8> = self
            .seats
            .iter()
            .filter(|s| s.ante.is_some_and(|a| !self.bets[a].withdrawn))
            .map(|s| s.seat)
            .collect();
        seats.sort_unstable();
        if self.cfg.shuffler {
            for &s in &seats {
                for _ in 0..5 {
                    self.expected.push(Recipient::seat(s));
                }
            }
            for _ in 0..5 {
                self.expected.push(Recipient::Dealer);
            }
        } else {
            for _ in 0..5 {
                for &s in &seats {
                    self.expected.push(Recipient::seat(s));
                }
                self.expected.push(Recipient::Dealer);
            }
        }
    }

    /// After the record: misdeal evidence (r.19), dealer exposure, table checks.
    fn finish(&mut self) {
        let last = self.round.events.len().saturating_sub(1);
        // r.19: wrong number of cards.
        if self.deal_start.is_some() {
            for si in 0..self.seats.len() {
                let s = &self.seats[si];
                let active = s.ante.is_some_and(|a| !self.bets[a].withdrawn);
                let want = if active { 5 } else { 0 };
                if s.n != want {
                    let (seat, n) = (s.seat, s.n);
                    self.set_misdeal(last, || {
                        format!("seat {seat} received {n} cards, not {want}")
                    });
                }
            }
            if self.dealer_n != 5 {
                let n = self.dealer_n;
                self.set_misdeal(last, || format!("the bank received {n} cards, not 5"));
            }
            match self.dealer_up {
                0 if self.dealer_n == 5 => {
                    let v = Violation::new(
                        "PSD_DEAL_ORDER",
                        Severity::High,
                        self.c(cite::R16),
                        "the bank's fifth card was not dealt face up",
                    );
                    self.push(v);
                }
                1 if self.dealer_up_pos < 4 && self.dealer_n == 5 => {
                    let p = self.dealer_up_pos + 1;
                    let v = Violation::new(
                        "PSD_DEALER_CARD_EXPOSED_EARLY",
                        Severity::Low,
                        self.c(cite::R19),
                        format!(
                            "the dealer turned up his card {p} before the last: it is the bank's open card, the round stands"
                        ),
                    );
                    self.push(v);
                }
                n if n >= 2 => {
                    self.set_misdeal(last, || format!("{n} of the bank's cards appeared face up"));
                }
                _ => {}
            }
        }
        // r.5: players and boxes.
        let players = self
            .seats
            .iter()
            .filter(|s| s.ante.is_some_and(|a| !self.bets[a].withdrawn))
            .count();
        let limit = self.cfg.seats.min(7) as usize;
        let outside = self
            .seats
            .iter()
            .any(|s| s.ante.is_some() && (s.seat == 0 || s.seat > self.cfg.seats));
        if players > limit || outside {
            let v = Violation::new(
                "PSD_TOO_MANY_PLAYERS",
                Severity::Medium,
                self.c(cite::R5),
                format!(
                    "{players} players at a table of {} boxes (at most 7)",
                    self.cfg.seats
                ),
            );
            self.push(v);
        }
        let mut flagged: Vec<&str> = Vec::new();
        for (k, a) in self.bets.iter().enumerate() {
            if a.kind != Kind::Ante || a.withdrawn {
                continue;
            }
            let Some(p) = a.bet.player.as_deref() else {
                continue;
            };
            if flagged.contains(&p) {
                continue;
            }
            if self.bets[k + 1..].iter().any(|o| {
                o.kind == Kind::Ante
                    && !o.withdrawn
                    && o.seat != a.seat
                    && o.bet.player.as_deref() == Some(p)
            }) {
                flagged.push(p);
            }
        }
        for p in flagged {
            let v = Violation::new(
                "PSD_MULTIPLE_BOXES",
                Severity::Medium,
                self.c(cite::R5),
                format!("player `{p}` plays more than one box"),
            );
            self.adj.violations.push(v);
        }
        // r.13, r.16: ante limits; r.17: call = 2 x ante; jackpot chips (r.8, r.16).
        for bi in 0..self.bets.len() {
            let b = &self.bets[bi];
            if b.withdrawn {
                continue;
            }
            let (a, seat, ev) = (b.amount, b.seat, b.event);
            match b.kind {
                Kind::Ante => {
                    let (min, max) = (self.cfg.min, self.cfg.max);
                    if a < min || a > max {
                        let id = b.bet.id.clone();
                        let (code, what) = if a < min {
                            ("PSD_ANTE_BELOW_MIN", "below the table minimum")
                        } else {
                            ("PSD_ANTE_ABOVE_MAX", "above the table maximum")
                        };
                        let v = Violation::new(
                            code,
                            Severity::Medium,
                            self.c(cite::R13_16),
                            format!("ante `{id}` of {a} is {what} ({min}-{max})"),
                        )
                        .bet(&id)
                        .seat(seat)
                        .event(ev);
                        self.push(v);
                    }
                }
                Kind::Call => {
                    let ante = self
                        .seat_index(seat)
                        .and_then(|s| self.seats[s].ante)
                        .map_or(0, |x| self.bets[x].amount);
                    if a != ante.saturating_mul(2) {
                        let id = b.bet.id.clone();
                        let v = Violation::new(
                            "PSD_CALL_NOT_DOUBLE_ANTE",
                            Severity::Medium,
                            self.c(cite::R17),
                            format!("second bet `{id}` of {a} is not twice the ante {ante}"),
                        )
                        .bet(&id)
                        .seat(seat)
                        .event(ev);
                        self.push(v);
                    }
                }
                Kind::Jackpot => {
                    let Some(j) = &self.cfg.jackpot else { continue };
                    let chip = j.chip;
                    let id = b.bet.id.clone();
                    let chips = b.bet.chips;
                    if a != chip || chips.is_some_and(|c| c != 1) {
                        let v = Violation::new(
                            "PSD_JACKPOT_WRONG_AMOUNT",
                            Severity::Medium,
                            self.c(cite::R8),
                            format!("jackpot bet `{id}` is {a} cents; the jackpot bet is one chip of {chip}"),
                        )
                        .bet(&id)
                        .seat(seat)
                        .event(ev);
                        self.push(v);
                    }
                    // P217 r.16: only players with an ante. The chip is then not a jackpot bet
                    // and is returned (reading: the rule states no consequence).
                    if self.cfg.regulation == cite::Regulation::P217 {
                        let has_ante = self
                            .seat_index(seat)
                            .and_then(|s| self.seats[s].ante)
                            .is_some_and(|x| !self.bets[x].withdrawn);
                        if !has_ante {
                            self.bets[bi].valid = false;
                            let v = Violation::new(
                                "PSD_JACKPOT_WITHOUT_ANTE",
                                Severity::High,
                                cite::R16.p217,
                                format!("jackpot chip `{id}` at seat {seat} without an ante: not a jackpot bet, chip returned"),
                            )
                            .bet(&id)
                            .seat(seat)
                            .event(ev)
                            .review();
                            self.push(v);
                        }
                    }
                }
            }
        }
        // r.17: exposed cards.
        for si in 0..self.seats.len() {
            if let Some(i) = self.seats[si].forfeited {
                let seat = self.seats[si].seat;
                let v = Violation::new(
                    "PSD_PLAYER_EXPOSED_CARDS",
                    Severity::Medium,
                    self.c(cite::R17),
                    format!("seat {seat} showed or uncovered his cards: his bet is forfeited"),
                )
                .seat(seat)
                .event(i);
                self.push(v);
            }
        }
    }
}
