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

/// A step's mistake: what is wrong, and where in the step it is told, the entry at fault
/// reached through `path`'s keys (its key, or its value); the step itself where `path` is
/// empty.
#[derive(Debug)]
struct Fault {
    why: String,
    path: Vec<String>,
    part: yaml::Part,
}

impl Fault {
    /// The key at the end of `path`, at fault.
    fn key(path: &[&str], why: String) -> Self {
        Fault {
            why,
            path: path.iter().map(|key| (*key).to_owned()).collect(),
            part: yaml::Part::Key,
        }
    }

    /// The value under the keys `path`, at fault.
    fn value(path: &[&str], why: String) -> Self {
        Fault {
            part: yaml::Part::Value,
            ..Fault::key(path, why)
        }
    }

    /// The error, told where the entry at fault is written under the value at `at` (at `at`
    /// where it is not found).
    fn told(self, file: &SourceFile, at: Position) -> SpecError {
        let place = yaml::place(&file.text, at, &self.path, self.part).unwrap_or(at);
        SpecError::invalid(file, place, self.why)
    }
}

impl From<String> for Fault {
    fn from(why: String) -> Self {
        Fault::key(&[], why)
    }
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
                errors.push(why.told(file, at));
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
        Some(expect) => match expectation(exercise, &expect.value, &[]) {
            Ok(expected) => Some((yaml::at(expect), expected)),
            Err(why) => {
                errors.push(why.told(file, yaml::at(expect)));
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
fn step(exercise: &Exercise, written: &Value) -> Result<Step, Fault> {
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
                return Err(Fault::key(
                    &[rest[0]],
                    yaml::not_indented_under(rest[0], first),
                ));
            }
            return Err(Fault::key(
                &[keys[1]],
                format!(
                    "a step holds one key, not {}: put each in an item of its own (`- {}: ...`)",
                    keys.join(", "),
                    keys[1]
                ),
            ));
        }
        other => {
            return Err(Fault::from(format!(
                "a step is a mapping of one key, such as `- create: {{}}`, not {}",
                yaml::flow(other)
            )));
        }
    };
    match kind {
        "create" => {
            let (args, answer) = call_body(exercise, &exercise.create, &body)?;
            Ok(Step::Create { args, answer })
        }
        "expect" => Ok(Step::Expect {
            expected: expectation(exercise, &body, &[kind])?,
        }),
        "advance" if exercise.clock().is_some() => match body.as_f64() {
            Some(by) if by.is_finite() && by >= 0.0 => Ok(Step::Advance { by: body }),
            _ => Err(Fault::value(
                &[kind],
                format!(
                    "`advance` takes the time to move the clock by, a number of at least 0 (`advance: 3`), not `{}`",
                    yaml::flow(&body)
                ),
            )),
        },
        "restart" => match body {
            Value::Null => Ok(Step::Restart),
            Value::Object(map) if map.is_empty() => Ok(Step::Restart),
            other => Err(Fault::value(
                &[kind],
                format!(
                    "`restart` takes nothing (`- restart`), not {}",
                    yaml::flow(&other)
                ),
            )),
        },
        _ => {
            if let Some(view) = kind.strip_prefix("mutate_")
                && exercise.views.get(view).is_some_and(|v| v.deep_copy)
            {
                let Value::Array(ops) = body else {
                    return Err(Fault::value(
                        &[kind],
                        format!(
                            "`{kind}` takes a list of changes: `{kind}: [{{set: {{path: [KEY, 0], value: X}}}}]`"
                        ),
                    ));
                };
                return Ok(Step::Mutate {
                    written: kind.to_owned(),
                    view: view.to_owned(),
                    ops: ops
                        .iter()
                        .map(op)
                        .collect::<Result<_, _>>()
                        .map_err(|why| Fault::value(&[kind], why))?,
                });
            }
            let Some(method) = exercise.methods.get(kind) else {
                return Err(Fault::from(format!(
                    "`{kind}` is not a step of `{}`{}, expected one of {}",
                    exercise.name,
                    crate::text::suggest::hint(kind, exercise.step_kinds),
                    exercise.step_kinds.join(", ")
                )));
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
) -> Result<(Map<String, Value>, Answer), Fault> {
    let step = [method.name.as_str()];
    let fields = match body {
        Value::Null => Map::new(),
        Value::Object(fields) => fields.clone(),
        other => {
            let first = method.written_args().next().map(|a| a.name.as_str());
            return Err(Fault::value(
                &step,
                match first {
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
                },
            ));
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
                return Err(Fault::key(
                    &[step[0], &key],
                    format!(
                        "what `{}` returns is left free (`returns: any` in exercise.yaml), so a spec cannot pin it: take `returns: {}` out",
                        method.name,
                        yaml::flow(&value)
                    ),
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
                    return Err(Fault::value(
                        &[step[0], &key],
                        format!(
                            "`raises` names an error: `invalid_argument`, `error` or a class of the exercise, not {}",
                            yaml::flow(&value)
                        ),
                    ));
                };
                let known: Vec<&str> = ["invalid_argument", "error"]
                    .into_iter()
                    .chain(exercise.errors.keys().map(String::as_str))
                    .collect();
                if !known.contains(&raised.as_str()) && !looks_like_class(&raised) {
                    return Err(Fault::value(
                        &[step[0], &key],
                        format!(
                            "`raises: {}` is no error{}; expected one of {}, or a class name",
                            yaml::flow(&Value::String(raised.clone())),
                            crate::text::suggest::hint(&raised, &known),
                            known.join(", ")
                        ),
                    ));
                }
                answer.raises = Some(raised);
            }
            _ if names.contains(&key.as_str()) => {
                args.insert(key, value);
            }
            _ => {
                return Err(Fault::key(
                    &[step[0], &key],
                    format!(
                        "`{}` is not an argument of `{}`{}, expected one of {}",
                        yaml::flow(&Value::String(key.clone())),
                        method.name,
                        crate::text::suggest::hint(&key, &names),
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    if answer.returns.is_some() && answer.raises.is_some() {
        return Err(Fault::key(
            &[step[0], "raises"],
            format!(
                "`{}` says both `returns` and `raises`: a call does one or the other",
                method.name
            ),
        ));
    }
    let missing: Vec<&str> = method
        .written_args()
        .filter(|a| !args.contains_key(&a.name) && !method.optional.contains(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if let Some(first) = missing.first() {
        return Err(Fault::from(format!(
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
        )));
    }
    Ok((args, answer))
}

fn looks_like_class(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// `expect:` read into (view or record, value) pairs; `path` the keys from where the error's
/// place is sought down to the expectation (`[expect]` in a step).
fn expectation(
    exercise: &Exercise,
    body: &Value,
    path: &[&str],
) -> Result<Vec<(String, Value)>, Fault> {
    if exercise.inline_expect() {
        let view = exercise.views.keys().next().expect("one view").clone();
        // `expect: {state: {...}}` names the one view, as an exercise of several would: read
        // as the view itself, it says the view holds one key, `state`.
        if let Some(Value::Object(inner)) = body
            .as_object()
            .filter(|b| b.len() == 1)
            .and_then(|b| b.get(&view))
        {
            let mut at = path.to_vec();
            at.push(&view);
            return Err(Fault::key(
                &at,
                format!(
                    "`{}` has one state view, `{view}`, so `expect` is that view's value itself, not a mapping of views: as written it expects {view}() to return one key, `{view}`; take `{view}:` out and write what it holds in its place, `expect: {}`",
                    exercise.name,
                    crate::text::truncate::line(&yaml::flow(&Value::Object(inner.clone())), 100)
                ),
            ));
        }
        return Ok(vec![(view, body.clone())]);
    }
    let Value::Object(fields) = body else {
        return Err(Fault::value(
            path,
            format!(
                "`expect` maps each state view or record to its value: `expect: {{{}: ...}}`",
                exercise.views.keys().next().map_or("VIEW", String::as_str)
            ),
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
                let mut at = path.to_vec();
                at.push(key);
                Err(Fault::key(
                    &at,
                    format!(
                        "`{}` is no state view or record of `{}`{}, expected one of {}",
                        yaml::flow(&Value::String(key.clone())),
                        exercise.name,
                        crate::text::suggest::hint(key, &names),
                        names.join(", ")
                    ),
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

    /// The deduper of an outside author's, cut down: one view, a clock, no record.
    fn deduper() -> &'static Exercise {
        let text = "exercise: deduper\ntitle: t\nclass: Deduper\nreference: \"cmd:deduper\"\n\
             given:\n  clock: {kind: clock}\ncreate:\n  args:\n    clock: {given: clock}\n    ttl: {}\n\
             methods:\n  seen:\n    args:\n      key: {}\nviews:\n  state: {}\n\
             rules:\n  - id: r\n    says: s\n    decides: [{call: seen}]\n";
        let file = SourceFile::from_text("exercise.yaml", text);
        let decl = yaml::parse(&file).expect("it parses");
        let exercise = super::super::definition::check(std::path::Path::new("."), &file, decl)
            .expect("it checks");
        Box::leak(Box::new(exercise))
    }

    /// The `count` errors of a spec of the deduper whose steps are `steps`: where, and what.
    fn told(steps: &str, count: usize) -> Vec<(Position, String)> {
        let text = format!("contract: deduper\nname: n\nsteps:\n{steps}");
        let file = SourceFile::from_text("spec.yaml", text);
        let error = load(deduper(), &file).expect_err("refused");
        let told: Vec<_> = error
            .all()
            .map(|e| (e.position, e.message.clone()))
            .collect();
        assert_eq!(told.len(), count, "{told:#?}");
        told
    }

    #[test]
    fn an_error_of_one_key_or_value_of_a_step_points_at_it() {
        let told = told(
            "  - create: {ttl: 4}\n  - seen: {key: a, returns: false, kye: b}\n  - seen:\n      key: a\n      retruns: true\n  - seen: {key: a, raises: 3}\n  - create: {ttl: 4, returns: 1, raises: error}\n  - seen: [a]\n  - restart: now\n  - create: {ttl: 1}\n    seen: {key: a}\n",
            7,
        );
        let at: Vec<Position> = told.iter().map(|(at, _)| *at).collect();
        assert_eq!(
            at,
            [
                Position::new(5, 36),
                Position::new(8, 7),
                Position::new(9, 28),
                Position::new(10, 34),
                Position::new(11, 11),
                Position::new(12, 14),
                Position::new(14, 5),
            ],
            "{told:#?}"
        );
        assert!(
            told[0].1.starts_with("`kye` is not an argument of `seen`"),
            "{told:#?}"
        );
    }

    #[test]
    fn advance_of_no_number_is_told_with_the_files_other_errors() {
        let told = told(
            "  - create: {ttl: 4}\n  - sen: {key: a}\n  - advance: x\n  - advance: -1\n  - advance: \"\\a\"\n",
            4,
        );
        assert!(told[3].1.ends_with("not `\"\\u0007\"`"), "{}", told[3].1);
        assert_eq!(told[1].0, Position::new(6, 14));
        assert_eq!(
            told[1].1,
            "`advance` takes the time to move the clock by, a number of at least 0 (`advance: 3`), not `x`"
        );
        assert_eq!(told[2].0, Position::new(7, 14));
    }

    #[test]
    fn naming_the_one_view_in_expect_is_told_with_the_fix() {
        let told = told(
            "  - create: {ttl: 4}\n  - expect: {state: {ttl: 4, keys: []}}\nexpect:\n  state:\n    ttl: 4\n",
            2,
        );
        assert_eq!(told[0].0, Position::new(5, 14));
        assert!(
            told[0].1.contains("`deduper` has one state view, `state`, so `expect` is that view's value itself")
                && told[0].1.ends_with("take `state:` out and write what it holds in its place, `expect: {ttl: 4, keys: []}`"),
            "{}",
            told[0].1
        );
        assert_eq!(told[1].0, Position::new(7, 3));
        // The view's own keys are the expectation, and an unknown key is the view's business.
        let file = SourceFile::from_text(
            "spec.yaml",
            "contract: deduper\nname: n\nsteps:\n  - create: {ttl: 4}\nexpect: {ttl: 4, keys: []}\n",
        );
        assert!(load(deduper(), &file).is_ok());
    }
}
