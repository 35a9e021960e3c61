//! Who sits at the simulated table for a hand.
//!
//! [`crate::PokerState`] carries no seat occupancy and no caves, so the simulator derives the
//! players at the table from a stable key of the table and the number of hands the state has
//! seen: every seat alternates between stints of a player and empty spells of a few dozen hands,
//! so players arrive (buy in), stay a while, sometimes step away for a few hands (recorded
//! `absent`, owing the blinds that pass them), and leave (recorded `leave`). The same table and
//! hand count always give the same seating, whatever the random stream.

use rules_core::TableConfig;

use crate::config::PokerConfig;
use crate::hand::SEAT_SLOTS;

/// The seating of one hand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seating {
    /// Seats dealt into the hand, ascending.
    pub ring: Vec<u8>,
    /// Seats taken but away this hand (procedure `absent`).
    pub away: Vec<u8>,
    /// Seats taken since the last hand (procedure `buy_in`).
    pub newcomers: Vec<u8>,
    /// Seats left since the last hand (procedure `leave`).
    pub leavers: Vec<u8>,
    /// Per seat, the stint (player) number: with the table key, a stable player identity.
    pub stint: [u64; SEAT_SLOTS],
}

/// A 64-bit mix of the words (splitmix64 finaliser over a running sum).
pub fn mix(words: &[u64]) -> u64 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    for &w in words {
        h = h.wrapping_add(w).wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h = z ^ (z >> 31);
    }
    h
}

/// A stable key of the table: its game, table id and casino id (FNV-1a).
pub fn table_key(table: &TableConfig) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    let game = table.game.to_string();
    for part in [
        game.as_str(),
        table.table_id.as_deref().unwrap_or(""),
        table.casino_id.as_deref().unwrap_or(""),
    ] {
        for b in part.bytes().chain(std::iter::once(0xFF)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    h
}

/// Percent chance that a seat is taken during one of its stints.
fn occupancy_pct(cfg: &PokerConfig) -> u64 {
    if cfg.rules.land { 72 } else { 62 }
}

/// Fewest and most players dealt in: 4-10 at land tables (r.24, r.6), 2-10 online (Reg806 r.5,
/// r.7), never more than the table's seats.
pub fn player_bounds(cfg: &PokerConfig) -> (usize, usize) {
    let max = (cfg.seats as usize).min(10);
    (cfg.rules.min_players.min(max), max)
}

/// Seats taken after `hands` hands, as a bit mask, with each seat's stint number.
fn occupied(key: u64, cfg: &PokerConfig, hands: u64) -> (u16, [u64; SEAT_SLOTS]) {
    let (min, max) = player_bounds(cfg);
    let pct = occupancy_pct(cfg);
    let mut mask = 0u16;
    let mut stint = [0u64; SEAT_SLOTS];
    for s in 1..=cfg.seats {
        let len = 24 + mix(&[key, s as u64, 1]) % 48;
        let phase = mix(&[key, s as u64, 2]) % len;
        let w = (hands + phase) / len;
        stint[s as usize] = w;
        if mix(&[key, s as u64, w, 3]) % 100 < pct {
            mask |= 1 << s;
        }
    }
    let epoch = hands / 16;
    let count = mask.count_ones() as usize;
    if count < min {
        let mut free: Vec<u8> = (1..=cfg.seats).filter(|s| mask & (1 << s) == 0).collect();
        free.sort_by_key(|&s| mix(&[key, s as u64, epoch, 4]));
        for &s in free.iter().take(min - count) {
            mask |= 1 << s;
        }
    } else if count > max {
        let mut taken: Vec<u8> = (1..=cfg.seats).filter(|s| mask & (1 << s) != 0).collect();
        taken.sort_by_key(|&s| mix(&[key, s as u64, epoch, 5]));
        for &s in taken.iter().take(count - max) {
            mask &= !(1 << s);
        }
    }
    (mask, stint)
}

/// The seating of the hand played after `hands` hands at the table with key `key`.
pub fn seating(key: u64, cfg: &PokerConfig, hands: u64) -> Seating {
    let (min, _) = player_bounds(cfg);
    let (now, stint) = occupied(key, cfg, hands);
    let before = if hands == 0 {
        0
    } else {
        occupied(key, cfg, hands - 1).0
    };
    let seats = || 1..=cfg.seats;
    let mut away: Vec<u8> = seats()
        .filter(|&s| now & (1 << s) != 0 && before & (1 << s) != 0)
        .filter(|&s| {
            let w = (hands + mix(&[key, s as u64, 6]) % 5) / 5;
            hands > 0 && mix(&[key, s as u64, w, 7]) % 100 < 4
        })
        .collect();
    let taken = now.count_ones() as usize;
    while taken - away.len() < min && !away.is_empty() {
        away.pop();
    }
    let ring: Vec<u8> = seats()
        .filter(|&s| now & (1 << s) != 0 && !away.contains(&s))
        .collect();
    Seating {
        ring,
        away,
        newcomers: seats()
            .filter(|&s| now & (1 << s) != 0 && before & (1 << s) == 0)
            .collect(),
        leavers: seats()
            .filter(|&s| now & (1 << s) == 0 && before & (1 << s) != 0)
            .collect(),
        stint,
    }
}
