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
use crate::model::cause::Departure;
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
    /// For a caught mistake written in a file (an exercise's `mistakes/`): where the first
    /// failing spec's cause names another rule than the file's header claims.
    pub(crate) misnamed: Option<Misnamed>,
}

/// A known mistake whose failures are told under another rule than its header names.
#[derive(Debug)]
pub(crate) struct Misnamed {
    /// The mistake's file, as shown (`mistakes/x.py`).
    pub(crate) path: String,
    /// Its first line (the header), for the caret.
    pub(crate) header: Option<crate::text::source::Excerpt>,
    /// The rule the first failing spec's cause names (no failing spec's cause names the header's);
    /// `None` where no rule decides that point.
    pub(crate) named: Option<&'static str>,
    /// Where the mistake departs from the reference, in words.
    pub(crate) told: String,
}

impl Misnamed {
    /// What the author reads: which rule the failures name, and the two fixes.
    pub(crate) fn message(&self, mistake: &Mistake) -> String {
        let claimed = mistake.rule.id;
        let slug = |id: &str| id.rsplit('/').next().unwrap_or(id).to_owned();
        match self.named {
            Some(named) => format!(
                "its header says it breaks `{claimed}`, but no spec that catches it tells that rule; the first tells `{named}` (where it departs: {}): write `breaks {}:` in the header, or make a pattern of `{}`'s `decides` in exercise.yaml match that call or view, more specific than `{}`'s",
                self.told,
                slug(named),
                slug(claimed),
                slug(named)
            ),
            None => format!(
                "its header says it breaks `{claimed}`, but no rule's `decides` matches where it departs ({}), so no spec that catches it names a rule: give `{}` in exercise.yaml a `decides` pattern for that call or view, or name in the header the rule that decides it",
                self.told,
                slug(claimed)
            ),
        }
    }
}

impl StrengthReport {
    pub(crate) fn caught(&self) -> usize {
        self.contracts.iter().map(ContractStrength::caught).sum()
    }

    pub(crate) fn total(&self) -> usize {
        self.contracts.iter().map(|c| c.mistakes.len()).sum()
    }

    /// The caught mistakes whose failures name another rule than their header.
    pub(crate) fn misnamed(&self) -> usize {
        self.contracts
            .iter()
            .flat_map(|c| &c.mistakes)
            .filter(|v| v.misnamed.is_some())
            .count()
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
    use crate::model::implementation::Implementation;
    let mut implementation = mistaken();
    let catches = |implementation: &mut Builtin, spec: &LoadedSpec| {
        implementation.begin_spec().is_ok()
            && matches!(
                spec.run(implementation, RunMode::Check).outcome,
                Outcome::Mismatch(_) | Outcome::Errored(_)
            )
    };
    let caught_at = specs
        .iter()
        .position(|(_, spec)| catches(&mut implementation, spec));
    let caught = caught_at.map(|at| specs[at]);
    let caught_by = caught.map(|(path, _)| path.clone());
    // A mistake written in a file claims a rule in its header: some spec that catches it must
    // tell its failure under that rule, or a student making that mistake never reads the rule
    // broken. A mistake may show first under another rule (a quarantined job taken again is
    // first an answer to `take`), so the specs after the first are asked too, until one does.
    let file = contract.mistake_file(mistake.id);
    let departure_of = |spec: &LoadedSpec, implementation: &mut Builtin| {
        implementation.begin_spec().ok()?;
        spec.scenario.departure(implementation)
    };
    let misnamed = match (caught, file) {
        (Some((_, spec)), Some(file)) => {
            let names = |d: &Departure| d.rule.is_some_and(|rule| rule.id == mistake.rule.id);
            let first = departure_of(spec, &mut implementation);
            let mut named = first.as_ref().is_some_and(names);
            if !named && first.is_some() {
                let later = &specs[caught_at.map_or(specs.len(), |at| at + 1)..];
                named = later.iter().any(|(_, spec)| {
                    catches(&mut implementation, spec)
                        && departure_of(spec, &mut implementation).is_some_and(|d| names(&d))
                });
            }
            first.filter(|_| !named).map(|d| {
                let source = crate::text::source::SourceFile::read(&file).ok();
                // Shown from where dlqspec runs, as the specs are.
                let shown = std::env::current_dir()
                    .ok()
                    .and_then(|here| file.strip_prefix(here).ok().map(PathBuf::from))
                    .unwrap_or_else(|| file.clone());
                Misnamed {
                    path: crate::text::source::display_path(&shown),
                    header: source
                        .and_then(|s| s.excerpt(crate::text::source::Position::new(1, 1))),
                    named: d.rule.map(|rule| rule.id),
                    told: d.told,
                }
            })
        }
        _ => None,
    };
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
        misnamed,
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
    fn a_misnamed_mistake_names_the_rule_its_failures_name_and_both_fixes() {
        let rule = |id: &'static str| -> &'static crate::model::rule::Rule {
            Box::leak(Box::new(crate::model::rule::Rule { id, statement: "s" }))
        };
        let mistake = Mistake {
            id: "refreshes",
            rule: rule("toy/first-seen-false"),
            what: "w",
        };
        let misnamed = |named| Misnamed {
            path: "mistakes/refreshes.py".into(),
            header: None,
            named,
            told: "seen: state's keys differ".into(),
        };
        let told = misnamed(Some("toy/no-refresh")).message(&mistake);
        assert!(
            told.starts_with("its header says it breaks `toy/first-seen-false`, but no spec that catches it tells that rule; the first tells `toy/no-refresh` (where it departs: seen: state's keys differ)"),
            "{told}"
        );
        assert!(
            told.contains("write `breaks no-refresh:` in the header"),
            "{told}"
        );
        assert!(told.contains("`first-seen-false`'s `decides`"), "{told}");
        let told = misnamed(None).message(&mistake);
        assert!(
            told.contains("so no spec that catches it names a rule"),
            "{told}"
        );
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
