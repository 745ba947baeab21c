//! An exercise's smoke plan: the starter's calls (the constructor and each method once, with
//! the first value each argument draws), each answered as the reference answers it on a world
//! of its own. What the reference's answer leaves free is not pinned: a method whose return
//! is `any`, and a return of nothing where the method has no word for it (JavaScript's
//! `undefined` being as good there).

use serde_json::Value;

use super::ExerciseContract;
use super::definition::{Exercise, raised_word};
use super::scenario::{constructor_wire, positional};
use super::world::ExerciseWorld;
use crate::contracts::smoke::{SmokeAnswer, SmokePlan, SmokeRequest};
use crate::model::implementation::{Implementation, Raised, Reply};

/// The plan, or `None` where the reference itself does not make an instance from the first
/// draws or breaks: the exercise's own specs tell the author that.
pub(crate) fn plan(contract: &'static ExerciseContract) -> Option<SmokePlan> {
    let exercise = &contract.exercise;
    let wire = constructor_wire(exercise, &exercise.create.first_draws(), None);
    let calls: Vec<(&str, Vec<Value>)> = exercise
        .methods
        .iter()
        .map(|(name, method)| {
            (
                name.as_str(),
                positional(exercise, name, &method.first_draws()),
            )
        })
        .collect();

    let mut reference = contract.reference();
    let mut world = ExerciseWorld::new(exercise, Default::default(), false);
    let made = reference.create(exercise.name, &wire, &mut world).ok()?;
    if !matches!(made, Reply::Returned(_) | Reply::Undefined) {
        return None;
    }
    let mut requests = vec![SmokeRequest::new_instance(
        wire,
        format!(
            "the reference makes a {} from these arguments",
            exercise.class
        ),
    )];
    for (method, args) in calls {
        let reply = reference.call(method, &args, &mut world).ok()?;
        let answer = match answer(exercise, method, &reply) {
            Some(answer) => answer,
            None => break,
        };
        let why = match &answer {
            SmokeAnswer::Any => format!("{method} returns what it likes here"),
            SmokeAnswer::Returns(_) => "the reference returns this here".to_owned(),
            SmokeAnswer::Raises(_) => "the reference raises this here".to_owned(),
        };
        requests.push(SmokeRequest::call(method, args, answer, why));
    }
    Some(SmokePlan {
        world: Box::new(ExerciseWorld::new(exercise, Default::default(), false)),
        requests,
    })
}

/// What a correct solution answers where the reference gave `reply`; `None` where the
/// reference crashed or skipped, which ends the plan.
fn answer(exercise: &Exercise, method: &str, reply: &Reply) -> Option<SmokeAnswer> {
    let declared = exercise.method(method);
    Some(match reply {
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
