//! The dlq-consumer smells `dlqspec lint` reports: what a recorded run shows a spec says in
//! vain, told as the contract-neutral facts `contracts/smells.rs` finds the smells in, in
//! this contract's words.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::journal::WorldEvent;
use super::record::Record;
use super::spec::{MessageSpec, Step};
use crate::contracts::contract::{Checkpoint, Smell};
use crate::contracts::smell::NEVER_DELIVERED;
use crate::contracts::smells::{
    self, Facts, IdleWords, NeverUsed, Role, ScriptedFact, StepFact, Terms, ThingFact, UnusedWords,
};
use crate::text::source::Position;

/// What of a scenario its smells are found in: where its messages, their outcomes and its
/// steps are written.
pub(crate) struct WrittenScenario<'a> {
    pub(crate) messages: &'a [MessageSpec],
    pub(crate) message_positions: &'a [Position],
    pub(crate) outcome_positions: &'a HashMap<String, Arc<[Position]>>,
    pub(crate) steps: &'a [(Position, Step)],
}

/// This contract's words: a message is delivered (received by a `process` step), outcomes are
/// the handler's, and steps after the last change idle on a drained queue.
const TERMS: Terms = Terms {
    idle: IdleWords {
        repeats: "on a drained queue",
        trails: "after the queue is drained",
        repeat_fix: "",
        act_fix: "",
    },
    unused: UnusedWords {
        outcome: "handler outcome",
        things: "messages",
        callee: Some("the handler"),
        fix: "",
    },
    never_used: Some(NeverUsed {
        id: NEVER_DELIVERED,
        thing: "message",
        things: "messages",
        used: "delivered",
        use_it: "process",
    }),
};

pub(crate) fn find(
    scenario: &WrittenScenario<'_>,
    checkpoints: &[Checkpoint],
    record: &Record,
) -> Vec<Smell> {
    let facts = Facts {
        steps: steps(record),
        scripted: scripted(scenario, record),
        things: messages(scenario, record),
        checkpoints,
    };
    smells::find(&facts, &TERMS)
}

/// Every message written, up front or by a `send` step, and whether a step received it.
fn messages<'a>(scenario: &WrittenScenario<'a>, record: &Record) -> Vec<ThingFact<'a>> {
    let received: HashSet<&str> = record
        .world
        .journal()
        .iter()
        .filter_map(|happening| match happening {
            WorldEvent::Received { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    let sent = scenario
        .steps
        .iter()
        .filter_map(|(position, step)| match step {
            Step::Send(message) => Some((message, *position)),
            _ => None,
        });
    scenario
        .messages
        .iter()
        .zip(scenario.message_positions.iter().copied())
        .chain(sent)
        .map(|(message, position)| ThingFact {
            id: message.id.as_str(),
            position,
            used: received.contains(message.id.as_str()),
        })
        .collect()
}

/// Each message's scripted handler outcomes and the handler's calls for it, in the order the
/// messages are written (then by id).
fn scripted<'a>(scenario: &WrittenScenario<'a>, record: &Record) -> Vec<ScriptedFact<'a>> {
    let calls = record.world.handler_calls();
    let order: HashMap<&str, usize> = scenario
        .messages
        .iter()
        .enumerate()
        .map(|(index, message)| (message.id.as_str(), index))
        .collect();
    let mut ids: Vec<&String> = scenario.outcome_positions.keys().collect();
    ids.sort_by_key(|id| (order.get(id.as_str()).copied().unwrap_or(usize::MAX), *id));
    ids.into_iter()
        .map(|id| ScriptedFact {
            id: id.as_str(),
            positions: &scenario.outcome_positions[id],
            calls: calls.get(id).copied().unwrap_or(0),
        })
        .collect()
}

/// What each step did: `process` and `replay` answer, `expect` checks, the rest act; a step
/// idles only on a drained queue (nothing ready or in flight).
fn steps(record: &Record) -> Vec<StepFact> {
    record
        .steps
        .iter()
        .enumerate()
        .map(|(index, step)| StepFact {
            number: index + 1,
            position: step.position,
            name: step.name.to_owned(),
            changed: step.changed,
            settled: step.drained,
            role: match step.name {
                "expect" => Role::Check,
                "process" | "replay" => Role::Call(step.returned.clone()),
                _ => Role::Act,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::contracts::builtin::Builtin;
    use crate::contracts::contract::Scenario;
    use crate::text::source::SourceFile;

    fn smells_of(text: &str) -> Vec<String> {
        let file = SourceFile::from_text("t.yaml", text);
        let scenario = crate::contracts::dlq_consumer::loading::load(&file).unwrap();
        crate::contracts::smells::tests::told(&scenario.smells(&mut Builtin::new()).unwrap().0)
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
