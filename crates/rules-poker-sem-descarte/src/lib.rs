//! # rules-poker-sem-descarte
//!
//! Rule engine for póquer sem descarte (banked five-card stud) with its jackpot: Portaria
//! 217/2007 T.I C.III S.II and Portaria 461/2001 Anexo I. Pure: no I/O, no floats,
//! deterministic. The record's vocabulary is documented in [`poker_sem_descarte`].
//!
//! * module [`eval`]: ranking, comparison and tie-breaks (r.1, r.6, r.7), bank qualification (r.18);
//! * module [`paytable`]: the second-bet multiples (r.6) and P461's jackpot table (r.9);
//! * module [`deal`]: bets, the deal pattern, decisions, faults, misdeals (r.5, r.13-r.17, r.19);
//! * module [`settle`]: what each bet is due (r.6, r.7, r.17, r.18) and the jackpot's movement;
//! * module [`jackpot`]: jackpot pricing and division (r.3, r.4, r.8-r.12);
//! * module [`sim`]: the simulator that plays the game by the rules ([`rules_core::Simulate`]);
//! * module [`config`], module [`state`], module [`cite`].

pub mod cite;
pub mod config;
pub mod deal;
pub mod eval;
pub mod jackpot;
pub mod paytable;
pub mod poker_sem_descarte;
pub mod settle;
pub mod sim;
pub mod state;

pub use config::PsdConfig;
pub use poker_sem_descarte::PokerSemDescarteEngine;
pub use state::PsdState;
