//! Hardening: hostile and careless inputs, one test per fault the robustness campaign found
//! (issue 12): what is printed, which files are read and written, and which processes remain.

use std::path::Path;
use std::process::Command;

use crate::common::{Ran, dlqspec, path_arg, ran};

/// `dlqspec` with the in-tree shims and no protocol log.
fn command() -> Command {
    let mut command = dlqspec();
    command
        .env_remove("DLQSPEC_SHIMS")
        .env_remove("DLQSPEC_PROTOCOL_LOG");
    command
}

fn run_with(args: &[&str], github: bool) -> Ran {
    let mut command = command();
    if github {
        command.env("GITHUB_ACTIONS", "true");
    }
    ran(command.args(args).output().expect("dlqspec runs"))
}

/// A spec whose name, message ids, bodies and handler messages carry terminal escapes and
/// workflow commands (YAML escapes: `\e` is ESC, `\a` BEL).
const EVIL: &str = r#"contract: dlq-consumer
name: "evil \e[2J\a name\n::error::name-injected ##[error]x"
description: "set the title \e]0;pwned\a\n::add-mask::description-injected"
rules: [dlq-consumer/permanent]
messages: [{id: "a\e[31m", body: "b\u009b\u202e"}]
handler: {"a\e[31m": [permanent: "boom \e[2J\n::add-mask::handler-injected"]}
steps:
  - process: ok
expect:
  dlq: []
"#;

/// EVIL, as the built-in implementation passes it: against another implementation a spec is
/// first run on the reference, so only a spec the reference passes reaches the hostile one.
fn evil_passing() -> String {
    EVIL.replace(
        "  - process: ok\nexpect:\n  dlq: []\n",
        "  - process: dead\n",
    )
}

/// A broken spec whose error message quotes an injected value.
const BROKEN: &str = "contract: dlq-consumer\nname: broken\nsteps:\n  - process: \"ok\\n::error::value-injected\\e[2J\"\n";

/// A folder of hostile specs: mismatching, broken, raw escape bytes in a line, a file name
/// with a newline and a command in it.
fn hostile_suite() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("evil.yaml"), EVIL).expect("write");
    std::fs::write(dir.path().join("evil-passing.yaml"), evil_passing()).expect("write");
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).expect("write");
    std::fs::write(
        dir.path().join("raw.yaml"),
        "contract: dlq-consumer\nname: raw\x1b[2J\x07 bytes\nsteps: []\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("named\n::error::file-injected.yaml"),
        "contract: dlq-consumer\nname: a file name with a newline\nrules: [dlq-consumer/empty-queue]\nsteps:\n  - process: none\n",
    )
    .expect("write");
    dir
}

const HOSTILE_IMPL: &str = "cmd:python3 tests/impls/hostile_output.py";

/// Characters a terminal must never receive raw from a spec or an implementation.
fn raw_controls(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| {
            line.chars().any(|c| {
                (c.is_control() && c != '\t')
                    || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            })
        })
        .map(|line| format!("{line:?}"))
        .collect()
}

/// Lines GitHub Actions would run as workflow commands (past leading white space `::`, or
/// `##[` anywhere), other than dlqspec's own `::error file=` annotations (a line that is a
/// command already is not read for the older `##[` syntax).
fn injected_commands(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|line| {
            let body = line.trim_start();
            if body.starts_with("::error file=") {
                return false;
            }
            body.starts_with("::") || line.contains("##[")
        })
        .collect()
}

/// Every command that prints what specs or implementations say, over the hostile suite.
fn hostile_runs(dir: &Path, github: bool) -> Vec<(String, Ran)> {
    let folder = path_arg(dir);
    let evil_file = dir.join("evil.yaml");
    let evil = path_arg(&evil_file);
    let passing_file = dir.join("evil-passing.yaml");
    let passing = path_arg(&passing_file);
    let mut runs: Vec<Vec<&str>> = vec![
        vec!["run", folder],
        vec!["run", folder, "--format", "json"],
        vec!["run", folder, "--format", "tap"],
        vec!["run", folder, "--format", "junit"],
        vec!["explain", evil],
        vec!["lint", folder],
        vec!["bless", "--check", folder],
        vec!["rules", folder],
        vec!["matrix", folder, "--impl", HOSTILE_IMPL],
        vec!["run", evil, "--impl", HOSTILE_IMPL],
        vec!["run", passing, "--impl", HOSTILE_IMPL],
        vec!["explain", passing, "--impl", HOSTILE_IMPL],
        vec!["smoke", "--impl", HOSTILE_IMPL],
        vec![
            "explore",
            "--impl",
            HOSTILE_IMPL,
            "--seed",
            "1",
            "--cases",
            "2",
        ],
        vec!["strength", folder, "--explore-cases", "0"],
    ];
    if github {
        runs.push(vec![
            "run",
            folder,
            "--format",
            "tap",
            "--impl",
            HOSTILE_IMPL,
        ]);
        runs.push(vec![
            "run",
            folder,
            "--format",
            "junit",
            "--impl",
            HOSTILE_IMPL,
        ]);
    }
    runs.into_iter()
        .map(|args| (args.join(" "), run_with(&args, github)))
        .collect()
}

#[test]
fn control_characters_from_specs_and_implementations_are_shown_escaped() {
    let dir = hostile_suite();
    for (args, ran) in hostile_runs(dir.path(), false) {
        for (stream, text) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
            let raw = raw_controls(text);
            assert!(
                raw.is_empty(),
                "`dlqspec {args}` printed raw control characters on {stream}:\n{}",
                raw.join("\n")
            );
        }
    }
    let shown = run_with(&["run", path_arg(dir.path())], false).stdout;
    for escaped in [
        "evil \\x1b[2J\\x07 name\\n::error::name-injected",
        "2 | name: raw\\x1b[2J\\x07 bytes",
        "named\\n::error::file-injected.yaml",
    ] {
        assert!(shown.contains(escaped), "no {escaped:?} in\n{shown}");
    }
    let errored = run_with(
        &[
            "run",
            "--impl",
            HOSTILE_IMPL,
            path_arg(&dir.path().join("evil-passing.yaml")),
        ],
        false,
    )
    .stdout;
    assert!(
        errored.contains("\\x1b[31mred\\x1b[0m bell\\x07 nul\\x00 csi\\u{9b}2J"),
        "{errored}"
    );
}

#[test]
fn under_github_actions_no_line_of_any_report_is_a_workflow_command() {
    let dir = hostile_suite();
    for (args, ran) in hostile_runs(dir.path(), true) {
        for (stream, text) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
            let injected = injected_commands(text);
            assert!(
                injected.is_empty(),
                "`dlqspec {args}` printed workflow commands on {stream}:\n{}\n\nall of it:\n{text}",
                injected.join("\n")
            );
        }
    }
    // dlqspec's own annotations are still there, one per cause (here one per failed spec),
    // each on one line, the spec's name on one line of its message.
    let ran = run_with(&["run", path_arg(dir.path())], true);
    let annotations: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error file="))
        .collect();
    assert_eq!(annotations.len(), 3, "{}", ran.stdout);
    assert!(
        annotations
            .iter()
            .any(|a| a.contains("(evil \\x1b[2J\\x07 name\\n::error::name-injected")),
        "{annotations:#?}"
    );
}

/// The YAML blocks of a TAP report, without their `---`/`...` markers and indentation.
fn tap_blocks(tap: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in tap.lines() {
        match (line, current.as_mut()) {
            ("  ---", None) => current = Some(String::new()),
            ("  ...", Some(_)) => blocks.extend(current.take()),
            (line, Some(block)) => {
                block.push_str(line.strip_prefix("  ").unwrap_or(line));
                block.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn every_tap_yaml_block_parses_whatever_the_specs_and_implementations_say() {
    let dir = hostile_suite();
    for args in [
        vec!["run", path_arg(dir.path()), "--format", "tap"],
        vec![
            "run",
            path_arg(dir.path()),
            "--format",
            "tap",
            "--impl",
            HOSTILE_IMPL,
        ],
    ] {
        let ran = run_with(&args, true);
        let blocks = tap_blocks(&ran.stdout);
        assert!(blocks.len() >= 3, "{}", ran.stdout);
        for block in blocks {
            let parsed: Result<serde_json::Value, _> = serde_saphyr::from_str(&block);
            assert!(
                parsed.as_ref().is_ok_and(|v| v["outcome"].is_string()),
                "a TAP YAML block does not parse ({parsed:?}):\n{block}"
            );
        }
    }
}

#[test]
fn json_and_junit_keep_hostile_text_as_data() {
    let dir = hostile_suite();
    let ran = run_with(&["run", path_arg(dir.path()), "--format", "json"], false);
    let names: Vec<String> = ran
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .filter_map(|v| v["name"].as_str().map(str::to_owned))
        .collect();
    assert!(
        names.contains(&"evil \u{1b}[2J\u{7} name\n::error::name-injected ##[error]x".to_owned()),
        "{names:?}"
    );
    let ran = run_with(
        &[
            "run",
            path_arg(dir.path()),
            "--format",
            "junit",
            "--impl",
            HOSTILE_IMPL,
        ],
        true,
    );
    let doc = roxmltree::Document::parse(&ran.stdout).expect("the JUnit report parses");
    let bodies: String = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(
        bodies.contains("::add-mask::stderr-injected"),
        "{}",
        ran.stdout
    );
}

#[test]
fn an_offending_line_is_quoted_around_the_column_not_whole() {
    let steps: String = (0..10_000).map(|_| "{process: none}, ").collect();
    let text = format!(
        "contract: dlq-consumer\nname: one long line\nsteps: [{steps}{{proces: ok}}, {steps}]\n"
    );
    let (_dir, path) = crate::common::temp_spec("long.yaml", &text);
    let ran = run_with(&["run", path_arg(&path)], false);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stdout.contains("unknown value `proces`"),
        "{}",
        &ran.stdout[..ran.stdout.len().min(2000)]
    );
    assert!(
        ran.stdout.len() < 4_000,
        "{} bytes of output for a {}-byte line",
        ran.stdout.len(),
        text.len()
    );
    let caret_line = ran
        .stdout
        .lines()
        .find(|l| l.trim_end().ends_with('^'))
        .expect("a caret");
    let quoted = ran
        .stdout
        .lines()
        .find(|l| l.contains("| ..."))
        .expect("the quoted line");
    assert_eq!(
        quoted.find("proces: ok").map(|at| at + 1),
        caret_line.find('^').map(|at| at + 1),
        "the caret points at the typo:\n{quoted}\n{caret_line}"
    );
}

/// A spec that passes on the built-in implementation.
const PASSING: &str = "contract: dlq-consumer\nname: NAME\nrules: [dlq-consumer/empty-queue]\nsteps:\n  - process: none\n";

/// A spec whose expectation is wrong: bless rewrites it.
const BLESSABLE: &str = "contract: dlq-consumer\nname: blessable\nrules: [dlq-consumer/success]\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps:\n  - process: retry\n";

fn passing(name: &str) -> String {
    PASSING.replace("NAME", name)
}

/// Waits for a child with a generous bound: only a hang (the defect) can exceed it; the child
/// is killed then, so that a failing test leaves nothing running.
fn wait_or_kill(mut child: std::process::Child, what: &str) -> std::process::Output {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match child.try_wait().expect("wait") {
            Some(_) => return child.wait_with_output().expect("output"),
            None if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{what} hung");
            }
        }
    }
}

fn spawn(args: &[&str]) -> std::process::Child {
    command()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dlqspec starts")
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_tree_is_never_read_echoed_or_rewritten() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().expect("temp dir");
    // Looks like a spec that bless would rewrite, and holds a secret an error would echo.
    let secret_text = format!("{BLESSABLE}# SECRET-LINE-7d3f\nbroken: [\n");
    let secret = outside.path().join("secret.yaml");
    std::fs::write(&secret, &secret_text).expect("write");
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("ok.yaml"), passing("ok")).expect("write");
    symlink(&secret, dir.path().join("link.yaml")).expect("symlink");
    let folder = path_arg(dir.path());
    let link = dir.path().join("link.yaml");
    for args in [
        vec!["run", folder],
        vec!["run", folder, "--format", "json"],
        vec!["lint", folder],
        vec!["bless", folder],
        vec!["rules", folder],
        vec!["matrix", folder],
        vec!["run", path_arg(&link)],
        vec!["explain", path_arg(&link)],
        vec!["bless", path_arg(&link)],
    ] {
        let ran = run_with(&args, false);
        let all = format!("{}{}", ran.stdout, ran.stderr);
        assert!(
            !all.contains("SECRET-LINE"),
            "`dlqspec {}` echoed the file outside:\n{all}",
            args.join(" ")
        );
        assert!(
            all.contains("link.yaml"),
            "`dlqspec {}` says nothing of the link:\n{all}",
            args.join(" ")
        );
    }
    assert_eq!(
        std::fs::read_to_string(&secret).expect("read"),
        secret_text,
        "bless rewrote the file outside"
    );
    // In a folder, the link is skipped with a warning and the rest passes.
    let ran = run_with(&["run", folder], false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains(&format!(
            "link.yaml: skipped, a symbolic link to {}, outside",
            secret.display()
        )),
        "{}",
        ran.stderr
    );
    // Named directly, it is refused with the reason: a broken spec.
    let ran = run_with(&["run", path_arg(&link)], false);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("outside its folder"), "{}", ran.stdout);
}

#[cfg(unix)]
#[test]
fn dangling_links_loops_and_fifos_do_not_stop_the_other_specs() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir(root.join("sub")).expect("mkdir");
    std::fs::write(root.join("a.yaml"), passing("a")).expect("write");
    std::fs::write(root.join("sub/b.yaml"), passing("b")).expect("write");
    std::fs::write(root.join("c.yaml"), BLESSABLE).expect("write");
    // An editor's lock file, a loop, a link to itself, and a FIFO.
    symlink("someone@host.4242:1700000000", root.join(".#a.yaml")).expect("symlink");
    symlink(root, root.join("sub/loop")).expect("symlink");
    symlink("self.yaml", root.join("self.yaml")).expect("symlink");
    mkfifo(&root.join("fifo.yaml"));
    let folder = path_arg(root);
    let cases: &[(&[&str], i32, &str)] = &[
        (&["run", folder], 1, "2 passed, 1 failed"),
        // --coverage: a temporary folder is no whole contract folder; judged, rules go uncovered.
        (&["lint", folder, "--coverage"], 1, "in 3 specs"),
        (&["bless", "--check", folder], 1, "1 spec would change"),
        (&["rules", folder], 1, "dlq-consumer/empty-queue  2 specs"),
        (&["matrix", folder], 1, "3 specs x 1 implementation in"),
    ];
    for (args, code, says) in cases {
        let child = spawn(args);
        let ran = ran(wait_or_kill(child, &args.join(" ")));
        let shown = format!(
            "`dlqspec {}`:\n{}{}",
            args.join(" "),
            ran.stdout,
            ran.stderr
        );
        assert!(ran.code == *code && ran.stdout.contains(says), "{shown}");
        for skipped in [
            ".#a.yaml: skipped, a symbolic link to someone@host.4242:1700000000, which does not exist",
            "fifo.yaml: skipped, it is a FIFO, not a regular file",
            "loop: skipped, a symbolic link loop back to",
        ] {
            assert!(ran.stderr.contains(skipped), "no {skipped:?} in {shown}");
        }
    }
    let ran = run_with(&["bless", folder], false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        std::fs::read_to_string(root.join("c.yaml"))
            .expect("read")
            .contains("process: ok")
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_named_as_a_spec_is_refused_at_once() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("fifo.yaml");
    mkfifo(&fifo);
    let zero = dir.path().join("zero.yaml");
    symlink("/dev/zero", &zero).expect("symlink");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["explain", path_arg(&fifo)],
            "it is a FIFO, not a regular file",
        ),
        (
            vec!["run", path_arg(&fifo)],
            "it is a FIFO, not a regular file",
        ),
        (
            vec!["explain", path_arg(&zero)],
            "a symbolic link to /dev/zero, outside its folder",
        ),
        (
            vec!["run", "/dev/zero"],
            "it is a device, not a regular file",
        ),
        (
            vec!["bless", "/dev/zero"],
            "it is a device, not a regular file",
        ),
        (
            vec![
                "run",
                "--known-failures",
                path_arg(&fifo),
                "specs/dlq-consumer/poison-cycle.yaml",
            ],
            "it is not a regular file",
        ),
        (
            vec![
                "run",
                "--known-failures",
                "/dev/zero",
                "specs/dlq-consumer/poison-cycle.yaml",
            ],
            "it is not a regular file",
        ),
    ];
    for (args, says) in cases {
        let what = args.join(" ");
        let ran = ran(wait_or_kill(spawn(&args), &what));
        assert_eq!(
            ran.code, 2,
            "`dlqspec {what}`:\n{}{}",
            ran.stdout, ran.stderr
        );
        assert!(
            format!("{}{}", ran.stdout, ran.stderr).contains(says),
            "`dlqspec {what}` does not say {says:?}:\n{}{}",
            ran.stdout,
            ran.stderr
        );
    }
}

#[cfg(unix)]
#[test]
fn a_spec_swapped_for_a_fifo_after_discovery_does_not_hang_the_load() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("swapped.yaml");
    std::fs::write(&path, passing("swapped")).expect("write");
    let discovery = dlqspec::load::discover::discover(&[dir.path().to_path_buf()]).expect("found");
    std::fs::remove_file(&path).expect("remove");
    mkfifo(&path);
    let entry = discovery.entries[0].clone();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(
            dlqspec::load::loader::load_entry(&entry)
                .err()
                .map(|e| e.message),
        );
    });
    let error = match receiver.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(error) => error,
        Err(_) => {
            // Unblock the hung read so the test ends, then fail.
            let _ = std::fs::OpenOptions::new().write(true).open(&path);
            panic!("loading a spec swapped for a FIFO hung");
        }
    };
    assert_eq!(
        error.as_deref(),
        Some("cannot read the spec: it is not a regular file")
    );
}

/// Names in a folder, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn output_to_a_fifo_is_written_through_and_the_fifo_stays() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("report.fifo");
    mkfifo(&fifo);
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::fs::File::open(&reader_path)
            .and_then(|mut f| f.read_to_string(&mut text))
            .expect("read the FIFO");
        text
    });
    let spec = "specs/dlq-consumer/poison-cycle.yaml";
    let child = spawn(&["run", spec, "--format", "json", "--output", path_arg(&fifo)]);
    let ran = ran(wait_or_kill(child, "run --output FIFO"));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let report = reader.join().expect("reader");
    assert!(report.starts_with("{\"event\":\"run_started\""), "{report}");
    assert!(report.trim_end().ends_with("\"exit_code\":0}"), "{report}");
    assert!(
        std::fs::metadata(&fifo)
            .expect("still there")
            .file_type()
            .is_fifo()
    );
    assert_eq!(listing(dir.path()), ["report.fifo"]);
}

#[cfg(unix)]
#[test]
fn output_to_dev_stdout_appends_where_stdout_appends() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("log.txt");
    std::fs::write(&log, "what the log held\n").expect("write");
    let appending = std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .expect("open for appending");
    let spec = "specs/dlq-consumer/poison-cycle.yaml";
    for output in ["/dev/stdout", "-", path_arg(&log)] {
        let status = command()
            .args(["run", spec, "--format", "tap", "--output", output])
            .stdout(appending.try_clone().expect("clone"))
            .status()
            .expect("dlqspec runs");
        assert_eq!(status.code(), Some(0), "--output {output}");
    }
    let text = std::fs::read_to_string(&log).expect("read");
    assert!(text.starts_with("what the log held\nPASS  "), "{text}");
    assert_eq!(
        text.matches("TAP version 13\n1..1\nok 1 - ").count(),
        3,
        "{text}"
    );
    assert_eq!(listing(dir.path()), ["log.txt"]);
}

#[cfg(unix)]
#[test]
fn bless_refuses_read_only_and_hard_linked_specs_and_writes_through_links_in_the_tree() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir(root.join("real")).expect("mkdir");
    for name in ["read-only.yaml", "linked.yaml", "real/target.yaml"] {
        std::fs::write(root.join(name), BLESSABLE).expect("write");
    }
    std::fs::set_permissions(
        root.join("read-only.yaml"),
        std::fs::Permissions::from_mode(0o444),
    )
    .expect("chmod");
    std::fs::hard_link(root.join("linked.yaml"), root.join("real/other-name.yml"))
        .expect("hard link");
    symlink("real/target.yaml", root.join("via-link.yaml")).expect("symlink");
    let ran = run_with(
        &[
            "bless",
            path_arg(&root.join("read-only.yaml")),
            path_arg(&root.join("linked.yaml")),
            path_arg(&root.join("via-link.yaml")),
        ],
        false,
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains(
            "read-only.yaml: it is read-only (mode 444); make it writable (chmod u+w) to bless it"
        ),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("linked.yaml: it has 2 hard links, which a rewrite would split"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("blessed ") && ran.stdout.contains("via-link.yaml (1 value rewritten)"),
        "{}",
        ran.stdout
    );
    for unchanged in ["read-only.yaml", "linked.yaml", "real/other-name.yml"] {
        assert_eq!(
            std::fs::read_to_string(root.join(unchanged)).expect("read"),
            BLESSABLE,
            "{unchanged}"
        );
    }
    assert!(
        std::fs::symlink_metadata(root.join("via-link.yaml"))
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(root.join("real/target.yaml"))
            .expect("read")
            .contains("process: ok")
    );
}

#[cfg(unix)]
#[test]
fn a_bless_killed_at_any_moment_leaves_the_old_file_or_the_new_and_the_next_bless_leaves_no_litter()
{
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, BLESSABLE).expect("write");
    let ran = run_with(&["bless", path_arg(&spec)], false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let blessed = std::fs::read_to_string(&spec).expect("read");
    assert_ne!(blessed, BLESSABLE);
    // A fixed seed, so a failing sequence of kills replays the same way.
    let mut rng = dlqspec::generate::rng::Rng::new(0x2545_F491_4F6C_DD1D);
    let (mut old, mut new) = (0, 0);
    for round in 0..120 {
        std::fs::write(&spec, BLESSABLE).expect("reset");
        let mut child = command()
            .args(["bless", path_arg(&spec)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dlqspec starts");
        // Anywhere from at once to past the end of a bless.
        std::thread::sleep(std::time::Duration::from_micros(rng.next_u64() % 40_000));
        let _ = child.kill();
        let _ = child.wait();
        let text = std::fs::read_to_string(&spec).expect("the spec is there");
        match text {
            t if t == BLESSABLE => old += 1,
            t if t == blessed => new += 1,
            torn => panic!("round {round}: neither the old file nor the new one:\n{torn}"),
        }
    }
    std::fs::write(&spec, BLESSABLE).expect("reset");
    let ran = run_with(&["bless", path_arg(&spec)], false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(
        listing(dir.path()),
        ["spec.yaml"],
        "litter after {old} kills before the rename and {new} after"
    );
}

/// Whether a process whose command line holds `program` runs below process `pid` (its
/// `/proc/*/stat` parents lead to `pid`). A child of `pid` alone says nothing: dlqspec may
/// start and reap a short-lived one before the implementation's.
#[cfg(unix)]
fn runs_below(pid: &str, program: &str) -> bool {
    let mut parents = std::collections::HashMap::new();
    let mut running = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(parent) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        else {
            continue;
        };
        parents.insert(name.clone(), parent.to_owned());
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(program) {
            running.push(name);
        }
    }
    running.into_iter().any(|mut at| {
        for _ in 0..64 {
            match parents.get(&at) {
                Some(parent) if parent == pid => return true,
                Some(parent) => at = parent.clone(),
                None => return false,
            }
        }
        false
    })
}

#[cfg(unix)]
#[test]
fn an_interrupted_run_removes_its_temporary_report_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.xml");
    std::fs::write(&report, "the previous report").expect("write");
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let mut child = command()
            .args([
                "run",
                "specs/dlq-consumer/poison-cycle.yaml",
                "--format",
                "junit",
            ])
            .args(["--output", path_arg(&report)])
            .args([
                "--impl",
                "cmd:python3 tests/impls/hang.py",
                "--timeout",
                "600",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dlqspec starts");
        // Once its implementation runs (and hangs), the report is pending: in an unnamed file
        // (O_TMPFILE), so the folder shows nothing new; where that is not supported, in a
        // temporary file beside it.
        let pid = child.id().to_string();
        // However long a busy machine takes to start it: only a run that ends first fails.
        while !runs_below(&pid, "hang.py") {
            if let Some(status) = child.try_wait().expect("dlqspec's status") {
                panic!("dlqspec ended before its implementation started: {status:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let names = listing(dir.path());
        assert!(
            names == ["report.xml"]
                || (names.len() == 2
                    && names[0].starts_with(".report.xml.dlqspec-")
                    && names[0].ends_with(".tmp")),
            "{names:?}"
        );
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(i32::try_from(child.id()).expect("pid"), signal);
        }
        let status = child.wait().expect("dlqspec ends");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        assert_eq!(listing(dir.path()), ["report.xml"]);
        assert_eq!(
            std::fs::read_to_string(&report).expect("read"),
            "the previous report"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn processes_a_solution_starts_in_sessions_of_their_own_end_with_its_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pidfile = dir.path().join("pids");
    let ran = ran(command()
        .args([
            "run",
            // Outside the box: the solution writes its processes' host pids for the test.
            "--sandbox",
            "off",
            "--impl",
            "python:tests/impls/spawns_grandchildren.py",
        ])
        .args(crate::common::suite_of("specs/dlq-consumer"))
        .env("DLQSPEC_TEST_PIDS", &pidfile)
        .output()
        .expect("dlqspec runs"));
    let pids = crate::common::pids_in(&pidfile);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(
        pids.len(),
        2,
        "a child in a session of its own and an orphaned grandchild: {pids:?}"
    );
    crate::common::assert_all_dead(&pids, "after the run of a solution that starts processes");
}

#[cfg(target_os = "linux")]
#[test]
fn an_implementation_that_exits_while_its_child_holds_stdout_is_said_to_have_exited() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pidfile = dir.path().join("pids");
    let implementation = format!(
        "cmd:python3 tests/impls/exit_holding_stdout.py '{}'",
        pidfile.display()
    );
    let ran = run_with(
        &[
            "run",
            "specs/dlq-consumer/poison-cycle.yaml",
            // Outside the box: the program writes its child's host pid for the test.
            "--sandbox",
            "off",
            "--impl",
            &implementation,
            // Any timeout longer than it takes to tell: the old behaviour waited it out.
            "--timeout",
            "30",
        ],
        false,
    );
    let pids = crate::common::pids_in(&pidfile);
    crate::common::assert_all_dead(&pids, "the process holding stdout");
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("implementation error (exited): the process exited with status 7 while serving `process_one()`, but a process it started still held its stdout open (that process was killed)"),
        "{}",
        ran.stdout
    );
    assert!(!ran.stdout.contains("timeout"), "{}", ran.stdout);
}

#[cfg(target_os = "linux")]
#[test]
fn a_killed_dlqspec_takes_its_implementation_along() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pidfile = dir.path().join("pids");
    let implementation = format!(
        "cmd:python3 tests/impls/rust-side-hang-tree.py '{}'",
        pidfile.display()
    );
    let mut child = command()
        .args([
            "run",
            "specs/dlq-consumer/poison-cycle.yaml",
            // Outside the box: the program writes its host pids for the test.
            "--sandbox",
            "off",
            "--impl",
            &implementation,
            "--timeout",
            "600",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("dlqspec starts");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while crate::common::pids_in(&pidfile).len() < 2 && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let pids = crate::common::pids_in(&pidfile);
    assert_eq!(pids.len(), 2, "{pids:?}");
    // Its own child dies with it (PR_SET_PDEATHSIG); what that child started is beyond reach
    // of a dlqspec killed outright, so the test ends it itself.
    let (implementation, grandchild) = (pids[0].clone(), pids[1].clone());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !crate::common::dead(&implementation) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let survived = !crate::common::dead(&implementation);
    for pid in [&implementation, &grandchild]
        .into_iter()
        .filter(|p| !crate::common::dead(p))
    {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(pid.parse().unwrap_or(0), libc::SIGKILL);
        }
    }
    assert!(!survived, "the implementation outlived a killed dlqspec");
}

#[test]
fn limits_reached_are_errors_that_name_the_limit() {
    let spec = "specs/dlq-consumer/poison-cycle.yaml";
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--impl",
                "cmd:python3 tests/impls/memory_exhausted.py",
                "--memory",
                "256M",
            ],
            "implementation error (exited): the process exited with status 1 while serving `process_one()`\n      it ran out of memory: each implementation process may use 256 MiB of data (--memory)\n",
        ),
        (
            &["--impl", "python:tests/impls/memory_hog.py"],
            "implementation error (errored): the implementation ran out of memory serving `process_one()` (MemoryError: ): each of its processes may use 2 GiB of data (--memory)\n",
        ),
        (
            &[
                "--impl",
                "cmd:python3 tests/impls/cpu_burner.py",
                "--cpu",
                "1",
                "--timeout",
                "120",
            ],
            "implementation error (exited): the process was killed by signal 24 (SIGXCPU) while serving `process_one()`\n      it used up its CPU time: each implementation process may use 1 s of CPU time (--cpu)\n",
        ),
        (
            &["--impl", "cmd:python3 tests/impls/oversized.py line"],
            "implementation error (protocol): line 3 of stdout is longer than 16 MiB, the most a protocol message may be (docs/protocol.md)\n",
        ),
        (
            &[
                "--impl",
                "cmd:python3 tests/impls/oversized.py world",
                "--timeout",
                "120",
            ],
            "implementation error (protocol): the world calls of this spec sent more than 64 MiB (at `dlq.put` while serving `process_one()`), the most one spec may send (docs/protocol.md)",
        ),
    ];
    for (args, says) in cases {
        let mut all = vec!["run", spec];
        all.extend_from_slice(args);
        let ran = run_with(&all, false);
        assert_eq!(ran.code, 1, "{all:?}:\n{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stdout.contains(says),
            "{all:?} does not say\n{says}\nbut:\n{}",
            ran.stdout
        );
    }
}

#[test]
fn messages_name_what_is_wrong_in_dlqspecs_words() {
    let spec = "specs/dlq-consumer/poison-cycle.yaml";
    let cases: &[(&str, &str)] = &[
        (
            "cmd:python3 tests/impls/undecodable.py deep",
            "implementation error (protocol): line 3 of stdout nests JSON more than 128 levels deep, the most dlqspec reads (no protocol message needs that)",
        ),
        (
            "cmd:python3 tests/impls/undecodable.py utf8",
            "implementation error (protocol): line 3 of stdout is not UTF-8 (byte 42 is not): protocol messages are JSON in UTF-8",
        ),
    ];
    for (implementation, says) in cases {
        let ran = run_with(&["run", spec, "--impl", implementation], false);
        assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stdout.contains(says),
            "{implementation}:\n{}",
            ran.stdout
        );
        assert!(!ran.stdout.contains("belong on stderr"), "{}", ran.stdout);
    }
    let (_dir, two) = crate::common::temp_spec(
        "two.yaml",
        &format!("{}---\n{}", passing("one"), passing("two")),
    );
    let (_dir2, far) = crate::common::temp_spec(
        "far.yaml",
        "contract: dlq-consumer\nname: far\nsteps:\n  - advance: 9007199254740991\n  - advance: 1\n",
    );
    for (path, says) in [
        (
            &two,
            "a spec is one YAML document, and a line `---` here starts another",
        ),
        (
            &far,
            "`advance: 1` would move the clock from 9007199254740991 past 9007199254740991",
        ),
    ] {
        let ran = run_with(&["run", path_arg(path)], false);
        assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
        assert!(ran.stdout.contains(says), "{}", ran.stdout);
        for internal in [
            "from_str_multiple",
            "budget breached",
            "Nodes {",
            "ScalarBytes",
        ] {
            assert!(!ran.stdout.contains(internal), "{}", ran.stdout);
        }
    }
}

/// A plain spec of 10^5 messages (about 12 MB with its handler script and steps) loads: the
/// parser's limits stop bombs, not big scenarios. Slow in an unoptimised build: `--ignored`.
#[test]
#[ignore]
fn a_spec_of_a_hundred_thousand_messages_loads() {
    let n = 100_000;
    let mut text = String::from(
        "contract: dlq-consumer\nname: big\nrules: [dlq-consumer/success]\nmessages:\n",
    );
    for i in 0..n {
        text.push_str(&format!(
            "  - {{id: m{i}, body: order-{i}-with-a-payload-of-some-length}}\n"
        ));
    }
    text.push_str("handler:\n");
    for i in 0..n {
        text.push_str(&format!("  m{i}: [ok]\n"));
    }
    text.push_str("steps:\n");
    for _ in 0..n {
        text.push_str("  - process: ok\n");
    }
    assert!(text.len() > 9_000_000, "{} bytes", text.len());
    let loaded = dlqspec::load::loader::load(dlqspec::text::source::SourceFile::from_text(
        "big.yaml", text,
    ));
    assert!(
        loaded.is_ok(),
        "{}",
        loaded.err().map(|e| e.to_string()).unwrap_or_default()
    );
}
