//! The built-in reference `DLQConsumer`, exactly as docs/contracts.md section 1 pins it.
//!
//! It can also run with one classic mistake of `mistakes.rs` switched on: each `self.is(...)`
//! marks the one line that mistake changes, so the suite's teeth are shown on this very code.
//! With no mistake (the reference), every such test is false.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::given::{DlqEntry, Given};
use super::handler::{PERMANENT_ERROR, TRANSIENT_ERROR};
use super::mistakes::Slip;
use super::world::Message;
use crate::contracts::builtin::Subject;
use crate::model::implementation::{
    ImplError, ImplErrorKind, Raised, RaisedKind, Reply, WorldHost,
};
use crate::model::mistake::OBJECT_PROPERTIES;

pub(crate) const DEFAULT_MAX_ATTEMPTS: u64 = 3;

/// What a mistaken consumer keeps in process-wide globals, shared by every instance of one
/// process (one spec), as a student's module-level variables would be.
#[derive(Debug, Default)]
pub(crate) struct Globals {
    /// When each id was first seen (`first-seen-in-memory`).
    first_seen: HashMap<String, Option<u64>>,
    /// The message being handled, to ack on the next call (`acks-leftover`).
    leftover: Option<String>,
}

/// The reference consumer. It keeps no count of its own: attempts come from `receive_count`.
#[derive(Debug, Clone)]
pub(crate) struct DlqConsumer {
    pub(crate) max_attempts: u64,
    /// The one mistake this consumer makes, if any; the reference makes none.
    slip: Option<Slip>,
    /// Deliveries per id as this instance counted them (`counts-in-memory`).
    counted: HashMap<String, u64>,
    globals: Arc<Mutex<Globals>>,
}

impl DlqConsumer {
    pub(crate) fn new(max_attempts: u64) -> Self {
        DlqConsumer {
            max_attempts,
            slip: None,
            counted: HashMap::new(),
            globals: Arc::default(),
        }
    }

    /// A consumer that makes `slip`, sharing `globals` with the other instances of its process.
    pub(crate) fn with_slip(max_attempts: u64, slip: Slip, globals: Arc<Mutex<Globals>>) -> Self {
        DlqConsumer {
            slip: Some(slip),
            globals,
            ..DlqConsumer::new(max_attempts)
        }
    }

    fn is(&self, slip: Slip) -> bool {
        self.slip == Some(slip)
    }

    fn globals(&self) -> std::sync::MutexGuard<'_, Globals> {
        self.globals
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn process_one(
        &mut self,
        given: &mut Given,
    ) -> Result<Option<&'static str>, Raised> {
        if self.is(Slip::AcksLeftover) {
            let leftover = self.globals().leftover.take();
            if let Some(id) = leftover {
                given.ack(&id)?;
            }
        }
        let Some(message) = given.receive()? else {
            if self.is(Slip::IdleRecovers) {
                given.recover()?;
            }
            return Ok(None);
        };
        if self.is(Slip::EmptyBodyIsNothing) && message.body.is_empty() {
            return Ok(None);
        }
        if self.is(Slip::AcksLeftover) {
            self.globals().leftover = Some(message.id.clone());
        }
        let mut delivery = self.delivery(message);
        if self.is(Slip::FailedAtBeforeHandler) {
            delivery.clock_read_early = Some(given.now()?);
        }
        let message = &delivery.message;
        let dedupe_first = !self.is(Slip::NoDedupe)
            && !self.is(Slip::DedupeAfterPoison)
            && !self.is(Slip::DedupeAfterHandler);
        // An earlier delivery died between dlq.put and queue.ack: finish that ack only.
        if dedupe_first && self.already_dead(given, message)? {
            if !self.is(Slip::DedupeWithoutAck) {
                given.ack(&message.id)?;
            }
            return Ok(Some("dead"));
        }
        // Every earlier delivery died mid-handler: do not call it again.
        if self.is_poison(delivery.count) {
            if self.is(Slip::PoisonCallsHandler) {
                self.call_handler(given, message)
                    .or_else(|e| match e.kind {
                        RaisedKind::Crash => Err(e),
                        _ => Ok(()),
                    })?;
            }
            let attempts = match self.slip {
                Some(Slip::PoisonAttemptsIsReceiveCount) => delivery.count,
                Some(Slip::PoisonAttemptsIsBudget) => self.max_attempts,
                _ => delivery.count - 1,
            };
            let error = self.is(Slip::PoisonErrorIsEmpty).then(String::new);
            return self.dead_letter(given, &delivery, "poison", error, attempts);
        }
        if self.is(Slip::DedupeAfterPoison) && given.has(&message.id)? {
            given.ack(&message.id)?;
            return Ok(Some("dead"));
        }
        let handled = self.call_handler(given, message);
        if self.is(Slip::DedupeAfterHandler) && given.has(&message.id)? {
            given.ack(&message.id)?;
            return Ok(Some("dead"));
        }
        let error = match handled {
            Ok(()) => {
                if !self.is(Slip::SuccessWithoutAck) {
                    given.ack(&message.id)?;
                }
                return Ok(Some("ok"));
            }
            Err(error) if error.kind == RaisedKind::Crash => match self.slip {
                Some(Slip::SwallowsCrash) => return Ok(None),
                Some(Slip::AcksOnCrash) => {
                    given.ack(&message.id)?;
                    return Err(error);
                }
                Some(Slip::CatchesCrash) => error,
                _ => return Err(error),
            },
            Err(error) => error,
        };
        let described = self.describe(&error);
        // `except PermanentError` catches a subclass of it too.
        let permanent = if error.is_a(PERMANENT_ERROR) {
            let blind = self.is(Slip::SubclassBlind) && error.class != PERMANENT_ERROR;
            !self.is(Slip::RetriesPermanent) && !blind
        } else if error.is_a(TRANSIENT_ERROR) {
            false
        } else {
            self.is(Slip::UnexpectedIsPermanent) && error.kind != RaisedKind::Crash
        };
        let budget_left = match self.slip {
            Some(Slip::OffByOneBudget) => delivery.count <= self.max_attempts,
            Some(Slip::ExhaustsOneEarly) => delivery.count + 1 < self.max_attempts,
            _ => delivery.count < self.max_attempts,
        };
        // A permanent error is dead-lettered whatever budget is left.
        let budget_first = self.is(Slip::BudgetBeforeClass) && !budget_left;
        if permanent && !budget_first {
            return self.dead_letter(
                given,
                &delivery,
                "permanent",
                Some(described),
                delivery.count,
            );
        }
        if budget_left {
            match self.slip {
                Some(Slip::RetryWithoutRequeue) => {}
                Some(Slip::RetryByResend) => {
                    given.ack(&message.id)?;
                    given.send(&message.id, &message.body)?;
                }
                _ => given.retry(&message.id)?,
            }
            return Ok(Some("retry"));
        }
        self.dead_letter(
            given,
            &delivery,
            "exhausted",
            Some(described),
            delivery.count,
        )
    }

    /// A received message with the count and first time this consumer goes by: the queue's,
    /// unless a mistake makes it remember its own.
    fn delivery(&mut self, message: Message) -> ReceivedMessage {
        let count = if self.is(Slip::CountsInMemory) {
            let counted = self.counted.entry(message.id.clone()).or_insert(0);
            *counted += 1;
            *counted
        } else {
            message.receive_count
        };
        let first_at = if self.is(Slip::FirstSeenInMemory) {
            *self
                .globals()
                .first_seen
                .entry(message.id.clone())
                .or_insert(message.first_received_at)
        } else {
            message.first_received_at
        };
        ReceivedMessage {
            message,
            count,
            first_at,
            clock_read_early: None,
        }
    }

    /// Whether the DLQ already holds the received message: by its id, unless a mistake
    /// looks for its body.
    fn already_dead(&self, given: &mut Given, message: &Message) -> Result<bool, Raised> {
        if self.is(Slip::DedupeByBody) {
            let entries = given.entries()?;
            return Ok(entries.iter().any(|entry| entry.body == message.body));
        }
        given.has(&message.id)
    }

    fn is_poison(&self, count: u64) -> bool {
        match self.slip {
            Some(Slip::NoPoisonCheck) => false,
            Some(Slip::PoisonOneEarly) => count >= self.max_attempts,
            _ => count > self.max_attempts,
        }
    }

    /// Calls the handler with the message body; `Err` is what the handler raised.
    fn call_handler(&self, given: &mut Given, message: &Message) -> Result<(), Raised> {
        if self.is(Slip::HandlerGetsId) {
            return given.handle(&message.id);
        }
        given.handle(&message.body)
    }

    /// The entry's error: `Class: message`.
    fn describe(&self, error: &Raised) -> String {
        match self.slip {
            Some(Slip::ErrorWithoutClass) => error.message.clone(),
            Some(Slip::ErrorTemplate) if error.message.is_empty() => error.class.clone(),
            Some(Slip::ErrorCutShort) => error.describe().chars().take(40).collect(),
            Some(Slip::ErrorNamesGivenClass) => {
                let class = error.extends.as_deref().unwrap_or(&error.class);
                format!("{class}: {}", error.message)
            }
            _ => error.describe(),
        }
    }

    /// Dead-lettering: `dlq.put(entry)`, then `queue.ack(id)`, then "dead".
    fn dead_letter(
        &self,
        given: &mut Given,
        delivery: &ReceivedMessage,
        reason: &str,
        error: Option<String>,
        attempts: u64,
    ) -> Result<Option<&'static str>, Raised> {
        let message = &delivery.message;
        let now = match delivery.clock_read_early {
            Some(early) => early,
            None => given.now()?,
        };
        let entry = DlqEntry {
            id: message.id.clone(),
            body: message.body.clone(),
            reason: reason.to_owned(),
            error,
            attempts: if self.is(Slip::AttemptsOneShort) {
                attempts.saturating_sub(1)
            } else {
                attempts
            },
            first_attempt_at: if self.is(Slip::FirstAttemptIsNow) {
                Some(now)
            } else {
                delivery.first_at
            },
            failed_at: if self.is(Slip::FailedAtIsFirstAttempt) {
                delivery.first_at.unwrap_or_default()
            } else {
                now
            },
        };
        if self.is(Slip::AcksBeforePut) {
            given.ack(&message.id)?;
            given.put(&entry)?;
        } else {
            given.put(&entry)?;
            if !self.is(Slip::PutWithoutAck) {
                given.ack(&message.id)?;
            }
        }
        Ok(Some("dead"))
    }

    /// Replays the given ids in their order (all entries in put order when `None`), skipping
    /// ids not in the DLQ and ids already replayed by this call. Send first, then remove: a
    /// crash between the two loses nothing.
    pub(crate) fn replay(
        &mut self,
        given: &mut Given,
        ids: Option<Vec<String>>,
    ) -> Result<Vec<String>, Raised> {
        let mut entries = given.entries()?;
        if self.is(Slip::ReplayIntegerKeysFirst) {
            // A JavaScript object keyed by id lists integer-like keys first, ascending.
            entries.sort_by_key(|e| e.id.parse::<u32>().map_or(u64::MAX, u64::from));
        }
        let all = || entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        let asked = ids.clone().unwrap_or_else(all);
        let ids = match ids {
            None if self.is(Slip::ReplayAllSkipsPoison) => entries
                .iter()
                .filter(|entry| entry.error.is_some())
                .map(|entry| entry.id.clone())
                .collect(),
            None => all(),
            Some(ids) if ids.is_empty() && self.is(Slip::ReplayEmptyMeansAll) => all(),
            Some(ids) if self.is(Slip::ReplayInPutOrder) => {
                let mut in_put_order = all();
                in_put_order.retain(|id| ids.contains(id));
                in_put_order.dedup();
                in_put_order
            }
            Some(ids) => ids,
        };
        let mut replayed: Vec<String> = Vec::new();
        for id in ids {
            if replayed.contains(&id) && !self.is(Slip::ReplayRepeatsIds) {
                continue;
            }
            let Some(entry) = entries.iter().find(|e| e.id == id) else {
                if self.is(Slip::ReplayFindsObjectProperties) && OBJECT_PROPERTIES.contains(&&*id) {
                    given.send(&id, "")?;
                    given.remove(&id)?;
                    replayed.push(id);
                }
                continue;
            };
            if entry.body.is_empty() && self.is(Slip::ReplaySkipsEmptyBody) {
                continue;
            }
            match self.slip {
                Some(Slip::ReplayRemovesBeforeSend) => {
                    given.remove(&entry.id)?;
                    given.send(&entry.id, &entry.body)?;
                }
                Some(Slip::ReplayKeepsEntries) => given.send(&entry.id, &entry.body)?,
                _ => {
                    given.send(&entry.id, &entry.body)?;
                    given.remove(&entry.id)?;
                }
            }
            replayed.push(id);
        }
        if self.is(Slip::ReplayReturnsRequested) {
            return Ok(asked);
        }
        Ok(replayed)
    }
}

/// A received message, with the count and first-delivery time the consumer goes by.
struct ReceivedMessage {
    message: Message,
    count: u64,
    first_at: Option<u64>,
    /// The clock as a mistaken consumer read it for `failed_at`, before the handler ran
    /// (`failed-at-before-handler`); the reference reads it when it dead-letters.
    clock_read_early: Option<u64>,
}

/// The given parts the constructor takes first, in order: `DLQConsumer(queue, dlq, handler,
/// clock[, max_attempts])`.
pub(crate) const GIVEN_PARTS: [&str; 4] = ["queue", "dlq", "handler", "clock"];

/// The constructor's arguments as `new` sends them (docs/protocol.md, "Exercises"): the four
/// given parts, then `max_attempts` only when the spec gives one, so that the class's own
/// default applies otherwise.
pub(crate) fn new_args(max_attempts: Option<u64>) -> Value {
    let mut params: Vec<Value> = GIVEN_PARTS
        .iter()
        .map(|part| json!({ "given": part }))
        .collect();
    if let Some(max) = max_attempts {
        params.push(json!({ "value": max }));
    }
    json!({ "params": params })
}

/// Reads `max_attempts` from the constructor's arguments (`new_args`): the lesson's default
/// when they give none.
pub(crate) fn max_attempts_from(args: &Value) -> u64 {
    args.get("params")
        .and_then(|params| params.get(GIVEN_PARTS.len()))
        .and_then(|max| max.get("value"))
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_ATTEMPTS)
}

/// Maps a consumer's result onto a protocol reply.
pub(crate) fn reply<T: serde::Serialize>(result: Result<T, Raised>) -> Reply {
    match result {
        Ok(value) => Reply::Returned(json!(value)),
        Err(raised) => Reply::Raised(raised),
    }
}

/// Decodes `replay`'s protocol arguments: `[]` is "no argument", `[ids]` a list.
pub(crate) fn replay_ids(args: &[Value]) -> Result<Option<Vec<String>>, ImplError> {
    match args {
        [] | [Value::Null] => Ok(None),
        [ids] => serde_json::from_value(ids.clone())
            .map(Some)
            .map_err(|e| ImplError::new(ImplErrorKind::Errored, format!("replay: bad ids: {e}"))),
        _ => Err(ImplError::new(
            ImplErrorKind::Errored,
            "replay takes at most one argument",
        )),
    }
}

impl Subject for DlqConsumer {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        let mut given = Given::new(world);
        match method {
            "process_one" => {
                let result = self.process_one(&mut given);
                if result.is_ok() && self.is(Slip::AcksLeftover) {
                    // The message was acked or retried: nothing is left over.
                    self.globals().leftover = None;
                }
                if matches!(result, Ok(None)) && self.is(Slip::EmptyReturnsUndefined) {
                    return Ok(Reply::Undefined);
                }
                Ok(reply(result))
            }
            "replay" => Ok(reply(self.replay(&mut given, replay_ids(args)?))),
            other => Err(ImplError::new(
                ImplErrorKind::Errored,
                format!("DLQConsumer has no method `{other}`"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    //! One scenario per rule, on the real reference consumer and a real world. Each scenario
    //! makes consumers from a factory, so the last test can run it with every mistake of the
    //! catalogue switched on: each mistake must fail a scenario, or these tests have no teeth.

    use super::*;
    use crate::contracts::dlq_consumer::handler::{self, GivenError, ScriptedCall};
    use crate::contracts::dlq_consumer::world::{ScriptedOutcome, World};
    use crate::model::implementation::Naming;

    type Outcomes = Vec<ScriptedOutcome>;

    fn world(messages: &[(&str, &str)], script: Vec<(&str, Outcomes)>) -> World {
        let script = script
            .into_iter()
            .map(|(id, outcomes)| (id.to_owned(), handler::instant(outcomes)))
            .collect();
        let mut world = World::new(script, Naming::Snake);
        for (id, body) in messages {
            world.send(id, body);
        }
        world
    }

    fn process(
        consumer: &mut DlqConsumer,
        world: &mut World,
    ) -> Result<Option<&'static str>, Raised> {
        consumer.process_one(&mut Given::new(world))
    }

    fn replay(consumer: &mut DlqConsumer, world: &mut World, ids: Option<&[&str]>) -> Vec<String> {
        let ids = ids.map(|ids| ids.iter().map(|id| (*id).to_owned()).collect());
        consumer
            .replay(&mut Given::new(world), ids)
            .expect("replay")
    }

    fn transient() -> ScriptedOutcome {
        ScriptedOutcome::Transient("db timeout".into())
    }

    /// A message long enough that cutting it short shows.
    const BAD_SKU: &str = "bad sku: no product has the sku 4411-XYZ-0099 in this catalogue";

    fn permanent() -> ScriptedOutcome {
        ScriptedOutcome::Permanent(BAD_SKU.into())
    }

    /// Makes the consumers a scenario uses: the reference, or one making a mistake.
    type Make<'m> = &'m dyn Fn(u64) -> DlqConsumer;

    /// A scenario passes (`Ok`) or says what went wrong.
    type Scenario = fn(Make) -> Result<(), String>;

    use crate::model::mistake::expect_eq as check;

    fn entry(world: &World, index: usize) -> Value {
        world
            .dlq()
            .get(index)
            .map_or(Value::Null, |entry| (**entry).clone())
    }

    fn empty_queue(make: Make) -> Result<(), String> {
        let mut world = world(&[], vec![]);
        check("process_one", process(&mut make(3), &mut world), Ok(None))?;
        check("effects", world.trace(), Vec::<String>::new())
    }

    /// What the protocol is answered, not only what `process_one` decides: `null`, which the
    /// contract pins, is not JavaScript's `undefined`.
    fn empty_queue_answers_null(make: Make) -> Result<(), String> {
        let mut world = world(&[], vec![]);
        let answer = make(3).call("process_one", &[], &mut world);
        check("process_one", answer, Ok(Reply::Returned(Value::Null)))
    }

    fn success(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "x")], vec![("a", vec![ScriptedOutcome::Ok])]);
        check(
            "process_one",
            process(&mut make(3), &mut world),
            Ok(Some("ok")),
        )?;
        check("in flight", world.in_flight(), vec![])
    }

    fn permanent_with_budget_left(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "x")], vec![("a", vec![transient(), permanent()])]);
        let mut consumer = make(3);
        check(
            "first",
            process(&mut consumer, &mut world),
            Ok(Some("retry")),
        )?;
        world.advance(5);
        check(
            "second",
            process(&mut consumer, &mut world),
            Ok(Some("dead")),
        )?;
        check(
            "entry",
            entry(&world, 0),
            json!({"id": "a", "body": "x", "reason": "permanent", "error": format!("PermanentError: {BAD_SKU}"),
                   "attempts": 2, "first_attempt_at": 0, "failed_at": 5}),
        )
    }

    fn permanent_on_the_last_attempt(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "x")], vec![("a", vec![transient(), permanent()])]);
        let mut consumer = make(2);
        process(&mut consumer, &mut world).map_err(|e| e.describe())?;
        check("last", process(&mut consumer, &mut world), Ok(Some("dead")))?;
        check(
            "reason",
            entry(&world, 0)["reason"].clone(),
            json!("permanent"),
        )
    }

    fn transient_then_exhausted(make: Make) -> Result<(), String> {
        let script = vec![
            ("a", vec![transient(), transient(), transient()]),
            ("b", vec![ScriptedOutcome::Ok]),
        ];
        let mut world = world(&[("a", "x"), ("b", "y")], script);
        world.advance(1);
        let mut consumer = make(3);
        check("1st", process(&mut consumer, &mut world), Ok(Some("retry")))?;
        check("to the tail", world.pending(), vec!["b".into(), "a".into()])?;
        check("b", process(&mut consumer, &mut world), Ok(Some("ok")))?;
        check("2nd", process(&mut consumer, &mut world), Ok(Some("retry")))?;
        world.advance(2);
        check("3rd", process(&mut consumer, &mut world), Ok(Some("dead")))?;
        check(
            "entry",
            entry(&world, 0),
            json!({"id": "a", "body": "x", "reason": "exhausted", "error": "TransientError: db timeout",
                   "attempts": 3, "first_attempt_at": 1, "failed_at": 3}),
        )?;
        check(
            "handler calls",
            world.handler_calls().get("a").copied(),
            Some(3),
        )
    }

    fn unexpected_error(make: Make) -> Result<(), String> {
        let type_error = ScriptedOutcome::Error {
            class: "TypeError".into(),
            message: "".into(),
        };
        let mut world = world(
            &[("a", "x")],
            vec![("a", vec![type_error.clone(), type_error])],
        );
        let mut consumer = make(2);
        check("1st", process(&mut consumer, &mut world), Ok(Some("retry")))?;
        check("2nd", process(&mut consumer, &mut world), Ok(Some("dead")))?;
        check(
            "error",
            entry(&world, 0)["error"].clone(),
            json!("TypeError: "),
        )?;
        check(
            "reason",
            entry(&world, 0)["reason"].clone(),
            json!("exhausted"),
        )
    }

    fn crash_then_poison(make: Make) -> Result<(), String> {
        let script = vec![("p", vec![ScriptedOutcome::Crash, ScriptedOutcome::Crash])];
        let mut world = world(&[("p", "boom")], script);
        for delivery in 1..=2 {
            let crashed = process(&mut make(2), &mut world);
            check("crash", crashed.map_err(|e| e.kind), Err(RaisedKind::Crash))?;
            check("in flight", world.in_flight(), vec!["p".into()])?;
            check("nothing acked", world.trace().len(), delivery * 2)?;
            world.recover();
        }
        world.advance(7);
        check(
            "poison",
            process(&mut make(2), &mut world),
            Ok(Some("dead")),
        )?;
        check(
            "entry",
            entry(&world, 0),
            json!({"id": "p", "body": "boom", "reason": "poison", "error": null,
                   "attempts": 2, "first_attempt_at": 0, "failed_at": 7}),
        )?;
        check(
            "handler calls",
            world.handler_calls().get("p").copied(),
            Some(2),
        )?;
        check("acked", world.in_flight(), vec![])
    }

    fn poison_again_after_a_crash_before_put(make: Make) -> Result<(), String> {
        let mut world = world(&[("p", "boom")], vec![("p", vec![ScriptedOutcome::Crash])]);
        process(&mut make(1), &mut world).ok();
        world.recover();
        world.arm(crate::contracts::dlq_consumer::world::Fault {
            timing: crate::contracts::dlq_consumer::world::CrashTiming::Before,
            call: "dlq.put".into(),
            remaining: 1,
            armed_at: crate::text::source::Position::START,
        });
        process(&mut make(1), &mut world).ok();
        world.recover();
        check(
            "poison",
            process(&mut make(1), &mut world),
            Ok(Some("dead")),
        )?;
        check("attempts", entry(&world, 0)["attempts"].clone(), json!(2))
    }

    fn no_double_dead_letter(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "x")], vec![("a", vec![permanent()])]);
        world.arm(crate::contracts::dlq_consumer::world::Fault {
            timing: crate::contracts::dlq_consumer::world::CrashTiming::After,
            call: "dlq.put".into(),
            remaining: 1,
            armed_at: crate::text::source::Position::START,
        });
        check(
            "crash",
            process(&mut make(1), &mut world).map_err(|e| e.kind),
            Err(RaisedKind::Crash),
        )?;
        check("entry kept", world.dlq().len(), 1)?;
        world.recover();
        check("dead", process(&mut make(1), &mut world), Ok(Some("dead")))?;
        check("one entry", world.dlq().len(), 1)?;
        check("acked", world.in_flight(), vec![])?;
        check(
            "handler calls",
            world.handler_calls().get("a").copied(),
            Some(1),
        )
    }

    fn dedupe_before_poison(make: Make) -> Result<(), String> {
        let mut world = world(&[("p", "boom")], vec![("p", vec![ScriptedOutcome::Crash])]);
        process(&mut make(1), &mut world).ok();
        world.recover();
        world.arm(crate::contracts::dlq_consumer::world::Fault {
            timing: crate::contracts::dlq_consumer::world::CrashTiming::After,
            call: "dlq.put".into(),
            remaining: 1,
            armed_at: crate::text::source::Position::START,
        });
        process(&mut make(1), &mut world).ok();
        world.recover();
        check("dead", process(&mut make(1), &mut world), Ok(Some("dead")))?;
        check("one entry", world.dlq().len(), 1)
    }

    fn put_before_ack(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "x")], vec![("a", vec![permanent()])]);
        process(&mut make(3), &mut world).map_err(|e| e.describe())?;
        check(
            "effects",
            world.trace(),
            vec![
                "queue.receive() -> a".to_owned(),
                "handler(a) -> PermanentError".into(),
                "dlq.put(a)".into(),
                "queue.ack(a)".into(),
            ],
        )
    }

    fn count_from_the_queue(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "x")], vec![("a", vec![transient(), transient()])]);
        check("1st", process(&mut make(2), &mut world), Ok(Some("retry")))?;
        check(
            "restarted",
            process(&mut make(2), &mut world),
            Ok(Some("dead")),
        )
    }

    fn no_misuse_after_a_restart(make: Make) -> Result<(), String> {
        let script = vec![
            ("a", vec![ScriptedOutcome::Crash]),
            ("b", vec![ScriptedOutcome::Ok]),
        ];
        let mut world = world(&[("a", "x"), ("b", "y")], script);
        let mut consumer = make(3);
        process(&mut consumer, &mut world).ok();
        check("b", process(&mut make(3), &mut world), Ok(Some("ok")))?;
        check("misuse", world.misuse(), Vec::<String>::new())?;
        check("a still in flight", world.in_flight(), vec!["a".into()])
    }

    fn replay_selection_and_order(make: Make) -> Result<(), String> {
        let script = vec![
            ("a", vec![permanent()]),
            ("b", vec![permanent()]),
            ("c", vec![permanent()]),
        ];
        let mut world = world(&[("a", "x"), ("b", "y"), ("c", "z")], script);
        let mut consumer = make(3);
        for _ in 0..3 {
            process(&mut consumer, &mut world).map_err(|e| e.describe())?;
        }
        check(
            "none",
            replay(&mut consumer, &mut world, Some(&[])),
            Vec::<String>::new(),
        )?;
        let replayed = replay(&mut consumer, &mut world, Some(&["c", "zz", "a", "c"]));
        check("given", replayed, vec!["c".to_owned(), "a".into()])?;
        check("pending", world.pending(), vec!["c".to_owned(), "a".into()])?;
        check("left", world.dlq().len(), 1)?;
        check(
            "all",
            replay(&mut consumer, &mut world, None),
            vec!["b".to_owned()],
        )?;
        // The empty string is a body like any other.
        // The empty string is a body, and ids like integers keep put order.
        let script = vec![("10", vec![permanent()]), ("2", vec![permanent()])];
        let mut empty = self::world(&[("10", ""), ("2", "y")], script);
        let mut consumer = make(3);
        for _ in 0..2 {
            process(&mut consumer, &mut empty).map_err(|e| e.describe())?;
        }
        check(
            "an empty body, integer-like ids",
            replay(&mut consumer, &mut empty, None),
            vec!["10".to_owned(), "2".into()],
        )
    }

    fn replay_sends_before_removing(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "x")], vec![("a", vec![permanent()])]);
        let mut consumer = make(3);
        process(&mut consumer, &mut world).map_err(|e| e.describe())?;
        replay(&mut consumer, &mut world, None);
        let effects = world.trace();
        check(
            "effects",
            &effects[4..],
            &["queue.send(a)".to_owned(), "dlq.remove(a)".into()][..],
        )
    }

    fn replay_is_a_fresh_delivery(make: Make) -> Result<(), String> {
        let script = vec![(
            "a",
            vec![transient(), transient(), transient(), transient()],
        )];
        let mut world = world(&[("a", "x")], script);
        let mut consumer = make(2);
        process(&mut consumer, &mut world).map_err(|e| e.describe())?;
        process(&mut consumer, &mut world).map_err(|e| e.describe())?;
        world.advance(10);
        replay(&mut consumer, &mut world, None);
        check(
            "retried",
            process(&mut consumer, &mut world),
            Ok(Some("retry")),
        )?;
        check("dead", process(&mut consumer, &mut world), Ok(Some("dead")))?;
        check(
            "first_attempt_at",
            entry(&world, 0)["first_attempt_at"].clone(),
            json!(10),
        )
    }

    fn an_empty_body_is_a_message(make: Make) -> Result<(), String> {
        let mut world = world(&[("a", "")], vec![("a", vec![ScriptedOutcome::Ok])]);
        check("ok", process(&mut make(3), &mut world), Ok(Some("ok")))?;
        check("acked", world.in_flight(), vec![])
    }

    fn dedupe_by_id_never_by_body(make: Make) -> Result<(), String> {
        let script = vec![("a", vec![permanent()]), ("b", vec![ScriptedOutcome::Ok])];
        let mut world = world(&[("a", "same"), ("b", "same")], script);
        check("a", process(&mut make(3), &mut world), Ok(Some("dead")))?;
        check(
            "b, same body",
            process(&mut make(3), &mut world),
            Ok(Some("ok")),
        )?;
        world.send("a", "another");
        check(
            "a, another body",
            process(&mut make(3), &mut world),
            Ok(Some("dead")),
        )?;
        check("one entry", world.dlq().len(), 1)
    }

    fn a_subclass_of_permanent_error_is_permanent(make: Make) -> Result<(), String> {
        let out_of_stock = GivenError::subclass("OutOfStockError", "sku 4411");
        let mut world = world(
            &[("a", "x")],
            vec![("a", vec![ScriptedOutcome::Permanent(out_of_stock)])],
        );
        check("dead", process(&mut make(3), &mut world), Ok(Some("dead")))?;
        check(
            "error",
            entry(&world, 0)["error"].clone(),
            json!("OutOfStockError: sku 4411"),
        )
    }

    fn failed_at_is_read_after_the_handler(make: Make) -> Result<(), String> {
        let calls: handler::Outcomes = vec![ScriptedCall::taking(transient(), 5)].into();
        let mut world = World::new(HashMap::from([("a".to_owned(), calls)]), Naming::Snake);
        world.send("a", "x");
        world.advance(2);
        check("dead", process(&mut make(1), &mut world), Ok(Some("dead")))?;
        check(
            "times",
            (
                entry(&world, 0)["first_attempt_at"].clone(),
                entry(&world, 0)["failed_at"].clone(),
            ),
            (json!(2), json!(7)),
        )
    }

    fn replay_all_includes_poison_and_no_inherited_name(make: Make) -> Result<(), String> {
        let script = vec![
            ("p", vec![ScriptedOutcome::Crash]),
            ("b", vec![permanent()]),
        ];
        let mut world = world(&[("p", "boom"), ("b", "y")], script);
        process(&mut make(1), &mut world).ok();
        world.recover();
        check("b", process(&mut make(1), &mut world), Ok(Some("dead")))?;
        check(
            "poison",
            process(&mut make(1), &mut world),
            Ok(Some("dead")),
        )?;
        let names: Vec<&str> = OBJECT_PROPERTIES.to_vec();
        check(
            "names every object has",
            replay(&mut make(1), &mut world, Some(&names)),
            Vec::<String>::new(),
        )?;
        check(
            "all",
            replay(&mut make(1), &mut world, None),
            vec!["b".to_owned(), "p".into()],
        )
    }

    const SCENARIOS: &[(&str, Scenario)] = &[
        ("empty-queue", empty_queue),
        ("empty-queue, as answered", empty_queue_answers_null),
        ("success", success),
        ("permanent", permanent_with_budget_left),
        (
            "permanent on the last attempt",
            permanent_on_the_last_attempt,
        ),
        ("transient-retry, exhausted", transient_then_exhausted),
        ("unexpected-error", unexpected_error),
        ("crash-propagates, poison", crash_then_poison),
        (
            "poison after a crash before its put",
            poison_again_after_a_crash_before_put,
        ),
        ("no-double-dead-letter", no_double_dead_letter),
        ("check-order", dedupe_before_poison),
        ("dead-letter-sequence", put_before_ack),
        ("count-from-queue", count_from_the_queue),
        ("no-misuse", no_misuse_after_a_restart),
        ("replay-selection", replay_selection_and_order),
        ("replay-send-before-remove", replay_sends_before_removing),
        ("replay-fresh-delivery", replay_is_a_fresh_delivery),
        ("empty-queue, an empty body", an_empty_body_is_a_message),
        ("no-double-dead-letter, by id", dedupe_by_id_never_by_body),
        (
            "permanent, a subclass",
            a_subclass_of_permanent_error_is_permanent,
        ),
        (
            "entry-fields, a call taking time",
            failed_at_is_read_after_the_handler,
        ),
        (
            "replay-selection, poison and inherited names",
            replay_all_includes_poison_and_no_inherited_name,
        ),
    ];

    #[test]
    fn the_reference_keeps_every_rule() {
        for (rule, scenario) in SCENARIOS {
            let make = |max_attempts| DlqConsumer::new(max_attempts);
            assert_eq!(scenario(&make), Ok(()), "{rule}");
        }
    }

    /// A consumer making `slip`, with globals of its own.
    fn slipping(max_attempts: u64, slip: Slip) -> DlqConsumer {
        DlqConsumer::with_slip(max_attempts, slip, Arc::default())
    }

    fn crash_after_put() -> crate::contracts::dlq_consumer::world::Fault {
        crate::contracts::dlq_consumer::world::Fault {
            timing: crate::contracts::dlq_consumer::world::CrashTiming::After,
            call: "dlq.put".into(),
            remaining: 1,
            armed_at: crate::text::source::Position::START,
        }
    }

    /// Each mistake changes only what its description says: right next to the line it breaks,
    /// it still behaves as the reference does. A mistake that broke more than it says would
    /// still fail a spec, so the tests above cannot tell; these pin where each one goes wrong.
    #[test]
    fn each_mistake_goes_wrong_exactly_where_it_says() {
        let type_error = |message: &str| ScriptedOutcome::Error {
            class: "TypeError".into(),
            message: message.into(),
        };
        // off-by-one-budget: one transient failure more than the reference retries.
        let mut w = world(&[("a", "x")], vec![("a", vec![transient(), transient()])]);
        let mut consumer = slipping(2, Slip::OffByOneBudget);
        assert_eq!(process(&mut consumer, &mut w), Ok(Some("retry")));
        assert_eq!(process(&mut consumer, &mut w), Ok(Some("retry")));

        // exhausts-one-early: still retries the first failure of a budget of 3, not the second.
        let mut w = world(&[("a", "x")], vec![("a", vec![transient(), transient()])]);
        let mut consumer = slipping(3, Slip::ExhaustsOneEarly);
        assert_eq!(process(&mut consumer, &mut w), Ok(Some("retry")));
        assert_eq!(process(&mut consumer, &mut w), Ok(Some("dead")));
        assert_eq!(entry(&w, 0)["attempts"], json!(2));

        // counts-in-memory: one instance counts every delivery it makes, as the queue does.
        let mut w = world(&[("a", "x")], vec![("a", vec![transient(), transient()])]);
        let mut consumer = slipping(2, Slip::CountsInMemory);
        assert_eq!(process(&mut consumer, &mut w), Ok(Some("retry")));
        assert_eq!(process(&mut consumer, &mut w), Ok(Some("dead")));
        assert_eq!(entry(&w, 0)["attempts"], json!(2));

        // poison-one-early: poison on delivery max_attempts, not before.
        let mut w = world(&[("p", "boom")], vec![("p", vec![ScriptedOutcome::Crash])]);
        let crashed = process(&mut slipping(2, Slip::PoisonOneEarly), &mut w);
        assert_eq!(crashed.map_err(|e| e.kind), Err(RaisedKind::Crash));
        w.recover();
        let poison = process(&mut slipping(2, Slip::PoisonOneEarly), &mut w);
        assert_eq!(poison, Ok(Some("dead")));
        assert_eq!(entry(&w, 0)["reason"], json!("poison"));

        // poison-calls-handler: a crash in that extra call still propagates.
        let crashes = vec![ScriptedOutcome::Crash, ScriptedOutcome::Crash];
        let mut w = world(&[("p", "boom")], vec![("p", crashes)]);
        for _ in 0..2 {
            let crashed = process(&mut slipping(1, Slip::PoisonCallsHandler), &mut w);
            assert_eq!(crashed.map_err(|e| e.kind), Err(RaisedKind::Crash));
            w.recover();
        }
        assert!(w.dlq().is_empty());

        // error-template: only an empty message loses its ": ".
        let script = vec![("a", vec![type_error("bad")]), ("b", vec![type_error("")])];
        let mut w = world(&[("a", "x"), ("b", "y")], script);
        let mut consumer = slipping(1, Slip::ErrorTemplate);
        process(&mut consumer, &mut w).expect("a");
        process(&mut consumer, &mut w).expect("b");
        assert_eq!(entry(&w, 0)["error"], json!("TypeError: bad"));
        assert_eq!(entry(&w, 1)["error"], json!("TypeError"));

        // unexpected-is-permanent: a TransientError is still retried.
        let mut w = world(&[("a", "x")], vec![("a", vec![transient()])]);
        let retried = process(&mut slipping(3, Slip::UnexpectedIsPermanent), &mut w);
        assert_eq!(retried, Ok(Some("retry")));

        // budget-before-class: with budget left, a PermanentError is still permanent.
        let mut w = world(&[("a", "x")], vec![("a", vec![permanent()])]);
        let dead = process(&mut slipping(3, Slip::BudgetBeforeClass), &mut w);
        assert_eq!(dead, Ok(Some("dead")));
        assert_eq!(entry(&w, 0)["reason"], json!("permanent"));

        // no-dedupe: a redelivered dead message goes to the handler, and only there.
        let mut w = world(
            &[("a", "x")],
            vec![("a", vec![permanent(), ScriptedOutcome::Ok])],
        );
        w.arm(crash_after_put());
        process(&mut slipping(3, Slip::NoDedupe), &mut w).ok();
        w.recover();
        let handled = process(&mut slipping(3, Slip::NoDedupe), &mut w);
        assert_eq!(handled, Ok(Some("ok")));
        assert_eq!(w.handler_calls().get("a").copied(), Some(2));
    }

    #[test]
    fn every_mistake_of_the_catalogue_breaks_a_scenario() {
        for slip in Slip::ALL {
            let globals = Arc::new(Mutex::new(Globals::default()));
            let caught = SCENARIOS.iter().any(|(_, scenario)| {
                *globals.lock().unwrap() = Globals::default();
                let make = |max_attempts| {
                    DlqConsumer::with_slip(max_attempts, *slip, Arc::clone(&globals))
                };
                scenario(&make).is_err()
            });
            assert!(caught, "{slip:?} passes every scenario");
        }
    }
}
