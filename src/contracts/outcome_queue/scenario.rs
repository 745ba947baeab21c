//! Runs an outcome-queue spec: drives an implementation's `RetryQueue` step by step and compares.
//!
//! Two checks need no expectation in the spec. A step that expects an error takes `state()`
//! before and after the call: any difference is a mismatch, because an invalid argument must
//! leave every job untouched. A `mutate_state` step does the same around the mutation: the
//! queue's own state must not change when a view of it is changed.

use serde_json::{Value, json};

use super::spec::{CreateStep, ProcessStep, StateSpec, Step, normalize_state};
use super::state_ops::{self, StateOp, show_path};
use crate::contract::{Checkpoint, RunMode, Scenario, ScenarioRun, SpecHeader};
use crate::implementation::{Implementation, NoWorld, Raised, Reply};
use crate::outcome::{Mismatch, Outcome};
use crate::source::{Position, SourceFile};
use crate::spec_error::SpecError;
use crate::yaml::{self, Spanned};

#[derive(Debug)]
pub struct QueueScenario {
    pub file: SourceFile,
    pub header: SpecHeader,
    pub steps: Vec<(Position, Step)>,
    pub expect: Option<(Position, StateSpec)>,
}

impl Scenario for QueueScenario {
    fn header(&self) -> &SpecHeader {
        &self.header
    }

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun {
        let mut run = Run {
            scenario: self,
            reference: implementation.info().is_reference,
            implementation,
            mode,
            checkpoints: Vec::new(),
            first_mismatch: None,
            timeline: Vec::new(),
        };
        let stopped = run.all_steps().err();
        let outcome = match (stopped, run.first_mismatch.take()) {
            (Some(outcome), _) => outcome,
            (None, Some(mismatch)) => Outcome::Mismatch(mismatch),
            (None, None) => Outcome::Passed,
        };
        ScenarioRun {
            outcome,
            checkpoints: run.checkpoints,
            timeline: run.timeline,
        }
    }
}

/// Why a run ended before its last step.
type Stop = Outcome;

const UNCHANGED_AFTER_ERROR: &str =
    "a call that raises must leave every job as it was: state() differs before and after it";
const DEEP_COPY: &str =
    "state() must return a deep copy: changing the view it returned changed the queue";

struct Run<'a> {
    scenario: &'a QueueScenario,
    implementation: &'a mut dyn Implementation,
    reference: bool,
    mode: RunMode,
    checkpoints: Vec<Checkpoint>,
    first_mismatch: Option<Mismatch>,
    timeline: Vec<String>,
}

impl Run<'_> {
    fn all_steps(&mut self) -> Result<(), Stop> {
        for (index, (position, step)) in self.scenario.steps.iter().enumerate() {
            let label = format!("step {} ({})", index + 1, step.name());
            self.step(&label, *position, step)?;
        }
        if let Some((position, expect)) = &self.scenario.expect {
            self.expect("final expect", *position, expect)?;
        }
        Ok(())
    }

    fn step(&mut self, label: &str, position: Position, step: &Step) -> Result<(), Stop> {
        match step {
            Step::Create(create) => self.create(label, create),
            Step::Submit(submit) => {
                let args = [json!(submit.id.value), json!(submit.payload)];
                let reply = self.call(label, "submit", &args)?;
                if let Reply::Raised(raised) = reply {
                    let note = "submit must accept a new job".to_owned();
                    let actual = raised_value(&raised, true);
                    let expected = json!({ "returns": null });
                    self.compare(label, position, "submit", expected, actual, Some(note))?;
                }
                Ok(())
            }
            Step::Process(process) => self.process(label, position, process),
            Step::Replay(replay) => {
                let reply = self.call(label, "replay", &[json!(replay.id)])?;
                let expected = json!({ "returns": replay.returns.value });
                let actual = answer(reply, &expected)?;
                self.compare(
                    label,
                    yaml::at(&replay.returns),
                    "replay",
                    expected,
                    actual,
                    None,
                )
            }
            Step::MutateState(ops) => self.mutate(label, position, ops),
            Step::Expect(expect) => self.expect(label, position, expect),
        }
    }

    /// Calls a method of the current queue, noting the call and its answer in the timeline.
    fn call(&mut self, label: &str, method: &str, args: &[Value]) -> Result<Reply, Stop> {
        let reply = self
            .implementation
            .call(method, args, &mut NoWorld)
            .map_err(Outcome::Errored)?;
        if method != "state" {
            let args: Vec<String> = args.iter().map(Value::to_string).collect();
            self.timeline.push(format!(
                "{label}: {method}({}) -> {}",
                args.join(", "),
                shown_reply(&reply)
            ));
        }
        Ok(reply)
    }

    fn create(&mut self, label: &str, create: &CreateStep) -> Result<(), Stop> {
        let raw = &create.max_attempts.value;
        let reply = self
            .implementation
            .create(
                super::contract::NAME,
                &json!({ "max_attempts": raw }),
                &mut NoWorld,
            )
            .map_err(Outcome::Errored)?;
        self.timeline.push(format!(
            "{label}: RetryQueue({raw}) -> {}",
            match &reply {
                Reply::Returned(_) => "a new queue".to_owned(),
                other => shown_reply(other),
            }
        ));
        let (expected, position) = match &create.raises {
            Some(raises) => (raises.value.to_value(), yaml::at(raises)),
            None => (
                json!({ "constructed": true }),
                yaml::at(&create.max_attempts),
            ),
        };
        let constructed = matches!(reply, Reply::Returned(_));
        let actual = match reply {
            Reply::Returned(_) => json!({ "constructed": true }),
            Reply::Raised(raised) => raised_value(&raised, create.raises.is_none()),
            Reply::Skipped(reason) => return Err(Outcome::Skipped(reason)),
        };
        let note = "RetryQueue accepts max_attempts only as an integer >= 1".to_owned();
        self.compare(label, position, "create", expected, actual, Some(note))?;
        if !constructed && create.raises.is_none() {
            // No queue exists, so no later step can run, even when recording.
            return Err(self.stop_at_first_mismatch());
        }
        Ok(())
    }

    fn process(&mut self, label: &str, position: Position, step: &ProcessStep) -> Result<(), Stop> {
        let before = match step.raises {
            Some(_) => Some(self.state()?),
            None => None,
        };
        let reply = self.call(label, "process", std::slice::from_ref(&step.outcome.value))?;
        let (expected, at) = match (&step.returns, &step.raises) {
            (_, Some(raises)) => (raises.value.to_value(), yaml::at(raises)),
            (Some(returns), None) => (
                json!({ "returns": returns.value.to_value() }),
                yaml::at(returns),
            ),
            // Loading guarantees one of the two.
            (None, None) => (json!({ "returns": null }), position),
        };
        let actual = answer(reply, &expected)?;
        self.compare(label, at, "process", expected, actual, None)?;
        if let Some(before) = before {
            self.unchanged(label, position, before, UNCHANGED_AFTER_ERROR)?;
        }
        Ok(())
    }

    /// Changes a view of the state, then checks the queue's own state did not change.
    fn mutate(
        &mut self,
        label: &str,
        position: Position,
        ops: &[Spanned<yaml::SingleKey<StateOp>>],
    ) -> Result<(), Stop> {
        let before = self.state()?;
        // The ops must apply to the view as the implementation returned it; find out here,
        // where a missing path can be pointed at, rather than from the implementation's error.
        let mut trial = before.clone();
        for op in ops {
            let (op_position, op) = (yaml::at(op), &op.value.0);
            if let Err(raised) = state_ops::apply(&mut trial, op) {
                let what = format!("`{} {}` cannot apply", op.name(), show_path(op.path()));
                if self.reference {
                    return Err(Outcome::SpecError(SpecError::invalid(
                        &self.scenario.file,
                        op_position,
                        format!("{what} to the state at {label}: {}", raised.message),
                    )));
                }
                let note = format!("{what}: this implementation's state() has another shape");
                let expected = json!({ "applies": true });
                let actual = json!({ "applies": false, "error": raised.describe() });
                return self.compare(
                    label,
                    op_position,
                    "mutate_state",
                    expected,
                    actual,
                    Some(note),
                );
            }
        }
        let wire: Vec<Value> = ops.iter().map(|op| op.value.0.to_wire()).collect();
        let reply = self.call(label, "mutate_state", &[Value::Array(wire)])?;
        if let Reply::Raised(raised) = reply {
            let note = "mutate_state must apply ops that apply to the view".to_owned();
            let actual = raised_value(&raised, true);
            let expected = json!({ "returns": null });
            self.compare(
                label,
                position,
                "mutate_state",
                expected,
                actual,
                Some(note),
            )?;
        }
        self.unchanged(label, position, before, DEEP_COPY)
    }

    fn expect(&mut self, label: &str, position: Position, expect: &StateSpec) -> Result<(), Stop> {
        let actual = self.state()?;
        self.compare(label, position, "expect", expect.to_value(), actual, None)
    }

    /// The queue's state now, its keys in the contract's order.
    fn state(&mut self) -> Result<Value, Stop> {
        match self.call("state", "state", &[])? {
            Reply::Returned(view) => Ok(normalize_state(&view)),
            // Not a state: it differs from every expected one, and the diff shows why.
            Reply::Raised(raised) => Ok(raised_value(&raised, true)),
            Reply::Skipped(reason) => Err(Outcome::Skipped(reason)),
        }
    }

    /// Compares the state now with `before`.
    fn unchanged(
        &mut self,
        label: &str,
        position: Position,
        before: Value,
        note: &str,
    ) -> Result<(), Stop> {
        let after = self.state()?;
        self.compare(
            label,
            position,
            "state",
            before,
            after,
            Some(note.to_owned()),
        )
    }

    fn stop_at_first_mismatch(&mut self) -> Stop {
        self.first_mismatch
            .clone()
            .map_or(Outcome::Passed, Outcome::Mismatch)
    }

    /// Records a checkpoint; on a difference, stops (checking) or remembers the first (recording).
    fn compare(
        &mut self,
        step: &str,
        position: Position,
        key: &str,
        expected: Value,
        actual: Value,
        note: Option<String>,
    ) -> Result<(), Stop> {
        let checkpoint = Checkpoint {
            position,
            label: key.to_owned(),
            expected,
            actual,
        };
        let matches = checkpoint.matches();
        if !matches && self.first_mismatch.is_none() {
            self.first_mismatch = Some(Mismatch {
                step: step.to_owned(),
                position,
                expected: yaml::render(&checkpoint.expected),
                actual: yaml::render(&checkpoint.actual),
                note,
            });
        }
        self.checkpoints.push(checkpoint);
        if !matches && self.mode == RunMode::Check {
            return Err(self.stop_at_first_mismatch());
        }
        Ok(())
    }
}

/// A reply as a spec writes its expectation: `{returns: value}` or `{raises: kind}`. The
/// error's class and message are added when the expectation is not that very raise, so a
/// diff says what was raised.
fn answer(reply: Reply, expected: &Value) -> Result<Value, Stop> {
    match reply {
        Reply::Returned(value) => Ok(json!({ "returns": value })),
        Reply::Raised(raised) => {
            let short = raised_value(&raised, false);
            Ok(if &short == expected {
                short
            } else {
                raised_value(&raised, true)
            })
        }
        Reply::Skipped(reason) => Err(Outcome::Skipped(reason)),
    }
}

fn raised_value(raised: &Raised, with_error: bool) -> Value {
    let kind = serde_json::to_value(raised.kind).unwrap_or(Value::Null);
    if with_error {
        json!({ "raises": kind, "error": raised.describe() })
    } else {
        json!({ "raises": kind })
    }
}

fn shown_reply(reply: &Reply) -> String {
    match reply {
        Reply::Returned(value) => yaml::flow(value),
        Reply::Raised(raised) => format!("raised {}", raised.describe()),
        Reply::Skipped(reason) => format!("skipped: {reason}"),
    }
}
