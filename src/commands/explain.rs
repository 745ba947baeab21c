//! `dlqspec explain`: tell a scenario step by step, on the built-in implementation or `--impl`,
//! as text or as a picture (`--format html`), to stdout or `--output FILE`.

use std::io::Write;

use crate::authoring::explain;
use crate::commands::cli::{ExplainArgs, ExplainFormat};
use crate::external::launch::Target;
use crate::load::discover;
use crate::load::loader;
use crate::model::outcome::Outcome;
use crate::report::{Palette, render};
use crate::run::exit;

pub(crate) fn explain(args: ExplainArgs, palette: Palette) -> i32 {
    // Before any implementation starts: the page goes out through stdout or --output, which
    // `grade` keeps as a submission's picture; no implementation may find or write them.
    crate::external::hardening::harden_own_process();
    let mut out = crate::report::sanitize::stdout();
    if args.spec.is_dir() {
        let message = format!(
            "{}: a folder; explain tells one spec file (`dlqspec run` takes folders)",
            crate::text::source::display_path(&args.spec)
        );
        return super::messages::usage_error(&message, &palette);
    }
    // The file named, read as discovery reads any: not through a link out of its folder.
    let entry = match discover::discover(std::slice::from_ref(&args.spec)) {
        Ok(mut discovery) if discovery.entries.len() == 1 => discovery.entries.remove(0),
        Ok(_) => return exit::SPEC_OR_USAGE_ERROR,
        Err(error) => return super::messages::usage_error(&error.to_string(), &palette),
    };
    let spec = match loader::load_entry(&entry) {
        Ok(spec) => spec,
        Err(error) => {
            let _ = out.write_all(render::spec_error(&error, &palette).as_bytes());
            return exit::SPEC_OR_USAGE_ERROR;
        }
    };
    // The file is made ready before the run (an unwritable --output fails before any work),
    // and put in place whole, by the atomic writer every --output goes through.
    let file = match &args.output {
        Some(path) => match crate::files::atomic_file::AtomicFile::create(path) {
            Ok(file) => Some((path, file)),
            Err(error) => {
                let message = format!(
                    "cannot write {}: {error}",
                    crate::text::source::display_path(path)
                );
                return super::messages::usage_error(&message, &palette);
            }
        },
        None => None,
    };
    let target = args
        .target
        .implementation
        .unwrap_or(Target::Builtin)
        .with_limits(args.target.limits.limits());
    if let Some(code) = super::messages::refuse_unrunnable(&target, &palette) {
        return code;
    }
    super::sandbox_warnings::warn_once(&target);
    let world = match super::world::chosen(args.world) {
        Ok(world) => world,
        Err(error) => return super::messages::usage_error(&error, &palette),
    };
    let prepared = [(spec.file.display_path(), Ok(spec))];
    let told = match crate::run::runner::prepare_world(&world, &prepared) {
        Ok(told) => told,
        Err(fault) => {
            super::messages::failure(&fault, &palette);
            return exit::SPEC_OR_USAGE_ERROR;
        }
    };
    let [(_, Ok(spec))] = prepared else {
        unreachable!("the spec was put there loaded")
    };
    let mut implementation = target.instantiate(args.target.limits.timeout);
    let explanation = explain::explain_in(&spec, implementation.as_mut(), &world, told);
    let told = match args.format {
        ExplainFormat::Html => explain::html(&explanation),
        // A file is read later, elsewhere: no colour codes in it.
        ExplainFormat::Text if file.is_some() => explain::render(&explanation, &Palette::plain()),
        ExplainFormat::Text => explain::render(&explanation, &palette),
    };
    match file {
        Some((path, file)) => {
            if let Err(error) = file.commit(told.as_bytes()) {
                let message = format!(
                    "cannot write {}: {error}",
                    crate::text::source::display_path(path)
                );
                return super::messages::usage_error(&message, &palette);
            }
        }
        None => {
            let _ = out.write_all(told.as_bytes());
        }
    }
    match explanation.outcome {
        Outcome::Passed
        | Outcome::Skipped(_)
        | Outcome::NotAttempted(_)
        | Outcome::ExpectedFailure(_)
        | Outcome::Divergence(_) => exit::PASSED,
        Outcome::Mismatch(_) | Outcome::Errored(_) | Outcome::Stale(_) => exit::FAILED,
        Outcome::SpecError(_) | Outcome::WorldFault(_) => exit::SPEC_OR_USAGE_ERROR,
    }
}
