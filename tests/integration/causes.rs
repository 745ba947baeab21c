//! One mistake, one cause: a failure's cause is where the solution first departs from the
//! reference. The broken solutions of tests/solutions (one classic mistake each) get one cause
//! each, naming the rule their mistake breaks; two slips made on a copy of the Python example
//! are one cause each; and looking for causes changes no verdict of any solution.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::common::*;
use crate::corpus::{KNOWN_SURVIVORS, broken_rule, implementation, selected};

/// The `spec_finished` events of a JSON-lines report.
pub(crate) fn finished(json_lines: &str) -> Vec<Value> {
    json_lines
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "spec_finished")
        .collect()
}

/// A run's causes as the human report's `failures by cause` lists them: each cause's key,
/// rule and count, most common first (a tie in the order first met).
pub(crate) fn causes(events: &[Value]) -> Vec<(String, Option<String>, usize)> {
    let mut causes: Vec<(String, Option<String>, usize)> = Vec::new();
    for event in events.iter().filter(|e| e["cause_id"].is_string()) {
        let id = event["cause_id"].as_str().unwrap_or_default().to_owned();
        match causes.iter_mut().find(|(known, ..)| *known == id) {
            Some((.., count)) => *count += 1,
            None => {
                let rule = event["cause_rule"].as_str().map(str::to_owned);
                causes.push((id, rule, 1));
            }
        }
    }
    causes.sort_by_key(|(.., count)| std::cmp::Reverse(*count));
    causes
}

/// The broken solutions a spec catches, with the rule each one's first line says it breaks.
fn caught_solutions() -> Vec<(PathBuf, String)> {
    selected("tests/solutions")
        .into_iter()
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with("only_") && !KNOWN_SURVIVORS.iter().any(|(s, _)| *s == name)
        })
        .map(|path| {
            let rule = broken_rule(&path);
            (path, rule)
        })
        .collect()
}

/// `part` of `whole`, in whole percent (rounded down).
pub(crate) fn percent(part: usize, whole: usize) -> usize {
    (part * 100).checked_div(whole).unwrap_or(0)
}

#[test]
fn every_broken_solution_gets_one_cause_naming_the_rule_its_mistake_breaks() {
    let solutions = caught_solutions();
    let reports = two_at_a_time(&solutions, &|(path, _): &(PathBuf, String)| {
        let output = dlqspec()
            .args(["run", "--format", "json", "--impl", &implementation(path)])
            .args(suite())
            .output()
            .expect("dlqspec runs");
        finished(&String::from_utf8_lossy(&output.stdout))
    });
    let (mut one, mut named, mut table) = (0, 0, String::new());
    for ((path, rule), events) in solutions.iter().zip(&reports) {
        let causes = causes(events);
        assert!(!causes.is_empty(), "{} fails no spec", path.display());
        let first = causes[0].1.as_deref();
        one += usize::from(causes.len() <= 1);
        named += usize::from(first == Some(rule.as_str()));
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        table.push_str(&format!(
            "  {name:40} {:>2} cause{}  first: {}{}\n",
            causes.len(),
            if causes.len() == 1 { " " } else { "s" },
            first.unwrap_or("(none)"),
            if first == Some(rule.as_str()) {
                String::new()
            } else {
                format!("  (breaks {rule})")
            }
        ));
    }
    let total = solutions.len();
    let figures = format!(
        "Of the {total} broken solutions that fail, {one} ({}%) get at most one cause, and for {named} ({}%) the first cause names the rule their mistake breaks",
        percent(one, total),
        percent(named, total)
    );
    eprintln!("{table}{figures}");
    assert!(one * 10 >= total * 9, "{table}{figures}");
    assert!(named * 10 >= total * 9, "{table}{figures}");
    // The figures are written down where the suite's testing is described; measured on every
    // solution only when the JavaScript ones run too.
    if node_tests() {
        let doc = std::fs::read_to_string(root().join("docs/testing.md")).expect("docs/testing.md");
        assert!(
            doc.replace('\n', " ").contains(&figures),
            "docs/testing.md must say: {figures}\n{table}"
        );
    }
}

/// A copy of examples/python/solution.py with `from` replaced by `to`, in a folder of its own.
fn slipped(from: &str, to: &str) -> (tempfile::TempDir, PathBuf) {
    let text =
        std::fs::read_to_string(root().join("examples/python/solution.py")).expect("the example");
    assert_eq!(
        text.matches(from).count(),
        1,
        "the example holds `{from}` once"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("solution.py");
    std::fs::write(&path, text.replace(from, to)).expect("the copy");
    (dir, path)
}

fn failures(stdout: &str) -> usize {
    stdout.lines().filter(|l| l.starts_with("FAIL ")).count()
}

#[test]
fn forgetting_the_ack_after_the_put_is_one_cause_where_it_starts() {
    let (_dir, path) = slipped(
        "        # put before ack: dying in between redelivers it, and the dedupe check above finishes the job.\n        self.queue.ack(msg[\"id\"])\n",
        "",
    );
    let impl_arg = format!("python:{}", path.display());
    let ran = run(&["run", "specs/dlq-consumer", "--impl", &impl_arg]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let failed = failures(&ran.stdout);
    assert!(failed > 10, "{}", ran.stdout);
    assert_eq!(
        crate::students::causes(&ran.stdout),
        [
            format!(
                "  {failed}  dlq-consumer/dead-letter-sequence: after dlq.put(X), the reference acks X; yours returned dead without acking X  (first: specs/dlq-consumer/already-dead-lettered-id-sent-again.yaml)"
            )
            .as_str(),
            "      a known mistake: dead-letters the message (dlq.put) but never acks it, so it stays in flight and comes back",
        ],
        "{}",
        ran.stdout
    );
    // Every failure names the rule the missing ack breaks, and says where it started, even
    // those whose first difference is only `in_flight` at the final expect.
    let rules = ran
        .stdout
        .matches("      rule broken: dlq-consumer/dead-letter-sequence\n");
    assert_eq!(rules.count(), failed, "{}", ran.stdout);
    assert!(
        ran.stdout.contains(
            "      cause: after dlq.put(a), the reference acks a; yours returned dead without acking a\n"
        ),
        "{}",
        ran.stdout
    );
    assert_eq!(
        ran.stdout.matches("--- expected").count(),
        1,
        "{}",
        ran.stdout
    );
}

#[test]
fn a_key_error_on_every_call_is_one_cause_its_traceback_told_once() {
    let (_dir, path) = slipped(
        "msg[\"receive_count\"] > self.max_attempts",
        "msg[\"receiveCount\"] > self.max_attempts",
    );
    let text = std::fs::read_to_string(&path).expect("the copy");
    let line = 1 + text
        .lines()
        .position(|l| l.contains("receiveCount"))
        .expect("the slip");
    let impl_arg = format!("python:{}", path.display());
    let ran = run(&["run", "specs/dlq-consumer", "--impl", &impl_arg]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let failed = failures(&ran.stdout);
    assert!(failed > 10, "{}", ran.stdout);
    let at = format!("{}:{line} in process_one", path.display());
    assert_eq!(
        crate::students::causes(&ran.stdout),
        [format!(
            "  {failed}  dlq-consumer/poison: KeyError: 'receiveCount' raised at {at}  (first: specs/dlq-consumer/already-dead-lettered-id-sent-again.yaml)"
        )],
        "{}",
        ran.stdout
    );
    // The poison check is where the reference decides the handler runs: the rule whose
    // check raised.
    let rules = ran
        .stdout
        .matches("      rule broken: dlq-consumer/poison\n");
    assert_eq!(rules.count(), failed, "{}", ran.stdout);
    // The traceback once, under the first failure; the others counted.
    assert_eq!(
        ran.stdout
            .matches("      raised KeyError: 'receiveCount'\n")
            .count(),
        1,
        "{}",
        ran.stdout
    );
    assert_eq!(
        ran.stdout.matches(&format!("at {at}")).count(),
        2,
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.lines().count() < 8 * failed, "{}", ran.stdout);
}

/// The solutions of the repository that answer within their timeouts: every one of examples/
/// (but Java's, which tests/integration/java.rs runs), tests/precision, tests/solutions and
/// tests/students, but a student's that never returns (its verdicts are timeouts, which a
/// busy machine may time otherwise, and which no cause touches).
fn every_solution() -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = ["python", "javascript", "commonjs", "typescript"]
        .iter()
        .flat_map(|language| selected(&format!("examples/{language}")))
        .collect();
    for folder in ["tests/precision", "tests/solutions", "tests/students"] {
        all.extend(selected(folder));
    }
    all.retain(|path| !path.ends_with("tests/students/hangs.py"));
    all
}

/// A report's events with what causes add taken out: what looking for them must not change.
fn verdicts(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .map(|event| {
            let mut event = event.clone();
            if let Value::Object(fields) = &mut event {
                for key in [
                    "duration_ms",
                    "cause",
                    "cause_id",
                    "cause_rule",
                    "departure",
                    "known_mistake",
                ] {
                    fields.remove(key);
                }
            }
            event
        })
        .collect()
}

#[test]
fn looking_for_causes_changes_no_verdict_of_any_solution() {
    let solutions = every_solution();
    assert!(solutions.len() > 80, "{} solutions", solutions.len());
    let runs = two_at_a_time(&solutions, &|path: &PathBuf| {
        let dir = tempfile::tempdir().expect("temp dir");
        let each = |extra: &[&str]| {
            let json = dir.path().join("report.jsonl");
            let output = dlqspec()
                .args(["run", "--format", "json", "--output"])
                .arg(&json)
                .args(["--impl", &implementation(path)])
                .args(extra)
                .args(suite())
                .output()
                .expect("dlqspec runs");
            let json_lines = std::fs::read_to_string(&json).unwrap_or_default();
            (ran(output), finished(&json_lines))
        };
        (each(&[]), each(&["--no-causes"]))
    });
    let mut compared: BTreeMap<&str, usize> = BTreeMap::new();
    for (path, ((with, with_events), (without, without_events))) in solutions.iter().zip(&runs) {
        let name = path.display().to_string();
        assert_eq!(with.code, without.code, "{name}");
        assert_eq!(
            verdicts(with_events),
            verdicts(without_events),
            "{name}: the verdicts differ with causes and without"
        );
        let failed = with_events
            .iter()
            .any(|e| e["outcome"] != "passed" && e["outcome"] != "skipped");
        if !failed {
            // A solution that fails nothing reads the same, word for word.
            assert_eq!(with.stdout, without.stdout, "{name}");
            *compared.entry("reports unchanged").or_default() += 1;
        }
        *compared.entry("verdicts unchanged").or_default() += 1;
    }
    assert!(compared["reports unchanged"] >= 15, "{compared:?}");
    eprintln!("{compared:?} of {} solutions", solutions.len());
}
