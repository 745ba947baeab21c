//! The built-in reference `RetryQueue`, exactly as CONTRACTS.md section 2 pins it.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::state_ops;
use crate::contract::Subject;
use crate::implementation::{ImplError, ImplErrorKind, Raised, Reply, WorldHost};

/// The outcome an application reports for one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Success,
    Transient,
    Permanent,
}

impl AttemptOutcome {
    /// The outcome a raw argument names, if it names one: exactly one of the three strings.
    pub fn parse(raw: &Value) -> Option<AttemptOutcome> {
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
pub enum Verdict {
    Done,
    Retry,
    Dead,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Done => "done",
            Verdict::Retry => "retry",
            Verdict::Dead => "dead",
        }
    }
}

/// Why a job is in quarantine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "QueueReason")]
pub enum Reason {
    Permanent,
    Exhausted,
}

/// `max_attempts` as Python's `isinstance(x, int) and not isinstance(x, bool) and x >= 1`
/// accepts it: a JSON integer from 1 up. `2.0`, `true`, `"3"` and `null` are not integers.
pub fn valid_max_attempts(raw: &Value) -> Option<u64> {
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
pub struct ReadyJob {
    pub id: String,
    pub payload: String,
    pub attempts: u64,
}

// A job in `quarantine`, as `state()` shows it and a spec's `expect` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "QuarantineSpec")]
pub struct QuarantineEntry {
    pub id: String,
    pub payload: String,
    pub attempts: u64,
    pub reason: Reason,
}

/// The reference queue. Its state lives in plain structs, so `state()` can only ever build a
/// new JSON view, and `mutate_state` (which takes `&self`) cannot reach the queue at all.
#[derive(Debug, Clone)]
pub struct RetryQueue {
    max_attempts: u64,
    ready: VecDeque<ReadyJob>,
    done: Vec<String>,
    quarantine: Vec<QuarantineEntry>,
}

impl RetryQueue {
    /// `RetryQueue(max_attempts)` with the raw argument, validated before anything else.
    pub fn new(max_attempts: &Value) -> Result<RetryQueue, Raised> {
        let max_attempts = valid_max_attempts(max_attempts).ok_or_else(|| {
            Raised::invalid_argument(
                "ValueError",
                format!("max_attempts must be an integer >= 1, got {max_attempts}"),
            )
        })?;
        Ok(RetryQueue {
            max_attempts,
            ready: VecDeque::new(),
            done: Vec::new(),
            quarantine: Vec::new(),
        })
    }

    pub fn submit(&mut self, job_id: &str, payload: &str) {
        self.ready.push_back(ReadyJob {
            id: job_id.to_owned(),
            payload: payload.to_owned(),
            attempts: 0,
        });
    }

    /// One attempt of the ready head. The outcome is checked before any job is touched, and
    /// the attempt is counted before the budget is looked at.
    pub fn process(&mut self, outcome: &Value) -> Result<Option<Verdict>, Raised> {
        let outcome = AttemptOutcome::parse(outcome).ok_or_else(|| {
            Raised::invalid_argument(
                "ValueError",
                format!(
                    "outcome must be \"success\", \"transient\" or \"permanent\", got {outcome}"
                ),
            )
        })?;
        let Some(mut job) = self.ready.pop_front() else {
            return Ok(None);
        };
        job.attempts += 1;
        let verdict = match outcome {
            AttemptOutcome::Success => {
                self.done.push(job.id);
                Verdict::Done
            }
            AttemptOutcome::Permanent => {
                self.quarantine_job(job, Reason::Permanent);
                Verdict::Dead
            }
            AttemptOutcome::Transient if job.attempts < self.max_attempts => {
                self.ready.push_back(job);
                Verdict::Retry
            }
            AttemptOutcome::Transient => {
                self.quarantine_job(job, Reason::Exhausted);
                Verdict::Dead
            }
        };
        Ok(Some(verdict))
    }

    fn quarantine_job(&mut self, job: ReadyJob, reason: Reason) {
        self.quarantine.push(QuarantineEntry {
            id: job.id,
            payload: job.payload,
            attempts: job.attempts,
            reason,
        });
    }

    /// An operator's decision: the job gets a fresh budget at the ready tail.
    pub fn replay(&mut self, job_id: &str) -> bool {
        let Some(index) = self.quarantine.iter().position(|e| e.id == job_id) else {
            return false;
        };
        let entry = self.quarantine.remove(index);
        self.ready.push_back(ReadyJob {
            id: entry.id,
            payload: entry.payload,
            attempts: 0,
        });
        true
    }

    /// A new view of the whole state, sharing nothing with the queue.
    pub fn state(&self) -> Value {
        json!({
            "ready": self.ready,
            "done": self.done,
            "quarantine": self.quarantine,
        })
    }

    /// What a shim does for `mutate_state(ops)`: apply the ops to the view `state()` returned.
    pub fn mutate_state(&self, ops: &Value) -> Result<(), Raised> {
        let mut view = self.state();
        state_ops::apply_wire(&mut view, ops)
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
            "process" => {
                arity(method, args, 1)?;
                let verdict = self.process(&args[0]);
                Ok(reply(verdict.map(|v| json!(v.map(Verdict::as_str)))))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::implementation::RaisedKind;

    fn queue(max_attempts: u64) -> RetryQueue {
        RetryQueue::new(&json!(max_attempts)).unwrap()
    }

    #[test]
    fn max_attempts_follows_python_integer_semantics() {
        for ok in [json!(1), json!(3), json!(1_000_000)] {
            assert!(RetryQueue::new(&ok).is_ok(), "{ok}");
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
            let error = RetryQueue::new(&bad).unwrap_err();
            assert_eq!(error.kind, RaisedKind::InvalidArgument, "{bad}");
            assert_eq!(error.class, "ValueError");
        }
        assert_eq!(
            RetryQueue::new(&json!(true)).unwrap_err().message,
            "max_attempts must be an integer >= 1, got true"
        );
    }

    #[test]
    fn an_invalid_outcome_touches_nothing_even_on_an_empty_queue() {
        let mut empty = queue(2);
        let error = empty.process(&json!("explode")).unwrap_err();
        assert_eq!(
            error.message,
            "outcome must be \"success\", \"transient\" or \"permanent\", got \"explode\""
        );
        let mut q = queue(2);
        q.submit("a", "p");
        let before = q.state();
        for bad in [json!("Success"), Value::Null, json!(1), json!(["success"])] {
            assert_eq!(
                q.process(&bad).unwrap_err().kind,
                RaisedKind::InvalidArgument
            );
        }
        assert_eq!(q.state(), before);
    }

    #[test]
    fn transient_retries_to_the_tail_until_the_budget_is_spent() {
        let mut q = queue(2);
        q.submit("a", "pa");
        q.submit("b", "pb");
        let transient = json!("transient");
        assert_eq!(q.process(&transient).unwrap(), Some(Verdict::Retry));
        assert_eq!(q.state()["ready"][0]["id"], "b");
        assert_eq!(q.process(&json!("success")).unwrap(), Some(Verdict::Done));
        assert_eq!(q.process(&transient).unwrap(), Some(Verdict::Dead));
        assert_eq!(q.process(&transient).unwrap(), None);
        assert_eq!(
            q.state(),
            json!({
                "ready": [],
                "done": ["b"],
                "quarantine": [{"id": "a", "payload": "pa", "attempts": 2, "reason": "exhausted"}],
            })
        );
    }

    #[test]
    fn permanent_quarantines_with_budget_left_and_replay_resets() {
        let mut q = queue(5);
        q.submit("a", "pa");
        assert_eq!(q.process(&json!("permanent")).unwrap(), Some(Verdict::Dead));
        assert_eq!(q.state()["quarantine"][0]["reason"], "permanent");
        assert!(q.replay("a"));
        assert!(!q.replay("a"));
        assert!(!q.replay("nope"));
        assert_eq!(
            q.state()["ready"],
            json!([{"id": "a", "payload": "pa", "attempts": 0}])
        );
    }

    #[test]
    fn mutating_a_view_leaves_the_queue_alone() {
        let mut q = queue(1);
        q.submit("a", "pa");
        q.process(&json!("transient")).unwrap();
        let before = q.state();
        q.mutate_state(&json!([{"op": "clear", "path": ["quarantine"]}]))
            .unwrap();
        assert_eq!(q.state(), before);
    }

    #[test]
    fn the_subject_decodes_protocol_calls() {
        let mut q = queue(1);
        let mut world = crate::implementation::NoWorld;
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
