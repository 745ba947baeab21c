//! The dlq-consumer contract: world, reference consumer, spec vocabulary and rules.

pub mod compact;
pub mod consumer;
pub mod contract;
pub mod crashes;
pub mod explore;
pub mod foresight;
pub mod given;
pub mod journal;
pub mod mistakes;
pub mod rules;
pub mod scenario;
pub mod smells;
pub mod spec;
pub mod starter;
pub mod trace;
pub mod world;

pub use contract::DlqConsumerContract;
