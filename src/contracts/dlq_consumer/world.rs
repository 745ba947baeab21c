//! The dlq-consumer world: fake queue, DLQ, clock, scripted handler and injected crashes.
//!
//! Every implementation, built-in or external, reaches the world only through
//! `WorldHost::world_call`, so every call is recorded in one ordered trace and any call can be
//! made to crash. The semantics are pinned by docs/contracts.md section 1.
//!
//! One world, many implementations: the fakes live once, here, in Rust (what a spec scripts the
//! handler to do, the errors it raises and the time its calls take, in `handler.rs`). The
//! built-in consumer goes through the same door as the shims, by a typed proxy (`given.rs`);
//! being in the same process, it hands the world typed calls (`Call`) rather than JSON, which the
//! world reads into the same calls before it faults, checks and journals them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Value, json};

pub use super::handler::{GivenError, Script, ScriptedCall, ScriptedOutcome};
pub(crate) use super::journal::CrashTiming;
use super::journal::WorldEvent;
pub(crate) use super::queue::Message;
use super::queue::Queue;
use crate::model::implementation::{Naming, Raised, WorldHost};
use crate::text::source::Position;

/// The calls of the world, by their protocol names.
pub(crate) const CALLS: &[&str] = &[
    "queue.send",
    "queue.receive",
    "queue.ack",
    "queue.retry",
    "queue.recover",
    "queue.pending",
    "dlq.put",
    "dlq.has",
    "dlq.remove",
    "dlq.entries",
    "clock.now",
    "clock.advance",
    "handler",
];

/// A crash armed by a `fault` step: fires on the `remaining`-th next matching call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) timing: CrashTiming,
    pub(crate) call: String,
    pub(crate) remaining: u32,
    /// Where the spec arms it, so a fault that never fires can be pointed at.
    pub(crate) armed_at: Position,
}

/// A handler call for which the spec scripts no outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unscripted {
    pub(crate) id: String,
    /// 1-based: the n-th handler call for this message.
    pub(crate) call_number: u64,
}

/// The most the clock counts to: 2^53 - 1, the largest whole number every implementation's
/// JSON (JavaScript's numbers included) keeps exact. A spec's `advance` steps stay within it
/// (checked on loading), and so does an implementation's `clock.advance`.
pub(crate) const MAX_CLOCK: u64 = (1 << 53) - 1;

#[derive(Debug, Default)]
pub struct World {
    /// How the implementation spells message keys.
    naming: Naming,
    /// Whether the journal keeps what only a person reads (the DLQ's ids after each change):
    /// `explain` wants it, a plain run does not pay for it.
    detailed: bool,
    /// Counts every change to the world, so a step that changed nothing can be told cheaply.
    version: u64,
    /// How many entries each id has in the DLQ, so a lookup by id does not scan it.
    dlq_count: HashMap<String, usize>,
    /// How many misuses the journal holds.
    misuses: usize,
    clock: u64,
    /// The fake queue, or a broker's (`queue/`): the world's calls on it are the same.
    queue: Box<dyn Queue>,
    /// Each entry shared with the journal's record of its put, not copied.
    dlq: Vec<Arc<Value>>,
    /// Shared with the scenario, so a run does not copy the script of every message.
    script: Arc<Script>,
    handler_calls: IndexMap<String, u64>,
    /// The sum of `handler_calls`, kept as they count, so a `counts` check need not add them up.
    handler_call_total: u64,
    faults: Vec<Fault>,
    unscripted: Option<Unscripted>,
    journal: Vec<WorldEvent>,
    /// Detailed worlds only: the body each id was last received with, which the DLQ entry of
    /// that delivery must hold (`explain --impl` sets the entry put against it).
    received_bodies: HashMap<String, String>,
    /// Whether the queue's broker dead-letters by itself (`dead-letter=broker`): the world
    /// then tells it which messages the consumer dead-letters, and how the handler failed.
    broker_dead_letters: bool,
    /// Broker dead-lettering only: the messages whose handler call on the delivery at hand
    /// failed transiently.
    failed_transiently: HashSet<String>,
}

impl World {
    pub fn new(script: Script, naming: Naming) -> Self {
        World::shared(Arc::new(script), naming)
    }

    /// A world reading a script it shares with others, such as a scenario's.
    pub(crate) fn shared(script: Arc<Script>, naming: Naming) -> Self {
        World {
            script,
            naming,
            ..World::default()
        }
    }

    /// The world with `queue` for its queue (a broker's), instead of the fake.
    pub(crate) fn on(mut self, queue: Box<dyn Queue>) -> Self {
        self.broker_dead_letters = queue.dead_letters_by_itself();
        self.queue = queue;
        self
    }

    /// A world whose journal also keeps what `explain` tells a person.
    pub(crate) fn detailed(mut self) -> Self {
        self.detailed = true;
        self
    }

    /// A copy of the world to ask what a call would answer, with none of its journal: the
    /// answers never read it, and copying it would make every foresight cost the whole run so
    /// far. `None` when the world holds more than `limit` messages, entries, counts and faults
    /// together, so that foresight costs a bounded amount per request, and on a broker's
    /// queue, which cannot be copied: there every call waits for its answer.
    pub(crate) fn foresight_copy(&self, limit: usize) -> Option<World> {
        let (ready, in_flight) = self.queue.lengths();
        let size =
            ready + in_flight + self.dlq.len() + self.handler_calls.len() + self.faults.len();
        let queue = (size <= limit).then(|| self.queue.copy()).flatten()?;
        Some(World {
            naming: self.naming,
            detailed: false,
            version: self.version,
            dlq_count: self.dlq_count.clone(),
            misuses: self.misuses,
            clock: self.clock,
            queue,
            dlq: self.dlq.clone(),
            script: Arc::clone(&self.script),
            handler_calls: self.handler_calls.clone(),
            handler_call_total: self.handler_call_total,
            faults: self.faults.clone(),
            unscripted: self.unscripted.clone(),
            journal: Vec::new(),
            received_bodies: HashMap::new(),
            broker_dead_letters: self.broker_dead_letters,
            failed_transiently: self.failed_transiently.clone(),
        })
    }

    /// A number that changes whenever the world does.
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    // The harness's own actions: the spec's steps, not calls by the implementation.

    pub(crate) fn send(&mut self, id: &str, body: &str) {
        self.version += 1;
        self.queue.send(id, body);
    }

    pub(crate) fn recover(&mut self) {
        if self.queue.lengths().1 > 0 {
            self.version += 1;
        }
        self.queue.recover();
        self.compare_fresh_dead_letters();
    }

    pub(crate) fn advance(&mut self, by: u64) {
        if by > 0 {
            self.version += 1;
        }
        self.clock = self.clock.saturating_add(by);
    }

    pub(crate) fn arm(&mut self, fault: Fault) {
        self.version += 1;
        self.faults.push(fault);
    }

    // Observations.

    pub(crate) fn now(&self) -> u64 {
        self.clock
    }

    /// The ready ids, head first (a broker's queue is looked at for them).
    pub(crate) fn pending(&mut self) -> Vec<String> {
        self.queue.pending()
    }

    /// The ready ids as last seen, without looking at a broker's queue again.
    pub(crate) fn ready_ids(&self) -> Vec<String> {
        self.queue.ready_ids()
    }

    /// How many messages are ready and in flight, without copying their ids: what a `counts`
    /// expectation compares, perhaps at every step of a big `repeat`.
    pub(crate) fn queue_lengths(&self) -> (usize, usize) {
        self.queue.lengths()
    }

    /// Whether nothing is ready and nothing is in flight.
    pub(crate) fn is_drained(&self) -> bool {
        self.queue.lengths() == (0, 0)
    }

    /// The ids of every message in flight or ready, in no order that means anything, without
    /// copying them. An id sent twice is there twice.
    pub(crate) fn queued_ids(&self) -> impl Iterator<Item = &str> {
        self.queue.queued_ids()
    }

    pub(crate) fn in_flight(&self) -> Vec<String> {
        self.queue.in_flight()
    }

    /// The queue itself: a broker's says what broke it and where it departed from the fake.
    pub(crate) fn queue(&self) -> &dyn Queue {
        self.queue.as_ref()
    }

    /// Where the spec reads the DLQ, and at its end: a broker that dead-letters by itself
    /// compares what it dead-lettered with the DLQ's entries (nothing on the fake).
    pub(crate) fn compare_dead_letters(&mut self) {
        if self.broker_dead_letters {
            self.queue
                .compare_dead_letters(&self.dlq, self.naming, false);
        }
    }

    /// After a message went back to a broker that dead-letters by itself (an ack, a retry, a
    /// recover): each entry it dead-lettered is compared with the DLQ as it is then.
    fn compare_fresh_dead_letters(&mut self) {
        if self.broker_dead_letters {
            self.queue
                .compare_dead_letters(&self.dlq, self.naming, true);
        }
    }

    /// The DLQ and what the broker dead-lettered by itself, as YAML, for a report's diff;
    /// `None` where the broker does not dead-letter.
    pub(crate) fn dead_letters_shown(&self) -> Option<(String, String)> {
        self.queue.dead_letters_shown(&self.dlq, self.naming)
    }

    pub(crate) fn dlq(&self) -> &[Arc<Value>] {
        &self.dlq
    }

    pub(crate) fn handler_calls(&self) -> &IndexMap<String, u64> {
        &self.handler_calls
    }

    /// How many times the handler was called in all, whatever the message.
    pub(crate) fn handler_call_total(&self) -> u64 {
        self.handler_call_total
    }

    /// Every effect of the implementation's calls, in order, as `WorldEvent::trace_line` writes
    /// it. Reads are left out: how and how often an implementation reads is its own business.
    pub(crate) fn trace(&self) -> Vec<String> {
        self.journal
            .iter()
            .filter(|happening| happening.is_effect())
            .map(WorldEvent::trace_line)
            .collect()
    }

    /// How many times the world was misused so far.
    pub(crate) fn misuse_count(&self) -> usize {
        self.misuses
    }

    /// Every misuse of the world, in order.
    pub(crate) fn misuse(&self) -> Vec<String> {
        self.journal
            .iter()
            .filter_map(|happening| match happening {
                WorldEvent::Misused { what } => Some(what.clone()),
                _ => None,
            })
            .collect()
    }

    /// What happened, call by call: the one record the trace and the misuse are read from.
    pub(crate) fn journal(&self) -> &[WorldEvent] {
        &self.journal
    }

    /// The ids in the DLQ, in put order.
    pub(crate) fn dlq_ids(&self) -> Vec<String> {
        self.dlq
            .iter()
            .map(|entry| match entry.get("id") {
                Some(Value::String(id)) => id.clone(),
                other => other.map(Value::to_string).unwrap_or_default(),
            })
            .collect()
    }

    /// Faults armed by the spec that have not fired (yet).
    pub(crate) fn armed(&self) -> &[Fault] {
        &self.faults
    }

    fn happened(&mut self, happening: WorldEvent) {
        if happening.is_effect() {
            self.version += 1;
        }
        if matches!(happening, WorldEvent::Misused { .. }) {
            self.misuses += 1;
        }
        self.journal.push(happening);
    }

    /// The body `id` was last received with, in a detailed world (`None` elsewhere).
    pub(crate) fn received_body(&self, id: &str) -> Option<&str> {
        self.received_bodies.get(id).map(String::as_str)
    }

    /// The DLQ's ids for the journal, when it is detailed; a plain run keeps none. A long DLQ
    /// is kept by its ends (see `listing::shown`), so a big scenario's journal stays linear.
    fn dlq_view(&self) -> Vec<String> {
        if !self.detailed {
            return Vec::new();
        }
        let id = |entry: &Arc<Value>| match entry.get("id") {
            Some(Value::String(id)) => id.clone(),
            other => other.map(Value::to_string).unwrap_or_default(),
        };
        crate::text::listing::shown(&self.dlq, id)
    }

    /// Takes the record of an unscripted handler call, if one happened since the last take.
    pub(crate) fn take_unscripted(&mut self) -> Option<Unscripted> {
        self.unscripted.take()
    }

    fn misused(&mut self, what: String) -> Raised {
        self.happened(WorldEvent::Misused { what: what.clone() });
        Raised::error("MisuseError", what)
    }

    /// Whether this call would change the world (or call the handler). Reads never do: a
    /// receive with nothing ready, the removal of an id the DLQ does not hold, `dlq.has`,
    /// `dlq.entries`, `queue.pending` and `clock.now`. Faults count effects only, so a crash
    /// lands at the same point whatever an implementation reads on the way. `call` is `None`
    /// when its arguments do not fit it: such a call is misuse, and still counted as the
    /// named call.
    fn is_effect(&self, name: &str, call: Option<&Call<'_>>) -> bool {
        match (name, call) {
            ("queue.receive", _) => self.queue.lengths().0 > 0,
            ("dlq.remove", Some(Call::Remove(id))) => self.dlq_has(id),
            ("dlq.has" | "dlq.entries" | "queue.pending" | "clock.now", _) => false,
            _ => true,
        }
    }

    fn dlq_has(&self, id: &str) -> bool {
        self.dlq_count.get(id).is_some_and(|n| *n > 0)
    }

    /// Removes and returns the timing of a fault that fires on this call.
    fn fire_fault(&mut self, call: &str) -> Option<CrashTiming> {
        // Every fault on this call counts the call, so `nth: 1` and `nth: 3` on the same call
        // fire on the first and the third one; one call can only crash once.
        for fault in self.faults.iter_mut().filter(|f| f.call == call) {
            fault.remaining = fault.remaining.saturating_sub(1);
        }
        let index = self
            .faults
            .iter()
            .position(|f| f.call == call && f.remaining == 0)?;
        let timing = self.faults.remove(index).timing;
        // Another fault due on the same call cannot crash it a second time: it is spent too.
        self.faults.retain(|f| f.call != call || f.remaining > 0);
        Some(timing)
    }

    /// Answers a call of an implementation in this process, typed: the same faults, checks
    /// and journal as `world_call`, without JSON on either side.
    pub(crate) fn call(&mut self, call: Call<'_>) -> Result<Answer, Raised> {
        self.answer(call.name(), Ok(call))
    }

    /// Answers the call named `name`; `Err` holds the misuse of a call whose arguments do not
    /// fit it. The one way in for every implementation, typed or JSON.
    fn answer(&mut self, name: &str, call: Result<Call<'_>, String>) -> Result<Answer, Raised> {
        let fault = if self.is_effect(name, call.as_ref().ok()) {
            self.fire_fault(name)
        } else {
            None
        };
        match fault {
            Some(CrashTiming::Before) => {
                let about = call.as_ref().ok().and_then(Call::about);
                self.happened(WorldEvent::Crashed {
                    call: name.to_owned(),
                    timing: CrashTiming::Before,
                    about,
                });
                Err(Raised::crash(format!("injected crash before {name}")))
            }
            Some(CrashTiming::After) => {
                let about = call.as_ref().ok().and_then(Call::about);
                self.perform(call)?;
                self.happened(WorldEvent::Crashed {
                    call: name.to_owned(),
                    timing: CrashTiming::After,
                    about,
                });
                Err(Raised::crash(format!("injected crash after {name}")))
            }
            None => self.perform(call),
        }
    }

    fn perform(&mut self, call: Result<Call<'_>, String>) -> Result<Answer, Raised> {
        let call = match call {
            Ok(call) => call,
            Err(misuse) => return Err(self.misused(misuse)),
        };
        match call {
            Call::Send { id, body } => {
                self.happened(WorldEvent::Sent { id: id.to_owned() });
                self.send(id, body);
                Ok(Answer::Nothing)
            }
            Call::Receive => match self.queue.receive(self.clock) {
                Some(message) => {
                    let already_dead = self.dlq_has(&message.id);
                    if self.broker_dead_letters {
                        self.failed_transiently.remove(&message.id);
                    }
                    if self.detailed {
                        self.received_bodies
                            .insert(message.id.clone(), message.body.clone());
                    }
                    self.happened(WorldEvent::Received {
                        id: message.id.clone(),
                        receive_count: message.receive_count,
                        first_received_at: message.first_received_at,
                        already_dead,
                    });
                    Ok(Answer::Message(Some(message)))
                }
                None => {
                    self.happened(WorldEvent::NothingReady);
                    Ok(Answer::Message(None))
                }
            },
            Call::Ack(id) | Call::Retry(id) => {
                let retry = matches!(call, Call::Retry(_));
                if !self.queue.settle(id, retry) {
                    let name = call.name();
                    return Err(self.misused(format!("{name}({id}): {id} is not in flight")));
                }
                self.compare_fresh_dead_letters();
                let id = id.to_owned();
                if retry {
                    self.happened(WorldEvent::Retried { id });
                } else {
                    self.happened(WorldEvent::Acked { id });
                }
                Ok(Answer::Nothing)
            }
            Call::Recover => {
                let ids = self.in_flight();
                self.happened(WorldEvent::Recovered { ids });
                self.recover();
                Ok(Answer::Nothing)
            }
            Call::Pending => {
                let pending = self.pending();
                // A view, as of the DLQ: a timeline line per read, not a copy of the queue.
                let ids = if self.detailed {
                    crate::text::listing::shown(&pending, String::clone)
                } else {
                    Vec::new()
                };
                self.happened(WorldEvent::PendingRead { ids });
                Ok(Answer::Ids(pending))
            }
            Call::Put(entry) => match entry.get("id") {
                Some(Value::String(id)) => {
                    let id = id.clone();
                    if self.broker_dead_letters {
                        let transient = self.failed_transiently.contains(&id);
                        self.queue.dead_lettering(&id, transient);
                    }
                    *self.dlq_count.entry(id.clone()).or_insert(0) += 1;
                    let entry = Arc::new(entry);
                    self.dlq.push(Arc::clone(&entry));
                    let dlq = self.dlq_view();
                    self.happened(WorldEvent::Put { id, entry, dlq });
                    Ok(Answer::Nothing)
                }
                _ => Err(self.misused(format!("dlq.put: the entry has no string id: {entry}"))),
            },
            Call::Has(id) => {
                let has = self.dlq_has(id);
                let id = id.to_owned();
                self.happened(WorldEvent::Checked { id, has });
                Ok(Answer::Bool(has))
            }
            Call::Remove(id) => {
                let removed = self.dlq_count.remove(id).is_some_and(|n| n > 0);
                if removed {
                    self.dlq.retain(|e| e["id"] != *id);
                    self.queue.forget_dead_letter(id);
                }
                let (id, dlq) = (id.to_owned(), self.dlq_view());
                self.happened(WorldEvent::Removed { id, removed, dlq });
                Ok(Answer::Bool(removed))
            }
            Call::Entries => {
                let dlq = self.dlq_view();
                self.happened(WorldEvent::EntriesRead { dlq });
                let entries = self.dlq.iter().map(|entry| (**entry).clone()).collect();
                Ok(Answer::Entries(entries))
            }
            Call::Now => Ok(Answer::Time(self.clock)),
            Call::Advance(by) => {
                if self.clock.checked_add(by).is_none_or(|at| at > MAX_CLOCK) {
                    return Err(self.misused(format!(
                        "clock.advance({by}) would move the clock from {} past {MAX_CLOCK}, the most it counts to",
                        self.clock
                    )));
                }
                self.advance(by);
                let now = self.clock;
                self.happened(WorldEvent::Advanced { by, now });
                Ok(Answer::Nothing)
            }
            Call::Handler(body) => self.handle(body).map(|()| Answer::Nothing),
        }
    }

    fn handle(&mut self, body: &str) -> Result<(), Raised> {
        // The handler gets only the body; the message is the latest received one carrying it.
        let Some(id) = self.queue.in_flight_with_body(body) else {
            return Err(self.misused(format!(
                "handler({body:?}): no message in flight has this body"
            )));
        };
        self.handler_call_total += 1;
        // Counted in place when the message was handled before: `entry` would copy the id at
        // every call. A new id goes last, as `entry` would put it.
        let call_number = match self.handler_calls.get_mut(&id) {
            Some(calls) => {
                *calls += 1;
                *calls
            }
            None => {
                self.handler_calls.insert(id.clone(), 1);
                1
            }
        };
        let scripted = self
            .script
            .get(&id)
            .and_then(|outcomes| outcomes.get(call_number as usize - 1))
            .cloned();
        match scripted {
            Some(ScriptedCall { outcome, takes }) => {
                // The call takes time: the clock moves before the handler returns or raises,
                // so what the implementation reads after the call (`failed_at`) sees its end.
                // Loading keeps a spec's advances and takes together within MAX_CLOCK.
                self.clock = self.clock.saturating_add(takes).min(MAX_CLOCK);
                if self.broker_dead_letters {
                    let transient = matches!(
                        outcome,
                        ScriptedOutcome::Transient(_) | ScriptedOutcome::Error { .. }
                    );
                    if transient {
                        self.failed_transiently.insert(id.clone());
                    } else {
                        self.failed_transiently.remove(&id);
                    }
                }
                let raised = outcome.raised();
                if takes > 0 {
                    self.happened(WorldEvent::Handled {
                        id: id.clone(),
                        outcome,
                    });
                    let now = self.clock;
                    self.happened(WorldEvent::Took { id, takes, now });
                } else {
                    self.happened(WorldEvent::Handled { id, outcome });
                }
                raised.map_or(Ok(()), Err)
            }
            None => {
                self.happened(WorldEvent::Unscripted {
                    id: id.clone(),
                    call_number,
                });
                self.unscripted = Some(Unscripted { id, call_number });
                // Unwind the implementation: the scenario ends at this call.
                Err(Raised::crash(
                    "the spec scripts no outcome for this handler call",
                ))
            }
        }
    }
}

/// A call of the world with its arguments read. An external implementation's calls arrive as
/// JSON and are read into one (`Call::read`); the built-in one makes them directly.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Call<'a> {
    Send {
        id: &'a str,
        body: &'a str,
    },
    Receive,
    Ack(&'a str),
    Retry(&'a str),
    Recover,
    Pending,
    /// The entry as the implementation wrote it: the DLQ keeps whatever it is given.
    Put(Value),
    Has(&'a str),
    Remove(&'a str),
    Entries,
    Now,
    Advance(u64),
    /// The handler, called with a message body.
    Handler(&'a str),
}

impl<'a> Call<'a> {
    /// The call's protocol name, one of `CALLS`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Call::Send { .. } => "queue.send",
            Call::Receive => "queue.receive",
            Call::Ack(_) => "queue.ack",
            Call::Retry(_) => "queue.retry",
            Call::Recover => "queue.recover",
            Call::Pending => "queue.pending",
            Call::Put(_) => "dlq.put",
            Call::Has(_) => "dlq.has",
            Call::Remove(_) => "dlq.remove",
            Call::Entries => "dlq.entries",
            Call::Now => "clock.now",
            Call::Advance(_) => "clock.advance",
            Call::Handler(_) => "handler",
        }
    }

    /// The message id the call names: an ack's, a retry's, a put entry's, ...
    pub(crate) fn about(&self) -> Option<String> {
        match self {
            Call::Send { id, .. }
            | Call::Ack(id)
            | Call::Retry(id)
            | Call::Has(id)
            | Call::Remove(id) => Some((*id).to_owned()),
            Call::Put(entry) => entry.get("id").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        }
    }

    /// The call's arguments as the protocol writes them.
    pub(crate) fn args(&self) -> Vec<Value> {
        match self {
            Call::Send { id, body } => vec![json!(id), json!(body)],
            Call::Ack(id) | Call::Retry(id) | Call::Has(id) | Call::Remove(id) => vec![json!(id)],
            Call::Handler(body) => vec![json!(body)],
            Call::Put(entry) => vec![entry.clone()],
            Call::Advance(by) => vec![json!(by)],
            Call::Receive | Call::Recover | Call::Pending | Call::Entries | Call::Now => vec![],
        }
    }

    /// Reads the protocol call `name` with JSON `args`; `Err` is the misuse to report when the
    /// arguments do not fit the call or there is no such call.
    pub(crate) fn read(name: &str, args: &'a [Value]) -> Result<Call<'a>, String> {
        let shape =
            |what: &str| format!("{name} expects {what}, got {}", Value::from(args.to_vec()));
        match (name, args) {
            ("queue.send", [Value::String(id), Value::String(body)]) => Ok(Call::Send { id, body }),
            ("queue.receive", []) => Ok(Call::Receive),
            ("queue.ack", [Value::String(id)]) => Ok(Call::Ack(id)),
            ("queue.retry", [Value::String(id)]) => Ok(Call::Retry(id)),
            ("queue.recover", []) => Ok(Call::Recover),
            ("queue.pending", []) => Ok(Call::Pending),
            ("dlq.put", [entry @ Value::Object(_)]) => Ok(Call::Put(entry.clone())),
            ("dlq.has", [Value::String(id)]) => Ok(Call::Has(id)),
            ("dlq.remove", [Value::String(id)]) => Ok(Call::Remove(id)),
            ("dlq.entries", []) => Ok(Call::Entries),
            ("clock.now", []) => Ok(Call::Now),
            ("clock.advance", [by]) => by
                .as_u64()
                .map(Call::Advance)
                .ok_or_else(|| shape("a whole number of time units >= 0")),
            ("handler", [Value::String(body)]) => Ok(Call::Handler(body)),
            ("queue.send", _) => Err(shape("[id, body] (two strings)")),
            ("queue.ack" | "queue.retry" | "dlq.has" | "dlq.remove", _) => {
                Err(shape("[id] (one string)"))
            }
            ("dlq.put", _) => Err(shape("[entry] (one object)")),
            ("handler", _) => Err(shape("[body] (one string)")),
            (known, _) if CALLS.contains(&known) => Err(shape("no arguments")),
            (unknown, _) => Err(format!(
                "`{unknown}` is not a call of the world; expected one of {}",
                CALLS.join(", ")
            )),
        }
    }
}

/// What the world answers to a call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// The call returns nothing (`null`).
    Nothing,
    /// `queue.receive`: the message, or `None` when nothing is ready.
    Message(Option<Message>),
    /// `dlq.has`, `dlq.remove`.
    Bool(bool),
    /// `queue.pending`: the ready ids, in order.
    Ids(Vec<String>),
    /// `dlq.entries`: the entries, in put order.
    Entries(Vec<Value>),
    /// `clock.now`.
    Time(u64),
}

impl Answer {
    /// The answer as the protocol writes it, keys spelled as the implementation's lesson does.
    pub(crate) fn into_value(self, naming: Naming) -> Value {
        match self {
            Answer::Nothing | Answer::Message(None) => Value::Null,
            Answer::Message(Some(message)) => message.to_value(naming),
            Answer::Bool(yes) => Value::Bool(yes),
            Answer::Ids(ids) => json!(ids),
            Answer::Entries(entries) => Value::Array(entries),
            Answer::Time(now) => json!(now),
        }
    }
}

impl WorldHost for World {
    fn world_call(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised> {
        let read = Call::read(call, args);
        let answer = self.answer(call, read)?;
        Ok(answer.into_value(self.naming))
    }

    fn in_process(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::dlq_consumer::handler;
    use crate::model::implementation::RaisedKind;

    fn call(world: &mut World, name: &str, args: Value) -> Result<Value, Raised> {
        let args = args.as_array().cloned().unwrap_or_default();
        world.world_call(name, &args)
    }

    fn world_with(script: &[(&str, Vec<ScriptedOutcome>)]) -> World {
        World::new(
            script
                .iter()
                .map(|(id, o)| (id.to_string(), handler::instant(o.iter().cloned())))
                .collect(),
            Naming::Snake,
        )
    }

    /// The lesson's fake, standing for a broker that dead-letters by itself: it records what
    /// the world tells it of the consumer's dead-lettering.
    #[derive(Debug, Default)]
    struct RecordingQueue {
        fake: super::super::queue::fake::FakeQueue,
        dead_lettering: Arc<std::sync::Mutex<Vec<(String, bool)>>>,
        forgotten: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl Queue for RecordingQueue {
        fn send(&mut self, id: &str, body: &str) {
            self.fake.send(id, body);
        }
        fn receive(&mut self, now: u64) -> Option<Message> {
            self.fake.receive(now)
        }
        fn settle(&mut self, id: &str, retry: bool) -> bool {
            self.fake.settle(id, retry)
        }
        fn recover(&mut self) {
            self.fake.recover();
        }
        fn pending(&mut self) -> Vec<String> {
            self.fake.pending()
        }
        fn ready_ids(&self) -> Vec<String> {
            self.fake.ready_ids()
        }
        fn lengths(&self) -> (usize, usize) {
            self.fake.lengths()
        }
        fn in_flight(&self) -> Vec<String> {
            self.fake.in_flight()
        }
        fn in_flight_with_body(&self, body: &str) -> Option<String> {
            self.fake.in_flight_with_body(body)
        }
        fn queued_ids(&self) -> Box<dyn Iterator<Item = &str> + '_> {
            self.fake.queued_ids()
        }
        fn copy(&self) -> Option<Box<dyn Queue>> {
            None
        }
        fn dead_letters_by_itself(&self) -> bool {
            true
        }
        fn dead_lettering(&mut self, id: &str, transient: bool) {
            let mut recorded = self.dead_lettering.lock().unwrap();
            recorded.push((id.to_owned(), transient));
        }
        fn forget_dead_letter(&mut self, id: &str) {
            self.forgotten.lock().unwrap().push(id.to_owned());
        }
    }

    #[test]
    fn a_broker_that_dead_letters_by_itself_is_told_what_the_consumer_dead_letters_and_how_it_failed()
     {
        let queue = RecordingQueue::default();
        let (dead_lettering, forgotten) = (
            Arc::clone(&queue.dead_lettering),
            Arc::clone(&queue.forgotten),
        );
        let script = [
            ("t", vec![ScriptedOutcome::Transient("timeout".into())]),
            (
                "e",
                vec![ScriptedOutcome::Error {
                    class: "TypeError".into(),
                    message: "x".into(),
                }],
            ),
            ("p", vec![ScriptedOutcome::Permanent("bad".into())]),
        ];
        let mut world = world_with(&script).on(Box::new(queue));
        for id in ["t", "e", "p", "q"] {
            world.send(id, id);
        }
        for id in ["t", "e", "p", "q"] {
            call(&mut world, "queue.receive", json!([])).unwrap();
            // The poison pill `q` is dead-lettered without a handler call.
            if id != "q" {
                let _ = call(&mut world, "handler", json!([id]));
            }
            call(&mut world, "dlq.put", json!([{ "id": id }])).unwrap();
            call(&mut world, "queue.ack", json!([id])).unwrap();
        }
        assert_eq!(
            *dead_lettering.lock().unwrap(),
            [
                ("t".to_owned(), true),
                ("e".to_owned(), true),
                ("p".to_owned(), false),
                ("q".to_owned(), false),
            ]
        );
        call(&mut world, "dlq.remove", json!(["p"])).unwrap();
        call(&mut world, "dlq.remove", json!(["absent"])).unwrap();
        assert_eq!(*forgotten.lock().unwrap(), ["p"]);
    }

    #[test]
    fn the_fake_is_told_nothing_of_dead_lettering() {
        let mut world = world_with(&[("a", vec![ScriptedOutcome::Transient("t".into())])]);
        world.send("a", "a");
        call(&mut world, "queue.receive", json!([])).unwrap();
        let _ = call(&mut world, "handler", json!(["a"]));
        call(&mut world, "dlq.put", json!([{ "id": "a" }])).unwrap();
        assert!(world.failed_transiently.is_empty());
        assert_eq!(world.dead_letters_shown(), None);
    }

    #[test]
    fn receive_counts_deliveries_and_keeps_the_first_receive_time() {
        let mut world = World::default();
        world.send("a", "body-a");
        world.advance(5);
        let first = call(&mut world, "queue.receive", json!([])).unwrap();
        assert_eq!(first["receive_count"], 1);
        assert_eq!(first["first_received_at"], 5);
        call(&mut world, "queue.retry", json!(["a"])).unwrap();
        world.advance(3);
        let second = call(&mut world, "queue.receive", json!([])).unwrap();
        assert_eq!(second["receive_count"], 2);
        assert_eq!(second["first_received_at"], 5);
    }

    #[test]
    fn receive_on_an_empty_queue_returns_null() {
        let mut world = World::default();
        assert_eq!(
            call(&mut world, "queue.receive", json!([])),
            Ok(Value::Null)
        );
    }

    #[test]
    fn recover_moves_in_flight_messages_to_the_tail_in_receive_order() {
        let mut world = World::default();
        for id in ["a", "b", "c"] {
            world.send(id, id);
        }
        call(&mut world, "queue.receive", json!([])).unwrap();
        call(&mut world, "queue.receive", json!([])).unwrap();
        world.recover();
        assert_eq!(world.pending(), ["c", "a", "b"]);
        assert!(world.in_flight().is_empty());
    }

    #[test]
    fn acking_a_message_not_in_flight_is_misuse_and_raises() {
        let mut world = World::default();
        world.send("a", "x");
        let error = call(&mut world, "queue.ack", json!(["a"])).unwrap_err();
        assert_eq!(error.class, "MisuseError");
        assert_eq!(world.misuse(), ["queue.ack(a): a is not in flight"]);
    }

    #[test]
    fn a_second_put_of_the_same_id_is_kept_and_remove_drops_both() {
        let mut world = World::default();
        let entry = json!({"id": "a", "body": "x"});
        call(&mut world, "dlq.put", json!([entry])).unwrap();
        call(&mut world, "dlq.put", json!([entry])).unwrap();
        assert_eq!(world.dlq().len(), 2);
        assert_eq!(
            call(&mut world, "dlq.remove", json!(["a"])),
            Ok(json!(true))
        );
        assert_eq!(
            call(&mut world, "dlq.remove", json!(["a"])),
            Ok(json!(false))
        );
    }

    #[test]
    fn the_handler_follows_the_script_per_message_and_reports_running_out() {
        let mut world = world_with(&[("a", vec![ScriptedOutcome::Transient("t".into())])]);
        world.send("a", "body-a");
        call(&mut world, "queue.receive", json!([])).unwrap();
        let first = call(&mut world, "handler", json!(["body-a"])).unwrap_err();
        assert_eq!(first.describe(), "TransientError: t");
        let second = call(&mut world, "handler", json!(["body-a"])).unwrap_err();
        assert_eq!(second.kind, RaisedKind::Crash);
        assert_eq!(
            world.take_unscripted(),
            Some(Unscripted {
                id: "a".into(),
                call_number: 2
            })
        );
    }

    /// A world whose handler call for `a` takes 5 and raises `outcome`.
    fn world_taking(outcome: ScriptedOutcome) -> World {
        let calls: handler::Outcomes = vec![ScriptedCall::taking(outcome, 5)].into();
        let mut world = World::new(HashMap::from([("a".to_owned(), calls)]), Naming::Snake);
        world.send("a", "x");
        world.advance(2);
        world
    }

    #[test]
    fn a_handler_call_that_takes_time_moves_the_clock_before_it_returns() {
        let mut world = world_taking(ScriptedOutcome::Transient("db timeout".into()));
        call(&mut world, "queue.receive", json!([])).unwrap();
        let raised = call(&mut world, "handler", json!(["x"])).unwrap_err();
        assert_eq!(raised.describe(), "TransientError: db timeout");
        assert_eq!(call(&mut world, "clock.now", json!([])), Ok(json!(7)));
        // The time is the handler's: no advance of the implementation's own in the trace.
        assert_eq!(
            world.trace(),
            ["queue.receive() -> a", "handler(a) -> TransientError"]
        );
    }

    #[test]
    fn a_crash_before_the_handler_takes_no_time_and_one_after_it_does() {
        for (timing, now) in [(CrashTiming::Before, 2), (CrashTiming::After, 7)] {
            let mut world = world_taking(ScriptedOutcome::Ok);
            world.arm(Fault {
                timing,
                call: "handler".into(),
                remaining: 1,
                armed_at: Position::START,
            });
            call(&mut world, "queue.receive", json!([])).unwrap();
            let crashed = call(&mut world, "handler", json!(["x"])).unwrap_err();
            assert_eq!(crashed.kind, RaisedKind::Crash);
            assert_eq!(world.now(), now, "{timing:?}");
        }
    }

    #[test]
    fn a_subclass_of_a_given_error_is_raised_with_the_class_it_extends() {
        let out_of_stock = handler::GivenError::subclass("OutOfStockError", "sku 4411");
        let mut world = world_taking(ScriptedOutcome::Permanent(out_of_stock));
        call(&mut world, "queue.receive", json!([])).unwrap();
        let raised = call(&mut world, "handler", json!(["x"])).unwrap_err();
        assert_eq!(
            serde_json::to_value(&raised).unwrap(),
            json!({"kind": "error", "class": "OutOfStockError", "message": "sku 4411", "extends": "PermanentError"})
        );
        assert!(raised.is_a("PermanentError") && !raised.is_a("TransientError"));
    }

    #[test]
    fn two_faults_on_one_call_each_count_every_matching_call() {
        let mut world = World::default();
        for id in ["a", "b", "c"] {
            world.send(id, id);
        }
        for remaining in [1, 3] {
            world.arm(Fault {
                timing: CrashTiming::Before,
                call: "queue.receive".into(),
                remaining,
                armed_at: Position::START,
            });
        }
        assert!(call(&mut world, "queue.receive", json!([])).is_err());
        assert!(call(&mut world, "queue.receive", json!([])).is_ok());
        assert!(call(&mut world, "queue.receive", json!([])).is_err());
        assert!(world.armed().is_empty());
    }

    #[test]
    fn an_injected_crash_after_a_call_performs_it_first() {
        let mut world = World::default();
        world.arm(Fault {
            timing: CrashTiming::After,
            call: "dlq.put".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        let error = call(&mut world, "dlq.put", json!([{"id": "a"}])).unwrap_err();
        assert_eq!(error.kind, RaisedKind::Crash);
        assert_eq!(world.dlq().len(), 1);
        // One-shot: the next put goes through.
        assert!(call(&mut world, "dlq.put", json!([{"id": "b"}])).is_ok());
    }

    #[test]
    fn an_injected_crash_before_a_call_skips_it_and_counts_matching_calls() {
        let mut world = World::default();
        world.send("a", "x");
        world.send("b", "y");
        world.arm(Fault {
            timing: CrashTiming::Before,
            call: "queue.receive".into(),
            remaining: 2,
            armed_at: Position::START,
        });
        assert!(call(&mut world, "queue.receive", json!([])).is_ok());
        assert!(call(&mut world, "queue.receive", json!([])).is_err());
        assert_eq!(world.pending(), ["b"]);
    }

    #[test]
    fn the_trace_lists_effects_and_misuse_and_leaves_reads_out() {
        let mut world = world_with(&[("a", vec![ScriptedOutcome::Ok])]);
        world.send("a", "x");
        world.arm(Fault {
            timing: CrashTiming::After,
            call: "queue.ack".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        call(&mut world, "queue.receive", json!([])).unwrap();
        call(&mut world, "clock.now", json!([])).unwrap();
        call(&mut world, "queue.pending", json!([])).unwrap();
        call(&mut world, "dlq.has", json!(["a"])).unwrap();
        call(&mut world, "dlq.entries", json!([])).unwrap();
        call(&mut world, "dlq.remove", json!(["a"])).unwrap();
        call(&mut world, "queue.receive", json!([])).unwrap();
        call(&mut world, "handler", json!(["x"])).unwrap();
        call(&mut world, "handler", json!(["x"])).unwrap_err();
        call(&mut world, "queue.ack", json!(["a"])).unwrap_err();
        call(&mut world, "queue.ack", json!(["a"])).unwrap_err();
        assert_eq!(
            world.trace(),
            [
                "queue.receive() -> a",
                "handler(a) -> ok",
                "handler(a) -> unscripted",
                "queue.ack(a)",
                "queue.ack -> crash (injected after the call)",
                "queue.ack(a): a is not in flight !misuse",
            ]
        );
        assert_eq!(world.misuse(), ["queue.ack(a): a is not in flight"]);
    }

    #[test]
    fn faults_count_effects_only() {
        let mut world = World::default();
        world.arm(Fault {
            timing: CrashTiming::Before,
            call: "queue.receive".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        world.arm(Fault {
            timing: CrashTiming::Before,
            call: "dlq.remove".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        // Nothing ready, nothing to remove: reads, which never fire a fault.
        assert_eq!(
            call(&mut world, "queue.receive", json!([])),
            Ok(Value::Null)
        );
        assert_eq!(
            call(&mut world, "dlq.remove", json!(["a"])),
            Ok(json!(false))
        );
        assert_eq!(world.armed().len(), 2);
        world.send("a", "x");
        call(&mut world, "dlq.put", json!([{"id": "a"}])).unwrap();
        assert!(call(&mut world, "queue.receive", json!([])).is_err());
        assert!(call(&mut world, "dlq.remove", json!(["a"])).is_err());
        assert!(world.armed().is_empty());
    }

    #[test]
    fn a_message_is_handed_out_in_the_implementations_spelling() {
        let mut world = World::new(HashMap::new(), Naming::Camel);
        world.send("a", "x");
        assert_eq!(
            call(&mut world, "queue.receive", json!([])).unwrap(),
            json!({"id": "a", "body": "x", "receiveCount": 1, "firstReceivedAt": 0})
        );
    }

    #[test]
    fn a_typed_call_reads_back_from_its_protocol_form() {
        let calls = [
            Call::Send { id: "a", body: "x" },
            Call::Receive,
            Call::Ack("a"),
            Call::Retry("a"),
            Call::Recover,
            Call::Pending,
            Call::Put(json!({"id": "a"})),
            Call::Has("a"),
            Call::Remove("a"),
            Call::Entries,
            Call::Now,
            Call::Advance(3),
            Call::Handler("x"),
        ];
        let names: Vec<&str> = calls.iter().map(Call::name).collect();
        assert_eq!(names, CALLS);
        for call in calls {
            let args = call.args();
            assert_eq!(Call::read(call.name(), &args), Ok(call));
        }
    }

    #[test]
    fn a_call_with_wrong_arguments_still_counts_for_a_fault_on_it() {
        let mut world = World::default();
        world.arm(Fault {
            timing: CrashTiming::After,
            call: "queue.ack".into(),
            remaining: 1,
            armed_at: Position::START,
        });
        // The fault fires; the call, performed first, is misuse, and that is what it raises.
        let error = call(&mut world, "queue.ack", json!([5])).unwrap_err();
        assert_eq!(error.class, "MisuseError");
        assert!(world.armed().is_empty());
        assert_eq!(
            world.trace(),
            ["queue.ack expects [id] (one string), got [5] !misuse"]
        );
    }

    #[test]
    fn wrong_arguments_and_unknown_calls_are_misuse_not_panics() {
        let mut world = World::default();
        assert!(call(&mut world, "queue.ack", json!([5])).is_err());
        assert!(call(&mut world, "queue.send", json!(["a"])).is_err());
        assert!(call(&mut world, "queue.explode", json!([])).is_err());
        assert!(call(&mut world, "clock.advance", json!([-1])).is_err());
        assert!(call(&mut world, "clock.advance", json!([MAX_CLOCK + 1])).is_err());
        assert_eq!(world.misuse().len(), 5);
    }
}
