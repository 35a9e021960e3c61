//! The compliance console (issue 41): a web application for inspectors and compliance teams that
//! reads ledgerd through its gRPC API with each user's own client certificate. See
//! ARCHITECTURE.md, "The compliance console".

pub mod auth;
pub mod chart;
pub mod config;
pub mod export;
pub mod ledger;
pub mod server;
pub mod web;
