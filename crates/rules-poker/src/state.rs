//! What carries over from one hand of a table to the next.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use rules_core::Cents;

/// The table state between hands. `Default` is a table that has just opened. In JSON every field
/// may be omitted (its default).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PokerState {
    /// Hands adjudicated at this table since it opened (null hands included).
    pub hands: u64,
    /// Seat of the mão holder / button in the last hand (r.29, r.30; Reg806 r.4(c), r.64): the
    /// next hand's must be the next seat in the hand clockwise. `None` at a new table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub button: Option<u8>,
    /// Per seat: consecutive hands the seat was dealt in without putting a chip in (r.89: after
    /// five, the next hand owes a big blind). Omaha and hold'em only.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub idle_hands: BTreeMap<u8, u32>,
    /// Per seat: blinds missed while absent, owed as dead money on return (r.90), in cents.
    /// Omaha and hold'em only.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub missed_blinds_cents: BTreeMap<u8, Cents>,
    /// The current P217 session, at tables with the per-session commission (r.7(b)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
    /// P461/2001 r.49 "pó": chips of the last hand in which nobody bet, carried into the next
    /// hand's main pot (0 when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub po_carry_cents: Cents,
}

fn is_zero(v: &Cents) -> bool {
    *v == 0
}

/// A P217 r.7(b) session: one hour of play plus the hands needed for every player to complete
/// the mão in progress (the marker's orbit back to the seat that had it when the session began).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Session {
    /// When its first hand opened (ms since the epoch).
    pub started_at_ms: i64,
    /// The mão/button seat of its first hand.
    pub first_button: u8,
    /// Seats charged the session fee in this session, ascending.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub charged: Vec<u8>,
    /// Seats seen in this session with the time they were first dealt in (ms), by seat.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub joined_at_ms: BTreeMap<u8, i64>,
}
