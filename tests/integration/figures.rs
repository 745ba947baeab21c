//! The figures of docs/testing.md are the suite's own: each count in its table is derived here
//! from the folders and catalogues it describes, so removing a spec, a solution or a fixture
//! without updating the table fails.

use std::collections::BTreeMap;

use dlqspec::load::discover;

use crate::common::root;
use crate::corpus::{KNOWN_SURVIVORS, solutions};
use crate::mutations::mutants_of;

/// The rows of docs/testing.md's table whose header is `| checked in CI | count |`.
fn documented_figures() -> BTreeMap<String, usize> {
    let doc = std::fs::read_to_string(root().join("docs/testing.md")).expect("docs/testing.md");
    let table = doc
        .split("| checked in CI | count |")
        .nth(1)
        .expect("docs/testing.md has the table of figures");
    table
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let count = cells[1].parse().expect("a whole number");
            (cells[0].to_owned(), count)
        })
        .collect()
}

fn specs_of(contract: &str) -> usize {
    discover::spec_files(&[root().join("specs").join(contract)])
        .expect("the bundled suite")
        .len()
}

#[test]
fn the_documented_figures_are_the_counts_of_the_suite() {
    let broken: usize = solutions("tests/solutions")
        .iter()
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("only_"))
        })
        .count();
    let mistakes = |name: &str| {
        crate::common::bundled_contract(name)
            .expect("a contract")
            .mistakes()
            .len()
    };
    let mutants: usize = crate::mutations::mutated_specs()
        .iter()
        .map(|spec| mutants_of(spec).len())
        .sum();
    let fixtures = std::fs::read_dir(root().join("tests/fixtures/broken"))
        .expect("fixtures")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        })
        .count();
    let derived: BTreeMap<String, usize> = [
        ("bundled specs of dlq-consumer", specs_of("dlq-consumer")),
        ("bundled specs of outcome-queue", specs_of("outcome-queue")),
        (
            "correct solutions in the precision corpus, each passing every bundled spec",
            solutions("tests/precision").len(),
        ),
        (
            "broken solutions, each failing a spec of the rule it breaks with a diff",
            broken - KNOWN_SURVIVORS.len(),
        ),
        (
            "broken solutions no language-neutral spec can catch, listed with the reason",
            KNOWN_SURVIVORS.len(),
        ),
        (
            "classic mistakes of the dlq-consumer reference, each failing a spec of its rule",
            mistakes("dlq-consumer"),
        ),
        (
            "classic mistakes of the outcome-queue reference, each failing a spec of its rule",
            mistakes("outcome-queue"),
        ),
        (
            "changed expectation values, each failing with a diff of that value",
            mutants,
        ),
        (
            "broken spec fixtures, each with its exact `path:line:col` message",
            fixtures,
        ),
    ]
    .into_iter()
    .map(|(label, count)| (label.to_owned(), count))
    .collect();
    assert_eq!(
        documented_figures(),
        derived,
        "update the table of figures in docs/testing.md"
    );
}

/// The protocol page's speed notes name the suite they measured: its count of specs, and of
/// round trips with the optional features and without them, counted here from the protocol
/// log of a run of the Python reference solution. A round trip is a write of dlqspec's that it
/// waits on: the lines it writes one after another (requests written ahead) are one.
#[test]
fn the_protocol_speed_notes_count_the_suite_and_its_round_trips() {
    let page = std::fs::read_to_string(root().join("docs/protocol.md")).expect("docs/protocol.md");
    // Read as one line: where the page wraps its lines changes no figure.
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let note = page
        .split("bundled suite of ")
        .nth(1)
        .expect("the speed notes name the suite");
    let number = |text: &str| -> usize {
        text.replace(',', "")
            .parse()
            .unwrap_or_else(|_| panic!("a number: {text:?}"))
    };
    let specs_said = number(note.split(" specs").next().unwrap_or_default());
    let trips = note
        .split("about ")
        .nth(1)
        .expect("a number of round trips");
    let trips_said = number(trips.split(" round trips").next().unwrap_or_default());
    let without_said = number(
        trips
            .split(" with the optional features and ")
            .nth(1)
            .and_then(|rest| rest.split(" without").next())
            .expect("the round trips without the features"),
    );
    assert_eq!(
        specs_said,
        specs_of("dlq-consumer") + specs_of("outcome-queue"),
        "docs/protocol.md's speed notes"
    );
    let round_trips = |features: Option<&str>| {
        let log = tempfile::tempdir().expect("a temp dir");
        let log_file = log.path().join("protocol.log");
        let mut command = crate::common::dlqspec();
        command.env("DLQSPEC_PROTOCOL_LOG", &log_file).args([
            "run",
            "specs",
            "--impl",
            "python:examples/python/solution.py",
        ]);
        if let Some(features) = features {
            command.env("DLQSPEC_FEATURES", features);
        }
        let ran = crate::common::ran(command.output().expect("dlqspec runs"));
        assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
        let logged = std::fs::read_to_string(&log_file).expect("the protocol log");
        // The solution's traffic only: an exercise's reference (outcome-queue's) is a program
        // too, and its lines, by its own pid, interleave with the solution's as threads run.
        let solution: Vec<&str> = logged
            .lines()
            .filter(|line| line.contains(" < ") && line.contains("\"name\":\"solution.py\""))
            .filter_map(|line| line.split(' ').next())
            .collect();
        let mut trips = 0;
        for pid in solution {
            let directions: Vec<bool> = logged
                .lines()
                .filter(|line| line.split(' ').next() == Some(pid))
                .map(|line| line.contains(" > "))
                .collect();
            // Each run of lines dlqspec wrote one after another, before it read again.
            trips += directions
                .iter()
                .enumerate()
                .filter(|&(at, &wrote)| wrote && (at == 0 || !directions[at - 1]))
                .count();
        }
        trips
    };
    assert_eq!(
        trips_said,
        round_trips(None),
        "docs/protocol.md's round trips"
    );
    assert_eq!(
        without_said,
        round_trips(Some("")),
        "docs/protocol.md's round trips without the features"
    );
}
