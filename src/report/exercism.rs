//! The Exercism reporter: a test runner's `results.json`, version 3, one test per spec in the
//! order of the run, written when the run is done (docs/autograders.md).

use std::io::Write;
use std::path::PathBuf;

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::render;
use super::sanitize;
use crate::implementation::{ImplErrorKind, ImplInfo};
use crate::outcome::Outcome;
use crate::runner::{Event, Reporter, SpecReport, Summary};

/// The most characters of a test's `output` Exercism shows.
const MAX_OUTPUT_CHARS: usize = 500;

/// The most characters of the top-level `message`.
const MAX_MESSAGE_CHARS: usize = 65_535;

pub struct ExercismReporter<W: Write> {
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
    pub fn new(out: W) -> Self {
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
        self.solution_dir = solution_dir(&implementation.label);
    }

    /// `message` with the solution's folder left out of paths: `solution.py:5`.
    fn relative(&self, message: &str) -> String {
        match &self.solution_dir {
            Some(dir) => {
                let prefix = format!("{}/", dir.to_string_lossy().trim_end_matches('/'));
                message.replace(&prefix, "")
            }
            None => message.to_owned(),
        }
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
            Outcome::Passed => "pass",
            Outcome::Errored(_) | Outcome::SpecError(_) => "error",
            _ => "fail",
        };
        let shown = report.grading.visibility.shows_details();
        let base = self.solution_dir.clone();
        let message = match (status, shown) {
            ("pass", _) => Value::Null,
            (_, true) => {
                let details = render::details(&report.path, &report.outcome);
                let mut text = self.relative(&details);
                if let Some(captured) = &report.output {
                    text.push_str(&render::tracebacks(
                        captured,
                        base.as_deref(),
                        &super::Palette::plain(),
                    ));
                }
                Value::from(sanitize::text(text.trim_end()).into_owned())
            }
            (_, false) => Value::from("failed"),
        };
        let output = report
            .output
            .as_ref()
            .filter(|_| shown)
            .map(|captured| {
                let mut text = captured.stdout.text.clone();
                text.push_str(&captured.stderr.text);
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
        let name = report.name.as_deref().unwrap_or(&report.path);
        self.tests.push(json!({
            "name": sanitize::line(name),
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
            error_results(&self.relative(&message))
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
pub fn aborted(message: &str, implementation_label: &str) -> String {
    let mut message = message.to_owned();
    if let Some(dir) = solution_dir(implementation_label) {
        let prefix = format!("{}/", dir.to_string_lossy().trim_end_matches('/'));
        message = message.replace(&prefix, "");
    }
    let text = serde_json::to_string(&error_results(&message)).unwrap_or_default();
    format!("{}\n", sanitize::json(&text))
}

/// The absolute folder of a `python:FILE` or `node:FILE` solution.
fn solution_dir(label: &str) -> Option<PathBuf> {
    let (_, file) = label.split_once(':')?;
    if label.starts_with("cmd:") {
        return None;
    }
    let file = std::path::Path::new(file);
    let file = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(file)
    };
    file.parent().map(std::path::Path::to_path_buf)
}

/// Exercism shows at most 500 characters of output: longer output is cut, and says so.
fn cut_output(text: &str) -> String {
    let text = sanitize::text(text);
    if text.chars().count() <= MAX_OUTPUT_CHARS {
        return text.into_owned();
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
        assert_eq!(solution_dir("cmd:./x"), None);
        assert_eq!(
            solution_dir("python:/s/solution.py"),
            Some(PathBuf::from("/s"))
        );
    }
}
