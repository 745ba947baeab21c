//! The dlq-consumer contract: world, reference consumer, spec vocabulary and rules.
//!
//! Beside the files every contract has (`contracts/mod.rs`): the world (`world.rs`: queue, DLQ,
//! clock, the scripted handler of `handler.rs`, injected crashes), which uses `journal.rs` (what
//! the world journals, a crash's timing too) and `queue/` (the messages it hands out: the
//! lesson's fake or a broker's); the reference consumer (`consumer.rs`), which reaches the world
//! through typed calls (`given.rs`) and switches on one classic mistake at a time
//! (`mistakes.rs`); `scenario/` (its expectations, explain's narration, what a step did against
//! what its rule wanted); `record.rs`, what a run records for `smells.rs`; `trace.rs`, the orders
//! a `trace` expectation pins; `foresight.rs`, the world's answers sent ahead to a shim; and
//! `explorer.rs`, which puts generated cases (`explore.rs`) and crash schedules (`crashes.rs`,
//! built on those cases) behind `Explorer`; `smoke.rs`, `dlqspec smoke`'s plan.

pub(crate) mod case_spec;
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
mod smoke;
pub(crate) mod spec;
pub(crate) mod starter;
pub(crate) mod trace;
pub mod world;

pub(crate) use contract::DlqConsumerContract;

/// The contract's name, as specs write it (`contract: dlq-consumer`), held here for every file
/// of the folder.
pub(crate) const NAME: &str = "dlq-consumer";
