//! The one integration test binary: drives the real `dlqspec` executable. One module per area.

// clippy.toml's rules hold the library; tests set their cases up by writing files, starting
// programs and printing what they found.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_macros,
    clippy::disallowed_types,
    reason = "tests: files, processes and prints set cases up and tell what was found"
)]

mod action;
mod adversarial;
mod authoring;
mod authoring_exercises;
mod broker;
#[cfg(target_os = "linux")]
mod browser;
#[cfg(target_os = "linux")]
mod browser_capstone;
mod capstone;
mod causes;
mod common;
mod compact;
mod corpus;
mod exercise_checks;
mod exercises;
mod explore;
mod external;
mod features;
mod figures;
mod fixtures;
mod grading;
mod hardening;
mod help;
mod install;
mod java;
mod mutations;
mod pictures;
#[path = "../support/plants.rs"]
mod plants;
mod promises;
mod properties;
mod reports;
mod robustness;
mod rules;
mod run_cli;
mod shims;
mod spec_errors;
mod spelling;
mod strength;
mod students;
mod suite;
mod teeth;
mod typescript;
mod vocabulary;
mod watch;
mod workflow;
