//! Outcomes are data: what happened to one spec against one implementation.

use serde::Serialize;

use crate::model::implementation::ImplError;
use crate::text::source::Position;
use crate::text::spec_error::SpecError;

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
    /// A mismatch or error that a known-failures file lists: reported, not failing the run.
    ExpectedFailure(Box<ExpectedFailure>),
    /// A spec that a known-failures file lists passed: the list is out of date, failing the run.
    Stale(String),
}

/// A failure the implementation is known to have, and where that is written down.
#[derive(Debug, Clone)]
pub struct ExpectedFailure {
    /// What actually happened: a mismatch or an implementation error.
    pub failure: Outcome,
    /// The entry that lists it, as `path:line:col` in the known-failures file.
    pub listed_at: String,
    pub reason: Option<String>,
}

/// Where and how an implementation differed from a spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// The step that first differed, e.g. "step 4 (process)"; "final expect" at the end.
    pub step: String,
    /// Where the expectation that failed is written.
    pub position: Position,
    /// Expected and actual, rendered as YAML. Boxed, as `step_as_written` is: every `Result` of
    /// a run carries an `Outcome` by value, and these keep it as small as it was.
    pub expected: Box<str>,
    pub actual: Box<str>,
    /// A sentence for what a diff alone cannot say, e.g. an unscripted handler call.
    pub note: Option<String>,
    /// The step that differed as its spec writes it, on one line, with what its call met:
    /// `process: {outcome: success, returns: done}`, `process: dead (it received p, delivery
    /// 3)`. So a student sees the arguments without opening the spec. `None` for an `expect`
    /// and the final one, whose diff is the whole step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_as_written: Option<Box<str>>,
    /// The rule the difference breaks: the rule deciding the step where it was found (a
    /// misuse breaks `no-misuse`). `None` where no single decision is known (a final expect).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "rule_id")]
    pub rule: Option<&'static crate::model::rule::Rule>,
}

/// A rule as reports write it: its id.
fn rule_id<S: serde::Serializer>(
    rule: &Option<&'static crate::model::rule::Rule>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_some(&rule.map(|r| r.id))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Passed,
    Mismatch,
    Errored,
    SpecError,
    Skipped,
    ExpectedFailure,
    Stale,
}

impl Outcome {
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::Passed => OutcomeKind::Passed,
            Outcome::Mismatch(_) => OutcomeKind::Mismatch,
            Outcome::Errored(_) => OutcomeKind::Errored,
            Outcome::SpecError(_) => OutcomeKind::SpecError,
            Outcome::Skipped(_) => OutcomeKind::Skipped,
            Outcome::ExpectedFailure(_) => OutcomeKind::ExpectedFailure,
            Outcome::Stale(_) => OutcomeKind::Stale,
        }
    }

    /// Whether this outcome fails a run.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Outcome::Mismatch(_) | Outcome::Errored(_) | Outcome::SpecError(_) | Outcome::Stale(_)
        )
    }
}
