//! The contracts dlqspec checks, one folder each, listed in `registry`.

pub mod builtin;
pub mod contract;
pub mod dlq_consumer;
pub(crate) mod outcome_queue;
pub(crate) mod recorder;
pub(crate) mod registry;
pub(crate) mod smell;
pub(crate) mod timeline;

pub use registry::{CONTRACTS, find};
