//! The outcome-queue contract: reference `RetryQueue`, state-view ops, spec vocabulary and rules.

pub(crate) mod checking;
mod claims;
pub(crate) mod contract;
pub(crate) mod departure;
pub(crate) mod explore;
pub(crate) mod loading;
pub(crate) mod mistakes;
pub(crate) mod queue;
pub(crate) mod rules;
pub(crate) mod scenario;
pub(crate) mod smells;
pub(crate) mod spec;
pub(crate) mod starter;
pub(crate) mod state_ops;

pub(crate) use contract::OutcomeQueueContract;

/// The contract's name, as specs write it (`contract: outcome-queue`), held here for every file
/// of the folder.
pub(crate) const NAME: &str = "outcome-queue";
