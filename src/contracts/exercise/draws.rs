//! The constructor's `draw:` and `refused:` values of `exercise.yaml`, held to the reference:
//! the first values must make an instance (explore, smoke and a starter spec make it from
//! them), every value `refused:` lists must be refused, and where `refused:` is given every
//! `draw:` value must be accepted. What the reference answers otherwise is an error of
//! `exercise.yaml`, told at the value with what the reference raised and how to fix it.
//!
//! Asking costs the reference's process, so the commands that run the reference anyway ask
//! (lint, explore), not every load of the exercise.

use serde_json::{Map, Value};

use super::definition::{Arg, Exercise};
use crate::model::implementation::Reply;
use crate::text::spec_error::SpecError;

/// The errors of `exercise`'s constructor draws, `make` being the reference's answer to a
/// `create` with the arguments given (`None` when it could not be asked: nothing is claimed).
pub(crate) fn errors(
    exercise: &Exercise,
    make: &mut dyn FnMut(&Map<String, Value>) -> Option<Reply>,
) -> Vec<SpecError> {
    let first = exercise.create.first_draws();
    let Some(lead) = exercise
        .create
        .written_args()
        .find(|arg| !arg.draw.is_empty())
    else {
        return Vec::new();
    };
    let invalid = |arg: &Arg, index: usize, message: String| {
        let at = arg
            .at
            .get(index)
            .copied()
            .unwrap_or(crate::text::source::Position::new(1, 1));
        SpecError::invalid(&exercise.file, at, message)
    };
    match make(&first) {
        Some(Reply::Raised(raised)) => {
            let example = example(lead);
            return vec![invalid(
                lead,
                0,
                format!(
                    "the reference refuses the first values `draw:` gives the constructor ({}): it raises {} ({}); explore, smoke and a starter spec make the instance from the first draws: put first a value the constructor accepts, or list the values it refuses apart under `refused:` ({example})",
                    shown(&first),
                    raised.kind.word(),
                    told(&raised.class, &raised.message),
                ),
            )];
        }
        Some(Reply::Returned(_) | Reply::Undefined) => {}
        Some(Reply::Skipped(_)) | None => return Vec::new(),
    }
    let mut errors = Vec::new();
    for arg in exercise.create.written_args() {
        let Some(accepted) = &arg.accepted else {
            continue;
        };
        for (index, value) in arg.draw.iter().enumerate() {
            let is_first = first.get(&arg.name) == Some(value);
            if is_first {
                continue;
            }
            let mut args = first.clone();
            args.insert(arg.name.clone(), value.clone());
            let written = format!("`{}: {}`", arg.name, crate::text::yaml::flow(value));
            match (index < accepted.len(), make(&args)) {
                (true, Some(Reply::Raised(raised))) => errors.push(invalid(
                    arg,
                    index,
                    format!(
                        "the reference refuses {written}: it raises {} ({}); with `refused:` given, every `draw:` value is one the constructor accepts (explore makes the instance from any of them): move it under `refused:`",
                        raised.kind.word(),
                        told(&raised.class, &raised.message),
                    ),
                )),
                (false, Some(Reply::Returned(_) | Reply::Undefined)) => errors.push(invalid(
                    arg,
                    index,
                    format!(
                        "the reference accepts {written}: it makes a {} of it, yet `refused:` lists the values the constructor refuses: move it under `draw:`, or make the reference refuse it",
                        exercise.class
                    ),
                )),
                _ => {}
            }
        }
    }
    errors
}

/// The arguments as a spec writes them: `{ttl: 0}`.
fn shown(args: &Map<String, Value>) -> String {
    crate::text::yaml::flow(&Value::Object(args.clone()))
}

/// A raised error in one line: `ValueError: ttl must be at least 1`.
fn told(class: &str, message: &str) -> String {
    match message.lines().next().map(str::trim) {
        Some(line) if !line.is_empty() => format!("{class}: {line}"),
        _ => class.to_owned(),
    }
}

/// How `arg` would read with its first draw listed apart: `ttl: {draw: [3, 1], refused: [0]}`.
fn example(arg: &Arg) -> String {
    let flow = |values: &[Value]| crate::text::yaml::flow(&Value::Array(values.to_vec()));
    let (refused, rest) = arg.draw.split_at(1);
    let rest = match &arg.accepted {
        Some(accepted) => &accepted[..accepted.len().saturating_sub(1).min(rest.len())],
        None => rest,
    };
    if rest.is_empty() {
        format!(
            "`{}: {{draw: [VALUE], refused: {}}}`",
            arg.name,
            flow(refused)
        )
    } else {
        format!(
            "`{}: {{draw: {}, refused: {}}}`",
            arg.name,
            flow(rest),
            flow(refused)
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::implementation::Raised;
    use crate::text::source::{Position, SourceFile};

    fn exercise(ttl: &str) -> Exercise {
        let text = format!(
            "exercise: toy\ntitle: t\nclass: Toy\nreference: \"cmd:toy\"\n\
             create:\n  args:\n    ttl: {ttl}\n\
             methods:\n  tick: {{}}\nrules:\n  - id: r\n    says: s\n    decides: [{{call: tick}}]\n"
        );
        let file = SourceFile::from_text("exercise.yaml", text);
        let decl = crate::text::yaml::parse(&file).expect("it parses");
        super::super::definition::check(std::path::Path::new("."), &file, decl).expect("checks")
    }

    /// A reference that accepts a whole number of at least 1 and raises otherwise.
    fn reference(asked: &mut Vec<Value>) -> impl FnMut(&Map<String, Value>) -> Option<Reply> {
        move |args| {
            let ttl = args.get("ttl").cloned().unwrap_or(Value::Null);
            asked.push(ttl.clone());
            Some(match ttl.as_i64() {
                Some(n) if n >= 1 && !ttl.is_f64() => Reply::Undefined,
                _ => Reply::Raised(Raised::invalid_argument("ValueError", "ttl must be >= 1")),
            })
        }
    }

    #[test]
    fn a_first_draw_the_reference_refuses_is_told_at_it_with_what_it_raised_and_the_fix() {
        let toy = exercise("{draw: [0, 3, 1]}");
        let mut asked = Vec::new();
        let errors = errors(&toy, &mut reference(&mut asked));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].position, Position::new(7, 18));
        let message = &errors[0].message;
        assert!(
            message.contains("refuses the first values `draw:` gives the constructor ({ttl: 0})"),
            "{message}"
        );
        assert!(
            message.contains("invalid_argument (ValueError: ttl must be >= 1)"),
            "{message}"
        );
        assert!(
            message.contains("`ttl: {draw: [3, 1], refused: [0]}`"),
            "{message}"
        );
        assert_eq!(asked, [json!(0)], "only the first draw is tried");
    }

    #[test]
    fn a_refused_value_the_reference_accepts_and_an_accepted_one_it_refuses_are_told() {
        let toy = exercise("{draw: [3, 0, 1], refused: [-1, 2]}");
        let mut asked = Vec::new();
        let errors = errors(&toy, &mut reference(&mut asked));
        let told: Vec<(Position, bool)> = errors
            .iter()
            .map(|e| {
                (
                    e.position,
                    e.message.contains("the reference accepts `ttl: 2`"),
                )
            })
            .collect();
        assert_eq!(
            told,
            [(Position::new(7, 21), false), (Position::new(7, 42), true)],
            "{errors:?}"
        );
        assert!(errors[0].message.contains("refuses `ttl: 0`"));
    }

    #[test]
    fn draws_the_reference_agrees_with_say_nothing() {
        for ttl in ["{draw: [3, 0, 1]}", "{draw: [3, 1], refused: [0, -1]}"] {
            let toy = exercise(ttl);
            let mut asked = Vec::new();
            assert!(errors(&toy, &mut reference(&mut asked)).is_empty(), "{ttl}");
        }
        // A reference that cannot be asked claims nothing.
        let toy = exercise("{draw: [0]}");
        assert!(errors(&toy, &mut |_| None).is_empty());
    }
}
