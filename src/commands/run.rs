//! `dlqspec run`: run specs against an implementation and report.

use crate::cli::RunArgs;
use crate::external::launch::Target;
use crate::implementation::Implementation;
use crate::known_failures::KnownFailures;
use crate::report::{Outputs, Palette, ReportFormat, ReportOptions, exercism, gradescope};
use crate::runner::{self, RunConfig};

pub fn run(args: RunArgs, palette: Palette) -> i32 {
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
    // Each job of an external implementation is a process: starting a second one costs more
    // than the bundled suite takes to run through the first (measured: docs/protocol.md).
    let jobs = match target {
        Target::External(_) => args.jobs.or(std::num::NonZeroUsize::new(1)),
        Target::Builtin => args.jobs,
    };
    let config = RunConfig {
        paths: args.specs.paths,
        filters: args.filter,
        partition: args.partition,
        jobs,
        fail_fast: args.fail_fast,
        known_failures,
    };
    let options = ReportOptions {
        format: args.format,
        output: args.output,
        palette,
        show_passes: !args.quiet,
        show_output: args.show_output,
        github_annotations: ReportOptions::in_github_actions(),
        progress: ReportOptions::progress_wanted(),
    };
    let timeout = args.target.timeout.per_request;
    let label = target.label().to_owned();
    let factory = || -> Box<dyn Implementation + Send> { target.instantiate(timeout) };
    let usage_error = |message: String| super::dispatch::usage_error(&message, &palette);
    let mut outputs = match Outputs::open(&options) {
        Ok(outputs) => outputs,
        Err(error) => return usage_error(error.to_string()),
    };
    let summary = match runner::run(&config, &factory, outputs.reporter()) {
        Ok(summary) => summary,
        Err(error) if options.format.is_autograder() => {
            // An autograder reads its results file whatever happened: it says why nothing ran.
            let message = error.to_string();
            let text = match options.format {
                ReportFormat::Exercism => exercism::aborted(&message, &label),
                _ => gradescope::aborted(&message),
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
