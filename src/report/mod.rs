//! Reporters: they render runner events and outcomes, and decide nothing.
//!
//! Every output format of a run (human, JSON lines, JUnit, TAP, Gradescope, Exercism, GitHub's
//! annotations and step summary), the conformance matrix, `grade`'s summaries (`grade_summary/`,
//! a file per format) and the suite it refuses (`grade_suite.rs`), smoke reports; rendering,
//! colour (`style.rs`), progress (`progress.rs`, on stderr). Every text from a spec or an
//! implementation goes through `sanitize.rs` before it is printed, so no control character
//! reaches a terminal or a CI log raw. The HTML pages (`explain_picture.rs`, `matrix.rs`,
//! `grade_summary/html.rs`) are maud templates, which escape what they are given; their CSS and
//! script are `assets/`, which `page.rs` alone writes unescaped. GitHub's step summary is a
//! Markdown page: `github.rs` writes its few tags and `sanitize::markdown` its entities.
//!
//! This layer may use the run and below; the layers above it and the reporters are the only code
//! that prints.

pub(crate) mod exercism;
pub(crate) mod explain_picture;
pub(crate) mod github;
pub(crate) mod grade_suite;
pub(crate) mod grade_summary;
pub(crate) mod gradescope;
pub(crate) mod human;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod listing;
pub(crate) mod matrix;
pub(crate) mod outputs;
pub(crate) mod page;
pub(crate) mod progress;
pub mod render;
pub(crate) mod sanitize;
pub(crate) mod smoke;
pub(crate) mod style;
pub(crate) mod tap;

pub(crate) use exercism::ExercismReporter;
pub(crate) use github::{GithubAnnotations, GithubPlaces};
pub(crate) use gradescope::GradescopeReporter;
pub(crate) use human::HumanReporter;
pub(crate) use json::JsonReporter;
pub(crate) use junit::JunitReporter;
pub(crate) use outputs::{Outputs, ReportFormat, ReportOptions};
pub(crate) use progress::ProgressReporter;
pub use style::Palette;
pub(crate) use tap::TapReporter;
