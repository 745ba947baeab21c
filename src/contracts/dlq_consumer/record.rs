//! What a recorded run of a dlq-consumer scenario leaves behind besides its `ScenarioRun`: the
//! world at its end, what each step did, and what a run is asked to keep of it, which `lint`'s
//! smells, `explore`'s crash placement and a diagnosis read.

use serde_json::Value;

use super::world::World;
use crate::model::rule::Rule;
use crate::text::source::Position;

/// What a run leaves behind besides its `ScenarioRun`: the world and what each step did.
pub(crate) struct Record {
    pub(crate) world: World,
    pub(crate) steps: Vec<StepFacts>,
    /// What each step that ran did, for a diagnosis (`RecordKeeping::marks`); empty otherwise.
    pub(crate) marks: Vec<StepMark>,
    /// What the constructor raised, when making a consumer ended the run (`RecordKeeping::marks`).
    pub(crate) constructor_raised: Option<crate::model::implementation::Raised>,
}

/// What a run keeps besides its outcome: each one costs a plain run something per step.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RecordKeeping {
    /// `StepFacts` of every step, for lint and explore.
    pub(crate) facts: bool,
    /// A `StepMark` of every step that ran, the one that ended the run included.
    pub(crate) marks: bool,
    /// The rules noted in each step, in its mark: read of the reference's run only.
    pub(crate) rules: bool,
    /// The last step to run, from 0 (`None`: every step and the final expect): a diagnosis
    /// that needs a run only up to a step stops there.
    pub(crate) until: Option<usize>,
}

/// What one step did, as a diagnosis compares it with the reference's same step.
#[derive(Debug, Clone)]
pub(crate) struct StepMark {
    /// Its place among the spec's steps, from 0.
    pub(crate) index: usize,
    pub(crate) name: &'static str,
    /// The journal entries the step added.
    pub(crate) journal: std::ops::Range<usize>,
    /// What its call returned, as a spec writes it (`ok`, `none`, `crash`, `raised ...`), for
    /// `process` and `replay` steps that got an answer.
    pub(crate) returned: Option<Value>,
    /// The rule deciding the step, and the rules noted in it and every decision made in it,
    /// in order, with whether it was firm (these two only with `RecordKeeping::rules`).
    pub(crate) decision: Option<&'static Rule>,
    pub(crate) rules: Vec<&'static str>,
    pub(crate) decisions: Vec<(&'static Rule, bool)>,
}

/// What one step did to the world.
#[derive(Debug, Clone)]
pub(crate) struct StepFacts {
    pub(crate) position: Position,
    pub(crate) name: &'static str,
    /// Whether queue, DLQ, clock, handler calls or armed faults differ after the step.
    pub(crate) changed: bool,
    /// Whether nothing was ready or in flight after the step.
    pub(crate) drained: bool,
    /// What the call returned, for `process` and `replay` steps.
    pub(crate) returned: Option<Value>,
    /// The journal entries the step added (`World::journal`): what the implementation did
    /// during it, which is where `dlqspec explore` places its crashes.
    pub(crate) journal: std::ops::Range<usize>,
}
