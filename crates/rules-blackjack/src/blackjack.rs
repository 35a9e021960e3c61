//! # Blackjack/21 (P217/2007 T.I C.III S.I; P1364/2001; ROBJ/2015)
//!
//! Game ids: `blackjack` (land; `regulation` `"P217/2007"` default, or `"P1364/2001"`) and
//! `blackjack_online` (`regulation` `"ROBJ/2015"`, the default and only value).
//!
//! ## Vocabulary of the round record
//!
//! **Bets** (`bet` events; `selection` is unused and must be empty):
//!
//! | `bet_type` | meaning | fields |
//! |---|---|---|
//! | `main` | the titular's bet in the box of `seat` (one per seat) | `seat` required; `player` optional |
//! | `vacant` | a bet in a vacant box (r.16); several per seat | `seat`; `attrs.home_seat` = the bettor's own seat (r.16 tie-break) |
//! | `complementary` | a bet added to another player's box (r.15) | `on_bet` = the box's `main` or `vacant` bet; `seat` optional (must match) |
//! | `insurance` | insurance (r.33) | `on_bet` = the box bet insured (main, vacant or complementary); amount = the insurance |
//! | `jackpot` | the jackpot chip (r.45-r.48) | `seat`; `player`; `chips` (must be 1 if given); `on_bet` optional = the player's box bet |
//!
//! Who decides (r.15, r.16): at a seat with a `main` bet, its owner (the titular); at a vacant
//! seat, the owner of the largest `vacant` bet, on equal amounts the one with the lowest
//! `home_seat`, then the first placed. Every other box bet at the seat (complementary bets and
//! the other vacant bets) **follows**: it is settled on the seat's hands with the decider's
//! choices, except for its own split and double choices (r.28, r.30) and its own insurance
//! (r.15). Vacant-seat followers are treated like complementary bettors (reading of r.16).
//!
//! **Cards** (`card` events): `to` = `seat:N` (hand 1), `seat:N/H` (hand H, split hands numbered
//! in the order they are created: the first split of a seat creates hand 2, the next hand 3,
//! ...), `dealer`, `burn`, `discard`. `face_up` as dealt: player cards and the dealer's up-card
//! face up, the hole card face down (r.17). An exposed hole card is recorded as a face-up second
//! dealer card; an unrequested card as a card to the hand it was drawn for (see
//! [`crate::play`]).
//!
//! **Decisions** (`decision` events; `seat` required, `hand` defaults to 1):
//!
//! | `action` | meaning | `amount_cents` |
//! |---|---|---|
//! | `hit` | ask for a card (r.18) | — |
//! | `stand` | no more cards (r.18) | — |
//! | `double` | double and take one card (r.29-r.32) | the added stake (default: equal to the hand's bet) |
//! | `split` | split the hand's two cards; the second card moves to the new hand (r.26, r.27) | the new hand's stake (default: the original bet) |
//! | `surrender` | give up half the bet (r.36) | — |
//! | `even_money` | blackjack against an ace: paid 1 to 1 at once (r.34) | — |
//!
//! A decision without `bet_id` (or naming the deciding bet) is the decider's. A `double` or
//! `split` naming a follower's bet in `bet_id` records that follower's choice: he doubles his own
//! bet on that hand (r.30), or adds an equal stake on the new hand created by the titular's
//! latest split of that hand (r.28); without such a decision his bet stays single / on the first
//! hand. Other actions by followers are a `RoundError` (they follow, r.15): a surrender or an
//! even money taken by the decider applies to every bet on that hand, and the r.35 special
//! prize pays each bettor 3 x his own bet on the hand (reading 13.8).
//!
//! Every card dealt to a player after the initial deal must answer a request recorded before it
//! (`hit`, `double`, `split`); a card with none is an unrequested card (r.18). A hand's listed
//! cards stop at twelve (its total still counts every card). Incomplete land records (a seat
//! with a bet and no cards, a dealer hand missing while a result depends on it) are a
//! `RoundError`; online, a `malfunction` in such a round makes it void (ROBJ r.27).
//!
//! **Procedures** (`procedure` events, `name`): land: `shuffle` (new shoe: clears the count and
//! the warning card), `cut`, `warning_card` (the warning card came out), `last_round`,
//! `cards_spread`, `card_replaced`, `reveal_hole_card`, `table_open` / `table_close` (the session,
//! "partida"), `shuffler_load` (`value` = number of packets), `shuffler_unload`,
//! `cards_to_shuffler`, `cards_not_inserted` (r.60), `complaint` (`value` `upheld` or
//! `rejected`). Online: `shuffle`, `session_start`, `session_warning`, `session_ended` (`value`
//! `inactivity` = ended by the operator, `player`), each with `seat`.
//!
//! **Roles** (`role`): `dealer`, `fiscal_chefe` (present for the round: r.54, r.55),
//! `fiscal_banca`, `technician`.
//!
//! **Faults** (`fault`, `code`): land `shuffler_jam`, `damaged_card` (r.51, informational);
//! online `malfunction` (the operator's system, r.27) and `player_connection` (the player's
//! network or equipment, r.29).
//!
//! **Void** (`void`, `reason` free text): online only has void rounds (r.27, r.28); the engine
//! decides from the faults and the record whether the round is void. On land tables no rule
//! voids a round: it is settled as played.
//!
//! Other events: `no_more_bets` ("jogo feito, nada mais", the jackpot deadline, r.48),
//! `bet_changed`, `bet_withdrawn`, `pay`, `collect`, `jackpot_display`.
//!
//! ## Settings
//!
//! | name | type | default | tables | meaning |
//! |---|---|---|---|---|
//! | `shuffler` | text | `none` | land | `none`, `batch` or `continuous` automatic shuffler (r.51-r.61) |
//! | `split_unlike_tens` | bool | `true` | all | reading 13.5: K+Q count as a pair |
//! | `blackjack_pays` | list `[n, d]` | `[3, 2]` | online | the blackjack payout (not in the seed) |
//! | `online_blackjack_beats_21` | bool | `true` | online | blackjack beats a 21 of more cards (land r.20); `false` reads ROBJ r.25(h) literally (equal totals tie) |
//! | `dealer_hits_soft_17` | bool | `false` | online | the dealer draws on soft 17 |
//! | `single_player_table` | bool | `false` | online | r.35(a) (3 minutes) rather than r.35(b) (5 rounds) |
//!
//! Typed fields: `min_bet_cents`, `max_bet_cents` (required on land), `decks` (required),
//! `seats` (default 7), `jackpot` (land only; an empty paytable under P1364/2001 is the fixed
//! table of r.43; jackpot combination ids in [`crate::jackpot::Combo::id`]).
//!
//! ## Readings
//!
//! The digest's interpretation notes (section 13) are applied as written there; findings that
//! rest on them are marked `review`, and a disputed payout whose due result rests on one is
//! repeated as a `BJ_WRONG_PAYOUT` finding for review.

use rules_core::{
    Adjudication, ConfigError, Configured, Engine, GameId, Options, Round, RoundError, TableConfig,
};

use crate::config::BlackjackConfig;
use crate::play::Ctx;
use crate::state::BlackjackState;

/// The blackjack/21 engine, land and online.
pub struct BlackjackEngine;

impl Engine for BlackjackEngine {
    type Config = BlackjackConfig;
    type State = BlackjackState;

    fn games() -> &'static [GameId] {
        &[GameId::Blackjack, GameId::BlackjackOnline]
    }

    fn configure(table: &TableConfig) -> Result<Configured<BlackjackConfig>, ConfigError> {
        crate::config::configure(table)
    }

    fn adjudicate(
        config: &BlackjackConfig,
        state: &mut BlackjackState,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError> {
        let mut st = state.clone();
        let mut ctx = Ctx::new(config, round, options.explain);
        ctx.register_bets()?;
        ctx.play(&mut st)?;
        crate::settle::settle(&mut ctx)?;
        if options.explain {
            crate::explain::explain(&mut ctx);
        }
        ctx.adj.reconcile(
            round.settlement.as_ref(),
            "BJ_WRONG_PAYOUT",
            config.cite(crate::cite::WRONG_PAYOUT),
        );
        crate::settle::review_disputed(&mut ctx);
        *state = st;
        Ok(ctx.adj)
    }
}
