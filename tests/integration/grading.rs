//! Grading students: their captured output and the lines of their own code that raised, in
//! every report format.

use serde_json::Value;

use crate::common::{assert_contains_all, node_tests, run};

/// A spec the students in tests/students/ fail by raising from a helper of theirs.
const DEAD_LETTER_SPEC: &str = "specs/dlq-consumer/permanent-on-the-first-delivery.yaml";

/// A spec those students pass, printing all the same.
const PASSING_SPEC: &str = "specs/dlq-consumer/success-acks-and-returns-ok.yaml";

/// A student that prints and raises: the `--impl`, the file, the line that raised, its text.
struct Student {
    implementation: &'static str,
    file: &'static str,
    line: u64,
    source: &'static str,
    error: &'static str,
}

fn students() -> Vec<Student> {
    let mut students = vec![Student {
        implementation: "python:tests/students/debug_keyerror.py",
        file: "tests/students/debug_keyerror.py",
        line: 8,
        source: "return msg[\"first_received\"]",
        error: "KeyError: 'first_received'",
    }];
    if node_tests() {
        for (implementation, file, line, source) in [
            (
                "node:tests/students/debug_typeerror.mjs",
                "tests/students/debug_typeerror.mjs",
                5,
                "return msg.meta.firstReceivedAt;",
            ),
            // tsx's source maps give the line of the .ts file, not of the JavaScript it runs.
            (
                "node:tests/students/debug_typeerror.ts",
                "tests/students/debug_typeerror.ts",
                9,
                "return (msg as unknown as WithMeta).meta.firstReceivedAt;",
            ),
        ] {
            students.push(Student {
                implementation,
                file,
                line,
                source,
                error: "TypeError: Cannot read properties of undefined (reading 'firstReceivedAt')",
            });
        }
    }
    students
}

/// The `spec_finished` events of a JSON-lines report.
fn finished(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|event| event["event"] == "spec_finished")
        .collect()
}

#[test]
fn a_failing_students_output_and_the_line_that_raised_are_in_the_human_report() {
    for student in students() {
        let ran = run(&["run", DEAD_LETTER_SPEC, "--impl", student.implementation]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        let out = &ran.stdout;
        assert_contains_all(
            out,
            [
                format!("raised {}", student.error),
                format!("at {}:{} in ", student.file, student.line),
                student.source.to_owned(),
                "captured stdout:".to_owned(),
                "DEBUG got a".to_owned(),
                "captured stderr:".to_owned(),
                "WARN dead-lettering a".to_owned(),
            ],
            student.implementation,
        );
        // Only the student's frames: none of the shim's.
        assert!(
            !out.contains("dlqspec_shim") && !out.contains("dlqspec-shim"),
            "{out}"
        );
        // Printed once, under the spec, not also as a traceback on stderr.
        assert_eq!(out.matches("DEBUG got a").count(), 1, "{out}");
    }
}

#[test]
fn a_failing_students_output_and_the_line_that_raised_are_in_json_and_junit() {
    for student in students() {
        let ran = run(&[
            "run",
            DEAD_LETTER_SPEC,
            "--impl",
            student.implementation,
            "--format",
            "json",
        ]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        let events = finished(&ran.stdout);
        let output = &events[0]["output"];
        assert_eq!(output["stdout"]["text"], "DEBUG got a\n", "{output}");
        assert_eq!(output["stdout"]["cut_bytes"], 0);
        assert_eq!(output["stderr"]["text"], "WARN dead-lettering a\n");
        let traceback = &output["tracebacks"][0];
        assert_eq!(traceback["error"], student.error);
        let frame = &traceback["frames"][0];
        assert!(
            frame["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(student.file)),
            "{frame}"
        );
        assert_eq!(frame["line"], student.line);
        assert_eq!(frame["source"], student.source);

        let ran = run(&[
            "run",
            DEAD_LETTER_SPEC,
            "--impl",
            student.implementation,
            "--format",
            "junit",
        ]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        let xml = roxmltree::Document::parse(&ran.stdout).expect("JUnit XML parses");
        let case = xml
            .descendants()
            .find(|n| n.has_tag_name("testcase"))
            .expect("a testcase");
        let text = |tag: &str| {
            case.children()
                .find(|n| n.has_tag_name(tag))
                .and_then(|n| n.text())
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(text("system-out"), "DEBUG got a\n");
        let err = text("system-err");
        assert_contains_all(
            &err,
            [
                format!("raised {}", student.error),
                format!("{}:{}", student.file, student.line),
                student.source.to_owned(),
                "WARN dead-lettering a".to_owned(),
            ],
            "",
        );
    }
}

#[test]
fn tap_carries_the_output_as_diagnostics() {
    let ran = run(&[
        "run",
        DEAD_LETTER_SPEC,
        "--impl",
        "python:tests/students/debug_keyerror.py",
        "--format",
        "tap",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert_contains_all(
        &ran.stdout,
        [
            "  stdout: \"DEBUG got a\"",
            "  stderr: \"WARN dead-lettering a\"",
            "  traceback: |2-",
            "    raised KeyError: 'first_received'",
            "      return msg[\"first_received\"]",
        ],
        "",
    );
}

#[test]
fn passing_specs_show_their_output_only_with_show_output() {
    let args = [
        "run",
        PASSING_SPEC,
        "--impl",
        "python:tests/students/debug_keyerror.py",
    ];
    let ran = run(&args);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("DEBUG got a"), "{}", ran.stdout);
    let ran = run(&[&args[..], &["--show-output"]].concat());
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("captured stdout:\n        DEBUG got a\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn output_is_capped_with_what_was_cut_and_shown_escaped() {
    let impl_ = "python:tests/students/chatty.py";
    let ran = run(&["run", DEAD_LETTER_SPEC, "--impl", impl_]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("captured stdout (the first 65519 bytes; 374516 more cut)"),
        "{}",
        &ran.stdout[..ran.stdout.len().min(2000)]
    );
    assert!(ran.stdout.contains("\\x1b[31mred\\x1b[0m and a bell\\x07"));
    assert!(!ran.stdout.contains('\x1b') && !ran.stdout.contains('\x07'));
    let ran = run(&["run", DEAD_LETTER_SPEC, "--impl", impl_, "--format", "json"]);
    let events = finished(&ran.stdout);
    let stdout = &events[0]["output"]["stdout"];
    let kept = stdout["text"].as_str().expect("captured text");
    // A prefix of what was printed, cut between writes: whole lines, in order, nothing after.
    let colored = "\x1b[31mred\x1b[0m and a bell\x07\n";
    let lines = (kept.len() - colored.len()) / 22;
    let expected: String = std::iter::once(colored.to_owned())
        .chain((0..lines).map(|i| format!("line {i:05} of chatter\n")))
        .collect();
    assert_eq!(kept, expected);
    assert!(
        kept.len() <= 65536 && kept.len() > 65536 - 22,
        "{}",
        kept.len()
    );
    // 20,000 lines of 22 bytes, the colored line and `bytes too`, less what was kept.
    let printed = 20_000 * 22 + colored.len() + "bytes too\n".len();
    assert_eq!(
        stdout["cut_bytes"].as_u64(),
        Some((printed - kept.len()) as u64)
    );
}

/// Runs the dead-letter spec on `implementation`, which must error it (exit 1, `ERROR`).
fn errored_by(implementation: &str) -> crate::common::Ran {
    let ran = run(&["run", DEAD_LETTER_SPEC, "--impl", implementation]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.starts_with("ERROR "), "{}", ran.stdout);
    ran
}

#[test]
fn node_errors_left_to_promises_and_timers_error_the_spec() {
    if !node_tests() {
        return;
    }
    let ran = errored_by("node:tests/students/async_errors.mjs");
    assert_contains_all(
        &ran.stdout,
        [
            "unhandled promise rejection after a call returned: Error: lost in a promise (and 1 more)",
            "tests/students/async_errors.mjs:3 in later",
            "return Promise.reject(new Error('lost in a promise'));",
            "uncaught exception after a call returned: TypeError: thrown by a callback",
        ],
        "",
    );
    // A 0 ms timer fires before the call's reply, and errors the spec that set it.
    let ran = run(&[
        "run",
        DEAD_LETTER_SPEC,
        "--impl",
        "node:tests/students/late_timer.mjs",
        "--format",
        "json",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let events = finished(&ran.stdout);
    let event = &events[0];
    let text = event.to_string();
    assert!(
        text.contains("uncaught exception after a call returned: Error: late"),
        "{event:#}"
    );
    let frame = &event["output"]["tracebacks"][0]["frames"][0];
    assert!(
        frame["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("tests/students/late_timer.mjs")),
        "{event:#}"
    );
    assert_eq!(frame["line"], 3, "{event:#}");
    assert_eq!(frame["function"], "complainLater", "{event:#}");
    assert_eq!(frame["source"], "throw new Error('late');", "{event:#}");
}

/// Loads one of tests/schemas/*.json, written from the platform's documentation.
fn platform_schema(name: &str) -> jsonschema::Validator {
    let path = crate::common::root().join("tests/schemas").join(name);
    let text = std::fs::read_to_string(&path).expect("schema file");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, results: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(results)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}\n{results:#}");
}

/// `dlqspec run specs --impl IMPL --format FORMAT --output FILE`: the exit code and the file.
fn graded(format: &str, implementation: &str, extra: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("results.json");
    let file_arg = file.to_str().expect("utf-8");
    let mut args = vec![
        "run",
        "--impl",
        implementation,
        "--format",
        format,
        "--output",
        file_arg,
    ];
    args.extend_from_slice(extra);
    let suite = crate::common::suite();
    if !extra
        .iter()
        .any(|a| a.starts_with("specs") || a.contains('/'))
    {
        args.extend(suite.iter().map(String::as_str));
    }
    let ran = run(&args);
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{args:?} left no results ({e}): {}", ran.stderr));
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (ran.code, value)
}

#[test]
fn autograder_results_of_the_examples_and_of_broken_solutions_validate() {
    let gradescope = platform_schema("gradescope-results.schema.json");
    let exercism = platform_schema("exercism-results.schema.json");
    // The validators are live: results without a status, or with an unknown key, are refused.
    assert!(!exercism.is_valid(&serde_json::json!({"version": 3})));
    assert!(!gradescope.is_valid(&serde_json::json!({"score": 1, "points": 2})));

    let mut correct = vec!["python:examples/python/solution.py"];
    let mut broken = vec![
        "python:tests/solutions/dlq_no_poison.py",
        "python:tests/solutions/oq_strip.py",
        "python:tests/students/debug_keyerror.py",
        "python:tests/students/chatty.py",
    ];
    if node_tests() {
        correct.extend([
            "node:examples/javascript/solution.mjs",
            "node:examples/typescript/solution.ts",
        ]);
        broken.extend([
            "node:tests/solutions/dlq_off_by_one.mjs",
            "node:tests/solutions/oq_shallow_state.ts",
            "node:tests/students/debug_typeerror.ts",
        ]);
    }
    let specs = crate::common::suite().len();
    for implementation in &correct {
        let (code, results) = graded("gradescope", implementation, &[]);
        assert_eq!(code, 0, "{implementation}");
        assert_valid(&gradescope, &results, implementation);
        assert_eq!(results["score"], specs as f64, "{implementation}");
        let (code, results) = results_exercism(implementation);
        assert_eq!(code, 0, "{implementation}");
        assert_valid(&exercism, &results, implementation);
        assert_eq!(results["status"], "pass", "{implementation}");
        assert_eq!(results["tests"].as_array().map(Vec::len), Some(specs));
    }
    for implementation in &broken {
        let (code, results) = graded("gradescope", implementation, &[]);
        assert_eq!(code, 1, "{implementation}");
        assert_valid(&gradescope, &results, implementation);
        let tests = results["tests"].as_array().expect("tests");
        let failed: Vec<&Value> = tests.iter().filter(|t| t["status"] == "failed").collect();
        assert!(!failed.is_empty(), "{implementation}");
        // A failed test shows the student the diff or the error.
        assert!(
            failed
                .iter()
                .all(|t| t["score"] == 0.0 && t["max_score"] == 1.0)
        );
        assert!(
            failed.iter().any(|t| t["output"]
                .as_str()
                .is_some_and(|o| o.contains("first difference at"))),
            "{implementation}"
        );
        let (code, results) = results_exercism(implementation);
        assert_eq!(code, 1, "{implementation}");
        assert_valid(&exercism, &results, implementation);
        assert_eq!(results["status"], "fail", "{implementation}");
    }
}

fn results_exercism(implementation: &str) -> (i32, Value) {
    graded("exercism", implementation, &[])
}

#[test]
fn exercism_tests_carry_the_students_output_the_scenario_and_a_task() {
    let (_, results) = results_exercism("python:tests/students/debug_keyerror.py");
    let tests = results["tests"].as_array().expect("tests");
    let test = tests
        .iter()
        .find(|t| t["name"] == "a PermanentError is dead-lettered at once, with budget left")
        .expect("the spec's test");
    assert_eq!(test["status"], "fail");
    let message = test["message"].as_str().expect("a message");
    assert!(
        message.contains("+process: \"raised KeyError: 'first_received'\""),
        "{message}"
    );
    // Frames are said relative to the solution's folder.
    assert!(
        message.contains("at debug_keyerror.py:8 in first_attempt"),
        "{message}"
    );
    // Each stream under its heading, as the human report shows them.
    assert_eq!(
        test["output"],
        "captured stdout:\n  DEBUG got a\ncaptured stderr:\n  WARN dead-lettering a\n"
    );
    assert!(
        test["test_code"]
            .as_str()
            .is_some_and(|code| code.contains("contract: dlq-consumer"))
    );
    // One task per contract, in the order the run meets them.
    let tasks: std::collections::BTreeSet<u64> =
        tests.iter().filter_map(|t| t["task_id"].as_u64()).collect();
    assert_eq!(tasks, [1, 2].into());
}

#[test]
fn a_syntax_error_is_an_exercism_error_with_a_clear_message() {
    let exercism = platform_schema("exercism-results.schema.json");
    let (code, results) = results_exercism("python:tests/students/syntax_error.py");
    assert_eq!(code, 1);
    assert_valid(&exercism, &results, "syntax error");
    assert_eq!(results["status"], "error");
    let message = results["message"].as_str().expect("a message");
    assert_contains_all(
        message,
        [
            "the solution could not be loaded: SyntaxError: expected ':'",
            "--> syntax_error.py:5",
            "class DLQConsumer",
        ],
        "",
    );
    // No path of the machine that ran it, and nothing of the shim.
    let root = crate::common::root();
    assert!(
        !message.contains(root.to_str().expect("utf-8")),
        "{message}"
    );
    assert!(!message.contains("dlqspec_shim"), "{message}");

    // A solution without the contract's class cannot run either: still a results file.
    let (code, results) = graded(
        "exercism",
        "python:tests/solutions/only_retry_queue.py",
        &["specs/dlq-consumer"],
    );
    assert_eq!(code, 1);
    assert_valid(&exercism, &results, "nothing provided");
    assert_eq!(results["status"], "error");
    assert!(
        results["message"]
            .as_str()
            .is_some_and(|m| m.contains("has no class `DLQConsumer`")),
        "{results}"
    );
    let gradescope = platform_schema("gradescope-results.schema.json");
    let (_, results) = graded(
        "gradescope",
        "python:tests/solutions/only_retry_queue.py",
        &["specs/dlq-consumer"],
    );
    assert_valid(&gradescope, &results, "nothing provided");
    assert_eq!(results["score"], 0.0);
}

#[test]
fn points_and_visibility_weigh_and_hide_a_spec() {
    let text = std::fs::read_to_string(crate::common::root().join(DEAD_LETTER_SPEC))
        .expect("spec")
        .replace(
            "contract: dlq-consumer\n",
            "contract: dlq-consumer\npoints: 2.5\nvisibility: hidden\n",
        );
    assert!(text.contains("points: 2.5"), "{text}");
    let (dir, spec) = crate::common::temp_spec("weighted.yaml", &text);
    let spec = spec.to_str().expect("utf-8");
    let (_, results) = graded(
        "gradescope",
        "python:tests/students/debug_keyerror.py",
        &[spec],
    );
    let test = &results["tests"][0];
    assert_eq!(test["max_score"], 2.5);
    assert_eq!(test["score"], 0.0);
    assert_eq!(test["visibility"], "hidden");
    // Hidden: only whether it passed, none of the diff or the student's output.
    assert_eq!(test["output"], "failed");
    let (_, results) = graded(
        "exercism",
        "python:tests/students/debug_keyerror.py",
        &[spec],
    );
    let test = &results["tests"][0];
    assert_eq!(test["message"], "failed");
    assert_eq!(test["output"], Value::Null);
    assert_eq!(test["test_code"], "(hidden)");
    let (_, results) = graded("gradescope", "python:examples/python/solution.py", &[spec]);
    assert_eq!(results["score"], 2.5);
    assert_eq!(results["tests"][0]["output"], "passed");

    // Points are a number of at least 0, said at the line.
    let negative = text.replace("points: 2.5", "points: -1");
    std::fs::write(dir.path().join("weighted.yaml"), negative).expect("write");
    let ran = run(&["run", spec]);
    assert_eq!(ran.code, 2, "{}", ran.stdout);
    assert!(
        ran.stdout
            .contains("`points` must be a number of at least 0, not -1")
            && ran.stdout.contains("weighted.yaml:3:"),
        "{}",
        ran.stdout
    );
}

#[test]
fn grade_lists_a_correct_a_buggy_a_broken_and_a_hanging_submission_told_once() {
    let class = tempfile::tempdir().expect("temp dir");
    let root = crate::common::root();
    // A folder per submission, its entry found by the documented rule; and a lone file.
    for (folder, source, file) in [
        ("alice", "examples/python/solution.py", "solution.py"),
        ("bob", "tests/solutions/dlq_no_poison.py", "consumer.py"),
        ("carol", "tests/students/syntax_error.py", "solution.py"),
    ] {
        let dir = class.path().join(folder);
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::copy(root.join(source), dir.join(file)).expect("copy");
    }
    std::fs::copy(
        root.join("tests/students/hangs.py"),
        class.path().join("dave.py"),
    )
    .expect("copy");
    let out = class.path().join("grades");
    let submissions: Vec<String> = ["alice", "bob", "carol", "dave.py"]
        .iter()
        .map(|s| class.path().join(s).to_string_lossy().into_owned())
        .collect();
    // One contract's specs: the class's solutions are of dlq-consumer.
    let specs = crate::common::suite_of("specs/dlq-consumer");
    let mut args = vec!["grade"];
    for spec in &specs {
        args.extend(["--specs", spec.as_str()]);
    }
    args.extend([
        "--output",
        out.to_str().expect("utf-8"),
        "--budget",
        "15",
        "--timeout",
        "2",
        "--jobs",
        "2",
    ]);
    args.extend(submissions.iter().map(String::as_str));
    let ran = run(&args);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("4 submissions graded: 1 pass, 2 fail, 1 broken"),
        "{}{}",
        ran.stdout,
        ran.stderr
    );
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let header = &rows[0];
    assert_eq!(&header[..3], ["submission", "status", "score"]);
    let poison = header
        .iter()
        .position(|c| *c == "dlq-consumer/poison")
        .expect("a column per rule");
    let status = |who: &str| {
        rows.iter()
            .find(|row| row[0].ends_with(who))
            .unwrap_or_else(|| panic!("no row for {who}:\n{csv}"))
    };
    assert_eq!(status("alice")[1], "pass");
    let dlq_specs = crate::common::suite_of("specs/dlq-consumer")
        .len()
        .to_string();
    assert_eq!(status("alice")[2], dlq_specs);
    assert_eq!(status("alice")[poison], "pass");
    assert_eq!(status("bob")[1], "fail");
    assert_eq!(status("bob")[poison], "fail");
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no column {name}: {csv}"))
    };
    assert_eq!(status("carol")[1], "broken");
    assert!(
        status("carol")[column("note")].contains("SyntaxError"),
        "{csv}"
    );
    // The hang is told once: the spec it hung in errs, every spec after it is not run (not
    // failed), and the rules only those cover are not run, never a fail.
    let dave = status("dave.py");
    assert_eq!(dave[1], "fail", "{csv}");
    assert_eq!(
        (dave[column("failed")], dave[column("not_run")]),
        ("1", (specs.len() - 1).to_string().as_str()),
        "{csv}"
    );
    assert!(
        dave[column("note")].contains("`process_one()` never returned"),
        "{csv}"
    );
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("json");
    let dave = summary["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|row| row["name"] == "dave.py")
        .expect("dave's row");
    let hung_in: Vec<&String> = dave["specs"]
        .as_object()
        .expect("specs")
        .iter()
        .filter(|(_, verdict)| verdict["outcome"] == "errored")
        .map(|(path, _)| path)
        .collect();
    assert_eq!(hung_in.len(), 1, "{dave}");
    let failed_rules: Vec<&String> = dave["rules"]
        .as_object()
        .expect("rules")
        .iter()
        .filter(|(_, verdict)| *verdict == "fail")
        .map(|(rule, _)| rule)
        .collect();
    let not_run_rules = dave["rules"]
        .as_object()
        .expect("rules")
        .values()
        .filter(|verdict| *verdict == "not_run")
        .count();
    assert!(not_run_rules > 0, "{dave}");
    let hung_spec = std::fs::read_to_string(hung_in[0]).expect("the spec it hung in");
    for rule in &failed_rules {
        assert!(hung_spec.contains(rule.as_str()), "{rule} fails: {dave}");
    }
    let page = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
    assert!(page.contains(": not run\">"), "{page}");
    // Its report, which its student reads, says it once, with no grader's option.
    let told = std::fs::read_to_string(out.join("dave.py.txt")).expect("dave's report");
    assert_eq!(
        told.matches("never returned: an infinite loop").count(),
        1,
        "{told}"
    );
    assert!(!told.contains("--timeout"), "{told}");
    assert!(
        told.contains("not run: the solution hung in an earlier spec"),
        "{told}"
    );
    // A report per submission, linked from the page.
    let html = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
    for name in ["alice", "bob", "carol", "dave.py"] {
        assert!(out.join(format!("{name}.txt")).is_file(), "{name}");
        assert!(html.contains(&format!("<a href=\"{name}.txt\">")), "{html}");
    }
    let bob = std::fs::read_to_string(out.join("bob.txt")).expect("bob's report");
    assert!(bob.contains("FAIL "), "{bob}");
}

#[test]
fn gradescope_says_paths_relative_to_the_solution() {
    let (_, results) = graded(
        "gradescope",
        "python:tests/students/debug_keyerror.py",
        &[DEAD_LETTER_SPEC],
    );
    let output = results["tests"][0]["output"].as_str().expect("output");
    assert!(
        output.contains("at debug_keyerror.py:8 in first_attempt"),
        "{output}"
    );
    let root = crate::common::root();
    let root = root.to_str().expect("utf-8");
    assert!(!results.to_string().contains(root), "{results}");
    // A solution that does not load: its message too.
    let (_, results) = graded(
        "gradescope",
        "python:tests/students/syntax_error.py",
        &[DEAD_LETTER_SPEC],
    );
    assert!(!results.to_string().contains(root), "{results}");
    assert!(
        results.to_string().contains("syntax_error.py:5"),
        "{results}"
    );
}

#[test]
fn exercism_output_labels_each_stream_and_says_what_was_cut() {
    let (_, results) = graded(
        "exercism",
        "python:tests/students/chatty.py",
        &[DEAD_LETTER_SPEC],
    );
    let output = results["tests"][0]["output"].as_str().expect("output");
    assert!(
        output.starts_with(
            "captured stdout (the first 65519 bytes; 374516 more cut):\n  \\x1b[31mred\\x1b[0m and a bell\\x07\n"
        ),
        "{output}"
    );
    // Escaped once, at rendering: no raw control character, and no escape of an escape.
    assert!(
        !output.contains('\x1b') && !output.contains("\\\\x1b"),
        "{output}"
    );
    assert!(output.ends_with("[output cut: Exercism shows 500 characters]"));
}

#[test]
fn the_typescript_student_takes_its_types_from_the_shim() {
    let root = crate::common::root();
    let ts = std::fs::read_to_string(root.join("tests/students/debug_typeerror.ts")).expect("ts");
    assert!(
        ts.contains("type Message } from './given';") && !ts.contains("type Message ="),
        "{ts}"
    );
    let given = std::fs::read_to_string(root.join("src/contracts/dlq_consumer/given.d.ts"))
        .expect("given.d.ts");
    assert!(given.contains("export interface Message {"));
}

#[test]
fn the_documented_runner_scripts_try_every_entry_file_in_order() {
    let docs = std::fs::read_to_string(crate::common::root().join("docs/autograders.md"))
        .expect("docs/autograders.md");
    let wanted = format!(
        "for entry in {}; do",
        dlqspec::external::entry::entry_files().join(" ")
    );
    let loops: Vec<&str> = docs
        .lines()
        .filter(|line| line.trim_start().starts_with("for entry in"))
        .collect();
    assert!(!loops.is_empty(), "{docs}");
    for line in loops {
        assert_eq!(line.trim(), wanted);
    }
    // And a .cjs entry runs on node.
    assert!(docs.contains("*)    impl=\"node:"), "{docs}");
}

/// Copies `(name, source)` pairs into a class folder; gives the submissions' paths.
fn class_of(class: &std::path::Path, members: &[(&str, &str)]) -> Vec<String> {
    let root = crate::common::root();
    members
        .iter()
        .map(|(name, source)| {
            let path = class.join(name);
            std::fs::copy(root.join(source), &path).expect("copy");
            path.to_string_lossy().into_owned()
        })
        .collect()
}

/// `dlqspec grade` over two quick specs, into `out`.
fn grade_into(out: &std::path::Path, submissions: &[String], extra: &[&str]) -> crate::common::Ran {
    let mut args = vec![
        "grade",
        "--specs",
        DEAD_LETTER_SPEC,
        "--specs",
        PASSING_SPEC,
        "--output",
        out.to_str().expect("utf-8"),
        "--jobs",
        "2",
    ];
    args.extend_from_slice(extra);
    args.extend(submissions.iter().map(String::as_str));
    run(&args)
}

/// The `submission` column of a summary.csv.
fn csv_submissions(out: &std::path::Path) -> Vec<String> {
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    csv.lines()
        .skip(1)
        .map(|line| line.split(',').next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn grade_shards_a_class_deterministically_and_merges_the_shards() {
    let class = tempfile::tempdir().expect("temp dir");
    let submissions = class_of(
        class.path(),
        &[
            ("alice.py", "examples/python/solution.py"),
            ("bob.py", "tests/students/debug_keyerror.py"),
            ("carol.py", "tests/students/syntax_error.py"),
            ("dave.py", "examples/python/solution.py"),
            ("erin.py", "tests/students/debug_keyerror.py"),
        ],
    );
    let mut reversed = submissions.clone();
    reversed.reverse();
    let mut shards = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for k in 1..=3 {
        let out = class.path().join(format!("shard-{k}"));
        let share = format!("{k}/3");
        let ran = grade_into(&out, &submissions, &["--partition", &share]);
        assert!(
            ran.code == 0 || ran.code == 1,
            "{}{}",
            ran.stdout,
            ran.stderr
        );
        assert!(
            ran.stdout
                .contains(&format!("(share {share} of 5 submissions)")),
            "{}",
            ran.stdout
        );
        // Not a terminal: no progress bar drawn, only a line per submission.
        assert!(
            !ran.stderr.contains('\r') && !ran.stderr.contains('\x1b'),
            "{:?}",
            ran.stderr
        );
        let mine = csv_submissions(&out);
        // The same share whatever order the submissions are given in.
        let again = class.path().join(format!("again-{k}"));
        let ran = grade_into(&again, &reversed, &["--partition", &share]);
        assert!(
            ran.code == 0 || ran.code == 1,
            "{}{}",
            ran.stdout,
            ran.stderr
        );
        let mut theirs = csv_submissions(&again);
        let mut sorted = mine.clone();
        sorted.sort();
        theirs.sort();
        assert_eq!(sorted, theirs, "share {share}");
        // Round-robin over the sorted names.
        let expected = [&["alice", "dave"][..], &["bob", "erin"], &["carol"]][k - 1];
        assert_eq!(sorted.len(), expected.len(), "share {share}: {sorted:?}");
        for (got, name) in sorted.iter().zip(expected) {
            assert!(got.contains(name), "share {share}: {sorted:?}");
        }
        for submission in &mine {
            assert!(
                seen.insert(submission.clone()),
                "{submission} in two shares"
            );
        }
        assert!(out.join("summary.json").is_file());
        shards.push(out);
    }
    assert_eq!(seen.len(), 5);
    let merged = class.path().join("merged");
    let mut args = vec!["grade", "--merge"];
    args.extend(shards.iter().rev().map(|p| p.to_str().expect("utf-8")));
    args.extend(["--output", merged.to_str().expect("utf-8")]);
    let ran = run(&args);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("5 submissions merged from 3 shards: 2 pass, 2 fail, 1 broken"),
        "{}",
        ran.stdout
    );
    // Sorted by name, whatever the order of the shards.
    let rows = csv_submissions(&merged);
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r.rsplit('/').next().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        ["alice.py", "bob.py", "carol.py", "dave.py", "erin.py"]
    );
    // Each report is copied beside the merged page, which links it.
    let html = std::fs::read_to_string(merged.join("summary.html")).expect("summary.html");
    for name in names {
        let report = merged.join(format!("{name}.txt"));
        assert!(report.is_file(), "{name}");
        assert!(!report.is_symlink());
        assert!(html.contains(&format!("<a href=\"{name}.txt\">")), "{html}");
    }
    let bob = std::fs::read_to_string(merged.join("bob.py.txt")).expect("bob's report");
    assert!(bob.contains("KeyError: 'first_received'"), "{bob}");
    // The pictures of a failing submission's specs are copied too, each where its link says.
    let pictures: Vec<&str> = html
        .split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|href| href.contains("/explain/"))
        .collect();
    assert!(!pictures.is_empty(), "{html}");
    for picture in pictures {
        let page = std::fs::read_to_string(merged.join(picture)).expect("a picture linked");
        assert!(page.contains("<svg id=\"explain\""), "{picture}");
    }
    // Merged once more, into itself: the same summary.
    let before = std::fs::read_to_string(merged.join("summary.csv")).expect("csv");
    let ran = run(&[
        "grade",
        "--merge",
        merged.to_str().expect("utf-8"),
        "--output",
        merged.to_str().expect("utf-8"),
    ]);
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert_eq!(
        std::fs::read_to_string(merged.join("summary.csv")).expect("csv"),
        before
    );
}

#[test]
fn merging_refuses_duplicates_and_names_a_broken_shard() {
    let class = tempfile::tempdir().expect("temp dir");
    let submissions = class_of(class.path(), &[("alice.py", "examples/python/solution.py")]);
    let shard = class.path().join("shard");
    let ran = grade_into(&shard, &submissions, &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let shard_arg = shard.to_str().expect("utf-8");
    let out = class.path().join("out");
    let out_arg = out.to_str().expect("utf-8");
    let merge = |shards: &[&str]| {
        let mut args = vec!["grade", "--merge"];
        args.extend_from_slice(shards);
        args.extend(["--output", out_arg]);
        run(&args)
    };
    // The same submission in two shards.
    let copy = class.path().join("copy");
    std::fs::create_dir(&copy).expect("mkdir");
    std::fs::copy(shard.join("summary.json"), copy.join("summary.json")).expect("copy");
    let ran = merge(&[shard_arg, copy.to_str().expect("utf-8")]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("alice.py is in both")
            && ran
                .stderr
                .contains("each submission must be graded by one shard"),
        "{}",
        ran.stderr
    );
    assert!(
        !out.exists(),
        "nothing is written before the shards are checked"
    );
    // A missing folder, a folder without summary.json, a summary that does not parse, one of
    // another version, a row whose name would leave the folder: each named, none a panic.
    let missing = class.path().join("missing");
    let ran = merge(&[missing.to_str().expect("utf-8")]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains("shard folder") && ran.stderr.contains("missing cannot be read"),
        "{}",
        ran.stderr
    );
    let empty = class.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let ran = merge(&[empty.to_str().expect("utf-8")]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains("empty holds no summary.json"),
        "{}",
        ran.stderr
    );
    let summary = copy.join("summary.json");
    let copy_arg = copy.to_str().expect("utf-8");
    for (text, wanted) in [
        (
            "{\n  \"format\": @\n}",
            "copy/summary.json:2:13: not a summary: expected value;",
        ),
        (
            r#"{"format": "dlqspec-grade-summary", "version": 7, "rows": []}"#,
            "summary version 7 is not the 2 this dlqspec reads",
        ),
        (
            r#"{"format": "dlqspec-grade-summary", "version": 2, "rows": [{"submission": "x", "name": "../../x", "status": "pass", "score": 1, "max_score": 1, "passed": 1, "failed": 0, "seconds": 0.5, "note": "", "report": null, "json_report": null, "rules": {}, "specs": {}}]}"#,
            "rows[0]: `name` \"../../x\" is not a report name",
        ),
        (
            r#"{"format": "dlqspec-grade-summary", "version": 2, "rows": [{"submission": "x", "name": "x"}]}"#,
            "copy/summary.json:1:93: rows[0]: missing field `status`",
        ),
        ("[]", "not a dlqspec grade summary"),
    ] {
        std::fs::write(&summary, text).expect("write");
        let ran = merge(&[copy_arg]);
        assert_eq!(ran.code, 2, "{text}");
        assert!(ran.stderr.contains(wanted), "{text}: {}", ran.stderr);
        assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    }
    // A report in a shard that is a link is never followed into the merged folder.
    #[cfg(unix)]
    {
        let linked = class.path().join("linked");
        std::fs::create_dir(&linked).expect("mkdir");
        std::fs::copy(shard.join("summary.json"), linked.join("summary.json")).expect("copy");
        std::os::unix::fs::symlink("/etc/passwd", linked.join("alice.py.txt")).expect("link");
        let ran = merge(&[linked.to_str().expect("utf-8")]);
        assert_eq!(ran.code, 2, "{}", ran.stderr);
        assert!(
            ran.stderr.contains("alice.py.txt: not a regular file"),
            "{}",
            ran.stderr
        );
        assert!(!out.join("alice.py.txt").exists());
    }
    // A submission list and --merge at once is a usage error.
    let ran = run(&["grade", "x.py", "--merge", shard_arg]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("cannot be used with '--merge <DIR>...'"),
        "{}",
        ran.stderr
    );
}

#[test]
fn the_documented_workflow_shards_a_class_over_a_matrix_and_merges_it() {
    let doc = std::fs::read_to_string(crate::common::root().join("docs/autograders.md"))
        .expect("docs/autograders.md");
    let workflow = doc
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|block| block.contains("matrix:"))
        .expect("a workflow in docs/autograders.md");
    let parsed: Value = serde_saphyr::from_str(workflow).expect("the workflow is YAML");
    let shards = parsed["jobs"]["grade"]["strategy"]["matrix"]["shard"]
        .as_array()
        .expect("a matrix of shards");
    assert_eq!(shards.len(), 4);
    let runs = |job: &str| -> Vec<String> {
        parsed["jobs"][job]["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .filter_map(|step| step["run"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(
        runs("grade")
            .iter()
            .any(|run| run.contains("dlqspec grade submissions/* --specs specs --partition ${{ matrix.shard }}/4 --output shard-${{ matrix.shard }}")),
        "{workflow}"
    );
    let merge: Vec<String> = (1..=4).map(|k| format!("shard-{k}")).collect();
    assert!(
        runs("merge").iter().any(|run| run.contains(&format!(
            "dlqspec grade --merge {} --output grades",
            merge.join(" ")
        ))),
        "{workflow}"
    );
    assert_eq!(parsed["jobs"]["merge"]["needs"], "grade");
}

#[test]
fn an_empty_share_is_no_failure_and_merges_as_nothing() {
    let class = tempfile::tempdir().expect("temp dir");
    let submissions = class_of(class.path(), &[("alice.py", "examples/python/solution.py")]);
    let empty = class.path().join("shard-2");
    let ran = grade_into(&empty, &submissions, &["--partition", "2/2"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr
            .contains("note: share 2/2 of --partition holds none of the 1 submission"),
        "{}",
        ran.stderr
    );
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(empty.join("summary.json")).expect("summary.json"),
    )
    .expect("JSON");
    assert_eq!(summary["rows"], serde_json::json!([]));
    assert_eq!(summary["partition"], "2/2");
    let full = class.path().join("shard-1");
    let ran = grade_into(&full, &submissions, &["--partition", "1/2"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let merged = class.path().join("merged");
    let ran = run(&[
        "grade",
        "--merge",
        empty.to_str().expect("utf-8"),
        full.to_str().expect("utf-8"),
        "--output",
        merged.to_str().expect("utf-8"),
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(csv_submissions(&merged).len(), 1);
    assert!(merged.join("alice.py.jsonl").is_file());
}

#[test]
fn node_load_errors_show_the_students_frames_not_the_loaders() {
    if !node_tests() {
        return;
    }
    for (student, wanted) in [
        (
            "load_syntax_error.mjs",
            &[
                "SyntaxError: Unexpected token '{'",
                "load_syntax_error.mjs:5\n",
                "constructor(queue, dlq, handler, clock, maxAttempts = 3 {",
            ][..],
        ),
        (
            "load_throw.mjs",
            &[
                "could not be loaded: Error: no settings file",
                "load_throw.mjs:3 in readSettings\n",
                "throw new Error('no settings file');",
                "load_throw.mjs:6\n",
                "const settings = readSettings();",
            ][..],
        ),
        // tsx's source maps: lines of the .ts file.
        (
            "load_syntax_error.ts",
            &[
                "SyntaxError: Expected \")\" but found \"{\"",
                "load_syntax_error.ts:6\n",
                "maxAttempts = 3 {",
            ][..],
        ),
        (
            "load_throw.ts",
            &[
                "could not be loaded: Error: no settings file",
                "load_throw.ts:5 in readSettings\n",
                "throw new Error('no settings file');",
                "load_throw.ts:8\n",
                "const settings: Settings = readSettings();",
            ][..],
        ),
    ] {
        let implementation = format!("node:tests/students/{student}");
        let ran = run(&["run", DEAD_LETTER_SPEC, "--impl", &implementation]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        assert_contains_all(&ran.stdout, wanted, student);
        for unwanted in ["node:internal", "dlqspec-shim", "node_modules", "ModuleJob"] {
            assert!(
                !ran.stdout.contains(unwanted),
                "{student}: {unwanted:?} in\n{}",
                ran.stdout
            );
        }
    }
}

#[test]
fn explain_shows_what_the_student_printed_and_raised() {
    let ran = run(&[
        "explain",
        DEAD_LETTER_SPEC,
        "--impl",
        "python:tests/students/debug_keyerror.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert_contains_all(
        &ran.stdout,
        [
            "raised KeyError: 'first_received'",
            "at tests/students/debug_keyerror.py:8 in first_attempt",
            "captured stdout:\n  DEBUG got a\n",
        ],
        "",
    );
    // Under the timeline, above the outcome.
    let at = |text: &str| ran.stdout.find(text).expect(text);
    assert!(at("captured stdout:") < at("outcome:"), "{}", ran.stdout);
    // The built-in implementation prints nothing: no heading.
    let ran = run(&["explain", DEAD_LETTER_SPEC]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("captured"), "{}", ran.stdout);
}

#[test]
fn smoke_shows_output_under_a_failing_check_capped_and_escaped() {
    let ran = run(&["smoke", "--impl", "python:tests/students/chatty.py"]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let failing = ran.stdout.find("FAIL  process_one()").expect(&ran.stdout);
    let shown = ran.stdout[failing..]
        .find("captured stdout (the first 65519 bytes; 374516 more cut):")
        .expect(&ran.stdout);
    let under = &ran.stdout[failing + shown..];
    assert!(
        under.contains("\n          \\x1b[31mred\\x1b[0m and a bell\\x07\n"),
        "{}",
        &under[..under.len().min(500)]
    );
    assert!(!ran.stdout.contains('\x1b') && !ran.stdout.contains('\x07'));
    // A smoke test that passes shows none, though the student printed.
    let ran = run(&["smoke", "--impl", "python:tests/students/debug_keyerror.py"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("captured"), "{}", ran.stdout);
}

#[test]
fn python_errors_in_the_students_threads_error_the_spec() {
    let ran = errored_by("python:tests/students/thread_error.py");
    assert_contains_all(
        &ran.stdout,
        [
            "uncaught exception in thread worker: AttributeError: 'FakeQueue' object has no attribute 'missing_method'",
            "at tests/students/thread_error.py:6 in work",
            "return queue.missing_method()",
        ],
        "",
    );
}

#[test]
fn python_thread_errors_that_are_hard_to_tell_still_error_the_spec_plainly() {
    let ran = errored_by("python:tests/students/thread_errors_hostile.py");
    assert_contains_all(
        &ran.stdout,
        [
            "uncaught exception in thread first: Unprintable: <Unprintable whose message could not be read> (and 1 more)",
        ],
        "",
    );
    // The 100,000-character message is cut, so the reply stays a reply, not a broken line.
    assert!(!ran.stdout.contains("protocol"), "{}", ran.stdout);
    assert!(ran.stdout.len() < 50_000, "{} bytes", ran.stdout.len());
}

#[test]
fn a_class_folder_is_graded_as_one_submission_per_folder_in_it() {
    let root = crate::common::root();
    let class = tempfile::tempdir().expect("temp dir");
    // A GitHub Classroom clone: a repository per student, each with its .git; a Gradescope
    // export's metadata file beside them.
    let submissions = class.path().join("submissions");
    for (folder, source, file) in [
        (
            "assignment-alice",
            "examples/python/solution.py",
            "solution.py",
        ),
        (
            "assignment-bob",
            "tests/students/debug_keyerror.py",
            "consumer.py",
        ),
        ("assignment-carol", "", ""),
    ] {
        let dir = submissions.join(folder);
        std::fs::create_dir_all(dir.join(".git")).expect("mkdir");
        if !source.is_empty() {
            std::fs::copy(root.join(source), dir.join(file)).expect("copy");
        }
    }
    std::fs::write(submissions.join("submission_metadata.yml"), "{}\n").expect("write");
    // The output inside the class folder is no submission, graded again or not.
    let out = submissions.join("grades");
    let class_folder = vec![submissions.to_string_lossy().into_owned()];
    for _ in 0..2 {
        let ran = grade_into(&out, &class_folder, &[]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stdout
                .contains("3 submissions graded: 1 pass, 1 fail, 1 broken"),
            "{}{}",
            ran.stdout,
            ran.stderr
        );
        let rows = csv_submissions(&out);
        assert_eq!(rows.len(), 3, "{rows:?}");
        for (row, who) in rows.iter().zip(["alice", "bob", "carol"]) {
            assert!(row.ends_with(&format!("assignment-{who}")), "{rows:?}");
        }
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    assert!(csv.contains("holds no solution file"), "{csv}");
    assert!(out.join("assignment-bob.txt").is_file());
    // The class view: each rule's share of the class, in summary.json and the terminal.
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("json");
    let rules = summary["rules"].as_object().expect("rules");
    assert!(!rules.is_empty(), "{summary}");
    let ran = grade_into(&out, &class_folder, &[]);
    for (rule, share) in rules {
        assert_eq!(share["submissions"], 3, "{summary}");
        // Alice passes every rule, Carol none.
        let passed = share["passed"].as_u64().expect("passed");
        assert!((1..=2).contains(&passed), "{summary}");
        let line = ran
            .stdout
            .lines()
            .find(|line| line.trim_start().starts_with(rule.as_str()))
            .unwrap_or_else(|| panic!("no line for {rule}: {}", ran.stdout));
        assert!(line.contains(&format!("{passed}/3")), "{line}");
    }
    let html = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
    assert_eq!(
        html.matches("<div class=\"bar\">").count(),
        rules.len(),
        "{html}"
    );
}

#[test]
fn every_row_is_out_of_the_whole_suite_and_links_only_reports_written() {
    let class = tempfile::tempdir().expect("temp dir");
    let mut submissions = class_of(
        class.path(),
        &[
            ("alice.py", "examples/python/solution.py"),
            ("dave.py", "tests/students/hangs.py"),
        ],
    );
    // An empty file runs and loads nothing; an empty folder has no entry file, so no run.
    let erin = class.path().join("erin.py");
    std::fs::write(&erin, "").expect("write");
    let frank = class.path().join("frank");
    std::fs::create_dir(&frank).expect("mkdir");
    submissions.extend([erin, frank].map(|p| p.to_string_lossy().into_owned()));
    let out = class.path().join("grades");
    // A spec may take longer than the whole budget: the hang is always stopped by the budget.
    let ran = grade_into(&out, &submissions, &["--budget", "10", "--timeout", "60"]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("json");
    let rows = summary["rows"].as_array().expect("rows");
    let by_name = |name: &str| {
        rows.iter()
            .find(|row| row["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}: {summary}"))
    };
    let statuses: Vec<(&str, &str)> = ["alice.py", "dave.py", "erin.py", "frank"]
        .iter()
        .map(|name| (*name, by_name(name)["status"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        statuses,
        [
            ("alice.py", "pass"),
            ("dave.py", "timeout"),
            ("erin.py", "broken"),
            ("frank", "broken")
        ]
    );
    // The two specs' points, whatever became of the submission.
    for row in rows {
        assert_eq!(row["max_score"], 2.0, "{row}");
    }
    let html = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    for row in rows {
        for key in ["report", "json_report"] {
            let written = match &row[key] {
                Value::String(file) => {
                    assert!(out.join(file).is_file(), "{file} linked, not written");
                    assert!(html.contains(&format!("href=\"{file}\"")), "{html}");
                    assert!(csv.contains(&format!(",{file}")), "{csv}");
                    true
                }
                _ => false,
            };
            let name = row["name"].as_str().unwrap_or("");
            let ext = if key == "report" { "txt" } else { "jsonl" };
            let file = format!("{name}.{ext}");
            if !written {
                assert!(!out.join(&file).exists(), "{file} written, not linked");
                assert!(!html.contains(&format!("href=\"{file}\"")), "{html}");
            }
        }
    }
    // A folder with no entry file never ran: nothing to link.
    assert_eq!(by_name("frank")["report"], Value::Null);
    assert_eq!(by_name("alice.py")["json_report"], "alice.py.jsonl");
}

#[test]
fn the_documented_gradescope_autograder_writes_results_in_every_case() {
    let root = crate::common::root();
    let docs = std::fs::read_to_string(root.join("docs/autograders.md")).expect("docs");
    let start = docs
        .find("# run_autograder")
        .expect("the run_autograder script");
    let script = &docs[start..];
    let script = format!(
        "#!/usr/bin/env bash\n{}",
        &script[..script.find("```").expect("its end")]
    );
    let place = tempfile::tempdir().expect("temp dir");
    let source = place.path().join("source");
    std::fs::create_dir(&source).expect("mkdir");
    std::os::unix::fs::symlink(crate::common::binary(), source.join("dlqspec")).expect("ln");
    std::os::unix::fs::symlink(root.join("shims"), source.join("shims")).expect("ln");
    std::fs::create_dir(source.join("specs")).expect("mkdir");
    std::fs::copy(root.join(PASSING_SPEC), source.join("specs/passing.yaml")).expect("copy");
    let script = script.replace("/autograder/", &format!("{}/", place.path().display()));
    let runner = place.path().join("run_autograder");
    std::fs::write(&runner, script).expect("write");
    let submission = place.path().join("submission");
    let results_dir = place.path().join("results");
    std::fs::create_dir(&results_dir).expect("mkdir");
    let results = results_dir.join("results.json");
    let validator = platform_schema("gradescope-results.schema.json");
    // An empty submission, two files none of which is the entry, and a correct one.
    let cases: [&[(&str, &str)]; 3] = [
        &[],
        &[
            ("a.py", "examples/python/solution.py"),
            ("b.py", "examples/python/solution.py"),
        ],
        &[("consumer.py", "examples/python/solution.py")],
    ];
    for (i, files) in cases.iter().enumerate() {
        let _ = std::fs::remove_dir_all(&submission);
        std::fs::create_dir(&submission).expect("mkdir");
        for (name, from) in files.iter() {
            std::fs::copy(root.join(from), submission.join(name)).expect("copy");
        }
        let ran = std::process::Command::new("bash")
            .arg(&runner)
            .output()
            .expect("bash runs");
        assert!(ran.status.success(), "case {i}: {ran:?}");
        let text = std::fs::read_to_string(&results).expect("results.json in every case");
        let value: Value = serde_json::from_str(&text).expect("json");
        assert_valid(&validator, &value, &format!("case {i}"));
        match i {
            0 => assert!(
                value["output"]
                    .as_str()
                    .unwrap_or("")
                    .contains("holds no solution file"),
                "{value}"
            ),
            1 => assert!(
                value["output"]
                    .as_str()
                    .unwrap_or("")
                    .contains("2 solution files"),
                "{value}"
            ),
            _ => assert!(value["tests"].is_array(), "{value}"),
        }
    }
}

/// Three quick specs in the order a run takes them: `late_hang.py` passes the first, fails
/// the second and hangs on the third.
const LATE_HANG_SUITE: [&str; 3] = [
    "specs/dlq-consumer/empty-queue-returns-none.yaml",
    DEAD_LETTER_SPEC,
    PASSING_SPEC,
];

/// tests/hostile/late_hang.py as `dir/NAME`, its forged report naming the suite's specs.
fn late_hang(dir: &std::path::Path, name: &str) -> String {
    let source = std::fs::read_to_string(crate::common::root().join("tests/hostile/late_hang.py"))
        .expect("late_hang.py");
    let path = dir.join(name);
    std::fs::write(&path, source.replace("@SPECS@", &LATE_HANG_SUITE.join(","))).expect("write");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_run_stopped_at_its_budget_keeps_the_verdicts_of_the_specs_it_finished() {
    let class = tempfile::tempdir().expect("temp dir");
    let mallory = late_hang(class.path(), "mallory.py");
    let out = class.path().join("grades");
    let mut args = vec!["grade"];
    for spec in LATE_HANG_SUITE {
        args.extend(["--specs", spec]);
    }
    // The hang outlasts any request timeout: only the budget ends it. The run is given 18 of
    // the 24 seconds, and stops itself then.
    args.extend(["--budget", "24", "--timeout", "600", "--output"]);
    args.extend([out.to_str().expect("utf-8"), mallory.as_str()]);
    let ran = run(&args);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("1 submission graded: 1 timeout"),
        "{}",
        ran.stdout
    );
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("json");
    let row = &summary["rows"][0];
    assert_eq!(row["status"], "timeout", "{row}");
    // The forged report of passes counts for nothing: the run alone wrote the verdicts.
    assert_eq!(
        (row["score"].as_f64(), row["max_score"].as_f64()),
        (Some(1.0), Some(3.0))
    );
    // The spec the budget stopped is not run: no failure, and its own rule no verdict.
    assert_eq!(
        (
            row["passed"].as_u64(),
            row["failed"].as_u64(),
            row["not_run"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(
        row["note"], "stopped at its budget after 2 of 3 specs (--budget 24s)",
        "{row}"
    );
    assert_eq!(row["rules"]["dlq-consumer/empty-queue"], "pass", "{row}");
    assert_eq!(row["rules"]["dlq-consumer/permanent"], "fail", "{row}");
    assert_eq!(row["rules"]["dlq-consumer/success"], "not_run", "{row}");
    // Its report is the run's, published beside the scores: the specs it finished, then the
    // one the budget stopped, not run.
    let report = std::fs::read_to_string(out.join("mallory.py.jsonl")).expect("its report");
    let outcomes: Vec<(String, String, String)> = finished(&report)
        .iter()
        .map(|e| {
            let text = |key: &str| e[key].as_str().unwrap_or_default().to_owned();
            (text("path"), text("outcome"), text("skip_reason"))
        })
        .collect();
    let expected: Vec<(String, String, String)> = [
        (LATE_HANG_SUITE[0], "passed", ""),
        (LATE_HANG_SUITE[1], "mismatch", ""),
        (LATE_HANG_SUITE[2], "skipped", "not run: budget"),
    ]
    .iter()
    .map(|(p, o, r)| ((*p).to_owned(), (*o).to_owned(), (*r).to_owned()))
    .collect();
    assert_eq!(outcomes, expected, "{report}");
    let text = std::fs::read_to_string(out.join("mallory.py.txt")).expect("its human report");
    assert!(
        text.contains("note: the run's budget ran out after 2 of its 3 specs"),
        "{text}"
    );
}

#[test]
fn a_run_stopped_at_its_budget_still_writes_valid_gradescope_results() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mallory = late_hang(dir.path(), "mallory.py");
    let implementation = format!("python:{mallory}");
    let mut extra = vec!["--budget", "6", "--timeout", "600"];
    extra.extend(LATE_HANG_SUITE);
    let (code, results) = graded("gradescope", &implementation, &extra);
    assert_eq!(code, 1, "{results:#}");
    assert_valid(
        &platform_schema("gradescope-results.schema.json"),
        &results,
        "stopped at its budget",
    );
    assert_eq!(results["score"], 1.0, "{results:#}");
    let tests = results["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 3, "{results:#}");
    assert_eq!(tests[2]["score"], 0.0, "{results:#}");
    assert!(
        tests[2]["output"]
            .as_str()
            .is_some_and(|o| o.contains("not run: budget")),
        "{results:#}"
    );
}

/// `summary.json` of a grade's output folder, held to its schema.
fn summary_of(out: &std::path::Path) -> Value {
    crate::common::summary_json(out)
}

#[test]
fn the_class_view_lists_the_most_common_failure_causes() {
    let class = tempfile::tempdir().expect("temp dir");
    let submissions = class_of(
        class.path(),
        &[
            ("alice.py", "examples/python/solution.py"),
            ("bob.py", "tests/students/debug_keyerror.py"),
            ("carol.py", "tests/solutions/dlq_no_poison.py"),
            ("erin.py", "tests/students/debug_keyerror.py"),
        ],
    );
    let out = class.path().join("grades");
    let ran = grade_into(&out, &submissions, &[]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    // The cause is the run's own, as its "failures by cause" groups failures.
    let bobs = std::fs::read_to_string(out.join("bob.py.jsonl")).expect("bob's report");
    let failing = finished(&bobs)
        .into_iter()
        .find(|event| event["path"] == DEAD_LETTER_SPEC)
        .expect("the dead-letter spec");
    let cause = failing["cause"].as_str().expect("a failure's cause");
    assert!(cause.starts_with("dlq-consumer/permanent: "), "{failing}");
    let summary = summary_of(&out);
    assert_eq!(summary["version"], 2, "{summary}");
    let causes = summary["causes"].as_array().expect("causes");
    assert_eq!(causes.len(), 1, "{summary}");
    // Two copies of one solution make one cause: the same exception at the same line of the
    // same code, wherever each copy is.
    let id = failing["cause_id"].as_str().expect("a cause's key");
    assert_eq!(
        causes[0],
        serde_json::json!({
            "cause": cause, "id": id, "rule": "dlq-consumer/permanent", "who": ["bob.py", "erin.py"],
            "submissions": 2, "specs": 1, "failures": 2,
            "example": {"submission": submissions[1], "name": "bob.py", "spec": DEAD_LETTER_SPEC},
        })
    );
    let bob = &summary["rows"][1];
    // The failing spec lists three rules; the one its cause breaks is the one failed.
    assert_eq!(
        bob["rules"],
        serde_json::json!({
            "dlq-consumer/dead-letter-sequence": "pass", "dlq-consumer/entry-fields": "pass",
            "dlq-consumer/permanent": "fail", "dlq-consumer/success": "pass",
        }),
        "{bob}"
    );
    assert_eq!(bob["specs"][DEAD_LETTER_SPEC]["cause_id"], id, "{bob}");
    assert_eq!(
        bob["specs"][DEAD_LETTER_SPEC]["outcome"], "mismatch",
        "{bob}"
    );
    assert_eq!(
        bob["specs"][PASSING_SPEC],
        serde_json::json!({"outcome": "passed"})
    );
    // The terminal and the page say the same.
    let line = format!("2 submissions    1 spec   {cause}  (e.g. bob.py: {DEAD_LETTER_SPEC})");
    assert!(
        ran.stdout.contains("most common failure causes:\n"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains(&line), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("  who: bob.py, erin.py\n"),
        "{}",
        ran.stdout
    );
    let html = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
    assert!(
        html.contains("<h2>most common failure causes</h2>"),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<td>2</td><td>1</td><td>2</td><td>bob.py, erin.py</td><td><a href=\"bob.py.txt\">bob.py</a>: {DEAD_LETTER_SPEC}</td>"
        )),
        "{html}"
    );
    // Merged, the class's causes are counted again from its rows.
    let merged = class.path().join("merged");
    let ran = run(&[
        "grade",
        "--merge",
        out.to_str().expect("utf-8"),
        "--output",
        merged.to_str().expect("utf-8"),
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(summary_of(&merged)["causes"], summary["causes"]);
}

#[test]
fn a_regrade_against_an_earlier_grading_says_what_changed_or_no_change() {
    let class = tempfile::tempdir().expect("temp dir");
    let mut submissions = class_of(
        class.path(),
        &[
            ("alice.py", "examples/python/solution.py"),
            ("bob.py", "tests/students/debug_keyerror.py"),
            ("dave.py", "tests/students/debug_keyerror.py"),
        ],
    );
    let first = class.path().join("first");
    let ran = grade_into(&first, &submissions, &[]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let earlier = std::fs::read(first.join("summary.json")).expect("summary.json");
    let first_arg = first.to_str().expect("utf-8");
    // The same class again: no change.
    let again = class.path().join("again");
    let ran = grade_into(&again, &submissions, &["--against", first_arg]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .ends_with(&format!("against {first_arg}: no change (3 submissions)\n")),
        "{}",
        ran.stdout
    );
    let summary = summary_of(&again);
    assert_eq!(summary["against"]["no_change"], true, "{summary}");
    assert_eq!(summary["against"]["unchanged"], 3, "{summary}");
    let html = std::fs::read_to_string(again.join("summary.html")).expect("summary.html");
    assert!(html.contains("<p>no change (3 submissions)</p>"), "{html}");
    // Bob mends his solution, Dave leaves, Carol comes.
    std::fs::copy(
        crate::common::root().join("examples/python/solution.py"),
        &submissions[1],
    )
    .expect("copy");
    submissions.pop();
    submissions.extend(class_of(
        class.path(),
        &[("carol.py", "tests/students/debug_keyerror.py")],
    ));
    let second = class.path().join("second");
    let ran = grade_into(&second, &submissions, &["--against", first_arg]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let expected = format!(
        "against {first_arg}: 1 changed, 1 new, 1 gone, 1 unchanged\n  bob.py 1 -> 2 (fail -> pass)\n    {DEAD_LETTER_SPEC}: mismatch -> passed\n  new: carol.py 1\n  gone: dave.py (was 1)\n"
    );
    assert!(ran.stdout.ends_with(&expected), "{}", ran.stdout);
    let against = &summary_of(&second)["against"];
    assert_eq!(
        against["changed"],
        serde_json::json!([{
            "name": "bob.py",
            "submission": submissions[1],
            "before": {"status": "fail", "score": 1.0, "max_score": 2.0},
            "after": {"status": "pass", "score": 2.0, "max_score": 2.0},
            "specs": [{"spec": DEAD_LETTER_SPEC, "before": "mismatch", "after": "passed"}],
        }]),
        "{against}"
    );
    assert_eq!(against["new"][0]["name"], "carol.py", "{against}");
    assert_eq!(against["gone"][0]["name"], "dave.py", "{against}");
    assert_eq!(against["no_change"], false, "{against}");
    let html = std::fs::read_to_string(second.join("summary.html")).expect("summary.html");
    assert!(
        html.contains(&format!(
            "<tr><td>bob.py</td><td>1 -&gt; 2 (fail -&gt; pass)</td><td>{DEAD_LETTER_SPEC}: mismatch -&gt; passed</td></tr>"
        )),
        "{html}"
    );
    assert!(html.contains("<td>gone (was 1)</td>"), "{html}");
    // The earlier grading was only read.
    assert_eq!(
        std::fs::read(first.join("summary.json")).expect("summary.json"),
        earlier
    );
}

#[test]
fn a_regrade_against_a_missing_broken_or_own_folder_is_one_clear_error() {
    let class = tempfile::tempdir().expect("temp dir");
    let submissions = class_of(class.path(), &[("alice.py", "examples/python/solution.py")]);
    let first = class.path().join("first");
    assert_eq!(grade_into(&first, &submissions, &[]).code, 0);
    let empty = class.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let broken = class.path().join("broken");
    std::fs::create_dir(&broken).expect("mkdir");
    std::fs::write(broken.join("summary.json"), "{\"format\": ").expect("write");
    let linked = class.path().join("linked");
    std::fs::create_dir(&linked).expect("mkdir");
    std::os::unix::fs::symlink(first.join("summary.json"), linked.join("summary.json"))
        .expect("link");
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let out = class.path().join("out");
    for (against, output, says) in [
        (
            path(&class.path().join("nowhere")),
            path(&out),
            "cannot be read",
        ),
        (submissions[0].clone(), path(&out), "is not a folder"),
        (path(&empty), path(&out), "holds no summary.json"),
        (
            path(&broken),
            path(&out),
            "summary.json:1:11: not a summary",
        ),
        (path(&linked), path(&out), "not a regular file"),
        (path(&first), path(&first), "is within --against"),
        (
            path(&first),
            path(&first.join("inner")),
            "is within --against",
        ),
        (
            path(&first),
            path(first.parent().expect("a parent")),
            "is within --output",
        ),
    ] {
        let mut args = vec![
            "grade",
            "--specs",
            PASSING_SPEC,
            "--output",
            output.as_str(),
            "--against",
            against.as_str(),
        ];
        args.push(submissions[0].as_str());
        let ran = run(&args);
        assert_eq!(ran.code, 2, "{against}: {}{}", ran.stdout, ran.stderr);
        let lines: Vec<&str> = ran.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{against}: {}", ran.stderr);
        assert!(
            lines[0].starts_with("error: ") && lines[0].contains(says),
            "{against}: {}",
            ran.stderr
        );
        // Nothing graded, nothing written.
        assert!(!out.exists() && !first.join("inner").exists(), "{against}");
    }
}

#[test]
fn a_solution_that_hangs_while_it_loads_is_ended_at_its_runs_budget() {
    let class = tempfile::tempdir().expect("temp dir");
    let slow = class.path().join("slow.py");
    std::fs::write(&slow, "import time\ntime.sleep(600)\n").expect("write");
    let out = class.path().join("grades");
    // Its handshake could wait 600 s: the run, given 15 of the 20 s, ends it at its budget and
    // reports, before grade would have to stop it (and trust nothing of it).
    let ran = run(&[
        "grade",
        "--specs",
        PASSING_SPEC,
        "--budget",
        "20",
        "--timeout",
        "600",
        "--output",
        out.to_str().expect("utf-8"),
        slow.to_str().expect("utf-8"),
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let row = &summary_of(&out)["rows"][0];
    assert_eq!(row["status"], "timeout", "{row}");
    assert_eq!(
        row["note"], "stopped at its budget after 0 of 1 specs (--budget 20s)",
        "{row}"
    );
    assert_eq!(row["specs"][PASSING_SPEC]["outcome"], "not_run", "{row}");
    assert_eq!(row["json_report"], "slow.py.jsonl", "{row}");
}

/// The interpreter behind `python3` (pyenv's shim execs it), which a stand-in shim starts.
fn real_python() -> String {
    let real = std::process::Command::new("python3")
        .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8(real.stdout).expect("utf-8")
}

/// `PATH` with a stand-in for pyenv's shims folder first, then the tests' own.
fn shims_first(shims: std::path::PathBuf) -> std::ffi::OsString {
    let mut path = shims.into_os_string();
    path.push(":");
    path.push(crate::common::path_with_tsx());
    path
}

#[test]
fn grade_asks_pyenvs_shim_once_for_its_interpreter_and_starts_that_for_every_submission() {
    let real = real_python();
    let place = tempfile::tempdir().expect("temp dir");
    let shims = place.path().join(".pyenv/shims");
    std::fs::create_dir_all(&shims).expect("shims folder");
    let log = place.path().join("started");
    // A stand-in for pyenv's shim: it notes each start (which fails quietly in a box, where
    // nothing outside the private folder is writable) and starts the real interpreter.
    let shim = shims.join("python3");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho started >> '{}' 2>/dev/null\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    )
    .expect("write the shim");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let class = tempfile::tempdir().expect("temp dir");
    let submissions = class_of(
        class.path(),
        &[
            ("alice.py", "examples/python/solution.py"),
            ("bob.py", "examples/python/solution.py"),
            ("carol.py", "examples/python/solution.py"),
        ],
    );
    let out = class.path().join("grades");
    let mut command = crate::common::dlqspec();
    command
        .env("PATH", shims_first(shims))
        .env_remove("DLQSPEC_PYTHON")
        .args(["grade", "--specs", PASSING_SPEC, "--output"])
        .arg(&out)
        .args(&submissions);
    let graded = crate::common::ran(command.output().expect("dlqspec runs"));
    assert_eq!(graded.code, 0, "{}{}", graded.stdout, graded.stderr);
    let starts = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        starts.lines().count(),
        1,
        "pyenv's shim is asked once, by grade, not once per submission: {starts:?}"
    );
}

#[test]
fn a_python_version_file_planted_in_the_temporary_folder_does_not_choose_grades_interpreter() {
    let real = real_python();
    let place = tempfile::tempdir().expect("temp dir");
    let shims = place.path().join(".pyenv/shims");
    std::fs::create_dir_all(&shims).expect("shims folder");
    // An interpreter that fails every submission, chosen by the planted version file.
    let planted = place.path().join("planted-python");
    // A stand-in for pyenv's shim that picks the version as pyenv does: the first
    // `.python-version` in the working folder or above it.
    let shim = shims.join("python3");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\ndir=\"$PWD\"\nwhile :; do\n  if [ -f \"$dir/.python-version\" ]; then\n    [ \"$(cat \"$dir/.python-version\" 2>/dev/null)\" = planted ] && exec '{}' \"$@\"\n    break\n  fi\n  [ \"$dir\" = / ] && break\n  dir=$(dirname \"$dir\")\ndone\nexec '{real}' \"$@\"\n",
            planted.display()
        ),
    )
    .expect("write the shim");
    // The planted interpreter answers grade's question about itself as a real one would.
    std::fs::write(
        &planted,
        format!(
            "#!/bin/sh\n[ \"$1\" = -I ] && {{ printf %s '{}'; exit 0; }}\nexit 3\n",
            planted.display()
        ),
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    for script in [&shim, &planted] {
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let class = tempfile::tempdir().expect("temp dir");
    let temporary = class.path().join("tmp");
    std::fs::create_dir(&temporary).expect("mkdir");
    std::fs::write(temporary.join(".python-version"), "planted\n").expect("plant");
    let submissions = class_of(class.path(), &[("alice.py", "examples/python/solution.py")]);
    let out = class.path().join("grades");
    let mut command = crate::common::dlqspec();
    command
        .env("PATH", shims_first(shims))
        .env("TMPDIR", &temporary)
        .env_remove("DLQSPEC_PYTHON")
        .env_remove("PYENV_VERSION")
        .args(["grade", "--specs", PASSING_SPEC, "--output"])
        .arg(&out)
        .args(&submissions);
    let graded = crate::common::ran(command.output().expect("dlqspec runs"));
    assert_eq!(graded.code, 0, "{}{}", graded.stdout, graded.stderr);
}

#[test]
fn a_submissions_report_tells_a_hidden_spec_by_its_verdict_and_rule_only() {
    let class = tempfile::tempdir().expect("temp dir");
    let root = crate::common::root();
    let visible = "specs/dlq-consumer/exhausted-at-max-attempts.yaml";
    let text = std::fs::read_to_string(root.join(visible)).expect("the spec");
    let secret = class.path().join("secret-poison-count.yaml");
    std::fs::write(
        &secret,
        text.replacen(
            "contract: dlq-consumer\n",
            "contract: dlq-consumer\nvisibility: hidden\n",
            1,
        ),
    )
    .expect("write the hidden spec");
    let submissions = class_of(
        class.path(),
        &[("bob.py", "tests/solutions/dlq_off_by_one.py")],
    );
    let out = class.path().join("grades");
    let mut command = crate::common::dlqspec();
    command
        .args(["grade", "--specs", visible, "--specs"])
        .arg(&secret)
        .args(["--pictures", "2", "--output"])
        .arg(&out)
        .args(&submissions);
    let graded = crate::common::ran(command.output().expect("dlqspec runs"));
    assert_eq!(graded.code, 1, "{}{}", graded.stdout, graded.stderr);
    let report = std::fs::read_to_string(out.join("bob.py.txt")).expect("bob.py.txt");
    // The visible spec shows its difference; the hidden one, the same scenario, only that it
    // failed and the rule it broke.
    assert!(report.contains(visible), "{report}");
    assert!(
        report.contains("hidden spec 1\n      hidden spec failed: dlq-consumer/"),
        "{report}"
    );
    assert!(!report.contains("secret-poison-count"), "{report}");
    assert_eq!(report.matches("--- expected").count(), 1, "{report}");
    // Nor is it drawn: only the visible spec's picture is made.
    let drawn: Vec<String> = std::fs::read_dir(out.join("bob.py/explain"))
        .expect("bob's pictures")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        drawn,
        ["specs.dlq-consumer.exhausted-at-max-attempts.html"],
        "{report}"
    );
}

/// A class where erin wrote only `DLQConsumer` and alice both classes: erin's outcome-queue
/// specs and rules are not attempted, apart from failed, in the CSV, summary.json, the page
/// and the class's per-rule shares; they score 0, and her row says why.
#[test]
fn a_dlq_consumer_only_submission_shows_outcome_queue_as_not_attempted() {
    let class = tempfile::tempdir().expect("temp dir");
    let root = crate::common::root();
    let both = std::fs::read_to_string(root.join("examples/python/solution.py")).expect("example");
    let only = &both[..both
        .find("class RetryQueue")
        .expect("the example has RetryQueue")];
    std::fs::write(class.path().join("erin.py"), only).expect("write");
    std::fs::write(class.path().join("alice.py"), &both).expect("write");
    let out = class.path().join("grades");
    const OUTCOME_QUEUE_SPEC: &str = "specs/outcome-queue/success-moves-to-done.yaml";
    let submissions: Vec<String> = ["alice.py", "erin.py"]
        .iter()
        .map(|name| class.path().join(name).to_string_lossy().into_owned())
        .collect();
    let ran = grade_into(&out, &submissions, &["--specs", OUTCOME_QUEUE_SPEC]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let summary = crate::common::summary_json(&out);
    let erin = summary["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|row| row["name"] == "erin.py")
        .expect("erin's row")
        .clone();
    assert_eq!(erin["status"], "fail", "{erin}");
    assert_eq!(
        (
            erin["score"].as_f64(),
            erin["max_score"].as_f64(),
            erin["failed"].as_u64(),
            erin["not_attempted"].as_u64()
        ),
        (Some(2.0), Some(3.0), Some(0), Some(1)),
        "{erin}"
    );
    assert_eq!(
        erin["specs"][OUTCOME_QUEUE_SPEC]["outcome"], "not_attempted",
        "{erin}"
    );
    assert_eq!(
        erin["rules"]["outcome-queue/success-done"], "not_attempted",
        "{erin}"
    );
    assert_eq!(erin["rules"]["dlq-consumer/success"], "pass", "{erin}");
    let note = erin["note"].as_str().expect("a note");
    assert!(
        note.contains("not attempted") && note.contains("no class `RetryQueue`"),
        "{note}"
    );
    // The class's share of the rule is alice's alone; erin is counted apart.
    let share = &summary["rules"]["outcome-queue/success-done"];
    assert_eq!(
        (
            share["passed"].as_u64(),
            share["submissions"].as_u64(),
            share["not_attempted"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{share}"
    );
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let column = |name: &str| rows[0].iter().position(|c| *c == name).expect(name);
    let erin_row = rows
        .iter()
        .find(|row| row[0].ends_with("erin.py"))
        .expect("erin in the CSV");
    assert_eq!(erin_row[column("not_attempted")], "1", "{csv}");
    assert_eq!(
        erin_row[column("outcome-queue/success-done")],
        "not_attempted",
        "{csv}"
    );
    let page = std::fs::read_to_string(out.join("summary.html")).expect("summary.html");
    assert!(
        page.contains("title=\"outcome-queue/success-done: not attempted\""),
        "{page}"
    );
    assert!(page.contains("1 not attempted"), "{page}");
    // Her own report says it, not as a failure.
    let told = std::fs::read_to_string(out.join("erin.py.txt")).expect("erin's report");
    assert!(told.contains("1 not attempted"), "{told}");
    assert!(!told.contains("FAIL "), "{told}");
}

/// A spec whose expectation the built-in reference does not meet is the spec's mistake: the
/// run on the reference says so, at the step, with the reference's values and the commands
/// to take them or see its run, and names no rule as broken.
#[test]
fn a_wrong_expectation_on_the_built_in_says_so_without_rule_broken() {
    let (_dir, spec) = crate::common::temp_spec(
        "behind.yaml",
        "contract: dlq-consumer\nname: recover puts a behind b, forgotten\nrules: [dlq-consumer/success]\nmessages:\n  - {id: a, body: x}\n  - {id: b, body: y}\nhandler:\n  a: [crash, ok]\n  b: [ok]\nsteps:\n  - process: crash\n  - recover\n  - process: ok\nexpect:\n  handler_calls: {a: 2, b: 0}\n",
    );
    let ran = run(&["run", crate::common::path_arg(&spec)]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("rule broken"), "{}", ran.stdout);
    for said in [
        "the spec's expectation differs from what the built-in reference does at final expect",
        "the reference did what the +++ lines show",
        "`dlqspec bless ",
        "`dlqspec explain ",
        "+  b: 1",
    ] {
        assert!(ran.stdout.contains(said), "{said}: {}", ran.stdout);
    }
}
