//! Broken specs: each fixture in tests/fixtures/broken is a spec error at an exact place.
//!
//! Beside every `NAME.yaml` lies `NAME.expected`, one line `path:line:col: message`: what
//! `dlqspec run NAME.yaml` must report, word for word, with exit code 2.

use std::path::PathBuf;

use crate::common::{root, run};

const FOLDER: &str = "tests/fixtures/broken";

/// The fixtures, as paths relative to the repository root (the way the binary shows them).
fn fixtures(extension: &str) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(root().join(FOLDER))
        .expect("the fixtures folder")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .map(|p| {
            let name = p
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            format!("{FOLDER}/{name}")
        })
        .collect();
    found.sort();
    found
}

struct Expected {
    path: String,
    line: usize,
    column: usize,
    message: String,
}

fn expected_for(fixture: &str) -> Expected {
    let file = PathBuf::from(fixture.replace(".yaml", ".expected"));
    let text = std::fs::read_to_string(root().join(&file))
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let line = text.trim_end_matches('\n');
    let mut parts = line.splitn(4, ':');
    let (Some(path), Some(l), Some(c), Some(message)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        panic!("{}: not `path:line:col: message`: {line}", file.display());
    };
    Expected {
        path: path.to_owned(),
        line: l.parse().expect("a line number"),
        column: c.parse().expect("a column number"),
        message: message
            .strip_prefix(' ')
            .expect("a space after the column")
            .to_owned(),
    }
}

#[test]
fn every_broken_fixture_has_an_expectation_beside_it() {
    let specs = fixtures("yaml");
    let expectations: Vec<String> = fixtures("expected")
        .iter()
        .map(|e| e.replace(".expected", ".yaml"))
        .collect();
    assert_eq!(specs, expectations);
    // How many there are is a figure of docs/testing.md, checked in figures.rs.
    assert!(!specs.is_empty());
}

#[test]
fn every_broken_fixture_is_a_spec_error_at_the_expected_place_and_wording() {
    let mut wrong = Vec::new();
    for fixture in fixtures("yaml") {
        let expected = expected_for(&fixture);
        assert_eq!(expected.path, fixture, "the .expected names another file");
        let ran = run(&["run", &fixture]);
        let source = std::fs::read_to_string(root().join(&fixture)).expect("fixture readable");
        let source_line = source.lines().nth(expected.line - 1).unwrap_or_default();
        let checks = [
            (ran.code == 2, format!("exit 2, got {}", ran.code)),
            (
                ran.stdout.starts_with(&format!("SPEC  {fixture}")),
                "a SPEC status line".to_owned(),
            ),
            (
                ran.stdout
                    .contains(&format!("      error: {}\n", expected.message)),
                format!("error: {}", expected.message),
            ),
            (
                ran.stdout.contains(&format!(
                    "--> {}:{}:{}\n",
                    fixture, expected.line, expected.column
                )),
                format!("--> {fixture}:{}:{}", expected.line, expected.column),
            ),
            (
                ran.stdout
                    .contains(&format!("{} | {source_line}\n", expected.line)),
                format!("the source line {}", expected.line),
            ),
        ];
        for (ok, what) in checks {
            if !ok {
                wrong.push(format!("{fixture}: expected {what}\n{}", ran.stdout));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_broken_folder_as_a_whole_is_all_spec_errors() {
    let count = fixtures("yaml").len();
    let ran = run(&["run", FOLDER]);
    assert_eq!(ran.code, 2, "{}", ran.stdout);
    assert!(
        ran.stdout.ends_with(&format!(
            "failed: {count} spec errors\n0 passed, {count} failed\n"
        )),
        "{}",
        ran.stdout
    );
}
