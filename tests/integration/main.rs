//! The one integration test binary: drives the real `dlqspec` executable. One module per area.

mod authoring;
mod common;
mod external;
mod fixtures;
mod hardening;
mod outcome_queue_teeth;
mod properties;
mod reports;
mod robustness;
mod run_cli;
mod shims;
mod suite;
mod teeth;
