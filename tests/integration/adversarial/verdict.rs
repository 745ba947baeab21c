//! Attacks on the verdict: swapped reports, vanishing classes, one submission reaching the
//! others, hidden specs leaking, scores that lie by omission. Each hostile solution is in
//! tests/hostile/, named after its attack.

use std::path::Path;

use serde_json::Value;

use crate::common::{dlqspec, ran, root, run, suite, suite_of};

/// The JSON-lines events of a report.
fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The `run_finished` event of a JSON-lines run of `implementation` over `specs`.
fn run_finished(implementation: &str, specs: &[&str]) -> (i32, Value) {
    let mut args = vec!["run"];
    args.extend_from_slice(specs);
    args.extend(["--impl", implementation, "--format", "json"]);
    let ran = run(&args);
    let finished = events(&ran.stdout)
        .into_iter()
        .find(|e| e["event"] == "run_finished")
        .unwrap_or_else(|| panic!("no run_finished:\n{}{}", ran.stdout, ran.stderr));
    (ran.code, finished)
}

/// A summary.csv's rows, by the submission's file name: (status, score, max_score).
fn csv_rows(out: &Path) -> Vec<(String, String, String, String)> {
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    csv.lines()
        .skip(1)
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            let name = Path::new(cells[0])
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (
                name,
                cells[1].to_owned(),
                cells[2].to_owned(),
                cells[3].to_owned(),
            )
        })
        .collect()
}

fn row<'a>(
    rows: &'a [(String, String, String, String)],
    name: &str,
) -> &'a (String, String, String, String) {
    rows.iter()
        .find(|row| row.0 == name)
        .unwrap_or_else(|| panic!("no row for {name}: {rows:?}"))
}

#[cfg(target_os = "linux")]
#[test]
fn a_report_swapped_in_under_its_temporary_name_is_never_the_verdict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let results = dir.path().join("results.json");
    let pids = dir.path().join("pids");
    let ran = ran(dlqspec()
        .args([
            "run",
            "specs",
            "--impl",
            "python:tests/hostile/swapped_report.py",
            // The second wall: without the box, which would keep it from the report's folder
            // (adversarial/sandbox.rs), the writer still never renames a file it did not write.
            "--sandbox",
            "off",
        ])
        .args(["--format", "gradescope", "--output"])
        .arg(&results)
        .env("DLQSPEC_TEST_PIDS", &pids)
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let failed = format!("0 passed, {} failed", suite().len());
    assert!(ran.stdout.contains(&failed), "{}", ran.stdout);
    let text = std::fs::read_to_string(&results).expect("results.json");
    let results: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(results["score"], 0.0, "{text}");
    assert_eq!(
        results["tests"].as_array().map(Vec::len),
        Some(suite().len()),
        "{text}"
    );
    // Its watcher was ended before the report was written, and stays dead.
    crate::common::assert_all_dead(&crate::common::pids_in(&pids), "the watcher");
    assert!(!crate::common::pids_in(&pids).is_empty(), "the watcher ran");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("results.json")).expect("again"),
        text
    );
}

#[test]
fn classes_that_vanish_after_the_lookup_error_every_spec_instead_of_skipping_it() {
    let mut hostile = vec![
        "python:tests/hostile/vanishing_classes.py",
        "python:tests/hostile/patched_shim_new.py",
    ];
    if crate::common::node_tests() {
        hostile.push("node:tests/hostile/vanishing_classes.cjs");
    }
    for implementation in hostile {
        let (code, finished) = run_finished(implementation, &["specs"]);
        assert_eq!(code, 1, "{implementation}: {finished}");
        assert_eq!(finished["skipped"], 0, "{implementation}: {finished}");
        assert_eq!(
            finished["errored"].as_u64(),
            Some(suite().len() as u64),
            "{implementation}: {finished}"
        );
    }
    let ran = run(&[
        "run",
        "specs",
        "--impl",
        "python:tests/hostile/vanishing_classes.py",
    ]);
    assert!(
        ran.stdout.contains(
            "the implementation announced `dlq-consumer` in its hello, then answered `new dlq-consumer` with skipped"
        ),
        "{}",
        ran.stdout
    );
    // And grade scores it 0 of the whole suite.
    let class = tempfile::tempdir().expect("temp dir");
    let submission = class.path().join("vanishing.py");
    std::fs::copy(
        root().join("tests/hostile/vanishing_classes.py"),
        &submission,
    )
    .expect("copy");
    let out = class.path().join("grades");
    let ran = run(&[
        "grade",
        "--output",
        out.to_str().expect("utf-8"),
        submission.to_str().expect("utf-8"),
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let rows = csv_rows(&out);
    let vanishing = row(&rows, "vanishing.py");
    assert_eq!(
        (
            vanishing.1.as_str(),
            vanishing.2.as_str(),
            vanishing.3.as_str()
        ),
        ("fail", "0", suite().len().to_string().as_str())
    );
}

#[cfg(target_os = "linux")]
#[test]
fn one_submission_reaches_no_other_and_no_verdict_of_its_own_in_grade() {
    let class = tempfile::tempdir().expect("temp dir");
    for (name, source) in [
        ("alice.py", "examples/python/solution.py"),
        ("bob.py", "tests/solutions/dlq_no_poison.py"),
        ("mallory.py", "tests/hostile/reaches_the_class.py"),
    ] {
        std::fs::copy(root().join(source), class.path().join(name)).expect("copy");
    }
    let specs = "specs/dlq-consumer";
    let total = suite_of(specs).len();
    let (_, bob_alone) = run_finished("python:tests/solutions/dlq_no_poison.py", &[specs]);
    let out = class.path().join("grades");
    let pids = class.path().join("pids");
    let ran = ran(dlqspec()
        .args([
            // The second wall, without the box (which keeps each submission in its own folder):
            // grade still trusts nothing a run's folder or a killed run holds.
            "grade",
            "--specs",
            specs,
            "--jobs",
            "2",
            "--budget",
            "120",
            "--sandbox",
            "off",
            "--output",
        ])
        .arg(&out)
        .args(["alice.py", "bob.py", "mallory.py"].map(|n| class.path().join(n)))
        .env("DLQSPEC_TEST_PIDS", &pids)
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let rows = csv_rows(&out);
    let total = total.to_string();
    assert_eq!(
        row(&rows, "alice.py"),
        &(
            "alice.py".into(),
            "pass".into(),
            total.clone(),
            total.clone()
        )
    );
    let bob = row(&rows, "bob.py");
    assert_eq!(bob.1, "fail");
    assert_eq!(bob.2, bob_alone["passed"].to_string());
    let mallory = row(&rows, "mallory.py");
    assert_ne!(mallory.1, "pass", "{rows:?}");
    assert_eq!(
        (mallory.2.as_str(), mallory.3.as_str()),
        ("0", total.as_str())
    );
    // Every file of the folder is grade's: alice's report is her run's, the summary grade's.
    let alice = std::fs::read_to_string(out.join("alice.py.jsonl")).expect("alice's report");
    let finished = events(&alice)
        .into_iter()
        .find(|e| e["event"] == "run_finished")
        .expect("her run's end");
    assert_eq!(finished["passed"].to_string(), total, "{alice}");
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    assert!(!csv.contains("forged"), "{csv}");
    let recorded = crate::common::pids_in(&pids);
    assert!(!recorded.is_empty(), "mallory's watcher ran");
    crate::common::assert_all_dead(&recorded, "mallory's watcher");
}

#[test]
fn a_hidden_spec_reaches_no_visible_test() {
    let dir = tempfile::tempdir().expect("temp dir");
    let hidden = std::fs::read_to_string(
        root().join("specs/dlq-consumer/permanent-on-the-first-delivery.yaml"),
    )
    .expect("spec")
    .replace("price=-5", "price=SECRET-7731")
    .replace(
        "name: a PermanentError is dead-lettered at once, with budget left",
        "name: the secret spec nobody may read",
    )
    .replace(
        "contract: dlq-consumer\n",
        "contract: dlq-consumer\nvisibility: hidden\n",
    );
    assert!(hidden.contains("SECRET-7731") && hidden.contains("visibility: hidden"));
    std::fs::write(dir.path().join("a-hidden.yaml"), hidden).expect("write");
    std::fs::copy(
        root().join("specs/dlq-consumer/success-acks-and-returns-ok.yaml"),
        dir.path().join("b-visible.yaml"),
    )
    .expect("copy");
    for format in ["gradescope", "exercism"] {
        let results = dir.path().join(format!("{format}.json"));
        let ran = run(&[
            "run",
            dir.path().to_str().expect("utf-8"),
            "--impl",
            "python:tests/hostile/hidden_echo.py",
            // Without the box (which keeps the specs out of its reach), dlqspec itself still
            // copies no text of a hidden spec into a visible test.
            "--sandbox",
            "off",
            "--format",
            format,
            "--output",
            results.to_str().expect("utf-8"),
        ]);
        let text = std::fs::read_to_string(&results).expect("results");
        let results: Value = serde_json::from_str(&text).expect("JSON");
        let tests = results["tests"].as_array().expect("tests");
        assert_eq!(tests.len(), 2, "{text}\n{}", ran.stdout);
        let visible: Vec<String> = match format {
            // Gradescope hides a hidden test whole: what the student sees is everything else.
            "gradescope" => tests
                .iter()
                .filter(|t| t["visibility"] == "visible")
                .map(Value::to_string)
                .chain([results["output"].to_string()])
                .collect(),
            // Exercism shows every test.
            _ => vec![text.clone()],
        };
        for shown in &visible {
            assert!(!shown.contains("SECRET-7731"), "{format}: {shown}");
            assert!(!shown.contains("the secret spec"), "{format}: {shown}");
        }
        // The visible spec was served by a process that never saw the hidden one.
        let visible_test = tests
            .iter()
            .find(|t| t["name"] == "a handled message is acked and process_one returns ok")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            visible_test["status"] == "passed" || visible_test["status"] == "pass",
            "{format}: {visible_test}"
        );
    }
}

#[test]
fn a_class_missing_scores_nothing_of_its_points_and_a_broken_suite_grades_nobody() {
    let class = tempfile::tempdir().expect("temp dir");
    let submission = class.path().join("only_retry_queue.py");
    std::fs::copy(
        root().join("tests/solutions/only_retry_queue.py"),
        &submission,
    )
    .expect("copy");
    let out = class.path().join("grades");
    let ran = run(&[
        "grade",
        "--output",
        out.to_str().expect("utf-8"),
        submission.to_str().expect("utf-8"),
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let retry_queue = suite_of("specs/outcome-queue").len().to_string();
    assert_eq!(
        row(&csv_rows(&out), "only_retry_queue.py"),
        &(
            "only_retry_queue.py".into(),
            "fail".into(),
            retry_queue,
            suite().len().to_string()
        )
    );

    // A suite the reference fails is refused before any student is graded.
    let specs = class.path().join("specs");
    std::fs::create_dir(&specs).expect("mkdir");
    for spec in suite_of("specs/dlq-consumer") {
        let path = root().join(&spec);
        let name = path.file_name().expect("a name");
        std::fs::copy(&path, specs.join(name)).expect("copy");
    }
    let broken = specs.join("success-acks-and-returns-ok.yaml");
    let text = std::fs::read_to_string(&broken).expect("spec");
    std::fs::write(
        &broken,
        text.replace("  - process: ok\n", "  - process: dead\n"),
    )
    .expect("write");
    std::fs::write(specs.join("unloadable.yaml"), "contract: nope\n").expect("write");
    let out = class.path().join("refused");
    let ran = run(&[
        "grade",
        "--specs",
        specs.to_str().expect("utf-8"),
        "--output",
        out.to_str().expect("utf-8"),
        submission.to_str().expect("utf-8"),
    ]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    let total = suite_of("specs/dlq-consumer").len() + 1;
    assert!(
        ran.stderr.contains(&format!(
            "error: 2 of the {total} specs of --specs are broken (the built-in reference does not pass them), so no submission is graded against them"
        )),
        "{}",
        ran.stderr
    );
    for name in ["success-acks-and-returns-ok.yaml", "unloadable.yaml"] {
        assert!(
            ran.stderr
                .lines()
                .any(|l| l.starts_with("  ") && l.contains(name)),
            "{name}: {}",
            ran.stderr
        );
    }
    assert!(!out.exists(), "nothing graded, nothing written");
}
