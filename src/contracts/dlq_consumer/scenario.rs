//! Runs a dlq-consumer spec: drives an implementation step by step against a fresh world.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::spec::{Expectation, MessageSpec, ReplayStep, Step, normalize_entry};
use super::world::{Fault, ScriptedOutcome, World};
use crate::contract::{Checkpoint, RunMode, Scenario, ScenarioRun, SpecHeader};
use crate::implementation::{Implementation, RaisedKind, Reply};
use crate::outcome::{Mismatch, Outcome};
use crate::source::{Position, SourceFile};
use crate::spec_error::{SpecError, SpecErrorKind};
use crate::yaml;

#[derive(Debug)]
pub struct DlqScenario {
    pub file: SourceFile,
    pub header: SpecHeader,
    pub max_attempts: u64,
    pub messages: Vec<MessageSpec>,
    pub script: HashMap<String, Vec<ScriptedOutcome>>,
    /// Where each message's outcomes are written, to point at when they run out.
    pub script_positions: HashMap<String, Position>,
    pub steps: Vec<(Position, Step)>,
    pub expect: Option<(Position, Expectation)>,
}

impl Scenario for DlqScenario {
    fn header(&self) -> &SpecHeader {
        &self.header
    }

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun {
        let mut run = Run {
            scenario: self,
            reference: implementation.info().is_reference,
            implementation,
            world: World::new(self.script.clone()),
            alive: false,
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

struct Run<'a> {
    scenario: &'a DlqScenario,
    implementation: &'a mut dyn Implementation,
    reference: bool,
    world: World,
    /// Whether a consumer instance exists; a crash or a restart step ends it.
    alive: bool,
    mode: RunMode,
    checkpoints: Vec<Checkpoint>,
    first_mismatch: Option<Mismatch>,
    timeline: Vec<String>,
}

impl Run<'_> {
    fn all_steps(&mut self) -> Result<(), Stop> {
        for message in &self.scenario.messages {
            self.world.send(&message.id, &message.body);
        }
        if !self.scenario.messages.is_empty() {
            let ids: Vec<_> = self
                .scenario
                .messages
                .iter()
                .map(|m| m.id.as_str())
                .collect();
            self.timeline
                .push(format!("start: queue holds {}", ids.join(", ")));
        }
        for (index, (position, step)) in self.scenario.steps.iter().enumerate() {
            let label = format!("step {} ({})", index + 1, step.name());
            let traced = self.world.trace().len();
            self.step(&label, *position, step)?;
            let calls: Vec<String> = self.world.trace()[traced..]
                .iter()
                .map(|c| format!("    {c}"))
                .collect();
            self.timeline.extend(calls);
        }
        if let Some((position, expect)) = &self.scenario.expect {
            self.expect("final expect", *position, expect)?;
        }
        Ok(())
    }

    fn step(&mut self, label: &str, position: Position, step: &Step) -> Result<(), Stop> {
        match step {
            Step::Process(expected) => {
                self.ensure_consumer()?;
                let reply = self.call("process_one", &[])?;
                let actual = self.returned(reply)?;
                self.timeline
                    .push(format!("{label}: process_one() -> {}", yaml::flow(&actual)));
                self.after_call(label, position)?;
                if let Some(expected) = expected.expected() {
                    self.compare(label, position, "process", json!(expected), actual, None)?;
                }
            }
            Step::Replay(replay) => self.replay(label, position, replay)?,
            Step::Recover => {
                self.timeline.push(format!(
                    "{label}: the visibility timeout runs out (recover)"
                ));
                self.world.recover();
            }
            Step::Restart => {
                self.timeline
                    .push(format!("{label}: a fresh consumer instance takes over"));
                self.alive = false;
            }
            Step::Advance(by) => {
                self.world.advance(*by);
                self.timeline.push(format!(
                    "{label}: clock advances by {by} to {}",
                    self.world.now()
                ));
            }
            Step::Send(message) => {
                self.timeline.push(format!("{label}: send {}", message.id));
                self.world.send(&message.id, &message.body);
            }
            Step::Fault(fault) => {
                let nth = fault.nth.as_ref().map_or(1, |n| n.value);
                self.timeline.push(format!(
                    "{label}: a crash is armed {:?} call {} of {}",
                    fault.crash,
                    nth,
                    fault.call.as_str()
                ));
                self.world.arm(Fault {
                    timing: fault.crash,
                    call: fault.call.as_str().to_owned(),
                    remaining: nth,
                });
            }
            Step::Expect(expect) => self.expect(label, position, expect)?,
        }
        Ok(())
    }

    fn replay(&mut self, label: &str, position: Position, replay: &ReplayStep) -> Result<(), Stop> {
        self.ensure_consumer()?;
        let args = match &replay.ids {
            None => vec![],
            Some(ids) => vec![json!(ids)],
        };
        let reply = self.call("replay", &args)?;
        let actual = self.returned(reply)?;
        self.timeline
            .push(format!("{label}: replay -> {}", yaml::flow(&actual)));
        self.after_call(label, position)?;
        if replay.crash {
            self.compare(label, position, "replay", json!("crash"), actual, None)?;
        } else if let Some(returns) = &replay.returns {
            let expected = json!(returns.value);
            self.compare(label, yaml::at(returns), "replay", expected, actual, None)?;
        }
        Ok(())
    }

    fn call(&mut self, method: &str, args: &[Value]) -> Result<Reply, Stop> {
        self.implementation
            .call(method, args, &mut self.world)
            .map_err(Outcome::Errored)
    }

    /// Makes a consumer instance if none is alive (at the start, after a crash or a restart).
    fn ensure_consumer(&mut self) -> Result<(), Stop> {
        if self.alive {
            return Ok(());
        }
        let args = json!({ "max_attempts": self.scenario.max_attempts });
        let reply = self
            .implementation
            .create(super::contract::NAME, &args, &mut self.world)
            .map_err(Outcome::Errored)?;
        match reply {
            Reply::Returned(_) => {
                self.alive = true;
                Ok(())
            }
            Reply::Skipped(reason) => Err(Outcome::Skipped(reason)),
            Reply::Raised(raised) => Err(Outcome::Mismatch(Mismatch {
                step: "constructing DLQConsumer".into(),
                position: Position::START,
                expected: "constructed: true\n".into(),
                actual: format!("raised: {}\n", yaml::flow(&json!(raised.describe()))),
                note: Some("the constructor raised".into()),
            })),
        }
    }

    /// What a call returned, as a spec writes it: a value, `none`, `crash`, or `raised ...`.
    fn returned(&mut self, reply: Reply) -> Result<Value, Stop> {
        Ok(match reply {
            Reply::Returned(Value::Null) => json!("none"),
            Reply::Returned(value) => value,
            Reply::Raised(raised) => {
                // Whatever escapes the consumer ends it, as it would end the process.
                self.alive = false;
                if raised.kind == RaisedKind::Crash {
                    json!("crash")
                } else {
                    json!(format!("raised {}", raised.describe()))
                }
            }
            Reply::Skipped(reason) => return Err(Outcome::Skipped(reason)),
        })
    }

    /// Checks what a call left behind that no expectation names: an unscripted handler call,
    /// misuse of the queue.
    fn after_call(&mut self, label: &str, position: Position) -> Result<(), Stop> {
        if let Some(unscripted) = self.world.take_unscripted() {
            let scripted = self.scenario.script.get(&unscripted.id).map_or(0, Vec::len);
            let id = &unscripted.id;
            let what = format!(
                "message `{id}` reached the handler a {} time, but the spec scripts {scripted} outcome{}",
                ordinal(unscripted.call_number),
                if scripted == 1 { "" } else { "s" },
            );
            if self.reference {
                let at = self
                    .scenario
                    .script_positions
                    .get(id)
                    .copied()
                    .unwrap_or(position);
                return Err(Outcome::SpecError(SpecError::at(
                    &self.scenario.file,
                    at,
                    SpecErrorKind::Incomplete,
                    format!(
                        "{what} (at {label}): add the outcome of call {}",
                        unscripted.call_number
                    ),
                )));
            }
            let expected = json!({ "handler_calls": { id.as_str(): scripted } });
            let actual = json!({ "handler_calls": { id.as_str(): unscripted.call_number } });
            let note = format!(
                "{what}: the implementation called the handler more often than the rules allow"
            );
            self.compare(
                label,
                position,
                "handler_calls",
                expected,
                actual,
                Some(note),
            )?;
            return Err(self
                .first_mismatch
                .clone()
                .map_or(Outcome::Passed, Outcome::Mismatch));
        }
        let misuse = self.world.misuse();
        let already = self
            .checkpoints
            .iter()
            .filter(|c| c.label == "misuse")
            .map(|c| c.actual["misuse"].as_array().map_or(0, Vec::len))
            .max()
            .unwrap_or(0);
        if misuse.len() > already {
            let actual = json!({ "misuse": misuse });
            let note = "the consumer misused the queue, the DLQ or the handler".to_owned();
            self.compare(
                label,
                position,
                "misuse",
                json!({ "misuse": [] }),
                actual,
                Some(note),
            )?;
        }
        Ok(())
    }

    fn expect(
        &mut self,
        label: &str,
        position: Position,
        expect: &Expectation,
    ) -> Result<(), Stop> {
        let mut expected = Map::new();
        let mut actual = Map::new();
        if let Some(entries) = &expect.dlq {
            expected.insert("dlq".into(), entries.iter().map(|e| e.to_value()).collect());
            actual.insert(
                "dlq".into(),
                self.world.dlq().iter().map(normalize_entry).collect(),
            );
        }
        if let Some(pending) = &expect.pending {
            expected.insert("pending".into(), json!(pending));
            actual.insert("pending".into(), json!(self.world.pending()));
        }
        if let Some(in_flight) = &expect.in_flight {
            expected.insert("in_flight".into(), json!(in_flight));
            actual.insert("in_flight".into(), json!(self.world.in_flight()));
        }
        if let Some(calls) = &expect.handler_calls {
            let listed: Map<String, Value> = calls
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(id, n)| (id.clone(), json!(n)))
                .collect();
            // Ids the spec lists come first, in its order, so the diff lines up.
            let mut observed = Map::new();
            let world_calls = self.world.handler_calls();
            for id in listed.keys() {
                if let Some(n) = world_calls.get(id) {
                    observed.insert(id.clone(), json!(n));
                }
            }
            for (id, n) in world_calls {
                if !observed.contains_key(id) {
                    observed.insert(id.clone(), json!(n));
                }
            }
            expected.insert("handler_calls".into(), Value::Object(listed));
            actual.insert("handler_calls".into(), Value::Object(observed));
        }
        if let Some(trace) = &expect.trace {
            expected.insert("trace".into(), json!(trace));
            actual.insert("trace".into(), json!(self.world.trace()));
        }
        if let Some(clock) = expect.clock {
            expected.insert("clock".into(), json!(clock));
            actual.insert("clock".into(), json!(self.world.now()));
        }
        self.compare(
            label,
            position,
            "expect",
            Value::Object(expected),
            Value::Object(actual),
            None,
        )
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
            let (expected, actual) = if checkpoint.expected.is_object() {
                (
                    yaml::render(&checkpoint.expected),
                    yaml::render(&checkpoint.actual),
                )
            } else {
                (
                    yaml::render(&json!({ key: checkpoint.expected })),
                    yaml::render(&json!({ key: checkpoint.actual })),
                )
            };
            self.first_mismatch = Some(Mismatch {
                step: step.to_owned(),
                position,
                expected,
                actual,
                note,
            });
        }
        self.checkpoints.push(checkpoint);
        if !matches && self.mode == RunMode::Check {
            return Err(Outcome::Mismatch(
                self.first_mismatch.clone().expect("set above"),
            ));
        }
        Ok(())
    }
}

fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::implementation::{ImplError, ImplInfo, WorldHost};

    /// Acks every message it receives twice: the second ack is a misuse.
    struct DoubleAcker;

    impl Implementation for DoubleAcker {
        fn info(&self) -> ImplInfo {
            ImplInfo {
                label: "double-acker".into(),
                language: "rust".into(),
                is_reference: false,
            }
        }

        fn create(
            &mut self,
            _: &str,
            _: &Value,
            _: &mut dyn WorldHost,
        ) -> Result<Reply, ImplError> {
            Ok(Reply::Returned(Value::Null))
        }

        fn call(
            &mut self,
            _method: &str,
            _args: &[Value],
            world: &mut dyn WorldHost,
        ) -> Result<Reply, ImplError> {
            let message = match world.world_call("queue.receive", &[]) {
                Ok(Value::Null) => return Ok(Reply::Returned(Value::Null)),
                Ok(message) => message,
                Err(raised) => return Ok(Reply::Raised(raised)),
            };
            let id = [message["id"].clone()];
            let acked = world
                .world_call("queue.ack", &id)
                .and_then(|_| world.world_call("queue.ack", &id));
            Ok(match acked {
                Ok(_) => Reply::Returned(json!("ok")),
                Err(raised) => Reply::Raised(raised),
            })
        }
    }

    #[test]
    fn a_misuse_is_recorded_once_not_again_at_every_later_step() {
        let text = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nsteps:\n  - process: ok\n  - process: none\n  - process: none\n";
        let scenario = super::super::spec::load(&SourceFile::from_text("t.yaml", text)).unwrap();
        let run = scenario.run(&mut DoubleAcker, RunMode::Record);
        let misuse: Vec<_> = run
            .checkpoints
            .iter()
            .filter(|c| c.label == "misuse")
            .collect();
        assert_eq!(misuse.len(), 1, "{misuse:?}");
        assert_eq!(
            misuse[0].actual,
            json!({"misuse": ["queue.ack(a): a is not in flight"]})
        );
        assert!(matches!(run.outcome, Outcome::Mismatch(_)));
    }

    #[test]
    fn ordinals_read_naturally() {
        let shown: Vec<_> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal).to_vec();
        assert_eq!(
            shown,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
            ]
        );
    }
}
