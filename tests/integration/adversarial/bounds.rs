//! Attacks on dlqspec's bounds: replies it must not block on, diffs it must not hold whole.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Ran, assert_all_dead, dlqspec, node_tests, path_arg, pids_in, temp_spec};

/// Far longer than any of these runs takes on a loaded machine: only a hang reaches it.
const HANG_GUARD: Duration = Duration::from_secs(180);

/// Runs `command` to its end, killing it (and failing) if it outlives `HANG_GUARD`.
fn guarded(command: &mut Command) -> Ran {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dlqspec runs");
    let drain = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stream.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let until = Instant::now() + HANG_GUARD;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            break status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dlqspec still ran after {HANG_GUARD:?}: it hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = stdout.join().expect("stdout read");
    Ran {
        code: status.code().unwrap_or(-1),
        stdout: crate::common::untimed(&stdout),
        timed_stdout: stdout,
        stderr: stderr.join().expect("stderr read"),
    }
}

#[test]
#[cfg(target_os = "linux")]
fn an_implementation_that_stops_reading_its_input_is_timed_out_and_told_once() {
    let pids = tempfile::NamedTempFile::new().expect("temp file");
    let specs = [
        "specs/dlq-consumer/transient-retried-to-the-tail.yaml",
        "specs/dlq-consumer/crash-after-put-before-ack.yaml",
    ];
    let ran = guarded(
        dlqspec()
            .args(["run", specs[0], specs[1], "--timeout", "2", "--jobs", "1"])
            .args(["--impl", "cmd:python3 tests/hostile/stops_reading.py"])
            // It writes its pids into the test's file for the check below, which the box would
            // refuse; the write deadline is dlqspec's own, box or no box.
            .args(["--sandbox", "off"])
            .env("DLQSPEC_TEST_PIDS", pids.path()),
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    // The first spec errs for it, once; a solution that hangs is not asked again, so the
    // second is not run.
    let cause =
        "the implementation stopped reading its input: the answer to world call `dlq.entries`";
    let told = format!("\n      implementation error (timeout): {cause}");
    assert_eq!(ran.stdout.matches(&told).count(), 1, "{}", ran.stdout);
    for spec in specs {
        assert!(ran.stdout.contains(spec), "{spec}: {}", ran.stdout);
    }
    assert!(
        ran.stdout
            .contains("not run: the solution hung in an earlier spec"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("0 passed, 1 failed, 1 skipped"),
        "{}",
        ran.stdout
    );
    let started = pids_in(pids.path());
    assert_eq!(
        started.len(),
        1,
        "one process, for the spec it hung in: {started:?}"
    );
    assert_all_dead(&started, "stops_reading.py");
}

/// A spec that expects one DLQ entry, against which huge_dlq_entries.py puts ten of 5 MiB.
const ONE_ENTRY: &str = "\
contract: dlq-consumer
name: a permanent error dead-letters the message once
rules: [dlq-consumer/permanent]
messages: [{id: a, body: bad}]
handler: {a: [permanent: bad]}
steps:
  - process: dead
expect:
  dlq:
    - {id: a, body: bad, reason: permanent, error: \"PermanentError: bad\",
       attempts: 1, first_attempt_at: 0, failed_at: 0}
";

#[test]
fn a_huge_difference_is_cut_in_every_report_and_the_cut_is_told() {
    let (dir, spec) = temp_spec("one-entry.yaml", ONE_ENTRY);
    for format in ["json", "junit", "tap"] {
        let report = dir.path().join(format!("report.{format}"));
        let ran = guarded(dlqspec().args([
            "run",
            path_arg(&spec),
            "--impl",
            "python:tests/hostile/huge_dlq_entries.py",
            "--format",
            format,
            "--output",
            path_arg(&report),
        ]));
        assert_eq!(ran.code, 1, "{format}: {}{}", ran.stdout, ran.stderr);
        // The human report on stdout is cut too.
        assert!(
            ran.stdout.len() < 1 << 20,
            "{format}: stdout of {} bytes",
            ran.stdout.len()
        );
        assert!(
            ran.stdout.contains("more bytes not shown"),
            "{}",
            ran.stdout
        );
        let size = std::fs::metadata(&report).expect("report written").len();
        // 50 MiB of entries, shown in the report with at most a few hundred KiB of it.
        assert!(size < 2 << 20, "{format}: a report of {size} bytes");
        let text = std::fs::read_to_string(&report).expect("report read");
        assert!(
            text.contains("more bytes not shown"),
            "{format}: the cut is not told"
        );
        // What is shown is still the difference: the entries' ids are there.
        assert!(text.contains("a-0"), "{format}: no entry shown");
    }
}

#[test]
fn raw_writes_to_stdout_in_javascript_are_the_specs_captured_output() {
    if !node_tests() {
        return;
    }
    raw_writes_are_captured(
        (
            "tests/hostile/raw_stdout.mjs",
            "examples/javascript/solution.mjs",
            "reference.mjs",
        ),
        &[
            "raw write while loading",
            "raw write in processOne",
            "process.stdout.write in processOne",
            "console.log in processOne",
            "a child with stdio inherit",
        ],
    );
}

#[test]
fn raw_writes_to_stdout_in_python_are_the_specs_captured_output() {
    raw_writes_are_captured(
        (
            "tests/hostile/raw_stdout.py",
            "examples/python/solution.py",
            "reference.py",
        ),
        &[
            "raw write while loading",
            "raw write in process_one",
            "print in process_one",
            "a child that inherits fd 1",
        ],
    );
}

/// A solution that writes to fd 1 behind its language's back still gets its true verdicts
/// (it is the reference, so every spec passes), and what it wrote is its captured stdout.
/// Run in the box, so the protocol channel is shown to reach the implementation through it:
/// the hostile file and the example it extends are copied into a folder of their own.
fn raw_writes_are_captured((hostile, example, reference): (&str, &str, &str), written: &[&str]) {
    let folder = tempfile::tempdir().expect("temp dir");
    let name = std::path::Path::new(hostile).file_name().expect("a file");
    let solution = folder.path().join(name);
    std::fs::copy(crate::common::root().join(hostile), &solution).expect("copy");
    std::fs::copy(
        crate::common::root().join(example),
        folder.path().join(reference),
    )
    .expect("copy");
    let implementation = solution.to_str().expect("utf-8");
    let spec = "specs/dlq-consumer/transient-retried-to-the-tail.yaml";
    let ran = guarded(dlqspec().args([
        "run",
        spec,
        "specs/dlq-consumer/crash-after-put-before-ack.yaml",
        "--impl",
        implementation,
        "--show-output",
    ]));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("2 passed, 0 failed"), "{}", ran.stdout);
    let first = ran
        .stdout
        .split("PASS ")
        .find(|part| part.contains(spec))
        .expect("the first spec is reported");
    let captured = first
        .split_once("captured stdout:")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no captured stdout: {}", ran.stdout));
    for text in written {
        assert!(
            captured.contains(text),
            "{text:?} not captured: {}",
            ran.stdout
        );
    }
}
