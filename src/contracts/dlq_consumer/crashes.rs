//! dlq-consumer under crash schedules (`dlqspec explore SPEC --crashes K`): a spec's scenario
//! with crashes injected at the effects of the consumer's run, and the invariants that hold
//! whatever crashes, read from the world's journal.
//!
//! The invariants are the lesson's promises to an operator: nothing is lost, nothing is
//! dead-lettered twice, a poison pill never reaches the handler, no message gets more attempts
//! than its budget, and a replay never drops an entry it has not sent back.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::consumer::DEFAULT_MAX_ATTEMPTS;
use super::explore::{CaseStep, DlqCase, case_of, effect_call, probe};
use super::journal::WorldEvent;
use super::record::Record;
use super::scenario::DlqScenario;
use super::world::ScriptedOutcome;
use crate::contracts::builtin::Builtin;
use crate::generate::case::Case;
use crate::generate::crashes::{CrashPoint, ScheduleRun, Schedules};
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;

/// The invariants, as reports list them.
pub(crate) const INVARIANTS: &[&str] = &[
    "no message is lost: every message sent ends acked after a success, in the DLQ, ready or in flight",
    "no id is in the DLQ twice",
    "the handler never runs once receive_count > max_attempts, nor for a message already in the DLQ",
    "attempts stay within budget: at most one handler call per delivery, and no entry claims more attempts than its message's receive_count",
    "a replay never removes an entry it has not sent back to the queue",
    "the consumer never misuses the queue, the DLQ or the handler",
];

/// A spec's scenario, its expectations left out and its scripts made long enough for any
/// schedule.
pub(crate) struct DlqSchedules {
    base: DlqCase,
    budget: u64,
}

impl DlqSchedules {
    pub(crate) fn new(scenario: &DlqScenario) -> Self {
        let mut base = case_of(scenario);
        // A crash can leave a message in flight, to be handled again after a recover, and
        // shift deliveries from one message to another; a correct consumer still calls the
        // handler at most once per `process` step, so that many outcomes always suffice.
        let processes = base
            .steps
            .iter()
            .filter(|s| matches!(s, CaseStep::Process))
            .count();
        let mut ids: Vec<String> = base.messages.iter().map(|(id, _)| id.clone()).collect();
        for step in &base.steps {
            if let CaseStep::Send { id, .. } = step
                && !ids.contains(id)
            {
                ids.push(id.clone());
            }
        }
        for id in ids {
            if !base.script.iter().any(|(other, _)| *other == id) {
                base.script.push((id, Vec::new()));
            }
        }
        for (_, outcomes) in &mut base.script {
            let last = outcomes
                .last()
                .cloned()
                .unwrap_or_else(|| ScriptedOutcome::Ok.into());
            while outcomes.len() < processes.max(1) * 2 {
                outcomes.push(last.clone());
            }
        }
        DlqSchedules {
            budget: base.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            base,
        }
    }

    /// The base case with `schedule`'s crashes armed as faults, and where each base step went.
    fn with_crashes(&self, schedule: &[CrashPoint]) -> (DlqCase, Vec<usize>) {
        let mut case = self.base.clone();
        let mut steps = Vec::with_capacity(case.steps.len() + schedule.len());
        let mut moved = Vec::with_capacity(case.steps.len());
        for (index, step) in case.steps.drain(..).enumerate() {
            let mut step = step;
            for point in schedule.iter().filter(|p| p.step == index) {
                steps.push(CaseStep::Fault {
                    after: point.after,
                    call: fault_call(&point.call),
                    nth: point.nth,
                });
                if let CaseStep::Replay { crashes, .. } = &mut step {
                    *crashes = true;
                }
            }
            moved.push(steps.len());
            steps.push(step);
        }
        case.steps = steps;
        (case, moved)
    }
}

/// The fault's name for a call, as the effect list spells it.
fn fault_call(call: &str) -> &'static str {
    super::spec::EFFECT_CALLS
        .iter()
        .find(|known| **known == call)
        .copied()
        .unwrap_or("handler")
}

impl Schedules for DlqSchedules {
    fn invariants(&self) -> &'static [&'static str] {
        INVARIANTS
    }

    fn run(&self, schedule: &[CrashPoint], implementation: &mut dyn Implementation) -> ScheduleRun {
        let (case, moved) = self.with_crashes(schedule);
        if let Err(error) = implementation.begin_spec() {
            return broke(&error.message);
        }
        let (run, record) = match probe(&case, implementation) {
            Ok(ran) => ran,
            Err(error) => return broke(&error),
        };
        let mut violations = violations(&case, &record, self.budget);
        match &run.outcome {
            Outcome::Errored(error) => {
                violations.push(format!("the implementation broke: {}", error.message))
            }
            // Never a clean run: a scenario that did not run kept no invariant.
            Outcome::Skipped(reason) => {
                violations.push(format!("the scenario did not run: {reason}"))
            }
            Outcome::Mismatch(mismatch) if mismatch.step.starts_with("constructing") => {
                violations.push(format!(
                    "the constructor raised: {}",
                    mismatch.actual.trim()
                ));
            }
            _ => {}
        }
        let last = schedule.iter().map(|p| p.step).max();
        let journal = record.world.journal();
        let mut points = Vec::new();
        for (base, step) in self.base.steps.iter().enumerate() {
            if last.is_some_and(|last| base <= last)
                || !matches!(step, CaseStep::Process | CaseStep::Replay { .. })
            {
                continue;
            }
            let Some(facts) = record.steps.get(moved[base]) else {
                break;
            };
            let mut seen: HashMap<&'static str, u32> = HashMap::new();
            for at in facts.journal.clone() {
                let Some(call) = effect_call(&journal[at]) else {
                    continue;
                };
                let nth = seen.entry(call).or_insert(0);
                *nth += 1;
                for after in [false, true] {
                    points.push(CrashPoint {
                        step: base,
                        step_name: if matches!(step, CaseStep::Process) {
                            "process"
                        } else {
                            "replay"
                        },
                        after,
                        call: call.to_owned(),
                        nth: *nth,
                    });
                }
            }
        }
        ScheduleRun { points, violations }
    }

    fn case(&self, schedule: &[CrashPoint]) -> Box<dyn Case> {
        let (mut case, _) = self.with_crashes(schedule);
        // Scripts as long as the built-in needs, when it can run the crashes at all.
        if let Ok((run, record)) = probe(&case, &mut Builtin::new())
            && matches!(run.outcome, Outcome::Passed)
        {
            case.trim_scripts(&record);
        }
        case.add_expectations();
        Box::new(case)
    }
}

/// A run that could not be made, as a violation.
fn broke(why: &str) -> ScheduleRun {
    ScheduleRun {
        points: Vec::new(),
        violations: vec![format!("the implementation broke: {why}")],
    }
}

/// The invariants `record`'s run broke, one line each.
fn violations(case: &DlqCase, record: &Record, budget: u64) -> Vec<String> {
    let journal = record.world.journal();
    let mut found: Vec<String> = Vec::new();
    let mut said: HashSet<String> = HashSet::new();
    let mut say = |line: String| {
        if said.insert(line.clone()) {
            found.push(line);
        }
    };
    // When each id last arrived in the queue: at the start, by a `send` step, by a replay.
    let mut arrived: HashMap<String, usize> = HashMap::new();
    for (id, _) in &case.messages {
        arrived.insert(id.clone(), 0);
    }
    // The latest arrival counts: what happened to an id before it came back says nothing.
    let arrive = |arrived: &mut HashMap<String, usize>, id: &str, at: usize| {
        let last = arrived.entry(id.to_owned()).or_insert(at);
        *last = (*last).max(at);
    };
    for (index, facts) in record.steps.iter().enumerate() {
        if let Some(CaseStep::Send { id, .. }) = case.steps.get(index) {
            arrive(&mut arrived, id, facts.journal.start);
        }
    }
    let mut in_dlq: HashMap<&str, usize> = HashMap::new();
    // The delivery each id is on: its receive_count, whether it was in the DLQ, handler calls.
    let mut delivery: HashMap<&str, (u64, bool, u32)> = HashMap::new();
    for (at, happening) in journal.iter().enumerate() {
        match happening {
            WorldEvent::Received {
                id,
                receive_count,
                already_dead,
                ..
            } => {
                delivery.insert(id, (*receive_count, *already_dead, 0));
            }
            WorldEvent::Handled { id, .. } | WorldEvent::Unscripted { id, .. } => {
                let (count, dead, calls) = delivery.entry(id).or_insert((0, false, 0));
                *calls += 1;
                if *count > budget {
                    say(format!(
                        "the handler ran for {id} on a delivery with receive_count {count} > max_attempts {budget}: a poison pill must be dead-lettered without calling the handler"
                    ));
                }
                if *dead {
                    say(format!(
                        "the handler ran for {id} although {id} was already in the DLQ"
                    ));
                }
                if *calls > 1 {
                    say(format!(
                        "the handler ran {calls} times on one delivery of {id}"
                    ));
                }
            }
            WorldEvent::Put { id, entry, .. } => {
                let count = in_dlq.entry(id).or_insert(0);
                if *count > 0 {
                    say(format!("{id} was put in the DLQ while already in it"));
                }
                *count += 1;
                let attempts = entry.get("attempts").and_then(serde_json::Value::as_u64);
                let received = delivery.get(id.as_str()).map_or(0, |d| d.0);
                if let Some(attempts) = attempts.filter(|a| *a > received) {
                    say(format!(
                        "the entry of {id} claims {attempts} attempts, but its message was received {received} times"
                    ));
                }
            }
            WorldEvent::Removed {
                id, removed: true, ..
            } => {
                in_dlq.insert(id, 0);
            }
            WorldEvent::Sent { id } => arrive(&mut arrived, id, at),
            _ => {}
        }
    }
    let acked = acked_after_success(journal, &arrived);
    for (index, facts) in record.steps.iter().enumerate() {
        if !matches!(case.steps.get(index), Some(CaseStep::Replay { .. })) {
            continue;
        }
        let mut sent: BTreeSet<&str> = BTreeSet::new();
        for happening in &journal[facts.journal.clone()] {
            match happening {
                WorldEvent::Sent { id } => {
                    sent.insert(id);
                }
                WorldEvent::Removed {
                    id, removed: true, ..
                } if !sent.contains(id.as_str()) => say(format!(
                    "replay (step {}) removed {id} from the DLQ before sending it back: a crash in between loses it",
                    index + 1
                )),
                _ => {}
            }
        }
    }
    let world = &record.world;
    let (pending, in_flight, dead) = (world.ready_ids(), world.in_flight(), world.dlq_ids());
    let kept: HashSet<&str> = pending
        .iter()
        .chain(&in_flight)
        .chain(&dead)
        .map(String::as_str)
        .collect();
    let mut ids: Vec<&String> = arrived.keys().collect();
    ids.sort();
    for id in ids {
        if !kept.contains(id.as_str()) && !acked.contains(id.as_str()) {
            say(format!(
                "message {id} is lost: it is not ready, in flight or in the DLQ, and it was not acked after the handler succeeded"
            ));
        }
    }
    for misuse in world.misuse() {
        say(format!("misuse: {misuse}"));
    }
    found
}

/// The ids acked after a successful handler call since they last `arrived`, in one pass over
/// the journal.
fn acked_after_success<'a>(
    journal: &'a [WorldEvent],
    arrived: &HashMap<String, usize>,
) -> HashSet<&'a str> {
    let since_arrival = |id: &str, at: usize| arrived.get(id).is_some_and(|from| at >= *from);
    let mut succeeded: HashSet<&str> = HashSet::new();
    let mut acked: HashSet<&str> = HashSet::new();
    for (at, happening) in journal.iter().enumerate() {
        match happening {
            WorldEvent::Handled {
                id,
                outcome: ScriptedOutcome::Ok,
            } if since_arrival(id, at) => {
                succeeded.insert(id);
            }
            WorldEvent::Acked { id }
                if since_arrival(id, at) && succeeded.contains(id.as_str()) =>
            {
                acked.insert(id);
            }
            _ => {}
        }
    }
    acked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::Quiet;
    use crate::explore::crashes::{self as schedules, CrashPlan};
    use crate::text::source::SourceFile;

    fn schedules_of(path: &str) -> DlqSchedules {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let file = SourceFile::read(&root.join(path)).expect("spec");
        DlqSchedules::new(&crate::contracts::dlq_consumer::loading::load(&file).expect("loads"))
    }

    fn explore(
        path: &str,
        implementation: &mut dyn Implementation,
        k: usize,
    ) -> schedules::CrashesSummary {
        let plan = CrashPlan {
            contract: crate::contracts::find("dlq-consumer").expect("registered"),
            spec: path,
            max_crashes: k,
            shrink_tries: 300,
        };
        schedules::explore(&plan, &schedules_of(path), implementation, &mut Quiet)
    }

    #[test]
    fn the_built_in_keeps_every_invariant_under_every_schedule_of_two_crashes() {
        for path in [
            "specs/dlq-consumer/poison-cycle.yaml",
            "specs/dlq-consumer/replay-given-ids-in-their-order.yaml",
            "specs/dlq-consumer/already-dead-lettered-id-sent-again.yaml",
        ] {
            let summary = explore(path, &mut Builtin::new(), 2);
            assert!(
                summary.violation.is_none(),
                "{path}: {:?}",
                summary.violation
            );
            assert!(summary.schedules > 10, "{path}: {}", summary.schedules);
        }
    }

    #[test]
    fn a_mistake_that_loses_messages_in_a_crash_breaks_an_invariant_and_gets_a_spec() {
        let contract = crate::contracts::find("dlq-consumer").expect("registered");
        for (mistake, path, expected) in [
            (
                "acks-before-put",
                "specs/dlq-consumer/permanent-on-the-first-delivery.yaml",
                "is lost",
            ),
            (
                "replay-removes-before-send",
                "specs/dlq-consumer/replay-all-in-put-order.yaml",
                "before sending it back",
            ),
            (
                "no-dedupe",
                "specs/dlq-consumer/crash-before-ack-keeps-the-entry.yaml",
                "while already in it",
            ),
        ] {
            let mut mistaken = contract.mistaken(mistake).expect("a mistake");
            let summary = explore(path, &mut mistaken, 1);
            let violation = summary
                .violation
                .unwrap_or_else(|| panic!("{mistake} keeps every invariant"));
            assert!(
                violation.violations.iter().any(|v| v.contains(expected)),
                "{mistake}: {:?}",
                violation.violations
            );
            let finding = violation
                .finding
                .unwrap_or_else(|| panic!("{mistake}: no spec: {:?}", violation.no_spec));
            assert!(matches!(finding.outcome, Outcome::Mismatch(_)), "{mistake}");
        }
    }
}
