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
    /// The implementation has no class of the spec's contract (a solution written for the
    /// other one only): the spec was not attempted, which is no failure of what was written.
    /// Why, in one line (which class is missing).
    NotAttempted(String),
    /// A mismatch or error that a known-failures file lists: reported, not failing the run.
    ExpectedFailure(Box<ExpectedFailure>),
    /// A spec that a known-failures file lists passed: the list is out of date, failing the run.
    Stale(String),
    /// The spec passes on the lesson's fake world and fails on a broker's (`--world`): the
    /// broker's behaviour, not the implementation's failure, named by the broker's property.
    Divergence(Box<Divergence>),
    /// The world itself broke under the spec (a broker went away, refused the login): the spec
    /// is not run, and the run stops. The runner reports it as not run; reporters never see it.
    WorldFault(String),
}

/// A spec that passes on the fake and fails on a broker, and why.
#[derive(Debug, Clone)]
pub struct Divergence {
    /// The broker's world, as `--world` names it, without the password.
    pub(crate) world: String,
    /// Each property of the broker by which its answers parted from the fake's, in the order
    /// first met, each once.
    pub(crate) properties: Vec<DivergedBy>,
    /// How the spec failed on the broker: its difference, or the implementation's error.
    pub(crate) failure: Outcome,
}

/// One property of a broker a divergence names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct DivergedBy {
    /// Stable: `requeue-at-head`, `no-delivery-count`, ...
    pub(crate) id: &'static str,
    /// What the broker does.
    pub(crate) says: &'static str,
    /// What it means for a consumer written to the lesson.
    pub(crate) means: &'static str,
    /// Where the broker's answer first parted from the fake's for it.
    pub(crate) first: String,
}

impl Divergence {
    /// `requeue-at-head, no-delivery-count`: the properties, by id.
    pub(crate) fn ids(&self) -> String {
        self.properties
            .iter()
            .map(|p| p.id)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A failure the implementation is known to have, and where that is written down.
#[derive(Debug, Clone)]
pub struct ExpectedFailure {
    /// What actually happened: a mismatch or an implementation error.
    pub(crate) failure: Outcome,
    /// The entry that lists it, as `path:line:col` in the known-failures file.
    pub(crate) listed_at: String,
    pub(crate) reason: Option<String>,
}

/// Where and how an implementation differed from a spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// The step that first differed, e.g. "step 4 (process)"; "final expect" at the end.
    pub step: String,
    /// Where the expectation that failed is written.
    pub(crate) position: Position,
    /// Expected and actual, rendered as YAML. Boxed, as `step_as_written` is: every `Result` of
    /// a run carries an `Outcome` by value, and these keep it as small as it was.
    pub(crate) expected: Box<str>,
    pub(crate) actual: Box<str>,
    /// A sentence for what a diff alone cannot say, e.g. an unscripted handler call.
    pub note: Option<String>,
    /// The step that differed as its spec writes it, on one line, with what its call met:
    /// `process: {outcome: success, returns: done}`, `process: dead (it received p, delivery
    /// 3)`. So a student sees the arguments without opening the spec. `None` for an `expect`
    /// and the final one, whose diff is the whole step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) step_as_written: Option<Box<str>>,
    /// The rule the difference breaks: the rule deciding the step where it was found (a
    /// misuse breaks `no-misuse`). `None` where no single decision is known (a final expect).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "rule_id")]
    pub(crate) rule: Option<&'static crate::model::rule::Rule>,
}

/// A rule as reports write it: its id.
fn rule_id<S: serde::Serializer>(
    rule: &Option<&'static crate::model::rule::Rule>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_some(&rule.map(|r| r.id))
}

/// What happened to one spec, as reports name it: a format of the run record.
pub use crate::formats::record::OutcomeKind;

impl Outcome {
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::Passed => OutcomeKind::Passed,
            Outcome::Mismatch(_) => OutcomeKind::Mismatch,
            Outcome::Errored(_) => OutcomeKind::Errored,
            Outcome::SpecError(_) => OutcomeKind::SpecError,
            Outcome::Skipped(_) => OutcomeKind::Skipped,
            Outcome::NotAttempted(_) => OutcomeKind::NotAttempted,
            Outcome::ExpectedFailure(_) => OutcomeKind::ExpectedFailure,
            Outcome::Stale(_) => OutcomeKind::Stale,
            Outcome::Divergence(_) => OutcomeKind::Divergence,
            Outcome::WorldFault(_) => OutcomeKind::WorldFault,
        }
    }

    /// Whether this outcome fails a run. A divergence does not: it is the broker's, and the
    /// report tells it apart.
    pub(crate) fn is_failure(&self) -> bool {
        matches!(
            self,
            Outcome::Mismatch(_) | Outcome::Errored(_) | Outcome::SpecError(_) | Outcome::Stale(_)
        )
    }
}
