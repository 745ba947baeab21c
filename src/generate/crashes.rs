//! Crash schedules as a contract offers them: where a crash can land in a run of its
//! scenario, and what a run under a schedule broke. `explore::crashes` tries the schedules.

use std::fmt;

use super::case::Case;
use crate::model::implementation::Implementation;

/// One injected crash: before or after the `nth` call of `call` that step `step` makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashPoint {
    /// The step of the scenario (0-based) the crash happens in.
    pub(crate) step: usize,
    /// The step's name, for people: `process`, `replay`.
    pub(crate) step_name: &'static str,
    /// Whether the call happens before the crash.
    pub(crate) after: bool,
    /// The effect, as a fault names it: `dlq.put`, `queue.ack`...
    pub(crate) call: String,
    /// Which of the step's calls of `call`, counting from 1.
    pub(crate) nth: u32,
}

impl fmt::Display for CrashPoint {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let which = if self.nth == 1 {
            String::new()
        } else {
            format!(" #{}", self.nth)
        };
        write!(
            f,
            "a crash {} {}{which} in step {} ({})",
            if self.after { "after" } else { "before" },
            self.call,
            self.step + 1,
            self.step_name
        )
    }
}

/// One run of the scenario under a schedule.
#[derive(Debug, Clone, Default)]
pub struct ScheduleRun {
    /// Where a further crash can go: the effects after the schedule's last crash.
    pub(crate) points: Vec<CrashPoint>,
    /// The invariants the run broke, one line each.
    pub(crate) violations: Vec<String>,
}

/// A contract's scenario, ready to run under crash schedules.
pub trait Schedules {
    /// The invariants every run is checked against, one line each, for reports.
    fn invariants(&self) -> &'static [&'static str];

    /// Runs the scenario with the crashes of `schedule` on `implementation`.
    fn run(&self, schedule: &[CrashPoint], implementation: &mut dyn Implementation) -> ScheduleRun;

    /// The scenario with the crashes of `schedule` as faults, as a case to bless and shrink.
    fn case(&self, schedule: &[CrashPoint]) -> Box<dyn Case>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_point_says_where_it_lands() {
        let point = CrashPoint {
            step: 2,
            step_name: "process",
            after: true,
            call: "dlq.put".into(),
            nth: 2,
        };
        assert_eq!(
            point.to_string(),
            "a crash after dlq.put #2 in step 3 (process)"
        );
    }
}
