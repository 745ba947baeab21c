//! `dlqspec run` on the bundled suite and on broken specs.

use crate::common::{path_arg, root, run, temp_spec};

/// Every spec file under `specs/`, as the binary shows its path.
fn bundled_specs() -> Vec<String> {
    crate::common::suite()
}

#[test]
fn the_bundled_suite_passes_on_the_builtin_implementation() {
    let ran = run(&["run", "specs"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let specs = bundled_specs();
    // How many there are is a figure of docs/testing.md, checked in figures.rs.
    assert!(!specs.is_empty());
    for spec in &specs {
        assert!(
            ran.stdout
                .lines()
                .any(|l| l.starts_with(&format!("PASS  {spec}  "))),
            "{spec} not reported as passing:\n{}",
            ran.stdout
        );
    }
    let last = ran.stdout.lines().last().unwrap_or_default();
    assert_eq!(last, format!("{} passed, 0 failed", specs.len()));
}

#[test]
fn every_rule_is_covered_by_the_bundled_suite() {
    let ran = run(&["rules"]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert!(!ran.stdout.contains("NOT COVERED"), "{}", ran.stdout);
    assert!(
        ran.stdout.ends_with("every rule is covered\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn every_bundled_spec_names_its_schema_describes_itself_and_lists_rules() {
    // The bundled exercises (outcome-queue) are registered, whichever test ran first.
    crate::common::bundled_contracts();
    for spec in bundled_specs() {
        let text = std::fs::read_to_string(root().join(&spec)).expect("spec readable");
        let first = text.lines().next().unwrap_or_default();
        let depth = spec.matches('/').count();
        let schema = format!(
            "# yaml-language-server: $schema={}schema/dlqspec.schema.json",
            "../".repeat(depth)
        );
        assert_eq!(first, schema, "{spec}: first line");
        let loaded = dlqspec::load::loader::load_path(&root().join(&spec)).expect("spec loads");
        let header = loaded.scenario.header();
        assert!(
            !header.description.trim().is_empty(),
            "{spec}: no description"
        );
        assert!(!header.rules.is_empty(), "{spec}: no rules");
        let name = spec.rsplit('/').next().unwrap_or_default();
        let kebab = name
            .trim_end_matches(".yaml")
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        assert!(kebab, "{spec}: file name not kebab-case");
    }
}

#[test]
fn an_unknown_field_is_a_spec_error_with_its_position() {
    let (_dir, path) = temp_spec(
        "bad.yaml",
        "contract: dlq-consumer\nname: x\nsteps:\n  - send: {id: a, bodyy: b}\n",
    );
    let ran = run(&["run", path_arg(&path)]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stdout.contains(
            "error: unknown field `bodyy` (did you mean `body`?), expected one of id, body"
        ),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("bad.yaml:4:19"), "{}", ran.stdout);
}
