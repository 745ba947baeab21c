//! dlqspec: the rules of dead-letter-queue handling as executable, checkable contracts.
//!
//! YAML specs describe scenarios; the runner executes them against the built-in reference
//! implementation or an external one, and reporters render the outcomes.
//!
//! Running a spec from Rust, as the `dlqspec` binary does:
//!
//! ```
//! use dlqspec::builtin::Builtin;
//! use dlqspec::contract::RunMode;
//! use dlqspec::outcome::Outcome;
//! use dlqspec::{loader, source::SourceFile};
//!
//! let text = "\
//! contract: dlq-consumer
//! name: a transient error is retried
//! rules: [dlq-consumer/transient-retry]
//! messages: [{id: a, body: order-1}]
//! handler: {a: [transient: db timeout, ok]}
//! steps:
//!   - process: retry
//!   - process: ok
//! ";
//! let spec = loader::load(SourceFile::from_text("inline.yaml", text)).expect("a valid spec");
//! let run = spec.scenario.run(&mut Builtin::new(), RunMode::Check);
//! assert!(matches!(run.outcome, Outcome::Passed));
//! ```

pub mod atomic_file;
pub mod authoring;
pub mod builtin;
pub mod captured;
pub mod cli;
pub mod commands;
pub mod contract;
pub mod contracts;
pub mod cut;
pub mod discover;
pub mod explore;
pub mod external;
pub mod grading;
pub mod implementation;
pub mod interactive;
pub mod interrupts;
pub mod known_failures;
pub mod listing;
pub mod loader;
pub mod matrix;
pub mod mistake;
pub mod outcome;
pub mod parallel;
pub mod recorder;
pub mod report;
pub mod rerun;
pub mod rule;
pub mod runner;
pub mod select;
pub mod smell;
pub mod source;
pub mod spec_error;
pub mod strength;
pub mod suggest;
pub mod watch;
pub mod yaml;
pub mod yaml_edit;
