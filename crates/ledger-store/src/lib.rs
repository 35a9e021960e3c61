//! The sled-backed store of the hash chain, with durable group commit.
