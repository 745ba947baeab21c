//! GitHub Actions: one `::error` annotation per cause of a run's failures, at most
//! [`MAX_ANNOTATIONS`] (what GitHub shows of a step), placed on the line of the
//! implementation's own code a traceback names, else on the first failing spec's expectation;
//! and every cause, with its specs, in the step summary (`$GITHUB_STEP_SUMMARY`).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::render;
use super::sanitize::{self, github_data, github_property};
use crate::model::cause::Cause;
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport, Summary};

/// The most `::error` annotations one run writes: GitHub shows ten of a step, and drops the
/// rest without a word.
pub(crate) const MAX_ANNOTATIONS: usize = 10;

/// The most specs of one cause the step summary names; the rest are counted.
const MAX_LISTED_SPECS: usize = 50;

/// The most bytes of step summary one run adds (GitHub takes 1 MiB a step).
const MAX_SUMMARY_BYTES: usize = 512 * 1024;

/// Where the report of a GitHub Actions step goes besides its annotations.
#[derive(Debug, Clone, Default)]
pub(crate) struct GithubPlaces {
    /// `$GITHUB_STEP_SUMMARY`: the file the step's summary is appended to.
    pub(crate) step_summary: Option<PathBuf>,
    /// `$GITHUB_WORKSPACE`, the repository's checkout: annotations name files relative to it,
    /// and a line of code outside it cannot be annotated. The working folder when unset.
    pub(crate) workspace: Option<PathBuf>,
}

impl GithubPlaces {
    /// The places the environment of a GitHub Actions step names.
    pub(crate) fn from_env() -> GithubPlaces {
        let path = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        GithubPlaces {
            step_summary: path("GITHUB_STEP_SUMMARY"),
            workspace: path("GITHUB_WORKSPACE"),
        }
    }
}

pub(crate) struct GithubAnnotations<W: Write> {
    out: W,
    places: GithubPlaces,
    /// The run's causes, in the order first met.
    groups: Vec<Group>,
}

/// The failures of one cause: the first as it was reported, and how many more.
struct Group {
    /// The cause's key; a failure without a cause is a group of its own, keyed by its path.
    key: String,
    cause: Option<Cause>,
    first: SpecReport,
    /// The failing specs' paths, the first `MAX_LISTED_SPECS` of them.
    specs: Vec<String>,
    count: usize,
}

impl<W: Write> GithubAnnotations<W> {
    pub(crate) fn new(out: W, places: GithubPlaces) -> Self {
        GithubAnnotations {
            out,
            places,
            groups: Vec::new(),
        }
    }

    fn failed(&mut self, report: &SpecReport) {
        let key = match &report.cause {
            Some(cause) => cause.id.clone(),
            None => format!("spec {}", report.path),
        };
        if let Some(group) = self.groups.iter_mut().find(|g| g.key == key) {
            group.count += 1;
            if group.specs.len() < MAX_LISTED_SPECS {
                group.specs.push(report.path.clone());
            }
            return;
        }
        self.groups.push(Group {
            key,
            cause: report.cause.clone(),
            first: report.clone(),
            specs: vec![report.path.clone()],
            count: 1,
        });
    }

    /// After the run: an annotation for each of the most common causes, then the summary.
    fn done(&mut self, summary: &Summary) {
        // The causes, most failures first (a tie in the order first met).
        let mut groups: Vec<&Group> = self.groups.iter().collect();
        groups.sort_by_key(|g| std::cmp::Reverse(g.count));
        let workspace = self
            .places
            .workspace
            .clone()
            .or_else(|| std::env::current_dir().ok());
        let mut lines = String::new();
        for group in groups.iter().take(MAX_ANNOTATIONS) {
            lines.push_str(&annotation(group, workspace.as_deref()));
            lines.push('\n');
        }
        if groups.len() > MAX_ANNOTATIONS {
            let more = &groups[MAX_ANNOTATIONS..];
            let failures: usize = more.iter().map(|g| g.count).sum();
            let listed = if self.places.step_summary.is_some() {
                "the step summary lists every cause"
            } else {
                "the report's `failures by cause` lists every cause"
            };
            let _ = writeln!(
                lines,
                "::notice title={}::{}",
                github_property(&format!("dlqspec: {} more causes", more.len())),
                github_data(&format!(
                    "{} more causes of {} failing {}, not annotated (GitHub shows {MAX_ANNOTATIONS} a step): {listed}",
                    more.len(),
                    failures,
                    specs_word(failures)
                ))
            );
        }
        let _ = self
            .out
            .write_all(lines.as_bytes())
            .and_then(|()| self.out.flush());
        if let Some(path) = &self.places.step_summary {
            let text = step_summary(&groups, summary, workspace.as_deref());
            if let Err(error) = crate::files::append::append(path, text.as_bytes()) {
                let mut stderr = sanitize::stderr();
                let _ = writeln!(
                    stderr,
                    "warning: cannot add to the step summary {}: {error}; the annotations above are all there is",
                    sanitize::line(&crate::text::source::display_path(path))
                );
            }
        }
    }
}

/// `spec` or `specs`.
fn specs_word(count: usize) -> &'static str {
    if count == 1 { "spec" } else { "specs" }
}

/// What kind of failure the first of a group is, as a title says it.
fn kind(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Stale(_) => "stale known failure",
        Outcome::SpecError(_) => "spec error",
        Outcome::Errored(_) => "implementation error",
        _ => "mismatch",
    }
}

/// `path:line:col` of the spot a failing spec points at, or its path alone.
fn spec_spot(report: &SpecReport) -> String {
    match render::failing_position(&report.outcome) {
        Some(at) => format!("{}:{}:{}", report.path, at.line, at.column),
        None => report.path.clone(),
    }
}

/// The file of the implementation's code a cause names, relative to `workspace`, and its
/// line; `None` when it names none, or one outside the workspace (GitHub cannot show it).
fn code_spot(cause: Option<&Cause>, workspace: Option<&Path>) -> Option<(String, u64)> {
    let at = cause?.at.as_ref()?;
    let file = render::shown_file(&at.file, workspace);
    (!Path::new(&file).is_absolute() && !file.starts_with("../") && at.line > 0)
        .then_some((file, at.line))
}

/// The `::error` command of one cause: on the implementation's line where a traceback names
/// one, else on the first spec's failing expectation; titled with the rule (or the kind of
/// failure) and the count; saying the cause, the rule, the first spec, and the other specs.
fn annotation(group: &Group, workspace: Option<&Path>) -> String {
    let first = &group.first;
    let cause = group.cause.as_ref();
    let mut properties = match code_spot(cause, workspace) {
        Some((file, line)) => format!(
            "file={},line={line}",
            github_property(&sanitize::line(&file))
        ),
        None => {
            let mut spot = format!("file={}", github_property(&sanitize::line(&first.path)));
            if let Some(at) = render::failing_position(&first.outcome) {
                let _ = write!(spot, ",line={},col={}", at.line, at.column);
            }
            spot
        }
    };
    let named = cause
        .and_then(|c| c.rule)
        .unwrap_or_else(|| kind(&first.outcome));
    let title = format!(
        "{named}: {} failing {}",
        group.count,
        specs_word(group.count)
    );
    let _ = write!(
        properties,
        ",title={}",
        github_property(&sanitize::line(&title))
    );
    // Each part is one line (`sanitize::line`), a diff or an error's lines aside.
    let mut message = String::new();
    match cause {
        Some(cause) => {
            let _ = writeln!(message, "{}", sanitize::line(&cause.line));
            if let Some(rule) = cause.rule {
                let _ = writeln!(message, "rule: {}", sanitize::line(rule));
            }
        }
        None => message.push_str(&render::details(&first.path, &first.outcome)),
    }
    let name = first
        .name
        .as_deref()
        .map(|name| format!(" ({})", sanitize::line(name)))
        .unwrap_or_default();
    let _ = writeln!(
        message,
        "first spec: {}{name}",
        sanitize::line(&spec_spot(first))
    );
    if let Some(cause) = cause {
        if let Some(told) = cause.told.as_deref().filter(|t| *t != cause.line) {
            let _ = writeln!(message, "there: {}", sanitize::line(told));
        }
        if let Some(mistake) = cause.mistake {
            let _ = writeln!(message, "a known mistake: {}", sanitize::line(mistake));
        }
        match &first.outcome {
            // A broken spec's errors, each at its own line, since the annotation sits on one
            // and the cause's line is the first line of the first.
            Outcome::SpecError(error) if !error.more.is_empty() || error.message.contains('\n') => {
                for one in error.all() {
                    let _ = writeln!(
                        message,
                        "{}:{}:{}: {}",
                        sanitize::line(&one.path),
                        one.position.line,
                        one.position.column,
                        sanitize::text(&one.message)
                    );
                }
            }
            // A difference no departure explains, or the spec's own expectation against the
            // built-in reference (no rule): where, and the diff it points at.
            Outcome::Mismatch(_) if cause.told.is_none() || cause.rule.is_none() => {
                message.push_str(&render::details(&first.path, &first.outcome));
            }
            _ => {}
        }
    }
    if group.count > 1 {
        const NAMED: usize = 5;
        let others: Vec<String> = group.specs[1..]
            .iter()
            .take(NAMED)
            .map(|spec| sanitize::line(spec).into_owned())
            .collect();
        let unnamed = group.count - 1 - others.len();
        let tail = if unnamed > 0 {
            format!(" and {unnamed} more")
        } else {
            String::new()
        };
        let _ = writeln!(message, "the same cause fails {}{tail}", others.join(", "));
    }
    // Newlines survive as newlines in the annotation; other control characters show escaped.
    format!(
        "::error {properties}::{}",
        github_data(&sanitize::text(message.trim_end_matches('\n')))
    )
}

/// The step summary: every cause of the run, most failures first, with its rule, where it is
/// and its first spec; then each cause's failing specs. Markdown, every text escaped.
fn step_summary(groups: &[&Group], summary: &Summary, workspace: Option<&Path>) -> String {
    let failures: usize = groups.iter().map(|g| g.count).sum();
    let mut out = String::new();
    if failures == 0 {
        let _ = writeln!(out, "### dlqspec: {} passed, 0 failed\n", summary.passed);
        return out;
    }
    let _ = writeln!(
        out,
        "### dlqspec: {} passed, {failures} failed, {} {}\n",
        summary.passed,
        groups.len(),
        if groups.len() == 1 { "cause" } else { "causes" }
    );
    out.push_str("| specs | rule | cause | where | first spec |\n|---:|---|---|---|---|\n");
    let mut listed = 0;
    for group in groups {
        let cause = group.cause.as_ref();
        let line = match cause {
            Some(cause) => cause.line.clone(),
            None => kind(&group.first.outcome).to_owned(),
        };
        let mut said = sanitize::markdown(&line);
        if let Some(mistake) = cause.and_then(|c| c.mistake) {
            let _ = write!(said, "<br>a known mistake: {}", sanitize::markdown(mistake));
        }
        let rule = cause
            .and_then(|c| c.rule)
            .map(sanitize::markdown_code)
            .unwrap_or_default();
        let place = match code_spot(cause, workspace) {
            Some((file, line)) => sanitize::markdown_code(&format!("{file}:{line}")),
            None => sanitize::markdown_code(&spec_spot(&group.first)),
        };
        let row = format!(
            "| {} | {rule} | {said} | {place} | {} |\n",
            group.count,
            sanitize::markdown_code(&spec_spot(&group.first))
        );
        if out.len() + row.len() > MAX_SUMMARY_BYTES / 2 {
            break;
        }
        out.push_str(&row);
        listed += 1;
    }
    if listed < groups.len() {
        let _ = writeln!(
            out,
            "\n{} more causes, not listed here: the report's `failures by cause` has them.",
            groups.len() - listed
        );
    }
    out.push_str("\n<details><summary>The failing specs of each cause</summary>\n\n");
    for (index, group) in groups.iter().take(listed).enumerate() {
        let line = group
            .cause
            .as_ref()
            .map_or_else(|| group.first.path.clone(), Cause::summary);
        // A list under a numbered item is indented as far as the item's text.
        let number = format!("{}. ", index + 1);
        let indent = " ".repeat(number.len());
        let mut block = format!("{number}{}\n", sanitize::markdown(&line));
        for spec in &group.specs {
            let _ = writeln!(block, "{indent}- {}", sanitize::markdown_code(spec));
        }
        if group.count > group.specs.len() {
            let _ = writeln!(
                block,
                "{indent}- and {} more",
                group.count - group.specs.len()
            );
        }
        if out.len() + block.len() > MAX_SUMMARY_BYTES {
            out.push_str("\n(the rest cut: the report lists every failing spec)\n");
            break;
        }
        out.push_str(&block);
    }
    out.push_str("\n</details>\n\n");
    out
}

impl<W: Write> Reporter for GithubAnnotations<W> {
    fn event(&mut self, event: &Event) {
        match event {
            Event::Finished(report) if report.outcome.is_failure() => self.failed(report),
            Event::Done(summary) => self.done(summary),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cause::CodeLine;
    use crate::model::implementation::{ImplError, ImplErrorKind};
    use crate::model::outcome::Mismatch;
    use crate::text::source::Position;
    use std::time::Duration;

    fn spec(path: &str, outcome: Outcome, cause: Option<Cause>) -> SpecReport {
        SpecReport {
            path: path.into(),
            name: Some("100% done: really".into()),
            contract: Some("dlq-consumer"),
            rules: vec![],
            outcome,
            duration: Duration::ZERO,
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause,
        }
    }

    fn mismatch() -> Outcome {
        Outcome::Mismatch(Mismatch {
            step: "step 2 (process)".into(),
            position: Position::new(14, 7),
            expected: "ok\n".into(),
            actual: "retry\n".into(),
            note: None,
            step_as_written: None,
            rule: None,
        })
    }

    fn cause(id: &str, line: &str, at: Option<CodeLine>) -> Cause {
        Cause {
            id: id.into(),
            rule: Some("dlq-consumer/poison"),
            line: line.into(),
            told: Some(format!("{line}, in its ids")),
            mistake: None,
            at,
        }
    }

    /// The annotations and the step summary of a run of `reports`, under `workspace`.
    fn annotate(reports: &[SpecReport], workspace: &Path) -> (Vec<String>, String) {
        let dir = tempfile::tempdir().unwrap();
        let summary_file = dir.path().join("summary.md");
        std::fs::write(&summary_file, "before\n").unwrap();
        let places = GithubPlaces {
            step_summary: Some(summary_file.clone()),
            workspace: Some(workspace.to_path_buf()),
        };
        let mut reporter = GithubAnnotations::new(Vec::new(), places);
        let mut summary = Summary::default();
        for report in reports {
            summary.add(&report.outcome);
            reporter.event(&Event::Finished(report));
        }
        reporter.event(&Event::Done(&summary));
        let lines = String::from_utf8(reporter.out).unwrap();
        let text = std::fs::read_to_string(&summary_file).unwrap();
        (lines.lines().map(str::to_owned).collect(), text)
    }

    #[test]
    fn one_annotation_per_cause_on_the_code_a_traceback_names_else_on_the_spec() {
        let raised = cause(
            "c1",
            "KeyError: 'x' raised at /w/src/solution.py:26 in process_one",
            Some(CodeLine {
                file: "/w/src/solution.py".into(),
                line: 26,
            }),
        );
        let missed = cause("c2", "the reference acks X; yours did not", None);
        let reports = [
            spec("specs/a,b.yaml", mismatch(), Some(missed.clone())),
            spec("specs/c.yaml", mismatch(), Some(raised.clone())),
            spec("specs/d.yaml", mismatch(), Some(raised.clone())),
            spec("specs/ok.yaml", Outcome::Passed, None),
        ];
        let (lines, summary) = annotate(&reports, Path::new("/w"));
        assert_eq!(
            lines,
            [
                "::error file=src/solution.py,line=26,title=dlq-consumer/poison%3A 2 failing specs::\
                 KeyError: 'x' raised at /w/src/solution.py:26 in process_one%0A\
                 rule: dlq-consumer/poison%0A\
                 first spec: specs/c.yaml:14:7 (100%25 done: really)%0A\
                 there: KeyError: 'x' raised at /w/src/solution.py:26 in process_one, in its ids%0A\
                 the same cause fails specs/d.yaml",
                "::error file=specs/a%2Cb.yaml,line=14,col=7,title=dlq-consumer/poison%3A 1 failing spec::\
                 the reference acks X; yours did not%0A\
                 rule: dlq-consumer/poison%0A\
                 first spec: specs/a,b.yaml:14:7 (100%25 done: really)%0A\
                 there: the reference acks X; yours did not, in its ids",
            ]
        );
        assert_eq!(
            summary,
            "before\n### dlqspec: 1 passed, 3 failed, 2 causes\n\n\
             | specs | rule | cause | where | first spec |\n|---:|---|---|---|---|\n\
             | 2 | <code>dlq-consumer/poison</code> | KeyError: 'x' raised at /w/src/solution.py:26 in process\\_one \
             | <code>src/solution.py:26</code> | <code>specs/c.yaml:14:7</code> |\n\
             | 1 | <code>dlq-consumer/poison</code> | the reference acks X; yours did not \
             | <code>specs/a,b.yaml:14:7</code> | <code>specs/a,b.yaml:14:7</code> |\n\
             \n<details><summary>The failing specs of each cause</summary>\n\n\
             1. dlq-consumer/poison: KeyError: 'x' raised at /w/src/solution.py:26 in process\\_one\n\
             \x20  - <code>specs/c.yaml</code>\n   - <code>specs/d.yaml</code>\n\
             2. dlq-consumer/poison: the reference acks X; yours did not\n\
             \x20  - <code>specs/a,b.yaml</code>\n\
             \n</details>\n\n"
        );
        // A line outside the workspace cannot be annotated: the spec is.
        let (lines, _) = annotate(&reports[1..2], Path::new("/elsewhere"));
        assert!(
            lines[0].starts_with("::error file=specs/c.yaml,line=14,col=7,"),
            "{lines:?}"
        );
    }

    #[test]
    fn at_most_ten_annotations_and_a_notice_of_the_rest() {
        let reports: Vec<SpecReport> = (0..13)
            .map(|n| {
                let error = ImplError::new(ImplErrorKind::Exited, format!("exited with {n}"));
                let cause = Cause {
                    rule: None,
                    told: None,
                    ..cause(&format!("c{n}"), &format!("exited with {n}"), None)
                };
                spec(
                    &format!("specs/{n}.yaml"),
                    Outcome::Errored(error),
                    Some(cause),
                )
            })
            .collect();
        let (lines, summary) = annotate(&reports, Path::new("/w"));
        let errors: Vec<&String> = lines.iter().filter(|l| l.starts_with("::error ")).collect();
        assert_eq!(errors.len(), MAX_ANNOTATIONS, "{lines:#?}");
        assert_eq!(
            errors[0],
            "::error file=specs/0.yaml,title=implementation error%3A 1 failing spec::\
             exited with 0%0Afirst spec: specs/0.yaml (100%25 done: really)"
        );
        assert_eq!(
            lines.last().unwrap(),
            "::notice title=dlqspec%3A 3 more causes::3 more causes of 3 failing specs, not \
             annotated (GitHub shows 10 a step): the step summary lists every cause"
        );
        assert_eq!(lines.len(), MAX_ANNOTATIONS + 1);
        // The summary lists all thirteen.
        assert_eq!(summary.matches("\n| 1 |").count(), 13, "{summary}");
    }

    #[test]
    fn a_broken_spec_says_each_error_and_a_pass_says_nothing() {
        let file = crate::text::source::SourceFile::from_text("specs/b.yaml", "a: 1\nb: 2\n");
        let broken =
            crate::text::spec_error::SpecError::invalid(&file, Position::new(2, 4), "bad\nvalue");
        let outcome = Outcome::SpecError(broken);
        let cause = Cause::of(&outcome, None, None, &[]);
        let (lines, _) = annotate(&[spec("specs/b.yaml", outcome, cause)], Path::new("/w"));
        assert_eq!(
            lines,
            [
                "::error file=specs/b.yaml,line=2,col=4,title=spec error%3A 1 failing spec::\
              spec error: bad%0Afirst spec: specs/b.yaml:2:4 (100%25 done: really)%0A\
              specs/b.yaml:2:4: bad%0Avalue"
            ]
        );
        let (lines, summary) = annotate(
            &[spec("specs/ok.yaml", Outcome::Passed, None)],
            Path::new("/w"),
        );
        assert!(lines.is_empty(), "{lines:?}");
        assert_eq!(summary, "before\n### dlqspec: 1 passed, 0 failed\n\n");
    }
}
