//! What a run tells its reporters: that it started, each spec's report as it finishes, and
//! the summary at the end. Every reporter reads these; the runner (`runner.rs`) makes them.

use std::sync::Arc;
use std::time::Duration;

use crate::contracts::contract::Grading;
use crate::load::discover::Skipped;
use crate::model::captured::Captured;
use crate::model::cause::{Cause, Departure};
use crate::model::implementation::ImplInfo;
use crate::model::outcome::{Outcome, OutcomeKind};
use crate::run::exit;

/// Why specs that `--fail-fast` kept from running are skipped.
pub(crate) const NOT_RUN_FAIL_FAST: &str = "not run: --fail-fast";

/// Why specs are skipped once the world (a broker) broke: the one it broke under, and every
/// one not finished.
pub(crate) const NOT_RUN_WORLD: &str = "not run: the broker failed";

/// Why specs not finished when the run's budget ran out are skipped: those never started,
/// and the one running then (its implementation was ended under it, so its end says nothing).
pub(crate) const NOT_RUN_BUDGET: &str = "not run: budget";

/// Why specs are not run once the implementation hung (a request never returned): every spec
/// after the one it hung in. Each would wait out its own timeout to say the same.
pub(crate) const NOT_RUN_HUNG: &str = "not run: the solution hung in an earlier spec";

/// The result of one spec.
#[derive(Debug, Clone)]
pub struct SpecReport {
    pub path: String,
    /// `None` when the spec could not be loaded.
    pub(crate) name: Option<String>,
    pub(crate) contract: Option<&'static str>,
    pub rules: Vec<String>,
    pub outcome: Outcome,
    pub(crate) duration: Duration,
    /// What the implementation printed and raised while the spec ran, when it says.
    pub(crate) output: Option<Captured>,
    /// Its points and visibility (the defaults when it could not be loaded).
    pub(crate) grading: Grading,
    /// The spec's text, when it loaded: the scenario, for reports that show the test's code.
    pub(crate) source: Option<Arc<str>>,
    /// Where the implementation first departed from the reference, when the spec failed with
    /// a difference and its contract could tell: what `cause` is made from.
    pub departure: Option<Box<Departure>>,
    /// Why it failed (`None` for what is no failure): where the implementation departed from
    /// the reference, or what broke; in a run, joined to the cause of an earlier failure of
    /// the same mistake (`model::cause::Causes`).
    pub(crate) cause: Option<Cause>,
}

/// The counts of a run, by outcome, and what it has to say at its end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub(crate) mismatched: usize,
    pub(crate) errored: usize,
    pub(crate) spec_errors: usize,
    pub(crate) skipped: usize,
    /// Failures a known-failures file lists: they do not fail the run.
    pub(crate) expected_failures: usize,
    /// Listed known failures that passed: they fail the run.
    pub(crate) stale: usize,
    pub(crate) duration: Duration,
    /// What the run has to say about how it chose its specs (e.g. `--last-failed` found
    /// none recorded), for the command to tell.
    pub(crate) notes: Vec<String>,
    /// How many of the skipped specs the budget kept from finishing ([`NOT_RUN_BUDGET`]).
    pub(crate) not_run_budget: usize,
    /// Specs that pass on the lesson's fake world and fail on the broker's (`--world`): the
    /// broker's, counted apart, failing no run.
    pub(crate) diverged: usize,
    /// What broke the world (a broker) under the run: the specs from then on are not run,
    /// and the run exits 2.
    pub(crate) world_fault: Option<String>,
    /// How many specs the broken world kept from finishing ([`NOT_RUN_WORLD`]).
    pub(crate) not_run_world: usize,
    /// How many specs a hung implementation kept from running ([`NOT_RUN_HUNG`]).
    pub(crate) not_run_hung: usize,
    /// Where the implementation hung and what never returned, said once for the whole run
    /// (also among `notes`): what a student's results put on top.
    pub(crate) hung: Option<String>,
    /// Specs of a contract the implementation has no class of: not attempted, no failure.
    pub(crate) not_attempted: usize,
}

impl Summary {
    pub(crate) fn add(&mut self, outcome: &Outcome) {
        match outcome.kind() {
            OutcomeKind::Passed => self.passed += 1,
            OutcomeKind::Mismatch => self.mismatched += 1,
            OutcomeKind::Errored => self.errored += 1,
            OutcomeKind::SpecError => self.spec_errors += 1,
            OutcomeKind::Skipped => self.skipped += 1,
            OutcomeKind::NotAttempted => self.not_attempted += 1,
            OutcomeKind::ExpectedFailure => self.expected_failures += 1,
            OutcomeKind::Stale => self.stale += 1,
            OutcomeKind::Divergence => self.diverged += 1,
            // The runner tells it as not run: it never reaches a summary as itself.
            OutcomeKind::WorldFault => self.skipped += 1,
        }
    }

    pub(crate) fn failed(&self) -> usize {
        self.mismatched + self.errored + self.spec_errors + self.stale
    }

    pub(crate) fn total(&self) -> usize {
        self.passed
            + self.failed()
            + self.skipped
            + self.expected_failures
            + self.diverged
            + self.not_attempted
    }

    pub(crate) fn exit_code(&self) -> i32 {
        // A run whose broker broke checked less than it was asked to, and not for the
        // implementation's fault: no pass, and no failure of it either.
        if self.spec_errors > 0 || self.world_fault.is_some() {
            exit::SPEC_OR_USAGE_ERROR
        } else if self.failed() > 0 || self.not_run_budget > 0 {
            // A run its budget stopped checked less than it was asked to: no pass.
            exit::FAILED
        } else {
            exit::PASSED
        }
    }
}

/// What a run tells its reporters: `Started` once, `Finished` for each spec in the run's
/// order, then `Done` once.
pub enum Event<'a> {
    Started {
        /// Specs that will be reported.
        total: usize,
        /// Specs found but left out by `--filter` or `--partition`.
        filtered_out: usize,
        implementation: &'a ImplInfo,
        /// Paths discovery left out (links out of the tree, loops, FIFOs...), with why.
        skipped: &'a [Skipped],
        /// What the run says of its world, one line each (`--world`): which, and what it
        /// cannot give the specs. Empty on the fake world.
        world: &'a [String],
    },
    Finished(&'a SpecReport),
    Done(&'a Summary),
}

/// What a run tells its events to: a report format, the progress bar, or a command that keeps
/// what it needs of them.
pub trait Reporter {
    fn event(&mut self, event: &Event);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_errors_outrank_failures_in_the_exit_code() {
        let mut summary = Summary {
            passed: 3,
            ..Summary::default()
        };
        assert_eq!(summary.exit_code(), exit::PASSED);
        summary.skipped = 1;
        assert_eq!(summary.exit_code(), exit::PASSED);
        summary.mismatched = 1;
        assert_eq!(summary.exit_code(), exit::FAILED);
        summary.spec_errors = 1;
        assert_eq!(summary.exit_code(), exit::SPEC_OR_USAGE_ERROR);
        assert_eq!(summary.failed(), 2);
        assert_eq!(summary.total(), 6);
    }
}
