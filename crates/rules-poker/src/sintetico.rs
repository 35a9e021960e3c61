//! Póquer sintético: P217/2007 T.II S.II SS.IV (r.95–r.112, with SS.I by r.112) and the older
//! P461/2001 part II (r.1–r.66), selected by the table's `regulation`.
//!
//! * 28-card deck A K Q J 10 9 8, the ace high or low below the 8 (A-8-9-10-J, jack high)
//!   (r.95; P461 r.4); two hole cards (r.96); exactly the two hole cards and three of the five
//!   common cards (r.97; P461 r.1).
//! * Ranking r.103/r.105 (P461 r.24–r.37): flush above full house; "figuras com pares" and
//!   "figuras simples" above two pairs; ties from full house down to one pair share the losing
//!   bets equally (r.104; P461 r.26).
//! * Every player posts an ante equal to the minimum bet (r.102; P461 r.38); no burn card
//!   (r.100; P461 r.9); optional estardilho / restardilho before the first common card if the
//!   concessionaire allows it (r.106; P461 r.43); five common cards from the bottom of the deck,
//!   one betting round after each: round 1 from the player left of the mão holder (r.107), later
//!   rounds from the player who made the highest bet before (r.108; digest N14).
//! * Null hand on a dealing error (r.109; P461 r.62): cards out of order, a wrong number of
//!   cards, a card face up.
//! * House take: r.7 (P217) or a fixed 3% of the POT and of the all-in payments (P461 r.55).

use rules_core::GameId;

use crate::eval::{Deck, Ranking, Selection};
use crate::variant::{Forced, Streets, VariantRules};

/// Sintético's fixed rules.
pub const RULES: VariantRules = VariantRules {
    game: GameId::PokerSintetico,
    // r.95
    deck: Deck::Sintetico28,
    // r.103, r.105
    ranking: Ranking::Sintetico,
    // r.97
    selection: Selection::TwoPlusThree,
    // r.96
    hole_cards: 2,
    // r.102
    forced: Forced::Antes,
    // r.107, r.108
    streets: Streets::OneByOne,
    // r.100
    burns: false,
    // r.24; P461 r.11
    min_players: 4,
    // r.6, r.99
    max_seats: 11,
    default_seats: 11,
    raise_min_is_table_min: false,
    // r.47: no fixed cap (the `max_raises` setting may set one)
    fixed_raise_cap: None,
    land: true,
};
