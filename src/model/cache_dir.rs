//! The variable that names dlqspec's cache folder, shared by what keeps state there: the
//! failures of the last run (`run::rerun`) and the shims written out of the program
//! (`external::shims_cache`).

/// The variable that names another cache folder (tests use it; so may a CI job).
pub(crate) const CACHE_DIR_ENV: &str = "DLQSPEC_CACHE_DIR";
