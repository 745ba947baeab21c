//! GitHub Actions workflow annotations: an `::error` line for each failed spec, pointing at
//! the spec file and the line of the expectation that failed (or the broken spot).

use std::io::Write;

use super::render;
use super::sanitize::{self, github_data, github_property};
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport};

pub(crate) struct GithubAnnotations<W: Write> {
    out: W,
}

impl<W: Write> GithubAnnotations<W> {
    pub(crate) fn new(out: W) -> Self {
        GithubAnnotations { out }
    }
}

/// The `::error ...::message` command for a failed spec; `None` for one that did not fail.
pub(crate) fn annotation(report: &SpecReport) -> Option<String> {
    let name = report.name.as_deref().unwrap_or(&report.path);
    let kind = match &report.outcome {
        Outcome::Passed
        | Outcome::Skipped(_)
        | Outcome::NotAttempted(_)
        | Outcome::ExpectedFailure(_)
        | Outcome::Divergence(_)
        | Outcome::WorldFault(_) => return None,
        Outcome::Stale(_) => "stale known failure",
        Outcome::Mismatch(_) => "mismatch",
        Outcome::SpecError(_) => "spec error",
        Outcome::Errored(_) => "implementation error",
    };
    let title = format!("{kind}: {}", sanitize::line(name));
    let command = |position: Option<crate::text::source::Position>, message: &str| {
        let mut properties = format!("file={}", github_property(&sanitize::line(&report.path)));
        if let Some(position) = position {
            properties.push_str(&format!(",line={},col={}", position.line, position.column));
        }
        properties.push_str(&format!(",title={}", github_property(&title)));
        // Newlines survive as newlines in the annotation; other control characters show escaped.
        format!(
            "::error {properties}::{}",
            github_data(&sanitize::text(message.trim_end_matches('\n')))
        )
    };
    // The annotation already shows the spot; a spec error needs only its message there, and
    // each error of the file is an annotation at its own line.
    Some(match &report.outcome {
        Outcome::SpecError(e) => e
            .all()
            .map(|one| command(Some(one.position), &one.message))
            .collect::<Vec<_>>()
            .join("\n"),
        outcome => command(
            render::failing_position(outcome),
            &render::details(&report.path, outcome),
        ),
    })
}

impl<W: Write> Reporter for GithubAnnotations<W> {
    fn event(&mut self, event: &Event) {
        if let Event::Finished(report) = event
            && let Some(line) = annotation(report)
        {
            let _ = writeln!(self.out, "{line}").and_then(|()| self.out.flush());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::implementation::{ImplError, ImplErrorKind};
    use crate::model::outcome::Mismatch;
    use crate::text::source::Position;
    use std::time::Duration;

    fn spec(outcome: Outcome) -> SpecReport {
        SpecReport {
            path: "specs/a,b.yaml".into(),
            name: Some("100% done: really".into()),
            contract: Some("dlq-consumer"),
            rules: vec![],
            outcome,
            duration: Duration::ZERO,
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        }
    }

    #[test]
    fn a_mismatch_points_at_the_expectation_with_escaped_text() {
        let report = spec(Outcome::Mismatch(Mismatch {
            step: "step 2 (process)".into(),
            position: Position::new(14, 7),
            expected: "ok\n".into(),
            actual: "retry\n".into(),
            note: None,
            step_as_written: None,
            rule: None,
        }));
        assert_eq!(
            annotation(&report).unwrap(),
            "::error file=specs/a%2Cb.yaml,line=14,col=7,title=mismatch%3A 100%25 done%3A really::\
             first difference at step 2 (process) (specs/a,b.yaml:14:7)%0A--- expected%0A\
             +++ actual%0A@@ -1,1 +1,1 @@%0A-ok%0A+retry"
        );
    }

    #[test]
    fn implementation_errors_name_the_file_only_and_passes_say_nothing() {
        let report = spec(Outcome::Errored(ImplError::new(
            ImplErrorKind::Exited,
            "exited with 1",
        )));
        assert_eq!(
            annotation(&report).unwrap(),
            "::error file=specs/a%2Cb.yaml,title=implementation error%3A 100%25 done%3A really::\
             implementation error (exited): exited with 1"
        );
        assert_eq!(annotation(&spec(Outcome::Passed)), None);
        let file = crate::text::source::SourceFile::from_text("specs/a,b.yaml", "a: 1\nb: 2\n");
        let broken =
            crate::text::spec_error::SpecError::invalid(&file, Position::new(2, 4), "bad\nvalue");
        assert_eq!(
            annotation(&spec(Outcome::SpecError(broken))).unwrap(),
            "::error file=specs/a%2Cb.yaml,line=2,col=4,title=spec error%3A 100%25 done%3A really::bad%0Avalue"
        );
        assert_eq!(annotation(&spec(Outcome::Skipped("x".into()))), None);
    }
}
