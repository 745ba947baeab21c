//! Tools for spec authors: the schema for editors, starter specs, explaining, blessing, linting.

pub mod bless;
pub mod explain;
pub mod lint;
pub(crate) mod schema;
pub(crate) mod starter;
