//! `dlqspec run`: run specs against an implementation and report.

use crate::commands::cli::RunArgs;
use crate::external::launch::Target;
use crate::model::implementation::Implementation;
use crate::report::{Outputs, Palette, ReportFormat, ReportOptions, exercism, gradescope};
use crate::run::events::{Event, Reporter};
use crate::run::exit;
use crate::run::known_failures::KnownFailures;
use crate::run::rerun::{self, Rerun, RerunPlan, RunResult};
use crate::run::runner::{self, RunConfig};

#[expect(
    clippy::disallowed_macros,
    reason = "prints: notes on the run are told on stderr"
)]
pub(crate) fn run(args: RunArgs, palette: Palette) -> i32 {
    // The budget counts from here: loading the specs spends it too.
    let deadline = args.budget.map(|budget| std::time::Instant::now() + budget);
    // Before any implementation starts: what this run writes its verdict through (its
    // --output, the pipe `grade` handed it) is no implementation's to find or inherit.
    crate::external::hardening::harden_own_process();
    if let Some(hint) = no_specs_here(&args.specs.paths) {
        return super::messages::usage_error(&hint, &palette);
    }
    let known_failures = match args.known_failures.as_deref().map(KnownFailures::load) {
        None => None,
        Some(Ok(list)) => Some(list),
        Some(Err(error)) => {
            let text = crate::report::render::spec_error(&error, &palette);
            let _ =
                std::io::Write::write_all(&mut crate::report::sanitize::stderr(), text.as_bytes());
            return exit::SPEC_OR_USAGE_ERROR;
        }
    };
    let target = args
        .target
        .implementation
        .unwrap_or(Target::Builtin)
        .with_limits(args.target.limits.limits());
    super::sandbox_warnings::warn_once(&target);
    // Each job of an external implementation is a process: starting a second one costs more
    // than the bundled suite takes to run through the first (measured: docs/protocol.md).
    let jobs = match target {
        Target::External(_) | Target::Unrunnable(_) => args.jobs.or(std::num::NonZeroUsize::new(1)),
        Target::Builtin => args.jobs,
    };
    let world = match super::world::chosen(args.world) {
        Ok(world) => world,
        Err(error) => return super::messages::usage_error(&error, &palette),
    };
    let authoring = &args.authoring;
    let cache = rerun::cache_dir();
    let (failed_before, warning) = rerun::load(&cache);
    if let Some(warning) = warning {
        super::messages::warning(&warning, &palette);
    }
    let mode = match (authoring.last_failed, authoring.failed_first) {
        (true, _) => Rerun::LastFailed,
        (false, true) => Rerun::FailedFirst,
        (false, false) => Rerun::All,
    };
    let config = RunConfig {
        paths: args.specs.paths,
        filters: args.filter,
        partition: args.partition,
        jobs,
        fail_fast: args.fail_fast,
        known_failures,
        rerun: RerunPlan {
            mode,
            failed: failed_before.clone(),
        },
        deadline,
        last_in_process: true,
        skip_causes: args.no_causes,
        world,
    };
    if authoring.list {
        return super::list::list(&config, args.format.into(), &palette);
    }
    let options = ReportOptions {
        format: args.format.into(),
        output: args.output,
        palette,
        show_passes: !args.shown.quiet,
        show_output: args.shown.show_output,
        conceal_hidden: args.conceal_hidden,
        github: ReportOptions::github_actions(),
        progress: ReportOptions::progress_wanted(),
        slow: authoring.slow,
        durations: authoring.durations.unwrap_or(0),
    };
    let timeout = args.target.limits.timeout;
    let label = target.label().to_owned();
    let factory = || -> Box<dyn Implementation + Send> { target.instantiate(timeout) };
    let usage_error = |message: String| super::messages::usage_error(&message, &palette);
    let mut outputs = match Outputs::open(&options) {
        Ok(outputs) => outputs,
        Err(error) => return usage_error(error.to_string()),
    };
    if let Some(unrunnable) = target.unrunnable() {
        return cannot_run(unrunnable, outputs, options.format, &label, &palette);
    }
    let mut recording = Recording {
        inner: outputs.reporter(),
        ran: Vec::new(),
    };
    let result = runner::run(&config, &factory, &mut recording);
    // Only dlqspec writes the verdict: every process an implementation started, wherever it
    // went, is ended and reaped before a report is put in place.
    crate::external::children::end_all();
    let ran = recording.ran;
    let summary = match result {
        Ok(summary) => summary,
        Err(error) if options.format.is_autograder() => {
            // An autograder reads its results file whatever happened: it says why nothing ran.
            let message = error.to_string();
            let text = match options.format {
                ReportFormat::Exercism => exercism::aborted(&message, &label),
                _ => gradescope::aborted(&message, &label),
            };
            super::messages::failure(&message, &palette);
            if let Err(error) = outputs.finish_with(&text) {
                return usage_error(error.to_string());
            }
            return error.exit_code();
        }
        Err(error) => {
            // Dropped unwritten: the progress bar goes, and an earlier --output file stays.
            drop(outputs);
            super::messages::failure(&error.to_string(), &palette);
            return error.exit_code();
        }
    };
    let failed_now = rerun::after_run(&failed_before, &ran);
    if failed_now != failed_before
        && let Err(error) = rerun::save(&cache, &failed_now)
    {
        let message = format!("the failed specs of this run are not recorded: {error}");
        super::messages::warning(&message, &palette);
    }
    for note in &summary.notes {
        eprintln!("note: {}", crate::report::sanitize::text(note));
    }
    if let Some(fault) = &summary.world_fault {
        super::messages::failure(fault, &palette);
    }
    if summary.total() == 0
        && let Some(partition) = config.partition
    {
        eprintln!(
            "note: share {}/{} of --partition holds none of the selected specs (there are more shares than specs)",
            partition.index, partition.count
        );
    }
    match outputs.finish() {
        Ok(()) => summary.exit_code(),
        Err(error) => usage_error(error.to_string()),
    }
}

/// For a run of `./specs` (the default) where there is none: where dlqspec looked, and the
/// two ways on.
fn no_specs_here(paths: &[std::path::PathBuf]) -> Option<String> {
    let [only] = paths else {
        return None;
    };
    (only == std::path::Path::new("specs") && std::fs::symlink_metadata(only).is_err()).then(|| {
        let here = std::env::current_dir()
            .map(|dir| format!(" in {}", dir.display()))
            .unwrap_or_default();
        format!(
            "no specs folder here (`dlqspec run` runs ./specs, and there is none{here}): run it in the course folder that holds specs/, or name the specs: `dlqspec run path/to/specs`"
        )
    })
}

/// A run of an implementation that cannot run: said once on stderr, and in an autograder's
/// results file in the student's words. A submission without a solution file fails (exit 1
/// there); a machine that cannot run it is the grader's to fix (exit 2, as a usage error).
fn cannot_run(
    unrunnable: &crate::external::launch::Unrunnable,
    outputs: Outputs,
    format: ReportFormat,
    label: &str,
    palette: &Palette,
) -> i32 {
    super::messages::failure(&unrunnable.teacher, palette);
    if !format.is_autograder() {
        drop(outputs);
        return exit::SPEC_OR_USAGE_ERROR;
    }
    let text = match format {
        ReportFormat::Exercism => exercism::aborted(&unrunnable.student, label),
        _ => gradescope::aborted(&unrunnable.student, label),
    };
    if let Err(error) = outputs.finish_with(&text) {
        return super::messages::usage_error(&error.to_string(), palette);
    }
    if unrunnable.machine {
        exit::SPEC_OR_USAGE_ERROR
    } else {
        exit::FAILED
    }
}

/// Passes every event on, and keeps what each spec's outcome means for `--last-failed`.
struct Recording<'a> {
    inner: &'a mut dyn Reporter,
    ran: Vec<(String, RunResult)>,
}

impl Reporter for Recording<'_> {
    fn event(&mut self, event: &Event) {
        if let Event::Finished(report) = event {
            use crate::model::outcome::OutcomeKind;
            let result = match report.outcome.kind() {
                OutcomeKind::Skipped => RunResult::NotRun,
                _ if report.outcome.is_failure() => RunResult::Failed,
                _ => RunResult::Passed,
            };
            self.ran.push((report.path.clone(), result));
        }
        self.inner.event(event);
    }
}
