//! The outcome-queue spec vocabulary: what a spec file may say, and the values its steps and
//! expectations take; `loading.rs` checks a file and makes its scenario.
//!
//! `max_attempts` and `outcome` take any YAML value, so the invalid arguments the contract
//! rejects (`0`, `2.5`, `true`, `"3"`, `null`, `explode`...) can be written; whether a value is
//! valid is decided by the same functions the built-in queue uses, so a step cannot expect a
//! valid argument to raise or an invalid one to be accepted.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::queue::{QuarantineEntry, ReadyJob};
use super::state_ops::StateOp;
use crate::contracts::contract::Visibility;
use crate::text::yaml::{self, SingleKey, Spanned};

/// An outcome-queue spec: steps on a `RetryQueue`, and the state they must leave.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "OutcomeQueueSpec")]
pub(crate) struct SpecFile {
    /// `outcome-queue`.
    #[expect(
        dead_code,
        reason = "read by serde and the schema: the loader chose this contract by the key already"
    )]
    pub(crate) contract: String,
    /// What the scenario shows, in one line; unique within a suite.
    pub(crate) name: Spanned<String>,
    #[serde(default)]
    pub(crate) description: String,
    /// The ids of the rules this scenario checks (`dlqspec rules` lists them).
    #[serde(default)]
    pub(crate) rules: Vec<Spanned<String>>,
    /// Points the spec is worth in autograder results (`--format gradescope`); default 1.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub(crate) points: Option<Spanned<f64>>,
    /// Who sees the result on an autograder: `visible` (default), `hidden` (only pass or
    /// fail), `after_due_date`, `after_published` (Gradescope's; only pass or fail before).
    #[serde(default)]
    pub(crate) visibility: Option<Visibility>,
    /// Smells `dlqspec lint` is not to report in this spec, each with why it is fine here:
    /// `[{smell: never-delivered, reason: "..."}]`. An allow that suppresses nothing is
    /// reported itself (`stale-allow`).
    #[serde(default)]
    pub(crate) allow: Vec<Spanned<crate::contracts::smell::AllowSpec>>,
    /// What happens, in order; the first step is `create`.
    pub(crate) steps: Spanned<Vec<Spanned<SingleKey<Step>>>>,
    /// The full state after the last step.
    #[serde(default)]
    pub(crate) expect: Option<Spanned<StateSpec>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[schemars(rename = "QueueStep")]
pub(crate) enum Step {
    /// `RetryQueue(max_attempts)`: a fresh queue, dropping any earlier one.
    Create(CreateStep),
    /// `submit(job_id, payload)`.
    Submit(SubmitStep),
    /// `process(outcome)` and what it must return or raise.
    Process(ProcessMapping),
    /// `replay(job_id)` and the boolean it must return.
    Replay(ReplayStep),
    /// Changes a `state()` view; the queue's own state must not change.
    MutateState(Vec<Spanned<SingleKey<StateOp>>>),
    /// The full state now.
    Expect(StateSpec),
}

/// The step kinds, as `Step`'s variants are written, in their order.
pub(crate) const STEP_KINDS: &[&str] = &[
    "create",
    "submit",
    "process",
    "replay",
    "mutate_state",
    "expect",
];

impl Step {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Step::Create(_) => "create",
            Step::Submit(_) => "submit",
            Step::Process(_) => "process",
            Step::Replay(_) => "replay",
            Step::MutateState(_) => "mutate_state",
            Step::Expect(_) => "expect",
        }
    }

    /// The step as a spec writes it, on one line (`process: {outcome: success, returns:
    /// done}`), for a difference found in it: the arguments a student would otherwise open
    /// the spec for. `None` for an `expect`, whose diff is the whole step.
    pub(crate) fn written(&self) -> Option<String> {
        let mut fields = Map::new();
        let expects = |fields: &mut Map<String, Value>, raises: Option<ExpectedError>| {
            if let Some(raises) = raises {
                fields.extend(raises.to_value().as_object().cloned().unwrap_or_default());
            }
        };
        match self {
            Step::Create(create) => {
                fields.insert("max_attempts".into(), create.max_attempts.value.clone());
                expects(&mut fields, create.raises.as_ref().map(|r| r.value));
            }
            Step::Submit(submit) => {
                fields.insert("id".into(), json!(submit.id.value));
                fields.insert("payload".into(), json!(submit.payload));
            }
            Step::Process(process) => {
                fields.insert("outcome".into(), process.outcome.value.clone());
                if let Some(returns) = &process.returns {
                    let written = match returns.value {
                        ProcessReturn::None => json!("none"),
                        other => other.to_value(),
                    };
                    fields.insert("returns".into(), written);
                }
                expects(&mut fields, process.raises.as_ref().map(|r| r.value));
            }
            Step::Replay(replay) => {
                fields.insert("id".into(), json!(replay.id));
                fields.insert("returns".into(), json!(replay.returns.value));
            }
            Step::MutateState(ops) => {
                let ops: Vec<Value> = ops
                    .iter()
                    .map(|op| {
                        let mut wire = op.value.0.to_wire();
                        let name = wire
                            .as_object_mut()
                            .and_then(|o| o.remove("op"))
                            .unwrap_or(Value::Null);
                        json!({ name.as_str().unwrap_or_default(): wire })
                    })
                    .collect();
                return Some(format!("mutate_state: {}", yaml::flow(&Value::Array(ops))));
            }
            Step::Expect(_) => return None,
        }
        Some(format!(
            "{}: {}",
            self.name(),
            yaml::flow(&Value::Object(fields))
        ))
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateStep {
    /// Passed to the constructor as written, valid or not.
    pub(crate) max_attempts: Spanned<Value>,
    #[serde(default)]
    pub(crate) raises: Option<Spanned<ExpectedError>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SubmitStep {
    pub(crate) id: Spanned<String>,
    pub(crate) payload: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProcessStep {
    /// Passed to `process` as written, valid or not.
    pub(crate) outcome: Spanned<Value>,
    #[serde(default)]
    pub(crate) returns: Option<Spanned<ProcessReturn>>,
    #[serde(default)]
    pub(crate) raises: Option<Spanned<ExpectedError>>,
}

/// A `process` step: its mapping, or, for an outcome written where the mapping goes
/// (`process: okay`), an error that shows the mapping and the nearest outcome.
#[derive(Debug, Clone)]
pub(crate) struct ProcessMapping(pub ProcessStep);

impl std::ops::Deref for ProcessMapping {
    type Target = ProcessStep;

    fn deref(&self) -> &ProcessStep {
        &self.0
    }
}

/// Written exactly as a `ProcessStep`.
impl JsonSchema for ProcessMapping {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        ProcessStep::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        ProcessStep::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        ProcessStep::json_schema(generator)
    }
}

impl<'de> Deserialize<'de> for ProcessMapping {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MappingVisitor;

        impl<'de> serde::de::Visitor<'de> for MappingVisitor {
            type Value = ProcessMapping;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping `{outcome: success, returns: done}`")
            }

            fn visit_str<E: serde::de::Error>(self, word: &str) -> Result<Self::Value, E> {
                let near = crate::text::suggest::hint(word, &OUTCOMES);
                Err(E::custom(format!(
                    "`process` takes a mapping, not a word: `{word}` is not an outcome{near}, expected one of {}; write `process: {{outcome: success, returns: done}}`",
                    OUTCOMES.join(", ")
                )))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                ProcessStep::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ProcessMapping)
            }
        }

        deserializer.deserialize_any(MappingVisitor)
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "QueueReplayStep")]
pub(crate) struct ReplayStep {
    pub(crate) id: String,
    pub(crate) returns: Spanned<bool>,
}

/// The errors a spec can expect, by their language-neutral kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ExpectedError {
    /// Python `ValueError`, JavaScript `RangeError`.
    InvalidArgument,
}

impl ExpectedError {
    pub(crate) fn to_value(self) -> Value {
        match self {
            ExpectedError::InvalidArgument => json!({ "raises": "invalid_argument" }),
        }
    }
}

/// What `process` returns; `none` is Python `None` / JavaScript `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "QueueProcessReturn")]
pub(crate) enum ProcessReturn {
    Done,
    Retry,
    Dead,
    None,
}

impl ProcessReturn {
    /// The value on the wire.
    pub(crate) fn to_value(self) -> Value {
        match self {
            ProcessReturn::Done => json!("done"),
            ProcessReturn::Retry => json!("retry"),
            ProcessReturn::Dead => json!("dead"),
            ProcessReturn::None => Value::Null,
        }
    }
}

/// The whole state: every list must be written, so an expectation never checks half a queue.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateSpec {
    pub(crate) ready: Vec<ReadyJob>,
    pub(crate) done: Vec<String>,
    pub(crate) quarantine: Vec<QuarantineEntry>,
}

impl StateSpec {
    /// The state as `state()` returns it, keys in the contract's order.
    pub(crate) fn to_value(&self) -> Value {
        json!(self)
    }
}

/// A state view as an implementation returned it, with the contract's keys first, so a diff
/// lines up whatever order the implementation used.
pub(crate) fn normalize_state(view: &Value) -> Value {
    let Value::Object(fields) = view else {
        return view.clone();
    };
    let entries = |key: &str, order: &[&str]| -> Option<Value> {
        match fields.get(key)? {
            Value::Array(items) => Some(items.iter().map(|i| ordered(i, order)).collect()),
            other => Some(other.clone()),
        }
    };
    let mut out = Map::new();
    let lists = [
        ("ready", entries("ready", &["id", "payload", "attempts"])),
        ("done", fields.get("done").cloned()),
        (
            "quarantine",
            entries("quarantine", &["id", "payload", "attempts", "reason"]),
        ),
    ];
    for (key, value) in lists {
        if let Some(value) = value {
            out.insert(key.to_owned(), value);
        }
    }
    for (key, value) in fields {
        if !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

fn ordered(item: &Value, order: &[&str]) -> Value {
    let Value::Object(fields) = item else {
        return item.clone();
    };
    let mut out = Map::new();
    for key in order {
        if let Some(value) = fields.get(*key) {
            out.insert((*key).to_owned(), value.clone());
        }
    }
    for (key, value) in fields {
        if !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

/// A raw argument as the messages show it: JSON, the same in every language.
pub(crate) fn shown(value: &Value) -> String {
    value.to_string()
}

/// The largest integer every implementation reads exactly: JavaScript's numbers are doubles,
/// and Java's `long` holds any JSON integer up to this. docs/protocol.md promises no larger one.
pub(crate) const MAX_PORTABLE_INTEGER: u64 = (1 << 53) - 1;

/// Why a `max_attempts` is one the lesson's languages read differently, so that no spec may
/// send it: a whole number written with a fraction (`3.0` is the integer 3 to JavaScript, a
/// float to Python), or an integer beyond 2^53 - 1 (a JavaScript number rounds it).
pub(crate) fn unportable_number(raw: &Value) -> Option<String> {
    let Value::Number(number) = raw else {
        return None;
    };
    let beyond = match (number.as_u64(), number.as_i64()) {
        (Some(n), _) => n > MAX_PORTABLE_INTEGER,
        (None, Some(n)) => n.unsigned_abs() > MAX_PORTABLE_INTEGER,
        (None, None) => false,
    };
    if beyond {
        return Some(format!(
            "`{number}` is beyond 2^53 - 1, which a JavaScript number cannot hold exactly, so implementations would read different budgets: write an integer from -9007199254740991 to 9007199254740991"
        ));
    }
    let float = number.as_f64().filter(|_| number.is_f64())?;
    (float.fract() == 0.0).then(|| {
        format!(
            "`{}` is a whole number written with a fraction: JavaScript reads it as the integer {float:.0}, Python as a float, so the lesson's languages disagree on it: write {float:.0}, or a true fraction such as 2.5",
            shown(raw)
        )
    })
}

/// The outcomes `process` takes, the common one first.
pub(crate) const OUTCOMES: [&str; 3] = ["success", "transient", "permanent"];
