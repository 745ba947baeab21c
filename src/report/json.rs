//! The JSON-lines reporter: one JSON object per runner event, documented in docs/reports.md.
//!
//! It fills the run record's types (`formats::record`, versioned by `FORMAT_VERSION`) and writes
//! each as one line; what a line holds is decided there.

use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

use super::render;
use crate::formats::record::{
    BrokerProperty, DivergenceRecord, ImplErrorRecord, MismatchRecord, RunEvent, RunFinished,
    RunStarted, SkippedPath, SpecErrorRecord, SpecFinished,
};
use crate::model::cause::Cause;
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport, Summary};
use crate::text::spec_error::{SpecError, Untold};

pub(crate) use crate::formats::record::FORMAT_VERSION;

pub(crate) struct JsonReporter<W: Write> {
    out: W,
}

impl<W: Write> JsonReporter<W> {
    pub(crate) fn new(out: W) -> Self {
        JsonReporter { out }
    }

    #[cfg(test)]
    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}

fn spec_error_record(e: &SpecError) -> SpecErrorRecord<'_> {
    SpecErrorRecord {
        kind: e.kind,
        path: Cow::Borrowed(&e.path),
        line: e.position.line,
        column: e.position.column,
        message: Cow::Borrowed(&e.message),
        source_line: e
            .source_line
            .as_ref()
            .map(|l| Cow::Borrowed(l.text.as_str())),
        more: e.more.iter().map(spec_error_record).collect(),
        untold: e.untold.map(|u| Cow::Borrowed(Untold::says(u))),
    }
}

/// Milliseconds with microsecond resolution.
fn millis(duration: Duration) -> f64 {
    duration.as_micros() as f64 / 1000.0
}

fn borrowed(text: &Option<String>) -> Option<Cow<'_, str>> {
    text.as_deref().map(Cow::Borrowed)
}

fn spec_finished(report: &SpecReport) -> SpecFinished<'_> {
    let outcome = &report.outcome;
    let plain = super::Palette::plain();
    let cause = report.cause.as_ref();
    SpecFinished {
        path: Cow::Borrowed(&report.path),
        name: borrowed(&report.name),
        contract: report.contract.map(Cow::Borrowed),
        rules: Cow::Borrowed(&report.rules),
        points: report.grading.points,
        outcome: outcome.kind(),
        duration_ms: millis(report.duration),
        mismatch: match outcome {
            Outcome::Mismatch(m) => Some(MismatchRecord {
                step: Cow::Borrowed(&m.step),
                line: m.position.line,
                column: m.position.column,
                expected: Cow::Borrowed(&m.expected),
                actual: Cow::Borrowed(&m.actual),
                note: borrowed(&m.note),
                diff: render::diff(&m.expected, &m.actual, &plain),
            }),
            _ => None,
        },
        spec_error: match outcome {
            Outcome::SpecError(e) => Some(spec_error_record(e)),
            _ => None,
        },
        impl_error: match outcome {
            Outcome::Errored(e) => Some(ImplErrorRecord {
                kind: e.kind,
                message: Cow::Borrowed(&e.message),
            }),
            _ => None,
        },
        skip_reason: match outcome {
            Outcome::Skipped(reason) => Some(Cow::Borrowed(reason)),
            _ => None,
        },
        not_attempted: match outcome {
            Outcome::NotAttempted(why) => Some(Cow::Borrowed(why)),
            _ => None,
        },
        divergence: match outcome {
            Outcome::Divergence(d) => Some(DivergenceRecord {
                world: Cow::Borrowed(&d.world),
                broker_properties: d
                    .properties
                    .iter()
                    .map(|p| BrokerProperty {
                        id: Cow::Borrowed(p.id),
                        says: Cow::Borrowed(p.says),
                        means: Cow::Borrowed(p.means),
                        first: Cow::Borrowed(&p.first),
                    })
                    .collect(),
                failure: d.failure.kind(),
            }),
            _ => None,
        },
        details: match outcome {
            Outcome::Passed => None,
            _ => Some(render::details(&report.path, outcome)),
        },
        cause: cause.map(Cause::summary),
        cause_id: cause.map(|c| Cow::Borrowed(c.id.as_str())),
        cause_rule: cause.and_then(|c| c.rule).map(Cow::Borrowed),
        departure: cause.and_then(|c| c.told.as_deref()).map(Cow::Borrowed),
        known_mistake: cause.and_then(|c| c.mistake).map(Cow::Borrowed),
        output: report.output.as_ref().map(Cow::Borrowed),
    }
}

fn run_finished(summary: &Summary) -> RunFinished {
    RunFinished {
        passed: summary.passed,
        mismatched: summary.mismatched,
        errored: summary.errored,
        spec_errors: summary.spec_errors,
        skipped: summary.skipped,
        expected_failures: summary.expected_failures,
        stale: summary.stale,
        failed: summary.failed(),
        total: summary.total(),
        duration_ms: millis(summary.duration),
        exit_code: summary.exit_code(),
        diverged: summary.diverged,
        not_attempted: summary.not_attempted,
        world_fault: summary.world_fault.clone(),
    }
}

impl<W: Write> Reporter for JsonReporter<W> {
    fn event(&mut self, event: &Event) {
        let line = match event {
            Event::Started {
                total,
                filtered_out,
                implementation,
                skipped,
                world,
            } => RunEvent::RunStarted(RunStarted {
                format_version: FORMAT_VERSION,
                dlqspec_version: Cow::Borrowed(env!("CARGO_PKG_VERSION")),
                implementation: Cow::Borrowed(implementation),
                total: *total,
                filtered_out: *filtered_out,
                skipped: skipped
                    .iter()
                    .map(|s| SkippedPath {
                        path: crate::text::source::display_path(&s.path),
                        reason: s.reason.clone(),
                    })
                    .collect(),
                world: Cow::Borrowed(world),
            }),
            Event::Finished(report) => RunEvent::SpecFinished(Box::new(spec_finished(report))),
            Event::Done(summary) => RunEvent::RunFinished(run_finished(summary)),
        };
        // Flushed per line so a consumer can follow the run live; a closed pipe is not a panic.
        let Ok(text) = serde_json::to_string(&line) else {
            return;
        };
        let _ =
            writeln!(self.out, "{}", super::sanitize::json(&text)).and_then(|()| self.out.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::implementation::{ImplError, ImplErrorKind, ImplInfo};
    use crate::model::outcome::Mismatch;
    use crate::text::source::Position;
    use serde_json::{Value, json};

    fn lines(events: &[Event]) -> Vec<Value> {
        let mut reporter = JsonReporter::new(Vec::new());
        for event in events {
            reporter.event(event);
        }
        String::from_utf8(reporter.into_inner())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    fn report(outcome: Outcome) -> SpecReport {
        SpecReport {
            path: "specs/a.yaml".into(),
            name: Some("a spec".into()),
            contract: Some("dlq-consumer"),
            rules: vec!["dlq-consumer/poison".into()],
            outcome,
            duration: Duration::from_micros(1500),
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        }
    }

    #[test]
    fn a_run_is_started_spec_and_finished_lines() {
        let info = ImplInfo {
            label: "builtin".into(),
            language: "rust".into(),
            is_reference: true,
        };
        let summary = Summary {
            passed: 1,
            ..Summary::default()
        };
        let passed = report(Outcome::Passed);
        let got = lines(&[
            Event::Started {
                total: 1,
                filtered_out: 2,
                implementation: &info,
                skipped: &[],
                world: &[],
            },
            Event::Finished(&passed),
            Event::Done(&summary),
        ]);
        assert_eq!(
            got[0],
            json!({"event": "run_started", "format_version": 1,
                   "dlqspec_version": env!("CARGO_PKG_VERSION"),
                   "implementation": {"label": "builtin", "language": "rust", "is_reference": true},
                   "total": 1, "filtered_out": 2})
        );
        assert_eq!(
            got[1],
            json!({"event": "spec_finished", "path": "specs/a.yaml", "name": "a spec",
                   "contract": "dlq-consumer", "rules": ["dlq-consumer/poison"],
                   "points": 1.0, "outcome": "passed", "duration_ms": 1.5})
        );
        assert_eq!(
            got[2],
            json!({"event": "run_finished", "passed": 1, "mismatched": 0, "errored": 0,
                   "spec_errors": 0, "skipped": 0, "expected_failures": 0, "stale": 0,
                   "failed": 0, "total": 1, "duration_ms": 0.0, "exit_code": 0})
        );
    }

    #[test]
    fn a_mismatch_carries_where_what_and_the_diff() {
        let mismatch = report(Outcome::Mismatch(Mismatch {
            step: "step 2 (process)".into(),
            position: Position::new(7, 14),
            expected: "retry\n".into(),
            actual: "dead\n".into(),
            note: None,
            step_as_written: None,
            rule: None,
        }));
        let mut mismatch = mismatch;
        let departure = crate::model::cause::Departure {
            rule: Some(&crate::contracts::dlq_consumer::rules::POISON),
            told: "after receiving p, the reference puts p in the DLQ; yours retried p".into(),
            shape: "after receiving X, the reference puts X in the DLQ; yours retried X".into(),
            key: "the reference puts X in the DLQ; yours retried X".into(),
            mistakes: vec![&crate::contracts::dlq_consumer::mistakes::MISTAKES[0]],
            raised: None,
            step: None,
        };
        mismatch.cause = Cause::of(&mismatch.outcome, Some(&departure), None, &mismatch.rules);
        let got = &lines(&[Event::Finished(&mismatch)])[0];
        assert_eq!(got["outcome"], "mismatch");
        assert_eq!(
            got["mismatch"],
            json!({"step": "step 2 (process)", "line": 7, "column": 14,
                   "expected": "retry\n", "actual": "dead\n", "note": null,
                   "diff": "--- expected\n+++ actual\n@@ -1,1 +1,1 @@\n-retry\n+dead\n"})
        );
        assert!(
            got["details"]
                .as_str()
                .unwrap()
                .starts_with("first difference at step 2 (process) (specs/a.yaml:7:14)\n")
        );
        // Its cause as the human report groups failures: the rule and the shape of the miss,
        // its key, and this spec's own departure.
        assert_eq!(
            got["cause"],
            "dlq-consumer/poison: after receiving X, the reference puts X in the DLQ; yours retried X",
            "{got}"
        );
        let id = mismatch.cause.as_ref().map(|c| c.id.as_str());
        assert_eq!(got["cause_id"].as_str(), id);
        assert_eq!(got["cause_rule"], "dlq-consumer/poison");
        assert_eq!(
            got["departure"],
            "after receiving p, the reference puts p in the DLQ; yours retried p"
        );
        assert_eq!(
            got["known_mistake"],
            crate::contracts::dlq_consumer::mistakes::MISTAKES[0].what
        );
    }

    #[test]
    fn errors_and_skips_carry_their_own_fields() {
        let errored = report(Outcome::Errored(ImplError::new(
            ImplErrorKind::Timeout,
            "no answer in 5s",
        )));
        let skipped = report(Outcome::Skipped("not run: --fail-fast".into()));
        let got = lines(&[Event::Finished(&errored), Event::Finished(&skipped)]);
        assert_eq!(
            got[0]["impl_error"],
            json!({"kind": "timeout", "message": "no answer in 5s"})
        );
        assert_eq!(got[1]["outcome"], "skipped");
        assert_eq!(got[1]["skip_reason"], "not run: --fail-fast");
        assert!(got[1].get("mismatch").is_none());
    }
}
