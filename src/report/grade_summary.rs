//! The summary of `dlqspec grade`: a CSV and a self-contained HTML page, a row per submission,
//! a column per rule, the score and links to each submission's reports; and `summary.json`, the
//! same rows for `grade --merge` to read back (docs/autograders.md).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::json;

use super::render::number;
use super::sanitize;
use crate::run::grading::{
    Graded, Regrade, RuleVerdict, SUMMARY_FORMAT, SUMMARY_VERSION, Standing, Status,
};

/// A regrade: the earlier grading's folder as given to `--against`, and what changed since.
pub struct Against {
    pub dir: String,
    pub diff: Regrade,
}

/// How many changed specs the terminal lists under a submission; summary.json and
/// summary.html list them all.
const SPECS_SHOWN: usize = 5;

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
fn outcome(outcome: &Option<String>) -> &str {
    outcome.as_deref().unwrap_or("none")
}

fn standing(row: &Graded) -> Standing {
    Standing {
        status: row.status,
        score: row.score,
        max_score: row.max_score,
    }
}

/// The regrade for a terminal, short: a line per submission that changed (`bob 35 -> 86`)
/// with its first changed specs under it, then the new and the gone; or `no change`.
pub fn against_text(rows: &[Graded], against: &Against) -> String {
    let diff = &against.diff;
    let dir = sanitize::line(&against.dir);
    if diff.no_change() {
        return format!(
            "against {dir}: no change ({} submissions)\n",
            diff.unchanged
        );
    }
    let mut out = format!(
        "against {dir}: {} changed, {} new, {} gone, {} unchanged\n",
        diff.changed.len(),
        diff.new.len(),
        diff.gone.len(),
        diff.unchanged
    );
    for changed in &diff.changed {
        let row = &rows[changed.row];
        let _ = writeln!(
            out,
            "  {} {}",
            sanitize::line(&row.name),
            change(&changed.before, &standing(row))
        );
        for (path, was, is) in changed.specs.iter().take(SPECS_SHOWN) {
            let _ = writeln!(
                out,
                "    {}: {} -> {}",
                sanitize::line(path),
                outcome(was),
                outcome(is)
            );
        }
        if changed.specs.len() > SPECS_SHOWN {
            let _ = writeln!(
                out,
                "    ... and {} more specs changed (summary.json, summary.html)",
                changed.specs.len() - SPECS_SHOWN
            );
        }
    }
    for &i in &diff.new {
        let row = &rows[i];
        let _ = writeln!(
            out,
            "  new: {} {}",
            sanitize::line(&row.name),
            number(row.score)
        );
    }
    for (name, _, before) in &diff.gone {
        let _ = writeln!(
            out,
            "  gone: {} (was {})",
            sanitize::line(name),
            number(before.score)
        );
    }
    out
}

/// `summary.json`'s `against`: the whole regrade as data.
fn against_json(rows: &[Graded], against: &Against) -> serde_json::Value {
    let brief = |standing: &Standing| json!({"status": standing.status.as_str(), "score": standing.score, "max_score": standing.max_score});
    let diff = &against.diff;
    let changed: Vec<serde_json::Value> = diff
        .changed
        .iter()
        .map(|changed| {
            let row = &rows[changed.row];
            let specs: Vec<serde_json::Value> = changed
                .specs
                .iter()
                .map(|(path, was, is)| json!({"spec": path, "before": was, "after": is}))
                .collect();
            json!({
                "name": row.name,
                "submission": row.submission,
                "before": brief(&changed.before),
                "after": brief(&standing(row)),
                "specs": specs,
            })
        })
        .collect();
    let new: Vec<serde_json::Value> = diff
        .new
        .iter()
        .map(|&i| {
            let row = &rows[i];
            json!({"name": row.name, "submission": row.submission, "after": brief(&standing(row))})
        })
        .collect();
    let gone: Vec<serde_json::Value> = diff
        .gone
        .iter()
        .map(|(name, submission, before)| {
            json!({"name": name, "submission": submission, "before": brief(before)})
        })
        .collect();
    json!({
        "dir": against.dir,
        "no_change": diff.no_change(),
        "unchanged": diff.unchanged,
        "changed": changed,
        "new": new,
        "gone": gone,
    })
}

/// summary.html's regrade section: a row per submission that changed, is new or is gone.
fn against_html(out: &mut String, rows: &[Graded], against: &Against) {
    let diff = &against.diff;
    let _ = writeln!(out, "<h2>against {}</h2>", sanitize::html(&against.dir));
    if diff.no_change() {
        let _ = writeln!(out, "<p>no change ({} submissions)</p>", diff.unchanged);
        return;
    }
    let _ = writeln!(
        out,
        "<p>{} changed, {} new, {} gone, {} unchanged</p>\n<table class=\"against\">\n<tr><th>submission</th><th>score</th><th>specs whose verdict changed</th></tr>",
        diff.changed.len(),
        diff.new.len(),
        diff.gone.len(),
        diff.unchanged
    );
    for changed in &diff.changed {
        let row = &rows[changed.row];
        let specs: Vec<String> = changed
            .specs
            .iter()
            .map(|(path, was, is)| {
                format!(
                    "{}: {} -&gt; {}",
                    sanitize::html(path),
                    sanitize::html(outcome(was)),
                    sanitize::html(outcome(is))
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            sanitize::html(&row.name),
            sanitize::html(&change(&changed.before, &standing(row))),
            specs.join("<br>")
        );
    }
    for &i in &diff.new {
        let row = &rows[i];
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>new: {}</td><td></td></tr>",
            sanitize::html(&row.name),
            number(row.score)
        );
    }
    for (name, _, before) in &diff.gone {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>gone (was {})</td><td></td></tr>",
            sanitize::html(name),
            number(before.score)
        );
    }
    out.push_str("</table>\n");
}

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

/// How many of the class's most common failure causes the summaries list.
pub const TOP_CAUSES: usize = 10;

/// A failure cause across the class: the run's one-line cause of a failing spec (as its
/// "failures by cause" groups them), and whom and what it hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassCause {
    pub cause: String,
    /// How many submissions failed some spec of it.
    pub submissions: usize,
    /// How many specs of the suite it failed, in any submission.
    pub specs: usize,
    /// How many failures it is: each submission's each spec.
    pub failures: usize,
    /// Its first failure, in the class's order: the row, and the spec's path.
    pub example: (usize, String),
}

/// The class's most common failure causes, most submissions first (then most failures, then
/// the order the class first met them), at most [`TOP_CAUSES`].
pub fn class_causes(rows: &[Graded]) -> Vec<ClassCause> {
    let mut causes: Vec<(ClassCause, BTreeSet<usize>, BTreeSet<&str>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        for (path, verdict) in &row.specs {
            let Some(cause) = &verdict.cause else {
                continue;
            };
            let at = match causes.iter().position(|(c, ..)| c.cause == *cause) {
                Some(at) => at,
                None => {
                    let first = ClassCause {
                        cause: cause.clone(),
                        submissions: 0,
                        specs: 0,
                        failures: 0,
                        example: (i, path.clone()),
                    };
                    causes.push((first, BTreeSet::new(), BTreeSet::new()));
                    causes.len() - 1
                }
            };
            let (cause, submissions, specs) = &mut causes[at];
            submissions.insert(i);
            specs.insert(path);
            cause.failures += 1;
            cause.submissions = submissions.len();
            cause.specs = specs.len();
        }
    }
    let mut causes: Vec<ClassCause> = causes.into_iter().map(|(cause, ..)| cause).collect();
    causes.sort_by_key(|c| {
        (
            std::cmp::Reverse(c.submissions),
            std::cmp::Reverse(c.failures),
        )
    });
    causes.truncate(TOP_CAUSES);
    causes
}

/// The class's most common failure causes for a terminal: a line each, with an example.
pub fn cause_table(rows: &[Graded]) -> String {
    let causes = class_causes(rows);
    if causes.is_empty() {
        return String::new();
    }
    let mut out = String::from("most common failure causes:\n");
    for cause in causes {
        let (row, spec) = &cause.example;
        let _ = writeln!(
            out,
            "  {:>4} submissions {:>4} specs  {}  (e.g. {}: {})",
            cause.submissions,
            cause.specs,
            sanitize::line(&cause.cause),
            sanitize::line(&rows[*row].name),
            sanitize::line(spec)
        );
    }
    out
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

/// A link to a report beside the page. Report names are made of letters, digits, `-`, `_` and
/// `.` only (`grading::report_names` gives them, `grading::read_summary` checks them), so the
/// name is its own URL; it is escaped as any attribute is all the same.
fn link(href: &str, label: &str) -> String {
    format!(
        "<a href=\"{}\">{}</a>",
        sanitize::html(href),
        sanitize::html(label)
    )
}

/// `summary.json`: the rows as data, versioned, for `grade --merge` (the text as given: JSON
/// escapes what it must, and `sanitize::json` what a terminal would act on).
pub fn json(rows: &[Graded], partition: Option<&str>, against: Option<&Against>) -> String {
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
                "specs": specs_json(row),
            })
        })
        .collect();
    let causes: Vec<serde_json::Value> = class_causes(all)
        .into_iter()
        .map(|cause| {
            let (row, spec) = &cause.example;
            json!({
                "cause": cause.cause,
                "submissions": cause.submissions,
                "specs": cause.specs,
                "failures": cause.failures,
                "example": {"submission": all[*row].submission, "name": all[*row].name, "spec": spec},
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
        "causes": causes,
        "against": against.map(|against| against_json(all, against)),
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

/// A row's `specs`: each spec's outcome, and its cause when it failed.
fn specs_json(row: &Graded) -> serde_json::Value {
    let specs: serde_json::Map<String, serde_json::Value> = row
        .specs
        .iter()
        .map(|(path, verdict)| {
            let mut value = json!({"outcome": verdict.outcome});
            if let Some(cause) = &verdict.cause {
                value["cause"] = cause.clone().into();
            }
            (path.clone(), value)
        })
        .collect();
    specs.into()
}

/// Sorts the submissions' table by the column whose heading is clicked (again: the other way),
/// numbers as numbers; the page stays self-contained.
const SORT_SCRIPT: &str = "<script>\ndocument.querySelectorAll('#rows tr:first-child th').forEach(function (th, col) {\n  th.style.cursor = 'pointer';\n  th.addEventListener('click', function () {\n    var table = document.getElementById('rows');\n    var rows = Array.prototype.slice.call(table.rows, 1);\n    var down = th.dataset.down !== '1';\n    th.dataset.down = down ? '1' : '0';\n    var key = function (row) { var t = row.cells[col].textContent; var n = parseFloat(t); return isNaN(n) ? t : n; };\n    rows.sort(function (a, b) { var x = key(a), y = key(b); var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1); return down ? c : -c; });\n    rows.forEach(function (row) { table.tBodies[0].appendChild(row); });\n  });\n});\n</script>\n";

/// The class's most common failure causes, as a table with an example of each (its report
/// linked when it was written).
fn causes_html(out: &mut String, rows: &[Graded]) {
    let causes = class_causes(rows);
    if causes.is_empty() {
        return;
    }
    out.push_str("<h2>most common failure causes</h2>\n<table class=\"causes\">\n<tr><th>cause</th><th>submissions</th><th>specs</th><th>failures</th><th>for example</th></tr>\n");
    for cause in causes {
        let (row, spec) = &cause.example;
        let row = &rows[*row];
        let who = report(row, "txt")
            .map_or_else(|| sanitize::html(&row.name), |file| link(&file, &row.name));
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{who}: {}</td></tr>",
            sanitize::html(&cause.cause),
            cause.submissions,
            cause.specs,
            cause.failures,
            sanitize::html(spec)
        );
    }
    out.push_str("</table>\n");
}

pub fn html(rows: &[Graded], against: Option<&Against>) -> String {
    let rules = rules(rows);
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dlqspec grades</title>\n<style>\nbody{font-family:system-ui,sans-serif;margin:1.5em}\ntable{border-collapse:collapse}\nth,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\nth.rule{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:.8em}\n.pass{background:#dfd}.fail,.broken,.timeout,.crashed{background:#fdd}\n.bar{display:inline-block;width:10em;height:.8em;background:#fdd;vertical-align:middle}.bar div{height:100%;background:#6b6}\n</style>\n</head>\n<body>\n",
    );
    let _ = writeln!(
        out,
        "<h1>dlqspec grades</h1>\n<p>{} submissions: {}</p>",
        rows.len(),
        sanitize::html(&counts(rows))
    );
    out.push_str("<h2>rules</h2>\n<table class=\"rules\">\n<tr><th>rule</th><th>passing</th><th>share of the class</th></tr>\n");
    for (rule, passed, submissions) in rule_shares(rows) {
        let percent = (passed * 100).checked_div(submissions).unwrap_or(0);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{passed} / {submissions}</td><td><div class=\"bar\"><div style=\"width:{percent}%\"></div></div> {percent}%</td></tr>",
            sanitize::html(&rule)
        );
    }
    out.push_str("</table>\n");
    causes_html(&mut out, rows);
    if let Some(against) = against {
        against_html(&mut out, rows, against);
    }
    out.push_str("<h2>submissions</h2>\n<p>Click a heading to sort by it.</p>\n");
    out.push_str("<table id=\"rows\">\n<tr><th>submission</th><th>status</th><th>score</th><th>seconds</th><th>reports</th><th>note</th>");
    for rule in &rules {
        let _ = write!(out, "<th class=\"rule\">{}</th>", sanitize::html(rule));
    }
    out.push_str("</tr>\n");
    for row in rows {
        let status = row.status.as_str();
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"{status}\">{status}</td><td>{} / {}</td><td>{:.2}</td><td>{} {}{}</td><td>{}</td>",
            sanitize::html(&row.submission),
            number(row.score),
            number(row.max_score),
            row.took.as_secs_f64(),
            report(row, "txt").map_or_else(String::new, |file| link(&file, "text")),
            report(row, "jsonl").map_or_else(String::new, |file| link(&file, "json")),
            pictures(row),
            sanitize::html(&row.note),
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
    use crate::run::grading::{SpecVerdict, Written};

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
            specs: [(
                "s/a.yaml".to_owned(),
                SpecVerdict {
                    outcome: "mismatch".into(),
                    cause: Some("r/a: a difference at process".into()),
                },
            )]
            .into(),
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
        let html = html(&[drawn.clone(), row("n", Status::Fail)], None);
        assert!(
            html.contains("<ul class=\"pictures\"><li><a href=\"erin/explain/specs.dlq-consumer.a.html\">specs/dlq-consumer/a.yaml</a></li></ul>"),
            "{html}"
        );
        assert_eq!(html.matches("/explain/").count(), 1, "{html}");
        let json: serde_json::Value = serde_json::from_str(&json(&[drawn], None, None)).unwrap();
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
        let html = html(&[row("<script>\u{1b}", Status::Timeout)], None);
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
        let html = html(&rows, None);
        assert!(
            !html.contains("n.txt") && !html.contains(".jsonl"),
            "{html}"
        );
        assert!(html.contains("<a href=\"dave.txt\">text</a>"), "{html}");
        let csv = csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[1].contains(",,,fail"), "{csv}");
        assert!(lines[2].contains(",dave.txt,,fail"), "{csv}");
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None, None)).unwrap();
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
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None, None)).unwrap();
        assert_eq!(json["rules"]["r/a"]["passed"], 1);
        assert_eq!(json["rules"]["r/a"]["submissions"], 3);
        let html = html(&rows, None);
        assert!(
            html.contains("<td>1 / 3</td><td><div class=\"bar\"><div style=\"width:33%\">"),
            "{html}"
        );
        assert!(html.contains("<table id=\"rows\">") && html.contains("addEventListener('click'"));
    }

    #[test]
    fn the_class_view_counts_the_most_common_failure_causes() {
        let verdict = |outcome: &str, cause: Option<&str>| SpecVerdict {
            outcome: outcome.into(),
            cause: cause.map(str::to_owned),
        };
        let mut alice = row("alice", Status::Pass);
        alice.specs = [("s/a.yaml".to_owned(), verdict("passed", None))].into();
        let mut bob = row("bob", Status::Fail);
        bob.name = "bob".into();
        bob.specs = [
            (
                "s/a.yaml".to_owned(),
                verdict("mismatch", Some("r/a: late")),
            ),
            (
                "s/b.yaml".to_owned(),
                verdict("errored", Some("boom \u{1b}")),
            ),
            ("s/c.yaml".to_owned(), verdict("not_run", None)),
        ]
        .into();
        let mut carol = row("carol", Status::Fail);
        carol.name = "carol".into();
        carol.specs = [
            (
                "s/a.yaml".to_owned(),
                verdict("mismatch", Some("r/a: late")),
            ),
            (
                "s/b.yaml".to_owned(),
                verdict("mismatch", Some("r/a: late")),
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
            "most common failure causes:\n     2 submissions    2 specs  r/a: late  (e.g. bob: s/a.yaml)\n     1 submissions    1 specs  boom \\x1b  (e.g. bob: s/b.yaml)\n"
        );
        let json: serde_json::Value = serde_json::from_str(&json(&rows, None, None)).unwrap();
        assert_eq!(json["causes"][0]["cause"], "r/a: late");
        assert_eq!(json["causes"][0]["failures"], 3);
        assert_eq!(json["causes"][0]["example"]["name"], "bob");
        assert_eq!(json["causes"][0]["example"]["spec"], "s/a.yaml");
        assert_eq!(
            json["rows"][1]["specs"]["s/c.yaml"],
            serde_json::json!({"outcome": "not_run"})
        );
        let html = html(&rows, None);
        assert!(
            html.contains("<tr><td>r/a: late</td><td>2</td><td>2</td><td>3</td><td><a href=\"bob.txt\">bob</a>: s/a.yaml</td></tr>"),
            "{html}"
        );
        assert!(html.contains("<td>boom \\x1b</td>"), "{html}");
        // At most the top ten.
        let many: Vec<Graded> = (0..12)
            .map(|i| {
                let mut row = row("x", Status::Fail);
                row.specs = [(
                    "s/a.yaml".to_owned(),
                    verdict("mismatch", Some(&format!("cause {i}"))),
                )]
                .into();
                row
            })
            .collect();
        assert_eq!(class_causes(&many).len(), TOP_CAUSES);
        assert_eq!(cause_table(&rows[..1]), "");
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
        let text = json(&rows, Some("1/2"), None);
        assert!(
            !text.contains('\u{1b}') && text.lines().count() > 10,
            "{text}"
        );
        std::fs::write(&path, text).unwrap();
        assert_eq!(crate::run::grading::read_summary(&path).unwrap(), rows);
    }
}
