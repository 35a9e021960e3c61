//! Chemin de fer (P217/2007 T.II S.I), played by the rules.
//!
//! * **Players** (r.3, r.16, r.21, r.24): seats 1-9, at least four seated (a census of `seated`
//!   roles when the table opens; now and then a player sits down at the start of a coup or
//!   leaves at its end, never below four), player `p<seat>`; a few standing players `w<seat>`
//!   behind a seated one, recorded with a `standing` role.
//! * **The shoe** (r.4, r.12-r.14, r.106(d)): the table's decks (6 by default), shuffled and cut;
//!   the first card burned and as many more as its value (a court card or a ten: 10); the warning
//!   card between the 7th and 8th card from the end, so the coup in which it comes out is the
//!   last one and the next starts with a new shoe; a coup never starts with fewer than 6 cards.
//! * **The hand** (r.29, r.31-r.34, r.46, r.76-r.91): the first hand to the first seated player
//!   on the dealer's right; after a loss, to the next seated player on the right (who may let it
//!   pass: `decline_hand`); after a win the banker continues with the accumulated bank (with or
//!   without the cagnotte), or reduces it as the rules allow (twice the stakes won under a
//!   partial cover, half after his 3rd, 5th, ... won coup or at a new shoe), the reduction
//!   recorded as a `garage`; after a null coup the bank stays. After a win or a null coup he may
//!   pass the hand ("Passo a mão"), sometimes declaring a reduction first (note 15); a passed
//!   hand is taken at its level by the first player on the passer's right who wants it, or kept
//!   by the passer, or auctioned from the fixed base by fixed increments (the highest bid wins;
//!   no bid: the next player takes it with the minimum bank). At the start of a hand an
//!   associate may add an equal amount (r.31).
//! * **Bets** (r.36, r.43, r.45-r.61): a banco suivi by the punter who lost a banco (r.51, r.54),
//!   bancos called by one or two punters and given by priority (r.48, r.49: seated first), now and then a banco avec
//!   la table completed by others (r.55), otherwise bets in multiples of the minimum (a few on the
//!   line at half value) up to the bank or less; the cards to the banco player or the seated
//!   punter with the highest bet, by seat priority on equal bets (r.60, r.61).
//! * **The coup** (r.62-r.69): P, B, P, B; the ponto abates 8-9, says "não" on 6-7, "carta" on
//!   0-4 and chooses on 5 (with a full banco he now and then makes a false draw, r.70); the banker
//!   abates 8-9, otherwise follows his table, choosing at random in his two optional cases.
//! * **Settlement**: the engine's own (1 to 1 on the covered stakes, null coups, the cagnotte as
//!   house take).

use rules_core::{
    Bet, Card, Cents, Decision, EventKind, Id, Options, Recipient, ReportedNet, Round, SimError,
    SimRng, TableConfig, honest_settlement,
};

use super::{Ctx, Deck, Mistake, ShoePos, Step, ladder, not_applicable, plan};
use crate::cards::{card_value, score};
use crate::chemin_de_fer::bank::{BankResult, first_seat, next_right};
use crate::chemin_de_fer::{CfConfig, Participant, distance};
use crate::tableau::{Cf, cf_banker};
use crate::{BaccaratState, CfTableState};

/// The warning card lies between the 7th and the 8th card from the end (r.13).
const WARNING_FROM_END: u32 = 7;

fn pid(seat: u8) -> Id {
    format!("p{seat}").into()
}

fn seated(seat: u8) -> Participant {
    Participant {
        seat: Some(seat),
        player: Some(pid(seat)),
        standing: false,
    }
}

fn bit(seat: u8) -> u16 {
    1u16 << seat
}

fn seats_of(mask: u16) -> Vec<u8> {
    (1..=9u8).filter(|s| mask & bit(*s) != 0).collect()
}

fn decision(who: &Participant, action: &str, amount: Option<Cents>) -> EventKind {
    EventKind::Decision(Decision {
        seat: who.seat,
        hand: 1,
        player: who.player.clone(),
        action: action.into(),
        amount_cents: amount,
        bet_id: None,
    })
}

fn role(role: &str, who: &Participant) -> EventKind {
    EventKind::Role {
        role: role.into(),
        seat: who.seat,
        player: who.player.clone(),
    }
}

fn bet_of(id: &str, kind: &str, who: &Participant, amount: Cents) -> Bet {
    let mut b = Bet::new(id, kind, amount);
    if let Some(s) = who.seat {
        b = b.seat(s);
    }
    if let Some(p) = &who.player {
        b = b.player(p);
    }
    if who.standing {
        b = b.attr("standing", "true");
    }
    b
}

/// Who banks this coup, with how much, and what the table records on the way.
struct Hand {
    banker: Participant,
    /// The banker's own share of the bank.
    bank: Cents,
    /// The associate and his equal share (r.31).
    associate: Option<(Participant, Cents)>,
    /// Events before the bank bet (declines, an auction, a garage).
    pre: Vec<EventKind>,
    /// Whether this is a new hand (counts start again).
    new_hand: bool,
}

impl Hand {
    fn capital(&self) -> Cents {
        self.bank + self.associate.as_ref().map_or(0, |a| a.1)
    }
}

/// The kind of cover this coup gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cover {
    Ordinary,
    Banco,
    Suivi,
    AvecLaTable,
}

/// A punter's bet as placed.
struct Placed {
    id: Id,
    kind: &'static str,
    who: Participant,
    /// Face amount; the stake in play is half of it on the line (r.43).
    amount: Cents,
    on_line: bool,
}

impl Placed {
    fn stake(&self) -> Cents {
        if self.on_line {
            self.amount / 2
        } else {
            self.amount
        }
    }
}

/// The result of a coup for the punters: 1 ponto wins, -1 the banker wins, 0 null.
fn result(ponto: u8, banker: u8) -> i8 {
    match ponto.cmp(&banker) {
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
    }
}

/// A new bank: the minimum or a round multiple of it.
fn new_bank(rng: &mut SimRng, min_bank: Cents) -> Cents {
    const K: [i64; 8] = [1, 1, 1, 1, 2, 2, 3, 5];
    min_bank * K[rng.below(8) as usize]
}

/// Play one coup. See the module docs.
pub(crate) fn simulate(
    _table: &TableConfig,
    cfg: &CfConfig,
    state: &BaccaratState,
    round_id: Id,
    start_ms: i64,
    rng: &mut SimRng,
    m: Option<Mistake>,
) -> Result<Round, SimError> {
    let h = &state.hand;
    let unit = cfg.min_bet_cents.unwrap_or(10_000).max(1);
    let min_bank = cfg.min_bank_cents.unwrap_or(unit * 10).max(unit);
    let total = u32::from(cfg.decks) * 52;
    let shoe = state.shoe;
    let reshuffle = !shoe.known
        || (shoe.warning_out && shoe.coups_since_warning >= 1)
        // Only a state from elsewhere can be this far without the warning card (r.106(d)).
        || total.saturating_sub(shoe.cards_out) < 6;
    let mut deck = if reshuffle {
        Deck::new(cfg.decks)
    } else {
        Deck::after(cfg.decks, &shoe.seen)
    };
    // Late in a shoe the cards left may not give the coup a mistake needs: the coup then opens a
    // new shoe, as when the cards are replaced before the warning card (r.5, r.12, r.13; see the
    // module docs of `sim`).
    let reshuffle = reshuffle || !offers(&deck, m);
    if reshuffle {
        deck = Deck::new(cfg.decks);
    }
    let first_of_shoe = reshuffle || shoe.coups == 0;
    let mut pos = ShoePos {
        out: if reshuffle { 0 } else { shoe.cards_out },
        warning_at: Some(total - WARNING_FROM_END),
        warning_out: !reshuffle && shoe.warning_out,
    };
    let mut ctx = Ctx::new(rng, start_ms);

    // --- Who sits (r.16, r.21): the census when the table opens, an arrival now and then.
    let mut census_events = Vec::new();
    let mut mask = if h.census_known {
        h.seated_mask & 0x3FE
    } else {
        let n = ctx.rng.range(5, 9) as usize;
        let mut all: Vec<u8> = (1..=9).collect();
        ctx.rng.shuffle(&mut all);
        all[..n].iter().fold(0u16, |m, s| m | bit(*s))
    };
    let mut hand = choose_hand(cfg, h, mask, first_of_shoe, min_bank, unit, &mut ctx)?;
    if let Some(s) = hand.banker.seat
        && !hand.banker.standing
    {
        // A state without a census: whoever the hand falls to is seated.
        mask |= bit(s);
    }
    if !h.census_known {
        for s in seats_of(mask) {
            census_events.push(role("seated", &seated(s)));
        }
    } else {
        let mut add = Vec::new();
        if mask.count_ones() < 9 && ctx.rng.chance(3, 100) {
            let empty: Vec<u8> = (1..=9).filter(|s| mask & bit(*s) == 0).collect();
            add.extend(ctx.rng.pick(&empty).copied());
        }
        while (mask | add.iter().fold(0, |m, s| m | bit(*s))).count_ones() < 4 {
            let s = (1..=9)
                .find(|s| (mask | add.iter().fold(0, |m, x| m | bit(*x))) & bit(*s) == 0)
                .unwrap_or(9);
            add.push(s);
        }
        for s in add {
            mask |= bit(s);
            census_events.push(role("seated", &seated(s)));
        }
    }
    for e in census_events {
        ctx.push(e);
    }

    // --- A new shoe (r.12, r.13): shuffle, cut, burn by value.
    if reshuffle {
        ctx.procedure("shuffle");
        ctx.wait(60_000, 180_000);
        ctx.procedure("cut");
        ctx.wait(5_000, 15_000);
        let first = deck.draw(ctx.rng);
        ctx.card(&mut pos, Recipient::Burn, first, true);
        let more = match card_value(first) {
            0 => 10,
            v => v,
        };
        for _ in 0..more {
            let c = deck.draw(ctx.rng);
            ctx.card(&mut pos, Recipient::Burn, c, false);
        }
        ctx.wait(2_000, 6_000);
    }

    // --- The hand and the bank (r.29-r.35, r.76-r.91).
    for e in std::mem::take(&mut hand.pre) {
        ctx.push(e);
        ctx.wait(2_000, 8_000);
    }
    ctx.push(role("banker", &hand.banker));
    ctx.push(EventKind::Bet(bet_of(
        "bank",
        "bank",
        &hand.banker,
        hand.bank,
    )));
    if let Some((a, amount)) = &hand.associate {
        ctx.push(EventKind::Bet(
            bet_of("assoc", "associate", a, *amount).on_bet("bank"),
        ));
    }
    ctx.wait(3_000, 10_000);
    let capital = hand.capital();

    // --- The punters (r.36, r.43, r.45-r.61).
    let banker = hand.banker.clone();
    let associate = hand.associate.as_ref().map(|a| a.0.clone());
    let mut punters: Vec<Participant> = seats_of(mask)
        .into_iter()
        .map(seated)
        .filter(|p| !p.same(&banker) && !associate.as_ref().is_some_and(|a| a.same(p)))
        .collect();
    let n_standing = ctx.rng.below(3);
    for _ in 0..n_standing {
        let s = punters[ctx.rng.below(punters.len() as u64) as usize]
            .seat
            .unwrap_or(1);
        let w = Participant {
            seat: Some(s),
            player: Some(format!("w{s}").into()),
            standing: true,
        };
        if !punters.iter().any(|p| p.same(&w)) {
            punters.push(w);
        }
    }
    // The suivi holder is at the table if he is still seated (or standing by).
    let suivi = h.suivi.clone().filter(|s| {
        !s.same(&banker)
            && !associate.as_ref().is_some_and(|a| a.same(s))
            && (s.standing || s.seat.is_some_and(|x| mask & bit(x) != 0))
    });
    if let Some(s) = &suivi
        && !punters.iter().any(|p| p.same(s))
    {
        punters.push(s.clone());
    }
    // r.24: the standing players are recorded as such.
    for p in punters.iter().filter(|p| p.standing) {
        ctx.push(role("standing", p));
    }
    // r.89: who passed the hand after a null coup may not banco on the next coup.
    let no_banco: Option<Participant> = h
        .passed
        .as_ref()
        .filter(|p| p.after_null)
        .map(|p| p.passer.clone());
    let may_banco = |p: &Participant| !no_banco.as_ref().is_some_and(|n| n.same(p));
    let p_banco = if capital <= 2 * min_bank {
        30
    } else if capital <= 8 * min_bank {
        18
    } else {
        6
    };
    let mut cover = if m == Some(Mistake::BankerWrongDraw) {
        // r.70: with a full banco a banker's false draw is no fault; the mistake needs none.
        if ctx.rng.chance(15, 100) {
            Cover::AvecLaTable
        } else {
            Cover::Ordinary
        }
    } else if suivi.is_some() && ctx.rng.chance(55, 100) {
        Cover::Suivi
    } else if ctx.rng.chance(p_banco, 100) {
        Cover::Banco
    } else if ctx.rng.chance(7, 100) {
        Cover::AvecLaTable
    } else {
        Cover::Ordinary
    };
    if cover == Cover::Ordinary && capital < unit {
        cover = Cover::Banco;
    }
    let mut placed: Vec<Placed> = Vec::new();
    let mut next = 0u32;
    let mut new_id = |prefix: &str| {
        next += 1;
        format!("{prefix}{next}")
    };
    let mut holder: Option<Participant> = None;
    match cover {
        Cover::Suivi => {
            let s = suivi.clone().unwrap_or_default();
            ctx.push(decision(&s, "banco_suivi", None));
            ctx.wait(1_000, 3_000);
            placed.push(Placed {
                id: new_id("s").into(),
                kind: "banco_suivi",
                who: s.clone(),
                amount: capital,
                on_line: false,
            });
            holder = Some(s);
        }
        Cover::Banco => {
            let mut able: Vec<&Participant> = punters.iter().filter(|p| may_banco(p)).collect();
            ctx.rng.shuffle(&mut able);
            let n = if able.len() >= 2 && ctx.rng.chance(3, 10) {
                2
            } else {
                1
            };
            let callers: Vec<Participant> = able.iter().take(n).map(|p| (*p).clone()).collect();
            // r.48, r.49: seated before standing, then from the banker's right, then first.
            if let Some(top) = callers
                .iter()
                .enumerate()
                .min_by_key(|(i, p)| (p.standing, distance(banker.seat, p.seat), *i))
                .map(|(_, p)| p.clone())
            {
                for c in &callers {
                    ctx.push(decision(c, "banco", None));
                    ctx.wait(500, 2_000);
                }
                placed.push(Placed {
                    id: new_id("s").into(),
                    kind: "banco",
                    who: top.clone(),
                    amount: capital,
                    on_line: false,
                });
                holder = Some(top);
            } else {
                cover = Cover::Ordinary;
            }
        }
        Cover::AvecLaTable => {
            let able: Vec<&Participant> = punters
                .iter()
                .filter(|p| may_banco(p) && !h.avec_la_table.as_ref().is_some_and(|a| a.same(p)))
                .collect();
            match ctx.rng.pick(&able).map(|p| (*p).clone()) {
                Some(x) => {
                    // r.55: at least half the bank.
                    let half = (capital + 1) / 2;
                    let stake = ((half + unit - 1) / unit * unit + unit * ctx.rng.below(3) as i64)
                        .min(capital)
                        .max(half);
                    ctx.push(decision(&x, "banco_avec_la_table", None));
                    ctx.wait(1_000, 3_000);
                    placed.push(Placed {
                        id: new_id("s").into(),
                        kind: "banco_avec_la_table",
                        who: x.clone(),
                        amount: stake,
                        on_line: false,
                    });
                    holder = Some(x);
                }
                None => cover = Cover::Ordinary,
            }
        }
        Cover::Ordinary => {}
    }
    if matches!(cover, Cover::Ordinary | Cover::AvecLaTable) {
        // r.58: each punter bets what he likes, in multiples of the minimum, up to the bank.
        let mut left = capital - placed.iter().map(Placed::stake).sum::<Cents>();
        // Seated punters first (one of them holds the cards, r.60), then the standing ones.
        let others = |standing: bool| -> Vec<Participant> {
            punters
                .iter()
                .filter(|p| p.standing == standing && !holder.as_ref().is_some_and(|x| x.same(p)))
                .cloned()
                .collect()
        };
        let (mut sitting, mut behind) = (others(false), others(true));
        ctx.rng.shuffle(&mut sitting);
        ctx.rng.shuffle(&mut behind);
        let n_sitting = sitting.len();
        for (k, p) in sitting.into_iter().chain(behind).enumerate() {
            if left < unit {
                break;
            }
            // The last seated punter bets if no seated one has yet and nobody holds the cards.
            let must = holder.is_none() && k + 1 == n_sitting && placed.is_empty();
            if !must && !ctx.rng.chance(65, 100) {
                continue;
            }
            let stake = ladder(ctx.rng, unit).min(left / unit * unit);
            let on_line = ctx.rng.chance(4, 100);
            left -= stake;
            placed.push(Placed {
                id: new_id("s").into(),
                kind: "ponto",
                who: p,
                amount: if on_line { 2 * stake } else { stake },
                on_line,
            });
        }
        if holder.is_none() {
            // r.60, r.61: the seated punter with the highest bet, then by seat priority.
            holder = placed
                .iter()
                .enumerate()
                .filter(|(_, b)| !b.who.standing)
                .min_by_key(|(i, b)| {
                    (
                        std::cmp::Reverse(b.stake()),
                        distance(banker.seat, b.who.seat),
                        *i,
                    )
                })
                .map(|(_, b)| b.who.clone());
        }
    }
    for b in &placed {
        let mut bet = bet_of(&b.id, b.kind, &b.who, b.amount);
        if b.on_line {
            bet = bet.attr("on_line", "true");
        }
        ctx.push(EventKind::Bet(bet));
        ctx.wait(1_000, 4_000);
    }
    let full_banco = matches!(cover, Cover::Banco | Cover::Suivi);
    let holder = match holder {
        Some(x) if !(full_banco && m == Some(Mistake::BankerWrongDraw)) => x,
        _ => {
            return Err(not_applicable(
                m.unwrap_or(Mistake::BankerWrongDraw),
                "the bank cannot be covered without a full banco",
            ));
        }
    };
    ctx.push(role("card_holder", &holder));
    ctx.wait(2_000, 6_000);
    ctx.push(EventKind::NoMoreBets);
    if m == Some(Mistake::LateBet) {
        // r.40: a bet after "nada mais".
        ctx.wait(500, 2_000);
        let p = punters[ctx.rng.below(punters.len() as u64) as usize].clone();
        let id: Id = format!("late{}", 1 + ctx.rng.below(9)).into();
        let amount = ladder(ctx.rng, unit);
        ctx.push(EventKind::Bet(bet_of(&id, "ponto", &p, amount)));
    }
    ctx.wait(1_000, 3_000);

    // --- The coup (r.62-r.69).
    let coup = play(&mut deck, ctx.rng, m, full_banco)?;
    ctx.card(&mut pos, Recipient::Ponto, coup.p[0], false);
    ctx.card(&mut pos, Recipient::Banca, coup.b[0], false);
    ctx.card(&mut pos, Recipient::Ponto, coup.p[1], false);
    ctx.card(&mut pos, Recipient::Banca, coup.b[1], false);
    ctx.wait(2_000, 8_000);
    ctx.push(decision(&holder, coup.call, None));
    ctx.wait(1_000, 3_000);
    if let Some(c) = coup.false_card {
        // The dealer's "carta" although the ponto said "não" (r.106(b)), recorded as what it
        // is: the dealer's call, then the card.
        ctx.push(EventKind::Procedure {
            name: "dealer_call".into(),
            value: Some("carta".into()),
            seat: None,
            amount_cents: None,
        });
        ctx.card(&mut pos, Recipient::Ponto, c, true);
    }
    if let Some(a) = coup.banker_call {
        ctx.push(decision(&banker, a, None));
        ctx.wait(1_000, 2_000);
    }
    if let Some(c) = coup.p3 {
        ctx.card(&mut pos, Recipient::Ponto, c, true);
    }
    if let Some(a) = coup.banker_draw_call {
        ctx.push(decision(&banker, a, None));
        ctx.wait(500, 1_500);
    }
    if let Some(c) = coup.b3 {
        ctx.card(&mut pos, Recipient::Banca, c, true);
    }
    ctx.wait(2_000, 5_000);

    // --- The banker's choice after a win or a null coup (r.76, r.77, r.34, note 15).
    let won_stakes: Cents = cover_stakes(&placed, capital).1;
    let result_rules = coup.result_by_rules;
    let streak = if hand.new_hand { 1 } else { h.won_coups + 1 };
    let pass = match result_rules {
        -1 => {
            let big = capital >= 30 * min_bank;
            let pct = 6 + 10 * u64::from(streak.min(6)) + if big { 30 } else { 0 };
            ctx.rng.chance(pct.min(85), 100)
        }
        0 => ctx.rng.chance(8, 100),
        _ => false,
    };
    if pass {
        if result_rules == -1 && ctx.rng.chance(2, 10) {
            // A reduction declared before passing lowers the level (note 15).
            let acc = capital + won_stakes;
            let fully = won_stakes >= capital;
            let mut levels = Vec::new();
            if streak >= 3 && streak % 2 == 1 {
                levels.push(acc / 2);
            }
            if !fully {
                levels.push(2 * won_stakes);
            }
            if let Some(level) = ctx.rng.pick(&levels).copied()
                && level >= min_bank
                && level < acc
            {
                ctx.push(EventKind::Procedure {
                    name: "garage".into(),
                    value: None,
                    seat: banker.seat,
                    amount_cents: Some(acc - level),
                });
            }
        }
        ctx.push(decision(&banker, "pass_hand", None));
        ctx.wait(1_000, 3_000);
    }
    // A player leaves now and then, never the banker or his associate, never below four.
    if mask.count_ones() > 4 && ctx.rng.chance(2, 100) {
        let may_leave: Vec<u8> = seats_of(mask)
            .into_iter()
            .filter(|s| {
                banker.seat != Some(*s) && associate.as_ref().is_none_or(|a| a.seat != Some(*s))
            })
            .collect();
        if let Some(s) = ctx.rng.pick(&may_leave).copied() {
            ctx.push(role("left", &seated(s)));
        }
    }

    // --- The honest settlement: the engine itself, on a copy of the state.
    let mut round = Round {
        round_id,
        opened_at_ms: Some(start_ms),
        jackpot_before_cents: None,
        events: std::mem::take(&mut ctx.events),
        settlement: None,
    };
    let adj =
        crate::chemin_de_fer::adjudicate(cfg, &mut state.clone(), &round, &Options::default())?;
    let mut settlement = honest_settlement(&adj);
    if m == Some(Mistake::DealerFalseCarta) {
        // The casino settles the coup as dealt instead of rebuilding it.
        let (covered, covered_total) = cover_stakes(&placed, capital);
        let r = coup.result_as_dealt;
        let punters_net: Cents = covered.iter().map(|c| i64::from(r) * c).sum();
        let bank_net = -punters_net;
        let mut nets: Vec<(Id, Cents)> = Vec::new();
        match &hand.associate {
            Some((_, a)) => {
                let share =
                    (i128::from(bank_net) * i128::from(*a) / i128::from(hand.bank + *a)) as Cents;
                nets.push(("bank".into(), bank_net - share));
                nets.push(("assoc".into(), share));
            }
            None => nets.push(("bank".into(), bank_net)),
        }
        for (b, c) in placed.iter().zip(&covered) {
            nets.push((b.id.clone(), i64::from(r) * c));
        }
        settlement.results = nets
            .into_iter()
            .map(|(bet_id, net_cents)| ReportedNet { bet_id, net_cents })
            .collect();
        settlement.house_cents =
            (r == -1 && cfg.cagnotte_bp.is_some()).then(|| cfg.cagnotte_on(covered_total));
    }

    // --- Losing bets collected, prizes paid (r.95: by seat from the banker's right).
    let mut tail = Vec::new();
    let mut losers: Vec<(u8, Id)> = Vec::new();
    let mut winners: Vec<(u8, Id, Cents)> = Vec::new();
    for b in &placed {
        let Some(r) = settlement.results.iter().find(|r| r.bet_id == b.id) else {
            continue;
        };
        let d = distance(banker.seat, b.who.seat);
        if r.net_cents < 0 {
            losers.push((d, b.id.clone()));
        } else if r.net_cents > 0 {
            winners.push((d, b.id.clone(), r.net_cents));
        }
    }
    losers.sort();
    winners.sort();
    if !losers.is_empty() {
        tail.push(EventKind::Collect {
            bet_ids: losers.into_iter().map(|l| l.1).collect(),
        });
    }
    for (_, bet_id, amount_cents) in winners {
        tail.push(EventKind::Pay {
            bet_id,
            amount_cents,
        });
    }
    for k in tail {
        ctx.push(k);
        ctx.wait(1_500, 4_000);
    }
    round.events.append(&mut ctx.events);
    round.settlement = Some(settlement);
    Ok(round)
}

/// The stakes the bank covers, bancos first, then in the order placed (r.45, r.58), and their
/// total.
fn cover_stakes(placed: &[Placed], capital: Cents) -> (Vec<Cents>, Cents) {
    let mut covered = vec![0; placed.len()];
    let mut left = capital;
    for banco_pass in [true, false] {
        for (k, b) in placed.iter().enumerate() {
            if (b.kind != "ponto") != banco_pass {
                continue;
            }
            let c = b.stake().min(left).max(0);
            covered[k] = c;
            left -= c;
        }
    }
    (covered, capital - left)
}

/// Who banks this coup and with what (see the module docs).
fn choose_hand(
    cfg: &CfConfig,
    h: &CfTableState,
    mask: u16,
    first_of_shoe: bool,
    min_bank: Cents,
    unit: Cents,
    ctx: &mut Ctx<'_>,
) -> Result<Hand, SimError> {
    let fresh = |banker: Participant, ctx: &mut Ctx<'_>, pre: Vec<EventKind>| {
        let bank = new_bank(ctx.rng, min_bank);
        // r.31: an associate at the start of a hand, with an equal amount.
        let others: Vec<u8> = seats_of(mask)
            .into_iter()
            .filter(|s| banker.seat != Some(*s))
            .collect();
        let associate = if bank % 2 == 0 && ctx.rng.chance(8, 100) {
            ctx.rng.pick(&others).map(|s| (seated(*s), bank))
        } else {
            None
        };
        Hand {
            banker,
            bank,
            associate,
            pre,
            new_hand: true,
        }
    };
    let Some(prev) = &h.banker else {
        // r.29: the first hand to the first seated player on the dealer's right.
        let s = first_seat(mask).unwrap_or(1);
        return Ok(fresh(seated(s), ctx, Vec::new()));
    };
    if let Some(p) = &h.passed {
        return Ok(passed_hand(cfg, h, p, mask, min_bank, unit, ctx));
    }
    let still_here = |x: &Participant| x.standing || x.seat.is_some_and(|s| mask & bit(s) != 0);
    match h.last_result {
        Some(BankResult::Lost) => {
            // r.32, r.96(c): to the next seated player on the right (r.91 after a standing
            // banker), who may let it pass once.
            let from = if prev.standing || prev.seat.is_none() {
                h.last_seated_banker
            } else {
                prev.seat
            }
            .unwrap_or(9);
            let mut declined = 0u16;
            let mut pre = Vec::new();
            let mut taker = next_right(h, from, declined);
            for _ in 0..2 {
                let Some(c) = taker else { break };
                if !ctx.rng.chance(6, 100) {
                    break;
                }
                let after = next_right(h, from, declined | bit(c));
                match after {
                    Some(d) if d != c && d != from => {
                        pre.push(decision(&seated(c), "decline_hand", None));
                        declined |= bit(c);
                        taker = Some(d);
                    }
                    _ => break,
                }
            }
            let s = taker.unwrap_or(from);
            Ok(fresh(seated(s), ctx, pre))
        }
        Some(BankResult::Won) => {
            // r.46, r.34, r.33: the bank after a win.
            let acc = h.bank_cents + h.won_stakes_cents;
            let cagnotte = cfg.cagnotte_on(h.won_stakes_cents);
            let associate = h.associate.clone().filter(|a| !a.standing && still_here(a));
            let even = |x: &Cents| associate.is_none() || x % 2 == 0;
            let mut keep: Vec<Cents> = vec![acc];
            if cagnotte > 0 {
                keep.push(acc - cagnotte);
            }
            let mut reduce: Vec<Cents> = Vec::new();
            if !h.fully_covered && h.won_stakes_cents > 0 {
                reduce.push(2 * h.won_stakes_cents);
            }
            if (h.won_coups >= 3 && h.won_coups % 2 == 1) || first_of_shoe {
                reduce.push(acc / 2);
                reduce.push(acc - acc / 2);
            }
            keep.retain(|x| *x >= min_bank && even(x));
            reduce.retain(|x| *x >= min_bank && *x < acc && even(x));
            let big = acc >= 20 * min_bank;
            let pick_reduce = !reduce.is_empty()
                && (keep.is_empty() || ctx.rng.chance(if big { 6 } else { 3 }, 10));
            let (capital, associate) = if pick_reduce {
                (
                    reduce[ctx.rng.below(reduce.len() as u64) as usize],
                    associate,
                )
            } else if let Some(k) = ctx.rng.pick(&keep).copied() {
                (k, associate)
            } else {
                (acc, None)
            };
            let mut pre = Vec::new();
            if capital < acc - cagnotte {
                pre.push(EventKind::Procedure {
                    name: "garage".into(),
                    value: None,
                    seat: prev.seat,
                    amount_cents: Some(acc - capital),
                });
            }
            Ok(split(prev.clone(), capital, associate, pre))
        }
        _ => {
            // r.76: after a null coup the bank stays; at a new shoe he may halve (r.33).
            let bank = h.bank_cents;
            let associate = h.associate.clone().filter(|a| !a.standing && still_here(a));
            let half = bank / 2;
            let capital = if first_of_shoe
                && half >= min_bank
                && (associate.is_none() || half % 2 == 0)
                && ctx.rng.chance(3, 10)
            {
                half
            } else {
                bank
            };
            let associate = associate.filter(|_| capital % 2 == 0);
            Ok(split(prev.clone(), capital, associate, Vec::new()))
        }
    }
}

/// The bank of a continuing banker, shared equally with his associate (r.31).
fn split(
    banker: Participant,
    capital: Cents,
    associate: Option<Participant>,
    pre: Vec<EventKind>,
) -> Hand {
    match associate {
        Some(a) => Hand {
            banker,
            bank: capital / 2,
            associate: Some((a, capital / 2)),
            pre,
            new_hand: false,
        },
        None => Hand {
            banker,
            bank: capital,
            associate: None,
            pre,
            new_hand: false,
        },
    }
}

/// r.78-r.90: a passed hand taken at its level, kept by the passer, or auctioned.
fn passed_hand(
    cfg: &CfConfig,
    h: &CfTableState,
    p: &crate::chemin_de_fer::bank::PassedHand,
    mask: u16,
    min_bank: Cents,
    unit: Cents,
    ctx: &mut Ctx<'_>,
) -> Hand {
    let passer = &p.passer;
    let passer_seated = !passer.standing && passer.seat.is_some_and(|s| mask & bit(s) != 0);
    let hand = |banker: Participant, bank: Cents, pre: Vec<EventKind>| Hand {
        banker,
        bank,
        associate: None,
        pre,
        new_hand: true,
    };
    // The seated players in priority from the passer's right (r.78, r.79).
    let from = if passer.standing {
        h.last_seated_banker
    } else {
        passer.seat
    }
    .unwrap_or(9);
    let order: Vec<u8> = (1..=9u8)
        .map(|k| (from + k - 1) % 9 + 1)
        .filter(|s| mask & bit(*s) != 0 && passer.seat != Some(*s))
        .collect();
    let r = ctx.rng.below(100);
    if r < 15 && passer_seated {
        // r.80: nobody takes it; the passer continues with the same amount.
        return hand(passer.clone(), p.bank_cents, Vec::new());
    }
    if r < 65 && !order.is_empty() {
        // r.78, r.80: taken at the level by the first who wants it.
        let mut pre = Vec::new();
        for (k, s) in order.iter().enumerate() {
            if k + 1 < order.len() && ctx.rng.chance(3, 10) {
                pre.push(decision(&seated(*s), "decline_hand", None));
                continue;
            }
            return hand(seated(*s), p.level_cents, pre);
        }
    }
    // r.80-r.87: the auction.
    let mut pre = vec![EventKind::Procedure {
        name: "auction".into(),
        value: None,
        seat: None,
        amount_cents: None,
    }];
    let excluded = |x: &Participant| {
        passer.same(x)
            || p.associate.as_ref().is_some_and(|a| a.same(x))
            || h.auction_excluded.iter().any(|e| e.same(x))
    };
    let mut bidders: Vec<Participant> = order
        .iter()
        .map(|s| seated(*s))
        .filter(|x| !excluded(x))
        .collect();
    ctx.rng.shuffle(&mut bidders);
    let n = if ctx.rng.chance(1, 10) {
        0
    } else {
        1 + ctx.rng.below(3) as usize
    };
    bidders.truncate(n);
    let base = cfg.auction_base_cents.unwrap_or(min_bank);
    let inc = cfg.auction_increment_cents.unwrap_or(unit).max(1);
    // Bids on the grid, at least the minimum bank, all different.
    let first_k = if base >= min_bank {
        0
    } else {
        (min_bank - base + inc - 1) / inc
    };
    let mut ks: Vec<i64> = Vec::new();
    for _ in 0..bidders.len() {
        loop {
            let k = first_k + ctx.rng.below(25) as i64;
            if !ks.contains(&k) {
                ks.push(k);
                break;
            }
        }
    }
    let mut best: Option<(Cents, Participant)> = None;
    for (b, k) in bidders.iter().zip(&ks) {
        let amount = base + k * inc;
        pre.push(decision(b, "bid", Some(amount)));
        if best.as_ref().is_none_or(|(a, _)| amount > *a) {
            best = Some((amount, b.clone()));
        }
    }
    match best {
        Some((amount, winner)) => hand(winner, amount, pre),
        None => {
            // r.85: no bid: the next player in priority with the minimum bank, among those who
            // may take part in the auction (r.86, r.88-r.90: never the passer's associate).
            let barred = seats_of(mask)
                .into_iter()
                .filter(|s| excluded(&seated(*s)))
                .fold(0u16, |m, s| m | bit(s));
            let s = passer
                .seat
                .and_then(|s| next_right(h, s, barred))
                .or(order.iter().find(|s| barred & bit(**s) == 0).copied())
                .or(order.first().copied())
                .unwrap_or(1);
            hand(seated(s), min_bank, pre)
        }
    }
}

/// A coup's cards and calls.
struct Coup {
    p: [Card; 2],
    b: [Card; 2],
    /// The card holder's call.
    call: &'static str,
    /// A card the dealer gave the ponto although he said "não" (the mistake).
    false_card: Option<Card>,
    /// The banker's abate, if any.
    banker_call: Option<&'static str>,
    p3: Option<Card>,
    /// The banker's call on his third card.
    banker_draw_call: Option<&'static str>,
    b3: Option<Card>,
    /// The result the rules give the coup.
    result_by_rules: i8,
    /// The result of the cards as dealt (differs only with the dealer's false "carta").
    result_as_dealt: i8,
}

/// Deal and play a coup (r.62-r.69), or the coup a mistake needs.
fn play(
    deck: &mut Deck,
    rng: &mut SimRng,
    m: Option<Mistake>,
    full_banco: bool,
) -> Result<Coup, SimError> {
    match m {
        Some(Mistake::BankerWrongDraw) => banker_wrong_draw(deck, rng),
        Some(Mistake::DealerFalseCarta) => dealer_false_carta(deck, rng),
        _ => Ok(honest(deck, rng, full_banco)),
    }
}

fn honest(deck: &mut Deck, rng: &mut SimRng, full_banco: bool) -> Coup {
    let p = [deck.draw(rng), deck.draw(rng)];
    let b = [deck.draw(rng), deck.draw(rng)];
    // The order of r.62 is P, B, P, B: the arrays hold each side's two cards.
    let (ps, bs) = (score(&p), score(&b));
    let mut coup = Coup {
        p,
        b,
        call: "nao",
        false_card: None,
        banker_call: None,
        p3: None,
        banker_draw_call: None,
        b3: None,
        result_by_rules: 0,
        result_as_dealt: 0,
    };
    let r = if ps >= 8 {
        // r.64(a): abate; the banker does not draw (r.67).
        coup.call = "abate";
        result(ps, bs)
    } else {
        let by_table = match ps {
            0..=4 => true,
            5 => rng.chance(1, 2),
            _ => false,
        };
        // r.70: with a full banco the ponto may draw against r.64.
        let carta = if full_banco && rng.chance(2, 100) {
            !by_table
        } else {
            by_table
        };
        coup.call = if carta { "carta" } else { "nao" };
        if bs >= 8 {
            // r.67(a): the banker abates; the ponto gets no card.
            coup.banker_call = Some("abate");
            result(ps, bs)
        } else {
            let mut pf = ps;
            let mut third = None;
            if carta {
                let c = deck.draw(rng);
                pf = (ps + card_value(c)) % 10;
                third = Some(card_value(c));
                coup.p3 = Some(c);
            }
            let draws = match cf_banker(bs, third) {
                Cf::T => true,
                Cf::F => false,
                Cf::O => rng.chance(1, 2),
            };
            coup.banker_draw_call = Some(if draws { "carta" } else { "nao" });
            let mut bf = bs;
            if draws {
                let c = deck.draw(rng);
                bf = (bs + card_value(c)) % 10;
                coup.b3 = Some(c);
            }
            result(pf, bf)
        }
    };
    coup.result_by_rules = r;
    coup.result_as_dealt = r;
    coup
}

/// Whether the cards left in the shoe can give the coup mistake `m` needs.
fn offers(deck: &Deck, m: Option<Mistake>) -> bool {
    let left = deck.values_left();
    match m {
        Some(Mistake::BankerWrongDraw) => plan(&left, 0, wrong_draw_step).is_some(),
        Some(Mistake::DealerFalseCarta) => plan(&left, 0, false_carta_step).is_some(),
        _ => true,
    }
}

/// `banker_wrong_draw` as a [`plan`] step over the values of the ponto's two cards, the
/// banker's two, the ponto's third: the ponto on 0-4 draws (r.64(c)), the banker has 3, the
/// ponto's third card is a 2.
fn wrong_draw_step(seq: &[u8]) -> Step {
    match seq.len() {
        2 if (seq[0] + seq[1]) % 10 > 4 => Step::Done(false),
        4 if (seq[2] + seq[3]) % 10 != 3 => Step::Done(false),
        5 => Step::Done(seq[4] == 2),
        _ => Step::More,
    }
}

/// The banker on 3 stands against a ponto's third card of 2 (r.67(d) says draw).
fn banker_wrong_draw(deck: &mut Deck, rng: &mut SimRng) -> Result<Coup, SimError> {
    let mark = deck.mark();
    // Dealt at random where the cards allow, else a complete search of the cards left.
    let mut cards = Vec::with_capacity(5);
    let p0 = deck.draw(rng);
    cards.push(p0);
    cards.extend(deck.draw_where(rng, |c| score(&[p0, c]) <= 4));
    let b0 = deck.draw(rng);
    cards.push(b0);
    cards.extend(deck.draw_where(rng, |c| score(&[b0, c]) == 3));
    cards.extend(deck.draw_where(rng, |c| card_value(c) == 2));
    let values: Vec<u8> = cards.iter().map(|c| card_value(*c)).collect();
    if !matches!(wrong_draw_step(&values), Step::Done(true)) {
        deck.rewind(mark);
        let found = plan(&deck.values_left(), rng.below(10) as u8, wrong_draw_step);
        cards = found
            .and_then(|v| deck.draw_values(rng, &v))
            .ok_or_else(|| {
                not_applicable(Mistake::BankerWrongDraw, "no coup of the shoe offers it")
            })?;
    }
    let (p, b, p3) = ([cards[0], cards[1]], [cards[2], cards[3]], cards[4]);
    let r = result((score(&p) + card_value(p3)) % 10, score(&b));
    Ok(Coup {
        p,
        b,
        call: "carta",
        false_card: None,
        banker_call: None,
        p3: Some(p3),
        banker_draw_call: Some("nao"),
        b3: None,
        result_by_rules: r,
        result_as_dealt: r,
    })
}

/// The results of a dealer's false "carta": the ponto on `ps` said "não", the card `x` went to
/// him anyway, the banker on `bs` drew `y` (or not) by his table against it. The coup as dealt,
/// and as the table rebuilds it (r.106(b): the ponto stands; the banker on 0-5 takes the first
/// card, on 6-7 it is burned).
fn false_carta_results(ps: u8, bs: u8, x: u8, y: Option<u8>) -> (i8, i8) {
    let dealt = result((ps + x) % 10, (bs + y.unwrap_or(0)) % 10);
    let rebuilt = if bs <= 5 {
        result(ps, (bs + x) % 10)
    } else {
        result(ps, bs)
    };
    (dealt, rebuilt)
}

/// `dealer_false_carta` as a [`plan`] step over the values of the ponto's two cards, the
/// banker's two, the card given to the ponto and the banker's third card if he draws: the ponto
/// on 5-7 says "não" (r.64(b), (d)), the banker has no natural, and the coup as dealt and the
/// coup rebuilt differ. On the banker's optional cells either choice will do.
fn false_carta_step(seq: &[u8]) -> Step {
    let total = |v: &[u8]| v.iter().sum::<u8>() % 10;
    match seq.len() {
        2 if !(5..=7).contains(&total(seq)) => Step::Done(false),
        4 if total(&seq[2..4]) > 7 => Step::Done(false),
        5 | 6 => {
            let (ps, bs, x) = (total(&seq[..2]), total(&seq[2..4]), seq[4]);
            let (dealt, rebuilt) = false_carta_results(ps, bs, x, seq.get(5).copied());
            match (cf_banker(bs, Some(x)), seq.len()) {
                (Cf::T, 5) => Step::More,
                (Cf::F, _) | (_, 6) => Step::Done(dealt != rebuilt),
                // Cf::O, standing: draw instead if standing does not make the difference.
                _ if dealt != rebuilt => Step::Done(true),
                _ => Step::More,
            }
        }
        _ => Step::More,
    }
}

/// The ponto says "não", the dealer gives him a card anyway, the banker plays by his table
/// against it; cards picked so that the rebuilt coup (r.106(b)) and the coup as dealt differ:
/// dealt at random where the cards allow, else found by a complete search of the cards left.
fn dealer_false_carta(deck: &mut Deck, rng: &mut SimRng) -> Result<Coup, SimError> {
    let coup = |p: [Card; 2], b: [Card; 2], x: Card, y: Option<Card>| {
        let (ps, bs) = (score(&p), score(&b));
        let (dealt, rebuilt) = false_carta_results(ps, bs, card_value(x), y.map(card_value));
        Coup {
            p,
            b,
            call: "nao",
            false_card: Some(x),
            banker_call: None,
            p3: None,
            banker_draw_call: Some(if y.is_some() { "carta" } else { "nao" }),
            b3: y,
            result_by_rules: rebuilt,
            result_as_dealt: dealt,
        }
    };
    let mark = deck.mark();
    for _ in 0..2_000 {
        deck.rewind(mark);
        let p0 = deck.draw(rng);
        let Some(p1) = deck.draw_where(rng, |c| (5..=7).contains(&score(&[p0, c]))) else {
            continue;
        };
        let b0 = deck.draw(rng);
        let Some(b1) = deck.draw_where(rng, |c| score(&[b0, c]) <= 7) else {
            continue;
        };
        let (p, b) = ([p0, p1], [b0, b1]);
        let (ps, bs) = (score(&p), score(&b));
        let inner = deck.mark();
        for _ in 0..20 {
            deck.rewind(inner);
            let x = deck.draw(rng);
            let draws = match cf_banker(bs, Some(card_value(x))) {
                Cf::T => true,
                Cf::F => false,
                Cf::O => rng.chance(1, 2),
            };
            let y = draws.then(|| deck.draw(rng));
            let (dealt, rebuilt) = false_carta_results(ps, bs, card_value(x), y.map(card_value));
            if dealt != rebuilt {
                return Ok(coup(p, b, x, y));
            }
        }
    }
    deck.rewind(mark);
    let found = plan(&deck.values_left(), rng.below(10) as u8, false_carta_step);
    let cards = found
        .and_then(|v| deck.draw_values(rng, &v))
        .ok_or_else(|| {
            not_applicable(Mistake::DealerFalseCarta, "no coup of the shoe offers it")
        })?;
    Ok(coup(
        [cards[0], cards[1]],
        [cards[2], cards[3]],
        cards[4],
        cards.get(5).copied(),
    ))
}
