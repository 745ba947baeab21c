//! `dlqspec explore`: finding the bugs nobody wrote a spec for.
//!
//! Each contract generates random scenarios from its own vocabulary (`Contract::explorer`);
//! the built-in reference fills in every expectation (the scenario is *blessed*), and the
//! implementation under test runs the result. A difference is a divergence from the rules:
//! the case is shrunk to a minimal spec that the built-in passes and the implementation fails,
//! named after what differs and claiming the rules its run exercises, ready for `specs/`.
//! This is model-based testing with the reference as the model, in the manner of QuickCheck's
//! state machines and Hypothesis's stateful tests.
//!
//! `crashes` runs one spec under every schedule of injected crashes instead, checking
//! invariants that hold whatever crashes; `crate::strength` measures a suite with the
//! contracts' catalogues of classic mistakes.
//!
//! Generated cases are blessed by the layer above their generator: a contract's `generate` side
//! only draws steps and offers smaller variants; this layer fills in the expectations from the
//! built-in (`authoring::bless`) and judges the result, so a generated spec can never make a
//! correct implementation fail. How a search is told is `render.rs`. It may use `authoring/` and
//! below.

pub(crate) mod case;
pub mod crashes;
pub(crate) mod render;
pub(crate) mod shrink;

use std::time::{Duration, Instant};

use case::CaseVerdict;
use shrink::Failing;

use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{Contract, RunMode, Smell};
use crate::generate::Explorer;
use crate::generate::case::Header;
use crate::generate::crashes::CrashPoint;
use crate::generate::rng::Rng;
use crate::load::loader;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::text::source::SourceFile;

/// How much to explore.
#[derive(Clone)]
pub struct ExploreSettings {
    pub seed: u64,
    /// Cases per contract.
    pub cases: u64,
    /// Stop starting cases after this long, even with cases left.
    pub time: Option<Duration>,
    /// The contracts to explore, in turn.
    pub contracts: Vec<&'static dyn Contract>,
    /// The most variants shrinking judges.
    pub shrink_tries: usize,
    /// What else a found spec's name says it was found on, besides the seed and the case
    /// (`strength` names the mistake), so specs found on different implementations differ.
    pub tag: Option<String>,
}

/// Cases per contract when `--cases` is not given: enough to find every broken solution of
/// the project's corpus, and every classic mistake of the catalogues, with seed 1 (CI checks
/// both with that seed; another seed explores other cases and may need more).
pub(crate) const DEFAULT_CASES: u64 = 400;

/// Variants shrinking judges at most, when not told.
pub(crate) const DEFAULT_SHRINK_TRIES: usize = 2000;

/// What happens during exploration, for reporters.
pub enum ExploreEvent<'a> {
    Started {
        seed: u64,
        implementation: &'a str,
        contracts: &'a [&'static str],
        cases: u64,
        time: Option<Duration>,
    },
    /// The implementation does not provide a contract: it is not explored.
    Skipped {
        contract: &'static str,
        reason: &'a str,
    },
    /// A case passed; `run` cases have run in all.
    Passed {
        run: u64,
    },
    /// A case of `contract` diverges (`origin` says which); shrinking starts.
    Diverged {
        contract: &'static str,
        origin: &'a str,
        steps: usize,
        after: Duration,
    },
    /// Shrinking goes on: `tries` variants judged, the smallest failing one has `steps` steps.
    Shrinking {
        tries: usize,
        steps: usize,
    },
    Done(&'a ExploreSummary),
    /// Crash schedules (see `crashes`) start on one spec.
    CrashesStarted {
        spec: &'a str,
        implementation: &'a str,
        max_crashes: usize,
        invariants: &'a [&'static str],
    },
    /// `run` schedules have run so far.
    SchedulesRan {
        run: u64,
    },
    /// A schedule breaks an invariant.
    Violated {
        schedule: &'a [CrashPoint],
        violations: &'a [String],
    },
    CrashesDone(&'a crashes::CrashesSummary),
}

/// Hears what exploring does; reporters implement it.
pub trait Observer {
    fn event(&mut self, event: &ExploreEvent);
}

/// An observer that hears nothing, for callers that only want the summary.
pub struct Quiet;

impl Observer for Quiet {
    fn event(&mut self, _: &ExploreEvent) {}
}

/// What an exploration came to.
#[derive(Debug)]
pub struct ExploreSummary {
    pub seed: u64,
    pub implementation: String,
    /// Cases run, per explored contract, in order.
    pub cases: Vec<(&'static str, u64)>,
    /// Contracts the implementation does not provide, and why.
    pub skipped: Vec<(&'static str, String)>,
    /// Generated cases the built-in implementation could not pass, and the first reason: a
    /// bug of the generator for a contract written in Rust, an error of the exercise for an
    /// exercise folder (its draws make cases its reference refuses).
    pub invalid: (u64, Option<String>),
    /// The contract of the first invalid case.
    pub invalid_of: Option<&'static str>,
    pub elapsed: Duration,
    /// The first divergence, shrunk to a spec.
    pub finding: Option<Finding>,
    /// Why the implementation could not be explored at all (it did not start).
    pub broken: Option<String>,
}

impl ExploreSummary {
    pub fn total_cases(&self) -> u64 {
        self.cases.iter().map(|(_, n)| n).sum()
    }

    /// Cases per second, shrinking left out.
    pub(crate) fn rate(&self) -> f64 {
        let shrinking = self
            .finding
            .as_ref()
            .map_or(Duration::ZERO, |f| f.shrink_time);
        let searching = self.elapsed.saturating_sub(shrinking);
        self.total_cases() as f64 / searching.as_secs_f64().max(1e-9)
    }
}

/// A divergence, shrunk to a spec the built-in passes and the implementation fails.
#[derive(Debug)]
pub struct Finding {
    pub contract: &'static str,
    /// Where the case came from: `explore seed 7, case 12`.
    pub origin: String,
    /// From the start of the exploration to the divergence.
    pub found_after: Duration,
    pub steps_before: usize,
    pub steps: usize,
    pub tries: usize,
    pub shrink_time: Duration,
    /// The spec, whole: header, steps, expectations.
    pub spec: String,
    /// A file name for it, e.g. `CONTRACT-seedS-caseN.yaml`.
    pub file_name: String,
    /// Where and what differs, in one line.
    pub divergence: String,
    /// The implementation's outcome on the spec (a mismatch with its diff, or an error),
    /// pointing into `spec`.
    pub outcome: Outcome,
    /// What `dlqspec lint` would say about the spec (nothing, usually).
    pub smells: Vec<Smell>,
}

/// Explores `implementation` as `settings` say, stopping at the first divergence.
pub fn search(
    settings: &ExploreSettings,
    implementation: &mut dyn Implementation,
    observer: &mut dyn Observer,
) -> ExploreSummary {
    let started = Instant::now();
    let label = implementation.info().label;
    let mut summary = ExploreSummary {
        seed: settings.seed,
        implementation: label.clone(),
        cases: Vec::new(),
        skipped: Vec::new(),
        invalid: (0, None),
        invalid_of: None,
        elapsed: Duration::ZERO,
        finding: None,
        broken: None,
    };
    let offer = match implementation.offer() {
        Ok(offer) => offer,
        Err(error) => {
            summary.broken = Some(format!("{label} cannot be explored: {}", error.message));
            observer.event(&ExploreEvent::Done(&summary));
            return summary;
        }
    };
    let mut explored: Vec<(&'static dyn Contract, &'static dyn Explorer)> = Vec::new();
    for contract in &settings.contracts {
        let reason = match (contract.explorer(), &offer) {
            (None, _) => Some(format!("{} has no scenario generator", contract.name())),
            (Some(_), Some(offer)) if !offer.contracts.iter().any(|c| c == contract.name()) => {
                Some(format!("{label} has no class {}", contract.subject()))
            }
            _ => None,
        };
        match (reason, contract.explorer()) {
            (None, Some(explorer)) => explored.push((*contract, explorer)),
            (reason, _) => summary
                .skipped
                .push((contract.name(), reason.unwrap_or_default())),
        }
    }
    let names: Vec<&'static str> = explored.iter().map(|(c, _)| c.name()).collect();
    observer.event(&ExploreEvent::Started {
        seed: settings.seed,
        implementation: &label,
        contracts: &names,
        cases: settings.cases,
        time: settings.time,
    });
    for (contract, reason) in &summary.skipped {
        observer.event(&ExploreEvent::Skipped {
            contract,
            reason: reason.as_str(),
        });
    }
    summary.cases = names.iter().map(|name| (*name, 0)).collect();
    let mut run = 0;
    'cases: for case_number in 1..=settings.cases {
        for (index, &(contract, explorer)) in explored.iter().enumerate() {
            if summary.skipped.iter().any(|(c, _)| *c == contract.name()) {
                continue;
            }
            if settings
                .time
                .is_some_and(|limit| started.elapsed() >= limit)
            {
                break 'cases;
            }
            let mut rng = Rng::for_case(settings.seed, contract.name(), case_number);
            let case = explorer.generate(&mut rng);
            summary.cases[index].1 += 1;
            run += 1;
            match case::judge_case(contract.name(), case.as_ref(), implementation) {
                CaseVerdict::Passed => observer.event(&ExploreEvent::Passed { run }),
                CaseVerdict::Invalid(why) => {
                    summary.invalid.0 += 1;
                    summary.invalid.1.get_or_insert(why);
                    summary.invalid_of.get_or_insert(contract.name());
                }
                CaseVerdict::Skipped(reason) => {
                    observer.event(&ExploreEvent::Skipped {
                        contract: contract.name(),
                        reason: &reason,
                    });
                    summary.skipped.push((contract.name(), reason));
                }
                CaseVerdict::Failed { text, run } => {
                    let failing = Failing { case, text, run };
                    let found = FoundDivergence {
                        contract,
                        origin: match &settings.tag {
                            None => format!("explore seed {}, case {case_number}", settings.seed),
                            Some(tag) => {
                                format!("explore seed {}, case {case_number}, {tag}", settings.seed)
                            }
                        },
                        found_by: format!(
                            "Found by `dlqspec explore --seed {}` against {label} (case {case_number} of {})",
                            settings.seed,
                            contract.name()
                        ),
                        file_name: format!(
                            "{}-seed{}-case{case_number}.yaml",
                            contract.name(),
                            settings.seed
                        ),
                        after: started.elapsed(),
                    };
                    summary.finding = Some(finish(
                        found,
                        failing,
                        implementation,
                        settings.shrink_tries,
                        observer,
                    ));
                    break 'cases;
                }
            }
        }
        if summary.skipped.len() == settings.contracts.len() {
            break;
        }
    }
    summary.elapsed = started.elapsed();
    observer.event(&ExploreEvent::Done(&summary));
    summary
}

/// Where a divergence was found, for naming its spec.
pub(crate) struct FoundDivergence {
    pub(crate) contract: &'static dyn Contract,
    /// Where the case came from, for the spec's name: `explore seed 7, case 12`.
    pub(crate) origin: String,
    /// How it was found: the opening sentence of the spec's description.
    pub(crate) found_by: String,
    /// The file name to write the spec under.
    pub(crate) file_name: String,
    /// From the start of the exploration to the divergence.
    pub(crate) after: Duration,
}

/// Shrinks a failing case and writes it up as a spec.
pub(crate) fn finish(
    found: FoundDivergence,
    failing: Failing,
    implementation: &mut dyn Implementation,
    max_tries: usize,
    observer: &mut dyn Observer,
) -> Finding {
    let contract = found.contract;
    let steps_before = failing.case.steps();
    observer.event(&ExploreEvent::Diverged {
        contract: contract.name(),
        origin: &found.origin,
        steps: steps_before,
        after: found.after,
    });
    let shrunk = shrink::shrink(
        contract.name(),
        failing,
        implementation,
        max_tries,
        &mut |tries, steps| observer.event(&ExploreEvent::Shrinking { tries, steps }),
    );
    let failing = shrunk.failing;
    let divergence = shrink::divergence(&failing.run, contract.name());
    let exercised = exercised(contract, &failing.text);
    let name = format!(
        "{} ({})",
        shrink::headline(&failing.run, contract.name()),
        found.origin
    );
    let stop = if divergence.ends_with(['.', '!', '?']) {
        ""
    } else {
        "."
    };
    let description = format!(
        "{}, and shrunk from {steps_before} steps to {}. {} passes this spec; that implementation differs {divergence}{stop}",
        found.found_by,
        failing.case.steps(),
        crate::contracts::registry::reference_called(
            contract.name(),
            "The built-in implementation"
        ),
    );
    let header = Header {
        contract: contract.name(),
        name: &name,
        description: &description,
        rules: &exercised,
        // The bundled schema describes the built-in contracts' steps; an exercise folder's
        // specs have their own (`dlqspec schema --exercise DIR`).
        schema_line: crate::contracts::registry::is_built_in(contract.name()),
    };
    let text = crate::generate::case::spec_text(&header, &failing.case.body());
    // The spec as written: blessed again under its real header, and judged once more, so what
    // is reported is exactly what the file says.
    let (spec, outcome) = match case::judge(contract.name(), text, implementation) {
        CaseVerdict::Failed { text, run } => (text, run.outcome),
        _ => (failing.text.clone(), failing.run.outcome.clone()),
    };
    let smells = smells_of(&spec);
    Finding {
        contract: contract.name(),
        origin: found.origin,
        found_after: found.after,
        steps_before,
        steps: failing.case.steps(),
        tries: shrunk.tries,
        shrink_time: shrunk.elapsed,
        spec,
        file_name: found.file_name,
        divergence,
        outcome,
        smells,
    }
}

/// The rules the built-in's run of `text` exercises, in the contract's order.
fn exercised(contract: &'static dyn Contract, text: &str) -> Vec<&'static str> {
    let path = case::virtual_path(contract.name());
    let Ok(spec) = loader::load(SourceFile::from_text(path, text)) else {
        return Vec::new();
    };
    let run = spec.run(&mut Builtin::new(), RunMode::Check);
    contract
        .rules()
        .iter()
        .map(|rule| rule.id)
        .filter(|id| run.exercised.contains(id))
        .collect()
}

/// The smells `dlqspec lint` finds in the spec's own run on the built-in implementation.
fn smells_of(text: &str) -> Vec<Smell> {
    let Ok(spec) = loader::load(SourceFile::from_text("explored.yaml", text)) else {
        return Vec::new();
    };
    spec.scenario
        .smells(&mut Builtin::new())
        .map(|(smells, _)| smells)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(cases: u64) -> ExploreSettings {
        ExploreSettings {
            seed: 7,
            cases,
            time: None,
            contracts: crate::contracts::all(),
            shrink_tries: DEFAULT_SHRINK_TRIES,
            tag: None,
        }
    }

    #[test]
    fn the_built_in_never_diverges_from_itself_and_every_case_is_valid() {
        let settings = settings(60);
        let summary = search(&settings, &mut Builtin::new(), &mut Quiet);
        assert!(summary.finding.is_none(), "{:?}", summary.finding);
        assert_eq!(summary.invalid, (0, None));
        assert_eq!(summary.total_cases(), 60 * settings.contracts.len() as u64);
        assert!(summary.skipped.is_empty());
    }

    #[test]
    fn a_mistake_is_found_and_shrunk_to_a_spec_it_fails_and_the_reference_passes() {
        let contract = crate::contracts::find("dlq-consumer").expect("registered");
        let mut mistaken = contract.mistaken("retries-permanent").expect("a mistake");
        let mut only = settings(DEFAULT_CASES);
        only.contracts = vec![contract];
        let summary = search(&only, &mut mistaken, &mut Quiet);
        let finding = summary.finding.expect("found");
        assert!(finding.steps <= finding.steps_before);
        assert!(matches!(finding.outcome, Outcome::Mismatch(_)));
        let spec = loader::load(SourceFile::from_text("f.yaml", finding.spec.as_str()))
            .expect("the spec loads");
        let reference = spec.run(&mut Builtin::new(), RunMode::Check);
        assert!(matches!(reference.outcome, Outcome::Passed));
        let claimed: Vec<&str> = spec.scenario.header().rule_ids().collect();
        assert!(claimed.contains(&"dlq-consumer/permanent"), "{claimed:?}");
        assert!(
            finding.spec.contains("explore seed 7, case"),
            "{}",
            finding.spec
        );
    }

    /// The mistakes only a call that takes time, or a subclass of a given error, shows: each is
    /// found with seed 1 within the default budget, and shrunk to a spec whose handler keeps
    /// what the mistake needs (`takes`, a subclass) and drops what it does not.
    #[test]
    fn a_mistake_only_a_slow_call_or_a_subclass_shows_is_found_and_shrunk_to_it() {
        let contract = crate::contracts::find("dlq-consumer").expect("registered");
        for (mistake, needed, needless) in [
            ("failed-at-before-handler", "takes: ", "class: "),
            ("subclass-blind", "class: ", "takes: "),
            ("error-names-given-class", "class: ", "takes: "),
        ] {
            let mut mistaken = contract.mistaken(mistake).expect("a mistake");
            let mut only = settings(DEFAULT_CASES);
            only.seed = 1;
            only.contracts = vec![contract];
            let summary = search(&only, &mut mistaken, &mut Quiet);
            let finding = summary
                .finding
                .unwrap_or_else(|| panic!("{mistake}: not found in {DEFAULT_CASES} cases"));
            let handler: String = finding
                .spec
                .lines()
                .skip_while(|line| *line != "handler:")
                .take_while(|line| *line != "steps:")
                .collect::<Vec<_>>()
                .join("\n");
            assert!(
                handler.contains(needed) && !handler.contains(needless),
                "{mistake}: the handler should name `{needed}` and not `{needless}`:\n{}",
                finding.spec
            );
            let spec = loader::load(SourceFile::from_text("f.yaml", finding.spec.as_str()))
                .expect("the spec loads");
            let reference = spec.run(&mut Builtin::new(), RunMode::Check);
            assert!(matches!(reference.outcome, Outcome::Passed), "{mistake}");
            let mut again = contract.mistaken(mistake).expect("a mistake");
            let replayed = spec.run(&mut again, RunMode::Check);
            assert!(
                matches!(replayed.outcome, Outcome::Mismatch(_)),
                "{mistake}: {:?}",
                replayed.outcome
            );
        }
    }

    /// How many cases each classic mistake takes to be found, over several seeds: what the
    /// default budget is chosen from. `cargo test --release --lib detection -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn detection_statistics() {
        let seeds: Vec<u64> = (1..=12).collect();
        for contract in crate::contracts::all() {
            for mistake in contract.mistakes() {
                let mut found = Vec::new();
                for seed in &seeds {
                    let mut mistaken = contract.mistaken(mistake.id).expect("a mistake");
                    let only = ExploreSettings {
                        seed: *seed,
                        cases: 3000,
                        time: None,
                        contracts: vec![contract],
                        shrink_tries: 0,
                        tag: None,
                    };
                    let summary = search(&only, &mut mistaken, &mut Quiet);
                    found.push(if summary.finding.is_some() {
                        summary.total_cases()
                    } else {
                        u64::MAX
                    });
                }
                found.sort_unstable();
                eprintln!(
                    "{:>32} worst {:>6} median {:>5} {:?}",
                    mistake.id,
                    found[found.len() - 1],
                    found[found.len() / 2],
                    found
                );
            }
        }
    }
}
