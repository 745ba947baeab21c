//! dlqspec: the rules of dead-letter-queue handling as executable, checkable contracts.
//!
//! YAML specs describe scenarios; the runner executes them against the built-in reference
//! implementation or an external one, and reporters render the outcomes.
//!
//! Running a spec from Rust, as the `dlqspec` binary does:
//!
//! ```
//! use dlqspec::contracts::builtin::Builtin;
//! use dlqspec::contracts::contract::RunMode;
//! use dlqspec::model::outcome::Outcome;
//! use dlqspec::{load::loader, text::source::SourceFile};
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

// The unit tests beside the code set their cases up by writing files, starting programs and
// printing what they found: clippy.toml's rules hold the library, which the build without
// `cfg(test)` (the one `cargo clippy --all-targets` also checks) lints in full.
#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        clippy::disallowed_macros,
        clippy::disallowed_types,
        reason = "tests: unit tests set their cases up with files, processes and prints"
    )
)]

pub mod authoring;
pub mod commands;
pub mod contracts;
pub mod explore;
pub mod external;
pub(crate) mod files;
pub mod generate;
pub mod load;
pub mod model;
pub mod report;
pub mod run;
pub(crate) mod strength;

// The bottom layers are crates of the workspace (ARCHITECTURE.md, "Crates"), named here as
// modules, so every `crate::text::...` and `dlqspec::text::...` path holds. `formats` is the
// stable formats (run record, grade record, protocol), which a reader uses without the runner.
pub(crate) use dlqspec_amqp as amqp;
pub use dlqspec_formats as formats;
pub use dlqspec_text as text;
