//! Known failures: specs or rules an implementation is known to fail, listed in a YAML file.
//!
//! A listed failure is reported as expected and does not fail the run; a listed spec that
//! passes does (the list is stale: remove the entry), as toml-test does with its skip lists.
//! The file is a list of entries, each naming a spec file (`spec:`, relative to the current
//! folder, as `dlqspec run` prints it) or a rule id (`rule:`), with an optional `reason:`.
//! A rule entry expects the failures of every spec covering the rule, and is stale when all
//! of them pass. docs/known-failures.md describes the format.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::load::loader::LoadedSpec;
use crate::model::outcome::{ExpectedFailure, Outcome};
use crate::text::source::{Position, SourceFile, display_path};
use crate::text::spec_error::{SpecError, SpecErrorKind};
use crate::text::yaml::{self, Spanned};

/// A loaded known-failures file.
#[derive(Debug, Clone)]
pub struct KnownFailures {
    /// The file as given, for messages.
    pub(crate) path: String,
    entries: Vec<KnownFailure>,
}

#[derive(Debug, Clone)]
struct KnownFailure {
    listed: KnownFailureKey,
    reason: Option<String>,
    position: Position,
}

#[derive(Debug, Clone)]
enum KnownFailureKey {
    /// A spec file, as found on disk.
    Spec(PathBuf),
    Rule(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    spec: Option<Spanned<String>>,
    rule: Option<Spanned<String>>,
    reason: Option<String>,
}

impl KnownFailures {
    pub(crate) fn load(path: &Path) -> Result<KnownFailures, SpecError> {
        // Read like a spec: bounded and never blocking.
        let file = SourceFile::read(path).map_err(|error| SpecError {
            kind: SpecErrorKind::Unreadable,
            path: display_path(path),
            position: Position::START,
            message: format!("cannot read the known-failures file: {error}"),
            source_line: None,
            more: Vec::new(),
            untold: None,
        })?;
        Self::parse(&file)
    }

    pub(crate) fn parse(file: &SourceFile) -> Result<KnownFailures, SpecError> {
        let raw: Option<Vec<Spanned<RawEntry>>> = yaml::parse(file)?;
        let mut entries = Vec::new();
        for item in raw.unwrap_or_default() {
            let position = yaml::at(&item);
            let RawEntry { spec, rule, reason } = item.value;
            let listed = match (spec, rule) {
                (Some(spec), None) => {
                    let found = std::fs::canonicalize(&spec.value)
                        .ok()
                        .filter(|p| p.is_file());
                    let Some(found) = found else {
                        return Err(SpecError::invalid(
                            file,
                            yaml::at(&spec),
                            format!(
                                "no spec file `{}` (paths are relative to the current folder)",
                                spec.value
                            ),
                        ));
                    };
                    KnownFailureKey::Spec(found)
                }
                (None, Some(rule)) => {
                    let known = crate::contracts::all()
                        .iter()
                        .any(|c| c.rules().iter().any(|r| r.id == rule.value));
                    if !known {
                        return Err(SpecError::invalid(
                            file,
                            yaml::at(&rule),
                            format!(
                                "unknown rule `{}`; `dlqspec rules` lists the rules",
                                rule.value
                            ),
                        ));
                    }
                    KnownFailureKey::Rule(rule.value)
                }
                (Some(_), Some(_)) | (None, None) => {
                    return Err(SpecError::invalid(
                        file,
                        position,
                        "an entry names either `spec: PATH` or `rule: RULE-ID` (and optionally `reason:`)",
                    ));
                }
            };
            entries.push(KnownFailure {
                listed,
                reason,
                position,
            });
        }
        Ok(KnownFailures {
            path: file.display_path(),
            entries,
        })
    }

    fn listed_at(&self, entry: &KnownFailure) -> String {
        format!(
            "{}:{}:{}",
            self.path, entry.position.line, entry.position.column
        )
    }

    /// Whether the failure of the spec at `path`, of `rules`, would be expected: its path or
    /// one of its rules is listed.
    pub(crate) fn lists(&self, path: &str, rules: &[String]) -> bool {
        let canonical = std::fs::canonicalize(path).ok();
        self.entries.iter().any(|entry| match &entry.listed {
            KnownFailureKey::Spec(file) => canonical.as_ref() == Some(file),
            KnownFailureKey::Rule(rule) => rules.contains(rule),
        })
    }

    /// What to expect of the specs about to run, in their order: each its path and what
    /// loading it gave (the run's prepared specs).
    pub(crate) fn expect(
        &self,
        prepared: &[(String, Result<LoadedSpec, SpecError>)],
    ) -> Expectations<'_> {
        let mut by_spec = vec![None; prepared.len()];
        let mut last_covering = HashMap::new();
        for (index, (path, loaded)) in prepared.iter().enumerate() {
            let canonical = std::fs::canonicalize(path).ok();
            for (entry_index, entry) in self.entries.iter().enumerate() {
                match &entry.listed {
                    KnownFailureKey::Spec(file) => {
                        if canonical.as_ref() == Some(file) && by_spec[index].is_none() {
                            by_spec[index] = Some(entry_index);
                        }
                    }
                    KnownFailureKey::Rule(rule) => {
                        let covers = loaded
                            .as_ref()
                            .is_ok_and(|s| s.scenario.header().rule_ids().any(|r| r == rule));
                        if covers {
                            last_covering.insert(entry_index, index);
                        }
                    }
                }
            }
        }
        Expectations {
            list: self,
            by_spec,
            last_covering,
            rule_failures: vec![0; self.entries.len()],
        }
    }
}

/// Known failures matched to the specs of one run; applied to each report as it finishes.
pub(crate) struct Expectations<'a> {
    list: &'a KnownFailures,
    /// The entry listing each spec by path.
    by_spec: Vec<Option<usize>>,
    /// For each rule entry, the last spec covering the rule: where staleness is decided.
    last_covering: HashMap<usize, usize>,
    /// For each rule entry, how many covering specs failed so far.
    rule_failures: Vec<usize>,
}

impl Expectations<'_> {
    /// Turns the outcome of spec `index`, of `rules`, into an expected failure, or a stale
    /// listing.
    pub(crate) fn apply(&mut self, index: usize, rules: &[String], outcome: &mut Outcome) {
        let list = self.list;
        let rule_entries: Vec<usize> = list
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(&e.listed, KnownFailureKey::Rule(r) if rules.contains(r)))
            .map(|(i, _)| i)
            .collect();
        let by_spec = self.by_spec.get(index).copied().flatten();
        match outcome {
            Outcome::Mismatch(_) | Outcome::Errored(_) => {
                for &entry in &rule_entries {
                    self.rule_failures[entry] += 1;
                }
                if let Some(entry) = by_spec.or(rule_entries.first().copied()) {
                    let entry = &list.entries[entry];
                    let failure = std::mem::replace(outcome, Outcome::Passed);
                    *outcome = Outcome::ExpectedFailure(Box::new(ExpectedFailure {
                        failure,
                        listed_at: list.listed_at(entry),
                        reason: entry.reason.clone(),
                    }));
                }
            }
            Outcome::Passed => {
                if let Some(entry) = by_spec {
                    *outcome = Outcome::Stale(format!(
                        "listed as a known failure ({}) but passed: remove it from {}",
                        list.listed_at(&list.entries[entry]),
                        list.path
                    ));
                    return;
                }
                let stale = rule_entries.iter().find(|&&entry| {
                    self.last_covering.get(&entry) == Some(&index) && self.rule_failures[entry] == 0
                });
                if let Some(&entry) = stale {
                    let entry = &list.entries[entry];
                    let KnownFailureKey::Rule(rule) = &entry.listed else {
                        return;
                    };
                    *outcome = Outcome::Stale(format!(
                        "rule `{rule}` is listed as a known failure ({}) but every spec covering it passed: remove it from {}",
                        list.listed_at(entry),
                        list.path
                    ));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::implementation::{ImplError, ImplErrorKind};
    use crate::run::events::SpecReport;
    use crate::run::runner::{Prepared, RunConfig};

    fn parse(text: &str) -> Result<KnownFailures, SpecError> {
        KnownFailures::parse(&SourceFile::from_text("known.yaml", text))
    }

    fn report(path: &str, rules: &[&str], outcome: Outcome) -> SpecReport {
        SpecReport {
            path: path.into(),
            name: Some("x".into()),
            contract: Some("dlq-consumer"),
            rules: rules.iter().map(|r| r.to_string()).collect(),
            outcome,
            duration: Duration::ZERO,
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        }
    }

    fn errored() -> Outcome {
        Outcome::Errored(ImplError::new(ImplErrorKind::Timeout, "hung"))
    }

    /// The bundled specs, with the rules each covers.
    fn bundled() -> Vec<Prepared> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        crate::run::runner::prepare(&RunConfig {
            paths: vec![root.join("specs/dlq-consumer/poison-cycle.yaml")],
            ..RunConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn entries_are_checked_where_they_are_written() {
        assert_eq!(
            parse("- spec: specs/nope.yaml\n").unwrap_err().to_string(),
            "known.yaml:1:9: no spec file `specs/nope.yaml` (paths are relative to the current folder)"
        );
        assert_eq!(
            parse("- rule: dlq-consumer/nope\n")
                .unwrap_err()
                .to_string(),
            "known.yaml:1:9: unknown rule `dlq-consumer/nope`; `dlqspec rules` lists the rules"
        );
        assert_eq!(
            parse("- reason: why\n").unwrap_err().to_string(),
            "known.yaml:1:3: an entry names either `spec: PATH` or `rule: RULE-ID` (and optionally `reason:`)"
        );
        assert!(
            parse("- rule: dlq-consumer/poison\n  reasn: x\n")
                .unwrap_err()
                .to_string()
                .starts_with("known.yaml:2:3: unknown field `reasn`"),
        );
        assert!(parse("# nothing known yet\n").unwrap().entries.is_empty());
        assert!(parse("").unwrap().entries.is_empty());
        assert!(parse("\n  \n").unwrap().entries.is_empty());
    }

    #[test]
    fn a_listed_failure_is_expected_and_a_listed_pass_is_stale() {
        let prepared = bundled();
        let path = &prepared[0].0;
        let spec = std::fs::canonicalize(path).unwrap();
        let list = parse(&format!(
            "- spec: {}\n  reason: poison not written yet\n",
            spec.display()
        ))
        .unwrap();
        let mut expected = list.expect(&prepared);
        let mut failing = report(path, &[], errored());
        expected.apply(0, &failing.rules, &mut failing.outcome);
        let Outcome::ExpectedFailure(known) = &failing.outcome else {
            panic!("{:?}", failing.outcome);
        };
        assert_eq!(known.listed_at, "known.yaml:1:3");
        assert_eq!(known.reason.as_deref(), Some("poison not written yet"));
        assert!(matches!(known.failure, Outcome::Errored(_)));
        assert!(!failing.outcome.is_failure());

        let mut passing = report(path, &[], Outcome::Passed);
        expected.apply(0, &passing.rules, &mut passing.outcome);
        let Outcome::Stale(message) = &passing.outcome else {
            panic!("{:?}", passing.outcome);
        };
        assert_eq!(
            message,
            "listed as a known failure (known.yaml:1:3) but passed: remove it from known.yaml"
        );
        assert!(passing.outcome.is_failure());
    }

    #[test]
    fn a_rule_is_stale_only_when_every_covering_spec_passed() {
        let prepared = bundled();
        let path = &prepared[0].0;
        let rules = ["dlq-consumer/poison"];
        let list = parse("- rule: dlq-consumer/poison\n").unwrap();

        let mut passing = report(path, &rules, Outcome::Passed);
        list.expect(&prepared)
            .apply(0, &passing.rules, &mut passing.outcome);
        assert!(
            matches!(&passing.outcome, Outcome::Stale(m) if m.starts_with("rule `dlq-consumer/poison` is listed as a known failure (known.yaml:1:3) but every spec covering it passed")),
            "{:?}",
            passing.outcome
        );

        let mut failing = report(path, &rules, errored());
        list.expect(&prepared)
            .apply(0, &failing.rules, &mut failing.outcome);
        assert!(matches!(failing.outcome, Outcome::ExpectedFailure(_)));

        // Specs not listed, and spec errors, are left alone.
        let mut other = report(path, &["dlq-consumer/success"], errored());
        list.expect(&prepared)
            .apply(0, &other.rules, &mut other.outcome);
        assert!(matches!(other.outcome, Outcome::Errored(_)));
    }
}
