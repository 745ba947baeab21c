//! Every promise of the README and docs/ that had no test gets one here (issue 11, point 6):
//! colors, the progress bar, CI annotations, `rules`, load errors, notes about an external
//! consumer, known failures in JUnit and TAP, `--jobs`, `errored`, the `hello` grace time,
//! `explain`/`lint` on a broken spec, and shell completions. Each drives the real binary.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;

use serde_json::Value;

use crate::common::{Ran, dlqspec, path_arg, ran, run};

/// A bundled spec that passes on the built-in implementation and claims `dlq-consumer/permanent`.
const PASSING_SPEC: &str = "specs/dlq-consumer/permanent-on-the-first-delivery.yaml";

/// A spec the built-in implementation fails: it dead-letters a permanent error at once, and
/// this spec expects a retry. The `retry` of line 9 is at column 14.
const EXPECTS_A_RETRY: &str = "\
contract: dlq-consumer
name: a permanent error expected to be retried
rules: [dlq-consumer/permanent]
messages:
  - {id: a, body: price=-5}
handler:
  a: [permanent: negative price]
steps:
  - process: retry
";
const EXPECTS_A_RETRY_NAME: &str = "a permanent error expected to be retried";

/// A spec any correct consumer passes: one message, handled once, acked.
const ONE_SUCCESS: &str = "\
contract: dlq-consumer
name: a handled message is acked once
messages:
  - {id: a, body: order-1}
handler:
  a: [ok]
steps:
  - process: ok
";

/// A spec whose permanent error is scripted once: a consumer that retries it calls the
/// handler a second time on the second `process`. The built-in consumer passes it.
const ONE_PERMANENT_OUTCOME: &str = "\
contract: dlq-consumer
name: a permanent error reaches the handler once
messages:
  - {id: a, body: price=-5}
handler:
  a: [permanent: negative price]
steps:
  - process: any
  - process: any
";

/// An implementation that speaks the protocol itself (docs/protocol.md). Arguments: how many
/// seconds to wait before answering `hello`, then the type of its answer to every `new`
/// (`errored` or `skipped`) and the text that goes with it.
const PROTOCOL_PROGRAM: &str = r#"import json
import sys
import time

hello_after, new_answer, text = float(sys.argv[1]), sys.argv[2], sys.argv[3]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    seq = request["seq"]
    if request["type"] == "hello":
        time.sleep(hello_after)
        send({"seq": seq, "type": "hello", "protocol": 1,
              "implementation": {"name": "protocol_program.py", "language": "python", "version": "0"},
              "contracts": ["dlq-consumer"]})
    elif request["type"] == "new":
        key = "reason" if new_answer == "skipped" else "message"
        send({"seq": seq, "type": new_answer, key: text})
    elif request["type"] == "bye":
        send({"seq": seq, "type": "bye"})
        break
    else:
        send({"seq": seq, "type": "errored", "message": "this program only answers new"})
"#;

/// Deliberately wrong: retries every failure, permanent ones included, and acks a success twice.
const RETRIES_PERMANENT_AND_ACKS_TWICE: &str = r#"from given import PermanentError, TransientError, Crash


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue
        self.handler = handler

    def process_one(self):
        msg = self.queue.receive()
        if msg is None:
            return None
        try:
            self.handler(msg["body"])
        except (PermanentError, TransientError):
            self.queue.retry(msg["id"])
            return "retry"
        self.queue.ack(msg["id"])
        self.queue.ack(msg["id"])
        return "ok"

    def replay(self, ids=None):
        return []
"#;

/// Deliberately wrong: the constructor raises.
const CONSTRUCTOR_RAISES: &str = r#"from given import PermanentError, TransientError, Crash


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        raise ValueError("no queue today")

    def process_one(self):
        return None

    def replay(self, ids=None):
        return []
"#;

/// Deliberately wrong: reads a field messages do not have, so `process_one` raises KeyError.
const READS_A_MISSING_FIELD: &str = r#"from given import PermanentError, TransientError, Crash


class DLQConsumer:
    def __init__(self, queue, dlq, handler, clock, max_attempts=3):
        self.queue = queue

    def process_one(self):
        msg = self.queue.receive()
        return msg["attempts"]

    def replay(self, ids=None):
        return []
"#;

/// Writes `text` to `name` in `dir` and returns the path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a file");
    path
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// `dlqspec` with the in-tree shims and no protocol log, whatever the caller's environment.
fn external() -> Command {
    let mut command = dlqspec();
    command
        .env_remove("DLQSPEC_SHIMS")
        .env_remove("DLQSPEC_PROTOCOL_LOG");
    command
}

/// `--impl cmd:...` for the protocol program written to `program`.
fn protocol_impl(program: &Path, hello_after_secs: &str, new_answer: &str, text: &str) -> String {
    format!(
        "cmd:python3 {} {hello_after_secs} {new_answer} '{text}'",
        path_arg(program)
    )
}

/// The distinct process ids in a `DLQSPEC_PROTOCOL_LOG` file (each line starts with one).
fn pids_logged(log: &Path) -> BTreeSet<String> {
    let traffic = std::fs::read_to_string(log).expect("traffic was logged");
    traffic
        .lines()
        .filter_map(|line| line.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// Everything both streams got, for assertion messages.
fn shown(ran: &Ran) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        ran.code, ran.stdout, ran.stderr
    )
}

const ESC: char = '\u{1b}';

/// The bold green `PASS ` tag: what a colored human report starts a passing spec with.
const COLORED_PASS: &str = "\u{1b}[1m\u{1b}[32mPASS \u{1b}[0m";

/// A terminal's line discipline turns `\n` into `\r\n`; a stream read from a pipe has none.
fn without_crlf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// What a progress bar leaves in a stream: a `\r` that redraws a line, a line clear, and
/// indicatif's spinner (braille) and bar characters. Empty when there is none.
pub(crate) fn progress_marks(text: &str) -> Vec<String> {
    let text = without_crlf(text);
    let mut marks = Vec::new();
    if text.contains('\r') {
        marks.push("a carriage return".to_owned());
    }
    if text.contains("\u{1b}[2K") {
        marks.push("a line clear".to_owned());
    }
    marks.extend(
        text.chars()
            .filter(|c| ('\u{2800}'..='\u{28ff}').contains(c) || ['░', '█'].contains(c))
            .take(1)
            .map(|c| format!("the character {c}")),
    );
    marks
}

/// Pseudo-terminals, for the promises that depend on a stream being a terminal.
pub(crate) mod terminal {
    use super::*;

    /// Opens a pseudo-terminal: the child writes to the terminal side, the test reads the
    /// screen side. 100 columns, so a progress bar has room to draw.
    fn open() -> (File, OwnedFd) {
        let mut screen = -1;
        let mut terminal = -1;
        let size = libc::winsize {
            ws_row: 24,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors into the integers it is given; the name and
        // terminal settings may be null, the size is read only.
        let status = unsafe {
            libc::openpty(
                &mut screen,
                &mut terminal,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(status, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and belong to nobody else.
        unsafe { (File::from_raw_fd(screen), OwnedFd::from_raw_fd(terminal)) }
    }

    /// Reads a screen until every copy of its terminal side is closed.
    fn read_screen(mut screen: File) -> JoinHandle<String> {
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buffer = [0u8; 8192];
            loop {
                match screen.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => seen.extend_from_slice(&buffer[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // Linux says EIO once the terminal side is closed: the end of the output.
                    Err(_) => break,
                }
            }
            String::from_utf8_lossy(&seen).into_owned()
        })
    }

    /// Runs `command` with stdout and/or stderr each on a terminal of its own, the other
    /// streams piped, and returns what each stream got.
    pub(crate) fn run_on_terminals(
        mut command: Command,
        stdout_tty: bool,
        stderr_tty: bool,
    ) -> Ran {
        let attach = |tty: bool| {
            if tty {
                let (screen, terminal) = open();
                (Stdio::from(terminal), Some(screen))
            } else {
                (Stdio::piped(), None)
            }
        };
        let (stdout, stdout_screen) = attach(stdout_tty);
        let (stderr, stderr_screen) = attach(stderr_tty);
        command.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
        let child = command.spawn().expect("dlqspec starts");
        // The command holds this process's copies of the terminal sides: closing them lets
        // the readers see the end once the child is gone.
        drop(command);
        let stdout_reader = stdout_screen.map(read_screen);
        let stderr_reader = stderr_screen.map(read_screen);
        let piped = ran(child.wait_with_output().expect("dlqspec runs"));
        let seen = |reader: Option<JoinHandle<String>>, piped: String| {
            reader.map_or(piped, |r| r.join().expect("screen reader"))
        };
        let timed_stdout = seen(stdout_reader, piped.timed_stdout);
        Ran {
            code: piped.code,
            stdout: crate::common::untimed(&timed_stdout),
            timed_stdout,
            stderr: seen(stderr_reader, piped.stderr),
        }
    }
}

/// Environment variables a command runs with: (name, value).
type Environment<'a> = &'a [(&'a str, &'a str)];

/// `dlqspec` with no color setting from the environment but `overrides`.
fn with_color_environment(overrides: Environment) -> Command {
    let mut command = dlqspec();
    for name in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "CI"] {
        command.env_remove(name);
    }
    command.envs(overrides.iter().copied());
    command
}

#[test]
fn color_in_a_piped_run_follows_the_flag_no_color_and_clicolor_force() {
    // (--color, environment, colored?)
    let cases: [(&str, Environment, bool); 9] = [
        ("auto", &[], false),
        ("auto", &[("TERM", "xterm-256color")], false),
        ("auto", &[("CLICOLOR_FORCE", "1")], true),
        ("auto", &[("NO_COLOR", "1")], false),
        // NO_COLOR outranks CLICOLOR_FORCE (anstream's order; the docs name no order).
        ("auto", &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")], false),
        ("always", &[], true),
        ("always", &[("NO_COLOR", "1"), ("TERM", "dumb")], true),
        ("never", &[("CLICOLOR_FORCE", "1")], false),
        ("never", &[], false),
    ];
    for (when, environment, colored) in cases {
        let output = with_color_environment(environment)
            .args(["--color", when, "run", PASSING_SPEC])
            .output()
            .expect("dlqspec runs");
        let ran = ran(output);
        let case = format!("--color {when} with {environment:?}");
        assert_eq!(ran.code, 0, "{case}\n{}", shown(&ran));
        if colored {
            assert!(
                ran.stdout
                    .starts_with(&format!("{COLORED_PASS} {PASSING_SPEC}  ")),
                "{case}: expected colors\n{}",
                shown(&ran)
            );
        } else {
            assert!(
                !ran.stdout.contains(ESC) && !ran.stderr.contains(ESC),
                "{case}: expected no escape codes\n{}",
                shown(&ran)
            );
            assert!(
                ran.stdout.starts_with(&format!("PASS  {PASSING_SPEC}  ")),
                "{case}\n{}",
                shown(&ran)
            );
        }
    }
}

#[test]
fn color_auto_on_a_terminal_is_off_for_term_dumb_and_no_color() {
    // (environment, colored?) with stdout a terminal. CI stays unset: anstream treats a CI
    // job's terminal as colorful whatever TERM says.
    let cases: [(Environment, bool); 3] = [
        (&[("TERM", "xterm-256color")], true),
        (&[("TERM", "dumb")], false),
        (&[("TERM", "xterm-256color"), ("NO_COLOR", "1")], false),
    ];
    for (environment, colored) in cases {
        let mut command = with_color_environment(environment);
        command.args(["--color", "auto", "run", PASSING_SPEC]);
        let ran = terminal::run_on_terminals(command, true, false);
        let case = format!("a terminal with {environment:?}");
        assert_eq!(ran.code, 0, "{case}\n{}", shown(&ran));
        assert_eq!(
            ran.stdout
                .starts_with(&format!("{COLORED_PASS} {PASSING_SPEC}  ")),
            colored,
            "{case}\n{}",
            shown(&ran)
        );
        assert_eq!(ran.stdout.contains(ESC), colored, "{case}\n{}", shown(&ran));
    }
}

/// A run that lasts well past the progress bar's delay (300 ms, docs/reports.md): the
/// implementation waits a second before its `hello`, then skips the one spec.
fn slow_run(dir: &Path) -> Command {
    let program = write(dir, "protocol_program.py", PROTOCOL_PROGRAM);
    let spec = write(dir, "one-success.yaml", ONE_SUCCESS);
    let mut command = external();
    command
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env("TERM", "xterm-256color")
        .args(["run", path_arg(&spec), "--impl"])
        .arg(protocol_impl(&program, "1", "skipped", "a slow start"));
    command
}

/// A slow run's exit: its one spec errored, its contract announced and then not provided.
const SLOW_RUN_CODE: i32 = 1;

#[test]
fn no_progress_bar_in_a_piped_run() {
    let dir = temp_dir();
    let ran = ran(slow_run(dir.path()).output().expect("dlqspec runs"));
    assert_eq!(ran.code, SLOW_RUN_CODE, "{}", shown(&ran));
    assert!(ran.stdout.starts_with("ERROR "), "{}", shown(&ran));
    assert_eq!(progress_marks(&ran.stdout), Vec::<String>::new());
    assert_eq!(progress_marks(&ran.stderr), Vec::<String>::new());
    assert_eq!(ran.stderr, "");
}

#[test]
fn the_progress_bar_shows_on_a_terminal_but_never_in_ci_nor_when_stdout_is_piped() {
    let dir = temp_dir();
    // The control: both streams are terminals and no CI variable is set, so the bar shows
    // on stderr. Without it the other cases would pass for any reason at all.
    let ran = terminal::run_on_terminals(slow_run(dir.path()), true, true);
    assert_eq!(ran.code, SLOW_RUN_CODE, "{}", shown(&ran));
    assert!(
        !progress_marks(&ran.stderr).is_empty(),
        "a terminal shows the bar\n{}",
        shown(&ran)
    );
    assert_eq!(progress_marks(&ran.stdout), Vec::<String>::new());

    for ci in [
        &[("CI", "true")][..],
        &[("CI", "true"), ("GITHUB_ACTIONS", "true")],
    ] {
        let mut command = slow_run(dir.path());
        command.envs(ci.iter().copied());
        let ran = terminal::run_on_terminals(command, true, true);
        assert_eq!(ran.code, SLOW_RUN_CODE, "{ci:?}\n{}", shown(&ran));
        assert_eq!(progress_marks(&ran.stderr), Vec::<String>::new(), "{ci:?}");
        assert_eq!(progress_marks(&ran.stdout), Vec::<String>::new(), "{ci:?}");
    }

    // `dlqspec run | less` from a terminal: stdout is piped, stderr still a terminal.
    let ran = terminal::run_on_terminals(slow_run(dir.path()), false, true);
    assert_eq!(ran.code, SLOW_RUN_CODE, "{}", shown(&ran));
    assert_eq!(
        progress_marks(&ran.stderr),
        Vec::<String>::new(),
        "{}",
        shown(&ran)
    );
    assert_eq!(progress_marks(&ran.stdout), Vec::<String>::new());
}

#[test]
fn github_actions_annotations_go_to_stdout_or_to_stderr_beside_a_report() {
    let dir = temp_dir();
    let spec = write(dir.path(), "expects-a-retry.yaml", EXPECTS_A_RETRY);
    let spec = path_arg(&spec);
    // The built-in is the reference: no departure explains the difference, so the
    // annotation carries the diff under the cause, the rule and the spec.
    let annotation = format!(
        "::error file={spec},line=9,col=14,title=mismatch%3A 1 failing spec::\
         the spec's expectation differs from what the built-in reference does (at process)%0A\
         first spec: {spec}:9:14 ({EXPECTS_A_RETRY_NAME})%0A\
         there: the spec's expectation differs from what the built-in reference does at step 1 (process): \
         the reference did what the +++ lines show. If the reference is right, \
         `dlqspec bless {spec}` writes that into the spec; \
         `dlqspec explain {spec}` tells the reference's run step by step%0A\
         first difference at step 1 (process) ({spec}:9:14)%0A\
         the step: process: retry (it received a, delivery 1)%0A--- expected%0A+++ actual%0A\
         @@ -1,1 +1,1 @@%0A-process: retry%0A+process: dead"
    );
    let in_actions = |args: &[&str]| {
        ran(dlqspec()
            .env("GITHUB_ACTIONS", "true")
            .args(["run", spec, PASSING_SPEC])
            .args(args)
            .output()
            .expect("dlqspec runs"))
    };

    // The human report: the annotation is a line of stdout, for the failed spec only.
    let ran = in_actions(&[]);
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    let annotations: Vec<&str> = ran.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations, [annotation.as_str()], "{}", shown(&ran));
    assert_eq!(ran.stderr, "");

    // The same run with --output: stdout carries the human report, so the annotation too.
    let report = dir.path().join("report.json");
    let ran = in_actions(&["--format", "json", "--output", path_arg(&report)]);
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    assert!(
        ran.stdout.lines().any(|l| l == annotation),
        "{}",
        shown(&ran)
    );
    assert_eq!(ran.stderr, "");

    // A machine-readable report on stdout: the annotation moves to stderr.
    for format in ["json", "junit", "tap"] {
        let ran = in_actions(&["--format", format]);
        assert_eq!(ran.code, 1, "{format}\n{}", shown(&ran));
        assert_eq!(ran.stderr, format!("{annotation}\n"), "{format}");
        assert!(!ran.stdout.contains("::error"), "{format}\n{}", ran.stdout);
        if format == "json" {
            for line in ran.stdout.lines() {
                serde_json::from_str::<Value>(line)
                    .unwrap_or_else(|e| panic!("stdout stays JSON lines ({e}): {line}"));
            }
        }
    }

    // A broken spec is annotated at the broken spot, with its message.
    let broken = write(dir.path(), "nth-zero.yaml", &nth_zero_spec());
    let broken = path_arg(&broken);
    let ran = crate::common::ran(
        dlqspec()
            .env("GITHUB_ACTIONS", "true")
            .args(["run", broken])
            .output()
            .expect("dlqspec runs"),
    );
    assert_eq!(ran.code, 2, "{}", shown(&ran));
    assert!(
        ran.stdout.lines().any(|l| l
            == format!(
                "::error file={broken},line=8,col=49,title=spec error%3A 1 failing spec::\
                 spec error: `nth` counts from 1%0Afirst spec: {broken}:8:49"
            )),
        "{}",
        shown(&ran)
    );

    // Outside GitHub Actions there are none.
    let ran = run(&["run", spec, "--format", "json"]);
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    assert!(
        !ran.stdout.contains("::error") && !ran.stderr.contains("::error"),
        "{}",
        shown(&ran)
    );
}

#[test]
fn rules_exits_1_when_a_rule_is_uncovered_and_0_on_the_bundled_specs() {
    let ran = run(&["rules", "specs"]);
    assert_eq!(ran.code, 0, "{}", shown(&ran));
    assert!(!ran.stdout.contains("NOT COVERED"), "{}", ran.stdout);
    assert!(
        ran.stdout.ends_with("\nevery rule is covered\n"),
        "{}",
        ran.stdout
    );

    let dir = temp_dir();
    std::fs::copy(
        crate::common::root().join(PASSING_SPEC),
        dir.path().join("only.yaml"),
    )
    .expect("copy a spec");
    let ran = run(&["rules", path_arg(dir.path())]);
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    let covered_by_it = format!(
        "  dlq-consumer/permanent  1 spec\n      {}\n      {}/only.yaml\n",
        "A PermanentError is dead-lettered at once (reason \"permanent\"), whatever budget is left.",
        path_arg(dir.path())
    );
    assert!(ran.stdout.contains(&covered_by_it), "{}", ran.stdout);
    assert!(
        ran.stdout
            .contains("  dlq-consumer/empty-queue  NOT COVERED\n"),
        "{}",
        ran.stdout
    );
    let uncovered = ran.stdout.matches("  NOT COVERED\n").count();
    assert!(uncovered > 0, "{}", ran.stdout);
    assert!(
        ran.stdout
            .ends_with(&format!("\n{uncovered} rule(s) covered by no spec\n")),
        "{}",
        ran.stdout
    );
}

/// A spec whose fault counts from 0; the `0` is at line 8, column 49.
fn nth_zero_spec() -> String {
    "\
contract: dlq-consumer
name: a fault on the 0th ack
messages:
  - {id: a, body: order-1}
handler:
  a: [ok]
steps:
  - fault: {crash: after, call: queue.ack, nth: 0}
  - process: crash
"
    .to_owned()
}

/// The report of a spec error: the tag, the message, `path:line:col`, the line and a caret.
fn spec_error_block(path: &str, message: &str, line: usize, column: usize, text: &str) -> String {
    let gutter = " ".repeat(line.to_string().len());
    let caret = format!("{}^", " ".repeat(column - 1));
    format!(
        "SPEC  {path}\n      error: {message}\n      {gutter}--> {path}:{line}:{column}\n      {gutter} |\n      {line} | {text}\n      {gutter} | {caret}\n"
    )
}

#[test]
fn an_empty_name_and_nth_0_are_spec_errors_pointing_at_the_value() {
    let dir = temp_dir();
    let name_spec =
        |name: &str| format!("contract: dlq-consumer\n{name}\nsteps:\n  - process: none\n");
    let cases = [
        (
            "empty-name.yaml",
            name_spec("name: \"\""),
            "`name` is empty",
            (2, 7),
            "name: \"\"",
        ),
        (
            "blank-name.yaml",
            name_spec("name: \"   \""),
            "`name` is empty",
            (2, 7),
            "name: \"   \"",
        ),
        (
            "no-name-value.yaml",
            name_spec("name:"),
            "expected text, found nothing (empty text is written \"\")",
            (2, 5),
            "name:",
        ),
        (
            "nth-zero.yaml",
            nth_zero_spec(),
            "`nth` counts from 1",
            (8, 49),
            "  - fault: {crash: after, call: queue.ack, nth: 0}",
        ),
    ];
    for (file, text, message, (line, column), source_line) in cases {
        let path = write(dir.path(), file, &text);
        let path = path_arg(&path);
        let ran = run(&["run", path]);
        assert_eq!(ran.code, 2, "{file}\n{}", shown(&ran));
        assert_eq!(
            ran.stdout,
            format!(
                "{}\nfailed: 1 spec error\n0 passed, 1 failed\n",
                spec_error_block(path, message, line, column, source_line)
            ),
            "{file}"
        );
    }
}

#[test]
fn explain_and_lint_exit_2_on_a_broken_spec_with_the_spec_error() {
    let dir = temp_dir();
    let path = write(dir.path(), "nth-zero.yaml", &nth_zero_spec());
    let path = path_arg(&path);
    let error = format!(
        "error: `nth` counts from 1\n --> {path}:8:49\n  |\n8 |   - fault: {{crash: after, call: queue.ack, nth: 0}}\n  |                                                 ^\n"
    );

    let ran = run(&["explain", path]);
    assert_eq!(ran.code, 2, "{}", shown(&ran));
    assert_eq!(ran.stdout, error);

    let ran = run(&["lint", path]);
    assert_eq!(ran.code, 2, "{}", shown(&ran));
    assert!(ran.stdout.starts_with(&error), "{}", ran.stdout);
    assert!(
        ran.stdout
            .ends_with("\n0 smells and 1 spec error in 1 spec\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn an_external_consumer_calling_the_handler_too_often_or_misusing_the_queue_gets_a_note() {
    let dir = temp_dir();
    let solution = write(dir.path(), "solution.py", RETRIES_PERMANENT_AND_ACKS_TWICE);
    let twice = write(dir.path(), "a-once.yaml", ONE_PERMANENT_OUTCOME);
    let acked = write(dir.path(), "b-acked.yaml", ONE_SUCCESS);
    let (twice, acked) = (path_arg(&twice), path_arg(&acked));
    let implementation = format!("python:{}", path_arg(&solution));
    let ran = ran(external()
        .args(["run", twice, acked, "--impl", &implementation])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    let too_often = format!(
        "\
FAIL  {twice}  a permanent error reaches the handler once
      rule broken: dlq-consumer/permanent
      cause: after handler(a) -> PermanentError, the reference puts a in the DLQ; yours retried a
      a known mistake: has no PermanentError branch: a permanent failure is retried like a transient one
      first difference at step 2 (process) ({twice}:9:5)
      the step: process: any (it received a, delivery 2)
      message `a` reached the handler a 2nd time, but the spec scripts 1 outcome: the implementation called the handler more often than the rules allow
      --- expected
      +++ actual
      @@ -1,2 +1,2 @@
       handler_calls:
      -  a: 1
      +  a: 2
"
    );
    let misused = format!(
        "\
FAIL  {acked}  a handled message is acked once
      rule broken: dlq-consumer/no-misuse
      cause: after queue.ack(a), the reference returns ok; yours then misused the world: queue.ack(a): a is not in flight
      first difference at step 1 (process) ({acked}:8:5)
      the step: process: ok (it received a, delivery 1)
      the consumer misused the queue, the DLQ or the handler
      --- expected
      +++ actual
      @@ -1,1 +1,1 @@
      -misuse: []
      +misuse: [\"queue.ack(a): a is not in flight\"]
"
    );
    assert!(ran.stdout.contains(&too_often), "{}", shown(&ran));
    assert!(ran.stdout.contains(&misused), "{}", shown(&ran));
    assert!(
        ran.stdout
            .ends_with("\nfailed: 2 mismatched\n0 passed, 2 failed\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_constructor_that_raises_is_a_mismatch_at_constructing_the_consumer() {
    let dir = temp_dir();
    let solution = write(dir.path(), "solution.py", CONSTRUCTOR_RAISES);
    let spec = write(dir.path(), "one-success.yaml", ONE_SUCCESS);
    let spec = path_arg(&spec);
    let implementation = format!("python:{}", path_arg(&solution));
    let ran = ran(external()
        .args(["run", spec, "--impl", &implementation])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    assert_eq!(
        ran.stdout,
        format!(
            "\
FAIL  {spec}  a handled message is acked once
      cause: making a DLQConsumer, yours raised ValueError: no queue today; the reference makes one
      first difference at constructing DLQConsumer ({spec}:1:1)
      the constructor raised
      --- expected
      +++ actual
      @@ -1,1 +1,1 @@
      -constructed: true
      +raised: \"ValueError: no queue today\"

failed: 1 mismatched
0 passed, 1 failed
"
        )
    );
}

#[test]
fn any_other_exception_escaping_process_one_is_shown_as_raised_class_message() {
    let dir = temp_dir();
    let solution = write(dir.path(), "solution.py", READS_A_MISSING_FIELD);
    let spec = write(dir.path(), "one-success.yaml", ONE_SUCCESS);
    let spec = path_arg(&spec);
    let implementation = format!("python:{}", path_arg(&solution));
    let ran = ran(external()
        .args(["run", spec, "--impl", &implementation])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    assert_eq!(
        ran.stdout,
        format!(
            "\
FAIL  {spec}  a handled message is acked once
      rule broken: dlq-consumer/poison
      cause: after receiving a, the reference calls the handler with a; yours raised KeyError: 'attempts' without calling the handler
      first difference at step 1 (process) ({spec}:8:14)
      the step: process: ok (it received a, delivery 1)
      --- expected
      +++ actual
      @@ -1,1 +1,1 @@
      -process: ok
      +process: \"raised KeyError: 'attempts'\"
      raised KeyError: 'attempts'
        at {solution}:10 in process_one
          return msg[\"attempts\"]

failed: 1 mismatched
0 passed, 1 failed
",
            solution = path_arg(&solution)
        )
    );
}

#[test]
fn known_failures_are_skipped_in_junit_and_todo_in_tap_and_a_stale_one_fails() {
    let dir = temp_dir();
    let failing = write(dir.path(), "expects-a-retry.yaml", EXPECTS_A_RETRY);
    let failing = path_arg(&failing);
    let list = write(
        dir.path(),
        "known-failures.yaml",
        &format!(
            "- spec: {failing}\n  reason: retries are wished for\n- spec: {PASSING_SPEC}\n  reason: fixed long ago\n"
        ),
    );
    let list = path_arg(&list);
    let listed_at = format!("known failure, listed at {list}:1:3: retries are wished for");
    let happened = format!("first difference at step 1 (process) ({failing}:9:14)");
    let stale = format!("listed as a known failure ({list}:3:3) but passed: remove it from {list}");
    let known = |specs: &[&str], format: &str| {
        ran(dlqspec()
            .arg("run")
            .args(specs)
            .args(["--known-failures", list, "--format", format])
            .output()
            .expect("dlqspec runs"))
    };

    // An expected failure alone does not fail the run.
    for format in ["junit", "tap"] {
        let ran = known(&[failing], format);
        assert_eq!(ran.code, 0, "{format}\n{}", shown(&ran));
    }

    let ran = known(&[failing, PASSING_SPEC], "junit");
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    let xml = roxmltree::Document::parse(&ran.stdout).expect("JUnit XML");
    let suites = xml.root_element();
    assert_eq!(suites.attribute("skipped"), Some("1"), "{}", ran.stdout);
    assert_eq!(suites.attribute("failures"), Some("1"), "{}", ran.stdout);
    assert_eq!(suites.attribute("errors"), Some("0"), "{}", ran.stdout);
    let testcase = |name: &str| {
        xml.descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("a testcase {name}\n{}", ran.stdout))
    };
    let outcome = |name: &str| {
        let case = testcase(name);
        let children: Vec<_> = case
            .children()
            .filter(|n| n.is_element() && !n.has_tag_name("properties"))
            .collect();
        assert_eq!(children.len(), 1, "{}", ran.stdout);
        children[0]
    };
    let skipped = outcome(failing);
    assert!(skipped.has_tag_name("skipped"), "{}", ran.stdout);
    // The report writes the two lines as they are; XML reads a newline in an attribute as a
    // space.
    assert_eq!(
        skipped.attribute("message"),
        Some(format!("{listed_at} {happened}").as_str())
    );
    let failure = outcome(PASSING_SPEC);
    assert!(failure.has_tag_name("failure"), "{}", ran.stdout);
    assert_eq!(failure.attribute("type"), Some("stale_known_failure"));
    assert_eq!(failure.attribute("message"), Some(stale.as_str()));

    let ran = known(&[failing, PASSING_SPEC], "tap");
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines[..2], ["TAP version 13", "1..2"], "{}", ran.stdout);
    assert_eq!(
        lines[2],
        format!("not ok 1 - {failing}: {EXPECTS_A_RETRY_NAME} # TODO retries are wished for")
    );
    assert_eq!(lines[3..5], ["  ---", "  outcome: \"expected_failure\""]);
    assert_eq!(lines[5], format!("  listed_at: \"{list}:1:3\""));
    let second = lines
        .iter()
        .position(|l| l.starts_with("not ok 2 - "))
        .unwrap_or_else(|| panic!("a second test line\n{}", ran.stdout));
    assert_eq!(
        lines[second..second + 4],
        [
            format!(
                "not ok 2 - {PASSING_SPEC}: a PermanentError is dead-lettered at once, with budget left"
            ),
            "  ---".to_owned(),
            "  outcome: \"stale\"".to_owned(),
            format!("  message: \"{stale}\""),
        ],
        "a stale listing is a plain `not ok`, no TODO\n{}",
        ran.stdout
    );
    assert_eq!(lines.last(), Some(&"# 0 passed, 1 failed, 0 skipped"));
}

#[test]
fn a_known_failure_listed_by_rule_expects_its_specs_and_one_with_both_keys_is_an_error() {
    let dir = temp_dir();
    let failing = write(dir.path(), "expects-a-retry.yaml", EXPECTS_A_RETRY);
    let failing = path_arg(&failing);
    let list = write(
        dir.path(),
        "by-rule.yaml",
        "- rule: dlq-consumer/permanent\n  reason: permanent errors are retried\n",
    );
    let list = path_arg(&list);

    // One covering spec fails: it is expected, the covering spec that passes just passes.
    let ran = run(&["run", failing, PASSING_SPEC, "--known-failures", list]);
    assert_eq!(ran.code, 0, "{}", shown(&ran));
    assert!(
        ran.stdout.starts_with(&format!(
            "XFAIL {failing}  {EXPECTS_A_RETRY_NAME}\n      known failure, listed at {list}:1:3: permanent errors are retried\n"
        )),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains(&format!("\nPASS  {PASSING_SPEC}  ")),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .ends_with("\n1 known failure, as expected\n1 passed, 0 failed\n"),
        "{}",
        ran.stdout
    );

    // Every covering spec passes: the last of them is stale, and the run fails.
    let ran = run(&["run", PASSING_SPEC, "--known-failures", list]);
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    assert!(
        ran.stdout.starts_with(&format!(
            "STALE {PASSING_SPEC}  a PermanentError is dead-lettered at once, with budget left\n      rule `dlq-consumer/permanent` is listed as a known failure ({list}:1:3) but every spec covering it passed: remove it from {list}\n"
        )),
        "{}",
        ran.stdout
    );

    // An entry naming both a spec and a rule is refused where it is written, before any run.
    let both = write(
        dir.path(),
        "both.yaml",
        &format!("- spec: {failing}\n  rule: dlq-consumer/permanent\n"),
    );
    let both = path_arg(&both);
    let ran = run(&["run", failing, "--known-failures", both]);
    assert_eq!(ran.code, 2, "{}", shown(&ran));
    assert_eq!(ran.stdout, "");
    assert_eq!(
        ran.stderr,
        format!(
            "error: an entry names either `spec: PATH` or `rule: RULE-ID` (and optionally `reason:`)\n --> {both}:1:3\n  |\n1 | - spec: {failing}\n  |   ^\n"
        )
    );
}

#[test]
fn an_external_implementation_runs_one_job_by_default() {
    // On a machine with one core the default would be 1 anyway; on any other, a default of
    // the core count would start one process per job (see `--jobs 2` in external.rs).
    let dir = temp_dir();
    let log = dir.path().join("traffic.log");
    let ran = ran(external()
        .args(["run", "--impl"])
        .arg("python:examples/python/solution.py")
        .args(crate::common::suite_of("specs/dlq-consumer"))
        .env("DLQSPEC_PROTOCOL_LOG", &log)
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 0, "{}", shown(&ran));
    let pids = pids_logged(&log);
    assert_eq!(pids.len(), 1, "one process: {pids:?}");
}

#[test]
fn an_implementation_answering_errored_to_new_errors_the_spec_and_stays_up() {
    let dir = temp_dir();
    let program = write(dir.path(), "protocol_program.py", PROTOCOL_PROGRAM);
    let first = write(dir.path(), "a.yaml", ONE_SUCCESS);
    let second = write(dir.path(), "b.yaml", ONE_PERMANENT_OUTCOME);
    let (first, second) = (path_arg(&first), path_arg(&second));
    let log = dir.path().join("traffic.log");
    let ran = ran(external()
        .args(["run", first, second, "--impl"])
        .arg(protocol_impl(
            &program,
            "0",
            "errored",
            "the consumer is on strike",
        ))
        .env("DLQSPEC_PROTOCOL_LOG", &log)
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    let cause = "implementation error (errored): the implementation could not serve `new dlq-consumer`: the consumer is on strike";
    let reason = format!("      {cause}\n");
    assert_eq!(
        ran.stdout,
        format!(
            "ERROR {first}  a handled message is acked once\n{reason}\
             ERROR {second}  a permanent error reaches the handler once\n{reason}\
             \nfailures by cause:\n  2  {cause}  (first: {first})\n\
             \nfailed: 2 errored\n0 passed, 2 failed\n"
        )
    );
    assert_eq!(pids_logged(&log).len(), 1, "the process stays up");
}

#[test]
fn hello_gets_a_startup_grace_beyond_the_timeout() {
    // The program answers `hello` after 3 s, beyond `--timeout 1` and well within the
    // documented grace of at least 10 s for `hello`; it then answers `new` with `skipped`. (The timeout is
    // not shorter so that answering `new` on a busy machine stays well inside it.)
    let dir = temp_dir();
    let program = write(dir.path(), "protocol_program.py", PROTOCOL_PROGRAM);
    let spec = write(dir.path(), "one-success.yaml", ONE_SUCCESS);
    let spec = path_arg(&spec);
    let ran = ran(external()
        .args(["run", spec, "--timeout", "1", "--impl"])
        .arg(protocol_impl(&program, "3", "skipped", "said hello late"))
        .output()
        .expect("dlqspec runs"));
    // The late hello was taken: what fails is its `new`, answered `skipped` for a contract
    // the hello announced.
    assert_eq!(ran.code, 1, "{}", shown(&ran));
    assert!(
        ran.stdout.starts_with(&format!(
            "ERROR {spec}  a handled message is acked once\n      implementation error (errored): the implementation announced `dlq-consumer` in its hello, then answered `new dlq-consumer` with skipped \"said hello late\""
        )),
        "{}",
        shown(&ran)
    );
    assert!(
        ran.stdout.ends_with("0 passed, 1 failed\n"),
        "{}",
        shown(&ran)
    );
}

#[test]
fn completions_print_a_script_for_each_shell() {
    // A line each script has only if it was generated for dlqspec.
    let cases = [
        ("zsh", "#compdef dlqspec"),
        ("fish", "complete -c dlqspec "),
        (
            "powershell",
            "Register-ArgumentCompleter -Native -CommandName 'dlqspec'",
        ),
        ("elvish", "set edit:completion:arg-completer[dlqspec]"),
    ];
    for (shell, mark) in cases {
        let ran = run(&["completions", shell]);
        assert_eq!(ran.code, 0, "{shell}\n{}", ran.stderr);
        assert!(ran.stdout.contains(mark), "{shell}\n{}", ran.stdout);
        // Every subcommand and the options of `run` are there to complete.
        for word in ["explain", "known-failures", "partition"] {
            assert!(ran.stdout.contains(word), "{shell}: {word}");
        }
        assert_eq!(ran.stderr, "");
    }
}
