//! Where a dlq-consumer implementation first departs from the reference: the first effect,
//! returned value or raised error of a failing run that the built-in reference, run on the
//! same scenario, does not make at that point; worded in one line, with the rule that decides
//! what the reference does there, and the classic mistake of the catalogue that departs alike:
//! this contract's side of `contracts/departure.rs`, which finds and assembles it.
//!
//! Both runs act on the same world until the departure, so their journals agree step by step
//! until then. A step is compared by its effects only (reads are any implementation's own
//! business), in the orders the contract pins: effects it lets commute (`trace::commute`) are
//! put in the reference's order first, as a `trace` expectation compares them.

use serde_json::Value;

use super::contract::DlqConsumerContract;
use super::journal::WorldEvent;
use super::record::{Record, RecordKeeping, StepMark};
use super::rules;
use super::scenario::DlqScenario;
use super::spec::entry_in;
use super::world::CrashTiming;
use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{Contract, RunMode};
use crate::contracts::departure::{self, Parts};
use crate::model::cause::{Departure, Ids, told_and_shaped};
use crate::model::implementation::{Implementation, Naming, Raised};
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::text::yaml;

/// The most journal entries the reference's run may hold for the catalogue of classic
/// mistakes to be tried on the scenario: each mistake runs it once more.
const MAX_CATALOGUE_JOURNAL: usize = 20_000;

/// A run kept for a departure: its record, with a mark of every step, and how the
/// implementation spells keys.
pub(crate) struct Marked {
    record: Record,
    naming: Naming,
}

/// The departure of the run `record` of an implementation that spells keys as `naming`,
/// against the reference's run of `scenario`. `None` when the reference does not pass the
/// scenario (then it is the spec that is wrong) or no step of the run departs.
pub(crate) fn find(scenario: &DlqScenario, record: Record, naming: Naming) -> Option<Departure> {
    let reference = departure::reference(scenario)?;
    if let Some(raised) = &record.constructor_raised {
        let (told, shape) = told_and_shaped(|ids| {
            let error = ids.raised(raised);
            format!("making a DLQConsumer, yours raised {error}; the reference makes one")
        });
        return Some(Departure {
            rule: None,
            key: shape.clone(),
            told,
            shape,
            mistakes: Vec::new(),
            raised: Some(raised.clone()),
            step: None,
        });
    }
    let ours = Marked { record, naming };
    departure::departure(scenario, &reference, &ours).map(|(departure, _)| departure)
}

impl Parts for DlqScenario {
    type Run = Marked;
    type Parting<'r> = StepDeparture<'r>;

    fn contract(&self) -> &'static dyn Contract {
        &DlqConsumerContract
    }

    fn reference(&self) -> Builtin {
        Builtin::new()
    }

    /// Keeps a mark of every step and, for the run played whole (the reference's), the rules
    /// noted in each, which `rule_of` reads.
    fn marked(
        &self,
        implementation: &mut dyn Implementation,
        until: Option<usize>,
    ) -> (Outcome, Marked) {
        let keep = RecordKeeping {
            marks: true,
            rules: until.is_none(),
            until,
            ..RecordKeeping::default()
        };
        let (run, record) =
            DlqScenario::play(self, implementation, RunMode::Check, keep, Box::default());
        // The built-in spells keys in snake case.
        (
            run.outcome,
            Marked {
                record,
                naming: Naming::Snake,
            },
        )
    }

    fn tries_mistakes(&self, reference: &Marked) -> bool {
        reference.record.world.journal().len() <= MAX_CATALOGUE_JOURNAL
    }

    fn parting<'r>(&self, reference: &'r Marked, ours: &'r Marked) -> Option<StepDeparture<'r>> {
        first(&reference.record, &ours.record, ours.naming)
    }

    fn step(&self, found: &StepDeparture) -> Option<usize> {
        Some(found.ours.index)
    }

    /// The very same in the step: the same effects in the same order, the same entries put,
    /// the same value returned.
    fn alike(
        &self,
        (one, one_found): (&Marked, &StepDeparture),
        (other, other_found): (&Marked, &StepDeparture),
    ) -> bool {
        let (one_mark, other_mark) = (one_found.ours, other_found.ours);
        let (one_effects, other_effects) = (
            effects(&one.record, one_mark),
            effects(&other.record, other_mark),
        );
        one_mark.returned == other_mark.returned
            && one_effects.len() == other_effects.len()
            && one_effects.iter().zip(&other_effects).all(|(a, b)| {
                a.trace_line() == b.trace_line()
                    && match (a, b) {
                        (WorldEvent::Put { entry: a, .. }, WorldEvent::Put { entry: b, .. }) => {
                            entry_in(a, other.naming) == entry_in(b, one.naming)
                        }
                        _ => true,
                    }
            })
    }

    fn words(&self, found: &StepDeparture, ids: &mut Ids, context: bool) -> String {
        words(found, ids, context)
    }

    fn rule(&self, found: &StepDeparture) -> Option<&'static Rule> {
        rule_of(found)
    }

    fn raised(&self, found: &StepDeparture) -> Option<Raised> {
        found
            .ours
            .returned
            .as_ref()
            .filter(|_| found.kind == DepartureKind::Returned || found.did_at().is_none())
            .and_then(raised_of)
    }
}

/// How a step departs.
#[derive(Debug, Clone, PartialEq)]
enum DepartureKind {
    /// An effect the reference makes or does not make there.
    Effect,
    /// The same `dlq.put`, with another entry: the fields that differ.
    Entry(Vec<DifferingField>),
    /// The same effects, another value returned (or raised).
    Returned,
}

/// A field of an entry that differs: its key as the implementation spells it, and the value
/// the reference puts and the implementation put (`None`: not there).
#[derive(Debug, Clone, PartialEq)]
struct DifferingField {
    key: String,
    reference: Option<Value>,
    ours: Option<Value>,
}

/// The step where a run departs, and how.
pub(crate) struct StepDeparture<'r> {
    /// The reference's and the implementation's mark of the step.
    reference: &'r StepMark,
    ours: &'r StepMark,
    /// The effects of the step: the reference's, and the implementation's in the
    /// reference's order where the contract leaves the order free.
    want: Vec<&'r WorldEvent>,
    did: Vec<&'r WorldEvent>,
    /// Where in the step's effects the two first differ (their common length for `Returned`).
    at: usize,
    kind: DepartureKind,
    /// Whether nothing was ready for the reference's receive in this step.
    nothing_ready: bool,
}

impl<'r> StepDeparture<'r> {
    fn want_at(&self) -> Option<&'r WorldEvent> {
        self.want.get(self.at).copied()
    }

    fn did_at(&self) -> Option<&'r WorldEvent> {
        self.did.get(self.at).copied()
    }

    /// The last effect both made before the departure.
    fn before(&self) -> Option<&'r WorldEvent> {
        self.at
            .checked_sub(1)
            .and_then(|at| self.want.get(at).copied())
    }
}

/// The effects of the step `mark` of `record`.
fn effects<'r>(record: &'r Record, mark: &StepMark) -> Vec<&'r WorldEvent> {
    record.world.journal()[mark.journal.clone()]
        .iter()
        .filter(|happening| happening.is_effect())
        .collect()
}

/// The first step of `ours` that departs from the same step of `reference`.
fn first<'r>(reference: &'r Record, ours: &'r Record, naming: Naming) -> Option<StepDeparture<'r>> {
    for mark in &ours.marks {
        let Some(theirs) = reference.marks.iter().find(|m| m.index == mark.index) else {
            continue;
        };
        if let Some(found) = compare(reference, theirs, ours, mark, naming) {
            return Some(found);
        }
    }
    None
}

/// How step `ours` of the implementation's run departs from step `theirs` of the
/// reference's, if it does.
fn compare<'r>(
    reference: &'r Record,
    theirs: &'r StepMark,
    ours_record: &'r Record,
    ours: &'r StepMark,
    naming: Naming,
) -> Option<StepDeparture<'r>> {
    let want = effects(reference, theirs);
    let done = effects(ours_record, ours);
    let lines = |effects: &[&WorldEvent]| -> Vec<String> {
        effects.iter().map(|h| h.trace_line()).collect()
    };
    let order = super::trace::aligned_order(&lines(&want), &lines(&done));
    let did: Vec<&WorldEvent> = order.into_iter().map(|at| done[at]).collect();
    let nothing_ready = reference.world.journal()[theirs.journal.clone()]
        .iter()
        .any(|h| matches!(h, WorldEvent::NothingReady));
    let found = |at, kind| StepDeparture {
        reference: theirs,
        ours,
        want: want.clone(),
        did: did.clone(),
        at,
        kind,
        nothing_ready,
    };
    for at in 0..want.len().max(did.len()) {
        match (want.get(at), did.get(at)) {
            (Some(w), Some(d)) if w.trace_line() == d.trace_line() => {
                let fields = entry_differences(w, d, naming);
                if !fields.is_empty() {
                    return Some(found(at, DepartureKind::Entry(fields)));
                }
            }
            _ => return Some(found(at, DepartureKind::Effect)),
        }
    }
    (theirs.returned != ours.returned).then(|| found(want.len(), DepartureKind::Returned))
}

/// The fields in which the entry the implementation put (`ours`) differs from the one the
/// reference put (`theirs`), keys as the implementation spells them; empty for two effects
/// that are not puts.
fn entry_differences(
    theirs: &WorldEvent,
    ours: &WorldEvent,
    naming: Naming,
) -> Vec<DifferingField> {
    let (WorldEvent::Put { entry: want, .. }, WorldEvent::Put { entry: put, .. }) = (theirs, ours)
    else {
        return Vec::new();
    };
    let want = entry_in(want, naming);
    let (Value::Object(want), Value::Object(put)) = (&want, &**put) else {
        return if want == **put {
            Vec::new()
        } else {
            vec![DifferingField {
                key: "entry".to_owned(),
                reference: Some(want.clone()),
                ours: Some((**put).clone()),
            }]
        };
    };
    let mut fields: Vec<DifferingField> = want
        .iter()
        .filter(|(key, value)| put.get(*key) != Some(*value))
        .map(|(key, value)| DifferingField {
            key: key.clone(),
            reference: Some(value.clone()),
            ours: put.get(key).cloned(),
        })
        .collect();
    fields.extend(
        put.iter()
            .filter(|(key, _)| !want.contains_key(*key))
            .map(|(key, value)| DifferingField {
                key: key.clone(),
                reference: None,
                ours: Some(value.clone()),
            }),
    );
    fields
}

/// The rule that decides what the reference does where the run departs: the step's
/// decision, made precise by what departs (the order of a dead-lettering, an entry's field,
/// the check that comes first).
fn rule_of(found: &StepDeparture) -> Option<&'static Rule> {
    let reference = found.reference;
    // An injected crash decides what follows it: what departs before it (or in the call it
    // stopped) is decided as it would be without the crash.
    let crash_at = found
        .want
        .iter()
        .position(|h| matches!(h, WorldEvent::Crashed { .. }));
    let before_crash = crash_at.is_some_and(|at| at >= found.at);
    let decision = match before_crash {
        true => reference
            .decisions
            .iter()
            .rev()
            .map(|(rule, _)| *rule)
            .find(|rule| rule.id != rules::CRASH_PROPAGATES.id)
            .or(reference.decision),
        false => reference.decision,
    };
    // A firm decision is the one the step hinges on (the queue's count, a replay's fresh
    // start): it decides what departs there, an entry only in the field it is about.
    let firm: Vec<&'static Rule> = reference
        .decisions
        .iter()
        .filter(|(_, firm)| *firm)
        .map(|(rule, _)| *rule)
        .collect();
    let is_firm = |rule: &Rule| firm.iter().any(|f| f.id == rule.id);
    let only = |fields: &[DifferingField], keys: &[&str]| {
        fields.iter().all(|f| keys.contains(&f.key.as_str()))
    };
    match &found.kind {
        DepartureKind::Entry(fields)
            if is_firm(&rules::REPLAY_FRESH_DELIVERY)
                && only(fields, &["first_attempt_at", "firstAttemptAt"]) =>
        {
            return Some(&rules::REPLAY_FRESH_DELIVERY);
        }
        DepartureKind::Entry(fields)
            if is_firm(&rules::COUNT_FROM_QUEUE) && only(fields, &["attempts"]) =>
        {
            return Some(&rules::COUNT_FROM_QUEUE);
        }
        DepartureKind::Entry(_) => {}
        _ if is_firm(&rules::COUNT_FROM_QUEUE) => return Some(&rules::COUNT_FROM_QUEUE),
        _ if !firm.is_empty() => return firm.last().copied(),
        _ => {}
    }
    let (want, did) = (found.want_at(), found.did_at());
    // Misuse of the queue or the handler in process_one; a replay's, its selection's.
    if matches!(did, Some(WorldEvent::Misused { .. })) && found.ours.name != "replay" {
        return Some(&rules::NO_MISUSE);
    }
    let noted = |rule: &Rule| reference.rules.contains(&rule.id);
    let unexpected = noted(&rules::UNEXPECTED_ERROR);
    match &found.kind {
        DepartureKind::Entry(fields) => {
            let is = |key: &str| fields.iter().any(|f| f.key == key);
            if is("reason") {
                return if unexpected {
                    Some(&rules::UNEXPECTED_ERROR)
                } else {
                    decision
                };
            }
            let poison_fields = fields
                .iter()
                .all(|f| f.key == "error" || f.key == "attempts");
            if decision == Some(&rules::POISON) && poison_fields {
                return Some(&rules::POISON);
            }
            Some(&rules::ENTRY_FIELDS)
        }
        DepartureKind::Returned => decision,
        DepartureKind::Effect => {
            let already_dead = found.want.iter().any(|h| {
                matches!(
                    h,
                    WorldEvent::Received {
                        already_dead: true,
                        ..
                    }
                )
            });
            let put_before = matches!(found.before(), Some(WorldEvent::Put { .. }));
            // The order of a dead-lettering: the put, then the ack.
            if (put_before && attempts(want) == Some("queue.ack"))
                || (attempts(want) == Some("dlq.put") && attempts(did) == Some("queue.ack"))
            {
                return Some(&rules::DEAD_LETTER_SEQUENCE);
            }
            // The order of a replay: the send, then the removal.
            if attempts(want) == Some("dlq.remove")
                || (attempts(want) == Some("queue.send") && attempts(did) == Some("dlq.remove"))
            {
                return Some(&rules::REPLAY_SEND_BEFORE_REMOVE);
            }
            if already_dead {
                let later_ack = found.did[found.at..]
                    .iter()
                    .any(|h| matches!(h, WorldEvent::Acked { .. }));
                let later_put = found.did[found.at..]
                    .iter()
                    .any(|h| matches!(h, WorldEvent::Put { .. }));
                return match did {
                    Some(put @ WorldEvent::Put { .. }) if reason(put) == Some("poison") => {
                        Some(&rules::CHECK_ORDER)
                    }
                    Some(WorldEvent::Handled { .. }) if later_ack && !later_put => {
                        Some(&rules::CHECK_ORDER)
                    }
                    _ => Some(&rules::NO_DOUBLE_DEAD_LETTER),
                };
            }
            if let Some(put @ WorldEvent::Put { .. }) = did
                && reason(put) == Some("poison")
                && decision != Some(&rules::POISON)
            {
                return Some(&rules::POISON);
            }
            // Nothing ready is what `none` says: returned for a message received, it breaks
            // the empty-queue rule.
            let nothing = ["none", "undefined"].map(|word| Some(Value::from(word)));
            if did.is_none()
                && found.ours.name == "process"
                && nothing.contains(&found.ours.returned)
            {
                return Some(&rules::EMPTY_QUEUE);
            }
            // The handler runs only when the poison check lets it.
            if matches!(want, Some(WorldEvent::Handled { .. })) {
                return Some(&rules::POISON);
            }
            if unexpected && (attempts(did) == Some("dlq.put") || attempts(want) == Some("dlq.put"))
            {
                return Some(&rules::UNEXPECTED_ERROR);
            }
            decision
        }
    }
}

/// The call an effect makes, by its protocol name, or attempts where an injected crash
/// stopped it (`None` for what is no such call).
fn attempts(happening: Option<&WorldEvent>) -> Option<&str> {
    Some(match happening? {
        WorldEvent::Acked { .. } => "queue.ack",
        WorldEvent::Retried { .. } => "queue.retry",
        WorldEvent::Sent { .. } => "queue.send",
        WorldEvent::Put { .. } => "dlq.put",
        WorldEvent::Removed { .. } => "dlq.remove",
        WorldEvent::Crashed {
            call,
            timing: CrashTiming::Before,
            ..
        } => call.as_str(),
        _ => return None,
    })
}

/// The reason of the entry a put put.
fn reason(put: &WorldEvent) -> Option<&str> {
    match put {
        WorldEvent::Put { entry, .. } => entry.get("reason").and_then(Value::as_str),
        _ => None,
    }
}

/// The departure in one line: where (with `context`), what the reference does, what the
/// implementation did.
fn words(found: &StepDeparture, ids: &mut Ids, context: bool) -> String {
    let step = match found.ours.name {
        "replay" => "replay",
        _ => "process_one",
    };
    let context = |ids: &mut Ids| match found.before() {
        _ if !context => String::new(),
        Some(before) => format!("after {}, ", named(before, ids)),
        None if found.nothing_ready => "with nothing ready, ".to_owned(),
        None => format!("in {step}, "),
    };
    let theirs = found.reference.returned.as_ref();
    let ours = found.ours.returned.as_ref();
    match &found.kind {
        DepartureKind::Entry(fields) => {
            let put = found.want_at().map(|h| named(h, ids)).unwrap_or_default();
            let fields: Vec<String> = fields.iter().map(|f| field_words(f, ids)).collect();
            format!("{put}: yours wrote {}", fields.join("; "))
        }
        DepartureKind::Returned => {
            let context = context(ids);
            let want = theirs.map(|v| returns(v, ids)).unwrap_or_default();
            let did = ours.map(|v| returned(v, ids)).unwrap_or_default();
            format!("{context}the reference {want}; yours {did}")
        }
        DepartureKind::Effect => {
            let context = context(ids);
            match (found.want_at(), found.did_at()) {
                (Some(want), None) => {
                    let does = does(want, ids);
                    let did = match ours {
                        Some(value) => returned(value, ids),
                        None => "stopped".to_owned(),
                    };
                    let doing = doing(want, ids);
                    format!("{context}the reference {does}; yours {did} without {doing}")
                }
                (Some(want), Some(did)) => {
                    let later = found.want[found.at + 1..]
                        .iter()
                        .any(|h| h.trace_line() == did.trace_line());
                    let does = does(want, ids);
                    if later {
                        let doing = doing(did, ids);
                        let done = done(did, ids);
                        format!("{context}the reference {does} before {doing}; yours {done} first")
                    } else {
                        let done = done(did, ids);
                        format!("{context}the reference {does}; yours {done}")
                    }
                }
                (None, Some(did)) => {
                    let want = theirs.map(|v| returns(v, ids)).unwrap_or_default();
                    let done = done(did, ids);
                    format!("{context}the reference {want}; yours then {done}")
                }
                (None, None) => context.trim_end_matches(", ").to_owned(),
            }
        }
    }
}

/// An effect as a trace names it, for what comes after it: `dlq.put(X)`, `handler(X) ->
/// TransientError`, `receiving X`.
fn named(happening: &WorldEvent, ids: &mut Ids) -> String {
    match happening {
        WorldEvent::Received { id, .. } => format!("receiving {}", ids.id(id)),
        WorldEvent::Handled { id, outcome } => {
            format!("handler({}) -> {}", ids.id(id), outcome.label())
        }
        WorldEvent::Unscripted { id, .. } => format!("handler({}) -> unscripted", ids.id(id)),
        WorldEvent::Acked { id } => format!("queue.ack({})", ids.id(id)),
        WorldEvent::Retried { id } => format!("queue.retry({})", ids.id(id)),
        WorldEvent::Sent { id } => format!("queue.send({})", ids.id(id)),
        WorldEvent::Put { id, .. } => format!("dlq.put({})", ids.id(id)),
        WorldEvent::Removed { id, .. } => format!("dlq.remove({})", ids.id(id)),
        WorldEvent::Recovered { .. } => "queue.recover()".to_owned(),
        WorldEvent::Advanced { by, .. } => format!("clock.advance({})", ids.value(by, "N")),
        WorldEvent::Crashed { call, timing, .. } => {
            format!("the crash injected {} {call}", timing.word())
        }
        WorldEvent::Misused { .. } => "a misuse".to_owned(),
        other => other.trace_line(),
    }
}

/// The effect `call` would have had on `about`: what an injected crash before it stopped.
fn stopped(call: &str, about: Option<&str>, ids: &mut Ids) -> Option<(String, String, String)> {
    let id = ids.id(about?);
    Some(match call {
        "queue.ack" => (
            format!("acks {id}"),
            format!("acking {id}"),
            format!("acked {id}"),
        ),
        "queue.retry" => (
            format!("retries {id}"),
            format!("retrying {id}"),
            format!("retried {id}"),
        ),
        "queue.send" => (
            format!("sends {id} to the queue"),
            format!("sending {id}"),
            format!("sent {id} to the queue"),
        ),
        "dlq.put" => (
            format!("puts {id} in the DLQ"),
            format!("putting {id} in the DLQ"),
            format!("put {id} in the DLQ"),
        ),
        "dlq.remove" => (
            format!("removes {id} from the DLQ"),
            format!("removing {id} from the DLQ"),
            format!("removed {id} from the DLQ"),
        ),
        _ => return None,
    })
}

/// An effect in three forms: what the reference does, doing it, and what yours did.
fn forms(happening: &WorldEvent, ids: &mut Ids) -> (String, String, String) {
    let three = |does: String, doing: String, done: String| (does, doing, done);
    match happening {
        WorldEvent::Received { id, .. } => {
            let id = ids.id(id);
            three(
                format!("receives {id}"),
                format!("receiving {id}"),
                format!("received {id}"),
            )
        }
        WorldEvent::Handled { id, .. } => {
            let id = ids.id(id);
            three(
                format!("calls the handler with {id}"),
                "calling the handler".to_owned(),
                format!("called the handler with {id}"),
            )
        }
        WorldEvent::Unscripted { id, .. } => {
            let id = ids.id(id);
            three(
                format!("calls the handler with {id}"),
                "calling the handler".to_owned(),
                format!("called the handler with {id} once more than the spec scripts"),
            )
        }
        WorldEvent::Acked { id } => stopped("queue.ack", Some(id), ids).unwrap_or_default(),
        WorldEvent::Retried { id } => stopped("queue.retry", Some(id), ids).unwrap_or_default(),
        WorldEvent::Sent { id } => stopped("queue.send", Some(id), ids).unwrap_or_default(),
        WorldEvent::Put { id, .. } => stopped("dlq.put", Some(id), ids).unwrap_or_default(),
        WorldEvent::Removed { id, .. } => stopped("dlq.remove", Some(id), ids).unwrap_or_default(),
        WorldEvent::Recovered { .. } => three(
            "moves what is in flight back to the queue".to_owned(),
            "moving what is in flight back".to_owned(),
            "moved what is in flight back to the queue".to_owned(),
        ),
        WorldEvent::Advanced { .. } => three(
            "moves the clock".to_owned(),
            "moving the clock".to_owned(),
            "moved the clock".to_owned(),
        ),
        WorldEvent::Crashed {
            call,
            timing: CrashTiming::Before,
            about,
        } => stopped(call, about.as_deref(), ids).unwrap_or_else(|| {
            three(
                format!("calls {call}"),
                format!("calling {call}"),
                format!("called {call}"),
            )
        }),
        WorldEvent::Crashed { call, .. } => three(
            format!("dies by the crash injected after {call}"),
            "dying".to_owned(),
            format!("died by the crash injected after {call}"),
        ),
        WorldEvent::Misused { what } => {
            // What was misused, as the world names it: `queue.ack`, `handler`, `dlq.put`.
            let call = what
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
                .next()
                .unwrap_or(what);
            let done = if ids.is_shaped() {
                format!("misused the world ({call})")
            } else {
                format!("misused the world: {what}")
            };
            three(format!("uses {call}"), format!("using {call}"), done)
        }
        other => {
            let line = other.trace_line();
            three(line.clone(), line.clone(), line)
        }
    }
}

fn does(happening: &WorldEvent, ids: &mut Ids) -> String {
    forms(happening, ids).0
}

fn doing(happening: &WorldEvent, ids: &mut Ids) -> String {
    forms(happening, ids).1
}

fn done(happening: &WorldEvent, ids: &mut Ids) -> String {
    forms(happening, ids).2
}

/// What the reference's call returns, as a sentence's verb: `returns dead`, `lets the crash
/// propagate`.
fn returns(value: &Value, ids: &mut Ids) -> String {
    match value.as_str() {
        Some("crash") => "lets the crash propagate".to_owned(),
        _ => format!("returns {}", answer(value, ids)),
    }
}

/// What the implementation's call returned, as a sentence's verb: `returned ok`, `raised
/// KeyError: 'x'` (the class only in a shape).
fn returned(value: &Value, ids: &mut Ids) -> String {
    if let Some(raised) = raised_of(value) {
        return format!("raised {}", ids.raised(&raised));
    }
    match value.as_str() {
        Some("crash") => "let a crash out".to_owned(),
        _ => format!("returned {}", answer(value, ids)),
    }
}

/// A returned value as a spec writes it, its ids named by `ids`: cut before it is rendered
/// (`truncate::value`), as a reply may be as long as a protocol line.
fn answer(value: &Value, ids: &mut Ids) -> String {
    match &crate::text::truncate::value(value) {
        Value::Array(items) => {
            let named: Vec<String> = items
                .iter()
                .map(|item| match item.as_str() {
                    Some(id) => ids.id(id),
                    None => yaml::flow(item),
                })
                .collect();
            format!("[{}]", named.join(", "))
        }
        Value::String(text) => text.clone(),
        other => yaml::flow(other),
    }
}

/// The error of a returned `raised Class: message`, as the run writes what a call raised.
fn raised_of(value: &Value) -> Option<Raised> {
    let described = value.as_str()?.strip_prefix("raised ")?;
    let (class, message) = described.split_once(": ").unwrap_or((described, ""));
    Some(Raised::error(class, message))
}

/// A field of an entry that differs, as a departure tells it.
fn field_words(field: &DifferingField, ids: &Ids) -> String {
    let key = &field.key;
    let shown = |value: &Option<Value>| {
        value
            .as_ref()
            .map(|v| crate::text::truncate::line(&yaml::flow(v), 80))
            .unwrap_or_default()
    };
    match (&field.reference, &field.ours, ids.is_shaped()) {
        (Some(_), Some(_), true) => format!("another {key} than the reference"),
        (Some(_), Some(_), false) => format!(
            "{key} {}, the reference writes {}",
            shown(&field.ours),
            shown(&field.reference)
        ),
        (Some(_), None, true) => format!("no {key}"),
        (Some(_), None, false) => {
            format!(
                "no {key} (the reference writes {})",
                shown(&field.reference)
            )
        }
        (None, _, true) => format!("{key}, a key the contract does not name"),
        (None, _, false) => format!(
            "{key} {}, a key the contract does not name",
            shown(&field.ours)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn departure_of(mistake: &str, text: &str) -> Departure {
        departure::diagnosed(&DlqConsumerContract, mistake, text).expect("a departure")
    }

    const PERMANENT: &str = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [permanent: bad]}\nsteps:\n  - process: dead\nexpect:\n  in_flight: []\n  trace: ['queue.receive() -> a', 'handler(a) -> PermanentError', 'dlq.put(a)', 'queue.ack(a)']\n  dlq: [{id: a, body: x, reason: permanent, error: 'PermanentError: bad', attempts: 1, first_attempt_at: 0, failed_at: 0}]\n";

    #[test]
    fn a_missing_ack_after_the_put_is_told_where_it_starts() {
        let departure = departure_of("put-without-ack", PERMANENT);
        assert_eq!(
            departure.told,
            "after dlq.put(a), the reference acks a; yours returned dead without acking a"
        );
        assert_eq!(
            departure.shape,
            "after dlq.put(X), the reference acks X; yours returned dead without acking X"
        );
        assert_eq!(departure.rule, Some(&rules::DEAD_LETTER_SEQUENCE));
        let mistakes: Vec<&str> = departure.mistakes.iter().map(|m| m.id).collect();
        assert_eq!(mistakes, ["put-without-ack"]);
    }

    #[test]
    fn an_ack_before_the_put_breaks_the_dead_letter_sequence() {
        let departure = departure_of("acks-before-put", PERMANENT);
        assert_eq!(
            departure.told,
            "after handler(a) -> PermanentError, the reference puts a in the DLQ before acking a; yours acked a first"
        );
        assert_eq!(departure.rule, Some(&rules::DEAD_LETTER_SEQUENCE));
    }

    #[test]
    fn an_entry_field_is_told_by_its_key() {
        let departure = departure_of("attempts-one-short", PERMANENT);
        assert_eq!(
            departure.told,
            "dlq.put(a): yours wrote attempts 0, the reference writes 1"
        );
        assert_eq!(
            departure.shape,
            "dlq.put(X): yours wrote another attempts than the reference"
        );
        assert_eq!(departure.rule, Some(&rules::ENTRY_FIELDS));
    }

    #[test]
    fn a_permanent_error_retried_breaks_the_permanent_rule() {
        let departure = departure_of("retries-permanent", PERMANENT);
        assert_eq!(
            departure.told,
            "after handler(a) -> PermanentError, the reference puts a in the DLQ; yours retried a"
        );
        assert_eq!(departure.rule, Some(&rules::PERMANENT));
    }
}
