//! The dlq-consumer contract: world, reference consumer, spec vocabulary and rules.

pub mod checking;
pub mod compact;
pub mod consumer;
pub mod contract;
pub mod crashes;
pub mod departure;
pub mod explore;
pub mod explorer;
pub mod foresight;
pub mod given;
pub mod handler;
pub mod journal;
pub mod loading;
pub mod mistakes;
pub mod queue;
pub mod record;
pub mod rules;
pub mod scenario;
pub mod smells;
pub mod spec;
pub mod starter;
pub mod trace;
pub mod world;

pub use contract::DlqConsumerContract;

/// The contract's name, as specs write it (`contract: dlq-consumer`), held here for every file
/// of the folder.
pub const NAME: &str = "dlq-consumer";
