//! What a blackjack table carries from one round to the next.

use rules_core::CardCounts;
use serde::{Deserialize, Serialize};

/// The table state between rounds. `Default` is a table that has just opened with a freshly
/// shuffled shoe.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlackjackState {
    /// How many times each card has left the shoe since the last `shuffle` procedure (manual
    /// shoe, batch shuffler) or since the cards last went back into a continuous shuffler.
    /// A count above the table's decks is `BJ_SHOE_CARD_OVERCOUNT` (r.3).
    pub shoe: CardCounts,
    /// Manual shoe: where the warning card stands (r.9, r.11).
    #[serde(default)]
    pub warning_card: WarningCard,
    /// Automatic shuffler: loads recorded in the current session ("partida"), reset by the
    /// `session_start` / `session_end` procedures (r.54: once per session).
    #[serde(default)]
    pub shuffler_loads: u32,
    /// Continuous shuffler: the last round's cards stayed in the discard and go into the
    /// shuffler with this round's (r.60; P1364/2001 r.61), so they are still counted.
    #[serde(default)]
    pub cards_left_out: bool,
    /// Online tables: the sessions of the players at each seat (ROBJ/2015 r.34-r.36), in seat
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub online_seats: Vec<OnlineSeat>,
}

/// The warning card ("carta-aviso") of a manual shoe (r.9, r.11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningCard {
    /// Not out yet (or the cards were reshuffled since).
    #[default]
    InShoe,
    /// Came out immediately before a round started (after the last card of the previous
    /// round): the next round is still played, then the cards are reshuffled (r.11).
    OutBeforeRound,
    /// Came out during a round: that round was the last of the shoe; no round may start before
    /// a `shuffle` (r.11). A further round is `BJ_PLAYED_PAST_WARNING_CARD`.
    OutLastRoundPlayed,
}

/// An online player's session at a seat (ROBJ/2015 r.34-r.36).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnlineSeat {
    pub seat: u8,
    /// Consecutive rounds, up to the last one, in which the player placed no bet (r.35(b)).
    pub idle_rounds: u32,
    /// When the player last placed a bet, ms since the epoch (r.35(a)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_bet_at_ms: Option<i64>,
    /// The operator's inactivity warning (r.36) is outstanding.
    #[serde(default)]
    pub warned: bool,
    /// When it was given (single-player tables: the session may end a minute later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warned_at_ms: Option<i64>,
    /// Idle rounds already counted when the warning was given (multi-player tables: more than
    /// 5 are needed, and then the next round without a bet).
    #[serde(default)]
    pub idle_at_warning: u32,
}
