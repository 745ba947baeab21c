//! Spec errors: a spec file that is broken, pointing at the place in the file that is wrong.

use crate::source::{Excerpt, Position, SourceFile};

/// What kind of problem makes a spec unusable: a format of the run record.
pub use dlqspec_formats::record::SpecErrorKind;

/// A broken spec. Never blamed on an implementation.
///
/// One file may hold several independent mistakes: the first (in source order) is this error,
/// the others are in `more`, so that an author fixes them all from one run. Shown as text,
/// each is a `path:line:col: message` line of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{}:{}: {message}{}", position.line, position.column, more_lines(more))]
pub struct SpecError {
    pub kind: SpecErrorKind,
    pub path: String,
    pub position: Position,
    pub message: String,
    /// The offending line of the spec (around the column, when it is long), shown with a
    /// caret under `position.column`.
    /// Boxed: a spec error travels in every `Result` of loading, so it is kept small.
    pub source_line: Option<Box<Excerpt>>,
    /// The file's other errors, after this one in source order; each has an empty `more`.
    pub more: Vec<SpecError>,
    /// Why errors after these may be left untold (a YAML syntax error, which nothing is read
    /// past; an anchor that cannot be skipped; a file too big to read again), saying to fix
    /// them and run again. `None` when every error of the file is told.
    pub untold: Option<Untold>,
}

/// Why errors of a file after the ones told may be untold. A byte, not its words, so that a
/// spec error, which travels in every `Result` of loading, stays small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untold {
    /// A YAML syntax error: the parser reads nothing past it.
    Syntax,
    /// The part in error holds an anchor that blanking it would break.
    Anchor,
    /// Reading the file again for its later errors took its budget of bytes re-read.
    Work,
    /// [`MAX_ERRORS`] are told already.
    Many,
}

impl Untold {
    /// Why, in an author's words, and what to do.
    pub fn says(self) -> &'static str {
        match self {
            Untold::Syntax => "further errors may follow; fix this one and run again",
            Untold::Anchor => {
                "further errors may follow: the part in error defines an anchor (`&name`) that an alias uses, so it is not skipped; fix it and run again"
            }
            Untold::Work => {
                "further errors may follow: reading the file again for them stopped after 32 MiB re-read; fix these and run again"
            }
            Untold::Many => {
                "further errors may follow: at most 20 errors of a file are told; fix these and run again"
            }
        }
    }
}

/// The most errors told of one file: past them, the file is better fixed from the top.
pub(crate) const MAX_ERRORS: usize = 20;

/// The other errors as lines after the first.
fn more_lines(more: &[SpecError]) -> String {
    more.iter().map(|error| format!("\n{error}")).collect()
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
            source_line: file.excerpt(position).map(Box::new),
            more: Vec::new(),
            untold: None,
        }
    }

    pub fn invalid(file: &SourceFile, position: Position, message: impl Into<String>) -> Self {
        Self::at(file, position, SpecErrorKind::Invalid, message)
    }

    /// How many errors this is: itself and the ones in `more`.
    pub fn count(&self) -> usize {
        1 + self.more.len()
    }

    /// This error and the others of its file, in source order.
    pub fn all(&self) -> impl Iterator<Item = &SpecError> {
        std::iter::once(self).chain(&self.more)
    }

    /// `self` alone, without the others of its file.
    pub fn alone(&self) -> SpecError {
        SpecError {
            more: Vec::new(),
            untold: None,
            ..self.clone()
        }
    }

    /// Several errors of one file as one: the first in source order, the others in `more`
    /// (at most [`MAX_ERRORS`] in all). `None` when there are none.
    pub fn combine(errors: impl IntoIterator<Item = SpecError>) -> Option<SpecError> {
        let mut untold = None;
        let mut all: Vec<SpecError> = errors
            .into_iter()
            .flat_map(|mut error| {
                let more = std::mem::take(&mut error.more);
                untold = untold.take().or(error.untold.take());
                std::iter::once(error).chain(more)
            })
            .collect();
        // Stable: errors at one place keep the order they were found in.
        all.sort_by_key(|error| (error.position.line, error.position.column));
        all.dedup_by(|a, b| a.position == b.position && a.message == b.message);
        if all.len() > MAX_ERRORS {
            all.truncate(MAX_ERRORS);
            untold = untold.or(Some(Untold::Many));
        }
        let mut all = all.into_iter();
        let mut first = all.next()?;
        first.more = all.collect();
        first.untold = untold;
        Some(first)
    }
}

/// The errors of one file gathered as they are found, so that one run tells them all.
#[derive(Debug, Default)]
pub struct SpecErrors {
    errors: Vec<SpecError>,
}

impl SpecErrors {
    pub fn push(&mut self, error: SpecError) {
        self.errors.push(error);
    }

    /// The value of `result`, or `None` with its error kept.
    pub fn keep<T>(&mut self, result: Result<T, SpecError>) -> Option<T> {
        result.map_err(|error| self.push(error)).ok()
    }

    /// The errors so far as one, for a check that cannot go on past them.
    pub fn stop(self, error: SpecError) -> SpecError {
        let mut errors = self.errors;
        errors.push(error.clone());
        SpecError::combine(errors).unwrap_or(error)
    }

    /// Nothing when no error was found, else every error found, as one.
    pub fn check(self) -> Result<(), SpecError> {
        SpecError::combine(self.errors).map_or(Ok(()), Err)
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

    #[test]
    fn errors_of_one_file_combine_in_source_order_one_line_each() {
        let file = SourceFile::from_text("specs/x.yaml", "a: 1\nb: 2\nc: 3\n");
        let combined = SpecError::combine([
            SpecError::invalid(&file, Position::new(3, 4), "third"),
            SpecError::invalid(&file, Position::new(1, 4), "first"),
            SpecError::invalid(&file, Position::new(2, 4), "second"),
        ])
        .unwrap();
        assert_eq!(combined.count(), 3);
        assert_eq!(
            combined.to_string(),
            "specs/x.yaml:1:4: first\nspecs/x.yaml:2:4: second\nspecs/x.yaml:3:4: third"
        );
        assert_eq!(combined.alone().to_string(), "specs/x.yaml:1:4: first");
        assert!(SpecError::combine([]).is_none());
    }

    #[test]
    fn errors_past_the_most_told_say_further_errors_may_follow() {
        let file = SourceFile::from_text("specs/x.yaml", "a: 1\n".repeat(30));
        let errors =
            |n: usize| (1..=n).map(|line| SpecError::invalid(&file, Position::new(line, 1), "bad"));
        let all = SpecError::combine(errors(MAX_ERRORS)).unwrap();
        assert_eq!((all.count(), all.untold), (MAX_ERRORS, None));
        let cut = SpecError::combine(errors(MAX_ERRORS + 1)).unwrap();
        assert_eq!((cut.count(), cut.untold), (MAX_ERRORS, Some(Untold::Many)));
    }
}
