//! The shared round-script language of the engine tests (rules-core's `testkit`).
#![allow(unused_imports)]

pub use rules_core::testkit::*;
