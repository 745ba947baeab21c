//! The one integration test binary: drives the real `dlqspec` executable. One module per area.

mod authoring;
mod common;
mod run_cli;
