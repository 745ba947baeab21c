//! Exercise folders for a command: those its paths belong to or hold, and those `--exercise`
//! names, each read and registered as a contract before any spec is loaded, its reference and
//! known mistakes started as programs under the same box as any implementation.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::commands::cli::{Cli, Command};
use crate::external::launch::{Target, Unrunnable};
use crate::report::{Palette, render};
use crate::text::spec_error::SpecError;

/// How long an exercise's own programs (its reference, its known mistakes) may take to answer
/// one request: the author's code, given more than a student's default.
const PROGRAM_TIMEOUT: Duration = Duration::from_secs(10);

/// The folder `run` reads when it names none (`--help` says so).
const DEFAULT_SUITE: &str = "specs";

/// Registers the exercises of `cli`'s paths and its `--exercise` folders; the broken ones'
/// errors, each at its `path:line:col`, in one string, when there are any.
pub(crate) fn register(cli: &Cli, palette: &Palette) -> Result<(), String> {
    let paths: Vec<PathBuf> = cli.command.paths();
    let mut folders = crate::load::discover::exercise_folders(&paths);
    for named in &cli.exercise {
        if !named.join("exercise.yaml").is_file() {
            return Err(format!(
                "--exercise {}: no exercise.yaml in that folder (an exercise folder holds exercise.yaml, its reference solution and specs/)",
                named.display()
            ));
        }
        folders.push(named.clone());
    }
    let mut broken = register_folders(&folders);
    // A reference that does not load fails every spec, rule and case alike: told once, first,
    // and nothing after it is run.
    if broken.is_empty() && judges_on_references(&cli.command) {
        let mut probed: Vec<PathBuf> = Vec::new();
        for folder in &folders {
            let Some(folder) = crate::contracts::exercise_folder_of(folder) else {
                continue;
            };
            if probed.contains(&folder) {
                continue;
            }
            broken.extend(crate::contracts::registry::exercise_reference_error(
                &folder,
            ));
            probed.push(folder);
        }
    }
    // The project's suite, the one `run` reads by default, is served too: its exercise folders
    // under `specs/` (where there is one) answer a spec anywhere that names them, and a command
    // that names no spec (`explore`, `smoke`, `schema`). A broken one there is told only to a
    // command that reads it (above): it must not stop a run of other specs.
    if Path::new(DEFAULT_SUITE).is_dir() {
        let _ = register_found(&[PathBuf::from(DEFAULT_SUITE)]);
    }
    if broken.is_empty() {
        return Ok(());
    }
    Err(broken
        .iter()
        .map(|error| render::spec_error(error, palette))
        .collect())
}

/// Whether `command` runs an exercise's reference: every command but those that only describe
/// (the schema, type stubs, completions, the manual) and `watch`, which keeps watching
/// whatever its first run finds.
fn judges_on_references(command: &Command) -> bool {
    !matches!(
        command,
        Command::Schema
            | Command::Types(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Init { .. }
            | Command::Watch(_)
    )
}

/// Registers the exercise folders at or below `paths` (as a command's paths find them), their
/// programs started within the default limits and box; the errors of the broken ones. For a
/// program that runs specs in process, as the benchmarks do, what `register` is to a command.
pub fn register_found(paths: &[PathBuf]) -> Vec<SpecError> {
    register_folders(&crate::load::discover::exercise_folders(paths))
}

fn register_folders(folders: &[PathBuf]) -> Vec<SpecError> {
    let launcher: Arc<crate::contracts::Launcher> = Arc::new(launch);
    folders
        .iter()
        .filter_map(|folder| {
            crate::contracts::register_exercise(folder, Arc::clone(&launcher)).err()
        })
        .collect()
}

/// Starts an exercise's program (`--impl` form), within the default limits and box.
fn launch(target: &str) -> Box<dyn crate::model::implementation::Implementation + Send> {
    let target = crate::external::launch::parse(target).unwrap_or_else(|why| {
        Target::Unrunnable(Unrunnable {
            label: target.to_owned(),
            teacher: why.clone(),
            student: why,
            machine: false,
        })
    });
    target.instantiate(PROGRAM_TIMEOUT)
}
