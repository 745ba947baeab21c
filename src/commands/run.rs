//! `dlqspec run`: run specs against an implementation and report.

use crate::commands::cli::RunArgs;
use crate::external::launch::Target;
use crate::model::implementation::Implementation;
use crate::report::{Outputs, Palette, ReportFormat, ReportOptions, exercism, gradescope};
use crate::run::known_failures::KnownFailures;
use crate::run::rerun::{self, Rerun, RerunPlan, RunResult};
use crate::run::runner::{self, Event, Reporter, RunConfig};

pub fn run(args: RunArgs, palette: Palette) -> i32 {
    // The budget counts from here: loading the specs spends it too.
    let deadline = args.budget.map(|budget| std::time::Instant::now() + budget);
    // Before any implementation starts: what this run writes its verdict through (its
    // --output, the pipe `grade` handed it) is no implementation's to find or inherit.
    crate::external::seal::seal();
    let known_failures = match args.known_failures.as_deref().map(KnownFailures::load) {
        None => None,
        Some(Ok(list)) => Some(list),
        Some(Err(error)) => {
            let text = crate::report::render::spec_error(&error, &palette);
            let _ =
                std::io::Write::write_all(&mut crate::report::sanitize::stderr(), text.as_bytes());
            return runner::exit::SPEC_OR_USAGE_ERROR;
        }
    };
    let target = args
        .target
        .implementation
        .unwrap_or(Target::Builtin)
        .with_limits(args.target.limits.limits());
    super::box_note::tell(&target);
    // Each job of an external implementation is a process: starting a second one costs more
    // than the bundled suite takes to run through the first (measured: docs/protocol.md).
    let jobs = match target {
        Target::External(_) => args.jobs.or(std::num::NonZeroUsize::new(1)),
        Target::Builtin => args.jobs,
    };
    let authoring = &args.authoring;
    let cache = rerun::cache_dir();
    let (failed_before, warning) = rerun::load(&cache);
    if let Some(warning) = warning {
        super::dispatch::warning(&warning, &palette);
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
    };
    if authoring.list {
        return super::list::list(&config, args.format, &palette);
    }
    let options = ReportOptions {
        format: args.format,
        output: args.output,
        palette,
        show_passes: !args.shown.quiet,
        show_output: args.shown.show_output,
        conceal_hidden: args.conceal_hidden,
        github_annotations: ReportOptions::in_github_actions(),
        progress: ReportOptions::progress_wanted(),
        slow: authoring.slow,
        durations: authoring.durations.unwrap_or(0),
    };
    let timeout = args.target.timeout.per_request;
    let label = target.label().to_owned();
    let factory = || -> Box<dyn Implementation + Send> { target.instantiate(timeout) };
    let usage_error = |message: String| super::dispatch::usage_error(&message, &palette);
    let mut outputs = match Outputs::open(&options) {
        Ok(outputs) => outputs,
        Err(error) => return usage_error(error.to_string()),
    };
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
            super::dispatch::failure(&message, &palette);
            if let Err(error) = outputs.finish_with(&text) {
                return usage_error(error.to_string());
            }
            return error.exit_code();
        }
        Err(error) => {
            // Dropped unwritten: the progress bar goes, and an earlier --output file stays.
            drop(outputs);
            super::dispatch::failure(&error.to_string(), &palette);
            return error.exit_code();
        }
    };
    let failed_now = rerun::after_run(&failed_before, &ran);
    if failed_now != failed_before
        && let Err(error) = rerun::save(&cache, &failed_now)
    {
        let message = format!("the failed specs of this run are not recorded: {error}");
        super::dispatch::warning(&message, &palette);
    }
    for note in &summary.notes {
        eprintln!("note: {}", crate::report::sanitize::text(note));
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

/// Whether `format` can list specs (`run --list`): human and JSON lines can.
pub fn lists(format: ReportFormat) -> bool {
    matches!(format, ReportFormat::Human | ReportFormat::Json)
}
