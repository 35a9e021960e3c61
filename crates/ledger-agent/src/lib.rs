//! # ledger-agent: the client side of the ledger
//!
//! What a reporting agent (a table system, a slot machine's agent, an operator's tool, the demo)
//! needs: key files ([`keys`]), a per-device signer that numbers events and signs them
//! ([`signer`]), a gRPC client that streams envelopes and resends everything not yet receipted
//! after a disconnect ([`client`]), and a simulated casino session for the demo ([`sim`]).
//!
//! The signer only ever signs bytes it encoded itself and ships those exact bytes, so what the
//! ledger stores is exactly what was signed.

pub mod client;
pub mod keys;
pub mod signer;
pub mod sim;

pub use client::{AgentError, ClientOptions, connect, submit_all};
pub use signer::DeviceSigner;
