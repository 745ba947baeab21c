//! The bundled specs judged by solutions written apart from them: every correct solution of the
//! precision corpus passes every spec, and every broken solution fails a spec of the rule it
//! breaks, with a diff. Both lists are read from their folders, so no file can be forgotten.

use std::path::{Path, PathBuf};

use crate::common::{Ran, dlqspec, node_tests, ran, root};

/// Broken solutions that no language-neutral spec can catch, and why. Each must still pass
/// every spec: one that starts failing is stale here and must be moved out of this list.
pub(crate) const KNOWN_SURVIVORS: &[(&str, &str)] = &[
    (
        "dlq_error_args0.py",
        "e.args[0] and str(e) differ only for exceptions made with several arguments, and a handler raises with one message",
    ),
    (
        "oq_whole_float.py",
        "3.0 reaches JavaScript as the integer 3, so a spec cannot ask every language to reject it",
    ),
    (
        "dlq_crash_by_name.ts",
        "e.name === 'Crash' and instanceof Crash differ only for a subclass of Crash, which no handler outcome raises",
    ),
];

/// The solution files of a corpus folder, sorted: helpers and type declarations left out.
pub(crate) fn solutions(folder: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(folder))
        .expect("corpus folder")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let kind = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            matches!(kind, "py" | "mjs" | "js" | "ts")
                && !name.ends_with(".d.ts")
                && !name.contains("_helpers.")
        })
        .collect();
    found.sort();
    found
}

/// The `--impl` value that runs a solution file.
pub(crate) fn implementation(path: &Path) -> String {
    let relative = path.strip_prefix(root()).expect("under the root");
    let kind = if path.extension().is_some_and(|e| e == "py") {
        "python"
    } else {
        "node"
    };
    format!("{kind}:{}", relative.display())
}

fn needs_node(path: &Path) -> bool {
    path.extension().is_none_or(|e| e != "py")
}

/// Runs `dlqspec run specs --impl ...` for each solution, two at a time, keeping the order.
fn run_each(paths: &[PathBuf]) -> Vec<Ran> {
    crate::common::two_at_a_time(paths, &|path: &PathBuf| {
        let output = dlqspec()
            .env_remove("DLQSPEC_SHIMS")
            .args(["run", "--quiet", "--impl", &implementation(path)])
            .args(crate::common::suite())
            .output()
            .expect("dlqspec runs");
        ran(output)
    })
}

/// The solutions of a corpus folder this run can run (the JavaScript ones need Node).
pub(crate) fn selected(folder: &str) -> Vec<PathBuf> {
    let node = node_tests();
    solutions(folder)
        .into_iter()
        .filter(|path| node || !needs_node(path))
        .collect()
}

#[test]
fn the_precision_corpus_differs_in_what_the_contracts_leave_free_and_covers_every_kind() {
    let all = solutions("tests/precision");
    let count = |prefix: &str| {
        all.iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
            })
            .count()
    };
    for prefix in ["py_", "esm_", "cjs_", "ts_"] {
        assert!(count(prefix) >= 3, "fewer than 3 {prefix}* solutions");
    }
    assert_eq!(
        all.len(),
        count("py_") + count("esm_") + count("cjs_") + count("ts_")
    );
    assert!(all.len() >= 12, "{} correct solutions", all.len());
    for (contract, class) in [
        ("dlq-consumer", "DLQConsumer"),
        ("outcome-queue", "RetryQueue"),
    ] {
        let providing = all
            .iter()
            .filter(|p| {
                std::fs::read_to_string(p)
                    .expect("solution")
                    .contains(&format!("class {class}"))
            })
            .count();
        assert!(providing >= 8, "only {providing} solutions of {contract}");
    }
}

#[test]
fn every_correct_solution_of_the_precision_corpus_passes_every_bundled_spec() {
    let paths = selected("tests/precision");
    for (path, ran) in paths.iter().zip(run_each(&paths)) {
        let closing = ran.stdout.lines().last().unwrap_or_default();
        let passed: usize = closing
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(
            ran.code == 0 && passed > 0 && closing.contains(" passed, 0 failed"),
            "{} is correct (written from the lessons and docs/contracts.md), yet:\n{}{}",
            implementation(path),
            ran.stdout,
            ran.stderr
        );
    }
}

/// The rule a broken solution's first line says it breaks: `breaks: RULE; mistake: ...`.
pub(crate) fn broken_rule(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("solution");
    let first = text.lines().next().unwrap_or_default();
    first
        .split_once("breaks: ")
        .and_then(|(_, rest)| rest.split_once("; mistake: "))
        .map(|(rule, _)| rule.to_owned())
        .unwrap_or_else(|| {
            panic!(
                "{}: the first line must say `breaks: RULE; mistake: ...`",
                path.display()
            )
        })
}

#[test]
fn every_broken_solution_fails_a_spec_of_the_rule_it_breaks_with_a_diff() {
    let paths: Vec<PathBuf> = selected("tests/solutions")
        .into_iter()
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("only_"))
        })
        .collect();
    let rules: Vec<String> = paths.iter().map(|p| broken_rule(p)).collect();
    for (path, rule) in paths.iter().zip(&rules) {
        let contract = rule.split('/').next().unwrap_or_default();
        let exists = crate::common::bundled_contract(contract)
            .is_some_and(|c| c.rules().iter().any(|r| r.id == rule));
        assert!(exists, "{}: no rule `{rule}`", path.display());
    }
    for (survivor, _) in KNOWN_SURVIVORS {
        assert!(
            root().join("tests/solutions").join(survivor).is_file(),
            "KNOWN_SURVIVORS names {survivor}, which is not in tests/solutions"
        );
    }
    let mut caught = 0;
    for ((path, rule), ran) in paths.iter().zip(&rules).zip(run_each(&paths)) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some((_, why)) = KNOWN_SURVIVORS.iter().find(|(s, _)| *s == name) {
            assert_eq!(
                ran.code, 0,
                "{name} is listed as a known survivor ({why}) but a spec now catches it: remove it from KNOWN_SURVIVORS\n{}",
                ran.stdout
            );
            continue;
        }
        assert_eq!(ran.code, 1, "{name}:\n{}{}", ran.stdout, ran.stderr);
        // A FAIL block: the spec line, the rule broken (or, where no rule decides the
        // failure, the spec's rules), its cause, the first difference, then a diff.
        let lines: Vec<&str> = ran.stdout.lines().collect();
        // The heading names the rule the first difference breaks, which may be another
        // than the one the mistake is filed under (no default budget fails a retry first):
        // the spec that fails must check the rule, by its heading or by its `rules:`.
        let checks = |fail: &str| {
            let spec = fail.split_whitespace().nth(1).unwrap_or_default();
            std::fs::read_to_string(root().join(spec)).is_ok_and(|text| {
                text.lines()
                    .any(|l| l.starts_with("rules:") && l.contains(rule.as_str()))
            })
        };
        let named = lines.iter().enumerate().any(|(at, fail)| {
            let block: Vec<&str> = lines[at + 1..]
                .iter()
                .take_while(|l| l.starts_with("      "))
                .map(|l| l.trim_start())
                .collect();
            let heading = block.first().copied().unwrap_or_default();
            let heading_rules = heading
                .strip_prefix("rule broken: ")
                .or_else(|| heading.strip_prefix("the spec's rules: "));
            fail.starts_with("FAIL ")
                && heading_rules
                    .is_some_and(|rules| rules.split([' ', ',']).any(|r| r == rule) || checks(fail))
                && block.iter().any(|l| l.starts_with("first difference at "))
        });
        assert!(
            named && ran.stdout.contains("--- expected\n"),
            "{name} should fail a spec of {rule} with a diff:\n{}",
            ran.stdout
        );
        caught += 1;
    }
    let survivors = paths
        .iter()
        .filter(|p| KNOWN_SURVIVORS.iter().any(|(s, _)| p.ends_with(s)))
        .count();
    assert_eq!(caught + survivors, paths.len());
}

/// Specs that cover what a round of solutions written apart from the suite found missing, each
/// with a broken solution making the mistake the spec is there to catch.
const TARGETED: &[(&str, &str)] = &[
    (
        "dlq-consumer/failed-at-is-read-after-the-handler.yaml",
        "dlq_failed_at_before_handler.ts",
    ),
    (
        "dlq-consumer/permanent-subclass-is-permanent.yaml",
        "dlq_subclass_blind.py",
    ),
    (
        "dlq-consumer/permanent-subclass-is-permanent.yaml",
        "dlq_subclass_by_name.js",
    ),
    (
        "dlq-consumer/permanent-subclass-is-permanent.yaml",
        "dlq_error_names_given_class.mjs",
    ),
    (
        "dlq-consumer/transient-subclass-is-transient.yaml",
        "dlq_error_names_given_class.mjs",
    ),
    (
        "dlq-consumer/same-body-as-a-dead-lettered-message-is-handled.yaml",
        "dlq_dedupe_by_body.py",
    ),
    (
        "dlq-consumer/dead-lettered-id-sent-again-with-another-body.yaml",
        "dlq_dedupe_by_body.py",
    ),
    (
        "dlq-consumer/replay-all-includes-poison.yaml",
        "dlq_replay_all_skips_poison.py",
    ),
    (
        "dlq-consumer/empty-body-is-processed.yaml",
        "dlq_empty_body_is_nothing.mjs",
    ),
    (
        "dlq-consumer/replay-names-every-object-has.yaml",
        "dlq_replay_in_object.mjs",
    ),
    (
        "dlq-consumer/key-error-message-as-written.yaml",
        "dlq_error_quotes_key_errors.py",
    ),
    (
        "outcome-queue/replay-names-every-object-has.yaml",
        "oq_replay_in_object.mjs",
    ),
    (
        "outcome-queue/invalid-outcome-of-another-type.yaml",
        "oq_typeerror_nonstring.py",
    ),
];

#[test]
fn each_spec_fails_on_the_solution_with_the_mistake_it_targets() {
    let node = node_tests();
    for (spec, solution) in TARGETED {
        let path = root().join("tests/solutions").join(solution);
        if !node && needs_node(&path) {
            continue;
        }
        let spec = format!("specs/{spec}");
        let ran = ran(dlqspec()
            .env_remove("DLQSPEC_SHIMS")
            .args(["run", "--impl", &implementation(&path), &spec])
            .output()
            .expect("dlqspec runs"));
        assert!(
            ran.code == 1
                && ran.stdout.starts_with(&format!("FAIL  {spec}  "))
                && ran.stdout.contains("first difference at ")
                && ran.stdout.contains("--- expected\n"),
            "{spec} must fail on {solution} with a diff:\n{}{}",
            ran.stdout,
            ran.stderr
        );
    }
}

/// Every solution of the project that defines `RetryQueue` gets, on specs/outcome-queue, the
/// verdict the built-in Rust contract gave it before outcome-queue became an exercise folder:
/// the same specs fail, and no other (tests/fixtures/outcome-queue-verdicts.json).
#[test]
fn outcome_queue_verdicts_are_those_of_the_built_in_contract_it_replaced() {
    let recorded: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/outcome-queue-verdicts.json"))
            .expect("the recorded verdicts"),
    )
    .expect("JSON");
    let recorded = recorded["failing"].as_object().expect("failing");
    let node = node_tests();
    let paths: Vec<PathBuf> = recorded
        .keys()
        .map(|path| root().join(path))
        .filter(|path| node || !needs_node(path))
        .collect();
    assert!(paths.len() >= 20, "{} solutions", paths.len());
    let runs = crate::common::two_at_a_time(&paths, &|path: &PathBuf| {
        let output = dlqspec()
            .env_remove("DLQSPEC_SHIMS")
            .args(["run", "specs/outcome-queue", "--format", "json"])
            .args(["--impl", &implementation(path)])
            .output()
            .expect("dlqspec runs");
        crate::causes::finished(&String::from_utf8_lossy(&output.stdout))
    });
    let mut differ = Vec::new();
    for (path, events) in paths.iter().zip(runs) {
        let relative = path.strip_prefix(root()).expect("under the root");
        let wanted: Vec<&str> = recorded[&relative.display().to_string()]
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect();
        let mut failing: Vec<&str> = events
            .iter()
            .filter(|e| e["outcome"] != "passed")
            .filter_map(|e| e["path"].as_str())
            .collect();
        failing.sort_unstable();
        if events.len() != 41 || failing != wanted {
            differ.push(format!(
                "{}: {} specs ran; failing {failing:?}, recorded {wanted:?}",
                relative.display(),
                events.len()
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
