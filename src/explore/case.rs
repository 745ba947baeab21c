//! A generated scenario as `dlqspec explore` handles it, whatever its contract: spec text with
//! placeholders, blessed on the built-in implementation, then judged on the implementation
//! under test.
//!
//! A contract's generator writes only the steps. The built-in reference fills in every
//! expectation (`authoring::bless`), so a generated spec can never make a correct
//! implementation fail: whatever it pins, the reference does, and the reference is the rules.

use serde_json::Value;

use crate::authoring::bless::{self, Blessing};
use crate::contracts::builtin::Builtin;
use crate::contracts::contract::{RunMode, ScenarioRun};
use crate::generate::case::Case;
use crate::load::loader;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;
use crate::text::source::SourceFile;

/// What a case came to on the implementation under test.
#[derive(Debug)]
pub(crate) enum CaseVerdict {
    /// The case makes no spec the built-in passes (it does not load, or cannot be blessed):
    /// it judges nobody. Why, in words.
    Invalid(String),
    /// The implementation passes the blessed spec.
    Passed,
    /// The implementation does not provide the case's contract, and why.
    Skipped(String),
    /// The implementation fails the blessed spec: `text` is that spec, `run` its run there.
    Failed { text: String, run: ScenarioRun },
}

/// The path generated specs are shown under until they are written somewhere.
pub(crate) fn virtual_path(contract: &str) -> String {
    format!("explore/{contract}.yaml")
}

/// Judges `case` under the placeholder header (`shrink::draft`): invalid when unsound,
/// otherwise blessed and run.
pub(crate) fn judge_case(
    contract: &str,
    case: &dyn Case,
    implementation: &mut dyn Implementation,
) -> CaseVerdict {
    if let Some(why) = case.unsound() {
        return CaseVerdict::Invalid(why);
    }
    judge(
        contract,
        crate::generate::variants::draft(contract, case),
        implementation,
    )
}

/// Blesses `text` (a whole spec of `contract`) on the built-in implementation and runs the
/// result on `implementation`.
pub(crate) fn judge(
    contract: &str,
    text: String,
    implementation: &mut dyn Implementation,
) -> CaseVerdict {
    let path = virtual_path(contract);
    let blessed = match bless::bless(
        SourceFile::from_text(&path, text.clone()),
        &mut Builtin::new(),
    ) {
        Blessing::Unchanged => text,
        Blessing::Rewritten { blessed, .. } => blessed,
        Blessing::SpecError(error) => return CaseVerdict::Invalid(error.to_string()),
        Blessing::Refused(reason) => return CaseVerdict::Invalid(reason),
    };
    let spec = match loader::load(SourceFile::from_text(&path, blessed.clone())) {
        Ok(spec) => spec,
        Err(error) => return CaseVerdict::Invalid(error.to_string()),
    };
    if let Err(error) = implementation.begin_spec() {
        let run = ScenarioRun {
            outcome: Outcome::Errored(error),
            checkpoints: Vec::new(),
            timeline: Vec::new(),
            exercised: Vec::new(),
            later_spec_error: None,
        };
        return CaseVerdict::Failed { text: blessed, run };
    }
    let run = spec.run(implementation, RunMode::Check);
    match &run.outcome {
        Outcome::Passed => CaseVerdict::Passed,
        Outcome::Skipped(reason) | Outcome::NotAttempted(reason) => {
            CaseVerdict::Skipped(reason.clone())
        }
        Outcome::Mismatch(_) | Outcome::Errored(_) => CaseVerdict::Failed { text: blessed, run },
        Outcome::SpecError(error) => CaseVerdict::Invalid(error.to_string()),
        Outcome::ExpectedFailure(_) | Outcome::Stale(_) => {
            CaseVerdict::Invalid("a known-failure outcome from a plain run".to_owned())
        }
        // Explore runs on the fake world only.
        Outcome::Divergence(_) | Outcome::WorldFault(_) => {
            CaseVerdict::Invalid("a broker's outcome from a run on the fake world".to_owned())
        }
    }
}

/// The step a failed run first differs at, 0-based, when it is a step of the spec.
pub(crate) fn failing_step(run: &ScenarioRun) -> Option<usize> {
    let Outcome::Mismatch(mismatch) = &run.outcome else {
        return None;
    };
    let number = mismatch.step.strip_prefix("step ")?.split(' ').next()?;
    number.parse::<usize>().ok()?.checked_sub(1)
}

/// The keys of the expectation a failed run first differs at, when it is an `expect` with
/// keys; the keys that hold are left out.
pub(crate) fn differing_keys(run: &ScenarioRun) -> Vec<String> {
    let Some(failed) = run.checkpoints.iter().rev().find(|c| !c.matches()) else {
        return Vec::new();
    };
    if failed.label != "expect" {
        return Vec::new();
    }
    match (&failed.expected, &failed.actual) {
        (Value::Object(expected), Value::Object(actual)) => expected
            .iter()
            .filter(|(key, value)| actual.get(*key) != Some(value))
            .map(|(key, _)| key.clone())
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_the_reference_cannot_pass_is_invalid_and_judges_nobody() {
        let text = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nsteps:\n  - process: ok\n";
        // The handler is called with no outcome scripted: the spec is broken, not blessed.
        let judged = judge("dlq-consumer", text.to_owned(), &mut Builtin::new());
        assert!(matches!(judged, CaseVerdict::Invalid(_)), "{judged:?}");
    }

    #[test]
    fn placeholders_are_blessed_and_the_reference_passes_its_own_answers() {
        let text = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [permanent: p]}\nsteps:\n  - process: ok\n  - expect: {dlq: [], pending: [], in_flight: []}\n";
        let judged = judge("dlq-consumer", text.to_owned(), &mut Builtin::new());
        assert!(matches!(judged, CaseVerdict::Passed), "{judged:?}");
    }

    #[test]
    fn a_difference_names_its_step_and_the_keys_that_differ() {
        let text = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps:\n  - process: ok\n  - expect: {pending: [], in_flight: [], handler_calls: {}}\n";
        let mistaken = crate::contracts::find("dlq-consumer")
            .and_then(|c| c.mistaken("success-without-ack"))
            .expect("a mistake");
        let mut mistaken = mistaken;
        let CaseVerdict::Failed { run, .. } = judge("dlq-consumer", text.to_owned(), &mut mistaken)
        else {
            panic!("the mistake passed");
        };
        assert_eq!(failing_step(&run), Some(1));
        assert_eq!(differing_keys(&run), ["in_flight"]);
    }
}
