//! The subcommands: each takes parsed arguments and returns the process exit code.

pub mod completions;
pub mod dispatch;
pub mod man;
pub mod matrix;
pub mod rules;
pub mod run;
pub mod smoke;

pub use dispatch::execute;
