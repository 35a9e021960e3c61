//! # rules-poker: non-banked poker
//!
//! Rule engines for omaha and hold'em (Portaria 217/2007, annex, Título II, Secção II "Póquer não
//! bancado": general rules SS.I r.1–r.71, omaha SS.II r.72–r.91, hold'em SS.III r.92–r.94),
//! póquer sintético (SS.IV r.95–r.112, and the older Portaria 461/2001 part II) and hold'em
//! online (Regulamento 806/2015). Pure: no I/O, no floats, no hash-map iteration in outputs.
//!
//! Modules: [`eval`] (hand evaluator for every variant), [`holdem`], [`omaha`], [`sintetico`],
//! [`holdem_online`] (each game's fixed rules), [`config`] (table configuration and settings),
//! [`state`] (what carries over between hands), `hand` (the record checked event by event),
//! [`pots`] (side pots, splits, odd chips, commission), [`codes`] (violation codes), [`sim`]
//! (playing the games by the rules: [`rules_core::Simulate`]).
//!
//! ## How a hand is recorded
//!
//! Players bet against each other, not against the house. One [`rules_core::Round`] is one hand
//! ("jogada"/"golpe").
//!
//! **Bets.** Each seat dealt into the hand has exactly one `bet` event, `bet_type: "seat"`, with
//! its `seat` (1 to the table's seats) and `amount_cents` = the seat's **cave** (chips in front
//! of the player) when the hand starts (positive, at most `MAX_AMOUNT_CENTS`; `player` optional).
//! Its due net ([`rules_core::BetOutcome::due_net_cents`]) is the seat's result for the hand
//! after commission: chips received from the pots (and any uncalled bet returned) minus every
//! chip it put in (blinds, antes, dead blinds, bets). `stake_cents` is what it put in. Outcome
//! `won` / `lost` / `push` by the sign of the net, `void` for a null hand. Σ nets + commission = 0
//! (except a P461 pó hand, whose chips carry to the next hand).
//!
//! **Role** (`role` event): `button` with `seat`, required: the P217 mão holder (who posts the
//! small blind, r.29, r.30, r.81) or the online button (Reg806 r.47, r.48); `dealer`
//! (informational).
//!
//! **Cards** (`card` events, in the order dealt): `seat:N` a hole card (`face_up: true` = turned
//! while dealing: at omaha/hold'em one such card is replaced at the end and becomes the next
//! burn card, r.70(c) — record the replacement as another `seat:N` card and the burn either not
//! at all or as a `burn` of the same card; two make the hand null, r.69(g); at sintético any
//! makes it null, r.109(c)(d); ignored online); `board` a common card; `burn` a burned card;
//! `discard` a common card exposed early and withdrawn to the stub (r.70(d)–(f); P461 r.63–r.65:
//! it may be dealt again; raises by who had not bet are then flagged, r.70(h)).
//!
//! **Decisions** (`decision` events with `seat`; `amount_cents` = chips put in by this decision,
//! not a "raise to" total):
//!
//! | action | games | meaning |
//! |---|---|---|
//! | `post_sb` | omaha, hold'em, online | small blind (r.81, r.82; Reg806 r.22, r.48) |
//! | `post_bb` | omaha, hold'em, online | big blind (r.81, r.83; Reg806 r.22, r.48) |
//! | `post_forced_bb` | omaha, hold'em | the big blind owed after five hands without a bet, live (r.89) |
//! | `post_dead` | omaha, hold'em | missed blinds paid on return, dead money (r.90) |
//! | `post_ante` | sintético | the ante = minimum bet (r.102; P461 r.38) |
//! | `check` | all | no chips (r.39(b); Reg806 r.34(b)) |
//! | `call` | all | match the bet; `amount_cents` optional (the amount due) |
//! | `bet` / `raise` | all | chips beyond the bet to match (either label: the effect decides) |
//! | `all_in` | all | the whole cave (`amount_cents` optional, must equal the cave) |
//! | `fold` | all | out of the hand, forfeits what it put in (r.39(a); Reg806 r.35) |
//! | `stardilho` | sintético | put up S before the first common card (r.106(a)) |
//! | `restardilho` | sintético | another player doubles the stardilho, 2S (r.106(b)) |
//! | `timeout` | online | time ran out: check if possible, else fold (Reg806 r.45) |
//! | `disconnect` | online | the player's own connection dropped at his turn: as `timeout` (r.73, digest N18) |
//!
//! **Procedures** (`procedure` events; `seat`, `amount_cents` as noted): `shuffle`, `cut`
//! (informational); `absent` (seat: seated but away this hand; accrues missed blinds, r.90);
//! `button_draw` (the button was drawn, table (re)start, Reg806 r.46: rotation not checked);
//! `buy_in`, `rebuy`, `top_up` (seat, amount: chips bought; during the hand a violation, r.14(e),
//! Reg806 r.11(b), and added to the cave); `withdraw` (seat, amount: chips taken off the cave
//! while seated, Reg806 r.11(a), P461 r.61); `leave` (seat: the player leaves the table; his
//! carried-over counters are dropped); `session_fee` (seat, amount: the P217 r.7(b) fee);
//! `entry_fee` (seat, amount: the Reg806 r.17(b) fee on the buy-ins/rebuys recorded in the
//! round).
//!
//! **Faults** (`fault` events, by `code`): `misdeal` (land: the hand is null, r.69, r.109, P461
//! r.62); `card_exposed` (land, informational: the `face_up` flag is the evidence);
//! `board_exposed_early` (land: r.70(d)–(h), P461 r.65); `system_failure` (online: null hand,
//! bets returned, Reg806 r.72); `player_disconnect` (online: the hand stands, r.73).
//!
//! **Void** (`void` events, by `reason`): `misdeal` (land), `system_failure` (online),
//! `invalid_deck`: null hand; `card_exposed` (null at sintético, r.109(c)(d); at omaha/hold'em
//! the hand stands, r.70(c): `POKER_WRONGLY_VOIDED`); `player_disconnect` (online: stands,
//! r.73: `POKER_WRONGLY_VOIDED`). Other reasons, event types, actions, roles, procedures or
//! fault codes are a [`rules_core::RoundError`].
//!
//! Null hands ([`rules_core::Adjudication::void`] reasons): `misdeal`, `system_failure`,
//! `invalid_deck` (a card outside the deck or dealt twice), `card_exposed_while_dealing`,
//! `several_cards_exposed`, `wrong_card_count` (sintético), `cards_out_of_order` (hole cards
//! not dealt in the regulation order: from the small blind clockwise, one card per pass, r.35,
//! r.77, r.69(a); sintético: in rotation, r.109(a), digest N15). Every net is 0, no commission
//! (digest N19).
//!
//! **Settlement**: `results` one [`rules_core::ReportedNet`] per seat bet (the net above);
//! `house_cents` the commission taken from the pots (per-hand mode; 0 otherwise). Fees charged
//! from caves are recorded by their procedures and checked there; they appear in
//! [`rules_core::Adjudication::house`] as `session_fee` / `entry_fee`, the pot commission as
//! `commission`. A wrong net is a discrepancy `POKER_PAYOUT_MISMATCH`; a wrong house take
//! `POKER_COMMISSION_WRONG`; chips moved in a null hand `POKER_VOID_HAND_SETTLED`; a zero/void
//! report for a hand that stands `POKER_WRONGLY_VOIDED` (then no payout discrepancies, N25).
//!
//! Settings, commission modes and regulations: see [`config`]. State: see [`state`]. Violation
//! codes and severities: see [`codes`].
//!
//! ## Money rules
//!
//! * Side pots are layered (digest section 5, N8); ties split per r.66/r.67 (units of the table
//!   minimum at land tables, the extra units and the remainder to the winners from the mão
//!   clockwise; online one-cent units from the button clockwise, Reg806 r.62); sintético ties
//!   from full house to one pair per r.104 (stakes kept, losing bets divided equally).
//! * Commission per payment = `floor(payment × bp / 10000)` (never above the rate); with a P217
//!   cap the hand total is capped and reduced pro rata (N7); no commission online on a hand won
//!   before the flop without a voluntary bet (Reg806 r.18, N16); at land tables the commission on
//!   an uncontested pot is not audited (N6: a reported take from 0 to the rate on all chips
//!   wagered is accepted).
//! * Findings whose due result rests on a reading of the digest (N6–N13, P461 pó) carry
//!   `confidence: review`.

pub mod adjudicate;
pub mod codes;
pub mod config;
pub mod eval;
pub mod hand;
pub mod holdem;
pub mod holdem_online;
pub mod omaha;
pub mod pots;
pub mod sim;
pub mod sintetico;
pub mod state;
pub mod variant;

pub use config::PokerConfig;
pub use eval::{Category, HandValue, Ranking};
pub use state::PokerState;

use rules_core::{
    Adjudication, ConfigError, Configured, Engine, GameId, Options, Round, RoundError, TableConfig,
};

/// The engine for poker_holdem, poker_omaha, poker_sintetico and poker_holdem_online.
pub struct PokerEngine;

/// The games [`PokerEngine`] adjudicates.
pub const GAMES: [GameId; 4] = [
    GameId::PokerHoldem,
    GameId::PokerOmaha,
    GameId::PokerSintetico,
    GameId::PokerHoldemOnline,
];

impl Engine for PokerEngine {
    type Config = PokerConfig;
    type State = PokerState;

    fn games() -> &'static [GameId] {
        &GAMES
    }

    fn configure(table: &TableConfig) -> Result<Configured<PokerConfig>, ConfigError> {
        config::configure(table)
    }

    fn adjudicate(
        config: &PokerConfig,
        state: &mut PokerState,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError> {
        adjudicate::adjudicate(config, state, round, options)
    }
}
