//! `summary.html`: the header, the submissions' table first, then the class view (each rule's
//! share, the most common failure causes) and the regrade, in one self-contained page whose
//! one script (`assets/sort_rows.js`) sorts the table. Every text is spliced into maud's
//! `html!`, which escapes it.

use maud::{DOCTYPE, Markup, html};

use super::{apart, change, counts, never_ran, outcome, percent, report, submission_name, who};
use crate::report::page;
use crate::report::render::number;
use crate::report::sanitize::line;
use crate::run::grading::class_tally::{class_causes, rule_shares, rules};
use crate::run::grading::regrade::{Against, Standing};
use crate::run::grading::row::{Graded, Marks, RuleVerdict, Status};
use crate::run::grading::suite::About;
use crate::text::listing::count;

/// `summary.html`. It fits a 1,400 px window: a suite with so many rules that their columns
/// do not scrolls inside its table only.
pub(crate) fn html(rows: &[Graded], about: Option<&About>, against: Option<&Against>) -> String {
    let markup = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n"
            head {
                "\n" meta charset="utf-8"; "\n"
                title {
                    "dlqspec grades"
                    @if let Some(about) = about { ": " (line(&about.folders.join(", "))) }
                }
                "\n" (page::style(page::GRADE_SUMMARY_CSS)) "\n"
            }
            "\n"
            body {
                "\n"
                (about_html(rows, about))
                (submissions_html(rows))
                (rules_html(rows))
                (causes_html(rows))
                @if let Some(against) = against { (against_html(rows, against)) }
                (page::script(page::SORT_ROWS_JS)) "\n"
            }
            "\n"
        }
        "\n"
    };
    markup.into_string()
}

/// The page's header: what was graded (the suite's folders, its size and digest), when, and
/// by which dlqspec; then the class's counts.
fn about_html(rows: &[Graded], about: Option<&About>) -> Markup {
    html! {
        h1 { "dlqspec grades" } "\n"
        @if let Some(about) = about {
            p.about #about {
                "suite " (suite_named(&about.folders)) " (" (about.specs) " specs, digest "
                code { (line(&about.digest)) } ") · graded " (line(&about.graded))
                " · dlqspec " (line(&about.dlqspec))
            }
            "\n"
        }
        p { (count(rows.len(), "submission")) ": " (line(&counts(rows))) ". Click a heading to sort by it." } "\n"
    }
}

/// The suite's `--specs` as the header names them: each, or for more than two the folder they
/// share and how many were given (a teacher may list every spec file).
pub(super) fn suite_named(folders: &[String]) -> Markup {
    if folders.len() <= 2 {
        return html! {
            @for (i, folder) in folders.iter().enumerate() {
                @if i > 0 { ", " }
                b { (line(folder)) }
            }
        };
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
    html! { b { (line(at)) "/" } " (" (folders.len()) " paths given)" }
}

/// A link to a report beside the page. Report names are made of letters, digits, `-`, `_` and
/// `.` only (`class::report_names` gives them, `summary::read_summary` checks them), so the
/// name is its own URL; maud escapes it as any attribute all the same.
fn link(href: &str, label: &str) -> Markup {
    html! { a href=(line(href)) { (line(label)) } }
}

/// Links to the pictures of the specs a submission failed (only those written), each saying
/// what it opens (`picture of poison-cycle`, the spec's path its title), in a list of class
/// `pictures`.
fn pictures(row: &Graded) -> Markup {
    html! {
        @if !row.reports.pictures.is_empty() {
            ul.pictures {
                @for spec in &row.reports.pictures {
                    @let file = crate::run::grading::pictures::picture_file(&row.name, spec);
                    @let stem = std::path::Path::new(spec)
                        .file_stem()
                        .map_or_else(|| spec.clone(), |stem| stem.to_string_lossy().into_owned());
                    li { a href=(line(&file)) title=(line(spec)) { "picture of " (line(&stem)) } }
                }
            }
        }
    }
}

/// A submission's score cell: `1.5 / 2 (75%)`, or `not graded`.
fn score(row: &Graded) -> String {
    match row.status {
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
    }
}

/// A submission's cell for one rule: passed, failed, not covered, or not run.
fn rule_cell(row: &Graded, rule: &str) -> Markup {
    let (class, title, mark) = if never_ran(row) {
        ("rule none", "not run".to_owned(), "\u{2013}")
    } else {
        match row.marks.rules.get(rule) {
            Some(RuleVerdict::Pass) => ("rule pass", format!("{}: pass", line(rule)), "\u{2713}"),
            Some(RuleVerdict::Fail) => ("rule fail", format!("{}: fail", line(rule)), "\u{2717}"),
            Some(RuleVerdict::NotRun) => {
                ("rule none", format!("{}: not run", line(rule)), "\u{2013}")
            }
            Some(RuleVerdict::NotAttempted) => (
                "rule none",
                format!("{}: not attempted", line(rule)),
                "\u{b7}",
            ),
            None => ("rule none", "not covered".to_owned(), "\u{2013}"),
        }
    };
    html! { td class=(class) title=(title) { (mark) } }
}

/// The submissions' table: a row per submission by its name, its status, score, time and
/// reports, its note under its name, and a narrow column per rule under its contract's name.
fn submissions_html(rows: &[Graded]) -> Markup {
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
    html! {
        div.wide {
            "\n"
            table #rows {
                "\n"
                thead {
                    "\n"
                    tr {
                        @for (col, heading) in ["submission", "status", "score", "seconds"].iter().enumerate() {
                            th rowspan="2" data-col=(col) { (heading) }
                        }
                        th rowspan="2" { "reports" }
                        @for (contract, count) in &contracts {
                            th.contract colspan=(count) { (line(contract)) }
                        }
                    }
                    "\n"
                    tr {
                        @for (i, rule) in rules.iter().enumerate() {
                            @let short = rule.split_once('/').map_or(rule.as_str(), |(_, short)| short);
                            th.rule data-col=(5 + i) title=(line(rule)) { (line(short)) }
                        }
                    }
                    "\n"
                }
                "\n"
                tbody {
                    "\n"
                    @for row in rows {
                        @let status = row.status.as_str();
                        tr {
                            td {
                                span.name title=(line(&row.submission)) { (line(&submission_name(row))) }
                                @if !row.note.is_empty() { div.note { (line(&row.note)) } }
                            }
                            td class=(status) { (status) }
                            td.score { (score(row)) }
                            td { (format!("{:.2}", row.took.as_secs_f64())) }
                            td.reports {
                                @if let Some(file) = report(row, "txt") {
                                    (link(&file, "text report"))
                                }
                                @if let (Some(_), Some(_)) = (report(row, "txt"), report(row, "jsonl")) { " · " }
                                @if let Some(file) = report(row, "jsonl") {
                                    (link(&file, "JSON report"))
                                }
                                (pictures(row))
                            }
                            @for rule in &rules { (rule_cell(row, rule)) }
                        }
                        "\n"
                    }
                }
                "\n"
            }
            "\n"
        }
        "\n"
    }
}

/// The class view: each rule's share of the class passing.
fn rules_html(rows: &[Graded]) -> Markup {
    html! {
        h2 { "rules" } "\n"
        table.rules {
            "\n"
            tr { th { "rule" } th { "passing" } th { "share of the class" } } "\n"
            @for share in rule_shares(rows) {
                @let percent = percent(share.passed, share.submissions);
                tr {
                    td { (line(&share.rule)) }
                    td { (share.passed) " / " (share.submissions) }
                    td { div.bar { div style={ "width:" (percent) "%" } {} } " " (percent) "%" (apart(&share)) }
                }
                "\n"
            }
        }
        "\n"
    }
}

/// The class's most common failure causes, as a table with an example of each (its report
/// linked when it was written).
fn causes_html(rows: &[Graded]) -> Markup {
    let causes = class_causes(rows);
    html! {
        @if !causes.is_empty() {
            h2 { "most common failure causes" } "\n"
            table.causes {
                "\n"
                tr {
                    th { "cause" } th { "submissions" } th { "specs" } th { "failures" }
                    th { "who" } th { "for example" }
                }
                "\n"
                @for cause in &causes {
                    @let (row, spec) = &cause.example;
                    @let named = who(cause, rows);
                    @let row = &rows[*row];
                    tr {
                        td { (line(&cause.cause)) }
                        td { (cause.submissions) }
                        td { (cause.specs) }
                        td { (cause.failures) }
                        td { (line(named.trim_start_matches("who: "))) }
                        td {
                            @match report(row, "txt") {
                                Some(file) => { (link(&file, &submission_name(row))) }
                                None => { (line(&submission_name(row))) }
                            }
                            ": " (line(spec))
                        }
                    }
                    "\n"
                }
            }
            "\n"
        }
    }
}

/// The regrade section: a row per submission that changed, is new or is gone.
fn against_html(rows: &[Graded], against: &Against) -> Markup {
    let diff = &against.diff;
    html! {
        h2 { "against " (line(&against.dir)) } "\n"
        @if let Some(said) = super::suite_changed(against) { p.suite { (said) } "\n" }
        @if diff.no_change() {
            p { "no change (" (count(diff.unchanged, "submission")) ")" } "\n"
        } @else {
            p {
                (diff.changed.len()) " changed, " (diff.new.len()) " new, " (diff.gone.len())
                " gone, " (diff.unchanged) " unchanged"
            }
            "\n"
            table.against {
                "\n"
                tr { th { "submission" } th { "score" } th { "specs whose verdict changed" } } "\n"
                @for changed in &diff.changed {
                    @let row = &rows[changed.row];
                    tr {
                        td { (line(&row.name)) }
                        td { (change(&changed.before, &Standing::of(row))) }
                        td {
                            @for (i, (path, was, is)) in changed.specs.iter().enumerate() {
                                @if i > 0 { br; }
                                (line(path)) ": " (outcome(was)) " -> " (outcome(is))
                            }
                        }
                    }
                    "\n"
                }
                @for &i in &diff.new {
                    tr { td { (line(&rows[i].name)) } td { "new: " (number(rows[i].marks.score)) } td {} }
                    "\n"
                }
                @for (name, _, before) in &diff.gone {
                    tr { td { (line(name)) } td { "gone (was " (number(before.score)) ")" } td {} }
                    "\n"
                }
            }
            "\n"
        }
    }
}
