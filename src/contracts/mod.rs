//! The contracts dlqspec checks, one folder each, listed in `registry`.

pub mod builtin;
pub mod contract;
pub mod dlq_consumer;
pub mod outcome_queue;
pub mod recorder;
pub mod registry;
pub mod smell;
pub mod timeline;

pub use registry::{CONTRACTS, find};
