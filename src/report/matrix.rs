//! Rendering the conformance matrix: a terminal table, Markdown, or a self-contained HTML page
//! whose failing cells link to the diff of the spec that failed.

use std::fmt::Write as _;

use maud::{DOCTYPE, Markup, html};

use super::page;
use super::render;
use super::sanitize;
use super::smoke::duration;
use super::style::{Palette, paint};
use crate::model::language::Language;
use crate::model::outcome::Outcome;
use crate::run::events::SpecReport;
use crate::run::matrix::{Cell, CellStatus, Column, Matrix};

fn style(status: CellStatus, p: &Palette) -> anstyle::Style {
    match status {
        CellStatus::Passed => p.pass,
        CellStatus::Failed => p.fail,
        CellStatus::Skipped | CellStatus::Partial | CellStatus::Diverged => p.skip,
        CellStatus::Uncovered => p.dim,
    }
}

/// The first line of what went wrong, for one-line listings.
fn headline(report: &SpecReport) -> String {
    render::details(&report.path, &report.outcome)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

fn spec_count(n: usize) -> String {
    format!("{n} spec{}", if n == 1 { "" } else { "s" })
}

/// `painted` (the styled `text`) followed by spaces up to `width`, outside the styling so
/// that trailing ones can be trimmed.
fn pad(painted: String, text: &str, width: usize) -> String {
    let fill = width.saturating_sub(text.chars().count());
    format!("{painted}{}", " ".repeat(fill))
}

/// Column headers for a terminal: `python:solution.py` rather than the whole path, unless
/// two would read the same.
pub(crate) fn short_labels(labels: &[&str]) -> Vec<String> {
    let short: Vec<String> = labels
        .iter()
        .map(|label| match label.split_once(':') {
            Some((kind, path)) if Language::of_prefix(kind).is_some() => {
                let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
                format!("{kind}:{file}")
            }
            _ if label.chars().count() > 32 => {
                format!("{}...", label.chars().take(29).collect::<String>())
            }
            _ => (*label).to_owned(),
        })
        .collect();
    let unique = short
        .iter()
        .enumerate()
        .all(|(i, s)| !short[..i].contains(s));
    if unique {
        short
    } else {
        labels.iter().map(|l| (*l).to_owned()).collect()
    }
}

/// The table for a terminal, then the failures of each implementation, one line each.
pub(crate) fn terminal(matrix: &Matrix, p: &Palette) -> String {
    let mut out = String::new();
    let labels: Vec<String> = matrix
        .columns
        .iter()
        .map(|c| sanitize::line(&c.implementation.label).into_owned())
        .collect();
    let full: Vec<&str> = labels.iter().map(String::as_str).collect();
    let headers = short_labels(&full);
    let first_width = matrix
        .rows
        .iter()
        .map(|r| r.rule.id.len())
        .chain(["rule".len(), "all specs".len()])
        .max()
        .unwrap_or(4);
    let totals: Vec<String> = matrix
        .columns
        .iter()
        .map(|c| format!("{}/{}", c.summary.passed, c.summary.total()))
        .collect();
    let widths: Vec<usize> = matrix
        .columns
        .iter()
        .enumerate()
        .map(|(i, _)| {
            matrix
                .rows
                .iter()
                .map(|r| r.cells[i].text().len())
                .chain([headers[i].chars().count(), totals[i].len()])
                .max()
                .unwrap_or(1)
        })
        .collect();
    let _ = write!(
        out,
        "{}",
        paint(p.bold, &format!("{:first_width$}", "rule"))
    );
    for (header, width) in headers.iter().zip(&widths) {
        let _ = write!(out, "  {}", pad(paint(p.bold, header), header, *width));
    }
    out.push('\n');
    for row in &matrix.rows {
        let _ = write!(out, "{:first_width$}", row.rule.id);
        for (cell, width) in row.cells.iter().zip(&widths) {
            let text = cell.text();
            let painted = paint(style(cell.status(), p), &text);
            let _ = write!(out, "  {}", pad(painted, &text, *width));
        }
        out.push('\n');
    }
    let _ = write!(out, "{:first_width$}", "all specs");
    for ((column, total), width) in matrix.columns.iter().zip(&totals).zip(&widths) {
        let status = total_status(&column.summary);
        let painted = paint(style(status, p), total);
        let _ = write!(out, "  {}", pad(painted, total, *width));
    }
    out.push('\n');
    for (index, label) in full.iter().enumerate() {
        let failures = matrix.failures(index);
        if failures.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{} failed {}:",
            paint(p.bold, label),
            spec_count(failures.len())
        );
        for report in failures {
            let _ = writeln!(
                out,
                "  {}  {}",
                paint(p.fail, &sanitize::line(&report.path)),
                headline(report)
            );
        }
    }
    for (index, label) in full.iter().enumerate() {
        let diverged = matrix.divergences(index);
        if diverged.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{} diverges on {} (they pass on the fake world):",
            paint(p.bold, label),
            spec_count(diverged.len())
        );
        for report in diverged {
            let Outcome::Divergence(divergence) = &report.outcome else {
                continue;
            };
            let _ = writeln!(
                out,
                "  {}  {}",
                paint(p.skip, &sanitize::line(&report.path)),
                divergence.ids()
            );
        }
    }
    for fault in matrix.world_faults() {
        let _ = writeln!(out, "\n{}", paint(p.spec, &sanitize::line(fault)));
    }
    let broken = matrix.spec_errors();
    if !broken.is_empty() {
        let _ = writeln!(
            out,
            "\n{} could not be loaded (`dlqspec run` shows why):",
            spec_count(broken.len())
        );
        for report in broken {
            let _ = writeln!(
                out,
                "  {}  {}",
                paint(p.spec, &sanitize::line(&report.path)),
                headline(report)
            );
        }
    }
    let shortened: Vec<(&String, &&str)> = headers
        .iter()
        .zip(&full)
        .filter(|(short, full)| short != *full)
        .collect();
    if !shortened.is_empty() {
        out.push_str("\ncolumns:\n");
        for (short, full) in shortened {
            let _ = writeln!(out, "  {short} = {full}");
        }
    }
    let mut out: String = out.lines().map(|l| format!("{}\n", l.trim_end())).collect();
    let _ = writeln!(
        out,
        "\n{} x {} in {}",
        spec_count(matrix.specs().len()),
        matrix.compares.count(matrix.columns.len()),
        duration(matrix.duration)
    );
    out
}

/// An anchor id for one implementation's failure of one spec: letters, digits and dashes.
pub(crate) fn anchor(column: usize, path: &str) -> String {
    let mut slug = String::new();
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    format!("impl{column}-{}", slug.trim_matches('-'))
}

fn markdown_cell(cell: &Cell, column: usize, matrix: &Matrix) -> String {
    let text = cell.text();
    match cell.status() {
        CellStatus::Passed => format!("✅ {text}"),
        CellStatus::Failed => match cell.first_failure.and_then(|i| matrix.specs().get(i)) {
            Some(spec) => format!("❌ [{text}](#{})", anchor(column, &spec.path)),
            None => format!("❌ {text}"),
        },
        CellStatus::Skipped | CellStatus::Partial => format!("⚠️ {text}"),
        CellStatus::Diverged => match cell.first_divergence.and_then(|i| matrix.specs().get(i)) {
            Some(spec) => format!("🔀 [{text}](#{})", anchor(column, &spec.path)),
            None => format!("🔀 {text}"),
        },
        CellStatus::Uncovered => "—".to_owned(),
    }
}

/// Text for a Markdown page, shown as written: Markdown's inline markup characters
/// backslash-escaped (and a leading punctuation character, which could start a list or a
/// heading), then HTML's special characters as entities by maud, so that no spec or
/// implementation can add markup, links or script to the page; control characters escaped.
fn markdown_escape(text: &str) -> String {
    html! { (markdown_backslashed(text)) }.into_string()
}

/// Markdown's markup characters in `text` backslash-escaped, control characters escaped.
fn markdown_backslashed(text: &str) -> String {
    let text = sanitize::line(text);
    let mut out = String::with_capacity(text.len());
    for (index, c) in text.chars().enumerate() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' => {
                out.push('\\');
                out.push(c);
            }
            // HTML's own characters are maud's to escape, never a Markdown escape's.
            c if index == 0 && c.is_ascii_punctuation() && !matches!(c, '&' | '<' | '>' | '"') => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Inline code on a Markdown page: `<code>` around escaped text, since a backtick in the text
/// would end a backtick code span early.
fn markdown_code(text: &str) -> String {
    html! { code { (markdown_backslashed(text)) } }.into_string()
}

/// A code fence longer than any run of backticks in `text`, so the text cannot close it.
fn markdown_fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// A failing or diverging spec's heading in the Markdown matrix: its anchor, implementation
/// and path, then its name and its rules, introduced by `rules_are`.
fn spec_heading(
    out: &mut String,
    index: usize,
    column: &Column,
    report: &SpecReport,
    rules_are: &str,
) {
    let heading = html! {
        a id=(anchor(index, &report.path)) {}
        code { (markdown_backslashed(&column.implementation.label)) } ": "
        code { (markdown_backslashed(&report.path)) }
    };
    let _ = writeln!(out, "\n### {}\n", heading.into_string());
    if let Some(name) = &report.name {
        let _ = writeln!(out, "{}\n", markdown_escape(name));
    }
    if !report.rules.is_empty() {
        let rules: Vec<String> = report.rules.iter().map(|r| markdown_code(r)).collect();
        let _ = writeln!(out, "{rules_are}: {}\n", rules.join(", "));
    }
}

pub(crate) fn markdown(matrix: &Matrix) -> String {
    let mut out = String::from("# dlqspec conformance matrix\n\n");
    let _ = writeln!(
        out,
        "{} against {}. A cell counts the specs covering the rule that passed.\n",
        spec_count(matrix.specs().len()),
        matrix.compares.count(matrix.columns.len())
    );
    out.push_str("| rule |");
    for column in &matrix.columns {
        let _ = write!(out, " {} |", markdown_code(&column.implementation.label));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(matrix.columns.len()));
    out.push('\n');
    for row in &matrix.rows {
        let _ = write!(out, "| {} |", markdown_code(row.rule.id));
        for (index, cell) in row.cells.iter().enumerate() {
            let _ = write!(out, " {} |", markdown_cell(cell, index, matrix));
        }
        out.push('\n');
    }
    out.push_str("| **all specs** |");
    for column in &matrix.columns {
        let _ = write!(
            out,
            " **{}/{}** |",
            column.summary.passed,
            column.summary.total()
        );
    }
    out.push('\n');
    let mut any = false;
    for (index, column) in matrix.columns.iter().enumerate() {
        for report in matrix.failures(index) {
            if !any {
                out.push_str("\n## Failures\n");
                any = true;
            }
            spec_heading(&mut out, index, column, report, "Rules");
            // Inside a fence nothing is markup; the fence is longer than any it holds.
            let details = render::details(&report.path, &report.outcome);
            let fence = markdown_fence(&details);
            let lang = if matches!(report.outcome, Outcome::Mismatch(_)) {
                "diff"
            } else {
                "text"
            };
            let _ = writeln!(out, "{fence}{lang}\n{}{fence}", details);
        }
    }
    let mut any = false;
    for (index, column) in matrix.columns.iter().enumerate() {
        for report in matrix.divergences(index) {
            let Outcome::Divergence(divergence) = &report.outcome else {
                continue;
            };
            if !any {
                out.push_str("\n## Divergences\n\nEach passes on the lesson's fake world and fails on the broker, by the broker's property named.\n");
                any = true;
            }
            spec_heading(
                &mut out,
                index,
                column,
                report,
                "Rules assuming the lesson's queue",
            );
            for property in &divergence.properties {
                let _ = writeln!(
                    out,
                    "- {}: {} (first: {})",
                    markdown_code(property.id),
                    markdown_escape(property.says),
                    markdown_escape(&property.first)
                );
            }
            let failure = render::details(&report.path, &divergence.failure);
            let fence = markdown_fence(&failure);
            let _ = writeln!(out, "\n{fence}diff\n{failure}{fence}");
        }
    }
    let broken = matrix.spec_errors();
    if !broken.is_empty() {
        out.push_str("\n## Specs that could not be loaded\n\n");
        for report in broken {
            let _ = writeln!(
                out,
                "- {}: {}",
                markdown_code(&report.path),
                markdown_escape(&headline(report))
            );
        }
    }
    out
}

/// How a column's total reads: failed when a spec failed, diverged when none did and some
/// diverged on its broker (not a pass, whose green would hide them), else passed.
fn total_status(summary: &crate::run::events::Summary) -> CellStatus {
    if summary.failed() > 0 {
        CellStatus::Failed
    } else if summary.diverged > 0 {
        CellStatus::Diverged
    } else {
        CellStatus::Passed
    }
}

fn html_class(status: CellStatus) -> &'static str {
    match status {
        CellStatus::Passed => "pass",
        CellStatus::Failed => "fail",
        CellStatus::Skipped | CellStatus::Partial => "skip",
        CellStatus::Diverged => "diverge",
        CellStatus::Uncovered => "none",
    }
}

/// Plain details with diff lines marked for coloring.
fn html_details(details: &str) -> Markup {
    let mut in_diff = false;
    let lines: Vec<(Option<&str>, &str)> = details
        .lines()
        .map(|line| {
            if line == "--- expected" {
                in_diff = true;
            }
            let class = match line.chars().next() {
                _ if !in_diff => None,
                Some('-') => Some("del"),
                Some('+') => Some("ins"),
                Some('@') => Some("hunk"),
                _ => None,
            };
            (class, line)
        })
        .collect();
    html! {
        @for (class, line) in lines {
            @match class {
                Some(class) => { span class=(class) { (sanitize::line(line)) } "\n" }
                None => { (sanitize::line(line)) "\n" }
            }
        }
    }
}

/// A cell of the table: its count, linked to the first failure (or divergence) it counts.
fn html_cell(cell: &Cell, index: usize, matrix: &Matrix) -> Markup {
    let status = cell.status();
    let linked = match (
        status,
        cell.first_failure.and_then(|i| matrix.specs().get(i)),
    ) {
        (CellStatus::Failed, Some(spec)) => Some(spec),
        _ => cell
            .first_divergence
            .and_then(|i| matrix.specs().get(i))
            .filter(|_| status == CellStatus::Diverged),
    };
    html! {
        td class={ "cell " (html_class(status)) } {
            @match linked {
                Some(spec) => { a href={ "#" (anchor(index, &spec.path)) } { (cell.text()) } }
                None => { (cell.text()) }
            }
        }
    }
}

/// A page with no outside resources: the table, then each failure with its diff.
pub(crate) fn html(matrix: &Matrix) -> String {
    let markup = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n"
            head {
                "\n" meta charset="utf-8"; "\n"
                title { "dlqspec conformance matrix" } "\n"
                (page::style(page::MATRIX_CSS)) "\n"
            }
            "\n"
            body {
                "\n" h1 { "dlqspec conformance matrix" } "\n"
                p {
                    (spec_count(matrix.specs().len())) " against " (matrix.compares.count(matrix.columns.len()))
                    ". A cell counts the specs covering the rule that passed; a failing cell links to the first failure."
                }
                "\n"
                table #matrix {
                    "\n"
                    tr {
                        th { "rule" }
                        @for column in &matrix.columns {
                            th { code { (sanitize::line(&column.implementation.label)) } }
                        }
                    }
                    "\n"
                    @for row in &matrix.rows {
                        tr {
                            td { code { (row.rule.id) } div.statement { (row.rule.statement) } }
                            @for (index, cell) in row.cells.iter().enumerate() {
                                (html_cell(cell, index, matrix))
                            }
                        }
                        "\n"
                    }
                    tr {
                        th { "all specs" }
                        @for column in &matrix.columns {
                            td class={ "cell " (html_class(total_status(&column.summary))) } {
                                (column.summary.passed) "/" (column.summary.total())
                            }
                        }
                    }
                    "\n"
                }
                "\n"
                @for (index, column) in matrix.columns.iter().enumerate() {
                    @for report in matrix.failures(index).into_iter().chain(matrix.divergences(index)) {
                        section id=(anchor(index, &report.path)) {
                            "\n"
                            h3 {
                                code { (sanitize::line(&column.implementation.label)) } ": "
                                code { (sanitize::line(&report.path)) }
                            }
                            "\n"
                            @if let Some(name) = &report.name {
                                p { (sanitize::line(name)) } "\n"
                            }
                            @if !report.rules.is_empty() {
                                p { "rules: " code { (sanitize::line(&report.rules.join(", "))) } } "\n"
                            }
                            pre { (html_details(&render::details(&report.path, &report.outcome))) } "\n"
                        }
                        "\n"
                    }
                }
                @let broken = matrix.spec_errors();
                @if !broken.is_empty() {
                    h2 { "Specs that could not be loaded" } "\n"
                    ul {
                        "\n"
                        @for report in broken {
                            li { code { (sanitize::line(&report.path)) } ": " (sanitize::line(&headline(report))) } "\n"
                        }
                    }
                    "\n"
                }
            }
            "\n"
        }
        "\n"
    };
    markup.into_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::implementation::ImplInfo;
    use crate::model::outcome::Mismatch;
    use crate::run::events::Summary;
    use crate::run::matrix::Column;
    use crate::text::source::Position;

    fn matrix() -> Matrix {
        let spec = |outcome| SpecReport {
            path: "specs/dlq-consumer/poison-cycle.yaml".into(),
            name: Some("a <poison> pill".into()),
            contract: Some("dlq-consumer"),
            rules: vec!["dlq-consumer/poison".into()],
            outcome,
            duration: Duration::ZERO,
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        };
        let column = |label: &str, outcome: Outcome| {
            let mut summary = Summary::default();
            summary.add(&outcome);
            Column {
                implementation: ImplInfo {
                    label: label.into(),
                    language: "x".into(),
                    is_reference: false,
                },
                reports: vec![spec(outcome)],
                summary,
            }
        };
        let mismatch = Outcome::Mismatch(Mismatch {
            step: "step 3 (process)".into(),
            position: Position::new(12, 5),
            expected: "process: dead\n".into(),
            actual: "process: retry\n".into(),
            note: None,
            step_as_written: None,
            rule: None,
        });
        Matrix::build(
            vec![
                column("builtin", Outcome::Passed),
                column("python:s.py", mismatch),
            ],
            Duration::ZERO,
        )
    }

    #[test]
    fn a_matrix_of_worlds_counts_worlds_and_a_total_with_divergences_is_not_a_pass() {
        let mut worlds = matrix();
        worlds.compares = crate::run::matrix::Compares::Worlds;
        // The second column passed everything its broker let pass, and diverged on one.
        worlds.columns[1].summary = Summary {
            passed: 0,
            diverged: 1,
            ..Summary::default()
        };
        let text = terminal(&worlds, &Palette::plain());
        assert!(text.contains(" x 2 worlds in "), "{text}");
        assert!(!text.contains("implementations"), "{text}");
        let html = html(&worlds);
        assert!(html.contains("against 2 worlds."), "{html}");
        assert!(
            html.contains("<td class=\"cell diverge\">0/1</td>"),
            "{html}"
        );
        assert!(html.contains("td.skip,td.diverge{background:"), "{html}");
        assert!(markdown(&worlds).contains("against 2 worlds."));
        // A matrix of implementations says so.
        assert!(terminal(&matrix(), &Palette::plain()).contains(" x 2 implementations in "));
    }

    #[test]
    fn anchors_are_slugs_per_implementation() {
        assert_eq!(
            anchor(1, "specs/dlq-consumer/poison-cycle.yaml"),
            "impl1-specs-dlq-consumer-poison-cycle-yaml"
        );
    }

    #[test]
    fn headers_are_shortened_unless_that_makes_two_alike() {
        assert_eq!(
            short_labels(&[
                "builtin",
                "python:examples/python/solution.py",
                "node:a/b.ts"
            ]),
            ["builtin", "python:solution.py", "node:b.ts"]
        );
        assert_eq!(
            short_labels(&["python:a/solution.py", "python:b/solution.py"]),
            ["python:a/solution.py", "python:b/solution.py"]
        );
    }

    #[test]
    fn the_terminal_table_counts_and_lists_failures() {
        let text = terminal(&matrix(), &Palette::plain());
        let poison = text
            .lines()
            .find(|l| l.starts_with("dlq-consumer/poison "))
            .unwrap();
        assert!(poison.ends_with("1/1      0/1"), "{poison:?}");
        assert!(
            text.contains("python:s.py failed 1 spec:\n  specs/dlq-consumer/poison-cycle.yaml  first difference at step 3 (process) (specs/dlq-consumer/poison-cycle.yaml:12:5)\n"),
            "{text}"
        );
    }

    #[test]
    fn markdown_links_failing_cells_to_their_diff() {
        let text = markdown(&matrix());
        assert!(
            text.contains("| <code>dlq-consumer/poison</code> | ✅ 1/1 | ❌ [0/1](#impl1-specs-dlq-consumer-poison-cycle-yaml) |"),
            "{text}"
        );
        assert!(text.contains("### <a id=\"impl1-specs-dlq-consumer-poison-cycle-yaml\"></a><code>python:s.py</code>: <code>specs/dlq-consumer/poison-cycle.yaml</code>"), "{text}");
        assert!(text.contains("\na &lt;poison&gt; pill\n"), "{text}");
        assert!(
            text.contains("```diff\nfirst difference at step 3 (process)"),
            "{text}"
        );
        assert!(
            text.contains("-process: dead\n+process: retry\n```"),
            "{text}"
        );
    }

    #[test]
    fn markdown_shows_hostile_text_as_text() {
        let mut matrix = matrix();
        let report = &mut matrix.columns[1].reports[0];
        report.name = Some("<script>alert(1)</script> *bold* [link](x)".into());
        report.path = "specs/a`<img src=x>`.yaml".into();
        report.outcome = Outcome::Errored(crate::model::implementation::ImplError::new(
            crate::model::implementation::ImplErrorKind::Exited,
            "```\n<script>x</script>\n````\n\u{1b}[2J",
        ));
        let text = markdown(&matrix);
        // Raw HTML only inside the fence, where Markdown shows it as text.
        assert!(
            !text.contains("<script>alert") && !text.contains("<img"),
            "{text}"
        );
        assert!(
            text.contains("&lt;script&gt;alert(1)&lt;/script&gt; \\*bold\\* \\[link\\](x)"),
            "{text}"
        );
        assert!(
            text.contains("<code>specs/a\\`&lt;img src=x&gt;\\`.yaml</code>"),
            "{text}"
        );
        assert!(text.contains("\n`````text\n"), "{text}");
        assert!(text.contains("\\x1b[2J"), "{text}");
    }

    #[test]
    fn html_is_escaped_and_links_failing_cells() {
        let text = html(&matrix());
        assert!(text.contains("<td class=\"cell fail\"><a href=\"#impl1-specs-dlq-consumer-poison-cycle-yaml\">0/1</a></td>"), "{text}");
        assert!(text.contains("<section id=\"impl1-specs-dlq-consumer-poison-cycle-yaml\">"));
        assert!(text.contains("<p>a &lt;poison&gt; pill</p>"));
        assert!(text.contains("<span class=\"del\">-process: dead</span>"));
        assert!(!text.contains("<poison>"));
        assert!(
            !text.contains("http"),
            "self-contained: no outside resources"
        );
    }
}
