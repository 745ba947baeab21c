//! The adversarial suite: hostile submissions against `run`, `grade` and the report formats,
//! one test per attack class of docs/security.md, each asserting on the verdict, the files
//! and the processes left. Honest solutions beside them must keep their true verdicts.

mod bounds;
mod container;
mod sandbox;
mod trust;
mod verdict;
mod warm;

/// tests/hostile/README.md's table names every hostile file there, and only those: an attack
/// added without a row (or a row left for a file gone) fails here.
#[test]
fn every_hostile_file_has_a_row() {
    let folder = crate::common::root().join("tests/hostile");
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    let mut rowed = std::collections::BTreeSet::new();
    for row in readme.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).unwrap_or_default();
        for name in first.split('`').skip(1).step_by(2) {
            rowed.insert(name.to_owned());
        }
    }
    let files: std::collections::BTreeSet<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "README.md")
        .collect();
    let unlisted: Vec<_> = files.difference(&rowed).collect();
    let gone: Vec<_> = rowed.difference(&files).collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "tests/hostile/README.md: files without a row {unlisted:?}, rows without a file {gone:?}"
    );
}
