//! `dlqspec strength`: run a suite against every classic mistake of its contracts' catalogues.

use std::io::Write;

use crate::commands::cli::StrengthArgs;
use crate::report::Palette;
use crate::run::exit;
use crate::strength::{self, StrengthSettings};

pub(crate) fn strength(args: StrengthArgs, palette: Palette) -> i32 {
    let usage = |message: &str| super::messages::usage_error(message, &palette);
    if let Err(message) = super::explore::prepare_out(args.output.as_deref()) {
        return usage(&message);
    }
    let settings = StrengthSettings {
        paths: args.specs.paths,
        explore_cases: args.explore_cases,
        seed: args.seed,
    };
    let report = match strength::measure(&settings) {
        Ok(report) => report,
        Err(error) => return usage(&error.to_string()),
    };
    if report.specs == 0 {
        return usage("no spec selected: no spec file (.yaml, .yml) under the paths given");
    }
    let mut written = Vec::new();
    let mut unwritten = Vec::new();
    for verdict in report.contracts.iter().flat_map(|c| &c.mistakes) {
        let found =
            super::explore::write_finding(args.output.as_deref(), verdict.suggestion.as_ref());
        match found {
            Ok(Some(path)) => written.push((verdict.mistake.id.to_owned(), path)),
            Ok(None) => {}
            // The report still shows the suggestion; the other files are still written.
            Err(why) => unwritten.push(why),
        }
    }
    let text = crate::strength::render::strength(&report, &written, &palette);
    let _ = crate::report::sanitize::stdout().write_all(text.as_bytes());
    for why in &unwritten {
        super::messages::failure(why, &palette);
    }
    if !report.broken.is_empty() {
        exit::SPEC_OR_USAGE_ERROR
    } else if report.caught() == report.total() && report.total() > 0 && report.misnamed() == 0 {
        exit::PASSED
    } else {
        exit::FAILED
    }
}
