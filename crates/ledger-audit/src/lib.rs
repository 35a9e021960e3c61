pub mod live;
pub mod query;
pub mod replay;
pub mod review;
pub mod store;
#[cfg(test)]
mod testdata;
