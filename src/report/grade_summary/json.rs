//! `summary.json`: the rows of a grading as data, versioned, for `grade --merge` and
//! `--against` to read back.

use super::{report, verdict};
use crate::formats::grade::{
    AgainstRecord, CauseExample, CauseRecord, ChangedRecord, GoneRecord, NewRecord, RowRecord,
    RuleShare, SpecChange, SpecVerdictRecord, StandingRecord, SummaryFile,
};
use crate::report::sanitize;
use crate::run::grading::class_tally::{class_causes, rule_shares};
use crate::run::grading::regrade::{Against, Standing};
use crate::run::grading::row::Graded;
use crate::run::grading::suite::About;
use crate::run::grading::summary::{SUMMARY_FORMAT, SUMMARY_VERSION};

/// `summary.json`'s `against`: the whole regrade as data.
fn against_record(rows: &[Graded], against: &Against) -> AgainstRecord {
    let brief = |standing: &Standing| StandingRecord {
        status: standing.status.as_str().to_owned(),
        score: standing.score,
        max_score: standing.max_score,
    };
    let diff = &against.diff;
    AgainstRecord {
        dir: against.dir.clone(),
        no_change: diff.no_change(),
        unchanged: diff.unchanged,
        changed: diff
            .changed
            .iter()
            .map(|changed| {
                let row = &rows[changed.row];
                ChangedRecord {
                    name: row.name.clone(),
                    submission: row.submission.clone(),
                    before: brief(&changed.before),
                    after: brief(&Standing::of(row)),
                    specs: changed
                        .specs
                        .iter()
                        .map(|(path, was, is)| SpecChange {
                            spec: path.clone(),
                            before: *was,
                            after: *is,
                        })
                        .collect(),
                }
            })
            .collect(),
        new: diff
            .new
            .iter()
            .map(|&i| {
                let row = &rows[i];
                NewRecord {
                    name: row.name.clone(),
                    submission: row.submission.clone(),
                    after: brief(&Standing::of(row)),
                }
            })
            .collect(),
        gone: diff
            .gone
            .iter()
            .map(|(name, submission, before)| GoneRecord {
                name: name.clone(),
                submission: submission.clone(),
                before: brief(before),
            })
            .collect(),
    }
}

/// `summary.json`: the rows as data, versioned, for `grade --merge` (the text as given: JSON
/// escapes what it must, and `sanitize::json` what a terminal would act on).
pub(super) fn json(
    rows: &[Graded],
    partition: Option<&str>,
    about: Option<&About>,
    against: Option<&Against>,
) -> String {
    let all = rows;
    let rows = rows
        .iter()
        .map(|row| RowRecord {
            submission: row.submission.clone(),
            name: row.name.clone(),
            status: row.status.as_str().to_owned(),
            score: row.marks.score,
            max_score: row.marks.max_score,
            passed: row.marks.passed,
            failed: row.marks.failed,
            not_attempted: row.marks.not_attempted,
            not_run: row.marks.not_run,
            seconds: row.took.as_secs_f64(),
            note: row.note.clone(),
            report: report(row, "txt"),
            json_report: report(row, "jsonl"),
            pictures: row.reports.pictures.clone(),
            rules: row
                .marks
                .rules
                .keys()
                .map(|rule| (rule.clone(), verdict(row, rule).to_owned()))
                .collect(),
            specs: row
                .marks
                .specs
                .iter()
                .map(|(path, verdict)| {
                    let verdict = SpecVerdictRecord {
                        outcome: verdict.outcome,
                        cause: verdict.cause.clone(),
                        cause_id: verdict.cause_id.clone(),
                        cause_rule: verdict.cause_rule.clone(),
                    };
                    (path.clone(), verdict)
                })
                .collect(),
        })
        .collect();
    let causes = class_causes(all)
        .into_iter()
        .map(|cause| {
            let (row, spec) = cause.example;
            CauseRecord {
                who: cause.who.iter().map(|&i| all[i].name.clone()).collect(),
                cause: cause.cause,
                id: cause.id,
                rule: cause.rule,
                submissions: cause.submissions,
                specs: cause.specs,
                failures: cause.failures,
                example: CauseExample {
                    submission: all[row].submission.clone(),
                    name: all[row].name.clone(),
                    spec,
                },
            }
        })
        .collect();
    let shares = rule_shares(all)
        .into_iter()
        .map(|share| {
            (
                share.rule,
                RuleShare {
                    passed: share.passed,
                    submissions: share.submissions,
                    not_attempted: share.not_attempted,
                    not_run: share.not_run,
                },
            )
        })
        .collect();
    let summary = SummaryFile {
        format: SUMMARY_FORMAT.to_owned(),
        version: SUMMARY_VERSION,
        partition: partition.map(str::to_owned),
        suite: about.map(About::record),
        rules: Some(shares),
        causes: Some(causes),
        against: against.map(|against| against_record(all, against)),
        rows,
    };
    // Pretty, for a person reading it too; a string never spans lines, so each line can be
    // made safe on its own.
    let text = serde_json::to_string_pretty(&summary).unwrap_or_default();
    let mut out = String::with_capacity(text.len() + 1);
    for line in text.lines() {
        out.push_str(&sanitize::json(line));
        out.push('\n');
    }
    out
}
