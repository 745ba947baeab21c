//! The grade record: `summary.json`, the record a `grade --output DIR` leaves
//! (docs/autograders.md): its rows, rules, causes, suite and regrade as serde types, written by
//! the grade summary reporter and read back by `grade --merge` and `--against`.
//!
//! Read back, the parts that describe the grading and decide nothing (the partition, the
//! suite, the class's rules and causes, the regrade) read as absent when they have another
//! shape; the rows are what a merge or a regrade uses, and each is checked (dlqspec checks
//! [`SummaryHead`] first, then each row's figures).

use indexmap::IndexMap;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::{Deserialize, Serialize};

use crate::record::OutcomeKind;

/// What `summary.json` says it is (`format`), and the version of its layout (`version`) this
/// build writes and reads.
pub const SUMMARY_FORMAT: &str = "dlqspec-grade-summary";
/// Version 2 added each row's `specs`, and the class's `causes` and `against`.
pub const SUMMARY_VERSION: u64 = 2;

/// The whole of `summary.json`, in the order its keys are written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryFile {
    /// `dlqspec-grade-summary` ([`SUMMARY_FORMAT`]).
    pub format: String,
    /// [`SUMMARY_VERSION`].
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

/// What the grading says of itself: the suite it graded against.
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
    /// The submissions the share is of: the class less those apart below.
    pub submissions: usize,
    /// The submissions with no class of the rule's contract (only when some).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_attempted: usize,
    /// The submissions whose run never reached the rule (only when some).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_run: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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
    /// Each rule's verdict: `pass`, `fail`, `not_run` or `not_attempted`.
    pub rules: IndexMap<String, String>,
    /// Each spec of the suite's verdict, by path; an error names the spec.
    #[serde(deserialize_with = "each_spec")]
    pub specs: IndexMap<String, SpecVerdictRecord>,
    /// Specs of a contract the submission has no class of (read as 0 when absent: a
    /// summary.json written before it was).
    #[serde(default)]
    pub not_attempted: usize,
    /// Specs its run never reached: it hung before them, its budget ran out.
    #[serde(default)]
    pub not_run: usize,
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
/// reported (docs/reports.md), or `not_run`. Written as the outcome's own name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SpecOutcome {
    /// What its run reported: any outcome but a broker's fault, which is no verdict on the
    /// submission ([`SpecOutcome::reported`]).
    Ran(OutcomeKind),
    /// The run did not finish it (its budget ran out first), or its report does not mention
    /// it (a run that never reported, a run not trusted), or the broker failed it.
    #[default]
    NotRun,
}

impl SpecOutcome {
    /// Its name in `summary.json` and the pages (`passed`, `not_run`, ...), as it serializes.
    pub fn as_str(self) -> &'static str {
        match self {
            SpecOutcome::Ran(kind) => kind.as_str(),
            SpecOutcome::NotRun => "not_run",
        }
    }

    /// The verdict of what a run reported of a spec (`None`: nothing): a broker's fault is no
    /// verdict on the submission, so the spec was not run.
    pub fn reported(outcome: Option<OutcomeKind>) -> SpecOutcome {
        match outcome {
            None | Some(OutcomeKind::WorldFault) => SpecOutcome::NotRun,
            Some(kind) => SpecOutcome::Ran(kind),
        }
    }

    /// Whether the spec earns its points: it passed (or diverged, the broker's, not the
    /// submission's).
    pub fn earns_points(self) -> bool {
        matches!(
            self,
            SpecOutcome::Ran(OutcomeKind::Passed | OutcomeKind::Divergence)
        )
    }

    /// Whether the submission has no class of the spec's contract.
    pub fn is_not_attempted(self) -> bool {
        self == SpecOutcome::Ran(OutcomeKind::NotAttempted)
    }

    /// Every outcome a grading can give a spec, in the order reports list them.
    fn all() -> impl Iterator<Item = SpecOutcome> {
        OutcomeKind::ALL
            .into_iter()
            .map(|kind| SpecOutcome::reported(Some(kind)))
            .filter(|outcome| *outcome != SpecOutcome::NotRun)
            .chain([SpecOutcome::NotRun])
    }
}

impl Serialize for SpecOutcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SpecOutcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SpecOutcome, D::Error> {
        /// Every name, as an unknown one is told it could have been.
        static NAMES: std::sync::LazyLock<Vec<&'static str>> =
            std::sync::LazyLock::new(|| SpecOutcome::all().map(SpecOutcome::as_str).collect());
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = SpecOutcome;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an outcome's name")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<SpecOutcome, E> {
                SpecOutcome::all()
                    .find(|outcome| outcome.as_str() == name)
                    .ok_or_else(|| E::unknown_variant(name, &NAMES))
            }
        }
        d.deserialize_str(Name)
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
        let names: Vec<&str> = SpecOutcome::all().map(SpecOutcome::as_str).collect();
        assert_eq!(
            names,
            [
                "passed",
                "mismatch",
                "errored",
                "spec_error",
                "skipped",
                "not_attempted",
                "expected_failure",
                "stale",
                "divergence",
                "not_run"
            ]
        );
        for outcome in SpecOutcome::all() {
            let written = serde_json::to_value(outcome).unwrap();
            assert_eq!(written, outcome.as_str());
            assert_eq!(
                serde_json::from_value::<SpecOutcome>(written).unwrap(),
                outcome
            );
        }
        // A run reports a broker's fault, which is no verdict on the submission.
        assert_eq!(
            SpecOutcome::reported(Some(OutcomeKind::WorldFault)),
            SpecOutcome::NotRun
        );
        assert_eq!(SpecOutcome::reported(None), SpecOutcome::NotRun);
        assert_eq!(
            SpecOutcome::reported(Some(OutcomeKind::ExpectedFailure)),
            SpecOutcome::Ran(OutcomeKind::ExpectedFailure)
        );
        // Nor is one read back.
        let error = serde_json::from_value::<SpecOutcome>("world_fault".into()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown variant `world_fault`, expected one of `passed`, `mismatch`, `errored`, `spec_error`, `skipped`, `not_attempted`, `expected_failure`, `stale`, `divergence`, `not_run`"
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
