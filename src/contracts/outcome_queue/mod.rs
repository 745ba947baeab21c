//! The outcome-queue contract: reference `RetryQueue`, state-view ops, spec vocabulary and rules.

mod claims;
pub mod contract;
pub mod explore;
pub mod mistakes;
pub mod queue;
pub mod rules;
pub mod scenario;
pub mod smells;
pub mod spec;
pub mod starter;
pub mod state_ops;

pub use contract::OutcomeQueueContract;
