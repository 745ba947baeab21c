//! How a wrong expectation is reported, and the complete specs of the docs pass as written.
//! (Every expectation of the bundled suite is changed in turn in `mutations.rs`.)

use crate::common::{path_arg, root, run, temp_spec};

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
      the spec's rules: dlq-consumer/permanent
      cause: the spec's expectation differs from what the built-in reference does at final expect: the reference did what the +++ lines show. If the reference is right, `dlqspec bless {shown}` writes that into the spec; `dlqspec explain {shown}` tells the reference's run step by step
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
      the step: process: dead (it received a, delivery 1)
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
    // A complete example starts with the schema line, as the bundled specs do; every one of
    // them must be found here (a fragment names no contract and is not run).
    let complete: usize = ["docs/spec-format.md", "README.md"]
        .iter()
        .map(|doc| {
            let text = std::fs::read_to_string(root().join(doc)).expect("the doc");
            text.matches("```yaml\n# yaml-language-server:").count()
        })
        .sum();
    assert_eq!(specs.len(), complete);
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
