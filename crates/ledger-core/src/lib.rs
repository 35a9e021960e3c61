//! # ledger-core: the ledger's pure core
//!
//! The event model in domain types ([`event`]), the signing domains and signature checks
//! ([`signing`]), the chain's hash functions ([`hashing`]), chain entries, ledger records and
//! checkpoints ([`record`]), the Merkle tree over the entries and its proofs ([`merkle`]), C2SP
//! signed notes and checkpoint texts ([`note`]), signed receipts ([`receipt`]), who may sign what ([`signers`]), and the streaming offline verifier
//! ([`verify`]).
//!
//! No I/O: no files, no network, no clock (callers pass times in), no randomness. Proto messages
//! come in from `ledger-proto` (messages only, no gRPC) and are turned into domain types here
//! and nowhere else.

pub mod event;
pub mod hashing;
pub mod merkle;
pub mod note;
pub mod receipt;
pub mod record;
pub mod review;
pub mod signers;
pub mod signing;
pub mod stored;
pub mod tiles;
pub mod verify;

pub use event::{BodyError, DeviceKind, DeviceRegistration, Event, Payload, TimePolicy};
pub use hashing::{GENESIS_PREV_HASH, Hash32, entry_hash, hex32, record_hash};
pub use record::{CheckpointInfo, ENTRY_FORMAT, RecordKind, make_entry};
pub use signers::{Signer, SignerRole};
pub use signing::{
    CHECKPOINT_DOMAIN, EVENT_DOMAIN, LEDGER_RECORD_DOMAIN, SignatureCheck, verify_many,
};
pub use stored::{EntryFields, StoredEntry};
pub use verify::{ChainVerifier, EntrySignature, PendingSignature, Summary, VerifyError};

/// Re-exported so users of this crate use the same proto and key types.
pub use ed25519_dalek;
pub use ledger_proto::v1 as proto;
