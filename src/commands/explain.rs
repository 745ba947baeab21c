//! `dlqspec explain`: tell a scenario step by step, on the built-in implementation or `--impl`.

use std::io::Write;

use crate::authoring::explain;
use crate::cli::ExplainArgs;
use crate::external::launch::Target;
use crate::loader;
use crate::outcome::Outcome;
use crate::report::{Palette, render};
use crate::runner::exit;

pub fn explain(args: ExplainArgs, palette: Palette) -> i32 {
    let mut out = crate::report::sanitize::stdout();
    let spec = match loader::load_path(&args.spec) {
        Ok(spec) => spec,
        Err(error) => {
            let _ = out.write_all(render::spec_error(&error, &palette).as_bytes());
            return exit::SPEC_OR_USAGE_ERROR;
        }
    };
    let target = args.target.implementation.unwrap_or(Target::Builtin);
    let mut implementation = target.instantiate(args.target.timeout.per_request);
    let explanation = explain::explain(&spec, implementation.as_mut());
    let _ = out.write_all(explain::render(&explanation, &palette).as_bytes());
    match explanation.outcome {
        Outcome::Passed | Outcome::Skipped(_) | Outcome::ExpectedFailure(_) => exit::PASSED,
        Outcome::Mismatch(_) | Outcome::Errored(_) | Outcome::Stale(_) => exit::FAILED,
        Outcome::SpecError(_) => exit::SPEC_OR_USAGE_ERROR,
    }
}
