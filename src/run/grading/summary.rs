//! `summary.json` read back (`grade --merge`, `--against`): bounded, a regular file only, its
//! format and version checked, and each row checked field by field into a `Graded`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::formats::grade::{RowRecord, SummaryFile, SummaryHead};
use crate::run::grading::class::is_report_name;
use crate::run::grading::pictures::MAX_PICTURES;
use crate::run::grading::read_bounded;
use crate::run::grading::row::{
    Graded, Marks, RuleVerdict, SpecVerdict, Status, WrittenReports, cause_line,
};
use crate::run::grading::suite::About;

/// The machine-readable summary each `grade --output DIR` leaves, read back by `--merge`.
pub(crate) const SUMMARY_JSON: &str = "summary.json";

/// What `summary.json` says it is, and the version of its layout this build writes and reads.
pub(crate) use crate::formats::grade::{SUMMARY_FORMAT, SUMMARY_VERSION};

/// The most of a `summary.json` read back.
pub(crate) const MAX_SUMMARY_BYTES: u64 = 64 << 20;

/// Reads a shard's `summary.json` back into its rows, validated: every error names the file
/// (with `:line:col` for JSON that does not parse) and says what to do.
#[cfg(test)]
pub(crate) fn read_summary(path: &Path) -> Result<Vec<Graded>, String> {
    read_summary_about(path).map(|(rows, _)| rows)
}

/// `read_summary`, with what the summary says of its grading (`About`), when it says it.
pub(crate) fn read_summary_about(path: &Path) -> Result<(Vec<Graded>, Option<About>), String> {
    let shown = path.display();
    let bytes = read_bounded(path, MAX_SUMMARY_BYTES)?;
    // Where the text is no JSON, where it is JSON of another shape: each told as such.
    let at = |e: serde_json::Error| {
        let (line, column) = (e.line(), e.column());
        let why = e.to_string();
        let why = why
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(&why)
            .to_owned();
        (line, column, why)
    };
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).map_err(|e| {
        let (line, column, why) = at(e);
        format!(
            "{shown}:{line}:{column}: not a summary: {why}; grade again with `dlqspec grade --output`"
        )
    })?;
    let head: SummaryHead = serde_json::from_slice(&bytes).unwrap_or_default();
    if head.format.as_deref() != Some(SUMMARY_FORMAT) {
        return Err(format!(
            "{shown}: not a dlqspec grade summary (its `format` is not `{SUMMARY_FORMAT}`)"
        ));
    }
    match head.version {
        Some(SUMMARY_VERSION) => {}
        other => {
            return Err(format!(
                "{shown}: summary version {} is not the {SUMMARY_VERSION} this dlqspec reads; grade, and merge or compare, with the same dlqspec",
                other.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
            ));
        }
    }
    let summary: SummaryFile = serde_json::from_slice(&bytes).map_err(|e| {
        let (line, column, why) = at(e);
        format!("{shown}:{line}:{column}: {why}")
    })?;
    let rows = summary
        .rows
        .into_iter()
        .enumerate()
        .map(|(i, row)| summary_row(row).map_err(|why| format!("{shown}: rows[{i}]: {why}")))
        .collect::<Result<_, _>>()?;
    Ok((rows, summary.suite.map(About::from)))
}

/// One row of `summary.json`, checked field by field.
fn summary_row(row: RowRecord) -> Result<Graded, String> {
    let amount = |key: &str, value: f64| {
        Some(value)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("`{key}` must be a number of at least 0"))
    };
    let name = row.name;
    if !is_report_name(&name) {
        return Err(format!(
            "`name` {:?} is not a report name dlqspec gives (letters, digits, `-`, `_`, `.`)",
            name
        ));
    }
    // A report is either the one its name gives or `null` (none was written).
    let report = |key: &str, file: &Option<String>, ext: &str| match file {
        None => Ok(false),
        Some(file) if *file == format!("{}.{ext}", name) => Ok(true),
        Some(_) => Err(format!("`{key}` must be `NAME.{ext}` or null")),
    };
    // The pictures: the specs' paths, at most as many as grade draws.
    if row.pictures.len() > MAX_PICTURES {
        return Err(format!(
            "`pictures` must be a list of at most {MAX_PICTURES} spec paths"
        ));
    }
    let reports = WrittenReports {
        text: report("report", &row.report, "txt")?,
        json_lines: report("json_report", &row.json_report, "jsonl")?,
        pictures: row.pictures,
    };
    let Some(status) = Status::from_name(&row.status) else {
        return Err(format!("unknown `status` {:?}", row.status));
    };
    let mut rules = BTreeMap::new();
    for (rule, verdict) in row.rules {
        let Some(verdict) = RuleVerdict::from_name(&verdict) else {
            return Err(format!(
                "rule {rule:?} must be `pass`, `fail`, `not_run` or `not_attempted`"
            ));
        };
        rules.insert(rule, verdict);
    }
    let mut specs = BTreeMap::new();
    for (path, verdict) in row.specs {
        let line = |text: Option<String>| text.as_deref().map(cause_line);
        let verdict = SpecVerdict {
            outcome: verdict.outcome,
            cause: line(verdict.cause),
            cause_id: line(verdict.cause_id),
            cause_rule: line(verdict.cause_rule),
        };
        specs.insert(path, verdict);
    }
    Ok(Graded {
        submission: row.submission,
        name,
        status,
        marks: Marks {
            score: amount("score", row.score)?,
            max_score: amount("max_score", row.max_score)?,
            passed: row.passed,
            failed: row.failed,
            not_attempted: row.not_attempted,
            not_run: row.not_run,
            rules,
            specs,
        },
        took: Duration::try_from_secs_f64(amount("seconds", row.seconds)?)
            .map_err(|_| "`seconds` is out of range".to_owned())?,
        note: row.note,
        reports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn summary_row() -> Value {
        json!({
            "submission": "class/a", "name": "a", "status": "fail", "score": 1, "max_score": 2,
            "passed": 1, "failed": 1, "seconds": 0.5, "note": "", "report": "a.txt",
            "json_report": null, "pictures": ["s/b.yaml"], "rules": {"r/a": "pass", "r/b": "fail"},
            "specs": {"s/a.yaml": {"outcome": "passed"}, "s/b.yaml": {"outcome": "mismatch", "cause": "r/b: late\nmore"}},
        })
    }

    fn read(dir: &Path, summary: &Value) -> Result<Vec<Graded>, String> {
        let path = dir.join(SUMMARY_JSON);
        std::fs::write(&path, summary.to_string()).unwrap();
        read_summary(&path).map_err(|why| why.replace(&path.display().to_string(), "FILE"))
    }

    #[test]
    fn a_summary_reads_back_into_its_rows_each_field_checked() {
        let dir = tempfile::tempdir().unwrap();
        let summary = |row: Value| json!({"format": SUMMARY_FORMAT, "version": SUMMARY_VERSION, "rows": [row]});
        let rows = read(dir.path(), &summary(summary_row())).unwrap();
        assert_eq!(rows[0].status, Status::Fail);
        assert_eq!(rows[0].marks.rules["r/b"], RuleVerdict::Fail);
        assert_eq!(
            rows[0].marks.specs["s/b.yaml"].cause.as_deref(),
            Some("r/b: late")
        );
        assert_eq!(
            rows[0].reports,
            WrittenReports {
                text: true,
                json_lines: false,
                pictures: vec!["s/b.yaml".to_owned()],
            }
        );
        for (key, value, said) in [
            (
                "status",
                json!("won"),
                "FILE: rows[0]: unknown `status` \"won\"",
            ),
            (
                "name",
                json!("../a"),
                "FILE: rows[0]: `name` \"../a\" is not a report name",
            ),
            (
                "report",
                json!("b.txt"),
                "FILE: rows[0]: `report` must be `NAME.txt` or null",
            ),
            (
                "score",
                json!(-1),
                "FILE: rows[0]: `score` must be a number of at least 0",
            ),
            (
                "rules",
                json!({"r/a": "maybe"}),
                "FILE: rows[0]: rule \"r/a\" must be `pass`, `fail`, `not_run` or `not_attempted`",
            ),
            (
                "pictures",
                json!(["1", "2", "3", "4", "5", "6"]),
                "FILE: rows[0]: `pictures` must be a list of at most 5",
            ),
        ] {
            let mut row = summary_row();
            row[key] = value;
            let why = read(dir.path(), &summary(row)).unwrap_err();
            assert!(why.starts_with(said), "{key}: {why}");
        }
    }

    #[test]
    fn a_file_of_another_format_or_version_is_told_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let why = read(dir.path(), &json!({"format": "other", "rows": []})).unwrap_err();
        assert!(
            why.starts_with("FILE: not a dlqspec grade summary"),
            "{why}"
        );
        let old = json!({"format": SUMMARY_FORMAT, "version": 1, "rows": []});
        let why = read(dir.path(), &old).unwrap_err();
        assert!(
            why.starts_with("FILE: summary version 1 is not the 2"),
            "{why}"
        );
        std::fs::write(dir.path().join(SUMMARY_JSON), "{\"rows\": [").unwrap();
        let why = read_summary(&dir.path().join(SUMMARY_JSON)).unwrap_err();
        assert!(
            why.contains(":1:") && why.contains(": not a summary: "),
            "{why}"
        );
    }
}
