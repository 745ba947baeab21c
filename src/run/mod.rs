//! The run: choosing specs, running each against one implementation, and grading a class.
//!
//! The run chooses specs and runs each against one implementation in order on worker threads,
//! and tells its reporters; it also keeps known failures and reruns, the conformance matrix,
//! what `watch` reruns, and grading a class.
//!
//! Selecting specs (`select.rs`: `--filter`, `--partition`), running them on worker threads in
//! order (`runner.rs`), what a run tells its reporters (`events.rs`: `Event`, the `Reporter`
//! trait, a spec's `SpecReport`, the `Summary`, which every reporter reads and the runner makes,
//! knowing nothing of the runner), the exit codes (`exit.rs`), known failures, reruns of
//! failures, the conformance matrix, what `watch` reruns. The run record (`record.rs`) is the
//! events of a run's JSON-lines report as serde types, which the JSON-lines reporter fills and
//! `grade` reads a submission's report back into, never by string keys. Grading a class is
//! `grading/`.
//!
//! The runner knows no contract by name (it asks the registry) and never prints: it emits
//! events, and the reporters above tell them. It may use `files/` and below.

pub mod events;
pub(crate) mod exit;
pub(crate) mod grading;
pub mod known_failures;
pub(crate) mod matrix;
pub(crate) mod parallel;
pub mod rerun;
pub mod runner;
pub mod select;
pub(crate) mod watch;
