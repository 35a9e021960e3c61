//! Hold'em, land-based: P217/2007 T.II S.II SS.III (r.92–r.94), with the general rules of SS.I
//! (r.1–r.71) and the omaha rules of SS.II (r.72–r.91) by r.92.
//!
//! * 52-card deck, ace high or low in straights (r.72 via r.92); two hole cards (r.93); the best
//!   five of the seven cards, the board alone allowed (r.94).
//! * The mão holder posts the small blind = half the table minimum, the player on his left the
//!   big blind = the minimum (r.81–r.83); round 1 starts left of the big blind (r.84), later
//!   rounds with the mão holder (r.85); burn before flop, turn and river (r.41, r.43, r.45).
//! * Raises add at least the table minimum (r.86); at most three raises per round unless only two
//!   players are in the hand (r.87, r.88); five hands without a bet owe a big blind (r.89); missed
//!   blinds are posted dead on return (r.90).

use rules_core::GameId;

use crate::eval::{Deck, Ranking, Selection};
use crate::variant::{Forced, Streets, VariantRules};

/// Hold'em's fixed rules.
pub const RULES: VariantRules = VariantRules {
    game: GameId::PokerHoldem,
    deck: Deck::Standard52,
    ranking: Ranking::Standard,
    // r.94
    selection: Selection::BestOfAll,
    // r.93
    hole_cards: 2,
    // r.81-r.83
    forced: Forced::MaoBlinds,
    // r.36-r.46
    streets: Streets::FlopTurnRiver,
    // r.41, r.43, r.45
    burns: true,
    // r.24
    min_players: 4,
    // r.6
    max_seats: 10,
    default_seats: 10,
    // r.86
    raise_min_is_table_min: true,
    // r.87, r.88
    fixed_raise_cap: Some(3),
    land: true,
};
