//! Reporters: they render runner events and outcomes, and decide nothing.

pub mod exercism;
pub mod explain_picture;
pub mod github;
pub mod grade_summary;
pub mod gradescope;
pub mod human;
pub mod json;
pub mod junit;
pub mod listing;
pub mod matrix;
pub mod outputs;
pub mod progress;
pub mod render;
pub mod sanitize;
pub mod smoke;
pub mod style;
pub mod tap;

pub use exercism::ExercismReporter;
pub use github::GithubAnnotations;
pub use gradescope::GradescopeReporter;
pub use human::HumanReporter;
pub use json::JsonReporter;
pub use junit::JunitReporter;
pub use outputs::{OutputError, Outputs, ReportFormat, ReportOptions};
pub use progress::ProgressReporter;
pub use style::Palette;
pub use tap::TapReporter;
