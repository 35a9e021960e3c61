//! Slot-machine meters, return to player, jackpot and superjackpot captive values and their
//! force-majeure transfer (P217/2007 T.III). Pure accounting: no I/O.
#![deny(
    clippy::arithmetic_side_effects,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::unreachable,
    clippy::todo
)]

pub mod amount;
pub mod book;
pub mod error;
pub mod event;
pub mod finding;
pub mod meters;
pub mod pools;
pub mod report;
pub mod state;
pub mod transfer;

pub use amount::{E4, E4_PER_CENT, TOLERANCE_E4};
pub use book::{Book, MIN_RETURN_BP};
pub use error::{ApplyError, QueryError};
pub use event::*;
pub use finding::{Amounts, CHECKS, Check, Finding, check_by_code, codes};
pub use report::*;
pub use state::*;
pub use transfer::{Candidate, PoolCandidates, TransferRejection};
