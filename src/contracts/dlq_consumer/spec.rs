//! The dlq-consumer spec vocabulary: what a spec file may say, and the checks made on loading.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::compact::{self, Counts, DlqReasons, GenerateGroup, RepeatStep};
use super::scenario::DlqScenario;
use super::world::{CrashTiming, MAX_CLOCK, ScriptedOutcome};
use crate::contracts::contract::{Grading, SpecHeader, Visibility};
use crate::model::implementation::Naming;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{Gathered, SpecError};
use crate::text::yaml::{self, Blanked, SingleKey, Spanned};

/// A dlq-consumer spec: messages, the handler's scripted outcomes, steps, expectations.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "DlqConsumerSpec")]
pub struct SpecFile {
    /// `dlq-consumer`.
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
    /// The consumer's budget of deliveries. Left out, the consumer is made without it, so its
    /// own default (the lesson's 3) is what runs.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_attempts: Option<Spanned<u64>>,
    /// The messages in the queue at the start, in order.
    #[serde(default)]
    pub messages: Vec<Spanned<MessageSpec>>,
    /// The compact form: groups of many similar messages, sent after `messages`, each from an
    /// id and a body pattern (`{n}` is the message's number) and a count, with one outcome list.
    #[serde(default)]
    pub generate: Vec<Spanned<GenerateGroup>>,
    /// Per message id, the handler's outcome on each call, in order.
    #[serde(default)]
    pub handler: IndexMap<Spanned<String>, Vec<Spanned<SingleKey<ScriptedOutcome>>>>,
    /// What happens, in order: each step drives the consumer or the world, or checks it.
    #[serde(default)]
    pub steps: Vec<Spanned<SingleKey<Step>>>,
    /// Expectations after the last step.
    #[serde(default)]
    pub expect: Option<Spanned<Expectation>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageSpec {
    pub id: String,
    pub body: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Calls `process_one` and checks what it returned.
    Process(ProcessReturn),
    /// The visibility timeout runs out: every in-flight message goes back to the ready tail.
    Recover,
    /// A fresh consumer instance with empty memory serves the next calls.
    Restart,
    /// Moves the clock forward.
    Advance(u64),
    /// Sends a message to the queue (as a producer would, not the consumer).
    Send(MessageSpec),
    /// Calls `replay`.
    Replay(ReplayStep),
    /// Arms a crash at a named call of the world.
    Fault(FaultSpec),
    /// Checks the world now.
    Expect(Box<Expectation>),
    /// The compact form: runs a list of steps a number of times.
    Repeat(RepeatStep),
}

/// The step kinds, as `Step`'s variants are written, in their order.
pub const STEP_KINDS: &[&str] = &[
    "process", "recover", "restart", "advance", "send", "replay", "fault", "expect", "repeat",
];

impl Step {
    pub fn name(&self) -> &'static str {
        match self {
            Step::Process(_) => "process",
            Step::Recover => "recover",
            Step::Restart => "restart",
            Step::Advance(_) => "advance",
            Step::Send(_) => "send",
            Step::Replay(_) => "replay",
            Step::Fault(_) => "fault",
            Step::Expect(_) => "expect",
            Step::Repeat(_) => "repeat",
        }
    }
}

/// What `process_one` must do: return one of its values, crash, or anything (`any`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessReturn {
    Ok,
    Retry,
    Dead,
    None,
    Crash,
    Any,
}

/// The words of `ProcessReturn`, as a spec writes them (`process: ok`).
pub const PROCESS_RETURNS: &[&str] = &["ok", "retry", "dead", "none", "crash", "any"];

impl ProcessReturn {
    pub fn expected(self) -> Option<&'static str> {
        match self {
            ProcessReturn::Ok => Some("ok"),
            ProcessReturn::Retry => Some("retry"),
            ProcessReturn::Dead => Some("dead"),
            ProcessReturn::None => Some("none"),
            ProcessReturn::Crash => Some("crash"),
            ProcessReturn::Any => None,
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayStep {
    /// The ids to replay; left out, every entry is replayed.
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// The ids `replay` must return.
    #[serde(default)]
    pub returns: Option<Spanned<Vec<String>>>,
    /// `replay` must crash (an armed fault fires during it).
    #[serde(default)]
    pub crash: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub crash: CrashTiming,
    /// An effect of the world: faults never wait on a read, which an implementation may make
    /// any number of times, or not at all. Checked on loading (`EffectCall`).
    #[schemars(with = "EffectCall")]
    pub call: Spanned<String>,
    /// Fire on the n-th matching call from now on (default: the next one).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub nth: Option<Spanned<u32>>,
}

/// The world's effects a fault can crash: the closed list, for the schema and for checking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
pub enum EffectCall {
    #[serde(rename = "queue.send")]
    QueueSend,
    #[serde(rename = "queue.receive")]
    QueueReceive,
    #[serde(rename = "queue.ack")]
    QueueAck,
    #[serde(rename = "queue.retry")]
    QueueRetry,
    #[serde(rename = "dlq.put")]
    DlqPut,
    #[serde(rename = "dlq.remove")]
    DlqRemove,
    #[serde(rename = "handler")]
    Handler,
}

/// The effects a fault can wait on, by name.
pub const EFFECT_CALLS: &[&str] = &[
    "queue.send",
    "queue.receive",
    "queue.ack",
    "queue.retry",
    "dlq.put",
    "dlq.remove",
    "handler",
];

/// Why `call` cannot be a fault's call, if it cannot: a read (with the reason), or no call of
/// the world (with the list and the nearest one).
fn check_fault_call(call: &str) -> Result<(), String> {
    if EFFECT_CALLS.contains(&call) {
        return Ok(());
    }
    if matches!(
        call,
        "dlq.has" | "dlq.entries" | "queue.pending" | "clock.now"
    ) {
        return Err(format!(
            "`{call}` is a read, and docs/contracts.md leaves reads free: a correct consumer may check the DLQ with `dlq.has`, by scanning `dlq.entries()`, twice or not at all, so a crash there would not fire the same for every correct solution. Arm it on an effect: `{{crash: after, call: queue.receive}}` crashes right after the delivery, before any check"
        ));
    }
    let near = crate::text::suggest::hint(call, EFFECT_CALLS);
    Err(format!(
        "unknown call `{call}`{near}; a fault waits on one of {}",
        EFFECT_CALLS.join(", ")
    ))
}

/// What the world must look like. Only the keys written are checked.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Every DLQ entry, in put order, with every field.
    #[serde(default)]
    pub dlq: Option<Vec<EntrySpec>>,
    /// The ids of the ready messages, in order.
    #[serde(default)]
    pub pending: Option<Vec<String>>,
    /// The ids of the messages received and neither acked nor retried, in receive order.
    #[serde(default)]
    pub in_flight: Option<Vec<String>>,
    /// Handler calls per message id; ids left out must have had none.
    #[serde(default)]
    pub handler_calls: Option<IndexMap<String, u64>>,
    /// Every effect of the implementation's calls, from the start (reads left out), in the
    /// orders the rules pin (see docs/spec-format.md).
    #[serde(default)]
    pub trace: Option<Vec<Spanned<String>>>,
    /// What the clock reads.
    #[serde(default)]
    pub clock: Option<u64>,
    /// The compact form: how many DLQ entries, ready and in-flight messages and handler calls.
    #[serde(default)]
    pub counts: Option<Counts>,
    /// The compact form: how many DLQ entries have each reason (a reason left out, none).
    #[serde(default)]
    pub dlq_reasons: Option<DlqReasons>,
    /// Whether `dlq` was written with patterned entries (`count`), which `bless` leaves alone.
    #[serde(skip)]
    #[schemars(skip)]
    pub patterned: bool,
}

/// A DLQ entry: every field must be written, so an expectation never checks half an entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntrySpec {
    pub id: String,
    pub body: String,
    pub reason: Reason,
    /// `Class: message`, or `null` for poison; written even when null.
    // `Spanned` so that leaving it out is an error, not a silent null.
    pub error: Spanned<Option<String>>,
    pub attempts: u64,
    pub first_attempt_at: u64,
    pub failed_at: u64,
    /// The compact form: this entry stands for `count` entries, `{n}` in its id, body and
    /// error running from `from` (default 1).
    #[serde(default)]
    pub count: Option<Spanned<u64>>,
    #[serde(default)]
    pub from: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Permanent,
    Exhausted,
    Poison,
}

impl Reason {
    fn as_str(self) -> &'static str {
        match self {
            Reason::Permanent => "permanent",
            Reason::Exhausted => "exhausted",
            Reason::Poison => "poison",
        }
    }
}

impl EntrySpec {
    /// The entry as the world stores it, fields in the contract's order.
    pub fn to_value(&self) -> Value {
        json!({
            "id": self.id,
            "body": self.body,
            "reason": self.reason.as_str(),
            "error": self.error.value,
            "attempts": self.attempts,
            "first_attempt_at": self.first_attempt_at,
            "failed_at": self.failed_at,
        })
    }
}

/// An entry written with the contract's (snake_case) keys, spelled as `naming` spells them:
/// what an implementation in that language must put.
pub fn entry_in(entry: &Value, naming: Naming) -> Value {
    let Value::Object(fields) = entry else {
        return entry.clone();
    };
    Value::Object(
        fields
            .iter()
            .map(|(key, value)| (naming.key(key).into_owned(), value.clone()))
            .collect(),
    )
}

/// An entry an implementation put, with its contract keys (as `naming` spells them) renamed to
/// the spec's snake_case, so a difference can be pointed at in the spec. Other keys stay.
pub fn canonical_entry(entry: &Value, naming: Naming) -> Value {
    let Value::Object(fields) = entry else {
        return entry.clone();
    };
    let mut canonical = Map::new();
    for key in ENTRY_FIELDS {
        if let Some(value) = fields.get(naming.key(key).as_ref()) {
            canonical.insert(key.to_owned(), value.clone());
        }
    }
    for (key, value) in fields {
        if !ENTRY_FIELDS.iter().any(|f| naming.key(f) == key.as_str()) {
            canonical
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
    }
    Value::Object(canonical)
}

/// The key order entries are shown in, so a diff lines up whatever order an implementation used.
pub const ENTRY_FIELDS: [&str; 7] = [
    "id",
    "body",
    "reason",
    "error",
    "attempts",
    "first_attempt_at",
    "failed_at",
];

/// An entry as an implementation put it, with the contract's fields (as `naming` spells them)
/// first, so a diff lines up whatever order the implementation used.
pub fn normalize_entry(entry: &Value, naming: Naming) -> Value {
    let Value::Object(fields) = entry else {
        return entry.clone();
    };
    let mut ordered = Map::new();
    for key in ENTRY_FIELDS {
        let key = naming.key(key);
        if let Some(value) = fields.get(key.as_ref()) {
            ordered.insert(key.into_owned(), value.clone());
        }
    }
    for (key, value) in fields {
        if !ordered.contains_key(key) {
            ordered.insert(key.clone(), value.clone());
        }
    }
    Value::Object(ordered)
}

/// Parses a dlq-consumer spec and checks what the YAML shape cannot, telling every
/// independent mistake at once (a check that later ones depend on, such as the compact
/// form's expansion, stops there).
pub fn load(file: &SourceFile) -> Result<DlqScenario, SpecError> {
    match yaml::parse_recovering::<SpecFile>(file) {
        Ok(spec) => check(file, spec, &Blanked::default()),
        // The rest of a broken file is checked too, so that one run tells every mistake.
        Err(broken) => Err(broken.checked(|spec, blanked| check(file, spec, blanked))),
    }
}

/// The checks of [`load`] on a decoded spec. `blanked` says where broken parts of the file
/// were blanked for it to decode: an id they may define is not known missing, so the checks
/// of ids are skipped when a message or a `send` was (a handler entry for `a` when the
/// message `a` was broken).
fn check(file: &SourceFile, spec: SpecFile, blanked: &Blanked) -> Result<DlqScenario, SpecError> {
    // A step defines an id only by sending it (`send`, inside a `repeat` too).
    let ids_complete =
        !blanked.any(&["messages", "generate"], "") && !blanked.any(&["steps"], "send");
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
    let max_attempts = match &spec.max_attempts {
        Some(m) if m.value == 0 => {
            errors.push(invalid(
                yaml::at(m),
                "`max_attempts` must be at least 1".into(),
            ));
            None
        }
        Some(m) => Some(m.value),
        None => None,
    };

    let mut known_ids: HashSet<String> = HashSet::new();
    for message in &spec.messages {
        if !known_ids.insert(message.value.id.clone()) {
            errors.push(invalid(
                yaml::at(message),
                format!("duplicate message id `{}`", message.value.id),
            ));
        }
    }
    let mut expansion = compact::Expansion::default();
    let generated = match compact::generate(file, &spec.generate, &mut expansion) {
        Ok(generated) => generated,
        Err(error) => return Err(errors.stop(error)),
    };
    for message in &generated {
        if !known_ids.insert(message.id.clone()) {
            errors.push(invalid(
                message.at,
                format!("duplicate message id `{}`", message.id),
            ));
        }
    }
    let flat = match compact::flatten(file, spec.steps, &mut expansion) {
        Ok(flat) => flat,
        Err(error) => return Err(errors.stop(error)),
    };
    for (_, step) in &flat {
        if let Step::Send(message) = step {
            known_ids.insert(message.id.clone());
        }
    }
    if !ids_complete {
        // A message `none` may be among the blanked ones: `queue.receive() -> none` is not
        // known to deliver nothing.
        known_ids.insert("none".to_owned());
    }

    let mut script = HashMap::new();
    let mut script_positions = HashMap::new();
    let mut outcome_positions = HashMap::new();
    for (id, outcomes) in &spec.handler {
        if !known_ids.contains(&id.value) && !ids_complete {
            continue;
        }
        if !known_ids.contains(&id.value) {
            let mut known: Vec<_> = known_ids.iter().map(String::as_str).collect();
            known.sort_unstable();
            errors.push(invalid(
                yaml::at(id),
                format!(
                    "handler outcomes for unknown message `{}`; the messages are: {}",
                    id.value,
                    if known.is_empty() {
                        "(none)".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
            continue;
        }
        script.insert(
            id.value.clone(),
            outcomes.iter().map(|o| o.value.0.clone()).collect(),
        );
        script_positions.insert(id.value.clone(), yaml::at(id));
        outcome_positions.insert(id.value.clone(), outcomes.iter().map(yaml::at).collect());
    }
    for message in &generated {
        let Some(group) = &message.outcomes else {
            continue;
        };
        if script.contains_key(&message.id) {
            errors.push(invalid(
                group.at,
                format!(
                    "message `{}` has outcomes both here and under `handler`: keep one",
                    message.id
                ),
            ));
            continue;
        }
        script.insert(message.id.clone(), Arc::clone(&group.outcomes));
        script_positions.insert(message.id.clone(), group.at);
        outcome_positions.insert(message.id.clone(), Arc::clone(&group.positions));
    }

    let mut steps = Vec::with_capacity(flat.len());
    let mut clock: u64 = 0;
    for (position, step) in flat {
        match &step {
            Step::Advance(by) => match clock.checked_add(*by).filter(|at| *at <= MAX_CLOCK) {
                Some(at) => clock = at,
                None => errors.push(invalid(
                    position,
                    format!(
                        "`advance: {by}` would move the clock from {clock} past {MAX_CLOCK}, the most it counts to (2^53 - 1, the largest whole number every implementation's JSON keeps exact)"
                    ),
                )),
            },
            Step::Replay(replay) if replay.crash && replay.returns.is_some() => {
                errors.push(invalid(
                    position,
                    "a replay step cannot both `crash` and expect `returns`".into(),
                ));
            }
            Step::Fault(FaultSpec { nth: Some(nth), .. }) if nth.value == 0 => {
                errors.push(invalid(yaml::at(nth), "`nth` counts from 1".into()));
            }
            Step::Fault(FaultSpec { call, .. }) => {
                if let Err(why) = check_fault_call(&call.value) {
                    errors.push(invalid(yaml::at(call), why));
                }
            }
            Step::Expect(expect) => check_trace(file, expect, &known_ids, &mut errors),
            _ => {}
        }
        steps.push((position, step));
    }
    let mut expect = spec.expect.map(|e| (yaml::at(&e), e.value));
    if let Some((_, expect)) = &mut expect {
        if let Err(error) = compact::expand_entries(file, expect, &mut expansion) {
            return Err(errors.stop(error));
        }
        check_trace(file, expect, &known_ids, &mut errors);
    }
    errors.check()?;
    let (Some(mut header), Some(allow)) = (header, allow) else {
        unreachable!("a header that is not made is an error gathered above");
    };
    header.allow = allow;

    Ok(DlqScenario {
        file: file.clone(),
        header,
        max_attempts,
        message_positions: spec
            .messages
            .iter()
            .map(yaml::at)
            .chain(generated.iter().map(|m| m.at))
            .collect(),
        messages: spec
            .messages
            .into_iter()
            .map(|m| m.value)
            .chain(generated.into_iter().map(|m| MessageSpec {
                id: m.id,
                body: m.body,
            }))
            .collect(),
        script: Arc::new(script),
        script_positions,
        outcome_positions,
        steps,
        expect,
    })
}

/// Gathers an error for each trace line that is not an effect, pointing at it.
fn check_trace(
    file: &SourceFile,
    expect: &Expectation,
    ids: &HashSet<String>,
    errors: &mut Gathered,
) {
    for line in expect.trace.iter().flatten() {
        if let Err(message) = super::trace::check_line(&line.value, ids) {
            errors.push(SpecError::invalid(file, yaml::at(line), message));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_returns_are_the_ones_a_wrong_one_lists() {
        let error = load_text("contract: dlq-consumer\nname: x\nsteps:\n  - process: nope\n")
            .err()
            .unwrap();
        assert!(
            error
                .message
                .ends_with(&format!(", expected one of {}", PROCESS_RETURNS.join(", "))),
            "{error}"
        );
    }

    #[test]
    fn the_step_kinds_are_the_ones_an_unknown_step_lists() {
        let error = load_text("contract: dlq-consumer\nname: x\nsteps:\n  - nope\n")
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
        let decoded = crate::text::yaml::agreement::check_bundled::<SpecFile>("dlq-consumer", 16);
        assert!(
            decoded > 1000,
            "only {decoded} variations were decoded by the fast path"
        );
    }

    fn load_text(text: &str) -> Result<DlqScenario, SpecError> {
        load(&SourceFile::from_text("t.yaml", text))
    }

    const HEAD: &str = "contract: dlq-consumer\nname: t\n";

    #[test]
    fn a_minimal_spec_loads_with_the_default_budget() {
        let scenario = load_text(HEAD).unwrap();
        assert_eq!(scenario.max_attempts, None);
        assert_eq!(
            scenario.budget(),
            super::super::consumer::DEFAULT_MAX_ATTEMPTS
        );
    }

    #[test]
    fn duplicate_message_ids_are_a_spec_error_at_the_second_one() {
        let text = format!("{HEAD}messages:\n  - {{id: a, body: x}}\n  - {{id: a, body: y}}\n");
        let error = load_text(&text).unwrap_err();
        assert_eq!(error.to_string(), "t.yaml:5:5: duplicate message id `a`");
    }

    #[test]
    fn outcomes_for_an_unknown_message_name_the_known_ones() {
        let text = format!("{HEAD}messages: [{{id: a, body: x}}]\nhandler:\n  b: [ok]\n");
        let error = load_text(&text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.yaml:5:3: handler outcomes for unknown message `b`; the messages are: a"
        );
    }

    #[test]
    fn a_message_sent_by_a_step_may_have_outcomes() {
        let text = format!("{HEAD}handler:\n  c: [ok]\nsteps:\n  - send: {{id: c, body: z}}\n");
        assert!(load_text(&text).is_ok());
    }

    #[test]
    fn an_entry_without_error_is_rejected() {
        let text = format!(
            "{HEAD}expect:\n  dlq:\n    - {{id: a, body: x, reason: poison, attempts: 3, first_attempt_at: 0, failed_at: 0}}\n"
        );
        let error = load_text(&text).unwrap_err();
        assert!(
            error.message.contains("missing field `error`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn zero_max_attempts_is_rejected() {
        let error = load_text(&format!("{HEAD}max_attempts: 0\n")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.yaml:3:15: `max_attempts` must be at least 1"
        );
    }

    #[test]
    fn advancing_the_clock_past_its_range_is_a_spec_error() {
        let text = format!("{HEAD}steps:\n  - advance: 9007199254740990\n  - advance: 2\n");
        let error = load_text(&text).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "t.yaml:5:5: `advance: 2` would move the clock from 9007199254740990 past 9007199254740991"
            ),
            "{error}"
        );
        let huge = format!("{HEAD}steps:\n  - advance: 18446744073709551615\n  - advance: 1\n");
        assert!(load_text(&huge).is_err());
        let fits = format!("{HEAD}steps:\n  - advance: 9007199254740990\n  - advance: 1\n");
        assert!(load_text(&fits).is_ok());
    }

    #[test]
    fn the_compact_form_expands_into_the_plain_one_with_the_lines_that_wrote_it() {
        let text = format!(
            "{HEAD}messages: [{{id: a, body: x}}]\ngenerate:\n  - {{count: 3, from: 5, id: \"m-{{n}}\", body: \"b{{n}}\", handler: [transient: t, ok]}}\nsteps:\n  - repeat: {{times: 2, steps: [advance: 1, repeat: {{times: 2, steps: [process: any]}}]}}\nexpect:\n  dlq:\n    - {{count: 2, id: \"m-{{n}}\", body: \"b{{n}}\", reason: exhausted, error: \"E: {{n}}\", attempts: 1, first_attempt_at: 0, failed_at: 0}}\n"
        );
        let scenario = load_text(&text).unwrap();
        let ids: Vec<&str> = scenario.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["a", "m-5", "m-6", "m-7"]);
        assert_eq!(scenario.messages[3].body, "b7");
        assert_eq!(scenario.message_positions[1], Position::new(5, 5));
        assert_eq!(scenario.script["m-6"].len(), 2);
        assert_eq!(scenario.script_positions["m-6"], Position::new(5, 61));
        let names: Vec<&str> = scenario.steps.iter().map(|(_, s)| s.name()).collect();
        assert_eq!(
            names,
            [
                "advance", "process", "process", "advance", "process", "process"
            ]
        );
        assert_eq!(scenario.steps[0].0, scenario.steps[3].0);
        let (_, expect) = scenario.expect.as_ref().unwrap();
        assert!(expect.patterned);
        let entries = expect.dlq.as_ref().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(
            entries[1].to_value()["error"],
            serde_json::json!("E: 2"),
            "{:?}",
            entries[1]
        );
    }

    #[test]
    fn unknown_world_calls_in_faults_list_the_known_ones() {
        let text = format!("{HEAD}steps:\n  - fault: {{crash: after, call: dlq.putt}}\n");
        let error = load_text(&text).unwrap_err();
        assert_eq!(
            error.message,
            "unknown call `dlq.putt` (did you mean `dlq.put`?); a fault waits on one of queue.send, queue.receive, queue.ack, queue.retry, dlq.put, dlq.remove, handler"
        );
    }
}
