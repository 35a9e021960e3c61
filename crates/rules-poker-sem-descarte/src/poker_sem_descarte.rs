//! # Póquer sem descarte (P217/2007 T.I C.III S.II; P461/2001 Anexo I)
//!
//! Game id `poker_sem_descarte`; `regulation` `"P217/2007"` (default) or `"P461/2001"`.
//!
//! ## Vocabulary of the round record
//!
//! **Bets** (`selection` and `attrs` unused):
//!
//! | `bet_type` | meaning | fields |
//! |---|---|---|
//! | `ante` | the initial bet ("aposta inicial"), one per box (r.16) | `seat`; `player` (r.5: one box per player) |
//! | `call` | the second bet ("vou"), twice the ante (r.17) | `on_bet` = the seat's ante |
//! | `jackpot` | the jackpot chip (r.3, r.16) | `seat`; `player`; `chips` (1 if given) |
//!
//! **Cards**: `seat:N` (no split hands), `dealer`, `burn`, `discard`; `face_up` as dealt
//! (players' cards face down; the bank's fifth card face up, r.16).
//!
//! **Decisions**: `pass` ("passo", r.17) with `seat`. The call is the `call` bet.
//!
//! **Faults** (`code`): `player_exposed_cards` (`seat`; r.17 forfeit), `card_exposed` (a card
//! appeared face up while dealing: r.19 misdeal).
//!
//! **Procedures**: `shuffle`, `cut`, `cards_spread`, `deck_change`, `look_at_cards` ("vejam o
//! vosso jogo"), `reveal_dealer`. **Roles**: `dealer`, `fiscal_banca`, `fiscal_chefe`.
//!
//! **Void** (`reason` free text, e.g. `misdeal`): the table declares the round annulled (r.19);
//! the engine also voids it on evidence of a dealing error.
//!
//! Other events: `no_more_bets` ("Jogo feito. Nada mais."), `bet_changed`, `bet_withdrawn`,
//! `pay`, `collect`, `jackpot_display`.
//!
//! ## Settings
//!
//! | name | type | default | meaning |
//! |---|---|---|---|
//! | `shuffler` | bool | `false` | homologated automatic shuffler: no cut, five cards at a time (r.16) |
//! | `prize_cap_cents` | int | none | the bank's maximum prizes per coup (r.15) |
//! | `high_card_suit_tiebreak` | bool | `true` | r.6(j) "três delas da mesma cor" read as three cards of one suit (reading 10.4); `false` reads colour literally, so equal high cards tie |
//!
//! Typed fields: `min_bet_cents`, `max_bet_cents` (required; the ante's limits), `seats`
//! (boxes, default 7), `decks` (1 if given), `jackpot` (paytable combination ids:
//! `royal_flush`, `straight_flush`, `four_of_a_kind`, `full_house`, `flush`, `straight`,
//! `three_of_a_kind`, `two_pair`, `pair`; empty under P461/2001 = its fixed table r.9).

use rules_core::{
    Adjudication, ConfigError, Configured, Engine, GameId, Options, Round, RoundError, TableConfig,
};

use crate::config::PsdConfig;
use crate::deal::Ctx;
use crate::state::PsdState;

/// The póquer sem descarte engine.
pub struct PokerSemDescarteEngine;

impl Engine for PokerSemDescarteEngine {
    type Config = PsdConfig;
    type State = PsdState;

    fn games() -> &'static [GameId] {
        &[GameId::PokerSemDescarte]
    }

    fn configure(table: &TableConfig) -> Result<Configured<PsdConfig>, ConfigError> {
        crate::config::configure(table)
    }

    fn adjudicate(
        config: &PsdConfig,
        state: &mut PsdState,
        round: &Round,
        options: &Options,
    ) -> Result<Adjudication, RoundError> {
        let mut ctx = Ctx::new(config, round);
        ctx.walk()?;
        crate::settle::settle(&mut ctx, options.explain)?;
        ctx.adj.reconcile(
            round.settlement.as_ref(),
            "PSD_WRONG_PAYOUT",
            config.c(crate::cite::WRONG_PAYOUT),
        );
        crate::settle::review_disputed(&mut ctx);
        // r.22: rounds without an ante per seat (informational).
        for (k, idle) in state.idle_rounds.iter_mut().enumerate() {
            let seat = k as u8 + 1;
            let bet = ctx.seats.iter().any(|s| s.seat == seat && s.ante.is_some());
            *idle = if bet { 0 } else { idle.saturating_add(1) };
        }
        Ok(ctx.adj)
    }
}
