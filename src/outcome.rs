//! Outcomes are data: what happened to one spec against one implementation.

use serde::Serialize;

use crate::implementation::ImplError;
use crate::source::Position;
use crate::spec_error::SpecError;

#[derive(Debug, Clone)]
pub enum Outcome {
    Passed,
    /// The implementation is wrong: it did something else than the spec expects.
    Mismatch(Mismatch),
    /// The implementation or its process broke, hung or spoke garbage.
    Errored(ImplError),
    /// The spec itself is broken; never blamed on the implementation.
    SpecError(SpecError),
    /// The spec was not run, and why.
    Skipped(String),
}

/// Where and how an implementation differed from a spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// The step that first differed, e.g. "step 4 (process)"; "final expect" at the end.
    pub step: String,
    /// Where the expectation that failed is written.
    pub position: Position,
    /// Expected and actual, rendered as YAML.
    pub expected: String,
    pub actual: String,
    /// A sentence for what a diff alone cannot say, e.g. an unscripted handler call.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Passed,
    Mismatch,
    Errored,
    SpecError,
    Skipped,
}

impl Outcome {
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::Passed => OutcomeKind::Passed,
            Outcome::Mismatch(_) => OutcomeKind::Mismatch,
            Outcome::Errored(_) => OutcomeKind::Errored,
            Outcome::SpecError(_) => OutcomeKind::SpecError,
            Outcome::Skipped(_) => OutcomeKind::Skipped,
        }
    }

    /// Whether this outcome fails a run.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Outcome::Mismatch(_) | Outcome::Errored(_) | Outcome::SpecError(_)
        )
    }
}
