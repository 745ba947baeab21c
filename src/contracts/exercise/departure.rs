//! Where a failing run of an exercise departs from its reference: the first step whose call
//! answers otherwise, or after which a state view or a given part's record differs, told in
//! the spec's own values, with the rule `exercise.yaml` says decides that point, and the known
//! mistakes that depart there the same way: every exercise's side of `contracts/departure.rs`,
//! which finds and assembles it.

use serde_json::Value;

use super::Checked;
use super::definition::{Point, raised_word};
use super::scenario::{Mark, Played};
use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{Contract, RunMode};
use crate::contracts::departure::{self, Parts};
use crate::model::cause::{Departure, Ids};
use crate::model::implementation::{Implementation, Raised, Reply};
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::text::truncate;
use crate::text::yaml;

/// Where one run's marks first part from the reference's: the marks of that step in each,
/// and the view or record that differs after it (`None` when the answer differs), with the
/// key of it that differs first, for a mapping.
pub(crate) struct Parting<'r> {
    their: &'r Mark,
    our: &'r Mark,
    view: Option<(String, Option<String>)>,
}

/// The departure of the probed run `played` from the reference's on `checked`'s scenario, and
/// how they part; `None` when the reference does not pass it or the runs part nowhere the
/// marks see.
pub(super) fn find(checked: &Checked, played: &Played) -> Option<(Departure, Parted)> {
    let reference = departure::reference(checked)?;
    let (departure, parting) = departure::departure(checked, &reference, &played.marks)?;
    let parted = Parted {
        words: words(&parting, &mut Ids::told()),
        sides: sides(&parting),
    };
    Some((departure, parted))
}

/// The departure of `played` as [`find`] finds it, the catalogue's mistakes left untried.
pub(super) fn find_alone(checked: &Checked, played: &Played) -> Option<Departure> {
    let reference = departure::reference(checked)?;
    departure::departure_alone(checked, &reference, &played.marks)
}

impl Parts for Checked {
    type Run = Vec<Mark>;
    type Parting<'r> = Parting<'r>;

    fn contract(&self) -> &'static dyn Contract {
        self.contract
    }

    fn reference(&self) -> Builtin {
        self.contract.reference()
    }

    /// Probed: every view and record after every step, to the end (what comes after the step
    /// compared changes no parting before it).
    fn marked(
        &self,
        implementation: &mut dyn Implementation,
        _: Option<usize>,
    ) -> (Outcome, Vec<Mark>) {
        let played = self.scenario.play(implementation, RunMode::Record, true);
        (played.run.outcome, played.marks)
    }

    fn parting<'r>(&self, reference: &'r Vec<Mark>, ours: &'r Vec<Mark>) -> Option<Parting<'r>> {
        parting(reference, ours)
    }

    /// The step explain's picture marks; none for the final expect.
    fn step(&self, parting: &Parting) -> Option<usize> {
        let step = parting.our.step;
        self.scenario.loaded.steps.get(step).map(|_| step)
    }

    /// Alike in shape: the same difference, whatever the values.
    fn alike(&self, (_, one): (&Vec<Mark>, &Parting), (_, other): (&Vec<Mark>, &Parting)) -> bool {
        words(one, &mut Ids::shaped()) == words(other, &mut Ids::shaped())
    }

    /// The spec's own words name the step where they part; a shape names none, and a key is
    /// the shape.
    fn words(&self, parting: &Parting, ids: &mut Ids, context: bool) -> String {
        let said = words(parting, ids);
        if !context || ids.is_shaped() {
            return said;
        }
        let step = parting.our.step;
        let step = match self.scenario.loaded.steps.get(step) {
            Some(placed) => format!(
                "step {} `{}`",
                step + 1,
                truncate::line(&placed.written, 120)
            ),
            None => "the final expect".to_owned(),
        };
        format!("at {step}: {said}")
    }

    /// What `exercise.yaml` says decides the point: the reference's answer to our call, and
    /// the view that differs.
    fn rule(&self, parting: &Parting) -> Option<&'static Rule> {
        let (view, key) = match &parting.view {
            Some((view, key)) => (Some(view.as_str()), key.as_deref()),
            None => (None, None),
        };
        let (their, our) = (parting.their, parting.our);
        let point = Point {
            view,
            key,
            ..Point::answered(&our.call, &our.args, their.reply.as_ref())
        };
        self.scenario.exercise.rule_at(&point)
    }

    fn raised(&self, parting: &Parting) -> Option<Raised> {
        match parting.our.reply.as_ref() {
            Some(Reply::Raised(raised)) => Some(raised.clone()),
            _ => None,
        }
    }
}

/// The first point where `ours` parts from `theirs` (the reference's marks).
fn parting<'r>(theirs: &'r [Mark], ours: &'r [Mark]) -> Option<Parting<'r>> {
    for (their, our) in theirs.iter().zip(ours) {
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
            return Some(Parting {
                their,
                our,
                view: None,
            });
        }
        for (name, value) in &their.after {
            let mine = our.after.iter().find(|(n, _)| n == name).map(|(_, v)| v);
            if mine != Some(value) {
                let key = first_key(value, mine);
                return Some(Parting {
                    their,
                    our,
                    view: Some((name.clone(), key)),
                });
            }
        }
    }
    None
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
fn sides(parting: &Parting) -> (String, String) {
    let ids = &mut Ids::told();
    let (their, our, call) = (parting.their, parting.our, &parting.our.call);
    match &parting.view {
        None => (
            format!("{call} {}", answer(their.reply.as_ref(), ids)),
            format!("{call} {}", answer(our.reply.as_ref(), ids)),
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
fn words(parting: &Parting, ids: &mut Ids) -> String {
    let (their, our, call) = (parting.their, parting.our, &parting.our.call);
    match &parting.view {
        None => {
            // Where the reference raised, what a shape keeps of a value returned instead is
            // that one was: the value is wherever the mistake met the spec's values.
            // A constructor's value is no answer: it makes an instance, or raises.
            let made = matches!(call.as_str(), "create" | "restart");
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
            format!("{call}: the reference {theirs}; yours {ours}")
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
            if ids.is_shaped() && call.starts_with("mutate_") {
                return format!(
                    "after {call}, the change to the view reached your {view}; the reference's stayed as it was"
                );
            }
            let (theirs, ours) = (pick(their), pick(our));
            if let (Some(Value::Array(theirs)), Some(Value::Array(ours))) = (&theirs, &ours) {
                let lacking = theirs.iter().find(|item| !ours.contains(item));
                let extra = ours.iter().find(|item| !theirs.contains(item));
                match (lacking, extra) {
                    (Some(lacking), Some(extra)) => {
                        return format!(
                            "after {call}, {name} holds {} in the reference where yours holds {}",
                            shown(Some(lacking), ids),
                            shown(Some(extra), ids)
                        );
                    }
                    (Some(lacking), None) => {
                        return format!(
                            "after {call}, {name} holds {} in the reference; yours lacks it",
                            shown(Some(lacking), ids)
                        );
                    }
                    (None, Some(extra)) => {
                        return format!(
                            "after {call}, {name} holds {} in yours; the reference's does not",
                            shown(Some(extra), ids)
                        );
                    }
                    // The same items in another order: the order is the difference.
                    (None, None) if ids.is_shaped() => {
                        return format!(
                            "after {call}, {name} holds the reference's items in another order"
                        );
                    }
                    (None, None) => {}
                }
            }
            format!(
                "after {call}, {name} is {} in the reference; yours is {}",
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
