//! What a póquer sem descarte table carries from one round to the next.

use serde::{Deserialize, Serialize};

/// Table state between rounds. The deck is reshuffled for every round (r.16), so no cards carry
/// over.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PsdState {
    /// Consecutive rounds without an ante, per seat 1-7 (index 0 = seat 1): r.22 lets the
    /// dealer invite a player who has not bet for three rounds to give up his seat when no seat
    /// is free. Informational (explain notes); no finding depends on it.
    #[serde(default)]
    pub idle_rounds: [u8; 7],
}
