//! Runs a dlq-consumer spec: drives an implementation step by step against a fresh world.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::consumer::DEFAULT_MAX_ATTEMPTS;
use super::handler::GivenError;
use super::journal::{WorldEvent, ordinal};
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
use crate::text::listing;
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

    /// Adds what the world saw since journal entry `from` to the timeline.
    fn narrate(&mut self, from: usize) {
        if !self.recorder.telling() {
            return;
        }
        let told: Vec<_> = self.world.journal()[from..]
            .iter()
            .map(WorldEvent::timeline_line)
            .collect();
        self.recorder.tell_all(told);
    }

    /// `why` is only written out when the run keeps a timeline: a plain run reaches a rule at
    /// every step and would otherwise build a sentence per step that nobody reads.
    fn rule_line(&mut self, rule: &Rule, why: impl std::fmt::Display) {
        self.recorder.exercise(rule, why);
    }

    /// A rule line for the rule that decides the step: a difference in it breaks `rule`.
    fn decision_line(&mut self, rule: &'static Rule, why: impl std::fmt::Display) {
        self.recorder.decided(rule);
        self.recorder.exercise(rule, why);
    }

    /// Names the rules that decide what `replay` must do with what it was asked, and what it
    /// skipped; the same for every implementation, right or wrong.
    fn decide_replay(&mut self, from: usize, ids: Option<&[String]>) {
        let happened = &self.world.journal()[from..];
        let sent: Vec<String> = happened
            .iter()
            .filter_map(|h| match h {
                WorldEvent::Sent { id } => Some(id.clone()),
                _ => None,
            })
            .collect();
        let crashed = happened.iter().find_map(|h| match h {
            WorldEvent::Crashed { call, .. } => Some(call.clone()),
            _ => None,
        });
        let selection = match ids {
            None => "every entry is replayed, in put order".to_owned(),
            Some([]) => "an empty list replays nothing".to_owned(),
            Some(ids) => {
                let mut seen = HashSet::new();
                let skipped: Vec<String> = ids
                    .iter()
                    .filter(|id| !seen.insert(id.as_str()) || !sent.contains(id))
                    .cloned()
                    .collect();
                if crashed.is_none() {
                    self.tell_skipped(ids, &sent, from);
                }
                if skipped.is_empty() || crashed.is_some() {
                    "the given ids that are in the DLQ are replayed, in the order given".to_owned()
                } else {
                    format!(
                        "the given ids that are in the DLQ are replayed, in the order given, each once; skipped: {}",
                        listing::list(&skipped)
                    )
                }
            }
        };
        self.decision_line(&rules::REPLAY_SELECTION, &selection);
        if !sent.is_empty() {
            self.rule_line(
                &rules::REPLAY_SEND_BEFORE_REMOVE,
                "each replayed id is sent to the queue before it leaves the DLQ",
            );
        }
        // The consumer's own count of deliveries is left alone: one that counts from memory
        // carries it across the replay, which is what the queue's fresh count shows wrong.
        self.replayed.extend(sent);
        if let Some(call) = crashed {
            self.decision_line(
                &rules::CRASH_PROPAGATES,
                format_args!("the crash injected at {call} propagates out of replay"),
            );
        }
    }

    /// Tells what a replay that ran to its end skipped of the ids it was given: those the DLQ
    /// did not hold when it was called, and repeats of an id already replayed.
    fn tell_skipped(&mut self, ids: &[String], sent: &[String], from: usize) {
        if !self.recorder.telling() {
            return;
        }
        // The DLQ before the call: what it holds now, and what the call removed from it.
        let mut held: HashSet<String> = self.world.dlq_ids().into_iter().collect();
        held.extend(self.world.journal()[from..].iter().filter_map(|h| match h {
            WorldEvent::Removed {
                id, removed: true, ..
            } => Some(id.clone()),
            _ => None,
        }));
        let mut seen = HashSet::new();
        let (mut unknown, mut repeated) = (Vec::new(), Vec::new());
        for id in ids {
            if !seen.insert(id.as_str()) {
                if sent.contains(id) && !repeated.contains(id) {
                    repeated.push(id.clone());
                }
            } else if !held.contains(id) && !unknown.contains(id) {
                unknown.push(id.clone());
            }
        }
        if !unknown.is_empty() {
            self.recorder.tell(format!(
                "    replay skips {}: not in the DLQ",
                listing::list(&unknown)
            ));
        }
        if !repeated.is_empty() {
            self.recorder.tell(format!(
                "    replay skips the repeats of {}: each id is replayed once",
                listing::list(&repeated)
            ));
        }
    }

    /// Names the rules that decide what `process_one` must do in the situation the world saw
    /// since journal entry `from`: the same for every implementation, right or wrong.
    fn decide(&mut self, from: usize) {
        // Read in place, not copied: every fact needed later is taken out before a rule is
        // noted, so the journal need not outlive the borrow.
        let happened = &self.world.journal()[from..];
        let max = self.scenario.budget();
        let crashed = happened.iter().find_map(|h| match h {
            WorldEvent::Crashed { call, .. } => Some(call.clone()),
            _ => None,
        });
        let received = happened.iter().find_map(|h| match h {
            WorldEvent::Received {
                id,
                receive_count,
                already_dead,
                ..
            } => Some((id.clone(), *receive_count, *already_dead)),
            _ => None,
        });
        let handled = happened.iter().find_map(|h| match h {
            WorldEvent::Handled { outcome, .. } => Some(outcome.clone()),
            _ => None,
        });
        // A handler call that took time: how long, and the clock when it returned.
        let took = happened.iter().find_map(|h| match h {
            WorldEvent::Took { takes, now, .. } => Some((*takes, *now)),
            _ => None,
        });
        let effect = |wanted: fn(&WorldEvent) -> bool| happened.iter().any(wanted);
        let put_or_retried = effect(|h| matches!(h, WorldEvent::Put { .. }))
            || effect(|h| matches!(h, WorldEvent::Retried { .. }));
        let acked = effect(|h| matches!(h, WorldEvent::Acked { .. }));
        // Explaining only: what the implementation did with the message it received, to be
        // set against what the deciding rule expects.
        let did = match &received {
            Some((id, ..)) if self.recorder.telling() => {
                Some(Did::of(happened, id, &handled, self.world.now()))
            }
            _ => None,
        };
        let Some((id, count, already_dead)) = received else {
            if happened.contains(&WorldEvent::NothingReady) {
                self.decision_line(&rules::EMPTY_QUEUE, "nothing is ready: return none");
            }
            return self.crash_line(crashed.as_deref());
        };
        // A consumer counting deliveries itself would decide differently from one reading
        // receive_count only when the two counts differ and the budget matters.
        let budget_matters = count > max
            || matches!(&handled, Some(o) if !matches!(o, ScriptedOutcome::Ok | ScriptedOutcome::Crash));
        self.delivered(&id, count, budget_matters);
        let stopped = match &crashed {
            Some(call) => format!(" (the crash injected at {call} cuts it short)"),
            None => String::new(),
        };
        // A crash before a decision's first effect leaves the decision untold: it never
        // happened, and the crash line says what the crash prevented.
        let prevented = crashed
            .is_some()
            .then(|| {
                if put_or_retried {
                    return None;
                }
                match &handled {
                    _ if already_dead => (!acked).then(|| format!("the ack of {id} never happens")),
                    _ if count > max => Some(format!("the dead-lettering of {id} never happens")),
                    Some(ScriptedOutcome::Ok) => {
                        (!acked).then(|| format!("the ack of {id} never happens"))
                    }
                    Some(ScriptedOutcome::Crash) | None => None,
                    Some(outcome) if outcome.is_permanent() => {
                        Some(format!("the dead-lettering of {id} never happens"))
                    }
                    Some(_) if count < max => Some(format!("the retry of {id} never happens")),
                    Some(_) => Some(format!("the dead-lettering of {id} never happens")),
                }
            })
            .flatten();
        if already_dead {
            self.rule_line(
                &rules::CHECK_ORDER,
                "the DLQ check comes right after the receive, before the poison check and the handler",
            );
            self.recorder.hush(prevented.is_some());
            self.decision_line(
                &rules::NO_DOUBLE_DEAD_LETTER,
                format_args!("{id} is already in the DLQ: ack it and return dead, with no second put and no handler call{stopped}"),
            );
            self.recorder.hush(false);
        } else if count > max {
            self.rule_line(
                &rules::CHECK_ORDER,
                "the poison check comes after the DLQ check and before the handler",
            );
            // What brought it back past its budget, as this run shows it: a correct consumer
            // gets here only when the delivery at max_attempts died mid-handler.
            let before = match self.endings.get(&id) {
                _ if !self.recorder.telling() => String::new(),
                Some((n, Ending::Crashed)) => {
                    format!(" (its delivery at receive_count {n} died mid-handler)")
                }
                Some((n, Ending::Retried)) => {
                    format!(" (this implementation retried it at receive_count {n})")
                }
                Some((n, Ending::LeftInFlight)) => {
                    format!(" (this implementation left it in flight at receive_count {n})")
                }
                Some((n, _)) => format!(" (it came back after its delivery at receive_count {n})"),
                None => String::new(),
            };
            self.recorder.hush(prevented.is_some());
            self.decision_line(
                &rules::POISON,
                format_args!("receive_count {count} > max_attempts {max}: {id} is past its budget{before}, so it is dead-lettered as poison without calling the handler{stopped}"),
            );
            self.dead_letter_lines(&id, None);
            self.recorder.hush(false);
        } else {
            if count == max {
                // The edge of the poison rule: one more crash and the next delivery is poison.
                self.rule_line(
                    &rules::POISON,
                    format_args!("receive_count {count} = max_attempts {max}: not poison yet, the handler decides"),
                );
            }
            if let Some(outcome) = &handled {
                self.recorder.hush(prevented.is_some());
                self.handled_lines(&id, count, max, outcome, took, &stopped);
                self.recorder.hush(false);
            }
        }
        let injected = crashed.is_some();
        match (prevented, crashed) {
            (Some(what), Some(call)) => {
                // An ack before the crash took the message out of flight: never say it stayed.
                let left = if self.world.in_flight().contains(&id) {
                    format!("{id} stays in flight")
                } else {
                    format!("{id}, acked already, is no longer in flight")
                };
                self.decision_line(
                    &rules::CRASH_PROPAGATES,
                    format_args!("the crash injected at {call} propagates out of process_one: {what}, and {left}"),
                );
            }
            (_, crashed) => self.crash_line(crashed.as_deref()),
        }
        if let Some(did) = did {
            if !self.reference {
                let expected = if already_dead {
                    Some((Ending::Acked, &rules::NO_DOUBLE_DEAD_LETTER))
                } else if count > max {
                    Some((Ending::DeadLettered, &rules::POISON))
                } else {
                    expected_ending(&handled, count, max)
                };
                if let Some((ending, rule)) = expected {
                    let entry = (ending == Ending::DeadLettered)
                        .then(|| self.expected_entry(&id, count, rule, &handled, &did));
                    let wanted = Wanted { ending, entry };
                    if injected {
                        self.mark_cut_short(&id, rule, &did, &wanted);
                    } else {
                        self.mark_decision(&id, rule, &did, &wanted);
                    }
                }
            }
            self.endings.insert(id, (count, did.ending));
        }
    }

    /// The DLQ entry the contract pins for dead-lettering `id` under `rule` (poison, permanent
    /// or exhausted), its keys as the implementation's language spells them. The body is the
    /// one the message was received with, `failed_at` the clock when the implementation put
    /// its entry (or now, when it put none).
    fn expected_entry(
        &self,
        id: &str,
        count: u64,
        rule: &Rule,
        handled: &Option<ScriptedOutcome>,
        did: &Did,
    ) -> Map<String, Value> {
        let (reason, error, attempts) = if rule.id == rules::POISON.id {
            ("poison", Value::Null, count.saturating_sub(1))
        } else {
            let error = handled.as_ref().and_then(ScriptedOutcome::entry_error);
            let reason = if rule.id == rules::PERMANENT.id {
                "permanent"
            } else {
                "exhausted"
            };
            (reason, json!(error), count)
        };
        let mut entry = Map::new();
        let mut field = |key: &str, value: Value| {
            entry.insert(self.naming.key(key).into_owned(), value);
        };
        field("id", json!(id));
        // Known in a detailed world, which is the only one explaining; an entry whose body is
        // not known is not judged by it.
        if let Some(body) = self.world.received_body(id) {
            field("body", json!(body));
        }
        field("reason", json!(reason));
        field("error", error);
        field("attempts", json!(attempts));
        field("first_attempt_at", json!(did.first_received_at));
        field("failed_at", json!(did.clock_at_put));
        entry
    }

    /// Marks a decision an injected crash cut short: nothing, when what the implementation
    /// did (and the call the crash stopped) is the start of what `rule` expects; `✗` when it
    /// is not, such as an ack before any put, which loses the message if the process dies
    /// between the two (`dead-letter-sequence`).
    fn mark_cut_short(&mut self, id: &str, rule: &'static Rule, did: &Did, wanted: &Wanted) {
        let Some((call, timing, about)) = &did.crash else {
            return;
        };
        let stopped = (*timing == CrashTiming::Before
            && about.as_deref() == Some(id)
            && EFFECT_CALLS.contains(&call.as_str()))
        .then_some(call.as_str());
        let mut attempted: Vec<&str> = did.calls.clone();
        attempted.extend(stopped);
        let expected_calls: &[&str] = match wanted.ending {
            Ending::Acked => &["queue.ack"],
            Ending::Retried => &["queue.retry"],
            Ending::DeadLettered => &["dlq.put", "queue.ack"],
            _ => &[],
        };
        let entry_wrong = !wanted.entry_differences(did).is_empty();
        if expected_calls.starts_with(&attempted) && !entry_wrong {
            return;
        }
        let ack_first =
            wanted.ending == Ending::DeadLettered && attempted.first() == Some(&"queue.ack");
        let rule = if ack_first {
            &rules::DEAD_LETTER_SEQUENCE
        } else {
            rule
        };
        let mut done = did.shown(wanted);
        if let Some(call) = stopped {
            done.push(format!("{call}({id})"));
        }
        let mut text = done.join(", ");
        match stopped {
            Some(call) => text.push_str(&format!(
                ", and the crash injected before {call} stopped that call"
            )),
            None => text.push_str(&format!(
                ", then the crash injected {} {call} killed the process",
                timing.word()
            )),
        }
        if ack_first {
            let put = did.calls.contains(&"dlq.put");
            if did.calls.contains(&"queue.ack") && !put {
                text.push_str(&format!(": {id} is acked and never put, so it is lost"));
            } else {
                let any = if put { "" } else { "any " };
                text.push_str(&format!(
                    ": queue.ack({id}) came before {any}dlq.put({id}), which loses {id} if the process dies between the two"
                ));
            }
        }
        let expected = wanted.expected(id, did);
        self.recorder.tell_event(
            format!(
                "    \u{2717} decision {}: the implementation called {text}; expected: {expected}",
                rule.id
            ),
            TimelineEvent::Decision {
                did: format!("called {text}"),
                expected: Some(expected),
            },
        );
    }

    /// Tells what the implementation did at a decision: `✓` when it is what `rule` expects
    /// (`wanted`, the entry too when it dead-letters), `✗` with what was expected when it is
    /// not.
    fn mark_decision(&mut self, id: &str, rule: &'static Rule, did: &Did, wanted: &Wanted) {
        let done = did.told(wanted);
        // A put with no ack after it, or an ack before it, is the dead-lettering out of order.
        let put = did.calls.contains(&"dlq.put");
        let out_of_order = wanted.ending == Ending::DeadLettered
            && put
            && (did.calls.first() == Some(&"queue.ack") || !did.calls.contains(&"queue.ack"));
        let rule = match out_of_order {
            true => &rules::DEAD_LETTER_SEQUENCE,
            false => rule,
        };
        if did.ending == wanted.ending && !out_of_order && wanted.entry_differences(did).is_empty()
        {
            self.recorder.tell_event(
                format!(
                    "    \u{2713} decision {}: the implementation did {done}",
                    rule.id
                ),
                TimelineEvent::Decision {
                    did: done,
                    expected: None,
                },
            );
        } else {
            let expected = wanted.expected(id, did);
            self.recorder.tell_event(
                format!(
                    "    \u{2717} decision {}: the implementation did {done}; expected: {expected}",
                    rule.id
                ),
                TimelineEvent::Decision {
                    did: done,
                    expected: Some(expected),
                },
            );
        }
    }

    /// The rules behind what follows a handler call that returned or raised `outcome`.
    fn handled_lines(
        &mut self,
        id: &str,
        count: u64,
        max: u64,
        outcome: &ScriptedOutcome,
        took: Option<(u64, u64)>,
        stopped: &str,
    ) {
        match outcome {
            ScriptedOutcome::Ok => self.decision_line(
                &rules::SUCCESS,
                format_args!("the handler succeeded: ack {id} and return ok{stopped}"),
            ),
            ScriptedOutcome::Crash => self.decision_line(
                &rules::CRASH_PROPAGATES,
                format_args!("the crash propagates out of process_one and {id} stays in flight"),
            ),
            permanent if permanent.is_permanent() => {
                if let ScriptedOutcome::Permanent(GivenError {
                    subclass: Some(class),
                    ..
                }) = permanent
                {
                    self.rule_line(
                        &rules::PERMANENT,
                        format_args!("{class} is a subclass of PermanentError, so it is permanent, and the entry's error names {class}"),
                    );
                }
                self.decision_line(
                    &rules::PERMANENT,
                    format_args!("a PermanentError dead-letters {id} at once, reason permanent, whatever budget is left{stopped}"),
                );
                if count >= max {
                    self.rule_line(
                        &rules::EXHAUSTED,
                        format_args!("receive_count {count} = max_attempts {max}, but the error is permanent: the reason is permanent, not exhausted"),
                    );
                }
                self.dead_letter_lines(id, took);
            }
            transient => {
                match transient {
                    ScriptedOutcome::Transient(GivenError {
                        subclass: Some(class),
                        ..
                    }) => self.rule_line(
                        &rules::TRANSIENT_RETRY,
                        format_args!("{class} is a subclass of TransientError, so it is transient"),
                    ),
                    ScriptedOutcome::Transient(_) => {}
                    _ => {
                        let why = format!(
                            "{} is not a PermanentError, so it counts as transient",
                            transient.label()
                        );
                        self.rule_line(&rules::UNEXPECTED_ERROR, &why);
                    }
                }
                if count < max {
                    self.decision_line(
                        &rules::TRANSIENT_RETRY,
                        format_args!("receive_count {count} < max_attempts {max}: retry {id} to the ready tail{stopped}"),
                    );
                    if count + 1 == max {
                        self.rule_line(
                            &rules::EXHAUSTED,
                            format_args!("one attempt is left: not exhausted until receive_count reaches {max}"),
                        );
                    }
                } else {
                    self.decision_line(
                        &rules::EXHAUSTED,
                        format_args!("receive_count {count} = max_attempts {max}: the budget is spent, dead-letter {id} with reason exhausted{stopped}"),
                    );
                    self.dead_letter_lines(id, took);
                }
            }
        }
    }

    /// The rules of a dead-lettering; `took`, a handler call that took time, and the clock
    /// when it returned, which is what `failed_at` reads.
    fn dead_letter_lines(&mut self, id: &str, took: Option<(u64, u64)>) {
        self.rule_line(
            &rules::DEAD_LETTER_SEQUENCE,
            format_args!("dead-lettering is dlq.put, then queue.ack({id}), then return dead"),
        );
        self.rule_line(
            &rules::ENTRY_FIELDS,
            "the entry holds id, body, reason, error \"Class: message\", attempts, first_attempt_at and failed_at",
        );
        if let Some((takes, now)) = took {
            self.rule_line(
                &rules::ENTRY_FIELDS,
                format_args!("the handler's call took {takes}: failed_at is the time of dead-lettering, after the call: the clock reads {now} when it returns"),
            );
        }
    }

    fn crash_line(&mut self, crashed: Option<&str>) {
        if let Some(call) = crashed {
            self.decision_line(
                &rules::CRASH_PROPAGATES,
                format_args!("the crash injected at {call} propagates out of process_one"),
            );
        }
    }

    /// Notes who received `id`, and the rules that only a consumer instance new to the message
    /// can get wrong: counting from memory, a replayed message's fresh start, and acting only
    /// on what it received itself.
    fn delivered(&mut self, id: &str, count: u64, budget_matters: bool) {
        let generation = self.generation;
        // Updated in place when known: a new key would cost a copy of the id at every delivery.
        let own = match self.received_by.get_mut(id) {
            Some(seen) => {
                let own = if seen.0 == generation { seen.1 + 1 } else { 1 };
                *seen = (generation, own);
                own
            }
            None => {
                self.received_by.insert(id.to_owned(), (generation, 1));
                1
            }
        };
        if budget_matters && own != count {
            // Over the budget the poison rule decides; within it, the count that differs does.
            if count <= self.scenario.budget() {
                self.recorder.decided_firmly(&rules::COUNT_FROM_QUEUE);
            }
            self.rule_line(
                &rules::COUNT_FROM_QUEUE,
                format_args!("this consumer has received {id} {own} time{} itself; the budget goes by the queue's receive_count {count}", if own == 1 { "" } else { "s" }),
            );
        }
        // Most runs replay nothing: an empty set is not worth hashing the id for.
        if !self.replayed.is_empty() && self.replayed.remove(id) {
            self.recorder.decided_firmly(&rules::REPLAY_FRESH_DELIVERY);
            self.rule_line(
                &rules::REPLAY_FRESH_DELIVERY,
                format_args!("{id} was replayed: its receive_count starts again at {count}"),
            );
        }
        // CaseVerdict once per instance, at its first delivery: is anything an earlier consumer
        // received still around for this one to wrongly ack or retry?
        // Each instance after a crash would scan the whole queue here: a scenario of many
        // crashes over a big queue would grow quadratically, so the scan runs only while it can
        // still tell something.
        let first_call = std::mem::take(&mut self.first_call);
        if first_call && generation > 1 && self.recorder.wants(&rules::NO_MISUSE) {
            let received_by = &self.received_by;
            let mut left: Vec<&str> = self
                .world
                .queued_ids()
                .filter(|id| received_by.get(*id).is_some_and(|(g, _)| *g < generation))
                .collect();
            if left.is_empty() {
                return;
            }
            // Which ones is only told: a run without a timeline notes the rule, and neither
            // sorts nor copies the ids of what may be most of the queue.
            let told = if self.recorder.telling() {
                left.sort_unstable();
                left.dedup();
                let left: Vec<String> = left.into_iter().map(str::to_owned).collect();
                listing::list(&left)
            } else {
                String::new()
            };
            self.rule_line(
                &rules::NO_MISUSE,
                format_args!("{told} came from an earlier consumer; this one acks or retries only what it received"),
            );
        }
    }

    /// Makes a consumer instance if none is alive (at the start, after a crash or a restart).
    fn ensure_consumer(&mut self) -> Result<(), Stop> {
        if self.alive {
            return Ok(());
        }
        // Without `max_attempts` in the spec the consumer is made without it, so the
        // implementation's own default is what the spec checks.
        let args = match self.scenario.max_attempts {
            Some(max) => json!({ "max_attempts": max }),
            None => json!({}),
        };
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

    /// Whether every part of `expect` holds, found without building the values a difference
    /// would show. `false` when a part does not hold or is not judged here (`pending`,
    /// `in_flight`, `handler_calls`, `trace`): the full comparison in `expect` decides then.
    /// Each part judged here must hold exactly when `expect` finds it equal.
    fn holds(&self, expect: &Expectation) -> bool {
        // Every part named, none left to `..`: a part added to `Expectation` must be judged
        // here or sent to the full comparison, or a checking run would pass what it never saw.
        let Expectation {
            dlq,
            pending,
            in_flight,
            handler_calls,
            trace,
            clock,
            counts,
            dlq_reasons,
            patterned: _,
        } = expect;
        if pending.is_some() || in_flight.is_some() || handler_calls.is_some() || trace.is_some() {
            return false;
        }
        let world = &self.world;
        let put = world.dlq();
        if let Some(entries) = dlq {
            let same = entries.len() == put.len()
                && entries
                    .iter()
                    .zip(put)
                    .all(|(entry, put)| same_entry(&entry.to_value(), put, self.naming));
            if !same {
                return false;
            }
        }
        if let Some(counts) = counts {
            let (ready, in_flight) = world.queue_lengths();
            let observed = [
                (counts.dlq, put.len() as u64),
                (counts.pending, ready as u64),
                (counts.in_flight, in_flight as u64),
                (counts.handler_calls, world.handler_call_total()),
            ];
            if observed
                .iter()
                .any(|(written, observed)| written.is_some_and(|n| n != *observed))
            {
                return false;
            }
        }
        if let Some(reasons) = dlq_reasons {
            // A reason left out and a reason written as 0 both say "none".
            let mut observed = [0u64; 3];
            for entry in put {
                match entry.get("reason").and_then(Value::as_str) {
                    Some("permanent") => observed[0] += 1,
                    Some("exhausted") => observed[1] += 1,
                    Some("poison") => observed[2] += 1,
                    _ => {}
                }
            }
            let written = [reasons.permanent, reasons.exhausted, reasons.poison];
            if written.map(|n| n.unwrap_or(0)) != observed {
                return false;
            }
        }
        clock.is_none_or(|clock| clock == world.now())
    }

    /// Checks an `expect` written at `position`; `path` leads from there to the expectation's
    /// mapping (`[expect]` for a step, nothing for the final one).
    fn expect(
        &mut self,
        label: &dyn fmt::Display,
        position: Position,
        path: &[&str],
        expect: &Expectation,
    ) -> Result<(), Stop> {
        // Where the spec reads the DLQ, a broker that dead-letters by itself is compared.
        let reads_dlq = expect.dlq.is_some()
            || expect.dlq_reasons.is_some()
            || expect
                .counts
                .as_ref()
                .is_some_and(|counts| counts.dlq.is_some());
        if reads_dlq {
            self.world.compare_dead_letters();
        }
        // A checking run keeps no checkpoint that matches (see `Recorder`): when the
        // expectation holds there is nothing to build, and for a big DLQ that is most of it.
        if !self.recorder.keeps_matches() && self.holds(expect) {
            return Ok(());
        }
        let mut parts: Vec<ComparedKey> = Vec::new();
        if let Some(entries) = &expect.dlq {
            let naming = self.naming;
            let written: Vec<Value> = entries.iter().map(|e| e.to_value()).collect();
            let put = self.world.dlq();
            // Patterned entries stand for many: bless rewrites none of them, so what is
            // written and what it would become are the same.
            let as_written = if expect.patterned {
                let same = Value::Array(written.clone());
                (same.clone(), same)
            } else {
                (
                    Value::Array(written.clone()),
                    put.iter().map(|e| canonical_entry(e, naming)).collect(),
                )
            };
            parts.push((
                "dlq",
                written.iter().map(|e| entry_in(e, naming)).collect(),
                put.iter().map(|e| normalize_entry(e, naming)).collect(),
                Some(as_written),
            ));
        }
        if let Some(counts) = &expect.counts {
            let world_calls = self.world.handler_call_total();
            let (ready, in_flight) = self.world.queue_lengths();
            let mut expected = Map::new();
            let mut actual = Map::new();
            for (key, written, observed) in [
                ("dlq", counts.dlq, self.world.dlq().len() as u64),
                ("pending", counts.pending, ready as u64),
                ("in_flight", counts.in_flight, in_flight as u64),
                ("handler_calls", counts.handler_calls, world_calls),
            ] {
                if let Some(written) = written {
                    expected.insert(key.to_owned(), json!(written));
                    actual.insert(key.to_owned(), json!(observed));
                }
            }
            parts.push((
                "counts",
                Value::Object(expected),
                Value::Object(actual),
                None,
            ));
        }
        if let Some(reasons) = &expect.dlq_reasons {
            let expected: Map<String, Value> = reasons
                .written()
                .into_iter()
                .map(|(reason, n)| (reason.to_owned(), json!(n)))
                .collect();
            let mut actual = Map::new();
            for reason in ["permanent", "exhausted", "poison"] {
                let n = self
                    .world
                    .dlq()
                    .iter()
                    .filter(|e| e.get("reason").and_then(Value::as_str) == Some(reason))
                    .count();
                if n > 0 {
                    actual.insert(reason.to_owned(), json!(n));
                }
            }
            parts.push((
                "dlq_reasons",
                Value::Object(expected),
                Value::Object(actual),
                None,
            ));
        }
        if let Some(pending) = &expect.pending {
            parts.push(("pending", json!(pending), json!(self.world.pending()), None));
        }
        if let Some(in_flight) = &expect.in_flight {
            let actual = json!(self.world.in_flight());
            parts.push(("in_flight", json!(in_flight), actual, None));
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
                None,
            ));
        }
        if let Some(trace) = &expect.trace {
            let expected: Vec<String> = trace.iter().map(|line| line.value.clone()).collect();
            // The effects in the spec's order where the contract leaves the order free.
            let actual = super::trace::align(&expected, &self.world.trace());
            parts.push(("trace", json!(expected), json!(actual), None));
        }
        if let Some(clock) = expect.clock {
            parts.push(("clock", json!(clock), json!(self.world.now()), None));
        }
        let mut expected = Map::new();
        let mut actual = Map::new();
        let mut written = Vec::with_capacity(parts.len());
        for (key, expected_part, actual_part, as_written) in parts {
            let mut at_key = path.to_vec();
            at_key.push(key);
            let (expected_written, actual_written) =
                as_written.unwrap_or_else(|| (expected_part.clone(), actual_part.clone()));
            written.push(WrittenValue::new(
                position,
                &at_key,
                expected_written,
                actual_written,
            ));
            expected.insert(key.to_owned(), expected_part);
            actual.insert(key.to_owned(), actual_part);
        }
        // Patterned DLQ entries stand for many and are never rewritten: when they differ, the
        // expectation as a whole cannot be blessed, and `bless` must say so before it rewrites
        // anything else in it (rather than fail late, when the blessed spec still differs).
        if expect.patterned && expected.get("dlq") != actual.get("dlq") {
            written.clear();
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

/// Whether `entry_in(written, naming)` equals `normalize_entry(put, naming)`, without building
/// either: one only renames keys and the other only reorders them, and maps compare whatever
/// their order. `written` holds the contract's seven keys, which no spelling makes collide.
fn same_entry(written: &Value, put: &Value, naming: Naming) -> bool {
    match (written, put) {
        (Value::Object(written), Value::Object(put)) => {
            // Keys in the same order, as the built-in puts them, are compared in step, with no
            // key looked up; any other order by looking each one up.
            let in_step = || {
                written
                    .iter()
                    .zip(put)
                    .all(|((key, value), (put_key, put_value))| {
                        naming.key(key) == put_key.as_str() && value == put_value
                    })
            };
            let looked_up = || {
                written
                    .iter()
                    .all(|(key, value)| put.get(naming.key(key).as_ref()) == Some(value))
            };
            written.len() == put.len() && (in_step() || looked_up())
        }
        _ => entry_in(written, naming) == normalize_entry(put, naming),
    }
}

/// How a delivery of a message ended, as the implementation left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Acked,
    Retried,
    DeadLettered,
    /// The handler crashed the process, or an injected crash did.
    Crashed,
    /// Nothing was done with it: it stays in flight.
    LeftInFlight,
    /// Some other mix of effects (a put without an ack, a retry and an ack).
    Other,
}

impl Ending {
    /// What a rule expecting this ending wants done with `id`, as a trace writes it.
    fn expected(self, id: &str) -> String {
        match self {
            Ending::Acked => format!("queue.ack({id})"),
            Ending::Retried => format!("queue.retry({id})"),
            Ending::DeadLettered => format!("dlq.put({id}), then queue.ack({id})"),
            Ending::Crashed => {
                format!("nothing more: the crash propagates and {id} stays in flight")
            }
            Ending::LeftInFlight | Ending::Other => format!("nothing: {id} stays in flight"),
        }
    }
}

/// The ending the deciding rule expects of a delivery the handler ran for, and that rule.
fn expected_ending(
    handled: &Option<ScriptedOutcome>,
    count: u64,
    max: u64,
) -> Option<(Ending, &'static Rule)> {
    Some(match handled.as_ref()? {
        ScriptedOutcome::Ok => (Ending::Acked, &rules::SUCCESS),
        ScriptedOutcome::Crash => (Ending::Crashed, &rules::CRASH_PROPAGATES),
        permanent if permanent.is_permanent() => (Ending::DeadLettered, &rules::PERMANENT),
        _ if count < max => (Ending::Retried, &rules::TRANSIENT_RETRY),
        _ => (Ending::DeadLettered, &rules::EXHAUSTED),
    })
}

/// The effects a decision is made of, by their protocol names: what a crash can stop.
const EFFECT_CALLS: [&str; 3] = ["queue.ack", "queue.retry", "dlq.put"];

/// What the deciding rule expects of a delivery: how it ends and, for a dead-lettering, the
/// entry the contract pins.
struct Wanted {
    ending: Ending,
    entry: Option<Map<String, Value>>,
}

impl Wanted {
    /// The pinned fields the implementation's put got wrong: the key, the value pinned, and
    /// the value put (`None`: missing).
    fn entry_differences<'w>(
        &'w self,
        did: &'w Did,
    ) -> Vec<(&'w str, &'w Value, Option<&'w Value>)> {
        let (Some(entry), Some(put)) = (&self.entry, &did.put) else {
            return Vec::new();
        };
        entry
            .iter()
            .filter_map(|(key, value)| {
                let put = put.get(key);
                (put != Some(value)).then_some((key.as_str(), value, put))
            })
            .collect()
    }

    /// What the rule wants done with `id`, as a trace writes it: a dead-lettering names its
    /// reason, and every other pinned field the implementation's put got wrong.
    fn expected(&self, id: &str, did: &Did) -> String {
        let Some(entry) = self
            .entry
            .as_ref()
            .filter(|_| self.ending == Ending::DeadLettered)
        else {
            return self.ending.expected(id);
        };
        let mut fields: Vec<String> = entry
            .get("reason")
            .map(|reason| format!("reason={}", yaml::flow(reason)))
            .into_iter()
            .collect();
        for (key, value, _) in self.entry_differences(did) {
            if key != "reason" {
                fields.push(format!("{key}={}", cut_flow(value)));
            }
        }
        format!("dlq.put({id}, {}), then queue.ack({id})", fields.join(", "))
    }
}

/// What the implementation did with a message it received, from the world's journal.
struct Did {
    ending: Ending,
    /// Its effects on the message, as a trace writes them.
    effects: Vec<String>,
    /// The same effects by their protocol names (`misuse` for a misuse).
    calls: Vec<&'static str>,
    /// Which of `effects` is the first put, and the entry it put.
    put_at: Option<usize>,
    put: Option<Arc<Value>>,
    /// The delivery's `first_received_at`, and the clock when the entry was put (now, when
    /// none was): what the pinned entry's times are.
    first_received_at: Option<u64>,
    clock_at_put: u64,
    /// The injected crash that fired during the delivery: the call, when, and the id it named.
    crash: Option<(String, CrashTiming, Option<String>)>,
}

impl Did {
    fn of(happened: &[WorldEvent], id: &str, handled: &Option<ScriptedOutcome>, now: u64) -> Did {
        let mine: Vec<&WorldEvent> = happened
            .iter()
            .filter(|h| match h {
                WorldEvent::Acked { id: of }
                | WorldEvent::Retried { id: of }
                | WorldEvent::Put { id: of, .. } => of == id,
                WorldEvent::Misused { .. } => true,
                _ => false,
            })
            .collect();
        let effects: Vec<String> = mine.iter().map(|h| h.trace_line()).collect();
        let calls = mine
            .iter()
            .map(|h| match h {
                WorldEvent::Acked { .. } => "queue.ack",
                WorldEvent::Retried { .. } => "queue.retry",
                WorldEvent::Put { .. } => "dlq.put",
                _ => "misuse",
            })
            .collect();
        let has = |wanted: fn(&WorldEvent) -> bool| mine.iter().filter(|h| wanted(h)).count();
        let (acks, retries, puts) = (
            has(|h| matches!(h, WorldEvent::Acked { .. })),
            has(|h| matches!(h, WorldEvent::Retried { .. })),
            has(|h| matches!(h, WorldEvent::Put { .. })),
        );
        let crashed = matches!(handled, Some(ScriptedOutcome::Crash))
            || happened
                .iter()
                .any(|h| matches!(h, WorldEvent::Crashed { .. }));
        let ending = match (effects.len(), acks, retries, puts) {
            _ if crashed && effects.is_empty() => Ending::Crashed,
            (0, ..) => Ending::LeftInFlight,
            (1, 1, 0, 0) => Ending::Acked,
            (1, 0, 1, 0) => Ending::Retried,
            (2, 1, 0, 1) => Ending::DeadLettered,
            _ => Ending::Other,
        };
        let put_at = mine
            .iter()
            .position(|h| matches!(h, WorldEvent::Put { .. }));
        let put = put_at.and_then(|at| match mine[at] {
            WorldEvent::Put { entry, .. } => Some(Arc::clone(entry)),
            _ => None,
        });
        // The clock moves during a delivery only by the implementation's own advances and the
        // handler calls that take time: those after the put had not happened when it was made.
        let put_in_journal = happened
            .iter()
            .position(|h| matches!(h, WorldEvent::Put { id: of, .. } if of == id));
        let moved_since: u64 = put_in_journal.map_or(0, |at| {
            happened[at..]
                .iter()
                .map(|h| match h {
                    WorldEvent::Advanced { by, .. } | WorldEvent::Took { takes: by, .. } => *by,
                    _ => 0,
                })
                .sum()
        });
        let first_received_at = happened.iter().find_map(|h| match h {
            WorldEvent::Received {
                id: of,
                first_received_at,
                ..
            } if of == id => *first_received_at,
            _ => None,
        });
        let crash = happened.iter().find_map(|h| match h {
            WorldEvent::Crashed {
                call,
                timing,
                about,
            } => Some((call.clone(), *timing, about.clone())),
            _ => None,
        });
        Did {
            ending,
            effects,
            calls,
            put_at,
            put,
            first_received_at,
            clock_at_put: now.saturating_sub(moved_since),
            crash,
        }
    }

    /// Its effects as a trace writes them, the put with the pinned fields it got wrong.
    fn shown(&self, wanted: &Wanted) -> Vec<String> {
        let mut shown = self.effects.clone();
        let wrong = wanted.entry_differences(self);
        if let (Some(at), false) = (self.put_at, wrong.is_empty()) {
            let fields: Vec<String> = wrong
                .iter()
                .map(|(key, _, put)| match put {
                    Some(value) => format!("{key}={}", cut_flow(value)),
                    None => format!("no {key}"),
                })
                .collect();
            let call = shown[at].strip_suffix(')').unwrap_or(&shown[at]).to_owned();
            shown[at] = format!("{call}, {})", fields.join(", "));
        }
        shown
    }

    /// Its effects, or what leaving the message alone means.
    fn told(&self, wanted: &Wanted) -> String {
        match self.ending {
            Ending::Crashed => {
                "nothing more: the process crashed, the message stays in flight".to_owned()
            }
            Ending::LeftInFlight => "nothing with it: it stays in flight".to_owned(),
            _ => self.shown(wanted).join(", "),
        }
    }
}

/// A value the implementation gave, as a timeline line shows it: cut before it is rendered
/// (`truncate::value`), as a reply may be as long as a protocol line.
fn cut_flow(value: &Value) -> String {
    yaml::flow(&crate::text::truncate::value(value))
}

#[cfg(test)]
mod tests {
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
