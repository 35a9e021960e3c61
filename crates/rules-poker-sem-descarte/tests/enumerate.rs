//! Exhaustive enumeration of all 2,598,960 five-card hands (P217/2007 T.I C.III S.II r.6, r.18).

use rules_core::Award;
use rules_core::Card;
use rules_poker_sem_descarte::eval::{Category, qualifies, rank};
use rules_poker_sem_descarte::paytable::{MULTIPLE, P461_JACKPOT};

/// r.6: category counts over every hand; r.18: the bank qualifies in 1,463,700 hands
/// (1,296,420 pair or better + 167,280 ace-king high: C(11,3) - 1 rank sets x (4^5 - 4) suits);
/// the expected multiple of the r.6 table over a random hand is exactly 2,919,848 / 2,598,960;
/// the expected fixed jackpot return of P461 r.9(c)-(e) per chip is 941,800 / 2,598,960 chips.
#[test]
fn r6_r18_every_five_card_hand() {
    let deck: Vec<Card> = Card::deck().collect();
    let mut counts = [0u64; 10];
    let mut qual = 0u64;
    let mut ak_high = 0u64;
    let mut n = 0u64;
    for a in 0..52 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                for d in c + 1..52 {
                    for e in d + 1..52 {
                        let r = rank(&[deck[a], deck[b], deck[c], deck[d], deck[e]]);
                        counts[r.category as usize] += 1;
                        if qualifies(&r) {
                            qual += 1;
                            if r.category == Category::HighCard {
                                ak_high += 1;
                            }
                        }
                        n += 1;
                    }
                }
            }
        }
    }
    assert_eq!(n, 2_598_960);
    assert_eq!(
        counts,
        [
            1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 36, 4
        ]
    );
    assert_eq!(ak_high, 164 * 1020);
    assert_eq!(qual, 1_296_420 + 167_280);
    // r.6 pay table: expected multiple of the second bet, as an exact fraction.
    let total: u64 = counts.iter().zip(MULTIPLE).map(|(c, m)| c * m as u64).sum();
    assert_eq!(total, 2_919_848);
    // P461 r.9(c)-(e): fixed jackpot prizes (multiples of the chip) per hand.
    let fixed: u64 = P461_JACKPOT
        .iter()
        .filter_map(|(cat, award, _)| match award {
            Award::Multiple { times } => Some(counts[*cat as usize] * *times as u64),
            _ => None,
        })
        .sum();
    assert_eq!(fixed, 624 * 500 + 3744 * 100 + 5108 * 50);
    assert_eq!(fixed, 941_800);
}
