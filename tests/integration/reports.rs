//! `dlqspec run` for CI: report formats, `--output`, annotations, selection, partitions, jobs.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::common::{dlqspec, path_arg, ran, root, run};

/// A spec whose second step expects `dead` where the reference says `ok` (line 10, column 5).
const WRONG_STEP: &str = "\
contract: dlq-consumer
name: wrong on purpose
rules: [dlq-consumer/transient-retry]
messages:
  - {id: a, body: order-1}
handler:
  a: [transient: db timeout, ok]
steps:
  - process: retry
  - process: dead
";

/// A spec that passes on the reference implementation.
const RIGHT: &str = "\
contract: dlq-consumer
name: right
rules: [dlq-consumer/transient-retry]
messages:
  - {id: a, body: order-1}
handler:
  a: [transient: db timeout, ok]
steps:
  - process: retry
  - process: ok
";

/// A spec with a misspelt key on line 4, column 19.
const BROKEN: &str = "contract: dlq-consumer\nname: x\nsteps:\n  - send: {id: a, bodyy: b}\n";

/// A folder of specs: `a-wrong.yaml`, `b-right.yaml`, `c-broken.yaml`, `d-right.yaml`.
fn mixed_suite() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in [
        ("a-wrong.yaml", WRONG_STEP),
        ("b-right.yaml", RIGHT),
        ("c-broken.yaml", BROKEN),
        ("d-right.yaml", RIGHT),
    ] {
        std::fs::write(dir.path().join(name), text).expect("write spec");
    }
    dir
}

/// The bundled suite's spec files, as dlqspec finds them (an exercise's `exercise.yaml` is
/// not one).
fn bundled_spec_paths() -> BTreeSet<String> {
    crate::common::suite().into_iter().collect()
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn finished_paths(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == "spec_finished")
        .map(|e| e["path"].as_str().expect("path").to_owned())
        .collect()
}

#[test]
fn junit_of_the_bundled_suite_has_one_testcase_per_spec() {
    let ran = run(&["run", "specs", "--format", "junit"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let doc = roxmltree::Document::parse(&ran.stdout).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "testsuites");
    let names: BTreeSet<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| n.attribute("name").expect("name").to_owned())
        .collect();
    assert_eq!(names, bundled_spec_paths());
    assert_eq!(
        doc.root_element().attribute("tests"),
        Some(names.len().to_string().as_str())
    );
}

#[test]
fn junit_failures_carry_the_diff_and_errors_the_spec_error() {
    let dir = mixed_suite();
    let ran = run(&["run", path_arg(dir.path()), "--format", "junit"]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    let doc = roxmltree::Document::parse(&ran.stdout).expect("well-formed XML");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 4);
    let case = |file: &str| {
        *cases
            .iter()
            .find(|c| c.attribute("name").is_some_and(|n| n.ends_with(file)))
            .unwrap_or_else(|| panic!("no testcase for {file}"))
    };
    let wrong = case("/a-wrong.yaml");
    assert!(wrong.attribute("name").unwrap().ends_with("/a-wrong.yaml"));
    assert_eq!(wrong.attribute("file"), wrong.attribute("name"));
    assert_eq!(wrong.attribute("line"), Some("10"));
    let failure = wrong
        .children()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    let body = failure.text().unwrap();
    assert!(
        body.contains("-process: dead\n+process: ok\n"),
        "failure body: {body}"
    );
    assert!(body.contains("a-wrong.yaml:10:14"), "failure body: {body}");

    let broken = case("/c-broken.yaml");
    let error = broken.children().find(|n| n.has_tag_name("error")).unwrap();
    assert_eq!(error.attribute("type"), Some("spec_error"));
    assert!(
        error
            .attribute("message")
            .unwrap()
            .ends_with("c-broken.yaml:4:19: unknown field `bodyy` (did you mean `body`?), expected one of id, body"),
        "{:?}",
        error.attribute("message")
    );
    for passed in [case("/b-right.yaml"), case("/d-right.yaml")] {
        // Nothing but its properties: no failure, error or skipped element.
        let children: Vec<_> = passed.children().filter(|n| n.is_element()).collect();
        assert_eq!(children.len(), 1);
        assert!(children[0].has_tag_name("properties"));
    }
}

#[test]
fn every_json_line_parses_and_has_the_documented_fields() {
    let dir = mixed_suite();
    let ran = run(&["run", path_arg(dir.path()), "--format", "json"]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    let events = json_lines(&ran.stdout);
    assert_eq!(events.len(), 6);

    let started = &events[0];
    assert_eq!(started["event"], "run_started");
    assert_eq!(started["format_version"], 1);
    assert_eq!(started["implementation"]["label"], "builtin");
    assert_eq!(started["implementation"]["is_reference"], true);
    assert_eq!(started["total"], 4);
    assert_eq!(started["filtered_out"], 0);

    let wrong = &events[1];
    assert_eq!(wrong["outcome"], "mismatch");
    assert_eq!(wrong["name"], "wrong on purpose");
    assert_eq!(wrong["contract"], "dlq-consumer");
    assert_eq!(
        wrong["rules"],
        serde_json::json!(["dlq-consumer/transient-retry"])
    );
    assert!(wrong["duration_ms"].is_f64());
    let mismatch = &wrong["mismatch"];
    assert_eq!(mismatch["step"], "step 2 (process)");
    assert_eq!(
        (mismatch["line"].as_u64(), mismatch["column"].as_u64()),
        (Some(10), Some(14))
    );
    assert_eq!(mismatch["expected"], "process: dead\n");
    assert_eq!(mismatch["actual"], "process: ok\n");
    assert_eq!(
        mismatch["diff"],
        "--- expected\n+++ actual\n@@ -1,1 +1,1 @@\n-process: dead\n+process: ok\n"
    );

    assert_eq!(events[2]["outcome"], "passed");
    assert!(events[2].get("details").is_none());

    let broken = &events[3];
    assert_eq!(broken["outcome"], "spec_error");
    assert_eq!(broken["name"], Value::Null);
    let spec_error = &broken["spec_error"];
    assert_eq!(spec_error["kind"], "syntax");
    assert_eq!(
        (spec_error["line"].as_u64(), spec_error["column"].as_u64()),
        (Some(4), Some(19))
    );
    assert_eq!(
        spec_error["message"],
        "unknown field `bodyy` (did you mean `body`?), expected one of id, body"
    );

    let finished = &events[5];
    assert_eq!(finished["event"], "run_finished");
    for (field, count) in [
        ("passed", 2),
        ("mismatched", 1),
        ("errored", 0),
        ("spec_errors", 1),
        ("skipped", 0),
        ("failed", 2),
        ("total", 4),
        ("exit_code", 2),
    ] {
        assert_eq!(finished[field], count, "{field} in {finished}");
    }
}

#[test]
fn tap_has_a_plan_and_one_result_per_spec() {
    let dir = mixed_suite();
    let ran = run(&[
        "run",
        path_arg(dir.path()),
        "--format",
        "tap",
        "--jobs",
        "2",
    ]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines[..2], ["TAP version 13", "1..4"]);
    let results: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("ok ") || l.starts_with("not ok "))
        .copied()
        .collect();
    assert_eq!(results.len(), 4);
    for (i, line) in results.iter().enumerate() {
        let number = line.trim_start_matches("not ").split(' ').nth(1);
        assert_eq!(number, Some((i + 1).to_string().as_str()), "{line}");
    }
    assert!(results[0].starts_with("not ok 1 - "));
    assert!(results[1].starts_with("ok 2 - "));
    assert!(results[2].starts_with("not ok 3 - "));
    assert!(
        ran.stdout.contains("  ---\n  outcome: \"mismatch\"\n"),
        "{}",
        ran.stdout
    );
    assert_eq!(lines.last(), Some(&"# 2 passed, 2 failed, 0 skipped"));
}

#[test]
fn fail_fast_skips_what_it_did_not_start() {
    let dir = mixed_suite();
    let ran = run(&[
        "run",
        path_arg(dir.path()),
        "--format",
        "tap",
        "--fail-fast",
        "-j",
        "1",
    ]);
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        ran.stdout
            .contains("b-right.yaml: right # SKIP not run: --fail-fast\n"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.ends_with("# 0 passed, 1 failed, 3 skipped\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn partitions_together_run_every_spec_exactly_once() {
    let dir = mixed_suite();
    let mut all = Vec::new();
    for strategy in ["", "count:", "hash:"] {
        let mut seen = Vec::new();
        for k in 1..=3 {
            let partition = format!("{strategy}{k}/3");
            let ran = run(&[
                "run",
                "specs",
                path_arg(dir.path()),
                "--format",
                "json",
                "--partition",
                &partition,
            ]);
            let events = json_lines(&ran.stdout);
            let paths = finished_paths(&events);
            assert_eq!(events[0]["total"], paths.len());
            seen.extend(paths);
        }
        let unique: BTreeSet<&String> = seen.iter().collect();
        assert_eq!(
            unique.len(),
            seen.len(),
            "{strategy}: a spec ran twice: {seen:?}"
        );
        all.push(unique.into_iter().cloned().collect::<BTreeSet<String>>());
    }
    let whole = run(&["run", "specs", path_arg(dir.path()), "--format", "json"]);
    let expected: BTreeSet<String> = finished_paths(&json_lines(&whole.stdout))
        .into_iter()
        .collect();
    assert_eq!(expected.len(), bundled_spec_paths().len() + 4);
    for partitioned in all {
        assert_eq!(partitioned, expected);
    }
}

#[test]
fn filters_select_by_name_path_glob_and_rule_prefix() {
    let dir = mixed_suite();
    let folder = path_arg(dir.path());
    let selected = |filters: &[&str]| {
        let mut args = vec!["run", folder, "--format", "json"];
        for filter in filters {
            args.extend(["--filter", filter]);
        }
        let events = json_lines(&run(&args).stdout);
        finished_paths(&events)
            .iter()
            .map(|p| p.rsplit('/').next().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(selected(&["wrong on purpose"]), ["a-wrong.yaml"]);
    assert_eq!(
        selected(&["*-right.yaml"]),
        ["b-right.yaml", "d-right.yaml"]
    );
    assert_eq!(selected(&["c-broken"]), ["c-broken.yaml"]);
    assert_eq!(
        selected(&["dlq-consumer/"]),
        ["a-wrong.yaml", "b-right.yaml", "d-right.yaml"]
    );
    assert_eq!(
        selected(&["dlq-consumer/transient-retry", "c-*"]),
        [
            "a-wrong.yaml",
            "b-right.yaml",
            "c-broken.yaml",
            "d-right.yaml"
        ]
    );
    assert!(selected(&["dlq-consumer/poison"]).is_empty());
    let events = json_lines(&run(&["run", folder, "--format", "json", "--filter", "a-w"]).stdout);
    assert_eq!(events[0]["filtered_out"], 3);
}

#[test]
fn one_job_and_four_jobs_print_the_same_report() {
    let dir = mixed_suite();
    let one = run(&["run", "specs", path_arg(dir.path()), "--jobs", "1"]);
    let four = run(&["run", "specs", path_arg(dir.path()), "--jobs", "4"]);
    assert_eq!(one.code, 2);
    assert_eq!(one.code, four.code);
    assert_eq!(one.stdout, four.stdout);
    assert!(one.stdout.contains("FAIL  "), "{}", one.stdout);
}

#[test]
fn github_actions_annotations_point_at_the_failed_expectation() {
    let dir = mixed_suite();
    let output = dlqspec()
        .args(["run", path_arg(dir.path())])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("dlqspec runs");
    let ran = ran(output);
    let annotations: Vec<&str> = ran.stdout.lines().filter(|l| l.starts_with("::")).collect();
    let folder = path_arg(dir.path());
    assert_eq!(
        annotations,
        [
            format!(
                "::error file={folder}/a-wrong.yaml,line=10,col=14,title=mismatch%3A 1 failing spec::\
                 the spec's expectation differs from what the built-in reference does (at process)%0A\
                 first spec: {folder}/a-wrong.yaml:10:14 (wrong on purpose)%0A\
                 there: the spec's expectation differs from what the built-in reference does at step 2 (process): \
                 the reference did what the +++ lines show. If the reference is right, \
                 `dlqspec bless {folder}/a-wrong.yaml` writes that into the spec; \
                 `dlqspec explain {folder}/a-wrong.yaml` tells the reference's run step by step%0A\
                 first difference at step 2 (process) ({folder}/a-wrong.yaml:10:14)%0A\
                 the step: process: dead (it received a, delivery 2)%0A--- expected%0A\
                 +++ actual%0A@@ -1,1 +1,1 @@%0A-process: dead%0A+process: ok"
            ),
            format!(
                "::error file={folder}/c-broken.yaml,line=4,col=19,title=spec error%3A 1 failing spec::\
                 spec error: unknown field `bodyy` (did you mean `body`?), expected one of id, body%0A\
                 first spec: {folder}/c-broken.yaml:4:19"
            ),
        ]
    );
    // Without GITHUB_ACTIONS there are none.
    assert!(!run(&["run", folder]).stdout.contains("::error"));
}

/// A run under GitHub Actions, its step summary in `summary` and the implementation's files
/// under the clone (`GITHUB_WORKSPACE`).
fn in_actions(args: &[&str], summary: &Path) -> crate::common::Ran {
    ran(dlqspec()
        .args(args)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", summary)
        .env("GITHUB_WORKSPACE", root())
        .output()
        .expect("dlqspec runs"))
}

#[test]
fn github_annotations_are_one_per_cause_on_the_students_line_and_the_summary_lists_all() {
    let dir = tempfile::tempdir().expect("temp dir");
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "an earlier step's summary\n").expect("summary");
    let report = dir.path().join("report.json");
    let student = "tests/students/debug_keyerror.py";
    let ran = in_actions(
        &[
            "run",
            "specs/dlq-consumer",
            "--impl",
            &format!("python:{student}"),
            "--format",
            "json",
            "--output",
            path_arg(&report),
        ],
        &summary,
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    // The run's failures and causes, as the JSON report tells them.
    let events: Vec<Value> = std::fs::read_to_string(&report)
        .expect("the report")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .filter(|e: &Value| e["event"] == "spec_finished" && e["cause_id"].is_string())
        .collect();
    let causes: BTreeSet<&str> = events
        .iter()
        .map(|e| e["cause_id"].as_str().unwrap())
        .collect();
    assert!(events.len() > causes.len(), "several specs share a cause");
    let annotations: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(annotations.len(), causes.len().min(10), "{}", ran.stdout);
    // The most common cause first, on the line of the student's code that raised.
    let first = annotations[0];
    let raised = format!("{student}:8");
    assert!(
        first.starts_with(&format!("::error file={student},line=8,title=")),
        "{first}"
    );
    let most = events
        .iter()
        .filter(|e| e["cause"].as_str().is_some_and(|c| c.contains(&raised)))
        .count();
    assert!(
        first.contains(&format!(
            "%3A {most} failing specs::KeyError: 'first_received' raised at "
        )),
        "{first}"
    );
    // The step summary: added after what was there, every cause in it.
    let text = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        text.starts_with(&format!(
            "an earlier step's summary\n### dlqspec: {} passed, {} failed, {} ",
            count_passed(&report),
            events.len(),
            causes.len()
        )),
        "{text}"
    );
    let rows = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| specs"))
        .count();
    assert_eq!(rows, causes.len(), "{text}");

    // More than ten causes: ten annotations, and a notice of the rest.
    let broken = tempfile::tempdir().expect("temp dir");
    for n in 0..12 {
        std::fs::write(
            broken.path().join(format!("b{n:02}.yaml")),
            format!("contract: dlq-consumer\nname: x\nmessages: [{{id: a, body{n}: b}}]\n"),
        )
        .expect("spec");
    }
    std::fs::remove_file(&summary).expect("summary");
    let ran = in_actions(&["run", path_arg(broken.path())], &summary);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    let commands: Vec<&str> = ran.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(commands.len(), 11, "{}", ran.stdout);
    assert!(commands[..10].iter().all(|c| c.starts_with("::error ")));
    assert_eq!(
        commands[10],
        "::notice title=dlqspec%3A 2 more causes::2 more causes of 2 failing specs, not \
         annotated (GitHub shows 10 a step): the step summary lists every cause"
    );
    let text = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        text.starts_with("### dlqspec: 0 passed, 12 failed, 12 causes\n"),
        "{text}"
    );
}

/// The passing specs of a JSON-lines report.
fn count_passed(report: &Path) -> usize {
    std::fs::read_to_string(report)
        .expect("the report")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "spec_finished" && e["outcome"] == "passed")
        .count()
}

#[test]
fn junit_failure_messages_are_the_cause() {
    let spec = "specs/dlq-consumer/poison-cycle.yaml";
    let ran = run(&[
        "run",
        spec,
        "--impl",
        "python:tests/solutions/dlq_no_poison.py",
        "--format",
        "junit",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let doc = roxmltree::Document::parse(&ran.stdout).expect("JUnit XML");
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("a failure");
    assert_eq!(
        failure.attribute("message"),
        Some(
            "dlq-consumer/poison: after receiving p, the reference puts p in the DLQ; \
             yours called the handler with p once more than the spec scripts"
        )
    );
    // Where it shows is the body's.
    assert!(
        failure.text().unwrap_or_default().contains(&format!(
            "first difference at step 9 (process) ({spec}:24:5)"
        )),
        "{:?}",
        failure.text()
    );
}

#[test]
fn output_writes_the_report_and_still_prints_the_human_summary() {
    let dir = mixed_suite();
    let out_dir = tempfile::tempdir().expect("temp dir");
    let report = out_dir.path().join("report.xml");
    let ran = run(&[
        "run",
        path_arg(dir.path()),
        "--format",
        "junit",
        "--output",
        path_arg(&report),
    ]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stdout
            .ends_with("failed: 1 mismatched, 1 spec error\n2 passed, 2 failed\n"),
        "{}",
        ran.stdout
    );
    let xml = std::fs::read_to_string(&report).expect("report written");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .count(),
        4
    );
    // Only the report: the temporary file it was written through is gone.
    assert_eq!(std::fs::read_dir(out_dir.path()).unwrap().count(), 1);
}

#[test]
fn an_output_in_a_missing_folder_is_a_usage_error_before_running() {
    let ran = run(&["run", "specs", "--output", "no/such/folder/report.json"]);
    assert_eq!(ran.code, 2);
    assert_eq!(ran.stdout, "");
    assert_eq!(
        ran.stderr,
        "error: cannot write the report to no/such/folder/report.json: No such file or directory (os error 2)\n"
    );
}

#[test]
fn bad_partition_and_jobs_values_are_usage_errors() {
    for (args, message) in [
        (
            ["--partition", "4/3"],
            "error: invalid value '4/3' for '--partition <K/N>': K must be between 1 and 3 in K/N; got 4/3",
        ),
        (
            ["--partition", "1-3"],
            "error: invalid value '1-3' for '--partition <K/N>': expected K/N such as 1/3 (or count:K/N, hash:K/N); got `1-3`",
        ),
        (
            ["--partition", "slice:1/3"],
            "error: invalid value 'slice:1/3' for '--partition <K/N>': unknown partition strategy `slice`; expected `count` or `hash`",
        ),
        (
            ["--jobs", "0"],
            "error: invalid value '0' for '--jobs <N>': must be at least 1",
        ),
        (
            ["--jobs", "many"],
            "error: invalid value 'many' for '--jobs <N>': expected a whole number of jobs such as 4; got `many`",
        ),
    ] {
        let ran = run(&["run", "specs", args[0], args[1]]);
        assert_eq!(ran.code, 2, "{args:?}");
        assert_eq!(ran.stdout, "");
        assert_eq!(
            ran.stderr,
            format!("{message}\n\nFor more information, try '--help'.\n"),
            "{args:?}"
        );
    }
}

#[test]
fn completions_and_man_pages_are_generated() {
    let bash = run(&["completions", "bash"]);
    assert_eq!(bash.code, 0);
    assert!(bash.stdout.contains("--partition"), "{}", bash.stdout);
    let man = run(&["man"]);
    assert_eq!(man.code, 0);
    assert!(man.stdout.contains(".TH dlqspec 1"), "{}", man.stdout);
    let man_run = run(&["man", "run"]);
    assert!(
        man_run.stdout.contains("\\-\\-fail\\-fast"),
        "{}",
        man_run.stdout
    );
}

/// `man dlqspec` after `cargo install`: `dlqspec man --install` puts every page where `man`
/// looks, and `man` reads the page installed there.
#[test]
fn man_install_puts_every_page_under_the_users_data_folder() {
    let home = tempfile::tempdir().expect("temp dir");
    let installed = ran(dlqspec()
        .args(["man", "--install"])
        .env("HOME", home.path())
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("dlqspec runs"));
    assert_eq!(
        installed.code, 0,
        "{}{}",
        installed.stdout, installed.stderr
    );
    let dir = home.path().join(".local/share/man/man1");
    let main = std::fs::read_to_string(dir.join("dlqspec.1")).expect("dlqspec.1");
    assert!(main.contains(".TH dlqspec 1"), "{main}");
    let run_page = std::fs::read_to_string(dir.join("dlqspec-run.1")).expect("dlqspec-run.1");
    assert!(run_page.contains("\\-\\-fail\\-fast"), "{run_page}");
    assert!(
        installed.stdout.starts_with("installed "),
        "{}",
        installed.stdout
    );
    assert!(
        installed.stdout.contains(&dir.display().to_string()),
        "{}",
        installed.stdout
    );
    // Again: an earlier install's pages are replaced, not refused.
    let again = ran_again(home.path());
    assert_eq!(again, 0);
    // `man` itself finds the page by MANPATH, where one is installed to ask.
    if let Ok(output) = std::process::Command::new("man")
        .args(["-w", "dlqspec"])
        .env("MANPATH", home.path().join(".local/share/man"))
        .output()
        && output.status.success()
    {
        let found = String::from_utf8_lossy(&output.stdout);
        assert!(found.trim_end().ends_with("man1/dlqspec.1"), "{found}");
    }
}

fn ran_again(home: &std::path::Path) -> i32 {
    dlqspec()
        .args(["man", "--install"])
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("dlqspec runs")
        .status
        .code()
        .unwrap_or(-1)
}

#[test]
fn a_run_that_cannot_start_leaves_an_earlier_report_alone() {
    let out_dir = tempfile::tempdir().expect("temp dir");
    let report = out_dir.path().join("report.json");
    std::fs::write(&report, "old").expect("write");
    let ran = run(&[
        "run",
        "no/such/specs",
        "--format",
        "json",
        "--output",
        path_arg(&report),
    ]);
    assert_eq!(ran.code, 2);
    assert_eq!(ran.stderr, "error: no/such/specs: no such file or folder\n");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "old");
    assert_eq!(std::fs::read_dir(out_dir.path()).unwrap().count(), 1);
}

/// A Python solution of dlq-consumer only (so an outcome-queue spec is skipped) that is the
/// lesson's own, except that its process exits on a message whose body is `exit-now` and it
/// never hands the handler a message whose body is `swallowed`.
fn consumer_that_exits_on_a_body() -> String {
    let lesson = std::fs::read_to_string(root().join("examples/python/solution.py"))
        .expect("the Python example");
    let consumer = &lesson[..lesson.find("class RetryQueue").expect("RetryQueue")];
    format!(
        "{consumer}\n\nimport os as _os\n_Lesson = DLQConsumer\n\n\nclass DLQConsumer(_Lesson):\n    \
         def __init__(self, queue, dlq, handler, clock, max_attempts=3):\n        \
         def guarded(body):\n            if body == \"exit-now\":\n                _os._exit(3)\n            \
         if body == \"swallowed\":\n                return None\n            \
         return handler(body)\n\n        super().__init__(queue, dlq, guarded, clock, max_attempts)\n"
    )
}

#[test]
fn json_lines_of_a_run_with_every_failure_validate_against_the_run_record_schema() {
    let text = std::fs::read_to_string(root().join("crates/formats/schema/run-record.schema.json"))
        .expect("schema file");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    // The validator is live: a spec_finished line without its outcome is refused, and so is a
    // field the record does not have.
    for wrong in [
        r#"{"event":"spec_finished","path":"a","name":null,"contract":null,"rules":[],"points":1,"duration_ms":1}"#,
        r#"{"event":"run_finished","passed":0,"mismatched":0,"errored":0,"spec_errors":0,"skipped":0,"expected_failures":0,"stale":0,"failed":0,"total":0,"duration_ms":1,"exit_code":0,"extra":1}"#,
    ] {
        let wrong: Value = serde_json::from_str(wrong).expect("json");
        assert!(!validator.is_valid(&wrong), "{wrong}");
    }
    // Beside the mixed suite's specs (its wrong one is a spec the reference contradicts): a
    // spec whose implementation exits, one it fails, one of a contract it does not provide.
    let dir = mixed_suite();
    for (name, body) in [
        ("e-exits.yaml", "exit-now"),
        ("g-mismatch.yaml", "swallowed"),
    ] {
        let spec = RIGHT.replace("body: order-1", &format!("body: {body}"));
        std::fs::write(dir.path().join(name), spec).expect("write spec");
    }
    std::fs::copy(
        root().join("specs/outcome-queue/budget-n-plus-one-never-happens.yaml"),
        dir.path().join("f-other-contract.yaml"),
    )
    .expect("copy spec");
    let solution = dir.path().join("solution.py");
    std::fs::write(&solution, consumer_that_exits_on_a_body()).expect("write solution");
    let implementation = format!("python:{}", path_arg(&solution));
    let ran = run(&[
        "run",
        path_arg(dir.path()),
        "--impl",
        &implementation,
        "--format",
        "json",
    ]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    let events = json_lines(&ran.stdout);
    let mut outcomes = BTreeSet::new();
    for event in &events {
        let errors: Vec<String> = validator
            .iter_errors(event)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{event}\n{}", errors.join("\n"));
        if event["event"] == "spec_finished" {
            outcomes.insert(event["outcome"].as_str().expect("outcome").to_owned());
        }
    }
    // The spec of the contract it has no class of is not attempted.
    let every: BTreeSet<String> = [
        "passed",
        "mismatch",
        "errored",
        "spec_error",
        "not_attempted",
    ]
    .map(str::to_owned)
    .into();
    assert_eq!(outcomes, every, "{}", ran.stdout);
    assert_eq!(events.last().expect("events")["event"], "run_finished");
}
