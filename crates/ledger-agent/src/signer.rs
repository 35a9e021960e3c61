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

#[cfg(test)]
mod tests {
    use ed25519_dalek::Signature;
    use ledger_core::signing::verify_strict;

    use super::*;

    fn game(n: u64) -> Payload {
        Payload::GamePlayed(v1::GamePlayed {
            machine_id: "M1".into(),
            game_number: n,
            wager_cents: 100,
            win_cents: 40,
        })
    }

    #[test]
    fn events_are_numbered_in_turn_and_signed_over_exactly_their_encoded_body() {
        let key = SigningKey::from_bytes(&[5; 32]);
        let mut signer = DeviceSigner::new("slot-7", key.clone(), 41);
        assert_eq!(signer.key().to_bytes(), key.to_bytes());
        let a = signer.sign(1_700, game(1));
        let b = signer.sign(1_701, game(2));
        assert_eq!(signer.next_sequence, 43);
        for (env, sequence, at, n) in [(a, 41, 1_700, 1), (b, 42, 1_701, 2)] {
            let body = v1::EventBody::decode(env.body.as_slice()).unwrap();
            let want = v1::EventBody {
                device_id: "slot-7".into(),
                sequence,
                occurred_at_ms: at,
                payload: Some(game(n)),
            };
            assert_eq!(body, want);
            assert_eq!(
                env.body,
                want.encode_to_vec(),
                "the bytes shipped are the body's"
            );
            let sig = Signature::from_slice(&env.signature).unwrap();
            assert!(verify_strict(
                &key.verifying_key(),
                EVENT_DOMAIN,
                &env.body,
                &sig
            ));
            let other = SigningKey::from_bytes(&[6; 32]).verifying_key();
            assert!(!verify_strict(&other, EVENT_DOMAIN, &env.body, &sig));
        }
    }

    #[test]
    fn a_new_device_starts_at_sequence_one() {
        let mut signer = DeviceSigner::new("slot-7", SigningKey::from_bytes(&[5; 32]), 0);
        assert_eq!(signer.next_sequence, 1);
        let env = signer.sign(0, game(1));
        assert_eq!(
            v1::EventBody::decode(env.body.as_slice()).unwrap().sequence,
            1
        );
    }

    #[test]
    fn sign_body_signs_the_body_it_is_given() {
        let key = SigningKey::from_bytes(&[9; 32]);
        let body = v1::EventBody {
            device_id: "t".into(),
            sequence: 7,
            occurred_at_ms: 3,
            payload: Some(game(3)),
        };
        let env = sign_body(&key, &body);
        assert_eq!(env.body, body.encode_to_vec());
        let sig = Signature::from_slice(&env.signature).unwrap();
        assert!(verify_strict(
            &key.verifying_key(),
            EVENT_DOMAIN,
            &env.body,
            &sig
        ));
    }
}
