//! Tools for spec authors: the schema for editors, starter specs, explaining, blessing, linting.
//!
//! The JSON Schema of spec files (`schema.rs`, written by `dlqspec schema`), starter specs
//! (`starter.rs`), `explain` (a spec's scenario told step by step, as text or a picture),
//! `bless` (a spec's expectations rewritten in place from the built-in reference, through
//! `text::yaml::edit`) and `lint` (the smells of a spec). It may use `report/` and below.

pub mod bless;
pub mod explain;
pub mod lint;
pub(crate) mod schema;
pub(crate) mod starter;
