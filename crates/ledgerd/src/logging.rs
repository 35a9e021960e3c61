//! The log on stderr, for ledgerd and ledgerctl: plain text, coloured only when stderr is a
//! terminal (never into a file, journald or a container's log) and `NO_COLOR` is unset, or one
//! JSON object per line (`[log] format = "json"`, tracing-subscriber's `json`).

use std::io::IsTerminal;

use serde::{Deserialize, Serialize};

/// `log.format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One line of text per event, coloured on a terminal only.
    #[default]
    Plain,
    /// One JSON object per event: `timestamp`, `level`, `fields` (with `message`), `target`.
    Json,
}

/// Whether to colour: stderr is a terminal and `NO_COLOR` (no-color.org) is unset or empty.
pub fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Install the global subscriber: `filter`, to stderr, in `format`.
pub fn init(filter: tracing_subscriber::EnvFilter, format: LogFormat) {
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Plain => b.with_ansi(colour()).init(),
        LogFormat::Json => b.json().init(),
    }
}
