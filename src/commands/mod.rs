//! The subcommands: each takes parsed arguments and returns the process exit code.

pub mod bless;
pub mod cli;
pub mod completions;
pub mod dispatch;
pub mod explain;
pub mod explore;
pub mod grade;
pub mod interactive;
pub mod lint;
pub mod list;
pub mod man;
pub mod matrix;
pub mod messages;
pub mod new;
pub mod rules;
pub mod run;
pub mod sandbox_warnings;
pub mod schema;
pub mod smoke;
pub mod strength;
pub mod watch;
pub mod world;

pub use dispatch::execute;
