//! The words the run record shares with the rest of dlqspec: a spec's outcome, why an
//! implementation could not be asked, a spec error's kind, and who answered. `record` names
//! them; dlqspec's model and spec text use them as their own.

use serde::{Deserialize, Serialize};

/// What happened to one spec: `spec_finished`'s `outcome`, as reports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Passed,
    Mismatch,
    Errored,
    SpecError,
    Skipped,
    NotAttempted,
    ExpectedFailure,
    Stale,
    Divergence,
    WorldFault,
}

impl OutcomeKind {
    /// Every kind, in the order reports list them (the run record's schema too).
    pub const ALL: [OutcomeKind; 10] = [
        OutcomeKind::Passed,
        OutcomeKind::Mismatch,
        OutcomeKind::Errored,
        OutcomeKind::SpecError,
        OutcomeKind::Skipped,
        OutcomeKind::NotAttempted,
        OutcomeKind::ExpectedFailure,
        OutcomeKind::Stale,
        OutcomeKind::Divergence,
        OutcomeKind::WorldFault,
    ];

    /// Its name in reports (`passed`, `spec_error`, ...), as it serializes.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Passed => "passed",
            OutcomeKind::Mismatch => "mismatch",
            OutcomeKind::Errored => "errored",
            OutcomeKind::SpecError => "spec_error",
            OutcomeKind::Skipped => "skipped",
            OutcomeKind::NotAttempted => "not_attempted",
            OutcomeKind::ExpectedFailure => "expected_failure",
            OutcomeKind::Stale => "stale",
            OutcomeKind::Divergence => "divergence",
            OutcomeKind::WorldFault => "world_fault",
        }
    }
}

/// Who is answering: shown in reports and the conformance matrix (`run_started`'s
/// `implementation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplInfo {
    /// Short label, e.g. `builtin` or `python:solution.py`.
    pub label: String,
    pub language: String,
    /// The reference implementation: a scenario it cannot satisfy is a broken spec.
    pub is_reference: bool,
}

/// Why an implementation could not be asked at all (an `errored` spec's `impl_error.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImplErrorKind {
    /// The process could not be started, or its solution could not be loaded.
    Startup,
    /// No answer within the timeout.
    Timeout,
    /// The process exited while a spec was running.
    Exited,
    /// A line on stdout that is not a protocol message.
    Garbage,
    /// A well-formed message that breaks the protocol (wrong sequence number, unknown type...).
    Protocol,
    /// The implementation reported that it could not do what was asked.
    Errored,
}

/// What kind of problem makes a spec unusable (a `spec_error` spec's `spec_error.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecErrorKind {
    /// The file could not be read.
    Unreadable,
    /// The YAML is malformed or does not have the shape of a spec.
    Syntax,
    /// The YAML has the right shape but says something impossible (duplicate ids, unknown rule...).
    Invalid,
    /// The scenario needs something the spec does not provide (e.g. more handler outcomes).
    Incomplete,
    /// The built-in reference implementation does not pass the spec: it contradicts the
    /// contract, so it cannot judge another implementation.
    Contradicted,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcomes_name_is_the_one_it_serializes_as_and_reads_back_from() {
        for kind in OutcomeKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(serde_json::from_str::<OutcomeKind>(&json).unwrap(), kind);
        }
    }

    #[test]
    fn all_the_kinds_are_the_run_records_schemas_in_its_order() {
        let schema: serde_json::Value = serde_json::from_str(crate::schema::RUN_RECORD).unwrap();
        let names: Vec<&str> = OutcomeKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            schema["definitions"]["outcome"]["enum"],
            serde_json::json!(names)
        );
    }
}
