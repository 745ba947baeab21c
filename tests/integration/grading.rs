//! Grading students: their captured output and the lines of their own code that raised, in
//! every report format.

use serde_json::Value;

use crate::common::{node_tests, run};

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
                11,
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
        for wanted in [
            format!("raised {}", student.error),
            format!("at {}:{} in ", student.file, student.line),
            student.source.to_owned(),
            "captured stdout:".to_owned(),
            "DEBUG got a".to_owned(),
            "captured stderr:".to_owned(),
            "WARN dead-lettering a".to_owned(),
        ] {
            assert!(
                out.contains(&wanted),
                "{}: no {wanted:?} in\n{out}",
                student.implementation
            );
        }
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
        for wanted in [
            format!("raised {}", student.error),
            format!("{}:{}", student.file, student.line),
            student.source.to_owned(),
            "WARN dead-lettering a".to_owned(),
        ] {
            assert!(err.contains(&wanted), "no {wanted:?} in\n{err}");
        }
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
    for wanted in [
        "  stdout: \"DEBUG got a\"",
        "  stderr: \"WARN dead-lettering a\"",
        "  traceback: |2-",
        "    raised KeyError: 'first_received'",
        "      return msg[\"first_received\"]",
    ] {
        assert!(
            ran.stdout.contains(wanted),
            "no {wanted:?} in\n{}",
            ran.stdout
        );
    }
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
            .contains("captured stdout (the first 65536 bytes; "),
        "{}",
        &ran.stdout[..ran.stdout.len().min(2000)]
    );
    assert!(ran.stdout.contains("\\x1b[31mred\\x1b[0m and a bell\\x07"));
    assert!(!ran.stdout.contains('\x1b') && !ran.stdout.contains('\x07'));
    let ran = run(&["run", DEAD_LETTER_SPEC, "--impl", impl_, "--format", "json"]);
    let events = finished(&ran.stdout);
    let stdout = &events[0]["output"]["stdout"];
    assert_eq!(stdout["text"].as_str().map(str::len), Some(65536));
    // 20,000 lines of 22 bytes, the colored line and `bytes too`, less what was kept.
    let printed = 20_000 * 22 + "\x1b[31mred\x1b[0m and a bell\x07\n".len() + "bytes too\n".len();
    assert_eq!(stdout["cut_bytes"].as_u64(), Some((printed - 65536) as u64));
}

#[test]
fn node_errors_left_to_promises_and_timers_are_told_not_lost() {
    if !node_tests() {
        return;
    }
    let ran = run(&[
        "run",
        DEAD_LETTER_SPEC,
        "--impl",
        "node:tests/students/async_errors.mjs",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    for wanted in [
        "unhandled promise rejection after the call returned: Error: lost in a promise",
        "tests/students/async_errors.mjs:3 in later",
        "uncaught exception after the call returned: TypeError: thrown by a callback",
    ] {
        assert!(
            ran.stdout.contains(wanted),
            "no {wanted:?} in\n{}",
            ran.stdout
        );
    }
}
