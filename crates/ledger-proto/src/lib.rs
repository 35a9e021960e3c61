//! Generated tonic/prost code for proto/casino_ledger/v1 (and nothing else).
