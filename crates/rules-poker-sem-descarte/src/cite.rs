//! Citations in the digest's form (`P217/2007 T.I C.III S.II r.18`, `P461/2001 Anexo I r.9(b)`).

/// The regulation a table is approved under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regulation {
    /// Portaria 217/2007 T.I C.III S.II (default).
    P217,
    /// Portaria 461/2001 Anexo I (the older version).
    P461,
}

impl Regulation {
    pub const fn as_str(self) -> &'static str {
        match self {
            Regulation::P217 => "P217/2007",
            Regulation::P461 => "P461/2001",
        }
    }
}

/// One rule's citation in each version.
#[derive(Clone, Copy, Debug)]
pub struct Cite {
    pub p217: &'static str,
    pub p461: &'static str,
}

impl Cite {
    pub const fn get(&self, r: Regulation) -> &'static str {
        match r {
            Regulation::P217 => self.p217,
            Regulation::P461 => self.p461,
        }
    }
}

macro_rules! rule {
    ($n:literal) => {
        Cite {
            p217: concat!("P217/2007 T.I C.III S.II r.", $n),
            p461: concat!("P461/2001 Anexo I r.", $n),
        }
    };
}

pub const R1: Cite = rule!("1");
pub const R3_4: Cite = rule!("3, r.4");
pub const R5: Cite = rule!("5");
pub const R6: Cite = rule!("6");
pub const R6J: Cite = rule!("6(j)");
pub const R7: Cite = rule!("7");
pub const R8: Cite = rule!("8");
pub const R9: Cite = rule!("9");
pub const R10: Cite = rule!("10");
pub const R12: Cite = rule!("12");
pub const R13_16: Cite = rule!("13, r.16");
pub const R14: Cite = rule!("14");
pub const R15: Cite = rule!("15");
pub const R16: Cite = rule!("16");
pub const R16A: Cite = rule!("16(a)");
pub const R17: Cite = rule!("17");
pub const R18: Cite = rule!("18");
pub const R6_18: Cite = rule!("6, r.18");
pub const R19: Cite = rule!("19");
pub const WRONG_PAYOUT: Cite = Cite {
    p217: "P217/2007 T.I C.III S.II r.6, r.7, r.9, r.12, r.17, r.18",
    p461: "P461/2001 Anexo I r.6, r.7, r.9, r.12, r.17, r.18",
};

#[cfg(test)]
mod tests {
    use rules_core::{GameId, TableConfig};

    use super::*;

    /// `as_str` gives the name a table's `regulation` is configured with, and each citation is
    /// in that regulation's form (the digest's section 0).
    #[test]
    fn names_and_citation_forms() {
        for r in [Regulation::P217, Regulation::P461] {
            let mut t = TableConfig::new(GameId::PokerSemDescarte);
            t.min_bet_cents = Some(1_000);
            t.max_bet_cents = Some(25_000);
            t.regulation = Some(r.as_str().into());
            let c = crate::config::configure(&t).unwrap().config;
            assert_eq!(c.regulation, r);
            assert!(R18.get(r).starts_with(r.as_str()));
        }
        assert_eq!(R18.get(Regulation::P217), "P217/2007 T.I C.III S.II r.18");
        assert_eq!(R6J.get(Regulation::P461), "P461/2001 Anexo I r.6(j)");
    }
}
