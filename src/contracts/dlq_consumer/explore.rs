//! Exploring dlq-consumer (`dlqspec explore`): random scenarios drawn from the spec vocabulary,
//! crashes placed where they fire on the built-in consumer, and the ways to shrink a scenario.
//!
//! A case is drawn in two stages. First the parts: a budget (or none: the default), messages
//! with distinct bodies, scripts of every handler outcome kind, and steps (process, replay of
//! all, some, none, unknown or repeated ids, recover, restart, clock moves, sends of ids that
//! may already be dead-lettered). Then the crashes: each is placed at one effect of the
//! built-in consumer's run (before or after a receive, a handler call, an ack, a retry, a put,
//! a send, a removal), counted within its step, so it fires there; the next is placed in the
//! run that follows from the first. Scripts are then cut to the handler calls the built-in
//! made, some of those calls raise a subclass of the given error or take time (drawn last, see
//! `decorate`), and an `expect` after each call asks for every observation the rules pin (the
//! DLQ, what is ready and in flight, handler calls, and at the end the trace of effects).
//! Blessing fills them in.

use std::collections::HashSet;

use serde_json::Value;

use super::case_spec::{
    CallSpec, DlqSpec, FaultSpec, MessageSpec, Placeholder, ReplaySpec, StepSpec,
};
use super::handler::GivenError;
use super::journal::WorldEvent;
use super::record::Record;
use super::scenario::DlqScenario;
use super::spec::{self, Step};
use super::world::{CrashTiming, ScriptedCall, ScriptedOutcome};
use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{RunMode, ScenarioRun};
use crate::generate::case::{Case, Header, spec_text};
use crate::generate::rng::Rng;
use crate::generate::variants;
use crate::generate::writer::Block;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::text::source::SourceFile;
use crate::text::spec_error::SpecErrorKind;

/// A dlq-consumer scenario as explore builds and shrinks it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DlqCase {
    /// `None` makes the consumer without it: the default is what runs.
    pub(crate) max_attempts: Option<u64>,
    /// The messages in the queue at the start: id and body.
    pub(crate) messages: Vec<(String, String)>,
    /// The handler's outcomes per message id.
    pub(crate) script: Vec<(String, Vec<ScriptedCall>)>,
    pub(crate) steps: Vec<CaseStep>,
}

/// One step of a case; its expectations are placeholders until blessed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CaseStep {
    /// `process: ...`: what `process_one` returns is blessed.
    Process,
    /// `replay`, of every entry (`ids: None`) or of the ids given; what it returns is blessed,
    /// unless a crash is placed in it.
    Replay {
        ids: Option<Vec<String>>,
        crashes: bool,
    },
    Recover,
    Restart,
    Advance(u64),
    Send {
        id: String,
        body: String,
    },
    Fault {
        after: bool,
        call: &'static str,
        nth: u32,
    },
    /// An `expect` of the observations `keys` names.
    Expect(Keys),
}

impl CaseStep {
    /// Whether the step calls the consumer.
    fn calls(&self) -> bool {
        matches!(self, CaseStep::Process | CaseStep::Replay { .. })
    }
}

/// Which observations an `expect` asks for, a bit each, in `KEYS` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Keys(u8);

/// Every key an `expect` can ask for that a generated case uses. (`clock` is the harness's own
/// doing.)
const KEYS: [&str; 5] = ["dlq", "pending", "in_flight", "handler_calls", "trace"];

impl Keys {
    /// The state: everything but the trace, which only the last expectation asks for (it
    /// lists every effect from the start, so one copy shows every difference in it).
    pub(crate) const STATE: Keys = Keys(0b01111);
    pub(crate) const ALL: Keys = Keys(0b11111);

    fn has(self, key: usize) -> bool {
        self.0 & (1 << key) != 0
    }

    fn without(self, key: usize) -> Keys {
        Keys(self.0 & !(1 << key))
    }

    fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Only the named keys among these.
    fn only(self, names: &[String]) -> Keys {
        let mut kept = Keys(0);
        for (index, key) in KEYS.iter().enumerate() {
            if self.has(index) && names.iter().any(|name| name == key) {
                kept.0 |= 1 << index;
            }
        }
        kept
    }
}

/// The calls a fault can crash, and how often a generated crash picks each: the DLQ's puts and
/// removals and the acks are where the orders the rules pin live.
const FAULT_WEIGHTS: &[(&str, usize)] = &[
    ("dlq.put", 8),
    ("dlq.remove", 14),
    ("queue.ack", 4),
    ("queue.send", 12),
    ("queue.receive", 2),
    ("handler", 2),
    ("queue.retry", 2),
];

/// Error messages: an ordinary one, an empty one (`Class: `), one with `: ` in it, and one
/// longer than any sensible cut.
const MESSAGES: &[(usize, &str)] = &[
    (30, "db timeout"),
    (20, "negative price"),
    (12, ""),
    (14, "bad input: no sku"),
    (
        12,
        "upstream inventory service answered 503 Service Unavailable after three retries",
    ),
    (12, "lock wait exceeded"),
];

/// Classes of unexpected errors: Python builtins, and names JavaScript lacks (the shims make
/// them up), so `except Exception` and `instanceof Error` both see them.
const CLASSES: &[&str] = &["TypeError", "KeyError", "ValueError", "RuntimeError"];

/// Subclasses a `permanent` outcome may raise, and a `transient` one: a handler's own errors,
/// as a real one raises `OutOfStockError(PermanentError)`. None is named after a given class or
/// one of `CLASSES`, and no name extends both given errors, so each names one class in a spec.
const PERMANENT_SUBCLASSES: &[&str] = &["OutOfStockError", "InvalidOrderError"];
const TRANSIENT_SUBCLASSES: &[&str] = &["DbTimeoutError", "RateLimitedError"];

/// How often, in a hundred, a `transient` or `permanent` call raises a subclass of its given
/// error rather than the class itself: often enough that a consumer testing the class itself
/// meets one in a few cases, seldom enough that most errors stay the lesson's own.
const SUBCLASS_PERCENT: usize = 25;

/// How often, in a hundred, a handler call takes time (`takes`), and how long: a database
/// timeout returns late, which only a consumer reading the clock around the call sees.
const TAKES_PERCENT: usize = 15;
const TAKES: &[(usize, u64)] = &[(40, 1), (30, 3), (30, 7)];

const INITIAL_IDS: [&str; 3] = ["a", "b", "c"];
const LATER_IDS: [&str; 2] = ["d", "e"];
/// An id no step ever sends, for replays of unknown ids: a name every JavaScript object has,
/// so a replay that looks ids up with `id in entries` takes it for an entry.
const UNKNOWN_ID: &str = "constructor";

/// Draws one case; every case it returns makes a spec the built-in passes once blessed.
pub(crate) fn generate(rng: &mut Rng) -> DlqCase {
    for _ in 0..8 {
        let parts = draw(rng);
        if let Some(case) = resolve(parts, rng) {
            return case;
        }
    }
    // Never reached in practice: every draw resolves unless its scripts keep running out.
    DlqCase {
        max_attempts: None,
        messages: vec![("a".into(), "body-a".into())],
        script: vec![("a".into(), vec![ScriptedOutcome::Ok.into()])],
        steps: vec![CaseStep::Process, CaseStep::Expect(Keys::ALL)],
    }
}

fn outcome(rng: &mut Rng) -> ScriptedOutcome {
    let kind = rng.weighted(&[(24, 0), (28, 1), (15, 2), (12, 3), (21, 4)]);
    let message = rng.weighted(MESSAGES).to_owned();
    match kind {
        0 => ScriptedOutcome::Ok,
        1 => ScriptedOutcome::Transient(message.into()),
        2 => ScriptedOutcome::Permanent(message.into()),
        3 => ScriptedOutcome::Error {
            class: (*rng.pick(CLASSES)).to_owned(),
            message,
        },
        _ => ScriptedOutcome::Crash,
    }
}

fn script(rng: &mut Rng, length: usize) -> Vec<ScriptedCall> {
    (0..length).map(|_| outcome(rng).into()).collect()
}

/// The parts of a case, crashes not placed yet.
/// The random stream that decides whether a case's first body is empty.
const EMPTY_BODY_STREAM: u64 = 7;

fn draw(rng: &mut Rng) -> (DlqCase, usize) {
    let max_attempts = rng.weighted(&[
        (33, None),
        (22, Some(1)),
        (20, Some(2)),
        (12, Some(3)),
        (8, Some(4)),
        (5, Some(5)),
    ]);
    let initial = rng.weighted(&[(30, 1), (45, 2), (25, 3)]);
    let mut messages: Vec<(String, String)> = INITIAL_IDS[..initial]
        .iter()
        .map(|id| ((*id).to_owned(), format!("body-{id}")))
        .collect();
    // One case in eight gives its first message an empty body, which a consumer must process
    // like any other (drawn from a fork, so the other cases are the cases they were).
    if rng.fork(EMPTY_BODY_STREAM).below(8) == 0 {
        messages[0].1.clear();
    }
    let mut known: Vec<String> = messages.iter().map(|(id, _)| id.clone()).collect();
    let mut sends = 0;
    let mut steps = Vec::new();
    let count = rng.between(3, 12) as usize;
    for position in 0..count {
        // Replays mostly come later, once something may have been dead-lettered.
        let replays = 4 + 24 * position / count;
        match rng.weighted(&[(50, 0), (replays, 1), (10, 2), (6, 3), (8, 4), (8, 5)]) {
            0 => {
                steps.push(CaseStep::Process);
                // A crash, then the visibility timeout: the road to a poison pill.
                if rng.chance(25) {
                    steps.push(CaseStep::Recover);
                }
            }
            1 => {
                // Time passes before a replay, and the replayed message is processed: a fresh
                // delivery must not keep its old times.
                if rng.chance(25) {
                    steps.push(CaseStep::Advance(rng.between(1, 9)));
                }
                steps.push(CaseStep::Replay {
                    ids: replay_ids(rng, &known),
                    crashes: false,
                });
                if rng.chance(50) {
                    steps.push(CaseStep::Process);
                }
            }
            2 => steps.push(CaseStep::Recover),
            3 => steps.push(CaseStep::Restart),
            4 => steps.push(CaseStep::Advance(rng.between(1, 9))),
            _ => {
                let fresh = LATER_IDS.iter().find(|id| !known.iter().any(|k| k == *id));
                let id = match fresh {
                    Some(id) if rng.chance(30) => (*id).to_owned(),
                    _ => rng.pick(&known).clone(),
                };
                sends += 1;
                if !known.contains(&id) {
                    known.push(id.clone());
                }
                // A body of its own: the world finds a message by body.
                let body = format!("body-{id}-{}", sends + 1);
                steps.push(CaseStep::Send { id, body });
            }
        }
    }
    let mut script: Vec<(String, Vec<ScriptedCall>)> = known
        .iter()
        .map(|id| (id.clone(), self::script(rng, 8)))
        .collect();
    // Now and then a poison pill: a message that crashes the process on every delivery its
    // budget allows, so the deliveries after it are poison.
    if rng.chance(20) {
        let budget = max_attempts.unwrap_or(super::consumer::DEFAULT_MAX_ATTEMPTS) as usize;
        let pill = rng.below(initial);
        for outcome in script[pill].1.iter_mut().take(budget) {
            *outcome = ScriptedOutcome::Crash.into();
        }
    }
    let faults = rng.weighted(&[(35, 0), (40, 1), (25, 2)]);
    let case = DlqCase {
        max_attempts,
        messages,
        script,
        steps,
    };
    (case, faults)
}

/// What a replay asks for: everything, nothing, or some ids (maybe unknown, maybe repeated,
/// often against the order they were sent in, which is likely the DLQ's order).
fn replay_ids(rng: &mut Rng, known: &[String]) -> Option<Vec<String>> {
    match rng.weighted(&[(28, 0), (12, 1), (25, 2), (35, 3)]) {
        0 => None,
        1 => Some(Vec::new()),
        2 => {
            let mut ids: Vec<String> = known.iter().rev().cloned().collect();
            if ids.len() > 2 && rng.chance(50) {
                rng.shuffle(&mut ids);
            }
            Some(ids)
        }
        _ => {
            let mut ids: Vec<String> = (0..rng.between(1, 3))
                .map(|_| {
                    if rng.chance(15) {
                        UNKNOWN_ID.to_owned()
                    } else {
                        rng.pick(known).clone()
                    }
                })
                .collect();
            if rng.chance(25) {
                let again = rng.pick(&ids).clone();
                ids.push(again);
            }
            Some(ids)
        }
    }
}

/// Places the crashes of a drawn case where they fire on the built-in, cuts the scripts to the
/// calls it makes, and adds the expectations. `None` when the built-in cannot run it.
fn resolve((mut case, faults): (DlqCase, usize), rng: &mut Rng) -> Option<DlqCase> {
    let mut after_step = 0;
    for _ in 0..faults {
        let (_, record) = probe_extending(&mut case, rng)?;
        let Some((step, fault)) = place_crash(&case, &record, after_step, rng) else {
            break;
        };
        if let CaseStep::Replay { crashes, .. } = &mut case.steps[step] {
            *crashes = true;
        }
        case.steps.insert(step, fault);
        after_step = step + 2;
        // What a crash leaves in flight comes back after the visibility timeout: the
        // redelivery is where a consumer must find its own entry, or count a poison pill.
        if rng.chance(60) && case.steps.get(after_step) != Some(&CaseStep::Recover) {
            case.steps.insert(after_step, CaseStep::Recover);
            if !case.steps[after_step..].contains(&CaseStep::Process) || rng.chance(50) {
                case.steps.insert(after_step + 1, CaseStep::Process);
            }
        }
    }
    let (run, record) = probe_extending(&mut case, rng)?;
    if !matches!(run.outcome, Outcome::Passed) {
        return None;
    }
    case.trim_scripts(&record);
    decorate(&mut case, rng);
    case.add_expectations();
    Some(case)
}

/// Gives some of the calls the built-in made a subclass of their given error, and some a time
/// to take. Neither changes what the built-in does: a subclass is its given error to every
/// `except` and `instanceof` of it, and no rule waits on the clock (only the times an entry
/// and a delivery record move), so the crashes placed and the scripts cut stand. Drawn last,
/// from the rest of the case's stream, they leave every other part of a case as it would be
/// without them: a seed finds what it found before, and more.
fn decorate(case: &mut DlqCase, rng: &mut Rng) {
    for (_, calls) in &mut case.script {
        for call in calls {
            let subclasses = match &call.outcome {
                ScriptedOutcome::Permanent(_) => PERMANENT_SUBCLASSES,
                ScriptedOutcome::Transient(_) => TRANSIENT_SUBCLASSES,
                _ => &[],
            };
            if let ScriptedOutcome::Transient(error) | ScriptedOutcome::Permanent(error) =
                &mut call.outcome
                && rng.chance(SUBCLASS_PERCENT)
            {
                error.subclass = Some((*rng.pick(subclasses)).into());
            }
            if rng.chance(TAKES_PERCENT) {
                call.takes = rng.weighted(TAKES);
            }
        }
    }
}

/// Runs the case's probe on the built-in, giving every script more outcomes while the
/// built-in runs out of them.
fn probe_extending(case: &mut DlqCase, rng: &mut Rng) -> Option<(ScenarioRun, Record)> {
    for _ in 0..3 {
        let (run, record) = probe(case, &mut Builtin::new()).ok()?;
        match &run.outcome {
            Outcome::SpecError(error) if error.kind == SpecErrorKind::Incomplete => {
                for (_, outcomes) in &mut case.script {
                    outcomes.extend(script(rng, 8));
                }
            }
            Outcome::SpecError(_) => return None,
            _ => return Some((run, record)),
        }
    }
    None
}

/// Chooses one effect of the built-in's run in a step from `after_step` on, and the fault
/// that crashes there: `(step, fault)`, the fault to be armed right before that step.
fn place_crash(
    case: &DlqCase,
    record: &Record,
    after_step: usize,
    rng: &mut Rng,
) -> Option<(usize, CaseStep)> {
    let journal = record.world.journal();
    let budget = case
        .max_attempts
        .unwrap_or(super::consumer::DEFAULT_MAX_ATTEMPTS);
    let mut weighted: Vec<(usize, CrashAt)> = Vec::new();
    for (index, facts) in record.steps.iter().enumerate().skip(after_step) {
        if !case.steps.get(index).is_some_and(CaseStep::calls) {
            continue;
        }
        let effects = &journal[facts.journal.clone()];
        // A poison pill's dead-lettering is rare and full of edges: crash it more often.
        let poison = effects.iter().any(|happening| {
            matches!(happening, WorldEvent::Received { receive_count, .. } if *receive_count > budget)
        });
        let sends = effects
            .iter()
            .filter(|h| matches!(h, WorldEvent::Sent { .. }))
            .count();
        let mut seen: Vec<&'static str> = Vec::new();
        for at in facts.journal.clone() {
            let Some(call) = effect_call(&journal[at]) else {
                continue;
            };
            seen.push(call);
            let nth = seen.iter().filter(|c| **c == call).count();
            let timings = match matches!(case.steps[index], CaseStep::Replay { .. }) {
                false => Some(None),
                true => replay_crash(call, nth, sends),
            };
            let Some(timing) = timings else {
                continue;
            };
            let weight = FAULT_WEIGHTS
                .iter()
                .find(|(known, _)| *known == call)
                .map_or(1, |(_, w)| *w);
            let weight = if poison { weight * 6 } else { weight };
            weighted.push((weight, (index, at, call, timing)));
        }
    }
    if weighted.is_empty() {
        return None;
    }
    let (step, at, call, timing) = rng.weighted(&weighted);
    let start = record.steps[step].journal.start;
    let nth = journal[start..=at]
        .iter()
        .filter(|happening| effect_call(happening) == Some(call))
        .count() as u32;
    let fault = CaseStep::Fault {
        after: timing.unwrap_or_else(|| rng.chance(50)),
        call,
        nth,
    };
    Some((step, fault))
}

/// A place for a crash: the step, the journal index of the effect, its call, and the timings
/// allowed there (`None` for both).
type CrashAt = (usize, usize, &'static str, Option<bool>);

/// Where a crash may land in a replay that sends `sends` ids, at its `nth` effect `call`:
/// `Some(None)` for before or after it, `Some(Some(after))` for one of them, `None` for
/// neither. The rules let a consumer remove one id before or after sending the next, so with
/// two ids or more only the points before any removal (around the first send) and after the
/// last removal are the same for every correct consumer.
fn replay_crash(call: &str, nth: usize, sends: usize) -> Option<Option<bool>> {
    match (call, nth) {
        _ if sends <= 1 => Some(None),
        ("queue.send", 1) => Some(None),
        ("dlq.remove", last) if last == sends => Some(Some(true)),
        _ => None,
    }
}

/// The call a fault names for an effect of the journal; `None` for what no fault can crash.
pub(crate) fn effect_call(happening: &WorldEvent) -> Option<&'static str> {
    Some(match happening {
        WorldEvent::Received { .. } => "queue.receive",
        WorldEvent::Handled { .. } | WorldEvent::Unscripted { .. } => "handler",
        WorldEvent::Acked { .. } => "queue.ack",
        WorldEvent::Retried { .. } => "queue.retry",
        WorldEvent::Sent { .. } => "queue.send",
        WorldEvent::Put { .. } => "dlq.put",
        WorldEvent::Removed { removed: true, .. } => "dlq.remove",
        _ => return None,
    })
}

/// Loads the case's probe (no expectations, no compared returns) and runs it on
/// `implementation`, keeping the world and what each step did.
pub(crate) fn probe(
    case: &DlqCase,
    implementation: &mut dyn Implementation,
) -> Result<(ScenarioRun, Record), String> {
    let header = Header {
        contract: super::NAME,
        name: "probe",
        description: "",
        rules: &[],
        schema_line: false,
    };
    let body = serde_json::to_value(case.spec(true)).unwrap_or_default();
    let text = spec_text(&header, &body);
    let scenario: DlqScenario = super::loading::load(&SourceFile::from_text("probe.yaml", text))
        .map_err(|error| error.to_string())?;
    Ok(scenario.execute(implementation, RunMode::Check))
}

impl DlqCase {
    /// The ids the case sends: its messages, then those `send` steps add.
    fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.messages.iter().map(|(id, _)| id.clone()).collect();
        for step in &self.steps {
            if let CaseStep::Send { id, .. } = step
                && !ids.contains(id)
            {
                ids.push(id.clone());
            }
        }
        ids
    }

    /// Cuts each script to the handler calls `record`'s run made, dropping empty ones.
    pub(crate) fn trim_scripts(&mut self, record: &Record) {
        let calls = record.world.handler_calls();
        for (id, outcomes) in &mut self.script {
            let made = calls.get(id).copied().unwrap_or(0) as usize;
            outcomes.truncate(made);
        }
        self.script.retain(|(_, outcomes)| !outcomes.is_empty());
    }

    /// An `expect` of the state after every call of the consumer, and of everything (the trace
    /// too) at the end.
    pub(crate) fn add_expectations(&mut self) {
        let mut steps = Vec::with_capacity(self.steps.len() * 2);
        for step in self.steps.drain(..) {
            let calls = step.calls();
            steps.push(step);
            if calls {
                steps.push(CaseStep::Expect(Keys::STATE));
            }
        }
        match steps.last_mut() {
            Some(CaseStep::Expect(keys)) => *keys = Keys::ALL,
            _ => steps.push(CaseStep::Expect(Keys::ALL)),
        }
        self.steps = steps;
    }

    /// The spec after the header. A probe compares nothing: `process: any`, replays without
    /// `returns`, no expectations; otherwise every answer is a placeholder to bless.
    pub(crate) fn spec(&self, probe: bool) -> DlqSpec<'_> {
        let ids = self.ids();
        let handler = self
            .script
            .iter()
            .filter(|(id, outcomes)| !outcomes.is_empty() && ids.contains(id))
            .map(|(id, outcomes)| (id.as_str(), outcomes.iter().map(CallSpec::of).collect()))
            .collect();
        let steps = self.steps.iter().filter_map(|step| {
            Some(match step {
                CaseStep::Process => StepSpec::Process(if probe { "any" } else { "ok" }),
                CaseStep::Replay { ids, crashes } => StepSpec::Replay(ReplaySpec {
                    ids: ids.as_deref(),
                    crash: (!probe && *crashes).then_some(true),
                    returns: (!probe && !*crashes).then_some(Placeholder::List),
                }),
                CaseStep::Recover => StepSpec::Recover,
                CaseStep::Restart => StepSpec::Restart,
                CaseStep::Advance(by) => StepSpec::Advance(*by),
                CaseStep::Send { id, body } => StepSpec::Send(MessageSpec { id, body }),
                CaseStep::Fault { after, call, nth } => StepSpec::Fault(FaultSpec {
                    crash: if *after { "after" } else { "before" },
                    call,
                    nth: (*nth > 1).then_some(*nth),
                }),
                CaseStep::Expect(_) if probe => return None,
                CaseStep::Expect(keys) => StepSpec::Expect(Block(
                    KEYS.iter()
                        .enumerate()
                        .filter(|(index, _)| keys.has(*index))
                        .map(|(_, key)| {
                            let empty = match *key {
                                "handler_calls" => Placeholder::Map,
                                _ => Placeholder::List,
                            };
                            (*key, empty)
                        })
                        .collect(),
                )),
            })
        });
        DlqSpec {
            max_attempts: self.max_attempts,
            messages: self
                .messages
                .iter()
                .map(|(id, body)| MessageSpec { id, body })
                .collect(),
            handler,
            steps: Block(steps.collect()),
        }
    }

    /// Why a crash of this case would not land at the same point for every correct consumer,
    /// if one would not: a crash inside a replay of several ids, between the first send and
    /// the last removal, where the rules leave the order of one id's removal and the next
    /// id's send free (`replay_crash`). Read from the built-in's run.
    pub(crate) fn unsound(&self) -> Option<String> {
        if !self
            .steps
            .iter()
            .any(|s| matches!(s, CaseStep::Fault { .. }))
        {
            return None;
        }
        let (_, record) = probe(self, &mut Builtin::new()).ok()?;
        let journal = record.world.journal();
        let steps: Vec<&CaseStep> = self
            .steps
            .iter()
            .filter(|s| !matches!(s, CaseStep::Expect(_)))
            .collect();
        for (index, facts) in record.steps.iter().enumerate() {
            let Some(CaseStep::Replay { ids, .. }) = steps.get(index) else {
                continue;
            };
            let effects = &journal[facts.journal.clone()];
            let Some(crash) = effects
                .iter()
                .position(|h| matches!(h, WorldEvent::Crashed { .. }))
            else {
                continue;
            };
            let WorldEvent::Crashed { call, timing, .. } = &effects[crash] else {
                continue;
            };
            let in_dlq = dead_lettered(&journal[..facts.journal.start]);
            let mut selected: Vec<&String> = match ids {
                None => in_dlq.iter().collect(),
                Some(ids) => ids.iter().filter(|id| in_dlq.contains(id)).collect(),
            };
            let mut seen = HashSet::new();
            selected.retain(|id| seen.insert(*id));
            let done = effects[..crash]
                .iter()
                .filter(|h| effect_call(h) == Some(call.as_str()))
                .count();
            let nth = match timing {
                CrashTiming::After => done,
                CrashTiming::Before => done + 1,
            };
            let allowed = replay_crash(call, nth, selected.len());
            let after = *timing == CrashTiming::After;
            if !matches!(allowed, Some(None)) && allowed != Some(Some(after)) {
                return Some(format!(
                    "the crash {} {call} lands inside a replay of {} ids (step {}), where correct consumers may remove one id before or after sending the next",
                    timing.word(),
                    selected.len(),
                    index + 1
                ));
            }
        }
        None
    }

    fn with_steps(&self, steps: Vec<CaseStep>) -> DlqCase {
        DlqCase {
            steps,
            ..self.clone()
        }
    }

    /// The case without message `id`: its script and its sends go too, and its place in
    /// replays unless `keep_replays`.
    fn without_message(&self, id: &str, keep_replays: bool) -> DlqCase {
        let mut smaller = self.clone();
        smaller.messages.retain(|(other, _)| other != id);
        smaller.script.retain(|(other, _)| other != id);
        smaller
            .steps
            .retain(|step| !matches!(step, CaseStep::Send { id: sent, .. } if sent == id));
        for step in &mut smaller.steps {
            if let CaseStep::Replay { ids: Some(ids), .. } = step
                && !keep_replays
            {
                ids.retain(|other| other != id);
            }
        }
        smaller
    }
}

/// The ids in the DLQ after `journal`, in put order, each once.
fn dead_lettered(journal: &[WorldEvent]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for happening in journal {
        match happening {
            WorldEvent::Put { id, .. } if !ids.contains(id) => ids.push(id.clone()),
            WorldEvent::Removed {
                id, removed: true, ..
            } => ids.retain(|other| other != id),
            _ => {}
        }
    }
    ids
}

impl Case for DlqCase {
    fn body(&self) -> Value {
        serde_json::to_value(self.spec(false)).unwrap_or_default()
    }

    fn unsound(&self) -> Option<String> {
        DlqCase::unsound(self)
    }

    fn steps(&self) -> usize {
        self.steps.len()
    }

    fn shrinks(&self) -> Vec<Box<dyn Case>> {
        let mut smaller: Vec<DlqCase> = variants::chunks_removed(&self.steps)
            .into_iter()
            .map(|steps| self.with_steps(steps))
            .collect();
        for (id, _) in &self.messages {
            smaller.push(self.without_message(id, false));
            // A replay may ask for an id the queue never had: that can be what differs.
            smaller.push(self.without_message(id, true));
        }
        // Outcomes: each one left out (the last first), then each made plainer.
        for (which, (_, outcomes)) in self.script.iter().enumerate() {
            for index in (0..outcomes.len()).rev() {
                let mut fewer = self.clone();
                fewer.script[which].1.remove(index);
                smaller.push(fewer);
            }
        }
        for (which, (_, outcomes)) in self.script.iter().enumerate() {
            for (index, outcome) in outcomes.iter().enumerate() {
                for plainer in plainer_outcomes(outcome) {
                    let mut simpler = self.clone();
                    simpler.script[which].1[index] = plainer;
                    smaller.push(simpler);
                }
            }
        }
        if let Some(max) = self.max_attempts.filter(|max| *max > 1) {
            for fewer in [1, max - 1] {
                smaller.push(DlqCase {
                    max_attempts: Some(fewer),
                    ..self.clone()
                });
            }
        }
        for (index, step) in self.steps.iter().enumerate() {
            let mut variants = Vec::new();
            match step {
                CaseStep::Advance(by) if *by > 1 => variants.push(CaseStep::Advance(1)),
                CaseStep::Replay {
                    ids: Some(ids),
                    crashes,
                } => {
                    for left_out in 0..ids.len() {
                        let mut fewer = ids.clone();
                        fewer.remove(left_out);
                        variants.push(CaseStep::Replay {
                            ids: Some(fewer),
                            crashes: *crashes,
                        });
                    }
                }
                CaseStep::Fault { after, call, nth } if *nth > 1 => {
                    variants.push(CaseStep::Fault {
                        after: *after,
                        call,
                        nth: nth - 1,
                    });
                }
                CaseStep::Expect(keys) if keys.count() > 1 => {
                    for key in 0..KEYS.len() {
                        if keys.has(key) {
                            variants.push(CaseStep::Expect(keys.without(key)));
                        }
                    }
                }
                _ => {}
            }
            for steps in variants::with_step_replaced(&self.steps, index, variants) {
                smaller.push(self.with_steps(steps));
            }
        }
        variants::boxed_except(smaller, self)
    }

    fn focused(&self, index: usize, keys: &[String]) -> Box<dyn Case> {
        let mut steps: Vec<CaseStep> = Vec::with_capacity(index + 1);
        for (at, step) in self.steps.iter().take(index + 1).enumerate() {
            match step {
                CaseStep::Expect(kept) if at == index => {
                    let only = kept.only(keys);
                    steps.push(CaseStep::Expect(if only.count() == 0 {
                        *kept
                    } else {
                        only
                    }));
                }
                CaseStep::Expect(_) => {}
                other => steps.push(other.clone()),
            }
        }
        Box::new(self.with_steps(steps))
    }
}

/// Plainer calls to try in place of `call`, each plainer in one way only, so that what the
/// failure needs of the call stays and the rest goes: instant, or a single tick, for a call
/// that takes time; success; a permanent error for a crash; a transient error for an
/// unexpected one; the given class itself for a subclass of it; a short message.
fn plainer_outcomes(call: &ScriptedCall) -> Vec<ScriptedCall> {
    let long = |message: &str| message.chars().count() > 1;
    let mut calls: Vec<ScriptedCall> = Vec::new();
    let outcome = &call.outcome;
    if call.takes > 0 {
        calls.push(ScriptedCall::taking(outcome.clone(), 0));
    }
    if call.takes > 1 {
        calls.push(ScriptedCall::taking(outcome.clone(), 1));
    }
    let mut plainer: Vec<ScriptedOutcome> = Vec::new();
    if *outcome != ScriptedOutcome::Ok {
        plainer.push(ScriptedOutcome::Ok);
    }
    match outcome {
        ScriptedOutcome::Crash => plainer.push(ScriptedOutcome::Permanent("e".into())),
        ScriptedOutcome::Transient(error) | ScriptedOutcome::Permanent(error) => {
            let same = |error: GivenError| match outcome {
                ScriptedOutcome::Permanent(_) => ScriptedOutcome::Permanent(error),
                _ => ScriptedOutcome::Transient(error),
            };
            if error.subclass.is_some() {
                plainer.push(same(GivenError::new(error.message.clone())));
            }
            if long(&error.message) {
                plainer.push(same(GivenError {
                    message: "e".into(),
                    subclass: error.subclass.clone(),
                }));
            }
        }
        ScriptedOutcome::Error { message, class } => {
            plainer.push(ScriptedOutcome::Transient(message.clone().into()));
            if long(message) {
                plainer.push(ScriptedOutcome::Error {
                    class: class.clone(),
                    message: "e".into(),
                });
            }
        }
        ScriptedOutcome::Ok => {}
    }
    calls.extend(
        plainer
            .into_iter()
            .map(|plainer| ScriptedCall::taking(plainer, call.takes)),
    );
    calls
}

/// A loaded spec as a case: its steps and scripts, without its expectations.
pub(crate) fn case_of(scenario: &DlqScenario) -> DlqCase {
    let mut ids: Vec<String> = scenario.messages.iter().map(|m| m.id.clone()).collect();
    let mut steps = Vec::new();
    for (_, step) in &scenario.steps {
        steps.push(match step {
            Step::Process(_) => CaseStep::Process,
            Step::Replay(replay) => CaseStep::Replay {
                ids: replay.ids.clone(),
                crashes: replay.crash,
            },
            Step::Recover => CaseStep::Recover,
            Step::Restart => CaseStep::Restart,
            Step::Advance(by) => CaseStep::Advance(*by),
            // Loading expands `repeat` into the steps it repeats: none is left to map.
            Step::Repeat(_) => unreachable!("a loaded scenario holds no `repeat` step"),
            Step::Send(message) => {
                if !ids.contains(&message.id) {
                    ids.push(message.id.clone());
                }
                CaseStep::Send {
                    id: message.id.clone(),
                    body: message.body.clone(),
                }
            }
            Step::Fault(fault) => CaseStep::Fault {
                after: fault.crash == CrashTiming::After,
                call: spec::EFFECT_CALLS
                    .iter()
                    .find(|call| **call == fault.call.value)
                    .copied()
                    .unwrap_or("handler"),
                nth: fault.nth.as_ref().map_or(1, |n| n.value),
            },
            Step::Expect(_) => continue,
        });
    }
    let script = ids
        .iter()
        .filter_map(|id| Some((id.clone(), scenario.script.get(id)?.to_vec())))
        .collect();
    DlqCase {
        max_attempts: scenario.max_attempts,
        messages: scenario
            .messages
            .iter()
            .map(|m| (m.id.clone(), m.body.clone()))
            .collect(),
        script,
        steps,
    }
}

/// Which messages the case's bodies belong to, to check no two share one.
#[cfg(test)]
fn bodies(case: &DlqCase) -> Vec<String> {
    let mut bodies: Vec<String> = case.messages.iter().map(|(_, b)| b.clone()).collect();
    for step in &case.steps {
        if let CaseStep::Send { body, .. } = step {
            bodies.push(body.clone());
        }
    }
    bodies
}

/// Every draw's crashes fire on the built-in, and its spec loads.
#[cfg(test)]
mod tests {
    use super::super::handler::OUTCOME_WORDS;
    use super::*;
    use crate::explore::case::{CaseVerdict, judge};
    use crate::generate::variants;
    use crate::generate::writer;

    /// A handler call as a spec writes it in its list.
    fn outcome_text(call: &ScriptedCall) -> String {
        let list = writer::write(&[CallSpec::of(call)]);
        list.trim_end()
            .strip_prefix('[')
            .and_then(|list| list.strip_suffix(']'))
            .unwrap_or(&list)
            .to_owned()
    }

    #[test]
    fn every_generated_case_passes_on_the_built_in_once_blessed() {
        for number in 0..150 {
            let case = generate(&mut Rng::for_case(3, "dlq-consumer", number));
            let text = variants::draft("dlq-consumer", &case);
            let judged = judge("dlq-consumer", text.clone(), &mut Builtin::new());
            assert!(matches!(judged, CaseVerdict::Passed), "{judged:?}\n{text}");
            assert_eq!(case.unsound(), None, "{text}");
            let distinct: HashSet<String> = bodies(&case).into_iter().collect();
            assert_eq!(distinct.len(), bodies(&case).len(), "{text}");
        }
    }

    #[test]
    fn generated_cases_cover_the_vocabulary() {
        let cases: Vec<DlqCase> = (0..300)
            .map(|n| generate(&mut Rng::for_case(11, "dlq-consumer", n)))
            .collect();
        let any = |check: &dyn Fn(&DlqCase) -> bool| cases.iter().any(check);
        let any_step = |wanted: &dyn Fn(&CaseStep) -> bool| {
            cases.iter().any(|case| case.steps.iter().any(wanted))
        };
        assert!(any(&|c| c.max_attempts.is_none()));
        assert!(any(&|c| c.max_attempts == Some(1)));
        for call in [
            "dlq.put",
            "dlq.remove",
            "queue.ack",
            "queue.send",
            "handler",
        ] {
            for after in [true, false] {
                assert!(
                    any_step(
                        &|s| matches!(s, CaseStep::Fault { call: c, after: a, .. } if *c == call && *a == after)
                    ),
                    "no crash {after} {call}"
                );
            }
        }
        assert!(any_step(&|s| matches!(
            s,
            CaseStep::Replay { ids: None, .. }
        )));
        assert!(any_step(
            &|s| matches!(s, CaseStep::Replay { ids: Some(ids), .. } if ids.is_empty())
        ));
        assert!(any_step(
            &|s| matches!(s, CaseStep::Replay { ids: Some(ids), .. } if ids.iter().any(|i| i == UNKNOWN_ID))
        ));
        assert!(any_step(&|s| matches!(
            s,
            CaseStep::Replay { crashes: true, .. }
        )));
        for kind in 0..5 {
            assert!(
                any(&|c| c.script.iter().flat_map(|(_, o)| o).any(|o| matches!(
                    (kind, &o.outcome),
                    (0, ScriptedOutcome::Ok)
                        | (1, ScriptedOutcome::Transient(_))
                        | (2, ScriptedOutcome::Permanent(_))
                        | (3, ScriptedOutcome::Error { .. })
                        | (4, ScriptedOutcome::Crash)
                ))),
                "no outcome of kind {kind}"
            );
        }
        // Subclasses of both given errors, and calls that take time, of every outcome.
        let calls = || {
            cases
                .iter()
                .flat_map(|c| c.script.iter().flat_map(|(_, o)| o))
        };
        for subclasses in [PERMANENT_SUBCLASSES, TRANSIENT_SUBCLASSES] {
            for class in subclasses {
                assert!(
                    calls().any(|call| call.outcome.label() == *class),
                    "no {class}"
                );
            }
        }
        for kind in OUTCOME_WORDS {
            assert!(
                calls().any(|call| call.takes > 0 && outcome_text(call).starts_with(kind)),
                "no {kind} that takes time"
            );
        }
        // A send of an id the queue already had: it may be in the DLQ by then.
        assert!(any(&|c| c.steps.iter().any(
            |s| matches!(s, CaseStep::Send { id, .. } if c.messages.iter().any(|(m, _)| m == id))
        )));
    }

    #[test]
    fn subclasses_and_times_are_drawn_last_and_change_nothing_else() {
        let mut decorated = 0;
        for number in 0..80 {
            let case = generate(&mut Rng::for_case(5, "dlq-consumer", number));
            let plain = DlqCase {
                script: case
                    .script
                    .iter()
                    .map(|(id, calls)| {
                        let calls = calls.iter().map(|call| {
                            let mut outcome = call.outcome.clone();
                            if let ScriptedOutcome::Transient(error)
                            | ScriptedOutcome::Permanent(error) = &mut outcome
                            {
                                error.subclass = None;
                            }
                            outcome.into()
                        });
                        (id.clone(), calls.collect())
                    })
                    .collect(),
                ..case.clone()
            };
            decorated += usize::from(plain != case);
            // The built-in makes the same effects with and without them: only times move.
            let effects = |case: &DlqCase| {
                let (_, record) = probe(case, &mut Builtin::new()).expect("loads");
                let journal = record.world.journal();
                journal.iter().filter_map(effect_call).collect::<Vec<_>>()
            };
            assert_eq!(
                effects(&plain),
                effects(&case),
                "{}",
                variants::draft("dlq-consumer", &case)
            );
        }
        assert!(decorated > 20, "only {decorated} of 80 cases decorated");
    }

    #[test]
    fn a_plainer_call_is_plainer_in_one_way_and_keeps_the_rest() {
        let out_of_stock = ScriptedCall::taking(
            ScriptedOutcome::Permanent(GivenError::subclass("OutOfStockError", "no sku")),
            7,
        );
        let written: Vec<String> = plainer_outcomes(&out_of_stock)
            .iter()
            .map(outcome_text)
            .collect();
        assert_eq!(
            written,
            [
                "permanent: {message: no sku, class: OutOfStockError}",
                "permanent: {message: no sku, class: OutOfStockError, takes: 1}",
                "ok: {takes: 7}",
                "permanent: {message: no sku, takes: 7}",
                "permanent: {message: e, class: OutOfStockError, takes: 7}",
            ]
        );
        let key_error = ScriptedCall::from(ScriptedOutcome::Error {
            class: "KeyError".into(),
            message: "sku".into(),
        });
        let written: Vec<String> = plainer_outcomes(&key_error)
            .iter()
            .map(outcome_text)
            .collect();
        assert_eq!(
            written,
            [
                "ok",
                "transient: sku",
                "error: {class: KeyError, message: e}"
            ]
        );
        assert_eq!(plainer_outcomes(&ScriptedOutcome::Ok.into()), []);
    }

    #[test]
    fn a_case_with_subclasses_and_times_writes_a_spec_that_reads_them_back() {
        let case = DlqCase {
            max_attempts: Some(1),
            messages: vec![("a".into(), "body-a".into()), ("b".into(), "body-b".into())],
            script: vec![
                (
                    "a".into(),
                    vec![ScriptedCall::taking(
                        ScriptedOutcome::Transient(GivenError::subclass(
                            "DbTimeoutError",
                            "db timeout",
                        )),
                        3,
                    )],
                ),
                (
                    "b".into(),
                    vec![
                        ScriptedOutcome::Permanent(GivenError::subclass("OutOfStockError", ""))
                            .into(),
                    ],
                ),
            ],
            steps: vec![
                CaseStep::Process,
                CaseStep::Process,
                CaseStep::Expect(Keys::ALL),
            ],
        };
        let text = variants::draft("dlq-consumer", &case);
        assert!(
            text.contains("  a: [transient: {message: db timeout, class: DbTimeoutError, takes: 3}]\n  b: [permanent: {message: \"\", class: OutOfStockError}]\n"),
            "{text}"
        );
        let scenario = super::super::loading::load(&SourceFile::from_text("t.yaml", text.as_str()))
            .expect("loads");
        assert_eq!(case_of(&scenario).script, case.script);
        // The built-in runs it to the end: both calls dead-lettered, `a` when its call returns.
        let (run, record) = probe(&case, &mut Builtin::new()).expect("loads");
        assert!(matches!(run.outcome, Outcome::Passed), "{:?}", run.outcome);
        let failed_at: Vec<u64> = record
            .world
            .dlq()
            .iter()
            .filter_map(|entry| entry.get("failed_at")?.as_u64())
            .collect();
        assert_eq!(failed_at, [3, 3], "{text}");
    }

    #[test]
    fn focusing_keeps_the_steps_up_to_the_difference_and_only_its_keys() {
        let case = DlqCase {
            max_attempts: None,
            messages: vec![("a".into(), "body-a".into())],
            script: vec![("a".into(), vec![ScriptedOutcome::Ok.into()])],
            steps: vec![
                CaseStep::Process,
                CaseStep::Expect(Keys::STATE),
                CaseStep::Recover,
                CaseStep::Expect(Keys::ALL),
                CaseStep::Process,
            ],
        };
        let focused = writer::write_value(&case.focused(3, &["pending".to_owned()]).body());
        assert!(
            focused.ends_with("  - process: ok\n  - recover\n  - expect:\n      pending: []\n"),
            "{focused}"
        );
        let at_process = writer::write_value(&case.focused(0, &[]).body());
        assert!(
            at_process.ends_with("steps:\n  - process: ok\n"),
            "{at_process}"
        );
    }

    #[test]
    fn a_loaded_spec_becomes_a_case_without_its_expectations() {
        let text = "contract: dlq-consumer\nname: t\nmax_attempts: 2\nmessages: [{id: a, body: x}]\nhandler: {a: [crash, ok], b: [ok]}\nsteps:\n  - fault: {crash: after, call: dlq.put, nth: 2}\n  - process: crash\n  - expect: {in_flight: [a]}\n  - send: {id: b, body: y}\n  - replay: {ids: [a], crash: true}\n";
        let scenario =
            super::super::loading::load(&SourceFile::from_text("t.yaml", text)).expect("loads");
        let case = case_of(&scenario);
        assert_eq!(case.max_attempts, Some(2));
        assert_eq!(
            case.steps,
            [
                CaseStep::Fault {
                    after: true,
                    call: "dlq.put",
                    nth: 2
                },
                CaseStep::Process,
                CaseStep::Send {
                    id: "b".into(),
                    body: "y".into()
                },
                CaseStep::Replay {
                    ids: Some(vec!["a".into()]),
                    crashes: true
                },
            ]
        );
        assert_eq!(case.script.len(), 2);
    }
}
