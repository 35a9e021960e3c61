//! Bet types of the three roulette games and how each settles (P217/2007 T.I C.I S.I r.24,
//! r.25, r.27, r.28; S.II r.16, r.18, r.19; R807/2015 r.7, r.8).

use crate::tables::*;

/// Every bet-type id of the digest (section 1), in a fixed order (the index is used for limits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Straight,
    Split,
    Street,
    Corner,
    Line,
    Dozen,
    Column,
    DozenSplit,
    ColumnSplit,
    Even,
    Odd,
    Low,
    High,
    Red,
    Black,
    SeriesGrande,
    SeriesPequena,
    SeriesOrfaos,
    Neighbours,
    Finals,
}

/// Number of bet types.
pub const N_KINDS: usize = 20;

/// Ids, exactly as the digest names them.
pub const KIND_IDS: [&str; N_KINDS] = [
    "straight",
    "split",
    "street",
    "corner",
    "line",
    "dozen",
    "column",
    "dozen_split",
    "column_split",
    "even",
    "odd",
    "low",
    "high",
    "red",
    "black",
    "series_grande",
    "series_pequena",
    "series_orfaos",
    "neighbours",
    "finals",
];

const ALL_KINDS: [Kind; N_KINDS] = [
    Kind::Straight,
    Kind::Split,
    Kind::Street,
    Kind::Corner,
    Kind::Line,
    Kind::Dozen,
    Kind::Column,
    Kind::DozenSplit,
    Kind::ColumnSplit,
    Kind::Even,
    Kind::Odd,
    Kind::Low,
    Kind::High,
    Kind::Red,
    Kind::Black,
    Kind::SeriesGrande,
    Kind::SeriesPequena,
    Kind::SeriesOrfaos,
    Kind::Neighbours,
    Kind::Finals,
];

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        KIND_IDS.iter().position(|k| *k == s).map(|i| ALL_KINDS[i])
    }

    pub fn id(self) -> &'static str {
        KIND_IDS[self as usize]
    }

    /// The pay class of an ordinary bet.
    pub fn class(self) -> Option<Class> {
        Some(match self {
            Kind::Straight => Class::Straight,
            Kind::Split => Class::Split,
            Kind::Street => Class::Street,
            Kind::Corner => Class::Corner,
            Kind::Line => Class::Line,
            Kind::Dozen => Class::Dozen,
            Kind::Column => Class::Column,
            Kind::DozenSplit => Class::DozenSplit,
            Kind::ColumnSplit => Class::ColumnSplit,
            Kind::Even | Kind::Odd | Kind::Low | Kind::High | Kind::Red | Kind::Black => {
                Class::EvenMoney
            }
            _ => return None,
        })
    }

    /// Announced (series / neighbours / finals) bets.
    pub fn announced(self) -> bool {
        self.class().is_none()
    }

    /// Inside bets: the ones face-value chips may not be used on (P217/2007 T.I C.I S.I r.16).
    pub fn inside(self) -> bool {
        !matches!(
            self.class(),
            Some(
                Class::Dozen
                    | Class::Column
                    | Class::DozenSplit
                    | Class::ColumnSplit
                    | Class::EvenMoney
            )
        )
    }
}

/// Pay classes of ordinary bets: each has one payout (P217/2007 T.I C.I S.I r.27(a)(b)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Straight,
    Split,
    Street,
    Corner,
    Line,
    Dozen,
    Column,
    DozenSplit,
    ColumnSplit,
    EvenMoney,
}

pub const N_CLASSES: usize = 10;

/// Setting names of the online payouts, by class.
pub const PAYOUT_SETTINGS: [&str; N_CLASSES] = [
    "payout_straight",
    "payout_split",
    "payout_street",
    "payout_corner",
    "payout_line",
    "payout_dozen",
    "payout_column",
    "payout_dozen_split",
    "payout_column_split",
    "payout_even_money",
];

/// P217/2007 T.I C.I S.I r.27(a)(b); S.II r.18(a)(b): 35, 17, 11, 8, 5, 2, 2, 1/2, 1/2 and 1 to 1,
/// as (numerator, denominator).
pub const LAND_PAYOUTS: [(i64, i64); N_CLASSES] = [
    (35, 1),
    (17, 1),
    (11, 1),
    (8, 1),
    (5, 1),
    (2, 1),
    (2, 1),
    (1, 2),
    (1, 2),
    (1, 1),
];

/// Numbers covered by each class (the limit ratios are 30 × this, P217/2007 T.I C.I S.I r.32).
pub const CLASS_NUMBERS: [i64; N_CLASSES] = [1, 2, 3, 4, 6, 12, 12, 24, 24, 18];

/// Maximum over minimum per class: P217/2007 T.I C.I S.I r.32(a)(b); S.II r.24(a)(b).
pub const LIMIT_RATIO: [i64; N_CLASSES] = [30, 60, 90, 120, 180, 360, 360, 720, 720, 540];

pub const WON: [&str; N_CLASSES] = [
    "straight won",
    "split won",
    "street won",
    "corner won",
    "line won",
    "dozen won",
    "column won",
    "dozen split won at half the stake",
    "column split won at half the stake",
    "simple chance won at even money",
];

pub const LOST: [&str; N_CLASSES] = [
    "straight lost",
    "split lost",
    "street lost",
    "corner lost",
    "line lost",
    "dozen lost",
    "column lost",
    "dozen split lost",
    "column split lost",
    "simple chance lost",
];

impl Class {
    pub fn from_size(n: usize) -> Option<Class> {
        Some(match n {
            1 => Class::Straight,
            2 => Class::Split,
            3 => Class::Street,
            4 => Class::Corner,
            6 => Class::Line,
            _ => return None,
        })
    }
}

/// What a recorded selection covers, for ordinary bets. `None`: not a combination of the layout.
pub fn ordinary_mask(kind: Kind, sel: &[u8], zero_corner: bool) -> Option<u64> {
    match kind {
        Kind::Straight => match sel {
            [n] if *n <= 36 => Some(1u64 << n),
            _ => None,
        },
        Kind::Split => split_mask(sel),
        Kind::Street => street_mask(sel),
        Kind::Corner => corner_mask(sel, zero_corner),
        Kind::Line => line_mask(sel),
        Kind::Dozen => match sel {
            [d @ 1..=3] => Some(dozen_mask(*d)),
            _ => None,
        },
        Kind::Column => match sel {
            [c @ 1..=3] => Some(column_mask(*c)),
            _ => None,
        },
        // Two adjacent dozens / columns (digest note N5).
        Kind::DozenSplit => match sel {
            [1, 2] | [2, 1] => Some(dozen_mask(1) | dozen_mask(2)),
            [2, 3] | [3, 2] => Some(dozen_mask(2) | dozen_mask(3)),
            _ => None,
        },
        Kind::ColumnSplit => match sel {
            [1, 2] | [2, 1] => Some(column_mask(1) | column_mask(2)),
            [2, 3] | [3, 2] => Some(column_mask(2) | column_mask(3)),
            _ => None,
        },
        Kind::Even => sel.is_empty().then_some(EVEN_MASK),
        Kind::Odd => sel.is_empty().then_some(ODD_MASK),
        Kind::Low => sel.is_empty().then_some(LOW_MASK),
        Kind::High => sel.is_empty().then_some(HIGH_MASK),
        Kind::Red => sel.is_empty().then_some(RED_MASK),
        Kind::Black => sel.is_empty().then_some(BLACK_MASK),
        _ => None,
    }
}

/// One component of an announced bet, compiled: `chips` base chips on `mask`, paid as `class`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comp {
    pub chips: u32,
    pub mask: u64,
    pub class: Class,
}

/// A compiled series: its base chip count and components.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Series {
    pub base_chips: u32,
    pub comps: Vec<Comp>,
    pub coverage: u64,
}

impl Series {
    pub fn from_table(t: &[Component]) -> Series {
        let comps: Vec<Comp> = t
            .iter()
            .map(|c| Comp {
                chips: c.chips,
                mask: mask(c.numbers),
                // The land tables hold only 1-, 2-, 3- and 4-number combinations (tested).
                class: Class::from_size(c.numbers.len()).unwrap_or(Class::Straight),
            })
            .collect();
        Series {
            base_chips: comps.iter().map(|c| c.chips).sum(),
            coverage: comps.iter().fold(0, |m, c| m | c.mask),
            comps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Announced bets are the series and number-and-neighbours of P217/2007 T.I C.I S.I r.25
    /// and the finals call bet of R807/2015 r.8(e); inside bets are the ones face-value chips
    /// may not be used on (S.I r.16): every bet on fewer than 12 numbers, and the announced ones.
    #[test]
    fn announced_and_inside_per_kind() {
        for (i, id) in KIND_IDS.iter().enumerate() {
            let k = Kind::parse(id).unwrap();
            assert_eq!(k.id(), *id);
            assert_eq!(k as usize, i);
            let announced = matches!(
                *id,
                "series_grande" | "series_pequena" | "series_orfaos" | "neighbours" | "finals"
            );
            assert_eq!(k.announced(), announced, "{id}");
            let inside =
                announced || matches!(*id, "straight" | "split" | "street" | "corner" | "line");
            assert_eq!(k.inside(), inside, "{id}");
        }
        assert_eq!(Kind::parse("plein"), None);
    }

    /// A straight is on one of the 37 pockets 0-36 (P217/2007 T.I C.I S.I r.2, r.24(a)); no
    /// other value makes a mask.
    #[test]
    fn straight_mask_only_on_a_pocket() {
        assert_eq!(ordinary_mask(Kind::Straight, &[0], false), Some(1));
        assert_eq!(ordinary_mask(Kind::Straight, &[36], false), Some(1 << 36));
        for n in [37, 63, 64, 255] {
            assert_eq!(ordinary_mask(Kind::Straight, &[n], false), None, "{n}");
        }
        assert_eq!(ordinary_mask(Kind::Straight, &[1, 2], false), None);
    }

    /// Pay class by the number of numbers a layout combination covers (P217/2007 T.I C.I S.I
    /// r.27(a)): a call-bet composition's groups are paid by it (R807/2015 r.8).
    #[test]
    fn class_from_size() {
        let classes: Vec<_> = (0..=7).map(Class::from_size).collect();
        assert_eq!(
            classes,
            [
                None,
                Some(Class::Straight),
                Some(Class::Split),
                Some(Class::Street),
                Some(Class::Corner),
                None,
                Some(Class::Line),
                None
            ]
        );
    }

    /// The land series (P217/2007 T.I C.I S.I r.25(a)) compiled: 9, 6 and 5 base chips covering
    /// exactly the wheel sectors of R807/2015 r.8(a)(b)(c); orphelins' two splits 14-17 and
    /// 17-20 overlap on 17, which the coverage still holds once.
    #[test]
    fn compiled_series_cover_their_sectors() {
        for (table, base, cover) in [
            (&SERIES_GRANDE[..], 9, &VOISINS[..]),
            (&SERIES_PEQUENA[..], 6, &TIERS[..]),
            (&SERIES_ORFAOS[..], 5, &ORPHELINS[..]),
        ] {
            let s = Series::from_table(table);
            assert_eq!(s.base_chips, base);
            assert_eq!(s.coverage, mask(cover));
            assert_eq!(s.comps.len(), table.len());
            for (c, t) in s.comps.iter().zip(table) {
                assert_eq!((c.chips, c.mask), (t.chips, mask(t.numbers)));
                assert_eq!(Some(c.class), Class::from_size(t.numbers.len()));
            }
        }
    }
}
