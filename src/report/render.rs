//! Rendering outcomes as text: diffs, spec-error snippets, one-line reasons. Shared by reporters.

use std::fmt::Write as _;

use similar::{ChangeTag, TextDiff};

use super::sanitize;
use super::style::{Palette, paint};
use crate::model::captured::{Captured, Stream};
use crate::model::cause::Cause;
use crate::model::implementation::ImplError;
use crate::model::outcome::{Divergence, ExpectedFailure, Mismatch, Outcome};
use crate::text::source::{Excerpt, Position};
use crate::text::spec_error::SpecError;
use crate::text::truncate;

/// A unified diff of expected (`-`) against actual (`+`), colored per line, control
/// characters in the values shown escaped; at most `truncate::MAX_SHOWN_BYTES`, the cut told.
pub(crate) fn diff(expected: &str, actual: &str, palette: &Palette) -> String {
    let diff = TextDiff::from_lines(expected, actual);
    let mut out = String::new();
    let _ = writeln!(out, "{}", paint(palette.removed, "--- expected"));
    let _ = writeln!(out, "{}", paint(palette.added, "+++ actual"));
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let header = format!(
            "@@ -{},{} +{},{} @@",
            old.start + 1,
            old.len(),
            new.start + 1,
            new.len()
        );
        let _ = writeln!(out, "{}", paint(palette.hunk, &header));
        for op in &group {
            for change in diff.iter_changes(op) {
                let (sign, style) = match change.tag() {
                    ChangeTag::Delete => ('-', palette.removed),
                    ChangeTag::Insert => ('+', palette.added),
                    ChangeTag::Equal => (' ', palette.dim),
                };
                let line = sanitize::text(change.value().trim_end_matches('\n'));
                let _ = writeln!(out, "{}", paint(style, &format!("{sign}{line}")));
            }
        }
        if out.len() > truncate::MAX_SHOWN_BYTES {
            break;
        }
    }
    truncate::text(out, truncate::MAX_SHOWN_BYTES)
}

/// Each error of a spec file, in source order: its message, `path:line:col`, the offending
/// line and a caret under the column; under a count when the file has more than one.
pub(crate) fn spec_error(error: &SpecError, palette: &Palette) -> String {
    let mut out = String::new();
    if !error.more.is_empty() || error.untold.is_some() {
        let count = match error.count() {
            1 => "1 error".to_owned(),
            n => format!("{n} errors"),
        };
        let untold = error
            .untold
            .map(|why| format!(" ({})", why.says()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}",
            paint(
                palette.bold,
                &format!("{count} in {}{untold}", sanitize::line(&error.path))
            )
        );
    }
    for (index, one) in error.all().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&one_spec_error(one, palette));
    }
    out
}

/// One error: its message, `path:line:col`, the offending line and a caret under the column.
fn one_spec_error(error: &SpecError, palette: &Palette) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}",
        paint(palette.spec, "error:"),
        paint(palette.bold, &sanitize::text(&error.message))
    );
    let line = error.position.line;
    let gutter = " ".repeat(line.to_string().len());
    let _ = writeln!(
        out,
        "{gutter}{} {}:{}:{}",
        paint(palette.hunk, "-->"),
        sanitize::line(&error.path),
        line,
        error.position.column
    );
    if let Some(source) = &error.source_line {
        let bar = paint(palette.hunk, "|");
        let _ = writeln!(out, "{gutter} {bar}");
        out.push_str(&caret(source, error.position, palette));
    }
    out
}

/// The line and a caret under `position.column`, indented under a gutter as wide as the number.
/// A cut line shows `...` where it goes on; control characters show as escapes, and the
/// caret counts their width.
pub(crate) fn caret(excerpt: &Excerpt, position: Position, palette: &Palette) -> String {
    let mut out = String::new();
    let number = position.line.to_string();
    let gutter = " ".repeat(number.len());
    let bar = paint(palette.hunk, "|");
    let (mut shown, mut lead) = (String::new(), String::new());
    if excerpt.skipped > 0 {
        shown.push_str("...");
        lead.push_str("   ");
    }
    let before = position.column.saturating_sub(1);
    for (index, c) in excerpt.text.chars().enumerate() {
        let glyph = sanitize::shown_char(c);
        if excerpt.skipped + index < before {
            // Keep tabs as tabs so the caret lines up however the terminal expands them.
            match c {
                '\t' => lead.push('\t'),
                _ => lead.extend(std::iter::repeat_n(' ', glyph.chars().count())),
            }
        }
        shown.push_str(&glyph);
    }
    if excerpt.cut {
        shown.push_str("...");
    }
    let _ = writeln!(out, "{} {bar} {shown}", paint(palette.hunk, &number));
    let _ = writeln!(out, "{gutter} {bar} {lead}{}", paint(palette.caret, "^"));
    out
}

/// One `warning: PATH: skipped, REASON` line per path discovery left out.
pub(crate) fn skipped(skipped: &[crate::load::discover::Skipped], palette: &Palette) -> String {
    let mut out = String::new();
    for entry in skipped {
        let warning = entry.warning();
        let rest = warning.strip_prefix("warning:").unwrap_or(&warning);
        let _ = writeln!(
            out,
            "{}{}",
            paint(palette.skip, "warning:"),
            sanitize::line(rest)
        );
    }
    out
}

/// Prints [`skipped`] on stderr, where warnings go whatever the report format.
pub(crate) fn warn_skipped(skipped: &[crate::load::discover::Skipped], palette: &Palette) {
    use std::io::Write;
    if !skipped.is_empty() {
        let _ = sanitize::stderr().write_all(self::skipped(skipped, palette).as_bytes());
    }
}

/// Where a mismatch happened: `first difference at STEP (PATH:LINE:COL)`.
pub(crate) fn first_difference(path: &str, mismatch: &Mismatch, palette: &Palette) -> String {
    format!(
        "first difference at {} ({}:{}:{})",
        paint(palette.bold, &sanitize::line(&mismatch.step)),
        sanitize::line(path),
        mismatch.position.line,
        mismatch.position.column
    )
}

/// The lines that head a failure's details: the rule its cause breaks (or, where none is
/// known, the spec's `rules:` as its context), its departure from the reference, and the
/// classic mistake it is.
pub(crate) fn cause_heading(cause: Option<&Cause>, rules: &[String]) -> String {
    let mut out = String::new();
    match cause.and_then(|c| c.rule) {
        Some(rule) => {
            let _ = writeln!(out, "rule broken: {}", sanitize::line(rule));
        }
        None if !rules.is_empty() => {
            let _ = writeln!(
                out,
                "the spec's rules: {}",
                sanitize::line(&rules.join(", "))
            );
        }
        None => {}
    }
    if let Some(told) = cause.and_then(|c| c.told.as_deref()) {
        let _ = writeln!(out, "cause: {}", sanitize::line(told));
    }
    if let Some(mistake) = cause.and_then(|c| c.mistake) {
        let _ = writeln!(out, "a known mistake: {}", sanitize::line(mistake));
    }
    out
}

/// Where a mismatch happened, its note, and the diff.
pub(crate) fn mismatch(path: &str, mismatch: &Mismatch, palette: &Palette) -> String {
    let mut out = first_difference(path, mismatch, palette);
    out.push('\n');
    if let Some(step) = &mismatch.step_as_written {
        let _ = writeln!(out, "the step: {}", sanitize::line(step));
    }
    if let Some(note) = &mismatch.note {
        let _ = writeln!(out, "{}", sanitize::text(note));
    }
    out.push_str(&diff(&mismatch.expected, &mismatch.actual, palette));
    truncate::text(out, truncate::MAX_SHOWN_BYTES)
}

/// The spot in the spec a failure points at: the expectation that failed, or the broken spot.
pub(crate) fn failing_position(outcome: &Outcome) -> Option<Position> {
    match outcome {
        Outcome::Mismatch(m) => Some(m.position),
        Outcome::SpecError(e) => Some(e.position),
        _ => None,
    }
}

pub(crate) fn impl_error(error: &ImplError) -> String {
    let kind = serde_json::to_value(error.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    truncate::text(
        format!(
            "implementation error ({kind}): {}\n",
            sanitize::text(&error.message)
        ),
        truncate::MAX_SHOWN_BYTES,
    )
}

/// The whole explanation of an outcome, without color: for JUnit bodies, TAP, JSON.
pub fn details(path: &str, outcome: &Outcome) -> String {
    let plain = Palette::plain();
    match outcome {
        Outcome::Passed => String::new(),
        Outcome::Mismatch(m) => mismatch(path, m, &plain),
        Outcome::Errored(e) => impl_error(e),
        Outcome::SpecError(e) => spec_error(e, &plain),
        Outcome::Skipped(reason) => format!("skipped: {}\n", sanitize::text(reason)),
        Outcome::NotAttempted(why) => format!("not attempted: {}\n", sanitize::text(why)),
        Outcome::ExpectedFailure(known) => {
            let mut out = expected_failure(path, known);
            out.push_str(&details(path, &known.failure));
            out
        }
        Outcome::Stale(message) | Outcome::WorldFault(message) => {
            format!("{}\n", sanitize::text(message))
        }
        Outcome::Divergence(found) => divergence(path, found, &[], &plain),
    }
}

/// A spec's details (`details`), a difference's headed by its cause: the rule broken, where
/// the implementation departed from the reference, the classic mistake it is, and the cause's
/// id, by which failures of one cause are grouped.
pub(crate) fn explained(report: &crate::run::events::SpecReport) -> String {
    let mut out = match &report.outcome {
        Outcome::Mismatch(_) => cause_heading(report.cause.as_ref(), &report.rules),
        _ => String::new(),
    };
    out.push_str(&details(&report.path, &report.outcome));
    if let Some(cause) = report
        .cause
        .as_ref()
        .filter(|_| report.outcome.is_failure())
    {
        let _ = writeln!(out, "cause id: {}", sanitize::line(&cause.id));
    }
    out
}

/// A divergence told: the world, each broker property with what it means for a consumer and
/// where it first showed, the spec's rules (whose assumption the broker does not meet), then
/// how the spec failed on the broker.
pub(crate) fn divergence(
    path: &str,
    divergence: &Divergence,
    rules: &[String],
    p: &Palette,
) -> String {
    let mut out = format!(
        "diverges on {}: passes on the lesson's fake world, fails on the broker\n",
        sanitize::line(&divergence.world)
    );
    for property in &divergence.properties {
        out.push_str(&format!(
            "broker property {}: {}\n  for a consumer: {}\n  first: {}\n",
            property.id,
            property.says,
            property.means,
            sanitize::line(&property.first)
        ));
    }
    if !rules.is_empty() {
        out.push_str(&format!(
            "rules assuming the lesson's queue here: {}\n",
            sanitize::line(&rules.join(", "))
        ));
    }
    out.push_str("on the broker:\n");
    let failure = match &divergence.failure {
        Outcome::Mismatch(m) => mismatch(path, m, p),
        Outcome::Errored(e) => impl_error(e),
        other => details(path, other),
    };
    for line in failure.lines() {
        out.push_str(&format!("  {line}\n"));
    }
    out
}

/// A file a frame names, relative to `base` when it lies under it (the working directory
/// when `base` is `None`).
pub(crate) fn shown_file(file: &str, base: Option<&std::path::Path>) -> String {
    let cwd;
    let base = match base {
        Some(base) => base,
        None => match std::env::current_dir() {
            Ok(dir) => {
                cwd = dir;
                cwd.as_path()
            }
            Err(_) => return file.to_owned(),
        },
    };
    file.strip_prefix(&dir_prefix(base))
        .unwrap_or(file)
        .to_owned()
}

/// `dir` as the start of the paths under it: `/s/` for `/s`.
fn dir_prefix(dir: &std::path::Path) -> String {
    format!("{}/", dir.to_string_lossy().trim_end_matches('/'))
}

/// `text` with every path under `dir` said relative to it (`solution.py:5`, not
/// `/home/runner/class/alice/solution.py:5`): what autograder results show a student, who
/// knows their own files and not the grader's folders.
///
/// A solution at the root (`/solution.py`) has the folder `/`, a prefix of every absolute path
/// and of every `/` in the text: nothing is shortened then.
pub(crate) fn relative_to(text: &str, dir: Option<&std::path::Path>) -> String {
    match dir.map(dir_prefix) {
        Some(prefix) if prefix != "/" => text.replace(&prefix, ""),
        _ => text.to_owned(),
    }
}

/// The absolute folder of a `python:FILE` or `node:FILE` solution, from its label; `None`
/// for a command (`cmd:`) or the built-in implementation.
pub(crate) fn solution_dir(label: &str) -> Option<std::path::PathBuf> {
    if label.starts_with("cmd:") {
        return None;
    }
    let (_, file) = label.split_once(':')?;
    let file = std::path::Path::new(file);
    let file = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(file)
    };
    file.parent().map(std::path::Path::to_path_buf)
}

/// A score or a number of points as people write it: `3` or `2.5`.
pub(crate) fn number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// The errors the implementation's own code raised, each with its frames in the solution's
/// files, innermost first: `path:line in function` and the line of source.
pub(crate) fn tracebacks(
    captured: &Captured,
    base: Option<&std::path::Path>,
    palette: &Palette,
) -> String {
    let mut out = String::new();
    for traceback in &captured.tracebacks {
        let _ = writeln!(
            out,
            "{} {}",
            paint(palette.fail, "raised"),
            paint(palette.bold, &sanitize::line(&traceback.error))
        );
        for frame in &traceback.frames {
            let function = frame
                .function
                .as_deref()
                .map(|f| format!(" in {}", sanitize::line(f)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} {}:{}{function}",
                paint(palette.hunk, "at"),
                sanitize::line(&shown_file(&frame.file, base)),
                frame.line
            );
            if let Some(source) = &frame.source {
                let _ = writeln!(out, "    {}", sanitize::line(source));
            }
        }
    }
    if captured.tracebacks_cut > 0 {
        let _ = writeln!(
            out,
            "({} more errors raised, not shown)",
            captured.tracebacks_cut
        );
    }
    out
}

/// One captured stream under a heading, with how much was cut; empty when it is empty.
pub(crate) fn stream(name: &str, stream: &Stream, palette: &Palette) -> String {
    if stream.is_empty() {
        return String::new();
    }
    let mut out = format!("captured {name}");
    if stream.cut_bytes > 0 {
        let _ = write!(
            out,
            " (the first {} bytes; {} more cut)",
            stream.text.len(),
            stream.cut_bytes
        );
    }
    let mut out = format!(
        "{}
",
        paint(palette.dim, &format!("{out}:"))
    );
    for line in stream.text.lines() {
        let _ = writeln!(out, "  {}", sanitize::text(line));
    }
    out
}

/// Tracebacks, then captured stdout and stderr.
pub(crate) fn captured(captured: &Captured, palette: &Palette) -> String {
    let mut out = tracebacks(captured, None, palette);
    out.push_str(&stream("stdout", &captured.stdout, palette));
    out.push_str(&stream("stderr", &captured.stderr, palette));
    out
}

/// Everything a student reads about one spec, without color: what happened (the diff, the
/// error) and what their code printed and raised, paths under `base` (the solution's folder)
/// said relative to it. For autograder results; sanitized here, once.
pub(crate) fn feedback(
    report: &crate::run::events::SpecReport,
    base: Option<&std::path::Path>,
) -> String {
    let plain = Palette::plain();
    let mut out = relative_to(&explained(report), base);
    if let Some(captured) = &report.output {
        out.push_str(&tracebacks(captured, base, &plain));
        out.push_str(&stream("stdout", &captured.stdout, &plain));
        out.push_str(&stream("stderr", &captured.stderr, &plain));
    }
    out
}

/// The text of a stream with a last line saying how much was cut, for JUnit and TAP.
pub(crate) fn stream_text(stream: &Stream) -> String {
    let mut out = sanitize::text(&stream.text).into_owned();
    if stream.cut_bytes > 0 {
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "[dlqspec: {} more bytes cut]", stream.cut_bytes);
    }
    out
}

/// Where an expected failure is listed and why, and the first line of what happened.
pub(crate) fn expected_failure(path: &str, known: &ExpectedFailure) -> String {
    let mut out = format!(
        "known failure, listed at {}",
        sanitize::line(&known.listed_at)
    );
    if let Some(reason) = &known.reason {
        let _ = write!(out, ": {}", sanitize::text(reason));
    }
    out.push('\n');
    let happened = details(path, &known.failure);
    if let Some(first) = happened.lines().next() {
        let _ = writeln!(out, "{first}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_told_relative_to_the_solutions_folder_but_never_to_the_root() {
        let text = "raised at /home/class/alice/solution.py:5 (see /tmp/x)";
        let alice = std::path::Path::new("/home/class/alice");
        assert_eq!(
            relative_to(text, Some(alice)),
            "raised at solution.py:5 (see /tmp/x)"
        );
        assert_eq!(relative_to(text, Some(std::path::Path::new("/"))), text);
        assert_eq!(relative_to(text, None), text);
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(0.0), "0");
    }
    use crate::text::source::SourceFile;

    fn whole(line: &str) -> Excerpt {
        Excerpt {
            text: line.to_owned(),
            skipped: 0,
            cut: false,
        }
    }

    #[test]
    fn the_caret_sits_under_the_column_and_keeps_tabs() {
        assert_eq!(
            caret(
                &whole("  - {id: b}"),
                Position::new(12, 5),
                &Palette::plain()
            ),
            "12 |   - {id: b}\n   |     ^\n"
        );
        assert_eq!(
            caret(&whole("\tx: 1"), Position::new(3, 3), &Palette::plain()),
            "3 | \tx: 1\n  | \t ^\n"
        );
    }

    #[test]
    fn control_characters_are_escaped_and_the_caret_counts_their_width() {
        assert_eq!(
            caret(
                &whole("a\x1b[2Jb: x"),
                Position::new(1, 7),
                &Palette::plain()
            ),
            "1 | a\\x1b[2Jb: x\n  |          ^\n"
        );
    }

    #[test]
    fn a_cut_line_is_marked_where_it_goes_on() {
        let file = SourceFile::from_text(
            "s.yaml",
            format!("k: {}!{}\n", "a".repeat(300), "b".repeat(300)),
        );
        let excerpt = file.excerpt(Position::new(1, 304)).unwrap();
        let shown = caret(&excerpt, Position::new(1, 304), &Palette::plain());
        let (first, second) = shown.split_once('\n').unwrap();
        assert!(
            first.starts_with("1 | ...a") && first.ends_with("b..."),
            "{first}"
        );
        assert_eq!(second.find('^'), first.find('!'), "{shown}");
    }

    #[test]
    fn a_diff_marks_expected_and_actual_lines() {
        let out = diff("a: 1\nb: 2\n", "a: 1\nb: 3\n", &Palette::plain());
        assert_eq!(
            out,
            "--- expected\n+++ actual\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n"
        );
    }

    #[test]
    fn a_spec_error_shows_the_line_and_a_caret_under_the_column() {
        let file = SourceFile::from_text("s.yaml", "name: x\nsteps: 5\n");
        let error = SpecError::invalid(&file, Position::new(2, 8), "expected a list");
        assert_eq!(
            spec_error(&error, &Palette::plain()),
            "error: expected a list\n --> s.yaml:2:8\n  |\n2 | steps: 5\n  |        ^\n"
        );
    }

    #[test]
    fn every_error_of_a_file_is_shown_under_a_count() {
        let file = SourceFile::from_text("s.yaml", "name: x\nsteps: 5\n");
        let error = SpecError::combine([
            SpecError::invalid(&file, Position::new(2, 8), "expected a list"),
            SpecError::invalid(&file, Position::new(1, 7), "bad name"),
        ])
        .unwrap();
        assert_eq!(
            spec_error(&error, &Palette::plain()),
            "2 errors in s.yaml\nerror: bad name\n --> s.yaml:1:7\n  |\n1 | name: x\n  |       ^\n\nerror: expected a list\n --> s.yaml:2:8\n  |\n2 | steps: 5\n  |        ^\n"
        );
    }
}
