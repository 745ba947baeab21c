//! What a student reads: one message for one cause, the rule broken named, what happened shown.

use crate::common::*;

/// The lines of the `failures by cause:` section of a human report.
fn causes(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| *l != "failures by cause:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

#[test]
fn a_solution_that_cannot_load_is_told_once_with_a_count_of_the_specs_not_run() {
    let ran = run(&[
        "run",
        "specs",
        "--impl",
        "python:tests/impls/syntax_error.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let errors = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("ERROR "))
        .count();
    assert_eq!(errors, 1, "{}", ran.stdout);
    assert!(
        ran.stdout.contains("SyntaxError")
            && ran.stdout.contains("tests/impls/syntax_error.py:6\n"),
        "{}",
        ran.stdout
    );
    let total = suite().len();
    assert!(
        ran.stdout.contains(&format!(
            "      ... and {} more specs not run: the same error, told once above\n",
            total - 1
        )),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.lines().count() < 20, "{}", ran.stdout);
    assert!(causes(&ran.stdout).is_empty(), "{}", ran.stdout);
}

#[test]
fn one_systematic_mistake_is_one_cause_line_naming_the_rule_it_breaks() {
    let solution = "python:tests/solutions/dlq_handler_gets_message.py";
    let ran = run(&["run", "specs", "--impl", solution]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let failed = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .count();
    assert!(failed > 1, "{}", ran.stdout);
    // Every heading names the rule the first difference breaks, not the spec's `rules:`.
    let headings: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("      rule broken: ") || l.starts_with("      rules: "))
        .collect();
    assert_eq!(headings.len(), failed, "{}", ran.stdout);
    assert!(
        headings
            .iter()
            .all(|h| *h == "      rule broken: dlq-consumer/no-misuse"),
        "{headings:#?}"
    );
    let causes = causes(&ran.stdout);
    assert_eq!(
        causes,
        [format!(
            "  {failed}  dlq-consumer/no-misuse: the consumer misused the queue, the DLQ or the handler  (first: specs/dlq-consumer/already-dead-lettered-id-sent-again.yaml)"
        )],
        "{}",
        ran.stdout
    );
}

/// The first message of a spec error of a spec with `text`.
fn spec_error_of(text: &str) -> String {
    let (_dir, path) = temp_spec("broken.yaml", text);
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    ran.stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("error: "))
        .unwrap_or_else(|| panic!("no error line:\n{}", ran.stdout))
        .to_owned()
}

#[test]
fn spec_errors_speak_of_the_spec_not_of_the_parser() {
    assert!(
        spec_error_of("").starts_with("the file is empty: "),
        "{}",
        spec_error_of("")
    );
    assert!(spec_error_of("# just a comment\n\n").starts_with("the file is empty: "));
    let dead = "contract: dlq-consumer\nname: x\nmessages:\n  - {id: a, body: x}\nhandler:\n  a: [permanent: bad sku]\nsteps:\n  - process: dead\nexpect:\n  dlq:\n";
    let quote = "the value of `error` holds `: `, which YAML reads as a new key: quote the value, `error: \"PermanentError: bad sku\"`";
    for entry in [
        "    - {id: a, body: x, reason: permanent, error: PermanentError: bad sku, attempts: 1, first_attempt_at: 0, failed_at: 0}\n",
        "    - id: a\n      error: PermanentError: bad sku\n",
    ] {
        assert_eq!(spec_error_of(&format!("{dead}{entry}")), quote);
    }
    assert_eq!(
        spec_error_of(
            "contract: outcome-queue\nname: x\nsteps:\n  - create:\n    max_attempts: 3\n"
        ),
        "`max_attempts` is not indented under `create:`, so it is read as a sibling of `create`, which is left empty: indent `max_attempts` (and the keys after it) two spaces more than `create`"
    );
    assert_eq!(
        spec_error_of(
            "contract: dlq-consumer\nname: x\nmessages:\n  - {id: a, body: x}\nhandler:\n  a: [ok]\nsteps:\n  - process: okay\n"
        ),
        "unknown value `okay` (the nearest valid one is `ok`), expected one of ok, retry, dead, none, crash, any"
    );
}
