//! `dlqspec new`: write a commented starter spec.

use crate::authoring::starter;
use crate::commands::cli::NewArgs;
use std::io::Write;

use crate::report::Palette;
use crate::report::sanitize;
use crate::run::exit;

pub(crate) fn new_spec(args: NewArgs, palette: Palette) -> i32 {
    match starter::create(&args.path, args.contract.as_deref()) {
        Ok(created) => {
            let path = sanitize::line(&created.path);
            let _ = writeln!(
                sanitize::stdout(),
                "wrote {path}: a {} starter spec that passes as written\nnext: dlqspec explain {path}, change it, then dlqspec run {path}",
                created.contract
            );
            exit::PASSED
        }
        Err(error) => super::messages::usage_error(&error.to_string(), &palette),
    }
}
