//! The one integration test binary: drives the real `dlqspec` executable. One module per area.

mod common;
mod run_cli;
mod teeth;
