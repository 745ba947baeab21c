//! A submission's JSON-lines report read back against the suite: its score, counts and each
//! rule's and spec's verdict (`tally`), and the specs it mismatched, whose pictures are drawn.

use std::collections::{BTreeMap, BTreeSet};

use crate::formats::grade::SpecOutcome;
use crate::formats::record::{RunEvent, SpecFinished, read_events};
use crate::model::implementation::ImplErrorKind;
use crate::model::outcome::OutcomeKind;
use crate::run::grading::row::{Marks, RuleVerdict, SpecVerdict, cause_line};
use crate::run::grading::suite::SuiteSpec;

/// What a submission's JSON-lines report says: its marks, and how its run ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ReportTally {
    /// What the report earned: what the submission's row keeps.
    pub(crate) marks: Marks,
    /// Whether the run finished (its `run_finished` line is there).
    pub(crate) finished: bool,
    /// Whether no spec could run at all: every spec reported errored while the solution was
    /// starting.
    pub(crate) nothing_ran: bool,
    /// The first implementation error, for a broken submission's note.
    pub(crate) first_error: Option<String>,
    /// How many specs of the suite the run's budget kept from finishing
    /// ([`NOT_RUN_BUDGET`](crate::run::events::NOT_RUN_BUDGET)).
    pub(crate) not_run_budget: usize,
    /// How many specs of the suite were not run because the submission hung in an earlier
    /// one ([`NOT_RUN_HUNG`](crate::run::events::NOT_RUN_HUNG)).
    pub(crate) not_run_hung: usize,
    /// Where the submission hung, and what never returned: the first spec whose request
    /// timed out, with the first line of its error.
    pub(crate) hung: Option<String>,
    /// Why specs were not attempted: each class the submission lacks, as its run said it.
    pub(crate) not_attempted: Vec<String>,
}

/// Reads a submission's JSON-lines report (docs/reports.md) against the whole suite: every
/// spec of the suite counts in `max_score`, and only a spec the report says `passed` earns
/// its points. A spec of a contract it has no class of is not attempted: it scores 0 (the
/// course asked for the class) and fails nothing; a rule all of whose specs are not attempted
/// is not attempted. A spec that never ran (the submission hung in an earlier one, its budget
/// ran out, the report does not mention it) scores 0 and fails nothing; a rule none of whose
/// specs failed and some of whose never ran is not run. A listed known failure earns nothing
/// but fails nothing. Any other outcome fails: the rule its cause breaks, or the spec's rules.
pub(crate) fn tally(json_lines: &str, suite: &[SuiteSpec]) -> ReportTally {
    let mut tally = ReportTally::default();
    let known: BTreeSet<&str> = suite
        .iter()
        .flat_map(|spec| spec.rules.iter().map(String::as_str))
        .collect();
    let mut outcomes: BTreeMap<String, Box<SpecFinished<'static>>> = BTreeMap::new();
    for event in read_events(json_lines) {
        match event {
            // The last word on a spec is the run's: it writes its report once every
            // implementation process is gone, so whatever came earlier is not its.
            RunEvent::SpecFinished(spec) => {
                outcomes.insert(spec.path.to_string(), spec);
            }
            RunEvent::RunFinished(_) => tally.finished = true,
            // `run_started`, and any event a later format version adds.
            _ => {}
        }
    }
    let mut reported = 0;
    let mut startup_only = true;
    let mut marks = Marks::default();
    // Each rule: whether a failure fails it, whether every spec of it was not attempted, and
    // whether one never ran.
    let mut rule_states: BTreeMap<&str, (bool, bool, bool)> = BTreeMap::new();
    for spec in suite {
        let event = outcomes.get(&spec.path);
        let outcome = event.map(|e| e.outcome);
        marks.max_score += spec.points;
        // A divergence passes on the lesson's world: the broker's, not the submission's.
        let passed = matches!(outcome, Some(OutcomeKind::Passed | OutcomeKind::Divergence));
        let skipped = outcome == Some(OutcomeKind::Skipped);
        let skip_reason = event
            .and_then(|e| e.skip_reason.as_deref())
            .filter(|_| skipped);
        let budget = skip_reason == Some(crate::run::events::NOT_RUN_BUDGET);
        if budget {
            tally.not_run_budget += 1;
        }
        let hung = skip_reason == Some(crate::run::events::NOT_RUN_HUNG);
        if hung {
            tally.not_run_hung += 1;
        }
        let verdict = match outcome {
            // A spec kept from running by its run's end or by a hang: no verdict on it.
            _ if budget || hung => SpecOutcome::NotRun,
            // A broker's fault is no verdict on the submission: the spec was not run.
            outcome => SpecOutcome::reported(outcome),
        };
        let not_attempted = verdict.is_not_attempted();
        // Kept from running while its run went on (a hang, its budget, a broker's fault): no
        // verdict. One its report does not mention at all (a run that never reported, one not
        // trusted) fails, as the row of such a run is no pass.
        let not_run = verdict == SpecOutcome::NotRun && outcome.is_some();
        let failed =
            !passed && !not_attempted && !not_run && outcome != Some(OutcomeKind::ExpectedFailure);
        if passed {
            marks.score += spec.points;
            marks.passed += 1;
        } else if failed {
            marks.failed += 1;
        } else if not_attempted {
            marks.not_attempted += 1;
        } else if not_run {
            marks.not_run += 1;
        }
        let cause_of = |text: Option<&str>| {
            text.filter(|_| failed && verdict != SpecOutcome::NotRun)
                .map(cause_line)
        };
        // The rule a cause breaks counts only when it is one of the suite's: the report is
        // the submission's own process's word.
        let cause_rule = cause_of(event.and_then(|e| e.cause_rule.as_deref()))
            .filter(|rule| known.contains(rule.as_str()));
        marks.specs.insert(
            spec.path.clone(),
            SpecVerdict {
                outcome: verdict,
                cause: cause_of(event.and_then(|e| e.cause.as_deref())),
                cause_id: cause_of(event.and_then(|e| e.cause_id.as_deref())),
                cause_rule: cause_rule.clone(),
            },
        );
        if let Some(why) = event.and_then(|e| e.not_attempted.as_deref())
            && !tally.not_attempted.iter().any(|known| known == why)
        {
            tally.not_attempted.push(cause_line(why));
        }
        if let Some(error) = event.and_then(|e| e.impl_error.as_ref())
            && error.kind == ImplErrorKind::Timeout
            && tally.hung.is_none()
        {
            let first = error.message.lines().next().unwrap_or_default();
            let what = match first.split_once(" never returned") {
                Some((what, _)) => format!("{what} never returned"),
                None => first.to_owned(),
            };
            tally.hung = Some(cause_line(&format!("{}: {what}", spec.path)));
        }
        if let Some(event) = event.filter(|_| !skipped && !not_attempted) {
            reported += 1;
            let startup_error = event.impl_error.as_ref().filter(|e| {
                outcome == Some(OutcomeKind::Errored) && e.kind == ImplErrorKind::Startup
            });
            if let Some(error) = startup_error
                && tally.first_error.is_none()
            {
                tally.first_error =
                    Some(error.message.lines().next().unwrap_or_default().to_owned());
            }
            startup_only &= startup_error.is_some();
        }
        for rule in &spec.rules {
            let state = rule_states
                .entry(rule.as_str())
                .or_insert((false, true, false));
            state.1 &= not_attempted;
            state.2 |= verdict == SpecOutcome::NotRun;
        }
        // A failure fails the rule its cause breaks: one mistake, one rule, however many specs
        // it fails. A failure no rule decides (an error) fails the spec's rules. A spec the
        // report does not mention fails no rule: nothing ran it.
        if failed && outcome.is_some() {
            let failing: Vec<&str> = match &cause_rule {
                Some(rule) => vec![known.get(rule.as_str()).copied().unwrap_or_default()],
                None => spec.rules.iter().map(String::as_str).collect(),
            };
            for rule in failing {
                rule_states.entry(rule).or_insert((false, false, false)).0 = true;
            }
        }
    }
    for (rule, (failed, not_attempted, not_run)) in rule_states {
        let verdict = if failed {
            RuleVerdict::Fail
        } else if not_attempted {
            RuleVerdict::NotAttempted
        } else if not_run {
            RuleVerdict::NotRun
        } else {
            RuleVerdict::Pass
        };
        marks.rules.insert(rule.to_owned(), verdict);
    }
    tally.marks = marks;
    tally.nothing_ran = reported > 0 && startup_only;
    tally
}

/// The specs of `suite` whose outcome in a submission's JSON-lines report is `mismatch`, in
/// the suite's order: those whose picture shows where the submission and the spec part ways.
/// A hidden spec is none of them: its picture would show its student its expectations.
pub(crate) fn mismatched(json_lines: &str, suite: &[SuiteSpec]) -> Vec<String> {
    let mut outcomes: BTreeMap<String, OutcomeKind> = BTreeMap::new();
    for event in read_events(json_lines) {
        if let RunEvent::SpecFinished(spec) = event {
            outcomes.insert(spec.path.into_owned(), spec.outcome);
        }
    }
    suite
        .iter()
        .filter(|spec| !spec.hidden && outcomes.get(&spec.path) == Some(&OutcomeKind::Mismatch))
        .map(|spec| spec.path.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::grading::row::MAX_CAUSE_BYTES;
    use crate::run::grading::suite::suite_spec;
    use serde_json::Value;

    /// carries (a test names only those it is about).
    fn report(lines: &[&str]) -> String {
        let spec = serde_json::json!({"name": null, "contract": null, "rules": [], "points": 1,
            "duration_ms": 0.5});
        let finished = serde_json::json!({"passed": 0, "mismatched": 0, "errored": 0,
            "spec_errors": 0, "skipped": 0, "expected_failures": 0, "stale": 0, "failed": 0,
            "total": 0, "duration_ms": 1.0, "exit_code": 0});
        lines
            .iter()
            .map(|line| {
                let mut event: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
                let defaults = match event.get("event").and_then(Value::as_str) {
                    Some("spec_finished") => &spec,
                    Some("run_finished") => &finished,
                    _ => &Value::Null,
                };
                for (key, value) in defaults.as_object().into_iter().flatten() {
                    event.entry(key.clone()).or_insert_with(|| value.clone());
                }
                serde_json::to_string(&event).unwrap()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_report_cut_short_keeps_its_whole_lines_and_reads_fields_it_does_not_know() {
        let suite = [
            suite_spec("a.yaml", 1.0, &["r/a"]),
            suite_spec("b.yaml", 1.0, &["r/b"]),
        ];
        let whole = report(&[
            r#"{"event":"spec_finished","path":"a.yaml","outcome":"passed","added_later":[1]}"#,
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"passed"}"#,
        ]);
        // A killed run: its last line cut short.
        let tally = tally(&whole[..whole.len() - 10], &suite);
        assert_eq!(
            tally.marks.specs["a.yaml"].outcome,
            SpecOutcome::Ran(OutcomeKind::Passed)
        );
        assert_eq!(tally.marks.specs["b.yaml"].outcome, SpecOutcome::NotRun);
        assert_eq!((tally.marks.passed, tally.marks.failed), (1, 1));
        assert!(!tally.finished);
    }

    #[test]
    fn a_hidden_spec_is_never_among_those_drawn() {
        let mut suite = vec![
            suite_spec("a.yaml", 1.0, &[]),
            suite_spec("b.yaml", 1.0, &[]),
            suite_spec("c.yaml", 1.0, &[]),
        ];
        suite[1].hidden = true;
        let lines = ["a.yaml", "b.yaml", "c.yaml"].map(|path| {
            format!(r#"{{"event":"spec_finished","path":"{path}","outcome":"mismatch"}}"#)
        });
        let lines = report(&lines.each_ref().map(String::as_str));
        assert_eq!(mismatched(&lines, &suite), ["a.yaml", "c.yaml"]);
    }

    #[test]
    fn a_report_tallies_the_suites_points_and_rules() {
        let suite = [
            suite_spec("a.yaml", 2.0, &["r/a", "r/b"]),
            suite_spec("b.yaml", 1.0, &["r/b"]),
        ];
        let lines = report(&[
            r#"{"event":"run_started"}"#,
            r#"{"event":"spec_finished","path":"a.yaml","rules":["r/a","r/b"],"points":2,"outcome":"passed"}"#,
            r#"{"event":"spec_finished","path":"b.yaml","rules":["r/b"],"points":1,"outcome":"mismatch","cause":"r/b: late\nmore"}"#,
            r#"{"event":"run_finished"}"#,
        ]);
        let tally = tally(&lines, &suite);
        // Each spec's verdict, and a failure's cause in one line.
        assert_eq!(
            tally.marks.specs["a.yaml"].outcome,
            SpecOutcome::Ran(OutcomeKind::Passed)
        );
        assert_eq!(tally.marks.specs["a.yaml"].cause, None);
        assert_eq!(
            tally.marks.specs["b.yaml"].outcome,
            SpecOutcome::Ran(OutcomeKind::Mismatch)
        );
        assert_eq!(
            tally.marks.specs["b.yaml"].cause.as_deref(),
            Some("r/b: late")
        );
        assert_eq!((tally.marks.score, tally.marks.max_score), (2.0, 3.0));
        assert_eq!((tally.marks.passed, tally.marks.failed), (1, 1));
        assert_eq!(tally.marks.rules["r/a"], RuleVerdict::Pass);
        assert_eq!(tally.marks.rules["r/b"], RuleVerdict::Fail);
        assert!(tally.finished && !tally.nothing_ran);
        let broken = r#"{"event":"spec_finished","path":"a.yaml","rules":[],"outcome":"errored","impl_error":{"kind":"startup","message":"could not be loaded\nmore"}}"#;
        let tally = super::tally(&report(&[broken]), &suite);
        assert!(tally.nothing_ran && !tally.finished);
        assert_eq!(tally.first_error.as_deref(), Some("could not be loaded"));
    }

    #[test]
    fn a_failure_fails_only_the_rule_its_cause_breaks() {
        let suite = [
            suite_spec("a.yaml", 1.0, &["r/a", "r/b"]),
            suite_spec("b.yaml", 1.0, &["r/b", "r/c"]),
            suite_spec("c.yaml", 1.0, &["r/d"]),
            suite_spec("d.yaml", 1.0, &["r/e"]),
        ];
        // One mistake breaking r/c fails a and b, whatever rules they list; c's cause names a
        // rule the suite does not have (forged, or of another suite): its own rules fail; d
        // errored, and no rule decides an error: its rules fail.
        let lines = report(&[
            r#"{"event":"spec_finished","path":"a.yaml","outcome":"mismatch","cause":"r/c: x","cause_id":"c1","cause_rule":"r/c"}"#,
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"mismatch","cause":"r/c: x","cause_id":"c1","cause_rule":"r/c"}"#,
            r#"{"event":"spec_finished","path":"c.yaml","outcome":"mismatch","cause":"forged: x","cause_id":"c2","cause_rule":"forged"}"#,
            r#"{"event":"spec_finished","path":"d.yaml","outcome":"errored","cause":"implementation error (timeout): late","cause_id":"c3"}"#,
        ]);
        let tally = tally(&lines, &suite);
        let verdicts: Vec<(&str, RuleVerdict)> = tally
            .marks
            .rules
            .iter()
            .map(|(r, v)| (r.as_str(), *v))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("r/a", RuleVerdict::Pass),
                ("r/b", RuleVerdict::Pass),
                ("r/c", RuleVerdict::Fail),
                ("r/d", RuleVerdict::Fail),
                ("r/e", RuleVerdict::Fail),
            ]
        );
        assert_eq!(tally.marks.specs["a.yaml"].cause_id.as_deref(), Some("c1"));
        assert_eq!(
            tally.marks.specs["a.yaml"].cause_rule.as_deref(),
            Some("r/c")
        );
        assert_eq!(tally.marks.specs["c.yaml"].cause_rule, None);
        assert!(!tally.marks.rules.contains_key("forged"));
    }

    #[test]
    fn a_hang_fails_the_spec_it_hung_in_and_leaves_the_rest_not_run_not_failed() {
        let suite = [
            suite_spec("a.yaml", 1.0, &["r/a"]),
            suite_spec("b.yaml", 1.0, &["r/b", "r/shared"]),
            suite_spec("c.yaml", 1.0, &["r/c", "r/shared"]),
            suite_spec("d.yaml", 1.0, &["r/d"]),
        ];
        let lines = report(&[
            r#"{"event":"spec_finished","path":"a.yaml","outcome":"passed"}"#,
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"errored","impl_error":{"kind":"timeout","message":"`process_one()` never returned: an infinite loop, or a wait on something that never comes (no reply within 5s; the process was killed)"}}"#,
            r#"{"event":"spec_finished","path":"c.yaml","outcome":"skipped","skip_reason":"not run: the solution hung in an earlier spec"}"#,
            r#"{"event":"spec_finished","path":"d.yaml","outcome":"skipped","skip_reason":"not run: the solution hung in an earlier spec"}"#,
            r#"{"event":"run_finished"}"#,
        ]);
        let tally = tally(&lines, &suite);
        assert_eq!(
            (
                tally.marks.passed,
                tally.marks.failed,
                tally.marks.not_run,
                tally.not_run_hung
            ),
            (1, 1, 2, 2)
        );
        assert_eq!(tally.marks.score, 1.0);
        let verdicts: Vec<(&str, RuleVerdict)> = tally
            .marks
            .rules
            .iter()
            .map(|(r, v)| (r.as_str(), *v))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("r/a", RuleVerdict::Pass),
                ("r/b", RuleVerdict::Fail),
                ("r/c", RuleVerdict::NotRun),
                ("r/d", RuleVerdict::NotRun),
                ("r/shared", RuleVerdict::Fail),
            ]
        );
        assert_eq!(tally.marks.specs["c.yaml"].outcome, SpecOutcome::NotRun);
        assert_eq!(
            tally.hung.as_deref(),
            Some("b.yaml: `process_one()` never returned")
        );
    }

    #[test]
    fn a_contract_not_attempted_scores_nothing_and_fails_nothing() {
        let suite = [
            suite_spec("d.yaml", 1.0, &["dlq/a"]),
            suite_spec("o1.yaml", 2.0, &["oq/a", "oq/b"]),
            suite_spec("o2.yaml", 1.0, &["oq/b"]),
        ];
        let why = "erin.py has no class `Stack`: the stack contract is not attempted";
        let not_attempted = |path: &str| {
            format!(
                r#"{{"event":"spec_finished","path":"{path}","outcome":"not_attempted","not_attempted":"{why}"}}"#
            )
        };
        let lines = report(&[
            r#"{"event":"spec_finished","path":"d.yaml","outcome":"passed"}"#,
            &not_attempted("o1.yaml"),
            &not_attempted("o2.yaml"),
            r#"{"event":"run_finished"}"#,
        ]);
        let tally = tally(&lines, &suite);
        assert_eq!(
            (
                tally.marks.score,
                tally.marks.max_score,
                tally.marks.failed,
                tally.marks.not_attempted
            ),
            (1.0, 4.0, 0, 2)
        );
        assert_eq!(tally.marks.rules["dlq/a"], RuleVerdict::Pass);
        assert_eq!(tally.marks.rules["oq/a"], RuleVerdict::NotAttempted);
        assert_eq!(tally.marks.rules["oq/b"], RuleVerdict::NotAttempted);
        assert!(tally.marks.specs["o1.yaml"].outcome.is_not_attempted());
        assert_eq!(tally.not_attempted, [why]);
        assert!(!tally.nothing_ran);
    }

    #[test]
    fn a_divergence_on_the_broker_scores_as_the_pass_it_is_on_the_lessons_world() {
        let suite = [suite_spec("a.yaml", 2.0, &["r/a"])];
        let line = r#"{"event":"spec_finished","path":"a.yaml","outcome":"divergence"}"#;
        let tally = tally(&report(&[line]), &suite);
        assert_eq!(
            (tally.marks.score, tally.marks.passed, tally.marks.failed),
            (2.0, 1, 0)
        );
        assert_eq!(tally.marks.rules["r/a"], RuleVerdict::Pass);
        assert_eq!(
            tally.marks.specs["a.yaml"].outcome,
            SpecOutcome::Ran(OutcomeKind::Divergence)
        );
    }

    #[test]
    fn what_a_report_skips_or_leaves_out_scores_nothing_of_its_points() {
        let suite = [
            suite_spec("a.yaml", 1.0, &["r/a"]),
            suite_spec("b.yaml", 5.0, &["r/b"]),
            suite_spec("c.yaml", 3.0, &["r/c"]),
            suite_spec("d.yaml", 1.0, &["r/d"]),
        ];
        // b is skipped (a class it does not have) after a claim that it passed, c is missing,
        // d a known failure; a spec the suite does not have, and points the report claims,
        // count for nothing.
        let lines = report(&[
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"passed"}"#,
            r#"{"event":"spec_finished","path":"a.yaml","points":100,"outcome":"passed"}"#,
            r#"{"event":"spec_finished","path":"b.yaml","outcome":"skipped"}"#,
            r#"{"event":"spec_finished","path":"d.yaml","outcome":"expected_failure"}"#,
            r#"{"event":"spec_finished","path":"forged.yaml","points":80,"outcome":"passed"}"#,
            r#"{"event":"run_finished"}"#,
        ]);
        let tally = tally(&lines, &suite);
        assert_eq!((tally.marks.score, tally.marks.max_score), (1.0, 10.0));
        assert_eq!((tally.marks.passed, tally.marks.failed), (1, 2));
        assert_eq!(tally.marks.rules["r/a"], RuleVerdict::Pass);
        assert_eq!(tally.marks.rules["r/b"], RuleVerdict::Fail);
        // Nothing ran c: its rule has no verdict, though the spec scores nothing.
        assert_eq!(tally.marks.rules["r/c"], RuleVerdict::NotRun);
        assert_eq!(tally.marks.rules["r/d"], RuleVerdict::Pass);
        assert!(!tally.marks.rules.contains_key("forged"));
        let outcomes: Vec<&str> = tally
            .marks
            .specs
            .values()
            .map(|v| v.outcome.as_str())
            .collect();
        assert_eq!(
            outcomes,
            ["passed", "skipped", "not_run", "expected_failure"]
        );
        // A spec the budget kept from finishing is not run, and counted.
        let stopped = r#"{"event":"spec_finished","path":"b.yaml","outcome":"skipped","skip_reason":"not run: budget"}"#;
        let tally = super::tally(&report(&[stopped]), &suite);
        assert_eq!(
            (tally.marks.specs["b.yaml"].outcome, tally.not_run_budget),
            (SpecOutcome::NotRun, 1)
        );
        // A long cause is cut, on a character.
        assert_eq!(
            cause_line(&"é".repeat(200)).len(),
            MAX_CAUSE_BYTES + "…".len()
        );
        // An empty report is no score either, out of the whole suite.
        let tally = super::tally("", &suite);
        assert_eq!(
            (tally.marks.score, tally.marks.max_score, tally.marks.failed),
            (0.0, 10.0, 4)
        );
        assert!(!tally.nothing_ran && !tally.finished);
    }
}
