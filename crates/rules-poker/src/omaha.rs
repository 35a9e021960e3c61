//! Omaha: P217/2007 T.II S.II SS.II (r.72–r.91), with the general rules of SS.I (r.1–r.71).
//!
//! * 52-card deck, ace high or low in straights (r.72); four hole cards dealt as in r.35 (r.77);
//!   the hand is **exactly two** of the four hole cards and **exactly three** of the five common
//!   cards (r.73).
//! * Blinds, betting order, minimum raise and raise cap as hold'em (r.81–r.88); r.89 and r.90 on
//!   idle and returning players; an automatic shuffler may alternate two decks (r.76).

use rules_core::GameId;

use crate::eval::{Deck, Ranking, Selection};
use crate::variant::{Forced, Streets, VariantRules};

/// Omaha's fixed rules.
pub const RULES: VariantRules = VariantRules {
    game: GameId::PokerOmaha,
    deck: Deck::Standard52,
    ranking: Ranking::Standard,
    // r.73
    selection: Selection::TwoPlusThree,
    // r.77
    hole_cards: 4,
    // r.81-r.83
    forced: Forced::MaoBlinds,
    streets: Streets::FlopTurnRiver,
    burns: true,
    min_players: 4,
    max_seats: 10,
    default_seats: 10,
    // r.86
    raise_min_is_table_min: true,
    // r.87, r.88
    fixed_raise_cap: Some(3),
    land: true,
};
