//! Hold'em online: Regulamento 806/2015 (annex, r.1–r.75).
//!
//! * 52-card deck, ace high or low (r.4(b), r.30, r.31); two hole cards, best five of seven
//!   (r.1, r.25, r.26); 2–10 seats (r.4(a), r.5), at least 2 players (r.7).
//! * The button is drawn when the table (re)starts and moves one seat left after each hand
//!   (r.4(c), r.46, r.47, r.64); the first and second seats left of the button post the small
//!   and big blinds (r.48); big blind = the minimum bet, small blind fixed by the operator (r.22);
//!   every other bet at least the minimum (r.23); maximum by table regime (r.24); the operator
//!   may cap the raises per round (r.38).
//! * Round 1 from the seat left of the big blind (r.51); later rounds from the first active seat
//!   left of the button (r.54, r.56, r.58); no burn cards mentioned.
//! * A player who does not decide in time checks if he can, else folds (r.43–r.45); a failure of
//!   the operator's system voids the hand and returns the bets (r.72), a failure of the player's
//!   own equipment does not (r.73).
//! * Commission 1–5% of each pot payment (r.17(a), r.19), none when the hand ends before the
//!   flop without a voluntary bet (r.18), or 5–20% of each buy-in and rebuy (r.17(b)); ties split
//!   in equal parts to the smallest divisible unit (r.33, r.62).

use rules_core::GameId;

use crate::eval::{Deck, Ranking, Selection};
use crate::variant::{Forced, Streets, VariantRules};

/// Hold'em online's fixed rules.
pub const RULES: VariantRules = VariantRules {
    game: GameId::PokerHoldemOnline,
    deck: Deck::Standard52,
    ranking: Ranking::Standard,
    // r.26
    selection: Selection::BestOfAll,
    // r.25
    hole_cards: 2,
    // r.48
    forced: Forced::ButtonBlinds,
    // r.53-r.58
    streets: Streets::FlopTurnRiver,
    burns: false,
    // r.7
    min_players: 2,
    // r.4(a), r.5
    max_seats: 10,
    default_seats: 10,
    raise_min_is_table_min: false,
    // r.38: only as configured
    fixed_raise_cap: None,
    land: false,
};
