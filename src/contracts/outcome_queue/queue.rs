//! The built-in reference `RetryQueue`, exactly as docs/contracts.md section 2 pins it.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::mistakes::Slip;
use super::state_ops;
use crate::contracts::builtin::Subject;
use crate::model::implementation::{ImplError, ImplErrorKind, Raised, Reply, WorldHost};
use crate::model::mistake::OBJECT_PROPERTIES;

/// The outcome an application reports for one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttemptOutcome {
    Success,
    Transient,
    Permanent,
}

impl AttemptOutcome {
    /// The outcome a raw argument names, if it names one: exactly one of the three strings.
    pub(crate) fn parse(raw: &Value) -> Option<AttemptOutcome> {
        match raw.as_str()? {
            "success" => Some(AttemptOutcome::Success),
            "transient" => Some(AttemptOutcome::Transient),
            "permanent" => Some(AttemptOutcome::Permanent),
            _ => None,
        }
    }
}

/// What `process` did with the job it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    Done,
    Retry,
    Dead,
}

impl Disposition {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Disposition::Done => "done",
            Disposition::Retry => "retry",
            Disposition::Dead => "dead",
        }
    }
}

/// Why a job is in quarantine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "QueueReason")]
pub(crate) enum Reason {
    Permanent,
    Exhausted,
}

/// `max_attempts` as Python's `isinstance(x, int) and not isinstance(x, bool) and x >= 1`
/// accepts it: a JSON integer from 1 up. `2.0`, `true`, `"3"` and `null` are not integers.
pub(crate) fn valid_max_attempts(raw: &Value) -> Option<u64> {
    match raw {
        Value::Number(number) => number.as_u64().filter(|&n| n >= 1),
        _ => None,
    }
}

// A job waiting in `ready`, as `state()` shows it and a spec's `expect` writes it (a plain
// comment: a doc comment would change the published schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ReadySpec")]
pub(crate) struct ReadyJob {
    pub(crate) id: String,
    pub(crate) payload: String,
    pub(crate) attempts: u64,
}

// A job in `quarantine`, as `state()` shows it and a spec's `expect` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "QuarantineSpec")]
pub(crate) struct QuarantineEntry {
    pub(crate) id: String,
    pub(crate) payload: String,
    pub(crate) attempts: u64,
    pub(crate) reason: Reason,
}

/// The reference queue. Its state lives in plain structs, so `state()` can only ever build a
/// new JSON view, and `mutate_state` changes that view, never the queue.
///
/// It can also run with one classic mistake of `mistakes.rs` switched on: each `self.is(...)`
/// marks the one line that mistake changes. With no mistake (the reference), every such test
/// is false.
#[derive(Debug, Clone)]
pub(crate) struct RetryQueue {
    max_attempts: u64,
    ready: VecDeque<ReadyJob>,
    done: VecDeque<String>,
    quarantine: VecDeque<QuarantineEntry>,
    /// The one mistake this queue makes, if any; the reference makes none.
    slip: Option<Slip>,
    /// Reasons left on replayed jobs (`replay-keeps-reason`).
    kept_reasons: std::collections::HashMap<String, Reason>,
}

impl RetryQueue {
    /// `RetryQueue(max_attempts)` with the raw argument, validated before anything else.
    pub(crate) fn new(max_attempts: &Value) -> Result<RetryQueue, Raised> {
        Self::build(max_attempts, None)
    }

    /// A queue that makes `slip`.
    pub(crate) fn with_slip(max_attempts: &Value, slip: Slip) -> Result<RetryQueue, Raised> {
        Self::build(max_attempts, Some(slip))
    }

    fn build(raw: &Value, slip: Option<Slip>) -> Result<RetryQueue, Raised> {
        let max_attempts = budget(raw, slip).ok_or_else(|| {
            Raised::invalid_argument(
                "ValueError",
                format!("max_attempts must be an integer >= 1, got {raw}"),
            )
        })?;
        Ok(RetryQueue {
            max_attempts,
            ready: VecDeque::new(),
            done: VecDeque::new(),
            quarantine: VecDeque::new(),
            slip,
            kept_reasons: Default::default(),
        })
    }

    fn is(&self, slip: Slip) -> bool {
        self.slip == Some(slip)
    }

    pub(crate) fn submit(&mut self, job_id: &str, payload: &str) {
        let job = ReadyJob {
            id: job_id.to_owned(),
            payload: payload.to_owned(),
            attempts: 0,
        };
        if self.is(Slip::SubmitAtHead) {
            self.ready.push_front(job);
        } else {
            self.ready.push_back(job);
        }
    }

    /// The outcome a raw argument names, if it names one: exactly one of the three strings.
    fn outcome(&self, raw: &Value) -> Option<AttemptOutcome> {
        let text = raw.as_str()?;
        let near = match self.slip {
            Some(Slip::CaseInsensitiveOutcome) => {
                AttemptOutcome::parse(&json!(text.to_lowercase()))
            }
            Some(Slip::StrippedOutcome) => AttemptOutcome::parse(&json!(text.trim())),
            // What the student's code does with a name it let through: the `else` branch.
            Some(Slip::SubstringOutcome) if "success transient permanent".contains(text) => {
                Some(AttemptOutcome::Transient)
            }
            Some(Slip::PropertyNameOutcome) if OBJECT_PROPERTIES.contains(&text) => {
                Some(AttemptOutcome::Transient)
            }
            _ => None,
        };
        AttemptOutcome::parse(raw).or(near)
    }

    /// One attempt of the ready head. The outcome is checked before any job is touched, and
    /// the attempt is counted before the budget is looked at.
    pub(crate) fn process(&mut self, outcome: &Value) -> Result<Option<Disposition>, Raised> {
        let invalid = || {
            Raised::invalid_argument(
                "ValueError",
                format!(
                    "outcome must be \"success\", \"transient\" or \"permanent\", got {outcome}"
                ),
            )
        };
        if self.is(Slip::NoValidationWhenEmpty) && self.ready.is_empty() {
            return Ok(None);
        }
        let taken = if self.is(Slip::PopsBeforeValidating) {
            self.ready.pop_front()
        } else {
            None
        };
        let outcome = self.outcome(outcome).ok_or_else(invalid)?;
        let taken = taken.or_else(|| self.ready.pop_front());
        let taken = match taken {
            None if self.is(Slip::QuarantineLeaks) => {
                self.quarantine.pop_front().map(|e| ReadyJob {
                    id: e.id,
                    payload: e.payload,
                    attempts: e.attempts,
                })
            }
            taken => taken,
        };
        let Some(mut job) = taken else {
            return Ok(None);
        };
        let budget_left = |attempts: u64, max: u64, slip: Option<Slip>| match slip {
            Some(Slip::OffByOneBudget) => attempts <= max,
            _ => attempts < max,
        };
        // The attempt counts before anything is decided (unless the mistake counts it after).
        let counted_before = job.attempts;
        job.attempts += 1;
        let judged = if self.is(Slip::CountsAfterDeciding) {
            counted_before
        } else {
            job.attempts
        };
        let left = budget_left(judged, self.max_attempts, self.slip);
        // A permanent failure is quarantined whatever budget is left.
        let retried_anyway = self.is(Slip::PermanentRetried) && left;
        let budget_first = self.is(Slip::BudgetBeforeOutcome) && !left;
        let disposition = match outcome {
            AttemptOutcome::Success => {
                if !self.is(Slip::SuccessForgotten) {
                    if self.is(Slip::DoneNewestFirst) {
                        self.done.push_front(job.id);
                    } else {
                        self.done.push_back(job.id);
                    }
                }
                Disposition::Done
            }
            AttemptOutcome::Permanent if !retried_anyway && !budget_first => {
                self.quarantine_job(job, Reason::Permanent);
                Disposition::Dead
            }
            _ if left => {
                if self.is(Slip::RetryAtHead) {
                    self.ready.push_front(job);
                } else {
                    self.ready.push_back(job);
                }
                Disposition::Retry
            }
            _ => {
                let reason = if self.is(Slip::ExhaustedAsPermanent) {
                    Reason::Permanent
                } else {
                    Reason::Exhausted
                };
                self.quarantine_job(job, reason);
                Disposition::Dead
            }
        };
        Ok(Some(disposition))
    }

    fn quarantine_job(&mut self, job: ReadyJob, reason: Reason) {
        let entry = QuarantineEntry {
            id: job.id,
            payload: job.payload,
            attempts: if self.is(Slip::EntryForgetsAttempts) {
                0
            } else {
                job.attempts
            },
            reason,
        };
        if self.is(Slip::QuarantineNewestFirst) {
            self.quarantine.push_front(entry);
        } else {
            self.quarantine.push_back(entry);
        }
    }

    /// An operator's decision: the job gets a fresh budget at the ready tail.
    pub(crate) fn replay(&mut self, job_id: &str) -> bool {
        let Some(index) = self.quarantine.iter().position(|e| e.id == job_id) else {
            return self.is(Slip::ReplayAlwaysTrue)
                || (self.is(Slip::ReplayFindsObjectProperties)
                    && OBJECT_PROPERTIES.contains(&job_id));
        };
        if self.is(Slip::ReplaySkipsEmptyPayload) && self.quarantine[index].payload.is_empty() {
            return false;
        }
        let entry = if self.is(Slip::ReplaySwapRemove) {
            self.quarantine.swap_remove_back(index)
        } else {
            self.quarantine.remove(index)
        };
        let Some(entry) = entry else {
            return false;
        };
        let job = ReadyJob {
            id: entry.id,
            payload: entry.payload,
            attempts: if self.is(Slip::ReplayKeepsAttempts) {
                entry.attempts
            } else {
                0
            },
        };
        if self.is(Slip::ReplayKeepsReason) {
            // The reason stays on the job, so it shows in the ready list.
            self.kept_reasons.insert(job.id.clone(), entry.reason);
        }
        if self.is(Slip::ReplayToHead) {
            self.ready.push_front(job);
        } else {
            self.ready.push_back(job);
        }
        true
    }

    /// A new view of the whole state, sharing nothing with the queue.
    pub(crate) fn state(&self) -> Value {
        let mut view = json!({
            "ready": self.ready,
            "done": self.done,
            "quarantine": self.quarantine,
        });
        if self.is(Slip::QuarantineIntegerKeysFirst) {
            // A JavaScript object keyed by id lists integer-like keys first, ascending.
            if let Some(entries) = view["quarantine"].as_array_mut() {
                entries.sort_by_key(|e| {
                    e["id"]
                        .as_str()
                        .and_then(|id| id.parse::<u32>().ok())
                        .map_or(u64::MAX, u64::from)
                });
            }
        }
        for (job, kept) in view["ready"]
            .as_array_mut()
            .into_iter()
            .flatten()
            .zip(&self.ready)
        {
            if let Some(reason) = self.kept_reasons.get(&kept.id) {
                job["reason"] = json!(reason);
            }
        }
        view
    }

    /// What a shim does for `mutate_state(ops)`: apply the ops to the view `state()` returned.
    pub(crate) fn mutate_state(&mut self, ops: &Value) -> Result<(), Raised> {
        let mut view = self.state();
        state_ops::apply_wire(&mut view, ops)?;
        // A queue whose view shares parts with it sees the changes made there.
        match self.slip {
            Some(Slip::SharedDone) => {
                if let Ok(done) = serde_json::from_value(view["done"].clone()) {
                    self.done = done;
                }
            }
            Some(Slip::ShallowState) => self.share_entries(&view, ops),
            _ => {}
        }
        Ok(())
    }

    /// The changes `ops` made inside entries of the view, made to the queue's own entries: what
    /// a view that copies the lists but shares their entries lets through.
    fn share_entries(&mut self, view: &Value, ops: &Value) {
        let changed_entries = ops.as_array().into_iter().flatten().filter(|op| {
            matches!(op["op"].as_str(), Some("set" | "delete"))
                && op["path"].as_array().is_some_and(|path| path.len() >= 3)
        });
        for op in changed_entries {
            let (Some(list), Some(index)) = (op["path"][0].as_str(), op["path"][1].as_u64()) else {
                continue;
            };
            let Some(changed) = view[list].get(index as usize) else {
                continue;
            };
            let index = index as usize;
            match list {
                "ready" => {
                    if let (Some(slot), Ok(job)) = (
                        self.ready.get_mut(index),
                        serde_json::from_value(changed.clone()),
                    ) {
                        *slot = job;
                    }
                }
                "quarantine" => {
                    if let (Some(slot), Ok(entry)) = (
                        self.quarantine.get_mut(index),
                        serde_json::from_value(changed.clone()),
                    ) {
                        *slot = entry;
                    }
                }
                _ => {}
            }
        }
    }
}

/// `max_attempts` as the queue accepts it: Python's `isinstance(x, int) and not isinstance(x,
/// bool) and x >= 1`, unless a mistake accepts more or less.
fn budget(raw: &Value, slip: Option<Slip>) -> Option<u64> {
    match (slip, raw) {
        (Some(Slip::BoolBudget), Value::Bool(true)) => Some(1),
        (Some(Slip::FloatBudget), Value::Number(n)) => {
            // attempts < 2.5 holds for 1 and 2: the same budget as 3.
            n.as_f64().filter(|f| *f >= 1.0).map(|f| f.ceil() as u64)
        }
        (Some(Slip::StringBudget), Value::String(text)) => {
            text.trim().parse::<u64>().ok().filter(|n| *n >= 1)
        }
        (Some(Slip::ZeroBudget), Value::Number(n)) if n.as_u64() == Some(0) => Some(0),
        (Some(Slip::NarrowBudget), _) => {
            valid_max_attempts(raw).filter(|n| *n <= u64::from(i32::MAX as u32))
        }
        _ => valid_max_attempts(raw),
    }
}

/// The string argument at `index`, or the error a shim reports for a call it cannot make.
fn string_arg<'a>(method: &str, args: &'a [Value], index: usize) -> Result<&'a str, ImplError> {
    args.get(index).and_then(Value::as_str).ok_or_else(|| {
        ImplError::new(
            ImplErrorKind::Errored,
            format!("{method}: argument {} must be a string", index + 1),
        )
    })
}

fn arity(method: &str, args: &[Value], wanted: usize) -> Result<(), ImplError> {
    if args.len() == wanted {
        Ok(())
    } else {
        Err(ImplError::new(
            ImplErrorKind::Errored,
            format!(
                "{method} takes {wanted} argument{}, got {}",
                if wanted == 1 { "" } else { "s" },
                args.len()
            ),
        ))
    }
}

fn reply(result: Result<Value, Raised>) -> Reply {
    match result {
        Ok(value) => Reply::Returned(value),
        Err(raised) => Reply::Raised(raised),
    }
}

impl Subject for RetryQueue {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        _world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        match method {
            "submit" => {
                arity(method, args, 2)?;
                self.submit(string_arg(method, args, 0)?, string_arg(method, args, 1)?);
                Ok(Reply::Returned(Value::Null))
            }
            "process" if self.is(Slip::EmptyReturnsFalse) => {
                arity(method, args, 1)?;
                let disposition = self.process(&args[0]);
                Ok(reply(disposition.map(|v| match v {
                    Some(v) => json!(v.as_str()),
                    None => json!(false),
                })))
            }
            "process" if self.is(Slip::EmptyReturnsUndefined) => {
                arity(method, args, 1)?;
                Ok(match self.process(&args[0]) {
                    Ok(None) => Reply::Undefined,
                    disposition => reply(disposition.map(|v| json!(v.map(Disposition::as_str)))),
                })
            }
            "process" => {
                arity(method, args, 1)?;
                let disposition = self.process(&args[0]);
                Ok(reply(
                    disposition.map(|v| json!(v.map(Disposition::as_str))),
                ))
            }
            "replay" => {
                arity(method, args, 1)?;
                Ok(Reply::Returned(json!(
                    self.replay(string_arg(method, args, 0)?)
                )))
            }
            "state" => {
                arity(method, args, 0)?;
                Ok(Reply::Returned(self.state()))
            }
            "mutate_state" => {
                arity(method, args, 1)?;
                Ok(reply(self.mutate_state(&args[0]).map(|()| Value::Null)))
            }
            other => Err(ImplError::new(
                ImplErrorKind::Errored,
                format!("RetryQueue has no method `{other}`"),
            )),
        }
    }
}

/// The constructor's arguments as `new` sends them: `max_attempts`, the raw value, its one
/// parameter.
pub(crate) fn new_args(max_attempts: &Value) -> Value {
    json!({ "params": [{ "value": max_attempts }] })
}

/// The raw `max_attempts` of the constructor's arguments (`new_args`).
pub(crate) fn max_attempts_of(args: &Value) -> &Value {
    args.pointer("/params/0/value").unwrap_or(&Value::Null)
}

#[cfg(test)]
mod tests {
    //! One scenario per rule, on the real reference queue. Each scenario makes its queues from a
    //! factory, so the last test can run it with every mistake of the catalogue switched on:
    //! each mistake must fail a scenario, or these tests have no teeth.

    use super::*;
    use crate::model::implementation::RaisedKind;

    type Make<'m> = &'m dyn Fn(&Value) -> Result<RetryQueue, Raised>;
    type Scenario = fn(Make) -> Result<(), String>;

    use crate::model::mistake::expect_eq as check;

    fn queue(make: Make, max_attempts: u64) -> Result<RetryQueue, String> {
        make(&json!(max_attempts)).map_err(|e| e.describe())
    }

    fn run(q: &mut RetryQueue, outcome: &str) -> Result<Option<&'static str>, RaisedKind> {
        q.process(&json!(outcome))
            .map(|v| v.map(Disposition::as_str))
            .map_err(|e| e.kind)
    }

    fn budgets_are_validated(make: Make) -> Result<(), String> {
        for ok in [json!(1), json!(3), json!(3_000_000_000_u64)] {
            check(&format!("RetryQueue({ok})"), make(&ok).is_ok(), true)?;
        }
        for bad in [
            json!(0),
            json!(-1),
            json!(2.5),
            json!(2.0),
            json!(true),
            json!(false),
            json!("3"),
            Value::Null,
            json!([3]),
        ] {
            let raised = make(&bad).err().map(|e| (e.kind, e.class));
            let want = Some((RaisedKind::InvalidArgument, "ValueError".to_owned()));
            check(&format!("RetryQueue({bad})"), raised, want)?;
        }
        Ok(())
    }

    fn submit_and_retry_go_to_the_tail(make: Make) -> Result<(), String> {
        let mut q = queue(make, 2)?;
        q.submit("a", "pa");
        q.submit("b", "pb");
        check("a", run(&mut q, "transient"), Ok(Some("retry")))?;
        check(
            "order",
            q.state()["ready"].clone(),
            json!([
                {"id": "b", "payload": "pb", "attempts": 0},
                {"id": "a", "payload": "pa", "attempts": 1},
            ]),
        )
    }

    fn invalid_outcomes_touch_nothing(make: Make) -> Result<(), String> {
        let mut empty = queue(make, 2)?;
        check(
            "empty",
            run(&mut empty, "explode"),
            Err(RaisedKind::InvalidArgument),
        )?;
        let mut q = queue(make, 2)?;
        q.submit("a", "pa");
        let before = q.state();
        for bad in [
            json!("Success"),
            json!(" success"),
            json!("succ"),
            json!("toString"),
            json!("constructor"),
            Value::Null,
            json!(1),
            json!(["success"]),
        ] {
            let raised = q.process(&bad).map_err(|e| e.kind);
            check(
                &format!("process({bad})"),
                raised,
                Err(RaisedKind::InvalidArgument),
            )?;
        }
        check("state", q.state(), before)
    }

    fn empty_returns_none(make: Make) -> Result<(), String> {
        let mut q = queue(make, 2)?;
        let answer = q.call(
            "process",
            &[json!("success")],
            &mut crate::model::implementation::NoWorld,
        );
        check("process", answer, Ok(Reply::Returned(Value::Null)))
    }

    fn attempts_count_before_deciding(make: Make) -> Result<(), String> {
        let mut q = queue(make, 2)?;
        q.submit("a", "pa");
        check("1st", run(&mut q, "transient"), Ok(Some("retry")))?;
        check("2nd", run(&mut q, "transient"), Ok(Some("dead")))?;
        check(
            "entry",
            q.state()["quarantine"].clone(),
            json!([
                {"id": "a", "payload": "pa", "attempts": 2, "reason": "exhausted"},
            ]),
        )
    }

    fn success_goes_to_done_in_order(make: Make) -> Result<(), String> {
        let mut q = queue(make, 1)?;
        q.submit("a", "pa");
        q.submit("b", "pb");
        run(&mut q, "success").ok();
        run(&mut q, "success").ok();
        check("done", q.state()["done"].clone(), json!(["a", "b"]))
    }

    fn permanent_is_quarantined_at_once(make: Make) -> Result<(), String> {
        let mut q = queue(make, 2)?;
        q.submit("a", "pa");
        q.submit("b", "pb");
        check("a", run(&mut q, "permanent"), Ok(Some("dead")))?;
        check("b", run(&mut q, "transient"), Ok(Some("retry")))?;
        check("b again", run(&mut q, "permanent"), Ok(Some("dead")))?;
        check(
            "entries",
            q.state()["quarantine"].clone(),
            json!([
                {"id": "a", "payload": "pa", "attempts": 1, "reason": "permanent"},
                {"id": "b", "payload": "pb", "attempts": 2, "reason": "permanent"},
            ]),
        )
    }

    fn quarantine_is_sticky(make: Make) -> Result<(), String> {
        let mut q = queue(make, 1)?;
        q.submit("a", "pa");
        run(&mut q, "permanent").ok();
        check("nothing ready", run(&mut q, "success"), Ok(None))?;
        check("done", q.state()["done"].clone(), json!([]))?;
        // The empty string is a payload like any other: its job is replayed.
        // Ids like integers keep quarantine order.
        let mut q = queue(make, 1)?;
        q.submit("10", "p10");
        q.submit("2", "p2");
        run(&mut q, "permanent").ok();
        run(&mut q, "permanent").ok();
        check(
            "integer-like ids",
            q.state()["quarantine"][0]["id"].clone(),
            json!("10"),
        )?;
        let mut q = queue(make, 1)?;
        q.submit("e", "");
        run(&mut q, "permanent").ok();
        check("an empty payload", q.replay("e"), true)
    }

    fn replay_resets_at_the_tail_keeping_the_rest_in_order(make: Make) -> Result<(), String> {
        let mut q = queue(make, 2)?;
        for id in ["a", "b", "c", "d"] {
            q.submit(id, &format!("p{id}"));
        }
        for _ in 0..4 {
            run(&mut q, "permanent").ok();
        }
        q.submit("e", "pe");
        check("replay b", q.replay("b"), true)?;
        check("again", q.replay("b"), false)?;
        check("unknown", q.replay("zz"), false)?;
        for name in OBJECT_PROPERTIES {
            check(name, q.replay(name), false)?;
        }
        check(
            "state",
            q.state(),
            json!({
                "ready": [
                    {"id": "e", "payload": "pe", "attempts": 0},
                    {"id": "b", "payload": "pb", "attempts": 0},
                ],
                "done": [],
                "quarantine": [
                    {"id": "a", "payload": "pa", "attempts": 1, "reason": "permanent"},
                    {"id": "c", "payload": "pc", "attempts": 1, "reason": "permanent"},
                    {"id": "d", "payload": "pd", "attempts": 1, "reason": "permanent"},
                ],
            }),
        )
    }

    fn views_are_deep_copies(make: Make) -> Result<(), String> {
        let mut q = queue(make, 1)?;
        q.submit("a", "pa");
        q.submit("b", "pb");
        run(&mut q, "success").ok();
        run(&mut q, "transient").ok();
        let before = q.state();
        for ops in [
            json!([{"op": "set", "path": ["quarantine", 0, "reason"], "value": "permanent"}]),
            json!([{"op": "append", "path": ["done"], "value": "zz"}]),
            json!([{"op": "clear", "path": ["quarantine"]}]),
        ] {
            q.mutate_state(&ops).map_err(|e| e.describe())?;
            check(&format!("after {ops}"), q.state(), before.clone())?;
        }
        Ok(())
    }

    const SCENARIOS: &[(&str, Scenario)] = &[
        ("max-attempts-validated", budgets_are_validated),
        (
            "submit-tail, transient-retry-tail",
            submit_and_retry_go_to_the_tail,
        ),
        ("outcome-validated-first", invalid_outcomes_touch_nothing),
        ("empty-returns-none", empty_returns_none),
        (
            "attempt-counted-first, exhausted-quarantine",
            attempts_count_before_deciding,
        ),
        ("success-done", success_goes_to_done_in_order),
        ("permanent-quarantine", permanent_is_quarantined_at_once),
        ("quarantine-sticky", quarantine_is_sticky),
        (
            "replay-resets, replay-missing-false",
            replay_resets_at_the_tail_keeping_the_rest_in_order,
        ),
        ("state-deep-copy", views_are_deep_copies),
    ];

    #[test]
    fn the_reference_keeps_every_rule() {
        for (rule, scenario) in SCENARIOS {
            assert_eq!(scenario(&RetryQueue::new), Ok(()), "{rule}");
        }
    }

    /// Each mistake changes only what its description says: right next to the line it breaks,
    /// it still behaves as the reference does. A mistake that broke more than it says would
    /// still fail a scenario, so the test below cannot tell; this one pins where each goes wrong.
    #[test]
    fn each_mistake_goes_wrong_exactly_where_it_says() {
        let slipping = |max_attempts: u64, slip: Slip| {
            let mut q = RetryQueue::with_slip(&json!(max_attempts), slip).expect("a budget");
            q.submit("a", "pa");
            q
        };
        // substring-outcome, property-name-outcome: other invalid outcomes still raise.
        for slip in [Slip::SubstringOutcome, Slip::PropertyNameOutcome] {
            let mut q = slipping(2, slip);
            let raised = run(&mut q, "explode");
            assert_eq!(raised, Err(RaisedKind::InvalidArgument), "{slip:?}");
        }
        // off-by-one-budget: one transient failure more than the reference retries.
        let mut q = slipping(2, Slip::OffByOneBudget);
        assert_eq!(run(&mut q, "transient"), Ok(Some("retry")));
        assert_eq!(run(&mut q, "transient"), Ok(Some("retry")));
        assert_eq!(run(&mut q, "transient"), Ok(Some("dead")));
        // budget-before-outcome: with budget left, a permanent failure is still permanent.
        let mut q = slipping(2, Slip::BudgetBeforeOutcome);
        assert_eq!(run(&mut q, "permanent"), Ok(Some("dead")));
        assert_eq!(q.state()["quarantine"][0]["reason"], json!("permanent"));
        // zero-budget: accepts 0, and a budget of 2 is still 2.
        assert!(RetryQueue::with_slip(&json!(0), Slip::ZeroBudget).is_ok());
        let mut q = slipping(2, Slip::ZeroBudget);
        assert_eq!(run(&mut q, "transient"), Ok(Some("retry")));
        // float-budget: accepts 2.5; 32-bit-budget: accepts small budgets, not 3_000_000_000.
        assert!(RetryQueue::with_slip(&json!(2.5), Slip::FloatBudget).is_ok());
        assert!(RetryQueue::with_slip(&json!(3), Slip::NarrowBudget).is_ok());
        assert!(RetryQueue::with_slip(&json!(3_000_000_000_u64), Slip::NarrowBudget).is_err());
        // shallow-state: a list of the view is a copy; only edits inside an entry leak.
        let mut q = slipping(2, Slip::ShallowState);
        q.submit("b", "pb");
        let before = q.state();
        for ops in [
            json!([{"op": "delete", "path": ["ready", 0]}]),
            json!([{"op": "set", "path": ["ready", 0], "value": {"id": "z", "payload": "pz", "attempts": 0}}]),
        ] {
            q.mutate_state(&ops).expect("the ops apply");
            assert_eq!(q.state(), before, "after {ops}");
        }
    }

    #[test]
    fn every_mistake_of_the_catalogue_breaks_a_scenario() {
        for slip in Slip::ALL {
            let make = |raw: &Value| RetryQueue::with_slip(raw, *slip);
            let caught = SCENARIOS
                .iter()
                .any(|(_, scenario)| scenario(&make).is_err());
            assert!(caught, "{slip:?} passes every scenario");
        }
    }

    #[test]
    fn the_subject_decodes_protocol_calls() {
        let mut q = RetryQueue::new(&json!(1)).unwrap();
        let mut world = crate::model::implementation::NoWorld;
        let mut call = |q: &mut RetryQueue, method: &str, args: Value| {
            let args = args.as_array().cloned().unwrap_or_default();
            q.call(method, &args, &mut world)
        };
        assert_eq!(
            call(&mut q, "submit", json!(["a", "p"])).unwrap(),
            Reply::Returned(Value::Null)
        );
        assert_eq!(
            call(&mut q, "process", json!(["success"])).unwrap(),
            Reply::Returned(json!("done"))
        );
        assert_eq!(
            call(&mut q, "process", json!(["success"])).unwrap(),
            Reply::Returned(Value::Null)
        );
        assert_eq!(
            call(&mut q, "replay", json!(["a"])).unwrap(),
            Reply::Returned(json!(false))
        );
        assert_eq!(
            call(&mut q, "submit", json!(["a"])).unwrap_err().message,
            "submit takes 2 arguments, got 1"
        );
        assert_eq!(
            call(&mut q, "submit", json!(["a", 3])).unwrap_err().message,
            "submit: argument 2 must be a string"
        );
        assert!(call(&mut q, "pop", json!([])).is_err());
    }
}
