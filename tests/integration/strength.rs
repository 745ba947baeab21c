//! `dlqspec strength` on the real binary: the bundled suite catches every classic mistake of
//! both catalogues, and a smaller suite's survivors are listed with their rule, their mistake
//! and a spec explore found to catch each.

use crate::common::{dlqspec, path_arg, ran, run};

#[test]
fn the_bundled_suite_catches_every_mistake_and_lists_the_catalogue() {
    let ran = run(&["strength", "specs"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let total: usize = crate::common::bundled_contracts()
        .iter()
        .map(|c| c.mistakes().len())
        .sum();
    let specs = dlqspec::load::discover::spec_files(&[crate::common::root().join("specs")])
        .expect("the bundled suite")
        .len();
    assert!(
        ran.stdout.ends_with(&format!(
            "every mistake is caught: {specs} specs catch {total} of {total} classic mistakes (100%)\n"
        )),
        "{}",
        ran.stdout
    );
    for contract in crate::common::bundled_contracts() {
        for mistake in contract.mistakes() {
            let listed = ran.stdout.lines().any(|line| {
                line.starts_with("  caught ") && line.split_whitespace().nth(1) == Some(mistake.id)
            });
            assert!(
                listed,
                "{} is not listed as caught:\n{}",
                mistake.id, ran.stdout
            );
        }
        let n = contract.mistakes().len();
        assert!(
            ran.stdout
                .contains(&format!(" catch {n} of {n} classic mistakes\n")),
            "{}",
            ran.stdout
        );
    }
}

#[test]
fn a_small_suite_lists_its_survivors_with_a_spec_that_catches_each() {
    let out = tempfile::tempdir().expect("temp dir");
    let ran = ran(dlqspec()
        .args([
            "strength",
            "specs/outcome-queue/replay-twice-returns-false.yaml",
            "--output",
        ])
        .arg(out.path())
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let survivors: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|line| line.starts_with("  SURVIVES  "))
        .collect();
    assert!(!survivors.is_empty(), "{}", ran.stdout);
    assert!(
        ran.stdout.ends_with(&format!(
            " survive: 1 spec catches {} of 35 classic mistakes ({}%); explore seed 1 (`--seed 1` replays its searches)\n",
            35 - survivors.len(),
            (100.0 * (35 - survivors.len()) as f64 / 35.0).round()
        )),
        "{}",
        ran.stdout
    );
    // Each survivor names the rule it breaks, then the mistake, then where its spec went.
    let contract = crate::common::bundled_contract("outcome-queue").expect("registered");
    for line in &survivors {
        let id = line.split_whitespace().nth(1).expect("an id");
        let mistake = contract
            .mistakes()
            .iter()
            .find(|m| m.id == id)
            .expect("a mistake of the catalogue");
        assert!(
            line.ends_with(&format!("breaks {}", mistake.rule.id)),
            "{line}"
        );
        assert!(
            ran.stdout
                .contains(&format!("the mistake: {}\n", mistake.what)),
            "{}",
            ran.stdout
        );
    }
    let written: Vec<_> = std::fs::read_dir(out.path())
        .expect("the folder")
        .map(|e| e.expect("entry").path())
        .collect();
    // Explore draws from exercise.yaml's draws; the mistakes that need what its short cases
    // rarely reach (a replay from the middle of a long quarantine, an edit inside an entry of a
    // view, two jobs quarantined before a view is compared: seed 1 finds the last in none of
    // its 400 cases, seeds 2 and 3 at cases 99 and 209) may survive its search, and say so;
    // no other does.
    const HARD: [&str; 7] = [
        "quarantine-integer-keys-first",
        "quarantine-newest-first",
        "replay-skips-empty-payload",
        "replay-swap-remove",
        "shallow-state",
        "shared-done",
        "substring-outcome",
    ];
    let unfound = ran
        .stdout
        .matches("explore found no spec that catches it")
        .count();
    for (at, _) in ran
        .stdout
        .match_indices("explore found no spec that catches it")
    {
        let survivor = ran.stdout[..at]
            .rsplit("  SURVIVES  ")
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default();
        assert!(HARD.contains(&survivor), "{survivor}: {}", ran.stdout);
    }
    assert_eq!(written.len(), survivors.len() - unfound, "{}", ran.stdout);
    assert!(
        written
            .iter()
            .all(|p| p.to_string_lossy().contains("outcome-queue-catches-")),
        "{written:?}"
    );
    // The suggested specs are good specs: the built-in passes them, lint finds nothing.
    let folder = path_arg(out.path());
    let passed = run(&["run", folder]);
    assert_eq!(passed.code, 0, "{}", passed.stdout);
    // Linted as files: one file covers few rules, so rule coverage is not judged.
    let mut lint = vec!["lint"];
    lint.extend(written.iter().map(|p| path_arg(p)));
    let linted = run(&lint);
    assert_eq!(linted.code, 0, "{}", linted.stdout);
    // And together with the suite, and the bundled specs of those explore may not find,
    // they catch every mistake.
    let stronger = run(&[
        "strength",
        "specs/outcome-queue/replay-twice-returns-false.yaml",
        "specs/outcome-queue/replay-an-empty-payload.yaml",
        "specs/outcome-queue/integer-like-ids-keep-quarantine-order.yaml",
        "specs/outcome-queue/replay-names-every-object-has.yaml",
        "specs/outcome-queue/replay-from-the-middle-keeps-the-rest-in-order.yaml",
        "specs/outcome-queue/state-view-entries-edited.yaml",
        folder,
        "--explore-cases",
        "0",
    ]);
    assert_eq!(stronger.code, 0, "{}", stronger.stdout);
}

#[test]
fn a_broken_spec_judges_nobody_and_exits_2() {
    let (_dir, spec) = crate::common::temp_spec(
        "wrong.yaml",
        "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [ok]}\nsteps: [{process: dead}]\n",
    );
    let ran = run(&["strength", path_arg(&spec), "--explore-cases", "0"]);
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.contains("it judges no implementation"),
        "{}",
        ran.stdout
    );
}
