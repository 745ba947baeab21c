//! The bookkeeping of one scenario run, the same for every contract: checkpoints, the first
//! mismatch, the timeline, and when to stop.

use serde_json::json;

use crate::contracts::contract::{Checkpoint, RunMode, ScenarioRun};
use crate::contracts::timeline::{TimelineEvent, TimelineLine};
use crate::model::outcome::{Mismatch, Outcome};
use crate::model::rule::Rule;
use crate::text::truncate;
use crate::text::yaml;

/// Records what a run compares and tells. Checking stops at the first difference and keeps only
/// that checkpoint, the one its readers look for; recording goes on and keeps every
/// checkpoint, so `bless` and `explain` see all of them.
#[derive(Debug)]
pub(crate) struct Recorder {
    mode: RunMode,
    checkpoints: Vec<Checkpoint>,
    first_mismatch: Option<Mismatch>,
    timeline: Vec<TimelineLine>,
    exercised: Vec<&'static str>,
    /// While set, a rule reached is noted but not told: a decision a crash prevented.
    hushed: bool,
    /// The rule that decides what the step at hand must do, as the runner knows it: a
    /// difference found in this step is told as breaking it.
    decision: Option<&'static Rule>,
    /// Whether the decision is one the step's outcome hinges on (the queue's count where the
    /// consumer's own differs), which the rule then applied does not replace.
    firm: bool,
    /// Whether the first difference was found in the step at hand: the step is then told
    /// with it (`describe_step`).
    differs_here: bool,
    /// The rules noted in the step at hand, in order, when kept (`keep_step_rules`): what a
    /// diagnosis reads of the reference's run to name the rule a departure breaks.
    step_rules: Option<Vec<&'static str>>,
    /// The decisions made in the step at hand, in order, each with whether it was firm; kept
    /// with `step_rules`.
    step_decisions: Vec<(&'static Rule, bool)>,
}

impl Recorder {
    pub(crate) fn new(mode: RunMode) -> Self {
        Recorder {
            mode,
            checkpoints: Vec::new(),
            first_mismatch: None,
            timeline: Vec::new(),
            exercised: Vec::new(),
            hushed: false,
            decision: None,
            firm: false,
            differs_here: false,
            step_rules: None,
            step_decisions: Vec::new(),
        }
    }

    /// Keeps the rules noted in each step (`step`), for a diagnosis.
    pub(crate) fn keep_step_rules(&mut self) {
        self.step_rules = Some(Vec::new());
    }

    /// A new step begins: no rule decides it yet.
    pub(crate) fn begin_step(&mut self) {
        self.decision = None;
        self.firm = false;
        self.differs_here = false;
        if let Some(rules) = &mut self.step_rules {
            rules.clear();
            self.step_decisions.clear();
        }
    }

    /// What decides the step at hand so far: its rule, and the rules noted in it (empty
    /// unless `keep_step_rules`).
    pub(crate) fn step(&self) -> (Option<&'static Rule>, &[&'static str]) {
        let noted = self.step_rules.as_deref().unwrap_or_default();
        (self.decision, noted)
    }

    /// Every decision made in the step at hand, in order, each with whether it was firm
    /// (empty unless `keep_step_rules`): a later one may override an earlier one's rule,
    /// which a diagnosis of what departed before it still needs.
    pub(crate) fn step_decisions(&self) -> &[(&'static Rule, bool)] {
        &self.step_decisions
    }

    /// Adds the step at hand, as its spec writes it, to the first difference when that was
    /// found in this step. `written` is called only then, so a run pays nothing per step;
    /// `ran` is what the step gave its runner, which a checking run stopped with a copy of the
    /// difference.
    pub(crate) fn describe_step<T>(
        &mut self,
        ran: &mut Result<T, Outcome>,
        written: impl FnOnce() -> Option<String>,
    ) {
        if !std::mem::take(&mut self.differs_here) {
            return;
        }
        let Some(text) = written().map(|text| truncate::line(&text, MAX_STEP_BYTES)) else {
            return;
        };
        if let Err(Outcome::Mismatch(stopped)) = ran {
            stopped.step_as_written = Some(text.clone().into());
        }
        if let Some(first) = &mut self.first_mismatch {
            first.step_as_written = Some(text.into());
        }
    }

    /// `rule` decides what the step at hand must do (a later call overrides an earlier one):
    /// a difference in this step breaks it.
    pub(crate) fn decided(&mut self, rule: &'static Rule) {
        if !self.firm {
            self.decision = Some(rule);
        }
        if self.step_rules.is_some() {
            self.step_decisions.push((rule, false));
        }
    }

    /// `rule` decides the step whatever rule is applied after it: the step is the one case
    /// where a consumer that breaks `rule` acts differently (it counts from memory, and its
    /// count differs from the queue's).
    pub(crate) fn decided_firmly(&mut self, rule: &'static Rule) {
        self.decision = Some(rule);
        self.firm = true;
        if self.step_rules.is_some() {
            self.step_decisions.push((rule, true));
        }
    }

    /// Notes that the run reached a decision `rule` governs, and tells why in the timeline.
    /// `why` is written out only when the line is told, so a run that tells nothing does not
    /// pay for a sentence per decision.
    pub(crate) fn exercise(&mut self, rule: &Rule, why: impl std::fmt::Display) {
        if !self.hushed && self.telling() {
            self.tell_event(format!("    rule {}: {why}", rule.id), TimelineEvent::Rule);
        }
        self.note(rule);
    }

    /// Notes that the run reached a decision `rule` governs, telling nothing: the caller tells
    /// the line itself, marked with whether the implementation bore it out.
    pub(crate) fn note(&mut self, rule: &Rule) {
        if !self.exercised.contains(&rule.id) {
            self.exercised.push(rule.id);
        }
        if let Some(rules) = &mut self.step_rules {
            rules.push(rule.id);
        }
    }

    /// Notes the rules reached from now on without telling them (`true`), or tells them
    /// again (`false`): for a decision the run reached but a crash kept from happening, whose
    /// rule the scenario still exercises while the timeline tells only what happened.
    pub(crate) fn hush(&mut self, hushed: bool) {
        self.hushed = hushed;
    }

    /// Whether noting `rule` again would change anything: in a timeline every decision is
    /// told, elsewhere only the first one counts. Lets a check that costs a scan of the world
    /// run once, not at every step.
    pub(crate) fn wants(&self, rule: &Rule) -> bool {
        self.telling() || !self.exercised.contains(&rule.id)
    }

    /// Whether the run keeps a timeline: only `explain` is told one, so no other run pays
    /// for telling what nobody reads.
    pub(crate) fn telling(&self) -> bool {
        self.mode == RunMode::Explain
    }

    /// How many lines the timeline holds so far: where the lines of the step at hand end.
    pub(crate) fn told(&self) -> usize {
        self.timeline.len()
    }

    /// Adds one line to the timeline, a note.
    pub(crate) fn tell(&mut self, line: String) {
        if self.telling() {
            self.timeline.push(TimelineLine::note(line));
        }
    }

    /// Adds one event to the timeline, told as `line`.
    pub(crate) fn tell_event(&mut self, line: String, event: TimelineEvent) {
        if self.telling() {
            self.timeline.push(TimelineLine { line, event });
        }
    }

    /// Adds events to the timeline.
    pub(crate) fn tell_all(&mut self, told: impl IntoIterator<Item = TimelineLine>) {
        if self.telling() {
            self.timeline.extend(told);
        }
    }

    /// Whether a checkpoint that matches is kept. A checking run keeps only the one that
    /// differs: nothing reads the others, and a big scenario would hold one per step.
    pub(crate) fn keeps_matches(&self) -> bool {
        self.mode != RunMode::Check
    }

    /// Records a checkpoint at `step`, telling it in the timeline; on a difference, stops
    /// (checking) or remembers it if it is the first (recording). `note` says what a diff
    /// alone cannot.
    pub(crate) fn compare(
        &mut self,
        step: impl std::fmt::Display,
        checkpoint: Checkpoint,
        note: Option<String>,
    ) -> Result<(), Outcome> {
        let rule = self.decision;
        self.compare_breaking(rule, step, checkpoint, note)
    }

    /// `compare`, naming the rule a difference breaks when it is not the step's decision (a
    /// misuse breaks `no-misuse` whatever the step decided).
    pub(crate) fn compare_breaking(
        &mut self,
        rule: Option<&'static Rule>,
        step: impl std::fmt::Display,
        checkpoint: Checkpoint,
        note: Option<String>,
    ) -> Result<(), Outcome> {
        if self.telling() {
            let told = checkpoint.timeline_lines().into_iter().map(|mut told| {
                told.line.insert_str(0, "    ");
                told
            });
            self.timeline.extend(told);
        }
        let matches = checkpoint.matches();
        if !matches && self.first_mismatch.is_none() {
            let (expected, actual) = shown(&checkpoint);
            self.differs_here = true;
            self.first_mismatch = Some(Mismatch {
                step: step.to_string(),
                position: checkpoint.position,
                expected: expected.into(),
                actual: actual.into(),
                note,
                step_as_written: None,
                rule,
            });
        }
        if !matches || self.keeps_matches() {
            self.checkpoints.push(checkpoint);
        }
        if !matches && self.mode == RunMode::Check {
            return Err(self.stop());
        }
        Ok(())
    }

    /// The outcome of a run that cannot go on: the first mismatch, or a pass when there is none.
    pub(crate) fn stop(&self) -> Outcome {
        self.first_mismatch
            .clone()
            .map_or(Outcome::Passed, Outcome::Mismatch)
    }

    /// The run, given why it stopped early (`None` when every step ran).
    ///
    /// The verdict is the first thing that went wrong, in step order: a recording run goes on
    /// past a difference to show the rest, but what it meets later (an unscripted handler call,
    /// a broken implementation) does not change the verdict. So `run`, which stops at the first
    /// difference, and `explain` and `bless --check`, which record, always agree.
    pub(crate) fn finish(self, stopped: Option<Outcome>) -> ScenarioRun {
        let mut later_spec_error = None;
        let outcome = match (self.first_mismatch, stopped) {
            (Some(mismatch), later) => {
                if let Some(Outcome::SpecError(error)) = later {
                    later_spec_error = Some(Box::new(error));
                }
                Outcome::Mismatch(mismatch)
            }
            (None, Some(outcome)) => outcome,
            (None, None) => Outcome::Passed,
        };
        ScenarioRun {
            outcome,
            checkpoints: self.checkpoints,
            timeline: self.timeline,
            exercised: self.exercised,
            later_spec_error,
        }
    }
}

/// The most of a step `describe_step` keeps: one line a reader takes in at a glance.
const MAX_STEP_BYTES: usize = 300;

/// Expected and actual as a diff shows them: a mapping as it is, any other value under the
/// checkpoint's label, so a lone `3` still says what it is.
/// Expected and actual as a report shows them: cut before they are rendered (an implementation
/// may put tens of MiB in its DLQ), each side bounded.
fn shown(checkpoint: &Checkpoint) -> (String, String) {
    let side = |value: &serde_json::Value| {
        let value = truncate::value(value);
        let text = if checkpoint.expected.is_object() {
            yaml::render(&value)
        } else {
            yaml::render(&json!({ checkpoint.label.as_str(): value }))
        };
        truncate::text(text, truncate::MAX_SIDE_BYTES)
    };
    (side(&checkpoint.expected), side(&checkpoint.actual))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::text::source::Position;

    fn checkpoint(label: &str, expected: Value, actual: Value) -> Checkpoint {
        Checkpoint {
            position: Position { line: 3, column: 5 },
            label: label.to_owned(),
            expected,
            actual,
            written: Vec::new(),
        }
    }

    #[test]
    fn a_step_is_described_only_with_the_first_difference_found_in_it() {
        // Recording: the difference of step 2 gets step 2's text; later steps are not asked.
        let mut recorder = Recorder::new(RunMode::Record);
        let mut asked = Vec::new();
        for (step, actual) in [(1, 1), (2, 2), (3, 3)] {
            recorder.begin_step();
            let mut ran = recorder.compare(
                format!("step {step}"),
                checkpoint("n", json!(step.min(1)), json!(actual)),
                None,
            );
            recorder.describe_step(&mut ran, || {
                asked.push(step);
                Some(format!("process: {step}"))
            });
        }
        assert_eq!(asked, [2]);
        let Outcome::Mismatch(first) = recorder.stop() else {
            panic!("no mismatch");
        };
        assert_eq!(first.step_as_written.as_deref(), Some("process: 2"));
        // Checking: the run stops with a copy of the difference, which gets the text too, cut.
        let mut recorder = Recorder::new(RunMode::Check);
        recorder.begin_step();
        let mut ran = recorder.compare("step 1", checkpoint("n", json!(1), json!(2)), None);
        recorder.describe_step(&mut ran, || Some("x".repeat(MAX_STEP_BYTES + 1)));
        let Err(Outcome::Mismatch(stopped)) = ran else {
            panic!("not stopped");
        };
        let cut = format!("{}…", "x".repeat(MAX_STEP_BYTES));
        assert_eq!(stopped.step_as_written.as_deref(), Some(cut.as_str()));
        let Outcome::Mismatch(kept) = recorder.stop() else {
            panic!("no mismatch");
        };
        assert_eq!(kept, stopped);
    }

    #[test]
    fn checking_stops_at_the_first_difference() {
        let mut recorder = Recorder::new(RunMode::Check);
        assert!(
            recorder
                .compare(
                    "step 1 (process)",
                    checkpoint("n", json!(1), json!(1)),
                    None
                )
                .is_ok()
        );
        let stopped = recorder
            .compare(
                "step 2 (process)",
                checkpoint("n", json!(1), json!(2)),
                None,
            )
            .unwrap_err();
        let Outcome::Mismatch(mismatch) = &stopped else {
            panic!("not a mismatch: {stopped:?}");
        };
        assert_eq!(mismatch.step, "step 2 (process)");
        assert_eq!(&*mismatch.expected, "n: 1\n");
        assert_eq!(&*mismatch.actual, "n: 2\n");
        let run = recorder.finish(Some(stopped));
        // Only the checkpoint that differs is kept: nothing reads the others.
        assert_eq!(run.checkpoints.len(), 1);
        assert_eq!(run.checkpoints[0].actual, json!(2));
        // A checking run tells no timeline: nobody reads it.
        assert!(run.timeline.is_empty());
    }

    #[test]
    fn recording_goes_on_and_keeps_the_first_difference() {
        let mut recorder = Recorder::new(RunMode::Record);
        let first = checkpoint("s", json!({ "a": 1 }), json!({ "a": 2 }));
        let second = checkpoint("s", json!({ "a": 3 }), json!({ "a": 4 }));
        assert!(recorder.compare("first", first, Some("why".into())).is_ok());
        assert!(recorder.compare("second", second, None).is_ok());
        let Outcome::Mismatch(mismatch) = recorder.stop() else {
            panic!("no mismatch kept");
        };
        assert_eq!(
            (mismatch.step.as_str(), &*mismatch.expected),
            ("first", "a: 1\n")
        );
        assert_eq!(mismatch.note.as_deref(), Some("why"));
        let run = recorder.finish(None);
        assert!(matches!(run.outcome, Outcome::Mismatch(_)));
        assert_eq!(run.checkpoints.len(), 2);
        // Blessing and linting record, but nobody reads a timeline there: none is told.
        assert!(!recorder_telling(RunMode::Record) && recorder_telling(RunMode::Explain));
        assert!(run.timeline.is_empty());
    }

    fn recorder_telling(mode: RunMode) -> bool {
        Recorder::new(mode).telling()
    }

    #[test]
    fn a_stop_after_a_recorded_difference_does_not_change_the_verdict() {
        let mut recorder = Recorder::new(RunMode::Record);
        let differs = checkpoint("n", json!(1), json!(2));
        assert!(recorder.compare("step 1 (process)", differs, None).is_ok());
        let later = Outcome::Skipped("a later stop".into());
        let run = recorder.finish(Some(later));
        let Outcome::Mismatch(mismatch) = run.outcome else {
            panic!("the later stop won: {:?}", run.outcome);
        };
        assert_eq!(mismatch.step, "step 1 (process)");
    }

    #[test]
    fn exercised_rules_are_kept_once_in_first_order() {
        use crate::model::rule::Rule;
        const A: Rule = Rule {
            id: "c/a",
            statement: "",
        };
        const B: Rule = Rule {
            id: "c/b",
            statement: "",
        };
        let mut recorder = Recorder::new(RunMode::Explain);
        for rule in [&B, &A, &B] {
            recorder.exercise(rule, "why");
        }
        let run = recorder.finish(None);
        assert_eq!(run.exercised, ["c/b", "c/a"]);
        assert_eq!(run.timeline[0].line, "    rule c/b: why");
        assert_eq!(run.timeline[0].event, TimelineEvent::Rule);
    }

    #[test]
    fn a_rule_is_wanted_again_only_by_a_timeline() {
        use crate::model::rule::Rule;
        const A: Rule = Rule {
            id: "c/a",
            statement: "",
        };
        for (mode, again) in [
            (RunMode::Check, false),
            (RunMode::Record, false),
            (RunMode::Explain, true),
        ] {
            let mut recorder = Recorder::new(mode);
            assert!(recorder.wants(&A), "{mode:?}");
            recorder.exercise(&A, "why");
            assert_eq!(recorder.wants(&A), again, "{mode:?}");
        }
    }

    #[test]
    fn a_run_without_differences_passes() {
        let mut recorder = Recorder::new(RunMode::Explain);
        recorder.tell("start".to_owned());
        assert!(matches!(recorder.stop(), Outcome::Passed));
        let run = recorder.finish(None);
        assert!(matches!(run.outcome, Outcome::Passed));
        assert_eq!(run.timeline, vec![TimelineLine::note("start".to_owned())]);
    }
}
