//! # Bacará ponto e banca and ponto e banca/Macau
//!
//! P217/2007 T.I C.III S.III (`baccarat_punto_banco`, rules 1-21) and S.IV (`baccarat_macau`,
//! rules 1-25). Rules 1-10 and 13-20 are word for word the same in both sections; the variants
//! differ only in r.11 (Macau: one player on both ponto and banca), r.12 (standing bettors) and
//! the limits (S.III r.21 against S.IV r.21-r.25). Those differences live in [`Variant`] and in
//! [`crate::limits`]; everything else here is shared.
//!
//! ## Record vocabulary
//!
//! **Bets** (`bet` events), `bet_type`:
//!
//! | id | rule | pays |
//! |---|---|---|
//! | `ponto` | r.11, r.17, r.18 | 1 to 1; a tie leaves it standing (net 0) |
//! | `banca` | r.11, r.17, r.18, r.20 | 1 to 1 less the table's commission option; tie: net 0 |
//! | `tie` | r.11, r.18 | 8 to 1 |
//! | `pair_ponto` | r.11, r.19 | 11 to 1 if the ponto's first two cards have the same rank |
//! | `pair_banca` | r.11, r.19 | 11 to 1 if the banca's first two cards have the same rank |
//!
//! * `seat`: the seat (box) of a seated bettor; for a standing bettor, the seated place he stands
//!   next to (S.III r.12: the "lugar adjacente").
//! * `player`: the bettor; identifies one player across bets (S.IV r.11). Without it a seated
//!   bet belongs to its seat's titular.
//! * `selection`: must be empty. `on_bet`: only on a standing bet, the seated bet it complements
//!   (optional; must name a bet of the round).
//! * `attrs`: `standing` = `"true"` for a bettor standing in the gaps between seats (r.12). No
//!   other attribute is accepted.
//!
//! `bet_changed` / `bet_withdrawn` apply to the named bet; after "nada mais" they are late
//! (PB_LATE_BET) and are applied as recorded (no consequence is prescribed, digest note 7).
//! `no_more_bets` is the dealer's "Jogo feito. Nada mais." (r.12).
//!
//! **Cards** (`card` events), `to`: `ponto`, `banca`, `burn` (the discard holder: r.6's first 8
//! cards, r.13 ¶2's card before each coup), `discard` (a card taken out of play otherwise). The
//! `face_up` flag is informational: a card found face up in the shoe is valid (r.8).
//!
//! **Procedures** (`procedure` events, `name`):
//! * `shuffle`: a new shoe (r.4; with a continuous shuffler, r.5). Resets the shoe state.
//! * `cut`, `cards_to_shuffler`: informational (r.4, r.5(c)).
//! * `warning_card`: the warning card came out: this coup is the last of the shoe (r.7).
//! * `correction`: the dealer starts correcting a lapse (r.14). Cards dealt after it are the
//!   correction's and are not judged as tableau decisions; the corrected hands are.
//! * `card_annulled` (`value` = the card, e.g. `"3H"`): a dealt card is taken out of the coup
//!   (r.14 correction).
//! * `card_to_ponto` / `card_to_banca` (`value` = the card): a dealt card is moved to that side
//!   (r.14 correction; digest note 3 leaves the choice of physical card to the casino).
//!
//!   The last three imply `correction`. The named card must be held by a side.
//!
//! **Roles**: `dealer`, `card_handler` (r.15, r.16): informational.
//! **Void** (`void` events), `reason`: `uncorrectable_lapse` only (r.14: the coup is null when the
//! lapse cannot be corrected). Every bet's net is 0.
//! `collect` / `pay` are accepted (procedure order) and must name bets of the round.
//! Any other event (`decision`, `dice`, `ball`, `launch`, `fault`, `jackpot_display`) is a
//! [`RoundError`]: ponto e banca has no decisions (the tableau is applied mechanically).
//!
//! ## Settings
//!
//! | name | type | default | meaning |
//! |---|---|---|---|
//! | `pairs_offered` | bool | false | the operator offers the pair bets (r.11) |
//! | `commission_rounding` | text | `down` | rounding of a non-integral commission: `down`, `up`, `half_up`, `half_even` (not regulated) |
//! | `commission_tolerance_cents` | int | 0 | reported nets within this many cents of the due net of a banca bet with a non-integral commission are not a PB_WRONG_PAYOUT |
//! | `max_exposure_cents` | int | required for Macau | M, the IGJ's cap on \|Σponto − Σbanca\| (S.IV r.22, r.23) |
//! | `double_table` | bool | false | a double table (two tabuleiros). With `TableConfig.seats` (all the table's seats) it fixes the standing capacity: seats − 1 on a simple table, seats − 2 on a double one (the gaps between seats, r.2, r.12) |
//! | `continuous_shuffler` | bool | false | a continuous shuffling shoe (r.5): no cut, no 8-card burn, no warning card |
//!
//! The commission option is `TableConfig.commission`: `none` (default), `5pct`, `half_on_5`.
//! Limits are `TableConfig.min_bet_cents`/`max_bet_cents` and `limits` per chance (chance ids are
//! the bet-type ids above).

use rules_core::{
    Adjudication, Bet, BetOutcome, Card, Cents, ConfigError, Configured, EventKind, GameId,
    Options, Outcome, Recipient, Round, RoundError, Severity, TableConfig, Violation, VoidInfo,
    check_stake,
};

use crate::cards::{card_value, is_natural, is_pair, score};
use crate::commission::{Commission, Rounding, banca_win_net};
use crate::limits::{self, PbLimits};
use crate::shoe::ShoeState;
use crate::tableau::{pb_banca_draws, pb_ponto_draws};
use crate::util::{IdIndex, SeatExt, clip, parse_bool_attr};

/// Which of the two sections applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Ponto e banca, P217/2007 T.I C.III S.III.
    Plain,
    /// Ponto e banca/Macau, P217/2007 T.I C.III S.IV.
    Macau,
}

/// Citation of rule `$r` in the section of `$v`.
macro_rules! pb_cite {
    ($v:expr, $r:literal) => {
        match $v {
            $crate::punto_banco::Variant::Plain => concat!("P217/2007 T.I C.III S.III ", $r),
            $crate::punto_banco::Variant::Macau => concat!("P217/2007 T.I C.III S.IV ", $r),
        }
    };
}
pub(crate) use pb_cite;

impl Variant {
    pub const fn game(self) -> GameId {
        match self {
            Variant::Plain => GameId::BaccaratPuntoBanco,
            Variant::Macau => GameId::BaccaratMacau,
        }
    }
}

/// A ponto e banca chance (bet type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Chance {
    Ponto = 0,
    Banca = 1,
    Tie = 2,
    PairPonto = 3,
    PairBanca = 4,
}

impl Chance {
    pub const ALL: [Chance; 5] = [
        Chance::Ponto,
        Chance::Banca,
        Chance::Tie,
        Chance::PairPonto,
        Chance::PairBanca,
    ];

    pub fn parse(s: &str) -> Option<Chance> {
        Some(match s {
            "ponto" => Chance::Ponto,
            "banca" => Chance::Banca,
            "tie" => Chance::Tie,
            "pair_ponto" => Chance::PairPonto,
            "pair_banca" => Chance::PairBanca,
            _ => return None,
        })
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Chance::Ponto => "ponto",
            Chance::Banca => "banca",
            Chance::Tie => "tie",
            Chance::PairPonto => "pair_ponto",
            Chance::PairBanca => "pair_banca",
        }
    }

    pub const fn is_pair(self) -> bool {
        matches!(self, Chance::PairPonto | Chance::PairBanca)
    }
}

/// Setting names read by the ponto e banca engines.
pub const SETTINGS: &[&str] = &[
    "pairs_offered",
    "commission_rounding",
    "commission_tolerance_cents",
    "max_exposure_cents",
    "double_table",
    "continuous_shuffler",
];

/// A ponto e banca table configuration, checked once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PbConfig {
    pub variant: Variant,
    /// The commission option in force (r.20). A configuration naming both deductions is
    /// reported (PB_COMMISSION_OPTION_INVALID) and settled with none (r.17).
    pub commission: Commission,
    pub rounding: Rounding,
    pub tolerance_cents: Cents,
    pub pairs_offered: bool,
    pub limits: PbLimits,
    pub continuous_shuffler: bool,
}

/// Check and compile a ponto e banca table configuration.
pub fn configure(
    table: &TableConfig,
    variant: Variant,
) -> Result<Configured<PbConfig>, ConfigError> {
    table.only_settings(SETTINGS)?;
    let mut violations = Vec::new();
    let commission = match table.commission.as_deref() {
        None | Some("none") => Commission::None,
        Some("5pct") => Commission::FivePct,
        Some("half_on_5") => Commission::HalfOn5,
        // r.20: the two deductions are alternatives ("alternativamente"), never both.
        Some("5pct+half_on_5") | Some("half_on_5+5pct") | Some("both") => {
            violations.push(Violation::new(
                "PB_COMMISSION_OPTION_INVALID",
                Severity::High,
                pb_cite!(variant, "r.20"),
                format!(
                    "the table is configured with both deductions (`{}`); r.20 allows one or the other: banca wins are settled without commission (r.17)",
                    table.commission.as_deref().unwrap_or_default()
                ),
            ));
            Commission::None
        }
        Some(other) => {
            return Err(ConfigError::field(
                "commission",
                format!(
                    "`{}` is not a ponto e banca commission option (none, 5pct, half_on_5)",
                    clip(other)
                ),
            ));
        }
    };
    let rounding = match table.text_setting("commission_rounding")? {
        None => Rounding::Down,
        Some(s) => Rounding::parse(s).ok_or_else(|| {
            ConfigError::setting(
                "commission_rounding",
                format!("`{}` is not one of down, up, half_up, half_even", clip(s)),
            )
        })?,
    };
    let tolerance_cents = table.int_setting("commission_tolerance_cents", 0)?;
    if !(0..=100).contains(&tolerance_cents) {
        return Err(ConfigError::setting(
            "commission_tolerance_cents",
            "must be between 0 and 100 cents",
        ));
    }
    let pairs_offered = table.bool_setting("pairs_offered", false)?;
    let continuous_shuffler = table.bool_setting("continuous_shuffler", false)?;
    if let Some(d) = table.decks
        && !(1..=8).contains(&d)
    {
        return Err(ConfigError::field(
            "decks",
            "must be between 1 and 8 (r.1: 6 on a simple table, 8 on a double table)",
        ));
    }
    let limits = limits::pb_configure(table, variant, pairs_offered, &mut violations)?;
    Ok(Configured {
        config: PbConfig {
            variant,
            commission,
            rounding,
            tolerance_cents,
            pairs_offered,
            limits,
            continuous_shuffler,
        },
        violations,
    })
}

/// A bet as the round leaves it.
#[derive(Clone, Debug)]
pub(crate) struct PbBet<'a> {
    pub bet: &'a Bet,
    pub chance: Chance,
    /// Amount after any change.
    pub amount: Cents,
    pub event_index: usize,
    pub late: bool,
    pub withdrawn: bool,
    pub standing: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Ponto,
    Banca,
}

/// Most cards a side's hand keeps (three are allowed; more is already a PB_TOO_MANY_CARDS).
const HAND_MAX: usize = 8;

/// A side's cards, kept inline (no allocation on the hot path).
#[derive(Clone, Copy, Debug)]
struct Hand {
    cards: [Card; HAND_MAX],
    at: [usize; HAND_MAX],
    len: usize,
}

impl Hand {
    const EMPTY: Hand = Hand {
        cards: [Card::new(rules_core::Rank::Two, rules_core::Suit::Spades); HAND_MAX],
        at: [0; HAND_MAX],
        len: 0,
    };

    fn push(&mut self, card: Card, at: usize) {
        if self.len < HAND_MAX {
            self.cards[self.len] = card;
            self.at[self.len] = at;
            self.len += 1;
        }
    }

    fn cards(&self) -> &[Card] {
        &self.cards[..self.len]
    }

    fn rposition(&self, card: Card) -> Option<usize> {
        self.cards().iter().rposition(|c| *c == card)
    }

    fn remove(&mut self, k: usize) -> (Card, usize) {
        let out = (self.cards[k], self.at[k]);
        self.cards.copy_within(k + 1..self.len, k);
        self.at.copy_within(k + 1..self.len, k);
        self.len -= 1;
        out
    }
}

/// The deal as it happened before any correction: the first three cards of each side, the
/// first card beyond them, and the first departure from P, B, P, B.
#[derive(Clone, Copy, Debug, Default)]
struct DealSeen {
    n: usize,
    order_bad: Option<usize>,
    dp: [Option<(Card, usize)>; 3],
    db: [Option<(Card, usize)>; 3],
    np: usize,
    nb: usize,
    extra_p: Option<usize>,
    extra_b: Option<usize>,
}

impl DealSeen {
    fn push(&mut self, side: Side, card: Card, idx: usize) {
        // r.13: initial deal P, B, P, B.
        if self.n < 4 {
            let expected = if self.n.is_multiple_of(2) {
                Side::Ponto
            } else {
                Side::Banca
            };
            if side != expected && self.order_bad.is_none() {
                self.order_bad = Some(idx);
            }
        }
        self.n += 1;
        let (cards, n, extra) = match side {
            Side::Ponto => (&mut self.dp, &mut self.np, &mut self.extra_p),
            Side::Banca => (&mut self.db, &mut self.nb, &mut self.extra_b),
        };
        if *n < 3 {
            cards[*n] = Some((card, idx));
        } else if extra.is_none() {
            *extra = Some(idx);
        }
        *n += 1;
    }
}

/// The parsed record of one coup.
struct Record<'a> {
    bets: Vec<PbBet<'a>>,
    /// The deal before any correction.
    dealt: DealSeen,
    /// The hands after the recorded corrections.
    ponto: Hand,
    banca: Hand,
    corrected: bool,
    void: Option<usize>,
    late_changes: Vec<(usize, usize)>, // (bet position, event index)
}

/// Adjudicate one coup.
pub fn adjudicate(
    cfg: &PbConfig,
    shoe: &mut ShoeState,
    round: &Round,
    options: &Options,
) -> Result<Adjudication, RoundError> {
    let v = cfg.variant;
    let mut new_shoe = *shoe;
    let mut adj = Adjudication::new(v.game(), round.round_id.clone());
    let rec = parse(cfg, &mut new_shoe, round, &mut adj, options)?;

    // r.14: a coup declared null for an uncorrectable lapse: every bet returned.
    let result = if let Some(vi) = rec.void {
        adj.void = Some(VoidInfo {
            reason: "uncorrectable_lapse".into(),
            citation: pb_cite!(v, "r.14").into(),
        });
        adj.violation(
            Violation::new(
                "PB_UNCORRECTABLE_LAPSE",
                Severity::Low,
                pb_cite!(v, "r.14"),
                "the coup was declared null for a lapse that could not be corrected: every bet is returned",
            )
            .event(vi),
        );
        if options.explain {
            adj.note(
                pb_cite!(v, "r.14"),
                "coup null: the tableau is not checked and no bet wins or loses",
            );
        }
        None
    } else {
        Some(play(cfg, &rec, round, &mut adj, options)?)
    };

    settle(cfg, &rec, result.as_ref(), &mut adj, options);
    limits::pb_check_bets(cfg, &rec.bets, &mut adj);
    for &(pos, idx) in &rec.late_changes {
        let b = &rec.bets[pos];
        adj.violation(
            Violation::new(
                "PB_LATE_BET",
                Severity::Medium,
                pb_cite!(v, "r.12"),
                format!(
                    "bet `{}` was changed or withdrawn after \"nada mais\"",
                    b.bet.id
                ),
            )
            .bet(&b.bet.id)
            .tap_seat(b.bet.seat)
            .event(idx),
        );
    }
    adj.reconcile(
        round.settlement.as_ref(),
        "PB_WRONG_PAYOUT",
        pb_cite!(v, "r.17-r.20"),
    );
    post_reconcile(cfg, &rec, result.as_ref(), &mut adj);
    *shoe = new_shoe;
    Ok(adj)
}

fn parse<'a>(
    cfg: &PbConfig,
    shoe: &mut ShoeState,
    round: &'a Round,
    adj: &mut Adjudication,
    options: &Options,
) -> Result<Record<'a>, RoundError> {
    let n = round.events.len();
    let mut rec = Record {
        bets: Vec::with_capacity(n.min(32)),
        dealt: DealSeen::default(),
        ponto: Hand::EMPTY,
        banca: Hand::EMPTY,
        corrected: false,
        void: None,
        late_changes: Vec::new(),
    };
    let mut index = IdIndex::with_capacity(n.min(32));
    let mut nada_mais = false;
    let mut deal_started = false;
    let mut burns_before_deal = 0u32;
    for (i, ev) in round.events.iter().enumerate() {
        match &ev.kind {
            EventKind::Bet(b) => {
                let chance = Chance::parse(&b.bet_type).ok_or_else(|| {
                    RoundError::bet(
                        round,
                        &b.id,
                        format!(
                            "`{}` is not a ponto e banca bet (ponto, banca, tie, pair_ponto, pair_banca)",
                            clip(&b.bet_type)
                        ),
                    )
                })?;
                check_stake(round, &b.id, b.amount_cents)?;
                if !b.selection.is_empty() {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "a ponto e banca bet takes no selection",
                    ));
                }
                let mut standing = false;
                for (k, val) in &b.attrs {
                    match (k.as_str(), parse_bool_attr(val)) {
                        ("standing", Some(s)) => standing = s,
                        _ => {
                            return Err(RoundError::bet(
                                round,
                                &b.id,
                                format!(
                                    "attribute `{}`=`{}` is not understood (only standing=true/false)",
                                    clip(k),
                                    clip(val)
                                ),
                            ));
                        }
                    }
                }
                if b.on_bet.is_some() && !standing {
                    return Err(RoundError::bet(
                        round,
                        &b.id,
                        "on_bet is only for a standing bet complementing a seated bet",
                    ));
                }
                if !index.insert(&b.id, rec.bets.len()) {
                    return Err(RoundError::bet(round, &b.id, "duplicate bet id"));
                }
                let late = nada_mais || deal_started;
                rec.bets.push(PbBet {
                    bet: b,
                    chance,
                    amount: b.amount_cents,
                    event_index: i,
                    late,
                    withdrawn: false,
                    standing,
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
                rec.bets[pos].amount = *amount_cents;
                if nada_mais || deal_started {
                    rec.late_changes.push((pos, i));
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
                rec.bets[pos].withdrawn = true;
                if nada_mais || deal_started {
                    rec.late_changes.push((pos, i));
                }
            }
            EventKind::NoMoreBets => nada_mais = true,
            EventKind::Card { to, card, .. } => {
                let side = match to {
                    Recipient::Ponto => Some(Side::Ponto),
                    Recipient::Banca => Some(Side::Banca),
                    Recipient::Burn => {
                        if !deal_started {
                            burns_before_deal += 1;
                            if shoe.coups == 0 {
                                shoe.initial_burned = shoe.initial_burned.saturating_add(1);
                            }
                        }
                        None
                    }
                    Recipient::Discard => None,
                    other => {
                        return Err(RoundError::event(
                            round,
                            i,
                            format!(
                                "a ponto e banca card goes to ponto, banca, burn or discard, not `{other}`"
                            ),
                        ));
                    }
                };
                shoe.card_out(*card);
                if let Some(side) = side {
                    if !deal_started {
                        deal_started = true;
                        start_coup(cfg, shoe, burns_before_deal, i, adj, options);
                    }
                    if !rec.corrected {
                        rec.dealt.push(side, *card, i);
                    }
                    match side {
                        Side::Ponto => rec.ponto.push(*card, i),
                        Side::Banca => rec.banca.push(*card, i),
                    }
                }
            }
            EventKind::Procedure { name, value, .. } => match name.as_str() {
                "shuffle" => {
                    *shoe = ShoeState::shuffled();
                    burns_before_deal = 0;
                }
                "cut" | "cards_to_shuffler" => {}
                "warning_card" => shoe.warning(deal_started),
                "correction" => rec.corrected = true,
                "card_annulled" | "card_to_ponto" | "card_to_banca" => {
                    rec.corrected = true;
                    let card: Card =
                        value
                            .as_deref()
                            .and_then(|s| s.parse().ok())
                            .ok_or_else(|| {
                                RoundError::event(
                                    round,
                                    i,
                                    format!("`{name}` needs the card as its value, e.g. \"3H\""),
                                )
                            })?;
                    let moved = take_card(&mut rec, card).ok_or_else(|| {
                        RoundError::event(
                            round,
                            i,
                            format!("`{name}` names {card}, which neither side holds"),
                        )
                    })?;
                    match name.as_str() {
                        "card_to_ponto" => rec.ponto.push(moved.0, moved.1),
                        "card_to_banca" => rec.banca.push(moved.0, moved.1),
                        _ => {}
                    }
                }
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "`{}` is not a ponto e banca procedure (shuffle, cut, cards_to_shuffler, warning_card, correction, card_annulled, card_to_ponto, card_to_banca)",
                            clip(other)
                        ),
                    ));
                }
            },
            EventKind::Role { role, .. } => match role.as_str() {
                "dealer" | "card_handler" => {}
                other => {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "`{}` is not a ponto e banca role (dealer, card_handler)",
                            clip(other)
                        ),
                    ));
                }
            },
            EventKind::Void { reason } => {
                if reason != "uncorrectable_lapse" {
                    return Err(RoundError::event(
                        round,
                        i,
                        format!(
                            "`{}` is not a ponto e banca void reason (uncorrectable_lapse, r.14)",
                            clip(reason)
                        ),
                    ));
                }
                rec.void.get_or_insert(i);
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
                    format!("{} events are not part of ponto e banca", other.type_name()),
                ));
            }
        }
    }
    // Standing bets may name the seated bet they complement.
    for b in &rec.bets {
        if let Some(on) = &b.bet.on_bet
            && index.get(on).is_none()
        {
            return Err(RoundError::bet(
                round,
                &b.bet.id,
                format!("on_bet names unknown bet `{}`", clip(on)),
            ));
        }
    }
    if rec.void.is_none() && (rec.ponto.len < 2 || rec.banca.len < 2) {
        return Err(RoundError::round(
            round,
            format!(
                "the coup is incomplete: ponto holds {} card(s) and banca {} (two each are dealt, r.13)",
                rec.ponto.len, rec.banca.len
            ),
        ));
    }
    Ok(rec)
}

/// Remove the most recently dealt card equal to `card` from either side.
fn take_card(rec: &mut Record<'_>, card: Card) -> Option<(Card, usize)> {
    let p = rec.ponto.rposition(card);
    let b = rec.banca.rposition(card);
    let from_ponto = match (p, b) {
        (Some(p), Some(b)) => rec.ponto.at[p] > rec.banca.at[b],
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (None, None) => return None,
    };
    Some(if from_ponto {
        rec.ponto.remove(p.unwrap_or(0))
    } else {
        rec.banca.remove(b.unwrap_or(0))
    })
}

/// The first card of the coup: shoe checks (r.5-r.7, r.13 ¶2).
fn start_coup(
    cfg: &PbConfig,
    shoe: &mut ShoeState,
    burns_before_deal: u32,
    idx: usize,
    adj: &mut Adjudication,
    options: &Options,
) {
    let v = cfg.variant;
    let first_of_shoe = shoe.coups == 0;
    let after_last = shoe.start_coup();
    // r.7 (not with a continuous shuffler, r.5(a)).
    if after_last && !cfg.continuous_shuffler {
        adj.violation(
            Violation::new(
                "PB_COUP_AFTER_LAST_OF_SHOE",
                Severity::Medium,
                pb_cite!(v, "r.7"),
                "a coup was dealt after the coup in which the warning card came out, without a reshuffle",
            )
            .event(idx),
        );
    }
    if cfg.continuous_shuffler {
        // r.5(a) switches off r.6 and r.7 only; r.13 ¶2 literally still applies (digest note 10).
        if burns_before_deal == 0 {
            adj.violation(
                Violation::new(
                    "PB_BURN_MISSING",
                    Severity::Info,
                    pb_cite!(v, "r.13"),
                    "no card was burned before this coup (continuous shuffler: informational, digest note 10)",
                )
                .review()
                .event(idx),
            );
        }
    } else if shoe.known {
        if first_of_shoe {
            // r.6: the first 8 cards of the shoe go to the discard holder.
            if shoe.initial_burned < 8 {
                adj.violation(
                    Violation::new(
                        "PB_BURN_MISSING",
                        Severity::Low,
                        pb_cite!(v, "r.6"),
                        format!(
                            "{} card(s) burned after the shuffle instead of the first 8",
                            shoe.initial_burned
                        ),
                    )
                    .event(idx),
                );
            }
        } else if burns_before_deal == 0 {
            // r.13 ¶2: one card burned before every coup but the first.
            adj.violation(
                Violation::new(
                    "PB_BURN_MISSING",
                    Severity::Low,
                    pb_cite!(v, "r.13"),
                    "no card was burned before this coup, which is not the first of the shoe",
                )
                .event(idx),
            );
        }
    }
    if options.explain {
        adj.note(
            pb_cite!(v, "r.13"),
            format!(
                "coup {} of the shoe; {} card(s) burned before the deal",
                shoe.coups, burns_before_deal
            ),
        );
    }
}

/// The final result of a played coup.
#[derive(Clone, Debug)]
pub(crate) struct PbResult {
    pub ponto_score: u8,
    pub banca_score: u8,
    pub ponto_pair: bool,
    pub banca_pair: bool,
}

/// What the tableau does with two hands (each with at least two cards).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tableau {
    natural: bool,
    /// Cards each side keeps (2 or 3).
    ponto_keep: usize,
    banca_keep: usize,
    /// The side had to draw but holds no third card.
    ponto_missing: bool,
    banca_missing: bool,
}

/// Apply r.13 to two hands: which cards stand, which were drawn against the tableau.
fn apply_tableau(ponto: &[Card], banca: &[Card]) -> Tableau {
    let p2 = score(&ponto[..2]);
    let b2 = score(&banca[..2]);
    if is_natural(p2) || is_natural(b2) {
        return Tableau {
            natural: true,
            ponto_keep: 2,
            banca_keep: 2,
            ponto_missing: false,
            banca_missing: false,
        };
    }
    let ponto_draws = pb_ponto_draws(p2);
    let ponto_keep = if ponto_draws && ponto.len() >= 3 {
        3
    } else {
        2
    };
    let p3 = (ponto_keep == 3).then(|| card_value(ponto[2]));
    let banca_draws = pb_banca_draws(b2, p3);
    let banca_keep = if banca_draws && banca.len() >= 3 {
        3
    } else {
        2
    };
    Tableau {
        natural: false,
        ponto_keep,
        banca_keep,
        ponto_missing: ponto_draws && ponto.len() < 3,
        banca_missing: banca_draws && banca.len() < 3,
    }
}

/// r.13 and r.14: judge the deal, correct it, and give the final hands.
fn play(
    cfg: &PbConfig,
    rec: &Record<'_>,
    round: &Round,
    adj: &mut Adjudication,
    options: &Options,
) -> Result<PbResult, RoundError> {
    let v = cfg.variant;
    let explain = options.explain;
    let _ = round;
    // --- The deal as it happened (before any correction): judge each decision against the
    // cards on the table when it was taken.
    let DealSeen {
        dp,
        db,
        extra_p,
        extra_b,
        mut order_bad,
        ..
    } = rec.dealt;
    // The banca's third card dealt before the ponto's third card.
    if let (Some((_, bi)), Some((_, pi))) = (db[2], dp[2])
        && bi < pi
        && order_bad.is_none()
    {
        order_bad = Some(bi);
    }
    if let Some(idx) = order_bad {
        adj.violation(
            Violation::new(
                "PB_DEAL_ORDER",
                Severity::Low,
                pb_cite!(v, "r.13"),
                "the cards were not dealt ponto, banca, ponto, banca, ponto's additional card first",
            )
            .event(idx),
        );
    }
    for (extra, side) in [(extra_p, "ponto"), (extra_b, "banca")] {
        if let Some(idx) = extra {
            adj.violation(
                Violation::new(
                    "PB_TOO_MANY_CARDS",
                    Severity::High,
                    pb_cite!(v, "r.13"),
                    format!("{side} received more than one additional card; the extra cards are removed (r.14)"),
                )
                .event(idx),
            );
        }
    }
    let mut ponto_flagged = false;
    let mut banca_flagged = false;
    let mut ponto_not_drawn_at: Option<usize> = None;
    if let (Some((p1, _)), Some((p2c, p2i)), Some((b1, _)), Some((b2c, b2i))) =
        (dp[0], dp[1], db[0], db[1])
    {
        let p2 = score(&[p1, p2c]);
        let b2 = score(&[b1, b2c]);
        if is_natural(p2) || is_natural(b2) {
            // r.13 and digest note 2: a natural on either side ends the drawing.
            if let Some((c, i)) = dp[2] {
                ponto_flagged = true;
                adj.violation(
                    Violation::new(
                        "PB_PONTO_DREW_AGAINST_TABLEAU",
                        Severity::High,
                        pb_cite!(v, "r.13"),
                        format!(
                            "ponto received {c} after a natural (ponto {p2}, banca {b2}); the card is removed (r.14)"
                        ),
                    )
                    .event(i),
                );
            }
            if let Some((c, i)) = db[2] {
                banca_flagged = true;
                adj.violation(
                    Violation::new(
                        "PB_BANCA_DREW_AGAINST_TABLEAU",
                        Severity::High,
                        pb_cite!(v, "r.13"),
                        format!(
                            "banca received {c} after a natural (ponto {p2}, banca {b2}); the card is removed (r.14)"
                        ),
                    )
                    .event(i),
                );
            }
        } else {
            let ponto_draws = pb_ponto_draws(p2);
            match (ponto_draws, dp[2]) {
                (false, Some((c, i))) => {
                    ponto_flagged = true;
                    adj.violation(
                        Violation::new(
                            "PB_PONTO_DREW_AGAINST_TABLEAU",
                            Severity::High,
                            pb_cite!(v, "r.13"),
                            format!("ponto on {p2} must stand but received {c}; the card is removed (r.14)"),
                        )
                        .event(i),
                    );
                }
                (true, None) => {
                    ponto_flagged = true;
                    let at = db[2].map(|(_, i)| i).unwrap_or(p2i.max(b2i));
                    ponto_not_drawn_at = Some(adj.violations.len());
                    adj.violation(
                        Violation::new(
                            "PB_PONTO_NOT_DRAWN",
                            Severity::High,
                            pb_cite!(v, "r.13"),
                            format!("ponto on {p2} had to draw and received no card"),
                        )
                        .event(at),
                    );
                }
                _ => {}
            }
            // The banca judged against the ponto's third card as dealt.
            let p3 = dp[2].map(|(c, _)| card_value(c));
            let banca_draws = pb_banca_draws(b2, p3);
            let col = match p3 {
                Some(x) => format_col(x),
                None => "no third card",
            };
            match (banca_draws, db[2]) {
                (false, Some((c, i))) => {
                    banca_flagged = true;
                    adj.violation(
                        Violation::new(
                            "PB_BANCA_DREW_AGAINST_TABLEAU",
                            Severity::High,
                            pb_cite!(v, "r.13"),
                            format!("banca on {b2} against {col} must stand but received {c}; the card is removed (r.14)"),
                        )
                        .event(i),
                    );
                }
                (true, None) => {
                    banca_flagged = true;
                    adj.violation(
                        Violation::new(
                            "PB_BANCA_NOT_DRAWN",
                            Severity::High,
                            pb_cite!(v, "r.13"),
                            format!("banca on {b2} against {col} had to draw and received no card"),
                        )
                        .event(p2i.max(b2i)),
                    );
                }
                _ => {}
            }
        }
    }

    // --- The corrected coup: the recorded hands (after the casino's corrections) with every
    // card the tableau forbids removed (r.14).
    let ponto_all: &[Card] = rec.ponto.cards();
    let banca_all: &[Card] = rec.banca.cards();
    let t = apply_tableau(ponto_all, banca_all);
    if rec.corrected {
        // The casino's correction must itself follow the tableau.
        let p_off = ponto_all.len() != t.ponto_keep || t.ponto_missing;
        let b_off = banca_all.len() != t.banca_keep || t.banca_missing;
        if p_off {
            adj.violation(Violation::new(
                if t.ponto_missing { "PB_PONTO_NOT_DRAWN" } else { "PB_PONTO_DREW_AGAINST_TABLEAU" },
                Severity::High,
                pb_cite!(v, "r.14"),
                format!(
                    "the recorded correction leaves the ponto with {} card(s), which the tableau does not allow",
                    ponto_all.len()
                ),
            ));
        }
        if b_off {
            adj.violation(Violation::new(
                if t.banca_missing { "PB_BANCA_NOT_DRAWN" } else { "PB_BANCA_DREW_AGAINST_TABLEAU" },
                Severity::High,
                pb_cite!(v, "r.14"),
                format!(
                    "the recorded correction leaves the banca with {} card(s), which the tableau does not allow",
                    banca_all.len()
                ),
            ));
        }
    } else {
        // Without a recorded correction a missing card cannot be supplied (digest note 3): the
        // side is settled with the cards it has, and the finding goes to review.
        if t.ponto_missing
            && let Some(k) = ponto_not_drawn_at
        {
            adj.violations[k].confidence = rules_core::Confidence::Review;
        }
        if t.banca_missing {
            if banca_flagged {
                for x in adj.violations.iter_mut().rev() {
                    if x.code == "PB_BANCA_NOT_DRAWN" {
                        x.confidence = rules_core::Confidence::Review;
                        break;
                    }
                }
            } else if ponto_flagged {
                // Consequential: the ponto's card was removed and now the banca must draw.
                for x in adj.violations.iter_mut().rev() {
                    if x.code == "PB_PONTO_DREW_AGAINST_TABLEAU" {
                        x.confidence = rules_core::Confidence::Review;
                        x.message.push_str(
                            "; the banca must then draw and the record shows no correction supplying its card (digest note 3)",
                        );
                        break;
                    }
                }
            }
        }
    }
    let ponto_score = score(&ponto_all[..t.ponto_keep]);
    let banca_score = score(&banca_all[..t.banca_keep]);
    if explain {
        explain_coup(cfg, ponto_all, banca_all, &t, adj);
        let _ = (ponto_score, banca_score);
    }
    Ok(PbResult {
        ponto_pair: is_pair(ponto_all[0], ponto_all[1]),
        banca_pair: is_pair(banca_all[0], banca_all[1]),
        ponto_score,
        banca_score,
    })
}

fn format_col(v: u8) -> &'static str {
    match v {
        0 => "a third card of 0",
        1 => "a third card of 1",
        2 => "a third card of 2",
        3 => "a third card of 3",
        4 => "a third card of 4",
        5 => "a third card of 5",
        6 => "a third card of 6",
        7 => "a third card of 7",
        8 => "a third card of 8",
        _ => "a third card of 9",
    }
}

fn cards_str(cards: &[Card]) -> String {
    let mut s = String::new();
    for (i, c) in cards.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&c.to_string());
    }
    s
}

fn explain_coup(
    cfg: &PbConfig,
    ponto: &[Card],
    banca: &[Card],
    t: &Tableau,
    adj: &mut Adjudication,
) {
    let v = cfg.variant;
    let p2 = score(&ponto[..2]);
    let b2 = score(&banca[..2]);
    adj.note(
        pb_cite!(v, "r.9"),
        format!(
            "ponto {} scores {p2}, banca {} scores {b2} (ace 1, ten and court cards 0, tens dropped)",
            cards_str(&ponto[..2]),
            cards_str(&banca[..2])
        ),
    );
    if t.natural {
        adj.note(
            pb_cite!(v, "r.13"),
            "a natural (8 or 9) is announced at once: neither side draws (digest note 2)",
        );
    } else {
        adj.note(
            pb_cite!(v, "r.13"),
            if pb_ponto_draws(p2) {
                format!("ponto on {p2} must draw (0-5)")
            } else {
                format!("ponto on {p2} stands (6-7)")
            },
        );
        if t.ponto_keep == 3 {
            adj.note(
                pb_cite!(v, "r.13"),
                format!("ponto draws {} and scores {}", ponto[2], score(&ponto[..3])),
            );
        }
        let p3 = (t.ponto_keep == 3).then(|| card_value(ponto[2]));
        let draws = pb_banca_draws(b2, p3);
        adj.note(
            pb_cite!(v, "r.13"),
            format!(
                "banca on {b2} against {}: {}",
                match p3 {
                    Some(x) => format_col(x),
                    None => "a ponto who stood",
                },
                if draws { "must draw" } else { "must stand" }
            ),
        );
        if t.banca_keep == 3 {
            adj.note(
                pb_cite!(v, "r.13"),
                format!("banca draws {} and scores {}", banca[2], score(&banca[..3])),
            );
        }
    }
    if ponto.len() > t.ponto_keep || banca.len() > t.banca_keep {
        adj.note(
            pb_cite!(v, "r.14"),
            format!(
                "correction: {} card(s) the tableau forbids are removed",
                ponto.len() - t.ponto_keep + banca.len() - t.banca_keep
            ),
        );
    }
    let ps = score(&ponto[..t.ponto_keep]);
    let bs = score(&banca[..t.banca_keep]);
    adj.note(
        pb_cite!(v, "r.17"),
        match ps.cmp(&bs) {
            std::cmp::Ordering::Greater => format!("ponto {ps} beats banca {bs}"),
            std::cmp::Ordering::Less => format!("banca {bs} beats ponto {ps}"),
            std::cmp::Ordering::Equal => format!("tie at {ps} (r.18)"),
        },
    );
}

/// A coup played mechanically by the tableau (P217/2007 T.I C.III S.III r.13) from cards in
/// shoe order: the ponto's two cards are `shoe[0]`, `shoe[2]`, the banca's `shoe[1]`,
/// `shoe[3]`, then the ponto's third card if he draws and the banca's if it draws. Used by the
/// exhaustive tests and by anyone who needs the reference play of a shoe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoupScores {
    pub ponto: u8,
    pub banca: u8,
    pub ponto_pair: bool,
    pub banca_pair: bool,
    /// Cards the coup took from the shoe (4 to 6).
    pub cards_used: usize,
}

/// Play a coup from `shoe` (see [`CoupScores`]); `None` if the shoe runs out.
pub fn play_from_shoe(shoe: &[Card]) -> Option<CoupScores> {
    let (p1, b1, p2, b2) = (*shoe.first()?, *shoe.get(1)?, *shoe.get(2)?, *shoe.get(3)?);
    let mut ps = score(&[p1, p2]);
    let mut bs = score(&[b1, b2]);
    let mut used = 4;
    if !is_natural(ps) && !is_natural(bs) {
        let mut p3 = None;
        if pb_ponto_draws(ps) {
            let c = *shoe.get(used)?;
            used += 1;
            ps = (ps + card_value(c)) % 10;
            p3 = Some(card_value(c));
        }
        if pb_banca_draws(bs, p3) {
            let c = *shoe.get(used)?;
            used += 1;
            bs = (bs + card_value(c)) % 10;
        }
    }
    Some(CoupScores {
        ponto: ps,
        banca: bs,
        ponto_pair: is_pair(p1, p2),
        banca_pair: is_pair(b1, b2),
        cards_used: used,
    })
}

/// The due net of a bet of `stake` on `chance` in a coup that ended with `scores`, under the
/// table's commission option and rounding (r.17-r.20).
pub fn due_net(cfg: &PbConfig, chance: Chance, stake: Cents, scores: &CoupScores) -> Cents {
    let r = PbResult {
        ponto_score: scores.ponto,
        banca_score: scores.banca,
        ponto_pair: scores.ponto_pair,
        banca_pair: scores.banca_pair,
    };
    bet_result(cfg, chance, stake, &r).0
}

/// The due net of one bet, with its outcome, reason and citation, and whether a commission was
/// non-integral.
pub(crate) fn bet_result(
    cfg: &PbConfig,
    chance: Chance,
    stake: Cents,
    r: &PbResult,
) -> (Cents, Outcome, &'static str, &'static str, bool) {
    let v = cfg.variant;
    let (ps, bs) = (r.ponto_score, r.banca_score);
    match chance {
        Chance::Ponto => {
            if ps > bs {
                (
                    stake,
                    Outcome::Won,
                    "ponto won: paid 1 to 1",
                    pb_cite!(v, "r.17"),
                    true,
                )
            } else if ps < bs {
                (
                    -stake,
                    Outcome::Lost,
                    "ponto lost",
                    pb_cite!(v, "r.17"),
                    true,
                )
            } else {
                (
                    0,
                    Outcome::Push,
                    "tie: the ponto bet stands",
                    pb_cite!(v, "r.18"),
                    true,
                )
            }
        }
        Chance::Banca => {
            if bs > ps {
                let (net, exact) = banca_win_net(stake, cfg.commission, bs, cfg.rounding);
                let (reason, cite) = match cfg.commission.rate(bs) {
                    None => ("banca won: paid 1 to 1", pb_cite!(v, "r.17")),
                    Some(_) if cfg.commission == Commission::FivePct => (
                        "banca won: paid 1 to 1 less 5% of the prize",
                        pb_cite!(v, "r.20(a)"),
                    ),
                    Some(_) => (
                        "banca won with 5: paid 1 to 1 less 50% of the prize",
                        pb_cite!(v, "r.20(b)"),
                    ),
                };
                (net, Outcome::Won, reason, cite, exact)
            } else if bs < ps {
                (
                    -stake,
                    Outcome::Lost,
                    "banca lost",
                    pb_cite!(v, "r.17"),
                    true,
                )
            } else {
                (
                    0,
                    Outcome::Push,
                    "tie: the banca bet stands",
                    pb_cite!(v, "r.18"),
                    true,
                )
            }
        }
        Chance::Tie => {
            if ps == bs {
                (
                    8 * stake,
                    Outcome::Won,
                    "tie won: paid 8 to 1",
                    pb_cite!(v, "r.18"),
                    true,
                )
            } else {
                (-stake, Outcome::Lost, "no tie", pb_cite!(v, "r.18"), true)
            }
        }
        Chance::PairPonto | Chance::PairBanca => {
            let pair = if chance == Chance::PairPonto {
                r.ponto_pair
            } else {
                r.banca_pair
            };
            if pair {
                (
                    11 * stake,
                    Outcome::Won,
                    "pair: paid 11 to 1",
                    pb_cite!(v, "r.19"),
                    true,
                )
            } else {
                (
                    -stake,
                    Outcome::Lost,
                    "no pair in the first two cards",
                    pb_cite!(v, "r.19"),
                    true,
                )
            }
        }
    }
}

fn settle(
    cfg: &PbConfig,
    rec: &Record<'_>,
    result: Option<&PbResult>,
    adj: &mut Adjudication,
    options: &Options,
) {
    let v = cfg.variant;
    adj.bets.reserve(rec.bets.len());
    for b in &rec.bets {
        let stake = b.amount;
        let (due, outcome, reason, citation) = if b.withdrawn {
            (
                0,
                Outcome::Withdrawn,
                "withdrawn before the coup was decided",
                pb_cite!(v, "r.12"),
            )
        } else {
            match result {
                None => (
                    0,
                    Outcome::Void,
                    "coup null (r.14): stake returned",
                    pb_cite!(v, "r.14"),
                ),
                Some(r) => {
                    let (net, outcome, reason, cite, exact) = bet_result(cfg, b.chance, stake, r);
                    if !exact {
                        adj.violation(
                            Violation::new(
                                "PB_COMMISSION_ROUNDING",
                                Severity::Info,
                                pb_cite!(v, "r.20"),
                                format!(
                                    "bet `{}`: the commission on {} cents is not a whole number of cents; rounded {} (not regulated, digest note 4)",
                                    b.bet.id,
                                    stake,
                                    cfg.rounding.as_str()
                                ),
                            )
                            .review()
                            .bet(&b.bet.id)
.tap_seat(b.bet.seat),
                        );
                    }
                    (net, outcome, reason, cite)
                }
            }
        };
        if options.explain {
            adj.note(
                citation,
                format!(
                    "bet `{}` ({}, {} cents): {} → {:+} cents",
                    b.bet.id,
                    b.chance.as_str(),
                    stake,
                    reason,
                    due
                ),
            );
        }
        adj.bets.push(BetOutcome {
            bet_id: b.bet.id.clone(),
            seat: b.bet.seat,
            stake_cents: stake,
            due_net_cents: due,
            outcome,
            reported_net_cents: None,
            reason: reason.into(),
            citation: citation.into(),
        });
    }
}

/// After reconciliation: the commission tolerance, deductions applied without the option
/// (PB_COMMISSION_OPTION_INVALID) and deductions from pair prizes (digest note 5).
fn post_reconcile(
    cfg: &PbConfig,
    rec: &Record<'_>,
    result: Option<&PbResult>,
    adj: &mut Adjudication,
) {
    if adj.discrepancies.is_empty() {
        return;
    }
    let Some(r) = result else { return };
    let v = cfg.variant;
    let mut k = 0;
    while k < adj.discrepancies.len() {
        let d = &adj.discrepancies[k];
        let Some(pos) = adj.bets.iter().position(|b| b.bet_id == d.bet_id) else {
            k += 1;
            continue;
        };
        let b = &rec.bets[pos];
        let Some(reported) = d.reported_net_cents else {
            k += 1;
            continue;
        };
        if b.withdrawn {
            k += 1;
            continue;
        }
        let stake = b.amount;
        let banca_won = r.banca_score > r.ponto_score;
        if b.chance == Chance::Banca && banca_won {
            let (_, exact) = banca_win_net(stake, cfg.commission, r.banca_score, cfg.rounding);
            if !exact && (reported - d.due_net_cents).abs() <= cfg.tolerance_cents {
                adj.discrepancies.remove(k);
                continue;
            }
            // A deduction the table's option does not allow.
            for other in [Commission::FivePct, Commission::HalfOn5] {
                if other == cfg.commission || other.rate(r.banca_score).is_none() {
                    continue;
                }
                let matches = [Rounding::Down, Rounding::Up]
                    .iter()
                    .any(|&rd| banca_win_net(stake, other, r.banca_score, rd).0 == reported);
                if matches {
                    adj.violations.push(
                        Violation::new(
                            "PB_COMMISSION_OPTION_INVALID",
                            Severity::High,
                            pb_cite!(v, "r.20"),
                            format!(
                                "bet `{}`: a {} deduction was applied although the table's option is `{}`",
                                b.bet.id,
                                other.as_str(),
                                cfg.commission.as_str()
                            ),
                        )
                        .bet(&b.bet.id)
.tap_seat(b.bet.seat),
                    );
                    break;
                }
            }
        }
        if b.chance.is_pair() && banca_won && d.due_net_cents > 0 {
            let prize = d.due_net_cents;
            let deducted = [Rounding::Down, Rounding::Up]
                .iter()
                .any(|&rd| prize - crate::commission::deduction(prize, 5, 100, rd).0 == reported)
                || (r.banca_score == 5
                    && [Rounding::Down, Rounding::Up].iter().any(|&rd| {
                        prize - crate::commission::deduction(prize, 1, 2, rd).0 == reported
                    }));
            if deducted {
                adj.violations.push(
                    Violation::new(
                        "PB_PAIR_COMMISSION_DEDUCTED",
                        Severity::Info,
                        pb_cite!(v, "r.20"),
                        format!(
                            "bet `{}`: the banca commission was deducted from a pair prize (r.20 is read as reducing banca prizes only, digest note 5)",
                            b.bet.id
                        ),
                    )
                    .review()
                    .bet(&b.bet.id)
.tap_seat(b.bet.seat),
                );
            }
        }
        k += 1;
    }
}
