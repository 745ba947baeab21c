//! An exercise's smells `dlqspec lint` reports: what its probed run shows, told as the
//! contract-neutral facts `contracts/smells.rs` finds the smells in, in the exercise's words.
//!
//! A step changed something when a state view, a given part's record or the clock differs
//! after it (the marks of a probed run hold them all); `expect` and `mutate_VIEW` check, a
//! call (`create` and `restart` too) answers, `advance` only acts. A callable given part's
//! scripted answers are used one a call. An exercise spec writes no thing up front that a run
//! may leave untouched (a dlq-consumer spec's messages): whatever enters does so by a step,
//! so it has no `never-delivered`.

use serde_json::{Value, json};

use super::scenario::{ExerciseScenario, Played, reply_value};
use super::vocabulary::Step;
use crate::contracts::contract::Smell;
use crate::contracts::smells::{
    self, Facts, IdleWords, Role, ScriptedFact, StepFact, Terms, UnusedWords,
};

/// Every exercise's words.
const TERMS: Terms = Terms {
    idle: IdleWords {
        repeats: "with the same arguments and answer",
        trails: "after the last change",
        repeat_fix: ": leave it out, or change something between the two",
        act_fix: ": leave it out",
    },
    unused: UnusedWords {
        outcome: "scripted answer",
        things: "given parts",
        callee: None,
        fix: "; script only as many answers as the calls the run makes",
    },
    never_used: None,
};

/// The smells of `scenario`'s probed run.
pub(crate) fn find(scenario: &ExerciseScenario, played: &Played) -> Vec<Smell> {
    let facts = Facts {
        steps: steps(scenario, played),
        scripted: scenario
            .loaded
            .script_positions
            .iter()
            .map(|(part, positions)| ScriptedFact {
                id: part,
                positions,
                calls: played.calls.get(part).copied().unwrap_or(0),
            })
            .collect(),
        things: Vec::new(),
        checkpoints: &played.run.checkpoints,
    };
    smells::find(&facts, &TERMS)
}

/// What each step that ran did, from its mark: whether the views, records and clock after it
/// differ from those after the step before (before the first, no instance at time 0).
fn steps(scenario: &ExerciseScenario, played: &Played) -> Vec<StepFact> {
    let mut facts = Vec::new();
    let mut before: (&[(String, Value)], Value) = (&[], json!(0));
    for (index, placed) in scenario.loaded.steps.iter().enumerate() {
        // A step without a mark did not run (the run stopped), or found no instance to restart.
        let Some(mark) = played.marks.iter().find(|mark| mark.step == index) else {
            continue;
        };
        let after = (mark.after.as_slice(), mark.now.clone());
        let role = match &placed.step {
            Step::Expect { .. } | Step::Mutate { .. } => Role::Check,
            Step::Advance { .. } => Role::Act,
            Step::Create { .. } | Step::Call { .. } | Step::Restart => Role::Call(Some(json!({
                "args": mark.args,
                "answer": mark.reply.as_ref().map(reply_value),
            }))),
        };
        facts.push(StepFact {
            number: index + 1,
            position: placed.position,
            name: placed.step.kind().to_owned(),
            changed: after != before,
            settled: true,
            role,
        });
        before = after;
    }
    facts
}
