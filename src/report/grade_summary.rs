//! The summary of `dlqspec grade`: a CSV and a self-contained HTML page, a row per submission,
//! a column per rule, the score and links to each submission's reports; and `summary.json`, the
//! same rows for `grade --merge` to read back (docs/autograders.md).

use std::fmt::Write as _;

use super::render::number;
use super::sanitize;
use crate::run::grading::class_tally::{ClassCause, RuleCount, class_causes, rule_shares, rules};
use crate::run::grading::regrade::{Against, Standing};
use crate::run::grading::row::{Graded, Marks, RuleVerdict, Status};
use crate::run::grading::suite::About;
use crate::run::grading::summary::{SUMMARY_FORMAT, SUMMARY_JSON, SUMMARY_VERSION};
use crate::run::grading::summary_record::{
    AgainstRecord, CauseExample, CauseRecord, ChangedRecord, GoneRecord, NewRecord, RowRecord,
    RuleShare, SpecChange, SpecOutcome, SpecVerdictRecord, StandingRecord, SummaryFile,
};
use crate::text::listing::count;

/// The summaries a grading leaves in its output folder, each file's name and text:
/// `summary.csv`, `summary.html` and `summary.json`.
pub(crate) fn summaries(
    rows: &[Graded],
    partition: Option<&str>,
    about: Option<&About>,
    against: Option<&Against>,
) -> [(&'static str, String); 3] {
    [
        ("summary.csv", csv(rows)),
        ("summary.html", html(rows, about, against)),
        (SUMMARY_JSON, json(rows, partition, about, against)),
    ]
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
fn outcome(outcome: &Option<SpecOutcome>) -> &'static str {
    outcome.map_or("none", SpecOutcome::as_str)
}

/// The regrade for a terminal, short: a line per submission that changed (`bob 35 -> 86`)
/// with its first changed specs under it, then the new and the gone; or `no change`.
pub(crate) fn against_text(rows: &[Graded], against: &Against) -> String {
    let diff = &against.diff;
    let dir = sanitize::line(&against.dir);
    if diff.no_change() {
        return format!(
            "against {dir}: no change ({})\n",
            count(diff.unchanged, "submission")
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
            change(&changed.before, &Standing::of(row))
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
            number(row.marks.score)
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

/// summary.html's regrade section: a row per submission that changed, is new or is gone.
fn against_html(out: &mut String, rows: &[Graded], against: &Against) {
    let diff = &against.diff;
    let _ = writeln!(out, "<h2>against {}</h2>", sanitize::html(&against.dir));
    if diff.no_change() {
        let _ = writeln!(
            out,
            "<p>no change ({})</p>",
            count(diff.unchanged, "submission")
        );
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
            sanitize::html(&change(&changed.before, &Standing::of(row))),
            specs.join("<br>")
        );
    }
    for &i in &diff.new {
        let row = &rows[i];
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>new: {}</td><td></td></tr>",
            sanitize::html(&row.name),
            number(row.marks.score)
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

fn verdict(row: &Graded, rule: &str) -> &'static str {
    row.marks
        .rules
        .get(rule)
        .map_or("", |verdict| verdict.as_str())
}

/// The class's most common failure causes for a terminal: a line each, with an example.
pub(crate) fn cause_table(rows: &[Graded]) -> String {
    let causes = class_causes(rows);
    if causes.is_empty() {
        return String::new();
    }
    let mut out = String::from("most common failure causes:\n");
    for cause in causes {
        let (row, spec) = &cause.example;
        let _ = writeln!(
            out,
            "  {:>4} {:<11} {:>4} {:<5}  {}  (e.g. {}: {})",
            cause.submissions,
            noun(cause.submissions, "submission"),
            cause.specs,
            noun(cause.specs, "spec"),
            sanitize::line(&cause.cause),
            sanitize::line(&rows[*row].name),
            sanitize::line(spec)
        );
        let _ = writeln!(out, "{:>25}  {}", "", sanitize::line(&who(&cause, rows)));
    }
    out
}

/// `noun`, with an `s` for any count but one.
fn noun(n: usize, noun: &str) -> String {
    count(n, noun).split_off(n.to_string().len() + 1)
}

/// Whom a cause hit: `who: alice, bob`; a long list by its ends and how many between.
fn who(cause: &ClassCause, rows: &[Graded]) -> String {
    let names: Vec<String> = cause.who.iter().map(|&i| rows[i].name.clone()).collect();
    format!(
        "who: {}",
        crate::text::listing::shown(&names, String::clone).join(", ")
    )
}

/// The class view for a terminal: a line per rule, its share of the class passing.
pub(crate) fn rule_table(rows: &[Graded]) -> String {
    let shares = rule_shares(rows);
    let width = shares
        .iter()
        .map(|share| share.rule.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for share in shares {
        let (passed, submissions) = (share.passed, share.submissions);
        let percent = percent(passed, submissions);
        let _ = writeln!(
            out,
            "  {:<width$}  {passed:>4}/{submissions:<4} {percent:>3}% passing{}",
            sanitize::line(&share.rule),
            apart(&share)
        );
    }
    out
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

/// What a spreadsheet reads as the start of a formula, at the start of a cell.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// The characters a spreadsheet may split a line on, whatever the file says.
const DELIMITERS: [char; 4] = [',', ';', '\t', '|'];

/// A CSV field: control characters escaped, and a field a spreadsheet could read as a formula
/// defused as OWASP advises, whatever delimiter it guesses: a leading `=`, `+`, `-`, `@`, tab
/// or carriage return gets a `'` before it, and so does what follows any delimiter inside it
/// (`,`, `;`, tab, `|`) when it starts so, past spaces and quotes: a spreadsheet whose list
/// separator is `;` ignores a quote that does not open its own field, and splits
/// `"see below;=2+5"` into a cell `=2+5`. A field holding a delimiter or a quote is quoted
/// besides, for a reader that honours quotes.
fn field(text: &str) -> String {
    let text = sanitize::line(text);
    let mut defused = String::with_capacity(text.len() + 2);
    if text.starts_with(FORMULA_STARTS) {
        defused.push('\'');
    }
    for (at, c) in text.char_indices() {
        defused.push(c);
        if DELIMITERS.contains(&c)
            && text[at + c.len_utf8()..]
                .trim_start_matches([' ', '"'])
                .starts_with(FORMULA_STARTS)
        {
            defused.push('\'');
        }
    }
    let text = defused;
    if text.contains([',', ';', '\t', '|', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

pub(crate) fn csv(rows: &[Graded]) -> String {
    let rules = rules(rows);
    let mut out = String::from(
        "submission,status,score,max_score,passed,failed,not_attempted,not_run,seconds,note,report,json_report",
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
            // No score of the student's: a gradebook reading the column must not take a 0.
            match row.status {
                Status::Ungraded => String::new(),
                _ => number(row.marks.score),
            },
            number(row.marks.max_score),
            row.marks.passed.to_string(),
            row.marks.failed.to_string(),
            row.marks.not_attempted.to_string(),
            row.marks.not_run.to_string(),
            format!("{:.2}", row.took.as_secs_f64()),
            field(&row.note),
            report(row, "txt").map_or_else(String::new, |file| field(&file)),
            report(row, "jsonl").map_or_else(String::new, |file| field(&file)),
        ];
        out.push_str(&cells.join(","));
        for rule in &rules {
            out.push(',');
            // A submission that never ran has no verdict on any rule: blank, alike.
            if !never_ran(row) {
                out.push_str(verdict(row, rule));
            }
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

/// Links to the pictures of the specs a submission failed (only those written), each saying
/// what it opens (`picture of poison-cycle`, the spec's path its title), in a list of class
/// `pictures`.
fn pictures(row: &Graded) -> String {
    if row.reports.pictures.is_empty() {
        return String::new();
    }
    let mut out = String::from("<ul class=\"pictures\">");
    for spec in &row.reports.pictures {
        let file = crate::run::grading::pictures::picture_file(&row.name, spec);
        let stem = std::path::Path::new(spec)
            .file_stem()
            .map_or_else(|| spec.clone(), |stem| stem.to_string_lossy().into_owned());
        let _ = write!(
            out,
            "<li><a href=\"{}\" title=\"{}\">picture of {}</a></li>",
            sanitize::html(&file),
            sanitize::html(spec),
            sanitize::html(&stem)
        );
    }
    out.push_str("</ul>");
    out
}

/// A link to a report beside the page. Report names are made of letters, digits, `-`, `_` and
/// `.` only (`class::report_names` gives them, `summary::read_summary` checks them), so the
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
pub(crate) fn json(
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

/// Sorts the submissions' table by the column whose heading is clicked (again: the other way),
/// numbers as numbers; the page stays self-contained. A heading names its column by `data-col`:
/// the rules' headings sit in a row of their own, under their contract's.
const SORT_SCRIPT: &str = "<script>\ndocument.querySelectorAll('#rows th[data-col]').forEach(function (th) {\n  var col = Number(th.dataset.col);\n  th.style.cursor = 'pointer';\n  th.addEventListener('click', function () {\n    var body = document.getElementById('rows').tBodies[0];\n    var rows = Array.prototype.slice.call(body.rows);\n    var down = th.dataset.down !== '1';\n    th.dataset.down = down ? '1' : '0';\n    var key = function (row) { var t = row.cells[col].textContent; var n = parseFloat(t); return isNaN(n) ? t : n; };\n    rows.sort(function (a, b) { var x = key(a), y = key(b); var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1); return down ? c : -c; });\n    rows.forEach(function (row) { body.appendChild(row); });\n  });\n});\n</script>\n";

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

/// The class's most common failure causes, as a table with an example of each (its report
/// linked when it was written).
fn causes_html(out: &mut String, rows: &[Graded]) {
    let causes = class_causes(rows);
    if causes.is_empty() {
        return;
    }
    out.push_str("<h2>most common failure causes</h2>\n<table class=\"causes\">\n<tr><th>cause</th><th>submissions</th><th>specs</th><th>failures</th><th>who</th><th>for example</th></tr>\n");
    for cause in causes {
        let (row, spec) = &cause.example;
        let named = who(&cause, rows);
        let row = &rows[*row];
        let example = report(row, "txt").map_or_else(
            || sanitize::html(&submission_name(row)),
            |file| link(&file, &submission_name(row)),
        );
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{example}: {}</td></tr>",
            sanitize::html(&cause.cause),
            cause.submissions,
            cause.specs,
            cause.failures,
            sanitize::html(named.trim_start_matches("who: ")),
            sanitize::html(spec)
        );
    }
    out.push_str("</table>\n");
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

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1em 1.5em;color:#222}\nh1{font-size:1.4em;margin:.2em 0}\nh2{font-size:1.15em;margin:1.2em 0 .4em}\n.about{color:#444;margin:.2em 0}\n.about code{font-size:.95em}\ntable{border-collapse:collapse}\nth,td{border:1px solid #ccc;padding:.25em .45em;text-align:left;vertical-align:top}\n.wide{overflow-x:auto;max-width:100%}\n#rows{font-size:.9em}\n#rows th.contract{font-weight:normal;text-align:center;font-size:.85em;white-space:nowrap}\n#rows th.rule{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:.8em;padding:.35em .1em;white-space:nowrap}\n#rows td.rule{text-align:center;padding:.25em .15em;font-size:.85em}\n#rows td.score{white-space:nowrap}\n.name{font-weight:bold}\n.note{font-size:.85em;color:#555;max-width:19em;overflow-wrap:anywhere}\n.reports a{white-space:nowrap}\n.reports ul{margin:.2em 0 0;padding-left:1.1em}\n.pass{background:#dfd}.fail,.broken,.timeout,.crashed{background:#fdd}.ungraded{background:#eee}\ntd.rule.none{background:#f4f4f4;color:#999}\n.bar{display:inline-block;width:10em;height:.8em;background:#fdd;vertical-align:middle}.bar div{height:100%;background:#6b6}\n";

/// The page's header: what was graded (the suite's folders, its size and digest), when, and
/// by which dlqspec; then the class's counts.
fn about_html(out: &mut String, rows: &[Graded], about: Option<&About>) {
    out.push_str("<h1>dlqspec grades</h1>\n");
    if let Some(about) = about {
        let _ = writeln!(
            out,
            "<p class=\"about\" id=\"about\">suite {} ({} specs, digest <code>{}</code>) · graded {} · dlqspec {}</p>",
            suite_named(&about.folders),
            about.specs,
            sanitize::html(&about.digest),
            sanitize::html(&about.graded),
            sanitize::html(&about.dlqspec)
        );
    }
    let _ = writeln!(
        out,
        "<p>{}: {}. Click a heading to sort by it.</p>",
        count(rows.len(), "submission"),
        sanitize::html(&counts(rows))
    );
}

/// The suite's `--specs` as the header names them: each, or for more than two the folder they
/// share and how many were given (a teacher may list every spec file).
fn suite_named(folders: &[String]) -> String {
    let bold = |text: &str| format!("<b>{}</b>", sanitize::html(text));
    if folders.len() <= 2 {
        return folders
            .iter()
            .map(|f| bold(f))
            .collect::<Vec<_>>()
            .join(", ");
    }
    let paths: Vec<&std::path::Path> = folders.iter().map(std::path::Path::new).collect();
    let shared: std::path::PathBuf = paths[0]
        .components()
        .enumerate()
        .take_while(|(i, part)| paths.iter().all(|p| p.components().nth(*i) == Some(*part)))
        .map(|(_, part)| part)
        .collect();
    let shared = shared.display().to_string();
    let at = if shared.is_empty() { "." } else { &shared };
    format!(
        "{} ({} paths given)",
        bold(&format!("{at}/")),
        folders.len()
    )
}

/// The submissions' table: a row per submission by its name, its status, score, time and
/// reports, its note under its name, and a narrow column per rule under its contract's name.
fn submissions_html(out: &mut String, rows: &[Graded]) {
    let rules = rules(rows);
    // The rules grouped by contract (`contract/rule`), in order.
    let mut contracts: Vec<(&str, usize)> = Vec::new();
    for rule in &rules {
        let contract = rule.split_once('/').map_or("", |(contract, _)| contract);
        match contracts.last_mut() {
            Some((last, count)) if *last == contract => *count += 1,
            _ => contracts.push((contract, 1)),
        }
    }
    out.push_str("<div class=\"wide\">\n<table id=\"rows\">\n<thead>\n<tr>");
    for (col, heading) in ["submission", "status", "score", "seconds"]
        .iter()
        .enumerate()
    {
        let _ = write!(out, "<th rowspan=\"2\" data-col=\"{col}\">{heading}</th>");
    }
    out.push_str("<th rowspan=\"2\">reports</th>");
    for (contract, count) in &contracts {
        let _ = write!(
            out,
            "<th class=\"contract\" colspan=\"{count}\">{}</th>",
            sanitize::html(contract)
        );
    }
    out.push_str("</tr>\n<tr>");
    for (i, rule) in rules.iter().enumerate() {
        let short = rule
            .split_once('/')
            .map_or(rule.as_str(), |(_, short)| short);
        let _ = write!(
            out,
            "<th class=\"rule\" data-col=\"{}\" title=\"{}\">{}</th>",
            5 + i,
            sanitize::html(rule),
            sanitize::html(short)
        );
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for row in rows {
        let status = row.status.as_str();
        let score = match row.status {
            Status::Ungraded => "not graded".to_owned(),
            _ => {
                let Marks {
                    score, max_score, ..
                } = row.marks;
                let share = if max_score > 0.0 {
                    let of = |points: f64| (points * 1000.0).round() as usize;
                    format!(" ({}%)", percent(of(score), of(max_score)))
                } else {
                    String::new()
                };
                format!("{} / {}{share}", number(score), number(max_score))
            }
        };
        let note = if row.note.is_empty() {
            String::new()
        } else {
            format!("<div class=\"note\">{}</div>", sanitize::html(&row.note))
        };
        let mut reports = Vec::new();
        reports.extend(report(row, "txt").map(|file| link(&file, "text report")));
        reports.extend(report(row, "jsonl").map(|file| link(&file, "JSON report")));
        let _ = write!(
            out,
            "<tr><td><span class=\"name\" title=\"{}\">{}</span>{note}</td><td class=\"{status}\">{status}</td><td class=\"score\">{score}</td><td>{:.2}</td><td class=\"reports\">{}{}</td>",
            sanitize::html(&row.submission),
            sanitize::html(&submission_name(row)),
            row.took.as_secs_f64(),
            reports.join(" · "),
            pictures(row),
        );
        for rule in &rules {
            let cell = if never_ran(row) {
                "<td class=\"rule none\" title=\"not run\">\u{2013}</td>".to_owned()
            } else {
                match row.marks.rules.get(rule) {
                    Some(RuleVerdict::Pass) => format!(
                        "<td class=\"rule pass\" title=\"{}: pass\">\u{2713}</td>",
                        sanitize::html(rule)
                    ),
                    Some(RuleVerdict::Fail) => format!(
                        "<td class=\"rule fail\" title=\"{}: fail\">\u{2717}</td>",
                        sanitize::html(rule)
                    ),
                    Some(RuleVerdict::NotRun) => format!(
                        "<td class=\"rule none\" title=\"{}: not run\">\u{2013}</td>",
                        sanitize::html(rule)
                    ),
                    Some(RuleVerdict::NotAttempted) => format!(
                        "<td class=\"rule none\" title=\"{}: not attempted\">\u{b7}</td>",
                        sanitize::html(rule)
                    ),
                    None => {
                        "<td class=\"rule none\" title=\"not covered\">\u{2013}</td>".to_owned()
                    }
                }
            };
            out.push_str(&cell);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
}

/// The class view: each rule's share of the class passing.
fn rules_html(out: &mut String, rows: &[Graded]) {
    out.push_str("<h2>rules</h2>\n<table class=\"rules\">\n<tr><th>rule</th><th>passing</th><th>share of the class</th></tr>\n");
    for share in rule_shares(rows) {
        let (passed, submissions) = (share.passed, share.submissions);
        let percent = percent(passed, submissions);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{passed} / {submissions}</td><td><div class=\"bar\"><div style=\"width:{percent}%\"></div></div> {percent}%{}</td></tr>",
            sanitize::html(&share.rule),
            sanitize::html(&apart(&share))
        );
    }
    out.push_str("</table>\n");
}

/// `summary.html`: the header, the submissions' table first, then the class view (each rule's
/// share, the most common failure causes) and the regrade. It fits a 1,400 px window: a
/// suite with so many rules that their columns do not scrolls inside its table only.
pub(crate) fn html(rows: &[Graded], about: Option<&About>, against: Option<&Against>) -> String {
    let title = about.map_or_else(String::new, |about| {
        format!(": {}", sanitize::html(&about.folders.join(", ")))
    });
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dlqspec grades{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n"
    );
    about_html(&mut out, rows, about);
    submissions_html(&mut out, rows);
    rules_html(&mut out, rows);
    causes_html(&mut out, rows);
    if let Some(against) = against {
        against_html(&mut out, rows, against);
    }
    out.push_str(SORT_SCRIPT);
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::run::grading::class_tally::TOP_CAUSES;
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
            suite_named(&files),
            "<b>specs/dlq-consumer/</b> (3 paths given)"
        );
        assert_eq!(
            suite_named(&["specs".into(), "more".into()]),
            "<b>specs</b>, <b>more</b>"
        );
        assert_eq!(
            suite_named(&["a.yaml".into(), "b.yaml".into(), "c.yaml".into()]),
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
        let suite: crate::run::grading::summary_record::SuiteRecord =
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
