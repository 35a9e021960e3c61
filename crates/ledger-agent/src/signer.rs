//! Numbering and signing a device's events.

use ed25519_dalek::SigningKey;
use ledger_core::proto::{self as v1, event_body::Payload};
use ledger_core::signing::{EVENT_DOMAIN, sign};
use prost::Message;

/// Signs one device's events with contiguous sequence numbers.
pub struct DeviceSigner {
    pub device_id: String,
    key: SigningKey,
    /// The sequence number the next event gets.
    pub next_sequence: u64,
}

impl DeviceSigner {
    /// A signer whose next event is sequence `next_sequence` (1 for a new device; the ledger's
    /// `last_sequence + 1` after a restart).
    pub fn new(device_id: &str, key: SigningKey, next_sequence: u64) -> DeviceSigner {
        DeviceSigner {
            device_id: device_id.to_string(),
            key,
            next_sequence: next_sequence.max(1),
        }
    }

    pub fn key(&self) -> &SigningKey {
        &self.key
    }

    /// Encode, number and sign one event.
    pub fn sign(&mut self, occurred_at_ms: i64, payload: Payload) -> v1::Envelope {
        let seq = self.next_sequence;
        self.next_sequence += 1;
        sign_body(
            &self.key,
            &v1::EventBody {
                device_id: self.device_id.clone(),
                sequence: seq,
                occurred_at_ms,
                payload: Some(payload),
            },
        )
    }
}

/// Encode a body and sign exactly those bytes.
pub fn sign_body(key: &SigningKey, body: &v1::EventBody) -> v1::Envelope {
    let body = body.encode_to_vec();
    let signature = sign(key, EVENT_DOMAIN, &body).to_bytes().to_vec();
    v1::Envelope { body, signature }
}
