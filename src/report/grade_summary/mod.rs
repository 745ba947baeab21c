//! The summary of `dlqspec grade`, one file per format: a CSV (`csv.rs`) and a self-contained
//! HTML page (`html.rs`), a row per submission, a column per rule, the score and links to each
//! submission's reports; `summary.json` (`json.rs`), the same rows for `grade --merge` to read
//! back (docs/autograders.md); and what the terminal shows of them (`terminal.rs`). This file
//! holds what several formats say alike.

mod csv;
mod html;
mod json;
mod terminal;

use std::fmt::Write as _;

pub(crate) use terminal::{against_text, cause_table, rule_table};

use super::render::number;
use crate::formats::grade::SpecOutcome;
use crate::run::grading::class_tally::{ClassCause, RuleCount};
use crate::run::grading::regrade::{Against, Standing};
use crate::run::grading::row::{Graded, Status};
use crate::run::grading::suite::About;
use crate::run::grading::summary::SUMMARY_JSON;

/// The summaries a grading leaves in its output folder, each file's name and text:
/// `summary.csv`, `summary.html` and `summary.json`.
pub(crate) fn summaries(
    rows: &[Graded],
    partition: Option<&str>,
    about: Option<&About>,
    against: Option<&Against>,
) -> [(&'static str, String); 3] {
    [
        ("summary.csv", csv::csv(rows)),
        ("summary.html", html::html(rows, about, against)),
        (SUMMARY_JSON, json::json(rows, partition, about, against)),
    ]
}

/// How many changed specs the terminal lists under a submission; summary.json and
/// summary.html list them all.
const SPECS_SHOWN: usize = 5;

/// That the suite changed between the two gradings, when it did: a verdict that changed may
/// have changed for it, not for the submission.
fn suite_changed(against: &Against) -> Option<String> {
    against.suite.as_ref().map(|suite| {
        format!(
            "the suite changed since (digest {} then, {} now): a spec, an exercise.yaml or a reference differs, so a verdict may differ for it and not for the submission",
            super::sanitize::line(&suite.then),
            super::sanitize::line(&suite.now)
        )
    })
}

/// `35 -> 86`, and the status when it changed too: `35 -> 86 (fail -> pass)`.
fn change(before: &Standing, after: &Standing) -> String {
    let mut text = format!("{} -> {}", number(before.score), number(after.score));
    if before.status != after.status {
        let _ = write!(
            text,
            " ({} -> {})",
            before.status.as_str(),
            after.status.as_str()
        );
    }
    text
}

/// A spec's outcome in one grading, or `none` when it was not in that grading's suite.
fn outcome(outcome: &Option<SpecOutcome>) -> &'static str {
    outcome.map_or("none", SpecOutcome::as_str)
}

fn verdict(row: &Graded, rule: &str) -> &'static str {
    row.marks
        .rules
        .get(rule)
        .map_or("", |verdict| verdict.as_str())
}

/// The submissions a rule's share leaves apart: `, 5 not attempted, 1 not run`, or nothing.
fn apart(share: &RuleCount) -> String {
    let mut out = String::new();
    if share.not_attempted > 0 {
        let _ = write!(out, ", {} not attempted", share.not_attempted);
    }
    if share.not_run > 0 {
        let _ = write!(out, ", {} not run", share.not_run);
    }
    out
}

/// Whom a cause hit: `who: alice, bob`; a long list by its ends and how many between.
fn who(cause: &ClassCause, rows: &[Graded]) -> String {
    let names: Vec<String> = cause.who.iter().map(|&i| rows[i].name.clone()).collect();
    format!(
        "who: {}",
        crate::text::listing::shown(&names, String::clone).join(", ")
    )
}

/// `2 pass, 1 fail, 1 broken, 1 timeout`.
pub(crate) fn counts(rows: &[Graded]) -> String {
    let mut parts = Vec::new();
    for status in Status::ALL {
        let n = rows.iter().filter(|row| row.status == status).count();
        if n > 0 {
            parts.push(format!("{n} {}", status.as_str()));
        }
    }
    parts.join(", ")
}

/// The file name of a submission's report of `kind` (`txt`, `jsonl`), when it was written.
fn report(row: &Graded, kind: &str) -> Option<String> {
    row.reports
        .files(&row.name)
        .into_iter()
        .find(|(ext, _)| *ext == kind)
        .map(|(_, file)| file)
}

/// `passed` of `of` as a whole percentage, rounded to the nearest, but never 0% for some nor
/// 100% for not all: 1 of 6 is 17%, 199 of 200 is 99%.
pub(crate) fn percent(passed: usize, of: usize) -> usize {
    if of == 0 {
        return 0;
    }
    let nearest = (passed * 200 + of) / (2 * of);
    match nearest {
        0 if passed > 0 => 1,
        100 if passed < of => 99,
        n => n,
    }
}

/// The name a submission goes by on the page: its folder's or file's name, as given.
fn submission_name(row: &Graded) -> String {
    std::path::Path::new(&row.submission)
        .file_name()
        .map_or_else(
            || row.submission.clone(),
            |name| name.to_string_lossy().into_owned(),
        )
}

/// Whether a submission never ran a spec, so that it has no verdict on any rule: each of its
/// rule cells says so alike, whatever made it so.
fn never_ran(row: &Graded) -> bool {
    matches!(row.status, Status::Broken | Status::Ungraded) || row.marks.rules.is_empty()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::csv::{csv, field};
    use super::html::{html, suite_named};
    use super::json::json;
    use super::*;
    use crate::run::grading::class_tally::RuleCount;
    use crate::run::grading::class_tally::TOP_CAUSES;
    use crate::run::grading::class_tally::{class_causes, rule_shares};
    use crate::run::grading::row::{Marks, RuleVerdict};
    use crate::run::grading::row::{SpecVerdict, WrittenReports};

    fn row(submission: &str, status: Status) -> Graded {
        Graded {
            submission: submission.into(),
            name: "n".into(),
            status,
            marks: Marks {
                score: 1.5,
                max_score: 2.0,
                passed: 1,
                failed: 1,
                not_attempted: 0,
                not_run: 0,
                rules: [("r/a".to_owned(), RuleVerdict::Fail)].into(),
                specs: [(
                    "s/a.yaml".to_owned(),
                    SpecVerdict {
                        outcome: SpecOutcome::Ran(crate::model::outcome::OutcomeKind::Mismatch),
                        cause: Some("r/a: a difference at process".into()),
                        ..SpecVerdict::default()
                    },
                )]
                .into(),
            },
            took: Duration::from_millis(1500),
            note: String::new(),
            reports: WrittenReports {
                text: true,
                json_lines: true,
                pictures: Vec::new(),
            },
        }
    }

    #[test]
    fn each_picture_written_is_linked_by_its_spec() {
        let mut drawn = row("erin", Status::Fail);
        drawn.name = "erin".into();
        drawn.reports.pictures = vec!["specs/dlq-consumer/a.yaml".into()];
        let html = html(&[drawn.clone(), row("n", Status::Fail)], None, None);
        assert!(
            html.contains("<ul class=\"pictures\"><li><a href=\"erin/explain/specs.dlq-consumer.a.html\" title=\"specs/dlq-consumer/a.yaml\">picture of a</a></li></ul>"),
            "{html}"
        );
        assert_eq!(html.matches("/explain/").count(), 1, "{html}");
        let json: serde_json::Value =
            serde_json::from_str(&json(&[drawn], None, None, None)).unwrap();
        assert_eq!(json["rows"][0]["pictures"][0], "specs/dlq-consumer/a.yaml");
    }

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        let csv = csv(&[row("=cmd|' /C calc'!A0,\"x\"", Status::Fail)]);
        let mut lines = csv.lines();
        assert!(lines.next().unwrap().ends_with(",json_report,r/a"));
        assert_eq!(
            lines.next().unwrap(),
            "\"'=cmd|' /C calc'!A0,\"\"x\"\"\",fail,1.5,2,1,1,0,0,1.50,,n.txt,n.jsonl,fail"
        );
    }

    #[test]
    fn a_field_is_no_formula_whatever_the_delimiter_a_spreadsheet_guesses() {
        assert_eq!(
            field("note;=HYPERLINK(\"x\")"),
            "\"note;'=HYPERLINK(\"\"x\"\")\""
        );
        // Whatever follows a delimiter, past spaces and quotes, starts no formula.
        assert_eq!(
            field("see below;=2+5, @SUM(1+9);\"-1"),
            "\"see below;'=2+5,' @SUM(1+9);'\"\"-1\""
        );
        assert_eq!(field("a - b, c"), "\"a - b, c\"");
        assert_eq!(field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(field("-2+3"), "'-2+3");
        assert_eq!(field("a|=1"), "\"a|'=1\"");
        assert_eq!(field("plain text"), "plain text");
        // A tab or CR is escaped by the sanitizer, so it never leads a field raw.
        assert_eq!(field("\t=1"), "\\t=1");
    }

    #[test]
    fn html_escapes_what_submissions_are_called() {
        let html = html(&[row("<script>\u{1b}", Status::Timeout)], None, None);
        assert!(html.contains("&lt;script&gt;\\x1b"), "{html}");
        // The page's one script is its own sorting, never the submission's name.
        assert!(html.matches("<script>").count() == 1 && !html.contains('\u{1b}'));
        assert!(html.contains("<script>\ndocument.querySelectorAll"));
        assert!(html.contains("<td class=\"timeout\">timeout</td>"));
        assert!(html.contains("1 submission: 1 timeout"));
        // The report name is the link, as it is.
        assert!(html.contains("<a href=\"n.txt\">text report</a>"), "{html}");
    }

    #[test]
    fn only_reports_that_were_written_are_linked() {
        let mut none = row("carol", Status::Broken);
        none.reports = WrittenReports::default();
        let mut text_only = row("dave", Status::Timeout);
        text_only.name = "dave".into();
        text_only.reports.json_lines = false;
        let rows = [none, text_only];
        let html = html(&rows, None, None);
        assert!(
            !html.contains("n.txt") && !html.contains(".jsonl"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"dave.txt\">text report</a>"),
            "{html}"
        );
        let csv = csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        // Carol never ran: her rule cells are blank, as every such row's.
        assert!(lines[1].ends_with(",,,"), "{csv}");
        assert!(lines[2].contains(",dave.txt,,fail"), "{csv}");
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None, None, None)).unwrap();
        assert_eq!(json["rows"][0]["report"], serde_json::Value::Null);
        assert_eq!(json["rows"][1]["report"], "dave.txt");
        assert_eq!(json["rows"][1]["json_report"], serde_json::Value::Null);
    }

    #[test]
    fn the_class_view_gives_each_rules_share_of_the_class() {
        let mut alice = row("alice", Status::Pass);
        alice.marks.rules = [("r/a".to_owned(), RuleVerdict::Pass)].into();
        let bob = row("bob", Status::Fail);
        let mut carol = row("carol", Status::Broken);
        carol.marks.rules.clear();
        let rows = [alice, bob, carol];
        assert_eq!(
            rule_shares(&rows),
            [RuleCount {
                rule: "r/a".to_owned(),
                passed: 1,
                submissions: 3,
                not_attempted: 0,
                not_run: 0
            }]
        );
        assert_eq!(rule_table(&rows), "  r/a     1/3     33% passing\n");
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None, None, None)).unwrap();
        assert_eq!(json["rules"]["r/a"]["passed"], 1);
        assert_eq!(json["rules"]["r/a"]["submissions"], 3);
        let html = html(&rows, None, None);
        assert!(
            html.contains("<td>1 / 3</td><td><div class=\"bar\"><div style=\"width:33%\">"),
            "{html}"
        );
        assert!(html.contains("<table id=\"rows\">") && html.contains("addEventListener('click'"));
    }

    #[test]
    fn the_class_view_counts_the_most_common_failure_causes() {
        // A cause is its key: the same key is one cause however its line reads.
        use crate::model::outcome::OutcomeKind::{Errored, Mismatch, Passed};
        use SpecOutcome::{NotRun, Ran};
        let verdict = |outcome: SpecOutcome, cause: Option<&str>| SpecVerdict {
            outcome,
            cause: cause.map(str::to_owned),
            cause_id: cause.map(|c| match c.starts_with("r/a: ") {
                true => "c-late".to_owned(),
                false => format!("c-{c}"),
            }),
            cause_rule: cause
                .filter(|c| c.starts_with("r/a: "))
                .map(|_| "r/a".to_owned()),
        };
        let mut alice = row("alice", Status::Pass);
        alice.marks.specs = [("s/a.yaml".to_owned(), verdict(Ran(Passed), None))].into();
        let mut bob = row("bob", Status::Fail);
        bob.name = "bob".into();
        bob.marks.specs = [
            (
                "s/a.yaml".to_owned(),
                verdict(Ran(Mismatch), Some("r/a: late")),
            ),
            (
                "s/b.yaml".to_owned(),
                verdict(Ran(Errored), Some("boom \u{1b}")),
            ),
            ("s/c.yaml".to_owned(), verdict(NotRun, None)),
        ]
        .into();
        let mut carol = row("carol", Status::Fail);
        carol.name = "carol".into();
        carol.marks.specs = [
            (
                "s/a.yaml".to_owned(),
                verdict(Ran(Mismatch), Some("r/a: late")),
            ),
            (
                "s/b.yaml".to_owned(),
                verdict(Ran(Mismatch), Some("r/a: late for b")),
            ),
        ]
        .into();
        let rows = [alice, bob, carol];
        let causes = class_causes(&rows);
        let counted: Vec<(&str, usize, usize, usize)> = causes
            .iter()
            .map(|c| (c.cause.as_str(), c.submissions, c.specs, c.failures))
            .collect();
        assert_eq!(counted, [("r/a: late", 2, 2, 3), ("boom \u{1b}", 1, 1, 1)]);
        assert_eq!(causes[0].example, (1, "s/a.yaml".to_owned()));
        let table = cause_table(&rows);
        assert_eq!(
            table,
            "most common failure causes:\n     2 submissions    2 specs  r/a: late  (e.g. bob: s/a.yaml)\n                           who: bob, carol\n     1 submission     1 spec   boom \\x1b  (e.g. bob: s/b.yaml)\n                           who: bob\n"
        );
        assert_eq!(causes[0].who, [1, 2]);
        assert_eq!(causes[0].rule.as_deref(), Some("r/a"));
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None, None, None)).unwrap();
        assert_eq!(json["causes"][0]["cause"], "r/a: late");
        assert_eq!(json["causes"][0]["id"], "c-late");
        assert_eq!(json["causes"][0]["rule"], "r/a");
        assert_eq!(
            json["causes"][0]["who"],
            serde_json::json!(["bob", "carol"])
        );
        assert_eq!(json["causes"][0]["failures"], 3);
        assert_eq!(
            json["rows"][2]["specs"]["s/b.yaml"],
            serde_json::json!({"outcome": "mismatch", "cause": "r/a: late for b", "cause_id": "c-late", "cause_rule": "r/a"})
        );
        assert_eq!(json["causes"][0]["example"]["name"], "bob");
        assert_eq!(json["causes"][0]["example"]["spec"], "s/a.yaml");
        assert_eq!(
            json["rows"][1]["specs"]["s/c.yaml"],
            serde_json::json!({"outcome": "not_run"})
        );
        let html = html(&rows, None, None);
        assert!(
            html.contains("<tr><td>r/a: late</td><td>2</td><td>2</td><td>3</td><td>bob, carol</td><td><a href=\"bob.txt\">bob</a>: s/a.yaml</td></tr>"),
            "{html}"
        );
        assert!(html.contains("<td>boom \\x1b</td>"), "{html}");
        // At most the top ten.
        let many: Vec<Graded> = (0..12)
            .map(|i| {
                let mut row = row("x", Status::Fail);
                row.marks.specs = [(
                    "s/a.yaml".to_owned(),
                    verdict(Ran(Mismatch), Some(&format!("cause {i}"))),
                )]
                .into();
                row
            })
            .collect();
        assert_eq!(class_causes(&many).len(), TOP_CAUSES);
        assert_eq!(cause_table(&rows[..1]), "");
    }

    #[test]
    fn a_suite_given_file_by_file_is_named_by_its_folder() {
        let files: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|f| format!("specs/dlq-consumer/{f}.yaml"))
            .collect();
        assert_eq!(
            suite_named(&files).into_string(),
            "<b>specs/dlq-consumer/</b> (3 paths given)"
        );
        assert_eq!(
            suite_named(&["specs".into(), "more".into()]).into_string(),
            "<b>specs</b>, <b>more</b>"
        );
        assert_eq!(
            suite_named(&["a.yaml".into(), "b.yaml".into(), "c.yaml".into()]).into_string(),
            "<b>./</b> (3 paths given)"
        );
    }

    #[test]
    fn percentages_are_rounded_honestly() {
        assert_eq!(percent(1, 6), 17);
        assert_eq!(percent(1, 3), 33);
        assert_eq!(percent(2, 3), 67);
        assert_eq!(percent(199, 200), 99);
        assert_eq!(percent(1, 1000), 1);
        assert_eq!(percent(0, 5), 0);
        assert_eq!(percent(5, 5), 100);
        assert_eq!(percent(0, 0), 0);
        let mut some = row("a", Status::Pass);
        some.marks.rules = [("r/a".to_owned(), RuleVerdict::Pass)].into();
        let rows: Vec<Graded> = std::iter::once(some)
            .chain((0..5).map(|_| row("b", Status::Fail)))
            .collect();
        assert!(
            rule_table(&rows).contains("1/6     17% passing"),
            "{}",
            rule_table(&rows)
        );
        assert!(html(&rows, None, None).contains("width:17%"));
    }

    #[test]
    fn the_page_says_what_was_graded_and_rows_that_never_ran_alike() {
        let about = About {
            folders: vec!["specs/dlq-consumer".into()],
            specs: 52,
            digest: "7f8f6c98b998".into(),
            graded: "2026-12-01 22:43 UTC".into(),
            dlqspec: "0.1.0".into(),
        };
        let mut empty = row("class/empty", Status::Broken);
        empty.marks.rules.clear();
        empty.reports = WrittenReports::default();
        let broken = row("class/syntax", Status::Broken);
        let mut ungraded = row("class/linus", Status::Ungraded);
        ungraded.marks.rules.clear();
        let rows = [empty, broken, ungraded, row("class/bob", Status::Fail)];
        let html = html(&rows, Some(&about), None);
        assert!(
            html.contains("<p class=\"about\" id=\"about\">suite <b>specs/dlq-consumer</b> (52 specs, digest <code>7f8f6c98b998</code>) · graded 2026-12-01 22:43 UTC · dlqspec 0.1.0</p>"),
            "{html}"
        );
        // The table comes before the class view, each row named by its folder's name.
        assert!(html.find("id=\"rows\"") < html.find("<h2>rules</h2>"));
        assert!(html.contains("<span class=\"name\" title=\"class/empty\">empty</span>"));
        // Every row that never ran says so in each rule cell, the same way.
        assert_eq!(
            html.matches("title=\"not run\">\u{2013}</td>").count(),
            3,
            "{html}"
        );
        assert!(html.contains("<td class=\"rule fail\" title=\"r/a: fail\">\u{2717}</td>"));
        assert!(
            html.contains("<td class=\"score\">not graded</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"score\">1.5 / 2 (75%)</td>"),
            "{html}"
        );
        let csv = csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[1].ends_with(",,,") && lines[2].ends_with(",n.txt,n.jsonl,"),
            "{csv}"
        );
        assert!(lines[3].starts_with("class/linus,ungraded,,2,"), "{csv}");
        assert!(lines[4].ends_with(",fail"), "{csv}");
        // The ungraded row is no part of the class's shares.
        assert_eq!(
            rule_shares(&rows),
            [RuleCount {
                rule: "r/a".to_owned(),
                passed: 0,
                submissions: 3,
                not_attempted: 0,
                not_run: 0
            }]
        );
        let json: serde_json::Value =
            serde_json::from_str(&json(&rows, None, Some(&about), None)).unwrap();
        assert_eq!(json["suite"]["digest"], "7f8f6c98b998");
        let suite: crate::formats::grade::SuiteRecord =
            serde_json::from_value(json["suite"].clone()).unwrap();
        assert_eq!(About::from(suite), about);
    }

    #[test]
    fn summary_json_keeps_its_keys_in_the_order_they_were_always_written() {
        let rows = vec![row("a", Status::Fail)];
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None, None, None)).unwrap();
        let keys =
            |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            keys(&json),
            [
                "format",
                "version",
                "partition",
                "suite",
                "rules",
                "causes",
                "against",
                "rows"
            ]
        );
        assert_eq!(
            keys(&json["rows"][0]),
            [
                "submission",
                "name",
                "status",
                "score",
                "max_score",
                "passed",
                "failed",
                "seconds",
                "note",
                "report",
                "json_report",
                "pictures",
                "rules",
                "specs",
                "not_attempted",
                "not_run"
            ]
        );
    }

    #[test]
    fn summary_json_reads_back_into_the_same_rows() {
        let mut rows = vec![
            row("a/alice\u{1b}.py", Status::Fail),
            row("b", Status::Pass),
        ];
        rows[1].name = "b".into();
        rows[1].note = "a \"note\"".into();
        rows[1].reports = WrittenReports::default();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        let text = json(&rows, Some("1/2"), None, None);
        assert!(
            !text.contains('\u{1b}') && text.lines().count() > 10,
            "{text}"
        );
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            crate::run::grading::summary::read_summary(&path).unwrap(),
            rows
        );
    }
}
