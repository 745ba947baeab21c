//! The runner: finds specs, runs each against one implementation, and emits events.
//!
//! Reporters consume the events; the runner never prints.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::contract::RunMode;
use crate::discover::{self, DiscoverError};
use crate::implementation::{ImplInfo, Implementation};
use crate::known_failures::KnownFailures;
use crate::loader::{self, LoadedSpec};
use crate::outcome::{Outcome, OutcomeKind};
use crate::source::display_path;
use crate::spec_error::SpecError;

/// Exit codes, as documented in the README.
pub mod exit {
    /// Every spec passed (skipped specs do not count against a run).
    pub const PASSED: i32 = 0;
    /// Some spec failed: a mismatch, or the implementation errored.
    pub const FAILED: i32 = 1;
    /// A spec is broken, or the command line is wrong.
    pub const SPEC_OR_USAGE_ERROR: i32 = 2;
}

#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    pub paths: Vec<PathBuf>,
    /// Run only specs whose path, name or one of whose rule ids contains one of these.
    pub filters: Vec<String>,
    /// Failures expected of the implementation; applied to each spec's outcome after it ran.
    pub known_failures: Option<KnownFailures>,
}

/// The result of one spec.
#[derive(Debug, Clone)]
pub struct SpecReport {
    pub path: String,
    /// `None` when the spec could not be loaded.
    pub name: Option<String>,
    pub contract: Option<&'static str>,
    pub rules: Vec<String>,
    pub outcome: Outcome,
    pub duration: Duration,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub mismatched: usize,
    pub errored: usize,
    pub spec_errors: usize,
    pub skipped: usize,
    /// Failures a known-failures file lists: they do not fail the run.
    pub expected_failures: usize,
    /// Listed known failures that passed: they fail the run.
    pub stale: usize,
    pub duration: Duration,
}

impl Summary {
    pub fn add(&mut self, outcome: &Outcome) {
        match outcome.kind() {
            OutcomeKind::Passed => self.passed += 1,
            OutcomeKind::Mismatch => self.mismatched += 1,
            OutcomeKind::Errored => self.errored += 1,
            OutcomeKind::SpecError => self.spec_errors += 1,
            OutcomeKind::Skipped => self.skipped += 1,
            OutcomeKind::ExpectedFailure => self.expected_failures += 1,
            OutcomeKind::Stale => self.stale += 1,
        }
    }

    pub fn failed(&self) -> usize {
        self.mismatched + self.errored + self.spec_errors + self.stale
    }

    pub fn total(&self) -> usize {
        self.passed + self.failed() + self.skipped + self.expected_failures
    }

    pub fn exit_code(&self) -> i32 {
        if self.spec_errors > 0 {
            exit::SPEC_OR_USAGE_ERROR
        } else if self.failed() > 0 {
            exit::FAILED
        } else {
            exit::PASSED
        }
    }
}

pub enum Event<'a> {
    Started {
        total: usize,
        implementation: &'a ImplInfo,
    },
    Finished(&'a SpecReport),
    Done(&'a Summary),
}

pub trait Reporter {
    fn event(&mut self, event: &Event);
}

/// A spec after loading, before running: either ready or already failed.
pub type Prepared = (String, Result<LoadedSpec, SpecError>);

/// Loads every spec under the configured paths and keeps those the filters select.
pub fn prepare(config: &RunConfig) -> Result<Vec<Prepared>, DiscoverError> {
    let files = discover::spec_files(&config.paths)?;
    let mut prepared = Vec::with_capacity(files.len());
    for path in files {
        let shown = display_path(&path);
        let loaded = loader::load_path(&path);
        if selected(&config.filters, &shown, loaded.as_ref().ok()) {
            prepared.push((shown, loaded));
        }
    }
    Ok(prepared)
}

fn selected(filters: &[String], path: &str, spec: Option<&LoadedSpec>) -> bool {
    if filters.is_empty() {
        return true;
    }
    filters.iter().any(|filter| {
        path.contains(filter.as_str())
            || spec.is_some_and(|spec| {
                let header = spec.scenario.header();
                header.name.contains(filter.as_str())
                    || header.rule_ids().any(|r| r.contains(filter.as_str()))
            })
    })
}

/// Runs one prepared spec.
pub fn run_one(prepared: &Prepared, implementation: &mut dyn Implementation) -> SpecReport {
    let started = Instant::now();
    let (path, loaded) = prepared;
    let (name, contract, rules, outcome) = match loaded {
        Err(error) => (None, None, Vec::new(), Outcome::SpecError(error.clone())),
        Ok(spec) => {
            let header = spec.scenario.header();
            let outcome = match implementation.begin_spec() {
                Err(error) => Outcome::Errored(error),
                Ok(()) => spec.scenario.run(implementation, RunMode::Check).outcome,
            };
            (
                Some(header.name.clone()),
                Some(spec.contract.name()),
                header.rule_ids().map(str::to_owned).collect(),
                outcome,
            )
        }
    };
    SpecReport {
        path: path.clone(),
        name,
        contract,
        rules,
        outcome,
        duration: started.elapsed(),
    }
}

/// Runs every selected spec in order, reporting as it goes.
pub fn run(
    config: &RunConfig,
    implementation: &mut dyn Implementation,
    reporter: &mut dyn Reporter,
) -> Result<Summary, DiscoverError> {
    let started = Instant::now();
    let prepared = prepare(config)?;
    let info = implementation.info();
    reporter.event(&Event::Started {
        total: prepared.len(),
        implementation: &info,
    });
    let mut summary = Summary::default();
    let mut expected = config.known_failures.as_ref().map(|k| k.expect(&prepared));
    for (index, spec) in prepared.iter().enumerate() {
        let mut report = run_one(spec, implementation);
        if let Some(expected) = &mut expected {
            expected.apply(index, &mut report);
        }
        summary.add(&report.outcome);
        reporter.event(&Event::Finished(&report));
    }
    summary.duration = started.elapsed();
    reporter.event(&Event::Done(&summary));
    Ok(summary)
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
