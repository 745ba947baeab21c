//! The GitHub Action run here as a runner runs it: action.yml's steps in order, each `run:`
//! step through bash with its `env:` and the runner's variables (`GITHUB_OUTPUT`, `GITHUB_PATH`,
//! `RUNNER_TOOL_CACHE`...), `if:` and `${{ }}` evaluated, and actions/cache's `restore` and
//! `save` as a folder of saved keys that outlives a job, as the Actions cache does. A fresh
//! runner is a fresh tool cache. What the action may not do is watched by a `cargo` first on
//! `PATH` that notes every call: the second run of a version must build nothing.
//!
//! The prebuilt binary is the release archive `.ci/install-artifacts` makes (as the release
//! workflow does), served from a `file://` folder laid out as GitHub's release downloads are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{root, target_dir};
use crate::install::{Away, artifacts};

/// The `cargo` first on `PATH` in an action's run: notes its arguments in `log`, then either
/// refuses (the action must not build) or runs the real cargo on the build's own target
/// folder, so a build is the one `cargo install` on an up-to-date release build.
fn cargo_watch(bin: &Path, log: &Path, builds: bool) {
    let real = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let then = if builds {
        format!(
            "CARGO_TARGET_DIR='{}' exec '{}' \"$@\"",
            target_dir().display(),
            real.display()
        )
    } else {
        "echo 'cargo: this run must build nothing' >&2; exit 3".to_owned()
    };
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\n{then}\n", log.display());
    std::fs::create_dir_all(bin).expect("bin");
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, script).expect("cargo");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("mode");
}

/// What the Actions cache keeps between jobs: a folder per key.
struct Cache {
    dir: tempfile::TempDir,
}

impl Cache {
    fn new() -> Cache {
        Cache {
            dir: tempfile::tempdir().expect("cache"),
        }
    }

    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = std::fs::read_dir(self.dir.path())
            .expect("cache")
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        keys.sort();
        keys
    }
}

/// One job's run of the action.
struct Job {
    /// The action's outputs.
    outputs: BTreeMap<String, String>,
    /// Each step's id and whether it ran.
    steps: Vec<(String, bool)>,
    /// The exit code of the step that failed, or 0.
    code: i32,
    /// Every step's stdout and stderr.
    log: String,
    took: Duration,
    /// The runner's folders (its temporary folder holds the report), kept while the job is.
    _runner: tempfile::TempDir,
}

/// Everything a job of the action sees.
struct Runner<'a> {
    away: &'a Away,
    cache: &'a Cache,
    /// First on `PATH`: the watching `cargo`.
    bin: PathBuf,
}

impl Runner<'_> {
    /// Runs action.yml with `inputs` on a fresh runner (its own tool cache and temporary
    /// folder), with the cache kept between jobs.
    fn job(&self, inputs: &[(&str, &str)]) -> Job {
        let started = Instant::now();
        let action: Value =
            serde_saphyr::from_str(&std::fs::read_to_string(root().join("action.yml")).unwrap())
                .expect("action.yml parses");
        let runner = tempfile::tempdir().expect("runner");
        let folder = runner.path().to_path_buf();
        let tool_cache = folder.join("tool-cache");
        let temp = folder.join("temp");
        std::fs::create_dir_all(&tool_cache).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        let github_path = folder.join("github-path");
        std::fs::write(&github_path, "").unwrap();

        let mut given: BTreeMap<String, String> = BTreeMap::new();
        for (name, input) in action["inputs"].as_object().expect("inputs") {
            let default = input["default"].as_str().unwrap_or_default();
            given.insert(name.clone(), default.to_owned());
        }
        for (name, value) in inputs {
            assert!(given.contains_key(*name), "action.yml has no input {name}");
            given.insert((*name).to_owned(), (*value).to_owned());
        }
        let mut context = Context {
            inputs: given,
            steps: BTreeMap::new(),
        };
        let mut job = Job {
            outputs: BTreeMap::new(),
            steps: Vec::new(),
            code: 0,
            log: String::new(),
            took: Duration::ZERO,
            _runner: runner,
        };
        for (index, step) in action["runs"]["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .enumerate()
        {
            let id = step["id"]
                .as_str()
                .map_or_else(|| format!("step{index}"), str::to_owned);
            let wanted = job.code == 0
                && step["if"]
                    .as_str()
                    .is_none_or(|condition| context.condition(condition));
            job.steps.push((id.clone(), wanted));
            if !wanted {
                continue;
            }
            let outputs = match (step["uses"].as_str(), step["run"].as_str()) {
                (Some(uses), None) => self.uses(uses, &step["with"], &context),
                (None, Some(script)) => {
                    let output_file = folder.join(format!("output-{index}"));
                    std::fs::write(&output_file, "").unwrap();
                    let script_file = folder.join(format!("step-{index}.sh"));
                    std::fs::write(&script_file, context.substitute(script)).unwrap();
                    let mut command = self.away.command(Path::new("bash"), &[]);
                    // GitHub's `shell: bash`, with what a runner puts in every step's env.
                    command
                        .args(["--noprofile", "--norc", "-eo", "pipefail"])
                        .arg(&script_file)
                        .env("PATH", self.path(&github_path))
                        .env("GITHUB_ACTIONS", "true")
                        .env("GITHUB_ACTION_PATH", root())
                        .env("GITHUB_WORKSPACE", self.away.path("work"))
                        .env("GITHUB_OUTPUT", &output_file)
                        .env("GITHUB_PATH", &github_path)
                        .env("GITHUB_STEP_SUMMARY", folder.join("step-summary"))
                        .env("RUNNER_OS", "Linux")
                        .env(
                            "RUNNER_ARCH",
                            match std::env::consts::ARCH {
                                "aarch64" => "ARM64",
                                _ => "X64",
                            },
                        )
                        .env("RUNNER_TEMP", &temp)
                        .env("RUNNER_TOOL_CACHE", &tool_cache);
                    if let Some(env) = step["env"].as_object() {
                        for (name, value) in env {
                            command.env(name, context.substitute(value.as_str().unwrap_or("")));
                        }
                    }
                    let output = command.output().expect("bash runs");
                    job.log.push_str(&String::from_utf8_lossy(&output.stdout));
                    job.log.push_str(&String::from_utf8_lossy(&output.stderr));
                    job.code = output.status.code().unwrap_or(-1);
                    let written = std::fs::read_to_string(&output_file).unwrap();
                    written
                        .lines()
                        .filter_map(|line| line.split_once('='))
                        .map(|(name, value)| (name.to_owned(), value.to_owned()))
                        .collect()
                }
                _ => panic!("step {id}: neither `uses` nor `run`"),
            };
            context.steps.insert(id, outputs);
        }
        for (name, output) in action["outputs"].as_object().expect("outputs") {
            let value = context.substitute(output["value"].as_str().unwrap_or(""));
            job.outputs.insert(name.clone(), value);
        }
        job.took = started.elapsed();
        job
    }

    /// `PATH` for a step: what earlier steps added to `GITHUB_PATH` (the latest first), the
    /// watching `cargo`, then the machine's.
    fn path(&self, github_path: &Path) -> std::ffi::OsString {
        let added = std::fs::read_to_string(github_path).unwrap();
        let system = std::env::var_os("PATH").unwrap_or_default();
        std::env::join_paths(
            added
                .lines()
                .rev()
                .map(PathBuf::from)
                .chain([self.bin.clone()])
                .chain(std::env::split_paths(&system)),
        )
        .expect("PATH")
    }

    /// actions/cache's `restore` and `save`, on the cache's folder of keys; nothing else.
    fn uses(&self, uses: &str, with: &Value, context: &Context) -> BTreeMap<String, String> {
        let field = |name: &str| context.substitute(with[name].as_str().unwrap_or(""));
        let (path, key) = (PathBuf::from(field("path")), field("key"));
        assert!(!key.is_empty() && path.is_absolute(), "{uses}: {with}");
        let saved = self.cache.dir.path().join(&key);
        let mut outputs = BTreeMap::new();
        match uses {
            "actions/cache/restore@v4" => {
                let hit = saved.exists();
                if hit {
                    crate::install::copy_tree(&saved, &path);
                }
                outputs.insert("cache-hit".to_owned(), hit.to_string());
            }
            // A key is saved once: GitHub refuses to save a key again.
            "actions/cache/save@v4" => {
                if !saved.exists() {
                    crate::install::copy_tree(&path, &saved);
                }
            }
            other => panic!("this runner knows no action {other}"),
        }
        outputs
    }
}

/// What `${{ }}` reads: the inputs and the outputs of the steps so far.
struct Context {
    inputs: BTreeMap<String, String>,
    steps: BTreeMap<String, BTreeMap<String, String>>,
}

impl Context {
    fn value(&self, expression: &str) -> String {
        let expression = expression.trim();
        if let Some(name) = expression.strip_prefix("inputs.") {
            return self
                .inputs
                .get(name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .clone();
        }
        if let Some(rest) = expression.strip_prefix("steps.") {
            let (id, name) = rest
                .split_once(".outputs.")
                .unwrap_or_else(|| panic!("`{expression}`"));
            return self
                .steps
                .get(id)
                .and_then(|outputs| outputs.get(name))
                .cloned()
                .unwrap_or_default();
        }
        match expression {
            // A local action has none, as `uses: ./` has none.
            "github.action_repository" => String::new(),
            _ => panic!("this runner cannot evaluate `{expression}`: teach it"),
        }
    }

    /// `A == 'x' && B != 'y' && ...`, the conditions action.yml writes.
    fn condition(&self, condition: &str) -> bool {
        condition.split("&&").all(|clause| {
            let literal = |text: &str| {
                text.trim()
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or_else(|| panic!("`{clause}`: not a quoted literal"))
                    .to_owned()
            };
            if let Some((left, right)) = clause.split_once("!=") {
                self.value(left) != literal(right)
            } else if let Some((left, right)) = clause.split_once("==") {
                self.value(left) == literal(right)
            } else {
                panic!("this runner cannot evaluate `{clause}`: teach it")
            }
        })
    }

    fn substitute(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("`}}`") + start;
            out.push_str(&self.value(&rest[start + 3..end]));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }
}

/// The version of the clone's dlqspec, as the release archive is named.
fn release_archive() -> (String, PathBuf) {
    let release = artifacts().join("release");
    let archive = std::fs::read_dir(&release)
        .expect("target/install/release")
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .expect("a release archive");
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let version = name
        .strip_prefix("dlqspec-")
        .and_then(|rest| rest.split_once('-'))
        .map(|(version, _)| version.to_owned())
        .expect("dlqspec-VERSION-TARGET.tar.gz");
    (version, archive)
}

/// A `file://` release folder holding `v<VERSION>/` with the archive and its checksum, as
/// GitHub serves a release's downloads.
fn release_folder(away: &Away, version: &str, archive: &Path) -> String {
    let folder = away.path("releases").join(format!("v{version}"));
    std::fs::create_dir_all(&folder).expect("releases");
    let name = archive.file_name().unwrap();
    std::fs::copy(archive, folder.join(name)).expect("the archive");
    let mut sum = archive.as_os_str().to_owned();
    sum.push(".sha256");
    let mut sum_name = name.to_owned();
    sum_name.push(".sha256");
    std::fs::copy(&sum, folder.join(sum_name)).expect("its .sha256");
    format!("file://{}", away.path("releases").display())
}

const SPECS: &str = "specs/dlq-consumer specs/outcome-queue";

fn assert_passed(job: &Job) {
    assert_eq!(job.code, 0, "{}", job.log);
    let report = job.outputs["report"].clone();
    let xml = std::fs::read_to_string(&report).expect("the report");
    let totals = xml.lines().find(|l| l.starts_with("<testsuites ")).unwrap();
    assert!(totals.contains(" failures=\"0\" errors=\"0\""), "{totals}");
}

/// The calls the watching `cargo` noted.
fn cargo_calls(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_action_takes_the_release_binary_and_builds_nothing_run_after_run() {
    let (version, archive) = release_archive();
    let away = Away::new();
    let cache = Cache::new();
    let log = away.path("cargo-calls");
    let bin = away.path("watch");
    cargo_watch(&bin, &log, false);
    let runner = Runner {
        away: &away,
        cache: &cache,
        bin,
    };
    let releases = release_folder(&away, &version, &archive);
    let inputs = [
        ("specs", SPECS),
        ("implementation", "python:examples/python/solution.py"),
        ("release-url", releases.as_str()),
    ];
    let first = runner.job(&inputs);
    assert_passed(&first);
    assert_eq!(first.outputs["installed"], "release", "{}", first.log);
    assert!(
        first.log.contains(&format!(
            "installed the prebuilt dlqspec {version} for {}",
            archive_target(&archive)
        )),
        "{}",
        first.log
    );
    // A prebuilt binary is not cached: the release is as near as the cache.
    assert!(cache.keys().is_empty(), "{:?}", cache.keys());
    let second = runner.job(&inputs);
    assert_passed(&second);
    assert_eq!(second.outputs["installed"], "release", "{}", second.log);
    assert_eq!(cargo_calls(&log), Vec::<String>::new());
    eprintln!(
        "the action with the release binary: first run {:?}, second {:?}",
        first.took, second.took
    );

    // An archive that does not match its checksum is not used: with no cargo to build, the
    // job fails saying so, and nothing is installed.
    let folder = away.path("releases").join(format!("v{version}"));
    let copy = folder.join(archive.file_name().unwrap());
    let mut bytes = std::fs::read(&copy).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&copy, bytes).unwrap();
    let tampered = runner.job(&inputs);
    assert_eq!(tampered.code, 3, "{}", tampered.log);
    assert!(
        tampered
            .log
            .contains(".tar.gz does not match its .sha256: not used"),
        "{}",
        tampered.log
    );
    assert_eq!(cargo_calls(&log).len(), 1, "the one refused build");
}

/// The Rust target a release archive is for.
fn archive_target(archive: &Path) -> String {
    let name = archive.file_name().unwrap().to_string_lossy();
    let rest = name.strip_prefix("dlqspec-").unwrap();
    let (_, target) = rest.split_once('-').unwrap();
    target.trim_end_matches(".tar.gz").to_owned()
}

#[test]
fn without_a_release_the_action_builds_once_and_the_next_job_takes_the_cache() {
    let away = Away::new();
    let cache = Cache::new();
    let log = away.path("cargo-calls");
    let bin = away.path("watch");
    let runner = Runner {
        away: &away,
        cache: &cache,
        bin: bin.clone(),
    };
    // A release folder without this version: nothing to download.
    std::fs::create_dir_all(away.path("releases")).unwrap();
    let releases = format!("file://{}", away.path("releases").display());
    let inputs = [
        ("specs", SPECS),
        ("implementation", "python:examples/python/solution.py"),
        ("release-url", releases.as_str()),
    ];
    artifacts(); // the release build the build reuses
    cargo_watch(&bin, &log, true);
    let first = runner.job(&inputs);
    assert_passed(&first);
    assert_eq!(first.outputs["installed"], "built", "{}", first.log);
    assert!(first.log.contains("no prebuilt dlqspec "), "{}", first.log);
    let calls = cargo_calls(&log);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        calls[0].starts_with("install --locked --force --path "),
        "{calls:?}"
    );
    let (version, _) = release_archive();
    let keys = cache.keys();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(
        keys[0].starts_with(&format!("dlqspec-{version}-")),
        "the key names the version and the platform: {keys:?}"
    );
    let saved: Vec<(String, bool)> = first.steps.clone();
    assert!(saved.contains(&("save".to_owned(), true)), "{saved:?}");

    // The next job, on a fresh runner: the cache, and no cargo at all.
    cargo_watch(&bin, &log, false);
    let second = runner.job(&inputs);
    assert_passed(&second);
    assert_eq!(second.outputs["installed"], "cache", "{}", second.log);
    assert_eq!(
        cargo_calls(&log).len(),
        1,
        "the second run built: {}",
        second.log
    );
    assert!(second.steps.contains(&("save".to_owned(), false)));
    eprintln!(
        "the action without a release: first run (a build on an up-to-date target folder) {:?}, second {:?}",
        first.took, second.took
    );

    // Under the runner, a failing solution's annotations name its own file and line.
    std::fs::write(
        away.path("work/wrong.py"),
        "from given import PermanentError\n\n\nclass DLQConsumer:\n    def __init__(self, queue, dlq, handler, clock, max_attempts=3):\n        self.queue = queue\n\n    def process_one(self):\n        return self.queue.receve()\n\n    def replay(self, ids=None):\n        return []\n",
    )
    .expect("solution");
    let failed = runner.job(&[
        ("specs", "specs/dlq-consumer"),
        ("implementation", "python:wrong.py"),
        ("release-url", releases.as_str()),
    ]);
    assert_eq!(failed.code, 1, "{}", failed.log);
    let annotations: Vec<&str> = failed
        .log
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(annotations.len(), 1, "{}", failed.log);
    assert!(
        annotations[0].starts_with("::error file=wrong.py,line=9,title="),
        "{}",
        annotations[0]
    );
}
