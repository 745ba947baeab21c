//! Finding spec files and loading each through its contract.

pub mod discover;
pub mod loader;
