//! The chemin de fer fault catalogue: every fault of banker, punter and dealer (P217/2007 T.II
//! S.I r.70, r.71, r.75, r.97-r.106) with its digest code, citation and severity.

use rules_core::{Adjudication, Severity, Violation};

/// A fault of the coup, by its digest code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// r.71: the card holder without a full banco called or drew against r.64; rebuilt.
    PunterFalseDraw,
    /// r.67, r.70: the banker deviated from the table without a full banco (note 11).
    BankerFalseDraw,
    /// r.67(c), r.70: the banker on bacará did not draw (the ponto had not abated).
    BankerBacaraNoDraw,
    /// r.102, r.104(b): the banker stood in an optional case while bound to the table.
    OptionUsedWhenForced,
    /// r.67(a): the ponto was given a third card after the banker abated.
    PontoDrawnAfterBankerAbate,
    /// r.98, r.100: an employee's advice contrary to the table; rebuilt by the table.
    EmployeeWrongAdvice,
    /// r.99: an employee told a ponto to draw on 5.
    EmployeeAdvisedDrawOn5,
    /// r.104(a): the banker drew and then wanted to stop; he must deal the coup.
    BankerWithdrewAfterDraw,
    /// r.104(b): the banker turned up a ponto card in the deal: table, drawing in both options.
    BankerExposedPontoCard,
    /// r.104(c): two cards stuck together on the ponto's draw: annulled unless rebuilt.
    StuckCards,
    /// r.104(d): the banker holds more than two cards after the deal: bacará, entitled to a card.
    BankerExtraCardInDeal,
    /// r.104(e): the banker drew two cards for himself: the lowest score of 3 of the 4.
    BankerDrewTwoCards,
    /// r.104(f): a fifth card came out in the deal.
    FifthCardInDeal,
    /// r.104(g): the ponto holds three cards after the deal.
    PontoThreeCardsInDeal,
    /// r.104(h): the ponto holds four cards after the draw: the highest score of 3 of them.
    PontoFourCards,
    /// r.104(i): the banker dropped a ponto card in the deal: the ponto is deemed to abate 9.
    PontoCardDropped,
    /// r.104(j): the banker put the ponto's requested card in the discard: the ponto scores 9.
    PontoCardDiscardedByBanker,
    /// r.104(m): cards dropped on the floor keep their value (informational).
    CardDropped,
    /// r.104(n): the banker drew against the dealer's indication: that card is burned.
    BankerDrewAgainstIndication,
    /// r.105(a), (b): the ponto did not abate at the proper time.
    PunterFailedToAbate,
    /// r.105(c), (d): the ponto changed his call.
    PunterChangedAnnouncement,
    /// r.105(e): the ponto was deliberately slow to announce (informational).
    PunterDelay,
    /// r.106(a): cards left the shoe face up: burned.
    DealerExposedCard,
    /// r.106(b): the dealer called "carta" although the ponto said "não": rebuilt.
    DealerFalseCarta,
    /// r.106(c): a dealer fault in passing the cards: annulled unless rebuilt.
    DealerCardFault,
    /// r.106(d): the last coup with fewer than 6 cards besides the warning card: not valid.
    LastCoupTooFewCards,
    /// r.75: the banker or the ponto put cards in the discard: that side loses.
    CardsDiscardedByPlayer,
    /// r.75: the dealer discarded before the scores were shown and announced: annulled.
    CardsDiscardedByDealer,
    /// r.97: a card was put back into the shoe.
    CardReturnedToShoe,
}

use Fault::*;

impl Fault {
    pub const ALL: [Fault; 29] = [
        PunterFalseDraw,
        BankerFalseDraw,
        BankerBacaraNoDraw,
        OptionUsedWhenForced,
        PontoDrawnAfterBankerAbate,
        EmployeeWrongAdvice,
        EmployeeAdvisedDrawOn5,
        BankerWithdrewAfterDraw,
        BankerExposedPontoCard,
        StuckCards,
        BankerExtraCardInDeal,
        BankerDrewTwoCards,
        FifthCardInDeal,
        PontoThreeCardsInDeal,
        PontoFourCards,
        PontoCardDropped,
        PontoCardDiscardedByBanker,
        CardDropped,
        BankerDrewAgainstIndication,
        PunterFailedToAbate,
        PunterChangedAnnouncement,
        PunterDelay,
        DealerExposedCard,
        DealerFalseCarta,
        DealerCardFault,
        LastCoupTooFewCards,
        CardsDiscardedByPlayer,
        CardsDiscardedByDealer,
        CardReturnedToShoe,
    ];

    pub const fn code(self) -> &'static str {
        match self {
            PunterFalseDraw => "CF_PUNTER_FALSE_DRAW",
            BankerFalseDraw => "CF_BANKER_FALSE_DRAW",
            BankerBacaraNoDraw => "CF_BANKER_BACARA_NO_DRAW",
            OptionUsedWhenForced => "CF_OPTION_USED_WHEN_FORCED",
            PontoDrawnAfterBankerAbate => "CF_PONTO_DRAWN_AFTER_BANKER_ABATE",
            EmployeeWrongAdvice => "CF_EMPLOYEE_WRONG_ADVICE",
            EmployeeAdvisedDrawOn5 => "CF_EMPLOYEE_ADVISED_DRAW_ON_5",
            BankerWithdrewAfterDraw => "CF_BANKER_WITHDREW_AFTER_DRAW",
            BankerExposedPontoCard => "CF_BANKER_EXPOSED_PONTO_CARD",
            StuckCards => "CF_STUCK_CARDS",
            BankerExtraCardInDeal => "CF_BANKER_EXTRA_CARD_IN_DEAL",
            BankerDrewTwoCards => "CF_BANKER_DREW_TWO_CARDS",
            FifthCardInDeal => "CF_FIFTH_CARD_IN_DEAL",
            PontoThreeCardsInDeal => "CF_PONTO_THREE_CARDS_IN_DEAL",
            PontoFourCards => "CF_PONTO_FOUR_CARDS",
            PontoCardDropped => "CF_PONTO_CARD_DROPPED",
            PontoCardDiscardedByBanker => "CF_PONTO_CARD_DISCARDED_BY_BANKER",
            CardDropped => "CF_CARD_DROPPED",
            BankerDrewAgainstIndication => "CF_BANKER_DREW_AGAINST_INDICATION",
            PunterFailedToAbate => "CF_PUNTER_FAILED_TO_ABATE",
            PunterChangedAnnouncement => "CF_PUNTER_CHANGED_ANNOUNCEMENT",
            PunterDelay => "CF_PUNTER_DELAY",
            DealerExposedCard => "CF_DEALER_EXPOSED_CARD",
            DealerFalseCarta => "CF_DEALER_FALSE_CARTA",
            DealerCardFault => "CF_DEALER_CARD_FAULT",
            LastCoupTooFewCards => "CF_LAST_COUP_TOO_FEW_CARDS",
            CardsDiscardedByPlayer => "CF_CARDS_DISCARDED_BY_PLAYER",
            CardsDiscardedByDealer => "CF_CARDS_DISCARDED_BY_DEALER",
            CardReturnedToShoe => "CF_CARD_RETURNED_TO_SHOE",
        }
    }

    /// A fault the table may declare with a `fault` event (the faults of r.71, r.75, r.97 and
    /// r.104-r.106). The others are derived by the engine from the record.
    pub fn parse_declared(code: &str) -> Option<Fault> {
        Fault::ALL
            .iter()
            .copied()
            .find(|f| f.code() == code && f.declarable())
    }

    pub const fn declarable(self) -> bool {
        !matches!(
            self,
            BankerFalseDraw
                | BankerBacaraNoDraw
                | OptionUsedWhenForced
                | PontoDrawnAfterBankerAbate
                | EmployeeWrongAdvice
                | EmployeeAdvisedDrawOn5
        )
    }

    /// The rule, in the digest's citation form.
    pub const fn citation(self) -> &'static str {
        match self {
            PunterFalseDraw => "P217/2007 T.II S.I r.71",
            BankerFalseDraw => "P217/2007 T.II S.I r.70",
            BankerBacaraNoDraw => "P217/2007 T.II S.I r.67(c)",
            OptionUsedWhenForced => "P217/2007 T.II S.I r.102",
            PontoDrawnAfterBankerAbate => "P217/2007 T.II S.I r.67(a)",
            EmployeeWrongAdvice => "P217/2007 T.II S.I r.100",
            EmployeeAdvisedDrawOn5 => "P217/2007 T.II S.I r.99",
            BankerWithdrewAfterDraw => "P217/2007 T.II S.I r.104(a)",
            BankerExposedPontoCard => "P217/2007 T.II S.I r.104(b)",
            StuckCards => "P217/2007 T.II S.I r.104(c)",
            BankerExtraCardInDeal => "P217/2007 T.II S.I r.104(d)",
            BankerDrewTwoCards => "P217/2007 T.II S.I r.104(e)",
            FifthCardInDeal => "P217/2007 T.II S.I r.104(f)",
            PontoThreeCardsInDeal => "P217/2007 T.II S.I r.104(g)",
            PontoFourCards => "P217/2007 T.II S.I r.104(h)",
            PontoCardDropped => "P217/2007 T.II S.I r.104(i)",
            PontoCardDiscardedByBanker => "P217/2007 T.II S.I r.104(j)",
            CardDropped => "P217/2007 T.II S.I r.104(m)",
            BankerDrewAgainstIndication => "P217/2007 T.II S.I r.104(n)",
            PunterFailedToAbate => "P217/2007 T.II S.I r.105(a)",
            PunterChangedAnnouncement => "P217/2007 T.II S.I r.105(c)",
            PunterDelay => "P217/2007 T.II S.I r.105(e)",
            DealerExposedCard => "P217/2007 T.II S.I r.106(a)",
            DealerFalseCarta => "P217/2007 T.II S.I r.106(b)",
            DealerCardFault => "P217/2007 T.II S.I r.106(c)",
            LastCoupTooFewCards => "P217/2007 T.II S.I r.106(d)",
            CardsDiscardedByPlayer => "P217/2007 T.II S.I r.75",
            CardsDiscardedByDealer => "P217/2007 T.II S.I r.75",
            CardReturnedToShoe => "P217/2007 T.II S.I r.97",
        }
    }

    pub const fn severity(self) -> Severity {
        match self {
            CardDropped | PunterDelay => Severity::Info,
            EmployeeAdvisedDrawOn5
            | BankerWithdrewAfterDraw
            | BankerExposedPontoCard
            | StuckCards
            | DealerExposedCard => Severity::Low,
            CardReturnedToShoe => Severity::Medium,
            _ => Severity::High,
        }
    }

    /// A dealing or drawing error of the banker, which r.104(l) makes unclaimable once the coup
    /// is concluded.
    pub const fn banker_error(self) -> bool {
        matches!(
            self,
            BankerFalseDraw
                | BankerBacaraNoDraw
                | OptionUsedWhenForced
                | PontoDrawnAfterBankerAbate
                | BankerWithdrewAfterDraw
                | BankerExposedPontoCard
                | StuckCards
                | BankerExtraCardInDeal
                | BankerDrewTwoCards
                | FifthCardInDeal
                | PontoThreeCardsInDeal
                | PontoFourCards
                | PontoCardDropped
                | PontoCardDiscardedByBanker
                | BankerDrewAgainstIndication
        )
    }

    const fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A fault the table declared.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Declared<'a> {
    pub fault: Fault,
    pub event_index: usize,
    pub seat: Option<u8>,
    pub detail: Option<&'a str>,
}

/// Reports each fault once per coup.
pub(crate) struct Reporter<'x> {
    pub adj: &'x mut Adjudication,
    reported: u32,
    pub explain: bool,
    /// Set when any banker error of r.104(l) is reported.
    pub banker_error: bool,
}

impl<'x> Reporter<'x> {
    pub fn new(adj: &'x mut Adjudication, explain: bool) -> Reporter<'x> {
        Reporter {
            adj,
            reported: 0,
            explain,
            banker_error: false,
        }
    }

    pub fn has(&self, f: Fault) -> bool {
        self.reported & f.bit() != 0
    }

    /// Report `f` (once) with the fault's own citation.
    pub fn report(&mut self, f: Fault, message: String, event: Option<usize>, review: bool) {
        self.report_cited(f, f.citation(), message, event, review);
    }

    /// Report `f` (once) citing `citation` (a sub-rule of the same fault).
    pub fn report_cited(
        &mut self,
        f: Fault,
        citation: &'static str,
        message: String,
        event: Option<usize>,
        review: bool,
    ) {
        if self.has(f) {
            return;
        }
        self.reported |= f.bit();
        if f.banker_error() {
            self.banker_error = true;
        }
        let mut v = Violation::new(f.code(), f.severity(), citation, message);
        if let Some(i) = event {
            v = v.event(i);
        }
        if review {
            v = v.review();
        }
        self.adj.violation(v);
    }

    /// Restate an already reported fault under the sub-rule that decides its consequence.
    pub fn amend(&mut self, f: Fault, citation: &'static str, message: &str) {
        for v in self.adj.violations.iter_mut().rev() {
            if v.code == f.code() {
                v.citation = citation.into();
                v.message = message.to_string();
                return;
            }
        }
    }

    /// Mark an already reported fault for review.
    pub fn mark_review(&mut self, f: Fault) {
        for v in self.adj.violations.iter_mut().rev() {
            if v.code == f.code() {
                v.confidence = rules_core::Confidence::Review;
                return;
            }
        }
    }

    pub fn note(&mut self, citation: &'static str, text: impl FnOnce() -> String) {
        if self.explain {
            self.adj.note(citation, text());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_unique_and_parse() {
        for (i, a) in Fault::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i);
            for b in &Fault::ALL[i + 1..] {
                assert_ne!(a.code(), b.code());
            }
            assert_eq!(Fault::parse_declared(a.code()).is_some(), a.declarable());
            assert!(a.citation().starts_with("P217/2007 T.II S.I r."));
        }
        assert!(Fault::parse_declared("CF_NOPE").is_none());
    }
}
