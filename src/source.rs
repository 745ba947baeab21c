//! Spec source files: their text, the path shown to the user, and positions within them.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// A 1-based line and column in a spec file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    pub const START: Position = Position { line: 1, column: 1 };

    pub fn new(line: usize, column: usize) -> Self {
        Position { line, column }
    }
}

/// A spec file as read from disk.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

impl SourceFile {
    pub fn read(path: &Path) -> std::io::Result<Self> {
        Ok(SourceFile {
            path: path.to_path_buf(),
            text: std::fs::read_to_string(path)?,
        })
    }

    pub fn from_text(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        SourceFile {
            path: path.into(),
            text: text.into(),
        }
    }

    /// The path as the user gave it, with `/` separators so output is the same everywhere.
    pub fn display_path(&self) -> String {
        display_path(&self.path)
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line(&self, line: usize) -> Option<&str> {
        self.text
            .lines()
            .nth(line.checked_sub(1)?)
            .map(|l| l.trim_end_matches('\r'))
    }

    /// The part of `position`'s line an error message quotes: the whole line when it is short,
    /// else [`EXCERPT_CHARS`] characters around the column (a spec may hold a line of any
    /// length, and a message must not echo all of it).
    pub fn excerpt(&self, position: Position) -> Option<Excerpt> {
        let line = self.line(position.line)?;
        let length = line.chars().count();
        if length <= EXCERPT_CHARS {
            return Some(Excerpt {
                text: line.to_owned(),
                skipped: 0,
                cut: false,
            });
        }
        let before = position.column.saturating_sub(1).min(length);
        let skipped = before
            .saturating_sub(EXCERPT_CHARS / 2)
            .min(length - EXCERPT_CHARS);
        Some(Excerpt {
            text: line.chars().skip(skipped).take(EXCERPT_CHARS).collect(),
            skipped,
            cut: skipped + EXCERPT_CHARS < length,
        })
    }
}

/// How many characters of a long line an error message quotes around the column.
pub const EXCERPT_CHARS: usize = 120;

/// A line of a spec, or the window of it around a column, as an error message quotes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The characters quoted, as written (renderers escape what a terminal must not see raw).
    pub text: String,
    /// How many characters of the line come before `text`.
    pub skipped: usize,
    /// Whether the line goes on after `text`.
    pub cut: bool,
}

pub fn display_path(path: &Path) -> String {
    let shown = path.to_string_lossy().replace('\\', "/");
    shown.strip_prefix("./").map(str::to_owned).unwrap_or(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_is_one_based_and_strips_carriage_returns() {
        let file = SourceFile::from_text("a.yaml", "first\r\nsecond\n");
        assert_eq!(file.line(1), Some("first"));
        assert_eq!(file.line(2), Some("second"));
        assert_eq!(file.line(0), None);
        assert_eq!(file.line(3), None);
    }

    #[test]
    fn a_long_line_is_quoted_around_the_column() {
        let line = format!("{}x{}", "a".repeat(500), "b".repeat(10_000));
        let file = SourceFile::from_text("a.yaml", format!("first\n{line}\n"));
        let excerpt = file.excerpt(Position::new(2, 501)).unwrap();
        assert_eq!(excerpt.text.chars().count(), EXCERPT_CHARS);
        assert_eq!(excerpt.skipped, 500 - EXCERPT_CHARS / 2);
        assert_eq!(excerpt.text.chars().nth(EXCERPT_CHARS / 2), Some('x'));
        assert!(excerpt.cut);
        let end = file.excerpt(Position::new(2, 10_501)).unwrap();
        assert_eq!(end.skipped, 10_501 - EXCERPT_CHARS);
        assert!(!end.cut);
        let short = file.excerpt(Position::new(1, 3)).unwrap();
        assert_eq!(
            (short.text.as_str(), short.skipped, short.cut),
            ("first", 0, false)
        );
    }

    #[test]
    fn display_path_drops_a_leading_dot_slash() {
        assert_eq!(display_path(Path::new("./specs/a.yaml")), "specs/a.yaml");
    }
}
