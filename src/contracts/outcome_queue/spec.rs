//! The outcome-queue spec vocabulary: what a spec file may say, and the checks made on loading.
//!
//! `max_attempts` and `outcome` take any YAML value, so the invalid arguments the contract
//! rejects (`0`, `2.5`, `true`, `"3"`, `null`, `explode`...) can be written; whether a value is
//! valid is decided by the same functions the built-in queue uses, so a step cannot expect a
//! valid argument to raise or an invalid one to be accepted.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::queue::{AttemptOutcome, QuarantineEntry, ReadyJob, valid_max_attempts};
use super::scenario::QueueScenario;
use super::state_ops::StateOp;
use crate::contracts::contract::{Grading, SpecHeader, Visibility};
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{Gathered, SpecError};
use crate::text::yaml::{self, Blanked, SingleKey, Spanned};

/// An outcome-queue spec: steps on a `RetryQueue`, and the state they must leave.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "OutcomeQueueSpec")]
pub struct SpecFile {
    /// `outcome-queue`.
    pub contract: String,
    /// What the scenario shows, in one line; unique within a suite.
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// The ids of the rules this scenario checks (`dlqspec rules` lists them).
    #[serde(default)]
    pub rules: Vec<Spanned<String>>,
    /// Points the spec is worth in autograder results (`--format gradescope`); default 1.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub points: Option<Spanned<f64>>,
    /// Who sees the result on an autograder: `visible` (default), `hidden` (only pass or
    /// fail), `after_due_date`, `after_published` (Gradescope's; only pass or fail before).
    #[serde(default)]
    pub visibility: Option<Visibility>,
    /// Smells `dlqspec lint` is not to report in this spec, each with why it is fine here:
    /// `[{smell: never-delivered, reason: "..."}]`. An allow that suppresses nothing is
    /// reported itself (`stale-allow`).
    #[serde(default)]
    pub allow: Vec<Spanned<crate::contracts::smell::AllowSpec>>,
    /// What happens, in order; the first step is `create`.
    pub steps: Spanned<Vec<Spanned<SingleKey<Step>>>>,
    /// The full state after the last step.
    #[serde(default)]
    pub expect: Option<Spanned<StateSpec>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[schemars(rename = "QueueStep")]
pub enum Step {
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
pub const STEP_KINDS: &[&str] = &[
    "create",
    "submit",
    "process",
    "replay",
    "mutate_state",
    "expect",
];

impl Step {
    pub fn name(&self) -> &'static str {
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
    pub fn written(&self) -> Option<String> {
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
pub struct CreateStep {
    /// Passed to the constructor as written, valid or not.
    pub max_attempts: Spanned<Value>,
    #[serde(default)]
    pub raises: Option<Spanned<ExpectedError>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitStep {
    pub id: Spanned<String>,
    pub payload: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessStep {
    /// Passed to `process` as written, valid or not.
    pub outcome: Spanned<Value>,
    #[serde(default)]
    pub returns: Option<Spanned<ProcessReturn>>,
    #[serde(default)]
    pub raises: Option<Spanned<ExpectedError>>,
}

/// A `process` step: its mapping, or, for an outcome written where the mapping goes
/// (`process: okay`), an error that shows the mapping and the nearest outcome.
#[derive(Debug, Clone)]
pub struct ProcessMapping(pub ProcessStep);

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
pub struct ReplayStep {
    pub id: String,
    pub returns: Spanned<bool>,
}

/// The errors a spec can expect, by their language-neutral kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedError {
    /// Python `ValueError`, JavaScript `RangeError`.
    InvalidArgument,
}

impl ExpectedError {
    pub fn to_value(self) -> Value {
        match self {
            ExpectedError::InvalidArgument => json!({ "raises": "invalid_argument" }),
        }
    }
}

/// What `process` returns; `none` is Python `None` / JavaScript `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "QueueProcessReturn")]
pub enum ProcessReturn {
    Done,
    Retry,
    Dead,
    None,
}

impl ProcessReturn {
    /// The value on the wire.
    pub fn to_value(self) -> Value {
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
pub struct StateSpec {
    pub ready: Vec<ReadyJob>,
    pub done: Vec<String>,
    pub quarantine: Vec<QuarantineEntry>,
}

impl StateSpec {
    /// The state as `state()` returns it, keys in the contract's order.
    pub fn to_value(&self) -> Value {
        json!(self)
    }
}

/// A state view as an implementation returned it, with the contract's keys first, so a diff
/// lines up whatever order the implementation used.
pub fn normalize_state(view: &Value) -> Value {
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
fn shown(value: &Value) -> String {
    value.to_string()
}

/// The largest integer every implementation reads exactly: JavaScript's numbers are doubles,
/// and Java's `long` holds any JSON integer up to this. docs/protocol.md promises no larger one.
pub const MAX_PORTABLE_INTEGER: u64 = (1 << 53) - 1;

/// Why a `max_attempts` is one the lesson's languages read differently, so that no spec may
/// send it: a whole number written with a fraction (`3.0` is the integer 3 to JavaScript, a
/// float to Python), or an integer beyond 2^53 - 1 (a JavaScript number rounds it).
fn unportable_number(raw: &Value) -> Option<String> {
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
const OUTCOMES: [&str; 3] = ["success", "transient", "permanent"];

/// Whether a queue exists at a point of the spec, as far as loading can tell.
enum QueueAt {
    /// No `create` yet.
    Missing,
    /// The last `create` (at this line) raises, so no queue exists.
    Raised(usize),
    /// A queue exists; the job ids submitted to it so far, with where each was submitted.
    Live(HashMap<String, Position>),
}

/// Parses an outcome-queue spec and checks what the YAML shape cannot, telling every
/// independent mistake at once: after a step that leaves no queue is told, the steps after
/// it are checked as if it had made one, so one missing `create` is one error.
pub fn load(file: &SourceFile) -> Result<QueueScenario, SpecError> {
    match yaml::parse_recovering::<SpecFile>(file) {
        Ok(spec) => check(file, spec, &Blanked::default()),
        // The rest of a broken file is checked too, so that one run tells every mistake.
        Err(broken) => Err(broken.checked(|spec, blanked| check(file, spec, blanked))),
    }
}

/// The checks of [`load`] on a decoded spec. `blanked` says where broken parts of the file
/// were blanked for it to decode: when a blanked step may have been a `create`, whether a
/// queue exists (and which jobs it holds) is not known, and is not checked.
fn check(file: &SourceFile, spec: SpecFile, blanked: &Blanked) -> Result<QueueScenario, SpecError> {
    let queue_known = !blanked.any(&["steps"], "create");
    let invalid = |position: Position, message: String| SpecError::invalid(file, position, message);
    let mut errors = Gathered::default();

    let grading = errors
        .keep(Grading::from_keys(
            file,
            spec.points.as_ref(),
            spec.visibility,
        ))
        .unwrap_or_default();
    let header = errors.keep(SpecHeader::new(
        file,
        super::contract::NAME,
        spec.name,
        spec.description,
        &spec.rules,
        grading,
    ));
    let allow = errors.keep(crate::contracts::smell::allows(file, &spec.allow));
    if spec.steps.value.is_empty() {
        errors.push(invalid(
            yaml::at(&spec.steps),
            "`steps` is empty: the first step is `create: {max_attempts: ...}`".into(),
        ));
    }

    let mut queue = QueueAt::Missing;
    // Whether a queue is there for `what`; when not, an error, and one assumed from then on.
    let needs_queue =
        |queue: &mut QueueAt, what: &str, position: Position, errors: &mut Gathered| {
            let why = match queue {
                QueueAt::Live(_) => return,
                _ if !queue_known => {
                    *queue = QueueAt::Live(HashMap::new());
                    return;
                }
                QueueAt::Missing => format!(
                    "`{what}` needs a queue: the first step is `create: {{max_attempts: ...}}`"
                ),
                QueueAt::Raised(line) => format!(
                    "`{what}` needs a queue, but the `create` at line {line} raises and leaves none"
                ),
            };
            errors.push(invalid(position, why));
            *queue = QueueAt::Live(HashMap::new());
        };

    let mut steps = Vec::with_capacity(spec.steps.value.len());
    for step in spec.steps.value {
        let position = yaml::at(&step);
        let step = step.value.0;
        if !matches!(step, Step::Create(_)) {
            needs_queue(&mut queue, step.name(), position, &mut errors);
        }
        match &step {
            Step::Create(create) => {
                let raw = &create.max_attempts.value;
                if let Some(why) = unportable_number(raw) {
                    errors.push(invalid(yaml::at(&create.max_attempts), why));
                    queue = QueueAt::Live(HashMap::new());
                } else {
                    match (valid_max_attempts(raw), &create.raises) {
                        (Some(_), Some(raises)) => {
                            errors.push(invalid(
                                yaml::at(raises),
                                format!(
                                    "RetryQueue({}) raises nothing: it is a valid max_attempts; remove `raises`",
                                    shown(raw)
                                ),
                            ));
                            queue = QueueAt::Live(HashMap::new());
                        }
                        (None, None) => {
                            errors.push(invalid(
                                yaml::at(&create.max_attempts),
                                format!(
                                    "RetryQueue({}) raises ValueError (max_attempts must be an integer >= 1): add `raises: invalid_argument`",
                                    shown(raw)
                                ),
                            ));
                            queue = QueueAt::Live(HashMap::new());
                        }
                        (Some(_), None) => queue = QueueAt::Live(HashMap::new()),
                        (None, Some(_)) => queue = QueueAt::Raised(position.line),
                    }
                }
            }
            Step::Submit(submit) => {
                if let QueueAt::Live(submitted) = &mut queue {
                    let id = &submit.id;
                    if let Some(first) = submitted.get(&id.value)
                        && queue_known
                    {
                        errors.push(invalid(
                            yaml::at(id),
                            format!(
                                "job `{}` is already submitted at line {}: job ids are unique",
                                id.value, first.line
                            ),
                        ));
                    } else {
                        submitted.insert(id.value.clone(), yaml::at(id));
                    }
                }
            }
            Step::Process(process) => {
                errors.keep(check_process(file, position, &process.0));
            }
            Step::MutateState(ops) => {
                if ops.is_empty() {
                    errors.push(invalid(
                        position,
                        "`mutate_state` needs at least one op".into(),
                    ));
                }
                for op in ops {
                    if let Err(why) = op.value.0.check_path() {
                        errors.push(invalid(yaml::at(op), why));
                    }
                }
            }
            Step::Replay(_) | Step::Expect(_) => {}
        }
        steps.push((position, step));
    }
    let expect = match spec.expect {
        Some(expect) => {
            let position = yaml::at(&expect);
            needs_queue(&mut queue, "expect", position, &mut errors);
            Some((position, expect.value))
        }
        None => None,
    };
    errors.check()?;
    let (Some(mut header), Some(allow)) = (header, allow) else {
        unreachable!("a header that is not made is an error gathered above");
    };
    header.allow = allow;

    Ok(QueueScenario {
        file: file.clone(),
        header,
        steps,
        expect,
    })
}

fn check_process(
    file: &SourceFile,
    position: Position,
    step: &ProcessStep,
) -> Result<(), SpecError> {
    let invalid = |position: Position, message: String| SpecError::invalid(file, position, message);
    let raw = &step.outcome.value;
    let valid = AttemptOutcome::parse(raw).is_some();
    match (&step.returns, &step.raises) {
        (None, None) => Err(invalid(
            position,
            "a `process` step needs `returns: done|retry|dead|none` or `raises: invalid_argument`"
                .into(),
        )),
        (Some(_), Some(raises)) => Err(invalid(
            yaml::at(raises),
            "a `process` step has `returns` or `raises`, not both".into(),
        )),
        (Some(_), None) if !valid => {
            // A near miss of a valid outcome is a typo first, and only then a test of
            // validation: say so before advising to assert the error.
            let typo = raw
                .as_str()
                .and_then(|text| crate::text::suggest::nearest(text, &OUTCOMES));
            let message = match typo {
                Some(near) => format!(
                    "`{}` is not an outcome: did you mean `{near}`? (To check that process({}) raises ValueError, write `raises: invalid_argument` instead of `returns`.)",
                    raw.as_str().unwrap_or_default(),
                    shown(raw)
                ),
                None => format!(
                    "process({}) raises ValueError (the outcome must be \"success\", \"transient\" or \"permanent\"{}): write `raises: invalid_argument` instead of `returns`",
                    shown(raw),
                    raw.as_str()
                        .and_then(|text| crate::text::suggest::closest(text, &OUTCOMES)
                            .map(|c| format!("; the nearest to {} is \"{c}\"", shown(raw))))
                        .unwrap_or_default()
                ),
            };
            Err(invalid(yaml::at(&step.outcome), message))
        }
        (None, Some(raises)) if valid => Err(invalid(
            yaml::at(raises),
            format!(
                "process({}) does not raise: it is a valid outcome; write `returns: ...` instead of `raises`",
                shown(raw)
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_kinds_are_the_ones_an_unknown_step_lists() {
        let error = load_text("contract: outcome-queue\nname: x\nsteps:\n  - nope\n")
            .err()
            .unwrap();
        assert!(
            error
                .message
                .ends_with(&format!(", expected one of {}", STEP_KINDS.join(", "))),
            "{error}"
        );
    }

    #[test]
    fn the_fast_load_reads_every_bundled_spec_and_its_variations_as_serde_saphyr_does() {
        let decoded = crate::text::yaml::agreement::check_bundled::<SpecFile>("outcome-queue", 16);
        assert!(
            decoded > 500,
            "only {decoded} variations were decoded by the fast path"
        );
    }

    fn load_text(text: &str) -> Result<QueueScenario, SpecError> {
        load(&SourceFile::from_text("t.yaml", text))
    }

    fn error(text: &str) -> String {
        match load_text(text) {
            Ok(_) => panic!("loaded: {text}"),
            Err(error) => error.to_string(),
        }
    }

    const HEAD: &str = "contract: outcome-queue\nname: t\n";

    fn with_steps(steps: &str) -> String {
        format!("{HEAD}steps:\n{steps}")
    }

    #[test]
    fn a_full_spec_loads() {
        let text = with_steps(
            "  - create: {max_attempts: 2}\n  - submit: {id: a, payload: p}\n  - process: {outcome: transient, returns: retry}\n  - process: {outcome: 7, raises: invalid_argument}\n  - mutate_state:\n      - clear: [quarantine]\n      - set: {path: [ready, 0, payload], value: x}\n  - replay: {id: a, returns: false}\n  - expect: {ready: [{id: a, payload: p, attempts: 1}], done: [], quarantine: []}\n  - create: {max_attempts: null, raises: invalid_argument}\n",
        );
        let scenario = load_text(&text).unwrap();
        assert_eq!(scenario.steps.len(), 8);
        let Step::Create(create) = &scenario.steps[7].1 else {
            panic!("not a create")
        };
        assert_eq!(create.max_attempts.value, Value::Null);
        assert_eq!(scenario.steps[7].0, Position::new(13, 5));
    }

    #[test]
    fn any_yaml_value_reaches_the_constructor_as_written() {
        for (written, value) in [
            ("0", json!(0)),
            ("-1", json!(-1)),
            ("2.5", json!(2.5)),
            ("true", json!(true)),
            ("\"3\"", json!("3")),
            ("~", Value::Null),
        ] {
            let text = with_steps(&format!(
                "  - create: {{max_attempts: {written}, raises: invalid_argument}}\n"
            ));
            let scenario = load_text(&text).unwrap();
            let Step::Create(create) = &scenario.steps[0].1 else {
                panic!("not a create")
            };
            assert_eq!(create.max_attempts.value, value, "{written}");
        }
    }

    #[test]
    fn steps_must_exist_and_start_with_a_queue() {
        assert_eq!(
            error(&format!("{HEAD}steps: []\n")),
            "t.yaml:3:8: `steps` is empty: the first step is `create: {max_attempts: ...}`"
        );
        assert_eq!(
            error(&with_steps("  - submit: {id: a, payload: p}\n")),
            "t.yaml:4:5: `submit` needs a queue: the first step is `create: {max_attempts: ...}`"
        );
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 0, raises: invalid_argument}\n  - process: {outcome: success, returns: none}\n"
            )),
            "t.yaml:5:5: `process` needs a queue, but the `create` at line 4 raises and leaves none"
        );
        assert_eq!(
            error(&format!(
                "{}expect: {{ready: [], done: [], quarantine: []}}\n",
                with_steps("  - create: {max_attempts: false, raises: invalid_argument}\n")
            )),
            "t.yaml:5:9: `expect` needs a queue, but the `create` at line 4 raises and leaves none"
        );
    }

    #[test]
    fn construction_must_expect_what_the_contract_does() {
        assert_eq!(
            error(&with_steps("  - create: {max_attempts: true}\n")),
            "t.yaml:4:28: RetryQueue(true) raises ValueError (max_attempts must be an integer >= 1): add `raises: invalid_argument`"
        );
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 3, raises: invalid_argument}\n"
            )),
            "t.yaml:4:39: RetryQueue(3) raises nothing: it is a valid max_attempts; remove `raises`"
        );
        assert_eq!(
            error(&with_steps("  - create: {}\n")),
            "t.yaml:4:13: missing field `max_attempts`"
        );
    }

    /// 3.0 and 2^53 are numbers the lesson's languages read differently: no spec sends them.
    #[test]
    fn a_max_attempts_the_languages_read_differently_is_refused() {
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 3.0, raises: invalid_argument}\n"
            )),
            "t.yaml:4:28: `3.0` is a whole number written with a fraction: JavaScript reads it as the integer 3, Python as a float, so the lesson's languages disagree on it: write 3, or a true fraction such as 2.5"
        );
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 9007199254740992}\n"
            )),
            "t.yaml:4:28: `9007199254740992` is beyond 2^53 - 1, which a JavaScript number cannot hold exactly, so implementations would read different budgets: write an integer from -9007199254740991 to 9007199254740991"
        );
        assert!(
            error(&with_steps(
                "  - create: {max_attempts: -9007199254740992, raises: invalid_argument}\n"
            ))
            .contains("is beyond 2^53 - 1")
        );
        for fine in [
            "  - create: {max_attempts: 9007199254740991}\n",
            "  - create: {max_attempts: 2.5, raises: invalid_argument}\n",
            "  - create: {max_attempts: 3000000000}\n",
        ] {
            assert!(load_text(&with_steps(fine)).is_ok(), "{fine}");
        }
    }

    #[test]
    fn a_typo_of_an_outcome_is_suggested_not_asserted() {
        let create = "  - create: {max_attempts: 1}\n";
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: succes, returns: done}}\n"
            ))),
            "t.yaml:5:24: `succes` is not an outcome: did you mean `success`? (To check that process(\"succes\") raises ValueError, write `raises: invalid_argument` instead of `returns`.)"
        );
    }

    #[test]
    fn process_must_expect_what_the_contract_does() {
        let create = "  - create: {max_attempts: 1}\n";
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: explode, returns: none}}\n"
            ))),
            "t.yaml:5:24: process(\"explode\") raises ValueError (the outcome must be \"success\", \"transient\" or \"permanent\"; the nearest to \"explode\" is \"success\"): write `raises: invalid_argument` instead of `returns`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: success, raises: invalid_argument}}\n"
            ))),
            "t.yaml:5:41: process(\"success\") does not raise: it is a valid outcome; write `returns: ...` instead of `raises`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: success}}\n"
            ))),
            "t.yaml:5:5: a `process` step needs `returns: done|retry|dead|none` or `raises: invalid_argument`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: 1, returns: none, raises: invalid_argument}}\n"
            ))),
            "t.yaml:5:50: a `process` step has `returns` or `raises`, not both"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: success, returns: ok}}\n"
            ))),
            "t.yaml:5:42: unknown value `ok` (the nearest valid one is `done`), expected one of done, retry, dead, none"
        );
    }

    #[test]
    fn job_ids_are_unique_per_queue() {
        let steps = "  - create: {max_attempts: 1}\n  - submit: {id: a, payload: p}\n  - submit: {id: a, payload: q}\n";
        assert_eq!(
            error(&with_steps(steps)),
            "t.yaml:6:18: job `a` is already submitted at line 5: job ids are unique"
        );
        let fresh = steps.replacen(
            "  - submit: {id: a, payload: q}\n",
            "  - create: {max_attempts: 2}\n  - submit: {id: a, payload: q}\n",
            1,
        );
        assert!(load_text(&with_steps(&fresh)).is_ok());
    }

    #[test]
    fn mutation_paths_are_checked() {
        let create = "  - create: {max_attempts: 1}\n";
        assert_eq!(
            error(&with_steps(&format!("{create}  - mutate_state: []\n"))),
            "t.yaml:5:5: `mutate_state` needs at least one op"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state:\n      - clear: [ready]\n      - delete: [dead, 0]\n"
            ))),
            "t.yaml:7:9: a state path starts with `ready`, `done` or `quarantine`, not `dead`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state: [{{delete: [ready, -1]}}]\n"
            ))),
            "t.yaml:5:37: a path index counts from 0; got -1"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state: [{{set: {{path: [ready, 0]}}}}]\n"
            ))),
            "t.yaml:5:27: missing field `value`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state:\n      - clear\n"
            ))),
            "t.yaml:6:9: `clear` needs a value: write `clear: ...`"
        );
    }

    #[test]
    fn expectations_name_every_field() {
        let text = with_steps(
            "  - create: {max_attempts: 1}\n  - expect: {ready: [{id: a, payload: p}], done: [], quarantine: []}\n",
        );
        assert_eq!(error(&text), "t.yaml:5:30: missing field `attempts`");
        let text = with_steps("  - create: {max_attempts: 1}\n  - expect: {ready: [], done: []}\n");
        assert_eq!(error(&text), "t.yaml:5:25: missing field `quarantine`");
        let text = with_steps(
            "  - create: {max_attempts: 1}\n  - expect: {ready: [], done: [], quarantine: [], dead: []}\n",
        );
        assert!(
            error(&text).starts_with("t.yaml:5:51: unknown field `dead`"),
            "{}",
            error(&text)
        );
    }

    #[test]
    fn normalize_puts_the_contract_keys_first() {
        let view = json!({
            "extra": 1,
            "quarantine": [{"reason": "permanent", "id": "a", "attempts": 1, "payload": "p"}],
            "done": [],
            "ready": [],
        });
        let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
        let normal = normalize_state(&view);
        assert_eq!(keys(&normal), ["ready", "done", "quarantine", "extra"]);
        assert_eq!(
            keys(&normal["quarantine"][0]),
            ["id", "payload", "attempts", "reason"]
        );
    }
}
