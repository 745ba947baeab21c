//! The summary of `dlqspec grade`: a CSV and a self-contained HTML page, a row per submission,
//! a column per rule, the score and links to each submission's reports; and `summary.json`, the
//! same rows for `grade --merge` to read back (docs/autograders.md).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::json;

use super::render::number;
use super::sanitize;
use crate::run::grading::{Graded, RuleVerdict, SUMMARY_FORMAT, SUMMARY_VERSION, Status};

/// Every rule any submission's specs cover, sorted.
fn rules(rows: &[Graded]) -> Vec<String> {
    let rules: BTreeSet<&String> = rows.iter().flat_map(|row| row.rules.keys()).collect();
    rules.into_iter().cloned().collect()
}

fn verdict(row: &Graded, rule: &str) -> &'static str {
    match row.rules.get(rule) {
        Some(RuleVerdict::Pass) => "pass",
        Some(RuleVerdict::Fail) => "fail",
        None => "",
    }
}

/// Each rule with how many of the class's submissions passed it, and the class's size: a
/// submission that never ran (or did not reach a rule) passed none.
pub fn rule_shares(rows: &[Graded]) -> Vec<(String, usize, usize)> {
    rules(rows)
        .into_iter()
        .map(|rule| {
            let passed = rows
                .iter()
                .filter(|row| row.rules.get(&rule) == Some(&RuleVerdict::Pass))
                .count();
            (rule, passed, rows.len())
        })
        .collect()
}

/// The class view for a terminal: a line per rule, its share of the class passing.
pub fn rule_table(rows: &[Graded]) -> String {
    let shares = rule_shares(rows);
    let width = shares
        .iter()
        .map(|(rule, ..)| rule.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (rule, passed, submissions) in shares {
        let percent = (passed * 100).checked_div(submissions).unwrap_or(0);
        let _ = writeln!(
            out,
            "  {:<width$}  {passed:>4}/{submissions:<4} {percent:>3}% passing",
            sanitize::line(&rule)
        );
    }
    out
}

/// `2 pass, 1 fail, 1 broken, 1 timeout`.
pub fn counts(rows: &[Graded]) -> String {
    let mut parts = Vec::new();
    for status in [
        Status::Pass,
        Status::Fail,
        Status::Broken,
        Status::Timeout,
        Status::Crashed,
    ] {
        let n = rows.iter().filter(|row| row.status == status).count();
        if n > 0 {
            parts.push(format!("{n} {}", status.as_str()));
        }
    }
    parts.join(", ")
}

/// A CSV field: quoted when it must be, control characters escaped, and a leading `=`, `+`,
/// `-` or `@` defused so that a spreadsheet never reads a submission's name as a formula.
fn field(text: &str) -> String {
    let text = sanitize::line(text);
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.into_owned()
    };
    if text.contains([',', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

pub fn csv(rows: &[Graded]) -> String {
    let rules = rules(rows);
    let mut out = String::from(
        "submission,status,score,max_score,passed,failed,seconds,note,report,json_report",
    );
    for rule in &rules {
        out.push(',');
        out.push_str(&field(rule));
    }
    out.push('\n');
    for row in rows {
        let cells = [
            field(&row.submission),
            row.status.as_str().to_owned(),
            number(row.score),
            number(row.max_score),
            row.passed.to_string(),
            row.failed.to_string(),
            format!("{:.2}", row.took.as_secs_f64()),
            field(&row.note),
            report(row, "txt").map_or_else(String::new, |file| field(&file)),
            report(row, "jsonl").map_or_else(String::new, |file| field(&file)),
        ];
        out.push_str(&cells.join(","));
        for rule in &rules {
            out.push(',');
            out.push_str(verdict(row, rule));
        }
        out.push('\n');
    }
    out
}

/// The file name of a submission's report of `kind` (`txt`, `jsonl`), when it was written.
fn report(row: &Graded, kind: &str) -> Option<String> {
    row.reports
        .files(&row.name)
        .into_iter()
        .find(|(ext, _)| *ext == kind)
        .map(|(_, file)| file)
}

/// Links to the pictures of the specs a submission failed (only those written), each named
/// by its spec, in a list of class `pictures`.
fn pictures(row: &Graded) -> String {
    if row.reports.pictures.is_empty() {
        return String::new();
    }
    let mut out = String::from("<ul class=\"pictures\">");
    for spec in &row.reports.pictures {
        let file = crate::run::grading::picture_file(&row.name, spec);
        let _ = write!(out, "<li>{}</li>", link(&file, spec));
    }
    out.push_str("</ul>");
    out
}

/// Text for HTML, escaped; control characters shown as escapes.
fn escape(text: &str) -> String {
    sanitize::line(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A link to a report beside the page. Report names are made of letters, digits, `-`, `_` and
/// `.` only (`grading::report_names` gives them, `grading::read_summary` checks them), so the
/// name is its own URL; it is escaped as any attribute is all the same.
fn link(href: &str, label: &str) -> String {
    format!("<a href=\"{}\">{}</a>", escape(href), escape(label))
}

/// `summary.json`: the rows as data, versioned, for `grade --merge` (the text as given: JSON
/// escapes what it must, and `sanitize::json` what a terminal would act on).
pub fn json(rows: &[Graded], partition: Option<&str>) -> String {
    let all = rows;
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let rules: serde_json::Map<String, serde_json::Value> = row
                .rules
                .keys()
                .map(|rule| (rule.clone(), verdict(row, rule).into()))
                .collect();
            json!({
                "submission": row.submission,
                "name": row.name,
                "status": row.status.as_str(),
                "score": row.score,
                "max_score": row.max_score,
                "passed": row.passed,
                "failed": row.failed,
                "seconds": row.took.as_secs_f64(),
                "note": row.note,
                "report": report(row, "txt"),
                "json_report": report(row, "jsonl"),
                "pictures": row.reports.pictures,
                "rules": rules,
            })
        })
        .collect();
    let shares: serde_json::Map<String, serde_json::Value> = rule_shares(all)
        .into_iter()
        .map(|(rule, passed, submissions)| {
            (rule, json!({"passed": passed, "submissions": submissions}))
        })
        .collect();
    let summary = json!({
        "format": SUMMARY_FORMAT,
        "version": SUMMARY_VERSION,
        "partition": partition,
        "rules": shares,
        "rows": rows,
    });
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

/// Sorts the submissions' table by the column whose heading is clicked (again: the other way),
/// numbers as numbers; the page stays self-contained.
const SORT_SCRIPT: &str = "<script>\ndocument.querySelectorAll('#rows tr:first-child th').forEach(function (th, col) {\n  th.style.cursor = 'pointer';\n  th.addEventListener('click', function () {\n    var table = document.getElementById('rows');\n    var rows = Array.prototype.slice.call(table.rows, 1);\n    var down = th.dataset.down !== '1';\n    th.dataset.down = down ? '1' : '0';\n    var key = function (row) { var t = row.cells[col].textContent; var n = parseFloat(t); return isNaN(n) ? t : n; };\n    rows.sort(function (a, b) { var x = key(a), y = key(b); var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1); return down ? c : -c; });\n    rows.forEach(function (row) { table.tBodies[0].appendChild(row); });\n  });\n});\n</script>\n";

pub fn html(rows: &[Graded]) -> String {
    let rules = rules(rows);
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dlqspec grades</title>\n<style>\nbody{font-family:system-ui,sans-serif;margin:1.5em}\ntable{border-collapse:collapse}\nth,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\nth.rule{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:.8em}\n.pass{background:#dfd}.fail,.broken,.timeout,.crashed{background:#fdd}\n.bar{display:inline-block;width:10em;height:.8em;background:#fdd;vertical-align:middle}.bar div{height:100%;background:#6b6}\n</style>\n</head>\n<body>\n",
    );
    let _ = writeln!(
        out,
        "<h1>dlqspec grades</h1>\n<p>{} submissions: {}</p>",
        rows.len(),
        escape(&counts(rows))
    );
    out.push_str("<h2>rules</h2>\n<table class=\"rules\">\n<tr><th>rule</th><th>passing</th><th>share of the class</th></tr>\n");
    for (rule, passed, submissions) in rule_shares(rows) {
        let percent = (passed * 100).checked_div(submissions).unwrap_or(0);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{passed} / {submissions}</td><td><div class=\"bar\"><div style=\"width:{percent}%\"></div></div> {percent}%</td></tr>",
            escape(&rule)
        );
    }
    out.push_str("</table>\n<h2>submissions</h2>\n<p>Click a heading to sort by it.</p>\n");
    out.push_str("<table id=\"rows\">\n<tr><th>submission</th><th>status</th><th>score</th><th>seconds</th><th>reports</th><th>note</th>");
    for rule in &rules {
        let _ = write!(out, "<th class=\"rule\">{}</th>", escape(rule));
    }
    out.push_str("</tr>\n");
    for row in rows {
        let status = row.status.as_str();
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"{status}\">{status}</td><td>{} / {}</td><td>{:.2}</td><td>{} {}{}</td><td>{}</td>",
            escape(&row.submission),
            number(row.score),
            number(row.max_score),
            row.took.as_secs_f64(),
            report(row, "txt").map_or_else(String::new, |file| link(&file, "text")),
            report(row, "jsonl").map_or_else(String::new, |file| link(&file, "json")),
            pictures(row),
            escape(&row.note),
        );
        for rule in &rules {
            let verdict = verdict(row, rule);
            let _ = write!(out, "<td class=\"{verdict}\">{verdict}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out.push_str(SORT_SCRIPT);
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::run::grading::Written;

    fn row(submission: &str, status: Status) -> Graded {
        Graded {
            submission: submission.into(),
            name: "n".into(),
            status,
            score: 1.5,
            max_score: 2.0,
            passed: 1,
            failed: 1,
            rules: [("r/a".to_owned(), RuleVerdict::Fail)].into(),
            took: Duration::from_millis(1500),
            note: String::new(),
            reports: Written {
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
        let html = html(&[drawn.clone(), row("n", Status::Fail)]);
        assert!(
            html.contains("<ul class=\"pictures\"><li><a href=\"erin/explain/specs.dlq-consumer.a.html\">specs/dlq-consumer/a.yaml</a></li></ul>"),
            "{html}"
        );
        assert_eq!(html.matches("/explain/").count(), 1, "{html}");
        let json: serde_json::Value = serde_json::from_str(&json(&[drawn], None)).unwrap();
        assert_eq!(json["rows"][0]["pictures"][0], "specs/dlq-consumer/a.yaml");
    }

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        let csv = csv(&[row("=cmd|' /C calc'!A0,\"x\"", Status::Fail)]);
        let mut lines = csv.lines();
        assert!(lines.next().unwrap().ends_with(",json_report,r/a"));
        assert_eq!(
            lines.next().unwrap(),
            "\"'=cmd|' /C calc'!A0,\"\"x\"\"\",fail,1.5,2,1,1,1.50,,n.txt,n.jsonl,fail"
        );
    }

    #[test]
    fn html_escapes_what_submissions_are_called() {
        let html = html(&[row("<script>\u{1b}", Status::Timeout)]);
        assert!(html.contains("&lt;script&gt;\\x1b"), "{html}");
        // The page's one script is its own sorting, never the submission's name.
        assert!(html.matches("<script>").count() == 1 && !html.contains('\u{1b}'));
        assert!(html.contains("<script>\ndocument.querySelectorAll"));
        assert!(html.contains("<td class=\"timeout\">timeout</td>"));
        assert!(html.contains("1 submissions: 1 timeout"));
        // The report name is the link, as it is.
        assert!(html.contains("<a href=\"n.txt\">text</a>"), "{html}");
    }

    #[test]
    fn only_reports_that_were_written_are_linked() {
        let mut none = row("carol", Status::Broken);
        none.reports = Written::default();
        let mut text_only = row("dave", Status::Timeout);
        text_only.name = "dave".into();
        text_only.reports.json_lines = false;
        let rows = [none, text_only];
        let html = html(&rows);
        assert!(
            !html.contains("n.txt") && !html.contains(".jsonl"),
            "{html}"
        );
        assert!(html.contains("<a href=\"dave.txt\">text</a>"), "{html}");
        let csv = csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[1].contains(",,,fail"), "{csv}");
        assert!(lines[2].contains(",dave.txt,,fail"), "{csv}");
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None)).unwrap();
        assert_eq!(json["rows"][0]["report"], serde_json::Value::Null);
        assert_eq!(json["rows"][1]["report"], "dave.txt");
        assert_eq!(json["rows"][1]["json_report"], serde_json::Value::Null);
    }

    #[test]
    fn the_class_view_gives_each_rules_share_of_the_class() {
        let mut alice = row("alice", Status::Pass);
        alice.rules = [("r/a".to_owned(), RuleVerdict::Pass)].into();
        let bob = row("bob", Status::Fail);
        let mut carol = row("carol", Status::Broken);
        carol.rules.clear();
        let rows = [alice, bob, carol];
        assert_eq!(rule_shares(&rows), [("r/a".to_owned(), 1, 3)]);
        assert_eq!(rule_table(&rows), "  r/a     1/3     33% passing\n");
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None)).unwrap();
        assert_eq!(json["rules"]["r/a"]["passed"], 1);
        assert_eq!(json["rules"]["r/a"]["submissions"], 3);
        let html = html(&rows);
        assert!(
            html.contains("<td>1 / 3</td><td><div class=\"bar\"><div style=\"width:33%\">"),
            "{html}"
        );
        assert!(html.contains("<table id=\"rows\">") && html.contains("addEventListener('click'"));
    }

    #[test]
    fn summary_json_reads_back_into_the_same_rows() {
        let mut rows = vec![
            row("a/alice\u{1b}.py", Status::Fail),
            row("b", Status::Pass),
        ];
        rows[1].name = "b".into();
        rows[1].note = "a \"note\"".into();
        rows[1].reports = Written::default();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        let text = json(&rows, Some("1/2"));
        assert!(
            !text.contains('\u{1b}') && text.lines().count() > 10,
            "{text}"
        );
        std::fs::write(&path, text).unwrap();
        assert_eq!(crate::run::grading::read_summary(&path).unwrap(), rows);
    }
}
