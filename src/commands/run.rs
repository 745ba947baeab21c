//! `dlqspec run`: run specs against an implementation and report.

use crate::cli::RunArgs;
use crate::external::launch::Target;
use crate::known_failures::KnownFailures;
use crate::report::{HumanReporter, Palette};
use crate::runner::{self, RunConfig};

pub fn run(args: RunArgs, palette: Palette) -> i32 {
    let known_failures = match args.known_failures.as_deref().map(KnownFailures::load) {
        None => None,
        Some(Ok(list)) => Some(list),
        Some(Err(error)) => {
            eprint!("{}", crate::report::render::spec_error(&error, &palette));
            return runner::exit::SPEC_OR_USAGE_ERROR;
        }
    };
    let config = RunConfig {
        paths: args.paths,
        filters: args.filter,
        known_failures,
    };
    let target = args.target.implementation.unwrap_or(Target::Builtin);
    let mut implementation = target.instantiate(args.target.timeout);
    let mut reporter = HumanReporter::new(std::io::stdout().lock(), palette);
    reporter.show_passes = !args.quiet;
    match runner::run(&config, implementation.as_mut(), &mut reporter) {
        Ok(summary) => summary.exit_code(),
        Err(error) => super::dispatch::usage_error(&error.to_string(), &palette),
    }
}
