//! Constant tables of the wheel and the layout: pocket orders, colours, the legal layout
//! combinations (P217/2007 T.I C.I S.I r.2, r.6, r.24, r.26; S.II r.2, r.6, r.16, r.17;
//! R807/2015 r.6, r.7, r.10) and the series compositions of P217/2007 T.I C.I S.I r.25 and the
//! call-bet coverages of R807/2015 r.8. Every table is checked by exhaustive tests below.

/// French numbering, clockwise from 0 (P217/2007 T.I C.I S.I r.2(a); S.II r.2; R807/2015 r.6(c)).
pub const FRENCH_ORDER: [u8; 37] = [
    0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10, 5, 24, 16, 33, 1, 20,
    14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26,
];

/// American numbering, clockwise from 0, 37 pockets (P217/2007 T.I C.I S.I r.2(b)).
pub const AMERICAN_ORDER: [u8; 37] = [
    0, 28, 9, 26, 30, 11, 7, 20, 32, 17, 5, 22, 34, 15, 3, 24, 36, 13, 1, 27, 10, 25, 29, 12, 8,
    19, 31, 18, 6, 21, 33, 16, 4, 23, 35, 14, 2,
];

/// Red ("encarnado"/"vermelho") numbers: the regulation says numbers alternate red and black
/// around the wheel with 0 neither (P217/2007 T.I C.I S.I r.6; S.II r.6; R807/2015 r.6(b));
/// alternating around the French order from 32 = red gives this set, used for both wheel orders
/// (digest note N1).
pub const RED: [u8; 18] = [
    1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36,
];

/// Bit mask of a set of pockets (bit n = pocket n).
pub const fn mask(nums: &[u8]) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < nums.len() {
        m |= 1u64 << nums[i];
        i += 1;
    }
    m
}

/// Pockets 1-36.
pub const NUMBERS_MASK: u64 = ((1u64 << 37) - 1) & !1;
pub const RED_MASK: u64 = mask(&RED);
pub const BLACK_MASK: u64 = NUMBERS_MASK & !RED_MASK;

const fn even_mask() -> u64 {
    let mut m = 0u64;
    let mut n = 2;
    while n <= 36 {
        m |= 1u64 << n;
        n += 2;
    }
    m
}
/// "Par": the 18 even numbers 2-36; 0 is neither (P217/2007 T.I C.I S.I r.24(b); note N14).
pub const EVEN_MASK: u64 = even_mask();
pub const ODD_MASK: u64 = NUMBERS_MASK & !EVEN_MASK;
/// "Menor": 1 to 18.
pub const LOW_MASK: u64 = ((1u64 << 19) - 1) & !1;
/// "Maior": 19 to 36.
pub const HIGH_MASK: u64 = NUMBERS_MASK & !LOW_MASK;

/// Dozen d (1-3): 1-12, 13-24, 25-36 (r.24(a)).
pub const fn dozen_mask(d: u8) -> u64 {
    let lo = (d as u32 - 1) * 12 + 1;
    (((1u64 << 12) - 1) << lo) & NUMBERS_MASK
}

/// Column c (1-3): the numbers aligned from 34 (c = 1), 35 (c = 2) or 36 (c = 3) (r.24(a)).
pub const fn column_mask(c: u8) -> u64 {
    let mut m = 0u64;
    let mut n = c as u32;
    while n <= 36 {
        m |= 1u64 << n;
        n += 3;
    }
    m
}

const fn positions(order: &[u8; 37]) -> [u8; 37] {
    let mut p = [0u8; 37];
    let mut i = 0;
    while i < 37 {
        p[order[i] as usize] = i as u8;
        i += 1;
    }
    p
}
/// Index of each pocket in the French order.
pub const FRENCH_POS: [u8; 37] = positions(&FRENCH_ORDER);

/// The pockets of a number and `k` neighbours on each side in the French wheel order
/// (P217/2007 T.I C.I S.I r.25(b); R807/2015 r.8(d)).
pub fn neighbours_mask(center: u8, k: u32) -> u64 {
    let Some(&pos) = FRENCH_POS.get(center as usize) else {
        return 0;
    };
    let mut m = 0u64;
    let pos = i64::from(pos);
    for j in -(i64::from(k))..=i64::from(k) {
        let idx = (pos + j).rem_euclid(37) as usize;
        m |= 1u64 << FRENCH_ORDER[idx];
    }
    m
}

/// Finals d (0-9): the numbers ending in d (R807/2015 r.8(e)).
pub fn finals_mask(d: u8) -> u64 {
    let mut m = 0u64;
    let mut n = d;
    while n <= 36 {
        m |= 1u64 << n;
        n += 10;
    }
    m
}

/// Sorted selection of at most 6 distinct pockets 0-36, or `None`.
fn sorted<const N: usize>(sel: &[u8]) -> Option<[u8; N]> {
    if sel.len() != N {
        return None;
    }
    let mut a = [0u8; N];
    a.copy_from_slice(sel);
    a.sort_unstable();
    for w in a.windows(2) {
        if w[0] == w[1] {
            return None;
        }
    }
    if a[N - 1] > 36 {
        return None;
    }
    Some(a)
}

/// Cavalo: two numbers adjacent on the layout: same row, same column, or 0 with 1, 2 or 3
/// (P217/2007 T.I C.I S.I r.24(a), r.26; S.II r.16(a), r.17; R807/2015 r.6(d), r.10).
pub fn split_mask(sel: &[u8]) -> Option<u64> {
    let [a, b] = sorted::<2>(sel)?;
    let ok = (a == 0 && (1..=3).contains(&b))
        || (a >= 1 && b == a + 1 && a % 3 != 0)
        || (a >= 1 && b == a + 3);
    ok.then(|| mask(&[a, b]))
}

/// Rua: a row of three, or the trios 0-1-2 and 0-2-3 (S.I r.24(a), r.25(a) names "rua 0-2-3").
pub fn street_mask(sel: &[u8]) -> Option<u64> {
    let s = sorted::<3>(sel)?;
    let ok = (s[0] >= 1 && s[0] % 3 == 1 && s[1] == s[0] + 1 && s[2] == s[0] + 2)
        || s == [0, 1, 2]
        || s == [0, 2, 3];
    ok.then(|| mask(&s))
}

/// Quadro: four numbers meeting at a corner {n, n+1, n+3, n+4}, n not in the third column;
/// 0-1-2-3 only where the table set-up allows it (digest note N4).
pub fn corner_mask(sel: &[u8], zero_corner: bool) -> Option<u64> {
    let s = sorted::<4>(sel)?;
    let n = s[0];
    let ok = (n >= 1 && n % 3 != 0 && s[1] == n + 1 && s[2] == n + 3 && s[3] == n + 4)
        || (zero_corner && s == [0, 1, 2, 3]);
    ok.then(|| mask(&s))
}

/// Linha: two adjacent rows (six numbers).
pub fn line_mask(sel: &[u8]) -> Option<u64> {
    let s = sorted::<6>(sel)?;
    let n = s[0];
    let ok = n >= 1 && n % 3 == 1 && (0..6).all(|i| s[i] == n + i as u8);
    ok.then(|| mask(&s))
}

/// One component of an announced bet: `chips` chips on a layout combination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Component {
    pub chips: u32,
    pub numbers: &'static [u8],
}

/// Série grande / série 0-2-3, 9 chips (P217/2007 T.I C.I S.I r.25(a)).
pub const SERIES_GRANDE: [Component; 7] = [
    Component {
        chips: 2,
        numbers: &[0, 2, 3],
    },
    Component {
        chips: 1,
        numbers: &[4, 7],
    },
    Component {
        chips: 1,
        numbers: &[12, 15],
    },
    Component {
        chips: 1,
        numbers: &[18, 21],
    },
    Component {
        chips: 1,
        numbers: &[19, 22],
    },
    Component {
        chips: 2,
        numbers: &[25, 26, 28, 29],
    },
    Component {
        chips: 1,
        numbers: &[32, 35],
    },
];

/// Série pequena / série 5-8, 6 chips (P217/2007 T.I C.I S.I r.25(a)).
pub const SERIES_PEQUENA: [Component; 6] = [
    Component {
        chips: 1,
        numbers: &[5, 8],
    },
    Component {
        chips: 1,
        numbers: &[10, 11],
    },
    Component {
        chips: 1,
        numbers: &[13, 16],
    },
    Component {
        chips: 1,
        numbers: &[23, 24],
    },
    Component {
        chips: 1,
        numbers: &[27, 30],
    },
    Component {
        chips: 1,
        numbers: &[33, 36],
    },
];

/// Série órfãos / vadios, 5 chips (P217/2007 T.I C.I S.I r.25(a)).
pub const SERIES_ORFAOS: [Component; 5] = [
    Component {
        chips: 1,
        numbers: &[1],
    },
    Component {
        chips: 1,
        numbers: &[6, 9],
    },
    Component {
        chips: 1,
        numbers: &[14, 17],
    },
    Component {
        chips: 1,
        numbers: &[17, 20],
    },
    Component {
        chips: 1,
        numbers: &[31, 34],
    },
];

/// Coverage of the série 0-2-3 / voisins du zéro: the 17 numbers from 22 to 25 (R807/2015 r.8(a)).
pub const VOISINS: [u8; 17] = [
    22, 18, 29, 7, 28, 12, 35, 3, 26, 0, 32, 15, 19, 4, 21, 2, 25,
];
/// Coverage of the série 5-8 / tiers du cylindre: 27 to 33 (R807/2015 r.8(b)).
pub const TIERS: [u8; 12] = [27, 13, 36, 11, 30, 8, 23, 10, 5, 24, 16, 33];
/// Coverage of the orphelins (R807/2015 r.8(c)).
pub const ORPHELINS: [u8; 8] = [17, 34, 6, 1, 20, 14, 31, 9];

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(m: u64) -> Vec<u8> {
        (0..37).filter(|n| m & (1 << n) != 0).collect()
    }

    fn row(n: u8) -> u8 {
        n.div_ceil(3)
    }
    fn col(n: u8) -> u8 {
        (n - 1) % 3 + 1
    }

    #[test]
    fn wheel_orders_are_permutations_of_0_to_36_starting_at_0() {
        // P217/2007 T.I C.I S.I r.2
        for order in [FRENCH_ORDER, AMERICAN_ORDER] {
            let mut s = order;
            s.sort_unstable();
            assert_eq!(s.to_vec(), (0..37).collect::<Vec<u8>>());
            assert_eq!(order[0], 0);
        }
        for n in 0..37u8 {
            assert_eq!(FRENCH_ORDER[FRENCH_POS[n as usize] as usize], n);
        }
    }

    #[test]
    fn colours_alternate_on_the_french_wheel() {
        // P217/2007 T.I C.I S.I r.6; note N1: 32 red, alternating
        assert_eq!(RED_MASK.count_ones(), 18);
        assert_eq!(BLACK_MASK.count_ones(), 18);
        assert_eq!(RED_MASK & 1, 0);
        for (i, n) in FRENCH_ORDER.iter().enumerate().skip(1) {
            let red = RED_MASK & (1 << n) != 0;
            assert_eq!(red, i % 2 == 1, "pocket {n}");
        }
    }

    #[test]
    fn outside_masks() {
        // r.24(a)(b)
        assert_eq!(EVEN_MASK.count_ones(), 18);
        assert_eq!(ODD_MASK.count_ones(), 18);
        assert_eq!(bits(LOW_MASK), (1..=18).collect::<Vec<u8>>());
        assert_eq!(bits(HIGH_MASK), (19..=36).collect::<Vec<u8>>());
        for d in 1..=3u8 {
            let lo = (d - 1) * 12 + 1;
            assert_eq!(bits(dozen_mask(d)), (lo..lo + 12).collect::<Vec<u8>>());
            let c = bits(column_mask(d));
            assert_eq!(c.len(), 12);
            assert!(c.iter().all(|&n| col(n) == d));
            assert_eq!(*c.last().unwrap(), 33 + d);
        }
    }

    fn count_subsets(k: usize, f: &dyn Fn(&[u8]) -> bool) -> usize {
        fn rec(start: u8, k: usize, cur: &mut Vec<u8>, f: &dyn Fn(&[u8]) -> bool, n: &mut usize) {
            if cur.len() == k {
                if f(cur) {
                    *n += 1;
                }
                return;
            }
            for x in start..37 {
                cur.push(x);
                rec(x + 1, k, cur, f, n);
                cur.pop();
            }
        }
        let mut n = 0;
        rec(0, k, &mut Vec::new(), f, &mut n);
        n
    }

    /// Independent geometric definition: cells adjacent on the grid (0 touches the first row).
    fn adjacent(a: u8, b: u8) -> bool {
        let (a, b) = (a.min(b), a.max(b));
        if a == 0 {
            return (1..=3).contains(&b);
        }
        (row(a) == row(b) && col(b) == col(a) + 1) || (col(a) == col(b) && row(b) == row(a) + 1)
    }

    #[test]
    fn exhaustive_layout_combinations() {
        // P217/2007 T.I C.I S.I r.24(a), r.26; digest section 3 counts
        assert_eq!(count_subsets(2, &|s| split_mask(s).is_some()), 60);
        assert_eq!(count_subsets(2, &|s| adjacent(s[0], s[1])), 60);
        assert_eq!(
            count_subsets(2, &|s| split_mask(s).is_some() != adjacent(s[0], s[1])),
            0
        );
        assert_eq!(count_subsets(3, &|s| street_mask(s).is_some()), 14);
        assert_eq!(count_subsets(4, &|s| corner_mask(s, false).is_some()), 22);
        assert_eq!(count_subsets(4, &|s| corner_mask(s, true).is_some()), 23);
        // every corner is four pairwise-grid-connected cells of two rows and two columns
        assert_eq!(
            count_subsets(4, &|s| corner_mask(s, false).is_some()
                && !(s.iter().all(|&n| n > 0)
                    && s.iter().map(|&n| row(n)).max().unwrap()
                        == s.iter().map(|&n| row(n)).min().unwrap() + 1
                    && s.iter().map(|&n| col(n)).max().unwrap()
                        == s.iter().map(|&n| col(n)).min().unwrap() + 1)),
            0
        );
        assert_eq!(count_subsets(6, &|s| line_mask(s).is_some()), 11);
        // digest worked example 5
        assert!(split_mask(&[3, 4]).is_none());
        assert!(split_mask(&[3, 6]).is_some());
        assert!(corner_mask(&[2, 3, 5, 6], false).is_some());
        assert!(corner_mask(&[3, 4, 6, 7], false).is_none());
        assert!(split_mask(&[36, 37]).is_none());
        assert!(split_mask(&[5, 5]).is_none());
    }

    #[test]
    fn series_compositions() {
        // P217/2007 T.I C.I S.I r.25(a): 9 chips / 17 numbers, 6 / 12, 5 / 8
        for (comps, chips, numbers, cover) in [
            (&SERIES_GRANDE[..], 9, 17, &VOISINS[..]),
            (&SERIES_PEQUENA[..], 6, 12, &TIERS[..]),
            (&SERIES_ORFAOS[..], 5, 8, &ORPHELINS[..]),
        ] {
            assert_eq!(comps.iter().map(|c| c.chips).sum::<u32>(), chips);
            let m = comps.iter().fold(0, |m, c| m | mask(c.numbers));
            assert_eq!(m.count_ones(), numbers);
            // R807/2015 r.8: the land series cover the same wheel sectors
            assert_eq!(m, mask(cover));
            for c in comps {
                let legal = match c.numbers.len() {
                    1 => true,
                    2 => split_mask(c.numbers).is_some(),
                    3 => street_mask(c.numbers).is_some(),
                    4 => corner_mask(c.numbers, false).is_some(),
                    _ => false,
                };
                assert!(legal, "{:?}", c.numbers);
            }
        }
        // the three sectors partition the wheel
        assert_eq!(
            mask(&VOISINS) | mask(&TIERS) | mask(&ORPHELINS),
            NUMBERS_MASK | 1
        );
        assert_eq!(mask(&VOISINS) & mask(&TIERS), 0);
        assert_eq!(mask(&VOISINS) & mask(&ORPHELINS), 0);
        // voisins is the arc 22..25 through 0 on the French wheel
        let p22 = FRENCH_POS[22] as usize;
        for (j, n) in VOISINS.iter().enumerate() {
            assert_eq!(FRENCH_ORDER[(p22 + j) % 37], *n);
        }
        let p27 = FRENCH_POS[27] as usize;
        for (j, n) in TIERS.iter().enumerate() {
            assert_eq!(FRENCH_ORDER[(p27 + j) % 37], *n);
        }
    }

    #[test]
    fn neighbours_and_finals() {
        // digest 5.1: 19 with 2 each side = 32 15 19 4 21
        assert_eq!(neighbours_mask(19, 2), mask(&[32, 15, 19, 4, 21]));
        assert_eq!(neighbours_mask(0, 1), mask(&[26, 0, 32]));
        for n in 0..37 {
            for k in 1..=3 {
                assert_eq!(neighbours_mask(n, k).count_ones(), 2 * k + 1);
            }
        }
        assert_eq!(bits(finals_mask(0)), vec![0, 10, 20, 30]);
        assert_eq!(bits(finals_mask(6)), vec![6, 16, 26, 36]);
        assert_eq!(bits(finals_mask(7)), vec![7, 17, 27]);
    }
}
