//! Runs a dlq-consumer spec: drives an implementation step by step against a fresh world.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::journal::{self, Happening, ordinal};
use super::rules;
use super::spec::{Expectation, MessageSpec, ReplayStep, Step, normalize_entry};
use super::world::{Fault, ScriptedOutcome, World};
use crate::contract::{Checkpoint, RunMode, Scenario, ScenarioRun, Smell, SpecHeader, Written};
use crate::implementation::{Implementation, RaisedKind, Reply};
use crate::outcome::{Mismatch, Outcome};
use crate::recorder::Recorder;
use crate::rule::Rule;
use crate::source::{Position, SourceFile};
use crate::spec_error::{SpecError, SpecErrorKind};
use crate::yaml;

#[derive(Debug)]
pub struct DlqScenario {
    pub file: SourceFile,
    pub header: SpecHeader,
    pub max_attempts: u64,
    pub messages: Vec<MessageSpec>,
    /// Where each of `messages` is written.
    pub message_positions: Vec<Position>,
    pub script: HashMap<String, Vec<ScriptedOutcome>>,
    /// Where each message's outcomes are written, to point at when they run out.
    pub script_positions: HashMap<String, Position>,
    /// Where each single outcome is written, per message id.
    pub outcome_positions: HashMap<String, Vec<Position>>,
    pub steps: Vec<(Position, Step)>,
    pub expect: Option<(Position, Expectation)>,
}

impl Scenario for DlqScenario {
    fn header(&self) -> &SpecHeader {
        &self.header
    }

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun {
        self.execute(implementation, mode).0
    }

    fn smells(&self, implementation: &mut dyn Implementation) -> Result<Vec<Smell>, Outcome> {
        let (run, record) = self.execute(implementation, RunMode::Record);
        match run.outcome {
            Outcome::Passed | Outcome::Mismatch(_) => {
                Ok(super::smells::find(self, &run.checkpoints, &record))
            }
            cut_short => Err(cut_short),
        }
    }
}

/// What a run leaves behind besides its `ScenarioRun`: the world and what each step did.
pub struct Record {
    pub world: World,
    pub steps: Vec<StepFacts>,
}

/// What one step did to the world.
#[derive(Debug, Clone)]
pub struct StepFacts {
    pub position: Position,
    pub name: &'static str,
    /// Whether queue, DLQ, clock, handler calls or armed faults differ after the step.
    pub changed: bool,
    /// Whether nothing was ready or in flight after the step.
    pub drained: bool,
    /// What the call returned, for `process` and `replay` steps.
    pub returned: Option<Value>,
}

/// The parts of the world a step can change, to tell a step that did something from one that did not.
#[derive(Debug, PartialEq)]
struct Snapshot {
    pending: Vec<String>,
    in_flight: Vec<String>,
    dlq: Vec<Value>,
    clock: u64,
    handler_calls: u64,
    armed: usize,
}

impl Snapshot {
    fn of(world: &World) -> Self {
        Snapshot {
            pending: world.pending(),
            in_flight: world.in_flight(),
            dlq: world.dlq().to_vec(),
            clock: world.now(),
            handler_calls: world.handler_calls().values().sum(),
            armed: world.armed().len(),
        }
    }
}

impl DlqScenario {
    fn execute(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
    ) -> (ScenarioRun, Record) {
        let mut run = Run {
            scenario: self,
            reference: implementation.info().is_reference,
            implementation,
            world: World::new(self.script.clone()),
            alive: false,
            recorder: Recorder::new(mode),
            facts: Vec::new(),
        };
        let stopped = run.all_steps().err();
        let record = Record {
            world: run.world,
            steps: run.facts,
        };
        (run.recorder.finish(stopped), record)
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
    recorder: Recorder,
    facts: Vec<StepFacts>,
}

impl Run<'_> {
    fn all_steps(&mut self) -> Result<(), Stop> {
        for message in &self.scenario.messages {
            self.world.send(&message.id, &message.body);
        }
        let ids: Vec<String> = self
            .scenario
            .messages
            .iter()
            .map(|m| m.id.clone())
            .collect();
        self.recorder.tell(format!(
            "start: the queue holds {}; the clock reads 0; max_attempts {}",
            journal::list(&ids),
            self.scenario.max_attempts
        ));
        for (index, (position, step)) in self.scenario.steps.iter().enumerate() {
            let label = format!("step {} ({})", index + 1, step.name());
            let heading = format!("step {} (line {})", index + 1, position.line);
            let before = Snapshot::of(&self.world);
            let returned = self.step(&label, &heading, *position, step)?;
            let after = Snapshot::of(&self.world);
            self.facts.push(StepFacts {
                position: *position,
                name: step.name(),
                changed: before != after,
                drained: after.pending.is_empty() && after.in_flight.is_empty(),
                returned,
            });
        }
        if let Some((position, expect)) = &self.scenario.expect {
            self.recorder
                .tell(format!("final expect (line {})", position.line));
            self.expect("final expect", *position, &[], expect)?;
        }
        Ok(())
    }

    /// Runs one step; returns what the implementation returned, for steps that call it.
    fn step(
        &mut self,
        label: &str,
        heading: &str,
        position: Position,
        step: &Step,
    ) -> Result<Option<Value>, Stop> {
        match step {
            Step::Process(expected) => {
                self.ensure_consumer()?;
                let from = self.world.journal().len();
                let reply = self.call(heading, "process_one", &[], from)?;
                let actual = self.returned(reply)?;
                self.recorder.tell(format!(
                    "{heading}: process_one() returned {}",
                    yaml::flow(&actual)
                ));
                self.narrate(from);
                self.explain_decision(from);
                self.after_call(label, position)?;
                if let Some(expected) = expected.expected() {
                    let written = vec![Written::new(
                        position,
                        &["process"],
                        json!(expected),
                        actual.clone(),
                    )];
                    let expected = json!(expected);
                    let checkpoint = Checkpoint {
                        position,
                        label: "process".to_owned(),
                        expected,
                        actual: actual.clone(),
                        written,
                    };
                    self.recorder.compare(label, checkpoint, None)?;
                }
                return Ok(Some(actual));
            }
            Step::Replay(replay) => return self.replay(label, heading, position, replay).map(Some),
            Step::Recover => {
                let moved = self.world.in_flight();
                self.recorder.tell(format!(
                    "{heading}: recover: the visibility timeout runs out; {} back to the ready tail",
                    journal::list(&moved)
                ));
                self.world.recover();
            }
            Step::Restart => {
                self.recorder.tell(format!(
                    "{heading}: restart: a fresh consumer instance takes over, remembering nothing"
                ));
                self.alive = false;
            }
            Step::Advance(by) => {
                let was = self.world.now();
                self.world.advance(*by);
                self.recorder.tell(format!(
                    "{heading}: advance: the clock moves by {by}, from {was} to {}",
                    self.world.now()
                ));
            }
            Step::Send(message) => {
                self.recorder.tell(format!(
                    "{heading}: send: {} joins the ready tail",
                    message.id
                ));
                self.world.send(&message.id, &message.body);
            }
            Step::Fault(fault) => {
                let nth = fault.nth.as_ref().map_or(1, |n| n.value);
                let when = fault.crash.word();
                let which = if nth == 1 {
                    "the next call".to_owned()
                } else {
                    format!("the {} call from now", ordinal(u64::from(nth)))
                };
                self.recorder.tell(format!(
                    "{heading}: fault: a crash is armed {when} {which} of {}",
                    fault.call.as_str()
                ));
                self.world.arm(Fault {
                    timing: fault.crash,
                    call: fault.call.as_str().to_owned(),
                    remaining: nth,
                    armed_at: position,
                });
            }
            Step::Expect(expect) => {
                self.recorder.tell(format!("{heading}: expect"));
                self.expect(label, position, &["expect"], expect)?;
            }
        }
        Ok(None)
    }

    fn replay(
        &mut self,
        label: &str,
        heading: &str,
        position: Position,
        replay: &ReplayStep,
    ) -> Result<Value, Stop> {
        self.ensure_consumer()?;
        let args = match &replay.ids {
            None => vec![],
            Some(ids) => vec![json!(ids)],
        };
        let call = match &replay.ids {
            None => "replay()".to_owned(),
            Some(ids) => format!("replay({})", yaml::flow(&json!(ids))),
        };
        let from = self.world.journal().len();
        let reply = self.call(heading, "replay", &args, from)?;
        let actual = self.returned(reply)?;
        self.recorder.tell(format!(
            "{heading}: {call} returned {}",
            yaml::flow(&actual)
        ));
        self.narrate(from);
        let selection = match &replay.ids {
            None => "every entry is replayed, in put order",
            Some(ids) if ids.is_empty() => "an empty list replays nothing",
            Some(_) => "the given ids that are in the DLQ are replayed, in the order given",
        };
        self.rule_line(&rules::REPLAY_SELECTION, selection);
        self.after_call(label, position)?;
        if replay.crash {
            let checkpoint = Checkpoint {
                position,
                label: "replay".to_owned(),
                expected: json!("crash"),
                actual: actual.clone(),
                written: Vec::new(),
            };
            self.recorder.compare(label, checkpoint, None)?;
        } else if let Some(returns) = &replay.returns {
            let expected = json!(returns.value);
            let at = yaml::at(returns);
            let written = vec![Written::new(at, &[], expected.clone(), actual.clone())];
            let checkpoint = Checkpoint {
                position: at,
                label: "replay".to_owned(),
                expected,
                actual: actual.clone(),
                written,
            };
            self.recorder.compare(label, checkpoint, None)?;
        }
        Ok(actual)
    }

    /// Calls the implementation; when it breaks, what the world saw so far is still told.
    fn call(
        &mut self,
        heading: &str,
        method: &str,
        args: &[Value],
        from: usize,
    ) -> Result<Reply, Stop> {
        let reply = self.implementation.call(method, args, &mut self.world);
        if let Err(error) = &reply {
            self.recorder
                .tell(format!("{heading}: {method} broke: {error}"));
            self.narrate(from);
        }
        reply.map_err(Outcome::Errored)
    }

    /// Adds what the world saw since journal entry `from` to the timeline.
    fn narrate(&mut self, from: usize) {
        let lines: Vec<String> = self.world.journal()[from..]
            .iter()
            .map(|happening| format!("    {}", happening.describe()))
            .collect();
        self.recorder.tell_all(lines);
    }

    fn rule_line(&mut self, rule: &Rule, why: &str) {
        self.recorder.tell(format!("    rule {}: {why}", rule.id));
    }

    /// Names the rule that decides what `process_one` must do in the situation the world saw
    /// since journal entry `from`: the same for every implementation, right or wrong.
    fn explain_decision(&mut self, from: usize) {
        let happened = self.world.journal()[from..].to_vec();
        let max = self.scenario.max_attempts;
        let received = happened.iter().find_map(|h| match h {
            Happening::Received {
                id,
                receive_count,
                already_dead,
                ..
            } => Some((id.clone(), *receive_count, *already_dead)),
            _ => None,
        });
        let handled = happened.iter().find_map(|h| match h {
            Happening::Handled { outcome, .. } => Some(outcome.clone()),
            _ => None,
        });
        match (received, handled) {
            (None, _) => {
                if happened.contains(&Happening::NothingReady) {
                    self.rule_line(&rules::EMPTY_QUEUE, "nothing is ready: return none");
                }
            }
            (Some((id, _, true)), _) => self.rule_line(
                &rules::NO_DOUBLE_DEAD_LETTER,
                &format!("{id} is already in the DLQ: ack it and return dead, with no second put and no handler call"),
            ),
            (Some((id, count, false)), _) if count > max => self.rule_line(
                &rules::POISON,
                &format!("receive_count {count} > max_attempts {max}: every earlier delivery of {id} died mid-handler, so it is dead-lettered as poison without calling the handler"),
            ),
            (Some(_), None) => {}
            (Some((id, _, _)), Some(ScriptedOutcome::Ok)) => self.rule_line(
                &rules::SUCCESS,
                &format!("the handler succeeded: ack {id} and return ok"),
            ),
            (Some((id, _, _)), Some(ScriptedOutcome::Crash)) => self.rule_line(
                &rules::CRASH_PROPAGATES,
                &format!("the crash propagates out of process_one and {id} stays in flight"),
            ),
            (Some((id, _, _)), Some(ScriptedOutcome::Permanent(_))) => self.rule_line(
                &rules::PERMANENT,
                &format!("a PermanentError dead-letters {id} at once, reason permanent, whatever budget is left"),
            ),
            (Some((id, count, _)), Some(transient)) => {
                let rule = if matches!(transient, ScriptedOutcome::Transient(_)) {
                    None
                } else {
                    Some(format!("{} is not a PermanentError, so it counts as transient", transient.label()))
                };
                if let Some(why) = rule {
                    self.rule_line(&rules::UNEXPECTED_ERROR, &why);
                }
                if count < max {
                    self.rule_line(
                        &rules::TRANSIENT_RETRY,
                        &format!("receive_count {count} < max_attempts {max}: retry {id} to the ready tail"),
                    );
                } else {
                    self.rule_line(
                        &rules::EXHAUSTED,
                        &format!("receive_count {count} = max_attempts {max}: the budget is spent, dead-letter {id} with reason exhausted"),
                    );
                }
            }
        }
        if let Some(Happening::Crashed { call, .. }) = happened
            .iter()
            .find(|h| matches!(h, Happening::Crashed { .. }))
        {
            self.rule_line(
                &rules::CRASH_PROPAGATES,
                &format!("the crash injected at {call} propagates out of process_one"),
            );
        }
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
            let note = format!(
                "{what}: the implementation called the handler more often than the rules allow"
            );
            let checkpoint = Checkpoint {
                position,
                label: "handler_calls".to_owned(),
                expected: json!({ "handler_calls": { id.as_str(): scripted } }),
                actual: json!({ "handler_calls": { id.as_str(): unscripted.call_number } }),
                written: Vec::new(),
            };
            self.recorder.compare(label, checkpoint, Some(note))?;
            return Err(self.recorder.stop());
        }
        let misuse = self.world.misuse();
        let already = self
            .recorder
            .checkpoints()
            .iter()
            .filter(|c| c.label == "misuse")
            .map(|c| c.actual["misuse"].as_array().map_or(0, Vec::len))
            .max()
            .unwrap_or(0);
        if misuse.len() > already {
            let note = "the consumer misused the queue, the DLQ or the handler".to_owned();
            let checkpoint = Checkpoint {
                position,
                label: "misuse".to_owned(),
                expected: json!({ "misuse": [] }),
                actual: json!({ "misuse": misuse }),
                written: Vec::new(),
            };
            self.recorder.compare(label, checkpoint, Some(note))?;
        }
        Ok(())
    }

    /// Checks an `expect` written at `position`; `path` leads from there to the expectation's
    /// mapping (`[expect]` for a step, nothing for the final one).
    fn expect(
        &mut self,
        label: &str,
        position: Position,
        path: &[&str],
        expect: &Expectation,
    ) -> Result<(), Stop> {
        let mut parts: Vec<(&str, Value, Value)> = Vec::new();
        if let Some(entries) = &expect.dlq {
            parts.push((
                "dlq",
                entries.iter().map(|e| e.to_value()).collect(),
                self.world.dlq().iter().map(normalize_entry).collect(),
            ));
        }
        if let Some(pending) = &expect.pending {
            parts.push(("pending", json!(pending), json!(self.world.pending())));
        }
        if let Some(in_flight) = &expect.in_flight {
            parts.push(("in_flight", json!(in_flight), json!(self.world.in_flight())));
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
            parts.push((
                "handler_calls",
                Value::Object(listed),
                Value::Object(observed),
            ));
        }
        if let Some(trace) = &expect.trace {
            parts.push(("trace", json!(trace), json!(self.world.trace())));
        }
        if let Some(clock) = expect.clock {
            parts.push(("clock", json!(clock), json!(self.world.now())));
        }
        let mut expected = Map::new();
        let mut actual = Map::new();
        let mut written = Vec::with_capacity(parts.len());
        for (key, expected_part, actual_part) in parts {
            let mut at_key = path.to_vec();
            at_key.push(key);
            written.push(Written::new(
                position,
                &at_key,
                expected_part.clone(),
                actual_part.clone(),
            ));
            expected.insert(key.to_owned(), expected_part);
            actual.insert(key.to_owned(), actual_part);
        }
        let checkpoint = Checkpoint {
            position,
            label: "expect".to_owned(),
            expected: Value::Object(expected),
            actual: Value::Object(actual),
            written,
        };
        self.recorder.compare(label, checkpoint, None)
    }
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
}
