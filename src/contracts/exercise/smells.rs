//! An exercise's smells `dlqspec lint` reports: what its probed run shows, told as the
//! contract-neutral facts `contracts/smells.rs` finds the smells in, in the exercise's words.
//!
//! A step changed something when a state view, a given part's record or the clock differs
//! after it (the marks of a probed run hold them all); `expect` and `mutate_VIEW` check, a
//! call (`create` and `restart` too) answers, `advance` only acts. A callable given part's
//! scripted answers are used one a call. An exercise spec writes no thing up front that a run
//! may leave untouched (a dlq-consumer spec's messages): whatever enters does so by a step,
//! so it has no `never-delivered`.

use serde_json::{Value, json};

use super::scenario::{ExerciseScenario, Played, reply_value};
use super::vocabulary::Step;
use crate::contracts::contract::Smell;
use crate::contracts::smells::{
    self, Facts, IdleWords, Role, ScriptedFact, StepFact, Terms, UnusedWords,
};

/// Every exercise's words.
const TERMS: Terms = Terms {
    idle: IdleWords {
        repeats: "with the same arguments and answer",
        trails: "after the last change",
        repeat_fix: ": leave it out, or change something between the two",
        act_fix: ": leave it out",
    },
    unused: UnusedWords {
        outcome: "scripted answer",
        things: "given parts",
        callee: None,
        fix: "; script only as many answers as the calls the run makes",
    },
    never_used: None,
};

/// The smells of `scenario`'s probed run.
pub(crate) fn find(scenario: &ExerciseScenario, played: &Played) -> Vec<Smell> {
    let facts = Facts {
        steps: steps(scenario, played),
        scripted: scenario
            .loaded
            .script_positions
            .iter()
            .map(|(part, positions)| ScriptedFact {
                id: part,
                positions,
                calls: played.calls.get(part).copied().unwrap_or(0),
            })
            .collect(),
        things: Vec::new(),
        checkpoints: &played.run.checkpoints,
    };
    smells::find(&facts, &TERMS)
}

/// What each step that ran did, from its mark: whether the views, records and clock after it
/// differ from those after the step before (before the first, no instance at time 0).
fn steps(scenario: &ExerciseScenario, played: &Played) -> Vec<StepFact> {
    let mut facts = Vec::new();
    let mut before: (&[(String, Value)], Value) = (&[], json!(0));
    for (index, placed) in scenario.loaded.steps.iter().enumerate() {
        // A step without a mark did not run (the run stopped), or found no instance to restart.
        let Some(mark) = played.marks.iter().find(|mark| mark.step == index) else {
            continue;
        };
        let after = (mark.after.as_slice(), mark.now.clone());
        let role = match &placed.step {
            Step::Expect { .. } | Step::Mutate { .. } => Role::Check,
            Step::Advance { .. } => Role::Act,
            Step::Create { .. } | Step::Call { .. } | Step::Restart => Role::Call(Some(json!({
                "args": mark.args,
                "answer": mark.reply.as_ref().map(reply_value),
            }))),
        };
        facts.push(StepFact {
            number: index + 1,
            position: placed.position,
            name: placed.step.kind().to_owned(),
            changed: after != before,
            settled: true,
            role,
        });
        before = after;
    }
    facts
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use super::super::definition::{Exercise, check};
    use super::super::vocabulary::load;
    use super::*;
    use crate::contracts::contract::RunMode;
    use crate::model::implementation::{ImplError, ImplInfo, Implementation, Reply, WorldHost};
    use crate::text::source::SourceFile;
    use crate::text::yaml;

    /// A toy exercise: `add(n)` asks the scripted `gate` and adds `n` unless it answers
    /// false; `peek()` returns the total; the clock is given, for `advance`.
    const TOY: &str = "exercise: toy\ntitle: t\nclass: Toy\nreference: \"cmd:toy\"\ngiven:\n  gate: {kind: callable}\n  clock: {kind: clock}\ncreate:\n  args:\n    gate: {given: gate}\n    clock: {given: clock}\nmethods:\n  add:\n    args:\n      n: {draw: [1]}\n  peek: {}\nviews:\n  state: {}\nrules:\n  - id: r\n    says: s\n    decides: [{call: add}]\n";

    /// The toy, in Rust.
    struct Toy(i64);

    impl Implementation for Toy {
        fn info(&self) -> ImplInfo {
            ImplInfo {
                label: "toy".into(),
                language: "rust".into(),
                is_reference: true,
            }
        }

        fn create(
            &mut self,
            _: &str,
            _: &Value,
            _: &mut dyn WorldHost,
        ) -> Result<Reply, ImplError> {
            self.0 = 0;
            Ok(Reply::Returned(Value::Null))
        }

        fn call(
            &mut self,
            method: &str,
            args: &[Value],
            world: &mut dyn WorldHost,
        ) -> Result<Reply, ImplError> {
            Ok(Reply::Returned(match method {
                "add" => {
                    if world.world_call("gate", args) == Ok(json!(false)) {
                        json!(false)
                    } else {
                        self.0 += args[0].as_i64().unwrap_or(0);
                        json!(true)
                    }
                }
                "peek" => json!(self.0),
                _ => json!({"total": self.0}),
            }))
        }
    }

    fn smells_of(spec: &str) -> Vec<String> {
        let file = SourceFile::from_text("exercise.yaml", TOY);
        let exercise: &'static Exercise = Box::leak(Box::new(
            check(
                Path::new("."),
                &file,
                yaml::parse(&file).expect("it parses"),
            )
            .expect("it checks"),
        ));
        let file = SourceFile::from_text(
            "t.yaml",
            format!("contract: toy\nname: t\nrules: [toy/r]\n{spec}"),
        );
        let scenario = ExerciseScenario {
            exercise,
            loaded: load(exercise, &file).expect("it loads"),
            file,
        };
        let played = scenario.play(&mut Toy(0), RunMode::Record, true);
        assert!(
            matches!(played.run.outcome, crate::model::outcome::Outcome::Passed),
            "{:?}",
            played.run.outcome
        );
        crate::contracts::smells::tests::told(&find(&scenario, &played))
    }

    #[test]
    fn a_call_repeated_after_the_last_change_and_a_clock_that_does_not_move_are_idle() {
        let smells = smells_of(
            "steps:\n  - create: {}\n  - add: {n: 1, returns: true}\n  - peek: {returns: 1}\n  - expect: {state: {total: 1}}\n  - peek: {returns: 1}\n  - advance: 0\n",
        );
        assert_eq!(
            smells,
            [
                "9:5: idle-trailing-step: step 5 (peek) repeats step 3 with the same arguments and answer and changes nothing: leave it out, or change something between the two",
                "10:5: idle-trailing-step: step 6 (advance) comes after the last change and changes nothing: leave it out",
            ]
        );
    }

    #[test]
    fn a_view_a_record_or_the_clock_that_moves_is_a_change() {
        // The second peek follows a move of the clock; the adds that change no view still call
        // the gate, whose record grows.
        let smells = smells_of(
            "script:\n  gate: [{returns: false}, {returns: false}]\nsteps:\n  - create: {}\n  - peek: {returns: 0}\n  - advance: 2\n  - peek: {returns: 0}\n  - add: {n: 1, returns: false}\n  - add: {n: 1, returns: false}\n  - expect: {gate: [[1], [1]]}\n",
        );
        assert_eq!(smells, Vec::<String>::new());
    }

    #[test]
    fn scripted_answers_beyond_the_calls_made_are_unused_from_the_first_one_left() {
        let smells = smells_of(
            "script:\n  gate:\n    - {returns: true}\n    - {returns: false}\n    - {returns: true}\nsteps:\n  - create: {}\n  - add: {n: 1, returns: true}\n",
        );
        assert_eq!(
            smells,
            [
                "7:7: unused-outcomes: the 2nd scripted answer of `gate` and the 2 from there are never used: `gate` is called once; script only as many answers as the calls the run makes",
            ]
        );
        let smells = smells_of(
            "script:\n  gate: [{returns: false}]\nsteps:\n  - create: {}\n  - peek: {returns: 0}\n",
        );
        assert_eq!(
            smells,
            [
                "5:10: unused-outcomes: the 1st scripted answer of `gate` is never used: `gate` is never called; script only as many answers as the calls the run makes",
            ]
        );
    }
}
