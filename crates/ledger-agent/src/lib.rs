//! # ledger-agent: the client side of the ledger
//!
//! What a reporting agent (a table system, a slot machine's agent, an operator's tool) links: key
//! files ([`keys`]), a per-device signer that numbers events and signs them ([`signer`]), and a
//! gRPC client that streams envelopes and resends everything not yet receipted after a
//! disconnect ([`client`]); with the `outbox` feature, the crash-safe outbox that numbers, signs
//! and keeps events before they are sent ([`outbox`]). Nothing else: the simulated casino and the rule engines are not
//! dependencies (the demo's session player is `casino-play`).
//!
//! The signer only ever signs bytes it encoded itself and ships those exact bytes, so what the
//! ledger stores is exactly what was signed.

pub mod client;
pub mod keys;
#[cfg(feature = "outbox")]
pub mod outbox;
pub mod signer;
pub mod tls;

pub use client::{
    AgentError, ClientOptions, Envelopes, connect, endpoint, submit_all, submit_shared,
    submit_shared_with,
};
pub use signer::DeviceSigner;
