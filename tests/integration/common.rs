//! Helpers shared by the integration tests: running the real binary and reading its output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use dlqspec::authoring::bless::{self, Blessing};
use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::RunMode;
use dlqspec::load::loader;
use dlqspec::model::outcome::OutcomeKind;
use dlqspec::text::source::SourceFile;

#[cfg(target_os = "linux")]
pub mod headless;

/// The repository root, where `specs/` and `tests/fixtures/` live.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `dlqspec` binary users run, built once per test run by `cargo build --release`, run
/// through a link of its own ([`under_test`]).
///
/// Not `CARGO_BIN_EXE_dlqspec`: `cargo test` builds that one with the features the
/// dev-dependencies switch on in shared crates (serde_json's `float_roundtrip`, regex's Unicode
/// tables, through jsonschema), so it is not the program that ships. A release build outside
/// the test build is; `.ci/run` and the README build it first, which makes this a no-op.
/// `DLQSPEC_TEST_BINARY=PATH` runs the tests against another build instead.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os("DLQSPEC_TEST_BINARY") {
            return PathBuf::from(path);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--quiet",
                "--locked",
                "--bin",
                "dlqspec",
            ])
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build --release failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| root().join("target"), PathBuf::from);
        under_test(&target.join("release").join("dlqspec"), &target.join("tmp"))
    })
}

/// A link of its own to the release build, which the tests run instead of `target/release/dlqspec`.
///
/// The install tests run maturin on the same target folder, and maturin moves the release
/// binary away and back while it packs the wheel (for about 0.3 s): a test spawning
/// `target/release/dlqspec` then would find no file. A hard link to the same inode is untouched
/// by that move and by any rebuild (cargo replaces the name, not the file), costs no copy, and
/// has no writer open that could make its exec fail as busy. It is made under one name, through
/// a rename, so test processes running at once each see a whole link.
fn under_test(built: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("target/tmp");
    let stable = dir.join("dlqspec-under-test");
    let staged = dir.join(format!("dlqspec-under-test.{}", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    std::fs::hard_link(built, &staged)
        .unwrap_or_else(|error| panic!("link {}: {error}", built.display()));
    std::fs::rename(&staged, &stable).expect("rename the link into place");
    stable
}

/// A `dlqspec` command run from the repository root, without colors or CI-specific output.
///
/// The clone's `shims/node/node_modules/.bin` comes first on `PATH`: the built-in shims have
/// no packages of their own, and the test solutions no project, so the TypeScript ones run
/// through that `tsx`, found on `PATH` as a user's global or `npx` one would be.
pub fn dlqspec() -> Command {
    let mut command = Command::new(binary());
    command
        .current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1")
        .env("PATH", path_with_tsx())
        .env("DLQSPEC_CACHE_DIR", shared_cache());
    command
}

/// `PATH` with the clone's `shims/node/node_modules/.bin` (tsx) in front.
pub fn path_with_tsx() -> std::ffi::OsString {
    let bin = root().join("shims/node/node_modules/.bin");
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest)))
        .expect("PATH joins")
}

/// The cache folder of the runs that do not choose one: one temporary folder per test process,
/// so no test writes `.dlqspec/` into the repository. A test of `--last-failed` gives its own.
fn shared_cache() -> &'static Path {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE
        .get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

pub struct Ran {
    pub code: i32,
    /// stdout with the run's time taken off the human report's closing count
    /// (`3 passed, 0 failed in 15 ms` reads `3 passed, 0 failed`), so tests never see a time.
    pub stdout: String,
    /// stdout as printed, time included.
    pub timed_stdout: String,
    pub stderr: String,
}

pub fn ran(output: Output) -> Ran {
    let timed_stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    Ran {
        code: output.status.code().unwrap_or(-1),
        stdout: untimed(&timed_stdout),
        timed_stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `text` with ` in TIME` taken off each closing count line of a human report.
pub fn untimed(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let (body, end) = match (line.strip_suffix("\r\n"), line.strip_suffix('\n')) {
                (Some(body), _) => (body, "\r\n"),
                (None, Some(body)) => (body, "\n"),
                (None, None) => (line, ""),
            };
            let counts = body.split(" in ").next().unwrap_or(body);
            let time = body
                .strip_prefix(counts)
                .and_then(|t| t.strip_prefix(" in "));
            let is_time = |t: &str| {
                let number = t.strip_suffix(" ms").or_else(|| t.strip_suffix(" s"));
                number.is_some_and(|n| {
                    !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.')
                })
            };
            let is_counts = counts.contains(" passed, ")
                && counts.split(", ").all(|part| {
                    part.split_once(' ').is_some_and(|(n, word)| {
                        n.chars().all(|c| c.is_ascii_digit())
                            && matches!(word, "passed" | "failed" | "skipped")
                    })
                });
            match time {
                Some(time) if is_counts && is_time(time) => format!("{counts}{end}"),
                _ => line.to_owned(),
            }
        })
        .collect()
}

/// Runs `dlqspec` with `args` and captures everything.
pub fn run(args: &[&str]) -> Ran {
    ran(dlqspec().args(args).output().expect("dlqspec runs"))
}

/// The bundled spec files, as paths from the root (`specs/...`), sorted.
pub fn suite() -> Vec<String> {
    suite_of("specs")
}

/// `suite`, for the specs under `folder` (from the root) only.
pub fn suite_of(folder: &str) -> Vec<String> {
    dlqspec::load::discover::spec_files(&[root().join(folder)])
        .expect("the bundled suite")
        .into_iter()
        .map(|path| {
            path.strip_prefix(root())
                .expect("under the root")
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Writes `text` to `name` in a fresh temporary folder and returns both.
pub fn temp_spec(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write spec");
    (dir, path)
}

/// The environment variable that lets a run of the tests skip what needs Node.js (and tsx).
/// The README's test command and `.ci/run` never set it.
pub const SKIP_NODE: &str = "DLQSPEC_SKIP_NODE_TESTS";

/// Whether the tests that need Node.js and tsx run. They do unless `DLQSPEC_SKIP_NODE_TESTS=1`
/// says otherwise; a missing `node` or tsx is then a failure that says how to install it, never
/// a silent skip that would let `cargo test` go green having checked no JavaScript.
pub fn node_tests() -> bool {
    if std::env::var(SKIP_NODE).is_ok_and(|v| v == "1") {
        eprintln!("skipped: the Node.js and TypeScript checks ({SKIP_NODE}=1)");
        return false;
    }
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        node,
        "node is missing: install Node.js 20 or later, or set {SKIP_NODE}=1 to skip these checks"
    );
    assert!(
        root().join("shims/node/node_modules/tsx").is_dir(),
        "shims/node/node_modules is missing: run `npm ci --prefix shims/node` (it brings tsx for TypeScript), or set {SKIP_NODE}=1 to skip these checks"
    );
    true
}

pub fn path_arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// The exit code each command gives a spec text, in the library: `run` (checks, stops at the
/// first difference), `explain` (records every check) and `bless --check`.
pub fn verdicts(path: &Path, text: &str) -> [i32; 3] {
    let code = |kind: OutcomeKind| match kind {
        OutcomeKind::Passed => 0,
        OutcomeKind::SpecError => 2,
        _ => 1,
    };
    let Ok(spec) = loader::load(SourceFile::from_text(path, text.to_owned())) else {
        return [2, 2, 2];
    };
    let run = code(spec.run(&mut Builtin::new(), RunMode::Check).outcome.kind());
    let explain = code(
        spec.run(&mut Builtin::new(), RunMode::Record)
            .outcome
            .kind(),
    );
    let blessed = match bless::bless(spec.file.clone(), &mut Builtin::new()) {
        Blessing::Unchanged => 0,
        Blessing::SpecError(_) => 2,
        Blessing::Rewritten { .. } | Blessing::Refused(_) => 1,
    };
    [run, explain, blessed]
}

/// Whether a process is gone (or a zombie: dead, waiting for its parent to reap it).
#[cfg(target_os = "linux")]
pub fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// The pids written to `file`, one per line or separated by spaces.
#[cfg(target_os = "linux")]
pub fn pids_in(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Asserts every pid is dead, after a bounded while (SIGKILL acts asynchronously); kills the
/// ones that are not, so a failing test leaves nothing behind.
#[cfg(target_os = "linux")]
pub fn assert_all_dead(pids: &[String], what: &str) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !pids.iter().all(|p| dead(p)) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let alive: Vec<&String> = pids.iter().filter(|p| !dead(p)).collect();
    for pid in &alive {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(pid.parse().unwrap_or(0), libc::SIGKILL);
        }
    }
    assert!(alive.is_empty(), "{what}: left behind {alive:?}");
}

/// YAML-significant tokens, and values at the edges of what specs take, that the robustness
/// tests put into specs: syntax, numbers past every limit, control and bidi characters, and
/// words of the spec format.
pub const TOKENS: &[&str] = &[
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "null",
    "~",
    "0",
    "-1",
    "2.5",
    "true",
    "99999999999999999999999",
    "18446744073709551615",
    "\"",
    "'",
    "&a ",
    "*a",
    "!!binary ",
    "? ",
    "|",
    ">",
    "#",
    "---",
    "\n",
    "  ",
    "\t",
    "x: y",
    "process",
    "crash",
    "ok",
    "expect: {}",
    "advance: 9007199254740991",
    "fault: {crash: after, call: handler}",
    "\u{1b}[2J",
    "\u{0}",
    "\u{9b}",
    "\u{202e}",
    "::error::x",
    "é",
];

/// Asserts that `text` holds every one of `wanted`, naming the first missing one, what it was
/// looked for in (`label`, when not empty) and the whole text.
pub fn assert_contains_all<S: AsRef<str>>(
    text: &str,
    wanted: impl IntoIterator<Item = S>,
    label: impl std::fmt::Display,
) {
    let label = label.to_string();
    let label = if label.is_empty() {
        label
    } else {
        format!("{label}: ")
    };
    for wanted in wanted {
        let wanted = wanted.as_ref();
        assert!(text.contains(wanted), "{label}no {wanted:?} in\n{text}");
    }
}
