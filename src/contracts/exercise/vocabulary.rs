//! An exercise's specs: the same header every spec has, steps that call the exercise's
//! methods with named arguments, and `expect:` on its state views and given parts' records;
//! checked against `exercise.yaml`, every error of a file told at once.

use std::collections::VecDeque;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::definition::{Exercise, GivenKind, Method};
use super::world::{Scripted, scripted};
use crate::contracts::contract::SpecHeader;
use crate::contracts::spec_file::spec_file;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{SpecError, SpecErrors};
use crate::text::yaml::{self, Blanked, Spanned};

spec_file! {
    /// A spec of an exercise, as written.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(rename = "ExerciseSpec")]
    SpecFile {
        /// What each scripted callable answers, call by call: `{returns: VALUE}` or `{raises: CLASS}`.
        #[serde(default)]
        script: IndexMap<String, Spanned<Vec<Spanned<Value>>>>,
        /// What happens, in order; the first step is `create`.
        steps: Spanned<Vec<Spanned<Value>>>,
        /// The state views (and given parts' records) after the last step.
        #[serde(default)]
        expect: Option<Spanned<Value>>,
    }
}

/// What a call must answer, as the spec pins it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Answer {
    /// The value it must return (a word of the method's `returns` already read).
    pub(crate) returns: Option<Value>,
    /// The error it must raise: `invalid_argument`, `error`, or a class.
    pub(crate) raises: Option<String>,
    /// The step's mapping as written, for `bless` to rewrite whole where the reference
    /// raises what the spec says it returns, or the other way round.
    pub(crate) body: Value,
}

/// One step, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// A new instance, with the spec's arguments (given parts are put in by the run).
    Create {
        args: Map<String, Value>,
        answer: Answer,
    },
    /// A method call with the spec's arguments by name.
    Call {
        method: String,
        args: Map<String, Value>,
        answer: Answer,
    },
    /// A change to a state view, after which the instance's own state must be unchanged.
    Mutate {
        view: String,
        ops: Vec<Value>,
        /// The step as a spec names it, `mutate_VIEW`.
        written: String,
    },
    /// The clock moves on.
    Advance { by: Value },
    /// The instance ends and a new one is made (from its snapshot, where the exercise has one).
    Restart,
    /// The views and records now.
    Expect { expected: Vec<(String, Value)> },
}

impl Step {
    pub(crate) fn kind(&self) -> &str {
        match self {
            Step::Create { .. } => "create",
            Step::Call { method, .. } => method,
            Step::Mutate { written, .. } => written,
            Step::Advance { .. } => "advance",
            Step::Restart => "restart",
            Step::Expect { .. } => "expect",
        }
    }
}

/// A step with where it is written and its text on one line.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub(crate) position: Position,
    pub(crate) step: Step,
    /// The step as the spec writes it, in flow style.
    pub(crate) written: String,
    /// The step as its list item reads (`process: {outcome: permanent}`, `restart`): what a
    /// difference's `the step:` line shows.
    pub(crate) item: String,
}

/// A loaded spec of an exercise.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) header: SpecHeader,
    pub(crate) steps: Vec<Placed>,
    pub(crate) expect: Option<(Position, Vec<(String, Value)>)>,
    pub(crate) scripts: IndexMap<String, VecDeque<Scripted>>,
    /// Where each scripted answer is written, by given part: `lint`'s unused outcomes.
    pub(crate) script_positions: IndexMap<String, Vec<Position>>,
}

/// Parses a spec of `exercise` and checks it, every independent mistake told at once.
pub(crate) fn load(exercise: &Exercise, file: &SourceFile) -> Result<Loaded, SpecError> {
    match yaml::parse_recovering::<SpecFile>(file) {
        Ok(spec) => check(exercise, file, spec, &Blanked::default()),
        Err(broken) => Err(broken.checked(|spec, blanked| check(exercise, file, spec, blanked))),
    }
}

fn check(
    exercise: &Exercise,
    file: &SourceFile,
    spec: SpecFile,
    _blanked: &Blanked,
) -> Result<Loaded, SpecError> {
    let mut errors = SpecErrors::default();
    let invalid = |at: Position, message: String| SpecError::invalid(file, at, message);
    let header = spec.header(file, &mut errors);

    let mut scripts = IndexMap::new();
    let mut script_positions = IndexMap::new();
    let callables: Vec<&str> = exercise
        .given
        .iter()
        .filter(|g| g.kind == GivenKind::Callable)
        .map(|g| g.name.as_str())
        .collect();
    for (part, answers) in &spec.script {
        if !callables.contains(&part.as_str()) {
            errors.push(invalid(
                yaml::at(answers),
                format!(
                    "`{part}` is not a scripted given part{}; {}",
                    crate::text::suggest::hint(part, &callables),
                    if callables.is_empty() {
                        "this exercise has none".to_owned()
                    } else {
                        format!("expected one of {}", callables.join(", "))
                    }
                ),
            ));
            continue;
        }
        let mut queue = VecDeque::new();
        for answer in &answers.value {
            match scripted(&answer.value, exercise) {
                Ok(s) => queue.push_back(s),
                Err(why) => errors.push(invalid(yaml::at(answer), why)),
            }
        }
        scripts.insert(part.clone(), queue);
        script_positions.insert(part.clone(), answers.value.iter().map(yaml::at).collect());
    }

    if spec.steps.value.is_empty() {
        errors.push(invalid(
            yaml::at(&spec.steps),
            "`steps` is empty: the first step is `create`".into(),
        ));
    }
    let mut steps = Vec::new();
    let mut created = false;
    // The line of a `create` the spec says raises, while no later one has made an instance.
    let mut refused: Option<usize> = None;
    for written in &spec.steps.value {
        let at = yaml::at(written);
        match step(exercise, &written.value) {
            Ok(step) => {
                // A restart of no instance makes none (after a refused `create`), but
                // before any `create` it is a step in the wrong place.
                let free = matches!(step, Step::Create { .. } | Step::Advance { .. });
                if !created && !free {
                    errors.push(invalid(
                        at,
                        format!(
                            "`{}` needs an instance: the first step is `create`",
                            step.kind()
                        ),
                    ));
                    created = true;
                } else if let (Some(line), false) = (refused, free || matches!(step, Step::Restart))
                {
                    errors.push(invalid(
                        at,
                        format!(
                            "`{}` needs an instance, but the `create` at line {line} raises, which leaves none: a `create` that makes one comes first",
                            step.kind()
                        ),
                    ));
                    refused = None;
                }
                if let Step::Create { answer, .. } = &step {
                    created = true;
                    refused = answer.raises.is_some().then_some(at.line);
                }
                steps.push(Placed {
                    position: at,
                    step,
                    written: yaml::flow(&written.value),
                    item: match &written.value {
                        Value::Object(fields) if fields.len() == 1 => {
                            let (key, value) = fields.iter().next().expect("one entry");
                            format!("{key}: {}", yaml::flow(value))
                        }
                        other => yaml::flow(other),
                    },
                });
            }
            Err(why) => {
                // A `create` told wrong still makes the instance the steps after it use: their
                // "needs an instance" would follow from this one mistake.
                let kind = match &written.value {
                    Value::Object(fields) => fields.keys().next().map(String::as_str),
                    Value::String(kind) => Some(kind.as_str()),
                    _ => None,
                };
                created |= kind == Some("create");
                errors.push(invalid(at, why));
            }
        }
    }
    if let (Some(line), Some(expect)) = (refused, &spec.expect) {
        errors.push(invalid(
            yaml::at(expect),
            format!(
                "`expect` reads the instance's views, but the `create` at line {line} raises, which leaves none: a `create` that makes one comes first"
            ),
        ));
    }
    let expect = match &spec.expect {
        Some(expect) => match expectation(exercise, &expect.value) {
            Ok(expected) => Some((yaml::at(expect), expected)),
            Err(why) => {
                errors.push(invalid(yaml::at(expect), why));
                None
            }
        },
        None => None,
    };
    errors.check()?;
    let header = header.expect("no error was told, so the header was made");
    Ok(Loaded {
        header,
        steps,
        expect,
        scripts,
        script_positions,
    })
}

/// One step as written: `METHOD: {ARG: VALUE, returns: X}`, a bare `METHOD`, `create: {...}`,
/// `mutate_VIEW: [OPS]`, `advance: N`, `restart`, `expect: {...}`.
fn step(exercise: &Exercise, written: &Value) -> Result<Step, String> {
    let (kind, body) = match written {
        Value::String(kind) => (kind.as_str(), Value::Null),
        Value::Object(fields) if fields.len() == 1 => {
            let (kind, body) = fields.iter().next().expect("one entry");
            (kind.as_str(), body.clone())
        }
        Value::Object(fields) if fields.len() > 1 => {
            let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
            // `- create:` with its arguments on the next lines at its own column: YAML reads
            // them as its siblings, and the call as empty.
            let (first, rest) = (keys[0], &keys[1..]);
            if fields[first].is_null()
                && exercise.method(first).is_some_and(|method| {
                    rest.iter()
                        .all(|key| method.written_args().any(|arg| arg.name == *key))
                })
            {
                return Err(yaml::not_indented_under(rest[0], first));
            }
            return Err(format!(
                "a step holds one key, not {}: put each in an item of its own (`- {}: ...`)",
                keys.join(", "),
                keys[1]
            ));
        }
        other => {
            return Err(format!(
                "a step is a mapping of one key, such as `- create: {{}}`, not {}",
                yaml::flow(other)
            ));
        }
    };
    match kind {
        "create" => {
            let (args, answer) = call_body(exercise, &exercise.create, &body)?;
            Ok(Step::Create { args, answer })
        }
        "expect" => Ok(Step::Expect {
            expected: expectation(exercise, &body)?,
        }),
        "advance" if exercise.clock().is_some() => Ok(Step::Advance { by: body }),
        "restart" => match body {
            Value::Null => Ok(Step::Restart),
            Value::Object(map) if map.is_empty() => Ok(Step::Restart),
            other => Err(format!(
                "`restart` takes nothing (`- restart`), not {}",
                yaml::flow(&other)
            )),
        },
        _ => {
            if let Some(view) = kind.strip_prefix("mutate_")
                && exercise.views.get(view).is_some_and(|v| v.deep_copy)
            {
                let Value::Array(ops) = body else {
                    return Err(format!(
                        "`{kind}` takes a list of changes: `{kind}: [{{set: {{path: [KEY, 0], value: X}}}}]`"
                    ));
                };
                return Ok(Step::Mutate {
                    written: kind.to_owned(),
                    view: view.to_owned(),
                    ops: ops.iter().map(op).collect::<Result<_, _>>()?,
                });
            }
            let Some(method) = exercise.methods.get(kind) else {
                return Err(format!(
                    "`{kind}` is not a step of `{}`{}, expected one of {}",
                    exercise.name,
                    crate::text::suggest::hint(kind, exercise.step_kinds),
                    exercise.step_kinds.join(", ")
                ));
            };
            let (args, answer) = call_body(exercise, method, &body)?;
            Ok(Step::Call {
                method: kind.to_owned(),
                args,
                answer,
            })
        }
    }
}

/// A call's body: its arguments by name, and `returns` or `raises`.
fn call_body(
    exercise: &Exercise,
    method: &Method,
    body: &Value,
) -> Result<(Map<String, Value>, Answer), String> {
    let fields = match body {
        Value::Null => Map::new(),
        Value::Object(fields) => fields.clone(),
        other => {
            let first = method.written_args().next().map(|a| a.name.as_str());
            return Err(match first {
                Some(arg) => format!(
                    "`{}` takes a mapping of its arguments by name: write `{}: {{{arg}: {}}}`",
                    method.name,
                    method.name,
                    yaml::flow(other)
                ),
                None => format!(
                    "`{}` takes no arguments: write `- {}` or `{}: {{returns: ...}}`",
                    method.name, method.name, method.name
                ),
            });
        }
    };
    let names: Vec<&str> = method
        .written_args()
        .map(|a| a.name.as_str())
        .chain(["returns", "raises"])
        .collect();
    let mut args = Map::new();
    let mut answer = Answer {
        body: body.clone(),
        ..Answer::default()
    };
    for (key, value) in fields {
        match key.as_str() {
            "returns" if method.free => {
                return Err(format!(
                    "what `{}` returns is left free (`returns: any` in exercise.yaml), so a spec cannot pin it: take `returns: {}` out",
                    method.name,
                    yaml::flow(&value)
                ));
            }
            "returns" => {
                answer.returns = Some(match value.as_str().and_then(|w| method.words.get(w)) {
                    Some(word) => word.clone(),
                    None => value,
                });
            }
            "raises" => {
                let Value::String(raised) = value else {
                    return Err(format!(
                        "`raises` names an error: `invalid_argument`, `error` or a class of the exercise, not {}",
                        yaml::flow(&value)
                    ));
                };
                let known: Vec<&str> = ["invalid_argument", "error"]
                    .into_iter()
                    .chain(exercise.errors.keys().map(String::as_str))
                    .collect();
                if !known.contains(&raised.as_str()) && !looks_like_class(&raised) {
                    return Err(format!(
                        "`raises: {raised}` is no error{}; expected one of {}, or a class name",
                        crate::text::suggest::hint(&raised, &known),
                        known.join(", ")
                    ));
                }
                answer.raises = Some(raised);
            }
            _ if names.contains(&key.as_str()) => {
                args.insert(key, value);
            }
            _ => {
                return Err(format!(
                    "`{key}` is not an argument of `{}`{}, expected one of {}",
                    method.name,
                    crate::text::suggest::hint(&key, &names),
                    names.join(", ")
                ));
            }
        }
    }
    if answer.returns.is_some() && answer.raises.is_some() {
        return Err(format!(
            "`{}` says both `returns` and `raises`: a call does one or the other",
            method.name
        ));
    }
    let missing: Vec<&str> = method
        .written_args()
        .filter(|a| !args.contains_key(&a.name) && !method.optional.contains(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if let Some(first) = missing.first() {
        return Err(format!(
            "`{}` needs `{first}`{}: write `{}: {{{}}}`",
            method.name,
            if missing.len() > 1 {
                format!(" (and {})", missing[1..].join(", "))
            } else {
                String::new()
            },
            method.name,
            method
                .written_args()
                .map(|a| format!("{}: ...", a.name))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok((args, answer))
}

fn looks_like_class(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// `expect:` read into (view or record, value) pairs.
pub(crate) fn expectation(
    exercise: &Exercise,
    body: &Value,
) -> Result<Vec<(String, Value)>, String> {
    if exercise.inline_expect() {
        let view = exercise.views.keys().next().expect("one view").clone();
        return Ok(vec![(view, body.clone())]);
    }
    let Value::Object(fields) = body else {
        return Err(format!(
            "`expect` maps each state view or record to its value: `expect: {{{}: ...}}`",
            exercise.views.keys().next().map_or("VIEW", String::as_str)
        ));
    };
    let names: Vec<&str> = exercise
        .views
        .keys()
        .map(String::as_str)
        .chain(exercise.recorded_parts().map(|g| g.name.as_str()))
        .collect();
    fields
        .iter()
        .map(|(key, value)| {
            if names.contains(&key.as_str()) {
                Ok((key.clone(), value.clone()))
            } else {
                Err(format!(
                    "`{key}` is no state view or record of `{}`{}, expected one of {}",
                    exercise.name,
                    crate::text::suggest::hint(key, &names),
                    names.join(", ")
                ))
            }
        })
        .collect()
}

/// A change to a view as written (`{set: {path: [...], value: X}}`) in the protocol's form
/// (`{op: set, path: [...], value: X}`).
fn op(written: &Value) -> Result<Value, String> {
    const OPS: [&str; 4] = ["set", "delete", "append", "clear"];
    let Some((name, body)) = written
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
    else {
        return Err(
            "a change is `{set: {path: [...], value: X}}`, `{delete: [...]}`, `{append: {path: [...], value: X}}` or `{clear: [...]}`"
                .into(),
        );
    };
    if !OPS.contains(&name.as_str()) {
        return Err(format!(
            "unknown value `{name}`{}, expected one of {}",
            crate::text::suggest::hint(name, &OPS),
            OPS.join(", ")
        ));
    }
    // `delete` and `clear` take nothing but their path, so the path may stand alone:
    // `{clear: [done]}` is `{clear: {path: [done]}}`.
    let path = match body {
        Value::Array(path) if matches!(name.as_str(), "delete" | "clear") => Some(path),
        _ => body.get("path").and_then(Value::as_array),
    };
    let Some(path) = path else {
        return Err(format!(
            "`{name}` needs a `path`: a list of keys and indexes{}",
            if matches!(name.as_str(), "delete" | "clear") {
                format!(" (`{{{name}: [KEY, 0]}}` or `{{{name}: {{path: [KEY, 0]}}}}`)")
            } else {
                format!(" (`{{{name}: {{path: [KEY], value: X}}}}`)")
            }
        ));
    };
    let mut wire = json!({ "op": name, "path": path });
    if matches!(name.as_str(), "set" | "append") {
        let Some(value) = body.get("value") else {
            return Err(format!("`{name}` needs a `value`"));
        };
        wire["value"] = value.clone();
    }
    Ok(wire)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_and_clear_take_their_path_alone_or_in_a_mapping() {
        let wire = json!({"op": "clear", "path": ["done"]});
        assert_eq!(op(&json!({"clear": ["done"]})), Ok(wire.clone()));
        assert_eq!(op(&json!({"clear": {"path": ["done"]}})), Ok(wire));
        assert_eq!(
            op(&json!({"delete": ["ready", 0]})),
            Ok(json!({"op": "delete", "path": ["ready", 0]}))
        );
        // `set` and `append` carry a value, so their path is never alone.
        let told = op(&json!({"set": ["ready", 0]})).expect_err("a set needs a value");
        assert!(told.contains("`{set: {path: [KEY], value: X}}`"), "{told}");
        let told = op(&json!({"clear": "done"})).expect_err("a path is a list");
        assert!(told.contains("`{clear: [KEY, 0]}`"), "{told}");
    }
}
