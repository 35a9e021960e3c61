//! # casino-play: a simulated casino session played against a ledger
//!
//! What the demo, the benches and the end-to-end tests need on top of the agent library: keys
//! derived from a seed, every device's registration signed by the operator, every event numbered
//! and signed on every core, and concurrent agents per device group ([`session`]). It links the
//! simulator ([`casino_sim`], re-exported as [`sim`]); a reporting agent links only
//! `ledger-agent`, which knows nothing of either.

pub mod session;

pub use casino_sim as sim;

use ledger_core::proto::{self as v1, event_body::Payload};

/// The registration payload of a simulated device (signed by an operator).
pub fn registration(
    spec: &casino_sim::DeviceSpec,
    public_key: &ed25519_dalek::VerifyingKey,
) -> Payload {
    Payload::DeviceRegistered(v1::DeviceRegistered {
        device_id: spec.device_id.clone(),
        public_key: public_key.as_bytes().to_vec(),
        kind: match spec.kind {
            ledger_core::DeviceKind::Table => v1::DeviceKind::Table,
            ledger_core::DeviceKind::Machine => v1::DeviceKind::Machine,
        } as i32,
        casino_id: spec.casino_id.clone(),
        table_ids: spec.table_ids.clone(),
        machine_id: spec.machine_id.clone(),
        model_id: spec.model_id.clone(),
        bet_values_cents: spec.bet_values_cents.clone(),
        description: spec.description.clone(),
    })
}
