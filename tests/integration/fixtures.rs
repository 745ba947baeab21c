//! Broken specs: each fixture in tests/fixtures/broken is a spec error at an exact place.
//!
//! Beside every `NAME.yaml` lies `run@NAME.yaml.snap`, a snapshot of what `dlqspec run
//! NAME.yaml` reports, whole: exit code 2, the `path:line:col`, the line with a caret under the
//! place, what was expected there and the nearest valid word. `INSTA_UPDATE=always cargo test
//! --test integration fixtures` writes them anew (docs/testing.md, Snapshots).

use crate::common::{root, run, shown_for_snapshot, snapshot_settings};

const FOLDER: &str = "tests/fixtures/broken";

/// The files of the fixtures folder whose names end with `suffix`, sorted.
fn named(suffix: &str) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(root().join(FOLDER))
        .expect("the fixtures folder")
        .map(|entry| {
            entry
                .expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(suffix))
        .collect();
    found.sort();
    found
}

#[test]
fn every_broken_fixture_has_its_snapshot_and_every_snapshot_its_fixture() {
    let specs = named(".yaml");
    let snapshots: Vec<String> = named(".snap")
        .iter()
        .map(|snap| {
            snap.strip_prefix("run@")
                .and_then(|name| name.strip_suffix(".snap"))
                .unwrap_or(snap)
                .to_owned()
        })
        .collect();
    assert_eq!(specs, snapshots);
    // How many there are is a figure of docs/testing.md, checked in figures.rs.
    assert!(!specs.is_empty());
}

#[test]
fn every_broken_fixture_is_a_spec_error_reported_as_its_snapshot() {
    let mut settings = snapshot_settings();
    settings.set_snapshot_path(root().join(FOLDER));
    settings.bind(|| {
        insta::glob!("../fixtures/broken", "*.yaml", |path| {
            let name = path.file_name().expect("a name").to_string_lossy();
            let ran = run(&["run", &format!("{FOLDER}/{name}")]);
            insta::assert_snapshot!("run", shown_for_snapshot(&ran));
        });
    });
}

#[test]
fn the_broken_folder_as_a_whole_is_all_spec_errors() {
    let count = named(".yaml").len();
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
