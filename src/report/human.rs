//! The human reporter: one line per spec, details for failures, a closing count.

use std::io::Write;
use std::time::Duration;

use super::render;
use super::sanitize;
use super::style::{Palette, paint};
use crate::model::cause::Cause;
use crate::model::outcome::Outcome;
use crate::run::events::{Event, Reporter, SpecReport, Summary};

pub(crate) struct HumanReporter<W: Write> {
    out: W,
    palette: Palette,
    /// Print passing, skipped and known-failing specs too, not only those that failed.
    pub(crate) show_passes: bool,
    /// Show what the implementation printed and raised under passing specs too, not only
    /// under failing ones (`--show-output`).
    pub(crate) show_output: bool,
    /// Consecutive skipped specs with one reason, told together when the run moves on.
    skipped: Vec<(String, Option<String>)>,
    skip_reason: String,
    /// A spec that took longer than this is marked SLOW.
    pub(crate) slow: Option<Duration>,
    /// How many of the slowest specs to list after the run (0: none).
    pub(crate) durations: usize,
    /// Every spec that ran, with its time, for `durations`.
    times: Vec<(String, Duration)>,
    /// A spec that is not `visible` is told as `hidden spec N`, its verdict and rules only:
    /// the report is read by students, who may not see its expectations.
    pub(crate) conceal_hidden: bool,
    /// How many specs have been told as hidden.
    hidden_told: usize,
    /// The failures so far, grouped by cause, in the order each cause was first seen.
    causes: Vec<Group>,
    /// The divergences so far, counted by the broker property each names first.
    diverged_by: Vec<(&'static str, usize)>,
}

/// Failures that share one cause (`model::cause::Cause::id`): the same departure from the
/// reference, the same classic mistake, the same exception at the same line, the same error.
#[derive(Debug)]
struct Group {
    key: String,
    /// What the cause is, in one line, with the rule it breaks.
    told: String,
    /// The classic mistake it is, when the catalogue knows it.
    mistake: Option<&'static str>,
    count: usize,
    first: String,
    /// The implementation could not start: told once in full, the rest only counted.
    startup: bool,
}

/// How a failure's cause stands among those told so far.
enum Seen {
    /// The first failure of its cause: told in full.
    First,
    /// Its cause was told in full under the spec `first`.
    Again { first: String },
    /// The implementation could not start, told in full before: only counted.
    Startup,
}

impl<W: Write> HumanReporter<W> {
    pub(crate) fn new(out: W, palette: Palette) -> Self {
        HumanReporter {
            out,
            palette,
            show_passes: true,
            show_output: false,
            skipped: Vec::new(),
            skip_reason: String::new(),
            slow: None,
            durations: 0,
            times: Vec::new(),
            conceal_hidden: false,
            hidden_told: 0,
            causes: Vec::new(),
            diverged_by: Vec::new(),
        }
    }

    /// Counts `report`'s failure under its cause, and says whether the cause was told before.
    fn count_cause(&mut self, report: &SpecReport) -> Seen {
        let Some(cause) = &report.cause else {
            return Seen::First;
        };
        if let Some(known) = self.causes.iter_mut().find(|c| c.key == cause.id) {
            known.count += 1;
            return match known.startup {
                true => Seen::Startup,
                false => Seen::Again {
                    first: known.first.clone(),
                },
            };
        }
        let startup = matches!(
            &report.outcome,
            Outcome::Errored(e) if e.kind == crate::model::implementation::ImplErrorKind::Startup
        );
        self.causes.push(Group {
            key: cause.id.clone(),
            told: cause.summary(),
            mistake: cause.mistake,
            count: 1,
            first: report.path.clone(),
            startup,
        });
        Seen::First
    }

    /// After the run: how many specs an implementation that could not start kept from
    /// running, and, when more than one spec failed, the failures grouped by cause, most
    /// common first.
    fn tell_causes(&mut self) -> std::io::Result<()> {
        for cause in self.causes.iter().filter(|c| c.startup) {
            writeln!(
                self.out,
                "      {} not run: this error kept {} from starting",
                specs(cause.count),
                if cause.count == 1 { "it" } else { "them" }
            )?;
        }
        let failures: usize = self.causes.iter().map(|c| c.count).sum();
        let only_startup = self.causes.len() == 1 && self.causes[0].startup;
        if only_startup || failures < 2 {
            return Ok(());
        }
        let mut causes: Vec<&Group> = self.causes.iter().collect();
        // Most common first; a tie in the order the causes were first seen.
        causes.sort_by_key(|c| std::cmp::Reverse(c.count));
        writeln!(self.out)?;
        writeln!(self.out, "failures by cause:")?;
        let width = causes[0].count.to_string().len();
        for cause in causes {
            writeln!(
                self.out,
                "  {:>width$}  {}  (first: {})",
                cause.count,
                sanitize::line(&cause.told),
                sanitize::line(&cause.first)
            )?;
            if let Some(mistake) = cause.mistake {
                writeln!(
                    self.out,
                    "  {:width$}  a known mistake: {}",
                    "",
                    sanitize::line(mistake)
                )?;
            }
        }
        Ok(())
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
                    .map(|n| format!("  {}", paint(p.dim, &sanitize::line(n))))
                    .unwrap_or_default();
                writeln!(self.out, "{tag} {}{name}", sanitize::line(path))?;
            }
            [(first, _), .., (last, _)] => writeln!(
                self.out,
                "{tag} {} specs, {} to {}",
                skipped.len(),
                sanitize::line(first),
                sanitize::line(last)
            )?,
        }
        // The reason may be an implementation's own words (a protocol `skipped` reply).
        for line in sanitize::text(&self.skip_reason).lines() {
            writeln!(self.out, "      {line}")?;
        }
        Ok(())
    }

    fn finished(&mut self, report: &SpecReport) -> std::io::Result<()> {
        if self.conceal_hidden && !report.grading.visibility.shows_details() {
            return self.finished_hidden(report);
        }
        if self.durations > 0 && !matches!(report.outcome, Outcome::Skipped(_)) {
            self.times.push((report.path.clone(), report.duration));
        }
        let skipped = match &report.outcome {
            Outcome::Skipped(reason) => Some(reason.clone()),
            Outcome::NotAttempted(why) => Some(format!("not attempted: {why}")),
            _ => None,
        };
        if let Some(reason) = &skipped {
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
        let seen = match report.outcome.is_failure() {
            true => self.count_cause(report),
            false => Seen::First,
        };
        if matches!(seen, Seen::Startup) {
            return Ok(());
        }
        let p = self.palette;
        let (tag, style) = tag(&report.outcome, &p);
        // A divergence is no failure, and still what a run on a broker is for: always told.
        let diverged = matches!(report.outcome, Outcome::Divergence(_));
        if let Outcome::Divergence(divergence) = &report.outcome {
            for property in &divergence.properties {
                match self
                    .diverged_by
                    .iter_mut()
                    .find(|(id, _)| *id == property.id)
                {
                    Some((_, count)) => *count += 1,
                    None => self.diverged_by.push((property.id, 1)),
                }
            }
        }
        let attention = report.outcome.is_failure() || diverged;
        if !attention && !self.show_passes {
            return Ok(());
        }
        // An implementation that cannot start is no one spec's failure: told on its own, not
        // under the name of the first spec it kept from running.
        if let Outcome::Errored(e) = &report.outcome
            && e.kind == crate::model::implementation::ImplErrorKind::Startup
        {
            writeln!(
                self.out,
                "{} the implementation did not start, so no spec could run",
                paint(style, tag)
            )?;
            for line in render::impl_error(e).lines() {
                writeln!(self.out, "      {line}")?;
            }
            return Ok(());
        }
        let name = report
            .name
            .as_deref()
            .map(|n| format!("  {}", paint(p.dim, &sanitize::line(n))))
            .unwrap_or_default();
        let path = sanitize::line(&report.path);
        let slow = match self.slow {
            Some(threshold) if report.duration >= threshold => format!(
                "  {}",
                paint(p.skip, &format!("SLOW {}", seconds(report.duration)))
            ),
            _ => String::new(),
        };
        writeln!(self.out, "{} {path}{name}{slow}", paint(style, tag))?;
        // A difference of a departure told before is told by where it is; a difference no
        // departure explains, an error or a broken spec, in full.
        let departed = report.cause.as_ref().is_some_and(|c| c.told.is_some());
        let again = match &seen {
            Seen::Again { first } if departed && matches!(report.outcome, Outcome::Mismatch(_)) => {
                Some(first.as_str())
            }
            _ => None,
        };
        // A cause told in full before is not told again: its output (a traceback raised at
        // the same line) neither, unless asked for.
        let captured = report
            .output
            .as_ref()
            .filter(|_| (attention && again.is_none()) || self.show_output)
            .map(|captured| render::captured(captured, &p))
            .unwrap_or_default();
        let details = match &report.outcome {
            Outcome::Passed => String::new(),
            Outcome::Mismatch(m) => {
                // The classic mistake is named once, with the cause's first failure.
                let cause = report.cause.clone().map(|cause| match again {
                    Some(_) => Cause {
                        mistake: None,
                        ..cause
                    },
                    None => cause,
                });
                let mut text = render::cause_heading(cause.as_ref(), &report.rules);
                match again {
                    Some(first) => {
                        text.push_str(&render::first_difference(&report.path, m, &p));
                        text.push_str(&format!(
                            "\nthe same cause as {}, whose diff is shown there\n",
                            sanitize::line(first)
                        ));
                    }
                    None => text.push_str(&render::mismatch(&report.path, m, &p)),
                }
                text
            }
            Outcome::Errored(e) => {
                let mut text = render::impl_error(e);
                // The grader's option is for whoever runs dlqspec; a report its student reads
                // (`--conceal-hidden`, as `grade` writes NAME.txt) leaves it out.
                if let Some(hint) = e.hint.filter(|_| !self.conceal_hidden) {
                    text.push_str(&format!("({hint})\n"));
                }
                text
            }
            Outcome::SpecError(e) => render::spec_error(e, &p),
            Outcome::Skipped(reason) => format!("{}\n", sanitize::text(reason)),
            Outcome::NotAttempted(why) => format!("not attempted: {}\n", sanitize::text(why)),
            Outcome::ExpectedFailure(known) => render::expected_failure(&report.path, known),
            Outcome::Stale(message) | Outcome::WorldFault(message) => {
                format!("{}\n", sanitize::text(message))
            }
            Outcome::Divergence(divergence) => {
                render::divergence(&report.path, divergence, &report.rules, &p)
            }
        };
        for line in details.lines().chain(captured.lines()) {
            writeln!(self.out, "      {line}")?;
        }
        Ok(())
    }

    /// A spec the reader may not see: `hidden spec N` and its verdict, and under a failure
    /// the rule it broke (or its rules); nothing of its path, name, expectations or output.
    fn finished_hidden(&mut self, report: &SpecReport) -> std::io::Result<()> {
        self.flush_skips()?;
        self.hidden_told += 1;
        let p = self.palette;
        let (tag, style) = tag(&report.outcome, &p);
        let attention = report.outcome.is_failure();
        if !attention && !self.show_passes {
            return Ok(());
        }
        writeln!(
            self.out,
            "{} hidden spec {}",
            paint(style, tag),
            self.hidden_told
        )?;
        if attention {
            let rules = match report.cause.as_ref().and_then(|c| c.rule) {
                Some(rule) => rule.to_owned(),
                None => report.rules.join(", "),
            };
            let told = if rules.is_empty() {
                "hidden spec failed".to_owned()
            } else {
                format!("hidden spec failed: {}", sanitize::line(&rules))
            };
            writeln!(self.out, "      {told}")?;
        }
        Ok(())
    }

    /// What the run says of its world, before the first spec: which, and what it cannot give.
    fn world(&mut self, lines: &[String]) -> std::io::Result<()> {
        let Some((first, notes)) = lines.split_first() else {
            return Ok(());
        };
        writeln!(
            self.out,
            "{}",
            paint(self.palette.bold, &sanitize::line(first))
        )?;
        for note in notes {
            writeln!(self.out, "  {}", sanitize::line(note))?;
        }
        writeln!(self.out)
    }

    fn done(&mut self, summary: &Summary) -> std::io::Result<()> {
        self.flush_skips()?;
        self.tell_causes()?;
        let p = self.palette;
        if self.durations > 0 && !self.times.is_empty() {
            let mut times = std::mem::take(&mut self.times);
            // Slowest first; equal times in report order, so the list is stable.
            times.sort_by_key(|t| std::cmp::Reverse(t.1));
            times.truncate(self.durations);
            writeln!(self.out)?;
            writeln!(
                self.out,
                "slowest {}:",
                if times.len() == 1 {
                    "spec".to_owned()
                } else {
                    format!("{} specs", times.len())
                }
            )?;
            for (path, took) in &times {
                writeln!(
                    self.out,
                    "  {:>9}  {}",
                    seconds(*took),
                    sanitize::line(path)
                )?;
            }
        }
        writeln!(self.out)?;
        if summary.diverged > 0 {
            let by: Vec<String> = self
                .diverged_by
                .iter()
                .map(|(id, count)| format!("{id} {count}"))
                .collect();
            writeln!(
                self.out,
                "{}",
                paint(
                    p.skip,
                    &format!(
                        "diverged: {} pass on the lesson's fake world and fail on the broker, by its properties ({}): not failures of the implementation",
                        summary.diverged,
                        by.join(", ")
                    )
                )
            )?;
        }
        if summary.failed() > 0 {
            let mut parts = Vec::new();
            for (count, one, many) in [
                (summary.mismatched, "mismatched", "mismatched"),
                (summary.errored, "errored", "errored"),
                (summary.spec_errors, "spec error", "spec errors"),
                (summary.stale, "stale known failure", "stale known failures"),
            ] {
                match count {
                    0 => {}
                    1 => parts.push(format!("1 {one}")),
                    _ => parts.push(format!("{count} {many}")),
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
                    &match summary.expected_failures {
                        1 => "1 known failure, as expected".to_owned(),
                        n => format!("{n} known failures, as expected"),
                    }
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
        let not_attempted = if summary.not_attempted > 0 {
            format!(
                ", {}",
                paint(p.skip, &format!("{} not attempted", summary.not_attempted))
            )
        } else {
            String::new()
        };
        writeln!(
            self.out,
            "{passed}, {failed}{skipped}{not_attempted} in {}",
            seconds(summary.duration)
        )?;
        self.out.flush()
    }
}

/// The tag a spec's line starts with, and its style.
fn tag(outcome: &Outcome, p: &Palette) -> (&'static str, anstyle::Style) {
    match outcome {
        Outcome::Passed => ("PASS ", p.pass),
        Outcome::Mismatch(_) => ("FAIL ", p.fail),
        Outcome::Errored(_) => ("ERROR", p.fail),
        Outcome::SpecError(_) => ("SPEC ", p.spec),
        Outcome::Skipped(_) | Outcome::NotAttempted(_) => ("SKIP ", p.skip),
        Outcome::ExpectedFailure(_) => ("XFAIL", p.skip),
        Outcome::Stale(_) => ("STALE", p.fail),
        Outcome::Divergence(_) => ("DIVRG", p.skip),
        Outcome::WorldFault(_) => ("SKIP ", p.skip),
    }
}

/// `1 spec`, `3 specs`.
fn specs(count: usize) -> String {
    if count == 1 {
        "1 spec".to_owned()
    } else {
        format!("{count} specs")
    }
}

/// A duration as people read it: `0.42 ms`, `15 ms`, `1.52 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    let ms = duration.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

impl<W: Write> Reporter for HumanReporter<W> {
    fn event(&mut self, event: &Event) {
        // A closed stdout (e.g. piped into `head`) must not turn into a panic.
        let _ = match event {
            Event::Started { world, .. } => self.world(world),
            Event::Finished(report) => self.finished(report),
            Event::Done(summary) => self.done(summary),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::events::{Event, Reporter, SpecReport, Summary};

    fn report(path: &str, outcome: Outcome, millis: u64) -> SpecReport {
        SpecReport {
            path: path.to_owned(),
            name: Some(format!("{path} name")),
            contract: Some("dlq-consumer"),
            rules: Vec::new(),
            outcome,
            duration: Duration::from_millis(millis),
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        }
    }

    /// A failure at `path` whose cause is `key` (its shape), told in `told`.
    fn failed(path: &str, key: &str, told: &str) -> SpecReport {
        use crate::model::cause::{Cause, Departure};
        const RULE: crate::model::rule::Rule = crate::model::rule::Rule {
            id: "c/r",
            statement: "",
        };
        let outcome = Outcome::Mismatch(crate::model::outcome::Mismatch {
            step: "step 1 (process)".into(),
            position: crate::text::source::Position::new(4, 5),
            expected: "process: ok\n".into(),
            actual: "process: dead\n".into(),
            note: None,
            step_as_written: None,
            rule: None,
        });
        let departure = Departure {
            rule: Some(&RULE),
            told: told.into(),
            shape: key.into(),
            key: key.into(),
            mistakes: Vec::new(),
            raised: None,
            step: None,
        };
        let mut report = report(path, outcome, 1);
        report.rules = vec!["c/listed".into()];
        report.cause = Cause::of(&report.outcome, Some(&departure), None, &report.rules);
        report
    }

    #[test]
    fn one_cause_is_told_in_full_once_and_every_cause_counted() {
        let mut out = Vec::new();
        {
            let mut human = HumanReporter::new(&mut out, Palette::plain());
            human.show_passes = false;
            for report in [
                failed("a.yaml", "acks X", "acks a"),
                failed("b.yaml", "acks X", "acks b"),
                failed("c.yaml", "retries X", "retries c"),
            ] {
                human.event(&Event::Finished(&report));
            }
            human.event(&Event::Done(&Summary {
                mismatched: 3,
                ..Summary::default()
            }));
        }
        let text = String::from_utf8(out).unwrap();
        // The rule broken is the cause's, not the spec's list; the diff is shown once.
        assert!(
            text.starts_with(
                "FAIL  a.yaml  a.yaml name\n      rule broken: c/r\n      cause: acks a\n      first difference at step 1 (process) (a.yaml:4:5)\n      --- expected\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "FAIL  b.yaml  b.yaml name\n      rule broken: c/r\n      cause: acks b\n      first difference at step 1 (process) (b.yaml:4:5)\n      the same cause as a.yaml, whose diff is shown there\nFAIL  c.yaml"
            ),
            "{text}"
        );
        assert_eq!(text.matches("--- expected").count(), 2, "{text}");
        assert!(
            text.contains(
                "\nfailures by cause:\n  2  c/r: acks X  (first: a.yaml)\n  1  c/r: retries X  (first: c.yaml)\n"
            ),
            "{text}"
        );
        // Two failures of two causes are still counted by cause.
        let mut out = Vec::new();
        {
            let mut human = HumanReporter::new(&mut out, Palette::plain());
            for report in [
                failed("a.yaml", "acks X", "acks a"),
                failed("c.yaml", "retries X", "retries c"),
            ] {
                human.event(&Event::Finished(&report));
            }
            human.event(&Event::Done(&Summary::default()));
        }
        assert!(
            String::from_utf8(out)
                .unwrap()
                .contains("failures by cause:\n")
        );
    }

    #[test]
    fn a_hidden_spec_is_told_by_its_verdict_and_rules_only_when_concealed() {
        let told = |conceal: bool| {
            let mut out = Vec::new();
            {
                let mut human = HumanReporter::new(&mut out, Palette::plain());
                human.conceal_hidden = conceal;
                for (path, visibility) in [
                    (
                        "secret.yaml",
                        crate::contracts::contract::Visibility::Hidden,
                    ),
                    ("open.yaml", crate::contracts::contract::Visibility::Visible),
                    (
                        "later.yaml",
                        crate::contracts::contract::Visibility::AfterDueDate,
                    ),
                ] {
                    let mut failed = report(path, Outcome::Stale(format!("{path} expected 7")), 1);
                    failed.rules = vec!["dlq-consumer/r".to_owned()];
                    failed.grading.visibility = visibility;
                    human.event(&Event::Finished(&failed));
                }
                let mut passed = report("quiet.yaml", Outcome::Passed, 1);
                passed.grading.visibility = crate::contracts::contract::Visibility::Hidden;
                human.event(&Event::Finished(&passed));
            }
            String::from_utf8(out).unwrap()
        };
        let concealed = told(true);
        assert_eq!(
            concealed,
            "STALE hidden spec 1\n      hidden spec failed: dlq-consumer/r\n\
             STALE open.yaml  open.yaml name\n      open.yaml expected 7\n\
             STALE hidden spec 2\n      hidden spec failed: dlq-consumer/r\n\
             PASS  hidden spec 3\n"
        );
        // Told to whoever runs the suite, a hidden spec is told in full.
        assert!(told(false).contains("secret.yaml expected 7"));
    }

    /// What the reporter prints for specs of these times, with a threshold and a list length.
    fn shown(slow: Option<u64>, durations: usize) -> String {
        let mut out = Vec::new();
        {
            let mut human = HumanReporter::new(&mut out, Palette::plain());
            human.slow = slow.map(Duration::from_millis);
            human.durations = durations;
            for (path, millis) in [("a.yaml", 5), ("b.yaml", 2500), ("c.yaml", 40)] {
                human.event(&Event::Finished(&report(path, Outcome::Passed, millis)));
            }
            let skipped = Outcome::Skipped("not run".into());
            human.event(&Event::Finished(&report("d.yaml", skipped, 0)));
            human.event(&Event::Done(&Summary {
                passed: 3,
                skipped: 1,
                duration: Duration::from_millis(2600),
                ..Summary::default()
            }));
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn skipped_specs_are_told_with_nothing_raw() {
        let mut out = Vec::new();
        {
            let mut human = HumanReporter::new(&mut out, Palette::plain());
            // An implementation's own reason (a protocol `skipped` reply) and a hostile path.
            let reason = Outcome::Skipped("not today\x1b[2J\x07".into());
            for path in ["a\x1b]0;x\x07.yaml", "b.yaml"] {
                human.event(&Event::Finished(&report(path, reason.clone(), 0)));
            }
            let lone = Outcome::Skipped("lone\x1b[1m".into());
            human.event(&Event::Finished(&report("c\x1b.yaml", lone, 0)));
            human.event(&Event::Done(&Summary::default()));
        }
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(
            text.contains("SKIP  2 specs, a\\x1b]0;x\\x07.yaml to b.yaml\n"),
            "{text}"
        );
        assert!(text.contains("      not today\\x1b[2J\\x07\n"), "{text}");
        assert!(
            text.contains("SKIP  c\\x1b.yaml  c\\x1b.yaml name\n"),
            "{text}"
        );
    }

    #[test]
    fn a_spec_over_the_threshold_is_marked_slow_with_its_time() {
        let text = shown(Some(30), 0);
        assert!(text.contains("PASS  a.yaml  a.yaml name\n"), "{text}");
        assert!(
            text.contains("PASS  b.yaml  b.yaml name  SLOW 2.50 s\n"),
            "{text}"
        );
        assert!(
            text.contains("PASS  c.yaml  c.yaml name  SLOW 40 ms\n"),
            "{text}"
        );
        assert!(!shown(None, 0).contains("SLOW"));
    }

    #[test]
    fn durations_lists_the_slowest_specs_and_the_summary_the_total_time() {
        let text = shown(None, 2);
        assert!(
            text.ends_with(
                "\nslowest 2 specs:\n     2.50 s  b.yaml\n      40 ms  c.yaml\n\n3 passed, 0 failed, 1 skipped in 2.60 s\n"
            ),
            "{text}"
        );
        assert!(shown(None, 0).ends_with("\n\n3 passed, 0 failed, 1 skipped in 2.60 s\n"));
        assert!(shown(None, 9).contains("slowest 3 specs:\n"));
    }

    #[test]
    fn times_read_at_every_scale() {
        assert_eq!(seconds(Duration::from_micros(420)), "0.42 ms");
        assert_eq!(seconds(Duration::from_millis(15)), "15 ms");
        assert_eq!(seconds(Duration::from_millis(1520)), "1.52 s");
    }
}
