//! The JUnit XML reporter (quick-junit): one testcase per spec, written when the run is done.
//!
//! A testcase's classname is the spec's contract (its folder when it could not be loaded) and
//! its name the spec path, which is unique and what `dlqspec run` takes to rerun it. Failures
//! carry their cause as the message and the plain-text diff as their body, with `file` and
//! `line` attributes for CI tools.

use std::io::Write;

use indexmap::IndexMap;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::render;
use super::sanitize;
use super::style::Palette;
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport, Summary};
use crate::text::spec_error::SpecError;

pub(crate) struct JunitReporter<W: Write> {
    out: W,
    implementation: String,
    /// One suite per classname, in the order specs first use it.
    suites: IndexMap<String, TestSuite>,
}

impl<W: Write> JunitReporter<W> {
    pub(crate) fn new(out: W) -> Self {
        JunitReporter {
            out,
            implementation: String::new(),
            suites: IndexMap::new(),
        }
    }

    #[cfg(test)]
    pub(crate) fn into_inner(self) -> W {
        self.out
    }

    fn finished(&mut self, report: &SpecReport) {
        let classname = match report.contract {
            Some(contract) => contract.to_owned(),
            None => folder(&report.path),
        };
        // quick-junit drops control characters XML cannot carry; shown escaped, they stay visible.
        let path = sanitize::line(&report.path);
        let mut case = TestCase::new(path.as_ref(), status(report));
        case.set_classname(sanitize::line(&classname).as_ref());
        case.set_time(report.duration);
        case.extra.insert("file".into(), path.as_ref().into());
        if let Some(position) = render::failing_position(&report.outcome) {
            case.extra
                .insert("line".into(), position.line.to_string().into());
        }
        // What the implementation printed: stdout as it is; stderr after the tracebacks of the
        // errors its code raised.
        if let Some(captured) = &report.output {
            if !captured.stdout.is_empty() {
                case.set_system_out(render::stream_text(&captured.stdout));
            }
            let mut err = render::tracebacks(captured, None, &Palette::plain());
            err.push_str(&render::stream_text(&captured.stderr));
            if !err.is_empty() {
                case.set_system_err(err);
            }
        }
        if let Some(name) = &report.name {
            case.add_property(Property::new("name", sanitize::line(name).as_ref()));
        }
        if !report.rules.is_empty() {
            let rules = report.rules.join(", ");
            case.add_property(Property::new("rules", sanitize::line(&rules).as_ref()));
        }
        // A failure's cause, by which CI can group the failures of one mistake.
        if let Some(cause) = &report.cause {
            case.add_property(Property::new(
                "cause",
                sanitize::line(&cause.summary()).as_ref(),
            ));
            case.add_property(Property::new("cause_id", cause.id.as_str()));
            if let Some(rule) = cause.rule {
                case.add_property(Property::new("cause_rule", sanitize::line(rule).as_ref()));
            }
        }
        let implementation = self.implementation.as_str();
        let suite = self.suites.entry(classname).or_insert_with_key(|name| {
            let mut suite = TestSuite::new(sanitize::line(name).as_ref());
            suite.add_property(Property::new("implementation", implementation));
            suite
        });
        // Specs may run in parallel: a suite's time is the sum of its specs' times.
        let time = suite.time.unwrap_or_default() + report.duration;
        suite.set_time(time);
        suite.add_test_case(case);
    }

    fn done(&mut self, summary: &Summary) -> Result<(), quick_junit::SerializeError> {
        let mut report = Report::new("dlqspec");
        report.set_time(summary.duration);
        report.add_test_suites(self.suites.drain(..).map(|(_, suite)| suite));
        let mut xml = Vec::new();
        report.serialize(&mut xml)?;
        let xml = String::from_utf8_lossy(&xml);
        let _ = writeln!(self.out, "{}", sanitize::xml(&xml)).and_then(|()| self.out.flush());
        Ok(())
    }
}

/// The folder part of a spec path, `.` when there is none.
fn folder(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((folder, _)) if !folder.is_empty() => folder.to_owned(),
        _ => ".".to_owned(),
    }
}

fn status(report: &SpecReport) -> TestCaseStatus {
    let outcome = &report.outcome;
    let (mut status, kind, message) = match outcome {
        Outcome::Passed => return TestCaseStatus::success(),
        Outcome::Skipped(reason) => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(sanitize::text(reason).as_ref());
            return status;
        }
        Outcome::NotAttempted(why) => {
            let mut status = TestCaseStatus::skipped();
            status.set_type("not_attempted");
            status.set_message(sanitize::text(why).as_ref());
            return status;
        }
        // The message is the cause, what a CI page lists failures by; where it shows is
        // the body's first lines.
        Outcome::Mismatch(m) => (
            TestCaseStatus::non_success(NonSuccessKind::Failure),
            "mismatch",
            match &report.cause {
                Some(cause) => sanitize::line(&cause.this_failure()).into_owned(),
                None => render::first_difference(&report.path, m, &Palette::plain()),
            },
        ),
        Outcome::SpecError(e) => (
            TestCaseStatus::non_success(NonSuccessKind::Error),
            "spec_error",
            sanitize::text(&with_untold(e)).into_owned(),
        ),
        Outcome::Errored(e) => (
            TestCaseStatus::non_success(NonSuccessKind::Error),
            "implementation_error",
            sanitize::text(&e.message).into_owned(),
        ),
        // JUnit has no expected failure: it is skipped, with where it is listed.
        Outcome::ExpectedFailure(known) => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(render::expected_failure(&report.path, known).trim_end());
            return status;
        }
        Outcome::Stale(message) => (
            TestCaseStatus::non_success(NonSuccessKind::Failure),
            "stale_known_failure",
            sanitize::text(message).into_owned(),
        ),
        // JUnit has no divergence: it fails no build, so it is skipped, saying by what.
        Outcome::Divergence(divergence) => {
            let mut status = TestCaseStatus::skipped();
            status.set_type("divergence");
            status.set_message(format!(
                "diverges on {}: {}",
                sanitize::line(&divergence.world),
                divergence.ids()
            ));
            status.set_description(render::details(&report.path, outcome));
            return status;
        }
        Outcome::WorldFault(message) => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(sanitize::text(message).as_ref());
            return status;
        }
    };
    status.set_type(kind);
    status.set_message(message);
    status.set_description(render::explained(report));
    status
}

impl<W: Write> Reporter for JunitReporter<W> {
    fn event(&mut self, event: &Event) {
        match event {
            Event::Started { implementation, .. } => {
                self.implementation = sanitize::line(&implementation.label).into_owned();
            }
            Event::Finished(report) => self.finished(report),
            Event::Done(summary) => {
                // Serializing only fails on a writer error, e.g. a closed pipe: nothing to add.
                let _ = self.done(summary);
            }
        }
    }
}

/// A spec error's lines, then why errors after them may be untold, when they may be.
fn with_untold(error: &SpecError) -> String {
    match error.untold {
        Some(why) => format!("{error}\n{}: {}", error.path, why.says()),
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::implementation::ImplInfo;
    use crate::model::outcome::Mismatch;
    use crate::text::source::{Position, SourceFile};
    use crate::text::spec_error::SpecError;
    use std::time::Duration;

    fn spec(path: &str, contract: Option<&'static str>, outcome: Outcome) -> SpecReport {
        SpecReport {
            path: path.into(),
            name: contract.map(|_| "a <spec> & more".to_owned()),
            contract,
            rules: vec![],
            outcome,
            duration: Duration::from_millis(2),
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        }
    }

    fn xml(reports: &[SpecReport]) -> String {
        let info = ImplInfo {
            label: "builtin".into(),
            language: "rust".into(),
            is_reference: true,
        };
        let mut reporter = JunitReporter::new(Vec::new());
        reporter.event(&Event::Started {
            total: reports.len(),
            filtered_out: 0,
            implementation: &info,
            skipped: &[],
            world: &[],
        });
        for report in reports {
            reporter.event(&Event::Finished(report));
        }
        reporter.event(&Event::Done(&Summary::default()));
        String::from_utf8(reporter.into_inner()).unwrap()
    }

    #[test]
    fn outcomes_become_failures_errors_and_skips() {
        let file = SourceFile::from_text("specs/broken/b.yaml", "a: 1\n");
        let broken = SpecError::invalid(&file, Position::new(1, 4), "bad");
        let text = xml(&[
            spec("specs/d/ok.yaml", Some("dlq-consumer"), Outcome::Passed),
            spec(
                "specs/d/m.yaml",
                Some("dlq-consumer"),
                Outcome::Mismatch(Mismatch {
                    step: "step 1 (process)".into(),
                    position: Position::new(9, 5),
                    expected: "ok\n".into(),
                    actual: "retry\n".into(),
                    note: None,
                    step_as_written: None,
                    rule: None,
                }),
            ),
            spec("specs/broken/b.yaml", None, Outcome::SpecError(broken)),
            spec(
                "specs/d/s.yaml",
                Some("dlq-consumer"),
                Outcome::Skipped("why".into()),
            ),
        ]);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let cases: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases.len(), 4);
        let suites: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testsuite"))
            .map(|n| n.attribute("name").unwrap())
            .collect();
        assert_eq!(suites, ["dlq-consumer", "specs/broken"]);

        let mismatch = cases[1];
        assert_eq!(mismatch.attribute("name"), Some("specs/d/m.yaml"));
        assert_eq!(mismatch.attribute("classname"), Some("dlq-consumer"));
        assert_eq!(mismatch.attribute("file"), Some("specs/d/m.yaml"));
        assert_eq!(mismatch.attribute("line"), Some("9"));
        let failure = mismatch
            .children()
            .find(|n| n.has_tag_name("failure"))
            .unwrap();
        assert_eq!(failure.attribute("type"), Some("mismatch"));
        assert_eq!(
            failure.attribute("message"),
            Some("first difference at step 1 (process) (specs/d/m.yaml:9:5)")
        );
        assert!(
            failure.text().unwrap().contains("-ok\n+retry\n"),
            "{:?}",
            failure.text()
        );

        let spec_error = cases[3];
        assert_eq!(spec_error.attribute("classname"), Some("specs/broken"));
        let error = spec_error
            .children()
            .find(|n| n.has_tag_name("error"))
            .unwrap();
        assert_eq!(error.attribute("type"), Some("spec_error"));
        assert_eq!(
            error.attribute("message"),
            Some("specs/broken/b.yaml:1:4: bad")
        );

        let skipped = cases[2]
            .children()
            .find(|n| n.has_tag_name("skipped"))
            .unwrap();
        assert_eq!(skipped.attribute("message"), Some("why"));
    }

    #[test]
    fn a_failures_message_is_its_cause_in_its_specs_ids() {
        let mut failed = spec(
            "specs/d/m.yaml",
            Some("dlq-consumer"),
            Outcome::Mismatch(Mismatch {
                step: "step 1 (process)".into(),
                position: Position::new(9, 5),
                expected: "ok\n".into(),
                actual: "retry\n".into(),
                note: None,
                step_as_written: None,
                rule: None,
            }),
        );
        failed.cause = Some(crate::model::cause::Cause {
            id: "c000000000001".into(),
            rule: Some("dlq-consumer/poison"),
            line: "the reference puts X in the DLQ; yours acked X".into(),
            told: Some("the reference puts p in the DLQ; yours acked p".into()),
            mistake: None,
            at: None,
        });
        let text = xml(&[failed]);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let failure = doc
            .descendants()
            .find(|n| n.has_tag_name("failure"))
            .unwrap();
        assert_eq!(
            failure.attribute("message"),
            Some("dlq-consumer/poison: the reference puts p in the DLQ; yours acked p")
        );
        // Where it shows is in the body.
        let body = failure.text().unwrap();
        assert!(
            body.contains("first difference at step 1 (process) (specs/d/m.yaml:9:5)"),
            "{body}"
        );
    }

    #[test]
    fn a_path_without_a_folder_is_classed_as_dot() {
        assert_eq!(folder("a.yaml"), ".");
        assert_eq!(folder("/a.yaml"), ".");
        assert_eq!(folder("x/y/a.yaml"), "x/y");
    }
}
