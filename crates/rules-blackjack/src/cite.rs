//! Rule citations, in the digest's form (`P217/2007 T.I C.III S.I r.19`, `P1364/2001 r.43(b)`,
//! `ROBJ/2015 r.27`).
//!
//! Most rules have the same number and content in P217/2007 and P1364/2001; a [`Cite`] holds the
//! text for each regulation a table can be approved under, and [`Cite::get`] picks the one in
//! force. For online tables (ROBJ/2015, whose rules 1–25(d) are not in the seed) the land rule is
//! applied as the table's configured rule and cited as such.

/// The regulation a table is approved under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Regulation {
    /// Portaria 217/2007, Título I, Capítulo III, Secção I (default for `blackjack`).
    P217,
    /// Portaria 1364/2001 (the older land version).
    P1364,
    /// The 2015 online blackjack/21 regulation (default and only value for `blackjack_online`).
    Robj2015,
}

impl Regulation {
    pub const fn as_str(self) -> &'static str {
        match self {
            Regulation::P217 => "P217/2007",
            Regulation::P1364 => "P1364/2001",
            Regulation::Robj2015 => "ROBJ/2015",
        }
    }
}

/// One rule's citation under each regulation.
#[derive(Clone, Copy, Debug)]
pub struct Cite {
    pub p217: &'static str,
    pub p1364: &'static str,
    pub online: &'static str,
}

impl Cite {
    /// The citation in force under `reg`.
    #[inline]
    pub const fn get(&self, reg: Regulation) -> &'static str {
        match reg {
            Regulation::P217 => self.p217,
            Regulation::P1364 => self.p1364,
            Regulation::Robj2015 => self.online,
        }
    }
}

/// A land rule numbered alike in P217/2007 and P1364/2001, applied online as table configuration.
macro_rules! land {
    ($n:literal) => {
        Cite {
            p217: concat!("P217/2007 T.I C.III S.I r.", $n),
            p1364: concat!("P1364/2001 r.", $n),
            online: concat!(
                "P217/2007 T.I C.III S.I r.",
                $n,
                " (online table rule; ROBJ/2015 r.1-25(d) not in the seed)"
            ),
        }
    };
}

/// A land rule with an online counterpart in ROBJ/2015.
macro_rules! both {
    ($n:literal, $o:literal) => {
        Cite {
            p217: concat!("P217/2007 T.I C.III S.I r.", $n),
            p1364: concat!("P1364/2001 r.", $n),
            online: concat!("ROBJ/2015 r.", $o),
        }
    };
}

pub const R1: Cite = land!("1");
pub const R2: Cite = land!("2");
pub const R3: Cite = land!("3");
pub const R6A: Cite = land!("6(a)");
pub const R8: Cite = land!("8");
pub const R11: Cite = land!("11");
pub const R13: Cite = land!("13");
pub const R14: Cite = land!("14");
pub const R15: Cite = land!("15");
pub const R15_16: Cite = land!("15, r.16");
pub const R16: Cite = land!("16");
pub const R17: Cite = land!("17");
pub const R18: Cite = land!("18");
pub const R19: Cite = land!("19");
pub const R19_6A: Cite = land!("19, r.6(a)");
pub const R20: Cite = land!("20");
pub const R21: Cite = land!("21");
pub const R21_BJ_PUSH: Cite = both!("21", "25(h)");
pub const R22: Cite = land!("22");
pub const R23: Cite = both!("23", "25(e)");
pub const R24: Cite = both!("24", "25(h)");
pub const R25: Cite = both!("25", "26");
pub const R26: Cite = land!("26");
pub const R27: Cite = land!("27");
pub const R28: Cite = land!("28");
pub const R29: Cite = land!("29");
pub const R29_31: Cite = land!("29, r.31");
pub const R30: Cite = land!("30");
pub const R32: Cite = land!("32");
pub const R33: Cite = both!("33", "25(f), r.25(g)");
pub const R33_LIMIT: Cite = land!("33");
pub const R34: Cite = land!("34");
pub const R35: Cite = both!("35", "25(i)");
pub const R36: Cite = land!("36");
pub const R36_TIMING: Cite = Cite {
    p217: "P217/2007 T.I C.III S.I r.36",
    p1364: "P1364/2001 r.36; P1364/2001 preamble",
    online: "P217/2007 T.I C.III S.I r.36 (online table rule; ROBJ/2015 r.1-25(d) not in the seed)",
};
pub const R37: Cite = Cite {
    p217: "P217/2007 T.I C.III S.I r.37",
    p1364: "P1364/2001 r.37",
    online: "ROBJ/2015 r.32 (limits are the operator's)",
};
pub const R40_47: Cite = land!("40, r.47");
pub const R40_41: Cite = land!("40, r.41");
pub const R42_46: Cite = land!("42, r.46");
pub const R43: Cite = land!("43");
pub const R44: Cite = land!("44");
pub const R45: Cite = land!("45");
pub const R48: Cite = land!("48");
pub const R50: Cite = land!("50");
pub const R52: Cite = land!("52");
pub const R54: Cite = land!("54");
pub const R55: Cite = land!("55");
pub const R_COMPLAINT: Cite = Cite {
    p217: "P217/2007 T.I C.III S.I r.61",
    p1364: "P1364/2001 r.62",
    online: "P217/2007 T.I C.III S.I r.61",
};
pub const R_SHUFFLER_REINSERT: Cite = Cite {
    p217: "P217/2007 T.I C.III S.I r.59, r.60",
    p1364: "P1364/2001 r.59-61",
    online: "P217/2007 T.I C.III S.I r.59, r.60",
};

/// Settlement citation used for `BJ_WRONG_PAYOUT` discrepancies.
pub const WRONG_PAYOUT: Cite = Cite {
    p217: "P217/2007 T.I C.III S.I r.20-25, r.33-36, r.43, r.50",
    p1364: "P1364/2001 r.20-25, r.33-36, r.43, r.50",
    online: "ROBJ/2015 r.25, r.26, r.28, r.30",
};

pub const ROBJ_VOID: &str = "ROBJ/2015 r.27, r.28";
pub const ROBJ_NOT_VOID: &str = "ROBJ/2015 r.27, r.29, r.30";
pub const ROBJ_SESSION: &str = "ROBJ/2015 r.35, r.36";
pub const ROBJ_TIE: &str = "ROBJ/2015 r.25(h)";
