//! Every expectation of the bundled suite is checked: changing any one value fails the spec,
//! with a diff of that value, and `run`, `explain` and `bless --check` give the same verdict.
//!
//! Mutants are made from the YAML tree, not the text: every scalar written in an expectation of
//! either contract (a final or mid-spec `expect`, a `process` return, a `replay` result: ids,
//! bodies, errors, reasons, numbers, trace lines, state views) is changed in turn, one at a
//! time, to a value the spec format still accepts, and rewritten in place. The real binary runs
//! every mutant of a spec in one call and must fail each with a diff whose `-` side holds the
//! changed value and whose `+` side holds the value the built-in implementation produces.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use dlqspec::load::discover;
use dlqspec::text::yaml;
use dlqspec::text::yaml::edit::{self, Document, Kind, Node};

use crate::common::{dlqspec, path_arg, ran, root, verdicts};

/// One changed expectation in a copy of a bundled spec.
pub(crate) struct Mutant {
    line: usize,
    text: String,
    /// The value written now, and the value it replaced (which the built-in produces).
    new: Value,
    old: Value,
}

/// The key a scalar sits under, or the list it is an item of, for choosing a valid change.
#[derive(Clone, Copy)]
enum Context<'k> {
    Key(&'k str),
    ItemOf(&'k str),
}

fn key_of(document: &Document, key: &Node) -> String {
    match document.value(key) {
        Some(Value::String(name)) => name,
        _ => String::new(),
    }
}

/// A different value of the same kind that the spec format still accepts there; `None` for
/// values that cannot change without changing what the step asks (`process: any`, `raises`).
fn changed(contract: &str, context: Context, old: &Value) -> Option<Value> {
    Some(match (context, old) {
        (_, Value::Number(n)) => json!(n.as_u64()? + 1),
        (_, Value::Bool(b)) => json!(!b),
        (Context::Key("error"), Value::Null) => json!("PermanentError: surprise"),
        (_, Value::Null) => return None,
        (Context::Key("raises"), _) => return None,
        (Context::Key("reason"), Value::String(reason)) => {
            json!(match (contract, reason.as_str()) {
                ("dlq-consumer", "permanent") => "exhausted",
                ("dlq-consumer", "exhausted") => "poison",
                (_, "permanent") => "exhausted",
                _ => "permanent",
            })
        }
        (Context::Key("process"), Value::String(returned)) => json!(match returned.as_str() {
            "any" => return None,
            "ok" => "retry",
            "retry" => "dead",
            _ => "ok",
        }),
        (Context::Key("returns"), Value::String(returned)) => json!(match returned.as_str() {
            "done" => "retry",
            "retry" => "dead",
            _ => "done",
        }),
        (Context::ItemOf("trace"), Value::String(line)) => json!(changed_trace_line(line)?),
        (_, Value::String(text)) => json!(format!("{text}-x")),
        _ => return None,
    })
}

/// A trace line naming another message, or a crash at the other side of its call.
fn changed_trace_line(line: &str) -> Option<String> {
    if line.contains("(injected before the call)") {
        return Some(line.replace("before the call", "after the call"));
    }
    if line.contains("(injected after the call)") {
        return Some(line.replace("after the call", "before the call"));
    }
    if let Some(id) = line.strip_prefix("queue.receive() -> ") {
        return Some(format!("queue.receive() -> {id}-x"));
    }
    let open = line.find('(')?;
    let close = open + line[open..].find(')')?;
    (close > open + 1).then(|| format!("{}-x{}", &line[..close], &line[close..]))
}

/// Every scalar under `node`, with the context that decides how to change it.
fn scalars<'n>(
    document: &Document,
    node: &'n Node,
    context: Context<'n>,
    out: &mut Vec<(&'n Node, Context<'n>)>,
    keys: &'n [String],
) {
    match &node.kind {
        Kind::Scalar { .. } => out.push((node, context)),
        Kind::Sequence { items, .. } => {
            let list = match context {
                Context::Key(key) | Context::ItemOf(key) => key,
            };
            for item in items {
                scalars(document, item, Context::ItemOf(list), out, keys);
            }
        }
        Kind::Mapping { entries, .. } => {
            for (key, value) in entries {
                let name = key_of(document, key);
                // A key the format does not name is data (a message id in `handler_calls`):
                // its value keeps the context of the mapping.
                let inner = keys
                    .iter()
                    .find(|k| **k == name)
                    .map_or(context, |k| Context::Key(k));
                scalars(document, value, inner, out, keys);
            }
        }
        Kind::Alias => {}
    }
}

/// Every key an expectation of either contract can hold, so contexts can borrow them.
fn known_keys() -> Vec<String> {
    [
        "dlq",
        "pending",
        "in_flight",
        "handler_calls",
        "trace",
        "clock",
        "id",
        "body",
        "reason",
        "error",
        "attempts",
        "first_attempt_at",
        "failed_at",
        "ready",
        "done",
        "quarantine",
        "payload",
        "returns",
        "raises",
        "process",
        "replay",
        "expect",
    ]
    .iter()
    .map(|k| (*k).to_owned())
    .collect()
}

/// The nodes a spec checks against the implementation: `expect` (final and steps), `process`
/// returns and `replay` results.
fn expectation_scalars<'n>(
    document: &'n Document,
    keys: &'n [String],
) -> Vec<(&'n Node, Context<'n>)> {
    let mut found = Vec::new();
    let Kind::Mapping { entries, .. } = &document.root().kind else {
        return found;
    };
    let key = |name: &str| keys.iter().find(|k| *k == name).expect("a known key");
    for (name, value) in entries {
        match key_of(document, name).as_str() {
            "expect" => scalars(
                document,
                value,
                Context::Key(key("expect")),
                &mut found,
                keys,
            ),
            "steps" => {
                let Kind::Sequence { items, .. } = &value.kind else {
                    continue;
                };
                for step in items {
                    let Kind::Mapping { entries, .. } = &step.kind else {
                        continue;
                    };
                    for (step_key, body) in entries {
                        match (key_of(document, step_key).as_str(), &body.kind) {
                            ("expect", _) => scalars(
                                document,
                                body,
                                Context::Key(key("expect")),
                                &mut found,
                                keys,
                            ),
                            ("process", Kind::Scalar { .. }) => {
                                found.push((body, Context::Key(key("process"))))
                            }
                            ("process" | "replay", Kind::Mapping { entries, .. }) => {
                                for (inner, value) in entries {
                                    if key_of(document, inner) == "returns" {
                                        scalars(
                                            document,
                                            value,
                                            Context::Key(key("returns")),
                                            &mut found,
                                            keys,
                                        );
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The bundled specs, whose expectations are mutated.
pub(crate) fn mutated_specs() -> Vec<PathBuf> {
    discover::spec_files(&[root().join("specs")])
        .expect("the bundled suite")
        .into_iter()
        .collect()
}

pub(crate) fn mutants_of(spec: &Path) -> Vec<Mutant> {
    let text = std::fs::read_to_string(spec).expect("spec readable");
    let document = Document::parse(&text).expect("a bundled spec parses");
    let contract = match document.value(document.root()) {
        Some(Value::Object(fields)) => fields
            .get("contract")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    };
    let keys = known_keys();
    let mut mutants = Vec::new();
    for (node, context) in expectation_scalars(&document, &keys) {
        let Some(mut old) = document.value(node) else {
            continue;
        };
        // Ids, bodies and payloads are strings whatever they look like (`id: y`, `body: 1`).
        let text_field = matches!(
            context,
            Context::Key("id" | "body" | "payload")
                | Context::ItemOf("pending" | "in_flight" | "done")
        ) || (contract == "dlq-consumer"
            && matches!(context, Context::ItemOf("returns")));
        if let (true, Kind::Scalar { value, .. }) = (text_field, &node.kind) {
            old = Value::String(value.clone());
        }
        let Some(new) = changed(&contract, context, &old) else {
            continue;
        };
        let edits = document
            .rewrite(node.position, &[], &new)
            .expect("a scalar can be rewritten");
        let mutated = edit::apply(&text, edits).expect("edits apply");
        mutants.push(Mutant {
            line: node.position.line,
            text: mutated,
            new,
            old,
        });
    }
    mutants
}

/// The reporter's block for one spec file: its status line and the indented lines below it.
fn block_of<'a>(stdout: &'a str, path: &str) -> Option<(&'a str, String)> {
    let mut lines = stdout.lines();
    let status = lines
        .find(|line| !line.starts_with(' ') && line.split_whitespace().nth(1) == Some(path))?;
    let details: Vec<&str> = lines.take_while(|line| line.starts_with(' ')).collect();
    Some((status, details.join("\n")))
}

/// Whether some diff line with `sign` shows `value` as YAML writes it. (`returns: none` of
/// outcome-queue is the value null, and its diffs show it so.)
fn shows(details: &str, sign: char, value: &Value) -> bool {
    let mut forms = vec![yaml::flow(value)];
    if value == "none" {
        forms.push(yaml::flow(&Value::Null));
    }
    details.lines().map(str::trim_start).any(|line| {
        !line.starts_with("--- expected")
            && !line.starts_with("+++ actual")
            && line
                .strip_prefix(sign)
                .is_some_and(|rest| forms.iter().any(|form| rest.contains(form)))
    })
}

/// Runs the binary once on every mutant of one spec, each in its own file; returns what was
/// not caught as it must be.
fn check_all(spec: &Path, mutants: &[Mutant]) -> Vec<String> {
    if mutants.is_empty() {
        return Vec::new();
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let name = spec.file_name().expect("a file name").to_string_lossy();
    let paths: Vec<PathBuf> = mutants
        .iter()
        .enumerate()
        .map(|(i, mutant)| {
            let path = dir.path().join(format!("{i:03}-{name}"));
            std::fs::write(&path, &mutant.text).expect("write mutant");
            path
        })
        .collect();
    let ran = ran(dlqspec()
        .args(["run", path_arg(dir.path())])
        .output()
        .expect("dlqspec runs"));
    let mut failures = Vec::new();
    if ran.code != 1 {
        failures.push(format!(
            "{}: exit {} on its mutants, expected 1\n{}{}",
            spec.display(),
            ran.code,
            ran.stdout,
            ran.stderr
        ));
    }
    for (mutant, path) in mutants.iter().zip(&paths) {
        let (status, details) = block_of(&ran.stdout, path_arg(path)).unwrap_or_default();
        let caught = status.starts_with("FAIL ")
            && shows(&details, '-', &mutant.new)
            && shows(&details, '+', &mutant.old);
        let agreed = verdicts(path, &mutant.text);
        if !caught || agreed != [1, 1, 1] {
            failures.push(format!(
                "{}:{}: changed {} to {}: run/explain/bless --check exit {agreed:?}\n{status}\n{details}",
                spec.display(),
                mutant.line,
                yaml::flow(&mutant.old),
                yaml::flow(&mutant.new),
            ));
        }
    }
    failures
}

#[test]
fn changing_any_expectation_of_a_bundled_spec_fails_it_with_a_diff_of_that_value() {
    let specs = mutated_specs();
    let work: Vec<(PathBuf, Vec<Mutant>)> = specs
        .iter()
        .map(|spec| (spec.clone(), mutants_of(spec)))
        .collect();
    for (spec, mutants) in &work {
        // A spec whose only checks are `raises: invalid_argument` has nothing to change into
        // another valid spec (a valid value would make loading refuse it); the broken budget
        // checks in tests/solutions are what show those specs have teeth.
        let text = std::fs::read_to_string(spec).expect("spec");
        let only_raises = text.contains("raises: invalid_argument")
            && !text.contains("expect")
            && !text.contains("returns");
        assert!(
            !mutants.is_empty() || only_raises,
            "{}: checks nothing that can be changed",
            spec.display()
        );
    }
    let total: usize = work.iter().map(|(_, m)| m.len()).sum();
    let chunk = work.len().div_ceil(2);
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = work
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .flat_map(|(spec, mutants)| check_all(spec, mutants))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {total} mutants were not caught as expected:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{total} mutants of {} specs, each caught", specs.len());
}

#[test]
fn the_mutator_reaches_every_kind_of_expectation_of_both_contracts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dlq = dir.path().join("dlq.yaml");
    std::fs::write(
        &dlq,
        "contract: dlq-consumer
name: t
steps:
  - process: retry
  - process: any
  - replay: {returns: [a]}
  - expect: {in_flight: [b]}
expect:
  dlq:
    - {id: a, body: b, reason: poison, error: null, attempts: 2, first_attempt_at: 0, failed_at: 15}
  pending: []
  handler_calls: {a: 2}
  trace:
    - queue.receive() -> a
    - handler(a) -> ok
    - dlq.put -> crash (injected after the call)
  clock: 15
",
    )
    .expect("write");
    let queue = dir.path().join("queue.yaml");
    std::fs::write(
        &queue,
        "contract: outcome-queue
name: t
steps:
  - create: {max_attempts: 0, raises: invalid_argument}
  - process: {outcome: success, returns: none}
  - replay: {id: a, returns: false}
expect:
  ready: [{id: a, payload: p, attempts: 0}]
  done: [b]
  quarantine: [{id: c, payload: q, attempts: 1, reason: permanent}]
",
    )
    .expect("write");
    let shown = |path: &Path| -> Vec<String> {
        mutants_of(path)
            .iter()
            .map(|m| format!("{} -> {}", yaml::flow(&m.old), yaml::flow(&m.new)))
            .collect()
    };
    assert_eq!(
        shown(&dlq),
        [
            "retry -> dead",
            "a -> a-x",
            "b -> b-x",
            "a -> a-x",
            "b -> b-x",
            "poison -> permanent",
            "null -> \"PermanentError: surprise\"",
            "2 -> 3",
            "0 -> 1",
            "15 -> 16",
            "2 -> 3",
            "queue.receive() -> a -> queue.receive() -> a-x",
            "handler(a) -> ok -> handler(a-x) -> ok",
            "dlq.put -> crash (injected after the call) -> dlq.put -> crash (injected before the call)",
            "15 -> 16",
        ]
    );
    assert_eq!(
        shown(&queue),
        [
            "none -> done",
            "false -> true",
            "a -> a-x",
            "p -> p-x",
            "0 -> 1",
            "b -> b-x",
            "c -> c-x",
            "q -> q-x",
            "1 -> 2",
            "permanent -> exhausted",
        ]
    );
}
