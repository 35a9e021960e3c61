//! Ledger event model, signing domain, chain hashing and verification. Pure: no I/O.
