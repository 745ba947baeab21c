//! The run record: the events a run reports as JSON lines (docs/reports.md), as the serde types
//! the JSON-lines reporter fills and writes and `grade` reads a submission's report back into.
//!
//! The field set is versioned by [`FORMAT_VERSION`]: fields may be added within a version, never
//! renamed, removed or given another meaning. Reading accepts fields it does not know (a newer
//! dlqspec of the same version); a line that is not one of these events (cut short by a killed
//! run, forged, of another version) is no event, never a panic. The events' JSON Schema is
//! [`crate::schema::RUN_RECORD`] (`schema/run-record.schema.json`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::captured::Captured;
pub use crate::kinds::{ImplErrorKind, ImplInfo, OutcomeKind, SpecErrorKind};

/// The version of the event format, in every `run_started` event.
pub const FORMAT_VERSION: u32 = 1;

/// One line of a run's JSON-lines report. Borrowed while a run writes it, owned when read back.
/// A later version may add events: a reader leaves those it does not know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEvent<'a> {
    RunStarted(RunStarted<'a>),
    SpecFinished(Box<SpecFinished<'a>>),
    RunFinished(RunFinished),
}

impl RunEvent<'static> {
    /// One line of a report read back: `None` for a line that is not an event of this format
    /// (malformed, cut short, an event this build does not know).
    pub fn read(line: &str) -> Option<RunEvent<'static>> {
        serde_json::from_str(line).ok()
    }
}

/// The events of a JSON-lines report, in order, lines that are no event left out.
pub fn read_events(json_lines: &str) -> impl Iterator<Item = RunEvent<'static>> + '_ {
    json_lines.lines().filter_map(RunEvent::read)
}

/// `run_started`: who answers, and how many specs follow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStarted<'a> {
    pub format_version: u32,
    pub dlqspec_version: Cow<'a, str>,
    pub implementation: Cow<'a, ImplInfo>,
    pub total: usize,
    pub filtered_out: usize,
    /// Paths discovery left out, with why; only when there are some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedPath>,
    /// What the run says of its world (`--world`); only on a broker's.
    #[serde(default, skip_serializing_if = "<[String]>::is_empty")]
    pub world: Cow<'a, [String]>,
}

/// A path discovery left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedPath {
    pub path: String,
    pub reason: String,
}

/// `spec_finished`: one spec's outcome, with the fields of that outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecFinished<'a> {
    pub path: Cow<'a, str>,
    pub name: Option<Cow<'a, str>>,
    pub contract: Option<Cow<'a, str>>,
    pub rules: Cow<'a, [String]>,
    /// What the spec is worth when grading (its `points`, default 1).
    pub points: f64,
    pub outcome: OutcomeKind,
    pub duration_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<MismatchRecord<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_error: Option<SpecErrorRecord<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impl_error: Option<ImplErrorRecord<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<Cow<'a, str>>,
    /// A `not_attempted` spec's why: the class of its contract the implementation lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_attempted: Option<Cow<'a, str>>,
    /// A divergence's world and broker properties, and how the spec failed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<DivergenceRecord<'a>>,
    /// The plain-text explanation a person reads, for every outcome but `passed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// A failure's cause in one line (`rule: line`), as the human report's "failures by
    /// cause" groups it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The cause's stable key: failures with one `cause_id` share one cause; `grade` counts
    /// the class's failures by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_id: Option<Cow<'a, str>>,
    /// The rule the cause breaks, when one decides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_rule: Option<Cow<'a, str>>,
    /// Where this spec's run departed from the reference, in its own ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub departure: Option<Cow<'a, str>>,
    /// The classic mistake the cause is, in plain words, when the catalogue knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_mistake: Option<Cow<'a, str>>,
    /// What the implementation printed and raised while the spec ran, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Cow<'a, Captured>>,
}

/// A `mismatch`: where the implementation first did something else than the spec expects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MismatchRecord<'a> {
    pub step: Cow<'a, str>,
    pub line: usize,
    pub column: usize,
    pub expected: Cow<'a, str>,
    pub actual: Cow<'a, str>,
    pub note: Option<Cow<'a, str>>,
    pub diff: String,
}

/// A `spec_error`: where the spec is broken, never blamed on the implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecErrorRecord<'a> {
    pub kind: SpecErrorKind,
    pub path: Cow<'a, str>,
    pub line: usize,
    pub column: usize,
    pub message: Cow<'a, str>,
    pub source_line: Option<Cow<'a, str>>,
    /// The file's other errors, in source order, each with these fields: only when it has more.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<SpecErrorRecord<'a>>,
    /// Why errors after these may be untold: only when some may be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untold: Option<Cow<'a, str>>,
}

/// A `divergence`: the broker's world, the properties of it the run met, and the failure there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DivergenceRecord<'a> {
    pub world: Cow<'a, str>,
    pub broker_properties: Vec<BrokerProperty<'a>>,
    /// The outcome the spec had on the broker: `mismatch` or `errored`.
    pub failure: OutcomeKind,
}

/// One property of a broker a divergence names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerProperty<'a> {
    pub id: Cow<'a, str>,
    pub says: Cow<'a, str>,
    pub means: Cow<'a, str>,
    pub first: Cow<'a, str>,
}

/// An `errored` spec's implementation error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplErrorRecord<'a> {
    pub kind: ImplErrorKind,
    pub message: Cow<'a, str>,
}

/// `run_finished`: the counts, the time and the exit code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    pub passed: usize,
    pub mismatched: usize,
    pub errored: usize,
    pub spec_errors: usize,
    pub skipped: usize,
    pub expected_failures: usize,
    pub stale: usize,
    pub failed: usize,
    pub total: usize,
    pub duration_ms: f64,
    pub exit_code: i32,
    /// Specs that pass on the fake world and fail on the broker's; only when some did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub diverged: usize,
    /// Specs of a contract the implementation has no class of; only when some were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_attempted: usize,
    /// What broke the broker under the run; only when it broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_fault: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_read_and_a_cut_or_foreign_line_is_no_event() {
        let line = r#"{"event":"spec_finished","path":"a.yaml","name":null,"contract":null,"rules":["r/a"],"points":2,"outcome":"errored","duration_ms":1.5,"impl_error":{"kind":"startup","message":"no"},"added_later":{"x":1}}"#;
        let Some(RunEvent::SpecFinished(spec)) = RunEvent::read(line) else {
            panic!("{line}");
        };
        assert_eq!(spec.outcome, OutcomeKind::Errored);
        assert_eq!(
            spec.impl_error.map(|e| e.kind),
            Some(ImplErrorKind::Startup)
        );
        for not_an_event in [
            &line[..line.len() / 2],
            "",
            "[]",
            r#"{"event":"spec_started","path":"a.yaml"}"#,
            r#"{"event":"spec_finished","path":"a.yaml","rules":[],"points":1,"outcome":"won","duration_ms":0}"#,
        ] {
            assert_eq!(RunEvent::read(not_an_event), None, "{not_an_event}");
        }
    }
}
