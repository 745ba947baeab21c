//! `dlqspec run` on the bundled suite and on broken specs.

use crate::common::{path_arg, run, temp_spec};

#[test]
fn the_bundled_suite_passes_on_the_builtin_implementation() {
    let ran = run(&["run", "specs"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let last = ran.stdout.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "closing line: {last}");
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
        ran.stdout
            .contains("error: unknown field `bodyy`, expected one of id, body"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("bad.yaml:4:19"), "{}", ran.stdout);
}
