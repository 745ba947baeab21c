//! The dlq-consumer smells `dlqspec lint` reports: what a recorded run shows a spec says in vain.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::journal::{WorldEvent, ordinal};
use super::record::{Record, StepFacts};
use super::spec::{MessageSpec, Step};
use crate::contracts::contract::{Checkpoint, Smell};
use crate::text::source::Position;

use crate::contracts::smell::{IDLE_TRAILING_STEP, NEVER_DELIVERED, UNUSED_OUTCOMES};

/// What of a scenario its smells are found in: where its messages, their outcomes and its
/// steps are written.
pub(crate) struct WrittenScenario<'a> {
    pub(crate) messages: &'a [MessageSpec],
    pub(crate) message_positions: &'a [Position],
    pub(crate) outcome_positions: &'a HashMap<String, Arc<[Position]>>,
    pub(crate) steps: &'a [(Position, Step)],
}

pub(crate) fn find(
    scenario: &WrittenScenario<'_>,
    checkpoints: &[Checkpoint],
    record: &Record,
) -> Vec<Smell> {
    let mut smells = never_delivered(scenario, checkpoints, record);
    smells.extend(unused_outcomes(scenario, record));
    smells.extend(idle_trailing_steps(&record.steps));
    smells.sort_by_key(|smell| smell.position);
    smells
}

/// A message no step ever receives and no expectation names: it only adds noise.
fn never_delivered(
    scenario: &WrittenScenario<'_>,
    checkpoints: &[Checkpoint],
    record: &Record,
) -> Vec<Smell> {
    let received: HashSet<&str> = record
        .world
        .journal()
        .iter()
        .filter_map(|happening| match happening {
            WorldEvent::Received { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    let mut named = HashSet::new();
    for checkpoint in checkpoints {
        collect_strings(&checkpoint.expected, &mut named);
    }
    let mut messages: Vec<_> = scenario
        .messages
        .iter()
        .zip(scenario.message_positions)
        .map(|(message, position)| (message.id.as_str(), *position))
        .collect();
    for (position, step) in scenario.steps {
        if let Step::Send(message) = step {
            messages.push((message.id.as_str(), *position));
        }
    }
    // The messages a `generate` group writes share its line: one smell for the line, with a
    // count, not one per generated message.
    let mut lines: Vec<(Position, Vec<&str>)> = Vec::new();
    for (id, position) in messages {
        if received.contains(id) || named.contains(id) {
            continue;
        }
        match lines.iter_mut().find(|(at, _)| *at == position) {
            Some((_, ids)) => ids.push(id),
            None => lines.push((position, vec![id])),
        }
    }
    lines
        .into_iter()
        .map(|(position, ids)| Smell {
            id: NEVER_DELIVERED,
            position,
            message: match ids.as_slice() {
                [id] => format!(
                    "message `{id}` is never delivered and no expectation names it: process it, expect it somewhere, or leave it out"
                ),
                [first, .., last] => format!(
                    "{} messages written here (`{first}` to `{last}`) are never delivered and no expectation names them: process them, expect them somewhere, or leave them out",
                    ids.len()
                ),
                [] => unreachable!("a line has a message"),
            },
        })
        .collect()
}

/// Every string and mapping key in `value`.
fn collect_strings(value: &Value, into: &mut HashSet<String>) {
    match value {
        Value::String(s) => {
            into.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, into)),
        Value::Object(map) => {
            for (key, item) in map {
                into.insert(key.clone());
                collect_strings(item, into);
            }
        }
        _ => {}
    }
}

/// Scripted handler outcomes beyond the last handler call: they never happen. The messages
/// of one `generate` group share their outcomes' lines: one smell for the line, with a count.
fn unused_outcomes(scenario: &WrittenScenario<'_>, record: &Record) -> Vec<Smell> {
    let calls = record.world.handler_calls();
    let order: HashMap<&str, usize> = scenario
        .messages
        .iter()
        .enumerate()
        .map(|(index, message)| (message.id.as_str(), index))
        .collect();
    let mut ids: Vec<&String> = scenario.outcome_positions.keys().collect();
    ids.sort_by_key(|id| (order.get(id.as_str()).copied().unwrap_or(usize::MAX), *id));
    // Per line of the first unused outcome: the messages, how many calls each had and how
    // many outcomes are left (the same for all: they share the outcome list).
    let mut lines: Vec<(Position, Vec<&str>, u64, u64)> = Vec::new();
    for id in ids {
        let positions = &scenario.outcome_positions[id];
        let made = calls.get(id).copied().unwrap_or(0);
        let Some(position) = usize::try_from(made)
            .ok()
            .and_then(|made| positions.get(made))
        else {
            continue;
        };
        let unused = positions.len() as u64 - made;
        match lines.iter_mut().find(|(at, ..)| at == position) {
            Some((_, ids, ..)) => ids.push(id),
            None => lines.push((*position, vec![id.as_str()], made, unused)),
        }
    }
    lines
        .into_iter()
        .map(|(position, ids, made, unused)| {
            let calls_made = match made {
                0 => "never called".to_owned(),
                1 => "called once".to_owned(),
                n => format!("called {n} times"),
            };
            let message = match ids.as_slice() {
                [id] => format!(
                    "the {} handler outcome of `{id}` {} never used: the handler is {calls_made} for `{id}`",
                    ordinal(made + 1),
                    if unused == 1 {
                        "is".to_owned()
                    } else {
                        format!("and the {unused} from there are")
                    },
                ),
                [first, .., last] => format!(
                    "the handler outcomes of {} messages written here (`{first}` to `{last}`) are never used from the {} on: the handler is {calls_made} for each",
                    ids.len(),
                    ordinal(made + 1),
                ),
                [] => unreachable!("a line has a message"),
            };
            Smell {
                id: UNUSED_OUTCOMES,
                position,
                message,
            }
        })
        .collect()
}

/// Steps after the last one that changed anything, once the queue is drained, that either
/// repeat an earlier check of the empty queue or check nothing at all.
fn idle_trailing_steps(steps: &[StepFacts]) -> Vec<Smell> {
    let first_trailing = steps
        .iter()
        .rposition(|step| step.changed)
        .map_or(0, |last| last + 1);
    let mut smells = Vec::new();
    let mut seen: Vec<(&str, Option<&Value>, usize)> = Vec::new();
    for (index, step) in steps.iter().enumerate().skip(first_trailing) {
        if !step.drained || step.name == "expect" {
            continue;
        }
        let number = index + 1;
        let message = match step.name {
            "process" | "replay" => {
                let earlier = seen
                    .iter()
                    .find(|(name, returned, _)| {
                        *name == step.name && *returned == step.returned.as_ref()
                    })
                    .map(|(_, _, number)| *number);
                seen.push((step.name, step.returned.as_ref(), number));
                match earlier {
                    Some(earlier) => format!(
                        "step {number} ({}) repeats step {earlier} on a drained queue and changes nothing",
                        step.name
                    ),
                    None => continue,
                }
            }
            name => format!(
                "step {number} ({name}) comes after the queue is drained and changes nothing"
            ),
        };
        smells.push(Smell {
            id: IDLE_TRAILING_STEP,
            position: step.position,
            message,
        });
    }
    smells
}

#[cfg(test)]
mod tests {
    use crate::contracts::builtin::Builtin;
    use crate::contracts::contract::Scenario;
    use crate::text::source::SourceFile;

    fn smells_of(text: &str) -> Vec<String> {
        let file = SourceFile::from_text("t.yaml", text);
        let scenario = crate::contracts::dlq_consumer::loading::load(&file).unwrap();
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

    const HEAD: &str = "contract: dlq-consumer\nname: t\nrules: [dlq-consumer/success]\n";

    #[test]
    fn a_clean_scenario_has_no_smells() {
        let text = format!(
            "{HEAD}messages: [{{id: a, body: x}}]\nhandler: {{a: [ok]}}\nsteps:\n  - process: ok\n  - process: none\n"
        );
        assert_eq!(smells_of(&text), Vec::<String>::new());
    }

    #[test]
    fn a_message_never_delivered_nor_named_is_a_smell() {
        let text = format!(
            "{HEAD}messages:\n  - {{id: a, body: x}}\n  - {{id: b, body: y}}\n  - {{id: c, body: z}}\nhandler: {{a: [ok]}}\nsteps:\n  - process: ok\nexpect:\n  pending: [b, c]\n"
        );
        assert_eq!(smells_of(&text), Vec::<String>::new());
        let text = text.replace("pending: [b, c]", "pending: [b]");
        assert_eq!(smells_of(&text).len(), 1);
        let text = format!(
            "{HEAD}messages:\n  - {{id: a, body: x}}\n  - {{id: b, body: y}}\nhandler: {{a: [ok]}}\nsteps:\n  - process: ok\n"
        );
        assert_eq!(
            smells_of(&text),
            [
                "6:5: never-delivered: message `b` is never delivered and no expectation names it: process it, expect it somewhere, or leave it out"
            ]
        );
    }

    #[test]
    fn outcomes_beyond_the_last_handler_call_are_a_smell_at_the_first_unused_one() {
        let text = format!(
            "{HEAD}messages: [{{id: a, body: x}}]\nhandler:\n  a: [ok, crash, ok]\nsteps:\n  - process: ok\n"
        );
        assert_eq!(
            smells_of(&text),
            [
                "6:11: unused-outcomes: the 2nd handler outcome of `a` and the 2 from there are never used: the handler is called once for `a`"
            ]
        );
    }

    #[test]
    fn repeated_checks_of_a_drained_queue_and_idle_steps_at_the_end_are_smells() {
        let text = format!(
            "{HEAD}messages: [{{id: a, body: x}}]\nhandler: {{a: [ok]}}\nsteps:\n  - process: ok\n  - process: none\n  - expect: {{pending: []}}\n  - process: none\n  - recover\n  - restart\n"
        );
        assert_eq!(
            smells_of(&text),
            [
                "10:5: idle-trailing-step: step 4 (process) repeats step 2 on a drained queue and changes nothing",
                "11:5: idle-trailing-step: step 5 (recover) comes after the queue is drained and changes nothing",
                "12:5: idle-trailing-step: step 6 (restart) comes after the queue is drained and changes nothing",
            ]
        );
    }

    #[test]
    fn generated_messages_never_delivered_or_with_unused_outcomes_are_one_smell_a_line() {
        let text = format!(
            "{HEAD}generate:\n  - {{count: 3, id: \"m-{{n}}\", body: \"b-{{n}}\", handler: [ok, ok]}}\n  - {{count: 1, id: \"p-{{n}}\", body: q, handler: [ok]}}\nsteps:\n  - process: ok\n"
        );
        assert_eq!(
            smells_of(&text),
            [
                "5:5: never-delivered: 2 messages written here (`m-2` to `m-3`) are never delivered and no expectation names them: process them, expect them somewhere, or leave them out",
                "5:54: unused-outcomes: the handler outcomes of 2 messages written here (`m-2` to `m-3`) are never used from the 1st on: the handler is never called for each",
                "5:58: unused-outcomes: the 2nd handler outcome of `m-1` is never used: the handler is called once for `m-1`",
                "6:5: never-delivered: message `p-1` is never delivered and no expectation names it: process it, expect it somewhere, or leave it out",
                "6:48: unused-outcomes: the 1st handler outcome of `p-1` is never used: the handler is never called for `p-1`",
            ]
        );
    }

    #[test]
    fn idle_steps_before_the_last_change_are_not_trailing() {
        let text = format!(
            "{HEAD}handler: {{a: [ok]}}\nsteps:\n  - process: none\n  - recover\n  - send: {{id: a, body: x}}\n  - process: ok\n  - process: none\n"
        );
        assert_eq!(smells_of(&text), Vec::<String>::new());
    }
}
