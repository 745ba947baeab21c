//! The contracts dlqspec checks, one folder each, listed in `registry`.

pub mod dlq_consumer;
pub mod outcome_queue;
pub mod registry;

pub use registry::{CONTRACTS, find};
