//! `dlqspec lint`: flag spec smells, judged on the built-in implementation.

use std::io::Write;

use crate::authoring::lint;
use crate::commands::cli::LintArgs;
use crate::contracts::builtin::Builtin;
use crate::report::Palette;
use crate::run::exit;

pub(crate) fn lint(args: LintArgs, palette: Palette) -> i32 {
    let options = lint::LintOptions {
        allow: args.allow,
        coverage: args.coverage,
    };
    let report = match lint::lint(&args.specs.paths, &options, &mut Builtin::new()) {
        Ok(report) => report,
        Err(error) => return super::messages::usage_error(&error.to_string(), &palette),
    };
    crate::report::render::warn_skipped(&report.skipped, &palette);
    let mut out = crate::report::sanitize::stdout();
    let _ = out.write_all(lint::render(&report, &palette).as_bytes());
    if !report.spec_errors.is_empty() || !report.not_judged.is_empty() {
        exit::SPEC_OR_USAGE_ERROR
    } else if !report.findings.is_empty() {
        exit::FAILED
    } else {
        exit::PASSED
    }
}
