//! The one integration test binary: drives the real `dlqspec` executable. One module per area.

mod common;
mod fixtures;
mod run_cli;
mod suite;
mod teeth;
