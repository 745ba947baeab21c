//! The dlq-consumer spec vocabulary: what a spec file may say (its compact forms too), and
//! the values its steps and expectations take; `loading.rs` checks a file and makes its
//! scenario.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::world::{CrashTiming, ScriptedCall};
use crate::contracts::spec_file::spec_file;
use crate::model::implementation::Naming;
use crate::text::yaml::{SingleKey, Spanned};

spec_file! {
    /// A dlq-consumer spec: messages, the handler's scripted outcomes, steps, expectations.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(rename = "DlqConsumerSpec")]
    SpecFile {
        /// The consumer's budget of deliveries. Left out, the consumer is made without it, so its
        /// own default (the lesson's 3) is what runs.
        #[serde(default)]
        #[schemars(range(min = 1))]
        max_attempts: Option<Spanned<u64>>,
        /// The messages in the queue at the start, in order.
        #[serde(default)]
        messages: Vec<Spanned<MessageSpec>>,
        /// The compact form: groups of many similar messages, sent after `messages`, each from an
        /// id and a body pattern (`{n}` is the message's number) and a count, with one outcome list.
        #[serde(default)]
        generate: Vec<Spanned<GenerateGroup>>,
        /// Per message id, the handler's outcome on each call, in order.
        #[serde(default)]
        handler: IndexMap<Spanned<String>, Vec<Spanned<SingleKey<ScriptedCall>>>>,
        /// What happens, in order: each step drives the consumer or the world, or checks it.
        #[serde(default)]
        steps: Vec<Spanned<SingleKey<Step>>>,
        /// Expectations after the last step.
        #[serde(default)]
        expect: Option<Spanned<Expectation>>,
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageSpec {
    pub(crate) id: String,
    pub(crate) body: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Step {
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
pub(crate) const STEP_KINDS: &[&str] = &[
    "process", "recover", "restart", "advance", "send", "replay", "fault", "expect", "repeat",
];

impl Step {
    pub(crate) fn name(&self) -> &'static str {
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
pub(crate) enum ProcessReturn {
    Ok,
    Retry,
    Dead,
    None,
    Crash,
    Any,
}

/// The words of `ProcessReturn`, as a spec writes them (`process: ok`).
pub(crate) const PROCESS_RETURNS: &[&str] = &["ok", "retry", "dead", "none", "crash", "any"];

impl ProcessReturn {
    pub(crate) fn expected(self) -> Option<&'static str> {
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
pub(crate) struct ReplayStep {
    /// The ids to replay; left out, every entry is replayed.
    #[serde(default)]
    pub(crate) ids: Option<Vec<String>>,
    /// The ids `replay` must return.
    #[serde(default)]
    pub(crate) returns: Option<Spanned<Vec<String>>>,
    /// `replay` must crash (an armed fault fires during it).
    #[serde(default)]
    pub(crate) crash: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FaultSpec {
    pub(crate) crash: CrashTiming,
    /// An effect of the world: faults never wait on a read, which an implementation may make
    /// any number of times, or not at all. Checked on loading (`EffectCall`).
    #[schemars(with = "EffectCall")]
    pub(crate) call: Spanned<String>,
    /// Fire on the n-th matching call from now on (default: the next one).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) nth: Option<Spanned<u32>>,
}

/// The world's effects a fault can crash: the closed list, for the schema and for checking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[expect(
    dead_code,
    reason = "a schema only: a fault's call is read as text and checked against `EFFECT_CALLS`, so that a wrong one is told in words"
)]
pub(crate) enum EffectCall {
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
pub(crate) const EFFECT_CALLS: &[&str] = &[
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
pub(crate) fn check_fault_call(call: &str) -> Result<(), String> {
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
pub(crate) struct Expectation {
    /// Every DLQ entry, in put order, with every field.
    #[serde(default)]
    pub(crate) dlq: Option<Vec<EntrySpec>>,
    /// The ids of the ready messages, in order.
    #[serde(default)]
    pub(crate) pending: Option<Vec<String>>,
    /// The ids of the messages received and neither acked nor retried, in receive order.
    #[serde(default)]
    pub(crate) in_flight: Option<Vec<String>>,
    /// Handler calls per message id; ids left out must have had none.
    #[serde(default)]
    pub(crate) handler_calls: Option<IndexMap<String, u64>>,
    /// Every effect of the implementation's calls, from the start (reads left out), in the
    /// orders the rules pin (see docs/spec-format.md).
    #[serde(default)]
    pub(crate) trace: Option<Vec<Spanned<String>>>,
    /// What the clock reads.
    #[serde(default)]
    pub(crate) clock: Option<u64>,
    /// The compact form: how many DLQ entries, ready and in-flight messages and handler calls.
    #[serde(default)]
    pub(crate) counts: Option<Counts>,
    /// The compact form: how many DLQ entries have each reason (a reason left out, none).
    #[serde(default)]
    pub(crate) dlq_reasons: Option<DlqReasons>,
    /// Whether `dlq` was written with patterned entries (`count`), which `bless` leaves alone.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) patterned: bool,
}

/// A DLQ entry: every field must be written, so an expectation never checks half an entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntrySpec {
    pub(crate) id: String,
    pub(crate) body: String,
    pub(crate) reason: Reason,
    /// `Class: message`, or `null` for poison; written even when null.
    // `Spanned` so that leaving it out is an error, not a silent null.
    pub(crate) error: Spanned<Option<String>>,
    pub(crate) attempts: u64,
    pub(crate) first_attempt_at: u64,
    pub(crate) failed_at: u64,
    /// The compact form: this entry stands for `count` entries, `{n}` in its id, body and
    /// error running from `from` (default 1).
    #[serde(default)]
    pub(crate) count: Option<Spanned<u64>>,
    #[serde(default)]
    pub(crate) from: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reason {
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
    pub(crate) fn to_value(&self) -> Value {
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
pub(crate) fn entry_in(entry: &Value, naming: Naming) -> Value {
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
pub(crate) fn canonical_entry(entry: &Value, naming: Naming) -> Value {
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
pub(crate) const ENTRY_FIELDS: [&str; 7] = [
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
pub(crate) fn normalize_entry(entry: &Value, naming: Naming) -> Value {
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

/// `count` messages whose ids and bodies are patterns of `{n}`, each with the same outcomes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GenerateGroup {
    /// How many messages: `{n}` runs from `from` to `from + count - 1`.
    #[schemars(range(min = 1))]
    pub(crate) count: Spanned<u64>,
    /// The first number (default 1).
    #[serde(default)]
    pub(crate) from: Option<u64>,
    /// The ids' pattern, e.g. `order-{n}`; it must hold `{n}` when `count` is more than 1.
    pub(crate) id: Spanned<String>,
    /// The bodies' pattern, e.g. `sku-{n}`; messages in flight together need different bodies.
    pub(crate) body: String,
    /// The handler's outcome on each call, the same list for every message of the group.
    #[serde(default)]
    pub(crate) handler: Option<Spanned<Vec<Spanned<SingleKey<ScriptedCall>>>>>,
}

/// A list of steps run `times` times, as if written out that often.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RepeatStep {
    /// How many times (0 runs none).
    pub(crate) times: Spanned<u64>,
    /// The steps, in order; a `repeat` may hold another.
    pub(crate) steps: Vec<Spanned<SingleKey<Step>>>,
}

/// Counts of what the world holds, for expectations too big to list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Counts {
    /// How many entries the DLQ holds.
    #[serde(default)]
    pub(crate) dlq: Option<u64>,
    /// How many messages are ready.
    #[serde(default)]
    pub(crate) pending: Option<u64>,
    /// How many messages are in flight.
    #[serde(default)]
    pub(crate) in_flight: Option<u64>,
    /// How many handler calls the run made, for all messages together.
    #[serde(default)]
    pub(crate) handler_calls: Option<u64>,
}

/// How many DLQ entries have each reason; a reason left out must have none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DlqReasons {
    #[serde(default)]
    pub(crate) permanent: Option<u64>,
    #[serde(default)]
    pub(crate) exhausted: Option<u64>,
    #[serde(default)]
    pub(crate) poison: Option<u64>,
}

impl DlqReasons {
    /// `(reason, count)` for each reason written with a count above 0, in the contract's order.
    pub(crate) fn written(&self) -> Vec<(&'static str, u64)> {
        [
            ("permanent", self.permanent),
            ("exhausted", self.exhausted),
            ("poison", self.poison),
        ]
        .into_iter()
        .filter_map(|(reason, count)| count.filter(|n| *n > 0).map(|n| (reason, n)))
        .collect()
    }
}
