//! The outcome-queue contract: reference `RetryQueue`, state-view ops, spec vocabulary and rules.

pub mod checking;
mod claims;
pub mod contract;
pub mod departure;
pub mod explore;
pub mod loading;
pub mod mistakes;
pub mod queue;
pub mod rules;
pub mod scenario;
pub mod smells;
pub mod spec;
pub mod starter;
pub mod state_ops;

pub use contract::OutcomeQueueContract;

/// The contract's name, as specs write it (`contract: outcome-queue`), held here for every file
/// of the folder.
pub const NAME: &str = "outcome-queue";
