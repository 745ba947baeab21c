//! `dlqspec run`: run specs against an implementation and report.

use crate::builtin::Builtin;
use crate::cli::RunArgs;
use crate::implementation::Implementation;
use crate::report::{Outputs, Palette, ReportOptions};
use crate::runner::{self, RunConfig};

pub fn run(args: RunArgs, palette: Palette) -> i32 {
    let config = RunConfig {
        paths: args.paths,
        filters: args.filter,
        partition: args.partition,
        jobs: args.jobs,
        fail_fast: args.fail_fast,
    };
    let options = ReportOptions {
        format: args.format,
        output: args.output,
        palette,
        show_passes: !args.quiet,
        github_annotations: ReportOptions::in_github_actions(),
        progress: ReportOptions::progress_wanted(),
    };
    let factory = || -> Box<dyn Implementation + Send> { Box::new(Builtin::new()) };
    let usage_error = |message: String| super::dispatch::usage_error(&message, &palette);
    let mut outputs = match Outputs::open(&options) {
        Ok(outputs) => outputs,
        Err(error) => return usage_error(error.to_string()),
    };
    let summary = match runner::run(&config, &factory, outputs.reporter()) {
        Ok(summary) => summary,
        Err(error) => {
            // Dropped unwritten: the progress bar goes, and an earlier --output file stays.
            drop(outputs);
            return usage_error(error.to_string());
        }
    };
    match outputs.finish() {
        Ok(()) => summary.exit_code(),
        Err(error) => usage_error(error.to_string()),
    }
}
