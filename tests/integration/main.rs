//! The one integration test binary: drives the real `dlqspec` executable. One module per area.

mod adversarial;
mod authoring;
#[cfg(target_os = "linux")]
mod browser;
mod common;
mod compact;
mod corpus;
mod explore;
mod external;
mod features;
mod figures;
mod fixtures;
mod grading;
mod hardening;
mod install;
mod java;
mod mutations;
mod pictures;
mod promises;
mod properties;
mod reports;
mod robustness;
mod run_cli;
mod shims;
mod spec_errors;
mod strength;
mod students;
mod suite;
mod teeth;
mod watch;
mod workflow;
