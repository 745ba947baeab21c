//! What happened in the dlq-consumer world, call by call, in words for `dlqspec explain`.
//!
//! One record of every call, told two ways: `trace_line` is the terse, comparable line specs
//! check; `describe` adds what a person reading a scenario wants besides: receive counts, error
//! messages, the DLQ after each change.

use std::sync::Arc;

use serde_json::Value;

use crate::text::listing::{list, ordinal};

use super::handler::ScriptedOutcome;
use crate::contracts::timeline::{TimelineEvent, TimelineLine, Tone};
use crate::text::yaml;

/// Whether an injected crash happens instead of a call or right after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CrashTiming {
    Before,
    After,
}

impl CrashTiming {
    /// `before` or `after`, as specs write it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            CrashTiming::Before => "before",
            CrashTiming::After => "after",
        }
    }
}

/// The lanes of a dlq-consumer picture: the calls of the world run between them.
pub(crate) const LANES: &[&str] = &["queue", "consumer", "handler", "DLQ"];

/// One thing that happened in the world while an implementation called it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WorldEvent {
    /// `queue.receive` handed out a message. `already_dead`: its id was in the DLQ then.
    Received {
        id: String,
        receive_count: u64,
        first_received_at: Option<u64>,
        already_dead: bool,
    },
    /// `queue.receive` found nothing ready.
    NothingReady,
    Checked {
        id: String,
        has: bool,
    },
    /// The handler ran for message `id` with its scripted outcome.
    Handled {
        id: String,
        outcome: ScriptedOutcome,
    },
    /// The handler's call for `id` just told took `takes`: the clock reads `now` as it returns.
    /// A happening of its own, rare, so that every handler call's record stays as small as it
    /// was: a big scenario's journal holds hundreds of thousands of them.
    Took {
        id: String,
        takes: u64,
        now: u64,
    },
    /// The handler was called once more than the spec scripts.
    Unscripted {
        id: String,
        call_number: u64,
    },
    Acked {
        id: String,
    },
    Retried {
        id: String,
    },
    Sent {
        id: String,
    },
    Put {
        id: String,
        /// Shared with the DLQ, which holds the same entry. Behind a pointer, too: a JSON value
        /// is bigger than any other field, and a big scenario's journal holds hundreds of
        /// thousands of happenings, few of them puts.
        entry: Arc<Value>,
        /// The DLQ's ids after the put.
        dlq: Vec<String>,
    },
    Removed {
        id: String,
        removed: bool,
        dlq: Vec<String>,
    },
    /// The implementation moved every in-flight message back itself (`queue.recover()`).
    Recovered {
        ids: Vec<String>,
    },
    Advanced {
        by: u64,
        now: u64,
    },
    /// A fault step's crash fired. `about`: the message id the call named (an ack's, a put
    /// entry's), so a crash before the call still tells which message it was for.
    Crashed {
        call: String,
        timing: CrashTiming,
        about: Option<String>,
    },
    Misused {
        what: String,
    },
    /// `queue.pending()` returned these ids.
    PendingRead {
        ids: Vec<String>,
    },
    /// `dlq.entries()` returned the entries of these ids.
    EntriesRead {
        dlq: Vec<String>,
    },
}

impl WorldEvent {
    /// Whether this is an effect, which a trace lists, rather than a read, which it leaves out:
    /// docs/contracts.md pins every effect and leaves free how and how often an implementation reads
    /// (`dlq.has`, `dlq.entries`, `queue.pending`, a receive that finds nothing, the removal of
    /// an id the DLQ does not hold). Crashes, unscripted handler calls and misuse are events a
    /// trace shows too. Reads of the clock are not journaled at all.
    pub(crate) fn is_effect(&self) -> bool {
        !matches!(
            self,
            WorldEvent::NothingReady
                | WorldEvent::Took { .. }
                | WorldEvent::Checked { .. }
                | WorldEvent::PendingRead { .. }
                | WorldEvent::EntriesRead { .. }
                | WorldEvent::Removed { removed: false, .. }
        )
    }

    /// The line of the trace specs compare: the effect and, for a receive or the handler, what
    /// it delivered or did.
    pub(crate) fn trace_line(&self) -> String {
        match self {
            WorldEvent::Received { id, .. } => format!("queue.receive() -> {id}"),
            WorldEvent::NothingReady => "queue.receive() -> none".to_owned(),
            WorldEvent::Checked { id, has } => format!("dlq.has({id}) -> {has}"),
            WorldEvent::Handled { id, outcome } => format!("handler({id}) -> {}", outcome.label()),
            WorldEvent::Took { id, takes, .. } => format!("handler({id}) took {takes}"),
            WorldEvent::Unscripted { id, .. } => format!("handler({id}) -> unscripted"),
            WorldEvent::Acked { id } => format!("queue.ack({id})"),
            WorldEvent::Retried { id } => format!("queue.retry({id})"),
            WorldEvent::Sent { id } => format!("queue.send({id})"),
            WorldEvent::Put { id, .. } => format!("dlq.put({id})"),
            WorldEvent::Removed { id, .. } => format!("dlq.remove({id})"),
            WorldEvent::Recovered { .. } => "queue.recover()".to_owned(),
            WorldEvent::Advanced { by, .. } => format!("clock.advance({by})"),
            WorldEvent::Crashed { call, timing, .. } => {
                format!("{call} -> crash (injected {} the call)", timing.word())
            }
            WorldEvent::Misused { what } => format!("{what} !misuse"),
            WorldEvent::PendingRead { .. } => "queue.pending()".to_owned(),
            WorldEvent::EntriesRead { .. } => "dlq.entries()".to_owned(),
        }
    }

    /// One line for a person.
    pub(crate) fn describe(&self) -> String {
        match self {
            WorldEvent::Received {
                id,
                receive_count,
                first_received_at,
                already_dead,
            } => {
                let first = first_received_at
                    .map(|t| format!(", first received at {t}"))
                    .unwrap_or_default();
                let dead = if *already_dead {
                    "; its id is already in the DLQ"
                } else {
                    ""
                };
                format!("receive {id}: receive_count {receive_count}{first}{dead}")
            }
            WorldEvent::NothingReady => "receive: nothing is ready".to_owned(),
            WorldEvent::Checked { id, has } => format!("dlq.has({id}) -> {has}"),
            WorldEvent::Handled { id, outcome } => match (outcome, outcome.raised()) {
                (ScriptedOutcome::Crash, _) => format!("handler({id}) crashes the process"),
                (_, None) => format!("handler({id}) succeeds"),
                (_, Some(raised)) => match &raised.extends {
                    Some(given) => format!(
                        "handler({id}) raises {} (a subclass of {given})",
                        raised.describe()
                    ),
                    None => format!("handler({id}) raises {}", raised.describe()),
                },
            },
            WorldEvent::Took { id, takes, now } => {
                format!("handler({id}) took {takes} to return: the clock reads {now}")
            }
            WorldEvent::Unscripted { id, call_number } => format!(
                "handler({id}) is called a {} time, but the spec scripts no outcome for it",
                ordinal(*call_number)
            ),
            WorldEvent::Acked { id } => format!("queue.ack({id}): {id} leaves the queue for good"),
            WorldEvent::Retried { id } => format!("queue.retry({id}): {id} goes to the ready tail"),
            WorldEvent::Sent { id } => format!("queue.send({id}): {id} joins the ready tail"),
            WorldEvent::Put { entry, dlq, .. } => {
                // The implementation's entry, cut before it is rendered.
                let cut = |value: &Value| yaml::flow(&crate::text::truncate::value(value));
                let id = entry.get("id").map(cut).unwrap_or_default();
                let fields: Vec<String> = match &**entry {
                    Value::Object(fields) => fields
                        .iter()
                        .filter(|(key, _)| !matches!(key.as_str(), "id" | "body"))
                        .take(100)
                        .map(|(key, value)| {
                            format!("{} {}", crate::text::truncate::line(key, 80), cut(value))
                        })
                        .collect(),
                    other => vec![cut(other)],
                };
                format!(
                    "dlq.put({id}): {}; the DLQ holds {}",
                    fields.join(", "),
                    list(dlq)
                )
            }
            WorldEvent::Removed { id, removed, dlq } => {
                if *removed {
                    format!("dlq.remove({id}): the DLQ holds {}", list(dlq))
                } else {
                    format!("dlq.remove({id}): {id} was not in the DLQ")
                }
            }
            WorldEvent::Recovered { ids } => {
                format!("queue.recover(): {} back to the ready tail", list(ids))
            }
            WorldEvent::Advanced { by, now } => {
                format!("clock.advance({by}): the clock reads {now}")
            }
            WorldEvent::Crashed { call, timing, .. } => {
                format!("CRASH injected {} {call}: the process dies", timing.word())
            }
            WorldEvent::Misused { what } => format!("MISUSE: {what}"),
            WorldEvent::PendingRead { ids } => format!("queue.pending() -> [{}]", ids.join(", ")),
            WorldEvent::EntriesRead { dlq } => {
                format!("dlq.entries(): the DLQ holds {}", list(dlq))
            }
        }
    }
}

impl WorldEvent {
    /// The happening as a timeline event: its line for a person (`describe`), and the call
    /// between two of `LANES` (or the mark on one) a picture draws for it.
    pub(crate) fn timeline_line(&self) -> TimelineLine {
        let call = |from, to, label: String, tone| TimelineEvent::Call {
            from,
            to,
            label,
            tone,
        };
        let event = match self {
            WorldEvent::Received {
                id, receive_count, ..
            } => call(
                "queue",
                "consumer",
                format!("{id} (receive_count {receive_count})"),
                Tone::Delivery,
            ),
            WorldEvent::NothingReady => {
                call("queue", "consumer", "nothing ready".to_owned(), Tone::Read)
            }
            WorldEvent::Checked { id, has } => {
                call("consumer", "DLQ", format!("has({id}) -> {has}"), Tone::Read)
            }
            // A crash of the process is a mark where it happens, as an injected one is.
            WorldEvent::Handled {
                id,
                outcome: ScriptedOutcome::Crash,
            } => TimelineEvent::Mark {
                lane: "handler",
                label: format!("CRASH: handler({id}) crashes the process"),
                tone: Tone::Crash,
            },
            WorldEvent::Handled { id, outcome } => {
                let tone = match outcome {
                    ScriptedOutcome::Ok => Tone::Success,
                    ScriptedOutcome::Crash => Tone::Crash,
                    permanent if permanent.is_permanent() => Tone::Dead,
                    _ => Tone::Retry,
                };
                call(
                    "consumer",
                    "handler",
                    format!("{id} -> {}", outcome.label()),
                    tone,
                )
            }
            WorldEvent::Unscripted { id, .. } => call(
                "consumer",
                "handler",
                format!("{id} -> unscripted"),
                Tone::Misuse,
            ),
            WorldEvent::Acked { id } => {
                call("consumer", "queue", format!("ack({id})"), Tone::Success)
            }
            WorldEvent::Retried { id } => {
                call("consumer", "queue", format!("retry({id})"), Tone::Retry)
            }
            WorldEvent::Sent { id } => {
                call("consumer", "queue", format!("send({id})"), Tone::Replay)
            }
            WorldEvent::Put { id, entry, .. } => {
                let reason = entry.get("reason").map(yaml::flow).unwrap_or_default();
                call("consumer", "DLQ", format!("put({id}) {reason}"), Tone::Dead)
            }
            WorldEvent::Removed { id, removed, .. } => call(
                "consumer",
                "DLQ",
                format!("remove({id}) -> {removed}"),
                if *removed { Tone::Replay } else { Tone::Read },
            ),
            WorldEvent::Recovered { .. } => {
                call("consumer", "queue", "recover()".to_owned(), Tone::Plain)
            }
            WorldEvent::Advanced { by, now } => TimelineEvent::Mark {
                lane: "consumer",
                label: format!("clock +{by} = {now}"),
                tone: Tone::Clock,
            },
            WorldEvent::Took { takes, now, .. } => TimelineEvent::Mark {
                lane: "handler",
                label: format!("clock +{takes} = {now}"),
                tone: Tone::Clock,
            },
            WorldEvent::Crashed { call, timing, .. } => TimelineEvent::Mark {
                lane: "consumer",
                label: format!("CRASH {} {call}", timing.word()),
                tone: Tone::Crash,
            },
            WorldEvent::Misused { what } => TimelineEvent::Mark {
                lane: "consumer",
                label: format!("MISUSE: {what}"),
                tone: Tone::Misuse,
            },
            WorldEvent::PendingRead { .. } => {
                call("consumer", "queue", "pending()".to_owned(), Tone::Read)
            }
            WorldEvent::EntriesRead { .. } => {
                call("consumer", "DLQ", "entries()".to_owned(), Tone::Read)
            }
        };
        TimelineLine {
            line: format!("    {}", self.describe()),
            event,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_receive_names_its_count_and_first_time() {
        let received = WorldEvent::Received {
            id: "a".into(),
            receive_count: 2,
            first_received_at: Some(5),
            already_dead: true,
        };
        assert_eq!(
            received.describe(),
            "receive a: receive_count 2, first received at 5; its id is already in the DLQ"
        );
    }

    #[test]
    fn a_handler_call_names_a_subclass_and_the_time_it_took_outside_the_trace() {
        let handled = WorldEvent::Handled {
            id: "a".into(),
            outcome: ScriptedOutcome::Permanent(
                crate::contracts::dlq_consumer::handler::GivenError::subclass(
                    "OutOfStockError",
                    "gone",
                ),
            ),
        };
        assert_eq!(
            handled.describe(),
            "handler(a) raises OutOfStockError: gone (a subclass of PermanentError)"
        );
        assert_eq!(handled.trace_line(), "handler(a) -> OutOfStockError");
        let took = WorldEvent::Took {
            id: "a".into(),
            takes: 5,
            now: 7,
        };
        assert_eq!(
            took.describe(),
            "handler(a) took 5 to return: the clock reads 7"
        );
        assert!(handled.is_effect() && !took.is_effect());
    }

    #[test]
    fn a_put_shows_the_entry_and_the_dlq_after() {
        let put = WorldEvent::Put {
            id: "a".into(),
            entry: Arc::new(
                json!({"id": "a", "body": "x", "reason": "exhausted", "error": "TransientError: t", "attempts": 3}),
            ),
            dlq: vec!["b".into(), "a".into()],
        };
        assert_eq!(
            put.describe(),
            "dlq.put(a): reason exhausted, error \"TransientError: t\", attempts 3; the DLQ holds b, a"
        );
    }
}
