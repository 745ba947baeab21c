//! Teeth for the outcome-queue specs: every deliberately broken `RetryQueue` must fail a bundled
//! spec with a mismatch, and a failing spec must name the rule the flaw breaks.
//!
//! The broken queues are one model with a switch per flaw. The model without a flaw must pass
//! every spec, so each failure is the flaw's doing, not the model's. The built-in reference runs
//! through the same harness (as a non-reference implementation) and must pass too.

use serde_json::{Value, json};

use dlqspec::builtin::{self, Builtin};
use dlqspec::contract::Subject;
use dlqspec::contracts::outcome_queue::state_ops::{self, StateOp};
use dlqspec::implementation::{
    ImplError, ImplErrorKind, ImplInfo, Implementation, Raised, Reply, WorldHost,
};
use dlqspec::outcome::Outcome;
use dlqspec::runner::{self, RunConfig, SpecReport};

use crate::common::root;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flaw {
    /// None: the model as the contract pins it.
    Faithful,
    /// `mutate_state` reaches the queue itself, as when `state()` returns the queue's own lists.
    SharedState,
    /// `state()` copies the lists but not the entries: edits inside an entry reach the queue.
    ShallowState,
    /// `process` takes the head job before it validates the outcome, and loses it on a raise.
    InvalidOutcomePops,
    /// `process` on an empty queue returns None before it validates the outcome.
    EmptyReturnsBeforeValidating,
    /// A permanent failure is retried while budget is left.
    PermanentRetried,
    /// The budget runs out one attempt early (`attempts + 1 < max_attempts` retries).
    OffByOneBudget,
    /// The budget is checked with the attempt count from before this attempt.
    CountsAfterDeciding,
    /// A transient retry goes back to the ready head instead of the tail.
    RetryToHead,
    /// When nothing is ready, `process` takes the first quarantined job back.
    QuarantineRevived,
    /// `replay` keeps the old attempt count.
    ReplayKeepsAttempts,
    /// `replay` puts the job at the ready head.
    ReplayToHead,
    /// `replay` of a job not in quarantine returns true.
    ReplayMissingTrue,
    /// `isinstance(x, int)` without the bool check: `true` is accepted as 1.
    BoolMaxAttempts,
    /// A float is truncated to an integer: 2.5 becomes 2.
    FloatMaxAttempts,
}

/// Each flaw with the rule a spec that catches it must name.
const FLAWS: &[(Flaw, &str)] = &[
    (Flaw::SharedState, "outcome-queue/state-deep-copy"),
    (Flaw::ShallowState, "outcome-queue/state-deep-copy"),
    (
        Flaw::InvalidOutcomePops,
        "outcome-queue/outcome-validated-first",
    ),
    (
        Flaw::EmptyReturnsBeforeValidating,
        "outcome-queue/outcome-validated-first",
    ),
    (Flaw::PermanentRetried, "outcome-queue/permanent-quarantine"),
    (Flaw::OffByOneBudget, "outcome-queue/exhausted-quarantine"),
    (
        Flaw::CountsAfterDeciding,
        "outcome-queue/attempt-counted-first",
    ),
    (Flaw::RetryToHead, "outcome-queue/transient-retry-tail"),
    (Flaw::QuarantineRevived, "outcome-queue/quarantine-sticky"),
    (Flaw::ReplayKeepsAttempts, "outcome-queue/replay-resets"),
    (Flaw::ReplayToHead, "outcome-queue/replay-resets"),
    (
        Flaw::ReplayMissingTrue,
        "outcome-queue/replay-missing-false",
    ),
    (
        Flaw::BoolMaxAttempts,
        "outcome-queue/max-attempts-validated",
    ),
    (
        Flaw::FloatMaxAttempts,
        "outcome-queue/max-attempts-validated",
    ),
];

/// A `RetryQueue` whose state is kept as the very JSON `state()` shows, so a flaw can share it.
struct Model {
    flaw: Flaw,
    max_attempts: u64,
    state: Value,
}

fn value_error(message: impl Into<String>) -> Raised {
    Raised::invalid_argument("ValueError", message)
}

fn job(id: &Value, payload: &Value, attempts: u64) -> Value {
    json!({ "id": id, "payload": payload, "attempts": attempts })
}

impl Model {
    fn new(flaw: Flaw, raw: &Value) -> Result<Model, Raised> {
        let max_attempts = match raw {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && flaw == Flaw::FloatMaxAttempts)
                    .map(|f| f as u64)
            }),
            Value::Bool(b) if flaw == Flaw::BoolMaxAttempts => Some(u64::from(*b)),
            _ => None,
        }
        .filter(|&n| n >= 1)
        .ok_or_else(|| value_error(format!("max_attempts must be an integer >= 1, got {raw}")))?;
        Ok(Model {
            flaw,
            max_attempts,
            state: json!({ "ready": [], "done": [], "quarantine": [] }),
        })
    }

    /// One of the state's lists, rebuilt if a shared mutation took it away.
    fn list(&mut self, key: &str) -> &mut Vec<Value> {
        if !self.state.is_object() {
            self.state = json!({});
        }
        let slot = &mut self.state[key];
        if !slot.is_array() {
            *slot = json!([]);
        }
        match slot {
            Value::Array(items) => items,
            _ => unreachable!("made a list above"),
        }
    }

    fn process(&mut self, outcome: &Value) -> Result<Value, Raised> {
        let valid = matches!(
            outcome.as_str(),
            Some("success" | "transient" | "permanent")
        );
        let invalid = || {
            value_error(format!(
                "outcome must be success, transient or permanent, got {outcome}"
            ))
        };
        if self.flaw == Flaw::InvalidOutcomePops && !self.list("ready").is_empty() {
            let taken = self.list("ready").remove(0);
            if !valid {
                return Err(invalid());
            }
            self.list("ready").insert(0, taken);
        }
        if self.flaw == Flaw::EmptyReturnsBeforeValidating && self.list("ready").is_empty() {
            return Ok(Value::Null);
        }
        if !valid {
            return Err(invalid());
        }
        if self.list("ready").is_empty() {
            if self.flaw != Flaw::QuarantineRevived || self.list("quarantine").is_empty() {
                return Ok(Value::Null);
            }
            let revived = self.list("quarantine").remove(0);
            let attempts = revived["attempts"].as_u64().unwrap_or(0);
            let revived = job(&revived["id"], &revived["payload"], attempts);
            self.list("ready").push(revived);
        }
        let mut head = self.list("ready").remove(0);
        let before = head["attempts"].as_u64().unwrap_or(0);
        let counted = before + 1;
        head["attempts"] = json!(counted);
        let decided_on = if self.flaw == Flaw::CountsAfterDeciding {
            before
        } else {
            counted
        };
        let budget_left = if self.flaw == Flaw::OffByOneBudget {
            decided_on + 1 < self.max_attempts
        } else {
            decided_on < self.max_attempts
        };
        let verdict = match outcome.as_str() {
            Some("success") => {
                let id = head["id"].clone();
                self.list("done").push(id);
                "done"
            }
            Some("permanent") if self.flaw == Flaw::PermanentRetried && budget_left => {
                self.list("ready").push(head);
                "retry"
            }
            Some("permanent") => self.quarantine(head, "permanent"),
            _ if budget_left => {
                if self.flaw == Flaw::RetryToHead {
                    self.list("ready").insert(0, head);
                } else {
                    self.list("ready").push(head);
                }
                "retry"
            }
            _ => self.quarantine(head, "exhausted"),
        };
        Ok(json!(verdict))
    }

    fn quarantine(&mut self, mut head: Value, reason: &str) -> &'static str {
        head["reason"] = json!(reason);
        self.list("quarantine").push(head);
        "dead"
    }

    fn replay(&mut self, id: &Value) -> bool {
        let found = self.list("quarantine").iter().position(|e| &e["id"] == id);
        let Some(index) = found else {
            return self.flaw == Flaw::ReplayMissingTrue;
        };
        let entry = self.list("quarantine").remove(index);
        let attempts = if self.flaw == Flaw::ReplayKeepsAttempts {
            entry["attempts"].as_u64().unwrap_or(0)
        } else {
            0
        };
        let replayed = job(&entry["id"], &entry["payload"], attempts);
        if self.flaw == Flaw::ReplayToHead {
            self.list("ready").insert(0, replayed);
        } else {
            self.list("ready").push(replayed);
        }
        true
    }

    fn mutate_state(&mut self, ops: &Value) -> Result<(), Raised> {
        let mut view = self.state.clone();
        state_ops::apply_wire(&mut view, ops)?;
        match self.flaw {
            Flaw::SharedState => state_ops::apply_wire(&mut self.state, ops),
            // The view's lists are new, its entries the queue's own: an op that reaches inside
            // an entry changes the queue's entry at that place too.
            Flaw::ShallowState => {
                for op in ops.as_array().into_iter().flatten() {
                    let op = StateOp::from_wire(op)?;
                    if op.path().len() >= 3 {
                        state_ops::apply(&mut self.state, &op)?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn errored(message: String) -> ImplError {
    ImplError::new(ImplErrorKind::Errored, message)
}

impl Subject for Model {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        _world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        let arg = |n: usize| {
            args.get(n)
                .cloned()
                .ok_or_else(|| errored(format!("{method}: argument {n} missing")))
        };
        let result = match method {
            "submit" => {
                let fresh = job(&arg(0)?, &arg(1)?, 0);
                self.list("ready").push(fresh);
                Ok(Value::Null)
            }
            "process" => self.process(&arg(0)?),
            "replay" => Ok(json!(self.replay(&arg(0)?))),
            "state" => Ok(self.state.clone()),
            "mutate_state" => self.mutate_state(&arg(0)?).map(|()| Value::Null),
            other => return Err(errored(format!("no method {other}"))),
        };
        Ok(match result {
            Ok(value) => Reply::Returned(value),
            Err(raised) => Reply::Raised(raised),
        })
    }
}

fn not_the_reference(label: String) -> ImplInfo {
    ImplInfo {
        label,
        language: "rust".into(),
        is_reference: false,
    }
}

/// The queue with `flaw`, as an external process would serve it.
fn broken(flaw: Flaw) -> Builtin {
    let factory = move |contract: &str, args: &Value| {
        if contract != "outcome-queue" {
            return Err(Reply::Skipped(format!("no {contract} here")));
        }
        match Model::new(flaw, &args["max_attempts"]) {
            Ok(queue) => Ok(Box::new(queue) as Box<dyn Subject>),
            Err(raised) => Err(Reply::Raised(raised)),
        }
    };
    Builtin::from_subjects(
        not_the_reference(format!("broken:{flaw:?}")),
        Box::new(factory),
    )
}

/// Runs every bundled outcome-queue spec against `implementation`.
fn run_specs(implementation: &mut dyn Implementation) -> Vec<SpecReport> {
    let config = RunConfig {
        paths: vec![root().join("specs").join("outcome-queue")],
        ..RunConfig::default()
    };
    let prepared = runner::prepare(&config).expect("the bundled specs are found");
    assert!(
        prepared.len() >= 22,
        "only {} outcome-queue specs",
        prepared.len()
    );
    prepared
        .iter()
        .map(|spec| runner::run_one(spec, implementation))
        .collect()
}

fn not_passed(reports: &[SpecReport]) -> Vec<String> {
    reports
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Passed))
        .map(|r| format!("{}: {:?}", r.path, r.outcome))
        .collect()
}

#[test]
fn the_reference_passes_through_the_teeth_harness() {
    let reports = run_specs(&mut Builtin::from_subjects(
        not_the_reference("builtin".into()),
        Box::new(builtin::reference_subject),
    ));
    assert_eq!(not_passed(&reports), Vec::<String>::new());
}

#[test]
fn the_model_without_a_flaw_passes_every_spec() {
    let reports = run_specs(&mut broken(Flaw::Faithful));
    assert_eq!(not_passed(&reports), Vec::<String>::new());
}

#[test]
fn every_flaw_fails_a_spec_that_names_the_broken_rule() {
    let mut problems = Vec::new();
    for &(flaw, rule) in FLAWS {
        let reports = run_specs(&mut broken(flaw));
        let mismatched: Vec<&SpecReport> = reports
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Mismatch(_)))
            .collect();
        if mismatched.is_empty() {
            problems.push(format!("{flaw:?}: no spec fails"));
        } else if !mismatched.iter().any(|r| r.rules.iter().any(|r| r == rule)) {
            let paths: Vec<&str> = mismatched.iter().map(|r| r.path.as_str()).collect();
            problems.push(format!(
                "{flaw:?}: no failing spec names {rule}; failing: {paths:?}"
            ));
        }
        // A broken implementation is never reported as a broken spec.
        for report in &reports {
            if matches!(report.outcome, Outcome::SpecError(_) | Outcome::Errored(_)) {
                problems.push(format!(
                    "{flaw:?}: {} ended as {:?}",
                    report.path, report.outcome
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_shallow_state_is_caught_by_the_deep_copy_check_with_its_note() {
    let reports = run_specs(&mut broken(Flaw::ShallowState));
    let edited = reports
        .iter()
        .find(|r| r.path.ends_with("state-view-entries-edited.yaml"))
        .expect("the spec exists");
    let Outcome::Mismatch(mismatch) = &edited.outcome else {
        panic!("{:?}", edited.outcome);
    };
    assert_eq!(mismatch.step, "step 8 (mutate_state)");
    assert_eq!(
        mismatch.note.as_deref(),
        Some("state() must return a deep copy: changing the view it returned changed the queue")
    );
    assert!(
        mismatch.actual.contains("payload: tampered"),
        "{}",
        mismatch.actual
    );
    // Clearing the view's lists does not reach a shallow copy's queue.
    let cleared = reports
        .iter()
        .find(|r| r.path.ends_with("state-view-lists-cleared.yaml"))
        .expect("the spec exists");
    assert!(
        matches!(cleared.outcome, Outcome::Passed),
        "{:?}",
        cleared.outcome
    );
}

#[test]
fn an_invalid_outcome_that_pops_a_job_is_caught_by_the_automatic_state_check() {
    let reports = run_specs(&mut broken(Flaw::InvalidOutcomePops));
    let untouched = reports
        .iter()
        .find(|r| {
            r.path
                .ends_with("invalid-outcome-leaves-the-next-job-untouched.yaml")
        })
        .expect("the spec exists");
    let Outcome::Mismatch(mismatch) = &untouched.outcome else {
        panic!("{:?}", untouched.outcome);
    };
    assert_eq!(mismatch.step, "step 4 (process)");
    assert_eq!(
        mismatch.note.as_deref(),
        Some(
            "a call that raises must leave every job as it was: state() differs before and after it"
        )
    );
}
