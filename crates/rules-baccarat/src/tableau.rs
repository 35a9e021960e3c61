//! The drawing tables, as constant matrices.
//!
//! * [`PB_BANCA`]: the ponto e banca third-card tableau for the banca (P217/2007 T.I C.III S.III
//!   r.13, identical in S.IV r.13). There are no optional cases.
//! * [`CF_BANKER`]: the chemin de fer banker's table (P217/2007 T.II S.I r.67), with its two
//!   optional cases ("à vontade"): 3 against a third card of 9 and 5 against a 4.
//!
//! Both are indexed `[banker's two-card score][column]`, where the column is the **value** of the
//! ponto's third card (0-9; the source writes "10" for the zero-valued cards) or [`NO_THIRD`]
//! when the ponto took no card. Rows 8 and 9 are naturals: the banker never consults the table
//! (r.13 "anuncia imediatamente"; r.67(a) "abate"); they are filled with "stand" so that a lookup
//! can never read past the table.
//!
//! The exhaustive test at the bottom checks that the two tables agree everywhere except the two
//! optional cases, which is what the digest's section 4 and the chemin de fer digest's section 4
//! say, and that each row matches the source wording cell by cell.

/// Column for "the ponto did not draw".
pub const NO_THIRD: usize = 10;

/// A ponto e banca tableau cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pb {
    /// "Tira carta" / "tem de tirar": must draw.
    D,
    /// "Não tira carta" / "fica": must stand.
    S,
}

/// A chemin de fer table cell (r.67(d): "T = tirar. F = ficar. 0 = à vontade.").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cf {
    /// Draw.
    T,
    /// Stand.
    F,
    /// At the banker's will (the two optional cases).
    O,
}

use Cf::{F, O, T};
use Pb::{D, S};

/// Ponto e banca: the banca's decision, P217/2007 T.I C.III S.III r.13 (= S.IV r.13).
///
/// Source: "0-1-2 Tem de tirar a carta. 3-4-5 Tira carta se o ponto não receber carta. 6 Fica se
/// o ponto não receber carta. 7 Fica." Banca 3 draws on 1-2-3-4-5-6-7-9-10 and stands on 8;
/// 4 draws on 2-7 and stands on 1-8-9-10; 5 draws on 4-7 and stands on 1-2-3-8-9-10; 6 draws on
/// 6-7 and stands on 1-2-3-4-5-8-9-10 ("10" = the zero-valued cards, column 0 here).
pub const PB_BANCA: [[Pb; 11]; 10] = [
    //0  1  2  3  4  5  6  7  8  9  none
    [D, D, D, D, D, D, D, D, D, D, D], // 0
    [D, D, D, D, D, D, D, D, D, D, D], // 1
    [D, D, D, D, D, D, D, D, D, D, D], // 2
    [D, D, D, D, D, D, D, D, S, D, D], // 3
    [S, S, D, D, D, D, D, D, S, S, D], // 4
    [S, S, S, S, D, D, D, D, S, S, D], // 5
    [S, S, S, S, S, S, D, D, S, S, S], // 6
    [S, S, S, S, S, S, S, S, S, S, S], // 7
    [S, S, S, S, S, S, S, S, S, S, S], // 8: natural, never consulted
    [S, S, S, S, S, S, S, S, S, S, S], // 9: natural, never consulted
];

/// Chemin de fer: the banker's table, P217/2007 T.II S.I r.67(b)-(d).
///
/// Rows 3-6 are the r.67(d) table as printed in P217/2007 (the consolidated text 003 omits it):
/// `3: T T T T T T T T F 0 T`, `4: F F T T T T T T F F T`, `5: F F F F 0 T T T F F T`,
/// `6: F F F F F F T T F F F`. Rows 0-2 are r.67(c) (draw), row 7 is r.67(b) (stand).
pub const CF_BANKER: [[Cf; 11]; 10] = [
    //0  1  2  3  4  5  6  7  8  9  none
    [T, T, T, T, T, T, T, T, T, T, T], // 0 bacará, r.67(c)
    [T, T, T, T, T, T, T, T, T, T, T], // 1, r.67(c)
    [T, T, T, T, T, T, T, T, T, T, T], // 2, r.67(c)
    [T, T, T, T, T, T, T, T, F, O, T], // 3, r.67(d)
    [F, F, T, T, T, T, T, T, F, F, T], // 4, r.67(d)
    [F, F, F, F, O, T, T, T, F, F, T], // 5, r.67(d)
    [F, F, F, F, F, F, T, T, F, F, F], // 6, r.67(d)
    [F, F, F, F, F, F, F, F, F, F, F], // 7, r.67(b)
    [F, F, F, F, F, F, F, F, F, F, F], // 8: abate, r.67(a)
    [F, F, F, F, F, F, F, F, F, F, F], // 9: abate, r.67(a)
];

/// The column for a ponto third card of value `v` (or none).
#[inline]
pub fn column(third_value: Option<u8>) -> usize {
    match third_value {
        Some(v) => (v % 10) as usize,
        None => NO_THIRD,
    }
}

/// Ponto e banca: the ponto draws on 0-5 and stands on 6-7 (8-9 is a natural)
/// (P217/2007 T.I C.III S.III r.13: "0-1-2-3-4-5 Tem de tirar. 6-7 Fica.").
#[inline]
pub const fn pb_ponto_draws(score: u8) -> bool {
    score <= 5
}

/// Ponto e banca: must the banca (two-card `score`, no natural on either side) draw?
/// (P217/2007 T.I C.III S.III r.13)
#[inline]
pub fn pb_banca_draws(score: u8, ponto_third: Option<u8>) -> bool {
    PB_BANCA[(score % 10) as usize][column(ponto_third)] == D
}

/// Chemin de fer: the banker's cell (P217/2007 T.II S.I r.67).
#[inline]
pub fn cf_banker(score: u8, ponto_third: Option<u8>) -> Cf {
    CF_BANKER[(score % 10) as usize][column(ponto_third)]
}

/// What r.64 requires of the ponto in chemin de fer (P217/2007 T.II S.I r.64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfPonto {
    /// 8 or 9: abate (r.64(a)).
    Abate,
    /// 6 or 7: "não" (r.64(b)).
    Stand,
    /// 0-4: "carta" (r.64(c)).
    Draw,
    /// 5: free choice (r.64(d)).
    Free,
}

/// The ponto's obligation for a two-card `score` (P217/2007 T.II S.I r.64).
pub const fn cf_ponto(score: u8) -> CfPonto {
    match score {
        8 | 9 => CfPonto::Abate,
        6 | 7 => CfPonto::Stand,
        5 => CfPonto::Free,
        _ => CfPonto::Draw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_values(s: &str) -> Vec<usize> {
        s.split('-')
            .map(|v| {
                let v: usize = v.parse().unwrap();
                v % 10
            })
            .collect()
    }

    /// P217/2007 T.I C.III S.III r.13: every row against the source wording.
    #[test]
    fn r13_pb_tableau_matches_source_wording() {
        // (score, draws on, stands on), as printed in the Portaria.
        let rows = [
            (3, "1-2-3-4-5-6-7-9-10", "8"),
            (4, "2-3-4-5-6-7", "1-8-9-10"),
            (5, "4-5-6-7", "1-2-3-8-9-10"),
            (6, "6-7", "1-2-3-4-5-8-9-10"),
        ];
        for (score, draws, stands) in rows {
            let (d, s) = (parse_values(draws), parse_values(stands));
            assert_eq!(d.len() + s.len(), 10, "row {score} covers every value");
            for col in d {
                assert_eq!(PB_BANCA[score][col], D, "banca {score} vs {col}");
            }
            for col in s {
                assert_eq!(PB_BANCA[score][col], S, "banca {score} vs {col}");
            }
        }
        // "0-1-2 Tem de tirar a carta."
        for row in &PB_BANCA[0..=2] {
            assert!(row.iter().all(|c| *c == D));
        }
        // "3-4-5 Tira carta se o ponto não receber carta." "6 Fica se o ponto não receber carta."
        for row in &PB_BANCA[3..=5] {
            assert_eq!(row[NO_THIRD], D);
        }
        assert_eq!(PB_BANCA[6][NO_THIRD], S);
        // "7 Fica."
        assert!(PB_BANCA[7].iter().all(|c| *c == S));
        // The ponto: 0-5 draw, 6-7 stand.
        assert!((0..=5).all(pb_ponto_draws));
        assert!(!pb_ponto_draws(6) && !pb_ponto_draws(7));
    }

    /// P217/2007 T.II S.I r.67 against T.I C.III S.III r.13: the banker's table equals the ponto e
    /// banca tableau in every cell except the two optional cases (3 v 9, 5 v 4), which are "O".
    #[test]
    fn r67_cf_table_equals_pb_tableau_but_two_options() {
        let mut options = Vec::new();
        for score in 0..10 {
            for col in 0..11 {
                match CF_BANKER[score][col] {
                    O => options.push((score, col)),
                    T => assert_eq!(PB_BANCA[score][col], D, "{score}/{col}"),
                    F => assert_eq!(PB_BANCA[score][col], S, "{score}/{col}"),
                }
            }
        }
        assert_eq!(options, vec![(3, 9), (5, 4)]);
        // In both optional cases ponto e banca draws (digest PB section 13).
        assert_eq!(PB_BANCA[3][9], D);
        assert_eq!(PB_BANCA[5][4], D);
    }

    /// P217/2007 T.II S.I r.64: ponto obligations, including the free choice on 5 that ponto e
    /// banca does not have (there the ponto must draw on 5).
    #[test]
    fn r64_ponto_obligations() {
        assert_eq!(cf_ponto(9), CfPonto::Abate);
        assert_eq!(cf_ponto(8), CfPonto::Abate);
        assert_eq!(cf_ponto(7), CfPonto::Stand);
        assert_eq!(cf_ponto(6), CfPonto::Stand);
        assert_eq!(cf_ponto(5), CfPonto::Free);
        for s in 0..5 {
            assert_eq!(cf_ponto(s), CfPonto::Draw);
        }
        assert!(pb_ponto_draws(5));
    }
}
