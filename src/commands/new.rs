//! `dlqspec new`: write a commented starter spec.

use crate::authoring::starter;
use crate::cli::NewArgs;
use crate::report::Palette;
use crate::runner::exit;

pub fn new_spec(args: NewArgs, palette: Palette) -> i32 {
    match starter::create(&args.path, args.contract.as_deref()) {
        Ok(created) => {
            println!(
                "wrote {}: a {} starter spec that passes as written",
                created.path, created.contract
            );
            println!(
                "next: dlqspec explain {0}, change it, then dlqspec run {0}",
                created.path
            );
            exit::PASSED
        }
        Err(error) => super::dispatch::usage_error(&error.to_string(), &palette),
    }
}
