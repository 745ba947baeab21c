//! Grading a class: finding each submission's entry file, naming its reports, and reading a
//! submission's JSON-lines report back into a row of the summary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// The entry files a submission folder is searched for, in this order.
pub const ENTRY_FILES: [&str; 5] = [
    "solution.py",
    "solution.ts",
    "solution.mjs",
    "solution.js",
    "solution.cjs",
];

/// The extensions of solution files.
const EXTENSIONS: [&str; 5] = ["py", "ts", "mjs", "js", "cjs"];

/// How a submission's grading ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every spec passed.
    Pass,
    /// It ran, and some spec did not pass.
    Fail,
    /// No spec could run: it does not load, has no entry file or none of the classes.
    Broken,
    /// Its run went past `--budget` and was stopped.
    Timeout,
    /// Its run ended in a way dlqspec never ends (a signal, an unknown exit code).
    Crashed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Broken => "broken",
            Status::Timeout => "timeout",
            Status::Crashed => "crashed",
        }
    }
}

/// A rule's verdict for one submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleVerdict {
    /// Every spec covering it passed.
    Pass,
    /// Some spec covering it did not.
    Fail,
}

/// One row of the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Graded {
    /// The submission as given on the command line.
    pub submission: String,
    /// The file name its reports share in the output folder, without extension.
    pub name: String,
    pub status: Status,
    pub score: f64,
    pub max_score: f64,
    pub passed: usize,
    pub failed: usize,
    pub rules: BTreeMap<String, RuleVerdict>,
    pub took: Duration,
    /// A sentence for statuses a count does not explain (why it is broken, the budget).
    pub note: String,
}

/// The file a submission's grading runs: the file itself, or the entry file of a folder.
pub fn entry_file(submission: &Path) -> Result<PathBuf, String> {
    if submission.is_file() {
        return match extension(submission) {
            Some(_) => Ok(submission.to_path_buf()),
            None => Err(format!(
                "{} is not a solution file (.py, .ts, .mjs, .js or .cjs)",
                submission.display()
            )),
        };
    }
    if !submission.is_dir() {
        return Err(format!("{} does not exist", submission.display()));
    }
    for name in ENTRY_FILES {
        let candidate = submission.join(name);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(submission)
        .map_err(|e| format!("cannot read {}: {e}", submission.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && extension(path).is_some())
        .filter(|path| !path.to_string_lossy().ends_with(".d.ts"))
        .collect();
    found.sort();
    match found.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(format!(
            "{} holds no solution file (.py, .ts, .mjs, .js or .cjs)",
            submission.display()
        )),
        _ => Err(format!(
            "{} holds {} solution files and none is named solution.*: which one is the entry is unclear",
            submission.display(),
            found.len()
        )),
    }
}

fn extension(path: &Path) -> Option<&str> {
    let ext = path.extension()?.to_str()?;
    EXTENSIONS.contains(&ext).then_some(ext)
}

/// The `--impl` value that runs an entry file.
pub fn implementation(entry: &Path) -> String {
    let kind = if extension(entry) == Some("py") {
        "python"
    } else {
        "node"
    };
    format!("{kind}:{}", entry.display())
}

/// File names for the submissions' reports: their own names, made safe and unique.
pub fn report_names(submissions: &[PathBuf]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    submissions
        .iter()
        .map(|submission| {
            let stem = submission
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "submission".to_owned());
            let safe: String = stem
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let safe = safe.trim_start_matches('.').to_owned();
            let safe = if safe.is_empty() {
                "submission".to_owned()
            } else {
                safe
            };
            let mut name = safe.clone();
            let mut n = 2;
            while !seen.insert(name.clone()) {
                name = format!("{safe}-{n}");
                n += 1;
            }
            name
        })
        .collect()
}

/// What a submission's JSON-lines report says: the counts, the score and each rule's verdict.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportTally {
    pub score: f64,
    pub max_score: f64,
    pub passed: usize,
    pub failed: usize,
    pub rules: BTreeMap<String, RuleVerdict>,
    /// Whether the run finished (its `run_finished` line is there).
    pub finished: bool,
    /// Whether no spec could run at all: every spec errored while the solution was starting.
    pub nothing_ran: bool,
    /// The first implementation error, for a broken submission's note.
    pub first_error: Option<String>,
}

/// Reads a submission's JSON-lines report (docs/reports.md).
pub fn tally(json_lines: &str) -> ReportTally {
    let mut tally = ReportTally {
        nothing_ran: true,
        ..ReportTally::default()
    };
    let mut specs = 0;
    for line in json_lines.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match event["event"].as_str() {
            Some("spec_finished") => {
                let outcome = event["outcome"].as_str().unwrap_or_default();
                // A skipped spec (a contract the submission does not implement) judged
                // nothing: no points either way, no rule verdict, as the run's exit code says.
                if outcome == "skipped" {
                    continue;
                }
                specs += 1;
                let points = event["points"].as_f64().unwrap_or(1.0);
                let passed = outcome == "passed";
                // A listed known failure earns nothing but does not fail the submission.
                let failed = !passed && outcome != "expected_failure";
                tally.max_score += points;
                if passed {
                    tally.score += points;
                    tally.passed += 1;
                } else if failed {
                    tally.failed += 1;
                }
                let startup = outcome == "errored" && event["impl_error"]["kind"] == "startup";
                if startup && tally.first_error.is_none() {
                    tally.first_error = event["impl_error"]["message"]
                        .as_str()
                        .map(|m| m.lines().next().unwrap_or_default().to_owned());
                }
                tally.nothing_ran &= startup;
                for rule in event["rules"].as_array().into_iter().flatten() {
                    if let Some(rule) = rule.as_str() {
                        let verdict = tally
                            .rules
                            .entry(rule.to_owned())
                            .or_insert(RuleVerdict::Pass);
                        if failed {
                            *verdict = RuleVerdict::Fail;
                        }
                    }
                }
            }
            Some("run_finished") => tally.finished = true,
            _ => {}
        }
    }
    tally.nothing_ran &= specs > 0;
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_names_its_entry_file_by_the_documented_rule() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(
            entry_file(&empty)
                .unwrap_err()
                .contains("holds no solution file")
        );
        let one = dir.path().join("one");
        std::fs::create_dir(&one).unwrap();
        std::fs::write(one.join("given.d.ts"), "").unwrap();
        std::fs::write(one.join("consumer.ts"), "").unwrap();
        assert_eq!(entry_file(&one).unwrap(), one.join("consumer.ts"));
        std::fs::write(one.join("helper.py"), "").unwrap();
        assert!(entry_file(&one).unwrap_err().contains("2 solution files"));
        std::fs::write(one.join("solution.js"), "").unwrap();
        std::fs::write(one.join("solution.py"), "").unwrap();
        assert_eq!(entry_file(&one).unwrap(), one.join("solution.py"));
        assert_eq!(
            implementation(&one.join("solution.py")).split(':').next(),
            Some("python")
        );
        assert_eq!(
            implementation(&one.join("x.ts")).split(':').next(),
            Some("node")
        );
        assert!(entry_file(&one.join("README.md")).is_err());
    }

    #[test]
    fn report_names_are_safe_and_unique() {
        let names = report_names(&[
            PathBuf::from("a/alice.py"),
            PathBuf::from("b/alice.py"),
            PathBuf::from("x/..hidden \u{1b}name"),
        ]);
        assert_eq!(names, ["alice.py", "alice.py-2", "hidden__name"]);
    }

    #[test]
    fn a_report_tallies_points_and_rules() {
        let lines = [
            r#"{"event":"run_started"}"#,
            r#"{"event":"spec_finished","rules":["r/a","r/b"],"points":2,"outcome":"passed"}"#,
            r#"{"event":"spec_finished","rules":["r/b"],"points":1,"outcome":"mismatch"}"#,
            r#"{"event":"run_finished"}"#,
        ]
        .join("\n");
        let tally = tally(&lines);
        assert_eq!((tally.score, tally.max_score), (2.0, 3.0));
        assert_eq!((tally.passed, tally.failed), (1, 1));
        assert_eq!(tally.rules["r/a"], RuleVerdict::Pass);
        assert_eq!(tally.rules["r/b"], RuleVerdict::Fail);
        assert!(tally.finished && !tally.nothing_ran);
        // What did not judge the submission does not count against it.
        let others = [
            r#"{"event":"spec_finished","rules":["r/c"],"points":1,"outcome":"passed"}"#,
            r#"{"event":"spec_finished","rules":["r/d"],"points":5,"outcome":"skipped"}"#,
            r#"{"event":"spec_finished","rules":["r/c"],"points":1,"outcome":"expected_failure"}"#,
        ]
        .join("\n");
        let tally = super::tally(&others);
        assert_eq!((tally.score, tally.max_score), (1.0, 2.0));
        assert_eq!((tally.passed, tally.failed), (1, 0));
        assert_eq!(tally.rules["r/c"], RuleVerdict::Pass);
        assert!(!tally.rules.contains_key("r/d"));
        let broken = r#"{"event":"spec_finished","rules":[],"outcome":"errored","impl_error":{"kind":"startup","message":"could not be loaded\nmore"}}"#;
        let tally = super::tally(broken);
        assert!(tally.nothing_ran && !tally.finished);
        assert_eq!(tally.first_error.as_deref(), Some("could not be loaded"));
    }
}
