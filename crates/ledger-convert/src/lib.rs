//! # ledger-convert: proto payloads ⇄ domain types
//!
//! The ledger stores what devices signed, in proto form (`proto/casino_ledger/v1`). The rule
//! engines, the audit and the jackpot accounts work on domain types (`rules-core`, `audit`,
//! `jackpot`). This crate is the one place where one becomes the other:
//!
//! * [`from_proto`]: a chain entry → an audit input or a jackpot event (used by the audit);
//! * [`to_proto`]: a round's events, a table configuration, a jackpot event → the payloads a
//!   device signs (used by the reporting agents and the simulator).
//!
//! A round trip is the identity on everything a device can say (tested).

pub mod from_proto;
pub mod to_proto;

pub use from_proto::{ConvertError, Routed, route, route_parts, route_parts_timed, table_config};
