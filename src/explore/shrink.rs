//! Shrinking a failing case to a minimal spec: greedy, like QuickCheck's and Hypothesis's.
//!
//! The case is first cut to what its first difference needs (the steps after it and the
//! expectations that held go, for free: they cannot change what the implementation did up to
//! there). Then each smaller variant the contract offers is tried in turn; the first one that
//! still makes a valid spec the implementation fails is kept, and the search starts again from
//! it, until no variant fails or the tries run out.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::case::{self, CaseVerdict};
use crate::contracts::contract::ScenarioRun;
use crate::generate::case::Case;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;

/// A case that fails on the implementation, with the spec it makes and that spec's run there.
#[derive(Debug)]
pub(crate) struct Failing {
    pub(crate) case: Box<dyn Case>,
    pub(crate) text: String,
    pub(crate) run: ScenarioRun,
}

/// What shrinking came to.
#[derive(Debug)]
pub(crate) struct Shrunk {
    pub(crate) failing: Failing,
    /// How many variants were judged.
    pub(crate) tries: usize,
    pub(crate) elapsed: Duration,
}

/// Shrinks `failing` on `implementation`, judging at most `max_tries` variants; `progress`
/// hears the tries so far and the steps of the smallest case yet.
pub(crate) fn shrink(
    contract: &str,
    failing: Failing,
    implementation: &mut dyn Implementation,
    max_tries: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Shrunk {
    let started = Instant::now();
    let kind = failing.run.outcome.kind();
    let mut tries = 0;
    let mut try_case = |candidate: Box<dyn Case>, tries: &mut usize| -> Option<Failing> {
        *tries += 1;
        match case::judge_case(contract, candidate.as_ref(), implementation) {
            CaseVerdict::Failed { text, run } if run.outcome.kind() == kind => Some(Failing {
                case: candidate,
                text,
                run,
            }),
            _ => None,
        }
    };
    let mut current = failing;
    if let Some(focused) = focus(&current).and_then(|f| try_case(f, &mut tries)) {
        current = focused;
    }
    progress(tries, current.case.steps());
    'search: loop {
        for candidate in current.case.shrinks() {
            if tries >= max_tries {
                break 'search;
            }
            if let Some(smaller) = try_case(candidate, &mut tries) {
                current = smaller;
                if let Some(focused) = focus(&current).and_then(|f| try_case(f, &mut tries)) {
                    current = focused;
                }
                progress(tries, current.case.steps());
                continue 'search;
            }
        }
        break;
    }
    Shrunk {
        failing: current,
        tries,
        elapsed: started.elapsed(),
    }
}

/// The case cut to its first difference, when the run says where that is and the cut would
/// change anything.
fn focus(failing: &Failing) -> Option<Box<dyn Case>> {
    let index = case::failing_step(&failing.run)?;
    let keys = case::differing_keys(&failing.run);
    let focused = failing.case.focused(index, &keys);
    (focused.body() != failing.case.body()).then_some(focused)
}

/// What a failed run of a spec of `contract` shows, in one sentence: where, and what differs
/// from the reference's answer.
pub(crate) fn divergence(run: &ScenarioRun, contract: &str) -> String {
    match &run.outcome {
        Outcome::Mismatch(mismatch) => {
            let failed = run.checkpoints.iter().rev().find(|c| !c.matches());
            let what = match failed {
                Some(checkpoint) => differs(
                    &checkpoint.label,
                    &checkpoint.expected,
                    &checkpoint.actual,
                    mismatch.note.as_deref(),
                    contract,
                ),
                None => mismatch
                    .note
                    .clone()
                    .unwrap_or_else(|| "the run differs".to_owned()),
            };
            format!("at {}: {what}", mismatch.step)
        }
        // Its first line only: the rest is a stderr tail, for the report, not for a spec's
        // description.
        Outcome::Errored(error) => format!(
            "by breaking: {}",
            error.message.lines().next().unwrap_or_default()
        ),
        other => format!("{:?}", other.kind()),
    }
}

/// A short title for the same: what a spec's name says.
pub(crate) fn headline(run: &ScenarioRun, contract: &str) -> String {
    match &run.outcome {
        Outcome::Mismatch(mismatch) => {
            let failed = run.checkpoints.iter().rev().find(|c| !c.matches());
            let what = match failed.map(|c| (c.label.as_str(), c)) {
                Some(("expect", checkpoint)) => differs(
                    "expect",
                    &checkpoint.expected,
                    &checkpoint.actual,
                    None,
                    contract,
                ),
                Some(("handler_calls", _)) => {
                    "the handler runs more often than the rules allow".to_owned()
                }
                Some(("misuse", _)) => {
                    "the consumer misuses the queue, the DLQ or the handler".to_owned()
                }
                Some(("state", _)) => mismatch
                    .note
                    .as_deref()
                    .and_then(|note| note.split(':').next())
                    .unwrap_or("the state changes")
                    .to_owned(),
                Some((label, checkpoint)) => differs(
                    label,
                    &checkpoint.expected,
                    &checkpoint.actual,
                    None,
                    contract,
                ),
                None => "the run differs".to_owned(),
            };
            format!("{}: {what}", mismatch.step)
        }
        Outcome::Errored(_) => "the implementation breaks".to_owned(),
        other => format!("{:?}", other.kind()),
    }
}

/// What differs in one checkpoint of a spec of `contract`, in words, its reference named as
/// the contract names it.
fn differs(
    label: &str,
    expected: &Value,
    actual: &Value,
    note: Option<&str>,
    contract: &str,
) -> String {
    use crate::contracts::registry::reference_called;
    let shown = |value: &Value| short(&crate::text::yaml::flow(value));
    match (label, expected, actual) {
        ("expect", Value::Object(want), Value::Object(got)) => {
            let keys: Vec<String> = want
                .iter()
                .filter(|(key, value)| got.get(*key) != Some(value))
                .map(|(key, _)| format!("`{key}`"))
                .collect();
            // One key differs, several differ: the verb agrees with the list.
            let (keys, verb) = match keys.split_last() {
                Some((last, [])) => (last.clone(), "differs"),
                Some((last, rest)) => (format!("{} and {last}", rest.join(", ")), "differ"),
                None => ("the state".to_owned(), "differs"),
            };
            let reference = reference_called(contract, "the built-in's");
            format!("the implementation's {keys} {verb} from {reference}")
        }
        _ if note.is_some() => note.unwrap_or_default().to_owned(),
        (label, expected, actual) => format!(
            "`{label}` gives {} where {} gives {}",
            shown(actual),
            reference_called(contract, "the built-in"),
            shown(expected)
        ),
    }
}

/// `text`, cut to a length a line can hold.
fn short(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_difference_is_told_by_its_keys_or_its_values() {
        let told = differs(
            "expect",
            &json!({"dlq": [], "pending": ["a"], "in_flight": []}),
            &json!({"dlq": [1], "pending": ["a"], "in_flight": ["a"]}),
            None,
            "dlq-consumer",
        );
        assert_eq!(
            told,
            "the implementation's `dlq` and `in_flight` differ from the built-in's"
        );
        let told = differs(
            "expect",
            &json!({"trace": ["a"], "pending": []}),
            &json!({"trace": ["b"], "pending": []}),
            None,
            "dlq-consumer",
        );
        assert_eq!(
            told,
            "the implementation's `trace` differs from the built-in's"
        );
        let told = differs(
            "process",
            &json!("dead"),
            &json!("crash"),
            None,
            "dlq-consumer",
        );
        assert_eq!(told, "`process` gives crash where the built-in gives dead");
        let told = differs(
            "misuse",
            &json!({}),
            &json!({"m": 1}),
            Some("it misused"),
            "dlq-consumer",
        );
        assert_eq!(told, "it misused");
        assert!(short(&"x".repeat(200)).ends_with("..."));
    }
}
