//! External implementations through the protocol: reference solutions, buggy ones, programs
//! that misbehave, smoke, matrix, known failures, captured traffic against the JSON Schemas,
//! and no child process left behind.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Ran, dlqspec, node_tests, ran, root};

/// `dlqspec` with the in-tree shims and no protocol log, whatever the caller's environment.
fn external() -> Command {
    let mut command = dlqspec();
    command
        .env_remove("DLQSPEC_SHIMS")
        .env_remove("DLQSPEC_PROTOCOL_LOG");
    command
}

fn run(args: &[&str]) -> Ran {
    ran(external().args(args).output().expect("dlqspec runs"))
}

fn run_owned(args: &[String]) -> Ran {
    ran(external().args(args).output().expect("dlqspec runs"))
}

/// A few dlq-consumer specs: enough to see a run go on after an error, few enough to be quick.
fn first_dlq_specs() -> Vec<String> {
    crate::common::suite_of("specs/dlq-consumer")
        .into_iter()
        .take(3)
        .collect()
}

/// The lines naming one spec's outcome.
fn outcome_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| {
            ["PASS ", "FAIL ", "ERROR ", "SKIP ", "XFAIL ", "STALE "]
                .iter()
                .any(|t| l.starts_with(t))
        })
        .collect()
}

fn closing_line(stdout: &str) -> &str {
    stdout.lines().last().unwrap_or_default()
}

#[test]
fn reference_solutions_pass_every_bundled_spec() {
    let total = crate::common::suite_of("specs").len();
    let mut solutions = vec!["python:examples/python/solution.py"];
    if node_tests() {
        solutions.push("node:examples/javascript/solution.mjs");
        solutions.push("node:examples/commonjs/solution.js");
        solutions.push("node:examples/typescript/solution.ts");
    }
    let expected = format!("{total} passed, 0 failed");
    for solution in solutions {
        let suite = crate::common::suite();
        let mut args = vec!["run", "--impl", solution, "--quiet"];
        args.extend(suite.iter().map(String::as_str));
        let ran = run(&args);
        assert_eq!(
            (ran.code, closing_line(&ran.stdout)),
            (0, expected.as_str()),
            "{solution}:\n{}{}",
            ran.stdout,
            ran.stderr
        );
    }
}

#[test]
fn two_jobs_run_at_most_two_processes_and_keep_the_order() {
    let specs = crate::common::suite_of("specs/dlq-consumer");
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("traffic.log");
    let output = external()
        .args(["run", "--jobs", "2"])
        .args(&specs)
        .args(["--impl", "python:examples/python/solution.py"])
        .env("DLQSPEC_PROTOCOL_LOG", &log)
        .output()
        .expect("dlqspec runs");
    let ran = crate::common::ran(output);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let traffic = std::fs::read_to_string(&log).expect("traffic was logged");
    let pids: BTreeSet<&str> = traffic
        .lines()
        .filter_map(|l| l.split(' ').next())
        .collect();
    // At most one process per job, never one per spec. Not exactly two: a worker starts its
    // process when it takes its first spec, and on a busy machine the other worker can take
    // every spec before the second process has started.
    assert!(
        (1..=2).contains(&pids.len()),
        "one process per job at most: {pids:?}"
    );
    let shown: Vec<&str> = outcome_lines(&ran.stdout)
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(shown, specs, "the order of the specs is kept");
}

#[test]
fn misbehaving_programs_are_errored_with_a_precise_reason_and_the_run_goes_on() {
    let specs = first_dlq_specs();
    let node = node_tests();
    let tsx = node;
    let cases: &[(&str, &[&str])] = &[
        (
            "cmd:python3 tests/impls/hang.py",
            &[
                "ERROR ",
                "implementation error (timeout): `process_one()` never returned: an infinite loop, or a wait on something that never comes (no reply within 0.3s; the process was killed)\n      (--timeout SECS allows more)\n",
                // Told once: the specs after it are not run, not each timed out again.
                "not run: the solution hung in an earlier spec\n",
            ],
        ),
        (
            "cmd:python3 tests/impls/exit3.py",
            &[
                "implementation error (exited): the process exited with status 3 while serving `",
                "\n        exit3.py: simulated fatal error: segfault in native extension\n",
            ],
        ),
        (
            "cmd:python3 tests/impls/non_json.py",
            &[
                "implementation error (garbage): line 2 of stdout is not a protocol message: \"DEBUG: making a new consumer\"\n      hint: stdout carries only protocol messages; logs and debug prints belong on stderr\n      (while serving `new dlq-consumer`)",
            ],
        ),
        (
            "cmd:python3 tests/impls/wrong_seq.py",
            &[
                "implementation error (protocol): the reply to `new dlq-consumer` has seq 3, expected seq 2: every message answering or serving a request repeats its seq",
            ],
        ),
        // A return with no value is not taken for null, nor for undefined: the shim lost it.
        (
            "cmd:python3 tests/impls/return_without_value.py",
            &[
                "implementation error (protocol): line 3 of stdout is JSON but not a protocol message (a `return` message has no `value`: a method that returns nothing sends \"value\":null, and JavaScript's undefined \"undefined\":true): \"{\\\"seq\\\": 3, \\\"type\\\": \\\"return\\\"}\"",
            ],
        ),
        (
            "cmd:python3 tests/impls/wrong_version.py",
            &[
                "implementation error (protocol): the implementation speaks protocol version 2; this dlqspec speaks version 1",
            ],
        ),
        (
            "cmd:python3 tests/impls/rust-side-world-gap.py",
            &[
                "implementation error (protocol): world call `clock.now` while serving `process_one()` is numbered n=3, expected n=2: n counts the world calls of a request from 1",
            ],
        ),
        // A call marked foreseen that its request did not foresee: the world never answered it.
        (
            "cmd:python3 tests/impls/rust-side-false-foresight.py",
            &[
                "implementation error (protocol): world call `dlq.has(\"zzz\")` (n=1) while serving `process_one()` is marked foreseen, but the request foresaw `queue.receive()` there: only the foreseen calls, in order, may go on without waiting for an answer (docs/protocol.md, Foresight)",
            ],
        ),
        (
            "python:tests/impls/syntax_error.py",
            &[
                "implementation error (startup): the solution could not be loaded: SyntaxError",
                "tests/impls/syntax_error.py:6\n",
                "specs not run: this error kept them from starting\n",
            ],
        ),
        (
            "python:tests/impls/raise_at_import.py",
            &[
                "implementation error (startup): the solution could not be loaded: KeyError: 'max_attempts'",
                "tests/impls/raise_at_import.py:9\n",
            ],
        ),
        (
            "node:tests/impls/syntax_error.mjs",
            &[
                "implementation error (startup): the solution could not be loaded: SyntaxError",
                "tests/impls/syntax_error.mjs:6\n",
            ],
        ),
        (
            "node:tests/impls/raise_at_import.mjs",
            &[
                "implementation error (startup): the solution could not be loaded: TypeError",
                "tests/impls/raise_at_import.mjs:6\n",
            ],
        ),
        (
            "node:tests/impls/syntax_error.ts",
            &[
                "implementation error (startup): the solution could not be loaded: SyntaxError",
                "tests/impls/syntax_error.ts:6\n",
            ],
        ),
    ];
    for (implementation, wanted) in cases {
        if (implementation.ends_with(".ts") && !tsx)
            || (implementation.starts_with("node:") && !node)
        {
            continue;
        }
        let mut args = vec!["run", "--impl", implementation, "--timeout", "0.3"];
        args.extend(specs.iter().map(String::as_str));
        let ran = run(&args);
        assert_eq!(
            ran.code, 1,
            "{implementation}:\n{}{}",
            ran.stdout, ran.stderr
        );
        // Every spec got an outcome: one broken process does not end the run. An
        // implementation that cannot start is told once, on its own, the specs it kept from
        // running counted.
        let not_run: usize = ran
            .stdout
            .lines()
            .filter(|l| {
                l.ends_with(" not run: this error kept them from starting")
                    || l.ends_with(" not run: this error kept it from starting")
            })
            .filter_map(|l| l.split_whitespace().next()?.parse::<usize>().ok())
            .sum();
        let startup = ran
            .stdout
            .lines()
            .filter(|l| l.ends_with(" the implementation did not start, so no spec could run"))
            .count();
        // A run of skipped specs is one line: `SKIP  N specs, A to B`.
        let skipped_together: usize = ran
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("SKIP  "))
            .filter_map(|l| l.split_once(" specs, "))
            .filter_map(|(n, _)| n.parse::<usize>().ok())
            .map(|n| n - 1)
            .sum();
        assert_eq!(
            outcome_lines(&ran.stdout).len() - startup + not_run + skipped_together,
            specs.len(),
            "{implementation}:\n{}",
            ran.stdout
        );
        assert!(
            closing_line(&ran.stdout).starts_with("0 passed, "),
            "{implementation}:\n{}",
            ran.stdout
        );
        for text in *wanted {
            assert!(
                ran.stdout.contains(text),
                "{implementation}: no {text:?} in\n{}",
                ran.stdout
            );
        }
    }
}

#[test]
fn a_contract_the_implementation_does_not_claim_is_not_attempted_not_failed() {
    let mut specs = first_dlq_specs();
    let queue_spec = crate::common::suite_of("specs/outcome-queue").remove(0);
    specs.push(queue_spec.clone());
    let mut args = vec![
        "run",
        "--impl",
        "python:tests/solutions/only_retry_queue.py",
    ];
    args.extend(specs.iter().map(String::as_str));
    let ran = run(&args);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    // The specs not attempted are told once, with why once: not a page of skips.
    let skipped = specs.len() - 1;
    let expected = format!(
        "SKIP  {skipped} specs, {} to {}\n      not attempted: tests/solutions/only_retry_queue.py has no class `DLQConsumer`: the dlq-consumer contract is not attempted\nPASS  {queue_spec}  ",
        specs[0],
        specs[skipped - 1]
    );
    assert!(ran.stdout.starts_with(&expected), "{}", ran.stdout);
    let quiet = run(&[args.as_slice(), &["--quiet"]].concat());
    assert_eq!(
        quiet.stdout,
        format!("\n1 passed, 0 failed, {skipped} not attempted\n"),
        "--quiet shows only failures and the summary"
    );
    assert_eq!(
        closing_line(&ran.stdout),
        format!("1 passed, 0 failed, {} not attempted", specs.len() - 1)
    );
}

#[test]
fn an_implementation_with_none_of_the_selected_contracts_fails_in_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let misnamed = dir.path().join("misnamed.py");
    std::fs::write(
        &misnamed,
        "import json\n\nclass DlqConsumer:\n    pass\n\ndef helper():\n    pass\n\nLIMIT = 3\n",
    )
    .expect("write solution");
    let empty = dir.path().join("empty.py");
    std::fs::write(&empty, "").expect("write solution");
    let misnamed_impl = format!("python:{}", misnamed.display());
    let empty_impl = format!("python:{}", empty.display());
    for (implementation, specs, wanted) in [
        (
            misnamed_impl.as_str(),
            "specs/dlq-consumer",
            format!(
                "error: {} provides none of the contracts the selected specs check: it has no class `DLQConsumer` (dlq-consumer); it defines: DlqConsumer (did you mean `DLQConsumer`?), helper\n",
                misnamed.display()
            ),
        ),
        (
            empty_impl.as_str(),
            "specs",
            format!(
                "error: {} provides none of the contracts the selected specs check: it has no class `DLQConsumer` (dlq-consumer) and no class `RetryQueue` (outcome-queue); it defines nothing at top level\n",
                empty.display()
            ),
        ),
    ] {
        let ran = run(&["run", specs, "--impl", implementation]);
        assert_eq!(
            (ran.code, ran.stdout.as_str(), ran.stderr.as_str()),
            (1, "", wanted.as_str())
        );
    }
    if node_tests() {
        let misnamed = dir.path().join("misnamed.mjs");
        std::fs::write(
            &misnamed,
            "export class Consumer {}\nexport const limit = 3;\n",
        )
        .expect("write solution");
        let implementation = format!("node:{}", misnamed.display());
        let ran = run(&["run", "specs/outcome-queue", "--impl", &implementation]);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stderr.ends_with(
                "it has no class `RetryQueue` (outcome-queue); it defines: Consumer, limit\n"
            ),
            "{}",
            ran.stderr
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn no_child_is_left_behind_after_a_hang_a_linger_or_an_interrupt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let specs = first_dlq_specs();
    // Outside the box (whose namespace ends everything by itself, see adversarial::sandbox):
    // the programs write their host pids here, and dlqspec's own tree ending is what is tested.

    // A hung program and the child it started: killed as a group, on every spec.
    let pidfile = dir.path().join("hang-tree.pids");
    let command = format!(
        "cmd:python3 tests/impls/rust-side-hang-tree.py '{}'",
        pidfile.display()
    );
    let ran = run(&[
        "run",
        "--sandbox",
        "off",
        "--impl",
        &command,
        "--timeout",
        "0.3",
        "--jobs",
        "1",
        &specs[0],
        &specs[1],
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    // Told once: the spec after the hang is not run.
    assert_eq!(
        ran.stdout
            .matches("      implementation error (timeout)")
            .count(),
        1,
        "{}",
        ran.stdout
    );
    let pids = crate::common::pids_in(&pidfile);
    assert_eq!(pids.len(), 2, "one start, two pids: {pids:?}");
    crate::common::assert_all_dead(&pids, "after the run");

    // A program that answers `bye` but stays: killed after the grace period.
    let pidfile = dir.path().join("linger.pids");
    let command = format!(
        "cmd:python3 tests/impls/rust-side-linger.py '{}'",
        pidfile.display()
    );
    let ran = run(&["run", "--sandbox", "off", "--impl", &command, &specs[0]]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let pids = crate::common::pids_in(&pidfile);
    assert_eq!(pids.len(), 1, "{pids:?}");
    crate::common::assert_all_dead(&pids, "after the run");

    // dlqspec interrupted (Ctrl-C) while its implementation hangs: the group dies with it.
    let pidfile = dir.path().join("interrupt.pids");
    let command = format!(
        "cmd:python3 tests/impls/rust-side-hang-tree.py '{}'",
        pidfile.display()
    );
    let mut child = external()
        .args([
            "run",
            "--sandbox",
            "off",
            "--impl",
            &command,
            "--timeout",
            "600",
            &specs[0],
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("dlqspec starts");
    // However long a busy machine takes to start it: only a run that ends first fails.
    while crate::common::pids_in(&pidfile).len() < 2 {
        if let Some(status) = child.try_wait().expect("dlqspec's status") {
            panic!("dlqspec ended before its implementation started: {status:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pids = crate::common::pids_in(&pidfile);
    assert_eq!(pids.len(), 2, "the implementation did not start: {pids:?}");
    let dlqspec_pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(dlqspec_pid, libc::SIGINT);
    }
    let status = child.wait().expect("dlqspec ends");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    crate::common::assert_all_dead(&pids, "after the run");
}

#[test]
fn smoke_says_ok_with_the_handshake_and_timings() {
    let ran = run(&["smoke", "--impl", "python:examples/python/solution.py"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .starts_with("smoke test of python:examples/python/solution.py\n  command    python3 "),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("\n  hello      solution.py (python 3."),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("\n  contracts  dlq-consumer, outcome-queue\n"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("  ok    process_one() -> retry  ("),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("\n  bye        answered, exited with status 0 in "),
        "{}",
        ran.stdout
    );
    // outcome-queue, an exercise folder, is smoked from its own plan: the starter's calls,
    // answered as its reference answers them.
    assert!(
        ran.stdout
            .contains("\noutcome-queue\n  ok    new outcome-queue -> made  ("),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("\n  ok    process(\"transient\") -> retry  ("),
        "{}",
        ran.stdout
    );
    assert!(
        closing_line(&ran.stdout).starts_with(
            "ok: python:examples/python/solution.py answered 10 requests correctly in "
        ),
        "{}",
        ran.stdout
    );
}

#[test]
fn smoke_tries_an_exercise_folder_from_its_starter_calls_and_reference() {
    let smoke = |solution: &str| {
        run(&[
            "smoke",
            "--exercise",
            "exercises/lease-queue",
            "--impl",
            &format!("auto:tests/exercises/lease-queue/{solution}"),
        ])
    };
    let ran = smoke("correct/queue_eager.py");
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    for line in [
        "\n  contracts  lease-queue\n",
        "\n  ok    new lease-queue -> made  (",
        "\n  ok    submit(\"a\", \"acct-1\", \"p1\") -> true  (",
        "\n  ok    state() -> {ready: [], held: [], waiting: [], leased: [], done: [a], quarantine: []}  (",
        // Each view once, then the restart: the snapshot, an instance made from it, and its
        // first view.
        "\n  ok    policy() -> {budget: 2, lease: 10, backoff: 5}  (",
        "\n  ok    snapshot() -> {policy: ",
        "\n  ok    new lease-queue by from_snapshot(its snapshot) -> made  (",
    ] {
        assert!(ran.stdout.contains(line), "{line}\n{}", ran.stdout);
    }
    assert!(
        closing_line(&ran.stdout).starts_with("ok: python:tests/exercises/lease-queue/correct/queue_eager.py answered 10 requests correctly in "),
        "{}",
        ran.stdout
    );
    if !node_tests() {
        return;
    }
    let ran = smoke("broken/replay_missing_undefined.ts");
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("  FAIL  replay(\"a\") -> undefined  (",)
            && ran
                .stdout
                .contains("        expected false: the reference returns this here\n"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains(
            "\nFAILED:\n  lease-queue: replay(\"a\") answered undefined, expected false\n"
        ),
        "{}",
        ran.stdout
    );
}

/// A solution without a view, without the restart's factory, or with its class misnamed is
/// told by smoke, as `run` would tell it, not passed: each is a correct JavaScript solution
/// with one name changed.
#[test]
fn smoke_asks_each_view_and_the_restart_and_names_a_misnamed_class() {
    if !node_tests() {
        return;
    }
    let correct = std::fs::read_to_string(
        root().join("tests/exercises/lease-queue/correct/queue_derived.mjs"),
    )
    .expect("the solution reads");
    let dir = tempfile::tempdir().expect("temp dir");
    let smoke = |name: &str, from: &str, to: &str| {
        assert!(correct.contains(from), "{from}");
        let path = dir.path().join(name);
        std::fs::write(&path, correct.replace(from, to)).expect("written");
        run(&[
            "smoke",
            "--exercise",
            "exercises/lease-queue",
            "--impl",
            &format!("node:{}", path.display()),
        ])
    };
    let ran = smoke("no_view.mjs", "  policy() {", "  settings() {");
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("\n  FAIL  policy()  (")
            && ran.stdout.contains("\nFAILED:\n  lease-queue: the implementation could not serve `policy()`: LeaseQueue has no method policy()\n"),
        "{}",
        ran.stdout
    );
    let ran = smoke(
        "no_factory.mjs",
        "  static fromSnapshot(",
        "  static fromSnap(",
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("\n  ok    snapshot() -> {")
            && ran
                .stdout
                .contains("\n  FAIL  new lease-queue by from_snapshot(its snapshot)  (")
            && ran.stdout.contains(
                "LeaseQueue has no static fromSnapshot() to make an instance from a snapshot"
            ),
        "{}",
        ran.stdout
    );
    let ran = smoke(
        "misnamed.mjs",
        "export class LeaseQueue {",
        "export class Leasequeue {",
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("\nFAILED:\n  it provides none of the contracts dlqspec checks: it has no class `LeaseQueue` (lease-queue) and no class `DLQConsumer` (dlq-consumer) and no class `RetryQueue` (outcome-queue); it defines: Leasequeue (did you mean `LeaseQueue`?)\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn smoke_says_exactly_what_is_wrong() {
    let ran = run(&[
        "smoke",
        "--impl",
        "cmd:python3 tests/impls/hang.py",
        "--timeout",
        "0.3",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(
            "\nFAILED:\n  dlq-consumer: `process_one()` never returned: an infinite loop, or a wait on something that never comes (no reply within 0.3s; the process was killed)\n"
        ),
        "{}",
        ran.stdout
    );

    let ran = run(&["smoke", "--impl", "python:tests/impls/syntax_error.py"]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("  hello      FAILED\n"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("tests/impls/syntax_error.py:6\n"),
        "{}",
        ran.stdout
    );
    assert_eq!(
        closing_line(&ran.stdout),
        "FAILED: python:tests/impls/syntax_error.py did not complete the handshake"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let command = format!(
        "cmd:python3 tests/impls/rust-side-linger.py '{}'",
        dir.path().join("pids").display()
    );
    // Outside the box: the program writes its host pid where the test reads it.
    let ran = run(&["smoke", "--sandbox", "off", "--impl", &command]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(
            "  dlq-consumer: process_one() answered null, expected retry\n  it did not exit within 1 s of `bye`\n"
        ),
        "{}",
        ran.stdout
    );

    let ran = run(&["smoke", "--impl", "builtin"]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stderr.contains("the built-in one needs no smoke test"));
}

#[test]
fn bad_impl_values_are_usage_errors() {
    let ran = run(&["run", "--impl", "ruby:x.rb"]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains(
            "cannot tell how to run `ruby:x.rb`: dlqspec has shims for Python and JavaScript/TypeScript only; a program in another language speaks the protocol itself (docs/protocol.md) and runs as cmd:'ruby x.rb'; write python:FILE, node:FILE (.ts, .mjs, .js, .cjs, .mts, .cts), auto:FILE_OR_FOLDER, cmd:'COMMAND LINE' or builtin"
        ),
        "{}",
        ran.stderr
    );
    let ran = run(&["run", "--impl", "python:no/such/solution.py"]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr
            .contains("`python:no/such/solution.py`: no such file `no/such/solution.py`"),
        "{}",
        ran.stderr
    );
    let ran = run(&["run", "--impl", "cmd:no-such-program-dlqspec"]);
    assert_eq!(ran.code, 1);
    assert!(
        ran.stdout.contains(
            "implementation error (startup): cannot start `no-such-program-dlqspec`: No such file or directory"
        ),
        "{}",
        ran.stdout
    );
    let ran = run(&["run", "--timeout", "0"]);
    assert_eq!(ran.code, 2);
    assert!(ran.stderr.contains("the timeout must be more than 0"));
}

#[test]
fn the_matrix_shows_rules_by_implementation_and_links_failures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let html = dir.path().join("matrix.html");
    let markdown = dir.path().join("matrix.md");
    let html_arg = html.to_string_lossy().into_owned();
    let buggy = "python:tests/solutions/dlq_no_poison.py";
    let dlq_specs = crate::common::suite_of("specs/dlq-consumer");
    let with_specs = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        all.splice(1..1, dlq_specs.iter().cloned());
        all
    };
    let ran = run_owned(&with_specs(&[
        "matrix",
        "--impl",
        "python:examples/python/solution.py",
        "--impl",
        buggy,
        "--output",
        &html_arg,
    ]));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let header = ran.stdout.lines().next().unwrap_or_default();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        columns,
        [
            "rule",
            "builtin",
            "python:solution.py",
            "python:dlq_no_poison.py"
        ]
    );
    let poison = ran
        .stdout
        .lines()
        .find(|l| l.starts_with("dlq-consumer/poison "))
        .expect("a poison row");
    let cells: Vec<&str> = poison.split_whitespace().skip(1).collect();
    let (passed, total) = cells[2].split_once('/').expect("passed/total");
    assert_eq!(cells[0], cells[1], "{poison}");
    assert_eq!(cells[0], format!("{total}/{total}"), "{poison}");
    let count = |n: &str| n.parse::<usize>().expect("a count");
    assert!(count(passed) < count(total), "{poison}");
    assert!(
        ran.stdout
            .contains("\npython:tests/solutions/dlq_no_poison.py failed "),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("columns:\n  python:solution.py = python:examples/python/solution.py\n"),
        "{}",
        ran.stdout
    );

    let page = std::fs::read_to_string(&html).expect("the page is written");
    let link = page
        .split("<td class=\"cell fail\"><a href=\"#")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a failing cell links somewhere");
    assert!(link.starts_with("impl2-specs-dlq-consumer-"), "{link}");
    assert!(
        page.contains(&format!("<section id=\"{link}\">")),
        "the link has a target"
    );
    assert!(
        page.contains("<span class=\"del\">"),
        "the target shows a diff"
    );

    let markdown_arg = markdown.to_string_lossy().into_owned();
    let ran = run_owned(&with_specs(&[
        "matrix",
        "--impl",
        buggy,
        "-o",
        &markdown_arg,
    ]));
    assert_eq!(ran.code, 1);
    let page = std::fs::read_to_string(&markdown).expect("the markdown is written");
    assert!(page.starts_with("# dlqspec conformance matrix\n"), "{page}");
    assert!(
        page.contains(" | ❌ [") && page.contains("](#impl1-specs-dlq-consumer-"),
        "{page}"
    );
    assert!(page.contains("\n```diff\nfirst difference at "), "{page}");

    let ran = run(&["matrix", "--output", "matrix.txt"]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr
            .contains("--output matrix.txt: name its format with --format text|markdown|html, or end the file name in .md (Markdown) or .html"),
        "{}",
        ran.stderr
    );
}

#[test]
fn known_failures_are_expected_and_a_listed_pass_is_stale() {
    let buggy = "python:tests/solutions/dlq_no_poison.py";
    let dlq_specs = crate::common::suite_of("specs/dlq-consumer");
    let with_specs = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        all.splice(1..1, dlq_specs.iter().cloned());
        all
    };
    let ran = run_owned(&with_specs(&["run", "--impl", buggy, "--quiet"]));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let failing: Vec<&str> = ran
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("FAIL  "))
        .filter_map(|l| l.split("  ").next())
        .collect();
    assert!(!failing.is_empty(), "{}", ran.stdout);

    let dir = tempfile::tempdir().expect("temp dir");
    let list = dir.path().join("known.yaml");
    let text: String = failing
        .iter()
        .map(|spec| format!("- spec: {spec}\n  reason: poison pills are not detected yet\n"))
        .collect();
    std::fs::write(&list, text).expect("write the list");
    let list_arg = list.to_string_lossy().into_owned();

    let ran = run_owned(&with_specs(&[
        "run",
        "--impl",
        buggy,
        "--known-failures",
        &list_arg,
    ]));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(
        ran.stdout.matches("\nXFAIL ").count() + usize::from(ran.stdout.starts_with("XFAIL ")),
        failing.len(),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains(&format!(
            "      known failure, listed at {list_arg}:1:3: poison pills are not detected yet\n"
        )),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains(&format!("{} known failures, as expected\n", failing.len())),
        "{}",
        ran.stdout
    );

    let ran = run(&[
        "run",
        failing[0],
        "--impl",
        "python:examples/python/solution.py",
        "--known-failures",
        &list_arg,
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(&format!(
            "STALE {}",
            failing[0]
        )) && ran.stdout.contains(&format!(
            "      listed as a known failure ({list_arg}:1:3) but passed: remove it from {list_arg}\n"
        )),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("failed: 1 stale known failure\n"),
        "{}",
        ran.stdout
    );

    std::fs::write(&list, "- rule: dlq-consumer/nope\n").expect("write the list");
    let ran = run(&["run", "--known-failures", &list_arg]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr
            .contains("error: unknown rule `dlq-consumer/nope`; `dlqspec rules` lists the rules"),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains(&format!("{list_arg}:1:9")),
        "{}",
        ran.stderr
    );
}

/// Loads one of crates/formats/schema/*.json (the protocol's) as a validator.
fn validator(name: &str) -> jsonschema::Validator {
    let path = root().join("crates/formats/schema").join(name);
    let text = std::fs::read_to_string(&path).expect("schema file");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

#[test]
fn real_traffic_validates_against_the_json_schemas() {
    let requests = validator("request.schema.json");
    let replies = validator("reply.schema.json");
    // The validators are live: a message missing its value is refused.
    let broken: Value = serde_json::from_str(r#"{"seq":2,"type":"return"}"#).expect("json");
    assert!(!replies.is_valid(&broken));

    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("traffic.log");
    // Each run with the exit code it must give: traffic of a run that went wrong proves little.
    let suite = crate::common::suite();
    let with_suite = |head: &[&'static str]| -> Vec<String> {
        let mut all: Vec<String> = head.iter().map(|a| (*a).to_owned()).collect();
        if head[0] == "run" {
            all.splice(1..1, suite.iter().cloned());
        }
        all
    };
    let mut runs: Vec<(Vec<&str>, i32)> = vec![
        (
            vec!["run", "--impl", "python:examples/python/solution.py"],
            0,
        ),
        (
            vec!["smoke", "--impl", "python:examples/python/solution.py"],
            0,
        ),
        (
            vec!["smoke", "--impl", "python:tests/impls/syntax_error.py"],
            1,
        ),
        (
            vec!["run", "--impl", "python:tests/solutions/dlq_no_dedupe.py"],
            1,
        ),
        // A student who prints and raises: `output` messages and a `traceback`.
        (
            vec![
                "run",
                "specs/dlq-consumer",
                "--impl",
                "python:tests/students/debug_keyerror.py",
            ],
            1,
        ),
        // An error no call could catch: `errored` with a `traceback`.
        (
            vec!["smoke", "--impl", "python:tests/students/thread_error.py"],
            1,
        ),
    ];
    if node_tests() {
        runs.push((
            vec!["run", "--impl", "node:examples/javascript/solution.mjs"],
            0,
        ));
        runs.push((
            vec!["smoke", "--impl", "node:examples/javascript/solution.mjs"],
            0,
        ));
        runs.push((
            vec!["smoke", "--impl", "node:tests/students/late_timer.mjs"],
            1,
        ));
    }
    for (args, code) in &runs {
        let output = external()
            .args(with_suite(args))
            .env("DLQSPEC_PROTOCOL_LOG", &log)
            .output()
            .expect("dlqspec runs");
        let ran = ran(output);
        assert_eq!(ran.code, *code, "{args:?}\n{}{}", ran.stdout, ran.stderr);
    }
    let traffic = std::fs::read_to_string(&log).expect("traffic was logged");
    let mut seen = BTreeSet::new();
    for line in traffic.lines() {
        let mut parts = line.splitn(3, ' ');
        let (_pid, direction, message) = (parts.next(), parts.next(), parts.next());
        let message: Value = serde_json::from_str(message.unwrap_or_default())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        let schema = match direction {
            Some(">") => &requests,
            Some("<") => &replies,
            _ => panic!("no direction: {line}"),
        };
        let errors: Vec<String> = schema
            .iter_errors(&message)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{line}\n{errors:#?}");
        let kind = message["type"].as_str().unwrap_or_default().to_owned();
        seen.insert(format!("{} {kind}", direction.unwrap_or_default()));
    }
    for wanted in [
        "> hello",
        "> new",
        "> call",
        "> result",
        "> raise",
        "> bye",
        "< hello",
        "< return",
        "< raised",
        "< world",
        "< errored",
        "< output",
        "< bye",
    ] {
        assert!(
            seen.contains(wanted),
            "no `{wanted}` in the traffic: {seen:?}"
        );
    }
}

#[test]
fn the_built_in_shims_are_used_without_dlqspec_shims() {
    // No DLQSPEC_SHIMS: the shims built into the program, written to the cache folder.
    let ran = run(&[
        "run",
        "--impl",
        "python:examples/python/solution.py",
        "--quiet",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    // A wrong DLQSPEC_SHIMS is reported as such.
    let output = external()
        .args(["run", "--impl", "python:examples/python/solution.py"])
        .env("DLQSPEC_SHIMS", "/no/such/shims")
        .output()
        .expect("dlqspec runs");
    let ran = crate::common::ran(output);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains(
            "the python shim is not at /no/such/shims/python/dlqspec_shim.py (shims folder from DLQSPEC_SHIMS); set DLQSPEC_SHIMS to the folder that holds python/dlqspec_shim.py"
        ),
        "{}",
        ran.stderr
    );
}

#[test]
fn explain_tells_an_external_run_and_names_the_rule_it_breaks() {
    let ran = run(&[
        "explain",
        "specs/dlq-consumer/poison-cycle.yaml",
        "--impl",
        "python:tests/solutions/dlq_no_poison.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("handler(p) is called a 3rd time, but the spec scripts no outcome for it"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("rule dlq-consumer/poison: receive_count 3 > max_attempts 2"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("outcome: FAIL"), "{}", ran.stdout);
}

/// A program that prints what is not the protocol and exits before `hello` (a JVM that cannot
/// reserve its heap under `--memory`) did not start: it is told so with what it printed, its
/// stderr and the limit it most likely hit, not as garbage. One that goes on running is
/// garbage as before; without the lowered limit the same program starts.
#[test]
fn a_start_that_fails_says_why_and_names_the_memory_limit() {
    let spec = "specs/dlq-consumer/empty-queue-returns-none.yaml";
    let starved = |flags: &str, memory: Option<&str>| {
        let implementation = format!("cmd:python3 tests/impls/starved_start.py{flags}");
        let mut args = vec!["run", "--impl", &implementation, spec];
        if let Some(memory) = memory {
            args.extend(["--memory", memory]);
        }
        run(&args)
    };
    let quiet = starved("", Some("64M"));
    assert_eq!(quiet.code, 1, "{}{}", quiet.stdout, quiet.stderr);
    crate::common::assert_contains_all(
        &quiet.stdout,
        [
            "implementation error (startup): the process exited with status 1 before it answered `hello`: it did not start\n",
            "its stdout, which is not the protocol:\n        \"Error occurred during initialization of the runtime\"\n        \"the runtime gives up\"\n",
            "most likely could not get the memory its runtime needs to start: each implementation process may use 64 MiB of data (--memory)\n",
            "stderr:\n        starved_start.py: see the report on stdout\n",
        ],
        "a quiet start failure",
    );
    assert!(!quiet.stdout.contains("garbage"), "{}", quiet.stdout);

    let says = starved(" --says-memory", Some("64M"));
    crate::common::assert_contains_all(
        &says.stdout,
        [
            "implementation error (startup): the process exited with status 1 before it answered `hello`",
            "\"# There is insufficient memory for the Java Runtime Environment to continue.\"\n",
            "it ran out of memory: each implementation process may use 64 MiB of data (--memory)\n",
        ],
        "a start failure that says memory",
    );

    let lingers = starved(" --lingers", Some("64M"));
    assert!(
        lingers.stdout.contains(
            "implementation error (garbage): line 1 of stdout is not a protocol message: \"Error occurred during initialization of the runtime\""
        ),
        "{}",
        lingers.stdout
    );

    // Not limited, it starts (and provides no contract): the limit was the cause.
    let free = starved("", None);
    assert!(
        free.stderr
            .contains("provides none of the contracts the selected specs check"),
        "{}{}",
        free.stdout,
        free.stderr
    );
}

/// What is wrong with a protocol log (`PID > line` / `PID < line`) in which a fault must land
/// on the exact world call scheduled: every `raise` of kind `crash` answers the world call
/// just before it, a call named `call`, and the implementation's next message for that
/// request is its `raised` reply of kind `crash`, with no world call between (nothing of the
/// solution ran past the faulted call). The number of crashes raised, when nothing is wrong.
/// The log's messages with the answer each world call marked `foreseen` took from its
/// request's `foresee` written in after it, as dlqspec would have sent it: a foreseen crash
/// lands on its call as a sent one does.
fn with_foreseen_answers(messages: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let mut foresee: std::collections::HashMap<String, Value> = Default::default();
    let mut out = Vec::new();
    for (direction, message) in messages {
        let seq = message["seq"].to_string();
        if direction == ">" && message.get("foresee").is_some() {
            foresee.insert(seq.clone(), message["foresee"].clone());
        }
        let taken = (direction == "<" && message["foreseen"] == true)
            .then(|| message["n"].as_u64())
            .flatten()
            .and_then(|n| {
                foresee
                    .get(&seq)?
                    .get(usize::try_from(n).ok()? - 1)
                    .cloned()
            });
        let n = message["n"].clone();
        out.push((direction, message));
        if let Some(item) = taken {
            let answer = match item.get("raise") {
                Some(error) => {
                    serde_json::json!({"seq": seq.parse::<u64>().unwrap_or(0), "type": "raise", "n": n, "error": error})
                }
                None => {
                    serde_json::json!({"seq": seq.parse::<u64>().unwrap_or(0), "type": "result", "n": n, "value": item["value"]})
                }
            };
            out.push((">".to_owned(), answer));
        }
    }
    out
}

fn crashes_land_on(log: &str, call: &str) -> Result<usize, String> {
    let messages: Vec<(String, Value)> = log
        .lines()
        .map(|line| {
            let mut parts = line.splitn(3, ' ');
            let (_pid, direction, message) = (parts.next(), parts.next(), parts.next());
            let message = serde_json::from_str(message.unwrap_or_default())
                .map_err(|e| format!("not JSON ({e}): {line}"))?;
            Ok((direction.unwrap_or_default().to_owned(), message))
        })
        .collect::<Result<_, String>>()?;
    let messages = with_foreseen_answers(messages);
    let mut crashes = 0;
    for (at, (direction, message)) in messages.iter().enumerate() {
        if direction != ">" || message["type"] != "raise" || message["error"]["kind"] != "crash" {
            continue;
        }
        crashes += 1;
        let asked =
            at.checked_sub(1)
                .map(|before| &messages[before])
                .filter(|(direction, asked)| {
                    direction == "<"
                        && asked["type"] == "world"
                        && asked["call"] == call
                        && asked["seq"] == message["seq"]
                        && asked["n"] == message["n"]
                });
        if asked.is_none() {
            return Err(format!(
                "the crash {message} does not answer the `{call}` world call just before it"
            ));
        }
        let next = messages[at + 1..]
            .iter()
            .find(|(direction, reply)| direction == "<" && reply["type"] != "output");
        match next {
            Some((_, reply)) if reply["type"] == "raised" && reply["error"]["kind"] == "crash" => {
                if reply["seq"] != message["seq"] {
                    return Err(format!("the crash {message} is told as {reply}"));
                }
            }
            other => {
                return Err(format!(
                    "after the crash {message} the implementation went on: {other:?}"
                ));
            }
        }
    }
    Ok(crashes)
}

#[test]
fn an_injected_crash_lands_on_the_exact_world_call_through_each_shim() {
    // The checker has teeth: a world call after the crash, or a crash answering another call,
    // is caught.
    let ran_on = concat!(
        "1 < {\"seq\":3,\"type\":\"world\",\"n\":4,\"call\":\"dlq.put\",\"args\":[{}]}\n",
        "1 > {\"seq\":3,\"type\":\"raise\",\"n\":4,\"error\":{\"kind\":\"crash\",\"class\":\"Crash\",\"message\":\"x\"}}\n",
        "1 < {\"seq\":3,\"type\":\"world\",\"n\":5,\"call\":\"queue.ack\",\"args\":[\"a\"]}\n",
    );
    assert!(crashes_land_on(ran_on, "dlq.put").is_err());
    let told = concat!(
        "1 < {\"seq\":3,\"type\":\"world\",\"n\":4,\"call\":\"dlq.put\",\"args\":[{}]}\n",
        "1 > {\"seq\":3,\"type\":\"raise\",\"n\":4,\"error\":{\"kind\":\"crash\",\"class\":\"Crash\",\"message\":\"x\"}}\n",
        "1 < {\"seq\":3,\"type\":\"raised\",\"error\":{\"kind\":\"crash\",\"class\":\"Crash\",\"message\":\"x\"}}\n",
    );
    assert_eq!(crashes_land_on(told, "dlq.put"), Ok(1));
    assert!(crashes_land_on(told, "queue.ack").is_err());

    let mut solutions = vec!["python:examples/python/solution.py"];
    if node_tests() {
        solutions.push("node:examples/javascript/solution.mjs");
    }
    // Foreseen (the crash taken from the request's foresight) and sent (no features).
    for (solution, features) in solutions
        .into_iter()
        .flat_map(|solution| [(solution, None), (solution, Some(""))])
    {
        for (spec, call) in [
            (
                "specs/dlq-consumer/crash-after-put-before-ack.yaml",
                "dlq.put",
            ),
            (
                "specs/dlq-consumer/crash-before-put-loses-nothing.yaml",
                "dlq.put",
            ),
        ] {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let log = dir.path().join("protocol.log");
            let mut command = external();
            command
                .args(["run", spec, "--impl", solution])
                .env("DLQSPEC_PROTOCOL_LOG", &log);
            if let Some(features) = features {
                command.env("DLQSPEC_FEATURES", features);
            }
            let output = command.output().expect("dlqspec runs");
            let ran = ran(output);
            assert_eq!(
                ran.code, 0,
                "{solution} {spec}\n{}{}",
                ran.stdout, ran.stderr
            );
            let traffic = std::fs::read_to_string(&log).expect("traffic was logged");
            assert_eq!(
                crashes_land_on(&traffic, call),
                Ok(1),
                "{solution} {spec}\n{traffic}"
            );
        }
    }
}
