//! Rendering outcomes as text: diffs, spec-error snippets, one-line reasons. Shared by reporters.

use std::fmt::Write as _;

use similar::{ChangeTag, TextDiff};

use super::style::{Palette, paint};
use crate::implementation::ImplError;
use crate::outcome::{ExpectedFailure, Mismatch, Outcome};
use crate::source::Position;
use crate::spec_error::SpecError;

/// A unified diff of expected (`-`) against actual (`+`), colored per line.
pub fn diff(expected: &str, actual: &str, palette: &Palette) -> String {
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
                let line = change.value().trim_end_matches('\n');
                let _ = writeln!(out, "{}", paint(style, &format!("{sign}{line}")));
            }
        }
    }
    out
}

/// The error, its `path:line:col`, the offending line and a caret under the column.
pub fn spec_error(error: &SpecError, palette: &Palette) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}",
        paint(palette.spec, "error:"),
        paint(palette.bold, &error.message)
    );
    let line = error.position.line;
    let gutter = " ".repeat(line.to_string().len());
    let _ = writeln!(
        out,
        "{gutter}{} {}:{}:{}",
        paint(palette.hunk, "-->"),
        error.path,
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
pub fn caret(source_line: &str, position: Position, palette: &Palette) -> String {
    let mut out = String::new();
    let number = position.line.to_string();
    let gutter = " ".repeat(number.len());
    let bar = paint(palette.hunk, "|");
    let _ = writeln!(out, "{} {bar} {source_line}", paint(palette.hunk, &number));
    // Keep tabs as tabs so the caret lines up however the terminal expands them.
    let lead: String = source_line
        .chars()
        .take(position.column.saturating_sub(1))
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let _ = writeln!(out, "{gutter} {bar} {lead}{}", paint(palette.caret, "^"));
    out
}

/// Where a mismatch happened: `first difference at STEP (PATH:LINE:COL)`.
pub fn first_difference(path: &str, mismatch: &Mismatch, palette: &Palette) -> String {
    format!(
        "first difference at {} ({}:{}:{})",
        paint(palette.bold, &mismatch.step),
        path,
        mismatch.position.line,
        mismatch.position.column
    )
}

/// Where a mismatch happened, its note, and the diff.
pub fn mismatch(path: &str, mismatch: &Mismatch, palette: &Palette) -> String {
    let mut out = first_difference(path, mismatch, palette);
    out.push('\n');
    if let Some(note) = &mismatch.note {
        let _ = writeln!(out, "{note}");
    }
    out.push_str(&diff(&mismatch.expected, &mismatch.actual, palette));
    out
}

/// The spot in the spec a failure points at: the expectation that failed, or the broken spot.
pub fn failing_position(outcome: &Outcome) -> Option<Position> {
    match outcome {
        Outcome::Mismatch(m) => Some(m.position),
        Outcome::SpecError(e) => Some(e.position),
        _ => None,
    }
}

pub fn impl_error(error: &ImplError) -> String {
    let kind = serde_json::to_value(error.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    format!("implementation error ({kind}): {}\n", error.message)
}

/// The whole explanation of an outcome, without color: for JUnit bodies, TAP, JSON.
pub fn details(path: &str, outcome: &Outcome) -> String {
    let plain = Palette::plain();
    match outcome {
        Outcome::Passed => String::new(),
        Outcome::Mismatch(m) => mismatch(path, m, &plain),
        Outcome::Errored(e) => impl_error(e),
        Outcome::SpecError(e) => spec_error(e, &plain),
        Outcome::Skipped(reason) => format!("skipped: {reason}\n"),
        Outcome::ExpectedFailure(known) => {
            let mut out = expected_failure(path, known);
            out.push_str(&details(path, &known.failure));
            out
        }
        Outcome::Stale(message) => format!("{message}\n"),
    }
}

/// Where an expected failure is listed and why, and the first line of what happened.
pub fn expected_failure(path: &str, known: &ExpectedFailure) -> String {
    let mut out = format!("known failure, listed at {}", known.listed_at);
    if let Some(reason) = &known.reason {
        let _ = write!(out, ": {reason}");
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
    use crate::source::SourceFile;

    #[test]
    fn the_caret_sits_under_the_column_and_keeps_tabs() {
        assert_eq!(
            caret("  - {id: b}", Position::new(12, 5), &Palette::plain()),
            "12 |   - {id: b}\n   |     ^\n"
        );
        assert_eq!(
            caret("\tx: 1", Position::new(3, 3), &Palette::plain()),
            "3 | \tx: 1\n  | \t ^\n"
        );
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
}
