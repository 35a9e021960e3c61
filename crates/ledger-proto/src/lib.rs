//! Generated tonic/prost code for `proto/casino_ledger/v1` (and nothing else).
//!
//! Without the default `grpc` feature only the prost messages are built; `ledger-core` uses them
//! that way, so the pure core never links tonic. With `json`, every message has serde
//! `Serialize`/`Deserialize` in the proto's canonical JSON mapping (lowerCamelCase names, the
//! original names accepted too; 64-bit integers as strings, numbers accepted; enums by name). Business rules and conversions to domain types
//! live in `ledger-core`, not here.

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/casino_ledger.v1.rs"));
    #[cfg(feature = "json")]
    include!(concat!(env!("OUT_DIR"), "/casino_ledger.v1.serde.rs"));
}

/// The encoded `FileDescriptorSet` of every casino_ledger.v1 file, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/casino_ledger_v1_descriptor.bin"));
