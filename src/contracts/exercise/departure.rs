//! Where a failing run of an exercise departs from its reference: the first step whose call
//! answers otherwise, or after which a state view or a given part's record differs, told in
//! the spec's own values, with the rule `exercise.yaml` says decides that point, and the known
//! mistakes that depart there the same way.

use serde_json::Value;

use super::definition::{Point, raised_word};
use super::scenario::{ExerciseScenario, Mark};
use crate::contracts::contract::RunMode;
use crate::model::cause::{Departure, Ids};
use crate::model::implementation::{Implementation, Reply};
use crate::model::mistake::Mistake;
use crate::text::truncate;
use crate::text::yaml;

/// Where one run's marks first part from another's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parting {
    /// The mark of the step where they part, in the run compared.
    step: usize,
    call: String,
    /// The view or record that differs after it; `None` when the answer differs.
    view: Option<(String, Option<String>)>,
    /// The shape of the difference, without the spec's values: what one mistake shares.
    shape: String,
}

/// The first point where `ours` parts from `theirs` (the reference's marks).
pub(crate) fn parting(theirs: &[Mark], ours: &[Mark]) -> Option<(Parting, usize)> {
    for (at, (their, our)) in theirs.iter().zip(ours).enumerate() {
        if their.call != our.call {
            return None;
        }
        // Where the spec pins `null`, JavaScript's `undefined` is another answer.
        let undefined_for_null = their.pinned
            && matches!(
                (&their.reply, &our.reply),
                (Some(Reply::Returned(Value::Null)), Some(Reply::Undefined))
            );
        if undefined_for_null || !same_answer(their.reply.as_ref(), our.reply.as_ref()) {
            let mut parting = Parting {
                step: our.step,
                call: our.call.clone(),
                view: None,
                shape: String::new(),
            };
            parting.shape = words(&parting, their, our, &mut Ids::shaped());
            return Some((parting, at));
        }
        for (name, value) in &their.after {
            let mine = our.after.iter().find(|(n, _)| n == name).map(|(_, v)| v);
            if mine != Some(value) {
                let key = first_key(value, mine);
                let mut parting = Parting {
                    step: our.step,
                    call: our.call.clone(),
                    view: Some((name.clone(), key)),
                    shape: String::new(),
                };
                parting.shape = words(&parting, their, our, &mut Ids::shaped());
                return Some((parting, at));
            }
        }
    }
    None
}

/// The departure of a run whose marks are `ours` from the reference's on `scenario`, and how
/// they part; `None` when the runs part nowhere the marks see.
pub(crate) fn find(
    scenario: &ExerciseScenario,
    ours: &[Mark],
    reference: &mut dyn Implementation,
    mistaken: &mut dyn FnMut(&Mistake) -> Option<Vec<Mark>>,
) -> Option<(Departure, Parted)> {
    reference.begin_spec().ok()?;
    let theirs = scenario.play(reference, RunMode::Record, true).marks;
    let (parting, at) = parting(&theirs, ours)?;
    let (their, our) = (&theirs[at], &ours[at]);
    let exercise = scenario.exercise;
    let (view, key) = match &parting.view {
        Some((view, key)) => (Some(view.as_str()), key.as_deref()),
        None => (None, None),
    };
    // What decides it: the reference's answer to our call, and the view that differs.
    let point = Point {
        view,
        key,
        ..Point::answered(&parting.call, &our.args, their.reply.as_ref())
    };
    let rule = exercise.rule_at(&point);
    let placed = scenario.loaded.steps.get(parting.step);
    // The step explain's picture marks; none for the final expect.
    let departs_in = placed.is_some().then_some(parting.step);
    let step = match placed {
        Some(placed) => format!(
            "step {} `{}`",
            parting.step + 1,
            truncate::line(&placed.written, 120)
        ),
        None => "the final expect".to_owned(),
    };
    let parted = Parted {
        words: words(&parting, their, our, &mut Ids::told()),
        sides: sides(&parting, their, our),
    };
    let told = format!("at {step}: {}", parted.words);
    let mut mistakes: Vec<&'static Mistake> = exercise
        .mistakes
        .iter()
        .filter(|mistake| {
            mistaken(mistake).is_some_and(|marks| {
                parting_of(&theirs, &marks).is_some_and(|theirs| {
                    theirs.shape == parting.shape && theirs.step == parting.step
                })
            })
        })
        .collect();
    // Those breaking the rule found first.
    mistakes.sort_by_key(|m| rule.is_none_or(|r| m.rule.id != r.id));
    let our_raised = match our.reply.as_ref() {
        Some(Reply::Raised(raised)) => Some(raised.clone()),
        _ => None,
    };
    let departure = Departure {
        rule,
        told,
        key: parting.shape.clone(),
        shape: parting.shape,
        mistakes,
        raised: our_raised,
        step: departs_in,
    };
    Some((departure, parted))
}

/// How two runs part, for `explain` to tell at the step.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parted {
    /// In words, as the cause tells it: `take: the reference returns a; yours returns b`.
    pub(crate) words: String,
    /// What the reference and the implementation did there, each in a few words:
    /// (`take returns a`, `take returns b`), or a view's value in each.
    pub(crate) sides: (String, String),
}

/// Each run's side of the parting: the call's answer, or the view (or its key) after it.
fn sides(parting: &Parting, their: &Mark, our: &Mark) -> (String, String) {
    let ids = &mut Ids::told();
    match &parting.view {
        None => (
            format!("{} {}", parting.call, answer(their.reply.as_ref(), ids)),
            format!("{} {}", parting.call, answer(our.reply.as_ref(), ids)),
        ),
        Some((view, key)) => {
            let name = match key {
                Some(key) => format!("{view}.{key}"),
                None => view.clone(),
            };
            let mut pick = |mark: &Mark| {
                let value = mark.after.iter().find(|(n, _)| n == view).map(|(_, v)| v);
                let value = match (value, key) {
                    (Some(Value::Object(fields)), Some(key)) => fields.get(key),
                    (value, _) => value,
                };
                format!("{name}: {}", shown(value, ids))
            };
            (pick(their), pick(our))
        }
    }
}

fn parting_of(theirs: &[Mark], ours: &[Mark]) -> Option<Parting> {
    parting(theirs, ours).map(|(parting, _)| parting)
}

/// Whether two answers are the same as far as the contract goes: the same value returned, or
/// an error of the same kind and class (a Python `ValueError` and a JavaScript `RangeError`
/// are both `invalid_argument`).
fn same_answer(one: Option<&Reply>, other: Option<&Reply>) -> bool {
    match (one, other) {
        (Some(Reply::Raised(a)), Some(Reply::Raised(b))) => {
            a.kind == b.kind
                && (raised_word(a) == "invalid_argument" || a.class == b.class || b.is_a(&a.class))
        }
        // JavaScript's `undefined` and the reference's `null` (Python's None) are one answer
        // where the spec pins none: a spec that pins `null` tells the difference itself.
        (Some(Reply::Undefined), Some(Reply::Returned(Value::Null)))
        | (Some(Reply::Returned(Value::Null)), Some(Reply::Undefined)) => true,
        (a, b) => a == b,
    }
}

/// The parting in words, each value as `ids` names it: as it is (`told`), or its strings and
/// numbers as placeholders (`shaped`), so that one mistake met with other values reads the same.
/// Two lists are told by the first item each holds that the other lacks, so that one mistake
/// reads alike however long the lists around it are.
fn words(parting: &Parting, their: &Mark, our: &Mark, ids: &mut Ids) -> String {
    match &parting.view {
        None => {
            // Where the reference raised, what a shape keeps of a value returned instead is
            // that one was: the value is wherever the mistake met the spec's values.
            // A constructor's value is no answer: it makes an instance, or raises.
            let made = matches!(parting.call.as_str(), "create" | "restart");
            let told = |reply: Option<&Reply>, ids: &mut Ids| match reply {
                Some(Reply::Returned(_) | Reply::Undefined) if made => {
                    "makes an instance".to_owned()
                }
                reply => answer(reply, ids),
            };
            let ours = match our.reply.as_ref() {
                Some(Reply::Returned(_) | Reply::Undefined)
                    if ids.is_shaped()
                        && !made
                        && matches!(their.reply.as_ref(), Some(Reply::Raised(_))) =>
                {
                    "returns a value".to_owned()
                }
                reply => told(reply, ids),
            };
            let theirs = told(their.reply.as_ref(), ids);
            format!("{}: the reference {theirs}; yours {ours}", parting.call)
        }
        Some((view, key)) => {
            let pick = |mark: &Mark| {
                let value = mark.after.iter().find(|(n, _)| n == view).map(|(_, v)| v);
                match (value, key) {
                    (Some(Value::Object(fields)), Some(key)) => fields.get(key).cloned(),
                    (value, _) => value.cloned(),
                }
            };
            let name = match key {
                Some(key) => format!("{view}.{key}"),
                None => view.clone(),
            };
            // A change to a view that reached the instance is one mistake, whatever changed.
            if ids.is_shaped() && parting.call.starts_with("mutate_") {
                return format!(
                    "after {}, the change to the view reached your {view}; the reference's stayed as it was",
                    parting.call
                );
            }
            let (theirs, ours) = (pick(their), pick(our));
            if let (Some(Value::Array(theirs)), Some(Value::Array(ours))) = (&theirs, &ours) {
                let lacking = theirs.iter().find(|item| !ours.contains(item));
                let extra = ours.iter().find(|item| !theirs.contains(item));
                match (lacking, extra) {
                    (Some(lacking), Some(extra)) => {
                        return format!(
                            "after {}, {name} holds {} in the reference where yours holds {}",
                            parting.call,
                            shown(Some(lacking), ids),
                            shown(Some(extra), ids)
                        );
                    }
                    (Some(lacking), None) => {
                        return format!(
                            "after {}, {name} holds {} in the reference; yours lacks it",
                            parting.call,
                            shown(Some(lacking), ids)
                        );
                    }
                    (None, Some(extra)) => {
                        return format!(
                            "after {}, {name} holds {} in yours; the reference's does not",
                            parting.call,
                            shown(Some(extra), ids)
                        );
                    }
                    // The same items in another order: the order is the difference.
                    (None, None) if ids.is_shaped() => {
                        return format!(
                            "after {}, {name} holds the reference's items in another order",
                            parting.call
                        );
                    }
                    (None, None) => {}
                }
            }
            format!(
                "after {}, {name} is {} in the reference; yours is {}",
                parting.call,
                shown(theirs.as_ref(), ids),
                shown(ours.as_ref(), ids)
            )
        }
    }
}

fn answer(reply: Option<&Reply>, ids: &mut Ids) -> String {
    match reply {
        None => "makes no call".to_owned(),
        Some(Reply::Returned(value)) => format!("returns {}", shown(Some(value), ids)),
        Some(Reply::Undefined) => "returns undefined".to_owned(),
        Some(Reply::Raised(raised)) => format!("raises {}", ids.raised(raised)),
        Some(Reply::Skipped(_)) => "is skipped".to_owned(),
    }
}

/// A value in a departure: strings through `ids`, numbers as they are or `N`, long lists cut.
fn shown(value: Option<&Value>, ids: &mut Ids) -> String {
    fn walk(value: &Value, ids: &mut Ids, budget: &mut usize) -> String {
        if *budget == 0 {
            return "…".to_owned();
        }
        *budget -= 1;
        match value {
            Value::String(text) => yaml::flow(&Value::String(ids.id(text))),
            Value::Number(n) => ids.value(n, "N"),
            Value::Array(items) => {
                let shown: Vec<String> = items.iter().map(|i| walk(i, ids, budget)).collect();
                format!("[{}]", shown.join(", "))
            }
            Value::Object(fields) => {
                let shown: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", walk(v, ids, budget)))
                    .collect();
                format!("{{{}}}", shown.join(", "))
            }
            other => other.to_string(),
        }
    }
    match value {
        Some(value) => truncate::line(&walk(value, ids, &mut 64), 300),
        None => "nothing".to_owned(),
    }
}

/// The first top-level key whose values differ, for a view that is a mapping.
fn first_key(theirs: &Value, ours: Option<&Value>) -> Option<String> {
    let (Value::Object(theirs), Some(Value::Object(ours))) = (theirs, ours) else {
        return None;
    };
    theirs
        .iter()
        .find(|(key, value)| ours.get(*key) != Some(*value))
        .map(|(key, _)| key.clone())
        .or_else(|| ours.keys().find(|k| !theirs.contains_key(*k)).cloned())
}
