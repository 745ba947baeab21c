//! The world a command's specs act on when `--world` is not given: `$DLQSPEC_WORLD`, which
//! `grade` hands each run (an address may hold a password, which a command line shows to
//! every user of the machine), else the fake.

use crate::model::world::{WORLD_VARIABLE as VARIABLE, WorldChoice};

/// The world `$DLQSPEC_WORLD` names, the fake when it is unset or empty; `Err` says what is
/// wrong with it.
pub(crate) fn from_env() -> Result<WorldChoice, String> {
    match std::env::var(VARIABLE) {
        Ok(text) if !text.is_empty() => {
            WorldChoice::parse(&text).map_err(|error| format!("${VARIABLE}: {error}"))
        }
        _ => Ok(WorldChoice::Fake),
    }
}

/// `--world` if given, else `$DLQSPEC_WORLD`, else the fake.
pub(crate) fn chosen(given: Option<WorldChoice>) -> Result<WorldChoice, String> {
    match given {
        Some(world) => Ok(world),
        None => from_env(),
    }
}
