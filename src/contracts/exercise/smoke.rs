//! An exercise's smoke plan: the starter's calls (the constructor and each method once, with
//! the first value each argument draws), then each state view once, then, where the exercise
//! declares a `restart`, its snapshot, an instance made from it by the factory and that
//! instance's first view; each answered as the reference answers it on a world of its own.
//! What the reference's answer
//! leaves free is not pinned: a method whose return is `any`, a return of nothing where the
//! method has no word for it (JavaScript's `undefined` being as good there), and the
//! snapshot's shape (plain data, the solution's own). A view is pinned whole, as every spec's
//! `expect` and the departure finder compare it (key order aside, a declared key in either
//! spelling).

use serde_json::Value;

use super::ExerciseContract;
use super::definition::{Exercise, raised_word};
use super::scenario::{constructor_wire, positional};
use super::world::ExerciseWorld;
use crate::contracts::smoke::{SmokeAnswer, SmokePlan, SmokeRequest};
use crate::model::implementation::{Implementation, Raised, Reply};

/// The plan, or `None` where the reference itself does not make an instance from the first
/// draws or breaks: the exercise's own specs tell the author that. The plan ends early where
/// the reference crashes or skips a later request.
pub(crate) fn plan(contract: &'static ExerciseContract) -> Option<SmokePlan> {
    let exercise = &contract.exercise;
    let draws = exercise.create.first_draws();
    let wire = constructor_wire(exercise, &draws, None);
    let mut reference = contract.reference();
    let mut world = ExerciseWorld::new(exercise, Default::default(), false);
    let made = reference.create(exercise.name, &wire, &mut world).ok()?;
    if !made_one(&made) {
        return None;
    }
    let mut requests = vec![SmokeRequest::new_instance(
        wire,
        format!(
            "the reference makes a {} from these arguments",
            exercise.class
        ),
    )];
    let mut asking = Asking {
        exercise,
        reference: &mut reference,
        world: &mut world,
        requests: &mut requests,
    };
    let _ = asking.methods_views_and_restart(&draws);
    Some(SmokePlan {
        world: Box::new(ExerciseWorld::new(exercise, Default::default(), false)),
        requests,
    })
}

/// The reference asked the plan's requests in turn, each written down with its answer.
struct Asking<'a, 'e> {
    exercise: &'e Exercise,
    reference: &'a mut dyn Implementation,
    world: &'a mut ExerciseWorld<'e>,
    requests: &'a mut Vec<SmokeRequest>,
}

impl Asking<'_, '_> {
    /// Each method, each view, the snapshot and the instance the factory makes of it; `None`
    /// where the reference gave no answer to pin, which ends the plan there.
    fn methods_views_and_restart(&mut self, draws: &serde_json::Map<String, Value>) -> Option<()> {
        let exercise = self.exercise;
        for (name, method) in &exercise.methods {
            let args = positional(exercise, name, &method.first_draws());
            self.ask(name, args)?;
        }
        // A view that is also a method was called above.
        for view in exercise.views.keys() {
            if !exercise.methods.contains_key(view) {
                self.ask(view, Vec::new())?;
            }
        }
        let (snapshot, from) = exercise.restart.as_ref()?;
        let Reply::Returned(taken) = self.ask(snapshot, Vec::new())? else {
            return None;
        };
        let restarted = constructor_wire(exercise, draws, Some((from, taken)));
        let remade = self
            .reference
            .create(exercise.name, &restarted, self.world)
            .ok()?;
        if !made_one(&remade) {
            return None;
        }
        let placeholder = constructor_wire(exercise, draws, Some((from, Value::Null)));
        self.requests.push(SmokeRequest::from_snapshot(
            placeholder,
            format!(
                "the reference makes a {class} from its own snapshot with {class}.{from}",
                class = exercise.class
            ),
        ));
        // The instance the factory made is asked a view: a factory that made none, or made
        // something else (the snapshot itself), is told here, at the restart, not by every
        // spec after it.
        let view = exercise.views.keys().next()?;
        self.ask(view, Vec::new())?;
        if let Some(asked) = self.requests.last_mut() {
            asked.why = format!(
                "the {class} that {class}.{from} made answers {view}() as the reference's does",
                class = exercise.class
            );
        }
        Some(())
    }

    /// Asks the reference `method` and writes the request down with the answer it pins.
    fn ask(&mut self, method: &str, args: Vec<Value>) -> Option<Reply> {
        let exercise = self.exercise;
        let reply = self.reference.call(method, &args, self.world).ok()?;
        let view = exercise.views.contains_key(method) && exercise.method(method).is_none();
        let answer = match view {
            true => view_answer(&reply)?,
            false => answer(exercise, method, &reply)?,
        };
        let why = match &answer {
            SmokeAnswer::Any => format!("{method} returns what it likes here"),
            SmokeAnswer::Data => {
                format!("{method}() returns plain data, the snapshot an instance is made from")
            }
            SmokeAnswer::Returns(_) if view => {
                format!("the reference's {method}() after the calls above")
            }
            SmokeAnswer::Returns(_) => "the reference returns this here".to_owned(),
            SmokeAnswer::Raises(_) => "the reference raises this here".to_owned(),
        };
        self.requests
            .push(SmokeRequest::call(method, args, answer, why));
        Some(reply)
    }
}

/// Whether a constructor's (or factory's) reply made an instance.
fn made_one(reply: &Reply) -> bool {
    matches!(reply, Reply::Returned(_) | Reply::Undefined)
}

/// What a correct solution's view answers where the reference's gave `reply`: the same plain
/// data; `None` where the reference gave none, which ends the plan.
fn view_answer(reply: &Reply) -> Option<SmokeAnswer> {
    match reply {
        Reply::Returned(value) => Some(SmokeAnswer::Returns(value.clone())),
        _ => None,
    }
}

/// What a correct solution answers where the reference gave `reply`; `None` where the
/// reference crashed or skipped, which ends the plan.
fn answer(exercise: &Exercise, method: &str, reply: &Reply) -> Option<SmokeAnswer> {
    let declared = exercise.method(method);
    let snapshot = exercise
        .restart
        .as_ref()
        .is_some_and(|(snapshot, _)| snapshot == method);
    Some(match reply {
        Reply::Returned(_) if snapshot && declared.is_none() => SmokeAnswer::Data,
        _ if declared.is_some_and(|m| m.free) => SmokeAnswer::Any,
        Reply::Returned(Value::Null) | Reply::Undefined
            if !declared.is_some_and(|m| m.words.values().any(Value::is_null)) =>
        {
            SmokeAnswer::Any
        }
        Reply::Returned(value) => SmokeAnswer::Returns(value.clone()),
        Reply::Undefined => SmokeAnswer::Returns(Value::Null),
        Reply::Raised(raised) => SmokeAnswer::Raises(raised_as(exercise, raised)?),
        Reply::Skipped(_) => return None,
    })
}

/// A raised error as a spec names it: the exercise's own class, else its kind's word; `None`
/// for a crash.
fn raised_as(exercise: &Exercise, raised: &Raised) -> Option<String> {
    if exercise.errors.contains_key(&raised.class) {
        return Some(raised.class.clone());
    }
    match raised_word(raised) {
        "crash" => None,
        word => Some(word.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::text::source::SourceFile;

    fn exercise() -> Exercise {
        let text = "exercise: toy\ntitle: t\nclass: Toy\nreference: \"cmd:toy\"\n\
                    methods:\n  take: {returns: {none: null}}\n  drop: {}\n  peek: {returns: any}\n\
                    errors:\n  Empty: {}\n\
                    rules:\n  - id: r\n    says: s\n    decides: [{call: take}]\n";
        let file = SourceFile::from_text("exercise.yaml", text);
        let decl = crate::text::yaml::parse(&file).expect("it parses");
        super::super::definition::check(std::path::Path::new("."), &file, decl).expect("it checks")
    }

    #[test]
    fn a_return_of_nothing_is_pinned_only_where_the_method_has_a_word_for_it() {
        let toy = exercise();
        let null = Reply::Returned(Value::Null);
        assert_eq!(
            answer(&toy, "take", &null),
            Some(SmokeAnswer::Returns(Value::Null))
        );
        assert_eq!(answer(&toy, "drop", &null), Some(SmokeAnswer::Any));
        assert_eq!(
            answer(&toy, "drop", &Reply::Undefined),
            Some(SmokeAnswer::Any)
        );
        assert_eq!(
            answer(&toy, "drop", &Reply::Returned(json!(3))),
            Some(SmokeAnswer::Returns(json!(3)))
        );
        // A free return is never pinned, not even a value.
        assert_eq!(
            answer(&toy, "peek", &Reply::Returned(json!(3))),
            Some(SmokeAnswer::Any)
        );
    }

    #[test]
    fn a_raised_error_is_named_as_a_spec_names_it_and_a_crash_ends_the_plan() {
        let toy = exercise();
        let raised = |r: Raised| answer(&toy, "take", &Reply::Raised(r));
        assert_eq!(
            raised(Raised::error("Empty", "none left")),
            Some(SmokeAnswer::Raises("Empty".into()))
        );
        assert_eq!(
            raised(Raised::invalid_argument("ValueError", "bad")),
            Some(SmokeAnswer::Raises("invalid_argument".into()))
        );
        assert_eq!(
            raised(Raised::error("KeyError", "x")),
            Some(SmokeAnswer::Raises("error".into()))
        );
        assert_eq!(raised(Raised::crash("boom")), None);
        assert_eq!(answer(&toy, "take", &Reply::Skipped("no".into())), None);
    }
}
