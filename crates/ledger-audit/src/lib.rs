pub mod convert;
pub mod replay;
pub mod store;
