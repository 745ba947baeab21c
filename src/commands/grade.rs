//! `dlqspec grade`: grade many submissions, each by `dlqspec run` in a process of its own
//! within a wall-clock budget, and write a report per submission and a summary.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::cli::GradeArgs;
use crate::grading::{self, Graded, Status};
use crate::report::{Palette, grade_summary};

/// How long a stopped run may take to end its implementation's processes before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How often a running submission is checked on.
const POLL: Duration = Duration::from_millis(20);

pub fn grade(args: GradeArgs, palette: Palette) -> i32 {
    let usage_error = |message: String| super::dispatch::usage_error(&message, &palette);
    if let Err(error) = std::fs::create_dir_all(&args.output) {
        return usage_error(format!("cannot create {}: {error}", args.output.display()));
    }
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(error) => return usage_error(format!("cannot find dlqspec itself: {error}")),
    };
    let names = grading::report_names(&args.submissions);
    let jobs = args
        .jobs
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            usize::from,
        )
        .min(args.submissions.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let rows: Mutex<Vec<Option<Graded>>> = Mutex::new(vec![None; args.submissions.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(submission) = args.submissions.get(i) else {
                        return;
                    };
                    let row = grade_one(&program, &args, submission, &names[i]);
                    eprintln!(
                        "{} {}",
                        crate::report::sanitize::line(row.status.as_str()),
                        crate::report::sanitize::line(&row.submission)
                    );
                    if let Ok(mut rows) = rows.lock() {
                        rows[i] = Some(row);
                    }
                }
            });
        }
    });
    let rows: Vec<Graded> = rows
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    for (file, text) in [
        ("summary.csv", grade_summary::csv(&rows)),
        ("summary.html", grade_summary::html(&rows)),
    ] {
        let path = args.output.join(file);
        if let Err(error) = crate::atomic_file::write_atomically(&path, text.as_bytes()) {
            return usage_error(format!("cannot write {}: {error}", path.display()));
        }
    }
    println!(
        "{} submissions graded: {}; summary in {}",
        rows.len(),
        grade_summary::counts(&rows),
        crate::report::sanitize::line(&args.output.join("summary.html").to_string_lossy())
    );
    if rows.iter().all(|row| row.status == Status::Pass) {
        crate::runner::exit::PASSED
    } else {
        crate::runner::exit::FAILED
    }
}

/// Grades one submission; whatever happens to it becomes its row.
fn grade_one(program: &Path, args: &GradeArgs, submission: &Path, name: &str) -> Graded {
    let started = Instant::now();
    let mut row = Graded {
        submission: submission.display().to_string(),
        name: name.to_owned(),
        status: Status::Broken,
        score: 0.0,
        max_score: 0.0,
        passed: 0,
        failed: 0,
        rules: Default::default(),
        took: Duration::ZERO,
        note: String::new(),
    };
    let entry = match grading::entry_file(submission) {
        Ok(entry) => entry,
        Err(why) => {
            row.note = why;
            return row;
        }
    };
    let jsonl = args.output.join(format!("{name}.jsonl"));
    let text = args.output.join(format!("{name}.txt"));
    let _ = std::fs::remove_file(&jsonl);
    let ended = run_within_budget(program, args, &entry, &jsonl, &text);
    row.took = started.elapsed();
    let report = std::fs::read_to_string(&jsonl).unwrap_or_default();
    let tally = grading::tally(&report);
    row.score = tally.score;
    row.max_score = tally.max_score;
    row.passed = tally.passed;
    row.failed = tally.failed;
    row.rules = tally.rules;
    match ended {
        Err(why) => {
            row.status = Status::Crashed;
            row.note = why;
        }
        Ok(None) => {
            row.status = Status::Timeout;
            row.note = format!(
                "stopped after its budget of {}s (--budget)",
                args.budget.as_secs_f64()
            );
        }
        Ok(Some(status)) => match status.code() {
            Some(0) => row.status = Status::Pass,
            Some(1 | 2) if tally.finished && !tally.nothing_ran => row.status = Status::Fail,
            Some(1 | 2) => {
                row.status = Status::Broken;
                row.note = tally
                    .first_error
                    .or_else(|| last_error_line(&text))
                    .unwrap_or_else(|| "no spec could run".to_owned());
            }
            _ => {
                row.status = Status::Crashed;
                row.note = format!(
                    "its run {}",
                    crate::external::process::describe_exit(status)
                );
            }
        },
    }
    row
}

/// Runs `dlqspec run` on one entry file: its exit status, or `None` when it went past the
/// budget and was stopped (SIGTERM, so that it ends its implementation's processes; then a kill).
fn run_within_budget(
    program: &Path,
    args: &GradeArgs,
    entry: &Path,
    jsonl: &Path,
    text: &Path,
) -> Result<Option<ExitStatus>, String> {
    let out = std::fs::File::create(text)
        .map_err(|e| format!("cannot create {}: {e}", text.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut command = Command::new(program);
    command
        .arg("run")
        .args(&args.specs)
        .args(["--impl", &grading::implementation(entry)])
        .args(["--format", "json", "--output"])
        .arg(jsonl)
        .args(["--color", "never", "--timeout", &args.timeout])
        .args(["--memory", &args.memory, "--cpu", &args.cpu])
        .env_remove("GITHUB_ACTIONS")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    let deadline = Instant::now() + args.budget;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Some(status)),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            Ok(None) => {
                stop(&mut child);
                return Ok(None);
            }
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("lost track of its run: {error}"));
            }
        }
    }
}

/// Asks a run to stop (it ends its implementation's process tree), then kills it.
fn stop(child: &mut Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) with the pid of a child this process has not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let until = Instant::now() + STOP_GRACE;
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(POLL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last `error:` line of a run's human report, for a submission no spec ran of.
fn last_error_line(text: &Path) -> Option<String> {
    let text = std::fs::read_to_string(text).ok()?;
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "))
        .map(str::to_owned)
}
