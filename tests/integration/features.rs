//! The protocol's optional feature (foresight) saves round trips and changes no report: every
//! solution gets the same report with it as without, it is used, and it tells a solution
//! nothing but the world's answers.

use std::path::Path;

use crate::common::{dlqspec, node_tests, ran, root};

/// The report of the bundled suite on `implementation`, output shown, with the features
/// `DLQSPEC_FEATURES` allows (`None`: all), and its exit code.
fn report(implementation: &str, features: Option<&str>, log: Option<&Path>) -> (i32, String) {
    let mut command = dlqspec();
    command.args(["run", "specs", "--show-output", "--impl", implementation]);
    if let Some(features) = features {
        command.env("DLQSPEC_FEATURES", features);
    }
    if let Some(log) = log {
        command.env("DLQSPEC_PROTOCOL_LOG", log);
    }
    let ran = ran(command.output().expect("dlqspec runs"));
    (ran.code, ran.stdout)
}

/// The solutions to compare: the examples and every broken one, in both languages.
fn solutions() -> Vec<String> {
    let mut solutions = vec!["python:examples/python/solution.py".to_owned()];
    let node = node_tests();
    if node {
        solutions.push("node:examples/javascript/solution.mjs".to_owned());
        solutions.push("node:examples/typescript/solution.ts".to_owned());
    }
    let mut broken: Vec<String> = std::fs::read_dir(root().join("tests/solutions"))
        .expect("tests/solutions")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter_map(|name| match name.rsplit_once('.') {
            Some((_, "py")) => Some(format!("python:tests/solutions/{name}")),
            Some((_, "mjs" | "js" | "ts")) if node && !name.ends_with(".d.ts") => {
                Some(format!("node:tests/solutions/{name}"))
            }
            _ => None,
        })
        .collect();
    broken.sort();
    solutions.extend(broken);
    solutions
}

#[test]
fn every_solution_gets_the_same_report_with_the_features_as_without() {
    let solutions = solutions();
    assert!(solutions.len() > 30, "{solutions:?}");
    let mut failing = 0;
    for implementation in &solutions {
        let with = report(implementation, None, None);
        let without = report(implementation, Some(""), None);
        assert_eq!(
            with, without,
            "{implementation}: the features changed the report"
        );
        // Each foresight not followed (a broken solution's own order) costs only its wait.
        failing += usize::from(with.0 != 0);
    }
    // Most of them fail (some broken ones pass the bundled suite, by design of what they
    // break): the comparison is over reports that have diffs in them.
    assert!(
        failing * 4 >= solutions.len() * 3,
        "{failing} of {}",
        solutions.len()
    );
}

#[test]
fn the_example_takes_the_foreseen_answers_which_are_the_worlds_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("protocol.log");
    let (code, _) = report("python:examples/python/solution.py", None, Some(&log));
    assert_eq!(code, 0);
    let log = std::fs::read_to_string(&log).expect("the protocol log");
    let lines: Vec<(char, serde_json::Value)> = log
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once(' ')?;
            let (direction, message) = rest.split_once(' ')?;
            Some((
                direction.chars().next()?,
                serde_json::from_str(message).ok()?,
            ))
        })
        .collect();
    let world: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|(direction, message)| *direction == '<' && message["type"] == "world")
        .map(|(_, message)| message)
        .collect();
    let foreseen: Vec<&str> = world
        .iter()
        .filter(|message| message["foreseen"] == true)
        .filter_map(|message| message["call"].as_str())
        .collect();
    // The example makes the calls every consumer makes first: each receive waits for nothing.
    assert!(world.len() > 300, "{}", world.len());
    let receives = world
        .iter()
        .filter(|message| message["call"] == "queue.receive")
        .count();
    let foreseen_receives = foreseen.iter().filter(|c| **c == "queue.receive").count();
    assert!(receives > 100, "{receives}");
    assert_eq!(foreseen_receives, receives);
    for call in &foreseen {
        assert!(
            ["queue.receive", "dlq.has", "dlq.entries"].contains(call),
            "{call}"
        );
    }
    // What is foreseen is the world's, never a consumer's decision: the same script for every
    // request, whatever the reference would do next (no retry, ack or put in it, and no
    // handler call, whose answer to a delivery the reference never hands it would say so).
    for (_, request) in lines.iter().filter(|(direction, _)| *direction == '>') {
        let Some(foresee) = request.get("foresee").and_then(|f| f.as_array()) else {
            continue;
        };
        let calls: Vec<&str> = foresee.iter().filter_map(|f| f["call"].as_str()).collect();
        let script: &[&[&str]] = &[
            &["queue.receive"],
            &["queue.receive", "dlq.has"],
            &["dlq.entries"],
        ];
        assert!(script.contains(&calls.as_slice()), "{request}");
    }
    // Without the feature, every world call waits for its answer.
    let log_off = dir.path().join("protocol-off.log");
    report(
        "python:examples/python/solution.py",
        Some(""),
        Some(&log_off),
    );
    let log_off = std::fs::read_to_string(&log_off).expect("the protocol log");
    assert!(!log_off.contains("\"foreseen\""));
    assert!(!log_off.contains("\"foresee\""));
}
