//! The one integration test binary: drives the real `dlqspec` executable. One module per area.

mod common;
mod external;
mod run_cli;
