//! Reporters: they render runner events and outcomes, and decide nothing.

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
