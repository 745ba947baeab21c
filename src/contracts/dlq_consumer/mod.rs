//! The dlq-consumer contract: world, reference consumer, spec vocabulary and rules.

pub(crate) mod checking;
pub(crate) mod compact;
pub(crate) mod consumer;
pub(crate) mod contract;
pub(crate) mod crashes;
pub(crate) mod departure;
pub(crate) mod explore;
pub(crate) mod explorer;
pub(crate) mod foresight;
pub(crate) mod given;
pub(crate) mod handler;
pub(crate) mod journal;
pub(crate) mod loading;
pub(crate) mod mistakes;
pub(crate) mod queue;
pub(crate) mod record;
pub(crate) mod rules;
pub(crate) mod scenario;
pub(crate) mod smells;
pub(crate) mod spec;
pub(crate) mod starter;
pub(crate) mod trace;
pub mod world;

pub(crate) use contract::DlqConsumerContract;

/// The contract's name, as specs write it (`contract: dlq-consumer`), held here for every file
/// of the folder.
pub(crate) const NAME: &str = "dlq-consumer";
