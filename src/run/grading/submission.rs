//! One submission graded: a `dlqspec run` of its own on its entry file, boxed and within its
//! budget (past it, stopped with all it started), its report read back into its row and its
//! status judged from how the run ended; the pictures of its first mismatched specs, each by a
//! `dlqspec explain` of its own; and what it sent back held, unnamed, until grade writes it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::external::supervisor::{self, ChildReport, Exit, Stderr};
use crate::external::zygote::Socket;
use crate::model::language::Language;
use crate::model::world::WORLD_VARIABLE;
use crate::run::grading::pictures::MAX_PICTURES;
use crate::run::grading::row::{Graded, Marks, Status, WrittenReports};
use crate::run::grading::suite::SuiteSpec;
use crate::run::grading::tally::{ReportTally, mismatched, tally};
use crate::run::grading::{MAX_REPORT_BYTES, MAX_TEXT_REPORT_BYTES, read_held};

/// What every submission's run (and each of its pictures) is given: grade's side of them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Grader {
    /// dlqspec itself, which each child is.
    pub(crate) program: PathBuf,
    /// The suite's spec files or folders, as `--specs` gave them.
    pub(crate) specs: Vec<PathBuf>,
    /// The wall-clock time each submission may take (`--budget`), and its pictures as much.
    pub(crate) budget: Duration,
    /// The options each child hands on to its implementation's box (`--timeout`, `--memory`,
    /// ..., `--sandbox`), as the command line reads them.
    pub(crate) limits: Vec<String>,
    /// The Python interpreter every run is given (`DLQSPEC_PYTHON`), when one was found.
    pub(crate) python: Option<PathBuf>,
    /// The folder every run's boxes are made in, given to each as `TMPDIR`.
    pub(crate) boxes: Option<PathBuf>,
    /// The world every run's dlq-consumer specs act on (`--world`), as written.
    pub(crate) world: Option<String>,
    /// How many of a failing submission's first mismatched specs are drawn (at most
    /// [`MAX_PICTURES`]).
    pub(crate) pictures: usize,
    /// Why this machine cannot run JavaScript or TypeScript (no Node.js, one too old), when it
    /// cannot: such a submission is `ungraded`, never a 0.
    pub(crate) node_problem: Option<String>,
}

/// What one run sent back, held in unnamed files (no name to find, no memory to fill) until
/// grade writes the class's files.
#[derive(Debug)]
pub(crate) struct Reports {
    /// Its human report: its stdout and stderr.
    pub(crate) human: File,
    /// Its JSON-lines report, as it came through its pipe; `None` when it sent none.
    pub(crate) json_lines: Option<File>,
    /// The pictures of the specs it failed: each spec's path and its page, as a
    /// `dlqspec explain` of its own made it.
    pub(crate) pictures: Vec<(String, File)>,
}

/// The language of a submission's entry file, when it has one.
pub(crate) fn submission_language(submission: &Path) -> Option<Language> {
    crate::external::entry::entry_file(submission)
        .ok()
        .and_then(|entry| crate::external::entry::language(&entry))
}

impl Grader {
    /// Grades one submission, the `index`-th of the class, named `name`; whatever happens to
    /// it becomes its row, scored against the whole `suite`; and what its run sent back, for
    /// grade to write (`None`: it did not run). A Python one starts warm from `zygote`.
    pub(crate) fn grade(
        &self,
        submission: &Path,
        name: &str,
        suite: &[SuiteSpec],
        index: usize,
        zygote: Option<&Socket>,
    ) -> (Graded, Option<Reports>) {
        if self.node_problem.is_some()
            && submission_language(submission) == Some(Language::JavaScript)
        {
            return (ungraded(submission, name, suite), None);
        }
        let started = Instant::now();
        let mut row = not_run_row(submission, name, suite);
        let entry = match crate::external::entry::find_entry(submission) {
            Ok(entry) => entry,
            Err(no) => {
                // The row names the submission already.
                row.note = no.reason();
                return (row, None);
            }
        };
        let ran = match self.run_within_budget(&entry, submission, index, zygote) {
            Ok(ran) => ran,
            Err(why) => {
                row.status = Status::Crashed;
                row.note = why;
                return (row, None);
            }
        };
        row.took = started.elapsed();
        let (json_lines, report_problem) = match ran.report {
            ChildReport::Sent(file) => (Some(file), None),
            ChildReport::Nothing => (None, None),
            ChildReport::Unusable(why) => (None, Some(why)),
        };
        let human = ran
            .output
            .try_clone()
            .and_then(|file| read_held(file, MAX_TEXT_REPORT_BYTES))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        // Only a run that ended as dlqspec ends has a verdict: one killed early (by its budget,
        // or by the submission it ran) counts for nothing, whatever its pipe carried.
        let trusted = matches!(ran.exit, Exit::Exited(status) if ended_as_dlqspec(status));
        let report = match (&json_lines, trusted) {
            (Some(file), true) => file
                .try_clone()
                .and_then(|file| read_held(file, MAX_REPORT_BYTES))
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default(),
            _ => String::new(),
        };
        let tally = tally(&report, suite);
        (row.status, row.note) = judged(ran.exit, &tally, suite.len(), self.budget, || {
            last_error_line(&human).or_else(|| report_problem.clone())
        });
        row.marks = tally.marks;
        // A failing submission's first failing specs are drawn, each by a run of its own, all
        // within one more budget: the report carries a spec's first difference, not the whole
        // timeline a picture draws.
        let pictures = if row.status == Status::Fail && self.pictures > 0 {
            let deadline = Instant::now() + self.budget;
            mismatched(&report, suite)
                .into_iter()
                .take(self.pictures.min(MAX_PICTURES))
                .filter_map(|spec| {
                    self.draw_within(&entry, submission, index, &spec, deadline)
                        .map(|page| (spec, page))
                })
                .collect()
        } else {
            Vec::new()
        };
        let reports = Reports {
            human: ran.output,
            // The report of a run that did not end as dlqspec ends is no verdict: not scored,
            // and not published beside the scores either.
            json_lines: json_lines.filter(|_| trusted),
            pictures,
        };
        (row, Some(reports))
    }

    /// Runs `dlqspec run` on one entry file, within the budget (past it the run is stopped,
    /// and whatever it started with it). Its human report goes to an unnamed file, its
    /// JSON-lines report through a pipe: nothing of it is at a path a submission could write.
    fn run_within_budget(
        &self,
        entry: &Path,
        submission: &Path,
        index: usize,
        zygote: Option<&Socket>,
    ) -> Result<supervisor::Ended, String> {
        let mut run: Vec<OsString> = vec!["run".into()];
        run.extend(self.specs.iter().map(|spec| spec.into()));
        run.extend(
            [
                "--impl",
                &crate::external::entry::implementation(entry),
                "--format",
                "json",
                "--output",
                &supervisor::report_path(),
                // Its human report is the submission's NAME.txt, which its student may read.
                "--conceal-hidden",
                "--budget",
                &supervisor::child_budget(self.budget)
                    .as_secs_f64()
                    .to_string(),
            ]
            .map(OsString::from),
        );
        supervisor::run(supervisor::ChildRequest {
            program: &self.program,
            args: self.boxed(run),
            environment: self.child_environment(submission, index),
            deadline: Instant::now() + self.budget,
            stderr: Stderr::WithStdout,
            report: Some(MAX_REPORT_BYTES),
            zygote,
        })
    }

    /// What a `dlqspec` child for the `index`-th submission is told in its environment
    /// besides grade's own: its box's uid, its interpreter, the folder of the boxes, the
    /// world, its submission; no CI context.
    fn child_environment(
        &self,
        submission: &Path,
        index: usize,
    ) -> Vec<(OsString, Option<OsString>)> {
        let mut environment: Vec<(OsString, Option<OsString>)> = Vec::new();
        if let Some(python) = &self.python {
            environment.push(("DLQSPEC_PYTHON".into(), Some(python.into())));
        }
        if let Some(boxes) = &self.boxes {
            environment.push(("TMPDIR".into(), Some(boxes.into())));
        }
        // In the environment, not the command line, which any user of the machine can read:
        // the address may hold a password. The implementation's box never inherits it.
        environment.push((
            WORLD_VARIABLE.into(),
            self.world.as_ref().map(OsString::from),
        ));
        // As root, each submission's box runs it as a uid of its own: one submission cannot
        // touch another's processes or files even through what the box lets both reach.
        environment.push((
            crate::external::sandbox::UID_VARIABLE.into(),
            Some(
                (crate::external::sandbox::GRADE_FIRST_UID as usize
                    + index % crate::external::sandbox::GRADE_UIDS as usize)
                    .to_string()
                    .into(),
            ),
        ));
        environment.push(("GITHUB_ACTIONS".into(), None));
        // Its box shows the submission alone: a lone file of a class folder without the files
        // of its classmates beside it.
        if let Ok(submission) = std::path::absolute(submission) {
            environment.push((
                crate::external::sandbox::SUBMISSION_VARIABLE.into(),
                Some(submission.into()),
            ));
        }
        environment
    }

    /// A child's arguments with the options every child hands on to its implementation's
    /// box: the same limits for the run and for each picture.
    fn boxed(&self, mut child_args: Vec<OsString>) -> Vec<OsString> {
        child_args.extend(["--color", "never"].map(OsString::from));
        child_args.extend(self.limits.iter().map(OsString::from));
        child_args
    }

    /// The picture of `spec` for one submission, by `dlqspec explain --format html` on its
    /// entry file: its implementation started as the run's was (in the box, with the same
    /// limits), the page read from the child's stdout. `None` when the child did not end as
    /// dlqspec ends (killed, stopped at `deadline`) or drew nothing: then nothing is linked.
    fn draw_within(
        &self,
        entry: &Path,
        submission: &Path,
        index: usize,
        spec: &str,
        deadline: Instant,
    ) -> Option<File> {
        if Instant::now() >= deadline {
            return None;
        }
        let explain: Vec<OsString> = [
            "explain",
            spec,
            "--impl",
            &crate::external::entry::implementation(entry),
            "--format",
            "html",
        ]
        .map(OsString::from)
        .into();
        let drawn = supervisor::run(supervisor::ChildRequest {
            program: &self.program,
            args: self.boxed(explain),
            environment: self.child_environment(submission, index),
            deadline,
            stderr: Stderr::Dropped,
            report: None,
            zygote: None,
        })
        .ok()?;
        // 1 is a failing scenario, which is why it is drawn; anything else is no picture (a
        // pass this time would be the picture of another run than the one graded).
        let failed = matches!(drawn.exit, Exit::Exited(status) if status.code() == Some(1));
        let written = drawn.output.metadata().is_ok_and(|meta| meta.len() > 0);
        (failed && written).then_some(drawn.output)
    }
}

/// What a failing row says besides its counts, so a teacher sees it at a glance: where the
/// submission hung and how many specs that kept from running, and each contract it did not
/// attempt with what that cost (docs/autograders.md, Not attempted).
fn fail_note(tally: &ReportTally) -> String {
    let mut parts = Vec::new();
    if let Some(hung) = &tally.hung {
        let after = match tally.not_run_hung {
            0 => String::new(),
            n => format!(
                "; the {} after it not run",
                crate::text::listing::count(n, "spec")
            ),
        };
        parts.push(format!(
            "hung in {hung} (an infinite loop, or a wait on something that never comes){after}"
        ));
    }
    if !tally.not_attempted.is_empty() {
        parts.push(format!(
            "not attempted ({} scoring 0): {}",
            crate::text::listing::count(tally.marks.not_attempted, "spec"),
            tally.not_attempted.join("; ")
        ));
    }
    parts.join(". ")
}

/// Whether a run ended as dlqspec ends (0 passed, 1 failed, 2 a spec or usage error): only
/// such a run has a verdict.
fn ended_as_dlqspec(status: ExitStatus) -> bool {
    matches!(status.code(), Some(0..=2))
}

/// A submission's status, and the note that explains it where a count does not, from how its
/// run ended (`exit`) and what its report says (`tally`, of a suite of `specs`); a broken
/// one's note is its first startup error, else what `otherwise` finds (the last error its run
/// printed, what was wrong with its report).
fn judged(
    exit: Exit,
    tally: &ReportTally,
    specs: usize,
    budget: Duration,
    otherwise: impl FnOnce() -> Option<String>,
) -> (Status, String) {
    match exit {
        Exit::Stopped => (
            Status::Timeout,
            format!(
                "stopped after its budget of {}s (--budget); its run did not stop itself, so nothing of it counts",
                budget.as_secs_f64()
            ),
        ),
        Exit::Exited(status) if ended_as_dlqspec(status) => match status.code() {
            // The run stopped itself at its budget: the specs it finished keep their verdicts.
            _ if tally.finished && tally.not_run_budget > 0 => (
                Status::Timeout,
                format!(
                    "stopped at its budget after {} of {} specs (--budget {}s)",
                    specs - tally.not_run_budget,
                    specs,
                    budget.as_secs_f64()
                ),
            ),
            Some(0)
                if tally.finished
                    && tally.marks.failed == 0
                    && tally.marks.not_attempted == 0
                    && tally.marks.not_run == 0 =>
            {
                (Status::Pass, String::new())
            }
            _ if tally.finished && !tally.nothing_ran => (Status::Fail, fail_note(tally)),
            _ => (
                Status::Broken,
                tally
                    .first_error
                    .clone()
                    .or_else(otherwise)
                    .unwrap_or_else(|| "no spec could run".to_owned()),
            ),
        },
        Exit::Exited(status) => (
            Status::Crashed,
            format!(
                "its run {}",
                crate::external::process::describe_exit(status)
            ),
        ),
    }
}

/// The row of a submission this machine cannot run: not run, no score of the student's.
fn ungraded(submission: &Path, name: &str, suite: &[SuiteSpec]) -> Graded {
    let mut row = not_run_row(submission, name, suite);
    row.status = Status::Ungraded;
    row.note = "not graded: this machine cannot run JavaScript or TypeScript (the error grade gave says why); grade it again once that is fixed".to_owned();
    row
}

/// The row of a submission before its run: broken, nothing passed, no spec run.
fn not_run_row(submission: &Path, name: &str, suite: &[SuiteSpec]) -> Graded {
    Graded {
        submission: submission.display().to_string(),
        name: name.to_owned(),
        status: Status::Broken,
        // What an empty report earns (nothing passed, every spec failed and not run), but no
        // verdict on any rule: only a run gives one.
        marks: Marks {
            rules: BTreeMap::new(),
            ..tally("", suite).marks
        },
        took: Duration::ZERO,
        note: String::new(),
        reports: WrittenReports::default(),
    }
}

/// The last `error:` line of a run's human report, for a submission no spec ran of.
fn last_error_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "))
        .map(str::to_owned)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::os::unix::process::ExitStatusExt;

    fn exited(code: i32) -> Exit {
        Exit::Exited(ExitStatus::from_raw(code << 8))
    }

    fn finished(failed: usize) -> ReportTally {
        ReportTally {
            finished: true,
            marks: Marks {
                failed,
                ..Marks::default()
            },
            ..ReportTally::default()
        }
    }

    const BUDGET: Duration = Duration::from_secs(3);

    fn judge(exit: Exit, tally: &ReportTally) -> (Status, String) {
        judged(exit, tally, 4, BUDGET, || Some("its last error".to_owned()))
    }

    #[test]
    fn a_run_that_finished_passes_or_fails_by_its_report_whatever_its_exit_code_claims() {
        assert_eq!(
            judge(exited(0), &finished(0)),
            (Status::Pass, String::new())
        );
        assert_eq!(
            judge(exited(1), &finished(2)),
            (Status::Fail, String::new())
        );
        // A 0 with failures in its report, or a 1 or 2 with none: its report decides, never a pass.
        assert_eq!(judge(exited(0), &finished(1)).0, Status::Fail);
        assert_eq!(judge(exited(2), &finished(0)).0, Status::Fail);
    }

    #[test]
    fn a_run_that_hung_or_left_a_contract_unattempted_is_no_pass_and_says_why() {
        let mut partial = finished(0);
        partial.marks.not_attempted = 41;
        partial.not_attempted = vec!["erin.py has no class `Stack`".to_owned()];
        assert_eq!(
            judge(exited(0), &partial),
            (
                Status::Fail,
                "not attempted (41 specs scoring 0): erin.py has no class `Stack`".to_owned()
            )
        );
        let mut hung = finished(1);
        hung.marks.not_run = 2;
        hung.not_run_hung = 2;
        hung.hung = Some("a.yaml: `process_one()` never returned".to_owned());
        assert_eq!(
            judge(exited(1), &hung),
            (
                Status::Fail,
                "hung in a.yaml: `process_one()` never returned (an infinite loop, or a wait on something that never comes); the 2 specs after it not run"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_run_no_spec_ran_of_is_broken_with_the_first_error_that_says_why() {
        let startup = ReportTally {
            nothing_ran: true,
            first_error: Some("could not be loaded".to_owned()),
            ..finished(4)
        };
        assert_eq!(
            judge(exited(1), &startup),
            (Status::Broken, "could not be loaded".to_owned())
        );
        // Unfinished, and its report says nothing: what its run printed last.
        assert_eq!(
            judge(exited(2), &ReportTally::default()),
            (Status::Broken, "its last error".to_owned())
        );
        let nothing = judged(exited(2), &ReportTally::default(), 4, BUDGET, || None);
        assert_eq!(nothing, (Status::Broken, "no spec could run".to_owned()));
    }

    #[test]
    fn a_budget_that_ran_out_is_a_timeout_said_with_what_finished() {
        let stopped_itself = ReportTally {
            not_run_budget: 3,
            ..finished(3)
        };
        assert_eq!(
            judge(exited(1), &stopped_itself),
            (
                Status::Timeout,
                "stopped at its budget after 1 of 4 specs (--budget 3s)".to_owned()
            )
        );
        // Stopped from outside, its report counts for nothing, whatever it says.
        let (status, note) = judge(Exit::Stopped, &finished(0));
        assert_eq!(status, Status::Timeout);
        assert!(
            note.starts_with("stopped after its budget of 3s (--budget)"),
            "{note}"
        );
    }

    #[test]
    fn a_run_that_ended_as_dlqspec_never_ends_crashed() {
        for exit in [
            exited(3),
            exited(101),
            Exit::Exited(ExitStatus::from_raw(9)),
        ] {
            let (status, note) = judge(exit, &finished(0));
            assert_eq!(status, Status::Crashed, "{exit:?}");
            assert!(note.starts_with("its run "), "{note}");
        }
    }

    #[test]
    fn each_child_is_told_its_own_uid_and_submission_and_no_ci_context() {
        let grader = Grader {
            world: Some("amqp://guest:secret@localhost".to_owned()),
            ..Grader::default()
        };
        let told = |index: usize| -> BTreeMap<OsString, Option<OsString>> {
            grader
                .child_environment(Path::new("class/alice"), index)
                .into_iter()
                .collect()
        };
        let first = told(0);
        assert_eq!(first[&OsString::from("GITHUB_ACTIONS")], None);
        assert_eq!(
            first[&OsString::from(WORLD_VARIABLE)],
            Some("amqp://guest:secret@localhost".into())
        );
        let submission = first[&OsString::from(crate::external::sandbox::SUBMISSION_VARIABLE)]
            .clone()
            .unwrap();
        assert!(Path::new(&submission).is_absolute());
        assert!(Path::new(&submission).ends_with("class/alice"));
        let uid = |told: &BTreeMap<OsString, Option<OsString>>| {
            told[&OsString::from(crate::external::sandbox::UID_VARIABLE)].clone()
        };
        assert_ne!(uid(&first), uid(&told(1)));
        // The uids are reused past the last: as many as the box has.
        let uids = crate::external::sandbox::GRADE_UIDS as usize;
        assert_eq!(uid(&first), uid(&told(uids)));
        assert!(!first.contains_key(&OsString::from("DLQSPEC_PYTHON")));
    }

    #[test]
    fn a_broken_submissions_note_is_the_last_error_its_run_printed() {
        let printed = "error: first\nsome output\nerror: last\ntrailing";
        assert_eq!(last_error_line(printed).as_deref(), Some("last"));
        assert_eq!(last_error_line("no errors here"), None);
    }
}
