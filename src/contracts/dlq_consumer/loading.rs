//! Loading a dlq-consumer spec: the file parsed, every check the YAML shape cannot make told
//! at once, the compact forms expanded, and the scenario made.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::compact;
use super::handler::{PERMANENT_ERROR, TRANSIENT_ERROR, check_subclass};
use super::scenario::DlqScenario;
use super::spec::{Expectation, FaultSpec, MessageSpec, SpecFile, Step, check_fault_call};

use super::world::{MAX_CLOCK, ScriptedCall, ScriptedOutcome};
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::{SpecError, SpecErrors};
use crate::text::yaml::{self, Blanked, SingleKey, Spanned};

/// Parses a dlq-consumer spec and checks what the YAML shape cannot, telling every
/// independent mistake at once (a check that later ones depend on, such as the compact
/// form's expansion, stops there).
pub(crate) fn load(file: &SourceFile) -> Result<DlqScenario, SpecError> {
    match yaml::parse_recovering::<SpecFile>(file) {
        Ok(spec) => check(file, spec, &Blanked::default()),
        // The rest of a broken file is checked too, so that one run tells every mistake.
        Err(broken) => Err(broken.checked(|spec, blanked| check(file, spec, blanked))),
    }
}

/// The checks of [`load`] on a decoded spec. `blanked` says where broken parts of the file
/// were blanked for it to decode: an id they may define is not known missing, so the checks
/// of ids are skipped when a message or a `send` was (a handler entry for `a` when the
/// message `a` was broken).
fn check(file: &SourceFile, spec: SpecFile, blanked: &Blanked) -> Result<DlqScenario, SpecError> {
    // A step defines an id only by sending it (`send`, inside a `repeat` too).
    let ids_complete =
        !blanked.any(&["messages", "generate"], "") && !blanked.any(&["steps"], "send");
    let invalid = |position: Position, message: String| SpecError::invalid(file, position, message);
    let mut errors = SpecErrors::default();

    let header = spec.header(file, &mut errors);
    let max_attempts = match &spec.max_attempts {
        Some(m) if m.value == 0 => {
            errors.push(invalid(
                yaml::at(m),
                "`max_attempts` must be at least 1".into(),
            ));
            None
        }
        Some(m) => Some(m.value),
        None => None,
    };

    let mut known_ids: HashSet<String> = HashSet::new();
    for message in &spec.messages {
        if !known_ids.insert(message.value.id.clone()) {
            errors.push(invalid(
                yaml::at(message),
                format!("duplicate message id `{}`", message.value.id),
            ));
        }
    }
    let mut expansion = compact::Expansion::default();
    let generated = match compact::generate(file, &spec.generate, &mut expansion) {
        Ok(generated) => generated,
        Err(error) => return Err(errors.stop(error)),
    };
    for message in &generated {
        if !known_ids.insert(message.id.clone()) {
            errors.push(invalid(
                message.at,
                format!("duplicate message id `{}`", message.id),
            ));
        }
    }
    let flat = match compact::flatten(file, spec.steps, &mut expansion) {
        Ok(flat) => flat,
        Err(error) => return Err(errors.stop(error)),
    };
    for (_, step) in &flat {
        if let Step::Send(message) = step {
            known_ids.insert(message.id.clone());
        }
    }
    if !ids_complete {
        // A message `none` may be among the blanked ones: `queue.receive() -> none` is not
        // known to deliver nothing.
        known_ids.insert("none".to_owned());
    }

    // How far the handler's calls may move the clock, all together: each scripted call runs
    // at most once, so a spec's `takes` and `advance` steps bound where the clock can get.
    let mut handler_time = HandlerTime::default();
    for (_, outcomes) in &spec.handler {
        handler_time.add(file, outcomes, 1, &mut errors);
    }
    for group in &spec.generate {
        if let Some(list) = &group.value.handler {
            handler_time.add(file, &list.value, group.value.count.value, &mut errors);
        }
    }
    let mut script = HashMap::new();
    let mut script_positions = HashMap::new();
    let mut outcome_positions = HashMap::new();
    for (id, outcomes) in &spec.handler {
        if !known_ids.contains(&id.value) && !ids_complete {
            continue;
        }
        if !known_ids.contains(&id.value) {
            let mut known: Vec<_> = known_ids.iter().map(String::as_str).collect();
            known.sort_unstable();
            errors.push(invalid(
                yaml::at(id),
                format!(
                    "handler outcomes for unknown message `{}`; the messages are: {}",
                    id.value,
                    if known.is_empty() {
                        "(none)".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
            continue;
        }
        script.insert(
            id.value.clone(),
            outcomes.iter().map(|o| o.value.0.clone()).collect(),
        );
        script_positions.insert(id.value.clone(), yaml::at(id));
        outcome_positions.insert(id.value.clone(), outcomes.iter().map(yaml::at).collect());
    }
    for message in &generated {
        let Some(group) = &message.outcomes else {
            continue;
        };
        if script.contains_key(&message.id) {
            errors.push(invalid(
                group.at,
                format!(
                    "message `{}` has outcomes both here and under `handler`: keep one",
                    message.id
                ),
            ));
            continue;
        }
        script.insert(message.id.clone(), Arc::clone(&group.outcomes));
        script_positions.insert(message.id.clone(), group.at);
        outcome_positions.insert(message.id.clone(), Arc::clone(&group.positions));
    }

    let mut steps = Vec::with_capacity(flat.len());
    let mut clock: u64 = 0;
    for (position, step) in flat {
        match &step {
            Step::Advance(by) => match clock.checked_add(*by).filter(|at| *at <= MAX_CLOCK) {
                Some(at) => clock = at,
                None => errors.push(invalid(
                    position,
                    format!(
                        "`advance: {by}` would move the clock from {clock} past {MAX_CLOCK}, the most it counts to (2^53 - 1, the largest whole number every implementation's JSON keeps exact)"
                    ),
                )),
            },
            Step::Replay(replay) if replay.crash && replay.returns.is_some() => {
                errors.push(invalid(
                    position,
                    "a replay step cannot both `crash` and expect `returns`".into(),
                ));
            }
            Step::Fault(FaultSpec { nth: Some(nth), .. }) if nth.value == 0 => {
                errors.push(invalid(yaml::at(nth), "`nth` counts from 1".into()));
            }
            Step::Fault(FaultSpec { call, .. }) => {
                if let Err(why) = check_fault_call(&call.value) {
                    errors.push(invalid(yaml::at(call), why));
                }
            }
            Step::Expect(expect) => check_trace(file, expect, &known_ids, &mut errors),
            _ => {}
        }
        steps.push((position, step));
    }
    if let Some(first) = handler_time.first
        && clock
            .checked_add(handler_time.total)
            .is_none_or(|at| at > MAX_CLOCK)
    {
        errors.push(invalid(
            first,
            format!(
                "the handler's calls take {} in all and the `advance` steps {clock}: together they could move the clock past {MAX_CLOCK}, the most it counts to (2^53 - 1, the largest whole number every implementation's JSON keeps exact)",
                handler_time.total
            ),
        ));
    }
    let mut expect = spec.expect.map(|e| (yaml::at(&e), e.value));
    if let Some((_, expect)) = &mut expect {
        if let Err(error) = compact::expand_entries(file, expect, &mut expansion) {
            return Err(errors.stop(error));
        }
        check_trace(file, expect, &known_ids, &mut errors);
    }
    errors.check()?;
    let Some(header) = header else {
        unreachable!("a header that is not made is an error gathered above");
    };

    Ok(DlqScenario {
        file: file.clone(),
        header,
        max_attempts,
        message_positions: spec
            .messages
            .iter()
            .map(yaml::at)
            .chain(generated.iter().map(|m| m.at))
            .collect(),
        messages: spec
            .messages
            .into_iter()
            .map(|m| m.value)
            .chain(generated.into_iter().map(|m| MessageSpec {
                id: m.id,
                body: m.body,
            }))
            .collect(),
        script: Arc::new(script),
        script_positions,
        outcome_positions,
        steps,
        expect,
    })
}

/// The time a spec's handler calls may take, all together, and where the first one that
/// takes any is written.
#[derive(Default)]
struct HandlerTime {
    total: u64,
    first: Option<Position>,
}

impl HandlerTime {
    /// Counts a list of outcomes that `messages` messages run, each call once, and gathers an
    /// error for each subclass that cannot be one.
    fn add(
        &mut self,
        file: &SourceFile,
        outcomes: &[Spanned<SingleKey<ScriptedCall>>],
        messages: u64,
        errors: &mut SpecErrors,
    ) {
        for outcome in outcomes {
            let call = &outcome.value.0;
            if call.takes > 0 {
                self.first.get_or_insert(yaml::at(outcome));
                self.total = self
                    .total
                    .saturating_add(call.takes.saturating_mul(messages));
            }
            let (given, error) = match &call.outcome {
                ScriptedOutcome::Transient(error) => (TRANSIENT_ERROR, error),
                ScriptedOutcome::Permanent(error) => (PERMANENT_ERROR, error),
                _ => continue,
            };
            if let Some(class) = &error.subclass
                && let Err(why) = check_subclass(class, given)
            {
                errors.push(SpecError::invalid(file, yaml::at(outcome), why));
            }
        }
    }
}

/// Gathers an error for each trace line that is not an effect, pointing at it.
fn check_trace(
    file: &SourceFile,
    expect: &Expectation,
    ids: &HashSet<String>,
    errors: &mut SpecErrors,
) {
    for line in expect.trace.iter().flatten() {
        if let Err(message) = super::trace::check_line(&line.value, ids) {
            errors.push(SpecError::invalid(file, yaml::at(line), message));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::contract::{assert_error_lists, assert_fast_load_agrees};
    use crate::contracts::dlq_consumer::spec::{PROCESS_RETURNS, STEP_KINDS};

    #[test]
    fn the_process_returns_are_the_ones_a_wrong_one_lists() {
        let loaded = load_text("contract: dlq-consumer\nname: x\nsteps:\n  - process: nope\n");
        assert_error_lists(loaded, PROCESS_RETURNS);
    }

    #[test]
    fn the_step_kinds_are_the_ones_an_unknown_step_lists() {
        let loaded = load_text("contract: dlq-consumer\nname: x\nsteps:\n  - nope\n");
        assert_error_lists(loaded, STEP_KINDS);
    }

    #[test]
    fn the_fast_load_reads_every_bundled_spec_and_its_variations_as_serde_saphyr_does() {
        assert_fast_load_agrees::<SpecFile>("dlq-consumer", 1000);
    }

    fn load_text(text: &str) -> Result<DlqScenario, SpecError> {
        load(&SourceFile::from_text("t.yaml", text))
    }

    const HEAD: &str = "contract: dlq-consumer\nname: t\n";

    #[test]
    fn a_minimal_spec_loads_with_the_default_budget() {
        let scenario = load_text(HEAD).unwrap();
        assert_eq!(scenario.max_attempts, None);
        assert_eq!(
            scenario.budget(),
            super::super::consumer::DEFAULT_MAX_ATTEMPTS
        );
    }

    #[test]
    fn duplicate_message_ids_are_a_spec_error_at_the_second_one() {
        let text = format!("{HEAD}messages:\n  - {{id: a, body: x}}\n  - {{id: a, body: y}}\n");
        let error = load_text(&text).unwrap_err();
        assert_eq!(error.to_string(), "t.yaml:5:5: duplicate message id `a`");
    }

    #[test]
    fn outcomes_for_an_unknown_message_name_the_known_ones() {
        let text = format!("{HEAD}messages: [{{id: a, body: x}}]\nhandler:\n  b: [ok]\n");
        let error = load_text(&text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.yaml:5:3: handler outcomes for unknown message `b`; the messages are: a"
        );
    }

    #[test]
    fn a_message_sent_by_a_step_may_have_outcomes() {
        let text = format!("{HEAD}handler:\n  c: [ok]\nsteps:\n  - send: {{id: c, body: z}}\n");
        assert!(load_text(&text).is_ok());
    }

    #[test]
    fn an_entry_without_error_is_rejected() {
        let text = format!(
            "{HEAD}expect:\n  dlq:\n    - {{id: a, body: x, reason: poison, attempts: 3, first_attempt_at: 0, failed_at: 0}}\n"
        );
        let error = load_text(&text).unwrap_err();
        assert!(
            error.message.contains("missing field `error`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn zero_max_attempts_is_rejected() {
        let error = load_text(&format!("{HEAD}max_attempts: 0\n")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.yaml:3:15: `max_attempts` must be at least 1"
        );
    }

    #[test]
    fn advancing_the_clock_past_its_range_is_a_spec_error() {
        let text = format!("{HEAD}steps:\n  - advance: 9007199254740990\n  - advance: 2\n");
        let error = load_text(&text).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "t.yaml:5:5: `advance: 2` would move the clock from 9007199254740990 past 9007199254740991"
            ),
            "{error}"
        );
        let huge = format!("{HEAD}steps:\n  - advance: 18446744073709551615\n  - advance: 1\n");
        assert!(load_text(&huge).is_err());
        let fits = format!("{HEAD}steps:\n  - advance: 9007199254740990\n  - advance: 1\n");
        assert!(load_text(&fits).is_ok());
    }

    #[test]
    fn a_subclass_named_after_a_given_class_is_a_spec_error_at_its_outcome() {
        let text = format!(
            "{HEAD}messages: [{{id: a, body: x}}]\nhandler:\n  a: [ok, permanent: {{class: TransientError, message: m}}]\n"
        );
        let error = load_text(&text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.yaml:5:11: `TransientError` is a class of the given module, not a subclass of PermanentError: name a subclass of PermanentError of your own, e.g. `OutOfStockError`"
        );
    }

    #[test]
    fn handler_calls_that_could_take_the_clock_past_its_range_are_a_spec_error() {
        let spec = |takes: u64, count: u64| {
            format!(
                "{HEAD}generate:\n  - {{count: {count}, id: \"m{{n}}\", body: \"b{{n}}\", handler: [transient: {{message: t, takes: {takes}}}]}}\nsteps:\n  - advance: 1\n"
            )
        };
        // Two messages each taking half the range, and one advance: the clock's last value.
        assert!(load_text(&spec(MAX_CLOCK / 2, 2)).is_ok());
        let error = load_text(&spec(MAX_CLOCK / 2 + 1, 2)).unwrap_err();
        assert!(
            error.to_string().starts_with(&format!(
                "t.yaml:4:52: the handler's calls take {} in all and the `advance` steps 1",
                MAX_CLOCK + 1
            )),
            "{error}"
        );
        assert!(load_text(&spec(u64::MAX, 3)).is_err());
    }

    #[test]
    fn the_compact_form_expands_into_the_plain_one_with_the_lines_that_wrote_it() {
        let text = format!(
            "{HEAD}messages: [{{id: a, body: x}}]\ngenerate:\n  - {{count: 3, from: 5, id: \"m-{{n}}\", body: \"b{{n}}\", handler: [transient: t, ok]}}\nsteps:\n  - repeat: {{times: 2, steps: [advance: 1, repeat: {{times: 2, steps: [process: any]}}]}}\nexpect:\n  dlq:\n    - {{count: 2, id: \"m-{{n}}\", body: \"b{{n}}\", reason: exhausted, error: \"E: {{n}}\", attempts: 1, first_attempt_at: 0, failed_at: 0}}\n"
        );
        let scenario = load_text(&text).unwrap();
        let ids: Vec<&str> = scenario.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["a", "m-5", "m-6", "m-7"]);
        assert_eq!(scenario.messages[3].body, "b7");
        assert_eq!(scenario.message_positions[1], Position::new(5, 5));
        assert_eq!(scenario.script["m-6"].len(), 2);
        assert_eq!(scenario.script_positions["m-6"], Position::new(5, 61));
        let names: Vec<&str> = scenario.steps.iter().map(|(_, s)| s.name()).collect();
        assert_eq!(
            names,
            [
                "advance", "process", "process", "advance", "process", "process"
            ]
        );
        assert_eq!(scenario.steps[0].0, scenario.steps[3].0);
        let (_, expect) = scenario.expect.as_ref().unwrap();
        assert!(expect.patterned);
        let entries = expect.dlq.as_ref().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(
            entries[1].to_value()["error"],
            serde_json::json!("E: 2"),
            "{:?}",
            entries[1]
        );
    }

    #[test]
    fn unknown_world_calls_in_faults_list_the_known_ones() {
        let text = format!("{HEAD}steps:\n  - fault: {{crash: after, call: dlq.putt}}\n");
        let error = load_text(&text).unwrap_err();
        assert_eq!(
            error.message,
            "unknown call `dlq.putt` (did you mean `dlq.put`?); a fault waits on one of queue.send, queue.receive, queue.ack, queue.retry, dlq.put, dlq.remove, handler"
        );
    }
}
