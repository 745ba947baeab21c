//! Spec errors: a spec file that is broken, pointing at the place in the file that is wrong.

use crate::text::source::{Excerpt, Position, SourceFile};

/// What kind of problem makes a spec unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecErrorKind {
    /// The file could not be read.
    Unreadable,
    /// The YAML is malformed or does not have the shape of a spec.
    Syntax,
    /// The YAML has the right shape but says something impossible (duplicate ids, unknown rule...).
    Invalid,
    /// The scenario needs something the spec does not provide (e.g. more handler outcomes).
    Incomplete,
    /// The built-in reference implementation does not pass the spec: it contradicts the
    /// contract, so it cannot judge another implementation.
    Contradicted,
}

/// A broken spec. Never blamed on an implementation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{}:{}: {message}", position.line, position.column)]
pub struct SpecError {
    pub kind: SpecErrorKind,
    pub path: String,
    pub position: Position,
    pub message: String,
    /// The offending line of the spec (around the column, when it is long), shown with a
    /// caret under `position.column`.
    pub source_line: Option<Excerpt>,
}

impl SpecError {
    pub fn at(
        file: &SourceFile,
        position: Position,
        kind: SpecErrorKind,
        message: impl Into<String>,
    ) -> Self {
        SpecError {
            kind,
            path: file.display_path(),
            position,
            message: message.into(),
            source_line: file.excerpt(position),
        }
    }

    pub fn invalid(file: &SourceFile, position: Position, message: impl Into<String>) -> Self {
        Self::at(file, position, SpecErrorKind::Invalid, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_path_line_column_message() {
        let file = SourceFile::from_text("specs/x.yaml", "a: 1\nb: 2\n");
        let error = SpecError::invalid(&file, Position::new(2, 4), "bad value");
        assert_eq!(error.to_string(), "specs/x.yaml:2:4: bad value");
        assert_eq!(error.source_line.map(|l| l.text).as_deref(), Some("b: 2"));
    }
}
