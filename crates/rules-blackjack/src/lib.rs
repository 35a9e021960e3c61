//! # rules-blackjack
//!
//! Rule engine for blackjack/21 with its jackpot, complementary bets, automatic shuffler and
//! online rules: Portaria 217/2007 T.I C.III S.I, Portaria 1364/2001, and the 2015 online
//! blackjack regulation (ROBJ/2015). Pure: no I/O, no floats, deterministic.
//!
//! The vocabulary of the round record (bet types, actions, procedures, roles, faults, settings)
//! is documented in [`blackjack`]. One module per concern:
//!
//! * module [`hand`]: card values, hand totals, blackjack, the r.35 special prize (r.1, r.6, r.20, r.32);
//! * module [`dealer`]: the dealer's drawing rule (r.6(a), r.19, r.22);
//! * module [`play`]: bets, the deal order, requested cards, decisions and the dealer's faults
//!   (r.13-r.36);
//! * module [`settle`]: what each bet is due (r.20-r.25, r.33-r.36), with the rounding applied;
//! * module [`jackpot`]: the prémio acumulado (r.38-r.50; P1364/2001 r.43 fixed table);
//! * module [`shoe`]: the shoe, the warning card and the automatic shuffler (r.3, r.8-r.11, r.51-r.61);
//! * module [`online`]: online void rounds and sessions (ROBJ/2015 r.25-r.38);
//! * module [`sim`]: the simulator that plays the games by the rules ([`rules_core::Simulate`]);
//! * module [`state`]: what carries over between rounds;
//! * module [`config`]: the table configuration;
//! * module [`cite`]: the citations.
//!
//! (Module docs cite rules as the digests do; a bare `r.N` is P217/2007 T.I C.III S.I r.N.)

pub mod blackjack;
pub mod cite;
pub mod config;
pub mod dealer;
mod explain;
pub mod hand;
pub mod jackpot;
pub mod online;
pub mod play;
pub mod settle;
pub mod shoe;
pub mod sim;
mod small;
pub mod state;

pub use blackjack::BlackjackEngine;
pub use config::{BlackjackConfig, Shuffler};
pub use state::{BlackjackState, OnlineSeat, WarningCard};
