//! `dlqspec strength`: how strong a suite is, measured on each contract's classic mistakes.
//!
//! It measures a suite as mutation testing measures a test suite, each contract's catalogue of
//! classic mistakes (`crate::model::mistake`) standing for the mutants.
//!
//! Every spec is run against the built-in implementation with one mistake switched on, for
//! every mistake of its contract's catalogue; a mistake is caught when some spec fails on it.
//! For each survivor, `explore` searches for a spec that would catch it, so an author reads
//! "these survive, and this spec would catch the first".
//!
//! How that is told is `render.rs`. It may use `explore/` and below.

pub(crate) mod render;

use std::num::NonZeroUsize;
use std::path::PathBuf;

use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{Contract, RunMode};
use crate::explore::{self, Finding, Quiet};
use crate::load::discover::DiscoverError;
use crate::load::loader::LoadedSpec;
use crate::model::mistake::Mistake;
use crate::model::outcome::Outcome;
use crate::run::runner::{self, RunConfig};

/// Scenarios explore tries per surviving mistake when not told: every mistake of the
/// catalogues is found within far fewer (see `explore::DEFAULT_CASES`).
pub(crate) const DEFAULT_EXPLORE_CASES: u64 = 400;

/// What to measure.
#[derive(Debug, Clone)]
pub(crate) struct StrengthSettings {
    pub(crate) paths: Vec<PathBuf>,
    /// Cases explore tries per survivor; 0 skips the search.
    pub(crate) explore_cases: u64,
    pub(crate) seed: u64,
}

/// A suite's strength.
#[derive(Debug)]
pub(crate) struct StrengthReport {
    /// Spec files found.
    pub(crate) specs: usize,
    /// Specs that judge nobody (they do not load, or the built-in does not pass them), with
    /// what is wrong: path and outcome.
    pub(crate) broken: Vec<(String, Outcome)>,
    /// Per contract the suite has specs of, in registry order.
    pub(crate) contracts: Vec<ContractStrength>,
    /// The seed and budget of the searches for survivors, so the report can say how to
    /// replay them.
    pub(crate) seed: u64,
    pub(crate) explore_cases: u64,
}

#[derive(Debug)]
pub(crate) struct ContractStrength {
    pub(crate) contract: &'static str,
    /// The specs of this contract that judge.
    pub(crate) specs: usize,
    /// Every mistake of the catalogue, in its order.
    pub(crate) mistakes: Vec<MistakeVerdict>,
}

/// What the suite does to one mistake.
#[derive(Debug)]
pub(crate) struct MistakeVerdict {
    pub(crate) mistake: &'static Mistake,
    /// The first spec (path) that fails on it, if any.
    pub(crate) caught_by: Option<String>,
    /// For a survivor: a spec explore found that catches it.
    pub(crate) suggestion: Option<Finding>,
}

impl StrengthReport {
    pub(crate) fn caught(&self) -> usize {
        self.contracts.iter().map(ContractStrength::caught).sum()
    }

    pub(crate) fn total(&self) -> usize {
        self.contracts.iter().map(|c| c.mistakes.len()).sum()
    }
}

impl ContractStrength {
    pub(crate) fn caught(&self) -> usize {
        self.mistakes
            .iter()
            .filter(|v| v.caught_by.is_some())
            .count()
    }
}

/// Measures the specs under `settings.paths`.
pub(crate) fn measure(settings: &StrengthSettings) -> Result<StrengthReport, DiscoverError> {
    let config = RunConfig {
        paths: settings.paths.clone(),
        ..RunConfig::default()
    };
    let prepared = runner::prepare(&config)?;
    let mut report = StrengthReport {
        specs: prepared.len(),
        broken: Vec::new(),
        contracts: Vec::new(),
        seed: settings.seed,
        explore_cases: settings.explore_cases,
    };
    let mut judging: Vec<(String, LoadedSpec)> = Vec::new();
    for (path, loaded) in prepared {
        match loaded {
            Err(error) => report.broken.push((path, Outcome::SpecError(error))),
            Ok(spec) => match spec.run(&mut Builtin::new(), RunMode::Check).outcome {
                Outcome::Passed => judging.push((path, spec)),
                other => report.broken.push((path, other)),
            },
        }
    }
    let workers = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    for contract in crate::contracts::all() {
        let specs: Vec<&(String, LoadedSpec)> = judging
            .iter()
            .filter(|(_, spec)| spec.contract.name() == contract.name())
            .collect();
        if specs.is_empty() {
            continue;
        }
        let catalogue = contract.mistakes();
        let mut mistakes = Vec::with_capacity(catalogue.len());
        crate::run::parallel::run_in_order(
            catalogue.len(),
            vec![(); workers.min(catalogue.len()).max(1)],
            &|_, index| judge(contract, &catalogue[index], &specs, settings),
            &|_| false,
            &mut |_, verdict| mistakes.extend(verdict),
        );
        report.contracts.push(ContractStrength {
            contract: contract.name(),
            specs: specs.len(),
            mistakes,
        });
    }
    Ok(report)
}

/// Runs `specs` on the reference making `mistake`, until one fails; for a survivor, explores.
fn judge(
    contract: &'static dyn Contract,
    mistake: &'static Mistake,
    specs: &[&(String, LoadedSpec)],
    settings: &StrengthSettings,
) -> MistakeVerdict {
    let mistaken = || {
        contract
            .mistaken(mistake.id)
            .unwrap_or_else(|| unreachable!("{} is in the catalogue", mistake.id))
    };
    let mut implementation = mistaken();
    let caught_by = specs.iter().find_map(|(path, spec)| {
        use crate::model::implementation::Implementation;
        implementation.begin_spec().ok()?;
        let outcome = spec.run(&mut implementation, RunMode::Check).outcome;
        matches!(outcome, Outcome::Mismatch(_) | Outcome::Errored(_)).then(|| path.clone())
    });
    let suggestion = if caught_by.is_none() && settings.explore_cases > 0 {
        let search = explore::ExploreSettings {
            seed: settings.seed,
            cases: settings.explore_cases,
            time: None,
            contracts: vec![contract],
            shrink_tries: explore::DEFAULT_SHRINK_TRIES,
            tag: Some(format!("mistake {}", mistake.id)),
        };
        explore::search(&search, &mut mistaken(), &mut Quiet)
            .finding
            .map(|finding| Finding {
                file_name: format!("{}-catches-{}.yaml", contract.name(), mistake.id),
                ..finding
            })
    } else {
        None
    };
    MistakeVerdict {
        mistake,
        caught_by,
        suggestion,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn one_spec_catches_few_mistakes_and_explore_suggests_a_spec_for_a_survivor() {
        let settings = StrengthSettings {
            paths: vec![root().join("specs/dlq-consumer/default-budget-is-three.yaml")],
            explore_cases: 0,
            seed: 1,
        };
        let report = measure(&settings).expect("the spec is found");
        assert_eq!(report.contracts.len(), 1);
        let strength = &report.contracts[0];
        let all = strength.mistakes.len();
        assert!(all >= 40, "{all} mistakes");
        assert!(
            strength.caught() > 0 && strength.caught() < all,
            "{}",
            strength.caught()
        );
        assert!(strength.mistakes.iter().all(|v| v.suggestion.is_none()));
        let caught = strength
            .mistakes
            .iter()
            .find(|v| v.mistake.id == "off-by-one-budget")
            .expect("in the catalogue");
        assert!(caught.caught_by.is_some());
    }

    #[test]
    fn a_broken_spec_is_reported_and_judges_nobody() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("bad.yaml"),
            "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps: [{process: dead}]\n",
        )
        .expect("written");
        let settings = StrengthSettings {
            paths: vec![dir.path().to_path_buf()],
            explore_cases: 0,
            seed: 1,
        };
        let report = measure(&settings).expect("found");
        assert_eq!(report.broken.len(), 1);
        assert!(report.contracts.is_empty());
    }
}
