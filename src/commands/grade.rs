//! `dlqspec grade`: grade many submissions (or a deterministic share of them), each by
//! `dlqspec run` in a process of its own within a wall-clock budget, and write a report per
//! submission and a summary; or merge the output folders of shards into one summary. The
//! grading is `run::grading`'s; this tells it on the terminal.

use std::io::Write;
use std::path::Path;

use crate::commands::cli::{GradeArgs, SandboxChoice};
use crate::external::zygote::Zygote;
use crate::model::language::Language;
use crate::report::progress::{DelayedBar, suspended};
use crate::report::{Palette, grade_suite, grade_summary, sanitize};
use crate::run::grading::regrade::{self, Against};
use crate::run::grading::row::{self, Graded};
use crate::run::grading::submission::{Grader, submission_language};
use crate::run::grading::suite::{About, reference_suite};
use crate::run::grading::{class, merge, outputs, pictures};
use crate::text::listing::count;

pub(crate) fn grade(args: GradeArgs, palette: Palette) -> i32 {
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
    let earlier = match regrade::earlier(args.against.as_deref(), &args.output) {
        Ok(earlier) => earlier,
        Err(why) => return usage_error(why),
    };
    // The suite is judged before any student is: a broken spec would be scored against them.
    let suite = match reference_suite(&args.specs) {
        Ok(suite) => suite,
        Err(refused) => return usage_error(grade_suite::refused(&refused)),
    };
    let submissions = class::members(&args.submissions, &args.output);
    if let Err(error) = std::fs::create_dir_all(&args.output) {
        return usage_error(format!("cannot create {}: {error}", args.output.display()));
    }
    // Named over the whole class, so every shard gives each submission the same name.
    let names = class::report_names(&submissions);
    let chosen = class::share(&submissions, args.partition.as_ref());
    if let Some(partition) = &args.partition
        && chosen.is_empty()
    {
        let _ = writeln!(
            sanitize::stderr(),
            "note: share {}/{} of --partition holds none of the {} (there are more shares than submissions)",
            partition.index,
            partition.count,
            count(submissions.len(), "submission")
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
    let written_in =
        |i: usize, language: Language| submission_language(&submissions[i]) == Some(language);
    let any = |language: Language| chosen.iter().any(|&i| written_in(i, language));
    // pyenv's shim is a shell script that costs more than the interpreter it starts: it is
    // asked once which interpreter that is, and every run starts that one.
    let python = any(Language::Python)
        .then(crate::external::launch::pyenv_interpreter)
        .flatten();
    let sandboxed = args.limits.sandbox == SandboxChoice::On;
    // Every run's boxes are made in one folder of grade's own, warm or cold: the only place
    // the zygote may write.
    let boxes = sandboxed
        .then(crate::external::sandbox::BoxesFolder::make)
        .and_then(Result::ok);
    let grader = Grader {
        program,
        specs: args.specs.clone(),
        budget: args.budget,
        limits: args.limits.to_args(),
        python,
        boxes: boxes.as_ref().map(|boxes| boxes.path().to_path_buf()),
        world: args.world.clone(),
        pictures: usize::from(args.pictures).min(pictures::MAX_PICTURES),
        // A JavaScript or TypeScript submission this machine cannot run (no Node.js, one too
        // old) is the grader's to fix: said once here, and its row is `ungraded`, never a 0.
        node_problem: any(Language::JavaScript)
            .then(crate::external::launch::node_problem)
            .flatten(),
    };
    if let Some(why) = &grader.node_problem {
        let count = chosen
            .iter()
            .filter(|&&i| written_in(i, Language::JavaScript))
            .count();
        super::messages::failure(
            &format!(
                "{} not graded (`ungraded`): {why}",
                match count {
                    1 => "1 JavaScript or TypeScript submission is".to_owned(),
                    n => format!("{n} JavaScript and TypeScript submissions are"),
                }
            ),
            &palette,
        );
    }
    let zygote = (!args.cold && sandboxed)
        .then(|| {
            let share = chosen.iter().map(|&i| submissions[i].as_path());
            warm_python(&grader, share, args.limits.processes.0)
        })
        .flatten();
    let handed = zygote.as_ref().map(Zygote::socket);
    let graded = crate::run::parallel::run_each(chosen.len(), jobs, &|k| {
        let i = chosen[k];
        let (row, reports) = grader.grade(&submissions[i], &names[i], &suite, i, handed.as_ref());
        // Through the guarded stderr: a submission's name is no workflow command.
        suspended(bar, || {
            let _ = writeln!(
                sanitize::stderr(),
                "{} {}",
                sanitize::line(row.status.as_str()),
                sanitize::line(&row.submission)
            );
        });
        if let Some(bar) = bar {
            bar.inc(1);
            bar.set_message(sanitize::line(&row.submission).into_owned());
        }
        (row, reports)
    });
    // Every run is over: the zygote and whatever it still has go before any file is written.
    drop(zygote);
    if let Some(progress) = &mut progress {
        progress.finish();
    }
    // Only now, when every run and everything it started is over, are the class's files
    // written, each by grade itself: no submission runs while they are put in place.
    let rows = outputs::write_class(&args.output, graded);
    let partition = args.partition.map(|p| format!("{}/{}", p.index, p.count));
    let about = About::now(&args.specs, &suite);
    let against = earlier.map(|earlier| earlier.against(&rows, Some(&about)));
    let summaries =
        grade_summary::summaries(&rows, partition.as_deref(), Some(&about), against.as_ref());
    if let Err(why) = outputs::write_summaries(&args.output, &summaries) {
        return usage_error(why);
    }
    let share = match &partition {
        Some(share) => format!(
            " (share {share} of {})",
            count(submissions.len(), "submission")
        ),
        None => String::new(),
    };
    let _ = writeln!(
        sanitize::stdout(),
        "{} graded{share}: {}; summary in {}",
        count(rows.len(), "submission"),
        grade_summary::counts(&rows),
        sanitize::line(&args.output.join("summary.html").to_string_lossy())
    );
    // The class view: each rule's share of the class passing, and the most common failure
    // causes, as summary.html shows them.
    let _ = write!(
        sanitize::stdout(),
        "{}{}",
        grade_summary::rule_table(&rows),
        grade_summary::cause_table(&rows)
    );
    tell_regrade(&rows, against.as_ref());
    row::exit_code(&rows)
}

/// The zygote that starts this class's Python submissions (among `submissions`) warm, when it
/// can start; else every submission starts cold, and a note says why.
fn warm_python<'a>(
    grader: &Grader,
    submissions: impl IntoIterator<Item = &'a Path>,
    processes: Option<u64>,
) -> Option<Zygote> {
    let started = crate::external::zygote::for_class(
        submissions,
        grader.python.as_deref(),
        grader.boxes.is_some(),
        processes,
    );
    match started {
        Ok(zygote) => zygote,
        Err(why) => {
            let _ = writeln!(
                sanitize::stderr(),
                "note: each Python submission starts an interpreter of its own, which is slower; the grades are the same ({}); --cold asks for that, without this note",
                sanitize::line(&why)
            );
            None
        }
    }
}

/// The regrade on stdout, when `--against` asked for one.
fn tell_regrade(rows: &[Graded], against: Option<&Against>) {
    if let Some(against) = against {
        let _ = write!(
            sanitize::stdout(),
            "{}",
            grade_summary::against_text(rows, against)
        );
    }
}

/// `grade --merge DIR...`: the shards' rows as one class, their reports copied beside the
/// merged summary, so that its links work wherever the folder goes.
fn merge(args: &GradeArgs, palette: &Palette) -> i32 {
    let usage_error = |message: String| super::messages::usage_error(&message, palette);
    let shards = match merge::read_shards(&args.merge) {
        Ok(shards) => shards,
        Err(why) => return usage_error(why),
    };
    let shard_count = shards.rows.len();
    let earlier = match regrade::earlier(args.against.as_deref(), &args.output) {
        Ok(earlier) => earlier,
        Err(why) => return usage_error(why),
    };
    let rows = match merge::merge(shards.rows) {
        Ok(rows) => rows,
        Err(why) => return usage_error(why),
    };
    let about = merge::merged_about(&shards.abouts);
    let against = earlier.map(|earlier| earlier.against(&rows, about.as_ref()));
    if let Err(error) = std::fs::create_dir_all(&args.output) {
        return usage_error(format!("cannot create {}: {error}", args.output.display()));
    }
    for row in &rows {
        if let Err(why) = outputs::copy_reports(&args.output, row, &shards.sources[&row.name]) {
            return usage_error(why);
        }
    }
    if about.is_none() && shards.abouts.iter().any(Option::is_some) {
        let _ = writeln!(
            sanitize::stderr(),
            "note: the shards do not say the same suite (its folders and digest in their summary.json), so the merged page names none: were they graded against the same specs?"
        );
    }
    let summaries = grade_summary::summaries(&rows, None, about.as_ref(), against.as_ref());
    if let Err(why) = outputs::write_summaries(&args.output, &summaries) {
        return usage_error(why);
    }
    let _ = writeln!(
        sanitize::stdout(),
        "{} merged from {}: {}; summary in {}",
        count(rows.len(), "submission"),
        count(shard_count, "shard"),
        grade_summary::counts(&rows),
        sanitize::line(&args.output.join("summary.html").to_string_lossy())
    );
    tell_regrade(&rows, against.as_ref());
    row::exit_code(&rows)
}
