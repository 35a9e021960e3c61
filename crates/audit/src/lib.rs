//! # audit: the ledger's table events, replayed against the rule engines
//!
//! The audit core is a deterministic state machine. It is fed the ledger's entries in chain order
//! (as [`AuditInput`]s with their [`EntryMeta`]) and:
//!
//! * keeps the table configuration in force per table (a round uses the configuration in force
//!   when it opened);
//! * assembles each round from its events, which may interleave with other tables' rounds and
//!   come from several devices of the same table;
//! * when a round is settled or voided, runs the game's rule engine on it (through the
//!   [`Adjudicator`] trait, implemented by the `rules` crate) and turns every violation and every
//!   due/reported discrepancy into a [`Finding`] with the ledger indexes of its evidence;
//! * adds its own lifecycle findings: a round never settled within the configured time, events
//!   outside a round or after its settlement, a table without configuration or without engine, a
//!   round the engine cannot read; and carries the ledger's security findings (equivocation) so
//!   that one query shows everything;
//! * keeps a running digest over the canonical bytes of every finding, so a live run and a full
//!   replay from genesis can be compared with one hash.
//!
//! The state can be snapshotted ([`Auditor::snapshot`]) and restored, which makes replay
//! resumable: the caller persists a snapshot together with the findings of the entries it covers.
//!
//! What this crate must never know about: protobuf, gRPC, sled, files, the wall clock. Time is the
//! ledger's receive time of the entries.

pub mod auditor;
pub mod clock;
pub mod engines;
pub mod finding;
pub mod gaming_day;
pub mod input;
pub mod report;

pub use auditor::{
    Adjudicator, AuditSettings, Auditor, AuditorSnapshot, JackpotValues, NoJackpots, Output,
};
pub use engines::RulesEngines;
pub use finding::{Finding, FindingsDigest, MAX_CODE_LEN, codes, is_well_formed_code};
pub use gaming_day::{Calendar, DayRule, DayRuleConfig, DayRuleError};
pub use input::{AuditInput, EntryMeta};
pub use report::{Period, ReportBuilder, ReportRow, RoundSummary, aggregate, hold_bp};

#[cfg(test)]
mod tests;
