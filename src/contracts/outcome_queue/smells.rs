//! The outcome-queue smells `dlqspec lint` reports: what a recorded run shows a spec says in vain.

use std::collections::HashSet;

use serde_json::Value;

use super::spec::Step;
use crate::contracts::contract::{Checkpoint, Smell};
use crate::text::source::Position;

use crate::contracts::smell::{IDLE_TRAILING_STEP, NEVER_PROCESSED};

/// What one step did, for `dlqspec lint`.
#[derive(Debug, Clone)]
pub(crate) struct StepFacts {
    pub(crate) position: Position,
    pub(crate) name: &'static str,
    /// The arguments and the answer, to tell a repeated step from a new one.
    pub(crate) call: Option<(Value, String)>,
    /// Whether the step can have changed the queue (a create, a submit, a process that took a
    /// job, a replay that returned true).
    pub(crate) changed: bool,
    /// The job a `process` step took: the head of `ready` before it (observed runs only).
    pub(crate) took: Option<String>,
}

pub(crate) fn find(
    written: &[(Position, Step)],
    checkpoints: &[Checkpoint],
    steps: &[StepFacts],
) -> Vec<Smell> {
    let mut smells = never_processed(written, checkpoints, steps);
    smells.extend(idle_trailing_steps(steps));
    smells.sort_by_key(|smell| smell.position);
    smells
}

/// A job no `process` step ever takes and no expectation names: it only adds noise.
fn never_processed(
    written: &[(Position, Step)],
    checkpoints: &[Checkpoint],
    steps: &[StepFacts],
) -> Vec<Smell> {
    let taken: HashSet<&str> = steps.iter().filter_map(|s| s.took.as_deref()).collect();
    let mut named = HashSet::new();
    for checkpoint in checkpoints {
        collect_strings(&checkpoint.expected, &mut named);
    }
    written
        .iter()
        .filter_map(|(_, step)| match step {
            Step::Submit(submit) => Some(&submit.id),
            _ => None,
        })
        .filter(|id| !taken.contains(id.value.as_str()) && !named.contains(&id.value))
        .map(|id| Smell {
            id: NEVER_PROCESSED,
            position: crate::text::yaml::at(id),
            message: format!(
                "job `{}` is never processed and no expectation names it: process it, expect it, or leave it out",
                id.value
            ),
        })
        .collect()
}

fn collect_strings(value: &Value, into: &mut HashSet<String>) {
    match value {
        Value::String(s) => {
            into.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, into)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, into)),
        _ => {}
    }
}

/// Steps after the last one that could change the queue that repeat an earlier one exactly,
/// with the same answer: `process` on an empty queue again, and the like.
fn idle_trailing_steps(steps: &[StepFacts]) -> Vec<Smell> {
    let first_trailing = steps
        .iter()
        .rposition(|step| step.changed)
        .map_or(0, |last| last + 1);
    let mut smells = Vec::new();
    let mut seen: Vec<(&str, &(Value, String), usize)> = Vec::new();
    for (index, step) in steps.iter().enumerate().skip(first_trailing) {
        let Some(call) = &step.call else {
            continue;
        };
        let number = index + 1;
        match seen
            .iter()
            .find(|(name, earlier, _)| *name == step.name && *earlier == call)
        {
            Some((_, _, earlier)) => smells.push(Smell {
                id: IDLE_TRAILING_STEP,
                position: step.position,
                message: format!(
                    "step {number} ({}) repeats step {earlier} with the same answer and changes nothing",
                    step.name
                ),
            }),
            None => seen.push((step.name, call, number)),
        }
    }
    smells
}

#[cfg(test)]
mod tests {
    use crate::contracts::builtin::Builtin;
    use crate::contracts::contract::Scenario;
    use crate::text::source::SourceFile;

    fn smells_of(steps: &str) -> Vec<String> {
        let text = format!(
            "contract: outcome-queue\nname: t\nrules: [outcome-queue/success-done]\nsteps:\n  - create: {{max_attempts: 2}}\n{steps}"
        );
        let file = SourceFile::from_text("t.yaml", text);
        let scenario = crate::contracts::outcome_queue::loading::load(&file).unwrap();
        scenario
            .smells(&mut Builtin::new())
            .unwrap()
            .0
            .iter()
            .map(|s| {
                format!(
                    "{}:{}: {}: {}",
                    s.position.line, s.position.column, s.id, s.message
                )
            })
            .collect()
    }

    #[test]
    fn a_clean_scenario_has_no_smells() {
        let smells = smells_of(
            "  - submit: {id: a, payload: p}\n  - process: {outcome: success, returns: done}\n  - process: {outcome: success, returns: none}\n  - process: {outcome: boom, raises: invalid_argument}\n",
        );
        assert_eq!(smells, Vec::<String>::new());
    }

    #[test]
    fn a_job_never_processed_nor_named_is_a_smell() {
        let smells = smells_of(
            "  - submit: {id: a, payload: p}\n  - submit: {id: b, payload: q}\n  - process: {outcome: success, returns: done}\n",
        );
        assert_eq!(
            smells,
            [
                "7:18: never-processed: job `b` is never processed and no expectation names it: process it, expect it, or leave it out"
            ]
        );
    }

    #[test]
    fn a_repeated_idle_step_at_the_end_is_a_smell() {
        let smells = smells_of(
            "  - process: {outcome: success, returns: none}\n  - process: {outcome: success, returns: none}\n  - process: {outcome: transient, returns: none}\n",
        );
        assert_eq!(
            smells,
            [
                "7:5: idle-trailing-step: step 3 (process) repeats step 2 with the same answer and changes nothing"
            ]
        );
    }
}
