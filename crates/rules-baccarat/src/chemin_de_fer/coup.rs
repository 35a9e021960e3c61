//! Play of a chemin de fer coup: the deal, the ponto's call, the banker's table, every fault of
//! r.70-r.75 and r.97-r.106, and the reconstruction the rules prescribe.
//!
//! The engine computes the result the rules impose, not the one the cards happened to give:
//!
//! * **Reconstruction** (r.71, r.100, r.104(c), r.106(b), r.106(c); digest section 5.1): the
//!   cards keep the order they left the shoe; the coup is replayed with the correct decisions
//!   (the table, or the forced table of r.102/r.104(b)), each card going to whoever should have
//!   received it next; cards left over are burned (r.71), none goes back into the shoe (r.97).
//!   r.106(b) is the text's own instance: a banker on 0-5 takes the first card, the second is
//!   burned; on 6 or 7 both are burned. A replay that needs a card the record does not show
//!   leaves that side standing and goes to review.
//! * **Specific scorings**: r.104(d) (banker bacará, entitled to a card even after an abate),
//!   r.104(e) (the lowest score of 3 of the 4), r.104(f) (the fifth card), r.104(g) (note 6:
//!   settled as recorded, for review), r.104(h) (the highest score of 3 of the 4), r.104(i)
//!   (ponto deemed to abate 9), r.104(j) (ponto scores 9), r.104(n) (card burned), r.105(a)-(d),
//!   r.75 (the side that discards loses).
//! * **Annulments**: r.75 (dealer discards), r.104(c) and r.106(c) unless rebuilt, r.106(d).
//!
//! Each decision is judged against the cards on the table when it was taken: a draw correct
//! then is no further fault even if the rebuild burns that card.

use rules_core::Card;

use super::faults::{Declared, Fault, Reporter};
use crate::cards::{card_value, score, score_of};
use crate::util::InlineVec;

/// The cards of one part of a coup, inline.
type Cards = InlineVec<PCard, 8>;
use crate::tableau::{Cf, CfPonto, cf_banker, cf_ponto};

/// A ponto's (or banker's) call (r.65): `carta`, `nao`, `abate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Carta,
    Nao,
    Abate,
}

impl Call {
    pub fn parse(s: &str) -> Option<Call> {
        Some(match s {
            "carta" => Call::Carta,
            "nao" => Call::Nao,
            "abate" => Call::Abate,
            _ => return None,
        })
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Call::Carta => "carta",
            Call::Nao => "não",
            Call::Abate => "abate",
        }
    }
}

/// Where a card of the coup went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum To {
    Ponto,
    Banca,
    /// Into the discard holder (r.104(j): the ponto's requested card).
    Discard,
    /// Drawn and left on the table, given to nobody (record recipient `board`): the fifth card
    /// of r.104(f), which the ponto's call assigns.
    Table,
}

/// Who did an act the record states as a neutral fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    Banker,
    Ponto,
    Dealer,
}

impl Actor {
    pub fn parse(s: &str) -> Option<Actor> {
        Some(match s {
            "banker" | "banca" => Actor::Banker,
            "ponto" => Actor::Ponto,
            "dealer" => Actor::Dealer,
            _ => return None,
        })
    }
}

/// The acts behind r.75, r.104(b) and r.106(a), (b) as the record states them (neutral facts,
/// not declared faults): the play finds the fault in them and applies the remedy.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    /// The dealer's spoken calls (`procedure dealer_call`, value `carta` / `nao`): r.106(b).
    pub dealer_calls: Vec<(Call, usize)>,
    /// Cards burned face up (`card` to `burn` with `face_up`) once the coup's deal began:
    /// r.106(a).
    pub face_up_burns: Vec<usize>,
    /// Cards put in the discard holder by a person (`procedure cards_to_discard`, value
    /// `banker` / `ponto` / `dealer`): r.75.
    pub discards: Vec<(Actor, usize)>,
    /// The dealer showed and announced the scores (`procedure scores_announced`): r.75.
    pub scores_announced: Option<usize>,
    /// A ponto card turned up (`procedure ponto_card_turned`, value: who turned it): r.104(b).
    pub ponto_card_turned: Vec<(Actor, usize)>,
}

/// A card of the coup as recorded.
#[derive(Clone, Copy, Debug)]
pub struct PCard {
    pub to: To,
    pub card: Card,
    pub idx: usize,
    pub face_up: bool,
}

/// Why a coup is annulled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoidReason {
    /// r.104(c): stuck cards on the ponto's draw, the coup not rebuilt. Record reason
    /// `stuck_cards`.
    StuckCards,
    /// r.106(c): a dealer fault passing the cards, the coup not rebuilt. `dealer_card_fault`.
    DealerCardFault,
    /// r.106(d): the last coup with fewer than 6 cards besides the warning card.
    /// `last_coup_too_few_cards`.
    LastCoupTooFewCards,
    /// r.75: the dealer discarded before the scores were shown. `cards_discarded_by_dealer`.
    CardsDiscardedByDealer,
}

impl VoidReason {
    pub fn parse(s: &str) -> Option<VoidReason> {
        Some(match s {
            "stuck_cards" => VoidReason::StuckCards,
            "dealer_card_fault" => VoidReason::DealerCardFault,
            "last_coup_too_few_cards" => VoidReason::LastCoupTooFewCards,
            "cards_discarded_by_dealer" => VoidReason::CardsDiscardedByDealer,
            _ => return None,
        })
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            VoidReason::StuckCards => "stuck_cards",
            VoidReason::DealerCardFault => "dealer_card_fault",
            VoidReason::LastCoupTooFewCards => "last_coup_too_few_cards",
            VoidReason::CardsDiscardedByDealer => "cards_discarded_by_dealer",
        }
    }

    pub const fn fault(self) -> Fault {
        match self {
            VoidReason::StuckCards => Fault::StuckCards,
            VoidReason::DealerCardFault => Fault::DealerCardFault,
            VoidReason::LastCoupTooFewCards => Fault::LastCoupTooFewCards,
            VoidReason::CardsDiscardedByDealer => Fault::CardsDiscardedByDealer,
        }
    }
}

/// How a coup ends for the bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoupResult {
    /// Annulled: every bet returned.
    Void(VoidReason),
    /// Equal scores: null coup (r.2, r.76).
    Null,
    /// The ponto (the punters) win.
    Ponto,
    /// The banker wins.
    Banker,
}

fn compare(p: u8, b: u8) -> CoupResult {
    match p.cmp(&b) {
        std::cmp::Ordering::Greater => CoupResult::Ponto,
        std::cmp::Ordering::Less => CoupResult::Banker,
        std::cmp::Ordering::Equal => CoupResult::Null,
    }
}

/// The record of one coup, as the play needs it.
pub(crate) struct CoupIn<'r> {
    /// Cards to ponto, banca and discard in shoe order (burns excluded).
    pub cards: &'r [PCard],
    /// Event index of the ponto's first call: earlier cards are the deal.
    pub boundary: usize,
    pub ponto_calls: &'r [(Call, usize)],
    pub declared: &'r [Declared<'r>],
    pub void: Option<(VoidReason, usize)>,
    /// r.106(d) derived from the shoe: the coup started with this many cards left.
    pub too_few_cards: Option<(u32, usize)>,
    /// r.102 declared ("O banqueiro joga segundo a tabela").
    pub forced_table: bool,
    /// A full banco (banco, suivi, seul): r.70 false draws allowed.
    pub full_banco: bool,
    pub advice_ponto: Option<(Call, usize)>,
    pub advice_banker: Option<(Call, usize)>,
    pub banker_seat: Option<u8>,
    pub facts: &'r Facts,
}

/// What the rules make of the coup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoupOut {
    pub result: CoupResult,
    pub ponto_score: Option<u8>,
    pub banker_score: Option<u8>,
    /// The coup as dealt and concluded (every card counted where it went), for r.104(l).
    pub as_played: CoupResult,
    /// r.104(g), note 6: the due result is the casino's recorded one, for manual review.
    pub settle_as_recorded: bool,
}

const R2: &str = "P217/2007 T.II S.I r.2";
const R64: &str = "P217/2007 T.II S.I r.64";
const R67: &str = "P217/2007 T.II S.I r.67";
const R9: &str = "P217/2007 T.II S.I r.9-r.11";

fn cards_str(cs: &[Card]) -> String {
    cs.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn sum3(a: Card, b: Card, c: Card) -> u8 {
    score(&[a, b, c])
}

/// The four ways of taking 3 of 4 cards, and the two that keep the first two (note 4).
fn three_of_four(c: [Card; 4]) -> ([u8; 4], [u8; 2]) {
    let any = [
        sum3(c[0], c[1], c[2]),
        sum3(c[0], c[1], c[3]),
        sum3(c[0], c[2], c[3]),
        sum3(c[1], c[2], c[3]),
    ];
    let keep = [any[0], any[1]];
    (any, keep)
}

/// Play the coup. `Err` names what makes the record unusable (an incomplete deal).
pub(crate) fn play(inp: &CoupIn<'_>, rep: &mut Reporter<'_>) -> Result<CoupOut, String> {
    let decl = |f: Fault| inp.declared.iter().find(|d| d.fault == f);
    let void_out = |r: VoidReason| CoupOut {
        result: CoupResult::Void(r),
        ponto_score: None,
        banker_score: None,
        as_played: CoupResult::Void(r),
        settle_as_recorded: false,
    };

    // --- Annulments.
    if let Some((reason, idx)) = inp.void {
        let f = reason.fault();
        let ev = decl(f).map(|d| d.event_index).unwrap_or(idx);
        rep.report(
            f,
            format!("coup annulled ({}): every bet returned", reason.as_str()),
            Some(ev),
            false,
        );
        rep.note(f.citation(), || {
            format!("coup annulled: {}", reason.as_str())
        });
        return Ok(void_out(reason));
    }
    // r.75: who put cards in the discard, and whether the scores had been shown and announced
    // ("antes de exibidas e anunciadas as pontuações"), from the record's neutral facts.
    let facts = inp.facts;
    let before_scores = |i: usize| facts.scores_announced.is_none_or(|a| a > i);
    let discarded_by = |who: Actor| {
        facts
            .discards
            .iter()
            .find(|&&(w, i)| w == who && before_scores(i))
            .map(|&(_, i)| i)
    };
    let dealer_discard = decl(Fault::CardsDiscardedByDealer)
        .map(|d| d.event_index)
        .or_else(|| discarded_by(Actor::Dealer));
    if let Some(at) = dealer_discard {
        rep.report(
            Fault::CardsDiscardedByDealer,
            "the dealer put cards in the discard before the scores were shown and announced: the coup is annulled".into(),
            Some(at),
            false,
        );
        return Ok(void_out(VoidReason::CardsDiscardedByDealer));
    }
    if let Some(d) = decl(Fault::LastCoupTooFewCards) {
        rep.report(
            Fault::LastCoupTooFewCards,
            "the last coup of the shoe had fewer than 6 cards besides the warning card: not valid"
                .into(),
            Some(d.event_index),
            false,
        );
        return Ok(void_out(VoidReason::LastCoupTooFewCards));
    }
    if let Some((left, idx)) = inp.too_few_cards {
        rep.report(
            Fault::LastCoupTooFewCards,
            format!("the coup started with {left} card(s) left in the shoe besides the warning card (at least 6 needed): not valid"),
            Some(idx),
            false,
        );
        return Ok(void_out(VoidReason::LastCoupTooFewCards));
    }

    // --- The deal and the draw as recorded.
    let exposed_declared = decl(Fault::DealerExposedCard);
    let deal = Cards::from_iter(
        inp.cards
            .iter()
            .copied()
            .filter(|c| c.idx < inp.boundary && c.to != To::Discard),
    );
    let draw = Cards::from_iter(inp.cards.iter().copied().filter(|c| c.idx >= inp.boundary));
    let pd = Cards::from_iter(deal.iter().filter(|c| c.to == To::Ponto));
    let bd = Cards::from_iter(deal.iter().filter(|c| c.to == To::Banca));
    let dp = Cards::from_iter(draw.iter().filter(|c| c.to == To::Ponto));
    let db = Cards::from_iter(draw.iter().filter(|c| c.to == To::Banca));
    let ddisc = Cards::from_iter(draw.iter().filter(|c| c.to == To::Discard));
    if pd.len() < 2 || bd.len() < 2 {
        return Err(format!(
            "the deal is incomplete: the ponto received {} card(s) and the banker {} before the ponto's call (two each, r.62)",
            pd.len(),
            bd.len()
        ));
    }

    // The coup as dealt and concluded: every card counts where it went.
    let as_played = {
        let p = score_of(
            inp.cards
                .iter()
                .filter(|c| c.to == To::Ponto)
                .map(|c| c.card),
        );
        let b = score_of(
            inp.cards
                .iter()
                .filter(|c| c.to == To::Banca)
                .map(|c| c.card),
        );
        compare(p, b)
    };
    let out = |result: CoupResult, p: Option<u8>, b: Option<u8>| CoupOut {
        result,
        ponto_score: p,
        banker_score: b,
        as_played,
        settle_as_recorded: false,
    };

    // --- r.75: the side that puts cards in the discard loses the coup.
    let player_discard = [Actor::Banker, Actor::Ponto]
        .into_iter()
        .filter_map(|w| discarded_by(w).map(|i| (w, i)))
        .min_by_key(|&(_, i)| i);
    if let (None, Some((who, at))) = (decl(Fault::CardsDiscardedByPlayer), player_discard) {
        let banker = who == Actor::Banker;
        rep.report(
            Fault::CardsDiscardedByPlayer,
            format!(
                "the {} put cards in the discard: that side loses the coup",
                if banker { "banker" } else { "ponto" }
            ),
            Some(at),
            false,
        );
        let r = if banker {
            CoupResult::Ponto
        } else {
            CoupResult::Banker
        };
        return Ok(out(r, None, None));
    }
    if let Some(d) = decl(Fault::CardsDiscardedByPlayer) {
        let banker = match d.detail {
            Some("banker") | Some("banca") => true,
            Some("ponto") => false,
            _ => match (d.seat, inp.banker_seat) {
                (Some(s), Some(b)) => s == b,
                (Some(_), None) => false,
                _ => {
                    return Err(
                        "CF_CARDS_DISCARDED_BY_PLAYER needs detail `banker` or `ponto`, or the seat of the player".into(),
                    );
                }
            },
        };
        rep.report(
            Fault::CardsDiscardedByPlayer,
            format!(
                "the {} put cards in the discard: that side loses the coup",
                if banker { "banker" } else { "ponto" }
            ),
            Some(d.event_index),
            false,
        );
        let r = if banker {
            CoupResult::Ponto
        } else {
            CoupResult::Banker
        };
        rep.note(Fault::CardsDiscardedByPlayer.citation(), || {
            format!(
                "r.75: the {} loses the coup",
                if banker { "banker" } else { "ponto" }
            )
        });
        return Ok(out(r, None, None));
    }

    let p_init = [pd[0].card, pd[1].card];
    let b_init = [bd[0].card, bd[1].card];
    let p2 = score(&p_init);
    let b2_real = score(&b_init);
    rep.note(R9, || {
        format!(
            "ponto {} scores {p2}; banker {} scores {b2_real} (ace 1, court cards 0, tens dropped)",
            cards_str(&p_init),
            cards_str(&b_init)
        )
    });

    // --- r.104(i): a ponto card dropped in the deal: the ponto is deemed to abate 9; the banker
    // ties only with his own two cards making 9 (note 7: review).
    if let Some(d) = decl(Fault::PontoCardDropped) {
        rep.report(
            Fault::PontoCardDropped,
            format!("the banker dropped a ponto card in the deal: the ponto is deemed to abate 9 against the banker's {b2_real}"),
            Some(d.event_index),
            true,
        );
        let r = if b2_real == 9 {
            CoupResult::Null
        } else {
            CoupResult::Ponto
        };
        return Ok(out(r, Some(9), Some(b2_real)));
    }

    // --- r.106(a) cards that left the shoe face up are burned; r.106(c) a dealer fault passing
    // the cards: the coup is rebuilt from the shoe order (or annulled, see `void`).
    // The record states it: a deal card recorded `face_up` left the shoe face up (the deal is
    // face down; the draw's cards are turned up by rule), as did a card burned face up in the
    // deal.
    let exposed: Vec<usize> = deal
        .iter()
        .filter(|c| c.face_up && c.to != To::Table)
        .map(|c| c.idx)
        .collect();
    let exposed_at = exposed_declared
        .map(|d| d.event_index)
        .or(exposed.first().copied())
        .or(facts
            .face_up_burns
            .iter()
            .copied()
            .find(|&i| i < inp.boundary));
    if let Some(at) = exposed_at {
        rep.report(
            Fault::DealerExposedCard,
            if exposed.is_empty() {
                "a card left the shoe face up and was burned; bets stand".to_string()
            } else {
                format!(
                    "{} card(s) left the shoe face up and were dealt: they are burned and the coup is rebuilt in shoe order",
                    exposed.len()
                )
            },
            Some(at),
            false,
        );
    }
    let dealer_fault = decl(Fault::DealerCardFault);
    if !exposed.is_empty() || dealer_fault.is_some() {
        if let Some(d) = dealer_fault {
            rep.report(
                Fault::DealerCardFault,
                "a dealer fault in passing the cards: the coup is rebuilt from the shoe order (r.106(c))".into(),
                Some(d.event_index),
                true,
            );
        }
        return Ok(full_replay(inp, &exposed, p2, as_played, rep));
    }

    // --- Extra cards in the deal.
    let mut pd = pd;
    let mut bd = bd;
    let mut fifth: Option<PCard> = None;
    if let Some(f) = deal.iter().find(|c| c.to == To::Table) {
        // r.104(f): a card drawn in the deal and left on the table (recipient `board`): the
        // fifth card, which the ponto's call assigns.
        fifth = Some(f);
    } else if decl(Fault::FifthCardInDeal).is_some() && deal.len() >= 5 {
        let f = deal[4];
        pd.retain(|c| c.idx != f.idx);
        bd.retain(|c| c.idx != f.idx);
        fifth = Some(f);
    }
    if let Some(c) = draw.iter().find(|c| c.to == To::Table) {
        return Err(format!(
            "{} was left on the table after the deal (event {}): only the deal's fifth card stays there until the ponto's call (r.104(f))",
            c.card, c.idx
        ));
    }
    // r.104(d): the banker holds more than two cards after the deal: they count bacará.
    let b_zero = bd.len() > 2;
    if b_zero {
        let at = decl(Fault::BankerExtraCardInDeal)
            .map(|d| d.event_index)
            .unwrap_or(bd[2].idx);
        rep.report(
            Fault::BankerExtraCardInDeal,
            format!("the banker holds {} cards after the deal: they count bacará (0) and he is entitled to one card", bd.len()),
            Some(at),
            false,
        );
    }
    let b2 = if b_zero { 0 } else { b2_real };

    // r.104(g): the ponto holds three cards after the deal.
    if pd.len() > 2 || decl(Fault::PontoThreeCardsInDeal).is_some() && pd.len() >= 3 {
        let c = [pd[0].card, pd[1].card, pd[2].card];
        let best = [
            score(&c),
            score(&c[..2]),
            score(&[c[0], c[2]]),
            score(&c[1..]),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let bs = score_of(bd.iter().chain(db.first()).map(|c| c.card));
        let at = decl(Fault::PontoThreeCardsInDeal)
            .map(|d| d.event_index)
            .unwrap_or(pd[2].idx);
        rep.report(
            Fault::PontoThreeCardsInDeal,
            format!(
                "the ponto holds three cards after the deal ({}): he scores the highest of 2 or 3 of them, {best}; the banker's part of r.104(g) is obscure: settled as the casino recorded, for review (note 6)",
                cards_str(&c)
            ),
            Some(at),
            true,
        );
        return Ok(CoupOut {
            result: compare(best, bs),
            ponto_score: Some(best),
            banker_score: Some(bs),
            as_played,
            settle_as_recorded: true,
        });
    }

    // --- The ponto's call (r.64, r.65, r.70, r.71, r.99, r.100, r.105).
    let got_card = !dp.is_empty();
    let own_first = inp.ponto_calls.first().map(|c| c.0);
    let (eff, failed_abate) = ponto_effective(p2, inp, got_card, rep);
    rep.note(R64, || {
        format!(
            "the ponto on {p2} called {}; the call that stands is {}",
            own_first
                .map(|c| c.as_str())
                .unwrap_or("nothing (inferred from the cards)"),
            eff.as_str()
        )
    });

    // r.104(b) "Se na distribuição o banqueiro voltar uma ou as duas cartas do ponto": declared,
    // or a `ponto_card_turned` by the banker before the ponto's call.
    let turned_by_banker = decl(Fault::BankerExposedPontoCard)
        .map(|d| d.event_index)
        .or_else(|| {
            facts
                .ponto_card_turned
                .iter()
                .find(|&&(w, i)| w == Actor::Banker && i < inp.boundary)
                .map(|&(_, i)| i)
        });
    let forced = inp.forced_table || turned_by_banker.is_some();
    if let Some(at) = turned_by_banker {
        rep.report(
            Fault::BankerExposedPontoCard,
            "the banker turned up a ponto card in the deal: he must play by the table, drawing in both optional cases".into(),
            Some(at),
            false,
        );
    }
    let forced_fifth = fifth.is_some() && eff != Call::Carta;
    if let Some(f) = fifth {
        let at = decl(Fault::FifthCardInDeal).map_or(f.idx, |d| d.event_index);
        rep.report(
            Fault::FifthCardInDeal,
            if forced_fifth {
                format!("a fifth card ({}) came out in the deal and the ponto did not call carta: it is forced on the banker, who loses the right to abate", f.card)
            } else {
                format!("a fifth card ({}) came out in the deal: it is the ponto's third card", f.card)
            },
            Some(at),
            false,
        );
    }
    let banker_natural = !b_zero && b2 >= 8;
    let banker_drew_rec = !db.is_empty();

    // --- The ponto abated: the banker does not draw (r.67(c), (d)) unless r.104(d).
    if eff == Call::Abate {
        let bs = if b_zero {
            // r.104(d): bacará plus the card he is entitled to.
            score_of(db.first().map(|c| c.card))
        } else if let Some(f) = fifth.filter(|_| forced_fifth) {
            score(&[b_init[0], b_init[1], f.card])
        } else {
            b2
        };
        if !b_zero && !forced_fifth && banker_drew_rec {
            rep.report(
                Fault::BankerFalseDraw,
                format!(
                    "the banker drew {} after the ponto abated; the card is burned (r.67)",
                    db[0].card
                ),
                Some(db[0].idx),
                true,
            );
        }
        if got_card {
            rep.report(
                Fault::DealerCardFault,
                format!(
                    "the ponto was given {} after abating; the card is burned",
                    dp[0].card
                ),
                Some(dp[0].idx),
                true,
            );
        }
        rep.note(R67, || {
            format!("the ponto abates {p2}: the banker does not draw; banker {bs}")
        });
        return Ok(out(compare(p2, bs), Some(p2), Some(bs)));
    }

    // --- The banker abates: the coup ends before the ponto's third card (r.67(a), note 1).
    if banker_natural && !forced_fifth && !banker_drew_rec {
        if let Some(c) = dp.first() {
            rep.report(
                Fault::PontoDrawnAfterBankerAbate,
                format!(
                    "the ponto was given {} after the banker abated {b2}; the card is burned",
                    c.card
                ),
                Some(c.idx),
                false,
            );
        }
        rep.note(R67, || {
            format!("the banker abates {b2}: the coup ends, the ponto draws no card")
        });
        // r.105(b): a ponto who forgot to abate 9 loses when the banker abates 8.
        if failed_abate && p2 == 9 && b2 == 8 {
            rep.amend(
                Fault::PunterFailedToAbate,
                "P217/2007 T.II S.I r.105(b)",
                "the ponto held 9 and did not abate; the banker abated 8: the ponto loses",
            );
            return Ok(out(CoupResult::Banker, Some(p2), Some(b2)));
        }
        if failed_abate && p2 == 8 && b2 == 8 {
            // Note 2: r.105(b) covers only 9 against 8; 8 against 8 is null by r.2, doubtful.
            rep.mark_review(Fault::PunterFailedToAbate);
        }
        return Ok(out(compare(p2, b2), Some(p2), Some(b2)));
    }

    // --- The draw.
    let mut ponto_override: Option<u8> = None;
    let mut banker_override: Option<u8> = None;
    let mut ponto_third: Option<PCard> = None;
    let mut banker_third: Option<PCard> = None;
    // The card the ponto actually faced the banker with.
    let actual_p3: Option<PCard> = if fifth.is_some() && !forced_fifth {
        fifth
    } else {
        dp.first()
    };
    let actual_p3v = actual_p3.map(|c| card_value(c.card));

    // r.104(j): the ponto's requested card went into the discard.
    let discarded_request = eff == Call::Carta
        && fifth.is_none()
        && (decl(Fault::PontoCardDiscardedByBanker).is_some()
            || (dp.is_empty() && !ddisc.is_empty()));
    // r.104(e), r.104(h).
    let drew_two = db.len() >= 2 && !forced_fifth;
    let four = dp.len() >= 2 && decl(Fault::StuckCards).is_none();

    // Banker's advice (r.98, r.100) and the dealer's indication (r.104(n)).
    let cell_actual = |p3v: Option<u8>| {
        let c = cf_banker(b2, p3v);
        if c == Cf::O && forced { Cf::T } else { c }
    };
    let mut advice_wrong = false;
    let mut burn_banker_card = false;
    // r.106(b): the ponto said "não" and the dealer called "carta" by mistake (declared, or a
    // card dealt to the ponto anyway). The cards that followed came from the dealer's call, not
    // from a decision of the banker: "o golpe será restabelecido de acordo com a tabela". The
    // banker's decision is not judged (no CF_BANKER_FALSE_DRAW), and the coup is rebuilt below.
    // The dealer's own call as the record states it (`procedure dealer_call`): "carta" after
    // the ponto said "não".
    let dealer_carta = (own_first == Some(Call::Nao))
        .then(|| {
            facts
                .dealer_calls
                .iter()
                .find(|&&(c, i)| c == Call::Carta && i > inp.boundary)
                .map(|&(_, i)| i)
        })
        .flatten();
    let false_carta_at = decl(Fault::DealerFalseCarta)
        .map(|d| d.event_index)
        .or(dealer_carta);
    let false_carta = eff == Call::Nao
        && !four
        && fifth.is_none()
        && !discarded_request
        && draw.iter().any(|c| c.to != To::Discard)
        && (false_carta_at.is_some() || (got_card && own_first != Some(Call::Carta)));
    if let (Some(at), None) = (dealer_carta, decl(Fault::DealerFalseCarta))
        && eff == Call::Nao
        && !got_card
    {
        // Found from the dealer's call (a card that went to the ponto is reported below).
        rep.report(
            Fault::DealerFalseCarta,
            if false_carta {
                "the dealer called \"carta\" although the ponto said \"não\": the coup is restored by the table".to_string()
            } else {
                "the dealer called \"carta\" although the ponto said \"não\"; no card came out".to_string()
            },
            Some(at),
            false,
        );
    }
    let mut banker_covered = b_zero || forced_fifth || drew_two || discarded_request || false_carta;
    if let Some((a, ai)) = inp.advice_banker {
        let cell = cell_actual(if eff == Call::Carta { actual_p3v } else { None });
        let wrong = (a == Call::Carta && cell == Cf::F) || (a == Call::Nao && cell == Cf::T);
        let followed = (a == Call::Carta) == banker_drew_rec;
        if wrong && followed {
            advice_wrong = true;
            banker_covered = true;
            rep.report(
                Fault::EmployeeWrongAdvice,
                format!("the banker on {b2} was advised \"{}\" against the table: the coup is rebuilt by the table", a.as_str()),
                Some(ai),
                false,
            );
        } else if followed {
            banker_covered = true;
        } else if a == Call::Nao && banker_drew_rec {
            burn_banker_card = true;
            banker_covered = true;
        }
    }
    if decl(Fault::BankerDrewAgainstIndication).is_some() && banker_drew_rec {
        burn_banker_card = true;
        banker_covered = true;
    }
    if burn_banker_card {
        let at = decl(Fault::BankerDrewAgainstIndication)
            .map(|d| d.event_index)
            .unwrap_or(db[0].idx);
        rep.report(
            Fault::BankerDrewAgainstIndication,
            format!(
                "the banker drew {} against the dealer's indication: that card is burned",
                db[0].card
            ),
            Some(at),
            false,
        );
    }

    // Judge the banker's own decision against the situation he faced.
    if !banker_covered {
        let cell = cf_banker(
            b2,
            if eff == Call::Carta || got_card {
                actual_p3v
            } else {
                None
            },
        );
        let col = || match actual_p3v {
            Some(v) if got_card || fifth.is_some() => format!("a third card of {v}"),
            _ => "a ponto who did not draw".to_string(),
        };
        if banker_natural && banker_drew_rec {
            if !inp.full_banco {
                rep.report(
                    Fault::BankerFalseDraw,
                    format!("the banker drew {} on a natural {b2} instead of abating (settled as played, note 11)", db[0].card),
                    Some(db[0].idx),
                    true,
                );
            }
        } else {
            match (cell, banker_drew_rec) {
                (Cf::T, false) => {
                    if b2 == 0 {
                        rep.report(
                            Fault::BankerBacaraNoDraw,
                            format!("the banker on bacará against {} did not draw", col()),
                            None,
                            false,
                        );
                    } else if !inp.full_banco {
                        rep.report(
                            Fault::BankerFalseDraw,
                            format!("the banker on {b2} against {} had to draw and stood (settled as played, note 11)", col()),
                            None,
                            true,
                        );
                    }
                }
                (Cf::F, true) if !inp.full_banco => {
                    rep.report(
                        Fault::BankerFalseDraw,
                        format!("the banker on {b2} against {} had to stand and drew {} (settled as played, note 11)", col(), db[0].card),
                        Some(db[0].idx),
                        true,
                    );
                }
                (Cf::O, false) if forced => {
                    rep.report_cited(
                        Fault::OptionUsedWhenForced,
                        if inp.forced_table { "P217/2007 T.II S.I r.102" } else { "P217/2007 T.II S.I r.104(b)" },
                        format!("the banker on {b2} against {} stood in an optional case while bound to draw", col()),
                        None,
                        false,
                    );
                }
                _ => {}
            }
        }
    }

    // Does the ponto's part need rebuilding?
    let stuck = decl(Fault::StuckCards);
    let ponto_drew_rec = got_card || (fifth.is_some() && !forced_fifth);
    let ponto_mismatch =
        !discarded_request && !four && fifth.is_none() && (eff == Call::Carta) != got_card;
    if ponto_mismatch {
        if eff == Call::Nao && got_card && own_first != Some(Call::Carta) {
            // The ponto said "não" and a card came anyway: the dealer's false "carta" (r.106(b)).
            let at = false_carta_at.unwrap_or(dp[0].idx);
            rep.report(
                Fault::DealerFalseCarta,
                format!("the ponto said \"não\" but {} was dealt to him: the coup is restored by the table", dp[0].card),
                Some(at),
                false_carta_at.is_none(),
            );
        } else if eff == Call::Carta && !got_card && own_first == Some(Call::Carta) {
            rep.report(
                Fault::DealerCardFault,
                "the ponto called carta and was given no card: the coup is rebuilt in shoe order"
                    .into(),
                None,
                true,
            );
        }
    }
    let rebuild = ponto_mismatch || advice_wrong || stuck.is_some() || false_carta;
    if let Some(d) = stuck {
        rep.report(
            Fault::StuckCards,
            "two cards came out stuck together on the ponto's draw; the casino did not annul the coup: it is rebuilt in shoe order".into(),
            Some(d.event_index),
            true,
        );
    }

    if rebuild {
        // Replay the draw: the cards in the order they left the shoe.
        let q = Cards::from_iter(draw.iter().filter(|c| c.to != To::Discard));
        let mut it = q.iter();
        let mut missing = false;
        let p3 = if eff == Call::Carta {
            let c = it.next();
            missing |= c.is_none();
            c
        } else {
            None
        };
        let same = p3.map(|c| c.idx)
            == if ponto_drew_rec {
                actual_p3.map(|c| c.idx)
            } else {
                None
            };
        let (draws, review) = if false_carta && !advice_wrong && stuck.is_none() {
            // r.106(b): "se o banqueiro tiver a pontuação de bacará, 1, 2, 3, 4 ou 5 [...] a
            // primeira é-lhe atribuída [...]; se tiver 6 ou 7 [...] estas serão queimadas".
            (b2 <= 5, false)
        } else {
            banker_replay(
                b2,
                b_zero,
                p3.map(|c| card_value(c.card)),
                same && !advice_wrong,
                banker_drew_rec && !burn_banker_card,
                forced,
            )
        };
        let b3 = if draws {
            let c = it.next();
            missing |= c.is_none();
            c
        } else {
            None
        };
        let burned = it.count();
        let main = if advice_wrong {
            Fault::EmployeeWrongAdvice
        } else if stuck.is_some() {
            Fault::StuckCards
        } else if rep.has(Fault::DealerFalseCarta) || false_carta {
            Fault::DealerFalseCarta
        } else if rep.has(Fault::PunterFalseDraw) {
            Fault::PunterFalseDraw
        } else if rep.has(Fault::EmployeeWrongAdvice) {
            Fault::EmployeeWrongAdvice
        } else {
            Fault::DealerCardFault
        };
        if missing || review {
            rep.mark_review(main);
        }
        // Note 3: a rebuild that hands a card to a different person goes to review.
        let reassigned =
            p3.is_some_and(|c| c.to != To::Ponto) || b3.is_some_and(|c| c.to != To::Banca);
        if reassigned && matches!(main, Fault::PunterFalseDraw | Fault::EmployeeWrongAdvice) {
            rep.mark_review(main);
        }
        rep.note(main.citation(), || {
            format!(
                "rebuild in shoe order: ponto {}, banker {}, {burned} card(s) burned{}",
                p3.map(|c| format!("draws {}", c.card))
                    .unwrap_or_else(|| "stands".into()),
                b3.map(|c| format!("draws {}", c.card))
                    .unwrap_or_else(|| "stands".into()),
                if missing {
                    "; a needed card never left the shoe in the record"
                } else {
                    ""
                }
            )
        });
        ponto_third = p3;
        banker_third = b3;
    } else {
        if eff == Call::Carta {
            ponto_third = actual_p3;
        }
        if !burn_banker_card && !drew_two {
            banker_third = if forced_fifth { fifth } else { db.first() };
        }
        if forced_fifth && banker_drew_rec {
            rep.note(R67, || {
                "the banker already holds the forced fifth card: his further card is burned".into()
            });
        }
        if banker_drew_rec
            && !burn_banker_card
            && !drew_two
            && !forced_fifth
            && b2 == 7
            && discarded_request
        {
            banker_third = None;
        }
    }

    // r.104(j): the ponto scores 9; the banker keeps his draw except on 7.
    if discarded_request {
        let at = decl(Fault::PontoCardDiscardedByBanker)
            .map(|d| d.event_index)
            .or(ddisc.first().map(|c| c.idx));
        rep.report(
            Fault::PontoCardDiscardedByBanker,
            format!("the banker put the ponto's requested card in the discard: the ponto scores 9; the banker {}", if b2 == 7 { "on 7 may not draw" } else { "keeps his draw" }),
            at,
            false,
        );
        ponto_override = Some(9);
        if b2 == 7 {
            banker_third = None;
        }
    }
    // r.104(h): four ponto cards after the draw: the highest score of 3 of them (note 4).
    if four && !discarded_request {
        let c = [p_init[0], p_init[1], dp[0].card, dp[1].card];
        let (any, keep) = three_of_four(c);
        let best_any = any.into_iter().max().unwrap_or(0);
        let best_keep = keep.into_iter().max().unwrap_or(0);
        let at = decl(Fault::PontoFourCards)
            .map(|d| d.event_index)
            .unwrap_or(dp[1].idx);
        rep.report(
            Fault::PontoFourCards,
            format!(
                "the ponto holds four cards ({}): he scores the highest of 3 of them, {best_any}{}",
                cards_str(&c),
                if best_any != best_keep {
                    format!(" (keeping his first two it would be {best_keep}: note 4, review)")
                } else {
                    String::new()
                }
            ),
            Some(at),
            best_any != best_keep,
        );
        ponto_override = Some(best_any);
        ponto_third = None;
    }
    // r.104(e): the banker drew two cards: the lowest score of 3 of the 4 (note 4).
    if drew_two {
        let c = [b_init[0], b_init[1], db[0].card, db[1].card];
        let (any, keep) = three_of_four(c);
        let low_any = any.into_iter().min().unwrap_or(0);
        let low_keep = keep.into_iter().min().unwrap_or(0);
        let at = decl(Fault::BankerDrewTwoCards)
            .map(|d| d.event_index)
            .unwrap_or(db[1].idx);
        rep.report(
            Fault::BankerDrewTwoCards,
            format!(
                "the banker drew two cards for himself ({}): he scores the lowest of 3 of the 4, {low_any}{}",
                cards_str(&c),
                if low_any != low_keep { format!(" (keeping his first two it would be {low_keep}: note 4, review)") } else { String::new() }
            ),
            Some(at),
            low_any != low_keep,
        );
        banker_override = Some(if b_zero {
            score(&[db[0].card]).min(score(&[db[1].card]))
        } else {
            low_any
        });
        banker_third = None;
    }

    let ps = ponto_override
        .unwrap_or_else(|| score_of(p_init.into_iter().chain(ponto_third.map(|c| c.card))));
    let bs = banker_override.unwrap_or_else(|| {
        let own: &[Card] = if b_zero { &[] } else { &b_init };
        score_of(own.iter().copied().chain(banker_third.map(|c| c.card)))
    });
    rep.note(R2, || match compare(ps, bs) {
        CoupResult::Ponto => format!("ponto {ps} beats banker {bs}"),
        CoupResult::Banker => format!("banker {bs} beats ponto {ps}"),
        _ => format!("equal scores ({ps}): null coup (r.2, r.76)"),
    });
    Ok(out(compare(ps, bs), Some(ps), Some(bs)))
}

/// The banker's draw in a replay.
///
/// When the replay leaves him facing the situation he actually faced, his own decision stands
/// (false draws are flagged, not rebuilt: note 11). Otherwise the table decides; an optional
/// case he never faced is decided by what he did (review), or by the forced table.
fn banker_replay(
    b2: u8,
    b_zero: bool,
    p3v: Option<u8>,
    same_situation: bool,
    actual_drew: bool,
    forced: bool,
) -> (bool, bool) {
    if b_zero {
        return (actual_drew, false);
    }
    if b2 >= 8 {
        return (false, false);
    }
    if same_situation {
        return (actual_drew, false);
    }
    match cf_banker(b2, p3v) {
        Cf::T => (true, false),
        Cf::F => (false, false),
        Cf::O if forced => (true, false),
        Cf::O => (actual_drew, true),
    }
}

/// The call that stands for the ponto (r.64, r.65, r.70, r.71, r.99, r.100, r.105), and whether
/// he failed to abate a natural.
fn ponto_effective(
    p2: u8,
    inp: &CoupIn<'_>,
    got_card: bool,
    rep: &mut Reporter<'_>,
) -> (Call, bool) {
    let calls = inp.ponto_calls;
    let inferred = if p2 >= 8 && !got_card {
        Call::Abate
    } else if got_card {
        Call::Carta
    } else {
        Call::Nao
    };
    let (first, first_idx) = calls
        .first()
        .map(|c| (c.0, Some(c.1)))
        .unwrap_or((inferred, None));
    let changed = calls.iter().any(|c| c.0 != first);
    let by_table = |own: Call| match cf_ponto(p2) {
        CfPonto::Draw => Call::Carta,
        CfPonto::Stand => Call::Nao,
        CfPonto::Abate => Call::Abate,
        CfPonto::Free => own,
    };
    if p2 >= 8 {
        if first == Call::Abate {
            return (Call::Abate, false);
        }
        // r.105(a): he loses the right to abate; on "carta" the banker decides (as recorded).
        let at = inp
            .declared
            .iter()
            .find(|d| d.fault == Fault::PunterFailedToAbate)
            .map(|d| d.event_index)
            .or(first_idx);
        rep.report(
            Fault::PunterFailedToAbate,
            format!(
                "the ponto held {p2} and called {} instead of abating: he loses the right to abate",
                first.as_str()
            ),
            at,
            false,
        );
        let eff = if first == Call::Carta && got_card {
            Call::Carta
        } else {
            Call::Nao
        };
        return (eff, true);
    }
    if first == Call::Abate {
        if inp.full_banco {
            return (Call::Nao, false);
        }
        rep.report(
            Fault::PunterFalseDraw,
            format!("the ponto announced a natural on {p2}: the coup is rebuilt by r.64"),
            first_idx,
            false,
        );
        return (
            by_table(if got_card { Call::Carta } else { Call::Nao }),
            false,
        );
    }
    if changed {
        let (cite, eff) = if p2 == 5 {
            // r.105(d): on 5 the first call stands.
            ("P217/2007 T.II S.I r.105(d)", first)
        } else {
            // r.105(c): the banker chooses which call applies (the record shows his choice).
            (
                "P217/2007 T.II S.I r.105(c)",
                if got_card { Call::Carta } else { Call::Nao },
            )
        };
        let at = calls.iter().find(|c| c.0 != first).map(|c| c.1);
        rep.report_cited(
            Fault::PunterChangedAnnouncement,
            cite,
            format!(
                "the ponto on {p2} called {} and then changed his call; {} stands",
                first.as_str(),
                eff.as_str()
            ),
            at,
            false,
        );
        return (eff, false);
    }
    if let Some((a, ai)) = inp.advice_ponto {
        if p2 == 5 && a == Call::Carta {
            rep.report(
                Fault::EmployeeAdvisedDrawOn5,
                "an employee told the ponto to draw on 5; that choice is his alone".into(),
                Some(ai),
                false,
            );
        }
        let wrong = (p2 <= 4 && a == Call::Nao) || ((6..=7).contains(&p2) && a == Call::Carta);
        if wrong && first == a {
            rep.report(
                Fault::EmployeeWrongAdvice,
                format!("the ponto on {p2} was advised \"{}\" against the table: the coup is rebuilt by the table", a.as_str()),
                Some(ai),
                false,
            );
            return (by_table(first), false);
        }
    }
    let against =
        (p2 <= 4 && first == Call::Nao) || ((6..=7).contains(&p2) && first == Call::Carta);
    if against {
        if inp.full_banco {
            // r.70: with a full banco the ponto may make false draws.
            return (first, false);
        }
        let at = inp
            .declared
            .iter()
            .find(|d| d.fault == Fault::PunterFalseDraw)
            .map(|d| d.event_index)
            .or(first_idx);
        rep.report(
            Fault::PunterFalseDraw,
            format!(
                "the ponto on {p2} called {} against r.64 without a full banco: the coup is rebuilt (r.71)",
                first.as_str()
            ),
            at,
            false,
        );
        return (by_table(first), false);
    }
    (first, false)
}

/// r.106(a) with exposed cards dealt, or r.106(c) not annulled: rebuild the whole coup from the
/// shoe order, the exposed cards burned.
fn full_replay(
    inp: &CoupIn<'_>,
    exposed: &[usize],
    actual_p2: u8,
    as_played: CoupResult,
    rep: &mut Reporter<'_>,
) -> CoupOut {
    let s: Vec<PCard> = inp
        .cards
        .iter()
        .copied()
        .filter(|c| c.to != To::Discard && !exposed.contains(&c.idx))
        .collect();
    if s.len() < 4 {
        rep.note("P217/2007 T.II S.I r.106(c)", || {
            "the coup cannot be rebuilt: annulled".into()
        });
        return CoupOut {
            result: CoupResult::Void(VoidReason::DealerCardFault),
            ponto_score: None,
            banker_score: None,
            as_played: CoupResult::Void(VoidReason::DealerCardFault),
            settle_as_recorded: false,
        };
    }
    let p = [s[0].card, s[2].card];
    let b = [s[1].card, s[3].card];
    let (p2, b2) = (score(&p), score(&b));
    let own = inp.ponto_calls.first().map(|c| c.0);
    let mut review = false;
    let ponto_draws = match cf_ponto(p2) {
        CfPonto::Abate => false,
        CfPonto::Stand => false,
        CfPonto::Draw => true,
        CfPonto::Free => {
            if actual_p2 == 5 && own.is_some() {
                own == Some(Call::Carta)
            } else {
                review = true;
                true
            }
        }
    };
    let mut it = s[4..].iter();
    let natural = p2 >= 8 || b2 >= 8;
    let mut ph = p.to_vec();
    let mut bh = b.to_vec();
    if !natural {
        let p3 = if ponto_draws { it.next() } else { None };
        if let Some(c) = p3 {
            ph.push(c.card);
        }
        let actual_drew = inp
            .cards
            .iter()
            .any(|c| c.to == To::Banca && c.idx >= inp.boundary);
        let (draws, r) = banker_replay(
            b2,
            false,
            p3.map(|c| card_value(c.card)),
            false,
            actual_drew,
            inp.forced_table,
        );
        review |= r;
        if draws && let Some(c) = it.next() {
            bh.push(c.card);
        }
    }
    if review {
        rep.mark_review(Fault::DealerCardFault);
        rep.mark_review(Fault::DealerExposedCard);
    }
    let (ps, bs) = (score(&ph), score(&bh));
    let cite = if inp
        .declared
        .iter()
        .any(|d| d.fault == Fault::DealerCardFault)
    {
        Fault::DealerCardFault.citation()
    } else {
        Fault::DealerExposedCard.citation()
    };
    rep.note(cite, || {
        format!(
            "rebuilt from the shoe order: ponto {} = {ps}, banker {} = {bs}",
            cards_str(&ph),
            cards_str(&bh)
        )
    });
    CoupOut {
        result: compare(ps, bs),
        ponto_score: Some(ps),
        banker_score: Some(bs),
        as_played,
        settle_as_recorded: false,
    }
}
