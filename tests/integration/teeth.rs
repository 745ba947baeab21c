//! The bundled suite has teeth on the real code: the built-in reference implementation of each
//! contract, run with each classic mistake of its catalogue switched on, fails a spec of the
//! rule that mistake breaks, with a mismatch (never a spec error), and passes every spec
//! without one.

use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::Contract;
use dlqspec::model::implementation::Implementation;
use dlqspec::model::outcome::Outcome;
use dlqspec::run::events::SpecReport;
use dlqspec::run::runner::{self, Prepared, RunConfig};

use crate::common::root;

fn suite_of(contract: &dyn Contract) -> Vec<Prepared> {
    let config = RunConfig {
        paths: vec![root().join("specs").join(contract.name())],
        ..RunConfig::default()
    };
    runner::prepare(&config).expect("the bundled suite is found")
}

fn run_suite(suite: &[Prepared], implementation: &mut dyn Implementation) -> Vec<SpecReport> {
    suite
        .iter()
        .map(|spec| runner::run_one(spec, implementation))
        .collect()
}

fn summary(reports: &[SpecReport]) -> String {
    reports
        .iter()
        .map(|r| format!("  {:?} {}\n", r.outcome.kind(), r.path))
        .collect()
}

#[test]
fn the_reference_passes_every_bundled_spec() {
    for contract in crate::common::bundled_contracts() {
        let suite = suite_of(contract);
        let reports = run_suite(&suite, &mut Builtin::new());
        assert!(
            reports.iter().all(|r| matches!(r.outcome, Outcome::Passed)),
            "{}",
            summary(&reports)
        );
    }
}

#[test]
fn every_mistake_of_the_catalogue_fails_a_spec_of_the_rule_it_breaks() {
    let mut escaped = Vec::new();
    for contract in crate::common::bundled_contracts() {
        let suite = suite_of(contract);
        for mistake in contract.mistakes() {
            let mut mistaken = contract.mistaken(mistake.id).expect("in the catalogue");
            assert!(!mistaken.info().is_reference);
            let reports = run_suite(&suite, &mut mistaken);
            // A mistaken implementation is blamed with differences, never with spec errors.
            assert!(
                reports
                    .iter()
                    .all(|r| !matches!(r.outcome, Outcome::SpecError(_))),
                "{} made a spec error:\n{}",
                mistake.id,
                summary(&reports)
            );
            let rule = mistake.rule.id;
            let caught = reports.iter().any(|r| {
                matches!(r.outcome, Outcome::Mismatch(_)) && r.rules.iter().any(|id| id == rule)
            });
            if !caught {
                escaped.push(format!(
                    "{} `{}` ({}) fails no spec of {rule}:\n{}",
                    contract.name(),
                    mistake.id,
                    mistake.what,
                    summary(&reports)
                ));
            }
        }
    }
    assert!(escaped.is_empty(), "{}", escaped.join("\n"));
}

#[test]
fn every_mistake_departs_from_the_reference_as_itself() {
    // Wherever a classic mistake fails a spec with a difference, the cause found for it is
    // that very mistake, named: the catalogue gives each mistake its departure.
    let (mut failures, mut same_rule) = (0, 0);
    let mut unnamed = Vec::new();
    for contract in crate::common::bundled_contracts() {
        let suite = suite_of(contract);
        for mistake in contract.mistakes() {
            let mut mistaken = contract.mistaken(mistake.id).expect("in the catalogue");
            for report in run_suite(&suite, &mut mistaken) {
                if !matches!(report.outcome, Outcome::Mismatch(_)) {
                    continue;
                }
                failures += 1;
                let Some(departure) = &report.departure else {
                    unnamed.push(format!("{} on {}: no departure", mistake.id, report.path));
                    continue;
                };
                if !departure.mistakes.contains(&mistake) {
                    unnamed.push(format!(
                        "{} on {}: {} ({:?})",
                        mistake.id,
                        report.path,
                        departure.told,
                        departure.mistakes.iter().map(|m| m.id).collect::<Vec<_>>()
                    ));
                }
                same_rule += usize::from(departure.rule.is_some_and(|r| r.id == mistake.rule.id));
            }
        }
    }
    eprintln!(
        "{failures} failures of classic mistakes; the departure's rule is the mistake's in {same_rule}"
    );
    assert!(unnamed.is_empty(), "{}", unnamed.join("\n"));
}

fn mismatch_of(contract: &str, mistake: &str, spec: &str) -> dlqspec::model::outcome::Mismatch {
    let contract = crate::common::bundled_contract(contract).expect("a contract");
    let suite = suite_of(contract);
    let mut mistaken = contract.mistaken(mistake).expect("in the catalogue");
    let reports = run_suite(&suite, &mut mistaken);
    let report = reports
        .iter()
        .find(|r| r.path.ends_with(spec))
        .expect("the spec exists");
    match &report.outcome {
        Outcome::Mismatch(mismatch) => mismatch.clone(),
        other => panic!("{spec}: {other:?}"),
    }
}

#[test]
fn a_shallow_state_is_caught_by_the_deep_copy_check_with_its_note() {
    let mismatch = mismatch_of(
        "outcome-queue",
        "shallow-state",
        "state-view-entries-edited.yaml",
    );
    assert_eq!(mismatch.step, "step 8 (mutate_state)");
    assert_eq!(
        mismatch.note.as_deref(),
        Some("the view must be a deep copy: changing the value it returned changed the instance")
    );
}

#[test]
fn an_invalid_outcome_that_pops_a_job_is_caught_by_the_automatic_state_check() {
    let mismatch = mismatch_of(
        "outcome-queue",
        "pops-before-validating",
        "invalid-outcome-leaves-the-next-job-untouched.yaml",
    );
    assert_eq!(mismatch.step, "step 4 (process)");
    assert_eq!(
        mismatch.note.as_deref(),
        Some(
            "a call that raises must leave every state view as it was: the view differs before and after it"
        )
    );
}

#[test]
fn an_unscripted_handler_call_of_a_mistake_is_its_difference_not_a_spec_error() {
    let mismatch = mismatch_of("dlq-consumer", "poison-calls-handler", "poison-cycle.yaml");
    assert!(
        mismatch.note.as_deref().is_some_and(|n| n
            .ends_with("the implementation called the handler more often than the rules allow")),
        "{mismatch:?}"
    );
}
