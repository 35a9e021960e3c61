//! One round at a simulated blackjack table: the shoe procedures, the players and their bets,
//! the deal, insurance and even money, the players' decisions and the dealer's play. The
//! settlement is computed afterwards by the engine itself (see [`super`]).

use rules_core::{Bet, Card, Cents, Decision, EventKind, Id, Rank, Recipient, RoundEvent, SimRng};

use super::Mistake;
use super::shoe::{Pick, Shoe};
use crate::config::{BlackjackConfig, Shuffler};
use crate::dealer::must_draw;
use crate::hand::{Count, is_ace_ten};
use crate::state::{BlackjackState, WarningCard};

/// The warning card stands as close as possible to the 50th card from the end (r.9).
pub const WARNING_FROM_END: u32 = 50;
/// Online and batch shufflers: a new shoe once this share (in %) of the cards has been dealt.
const PENETRATION_PCT: u32 = 75;
/// At most this many hands per seat (re-splits included).
const MAX_HANDS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Main,
    Vacant,
    Complementary,
    Insurance,
    Jackpot,
}

impl Kind {
    fn id(self) -> &'static str {
        match self {
            Kind::Main => "main",
            Kind::Vacant => "vacant",
            Kind::Complementary => "complementary",
            Kind::Insurance => "insurance",
            Kind::Jackpot => "jackpot",
        }
    }
}

/// A bet of the round.
#[derive(Clone, Debug)]
pub struct SBet {
    pub id: Id,
    pub kind: Kind,
    pub seat: u8,
    pub player: Id,
    pub amount: Cents,
    /// Box bets: the hands of the seat it has a stake on.
    pub hands: Vec<u8>,
    /// Vacant bets: the bettor's own seat (r.16 tie-break), `u8::MAX` otherwise.
    pub home: u8,
}

/// A hand at a seat.
#[derive(Clone, Debug)]
pub struct SHand {
    pub number: u8,
    pub cards: Vec<Card>,
    pub count: Count,
    pub split: bool,
    pub split_aces: bool,
    pub doubled: bool,
    pub surrendered: bool,
    pub even_money: bool,
    /// A card asked for by a split and not dealt yet.
    pub pending: bool,
}

impl SHand {
    fn new(number: u8) -> SHand {
        SHand {
            number,
            cards: Vec::with_capacity(6),
            count: Count::default(),
            split: false,
            split_aces: false,
            doubled: false,
            surrendered: false,
            even_money: false,
            pending: false,
        }
    }
    pub fn is_blackjack(&self) -> bool {
        !self.split && is_ace_ten(&self.cards)
    }
    pub fn total(&self) -> u32 {
        self.count.player_total()
    }
    fn out(&self) -> bool {
        self.total() > 21 || self.surrendered
    }
    /// The result still depends on the dealer's total.
    fn live(&self) -> bool {
        !self.cards.is_empty()
            && self.total() <= 21
            && !self.surrendered
            && !self.even_money
            && !self.is_blackjack()
    }
}

/// A seat with box bets.
#[derive(Clone, Debug)]
pub struct SSeat {
    pub seat: u8,
    /// The bet whose owner decides (r.15, r.16).
    pub lead: usize,
    pub followers: Vec<usize>,
    pub hands: Vec<SHand>,
}

/// Where an online malfunction interrupts the round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// Before the `k`-th card of the initial deal (0-based), at most the last seat's first
    /// card of the second round: some hand then has fewer than two cards.
    Deal(usize),
    /// Right after a player's request for a card, or before the dealer's first required draw.
    Play,
}

/// The cards a mistake's round needs (on the mistake's seat and for the dealer).
#[derive(Clone, Debug, Default)]
pub struct Steer {
    /// The seat the mistake is made at (chosen among the titulars).
    pub seat: Option<u8>,
    /// One player, one box bet: the mistake's findings cannot multiply.
    pub single_player: bool,
    pub seat_cards: [Option<Pick>; 2],
    pub up: Option<Pick>,
    pub hole: Option<Pick>,
    /// The first card of hand 1 after a split of the mistake's seat.
    pub after_split: Option<Pick>,
    /// A seat that must split its first hand, once.
    pub must_split: bool,
    /// The steered cards could not all be found in the shoe.
    pub failed: bool,
}

/// What the round left for the settlement.
pub struct Played {
    pub events: Vec<RoundEvent>,
    pub t: i64,
    pub bets: Vec<SBet>,
    /// An online malfunction interrupted the round.
    pub interrupted: bool,
    pub steer_failed: bool,
    /// The mistake's bet (the mistake seat's main bet).
    pub target: Option<usize>,
}

pub struct Table<'a> {
    pub cfg: &'a BlackjackConfig,
    pub state: &'a BlackjackState,
    pub rng: &'a mut SimRng,
    pub round_id: &'a Id,
    pub m: Option<Mistake>,
    pub events: Vec<RoundEvent>,
    pub t: i64,
    shoe: Shoe,
    warning_at: Option<u32>,
    warning_out: bool,
    on_table: Vec<Card>,
    pub bets: Vec<SBet>,
    pub seats: Vec<SSeat>,
    dealer: Vec<Card>,
    dcount: Count,
    post_deal_card: bool,
    next_bet: u32,
    pub steer: Steer,
    interrupt: Option<Interrupt>,
    interrupted: bool,
    deal_cards: usize,
    disconnect: Option<u8>,
}

fn step(rng: &mut SimRng, lo: i64, hi: i64) -> i64 {
    lo + rng.below((hi - lo + 1) as u64) as i64
}

/// Value of the dealer's up-card for the players' policy (ace 11).
fn up_value(c: Card) -> u32 {
    match c.rank {
        Rank::Ace => 11,
        r => crate::hand::value(r),
    }
}

impl<'a> Table<'a> {
    pub fn new(
        cfg: &'a BlackjackConfig,
        state: &'a BlackjackState,
        rng: &'a mut SimRng,
        round_id: &'a Id,
        m: Option<Mistake>,
        t: i64,
    ) -> Table<'a> {
        Table {
            cfg,
            state,
            rng,
            round_id,
            m,
            events: Vec::with_capacity(64),
            t,
            shoe: Shoe::from_counts(&state.shoe, cfg.decks),
            warning_at: None,
            warning_out: false,
            on_table: Vec::with_capacity(32),
            bets: Vec::with_capacity(16),
            seats: Vec::with_capacity(8),
            dealer: Vec::with_capacity(6),
            dcount: Count::default(),
            post_deal_card: false,
            next_bet: 0,
            steer: Steer::default(),
            interrupt: None,
            interrupted: false,
            deal_cards: 0,
            disconnect: None,
        }
    }

    fn push(&mut self, kind: EventKind) {
        self.events.push(RoundEvent::at(self.t, kind));
    }

    fn wait(&mut self, lo: i64, hi: i64) {
        self.t += step(self.rng, lo, hi);
    }

    fn procedure(&mut self, name: &str, value: Option<&str>, seat: Option<u8>) {
        self.push(EventKind::Procedure {
            name: name.into(),
            value: value.map(str::to_string),
            seat,
            amount_cents: None,
        });
    }

    fn role(&mut self, role: &str, player: String) {
        self.push(EventKind::Role {
            role: role.into(),
            seat: None,
            player: Some(player.into()),
        });
    }

    fn min(&self) -> Cents {
        self.cfg.min.unwrap_or(100).max(1)
    }

    fn max(&self) -> Cents {
        self.cfg.max.unwrap_or(self.min() * 100).max(self.min())
    }

    // ------------------------------------------------------------------ the shoe

    /// Shuffle, cut, burn; shuffler loads (r.8-r.10, r.52-r.54). `force`: a new shoe now.
    pub fn open(&mut self, force: bool, first_seat: u8) {
        let cfg = self.cfg;
        let st = self.state;
        let total = u32::from(cfg.decks) * 52;
        let out = self.shoe.out;
        if cfg.online() {
            if force || out == 0 || out * 100 >= total * PENETRATION_PCT {
                self.new_shoe();
                self.procedure("shuffle", None, None);
                self.wait(500, 1_500);
            }
            return;
        }
        match cfg.shuffler {
            Shuffler::None => {
                let w = total.saturating_sub(WARNING_FROM_END);
                // At exactly `w` the warning card is the next card: it comes out just before
                // this round, which is still played (r.11). Beyond `w` without it (a state
                // from another record) the shoe is renewed.
                let reshuffle = force
                    || out == 0
                    || st.warning_card == WarningCard::OutLastRoundPlayed
                    || (st.warning_card == WarningCard::InShoe && out > w);
                if reshuffle {
                    self.new_shoe();
                    let dealer = format!("dealer-{}", 1 + self.rng.below(6));
                    self.role("dealer", dealer);
                    self.wait(1_000, 3_000);
                    self.procedure("cards_spread", None, None);
                    self.wait(20_000, 40_000);
                    self.procedure("shuffle", None, None);
                    self.wait(30_000, 60_000);
                    // The cut is offered to the lowest-numbered seat playing (r.8).
                    self.procedure("cut", None, Some(first_seat));
                    self.wait(3_000, 8_000);
                    self.burn();
                } else {
                    self.warning_out = st.warning_card == WarningCard::OutBeforeRound;
                }
                self.warning_at = Some(w);
            }
            Shuffler::Batch | Shuffler::Continuous => {
                if st.shuffler_loads == 0 {
                    // Loaded once per session, in packets, with a fiscal-chefe present (r.54).
                    let who = format!("fiscal-{}", 1 + self.rng.below(3));
                    self.role("fiscal_chefe", who);
                    self.wait(1_000, 3_000);
                    let packets = 2 + self.rng.below(3);
                    self.procedure("shuffler_load", Some(&packets.to_string()), None);
                    self.wait(20_000, 40_000);
                }
                let batch_due = cfg.shuffler == Shuffler::Batch
                    && (out == 0 || out * 100 >= total * PENETRATION_PCT);
                if force || batch_due {
                    self.new_shoe();
                    self.procedure("shuffle", None, None);
                    self.wait(2_000, 5_000);
                }
            }
        }
    }

    fn new_shoe(&mut self) {
        self.shoe = Shoe::fresh(self.cfg.decks);
        self.warning_out = false;
    }

    /// One card burned before dealing (r.10).
    fn burn(&mut self) {
        let c = self.next_card(None);
        self.push(EventKind::Card {
            to: Recipient::Burn,
            card: c,
            face_up: false,
        });
        self.wait(1_000, 2_000);
    }

    /// The next card out of the shoe, the warning card announced when it comes out (r.11).
    fn next_card(&mut self, pick: Option<Pick>) -> Card {
        if let Some(w) = self.warning_at
            && !self.warning_out
            && self.shoe.out >= w
        {
            self.warning_out = true;
            self.procedure("warning_card", None, None);
            self.wait(500, 1_500);
            self.procedure("last_round", None, None);
            self.wait(500, 1_500);
        }
        let c = match pick {
            Some(p) => match self.shoe.take(self.rng, p) {
                Some(c) => Some(c),
                None => {
                    self.steer.failed = true;
                    self.shoe.draw(self.rng)
                }
            },
            None => self.shoe.draw(self.rng),
        };
        let c = match c {
            Some(c) => c,
            None => {
                // Never with 50 cards behind the warning card; kept for tables of few decks:
                // the discards are reshuffled, the cards on the table left out.
                self.procedure("shuffle", None, None);
                self.wait(20_000, 40_000);
                self.shoe = Shoe::refilled(self.cfg.decks, &self.on_table);
                self.warning_out = true;
                self.shoe
                    .draw(self.rng)
                    .unwrap_or(Card::new(Rank::Two, rules_core::Suit::Spades))
            }
        };
        self.on_table.push(c);
        c
    }

    fn card(&mut self, to: Recipient, pick: Option<Pick>, face_up: bool) -> Card {
        let c = self.next_card(pick);
        self.push(EventKind::Card {
            to,
            card: c,
            face_up,
        });
        self.wait(600, 1_500);
        c
    }

    // ------------------------------------------------------------------ bets

    fn bet_id(&mut self) -> Id {
        self.next_bet += 1;
        format!("{}/b{}", self.round_id, self.next_bet).into()
    }

    /// `min` x k, k from a typical spread, within `room`.
    fn stake(&mut self, room: Cents) -> Option<Cents> {
        let min = self.min();
        let ks: [i64; 16] = [1, 1, 1, 1, 1, 2, 2, 2, 3, 4, 5, 5, 6, 10, 15, 20];
        let hi = room.min(self.max()) / min;
        if hi < 1 {
            return None;
        }
        let k = (*self.rng.pick(&ks).unwrap_or(&1)).min(hi);
        Some(k * min)
    }

    fn place(&mut self, b: SBet, on: Option<&Id>, attr: Option<(&str, String)>) -> usize {
        let mut bet = Bet::new(&b.id, b.kind.id(), b.amount)
            .seat(b.seat)
            .player(&b.player);
        if let Some(o) = on {
            bet = bet.on_bet(o);
        }
        if b.kind == Kind::Jackpot {
            bet = bet.chips(1);
        }
        if let Some((k, v)) = attr {
            bet = bet.attr(k, &v);
        }
        self.push(EventKind::Bet(bet));
        self.wait(800, 3_000);
        self.bets.push(b);
        self.bets.len() - 1
    }

    fn seat_total(&self, seat: u8) -> Cents {
        self.bets
            .iter()
            .filter(|b| {
                b.seat == seat && matches!(b.kind, Kind::Main | Kind::Vacant | Kind::Complementary)
            })
            .map(|b| b.amount)
            .sum()
    }

    fn add_box(
        &mut self,
        kind: Kind,
        seat: u8,
        player: Id,
        amount: Cents,
        attr: Option<(&str, String)>,
    ) -> usize {
        let id = self.bet_id();
        let on = match kind {
            Kind::Complementary => self
                .bets
                .iter()
                .find(|b| b.seat == seat && matches!(b.kind, Kind::Main | Kind::Vacant))
                .map(|b| b.id.clone()),
            _ => None,
        };
        let home = attr
            .as_ref()
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(u8::MAX);
        let b = SBet {
            id,
            kind,
            seat,
            player,
            amount,
            hands: vec![1],
            home,
        };
        self.place(b, on.as_ref(), attr)
    }

    /// The players and their bets before the deal. `sitting`: the seats whose titular bets
    /// (ascending); online `vacant` and complementary bets are not offered.
    pub fn place_bets(&mut self, sitting: &[(u8, Id)], jackpot_chips: bool) {
        let land = !self.cfg.online();
        let single = self.steer.single_player;
        let mut mains: Vec<usize> = Vec::with_capacity(sitting.len());
        for (seat, player) in sitting {
            let mut amount = self.stake(self.max()).unwrap_or(self.min());
            if self.steer.seat == Some(*seat) {
                amount = self.mistake_stake(amount);
            }
            let i = self.add_box(Kind::Main, *seat, player.clone(), amount, None);
            mains.push(i);
        }
        if land && !single && !sitting.is_empty() {
            // A bet on a vacant box now and then (r.16), sometimes two bettors sharing it.
            let free: Vec<u8> = (1..=self.cfg.seats)
                .filter(|s| !sitting.iter().any(|(x, _)| x == s))
                .collect();
            if !free.is_empty() && self.rng.chance(1, 8) {
                let seat = free[self.rng.below(free.len() as u64) as usize];
                let n = if sitting.len() >= 2 && self.rng.chance(1, 3) {
                    2
                } else {
                    1
                };
                let mut who: Vec<usize> = (0..sitting.len()).collect();
                self.rng.shuffle(&mut who);
                for &w in who.iter().take(n) {
                    let room = self.max() - self.seat_total(seat);
                    if let Some(a) = self.stake(room) {
                        let (home, player) = sitting[w].clone();
                        self.add_box(
                            Kind::Vacant,
                            seat,
                            player,
                            a,
                            Some(("home_seat", home.to_string())),
                        );
                    }
                }
            }
            // Complementary bets on other players' boxes (r.15).
            if self.rng.chance(1, 4) {
                let n = 1 + self.rng.below(2);
                for _ in 0..n {
                    let boxes: Vec<u8> = {
                        let mut v: Vec<u8> = self
                            .bets
                            .iter()
                            .filter(|b| matches!(b.kind, Kind::Main | Kind::Vacant))
                            .map(|b| b.seat)
                            .filter(|s| self.steer.seat != Some(*s))
                            .collect();
                        v.dedup();
                        v
                    };
                    let Some(&seat) = self.rng.pick(&boxes) else {
                        break;
                    };
                    let others: Vec<Id> = sitting
                        .iter()
                        .filter(|(s, _)| *s != seat)
                        .map(|(_, p)| p.clone())
                        .collect();
                    let player: Id = match self.rng.pick(&others) {
                        Some(p) => p.clone(),
                        None => format!("B{}", 1 + self.rng.below(9)).into(),
                    };
                    let room = self.max() - self.seat_total(seat);
                    if let Some(a) = self.stake(room.min(self.min() * 4)) {
                        self.add_box(Kind::Complementary, seat, player, a, None);
                    }
                }
            }
        }
        // Jackpot chips: one chip per player and hand, titulars with a main bet (r.45-r.48).
        if jackpot_chips && let Some(jp) = self.cfg.jackpot.as_ref().map(|j| j.chip) {
            for &i in &mains {
                if self.rng.chance(2, 5) {
                    let (seat, player, main) = (
                        self.bets[i].seat,
                        self.bets[i].player.clone(),
                        self.bets[i].id.clone(),
                    );
                    let id = self.bet_id();
                    let b = SBet {
                        id,
                        kind: Kind::Jackpot,
                        seat,
                        player,
                        amount: jp,
                        hands: Vec::new(),
                        home: u8::MAX,
                    };
                    self.place(b, Some(&main), None);
                }
            }
        }
        self.build_seats();
    }

    /// The mistake seat's main bet: one that leaves room and pays whole cents.
    fn mistake_stake(&mut self, drawn: Cents) -> Cents {
        let min = self.min();
        match self.m {
            // Room for a late complementary bet.
            Some(Mistake::LateBet) => min,
            // 3:2 (or the online ratio) in whole cents: no rounding reading.
            Some(Mistake::OverpayBlackjack) => {
                let (num, den) = (self.cfg.bj_num, self.cfg.bj_den);
                let mut a = drawn;
                while (a * num) % den != 0 && a + min <= self.max() {
                    a += min;
                }
                a
            }
            _ => drawn,
        }
    }

    /// Seats and their deciders (r.15, r.16): the titular's main bet, or on a vacant box the
    /// largest bet, then the lowest home seat, then the first placed.
    fn build_seats(&mut self) {
        let mut seats: Vec<SSeat> = Vec::new();
        for (i, b) in self.bets.iter().enumerate() {
            if !matches!(b.kind, Kind::Main | Kind::Vacant | Kind::Complementary) {
                continue;
            }
            match seats.iter_mut().find(|s| s.seat == b.seat) {
                None => seats.push(SSeat {
                    seat: b.seat,
                    lead: i,
                    followers: Vec::new(),
                    hands: vec![SHand::new(1)],
                }),
                Some(s) => {
                    let lead = &self.bets[s.lead];
                    let better = b.kind == Kind::Vacant
                        && lead.kind == Kind::Vacant
                        && (b.amount > lead.amount
                            || (b.amount == lead.amount && b.home < lead.home));
                    if better {
                        s.followers.push(s.lead);
                        s.lead = i;
                    } else {
                        s.followers.push(i);
                    }
                }
            }
        }
        seats.sort_by_key(|s| s.seat);
        self.seats = seats;
    }

    /// "Jogo feito, nada mais" (r.48).
    pub fn no_more_bets(&mut self) {
        self.push(EventKind::NoMoreBets);
        self.wait(1_000, 2_000);
    }

    pub fn display(&mut self, value_cents: Cents) {
        self.push(EventKind::JackpotDisplay { value_cents });
        self.wait(300, 800);
    }

    // ------------------------------------------------------------------ the deal

    pub fn set_interrupt(&mut self, i: Option<Interrupt>) {
        self.interrupt = i;
    }

    pub fn set_disconnect(&mut self, seat: Option<u8>) {
        self.disconnect = seat;
    }

    fn malfunction(&mut self) {
        self.interrupted = true;
        self.wait(500, 3_000);
        self.push(EventKind::Fault {
            code: "malfunction".into(),
            seat: None,
            detail: Some("game server error: round interrupted".into()),
        });
        if self.m != Some(Mistake::OnlineFailureSettled) {
            self.wait(1_000, 3_000);
            self.push(EventKind::Void {
                reason: "malfunction".into(),
            });
        }
    }

    /// The initial deal (r.17): a card face up to each seat in order, the up-card, a second
    /// card to each seat, the hole card face down. False if a malfunction stopped it.
    pub fn deal(&mut self) -> bool {
        let order: Vec<u8> = self.seats.iter().map(|s| s.seat).collect();
        for k in 0..2 {
            for (si, &seat) in order.iter().enumerate() {
                if self.interrupt == Some(Interrupt::Deal(self.deal_cards)) {
                    self.malfunction();
                    return false;
                }
                let pick = if self.steer.seat == Some(seat) {
                    self.steer.seat_cards[k]
                } else {
                    None
                };
                let c = self.card(Recipient::seat(seat), pick, true);
                self.deal_cards += 1;
                let h = &mut self.seats[si].hands[0];
                h.cards.push(c);
                h.count.add(c);
                // After this seat's first card: late under both versions of r.13.
                if k == 0 && self.m == Some(Mistake::LateBet) && self.steer.seat == Some(seat) {
                    self.late_bet();
                }
            }
            if self.interrupt == Some(Interrupt::Deal(self.deal_cards)) {
                self.malfunction();
                return false;
            }
            let pick = if k == 0 {
                self.steer.up
            } else {
                self.steer.hole
            };
            let c = self.card(Recipient::Dealer, pick, k == 0);
            self.deal_cards += 1;
            self.dealer.push(c);
            self.dcount.add(c);
        }
        self.wait(1_000, 3_000);
        true
    }

    /// The mistake `late_bet`: a complementary bet after the deal has begun (r.13).
    fn late_bet(&mut self) {
        let Some(seat) = self.steer.seat else { return };
        let others: Vec<Id> = self
            .bets
            .iter()
            .filter(|b| b.kind == Kind::Main && b.seat != seat)
            .map(|b| b.player.clone())
            .collect();
        let player = self
            .rng
            .pick(&others)
            .cloned()
            .unwrap_or_else(|| "B1".into());
        let amount = self.min();
        let i = self.add_box(Kind::Complementary, seat, player, amount, None);
        if let Some(s) = self.seats.iter_mut().find(|s| s.seat == seat) {
            s.followers.push(i);
        }
    }

    // ------------------------------------------------------------------ insurance, even money

    /// With an ace up, insurance and even money are offered after the second cards (r.33,
    /// r.34).
    pub fn insurance(&mut self) {
        if self.dealer.first().is_none_or(|c| c.rank != Rank::Ace) {
            return;
        }
        for si in 0..self.seats.len() {
            let seat = self.seats[si].seat;
            let mistake_seat = self.steer.seat == Some(seat);
            let bj = self.seats[si].hands[0].is_blackjack();
            if bj && !mistake_seat && self.rng.chance(1, 3) {
                self.decide(seat, 1, "even_money", None, None);
                self.seats[si].hands[0].even_money = true;
                continue;
            }
            let mut boxes = vec![self.seats[si].lead];
            boxes.extend(self.seats[si].followers.iter().copied());
            for bi in boxes {
                let amount = self.bets[bi].amount;
                let over = mistake_seat
                    && self.m == Some(Mistake::InsuranceOverHalf)
                    && bi == self.seats[si].lead;
                let ins = if over {
                    amount / 2 + (amount / 4).max(1)
                } else if !bj && self.rng.chance(1, 7) {
                    amount / 2
                } else {
                    0
                };
                if ins <= 0 {
                    continue;
                }
                let id = self.bet_id();
                let b = SBet {
                    id,
                    kind: Kind::Insurance,
                    seat,
                    player: self.bets[bi].player.clone(),
                    amount: ins,
                    hands: Vec::new(),
                    home: u8::MAX,
                };
                let on = self.bets[bi].id.clone();
                self.place(b, Some(&on), None);
            }
        }
    }

    fn decide(&mut self, seat: u8, hand: u8, action: &str, amount: Option<Cents>, bet: Option<Id>) {
        let mut d = Decision::new(seat, action).hand(hand);
        d.amount_cents = amount;
        d.bet_id = bet;
        self.push(EventKind::Decision(d));
        self.wait(1_500, 6_000);
    }

    // ------------------------------------------------------------------ the players

    /// Each seat in order plays its hands (r.18, r.26-r.36). False if a malfunction stopped
    /// the round.
    pub fn play(&mut self) -> bool {
        let up = up_value(self.dealer[0]);
        for si in 0..self.seats.len() {
            let seat = self.seats[si].seat;
            if self.disconnect == Some(seat) {
                self.push(EventKind::Fault {
                    code: "player_connection".into(),
                    seat: Some(seat),
                    detail: Some("client connection lost; the player's game goes on".into()),
                });
                self.wait(2_000, 9_000);
            }
            let mut hi = 0;
            while hi < self.seats[si].hands.len() {
                if !self.play_hand(si, hi, up) {
                    return false;
                }
                hi += 1;
            }
        }
        true
    }

    /// A requested card to hand `hi` of seat `si`.
    fn give(&mut self, si: usize, hi: usize, pick: Option<Pick>) {
        let seat = self.seats[si].seat;
        let number = self.seats[si].hands[hi].number;
        let c = self.card(Recipient::Seat { seat, hand: number }, pick, true);
        self.post_deal_card = true;
        let h = &mut self.seats[si].hands[hi];
        h.cards.push(c);
        h.count.add(c);
    }

    fn play_hand(&mut self, si: usize, hi: usize, up: u32) -> bool {
        let seat = self.seats[si].seat;
        let mistake_seat = self.steer.seat == Some(seat);
        if self.seats[si].hands[hi].pending {
            self.seats[si].hands[hi].pending = false;
            self.give(si, hi, None);
        }
        if self.seats[si].hands[hi].split_aces {
            return true; // one card only (r.26)
        }
        let mut first = true;
        loop {
            let h = &self.seats[si].hands[hi];
            let number = h.number;
            if h.even_money || h.is_blackjack() || h.total() >= 21 {
                return true;
            }
            let two = h.cards.len() == 2;
            if first && two {
                first = false;
                // The mistake `double_on_12`: the hard 12 is doubled.
                if mistake_seat && hi == 0 && self.m == Some(Mistake::DoubleOn12) {
                    return self.double(si, hi);
                }
                if mistake_seat && hi == 0 && self.m == Some(Mistake::SurrenderVsAce) {
                    self.decide(seat, number, "surrender", None, None);
                    self.seats[si].hands[hi].surrendered = true;
                    return true;
                }
                if self.wants_surrender(si, hi, up) {
                    self.decide(seat, number, "surrender", None, None);
                    self.seats[si].hands[hi].surrendered = true;
                    return true;
                }
                let forced = mistake_seat && self.steer.must_split && hi == 0;
                if forced || self.wants_split(si, hi, up) {
                    if forced {
                        self.steer.must_split = false;
                    }
                    self.split(si, hi);
                    // The hand goes on with its new second card.
                    let pick = if forced { self.steer.after_split } else { None };
                    self.seats[si].hands[hi].pending = false;
                    self.give(si, hi, pick);
                    if self.seats[si].hands[hi].split_aces {
                        return true;
                    }
                    first = true;
                    continue;
                }
                if self.wants_double(si, hi, up) {
                    return self.double(si, hi);
                }
            }
            if self.wants_hit(si, hi, up) {
                self.decide(seat, number, "hit", None, None);
                if self.interrupt == Some(Interrupt::Play) {
                    self.malfunction();
                    return false;
                }
                self.give(si, hi, None);
            } else {
                self.decide(seat, number, "stand", None, None);
                return true;
            }
        }
    }

    fn wants_surrender(&mut self, si: usize, hi: usize, up: u32) -> bool {
        let h = &self.seats[si].hands[hi];
        if h.split || h.cards.len() != 2 || up == 11 || h.count.is_soft() {
            return false;
        }
        // P1364/2001: only before the dealer deals any additional card (13.7).
        if self.cfg.regulation == crate::cite::Regulation::P1364 && self.post_deal_card {
            return false;
        }
        let t = h.total();
        let spot = (t == 16 && up >= 9) || (t == 15 && up == 10);
        spot && self.rng.chance(1, 2)
    }

    fn wants_split(&mut self, si: usize, hi: usize, up: u32) -> bool {
        let n_hands = self.seats[si].hands.len();
        let h = &self.seats[si].hands[hi];
        if h.cards.len() != 2 || h.cards[0].rank != h.cards[1].rank || n_hands >= MAX_HANDS {
            return false;
        }
        // Ten-value cards are never split (and K+Q is a reading, 13.5).
        let v = crate::hand::value(h.cards[0].rank);
        let book = match v {
            1 | 8 => true,
            9 => (2..=9).contains(&up) && up != 7,
            7 | 2 | 3 => (2..=7).contains(&up),
            6 => (2..=6).contains(&up),
            4 => (5..=6).contains(&up),
            _ => false,
        };
        book && self.rng.chance(9, 10)
    }

    fn wants_double(&mut self, si: usize, hi: usize, up: u32) -> bool {
        let h = &self.seats[si].hands[hi];
        if h.cards.len() != 2 || h.count.is_soft() || h.split_aces {
            return false;
        }
        let book = match h.count.hard {
            11 => up <= 10,
            10 => up <= 9,
            9 => (3..=6).contains(&up),
            _ => false,
        };
        book && self.rng.chance(9, 10)
    }

    fn wants_hit(&mut self, si: usize, hi: usize, up: u32) -> bool {
        let h = &self.seats[si].hands[hi];
        let t = h.total();
        if t <= 11 {
            return true; // standing needs more than 11 (r.18)
        }
        let book = if h.count.is_soft() {
            t <= 17 || (t == 18 && up >= 9)
        } else {
            match t {
                12 => !(4..=6).contains(&up),
                13..=16 => up >= 7,
                _ => false,
            }
        };
        // Some players play by hunch on the stiff totals.
        if (12..=16).contains(&t) && self.rng.chance(1, 25) {
            !book
        } else {
            book
        }
    }

    /// Double (r.29-r.32): the equal stake, the followers' own choice (r.30), one card.
    fn double(&mut self, si: usize, hi: usize) -> bool {
        let seat = self.seats[si].seat;
        let number = self.seats[si].hands[hi].number;
        let lead = self.seats[si].lead;
        let amount = self.bets[lead].amount;
        self.decide(seat, number, "double", Some(amount), None);
        self.seats[si].hands[hi].doubled = true;
        let followers = self.seats[si].followers.clone();
        for f in followers {
            if self.bets[f].hands.contains(&number) && self.rng.chance(1, 2) {
                let (a, id) = (self.bets[f].amount, self.bets[f].id.clone());
                self.decide(seat, number, "double", Some(a), Some(id));
            }
        }
        if self.interrupt == Some(Interrupt::Play) {
            self.malfunction();
            return false;
        }
        self.give(si, hi, None);
        // r.32: an ace among the first two cards of a doubled 9 / 10 stays 1 (never doubled
        // here: soft hands are not doubled).
        true
    }

    /// Split (r.26-r.28): the second card moves to a new hand with a stake equal to the
    /// original bet; the followers choose to follow (r.28).
    fn split(&mut self, si: usize, hi: usize) {
        let seat = self.seats[si].seat;
        let lead = self.seats[si].lead;
        let amount = self.bets[lead].amount;
        let number = self.seats[si].hands[hi].number;
        self.decide(seat, number, "split", Some(amount), None);
        let new_number = (self.seats[si].hands.len() + 1) as u8;
        let h = &mut self.seats[si].hands[hi];
        let second = h
            .cards
            .pop()
            .unwrap_or(Card::new(Rank::Two, rules_core::Suit::Spades));
        let aces = second.rank == Rank::Ace;
        h.count = crate::hand::count(&h.cards);
        h.split = true;
        h.split_aces = aces;
        h.pending = true;
        let mut nh = SHand::new(new_number);
        nh.cards.push(second);
        nh.count.add(second);
        nh.split = true;
        nh.split_aces = aces;
        nh.pending = true;
        self.seats[si].hands.push(nh);
        self.bets[lead].hands.push(new_number);
        let followers = self.seats[si].followers.clone();
        for f in followers {
            let on_hand = self.bets[f].hands.contains(&number);
            if on_hand && self.rng.chance(1, 2) {
                let (a, id) = (self.bets[f].amount, self.bets[f].id.clone());
                self.decide(seat, number, "split", Some(a), Some(id));
                self.bets[f].hands.push(new_number);
            }
        }
    }

    // ------------------------------------------------------------------ the dealer

    fn all_out(&self) -> bool {
        let mut any = false;
        for h in self.seats.iter().flat_map(|s| s.hands.iter()) {
            if h.cards.is_empty() {
                continue;
            }
            any = true;
            if !h.out() {
                return false;
            }
        }
        any
    }

    fn live_hands(&self) -> bool {
        self.seats
            .iter()
            .flat_map(|s| s.hands.iter())
            .any(SHand::live)
    }

    /// The hole card turned up; the dealer draws to 17 (r.19, r.6(a)); nobody left, no
    /// draw (r.22). False if a malfunction stopped the round.
    pub fn dealer_plays(&mut self, pick_extra: Option<Pick>) -> bool {
        if !self.cfg.online() {
            self.procedure("reveal_hole_card", None, None);
        }
        self.wait(1_000, 2_500);
        if self.all_out() || !self.live_hands() {
            return true;
        }
        let mut first = true;
        while must_draw(&self.dcount, self.cfg.hits_soft_17) {
            if first && self.interrupt == Some(Interrupt::Play) {
                self.malfunction();
                return false;
            }
            first = false;
            let c = self.card(Recipient::Dealer, None, true);
            self.post_deal_card = true;
            self.dealer.push(c);
            self.dcount.add(c);
        }
        if let Some(p) = pick_extra {
            // The mistake `dealer_hits_soft_17`: one card too many.
            let c = self.card(Recipient::Dealer, Some(p), true);
            self.dealer.push(c);
        }
        self.wait(2_000, 4_000);
        true
    }

    pub fn finish(self, target: Option<usize>) -> Played {
        Played {
            events: self.events,
            t: self.t,
            bets: self.bets,
            interrupted: self.interrupted,
            steer_failed: self.steer.failed,
            target,
        }
    }

    pub fn session(&mut self, name: &str, value: Option<&str>, seat: u8) {
        self.procedure(name, value, Some(seat));
        self.wait(300, 1_500);
    }
}
