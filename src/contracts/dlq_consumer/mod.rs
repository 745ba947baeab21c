//! The dlq-consumer contract: world, reference consumer, spec vocabulary and rules.

pub mod consumer;
pub mod contract;
pub mod given;
pub mod rules;
pub mod scenario;
pub mod spec;
pub mod world;

pub use contract::DlqConsumerContract;
