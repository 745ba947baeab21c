//! The TAP 13 reporter: a plan line, `ok`/`not ok` per spec, a YAML block for each failure.

use std::io::Write;

use super::render;
use super::sanitize;
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport, Summary};

pub(crate) struct TapReporter<W: Write> {
    out: W,
    number: usize,
}

impl<W: Write> TapReporter<W> {
    pub(crate) fn new(out: W) -> Self {
        TapReporter { out, number: 0 }
    }

    #[cfg(test)]
    pub(crate) fn into_inner(self) -> W {
        self.out
    }

    fn finished(&mut self, report: &SpecReport) -> std::io::Result<()> {
        self.number += 1;
        let mut description = report.path.clone();
        if let Some(name) = &report.name {
            description.push_str(": ");
            description.push_str(name);
        }
        let description = escape(&description);
        let n = self.number;
        let outcome = &report.outcome;
        match outcome {
            Outcome::Passed => writeln!(self.out, "ok {n} - {description}"),
            // Not the implementation's failure: it fails no run, as TODO does not.
            Outcome::Divergence(divergence) => {
                writeln!(
                    self.out,
                    "not ok {n} - {description} # TODO diverges on the broker: {}",
                    escape(&divergence.ids())
                )?;
                self.out.write_all(diagnostics(report).as_bytes())
            }
            Outcome::WorldFault(reason) => {
                writeln!(self.out, "ok {n} - {description} # SKIP {}", escape(reason))
            }
            Outcome::Skipped(reason) => {
                writeln!(self.out, "ok {n} - {description} # SKIP {}", escape(reason))
            }
            Outcome::NotAttempted(why) => writeln!(
                self.out,
                "ok {n} - {description} # SKIP not attempted: {}",
                escape(why)
            ),
            // TAP's TODO directive is an expected failure: it does not fail the run.
            Outcome::ExpectedFailure(known) => {
                let reason = known.reason.as_deref().unwrap_or("known failure");
                writeln!(
                    self.out,
                    "not ok {n} - {description} # TODO {}",
                    escape(reason)
                )?;
                self.out.write_all(diagnostics(report).as_bytes())
            }
            Outcome::Mismatch(_)
            | Outcome::Errored(_)
            | Outcome::SpecError(_)
            | Outcome::Stale(_) => {
                writeln!(self.out, "not ok {n} - {description}")?;
                self.out.write_all(diagnostics(report).as_bytes())
            }
        }
    }

    fn done(&mut self, summary: &Summary) -> std::io::Result<()> {
        writeln!(
            self.out,
            "# {} passed, {} failed, {} skipped",
            summary.passed,
            summary.failed(),
            summary.skipped
        )?;
        self.out.flush()
    }
}

/// TAP descriptions are one line, and `#` would start a directive; control characters show
/// escaped.
fn escape(text: &str) -> String {
    sanitize::line(&text.replace(['\n', '\r'], " "))
        .replace('\\', "\\\\")
        .replace('#', "\\#")
}

/// The YAML block under a `not ok` line, indented by two spaces as TAP 13 asks.
fn diagnostics(report: &SpecReport) -> String {
    // The outcome's name is the one the JSON report uses.
    let outcome = serde_json::to_string(&report.outcome.kind()).unwrap_or_default();
    let mut fields: Vec<(&str, String)> = vec![("outcome", outcome)];
    match &report.outcome {
        Outcome::Mismatch(m) => {
            fields.push((
                "at",
                quoted(&format!(
                    "{}:{}:{}",
                    report.path, m.position.line, m.position.column
                )),
            ));
            fields.push(("step", quoted(&m.step)));
            if let Some(note) = &m.note {
                fields.push(("note", block(note)));
            }
            fields.push(("expected", block(&m.expected)));
            fields.push(("actual", block(&m.actual)));
        }
        Outcome::SpecError(e) => {
            fields.push((
                "at",
                quoted(&format!(
                    "{}:{}:{}",
                    e.path, e.position.line, e.position.column
                )),
            ));
            fields.push(("message", block(&e.message)));
            if !e.more.is_empty() {
                // The file's other errors, one `PATH:LINE:COL: message` line each.
                let more: Vec<String> = e.more.iter().map(ToString::to_string).collect();
                fields.push(("more", block(&more.join("\n"))));
            }
            if let Some(why) = e.untold {
                fields.push(("untold", quoted(why.says())));
            }
        }
        Outcome::Errored(e) => fields.push(("message", block(&e.message))),
        Outcome::ExpectedFailure(known) => fields.push(("listed_at", quoted(&known.listed_at))),
        Outcome::Stale(message) => fields.push(("message", block(message))),
        Outcome::Divergence(divergence) => {
            fields.push(("world", quoted(&divergence.world)));
            let ids: Vec<String> = divergence.properties.iter().map(|p| quoted(p.id)).collect();
            fields.push(("broker_properties", format!("[{}]", ids.join(", "))));
        }
        Outcome::Passed
        | Outcome::Skipped(_)
        | Outcome::NotAttempted(_)
        | Outcome::WorldFault(_) => {}
    }
    if !report.rules.is_empty() {
        let rules: Vec<String> = report.rules.iter().map(|r| quoted(r)).collect();
        fields.push(("rules", format!("[{}]", rules.join(", "))));
    }
    fields.push((
        "details",
        block(&render::details(&report.path, &report.outcome)),
    ));
    if let Some(captured) = &report.output {
        let tracebacks = render::tracebacks(captured, None, &super::Palette::plain());
        if !tracebacks.is_empty() {
            fields.push(("traceback", block(&tracebacks)));
        }
        for (key, stream) in [("stdout", &captured.stdout), ("stderr", &captured.stderr)] {
            if !stream.is_empty() {
                fields.push((key, block(&render::stream_text(stream))));
            }
        }
    }
    let mut out = String::from("  ---\n");
    for (key, value) in fields {
        out.push_str(&format!("  {key}: {value}\n"));
    }
    out.push_str("  ...\n");
    out
}

/// A YAML double-quoted scalar: JSON's string syntax is valid YAML, once the characters YAML
/// does not allow raw (DEL, C1 controls...) are escaped too.
fn quoted(text: &str) -> String {
    let json = serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into());
    sanitize::json(&json).into_owned()
}

/// A literal block scalar for multi-line text, a quoted scalar for one line or for text a
/// literal block cannot carry as it is: characters YAML does not allow raw or that break a
/// line, or a line a CI log would read as a workflow command.
fn block(text: &str) -> String {
    let text = text.trim_end_matches('\n');
    let literal_safe = text
        .lines()
        .all(|line| sanitize::text(line) == line && sanitize::workflow_safe(line) == line);
    if !text.contains('\n') || !literal_safe {
        return quoted(text);
    }
    // An explicit indentation indicator keeps a first line that starts with spaces intact.
    let mut out = String::from("|2-");
    for line in text.lines() {
        out.push_str("\n    ");
        out.push_str(line);
    }
    out
}

impl<W: Write> Reporter for TapReporter<W> {
    fn event(&mut self, event: &Event) {
        // A closed stdout (e.g. piped into `head`) must not turn into a panic.
        let _ = match event {
            Event::Started { total, .. } => writeln!(self.out, "TAP version 13\n1..{total}"),
            Event::Finished(report) => self.finished(report),
            Event::Done(summary) => self.done(summary),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::implementation::ImplInfo;
    use crate::model::outcome::Mismatch;
    use crate::text::source::Position;
    use std::time::Duration;

    fn spec(path: &str, outcome: Outcome) -> SpecReport {
        SpecReport {
            path: path.into(),
            name: Some("name # with hash".into()),
            contract: Some("dlq-consumer"),
            rules: vec!["dlq-consumer/poison".into()],
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
    fn a_run_is_a_plan_then_one_line_per_spec_with_yaml_for_failures() {
        let info = ImplInfo {
            label: "builtin".into(),
            language: "rust".into(),
            is_reference: true,
        };
        let mut reporter = TapReporter::new(Vec::new());
        let passed = spec("a.yaml", Outcome::Passed);
        let failed = spec(
            "b.yaml",
            Outcome::Mismatch(Mismatch {
                step: "step 3 (process)".into(),
                position: Position::new(12, 14),
                expected: "  ok\n".into(),
                actual: "retry\n".into(),
                note: None,
                step_as_written: None,
                rule: None,
            }),
        );
        let skipped = spec("c.yaml", Outcome::Skipped("not run: --fail-fast".into()));
        reporter.event(&Event::Started {
            total: 3,
            filtered_out: 0,
            implementation: &info,
            skipped: &[],
            world: &[],
        });
        for report in [&passed, &failed, &skipped] {
            reporter.event(&Event::Finished(report));
        }
        reporter.event(&Event::Done(&Summary {
            passed: 1,
            mismatched: 1,
            skipped: 1,
            ..Summary::default()
        }));
        let text = String::from_utf8(reporter.into_inner()).unwrap();
        let expected = "\
TAP version 13
1..3
ok 1 - a.yaml: name \\# with hash
not ok 2 - b.yaml: name \\# with hash
  ---
  outcome: \"mismatch\"
  at: \"b.yaml:12:14\"
  step: \"step 3 (process)\"
  expected: \"  ok\"
  actual: \"retry\"
  rules: [\"dlq-consumer/poison\"]
  details: |2-
    first difference at step 3 (process) (b.yaml:12:14)
    --- expected
    +++ actual
    @@ -1,1 +1,1 @@
    -  ok
    +retry
  ...
ok 3 - c.yaml: name \\# with hash # SKIP not run: --fail-fast
# 1 passed, 1 failed, 1 skipped
";
        assert_eq!(text, expected);
    }

    #[test]
    fn multi_line_values_are_literal_blocks() {
        assert_eq!(block("one"), "\"one\"");
        assert_eq!(block("  a\nb\n"), "|2-\n      a\n    b");
    }

    #[test]
    fn hostile_text_still_makes_a_yaml_block_that_parses() {
        let texts = [
            "a\rb\nc",
            "esc \u{1b}[2J\nnext",
            "del \u{7f} c1 \u{85}\u{9b}\nx",
            "::error::injected\nsecond",
            "x\n  ::add-mask::s",
            "tab\tin\n\tand ##[error] there",
            "line sep \u{2028} bom \u{feff}\nend",
            "---\n...\n- item\n",
        ];
        for text in texts {
            let report = spec(
                "a.yaml",
                Outcome::Errored(crate::model::implementation::ImplError::new(
                    crate::model::implementation::ImplErrorKind::Exited,
                    text,
                )),
            );
            let block = diagnostics(&report);
            let yaml: String = block
                .lines()
                .filter(|l| *l != "  ---" && *l != "  ...")
                .map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l)))
                .collect();
            let parsed: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap_or_else(|e| {
                panic!("{text:?} gave a block that does not parse: {e}\n{yaml}")
            });
            assert_eq!(parsed["message"], text.trim_end_matches('\n'), "{yaml}");
            for line in block.lines() {
                assert_eq!(
                    sanitize::text(line),
                    line,
                    "raw control character in {block}"
                );
                assert!(!line.trim_start().starts_with("::"), "{block}");
                assert!(!line.contains("##["), "{block}");
            }
        }
    }
}
