//! Where an outcome-queue implementation first departs from the reference: the first call of
//! a failing run whose answer (a value, a raise, a state view) differs from the built-in
//! reference's answer to the same call on the same scenario; worded in one line, with the rule
//! that decides that answer, and the classic mistakes of the catalogue that answer alike.
//!
//! A spec makes the same calls of every implementation, so the two runs' calls pair up one
//! by one until the departure. A queue's changes show only in its `state()`: a state view that
//! differs is put down to the last step that changed the job it differs in, which the
//! reference's own state after each step tells.

use serde_json::Value;

use super::contract::OutcomeQueueContract;
use super::rules;
use super::scenario::{CallMark, QueueScenario, decision};
use super::spec::normalize_state;
use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{RunMode, mistakes_alike};
use crate::model::cause::{Departure, Ids, told_and_shaped};
use crate::model::implementation::{Implementation, Reply};
use crate::model::mistake::Mistake;
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::text::yaml;

/// The most calls the reference's run may make for the catalogue of classic mistakes to be
/// tried on the scenario: each mistake runs it once more.
const MAX_CATALOGUE_CALLS: usize = 20_000;

/// The departure of a run that made the calls `ours`, against the reference's run of
/// `scenario`. `None` when the reference does not pass the scenario or no answer differs.
pub(crate) fn find(scenario: &QueueScenario, ours: &[CallMark]) -> Option<Departure> {
    let mut reference = Builtin::new();
    reference.begin_spec().ok()?;
    let (run, theirs) = scenario.marked(&mut reference, RunMode::Check, true);
    if !matches!(run.outcome, Outcome::Passed) {
        return None;
    }
    let calls: Vec<&CallMark> = theirs.iter().filter(|call| !call.witness).collect();
    let at = first(&calls, ours)?;
    let found = CallDeparture {
        theirs: calls[at],
        ours: &ours[at],
        earlier: &ours[..at],
        witnessed: theirs.iter().filter(|call| call.witness).collect(),
        steps: scenario.steps.len(),
    };
    let difference = (found.ours.method == "state")
        .then(|| state_difference(found.theirs, found.ours))
        .flatten();
    // A state view checked in a step of its own rule (before and after a call that raises,
    // around a change of a view) is that step's; one an expectation checks, the last step's
    // that changed the job it differs in.
    let own = scenario
        .steps
        .get(found.ours.step)
        .and_then(|(_, step)| decision(step))
        .is_some();
    let attributed = match own {
        true => None,
        false => difference.as_ref().and_then(|d| found.attributed(d)),
    };
    let (told, shape) =
        told_and_shaped(|ids| found.words(difference.as_ref(), attributed, ids, false));
    let key = found.words(difference.as_ref(), None, &mut Ids::shaped(), true);
    let rule = found.rule(scenario, difference.as_ref(), attributed);
    let mut mistakes = known_mistakes(scenario, &calls, ours, at);
    mistakes.sort_by_key(|m| rule.is_none_or(|rule| rule.id != m.rule.id));
    let step = (found.ours.step < scenario.steps.len()).then_some(found.ours.step);
    let raised = match &found.ours.reply {
        Reply::Raised(raised) if !matches!(found.theirs.reply, Reply::Raised(_)) => {
            Some(raised.clone())
        }
        _ => None,
    };
    Some(Departure {
        rule,
        told,
        shape,
        key,
        mistakes,
        raised,
        step,
    })
}

/// The first of the calls `ours` whose answer differs from the reference's answer to the
/// same call (`theirs`, the reference's own calls in order); `None` when none does, or when
/// the calls themselves part (then the runs are not comparable any further).
fn first(theirs: &[&CallMark], ours: &[CallMark]) -> Option<usize> {
    for (at, (mine, their)) in ours.iter().zip(theirs).enumerate() {
        if mine.method != their.method || mine.args != their.args {
            return None;
        }
        if !same_answer(mine.method, &mine.reply, &their.reply) {
            return Some(at);
        }
    }
    None
}

/// Whether two answers to `method` are the same as far as the contract pins them: a state as
/// its normal form, a raise by its kind, what `submit`, `mutate_state` and the constructor
/// return not at all.
fn same_answer(method: &str, one: &Reply, other: &Reply) -> bool {
    let free = matches!(method, "create" | "submit" | "mutate_state");
    match (one, other) {
        (Reply::Raised(a), Reply::Raised(b)) => a.kind == b.kind,
        (Reply::Returned(_) | Reply::Undefined, Reply::Returned(_) | Reply::Undefined) if free => {
            true
        }
        (Reply::Returned(a), Reply::Returned(b)) if method == "state" => {
            normalize_state(a) == normalize_state(b)
        }
        (a, b) => a == b,
    }
}

/// The mistakes of the catalogue whose run departs from the reference's at the same call as
/// `ours`, with the same answer there.
fn known_mistakes(
    scenario: &QueueScenario,
    theirs: &[&CallMark],
    ours: &[CallMark],
    at: usize,
) -> Vec<&'static Mistake> {
    if theirs.len() > MAX_CATALOGUE_CALLS {
        return Vec::new();
    }
    mistakes_alike(&OutcomeQueueContract, |mistaken| {
        let (run, calls) = scenario.marked(mistaken, RunMode::Check, false);
        matches!(run.outcome, Outcome::Mismatch(_))
            && first(theirs, &calls) == Some(at)
            && same_answer(calls[at].method, &calls[at].reply, &ours[at].reply)
    })
}

/// Where two state views first differ: a list, a place in it, and what each holds there.
#[derive(Debug, Clone, PartialEq)]
struct StateDifference {
    list: &'static str,
    at: usize,
    theirs: Option<Value>,
    ours: Option<Value>,
    /// Whether the two lists hold the same jobs, in another order.
    reordered: bool,
}

/// The first difference between the reference's state view and the implementation's.
fn state_difference(theirs: &CallMark, ours: &CallMark) -> Option<StateDifference> {
    let (Reply::Returned(theirs), Reply::Returned(ours)) = (&theirs.reply, &ours.reply) else {
        return None;
    };
    let (theirs, ours) = (normalize_state(theirs), normalize_state(ours));
    for list in ["ready", "done", "quarantine"] {
        let (Some(Value::Array(want)), Some(Value::Array(have))) =
            (theirs.get(list), ours.get(list))
        else {
            if theirs.get(list) != ours.get(list) {
                return Some(StateDifference {
                    list,
                    at: 0,
                    theirs: theirs.get(list).cloned(),
                    ours: ours.get(list).cloned(),
                    reordered: false,
                });
            }
            continue;
        };
        let at = (0..want.len().max(have.len())).find(|&i| want.get(i) != have.get(i));
        if let Some(at) = at {
            let ids = |items: &[Value]| {
                let mut ids: Vec<String> = items.iter().map(job_id).collect();
                ids.sort();
                ids
            };
            return Some(StateDifference {
                list,
                at,
                theirs: want.get(at).cloned(),
                ours: have.get(at).cloned(),
                reordered: want.len() == have.len() && ids(want) == ids(have) && {
                    let (a, b) = (want.get(at), have.get(at));
                    a.map(job_id) != b.map(job_id)
                },
            });
        }
    }
    None
}

/// A job's id as a state view shows it (a `done` entry is the id itself).
fn job_id(job: &Value) -> String {
    match job.get("id").unwrap_or(job) {
        Value::String(id) => id.clone(),
        other => yaml::flow(other),
    }
}

/// Where a run departs, and what is needed to tell it.
struct CallDeparture<'c> {
    theirs: &'c CallMark,
    ours: &'c CallMark,
    /// The implementation's calls before it.
    earlier: &'c [CallMark],
    /// The reference's state after each step it ran, in order.
    witnessed: Vec<&'c CallMark>,
    /// How many steps the spec has (the final expect is the step after them).
    steps: usize,
}

impl CallDeparture<'_> {
    /// The last step before the departing call that changed one of the jobs a state
    /// difference is about, as the reference's states after each step show.
    fn attributed(&self, difference: &StateDifference) -> Option<usize> {
        let ids: Vec<String> = [&difference.theirs, &difference.ours]
            .into_iter()
            .flatten()
            .map(job_id)
            .collect();
        let state_after = |step: usize| {
            self.witnessed
                .iter()
                .rev()
                .find(|w| w.step <= step)
                .and_then(|w| match &w.reply {
                    Reply::Returned(state) => Some(normalize_state(state)),
                    _ => None,
                })
        };
        (0..self.ours.step.min(self.steps)).rev().find(|&step| {
            let after = state_after(step);
            let before = step.checked_sub(1).and_then(state_after);
            ids.iter()
                .any(|id| place(after.as_ref(), id) != place(before.as_ref(), id))
        })
    }

    /// The rule deciding the departing answer: the one the step's expectation follows from, or
    /// for a state view that differs, the one deciding the step that changed the job.
    fn rule(
        &self,
        scenario: &QueueScenario,
        difference: Option<&StateDifference>,
        attributed: Option<usize>,
    ) -> Option<&'static Rule> {
        let step_of = |at: usize| scenario.steps.get(at).map(|(_, step)| step);
        if let Some(rule) = step_of(self.ours.step).and_then(decision) {
            return Some(rule);
        }
        let difference = difference?;
        let decided = step_of(attributed?).and_then(decision);
        if difference.list != "quarantine" {
            return decided;
        }
        let same_job = match (&difference.theirs, &difference.ours) {
            (Some(a), Some(b)) => job_id(a) == job_id(b),
            _ => false,
        };
        let only_reason = same_job
            && differing_fields(difference)
                .iter()
                .all(|field| field == "reason");
        if only_reason {
            decided
        } else if same_job || difference.reordered {
            Some(&rules::ENTRY_RETAINS_DIAGNOSTICS)
        } else {
            decided
        }
    }

    /// The departure in one line: where (unless `without_context`), what the reference
    /// answers, what the implementation did. `attributed` names the step the context is.
    fn words(
        &self,
        difference: Option<&StateDifference>,
        attributed: Option<usize>,
        ids: &mut Ids,
        without_context: bool,
    ) -> String {
        let refused = matches!(self.theirs.reply, Reply::Raised(_));
        let Some(difference) = difference else {
            let call = call_words(self.ours, refused, ids);
            let want = answer(self.ours.method, &self.theirs.reply, true, ids);
            let did = answer(self.ours.method, &self.ours.reply, false, ids);
            return format!("{call}: the reference {want}; yours {did}");
        };
        // After the call of the step that changed the job, else the last call before.
        let calls = || self.earlier.iter().rev().filter(|c| c.method != "state");
        let before = attributed
            .and_then(|step| calls().find(|c| c.step == step))
            .or_else(|| calls().next());
        let own = attributed.is_none() && self.ours.step < self.steps;
        let context = match before {
            _ if without_context && !own => String::new(),
            Some(before) if own => {
                // The state is checked to stay as it was around the step's own call.
                let call = call_words(before, matches!(before.reply, Reply::Raised(_)), ids);
                if ids.is_shaped() {
                    return format!(
                        "{call}: the reference's state() stays as it was; yours changed"
                    );
                }
                format!("{call}: the reference's state() stays as it was; in yours, ")
            }
            Some(before) => format!("after {}, ", call_words(before, false, ids)),
            None => String::new(),
        };
        let list = difference.list;
        let item = |job: &Value, ids: &mut Ids| job_words(job, ids);
        match (&difference.theirs, &difference.ours) {
            (Some(want), Some(have)) if job_id(want) == job_id(have) => {
                let id = ids.id(&job_id(want));
                let fields = differing_fields(difference);
                if ids.is_shaped() {
                    format!(
                        "{context}yours holds {id} in {list} with another {} than the reference's state()",
                        fields.join(", ")
                    )
                } else {
                    let (want, have) = (item(want, ids), item(have, ids));
                    format!("{context}state() holds {have} in {list}; the reference's holds {want}")
                }
            }
            (Some(want), Some(have)) => {
                let (want, have) = (item(want, ids), item(have, ids));
                format!("{context}state() has {have} in {list} where the reference's has {want}")
            }
            (Some(want), None) => {
                let want = item(want, ids);
                format!("{context}state() has nothing more in {list}, the reference's has {want}")
            }
            (None, Some(have)) => {
                let have = item(have, ids);
                format!("{context}state() has {have} more in {list} than the reference's")
            }
            (None, None) => format!("{context}state() differs from the reference's in {list}"),
        }
    }
}

/// Where the job `id` is in a state view (the list, its place, and the job as shown), or
/// `None` when the view does not hold it.
fn place(state: Option<&Value>, id: &str) -> Option<(&'static str, usize, Value)> {
    let state = state?;
    ["ready", "done", "quarantine"]
        .into_iter()
        .find_map(|list| {
            let items = state.get(list)?.as_array()?;
            let at = items.iter().position(|job| job_id(job) == id)?;
            Some((list, at, items[at].clone()))
        })
}

/// The fields of the same job two views show differently.
fn differing_fields(difference: &StateDifference) -> Vec<String> {
    let (Some(Value::Object(want)), Some(Value::Object(have))) =
        (&difference.theirs, &difference.ours)
    else {
        return vec!["value".to_owned()];
    };
    let mut fields: Vec<String> = want
        .iter()
        .filter(|(key, value)| have.get(*key) != Some(*value))
        .map(|(key, _)| key.clone())
        .collect();
    fields.extend(have.keys().filter(|key| !want.contains_key(*key)).cloned());
    fields
}

/// A job of a state view: `a (attempts 1, reason exhausted)`, or its id alone in a shape.
fn job_words(job: &Value, ids: &mut Ids) -> String {
    let id = ids.id(&job_id(job));
    let Value::Object(fields) = job else {
        return id;
    };
    if ids.is_shaped() {
        return id;
    }
    let details: Vec<String> = fields
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "id" | "payload"))
        .map(|(key, value)| {
            format!(
                "{key} {}",
                crate::text::truncate::line(&yaml::flow(value), 60)
            )
        })
        .collect();
    match details.is_empty() {
        true => id,
        false => format!("{id} ({})", details.join(", ")),
    }
}

/// A call as a departure names it: `process("permanent")`, `submit(a)`, `replay(a)`,
/// `RetryQueue(true)`. An argument the reference `refused` (and a constructor's) is left out
/// of a shape: the same mistake is met with many such values.
fn call_words(call: &CallMark, refused: bool, ids: &mut Ids) -> String {
    let argument = call.args.first();
    let value = |ids: &mut Ids| match argument {
        Some(value) => ids.value(yaml::flow(value), "V"),
        None => String::new(),
    };
    match call.method {
        "create" => format!("RetryQueue({})", value(ids)),
        "process" if refused && ids.is_shaped() => "process(an outcome it refuses)".to_owned(),
        "process" if refused => format!("process({})", value(ids)),
        "process" => format!("process({})", argument.map(yaml::flow).unwrap_or_default()),
        "submit" | "replay" => {
            let id = argument.map(job_id).unwrap_or_default();
            format!("{}({})", call.method, ids.id(&id))
        }
        other => format!("{other}()"),
    }
}

/// An answer as a sentence's verb: the reference's (`returns done`, `raises ValueError`,
/// `makes a queue`), or the implementation's, in the past.
fn answer(method: &str, reply: &Reply, reference: bool, ids: &mut Ids) -> String {
    let (returns, raises) = if reference {
        ("returns", "raises")
    } else {
        ("returned", "raised")
    };
    match reply {
        Reply::Returned(_) | Reply::Undefined if method == "create" => if reference {
            "makes a queue"
        } else {
            "made a queue"
        }
        .to_owned(),
        Reply::Returned(Value::Null) => format!("{returns} none"),
        Reply::Returned(value) => format!(
            "{returns} {}",
            // Cut before it is rendered: a reply may be as long as a protocol line.
            crate::text::truncate::line(&yaml::flow(&crate::text::truncate::value(value)), 80)
        ),
        Reply::Undefined => format!("{returns} undefined"),
        Reply::Raised(raised) => format!("{raises} {}", ids.raised(raised)),
        Reply::Skipped(_) => "skipped".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn departure_of(mistake: &str, text: &str) -> Departure {
        crate::contracts::contract::departure_of(&OutcomeQueueContract, mistake, text)
    }

    #[test]
    fn a_wrong_answer_is_the_call_and_both_answers() {
        let text = "contract: outcome-queue\nname: t\nsteps:\n  - create: {max_attempts: 3}\n  - submit: {id: a, payload: p}\n  - process: {outcome: permanent, returns: dead}\n";
        let departure = departure_of("permanent-retried", text);
        assert_eq!(
            departure.told,
            "process(permanent): the reference returns dead; yours returned retry"
        );
        assert_eq!(departure.rule, Some(&rules::PERMANENT_QUARANTINE));
        let mistakes: Vec<&str> = departure.mistakes.iter().map(|m| m.id).collect();
        assert_eq!(mistakes.first(), Some(&"permanent-retried"));
    }

    #[test]
    fn a_state_that_differs_is_put_down_to_the_step_that_changed_the_job() {
        let text = "contract: outcome-queue\nname: t\nsteps:\n  - create: {max_attempts: 1}\n  - submit: {id: a, payload: p}\n  - process: {outcome: transient, returns: dead}\n  - replay: {id: a, returns: true}\nexpect:\n  ready: [{id: a, payload: p, attempts: 0}]\n  done: []\n  quarantine: []\n";
        let departure = departure_of("replay-keeps-reason", text);
        assert_eq!(
            departure.told,
            "after replay(a), state() holds a (attempts 0, reason exhausted) in ready; the reference's holds a (attempts 0)"
        );
        assert_eq!(
            departure.key,
            "yours holds X in ready with another reason than the reference's state()"
        );
        assert_eq!(departure.rule, Some(&rules::REPLAY_RESETS));
    }
}
