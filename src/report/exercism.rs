//! The Exercism reporter: a test runner's `results.json`, version 3, one test per spec in the
//! order of the run, written when the run is done (docs/autograders.md).

use std::io::Write;
use std::path::PathBuf;

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::render;
use super::sanitize;
use crate::model::implementation::{ImplErrorKind, ImplInfo};
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport, Summary};

/// The most characters of a test's `output` Exercism shows.
const MAX_OUTPUT_CHARS: usize = 500;

/// The most characters of the top-level `message`.
const MAX_MESSAGE_CHARS: usize = 65_535;

pub(crate) struct ExercismReporter<W: Write> {
    out: W,
    /// The folder of the solution, for paths said relative to it.
    solution_dir: Option<PathBuf>,
    tests: Vec<Value>,
    /// A task per contract, numbered from 1 in the order the run meets them.
    tasks: IndexMap<String, usize>,
    /// Whether every spec so far could not run at all (the solution does not load).
    nothing_ran: bool,
    /// What kept the first spec from running.
    first_error: Option<String>,
}

impl<W: Write> ExercismReporter<W> {
    pub(crate) fn new(out: W) -> Self {
        ExercismReporter {
            out,
            solution_dir: None,
            tests: Vec::new(),
            tasks: IndexMap::new(),
            nothing_ran: true,
            first_error: None,
        }
    }

    fn started(&mut self, implementation: &ImplInfo) {
        self.solution_dir = render::solution_dir(&implementation.label);
    }

    fn finished(&mut self, report: &SpecReport) {
        match &report.outcome {
            Outcome::Errored(error) if error.kind == ImplErrorKind::Startup => {
                if self.first_error.is_none() {
                    self.first_error = Some(error.message.clone());
                }
            }
            _ => self.nothing_ran = false,
        }
        let status = match &report.outcome {
            // A divergence passes on the lesson's world: the broker's, not the student's.
            Outcome::Passed | Outcome::Divergence(_) => "pass",
            Outcome::Errored(_) | Outcome::SpecError(_) => "error",
            _ => "fail",
        };
        let shown = report.grading.visibility.shows_details();
        // Rendered (and so sanitized) once, by `render`.
        let message = match (status, shown) {
            ("pass", _) => Value::Null,
            (_, true) => {
                let base = self.solution_dir.as_deref();
                let mut text = render::relative_to(&render::explained(report), base);
                if let Some(captured) = &report.output {
                    text.push_str(&render::tracebacks(
                        captured,
                        base,
                        &super::Palette::plain(),
                    ));
                }
                Value::from(text.trim_end())
            }
            (_, false) => Value::from("failed"),
        };
        // Each stream under its own heading, with how much was cut, as the human report shows.
        let output = report
            .output
            .as_ref()
            .filter(|_| shown)
            .map(|captured| {
                let plain = super::Palette::plain();
                let mut text = render::stream("stdout", &captured.stdout, &plain);
                text.push_str(&render::stream("stderr", &captured.stderr, &plain));
                text
            })
            .filter(|text| !text.is_empty())
            .map_or(Value::Null, |text| Value::from(cut_output(&text)));
        let test_code = match (&report.source, shown) {
            (Some(source), true) => source.to_string(),
            (_, false) => "(hidden)".to_owned(),
            (None, true) => report.path.clone(),
        };
        let task = report.contract.map_or_else(|| "".to_owned(), str::to_owned);
        let next = self.tasks.len() + 1;
        let task_id = *self.tasks.entry(task).or_insert(next);
        // Exercism shows every test: a hidden spec's name is its text too, so it is not told.
        let name = match (shown, report.name.as_deref()) {
            (false, _) => format!("hidden spec {}", self.tests.len() + 1),
            (true, Some(name)) => name.to_owned(),
            (true, None) => report.path.clone(),
        };
        self.tests.push(json!({
            "name": sanitize::line(&name),
            "status": status,
            "message": message,
            "output": output,
            "test_code": sanitize::text(&test_code),
            "task_id": task_id,
        }));
    }

    fn done(&mut self, summary: &Summary) -> std::io::Result<()> {
        let results = if self.nothing_ran && !self.tests.is_empty() {
            let message = self.first_error.clone().unwrap_or_default();
            error_results(&render::relative_to(&message, self.solution_dir.as_deref()))
        } else {
            let status = if summary.passed == self.tests.len() {
                "pass"
            } else {
                "fail"
            };
            json!({
                "version": 3,
                "status": status,
                "message": Value::Null,
                "tests": std::mem::take(&mut self.tests),
            })
        };
        let text = serde_json::to_string(&results).unwrap_or_default();
        writeln!(self.out, "{}", sanitize::json(&text))?;
        self.out.flush()
    }
}

fn error_results(message: &str) -> Value {
    let message: String = sanitize::text(message.trim_end())
        .chars()
        .take(MAX_MESSAGE_CHARS)
        .collect();
    json!({"version": 3, "status": "error", "message": message})
}

/// Results for a run that could not run any spec (a solution that provides no contract).
pub(crate) fn aborted(message: &str, implementation_label: &str) -> String {
    let message = render::relative_to(
        message,
        render::solution_dir(implementation_label).as_deref(),
    );
    let text = serde_json::to_string(&error_results(&message)).unwrap_or_default();
    format!("{}\n", sanitize::json(&text))
}

/// Exercism shows at most 500 characters of output: longer output is cut, and says so.
/// `text` is rendered already (sanitized); this only cuts.
fn cut_output(text: &str) -> String {
    if text.chars().count() <= MAX_OUTPUT_CHARS {
        return text.to_owned();
    }
    let note = "\n[output cut: Exercism shows 500 characters]";
    let keep = MAX_OUTPUT_CHARS - note.chars().count();
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(note);
    out
}

impl<W: Write> Reporter for ExercismReporter<W> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_is_cut_to_what_exercism_shows() {
        assert_eq!(cut_output("short"), "short");
        let cut = cut_output(&"x".repeat(2000));
        assert_eq!(cut.chars().count(), MAX_OUTPUT_CHARS);
        assert!(cut.ends_with("Exercism shows 500 characters]"));
    }

    #[test]
    fn the_solution_folder_comes_from_the_label() {
        assert_eq!(render::solution_dir("cmd:./x"), None);
        assert_eq!(
            render::solution_dir("python:/s/solution.py"),
            Some(PathBuf::from("/s"))
        );
        assert_eq!(
            render::relative_to(
                "--> /s/solution.py:5 and /s/lib/x.py:2, not /st/y.py",
                Some(std::path::Path::new("/s/"))
            ),
            "--> solution.py:5 and lib/x.py:2, not /st/y.py"
        );
    }
}
