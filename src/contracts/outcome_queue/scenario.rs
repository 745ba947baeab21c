//! Runs an outcome-queue spec: drives an implementation's `RetryQueue` step by step and compares.
//!
//! Two checks need no expectation in the spec. A step that expects an error takes `state()`
//! before and after the call: any difference is a mismatch, because an invalid argument must
//! leave every job untouched. A `mutate_state` step does the same around the mutation: the
//! queue's own state must not change when a view of it is changed.

use serde_json::{Value, json};

use super::claims;
use super::rules;
use super::smells::StepFacts;
use super::spec::{CreateStep, ProcessStep, StateSpec, Step, normalize_state};
use super::state_ops::{self, StateOp, show_path};
use crate::contracts::contract::{Checkpoint, RunMode, ScenarioRun, SpecHeader, WrittenValue};
use crate::contracts::recorder::Recorder;
use crate::contracts::timeline::{TimelineEvent, Tone};
use crate::model::implementation::{Implementation, NoWorld, Raised, Reply, UNDEFINED_IS_NOT_NULL};
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::SpecError;
use crate::text::yaml::{self, Spanned};

#[derive(Debug)]
pub(crate) struct QueueScenario {
    pub(crate) file: SourceFile,
    pub(crate) header: SpecHeader,
    pub(crate) steps: Vec<(Position, Step)>,
    pub(crate) expect: Option<(Position, StateSpec)>,
}

/// One call a run made of the implementation, as a diagnosis compares it with the reference's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallMark {
    /// The step it was made in, from 0 (the final expect is the step after the last).
    pub(crate) step: usize,
    /// `create`, `submit`, `process`, `replay`, `state` or `mutate_state`.
    pub(crate) method: &'static str,
    pub(crate) args: Vec<Value>,
    pub(crate) reply: Reply,
    /// A `state()` the diagnosis asked of the reference after the step, to see what it
    /// changed: no call of the run itself.
    pub(crate) witness: bool,
}

impl QueueScenario {
    /// Runs the scenario; `observe` also asks `state()` before each `process` to learn which
    /// job it takes (for linting only: it adds calls an implementation would otherwise not see).
    pub(crate) fn execute(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        observe: bool,
    ) -> (ScenarioRun, Vec<StepFacts>) {
        let (run, facts, _) = self.play(implementation, mode, observe, None);
        (run, facts)
    }

    /// Runs the scenario keeping every call it makes, for a diagnosis; `witness` also asks
    /// `state()` after each step (of the reference only: calls no spec makes), marked so.
    pub(crate) fn marked(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        witness: bool,
    ) -> (ScenarioRun, Vec<CallMark>) {
        let (run, _, calls) = self.play(implementation, mode, false, Some(witness));
        (run, calls)
    }

    /// Runs the scenario; with `calls` (`Some(witness)`), keeps every call it makes.
    fn play(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        observe: bool,
        calls: Option<bool>,
    ) -> (ScenarioRun, Vec<StepFacts>, Vec<CallMark>) {
        let mut run = Run {
            scenario: self,
            reference: implementation.info().is_reference,
            implementation,
            recorder: Recorder::new(mode),
            observe,
            facts: Vec::new(),
            last_call: None,
            ready: 0,
            quarantined: 0,
            heading: String::new(),
            seen: None,
            max_attempts: None,
            constructed: false,
            pinned: None,
            after: None,
            calls: calls.map(|_| Vec::new()),
            witness: calls.unwrap_or(false),
            step_index: 0,
        };
        let stopped = run.all_steps().err();
        let calls = run.calls.take().unwrap_or_default();
        (run.recorder.finish(stopped), run.facts, calls)
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
    recorder: Recorder,
    observe: bool,
    facts: Vec<StepFacts>,
    /// The arguments and the answer of the last call other than `state()`.
    last_call: Option<(Value, String)>,
    /// How many jobs are ready and quarantined, as the answers so far tell (exact for a correct
    /// queue): which rules a call exercises depends on them.
    ready: usize,
    quarantined: usize,
    /// How the timeline names the step running: `step 3 (line 11)`.
    heading: String,
    /// The queue's state after the last step, as `state()` showed it (explaining only): what
    /// the next call starts from, to name the job it takes and the lists it changes.
    seen: Option<Value>,
    /// The `max_attempts` of the queue, when the last create made one with a whole number.
    max_attempts: Option<u64>,
    /// Whether a queue exists to ask for its state.
    constructed: bool,
    /// The answer the spec pins for the call about to be made (a `process` step's
    /// `returns`): its rules are the ones that answer follows from, whatever the
    /// implementation answers, so the timeline never states as a rule what it did instead.
    pinned: Option<Reply>,
    /// Explaining a student's queue: its state right after the step's call, taken to mark the
    /// step's rule lines, which the state told after the step reuses.
    after: Option<Value>,
    /// Every call made, for a diagnosis; `None` when not kept.
    calls: Option<Vec<CallMark>>,
    /// Whether `state()` is asked after each step too, into `calls` (the reference's run).
    witness: bool,
    /// The step at hand, from 0.
    step_index: usize,
}

impl Run<'_> {
    fn all_steps(&mut self) -> Result<(), Stop> {
        for (index, (position, step)) in self.scenario.steps.iter().enumerate() {
            let label = format!("step {} ({})", index + 1, step.name());
            let took = match step {
                Step::Process(_) if self.observe => self.head()?,
                _ => None,
            };
            self.heading = format!("step {} (line {})", index + 1, position.line);
            self.step_index = index;
            self.recorder.begin_step();
            if let Some(rule) = decision(step) {
                self.recorder.decided(rule);
            }
            let mut ran = self.step(&label, *position, step);
            self.recorder.describe_step(&mut ran, || step.written());
            ran?;
            self.witness_state();
            if !matches!(step, Step::Expect(_)) {
                self.tell_state();
            }
            let call = self.last_call.take();
            let changed = match (step, &call) {
                (Step::Create(_) | Step::Submit(_), _) => true,
                (Step::Process(_), Some((_, answer))) => {
                    answer != "null" && !answer.starts_with("raised")
                }
                (Step::Replay(_), Some((_, answer))) => answer == "true",
                _ => false,
            };
            self.facts.push(StepFacts {
                position: *position,
                name: step.name(),
                call,
                changed,
                took: if changed { took } else { None },
            });
        }
        if let Some((position, expect)) = &self.scenario.expect {
            self.step_index = self.scenario.steps.len();
            self.recorder.begin_step();
            self.recorder.tell_event(
                format!("final expect (line {}): state()", position.line),
                TimelineEvent::Step { kind: "expect" },
            );
            self.expect("final expect", *position, &[], expect)?;
        }
        Ok(())
    }

    fn step(&mut self, label: &str, position: Position, step: &Step) -> Result<(), Stop> {
        match step {
            Step::Create(create) => self.create(label, create),
            Step::Submit(submit) => {
                let args = [json!(submit.id.value), json!(submit.payload)];
                let reply = self.call("submit", &args)?;
                if let Reply::Raised(raised) = reply {
                    let note = "submit must accept a new job".to_owned();
                    let actual = raised_value(&raised, true);
                    let expected = json!({ "returns": null });
                    self.compare(label, position, "submit", expected, actual, Some(note))?;
                }
                Ok(())
            }
            Step::Process(process) => self.process(label, position, &process.0),
            Step::Replay(replay) => {
                self.pinned = Some(Reply::Returned(json!(replay.returns.value)));
                let reply = self.call("replay", &[json!(replay.id)])?;
                let expected = json!({ "returns": replay.returns.value });
                let actual = answer(reply, &expected)?;
                let at = yaml::at(&replay.returns);
                let written = returned(&actual)
                    .map(|actual| WrittenValue::new(at, &[], json!(replay.returns.value), actual))
                    .into_iter()
                    .collect();
                let checkpoint = Checkpoint {
                    position: at,
                    label: "replay".to_owned(),
                    expected,
                    actual,
                    written,
                };
                self.recorder.compare(label, checkpoint, None)
            }
            Step::MutateState(ops) => self.mutate(label, position, ops),
            Step::Expect(expect) => {
                let heading = format!("{}: state()", self.heading);
                self.recorder
                    .tell_event(heading, TimelineEvent::Step { kind: "expect" });
                self.expect(label, position, &["expect"], expect)
            }
        }
    }

    /// Keeps a call and its reply, when a diagnosis asks for them.
    fn mark_call(&mut self, method: &'static str, args: &[Value], reply: &Reply, witness: bool) {
        if let Some(calls) = &mut self.calls {
            calls.push(CallMark {
                step: self.step_index,
                method,
                args: args.to_vec(),
                reply: reply.clone(),
                witness,
            });
        }
    }

    /// Asks the queue's state after a step, for a diagnosis of the reference's run only.
    fn witness_state(&mut self) {
        if !self.witness || !self.constructed {
            return;
        }
        if let Ok(reply) = self.implementation.call("state", &[], &mut NoWorld) {
            self.mark_call("state", &[], &reply, true);
        }
    }

    /// Calls a method of the current queue, noting the call and its answer in the timeline.
    fn call(&mut self, method: &'static str, args: &[Value]) -> Result<Reply, Stop> {
        let reply = self
            .implementation
            .call(method, args, &mut NoWorld)
            .map_err(Outcome::Errored)?;
        self.mark_call(method, args, &reply, false);
        if method != "state" {
            let telling = self.recorder.telling();
            if telling {
                let shown: Vec<String> = args.iter().map(Value::to_string).collect();
                let call = format!("{method}({}) -> {}", shown.join(", "), shown_reply(&reply));
                let tone = call_tone(method, &reply);
                self.recorder.tell_event(
                    format!("{}: {call}", self.heading),
                    TimelineEvent::Call {
                        from: "test",
                        to: "queue",
                        label: call,
                        tone,
                    },
                );
            }
            let before = self.seen.take();
            let pinned = match (self.pinned.take(), &reply) {
                (Some(Reply::Raised(_)), Reply::Raised(_)) => None,
                (Some(Reply::Returned(expected)), Reply::Returned(actual))
                    if *actual == expected =>
                {
                    None
                }
                (pinned, _) => pinned,
            };
            let rules = self.exercised(method, args, pinned.as_ref().unwrap_or(&reply));
            // What this queue's state became, to bear each rule line out or not: a student's
            // queue only, whose lines are what the spec's pinned answer implies.
            let after = match telling && !self.reference && !rules.is_empty() {
                true => self.state_now(),
                false => None,
            };
            for rule in rules {
                // Counted always; worded only when the timeline is told (explain).
                if !telling {
                    self.recorder.exercise(rule, "");
                    continue;
                }
                let why = match &before {
                    Some(before) => self.why(rule, args, before),
                    None => rule.statement.to_owned(),
                };
                if self.reference {
                    // What the rule wanted, where the built-in answered otherwise (a spec that
                    // pins a wrong answer): never told as fact.
                    let why = match pinned {
                        Some(_) => format!("expected, not what this queue did: {why}"),
                        None => why,
                    };
                    self.recorder.exercise(rule, &why);
                    continue;
                }
                let borne = match (&before, &after) {
                    (Some(before), Some(after)) => {
                        claims::call_follows_rule(rule, args, &reply, before, after)
                    }
                    _ => None,
                };
                let did = match (borne, &after) {
                    (Some(false), Some(after)) => Some(format!(
                        "{method} returned {}; {}",
                        shown_reply(&reply),
                        claims::shown_lists(after, claims::looked_at(rule))
                    )),
                    _ => None,
                };
                self.mark_rule(rule, &why, borne, did);
            }
            self.after = after;
            self.last_call = Some((Value::Array(args.to_vec()), shown_reply(&reply)));
        }
        Ok(reply)
    }

    /// Tells a rule line of a student's queue marked: `✓` when its answer and state bear the
    /// line out, `✗` with what the queue did (`did`) when they do not, and as only expected
    /// when `state()` cannot show it (`borne` is `None`).
    fn mark_rule(
        &mut self,
        rule: &'static Rule,
        why: &str,
        borne: Option<bool>,
        did: Option<String>,
    ) {
        self.recorder.note(rule);
        match (borne, did) {
            (Some(true), _) => self.recorder.tell_event(
                format!("    \u{2713} rule {}: {why}", rule.id),
                TimelineEvent::Decision {
                    did: why.to_owned(),
                    expected: None,
                },
            ),
            (Some(false), Some(did)) => {
                let why = why.trim_end_matches('.');
                self.recorder.tell_event(
                    format!(
                        "    \u{2717} rule {}: expected: {why}; this queue: {did}",
                        rule.id
                    ),
                    TimelineEvent::Decision {
                        did,
                        expected: Some(why.to_owned()),
                    },
                );
            }
            _ => self.recorder.tell_event(
                format!(
                    "    rule {}: expected, which state() does not show: {why}",
                    rule.id
                ),
                TimelineEvent::Rule,
            ),
        }
    }

    /// The queue's state now, for the timeline only: `None` when it cannot be had.
    fn state_now(&mut self) -> Option<Value> {
        match self.implementation.call("state", &[], &mut NoWorld) {
            Ok(Reply::Returned(view)) => Some(normalize_state(&view)),
            _ => None,
        }
    }

    /// The id of the job at the head of `ready`, as `state()` shows it.
    fn head(&mut self) -> Result<Option<String>, Stop> {
        let state = self.state()?;
        Ok(state
            .pointer("/ready/0/id")
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    fn create(&mut self, label: &str, create: &CreateStep) -> Result<(), Stop> {
        // A new queue: what the last one's state was is nothing to tell of it.
        self.after = None;
        let raw = &create.max_attempts.value;
        let reply = self
            .implementation
            .create(super::NAME, &super::queue::new_args(raw), &mut NoWorld)
            .map_err(Outcome::Errored)?;
        self.mark_call("create", std::slice::from_ref(raw), &reply, false);
        if self.recorder.telling() {
            let call = format!(
                "RetryQueue({raw}) -> {}",
                match &reply {
                    Reply::Returned(_) | Reply::Undefined => "a new queue".to_owned(),
                    other => shown_reply(other),
                }
            );
            self.recorder.tell_event(
                format!("{}: {call}", self.heading),
                TimelineEvent::Call {
                    from: "test",
                    to: "queue",
                    label: call,
                    tone: Tone::Plain,
                },
            );
        }
        let (expected, position) = match &create.raises {
            Some(raises) => (raises.value.to_value(), yaml::at(raises)),
            None => (
                json!({ "constructed": true }),
                yaml::at(&create.max_attempts),
            ),
        };
        // Validation is exercised at its edges: a value refused, the least one accepted, or one
        // beyond 32 bits (where integer checks such as `(n | 0) === n` break).
        let edge = raw
            .as_u64()
            .is_some_and(|n| n == 1 || n > u64::from(u32::MAX >> 1));
        let raised = matches!(reply, Reply::Raised(_));
        // A student's queue is told what the spec pins, marked by what it answered: its own
        // answer is no rule. The built-in's is.
        let judged = self.recorder.telling() && !self.reference;
        let refused = if judged {
            create.raises.is_some()
        } else {
            raised
        };
        if refused || edge {
            let why = match refused {
                true => format!(
                    "{raw} is not a whole number >= 1 (booleans, floats, strings and null are not): ValueError"
                ),
                _ if raw.as_u64() == Some(1) => "1 is the least max_attempts accepted".to_owned(),
                _ => format!("{raw} is beyond 32 bits, and a whole number >= 1: accepted"),
            };
            if judged {
                let answer = match &reply {
                    Reply::Returned(_) | Reply::Undefined => "a new queue".to_owned(),
                    other => shown_reply(other),
                };
                let did = format!("RetryQueue({raw}) -> {answer}");
                let borne = raised == refused;
                self.mark_rule(&rules::MAX_ATTEMPTS_VALIDATED, &why, Some(borne), Some(did));
            } else {
                self.recorder.exercise(&rules::MAX_ATTEMPTS_VALIDATED, &why);
            }
        }
        // The constructor's value is no answer: `undefined` is as good as `null`.
        let constructed = matches!(reply, Reply::Returned(_) | Reply::Undefined);
        if constructed {
            self.constructed = true;
            self.max_attempts = raw.as_u64();
        }
        (self.ready, self.quarantined) = (0, 0);
        let actual = match reply {
            Reply::Returned(_) | Reply::Undefined => json!({ "constructed": true }),
            Reply::Raised(raised) => raised_value(&raised, create.raises.is_none()),
            Reply::Skipped(reason) => return Err(Outcome::Skipped(reason)),
        };
        let note = "RetryQueue accepts max_attempts only as an integer >= 1".to_owned();
        self.compare(label, position, "create", expected, actual, Some(note))?;
        if !constructed && create.raises.is_none() {
            // No queue exists, so no later step can run, even when recording.
            return Err(self.recorder.stop());
        }
        Ok(())
    }

    fn process(&mut self, label: &str, position: Position, step: &ProcessStep) -> Result<(), Stop> {
        let before = match step.raises {
            Some(_) => Some(self.state()?),
            None => None,
        };
        self.pinned = match (&step.returns, &step.raises) {
            (Some(returns), None) => Some(Reply::Returned(returns.value.to_value())),
            // Which error is the step's check's to say; the rules follow from any raise.
            (_, Some(_)) => Some(Reply::Raised(Raised::error(
                "ValueError",
                "the outcome is refused",
            ))),
            (None, None) => None,
        };
        let reply = self.call("process", std::slice::from_ref(&step.outcome.value))?;
        let (expected, at) = match (&step.returns, &step.raises) {
            (_, Some(raises)) => (raises.value.to_value(), yaml::at(raises)),
            (Some(returns), None) => (
                json!({ "returns": returns.value.to_value() }),
                yaml::at(returns),
            ),
            // Loading guarantees one of the two.
            (None, None) => (json!({ "returns": null }), position),
        };
        let note = (matches!(reply, Reply::Undefined) && expected == json!({ "returns": null }))
            .then(|| UNDEFINED_IS_NOT_NULL.to_owned());
        let actual = answer(reply, &expected)?;
        // Only a return can be blessed in place: `returns: none` stands for null.
        let written = match (&step.returns, &step.raises, returned(&actual)) {
            (Some(returns), None, Some(value)) => vec![WrittenValue::new(
                at,
                &[],
                as_written(&returns.value.to_value()),
                as_written(&value),
            )],
            _ => Vec::new(),
        };
        let checkpoint = Checkpoint {
            position: at,
            label: "process".to_owned(),
            expected,
            actual,
            written,
        };
        self.recorder.compare(label, checkpoint, note)?;
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
        let reply = self.call("mutate_state", &[Value::Array(wire)])?;
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

    /// Checks an `expect` written at `position`; `path` leads from there to the state mapping
    /// (`[expect]` for a step, nothing for the final one).
    fn expect(
        &mut self,
        label: &str,
        position: Position,
        path: &[&str],
        expect: &StateSpec,
    ) -> Result<(), Stop> {
        let actual = self.state()?;
        let expected = expect.to_value();
        let mut written = Vec::new();
        if let (Value::Object(expected), Value::Object(actual)) = (&expected, &actual) {
            for (key, expected_part) in expected {
                if let Some(actual_part) = actual.get(key) {
                    let mut at_key = path.to_vec();
                    at_key.push(key);
                    written.push(WrittenValue::new(
                        position,
                        &at_key,
                        expected_part.clone(),
                        actual_part.clone(),
                    ));
                }
            }
        }
        let checkpoint = Checkpoint {
            position,
            label: "expect".to_owned(),
            expected,
            actual,
            written,
        };
        self.recorder.compare(label, checkpoint, None)
    }

    /// The queue's state now, its keys in the contract's order.
    fn state(&mut self) -> Result<Value, Stop> {
        match self.call("state", &[])? {
            Reply::Returned(view) => Ok(normalize_state(&view)),
            Reply::Undefined => Ok(json!(UNDEFINED)),
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

    /// Compares a whole value that the spec does not write out for `bless` to rewrite.
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
            written: Vec::new(),
        };
        self.recorder.compare(step, checkpoint, note)
    }
}

impl Run<'_> {
    /// Explaining only: asks the queue for its state after a step and tells it, to be what
    /// the next step starts from. A state that cannot be had is not told; the checks that
    /// need it say why.
    fn tell_state(&mut self) {
        if !self.recorder.telling() || !self.constructed {
            return;
        }
        // The state taken right after the step's call, when its rule lines were marked: the
        // reads since do not change it, and asking again would tell the same.
        let Some(state) = self.after.take().or_else(|| self.state_now()) else {
            self.seen = None;
            return;
        };
        let lists = ["ready", "done", "quarantine"]
            .into_iter()
            .map(|list| (list, listed(&state, list)))
            .collect();
        self.recorder.tell_event(
            format!("    state: {}", describe_state(&state)),
            TimelineEvent::Lists(lists),
        );
        self.seen = Some(state);
    }

    /// The specific reason `rule` decides this call, from the state before it (`before`).
    fn why(&self, rule: &Rule, args: &[Value], before: &Value) -> String {
        let ready = jobs(before, "ready");
        let quarantine = jobs(before, "quarantine");
        let head = ready.first();
        let max = self
            .max_attempts
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        let attempts = |job: Option<&Job>| job.map_or(0, |job| job.attempts);
        let id = head.map_or_else(
            || "the head job (this queue has none ready)".to_owned(),
            |job| job.id.clone(),
        );
        let now = attempts(head) + 1;
        let argument = args.first().map(yaml::flow).unwrap_or_default();
        match rule.id {
            id_ if id_ == rules::SUBMIT_TAIL.id => format!(
                "{argument} joins the ready tail behind {}, with 0 attempts",
                ready.last().map_or("nothing", |job| job.id.as_str())
            ),
            id_ if id_ == rules::OUTCOME_VALIDATED_FIRST.id => format!(
                "{argument} is not success, transient or permanent: ValueError before any job is taken, and every job stays as it was"
            ),
            id_ if id_ == rules::EMPTY_RETURNS_NONE.id => {
                "nothing is ready: process returns None and changes nothing".to_owned()
            }
            id_ if id_ == rules::QUARANTINE_STICKY.id => format!(
                "{} stay{} in quarantine: only replay takes a job out",
                names(&quarantine),
                if quarantine.len() == 1 { "s" } else { "" }
            ),
            id_ if id_ == rules::ATTEMPT_COUNTED_FIRST.id => format!(
                "{id} is taken from the ready head and its attempts go from {} to {now} before the outcome is applied",
                now - 1
            ),
            id_ if id_ == rules::SUCCESS_DONE.id => {
                format!("success: {id} moves to done, and process returns done")
            }
            id_ if id_ == rules::TRANSIENT_RETRY_TAIL.id => {
                let others = &ready[ready.len().min(1)..];
                let behind = if others.is_empty() {
                    "; no other job is ready".to_owned()
                } else {
                    format!(", behind {}", names(others))
                };
                format!(
                    "{id} has {now} attempt{} < max_attempts {max}: it goes to the ready tail{behind}, and process returns retry",
                    if now == 1 { "" } else { "s" }
                )
            }
            id_ if id_ == rules::PERMANENT_QUARANTINE.id => format!(
                "permanent: {id} is quarantined with reason permanent after {now} of {max} attempts, and process returns dead"
            ),
            id_ if id_ == rules::EXHAUSTED_QUARANTINE.id => format!(
                "{id} has {now} attempts = max_attempts {max}: the budget is spent, so it is quarantined with reason exhausted, with no extra attempt"
            ),
            id_ if id_ == rules::ENTRY_RETAINS_DIAGNOSTICS.id => {
                let reason = if args.first().and_then(Value::as_str) == Some("permanent") {
                    "permanent"
                } else {
                    "exhausted"
                };
                let after = if quarantine.is_empty() {
                    String::new()
                } else {
                    format!(", after {}", names(&quarantine))
                };
                format!(
                    "the entry keeps id {id}, payload {}, attempts {now} and reason {reason}{after}",
                    head.map_or_else(|| "?".to_owned(), |job| job.payload.clone())
                )
            }
            id_ if id_ == rules::REPLAY_RESETS.id => {
                let entry = quarantine.iter().find(|job| job.id == argument_id(args));
                match entry {
                    Some(job) => format!(
                        "{} leaves quarantine (reason {}, {} attempts) for the ready tail, with attempts reset to 0 and no reason",
                        job.id, job.reason, job.attempts
                    ),
                    None => rule.statement.to_owned(),
                }
            }
            id_ if id_ == rules::REPLAY_MISSING_FALSE.id => {
                let wanted = argument_id(args);
                let done = before
                    .get("done")
                    .and_then(Value::as_array)
                    .is_some_and(|done| done.iter().any(|d| yaml::flow(d) == wanted));
                let where_ = if ready.iter().any(|job| job.id == wanted) {
                    format!("{wanted} is ready, not quarantined")
                } else if done {
                    format!("{wanted} is done, not quarantined")
                } else {
                    format!("no job {wanted} is in quarantine")
                };
                format!("{where_}: replay returns False and changes nothing")
            }
            id_ if id_ == rules::STATE_DEEP_COPY.id => {
                "the view state() returned was changed: the queue's own state must stay as it was"
                    .to_owned()
            }
            _ => rule.statement.to_owned(),
        }
    }
}

/// A job of a state view, as the timeline names it.
struct Job {
    id: String,
    payload: String,
    attempts: u64,
    reason: String,
}

/// The jobs of list `key` (`ready` or `quarantine`) of a state view.
fn jobs(state: &Value, key: &str) -> Vec<Job> {
    let text = |job: &Value, field: &str| job.get(field).map_or_else(|| "?".to_owned(), yaml::flow);
    state
        .get(key)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|job| Job {
                    id: text(job, "id"),
                    payload: text(job, "payload"),
                    attempts: job.get("attempts").and_then(Value::as_u64).unwrap_or(0),
                    reason: text(job, "reason"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The id a call names, as the timeline shows it.
fn argument_id(args: &[Value]) -> String {
    args.first().map(yaml::flow).unwrap_or_default()
}

/// `a, b`, `nothing`, or the ends of a long list.
fn names(jobs: &[Job]) -> String {
    if jobs.is_empty() {
        return "nothing".to_owned();
    }
    crate::text::listing::shown(jobs, |job| job.id.clone()).join(", ")
}

/// `ready a (1 attempt), b (0 attempts); done x; quarantine c (exhausted, 2 attempts)`.
fn describe_state(state: &Value) -> String {
    let attempts = |n: u64| format!("{n} attempt{}", if n == 1 { "" } else { "s" });
    let ready = jobs(state, "ready");
    let ready = if ready.is_empty() {
        "nothing".to_owned()
    } else {
        crate::text::listing::shown(&ready, |job| {
            format!("{} ({})", job.id, attempts(job.attempts))
        })
        .join(", ")
    };
    let done: Vec<String> = state
        .get("done")
        .and_then(Value::as_array)
        .map(|done| done.iter().map(yaml::flow).collect())
        .unwrap_or_default();
    let done = crate::text::listing::list(&done);
    let quarantine = jobs(state, "quarantine");
    let quarantine = if quarantine.is_empty() {
        "nothing".to_owned()
    } else {
        crate::text::listing::shown(&quarantine, |job| {
            format!("{} ({}, {})", job.id, job.reason, attempts(job.attempts))
        })
        .join(", ")
    };
    format!("ready {ready}; done {done}; quarantine {quarantine}")
}

/// The items of list `key` of a state view as the picture shows them: `a (1)` for a ready job
/// and its attempts, `c (exhausted)` for a quarantined one and its reason; the ends of a long
/// list, and how many between.
fn listed(state: &Value, key: &str) -> Vec<String> {
    if key == "done" {
        let done: Vec<Value> = state
            .get("done")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        return crate::text::listing::shown(&done, yaml::flow);
    }
    let jobs = jobs(state, key);
    crate::text::listing::shown(&jobs, |job| match key {
        "quarantine" => format!("{} ({})", job.id, job.reason),
        _ => format!("{} ({})", job.id, job.attempts),
    })
}

/// The colour of a call's arrow: what its answer says happened.
fn call_tone(method: &str, reply: &Reply) -> Tone {
    match (method, reply) {
        (_, Reply::Raised(_)) => Tone::Misuse,
        ("submit", _) => Tone::Delivery,
        ("replay", _) => Tone::Replay,
        ("process", Reply::Returned(Value::String(answer))) => match answer.as_str() {
            "done" => Tone::Success,
            "retry" => Tone::Retry,
            _ => Tone::Dead,
        },
        ("process", _) => Tone::Read,
        _ => Tone::Plain,
    }
}

/// How a diff and the timeline show JavaScript's `undefined`, which is not `null`.
const UNDEFINED: &str = "undefined";

/// The value of a `{returns: value}` answer.
fn returned(answer: &Value) -> Option<Value> {
    match answer {
        Value::Object(fields) if fields.len() == 1 => fields.get("returns").cloned(),
        _ => None,
    }
}

/// A returned value as a spec writes it: null is `none`.
fn as_written(value: &Value) -> Value {
    match value {
        Value::Null => json!("none"),
        other => other.clone(),
    }
}

impl Run<'_> {
    /// The rules that decide a call's answer, from what was asked and answered and what the
    /// queue held; keeps the counts of ready and quarantined jobs up to date.
    fn exercised(&mut self, method: &str, args: &[Value], reply: &Reply) -> Vec<&'static Rule> {
        let outcome = args.first().and_then(Value::as_str);
        let (ready, quarantined) = (self.ready, self.quarantined);
        let mut exercised = Vec::new();
        match (method, reply) {
            // submit's value is left free: `undefined` is as good as `null`.
            ("submit", Reply::Returned(_) | Reply::Undefined) => {
                // Appending shows only behind another job.
                if ready > 0 {
                    exercised.push(&rules::SUBMIT_TAIL);
                }
                self.ready += 1;
            }
            ("process", Reply::Raised(_)) => exercised.push(&rules::OUTCOME_VALIDATED_FIRST),
            ("process", Reply::Returned(Value::Null)) => {
                exercised.push(&rules::EMPTY_RETURNS_NONE);
                if quarantined > 0 {
                    exercised.push(&rules::QUARANTINE_STICKY);
                }
            }
            ("process", Reply::Returned(answer)) => {
                exercised.push(&rules::ATTEMPT_COUNTED_FIRST);
                if quarantined > 0 {
                    exercised.push(&rules::QUARANTINE_STICKY);
                }
                match (answer.as_str(), outcome) {
                    (Some("done"), _) => {
                        exercised.push(&rules::SUCCESS_DONE);
                        self.ready = ready.saturating_sub(1);
                    }
                    (Some("retry"), _) => exercised.push(&rules::TRANSIENT_RETRY_TAIL),
                    (Some("dead"), dead_by) => {
                        exercised.push(if dead_by == Some("permanent") {
                            &rules::PERMANENT_QUARANTINE
                        } else {
                            &rules::EXHAUSTED_QUARANTINE
                        });
                        exercised.push(&rules::ENTRY_RETAINS_DIAGNOSTICS);
                        self.ready = ready.saturating_sub(1);
                        self.quarantined += 1;
                    }
                    _ => {}
                }
            }
            ("replay", Reply::Returned(Value::Bool(true))) => {
                exercised.push(&rules::REPLAY_RESETS);
                self.quarantined = quarantined.saturating_sub(1);
                self.ready += 1;
            }
            ("replay", Reply::Returned(Value::Bool(false))) => {
                exercised.push(&rules::REPLAY_MISSING_FALSE)
            }
            ("mutate_state", _) => exercised.push(&rules::STATE_DEEP_COPY),
            _ => {}
        }
        exercised
    }
}

/// A reply as a spec writes its expectation: `{returns: value}` or `{raises: kind}`. The
/// error's class and message are added when the expectation is not that very raise, so a
/// diff says what was raised.
fn answer(reply: Reply, expected: &Value) -> Result<Value, Stop> {
    match reply {
        // A string of that spelling must not read as `undefined` in a diff.
        Reply::Returned(Value::String(text)) if text == UNDEFINED => {
            Ok(json!({ "returns": format!("the string {text:?}") }))
        }
        Reply::Returned(value) => Ok(json!({ "returns": value })),
        Reply::Undefined => Ok(json!({ "returns": UNDEFINED })),
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
        // Cut before it is rendered: a reply may be as long as a protocol line.
        Reply::Returned(value) => yaml::flow(&crate::text::truncate::value(value)),
        Reply::Undefined => UNDEFINED.to_owned(),
        Reply::Raised(raised) => format!(
            "raised {}",
            crate::text::truncate::line(&raised.describe(), 1024)
        ),
        Reply::Skipped(reason) => format!("skipped: {reason}"),
    }
}

/// The rule that decides what `step` must do, read from what the spec expects of it (which
/// the reference passes): a difference in the step breaks it. `None` for an `expect`, where
/// no single decision is known.
pub(crate) fn decision(step: &Step) -> Option<&'static Rule> {
    use super::spec::ProcessReturn;
    Some(match step {
        Step::Create(_) => &rules::MAX_ATTEMPTS_VALIDATED,
        Step::Submit(_) => &rules::SUBMIT_TAIL,
        Step::Process(process) => match (&process.raises, &process.returns) {
            (Some(_), _) => &rules::OUTCOME_VALIDATED_FIRST,
            (None, Some(returns)) => match returns.value {
                ProcessReturn::Done => &rules::SUCCESS_DONE,
                ProcessReturn::Retry => &rules::TRANSIENT_RETRY_TAIL,
                ProcessReturn::None => &rules::EMPTY_RETURNS_NONE,
                ProcessReturn::Dead if process.outcome.value == json!("permanent") => {
                    &rules::PERMANENT_QUARANTINE
                }
                ProcessReturn::Dead => &rules::EXHAUSTED_QUARANTINE,
            },
            (None, None) => return None,
        },
        Step::Replay(replay) if replay.returns.value => &rules::REPLAY_RESETS,
        Step::Replay(_) => &rules::REPLAY_MISSING_FALSE,
        Step::MutateState(_) => &rules::STATE_DEEP_COPY,
        Step::Expect(_) => return None,
    })
}
