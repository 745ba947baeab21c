//! Finding spec files and loading each through its contract.
//!
//! `discover.rs` finds the spec files under the paths given, without leaving their folders;
//! `loader.rs` reads each and hands it to the contract it names (a built-in one or a registered
//! exercise), which parses it into a scenario. It may use `contracts/` and below.

pub mod discover;
pub mod loader;
