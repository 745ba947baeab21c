//! The runner: finds specs, runs each against one implementation, and emits events
//! (`events.rs`).
//!
//! Reporters consume the events; the runner never prints.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{Grading, RunMode};
use crate::contracts::registry::reference_called;
use crate::load::discover::{self, DiscoverError, Skipped};
use crate::load::loader::{self, LoadedSpec};
use crate::model::cause::{Cause, Causes};
use crate::model::implementation::{ImplInfo, Implementation, ImplementationFactory};
use crate::model::outcome::Outcome;
use crate::model::world::WorldChoice;
use crate::run::events::{
    Event, NOT_RUN_BUDGET, NOT_RUN_FAIL_FAST, NOT_RUN_HUNG, NOT_RUN_WORLD, Reporter, SpecReport,
    Summary,
};
use crate::run::exit;
use crate::run::known_failures::KnownFailures;
use crate::run::parallel;
use crate::run::rerun::{self, RerunPlan};
use crate::run::select::{Partition, SpecFilter};
use crate::text::source::display_path;
use crate::text::spec_error::{SpecError, SpecErrorKind};

#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    pub paths: Vec<PathBuf>,
    /// Run only specs some filter matches (all specs when there is none).
    pub filters: Vec<SpecFilter>,
    /// Run only this share of the selected specs.
    pub partition: Option<Partition>,
    /// How many specs run at once; `None` means one per available core.
    pub jobs: Option<NonZeroUsize>,
    /// After the first failure start no more specs; report the rest as skipped.
    pub fail_fast: bool,
    /// Failures expected of the implementation; applied to each spec's outcome in order.
    pub known_failures: Option<KnownFailures>,
    /// Which of the selected specs run first, or at all, from the failures last recorded.
    pub rerun: RerunPlan,
    /// When the run's budget (`--budget`) runs out: from then on no spec starts, the
    /// implementation is ended, and every spec not finished is skipped as [`NOT_RUN_BUDGET`].
    pub deadline: Option<Instant>,
    /// The process ends when this run does (`dlqspec run`): what the run loaded is left for
    /// the system to take back at exit, at once, instead of being freed piece by piece (a
    /// tenth of the run of a spec of 10^5 messages: docs/performance.md). Never set by a
    /// command that runs again in the same process (`watch`, `grade`): their memory is returned.
    pub last_in_process: bool,
    /// Finds no cause for a failure (where the implementation departs from the reference):
    /// each failure's cause is then only the shape of its outcome. For the tests that hold a
    /// run's verdicts to be the same with causes and without.
    pub skip_causes: bool,
    /// The world the specs act on (`--world`): the fake, or a broker's queue.
    pub world: WorldChoice,
}

impl RunConfig {
    /// The number of worker threads asked for.
    pub(crate) fn jobs(&self) -> usize {
        self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
            NonZeroUsize::get,
        )
    }
}

/// Why a run did not run any spec.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RunError {
    /// A path could not be searched for specs.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// The paths and filters select no spec: a run that checks nothing is not a pass.
    #[error("{0}")]
    NothingSelected(String),
    /// The implementation provides none of the contracts the selected specs check.
    #[error("{0}")]
    NothingProvided(String),
    /// The world (`--world`) cannot be used: a broker not there, or refusing the login.
    #[error("{0}")]
    World(String),
}

impl RunError {
    /// The exit code: nothing selected is a usage error, nothing provided a failure.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            RunError::Discover(_) | RunError::NothingSelected(_) | RunError::World(_) => {
                exit::SPEC_OR_USAGE_ERROR
            }
            RunError::NothingProvided(_) => exit::FAILED,
        }
    }
}

/// A spec after loading, before running: either ready or already failed.
pub type Prepared = (String, Result<LoadedSpec, SpecError>);

/// Readies `world` for the selected specs, once: each contract that takes a world readies
/// it (a broker reached, what a killed run left deleted); the lines the report header says of
/// it, empty for the fake. `Err` is why the world cannot be used.
pub(crate) fn prepare_world(
    world: &WorldChoice,
    prepared: &[Prepared],
) -> Result<Vec<String>, String> {
    if world.is_fake() {
        return Ok(Vec::new());
    }
    let mut lines = vec![format!("world: {} at {world}", world.short())];
    let mut without: Vec<(&'static str, usize)> = Vec::new();
    let mut readied: Vec<&'static str> = Vec::new();
    for (_, spec) in prepared {
        let Ok(spec) = spec else { continue };
        let contract = spec.contract;
        if !contract.takes_world() {
            match without
                .iter_mut()
                .find(|(name, _)| *name == contract.name())
            {
                Some((_, count)) => *count += 1,
                None => without.push((contract.name(), 1)),
            }
        } else if !readied.contains(&contract.name()) {
            readied.push(contract.name());
            lines.extend(contract.prepare_world(world)?);
        }
    }
    for (name, count) in without {
        lines.push(format!(
            "--world applies to the specs whose contract has a queue to put on the broker: the {count} {name} spec{} ran as always (their queue is the implementation)",
            if count == 1 { "" } else { "s" }
        ));
    }
    Ok(lines)
}

/// Loads every spec under the configured paths and keeps those the filters and partition select.
pub fn prepare(config: &RunConfig) -> Result<Vec<Prepared>, DiscoverError> {
    Ok(gather(config)?.specs)
}

/// The selected specs, and the paths discovery left out (for a command to warn about).
pub(crate) struct SelectedSpecs {
    pub(crate) specs: Vec<Prepared>,
    pub(crate) skipped: Vec<Skipped>,
}

/// `prepare`, keeping what discovery skipped.
pub(crate) fn gather(config: &RunConfig) -> Result<SelectedSpecs, DiscoverError> {
    let (loaded, skipped) = load_all(config)?;
    Ok(SelectedSpecs {
        specs: select(config, loaded),
        skipped,
    })
}

/// Loads every spec under the configured paths, on as many threads as the run may use. A path
/// that cannot be read is a broken spec at that path; the others load all the same.
fn load_all(config: &RunConfig) -> Result<(Vec<Prepared>, Vec<Skipped>), DiscoverError> {
    Ok(load_found(config, discover::discover(&config.paths)?))
}

/// Loads the specs `discovery` found, as `load_all` does.
fn load_found(config: &RunConfig, discovery: discover::Discovery) -> (Vec<Prepared>, Vec<Skipped>) {
    let entries = &discovery.entries;
    let workers = config.jobs().min(entries.len()).max(1);
    let mut loaded = Vec::with_capacity(entries.len());
    parallel::run_in_order(
        entries.len(),
        vec![(); workers],
        &|_, i| {
            let entry = &entries[i];
            (display_path(entry.path()), loader::load_entry(entry))
        },
        &|_| false,
        &mut |_, spec| loaded.extend(spec),
    );
    (loaded, discovery.skipped)
}

/// The loaded specs the filters, then the partition, select, in the order the rerun plan gives.
fn select(config: &RunConfig, loaded: Vec<Prepared>) -> Vec<Prepared> {
    select_counting(config, loaded).0
}

/// `select`, how many specs the filters chose before the partition took its share, and what
/// the rerun plan had to say.
fn select_counting(
    config: &RunConfig,
    loaded: Vec<Prepared>,
) -> (Vec<Prepared>, usize, Option<String>) {
    let mut chosen: Vec<Prepared> = loaded
        .into_iter()
        .filter(|(path, spec)| {
            let header = spec.as_ref().ok().map(|spec| spec.scenario.header());
            config.filters.is_empty() || config.filters.iter().any(|f| f.matches(path, header))
        })
        .collect();
    let filtered = chosen.len();
    if let Some(partition) = config.partition {
        let paths: Vec<&str> = chosen.iter().map(|(path, _)| path.as_str()).collect();
        let mut mask = partition.mask(&paths).into_iter();
        chosen.retain(|_| mask.next().unwrap_or(false));
    }
    // After the partition, so a share holds the same specs whatever failed last time.
    let (chosen, note) = rerun::choose(chosen, |(path, _)| path.as_str(), &config.rerun);
    (chosen, filtered, note)
}

/// The report of a spec: its name, contract and rules when it loaded, and what happened.
fn spec_report(prepared: &Prepared, outcome: Outcome, duration: Duration) -> SpecReport {
    let (path, loaded) = prepared;
    let (name, contract, rules, grading, source) = match loaded {
        Err(_) => (None, None, Vec::new(), Grading::default(), None),
        Ok(spec) => {
            let header = spec.scenario.header();
            (
                Some(header.name.clone()),
                Some(spec.contract.name()),
                header.rule_ids().map(str::to_owned).collect(),
                header.grading,
                Some(Arc::from(spec.file.text.as_str())),
            )
        }
    };
    SpecReport {
        path: path.clone(),
        name,
        contract,
        rules,
        outcome,
        duration,
        output: None,
        grading,
        source,
        departure: None,
        cause: None,
    }
}

/// The report of a spec not run because the implementation hung in an earlier one.
fn not_run_hung(prepared: &Prepared) -> SpecReport {
    not_run(prepared, NOT_RUN_HUNG)
}

/// The report of a spec that did not run, and why.
pub(crate) fn not_run(prepared: &Prepared, reason: &str) -> SpecReport {
    spec_report(
        prepared,
        Outcome::Skipped(reason.to_owned()),
        Duration::ZERO,
    )
}

/// Runs one prepared spec. Against any implementation but the reference, the spec is first run
/// on the reference: a spec the reference does not pass judges nobody, and is a spec error.
/// A failure comes with its cause.
pub fn run_one(prepared: &Prepared, implementation: &mut dyn Implementation) -> SpecReport {
    run_one_in(prepared, implementation, &WorldChoice::Fake)
}

/// `run_one` on `world`.
pub(crate) fn run_one_in(
    prepared: &Prepared,
    implementation: &mut dyn Implementation,
    world: &WorldChoice,
) -> SpecReport {
    run_judged(
        prepared,
        implementation,
        world,
        true,
        &|spec, implementation| reference_verdict(spec, implementation),
    )
}

/// `run_one`, with the reference's verdict on the spec from `verdict`; `causes` says whether
/// a failure's departure from the reference is looked for.
fn run_judged(
    prepared: &Prepared,
    implementation: &mut dyn Implementation,
    world: &WorldChoice,
    causes: bool,
    verdict: &dyn Fn(&LoadedSpec, &dyn Implementation) -> Option<Outcome>,
) -> SpecReport {
    let started = Instant::now();
    let (outcome, departure) = match &prepared.1 {
        Err(error) => (Outcome::SpecError(error.clone()), None),
        Ok(spec) => match verdict(spec, implementation) {
            Some(broken) => (broken, None),
            None => match implementation.begin_spec() {
                Err(error) => (Outcome::Errored(error), None),
                Ok(()) if causes => {
                    let (run, departure) = spec.diagnose_in(implementation, RunMode::Check, world);
                    (run.outcome, departure.map(Box::new))
                }
                Ok(()) => (
                    spec.run_in(implementation, RunMode::Check, world).outcome,
                    None,
                ),
            },
        },
    };
    let mut report = spec_report(prepared, outcome, started.elapsed());
    report.output = implementation.take_output();
    report.departure = departure;
    report.cause = Cause::of(
        &report.outcome,
        report.departure.as_deref(),
        report.output.as_ref(),
        &report.rules,
    );
    told_as_the_specs(&mut report, implementation.info().is_reference);
    if !report.grading.visibility.shows_details() {
        implementation.forget_spec();
    }
    report
}

/// A difference on the reference is the spec's: its cause says the expectation differs from
/// the reference (named as its contract names it), names no rule, and points at `bless` and
/// `explain`.
fn told_as_the_specs(report: &mut SpecReport, is_reference: bool) {
    if let (true, Outcome::Mismatch(mismatch)) = (is_reference, &report.outcome) {
        let built_in = "the built-in reference";
        let reference = report
            .contract
            .map_or_else(|| built_in.to_owned(), |c| reference_called(c, built_in));
        report.cause = Some(Cause::expectation_differs(
            mismatch,
            &report.path,
            &reference,
        ));
    }
}

/// The spec error to report instead of running `spec` on `implementation`, when the built-in
/// reference does not pass it. `None` when it does, or when `implementation` is the reference.
fn reference_verdict(spec: &LoadedSpec, implementation: &dyn Implementation) -> Option<Outcome> {
    if implementation.info().is_reference {
        return None;
    }
    reference_judgement(spec)
}

/// The spec error to report instead of running `spec` on any implementation but the
/// reference, when the built-in reference does not pass it.
fn reference_judgement(spec: &LoadedSpec) -> Option<Outcome> {
    match spec.run(&mut Builtin::new(), RunMode::Check).outcome {
        Outcome::Passed => None,
        Outcome::Mismatch(mismatch) => Some(Outcome::SpecError(SpecError::at(
            &spec.file,
            mismatch.position,
            SpecErrorKind::Contradicted,
            format!(
                "{} fails this spec at {}, so the spec judges no implementation: `dlqspec explain {path}` tells the reference's run, `dlqspec bless {path}` rewrites the expectations",
                reference_called(
                    spec.contract.name(),
                    "the built-in reference implementation"
                ),
                mismatch.step,
                path = spec.file.display_path()
            ),
        ))),
        other => Some(other),
    }
}

/// The reference's verdicts on the selected specs (`reference_verdict`), each worked out once:
/// ahead of the workers, on a thread of its own, from the moment the run knows its
/// implementation is not the reference, or by the worker that needs one first. An external
/// implementation takes its interpreter's start to answer `hello`, and every spec used to run
/// on the reference just before it ran on the implementation, each time on the path between
/// two requests; worked out meanwhile, none of that is waited for any more.
struct ReferenceVerdicts<'j> {
    slots: Vec<OnceLock<Option<Outcome>>>,
    judge: &'j (dyn Fn(usize) -> Option<Outcome> + Sync),
    /// Set when the run is over (or stopped early): working ahead stops at the next spec.
    over: AtomicBool,
}

impl<'j> ReferenceVerdicts<'j> {
    fn new(count: usize, judge: &'j (dyn Fn(usize) -> Option<Outcome> + Sync)) -> Self {
        ReferenceVerdicts {
            slots: (0..count).map(|_| OnceLock::new()).collect(),
            judge,
            over: AtomicBool::new(false),
        }
    }

    /// The verdict on spec `i`: the one worked out ahead, else worked out now (waiting for it
    /// if working ahead is at it).
    fn verdict(&self, i: usize) -> Option<Outcome> {
        self.slots[i].get_or_init(|| (self.judge)(i)).clone()
    }

    /// Works out every verdict not yet asked for, in order, until the run is over.
    fn work_ahead(&self) {
        for (i, slot) in self.slots.iter().enumerate() {
            if self.over.load(Ordering::Relaxed) {
                return;
            }
            slot.get_or_init(|| (self.judge)(i));
        }
    }

    /// The run is over: working ahead stops at the next spec.
    fn finish(&self) {
        self.over.store(true, Ordering::Relaxed);
    }
}

/// Runs every selected spec, `config.jobs()` at a time, each worker with its own
/// implementation from `factory`; the reporter sees the specs in their stable order.
pub fn run(
    config: &RunConfig,
    factory: &dyn ImplementationFactory,
    reporter: &mut dyn Reporter,
) -> Result<Summary, RunError> {
    let started = Instant::now();
    let discovery = discover::discover(&config.paths)?;
    // Watched from before the implementation starts: one that hangs while it loads is ended
    // at the budget too.
    let budget = config.deadline.map(BudgetWatch::start);
    let mut first = factory.create();
    // Started before the specs load, which then takes none of the time an interpreter takes
    // to start (measured: docs/performance.md). Paths that hold no spec start nothing; filters
    // that select none end it unused.
    if !discovery.entries.is_empty() {
        first.begin_start();
    }
    let (loaded, skipped) = load_found(config, discovery);
    let found = loaded.len();
    let (prepared, filtered, note) = select_counting(config, loaded);
    // An empty share of `--partition` is fine (a CI matrix may have more shards than specs);
    // paths or filters that select nothing are not.
    if filtered == 0 {
        return Err(RunError::NothingSelected(nothing_selected(config, found)));
    }
    let world = prepare_world(&config.world, &prepared).map_err(RunError::World)?;
    let workers = config.jobs().min(prepared.len()).max(1);
    let info = first.info();
    let judge = |i: usize| match &prepared[i].1 {
        Ok(spec) => reference_judgement(spec),
        Err(_) => None,
    };
    let verdicts = ReferenceVerdicts::new(prepared.len(), &judge);
    let summary = std::thread::scope(|scope| {
        // Against anything but the reference, the reference's verdicts are worked out while
        // the implementation starts (`nothing_provided` waits for its `hello`) and runs.
        // Without a thread for it (the system refused one), each worker works out its own.
        if !info.is_reference {
            let _ = std::thread::Builder::new()
                .name("dlqspec-reference".into())
                .spawn_scoped(scope, || verdicts.work_ahead());
        }
        let judged = |implementation: &mut Box<dyn Implementation + Send>, i: usize| {
            let verdict = |_: &LoadedSpec, _: &dyn Implementation| {
                (!info.is_reference).then(|| verdicts.verdict(i)).flatten()
            };
            run_judged(
                &prepared[i],
                implementation.as_mut(),
                &config.world,
                !config.skip_causes,
                &verdict,
            )
        };
        let summary = run_all(
            config,
            &prepared,
            (found, &skipped, note),
            &world,
            first,
            &info,
            workers,
            factory,
            &judged,
            budget,
            reporter,
            started,
        );
        verdicts.finish();
        summary
    });
    if config.last_in_process {
        drop(verdicts);
        std::mem::forget(prepared);
    }
    summary
}

/// `run` once its specs are selected and its first implementation made.
#[allow(clippy::too_many_arguments)]
fn run_all(
    config: &RunConfig,
    prepared: &[Prepared],
    (found, skipped, note): (usize, &[Skipped], Option<String>),
    world: &[String],
    mut first: Box<dyn Implementation + Send>,
    info: &ImplInfo,
    workers: usize,
    factory: &dyn ImplementationFactory,
    judged: &(dyn Fn(&mut Box<dyn Implementation + Send>, usize) -> SpecReport + Sync),
    budget: Option<BudgetWatch>,
    reporter: &mut dyn Reporter,
    started: Instant,
) -> Result<Summary, RunError> {
    let offered = match offered(prepared, first.as_mut()) {
        Offered::Nothing(refusal) => return Err(RunError::NothingProvided(refusal)),
        Offered::Some(offered) => Some(offered),
        Offered::Anything => None,
    };
    // A spec of a contract the implementation has no class of is not attempted: it is not run
    // (its class is missing, there is nothing to ask), and is no failure of what was written.
    let not_attempted = |i: usize| -> Option<SpecReport> {
        let offered = offered.as_ref()?;
        let spec = prepared[i].1.as_ref().ok()?;
        let contract = spec.contract;
        if offered.contracts.iter().any(|c| c == contract.name()) {
            return None;
        }
        let why = format!(
            "{} has no class `{}`: the {} contract is not attempted",
            offered.named,
            contract.subject(),
            contract.name()
        );
        Some(spec_report(
            &prepared[i],
            Outcome::NotAttempted(why),
            Duration::ZERO,
        ))
    };
    let mut implementations = vec![first];
    implementations.extend((1..workers).map(|_| factory.create()));
    reporter.event(&Event::Started {
        total: prepared.len(),
        filtered_out: found - prepared.len(),
        implementation: info,
        skipped,
        world,
    });
    let mut summary = Summary {
        notes: note.into_iter().collect(),
        ..Summary::default()
    };
    let mut expected = config.known_failures.as_ref().map(|k| k.expect(prepared));
    // A listed failure is expected: it does not stop a --fail-fast run.
    let listed = |report: &SpecReport| {
        config
            .known_failures
            .as_ref()
            .is_some_and(|k| k.lists(&report.path, &report.rules))
    };
    let out_of_budget = || budget.as_ref().is_some_and(BudgetWatch::ran_out);
    let not_run = |i: usize| {
        let skipped = Outcome::Skipped(NOT_RUN_BUDGET.to_owned());
        spec_report(&prepared[i], skipped, Duration::ZERO)
    };
    let mut causes = Causes::default();
    // The spec the implementation hung in (a request that never returned), and what hung:
    // told once, under that spec; every spec after it is not run.
    let mut hung: Option<(String, String)> = None;
    // Why the specs never started were not: the first reason to stop, fail-fast or budget.
    let stopped_by = std::sync::OnceLock::new();
    let run_spec = |implementation: &mut Box<dyn Implementation + Send>, i: usize| {
        if out_of_budget() {
            return not_run(i);
        }
        if let Some(report) = not_attempted(i) {
            return report;
        }
        let report = judged(implementation, i);
        // Finished after the budget ran out: its implementation may have been ended under
        // it, so what it says is no verdict.
        if out_of_budget() { not_run(i) } else { report }
    };
    let stops = |report: &SpecReport| {
        if matches!(report.outcome, Outcome::WorldFault(_)) {
            stopped_by.get_or_init(|| NOT_RUN_WORLD);
            true
        } else if matches!(&report.outcome, Outcome::Errored(e) if e.hung()) {
            stopped_by.get_or_init(|| NOT_RUN_HUNG);
            true
        } else if config.fail_fast && report.outcome.is_failure() && !listed(report) {
            stopped_by.get_or_init(|| NOT_RUN_FAIL_FAST);
            true
        } else if out_of_budget() {
            stopped_by.get_or_init(|| NOT_RUN_BUDGET);
            true
        } else {
            false
        }
    };
    let mut emit = |i: usize, report: Option<SpecReport>| {
        let mut report = report.unwrap_or_else(|| {
            let reason = stopped_by.get().copied().unwrap_or(NOT_RUN_FAIL_FAST);
            let skipped = Outcome::Skipped(reason.to_owned());
            spec_report(&prepared[i], skipped, Duration::ZERO)
        });
        // The broker broke under this spec: it is not run, and the run says why once.
        if let Outcome::WorldFault(fault) = &report.outcome {
            summary.world_fault.get_or_insert_with(|| fault.clone());
            report.outcome = Outcome::Skipped(NOT_RUN_WORLD.to_owned());
        }
        if matches!(&report.outcome, Outcome::Skipped(reason) if reason == NOT_RUN_WORLD) {
            summary.not_run_world += 1;
        }
        // After the spec it hung in, nothing of the run is a verdict on the implementation:
        // a spec run meanwhile on another worker is not run either, so the hang is told
        // once, whatever the number of jobs.
        if hung.is_some() && !matches!(report.outcome, Outcome::Skipped(_)) {
            report = not_run_hung(&prepared[i]);
        }
        if let Outcome::Errored(error) = &report.outcome
            && error.hung()
            && hung.is_none()
        {
            let what = error.message.lines().next().unwrap_or_default();
            let what = what.split(" never returned").next().unwrap_or(what);
            hung = Some((report.path.clone(), what.to_owned()));
        }
        if matches!(&report.outcome, Outcome::Skipped(reason) if reason == NOT_RUN_HUNG) {
            summary.not_run_hung += 1;
        }
        if let Some(expected) = &mut expected {
            expected.apply(i, &report.rules, &mut report.outcome);
        }
        // After the known failures: a listed failure is no failure, a listing that passed
        // is one now.
        report.cause = causes.settle(
            &report.outcome,
            report.departure.as_deref(),
            report.output.as_ref(),
            &report.rules,
        );
        told_as_the_specs(&mut report, info.is_reference);
        if matches!(&report.outcome, Outcome::Skipped(reason) if reason == NOT_RUN_BUDGET) {
            summary.not_run_budget += 1;
        }
        summary.add(&report.outcome);
        reporter.event(&Event::Finished(&report));
    };
    // Hidden specs run after every visible one, in processes of their own (docs/security.md):
    // every visible result is final before the first hidden spec starts, and no process that
    // served a visible spec serves a hidden one, so whatever channel a hidden spec's process
    // finds (the page cache, a timing, a file of the machine) reaches only results nobody is
    // shown. The reporter still sees every spec in its stable order.
    let (visible, hidden): (Vec<usize>, Vec<usize>) =
        (0..prepared.len()).partition(|&i| match &prepared[i].1 {
            Ok(spec) => spec.scenario.header().grading.visibility.shows_details(),
            Err(_) => true,
        });
    let mut held: Vec<Option<Option<SpecReport>>> = (0..prepared.len()).map(|_| None).collect();
    let mut next = 0;
    for (phase, indices) in [visible, hidden].into_iter().enumerate() {
        if indices.is_empty() {
            continue;
        }
        if phase == 1 && stopped_by.get().is_some() {
            indices.iter().for_each(|&i| held[i] = Some(None));
        } else {
            if phase == 1 {
                // The processes that served visible specs end here: the hidden ones start anew.
                implementations.iter_mut().for_each(|i| i.forget_spec());
            }
            let workers: Vec<&mut Box<dyn Implementation + Send>> =
                implementations.iter_mut().collect();
            parallel::run_in_order(
                indices.len(),
                workers,
                &|implementation, k| run_spec(implementation, indices[k]),
                &stops,
                &mut |k, report| held[indices[k]] = Some(report),
            );
        }
        // Every spec before the first still running is told, in order.
        while let Some(report) = held.get_mut(next).and_then(Option::take) {
            emit(next, report);
            next += 1;
        }
    }
    drop(implementations);
    drop(budget);
    if summary.world_fault.is_some() {
        let total = prepared.len();
        summary.notes.push(format!(
            "the broker failed after {} of the run's {total} specs; {} not run",
            total - summary.not_run_world,
            summary.not_run_world
        ));
    }
    if let Some((path, what)) = hung {
        let told = match summary.not_run_hung {
            0 => format!("the solution hung in {path}: {what} never returned"),
            n => format!(
                "the solution hung in {path}: {what} never returned; the {} after it not run, as each would only have waited out its timeout again",
                crate::text::listing::count(n, "spec")
            ),
        };
        summary.notes.push(told.clone());
        summary.hung = Some(told);
    }
    if summary.not_run_budget > 0 {
        let total = prepared.len();
        summary.notes.push(format!(
            "the run's budget ran out after {} of its {total} specs; {} not run",
            total - summary.not_run_budget,
            summary.not_run_budget
        ));
    }
    summary.duration = started.elapsed();
    reporter.event(&Event::Done(&summary));
    Ok(summary)
}

/// Watches a run's deadline from a thread of its own: when it comes, ends every implementation
/// process, the one serving a spec included; and goes on ending any started in the moment
/// between a worker's look at the clock and its start, until the run is over. Whether the
/// budget is spent is the clock's to say (`ran_out`), not the thread's: so no spec starts, and
/// none finishing from then on counts, without a worker waiting on the thread to be scheduled.
struct BudgetWatch {
    deadline: Instant,
    over: Option<std::sync::mpsc::Sender<()>>,
    watching: Option<std::thread::JoinHandle<()>>,
}

/// How often, once the budget is spent, implementation processes are looked for and ended.
const BUDGET_SWEEP: Duration = Duration::from_millis(50);

impl BudgetWatch {
    fn start(deadline: Instant) -> BudgetWatch {
        let (over, run_over) = std::sync::mpsc::channel::<()>();
        let watching = std::thread::Builder::new()
            .name("dlqspec-budget".into())
            .spawn(move || {
                let left = deadline.saturating_duration_since(Instant::now());
                if run_over.recv_timeout(left) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                    return;
                }
                loop {
                    crate::external::children::kill_everything();
                    if run_over.recv_timeout(BUDGET_SWEEP)
                        != Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                    {
                        return;
                    }
                }
            });
        match watching {
            Ok(watching) => BudgetWatch {
                deadline,
                over: Some(over),
                watching: Some(watching),
            },
            // No thread to watch the clock, so nothing would end a process past the deadline:
            // the budget is spent now, so the run ends at once rather than past its budget.
            Err(_) => BudgetWatch {
                deadline: Instant::now(),
                over: None,
                watching: None,
            },
        }
    }

    /// Whether the budget is spent, by the clock itself.
    fn ran_out(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

impl Drop for BudgetWatch {
    fn drop(&mut self) {
        drop(self.over.take());
        if let Some(watching) = self.watching.take() {
            let _ = watching.join();
        }
    }
}

/// Why nothing was selected, in one line.
fn nothing_selected(config: &RunConfig, found: usize) -> String {
    let paths: Vec<String> = config.paths.iter().map(|p| display_path(p)).collect();
    let under = if paths.is_empty() {
        "specs".to_owned()
    } else {
        paths.join(", ")
    };
    if found == 0 {
        return format!("no spec selected: no spec file (.yaml, .yml) under {under}");
    }
    let filters: Vec<String> = config.filters.iter().map(|f| format!("`{f}`")).collect();
    format!(
        "no spec selected: --filter {} matches none of the {found} spec{} under {under}",
        filters.join(", --filter "),
        if found == 1 { "" } else { "s" }
    )
}

/// What an implementation offers of the contracts the selected specs check.
enum Offered {
    /// Whatever it is asked for (an in-process implementation), or it could not say (it
    /// broke starting, which each spec then tells).
    Anything,
    /// These contracts, by name; the solution named by its file.
    Some(OfferedContracts),
    /// None of them: the one line to say instead of running.
    Nothing(String),
}

/// The contracts an implementation's hello lists, and the solution as a student names it.
struct OfferedContracts {
    contracts: Vec<String>,
    named: String,
}

/// What `implementation` offers of the contracts the selected specs check. Providing none of
/// them (a misnamed class, an empty file) is said instead of running: skipping every spec
/// would look like a pass to anyone who reads only the exit code.
fn offered(prepared: &[Prepared], implementation: &mut dyn Implementation) -> Offered {
    let Ok(Some(offer)) = implementation.offer() else {
        return Offered::Anything;
    };
    // Named by its file, not by an `--impl` value: a student reads this in an autograder's
    // results, where paths in the solution's folder are told relative to it.
    let label = implementation.info().label;
    let named = ["python:", "node:"]
        .iter()
        .find_map(|prefix| label.strip_prefix(prefix))
        .unwrap_or(&label)
        .to_owned();
    match nothing_provided(prepared, &offer, &named) {
        Some(refusal) => Offered::Nothing(refusal),
        None => Offered::Some(OfferedContracts {
            contracts: offer.contracts,
            named,
        }),
    }
}

/// The one line to say instead of running, when `offer` holds none of the contracts the
/// selected specs check.
fn nothing_provided(
    prepared: &[Prepared],
    offer: &crate::model::implementation::Offer,
    named: &str,
) -> Option<String> {
    let mut wanted: Vec<&'static dyn crate::contracts::contract::Contract> = Vec::new();
    for spec in prepared.iter().filter_map(|(_, spec)| spec.as_ref().ok()) {
        if !wanted.iter().any(|c| c.name() == spec.contract.name()) {
            wanted.push(spec.contract);
        }
    }
    if wanted.is_empty()
        || wanted
            .iter()
            .any(|c| offer.contracts.iter().any(|o| o == c.name()))
    {
        return None;
    }
    let wanted: Vec<(&str, &str)> = wanted.iter().map(|c| (c.name(), c.subject())).collect();
    Some(format!(
        "{named} provides none of the contracts the selected specs check: {}",
        offer.none_of(&wanted)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::outcome::OutcomeKind;
    use std::sync::atomic::AtomicUsize;

    const PASSING: &str = "contract: dlq-consumer\nname: passes\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps: [{process: ok}]\n";
    const FAILING: &str = "contract: dlq-consumer\nname: fails\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps: [{process: dead}]\n";

    /// Remembers what a reporter was told.
    #[derive(Default)]
    struct Collect {
        started: Option<(usize, usize)>,
        finished: Vec<(String, OutcomeKind)>,
        done: Option<Summary>,
    }

    impl Reporter for Collect {
        fn event(&mut self, event: &Event) {
            match event {
                Event::Started {
                    total,
                    filtered_out,
                    ..
                } => self.started = Some((*total, *filtered_out)),
                Event::Finished(report) => {
                    let file = report.path.rsplit('/').next().unwrap_or_default();
                    self.finished.push((file.to_owned(), report.outcome.kind()))
                }
                Event::Done(summary) => self.done = Some((*summary).clone()),
            }
        }
    }

    fn suite(specs: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in specs {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn run_counting(config: &RunConfig) -> (Collect, usize) {
        let created = AtomicUsize::new(0);
        let factory = || -> Box<dyn Implementation + Send> {
            created.fetch_add(1, Ordering::SeqCst);
            Box::new(Builtin::new())
        };
        let mut collect = Collect::default();
        run(config, &factory, &mut collect).unwrap();
        (collect, created.into_inner())
    }

    #[test]
    fn each_worker_gets_its_own_implementation_and_order_is_kept() {
        let names = ["a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml"];
        let dir = suite(&names.map(|name| (name, PASSING)));
        for (jobs, expected_workers) in [(1, 1), (3, 3), (8, 5)] {
            let config = RunConfig {
                paths: vec![dir.path().to_path_buf()],
                jobs: NonZeroUsize::new(jobs),
                ..RunConfig::default()
            };
            let (collect, created) = run_counting(&config);
            assert_eq!(created, expected_workers, "{jobs} jobs");
            let files: Vec<&str> = collect.finished.iter().map(|(f, _)| f.as_str()).collect();
            assert_eq!(files, names);
            assert_eq!(collect.started, Some((5, 0)));
            assert_eq!(collect.done.unwrap().passed, 5);
        }
    }

    /// Logs every spec it is made for: which worker, which of its processes (a new one after
    /// each `forget_spec`), and whether the spec is the hidden one (`max_attempts: 7`).
    struct Logs {
        inner: Builtin,
        worker: usize,
        process: usize,
        log: Arc<std::sync::Mutex<Vec<(usize, usize, bool)>>>,
    }

    impl Implementation for Logs {
        fn info(&self) -> ImplInfo {
            ImplInfo {
                label: "logs".into(),
                language: "rust".into(),
                is_reference: false,
            }
        }

        fn create(
            &mut self,
            contract: &str,
            args: &serde_json::Value,
            world: &mut dyn crate::model::implementation::WorldHost,
        ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError>
        {
            let hidden = args.to_string().contains('7');
            self.log
                .lock()
                .unwrap()
                .push((self.worker, self.process, hidden));
            self.inner.create(contract, args, world)
        }

        fn call(
            &mut self,
            method: &str,
            args: &[serde_json::Value],
            world: &mut dyn crate::model::implementation::WorldHost,
        ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError>
        {
            self.inner.call(method, args, world)
        }

        fn forget_spec(&mut self) {
            self.process += 1;
        }
    }

    #[test]
    fn hidden_specs_run_after_every_visible_one_in_processes_of_their_own() {
        let hidden = PASSING.replace(
            "name: passes\n",
            "name: hidden\nvisibility: hidden\nmax_attempts: 7\n",
        );
        let dir = suite(&[
            ("a.yaml", hidden.as_str()),
            ("b.yaml", PASSING),
            ("c.yaml", hidden.as_str()),
            ("d.yaml", PASSING),
            ("e.yaml", PASSING),
        ]);
        for jobs in [1, 2] {
            let log = Arc::new(std::sync::Mutex::new(Vec::new()));
            let workers = AtomicUsize::new(0);
            let factory = || -> Box<dyn Implementation + Send> {
                Box::new(Logs {
                    inner: Builtin::new(),
                    worker: workers.fetch_add(1, Ordering::SeqCst),
                    process: 0,
                    log: Arc::clone(&log),
                })
            };
            let config = RunConfig {
                paths: vec![dir.path().to_path_buf()],
                jobs: NonZeroUsize::new(jobs),
                ..RunConfig::default()
            };
            let mut collect = Collect::default();
            run(&config, &factory, &mut collect).unwrap();
            // Told in the specs' order, all passed.
            let files: Vec<&str> = collect.finished.iter().map(|(f, _)| f.as_str()).collect();
            assert_eq!(files, ["a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml"]);
            assert_eq!(collect.done.unwrap().passed, 5);
            let log = log.lock().unwrap().clone();
            assert_eq!(log.len(), 5, "{jobs} jobs: {log:?}");
            let first_hidden = log.iter().position(|(_, _, hidden)| *hidden).unwrap();
            assert!(
                log[first_hidden..].iter().all(|(_, _, hidden)| *hidden),
                "{jobs} jobs: a visible spec ran after a hidden one: {log:?}"
            );
            for (worker, process, _) in &log[first_hidden..] {
                let shared = log.iter().filter(|(w, p, _)| w == worker && p == process);
                assert_eq!(shared.count(), 1, "{jobs} jobs: {log:?}");
            }
        }
    }

    #[test]
    fn filters_then_partition_choose_the_specs() {
        let dir = suite(&[
            ("a.yaml", PASSING),
            ("b.yaml", FAILING),
            ("c.yaml", PASSING),
            ("d.yaml", PASSING),
        ]);
        let config = RunConfig {
            paths: vec![dir.path().to_path_buf()],
            filters: vec![SpecFilter::new("passes").unwrap()],
            partition: Some("2/2".parse().unwrap()),
            ..RunConfig::default()
        };
        let (collect, _) = run_counting(&config);
        // a, c, d pass the filter; the second of two partitions gets c.
        assert_eq!(
            collect.finished,
            [("c.yaml".to_owned(), OutcomeKind::Passed)]
        );
        assert_eq!(collect.started, Some((1, 3)));
    }

    #[test]
    fn fail_fast_skips_the_specs_it_did_not_start() {
        let dir = suite(&[
            ("a.yaml", PASSING),
            ("b.yaml", FAILING),
            ("c.yaml", PASSING),
        ]);
        let config = RunConfig {
            paths: vec![dir.path().to_path_buf()],
            jobs: NonZeroUsize::new(1),
            fail_fast: true,
            ..RunConfig::default()
        };
        let (collect, _) = run_counting(&config);
        assert_eq!(
            collect.finished,
            [
                ("a.yaml".to_owned(), OutcomeKind::Passed),
                ("b.yaml".to_owned(), OutcomeKind::Mismatch),
                ("c.yaml".to_owned(), OutcomeKind::Skipped),
            ]
        );
        let summary = collect.done.unwrap();
        assert_eq!(summary.exit_code(), exit::FAILED);
        assert_eq!(summary.skipped, 1);
    }

    #[test]
    fn each_reference_verdict_is_worked_out_once_ahead_or_when_asked() {
        let judged: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
        let judge = |i: usize| {
            judged[i].fetch_add(1, Ordering::SeqCst);
            (i == 2).then(|| Outcome::Skipped(format!("spec {i}")))
        };
        let verdicts = ReferenceVerdicts::new(4, &judge);
        // Asked for before working ahead reaches it: worked out on the spot.
        assert!(verdicts.verdict(1).is_none());
        verdicts.work_ahead();
        let counts: Vec<usize> = judged.iter().map(|n| n.load(Ordering::SeqCst)).collect();
        assert_eq!(counts, [1, 1, 1, 1]);
        // Worked out ahead: handed over, never worked out again.
        assert!(matches!(verdicts.verdict(2), Some(Outcome::Skipped(why)) if why == "spec 2"));
        assert!(verdicts.verdict(3).is_none());
        let counts: Vec<usize> = judged.iter().map(|n| n.load(Ordering::SeqCst)).collect();
        assert_eq!(counts, [1, 1, 1, 1]);
    }

    #[test]
    fn working_ahead_stops_when_the_run_is_over() {
        let judged = AtomicUsize::new(0);
        let judge = |_: usize| {
            judged.fetch_add(1, Ordering::SeqCst);
            None
        };
        let verdicts = ReferenceVerdicts::new(3, &judge);
        verdicts.finish();
        verdicts.work_ahead();
        assert_eq!(judged.load(Ordering::SeqCst), 0);
    }

    /// Not the reference, so every spec is judged by the reference first; otherwise the
    /// built-in itself.
    struct NotTheReference(Builtin);

    impl Implementation for NotTheReference {
        fn info(&self) -> ImplInfo {
            ImplInfo {
                label: "not-the-reference".into(),
                language: "rust".into(),
                is_reference: false,
            }
        }

        fn create(
            &mut self,
            contract: &str,
            args: &serde_json::Value,
            world: &mut dyn crate::model::implementation::WorldHost,
        ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError>
        {
            self.0.create(contract, args, world)
        }

        fn call(
            &mut self,
            method: &str,
            args: &[serde_json::Value],
            world: &mut dyn crate::model::implementation::WorldHost,
        ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError>
        {
            self.0.call(method, args, world)
        }
    }

    #[test]
    fn a_spec_the_reference_fails_judges_no_other_implementation_for_any_jobs() {
        let dir = suite(&[
            ("a.yaml", PASSING),
            ("b.yaml", FAILING),
            ("c.yaml", PASSING),
            ("d.yaml", FAILING),
        ]);
        for jobs in [1, 2] {
            let config = RunConfig {
                paths: vec![dir.path().to_path_buf()],
                jobs: NonZeroUsize::new(jobs),
                ..RunConfig::default()
            };
            let factory =
                || -> Box<dyn Implementation + Send> { Box::new(NotTheReference(Builtin::new())) };
            let mut collect = Collect::default();
            run(&config, &factory, &mut collect).unwrap();
            assert_eq!(
                collect.finished,
                [
                    ("a.yaml".to_owned(), OutcomeKind::Passed),
                    ("b.yaml".to_owned(), OutcomeKind::SpecError),
                    ("c.yaml".to_owned(), OutcomeKind::Passed),
                    ("d.yaml".to_owned(), OutcomeKind::SpecError),
                ],
                "{jobs} jobs"
            );
        }
    }

    #[test]
    fn a_spent_budget_runs_nothing_and_says_every_spec_not_run() {
        let dir = suite(&[("a.yaml", PASSING), ("b.yaml", PASSING)]);
        let config = RunConfig {
            paths: vec![dir.path().to_path_buf()],
            jobs: NonZeroUsize::new(1),
            deadline: Some(Instant::now()),
            ..RunConfig::default()
        };
        let (collect, _) = run_counting(&config);
        assert_eq!(
            collect.finished,
            [
                ("a.yaml".to_owned(), OutcomeKind::Skipped),
                ("b.yaml".to_owned(), OutcomeKind::Skipped),
            ]
        );
        let summary = collect.done.unwrap();
        assert_eq!((summary.not_run_budget, summary.skipped), (2, 2));
        // A run its budget stopped is no pass, though nothing failed.
        assert_eq!(summary.exit_code(), exit::FAILED);
        assert_eq!(
            summary.notes,
            ["the run's budget ran out after 0 of its 2 specs; 2 not run"]
        );
        // A budget not spent changes nothing.
        let config = RunConfig {
            deadline: Some(Instant::now() + Duration::from_secs(3600)),
            ..config
        };
        let summary = run_counting(&config).0.done.unwrap();
        assert_eq!((summary.passed, summary.not_run_budget), (2, 0));
        assert_eq!(summary.exit_code(), exit::PASSED);
    }

    /// The built-in, with a start of its own: it rewrites the spec file `rewrites` as it
    /// starts, which only a start before the specs are read can show in the report.
    struct StartsAhead {
        inner: Builtin,
        rewrites: PathBuf,
        started: Arc<AtomicUsize>,
    }

    impl StartsAhead {
        /// Makes built-ins that rewrite `rewrites` as they start, counting starts in `started`.
        fn factory(
            rewrites: PathBuf,
            started: &Arc<AtomicUsize>,
        ) -> impl Fn() -> Box<dyn Implementation + Send> + Sync + use<> {
            let started = Arc::clone(started);
            move || -> Box<dyn Implementation + Send> {
                Box::new(StartsAhead {
                    inner: Builtin::new(),
                    rewrites: rewrites.clone(),
                    started: Arc::clone(&started),
                })
            }
        }
    }

    impl Implementation for StartsAhead {
        fn info(&self) -> ImplInfo {
            self.inner.info()
        }

        fn begin_start(&mut self) {
            self.started.fetch_add(1, Ordering::SeqCst);
            std::fs::write(
                &self.rewrites,
                PASSING.replace("passes", "read after the start"),
            )
            .unwrap();
        }

        fn create(
            &mut self,
            contract: &str,
            args: &serde_json::Value,
            world: &mut dyn crate::model::implementation::WorldHost,
        ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError>
        {
            self.inner.create(contract, args, world)
        }

        fn call(
            &mut self,
            method: &str,
            args: &[serde_json::Value],
            world: &mut dyn crate::model::implementation::WorldHost,
        ) -> Result<crate::model::implementation::Reply, crate::model::implementation::ImplError>
        {
            self.inner.call(method, args, world)
        }
    }

    /// Names what each spec was called in the report.
    #[derive(Default)]
    struct Names(Vec<Option<String>>);

    impl Reporter for Names {
        fn event(&mut self, event: &Event) {
            if let Event::Finished(report) = event {
                self.0.push(report.name.clone());
            }
        }
    }

    #[test]
    fn the_implementation_starts_before_the_specs_are_read_and_once() {
        let dir = suite(&[("a.yaml", PASSING)]);
        let started = Arc::new(AtomicUsize::new(0));
        let factory = StartsAhead::factory(dir.path().join("a.yaml"), &started);
        let config = RunConfig {
            paths: vec![dir.path().to_path_buf()],
            jobs: NonZeroUsize::new(1),
            ..RunConfig::default()
        };
        let mut names = Names::default();
        let summary = run(&config, &factory, &mut names).unwrap();
        assert_eq!(names.0, [Some("read after the start".to_owned())]);
        assert_eq!(summary.passed, 1);
        assert_eq!(started.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn paths_that_hold_no_spec_start_no_implementation() {
        let dir = tempfile::tempdir().unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        let factory = StartsAhead::factory(dir.path().join("never.yaml"), &started);
        let config = RunConfig {
            paths: vec![dir.path().to_path_buf()],
            ..RunConfig::default()
        };
        let error = run(&config, &factory, &mut Names::default()).err();
        assert!(
            matches!(error, Some(RunError::NothingSelected(_))),
            "{error:?}"
        );
        assert_eq!(started.load(Ordering::SeqCst), 0);
        assert!(!dir.path().join("never.yaml").exists());
    }

    #[test]
    fn a_run_that_leaves_its_specs_to_the_exit_reports_the_same() {
        let dir = suite(&[("a.yaml", PASSING), ("b.yaml", FAILING)]);
        let config = RunConfig {
            paths: vec![dir.path().to_path_buf()],
            ..RunConfig::default()
        };
        let (kept, _) = run_counting(&config);
        let (left, _) = run_counting(&RunConfig {
            last_in_process: true,
            ..config
        });
        assert_eq!(kept.finished, left.finished);
        let counts = |summary: Option<Summary>| summary.map(|s| (s.passed, s.failed()));
        assert_eq!(counts(kept.done), counts(left.done));
    }
}
