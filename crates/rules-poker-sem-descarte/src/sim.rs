//! # Simulation: playing póquer sem descarte by the rules ([`rules_core::Simulate`])
//!
//! [`PokerSemDescarteEngine`] plays one complete round:
//!
//! * **The deck**: one 52-card deck, shuffled for every round (r.1, r.16): `shuffle`, then by
//!   hand `cut` and one card burned; with a homologated shuffler no cut (r.16(a)) and no burn
//!   (10.17: not checked).
//! * **Players**: 1 to 7 (mostly 3 to 5, never more than the boxes, one box each, r.5), antes of
//!   1 to 25 minimums within the table limits (r.13, r.14, r.16), a jackpot chip from about
//!   half of them (P217: only with an ante), then "Jogo feito. Nada mais." and the jackpot
//!   display with the round's chips (r.4, r.16).
//! * **Deal** (r.16): by hand one card at a time face down from the dealer's left, the bank
//!   last, five rounds, the bank's fifth card face up; with a shuffler five cards to each player
//!   in turn, then five to the bank. "Vejam o vosso jogo" (`look_at_cards`, r.17).
//! * **Decisions** (r.17), seat by seat: a player calls ("vou": the call bet, twice the ante)
//!   with a pair or better (a low pair passed now and then), with ace-king about three times in
//!   four, with a lesser ace now and then and otherwise rarely; else he passes ("passo") and his
//!   ante is collected at once (r.17).
//! * **Bank**: the four hidden cards turned up (`reveal_dealer`, r.18); it plays with an ace and
//!   a king or better (r.18).
//! * **No faults in honest rounds**: the engine reports a misdeal (r.19) and a player showing
//!   his cards (r.17) as findings even when the table handles them as the rules prescribe, so
//!   an honest round (no finding) has neither; the misdeal is the mistake `misdeal_settled`.
//! * **Settlement**: the engine adjudicates a copy of the state and the honest settlement is
//!   [`rules_core::honest_settlement`]; losing bets are collected, winners paid (jackpot prizes
//!   in full: the chip is not returned), the jackpot display shown after the round.
//!
//! The jackpot value: as for blackjack (see `rules_blackjack::sim`), the engine keeps none in
//! its state; [`Simulate::simulate`] prices the round from [`default_jackpot_before`] (the
//! configured start value), [`simulate_with_jackpot`] from a value the caller gives, and
//! [`reprice_jackpot`] overrides [`Round::jackpot_before_cents`] of a simulated round,
//! re-deriving the jackpot bets' results, prizes paid and displays.
//!
//! ## Mistakes ([`MISTAKES`])
//!
//! Steered so that they apply (the bank's cards chosen among those that do not qualify, a call
//! or a pass forced), then checked with the engine and redrawn (up to 24 times) if the drawn
//! cards add a finding the spec does not list.

use rules_core::{
    Award, Bet, Card, Cents, Decision, Engine, EventKind, GameId, Id, JackpotConfig, JackpotPrize,
    MistakeSpec, Options, Recipient, Round, RoundEvent, Setting, SimError, SimRng, Simulate,
    TableConfig, honest_settlement,
};

use crate::eval::{self, Category};
use crate::{PokerSemDescarteEngine, PsdConfig, PsdState};

/// The mistakes a simulated póquer sem descarte table can be told to make.
pub const MISTAKES: &[MistakeSpec] = &[
    MistakeSpec {
        id: "paid_multiple_on_non_qualifying_bank",
        description: "the bank does not qualify, yet a call is paid its r.6 multiple instead of being returned",
        codes: &["PSD_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "misdeal_settled",
        description: "a player's card comes face up while dealing; the round is played on and settled (the passed ante collected) instead of annulled",
        codes: &["PSD_MISDEAL", "PSD_VOID_ROUND_SETTLED"],
    },
    MistakeSpec {
        id: "call_not_double_ante",
        description: "a call accepted for once the ante instead of twice",
        codes: &["PSD_CALL_NOT_DOUBLE_ANTE"],
    },
    MistakeSpec {
        id: "pass_paid",
        description: "a player who passed gets his ante back",
        codes: &["PSD_PASS_REVERSED", "PSD_WRONG_PAYOUT"],
    },
    MistakeSpec {
        id: "jackpot_chip_late",
        description: "a jackpot chip accepted after \"Jogo feito. Nada mais.\"",
        codes: &["PSD_JACKPOT_BET_LATE"],
    },
];

/// The mistakes a table of `game` can make (their ids, in [`MISTAKES`] order).
pub fn mistakes_of(game: GameId) -> Vec<&'static str> {
    if game == GameId::PokerSemDescarte {
        MISTAKES.iter().map(|m| m.id).collect()
    } else {
        Vec::new()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mistake {
    PaidMultipleOnNonQualifyingBank,
    MisdealSettled,
    CallNotDoubleAnte,
    PassPaid,
    JackpotChipLate,
}

impl Mistake {
    fn parse(id: &str) -> Option<Mistake> {
        Some(match id {
            "paid_multiple_on_non_qualifying_bank" => Mistake::PaidMultipleOnNonQualifyingBank,
            "misdeal_settled" => Mistake::MisdealSettled,
            "call_not_double_ante" => Mistake::CallNotDoubleAnte,
            "pass_paid" => Mistake::PassPaid,
            "jackpot_chip_late" => Mistake::JackpotChipLate,
            _ => return None,
        })
    }

    fn spec(self) -> &'static MistakeSpec {
        let i = match self {
            Mistake::PaidMultipleOnNonQualifyingBank => 0,
            Mistake::MisdealSettled => 1,
            Mistake::CallNotDoubleAnte => 2,
            Mistake::PassPaid => 3,
            Mistake::JackpotChipLate => 4,
        };
        &MISTAKES[i]
    }
}

fn not_applicable(id: &str, why: impl Into<String>) -> SimError {
    SimError::MistakeNotApplicable {
        mistake: id.to_string(),
        reason: why.into(),
    }
}

/// A typical approved table: P217/2007, €10 minimum ante, €250 maximum (25 x, r.14), 7 boxes,
/// one deck dealt by hand, and a jackpot (pool `TJP-PSD`): a €1 chip, 80% of it to the display,
/// a start value of €10,000 (10,000 x the chip, r.10) and an approved pay table (r.9): royal
/// flush the whole jackpot, straight flush 10% of it, four of a kind 500 x, full house 100 x,
/// flush 50 x, straight 20 x, three of a kind 5 x.
pub fn example_table(game: GameId) -> TableConfig {
    let mut t = TableConfig::new(game);
    let line = |c: &str, award: Award| JackpotPrize {
        combination: c.into(),
        award,
    };
    t.regulation = Some("P217/2007".into());
    t.table_id = Some("PSD-SIM-1".into());
    t.min_bet_cents = Some(1_000);
    t.max_bet_cents = Some(25_000);
    t.seats = Some(7);
    t.decks = Some(1);
    t.jackpot = Some(JackpotConfig {
        pool_id: Some("TJP-PSD".into()),
        bet_amount_cents: 100,
        increment_bp: 8_000,
        start_value_cents: 1_000_000,
        paytable: vec![
            line("royal_flush", Award::Whole),
            line("straight_flush", Award::Percent { bp: 1_000 }),
            line("four_of_a_kind", Award::Multiple { times: 500 }),
            line("full_house", Award::Multiple { times: 100 }),
            line("flush", Award::Multiple { times: 50 }),
            line("straight", Award::Multiple { times: 20 }),
            line("three_of_a_kind", Award::Multiple { times: 5 }),
        ],
        collection: Some("automatic".into()),
    });
    t.settings.insert("shuffler".into(), Setting::Bool(false));
    t
}

/// The jackpot value [`Simulate::simulate`] plays with when the table has a jackpot: the
/// configured start value (a freshly reset jackpot). `None` without a jackpot.
pub fn default_jackpot_before(cfg: &PsdConfig) -> Option<Cents> {
    cfg.jackpot.as_ref().map(|j| j.start)
}

const ATTEMPTS: u32 = 24;

/// A player at the table this round.
struct Player {
    seat: u8,
    id: Id,
    ante: Id,
    ante_cents: Cents,
    chip: Option<Id>,
    cards: Vec<Card>,
}

/// What a player does after looking at his cards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    Call,
    Pass,
}

struct Sim<'a> {
    rng: &'a mut SimRng,
    round_id: &'a Id,
    events: Vec<RoundEvent>,
    t: i64,
    deck: Vec<Card>,
    next_bet: u32,
}

impl Sim<'_> {
    fn push(&mut self, kind: EventKind) {
        self.events.push(RoundEvent::at(self.t, kind));
    }

    fn wait(&mut self, lo: i64, hi: i64) {
        self.t += lo + self.rng.below((hi - lo + 1) as u64) as i64;
    }

    fn procedure(&mut self, name: &str) {
        self.push(EventKind::Procedure {
            name: name.into(),
            value: None,
            seat: None,
            amount_cents: None,
        });
    }

    fn bet_id(&mut self) -> Id {
        self.next_bet += 1;
        format!("{}/b{}", self.round_id, self.next_bet).into()
    }

    fn draw(&mut self) -> Card {
        let i = self.rng.below(self.deck.len() as u64) as usize;
        self.deck.swap_remove(i)
    }

    fn bet(&mut self, b: Bet) {
        self.push(EventKind::Bet(b));
        self.wait(800, 3_000);
    }
}

/// The policy: call with a pair or better (a low pair passed now and then), with ace-king
/// mostly, with a lesser ace now and then, otherwise rarely.
fn policy(rng: &mut SimRng, r: &eval::Ranked) -> Choice {
    let call = match r.category {
        Category::Pair if r.key[0] <= 5 => !rng.chance(1, 8),
        Category::HighCard => {
            if r.key[0] == 14 && r.key[1] == 13 {
                rng.chance(3, 4)
            } else if r.key[0] == 14 {
                rng.chance(1, 6)
            } else {
                rng.chance(1, 20)
            }
        }
        _ => true,
    };
    if call { Choice::Call } else { Choice::Pass }
}

fn hand(cards: &[Card]) -> [Card; 5] {
    let mut h = [Card::new(rules_core::Rank::Two, rules_core::Suit::Spades); 5];
    for (k, c) in cards.iter().take(5).enumerate() {
        h[k] = *c;
    }
    h
}

/// [`Simulate::simulate`] with the jackpot's value before the round (`None`: the
/// [`default_jackpot_before`]); ignored at a table without a jackpot.
#[allow(clippy::too_many_arguments)]
pub fn simulate_with_jackpot(
    table: &TableConfig,
    cfg: &PsdConfig,
    state: &PsdState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    mistake: Option<&str>,
    jackpot_before_cents: Option<Cents>,
) -> Result<Round, SimError> {
    let m = match mistake {
        None => None,
        Some(id) => {
            let m = Mistake::parse(id).ok_or_else(|| SimError::UnknownMistake(id.to_string()))?;
            if m == Mistake::JackpotChipLate && cfg.jackpot.is_none() {
                return Err(not_applicable(id, "the table has no jackpot"));
            }
            Some(m)
        }
    };
    let jp = cfg
        .jackpot
        .as_ref()
        .map(|j| jackpot_before_cents.unwrap_or(j.start));
    let Some(m) = m else {
        return build(table, cfg, state, &round_id, start_ms, rng, None, jp);
    };
    let spec = m.spec();
    let mut want: Vec<&str> = spec.codes.to_vec();
    want.sort_unstable();
    for _ in 0..ATTEMPTS {
        let round = build(table, cfg, state, &round_id, start_ms, rng, Some(m), jp)?;
        let adj = PokerSemDescarteEngine::adjudicate(
            cfg,
            &mut state.clone(),
            &round,
            &Options::default(),
        )?;
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
/// re-derive the jackpot bets' reported results, their prizes paid and the jackpot displays,
/// every other result left as reported. `state` is the table state the round was simulated
/// from.
pub fn reprice_jackpot(
    cfg: &PsdConfig,
    state: &PsdState,
    round: &mut Round,
    jackpot_before_cents: Cents,
) -> Result<(), SimError> {
    if cfg.jackpot.is_none() {
        return Ok(());
    }
    round.jackpot_before_cents = Some(jackpot_before_cents);
    let mut bare = round.clone();
    bare.settlement = None;
    let adj =
        PokerSemDescarteEngine::adjudicate(cfg, &mut state.clone(), &bare, &Options::default())?;
    let chips: Vec<Id> = round
        .bets()
        .filter(|(_, b)| b.bet_type == "jackpot")
        .map(|(_, b)| b.id.clone())
        .collect();
    if let Some(s) = round.settlement.as_mut()
        && !s.void
    {
        for r in &mut s.results {
            if chips.contains(&r.bet_id)
                && let Some(o) = adj.bet(&r.bet_id)
            {
                r.net_cents = o.due_net_cents;
            }
        }
    }
    let first_card = round.events.iter().position(|e| {
        matches!(
            e.kind,
            EventKind::Card {
                to: Recipient::Seat { .. } | Recipient::Dealer,
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

fn display_values(adj: &rules_core::Adjudication, before: Cents) -> (Cents, Cents) {
    match &adj.jackpot {
        Some(a) => (
            ((i128::from(before) * 10_000 + i128::from(a.contributions_e4)) / 10_000) as Cents,
            a.value_after_e4 / 10_000,
        ),
        None => (before, before),
    }
}

/// Play one round, `m` steered in, and settle it (honestly, then the mistake).
#[allow(clippy::too_many_arguments)]
fn build(
    _table: &TableConfig,
    cfg: &PsdConfig,
    state: &PsdState,
    round_id: &Id,
    start_ms: i64,
    rng: &mut SimRng,
    m: Option<Mistake>,
    jp_before: Option<Cents>,
) -> Result<Round, SimError> {
    let mut s = Sim {
        rng,
        round_id,
        events: Vec::with_capacity(96),
        t: start_ms,
        deck: Card::deck().collect(),
        next_bet: 0,
    };

    // Who plays: 1 to 7, never more than the boxes (r.5); one player for `misdeal_settled`.
    let boxes = cfg.seats.clamp(1, 7);
    let single = m == Some(Mistake::MisdealSettled);
    let n = if single {
        1
    } else {
        let weights: [u64; 7] = [2, 3, 5, 6, 5, 3, 2];
        let k = usize::from(boxes);
        let total: u64 = weights[..k].iter().sum();
        let mut r = s.rng.below(total);
        let mut n = 1;
        for (i, w) in weights[..k].iter().enumerate() {
            if r < *w {
                n = i + 1;
                break;
            }
            r -= w;
        }
        n
    };
    let mut all: Vec<u8> = (1..=cfg.seats.max(1)).collect();
    s.rng.shuffle(&mut all);
    let mut seats: Vec<u8> = all.into_iter().take(n).collect();
    seats.sort_unstable();

    // The deck (r.16).
    if s.rng.chance(1, 40) {
        let who = format!("dealer-{}", 1 + s.rng.below(6));
        s.push(EventKind::Role {
            role: "dealer".into(),
            seat: None,
            player: Some(who.into()),
        });
        s.wait(1_000, 3_000);
    }
    s.procedure("shuffle");
    s.wait(15_000, 40_000);
    if !cfg.shuffler {
        s.procedure("cut");
        s.wait(2_000, 5_000);
        let c = s.draw();
        s.push(EventKind::Card {
            to: Recipient::Burn,
            card: c,
            face_up: false,
        });
        s.wait(500, 1_500);
    }

    // Antes and jackpot chips (r.13, r.16).
    let late_chip_seat = (m == Some(Mistake::JackpotChipLate))
        .then(|| seats[s.rng.below(seats.len() as u64) as usize]);
    let mut players: Vec<Player> = Vec::with_capacity(seats.len());
    for &seat in &seats {
        let hi = (cfg.max / cfg.min).max(1);
        let ks: [i64; 12] = [1, 1, 1, 1, 2, 2, 2, 3, 4, 5, 10, 25];
        let k = (*s.rng.pick(&ks).unwrap_or(&1)).min(hi);
        let ante_cents = k * cfg.min;
        let id: Id = format!("P{seat}").into();
        let ante = s.bet_id();
        s.bet(Bet::new(&ante, "ante", ante_cents).seat(seat).player(&id));
        let chip = match &cfg.jackpot {
            Some(j) if !single && late_chip_seat != Some(seat) && s.rng.chance(1, 2) => {
                let c = s.bet_id();
                s.bet(
                    Bet::new(&c, "jackpot", j.chip)
                        .seat(seat)
                        .player(&id)
                        .chips(1),
                );
                Some(c)
            }
            _ => None,
        };
        players.push(Player {
            seat,
            id,
            ante,
            ante_cents,
            chip,
            cards: Vec::with_capacity(5),
        });
    }
    s.push(EventKind::NoMoreBets);
    s.wait(1_000, 2_000);
    if let (Some(seat), Some(j)) = (late_chip_seat, cfg.jackpot.as_ref()) {
        // The mistake `jackpot_chip_late`: a chip after the call.
        if let Some(p) = players.iter_mut().find(|p| p.seat == seat) {
            let c = s.bet_id();
            s.bet(
                Bet::new(&c, "jackpot", j.chip)
                    .seat(seat)
                    .player(&p.id)
                    .chips(1),
            );
            p.chip = Some(c);
        }
    }
    if let (Some(j), Some(before)) = (cfg.jackpot.as_ref(), jp_before) {
        let chips = players.iter().filter(|p| p.chip.is_some()).count() as i128;
        let v1 = (i128::from(before) * 10_000
            + chips * i128::from(j.chip) * i128::from(j.increment_bp))
            / 10_000;
        s.push(EventKind::JackpotDisplay {
            value_cents: v1 as Cents,
        });
        s.wait(300, 800);
    }

    // The bank's five cards: dealt in turn from the shuffled deck; for the mistake
    // `paid_multiple_on_non_qualifying_bank` five that do not qualify (r.18).
    let mut bank: Vec<Card> = Vec::with_capacity(5);
    if m == Some(Mistake::PaidMultipleOnNonQualifyingBank) {
        loop {
            let five: Vec<Card> = (0..5).map(|_| s.draw()).collect();
            if !eval::qualifies(&eval::rank(&hand(&five))) {
                bank = five;
                break;
            }
            s.deck.extend(five);
        }
    }
    let steered_bank = !bank.is_empty();

    // The deal (r.16); for `misdeal_settled` a player's card comes face up.
    let order: Vec<Recipient> = if cfg.shuffler {
        let mut v = Vec::with_capacity(5 * (seats.len() + 1));
        for &seat in &seats {
            v.extend(std::iter::repeat_n(Recipient::seat(seat), 5));
        }
        v.extend(std::iter::repeat_n(Recipient::Dealer, 5));
        v
    } else {
        let mut v = Vec::with_capacity(5 * (seats.len() + 1));
        for _ in 0..5 {
            v.extend(seats.iter().map(|&x| Recipient::seat(x)));
            v.push(Recipient::Dealer);
        }
        v
    };
    let exposed_at: Option<usize> = if m == Some(Mistake::MisdealSettled) {
        let seat_slots: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Recipient::Seat { .. }))
            .map(|(i, _)| i)
            .collect();
        s.rng.pick(&seat_slots).copied()
    } else {
        None
    };
    let mut bank_dealt = 0usize;
    for (i, to) in order.iter().enumerate() {
        let card = match to {
            Recipient::Dealer if steered_bank => {
                bank_dealt += 1;
                bank[bank_dealt - 1]
            }
            _ => s.draw(),
        };
        let face_up = match to {
            Recipient::Dealer => {
                if !steered_bank {
                    bank.push(card);
                    bank_dealt += 1;
                }
                bank_dealt == 5
            }
            _ => exposed_at == Some(i),
        };
        if let Recipient::Seat { seat, .. } = to
            && let Some(p) = players.iter_mut().find(|p| p.seat == *seat)
        {
            p.cards.push(card);
        }
        s.push(EventKind::Card {
            to: *to,
            card,
            face_up,
        });
        s.wait(400, 1_000);
    }

    let mut called: Vec<(usize, Id, Cents)> = Vec::new();
    let mut passed: Vec<usize> = Vec::new();
    let mut collected: Vec<Id> = Vec::new();
    {
        s.wait(1_000, 2_000);
        s.procedure("look_at_cards");
        s.wait(5_000, 15_000);
        // Decisions (r.17), seat by seat; the mistakes that need a call or a pass get one.
        let ranked: Vec<eval::Ranked> = players
            .iter()
            .map(|p| eval::rank(&hand(&p.cards)))
            .collect();
        let mut choices: Vec<Choice> = ranked.iter().map(|r| policy(s.rng, r)).collect();
        let strength = |k: usize| (ranked[k].category, ranked[k].key);
        let best = || (0..players.len()).max_by_key(|&k| strength(k));
        let worst = || (0..players.len()).min_by_key(|&k| strength(k));
        let mut short_call: Option<usize> = None;
        match m {
            Some(Mistake::PaidMultipleOnNonQualifyingBank) => {
                if !choices.contains(&Choice::Call)
                    && let Some(b) = best()
                {
                    choices[b] = Choice::Call;
                }
            }
            Some(Mistake::CallNotDoubleAnte) => {
                let k = best().unwrap_or(0);
                choices[k] = Choice::Call;
                short_call = Some(k);
            }
            Some(Mistake::MisdealSettled) => choices.iter_mut().for_each(|c| *c = Choice::Pass),
            Some(Mistake::PassPaid) => {
                if !choices.contains(&Choice::Pass)
                    && let Some(w) = worst()
                {
                    choices[w] = Choice::Pass;
                }
            }
            _ => {}
        }
        for (k, p) in players.iter().enumerate() {
            match choices[k] {
                Choice::Call => {
                    let id = s.bet_id();
                    let amount = if short_call == Some(k) {
                        p.ante_cents
                    } else {
                        2 * p.ante_cents
                    };
                    s.bet(
                        Bet::new(&id, "call", amount)
                            .seat(p.seat)
                            .player(&p.id)
                            .on_bet(&p.ante),
                    );
                    called.push((k, id, amount));
                }
                Choice::Pass => {
                    s.push(EventKind::Decision(Decision::new(p.seat, "pass")));
                    s.wait(1_000, 3_000);
                    // The passed ante is collected at once (r.17); for the mistake
                    // `pass_paid` the first one is given back instead.
                    if !(m == Some(Mistake::PassPaid) && passed.is_empty()) {
                        s.push(EventKind::Collect {
                            bet_ids: vec![p.ante.clone()],
                        });
                        s.wait(500, 1_500);
                        collected.push(p.ante.clone());
                    }
                    passed.push(k);
                }
            }
        }
        s.wait(1_000, 3_000);
        s.procedure("reveal_dealer");
        s.wait(2_000, 5_000);
    }

    // What the rules say is due: the engine itself, on a copy of the state.
    let mut round = Round {
        round_id: round_id.clone(),
        opened_at_ms: Some(start_ms),
        jackpot_before_cents: jp_before,
        events: std::mem::take(&mut s.events),
        settlement: None,
    };
    let adj = if m == Some(Mistake::MisdealSettled) {
        // The casino did not see the exposed card: it settles the round as played.
        let mut clean = round.clone();
        for e in &mut clean.events {
            if let EventKind::Card {
                to: Recipient::Seat { .. },
                face_up,
                ..
            } = &mut e.kind
            {
                *face_up = false;
            }
        }
        PokerSemDescarteEngine::adjudicate(cfg, &mut state.clone(), &clean, &Options::default())?
    } else {
        PokerSemDescarteEngine::adjudicate(cfg, &mut state.clone(), &round, &Options::default())?
    };
    let mut settlement = honest_settlement(&adj);
    let set = |st: &mut rules_core::Settlement, id: &Id, net: Cents| {
        if let Some(r) = st.results.iter_mut().find(|r| &r.bet_id == id) {
            r.net_cents = net;
        }
    };
    let mut returned: Option<Id> = None;
    match m {
        Some(Mistake::PaidMultipleOnNonQualifyingBank) => {
            // The strongest call is paid as if the bank had qualified.
            if let Some((k, id, amount)) = called
                .iter()
                .max_by_key(|(k, _, _)| eval::rank(&hand(&players[*k].cards)).category)
            {
                let cat = eval::rank(&hand(&players[*k].cards)).category;
                set(&mut settlement, id, amount * crate::paytable::multiple(cat));
            }
        }
        Some(Mistake::PassPaid) => {
            if let Some(&k) = passed.first() {
                let id = players[k].ante.clone();
                set(&mut settlement, &id, 0);
                returned = Some(id);
            }
        }
        _ => {}
    }

    // Passed antes were collected at the pass (r.17); the rest now, then the prizes.
    let mut t_ms = s.t + 2_000;
    let mut tail: Vec<EventKind> = Vec::new();
    if !settlement.void {
        let losers: Vec<Id> = settlement
            .results
            .iter()
            .filter(|r| r.net_cents < 0 && !collected.contains(&r.bet_id))
            .map(|r| r.bet_id.clone())
            .collect();
        if !losers.is_empty() {
            tail.push(EventKind::Collect { bet_ids: losers });
        }
        for r in settlement.results.iter().filter(|r| r.net_cents > 0) {
            if returned.as_ref() == Some(&r.bet_id) {
                continue;
            }
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
            tail.push(EventKind::JackpotDisplay {
                value_cents: display_values(&adj, before).1,
            });
        }
    }
    for (k, e) in tail.into_iter().enumerate() {
        round.events.push(RoundEvent::at(t_ms, e));
        t_ms += 1_500 + 500 * (k as i64 % 3);
    }
    round.settlement = Some(settlement);
    Ok(round)
}

impl Simulate for PokerSemDescarteEngine {
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
        config: &PsdConfig,
        state: &PsdState,
        round_id: Id,
        start_ms: i64,
        rng: &mut SimRng,
        mistake: Option<&str>,
    ) -> Result<Round, SimError> {
        simulate_with_jackpot(table, config, state, round_id, start_ms, rng, mistake, None)
    }
}
