//! `summary.json`, the record a `grade --output DIR` leaves (docs/autograders.md): its rows,
//! rules, causes, suite and regrade as serde types, written by the grade summary reporter and
//! read back by `grade --merge` and `--against`.
//!
//! Read back, the parts that describe the grading and decide nothing (the partition, the
//! suite, the class's rules and causes, the regrade) read as absent when they have another
//! shape; the rows are what a merge or a regrade uses, and each is checked
//! (`grading::read_summary`).

use indexmap::IndexMap;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::{Deserialize, Serialize};

use crate::model::outcome::OutcomeKind;

/// The whole of `summary.json`, in the order its keys are written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryFile {
    /// `dlqspec-grade-summary` (`grading::SUMMARY_FORMAT`).
    pub format: String,
    /// `grading::SUMMARY_VERSION`.
    pub version: u64,
    /// The `--partition` share this grading was, when it was one.
    #[serde(default, deserialize_with = "lenient")]
    pub partition: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub suite: Option<SuiteRecord>,
    /// Each rule with how many submissions passed it, in the rules' order.
    #[serde(default, deserialize_with = "lenient")]
    pub rules: Option<IndexMap<String, RuleShare>>,
    /// The class's most common failure causes, most submissions first.
    #[serde(default, deserialize_with = "lenient")]
    pub causes: Option<Vec<CauseRecord>>,
    /// What changed since the grading `--against` named, when it named one.
    #[serde(default, deserialize_with = "lenient")]
    pub against: Option<AgainstRecord>,
    /// A row per submission; an error names the row (`rows[3]: ...`).
    #[serde(deserialize_with = "each_row")]
    pub rows: Vec<RowRecord>,
}

/// The two fields read before the rest, so that a file of another format or version is
/// told as such rather than by the first field it lacks.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SummaryHead {
    #[serde(default, deserialize_with = "lenient")]
    pub format: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub version: Option<u64>,
}

/// What the grading says of itself (`grading::About`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteRecord {
    pub folders: Vec<String>,
    pub specs: usize,
    pub digest: String,
    pub graded: String,
    pub dlqspec: String,
}

/// A rule's share of the class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleShare {
    pub passed: usize,
    pub submissions: usize,
}

/// One of the class's failure causes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseRecord {
    pub cause: String,
    pub id: Option<String>,
    pub rule: Option<String>,
    /// The report names of the submissions it hit.
    pub who: Vec<String>,
    pub submissions: usize,
    pub specs: usize,
    pub failures: usize,
    pub example: CauseExample,
}

/// A cause's first failure in the class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseExample {
    pub submission: String,
    pub name: String,
    pub spec: String,
}

/// A regrade, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgainstRecord {
    /// The earlier grading's folder, as given.
    pub dir: String,
    pub no_change: bool,
    pub unchanged: usize,
    pub changed: Vec<ChangedRecord>,
    pub new: Vec<NewRecord>,
    pub gone: Vec<GoneRecord>,
}

/// A submission's status and score, in brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandingRecord {
    pub status: String,
    pub score: f64,
    pub max_score: f64,
}

/// A submission graded both times whose grading changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangedRecord {
    pub name: String,
    pub submission: String,
    pub before: StandingRecord,
    pub after: StandingRecord,
    pub specs: Vec<SpecChange>,
}

/// A spec whose outcome changed: `None` where it was not in that grading's suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecChange {
    pub spec: String,
    pub before: Option<SpecOutcome>,
    pub after: Option<SpecOutcome>,
}

/// A submission the earlier grading did not have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRecord {
    pub name: String,
    pub submission: String,
    pub after: StandingRecord,
}

/// A submission this grading does not have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoneRecord {
    pub name: String,
    pub submission: String,
    pub before: StandingRecord,
}

/// One submission's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowRecord {
    pub submission: String,
    pub name: String,
    /// `pass`, `fail`, `broken`, `timeout`, `crashed` or `ungraded`.
    pub status: String,
    pub score: f64,
    pub max_score: f64,
    pub passed: usize,
    pub failed: usize,
    pub seconds: f64,
    pub note: String,
    /// `NAME.txt`, or null when none was written.
    pub report: Option<String>,
    /// `NAME.jsonl`, or null when none was written.
    pub json_report: Option<String>,
    /// The specs whose picture was written (null read as none).
    #[serde(default, deserialize_with = "null_as_none")]
    pub pictures: Vec<String>,
    /// Each rule's verdict: `pass` or `fail`.
    pub rules: IndexMap<String, String>,
    /// Each spec of the suite's verdict, by path; an error names the spec.
    #[serde(deserialize_with = "each_spec")]
    pub specs: IndexMap<String, SpecVerdictRecord>,
}

/// A spec's verdict in a row: its outcome, and its cause when it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecVerdictRecord {
    pub outcome: SpecOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_rule: Option<String>,
}

/// What became of a spec of the suite in one submission's grading: the outcome its run
/// reported (docs/reports.md), or `not_run`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecOutcome {
    Passed,
    Mismatch,
    Errored,
    SpecError,
    Skipped,
    ExpectedFailure,
    Stale,
    Divergence,
    /// The run did not finish it (its budget ran out first), or its report does not mention
    /// it (a run that never reported, a run not trusted), or the broker failed it.
    #[default]
    NotRun,
}

impl SpecOutcome {
    /// Its name in `summary.json` and the pages (`passed`, `not_run`, ...), as it serializes.
    pub fn as_str(self) -> &'static str {
        match self {
            SpecOutcome::Passed => "passed",
            SpecOutcome::Mismatch => "mismatch",
            SpecOutcome::Errored => "errored",
            SpecOutcome::SpecError => "spec_error",
            SpecOutcome::Skipped => "skipped",
            SpecOutcome::ExpectedFailure => "expected_failure",
            SpecOutcome::Stale => "stale",
            SpecOutcome::Divergence => "divergence",
            SpecOutcome::NotRun => "not_run",
        }
    }

    /// The verdict of what a run reported of a spec (`None`: nothing): a broker's fault is no
    /// verdict on the submission, so the spec was not run.
    pub fn reported(outcome: Option<OutcomeKind>) -> SpecOutcome {
        match outcome {
            None | Some(OutcomeKind::WorldFault) => SpecOutcome::NotRun,
            Some(OutcomeKind::Passed) => SpecOutcome::Passed,
            Some(OutcomeKind::Mismatch) => SpecOutcome::Mismatch,
            Some(OutcomeKind::Errored) => SpecOutcome::Errored,
            Some(OutcomeKind::SpecError) => SpecOutcome::SpecError,
            Some(OutcomeKind::Skipped) => SpecOutcome::Skipped,
            Some(OutcomeKind::ExpectedFailure) => SpecOutcome::ExpectedFailure,
            Some(OutcomeKind::Stale) => SpecOutcome::Stale,
            Some(OutcomeKind::Divergence) => SpecOutcome::Divergence,
        }
    }
}

/// A part that decides nothing: of another shape, it reads as absent.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(T::deserialize(value).ok())
}

fn null_as_none<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

/// A row's specs, each read on its own so that an error names the spec it is of.
fn each_spec<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<IndexMap<String, SpecVerdictRecord>, D::Error> {
    let specs = IndexMap::<String, serde_json::Value>::deserialize(d)?;
    specs
        .into_iter()
        .map(|(path, verdict)| {
            SpecVerdictRecord::deserialize(verdict)
                .map(|verdict| (path.clone(), verdict))
                .map_err(|e| D::Error::custom(format!("spec {path:?}: {e}")))
        })
        .collect()
}

/// The rows, each read on its own so that an error names the row it is in.
fn each_row<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RowRecord>, D::Error> {
    let rows = Vec::<serde_json::Value>::deserialize(d)?;
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            RowRecord::deserialize(row).map_err(|e| D::Error::custom(format!("rows[{i}]: {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_specs_outcome_is_written_as_it_is_named_and_reads_back() {
        use SpecOutcome::*;
        for outcome in [
            Passed,
            Mismatch,
            Errored,
            SpecError,
            Skipped,
            ExpectedFailure,
            Stale,
            Divergence,
            NotRun,
        ] {
            let written = serde_json::to_value(outcome).unwrap();
            assert_eq!(written, outcome.as_str());
            assert_eq!(
                serde_json::from_value::<SpecOutcome>(written).unwrap(),
                outcome
            );
        }
        // A run reports a broker's fault, which is no verdict on the submission.
        assert_eq!(SpecOutcome::reported(Some(OutcomeKind::WorldFault)), NotRun);
        assert_eq!(SpecOutcome::reported(None), NotRun);
        assert_eq!(
            SpecOutcome::reported(Some(OutcomeKind::ExpectedFailure)),
            ExpectedFailure
        );
    }

    #[test]
    fn an_outcome_of_no_grading_is_refused_naming_its_spec() {
        let row = serde_json::json!({
            "submission": "class/a", "name": "a", "status": "pass", "score": 1, "max_score": 1,
            "passed": 1, "failed": 0, "seconds": 0.5, "note": "", "report": null,
            "json_report": null, "rules": {},
            "specs": {"s/a.yaml": {"outcome": "passed"}, "s/b.yaml": {"outcome": "won"}},
        });
        let error = RowRecord::deserialize(&row).unwrap_err().to_string();
        assert!(
            error.starts_with("spec \"s/b.yaml\": unknown variant `won`"),
            "{error}"
        );
    }
}
