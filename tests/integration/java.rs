//! examples/java: a Java implementation of both contracts that speaks the protocol itself,
//! compiled once into a temp folder, passes the whole bundled suite through `cmd:`, and a copy
//! broken on purpose fails with the diff its bug makes. The JDK tier: skipped, and said, where
//! there is no `javac` (common::Tier).

use std::path::Path;
use std::process::Command;

use crate::common::{Ran, Tier, dlqspec, ran, root, suite, tier};

/// The JVM options the example's README gives: a small heap, so that the JVM starts under
/// `--memory` limits well below its default reservation, and no perf-data file written.
const JVM_OPTIONS: &str = "-XX:-UsePerfData -Xmx64m -XX:+UseSerialGC";

/// Compiles `source` (a Main.java) into `classes`.
fn javac(source: &Path, classes: &Path) {
    let compiled = Command::new("javac")
        .arg("-d")
        .arg(classes)
        .arg(source)
        .output()
        .expect("javac runs: install a JDK (apt-get install openjdk-17-jdk-headless)");
    assert!(
        compiled.status.success(),
        "javac {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );
}

fn run_java(classes: &Path, specs: &[String]) -> Ran {
    let implementation = format!("cmd:java {JVM_OPTIONS} -cp {} Main", classes.display());
    ran(dlqspec()
        .env_remove("DLQSPEC_PROTOCOL_LOG")
        .args(["run", "--impl", &implementation])
        .args(specs)
        .output()
        .expect("dlqspec runs"))
}

#[test]
fn the_java_example_passes_the_suite_and_a_broken_copy_fails_with_its_diff() {
    if !tier(Tier::Jdk) {
        return;
    }
    let work = tempfile::tempdir().expect("a temp dir");
    let classes = work.path().join("classes");
    let source = root().join("examples/java/Main.java");
    javac(&source, &classes);
    let specs = suite();
    let ran = run_java(&classes, &specs);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let closing = format!("{} passed, 0 failed", specs.len());
    assert!(
        ran.stdout
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with(&closing),
        "{}",
        ran.stdout
    );

    // The broken copy retries a transient failure on its last attempt instead of dead-lettering it.
    let text = std::fs::read_to_string(&source).expect("Main.java");
    let right = "if (count < maxAttempts) {";
    assert_eq!(text.matches(right).count(), 1, "the line the copy breaks");
    let broken = work.path().join("broken");
    std::fs::create_dir(&broken).expect("a folder");
    std::fs::write(
        broken.join("Main.java"),
        text.replace(right, "if (count <= maxAttempts) {"),
    )
    .expect("the broken copy");
    javac(&broken.join("Main.java"), &broken);
    let spec = "specs/dlq-consumer/exhausted-at-max-attempts.yaml".to_owned();
    let failed = run_java(&broken, &[spec]);
    assert_eq!(failed.code, 1, "{}{}", failed.stdout, failed.stderr);
    crate::common::assert_contains_all(
        &failed.stdout,
        [
            "FAIL  specs/dlq-consumer/exhausted-at-max-attempts.yaml",
            "first difference at step 5 (process)",
            "-process: dead\n      +process: retry\n",
        ],
        "the broken copy",
    );
}
