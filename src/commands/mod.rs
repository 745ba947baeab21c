//! The subcommands: each takes parsed arguments and returns the process exit code.
//!
//! The top layer: it parses, calls the layers below, tells what they return and picks the exit
//! code. `cli.rs` holds the clap types (the one place a flag is defined), `dispatch.rs` routes a
//! parsed command line to its subcommand, one file each, and `messages.rs` is what every command
//! tells the same way (usage errors, failures, warnings, an implementation that cannot run,
//! colour); `interactive.rs` asks questions on a terminal. The files depend one way: `dispatch.rs`
//! calls each command, and the commands tell their errors through `messages.rs`.

pub(crate) mod bless;
pub mod cli;
pub(crate) mod completions;
pub(crate) mod dispatch;
pub mod exercises;
pub(crate) mod explain;
pub(crate) mod explore;
pub(crate) mod grade;
pub(crate) mod interactive;
pub(crate) mod lint;
pub(crate) mod list;
pub(crate) mod man;
pub(crate) mod matrix;
pub(crate) mod messages;
pub(crate) mod new;
pub(crate) mod rules;
pub(crate) mod run;
pub(crate) mod sandbox_warnings;
pub(crate) mod schema;
pub(crate) mod smoke;
pub(crate) mod strength;
pub(crate) mod types;
pub(crate) mod watch;
pub(crate) mod world;

pub use dispatch::execute;
