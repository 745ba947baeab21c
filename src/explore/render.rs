//! What `dlqspec explore` tells: a line as it starts, a progress line on a terminal, and the
//! finding (the divergence, its diff, the spec) or the clean count, with the seed in each.
//!
//! Labels, reasons, divergences and specs carry text from the implementation under test (its
//! path, its error messages), so they go through `sanitize` like every other report's.

use crate::explore::crashes::CrashesSummary;
use crate::explore::{ExploreEvent, ExploreSummary, Finding, Observer};
use crate::report::progress::{DelayedBar, seconds, suspended};
use crate::report::render;
use crate::report::sanitize::{line, text as shown_text};
use crate::report::style::{Palette, paint};
use std::io::Write;
use std::path::Path;

/// Prints the opening lines as exploring starts, and keeps a progress line on stderr when
/// asked to (on a terminal, outside CI: see `ReportOptions::progress_wanted`).
pub(crate) struct ExploreReporter<W: Write> {
    out: W,
    palette: Palette,
    bar: Option<DelayedBar>,
}

impl<W: Write> ExploreReporter<W> {
    pub(crate) fn new(out: W, palette: Palette, progress: bool) -> Self {
        let bar = progress.then(|| DelayedBar::start("{spinner} [{elapsed}] {wide_msg}"));
        ExploreReporter { out, palette, bar }
    }

    /// Writes `text` without tearing the progress line.
    fn say(&mut self, text: &str) {
        let out = &mut self.out;
        suspended(self.bar.as_ref().map(DelayedBar::bar), || {
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        });
    }

    /// Sets the progress line (shown once the exploration has gone on for a moment).
    fn progress(&mut self, message: String) {
        if let Some(bar) = &self.bar {
            bar.bar().set_message(message);
        }
    }
}

impl<W: Write> Observer for ExploreReporter<W> {
    fn event(&mut self, event: &ExploreEvent) {
        let p = self.palette;
        match event {
            ExploreEvent::Started {
                seed,
                implementation,
                contracts,
                cases,
                time,
            } => {
                let limit = time.map_or(String::new(), |t| format!(", for at most {}", seconds(t)));
                let implementation = line(implementation);
                let text = format!(
                    "explore {implementation}: seed {seed}, {cases} cases per contract of {}{limit}\n",
                    if contracts.is_empty() {
                        "(none)".to_owned()
                    } else {
                        contracts.join(", ")
                    }
                );
                self.say(&text);
            }
            ExploreEvent::Skipped { contract, reason } => {
                let text = format!(
                    "{} {contract}: {}\n",
                    paint(p.skip, "skipped"),
                    line(reason)
                );
                self.say(&text);
            }
            ExploreEvent::Passed { run } => {
                self.progress(format!("{run} cases, no divergence yet"))
            }
            ExploreEvent::Diverged {
                contract,
                origin,
                steps,
                after,
            } => {
                let text = format!(
                    "{} {contract} diverges in {origin} ({steps} steps), after {}; shrinking\n",
                    paint(p.fail, "FOUND"),
                    seconds(*after)
                );
                self.say(&text);
            }
            ExploreEvent::Shrinking { tries, steps } => {
                self.progress(format!("shrinking: {tries} tries, down to {steps} steps"));
            }
            ExploreEvent::CrashesStarted {
                spec,
                implementation,
                max_crashes,
                invariants,
            } => {
                let (spec, implementation) = (line(spec), line(implementation));
                let mut text = format!(
                    "explore {spec} on {implementation}: every schedule of up to {max_crashes} crash{}, checking that\n",
                    if *max_crashes == 1 { "" } else { "es" }
                );
                for invariant in *invariants {
                    text.push_str(&format!("  - {invariant}\n"));
                }
                self.say(&text);
            }
            ExploreEvent::SchedulesRan { run } => {
                self.progress(format!("{run} schedules"));
            }
            ExploreEvent::Violated {
                schedule,
                violations,
            } => {
                let crashes: Vec<String> = schedule.iter().map(ToString::to_string).collect();
                let mut text = format!(
                    "{} with {}:\n",
                    paint(p.fail, "VIOLATED"),
                    if crashes.is_empty() {
                        "no crash".to_owned()
                    } else {
                        crashes.join(", then ")
                    }
                );
                for violation in *violations {
                    text.push_str(&format!("  - {}\n", line(violation)));
                }
                self.say(&text);
            }
            ExploreEvent::Done(_) | ExploreEvent::CrashesDone(_) => {
                if let Some(bar) = &mut self.bar {
                    bar.finish();
                }
            }
        }
    }
}

/// The end of an exploration: the finding with its diff and spec (or where the spec was
/// written), then the closing line with the count, the rate and the seed.
pub(crate) fn search(
    summary: &ExploreSummary,
    written: Option<&Path>,
    palette: &Palette,
) -> String {
    let mut out = String::new();
    if let Some(finding) = &summary.finding {
        out.push_str(&finding_text(finding, written, palette));
    }
    if summary.invalid.0 > 0 && mostly_invalid(summary).is_none() {
        out.push_str(&format!("note: {}\n", invalid_cases(summary)));
    }
    let per: Vec<String> = summary
        .cases
        .iter()
        .map(|(contract, n)| format!("{n} {contract}"))
        .collect();
    let counted = format!(
        "{} case{} ({}) in {}, {:.0} cases/s",
        summary.total_cases(),
        if summary.total_cases() == 1 { "" } else { "s" },
        if per.is_empty() {
            "no contract".to_owned()
        } else {
            per.join(", ")
        },
        seconds(summary.elapsed),
        summary.rate()
    );
    let verdict = match &summary.finding {
        Some(_) => paint(palette.fail, "found a divergence"),
        None if mostly_invalid(summary).is_some() => paint(palette.fail, "nothing judged"),
        None if summary.cases.is_empty() => paint(palette.fail, "nothing to explore"),
        None => paint(palette.pass, "no divergence"),
    };
    out.push_str(&format!(
        "{verdict}: {counted}; seed {seed} (`--seed {seed}` replays this run)\n",
        seed = summary.seed
    ));
    out
}

/// How many generated cases could not be blessed, whose fault that is, and the first reason.
fn invalid_cases(summary: &ExploreSummary) -> String {
    let (count, first) = &summary.invalid;
    let first = first
        .as_deref()
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default();
    let cases = format!(
        "{count} of {} generated case{}",
        summary.total_cases(),
        if summary.total_cases() == 1 { "" } else { "s" }
    );
    match summary.invalid_of {
        Some(contract) if !crate::contracts::registry::is_built_in(contract) => format!(
            "{cases} could not be blessed on {} of the exercise {contract}, an error of its exercise.yaml (a `draw:` value its reference refuses, most often); the first: {first}",
            crate::contracts::registry::reference_called(contract, "the reference")
        ),
        _ => format!(
            "{cases} could not be blessed on the built-in implementation, a bug of the generator; the first: {first}"
        ),
    }
}

/// Why a search judged (nearly) nothing: half its cases or more could not be blessed, so no
/// divergence among the rest is no pass. `None` for a search that judged.
pub(crate) fn mostly_invalid(summary: &ExploreSummary) -> Option<String> {
    let invalid = summary.invalid.0;
    (invalid > 0 && invalid * 2 >= summary.total_cases()).then(|| invalid_cases(summary))
}

/// The end of a crash-schedule exploration.
pub(crate) fn crashes(
    summary: &CrashesSummary,
    written: Option<&Path>,
    palette: &Palette,
) -> String {
    let mut out = String::new();
    if let Some(violation) = &summary.violation {
        match (&violation.finding, &violation.no_spec) {
            (Some(finding), _) => out.push_str(&finding_text(finding, written, palette)),
            (None, Some(why)) => {
                out.push_str(&format!("no spec written: {}\n", shown_text(why)));
            }
            (None, None) => {}
        }
    }
    let counted = format!(
        "{} schedule{} of up to {} crash{} in {}, {:.0} schedules/s",
        summary.schedules,
        if summary.schedules == 1 { "" } else { "s" },
        summary.max_crashes,
        if summary.max_crashes == 1 { "" } else { "es" },
        seconds(summary.elapsed),
        summary.rate()
    );
    let verdict = match &summary.violation {
        Some(_) => paint(palette.fail, "an invariant is broken"),
        None => paint(palette.pass, "every invariant holds"),
    };
    out.push_str(&format!("{verdict}: {counted} (exhaustive, so no seed)\n"));
    out
}

/// A finding: what differs, the diff, and the spec or where it went.
fn finding_text(finding: &Finding, written: Option<&Path>, palette: &Palette) -> String {
    let mut out = format!(
        "{} {}\n",
        paint(palette.fail, "divergence"),
        line(&finding.divergence)
    );
    out.push_str(&format!(
        "shrunk from {} steps to {} in {} tries ({})\n",
        finding.steps_before,
        finding.steps,
        finding.tries,
        seconds(finding.shrink_time)
    ));
    let shown = written.map_or_else(
        || finding.file_name.clone(),
        crate::text::source::display_path,
    );
    out.push_str(&render::details(&shown, &finding.outcome));
    let reference = crate::contracts::registry::reference_called(
        finding.contract,
        "the built-in implementation",
    );
    match written {
        Some(path) => out.push_str(&format!(
            "{} {} (it passes on {} and fails on this one)\n",
            paint(palette.bold, "wrote"),
            line(&crate::text::source::display_path(path)),
            line(&reference)
        )),
        None => {
            out.push_str(&format!(
                "the spec ({}: it passes on {} and fails on this one; `--output DIR` writes it):\n",
                finding.file_name,
                line(&reference)
            ));
            out.push_str(&shown_text(&finding.spec));
        }
    }
    for smell in &finding.smells {
        out.push_str(&format!(
            "note: lint would say {}:{}: {}: {}\n",
            line(&shown),
            smell.position.line,
            smell.id,
            line(&smell.message)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(cases: u64, invalid: u64, of: &'static str) -> ExploreSummary {
        ExploreSummary {
            seed: 1,
            implementation: "x".into(),
            cases: vec![(of, cases)],
            skipped: Vec::new(),
            invalid: (
                invalid,
                (invalid > 0).then(|| "the create raises".to_owned()),
            ),
            invalid_of: (invalid > 0).then_some(of),
            elapsed: std::time::Duration::from_secs(1),
            finding: None,
            broken: None,
        }
    }

    #[test]
    fn half_the_cases_or_more_unblessed_judge_nothing_and_an_exercise_is_blamed() {
        assert_eq!(mostly_invalid(&summary(40, 0, "dlq-consumer")), None);
        assert_eq!(mostly_invalid(&summary(40, 19, "dlq-consumer")), None);
        let told = mostly_invalid(&summary(40, 20, "dlq-consumer")).expect("judged nothing");
        assert!(told.contains("a bug of the generator"), "{told}");
        let told = mostly_invalid(&summary(40, 40, "no-such-exercise")).expect("judged nothing");
        assert!(
            told.starts_with("40 of 40 generated cases could not be blessed on the reference of the exercise no-such-exercise, an error of its exercise.yaml"),
            "{told}"
        );
        assert!(told.ends_with("the first: the create raises"), "{told}");
        let text = search(
            &summary(40, 40, "no-such-exercise"),
            None,
            &Palette::plain(),
        );
        assert!(text.contains("nothing judged: 40 cases"), "{text}");
        assert!(!text.contains("no divergence"), "{text}");
        let text = search(&summary(40, 1, "dlq-consumer"), None, &Palette::plain());
        assert!(text.starts_with("note: 1 of 40 generated cases"), "{text}");
        assert!(text.contains("no divergence"), "{text}");
    }
}
