//! The world of an exercise: its given parts (clocks, logs, scripted callables), faked once
//! here, so that every implementation acts on the same parts and every call is seen in order.

use std::collections::VecDeque;

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::definition::{Exercise, GivenKind};
use crate::model::implementation::{Raised, RaisedKind, WorldHost};

/// What a scripted callable does on one call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scripted {
    Returns(Value),
    Raises(Raised),
}

/// One call the solution made of the world, as the timeline tells it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WorldCall {
    pub(crate) part: String,
    pub(crate) method: Option<String>,
    pub(crate) args: Vec<Value>,
    pub(crate) answer: Result<Value, Raised>,
}

/// The given parts of one run.
#[derive(Debug)]
pub(crate) struct ExerciseWorld<'e> {
    exercise: &'e Exercise,
    /// The time, as a JSON number: an integer while every move was one.
    now: f64,
    /// Each log's effects, by key in the order first applied.
    logs: IndexMap<String, IndexMap<String, Vec<Value>>>,
    /// What each callable answers next.
    scripts: IndexMap<String, VecDeque<Scripted>>,
    /// Each callable's calls, their arguments in order.
    calls: IndexMap<String, Vec<Value>>,
    /// The world calls since the last `take_calls`, kept only when the run tells a timeline.
    journal: Option<Vec<WorldCall>>,
}

impl<'e> ExerciseWorld<'e> {
    pub(crate) fn new(
        exercise: &'e Exercise,
        scripts: IndexMap<String, VecDeque<Scripted>>,
        journal: bool,
    ) -> Self {
        let mut world = ExerciseWorld {
            exercise,
            now: 0.0,
            logs: IndexMap::new(),
            scripts,
            calls: IndexMap::new(),
            journal: journal.then(Vec::new),
        };
        for part in &exercise.given {
            match part.kind {
                GivenKind::Log => {
                    world.logs.insert(part.name.clone(), IndexMap::new());
                }
                GivenKind::Callable => {
                    world.calls.insert(part.name.clone(), Vec::new());
                }
                GivenKind::Clock => {}
            }
        }
        world
    }

    /// The time now, as the world answers `now()`.
    pub(crate) fn now(&self) -> Value {
        number(self.now)
    }

    /// Moves the clock by `by` (a spec's `advance`); `Err` says why it cannot.
    pub(crate) fn advance(&mut self, by: &Value) -> Result<(), String> {
        match by.as_f64() {
            Some(by) if by.is_finite() && by >= 0.0 => {
                self.now += by;
                Ok(())
            }
            _ => Err(format!(
                "`advance` takes a number of at least 0 (the time to move the clock by), not {by}"
            )),
        }
    }

    /// What a given part holds for `expect`: a log's effects by key, a callable's calls.
    pub(crate) fn record(&self, part: &str) -> Option<Value> {
        if let Some(log) = self.logs.get(part) {
            return Some(Value::Object(
                log.iter()
                    .map(|(key, effects)| (key.clone(), Value::Array(effects.clone())))
                    .collect(),
            ));
        }
        self.calls
            .get(part)
            .map(|calls| Value::Array(calls.clone()))
    }

    /// How many calls the solution made of each callable.
    pub(crate) fn calls_made(&self) -> IndexMap<String, u64> {
        self.calls
            .iter()
            .map(|(part, calls)| (part.clone(), calls.len() as u64))
            .collect()
    }

    /// The world calls made since the last time they were taken (a timeline's run only).
    pub(crate) fn take_calls(&mut self) -> Vec<WorldCall> {
        self.journal
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn answer(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised> {
        let (part, method) = match call.split_once('.') {
            Some((part, method)) => (part, Some(method)),
            None => (call, None),
        };
        let Some(given) = self.exercise.given.iter().find(|g| g.name == part) else {
            return Err(misuse(format!("the world has no given part `{part}`")));
        };
        match (given.kind, method) {
            (GivenKind::Clock, Some("now")) => Ok(self.now()),
            (GivenKind::Clock, Some("advance")) => Err(misuse(format!(
                "{part}.advance: the clock is moved by the spec's `advance` steps, not by a solution, which reads it with now()"
            ))),
            (GivenKind::Log, Some("apply")) => {
                let (Some(key), Some(effect)) = (args.first(), args.get(1)) else {
                    return Err(misuse(format!("{part}.apply takes a key and an effect")));
                };
                let key = key.as_str().map_or_else(|| key.to_string(), str::to_owned);
                self.logs
                    .entry(part.to_owned())
                    .or_default()
                    .entry(key)
                    .or_default()
                    .push(effect.clone());
                Ok(Value::Null)
            }
            (GivenKind::Log, Some("entries")) => Ok(self.record(part).unwrap_or(json!({}))),
            (GivenKind::Callable, None) => {
                self.calls
                    .entry(part.to_owned())
                    .or_default()
                    .push(Value::Array(args.to_vec()));
                match self.scripts.get_mut(part).and_then(VecDeque::pop_front) {
                    Some(Scripted::Returns(value)) => Ok(value),
                    Some(Scripted::Raises(raised)) => Err(raised),
                    None => Ok(Value::Null),
                }
            }
            (kind, method) => Err(misuse(format!(
                "{part} has no method {}; a {} answers {}",
                method.unwrap_or("call"),
                kind_word(kind),
                kind.methods().join(", ")
            ))),
        }
    }
}

impl WorldHost for ExerciseWorld<'_> {
    fn world_call(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised> {
        let answer = self.answer(call, args);
        if let Some(journal) = &mut self.journal {
            let (part, method) = match call.split_once('.') {
                Some((part, method)) => (part.to_owned(), Some(method.to_owned())),
                None => (call.to_owned(), None),
            };
            journal.push(WorldCall {
                part,
                method,
                args: args.to_vec(),
                answer: answer.clone(),
            });
        }
        answer
    }
}

fn kind_word(kind: GivenKind) -> &'static str {
    match kind {
        GivenKind::Clock => "clock",
        GivenKind::Log => "log",
        GivenKind::Callable => "callable",
    }
}

fn misuse(message: String) -> Raised {
    Raised::new(RaisedKind::Error, "MisuseError", message)
}

/// A number as JSON writes it: an integer where it is whole.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// A scripted answer as a spec writes it: `{returns: VALUE}`, or `{raises: CLASS}` /
/// `{raises: {class: CLASS, message: TEXT, extends: GIVEN}}`.
pub(crate) fn scripted(written: &Value, exercise: &Exercise) -> Result<Scripted, String> {
    let fields = written
        .as_object()
        .filter(|o| o.len() == 1)
        .ok_or("a scripted answer is `{returns: VALUE}` or `{raises: CLASS}`")?;
    let (key, value) = fields.iter().next().expect("one entry");
    match key.as_str() {
        "returns" => Ok(Scripted::Returns(value.clone())),
        "raises" => {
            let (class, message, extends) = match value {
                Value::String(class) => (class.clone(), String::new(), None),
                Value::Object(error) => (
                    error
                        .get("class")
                        .and_then(Value::as_str)
                        .ok_or("a raised error names its `class`")?
                        .to_owned(),
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    error
                        .get("extends")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                ),
                _ => return Err("`raises` takes a class name or {class, message, extends}".into()),
            };
            let base = exercise.errors.get(&class).copied();
            let kind = match base {
                Some(super::definition::ErrorBase::Crash) => RaisedKind::Crash,
                _ => RaisedKind::Error,
            };
            let mut raised = Raised::new(kind, class, message);
            if let Some(extends) = extends {
                if !exercise.errors.contains_key(&extends) {
                    return Err(format!(
                        "`extends: {extends}` names no error of the exercise; its errors are {}",
                        exercise
                            .errors
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                raised = raised.extending(extends);
            }
            Ok(Scripted::Raises(raised))
        }
        other => Err(format!(
            "`{other}` is not a scripted answer{}; write `{{returns: VALUE}}` or `{{raises: CLASS}}`",
            crate::text::suggest::hint(other, &["returns", "raises"])
        )),
    }
}
