//! `dlqspec explore` on the real binary: it finds broken solutions of the corpus within its
//! default budget (a sample on every run, all of them in an ignored test; never the known
//! survivors) and writes a spec each fails and the built-in passes; it finds nothing in any
//! correct solution; crash schedules keep their invariants on correct consumers and break them
//! on lossy ones; and the command line keeps its promises (seed printed and replayed, exit
//! codes, progress only on a terminal).
//!
//! The corpus checks run each solution through its shim, two at a time; they take a few
//! minutes on two cores.

use std::path::{Path, PathBuf};

use crate::common::{Ran, dlqspec, node_tests, path_arg, ran, run, two_at_a_time};
use crate::corpus::{KNOWN_SURVIVORS, implementation, selected};
use crate::promises::{progress_marks, terminal};

fn name_of(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// The cases per contract every corpus search here runs: explore's default, given as
/// `--cases`, so that what each search covers is a number of cases, never a time.
const CASES: &str = "400";

/// `dlqspec explore --impl SOLUTION --seed 1 --cases 400 --output OUT`: the default budget,
/// counted in cases.
fn explore(solution: &Path, out: &Path) -> Ran {
    ran(dlqspec()
        .env_remove("DLQSPEC_SHIMS")
        .args([
            "explore",
            "--impl",
            &implementation(solution),
            "--seed",
            "1",
            "--cases",
            CASES,
        ])
        .arg("--output")
        .arg(out)
        .output()
        .expect("dlqspec runs"))
}

/// The spec files in `dir`.
fn specs_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Broken solutions explored on every test run: both contracts, every language, the mistakes
/// that take explore longest to find with seed 1 (`dlq_replay_sorted.mjs`, 164 cases;
/// `dlq_replay_put_order.py`, 94), and a known survivor. The ignored test below explores them
/// all.
const SAMPLE: &[&str] = &[
    "dlq_ack_before_put.ts",
    "dlq_error_args0.py",
    "dlq_error_template.mjs",
    "dlq_no_default.js",
    "dlq_no_poison.py",
    "dlq_replay_put_order.py",
    "dlq_replay_sorted.mjs",
    "oq_bitwise_int.mjs",
    "oq_bool_budget.py",
    "oq_includes_substring.js",
    "oq_typeerror_budget.mjs",
];

#[test]
fn explore_finds_a_sample_of_broken_solutions_with_a_spec_each_fails_and_the_built_in_passes() {
    let all = crate::corpus::solutions("tests/solutions");
    let sample: Vec<PathBuf> = SAMPLE
        .iter()
        .map(|name| {
            all.iter()
                .find(|p| name_of(p) == *name)
                .unwrap_or_else(|| panic!("{name} is not in tests/solutions: update SAMPLE"))
                .clone()
        })
        .filter(|p| selected("tests/solutions").contains(p))
        .collect();
    explore_each_broken(&sample);
}

/// Every broken solution of the corpus, as the "done when" asks; a few minutes on two
/// cores. `cargo test --release --test integration every_broken -- --ignored`
#[test]
#[ignore]
fn explore_finds_every_broken_solution_with_a_spec_it_fails_and_the_built_in_passes() {
    let paths: Vec<PathBuf> = selected("tests/solutions")
        .into_iter()
        .filter(|p| !name_of(p).starts_with("only_"))
        .collect();
    explore_each_broken(&paths);
}

/// Explores each of `paths` with seed 1 and the default budget: each must be found (but the
/// known survivors, which must not be), with a spec that fails there, is free of smells, and
/// that the built-in passes.
fn explore_each_broken(paths: &[PathBuf]) {
    let out = tempfile::tempdir().expect("temp dir");
    let results = two_at_a_time(paths, &|path: &PathBuf| {
        let dir = out.path().join(name_of(path));
        let explored = explore(path, &dir);
        let specs = specs_in(&dir);
        // The spec must fail on the very solution it was found on, and be ready for specs/:
        // lint finds no smell in it (linted alone: specs found on two solutions may share a
        // name).
        let checked = specs.first().map(|spec| {
            let failed = ran(dlqspec()
                .env_remove("DLQSPEC_SHIMS")
                .args(["run", path_arg(spec), "--impl", &implementation(path)])
                .output()
                .expect("dlqspec runs"));
            (failed, run(&["lint", path_arg(spec)]))
        });
        (explored, specs, checked)
    });
    let mut written = 0;
    for (path, (explored, specs, checked)) in paths.iter().zip(results) {
        let name = name_of(path);
        assert!(
            explored
                .stdout
                .contains("seed 1 (`--seed 1` replays this run)"),
            "{name}: the seed is not in the output\n{}",
            explored.stdout
        );
        if let Some((_, why)) = KNOWN_SURVIVORS.iter().find(|(s, _)| *s == name) {
            assert_eq!(
                explored.code, 0,
                "{name} is a known survivor ({why}), yet explore found something: remove it from KNOWN_SURVIVORS\n{}",
                explored.stdout
            );
            assert!(specs.is_empty());
            continue;
        }
        assert_eq!(
            explored.code, 1,
            "{name}: explore found nothing within its default budget\n{}{}",
            explored.stdout, explored.stderr
        );
        assert_eq!(specs.len(), 1, "{name}: {specs:?}\n{}", explored.stdout);
        let (failed_there, linted) = checked.expect("a spec");
        assert_eq!(
            failed_there.code, 1,
            "{name}: the spec explore wrote does not fail there\n{}",
            failed_there.stdout
        );
        assert!(
            failed_there.stdout.contains("FAIL "),
            "{}",
            failed_there.stdout
        );
        assert_eq!(linted.code, 0, "{name}: {}", linted.stdout);
        written += 1;
    }
    // Every spec written passes on the built-in.
    let all = out.path().display().to_string();
    let passed = run(&["run", &all]);
    assert_eq!(passed.code, 0, "{}", passed.stdout);
    assert!(
        passed
            .stdout
            .ends_with(&format!("{written} passed, 0 failed\n")),
        "{}",
        passed.stdout
    );
}

/// The examples' solutions this run can run (the JavaScript ones need Node): correct ones.
fn examples() -> Vec<PathBuf> {
    let node = node_tests();
    [
        "examples/python/solution.py",
        "examples/javascript/solution.mjs",
        "examples/commonjs/solution.js",
        "examples/typescript/solution.ts",
    ]
    .into_iter()
    .filter(|example| node || example.ends_with(".py"))
    .map(|example| crate::common::root().join(example))
    .collect()
}

/// Broken solutions only a handler call that takes time (`takes`) or raises a subclass of a
/// given error (`class`) shows, and what the spec explore shrinks each to must then script:
/// the mistake's cause, and nothing the mistake does not need.
const SLOW_OR_SUBCLASS: &[(&str, &str, &str)] = &[
    ("dlq_failed_at_before_handler.ts", "takes: ", "class: "),
    ("dlq_subclass_blind.py", "class: ", "takes: "),
    ("dlq_subclass_by_name.js", "class: ", "takes: "),
    ("dlq_error_names_given_class.mjs", "class: ", "takes: "),
];

#[test]
fn explore_finds_a_slow_handler_call_or_a_subclass_and_shrinks_to_what_the_mistake_needs() {
    let solutions: Vec<PathBuf> = SLOW_OR_SUBCLASS
        .iter()
        .map(|(name, ..)| crate::common::root().join("tests/solutions").join(name))
        .filter(|path| selected("tests/solutions").contains(path))
        .collect();
    let out = tempfile::tempdir().expect("temp dir");
    let found = two_at_a_time(&solutions, &|path: &PathBuf| {
        let dir = out.path().join(name_of(path));
        let explored = explore(path, &dir);
        let spec = specs_in(&dir).into_iter().next();
        // The spec fails on the solution it was found on, passes on the built-in and on every
        // example (correct solutions, written apart from explore).
        let verdicts = spec.as_ref().map(|spec| {
            let mut on = vec![(implementation(path), 1)];
            on.push(("builtin".to_owned(), 0));
            on.extend(
                examples()
                    .iter()
                    .map(|example| (implementation(example), 0)),
            );
            on.into_iter()
                .map(|(target, wanted)| {
                    let judged = ran(dlqspec()
                        .env_remove("DLQSPEC_SHIMS")
                        .args(["run", path_arg(spec), "--impl", &target])
                        .output()
                        .expect("dlqspec runs"));
                    (target, wanted, judged)
                })
                .collect::<Vec<_>>()
        });
        (explored, spec, verdicts)
    });
    for (path, (explored, spec, verdicts)) in solutions.iter().zip(found) {
        let name = name_of(path);
        let (_, needed, needless) = SLOW_OR_SUBCLASS
            .iter()
            .find(|(solution, ..)| *solution == name)
            .expect("listed");
        assert_eq!(
            explored.code, 1,
            "{name}: explore found nothing in {CASES} cases\n{}{}",
            explored.stdout, explored.stderr
        );
        let spec = spec.unwrap_or_else(|| panic!("{name}: no spec written\n{}", explored.stdout));
        let text = std::fs::read_to_string(&spec).expect("the spec");
        let handler: Vec<&str> = text
            .lines()
            .skip_while(|line| *line != "handler:")
            .take_while(|line| *line != "steps:")
            .collect();
        assert!(
            handler.iter().any(|line| line.contains(needed))
                && !handler.iter().any(|line| line.contains(needless)),
            "{name}: the shrunk spec's handler should script `{needed}` and no `{needless}`:\n{text}"
        );
        for (target, wanted, judged) in verdicts.expect("judged") {
            assert_eq!(
                judged.code, wanted,
                "{name}: the spec explore wrote, run on {target}:\n{text}\n{}{}",
                judged.stdout, judged.stderr
            );
        }
    }
}

#[test]
fn explore_finds_nothing_in_any_correct_solution_within_the_same_budget() {
    let mut paths = selected("tests/precision");
    paths.extend(examples());
    let out = tempfile::tempdir().expect("temp dir");
    let results = two_at_a_time(&paths, &|path: &PathBuf| {
        explore(path, &out.path().join(name_of(path)))
    });
    for (path, explored) in paths.iter().zip(results) {
        assert_eq!(
            explored.code,
            0,
            "{} is correct, yet explore reports a divergence:\n{}{}",
            implementation(path),
            explored.stdout,
            explored.stderr
        );
        assert!(
            explored.stdout.contains("no divergence: ") && explored.stdout.contains("seed 1"),
            "{}",
            explored.stdout
        );
        // Every case of the budget ran for each contract the solution provides, slow handler
        // calls and subclasses among them: the budget is cases, so no machine is too slow to
        // run them all.
        for contract in ["dlq-consumer", "outcome-queue"] {
            let skipped = explored.stdout.contains(&format!("skipped {contract}: "));
            assert!(
                skipped || explored.stdout.contains(&format!("{CASES} {contract}")),
                "{}: not every case of {contract} ran\n{}",
                implementation(path),
                explored.stdout
            );
        }
    }
}

#[test]
fn explore_on_the_built_in_finds_nothing_and_prints_its_seed() {
    let ran = run(&["explore", "--cases", "30"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let seed = ran
        .stdout
        .split("seed ")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ']).next())
        .expect("the seed is printed as it starts");
    assert!(seed.parse::<u64>().is_ok(), "{}", ran.stdout);
    assert!(
        ran.stdout.ends_with(&format!(
            "; seed {seed} (`--seed {seed}` replays this run)\n"
        )),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("no divergence: 60 cases (30 dlq-consumer, 30 outcome-queue) in "),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_seed_replays_the_same_finding_byte_for_byte() {
    let solution = "python:tests/solutions/dlq_error_truncated.py";
    let found = |out: &Path| {
        let ran = ran(dlqspec()
            .args(["explore", "--impl", solution, "--seed", "77", "--output"])
            .arg(out)
            .output()
            .expect("dlqspec runs"));
        assert_eq!(ran.code, 1, "{}", ran.stdout);
        let specs = specs_in(out);
        assert_eq!(specs.len(), 1, "{}", ran.stdout);
        std::fs::read_to_string(&specs[0]).expect("the spec")
    };
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let spec = found(first.path());
    assert_eq!(spec, found(second.path()));
    assert!(spec.contains("(explore seed 77, case "), "{spec}");
    assert!(
        spec.contains("Found by `dlqspec explore --seed 77` against"),
        "{spec}"
    );
}

#[test]
fn without_out_the_spec_is_printed_with_its_diff() {
    let ran = run(&[
        "explore",
        "--impl",
        "python:tests/solutions/dlq_retry_permanent.py",
        "--seed",
        "3",
    ]);
    assert_eq!(ran.code, 1, "{}", ran.stdout);
    for expected in [
        "FOUND dlq-consumer diverges in explore seed 3, case ",
        "divergence at step ",
        "--- expected\n+++ actual\n",
        "`--output DIR` writes it):\n# yaml-language-server: $schema=../../schema/dlqspec.schema.json\ncontract: dlq-consumer\n",
        "found a divergence: ",
    ] {
        assert!(
            ran.stdout.contains(expected),
            "no {expected:?} in\n{}",
            ran.stdout
        );
    }
    // outcome-queue is skipped, with the reason, rather than explored in vain.
    assert!(
        ran.stdout.contains(
            "skipped outcome-queue: python:tests/solutions/dlq_retry_permanent.py has no class RetryQueue\n"
        ),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_budget_stops_exploring_before_the_cases_run_out() {
    let ran = run(&[
        "explore",
        "--contract",
        "outcome-queue",
        "--cases",
        "1000000",
        "--budget",
        "0.5",
        "--seed",
        "2",
    ]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert!(ran.stdout.contains("for at most 0.5 s"), "{}", ran.stdout);
    assert!(
        !ran.stdout.contains("1000000 outcome-queue"),
        "{}",
        ran.stdout
    );
}

#[test]
fn usage_errors_exit_2_and_say_what_to_write() {
    let file = tempfile::NamedTempFile::new().expect("a file");
    let file = path_arg(file.path()).to_owned();
    for (args, says) in [
        (
            vec!["explore", "--crashes", "1"],
            "--crashes runs the scenario of one spec",
        ),
        (
            vec!["explore", "--contract", "nope"],
            "unknown contract `nope`; expected one of dlq-consumer, outcome-queue",
        ),
        (vec!["explore", "--cases", "0"], "0 is not in 1.."),
        (
            vec!["explore", "--budget", "soon"],
            "expected a number of seconds",
        ),
        (vec!["explore", "--output", &file], "a file, not a folder"),
        (
            vec![
                "explore",
                "specs/dlq-consumer/poison-cycle.yaml",
                "--seed",
                "3",
            ],
            "with a SPEC, every crash schedule of its scenario runs",
        ),
        (
            vec![
                "explore",
                "specs/outcome-queue/success-moves-to-done.yaml",
                "--crashes",
                "1",
            ],
            "outcome-queue is an exercise folder: its crashes are the spec's own `restart` steps",
        ),
        (
            vec![
                "explore",
                "specs/dlq-consumer/poison-cycle.yaml",
                "--crashes",
                "9",
            ],
            "9 is not in 0..=4",
        ),
        (vec!["strength", "--output", &file], "a file, not a folder"),
    ] {
        let ran = run(&args);
        assert_eq!(ran.code, 2, "{args:?}\n{}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stderr.contains(says),
            "{args:?}: no {says:?} in\n{}",
            ran.stderr
        );
    }
}

#[test]
fn a_broken_spec_is_a_spec_error_for_crash_schedules_too() {
    let (_dir, spec) = crate::common::temp_spec(
        "broken.yaml",
        "contract: dlq-consumer\nname: t\nsteps:\n  - proces: ok\n",
    );
    let ran = run(&["explore", path_arg(&spec), "--crashes", "1"]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stderr.contains("`proces`"), "{}", ran.stderr);
}

#[test]
fn crash_schedules_keep_every_invariant_on_the_built_in_and_report_their_rate() {
    let ran = run(&[
        "explore",
        "specs/dlq-consumer/replay-given-ids-in-their-order.yaml",
        "--crashes",
        "2",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("  - no id is in the DLQ twice\n"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("every invariant holds: "),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains(" schedules/s (exhaustive, so no seed)\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn crash_schedules_find_a_lost_message_and_write_a_spec_the_built_in_passes() {
    let out = tempfile::tempdir().expect("temp dir");
    let solution = "python:tests/solutions/dlq_ack_before_put.py";
    let ran = ran(dlqspec()
        .args([
            "explore",
            "specs/dlq-consumer/permanent-on-the-first-delivery.yaml",
            "--crashes",
            "1",
            "--impl",
            solution,
            "--output",
        ])
        .arg(out.path())
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("VIOLATED with a crash after queue.ack in step "),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("is lost"), "{}", ran.stdout);
    let specs = specs_in(out.path());
    assert_eq!(specs.len(), 1, "{}", ran.stdout);
    let spec = path_arg(&specs[0]);
    assert_eq!(run(&["run", spec]).code, 0);
    assert_eq!(run(&["run", spec, "--impl", solution]).code, 1);
}

#[test]
fn correct_solutions_keep_every_invariant_under_every_schedule_of_two_crashes() {
    let paths = selected("tests/precision");
    let results = two_at_a_time(&paths, &|path: &PathBuf| {
        ran(dlqspec()
            .env_remove("DLQSPEC_SHIMS")
            .args([
                "explore",
                "specs/dlq-consumer/replay-given-ids-in-their-order.yaml",
                "--crashes",
                "2",
                "--impl",
                &implementation(path),
            ])
            .output()
            .expect("dlqspec runs"))
    });
    for (path, ran) in paths.iter().zip(results) {
        // A solution with no DLQConsumer (a class, or a constructor function) cannot be
        // explored, and that is no pass.
        if !std::fs::read_to_string(path)
            .unwrap_or_default()
            .contains("DLQConsumer")
        {
            assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
            assert!(
                ran.stderr
                    .contains("has no class DLQConsumer: nothing to explore"),
                "{}",
                ran.stderr
            );
            continue;
        }
        assert_eq!(
            ran.code,
            0,
            "{} is correct, yet a crash schedule breaks an invariant:\n{}{}",
            implementation(path),
            ran.stdout,
            ran.stderr
        );
    }
}

#[test]
fn the_progress_line_shows_on_a_terminal_only() {
    let command = || {
        let mut command = dlqspec();
        command
            .env_remove("CI")
            .env("TERM", "xterm-256color")
            .args(["explore", "--cases", "250", "--seed", "4"]);
        command
    };
    let on_terminal = terminal::run_on_terminals(command(), true, true);
    assert_eq!(on_terminal.code, 0, "{}", on_terminal.stdout);
    assert!(
        !progress_marks(&on_terminal.stderr).is_empty(),
        "no progress line on a terminal:\n{}",
        on_terminal.stderr
    );
    let piped = ran(command().output().expect("dlqspec runs"));
    assert_eq!(piped.code, 0);
    assert_eq!(progress_marks(&piped.stderr), Vec::<String>::new());
    assert_eq!(piped.stderr, "");
}

#[test]
fn an_implementation_that_does_not_start_exits_1_and_still_names_the_seed() {
    let ran = run(&["explore", "--impl", "cmd:false", "--seed", "5"]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains(" cannot be explored: ")
            && ran
                .stderr
                .contains("; seed 5 (`--seed 5` replays this run)\n"),
        "{}",
        ran.stderr
    );
}

/// A solution of an exercise explored without `--exercise` provides none of the contracts
/// explored: no case is drawn, which is no pass, and the message says how to name its folder.
#[test]
fn explore_of_a_solution_no_contract_explored_provides_says_to_name_its_exercise() {
    let ran = run(&[
        "explore",
        "--seed",
        "1",
        "--cases",
        "5",
        "--impl",
        "python:exercises/bounded-buffer/reference.py",
    ]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("nothing to explore"), "{}", ran.stdout);
    assert!(
        ran.stderr
            .contains("provides none of the contracts explored")
            && ran.stderr.contains("--exercise DIR"),
        "{}",
        ran.stderr
    );
}
