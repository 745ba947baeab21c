//! `dlqspec new`: write a commented starter spec.

use crate::authoring::starter;
use crate::commands::cli::NewArgs;
use std::io::Write;

use crate::contracts::registry::reference_called;
use crate::model::outcome::Outcome;
use crate::report::sanitize;
use crate::report::{Palette, render};
use crate::run::exit;

pub(crate) fn new_spec(args: NewArgs, palette: Palette) -> i32 {
    match starter::create(&args.path, args.contract.as_deref()) {
        Ok(created) if matches!(created.outcome, Outcome::Passed) => {
            let path = sanitize::line(&created.path);
            let _ = writeln!(
                sanitize::stdout(),
                "wrote {path}: a {} starter spec that passes as written\nnext: dlqspec explain {path}, change it, then dlqspec run {path}",
                created.contract
            );
            exit::PASSED
        }
        // The reference does not pass it: said, with what it did, never "passes".
        Ok(created) => {
            let path = sanitize::line(&created.path);
            let reference = reference_called(created.contract, "the built-in reference");
            let _ = write!(
                sanitize::stdout(),
                "wrote {path}: a {} starter spec, but {} does not pass it as written:\n{}next: dlqspec explain {path} tells the reference's run; change the spec (or the reference), then dlqspec run {path}\n",
                created.contract,
                sanitize::line(&reference),
                indent(&render::details(&created.path, &created.outcome)),
            );
            exit::FAILED
        }
        Err(error) => super::messages::usage_error(&error.to_string(), &palette),
    }
}

/// `text` with each line indented, as a run shows a spec's details.
fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}
