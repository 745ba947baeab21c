//! Exit codes, as documented in the README: what a run's summary, and every command, ends with.

/// Every spec passed (skipped specs do not count against a run).
pub(crate) const PASSED: i32 = 0;
/// Some spec failed: a mismatch, or the implementation errored.
pub(crate) const FAILED: i32 = 1;
/// A spec is broken, or the command line is wrong.
pub(crate) const SPEC_OR_USAGE_ERROR: i32 = 2;
