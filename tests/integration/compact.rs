//! The compact form for big scenarios: generated messages, repeated steps, compact
//! expectations; the large-scale spec bundled in `scale/`; and the YAML budget's pointer to the form.

use crate::common::{path_arg, root, run, temp_spec};

const LARGE: &str = "scale/dlq-consumer/large-scale.yaml";

#[test]
fn the_large_scale_spec_is_small_and_passes() {
    // What it holds once expanded is the unit test beside the compact form
    // (`contracts::dlq_consumer::compact`).
    let text = std::fs::read_to_string(root().join(LARGE)).expect("large-scale.yaml");
    assert!(text.len() < 4096, "{} bytes", text.len());
    let ran = run(&["run", LARGE]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(&format!("PASS  {LARGE}")),
        "{}",
        ran.stdout
    );
}

/// Three generated messages, one of them failing for good, three repeated steps.
const SMALL: &str = "contract: dlq-consumer
name: compact
generate:
  - {count: 2, id: \"m-{n}\", body: \"b-{n}\", handler: [ok]}
  - {count: 1, from: 7, id: \"p-{n}\", body: \"q-{n}\", handler: [permanent: \"no\"]}
steps:
  - repeat:
      times: 1
      steps:
        - repeat: {times: 2, steps: [process: ok]}
        - process: dead
  - process: none
expect:
  counts: {dlq: 1, pending: 0, handler_calls: 3}
  dlq_reasons: {permanent: 1}
  dlq:
    - {count: 1, from: 7, id: \"p-{n}\", body: \"q-{n}\", reason: permanent,
       error: \"PermanentError: no\", attempts: 1, first_attempt_at: 0, failed_at: 0}
";

#[test]
fn explain_tells_every_generated_message_and_repeated_step_with_its_line() {
    let (_dir, path) = temp_spec("compact.yaml", SMALL);
    let ran = run(&["explain", path_arg(&path)]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    for line in [
        "start: the queue holds m-1, m-2, p-7;",
        "step 1 (line 10): process_one() returned ok",
        "step 2 (line 10): process_one() returned ok",
        "step 3 (line 11): process_one() returned dead",
        "step 4 (line 12): process_one() returned none",
    ] {
        assert!(
            ran.stdout.contains(line),
            "missing {line:?} in:\n{}",
            ran.stdout
        );
    }
    let passed = run(&["run", path_arg(&path)]);
    assert_eq!(passed.code, 0, "{}", passed.stdout);
}

#[test]
fn a_compact_expectation_that_differs_shows_the_counts_and_bless_rewrites_them() {
    let wrong = SMALL
        .replace("handler_calls: 3}", "handler_calls: 4}")
        .replace("{permanent: 1}", "{permanent: 1, poison: 2}");
    let (_dir, path) = temp_spec("compact.yaml", &wrong);
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    for line in [
        "-  handler_calls: 4\n",
        "+  handler_calls: 3\n",
        "-  poison: 2\n",
    ] {
        assert!(
            ran.stdout.contains(line),
            "missing {line:?} in:\n{}",
            ran.stdout
        );
    }
    let blessed = run(&["bless", path_arg(&path)]);
    assert_eq!(blessed.code, 0, "{}{}", blessed.stdout, blessed.stderr);
    let text = std::fs::read_to_string(&path).expect("spec");
    assert!(text.contains("handler_calls: 3}"), "{text}");
    assert!(!text.contains("poison"), "{text}");
    assert!(text.contains("count: 1, from: 7"), "{text}");
    assert_eq!(run(&["run", path_arg(&path)]).code, 0);
}

#[test]
fn bless_refuses_differing_patterned_dlq_entries_up_front_and_writes_nothing() {
    // The patterned entry differs alone, and together with a value bless could rewrite: either
    // way the expectation is refused at its line before anything is rewritten, not found
    // still failing after a partial rewrite.
    let alone = SMALL.replace("attempts: 1, first", "attempts: 2, first");
    let with_counts = alone.replace("handler_calls: 3}", "handler_calls: 4}");
    for wrong in [alone, with_counts] {
        let (_dir, path) = temp_spec("compact.yaml", &wrong);
        let ran = run(&["run", path_arg(&path)]);
        assert_eq!(ran.code, 1, "{}", ran.stdout);
        assert!(ran.stdout.contains("-  attempts: 2\n"), "{}", ran.stdout);
        for args in [vec!["bless"], vec!["bless", "--check"]] {
            let mut args = args;
            args.push(path_arg(&path));
            let blessed = run(&args);
            assert_eq!(blessed.code, 1, "{}{}", blessed.stdout, blessed.stderr);
            let shown = blessed
                .stdout
                .replace(&path.display().to_string(), "compact.yaml");
            assert!(
                shown.contains(
                    "compact.yaml:14:3: `expect` cannot be rewritten in place: it expects {"
                ) && shown.contains(
                    "its `dlq` holds patterned entries (`count:`), which stand for many and are never rewritten; change them by hand, or write the entries out"
                ),
                "{shown}"
            );
            assert!(!shown.contains("would still not pass"), "{shown}");
            assert_eq!(std::fs::read_to_string(&path).expect("spec"), wrong);
        }
    }
}

#[test]
fn compact_mistakes_are_spec_errors_at_their_line() {
    let cases = [
        (
            SMALL.replace("id: \"m-{n}\"", "id: m"),
            "4:20",
            "`m` would give all 2 messages the same id: put `{n}` where the number goes, e.g. `m-{n}`",
        ),
        (
            SMALL.replace("{count: 2,", "{count: 0,"),
            "4:13",
            "`count` must be at least 1",
        ),
        (
            SMALL.replace(
                "from: 7, id: \"p-{n}\", body: \"q-{n}\", handler",
                "id: \"m-{n}\", body: \"q-{n}\", handler",
            ),
            "5:5",
            "duplicate message id `m-1`",
        ),
        (
            SMALL.replace("times: 1\n", "times: 9999999999\n"),
            "8:14",
            "repeated, the steps add up to more than 2000000, the most a spec may run",
        ),
        (
            SMALL.replace("{count: 2,", "{count: 2000000,"),
            "4:13",
            "the `generate` groups add up to more than 1000000 messages, the most a spec may generate",
        ),
        (
            SMALL.replace("steps: [process: ok]", "steps: [proces: ok]"),
            "10:38",
            "unknown value `proces` (did you mean `process`?)",
        ),
    ];
    for (text, at, says) in cases {
        let (_dir, path) = temp_spec("compact.yaml", &text);
        let ran = run(&["run", path_arg(&path)]);
        assert_eq!(ran.code, 2, "{}", ran.stdout);
        let shown = format!("{}", path.display());
        let message = ran.stdout.replace(&shown, "compact.yaml");
        let error = format!("error: {says}");
        let position = format!("--> compact.yaml:{at}\n");
        assert!(message.contains(&error), "missing {error:?} in:\n{message}");
        assert!(
            message.contains(&position),
            "missing {position:?} in:\n{message}"
        );
    }
}

/// A budget of expansion for the whole spec: what each count allows alone cannot be multiplied
/// past it by a long pattern, a repeated expectation or a nested `repeat`.
#[test]
fn a_spec_that_would_expand_past_the_budget_is_refused_at_the_line_that_multiplies() {
    let too_much = "expanded, this spec would hold more than 1024 MiB of messages, steps and entries, the most a spec may";
    let long = "x".repeat(4096);
    let cases = [
        // A long body times a million messages.
        (
            format!(
                "contract: dlq-consumer\nname: long bodies\ngenerate:\n  - {{count: 1000000, id: \"m-{{n}}\", body: \"{long}-{{n}}\"}}\nsteps:\n  - process: none\n"
            ),
            "4:13",
        ),
        // An expectation of a million patterned entries, repeated a thousand times.
        (
            "contract: dlq-consumer\nname: repeated expectation\nsteps:\n  - repeat:\n      times: 1000\n      steps:\n        - expect:\n            dlq:\n              - {count: 1000000, id: \"d-{n}\", body: \"b-{n}\", reason: permanent, error: \"PermanentError: e\", attempts: 1, first_attempt_at: 0, failed_at: 0}\n".to_owned(),
            "5:14",
        ),
        // A long send, nested: a thousand times a thousand.
        (
            format!(
                "contract: dlq-consumer\nname: nested sends\nsteps:\n  - repeat:\n      times: 1000\n      steps:\n        - repeat:\n            times: 1000\n            steps:\n              - send: {{id: s, body: \"{long}\"}}\n"
            ),
            "5:14",
        ),
    ];
    for (text, at) in cases {
        let (_dir, path) = temp_spec("compact.yaml", &text);
        let ran = run(&["run", path_arg(&path)]);
        assert_eq!(ran.code, 2, "{}", ran.stdout);
        let message = ran
            .stdout
            .replace(&format!("{}", path.display()), "compact.yaml");
        assert!(message.contains(too_much), "{message}");
        assert!(
            message.contains(&format!("--> compact.yaml:{at}\n")),
            "not at {at}:\n{message}"
        );
    }
}

/// A `repeat` of nothing runs nothing, however many times it says: not a loop of nothing.
#[test]
fn an_empty_repeat_runs_nothing_at_once() {
    let text = "contract: dlq-consumer\nname: empty repeat\nmessages:\n  - {id: a, body: x}\nhandler:\n  a: [ok]\nsteps:\n  - repeat: {times: 18446744073709551615, steps: []}\n  - repeat: {times: 18446744073709551615, steps: [repeat: {times: 0, steps: [process: ok]}]}\n  - process: ok\nexpect:\n  handler_calls: {a: 1}\n";
    let (_dir, path) = temp_spec("empty.yaml", text);
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
}

#[test]
fn a_plain_spec_beyond_the_yaml_budget_is_pointed_at_the_compact_form() {
    let mut text = String::from("contract: dlq-consumer\nname: huge\nrules: [");
    text.push_str(&vec!["x"; 4_000_001].join(","));
    text.push_str("]\n");
    let (_dir, path) = temp_spec("huge.yaml", &text);
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 2, "{}", ran.stdout);
    assert!(
        ran.stdout.contains(
            "the spec holds more than 4000000 YAML values, the most a spec may hold: write many similar messages and steps in the compact form"
        ),
        "{}",
        ran.stdout
    );
}

/// Every bundled spec file (`specs/`, `scale/`): a YAML 1.1 boolean word (`no`, `yes`, `on`,
/// `off`) is quoted where it is a value. dlqspec reads YAML 1.2, where a bare `no` is the
/// string, but an editor, a linter or a 1.1 reader a teacher copies the spec into reads it as
/// `false`.
#[test]
fn no_bundled_spec_writes_a_boolean_word_bare() {
    fn files(dir: &std::path::Path, into: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a bundled folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                files(&path, into);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                into.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for folder in ["specs", "scale"] {
        files(&root().join(folder), &mut found);
    }
    assert!(found.len() > 100, "{} files", found.len());
    let mut bare = Vec::new();
    for path in &found {
        let text = std::fs::read_to_string(path).expect("a spec");
        for (n, line) in text.lines().enumerate() {
            let code = line.split(" #").next().unwrap_or(line);
            for (at, _) in code.match_indices(": ") {
                let value = code[at + 2..].trim_start();
                let word: String = value
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                let after = value[word.len()..].trim_start();
                let ends = after.is_empty() || after.starts_with([',', '}', ']']);
                if ends && ["yes", "no", "on", "off"].contains(&word.to_ascii_lowercase().as_str())
                {
                    bare.push(format!("{}:{}: {line}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(bare.is_empty(), "{bare:#?}");
}
