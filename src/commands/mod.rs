//! The subcommands: each takes parsed arguments and returns the process exit code.

pub mod dispatch;
pub mod matrix;
pub mod rules;
pub mod run;
pub mod smoke;

pub use dispatch::execute;
