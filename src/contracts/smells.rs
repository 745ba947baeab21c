//! The scenario smells `dlqspec lint` finds in what a run shows, for every contract alike:
//! each contract tells its run as contract-neutral facts, in its own spec's terms, and this
//! file finds the smells and words them.
//!
//! The facts: each step's place, its name, whether the world differs after it, and whether it
//! checks, answers or only acts (`StepFact`); the outcomes a spec scripts for a thing and how
//! many of them the run used (`ScriptedFact`); the things a spec names that the run never
//! used (`ThingFact`), with what the expectations name. The smells: `idle-trailing-step`
//! (a step after the last change that repeats an earlier call with the same answer, or only
//! acts), `unused-outcomes` (outcomes scripted beyond the calls made) and a thing never used
//! and never expected (dlq-consumer's `never-delivered`). The ids are the catalogue's
//! (`smell.rs`).

use std::collections::HashSet;

use serde_json::Value;

use crate::contracts::contract::{Checkpoint, Smell};
use crate::contracts::smell::{IDLE_TRAILING_STEP, UNUSED_OUTCOMES};
use crate::text::listing::ordinal;
use crate::text::source::Position;

/// What one step did, in no contract's terms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepFact {
    /// Its place among the spec's steps, from 1.
    pub(crate) number: usize,
    pub(crate) position: Position,
    /// The step as the spec names it (`process`, `take`, `restart`).
    pub(crate) name: String,
    /// Whether anything the spec can see differs after it: a state view, a record of the
    /// world, the clock.
    pub(crate) changed: bool,
    /// Whether the world is at rest after it, so that a step changing nothing is idle: a
    /// drained queue for dlq-consumer; always, for a contract without such a notion.
    pub(crate) settled: bool,
    pub(crate) role: Role,
}

/// What a step is for, besides changing the world.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Role {
    /// It checks what it sees (`expect`): never idle.
    Check,
    /// It calls and gets an answer, with what tells one call from another (its arguments and
    /// its answer): idle after the last change only when it repeats an earlier such call.
    Call(Option<Value>),
    /// It only acts (a `restart` of a drained consumer, `advance: 0`): idle after the last
    /// change.
    Act,
}

/// The outcomes a spec scripts for one thing, and how many calls the run made of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScriptedFact<'a> {
    /// The thing, as the spec names it: a message's id, a given part.
    pub(crate) id: &'a str,
    /// Where each scripted outcome is written, in order.
    pub(crate) positions: &'a [Position],
    pub(crate) calls: u64,
}

/// A thing the spec names (a message it writes), and whether the run used it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ThingFact<'a> {
    pub(crate) id: &'a str,
    /// Where it is written; the things one line writes are one smell.
    pub(crate) position: Position,
    pub(crate) used: bool,
}

/// What a recorded run shows of a spec, in no contract's terms.
#[derive(Debug, Default)]
pub(crate) struct Facts<'a> {
    /// Every step that ran, in order.
    pub(crate) steps: Vec<StepFact>,
    /// The scripted things, in the order their smells are told on one line.
    pub(crate) scripted: Vec<ScriptedFact<'a>>,
    /// The things written, in order.
    pub(crate) things: Vec<ThingFact<'a>>,
    /// The run's checkpoints: what the expectations name.
    pub(crate) checkpoints: &'a [Checkpoint],
}

/// The words of a contract's smells, in its spec's terms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Terms {
    pub(crate) idle: IdleWords,
    pub(crate) unused: UnusedWords,
    /// The smell of a thing never used, and its words; `None` where the contract names no
    /// such thing.
    pub(crate) never_used: Option<NeverUsed>,
}

/// The words of an idle step after the last change: `step 4 (process) repeats step 2 on a
/// drained queue and changes nothing`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IdleWords {
    /// How a repeated call is told: `on a drained queue`.
    pub(crate) repeats: &'static str,
    /// Where a step that only acts comes: `after the queue is drained`.
    pub(crate) trails: &'static str,
    /// The fixes of a repeated call and of a step that only acts, each put at the end as
    /// written (`: leave it out`), or nothing (`""`).
    pub(crate) repeat_fix: &'static str,
    pub(crate) act_fix: &'static str,
}

/// The words of outcomes scripted beyond the calls made: `the 2nd handler outcome of `a` is
/// never used: the handler is called once for `a``.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnusedWords {
    /// One scripted outcome: `handler outcome`.
    pub(crate) outcome: &'static str,
    /// The scripted things, in the plural: `messages`.
    pub(crate) things: &'static str,
    /// Who is called, when it is not the thing itself: `the handler` (`the handler is called
    /// once for `a``); `None`: the thing is (`` `charge` is called once ``).
    pub(crate) callee: Option<&'static str>,
    /// The fix, put at the end as written (`: leave it out`), or nothing (`""`).
    pub(crate) fix: &'static str,
}

/// The words of a thing the run never used: `message `b` is never delivered and no
/// expectation names it: process it, expect it somewhere, or leave it out`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NeverUsed {
    /// The catalogue's id of the smell.
    pub(crate) id: &'static str,
    /// The thing and its plural: `message`, `messages`.
    pub(crate) thing: &'static str,
    pub(crate) things: &'static str,
    /// What happens to a used thing, as a participle (`delivered`), and what the spec does
    /// to use it (`process`).
    pub(crate) used: &'static str,
    pub(crate) use_it: &'static str,
}

/// Every smell the facts show, by place.
pub(crate) fn find(facts: &Facts<'_>, terms: &Terms) -> Vec<Smell> {
    let mut smells = match &terms.never_used {
        Some(words) => never_used(&facts.things, facts.checkpoints, words),
        None => Vec::new(),
    };
    smells.extend(unused_outcomes(&facts.scripted, &terms.unused));
    smells.extend(idle_trailing_steps(&facts.steps, &terms.idle));
    smells.sort_by_key(|smell| smell.position);
    smells
}

/// The things no step used and no expectation names: one smell a line, with a count.
fn never_used(
    things: &[ThingFact<'_>],
    checkpoints: &[Checkpoint],
    words: &NeverUsed,
) -> Vec<Smell> {
    let mut named = HashSet::new();
    for checkpoint in checkpoints {
        collect_strings(&checkpoint.expected, &mut named);
    }
    let mut lines: Vec<(Position, Vec<&str>)> = Vec::new();
    for thing in things {
        if thing.used || named.contains(thing.id) {
            continue;
        }
        match lines.iter_mut().find(|(at, _)| *at == thing.position) {
            Some((_, ids)) => ids.push(thing.id),
            None => lines.push((thing.position, vec![thing.id])),
        }
    }
    let NeverUsed {
        id,
        thing,
        things,
        used,
        use_it,
    } = *words;
    lines
        .into_iter()
        .map(|(position, ids)| Smell {
            id,
            position,
            message: match ids.as_slice() {
                [one] => format!(
                    "{thing} `{one}` is never {used} and no expectation names it: {use_it} it, expect it somewhere, or leave it out"
                ),
                [first, .., last] => format!(
                    "{} {things} written here (`{first}` to `{last}`) are never {used} and no expectation names them: {use_it} them, expect them somewhere, or leave them out",
                    ids.len()
                ),
                [] => unreachable!("a line has a thing"),
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

/// Outcomes scripted beyond the last call of their thing: they never happen. The things whose
/// first unused outcome is on one line (the messages of one `generate` group) are one smell.
fn unused_outcomes(scripted: &[ScriptedFact<'_>], words: &UnusedWords) -> Vec<Smell> {
    // Per line of the first unused outcome: the things, how many calls each had and how many
    // outcomes are left (the same for all: they share the outcome list).
    let mut lines: Vec<(Position, Vec<&str>, u64, u64)> = Vec::new();
    for fact in scripted {
        let made = fact.calls;
        let Some(position) = usize::try_from(made)
            .ok()
            .and_then(|made| fact.positions.get(made))
        else {
            continue;
        };
        let unused = fact.positions.len() as u64 - made;
        match lines.iter_mut().find(|(at, ..)| at == position) {
            Some((_, ids, ..)) => ids.push(fact.id),
            None => lines.push((*position, vec![fact.id], made, unused)),
        }
    }
    let UnusedWords {
        outcome,
        things,
        callee,
        fix,
    } = *words;
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
                    "the {} {outcome} of `{id}` {} never used: {}{fix}",
                    ordinal(made + 1),
                    if unused == 1 {
                        "is".to_owned()
                    } else {
                        format!("and the {unused} from there are")
                    },
                    match callee {
                        Some(callee) => format!("{callee} is {calls_made} for `{id}`"),
                        None => format!("`{id}` is {calls_made}"),
                    },
                ),
                [first, .., last] => format!(
                    "the {outcome}s of {} {things} written here (`{first}` to `{last}`) are never used from the {} on: {}{fix}",
                    ids.len(),
                    ordinal(made + 1),
                    match callee {
                        Some(callee) => format!("{callee} is {calls_made} for each"),
                        None => format!("each is {calls_made}"),
                    },
                ),
                [] => unreachable!("a line has a thing"),
            };
            Smell {
                id: UNUSED_OUTCOMES,
                position,
                message,
            }
        })
        .collect()
}

/// Steps after the last one that changed anything, the world at rest, that repeat an earlier
/// call of that stretch with the same answer, or only act.
fn idle_trailing_steps(steps: &[StepFact], words: &IdleWords) -> Vec<Smell> {
    let first_trailing = steps
        .iter()
        .rposition(|step| step.changed)
        .map_or(0, |last| last + 1);
    let mut smells = Vec::new();
    let mut seen: Vec<(&str, Option<&Value>, usize)> = Vec::new();
    for step in &steps[first_trailing.min(steps.len())..] {
        if !step.settled {
            continue;
        }
        let (number, name) = (step.number, step.name.as_str());
        let message = match &step.role {
            Role::Check => continue,
            Role::Call(answer) => {
                let earlier = seen
                    .iter()
                    .find(|(seen_name, seen_answer, _)| {
                        *seen_name == name && *seen_answer == answer.as_ref()
                    })
                    .map(|(_, _, number)| *number);
                seen.push((name, answer.as_ref(), number));
                match earlier {
                    Some(earlier) => format!(
                        "step {number} ({name}) repeats step {earlier} {} and changes nothing{}",
                        words.repeats, words.repeat_fix
                    ),
                    None => continue,
                }
            }
            Role::Act => format!(
                "step {number} ({name}) comes {} and changes nothing{}",
                words.trails, words.act_fix
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
pub(crate) mod tests {
    use serde_json::json;

    use super::*;

    const TERMS: Terms = Terms {
        idle: IdleWords {
            repeats: "on a quiet shelf",
            trails: "after the shelf is quiet",
            repeat_fix: ": ask once",
            act_fix: ": leave it out",
        },
        unused: UnusedWords {
            outcome: "note",
            things: "books",
            callee: Some("the reader"),
            fix: "",
        },
        never_used: Some(NeverUsed {
            id: "never-read",
            thing: "book",
            things: "books",
            used: "read",
            use_it: "read",
        }),
    };

    fn step(number: usize, name: &str, changed: bool, role: Role) -> StepFact {
        StepFact {
            number,
            position: Position::new(number + 10, 5),
            name: name.to_owned(),
            changed,
            settled: true,
            role,
        }
    }

    /// Smells as the tests of every contract compare them: `line:col: id: message`.
    pub(crate) fn told(smells: &[Smell]) -> Vec<String> {
        smells
            .iter()
            .map(|s| {
                format!(
                    "{}:{}: {}: {}",
                    s.position.line, s.position.column, s.id, s.message
                )
            })
            .collect()
    }

    fn idle(steps: Vec<StepFact>) -> Vec<String> {
        told(&find(
            &Facts {
                steps,
                ..Facts::default()
            },
            &TERMS,
        ))
    }

    #[test]
    fn after_the_last_change_a_repeated_call_and_a_step_that_only_acts_are_idle() {
        let call = |answer: &str| Role::Call(Some(json!(answer)));
        let steps = vec![
            step(1, "lend", true, call("ok")),
            step(2, "ask", false, call("none")),
            step(3, "look", false, Role::Check),
            step(4, "ask", false, call("none")),
            step(5, "ask", false, call("other")),
            step(6, "look", false, Role::Check),
            step(7, "dust", false, Role::Act),
        ];
        assert_eq!(
            idle(steps),
            [
                "14:5: idle-trailing-step: step 4 (ask) repeats step 2 on a quiet shelf and changes nothing: ask once",
                "17:5: idle-trailing-step: step 7 (dust) comes after the shelf is quiet and changes nothing: leave it out",
            ]
        );
    }

    #[test]
    fn steps_before_the_last_change_or_while_the_world_is_busy_are_not_idle() {
        let none = || Role::Call(Some(json!("none")));
        let mut busy = step(5, "ask", false, none());
        busy.settled = false;
        let steps = vec![
            step(1, "ask", false, none()),
            step(2, "ask", false, none()),
            step(3, "dust", false, Role::Act),
            step(4, "lend", true, none()),
            busy,
            step(6, "ask", false, none()),
        ];
        assert_eq!(idle(steps), Vec::<String>::new());
    }

    #[test]
    fn outcomes_beyond_the_calls_made_are_one_smell_a_line_at_the_first_unused_one() {
        let one = [
            Position::new(3, 10),
            Position::new(3, 14),
            Position::new(3, 18),
        ];
        let shared = [Position::new(4, 10), Position::new(4, 14)];
        let scripted = vec![
            ScriptedFact {
                id: "a",
                positions: &one,
                calls: 1,
            },
            ScriptedFact {
                id: "b",
                positions: &shared,
                calls: 0,
            },
            ScriptedFact {
                id: "c",
                positions: &shared,
                calls: 0,
            },
            ScriptedFact {
                id: "d",
                positions: &shared,
                calls: 2,
            },
        ];
        let facts = Facts {
            scripted,
            ..Facts::default()
        };
        assert_eq!(
            told(&find(&facts, &TERMS)),
            [
                "3:14: unused-outcomes: the 2nd note of `a` and the 2 from there are never used: the reader is called once for `a`",
                "4:10: unused-outcomes: the notes of 2 books written here (`b` to `c`) are never used from the 1st on: the reader is never called for each",
            ]
        );
        let terms = Terms {
            unused: UnusedWords {
                outcome: "answer",
                callee: None,
                fix: "; script fewer",
                ..TERMS.unused
            },
            ..TERMS
        };
        assert_eq!(
            told(&find(&facts, &terms))[0],
            "3:14: unused-outcomes: the 2nd answer of `a` and the 2 from there are never used: `a` is called once; script fewer"
        );
    }

    #[test]
    fn a_thing_never_used_nor_expected_is_a_smell_once_a_line() {
        let checkpoints = [Checkpoint {
            position: Position::new(9, 1),
            label: "expect".to_owned(),
            expected: json!({"shelf": ["b"], "d": 1}),
            actual: json!(null),
            written: Vec::new(),
        }];
        let at = |line| Position::new(line, 5);
        let thing = |id, line, used| ThingFact {
            id,
            position: at(line),
            used,
        };
        let facts = Facts {
            things: vec![
                thing("a", 2, true),
                thing("b", 3, false),
                thing("c", 4, false),
                thing("d", 5, false),
                thing("e", 5, false),
                thing("f", 6, false),
                thing("g", 6, false),
            ],
            checkpoints: &checkpoints,
            ..Facts::default()
        };
        assert_eq!(
            told(&find(&facts, &TERMS)),
            [
                "4:5: never-read: book `c` is never read and no expectation names it: read it, expect it somewhere, or leave it out",
                "5:5: never-read: book `e` is never read and no expectation names it: read it, expect it somewhere, or leave it out",
                "6:5: never-read: 2 books written here (`f` to `g`) are never read and no expectation names them: read them, expect them somewhere, or leave them out",
            ]
        );
        let terms = Terms {
            never_used: None,
            ..TERMS
        };
        assert_eq!(told(&find(&facts, &terms)), Vec::<String>::new());
    }
}
