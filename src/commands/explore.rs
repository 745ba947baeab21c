//! `dlqspec explore`: generate scenarios until one diverges and shrink it to a spec, or run
//! one spec under every schedule of injected crashes.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::commands::cli::ExploreArgs;
use crate::contracts;
use crate::contracts::contract::{Contract, RunMode};
use crate::explore::crashes::{self, CrashPlan};
use crate::explore::render::ExploreReporter;
use crate::explore::{self, DEFAULT_CASES, DEFAULT_SHRINK_TRIES, ExploreSettings, Finding};
use crate::external::launch::Target;
use crate::generate::rng;
use crate::model::outcome::Outcome;
use crate::report::{Palette, ReportOptions, render};
use crate::run::exit;
use crate::text::source::display_path;
use crate::text::spec_error::SpecError;

pub(crate) fn explore(args: ExploreArgs, palette: Palette) -> i32 {
    if let Some(target) = &args.target.implementation
        && let Some(code) = super::messages::refuse_unrunnable(target, &palette)
    {
        return code;
    }
    match args.spec.clone() {
        Some(spec) => crash_schedules(args, &spec, palette),
        None => search(args, palette),
    }
}

fn search(args: ExploreArgs, palette: Palette) -> i32 {
    let usage = |message: &str| super::messages::usage_error(message, &palette);
    if args.crashes.is_some() {
        return usage(
            "--crashes runs the scenario of one spec under crash schedules: give the spec, e.g. `dlqspec explore specs/dlq-consumer/poison-cycle.yaml --crashes 2`",
        );
    }
    let chosen: Vec<&'static dyn Contract> = match &args.contract {
        None => crate::contracts::all(),
        Some(name) => match contracts::find(name) {
            Some(contract) => vec![contract],
            None => {
                return usage(&format!(
                    "unknown contract `{name}`; expected one of {}",
                    contracts::registry::names().join(", ")
                ));
            }
        },
    };
    // A contract whose own description its reference denies (an exercise's first draws)
    // makes cases nobody can bless: told at its place, before any case.
    let denied: Vec<SpecError> = chosen
        .iter()
        .flat_map(|contract| contract.reference_errors())
        .collect();
    if !denied.is_empty() {
        super::messages::spec_errors(&denied, &palette);
        return exit::SPEC_OR_USAGE_ERROR;
    }
    if let Err(message) = prepare_out(args.output.as_deref()) {
        return usage(&message);
    }
    let settings = ExploreSettings {
        seed: args.seed.unwrap_or_else(rng::fresh_seed),
        cases: args.cases.unwrap_or(DEFAULT_CASES),
        time: args.budget,
        contracts: chosen,
        shrink_tries: DEFAULT_SHRINK_TRIES,
        tag: None,
    };
    let (mut implementation, mut reporter) = implementation_and_reporter(&args.target, palette);
    let summary = explore::search(&settings, implementation.as_mut(), &mut reporter);
    drop(reporter);
    drop(implementation);
    if let Some(why) = &summary.broken {
        // Every outcome of a search names its seed, even one that never started.
        let seed = settings.seed;
        super::messages::failure(
            &format!("{why}; seed {seed} (`--seed {seed}` replays this run)"),
            &palette,
        );
        return exit::FAILED;
    }
    // A spec that cannot be written is still shown in the report: the search is not lost.
    let (written, unwritten) = written_or_why(args.output.as_deref(), summary.finding.as_ref());
    let text = crate::explore::render::search(&summary, written.as_deref(), &palette);
    let _ = crate::report::sanitize::stdout().write_all(text.as_bytes());
    if let Some(why) = unwritten {
        super::messages::failure(&why, &palette);
    }
    if summary.finding.is_none()
        && let Some(why) = explore::render::mostly_invalid(&summary)
    {
        // Cases nobody could bless judge nobody: no divergence among them is no pass (a
        // divergence found among the others still is one).
        super::messages::failure(&why, &palette);
        return exit::SPEC_OR_USAGE_ERROR;
    }
    if summary.cases.is_empty() {
        let names: Vec<&str> = settings.contracts.iter().map(|c| c.name()).collect();
        super::messages::failure(
            &format!(
                "the implementation provides none of the contracts explored ({}): an exercise folder's contract is explored with --exercise DIR",
                names.join(", ")
            ),
            &palette,
        );
    }
    if summary.finding.is_some() || summary.cases.is_empty() {
        exit::FAILED
    } else {
        exit::PASSED
    }
}

#[expect(
    clippy::disallowed_macros,
    reason = "prints: a spec error is told on stderr"
)]
fn crash_schedules(args: ExploreArgs, spec: &Path, palette: Palette) -> i32 {
    let usage = |message: &str| super::messages::usage_error(message, &palette);
    if args.contract.is_some()
        || args.seed.is_some()
        || args.cases.is_some()
        || args.budget.is_some()
    {
        return usage(
            "--contract, --seed, --cases and --budget choose random scenarios; with a SPEC, every crash schedule of its scenario runs (--crashes K sets how many crashes at most)",
        );
    }
    let loaded = match crate::load::loader::load_path(spec) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprint!("{}", render::spec_error(&error, &palette));
            return exit::SPEC_OR_USAGE_ERROR;
        }
    };
    // A spec the reference cannot run judges nobody, under crashes or not.
    let reference = loaded.run(
        &mut crate::contracts::builtin::Builtin::new(),
        RunMode::Check,
    );
    if let Outcome::SpecError(error) = &reference.outcome {
        eprint!("{}", render::spec_error(error, &palette));
        return exit::SPEC_OR_USAGE_ERROR;
    }
    let contract = loaded.contract;
    let schedules = match contract.explorer() {
        Some(explorer) => explorer.crash_schedules(&loaded.file),
        None => Err(format!("{} has no crash schedules", contract.name())),
    };
    let schedules = match schedules {
        Ok(schedules) => schedules,
        Err(why) => return usage(&why),
    };
    if let Err(message) = prepare_out(args.output.as_deref()) {
        return usage(&message);
    }
    let shown = display_path(spec);
    let plan = CrashPlan {
        contract,
        spec: &shown,
        max_crashes: args.crashes.unwrap_or(1) as usize,
        shrink_tries: DEFAULT_SHRINK_TRIES,
    };
    let (mut implementation, mut reporter) = implementation_and_reporter(&args.target, palette);
    // As in a search: an implementation without the contract's class is not explored, and
    // that is no pass (every schedule would be skipped, so every invariant would "hold").
    let lacking = match implementation.offer() {
        Err(error) => Some(error.message),
        Ok(Some(offer)) if !offer.contracts.iter().any(|c| c == contract.name()) => Some(format!(
            "{} has no class {}",
            implementation.info().label,
            contract.subject()
        )),
        Ok(_) => None,
    };
    if let Some(why) = lacking {
        super::messages::failure(&format!("{why}: nothing to explore"), &palette);
        return exit::FAILED;
    }
    let summary = crashes::explore(
        &plan,
        schedules.as_ref(),
        implementation.as_mut(),
        &mut reporter,
    );
    drop(reporter);
    drop(implementation);
    let finding = summary.violation.as_ref().and_then(|v| v.finding.as_ref());
    let (written, unwritten) = written_or_why(args.output.as_deref(), finding);
    let text = crate::explore::render::crashes(&summary, written.as_deref(), &palette);
    let _ = crate::report::sanitize::stdout().write_all(text.as_bytes());
    if let Some(why) = unwritten {
        super::messages::failure(&why, &palette);
    }
    if summary.violation.is_some() {
        exit::FAILED
    } else {
        exit::PASSED
    }
}

/// Makes `--output DIR` exist before any work is done, so a bad path fails at once.
pub(crate) fn prepare_out(out: Option<&Path>) -> Result<(), String> {
    match out {
        None => Ok(()),
        Some(dir) if dir.is_file() => Err(format!(
            "--output {}: a file, not a folder; name a folder to write specs into",
            display_path(dir)
        )),
        Some(dir) => std::fs::create_dir_all(dir)
            .map_err(|error| format!("--output {}: cannot create it: {error}", display_path(dir))),
    }
}

/// Writes the finding's spec into `out`, when both are there, as a new file (a numbered name
/// when the name is taken: an earlier finding, perhaps edited since, is never overwritten);
/// the path written.
pub(crate) fn write_finding(
    out: Option<&Path>,
    finding: Option<&Finding>,
) -> Result<Option<PathBuf>, String> {
    let (Some(dir), Some(finding)) = (out, finding) else {
        return Ok(None);
    };
    crate::files::atomic_file::write_new(dir, &finding.file_name, finding.spec.as_bytes())
        .map(Some)
        .map_err(|error| {
            format!(
                "cannot write {}: {error}",
                display_path(&dir.join(&finding.file_name))
            )
        })
}

/// `write_finding`'s path, or why it could not write (the report still shows the spec).
fn written_or_why(
    out: Option<&Path>,
    finding: Option<&Finding>,
) -> (Option<PathBuf>, Option<String>) {
    match write_finding(out, finding) {
        Ok(written) => (written, None),
        Err(why) => (None, Some(why)),
    }
}

/// The implementation to explore (the built-in when none is named), within its limits, and
/// the reporter that tells the search on stdout.
#[expect(
    clippy::disallowed_types,
    reason = "prints: the run's reporter writes to stdout"
)]
fn implementation_and_reporter(
    target: &crate::commands::cli::TargetArgs,
    palette: Palette,
) -> (
    Box<dyn crate::model::implementation::Implementation + Send>,
    ExploreReporter<crate::report::sanitize::WorkflowSafe<std::io::Stdout>>,
) {
    let chosen = target
        .implementation
        .clone()
        .unwrap_or(Target::Builtin)
        .with_limits(target.limits.limits());
    super::sandbox_warnings::warn_once(&chosen);
    let implementation = chosen.instantiate(target.limits.timeout);
    let reporter = ExploreReporter::new(
        crate::report::sanitize::stdout(),
        palette,
        ReportOptions::progress_wanted(),
    );
    (implementation, reporter)
}
