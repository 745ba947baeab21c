//! The human reporter: one line per spec, details for failures, a closing count.

use std::io::Write;

use super::render;
use super::sanitize;
use super::style::{Palette, paint};
use crate::outcome::Outcome;
use crate::runner::{Event, Reporter, SpecReport, Summary};

pub struct HumanReporter<W: Write> {
    out: W,
    palette: Palette,
    /// Print passing, skipped and known-failing specs too, not only those that failed.
    pub show_passes: bool,
    /// Show what the implementation printed and raised under passing specs too, not only
    /// under failing ones (`--show-output`).
    pub show_output: bool,
    /// Consecutive skipped specs with one reason, told together when the run moves on.
    skipped: Vec<(String, Option<String>)>,
    skip_reason: String,
}

impl<W: Write> HumanReporter<W> {
    pub fn new(out: W, palette: Palette) -> Self {
        HumanReporter {
            out,
            palette,
            show_passes: true,
            show_output: false,
            skipped: Vec::new(),
            skip_reason: String::new(),
        }
    }

    /// Skips come in runs (every spec of a contract the implementation lacks): one line for a
    /// lone skip, one line for a run of them with its reason once, not a page.
    fn flush_skips(&mut self) -> std::io::Result<()> {
        let p = self.palette;
        let skipped = std::mem::take(&mut self.skipped);
        let tag = paint(p.skip, "SKIP ");
        match skipped.as_slice() {
            [] => return Ok(()),
            [(path, name)] => {
                let name = name
                    .as_deref()
                    .map(|n| format!("  {}", paint(p.dim, n)))
                    .unwrap_or_default();
                writeln!(self.out, "{tag} {path}{name}")?;
            }
            [(first, _), .., (last, _)] => {
                writeln!(self.out, "{tag} {} specs, {first} to {last}", skipped.len())?
            }
        }
        for line in self.skip_reason.lines() {
            writeln!(self.out, "      {line}")?;
        }
        Ok(())
    }

    fn finished(&mut self, report: &SpecReport) -> std::io::Result<()> {
        if let Outcome::Skipped(reason) = &report.outcome {
            if !self.show_passes {
                return Ok(());
            }
            if !self.skipped.is_empty() && *reason != self.skip_reason {
                self.flush_skips()?;
            }
            self.skip_reason.clone_from(reason);
            self.skipped
                .push((report.path.clone(), report.name.clone()));
            return Ok(());
        }
        self.flush_skips()?;
        let p = self.palette;
        let (tag, style) = match &report.outcome {
            Outcome::Passed => ("PASS ", p.pass),
            Outcome::Mismatch(_) => ("FAIL ", p.fail),
            Outcome::Errored(_) => ("ERROR", p.fail),
            Outcome::SpecError(_) => ("SPEC ", p.spec),
            Outcome::Skipped(_) => ("SKIP ", p.skip),
            Outcome::ExpectedFailure(_) => ("XFAIL", p.skip),
            Outcome::Stale(_) => ("STALE", p.fail),
        };
        let attention = report.outcome.is_failure();
        if !attention && !self.show_passes {
            return Ok(());
        }
        let name = report
            .name
            .as_deref()
            .map(|n| format!("  {}", paint(p.dim, &sanitize::line(n))))
            .unwrap_or_default();
        let path = sanitize::line(&report.path);
        writeln!(self.out, "{} {path}{name}", paint(style, tag))?;
        let captured = report
            .output
            .as_ref()
            .filter(|_| attention || self.show_output)
            .map(|captured| render::captured(captured, &p))
            .unwrap_or_default();
        let details = match &report.outcome {
            Outcome::Passed => String::new(),
            Outcome::Mismatch(m) => {
                let mut text = render::mismatch(&report.path, m, &p);
                if !report.rules.is_empty() {
                    let rules = sanitize::line(&report.rules.join(", ")).into_owned();
                    text.insert_str(0, &format!("rules: {rules}\n"));
                }
                text
            }
            Outcome::Errored(e) => render::impl_error(e),
            Outcome::SpecError(e) => render::spec_error(e, &p),
            Outcome::Skipped(reason) => format!("{}\n", sanitize::text(reason)),
            Outcome::ExpectedFailure(known) => render::expected_failure(&report.path, known),
            Outcome::Stale(message) => format!("{}\n", sanitize::text(message)),
        };
        for line in details.lines().chain(captured.lines()) {
            writeln!(self.out, "      {line}")?;
        }
        Ok(())
    }

    fn done(&mut self, summary: &Summary) -> std::io::Result<()> {
        self.flush_skips()?;
        let p = self.palette;
        writeln!(self.out)?;
        if summary.failed() > 0 {
            let mut parts = Vec::new();
            for (count, what) in [
                (summary.mismatched, "mismatched"),
                (summary.errored, "errored"),
                (summary.spec_errors, "spec errors"),
                (summary.stale, "stale known failures"),
            ] {
                if count > 0 {
                    parts.push(format!("{count} {what}"));
                }
            }
            writeln!(self.out, "failed: {}", parts.join(", "))?;
        }
        if summary.expected_failures > 0 {
            writeln!(
                self.out,
                "{}",
                paint(
                    p.skip,
                    &format!("{} known failures, as expected", summary.expected_failures)
                )
            )?;
        }
        let passed = paint(p.pass, &format!("{} passed", summary.passed));
        let failed_text = format!("{} failed", summary.failed());
        let failed = if summary.failed() > 0 {
            paint(p.fail, &failed_text)
        } else {
            failed_text
        };
        let skipped = if summary.skipped > 0 {
            format!(
                ", {}",
                paint(p.skip, &format!("{} skipped", summary.skipped))
            )
        } else {
            String::new()
        };
        writeln!(self.out, "{passed}, {failed}{skipped}")?;
        self.out.flush()
    }
}

impl<W: Write> Reporter for HumanReporter<W> {
    fn event(&mut self, event: &Event) {
        // A closed stdout (e.g. piped into `head`) must not turn into a panic.
        let _ = match event {
            Event::Started { .. } => Ok(()),
            Event::Finished(report) => self.finished(report),
            Event::Done(summary) => self.done(summary),
        };
    }
}
