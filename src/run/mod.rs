//! The run: choosing specs, running each against one implementation in order on worker threads,
//! what it tells its reporters, known failures and reruns, the conformance matrix, what `watch`
//! reruns and grading a class.

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
