//! `dlqspec grade`: grade many submissions (or a deterministic share of them), each by
//! `dlqspec run` in a process of its own within a wall-clock budget, and write a report per
//! submission and a summary; or merge the output folders of shards into one summary.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::cli::GradeArgs;
use crate::grading::{self, Graded, Status};
use crate::report::progress::{DelayedBar, suspended};
use crate::report::{Palette, grade_summary, sanitize};

/// How long a stopped run may take to end its implementation's processes before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How often a running submission is checked on.
const POLL: Duration = Duration::from_millis(20);

/// The most of a run's human report kept in `NAME.txt`.
const MAX_TEXT_REPORT_BYTES: u64 = 16 << 20;

pub fn grade(args: GradeArgs, palette: Palette) -> i32 {
    if !args.merge.is_empty() {
        return merge(&args, &palette);
    }
    let usage_error = |message: String| super::dispatch::usage_error(&message, &palette);
    if let Err(error) = std::fs::create_dir_all(&args.output) {
        return usage_error(format!("cannot create {}: {error}", args.output.display()));
    }
    // Said once here, not once per submission's run.
    crate::external::sandbox::tell_once(args.sandbox);
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(error) => return usage_error(format!("cannot find dlqspec itself: {error}")),
    };
    // Named over the whole class, so every shard gives each submission the same name.
    let names = grading::report_names(&args.submissions);
    let chosen = grading::share(&args.submissions, args.partition.as_ref());
    if let Some(partition) = &args.partition
        && chosen.is_empty()
    {
        let _ = writeln!(
            crate::report::sanitize::stderr(),
            "note: share {}/{} of --partition holds none of the {} submissions (there are more shares than submissions)",
            partition.index,
            partition.count,
            args.submissions.len()
        );
    }
    let jobs = args
        .jobs
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            usize::from,
        )
        .min(chosen.len())
        .max(1);
    let mut progress = crate::report::progress::wanted_on_stderr().then(|| {
        let progress =
            DelayedBar::start("{spinner} [{elapsed}] {bar:30} {pos}/{len} graded {wide_msg}");
        progress.bar().set_length(chosen.len() as u64);
        progress
    });
    let bar = progress.as_ref().map(DelayedBar::bar);
    let next = AtomicUsize::new(0);
    let mut graded: Vec<(usize, Graded)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let Some(&i) = chosen.get(next.fetch_add(1, Ordering::SeqCst)) else {
                            return mine;
                        };
                        let submission = &args.submissions[i];
                        let row = grade_one(&program, &args, submission, &names[i], i);
                        // Through the guarded stderr: a submission's name is no workflow command.
                        suspended(bar, || {
                            let _ = writeln!(
                                crate::report::sanitize::stderr(),
                                "{} {}",
                                sanitize::line(row.status.as_str()),
                                sanitize::line(&row.submission)
                            );
                        });
                        if let Some(bar) = bar {
                            bar.inc(1);
                            bar.set_message(sanitize::line(&row.submission).into_owned());
                        }
                        mine.push((i, row));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    if let Some(progress) = &mut progress {
        progress.finish();
    }
    graded.sort_by_key(|(i, _)| *i);
    let rows: Vec<Graded> = graded.into_iter().map(|(_, row)| row).collect();
    let partition = args.partition.map(|p| format!("{}/{}", p.index, p.count));
    if let Err(why) = write_summaries(&args.output, &rows, partition.as_deref()) {
        return usage_error(why);
    }
    let share = match &partition {
        Some(share) => format!(" (share {share} of {} submissions)", args.submissions.len()),
        None => String::new(),
    };
    let _ = writeln!(
        crate::report::sanitize::stdout(),
        "{} submissions graded{share}: {}; summary in {}",
        rows.len(),
        grade_summary::counts(&rows),
        sanitize::line(&args.output.join("summary.html").to_string_lossy())
    );
    verdict(&rows)
}

/// 0 when every submission passed, 1 otherwise.
fn verdict(rows: &[Graded]) -> i32 {
    if rows.iter().all(|row| row.status == Status::Pass) {
        crate::runner::exit::PASSED
    } else {
        crate::runner::exit::FAILED
    }
}

/// Writes `summary.csv`, `summary.html` and `summary.json` into `output`, each replacing what
/// is there (a link planted at one is replaced, never written through).
fn write_summaries(output: &Path, rows: &[Graded], partition: Option<&str>) -> Result<(), String> {
    for (file, text) in [
        ("summary.csv", grade_summary::csv(rows)),
        ("summary.html", grade_summary::html(rows)),
        (grading::SUMMARY_JSON, grade_summary::json(rows, partition)),
    ] {
        let path = output.join(file);
        crate::atomic_file::replace_own(&path, text.as_bytes())
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    Ok(())
}

/// `grade --merge DIR...`: the shards' rows as one class, their reports copied beside the
/// merged summary, so that its links work wherever the folder goes.
fn merge(args: &GradeArgs, palette: &Palette) -> i32 {
    let usage_error = |message: String| super::dispatch::usage_error(&message, palette);
    let mut shards = Vec::new();
    let mut sources: std::collections::BTreeMap<String, PathBuf> = Default::default();
    for dir in &args.merge {
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return usage_error(format!(
                    "shard {} is not a folder: give the folders `dlqspec grade --output DIR` wrote",
                    dir.display()
                ));
            }
            Err(error) => {
                return usage_error(format!(
                    "shard folder {} cannot be read ({error}): give the folders `dlqspec grade --output DIR` wrote",
                    dir.display()
                ));
            }
        }
        let file = dir.join(grading::SUMMARY_JSON);
        if std::fs::symlink_metadata(&file).is_err() {
            return usage_error(format!(
                "shard folder {} holds no {}: was it written by `dlqspec grade --output {}` (whose grading finished)?",
                dir.display(),
                grading::SUMMARY_JSON,
                dir.display()
            ));
        }
        let rows = match grading::read_summary(&file) {
            Ok(rows) => rows,
            Err(why) => return usage_error(why),
        };
        for row in &rows {
            sources
                .entry(row.name.clone())
                .or_insert_with(|| dir.clone());
        }
        shards.push((file, rows));
    }
    let shard_count = shards.len();
    let rows = match grading::merge(shards) {
        Ok(rows) => rows,
        Err(why) => return usage_error(why),
    };
    if let Err(error) = std::fs::create_dir_all(&args.output) {
        return usage_error(format!("cannot create {}: {error}", args.output.display()));
    }
    for row in &rows {
        for ext in ["txt", "jsonl"] {
            let file = format!("{}.{ext}", row.name);
            let from = sources[&row.name].join(&file);
            // A submission graded without a run (no entry file) has no reports.
            if std::fs::symlink_metadata(&from).is_err() {
                continue;
            }
            let to = args.output.join(&file);
            let copied =
                grading::read_bounded(&from, grading::MAX_REPORT_BYTES).and_then(|bytes| {
                    crate::atomic_file::replace_own(&to, &bytes)
                        .map_err(|error| format!("cannot write {}: {error}", to.display()))
                });
            if let Err(why) = copied {
                return usage_error(why);
            }
        }
    }
    if let Err(why) = write_summaries(&args.output, &rows, None) {
        return usage_error(why);
    }
    let _ = writeln!(
        crate::report::sanitize::stdout(),
        "{} submissions merged from {shard_count} shards: {}; summary in {}",
        rows.len(),
        grade_summary::counts(&rows),
        sanitize::line(&args.output.join("summary.html").to_string_lossy())
    );
    verdict(&rows)
}

/// Grades one submission (the `index`-th of the class); whatever happens to it becomes its row.
fn grade_one(
    program: &Path,
    args: &GradeArgs,
    submission: &Path,
    name: &str,
    index: usize,
) -> Graded {
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
    // A report of an earlier grading must not pass for this one's (the run replaces it).
    let _ = std::fs::remove_file(&jsonl);
    let (ended, human) = match run_within_budget(program, args, &entry, &jsonl, index) {
        Ok((ended, human)) => (Ok(ended), human),
        Err(why) => (Err(why), String::new()),
    };
    row.took = started.elapsed();
    // Put in place as every other report is: a link or file planted at NAME.txt is replaced,
    // never written through.
    if let Err(error) = crate::atomic_file::replace_own(&text, human.as_bytes()) {
        row.note = format!("cannot write {}: {error}", text.display());
    }
    // Bounded, and never through a link or FIFO a solution may have planted there.
    let report = grading::read_bounded(&jsonl, grading::MAX_REPORT_BYTES)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
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
                    .or_else(|| last_error_line(&human))
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
/// budget and was stopped (SIGTERM, so that it ends its implementation's processes; then its
/// whole tree is killed); and its human report (stdout and stderr), bounded.
fn run_within_budget(
    program: &Path,
    args: &GradeArgs,
    entry: &Path,
    jsonl: &Path,
    index: usize,
) -> Result<(Option<ExitStatus>, String), String> {
    // An unnamed file: nothing at a path is opened, so nothing planted there is written.
    let mut out = tempfile::tempfile().map_err(|e| format!("no temporary file: {e}"))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let ended = run_to_end(
        program,
        args,
        entry,
        jsonl,
        index,
        out.try_clone().map_err(|e| e.to_string())?,
        err,
    )?;
    let mut human = Vec::new();
    out.rewind()
        .and_then(|()| {
            (&mut out)
                .take(MAX_TEXT_REPORT_BYTES)
                .read_to_end(&mut human)
        })
        .map_err(|e| format!("cannot read its report back: {e}"))?;
    Ok((ended, String::from_utf8_lossy(&human).into_owned()))
}

/// Starts the run, in a process tree of its own, and waits for it within the budget.
fn run_to_end(
    program: &Path,
    args: &GradeArgs,
    entry: &Path,
    jsonl: &Path,
    index: usize,
    out: std::fs::File,
    err: std::fs::File,
) -> Result<Option<ExitStatus>, String> {
    let mut command = Command::new(program);
    command
        .arg("run")
        .args(&args.specs)
        .args(["--impl", &grading::implementation(entry)])
        .args(["--format", "json", "--output"])
        .arg(jsonl)
        .args(["--color", "never", "--timeout", &args.timeout])
        .args(["--memory", &args.memory, "--cpu", &args.cpu])
        .args(["--processes", &args.processes])
        .args(["--sandbox", sandbox_word(args.sandbox)])
        // As root, each submission's box runs it as a uid of its own: one submission cannot
        // touch another's processes or files even through what the box lets both reach.
        .env(
            crate::external::sandbox::UID_VARIABLE,
            (crate::external::sandbox::GRADE_FIRST_UID as usize + index % 1_000_000).to_string(),
        )
        .env_remove("GITHUB_ACTIONS")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    // Started as implementations are (`children`): its own group and tree, dying with grade,
    // so that nothing a submission started outlives its grading. Its own limits are the run's.
    let (mut child, guard) = crate::external::children::spawn(
        &mut command,
        &crate::external::limits::Limits::unlimited(),
    )
    .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    let deadline = Instant::now() + args.budget;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                crate::external::children::end(&mut child, true, guard.tree());
                return Ok(Some(status));
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            Ok(None) => {
                let reaped = stop(&mut child);
                crate::external::children::end(&mut child, reaped, guard.tree());
                return Ok(None);
            }
            Err(error) => {
                crate::external::children::end(&mut child, false, guard.tree());
                return Err(format!("lost track of its run: {error}"));
            }
        }
    }
}

/// `--sandbox`'s word for a setting, to hand on to each run.
fn sandbox_word(sandbox: crate::external::sandbox::Sandbox) -> &'static str {
    match sandbox {
        crate::external::sandbox::Sandbox::On => "on",
        crate::external::sandbox::Sandbox::Off => "off",
    }
}

/// Asks a run to stop, so that it ends its implementation's processes itself; whether it did
/// within the grace time (and was reaped). What is left is for `children::end`.
fn stop(child: &mut Child) -> bool {
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
                return true;
            }
            std::thread::sleep(POLL);
        }
    }
    false
}

/// The last `error:` line of a run's human report, for a submission no spec ran of.
fn last_error_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "))
        .map(str::to_owned)
}
