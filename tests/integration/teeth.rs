//! The bundled suite has teeth: consumers that each break one rule fail it, on a spec of that rule.
//!
//! Each broken consumer is the reference logic with one deliberate bug, run through the library
//! (`runner::prepare` + `run_one`) as a non-reference implementation, exactly as an external
//! solution would be. The correct consumer goes through the same harness and must pass, so the
//! harness itself can fail.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use dlqspec::builtin::Builtin;
use dlqspec::contract::Subject;
use dlqspec::contracts::dlq_consumer::consumer::{
    DlqConsumer, max_attempts_from, replay_ids, reply,
};
use dlqspec::contracts::dlq_consumer::given::{Entry, Given};
use dlqspec::contracts::dlq_consumer::world::Message;
use dlqspec::implementation::{
    ImplError, ImplErrorKind, ImplInfo, Implementation, Raised, RaisedKind, Reply, WorldHost,
};
use dlqspec::outcome::Outcome;
use dlqspec::runner::{self, Prepared, RunConfig, SpecReport};

use crate::common::root;

/// One deliberate bug each; `None` is the reference logic, copied faithfully.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    /// Counts deliveries in the instance's memory instead of reading receive_count.
    CountsInMemory,
    /// Remembers each id's first delivery time in memory, so a replay keeps the old one.
    FirstSeenInMemory,
    /// Retries a PermanentError like a transient one.
    RetriesPermanent,
    /// Dead-letters unexpected exceptions (TypeError...) as permanent.
    UnexpectedIsPermanent,
    /// Retries while receive_count <= max_attempts: one attempt too many.
    OffByOneBudget,
    /// Acks before putting the entry.
    AcksBeforePut,
    /// Never checks the DLQ for the id.
    NoDedupe,
    /// Checks for poison before checking the DLQ.
    DedupeAfterPoison,
    /// Takes receive_count == max_attempts for poison: one delivery too early.
    PoisonOneEarly,
    /// Calls the handler once more before dead-lettering a poison pill.
    PoisonCallsHandler,
    /// Records a poison pill's attempts as receive_count.
    PoisonAttemptsIsReceiveCount,
    /// Catches Crash like any other exception (`except BaseException`).
    CatchesCrashAsTransient,
    /// Catches Crash and returns None, leaving the message in flight.
    SwallowsCrash,
    /// Writes only the message as the entry's error, without the class name.
    ErrorWithoutClass,
    /// Writes the first delivery's time as failed_at.
    FailedAtIsFirstAttempt,
    /// Returns "dead" for an id already in the DLQ without acking it.
    DedupeWithoutAck,
    /// Returns "ok" on success without acking.
    SuccessWithoutAck,
    /// Returns "retry" without calling queue.retry.
    RetryWithoutRequeue,
    /// Calls queue.recover when nothing is ready, "to unstick" in-flight messages.
    IdleRecovers,
    /// Keeps the message being handled in a process-wide global and acks it on the next
    /// call, even after a crash and a restart.
    AcksLeftoverAfterRestart,
    /// Removes from the DLQ before sending to the queue.
    ReplayRemovesBeforeSend,
    /// Replays the selected ids in the DLQ's order, not the given one.
    ReplayIgnoresOrder,
    /// Treats replay([]) like replay() (`if not ids:`).
    ReplayEmptyMeansAll,
    /// Returns the ids it was asked for, including the skipped ones.
    ReplayReturnsRequestedIds,
}

/// Each bug and the rule it breaks.
const BUGS: &[(Bug, &str)] = &[
    (Bug::CountsInMemory, "dlq-consumer/count-from-queue"),
    (Bug::FirstSeenInMemory, "dlq-consumer/replay-fresh-delivery"),
    (Bug::RetriesPermanent, "dlq-consumer/permanent"),
    (Bug::UnexpectedIsPermanent, "dlq-consumer/unexpected-error"),
    (Bug::OffByOneBudget, "dlq-consumer/exhausted"),
    (Bug::AcksBeforePut, "dlq-consumer/dead-letter-sequence"),
    (Bug::NoDedupe, "dlq-consumer/no-double-dead-letter"),
    (Bug::DedupeAfterPoison, "dlq-consumer/check-order"),
    (Bug::PoisonOneEarly, "dlq-consumer/poison"),
    (Bug::PoisonCallsHandler, "dlq-consumer/poison"),
    (Bug::PoisonAttemptsIsReceiveCount, "dlq-consumer/poison"),
    (
        Bug::CatchesCrashAsTransient,
        "dlq-consumer/crash-propagates",
    ),
    (Bug::SwallowsCrash, "dlq-consumer/crash-propagates"),
    (Bug::ErrorWithoutClass, "dlq-consumer/entry-fields"),
    (Bug::FailedAtIsFirstAttempt, "dlq-consumer/entry-fields"),
    (Bug::DedupeWithoutAck, "dlq-consumer/no-double-dead-letter"),
    (Bug::SuccessWithoutAck, "dlq-consumer/success"),
    (Bug::RetryWithoutRequeue, "dlq-consumer/transient-retry"),
    (Bug::IdleRecovers, "dlq-consumer/empty-queue"),
    (Bug::AcksLeftoverAfterRestart, "dlq-consumer/no-misuse"),
    (
        Bug::ReplayRemovesBeforeSend,
        "dlq-consumer/replay-send-before-remove",
    ),
    (Bug::ReplayIgnoresOrder, "dlq-consumer/replay-selection"),
    (Bug::ReplayEmptyMeansAll, "dlq-consumer/replay-selection"),
    (
        Bug::ReplayReturnsRequestedIds,
        "dlq-consumer/replay-selection",
    ),
];

/// A process-wide global of the broken consumer's "module", shared by all its instances.
type Global = Arc<Mutex<Option<String>>>;

/// The reference consumer's logic with `bug` switched in at one place.
struct BrokenConsumer {
    bug: Bug,
    max_attempts: u64,
    counts: std::collections::HashMap<String, u64>,
    first_seen: std::collections::HashMap<String, Option<u64>>,
    leftover: Global,
}

impl BrokenConsumer {
    fn has_bug(&self, bug: Bug) -> bool {
        self.bug == bug
    }

    fn process_one(&mut self, world: &mut dyn WorldHost) -> Result<Option<&'static str>, Raised> {
        let mut given = Given::new(&mut *world);
        if self.has_bug(Bug::AcksLeftoverAfterRestart) {
            let leftover = self.leftover.lock().expect("not poisoned").take();
            if let Some(id) = leftover {
                given.ack(&id)?;
            }
        }
        let Some(message) = given.receive()? else {
            if self.has_bug(Bug::IdleRecovers) {
                world.world_call("queue.recover", &[])?;
            }
            return Ok(None);
        };
        if self.has_bug(Bug::AcksLeftoverAfterRestart) {
            *self.leftover.lock().expect("not poisoned") = Some(message.id.clone());
        }
        let count = if self.has_bug(Bug::CountsInMemory) {
            let seen = self.counts.entry(message.id.clone()).or_insert(0);
            *seen += 1;
            *seen
        } else {
            message.receive_count
        };
        let first_at = if self.has_bug(Bug::FirstSeenInMemory) {
            *self
                .first_seen
                .entry(message.id.clone())
                .or_insert(message.first_received_at)
        } else {
            message.first_received_at
        };
        let delivery = Delivery {
            message: &message,
            first_at,
        };
        let dedupe_first = !self.has_bug(Bug::NoDedupe) && !self.has_bug(Bug::DedupeAfterPoison);
        if dedupe_first && given.has(&message.id)? {
            if !self.has_bug(Bug::DedupeWithoutAck) {
                given.ack(&message.id)?;
            }
            return Ok(Some("dead"));
        }
        let poison = if self.has_bug(Bug::PoisonOneEarly) {
            count >= self.max_attempts
        } else {
            count > self.max_attempts
        };
        if poison {
            if self.has_bug(Bug::PoisonCallsHandler) {
                match given.handle(&message.body) {
                    Err(error) if error.kind == RaisedKind::Crash => return Err(error),
                    _ => {}
                }
            }
            let attempts = if self.has_bug(Bug::PoisonAttemptsIsReceiveCount) {
                count
            } else {
                count.saturating_sub(1)
            };
            return self.dead_letter(&mut given, &delivery, "poison", None, attempts);
        }
        if self.has_bug(Bug::DedupeAfterPoison) && given.has(&message.id)? {
            given.ack(&message.id)?;
            return Ok(Some("dead"));
        }
        let error = match given.handle(&message.body) {
            Ok(()) => {
                if !self.has_bug(Bug::SuccessWithoutAck) {
                    given.ack(&message.id)?;
                }
                return Ok(Some("ok"));
            }
            Err(error) => error,
        };
        if error.kind == RaisedKind::Crash {
            if self.has_bug(Bug::SwallowsCrash) {
                return Ok(None);
            }
            if !self.has_bug(Bug::CatchesCrashAsTransient) {
                return Err(error);
            }
        }
        let permanent = match error.class.as_str() {
            "PermanentError" => !self.has_bug(Bug::RetriesPermanent),
            "TransientError" => false,
            _ => self.has_bug(Bug::UnexpectedIsPermanent) && error.kind != RaisedKind::Crash,
        };
        let described = if self.has_bug(Bug::ErrorWithoutClass) {
            error.message.clone()
        } else {
            error.describe()
        };
        if permanent {
            return self.dead_letter(&mut given, &delivery, "permanent", Some(described), count);
        }
        let budget_left = if self.has_bug(Bug::OffByOneBudget) {
            count <= self.max_attempts
        } else {
            count < self.max_attempts
        };
        if budget_left {
            if !self.has_bug(Bug::RetryWithoutRequeue) {
                given.retry(&message.id)?;
            }
            return Ok(Some("retry"));
        }
        self.dead_letter(&mut given, &delivery, "exhausted", Some(described), count)
    }

    fn dead_letter(
        &self,
        given: &mut Given,
        delivery: &Delivery,
        reason: &str,
        error: Option<String>,
        attempts: u64,
    ) -> Result<Option<&'static str>, Raised> {
        let message = delivery.message;
        let entry = Entry {
            id: message.id.clone(),
            body: message.body.clone(),
            reason: reason.to_owned(),
            error,
            attempts,
            first_attempt_at: delivery.first_at,
            failed_at: if self.has_bug(Bug::FailedAtIsFirstAttempt) {
                delivery.first_at.unwrap_or_default()
            } else {
                given.now()?
            },
        };
        if self.has_bug(Bug::AcksBeforePut) {
            given.ack(&message.id)?;
            given.put(&entry)?;
        } else {
            given.put(&entry)?;
            given.ack(&message.id)?;
        }
        Ok(Some("dead"))
    }

    fn replay(
        &mut self,
        world: &mut dyn WorldHost,
        ids: Option<Vec<String>>,
    ) -> Result<Vec<String>, Raised> {
        let mut given = Given::new(world);
        let entries = given.entries()?;
        let all = || entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        let asked = ids.clone().unwrap_or_else(all);
        let ids = match ids {
            None => all(),
            Some(ids) if ids.is_empty() && self.has_bug(Bug::ReplayEmptyMeansAll) => all(),
            Some(ids) if self.has_bug(Bug::ReplayIgnoresOrder) => {
                all().into_iter().filter(|id| ids.contains(id)).collect()
            }
            Some(ids) => ids,
        };
        let mut replayed: Vec<String> = Vec::new();
        for id in ids {
            if replayed.contains(&id) {
                continue;
            }
            let Some(entry) = entries.iter().find(|e| e.id == id) else {
                continue;
            };
            if self.has_bug(Bug::ReplayRemovesBeforeSend) {
                given.remove(&entry.id)?;
                given.send(&entry.id, &entry.body)?;
            } else {
                given.send(&entry.id, &entry.body)?;
                given.remove(&entry.id)?;
            }
            replayed.push(id);
        }
        if self.has_bug(Bug::ReplayReturnsRequestedIds) {
            return Ok(asked);
        }
        Ok(replayed)
    }
}

/// A received message and the first-delivery time the consumer believes in.
struct Delivery<'m> {
    message: &'m Message,
    first_at: Option<u64>,
}

impl Subject for BrokenConsumer {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        match method {
            "process_one" => {
                let result = self.process_one(world);
                if result.is_ok() {
                    // The message was acked or retried: nothing is left over.
                    *self.leftover.lock().expect("not poisoned") = None;
                }
                Ok(reply(result))
            }
            "replay" => Ok(reply(self.replay(world, replay_ids(args)?))),
            other => Err(ImplError::new(
                ImplErrorKind::Errored,
                format!("no method `{other}`"),
            )),
        }
    }
}

/// An implementation under test whose subjects `make` builds for a `max_attempts`, sharing
/// one global that a new spec resets, as a fresh process would: not the reference.
fn test_implementation(
    label: String,
    make: impl Fn(u64, &Global) -> Box<dyn Subject> + Send + 'static,
) -> Builtin {
    let info = ImplInfo {
        label,
        language: "rust".into(),
        is_reference: false,
    };
    let global = Global::default();
    let shared = Arc::clone(&global);
    let factory = move |contract: &str, args: &Value| match contract {
        "dlq-consumer" => Ok(make(max_attempts_from(args), &shared)),
        other => Err(Reply::Skipped(format!("no `{other}` here"))),
    };
    Builtin::from_subjects(info, Box::new(factory)).on_begin_spec(Box::new(move || {
        *global.lock().expect("not poisoned") = None;
    }))
}

fn broken(bug: Bug) -> Builtin {
    test_implementation(format!("{bug:?}"), move |max_attempts, global| {
        Box::new(BrokenConsumer {
            bug,
            max_attempts,
            counts: Default::default(),
            first_seen: Default::default(),
            leftover: Arc::clone(global),
        })
    })
}

fn bundled_suite() -> Vec<Prepared> {
    let config = RunConfig {
        paths: vec![root().join("specs/dlq-consumer")],
        ..RunConfig::default()
    };
    let prepared = runner::prepare(&config).expect("the bundled suite is found");
    assert!(prepared.len() >= 32, "only {} specs", prepared.len());
    prepared
}

fn run_suite(suite: &[Prepared], implementation: &mut dyn Implementation) -> Vec<SpecReport> {
    suite
        .iter()
        .map(|spec| runner::run_one(spec, implementation))
        .collect()
}

fn summary(reports: &[SpecReport]) -> String {
    reports
        .iter()
        .map(|r| format!("  {:?} {}\n", r.outcome.kind(), r.path))
        .collect()
}

#[test]
fn the_reference_consumer_passes_every_spec_through_the_test_harness() {
    let suite = bundled_suite();
    let mut reference = test_implementation("reference".into(), |max_attempts, _| {
        Box::new(DlqConsumer::new(max_attempts))
    });
    let reports = run_suite(&suite, &mut reference);
    assert!(
        reports.iter().all(|r| matches!(r.outcome, Outcome::Passed)),
        "{}",
        summary(&reports)
    );
}

#[test]
fn the_copied_logic_without_a_bug_passes_every_spec() {
    let suite = bundled_suite();
    let reports = run_suite(&suite, &mut broken(Bug::None));
    assert!(
        reports.iter().all(|r| matches!(r.outcome, Outcome::Passed)),
        "{}",
        summary(&reports)
    );
}

#[test]
fn every_broken_consumer_fails_a_spec_of_the_rule_it_breaks() {
    let suite = bundled_suite();
    let mut escaped = Vec::new();
    for &(bug, rule) in BUGS {
        let reports = run_suite(&suite, &mut broken(bug));
        // A broken consumer is blamed with mismatches, never with spec errors.
        assert!(
            reports
                .iter()
                .all(|r| !matches!(r.outcome, Outcome::SpecError(_))),
            "{bug:?} made a spec error:\n{}",
            summary(&reports)
        );
        let caught: Vec<&SpecReport> = reports
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Mismatch(_)))
            .collect();
        let on_its_rule = caught.iter().any(|r| r.rules.iter().any(|r| r == rule));
        if caught.is_empty() || !on_its_rule {
            escaped.push(format!(
                "{bug:?} (breaks {rule}): {} mismatches, none on a spec of {rule}\n{}",
                caught.len(),
                summary(&reports)
            ));
        }
    }
    assert!(escaped.is_empty(), "{}", escaped.join("\n"));
}
