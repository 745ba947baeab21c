//! Explaining a scenario: its timeline as a person reads it, and how it ended.
//!
//! The scenario runs recording (so the whole story is told, past a first difference); its
//! contract writes the timeline as events (deliveries, decisions and the rules behind them,
//! checks), each with its line. This module adds the header and the outcome, and renders it
//! as text or as a picture (`report::explain_picture`), both from the same events.

use std::fmt::Write as _;

use crate::contracts::contract::RunMode;
use crate::contracts::timeline::TimelineLine;
use crate::load::loader::LoadedSpec;
use crate::model::captured::Captured;
use crate::model::cause::Cause;
use crate::model::implementation::{ImplInfo, Implementation};
use crate::model::outcome::Outcome;
use crate::model::world::WorldChoice;
use crate::report::Palette;
use crate::report::explain_picture::Departed;
use crate::report::render;
use crate::report::sanitize::{self, line};
use crate::report::style::paint;

/// A scenario told step by step.
#[derive(Debug, Clone)]
pub struct Explanation {
    pub(crate) path: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) contract: &'static str,
    pub(crate) rules: Vec<String>,
    pub(crate) implementation: ImplInfo,
    pub(crate) timeline: Vec<TimelineLine>,
    /// The lanes the timeline's calls run between, as the picture draws them.
    pub(crate) lanes: &'static [&'static str],
    pub outcome: Outcome,
    /// How many checked values differed (a recording run goes on past the first).
    pub(crate) differences: usize,
    /// What the implementation printed and raised while the scenario ran.
    pub(crate) output: Option<Captured>,
    /// Why it failed, as `run` tells it: where the implementation first departed from the
    /// reference, and the rule that decides it.
    pub(crate) cause: Option<Cause>,
    /// The spec's step (from 0) where the implementation first departs from the reference:
    /// the cause's step, which the picture marks.
    pub(crate) departure_step: Option<usize>,
    /// What the run says of its world (`--world`), one line each; empty on the fake.
    pub(crate) world: Vec<String>,
}

pub fn explain(spec: &LoadedSpec, implementation: &mut dyn Implementation) -> Explanation {
    explain_in(spec, implementation, &WorldChoice::Fake, Vec::new())
}

/// `explain` on `world`, readied already, whose header lines are `told`.
pub(crate) fn explain_in(
    spec: &LoadedSpec,
    implementation: &mut dyn Implementation,
    world: &WorldChoice,
    told: Vec<String>,
) -> Explanation {
    let header = spec.scenario.header();
    let info = implementation.info();
    let (timeline, lanes, outcome, differences, departure) = match implementation.begin_spec() {
        Err(error) => (
            Vec::new(),
            spec.contract.lanes(),
            Outcome::Errored(error),
            0,
            None,
        ),
        Ok(()) => {
            let (run, departure) = spec.diagnose_in(implementation, RunMode::Explain, world);
            let differences = run
                .checkpoints
                .iter()
                .filter(|c| !c.matches())
                .map(|c| c.written.iter().filter(|w| !w.matches()).count().max(1))
                .sum();
            (
                run.timeline,
                spec.contract.lanes(),
                run.outcome,
                differences,
                departure,
            )
        }
    };
    let output = implementation.take_output();
    let rules: Vec<String> = header.rule_ids().map(str::to_owned).collect();
    let cause = Cause::of(&outcome, departure.as_ref(), output.as_ref(), &rules);
    let departure_step = departure
        .as_ref()
        .filter(|_| matches!(outcome, Outcome::Mismatch(_)))
        .and_then(|departure| departure.step);
    Explanation {
        path: spec.file.display_path(),
        name: header.name.clone(),
        description: header.description.trim().to_owned(),
        contract: spec.contract.name(),
        rules,
        implementation: info,
        timeline,
        lanes,
        outcome,
        differences,
        output,
        cause,
        departure_step,
        world: told,
    }
}

/// The explanation as text: header, timeline, outcome.
pub fn render(explanation: &Explanation, palette: &Palette) -> String {
    let p = palette;
    let mut out = String::new();
    let _ = writeln!(out, "{}", paint(p.bold, &line(&explanation.name)));
    let _ = writeln!(
        out,
        "{}",
        paint(
            p.dim,
            &format!(
                "{} · contract {} · implementation {}",
                line(&explanation.path),
                explanation.contract,
                line(&explanation.implementation.label)
            )
        )
    );
    if !explanation.rules.is_empty() {
        let _ = writeln!(out, "rules: {}", line(&explanation.rules.join(", ")));
    }
    if let Some((first, notes)) = explanation.world.split_first() {
        let _ = writeln!(out, "{}", line(first));
        for note in notes {
            let _ = writeln!(out, "  {}", line(note));
        }
    }
    if !explanation.description.is_empty() {
        let _ = writeln!(out);
        for text in explanation.description.lines() {
            let _ = writeln!(out, "{}", line(text));
        }
    }
    let _ = writeln!(out);
    for told in &explanation.timeline {
        // A timeline entry is one line, whatever the ids, bodies and messages in it say.
        let _ = writeln!(out, "{}", paint_line(&line(&told.line), p));
    }
    // What the implementation printed and raised, as `run` shows it under a spec (sanitized there).
    if let Some(captured) = &explanation.output {
        let _ = writeln!(out);
        out.push_str(&render::captured(captured, p));
    }
    let _ = writeln!(out);
    let (verdict, style) = verdict(explanation, p);
    let _ = writeln!(out, "outcome: {}", paint(style, &verdict));
    let details = details(explanation, p);
    for line in details.lines() {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// The explanation as a self-contained HTML page: the timeline drawn as a sequence diagram.
pub(crate) fn html(explanation: &Explanation) -> String {
    let plain = Palette::plain();
    let (verdict, _) = verdict(explanation, &plain);
    let details = details(explanation, &plain);
    crate::report::explain_picture::html(&crate::report::explain_picture::Page {
        name: &explanation.name,
        path: &explanation.path,
        contract: explanation.contract,
        implementation: &explanation.implementation.label,
        rules: &explanation.rules,
        description: &explanation.description,
        lanes: explanation.lanes,
        timeline: &explanation.timeline,
        verdict: &verdict,
        passed: matches!(
            explanation.outcome,
            Outcome::Passed
                | Outcome::Skipped(_)
                | Outcome::NotAttempted(_)
                | Outcome::ExpectedFailure(_)
        ),
        details: &details,
        departure: explanation.departure_step.map(|step| Departed {
            step,
            told: explanation
                .cause
                .as_ref()
                .and_then(|cause| cause.told.as_deref())
                .unwrap_or_default(),
        }),
    })
}

/// The verdict, e.g. `FAIL: 2 checked values differ`, and its style.
fn verdict(explanation: &Explanation, p: &Palette) -> (String, anstyle::Style) {
    let (verdict, style) = match &explanation.outcome {
        Outcome::Passed => ("PASS: every expectation holds", p.pass),
        Outcome::Mismatch(_) => ("FAIL", p.fail),
        Outcome::Errored(_) => ("ERROR: the implementation broke", p.fail),
        Outcome::SpecError(_) => ("SPEC ERROR: the spec itself is broken", p.spec),
        Outcome::Skipped(_) => ("SKIPPED", p.skip),
        Outcome::NotAttempted(_) => ("NOT ATTEMPTED: no class of this contract", p.skip),
        Outcome::ExpectedFailure(_) => ("EXPECTED FAILURE: listed as a known failure", p.skip),
        Outcome::Stale(_) => ("STALE: listed as a known failure, but passed", p.fail),
        Outcome::Divergence(_) => (
            "DIVERGES: passes on the lesson's fake world, fails on the broker",
            p.skip,
        ),
        Outcome::WorldFault(_) => ("NOT RUN: the broker failed", p.spec),
    };
    let verdict = match (&explanation.outcome, explanation.differences) {
        (Outcome::Mismatch(_), n) => format!(
            "{verdict}: {n} checked value{} differ{}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" }
        ),
        _ => verdict.to_owned(),
    };
    (verdict, style)
}

/// What the outcome says besides its verdict: the first difference and its diff, the error.
fn details(explanation: &Explanation, p: &Palette) -> String {
    match &explanation.outcome {
        Outcome::Passed => String::new(),
        Outcome::Mismatch(m) => {
            // The reference failing a spec is the spec's mistake, and breaks no rule.
            let mut out = match explanation.implementation.is_reference {
                true => String::new(),
                false => render::cause_heading(explanation.cause.as_ref(), &explanation.rules),
            };
            out.push_str(&render::mismatch(&explanation.path, m, p));
            out
        }
        Outcome::Errored(e) => render::impl_error(e),
        Outcome::SpecError(e) => render::spec_error(e, p),
        Outcome::Skipped(reason) | Outcome::NotAttempted(reason) => {
            format!("{}\n", sanitize::text(reason))
        }
        Outcome::ExpectedFailure(_) | Outcome::Stale(_) | Outcome::Divergence(_) => {
            render::details(&explanation.path, &explanation.outcome)
        }
        Outcome::WorldFault(message) => format!("{}\n", sanitize::text(message)),
    }
}

/// Step headings bold, checks green or red, rule lines dim: the timeline's own conventions.
fn paint_line(line: &str, p: &Palette) -> String {
    let body = line.trim_start();
    if body.starts_with('\u{2713}') {
        paint(p.pass, line)
    } else if body.starts_with('\u{2717}') {
        paint(p.fail, line)
    } else if body.starts_with("rule ") {
        paint(p.dim, line)
    } else if !line.starts_with(' ') {
        paint(p.bold, line)
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::builtin::Builtin;
    use crate::load::loader;
    use crate::text::source::SourceFile;

    fn explained(text: &str) -> String {
        let spec =
            loader::load(SourceFile::from_text("t.yaml", text)).unwrap_or_else(|e| panic!("{e}"));
        render(&explain(&spec, &mut Builtin::new()), &Palette::plain())
    }

    #[test]
    fn a_retry_and_its_rule_are_told_then_the_outcome() {
        let text = "contract: dlq-consumer\nname: t\nmax_attempts: 2\nmessages: [{id: a, body: x}]\nhandler: {a: [transient: db down, ok]}\nsteps:\n  - process: retry\n  - advance: 4\n  - process: ok\nexpect: {pending: []}\n";
        assert_eq!(
            explained(text),
            "t\n\
             t.yaml · contract dlq-consumer · implementation builtin\n\
             \n\
             start: the queue holds a; the clock reads 0; max_attempts 2\n\
             step 1 (line 7): process_one() returned retry\n    \
             receive a: receive_count 1, first received at 0\n    \
             dlq.has(a) -> false\n    \
             handler(a) raises TransientError: db down\n    \
             queue.retry(a): a goes to the ready tail\n    \
             rule dlq-consumer/transient-retry: receive_count 1 < max_attempts 2: retry a to the ready tail\n    \
             rule dlq-consumer/exhausted: one attempt is left: not exhausted until receive_count reaches 2\n    \
             \u{2713} process: retry\n\
             step 2 (line 8): advance: the clock moves by 4, from 0 to 4\n\
             step 3 (line 9): process_one() returned ok\n    \
             receive a: receive_count 2, first received at 0\n    \
             dlq.has(a) -> false\n    \
             handler(a) succeeds\n    \
             queue.ack(a): a leaves the queue for good\n    \
             rule dlq-consumer/poison: receive_count 2 = max_attempts 2: not poison yet, the handler decides\n    \
             rule dlq-consumer/success: the handler succeeded: ack a and return ok\n    \
             \u{2713} process: ok\n\
             final expect (line 10)\n    \
             \u{2713} pending: []\n\
             \n\
             outcome: PASS: every expectation holds\n"
        );
    }

    #[test]
    fn a_failing_scenario_is_told_to_the_end_and_counts_its_differences() {
        let text = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [permanent: bad]}\nsteps:\n  - process: ok\nexpect: {pending: [a]}\n";
        let shown = explained(text);
        assert!(
            shown.contains("    \u{2717} process: expected ok, got dead\n"),
            "{shown}"
        );
        assert!(
            shown.contains("    \u{2717} pending: expected [a], got []\n"),
            "{shown}"
        );
        assert!(
            shown.contains("rule dlq-consumer/permanent: a PermanentError dead-letters a at once"),
            "{shown}"
        );
        assert!(
            shown.contains("outcome: FAIL: 2 checked values differ\n  first difference at step 1 (process) (t.yaml:6:14)\n"),
            "{shown}"
        );
    }
}
