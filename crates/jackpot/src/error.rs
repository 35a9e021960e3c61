//! Errors: an event the book cannot make sense of, or a query about something it does not know.
//!
//! An [`ApplyError`] means the book **changed nothing**: the event is malformed (a negative
//! amount, a meter above its own rollover), refers to something the book does not know (a pool
//! or machine never configured), or is out of order. A breach of the rules is never an error: it
//! is a [`crate::Finding`].

/// Why [`crate::Book::apply`] refused an event. The book is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Ledger indexes must strictly increase from one applied event to the next.
    #[error("ledger index {index} is not after the last applied index {last}")]
    OutOfOrder { index: u64, last: u64 },
    /// The event names a pool, machine, model or authorisation the book does not know.
    #[error("`{field}`: unknown {what} `{id}`")]
    Unknown {
        field: String,
        what: &'static str,
        id: String,
    },
    /// A field has a value the book cannot accept.
    #[error("`{field}`: {reason}")]
    Invalid { field: String, reason: String },
    /// An internal sum would overflow (not reachable with amounts below 10^20 cents).
    #[error("arithmetic overflow in {what}")]
    Overflow { what: String },
}

impl ApplyError {
    pub(crate) fn unknown(field: impl Into<String>, what: &'static str, id: &str) -> ApplyError {
        ApplyError::Unknown {
            field: field.into(),
            what,
            id: id.to_string(),
        }
    }

    pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> ApplyError {
        ApplyError::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn overflow(what: &str) -> ApplyError {
        ApplyError::Overflow {
            what: what.to_string(),
        }
    }
}

/// Why a query could not be answered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("unknown {what} `{id}`")]
    Unknown { what: &'static str, id: String },
    /// A history position past the pool's last line.
    #[error("position {before} is past the pool's {lines} line(s) of history")]
    BeyondHistory { before: u64, lines: u64 },
    /// The book hands its detail out ([`crate::Book::hand_out_detail`]): query the store it was
    /// handed to.
    #[error("the book hands its per-event detail out to a store; query that store")]
    NotHeld,
    /// The store holding the detail could not answer.
    #[error("the detail store: {0}")]
    Source(String),
    /// A record of the store holding the detail does not decode.
    #[error("the detail store: a stored record does not decode: {0}")]
    SourceCorrupt(String),
}

impl QueryError {
    pub fn unknown(what: &'static str, id: &str) -> QueryError {
        QueryError::Unknown {
            what,
            id: id.to_string(),
        }
    }
}
