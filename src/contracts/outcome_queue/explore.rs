//! Exploring outcome-queue (`dlqspec explore`): random step sequences on a `RetryQueue`, and
//! the ways to shrink them.
//!
//! A case is drawn beside a live reference queue, so every step is one the spec vocabulary
//! accepts at that point: budgets valid and invalid (booleans, strings, fractions, beyond 32
//! bits), submits of fresh ids, outcomes valid and invalid (near misses such as `Success`,
//! ` success`, `successful`, substrings, and names every object or dict already has such as
//! `toString`, `__proto__`, `get`), replays of quarantined, known and unknown ids, and changes
//! to state views along paths that exist then. An `expect` of the whole state follows every
//! step that can change it; blessing fills in the states and what `process` and `replay`
//! return.

use serde_json::{Value, json};

use super::queue::{AttemptOutcome, RetryQueue, valid_max_attempts};
use super::state_ops::{self, PathSegment, StateOp, show_path};
use crate::generate::Explorer;
use crate::generate::case::Case;
use crate::generate::crashes::Schedules;
use crate::generate::rng::Rng;
use crate::generate::variants;
use crate::text::source::SourceFile;
use crate::text::yaml;

pub(crate) struct QueueExplorer;

impl Explorer for QueueExplorer {
    fn generate(&self, rng: &mut Rng) -> Box<dyn Case> {
        Box::new(generate(rng))
    }

    fn crash_schedules(&self, _file: &SourceFile) -> Result<Box<dyn Schedules>, String> {
        Err(format!(
            "{} has no world to crash: a RetryQueue makes no calls, so there is nothing to inject a crash between (crash schedules are for dlq-consumer specs)",
            super::NAME
        ))
    }
}

/// An outcome-queue scenario as explore builds and shrinks it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueueCase {
    pub(crate) steps: Vec<QueueStep>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum QueueStep {
    /// `RetryQueue(max_attempts)` with this raw value; it raises when the value is invalid.
    Create(Value),
    Submit {
        id: String,
        payload: String,
    },
    /// `process(outcome)` with this raw value: what it returns is blessed; an invalid one raises.
    Process(Value),
    /// `replay(id)`: what it returns is blessed.
    Replay(String),
    MutateState(Vec<StateOp>),
    /// The whole state, blessed.
    Expect,
}

/// Budgets a queue refuses. Never a whole-valued float such as `2.0`: JSON carries it to
/// JavaScript as the integer 2, so no language-neutral spec can ask for it to be refused.
const INVALID_BUDGETS: &[&str] = &[
    "0", "-1", "-7", "2.5", "0.5", "true", "false", "\"3\"", "\"\"", "three", "null", "[3]",
    "{n: 3}",
];

const VALID_BUDGETS: &[(usize, u64)] = &[
    (25, 1),
    (30, 2),
    (25, 3),
    (10, 4),
    (5, 5),
    (3, 2_147_483_648),
    (2, 4_294_967_296),
];

/// Outcomes that are nearly valid: case, whitespace, longer words, parts of words, the
/// queue's own vocabulary, several outcomes in one string.
const NEAR_MISSES: &[&str] = &[
    "Success",
    "SUCCESS",
    "Transient",
    "PERMANENT",
    " success",
    "transient ",
    " permanent ",
    "successful",
    "unsuccessful",
    "transiently",
    "permanently",
    "succ",
    "cess",
    "ent",
    "",
    "t p",
    "success transient",
    "success|transient",
    "done",
    "retry",
    "dead",
    "ok",
];

/// Names every JavaScript object or Python object, class or dict answers to.
const PROPERTY_NAMES: &[&str] = &[
    "toString",
    "constructor",
    "__proto__",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "get",
    "keys",
    "items",
    "__class__",
    "__doc__",
    "__init__",
    "__dict__",
];

/// Outcomes that are not strings at all.
const NOT_STRINGS: &[&str] = &[
    "null",
    "1",
    "0",
    "true",
    "[success]",
    "{outcome: success}",
    "2.5",
];

const IDS: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];
const UNKNOWN_ID: &str = "zz";

fn parsed(text: &str) -> Value {
    yaml::value(text).unwrap_or(Value::String(text.to_owned()))
}

/// Draws one case; each step is valid where it stands, so the spec loads and the built-in
/// passes it once blessed.
pub(crate) fn generate(rng: &mut Rng) -> QueueCase {
    let mut steps = Vec::new();
    let invalid_first = rng.weighted(&[(70, 0), (20, 1), (10, 2)]);
    for _ in 0..invalid_first {
        steps.push(QueueStep::Create(parsed(rng.pick::<&str>(INVALID_BUDGETS))));
    }
    let mut queue = new_queue(rng, &mut steps);
    let mut submitted: Vec<String> = Vec::new();
    // Now and then a quarantine of several jobs at once, so a replay has neighbours whose
    // order it must keep.
    if rng.chance(25) {
        for _ in 0..rng.between(3, 4) {
            let id = IDS[submitted.len()].to_owned();
            let payload = format!("p{id}");
            queue.submit(&id, &payload);
            submitted.push(id.clone());
            steps.push(QueueStep::Submit { id, payload });
        }
        for _ in 0..submitted.len() {
            let outcome = json!("permanent");
            let _ = queue.process(&outcome);
            steps.push(QueueStep::Process(outcome));
        }
        steps.push(QueueStep::Expect);
    }
    for _ in 0..rng.between(4, 24) {
        let state = queue.state();
        let ready = list_len(&state, "ready");
        let quarantined: Vec<String> = state["quarantine"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["id"].as_str().map(str::to_owned))
            .collect();
        let choice = rng.weighted(&[
            (if submitted.len() < IDS.len() { 26 } else { 0 }, 0),
            (if ready > 0 { 44 } else { 12 }, 1),
            (12, 2),
            (10, 3),
            (3, 4),
        ]);
        match choice {
            0 => {
                let id = IDS[submitted.len()].to_owned();
                let payload = format!("p{id}");
                queue.submit(&id, &payload);
                submitted.push(id.clone());
                steps.push(QueueStep::Submit { id, payload });
            }
            1 => {
                let outcome = outcome(rng);
                let _ = queue.process(&outcome);
                steps.push(QueueStep::Process(outcome));
            }
            2 => {
                let id = match rng.weighted(&[(70, 0), (18, 1), (12, 2)]) {
                    // The head of a longer quarantine most often: the rest must keep its order.
                    0 if quarantined.len() > 2 && rng.chance(50) => quarantined[0].clone(),
                    0 if !quarantined.is_empty() => rng.pick(&quarantined).clone(),
                    1 if !submitted.is_empty() => rng.pick(&submitted).clone(),
                    _ => UNKNOWN_ID.to_owned(),
                };
                queue.replay(&id);
                steps.push(QueueStep::Replay(id));
            }
            3 => {
                // Each op's path exists in the view as the ops before it left it.
                let mut view = state.clone();
                let mut ops = Vec::new();
                for _ in 0..rng.weighted(&[(80, 1), (20, 2)]) {
                    let op = state_op(rng, &view);
                    if state_ops::apply(&mut view, &op).is_ok() {
                        ops.push(op);
                    }
                }
                // The reference's state is a deep copy: changing a view changes nothing.
                steps.push(QueueStep::MutateState(ops));
            }
            _ => {
                if rng.chance(50) {
                    steps.push(QueueStep::Create(parsed(rng.pick::<&str>(INVALID_BUDGETS))));
                }
                queue = new_queue(rng, &mut steps);
                submitted.clear();
            }
        }
        if !matches!(steps.last(), Some(QueueStep::Create(_))) {
            steps.push(QueueStep::Expect);
        }
    }
    QueueCase { steps }
}

/// A queue with a valid budget, its `create` added to `steps`.
fn new_queue(rng: &mut Rng, steps: &mut Vec<QueueStep>) -> RetryQueue {
    let budget = json!(rng.weighted(VALID_BUDGETS));
    steps.push(QueueStep::Create(budget.clone()));
    RetryQueue::new(&budget).unwrap_or_else(|_| unreachable!("a valid budget"))
}

fn list_len(state: &Value, list: &str) -> usize {
    state[list].as_array().map_or(0, Vec::len)
}

fn outcome(rng: &mut Rng) -> Value {
    match rng.weighted(&[(30, 0), (28, 1), (20, 2), (10, 3), (7, 4), (5, 5)]) {
        0 => json!("success"),
        1 => json!("transient"),
        2 => json!("permanent"),
        3 => json!(rng.pick(NEAR_MISSES)),
        4 => json!(rng.pick(PROPERTY_NAMES)),
        _ => parsed(rng.pick::<&str>(NOT_STRINGS)),
    }
}

/// A change to `state`'s view along a path that exists in it.
fn state_op(rng: &mut Rng, state: &Value) -> StateOp {
    let key = |k: &str| PathSegment::Key(k.to_owned());
    let lists = ["ready", "done", "quarantine"];
    let filled: Vec<&str> = lists
        .iter()
        .copied()
        .filter(|list| list_len(state, list) > 0)
        .collect();
    let entry_lists: Vec<&str> = filled.iter().copied().filter(|l| *l != "done").collect();
    match rng.weighted(&[
        (if entry_lists.is_empty() { 0 } else { 40 }, 0),
        (if filled.is_empty() { 0 } else { 20 }, 1),
        (20, 2),
        (20, 3),
    ]) {
        0 => {
            let list = *rng.pick(&entry_lists);
            let index = PathSegment::Index(rng.below(list_len(state, list)));
            let changes = [
                ("payload", json!("changed")),
                ("attempts", json!(99)),
                ("id", json!("ghost")),
                ("reason", json!("exhausted")),
            ];
            let (field, value) = rng.pick(&changes);
            if rng.chance(20) {
                StateOp::Delete(vec![key(list), index, key("payload")])
            } else {
                StateOp::Set {
                    path: vec![key(list), index, key(field)],
                    value: value.clone(),
                }
            }
        }
        1 => {
            let list = *rng.pick(&filled);
            let index = PathSegment::Index(rng.below(list_len(state, list)));
            if list == "done" && rng.chance(50) {
                StateOp::Set {
                    path: vec![key(list), index],
                    value: json!("ghost"),
                }
            } else {
                StateOp::Delete(vec![key(list), index])
            }
        }
        2 => {
            let list: &str = rng.pick::<&str>(&lists);
            let value = match list {
                "done" => json!("ghost"),
                "ready" => json!({"id": "ghost", "payload": "boo", "attempts": 0}),
                _ => json!({"id": "ghost", "payload": "boo", "attempts": 1, "reason": "permanent"}),
            };
            StateOp::Append {
                path: vec![key(list)],
                value,
            }
        }
        _ => StateOp::Clear(vec![key(rng.pick::<&str>(&lists))]),
    }
}

fn op_text(op: &StateOp) -> String {
    match op {
        StateOp::Set { path, value } => format!(
            "set: {{path: {}, value: {}}}",
            show_path(path),
            yaml::flow(value)
        ),
        StateOp::Delete(path) => format!("delete: {}", show_path(path)),
        StateOp::Append { path, value } => format!(
            "append: {{path: {}, value: {}}}",
            show_path(path),
            yaml::flow(value)
        ),
        StateOp::Clear(path) => format!("clear: {}", show_path(path)),
    }
}

impl QueueCase {
    fn with_steps(&self, steps: Vec<QueueStep>) -> QueueCase {
        QueueCase { steps }
    }
}

impl Case for QueueCase {
    fn body(&self) -> String {
        let mut out = String::from("steps:\n");
        for step in &self.steps {
            match step {
                QueueStep::Create(budget) => {
                    let raises = if valid_max_attempts(budget).is_some() {
                        ""
                    } else {
                        ", raises: invalid_argument"
                    };
                    out.push_str(&format!(
                        "  - create: {{max_attempts: {}{raises}}}\n",
                        yaml::flow(budget)
                    ));
                }
                QueueStep::Submit { id, payload } => out.push_str(&format!(
                    "  - submit: {{id: {}, payload: {}}}\n",
                    yaml::flow(&json!(id)),
                    yaml::flow(&json!(payload))
                )),
                QueueStep::Process(outcome) => {
                    let answer = if AttemptOutcome::parse(outcome).is_some() {
                        "returns: none"
                    } else {
                        "raises: invalid_argument"
                    };
                    out.push_str(&format!(
                        "  - process: {{outcome: {}, {answer}}}\n",
                        yaml::flow(outcome)
                    ));
                }
                QueueStep::Replay(id) => out.push_str(&format!(
                    "  - replay: {{id: {}, returns: false}}\n",
                    yaml::flow(&json!(id))
                )),
                QueueStep::MutateState(ops) => {
                    out.push_str("  - mutate_state:\n");
                    for op in ops {
                        out.push_str(&format!("      - {}\n", op_text(op)));
                    }
                }
                QueueStep::Expect => {
                    out.push_str(
                        "  - expect:\n      ready: []\n      done: []\n      quarantine: []\n",
                    );
                }
            }
        }
        out
    }

    fn steps(&self) -> usize {
        self.steps.len()
    }

    fn shrinks(&self) -> Vec<Box<dyn Case>> {
        let mut smaller: Vec<QueueCase> = variants::chunks_removed(&self.steps)
            .into_iter()
            .map(|steps| self.with_steps(steps))
            .collect();
        for (index, step) in self.steps.iter().enumerate() {
            let variants: Vec<QueueStep> = match step {
                QueueStep::Create(budget) => match valid_max_attempts(budget) {
                    Some(n) if n > 1 => vec![json!(1), json!(n.min(5) - 1)]
                        .into_iter()
                        .map(QueueStep::Create)
                        .collect(),
                    _ => Vec::new(),
                },
                QueueStep::MutateState(ops) if ops.len() > 1 => (0..ops.len())
                    .map(|left_out| {
                        let mut fewer = ops.clone();
                        fewer.remove(left_out);
                        QueueStep::MutateState(fewer)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for steps in variants::with_step_replaced(&self.steps, index, variants) {
                smaller.push(self.with_steps(steps));
            }
        }
        variants::boxed_except(smaller, self)
    }

    fn focused(&self, index: usize, _keys: &[String]) -> Box<dyn Case> {
        // A state expectation is written whole (all three lists), so its keys stay.
        let steps = self
            .steps
            .iter()
            .take(index + 1)
            .enumerate()
            .filter(|(at, step)| *at == index || !matches!(step, QueueStep::Expect))
            .map(|(_, step)| step.clone())
            .collect();
        Box::new(self.with_steps(steps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::builtin::Builtin;
    use crate::explore::case::{CaseVerdict, judge};
    use crate::generate::variants;

    #[test]
    fn every_generated_case_passes_on_the_built_in_once_blessed() {
        for number in 0..200 {
            let case = generate(&mut Rng::for_case(5, "outcome-queue", number));
            let text = variants::draft("outcome-queue", &case);
            let judged = judge("outcome-queue", text.clone(), &mut Builtin::new());
            assert!(matches!(judged, CaseVerdict::Passed), "{judged:?}\n{text}");
        }
    }

    #[test]
    fn generated_cases_cover_the_vocabulary() {
        let cases: Vec<QueueCase> = (0..300)
            .map(|n| generate(&mut Rng::for_case(9, "outcome-queue", n)))
            .collect();
        let steps: Vec<&QueueStep> = cases.iter().flat_map(|c| &c.steps).collect();
        let any = |check: &dyn Fn(&QueueStep) -> bool| steps.iter().any(|s| check(s));
        assert!(any(
            &|s| matches!(s, QueueStep::Create(v) if valid_max_attempts(v).is_none())
        ));
        assert!(any(
            &|s| matches!(s, QueueStep::Create(v) if v.as_u64() > Some(u64::from(u32::MAX >> 1)))
        ));
        for name in ["toString", "__proto__", "get", " success", "successful", ""] {
            assert!(
                any(&|s| *s == QueueStep::Process(json!(name))),
                "no {name:?}"
            );
        }
        assert!(any(&|s| matches!(s, QueueStep::Process(Value::Null))));
        assert!(any(
            &|s| matches!(s, QueueStep::Replay(id) if id == UNKNOWN_ID)
        ));
        for op in ["set", "delete", "append", "clear"] {
            assert!(
                any(
                    &|s| matches!(s, QueueStep::MutateState(ops) if ops.iter().any(|o| o.name() == op))
                ),
                "no {op}"
            );
        }
    }

    #[test]
    fn budgets_and_outcomes_are_written_as_they_read_back() {
        for text in INVALID_BUDGETS.iter().chain(NOT_STRINGS) {
            let value = parsed(text);
            assert_eq!(parsed(&yaml::flow(&value)), value, "{text}");
        }
        for text in INVALID_BUDGETS {
            assert!(valid_max_attempts(&parsed(text)).is_none(), "{text}");
        }
        assert_eq!(parsed("{n: 3}"), json!({"n": 3}));
    }
}
