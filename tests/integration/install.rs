//! The installs users make (`cargo install`, a wheel in a venv, the npm tarball in a project),
//! each run with the clone out of reach; the GitHub Action's step and the pre-commit hooks.
//!
//! `.ci/install-artifacts` builds the three installs into `target/install/` once per test run,
//! reusing the release build. Each test copies what it installs into a temporary folder, runs
//! it from there with no `DLQSPEC_SHIMS`, a cache folder of its own and the clone's tsx off
//! `PATH`, on copies of the specs and examples: nothing of the clone is used, and the installed
//! binary names no file of the clone (checked), so moving the clone away changes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::{Ran, binary, node_tests, ran, root};

/// `target/install/`, built by `.ci/install-artifacts` once per test run.
pub(crate) fn artifacts() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        binary(); // the release build the installs reuse
        let output = Command::new("bash")
            .arg(".ci/install-artifacts")
            .current_dir(root())
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            ".ci/install-artifacts failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| root().join("target"), PathBuf::from);
        target.join("install")
    })
}

/// The one file in `dir` whose name ends with `suffix`.
fn only_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{}: {found:?}", dir.display());
    found.into_iter().next().unwrap()
}

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.expect("walk");
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
        } else if entry.file_type().is_symlink() {
            let link = std::fs::read_link(entry.path()).expect("link");
            std::os::unix::fs::symlink(link, &target).expect("symlink");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A temporary place far from the clone: `work/` with copies of `specs/` and `examples/`,
/// `cache/` for the shims, `home/` as HOME.
pub(crate) struct Away {
    dir: tempfile::TempDir,
}

impl Away {
    pub(crate) fn new() -> Away {
        let dir = tempfile::tempdir().expect("temp dir");
        for name in ["specs", "examples"] {
            copy_tree(&root().join(name), &dir.path().join("work").join(name));
        }
        std::fs::create_dir(dir.path().join("home")).expect("home");
        Away { dir }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `program` run in `work/`, with nothing pointing at the clone: no DLQSPEC_SHIMS, and a
    /// PATH that has the `bin` folders given but not the clone's tsx.
    pub(crate) fn command(&self, program: &Path, bin: &[&Path]) -> Command {
        let clone_tsx = root().join("shims/node/node_modules/.bin");
        let system = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            bin.iter()
                .map(|dir| dir.to_path_buf())
                .chain(std::env::split_paths(&system).filter(|dir| *dir != clone_tsx)),
        )
        .expect("PATH");
        let mut command = Command::new(program);
        command
            .current_dir(self.path("work"))
            .env_remove("DLQSPEC_SHIMS")
            .env_remove("DLQSPEC_PROTOCOL_LOG")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_WORKSPACE")
            .env("NO_COLOR", "1")
            .env("HOME", self.path("home"))
            .env("DLQSPEC_CACHE_DIR", self.path("cache"))
            .env("PATH", path);
        command
    }
}

/// Runs the bundled specs on `implementation` and asserts every one passed.
fn assert_passes(mut command: Command, implementation: &str) {
    let ran: Ran = ran(command
        .args(["run", "specs", "--quiet", "--impl", implementation])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(
        ran.code, 0,
        "{implementation}:\n{}{}",
        ran.stdout, ran.stderr
    );
    assert!(ran.stdout.contains(" passed, 0 failed"), "{}", ran.stdout);
}

/// The installed binary names no file of the clone: the shims are in it, not read from the
/// source tree, so moving or deleting the clone cannot break it.
fn assert_names_no_clone_file(binary: &Path) {
    let bytes = std::fs::read(binary).expect("read the binary");
    let shims = root().join("shims");
    let shims = shims.to_string_lossy();
    assert!(
        !bytes
            .windows(shims.len())
            .any(|window| window == shims.as_bytes()),
        "{} names {shims}",
        binary.display()
    );
}

#[test]
fn cargo_install_runs_every_example_with_the_clone_out_of_reach() {
    let installed = artifacts().join("cargo-root/bin/dlqspec");
    let away = Away::new();
    let bin = away.path("bin");
    std::fs::create_dir(&bin).expect("bin");
    std::fs::copy(&installed, bin.join("dlqspec")).expect("copy the installed program");
    let dlqspec = bin.join("dlqspec");
    assert_names_no_clone_file(&dlqspec);

    assert_passes(away.command(&dlqspec, &[]), "examples/python/solution.py");
    // The shims were written to the cache folder, named by their hash.
    let cache: Vec<String> = std::fs::read_dir(away.path("cache"))
        .expect("the cache folder")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("shims-"))
        .collect();
    assert_eq!(cache.len(), 1, "{cache:?}");
    if !node_tests() {
        return;
    }
    assert_passes(
        away.command(&dlqspec, &[]),
        "examples/javascript/solution.mjs",
    );
    assert_passes(away.command(&dlqspec, &[]), "examples/commonjs/solution.js");

    // TypeScript: the tsx the solution's own project has (a copy of the one npm installed
    // for the clone), found from the solution's folder.
    let project = away.path("work/examples/typescript");
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "lesson", "private": true, "devDependencies": {"tsx": "*"}}"#,
    )
    .expect("package.json");
    copy_tree(
        &root().join("shims/node/node_modules"),
        &project.join("node_modules"),
    );
    assert_passes(
        away.command(&dlqspec, &[]),
        "examples/typescript/solution.ts",
    );

    // Without tsx anywhere, it runs all the same: on Node's own transform where Node has it,
    // else on the one the installed program carries with its shims.
    let bare = away.path("work/bare");
    std::fs::create_dir(&bare).expect("bare");
    for file in ["solution.ts", "given.d.ts"] {
        std::fs::copy(project.join(file), bare.join(file)).expect("copy");
    }
    assert_passes(away.command(&dlqspec, &[]), "bare/solution.ts");
}

#[test]
fn the_wheel_installed_in_a_fresh_venv_runs_python_with_the_clone_out_of_reach() {
    let wheel = only_file(&artifacts().join("wheels"), ".whl");
    let away = Away::new();
    let copy = away.path(&wheel.file_name().unwrap().to_string_lossy());
    std::fs::copy(&wheel, &copy).expect("copy the wheel");
    let venv = away.path("venv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .expect("python3 runs");
    assert!(made.success(), "python3 -m venv failed");
    let pip = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(&copy)
        .output()
        .expect("pip runs");
    assert!(
        pip.status.success(),
        "{}",
        String::from_utf8_lossy(&pip.stderr)
    );
    let dlqspec = venv.join("bin/dlqspec");
    assert_names_no_clone_file(&dlqspec);
    assert_passes(
        away.command(&dlqspec, &[&venv.join("bin")]),
        "examples/python/solution.py",
    );
}

#[test]
fn the_npm_tarball_installed_in_a_fresh_project_runs_javascript_through_npx() {
    if !node_tests() {
        return;
    }
    let tarball = only_file(&artifacts().join("npm"), ".tgz");
    let away = Away::new();
    let copy = away.path("dlqspec.tgz");
    std::fs::copy(&tarball, &copy).expect("copy the tarball");
    let project = away.path("work");
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "lesson", "private": true}"#,
    )
    .expect("package.json");
    let npm = |args: &[&str]| {
        let mut command = away.command(Path::new("npm"), &[]);
        command
            .args(args)
            .env("npm_config_cache", away.path("npm-cache"))
            .env("npm_config_update_notifier", "false");
        command
    };
    let installed = npm(&["install", "--offline", "--no-audit", "--no-fund"])
        .arg(&copy)
        .output()
        .expect("npm runs");
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let carried = only_file(
        &project.join("node_modules/dlqspec/vendor"),
        &format!("{}-{}", node_platform(), node_arch()),
    );
    assert_names_no_clone_file(&carried.join("dlqspec"));
    let mut npx = away.command(Path::new("npx"), &[]);
    npx.arg("dlqspec")
        .env("npm_config_cache", away.path("npm-cache"))
        .env("npm_config_update_notifier", "false");
    assert_passes(npx, "examples/javascript/solution.mjs");
    // The launcher passes the exit code on: a spec error is 2.
    let mut broken = away.command(Path::new("npx"), &[]);
    std::fs::write(project.join("broken.yaml"), "contract: [").expect("spec");
    let broken = ran(broken
        .args(["dlqspec", "run", "broken.yaml"])
        .env("npm_config_cache", away.path("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .output()
        .expect("npx runs"));
    assert_eq!(broken.code, 2, "{}{}", broken.stdout, broken.stderr);
    assert!(
        broken.stdout.contains("1 spec error\n"),
        "{}",
        broken.stdout
    );
}

/// Node's names for this platform and processor, as the npm package's vendor/ folder uses.
fn node_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

fn node_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    }
}

#[test]
fn the_action_step_runs_the_specs_and_names_the_report() {
    let installed = artifacts().join("cargo-root/bin");
    let away = Away::new();
    let output_file = away.path("github-output");
    std::fs::write(&output_file, "").expect("GITHUB_OUTPUT");
    let action: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(root().join("action.yml")).unwrap())
            .expect("action.yml parses");
    for input in ["specs", "implementation", "format", "args"] {
        assert!(action["inputs"][input].is_object(), "input {input}");
    }
    assert_eq!(
        action["outputs"]["report"]["value"],
        "${{ steps.run.outputs.report }}"
    );
    let run = |implementation: &str| {
        let mut command = away.command(Path::new("bash"), &[&installed]);
        command
            .arg(root().join("action/run.sh"))
            .env("GITHUB_OUTPUT", &output_file)
            .env("RUNNER_TEMP", away.path("work"))
            .env("DLQSPEC_SPECS", "specs/dlq-consumer specs/outcome-queue")
            .env("DLQSPEC_IMPLEMENTATION", implementation)
            .env("DLQSPEC_FORMAT", "junit")
            .env("DLQSPEC_ARGS", "--jobs 2");
        ran(command.output().expect("bash runs"))
    };
    let passed = run("python:examples/python/solution.py");
    assert_eq!(passed.code, 0, "{}{}", passed.stdout, passed.stderr);
    let report = away.path("work/dlqspec-report.xml");
    assert_eq!(
        std::fs::read_to_string(&output_file).unwrap(),
        format!("report={}\n", report.display())
    );
    let totals = |report: &Path| {
        let xml = std::fs::read_to_string(report).expect("the report");
        let line = xml.lines().find(|line| line.starts_with("<testsuites "));
        line.expect("a JUnit report").to_owned()
    };
    let passing = totals(&report);
    assert!(
        passing.contains(" failures=\"0\" errors=\"0\""),
        "{passing}"
    );
    // A failing solution fails the step with dlqspec's exit code, and the report is named.
    std::fs::write(
        away.path("work/wrong.py"),
        "from given import PermanentError\nclass DLQConsumer:\n    pass\n",
    )
    .expect("solution");
    let failed = run("python:wrong.py");
    assert_eq!(failed.code, 1, "{}{}", failed.stdout, failed.stderr);
    assert_eq!(
        std::fs::read_to_string(&output_file).unwrap(),
        format!("report={0}\nreport={0}\n", report.display())
    );
    let failing = totals(&report);
    assert!(!failing.contains(" failures=\"0\""), "{failing}");
}

#[test]
fn the_pre_commit_hooks_lint_the_specs_as_declared() {
    let installed = artifacts().join("cargo-root/bin");
    let hooks: serde_json::Value = serde_saphyr::from_str(
        &std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap(),
    )
    .expect(".pre-commit-hooks.yaml parses");
    let hooks = hooks.as_array().expect("a list of hooks");
    assert_eq!(hooks.len(), 2);
    let away = Away::new();
    for hook in hooks {
        assert_eq!(hook["pass_filenames"], false, "{hook}");
        let entry: Vec<&str> = hook["entry"].as_str().unwrap().split(' ').collect();
        let args: Vec<&str> = hook["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let ran = ran(away
            .command(Path::new(entry[0]), &[&installed])
            .args(&entry[1..])
            .args(&args)
            .output()
            .expect("the hook runs"));
        assert_eq!(ran.code, 0, "{hook}: {}{}", ran.stdout, ran.stderr);
    }
    // The hook fails a commit whose spec has a smell.
    let smelly = away.path("work/specs/dlq-consumer/smelly.yaml");
    std::fs::write(
        &smelly,
        "contract: dlq-consumer\nname: smelly\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps: []\nexpect: {}\n",
    )
    .expect("spec");
    let ran = ran(away
        .command(Path::new("dlqspec"), &[&installed])
        .args(["lint", "specs"])
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("smelly.yaml:3:12: never-delivered: "),
        "{}",
        ran.stdout
    );
}
