//! What the audit is fed: one input per ledger entry that concerns it.

use rules_core::{RoundEvent, Settlement, TableConfig};
use serde::{Deserialize, Serialize};

/// Where an input sits in the chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryMeta {
    /// Ledger index of the entry.
    pub index: u64,
    /// When the ledger received it (ms since the epoch, UTC): the audit's only clock.
    pub received_at_ms: i64,
    /// The device (or principal) that signed it.
    pub signer: String,
}

/// A ledger entry, as far as the table audit is concerned. The ledger's proto payloads are
/// converted into these in one place (the server's audit module).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuditInput {
    /// A table configuration, in force from this entry on.
    TableConfigured {
        table_id: String,
        config: TableConfig,
    },
    /// A table configured for a game id no engine (and no digest) knows.
    UnknownGame {
        table_id: String,
        casino_id: String,
        game: String,
    },
    RoundOpened {
        table_id: String,
        round_id: String,
    },
    /// Any event of a round (bet, card, dice, ball, decision, fault, ...).
    RoundEvent {
        table_id: String,
        round_id: String,
        event: RoundEvent,
    },
    RoundSettled {
        table_id: String,
        round_id: String,
        settlement: Settlement,
    },
    RoundVoided {
        table_id: String,
        round_id: String,
        reason: String,
    },
    /// A security finding recorded by the ledger itself at ingest (equivocation).
    Security {
        code: String,
        device_id: String,
        message: String,
        /// Ledger indexes of the evidence (the original event and the conflicting record).
        evidence: Vec<u64>,
    },
    /// An entry that concerns nobody here: only time passes.
    Tick,
}
