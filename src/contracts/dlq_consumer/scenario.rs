//! Runs a dlq-consumer spec: drives an implementation step by step against a fresh world.
//!
//! This file plays the steps; its children judge the expectations (`expectations.rs`), tell
//! `explain`'s narration (`narration.rs`) and hold what an implementation did in a step
//! against what its rule wanted (`did_wanted.rs`).

mod did_wanted;
mod expectations;
mod narration;

use did_wanted::Ending;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::consumer::DEFAULT_MAX_ATTEMPTS;
use super::handler::GivenError;
use super::journal::WorldEvent;
use super::queue::Queue;
use super::record::{Record, RecordKeeping, StepFacts, StepMark};
use super::rules;
use super::spec::{
    Expectation, MessageSpec, ReplayStep, Step, canonical_entry, entry_in, normalize_entry,
};
use super::world::{CrashTiming, Fault, Script, ScriptedOutcome, World};
use crate::contracts::contract::{Checkpoint, RunMode, ScenarioRun, SpecHeader, WrittenValue};
use crate::contracts::recorder::Recorder;
use crate::contracts::timeline::TimelineEvent;
use crate::model::implementation::{
    Implementation, Naming, RaisedKind, Reply, UNDEFINED_IS_NOT_NULL,
};
use crate::model::outcome::{Mismatch, Outcome};
use crate::model::rule::Rule;
use crate::text::listing::{self, ordinal};
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{SpecError, SpecErrorKind};
use crate::text::yaml;

#[derive(Debug)]
pub(crate) struct DlqScenario {
    pub(crate) file: SourceFile,
    pub(crate) header: SpecHeader,
    /// As the spec writes it: `None` constructs the consumer without it, so that the
    /// implementation's default (the lesson's 3) is what is checked.
    pub(crate) max_attempts: Option<u64>,
    pub(crate) messages: Vec<MessageSpec>,
    /// Where each of `messages` is written.
    pub(crate) message_positions: Vec<Position>,
    /// Shared with each run's world, which reads it without a copy.
    pub(crate) script: Arc<Script>,
    /// Where each message's outcomes are written, to point at when they run out.
    pub(crate) script_positions: HashMap<String, Position>,
    /// Where each single outcome is written, per message id; a `generate` group's messages
    /// share one list.
    pub(crate) outcome_positions: HashMap<String, Arc<[Position]>>,
    pub(crate) steps: Vec<(Position, Step)>,
    pub(crate) expect: Option<(Position, Expectation)>,
}

impl DlqScenario {
    /// The consumer's budget: the spec's `max_attempts`, or the lesson's default.
    pub(crate) fn budget(&self) -> u64 {
        self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS)
    }

    /// Runs the scenario and keeps the world and what each step did, for lint and explore.
    pub(crate) fn execute(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
    ) -> (ScenarioRun, Record) {
        let facts = RecordKeeping {
            facts: true,
            ..RecordKeeping::default()
        };
        self.play(implementation, mode, facts, Box::default())
    }

    /// Runs the scenario with `queue` for the world's queue; the record holds what `keep`
    /// asks for besides the world.
    pub(crate) fn play(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        keep: RecordKeeping,
        queue: Box<dyn Queue>,
    ) -> (ScenarioRun, Record) {
        let naming = implementation.naming();
        let mut run = Run {
            scenario: self,
            // A spec is judged on the lesson's world: on a broker's, the reference is one
            // implementation among others.
            reference: implementation.info().is_reference && queue.is_fake(),
            implementation,
            naming,
            world: match mode {
                RunMode::Explain => World::shared(Arc::clone(&self.script), naming)
                    .on(queue)
                    .detailed(),
                RunMode::Check | RunMode::Record => {
                    World::shared(Arc::clone(&self.script), naming).on(queue)
                }
            },
            alive: false,
            generation: 0,
            received_by: HashMap::new(),
            endings: HashMap::new(),
            replayed: HashSet::new(),
            first_call: false,
            misuse_reported: 0,
            recorder: Recorder::new(mode),
            keep_facts: keep.facts,
            facts: Vec::new(),
            marks: keep.marks.then(Vec::new),
            stashed: None,
            constructor_raised: None,
            until: keep.until,
        };
        if keep.rules {
            run.recorder.keep_step_rules();
        }
        let stopped = run.all_steps().err();
        let record = Record {
            world: run.world,
            steps: run.facts,
            marks: run.marks.unwrap_or_default(),
            constructor_raised: run.constructor_raised,
        };
        (run.recorder.finish(stopped), record)
    }
}

/// `step N (name)`, as a difference names the step it is at. Written out only when something
/// reads it: a plain run that passes never does, at any of its steps.
struct StepLabel {
    number: usize,
    name: &'static str,
}

impl fmt::Display for StepLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {} ({})", self.number, self.name)
    }
}

/// Why a run ended before its last step.
type Stop = Outcome;

/// One key of an expectation: the key, expected and actual as shown and compared, and, when
/// they differ from those, as the spec writes them (so a difference can be pointed at).
type ComparedKey<'k> = (&'k str, Value, Value, Option<(Value, Value)>);

struct Run<'a> {
    scenario: &'a DlqScenario,
    implementation: &'a mut dyn Implementation,
    reference: bool,
    naming: Naming,
    world: World,
    /// Whether a consumer instance exists; a crash or a restart step ends it.
    alive: bool,
    /// How many consumer instances have been made so far: the current one's number.
    generation: u32,
    /// For each message, the consumer instance that received it last and how many times that
    /// instance has received it: what a consumer counting from memory would believe.
    received_by: HashMap<String, (u32, u64)>,
    /// Explaining only: how the last delivery of each message ended, and its receive_count
    /// then, so that a later decision says what really happened before it.
    endings: HashMap<String, (u64, Ending)>,
    /// Messages a replay sent that have not been delivered since.
    replayed: HashSet<String>,
    /// Whether the current consumer instance has not delivered anything yet.
    first_call: bool,
    /// How many misuses of the world have been reported as a difference already.
    misuse_reported: usize,
    recorder: Recorder,
    /// Whether `facts` is kept: lint and explore read it, a plain run does not.
    keep_facts: bool,
    facts: Vec<StepFacts>,
    /// What each step did, for a diagnosis; `None` when not kept.
    marks: Option<Vec<StepMark>>,
    /// What the step at hand returned, kept when the step ends the run (marks only).
    stashed: Option<Value>,
    /// What the constructor raised when that ended the run (marks only).
    constructor_raised: Option<crate::model::implementation::Raised>,
    /// The last step to run (`RecordKeeping::until`).
    until: Option<usize>,
}

impl Run<'_> {
    /// What broke the broker under the world, if it did: the spec is then not run.
    fn world_fault(&self) -> Result<(), Stop> {
        match self.world.queue().fault() {
            Some(fault) => Err(Outcome::WorldFault(fault)),
            None => Ok(()),
        }
    }

    fn all_steps(&mut self) -> Result<(), Stop> {
        for message in &self.scenario.messages {
            self.world.send(&message.id, &message.body);
        }
        self.world_fault()?;
        // TimelineLine only: a run without a timeline does not copy every id to say it.
        if self.recorder.telling() {
            let ids: Vec<String> = self
                .scenario
                .messages
                .iter()
                .map(|m| m.id.clone())
                .collect();
            self.recorder.tell_event(
                format!(
                    "start: the queue holds {}; the clock reads 0; max_attempts {}",
                    listing::list(&ids),
                    match self.scenario.max_attempts {
                        Some(n) => n.to_string(),
                        None => format!(
                            "{DEFAULT_MAX_ATTEMPTS} (the default: the consumer is made without it)"
                        ),
                    }
                ),
                TimelineEvent::Start,
            );
        }
        for (index, (position, step)) in self.scenario.steps.iter().enumerate() {
            if self.until.is_some_and(|until| index > until) {
                return Ok(());
            }
            let label = StepLabel {
                number: index + 1,
                name: step.name(),
            };
            // The heading is only ever told: a run without a timeline does not build it.
            let heading = if self.recorder.telling() {
                format!("step {} (line {})", index + 1, position.line)
            } else {
                String::new()
            };
            let before = self.world.version();
            let from = self.world.journal().len();
            self.recorder.begin_step();
            let mut ran = self.step(&label, &heading, *position, step);
            if let Err(fault) = self.world_fault() {
                ran = Err(fault);
            }
            let world = &self.world;
            self.recorder
                .describe_step(&mut ran, || written(step, &world.journal()[from..]));
            let returned = match ran {
                Ok(returned) => returned,
                Err(stop) => {
                    let returned = self.stashed.take();
                    self.mark(index, step, from, returned);
                    return Err(stop);
                }
            };
            if !self.keep_facts {
                self.mark(index, step, from, returned);
                continue;
            }
            if self.marks.is_some() {
                self.mark(index, step, from, returned.clone());
            }
            self.facts.push(StepFacts {
                position: *position,
                name: step.name(),
                changed: self.world.version() != before,
                drained: self.world.is_drained(),
                returned,
                journal: from..self.world.journal().len(),
            });
        }
        if let Some((position, expect)) = &self.scenario.expect {
            self.recorder.begin_step();
            self.recorder.tell_event(
                format!("final expect (line {})", position.line),
                TimelineEvent::Step { kind: "expect" },
            );
            let expected = self.expect(&"final expect", *position, &[], expect);
            self.world_fault()?;
            expected?;
        }
        self.unfired_faults()
    }

    /// Keeps what step `index` did (from journal entry `from` on) and `returned`, when a
    /// diagnosis asks for marks.
    fn mark(&mut self, index: usize, step: &Step, from: usize, returned: Option<Value>) {
        let Some(marks) = &mut self.marks else {
            return;
        };
        let (decision, rules) = self.recorder.step();
        marks.push(StepMark {
            index,
            name: step.name(),
            journal: from..self.world.journal().len(),
            returned,
            decision,
            rules: rules.to_vec(),
            decisions: self.recorder.step_decisions().to_vec(),
        });
    }

    /// Keeps what the step at hand returned, when a diagnosis asks for marks and the step is
    /// about to end the run.
    fn stash(&mut self, returned: Value) {
        if self.marks.is_some() {
            self.stashed = Some(returned);
        }
    }

    /// A fault that never fired: on the reference the spec does not test what it says (a spec
    /// error); elsewhere the implementation never made the call the reference makes.
    fn unfired_faults(&mut self) -> Result<(), Stop> {
        let Some(fault) = self.world.armed().first().cloned() else {
            return Ok(());
        };
        let what = format!(
            "the crash armed here never fires: it waits for {} more `{}` call{} than the run makes",
            fault.remaining,
            fault.call,
            if fault.remaining == 1 { "" } else { "s" }
        );
        if self.reference {
            return Err(Outcome::SpecError(SpecError::at(
                &self.scenario.file,
                fault.armed_at,
                SpecErrorKind::Invalid,
                format!(
                    "{what}, so the spec does not test the crash it describes: arm it where the run makes that call, or remove it"
                ),
            )));
        }
        let checkpoint = Checkpoint {
            position: fault.armed_at,
            label: "fault".to_owned(),
            expected: json!({ "fired": true }),
            actual: json!({ "fired": false }),
            written: Vec::new(),
        };
        let note = format!(
            "{what}: the built-in implementation makes that call, this implementation did not"
        );
        self.recorder
            .compare("end of the run", checkpoint, Some(note))
    }

    /// Runs one step; returns what the implementation returned, for steps that call it.
    fn step(
        &mut self,
        label: &dyn fmt::Display,
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
                if let Err(stop) =
                    self.processed(label, heading, position, *expected, from, &actual)
                {
                    self.stash(actual);
                    return Err(stop);
                }
                return Ok(Some(actual));
            }
            Step::Replay(replay) => return self.replay(label, heading, position, replay).map(Some),
            Step::Recover => {
                // TimelineLine only: a run without a timeline does not copy what is in flight.
                if self.recorder.telling() {
                    let moved = self.world.in_flight();
                    self.recorder.tell_event(
                        format!(
                            "{heading}: recover: the visibility timeout runs out; {} back to the ready tail",
                            listing::list(&moved)
                        ),
                        TimelineEvent::Step { kind: "recover" },
                    );
                }
                self.world.recover();
            }
            Step::Restart => {
                self.recorder.tell_event(
                    format!(
                        "{heading}: restart: a fresh consumer instance takes over, remembering nothing"
                    ),
                    TimelineEvent::Step { kind: "restart" },
                );
                self.alive = false;
            }
            Step::Advance(by) => {
                let was = self.world.now();
                self.world.advance(*by);
                if self.recorder.telling() {
                    self.recorder.tell_event(
                        format!(
                            "{heading}: advance: the clock moves by {by}, from {was} to {}",
                            self.world.now()
                        ),
                        TimelineEvent::Step { kind: "advance" },
                    );
                }
            }
            Step::Send(message) => {
                self.recorder.tell_event(
                    format!("{heading}: send: {} joins the ready tail", message.id),
                    TimelineEvent::Step { kind: "send" },
                );
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
                self.recorder.tell_event(
                    format!(
                        "{heading}: fault: a crash is armed {when} {which} of {}",
                        fault.call.value.as_str()
                    ),
                    TimelineEvent::Step { kind: "fault" },
                );
                self.world.arm(Fault {
                    timing: fault.crash,
                    call: fault.call.value.as_str().to_owned(),
                    remaining: nth,
                    armed_at: position,
                });
            }
            Step::Expect(expect) => {
                self.recorder.tell_event(
                    format!("{heading}: expect"),
                    TimelineEvent::Step { kind: "expect" },
                );
                self.expect(label, position, &["expect"], expect)?;
            }
            // `compact::flatten` writes every `repeat` out on loading, and a scenario is only
            // made by loading: a `repeat` here is a bug of dlqspec, not of a spec.
            Step::Repeat(_) => unreachable!("a loaded scenario holds no `repeat` step"),
        }
        Ok(None)
    }

    /// What follows a `process_one` call that returned `actual` (as a spec writes it): the
    /// timeline, the decision, the checks after the call and of the step's expectation.
    fn processed(
        &mut self,
        label: &dyn fmt::Display,
        heading: &str,
        position: Position,
        expected: super::spec::ProcessReturn,
        from: usize,
        actual: &Value,
    ) -> Result<(), Stop> {
        if self.recorder.telling() {
            self.recorder.tell_event(
                format!("{heading}: process_one() returned {}", cut_flow(actual)),
                TimelineEvent::Step { kind: "process" },
            );
        }
        self.narrate(from);
        self.decide(from);
        self.after_call(label, position)?;
        let Some(expected) = expected.expected() else {
            return Ok(());
        };
        // A checking run keeps no checkpoint that matches (see `Recorder`): at every
        // `process` step of a big scenario, building one would be waste.
        if actual.as_str() == Some(expected) && !self.recorder.keeps_matches() {
            return Ok(());
        }
        let written = vec![WrittenValue::new(
            position,
            &["process"],
            json!(expected),
            actual.clone(),
        )];
        let note = (expected == "none" && *actual == json!("undefined"))
            .then(|| UNDEFINED_IS_NOT_NULL.to_owned());
        let checkpoint = Checkpoint {
            position,
            label: "process".to_owned(),
            expected: json!(expected),
            actual: actual.clone(),
            written,
        };
        self.recorder.compare(label, checkpoint, note)
    }

    fn replay(
        &mut self,
        label: &dyn fmt::Display,
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
        match self.replayed(label, heading, position, replay, &call, from, &actual) {
            Ok(()) => Ok(actual),
            Err(stop) => {
                self.stash(actual);
                Err(stop)
            }
        }
    }

    /// What follows a `replay` call that returned `actual`, as `processed` for `process_one`.
    #[allow(clippy::too_many_arguments)]
    fn replayed(
        &mut self,
        label: &dyn fmt::Display,
        heading: &str,
        position: Position,
        replay: &ReplayStep,
        call: &str,
        from: usize,
        actual: &Value,
    ) -> Result<(), Stop> {
        self.recorder.tell_event(
            format!("{heading}: {call} returned {}", cut_flow(actual)),
            TimelineEvent::Step { kind: "replay" },
        );
        self.narrate(from);
        self.decide_replay(from, replay.ids.as_deref());
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
            let written = vec![WrittenValue::new(at, &[], expected.clone(), actual.clone())];
            let checkpoint = Checkpoint {
                position: at,
                label: "replay".to_owned(),
                expected,
                actual: actual.clone(),
                written,
            };
            self.recorder.compare(label, checkpoint, None)?;
        }
        Ok(())
    }

    /// Calls the implementation; when it breaks, what the world saw so far is still told.
    fn call(
        &mut self,
        heading: &str,
        method: &str,
        args: &[Value],
        from: usize,
    ) -> Result<Reply, Stop> {
        if self.implementation.foresees() {
            let foreseen = super::foresight::foresee(&self.world, method);
            self.implementation.foresee(foreseen);
        }
        let reply = self.implementation.call(method, args, &mut self.world);
        if let Err(error) = &reply {
            self.recorder.tell_event(
                format!("{heading}: {method} broke: {error}"),
                TimelineEvent::Step { kind: "broke" },
            );
            self.narrate(from);
        }
        reply.map_err(Outcome::Errored)
    }

    /// Makes a consumer instance if none is alive (at the start, after a crash or a restart).
    fn ensure_consumer(&mut self) -> Result<(), Stop> {
        if self.alive {
            return Ok(());
        }
        // Without `max_attempts` in the spec the consumer is made without it, so the
        // implementation's own default is what the spec checks.
        let args = super::consumer::new_args(self.scenario.max_attempts);
        let reply = self
            .implementation
            .create(super::NAME, &args, &mut self.world)
            .map_err(Outcome::Errored)?;
        match reply {
            // The constructor's value is no answer: `undefined` is as good as `null`.
            Reply::Returned(_) | Reply::Undefined => {
                self.alive = true;
                self.generation += 1;
                self.first_call = true;
                Ok(())
            }
            Reply::Skipped(reason) => Err(Outcome::Skipped(reason)),
            Reply::Raised(raised) => {
                if self.marks.is_some() {
                    self.constructor_raised = Some(raised.clone());
                }
                Err(Outcome::Mismatch(Mismatch {
                    step: "constructing DLQConsumer".into(),
                    position: Position::START,
                    expected: "constructed: true\n".into(),
                    actual: crate::text::truncate::text(
                        format!("raised: {}\n", cut_flow(&json!(raised.describe()))),
                        crate::text::truncate::MAX_SIDE_BYTES,
                    )
                    .into(),
                    note: Some("the constructor raised".into()),
                    step_as_written: None,
                    rule: None,
                }))
            }
        }
    }

    /// What a call returned, as a spec writes it: a value, `none`, `crash`, or `raised ...`.
    fn returned(&mut self, reply: Reply) -> Result<Value, Stop> {
        Ok(match reply {
            Reply::Returned(Value::Null) => json!("none"),
            // The words a spec uses for what is not a string must not be matched by a string
            // of that spelling: returning "none" is not returning None.
            Reply::Returned(Value::String(text))
                if text == "none"
                    || text == "crash"
                    || text == "undefined"
                    || text.starts_with("raised ") =>
            {
                json!(format!("the string {text:?}"))
            }
            Reply::Returned(value) => value,
            // JavaScript's `undefined` is not `null`, which the contract pins: shown as itself.
            Reply::Undefined => json!("undefined"),
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
    fn after_call(&mut self, label: &dyn fmt::Display, position: Position) -> Result<(), Stop> {
        if let Some(unscripted) = self.world.take_unscripted() {
            let scripted = self
                .scenario
                .script
                .get(&unscripted.id)
                .map_or(0, |o| o.len());
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
        if self.world.misuse_count() > self.misuse_reported {
            self.misuse_reported = self.world.misuse_count();
            let misuse = self.world.misuse();
            let note = "the consumer misused the queue, the DLQ or the handler".to_owned();
            let checkpoint = Checkpoint {
                position,
                label: "misuse".to_owned(),
                expected: json!({ "misuse": [] }),
                actual: json!({ "misuse": misuse }),
                written: Vec::new(),
            };
            let broken = Some(&rules::NO_MISUSE);
            self.recorder
                .compare_breaking(broken, label, checkpoint, Some(note))?;
        }
        Ok(())
    }
}

/// A call step as a spec writes it, on one line, with the deliveries its call received
/// (`process: dead (it received p, delivery 3)`): which message a step met is decided by the
/// run, not written in the spec, and is what a student needs to follow a difference. `None`
/// for the steps that call nothing, where no difference is found but in an `expect`, whose
/// diff is the whole step.
fn written(step: &Step, happened: &[WorldEvent]) -> Option<String> {
    let mut text = match step {
        Step::Process(expected) => format!("process: {}", expected.expected().unwrap_or("any")),
        Step::Replay(replay) => {
            let mut fields = Map::new();
            if let Some(ids) = &replay.ids {
                fields.insert("ids".into(), json!(ids));
            }
            if let Some(returns) = &replay.returns {
                fields.insert("returns".into(), json!(returns.value));
            }
            if replay.crash {
                fields.insert("crash".into(), json!(true));
            }
            format!("replay: {}", yaml::flow(&Value::Object(fields)))
        }
        _ => return None,
    };
    let received: Vec<String> = happened
        .iter()
        .filter_map(|happening| match happening {
            WorldEvent::Received {
                id, receive_count, ..
            } => Some(format!(
                "{}, delivery {receive_count}",
                yaml::flow(&json!(id))
            )),
            WorldEvent::NothingReady => Some("nothing: no message was ready".to_owned()),
            _ => None,
        })
        .collect();
    if !received.is_empty() {
        text.push_str(&format!(" (it received {})", received.join("; then ")));
    }
    Some(text)
}

/// A value the implementation gave, as a timeline line shows it: cut before it is rendered
/// (`truncate::value`), as a reply may be as long as a protocol line.
pub(super) fn cut_flow(value: &Value) -> String {
    yaml::flow(&crate::text::truncate::value(value))
}

#[cfg(test)]
mod tests {
    use super::expectations::same_entry;
    use super::*;
    use crate::contracts::contract::Scenario;
    use crate::model::implementation::{ImplError, ImplInfo, WorldHost};

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
    fn a_fault_that_never_fires_is_a_spec_error_on_the_reference_and_a_difference_elsewhere() {
        let text = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps:\n  - fault: {crash: after, call: dlq.put}\n  - process: ok\n";
        let scenario =
            crate::contracts::dlq_consumer::loading::load(&SourceFile::from_text("t.yaml", text))
                .unwrap();
        let run = scenario.run(
            &mut crate::contracts::builtin::Builtin::new(),
            RunMode::Check,
        );
        let Outcome::SpecError(error) = run.outcome else {
            panic!("not a spec error: {:?}", run.outcome);
        };
        assert_eq!(error.position, Position::new(6, 5));
        assert!(
            error
                .message
                .starts_with("the crash armed here never fires: it waits for 1 more `dlq.put` call than the run makes"),
            "{}",
            error.message
        );
        let run = scenario.run(&mut DoubleAcker, RunMode::Check);
        assert!(
            matches!(run.outcome, Outcome::Mismatch(_)),
            "{:?}",
            run.outcome
        );
    }

    #[test]
    fn a_misuse_is_recorded_once_not_again_at_every_later_step() {
        let text = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nsteps:\n  - process: ok\n  - process: none\n  - process: none\n";
        let scenario =
            crate::contracts::dlq_consumer::loading::load(&SourceFile::from_text("t.yaml", text))
                .unwrap();
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
    fn a_checking_run_judges_every_kind_of_expectation_as_a_recording_run_does() {
        let entry = "{id: a, body: x, reason: permanent, error: 'PermanentError: p', attempts: 1, first_attempt_at: 0, failed_at: 0}";
        let cases = [
            (format!("{{dlq: [{entry}]}}"), true),
            (
                format!("{{dlq: [{}]}}", entry.replace("attempts: 1", "attempts: 2")),
                false,
            ),
            (format!("{{dlq: [{entry}, {entry}]}}"), false),
            ("{dlq: []}".to_owned(), false),
            (
                format!("{{dlq: [{}]}}", entry.replace("{id: a", "{count: 1, id: a")),
                true,
            ),
            (
                "{counts: {dlq: 1, pending: 0, in_flight: 0, handler_calls: 2}}".to_owned(),
                true,
            ),
            ("{counts: {handler_calls: 3}}".to_owned(), false),
            ("{counts: {pending: 1}}".to_owned(), false),
            ("{dlq_reasons: {permanent: 1}}".to_owned(), true),
            ("{dlq_reasons: {permanent: 1, poison: 0}}".to_owned(), true),
            ("{dlq_reasons: {exhausted: 1}}".to_owned(), false),
            ("{dlq_reasons: {}}".to_owned(), false),
            ("{clock: 0}".to_owned(), true),
            ("{clock: 1}".to_owned(), false),
            ("{pending: [], in_flight: []}".to_owned(), true),
            ("{handler_calls: {a: 1, b: 1}, clock: 0}".to_owned(), true),
            ("{handler_calls: {a: 1}, clock: 0}".to_owned(), false),
        ];
        for (expectation, holds) in cases {
            let text = format!(
                "contract: dlq-consumer\nname: t\nmessages: [{{id: a, body: x}}, {{id: b, body: y}}]\nhandler: {{a: [permanent: p], b: [ok]}}\nsteps:\n  - process: dead\n  - process: ok\n  - expect: {expectation}\n"
            );
            let file = SourceFile::from_text("t.yaml", text);
            let scenario =
                crate::contracts::dlq_consumer::loading::load(&file).expect("the spec loads");
            let checked = scenario.run(
                &mut crate::contracts::builtin::Builtin::new(),
                RunMode::Check,
            );
            let recorded = scenario.run(
                &mut crate::contracts::builtin::Builtin::new(),
                RunMode::Record,
            );
            assert_eq!(
                format!("{:?}", checked.outcome),
                format!("{:?}", recorded.outcome),
                "{expectation}"
            );
            assert_eq!(
                matches!(checked.outcome, Outcome::Passed),
                holds,
                "{expectation}: {:?}",
                checked.outcome
            );
        }
    }

    #[test]
    fn an_entry_is_judged_the_same_without_building_its_normal_forms() {
        let written = json!({"id": "a", "body": "x", "reason": "poison", "error": null,
            "attempts": 3, "first_attempt_at": 0, "failed_at": 5});
        let camel = json!({"failedAt": 5, "id": "a", "body": "x", "reason": "poison",
            "error": null, "attempts": 3, "firstAttemptAt": 0});
        let mut extra = written.clone();
        extra["note"] = json!("more");
        let mut short = written.clone();
        short.as_object_mut().unwrap().shift_remove("failed_at");
        let mut other = written.clone();
        other["attempts"] = json!(3.0);
        for put in [
            &written,
            &camel,
            &extra,
            &short,
            &other,
            &json!("a"),
            &json!(null),
        ] {
            for naming in [Naming::Snake, Naming::Camel] {
                assert_eq!(
                    same_entry(&written, put, naming),
                    entry_in(&written, naming) == normalize_entry(put, naming),
                    "{put} {naming:?}"
                );
            }
        }
        assert!(same_entry(&written, &camel, Naming::Camel));
        assert!(!same_entry(&written, &camel, Naming::Snake));
    }
}
