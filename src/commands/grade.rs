//! `dlqspec grade`: grade many submissions (or a deterministic share of them), each by
//! `dlqspec run` in a process of its own within a wall-clock budget, and write a report per
//! submission and a summary; or merge the output folders of shards into one summary.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::commands::cli::GradeArgs;
use crate::contracts::builtin::Builtin;
use crate::external::supervisor::{self, ChildReport, Exit, Stderr};
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::report::progress::{DelayedBar, suspended};
use crate::report::{Palette, grade_summary, sanitize};
use crate::run::grading::{self, Graded, Status, SuiteSpec};

/// The most of a picture (`dlqspec explain --format html`) kept: one is a few hundred KiB at
/// most, since its rows are capped; a larger one is not dlqspec's.
const MAX_PICTURE_BYTES: u64 = 8 << 20;

/// The most of a run's human report kept in `NAME.txt`.
const MAX_TEXT_REPORT_BYTES: u64 = 16 << 20;

pub(crate) fn grade(mut args: GradeArgs, palette: Palette) -> i32 {
    if !args.merge.is_empty() {
        return merge(&args, &palette);
    }
    let usage_error = |message: String| super::messages::usage_error(&message, &palette);
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(error) => return usage_error(format!("cannot find dlqspec itself: {error}")),
    };
    // Said once here, not once per submission's run.
    super::sandbox_warnings::warn_once_for(args.limits.sandbox.into());
    // The runs' reports come back through descriptors of grade's: no submission may open them.
    crate::external::hardening::harden_own_process();
    let earlier = match earlier_grading(&args) {
        Ok(earlier) => earlier,
        Err(why) => return usage_error(why),
    };
    // The suite is judged before any student is: a broken spec would be scored against them.
    let suite = match reference_suite(&args.specs) {
        Ok(suite) => suite,
        Err(why) => return usage_error(why),
    };
    // A class folder is its members: every shard opens it the same way, before naming; the
    // output folder, when it is inside the class folder, is none of them.
    let output = std::fs::canonicalize(&args.output).ok();
    args.submissions = grading::class_members(&args.submissions)
        .into_iter()
        .filter(|member| output.is_none() || std::fs::canonicalize(member).ok() != output)
        .collect();
    if let Err(error) = std::fs::create_dir_all(&args.output) {
        return usage_error(format!("cannot create {}: {error}", args.output.display()));
    }
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
    // pyenv's shim is a shell script that costs more than the interpreter it starts: it is
    // asked once which interpreter that is, and every run starts that one.
    if chosen
        .iter()
        .any(|&i| python_submission(&args.submissions[i]))
    {
        args.python = crate::external::launch::pyenv_interpreter();
    }
    // Every run's boxes are made in one folder of grade's own, warm or cold: the only place
    // the zygote may write.
    let boxes = (args.limits.sandbox == crate::commands::cli::SandboxChoice::On)
        .then(crate::external::sandbox::BoxesFolder::make)
        .and_then(Result::ok);
    args.boxes = boxes.as_ref().map(|boxes| boxes.path().to_path_buf());
    // A JavaScript or TypeScript submission this machine cannot run (no Node.js, one too
    // old) is the grader's to fix: said once here, and its row is `ungraded`, never a 0.
    let node_problem = chosen
        .iter()
        .any(|&i| node_submission(&args.submissions[i]))
        .then(crate::external::launch::node_problem)
        .flatten();
    if let Some(why) = &node_problem {
        let count = chosen
            .iter()
            .filter(|&&i| node_submission(&args.submissions[i]))
            .count();
        super::messages::failure(
            &format!(
                "{count} JavaScript and TypeScript submissions are not graded (`ungraded`): {why}"
            ),
            &palette,
        );
    }
    let zygote = warm_python(&args, &chosen);
    let handed = zygote.as_ref().map(crate::external::zygote::Zygote::socket);
    let next = AtomicUsize::new(0);
    let mut graded: Vec<(usize, (Graded, Option<Reports>))> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let Some(&i) = chosen.get(next.fetch_add(1, Ordering::SeqCst)) else {
                            return mine;
                        };
                        let submission = &args.submissions[i];
                        let (row, reports) = match &node_problem {
                            Some(_) if node_submission(submission) => {
                                (ungraded(submission, &names[i], &suite), None)
                            }
                            _ => grade_one(
                                &program,
                                &args,
                                submission,
                                &names[i],
                                &suite,
                                i,
                                handed.as_ref(),
                            ),
                        };
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
                        mine.push((i, (row, reports)));
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
    // Every run is over: the zygote and whatever it still has go before any file is written.
    drop(zygote);
    if let Some(progress) = &mut progress {
        progress.finish();
    }
    graded.sort_by_key(|(i, _)| *i);
    // Only now, when every run and everything it started is over, are the class's files
    // written, each by grade itself: no submission runs while they are put in place.
    let rows: Vec<Graded> = graded
        .into_iter()
        .map(|(_, (mut row, reports))| {
            match reports {
                Some(reports) => match write_reports(&args.output, &row.name, reports) {
                    Ok(written) => row.reports = written,
                    Err(why) => row.note = why,
                },
                // Not run: no picture of an earlier grading may pass for this one's.
                None => {
                    if let Err(why) = remove_stale_pictures(&args.output, &row.name, &[]) {
                        row.note = format!("{}; {why}", row.note);
                    }
                }
            }
            row
        })
        .collect();
    let partition = args.partition.map(|p| format!("{}/{}", p.index, p.count));
    let against = regraded(&args, earlier.as_deref(), &rows);
    let about = grading::About::now(&args.specs, &suite);
    if let Err(why) = write_summaries(
        &args.output,
        &rows,
        partition.as_deref(),
        Some(&about),
        against.as_ref(),
    ) {
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
    // The class view: each rule's share of the class passing, and the most common failure
    // causes, as summary.html shows them.
    let _ = write!(
        crate::report::sanitize::stdout(),
        "{}{}",
        grade_summary::rule_table(&rows),
        grade_summary::cause_table(&rows)
    );
    if let Some(against) = &against {
        let _ = write!(
            crate::report::sanitize::stdout(),
            "{}",
            grade_summary::against_text(&rows, against)
        );
    }
    verdict(&rows)
}

/// Whether a submission's entry file is JavaScript or TypeScript, which Node.js runs.
fn node_submission(submission: &Path) -> bool {
    crate::external::entry::entry_file(submission)
        .is_ok_and(|entry| entry.extension().is_some_and(|ext| ext != "py"))
}

/// The row of a submission this machine cannot run: not run, no score of the student's.
fn ungraded(submission: &Path, name: &str, suite: &[SuiteSpec]) -> Graded {
    let mut row = not_run_row(submission, name, suite);
    row.status = Status::Ungraded;
    row.note = "not graded: this machine cannot run JavaScript or TypeScript (the error grade gave says why); grade it again once that is fixed".to_owned();
    row
}

/// Whether a submission's entry file is Python's.
fn python_submission(submission: &Path) -> bool {
    crate::external::entry::entry_file(submission)
        .is_ok_and(|entry| entry.extension().is_some_and(|ext| ext == "py"))
}

/// The zygote that starts this class's Python submissions warm (unless `--cold`), when it
/// can start; else every submission starts cold, and a note says why.
fn warm_python(args: &GradeArgs, chosen: &[usize]) -> Option<crate::external::zygote::Zygote> {
    if args.cold || args.limits.sandbox != crate::commands::cli::SandboxChoice::On {
        return None;
    }
    let started = crate::external::zygote::for_class(
        chosen.iter().map(|&i| args.submissions[i].as_path()),
        args.python.as_deref(),
        args.boxes.is_some(),
        args.limits.processes.0,
    );
    match started {
        Ok(zygote) => zygote,
        Err(why) => {
            let _ = writeln!(
                crate::report::sanitize::stderr(),
                "note: each Python submission starts an interpreter of its own, which is slower; the grades are the same ({}); --cold asks for that, without this note",
                sanitize::line(&why)
            );
            None
        }
    }
}

/// 0 when every submission passed, 1 otherwise; 2 when the machine left some ungraded.
fn verdict(rows: &[Graded]) -> i32 {
    if rows.iter().any(|row| row.status == Status::Ungraded) {
        crate::run::exit::SPEC_OR_USAGE_ERROR
    } else if rows.iter().all(|row| row.status == Status::Pass) {
        crate::run::exit::PASSED
    } else {
        crate::run::exit::FAILED
    }
}

/// Writes `summary.csv`, `summary.html` and `summary.json` into `output`, each replacing what
/// is there (a link planted at one is replaced, never written through).
fn write_summaries(
    output: &Path,
    rows: &[Graded],
    partition: Option<&str>,
    about: Option<&grading::About>,
    against: Option<&grade_summary::Against>,
) -> Result<(), String> {
    for (file, text) in [
        ("summary.csv", grade_summary::csv(rows)),
        ("summary.html", grade_summary::html(rows, about, against)),
        (
            grading::SUMMARY_JSON,
            grade_summary::json(rows, partition, about, against),
        ),
    ] {
        let path = output.join(file);
        crate::files::atomic_file::replace_own(&path, text.as_bytes())
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    Ok(())
}

/// The regrade diff of `rows` against the earlier grading `--against` named, if any.
fn regraded(
    args: &GradeArgs,
    earlier: Option<&[Graded]>,
    rows: &[Graded],
) -> Option<grade_summary::Against> {
    let (dir, earlier) = args.against.as_ref().zip(earlier)?;
    Some(grade_summary::Against {
        dir: dir.display().to_string(),
        diff: grading::regrade(earlier, rows),
    })
}

/// The earlier grading `--against` names, read before any submission is graded (a wrong
/// folder is said at once, not after the class); `None` without `--against`. Refused when the
/// output folder is that folder, inside it or around it: a regrade writes nothing into what it
/// compares with.
fn earlier_grading(args: &GradeArgs) -> Result<Option<Vec<Graded>>, String> {
    let Some(dir) = &args.against else {
        return Ok(None);
    };
    if grading::is_within(&args.output, dir) {
        return Err(format!(
            "--output {} is within --against {}: a regrade writes nothing into the grading it compares with; give another --output folder",
            args.output.display(),
            dir.display()
        ));
    }
    // Inside the output folder, a submission's reports could land in it under its name.
    if grading::is_within(dir, &args.output) {
        return Err(format!(
            "--against {} is within --output {}: a submission's reports could be written into it; move the earlier grading out of the output folder",
            dir.display(),
            args.output.display()
        ));
    }
    grading::read_earlier(dir).map(Some)
}

/// `grade --merge DIR...`: the shards' rows as one class, their reports copied beside the
/// merged summary, so that its links work wherever the folder goes.
fn merge(args: &GradeArgs, palette: &Palette) -> i32 {
    let usage_error = |message: String| super::messages::usage_error(&message, palette);
    let mut shards = Vec::new();
    let mut abouts = Vec::new();
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
        let (rows, about) = match grading::read_summary_about(&file) {
            Ok(read) => read,
            Err(why) => return usage_error(why),
        };
        abouts.push(about);
        for row in &rows {
            sources
                .entry(row.name.clone())
                .or_insert_with(|| dir.clone());
        }
        shards.push((file, rows));
    }
    let shard_count = shards.len();
    let earlier = match earlier_grading(args) {
        Ok(earlier) => earlier,
        Err(why) => return usage_error(why),
    };
    let rows = match grading::merge(shards) {
        Ok(rows) => rows,
        Err(why) => return usage_error(why),
    };
    let against = regraded(args, earlier.as_deref(), &rows);
    if let Err(error) = std::fs::create_dir_all(&args.output) {
        return usage_error(format!("cannot create {}: {error}", args.output.display()));
    }
    for row in &rows {
        let mut pictures = Vec::new();
        for (kind, file) in row.reports.files(&row.name) {
            let from = sources[&row.name].join(&file);
            let to = args.output.join(&file);
            let copied =
                grading::read_bounded(&from, grading::MAX_REPORT_BYTES).and_then(|bytes| {
                    // A picture is in its submission's folder, made here as the shard made it.
                    if kind == "html" {
                        pictures.push(file.clone());
                        return write_picture(&args.output, &row.name, &file, &bytes);
                    }
                    crate::files::atomic_file::replace_own(&to, &bytes)
                        .map_err(|error| format!("cannot write {}: {error}", to.display()))
                });
            if let Err(why) = copied {
                return usage_error(why);
            }
        }
        if let Err(why) = remove_stale_pictures(&args.output, &row.name, &pictures) {
            return usage_error(why);
        }
    }
    let about = merged_about(&abouts);
    if about.is_none() && abouts.iter().any(Option::is_some) {
        let _ = writeln!(
            crate::report::sanitize::stderr(),
            "note: the shards do not say the same suite (its folders and digest in their summary.json), so the merged page names none: were they graded against the same specs?"
        );
    }
    if let Err(why) = write_summaries(&args.output, &rows, None, about.as_ref(), against.as_ref()) {
        return usage_error(why);
    }
    let _ = writeln!(
        crate::report::sanitize::stdout(),
        "{} submissions merged from {shard_count} shards: {}; summary in {}",
        rows.len(),
        grade_summary::counts(&rows),
        sanitize::line(&args.output.join("summary.html").to_string_lossy())
    );
    if let Some(against) = &against {
        let _ = write!(
            crate::report::sanitize::stdout(),
            "{}",
            grade_summary::against_text(&rows, against)
        );
    }
    verdict(&rows)
}

/// What a merged class's page says of its grading: the shards' suite when every shard says
/// the same one (the first shard's date and dlqspec), else none.
fn merged_about(abouts: &[Option<grading::About>]) -> Option<grading::About> {
    let first = abouts.first()?.clone()?;
    abouts
        .iter()
        .all(|about| {
            about
                .as_ref()
                .is_some_and(|about| about.digest == first.digest && about.folders == first.folders)
        })
        .then_some(first)
}

/// The suite as the built-in reference runs it: each spec's path, points and rules. Refused,
/// with every broken spec listed, when the reference does not pass a spec (or it does not
/// load): such a spec judges nobody, and would be scored against every student.
fn reference_suite(specs: &[PathBuf]) -> Result<Vec<SuiteSpec>, String> {
    struct Keep(Vec<crate::run::events::SpecReport>);
    impl crate::run::events::Reporter for Keep {
        fn event(&mut self, event: &crate::run::events::Event) {
            if let crate::run::events::Event::Finished(report) = event {
                self.0.push((*report).clone());
            }
        }
    }
    let config = crate::run::runner::RunConfig {
        paths: specs.to_vec(),
        ..crate::run::runner::RunConfig::default()
    };
    let factory = || -> Box<dyn Implementation + Send> { Box::new(Builtin::new()) };
    let mut kept = Keep(Vec::new());
    crate::run::runner::run(&config, &factory, &mut kept).map_err(|error| error.to_string())?;
    let broken: Vec<String> = kept
        .0
        .iter()
        .filter(|report| !matches!(report.outcome, Outcome::Passed))
        .flat_map(|report| -> Vec<String> {
            // A broken spec: each of its errors, at its place.
            if let Outcome::SpecError(error) = &report.outcome
                && (!error.more.is_empty() || error.untold.is_some())
            {
                let untold = error
                    .untold
                    .map(|why| format!("  {}: {}", sanitize::line(&error.path), why.says()));
                return error
                    .all()
                    .map(|one| format!("  {}", sanitize::line(&one.alone().to_string())))
                    .chain(untold)
                    .collect();
            }
            let details = crate::report::render::details(&report.path, &report.outcome);
            let first = details.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let first = first.trim();
            vec![format!(
                "  {}: {}",
                report.path,
                first.strip_prefix("error: ").unwrap_or(first)
            )]
        })
        .collect();
    let broken_specs = kept
        .0
        .iter()
        .filter(|report| !matches!(report.outcome, Outcome::Passed))
        .count();
    if broken_specs > 0 {
        let them = if broken_specs == 1 { "it" } else { "them" };
        return Err(format!(
            "{} of the {} specs of --specs {} broken (the built-in reference does not pass {them}), so no submission is graded against {them}: fix {them} (`dlqspec lint`, `dlqspec explain SPEC`) or leave {them} out of --specs:\n{}",
            broken_specs,
            kept.0.len(),
            if broken_specs == 1 { "is" } else { "are" },
            broken.join("\n")
        ));
    }
    Ok(kept
        .0
        .into_iter()
        .map(|report| SuiteSpec {
            path: report.path,
            points: report.grading.points,
            rules: report.rules,
            hidden: !report.grading.visibility.shows_details(),
        })
        .collect())
}

/// What one run sent back, held in unnamed files (no name to find, no memory to fill) until
/// grade writes the class's files.
struct Reports {
    /// Its human report: its stdout and stderr.
    human: File,
    /// Its JSON-lines report, as it came through its pipe; `None` when it sent none.
    json_lines: Option<File>,
    /// The pictures of the specs it failed: each spec's path and its page, as a
    /// `dlqspec explain` of its own made it.
    pictures: Vec<(String, File)>,
}

/// Removes a file or link at `path`, if there is one.
#[expect(
    clippy::disallowed_methods,
    reason = "writes a file: a report (or picture) an earlier grading left is removed, so it cannot pass for this one's"
)]
fn remove_stale(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_dir() => std::fs::remove_file(path)
            .or_else(|error| match error.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(error),
            })
            .map_err(|error| format!("cannot remove {}: {error}", path.display())),
        _ => Ok(()),
    }
}

/// Writes a submission's `NAME.txt` and `NAME.jsonl`, each replacing what is there (a link or
/// file planted there is replaced, never written through); which were written.
fn write_reports(
    output: &Path,
    name: &str,
    reports: Reports,
) -> Result<grading::WrittenReports, String> {
    let text = output.join(format!("{name}.txt"));
    let jsonl = output.join(format!("{name}.jsonl"));
    let reports_json = reports.json_lines.is_some();
    let human = read_held(reports.human, MAX_TEXT_REPORT_BYTES)
        .map_err(|e| format!("cannot read its report back: {e}"))?;
    crate::files::atomic_file::replace_own(&text, &human)
        .map_err(|error| format!("cannot write {}: {error}", text.display()))?;
    match reports.json_lines {
        Some(file) => {
            let bytes = read_held(file, grading::MAX_REPORT_BYTES)
                .map_err(|e| format!("cannot read its report back: {e}"))?;
            crate::files::atomic_file::replace_own(&jsonl, &bytes)
                .map_err(|error| format!("cannot write {}: {error}", jsonl.display()))?;
        }
        // A report of an earlier grading must not pass for this one's.
        None => remove_stale(&jsonl)?,
    }
    let mut pictures = Vec::new();
    for (spec, page) in reports.pictures {
        let file = grading::picture_file(name, &spec);
        // Two specs whose paths make the same file name: the first one's picture stays.
        if pictures
            .iter()
            .any(|drawn: &String| grading::picture_file(name, drawn) == file)
        {
            continue;
        }
        let bytes = read_held(page, MAX_PICTURE_BYTES)
            .map_err(|e| format!("cannot read a picture back: {e}"))?;
        write_picture(output, name, &file, &bytes)?;
        pictures.push(spec);
    }
    let made: Vec<String> = pictures
        .iter()
        .map(|spec| grading::picture_file(name, spec))
        .collect();
    remove_stale_pictures(output, name, &made)?;
    Ok(grading::WrittenReports {
        text: true,
        json_lines: reports_json,
        pictures,
    })
}

/// Writes a picture at `file` (from `grading::picture_file`) under `output`, in folders of
/// grade's own: a link planted for the submission's folder or its `explain` folder is refused,
/// never followed out of `output`; a link at the file itself is replaced.
fn write_picture(output: &Path, name: &str, file: &str, bytes: &[u8]) -> Result<(), String> {
    let path = output.join(file);
    crate::files::folders::own_folder(output, Path::new(&grading::picture_folder(name)))
        .and_then(|_| crate::files::atomic_file::replace_own(&path, bytes))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// The most entries of a submission's `explain` folder looked at for stale pictures.
const MAX_PICTURE_FOLDER_ENTRIES: usize = 4096;

/// Removes the pictures an earlier grading left for submission `name` that this one did not
/// make (`made`, as `grading::picture_file` names them), so that none passes for this
/// grading's. Only regular files named as grade names pictures are removed, and only in a
/// folder reached through no link: anything else there is left alone.
fn remove_stale_pictures(output: &Path, name: &str, made: &[String]) -> Result<(), String> {
    let folder = grading::picture_folder(name);
    let Some(path) = crate::files::folders::existing_own_folder(output, Path::new(&folder)) else {
        return Ok(());
    };
    let Ok(entries) = std::fs::read_dir(&path) else {
        return Ok(());
    };
    for entry in entries.take(MAX_PICTURE_FOLDER_ENTRIES).flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let ours = grading::is_picture_name(file_name)
            && entry.file_type().is_ok_and(|kind| kind.is_file());
        if ours && !made.contains(&format!("{folder}/{file_name}")) {
            remove_stale(&entry.path())?;
        }
    }
    Ok(())
}

/// The first `limit` bytes of a file grade holds, from its start.
fn read_held(mut file: File, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.rewind()?;
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The row of a submission before its run: broken, nothing passed, no spec run.
fn not_run_row(submission: &Path, name: &str, suite: &[SuiteSpec]) -> Graded {
    Graded {
        submission: submission.display().to_string(),
        name: name.to_owned(),
        status: Status::Broken,
        score: 0.0,
        max_score: suite.iter().map(|spec| spec.points).sum(),
        passed: 0,
        failed: suite.len(),
        rules: Default::default(),
        // Until a run reports them, no spec of the suite ran.
        specs: grading::tally("", suite).specs,
        took: Duration::ZERO,
        note: String::new(),
        reports: grading::WrittenReports::default(),
    }
}

/// Grades one submission; whatever happens to it becomes its row, scored against the whole
/// `suite`; and what its run sent back, for grade to write. It is the `index`-th of the class.
fn grade_one(
    program: &Path,
    args: &GradeArgs,
    submission: &Path,
    name: &str,
    suite: &[SuiteSpec],
    index: usize,
    zygote: Option<&crate::external::zygote::Socket>,
) -> (Graded, Option<Reports>) {
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
    let ran = match run_within_budget(program, args, &entry, index, zygote) {
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
    let trusted = matches!(ran.exit, Exit::Exited(status) if matches!(status.code(), Some(0..=2)));
    let report = match (&json_lines, trusted) {
        (Some(file), true) => file
            .try_clone()
            .and_then(|file| read_held(file, grading::MAX_REPORT_BYTES))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default(),
        _ => String::new(),
    };
    let tally = grading::tally(&report, suite);
    row.score = tally.score;
    row.max_score = tally.max_score;
    row.passed = tally.passed;
    row.failed = tally.failed;
    row.rules = tally.rules;
    row.specs = tally.specs;
    match ran.exit {
        Exit::Stopped => {
            row.status = Status::Timeout;
            row.note = format!(
                "stopped after its budget of {}s (--budget); its run did not stop itself, so nothing of it counts",
                args.budget.as_secs_f64()
            );
        }
        Exit::Exited(status) => match status.code() {
            // The run stopped itself at its budget: the specs it finished keep their verdicts.
            Some(0..=2) if tally.finished && tally.not_run_budget > 0 => {
                row.status = Status::Timeout;
                row.note = format!(
                    "stopped at its budget after {} of {} specs (--budget {}s)",
                    suite.len() - tally.not_run_budget,
                    suite.len(),
                    args.budget.as_secs_f64()
                );
            }
            Some(0) if tally.finished && tally.failed == 0 => row.status = Status::Pass,
            Some(0..=2) if tally.finished && !tally.nothing_ran => row.status = Status::Fail,
            Some(0..=2) => {
                row.status = Status::Broken;
                row.note = tally
                    .first_error
                    .or_else(|| last_error_line(&human))
                    .or_else(|| report_problem.clone())
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
    // A failing submission's first failing specs are drawn, each by a run of its own, all
    // within one more budget: the report carries a spec's first difference, not the whole
    // timeline a picture draws.
    let pictures = if row.status == Status::Fail && args.pictures > 0 {
        let deadline = Instant::now() + args.budget;
        grading::mismatched(&report, suite)
            .into_iter()
            .take(usize::from(args.pictures).min(grading::MAX_PICTURES))
            .filter_map(|spec| {
                draw_within(program, args, &entry, index, &spec, deadline).map(|page| (spec, page))
            })
            .collect()
    } else {
        Vec::new()
    };
    let reports = Reports {
        human: ran.output,
        // The report of a run that did not end as dlqspec ends is no verdict: not scored, and
        // not published beside the scores either.
        json_lines: json_lines.filter(|_| trusted),
        pictures,
    };
    (row, Some(reports))
}

/// Runs `dlqspec run` on one entry file, within the budget (past it the run is stopped, and
/// whatever it started with it). Its human report goes to an unnamed file, its JSON-lines
/// report through a pipe: nothing of it is at a path a submission could write.
fn run_within_budget(
    program: &Path,
    args: &GradeArgs,
    entry: &Path,
    index: usize,
    zygote: Option<&crate::external::zygote::Socket>,
) -> Result<supervisor::Ended, String> {
    let mut run: Vec<OsString> = vec!["run".into()];
    run.extend(args.specs.iter().map(|spec| spec.into()));
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
            &supervisor::child_budget(args.budget)
                .as_secs_f64()
                .to_string(),
        ]
        .map(OsString::from),
    );
    supervisor::run(supervisor::ChildRequest {
        program,
        args: boxed(run, args),
        environment: child_environment(args, index),
        deadline: Instant::now() + args.budget,
        stderr: Stderr::WithStdout,
        report: Some(grading::MAX_REPORT_BYTES),
        zygote,
    })
}

/// What a `dlqspec` child for the `index`-th submission is told in its environment besides
/// grade's own: its box's uid, its interpreter, the folder of the boxes, the world, its
/// submission; no CI context.
fn child_environment(args: &GradeArgs, index: usize) -> Vec<(OsString, Option<OsString>)> {
    let mut environment: Vec<(OsString, Option<OsString>)> = Vec::new();
    if let Some(python) = &args.python {
        environment.push(("DLQSPEC_PYTHON".into(), Some(python.into())));
    }
    if let Some(boxes) = &args.boxes {
        environment.push(("TMPDIR".into(), Some(boxes.into())));
    }
    // In the environment, not the command line, which any user of the machine can read: the
    // address may hold a password. The implementation's box never inherits it.
    environment.push((
        super::world::VARIABLE.into(),
        args.world.as_ref().map(OsString::from),
    ));
    // As root, each submission's box runs it as a uid of its own: one submission cannot touch
    // another's processes or files even through what the box lets both reach.
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
    // Its box shows the submission alone: a lone file of a class folder without the files of
    // its classmates beside it.
    if let Some(submission) = args
        .submissions
        .get(index)
        .and_then(|submission| std::path::absolute(submission).ok())
    {
        environment.push((
            crate::external::sandbox::SUBMISSION_VARIABLE.into(),
            Some(submission.into()),
        ));
    }
    environment
}

/// A child's arguments with the options every child hands on to its implementation's box:
/// the same limits for the run and for each picture.
fn boxed(mut child_args: Vec<OsString>, args: &GradeArgs) -> Vec<OsString> {
    child_args.extend(["--color", "never"].map(OsString::from));
    child_args.extend(args.limits.to_args().into_iter().map(OsString::from));
    child_args
}

/// The picture of `spec` for one submission, by `dlqspec explain --format html` on its entry
/// file: its implementation started as the run's was (in the box, with the same limits), the
/// page read from the child's stdout. `None` when the child did not end as dlqspec ends
/// (killed, stopped at `deadline`) or drew nothing: then nothing is linked.
fn draw_within(
    program: &Path,
    args: &GradeArgs,
    entry: &Path,
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
        program,
        args: boxed(explain, args),
        environment: child_environment(args, index),
        deadline,
        stderr: Stderr::Dropped,
        report: None,
        zygote: None,
    })
    .ok()?;
    // 1 is a failing scenario, which is why it is drawn; anything else is no picture (a pass
    // this time would be the picture of another run than the one graded).
    let failed = matches!(drawn.exit, Exit::Exited(status) if status.code() == Some(1));
    let written = drawn.output.metadata().is_ok_and(|meta| meta.len() > 0);
    (failed && written).then_some(drawn.output)
}

/// The last `error:` line of a run's human report, for a submission no spec ran of.
fn last_error_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "))
        .map(str::to_owned)
}
