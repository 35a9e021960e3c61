//! What the shoe carries from one coup to the next: whether a shuffle has been seen, how many
//! coups and cards have come out of it, the burn of its first cards and the warning card.
//!
//! Used by ponto e banca (P217/2007 T.I C.III S.III/S.IV r.4-r.7, r.13 ¶2) and chemin de fer
//! (T.II S.I r.12-r.14, r.106(d)). The record expresses the shoe with `procedure` events
//! (`shuffle`, `cut`, `warning_card`) and `card` events to `burn`.

use rules_core::{Card, CardCounts};
use serde::{Deserialize, Serialize};

/// The shoe in use at a table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShoeState {
    /// A `shuffle` has been recorded since the table opened. Until then the engine does not know
    /// where the shoe stands and skips the checks that need it (first-coup burn, cards left).
    pub known: bool,
    /// Coups dealt from this shoe so far (a coup counts from its first card to a side).
    pub coups: u32,
    /// Cards burned from this shoe before its first coup (ponto e banca r.6: the first 8;
    /// chemin de fer r.13: the burn by value).
    pub initial_burned: u32,
    /// Cards that have left this shoe (burned, dealt, discarded), for chemin de fer r.106(d).
    pub cards_out: u32,
    /// The warning card ("carta-aviso") has come out of this shoe (ponto e banca r.7; chemin de
    /// fer r.14).
    pub warning_out: bool,
    /// Coups started since the warning card came out, counting the coup in which it came out:
    /// 1 while that last coup is played; a coup that starts with the value already at 1 is a coup
    /// after the last one (PB_COUP_AFTER_LAST_OF_SHOE, CF_COUP_AFTER_LAST_OF_SHOE).
    pub coups_since_warning: u32,
    /// How many times each card has left this shoe (burned, dealt, discarded). The cards still
    /// in the shoe are the decks minus these, which is what a simulator deals from.
    #[serde(default)]
    pub seen: CardCounts,
}

impl ShoeState {
    /// A freshly shuffled shoe (r.4/r.6; chemin de fer r.12/r.13).
    pub fn shuffled() -> ShoeState {
        ShoeState {
            known: true,
            ..ShoeState::default()
        }
    }

    /// The warning card came out; `coup_started` tells whether the current coup's deal has
    /// already begun (then this coup is the last one).
    pub fn warning(&mut self, coup_started: bool) {
        if !self.warning_out {
            self.warning_out = true;
            self.coups_since_warning = u32::from(coup_started);
        }
    }

    /// A coup starts: returns true if it is a coup after the last coup of the shoe.
    pub fn start_coup(&mut self) -> bool {
        let after_last = self.warning_out && self.coups_since_warning >= 1;
        self.coups = self.coups.saturating_add(1);
        if self.warning_out {
            self.coups_since_warning = self.coups_since_warning.saturating_add(1);
        }
        after_last
    }

    /// `card` left the shoe.
    pub fn card_out(&mut self, card: Card) {
        self.cards_out = self.cards_out.saturating_add(1);
        self.seen.add(card);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P217/2007 T.I C.III S.III r.7: after the warning-card coup no coup without a reshuffle.
    #[test]
    fn r7_coup_after_last() {
        let mut s = ShoeState::shuffled();
        assert!(!s.start_coup());
        s.warning(true); // came out during coup 1: coup 1 is the last
        assert!(s.start_coup()); // coup 2 is after the last
        let mut s = ShoeState::shuffled();
        s.warning(false); // came out before this coup's deal (T.II S.I r.14: still played)
        assert!(!s.start_coup());
        assert!(s.start_coup());
    }
}
