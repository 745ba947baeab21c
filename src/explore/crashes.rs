//! `dlqspec explore SPEC --crashes K`: one scenario under every schedule of up to K injected
//! crashes, with invariants that must hold whatever crashes (in the manner of Jepsen's fault
//! schedules, exhaustive rather than random).
//!
//! A crash lands before or after one effect the implementation makes on the world (a
//! receive, a handler call, an ack, a put...), counted in the implementation's own run, so it
//! always fires. Schedules are tried by their number of crashes, fewest first: each run tells
//! where a further crash can go (the effects after its last crash), and every such point
//! extends the schedule by one. A run that breaks an invariant is written up as a spec, as
//! `search` does with a divergence, when the crashes also fire on the built-in implementation.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::case::{self, CaseVerdict};
use super::shrink::Failing;
use super::{Finding, FoundDivergence, Observer};
use crate::contracts::contract::Contract;
use crate::generate::crashes::{CrashPoint, Schedules};
use crate::model::implementation::Implementation;

/// What running the schedules came to.
#[derive(Debug)]
pub struct CrashesSummary {
    pub spec: String,
    pub implementation: String,
    pub max_crashes: usize,
    pub invariants: Vec<&'static str>,
    pub schedules: u64,
    pub elapsed: Duration,
    /// The first schedule that broke an invariant.
    pub violation: Option<Violation>,
}

impl CrashesSummary {
    /// Schedules per second, writing up a violation left out.
    pub(crate) fn rate(&self) -> f64 {
        let shrinking = self
            .violation
            .as_ref()
            .and_then(|v| v.finding.as_ref())
            .map_or(Duration::ZERO, |f| f.shrink_time);
        let running = self.elapsed.saturating_sub(shrinking);
        self.schedules as f64 / running.as_secs_f64().max(1e-9)
    }
}

#[derive(Debug)]
pub struct Violation {
    pub schedule: Vec<CrashPoint>,
    pub violations: Vec<String>,
    /// The violation as a spec the built-in passes and the implementation fails.
    pub finding: Option<Finding>,
    /// Why there is no such spec, when there is none.
    pub no_spec: Option<String>,
}

/// Where the schedules' scenario comes from, and how far to go.
pub struct CrashPlan<'a> {
    pub contract: &'static dyn Contract,
    /// The spec's path, as shown.
    pub spec: &'a str,
    pub max_crashes: usize,
    pub shrink_tries: usize,
}

/// Runs every schedule of up to `plan.max_crashes` crashes, fewest crashes first, until one
/// breaks an invariant.
pub fn explore(
    plan: &CrashPlan,
    schedules: &dyn Schedules,
    implementation: &mut dyn Implementation,
    observer: &mut dyn Observer,
) -> CrashesSummary {
    let started = Instant::now();
    let label = implementation.info().label;
    observer.event(&super::ExploreEvent::CrashesStarted {
        spec: plan.spec,
        implementation: &label,
        max_crashes: plan.max_crashes,
        invariants: schedules.invariants(),
    });
    let mut summary = CrashesSummary {
        spec: plan.spec.to_owned(),
        implementation: label.clone(),
        max_crashes: plan.max_crashes,
        invariants: schedules.invariants().to_vec(),
        schedules: 0,
        elapsed: Duration::ZERO,
        violation: None,
    };
    let mut waiting: VecDeque<Vec<CrashPoint>> = VecDeque::from([Vec::new()]);
    while let Some(schedule) = waiting.pop_front() {
        let run = schedules.run(&schedule, implementation);
        summary.schedules += 1;
        observer.event(&super::ExploreEvent::SchedulesRan {
            run: summary.schedules,
        });
        if !run.violations.is_empty() {
            observer.event(&super::ExploreEvent::Violated {
                schedule: &schedule,
                violations: &run.violations,
            });
            let after = started.elapsed();
            let number = summary.schedules;
            summary.violation = Some(write_up(
                plan,
                schedules,
                implementation,
                observer,
                (schedule, run.violations, number, after, &label),
            ));
            break;
        }
        if schedule.len() < plan.max_crashes {
            for point in run.points {
                let mut longer = schedule.clone();
                longer.push(point);
                waiting.push_back(longer);
            }
        }
    }
    summary.elapsed = started.elapsed();
    observer.event(&super::ExploreEvent::CrashesDone(&summary));
    summary
}

/// A violating schedule, with the number of the run that found it, when, and on what.
type Violating<'a> = (Vec<CrashPoint>, Vec<String>, u64, Duration, &'a str);

/// Turns a violating schedule into a spec: the schedule's crashes as faults, blessed on the
/// built-in. When some crash does not fire there (the implementation made a call the
/// built-in does not), fewer crashes are tried, fewest dropped first.
fn write_up(
    plan: &CrashPlan,
    schedules: &dyn Schedules,
    implementation: &mut dyn Implementation,
    observer: &mut dyn Observer,
    (schedule, violations, number, after, label): Violating,
) -> Violation {
    let contract = plan.contract.name();
    let mut why = String::new();
    for kept in subsets(schedule.len()) {
        let crashes: Vec<CrashPoint> = kept.iter().map(|&i| schedule[i].clone()).collect();
        let case = schedules.case(&crashes);
        match case::judge_case(contract, case.as_ref(), implementation) {
            CaseVerdict::Failed { text, run } => {
                let told: Vec<String> = crashes.iter().map(ToString::to_string).collect();
                let found = FoundDivergence {
                    contract: plan.contract,
                    origin: format!("crash schedule {number} of {}", plan.spec),
                    found_by: format!(
                        "Found by `dlqspec explore {} --crashes {}` against {label}, with {}",
                        plan.spec,
                        plan.max_crashes,
                        if told.is_empty() {
                            "no crash".to_owned()
                        } else {
                            told.join(" and ")
                        }
                    ),
                    file_name: format!("{contract}-crash-schedule-{number}.yaml"),
                    after,
                };
                let failing = Failing { case, text, run };
                let finding =
                    super::finish(found, failing, implementation, plan.shrink_tries, observer);
                return Violation {
                    schedule,
                    violations,
                    finding: Some(finding),
                    no_spec: None,
                };
            }
            CaseVerdict::Invalid(reason) if why.is_empty() => why = reason,
            _ => {}
        }
    }
    Violation {
        schedule,
        violations,
        finding: None,
        no_spec: Some(if why.is_empty() {
            "the implementation passes every spec made of this schedule's crashes".to_owned()
        } else {
            format!(
                "{} cannot run this schedule's crashes: {why}",
                crate::contracts::registry::reference_called(
                    contract,
                    "the built-in implementation"
                )
            )
        }),
    }
}

/// The subsets of `0..n`, largest first (the whole set, then each with one left out...).
fn subsets(n: usize) -> Vec<Vec<usize>> {
    let mut all: Vec<Vec<usize>> = (0..1u32 << n)
        .map(|mask| (0..n).filter(|i| mask & (1 << i) != 0).collect())
        .collect();
    all.sort_by_key(|subset: &Vec<usize>| std::cmp::Reverse(subset.len()));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_come_largest_first() {
        let all = subsets(2);
        assert_eq!(all, [vec![0, 1], vec![0], vec![1], vec![]]);
    }
}
