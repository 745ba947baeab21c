//! Spec text: source files, spec errors, YAML, and the wording helpers every layer shares.
//!
//! Source files and positions in them, spec errors pointing there, YAML read and rewritten in
//! place, and the wording helpers (did-you-mean, long lists).
//!
//! The bottom layer, a crate of the workspace (`dlqspec-text`) that uses nothing of dlqspec:
//! `yaml.rs` and `yaml/` are the one door to the YAML libraries. A `pub` here is what dlqspec's
//! own crate uses of the layer; the rest stays `pub(crate)`. `yaml::agreement` is behind the
//! `agreement` feature, which only dlqspec's dev-dependency turns on.

// A crate attribute, so written once in each crate of the workspace (clippy's lint tables
// cannot carry a `cfg`): the unit tests set their cases up with files, threads and prints,
// and clippy.toml's rules hold the crate's code, which the build without `cfg(test)` lints.
#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        clippy::disallowed_macros,
        clippy::disallowed_types,
        reason = "tests: unit tests set their cases up with files, processes and prints"
    )
)]

pub mod listing;
pub mod source;
pub mod spec_error;
pub mod suggest;
pub mod truncate;
pub mod yaml;
