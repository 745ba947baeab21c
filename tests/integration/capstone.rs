//! The capstone, `exercises/lease-queue/`: an exercise written only as a folder (exercise.yaml,
//! a Python reference, specs, known mistakes), with no Rust of its own. Its reference passes
//! every spec; correct solutions in Python, JavaScript and TypeScript (tests/exercises/lease-queue/
//! correct/) pass them too; every one-mistake solution (broken/) fails, and at least 90% of them
//! read as one cause naming the rule their first line says they break; `dlqspec rules` lists the
//! exercise with every rule covered, `lint` finds no smell, and `dlqspec new` writes a starter
//! spec that passes (docs/capstone.md). That no engine or shim file names it is held for every
//! exercise folder by `exercises.rs`.

use std::path::{Path, PathBuf};

use crate::causes::{causes, finished, percent};
use crate::common::*;

/// The exercise folder, from the root.
const EXERCISE: &str = "exercises/lease-queue";
/// The exercise's name, as specs write it in `contract:`.
const NAME: &str = "lease-queue";

/// The files of `tests/exercises/lease-queue/{kind}`, sorted; the JavaScript and TypeScript ones
/// only when the Node tests run.
fn solutions(kind: &str) -> Vec<PathBuf> {
    let dir = root().join("tests/exercises").join(NAME).join(kind);
    let node = node_tests();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            ext == "py" || (node && matches!(ext, "js" | "mjs" | "cjs" | "ts"))
        })
        .collect();
    paths.sort();
    paths
}

/// The rule a one-mistake solution breaks, from its first line: a comment
/// `breaks RULE: what the student reads`, the rule's exercise put before it.
fn broken_rule(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("solution");
    let first = text.lines().next().unwrap_or_default();
    let rule = first
        .trim_start_matches(['#', '/', ' '])
        .strip_prefix("breaks ")
        .and_then(|rest| rest.split_once(':'))
        .map(|(rule, _)| rule.trim().to_owned())
        .unwrap_or_else(|| {
            panic!(
                "{}: the first line must be a comment `breaks RULE: what the student reads`",
                path.display()
            )
        });
    if rule.contains('/') {
        rule
    } else {
        format!("{NAME}/{rule}")
    }
}

/// The spec files of the exercise, from the root.
fn specs() -> Vec<String> {
    suite_of(&format!("{EXERCISE}/specs"))
}

/// The closing count of a run of every spec that passes.
fn all_pass() -> String {
    format!("{} passed, 0 failed", specs().len())
}

#[test]
fn the_reference_passes_every_spec_of_a_folder_of_the_promised_size() {
    let specs = specs();
    assert!(specs.len() >= 30, "{} specs, 30 at least", specs.len());
    let restarts = specs
        .iter()
        .filter(|spec| {
            let text = std::fs::read_to_string(root().join(spec)).expect("spec");
            text.lines().any(|line| line.trim() == "- restart")
        })
        .count();
    assert!(restarts >= 5, "{restarts} specs restart, 5 at least");
    let mistakes = std::fs::read_dir(root().join(EXERCISE).join("mistakes"))
        .expect("mistakes/")
        .count();
    assert!(mistakes >= 8, "{mistakes} known mistakes, 8 at least");
    let ran = run(&["run", EXERCISE]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains(&all_pass()), "{}", ran.stdout);
}

#[test]
fn every_correct_solution_passes_every_spec() {
    let correct = solutions("correct");
    let languages = |ext: &[&str]| {
        correct
            .iter()
            .filter(|p| ext.contains(&p.extension().and_then(|e| e.to_str()).unwrap_or("")))
            .count()
    };
    assert!(languages(&["py"]) >= 1, "a correct Python solution");
    if node_tests() {
        assert!(
            languages(&["js", "mjs", "cjs"]) >= 1,
            "a correct JavaScript solution"
        );
        assert!(languages(&["ts"]) >= 1, "a correct TypeScript solution");
    }
    let runs = two_at_a_time(&correct, &|path: &PathBuf| {
        let solution = path.display().to_string();
        run(&["run", EXERCISE, "--impl", &solution])
    });
    for (path, ran) in correct.iter().zip(runs) {
        assert_eq!(
            ran.code,
            0,
            "{}\n{}{}",
            path.display(),
            ran.stdout,
            ran.stderr
        );
        assert!(
            ran.stdout.contains(&all_pass()),
            "{}\n{}",
            path.display(),
            ran.stdout
        );
    }
}

#[test]
fn every_one_mistake_solution_fails_and_most_read_as_one_cause_naming_the_rule_it_breaks() {
    let broken = solutions("broken");
    let reports = two_at_a_time(&broken, &|path: &PathBuf| {
        let solution = path.display().to_string();
        let ran = run(&["run", EXERCISE, "--format", "json", "--impl", &solution]);
        (ran.code, finished(&ran.stdout))
    });
    let (mut right, mut table) = (0, String::new());
    for (path, (code, events)) in broken.iter().zip(&reports) {
        let rule = broken_rule(path);
        let causes = causes(events);
        assert_eq!(*code, 1, "{} must fail a spec", path.display());
        assert!(!causes.is_empty(), "{} fails no spec", path.display());
        let first = causes[0].1.as_deref();
        let one_and_named = causes.len() == 1 && first == Some(rule.as_str());
        right += usize::from(one_and_named);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        table.push_str(&format!(
            "  {name:36} {} cause{}  first: {}{}\n",
            causes.len(),
            if causes.len() == 1 { " " } else { "s" },
            first.unwrap_or("(none)"),
            if first == Some(rule.as_str()) {
                String::new()
            } else {
                format!("  (breaks {rule})")
            }
        ));
    }
    let total = broken.len();
    let figures = format!(
        "Of the capstone's {total} one-mistake solutions, every one fails, and {right} ({}%) read as one cause naming the rule their mistake breaks",
        percent(right, total)
    );
    eprintln!("{table}{figures}");
    assert!(right * 10 >= total * 9, "{table}{figures}");
    // Written down where the suite's testing is described; measured on every solution only when
    // the JavaScript and TypeScript ones run too.
    if node_tests() {
        assert!(total >= 20, "{total} one-mistake solutions, 20 at least");
        let doc = std::fs::read_to_string(root().join("docs/testing.md")).expect("docs/testing.md");
        assert!(
            doc.replace('\n', " ").contains(&figures),
            "docs/testing.md must say: {figures}\n{table}"
        );
    }
}

#[test]
fn rules_lists_the_exercise_with_every_rule_covered_and_lint_finds_no_smell() {
    let ran = run(&["rules", EXERCISE]);
    let heading = ran
        .stdout
        .lines()
        .find(|line| line.starts_with(&format!("{NAME} (")))
        .unwrap_or_else(|| panic!("rules lists no {NAME}:\n{}", ran.stdout));
    assert!(heading.contains(" rules): "), "{heading}");
    let uncovered: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|line| line.trim_start().starts_with(&format!("{NAME}/")))
        .filter(|line| line.contains("NOT COVERED"))
        .collect();
    assert!(uncovered.is_empty(), "{}", ran.stdout);
    let linted = run(&["lint", EXERCISE]);
    assert_eq!(linted.code, 0, "{}{}", linted.stdout, linted.stderr);
}

#[test]
fn new_writes_a_starter_spec_of_the_exercise_that_passes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let starter = dir.path().join("my-case.yaml");
    let starter_arg = starter.display().to_string();
    let exercise = root().join(EXERCISE).display().to_string();
    let wrote = run(&[
        "new",
        &starter_arg,
        "--contract",
        NAME,
        "--exercise",
        &exercise,
    ]);
    assert_eq!(wrote.code, 0, "{}{}", wrote.stdout, wrote.stderr);
    let text = std::fs::read_to_string(&starter).expect("the starter spec");
    assert!(text.contains(&format!("contract: {NAME}\n")), "{text}");
    assert!(text.contains("  - create: {"), "{text}");
    let ran = run(&["run", &starter_arg, "--exercise", &exercise]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("1 passed, 0 failed"), "{}", ran.stdout);
}

/// Blessing writes what the reference did in the spec's own words: a declared error by its
/// name (`raises: StaleLease`, as the bundled specs write it, not the kind's `error`).
#[test]
fn bless_names_a_declared_error_by_its_class() {
    let text = format!(
        "contract: {NAME}\nname: a finish without a lease\nsteps:\n  - create: {{budget: 2, lease: 10, backoff: 1}}\n  - submit: {{job_id: a, account: x, payload: p, returns: true}}\n  - finish: {{job_id: a, worker: w1, outcome: success, returns: done}}\n"
    );
    let (_dir, path) = temp_spec("blessed.yaml", &text);
    let exercise = root().join(EXERCISE).display().to_string();
    let ran = run(&["bless", path_arg(&path), "--exercise", &exercise]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let blessed = std::fs::read_to_string(&path).expect("the spec");
    assert_eq!(blessed, text.replace("returns: done", "raises: StaleLease"),);
}

/// explore finds every known mistake in its default budget (400 cases, seed 1), the one that
/// needs the same job failed twice with the clock moved between (`fixed-retry-delay`, a retry's
/// delay) among them, and docs/testing.md says how many.
#[test]
fn explore_finds_the_known_mistakes_in_its_default_budget_and_nothing_in_a_correct_solution() {
    let out = tempfile::tempdir().expect("temp dir");
    let explore = |solution: &Path| {
        let language = match solution.extension().and_then(|e| e.to_str()) {
            Some("py") => "python",
            _ => "node",
        };
        let implementation = format!("{language}:{}", path_arg(solution));
        run(&[
            "explore",
            "--exercise",
            EXERCISE,
            "--contract",
            NAME,
            "--seed",
            "1",
            "--impl",
            &implementation,
            "--output",
            path_arg(out.path()),
        ])
    };
    let mut mistakes: Vec<PathBuf> = std::fs::read_dir(root().join(EXERCISE).join("mistakes"))
        .expect("mistakes/")
        .map(|entry| entry.expect("entry").path())
        .collect();
    mistakes.sort();
    let mut missed = Vec::new();
    for mistake in &mistakes {
        let ran = explore(mistake);
        let id = mistake
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a name");
        match ran.code {
            1 => assert!(ran.stdout.contains("found a divergence"), "{}", ran.stdout),
            0 => missed.push(id.to_owned()),
            _ => panic!("{id}: {}{}", ran.stdout, ran.stderr),
        }
    }
    assert!(
        missed.is_empty(),
        "explore misses {missed:?} in its default budget"
    );
    let figure = format!(
        "explore finds each of its {} known mistakes",
        mistakes.len()
    );
    let testing = std::fs::read_to_string(root().join("docs/testing.md")).expect("testing.md");
    assert!(
        testing.contains(&figure),
        "docs/testing.md must say {figure:?}"
    );
    for solution in solutions("correct") {
        let ran = explore(&solution);
        assert_eq!(
            ran.code,
            0,
            "{}: {}{}",
            solution.display(),
            ran.stdout,
            ran.stderr
        );
        assert!(
            ran.stdout.contains("no divergence: 400 cases"),
            "{}",
            ran.stdout
        );
    }
}

/// The given clock is the spec's to move: a solution that moves it (here, a lease-queue whose
/// `take` waits a tick by advancing the world's clock) reaches no `advance`, and its run is
/// told that it called what the clock does not offer, rather than passing on a time of its own.
#[test]
fn a_solution_cannot_move_the_given_clock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let correct = root().join("tests/exercises/lease-queue/correct/queue_eager.py");
    let text = std::fs::read_to_string(&correct).expect("a correct solution");
    let moving = text.replacen(
        "    def take(self, worker):\n",
        "    def take(self, worker):\n        self.clock.advance(1)\n",
        1,
    );
    assert_ne!(moving, text, "the solution's take is where it was");
    let solution = dir.path().join("moves_the_clock.py");
    std::fs::write(&solution, moving).expect("write");
    let spec =
        format!("{EXERCISE}/specs/take-counts-the-attempt-and-leases-until-now-plus-lease.yaml");
    let ran = run(&[
        "run",
        &spec,
        "--impl",
        &format!("python:{}", path_arg(&solution)),
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("yours raises AttributeError: 'Clock' object has no attribute 'advance'"),
        "the run says what the solution called: {}",
        ran.stdout
    );
    let types = run(&["types", EXERCISE]);
    assert_eq!(types.code, 0, "{}", types.stderr);
    assert!(types.stdout.contains("now(): number;"), "{}", types.stdout);
    assert!(!types.stdout.contains("advance("), "{}", types.stdout);
}
