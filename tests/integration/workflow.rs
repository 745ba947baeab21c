//! An author's loop through `run`: `--list`, `--last-failed` and `--failed-first` with their
//! cache folder, and `--durations` with the SLOW marker.

use std::path::{Path, PathBuf};

use crate::common::{Ran, dlqspec, path_arg, ran, root, run};

/// A folder of three passing dlq-consumer specs, `a.yaml`, `b.yaml`, `c.yaml`.
fn three_specs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let text =
        std::fs::read_to_string(root().join("specs/dlq-consumer/success-acks-and-returns-ok.yaml"))
            .expect("bundled spec");
    for name in ["a", "b", "c"] {
        let named = text.replace("name: a handled", &format!("name: {name} is a handled"));
        std::fs::write(dir.path().join(format!("{name}.yaml")), named).expect("write spec");
    }
    dir
}

/// Makes `name` in `dir` fail (the handler is called once, the spec says twice), or pass again.
fn set_failing(dir: &Path, name: &str, failing: bool) {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).expect("spec");
    let (from, to) = if failing {
        ("handler_calls: {a: 1}", "handler_calls: {a: 2}")
    } else {
        ("handler_calls: {a: 2}", "handler_calls: {a: 1}")
    };
    assert!(text.contains(from), "{text}");
    std::fs::write(&path, text.replace(from, to)).expect("write spec");
}

/// `dlqspec run DIR ARGS` with the cache folder `cache`.
fn run_in(dir: &Path, cache: &Path, args: &[&str]) -> Ran {
    let mut command = dlqspec();
    command
        .env("DLQSPEC_CACHE_DIR", cache)
        .args(["run", path_arg(dir)])
        .args(args);
    ran(command.output().expect("dlqspec runs"))
}

/// The verdict lines of a human report, as `PASS a.yaml`, in report order.
fn verdicts(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with("PASS ") || line.starts_with("FAIL "))
        .map(|line| {
            let mut words = line.split_whitespace();
            let tag = words.next().unwrap_or_default();
            let path = PathBuf::from(words.next().unwrap_or_default());
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            format!("{tag} {file}")
        })
        .collect()
}

#[test]
fn list_shows_each_selected_spec_with_its_name_and_rules_without_running_any() {
    // An implementation that fails at import: listing never starts it.
    let listed = run(&[
        "run",
        "specs",
        "--list",
        "--filter",
        "dlq-consumer/success",
        "--impl",
        "python:tests/impls/raise_at_import.py",
    ]);
    assert_eq!(listed.code, 0, "{}{}", listed.stdout, listed.stderr);
    assert!(
        listed.stdout.contains(
            "specs/dlq-consumer/success-acks-and-returns-ok.yaml  a handled message is acked and process_one returns ok  [dlq-consumer/success]\n"
        ),
        "{}",
        listed.stdout
    );
    assert!(
        listed
            .stdout
            .lines()
            .all(|l| l.contains("dlq-consumer/success")),
        "{}",
        listed.stdout
    );
    assert!(!listed.stdout.contains("passed"), "{}", listed.stdout);

    let all = run(&["run", "specs", "--list"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    let bundled = walk_yaml(&root().join("specs"));
    assert_eq!(all.stdout.lines().count(), bundled, "{}", all.stdout);
}

fn walk_yaml(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("folder")
        .map(|entry| entry.expect("entry").path())
        .map(|path| match path.is_dir() {
            true => walk_yaml(&path),
            // An exercise folder's exercise.yaml is no spec.
            false => usize::from(
                path.extension().is_some_and(|e| e == "yaml")
                    && path.file_name().is_none_or(|n| n != "exercise.yaml"),
            ),
        })
        .sum()
}

#[test]
fn list_as_json_lines_and_a_broken_spec_listed_as_such() {
    let json = run(&[
        "run",
        "specs/outcome-queue/success-moves-to-done.yaml",
        "--list",
        "--format",
        "json",
    ]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let value: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("one JSON line");
    assert_eq!(value["event"], "spec_listed");
    assert_eq!(
        value["path"],
        "specs/outcome-queue/success-moves-to-done.yaml"
    );
    assert_eq!(value["contract"], "outcome-queue");
    assert!(value["rules"].as_array().is_some_and(|r| !r.is_empty()));

    let broken = run(&["run", "tests/fixtures/broken/duplicate-key.yaml", "--list"]);
    assert_eq!(broken.code, 2, "{}", broken.stdout);
    assert!(
        broken.stdout.starts_with(
            "tests/fixtures/broken/duplicate-key.yaml  SPEC ERROR: tests/fixtures/broken/duplicate-key.yaml:"
        ),
        "{}",
        broken.stdout
    );

    let junit = run(&["run", "specs", "--list", "--format", "junit"]);
    assert_eq!(junit.code, 2);
    assert!(
        junit
            .stderr
            .contains("--list prints the human or the json format"),
        "{}",
        junit.stderr
    );
}

#[test]
fn last_failed_reruns_only_the_failures_until_they_pass_then_all() {
    let dir = three_specs();
    let cache = tempfile::tempdir().expect("temp dir");
    set_failing(dir.path(), "b.yaml", true);

    let first = run_in(dir.path(), cache.path(), &[]);
    assert_eq!(first.code, 1, "{}", first.stdout);
    assert_eq!(
        verdicts(&first.stdout),
        ["PASS a.yaml", "FAIL b.yaml", "PASS c.yaml"]
    );
    let state = std::fs::read_to_string(cache.path().join("failed.json")).expect("state file");
    assert!(state.contains("b.yaml\""), "{state}");
    assert!(!state.contains("a.yaml\""), "{state}");

    let listed = run_in(dir.path(), cache.path(), &["--last-failed", "--list"]);
    assert_eq!(listed.stdout.lines().count(), 1, "{}", listed.stdout);
    assert!(
        listed.stdout.contains("b.yaml  b is a handled"),
        "{}",
        listed.stdout
    );

    let again = run_in(dir.path(), cache.path(), &["--last-failed"]);
    assert_eq!(again.code, 1);
    assert_eq!(verdicts(&again.stdout), ["FAIL b.yaml"]);

    set_failing(dir.path(), "b.yaml", false);
    let fixed = run_in(dir.path(), cache.path(), &["--lf"]);
    assert_eq!(fixed.code, 0, "{}", fixed.stdout);
    assert_eq!(verdicts(&fixed.stdout), ["PASS b.yaml"]);

    let all = run_in(dir.path(), cache.path(), &["--last-failed"]);
    assert_eq!(all.code, 0);
    assert_eq!(
        verdicts(&all.stdout),
        ["PASS a.yaml", "PASS b.yaml", "PASS c.yaml"]
    );
    assert!(
        all.stderr
            .contains("--last-failed: no failure of the selected specs is recorded, so all 3 run"),
        "{}",
        all.stderr
    );
}

#[test]
fn failed_first_runs_the_failures_ahead_of_the_rest() {
    let dir = three_specs();
    let cache = tempfile::tempdir().expect("temp dir");
    set_failing(dir.path(), "c.yaml", true);
    assert_eq!(run_in(dir.path(), cache.path(), &[]).code, 1);
    let ordered = run_in(dir.path(), cache.path(), &["--failed-first"]);
    assert_eq!(
        verdicts(&ordered.stdout),
        ["FAIL c.yaml", "PASS a.yaml", "PASS b.yaml"]
    );
    // Only failures of this selection count: a run of a.yaml alone keeps c.yaml's record.
    let a = dir.path().join("a.yaml");
    let mut command = dlqspec();
    command
        .env("DLQSPEC_CACHE_DIR", cache.path())
        .args(["run", path_arg(&a)]);
    assert_eq!(ran(command.output().expect("runs")).code, 0);
    let again = run_in(dir.path(), cache.path(), &["--lf"]);
    assert_eq!(verdicts(&again.stdout), ["FAIL c.yaml"]);
}

#[test]
fn the_default_cache_folder_is_dlqspec_in_the_current_folder_and_ignores_itself() {
    let dir = three_specs();
    set_failing(dir.path(), "a.yaml", true);
    let mut command = dlqspec();
    command
        .env_remove("DLQSPEC_CACHE_DIR")
        .current_dir(dir.path())
        .args(["run", "."]);
    let first = ran(command.output().expect("runs"));
    assert_eq!(first.code, 1, "{}", first.stdout);
    let cache = dir.path().join(".dlqspec");
    assert!(cache.join("failed.json").is_file());
    let ignore = std::fs::read_to_string(cache.join(".gitignore")).expect(".gitignore");
    assert!(ignore.lines().any(|line| line == "*"), "{ignore}");
    // And the repository's own .gitignore keeps it out too.
    let ours = std::fs::read_to_string(root().join(".gitignore")).expect(".gitignore");
    assert!(ours.lines().any(|line| line == ".dlqspec/"), "{ours}");
}

#[test]
fn a_state_file_that_is_not_ours_warns_and_is_left_alone_when_the_run_records_nothing() {
    let dir = three_specs();
    let cache = tempfile::tempdir().expect("temp dir");
    let state = cache.path().join("failed.json");
    std::fs::write(&state, "\u{1b}[31mnot json").expect("write");
    let run = run_in(dir.path(), cache.path(), &["--last-failed"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("failed.json: ignored ("),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains('\u{1b}'));
    assert_eq!(verdicts(&run.stdout).len(), 3);
}

#[test]
fn durations_lists_the_slowest_specs_and_slow_marks_those_over_the_threshold() {
    let dir = three_specs();
    let cache = tempfile::tempdir().expect("temp dir");
    let timed = run_in(dir.path(), cache.path(), &["--durations", "2"]);
    assert_eq!(timed.code, 0, "{}", timed.stderr);
    let closing = timed.timed_stdout.lines().last().unwrap_or_default();
    assert!(closing.starts_with("3 passed, 0 failed in "), "{closing}");
    assert!(
        closing.ends_with(" ms") || closing.ends_with(" s"),
        "{closing}"
    );
    let tail: Vec<&str> = timed.stdout.lines().rev().take(5).collect();
    assert_eq!(tail[0], "3 passed, 0 failed");
    assert_eq!(tail[1], "");
    assert!(
        tail[2].ends_with(".yaml") && tail[3].ends_with(".yaml"),
        "{}",
        timed.stdout
    );
    assert_eq!(tail[4], "slowest 2 specs:");
    assert!(!timed.stdout.contains("SLOW"), "{}", timed.stdout);

    // A threshold of zero marks every spec; none is marked under one of a million seconds.
    let all_slow = run_in(dir.path(), cache.path(), &["--slow", "0"]);
    let marked = all_slow
        .stdout
        .lines()
        .filter(|l| l.contains("  SLOW "))
        .count();
    assert_eq!(marked, 3, "{}", all_slow.stdout);
    let none = run_in(dir.path(), cache.path(), &["--slow", "1000000"]);
    assert!(!none.stdout.contains("SLOW"), "{}", none.stdout);
    let bad = run_in(dir.path(), cache.path(), &["--slow=-1"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("expected seconds"), "{}", bad.stderr);
}
