//! The contracts dlqspec checks, one folder each, listed in `registry`.
//!
//! A contract is a rule catalogue, a spec vocabulary, a reference implementation and a world. Here:
//! the `Contract` and `Scenario` traits (`contract.rs`); the in-process implementation and the
//! `Subject` it serves (`builtin.rs`); the registry (`registry.rs`), which lists the contracts
//! (those written in Rust, `BUILT_IN`, then the exercise folders registered at run time) and makes
//! the built-in reference from them; the recorder every scenario run keeps (`recorder.rs`) and its
//! timeline (`timeline.rs`); the smell catalogue (`smell.rs`) and the one finder of scenario smells
//! every contract tells its run to (`smells.rs`); the one finder of a failing run's departure from
//! the reference, each contract saying how its runs part (`departure.rs`); what `dlqspec smoke`
//! asks of a contract (`smoke.rs`); the keys every spec starts with, declared and checked once for
//! every vocabulary (`spec_file.rs`); the exercise machinery (`exercise/`, which serves every
//! exercise folder: lesson 001's among the bundled specs, the examples in `exercises/`); and the
//! contract written in Rust in its own folder: `dlq_consumer/` (lesson 000's consumer, with its
//! world, and its queue behind a trait: the lesson's fake or RabbitMQ's, docs/brokers.md).
//!
//! The files depend one way. `builtin.rs` knows no contract; `contract.rs` (the trait) uses it;
//! each contract uses both; `registry.rs` lists the contracts and makes the built-in reference from
//! them; `smell.rs` names every smell id, each contract's too, and `smells.rs` finds a scenario's
//! smells in the facts a contract gives it, knowing no contract; `departure.rs` uses `contract.rs`
//! and `builtin.rs` to play a scenario again on the reference and the catalogue's mistakes, knowing
//! no contract either. In a contract's folder, `spec.rs` is the vocabulary, `loading.rs` checks a
//! file and makes its scenario, `scenario.rs` plays it, `departure.rs` tells
//! `contracts/departure.rs` how a run parts from the reference's at a step (compared, worded, and
//! the rule deciding it) to find where a failing run departs, `smells.rs` tells what a run recorded
//! as facts for `contracts/smells.rs`, and `checking.rs` puts the scenario behind the `Scenario`
//! trait, calling the three. The folder's own `mod.rs` declares and re-exports its children, which
//! may use what it holds (the contract's `NAME`).
//!
//! Nothing outside this folder names a contract's folder (`tests/architecture.rs` holds it),
//! `exercise/` included: the registry re-exports what the command line needs to register an
//! exercise. Contracts never know the runner, the reporters or the command line. This layer may
//! use `generate/` and below.

pub mod builtin;
pub mod contract;
pub(crate) mod departure;
pub mod dlq_consumer;
pub mod exercise;
pub(crate) mod recorder;
pub(crate) mod registry;
pub(crate) mod smell;
pub(crate) mod smells;
pub mod smoke;
pub(crate) mod spec_file;
pub(crate) mod timeline;

pub use registry::{
    BUILT_IN, EXERCISE_FILE, Launcher, all, exercise_folder_of, find, register_exercise,
};
