//! What `explain` tells of each step's decision once a failing run is diagnosed: every step
//! before the departure did what the reference does, under the rule that decides it (`✓`);
//! the step where it departs broke its rule (`✗`, with both sides); past it the runs have
//! parted, and nothing more is judged.

use super::definition::Point;
use super::departure::Parted;
use super::scenario::{ExerciseScenario, Mark, shown_reply};
use crate::contracts::contract::ScenarioRun;
use crate::contracts::timeline::{TimelineEvent, TimelineLine};
use crate::model::cause::Departure;
use crate::model::implementation::Reply;
use crate::model::rule::Rule;

/// Puts the decision lines into `run`'s timeline, each at the end of its step's lines
/// (`step_ends`: each step's index and where its lines end).
pub(crate) fn tell(
    scenario: &ExerciseScenario,
    run: &mut ScenarioRun,
    marks: &[Mark],
    step_ends: &[(usize, usize)],
    departure: &Departure,
    parted: &Parted,
) {
    let Some(departs) = departure.step else {
        // It parts at the final expect: the steps before it all did as the reference.
        return agreeing(scenario, run, marks, step_ends, usize::MAX);
    };
    if let Some(&(_, end)) = step_ends.iter().find(|(step, _)| *step == departs) {
        let line = match departure.rule {
            Some(rule) => format!("    \u{2717} decision {}: {}", rule.id, parted.words),
            None => format!("    \u{2717} departs here: {}", parted.words),
        };
        let (theirs, ours) = parted.sides.clone();
        run.timeline.insert(
            end.min(run.timeline.len()),
            TimelineLine {
                line,
                event: TimelineEvent::Decision {
                    did: ours,
                    expected: Some(theirs),
                },
            },
        );
    }
    agreeing(scenario, run, marks, step_ends, departs);
}

/// The `✓` lines of the steps before `departs` that a rule decides, inserted last first so
/// that each step's end stays where it was found.
fn agreeing(
    scenario: &ExerciseScenario,
    run: &mut ScenarioRun,
    marks: &[Mark],
    step_ends: &[(usize, usize)],
    departs: usize,
) {
    for &(step, end) in step_ends.iter().rev().filter(|(step, _)| *step < departs) {
        let Some(mark) = marks.iter().find(|mark| mark.step == step) else {
            continue;
        };
        let Some(rule) = deciding(scenario, mark) else {
            continue;
        };
        // The answer is the solution's: cut, as every line of a timeline is bounded.
        let did = crate::text::truncate::line(&done(mark), 300);
        run.timeline.insert(
            end.min(run.timeline.len()),
            TimelineLine {
                line: format!(
                    "    \u{2713} decision {}: {did}, as the reference does",
                    rule.id
                ),
                event: TimelineEvent::Decision {
                    did,
                    expected: None,
                },
            },
        );
    }
}

/// The rule deciding a step that did what the reference does: the most specific `decides`
/// pattern matching its call and answer, else what the spec pins for the step.
fn deciding(scenario: &ExerciseScenario, mark: &Mark) -> Option<&'static Rule> {
    let point = Point::answered(&mark.call, &mark.args, mark.reply.as_ref());
    scenario.exercise.rule_at(&point).or_else(|| {
        let placed = scenario.loaded.steps.get(mark.step)?;
        scenario.decision(&placed.step)
    })
}

/// What the step did, in a few words: `process returns retry`, `create makes an instance`.
fn done(mark: &Mark) -> String {
    let made = matches!(mark.call.as_str(), "create" | "restart");
    match &mark.reply {
        Some(Reply::Returned(_) | Reply::Undefined) if made => {
            format!("{} makes an instance", mark.call)
        }
        Some(Reply::Raised(raised)) => format!("{} raises {}", mark.call, raised.describe()),
        Some(reply) => format!("{} returns {}", mark.call, shown_reply(reply)),
        None => mark.call.clone(),
    }
}
