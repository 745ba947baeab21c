//! `dlqspec smoke`: try an external implementation quickly and say what is wrong with it.

use std::io::Write;

use crate::commands::cli::SmokeArgs;
use crate::external::launch::Target;
use crate::external::smoke;
use crate::report::Palette;
use crate::run::exit;

pub(crate) fn smoke(args: SmokeArgs, palette: Palette) -> i32 {
    if let Some(code) = super::messages::refuse_unrunnable(&args.implementation, &palette) {
        return code;
    }
    let Target::External(launch) = args.implementation.with_limits(args.limits.limits()) else {
        return super::messages::usage_error(
            "smoke tries an external implementation (python:FILE, node:FILE or cmd:'COMMAND LINE'); the built-in one needs no smoke test",
            &palette,
        );
    };
    let report = smoke::smoke(launch, args.limits.timeout);
    let text = crate::report::smoke::smoke(&report, &palette);
    let _ = crate::report::sanitize::stdout().write_all(text.as_bytes());
    if report.ok() {
        return exit::PASSED;
    }
    // A failure may be the exercise's own: the reference refusing the first draws the smoke
    // test makes its instance from. Asked only then, as it starts the reference.
    let denied: Vec<crate::text::spec_error::SpecError> = crate::contracts::all()
        .into_iter()
        .flat_map(|contract| contract.reference_errors())
        .collect();
    if denied.is_empty() {
        exit::FAILED
    } else {
        super::messages::spec_errors(&denied, &palette);
        exit::SPEC_OR_USAGE_ERROR
    }
}
