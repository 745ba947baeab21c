//! Loading an outcome-queue spec: the file parsed, every check the YAML shape cannot make
//! told at once, and the scenario made.

use std::collections::HashMap;

use super::queue::{AttemptOutcome, valid_max_attempts};
use super::scenario::QueueScenario;
use super::spec::{OUTCOMES, ProcessStep, SpecFile, Step, shown, unportable_number};

use crate::contracts::contract::{Grading, SpecHeader};
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{SpecError, SpecErrors};
use crate::text::yaml::{self, Blanked};

/// Whether a queue exists at a point of the spec, as far as loading can tell.
enum QueueAt {
    /// No `create` yet.
    Missing,
    /// The last `create` (at this line) raises, so no queue exists.
    Raised(usize),
    /// A queue exists; the job ids submitted to it so far, with where each was submitted.
    Live(HashMap<String, Position>),
}

/// Parses an outcome-queue spec and checks what the YAML shape cannot, telling every
/// independent mistake at once: after a step that leaves no queue is told, the steps after
/// it are checked as if it had made one, so one missing `create` is one error.
pub(crate) fn load(file: &SourceFile) -> Result<QueueScenario, SpecError> {
    match yaml::parse_recovering::<SpecFile>(file) {
        Ok(spec) => check(file, spec, &Blanked::default()),
        // The rest of a broken file is checked too, so that one run tells every mistake.
        Err(broken) => Err(broken.checked(|spec, blanked| check(file, spec, blanked))),
    }
}

/// The checks of [`load`] on a decoded spec. `blanked` says where broken parts of the file
/// were blanked for it to decode: when a blanked step may have been a `create`, whether a
/// queue exists (and which jobs it holds) is not known, and is not checked.
fn check(file: &SourceFile, spec: SpecFile, blanked: &Blanked) -> Result<QueueScenario, SpecError> {
    let queue_known = !blanked.any(&["steps"], "create");
    let invalid = |position: Position, message: String| SpecError::invalid(file, position, message);
    let mut errors = SpecErrors::default();

    let grading = errors
        .keep(Grading::from_keys(
            file,
            spec.points.as_ref(),
            spec.visibility,
        ))
        .unwrap_or_default();
    let header = errors.keep(SpecHeader::new(
        file,
        spec.name,
        spec.description,
        &spec.rules,
        grading,
    ));
    let allow = errors.keep(crate::contracts::smell::allows(file, &spec.allow));
    if spec.steps.value.is_empty() {
        errors.push(invalid(
            yaml::at(&spec.steps),
            "`steps` is empty: the first step is `create: {max_attempts: ...}`".into(),
        ));
    }

    let mut queue = QueueAt::Missing;
    // Whether a queue is there for `what`; when not, an error, and one assumed from then on.
    let needs_queue =
        |queue: &mut QueueAt, what: &str, position: Position, errors: &mut SpecErrors| {
            let why = match queue {
                QueueAt::Live(_) => return,
                _ if !queue_known => {
                    *queue = QueueAt::Live(HashMap::new());
                    return;
                }
                QueueAt::Missing => format!(
                    "`{what}` needs a queue: the first step is `create: {{max_attempts: ...}}`"
                ),
                QueueAt::Raised(line) => format!(
                    "`{what}` needs a queue, but the `create` at line {line} raises and leaves none"
                ),
            };
            errors.push(invalid(position, why));
            *queue = QueueAt::Live(HashMap::new());
        };

    let mut steps = Vec::with_capacity(spec.steps.value.len());
    for step in spec.steps.value {
        let position = yaml::at(&step);
        let step = step.value.0;
        if !matches!(step, Step::Create(_)) {
            needs_queue(&mut queue, step.name(), position, &mut errors);
        }
        match &step {
            Step::Create(create) => {
                let raw = &create.max_attempts.value;
                if let Some(why) = unportable_number(raw) {
                    errors.push(invalid(yaml::at(&create.max_attempts), why));
                    queue = QueueAt::Live(HashMap::new());
                } else {
                    match (valid_max_attempts(raw), &create.raises) {
                        (Some(_), Some(raises)) => {
                            errors.push(invalid(
                                yaml::at(raises),
                                format!(
                                    "RetryQueue({}) raises nothing: it is a valid max_attempts; remove `raises`",
                                    shown(raw)
                                ),
                            ));
                            queue = QueueAt::Live(HashMap::new());
                        }
                        (None, None) => {
                            errors.push(invalid(
                                yaml::at(&create.max_attempts),
                                format!(
                                    "RetryQueue({}) raises ValueError (max_attempts must be an integer >= 1): add `raises: invalid_argument`",
                                    shown(raw)
                                ),
                            ));
                            queue = QueueAt::Live(HashMap::new());
                        }
                        (Some(_), None) => queue = QueueAt::Live(HashMap::new()),
                        (None, Some(_)) => queue = QueueAt::Raised(position.line),
                    }
                }
            }
            Step::Submit(submit) => {
                if let QueueAt::Live(submitted) = &mut queue {
                    let id = &submit.id;
                    if let Some(first) = submitted.get(&id.value)
                        && queue_known
                    {
                        errors.push(invalid(
                            yaml::at(id),
                            format!(
                                "job `{}` is already submitted at line {}: job ids are unique",
                                id.value, first.line
                            ),
                        ));
                    } else {
                        submitted.insert(id.value.clone(), yaml::at(id));
                    }
                }
            }
            Step::Process(process) => {
                errors.keep(check_process(file, position, &process.0));
            }
            Step::MutateState(ops) => {
                if ops.is_empty() {
                    errors.push(invalid(
                        position,
                        "`mutate_state` needs at least one op".into(),
                    ));
                }
                for op in ops {
                    if let Err(why) = op.value.0.check_path() {
                        errors.push(invalid(yaml::at(op), why));
                    }
                }
            }
            Step::Replay(_) | Step::Expect(_) => {}
        }
        steps.push((position, step));
    }
    let expect = match spec.expect {
        Some(expect) => {
            let position = yaml::at(&expect);
            needs_queue(&mut queue, "expect", position, &mut errors);
            Some((position, expect.value))
        }
        None => None,
    };
    errors.check()?;
    let (Some(mut header), Some(allow)) = (header, allow) else {
        unreachable!("a header that is not made is an error gathered above");
    };
    header.allow = allow;

    Ok(QueueScenario {
        file: file.clone(),
        header,
        steps,
        expect,
    })
}

fn check_process(
    file: &SourceFile,
    position: Position,
    step: &ProcessStep,
) -> Result<(), SpecError> {
    let invalid = |position: Position, message: String| SpecError::invalid(file, position, message);
    let raw = &step.outcome.value;
    let valid = AttemptOutcome::parse(raw).is_some();
    match (&step.returns, &step.raises) {
        (None, None) => Err(invalid(
            position,
            "a `process` step needs `returns: done|retry|dead|none` or `raises: invalid_argument`"
                .into(),
        )),
        (Some(_), Some(raises)) => Err(invalid(
            yaml::at(raises),
            "a `process` step has `returns` or `raises`, not both".into(),
        )),
        (Some(_), None) if !valid => {
            // A near miss of a valid outcome is a typo first, and only then a test of
            // validation: say so before advising to assert the error.
            let typo = raw
                .as_str()
                .and_then(|text| crate::text::suggest::nearest(text, &OUTCOMES));
            let message = match typo {
                Some(near) => format!(
                    "`{}` is not an outcome: did you mean `{near}`? (To check that process({}) raises ValueError, write `raises: invalid_argument` instead of `returns`.)",
                    raw.as_str().unwrap_or_default(),
                    shown(raw)
                ),
                None => format!(
                    "process({}) raises ValueError (the outcome must be \"success\", \"transient\" or \"permanent\"{}): write `raises: invalid_argument` instead of `returns`",
                    shown(raw),
                    raw.as_str()
                        .and_then(|text| crate::text::suggest::closest(text, &OUTCOMES)
                            .map(|c| format!("; the nearest to {} is \"{c}\"", shown(raw))))
                        .unwrap_or_default()
                ),
            };
            Err(invalid(yaml::at(&step.outcome), message))
        }
        (None, Some(raises)) if valid => Err(invalid(
            yaml::at(raises),
            format!(
                "process({}) does not raise: it is a valid outcome; write `returns: ...` instead of `raises`",
                shown(raw)
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::contract::{assert_error_lists, assert_fast_load_agrees};
    use crate::contracts::outcome_queue::spec::*;
    use serde_json::{Value, json};

    #[test]
    fn the_step_kinds_are_the_ones_an_unknown_step_lists() {
        let loaded = load_text("contract: outcome-queue\nname: x\nsteps:\n  - nope\n");
        assert_error_lists(loaded, STEP_KINDS);
    }

    #[test]
    fn the_fast_load_reads_every_bundled_spec_and_its_variations_as_serde_saphyr_does() {
        assert_fast_load_agrees::<SpecFile>("outcome-queue", 500);
    }

    fn load_text(text: &str) -> Result<QueueScenario, SpecError> {
        load(&SourceFile::from_text("t.yaml", text))
    }

    fn error(text: &str) -> String {
        match load_text(text) {
            Ok(_) => panic!("loaded: {text}"),
            Err(error) => error.to_string(),
        }
    }

    const HEAD: &str = "contract: outcome-queue\nname: t\n";

    fn with_steps(steps: &str) -> String {
        format!("{HEAD}steps:\n{steps}")
    }

    #[test]
    fn a_full_spec_loads() {
        let text = with_steps(
            "  - create: {max_attempts: 2}\n  - submit: {id: a, payload: p}\n  - process: {outcome: transient, returns: retry}\n  - process: {outcome: 7, raises: invalid_argument}\n  - mutate_state:\n      - clear: [quarantine]\n      - set: {path: [ready, 0, payload], value: x}\n  - replay: {id: a, returns: false}\n  - expect: {ready: [{id: a, payload: p, attempts: 1}], done: [], quarantine: []}\n  - create: {max_attempts: null, raises: invalid_argument}\n",
        );
        let scenario = load_text(&text).unwrap();
        assert_eq!(scenario.steps.len(), 8);
        let Step::Create(create) = &scenario.steps[7].1 else {
            panic!("not a create")
        };
        assert_eq!(create.max_attempts.value, Value::Null);
        assert_eq!(scenario.steps[7].0, Position::new(13, 5));
    }

    #[test]
    fn any_yaml_value_reaches_the_constructor_as_written() {
        for (written, value) in [
            ("0", json!(0)),
            ("-1", json!(-1)),
            ("2.5", json!(2.5)),
            ("true", json!(true)),
            ("\"3\"", json!("3")),
            ("~", Value::Null),
        ] {
            let text = with_steps(&format!(
                "  - create: {{max_attempts: {written}, raises: invalid_argument}}\n"
            ));
            let scenario = load_text(&text).unwrap();
            let Step::Create(create) = &scenario.steps[0].1 else {
                panic!("not a create")
            };
            assert_eq!(create.max_attempts.value, value, "{written}");
        }
    }

    #[test]
    fn steps_must_exist_and_start_with_a_queue() {
        assert_eq!(
            error(&format!("{HEAD}steps: []\n")),
            "t.yaml:3:8: `steps` is empty: the first step is `create: {max_attempts: ...}`"
        );
        assert_eq!(
            error(&with_steps("  - submit: {id: a, payload: p}\n")),
            "t.yaml:4:5: `submit` needs a queue: the first step is `create: {max_attempts: ...}`"
        );
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 0, raises: invalid_argument}\n  - process: {outcome: success, returns: none}\n"
            )),
            "t.yaml:5:5: `process` needs a queue, but the `create` at line 4 raises and leaves none"
        );
        assert_eq!(
            error(&format!(
                "{}expect: {{ready: [], done: [], quarantine: []}}\n",
                with_steps("  - create: {max_attempts: false, raises: invalid_argument}\n")
            )),
            "t.yaml:5:9: `expect` needs a queue, but the `create` at line 4 raises and leaves none"
        );
    }

    #[test]
    fn construction_must_expect_what_the_contract_does() {
        assert_eq!(
            error(&with_steps("  - create: {max_attempts: true}\n")),
            "t.yaml:4:28: RetryQueue(true) raises ValueError (max_attempts must be an integer >= 1): add `raises: invalid_argument`"
        );
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 3, raises: invalid_argument}\n"
            )),
            "t.yaml:4:39: RetryQueue(3) raises nothing: it is a valid max_attempts; remove `raises`"
        );
        assert_eq!(
            error(&with_steps("  - create: {}\n")),
            "t.yaml:4:13: missing field `max_attempts`"
        );
    }

    /// 3.0 and 2^53 are numbers the lesson's languages read differently: no spec sends them.
    #[test]
    fn a_max_attempts_the_languages_read_differently_is_refused() {
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 3.0, raises: invalid_argument}\n"
            )),
            "t.yaml:4:28: `3.0` is a whole number written with a fraction: JavaScript reads it as the integer 3, Python as a float, so the lesson's languages disagree on it: write 3, or a true fraction such as 2.5"
        );
        assert_eq!(
            error(&with_steps(
                "  - create: {max_attempts: 9007199254740992}\n"
            )),
            "t.yaml:4:28: `9007199254740992` is beyond 2^53 - 1, which a JavaScript number cannot hold exactly, so implementations would read different budgets: write an integer from -9007199254740991 to 9007199254740991"
        );
        assert!(
            error(&with_steps(
                "  - create: {max_attempts: -9007199254740992, raises: invalid_argument}\n"
            ))
            .contains("is beyond 2^53 - 1")
        );
        for fine in [
            "  - create: {max_attempts: 9007199254740991}\n",
            "  - create: {max_attempts: 2.5, raises: invalid_argument}\n",
            "  - create: {max_attempts: 3000000000}\n",
        ] {
            assert!(load_text(&with_steps(fine)).is_ok(), "{fine}");
        }
    }

    #[test]
    fn a_typo_of_an_outcome_is_suggested_not_asserted() {
        let create = "  - create: {max_attempts: 1}\n";
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: succes, returns: done}}\n"
            ))),
            "t.yaml:5:24: `succes` is not an outcome: did you mean `success`? (To check that process(\"succes\") raises ValueError, write `raises: invalid_argument` instead of `returns`.)"
        );
    }

    #[test]
    fn process_must_expect_what_the_contract_does() {
        let create = "  - create: {max_attempts: 1}\n";
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: explode, returns: none}}\n"
            ))),
            "t.yaml:5:24: process(\"explode\") raises ValueError (the outcome must be \"success\", \"transient\" or \"permanent\"; the nearest to \"explode\" is \"success\"): write `raises: invalid_argument` instead of `returns`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: success, raises: invalid_argument}}\n"
            ))),
            "t.yaml:5:41: process(\"success\") does not raise: it is a valid outcome; write `returns: ...` instead of `raises`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: success}}\n"
            ))),
            "t.yaml:5:5: a `process` step needs `returns: done|retry|dead|none` or `raises: invalid_argument`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: 1, returns: none, raises: invalid_argument}}\n"
            ))),
            "t.yaml:5:50: a `process` step has `returns` or `raises`, not both"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - process: {{outcome: success, returns: ok}}\n"
            ))),
            "t.yaml:5:42: unknown value `ok` (the nearest valid one is `done`), expected one of done, retry, dead, none"
        );
    }

    #[test]
    fn job_ids_are_unique_per_queue() {
        let steps = "  - create: {max_attempts: 1}\n  - submit: {id: a, payload: p}\n  - submit: {id: a, payload: q}\n";
        assert_eq!(
            error(&with_steps(steps)),
            "t.yaml:6:18: job `a` is already submitted at line 5: job ids are unique"
        );
        let fresh = steps.replacen(
            "  - submit: {id: a, payload: q}\n",
            "  - create: {max_attempts: 2}\n  - submit: {id: a, payload: q}\n",
            1,
        );
        assert!(load_text(&with_steps(&fresh)).is_ok());
    }

    #[test]
    fn mutation_paths_are_checked() {
        let create = "  - create: {max_attempts: 1}\n";
        assert_eq!(
            error(&with_steps(&format!("{create}  - mutate_state: []\n"))),
            "t.yaml:5:5: `mutate_state` needs at least one op"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state:\n      - clear: [ready]\n      - delete: [dead, 0]\n"
            ))),
            "t.yaml:7:9: a state path starts with `ready`, `done` or `quarantine`, not `dead`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state: [{{delete: [ready, -1]}}]\n"
            ))),
            "t.yaml:5:37: a path index counts from 0; got -1"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state: [{{set: {{path: [ready, 0]}}}}]\n"
            ))),
            "t.yaml:5:27: missing field `value`"
        );
        assert_eq!(
            error(&with_steps(&format!(
                "{create}  - mutate_state:\n      - clear\n"
            ))),
            "t.yaml:6:9: `clear` needs a value: write `clear: ...`"
        );
    }

    #[test]
    fn expectations_name_every_field() {
        let text = with_steps(
            "  - create: {max_attempts: 1}\n  - expect: {ready: [{id: a, payload: p}], done: [], quarantine: []}\n",
        );
        assert_eq!(error(&text), "t.yaml:5:30: missing field `attempts`");
        let text = with_steps("  - create: {max_attempts: 1}\n  - expect: {ready: [], done: []}\n");
        assert_eq!(error(&text), "t.yaml:5:25: missing field `quarantine`");
        let text = with_steps(
            "  - create: {max_attempts: 1}\n  - expect: {ready: [], done: [], quarantine: [], dead: []}\n",
        );
        assert!(
            error(&text).starts_with("t.yaml:5:51: unknown field `dead`"),
            "{}",
            error(&text)
        );
    }

    #[test]
    fn normalize_puts_the_contract_keys_first() {
        let view = json!({
            "extra": 1,
            "quarantine": [{"reason": "permanent", "id": "a", "attempts": 1, "payload": "p"}],
            "done": [],
            "ready": [],
        });
        let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
        let normal = normalize_state(&view);
        assert_eq!(keys(&normal), ["ready", "done", "quarantine", "extra"]);
        assert_eq!(
            keys(&normal["quarantine"][0]),
            ["id", "payload", "attempts", "reason"]
        );
    }
}
