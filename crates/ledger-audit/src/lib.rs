pub mod live;
pub mod query;
pub mod replay;
pub mod store;
