pub mod replay;
pub mod store;
