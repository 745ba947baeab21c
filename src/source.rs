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
    fn display_path_drops_a_leading_dot_slash() {
        assert_eq!(display_path(Path::new("./specs/a.yaml")), "specs/a.yaml");
    }
}
