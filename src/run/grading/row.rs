//! A submission's row of the summary: how its grading ended, its score, each rule's and each
//! spec's verdict, which of its reports were written; and what a class's rows make the exit
//! code.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::formats::grade::SpecOutcome;
use crate::run::grading::pictures::picture_file;

/// How a submission's grading ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
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
    /// Not run: the grading machine cannot run its language (no Node.js, one too old). The
    /// grader's to fix, never the student's score.
    Ungraded,
}

impl Status {
    /// Every status, each once, in the order a class's counts tell them: `as_str`'s names are
    /// read back through this list.
    pub(crate) const ALL: [Status; 6] = [
        Status::Pass,
        Status::Fail,
        Status::Broken,
        Status::Timeout,
        Status::Crashed,
        Status::Ungraded,
    ];

    /// The status named `name` as `as_str` writes it, if any.
    pub(crate) fn from_name(name: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == name)
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Broken => "broken",
            Status::Timeout => "timeout",
            Status::Crashed => "crashed",
            Status::Ungraded => "ungraded",
        }
    }
}

/// A rule's verdict for one submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleVerdict {
    /// Every spec covering it passed.
    Pass,
    /// Some spec covering it failed.
    Fail,
    /// No spec covering it failed, and some never ran (the submission hung in an earlier
    /// spec, or its budget ran out): nothing says whether it holds.
    NotRun,
    /// The submission has no class of its contract: not attempted, which is not failed.
    NotAttempted,
}

impl RuleVerdict {
    /// Every verdict, each once: `as_str`'s names are read back through this list.
    pub(crate) const ALL: [RuleVerdict; 4] = [
        RuleVerdict::Pass,
        RuleVerdict::Fail,
        RuleVerdict::NotRun,
        RuleVerdict::NotAttempted,
    ];

    /// Its name in `summary.json` and the CSV: `pass`, `fail`, `not_run`, `not_attempted`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RuleVerdict::Pass => "pass",
            RuleVerdict::Fail => "fail",
            RuleVerdict::NotRun => "not_run",
            RuleVerdict::NotAttempted => "not_attempted",
        }
    }

    /// The verdict named `name` as `as_str` writes it, if any.
    pub(crate) fn from_name(name: &str) -> Option<RuleVerdict> {
        RuleVerdict::ALL.into_iter().find(|v| v.as_str() == name)
    }
}

/// What became of one spec of the suite for one submission.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SpecVerdict {
    /// The outcome its run reported (`passed`, `mismatch`, `errored`, ...), or not run.
    pub(crate) outcome: SpecOutcome,
    /// Why it failed, in one line (the run's `cause`), when it failed.
    pub(crate) cause: Option<String>,
    /// The key of that cause (the run's `cause_id`): failures with one key, in one
    /// submission or across the class, share one cause.
    pub(crate) cause_id: Option<String>,
    /// The rule that cause breaks (the run's `cause_rule`), when it is a rule of the suite.
    pub(crate) cause_rule: Option<String>,
}

/// The most of a cause's text kept: one line, whatever the message it came from.
pub(crate) const MAX_CAUSE_BYTES: usize = 300;

/// `text`'s first line, at most [`MAX_CAUSE_BYTES`] of it, `…` where it was cut.
pub(crate) fn cause_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.len() <= MAX_CAUSE_BYTES {
        return line.to_owned();
    }
    let mut end = MAX_CAUSE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

/// What a submission earned against the suite: its score out of the suite's points, how many
/// specs passed and failed, and each rule's and spec's verdict. Read from its report (`tally`)
/// and kept in its row.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Marks {
    pub(crate) score: f64,
    pub(crate) max_score: f64,
    pub(crate) passed: usize,
    /// Specs that failed: neither passed, nor not attempted, nor not run.
    pub(crate) failed: usize,
    /// Specs of a contract the submission has no class of: they earn nothing (the course
    /// asked for the class), and are no failure of what was written.
    pub(crate) not_attempted: usize,
    /// Specs that never ran (it hung in an earlier one, its budget ran out): they earn
    /// nothing, and say nothing of the rules they cover.
    pub(crate) not_run: usize,
    pub(crate) rules: BTreeMap<String, RuleVerdict>,
    /// Each spec of the suite's verdict, by path: what a regrade (`--against`) compares and
    /// the class's causes are counted from.
    pub(crate) specs: BTreeMap<String, SpecVerdict>,
}

/// One row of the summary.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Graded {
    /// The submission as given on the command line.
    pub(crate) submission: String,
    /// The file name its reports share in the output folder, without extension.
    pub(crate) name: String,
    pub(crate) status: Status,
    /// What its report earned; a submission no report came from has none of the points.
    pub(crate) marks: Marks,
    pub(crate) took: Duration,
    /// A sentence for statuses a count does not explain (why it is broken, the budget).
    pub(crate) note: String,
    /// Which of its reports are in the output folder: the summaries link only to those.
    pub(crate) reports: WrittenReports,
}

#[cfg(test)]
impl Graded {
    /// A row for tests: no score, no rules or specs, no reports; a test sets what it checks.
    pub(crate) fn for_test(submission: &str, name: &str, status: Status) -> Graded {
        Graded {
            submission: submission.into(),
            name: name.into(),
            status,
            marks: Marks {
                max_score: 1.0,
                ..Marks::default()
            },
            took: Duration::ZERO,
            note: String::new(),
            reports: WrittenReports::default(),
        }
    }
}

/// Which of a submission's reports were written: `NAME.txt` (its human report), `NAME.jsonl`
/// (its JSON-lines report), and the pictures of the specs it failed
/// (`NAME/explain/SPEC.html`, see [`picture_file`]). A submission with no entry file has
/// none; a run that sent nothing through its pipe has no `NAME.jsonl`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WrittenReports {
    pub(crate) text: bool,
    pub(crate) json_lines: bool,
    /// The paths of the specs whose picture was written, as the run reports them.
    pub(crate) pictures: Vec<String>,
}

impl WrittenReports {
    /// The file names of the reports written, with `kind` for each (`txt`, `jsonl`, `html`
    /// for a picture), relative to the output folder.
    pub(crate) fn files(&self, name: &str) -> Vec<(&'static str, String)> {
        let mut files: Vec<(&'static str, String)> =
            [("txt", self.text), ("jsonl", self.json_lines)]
                .into_iter()
                .filter(|(_, written)| *written)
                .map(|(ext, _)| (ext, format!("{name}.{ext}")))
                .collect();
        files.extend(
            self.pictures
                .iter()
                .map(|spec| ("html", picture_file(name, spec))),
        );
        files
    }
}

/// The exit code of a class's grading: 0 when every submission passed, 1 otherwise; 2 when the
/// machine left some ungraded (the grader's to fix, whatever the others did).
pub(crate) fn exit_code(rows: &[Graded]) -> i32 {
    if rows.iter().any(|row| row.status == Status::Ungraded) {
        crate::run::exit::SPEC_OR_USAGE_ERROR
    } else if rows.iter().all(|row| row.status == Status::Pass) {
        crate::run::exit::PASSED
    } else {
        crate::run::exit::FAILED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_reads_back_from_its_name_and_no_other() {
        for status in Status::ALL {
            assert_eq!(Status::from_name(status.as_str()), Some(status));
        }
        let names: std::collections::BTreeSet<&str> =
            Status::ALL.iter().map(|status| status.as_str()).collect();
        assert_eq!(names.len(), Status::ALL.len());
        assert_eq!(Status::from_name("Pass"), None);
        assert_eq!(Status::from_name(""), None);
    }

    fn row(status: Status) -> Graded {
        Graded::for_test("class/a", "a", status)
    }

    #[test]
    fn a_class_passes_only_when_everyone_does_and_a_row_the_machine_left_is_the_graders() {
        use crate::run::exit;
        let class = |statuses: &[Status]| -> Vec<Graded> {
            statuses.iter().map(|status| row(*status)).collect()
        };
        assert_eq!(
            exit_code(&class(&[Status::Pass, Status::Pass])),
            exit::PASSED
        );
        assert_eq!(exit_code(&class(&[])), exit::PASSED);
        for failing in [
            Status::Fail,
            Status::Broken,
            Status::Timeout,
            Status::Crashed,
        ] {
            assert_eq!(
                exit_code(&class(&[Status::Pass, failing])),
                exit::FAILED,
                "{failing:?}"
            );
        }
        assert_eq!(
            exit_code(&class(&[Status::Fail, Status::Ungraded, Status::Pass])),
            exit::SPEC_OR_USAGE_ERROR
        );
    }

    #[test]
    fn the_files_of_a_row_are_the_reports_written_and_its_pictures() {
        let written = WrittenReports {
            text: true,
            json_lines: false,
            pictures: vec!["specs/a.yaml".into()],
        };
        assert_eq!(
            written.files("alice"),
            [
                ("txt", "alice.txt".to_owned()),
                ("html", "alice/explain/specs.a.html".to_owned())
            ]
        );
        assert!(WrittenReports::default().files("alice").is_empty());
    }
}
