//! Spec text: source files and positions in them, spec errors pointing there, YAML read and
//! rewritten in place, and the wording helpers (did-you-mean, long lists) every layer shares.

pub(crate) mod listing;
pub mod source;
pub mod spec_error;
pub(crate) mod suggest;
pub(crate) mod truncate;
pub mod yaml;
