//! Bank money and the hand in chemin de fer: who banks, with how much, and what carries over.
//!
//! * The bank (r.35, r.39, r.45): capital at least the table minimum, no maximum; one banco or
//!   several bets up to its amount; only the covered part is at risk.
//! * The associate (r.31): an equal amount added at the start of a hand; equal shares.
//! * After a win (r.46, r.34, r.33, r.80): the accumulated bank, or twice the stakes won under
//!   partial cover, or half after the 3rd, 5th, ... won coup, or keep/half at a new shoe.
//! * The hand (r.29, r.32, r.76-r.94, r.96(c)): passes to the right after a loss; may be passed
//!   after a win or a null coup, then offered at the same level, then auctioned.
//!
//! [`CfTableState`] is what a chemin de fer table carries from one coup to the next.

use rules_core::{Adjudication, Cents, Id, Severity, Violation};
use serde::{Deserialize, Serialize};

use super::coup::CoupResult;
use super::{CfConfig, CfKind, CfRecord};

/// A player at the table: a seat (1-9) and/or a player id; standing players stand behind a seat
/// (r.24) and are told apart by their player id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Participant {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<Id>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub standing: bool,
}

impl Participant {
    /// The same person: equal player ids when both are known, else the same seat and standing.
    pub fn same(&self, o: &Participant) -> bool {
        match (&self.player, &o.player) {
            (Some(a), Some(b)) => a == b,
            _ => self.seat.is_some() && self.seat == o.seat && self.standing == o.standing,
        }
    }

    pub fn describe(&self) -> String {
        match (&self.player, self.seat, self.standing) {
            (Some(p), Some(s), true) => format!("player `{p}` (standing at seat {s})"),
            (Some(p), Some(s), false) => format!("player `{p}` (seat {s})"),
            (Some(p), None, _) => format!("player `{p}`"),
            (None, Some(s), true) => format!("the standing player at seat {s}"),
            (None, Some(s), false) => format!("seat {s}"),
            (None, None, _) => "an unidentified player".to_string(),
        }
    }
}

/// How the last coup ended for the bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BankResult {
    Won,
    Lost,
    Null,
    Void,
}

/// A hand passed ("Passo a mão", r.77; after a null coup, r.76, r.89) awaiting its taker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassedHand {
    /// The banker who passed.
    pub passer: Participant,
    /// His associate, if any (r.86).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub associate: Option<Participant>,
    /// The level of the offer: the amount that would have been the bank in the next coup
    /// (r.78, r.80; note 15: the accumulated bank unless a reduction was declared first).
    pub level_cents: Cents,
    /// The bank the passer had in play (he may continue with it at an auction, r.80).
    pub bank_cents: Cents,
    /// Passed right after a null coup (r.89: the passer may not banco on the next coup).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_null: bool,
}

/// What a chemin de fer table carries from one coup to the next. Every field has a default:
/// a freshly opened table has no banker, no bank and an unknown seat census.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CfTableState {
    /// The banker who dealt the last coup (r.30); `None` before the first coup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banker: Option<Participant>,
    /// His associate in the current hand (r.31).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub associate: Option<Participant>,
    /// The bank in play at the last coup (banker's and associate's capital), in cents.
    pub bank_cents: Cents,
    /// How the last coup ended for the bank; `None` before the first coup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_result: Option<BankResult>,
    /// Punters' stakes the bank won at the last coup (the covered part), in cents (r.46).
    pub won_stakes_cents: Cents,
    /// The punters covered the whole bank at the last coup (r.46 applies only otherwise).
    pub fully_covered: bool,
    /// Coups won by the current banker in his hand; null coups do not count (r.34).
    pub won_coups: u32,
    /// Coups dealt by the current banker in his hand (r.90).
    pub coups_in_hand: u32,
    /// The current banker's garage: chips set aside out of play (r.34, r.46), in cents.
    pub garage_cents: Cents,
    /// The punter who lost a full banco at the last coup: he may call banco suivi (r.51); the
    /// right follows a passed hand (r.54).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suivi: Option<Participant>,
    /// The player who made banco avec la table at the last coup: he may not repeat it (r.57).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avec_la_table: Option<Participant>,
    /// The hand passed at the end of the last coup, awaiting a taker (r.76-r.80).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<PassedHand>,
    /// Players who may not bid in the pending auction (r.86, r.88, r.89, r.90).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub auction_excluded: Vec<Participant>,
    /// The current banker took the hand at an auction (r.90).
    pub by_auction: bool,
    /// Occupied seats, bit n for seat n (r.16, r.21, r.29), known once a `seated` role is seen.
    pub seated_mask: u16,
    /// A `seated` role has been recorded: `seated_mask` is the census.
    pub census_known: bool,
    /// Seats whose player moved there to get the hand sooner: the hand skips them once (r.92).
    pub skip_mask: u16,
    /// Seat of the last seated banker, where the hand returns after a standing banker loses a
    /// passed hand (r.79, r.91).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seated_banker: Option<u8>,
}

impl CfTableState {
    pub fn is_default(&self) -> bool {
        *self == CfTableState::default()
    }
}

pub(crate) const CITE_HAND: &str = "P217/2007 T.II S.I r.32";

fn vio(code: &'static str, sev: Severity, cite: &'static str, msg: String) -> Violation {
    Violation::new(code, sev, cite, msg)
}

/// The next occupied seat to the right of `seat` (r.3: seat n+1 is to the right of seat n),
/// skipping seats the hand must skip; `None` if the census is unknown.
pub(crate) fn next_right(state: &CfTableState, seat: u8, declined: u16) -> Option<u8> {
    if !state.census_known {
        return Some(if seat >= 9 { 1 } else { seat + 1 });
    }
    let mut s = seat;
    for _ in 0..9 {
        s = if s >= 9 { 1 } else { s + 1 };
        let bit = 1u16 << s;
        if state.seated_mask & bit != 0 && declined & bit == 0 && state.skip_mask & bit == 0 {
            return Some(s);
        }
    }
    None
}

/// Checks of the hand and of the bank before the coup: r.16, r.29, r.31-r.35, r.46, r.76-r.92.
pub(crate) fn check_hand(
    cfg: &CfConfig,
    prev: &CfTableState,
    rec: &CfRecord<'_>,
    first_of_shoe: bool,
    adj: &mut Adjudication,
) {
    let banker = &rec.banker;
    let bank = rec.bank_capital;
    // r.35: the bank is at least the table minimum.
    if let Some(min) = cfg.min_bank_cents
        && bank < min
    {
        adj.violation(
            vio(
                "CF_BANK_BELOW_MIN",
                Severity::Medium,
                "P217/2007 T.II S.I r.35",
                format!("bank of {bank} cents is below the table minimum {min}"),
            )
            .bet(&rec.bets[rec.bank].bet.id),
        );
    }
    // r.16: at least four seated players.
    let seated = if prev.census_known || rec.census_seen {
        Some(rec.seated_mask.count_ones())
    } else {
        None
    };
    if let Some(n) = seated
        && n < 4
    {
        adj.violation(vio(
            "CF_TOO_FEW_SEATED",
            Severity::Medium,
            "P217/2007 T.II S.I r.16",
            format!("the coup was played with {n} seated player(s); at least 4 are required"),
        ));
    }
    // r.31: the associate adds an equal amount at the start of a hand.
    if let Some(a) = rec.associate {
        let ab = &rec.bets[a];
        let same_hand = prev.banker.as_ref().is_some_and(|b| b.same(banker));
        let joined_late = same_hand
            && prev.coups_in_hand > 0
            && !prev.associate.as_ref().is_some_and(|x| x.same(&ab.who));
        if ab.amount != rec.bets[rec.bank].amount || joined_late {
            adj.violation(
                vio(
                    "CF_ASSOCIATE_IRREGULAR",
                    Severity::Low,
                    "P217/2007 T.II S.I r.31",
                    if joined_late {
                        format!("associate `{}` joined the bank after the start of the hand", ab.bet.id)
                    } else {
                        format!(
                            "associate `{}` put {} cents against the banker's {}: r.31 requires an equal amount",
                            ab.bet.id, ab.amount, rec.bets[rec.bank].amount
                        )
                    },
                )
                .bet(&ab.bet.id),
            );
        }
    }

    let Some(prev_banker) = &prev.banker else {
        // r.29: the first hand belongs to the first seated player on the dealer's right.
        if let Some(first) = first_seat(rec.seated_mask)
            && (prev.census_known || rec.census_seen)
            && banker.seat != Some(first)
        {
            adj.violation(vio(
                "CF_HAND_ORDER",
                Severity::Medium,
                "P217/2007 T.II S.I r.29",
                format!(
                    "the first hand went to {} instead of seat {first}",
                    banker.describe()
                ),
            ));
        }
        return;
    };
    let same = prev_banker.same(banker);
    let result = prev.last_result.unwrap_or(BankResult::Void);

    // r.92: a player who changed seat must let the hand pass once.
    if let Some(s) = banker.seat
        && !same
        && prev.skip_mask & (1u16 << s) != 0
    {
        adj.violation(vio(
            "CF_HAND_ORDER",
            Severity::Medium,
            "P217/2007 T.II S.I r.92",
            format!("seat {s} changed seat to get the hand sooner and took it instead of letting it pass (\"A mão salta\")"),
        ));
    }

    if let Some(p) = &prev.passed {
        check_passed(cfg, prev, p, rec, adj);
        return;
    }
    match (same, result) {
        (true, BankResult::Lost) => {
            // r.32, r.96(c): after a loss the hand passes to the right.
            adj.violation(vio(
                "CF_HAND_ORDER",
                Severity::Medium,
                CITE_HAND,
                format!("{} lost the last coup and kept the hand", banker.describe()),
            ));
        }
        (true, BankResult::Won) => check_level_after_win(cfg, prev, rec, first_of_shoe, adj),
        (true, BankResult::Null | BankResult::Void) => {
            // r.76: after a null coup the bank stays as it was (r.33 at a new shoe).
            let ok = bank == prev.bank_cents || (first_of_shoe && is_half(bank, prev.bank_cents));
            if !ok {
                adj.violation(
                    vio(
                        "CF_BANK_LEVEL_INVALID",
                        Severity::Medium,
                        "P217/2007 T.II S.I r.76",
                        format!(
                            "after a null coup the bank went from {} to {bank} cents",
                            prev.bank_cents
                        ),
                    )
                    .bet(&rec.bets[rec.bank].bet.id),
                );
            }
        }
        (false, BankResult::Lost) => {
            // r.32, r.96(c): the hand passes to the player on the right; r.91 after a standing
            // player lost a passed hand, to the right of the last seated banker.
            let from = if prev_banker.standing || prev_banker.seat.is_none() {
                prev.last_seated_banker
            } else {
                prev_banker.seat
            };
            if let Some(from) = from {
                let expected = next_right(prev, from, rec.declined_mask);
                if expected.is_some() && banker.seat != expected {
                    adj.violation(vio(
                        "CF_HAND_ORDER",
                        Severity::Medium,
                        if prev_banker.standing {
                            "P217/2007 T.II S.I r.91"
                        } else {
                            CITE_HAND
                        },
                        format!(
                            "after the banker lost, the hand went to {} instead of seat {}",
                            banker.describe(),
                            expected.unwrap_or(0)
                        ),
                    ));
                }
            }
        }
        (false, _) => {
            adj.violation(vio(
                "CF_HAND_ORDER",
                Severity::Medium,
                "P217/2007 T.II S.I r.81",
                format!(
                    "the hand went from {} to {} although it was neither lost nor passed",
                    prev_banker.describe(),
                    banker.describe()
                ),
            ));
        }
    }
}

pub(crate) fn first_seat(mask: u16) -> Option<u8> {
    (1..=9u8).find(|s| mask & (1u16 << s) != 0)
}

fn is_half(x: Cents, of: Cents) -> bool {
    x == of / 2 || x == of - of / 2
}

/// r.46, r.34, r.33: the bank after a win when the banker continues.
fn check_level_after_win(
    cfg: &CfConfig,
    prev: &CfTableState,
    rec: &CfRecord<'_>,
    first_of_shoe: bool,
    adj: &mut Adjudication,
) {
    let bank = rec.bank_capital;
    let acc = prev.bank_cents.saturating_add(prev.won_stakes_cents);
    let cagnotte = cfg.cagnotte_on(prev.won_stakes_cents);
    let mut ok = bank == acc || (cagnotte > 0 && bank == acc - cagnotte);
    // r.46: with partial cover, twice the stakes won.
    ok |= !prev.fully_covered && bank == prev.won_stakes_cents.saturating_mul(2);
    // r.34: after the 3rd, 5th, 7th, ... won coup, half.
    let odd_win = prev.won_coups >= 3 && prev.won_coups % 2 == 1;
    ok |= odd_win && is_half(bank, acc);
    // r.33: keeping the hand into a new shoe, keep or halve (note 9).
    ok |= first_of_shoe && is_half(bank, acc);
    if ok {
        return;
    }
    let halved = is_half(bank, acc);
    let mut v = vio(
        "CF_BANK_LEVEL_INVALID",
        if halved { Severity::Low } else { Severity::Medium },
        if halved { "P217/2007 T.II S.I r.34" } else { "P217/2007 T.II S.I r.46" },
        if halved {
            format!(
                "the bank was halved from {acc} to {bank} cents after the banker's win number {}, which is not the 3rd, 5th, 7th, ... and not at a new shoe (note 9)",
                prev.won_coups
            )
        } else {
            format!(
                "after the win the bank is {bank} cents; allowed: the accumulated {acc}{}{}",
                if prev.fully_covered { String::new() } else { format!(", or twice the stakes won {}", prev.won_stakes_cents.saturating_mul(2)) },
                if odd_win { format!(", or half, {}", acc / 2) } else { String::new() }
            )
        },
    )
    .bet(&rec.bets[rec.bank].bet.id);
    if halved {
        v = v.review();
    }
    adj.violation(v);
}

/// r.78-r.90: the passed hand, its offer and its auction.
fn check_passed(
    cfg: &CfConfig,
    prev: &CfTableState,
    p: &PassedHand,
    rec: &CfRecord<'_>,
    adj: &mut Adjudication,
) {
    let banker = &rec.banker;
    let bank = rec.bank_capital;
    let bank_id = &rec.bets[rec.bank].bet.id;
    if p.passer.same(banker) {
        if rec.bids.iter().any(|b| b.who.same(banker)) {
            // r.86: the passer may not take part in the auction.
            adj.violation(vio(
                "CF_AUCTION_INELIGIBLE_BIDDER",
                Severity::Medium,
                "P217/2007 T.II S.I r.86",
                format!(
                    "{} passed the hand, then bid for it and won the auction",
                    banker.describe()
                ),
            ));
            return;
        }
        // r.80: with no taker the passer may continue with the same amount.
        if bank != p.bank_cents && bank != p.level_cents {
            adj.violation(
                vio(
                    "CF_PASSED_HAND_LEVEL",
                    Severity::Medium,
                    "P217/2007 T.II S.I r.80",
                    format!(
                        "the passer continued with {bank} cents instead of the same amount {}",
                        p.bank_cents
                    ),
                )
                .bet(bank_id),
            );
        }
        return;
    }
    // r.86, r.89, r.90: the passer and his associate; r.88: a winner who refused to deal.
    let excluded = |x: &Participant| {
        p.passer.same(x)
            || p.associate.as_ref().is_some_and(|a| a.same(x))
            || prev.auction_excluded.iter().any(|e| e.same(x))
            || rec.refusals.iter().any(|(r, _)| r.same(x))
    };
    // After a refusal the hand is auctioned again: only the later bids count (r.88).
    let from_idx = rec.refusals.iter().map(|(_, i)| *i).max().unwrap_or(0);
    if !rec.auction {
        // r.78, r.80: taken at the offer, for the amount of the next bank.
        if bank != p.level_cents {
            adj.violation(
                vio(
                    "CF_PASSED_HAND_LEVEL",
                    Severity::Medium,
                    "P217/2007 T.II S.I r.80",
                    format!(
                        "the passed hand was taken by {} with {bank} cents instead of the level {}",
                        banker.describe(),
                        p.level_cents
                    ),
                )
                .bet(bank_id),
            );
        }
        return;
    }
    // The auction (r.82-r.90).
    if excluded(banker) {
        adj.violation(vio(
            "CF_AUCTION_INELIGIBLE_BIDDER",
            Severity::Medium,
            "P217/2007 T.II S.I r.86",
            format!(
                "{} won the auction although he may not bid in it",
                banker.describe()
            ),
        ));
    }
    // r.82: bids from the fixed base by fixed increments.
    for b in &rec.bids {
        let off_grid = match (cfg.auction_base_cents, cfg.auction_increment_cents) {
            (Some(base), Some(inc)) if inc > 0 => b.amount < base || (b.amount - base) % inc != 0,
            (Some(base), _) => b.amount < base,
            _ => false,
        };
        if off_grid {
            adj.violation(
                vio(
                    "CF_AUCTION_AWARD",
                    Severity::Low,
                    "P217/2007 T.II S.I r.82",
                    format!(
                        "bid of {} cents by {} is not the base plus whole increments",
                        b.amount,
                        b.who.describe()
                    ),
                )
                .event(b.idx),
            );
        }
    }
    let eligible: Vec<&super::Bid> = rec
        .bids
        .iter()
        .filter(|b| b.idx >= from_idx && !excluded(&b.who))
        .collect();
    if eligible.is_empty() {
        // r.85: no bidder: the next player in priority takes the hand with the minimum capital;
        // priority passes over whoever may not take part in the auction (r.86, r.88-r.90), who
        // may not win it that way either.
        let barred = (1..=9u8)
            .filter(|s| {
                excluded(&Participant {
                    seat: Some(*s),
                    player: None,
                    standing: false,
                })
            })
            .fold(0u16, |m, s| m | (1u16 << s));
        let expected = p
            .passer
            .seat
            .and_then(|s| next_right(prev, s, rec.declined_mask | barred));
        let right_player = expected.is_none() || banker.seat == expected;
        let right_amount = cfg.min_bank_cents.is_none_or(|m| bank == m);
        if !right_player || !right_amount {
            adj.violation(vio(
                "CF_AUCTION_AWARD",
                Severity::Medium,
                "P217/2007 T.II S.I r.85",
                format!(
                    "no bid: the hand must go to the next player in priority{} with the minimum capital; it went to {} with {bank} cents",
                    expected.map(|s| format!(" (seat {s})")).unwrap_or_default(),
                    banker.describe()
                ),
            ));
        }
        return;
    }
    // r.83, r.84, r.87: highest bid; on equal bids a lone bidder first (note 14), then seated
    // before standing, then the nearest to the passer's right.
    let from = p.passer.seat.unwrap_or(0);
    let dist = |s: Option<u8>| match s {
        Some(s) if (1..=9).contains(&s) => (s + 9 - from.min(9)) % 9,
        _ => 9,
    };
    let best = eligible.iter().copied().max_by(|a, b| {
        a.amount
            .cmp(&b.amount)
            .then((!a.associated).cmp(&!b.associated))
            .then((!a.who.standing).cmp(&!b.who.standing))
            .then(dist(b.who.seat).cmp(&dist(a.who.seat)))
            .then(b.idx.cmp(&a.idx))
    });
    if let Some(best) = best {
        let winner_ok = best.who.same(banker)
            || (best.associated
                && rec
                    .bids
                    .iter()
                    .any(|b| b.associated && b.amount == best.amount && b.who.same(banker)));
        if !winner_ok || bank != best.amount {
            adj.violation(vio(
                "CF_AUCTION_AWARD",
                Severity::Medium,
                "P217/2007 T.II S.I r.83",
                format!(
                    "the auction's best bid is {} cents by {}; the bank went to {} with {bank} cents",
                    best.amount,
                    best.who.describe(),
                    banker.describe()
                ),
            ));
        }
    }
}

/// The state after the coup.
pub(crate) fn advance(
    prev: &CfTableState,
    rec: &CfRecord<'_>,
    result: CoupResult,
    won_stakes: Cents,
    fully_covered: bool,
) -> CfTableState {
    let banker = rec.banker.clone();
    let same = prev.banker.as_ref().is_some_and(|b| b.same(&banker)) && prev.passed.is_none();
    let mut s = prev.clone();
    s.seated_mask = rec.seated_mask;
    s.census_known = prev.census_known || rec.census_seen;
    s.skip_mask = rec.skip_mask;
    if !same {
        // A new hand: counts start again (r.34), the auction is settled.
        s.won_coups = 0;
        s.coups_in_hand = 0;
        s.garage_cents = 0;
        s.by_auction = rec.auction;
        s.auction_excluded.clear();
        if let Some(seat) = banker.seat
            && !banker.standing
        {
            s.skip_mask &= !(1u16 << seat);
        }
    } else if rec.bank_capital < prev.bank_cents.saturating_add(prev.won_stakes_cents)
        && prev.last_result == Some(BankResult::Won)
    {
        // A reduction (r.34, r.46) goes to the garage.
        s.garage_cents = s.garage_cents.saturating_add(
            prev.bank_cents.saturating_add(prev.won_stakes_cents) - rec.bank_capital,
        );
    }
    s.passed = None;
    if !banker.standing && banker.seat.is_some() {
        s.last_seated_banker = banker.seat;
    }
    s.associate = rec.associate.map(|a| rec.bets[a].who.clone());
    s.bank_cents = rec.bank_capital;
    s.coups_in_hand = s.coups_in_hand.saturating_add(1);
    s.fully_covered = fully_covered;
    s.won_stakes_cents = 0;
    s.last_result = Some(match result {
        CoupResult::Banker => BankResult::Won,
        CoupResult::Ponto => BankResult::Lost,
        CoupResult::Null => BankResult::Null,
        CoupResult::Void(_) => BankResult::Void,
    });
    // r.51: a punter who lost a full banco may follow it (suivi); r.54: also into a passed hand.
    s.suivi = None;
    s.avec_la_table = None;
    for b in &rec.bets {
        if b.withdrawn || b.late {
            continue;
        }
        match b.kind {
            CfKind::Banco | CfKind::BancoSuivi | CfKind::BancoSeul
                if result == CoupResult::Banker =>
            {
                s.suivi = Some(b.who.clone());
            }
            CfKind::AvecLaTable => s.avec_la_table = Some(b.who.clone()),
            _ => {}
        }
    }
    match result {
        CoupResult::Banker => {
            s.won_coups = s.won_coups.saturating_add(1);
            s.won_stakes_cents = won_stakes;
        }
        CoupResult::Ponto => {
            s.won_coups = 0;
        }
        _ => {}
    }
    // The hand passed after a win or a null coup (r.76, r.77, r.89).
    if rec.pass_hand
        && matches!(
            result,
            CoupResult::Banker | CoupResult::Null | CoupResult::Void(_)
        )
    {
        let acc = rec.bank_capital.saturating_add(s.won_stakes_cents);
        // Note 15: the level is the accumulated bank unless a reduction was declared first.
        let level = if rec.garage_before_pass > 0 {
            acc.saturating_sub(rec.garage_before_pass)
        } else {
            acc
        };
        s.passed = Some(PassedHand {
            passer: banker.clone(),
            associate: s.associate.clone(),
            level_cents: level,
            bank_cents: rec.bank_capital,
            after_null: result != CoupResult::Banker,
        });
        // r.86, r.89, r.90: the passer and his associate may not bid in the auction.
        s.auction_excluded.push(banker.clone());
        if let Some(a) = &s.associate {
            s.auction_excluded.push(a.clone());
        }
    }
    // r.88: a winner who refuses to deal is excluded from the new auction, with the passer.
    for (r, _) in &rec.refusals {
        if !s.auction_excluded.iter().any(|e| e.same(r)) {
            s.auction_excluded.push(r.clone());
        }
    }
    s.banker = Some(banker);
    s
}
