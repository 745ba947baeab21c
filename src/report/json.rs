//! The JSON-lines reporter: one JSON object per runner event, documented in docs/reports.md.
//!
//! The field set is versioned by `FORMAT_VERSION`: fields may be added within a version,
//! never renamed, removed or given another meaning.

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use super::render;
use crate::model::captured::Captured;
use crate::model::implementation::ImplInfo;
use crate::model::outcome::{Outcome, OutcomeKind};
use crate::run::runner::{Event, Reporter, SpecReport, Summary};
use crate::text::spec_error::{SpecError, SpecErrorKind, Untold};

/// The version of the event format, in every `run_started` event.
pub const FORMAT_VERSION: u32 = 1;

pub struct JsonReporter<W: Write> {
    out: W,
}

impl<W: Write> JsonReporter<W> {
    pub fn new(out: W) -> Self {
        JsonReporter { out }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Line<'a> {
    RunStarted {
        format_version: u32,
        dlqspec_version: &'static str,
        implementation: &'a ImplInfo,
        total: usize,
        filtered_out: usize,
        /// Paths discovery left out, with why; only when there are some.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<SkippedLine>,
    },
    SpecFinished(Box<SpecLine<'a>>),
    RunFinished {
        passed: usize,
        mismatched: usize,
        errored: usize,
        spec_errors: usize,
        skipped: usize,
        expected_failures: usize,
        stale: usize,
        failed: usize,
        total: usize,
        duration_ms: f64,
        exit_code: i32,
    },
}

#[derive(Serialize)]
struct SkippedLine {
    path: String,
    reason: String,
}

#[derive(Serialize)]
struct SpecLine<'a> {
    path: &'a str,
    name: Option<&'a str>,
    contract: Option<&'a str>,
    rules: &'a [String],
    /// What the spec is worth when grading (its `points`, default 1).
    points: f64,
    outcome: OutcomeKind,
    duration_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    mismatch: Option<MismatchFields<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    spec_error: Option<SpecErrorFields<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    impl_error: Option<ImplErrorFields<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skip_reason: Option<&'a str>,
    /// The plain-text explanation a person reads, for every outcome but `passed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<String>,
    /// A failure's cause in one line, as the human report's "failures by cause" groups it:
    /// `grade` counts the class's failures by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<String>,
    /// What the implementation printed and raised while the spec ran, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a Captured>,
}

#[derive(Serialize)]
struct MismatchFields<'a> {
    step: &'a str,
    line: usize,
    column: usize,
    expected: &'a str,
    actual: &'a str,
    note: Option<&'a str>,
    diff: String,
}

#[derive(Serialize)]
struct SpecErrorFields<'a> {
    kind: SpecErrorKind,
    path: &'a str,
    line: usize,
    column: usize,
    message: &'a str,
    source_line: Option<&'a str>,
    /// The file's other errors, in source order, each with these fields: only when it has more.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    more: Vec<SpecErrorFields<'a>>,
    /// Why errors after these may be untold: only when some may be.
    #[serde(skip_serializing_if = "Option::is_none")]
    untold: Option<&'a str>,
}

impl<'a> SpecErrorFields<'a> {
    fn of(e: &'a SpecError) -> Self {
        SpecErrorFields {
            kind: e.kind,
            path: &e.path,
            line: e.position.line,
            column: e.position.column,
            message: &e.message,
            source_line: e.source_line.as_ref().map(|l| l.text.as_str()),
            more: e.more.iter().map(SpecErrorFields::of).collect(),
            untold: e.untold.map(Untold::says),
        }
    }
}

#[derive(Serialize)]
struct ImplErrorFields<'a> {
    kind: crate::model::implementation::ImplErrorKind,
    message: &'a str,
}

/// Milliseconds with microsecond resolution.
fn millis(duration: Duration) -> f64 {
    duration.as_micros() as f64 / 1000.0
}

fn spec_line(report: &SpecReport) -> SpecLine<'_> {
    let outcome = &report.outcome;
    let plain = super::Palette::plain();
    SpecLine {
        path: &report.path,
        name: report.name.as_deref(),
        contract: report.contract,
        rules: &report.rules,
        points: report.grading.points,
        outcome: outcome.kind(),
        duration_ms: millis(report.duration),
        mismatch: match outcome {
            Outcome::Mismatch(m) => Some(MismatchFields {
                step: &m.step,
                line: m.position.line,
                column: m.position.column,
                expected: &m.expected,
                actual: &m.actual,
                note: m.note.as_deref(),
                diff: render::diff(&m.expected, &m.actual, &plain),
            }),
            _ => None,
        },
        spec_error: match outcome {
            Outcome::SpecError(e) => Some(SpecErrorFields::of(e)),
            _ => None,
        },
        impl_error: match outcome {
            Outcome::Errored(e) => Some(ImplErrorFields {
                kind: e.kind,
                message: &e.message,
            }),
            _ => None,
        },
        skip_reason: match outcome {
            Outcome::Skipped(reason) => Some(reason),
            _ => None,
        },
        details: match outcome {
            Outcome::Passed => None,
            _ => Some(render::details(&report.path, outcome)),
        },
        cause: super::human::cause(outcome, &report.rules).map(|(_, told, _)| told),
        output: report.output.as_ref(),
    }
}

fn finished_line(summary: &Summary) -> Line<'static> {
    Line::RunFinished {
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
            } => Line::RunStarted {
                format_version: FORMAT_VERSION,
                dlqspec_version: env!("CARGO_PKG_VERSION"),
                implementation,
                total: *total,
                filtered_out: *filtered_out,
                skipped: skipped
                    .iter()
                    .map(|s| SkippedLine {
                        path: crate::text::source::display_path(&s.path),
                        reason: s.reason.clone(),
                    })
                    .collect(),
            },
            Event::Finished(report) => Line::SpecFinished(Box::new(spec_line(report))),
            Event::Done(summary) => finished_line(summary),
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
    use crate::model::implementation::{ImplError, ImplErrorKind};
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
        // Its cause as the human report groups failures: the rule and the shape of the miss.
        assert_eq!(
            got["cause"], "dlq-consumer/poison: a difference at process",
            "{got}"
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
