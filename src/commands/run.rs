//! `dlqspec run`: run specs against an implementation and report.

use crate::builtin::Builtin;
use crate::cli::RunArgs;
use crate::report::{HumanReporter, Palette};
use crate::runner::{self, RunConfig};

pub fn run(args: RunArgs, palette: Palette) -> i32 {
    let config = RunConfig {
        paths: args.paths,
        filters: args.filter,
    };
    let mut implementation = Builtin::new();
    let mut reporter = HumanReporter::new(std::io::stdout().lock(), palette);
    reporter.show_passes = !args.quiet;
    match runner::run(&config, &mut implementation, &mut reporter) {
        Ok(summary) => summary.exit_code(),
        Err(error) => super::dispatch::usage_error(&error.to_string(), &palette),
    }
}
