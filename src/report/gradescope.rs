//! The Gradescope reporter: the `results.json` an autograder leaves for Gradescope, one test
//! per spec with its points, written when the run is done (docs/autograders.md).

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::render;
use super::sanitize;
use crate::model::implementation::{ImplErrorKind, ImplInfo};
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport, Summary};

pub(crate) struct GradescopeReporter<W: Write> {
    out: W,
    /// The folder of the solution, for paths said relative to it.
    solution_dir: Option<PathBuf>,
    tests: Vec<Value>,
    score: f64,
    max_score: f64,
    /// What kept the solution from starting, told in full at the top when it kept every spec
    /// from running: one cause, said once, not under each test's name.
    startup: Option<String>,
    /// Whether every spec so far could not start.
    nothing_ran: bool,
}

impl<W: Write> GradescopeReporter<W> {
    pub(crate) fn new(out: W) -> Self {
        GradescopeReporter {
            out,
            solution_dir: None,
            tests: Vec::new(),
            score: 0.0,
            max_score: 0.0,
            startup: None,
            nothing_ran: true,
        }
    }

    fn started(&mut self, implementation: &ImplInfo) {
        self.solution_dir = render::solution_dir(&implementation.label);
    }

    fn finished(&mut self, report: &SpecReport) {
        match &report.outcome {
            Outcome::Errored(error) if error.kind == ImplErrorKind::Startup => {
                if self.startup.is_none() && report.grading.visibility.shows_details() {
                    self.startup = Some(render::feedback(report, self.solution_dir.as_deref()));
                }
            }
            _ => self.nothing_ran = false,
        }
        // A divergence passes on the lesson's world: the broker's, not the student's.
        let passed = matches!(report.outcome, Outcome::Passed | Outcome::Divergence(_));
        let points = report.grading.points;
        let score = if passed { points } else { 0.0 };
        self.score += score;
        self.max_score += points;
        let visibility = report.grading.visibility;
        // A spec the student may not see in full yet says only whether it passed. The
        // feedback is sanitized as it is rendered.
        let output = if visibility.shows_details() {
            render::feedback(report, self.solution_dir.as_deref())
        } else if passed {
            "passed".to_owned()
        } else {
            "failed".to_owned()
        };
        let name = match &report.name {
            Some(name) => name.clone(),
            None => report.path.clone(),
        };
        let mut test = json!({
            "name": sanitize::line(&name),
            "number": (self.tests.len() + 1).to_string(),
            "score": score,
            "max_score": points,
            "status": if passed { "passed" } else { "failed" },
            "output": output.trim_end(),
            "output_format": "text",
            "tags": report.rules,
            "visibility": visibility,
        });
        // Stored for the instructor, never shown: the failure's cause, to group a class by.
        if let Some(cause) = &report.cause {
            test["extra_data"] = json!({
                "cause": {
                    "id": cause.id,
                    "rule": cause.rule,
                    "line": sanitize::line(&render::relative_to(
                        &cause.line,
                        self.solution_dir.as_deref()
                    )),
                }
            });
        }
        self.tests.push(test);
    }

    fn done(&mut self, summary: &Summary) -> std::io::Result<()> {
        let mut output = format!(
            "{} of {} specs passed: {} of {} points",
            summary.passed,
            self.tests.len(),
            render::number(self.score),
            render::number(self.max_score)
        );
        // The solution hung: where and what, once, on top.
        if let Some(hung) = &summary.hung {
            output = format!("{}\n\n{output}", sanitize::line(hung));
        }
        // The solution did not start: the why on top, once; each test says where it is.
        if let Some(why) = self.startup.take().filter(|_| self.nothing_ran) {
            output = format!("{}\n\n{output}", why.trim_end());
            for test in &mut self.tests {
                if test["output"] != "failed" {
                    test["output"] =
                        "not run: the solution could not be loaded (why is at the top)".into();
                }
            }
        }
        let results = json!({
            "score": self.score,
            "execution_time": summary.duration.as_secs_f64().ceil() as u64,
            "output": output,
            "output_format": "text",
            "test_output_format": "text",
            "tests": std::mem::take(&mut self.tests),
        });
        let text = serde_json::to_string(&results).unwrap_or_default();
        writeln!(self.out, "{}", sanitize::json(&text))?;
        self.out.flush()
    }
}

/// Results for a run that could not run any spec (a solution that provides no contract),
/// paths under the solution's folder said relative to it.
pub(crate) fn aborted(message: &str, implementation_label: &str) -> String {
    let message = render::relative_to(
        message,
        render::solution_dir(implementation_label).as_deref(),
    );
    let results = json!({
        "score": 0.0,
        "output": sanitize::text(&message),
        "output_format": "text",
        "tests": [],
    });
    let text = serde_json::to_string(&results).unwrap_or_default();
    format!("{}\n", sanitize::json(&text))
}

impl<W: Write> Reporter for GradescopeReporter<W> {
    fn event(&mut self, event: &Event) {
        match event {
            Event::Started { implementation, .. } => self.started(implementation),
            Event::Finished(report) => self.finished(report),
            // A closed stdout must not turn into a panic.
            Event::Done(summary) => {
                let _ = self.done(summary);
            }
        }
    }
}
