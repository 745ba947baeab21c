//! The run: choosing specs, running each against one implementation in order on worker threads,
//! known failures and reruns, the conformance matrix, what `watch` reruns and a class's shares.

pub mod grade_record;
pub mod grading;
pub mod known_failures;
pub mod matrix;
pub mod parallel;
pub mod record;
pub mod rerun;
pub mod runner;
pub mod select;
pub mod watch;
