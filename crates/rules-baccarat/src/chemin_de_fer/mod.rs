//! # Bacará chemin de fer
//!
//! P217/2007 T.II S.I, rules 1-107 (`baccarat_chemin_de_fer`; the consolidated text 003 has the
//! same numbering and wording, without the r.67 table). A non-banked game: a player holds the
//! shoe and the bank; the punters bet against it; the casino deals and takes a cagnotte.
//!
//! Submodules: [`coup`] (the play, every fault and the prescribed reconstruction), [`bank`]
//! (bank money, the hand and what carries over), [`faults`] (the fault catalogue).
//!
//! ## Record vocabulary
//!
//! **Bets** (`bet` events), `bet_type`:
//!
//! | id | rule | meaning |
//! |---|---|---|
//! | `bank` | r.30, r.35, r.39 | the banker's capital put in play ("Banca de € …"); exactly one per coup; its owner (`seat`, `player`) is the banker |
//! | `associate` | r.31 | an associate's equal amount added to the bank; shares the bank's result equally |
//! | `ponto` | r.36, r.58 | a punter's bet against the bank, 1 to 1 |
//! | `banco` | r.45, r.48-r.50 | one punter covering the whole bank |
//! | `banco_suivi` | r.51-r.54 | a banco repeated by the punter who lost a banco on the previous coup; may come after "nada mais" |
//! | `banco_seul` | r.56 | "bancô sozinho": a banco alone, displacing a banco avec la table |
//! | `banco_avec_la_table` | r.55-r.57 | at least half the bank, the rest completed by others; its player holds the cards |
//!
//! * `seat`: seat 1-9 (r.3, numbered from the dealer's right, counter-clockwise: seat n+1 is on
//!   seat n's right). A standing player gives the seat he stands behind (r.24).
//! * `player`: the player's id (needed for standing players).
//! * `attrs`: `standing` = `"true"` for a standing player; `on_line` = `"true"` for chips on the
//!   line, which play half their value (r.43). No other attribute.
//! * `on_bet`: on an `associate` bet, the bank bet (optional); on a `ponto` bet, another punter's
//!   bet it was pooled with (r.59: forbidden, CF_POOLED_BETS). Must name a bet of the round.
//! * `selection`: must be empty.
//!
//! Punter bets are covered by the bank in order, bancos first, then in the order placed (r.45,
//! r.58); a stake beyond the bank is not in play (CF_BETS_EXCEED_BANK). Bets placed, raised or
//! withdrawn after "nada mais" (or after the first card) are late: a late bet is withdrawn (net
//! 0) and a late change or withdrawal is ignored (r.40), except `banco_suivi` (r.51).
//!
//! **Cards** (`card` events), `to`: `ponto` (the punters' hand), `banca` (the banker's hand),
//! `burn` (burned: r.13's initial burn, r.106(a) exposed cards, surplus cards), `discard` (put in
//! the discard holder during the coup: r.104(j)), `board` (drawn in the deal and left on the
//! table, given to nobody: the fifth card of r.104(f), which the ponto's call then assigns; a
//! `board` card after the deal is a [`RoundError`]). `face_up` marks a card that left the shoe
//! face up: a deal card so recorded (the deal is face down) is burned and the coup rebuilt, and a
//! card burned face up during a coup is reported (r.106(a), CF_DEALER_EXPOSED_CARD, found without
//! a declaration); r.13's first burn of a new shoe is shown by rule. Cards before the ponto's
//! first call are the deal; cards after it are the draw.
//!
//! **Decisions** (`decision` events), `action`:
//! * by the card holder: `carta`, `nao`, `abate` (r.65). The first call is his announcement;
//!   later different calls are changes (r.105(c), (d)).
//! * by the banker (the bank's owner): `carta`, `nao`, `abate` (informational; the cards show
//!   what he did), `pass_hand` ("Passo a mão", r.76, r.77: after a win or a null coup).
//! * banco calls, before the bet is accepted: `banco`, `banco_suivi`, `banco_seul`,
//!   `banco_avec_la_table` (r.48-r.57, "Bancô", "Bancô com prioridade").
//! * auction (r.82-r.90): `bid` (`amount_cents`), `bid_associated` (`amount_cents`, each of the
//!   two associated bidders records the same total), `refuse_hand` (the winner refuses to deal,
//!   r.88), `decline_hand` (a player lets the hand pass in his turn).
//!
//! **Roles** (`role` events): `banker` (must be the bank's owner), `card_holder` (the punter
//! given the cards, r.55, r.60, r.61, r.101), `seated` / `left` (seat census: r.16, r.21, r.29;
//! kept in the state), `standing` (`seat` and `player` of a standing player, r.24: his banco calls
//! rank after the seated players', r.49, as do those of a player with a standing bet), `dealer`,
//! `fiscal` (informational).
//!
//! **Procedures** (`procedure` events, `name`): `shuffle` (new shoe, r.12, r.13), `cut`,
//! `warning_card` (r.14), `banker_plays_by_table` (r.102: the banker must draw in both optional
//! cases), `advice` (`value` `carta`/`nao`, `seat` = the advised player: the banker's seat for
//! r.98 advice or the dealer's indication of r.104(n), else the ponto, r.99), `unknowing_ponto`
//! (`seat`: a player who does not know the game, r.101), `garage` (`amount_cents` set aside,
//! r.34, r.46; recorded after the deal and before `pass_hand` it lowers the passed level, note
//! 15; before the deal it is the reduction the bank bet already shows), `auction` ("Banca em
//! leilão. Quem oferece?", r.80), `seat_change` (`seat`: a player moved there to get the hand
//! sooner, r.92), `cards_spread` (r.15).
//!
//! Neutral facts (procedures) behind faults the engine finds itself (issue 38: the record states
//! what happened, the engine finds the fault and applies the remedy):
//! * `dealer_call` (`value` `carta` / `nao`): the dealer's spoken call. "carta" after the
//!   ponto's "não" is CF_DEALER_FALSE_CARTA, and the coup is restored by the table (r.106(b)).
//! * `cards_to_discard` (`value` `banker` / `ponto` / `dealer`: who put cards in the discard
//!   holder) and `scores_announced` (the dealer showed and announced the scores): the banker or
//!   the ponto who discards before the announcement loses the coup (CF_CARDS_DISCARDED_BY_PLAYER);
//!   the dealer who does is CF_CARDS_DISCARDED_BY_DEALER, the coup annulled; after it, the dealer's
//!   discard is the end of the coup (r.75).
//! * `ponto_card_turned` (`value`: who turned it up): by the banker during the deal,
//!   CF_BANKER_EXPOSED_PONTO_CARD, and the banker plays by the table, drawing in both optional
//!   cases (r.104(b)).
//!
//! **Faults** (`fault` events), `code`: the digest's codes of the faults the table declares
//! (for what only a person can declare: stuck cards, a card dropped, a withdrawal, the
//! ponto's delay, ...; the codes of acts the record can state as neutral facts, above, are
//! still accepted as declarations, as records made before those facts existed use them):
//! CF_PUNTER_FALSE_DRAW, CF_BANKER_WITHDREW_AFTER_DRAW, CF_BANKER_EXPOSED_PONTO_CARD,
//! CF_STUCK_CARDS, CF_BANKER_EXTRA_CARD_IN_DEAL, CF_BANKER_DREW_TWO_CARDS, CF_FIFTH_CARD_IN_DEAL,
//! CF_PONTO_THREE_CARDS_IN_DEAL, CF_PONTO_FOUR_CARDS, CF_PONTO_CARD_DROPPED,
//! CF_PONTO_CARD_DISCARDED_BY_BANKER, CF_CARD_DROPPED, CF_BANKER_DREW_AGAINST_INDICATION,
//! CF_PUNTER_FAILED_TO_ABATE, CF_PUNTER_CHANGED_ANNOUNCEMENT, CF_PUNTER_DELAY (`seat`),
//! CF_DEALER_EXPOSED_CARD, CF_DEALER_FALSE_CARTA, CF_DEALER_CARD_FAULT,
//! CF_LAST_COUP_TOO_FEW_CARDS, CF_CARDS_DISCARDED_BY_PLAYER (`detail` `banker`/`ponto` or
//! `seat`), CF_CARDS_DISCARDED_BY_DEALER, CF_CARD_RETURNED_TO_SHOE. Faults visible in the cards
//! (extra cards, false draws, a card against the call) are also found without a declaration.
//!
//! **Void** (`void` events), `reason`: `stuck_cards` (r.104(c)), `dealer_card_fault`
//! (r.106(c)), `last_coup_too_few_cards` (r.106(d)), `cards_discarded_by_dealer` (r.75).
//! `collect` / `pay` are accepted and must name bets of the round. `dice`, `ball`, `launch`,
//! `jackpot_display` are a [`RoundError`].
//!
//! ## Settings
//!
//! | name | type | default | meaning |
//! |---|---|---|---|
//! | `min_bank_cents` | int | none | the table's minimum bank (r.35, r.37) |
//! | `cagnotte_bp` | int | none | the cagnotte in basis points of the bank's winnings in a coup (r.47: rate and base unregulated) |
//! | `cagnotte_rounding` | text | `down` | rounding of a non-integral cagnotte |
//! | `auction_base_cents` | int | none | the auction's fixed base (r.82) |
//! | `auction_increment_cents` | int | none | the auction's fixed increment (r.82) |
//!
//! `TableConfig.min_bet_cents` is the punters' minimum (r.36); `decks` defaults to 6 (r.4).
//! `commission`, `max_bet_cents` and `limits` do not apply (r.35: no maximum).
//!
//! ## Settlement
//!
//! Punter bets win or lose their covered stake 1 to 1; equal scores make the coup null (net 0,
//! r.2, r.76); an annulled coup returns every bet. The `bank` bet's net is minus the punters'
//! total, shared equally with an `associate`. The cagnotte is reported separately as house take
//! and is left out of every net (r.47, note 16).

pub mod bank;
pub mod coup;
pub mod faults;

use rules_core::{
    Adjudication, Bet, BetOutcome, Cents, ConfigError, Configured, EventKind, GameId, HouseTake,
    Options, Outcome, Recipient, Round, RoundError, Severity, TableConfig, Violation, VoidInfo,
    check_stake,
};

pub use bank::{CfTableState, Participant};
use coup::{Actor, Call, CoupIn, CoupOut, CoupResult, Facts, PCard, To, VoidReason};
use faults::{Declared, Fault, Reporter};

use crate::BaccaratState;
use crate::commission::{Rounding, deduction};
use crate::shoe::ShoeState;
use crate::util::{IdIndex, SeatExt, clip, parse_bool_attr};

/// Setting names read by the chemin de fer engine.
pub const SETTINGS: &[&str] = &[
    "min_bank_cents",
    "cagnotte_bp",
    "cagnotte_rounding",
    "auction_base_cents",
    "auction_increment_cents",
];

const CITE_PAYOUT: &str = "P217/2007 T.II S.I r.45";

/// A chemin de fer table configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfConfig {
    /// The punters' minimum bet (r.36).
    pub min_bet_cents: Option<Cents>,
    /// The minimum bank (r.35).
    pub min_bank_cents: Option<Cents>,
    /// The cagnotte rate in basis points of the bank's winnings (r.47).
    pub cagnotte_bp: Option<i64>,
    pub cagnotte_rounding: Rounding,
    pub auction_base_cents: Option<Cents>,
    pub auction_increment_cents: Option<Cents>,
    /// Decks in the shoe (r.4: 6).
    pub decks: u8,
}

impl CfConfig {
    /// The cagnotte due on `winnings` (0 without a configured rate).
    pub fn cagnotte_on(&self, winnings: Cents) -> Cents {
        match self.cagnotte_bp {
            Some(bp) if winnings > 0 => {
                deduction(winnings, i128::from(bp), 10_000, self.cagnotte_rounding).0
            }
            _ => 0,
        }
    }
}

/// Check and compile a chemin de fer table configuration.
pub fn configure(table: &TableConfig) -> Result<Configured<CfConfig>, ConfigError> {
    table.only_settings(SETTINGS)?;
    if table.commission.is_some() {
        return Err(ConfigError::field(
            "commission",
            "chemin de fer has no commission; the casino's take is the cagnotte (setting cagnotte_bp, r.47)",
        ));
    }
    if table.max_bet_cents.is_some() || !table.limits.is_empty() {
        return Err(ConfigError::field(
            "max_bet_cents",
            "chemin de fer has no maximum and no per-chance limits (r.35, r.36): use min_bet_cents and min_bank_cents",
        ));
    }
    let pos = |name: &str, v: Option<i64>| -> Result<Option<i64>, ConfigError> {
        match v {
            Some(x) if !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&x) => Err(
                ConfigError::setting(name, "must be positive and at most MAX_AMOUNT_CENTS"),
            ),
            _ => Ok(v),
        }
    };
    let min_bet_cents = match table.min_bet_cents {
        Some(v) if !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&v) => {
            return Err(ConfigError::field("min_bet_cents", "must be positive"));
        }
        v => v,
    };
    let min_bank_cents = pos("min_bank_cents", table.opt_int_setting("min_bank_cents")?)?;
    let cagnotte_bp = table.opt_int_setting("cagnotte_bp")?;
    if let Some(bp) = cagnotte_bp
        && !(0..=10_000).contains(&bp)
    {
        return Err(ConfigError::setting(
            "cagnotte_bp",
            "must be between 0 and 10000 basis points",
        ));
    }
    let cagnotte_rounding = match table.text_setting("cagnotte_rounding")? {
        None => Rounding::Down,
        Some(s) => Rounding::parse(s).ok_or_else(|| {
            ConfigError::setting(
                "cagnotte_rounding",
                format!("`{}` is not one of down, up, half_up, half_even", clip(s)),
            )
        })?,
    };
    let auction_base_cents = pos(
        "auction_base_cents",
        table.opt_int_setting("auction_base_cents")?,
    )?;
    let auction_increment_cents = pos(
        "auction_increment_cents",
        table.opt_int_setting("auction_increment_cents")?,
    )?;
    let decks = table.decks.unwrap_or(6);
    if !(1..=8).contains(&decks) {
        return Err(ConfigError::field(
            "decks",
            "must be between 1 and 8 (r.4: 6 decks)",
        ));
    }
    Ok(Configured {
        config: CfConfig {
            min_bet_cents,
            min_bank_cents,
            cagnotte_bp,
            cagnotte_rounding,
            auction_base_cents,
            auction_increment_cents,
            decks,
        },
        violations: Vec::new(),
    })
}

/// A bet type of chemin de fer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfKind {
    Bank,
    Associate,
    Ponto,
    Banco,
    BancoSuivi,
    BancoSeul,
    AvecLaTable,
}

impl CfKind {
    pub fn parse(s: &str) -> Option<CfKind> {
        Some(match s {
            "bank" => CfKind::Bank,
            "associate" => CfKind::Associate,
            "ponto" => CfKind::Ponto,
            "banco" => CfKind::Banco,
            "banco_suivi" => CfKind::BancoSuivi,
            "banco_seul" => CfKind::BancoSeul,
            "banco_avec_la_table" => CfKind::AvecLaTable,
            _ => return None,
        })
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            CfKind::Bank => "bank",
            CfKind::Associate => "associate",
            CfKind::Ponto => "ponto",
            CfKind::Banco => "banco",
            CfKind::BancoSuivi => "banco_suivi",
            CfKind::BancoSeul => "banco_seul",
            CfKind::AvecLaTable => "banco_avec_la_table",
        }
    }

    /// One of the banco kinds (they hold the cards and are covered first).
    pub const fn is_banco(self) -> bool {
        matches!(
            self,
            CfKind::Banco | CfKind::BancoSuivi | CfKind::BancoSeul | CfKind::AvecLaTable
        )
    }

    /// A full banco: the whole bank by one punter (r.45; r.70 applies).
    pub const fn is_full_banco(self) -> bool {
        matches!(self, CfKind::Banco | CfKind::BancoSuivi | CfKind::BancoSeul)
    }

    pub const fn is_punter(self) -> bool {
        !matches!(self, CfKind::Bank | CfKind::Associate)
    }
}

/// A bet as the round leaves it.
#[derive(Clone, Debug)]
pub(crate) struct CfBet<'a> {
    pub bet: &'a Bet,
    pub kind: CfKind,
    /// Face amount after in-time changes.
    pub amount: Cents,
    /// The value in play: half the amount for chips on the line (r.43).
    pub stake: Cents,
    pub who: Participant,
    pub event_index: usize,
    pub late: bool,
    pub withdrawn: bool,
}

/// An auction bid (r.82-r.87).
#[derive(Clone, Debug)]
pub(crate) struct Bid {
    pub who: Participant,
    pub amount: Cents,
    pub associated: bool,
    pub idx: usize,
}

/// The parsed record of one coup.
pub(crate) struct CfRecord<'a> {
    pub bets: Vec<CfBet<'a>>,
    pub bank: usize,
    pub associate: Option<usize>,
    pub banker: Participant,
    pub bank_capital: Cents,
    pub cards: Vec<PCard>,
    pub boundary: usize,
    pub ponto_calls: Vec<(Call, usize)>,
    pub banco_calls: Vec<(CfKind, Participant, usize)>,
    pub bids: Vec<Bid>,
    pub auction: bool,
    pub declined_mask: u16,
    /// Auction winners who refused to deal (r.88), with the event index.
    pub refusals: Vec<(Participant, usize)>,
    pub pass_hand: bool,
    pub garage_before_pass: Cents,
    pub declared: Vec<Declared<'a>>,
    pub facts: Facts,
    pub void: Option<(VoidReason, usize)>,
    pub forced_table: bool,
    pub advice_ponto: Option<(Call, usize)>,
    pub advice_banker: Option<(Call, usize)>,
    pub unknowing_mask: u16,
    pub card_holder: Option<(Participant, usize)>,
    pub seated_mask: u16,
    pub census_seen: bool,
    /// Players recorded with a `standing` role (r.24): their calls rank after the seated ones
    /// (r.49), although a decision carries no standing mark.
    pub standing: Vec<Participant>,
    pub skip_mask: u16,
    pub late_changes: Vec<(usize, usize)>,
    pub too_few: Option<(u32, usize)>,
    pub first_of_shoe: bool,
}

fn participant(seat: Option<u8>, player: &Option<rules_core::Id>, standing: bool) -> Participant {
    Participant {
        seat,
        player: player.clone(),
        standing,
    }
}

/// Adjudicate one chemin de fer coup.
pub fn adjudicate(
    cfg: &CfConfig,
    state: &mut BaccaratState,
    round: &Round,
    options: &Options,
) -> Result<Adjudication, RoundError> {
    let mut shoe = state.shoe;
    let prev = &state.hand;
    let mut adj = Adjudication::new(GameId::BaccaratCheminDeFer, round.round_id.clone());
    let rec = parse(cfg, &mut shoe, prev, round, &mut adj, options)?;

    bank::check_hand(cfg, prev, &rec, rec.first_of_shoe, &mut adj);
    check_bets(cfg, prev, &rec, &mut adj);
    let full_banco = rec
        .bets
        .iter()
        .any(|b| b.kind.is_full_banco() && !b.late && !b.withdrawn && b.stake >= rec.bank_capital);

    let inp = CoupIn {
        cards: &rec.cards,
        boundary: rec.boundary,
        ponto_calls: &rec.ponto_calls,
        declared: &rec.declared,
        facts: &rec.facts,
        void: rec.void,
        too_few_cards: rec.too_few,
        forced_table: rec.forced_table,
        full_banco,
        advice_ponto: rec.advice_ponto,
        advice_banker: rec.advice_banker,
        banker_seat: rec.banker.seat,
    };
    let (out, banker_error) = {
        let mut rep = Reporter::new(&mut adj, options.explain);
        let out = coup::play(&inp, &mut rep).map_err(|e| RoundError::round(round, e))?;
        // Declared faults the play did not already report.
        for d in &rec.declared {
            if !rep.has(d.fault) {
                let msg = match d.fault {
                    Fault::BankerWithdrewAfterDraw => {
                        "the banker drew and wanted to stop: he must deal the coup".to_string()
                    }
                    Fault::CardDropped => "cards dropped on the floor were picked up and keep their value".to_string(),
                    Fault::PunterDelay => "the ponto was slow to announce; the fiscal may give the cards to the next-highest bettor".to_string(),
                    Fault::CardReturnedToShoe => "a card was put back into the shoe; every card drawn must be given or taken".to_string(),
                    f => format!("{} declared by the table", f.code()),
                };
                let review = matches!(d.fault, Fault::CardDropped | Fault::CardReturnedToShoe);
                rep.report(d.fault, msg, Some(d.event_index), review);
            }
        }
        let be = rep.banker_error;
        (out, be)
    };
    if let CoupResult::Void(r) = out.result {
        adj.void = Some(VoidInfo {
            reason: r.as_str().into(),
            citation: r.fault().citation().into(),
        });
    }

    let settled = settle(cfg, &rec, &out, round, &mut adj, options);
    adj.reconcile(round.settlement.as_ref(), "CF_WRONG_PAYOUT", CITE_PAYOUT);
    if banker_error {
        remedy_not_applied(&rec, &out, &settled, &mut adj);
    }
    if let (Some(s), Some(_)) = (&round.settlement, cfg.cagnotte_bp)
        && let Some(reported) = s.house_cents
    {
        let due = adj.house.first().map(|h| h.amount_cents).unwrap_or(0);
        if reported != due {
            adj.violation(Violation::new(
                "CF_WRONG_PAYOUT",
                Severity::High,
                "P217/2007 T.II S.I r.47",
                format!("the settlement reports a cagnotte of {reported} cents; due {due}"),
            ));
        }
    }
    state.hand = bank::advance(
        prev,
        &rec,
        out.result,
        settled.won_stakes,
        settled.fully_covered,
    );
    state.shoe = shoe;
    Ok(adj)
}

fn parse<'a>(
    cfg: &CfConfig,
    shoe: &mut ShoeState,
    prev: &CfTableState,
    round: &'a Round,
    adj: &mut Adjudication,
    options: &Options,
) -> Result<CfRecord<'a>, RoundError> {
    let n = round.events.len();
    let mut bets: Vec<CfBet<'a>> = Vec::with_capacity(n.min(16));
    let mut index = IdIndex::with_capacity(n.min(16));
    let mut cards = Vec::with_capacity(8);
    let mut calls: Vec<(Participant, Call, usize)> = Vec::new();
    let mut banco_calls = Vec::new();
    let mut bids = Vec::new();
    let mut auction = false;
    let mut declined_mask = 0u16;
    let mut refusals = Vec::new();
    let mut pass_hand = false;
    let mut garage = 0;
    let mut garage_before_pass = 0;
    let mut declared = Vec::new();
    let mut facts = Facts::default();
    let mut void = None;
    let mut forced_table = false;
    let mut advice: Vec<(Call, Option<u8>, usize)> = Vec::new();
    let mut unknowing_mask = 0u16;
    let mut card_holder = None;
    let mut seated_mask = prev.seated_mask;
    let mut census_seen = false;
    let mut standing = Vec::new();
    let mut skip_mask = prev.skip_mask;
    let mut late_changes = Vec::new();
    let mut too_few = None;
    let mut first_of_shoe = false;
    let mut nada_mais = false;
    let mut first_card: Option<usize> = None;
    let mut role_banker: Option<(Participant, usize)> = None;
    let seat_ok = |s: Option<u8>, i: usize| -> Result<(), RoundError> {
        match s {
            Some(s) if !(1..=9).contains(&s) => Err(RoundError::event(
                round,
                i,
                format!("seat {s} does not exist (seats 1-9, r.3)"),
            )),
            _ => Ok(()),
        }
    };
    for (i, ev) in round.events.iter().enumerate() {
        match &ev.kind {
            EventKind::Bet(b) => {
                let kind = CfKind::parse(&b.bet_type).ok_or_else(|| {
                    RoundError::bet(
                        round,
                        &b.id,
                        format!(
                            "`{}` is not a chemin de fer bet (bank, associate, ponto, banco, banco_suivi, banco_seul, banco_avec_la_table)",
                            clip(&b.bet_type)
                        ),
                    )
                })?;
                check_stake(round, &b.id, b.amount_cents)?;
                if !b.selection.is_empty() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "a chemin de fer bet takes no selection",
                    ));
                }
                seat_ok(b.seat, i)?;
                let (mut standing, mut on_line) = (false, false);
                for (k, v) in &b.attrs {
                    match (k.as_str(), parse_bool_attr(v)) {
                        ("standing", Some(x)) => standing = x,
                        ("on_line", Some(x)) => on_line = x,
                        _ => {
                            return Err(RoundError::bet(
                                round,
                                &b.id,
                                format!(
                                    "attribute `{}`=`{}` is not understood (standing, on_line)",
                                    clip(k),
                                    clip(v)
                                ),
                            ));
                        }
                    }
                }
                if b.seat.is_none() && b.player.is_none() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "a chemin de fer bet needs a seat or a player",
                    ));
                }
                if b.on_bet.is_some() && !matches!(kind, CfKind::Associate | CfKind::Ponto) {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "on_bet is only for an associate or a pooled ponto bet",
                    ));
                }
                if !index.insert(&b.id, bets.len()) {
                    return Err(RoundError::bet(round, &b.id, "duplicate bet id"));
                }
                let who = participant(b.seat, &b.player, standing);
                // r.40: bets after "nada mais" are late; r.51: except the banco suivi of the
                // punter who lost a banco on the previous coup.
                let suivi_right =
                    kind == CfKind::BancoSuivi && prev.suivi.as_ref().is_some_and(|p| p.same(&who));
                let late = kind.is_punter() && !suivi_right && (nada_mais || first_card.is_some());
                let stake = if on_line && kind.is_punter() {
                    b.amount_cents / 2
                } else {
                    b.amount_cents
                };
                bets.push(CfBet {
                    bet: b,
                    kind,
                    amount: b.amount_cents,
                    stake,
                    who,
                    event_index: i,
                    late,
                    withdrawn: false,
                });
            }
            EventKind::BetChanged {
                bet_id,
                amount_cents,
            } => {
                let pos = index.get(bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_changed names unknown bet `{}`", clip(bet_id)),
                    )
                })?;
                check_stake(round, bet_id, *amount_cents)?;
                if nada_mais || first_card.is_some() {
                    late_changes.push((pos, i));
                } else {
                    let b = &mut bets[pos];
                    b.amount = *amount_cents;
                    let line = b.bet.attrs.get("on_line").is_some_and(|v| v == "true");
                    b.stake = if line && b.kind.is_punter() {
                        b.amount / 2
                    } else {
                        b.amount
                    };
                }
            }
            EventKind::BetWithdrawn { bet_id } => {
                let pos = index.get(bet_id).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!("bet_withdrawn names unknown bet `{}`", clip(bet_id)),
                    )
                })?;
                if nada_mais || first_card.is_some() {
                    late_changes.push((pos, i));
                } else {
                    bets[pos].withdrawn = true;
                }
            }
            EventKind::NoMoreBets => nada_mais = true,
            EventKind::Card { to, card, face_up } => {
                let to = match to {
                    Recipient::Ponto => Some(To::Ponto),
                    Recipient::Banca => Some(To::Banca),
                    Recipient::Discard => Some(To::Discard),
                    Recipient::Board => Some(To::Table),
                    Recipient::Burn => None,
                    other => {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!(
                                "a chemin de fer card goes to ponto, banca, board, burn or discard, not `{other}`"
                            ),
                        ));
                    }
                };
                if to.is_none() && first_card.is_none() && shoe.coups == 0 {
                    shoe.initial_burned = shoe.initial_burned.saturating_add(1);
                }
                if matches!(to, Some(To::Ponto | To::Banca)) && first_card.is_none() {
                    first_card = Some(i);
                    first_of_shoe = shoe.known && shoe.coups == 0;
                    // r.106(d): at least 6 cards besides the warning card for the coup.
                    let total = u32::from(cfg.decks) * 52;
                    let left = total.saturating_sub(shoe.cards_out);
                    if shoe.known && left < 6 {
                        too_few = Some((left, i));
                    }
                    // r.14: no coup after the warning-card coup without a reshuffle.
                    if shoe.start_coup() {
                        adj.violation(
                            Violation::new(
                                "CF_COUP_AFTER_LAST_OF_SHOE",
                                Severity::Medium,
                                "P217/2007 T.II S.I r.14",
                                "a coup was dealt after the coup in which the warning card came out, without a reshuffle",
                            )
                            .event(i),
                        );
                    }
                    if options.explain {
                        adj.note(
                            "P217/2007 T.II S.I r.62",
                            format!("coup {} of the shoe", shoe.coups),
                        );
                    }
                }
                shoe.card_out(*card);
                if to.is_none() && *face_up && (first_card.is_some() || shoe.coups > 0) {
                    // r.106(a): a card that left the shoe face up, burned (not r.13's first
                    // burn of a new shoe, which shows how many cards follow it).
                    facts.face_up_burns.push(i);
                }
                if let Some(to) = to {
                    cards.push(PCard {
                        to,
                        card: *card,
                        idx: i,
                        face_up: *face_up,
                    });
                }
            }
            EventKind::Decision(d) => {
                seat_ok(d.seat, i)?;
                let who = participant(d.seat, &d.player, false);
                match d.action.as_str() {
                    a @ ("carta" | "nao" | "abate") => {
                        let c = Call::parse(a).unwrap_or(Call::Nao);
                        calls.push((who, c, i));
                    }
                    "banco" => banco_calls.push((CfKind::Banco, who, i)),
                    "banco_suivi" => banco_calls.push((CfKind::BancoSuivi, who, i)),
                    "banco_seul" => banco_calls.push((CfKind::BancoSeul, who, i)),
                    "banco_avec_la_table" => banco_calls.push((CfKind::AvecLaTable, who, i)),
                    a @ ("bid" | "bid_associated") => {
                        let amount = d.amount_cents.ok_or_else(|| {
                            RoundError::event(round, i, "a bid needs amount_cents")
                        })?;
                        if !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&amount) {
                            return Err(RoundError::event(
                                round,
                                i,
                                format!("bid amount {amount} is not a valid amount"),
                            ));
                        }
                        bids.push(Bid {
                            who,
                            amount,
                            associated: a == "bid_associated",
                            idx: i,
                        });
                    }
                    "pass_hand" => {
                        pass_hand = true;
                        garage_before_pass = garage;
                    }
                    "decline_hand" => {
                        if let Some(s) = d.seat {
                            declined_mask |= 1 << s;
                        }
                    }
                    "refuse_hand" => refusals.push((who, i)),
                    other => {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!(
                                "`{}` is not a chemin de fer action (carta, nao, abate, banco, banco_suivi, banco_seul, banco_avec_la_table, bid, bid_associated, pass_hand, decline_hand, refuse_hand)",
                                clip(other)
                            ),
                        ));
                    }
                }
            }
            EventKind::Role { role, seat, player } => {
                seat_ok(*seat, i)?;
                match role.as_str() {
                    "banker" => role_banker = Some((participant(*seat, player, seat.is_none()), i)),
                    "card_holder" => card_holder = Some((participant(*seat, player, false), i)),
                    "seated" => {
                        let s = seat.ok_or_else(|| {
                            RoundError::event(round, i, "role seated needs a seat")
                        })?;
                        seated_mask |= 1 << s;
                        census_seen = true;
                    }
                    "left" => {
                        if let Some(s) = seat {
                            seated_mask &= !(1u16 << s);
                        }
                    }
                    "standing" => standing.push(participant(*seat, player, true)),
                    "dealer" | "fiscal" => {}
                    other => {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!(
                                "`{}` is not a chemin de fer role (banker, card_holder, seated, left, standing, dealer, fiscal)",
                                clip(other)
                            ),
                        ));
                    }
                }
            }
            EventKind::Procedure {
                name,
                value,
                seat,
                amount_cents,
            } => {
                seat_ok(*seat, i)?;
                match name.as_str() {
                    "shuffle" => *shoe = ShoeState::shuffled(),
                    "cut" | "cards_spread" => {}
                    "warning_card" => shoe.warning(first_card.is_some()),
                    "banker_plays_by_table" => forced_table = true,
                    "advice" => {
                        let c = value
                            .as_deref()
                            .and_then(Call::parse)
                            .filter(|c| *c != Call::Abate)
                            .ok_or_else(|| {
                                RoundError::event(round, i, "advice needs value `carta` or `nao`")
                            })?;
                        advice.push((c, *seat, i));
                    }
                    "unknowing_ponto" => {
                        let s = seat.ok_or_else(|| {
                            RoundError::event(round, i, "unknowing_ponto needs the seat")
                        })?;
                        unknowing_mask |= 1 << s;
                    }
                    "garage" => {
                        let a = amount_cents.ok_or_else(|| {
                            RoundError::event(round, i, "garage needs amount_cents")
                        })?;
                        if !(0..=rules_core::MAX_AMOUNT_CENTS).contains(&a) {
                            return Err(RoundError::event(round, i, "garage amount out of range"));
                        }
                        // Note 15: only a reduction declared once the coup is dealt (before
                        // "Passo a mão") lowers the passed level. A garage recorded before the
                        // deal reduced this coup's bank, which the bank bet already shows.
                        if first_card.is_some() {
                            garage = a;
                        }
                    }
                    "auction" => auction = true,
                    // Neutral facts behind r.75, r.104(b), r.106(b): the play finds the fault.
                    "dealer_call" => {
                        let c = value
                            .as_deref()
                            .and_then(Call::parse)
                            .filter(|c| *c != Call::Abate)
                            .ok_or_else(|| {
                                RoundError::event(
                                    round,
                                    i,
                                    "dealer_call needs value `carta` or `nao` (r.106(b))",
                                )
                            })?;
                        facts.dealer_calls.push((c, i));
                    }
                    "cards_to_discard" | "ponto_card_turned" => {
                        let who = value.as_deref().and_then(Actor::parse).ok_or_else(|| {
                            RoundError::event(
                                round,
                                i,
                                format!(
                                    "{name} needs value `banker`, `ponto` or `dealer` (who did it)"
                                ),
                            )
                        })?;
                        if name == "cards_to_discard" {
                            facts.discards.push((who, i));
                        } else {
                            facts.ponto_card_turned.push((who, i));
                        }
                    }
                    "scores_announced" => {
                        facts.scores_announced.get_or_insert(i);
                    }
                    "seat_change" => {
                        let s = seat.ok_or_else(|| {
                            RoundError::event(round, i, "seat_change needs the new seat")
                        })?;
                        skip_mask |= 1 << s;
                    }
                    other => {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!(
                                "`{}` is not a chemin de fer procedure (shuffle, cut, cards_spread, warning_card, banker_plays_by_table, advice, unknowing_ponto, garage, auction, seat_change, dealer_call, cards_to_discard, scores_announced, ponto_card_turned)",
                                clip(other)
                            ),
                        ));
                    }
                }
            }
            EventKind::Fault { code, seat, detail } => {
                seat_ok(*seat, i)?;
                let fault = Fault::parse_declared(code).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!(
                            "`{}` is not a chemin de fer fault the table declares",
                            clip(code)
                        ),
                    )
                })?;
                declared.push(Declared {
                    fault,
                    event_index: i,
                    seat: *seat,
                    detail: detail.as_deref(),
                });
            }
            EventKind::Void { reason } => {
                let r = VoidReason::parse(reason).ok_or_else(|| {
                    RoundError::event(
                        round,
                        i,
                        format!(
                            "`{}` is not a chemin de fer void reason (stuck_cards, dealer_card_fault, last_coup_too_few_cards, cards_discarded_by_dealer)",
                            clip(reason)
                        ),
                    )
                })?;
                if void.is_none() {
                    void = Some((r, i));
                }
            }
            EventKind::Collect { bet_ids } => {
                for id in bet_ids {
                    if index.get(id).is_none() {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!("collect names unknown bet `{}`", clip(id)),
                        ));
                    }
                }
            }
            EventKind::Pay { bet_id, .. } => {
                if index.get(bet_id).is_none() {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!("pay names unknown bet `{}`", clip(bet_id)),
                    ));
                }
            }
            other => {
                return Err(RoundError::event(
                    round,
                    i,
                    format!("{} events are not part of chemin de fer", other.type_name()),
                ));
            }
        }
    }
    // The bank.
    let mut bank = None;
    let mut associate = None;
    for (k, b) in bets.iter().enumerate() {
        match b.kind {
            CfKind::Bank if bank.is_some() => {
                return Err(RoundError::bet(
                    round,
                    &b.bet.id,
                    "a second bank bet: a coup has one bank",
                ));
            }
            CfKind::Bank => bank = Some(k),
            CfKind::Associate if associate.is_some() => {
                return Err(RoundError::bet(
                    round,
                    &b.bet.id,
                    "a second associate: r.31 allows one equal share",
                ));
            }
            CfKind::Associate => associate = Some(k),
            _ => {}
        }
        if let Some(on) = &b.bet.on_bet {
            let Some(t) = index.get(on) else {
                return Err(RoundError::bet(
                    round,
                    &b.bet.id,
                    format!("on_bet names unknown bet `{}`", clip(on)),
                ));
            };
            let ok = match b.kind {
                CfKind::Associate => bets[t].kind == CfKind::Bank,
                _ => bets[t].kind.is_punter() && t != k,
            };
            if !ok {
                return Err(RoundError::bet(
                    round,
                    &b.bet.id,
                    format!("on_bet `{}` is not a bet this one can ride on", clip(on)),
                ));
            }
        }
    }
    let bank = bank.ok_or_else(|| {
        RoundError::round(
            round,
            "the coup has no bank bet (the banker's capital, r.39)",
        )
    })?;
    let banker = bets[bank].who.clone();
    if bets[bank].withdrawn {
        return Err(RoundError::bet(
            round,
            &bets[bank].bet.id,
            "the bank cannot be withdrawn",
        ));
    }
    if let Some((rb, i)) = &role_banker
        && !rb.same(&banker)
    {
        return Err(RoundError::event(
            round,
            *i,
            format!(
                "role banker names {} but the bank belongs to {}",
                rb.describe(),
                banker.describe()
            ),
        ));
    }
    let bank_capital = bets[bank]
        .amount
        .saturating_add(associate.map(|a| bets[a].amount).unwrap_or(0));
    // Calls: the banker's are informational; the others are the card holder's.
    let mut ponto_calls = Vec::new();
    for (who, c, i) in calls {
        if !who.same(&banker) {
            ponto_calls.push((c, i));
        }
    }
    // The deal ends at the ponto's first call; without a call, after the fourth card.
    let boundary = match ponto_calls.first() {
        Some((_, i)) => *i,
        None => cards
            .iter()
            .filter(|c| !matches!(c.to, To::Discard | To::Table))
            .nth(3)
            .map(|c| c.idx + 1)
            .unwrap_or(usize::MAX),
    };
    let mut advice_ponto = None;
    let mut advice_banker = None;
    for (c, seat, i) in advice {
        if seat.is_some() && seat == banker.seat {
            advice_banker.get_or_insert((c, i));
        } else {
            advice_ponto.get_or_insert((c, i));
        }
    }
    if void.is_none()
        && cards.iter().filter(|c| c.to != To::Discard).count() < 4
        && declared.iter().all(|d| {
            d.fault != Fault::CardsDiscardedByDealer && d.fault != Fault::LastCoupTooFewCards
        })
        && !facts
            .discards
            .iter()
            .any(|&(who, i)| who == Actor::Dealer && facts.scores_announced.is_none_or(|a| a > i))
        && too_few.is_none()
    {
        return Err(RoundError::round(
            round,
            "the coup is incomplete: fewer than four cards were dealt (r.62)",
        ));
    }
    Ok(CfRecord {
        bets,
        bank,
        associate,
        banker,
        bank_capital,
        cards,
        boundary,
        ponto_calls,
        banco_calls,
        bids,
        auction,
        declined_mask,
        refusals,
        pass_hand,
        garage_before_pass,
        declared,
        facts,
        void,
        forced_table,
        advice_ponto,
        advice_banker,
        unknowing_mask,
        card_holder,
        seated_mask,
        census_seen,
        standing,
        skip_mask,
        late_changes,
        too_few,
        first_of_shoe,
    })
}

/// Priority from the banker's right (r.48, r.61): seat distance, 1 = the seat on his right.
pub(crate) fn distance(banker_seat: Option<u8>, seat: Option<u8>) -> u8 {
    match (banker_seat, seat) {
        (Some(b), Some(s)) if (1..=9).contains(&s) => (s + 9 - b.min(9)) % 9,
        (None, Some(s)) => s,
        _ => 10,
    }
}

/// Checks on the punters' bets: r.36, r.40, r.45, r.48-r.61, r.101.
fn check_bets(cfg: &CfConfig, prev: &CfTableState, rec: &CfRecord<'_>, adj: &mut Adjudication) {
    let bank = rec.bank_capital;
    let live = |b: &CfBet<'_>| b.kind.is_punter() && !b.late && !b.withdrawn;
    let mut total: i128 = 0;
    for b in &rec.bets {
        if b.kind.is_punter() && b.late {
            // r.40, r.51: bets after "nada mais" are withdrawn.
            adj.violation(
                Violation::new(
                    "CF_LATE_BET",
                    Severity::Medium,
                    if b.kind.is_banco() {
                        "P217/2007 T.II S.I r.51"
                    } else {
                        "P217/2007 T.II S.I r.40"
                    },
                    format!(
                        "bet `{}` was placed after \"nada mais\": it must be withdrawn",
                        b.bet.id
                    ),
                )
                .bet(&b.bet.id)
                .tap_seat(b.bet.seat)
                .event(b.event_index),
            );
        }
        if !live(b) {
            continue;
        }
        total += i128::from(b.stake);
        match b.kind {
            CfKind::Ponto => {
                // r.36: the minimum or a multiple of it.
                if let Some(min) = cfg.min_bet_cents
                    && (b.stake < min || b.stake % min != 0)
                {
                    adj.violation(
                        Violation::new(
                            "CF_BET_NOT_MULTIPLE_OF_MIN",
                            Severity::Medium,
                            "P217/2007 T.II S.I r.36",
                            format!(
                                "bet `{}` of {} cents is not the minimum {min} or a multiple of it",
                                b.bet.id, b.stake
                            ),
                        )
                        .bet(&b.bet.id)
                        .tap_seat(b.bet.seat),
                    );
                }
                if b.bet.on_bet.is_some() {
                    adj.violation(
                        Violation::new(
                            "CF_POOLED_BETS",
                            Severity::Medium,
                            "P217/2007 T.II S.I r.59",
                            format!("bet `{}` was pooled with another punter's bet", b.bet.id),
                        )
                        .bet(&b.bet.id)
                        .tap_seat(b.bet.seat),
                    );
                }
            }
            CfKind::AvecLaTable => {
                // r.55: at least half the bank.
                if i128::from(b.stake) * 2 < i128::from(bank) {
                    adj.violation(
                        Violation::new(
                            "CF_BANCO_AVEC_LA_TABLE_UNDER_HALF",
                            Severity::Medium,
                            "P217/2007 T.II S.I r.55",
                            format!("banco avec la table `{}` of {} cents is less than half the bank {bank}", b.bet.id, b.stake),
                        )
                        .bet(&b.bet.id)
.tap_seat(b.bet.seat),
                    );
                }
                // r.57: a one-off; not again on the next coup.
                if prev.avec_la_table.as_ref().is_some_and(|p| p.same(&b.who)) {
                    adj.violation(
                        Violation::new(
                            "CF_BANCO_PRIORITY",
                            Severity::Medium,
                            "P217/2007 T.II S.I r.57",
                            format!(
                                "{} made banco avec la table on two coups running",
                                b.who.describe()
                            ),
                        )
                        .bet(&b.bet.id)
                        .tap_seat(b.bet.seat),
                    );
                }
            }
            k if k.is_full_banco() => {
                if b.stake != bank {
                    adj.violation(
                        Violation::new(
                            "CF_BANCO_AMOUNT",
                            Severity::Medium,
                            "P217/2007 T.II S.I r.45",
                            format!(
                                "banco `{}` of {} cents does not equal the bank {bank}",
                                b.bet.id, b.stake
                            ),
                        )
                        .bet(&b.bet.id)
                        .tap_seat(b.bet.seat),
                    );
                }
                if k == CfKind::BancoSuivi && !prev.suivi.as_ref().is_some_and(|p| p.same(&b.who)) {
                    adj.violation(
                        Violation::new(
                            "CF_BANCO_PRIORITY",
                            Severity::Medium,
                            "P217/2007 T.II S.I r.51",
                            format!("{} called banco suivi without having lost a banco on the previous coup", b.who.describe()),
                        )
                        .bet(&b.bet.id)
.tap_seat(b.bet.seat),
                    );
                }
                // r.89: who passed the hand after a null coup may not banco on the next coup.
                if prev
                    .passed
                    .as_ref()
                    .is_some_and(|p| p.after_null && p.passer.same(&b.who))
                {
                    adj.violation(
                        Violation::new(
                            "CF_BANCO_PRIORITY",
                            Severity::Medium,
                            "P217/2007 T.II S.I r.89",
                            format!("{} passed the hand after a null coup and made banco on the next coup", b.who.describe()),
                        )
                        .bet(&b.bet.id)
.tap_seat(b.bet.seat),
                    );
                }
            }
            _ => {}
        }
    }
    // r.45, r.58: the bank covers bets up to its amount.
    if total > i128::from(bank) {
        adj.violation(
            Violation::new(
                "CF_BETS_EXCEED_BANK",
                Severity::Medium,
                "P217/2007 T.II S.I r.58",
                format!("the punters bet {total} cents against a bank of {bank}: the excess, last placed, is not in play"),
            )
            .review(),
        );
    }
    for &(pos, idx) in &rec.late_changes {
        let b = &rec.bets[pos];
        adj.violation(
            Violation::new(
                "CF_LATE_BET",
                Severity::Medium,
                "P217/2007 T.II S.I r.40",
                format!("bet `{}` was changed or withdrawn after \"nada mais\": the change does not count", b.bet.id),
            )
            .bet(&b.bet.id)
.tap_seat(b.bet.seat)
            .event(idx),
        );
    }
    // Banco priority (r.48-r.50, r.56): suivi, then a full banco, then avec la table; seated
    // before standing; seats from the banker's right.
    let holder = rec.bets.iter().find(|b| live(b) && b.kind.is_banco());
    let class = |k: CfKind, who: &Participant| match k {
        CfKind::BancoSuivi if prev.suivi.as_ref().is_some_and(|p| p.same(who)) => 0u8,
        CfKind::AvecLaTable => 2,
        _ => 1,
    };
    // r.49: a caller stands if his role or a bet of his says so (a decision cannot).
    let stands = |who: &Participant| {
        who.standing
            || rec.standing.iter().any(|s| s.same(who))
            || rec.bets.iter().any(|b| b.who.standing && b.who.same(who))
    };
    let key = |k: CfKind, who: &Participant, idx: usize| {
        (
            class(k, who),
            stands(who) as u8,
            distance(rec.banker.seat, who.seat),
            idx,
        )
    };
    type Priority = (u8, u8, u8, usize);
    let mut best: Option<(Priority, &Participant)> = None;
    for (k, who, idx) in &rec.banco_calls {
        let kk = key(*k, who, *idx);
        if best.as_ref().is_none_or(|(b, _)| kk < *b) {
            best = Some((kk, who));
        }
    }
    if let Some((_, top)) = best {
        match holder {
            Some(h) if !h.who.same(top) => {
                adj.violation(
                    Violation::new(
                        "CF_BANCO_PRIORITY",
                        Severity::Medium,
                        "P217/2007 T.II S.I r.48",
                        format!(
                            "the banco went to {} although {} had priority",
                            h.who.describe(),
                            top.describe()
                        ),
                    )
                    .bet(&h.bet.id),
                );
            }
            None if rec.associate.is_some() => {
                adj.violation(Violation::new(
                    "CF_BANCO_PRIORITY",
                    Severity::Medium,
                    "P217/2007 T.II S.I r.50",
                    format!(
                        "{} called banco but the bank was completed by an associate instead",
                        top.describe()
                    ),
                ));
            }
            _ => {}
        }
    }
    // Who holds the punters' cards (r.55, r.60, r.61, r.101, r.105(e)).
    if let Some((actual, idx)) = &rec.card_holder {
        let delayed: u16 = rec
            .declared
            .iter()
            .filter(|d| d.fault == Fault::PunterDelay)
            .filter_map(|d| d.seat)
            .fold(0, |m, s| m | (1 << s));
        let rightful: Option<&CfBet<'_>> = match holder {
            Some(h) => Some(h),
            None => rec
                .bets
                .iter()
                .filter(|b| live(b) && b.kind == CfKind::Ponto && !b.who.standing)
                .filter(|b| {
                    b.who
                        .seat
                        .is_none_or(|s| (rec.unknowing_mask | delayed) & (1 << s) == 0)
                })
                .min_by_key(|b| {
                    (
                        std::cmp::Reverse(b.stake),
                        distance(rec.banker.seat, b.who.seat),
                        b.event_index,
                    )
                }),
        };
        let unknowing = actual
            .seat
            .is_some_and(|s| rec.unknowing_mask & (1 << s) != 0);
        let actual_banco = holder.is_some_and(|h| h.who.same(actual));
        if unknowing && !actual_banco {
            // r.101: never to a ponto who does not know the game, unless he made banco.
            adj.violation(
                Violation::new(
                    "CF_CARDS_TO_UNKNOWING_PONTO",
                    Severity::Low,
                    "P217/2007 T.II S.I r.101",
                    format!(
                        "the cards went to {}, who does not know the game, without a banco",
                        actual.describe()
                    ),
                )
                .event(*idx),
            );
        } else if let Some(r) = rightful
            && !r.who.same(actual)
        {
            // r.105(e): the fiscal may move the cards from a slow ponto to the next bettor.
            let allowed_delay = rec.bets.iter().any(|b| b.who.same(actual)) && delayed != 0;
            if !allowed_delay {
                adj.violation(
                    Violation::new(
                        "CF_CARDS_TO_WRONG_PONTO",
                        Severity::Low,
                        if holder.is_some() {
                            "P217/2007 T.II S.I r.55"
                        } else {
                            "P217/2007 T.II S.I r.60"
                        },
                        format!(
                            "the cards went to {} instead of {}",
                            actual.describe(),
                            r.who.describe()
                        ),
                    )
                    .event(*idx),
                );
            }
        }
    }
}

/// What the settlement computed, for the state and r.104(l).
pub(crate) struct Settled {
    /// Covered stake per bet (0 for the bank, the associate and bets not in play).
    pub covered: Vec<Cents>,
    pub won_stakes: Cents,
    pub fully_covered: bool,
}

/// Cover the punters' bets (bancos first, then in the order placed, r.45, r.58).
fn cover(rec: &CfRecord<'_>) -> (Vec<Cents>, Cents) {
    let mut covered = vec![0; rec.bets.len()];
    let mut left = rec.bank_capital;
    for pass in [true, false] {
        for (k, b) in rec.bets.iter().enumerate() {
            if !b.kind.is_punter() || b.late || b.withdrawn || b.kind.is_banco() != pass {
                continue;
            }
            let c = b.stake.min(left).max(0);
            covered[k] = c;
            left -= c;
        }
    }
    (covered, rec.bank_capital - left)
}

/// Nets per bet for `result`.
fn nets(rec: &CfRecord<'_>, covered: &[Cents], result: CoupResult) -> Vec<Cents> {
    let mut nets = vec![0; rec.bets.len()];
    let mut punters: Cents = 0;
    for (k, b) in rec.bets.iter().enumerate() {
        if !b.kind.is_punter() {
            continue;
        }
        nets[k] = match result {
            CoupResult::Ponto => covered[k],
            CoupResult::Banker => -covered[k],
            _ => 0,
        };
        punters += nets[k];
    }
    // The bank pays or collects the punters' total, shared with the associate (r.31).
    let bank_net = -punters;
    match rec.associate {
        Some(a) => {
            let total = i128::from(rec.bets[rec.bank].amount) + i128::from(rec.bets[a].amount);
            let share = if total > 0 {
                (i128::from(bank_net) * i128::from(rec.bets[a].amount) / total) as Cents
            } else {
                0
            };
            nets[a] = share;
            nets[rec.bank] = bank_net - share;
        }
        None => nets[rec.bank] = bank_net,
    }
    nets
}

fn settle(
    cfg: &CfConfig,
    rec: &CfRecord<'_>,
    out: &CoupOut,
    round: &Round,
    adj: &mut Adjudication,
    options: &Options,
) -> Settled {
    let (covered, covered_total) = cover(rec);
    let mut due = nets(rec, &covered, out.result);
    // r.104(g), note 6: settled as the casino recorded, for review.
    if out.settle_as_recorded
        && let Some(s) = &round.settlement
    {
        for (k, b) in rec.bets.iter().enumerate() {
            if let Some(r) = s.results.iter().find(|r| r.bet_id == b.bet.id) {
                due[k] = r.net_cents;
            }
        }
    }
    adj.bets.reserve(rec.bets.len());
    for (k, b) in rec.bets.iter().enumerate() {
        let (outcome, reason, citation): (Outcome, &'static str, &'static str) =
            if b.kind.is_punter() && b.late {
                (
                    Outcome::Withdrawn,
                    "placed after \"nada mais\": withdrawn",
                    "P217/2007 T.II S.I r.40",
                )
            } else if b.withdrawn {
                (
                    Outcome::Withdrawn,
                    "withdrawn before \"nada mais\"",
                    "P217/2007 T.II S.I r.40",
                )
            } else {
                match out.result {
                    CoupResult::Void(r) => (
                        Outcome::Void,
                        "coup annulled: stake returned",
                        r.fault().citation(),
                    ),
                    _ if out.settle_as_recorded => (
                        outcome_of(due[k]),
                        "r.104(g): settled as the casino recorded, for review",
                        "P217/2007 T.II S.I r.104(g)",
                    ),
                    CoupResult::Null => (
                        Outcome::Push,
                        "equal scores: null coup",
                        "P217/2007 T.II S.I r.76",
                    ),
                    _ if b.kind.is_punter() && covered[k] == 0 => (
                        Outcome::Push,
                        "not covered by the bank",
                        "P217/2007 T.II S.I r.45",
                    ),
                    CoupResult::Ponto if b.kind.is_punter() => (
                        Outcome::Won,
                        "the ponto won: paid 1 to 1",
                        "P217/2007 T.II S.I r.2",
                    ),
                    CoupResult::Banker if b.kind.is_punter() => {
                        (Outcome::Lost, "the banker won", "P217/2007 T.II S.I r.2")
                    }
                    _ => (
                        outcome_of(due[k]),
                        if b.kind == CfKind::Associate {
                            "the associate's equal share of the bank's result"
                        } else {
                            "the bank pays or collects the covered stakes"
                        },
                        if b.kind == CfKind::Associate {
                            "P217/2007 T.II S.I r.31"
                        } else {
                            "P217/2007 T.II S.I r.45"
                        },
                    ),
                }
            };
        let stake = if b.kind.is_punter() {
            covered[k]
        } else {
            b.amount
        };
        if options.explain {
            adj.note(
                citation,
                format!(
                    "bet `{}` ({}, {} cents in play): {} → {:+} cents",
                    b.bet.id,
                    b.kind.as_str(),
                    stake,
                    reason,
                    due[k]
                ),
            );
        }
        adj.bets.push(BetOutcome {
            bet_id: b.bet.id.clone(),
            seat: b.bet.seat,
            stake_cents: stake,
            due_net_cents: due[k],
            outcome,
            reported_net_cents: None,
            reason: reason.into(),
            citation: citation.into(),
        });
    }
    let won_stakes = if out.result == CoupResult::Banker {
        covered_total
    } else {
        0
    };
    // r.47: the cagnotte on the bank's winnings, reported apart (note 16).
    if cfg.cagnotte_bp.is_some() && out.result == CoupResult::Banker {
        let amount = cfg.cagnotte_on(covered_total);
        adj.house.push(HouseTake {
            kind: "cagnotte".into(),
            amount_cents: amount,
            citation: "P217/2007 T.II S.I r.47".into(),
        });
        if options.explain {
            adj.note(
                "P217/2007 T.II S.I r.47",
                format!("cagnotte on the bank's winnings of {covered_total} cents: {amount} cents, reported apart"),
            );
        }
    }
    Settled {
        covered,
        won_stakes,
        fully_covered: covered_total >= rec.bank_capital,
    }
}

fn outcome_of(net: Cents) -> Outcome {
    match net.signum() {
        1 => Outcome::Won,
        -1 => Outcome::Lost,
        _ => Outcome::Push,
    }
}

/// r.104(l): a banker's dealing or drawing error not remedied before the coup was concluded
/// can no longer be claimed. A settlement that matches the coup as dealt is reported as
/// CF_REMEDY_NOT_APPLIED (informational) instead of CF_WRONG_PAYOUT.
fn remedy_not_applied(
    rec: &CfRecord<'_>,
    out: &CoupOut,
    settled: &Settled,
    adj: &mut Adjudication,
) {
    if adj.discrepancies.is_empty()
        || matches!(out.result, CoupResult::Void(_))
        || out.as_played == out.result
    {
        return;
    }
    let played = nets(rec, &settled.covered, out.as_played);
    let mut moved = Vec::new();
    adj.discrepancies.retain(|d| {
        let Some(k) = rec.bets.iter().position(|b| b.bet.id == d.bet_id) else {
            return true;
        };
        let live = !rec.bets[k].late && !rec.bets[k].withdrawn;
        if live && d.reported_net_cents == Some(played[k]) {
            moved.push(d.bet_id.clone());
            false
        } else {
            true
        }
    });
    if !moved.is_empty() {
        let list = moved
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ");
        adj.violation(Violation::new(
            "CF_REMEDY_NOT_APPLIED",
            Severity::Info,
            "P217/2007 T.II S.I r.104(l)",
            format!(
                "the banker's error was settled as dealt for {list}; once the coup is concluded no claim is admitted"
            ),
        ));
    }
}
