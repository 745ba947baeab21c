//! Every expectation of the bundled suite is checked: a changed value fails, with a diff of it.
//!
//! The mutation test changes one expectation scalar at a time in a copy of each bundled spec
//! (numbers and reasons in DLQ entries, `process:` return values, pending and in-flight lists,
//! replay results, handler call counts) and runs the real binary on the copy: it must exit 1
//! and show the changed field, expected (`-`, the mutated value) against actual (`+`, the
//! original value, which the built-in implementation produces).

use std::path::{Path, PathBuf};

use crate::common::{dlqspec, path_arg, ran, root, run, temp_spec};

#[test]
fn a_spec_with_one_wrong_expectation_fails_with_a_diff_of_that_field() {
    let (_dir, path) = temp_spec(
        "wrong-attempts.yaml",
        "contract: dlq-consumer
name: permanent on the first delivery
rules: [dlq-consumer/permanent]
messages:
  - {id: a, body: price=-5}
handler:
  a: [permanent: negative price]
steps:
  - process: dead
expect:
  dlq:
    - {id: a, body: price=-5, reason: permanent, error: \"PermanentError: negative price\", attempts: 2, first_attempt_at: 0, failed_at: 0}
  pending: []
",
    );
    let shown = path_arg(&path);
    let ran = run(&["run", shown]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let expected = format!(
        "FAIL  {shown}  permanent on the first delivery
      rules: dlq-consumer/permanent
      first difference at final expect ({shown}:12:101)
      --- expected
      +++ actual
      @@ -3,7 +3,7 @@
         body: price=-5
         reason: permanent
         error: \"PermanentError: negative price\"
      -  attempts: 2
      +  attempts: 1
         first_attempt_at: 0
         failed_at: 0
       pending: []

failed: 1 mismatched
0 passed, 1 failed
"
    );
    assert_eq!(ran.stdout, expected);
}

#[test]
fn a_wrong_process_return_fails_at_its_step() {
    let (_dir, path) = temp_spec(
        "wrong-return.yaml",
        "contract: dlq-consumer
name: retried, not dead
messages:
  - {id: a, body: x}
handler:
  a: [transient: db timeout, ok]
steps:
  - process: dead
  - process: ok
",
    );
    let shown = path_arg(&path);
    let ran = run(&["run", shown]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(&format!(
            "      first difference at step 1 (process) ({shown}:8:14)
      --- expected
      +++ actual
      @@ -1,1 +1,1 @@
      -process: dead
      +process: retry
"
        )),
        "{}",
        ran.stdout
    );
}

/// One changed expectation in a copy of a bundled spec, and the diff lines it must cause.
struct Mutant {
    /// The line of the changed value in the spec.
    line: usize,
    text: String,
    /// The diff's `-` line: the mutated (wrong) expectation.
    expected: String,
    /// The diff's `+` line: what the built-in implementation really does.
    actual: String,
}

/// Keys whose value is a whole number in an expectation.
const NUMBER_KEYS: &[&str] = &["attempts", "first_attempt_at", "failed_at", "clock"];
/// Keys whose value is a flow list of ids; the diff names `returns` as `replay`.
const LIST_KEYS: &[(&str, &str)] = &[
    ("pending", "pending"),
    ("in_flight", "in_flight"),
    ("returns", "replay"),
];

/// Every occurrence of `key: ` at a word boundary, at or after `from`: the value's byte offset.
fn values_of(text: &str, key: &str, from: usize) -> Vec<usize> {
    let needle = format!("{key}: ");
    let mut found = Vec::new();
    let mut at = from;
    while let Some(offset) = text[at..].find(&needle) {
        let start = at + offset;
        let boundary = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if boundary {
            found.push(start + needle.len());
        }
        at = start + needle.len();
    }
    found
}

fn token_end(text: &str, start: usize, accept: impl Fn(char) -> bool) -> usize {
    text[start..]
        .char_indices()
        .find(|&(_, c)| !accept(c))
        .map_or(text.len(), |(i, _)| start + i)
}

fn mutants_of(spec: &Path) -> Vec<Mutant> {
    let text = std::fs::read_to_string(spec).expect("spec readable");
    // Expectations live in `steps:` and `expect:`; the description above them is prose.
    let from = ["\nsteps:\n", "\nexpect:\n"]
        .iter()
        .filter_map(|k| text.find(k))
        .min()
        .unwrap_or(text.len());
    let mut mutants = Vec::new();
    let mut add = |start: usize, end: usize, new: &str, expected: String, actual: String| {
        let mut mutated = text.clone();
        mutated.replace_range(start..end, new);
        mutants.push(Mutant {
            line: text[..start].lines().count(),
            text: mutated,
            expected,
            actual,
        });
    };
    for key in NUMBER_KEYS {
        for start in values_of(&text, key, from) {
            let end = token_end(&text, start, |c| c.is_ascii_digit());
            let old: u64 = text[start..end].parse().expect("a number");
            let new = (old + 1).to_string();
            add(
                start,
                end,
                &new,
                format!("{key}: {new}"),
                format!("{key}: {old}"),
            );
        }
    }
    for start in values_of(&text, "process", from) {
        let end = token_end(&text, start, |c| c.is_ascii_lowercase());
        let old = &text[start..end];
        let new = match old {
            "ok" => "retry",
            "any" => continue,
            _ => "ok",
        };
        add(
            start,
            end,
            new,
            format!("process: {new}"),
            format!("process: {old}"),
        );
    }
    for start in values_of(&text, "reason", from) {
        let end = token_end(&text, start, |c| c.is_ascii_lowercase());
        let old = &text[start..end];
        let new = match old {
            "permanent" => "exhausted",
            "exhausted" => "poison",
            _ => "permanent",
        };
        add(
            start,
            end,
            new,
            format!("reason: {new}"),
            format!("reason: {old}"),
        );
    }
    for (key, shown) in LIST_KEYS {
        for start in values_of(&text, key, from) {
            if !text[start..].starts_with('[') {
                continue;
            }
            let end = start + text[start..].find(']').expect("a closed list") + 1;
            let old = &text[start..end];
            let new = if old == "[]" {
                "[zz]".to_owned()
            } else {
                format!("{}, zz]", &old[..old.len() - 1])
            };
            add(
                start,
                end,
                &new,
                format!("{shown}: {new}"),
                format!("{shown}: {old}"),
            );
        }
    }
    for start in values_of(&text, "handler_calls", from) {
        if !text[start..].starts_with('{') {
            continue;
        }
        let end = start + text[start..].find('}').expect("a closed mapping");
        // `{a: 2, b: 1}`: one mutant per id with a count above zero.
        let mut at = start + 1;
        for pair in text[start + 1..end].split(',') {
            let pair_start = at;
            at += pair.len() + 1;
            let Some((id, count)) = pair.split_once(": ") else {
                continue;
            };
            let old: u64 = count.trim().parse().expect("a count");
            if old == 0 {
                continue;
            }
            let count_start = pair_start + pair.find(": ").expect("split above") + 2;
            let count_end = count_start + count.trim_end().len();
            let (id, new) = (id.trim(), (old + 1).to_string());
            add(
                count_start,
                count_end,
                &new,
                format!("{id}: {new}"),
                format!("{id}: {old}"),
            );
        }
    }
    mutants
}

/// Whether a reported block shows the diff line `sign` + `content` (the YAML's own
/// indentation aside).
fn shows_diff_line(details: &str, sign: char, content: &str) -> bool {
    details.lines().any(|line| {
        line.strip_prefix("      ")
            .and_then(|l| l.strip_prefix(sign))
            .is_some_and(|l| !l.starts_with(sign) && l.trim() == content)
    })
}

/// The reporter's block for one spec file: its status line and the indented lines below it.
fn block_of<'a>(stdout: &'a str, path: &str) -> Option<(&'a str, String)> {
    let mut lines = stdout.lines();
    let status = lines
        .find(|line| !line.starts_with(' ') && line.split_whitespace().nth(1) == Some(path))?;
    let details: Vec<&str> = lines.take_while(|line| line.starts_with(' ')).collect();
    Some((status, details.join("\n")))
}

/// Runs the binary once on every mutant of one spec, each in its own file; returns what was
/// not caught as it must be.
fn check_all(spec: &Path, mutants: &[Mutant]) -> Vec<String> {
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
        let block = block_of(&ran.stdout, path_arg(path));
        let (status, details) = block.unwrap_or_default();
        let failed = status.starts_with("FAIL ");
        let shows_expected = shows_diff_line(&details, '-', &mutant.expected);
        let shows_actual = shows_diff_line(&details, '+', &mutant.actual);
        if !(failed && shows_expected && shows_actual) {
            failures.push(format!(
                "{}:{}: changed to `{}` (the implementation gives `{}`): `-` line {}, `+` line {}\n{status}\n{details}",
                spec.display(),
                mutant.line,
                mutant.expected,
                mutant.actual,
                if shows_expected { "shown" } else { "missing" },
                if shows_actual { "shown" } else { "missing" },
            ));
        }
    }
    failures
}

#[test]
fn changing_any_expectation_of_a_bundled_spec_fails_it_with_a_diff_of_that_value() {
    let folder = root().join("specs/dlq-consumer");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("the bundled suite")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    specs.sort();
    assert!(specs.len() >= 32, "{} specs", specs.len());

    let mut work = Vec::new();
    for spec in &specs {
        let mutants = mutants_of(spec);
        assert!(
            mutants.len() >= 2,
            "{}: only {} expectations to change",
            spec.display(),
            mutants.len()
        );
        work.push((spec.clone(), mutants));
    }
    let total: usize = work.iter().map(|(_, m)| m.len()).sum();
    assert!(total >= 300, "only {total} mutants");

    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    let chunk = work.len().div_ceil(workers);
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
}

#[test]
fn the_mutator_finds_every_kind_of_expectation() {
    let text = "contract: dlq-consumer
name: t
max_attempts: 2
steps:
  - process: retry
  - replay: {returns: [a]}
expect:
  dlq:
    - {id: a, body: b, reason: poison, error: null, attempts: 2, first_attempt_at: 0, failed_at: 15}
  pending: []
  handler_calls: {a: 2, bb: 0}
  clock: 15
";
    let (_dir, path) = temp_spec("t.yaml", text);
    let found: Vec<(String, String)> = mutants_of(&path)
        .into_iter()
        .map(|m| (m.expected, m.actual))
        .collect();
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        found,
        pairs(&[
            ("attempts: 3", "attempts: 2"),
            ("first_attempt_at: 1", "first_attempt_at: 0"),
            ("failed_at: 16", "failed_at: 15"),
            ("clock: 16", "clock: 15"),
            ("process: ok", "process: retry"),
            ("reason: permanent", "reason: poison"),
            ("pending: [zz]", "pending: []"),
            ("replay: [a, zz]", "replay: [a]"),
            ("a: 3", "a: 2"),
        ])
    );
}

/// The ```yaml blocks of docs/spec-format.md and the README that are whole specs (they name a
/// contract), of either contract.
fn documented_specs() -> Vec<String> {
    ["docs/spec-format.md", "README.md"]
        .iter()
        .flat_map(|doc| {
            let text = std::fs::read_to_string(root().join(doc)).expect("the doc");
            text.split("```yaml\n")
                .skip(1)
                .filter_map(|block| block.split("```").next())
                .filter(|block| block.contains("\ncontract: "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_complete_examples_in_the_docs_pass() {
    let specs = documented_specs();
    assert!(specs.len() >= 9, "only {} complete examples", specs.len());
    for contract in ["dlq-consumer", "outcome-queue"] {
        assert!(
            specs
                .iter()
                .any(|s| s.contains(&format!("\ncontract: {contract}\n"))),
            "no complete {contract} example"
        );
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for (i, text) in specs.iter().enumerate() {
        std::fs::write(dir.path().join(format!("example-{i}.yaml")), text).expect("write");
    }
    let ran = run(&["run", path_arg(dir.path())]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert!(
        ran.stdout
            .ends_with(&format!("{} passed, 0 failed\n", specs.len())),
        "{}",
        ran.stdout
    );
}
