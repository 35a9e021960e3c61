//! # ledger-agent: the client side of the ledger
//!
//! What a reporting agent (a table system, a slot machine's agent, an operator's tool, the demo)
//! needs: key files ([`keys`]), a per-device signer that numbers events and signs them
//! ([`signer`]), a gRPC client that streams envelopes and resends everything not yet receipted
//! after a disconnect ([`client`]), and the way to play a simulated casino session
//! ([`casino_sim`], re-exported as [`sim`]) against a ledger: keys, registrations, signing on
//! every core, concurrent agents per device group ([`session`]).
//!
//! The signer only ever signs bytes it encoded itself and ships those exact bytes, so what the
//! ledger stores is exactly what was signed.

pub mod client;
pub mod keys;
pub mod session;
pub mod signer;

/// The simulated casino (`casino-sim`): what the demo, the end-to-end tests and the benches play.
pub use casino_sim as sim;

pub use client::{AgentError, ClientOptions, connect, submit_all, submit_shared};
pub use signer::DeviceSigner;
